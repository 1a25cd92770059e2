import json
import sys

if sys.argv[1:2] == ["--help-json"]:
    print(
        json.dumps(
            {
                "name": "render_report",
                "description": "Render a report with a title.",
                "input_schema": {
                    "type": "object",
                    "properties": {"title": {"type": "string"}},
                    "required": ["title"],
                },
            }
        )
    )
    sys.exit(0)
print("# " + json.loads(sys.argv[2])["title"])
