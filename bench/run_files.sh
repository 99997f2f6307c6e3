#!/usr/bin/env bash
# Many files, each opened and closed in turn (bench/files_storm.c), beside Darshan: the case that
# costs a per-file counter most, a new counter per file and operation in every interval (a
# build, a workflow's many small files). For each file count, interleaved rounds of the storm
# untraced, under Darshan 3.5 (counters), under `datacrumbs run` (trace mode, every layer) and
# under `datacrumbs run --mode profile` (every layer).
#
# usage: sudo bash bench/run_files.sh [--quick] [--write-doc] [--rounds R] [OPS]
#
# OPS (default 400000) open+close pairs a run, over each of FILE_COUNTS files (default
# 1000,30000,100000). --quick (CI-sized): 20000 over 1000 and 5000 files, one round. Prints one
# table per file count (medians of per-round ratios against untraced, every round) and the
# counts checked. Ground truth: `strace -f -c` of the untraced storm (its openat and close calls):
# trace mode must count each with none lost; profile mode each, less at most the calls its
# summary says were lost (of any call); Darshan's POSIX_OPENS over its records are reported
# beside OPS. --write-doc puts the tables into docs/benchmarks.md. A benchmark, not a test: it exits
# non-zero on errors and wrong counts, never on a ratio.
set -euo pipefail

# shellcheck source=bench/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

ops=400000
rounds=3
file_counts=1000,30000,100000
quick_defaults "ops=20000 rounds=1 file_counts=1000,5000" "$@"
parse_bench_args 17 ops "$@"
require_tool_and_root
command -v strace >/dev/null || die "strace is required (bash scripts/install-deps.sh)"
mountpoint -q /sys/kernel/tracing || mount -t tracefs nodev /sys/kernel/tracing

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
cc -O2 -Wall -Wextra -o "$tmp/files_storm" "$repo/bench/files_storm.c"
load_before="$(cut -d' ' -f1-3 /proc/loadavg)"
log "building or finding Darshan (once per machine)"
darshan="$(darshan_prefix counters)"
configs=(untraced darshan dc-trace dc-profile)
failed=0

# calls_of FILE: "OPENAT CLOSE" from the summary JSON FILE (counted, then lost).
calls_of() {
  python3 - "$1" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
posix = j["layers"].get("POSIX", {})
print(posix.get("openat", {}).get("count", 0) + posix.get("close", {}).get("count", 0), j["events"]["lost"])
PY
}

