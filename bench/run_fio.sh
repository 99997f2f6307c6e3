#!/usr/bin/env bash
# fio beside Darshan: three jobs on a private ext4 loop device, each run untraced, under
# Darshan 3.5 (counters; DXT keeping every operation) and under datacrumbs (trace mode with the
# system-call layer alone and with every layer; profile mode), in interleaved rounds:
#   randread-cached  4 KiB random preads of a page-cached file: CPU-bound, the per-call cost;
#   randread-direct  4 KiB O_DIRECT random reads reaching the disk: two events per read;
#   seqwrite         1 MiB buffered writes, each fsync'd: few calls, large block requests.
#
# usage: sudo bash bench/run_fio.sh [--quick] [--write-doc] [--rounds R]
#
# --quick (CI-sized, seconds): 16 MiB files, 0.5 s jobs, one round. Prints markdown tables on
# stdout (per-round ratios against untraced, their medians, every round); progress on stderr.
# --write-doc also rewrites this benchmark's section of docs/benchmarks.md. A benchmark, not a
# test: it exits non-zero on errors (a run that fails, an event lost, a count that is not fio's
# own: the file's preads/reads in datacrumbs' summary, Darshan's POSIX_READS and DXT read
# segments must equal fio's total_ios), never on a ratio.
set -euo pipefail

# shellcheck source=bench/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

rounds=5
size_mb=512
runtime=8s
quick_defaults "rounds=1 size_mb=16 runtime=500ms" "$@"
parse_bench_args 16 "" "$@"

require_tool_and_root
command -v python3 >/dev/null || die "python3 is required"
command -v fio >/dev/null || die "fio is required (bash scripts/install-deps.sh)"
mountpoint -q /sys/kernel/tracing || mount -t tracefs nodev /sys/kernel/tracing
pgrep -x datacrumbs >/dev/null && log "warning: another datacrumbs is running; numbers will be skewed"

tmp="$(mktemp -d)"
mnt="$tmp/mnt"
dev=""
# shellcheck disable=SC2317 # invoked by the EXIT trap
cleanup() {
  unmount_loop_ext4 "$mnt"
  rm -rf "$tmp"
}
trap cleanup EXIT

# A sparse image on a loop device with direct I/O on the image, so O_DIRECT reads reach the
# real disk, not the host's page cache holding the image file.
mount_loop_ext4 "$mnt" $((size_mb * 4)) --direct-io=on
loop_dio="$(cat "/sys/block/${dev#/dev/}/loop/dio" 2>/dev/null || echo 0)"
[[ "$loop_dio" == 1 ]] || log "warning: $dev has no direct I/O; direct reads may hit the host page cache"
loop_majmin="$(cat "/sys/block/${dev#/dev/}/dev")"
load_before="$(cut -d' ' -f1-3 /proc/loadavg)"
log "building or finding Darshan (once per machine)"
darshan="$(darshan_prefix counters)"
darshan_dxt="$(darshan_prefix dxt)"

size="${size_mb}M"
# --thread: jobs as threads, not forked processes. Forking from fio's threaded parent under
# Darshan can copy its POSIX mutex locked into the child, which then waits forever (seen here).
common=(--thread --ioengine=psync --output-format=json --output="$tmp/fio.json")
job_cmd() {
  case "$1" in
    randread-cached) echo fio --name=cached --filename="$mnt/cached" --rw=randread --bs=4k --size="$size" \
      --direct=0 --invalidate=0 --runtime="$runtime" --time_based ;;
    randread-direct) echo fio --name=direct --filename="$mnt/direct" --rw=randread --bs=4k --size="$size" \
      --direct=1 --runtime="$runtime" --time_based ;;
    seqwrite) echo fio --name=seqwrite --filename="$mnt/seq" --rw=write --bs=1M --size="$size" --fsync=1 \
      --end_fsync=1 --direct=0 ;;
  esac
}
jobs=(randread-cached randread-direct seqwrite)
modes=(untraced darshan darshan-dxt dc-syscall dc-default dc-profile)

log "laying out the read files (untraced)"
for f in cached direct; do
  fio --name=layout --filename="$mnt/$f" --rw=write --bs=1M --size="$size" --end_fsync=1 \
    --output="$tmp/layout.json" >/dev/null || die "layout run failed"
done
cat "$mnt/cached" >/dev/null # in the page cache for every cached run (--invalidate=0 keeps it)

