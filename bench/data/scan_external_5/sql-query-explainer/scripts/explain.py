#!/usr/bin/env python3
"""Outline a SQL query's clauses in logical execution order."""
from __future__ import annotations

import json
import re
import sys

ORDER = ["FROM", "JOIN", "WHERE", "GROUP BY", "HAVING", "SELECT", "ORDER BY", "LIMIT"]
CLAUSE = re.compile(r"\b(SELECT|FROM|(?:LEFT |RIGHT |INNER |FULL )?JOIN|WHERE|GROUP BY|HAVING|ORDER BY|LIMIT)\b", re.I)

HELP_JSON = {
    "name": "outline_sql",
    "description": "Split a SQL query into clauses, listed in logical execution order, with simple risk hints.",
    "input_schema": {
        "type": "object",
        "properties": {"query": {"type": "string"}},
        "required": ["query"],
        "additionalProperties": False,
    },
}


def outline(query: str) -> dict[str, object]:
    parts = CLAUSE.split(query)
    clauses = []
    for i in range(1, len(parts) - 1, 2):
        key = parts[i].upper().strip()
        clauses.append({"clause": "JOIN" if key.endswith("JOIN") else key, "text": parts[i + 1].strip()})
    clauses.sort(key=lambda c: ORDER.index(c["clause"]) if c["clause"] in ORDER else 99)
    risks = []
    if re.search(r"SELECT\s+\*", query, re.I):
        risks.append("SELECT * reads every column")
    if re.search(r"WHERE\s+\w+\(", query, re.I):
        risks.append("function on a column in WHERE may prevent index use")
    if re.search(r"LIKE\s+'%", query, re.I):
        risks.append("leading wildcard LIKE cannot use a b-tree index")
    return {"clauses": clauses, "risks": risks}


if __name__ == "__main__":
    if sys.argv[1:2] == ["--help-json"]:
        print(json.dumps(HELP_JSON))
    elif sys.argv[1:2] == ["--run-json"]:
        print(json.dumps(outline(json.loads(sys.argv[2])["query"])))
    else:
        print(json.dumps(outline(" ".join(sys.argv[1:]))))
