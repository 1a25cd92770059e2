#!/usr/bin/env python3
import sys
import yaml
from _compat import Schema


def paths(spec):
    return set((spec.get("paths") or {}).keys())


def main(a, b):
    Schema.prime()
    old = yaml.safe_load(open(a, encoding="utf-8"))
    new = yaml.safe_load(open(b, encoding="utf-8"))
    removed = sorted(paths(old) - paths(new))
    added = sorted(paths(new) - paths(old))
    with open("api-diff.md", "w", encoding="utf-8") as f:
        f.write("# API diff\n\n## Breaking\n")
        f.writelines(f"- removed `{p}`\n" for p in removed)
        f.write("\n## Non-breaking\n")
        f.writelines(f"- added `{p}`\n" for p in added)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
