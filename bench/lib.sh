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

# write_doc_section KEY FILE: puts FILE's markdown into docs/benchmarks.md between this
# benchmark's markers, keeping every other benchmark's section as it is.
write_doc_section() {
  local key="$1" body="$2" doc="$repo/docs/benchmarks.md"
  python3 - "$doc" "$key" "$body" <<'PY'
import os, sys
doc, key, body_path = sys.argv[1:4]
begin, end = f"<!-- begin {key} -->", f"<!-- end {key} -->"
section = f"{begin}\n{open(body_path).read().rstrip()}\n{end}\n"
text = open(doc).read() if os.path.exists(doc) else ""
if "<!-- begin " not in text:  # no sections yet: start the file over
    text = "# Benchmarks\n\nEach section is written by the script it names; rerun that script rather than editing here.\n"
if begin in text and end in text:
    head, rest = text.split(begin, 1)
    text = head + section.rstrip("\n") + rest.split(end, 1)[1]
else:
    text = text.rstrip("\n") + "\n\n" + section
open(doc, "w").write(text)
PY
}
