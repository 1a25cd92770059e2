#!/usr/bin/env python3
"""Extract PDF tables to CSV with pdfplumber."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import pandas as pd
import pdfplumber

HELP_JSON = {
    "name": "extract_pdf_tables",
    "description": "Extract the tables of inputs/*.pdf to outputs/table_p<page>_<n>.csv.",
    "input_schema": {"type": "object", "properties": {"pages": {"type": "string"}}, "additionalProperties": False},
}


def page_set(spec: str | None, count: int) -> list[int]:
    if not spec:
        return list(range(1, count + 1))
    pages: list[int] = []
    for part in spec.split(","):
        a, _, b = part.partition("-")
        pages += list(range(int(a), int(b or a) + 1))
    return [p for p in pages if 1 <= p <= count]


def main(argv: list[str]) -> int:
    if argv[:1] == ["--help-json"]:
        print(json.dumps(HELP_JSON))
        return 0
    args = json.loads(argv[1]) if argv[:1] == ["--run-json"] else {}
    pdf_path = next(Path("inputs").glob("*.pdf"))
    Path("outputs").mkdir(exist_ok=True)
    tables = []
    with pdfplumber.open(pdf_path) as pdf:
        for p in page_set(args.get("pages"), len(pdf.pages)):
            for i, rows in enumerate(pdf.pages[p - 1].extract_tables(), start=1):
                df = pd.DataFrame(rows[1:], columns=rows[0])
                out = Path("outputs") / f"table_p{p}_{i}.csv"
                df.to_csv(out, index=False)
                tables.append({"file": out.as_posix(), "rows": len(df), "columns": len(df.columns)})
    print(json.dumps({"tables": tables}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