failed=0
: >"$tmp/rows"
# run JOB MODE ROUND: one fio run; its throughput, wall and CPU go to $tmp/rows.JOB, what was
# checked to $tmp/check.JOB.MODE.
run() {
  local job="$1" mode="$2" r="$3" cmd file
  read -r -a cmd <<<"$(job_cmd "$job")"
  cmd+=("${common[@]}")
  file="$(printf '%s\n' "${cmd[@]}" | sed -n 's/^--filename=//p')"
  [[ "$job" != seqwrite ]] || rm -f "$file"
  sync
  rm -f "$tmp/fio.json" "$tmp/s.json" "$tmp/t.pfw.gz"
  log "round $r/$rounds: $job $mode"
  case "$mode" in
    untraced) ;;
    darshan | darshan-dxt)
      [[ -n "$darshan" && -n "$darshan_dxt" ]] || { echo "Darshan not built" >"$tmp/err.$job.$mode"; return 0; }
      darshan_command "$([[ "$mode" == darshan ]] && echo "$darshan" || echo "$darshan_dxt")" "$tmp/dlog" \
        "$([[ "$mode" == darshan ]] && echo 0 || echo 1)" "${cmd[@]}"
      cmd=("${darshan_cmd[@]}") ;;
    dc-syscall) cmd=("$dc" run --layers syscall -o "$tmp/t.pfw.gz" --summary "$tmp/s.json" -- "${cmd[@]}") ;;
    dc-default) cmd=("$dc" run -o "$tmp/t.pfw.gz" --summary "$tmp/s.json" -- "${cmd[@]}") ;;
    dc-profile) cmd=("$dc" run --mode profile -o "$tmp/t.pfw.gz" --summary "$tmp/s.json" -- "${cmd[@]}") ;;
  esac
  timed "$tmp/time" "${cmd[@]}" >/dev/null 2>"$tmp/err" || { failed=1; log "$job $mode failed: $(tail -n2 "$tmp/err")"; return 0; }
  local ops="" segments="" kind=read
  [[ "$job" != seqwrite ]] || kind="write"
  if [[ "$mode" == darshan* ]]; then
    ops="$(darshan_counter "$darshan" "$tmp/dlog" "$file" "POSIX_${kind^^}S")"
    [[ "$mode" == darshan ]] || segments="$(darshan_dxt_ops "$darshan" "$tmp/dlog" "$file" "$kind")"
  fi
  python3 - "$job" "$mode" "$r" "$tmp/fio.json" "$tmp/s.json" "$file" "$tmp/time" "$ops" "$segments" "$loop_majmin" \
    >>"$tmp/rows.$job" 2>>"$tmp/check.$job.$mode" <<'PY' || { failed=1; log "$job $mode: $(tail -n1 "$tmp/check.$job.$mode")"; }
import json, sys
job, mode, r, fio_json, summary, path, timing, ops, segments, majmin = sys.argv[1:]
j = json.load(open(fio_json))["jobs"][0]
write = job == "seqwrite"
io = j["write" if write else "read"]
metric = io["bw_bytes"] / 2**20 if write else io["iops"]
wall, cpu = open(timing).read().split()
print(f"{mode}\t{r}\t{metric:.3f}\t{wall}\t{cpu}")
ios = io["total_ios"]
if mode.startswith("dc-"):
    s = json.load(open(summary))
    posix = s["files"].get(path, {}).get("POSIX", {})
    seen, lost = posix.get("writes" if write else "reads", 0), s["events"]["lost"]
    ok = seen == ios and lost == 0
    # Every layer on, I/O that reaches the disk: the trace's BLOCK bytes on the loop device
    # against fio's bytes (the block layer's attribution, shown, not required).
    device = ""
    if mode == "dc-default" and job != "randread-cached":
        import gzip
        dirn, moved = ("write" if write else "read"), 0
        for line in gzip.open(summary.replace("s.json", "t.pfw.gz"), "rt"):
            if '"cat":"BLOCK"' in line:
                e = json.loads(line.strip().rstrip(","))
                a = e["args"]
                if e["name"] == dirn and f"{a['major']}:{a['minor']}" == majmin:
                    moved += a["bytes"]
        device = f", loop-device bytes / fio bytes {moved / io['io_bytes']:.4f}"
    # Which kinds, when any: the one line a failed CI run keeps must say what was lost.
    kinds = "".join(f" {k}={v}" for k, v in s["events"].items() if k.startswith("lost_") and v)
    sys.stderr.write(f"{'ok' if ok else 'BAD'} fio {ios} calls {seen} lost {lost}{kinds}{device}\n")
elif mode.startswith("darshan"):
    n = int(ops)
    ok = n == ios and (not segments or int(segments) == ios)
    sys.stderr.write(f"{'ok' if ok else 'BAD'} fio {ios} POSIX_{'WRITES' if write else 'READS'} {n} "
                     f"DXT {segments or '-'}\n")
else:
    ok = True
