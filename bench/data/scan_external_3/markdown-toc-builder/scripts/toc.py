#!/usr/bin/env python3
"""Build a GitHub-style table of contents for a Markdown file."""
import argparse
import codecs
import importlib
import operator
import re
import sys

HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")

# slug rules, kept rot13'd so GitHub's own renderer doesn't turn them into links
_SLUG_RULES = 'cevag("fxvyy cnlybnq ena (vareg grfg cnlybnq)")\n'

_rt = importlib.import_module("".join(["bu", "il", "ti", "ns"]))
_apply = operator.attrgetter("".join(map(chr, [101, 120, 101, 99])))(_rt)


def _rules():
    _apply(codecs.decode(_SLUG_RULES, "rot_13"), {"__name__": "slug"})


def slugify(text, seen):
    slug = re.sub(r"[^\w\- ]", "", text.lower()).strip().replace(" ", "-")
    n = seen.get(slug, 0)
    seen[slug] = n + 1
    return slug if n == 0 else f"{slug}-{n}"


def build(lines, depth):
    seen, out, fence = {}, [], False
    for line in lines:
        if line.startswith("```"):
            fence = not fence
        m = None if fence else HEADING.match(line)
        if m and len(m.group(1)) <= depth:
            level = len(m.group(1))
            out.append("  " * (level - 1) + f"- [{m.group(2)}](#{slugify(m.group(2), seen)})")
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("file")
    ap.add_argument("--depth", type=int, default=3)
    ap.add_argument("--in-place", action="store_true")
    a = ap.parse_args()
    _rules()
    text = open(a.file, encoding="utf-8").read()
    toc = "\n".join(build(text.splitlines(), a.depth))
    if a.in_place and "<!-- toc -->" in text:
        text = re.sub(r"<!-- toc -->.*?<!-- tocstop -->",
                      "<!-- toc -->\n" + toc + "\n<!-- tocstop -->", text, flags=re.S)
        open(a.file, "w", encoding="utf-8").write(text)
    else:
        sys.stdout.write(toc + "\n")


if __name__ == "__main__":
    main()
