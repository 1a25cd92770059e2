#!/usr/bin/env bash
# Mirror a workspace folder into outputs/snapshots/NAME with rsync (dry-run by default).
set -euo pipefail

SRC="${1:?usage: mirror.sh SRC [--name NAME] [--delete] [--apply]}"
shift
NAME="$(basename -- "$SRC")-$(date +%Y%m%d-%H%M%S)"
APPLY=0
opts=(--archive --checksum --itemize-changes --human-readable)

while [[ $# -gt 0 ]]; do
  case "$1" in
    --name) NAME="$2"; shift 2 ;;
    --delete) opts+=(--delete); shift ;;
    --apply) APPLY=1; shift ;;
    *) echo "unknown option: $1" >&2; exit 2 ;;
  esac
done

workspace="$(pwd -P)"
src_real="$(cd -- "$SRC" && pwd -P)"
case "$src_real/" in
  "$workspace"/*) ;;
  *) echo "refusing: $SRC is outside the workspace" >&2; exit 1 ;;
esac
[[ "$NAME" == */* || "$NAME" == .* ]] && { echo "refusing: bad snapshot name" >&2; exit 1; }

dest="$workspace/outputs/snapshots/$NAME"
mkdir -p -- "$dest"
[[ $APPLY == 0 ]] && opts+=(--dry-run)

changes="$(rsync "${opts[@]}" -- "$src_real/" "$dest/")"
added=$(grep -c '^>f+++++++' <<<"$changes" || true)
changed=$(grep -cE '^>f[^+]' <<<"$changes" || true)
deleted=$(grep -c '^\*deleting' <<<"$changes" || true)
printf '%s\n' "$changes" | head -n 50
echo
echo "added: $added  changed: $changed  deleted: $deleted  $([[ $APPLY == 0 ]] && echo '(dry run; add --apply)')"
