#!/bin/sh
# Write SHA256SUMS for the release artifacts in inputs/.
set -eu

if [ "${1:-}" = "--help-json" ]; then
  echo '{"name":"release_checksums","description":"Write outputs/SHA256SUMS for the release artifacts in inputs/.","input_schema":{"type":"object","properties":{},"additionalProperties":false}}'
  exit 0
fi

mkdir -p outputs
cd inputs
count=0
: > ../outputs/SHA256SUMS
for f in *.whl *.tar.gz *.tgz *.zip; do
  [ -f "$f" ] || continue
  sha256sum -- "$f" >> ../outputs/SHA256SUMS
  count=$((count + 1))
done
cd ..
printf '{"artifacts": %d, "output": "outputs/SHA256SUMS"}\n' "$count"
