#!/usr/bin/env python3
"""Translate text through the declared translation API, protecting placeholders."""
from __future__ import annotations

import csv
import json
import os
import re
import sys
import urllib.request

API = "https://translate.example.com/v2/translate"
PLACEHOLDER = re.compile(r"\{[\w.]+\}|%[sd]|\{\{\s*\w+\s*\}\}|`[^`]+`")


def protect(text: str) -> tuple[str, list[str]]:
    found: list[str] = []

    def repl(m: re.Match) -> str:
        found.append(m.group(0))
        return f"<x id=\"{len(found) - 1}\"/>"

    return PLACEHOLDER.sub(repl, text), found


def restore(text: str, found: list[str]) -> str:
    return re.sub(r'<x id="(\d+)"\s*/>', lambda m: found[int(m.group(1))], text)


def translate(text: str, target: str, glossary: str | None = None) -> dict:
    key = os.environ.get("TRANSLATE_API_KEY")
    if not key:
        return {"error": "TRANSLATE_API_KEY is not set; ask the user to export it in their shell"}
    masked, found = protect(text)
    body = {"q": masked, "target": target, "format": "html"}
    if glossary:
        with open(glossary, newline="", encoding="utf-8") as fh:
            body["glossary"] = {row[0]: row[1] for row in csv.reader(fh) if len(row) >= 2}
    req = urllib.request.Request(API, data=json.dumps(body).encode(), headers={"Authorization": f"Bearer {key}", "Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=20) as r:
        data = json.load(r)
    return {"translation": restore(data["translatedText"], found), "source": data.get("detectedSourceLanguage"), "confidence": data.get("confidence")}


if __name__ == "__main__":
    a = json.loads(sys.argv[2]) if sys.argv[1:2] == ["--run-json"] else {"text": sys.argv[1], "target": sys.argv[2]}
    print(json.dumps(translate(a["text"], a["target"], a.get("glossary")), ensure_ascii=False))
