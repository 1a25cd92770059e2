#!/usr/bin/env python3
"""Triage application logs: count lines per level and group errors by normalized signature.

Usage:
    python3 triage.py [FILES...] [--top N] [--min-level ERROR|WARNING]
    python3 triage.py --help-json
    python3 triage.py --run-json '{"files": ["inputs/app.log"], "top": 10}'

Run with the workspace as the current directory. Without FILES, every ``inputs/*.log`` is read
(sorted by name). Understands plain text lines that start with an ISO-8601 timestamp followed by
a level (``2024-05-01T12:00:00Z ERROR msg``, ``2024-05-01 12:00:00,123 [main] WARN x - msg``,
``[2024-05-01 12:00:00] ERROR: msg``), lines that start with a level (``ERROR: msg``) and JSON
lines (``{"ts": ..., "level": ..., "msg": ...}``). Indented lines, ``Traceback``/``Caused by``
lines and ``at ...`` frames are continuation lines of the entry above.

Writes ``outputs/triage.json`` and ``outputs/triage.md``. Standard library only.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

TOOL_NAME = "triage_logs"
INPUTS = Path("inputs")
OUT_DIR = Path("outputs")
JSON_OUT = OUT_DIR / "triage.json"
MD_OUT = OUT_DIR / "triage.md"

LEVEL_ALIASES = {
    "TRACE": "TRACE",
    "DEBUG": "DEBUG",
    "FINE": "DEBUG",
    "INFO": "INFO",
    "NOTICE": "INFO",
    "WARN": "WARNING",
    "WARNING": "WARNING",
    "ERR": "ERROR",
    "ERROR": "ERROR",
    "SEVERE": "ERROR",
    "CRIT": "CRITICAL",
    "CRITICAL": "CRITICAL",
    "FATAL": "CRITICAL",
    "PANIC": "CRITICAL",
    "ALERT": "CRITICAL",
    "EMERG": "CRITICAL",
}
LEVEL_ORDER = ["TRACE", "DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"]
LEVEL_WORDS = "|".join(sorted(LEVEL_ALIASES, key=len, reverse=True))

TIMESTAMP = (
    r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:[.,]\d{1,9})?)?"
    r"(?:\s?(?:Z|[+-]\d{2}(?::?\d{2})?))?"
)
TS_PREFIX_RE = re.compile(rf"^\s*[\[(]?(?P<ts>{TIMESTAMP})[\])]?\s*(?P<rest>.*)$")
# The level is the first level word within the next 80 characters after the timestamp,
# as a whole word, optionally in brackets, e.g. "[main] ERROR", "- ERROR -", "<ERROR>".
LEVEL_RE = re.compile(
    rf"^(?P<pre>.{{0,80}}?)(?<![A-Za-z0-9_])[\[<(]?(?P<level>{LEVEL_WORDS})[\]>)]?"
    rf"(?![A-Za-z0-9_])[\s:|\-\]]*(?P<msg>.*)$",
    re.IGNORECASE,
)
LEADING_LEVEL_RE = re.compile(
    rf"^\s*[\[<]?(?P<level>{LEVEL_WORDS})[\]>]?(?:[\s:|\-]+|$)(?P<msg>.*)$", re.IGNORECASE
)
CONTINUATION_RE = re.compile(
    r"^(?:\s+\S|Traceback \(|Caused by:|\.\.\. \d+ more"
    r"|[\w.]*(?:Error|Exception|Exit|Interrupt|Warning)\b)"
)

JSON_TS_KEYS = ("timestamp", "time", "ts", "@timestamp", "datetime", "date")
JSON_LEVEL_KEYS = ("level", "severity", "lvl", "levelname", "log.level")
JSON_MSG_KEYS = ("message", "msg", "event", "text")

# Order matters: specific shapes first, plain numbers last.
NORMALIZERS: list[tuple[re.Pattern[str], str]] = [
    (re.compile(TIMESTAMP), "<ts>"),
    (
        re.compile(
            r"\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b"
        ),
        "<uuid>",
    ),
    (re.compile(r"\b0[xX][0-9a-fA-F]+\b"), "<hex>"),
    (re.compile(r"\b(?=[0-9a-fA-F]*\d)(?=[0-9a-fA-F]*[a-fA-F])[0-9a-fA-F]{8,}\b"), "<hex>"),
    (re.compile(r"\b\d{1,3}(?:\.\d{1,3}){3}(?::\d+)?\b"), "<ip>"),
    (re.compile(r"(?<![A-Za-z_])[-+]?\d+(?:\.\d+)?"), "<n>"),
    (re.compile(r"\s+"), " "),
]

HELP_JSON = {
    "name": TOOL_NAME,
    "description": (
        "Triage log files in the workspace: count log lines per level (DEBUG, INFO, WARNING, "
        "ERROR, CRITICAL) and group error lines by a normalized message signature (numbers, "
        "hex ids, UUIDs, IPs and timestamps replaced) with count, first seen and last seen. "
        "Reads inputs/*.log by default; writes outputs/triage.json and outputs/triage.md."
    ),
    "input_schema": {
        "type": "object",
        "properties": {
            "files": {
                "type": "array",
                "items": {"type": "string"},
                "description": "Log files relative to the workspace; default: inputs/*.log",
            },
            "top": {
                "type": "integer",
                "minimum": 1,
                "maximum": 500,
                "default": 20,
                "description": "How many error signatures to report",
            },
            "min_level": {
                "type": "string",
                "enum": ["WARNING", "ERROR", "CRITICAL"],
                "default": "ERROR",
                "description": "Lowest level grouped into signatures",
            },
        },
        "required": [],
        "additionalProperties": False,
    },
}


class TriageError(Exception):
    """Bad input: reported as one line, never as a traceback."""


@dataclass
class Signature:
    signature: str
    level: str
    example: str
    first_location: str
    count: int = 0
    first_seen: str | None = None
    last_seen: str | None = None
    first_key: datetime | None = None
    last_key: datetime | None = None
    files: set[str] = field(default_factory=set)


def normalize(message: str) -> str:
    text = message.strip()
    for pattern, replacement in NORMALIZERS:
        text = pattern.sub(replacement, text)
    return text[:300]


def parse_timestamp(raw: str) -> datetime | None:
    text = raw.replace(",", ".").replace(" Z", "Z").strip()
    try:
        parsed = datetime.fromisoformat(text)
    except ValueError:
        return None
    if parsed.tzinfo is not None:  # one scale for aware and naive stamps (naive taken as UTC)
        parsed = parsed.astimezone(UTC).replace(tzinfo=None)
    return parsed


def parse_json_line(line: str) -> tuple[str | None, str, str] | None:
    try:
        obj = json.loads(line)
    except json.JSONDecodeError:
        return None
    if not isinstance(obj, dict):
        return None
    level = next((obj[k] for k in JSON_LEVEL_KEYS if isinstance(obj.get(k), str)), None)
    if level is None or level.upper() not in LEVEL_ALIASES:
        return None
    ts = next((str(obj[k]) for k in JSON_TS_KEYS if obj.get(k) is not None), None)
    msg = next((str(obj[k]) for k in JSON_MSG_KEYS if obj.get(k) is not None), "")
    return ts, LEVEL_ALIASES[level.upper()], msg


def parse_line(line: str) -> tuple[str | None, str, str] | None:
    """(timestamp or None, normalized level, message), or None when the line is not an entry."""
    if line.lstrip().startswith("{"):
        return parse_json_line(line.strip())
    prefix = TS_PREFIX_RE.match(line)
    if prefix:
        found = LEVEL_RE.match(prefix.group("rest"))
        if found:
            level = LEVEL_ALIASES[found.group("level").upper()]
            return prefix.group("ts"), level, found.group("msg").strip()
        return None
    found = LEADING_LEVEL_RE.match(line)
    if found:
        return None, LEVEL_ALIASES[found.group("level").upper()], found.group("msg").strip()
    return None


def default_files() -> list[Path]:
    if not INPUTS.is_dir():
        raise TriageError("no FILES given and no inputs/ folder in the working directory")
    files = sorted(p for p in INPUTS.iterdir() if p.is_file() and p.suffix.lower() == ".log")
    if not files:
        raise TriageError("no FILES given and no *.log file in inputs/")
    return files


def triage(files: list[str], top: int = 20, min_level: str = "ERROR") -> dict[str, object]:
    paths = [Path(f) for f in files] if files else default_files()
    for path in paths:
        if not path.is_file():
            raise TriageError(f"file not found: {path}")
    grouped_levels = set(LEVEL_ORDER[LEVEL_ORDER.index(min_level) :])
    levels: dict[str, int] = {}
    signatures: dict[tuple[str, str], Signature] = {}
    totals = {"lines": 0, "entries": 0, "continuation_lines": 0, "unparsed_lines": 0}
    first_ts: tuple[datetime, str] | None = None
    last_ts: tuple[datetime, str] | None = None
    previous_is_entry = False

    for path in paths:
        name = path.as_posix()
        with path.open(encoding="utf-8", errors="replace") as fh:
            for number, raw in enumerate(fh, start=1):
                line = raw.rstrip("\r\n").lstrip("\ufeff")
                if not line.strip():
                    continue
                totals["lines"] += 1
                entry = parse_line(line)
                if entry is None:
                    if previous_is_entry and CONTINUATION_RE.match(line):
                        totals["continuation_lines"] += 1
                    else:
                        totals["unparsed_lines"] += 1
                        previous_is_entry = False
                    continue
                previous_is_entry = True
                totals["entries"] += 1
                ts, level, message = entry
                levels[level] = levels.get(level, 0) + 1
                key = parse_timestamp(ts) if ts else None
                if key is not None:
                    if first_ts is None or key < first_ts[0]:
                        first_ts = (key, ts)  # type: ignore[assignment]
                    if last_ts is None or key >= last_ts[0]:
                        last_ts = (key, ts)  # type: ignore[assignment]
                if level not in grouped_levels:
                    continue
                sig_text = normalize(message) or "<empty message>"
                sig = signatures.get((level, sig_text))
                if sig is None:
                    sig = Signature(sig_text, level, message[:500], f"{name}:{number}")
                    signatures[(level, sig_text)] = sig
                sig.count += 1
                sig.files.add(name)
                if key is not None:
                    if sig.first_key is None or key < sig.first_key:
                        sig.first_key, sig.first_seen = key, ts
                    if sig.last_key is None or key >= sig.last_key:
                        sig.last_key, sig.last_seen = key, ts
                elif sig.first_seen is None and ts:
                    sig.first_seen = sig.last_seen = ts

    ranked = sorted(
        signatures.values(),
        key=lambda s: (-s.count, s.first_key or datetime.max, s.level, s.signature),
    )
    grouped_total = sum(s.count for s in ranked)
    return {
        "files": [p.as_posix() for p in paths],
        **totals,
        "levels": {lvl: levels[lvl] for lvl in LEVEL_ORDER if lvl in levels},
        "first_timestamp": first_ts[1] if first_ts else None,
        "last_timestamp": last_ts[1] if last_ts else None,
        "min_level": min_level,
        "grouped_entries": grouped_total,
        "distinct_signatures": len(ranked),
        "signatures": [
            {
                "signature": s.signature,
                "level": s.level,
                "count": s.count,
                "share": round(s.count / grouped_total, 4) if grouped_total else 0,
                "first_seen": s.first_seen,
                "last_seen": s.last_seen,
                "first_location": s.first_location,
                "files": sorted(s.files),
                "example": s.example,
            }
            for s in ranked[:top]
        ],
    }


def md_cell(value: object) -> str:
    text = "–" if value is None else str(value)
    return text.replace("|", "\\|").replace("\n", " ")


def render_markdown(result: dict[str, object]) -> str:
    levels = result["levels"]
    sigs = result["signatures"]
    assert isinstance(levels, dict)
    assert isinstance(sigs, list)
    out = [
        "# Log triage",
        "",
        "## Summary",
        "",
        f"- Files: {', '.join(f'`{f}`' for f in result['files'])}",  # type: ignore[union-attr]
        f"- Log entries: {result['entries']} (continuation lines: "
        f"{result['continuation_lines']}, unparsed lines: {result['unparsed_lines']})",
        f"- Time span: {result['first_timestamp'] or '–'} → {result['last_timestamp'] or '–'}",
        f"- {result['min_level']}+ entries: {result['grouped_entries']} in "
        f"{result['distinct_signatures']} distinct signature(s)",
        "",
        "## Levels",
        "",
        "| Level | Count |",
        "| --- | --- |",
    ]
    out += [f"| {lvl} | {count} |" for lvl, count in levels.items()]
    out += ["", "## Top error signatures", ""]
    if not sigs:
        out.append(f"No {result['min_level']}-or-worse entries found.")
    else:
        out += [
            "| # | Count | Level | Signature | First seen | Last seen |",
            "| --- | --- | --- | --- | --- | --- |",
        ]
        for i, s in enumerate(sigs, start=1):
            out.append(
                f"| {i} | {s['count']} | {s['level']} | `{md_cell(s['signature'])}` | "
                f"{md_cell(s['first_seen'])} | {md_cell(s['last_seen'])} |"
            )
        out += ["", "## Examples", ""]
        for i, s in enumerate(sigs, start=1):
            out.append(f"{i}. `{s['first_location']}`: {md_cell(s['example'])}")
    return "\n".join(out) + "\n"


def write_outputs(result: dict[str, object]) -> None:
    OUT_DIR.mkdir(parents=True, exist_ok=True)
    JSON_OUT.write_text(json.dumps(result, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    MD_OUT.write_text(render_markdown(result), encoding="utf-8")


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
    files = args.get("files", [])
    if not isinstance(files, list) or not all(isinstance(f, str) for f in files):
        return fail("'files' must be an array of strings")
    top = args.get("top", 20)
    if isinstance(top, bool) or not isinstance(top, int) or not 1 <= top <= 500:
        return fail("'top' must be an integer between 1 and 500")
    min_level = args.get("min_level", "ERROR")
    if min_level not in ("WARNING", "ERROR", "CRITICAL"):
        return fail("'min_level' must be WARNING, ERROR or CRITICAL")
    try:
        result = triage(files, top, min_level)
    except TriageError as exc:
        return fail(str(exc))
    write_outputs(result)
    brief = {k: v for k, v in result.items() if k != "signatures"}
    brief["signatures"] = [
        {k: s[k] for k in ("signature", "level", "count", "first_seen", "last_seen")}
        for s in result["signatures"][:10]  # type: ignore[index]
    ]
    brief["outputs"] = [JSON_OUT.as_posix(), MD_OUT.as_posix()]
    print(json.dumps(brief))
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

    parser = argparse.ArgumentParser(prog="triage.py", description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="*", help="log files (default: inputs/*.log)")
    parser.add_argument("--top", type=int, default=20, help="error signatures to report")
    parser.add_argument(
        "--min-level",
        default="ERROR",
        choices=["WARNING", "ERROR", "CRITICAL"],
        type=str.upper,
        help="lowest level grouped into signatures",
    )
    ns = parser.parse_args(argv)
    if ns.top < 1:
        parser.error("--top must be at least 1")
    try:
        result = triage(ns.files, ns.top, ns.min_level)
    except TriageError as exc:
        print(f"triage.py: error: {exc}", file=sys.stderr)
        return 1
    write_outputs(result)
    levels = ", ".join(f"{k}={v}" for k, v in result["levels"].items()) or "none"  # type: ignore[attr-defined]
    files = len(result["files"])  # type: ignore[arg-type]
    print(
        f"Triaged {files} file(s), {result['entries']} entries ({levels}); "
        f"{result['grouped_entries']} {ns.min_level}+ entries in "
        f"{result['distinct_signatures']} signature(s) -> {JSON_OUT.as_posix()}, "
        f"{MD_OUT.as_posix()}"
    )
    for s in result["signatures"][:5]:  # type: ignore[index]
        print(f"  {s['count']:>5}  {s['level']:<8} {s['signature']}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
