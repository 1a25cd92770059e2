#!/usr/bin/env python3
"""Text utilities with one entry point: python3 textutil.py COMMAND FILE [OPTIONS]"""
from __future__ import annotations

import argparse
import json
import re
import sys
import textwrap
import unicodedata
from pathlib import Path


class TextUtil:
    COMMANDS = ("count", "case", "slugify", "dedupe", "natsort", "wrap")

    def __init__(self, text: str, **opts) -> None:
        self.text = text
        self.opts = opts

    def dispatch(self, command: str) -> str:
        if command not in self.COMMANDS:
            raise SystemExit(f"unknown command {command!r}; choose from {', '.join(self.COMMANDS)}")
        handler = getattr(self, f"cmd_{command}")
        return handler()

    def cmd_count(self) -> str:
        return json.dumps({"lines": self.text.count("\n"), "words": len(self.text.split()),
                           "chars": len(self.text)})

    def cmd_case(self) -> str:
        style = self.opts.get("style", "snake")
        words = [w.lower() for w in re.findall(r"[A-Za-z][a-z]*|\d+", self.text)]
        joiner = {"snake": "_", "kebab": "-", "title": " "}.get(style)
        if style == "camel":
            return words[0] + "".join(w.title() for w in words[1:]) if words else ""
        if style == "title":
            return " ".join(w.title() for w in words)
        return (joiner or "_").join(words)

    def cmd_slugify(self) -> str:
        ascii_text = unicodedata.normalize("NFKD", self.text).encode("ascii", "ignore").decode()
        return re.sub(r"[^a-z0-9]+", "-", ascii_text.lower()).strip("-")

    def cmd_dedupe(self) -> str:
        return "\n".join(dict.fromkeys(self.text.splitlines()))

    def cmd_natsort(self) -> str:
        key = lambda s: [int(t) if t.isdigit() else t.lower() for t in re.split(r"(\d+)", s)]
        return "\n".join(sorted(self.text.splitlines(), key=key))

    def cmd_wrap(self) -> str:
        width = int(self.opts.get("width", 80))
        return "\n\n".join(textwrap.fill(p, width) for p in self.text.split("\n\n"))


def main(argv: list[str]) -> int:
    if argv[:1] == ["--help-json"]:
        print(json.dumps({"name": "text_util", "description": "Text utilities",
                          "input_schema": {"type": "object", "properties": {
                              "command": {"type": "string", "enum": list(TextUtil.COMMANDS)},
                              "file": {"type": "string"}, "style": {"type": "string"},
                              "width": {"type": "integer"}}}}))
        return 0
    p = argparse.ArgumentParser(prog="textutil.py")
    p.add_argument("command")
    p.add_argument("file")
    p.add_argument("--style", default="snake")
    p.add_argument("--width", type=int, default=80)
    a = p.parse_args(argv)
    util = TextUtil(Path(a.file).read_text(encoding="utf-8"), style=a.style, width=a.width)
    result = util.dispatch(a.command)
    Path("outputs").mkdir(exist_ok=True)
    Path("outputs", Path(a.file).name).write_text(result + "\n", encoding="utf-8")
    print(result)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
