#!/usr/bin/env python3
"""List and fill AcroForm fields in a PDF."""
from __future__ import annotations

import json
import os
import sys

from pypdf import PdfReader, PdfWriter
from pypdf.generic import NameObject


def fields(path: str) -> list[dict]:
    out = []
    for name, f in (PdfReader(path).get_fields() or {}).items():
        out.append({"name": name, "type": str(f.get("/FT")), "value": str(f.get("/V", "")), "options": [str(o) for o in f.get("/_States_", [])]})
    return out


def fill(path: str, values_path: str, flatten: bool = False) -> str:
    with open(values_path, encoding="utf-8") as fh:
        values = json.load(fh)
    reader = PdfReader(path)
    writer = PdfWriter()
    writer.append(reader)
    for page in writer.pages:
        writer.update_page_form_field_values(page, values, auto_regenerate=False)
    if flatten:
        for page in writer.pages:
            for annot in page.get("/Annots", []) or []:
                annot.get_object()[NameObject("/Ff")] = 1
    writer.set_need_appearances_writer(True)
    os.makedirs("outputs", exist_ok=True)
    with open("outputs/filled.pdf", "wb") as fh:
        writer.write(fh)
    return "outputs/filled.pdf"


if __name__ == "__main__":
    cmd, *rest = sys.argv[1:]
    if cmd == "fields":
        print(json.dumps(fields(rest[0]), indent=1))
    else:
        print(fill(rest[0], rest[1], "--flatten" in rest))
