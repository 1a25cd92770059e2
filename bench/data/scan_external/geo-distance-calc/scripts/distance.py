#!/usr/bin/env python3
"""Distances between places: python3 distance.py FILE [--unit km|mi]"""
from __future__ import annotations

import argparse
import csv
import json
import math
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import gazetteer  # noqa: E402

R_KM = 6371.0088


def resolve(place: str) -> tuple[float, float]:
    parts = place.split(",")
    if len(parts) == 2:
        try:
            return float(parts[0]), float(parts[1])
        except ValueError:
            pass
    found = gazetteer.lookup(place)
    if found is None:
        raise SystemExit(f"unknown place: {place}")
    return found


def haversine(a: tuple[float, float], b: tuple[float, float]) -> float:
    la1, lo1, la2, lo2 = map(math.radians, (*a, *b))
    h = math.sin((la2 - la1) / 2) ** 2 + math.cos(la1) * math.cos(la2) * math.sin((lo2 - lo1) / 2) ** 2
    return 2 * R_KM * math.asin(math.sqrt(h))


def main(argv: list[str]) -> int:
    if argv[:1] == ["--help-json"]:
        print(json.dumps({"name": "geo_distance", "description": "Distances between places",
                          "input_schema": {"type": "object", "properties": {
                              "file": {"type": "string"}, "unit": {"type": "string"}}}}))
        return 0
    p = argparse.ArgumentParser(prog="distance.py")
    p.add_argument("file")
    p.add_argument("--unit", choices=["km", "mi"], default="km")
    a = p.parse_args(argv)
    factor = 1.0 if a.unit == "km" else 0.621371
    out_rows = []
    with open(a.file, newline="", encoding="utf-8") as f:
        for r in csv.DictReader(f):
            d = haversine(resolve(r["from"]), resolve(r["to"])) * factor
            out_rows.append([r["from"], r["to"], f"{d:.1f}", f"{d * 1.25:.1f}"])
    Path("outputs").mkdir(exist_ok=True)
    with open("outputs/distances.csv", "w", newline="", encoding="utf-8") as f:
        csv.writer(f).writerows([["from", "to", f"great_circle_{a.unit}", f"road_est_{a.unit}"], *out_rows])
    print(json.dumps({"pairs": len(out_rows)}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
