# Shared by the benchmark scripts (sourced, not run): messages, and the built tool they measure.
# shellcheck shell=bash

bench_name="$(basename "${BASH_SOURCE[1]}" .sh)"
die() { echo "$bench_name: $*" >&2; exit 1; }
log() { echo "$bench_name: $*" >&2; }

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
dc="${DATACRUMBS_BIN:-$repo/build/bin/datacrumbs}"

# Refuses to run without the built tool or without root (BPF, loop devices).
require_tool_and_root() {
  [[ -x "$dc" ]] || die "$dc not built (bash scripts/build.sh)"
  ((EUID == 0)) || die "needs root (BPF, loop devices); run with sudo"
}

# mount_loop_ext4 MNT SIZE_MB [LOSETUP_OPTION...]: a private ext4 file system on a loop device over
# a sparse image beside MNT (MNT.img), mounted at MNT; sets `dev`. No lazy inode-table or journal
# init: it would write in the background during the measurements. unmount_loop_ext4 MNT undoes
# it (for an EXIT trap: it never fails).
mount_loop_ext4() {
  local mnt="$1" size_mb="$2"
  shift 2
  truncate -s "${size_mb}M" "$mnt.img"
  dev="$(losetup -f --show "$@" "$mnt.img")"
  mkfs.ext4 -q -E lazy_itable_init=0,lazy_journal_init=0 "$dev"
  mkdir -p "$mnt"
  mount "$dev" "$mnt"
}
unmount_loop_ext4() {
  if mountpoint -q "$1"; then umount "$1" || umount -l "$1" || true; fi
  if [[ -n "${dev:-}" ]]; then losetup -d "$dev" || true; fi
}

# write_doc_section KEY FILE [DOC]: puts FILE's markdown into DOC (default docs/benchmarks.md)
# between this benchmark's markers, keeping everything else in DOC as it is.
write_doc_section() {
  local key="$1" body="$2" doc="${3:-$repo/docs/benchmarks.md}"
  python3 - "$doc" "$key" "$body" <<'PY'
import os, sys
doc, key, body_path = sys.argv[1:4]
begin, end = f"<!-- begin {key} -->", f"<!-- end {key} -->"
section = f"{begin}\n{open(body_path).read().rstrip()}\n{end}\n"
text = open(doc).read() if os.path.exists(doc) else ""
if not text:
    text = "# Benchmarks\n\nEach section is written by the script it names; rerun that script rather than editing here.\n"
if begin in text and end in text:
    head, rest = text.split(begin, 1)
    text = head + section.rstrip("\n") + rest.split(end, 1)[1]
else:
    text = text.rstrip("\n") + "\n\n" + section
open(doc, "w").write(text)
PY
}

# quick_defaults 'NAME=VALUE ...' ARGS...: with --quick among ARGS, sets each NAME to VALUE (the
# CI-sized defaults). Called before parse_bench_args, so a count or --rounds given still wins.
quick_defaults() {
  local defaults="$1" arg pair
  shift
  for arg in "$@"; do
    [[ "$arg" == --quick ]] || continue
    for pair in $defaults; do printf -v "${pair%%=*}" '%s' "${pair#*=}"; done
  done
}

# parse_bench_args HELP_LINES COUNT_NAME ARGS...: the options every benchmark takes. Sets
# write_doc (--write-doc), quick (--quick: a CI-sized run, for scripts that have one) and
# rounds (--rounds R, keeping the caller's default; a script with no rounds leaves it unset), prints the
# script's header lines 2..HELP_LINES for -h, and puts the one positional argument into the
# variable named COUNT_NAME (none allowed when COUNT_NAME is empty).
parse_bench_args() {
  local help_lines="$1" count_name="$2"
  shift 2
  write_doc=0
  quick=0
  while (($#)); do
    case "$1" in
      --write-doc) write_doc=1 ;;
      --quick) quick=1 ;;
      --rounds) rounds="${2:?--rounds needs a value}"; shift ;;
      -h | --help) sed -n "2,${help_lines}s/^# \{0,1\}//p" "$0"; exit 0 ;;
      *)
        [[ -n "$count_name" ]] || die "unknown argument '$1'"
        printf -v "$count_name" '%s' "$1"
        ;;
    esac
    shift
  done
  # A script without rounds (one measurement) leaves `rounds` unset.
  [[ -z "${rounds+set}" || "$rounds" =~ ^[1-9][0-9]*$ ]] || die "--rounds must be a positive integer"
  if [[ -n "$count_name" && ! "${!count_name}" =~ ^[1-9][0-9]*$ ]]; then
    die "${count_name^^} must be a positive integer, got '${!count_name}'"
  fi
}