# run_config CONFIG DIR FILES ROUND: one storm; its row goes to $tmp/rows.FILES, its counts to
# $tmp/check.FILES.
run_config() {
  local cfg="$1" dir="$2" files="$3" r="$4" cmd=("$tmp/files_storm" "$2" "$3" "$ops") counted lost
  rm -f "$tmp/s.json" "$tmp/time"
  case "$cfg" in
    untraced) ;;
    darshan)
      [[ -n "$darshan" ]] || { log "Darshan not built: $(tail -n1 "$tmp/err.darshan-counters")"; return 0; }
      darshan_command "$darshan" "$tmp/dlog" 0 "${cmd[@]}"
      cmd=("${darshan_cmd[@]}") ;;
    dc-trace) cmd=("$dc" run -o "$tmp/t.pfw.gz" --summary "$tmp/s.json" -- "${cmd[@]}") ;;
    dc-profile) cmd=("$dc" run --mode profile -o "$tmp/t.pfw.gz" --summary "$tmp/s.json" -- "${cmd[@]}") ;;
  esac
  timed "$tmp/time" "${cmd[@]}" >"$tmp/out" 2>"$tmp/err" || { log "$cfg failed: $(tail -n1 "$tmp/err")"; failed=1; return 0; }
  local ns wall cpu
  ns="$(sed -n 's/^ns_per_op=\([0-9.]*\) .*/\1/p' "$tmp/out")"
  read -r wall cpu <"$tmp/time"
  printf '%s\t%d\t%s\t%s\t%s\n' "$cfg" "$r" "$ns" "$wall" "$cpu" >>"$tmp/rows.$files"
  case "$cfg" in
    darshan)
      # Past its record memory Darshan keeps no new file: its log says so (parsed anyway).
      "$darshan/bin/darshan-parser" --show-incomplete "$tmp"/dlog/*.darshan >"$tmp/parsed" 2>&1 || true
      counted="$(awk '$4 == "POSIX_OPENS" {n += $5} END {print n + 0}' "$tmp/parsed")"
      printf '%s\tPOSIX_OPENS %s of %s opens%s\n' "$cfg" "$counted" "$ops" "$(grep -q 'incomplete data' "$tmp/parsed" &&
        echo ' (its log: "The POSIX module contains incomplete data", out of record memory)')" >>"$tmp/check.$files" ;;
    dc-*)
      read -r counted lost < <(calls_of "$tmp/s.json")
      printf '%s\tcalls counted %s, lost %s (strace: %s)\n' "$cfg" "$counted" "$lost" "$truth" >>"$tmp/check.$files"
      # Trace mode: every call. Profile mode: every call, less those lost (its losses are of any
      # call, the storm's few others among them).
      if [[ "$cfg" == dc-trace ]] && ((counted != truth || lost != 0)) ||
        ((counted > truth || counted + lost < truth)); then
        log "$cfg over $files files: $counted calls counted, $lost lost, strace says $truth"
        failed=1
      fi ;;
  esac
}

: >"$tmp/tables.md"
IFS=, read -r -a counts <<<"$file_counts"
for files in "${counts[@]}"; do
  dir="$tmp/files.$files"
  mkdir -p "$dir"
  "$tmp/files_storm" "$dir" "$files" 0
  # Ground truth: the storm's own openat and close calls (the loader's among them).
  strace -f -c -o "$tmp/strace" "$tmp/files_storm" "$dir" "$files" "$ops" >/dev/null
  truth="$(awk '$NF == "openat" || $NF == "close" {n += $4} END {print n + 0}' "$tmp/strace")"
  : >"$tmp/rows.$files"
  for ((r = 1; r <= rounds; r++)); do
    for ((k = 0; k < ${#configs[@]}; k++)); do
      cfg="${configs[$(((k + r - 1) % ${#configs[@]}))]}"
      log "$files files, round $r/$rounds: $cfg"
      run_config "$cfg" "$dir" "$files" "$r"
    done
  done
  sort -u "$tmp/check.$files" >"$tmp/notes.$files"
  {
    echo "### $ops opens and closes over $files files"
    echo
    python3 "$repo/bench/summarize.py" "$tmp/rows.$files" --configs "$(
      IFS=,
      echo "${configs[*]}"
    )" --notes "$tmp/notes.$files"
    echo
  } >>"$tmp/tables.md"
  rm -rf "$dir"
done
cat "$tmp/tables.md"

if ((write_doc)); then
  rev="$(git -C "$repo" rev-parse --short HEAD 2>/dev/null || echo unknown)"
  {
    cat <<EOF
## Many files: open and close storms beside Darshan (\`bench/run_files.sh\`)

Workload: \`bench/files_storm.c\`, $ops × \`open\` + \`close\` cycling through FILE_COUNTS
existing files; with many files every profile interval sees a new counter per file and
operation. "× untraced": medians of per-round ratios against the untraced storm of the same
round ($rounds interleaved rounds): the loop's ns per open+close, and the whole command's wall
time. Notes: the calls each run counted (datacrumbs: openat + close in its summary, plus those it
says were lost, against \`strace -f -c\` of the untraced storm; Darshan: POSIX_OPENS over its
records).

- Machine: $(machine_line)
- Date: $(date -u '+%Y-%m-%d %H:%M UTC'); datacrumbs commit $rev
- Load average before the run: $load_before; after: $(cut -d' ' -f1-3 /proc/loadavg)
- Reproduce: \`sudo bash bench/run_files.sh --write-doc\` (CI-sized: \`--quick\`)

EOF
    cat "$tmp/tables.md"
  } >"$tmp/section.md"
  write_doc_section files "$tmp/section.md"
  log "wrote its section of docs/benchmarks.md"
fi
exit "$failed"
