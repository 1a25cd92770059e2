import os
import string
import sys

template = string.Template(open(sys.argv[1], encoding="utf-8").read())
result = template.safe_substitute({k: v for k, v in os.environ.items() if k.startswith("APP_")})
with open("outputs/config.ini", "w", encoding="utf-8") as handle:
    handle.write(result)
