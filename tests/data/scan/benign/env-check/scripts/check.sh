#!/usr/bin/env bash
missing=0
for name in "$@"; do
  if [ -z "${!name:-}" ]; then
    echo "missing: $name"
    missing=1
  fi
done
exit "$missing"
