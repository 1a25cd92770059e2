#!/usr/bin/env python3
"""Infer a schema from a CSV file: python3 infer.py [FILE] [--format sql] [--dialect postgres]"""
from __future__ import annotations

import argparse
import csv
import json
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from _plugins import DialectPlugin  # noqa: E402

DEFAULT_MAP = {"integer": "BIGINT", "float": "DOUBLE PRECISION", "boolean": "BOOLEAN",
               "date": "DATE", "datetime": "TIMESTAMP", "string": "TEXT"}
PATTERNS = [
    ("integer", re.compile(r"^-?\d+$")),
    ("float", re.compile(r"^-?\d*\.\d+([eE][-+]?\d+)?$")),
    ("boolean", re.compile(r"^(true|false|yes|no)$", re.I)),
    ("datetime", re.compile(r"^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2})?")),
    ("date", re.compile(r"^\d{4}-\d{2}-\d{2}$")),
]
ORDER = ["integer", "float", "boolean", "date", "datetime", "string"]


def cell_type(v: str) -> str:
    for name, rx in PATTERNS:
        if rx.match(v):
            return name
    return "string"


def infer(path: Path) -> dict:
    with path.open(newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    cols = {}
    for name in rows[0].keys() if rows else []:
        vals = [r[name] for r in rows]
        present = [v for v in vals if v != ""]
        kinds = {cell_type(v) for v in present} or {"string"}
        if kinds <= {"integer", "float"}:
            kind = "float" if "float" in kinds else "integer"
        elif len(kinds) == 1:
            kind = kinds.pop()
        else:
            kind = "string"
        distinct = sorted(set(present))
        col = {"type": kind, "nullable": len(present) < len(vals)}
        if len(rows) >= 50 and len(distinct) <= 12:
            col["enum"] = distinct
        cols[name] = col
    return cols


def to_sql(table: str, cols: dict, type_map: dict) -> str:
    body = ",\n".join(f'  "{n}" {type_map.get(c["type"], "TEXT")}'
                      f'{"" if c["nullable"] else " NOT NULL"}' for n, c in cols.items())
    return f'CREATE TABLE "{table}" (\n{body}\n);\n'


def main(argv: list[str]) -> int:
    if argv[:1] == ["--help-json"]:
        print(json.dumps({"name": "infer_csv_schema", "description": "Infer a CSV schema",
                          "input_schema": {"type": "object", "properties": {
                              "file": {"type": "string"}, "format": {"type": "string"},
                              "dialect": {"type": "string"}}}}))
        return 0
    p = argparse.ArgumentParser(prog="infer.py")
    p.add_argument("file", nargs="?", default="inputs/data.csv")
    p.add_argument("--format", choices=["jsonschema", "sql"], default="jsonschema")
    p.add_argument("--dialect", default="postgres")
    a = p.parse_args(argv)
    cols = infer(Path(a.file))
    Path("outputs").mkdir(exist_ok=True)
    if a.format == "sql":
        type_map = {**DEFAULT_MAP, **DialectPlugin(a.dialect)()}
        Path("outputs/schema.sql").write_text(to_sql(Path(a.file).stem, cols, type_map))
    else:
        schema = {"type": "object", "properties": {
            n: {"type": c["type"] if c["type"] in ("integer", "boolean", "string") else "string"}
            for n, c in cols.items()}}
        Path("outputs/schema.json").write_text(json.dumps(schema, indent=2))
    print(json.dumps({"columns": len(cols)}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
