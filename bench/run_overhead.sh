#!/usr/bin/env bash
# Overhead benchmark, beside Darshan: one pread(2) storm (bench/pread_storm.c) run untraced,
# under Darshan 3.5 (counters, and DXT keeping every operation), under datacrumbs (trace and
# profile mode, the system-call layer alone and every layer), untraced while datacrumbs traces
# another process (attached-idle), untraced beside two empty raw syscall programs (hooks-floor:
# what any BPF system-call tracer pays here), and under strace and two bpftrace one-liners, in interleaved
# rounds; then the fixed cost of a run: `datacrumbs run -- /bin/date` start-up and end.
#
# usage: sudo bash bench/run_overhead.sh [--quick] [--write-doc] [--rounds R] [OPS]
#
# OPS (default 1000000; --quick: 20000, one round, 3 start-up runs: seconds, for CI) preads
# per run. Prints markdown tables on stdout (per-round ratios, their medians, every raw round);
# progress goes to stderr. --write-doc also rewrites this benchmark's sections of
# docs/benchmarks.md. Darshan is built once per machine (scripts/build-darshan.sh, cached in
# /var/cache/datacrumbs-bench); without its vendored tarball its rows say so. A benchmark, not a
# test: it exits non-zero on errors (a run that fails, a count that is not exact: datacrumbs'
# preads of the file or Darshan's POSIX_READS and DXT read segments), never on a ratio.
set -euo pipefail

# shellcheck source=bench/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

ops=1000000
rounds=7
startup_runs=9
quick_defaults "ops=20000 rounds=1 startup_runs=3" "$@"
parse_bench_args 16 ops "$@"
# strace costs ~30-60 us per syscall; fewer ops keep a round short.
strace_ops=$((ops / 5 > 1000 ? ops / 5 : ops))

require_tool_and_root
command -v python3 >/dev/null || die "python3 is required"
mountpoint -q /sys/kernel/tracing || mount -t tracefs nodev /sys/kernel/tracing
ulimit -l unlimited 2>/dev/null || true # else bpftrace 0.17 warns about RLIMIT_MEMLOCK
pgrep -x datacrumbs >/dev/null && log "warning: another datacrumbs is running; its probes will skew every config"

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
cc -O2 -Wall -Wextra -o "$tmp/hook_floor" "$repo/bench/hook_floor.c" -lbpf
dd if=/dev/urandom of="$tmp/data" bs=1M count=64 status=none
storm=("$tmp/pread_storm" "$tmp/data")
blocks=$((64 * 256)) # the storm's warm-up reads every 4 KiB block once before timing
expected=$((ops + blocks))
log "building or finding Darshan (once per machine)"
darshan="$(darshan_prefix counters)"
darshan_dxt="$(darshan_prefix dxt)"
configs=(untraced darshan darshan-dxt dc-syscall dc-default dc-profile dc-profile-syscall attached-idle
  hooks-floor strace bpftrace-count bpftrace-printf)
failed=0
: >"$tmp/rows"

# fail_run CONFIG WHY: a failed run; a peer that cannot run here (Darshan not built, bpftrace
# refused by this kernel) is a result written in the table, anything else is an error.
fail_run() {
  echo "$2" >"$tmp/err.$1"
  log "$1 failed: $2"
  [[ "$1" == bpftrace-* || ("$1" == darshan* && (-z "$darshan" || -z "$darshan_dxt")) ]] || failed=1
}

# run_dc MODE LAYERS: one traced storm; checks 0 lost and every pread of the file counted.
run_dc() {
  local args=(run --mode "$1" -o "$tmp/t.pfw.gz" --summary "$tmp/s.json")
  [[ -z "$2" ]] || args+=(--layers "$2")
  timed "$tmp/time" "$dc" "${args[@]}" -- "${storm[@]}" "$ops" || return
  python3 - "$tmp/s.json" "$tmp/data" "$expected" <<'PY' >"$tmp/check" || return
import json, sys
d = json.load(open(sys.argv[1]))
reads = d["files"].get(sys.argv[2], {}).get("POSIX", {}).get("reads", 0)
lost = d["events"]["lost"]
kept = int(d.get("bpf_object") == "taken from a keeper")
print(f'{d["events"]["written"] + d["events"]["counters"]} {lost} {reads} {kept}')
if lost or reads != int(sys.argv[3]):
    sys.exit(f"lost {lost}, preads of the file counted {reads} (expected {sys.argv[3]})")
PY
  rm -f "$tmp/t.pfw.gz"
}

