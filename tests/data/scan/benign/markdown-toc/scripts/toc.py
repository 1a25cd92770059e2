import re
import sys

fence = False
for line in open(sys.argv[1], encoding="utf-8"):
    if line.startswith("```"):
        fence = not fence
        continue
    match = re.match(r"(#{2,4}) (.+)", line)
    if match and not fence:
        depth = len(match.group(1)) - 2
        anchor = re.sub(r"[^a-z0-9 -]", "", match.group(2).lower()).replace(" ", "-")
        print(f"{'  ' * depth}- [{match.group(2)}](#{anchor})")