sys.exit(0 if ok else 1)
PY
}

# Round 0 warms up (allocates the sparse image's blocks on the host); each later round starts at
# another mode, so drift favours none of them.
run seqwrite untraced 0 >/dev/null 2>&1 || true
: >"$tmp/rows.seqwrite"
rm -f "$tmp"/check.seqwrite.*
for ((r = 1; r <= rounds; r++)); do
  for job in "${jobs[@]}"; do
    n=${#modes[@]}
    for ((k = 0; k < n; k++)); do run "$job" "${modes[$(((k + r - 1) % n))]}" "$r"; done
  done
done

IFS=,
for job in "${jobs[@]}"; do
  metric=IOPS
  [[ "$job" != seqwrite ]] || metric="MiB/s"
  : >"$tmp/notes.$job"
  for mode in "${modes[@]}"; do
    if [[ -s "$tmp/check.$job.$mode" ]]; then
      printf '%s\t%s of %d runs exact (%s)\n' "$mode" "$(grep -c '^ok' "$tmp/check.$job.$mode")" \
        "$(wc -l <"$tmp/check.$job.$mode")" "$(tail -n1 "$tmp/check.$job.$mode" | cut -d' ' -f2-)" >>"$tmp/notes.$job"
    elif [[ -s "$tmp/err.$job.$mode" ]]; then
      printf '%s\t%s\n' "$mode" "$(cat "$tmp/err.$job.$mode")" >>"$tmp/notes.$job"
    fi
  done
  {
    echo "### $job ($metric; ratios: higher is faster)"
    echo
    echo "\`$(job_cmd "$job" | sed "s|$mnt/||")\`"
    echo
    python3 "$repo/bench/summarize.py" "$tmp/rows.$job" --configs "${modes[*]}" --metric "$metric" \
      --notes "$tmp/notes.$job" --json "$tmp/medians.$job.json"
    echo
  } >>"$tmp/tables.md"
done
unset IFS
cat "$tmp/tables.md"
python3 - "$tmp/medians.randread-cached.json" >"$tmp/verdict.md" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
dxt = m.get("darshan-dxt", {}).get("metric_ratio")
for cfg in ("dc-syscall", "dc-default", "dc-profile"):
    mine = m.get(cfg, {}).get("metric_ratio")
    if mine is None or dxt is None:
        print(f"- randread-cached, {cfg}: not measured (a config failed).")
    else:
        print(f"- randread-cached, {cfg}: IOPS × untraced {mine:.2f} vs Darshan DXT {dxt:.2f} "
              f"(target ≥): {'met' if mine >= dxt else 'MISSED'}.")
PY
echo "Target (issue 14): page-cached randread IOPS ratio ≥ Darshan DXT's."
cat "$tmp/verdict.md"

if ((write_doc)); then
  rev="$(git -C "$repo" rev-parse --short HEAD 2>/dev/null || echo unknown)"
  git -C "$repo" diff --quiet HEAD -- src bpf 2>/dev/null || rev="$rev (with uncommitted changes in src/ or bpf/)"
  {
    cat <<EOF
## fio beside Darshan (\`bench/run_fio.sh\`)

Three fio jobs (psync) on a private ext4 file system (a sparse image on a loop device with
direct I/O on the image, made with lazy init off, removed afterwards), each run untraced, under
Darshan 3.5 (\`darshan\`: counters; \`darshan-dxt\`: DXT keeping every operation) and under
datacrumbs (\`dc-syscall\`: \`--layers syscall\`; \`dc-default\`: every layer; \`dc-profile\`:
\`--mode profile\`), $rounds interleaved rounds (each starting at another mode). Ratios are
medians of per-round ratios to the untraced run of the same round. Every run's count is checked
against fio's own \`total_ios\`: the file's reads (writes) in datacrumbs' summary, with 0 lost;
Darshan's POSIX_READS and DXT read segments.

- Machine: $(machine_line)
- Date: $(date -u '+%Y-%m-%d %H:%M UTC'); datacrumbs commit $rev; $(fio --version)
- Load average (1/5/15 min) before the run: $load_before; after: $(cut -d' ' -f1-3 /proc/loadavg)
  (a shared machine: read the numbers as provisional)
- Reproduce: \`sudo bash bench/run_fio.sh --write-doc\` (CI-sized: \`--quick\`)

EOF
    cat "$tmp/tables.md"
    echo "Target (issue 14): page-cached randread IOPS ratio ≥ Darshan DXT's."
    echo
    cat "$tmp/verdict.md"
  } >"$tmp/section.md"
  write_doc_section fio "$tmp/section.md"
  log "wrote its section of docs/benchmarks.md"
fi
exit "$failed"
