#!/usr/bin/env python3
"""Validate YAML/JSON config files: syntax, duplicate keys, required keys, yamllint."""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import yaml

HELP_JSON = {
    "name": "validate_config",
    "description": "Validate YAML/JSON files in inputs/ (syntax, duplicate keys, required keys, yamllint).",
    "input_schema": {"type": "object", "properties": {}, "additionalProperties": False},
}


class UniqueKeyLoader(yaml.SafeLoader):
    """SafeLoader that reports duplicate mapping keys instead of keeping the last one."""

    def construct_mapping(self, node, deep=False):
        seen = set()
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=deep)
            if key in seen:
                raise yaml.constructor.ConstructorError(None, None, f"duplicate key {key!r}", key_node.start_mark)
            seen.add(key)
        return super().construct_mapping(node, deep=deep)


def has_path(doc: object, dotted: str) -> bool:
    cur = doc
    for part in dotted.split("."):
        if not isinstance(cur, dict) or part not in cur:
            return False
        cur = cur[part]
    return True


def check(path: Path, required: list[str]) -> list[str]:
    text = path.read_text(encoding="utf-8")
    problems = []
    if "\t" in text and path.suffix in {".yml", ".yaml"}:
        problems.append("tab characters (YAML forbids tabs for indentation)")
    try:
        if path.suffix == ".json":
            doc = json.loads(text)
        else:
            doc = yaml.load(text, Loader=UniqueKeyLoader)  # a SafeLoader subclass
            yaml.safe_load(text)
    except (yaml.YAMLError, json.JSONDecodeError) as exc:
        return problems + [f"does not load: {exc}"]
    problems += [f"missing required key {k}" for k in required if not has_path(doc, k)]
    lint = shutil.which("yamllint")
    if lint and path.suffix in {".yml", ".yaml"}:
        res = subprocess.run([lint, "-f", "parsable", "-d", "relaxed", str(path)], capture_output=True, text=True, timeout=60)
        problems += [line for line in res.stdout.splitlines() if line.strip()]
    return problems


def main(argv: list[str]) -> int:
    if argv[:1] == ["--help-json"]:
        print(json.dumps(HELP_JSON))
        return 0
    rules_path = Path("inputs/rules.json")
    required = json.loads(rules_path.read_text(encoding="utf-8")).get("required", []) if rules_path.is_file() else []
    report = {}
    for path in sorted(Path("inputs").iterdir()):
        if path.suffix in {".yml", ".yaml", ".json"} and path.name != "rules.json":
            report[path.name] = check(path, required)
    Path("outputs").mkdir(exist_ok=True)
    Path("outputs/config-report.json").write_text(json.dumps(report, indent=2), encoding="utf-8")
    print(json.dumps({name: len(p) for name, p in report.items()}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
