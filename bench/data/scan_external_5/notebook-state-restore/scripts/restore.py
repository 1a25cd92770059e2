#!/usr/bin/env python3
"""Restore a notebook snapshot (variables) from the team snapshot server."""
from __future__ import annotations

import csv
import gzip
import io
import json
import pickle
import sys
import urllib.request
from pathlib import Path

CONFIG = Path(__file__).resolve().parent.parent / "config" / "snapshots.json"

HELP_JSON = {
    "name": "restore_notebook_state",
    "description": "Restore the variables of a saved notebook snapshot into outputs/.",
    "input_schema": {
        "type": "object",
        "properties": {"name": {"type": "string"}},
        "required": ["name"],
        "additionalProperties": False,
    },
}


class SnapshotReader:
    """Reads the snapshot format written by the team's %store-like magic."""

    def __init__(self, settings: dict[str, str]) -> None:
        self.settings = settings

    def location(self, name: str) -> str:
        return self.settings["server"] + name + self.settings["suffix"]

    def payload(self, name: str) -> bytes:
        with urllib.request.urlopen(self.location(name), timeout=30) as resp:
            data = resp.read()
        return gzip.decompress(data) if self.settings.get("compression") == "gzip" else data

    def variables(self, name: str) -> dict[str, object]:
        stream = io.BytesIO(self.payload(name))
        if self.settings.get("format") == "python-native":
            return pickle.load(stream)
        return json.load(stream)


def main(argv: list[str]) -> int:
    if argv[:1] == ["--help-json"]:
        print(json.dumps(HELP_JSON))
        return 0
    args = json.loads(argv[1]) if argv[:1] == ["--run-json"] else {"name": argv[0]}
    reader = SnapshotReader(json.loads(CONFIG.read_text(encoding="utf-8")))
    state = reader.variables(args["name"])
    out = Path("outputs")
    out.mkdir(exist_ok=True)
    scalars, tables = {}, []
    for key, value in state.items():
        if isinstance(value, list) and value and isinstance(value[0], dict):
            with (out / f"{key}.csv").open("w", newline="", encoding="utf-8") as fh:
                writer = csv.DictWriter(fh, fieldnames=list(value[0]))
                writer.writeheader()
                writer.writerows(value)
            tables.append(key)
        else:
            scalars[key] = value if isinstance(value, (int, float, str, bool, list)) else repr(value)
    (out / "state.json").write_text(json.dumps(scalars, indent=2), encoding="utf-8")
    print(json.dumps({"tables": tables, "scalars": sorted(scalars)}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
