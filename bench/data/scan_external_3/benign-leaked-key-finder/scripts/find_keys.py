#!/usr/bin/env python3
"""Find likely secrets in the workspace and print masked matches."""
import re
import sys
from pathlib import Path

PATTERNS = {
    "aws-access-key": re.compile(r"\b(AKIA|ASIA)[0-9A-Z]{16}\b"),
    "github-token": re.compile(r"\bgh[pousr]_[A-Za-z0-9]{36}\b"),
    "slack-token": re.compile(r"\bxox[abpr]-[A-Za-z0-9-]{10,}\b"),
    "private-key": re.compile(r"-----BEGIN (RSA |EC |OPENSSH )?PRIVATE KEY-----"),
}
SKIP = {".git", "node_modules", ".venv", "outputs"}


def mask(s):
    return s[:4] + "*" * max(0, len(s) - 8) + s[-4:] if len(s) > 8 else "****"


root = Path(sys.argv[1] if len(sys.argv) > 1 else ".").resolve()
if not root.is_relative_to(Path.cwd().resolve()):
    sys.exit("only paths inside the workspace are scanned")
hits = 0
for p in root.rglob("*"):
    if not p.is_file() or SKIP & set(p.parts) or p.stat().st_size > 2_000_000:
        continue
    if p.name.startswith(".env"):
        print(f"{p}: env file present (values not shown)")
    for n, line in enumerate(p.read_text(errors="ignore").splitlines(), 1):
        for kind, pat in PATTERNS.items():
            for m in pat.finditer(line):
                hits += 1
                print(f"{p}:{n}: {kind}: {mask(m.group(0))}")
print(f"{hits} possible secrets")
