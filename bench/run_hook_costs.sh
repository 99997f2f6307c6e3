#!/usr/bin/env bash
# What each BPF program costs while a pread storm is traced: the kernel's own per-program
# statistics (kernel.bpf_stats_enabled: run count and run time of every program), sampled twice
# while `datacrumbs run [OPTIONS] -- pread_storm` runs, so start-up and end are left out.
#
# usage: sudo bash bench/run_hook_costs.sh [--direct] [--write-doc] [--rounds R] [OPS]
#                                          [-- DATACRUMBS_RUN_OPTIONS...]
#
# OPS (default 10000000) preads per run; the options after -- go to `datacrumbs run` (default:
# none, every layer in trace mode). --direct traces fio's 4 KiB O_DIRECT random reads on a private
# ext4 loop device instead (6 s; the reads in the window from fio's IOPS): the block and FS
# layers' programs per read reaching a device. Prints one table per round: each program that
# ran, its runs per call of the workload and its mean ns per run, and the sum per call. The
# statistics cost two clock reads per program run themselves (~20 ns each with tsc, ~125 ns with
# kvm-clock): compare programs with each other, not with the benchmark's ratios. --write-doc puts
# the tables into docs/performance.md ("What each BPF program costs", or its direct-I/O twin).
# A benchmark, not a test.
set -euo pipefail

# shellcheck source=bench/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

