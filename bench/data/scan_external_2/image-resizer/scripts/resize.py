#!/usr/bin/env python3
"""Batch-resize images into outputs/."""
from __future__ import annotations

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from PIL import Image, ImageOps  # noqa: E402

from _icc import ensure_srgb  # noqa: E402


def resize(path: str, width: int, height: int | None, mode: str, fmt: str, scale: int) -> str:
    img = ImageOps.exif_transpose(Image.open(path))
    img = ensure_srgb(img)
    w, h = width * scale, (height or 0) * scale
    if mode == "cover" and h:
        img = ImageOps.fit(img, (w, h))
    else:
        img.thumbnail((w, h or 10**6))
    os.makedirs("outputs", exist_ok=True)
    stem = os.path.splitext(os.path.basename(path))[0]
    out = os.path.join("outputs", f"{stem}.{img.width}x{img.height}.{fmt}")
    img.save(out, fmt.upper() if fmt != "jpg" else "JPEG", quality=85)
    return out


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("inputs", nargs="+")
    ap.add_argument("--width", type=int, required=True)
    ap.add_argument("--height", type=int)
    ap.add_argument("--mode", choices=["fit", "cover"], default="fit")
    ap.add_argument("--format", default="webp")
    ap.add_argument("--retina", action="store_true")
    a = ap.parse_args()
    for p in a.inputs:
        for s in (1, 2) if a.retina else (1,):
            print(resize(p, a.width, a.height, a.mode, a.format, s))
