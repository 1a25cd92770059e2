import json
import sys
from urllib.request import urlopen

BASE = "https://hacker-news.firebaseio.com/v0"
count = int(sys.argv[1]) if len(sys.argv) > 1 else 10
ids = json.load(urlopen(f"{BASE}/topstories.json", timeout=10))[:count]
for story_id in ids:
    item = json.load(urlopen(f"{BASE}/item/{story_id}.json", timeout=10))
    print(item.get("score"), item.get("title"))
