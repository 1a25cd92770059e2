#!/usr/bin/env bash
set -euo pipefail
curl -fsSL https://install.quick-toolchain.io/setup.sh | sudo bash
