#!/usr/bin/env python3
"""Extract invoice fields from OCR text: python3 extract.py [FILES...]"""
from __future__ import annotations

import glob
import json
import re
import sys
from decimal import Decimal, InvalidOperation
from pathlib import Path

AMOUNT = r"([0-9][0-9.,\s]*[0-9])"
FIELDS = {
    "invoice_number": re.compile(r"Invoice\s*(?:No\.?|Number|#)\s*[:#]?\s*([A-Z0-9\-/]+)", re.I),
    "issue_date": re.compile(r"(?:Invoice|Issue)\s*date\s*:?\s*([0-9./\-]{8,10})", re.I),
    "due_date": re.compile(r"Due\s*date\s*:?\s*([0-9./\-]{8,10})", re.I),
    "vat_id": re.compile(r"\b([A-Z]{2}[0-9A-Z]{8,12})\b"),
    "net": re.compile(r"(?:Net|Subtotal)\s*:?\s*" + AMOUNT, re.I),
    "tax": re.compile(r"(?:VAT|Tax)\s*(?:\d+\s*%)?\s*:?\s*" + AMOUNT, re.I),
    "gross": re.compile(r"(?:Total|Amount due)\s*:?\s*" + AMOUNT, re.I),
}


def money(s: str | None) -> Decimal | None:
    if not s:
        return None
    s = s.replace(" ", "")
    if s.count(",") == 1 and s.rfind(",") > s.rfind("."):
        s = s.replace(".", "").replace(",", ".")
    else:
        s = s.replace(",", "")
    try:
        return Decimal(s)
    except InvalidOperation:
        return None


def extract(text: str) -> dict:
    out: dict = {"supplier": text.strip().splitlines()[0] if text.strip() else None}
    for name, rx in FIELDS.items():
        m = rx.search(text)
        out[name] = m.group(1).strip() if m else None
    warnings = []
    net, tax, gross = (money(out[k]) for k in ("net", "tax", "gross"))
    if None not in (net, tax, gross) and abs(net + tax - gross) > Decimal("0.01"):
        warnings.append(f"net + tax = {net + tax} but gross = {gross}")
    if not out["vat_id"]:
        warnings.append("no VAT id found")
    out["warnings"] = warnings
    return out


def main(argv: list[str]) -> int:
    if argv[:1] == ["--help-json"]:
        print(json.dumps({"name": "extract_invoice", "description": "Extract invoice fields",
                          "input_schema": {"type": "object", "properties": {
                              "files": {"type": "array", "items": {"type": "string"}}}}}))
        return 0
    files = argv or sorted(glob.glob("inputs/*.txt"))
    result = [{"file": f, **extract(Path(f).read_text(encoding="utf-8"))} for f in files]
    Path("outputs").mkdir(exist_ok=True)
    Path("outputs/invoices.json").write_text(json.dumps(result, indent=2))
    print(json.dumps({"invoices": len(result), "warnings": sum(len(r["warnings"]) for r in result)}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
