#!/usr/bin/env bash
# A/B: two builds of datacrumbs on the pread storm (bench/pread_storm.c), interleaved rounds:
# A and B with every layer, B with --layers syscall, and the storm untraced. For a change's own
# cost, measured beside the build before it on the same machine in the same run.
#
# usage: sudo DATACRUMBS_A=OLD/bin/datacrumbs [DATACRUMBS_BIN=NEW] [DATACRUMBS_AB_OPTS=...]
#        bash bench/run_ab.sh [--quick] [--write-doc] [--rounds R] [OPS]
#
# B is DATACRUMBS_BIN (default build/bin/datacrumbs); A defaults to B (--quick, in CI, checks
# that the script runs). Build A from an older commit in a worktree: git worktree add /tmp/a REV
# && cmake -S /tmp/a -B /tmp/a/build -G Ninja && ninja -C /tmp/a/build datacrumbs. Prints a
# markdown table (medians of per-round ratios, raw rounds); --write-doc puts it in
# docs/performance.md (section ab). DATACRUMBS_AB_OPTS: more `datacrumbs run` options for
# every traced config (e.g. "--mode profile" compares the two builds in profile mode). Exits non-zero when a run fails or loses events.
set -euo pipefail

# shellcheck source=bench/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

ops=1000000
rounds=6
quick_defaults "ops=20000 rounds=1" "$@"
parse_bench_args 13 ops "$@"
require_tool_and_root
a="${DATACRUMBS_A:-$dc}"
read -r -a opts <<<"${DATACRUMBS_AB_OPTS:-}"
[[ -x "$a" ]] || die "DATACRUMBS_A=$a is not an executable"

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
cc -O2 -Wall -Wextra -o "$tmp/pread_storm" "$repo/bench/pread_storm.c"
dd if=/dev/urandom of="$tmp/data" bs=1M count=64 status=none
configs=(a-default b-default b-syscall untraced)
raw="$tmp/raw.txt"
: >"$raw"
for ((r = 1; r <= rounds; r++)); do
  for cfg in "${configs[@]}"; do
    case "$cfg" in
      a-default) cmd=("$a" run "${opts[@]}" -o "$tmp/t.pfw.gz" --summary "$tmp/s.json" --) ;;
      b-default) cmd=("$dc" run "${opts[@]}" -o "$tmp/t.pfw.gz" --summary "$tmp/s.json" --) ;;
      b-syscall) cmd=("$dc" run "${opts[@]}" --layers syscall -o "$tmp/t.pfw.gz" --summary "$tmp/s.json" --) ;;
      untraced) cmd=() ;;
    esac
    log "round $r/$rounds: $cfg"
    rm -f "$tmp/s.json"
    timed "$tmp/time" "${cmd[@]}" "$tmp/pread_storm" "$tmp/data" "$ops" >"$tmp/out" 2>"$tmp/err" ||
      die "$cfg failed: $(tail -3 "$tmp/err")"
    ns="$(sed -n 's/^ns_per_op=\([0-9.]*\).*/\1/p' "$tmp/out")"
    events="- -"
    if [[ "$cfg" != untraced ]]; then
      events="$(python3 -c 'import json, sys; e = json.load(open(sys.argv[1]))["events"]; print(e["written"], e["lost"])' "$tmp/s.json")"
      [[ "${events#* }" == 0 ]] || die "$cfg lost events: $events"
    fi
    echo "$r $cfg $ns $(cat "$tmp/time") $events" >>"$raw"
  done
done

python3 - "$raw" "$(machine_line)" "$a" "$dc" "$ops" "${DATACRUMBS_AB_OPTS:-}" >"$tmp/section.md" <<'PY'
import statistics, sys
raw, machine, a, b, ops, opts = sys.argv[1:7]
rows = [l.split() for l in open(raw)]
by = {}
for r, cfg, ns, wall, cpu, written, lost in rows:
    by.setdefault(int(r), {})[cfg] = (float(ns), float(wall), float(cpu), written)
def med(f):
    return statistics.median(f(v) for v in by.values())
print(f"Machine: {machine}. A = `{a}`, B = `{b}`; {ops} preads per run, {len(by)} interleaved rounds"
      + (f"; every traced run with `{opts}`" if opts else "") + ".\n")
print("| config | ns/op (median) | loop × untraced | loop × B syscall | wall s | CPU s | events |")
print("|---|---:|---:|---:|---:|---:|---:|")
for cfg in ("a-default", "b-default", "b-syscall", "untraced"):
    print(f"| {cfg} | {med(lambda v: v[cfg][0]):,.1f} | {med(lambda v: v[cfg][0] / v['untraced'][0]):.2f} | "
          f"{med(lambda v: v[cfg][0] / v['b-syscall'][0]):.2f} | {med(lambda v: v[cfg][1]):.2f} | "
          f"{med(lambda v: v[cfg][2]):.2f} | {by[1][cfg][3]} |")
# The spread and a sign count beside the median: on a host whose rounds move by 10 %, a
# median of 0.97 with B faster in 4 of 8 rounds is no result.
ratios = [v['b-default'][0] / v['a-default'][0] for v in by.values()]
print(f"\nB default ÷ A default, loop: {statistics.median(ratios):.2f} (median of per-round ratios; "
      f"{min(ratios):.2f}–{max(ratios):.2f}; B faster in {sum(x < 1 for x in ratios)} of {len(ratios)} "
      f"rounds).\n\nEvery round (ns/op / wall s / CPU s):\n")
print("| round | " + " | ".join(("a-default", "b-default", "b-syscall", "untraced")) + " |")
print("|---:|---:|---:|---:|---:|")
for r, v in sorted(by.items()):
    print(f"| {r} | " + " | ".join(f"{v[c][0]:,.1f} / {v[c][1]:.2f} / {v[c][2]:.2f}"
                                   for c in ("a-default", "b-default", "b-syscall", "untraced")) + " |")
PY
cat "$tmp/section.md"
if ((write_doc)); then
  write_doc_section ab "$tmp/section.md" "$repo/docs/performance.md"
  log "wrote its section of docs/performance.md"
fi
