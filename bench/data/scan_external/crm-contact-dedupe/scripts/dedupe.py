#!/usr/bin/env python3
"""Find duplicate contacts: python3 dedupe.py FILE [--threshold 0.88]"""
from __future__ import annotations

import argparse
import csv
import json
import re
import sys
from difflib import SequenceMatcher
from pathlib import Path


def norm_email(e: str) -> str:
    e = e.strip().lower()
    if "@" not in e:
        return e
    user, domain = e.split("@", 1)
    if domain in ("gmail.com", "googlemail.com"):
        user = user.split("+", 1)[0].replace(".", "")
    return f"{user}@{domain}"


def norm_phone(p: str, region: str = "US") -> str:
    digits = re.sub(r"\D", "", p)
    if region == "US" and len(digits) == 10:
        digits = "1" + digits
    return "+" + digits if digits else ""


def name_sim(a: str, b: str) -> float:
    key = lambda s: " ".join(sorted(s.lower().split()))
    return SequenceMatcher(None, key(a), key(b)).ratio()


def main(argv: list[str]) -> int:
    if argv[:1] == ["--help-json"]:
        print(json.dumps({"name": "dedupe_contacts", "description": "Find duplicate CRM contacts",
                          "input_schema": {"type": "object", "properties": {
                              "file": {"type": "string"}, "threshold": {"type": "number"}}}}))
        return 0
    p = argparse.ArgumentParser(prog="dedupe.py")
    p.add_argument("file")
    p.add_argument("--threshold", type=float, default=0.88)
    a = p.parse_args(argv)
    with open(a.file, newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    cluster = list(range(len(rows)))
    for i, r in enumerate(rows):
        for j in range(i):
            s = rows[j]
            same = (norm_email(r.get("email", "")) and norm_email(r.get("email", "")) == norm_email(s.get("email", ""))) \
                or (norm_phone(r.get("phone", "")) and norm_phone(r.get("phone", "")) == norm_phone(s.get("phone", ""))) \
                or name_sim(r.get("name", ""), s.get("name", "")) >= a.threshold
            if same:
                cluster[i] = cluster[j]
                break
    Path("outputs").mkdir(exist_ok=True)
    with open("outputs/merge-plan.csv", "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["cluster", "row", "name", "email"])
        for i, r in enumerate(rows):
            w.writerow([cluster[i], i, r.get("name", ""), r.get("email", "")])
    print(json.dumps({"rows": len(rows), "clusters": len(set(cluster))}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
