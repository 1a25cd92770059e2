import json
import sys

from jsonschema import Draft202012Validator

schema = json.load(open(sys.argv[1]))
document = json.load(open(sys.argv[2]))
errors = sorted(Draft202012Validator(schema).iter_errors(document), key=lambda e: e.path)
for error in errors:
    print("/".join(map(str, error.path)), error.message)
sys.exit(1 if errors else 0)
