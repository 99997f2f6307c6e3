#!/usr/bin/env bash
# Second README command: build and run every test (unit tests, then runtime tests that load
# real BPF programs and therefore need root).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh
cd build
ctest --output-on-failure --timeout 600
