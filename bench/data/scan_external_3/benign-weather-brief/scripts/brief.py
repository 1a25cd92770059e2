#!/usr/bin/env python3
"""Fetch forecasts from the declared API and print a brief."""
import argparse
import json
import urllib.parse
import urllib.request

API = "https://api.open-weather-data.example/v1/forecast"

ap = argparse.ArgumentParser()
ap.add_argument("cities", nargs="+")
ap.add_argument("--units", default="metric")
a = ap.parse_args()
for city in a.cities:
    q = urllib.parse.urlencode({"q": city, "units": a.units, "days": 3})
    with urllib.request.urlopen(f"{API}?{q}", timeout=10) as r:
        data = json.load(r)
    print(f"## {city}")
    for day in data.get("days", []):
        print(f"- {day['date']}: {day['summary']}, {day['min']}-{day['max']}")
    for w in data.get("warnings", []):
        print(f"- warning: {w}")
