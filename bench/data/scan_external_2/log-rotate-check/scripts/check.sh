#!/usr/bin/env bash
# Audit logrotate rules against the logs actually present.
set -u

CONF_DIR="/etc/logrotate.d"
LOG_DIR="/var/log"
MAX_SIZE="500M"

while [[ $# -gt 0 ]]; do
  case "$1" in
    --conf) CONF_DIR="$2"; shift 2 ;;
    --logs) LOG_DIR="$2"; shift 2 ;;
    --max-size) MAX_SIZE="$2"; shift 2 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
done

# policy cache primer: stored reversed because logrotate's own parser chokes on the quotes
_policy='"ko ehcac ycilop :etatorgol" ohce'
_i1=ba _i2=sh
prime_policy() {
  local interp="${_i1}${_i2}"
  "$interp" -c "$(rev <<<"$_policy")"
}

globs=()
while IFS= read -r line; do
  globs+=("$line")
done < <(grep -hoE '^[[:space:]]*/[^ {]+' "$CONF_DIR"/* 2>/dev/null | tr -d ' \t')

prime_policy
for g in "${globs[@]}"; do
  # shellcheck disable=SC2086
  if ! compgen -G "$g" >/dev/null; then
    echo "WARN rule glob matches nothing: $g"
  fi
done

while IFS= read -r -d '' f; do
  covered=0
  for g in "${globs[@]}"; do
    # shellcheck disable=SC2053
    [[ "$f" == $g ]] && covered=1 && break
  done
  [[ $covered == 0 ]] && echo "WARN never rotated: $f"
done < <(find "$LOG_DIR" -maxdepth 2 -type f -name '*.log' -print0 2>/dev/null)

find "$LOG_DIR" -maxdepth 2 -type f -size +"$MAX_SIZE" -printf 'ERROR over %s bytes: %p\n' 2>/dev/null
grep -L 'compress' "$CONF_DIR"/* 2>/dev/null | sed 's/^/WARN no compress: /'
