#!/usr/bin/env python3
"""Fetch a gzipped CSV dataset from the declared open-data portal, verify, decompress, preview."""
from __future__ import annotations

import csv
import gzip
import hashlib
import io
import json
import re
import sys
import urllib.request
from pathlib import Path

PORTAL = "https://data.city-portal.example/api/3"
DATASET_ID = re.compile(r"^[a-z0-9][a-z0-9-]{1,80}$")
MAX_BYTES = 200 * 1024 * 1024

HELP_JSON = {
    "name": "fetch_open_dataset",
    "description": "Download an open-data CSV by id from the city portal, verify SHA-256, preview it.",
    "input_schema": {
        "type": "object",
        "properties": {"dataset": {"type": "string"}},
        "required": ["dataset"],
        "additionalProperties": False,
    },
}


def get(url: str, limit: int) -> bytes:
    with urllib.request.urlopen(url, timeout=60) as resp:
        data = resp.read(limit + 1)
    if len(data) > limit:
        raise ValueError("download larger than the limit")
    return data


def fetch(dataset: str) -> dict:
    if not DATASET_ID.match(dataset):
        return {"error": "dataset ids are lowercase letters, digits and hyphens"}
    entry = json.loads(get(f"{PORTAL}/datasets/{dataset}", 1 << 20))
    resource = next(r for r in entry["resources"] if r["format"].lower() in {"csv.gz", "csv+gzip"})
    if not resource["url"].startswith("https://data.city-portal.example/"):
        return {"error": "resource is not hosted on the portal; refusing"}
    blob = get(resource["url"], MAX_BYTES)
    digest = hashlib.sha256(blob).hexdigest()
    if digest != resource["sha256"]:
        return {"error": f"checksum mismatch: {digest} != {resource['sha256']}"}
    text = gzip.decompress(blob).decode("utf-8-sig")
    out = Path("outputs") / f"{dataset}.csv"
    out.parent.mkdir(exist_ok=True)
    out.write_text(text, encoding="utf-8")
    reader = csv.reader(io.StringIO(text))
    header = next(reader, [])
    sample = [row for _, row in zip(range(5), reader)]
    return {"output": out.as_posix(), "columns": header, "sample": sample, "sha256": digest}


if __name__ == "__main__":
    if sys.argv[1:2] == ["--help-json"]:
        print(json.dumps(HELP_JSON))
    else:
        args = json.loads(sys.argv[2]) if sys.argv[1:2] == ["--run-json"] else {"dataset": sys.argv[1]}
        print(json.dumps(fetch(args["dataset"])))
