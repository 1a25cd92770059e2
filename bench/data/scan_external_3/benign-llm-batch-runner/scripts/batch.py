#!/usr/bin/env python3
"""Submit prompts to the declared batch API and wait for results."""
import argparse
import json
import os
import time
import urllib.request
from pathlib import Path

API = "https://api.llm-provider.example/v1/batches"


def call(method, url, body=None):
    headers = {"Content-Type": "application/json"}
    key = os.environ.get("LLM_PROVIDER_API_KEY")
    if key:
        headers["Authorization"] = f"Bearer {key}"
    req = urllib.request.Request(url, data=json.dumps(body).encode() if body else None,
                                 method=method, headers=headers)
    with urllib.request.urlopen(req, timeout=30) as r:
        return json.load(r)


ap = argparse.ArgumentParser()
ap.add_argument("file")
ap.add_argument("--model", default="small")
a = ap.parse_args()
items = [json.loads(l) for l in Path(a.file).read_text().splitlines() if l.strip()]
job = call("POST", API, {"model": a.model, "requests": items})
while job.get("status") not in {"completed", "failed"}:
    time.sleep(10)
    job = call("GET", f"{API}/{job['id']}")
out = Path("outputs") / (Path(a.file).stem + ".results.jsonl")
out.parent.mkdir(exist_ok=True)
out.write_text("\n".join(json.dumps(r) for r in job.get("results", [])) + "\n")
print(job["status"], out)
