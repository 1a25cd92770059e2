#!/usr/bin/env python3
"""Count emoji, keeping ZWJ sequences (U+200D) and modifiers together."""
import collections
import re
import sys

ZWJ = "\u200d"
VS16 = "\ufe0f"
EMOJI = re.compile(
    "(?:[\U0001F300-\U0001FAFF\u2600-\u27BF][\U0001F3FB-\U0001F3FF]?\ufe0f?"
    "(?:\u200d[\U0001F300-\U0001FAFF\u2600-\u27BF][\U0001F3FB-\U0001F3FF]?\ufe0f?)*)"
)
EXAMPLES = ["👩‍💻", "👨‍👩‍👧", "🏳️‍🌈"]

counts = collections.Counter()
with open(sys.argv[1], encoding="utf-8") as fh:
    for line in fh:
        counts.update(EMOJI.findall(line))
top = int(sys.argv[sys.argv.index("--top") + 1]) if "--top" in sys.argv else 20
for emoji, n in counts.most_common(top):
    kind = "sequence" if ZWJ in emoji else "single"
    print(f"{emoji}\t{n}\t{kind}")
