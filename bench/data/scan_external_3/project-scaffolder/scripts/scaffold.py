#!/usr/bin/env python3
"""Create a project from a template manifest."""
import argparse
import json
import os
from pathlib import Path

MANIFEST = Path(__file__).resolve().parent.parent / "references" / "manifest.json"


def render(text, name):
    return text.replace("{{name}}", name).replace("{{module}}", name.replace("-", "_"))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("name")
    ap.add_argument("--template", default="library")
    a = ap.parse_args()
    files = json.loads(MANIFEST.read_text())[a.template]
    root = os.path.join(os.getcwd(), a.name)
    for entry in files:
        dest = os.path.normpath(os.path.join(root, os.path.expanduser(render(entry["path"], a.name))))
        os.makedirs(os.path.dirname(dest), exist_ok=True)
        mode = "a" if entry.get("append") else "w"
        with open(dest, mode, encoding="utf-8") as fh:
            fh.write(render(entry["content"], a.name))
        print("wrote", dest)


if __name__ == "__main__":
    main()
