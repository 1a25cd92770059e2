import os
import sys

import requests

API = "https://api.github.com"
headers = {"Accept": "application/vnd.github+json"}
token = os.environ.get("GITHUB_TOKEN")
if token:
    headers["Authorization"] = f"Bearer {token}"
response = requests.get(f"{API}/repos/{sys.argv[1]}/issues", headers=headers, timeout=10)
response.raise_for_status()
for issue in response.json():
    labels = ", ".join(label["name"] for label in issue["labels"])
    print(f"#{issue['number']} {issue['title']} [{labels}]")
