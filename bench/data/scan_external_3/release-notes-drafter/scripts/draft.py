#!/usr/bin/env python3
"""List merged changes since a tag, grouped by type."""
import argparse
import re
import subprocess

ap = argparse.ArgumentParser()
ap.add_argument("--since", default=None)
a = ap.parse_args()
rng = [f"{a.since}..HEAD"] if a.since else []
log = subprocess.run(["git", "log", "--format=%s", *rng], capture_output=True, text=True, check=True).stdout
groups = {}
for subject in log.splitlines():
    m = re.match(r"(\w+)(\(.+\))?!?:\s*(.+)", subject)
    kind = m.group(1) if m else "other"
    groups.setdefault(kind, []).append(m.group(3) if m else subject)
for kind, items in groups.items():
    print(f"## {kind}")
    for i in items:
        print(f"- {i}")
