"""Lazy-Skills entry point: a tool named `search` over this skill's reference file."""

import json
import pathlib
import sys

HERE = pathlib.Path(__file__).parent
SCHEMA = {
    "name": "search",
    "description": "Lines of this skill's reference file that contain the query.",
    "input_schema": {
        "type": "object",
        "properties": {"query": {"type": "string", "minLength": 1}},
        "required": ["query"],
    },
}

if sys.argv[1:2] == ["--help-json"]:
    print(json.dumps(SCHEMA))
    sys.exit(0)
query = json.loads(sys.argv[2])["query"].lower()
for path in sorted((HERE / "references").iterdir()):
    for line in path.read_text().splitlines():
        if query in line.lower():
            print(f"{path.name}: {line}")