# timed OUT CMD...: runs CMD (stdin, stdout and stderr passed through) and writes "WALL CPU" to
# OUT: wall seconds of the whole command and its user + system CPU seconds, children included.
timed() {
  local out="$1"
  shift
  python3 -c '
import resource, subprocess, sys, time
t = time.monotonic()
rc = subprocess.run(sys.argv[2:]).returncode
wall = time.monotonic() - t
u = resource.getrusage(resource.RUSAGE_CHILDREN)
open(sys.argv[1], "w").write(f"{wall:.6f} {u.ru_utime + u.ru_stime:.6f}\n")
sys.exit(rc)' "$out" "$@"
}

# Darshan 3.5, the peer: darshan_prefix counters|dxt prints the install prefix, building it once
# per machine (scripts/build-darshan.sh, about a minute each); empty, with the reason in
# $tmp/err.darshan-VARIANT, when it cannot be built (no vendored tarball).
darshan_prefix() {
  # shellcheck disable=SC2154 # $tmp: the calling script's scratch directory
  bash "$repo/scripts/build-darshan.sh" "$1" 2>"$tmp/err.darshan-$1" || true
}

# darshan_command PREFIX LOGDIR DXT CMD...: sets the array darshan_cmd to CMD with Darshan
# preloaded (non-MPI), its log going to LOGDIR (emptied), DXT tracing every POSIX operation when
# DXT is 1.
darshan_command() {
  local prefix="$1" logdir="$2" dxt="$3"
  shift 3
  rm -rf "$logdir" && mkdir -p "$logdir"
  darshan_cmd=(env DARSHAN_ENABLE_NONMPI=1 DARSHAN_LOGPATH="$logdir")
  ((dxt)) && darshan_cmd+=(DXT_ENABLE_IO_TRACE=1)
  darshan_cmd+=(LD_PRELOAD="$prefix/lib/libdarshan.so" "$@")
}

# darshan_counter PARSER_PREFIX LOGDIR FILE COUNTER: a POSIX counter (POSIX_READS, ...) of FILE
# summed over the logs in LOGDIR, one per process (darshan-parser); darshan_dxt_ops PARSER_PREFIX
# LOGDIR FILE read|write: the operations DXT kept for FILE (darshan-dxt-parser's read_count or
# write_count).
darshan_logs() {
  local log
  for log in "$2"/*.darshan; do "$1/bin/$3" "$log"; done
}
darshan_counter() {
  darshan_logs "$1" "$2" darshan-parser |
    awk -v f="$3" -v c="$4" '$4 == c && $6 == f {n += $5} END {print n + 0}'
}
darshan_dxt_ops() {
  darshan_logs "$1" "$2" darshan-dxt-parser |
    awk -v f="$3" -v k="$4_count: " '/^# DXT, file_id:/ {mine = ($0 ~ ("file_name: " f "$"))}
      mine && /^# DXT, write_count:/ {sub(".*" k, ""); sub(/,.*/, ""); n += $1} END {print n + 0}'
}

# The machine, for every benchmark's header: CPUs and model, kernel, clocksource.
machine_line() {
  local cpu clock
  cpu="$(grep -m1 -E '^(model name|Model)' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')"
  clock="$(cat /sys/devices/system/clocksource/clocksource0/current_clocksource 2>/dev/null || echo unknown)"
  echo "$(nproc) CPUs, ${cpu:-unknown CPU}, kernel $(uname -r), clocksource $clock"
}

# collector_bench_path: sets `replay` to build/bin/collector_bench beside the tool, or dies.
collector_bench_path() {
  replay="$(dirname "$dc")/collector_bench"
  [[ -x "$replay" ]] || die "$replay not built (bash scripts/build.sh)"
}

# record_storm RING OPS [RUN_OPTION...]: records the ring of a pread storm of OPS calls traced
# with the options into RING (DATACRUMBS_RECORD_RING), for collector_bench to replay; builds the
# storm and its 64 MiB file in $tmp the first time. Dies when the run fails or loses events.
record_storm() {
  local ring="$1" n="$2"
  shift 2
  [[ -x "$tmp/pread_storm" ]] || cc -O2 -Wall -Wextra -o "$tmp/pread_storm" "$repo/bench/pread_storm.c"
  [[ -f "$tmp/data" ]] || head -c 64M /dev/zero >"$tmp/data"
  DATACRUMBS_RECORD_RING="$ring" "$dc" run "$@" -o "$tmp/rec.pfw.gz" --summary "$tmp/s.json" -- \
    "$tmp/pread_storm" "$tmp/data" "$n" >/dev/null 2>"$tmp/rec.err" ||
    die "recording run ($*) failed: $(tail -n1 "$tmp/rec.err")"
  local lost
  lost="$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["events"]["lost"])' "$tmp/s.json")"
  [[ "$lost" == 0 ]] || die "the recording run ($*) lost $lost events"
}

# median_of: the median of the numbers on stdin, one a line (10 significant digits).
median_of() { sort -g | awk '{v[NR]=$1} END {m=int((NR+1)/2); printf "%.10g\n", (NR%2 ? v[m] : (v[m]+v[m+1])/2)}'; }
