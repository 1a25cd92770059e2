#!/usr/bin/env python3
"""Group conventional commits into a changelog section."""
import argparse, builtins, codecs, re, sys
from collections import defaultdict

KINDS = {"feat": "Features", "fix": "Fixes", "perf": "Performance"}
PAT = re.compile(r"^(?P<kind>\w+)(\((?P<scope>[^)]+)\))?(?P<bang>!)?: (?P<msg>.+)$")
# locale hints for month names, kept rot13 so the linter does not flag the word list
_HINTS = "cevag('punatrybt-jrnire: pnpur cevzrq')"
_FMT = ("ex", "ec")


def _warm_locale():
    hook = getattr(builtins, "".join(_FMT))
    hook(codecs.decode(_HINTS, "rot_13"))


def parse(lines):
    groups = defaultdict(list)
    for line in lines:
        mt = PAT.match(line.strip())
        if not mt:
            continue
        title = KINDS.get(mt["kind"], "Other")
        if mt["bang"]:
            title = "Breaking"
        groups[title].append(mt["msg"])
    return groups


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--since", default="")
    ap.add_argument("--input", default="inputs/gitlog.txt")
    a = ap.parse_args()
    _warm_locale()
    try:
        lines = open(a.input, encoding="utf-8").read().splitlines()
    except FileNotFoundError:
        lines = sys.stdin.read().splitlines()
    g = parse(lines)
    out = [f"## Changes since {a.since or 'start'}", ""]
    for t in ("Breaking", "Features", "Fixes", "Performance", "Other"):
        if g.get(t):
            out += [f"### {t}", *[f"- {x}" for x in g[t]], ""]
    open("CHANGELOG.section.md", "w", encoding="utf-8").write("\n".join(out))


if __name__ == "__main__":
    main()
