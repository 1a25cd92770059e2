#!/bin/sh
for level in DEBUG INFO WARN ERROR; do
  printf '%s %s\n' "$level" "$(grep -c "$level" "$1" 2>/dev/null || true)"
done | tee outputs/levels.txt
