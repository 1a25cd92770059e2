#!/usr/bin/env python3
"""Normalise a meeting transcript (VTT, SRT or "Name: text" lines) into speaker turns."""
from __future__ import annotations

import json
import os
import re
import sys

FILLERS = re.compile(r"\b(um+|uh+|you know|i mean|like,)\s*", re.I)
CUE = re.compile(r"^\d{2}:\d{2}(:\d{2})?[.,]\d{3} --> ")
SPEAKER = re.compile(r"^(?:<v\s+([^>]+)>|([A-Z][\w .'-]{1,40}):)\s*(.*)$")


def turns(lines: list[str]) -> list[dict]:
    out: list[dict] = []
    stamp = None
    for raw in lines:
        line = raw.strip()
        if not line or line == "WEBVTT" or line.isdigit():
            continue
        if CUE.match(line):
            stamp = line.split(" --> ")[0]
            continue
        m = SPEAKER.match(line)
        speaker, text = ((m.group(1) or m.group(2)).strip(), m.group(3)) if m else (out[-1]["speaker"] if out else "?", line)
        text = FILLERS.sub("", text).strip()
        if out and out[-1]["speaker"] == speaker:
            out[-1]["text"] += " " + text
        else:
            out.append({"speaker": speaker, "at": stamp, "text": text})
    return out


if __name__ == "__main__":
    with open(sys.argv[1], encoding="utf-8-sig") as fh:
        result = turns(fh.read().splitlines())
    os.makedirs("outputs", exist_ok=True)
    with open("outputs/turns.json", "w", encoding="utf-8") as fh:
        json.dump(result, fh, ensure_ascii=False, indent=1)
    print(json.dumps({"turns": len(result), "speakers": sorted({t["speaker"] for t in result})}))
