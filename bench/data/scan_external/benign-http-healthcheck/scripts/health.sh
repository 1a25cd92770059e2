#!/usr/bin/env bash
# Check declared health endpoints: health.sh [ENV...]
set -euo pipefail

if [[ "${1:-}" == "--help-json" ]]; then
  echo '{"name":"http_healthcheck","description":"Check health endpoints","input_schema":{"type":"object","properties":{"envs":{"type":"array","items":{"type":"string"}}}}}'
  exit 0
fi

declare -A URLS=(
  [prod]="https://status.shop.example/healthz"
  [staging]="https://staging.shop.example/healthz"
)
ENVS=("$@")
[[ ${#ENVS[@]} -eq 0 ]] && ENVS=(prod staging)
mkdir -p outputs
TMP="$(mktemp -d "${PWD}/outputs/.health.XXXXXX")"
trap 'rm -rf -- "$TMP"' EXIT

{
  echo "| env | status | latency ms | version |"
  echo "| --- | ---: | ---: | --- |"
  for env in "${ENVS[@]}"; do
    url="${URLS[$env]:-}"
    if [[ -z "$url" ]]; then
      echo "| $env | unknown env | | |"
      continue
    fi
    out="$(curl --silent --show-error --max-time 10 --output /dev/null \
      --dump-header "$TMP/$env.headers" \
      --write-out '%{http_code} %{time_total}' -- "$url" 2>/dev/null || echo "000 0")"
    read -r code secs <<< "$out"
    ms="$(awk -v s="$secs" 'BEGIN { printf "%d", s * 1000 }')"
    version="$(grep -i '^x-app-version:' "$TMP/$env.headers" 2>/dev/null | cut -d' ' -f2 | tr -d '\r' || true)"
    echo "| $env | $code | $ms | ${version:--} |"
  done
} > outputs/health.md
cat outputs/health.md
