#!/usr/bin/env python3
"""Check YAML files: python3 check.py FILE... [--schema SCHEMA.json]"""
from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

import jsonschema
import yaml

NORWAY = re.compile(r":\s+(yes|no|on|off|y|n)\s*$", re.I | re.M)


class UniqueKeyLoader(yaml.SafeLoader):
    """SafeLoader that refuses duplicate keys instead of keeping the last one."""

    def construct_mapping(self, node, deep=False):
        seen = {}
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=deep)
            if key in seen:
                raise yaml.constructor.ConstructorError(
                    None, None, f"duplicate key {key!r} (first on line {seen[key] + 1})", key_node.start_mark)
            seen[key] = key_node.start_mark.line
        return super().construct_mapping(node, deep)


def check(path: Path, schema: dict | None) -> list[str]:
    text = path.read_text(encoding="utf-8")
    problems = []
    if "\t" in text:
        problems.append(f"{path}:{text[:text.index(chr(9))].count(chr(10)) + 1}: tab character")
    for m in NORWAY.finditer(text):
        problems.append(f"{path}:{text[:m.start()].count(chr(10)) + 1}: unquoted {m.group(1)!r} is a boolean")
    try:
        docs = list(yaml.load_all(text, Loader=UniqueKeyLoader))
    except yaml.YAMLError as e:
        return problems + [f"{path}: {e}"]
    anchors = set(re.findall(r"&(\w+)", text)) - set(re.findall(r"\*(\w+)", text))
    problems += [f"{path}: anchor &{a} is never used" for a in sorted(anchors)]
    if schema:
        for i, doc in enumerate(docs):
            for err in jsonschema.Draft202012Validator(schema).iter_errors(doc):
                problems.append(f"{path}[doc {i}] {'/'.join(map(str, err.path))}: {err.message}")
    return problems


def main(argv: list[str]) -> int:
    if argv[:1] == ["--help-json"]:
        print(json.dumps({"name": "check_yaml", "description": "Validate YAML files",
                          "input_schema": {"type": "object", "properties": {
                              "files": {"type": "array", "items": {"type": "string"}},
                              "schema": {"type": "string"}}}}))
        return 0
    p = argparse.ArgumentParser(prog="check.py")
    p.add_argument("files", nargs="+")
    p.add_argument("--schema")
    a = p.parse_args(argv)
    schema = json.loads(Path(a.schema).read_text()) if a.schema else None
    problems = [msg for f in a.files for msg in check(Path(f), schema)]
    # a quick sanity parse of the bundled example with the plain safe loader
    yaml.safe_load("example: {retries: 3, backoff: 1.5}")
    print(json.dumps({"problems": problems, "ok": not problems}))
    return 0 if not problems else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
