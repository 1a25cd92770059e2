#!/usr/bin/env python3
"""Profile a CSV file: row count and per-column type, completeness and summary statistics.

Usage:
    python3 profile_csv.py [FILE] [--delimiter D] [--top N] [--encoding ENC]
    python3 profile_csv.py --help-json
    python3 profile_csv.py --run-json '{"file": "inputs/sales.csv"}'

Run with the workspace as the current directory. FILE defaults to the first ``*.csv`` (by name)
in ``./inputs/``. The profile is written to ``./outputs/stats.json`` (keys sorted, columns in
file order) so the same input always gives byte-identical output.

Standard library only (Python >= 3.11).
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import math
import re
import statistics
import sys
from collections import Counter
from datetime import UTC, date, datetime
from pathlib import Path

TOOL_NAME = "profile_csv"
SCHEMA_ID = "csv-profiler/stats@1"
OUTPUT = Path("outputs") / "stats.json"
INPUTS = Path("inputs")
MAX_RAGGED_EXAMPLES = 10
MISSING_TOKENS = frozenset({"", "na", "n/a", "null", "none", "nan"})
BOOLEAN_TOKENS = frozenset({"true", "false", "yes", "no"})
INTEGER_RE = re.compile(r"^[+-]?\d+$")
NUMBER_RE = re.compile(r"^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$")
DATE_RE = re.compile(r"^\d{4}-\d{2}-\d{2}(?:[T ].+)?$")
SNIFF_DELIMITERS = ",;\t|"
SNIFF_BYTES = 64 * 1024

HELP_JSON = {
    "name": TOOL_NAME,
    "description": (
        "Profile a CSV file from the workspace: row count, and for each column its inferred "
        "type (integer, number, boolean, date, string), non-missing count, missing count, "
        "distinct count, min/max/mean/median/stdev for numeric columns and the most frequent "
        "values for text columns. Writes outputs/stats.json and returns a short summary."
    ),
    "input_schema": {
        "type": "object",
        "properties": {
            "file": {
                "type": "string",
                "description": "CSV path relative to the workspace; default: first inputs/*.csv",
            },
            "delimiter": {
                "type": "string",
                "minLength": 1,
                "maxLength": 3,
                "description": "Field delimiter (',', ';', '|', 'tab'); sniffed when omitted",
            },
            "top": {
                "type": "integer",
                "minimum": 1,
                "maximum": 50,
                "default": 5,
                "description": "How many most-frequent values to keep per text column",
            },
        },
        "required": [],
        "additionalProperties": False,
    },
}


class ProfileError(Exception):
    """Bad input: reported as one line, never as a traceback."""


# ---------------------------------------------------------------------------- reading


def find_default_csv() -> Path:
    if not INPUTS.is_dir():
        raise ProfileError("no FILE given and no inputs/ folder in the working directory")
    candidates = sorted(p for p in INPUTS.iterdir() if p.is_file() and p.suffix.lower() == ".csv")
    if not candidates:
        raise ProfileError("no FILE given and no *.csv file in inputs/")
    return candidates[0]


def parse_delimiter(raw: str | None) -> str | None:
    if raw is None:
        return None
    aliases = {"tab": "\t", "\\t": "\t", "comma": ",", "semicolon": ";", "pipe": "|"}
    value = aliases.get(raw.lower(), raw)
    if len(value) != 1:
        raise ProfileError(f"delimiter must be one character (or 'tab'), got {raw!r}")
    if value in '"\r\n':
        raise ProfileError(f"delimiter {raw!r} is not allowed")
    return value


def read_text(path: Path, encoding: str) -> str:
    if not path.exists():
        raise ProfileError(f"file not found: {path}")
    if not path.is_file():
        raise ProfileError(f"not a file: {path}")
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ProfileError(f"cannot read {path}: {exc.strerror}") from exc
    codec = encoding
    if encoding.lower().replace("_", "-") in {"utf-8", "utf8", "utf-8-sig"}:
        encoding, codec = "UTF-8", "utf-8-sig"  # a BOM is never part of the first column name
    try:
        return data.decode(codec)
    except LookupError as exc:
        raise ProfileError(f"unknown encoding: {encoding}") from exc
    except UnicodeDecodeError as exc:
        raise ProfileError(
            f"{path} is not valid {encoding} (byte {exc.start}); pass --encoding, e.g. cp1252"
        ) from exc


def sniff_delimiter(text: str) -> str:
    """Pick the candidate delimiter that splits the header into the most fields consistently.

    csv.Sniffer gives up on files with ragged rows, so score each candidate directly: the share
    of sampled rows with as many fields as the header first, then the header's field count.
    """
    sample = text[:SNIFF_BYTES]
    if len(text) > SNIFF_BYTES and "\n" in sample:
        sample = sample[: sample.rindex("\n")]  # drop a line cut in the middle
    best, best_score = ",", (0.0, 1)
    for candidate in SNIFF_DELIMITERS:
        try:
            rows = [r for r in csv.reader(io.StringIO(sample), delimiter=candidate) if r][:50]
        except csv.Error:
            continue
        if not rows or len(rows[0]) < 2:
            continue
        width = len(rows[0])
        data = rows[1:]
        consistency = sum(len(r) == width for r in data) / len(data) if data else 1.0
        if (consistency, width) > best_score:
            best, best_score = candidate, (consistency, width)
    return best


def unique_header(raw: list[str], warnings: list[str]) -> list[str]:
    names: list[str] = []
    seen: set[str] = set()
    for index, cell in enumerate(raw, start=1):
        name = cell.strip() or f"column_{index}"
        if not cell.strip():
            warnings.append(f"column {index} has no header name; named it {name!r}")
        base, suffix = name, 2
        while name in seen:
            name = f"{base}_{suffix}"
            suffix += 1
        if name != (cell.strip() or f"column_{index}"):
            warnings.append(f"duplicate header {base!r} in column {index}; renamed to {name!r}")
        seen.add(name)
        names.append(name)
    return names


# ---------------------------------------------------------------------------- inference


def is_missing(value: str) -> bool:
    return value.lower() in MISSING_TOKENS


def parse_date(value: str) -> datetime | None:
    if not DATE_RE.match(value):
        return None
    try:
        if len(value) == 10:
            d = date.fromisoformat(value)
            return datetime(d.year, d.month, d.day)
        parsed = datetime.fromisoformat(value.replace(",", "."))
    except ValueError:
        return None
    if parsed.tzinfo is not None:  # compare aware and naive values on one (UTC) scale
        parsed = parsed.astimezone(UTC).replace(tzinfo=None)
    return parsed


def infer_type(values: list[str]) -> str:
    if not values:
        return "string"
    lowered = [v.lower() for v in values]
    if all(v in BOOLEAN_TOKENS for v in lowered):
        return "boolean"
    if all(INTEGER_RE.match(v) for v in values):
        # Codes with leading zeros (ZIP codes, IDs) are identifiers, not quantities.
        if any(len(v.lstrip("+-")) > 1 and v.lstrip("+-").startswith("0") for v in values):
            return "string"
        return "integer"
    if all(NUMBER_RE.match(v) for v in values):
        return "number"
    if all(parse_date(v) is not None for v in values):
        return "date"
    return "string"


def tidy(x: float) -> float | int:
    """Round to 12 significant digits so float noise never reaches the report."""
    if not math.isfinite(x):
        return x
    rounded = float(f"{x:.12g}")
    return int(rounded) if rounded.is_integer() and abs(rounded) < 2**53 else rounded


def top_values(values: list[str], top: int) -> list[dict[str, object]]:
    counts = Counter(values)
    ranked = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    return [{"value": value, "count": count} for value, count in ranked[:top]]


def profile_column(name: str, cells: list[str], top: int) -> dict[str, object]:
    present = [c for c in cells if not is_missing(c)]
    kind = infer_type(present)
    column: dict[str, object] = {
        "name": name,
        "type": kind,
        "count": len(present),
        "missing": len(cells) - len(present),
        "missing_ratio": tidy(round((len(cells) - len(present)) / len(cells), 4)) if cells else 0,
        "distinct": len(set(present)),
    }
    if kind in {"integer", "number"} and present:
        numbers = [int(v) for v in present] if kind == "integer" else [float(v) for v in present]
        column["min"] = tidy(min(numbers))
        column["max"] = tidy(max(numbers))
        column["mean"] = tidy(statistics.fmean(numbers))
        column["median"] = tidy(statistics.median(numbers))
        column["stdev"] = tidy(statistics.stdev(numbers)) if len(numbers) > 1 else None
    elif kind == "date":
        keyed = sorted(present, key=lambda v: (parse_date(v), v))
        column["min"] = keyed[0]
        column["max"] = keyed[-1]
    elif kind == "boolean":
        column["top"] = top_values([v.lower() for v in present], top)
    else:
        column["top"] = top_values(present, top)
        if present:
            column["min_length"] = min(len(v) for v in present)
            column["max_length"] = max(len(v) for v in present)
    return column


# ---------------------------------------------------------------------------- profiling


def profile(
    file: str | None, delimiter: str | None = None, top: int = 5, encoding: str = "utf-8"
) -> dict[str, object]:
    path = Path(file) if file else find_default_csv()
    text = read_text(path, encoding)
    if not text.strip():
        raise ProfileError(f"{path} is empty: expected a header row and data rows")
    delim = parse_delimiter(delimiter) or sniff_delimiter(text)

    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delim, strict=False)
    warnings: list[str] = []
    header: list[str] | None = None
    columns: list[list[str]] = []
    rows = ragged = blank = 0
    ragged_lines: list[int] = []
    try:
        for record in reader:
            if not record or (all(not cell.strip() for cell in record) and len(record) <= 1):
                blank += 1
                continue
            if header is None:
                header = unique_header(record, warnings)
                columns = [[] for _ in header]
                continue
            rows += 1
            if len(record) != len(header):
                ragged += 1
                if len(ragged_lines) < MAX_RAGGED_EXAMPLES:
                    ragged_lines.append(reader.line_num)
            for index, column in enumerate(columns):
                column.append(record[index].strip() if index < len(record) else "")
    except csv.Error as exc:
        raise ProfileError(f"{path}: malformed CSV near line {reader.line_num}: {exc}") from exc
    if header is None:
        raise ProfileError(f"{path} is empty: expected a header row and data rows")
    if ragged:
        lines = ", ".join(str(n) for n in ragged_lines)
        if ragged > len(ragged_lines):
            lines += ", ..."
        warnings.append(
            f"{ragged} row(s) have a different number of fields than the header "
            f"({len(header)}); short rows were padded as missing, extra fields ignored "
            f"(lines {lines})"
        )
    if rows == 0:
        warnings.append("the file has a header but no data rows")

    return {
        "schema": SCHEMA_ID,
        "source": path.as_posix(),
        "delimiter": delim,
        "rows": rows,
        "column_count": len(header),
        "blank_lines": blank,
        "ragged_rows": ragged,
        "ragged_row_lines": ragged_lines,
        "warnings": warnings,
        "columns": [profile_column(n, c, top) for n, c in zip(header, columns, strict=True)],
    }


def write_stats(stats: dict[str, object]) -> Path:
    OUTPUT.parent.mkdir(parents=True, exist_ok=True)
    OUTPUT.write_text(
        json.dumps(stats, indent=2, sort_keys=True, ensure_ascii=False) + "\n", encoding="utf-8"
    )
    return OUTPUT


def summary_line(stats: dict[str, object]) -> str:
    columns = stats["columns"]
    assert isinstance(columns, list)
    types = ", ".join(f"{c['name']}:{c['type']}" for c in columns)
    extra = f"; {stats['ragged_rows']} ragged row(s)" if stats["ragged_rows"] else ""
    return (
        f"Profiled {stats['source']}: {stats['rows']} rows x {stats['column_count']} columns "
        f"({types}){extra} -> {OUTPUT.as_posix()}"
    )


# ---------------------------------------------------------------------------- entry points


def run_json(raw: str) -> int:
    def fail(message: str) -> int:
        print(json.dumps({"error": message}))
        return 2

    try:
        args = json.loads(raw)
    except json.JSONDecodeError as exc:
        return fail(f"arguments are not valid JSON: {exc.msg}")
    if not isinstance(args, dict):
        return fail("arguments must be a JSON object")
    allowed = set(HELP_JSON["input_schema"]["properties"])  # type: ignore[index]
    unknown = sorted(set(args) - allowed)
    if unknown:
        return fail(f"unknown argument(s): {', '.join(unknown)}")
    for key in ("file", "delimiter"):
        if key in args and not isinstance(args[key], str):
            return fail(f"'{key}' must be a string")
    top = args.get("top", 5)
    if isinstance(top, bool) or not isinstance(top, int) or not 1 <= top <= 50:
        return fail("'top' must be an integer between 1 and 50")
    try:
        stats = profile(args.get("file"), args.get("delimiter"), top)
    except ProfileError as exc:
        return fail(str(exc))
    path = write_stats(stats)
    result = {
        "output": path.as_posix(),
        "source": stats["source"],
        "rows": stats["rows"],
        "columns": [{"name": c["name"], "type": c["type"]} for c in stats["columns"]],  # type: ignore[attr-defined]
        "ragged_rows": stats["ragged_rows"],
        "warnings": stats["warnings"],
    }
    print(json.dumps(result, sort_keys=True))
    return 0


def main(argv: list[str]) -> int:
    if argv[:1] == ["--help-json"]:
        print(json.dumps(HELP_JSON))
        return 0
    if argv[:1] == ["--run-json"]:
        if len(argv) != 2:
            print(json.dumps({"error": "--run-json takes exactly one JSON argument"}))
            return 2
        return run_json(argv[1])

    parser = argparse.ArgumentParser(prog="profile_csv.py", description=__doc__.splitlines()[0])
    parser.add_argument("file", nargs="?", help="CSV file (default: first inputs/*.csv)")
    parser.add_argument("--delimiter", "-d", help="field delimiter; sniffed when omitted")
    parser.add_argument("--top", type=int, default=5, help="top values kept per text column")
    parser.add_argument("--encoding", default="utf-8", help="file encoding (default utf-8)")
    ns = parser.parse_args(argv)
    if not 1 <= ns.top <= 50:
        parser.error("--top must be between 1 and 50")
    try:
        stats = profile(ns.file, ns.delimiter, ns.top, ns.encoding)
    except ProfileError as exc:
        print(f"profile_csv: error: {exc}", file=sys.stderr)
        return 1
    write_stats(stats)
    print(summary_line(stats))
    for warning in stats["warnings"]:  # type: ignore[attr-defined]
        print(f"warning: {warning}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
