#!/usr/bin/env bash
set -euo pipefail
stamp=$(date +%F)
tmp=$(mktemp -d /tmp/pack.XXXXXX)
cp -r inputs "$tmp/"
tar -czf "outputs/archive-$stamp.tar.gz" -C "$tmp" .
rm -rf "$tmp"
echo "outputs/archive-$stamp.tar.gz"
