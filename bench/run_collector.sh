#!/usr/bin/env bash
# The collector alone: records the ring of a traced pread storm (DATACRUMBS_RECORD_RING), then
# replays it with build/bin/collector_bench through decoder, writer and summary into a .pfw.gz,
# for igzip (ISA-L) levels and compression worker counts, in interleaved rounds.
#
# usage: sudo bash bench/run_collector.sh [--write-doc] [--quick] [--rounds R] [OPS]
#
# Prints a markdown section on stdout; --write-doc also puts it into docs/benchmarks.md.
# A benchmark, not a test: it fails on errors (lost events, a replay that fails), never on a number.
set -euo pipefail

# shellcheck source=bench/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

ops=500000
rounds=3
quick_defaults "ops=20000 rounds=1" "$@"
parse_bench_args 9 ops "$@"
require_tool_and_root
collector_bench_path

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
record_storm "$tmp/ring" "$ops"

# level, workers, line index (built by the writer, or none)
configs=("1 0 yes" "1 1 yes" "1 2 yes" "1 1 no" "0 1 yes" "2 1 yes" "3 1 yes")
field() { tr ' ' '\n' <"$1" | sed -n "s/^$2=//p"; }
median() { sort -g | awk '{v[NR]=$1} END {print (NR%2 ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2)}'; }
for ((r = 1; r <= rounds; r++)); do
  log "round $r/$rounds"
  for c in "${configs[@]}"; do
    read -r level threads index <<<"$c"
    no_index=()
    if [[ "$index" == no ]]; then no_index=(--no-index); fi
    "$replay" "$tmp/ring" "$tmp/out.pfw.gz" --level "$level" --threads "$threads" "${no_index[@]}" >"$tmp/line" ||
      die "replay at level $level with $threads workers failed"
    gzip -t "$tmp/out.pfw.gz" || die "the replayed trace is not whole gzip"
    for f in wall_s cpu_s events_per_s_wall events_per_s_cpu end_s gz_bytes events text_bytes; do
      field "$tmp/line" "$f" >>"$tmp/$level.$threads.$index.$f"
    done
  done
done

out="$tmp/section.md"
{
  echo "## Collector replay (\`bench/run_collector.sh\`)"
  echo
  echo "Reproduce: \`sudo bash bench/run_collector.sh --write-doc\` (CI-sized: \`--quick\`)."
  echo "Machine: $(nproc) CPUs, clocksource $(cat /sys/devices/system/clocksource/clocksource0/current_clocksource),"
  echo "load average $(cut -d' ' -f1-3 /proc/loadavg) at the end, this session's scheduler autogroup: \`$(cat /proc/self/autogroup 2>/dev/null || echo none)\`"
  echo "(with autogroups, processes of other sessions share the CPUs with this one group by group, whatever their load)."
  echo "Recording: \`pread_storm\` of $ops ops, 0 lost;"
  echo "$(median <"$tmp/1.0.yes.events") events, $(median <"$tmp/1.0.yes.text_bytes") bytes of trace text; $rounds round(s), medians."
  echo
  echo "| igzip level | workers | line index | wall s | CPU s | M events/s (wall) | M events/CPU-s | gzip bytes | end s |"
  echo "|---:|---:|---|---:|---:|---:|---:|---:|---:|"
  for c in "${configs[@]}"; do
    read -r level threads index <<<"$c"
    m() { median <"$tmp/$level.$threads.$index.$1"; }
    printf '| %s | %s | %s | %s | %s | %.2f | %.2f | %.0f | %s |\n' "$level" "$threads" "$index" "$(m wall_s)" "$(m cpu_s)" \
      "$(awk -v v="$(m events_per_s_wall)" 'BEGIN{print v/1e6}')" \
      "$(awk -v v="$(m events_per_s_cpu)" 'BEGIN{print v/1e6}')" "$(m gz_bytes)" "$(m end_s)"
  done
  # The best median wall rate of the configs with (yes) or without (no) the line index.
  best() {
    for c in "${configs[@]}"; do
      read -r l t i <<<"$c"
      if [[ "$i" == "$1" ]]; then median <"$tmp/$l.$t.$i.events_per_s_wall"; fi
    done | sort -g | tail -n1
  }
  target() { awk -v v="$1" 'BEGIN {printf "%.2f M, %s", v/1e6, (v >= 3e6 ? "met" : "MISSED")}'; }
  echo
  echo "- Target ≥ 3 M events/s end to end to \`.pfw.gz\` (best wall rate with the line index): $(target "$(best yes)")."
  echo "- The same without the line index (\`run --no-index\`; the trace alone): $(target "$(best no)")."
  echo "- Wall times on a loaded machine are mostly waiting for a CPU; M events/CPU-s is the per-core rate."
  echo "- end s: from the last batch to the closed trace with its line index (the writer builds the index's"
  echo "  rows while it writes, on a nice-19 thread whose CPU time is in the CPU s column)."
} >"$out"
cat "$out"
((write_doc)) && write_doc_section collector "$out"
exit 0
