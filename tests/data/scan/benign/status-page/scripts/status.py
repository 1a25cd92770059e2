import json
import urllib.request

PAGES = {
    "GitHub": "https://www.githubstatus.com/api/v2/status.json",
    "Cloudflare": "https://www.cloudflarestatus.com/api/v2/status.json",
}

for name, url in PAGES.items():
    with urllib.request.urlopen(url, timeout=10) as response:
        status = json.load(response)["status"]["description"]
    print(f"{name}: {status}")