# The storm must outlast the start-up, its warm-up and the window (~4 s): 4 M preads at 0.7 us
# traced (untraced 0.52 us on a newer host kernel) ended before the window did.
ops=10000000
rounds=1
args=()
run_opts=()
direct=0
while (($#)); do
  if [[ "$1" == --direct ]]; then
    direct=1
    shift
    continue
  fi
  if [[ "$1" == -- ]]; then
    shift
    run_opts=("$@")
    break
  fi
  args+=("$1")
  shift
done
parse_bench_args 15 ops "${args[@]}"
require_tool_and_root
command -v bpftool >/dev/null || die "bpftool is required"
mountpoint -q /sys/kernel/tracing || mount -t tracefs nodev /sys/kernel/tracing

tmp="$(mktemp -d)"
stats_before="$(cat /proc/sys/kernel/bpf_stats_enabled)"
dev=""
# shellcheck disable=SC2317 # invoked by the EXIT trap
cleanup() {
  echo "$stats_before" >/proc/sys/kernel/bpf_stats_enabled
  unmount_loop_ext4 "$tmp/mnt"
  rm -rf "$tmp"
}
trap cleanup EXIT
echo 1 >/proc/sys/kernel/bpf_stats_enabled

if ((direct)); then
  command -v fio >/dev/null || die "fio is required for --direct (bash scripts/install-deps.sh)"
  mount_loop_ext4 "$tmp/mnt" 1024
  fio_job=(fio --name=direct "--filename=$tmp/mnt/data" --rw=randread --bs=4k --size=512M --direct=1)
  "${fio_job[@]}" --runtime=1s --time_based --output=/dev/null # lays the file out, untraced
  workload=("${fio_job[@]}" --runtime=6s --time_based --output-format=json "--output=$tmp/fio.json")
  call="direct read"
  what="fio's 4 KiB O_DIRECT random reads of a 512 MiB file on a private ext4 loop device"
  reproduce="--direct --write-doc"
  window=3
else
  cc -O2 -Wall -Wextra -o "$tmp/pread_storm" "$repo/bench/pread_storm.c"
  dd if=/dev/urandom of="$tmp/data" bs=1M count=64 status=none
  workload=("$tmp/pread_storm" "$tmp/data" "$ops")
  call="pread"
  what="the pread storm (4 KiB preads from page cache)"
  reproduce="--write-doc"
  window=2
fi

# snapshot OUT TOOL_PID: every program the tool holds, as "id name run_cnt run_time_ns". A
# tool that holds none has ended (its workload shorter than the window): a clear error.
snapshot() {
  bpftool prog show -j | python3 -c '
import json, os, sys
pid = int(sys.argv[1])
held = set()
ended = f"run_hook_costs: datacrumbs (pid {pid}) ended before the window did: give a larger OPS"
try:
    fds = os.listdir(f"/proc/{pid}/fdinfo")
except OSError:
    sys.exit(ended)
for fd in fds:
    try:
        text = open(f"/proc/{pid}/fdinfo/{fd}").read()
    except OSError:
        continue
    for line in text.splitlines():
        if line.startswith("prog_id:"):
            held.add(int(line.split()[1]))
if not held:  # its fds closed: an exited process not yet reaped
    sys.exit(ended)
for p in json.load(sys.stdin):
    if p["id"] in held:
        print(p["id"], p.get("name", "?"), p.get("run_cnt", 0), p.get("run_time_ns", 0))
' "$2" >"$1"
}

section="$tmp/section.md"
exec 3>&1 >"$section"
clocksource="$(cat /sys/devices/system/clocksource/clocksource0/current_clocksource)"
if ((direct)); then
  echo "## What each BPF program costs on direct I/O (\`bench/run_hook_costs.sh --direct\`)"
else
  echo "## What each BPF program costs (\`bench/run_hook_costs.sh\`)"
fi
echo
echo "The kernel's own statistics per program (\`kernel.bpf_stats_enabled\`) over a few seconds inside"
echo "$what;"
echo "runs per $call count every task's runs, so the rare programs show what the rest of the machine"
echo "did meanwhile."
echo
echo "- Reproduce: \`sudo bash bench/run_hook_costs.sh $reproduce\`; $(date -u '+%Y-%m-%d %H:%M') UTC, commit $(git -C "$repo" rev-parse --short HEAD)"
echo "- Machine: $(nproc) CPUs, kernel $(uname -r), clocksource $clocksource; load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "- datacrumbs run ${run_opts[*]:-(every layer, trace mode)} -- ${workload[*]//$tmp/TMP}"
for ((round = 1; round <= rounds; round++)); do
  "$dc" run -o "$tmp/t.pfw.gz" "${run_opts[@]}" -- "${workload[@]}" >"$tmp/storm.out" 2>"$tmp/dc.err" &
  tool=$!
  sleep 1.5 # start-up, and the storm's warm-up read of the file
  snapshot "$tmp/a" "$tool"
  t0=$(date +%s.%N)
  sleep "$window"
  snapshot "$tmp/b" "$tool"
  t1=$(date +%s.%N)
  wait "$tool" || die "datacrumbs run failed: $(tail -n 3 "$tmp/dc.err")"
  # ns per call of the workload: the storm's own loop rate, or fio's mean IOPS over its run.
  if ((direct)); then
    ns_per_op="$(python3 -c 'import json,sys; print(1e9 / json.load(open(sys.argv[1]))["jobs"][0]["read"]["iops"])' "$tmp/fio.json")"
  else
    ns_per_op="$(sed -n 's/.*ns_per_op=\([0-9.]*\).*/\1/p' "$tmp/storm.out")"
  fi
  python3 - "$tmp/a" "$tmp/b" "$t0" "$t1" "$ns_per_op" "$round" "$call" <<'PY'
import sys
a_path, b_path, t0, t1, ns_per_op, rnd, call = sys.argv[1:8]
def read(path):
    out = {}
    for line in open(path):
        pid, name, cnt, ns = line.split()
        out[pid] = (name, int(cnt), int(ns))
    return out
a, b = read(a_path), read(b_path)
# The calls in the window, from the workload's own rate (the window lies inside its loop).
preads = (float(t1) - float(t0)) * 1e9 / float(ns_per_op)
rows = []
for pid, (name, cnt, ns) in b.items():
    c0, n0 = a.get(pid, (name, 0, 0))[1:]
    if cnt > c0:
        rows.append((name, (cnt - c0) / preads, (ns - n0) / (cnt - c0), (ns - n0) / preads))
rows.sort(key=lambda r: -r[3])
print(f"\nRound {rnd}: {float(ns_per_op):.1f} ns per {call}, ~{preads:,.0f} in the window\n")
print(f"| program | runs per {call} | ns per run | ns per {call} |")
print("|---|---:|---:|---:|")
for name, per, ns, total in rows:
    print(f"| {name} | {per:.3f} | {ns:.1f} | {total:.1f} |")
print(f"| **all** | | | **{sum(r[3] for r in rows):.1f}** |")
PY
done
exec >&3
cat "$section"
if ((write_doc)); then
  if ((direct)); then
    write_doc_section hook-costs-direct "$section" "$repo/docs/performance.md"
  else
    write_doc_section hook-costs "$section" "$repo/docs/performance.md"
  fi
fi
exit 0
