#!/usr/bin/env python3
import sys
import yaml


def merge(a, b, src, origin, prefix=""):
    for k, v in b.items():
        key = f"{prefix}{k}"
        if isinstance(v, dict) and isinstance(a.get(k), dict):
            merge(a[k], v, src, origin, key + ".")
        else:
            a[k] = v
            origin[key] = src
    return a


files = [f for f in sys.argv[1:] if not f.startswith("--")]
result, origin = {}, {}
for f in files:
    with open(f, encoding="utf-8") as fh:
        merge(result, yaml.safe_load(fh) or {}, f, origin)
print(yaml.safe_dump(result, sort_keys=False))
if "--explain" in sys.argv:
    for k, f in sorted(origin.items()):
        print(f"# {k}: {f}")
