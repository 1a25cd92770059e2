#!/usr/bin/env python3
import csv, re, sys
from pathlib import Path
from pypdf import PdfReader

FIELDS = {"number": r"Invoice\s*(?:No\.?|#)\s*(\S+)", "date": r"Date:?\s*([\d./-]+)", "total": r"Total:?\s*([\d.,]+)"}

rows = []
for p in sorted(Path(sys.argv[1] if len(sys.argv) > 1 else "invoices").glob("*.pdf")):
    text = "\n".join(page.extract_text() or "" for page in PdfReader(p).pages)
    row = {"file": p.name}
    for k, rx in FIELDS.items():
        mt = re.search(rx, text, re.I)
        row[k] = mt.group(1) if mt else ""
    rows.append(row)
with open("invoices.csv", "w", newline="") as f:
    w = csv.DictWriter(f, fieldnames=["file", *FIELDS])
    w.writeheader()
    w.writerows(rows)
