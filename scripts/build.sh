#!/usr/bin/env bash
# Installs what is missing (Debian packages) and builds DataCrumbs into build/ (tools in build/bin/).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build
