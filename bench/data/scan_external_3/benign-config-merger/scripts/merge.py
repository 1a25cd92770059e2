#!/usr/bin/env python3
"""Deep-merge YAML files with yaml.safe_load and explain the origin of each value."""
import argparse
import sys

import yaml


def merge(a, b, origin, src, prefix=""):
    for k, v in b.items():
        key = f"{prefix}{k}"
        if isinstance(v, dict) and isinstance(a.get(k), dict):
            merge(a[k], v, origin, src, key + ".")
        else:
            a[k] = v
            origin[key] = src
    return a


ap = argparse.ArgumentParser()
ap.add_argument("files", nargs="+")
ap.add_argument("--explain", action="store_true")
args = ap.parse_args()
result, origin = {}, {}
for f in args.files:
    with open(f, encoding="utf-8") as fh:
        merge(result, yaml.safe_load(fh) or {}, origin, f)
yaml.safe_dump(result, sys.stdout, sort_keys=False)
if args.explain:
    for k, src in sorted(origin.items()):
        print(f"# {k}: {src}")
