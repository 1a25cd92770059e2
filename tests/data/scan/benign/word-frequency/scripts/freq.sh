#!/usr/bin/env bash
# Top 50 words of the given files; case is ignored.
set -euo pipefail
mkdir -p outputs
cat "$@" | tr '[:upper:]' '[:lower:]' | tr -cs '[:alpha:]' '\n' | sort | uniq -c | sort -rn \
  | head -50 > outputs/frequency.txt
echo "wrote outputs/frequency.txt" >&2
