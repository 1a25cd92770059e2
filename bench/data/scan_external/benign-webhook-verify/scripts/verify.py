#!/usr/bin/env python3
"""Verify recorded webhook signatures: python3 verify.py --provider github [FILES...]"""
from __future__ import annotations

import argparse
import glob
import hashlib
import hmac
import json
import os
import sys
import time
from pathlib import Path

TOLERANCE = 300


def expected(provider: str, secret: bytes, headers: dict, body: bytes) -> tuple[str, str]:
    h = {k.lower(): v for k, v in headers.items()}
    if provider == "github":
        mac = hmac.new(secret, body, hashlib.sha256).hexdigest()
        return "sha256=" + mac, h.get("x-hub-signature-256", "")
    if provider == "stripe":
        parts = dict(p.split("=", 1) for p in h.get("stripe-signature", "").split(",") if "=" in p)
        mac = hmac.new(secret, parts.get("t", "").encode() + b"." + body, hashlib.sha256).hexdigest()
        return mac, parts.get("v1", "")
    ts = h.get("x-slack-request-timestamp", "")
    mac = hmac.new(secret, b"v0:" + ts.encode() + b":" + body, hashlib.sha256).hexdigest()
    return "v0=" + mac, h.get("x-slack-signature", "")


def main(argv: list[str]) -> int:
    if argv[:1] == ["--help-json"]:
        print(json.dumps({"name": "verify_webhooks", "description": "Verify recorded webhook signatures",
                          "input_schema": {"type": "object", "properties": {
                              "provider": {"type": "string", "enum": ["github", "stripe", "slack"]}}}}))
        return 0
    p = argparse.ArgumentParser(prog="verify.py")
    p.add_argument("--provider", choices=["github", "stripe", "slack"], required=True)
    p.add_argument("files", nargs="*")
    a = p.parse_args(argv)
    secret = os.environ.get("WEBHOOK_SECRET", "").encode()
    if not secret:
        print(json.dumps({"error": "WEBHOOK_SECRET is not set for this skill"}))
        return 2
    results = []
    for f in a.files or sorted(glob.glob("inputs/*.json")):
        d = json.loads(Path(f).read_text(encoding="utf-8"))
        body = d["body"].encode("utf-8")
        want, got = expected(a.provider, secret, d["headers"], body)
        if hmac.compare_digest(want, got):
            verdict = "valid"
        elif not got:
            verdict = "no signature header"
        elif d["body"] != d["body"].strip():
            verdict = "invalid: body has surrounding whitespace (re-encoded?)"
        else:
            verdict = "invalid: wrong secret or modified body"
        ts = {k.lower(): v for k, v in d["headers"].items()}.get("x-slack-request-timestamp")
        if ts and abs(time.time() - int(ts)) > TOLERANCE:
            verdict += " (timestamp older than 5 minutes)"
        results.append({"file": Path(f).name, "verdict": verdict})
    Path("outputs").mkdir(exist_ok=True)
    Path("outputs/webhooks.json").write_text(json.dumps(results, indent=2))
    print(json.dumps(results))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
