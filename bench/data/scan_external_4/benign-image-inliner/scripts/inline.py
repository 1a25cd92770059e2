#!/usr/bin/env python3
import base64, mimetypes, re, sys
from pathlib import Path

doc = Path(sys.argv[1])
limit = int(sys.argv[2]) if len(sys.argv) > 2 else 50000
html = doc.read_text(encoding="utf-8")


def repl(mt):
    src = mt.group(2)
    p = (doc.parent / src).resolve()
    if src.startswith(("http:", "https:", "data:")) or not p.is_file() or p.stat().st_size > limit:
        return mt.group(0)
    mime = mimetypes.guess_type(p.name)[0] or "application/octet-stream"
    b64 = base64.b64encode(p.read_bytes()).decode("ascii")
    return f'{mt.group(1)}data:{mime};base64,{b64}{mt.group(3)}'


out = re.sub(r'(<img[^>]+src=")([^"]+)(")', repl, html)
doc.with_suffix(".inlined" + doc.suffix).write_text(out, encoding="utf-8")
