#!/usr/bin/env python3
import ast, json, sys
import yaml

bad = 0
for f in sys.argv[1:]:
    try:
        src = open(f, encoding="utf-8").read()
        if f.endswith(".py"):
            compile(ast.parse(src, f), f, "exec")
        elif f.endswith(".json"):
            json.loads(src)
        elif f.endswith((".yml", ".yaml")):
            list(yaml.safe_load_all(src))
    except (SyntaxError, ValueError, yaml.YAMLError) as e:
        bad += 1
        print(f"{f}: {e}")
sys.exit(1 if bad else 0)
