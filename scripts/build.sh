#!/usr/bin/env bash
# Installs what is missing (Debian packages) and builds DataCrumbs into build/ (tools in build/bin/).
# Arguments are added to cmake's configure line, after the defaults they override (scripts/test.sh
# builds with warnings as errors this way); the defaults are given every time, so a tree that
# test.sh configured builds as a user's again.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DDATACRUMBS_WERROR=OFF "$@" >/dev/null
cmake --build build
