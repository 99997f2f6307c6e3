#!/usr/bin/env bash
# Overhead benchmark: one pread(2) storm, run untraced, under datacrumbs (trace
# and profile mode), under strace and under two bpftrace one-liners, in
# interleaved rounds.
#
# usage: sudo bash bench/run_overhead.sh [--write-doc] [--rounds R] [OPS]
#
# Prints a markdown table (median ns/op per config, ratio to untraced) on
# stdout; progress goes to stderr. --write-doc also rewrites
# docs/benchmarks.md. This is a benchmark, not a test: it exits non-zero on
# errors (a run that fails, a datacrumbs trace missing preads), never on a
# ratio. A bpftrace failure is recorded in the table and is not an error.
set -euo pipefail

# shellcheck source=bench/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

ops=1000000
rounds=5
parse_bench_args 13 ops "$@"
# strace costs ~30-60 us per syscall; fewer ops keep a round short.
strace_ops=$((ops / 5 > 1000 ? ops / 5 : ops))

require_tool_and_root
command -v python3 >/dev/null || die "python3 is required"
mountpoint -q /sys/kernel/tracing || mount -t tracefs nodev /sys/kernel/tracing
ulimit -l unlimited 2>/dev/null || true # else bpftrace 0.17 warns about RLIMIT_MEMLOCK

if pgrep -x datacrumbs >/dev/null; then
  log "warning: another datacrumbs is running; its probes will skew every config"
fi

load_before="$(cut -d' ' -f1-3 /proc/loadavg)"
tmp="$(mktemp -d)"
bg_pids=()
# shellcheck disable=SC2317 # invoked by the EXIT trap
cleanup() {
  local p
  for p in "${bg_pids[@]}"; do kill "$p" 2>/dev/null || true; done
  rm -rf "$tmp"
}
trap cleanup EXIT

cc -O2 -Wall -Wextra -o "$tmp/pread_storm" "$repo/bench/pread_storm.c"
dd if=/dev/urandom of="$tmp/data" bs=1M count=64 status=none
storm=("$tmp/pread_storm" "$tmp/data")
configs=(untraced datacrumbs datacrumbs-profile attached-idle strace bpftrace-count bpftrace-printf)
failed=0

ns_of() { sed -n 's/^ns_per_op=\([0-9.]*\) .*/\1/p' "$1"; }

# record CONFIG RC OUTFILE ERRFILE: append the ns/op or the error line.
record() {
  local ns
  ns="$(ns_of "$3")"
  if [[ "$2" == 0 && -n "$ns" ]]; then
    echo "$ns" >>"$tmp/ns.$1"
  else
    grep -m1 -i 'error' "$4" >"$tmp/err.$1" || tail -n1 "$4" >"$tmp/err.$1" || true
    log "$1 failed (rc $2): $(cat "$tmp/err.$1")"
    # A comparison tool failing on this kernel is a result, not an error.
    [[ "$1" == bpftrace-* ]] || failed=1
  fi
}

