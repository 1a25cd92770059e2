#!/usr/bin/env python3
"""Clean a CSV file: trim whitespace, drop empty rows, drop duplicate rows, square ragged rows.

Usage:
    python3 clean_csv.py [FILE] [--strip] [--drop-empty-rows] [--dedupe] [--delimiter D]
    python3 clean_csv.py --help-json
    python3 clean_csv.py --run-json '{"strip": true, "dedupe": true}'

Run with the workspace as the current directory. FILE defaults to the first ``*.csv`` (by name)
in ``./inputs/``. With no operation flag, all three operations run. Writes the cleaned table to
``./outputs/clean.csv`` (comma-separated, minimal quoting, ``\\n`` line ends, UTF-8 without BOM)
and the change counts to ``./outputs/cleaning.json``.

Standard library only (Python >= 3.11).
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import sys
from pathlib import Path

TOOL_NAME = "clean_csv"
INPUTS = Path("inputs")
OUT_DIR = Path("outputs")
CLEAN = OUT_DIR / "clean.csv"
REPORT = OUT_DIR / "cleaning.json"
OPERATIONS = ("strip", "drop_empty_rows", "dedupe")
SNIFF_DELIMITERS = ",;\t|"
SNIFF_BYTES = 64 * 1024

HELP_JSON = {
    "name": TOOL_NAME,
    "description": (
        "Clean a CSV file from the workspace: trim leading/trailing whitespace in every cell "
        "(strip), drop rows whose cells are all blank (drop_empty_rows), drop exact duplicate "
        "rows keeping the first (dedupe), and pad short ragged rows. With no operation set to "
        "true, all three run. Writes outputs/clean.csv and outputs/cleaning.json with counts."
    ),
    "input_schema": {
        "type": "object",
        "properties": {
            "file": {
                "type": "string",
                "description": "CSV path relative to the workspace; default: first inputs/*.csv",
            },
            "strip": {"type": "boolean", "description": "Trim whitespace in every cell"},
            "drop_empty_rows": {"type": "boolean", "description": "Drop all-blank rows"},
            "dedupe": {"type": "boolean", "description": "Drop exact duplicate rows"},
            "delimiter": {
                "type": "string",
                "minLength": 1,
                "maxLength": 3,
                "description": "Input delimiter (',', ';', '|', 'tab'); sniffed when omitted",
            },
        },
        "required": [],
        "additionalProperties": False,
    },
}


class CleanError(Exception):
    """Bad input: reported as one line, never as a traceback."""


def find_default_csv() -> Path:
    if not INPUTS.is_dir():
        raise CleanError("no FILE given and no inputs/ folder in the working directory")
    candidates = sorted(p for p in INPUTS.iterdir() if p.is_file() and p.suffix.lower() == ".csv")
    if not candidates:
        raise CleanError("no FILE given and no *.csv file in inputs/")
    return candidates[0]


def parse_delimiter(raw: str | None) -> str | None:
    if raw is None:
        return None
    aliases = {"tab": "\t", "\\t": "\t", "comma": ",", "semicolon": ";", "pipe": "|"}
    value = aliases.get(raw.lower(), raw)
    if len(value) != 1 or value in '"\r\n':
        raise CleanError(f"delimiter must be one character (or 'tab'), got {raw!r}")
    return value


def read_text(path: Path) -> str:
    if not path.is_file():
        raise CleanError(f"file not found: {path}")
    try:
        return path.read_bytes().decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise CleanError(
            f"{path} is not valid UTF-8 (byte {exc.start}); re-save it as UTF-8"
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


def clean(
    file: str | None,
    *,
    strip: bool,
    drop_empty_rows: bool,
    dedupe: bool,
    delimiter: str | None = None,
) -> dict[str, object]:
    path = Path(file) if file else find_default_csv()
    text = read_text(path)
    if not text.strip():
        raise CleanError(f"{path} is empty: expected a header row and data rows")
    delim = parse_delimiter(delimiter) or sniff_delimiter(text)
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delim, strict=False)

    counts = {
        "cells_stripped": 0,
        "empty_rows_dropped": 0,
        "duplicate_rows_dropped": 0,
        "blank_lines_skipped": 0,
        "short_rows_padded": 0,
        "long_rows_trimmed": 0,
        "long_rows_kept": 0,
    }
    warnings: list[str] = []
    header: list[str] | None = None
    out_rows: list[list[str]] = []
    seen: set[tuple[str, ...]] = set()
    rows_in = 0
    try:
        for raw in reader:
            record = raw
            if not record or (len(record) == 1 and not record[0].strip()):
                counts["blank_lines_skipped"] += 1
                continue
            if strip:
                stripped = [c.strip() for c in record]
                counts["cells_stripped"] += sum(
                    a != b for a, b in zip(record, stripped, strict=True)
                )
                record = stripped
            if header is None:
                header = record
                continue
            rows_in += 1
            width = len(header)
            if len(record) < width:
                record = record + [""] * (width - len(record))
                counts["short_rows_padded"] += 1
            elif len(record) > width:
                if all(not c.strip() for c in record[width:]):
                    record = record[:width]
                    counts["long_rows_trimmed"] += 1
                else:
                    counts["long_rows_kept"] += 1
            if drop_empty_rows and all(not c.strip() for c in record):
                counts["empty_rows_dropped"] += 1
                continue
            if dedupe:
                key = tuple(record)
                if key in seen:
                    counts["duplicate_rows_dropped"] += 1
                    continue
                seen.add(key)
            out_rows.append(record)
    except csv.Error as exc:
        raise CleanError(f"{path}: malformed CSV near line {reader.line_num}: {exc}") from exc
    if header is None:
        raise CleanError(f"{path} is empty: expected a header row and data rows")
    if counts["long_rows_kept"]:
        warnings.append(
            f"{counts['long_rows_kept']} row(s) have non-empty values beyond the "
            f"{len(header)} header columns; kept unchanged, check them by hand"
        )

    OUT_DIR.mkdir(parents=True, exist_ok=True)
    with CLEAN.open("w", encoding="utf-8", newline="") as fh:
        writer = csv.writer(fh, lineterminator="\n")
        writer.writerow(header)
        writer.writerows(out_rows)

    report = {
        "source": path.as_posix(),
        "output": CLEAN.as_posix(),
        "input_delimiter": delim,
        "operations": [
            name
            for name, on in zip(OPERATIONS, (strip, drop_empty_rows, dedupe), strict=True)
            if on
        ],
        "columns": len(header),
        "rows_in": rows_in,
        "rows_out": len(out_rows),
        "rows_removed": rows_in - len(out_rows),
        "changes": counts,
        "warnings": warnings,
    }
    REPORT.write_text(json.dumps(report, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    return report


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
    unknown = sorted(set(args) - set(HELP_JSON["input_schema"]["properties"]))  # type: ignore[index]
    if unknown:
        return fail(f"unknown argument(s): {', '.join(unknown)}")
    for key in ("file", "delimiter"):
        if key in args and not isinstance(args[key], str):
            return fail(f"'{key}' must be a string")
    for key in OPERATIONS:
        if key in args and not isinstance(args[key], bool):
            return fail(f"'{key}' must be true or false")
    flags = {key: bool(args.get(key, False)) for key in OPERATIONS}
    if not any(flags.values()):
        flags = dict.fromkeys(OPERATIONS, True)
    try:
        report = clean(args.get("file"), delimiter=args.get("delimiter"), **flags)
    except CleanError as exc:
        return fail(str(exc))
    print(json.dumps({**report, "report": REPORT.as_posix()}, sort_keys=True))
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

    parser = argparse.ArgumentParser(prog="clean_csv.py", description=__doc__.splitlines()[0])
    parser.add_argument("file", nargs="?", help="CSV file (default: first inputs/*.csv)")
    parser.add_argument("--strip", action="store_true", help="trim whitespace in every cell")
    parser.add_argument("--drop-empty-rows", action="store_true", help="drop all-blank rows")
    parser.add_argument("--dedupe", action="store_true", help="drop exact duplicate rows")
    parser.add_argument("--delimiter", "-d", help="input delimiter; sniffed when omitted")
    ns = parser.parse_args(argv)
    flags = {"strip": ns.strip, "drop_empty_rows": ns.drop_empty_rows, "dedupe": ns.dedupe}
    if not any(flags.values()):
        flags = dict.fromkeys(OPERATIONS, True)
    try:
        report = clean(ns.file, delimiter=ns.delimiter, **flags)
    except CleanError as exc:
        print(f"clean_csv: error: {exc}", file=sys.stderr)
        return 1
    changes = report["changes"]
    assert isinstance(changes, dict)
    done = ", ".join(f"{k}={v}" for k, v in sorted(changes.items()) if v) or "no changes"
    print(
        f"Cleaned {report['source']}: {report['rows_in']} -> {report['rows_out']} rows "
        f"({done}) -> {CLEAN.as_posix()}, {REPORT.as_posix()}"
    )
    for warning in report["warnings"]:  # type: ignore[attr-defined]
        print(f"warning: {warning}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
