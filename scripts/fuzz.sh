#!/usr/bin/env bash
# Builds the libFuzzer targets of tests/fuzz (clang, ASan + UBSan, coverage) in BUILD_DIR and
# runs each: first every input kept under tests/fuzz/regressions/<target>/ (once each), then
# SECONDS of fuzzing from the seed corpus tests/fuzz/corpus/<target>/ (new inputs go to a
# scratch corpus in BUILD_DIR, never into the repository). Fails on the first crash, leak,
# undefined behaviour, timeout (> 10 s for one input) or property a target checks, naming the
# input that caused it (BUILD_DIR/artifacts/) and how to keep it as a regression.
#
# Usage: fuzz.sh SOURCE_DIR BUILD_DIR SECONDS [TARGET...]   (default: every target)
#   ctest fuzz_parsers runs it with a CI-sized SECONDS; docs/reliability.md gives longer runs.
#   FUZZ_JOBS (default 2): targets fuzzed at once.
#   FUZZ_SEED: libFuzzer's seed (ctest sets 1, so CI explores the same inputs each run and a new
#   failure is one that a change made, not luck; unset, each run explores new ground).
set -euo pipefail
src=$(cd "$1" && pwd) dir=$2 seconds=$3
shift 3
clang=$(command -v clang++-19 || true)
if [[ -z $clang ]]; then
  echo "fuzz: clang++-19 is missing (scripts/install-deps.sh installs clang-19 and libclang-rt-19-dev)"
  exit 1
fi
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
launcher=()
if command -v ccache >/dev/null; then
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
fi
if ! cmake -S "$src" -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG="-O1 -g" \
    -DCMAKE_C_COMPILER=clang-19 -DCMAKE_CXX_COMPILER="$clang" -DDATACRUMBS_FUZZ=ON -DDATACRUMBS_BPF=OFF \
    -DDATACRUMBS_WERROR=OFF "${launcher[@]}" >"$dir/configure.log" 2>&1; then
  cat "$dir/configure.log"
  echo "fuzz: configuring the fuzz build failed (above)"
  exit 1
fi
# Its output goes to a log, shown only when the build fails: ctest keeps the tail of what a test
# prints, and that tail must be the failing target's report.
if ! cmake --build "$dir" --target fuzzers >"$dir/build.log" 2>&1; then
  tail -80 "$dir/build.log"
  echo "fuzz: building the fuzz targets failed (above; log: $dir/build.log)"
  exit 1
fi
# The fuzz targets include only what they link, as every other target.
python3 "$src/scripts/check-includes.py" --graph "$dir/module_graph.txt" --root "$src"

targets=("$@")
if ((${#targets[@]} == 0)); then
  for t in "$src"/tests/fuzz/*_fuzz.cpp; do
    t=${t##*/}
    targets+=("${t%_fuzz.cpp}")
  done
fi

# The dictionaries (tests/fuzz/dict) of a target's input language, joined into one file.
dictionaries() {
  case $1 in
    probe_config | system_config) echo yaml ;;
    probe_file | sign_request) echo json probe_file ;;
    job_metadata) echo json job_metadata ;;
    trace_text | trace_gzip | analyze_partial) echo json trace ;;
    names) echo names ;;
  esac
}

# One target: regressions, then fuzzing. Its log is BUILD_DIR/logs/TARGET.log.
run_one() {
  local t=$1 bin="$dir/bin/fuzz_$1" log="$dir/logs/$1.log" corpus="$dir/corpus/$1" dict="$dir/dict/$1.dict"
  local regressions
  mapfile -t regressions < <(find "$src/tests/fuzz/regressions/$t" -type f 2>/dev/null | sort)
  mkdir -p "$corpus" "$dir/artifacts"
  : >"$log"
  if ((${#regressions[@]})) && ! "$bin" -runs=1 "${regressions[@]}" >>"$log" 2>&1; then
    tail -40 "$log"
    echo "fuzz: $t: a kept regression input fails again (above)"
    return 1
  fi
  local seed=()
  [[ -n ${FUZZ_SEED:-} ]] && seed=(-seed="$FUZZ_SEED")
  if ! "$bin" "${seed[@]}" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
      -use_value_profile=1 -dict="$dict" -artifact_prefix="$dir/artifacts/$t-" \
      "$corpus" "$src/tests/fuzz/corpus/$t" >>"$log" 2>&1; then
    tail -60 "$log"
    grep -m1 "fuzz property violated" "$log" || true
    local input
    input=$(grep -o "$dir/artifacts/[^ ]*" "$log" | tail -1)
    if [[ -n $input ]]; then
      echo "fuzz: $t: failed (above) on $input; keep it as tests/fuzz/regressions/$t/<name> once fixed"
    else
      echo "fuzz: $t: libFuzzer failed (above; log: $log)"
    fi
    return 1
  fi
  local runs cov
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
  cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1)
  echo "fuzz: $t: ${runs:-?} inputs in ${seconds} s, ${cov:-cov: ?} edges, 0 crashes" \
    "(${#regressions[@]} regression inputs replayed)"
}
export -f run_one
export src dir seconds
mkdir -p "$dir/logs" "$dir/dict"
for t in "${targets[@]}"; do
  for d in $(dictionaries "$t"); do cat "$src/tests/fuzz/dict/$d.dict"; done >"$dir/dict/$t.dict"
done
status=0
printf '%s\n' "${targets[@]}" | xargs -P "${FUZZ_JOBS:-2}" -I{} bash -c 'run_one "$@"' _ {} || status=1
exit $status
