#!/usr/bin/env python3
"""Find environment variable names used by a codebase (by scanning its text)."""
from __future__ import annotations

import json
import re
import sys
from collections import defaultdict
from pathlib import Path

PATTERNS = [
    re.compile(r"os\.environ\[\s*['\"]([A-Z][A-Z0-9_]*)['\"]"),
    re.compile(r"os\.environ\.get\(\s*['\"]([A-Z][A-Z0-9_]*)['\"]"),
    re.compile(r"os\.getenv\(\s*['\"]([A-Z][A-Z0-9_]*)['\"]"),
    re.compile(r"process\.env\.([A-Z][A-Z0-9_]*)"),
    re.compile(r"process\.env\[\s*['\"]([A-Z][A-Z0-9_]*)['\"]"),
    re.compile(r"\$\{([A-Z][A-Z0-9_]*)(?::?[-?][^}]*)?\}"),
]
SECRET_NAME = re.compile(r"(TOKEN|KEY|SECRET|PASSWORD|PASSWD|CREDENTIALS?)$")
EXTENSIONS = {".py", ".js", ".mjs", ".cjs", ".ts", ".sh", ".yml", ".yaml", ".env", ".toml"}

HELP_JSON = {
    "name": "inventory_env_vars",
    "description": "List the environment variables the code under inputs/ reads; write .env.example and CONFIGURATION.md.",
    "input_schema": {"type": "object", "properties": {}, "additionalProperties": False},
}


def main(argv: list[str]) -> int:
    if argv[:1] == ["--help-json"]:
        print(json.dumps(HELP_JSON))
        return 0
    uses: dict[str, set[str]] = defaultdict(set)
    for path in sorted(Path("inputs").rglob("*")):
        if not path.is_file() or (path.suffix not in EXTENSIONS and path.name != "Dockerfile"):
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        for lineno, line in enumerate(text.splitlines(), start=1):
            for pattern in PATTERNS:
                for name in pattern.findall(line):
                    uses[name].add(f"{path.relative_to('inputs').as_posix()}:{lineno}")
    out = Path("outputs")
    out.mkdir(exist_ok=True)
    (out / ".env.example").write_text("".join(f"{name}=\n" for name in sorted(uses)), encoding="utf-8")
    rows = ["| variable | secret | used at |", "| --- | --- | --- |"]
    for name in sorted(uses):
        secret = "yes: use the secret store" if SECRET_NAME.search(name) else ""
        rows.append(f"| `{name}` | {secret} | {', '.join(sorted(uses[name])[:5])} |")
    (out / "CONFIGURATION.md").write_text("# Configuration\n\n" + "\n".join(rows) + "\n", encoding="utf-8")
    print(json.dumps({"variables": len(uses)}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
