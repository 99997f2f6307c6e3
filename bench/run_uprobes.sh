#!/usr/bin/env bash
# User-space probes: what one probed call costs (entry + return programs), and how long
# attaching ~10,000 functions takes (one uprobe_multi link per binary and direction).
#
# usage: sudo bash bench/run_uprobes.sh [--write-doc] [--rounds R] [CALLS]
#
# Prints a markdown section on stdout; --write-doc also puts it into docs/benchmarks.md.
# A benchmark, not a test: it fails on errors (a run that fails, events missing), never on
# a number.
set -euo pipefail

# shellcheck source=bench/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

calls=200000
forks=100
rounds=5
parse_bench_args 9 calls "$@"
require_tool_and_root

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
cc -O2 -Wall -o "$tmp/uprobe_target" "$repo/bench/uprobe_target.c"
cat >"$tmp/one.yaml" <<YAML
capture_probes:
  - name: BENCH
    probe: uprobe
    file: $tmp/uprobe_target
    regex: bench_probed_call
YAML
# Every function of four big libraries: well over 10,000 functions.
cat >"$tmp/many.yaml" <<YAML
capture_probes:
  - {name: CXX, probe: uprobe, file: libstdc++.so.6, regex: ".*"}
  - {name: LIBC, probe: uprobe, file: libc.so.6, regex: ".*"}
  - {name: HDF5, probe: uprobe, file: /usr/lib/x86_64-linux-gnu/hdf5/openmpi/libhdf5.so, regex: ".*"}
  - {name: MPI, probe: uprobe, file: libmpi.so.40, regex: ".*"}
  - {name: CRYPTO, probe: uprobe, file: libcrypto.so.3, regex: ".*"}
YAML

json() { python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"; }
ns_of() { sed -n 's/^ns_per_op=\([0-9.]*\) .*/\1/p' "$1"; }
median() { sort -g | awk '{v[NR]=$1} END {print (NR%2 ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2)}'; }

for ((r = 1; r <= rounds; r++)); do
  log "round $r/$rounds"
  "$tmp/uprobe_target" "$calls" >"$tmp/u.out"
  ns_of "$tmp/u.out" >>"$tmp/ns.untraced"
  "$dc" run --config "$tmp/one.yaml" -o "$tmp/t.pfw.gz" --summary "$tmp/s.json" -- "$tmp/uprobe_target" "$calls" \
    >"$tmp/t.out" 2>"$tmp/t.err" || die "traced run failed: $(tail -n1 "$tmp/t.err")"
  ns_of "$tmp/t.out" >>"$tmp/ns.traced"
  got="$(json "$tmp/s.json" 'd["layers"].get("BENCH", {}).get("bench_probed_call", {}).get("count", 0)')"
  lost="$(json "$tmp/s.json" 'd["events"]["lost"]')"
  [[ "$got" == "$calls" && "$lost" == 0 ]] || die "expected $calls events and 0 lost, got $got and $lost"
  "$dc" run --config "$tmp/many.yaml" -o "$tmp/m.pfw.gz" --summary "$tmp/m.json" -- true >/dev/null 2>"$tmp/m.err" ||
    die "attach run failed: $(tail -n1 "$tmp/m.err")"
  json "$tmp/m.json" 'd["uprobes"]["functions"]' >>"$tmp/functions"
  json "$tmp/m.json" 'len(d["uprobes"]["refused"])' >>"$tmp/refused"
  json "$tmp/m.json" 'd["uprobes"]["attach_ms"]' >>"$tmp/attach_ms"
  # A new process is held until its probes are attached: the cost per fork+exec, with the
  # shipped stdio probes against the same run without user-space probes.
  for cfg in stdio none; do
    args=(--config "$repo/etc/datacrumbs/configs/stdio.yaml")
    [[ "$cfg" == stdio ]] || args=(--layers syscall)
    start=$(date +%s%N)
    "$dc" run "${args[@]}" -o "$tmp/f.pfw.gz" --summary "$tmp/f.json" -- \
      sh -c "i=0; while [ \$i -lt $forks ]; do /bin/true; i=\$((i+1)); done" 2>"$tmp/f.err" ||
      die "fork run failed: $(tail -n1 "$tmp/f.err")"
    echo $(($(date +%s%N) - start)) >>"$tmp/forks.$cfg"
  done
done

untraced="$(median <"$tmp/ns.untraced")"
traced="$(median <"$tmp/ns.traced")"
per_call="$(awk -v t="$traced" -v u="$untraced" 'BEGIN {printf "%.2f", (t - u) / 1000}')"
functions="$(median <"$tmp/functions")"
refused="$(median <"$tmp/refused")"
attach="$(median <"$tmp/attach_ms")"
per_fn="$(awk -v a="$attach" -v n="$functions" 'BEGIN {printf "%.1f", a * 1000 / n}')"
hold_ms="$(awk -v a="$(median <"$tmp/forks.stdio")" -v b="$(median <"$tmp/forks.none")" -v n="$forks" \
  'BEGIN {printf "%.2f", (a - b) / n / 1e6}')"
{
  cat <<EOF
## User-space probes (\`bench/run_uprobes.sh\`)

- Machine: $(nproc) CPUs, kernel $(uname -r); $(date -u '+%Y-%m-%d %H:%M UTC'); commit $(git -C "$repo" rev-parse --short HEAD 2>/dev/null || echo unknown)
- Reproduce: \`sudo bash bench/run_uprobes.sh --write-doc\` (medians of $rounds rounds)

| measure | value |
|---|---:|
| empty function, untraced | $untraced ns/call |
| same function probed (entry + return, every call an event, 0 lost) | $traced ns/call |
| cost of one probed call | $per_call µs |
| functions attached (every function of libstdc++, libc, libhdf5, libmpi, libcrypto the kernel can probe; $refused refused) | $functions |
| time to attach them all for one process | $attach ms ($per_fn µs per function) |
| added start-up time of each new traced process (held until its stdio probes are attached) | $hold_ms ms |

Per-call cost: \`uprobe_target $calls\` calls \`bench_probed_call\` in a loop, timed inside
the program, untraced and under \`datacrumbs run --config\` with that one function probed.
Keep uprobes for calls that do real work (an fwrite, an H5Dwrite, an MPI-IO call), never for
hot per-byte or per-character paths: those belong to the system-call layer.

Attach time: \`datacrumbs run --config many.yaml -- true\`; the summary JSON's
\`uprobes.attach_ms\` is the time to attach every function for the traced command (one
\`uprobe_multi\` link per binary and direction, filtered by its pid), not counting reading the
ELF symbol tables. Target: ≤ 100 ms for 10,000 functions.

Start-up per process: probes are attached per traced process, so each process that joins the
trace at fork is stopped until its links exist. \`sh\` running \`/bin/true\` $forks times, traced
with the shipped \`stdio.yaml\` and with \`--layers syscall\` (no user-space probes): the
difference of the two wall times, divided by $forks.
EOF
} >"$tmp/section.md"
cat "$tmp/section.md"
if ((write_doc)); then
  write_doc_section uprobes "$tmp/section.md"
  log "wrote its section of docs/benchmarks.md"
fi
