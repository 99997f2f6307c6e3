#!/usr/bin/env bash
# Builds the whole tree (BPF programs, tools, unit and runtime tests) with one CMake build type,
# so a user's Release, Debug or MinSizeRel build is known to build: ctest `release_build` runs it
# for Release with the project's -Werror setting; docs/reliability.md lists the others.
# Usage: check-build-type.sh SOURCE_DIR BUILD_DIR BUILD_TYPE [CMAKE_ARGS...]  (the build dir is
# kept, so a rerun rebuilds only what changed). Its output goes to BUILD_DIR/build.log, shown
# only when the build fails (ctest keeps the tail of what a test prints).
set -euo pipefail
src=$1 dir=$2 type=$3
shift 3
mkdir -p "$dir"
if ! cmake -S "$src" -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE="$type" "$@" >"$dir/configure.log" 2>&1; then
  cat "$dir/configure.log"
  echo "check-build-type: configuring a $type build failed (above)"
  exit 1
fi
start=$SECONDS
if ! cmake --build "$dir" >"$dir/build.log" 2>&1; then
  grep -E -B2 -A12 'error|warning' "$dir/build.log" | tail -80
  echo "check-build-type: the $type build failed (above; log: $dir/build.log)"
  exit 1
fi
targets=$(ninja -C "$dir" -t targets all | grep -c 'bin/' || true)
echo "check-build-type: $type built clean in $((SECONDS - start)) s ($targets targets under bin/; $*)"
