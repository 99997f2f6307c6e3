#!/usr/bin/env bash
# Analyze throughput: `datacrumbs analyze` on a >= 10 M-event trace set (four traced pread
# storms) with --threads 1 and 2, against `zcat` of the same files (decompression alone, the
# floor), with peak memory, and the Dask path (python3 -m datacrumbs_dask) with 1 and 2 workers.
#
# usage: sudo bash bench/run_analyze.sh [--quick] [--write-doc] [--rounds R] [EVENTS]
#
# EVENTS (default 10000000; --quick: 1000000 and one round) is the least number of events the
# traces hold. They are written by `datacrumbs run` of bench/pread_storm.c into
# $DATACRUMBS_BENCH_DIR/EVENTS (default /var/tmp/datacrumbs-bench-analyze/EVENTS, outside the
# repository) and reused by later runs. The Dask package is looked up in $DATACRUMBS_DASK_PATH
# (default: the repository's python/). Prints a markdown table on stdout; --write-doc puts it
# into docs/benchmarks.md. A benchmark, not a test: it exits non-zero on errors (a run that
# fails, an event count that differs from the traces' own end records), never on a target.
set -euo pipefail

# shellcheck source=bench/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

events=10000000
rounds=3
quick_defaults "events=1000000 rounds=1" "$@"
parse_bench_args 14 events "$@"
traces=4

require_tool_and_root
[[ -x /usr/bin/time ]] || die "/usr/bin/time (GNU time) is required for peak memory"
command -v python3 >/dev/null || die "python3 is required"
data_dir="${DATACRUMBS_BENCH_DIR:-/var/tmp/datacrumbs-bench-analyze}/$events"
dask_path="${DATACRUMBS_DASK_PATH:-$repo/python}"
mkdir -p "$data_dir"
load_before="$(cut -d' ' -f1-3 /proc/loadavg)"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
failed=0

# The events a trace says it wrote: its end record's events_written + counters_written.
end_events() {
  zcat "$1" | python3 -c '
import json, sys
n = 0
for line in sys.stdin:
    if "\"name\":\"end\"" in line:
        a = json.loads(line.rstrip().rstrip(","))["args"]
        n += a["events_written"] + a["counters_written"]
print(n)'
}

# Traces: reused when the stamp says they hold enough events, else written afresh.
stamp="$data_dir/stamp"
if [[ -s "$stamp" ]] && (($(cut -d' ' -f1 "$stamp") >= events)); then
  log "reusing the traces in $data_dir ($(cut -d' ' -f1 "$stamp") events)"
