#!/usr/bin/env bash
# Fails when a C/C++ source differs from what clang-format (config: .clang-format) would write.
set -euo pipefail
cd "$(dirname "$0")/.."
mapfile -t files < <(find src tests bpf bench -name '*.cpp' -o -name '*.h' -o -name '*.c' | sort)
clang-format --dry-run -Werror "${files[@]}"
echo "clang-format: ${#files[@]} files clean"
