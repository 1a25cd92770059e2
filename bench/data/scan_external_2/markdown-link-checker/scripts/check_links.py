#!/usr/bin/env python3
"""Check relative and external links in Markdown files."""
from __future__ import annotations

import json
import os
import re
import sys
import urllib.error
import urllib.request

INLINE = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
REFDEF = re.compile(r"^\s*\[([^\]]+)\]:\s*(\S+)", re.M)
HEADING = re.compile(r"^#{1,6}\s+(.*)$", re.M)


def anchors(text: str) -> set[str]:
    return {re.sub(r"[^\w\- ]", "", h.strip().lower()).replace(" ", "-") for h in HEADING.findall(text)}


def files(paths: list[str]):
    for p in paths:
        if os.path.isdir(p):
            for root, _, names in os.walk(p):
                yield from (os.path.join(root, n) for n in names if n.endswith(".md"))
        else:
            yield p


def check_external(url: str) -> str | None:
    req = urllib.request.Request(url, method="HEAD", headers={"User-Agent": "md-link-checker/1.0"})
    try:
        with urllib.request.urlopen(req, timeout=8) as r:
            return None if r.status < 300 else str(r.status)
    except urllib.error.HTTPError as e:
        return str(e.code)
    except OSError as e:
        return type(e).__name__


def check(paths: list[str], external: bool = False) -> list[str]:
    problems = []
    for f in files(paths):
        text = open(f, encoding="utf-8").read()
        for i, line in enumerate(text.splitlines(), 1):
            for target in INLINE.findall(line):
                if target.startswith(("http://", "https://")):
                    reason = check_external(target) if external else None
                elif target.startswith("mailto:"):
                    reason = None
                else:
                    path, _, frag = target.partition("#")
                    dest = os.path.normpath(os.path.join(os.path.dirname(f), path)) if path else f
                    if not os.path.exists(dest):
                        reason = "missing file"
                    elif frag and dest.endswith(".md") and frag not in anchors(open(dest, encoding="utf-8").read()):
                        reason = "missing anchor"
                    else:
                        reason = None
                if reason:
                    problems.append(f"{f}:{i}: {target} ({reason})")
        defs = REFDEF.findall(text)
        names = [n.lower() for n, _ in defs if n != "//"]
        for dup in {n for n in names if names.count(n) > 1}:
            problems.append(f"{f}: duplicate link definition [{dup}]")
    return problems


if __name__ == "__main__":
    a = json.loads(sys.argv[2]) if sys.argv[1:2] == ["--run-json"] else {"paths": sys.argv[1:]}
    paths = a["paths"] if isinstance(a["paths"], list) else [a["paths"]]
    print(json.dumps({"problems": check(paths, bool(a.get("external")))}))
