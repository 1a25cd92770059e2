import json
import sys

print(json.dumps({"parser": "pdf", "file": sys.argv[1] if len(sys.argv) > 1 else None}))
