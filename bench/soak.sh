#!/usr/bin/env bash
# Soak: `datacrumbs run` tracing a mixed workload (bench/soak_load.c: files, a TCP pair, forks)
# at a steady rate for a long time, sampling the tracer's memory, CPU and open fds.
#
# usage: sudo [SOAK_SECONDS=1800] [SOAK_RATE=8000] [SOAK_DIR=/dev/shm] bash bench/soak.sh [--write-doc]
#
# SOAK_RATE is the workload's I/O system calls per second (each becomes several events: the
# summary's events/s is printed beside it). SOAK_DIR holds the scratch directory (default tmpfs:
# on a disk the fsyncs cap the workload near 5,000 calls/s). Every SOAK_INTERVAL seconds (10)
# the tracer's VmRSS, VmHWM, CPU time (utime+stime, all threads), threads and open fds go to
# SOAK_OUT/soak.csv (default /var/tmp/datacrumbs-soak; every second once the workload's time is
# up, to see the end). Prints the markdown result (bench/soak_summary.py: flat memory, no fd
# growth, events/s, lost); --write-doc also puts it into docs/reliability.md. Exit status 1 on
# an error (a run that fails), 3 when a judgement misses (memory growth, fd growth, events lost).
set -euo pipefail

# shellcheck source=bench/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

rounds=1 # parse_bench_args checks it; a soak has one round
parse_bench_args 14 "" "$@"
seconds="${SOAK_SECONDS:-1800}"
rate="${SOAK_RATE:-8000}"
interval="${SOAK_INTERVAL:-10}"
out="${SOAK_OUT:-/var/tmp/datacrumbs-soak}"
for v in seconds rate interval; do
  [[ "${!v}" =~ ^[1-9][0-9]*$ ]] || die "SOAK_${v^^} must be a positive integer, got '${!v}'"
done
load="${SOAK_LOAD_BIN:-$repo/build/bin/soak_load}"
[[ -x "$load" ]] || die "$load not built (cmake --build build --target soak_load)"
require_tool_and_root

mkdir -p "$out"
scratch="$(mktemp -d "${SOAK_DIR:-/dev/shm}/datacrumbs-soak.XXXXXX")"
dc_pid=""
# shellcheck disable=SC2317 # invoked by the EXIT trap
cleanup() {
  [[ -z "$dc_pid" ]] || kill "$dc_pid" 2>/dev/null || true
  rm -rf "$scratch" "$out/trace.pfw.gz" "$out/trace.pfw.gz.zindex"
}
trap cleanup EXIT

load_before="$(cut -d' ' -f1-3 /proc/loadavg)"
cmd=(env DATACRUMBS_MALLOC_INFO="$out/malloc.xml" "$dc" run -o "$out/trace.pfw.gz" --summary "$out/summary.json" -- "$load" "$scratch" "$rate" "$seconds")
log "tracing $seconds s of the mixed workload at $rate calls/s; samples every $interval s in $out/soak.csv"
"${cmd[@]}" >"$out/tracer.out" 2>"$out/tracer.err" &
dc_pid=$!
hz="$(getconf CLK_TCK)"
start="$(date +%s.%N)"
echo "t_s,rss_kb,hwm_kb,cpu_s,threads,fds,load1" >"$out/soak.csv"

# sample: one CSV line of the tracer's state now; fails once the tracer is gone.
sample() {
  local status stat rss hwm threads fds cpu now
  status="$(cat "/proc/$dc_pid/status" 2>/dev/null)" || return 1
  stat="$(cat "/proc/$dc_pid/stat" 2>/dev/null)" || return 1
  fds="$(find "/proc/$dc_pid/fd" -mindepth 1 -maxdepth 1 2>/dev/null | wc -l)"
  rss="$(awk '/^VmRSS:/ {print $2}' <<<"$status")"
  hwm="$(awk '/^VmHWM:/ {print $2}' <<<"$status")"
  threads="$(awk '/^Threads:/ {print $2}' <<<"$status")"
  [[ -n "$rss" ]] || return 1 # a zombie has no memory lines
  # Fields after the command name's closing parenthesis: utime and stime are the 12th and 13th.
  cpu="$(awk -v hz="$hz" '{printf "%.2f", ($12 + $13) / hz}' <<<"${stat##*) }")"
  now="$(awk -v s="$start" -v n="$(date +%s.%N)" 'BEGIN {printf "%.1f", n - s}')"
  echo "$now,$rss,$hwm,$cpu,$threads,$fds,$(cut -d' ' -f1 /proc/loadavg)" >>"$out/soak.csv"
}

next="$interval"
while kill -0 "$dc_pid" 2>/dev/null; do
  sleep 1
  elapsed="$(awk -v s="$start" -v n="$(date +%s.%N)" 'BEGIN {print int(n - s)}')"
  if ((elapsed >= next)); then
    sample || break
    if ((elapsed < seconds)); then next=$((next + interval)); else next=$((elapsed + 1)); fi
  fi
done
rc=0
wait "$dc_pid" || rc=$?
dc_pid=""
((rc == 0)) || die "datacrumbs run failed (exit $rc): $(tail -n2 "$out/tracer.err")"
grep -q '^calls=' "$out/tracer.out" || die "no result line from soak_load in $out/tracer.out"

python3 "$repo/bench/soak_summary.py" "$out/soak.csv" "$out/summary.json" "$out/tracer.out" \
  --verdict "$out/verdict" --malloc-info "$out/malloc.xml" >"$out/table.md"
csv_kb=$(($(stat -c %s "$out/soak.csv") / 1024))
{
  echo "\`sudo SOAK_SECONDS=$seconds SOAK_RATE=$rate bash bench/soak.sh --write-doc\` on $(machine_line);"
  echo "scratch directory on $(stat -f -c %T "$(dirname "$scratch")") ($(dirname "$scratch")); load average $load_before before"
  echo "and $(cut -d' ' -f1-3 /proc/loadavg) after ($(date -u '+%Y-%m-%d %H:%M UTC'), datacrumbs $(git -C "$repo" rev-parse --short HEAD 2>/dev/null || echo unknown)):"
  echo "a shared machine, so the rate is a floor for a quiet one. Samples every $interval s: \`$out/soak.csv\` (${csv_kb} KiB)."
  echo
  cat "$out/table.md"
} >"$out/section.md"
cat "$out/section.md"
((write_doc)) && write_doc_section soak "$out/section.md" "$repo/docs/reliability.md"
[[ "$(cat "$out/verdict")" == ok ]] || exit 3
exit 0