# run_peer_darshan PREFIX DXT: one storm under Darshan; checks POSIX_READS (and DXT's segments).
run_peer_darshan() {
  [[ -n "$darshan" && -n "$1" ]] ||
    { echo "Darshan not built: $(cat "$tmp/err.darshan-counters" "$tmp/err.darshan-dxt" | tail -n1)" >&2; return 1; }
  darshan_command "$1" "$tmp/dlog" "$2" "${storm[@]}" "$ops"
  timed "$tmp/time" "${darshan_cmd[@]}" || return
  local reads segments=""
  reads="$(darshan_counter "$darshan" "$tmp/dlog" "$tmp/data" POSIX_READS)"
  ((!$2)) || segments="$(darshan_dxt_ops "$darshan" "$tmp/dlog" "$tmp/data" read)"
  echo "$reads ${segments:-$reads}" >"$tmp/check"
  [[ "$reads" == "$expected" && "${segments:-$reads}" == "$expected" ]] ||
    { echo "Darshan counted POSIX_READS $reads, DXT read segments ${segments:-—} (expected $expected)" >&2; return 1; }
}

# The storm runs untraced while datacrumbs traces an idle `sleep`.
run_attached_idle() {
  "$dc" run -o "$tmp/idle.pfw.gz" --summary "$tmp/idle.json" -- sleep 600 >/dev/null 2>&1 &
  local dcpid=$! child="" i c kids
  bg_pids+=("$dcpid")
  # datacrumbs execs the child only once its probes are attached.
  for ((i = 0; i < 300; i++)); do
    kill -0 "$dcpid" 2>/dev/null || { echo "datacrumbs exited early" >&2; return 1; }
    read -r -a kids < <(cat /proc/"$dcpid"/task/*/children 2>/dev/null) || true
    for c in "${kids[@]}"; do
      [[ "$(cat /proc/"$c"/comm 2>/dev/null)" == sleep ]] && child="$c"
    done
    [[ -z "$child" ]] || break
    sleep 0.1
  done
  [[ -n "$child" ]] || { echo "traced sleep never started" >&2; return 1; }
  local rc=0
  timed "$tmp/time" "${storm[@]}" "$ops" || rc=$?
  kill "$child"
  wait "$dcpid" || true
  bg_pids=()
  return "$rc"
}

# The storm runs untraced beside bench/hook_floor.c's two empty raw syscall programs.
run_hooks_floor() {
  "$tmp/hook_floor" >"$tmp/floor.out" &
  local fpid=$! i rc=0
  bg_pids+=("$fpid")
  for ((i = 0; i < 100; i++)); do
    [[ ! -s "$tmp/floor.out" ]] || break
    kill -0 "$fpid" 2>/dev/null || { echo "hook_floor failed" >&2; return 1; }
    sleep 0.05
  done
  [[ -s "$tmp/floor.out" ]] || { echo "hook_floor never attached" >&2; return 1; }
  timed "$tmp/time" "${storm[@]}" "$ops" || rc=$?
  kill "$fpid"
  wait "$fpid" || true
  bg_pids=()
  return "$rc"
}

run_config() {
  case "$1" in
    untraced) timed "$tmp/time" "${storm[@]}" "$ops" ;;
    darshan) run_peer_darshan "$darshan" 0 ;;
    darshan-dxt) run_peer_darshan "$darshan_dxt" 1 ;;
    dc-syscall) run_dc trace syscall ;;
    dc-default) run_dc trace "" ;;
    dc-profile) run_dc profile "" ;;
    dc-profile-syscall) run_dc profile syscall ;;
    attached-idle) run_attached_idle ;;
    hooks-floor) run_hooks_floor ;;
    strace) timed "$tmp/time" strace -f -o /dev/null "${storm[@]}" "$strace_ops" ;;
    bpftrace-count)
      timed "$tmp/time" bpftrace -o "$tmp/bt.out" -c "${storm[*]} $ops" \
        -e 'tracepoint:syscalls:sys_enter_pread64 /pid == cpid/ { @[tid] = count(); }' ;;
    bpftrace-printf)
      timed "$tmp/time" bpftrace -o "$tmp/bt.out" -c "${storm[*]} $ops" \
        -e 'tracepoint:syscalls:sys_enter_pread64 /pid == cpid/ {
              printf("%llu %d %d %llu\n", nsecs, tid, args->fd, args->pos); }' ;;
    *) die "unknown config $1" ;;
  esac
}

for ((r = 1; r <= rounds; r++)); do
  # Each round starts at another config, so drift over a round favours none of them.
  n=${#configs[@]}
  for ((k = 0; k < n; k++)); do
    cfg="${configs[$(((k + r - 1) % n))]}"
    tool="${cfg%%-*}"
    if [[ "$tool" == strace || "$tool" == bpftrace ]] && ! command -v "$tool" >/dev/null; then
      echo "$tool not installed" >"$tmp/err.$cfg"
      continue
    fi
    log "round $r/$rounds: $cfg"
    rm -f "$tmp/check" "$tmp/time"
    if run_config "$cfg" >"$tmp/out" 2>"$tmp/err"; then
      ns="$(sed -n 's/^ns_per_op=\([0-9.]*\) .*/\1/p' "$tmp/out")"
      if [[ -n "$ns" && -s "$tmp/time" ]]; then
        read -r wall cpu <"$tmp/time"
        printf '%s\t%d\t%s\t%s\t%s\n' "$cfg" "$r" "$ns" "$wall" "$cpu" >>"$tmp/rows"
        [[ ! -s "$tmp/check" ]] || cat "$tmp/check" >>"$tmp/check.$cfg"
        continue
      fi
    fi
    fail_run "$cfg" "$(grep -m1 -iE 'error|expected|not built|failed' "$tmp/err" || tail -n1 "$tmp/err")"
  done
done

# Notes per config: what was verified, and how.
{
  for cfg in dc-syscall dc-default dc-profile dc-profile-syscall; do
    [[ -s "$tmp/check.$cfg" ]] && awk -v c="$cfg" -v e="$expected" \
      '{w = w (NR > 1 ? "/" : "") $1; lost += $2; if ($3 == e) ok++; kept += $4}
       END {printf "%s\t%s %s; lost %d; preads of the file = %d in %d/%d runs; kept object taken in %d/%d\n", c,
            (c ~ /profile/ ? "counter samples" : "events"), w, lost, e, ok, NR, kept, NR}' "$tmp/check.$cfg"
  done
  for cfg in darshan darshan-dxt; do
    [[ -s "$tmp/check.$cfg" ]] && awk -v c="$cfg" -v e="$expected" '{if ($1 == e && $2 == e) ok++}
       END {printf "%s\tPOSIX_READS%s = %d in %d/%d runs\n", c, (c ~ /dxt/ ? " and DXT read segments" : ""), e, ok, NR}' \
      "$tmp/check.$cfg"
    [[ -s "$tmp/check.$cfg" || ! -s "$tmp/err.$cfg" ]] || printf '%s\t%s\n' "$cfg" "$(cat "$tmp/err.$cfg")"
  done
  printf 'attached-idle\tthe storm untraced; datacrumbs traces a sleeping process\n'
  printf 'hooks-floor\tthe storm untraced; two empty programs on the raw syscall tracepoints\n'
  printf 'strace\t%d ops per run\n' "$strace_ops"
  for cfg in bpftrace-count bpftrace-printf; do
    [[ ! -s "$tmp/err.$cfg" ]] || printf '%s\t%s\n' "$cfg" "$(cat "$tmp/err.$cfg")"
  done
} >"$tmp/notes"
IFS=,
python3 "$repo/bench/summarize.py" "$tmp/rows" --configs "${configs[*]}" --notes "$tmp/notes" \
  --json "$tmp/medians.json" >"$tmp/table.md"
unset IFS
cat "$tmp/table.md"

source "$repo/bench/startup.sh"
startup_section >"$tmp/startup.md"
echo
cat "$tmp/startup.md"

# Targets of issue 14, from the medians of per-round ratios.
python3 - "$tmp/medians.json" >"$tmp/verdict.md" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
def get(c, k):
    return m.get(c, {}).get(k)
def check(label, value, limit):
    if value is None or limit is None:
        return f"- {label}: not measured (a config failed)."
    return f"- {label}: {value:.2f} vs {limit:.2f}: {'met' if value <= limit else 'MISSED'}."
print(check("profile (all layers) loop ≤ Darshan counters, × untraced", get("dc-profile", "metric_ratio"), get("darshan", "metric_ratio")))
print(check("profile (all layers) whole command ≤ Darshan counters, × untraced", get("dc-profile", "wall_ratio"), get("darshan", "wall_ratio")))
print(check("profile (all layers) loop ≤ trace (all layers), × untraced", get("dc-profile", "metric_ratio"), get("dc-default", "metric_ratio")))
fl, dr = get("hooks-floor", "metric_ratio"), get("darshan", "metric_ratio")
if fl is not None and dr is not None:
    print(f"  - the floor of the hooks alone (two empty raw syscall programs), × untraced: {fl:.2f}, "
          f"{'above' if fl > dr else 'at or below'} Darshan counters' {dr:.2f}.")
print(check("trace --layers syscall loop ≤ Darshan DXT, × untraced", get("dc-syscall", "metric_ratio"), get("darshan-dxt", "metric_ratio")))
dw = get("darshan", "wall_ratio")
print(check("trace --layers syscall whole command ≤ 1.3 × Darshan counters' whole command", get("dc-syscall", "wall_ratio"), dw * 1.3 if dw else None))
sl = get("dc-syscall", "metric_ratio")
print(check("trace, all layers, loop ≤ 1.1 × trace --layers syscall", get("dc-default", "metric_ratio"), sl * 1.1 if sl else None))
PY
echo
cat "$tmp/verdict.md"

if ((write_doc)); then
  rev="$(git -C "$repo" rev-parse --short HEAD 2>/dev/null || echo unknown)"
  git -C "$repo" diff --quiet HEAD -- src bpf 2>/dev/null || rev="$rev (with uncommitted changes in src/ or bpf/)"
  {
    cat <<EOF
## Tracing overhead beside Darshan: pread storm (\`bench/run_overhead.sh\`)

Workload: \`bench/pread_storm.c\`, single-threaded, $ops × \`pread(fd, buf, 4096, off)\` cycling
through the 4 KiB blocks of a 64 MiB page-cached file (after one warm-up read of each block,
$blocks reads: $expected preads of the file in all). "× untraced" columns are medians of
per-round ratios (each config against the untraced run of the same round; range in
parentheses): the loop's ns/op, timed inside the workload (tracer start-up and trace writing
not counted, tracer work competing for the CPU counted), and the wall time of the whole command
(start-up, the loop, the trace or log written at the end). $rounds interleaved rounds, each
starting at another config.

- Machine: $(machine_line)
- Date: $(date -u '+%Y-%m-%d %H:%M UTC'); datacrumbs commit $rev
- Load average (1/5/15 min) before the run: $load_before; after: $(cut -d' ' -f1-3 /proc/loadavg)
  (a shared machine: read the numbers as provisional)
- Peers: Darshan 3.5.0 (non-MPI, LD_PRELOAD; DXT built with --with-mod-mem=256 so it keeps every
  operation), $(bpftrace --version 2>/dev/null || echo "bpftrace not installed"), $(strace -V 2>/dev/null | head -n1 || echo "strace not installed")
- Reproduce: \`sudo bash bench/run_overhead.sh --write-doc\` (CI-sized: \`--quick\`)

EOF
    cat "$tmp/table.md"
    echo
    echo "Targets (issue 14), from the medians above:"
    echo
    cat "$tmp/verdict.md"
    cat <<EOF

Configs:

- **untraced**: \`pread_storm FILE $ops\`.
- **darshan** / **darshan-dxt**: the same with \`LD_PRELOAD=libdarshan.so DARSHAN_ENABLE_NONMPI=1\`
  (DXT: \`DXT_ENABLE_IO_TRACE=1\` with the large-memory build); each run's log is checked with
  \`darshan-parser\` (POSIX_READS of the file) and \`darshan-dxt-parser\` (its read_count).
- **dc-syscall**: \`datacrumbs run --layers syscall\` (trace mode); **dc-default**: every layer;
  **dc-profile**: \`--mode profile\` (per-interval counters in the kernel), every layer;
  **dc-profile-syscall**: \`--mode profile --layers syscall\`. Each run's summary must show 0 lost
  and exactly $expected POSIX reads of the file. Each run keeps its loaded object for the next run
  of its configuration (up to four configurations at once, probe/keeper_sockets.h), so a run after
  the first round takes its configuration's kept object, as a user's repeated runs do; the notes
  say how many did. The start-up of each way is measured apart (below).
- **attached-idle**: the untraced storm while \`datacrumbs run -- sleep 600\` traces another
  process: what every untraced process pays while datacrumbs runs (Darshan's equivalent is zero:
  only preloaded processes run its code).
- **hooks-floor**: the untraced storm while \`bench/hook_floor.c\` holds two empty programs on the
  raw \`sys_enter\`/\`sys_exit\` tracepoints (datacrumbs' system-call hooks): the kernel's traced
  system-call path and two program runs per call, nothing else. No BPF system-call tracer can cost
  less here (fentry and kprobes are refused on this kernel).
- **strace**: \`strace -f -o /dev/null\`, $strace_ops ops (ns/op is compared).
- **bpftrace-count**: one filtered \`sys_enter_pread64\` probe counting in the kernel;
  **bpftrace-printf**: the same probe printing a line per call.
EOF
  } >"$tmp/section.md"
  write_doc_section overhead "$tmp/section.md"
  write_doc_section startup "$tmp/startup.md"
  log "wrote its sections of docs/benchmarks.md"
fi
exit "$failed"
