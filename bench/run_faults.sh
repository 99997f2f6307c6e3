#!/usr/bin/env bash
# Page-fault benchmark: a storm of minor faults on a page-cached 64 MiB file on an ext4 loop
# filesystem (large folios), untraced and under datacrumbs, in interleaved rounds; with the
# kernel's BPF run-time statistics of the fault layer's programs during the traced runs.
#
# usage: sudo bash bench/run_faults.sh [--write-doc] [--rounds R] [MAP_ROUNDS]
#
# MAP_ROUNDS (default 20): times the storm maps, touches and unmaps the file in one run.
# Prints a markdown table on stdout; --write-doc also puts it into docs/benchmarks.md.
# Turns kernel.bpf_stats_enabled on during the traced runs and restores it after.
set -euo pipefail

# shellcheck source=bench/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

map_rounds=20
rounds=5
parse_bench_args 12 map_rounds "$@"
require_tool_and_root
command -v bpftool >/dev/null || die "bpftool is required"

load_before="$(cut -d' ' -f1-3 /proc/loadavg)"
stats_before="$(sysctl -n kernel.bpf_stats_enabled)"
tmp="$(mktemp -d)"
dev=""
# shellcheck disable=SC2317 # invoked by the EXIT trap
cleanup() {
  sysctl -q -w kernel.bpf_stats_enabled="$stats_before" || true
  unmount_loop_ext4 "$tmp/mnt"
  rm -rf "$tmp"
}
trap cleanup EXIT

cc -O2 -Wall -Wextra -o "$tmp/fault_storm" "$repo/bench/fault_storm.c"
mount_loop_ext4 "$tmp/mnt" 256
dd if=/dev/urandom of="$tmp/mnt/data" bs=1M count=64 status=none
storm=("$tmp/fault_storm" "$tmp/mnt/data" "$map_rounds")

ns_of() { sed -n 's/^ns_per_page=\([0-9.]*\) .*/\1/p' "$1"; }

for ((r = 1; r <= rounds; r++)); do
  log "round $r/$rounds: untraced"
  "${storm[@]}" >"$tmp/out"
  ns_of "$tmp/out" >>"$tmp/ns.untraced"
  sed -n 's/.* faults=\([0-9]*\) .*/\1/p' "$tmp/out" >>"$tmp/faults"
  log "round $r/$rounds: datacrumbs"
  sysctl -q -w kernel.bpf_stats_enabled=1
  storm_cmd="$(printf '%q ' "${storm[@]}")"
  "$dc" run -o "$tmp/t.pfw.gz" --summary "$tmp/s.json" -- \
    bash -c "$storm_cmd >$tmp/out && bpftool -j prog show >$tmp/progs.json"
  sysctl -q -w kernel.bpf_stats_enabled="$stats_before"
  ns_of "$tmp/out" >>"$tmp/ns.datacrumbs"
  python3 - "$tmp/progs.json" >>"$tmp/progstats" <<'PY'
import json, sys
for p in json.load(open(sys.argv[1])):
    if p.get("name", "").startswith(("dc_fault_user", "dc_fault_rss_ch", "dc_fault_around", "dc_fault_filema")):
        print(p["name"], p.get("run_cnt", 0), p.get("run_time_ns", 0))
PY
  rm -f "$tmp/t.pfw.gz"
done

median() { sort -g | awk '{v[NR]=$1} END {m=int((NR+1)/2); printf "%.1f", (NR%2 ? v[m] : (v[m]+v[m+1])/2)}'; }
base="$(median <"$tmp/ns.untraced")"
traced_ns="$(median <"$tmp/ns.datacrumbs")"
pages=$((64 * 256 * map_rounds))
{
  echo "## Page faults on large folios (\`bench/run_faults.sh\`)"
  echo
  echo "Command: \`sudo bash bench/run_faults.sh --rounds $rounds $map_rounds\` — $map_rounds maps of a"
  echo "page-cached 64 MiB file on an ext4 loop filesystem, one byte read per page ($pages pages per"
  echo "run, $(median <"$tmp/faults") faults per run untraced: fault-around and whole large folios)."
  echo "Kernel $(uname -r), clocksource $(cat /sys/devices/system/clocksource/clocksource0/current_clocksource),"
  echo "$(nproc) CPUs, load average $load_before before and $(cut -d' ' -f1-3 /proc/loadavg) after (with"
  echo "other work running the ns/page figures are noisy; the per-program costs are the kernel's own"
  echo "accounting, \`kernel.bpf_stats_enabled\`). \`dc_fault_rss_change\` (tp_btf rss_stat, for"
  echo "whole-folio page counts) runs at every RSS change of every process: an untraced process's"
  echo "costs two map lookups, a traced one's sums its file counter over every CPU (the counter's"
  echo "lock read between its count and its parts, for a consistent read), which grows with the CPU count."
  echo
  echo "| config | ns/page (median of $rounds) | × untraced |"
  echo "|---|---:|---:|"
  echo "| untraced | $base | 1.00× |"
  echo "| datacrumbs | $traced_ns | $(awk -v a="$traced_ns" -v b="$base" 'BEGIN {printf "%.2f×", a/b}') |"
  echo
  echo "| fault-layer program | runs during one traced storm, all processes (mean) | ns per run (mean) |"
  echo "|---|---:|---:|"
  awk '{c[$1]+=$2; t[$1]+=$3; n[$1]++; runs[$1]=runs[$1] " " $2}
       END {for (p in c) printf "| %s | %d | %.0f |\n", p, c[p]/n[p], (c[p] ? t[p]/c[p] : 0)}' "$tmp/progstats" | sort
} >"$tmp/table.md"
cat "$tmp/table.md"
if ((write_doc)); then
  write_doc_section faults "$tmp/table.md"
fi
