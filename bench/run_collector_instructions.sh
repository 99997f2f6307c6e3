#!/usr/bin/env bash
# The collector's instructions per trace line, by stage: records the ring of a traced pread
# storm (every layer, and `--layers syscall`), replays each recording single-threaded with
# build/bin/collector_bench under callgrind (no compression workers, no line index, a fixed
# clock offset), counting only inside the replay's decoding, and splits the count into decoding,
# the summary, formatting and compression. A replay's wall time varies by half from run to run
# on a shared VM; its instruction count does not, so two builds compare exactly: run this once
# per build (DATACRUMBS_BIN names the tool; collector_bench is taken from beside it).
#
# usage: sudo bash bench/run_collector_instructions.sh [--write-doc] [--quick] [OPS]
#
# OPS: preads recorded (default 50000; --quick: 5000). Prints a markdown section on stdout;
# --write-doc also puts it into docs/benchmarks.md. A benchmark, not a test: it fails on errors
# (a recording that lost events, a replay that failed), never on a number.
set -euo pipefail

# shellcheck source=bench/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

ops=50000
quick_defaults "ops=5000" "$@"
parse_bench_args 14 ops "$@"
require_tool_and_root
collector_bench_path
command -v valgrind >/dev/null || die "valgrind is not installed (bash scripts/install-deps.sh)"

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

# count LAYERS LAYER_OPTION...: records a storm traced with the options, replays it under
# callgrind and prints one table row.
count() {
  local name="$1"
  shift
  record_storm "$tmp/ring.$name" "$ops" "$@" --keep-loaded 0
  valgrind --tool=callgrind --callgrind-out-file="$tmp/cg.$name" --toggle-collect='dc::decode_batch*' \
    "$replay" "$tmp/ring.$name" "$tmp/out.pfw.gz" --level 1 --threads 0 --no-index --clock-offset 0 \
    >"$tmp/line.$name" 2>"$tmp/vg.$name" || die "the replay ($name) failed: $(tail -n1 "$tmp/vg.$name")"
  callgrind_annotate --inclusive=yes "$tmp/cg.$name" >"$tmp/ann.$name" 2>/dev/null ||
    die "callgrind_annotate failed"
  python3 - "$name" "$tmp/ann.$name" "$tmp/line.$name" <<'EOF'
import re, sys
name, ann, line = sys.argv[1:4]
fields = dict(kv.split("=") for kv in open(line).read().split())
lines = int(fields["events"])
total, by = 0, {}
stages = {
    "write": "dc::pfw_writer::write_event(",
    "compress": "dc::gzip_member_writer::flush_member(",
    "summary": "dc::summary_builder::add(",
}
for text in open(ann):
    m = re.match(r"\s*([\d,]+) \([ \d.]+%\)\s+(.*)", text)
    if not m:
        continue
    count, what = int(m.group(1).replace(",", "")), m.group(2)
    if what.startswith("PROGRAM TOTALS"):
        total = count
    for stage, fn in stages.items():
        if fn in what and stage not in by:
            by[stage] = count
if not total or len(by) != len(stages) or lines == 0:
    sys.exit(f"{name}: the profile lacks a stage ({sorted(by)}) or lines ({lines})")
# Compression runs inside the writer (a member is compressed when it is full); decoding is the
# rest: the records read, events built, processes and files named, and the live views.
fmt = by["write"] - by["compress"]
decode = total - by["write"] - by["summary"]
per = lambda v: f"{v / lines:,.0f}"
print(f"| {name} | {lines:,} | {per(total)} | {per(decode)} | {per(by['summary'])} | {per(fmt)} | {per(by['compress'])} |")
EOF
}

out="$tmp/section.md"
{
  echo "## The collector's instructions per line (\`bench/run_collector_instructions.sh\`)"
  echo
  echo "Reproduce: \`sudo bash bench/run_collector_instructions.sh --write-doc\` (CI-sized: \`--quick\`)."
  echo "A recording of a $ops-pread storm per configuration (0 lost), replayed single-threaded by"
  echo "\`collector_bench\` under callgrind (\`--threads 0 --no-index --clock-offset 0\`), counting inside"
  echo "its decoding only; instructions per trace line written. Counts do not depend on the machine's"
  echo "load or clock (this one: $(nproc) CPUs, clocksource $(cat /sys/devices/system/clocksource/clocksource0/current_clocksource)); datacrumbs commit $(git -C "$repo" rev-parse --short HEAD 2>/dev/null || echo unknown)."
  echo
  echo "| recording | lines written | all | decode | summary | format | compress (igzip 1) |"
  echo "|---|---:|---:|---:|---:|---:|---:|"
  count "every layer"
  count "--layers syscall" --layers syscall
  echo
  echo "- decode: reading the records, building the events, naming processes and files; summary:"
  echo "  the run's totals, per-file tally and page-cache tally; format: the trace's JSON lines;"
  echo "  compress: igzip level 1 on the formatter's thread (a run does it on a worker thread)."
  echo "- With every layer, a buffered read's FS part is counted by the summary as an operation of"
  echo "  its own and written in its call's line (one line a call)."
} >"$out"
cat "$out"
((write_doc)) && write_doc_section collector-instructions "$out"
exit 0
