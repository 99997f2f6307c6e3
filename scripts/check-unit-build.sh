#!/usr/bin/env bash
# Proves that the unit tests need no BPF toolchain: configures a build with -DDATACRUMBS_BPF=OFF
# and clang, bpftool and the kernel BTF pointed at paths that do not exist (a configuration that
# still looked for them stops), checks that nothing BPF is left in it (no skeleton, no probe
# module, no tool), then builds and runs one module's unit tests.
# Usage: check-unit-build.sh SOURCE_DIR BUILD_DIR [CMAKE_ARGS...]  (the build dir is kept between
# runs, so a rerun rebuilds only what changed)
set -euo pipefail
src=$1 dir=$2
shift 2
missing=/nonexistent/datacrumbs-no-bpf
mkdir -p "$dir"
if ! cmake --fresh -S "$src" -B "$dir" -G Ninja -DDATACRUMBS_BPF=OFF -DBPF_CLANG=$missing/clang \
    -DBPFTOOL=$missing/bpftool -DDATACRUMBS_VMLINUX_BTF=$missing/vmlinux "$@" >"$dir/configure.log" 2>&1; then
  cat "$dir/configure.log"
  echo "check-unit-build: configuring with -DDATACRUMBS_BPF=OFF failed (above)"
  exit 1
fi
targets=$(ninja -C "$dir" -t targets all)
if bpf=$(grep -E '\.skel\.h|\.bpf\.o|vmlinux\.h|datacrumbs_probe|bin/datacrumbs:' <<<"$targets"); then
  echo "$bpf"
  echo "check-unit-build: the -DDATACRUMBS_BPF=OFF build still has BPF targets (above)"
  exit 1
fi
cmake --build "$dir" --target core_unit_tests
"$dir/bin/core_unit_tests" --gtest_brief=1
echo "check-unit-build: configured without the BPF toolchain, built and ran core_unit_tests"
