#!/usr/bin/env bash
# What the default config's MPI-IO and HDF5 entries cost (README "uprobe entries"): the 2-rank
# parallel HDF5 program of the runtime tests (tests/runtime/hdf5_mpi_app.c, built by h5pcc with
# HDF5 shared and linked in) run untraced, traced with every kernel layer and stdio (the default
# config without its MPI-IO and HDF5 entries), and traced with the default config, in
# interleaved rounds; then `datacrumbs run -- /bin/true` with both configs (the planning of the
# functions every run pays for).
#
# usage: sudo bash bench/run_default_config.sh [--quick] [--write-doc] [--rounds R] [MIB]
#
# MIB (default 8; --quick: 1, one round) per rank. Prints a markdown section on stdout;
# --write-doc also puts it into docs/benchmarks.md. A benchmark, not a test: it fails on errors
# (a run that fails, events lost, the HDF5 calls missing under the default config), never on a
# number.
set -euo pipefail

# shellcheck source=bench/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

mib=8
rounds=7
quick_defaults "mib=1 rounds=1" "$@"
parse_bench_args 14 mib "$@"
require_tool_and_root
build="$(dirname "$(dirname "$dc")")"
for linking in shared static; do
  [[ -x "$build/tests/h5pcc_app_$linking" ]] ||
    die "$build/tests/h5pcc_app_$linking not built (cmake --build build --target hdf5_mpi_app_$linking)"
done

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
configs="$repo/etc/datacrumbs/configs"
cat >"$tmp/kernel_stdio.yaml" <<YAML
capture_probes:
  - name: POSIX
    probe: syscalls
  - name: kernel
    probe: kernel
    regex: ".*"
  - include: $configs/stdio.yaml
YAML
mpirun=(env OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 mpirun -n 2 --oversubscribe
  --mca btl "self,vader")
per_rank=$((mib << 20))

# one LINKING CONFIG ROUND: one run; its wall seconds (and the summary's HDF5 calls) to $tmp/runs.
one() {
  local linking="$1" config="$2" round="$3" app="$build/tests/h5pcc_app_$1"
  local cmd=("${mpirun[@]}" "$app" "$tmp/data.h5" "$per_rank")
  rm -f "$tmp/data.h5"
  case "$config" in
    untraced) timed "$tmp/t" "${cmd[@]}" >/dev/null ;;
    *)
      local args=()
      [[ "$config" == default ]] || args=(--config "$tmp/kernel_stdio.yaml")
      timed "$tmp/t" "$dc" run -o "$tmp/t.pfw.gz" --summary "$tmp/s.json" "${args[@]}" -- "${cmd[@]}" \
        >/dev/null 2>"$tmp/err" || die "run failed ($linking, $config): $(tail -n 2 "$tmp/err")"
      python3 - "$tmp/s.json" "$config" <<'PY' || die "$linking $config: $(tail -n 2 "$tmp/err")"
import json, sys
s = json.load(open(sys.argv[1]))
assert s["events"]["lost"] == 0, f"lost {s['events']['lost']}"
writes = s["layers"].get("HDF5", {}).get("H5Dwrite", {}).get("count", 0)
assert (writes == 2) == (sys.argv[2] == "default"), f"H5Dwrite calls {writes}"
PY
      ;;
  esac
  echo "$linking $config $round $(cat "$tmp/t")" >>"$tmp/runs"
}

log "$rounds interleaved rounds, $mib MiB per rank"
for ((r = 1; r <= rounds; r++)); do
  for linking in shared static; do
    # The order rotates each round: a run after a traced one pays for that run's leftovers
    # (writeback of its files, uprobes still being removed), so no config always follows another.
    configs=(untraced kernel-stdio default)
    for ((k = 0; k < 3; k++)); do one "$linking" "${configs[(k + r) % 3]}" "$r"; done
  done
