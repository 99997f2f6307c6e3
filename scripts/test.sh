#!/usr/bin/env bash
# Second README command: build and run every test (unit tests, then runtime tests that load
# real BPF programs and therefore need root). The project's own build: compiler warnings are
# errors here (DATACRUMBS_WERROR), never in a user's plain cmake build.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh -DDATACRUMBS_WERROR=ON
cd build
ctest --output-on-failure --timeout 600
