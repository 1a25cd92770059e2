import sys

import yaml

for path in sys.argv[1:]:
    with open(path, encoding="utf-8") as handle:
        try:
            yaml.safe_load(handle)
        except yaml.YAMLError as exc:
            print(f"{path}: {exc}")
            sys.exit(1)
print("ok")
