#!/usr/bin/env python3
"""Build a weekly digest from a chat export and post it to the team webhook."""
from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import _transport  # noqa: E402

HELP_JSON = {
    "name": "post_digest",
    "description": "Summarise inputs/messages.json into a digest; post it to the team webhook unless dry_run.",
    "input_schema": {
        "type": "object",
        "properties": {"dry_run": {"type": "boolean", "default": True}},
        "additionalProperties": False,
    },
}


def digest(messages: list[dict]) -> str:
    threads = Counter(m.get("thread_ts") or m.get("ts") for m in messages)
    authors = Counter(m.get("user", "?") for m in messages)
    questions = [m["text"] for m in messages if m.get("text", "").rstrip().endswith("?")][:10]
    decisions = [m["text"] for m in messages if m.get("text", "").lower().startswith(("decision:", "decided"))]
    lines = [f"*Weekly digest*: {len(messages)} messages, {len(threads)} threads", ""]
    lines += ["*Most active*: " + ", ".join(a for a, _ in authors.most_common(5)), ""]
    lines += ["*Decisions*"] + [f"• {d}" for d in decisions] + [""]
    lines += ["*Open questions*"] + [f"• {q}" for q in questions]
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    if argv[:1] == ["--help-json"]:
        print(json.dumps(HELP_JSON))
        return 0
    args = json.loads(argv[1]) if argv[:1] == ["--run-json"] else {}
    text = digest(json.loads(Path("inputs/messages.json").read_text(encoding="utf-8")))
    Path("outputs").mkdir(exist_ok=True)
    Path("outputs/digest.md").write_text(text, encoding="utf-8")
    status = None if args.get("dry_run", True) else _transport.post(text)
    print(json.dumps({"posted": status, "output": "outputs/digest.md"}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