# json FILE EXPR: evaluate a python expression over the JSON document d.
json() { python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"; }

run_untraced() { "${storm[@]}" "$ops"; }
run_strace() { strace -f -o /dev/null "${storm[@]}" "$strace_ops"; }
run_bpftrace_count() {
  bpftrace -o "$tmp/bt.out" -c "${storm[*]} $ops" \
    -e 'tracepoint:syscalls:sys_enter_pread64 /pid == cpid/ { @[tid] = count(); }'
}
run_bpftrace_printf() {
  bpftrace -o "$tmp/bt.out" -c "${storm[*]} $ops" \
    -e 'tracepoint:syscalls:sys_enter_pread64 /pid == cpid/ {
          printf("%llu %d %d %llu\n", nsecs, tid, args->fd, args->pos); }' || return
  grep -c '^[0-9]' "$tmp/bt.out" >>"$tmp/btlines" || true
}
# run_datacrumbs MODE STATS: one traced storm; appends "written lost preads" to STATS (written:
# events in trace mode, counter samples in profile mode).
run_datacrumbs() {
  "$dc" run --mode "$1" -o "$tmp/t.pfw.gz" --summary "$tmp/s.json" -- "${storm[@]}" "$ops" || return
  local w l p
  w="$(json "$tmp/s.json" 'd["events"]["written"] + d["events"]["counters"]')" || return
  l="$(json "$tmp/s.json" 'd["events"]["lost"]')" || return
  p="$(json "$tmp/s.json" 'd["layers"].get("POSIX", {}).get("pread64", {}).get("count", 0)')" || return
  echo "$w $l $p" >>"$2"
  rm -f "$tmp/t.pfw.gz"
}
# The storm runs untraced while datacrumbs traces an idle `sleep`.
run_attached_idle() {
  "$dc" run -o "$tmp/idle.pfw.gz" --summary "$tmp/idle.json" -- sleep 600 >/dev/null &
  local dcpid=$! child="" i c kids
  bg_pids+=("$dcpid")
  # datacrumbs execs the child only once its probes are attached.
  for ((i = 0; i < 300; i++)); do
    kill -0 "$dcpid" 2>/dev/null || { echo "error: datacrumbs exited early" >&2; return 1; }
    read -r -a kids < <(cat /proc/"$dcpid"/task/*/children 2>/dev/null) || true
    for c in "${kids[@]}"; do
      [[ "$(cat /proc/"$c"/comm 2>/dev/null)" == sleep ]] && child="$c"
    done
    [[ -z "$child" ]] || break
    sleep 0.1
  done
  [[ -n "$child" ]] || { echo "error: traced sleep never started" >&2; return 1; }
  local rc=0
  "${storm[@]}" "$ops" || rc=$?
  kill "$child"
  wait "$dcpid" || true
  bg_pids=()
  json "$tmp/idle.json" 'd["layers"].get("POSIX", {}).get("pread64", {}).get("count", 0)' >>"$tmp/idlepreads"
  return "$rc"
}

run_config() {
  case "$1" in
    untraced) run_untraced ;;
    datacrumbs) run_datacrumbs trace "$tmp/dcstats" ;;
    datacrumbs-profile) run_datacrumbs profile "$tmp/dcprofile" ;;
    attached-idle) run_attached_idle ;;
    strace) run_strace ;;
    bpftrace-count) run_bpftrace_count ;;
    bpftrace-printf) run_bpftrace_printf ;;
    *) die "unknown config $1" ;;
  esac
}

for ((r = 1; r <= rounds; r++)); do
  for cfg in "${configs[@]}"; do
    if [[ "$cfg" == strace ]] && ! command -v strace >/dev/null; then
      echo "strace not installed" >"$tmp/err.strace"; continue
    fi
    if [[ "$cfg" == bpftrace-* ]] && ! command -v bpftrace >/dev/null; then
      echo "bpftrace not installed" >"$tmp/err.$cfg"; continue
    fi
    log "round $r/$rounds: $cfg"
    rc=0
    run_config "$cfg" >"$tmp/out" 2>"$tmp/err" || rc=$?
    record "$cfg" "$rc" "$tmp/out" "$tmp/err"
  done
done

median() { sort -g "$1" | awk '{v[NR]=$1} END {m=int((NR+1)/2); printf "%.1f", (NR%2 ? v[m] : (v[m]+v[m+1])/2)}'; }
range() { sort -g "$1" | awk 'NR==1{lo=$1} {hi=$1} END {printf "%s–%s", lo, hi}'; }

[[ -s "$tmp/ns.untraced" ]] || die "untraced runs failed: $(cat "$tmp/err.untraced" 2>/dev/null)"
base="$(median "$tmp/ns.untraced")"

note_for() {
  case "$1" in
    datacrumbs | datacrumbs-profile)
      local stats="$tmp/dcstats" what="events"
      [[ "$1" == datacrumbs ]] || { stats="$tmp/dcprofile"; what="counter samples"; }
      [[ -s "$stats" ]] || return 0
      awk -v n="$ops" -v what="$what" '{lost+=$2; if ($3 < n) short++; if (NR==1 || $1 < wl) wl=$1; if ($1 > wh) wh=$1
                        if (NR==1 || $3 < p) p=$3}
        END {printf "%s written %s–%s per run, lost %d in all runs; pread64 calls counted ≥ %d in %d/%d runs (min %d)",
             what, wl, wh, lost, n, NR-short, NR, p}' "$stats" ;;
    attached-idle)
      [[ -s "$tmp/idlepreads" ]] &&
        awk '$1 > m {m=$1} END {printf "pread64 events in the sleep trace: ≤ %d per run (storm not traced)", m}' "$tmp/idlepreads" ;;
    strace) echo "$strace_ops ops/run" ;;
    bpftrace-printf)
      [[ -s "$tmp/btlines" ]] &&
        awk '{s+=$1} END {printf "%d lines per run on average (warm-up reads included)", s/NR}' "$tmp/btlines" ;;
  esac
  return 0
}

table() {
  local cfg runs
  echo "| config | ns/op (median) | × untraced | runs, ns/op range | notes |"
  echo "|---|---:|---:|---|---|"
  for cfg in "${configs[@]}"; do
    if [[ -s "$tmp/ns.$cfg" ]]; then
      local m
      m="$(median "$tmp/ns.$cfg")"
      runs="$(wc -l <"$tmp/ns.$cfg"): $(range "$tmp/ns.$cfg")"
      printf '| %s | %s | %s | %s | %s |\n' "$cfg" "$m" \
        "$(awk -v a="$m" -v b="$base" 'BEGIN {printf "%.2f×", a/b}')" "$runs" "$(note_for "$cfg")"
    else
      printf "| %s | — | — | failed | \`%s\` |\n" "$cfg" "$(cat "$tmp/err.$cfg" 2>/dev/null || echo unknown error)"
    fi
  done
}

# verdict_for CONFIG STATS TARGET LABEL
verdict_for() {
  [[ -s "$tmp/ns.$1" && -s "$2" ]] || { echo "$1: no successful run"; return 0; }
  awk -v a="$(median "$tmp/ns.$1")" -v b="$base" -v n="$ops" -v t="$3" -v label="$4" '
    {lost+=$2; if ($3 < n) short++}
    END {r=a/b; printf "Target (%s ≤ %.2f× untraced, 0 lost events): ratio %.2f× %s, lost %d %s, every pread counted: %s.\n",
         label, t, r, (r <= t ? "met" : "MISSED"), lost, (lost == 0 ? "met" : "MISSED"), (short ? "NO" : "yes")}' "$2"
}
verdict() {
  verdict_for datacrumbs "$tmp/dcstats" 1.25 "trace mode"
  echo
  verdict_for datacrumbs-profile "$tmp/dcprofile" 1.15 "profile mode"
}

table >"$tmp/table.md"
verdict >"$tmp/verdict.md"
for stats in "$tmp/dcstats" "$tmp/dcprofile"; do
  if [[ -s "$stats" ]] && awk -v n="$ops" '$3 < n {bad=1} END {exit !bad}' "$stats"; then
    log "a datacrumbs run counted fewer than $ops pread64 calls ($(basename "$stats"))"
    failed=1
  fi
done
cat "$tmp/table.md"
echo
cat "$tmp/verdict.md"

if ((write_doc)); then
  cpu="$(grep -m1 -E '^(model name|Model)' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')"
  rev="$(git -C "$repo" rev-parse --short HEAD 2>/dev/null || echo unknown)"
  git -C "$repo" diff --quiet HEAD -- src bpf 2>/dev/null || rev="$rev (with uncommitted changes in src/ or bpf/)"
  {
    cat <<EOF
## Tracing overhead: pread storm (\`bench/run_overhead.sh\`)

Workload: \`bench/pread_storm.c\`, single-threaded, $ops × \`pread(fd, buf, 4096, off)\`
cycling through the 4 KiB blocks of a 64 MiB page-cached file; the loop is timed inside the
workload with \`CLOCK_MONOTONIC\`, so tracer start-up and trace flushing are not counted, but
tracer work that competes for the CPU while the loop runs is. Every config ran in each of
$rounds interleaved rounds; the table shows the median.

- Machine: $(nproc) CPUs, ${cpu:-unknown CPU}, kernel $(uname -r)
- Date: $(date -u '+%Y-%m-%d %H:%M UTC'); datacrumbs commit $rev
- Load average (1/5/15 min) before the run: $load_before; after: $(cut -d' ' -f1-3 /proc/loadavg)
- Tools: $(bpftrace --version 2>/dev/null || echo "bpftrace not installed"), $(strace -V 2>/dev/null | head -n1 || echo "strace not installed")
- Reproduce: \`sudo bash bench/run_overhead.sh --write-doc\`

EOF
    cat "$tmp/table.md"
    echo
    cat "$tmp/verdict.md"
    cat <<EOF

Where the traced cost goes, measured by disabling one piece at a time: docs/performance.md.

Configs:

- **untraced**: \`pread_storm FILE $ops\` on its own.
- **datacrumbs**: \`datacrumbs run -o t.pfw.gz --summary s.json -- pread_storm FILE $ops\`;
  every syscall of the workload becomes an event in the gzip trace. "events written"/"lost"
  come from the summary JSON; the pread64 count there includes the workload's warm-up reads
  (one per block), so it must be ≥ $ops.
- **datacrumbs-profile**: the same with \`--mode profile\`: the kernel adds each call to a
  per-interval counter (1 s) and the trace holds only \`"ph":"C"\` samples; the pread64 count is
  the sum of those counters.
- **attached-idle**: the untraced storm while \`datacrumbs run -- sleep 600\` traces another
  process: the system-wide cost of having the probes attached and filtering out other PIDs.
- **strace**: \`strace -f -o /dev/null pread_storm FILE $strace_ops\` (fewer ops, ns/op is compared).
- **bpftrace-count**: \`bpftrace -e 'tracepoint:syscalls:sys_enter_pread64 /pid == cpid/ { @[tid] = count(); }' -c ...\`:
  one filtered probe aggregating in the kernel, no per-event output (a floor for any eBPF tracer).
- **bpftrace-printf**: the same probe printing one line per pread to a file (\`-o\`): a naive
  per-event tracer.
EOF
  } >"$tmp/section.md"
  write_doc_section overhead "$tmp/section.md"
  log "wrote its section of docs/benchmarks.md"
fi
exit "$failed"
