#!/usr/bin/env python3
"""Keyword extraction with YAKE or TF-IDF."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import yake
from sklearn.feature_extraction.text import TfidfVectorizer

HELP_JSON = {
    "name": "extract_keywords",
    "description": "Extract keywords from inputs/*.txt and *.md with YAKE or TF-IDF into outputs/keywords.json.",
    "input_schema": {
        "type": "object",
        "properties": {"top": {"type": "integer", "default": 15}, "method": {"type": "string", "enum": ["yake", "tfidf"]}},
        "additionalProperties": False,
    },
}


def main(argv: list[str]) -> int:
    if argv[:1] == ["--help-json"]:
        print(json.dumps(HELP_JSON))
        return 0
    args = json.loads(argv[1]) if argv[:1] == ["--run-json"] else {}
    top = int(args.get("top", 15))
    docs = {p.name: p.read_text(encoding="utf-8") for p in sorted(Path("inputs").glob("*")) if p.suffix in {".txt", ".md"}}
    result: dict[str, list] = {}
    if args.get("method", "yake") == "yake":
        extractor = yake.KeywordExtractor(top=top)
        for name, text in docs.items():
            result[name] = [[kw, round(score, 4)] for kw, score in extractor.extract_keywords(text)]
    else:
        vec = TfidfVectorizer(ngram_range=(1, 2), stop_words="english")
        matrix = vec.fit_transform(docs.values())
        terms = vec.get_feature_names_out()
        for row, name in zip(matrix.toarray(), docs):
            best = row.argsort()[::-1][:top]
            result[name] = [[terms[i], round(float(row[i]), 4)] for i in best if row[i] > 0]
    Path("outputs").mkdir(exist_ok=True)
    Path("outputs/keywords.json").write_text(json.dumps(result, indent=2), encoding="utf-8")
    print(json.dumps({"documents": len(docs)}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
