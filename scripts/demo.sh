#!/usr/bin/env bash
# First README command: install, build, and trace a small demo workload (as root).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh
out=build/demo
rm -rf "$out" && mkdir -p "$out/work"
work=$(realpath "$out/work")
# A small pipeline of real tools: generate, copy, sort, compress, checksum, clean up.
build/bin/datacrumbs run -o "$out/demo.pfw.gz" --summary "$out/demo-summary.json" -- \
  sh -c "seq 1 200000 > $work/numbers.txt && cp $work/numbers.txt $work/copy.txt &&
         sort -r $work/copy.txt > $work/sorted.txt && gzip -k $work/sorted.txt &&
         sha256sum $work/*.txt > /dev/null && rm $work/copy.txt"
echo "demo trace: $out/demo.pfw.gz (zcat it, or open it in https://ui.perfetto.dev)"
echo "demo summary (JSON): $out/demo-summary.json"
# The answer from the trace: Darshan-style counters, amplification and diagnostics as text, plus
# the same as JSON, CSV tables and an offline HTML report with plots.
build/bin/datacrumbs analyze "$out/demo.pfw.gz" --json "$out/report.json" --csv "$out/csv" \
  --html "$out/report.html" --no-progress > "$out/report.txt"
echo "demo analysis: $out/report.txt, $out/report.json, $out/report.html, $out/csv/"
