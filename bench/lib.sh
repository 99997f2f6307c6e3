# Shared by the benchmark scripts (sourced, not run): messages, and the built tool they measure.
# shellcheck shell=bash

bench_name="$(basename "${BASH_SOURCE[1]}" .sh)"
die() { echo "$bench_name: $*" >&2; exit 1; }
log() { echo "$bench_name: $*" >&2; }

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
dc="$repo/build/bin/datacrumbs"

# Refuses to run without the built tool or without root (BPF, loop devices).
require_tool_and_root() {
  [[ -x "$dc" ]] || die "$dc not built (bash scripts/build.sh)"
  ((EUID == 0)) || die "needs root (BPF, loop devices); run with sudo"
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

# parse_bench_args HELP_LINES COUNT_NAME ARGS...: the options every benchmark takes. Sets
# write_doc (--write-doc), quick (--quick: a CI-sized run, for scripts that have one) and
# rounds (--rounds R, keeping the caller's default), prints the
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
  [[ "$rounds" =~ ^[1-9][0-9]*$ ]] || die "--rounds must be a positive integer"
  if [[ -n "$count_name" && ! "${!count_name}" =~ ^[1-9][0-9]*$ ]]; then
    die "${count_name^^} must be a positive integer, got '${!count_name}'"
  fi
}
