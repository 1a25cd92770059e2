import json
import sys

if sys.argv[1:2] == ["--help-json"]:
    print(
        json.dumps(
            {
                "name": "shout",
                "description": "Upper-case a word.",
                "input_schema": {
                    "type": "object",
                    "properties": {"word": {"type": "string"}},
                    "required": ["word"],
                },
            }
        )
    )
    sys.exit(0)
print(json.loads(sys.argv[2])["word"].upper())
