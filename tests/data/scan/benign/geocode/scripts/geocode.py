import sys

import requests

response = requests.get(
    "https://nominatim.openstreetmap.org/search",
    params={"q": " ".join(sys.argv[1:]), "format": "json", "limit": 1},
    headers={"User-Agent": "geocode-skill/1.0"},
    timeout=10,
)
for place in response.json():
    print(place["lat"], place["lon"], place["display_name"])
