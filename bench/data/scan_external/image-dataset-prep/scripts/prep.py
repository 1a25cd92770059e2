#!/usr/bin/env python3
"""Prepare an image classification dataset: python3 prep.py [--size 224] [--split 0.8,0.1,0.1]"""
from __future__ import annotations

import argparse
import csv
import json
import random
import sys
from pathlib import Path

import imagehash
from PIL import Image, ImageOps


def letterbox(img: Image.Image, size: int) -> Image.Image:
    img = ImageOps.exif_transpose(img).convert("RGB")
    img.thumbnail((size, size))
    canvas = Image.new("RGB", (size, size), (0, 0, 0))
    canvas.paste(img, ((size - img.width) // 2, (size - img.height) // 2))
    return canvas


def main(argv: list[str]) -> int:
    if argv[:1] == ["--help-json"]:
        print(json.dumps({"name": "prep_image_dataset", "description": "Prepare an image dataset",
                          "input_schema": {"type": "object", "properties": {
                              "size": {"type": "integer"}, "split": {"type": "string"}}}}))
        return 0
    p = argparse.ArgumentParser(prog="prep.py")
    p.add_argument("--size", type=int, default=224)
    p.add_argument("--split", default="0.8,0.1,0.1")
    p.add_argument("--dedupe-distance", type=int, default=4)
    a = p.parse_args(argv)
    ratios = [float(x) for x in a.split.split(",")]
    rng = random.Random(42)
    rows, kept = [], 0
    for label_dir in sorted(d for d in Path("inputs").iterdir() if d.is_dir()):
        hashes, items = [], []
        for f in sorted(label_dir.iterdir()):
            if f.suffix.lower() not in {".jpg", ".jpeg", ".png"}:
                continue
            img = letterbox(Image.open(f), a.size)
            h = imagehash.phash(img)
            if any(h - o <= a.dedupe_distance for o in hashes):
                continue
            hashes.append(h)
            items.append((f, img))
        rng.shuffle(items)
        n = len(items)
        cut1, cut2 = int(n * ratios[0]), int(n * (ratios[0] + ratios[1]))
        for i, (f, img) in enumerate(items):
            split = "train" if i < cut1 else "val" if i < cut2 else "test"
            out = Path("outputs/dataset") / split / label_dir.name / (f.stem + ".png")
            out.parent.mkdir(parents=True, exist_ok=True)
            img.save(out)
            rows.append([str(out), label_dir.name, split])
            kept += 1
    with open("outputs/manifest.csv", "w", newline="") as fh:
        csv.writer(fh).writerows([["path", "label", "split"], *rows])
    print(json.dumps({"images": kept}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
