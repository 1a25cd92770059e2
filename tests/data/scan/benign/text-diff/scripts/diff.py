import difflib
import sys

ignore_space = "-w" in sys.argv
paths = [a for a in sys.argv[1:] if a != "-w"]
old, new = (open(p, encoding="utf-8").read().splitlines() for p in paths)
if ignore_space:
    old, new = [" ".join(l.split()) for l in old], [" ".join(l.split()) for l in new]
sys.stdout.writelines(line + "\n" for line in difflib.unified_diff(old, new, *paths, lineterm=""))
