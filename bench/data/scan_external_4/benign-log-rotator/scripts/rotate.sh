#!/usr/bin/env bash
set -euo pipefail
dir="${1:-logs}"
keep="${2:-7}"
case "$(realpath "$dir")" in
  "$(pwd)"/*) ;;
  *) echo "refusing: $dir is outside the workspace" >&2; exit 2;;
esac
for log in "$dir"/*.log; do
  [ -e "$log" ] || continue
  for ((i=keep; i>=1; i--)); do
    [ -e "$log.$i.gz" ] && { if [ "$i" -eq "$keep" ]; then rm -f -- "$log.$i.gz"; else mv -- "$log.$i.gz" "$log.$((i+1)).gz"; fi; }
  done
  [ -e "$log.1" ] && gzip -f -- "$log.1" && mv -- "$log.1.gz" "$log.2.gz"
  mv -- "$log" "$log.1"
  : > "$log"
done
find "$dir" -name '*.log.*.gz' -mtime +90 -delete
