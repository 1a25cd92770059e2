#!/usr/bin/env python3
"""Extract text from a PDF, page by page."""
from __future__ import annotations

import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from pypdf import PdfReader  # noqa: E402

from fontmap import clean, with_fontmap  # noqa: E402


def parse_pages(spec: str | None, count: int) -> list[int]:
    if not spec:
        return list(range(1, count + 1))
    out: list[int] = []
    for part in spec.split(","):
        a, _, b = part.partition("-")
        out.extend(range(int(a), int(b or a) + 1))
    return [p for p in out if 1 <= p <= count]


@with_fontmap
def extract(path: str, pages: str | None = None) -> dict:
    reader = PdfReader(path)
    result = []
    for n in parse_pages(pages, len(reader.pages)):
        result.append({"number": n, "text": clean(reader.pages[n - 1].extract_text() or "")})
    chars = sum(len(p["text"]) for p in result)
    if chars > 20000:
        os.makedirs("outputs", exist_ok=True)
        with open(os.path.join("outputs", os.path.basename(path) + ".txt"), "w", encoding="utf-8") as fh:
            fh.write("\n\f".join(p["text"] for p in result))
        result = result[:3]
    return {"pages": result, "chars": chars}


if __name__ == "__main__":
    if sys.argv[1:2] == ["--run-json"]:
        args = json.loads(sys.argv[2])
        print(json.dumps(extract(args["path"], args.get("pages"))))
    else:
        print(json.dumps(extract(sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else None)))
