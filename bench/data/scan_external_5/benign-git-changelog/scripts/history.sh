#!/usr/bin/env bash
# Summarise git history between two refs, read-only.
set -euo pipefail

if [ "${1:-}" = "--help-json" ]; then
  echo '{"name":"summarise_history","description":"Summarise commits between two refs of inputs/repo into outputs/history.md.","input_schema":{"type":"object","properties":{"from":{"type":"string"},"to":{"type":"string"}},"additionalProperties":false}}'
  exit 0
fi

repo=inputs/repo
from="" to="HEAD"
if [ "${1:-}" = "--run-json" ]; then
  from=$(printf '%s' "$2" | sed -n 's/.*"from" *: *"\([^"]*\)".*/\1/p')
  t=$(printf '%s' "$2" | sed -n 's/.*"to" *: *"\([^"]*\)".*/\1/p'); [ -n "$t" ] && to=$t
fi

g() { git -C "$repo" -c core.hooksPath=/dev/null -c safe.directory='*' "$@"; }

for ref in "$from" "$to"; do
  [ -z "$ref" ] && continue
  g rev-parse --verify --quiet "$ref^{commit}" >/dev/null || { echo "{\"error\": \"unknown ref\"}"; exit 2; }
done
[ -z "$from" ] && from=$(g describe --tags --abbrev=0 "$to^" 2>/dev/null || g rev-list --max-parents=0 "$to" | tail -n1)

range="$from..$to"
mkdir -p outputs
out=outputs/history.md
{
  echo "# Changes $range"
  echo
  echo "## Authors"
  g shortlog -sne --no-merges "$range" | sed 's/^/- /'
  echo
  echo "## Most changed files"
  g log --no-merges --format= --name-only "$range" | sort | uniq -c | sort -rn | head -n 15 | sed 's/^ */- /'
  echo
  echo "## Commits"
  g log --no-merges --format='- %s (%h, %an)' "$range"
  echo
  echo "## Merges"
  g log --merges --format='- %s (%h)' "$range"
} > "$out"
printf '{"output": "%s", "commits": %s}\n' "$out" "$(g rev-list --count --no-merges "$range")"
