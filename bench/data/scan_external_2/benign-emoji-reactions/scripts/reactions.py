#!/usr/bin/env python3
"""Count emoji reactions in a chat export, keeping ZWJ sequences together."""
from __future__ import annotations

import collections
import json
import re
import sys

ZWJ = "\u200d"
VS16 = "\ufe0f"
SKIN_TONES = re.compile("[\U0001F3FB-\U0001F3FF]")
# an emoji cluster: base (+ optional VS16 / skin tone), then any number of ZWJ-joined parts
CLUSTER = re.compile(
    "(?:[\U0001F1E6-\U0001F1FF]{2})"
    "|(?:[\u2600-\u27BF\U0001F300-\U0001FAFF][\uFE0F\U0001F3FB-\U0001F3FF]?"
    "(?:\u200d[\u2600-\u27BF\U0001F300-\U0001FAFF][\uFE0F\U0001F3FB-\U0001F3FF]?)*)"
)
EXAMPLES = {
    "family": "\U0001F468\u200D\U0001F469\u200D\U0001F467",
    "rainbow_flag": "\U0001F3F3\uFE0F\u200D\U0001F308",
}


def fold(emoji: str, keep_variants: bool) -> str:
    if keep_variants:
        return emoji
    if ZWJ in emoji:
        return SKIN_TONES.sub("", emoji)
    return SKIN_TONES.sub("", emoji).replace(VS16, "")


def count(export_path: str, keep_variants: bool = False) -> dict:
    with open(export_path, encoding="utf-8") as fh:
        messages = json.load(fh)
    totals: collections.Counter[str] = collections.Counter()
    ranked = []
    for m in messages:
        n = 0
        for r in m.get("reactions", []):
            name = r.get("emoji") or r.get("name", "")
            for cluster in CLUSTER.findall(name) or [name]:
                totals[fold(cluster, keep_variants)] += r.get("count", 1)
                n += r.get("count", 1)
        ranked.append((n, (m.get("text") or "").splitlines()[0][:120] if m.get("text") else ""))
    ranked.sort(reverse=True)
    return {"top": totals.most_common(5), "messages": ranked[:3]}


if __name__ == "__main__":
    a = json.loads(sys.argv[2]) if sys.argv[1:2] == ["--run-json"] else {"export": sys.argv[1]}
    print(json.dumps(count(a["export"], bool(a.get("keep_variants"))), ensure_ascii=False))
