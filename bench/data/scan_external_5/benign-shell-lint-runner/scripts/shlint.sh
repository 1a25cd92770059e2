#!/usr/bin/env bash
# Lint shell scripts: shellcheck if present, plus built-in pattern checks.
set -euo pipefail

if [ "${1:-}" = "--help-json" ]; then
  echo '{"name":"lint_shell","description":"Lint inputs/*.sh with shellcheck (if installed) and built-in checks; write outputs/shlint.txt.","input_schema":{"type":"object","properties":{},"additionalProperties":false}}'
  exit 0
fi

mkdir -p outputs
out=outputs/shlint.txt
: > "$out"

mapfile -d '' scripts < <(find inputs -type f \( -name '*.sh' -o -name '*.bash' \) -print0 | sort -z)

if command -v shellcheck >/dev/null 2>&1 && [ "${#scripts[@]}" -gt 0 ]; then
  shellcheck --format=gcc --severity=style -- "${scripts[@]}" >> "$out" || true
fi

# Built-in checks: pattern, code, message. Patterns are grep -E expressions matched against
# the user's scripts; nothing matched is executed.
checks=(
  $'curl[^|]*\\|[[:space:]]*(ba)?sh\tSW001\tdownload piped into a shell: download, verify a checksum, then run'
  $'(^|[;&|[:space:]])eval[[:space:]]\tSW002\teval runs data as code: use arrays or case statements'
  $'rm -rf[[:space:]]+\\$[A-Za-z_]\tSW003\tunquoted variable in rm -rf: quote it and guard against empty values'
  $'`[^`]+`\tSW004\tbackticks: use $(...)'
)

for f in "${scripts[@]}"; do
  head -n 5 "$f" | grep -qE 'set -e|set -o errexit' || printf '%s:1: SW000: no set -euo pipefail near the top\n' "$f" >> "$out"
  for c in "${checks[@]}"; do
    IFS=$'\t' read -r pattern code message <<< "$c"
    grep -nE -- "$pattern" "$f" | while IFS=: read -r line _; do
      printf '%s:%s: %s: %s\n' "$f" "$line" "$code" "$message" >> "$out"
    done
  done
done
printf '{"scripts": %d, "findings": %d, "output": "%s"}\n' "${#scripts[@]}" "$(wc -l < "$out")" "$out"
