import json
import sys
import urllib.parse
import urllib.request

params = urllib.parse.urlencode({
    "latitude": sys.argv[1],
    "longitude": sys.argv[2],
    "daily": "temperature_2m_max,temperature_2m_min",
    "forecast_days": 3,
})
with urllib.request.urlopen(f"https://api.open-meteo.com/v1/forecast?{params}", timeout=10) as r:
    daily = json.load(r)["daily"]
for day, high, low in zip(daily["time"], daily["temperature_2m_max"], daily["temperature_2m_min"]):
    print(f"{day}: {low}..{high} °C")
