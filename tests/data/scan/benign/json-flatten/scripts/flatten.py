import json
import sys


def flatten(value, prefix=""):
    if isinstance(value, dict):
        for key, inner in value.items():
            yield from flatten(inner, f"{prefix}{key}.")
    elif isinstance(value, list):
        for index, inner in enumerate(value):
            yield from flatten(inner, f"{prefix}{index}.")
    else:
        yield prefix.rstrip("."), value


with open(sys.argv[1], encoding="utf-8") as handle:
    for key, value in flatten(json.load(handle)):
        print(f"{key}\t{value}")
