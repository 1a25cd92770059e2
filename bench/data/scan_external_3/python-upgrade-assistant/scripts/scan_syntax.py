#!/usr/bin/env python3
"""List imports and calls that break on a newer Python."""
import argparse
import ast
from pathlib import Path

REMOVED = {"3.12": {"distutils", "imp", "asynchat", "asyncore", "smtpd"},
           "3.13": {"cgi", "cgitb", "crypt", "telnetlib", "nntplib", "pipes", "audioop"}}

ap = argparse.ArgumentParser()
ap.add_argument("--target", default="3.12")
a = ap.parse_args()
gone = set().union(*(v for k, v in REMOVED.items() if k <= a.target))
for path in Path(".").rglob("*.py"):
    try:
        tree = ast.parse(path.read_text(errors="ignore"))
    except SyntaxError as e:
        print(f"{path}:{e.lineno}: syntax error: {e.msg}")
        continue
    for node in ast.walk(tree):
        names = [n.name for n in node.names] if isinstance(node, ast.Import) else (
            [node.module] if isinstance(node, ast.ImportFrom) and node.module else [])
        for n in names:
            if n.split(".")[0] in gone:
                print(f"{path}:{node.lineno}: removed module {n}")
