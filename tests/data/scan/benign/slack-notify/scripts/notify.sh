#!/usr/bin/env bash
set -euo pipefail
message="${1:?message required}"
payload=$(printf '{"text": "%s"}' "$message")
curl -sS -X POST -H 'Content-Type: application/json' -d "$payload" "$SLACK_WEBHOOK_URL" >/dev/null
echo "sent"
