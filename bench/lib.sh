# Shared by the benchmark scripts (sourced, not run): messages, and the built tool they measure.
# shellcheck shell=bash

bench_name="$(basename "${BASH_SOURCE[1]}" .sh)"
die() { echo "$bench_name: $*" >&2; exit 1; }
log() { echo "$bench_name: $*" >&2; }

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
dc="$repo/build/bin/datacrumbs"

# Refuses to run without the built tool or without root (BPF, loop devices).
require_tool_and_root() {
  [[ -x "$dc" ]] || die "$dc not built (bash scripts/build.sh)"
  ((EUID == 0)) || die "needs root (BPF, loop devices); run with sudo"
}
