#!/bin/sh
# Run inside a real single-node `flux start` instance by the Flux runtime test: submits the
# test's jobs and waits for each to be clean (its epilog done). For each NAME it writes
# DIR/NAME.id (the job id, f58plain) and DIR/NAME.out (the job's output).
#
# usage: flux_jobs.sh DIR PROBES TAMPERED
set -u
dir=$1 probes=$2 tampered=$3
task='echo "task $FLUX_TASK_RANK preload=$LD_PRELOAD"; exec dd if=/dev/zero of='"$dir"'/out.$(flux job id --to=f58plain $FLUX_JOB_ID).$FLUX_TASK_RANK bs=4k count=$((10 + FLUX_TASK_RANK)) status=none'

run() {  # NAME [--setattr ...]
  name=$1
  shift
  id=$(flux submit -n 2 --output="$dir/$name.out" "$@" sh -c "$task") || return 1
  flux job wait-event -t 120 "$id" clean >/dev/null || return 1
  flux job id --to=f58plain "$id" >"$dir/$name.id"
}
run traced --setattr=system.datacrumbs.enable=yes --setattr=system.datacrumbs.probe_file="$probes" &&
  run plain &&
  run refused --setattr=system.datacrumbs.enable=no --setattr=system.datacrumbs.probe_file="$probes" &&
  run missing --setattr=system.datacrumbs.enable=yes --setattr=system.datacrumbs.probe_file="$dir/none.json.gz" &&
  run tampered --setattr=system.datacrumbs.enable=yes --setattr=system.datacrumbs.probe_file="$tampered" &&
  run numeric --setattr=system.datacrumbs.enable=1 --setattr=system.datacrumbs.probe_file="$probes" &&
  flux resource drain >"$dir/drained.txt" 2>&1
