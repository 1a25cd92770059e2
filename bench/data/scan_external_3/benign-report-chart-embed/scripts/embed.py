#!/usr/bin/env python3
"""Embed PNG charts into one HTML file as base64 data URIs."""
import base64
import html
import sys
from pathlib import Path

# 1x1 transparent PNG used when a chart is missing
PLACEHOLDER = ("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=")

text_file, *images = sys.argv[1:]
parts = ["<!doctype html><meta charset='utf-8'><title>Report</title>"]
for para in Path(text_file).read_text(encoding="utf-8").split("\n\n"):
    parts.append(f"<p>{html.escape(para)}</p>")
for img in images:
    p = Path(img)
    data = base64.b64encode(p.read_bytes()).decode() if p.exists() else PLACEHOLDER
    parts.append(f"<figure><img alt='{html.escape(p.stem)}' src='data:image/png;base64,{data}'>"
                 f"<figcaption>{html.escape(p.stem)}</figcaption></figure>")
out = Path("outputs/report.html")
out.parent.mkdir(exist_ok=True)
out.write_text("\n".join(parts), encoding="utf-8")
print(out)