else
  rm -f "$data_dir"/*.pfw.gz "$stamp"
  cc -O2 -Wall -Wextra -o "$tmp/pread_storm" "$repo/bench/pread_storm.c"
  dd if=/dev/urandom of="$tmp/data" bs=1M count=64 status=none
  # Each pread is a POSIX event and its FS event: two events per op, and a few more.
  ops=$(((events + 2 * traces - 1) / (2 * traces)))
  for i in $(seq 1 "$traces"); do
    log "tracing pread storm $i/$traces ($ops ops)"
    "$dc" run -o "$data_dir/storm-$i.pfw.gz" -- "$tmp/pread_storm" "$tmp/data" "$ops" >"$tmp/run.out" 2>&1 ||
      die "datacrumbs run failed: $(tail -n1 "$tmp/run.out")"
  done
  total=0 raw=0
  for f in "$data_dir"/*.pfw.gz; do
    total=$((total + $(end_events "$f")))
    raw=$((raw + $(zcat "$f" | wc -c)))
  done
  ((total >= events)) || die "the traces hold $total events, fewer than $events"
  echo "$total $raw" >"$stamp"
fi
read -r total raw <"$stamp"
files=("$data_dir"/*.pfw.gz)
gz_bytes="$(cat "${files[@]}" | wc -c)"

dask_ok=0
if PYTHONPATH="$dask_path" /usr/bin/python3 -c 'import datacrumbs_dask, distributed' 2>/dev/null; then
  dask_ok=1
else
  log "no datacrumbs_dask package importable from $dask_path (with python3-distributed): Dask rows skipped"
fi

# measure NAME EXPECT_JSON CMD...: one timed run of CMD; appends "wall user sys max_rss_kb" to
# $tmp/t.NAME. With EXPECT_JSON, CMD wrote the report to $tmp/NAME.json and its run.events +
# run.counters (X and C lines) must equal the traces' own count.
measure() {
  local name="$1" json="$2"
  shift 2
  if ! /usr/bin/time -f "%e %U %S %M" -o "$tmp/time.out" "$@" >"$tmp/out.$name" 2>"$tmp/err.$name"; then
    log "$name failed: $(tail -n1 "$tmp/err.$name")"
    failed=1
    return 0
  fi
  if ((json)); then
    local seen
    seen="$(python3 -c 'import json,sys; r = json.load(open(sys.argv[1]))["run"]; print(r["events"] + r["counters"])' "$tmp/$name.json")"
    if [[ "$seen" != "$total" ]]; then
      log "$name counted $seen events, the traces' end records $total"
      failed=1
    fi
  fi
  cat "$tmp/time.out" >>"$tmp/t.$name"
}

configs=(zcat analyze-t1 analyze-t2)
((dask_ok)) && configs+=(dask-w1 dask-w2)
for r in $(seq 1 "$rounds"); do
  log "round $r/$rounds"
  measure zcat 0 sh -c 'zcat "$@" >/dev/null' sh "${files[@]}"
  for t in 1 2; do
    measure "analyze-t$t" 1 "$dc" analyze "$data_dir" --threads "$t" --json "$tmp/analyze-t$t.json"
  done
  if ((dask_ok)); then
    for w in 1 2; do
      measure "dask-w$w" 1 env PYTHONPATH="$dask_path" /usr/bin/python3 -m datacrumbs_dask "$data_dir" \
        --workers "$w" --threads 1 --datacrumbs "$dc" --json "$tmp/dask-w$w.json"
    done
  fi
done

# The table: medians over rounds; per core = events/s over the cores the config was given.
python3 - "$tmp" "$total" "$raw" "$gz_bytes" "$rounds" "${configs[@]}" >"$tmp/table.md" <<'PY'
import statistics, sys
tmp, total, raw, gz, rounds, configs = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), sys.argv[5], sys.argv[6:]
cores = {"zcat": 1, "analyze-t1": 1, "analyze-t2": 2, "dask-w1": 1, "dask-w2": 2}
what = {"zcat": "`zcat FILES > /dev/null`", "analyze-t1": "`datacrumbs analyze --threads 1`",
        "analyze-t2": "`datacrumbs analyze --threads 2`", "dask-w1": "`python3 -m datacrumbs_dask --workers 1`",
        "dask-w2": "`python3 -m datacrumbs_dask --workers 2`"}
runs = {}
for c in configs:
    try:
        rows = [list(map(float, l.split())) for l in open(f"{tmp}/t.{c}")]
    except FileNotFoundError:
        rows = []
    if rows:
        runs[c] = {"wall": statistics.median(r[0] for r in rows), "cpu": statistics.median(r[1] + r[2] for r in rows),
                   "rss": max(r[3] for r in rows) / 1024, "n": len(rows), "lo": min(r[0] for r in rows),
                   "hi": max(r[0] for r in rows)}
z = runs.get("zcat")
print(f"{total:,} events in 4 traces: {gz / 2**20:,.0f} MiB gzip, {raw / 2**20:,.0f} MiB of JSON lines; "
      f"{rounds} round(s), medians.\n")
print("| config | wall s (range) | M events/s | M events/s per core | CPU s | M events per CPU-s | peak RSS MiB | time-rate vs zcat |")
print("|---|---:|---:|---:|---:|---:|---:|---:|")
for c in configs:
    if c not in runs:
        print(f"| {what[c]} | failed | | | | | | |")
        continue
    r = runs[c]
    rate = total / r["wall"] / 1e6
    vs = f"{z['wall'] / r['wall']:.2f}×" if z else "—"
    print(f"| {what[c]} | {r['wall']:.2f} ({r['lo']:.2f}–{r['hi']:.2f}) | {rate:.2f} | {rate / cores[c]:.2f} | "
          f"{r['cpu']:.2f} | {total / r['cpu'] / 1e6 if r['cpu'] else 0:.2f} | {r['rss']:.0f} | {vs} |")
print()
a1, a2 = runs.get("analyze-t1"), runs.get("analyze-t2")
def verdict(ok):
    return "met" if ok else "MISSED"
if a1:
    per_core = total / a1["wall"] / 1e6
    print(f"- Target ≥ 2 M events/s per core (`--threads 1`): {per_core:.2f} M, {verdict(per_core >= 2)}.")
    if z:
        ratio = z["wall"] / a1["wall"]
        print(f"- Target ≥ 0.5× zcat's time-rate (`--threads 1`): {ratio:.2f}×, {verdict(ratio >= 0.5)}.")
if a1 and a2:
    print(f"- Scaling `--threads` 1 → 2: {a1['wall'] / a2['wall']:.2f}× faster; "
          f"peak RSS {a1['rss']:.0f} / {a2['rss']:.0f} MiB (streaming: bounded by chunks in flight, not the trace).")
d1, d2 = runs.get("dask-w1"), runs.get("dask-w2")
if d1 and d2:
    print(f"- Dask 1 → 2 workers: {d1['wall']:.2f} s → {d2['wall']:.2f} s ({d1['wall'] / d2['wall']:.2f}×); "
          f"its time includes starting the LocalCluster.")
PY

cpu="$(lscpu | sed -n 's/^Model name: *//p' | head -n1)"
clock="$(cat /sys/devices/system/clocksource/clocksource0/current_clocksource)"
{
  echo "## Analyze throughput (\`bench/run_analyze.sh\`)"
  echo
  echo "Reproduce: \`sudo bash bench/run_analyze.sh --write-doc\` (CI-sized: \`--quick\`)."
  echo "Machine: $cpu, $(nproc) CPUs, $(free -g | awk '/^Mem:/ {print $2}') GiB memory, kernel $(uname -r),"
  echo "clocksource $clock, load average at start $load_before."
  echo
  cat "$tmp/table.md"
} >"$tmp/section.md"
cat "$tmp/section.md"
if ((write_doc)); then
  write_doc_section analyze "$tmp/section.md"
  log "wrote docs/benchmarks.md"
fi
exit "$failed"
