#!/usr/bin/env python3
"""Check a multilingual glossary and UI strings: consistency, coverage, direction marks."""
from __future__ import annotations

import csv
import json
import sys
import unicodedata
from collections import defaultdict
from pathlib import Path

RTL_LANGS = {"ar", "he", "fa", "ur"}
MARKS = {"\u200e": "LRM", "\u200f": "RLM", "\u061c": "ALM"}
ISOLATES_OPEN = {"\u2066", "\u2067", "\u2068"}
ISOLATE_CLOSE = "\u2069"

HELP_JSON = {
    "name": "check_glossary",
    "description": "Check inputs/glossary.csv and inputs/strings/*.json: untranslated, inconsistent, unbalanced direction isolates, length.",
    "input_schema": {"type": "object", "properties": {}, "additionalProperties": False},
}


def graphemes(text: str) -> int:
    """Approximate user-perceived characters: joiners and combining marks do not start one."""
    count, join_next = 0, False
    for ch in text:
        if ch == "\u200d":
            join_next = True
            continue
        if unicodedata.combining(ch) or ch in "\ufe0f\ufe0e" or 0x1F3FB <= ord(ch) <= 0x1F3FF:
            continue
        if not join_next:
            count += 1
        join_next = False
    return count


def unbalanced_isolates(text: str) -> bool:
    depth = 0
    for ch in text:
        if ch in ISOLATES_OPEN:
            depth += 1
        elif ch == ISOLATE_CLOSE:
            depth -= 1
            if depth < 0:
                return True
    return depth != 0


def main(argv: list[str]) -> int:
    if argv[:1] == ["--help-json"]:
        print(json.dumps(HELP_JSON))
        return 0
    glossary: dict[str, dict[str, set[str]]] = defaultdict(lambda: defaultdict(set))
    with open("inputs/glossary.csv", encoding="utf-8") as fh:
        for row in csv.DictReader(fh):
            glossary[row["term"]][row["lang"]].add(unicodedata.normalize("NFC", row["translation"]))
    problems = []
    for term, langs in glossary.items():
        for lang, options in langs.items():
            if len(options) > 1:
                problems.append({"term": term, "lang": lang, "kind": "inconsistent", "options": sorted(options)})
    base: dict[str, str] = {}
    strings_dir = Path("inputs/strings")
    files = sorted(strings_dir.glob("*.json")) if strings_dir.is_dir() else []
    for path in files:
        if path.stem == "en":
            base = json.loads(path.read_text(encoding="utf-8"))
    for path in files:
        lang = path.stem
        data = json.loads(path.read_text(encoding="utf-8"))
        for key, text in data.items():
            if lang != "en" and text == base.get(key) and len(text) > 3:
                problems.append({"key": key, "lang": lang, "kind": "untranslated"})
            if unbalanced_isolates(text):
                problems.append({"key": key, "lang": lang, "kind": "direction"})
            if key in base and lang == "de" and graphemes(text) > 1.4 * max(graphemes(base[key]), 1):
                problems.append({"key": key, "lang": lang, "kind": "length"})
            if lang in RTL_LANGS and any(m in text for m in MARKS) and not any("\u0590" <= c <= "\u08ff" for c in text):
                problems.append({"key": key, "lang": lang, "kind": "direction-mark-without-rtl-text"})
    Path("outputs").mkdir(exist_ok=True)
    Path("outputs/glossary-report.json").write_text(json.dumps(problems, ensure_ascii=False, indent=2), encoding="utf-8")
    print(json.dumps({"terms": len(glossary), "problems": len(problems)}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