done
for ((r = 1; r <= rounds; r++)); do
  timed "$tmp/t" "$dc" run -o "$tmp/t.pfw.gz" --config "$tmp/kernel_stdio.yaml" -- /bin/true 2>/dev/null
  echo "true kernel-stdio $r $(cat "$tmp/t")" >>"$tmp/runs"
  timed "$tmp/t" "$dc" run -o "$tmp/t.pfw.gz" -- /bin/true 2>/dev/null
  echo "true default $r $(cat "$tmp/t")" >>"$tmp/runs"
done

section="$tmp/section.md"
python3 - "$tmp/runs" "$rounds" "$mib" "$(git -C "$repo" rev-parse --short HEAD)" >"$section" <<'PY'
import collections, datetime, statistics, sys
runs, rounds, mib, commit = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
wall = collections.defaultdict(dict)
cpu = collections.defaultdict(dict)
for line in open(runs):
    linking, config, r, w, c = line.split()
    wall[(linking, config)][int(r)] = float(w)
    cpu[(linking, config)][int(r)] = float(c)
clock = open("/sys/devices/system/clocksource/clocksource0/current_clocksource").read().strip()
load = " ".join(open("/proc/loadavg").read().split()[:3])
print("## The default config's MPI-IO and HDF5 entries (`bench/run_default_config.sh`)\n")
print(f"- Machine: 2 CPUs, clocksource {clock}, load average {load} after the run; "
      f"{datetime.datetime.utcnow():%Y-%m-%d %H:%M} UTC; commit {commit}")
print(f"- Workload: the 2-rank parallel HDF5 test program (h5pcc, HDF5 shared or linked in), "
      f"{mib} MiB per rank, under mpirun; {rounds} interleaved rounds, the configs' order rotating; "
      "wall seconds and CPU seconds (user + system, the tool and every child) of the whole command")
print("- Reproduce: `sudo bash bench/run_default_config.sh --write-doc`\n")
print("| HDF5 | config | wall, median | wall, fastest | CPU, median | CPU ÷ kernel+stdio's, per round (median, range) |")
print("|---|---|---:|---:|---:|---:|")
for linking in ("shared", "static"):
    for config, label in (("untraced", "untraced"), ("kernel-stdio", "kernel layers + stdio"),
                          ("default", "default (+ MPI-IO, HDF5)")):
        w, c = wall[(linking, config)], cpu[(linking, config)]
        ratio = ""
        if config == "default":
            rs = [c[r] / cpu[(linking, "kernel-stdio")][r] for r in range(1, rounds + 1)]
            ratio = f"{statistics.median(rs):.2f} ({min(rs):.2f}-{max(rs):.2f})"
        print(f"| {linking} | {label} | {statistics.median(w.values()):.2f} s | {min(w.values()):.2f} s | "
              f"{statistics.median(c.values()):.2f} s | {ratio} |")
t = {c: statistics.median(wall[("true", c)].values()) for c in ("kernel-stdio", "default")}
print(f"\n`datacrumbs run -- /bin/true` (median of {rounds}): kernel layers + stdio {t['kernel-stdio'] * 1000:.0f} ms, "
      f"default {t['default'] * 1000:.0f} ms. Every traced run: 0 lost; the default config's runs "
      f"had both ranks' H5Dwrite, the other config's none.")
print("\n<details><summary>Raw rounds (wall seconds, CPU seconds in brackets; the order of the configs rotates each round)</summary>\n")
print("| round | " + " | ".join(f"{l} {c}" for l in ("shared", "static") for c in ("untraced", "kernel-stdio", "default")) + " |")
print("|---:|" + "---:|" * 6)
for r in range(1, rounds + 1):
    print(f"| {r} | " + " | ".join(f"{wall[(l, c)][r]:.2f} ({cpu[(l, c)][r]:.2f})" for l in ("shared", "static")
                                  for c in ("untraced", "kernel-stdio", "default")) + " |")
print("\n</details>")
PY
cat "$section"
((write_doc)) && write_doc_section default-config "$section"
exit 0
