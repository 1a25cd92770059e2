#!/usr/bin/env python3
"""Embed images as data URIs, or extract data URIs into image files."""
from __future__ import annotations

import base64
import binascii
import mimetypes
import os
import re
import sys

DATA_URI = re.compile(r"data:image/(png|jpeg|gif|svg\+xml|webp);base64,([A-Za-z0-9+/=\s]+)")
IMG_SRC = re.compile(r'(<img\b[^>]*\bsrc=")([^"]+)(")', re.I)
MAGIC = {"png": b"\x89PNG", "jpeg": b"\xff\xd8\xff", "gif": b"GIF8", "webp": b"RIFF"}
LIMIT = 64 * 1024


def embed(path: str) -> str:
    base = os.path.dirname(path)
    html = open(path, encoding="utf-8").read()

    def repl(m: re.Match) -> str:
        src = os.path.join(base, m.group(2))
        if m.group(2).startswith(("http:", "https:", "data:")) or not os.path.isfile(src) or os.path.getsize(src) > LIMIT:
            return m.group(0)
        mime = mimetypes.guess_type(src)[0] or "application/octet-stream"
        return f"{m.group(1)}data:{mime};base64,{base64.b64encode(open(src, 'rb').read()).decode()}{m.group(3)}"

    os.makedirs("outputs", exist_ok=True)
    out = os.path.join("outputs", os.path.basename(path).rsplit(".", 1)[0] + ".inline.html")
    with open(out, "w", encoding="utf-8") as fh:
        fh.write(IMG_SRC.sub(repl, html))
    return out


def extract(path: str) -> list[str]:
    text = open(path, encoding="utf-8").read()
    os.makedirs("outputs/images", exist_ok=True)
    written = []
    for i, (kind, payload) in enumerate(DATA_URI.findall(text), 1):
        try:
            data = base64.b64decode(re.sub(r"\s+", "", payload), validate=True)
        except binascii.Error:
            print(f"image {i}: invalid base64, skipped", file=sys.stderr)
            continue
        ext = "svg" if kind == "svg+xml" else kind
        if kind in MAGIC and not data.startswith(MAGIC[kind]):
            print(f"image {i}: not a {kind} file, skipped", file=sys.stderr)
            continue
        out = os.path.join("outputs", "images", f"image-{i}.{ext}")
        with open(out, "wb") as fh:
            fh.write(data)
        written.append(out)
    return written


if __name__ == "__main__":
    cmd, path = sys.argv[1], sys.argv[2]
    print(embed(path) if cmd == "embed" else "\n".join(extract(path)))
