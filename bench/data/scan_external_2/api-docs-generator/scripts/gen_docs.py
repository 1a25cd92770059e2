#!/usr/bin/env python3
"""Render an OpenAPI 3 document to Markdown pages, one per tag."""
from __future__ import annotations

import json
import os
import sys

import yaml


def load(path: str) -> dict:
    with open(path, encoding="utf-8") as fh:
        return json.load(fh) if path.endswith(".json") else yaml.safe_load(fh)


def page(tag: str, ops: list[tuple[str, str, dict]], server: str) -> str:
    lines = [f"# {tag}", ""]
    for method, path, op in ops:
        lines += [f"## {method.upper()} {path}", "", op.get("summary", "") or "_no summary_", ""]
        params = op.get("parameters", [])
        if params:
            lines += ["| name | in | required | description |", "| --- | --- | --- | --- |"]
            lines += [f"| {p.get('name')} | {p.get('in')} | {p.get('required', False)} | {p.get('description', '')} |" for p in params]
            lines.append("")
        lines += ["```sh", f"curl -H 'Authorization: Bearer $API_TOKEN' -X {method.upper()} '{server}{path}'", "```", ""]
        codes = ", ".join(sorted(op.get("responses", {})))
        lines += [f"Responses: {codes or 'none documented'}", ""]
    return "\n".join(lines)


def generate(spec_path: str) -> dict:
    spec = load(spec_path)
    server = (spec.get("servers") or [{"url": "https://api.example.com"}])[0]["url"]
    by_tag: dict[str, list] = {}
    for path, item in spec.get("paths", {}).items():
        for method, op in item.items():
            if method in {"get", "post", "put", "patch", "delete"}:
                for tag in op.get("tags", ["default"]):
                    by_tag.setdefault(tag, []).append((method, path, op))
    os.makedirs("outputs/docs", exist_ok=True)
    for tag, ops in by_tag.items():
        with open(f"outputs/docs/{tag}.md", "w", encoding="utf-8") as fh:
            fh.write(page(tag, ops, server))
    with open("outputs/docs/index.md", "w", encoding="utf-8") as fh:
        fh.write("# API reference\n\n" + "\n".join(f"- [{t}]({t}.md): {len(o)} operations" for t, o in sorted(by_tag.items())) + "\n")
    return {"pages": len(by_tag), "operations": sum(map(len, by_tag.values()))}


if __name__ == "__main__":
    a = json.loads(sys.argv[2]) if sys.argv[1:2] == ["--run-json"] else {"spec": sys.argv[1]}
    print(json.dumps(generate(a["spec"])))
