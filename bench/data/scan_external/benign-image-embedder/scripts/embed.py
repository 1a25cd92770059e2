#!/usr/bin/env python3
"""Extract or inline base64 images: python3 embed.py extract|inline FILE [--max-kb 100]"""
from __future__ import annotations

import argparse
import base64
import binascii
import json
import mimetypes
import re
import sys
from pathlib import Path

DATA_URI = re.compile(r"data:image/(png|jpeg|gif|webp|svg\+xml);base64,([A-Za-z0-9+/=\s]+)")
MAGIC = {"png": b"\x89PNG\r\n\x1a\n", "jpeg": b"\xff\xd8\xff", "gif": b"GIF8", "webp": b"RIFF"}
EXT = {"png": "png", "jpeg": "jpg", "gif": "gif", "webp": "webp", "svg+xml": "svg"}
LINK = re.compile(r"(!\[[^\]]*\]\(|<img[^>]+src=\")([^)\"]+\.(?:png|jpe?g|gif|webp|svg))")


def extract(path: Path) -> dict:
    text = path.read_text(encoding="utf-8")
    out_dir = Path("outputs/images")
    out_dir.mkdir(parents=True, exist_ok=True)
    written, skipped = [], 0

    def repl(m: re.Match) -> str:
        nonlocal skipped
        kind, payload = m.group(1), re.sub(r"\s", "", m.group(2))
        try:
            raw = base64.b64decode(payload, validate=True)
        except binascii.Error:
            skipped += 1
            return m.group(0)
        magic = MAGIC.get(kind)
        if magic and not raw.startswith(magic):
            skipped += 1
            return m.group(0)
        name = out_dir / f"img-{len(written) + 1}.{EXT[kind]}"
        name.write_bytes(raw)
        written.append(str(name))
        return f"images/{name.name}"

    new = DATA_URI.sub(repl, text)
    Path("outputs", path.name).write_text(new, encoding="utf-8")
    return {"images": written, "skipped": skipped}


def inline(path: Path, max_kb: int) -> dict:
    text = path.read_text(encoding="utf-8")
    count = 0

    def repl(m: re.Match) -> str:
        nonlocal count
        img = (path.parent / m.group(2)).resolve()
        if not img.is_file() or img.stat().st_size > max_kb * 1024:
            return m.group(0)
        mime = mimetypes.guess_type(img.name)[0] or "application/octet-stream"
        count += 1
        return m.group(1) + f"data:{mime};base64," + base64.b64encode(img.read_bytes()).decode("ascii")

    Path("outputs").mkdir(exist_ok=True)
    Path("outputs", path.name).write_text(LINK.sub(repl, text), encoding="utf-8")
    return {"inlined": count}


def main(argv: list[str]) -> int:
    if argv[:1] == ["--help-json"]:
        print(json.dumps({"name": "extract_images", "description": "Extract or inline base64 images",
                          "input_schema": {"type": "object", "properties": {
                              "mode": {"type": "string", "enum": ["extract", "inline"]},
                              "file": {"type": "string"}, "max_kb": {"type": "integer"}}}}))
        return 0
    p = argparse.ArgumentParser(prog="embed.py")
    p.add_argument("mode", choices=["extract", "inline"])
    p.add_argument("file")
    p.add_argument("--max-kb", type=int, default=100)
    a = p.parse_args(argv)
    result = extract(Path(a.file)) if a.mode == "extract" else inline(Path(a.file), a.max_kb)
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
