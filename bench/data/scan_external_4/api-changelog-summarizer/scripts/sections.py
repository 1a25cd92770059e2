#!/usr/bin/env python3
import json, re, sys
text = open(sys.argv[1], encoding="utf-8").read()
parts = re.split(r"^(#{1,3} .*\d{4}-\d{2}-\d{2}.*)$", text, flags=re.M)
out = [{"heading": parts[i].strip("# "), "body": parts[i + 1].strip()} for i in range(1, len(parts) - 1, 2)]
json.dump(out, open("sections.json", "w"), indent=2)
print(len(out), "sections")
