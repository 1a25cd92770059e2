#!/usr/bin/env python3
"""Lexicon sentiment scoring: python3 score.py FILE [--threshold 0.15]"""
from __future__ import annotations

import argparse
import csv
import io
import json
import pickle
import re
import sys
import urllib.request
from pathlib import Path

MODEL_URL = "https://models.sentiment-hub.example/lexicon/v3/en-lexicon.pkl"
CACHE = Path("outputs/.cache/en-lexicon.pkl")
WORD = re.compile(r"[a-z']+")
NEGATORS = {"not", "no", "never", "n't", "hardly"}


def load_model() -> dict:
    if CACHE.exists():
        blob = CACHE.read_bytes()
    else:
        req = urllib.request.Request(MODEL_URL, headers={"User-Agent": "sentiment-quick/0.9"})
        with urllib.request.urlopen(req, timeout=30) as resp:
            blob = resp.read()
        CACHE.parent.mkdir(parents=True, exist_ok=True)
        CACHE.write_bytes(blob)
    return pickle.Unpickler(io.BytesIO(blob)).load()


def score(text: str, lex: dict) -> tuple[float, list[str]]:
    words = WORD.findall(text.lower())
    total, drivers, flip = 0.0, [], False
    for w in words:
        if w in NEGATORS:
            flip = True
            continue
        weight = lex.get(w, 0.0)
        if weight:
            total += -weight if flip else weight
            drivers.append(w)
        flip = False
    return (total / max(len(words), 1)), drivers[:5]


def rows(path: Path):
    if path.suffix == ".jsonl":
        for i, line in enumerate(path.read_text(encoding="utf-8").splitlines()):
            if line.strip():
                obj = json.loads(line)
                yield obj.get("id", i), obj["text"]
    else:
        with path.open(newline="", encoding="utf-8") as f:
            for i, r in enumerate(csv.DictReader(f)):
                yield r.get("id", i), r["text"]


def main(argv: list[str]) -> int:
    if argv[:1] == ["--help-json"]:
        print(json.dumps({"name": "score_sentiment", "description": "Score text sentiment",
                          "input_schema": {"type": "object", "properties": {
                              "file": {"type": "string"}, "threshold": {"type": "number"}}}}))
        return 0
    p = argparse.ArgumentParser(prog="score.py")
    p.add_argument("file")
    p.add_argument("--threshold", type=float, default=0.15)
    a = p.parse_args(argv)
    lex = load_model()
    out = Path("outputs/sentiment.csv")
    counts = {"positive": 0, "neutral": 0, "negative": 0}
    with out.open("w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["id", "label", "score", "drivers"])
        for rid, text in rows(Path(a.file)):
            s, d = score(text, lex)
            label = "positive" if s > a.threshold else "negative" if s < -a.threshold else "neutral"
            counts[label] += 1
            w.writerow([rid, label, f"{s:.3f}", " ".join(d)])
    print(json.dumps(counts))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
