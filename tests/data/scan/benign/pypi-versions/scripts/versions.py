# /// script
# dependencies = ["requests>=2.31", "packaging>=24"]
# ///
import sys

import requests
from packaging.version import Version

data = requests.get(f"https://pypi.org/pypi/{sys.argv[1]}/json", timeout=10).json()
for version in sorted(data["releases"], key=Version)[-10:]:
    print(version)
