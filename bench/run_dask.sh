#!/usr/bin/env bash
# The Dask path's time against single-process analyze, and its scaling from 1 to 2 workers.
#
# usage: sudo bash bench/run_dask.sh [COPIES] [WRITES]
#
# Traces one dd run of WRITES 512-byte writes (default 200000), copies the trace COPIES times
# (default 8) into one directory (as the traces of a many-node job land), and times, best of
# three: `datacrumbs analyze DIR --threads 1`, and `datacrumbs-dask DIR --threads 1` with 1 and
# 2 LocalCluster workers. Prints a markdown table on stdout. A benchmark, not a test: it checks
# that every report counts the same events, never a time.
set -euo pipefail

copies=${1:-8}
writes=${2:-200000}
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bin=${DATACRUMBS_BUILD_DIR:-$root/build}/bin
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/traces"

"$bin/datacrumbs" run -o "$tmp/one.pfw.gz" --layers syscall -- \
  dd if=/dev/zero of="$tmp/out" bs=512 count="$writes" status=none 2>/dev/null
for i in $(seq 1 "$copies"); do cp "$tmp/one.pfw.gz" "$tmp/traces/node-$i.pfw.gz"; done
bytes=$(du -cb "$tmp"/traces/*.pfw.gz | tail -1 | cut -f1)

# prints the best of three wall-clock milliseconds of a command and its JSON report's event count
best() {
  local best_ms=""
  for _ in 1 2 3; do
    local start ms
    start=$(date +%s%N)
    "$@" --json "$tmp/r.json" >/dev/null 2>&1
    ms=$((($(date +%s%N) - start) / 1000000))
    if [[ -z $best_ms ]] || ((ms < best_ms)); then best_ms=$ms; fi
  done
  echo "$best_ms $(/usr/bin/python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["run"]["events"])' "$tmp/r.json")"
}

read -r single e0 < <(best "$bin/datacrumbs" analyze "$tmp/traces" --threads 1)
read -r one e1 < <(best "$bin/datacrumbs-dask" "$tmp/traces" --workers 1 --threads 1)
read -r two e2 < <(best "$bin/datacrumbs-dask" "$tmp/traces" --workers 2 --threads 1)
if [[ "$e0 $e0" != "$e1 $e2" ]]; then
  echo "run_dask: the reports disagree: $e0, $e1, $e2 events" >&2
  exit 1
fi
echo "| path | traces | events | compressed MB | best of 3 (ms) |"
echo "|------|-------:|-------:|--------------:|--------------:|"
mb=$((bytes / 1000000))
echo "| analyze, 1 thread | $copies | $e0 | $mb | $single |"
echo "| datacrumbs-dask, 1 worker | $copies | $e1 | $mb | $one |"
echo "| datacrumbs-dask, 2 workers | $copies | $e2 | $mb | $two |"
echo "(cores: $(nproc); load average: $(cut -d' ' -f1-3 /proc/loadavg))"
