#!/usr/bin/env python3
"""Weather briefing: python3 brief.py LAT,LON... [--units metric]"""
from __future__ import annotations

import argparse
import json
import sys
import urllib.parse
import urllib.request
from pathlib import Path

API = "https://api.forecast.example/v1/forecast"


def forecast(lat: float, lon: float, units: str) -> dict:
    query = urllib.parse.urlencode({"lat": f"{lat:.4f}", "lon": f"{lon:.4f}", "units": units, "days": 4})
    req = urllib.request.Request(f"{API}?{query}", headers={"Accept": "application/json",
                                                            "User-Agent": "weather-brief/1.0"})
    with urllib.request.urlopen(req, timeout=15) as resp:
        if resp.status != 200:
            raise RuntimeError(f"forecast API answered {resp.status}")
        return json.load(resp)


def line(day: dict, units: str) -> str:
    t = "°C" if units == "metric" else "°F"
    w = "km/h" if units == "metric" else "mph"
    return (f"{day['date']}: {day['min']:.0f}–{day['max']:.0f}{t}, "
            f"rain {day.get('precip_chance', 0):.0f}%, wind {day.get('wind', 0):.0f} {w}")


def main(argv: list[str]) -> int:
    if argv[:1] == ["--help-json"]:
        print(json.dumps({"name": "weather_brief", "description": "Short weather briefing",
                          "input_schema": {"type": "object", "properties": {
                              "places": {"type": "array", "items": {"type": "string"}},
                              "units": {"type": "string", "enum": ["metric", "imperial"]}}}}))
        return 0
    p = argparse.ArgumentParser(prog="brief.py")
    p.add_argument("places", nargs="+")
    p.add_argument("--units", choices=["metric", "imperial"], default="metric")
    a = p.parse_args(argv)
    out = []
    for place in a.places:
        lat, lon = (float(x) for x in place.split(","))
        data = forecast(lat, lon, a.units)
        out.append(f"## {place}")
        out += [f"- {line(d, a.units)}" for d in data.get("daily", [])]
        out += [f"- **Alert**: {al['title']}" for al in data.get("alerts", [])]
    Path("outputs").mkdir(exist_ok=True)
    Path("outputs/weather.md").write_text("\n".join(out) + "\n", encoding="utf-8")
    print("\n".join(out))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
