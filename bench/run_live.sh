#!/usr/bin/env bash
# What --print and --live cost the traced program: one pread(2) storm run untraced, traced,
# traced with --print to a file and traced with --live (stdout to a file), in interleaved rounds.
#
# usage: sudo bash bench/run_live.sh [--write-doc] [--rounds R] [OPS]
#
# Prints a markdown table (median ns/op per config, ratio to untraced and to traced) on stdout;
# --write-doc also puts it into docs/benchmarks.md. A benchmark, not a test: it fails on errors
# (a run that fails, --print lines that are not the trace's events), never on a ratio.
set -euo pipefail

# shellcheck source=bench/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

ops=1000000
rounds=5
parse_bench_args 9 ops "$@"
require_tool_and_root

load_before="$(cut -d' ' -f1-3 /proc/loadavg)"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
cc -O2 -Wall -Wextra -o "$tmp/pread_storm" "$repo/bench/pread_storm.c"
dd if=/dev/urandom of="$tmp/data" bs=1M count=64 status=none
storm=("$tmp/pread_storm" "$tmp/data" "$ops")
configs=(untraced traced traced+print traced+live)

json() { python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"; }
traced() { "$dc" run -o "$tmp/t.pfw.gz" --summary "$tmp/s.json" --no-index "$@" -- "${storm[@]}"; }

run_config() {
  case "$1" in
    untraced) "${storm[@]}" ;;
    traced) traced ;;
    traced+print)
      traced --print --print-file "$tmp/print.txt"
      local lines events
      lines=$(($(wc -l <"$tmp/print.txt") - 1))
      events="$(json "$tmp/s.json" 'd["events"]["written"]')"
      echo "$lines $events" >>"$tmp/printlines"
      [[ "$lines" == "$events" ]] || { echo "error: $lines --print lines for $events events" >&2; return 1; }
      ;;
    traced+live) traced --live >"$tmp/live.txt"; grep -c '^datacrumbs live' "$tmp/live.txt" >>"$tmp/frames" ;;
  esac
}

for ((r = 1; r <= rounds; r++)); do
  for cfg in "${configs[@]}"; do
    log "round $r/$rounds: $cfg"
    run_config "$cfg" >"$tmp/out" 2>"$tmp/err" || die "$cfg failed: $(tail -n2 "$tmp/err")"
    ns="$(sed -n 's/^ns_per_op=\([0-9.]*\) .*/\1/p' "$tmp/out" "$tmp/err" | head -n1)"
    [[ -n "$ns" ]] || ns="$(sed -n 's/^ns_per_op=\([0-9.]*\) .*/\1/p' "$tmp/live.txt" | head -n1)"
    [[ -n "$ns" ]] || die "$cfg: no ns_per_op line"
    echo "$ns" >>"$tmp/ns.$cfg"
    if [[ "$cfg" != untraced ]]; then
      json "$tmp/s.json" 'd["events"]["lost"]' >>"$tmp/lost.$cfg"
    fi
  done
done

median() { sort -g "$1" | awk '{v[NR]=$1} END {m=int((NR+1)/2); printf "%.1f", (NR%2 ? v[m] : (v[m]+v[m+1])/2)}'; }
range() { sort -g "$1" | awk 'NR==1{lo=$1} {hi=$1} END {printf "%s–%s", lo, hi}'; }
base="$(median "$tmp/ns.untraced")"
traced_ns="$(median "$tmp/ns.traced")"

{
  echo "## Live views: --print and --live on the pread storm (\`bench/run_live.sh\`)"
  echo
  echo "\`sudo bash bench/run_live.sh --write-doc --rounds $rounds $ops\` on $(uname -r), $(nproc) CPUs, clocksource"
  echo "$(cat /sys/devices/system/clocksource/clocksource0/current_clocksource), load average $load_before before and"
  echo "$(cut -d' ' -f1-3 /proc/loadavg) after ($(date -u +%Y-%m-%d)). $ops preads of 4 KiB per run, $rounds interleaved rounds;"
  echo "--print writes every event's line to a file, --live a frame a second to a file (stdout)."
  echo
  echo "| config | ns/op (median) | × untraced | × traced | runs, ns/op range | events lost |"
  echo "|---|---:|---:|---:|---|---:|"
  for cfg in "${configs[@]}"; do
    lost="—"
    [[ -s "$tmp/lost.$cfg" ]] && lost="$(awk '{s+=$1} END {print s}' "$tmp/lost.$cfg")"
    m="$(median "$tmp/ns.$cfg")"
    printf '| %s | %s | %s | %s | %s: %s | %s |\n' "$cfg" "$m" \
      "$(awk -v a="$m" -v b="$base" 'BEGIN {printf "%.2f×", a/b}')" \
      "$(awk -v a="$m" -v b="$traced_ns" 'BEGIN {printf "%.2f×", a/b}')" \
      "$(wc -l <"$tmp/ns.$cfg")" "$(range "$tmp/ns.$cfg")" "$lost"
  done
  echo
  echo "--print lines equalled the trace's events in every run ($(awk '{printf "%s%s", (NR>1?", ":""), $1}' "$tmp/printlines") lines);"
  echo "--live showed $(awk '{printf "%s%s", (NR>1?", ":""), $1}' "$tmp/frames") frames per run."
} >"$tmp/table.md"
cat "$tmp/table.md"
((write_doc)) && write_doc_section live "$tmp/table.md"
exit 0
