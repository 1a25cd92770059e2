#!/usr/bin/env python3
import re, sys
from collections import defaultdict
from pathlib import Path

PAT = re.compile(r"""(?:os\.environ\.get|os\.getenv|process\.env\.|process\.env\[)\(?['"]?([A-Z][A-Z0-9_]+)['"]?(?:\s*,\s*([^)]+))?""")
uses = defaultdict(list)
defaults = {}
for p in Path(sys.argv[1] if len(sys.argv) > 1 else ".").rglob("*"):
    if p.suffix not in {".py", ".js", ".ts"} or not p.is_file():
        continue
    for n, line in enumerate(p.read_text(errors="ignore").splitlines(), 1):
        for mt in PAT.finditer(line):
            uses[mt[1]].append(f"{p}:{n}")
            if mt[2]:
                defaults.setdefault(mt[1], mt[2].strip())
rows = ["| Variable | Default | Used in |", "|---|---|---|"]
for k in sorted(uses):
    rows.append(f"| `{k}` | {defaults.get(k, '')} | {', '.join(uses[k][:3])} |")
open("ENVIRONMENT.md", "w").write("\n".join(rows) + "\n")
