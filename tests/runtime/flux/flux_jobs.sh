#!/bin/sh
# Run inside a real single-node `flux start` instance by the Flux runtime test: submits the
# test's jobs and waits for each to be clean (its epilog done). For each NAME it writes
# DIR/NAME.id (the job id, f58plain) and DIR/NAME.out (the job's output). Each task runs dd
# (10 + its rank 4 KiB blocks) under strace, in a shell that sleeps first so that the daemon
# reads its rank while it lives: DIR/out.ID.RANK, DIR/strace.ID.RANK.
# The job "cancelled" is cancelled once its tasks have written; while it runs, the prolog is
# run a second time for it: DIR/double.txt says whether the daemon's pid stayed the same.
#
# usage: flux_jobs.sh DIR PROBES TAMPERED FOREIGN RUN-DIR PERILOG
set -u
dir=$1 probes=$2 tampered=$3 foreign=$4 run_dir=$5 perilog=$6
task='echo "task $FLUX_TASK_RANK preload=$LD_PRELOAD"; id=$(flux job id --to=f58plain $FLUX_JOB_ID); strace -f -qq sh -c "sleep 1; exec dd if=/dev/zero of='"$dir"'/out.$id.$FLUX_TASK_RANK bs=4k count=$((10 + FLUX_TASK_RANK)) status=none" 2>'"$dir"'/strace.$id.$FLUX_TASK_RANK'
ask() {  # PROBE-FILE: the attributes of a job that asks for tracing
  echo "--setattr=system.datacrumbs.enable=yes --setattr=system.datacrumbs.probe_file=$1"
}

run() {  # NAME [--setattr ...]
  name=$1
  shift
  id=$(flux submit -n 2 --output="$dir/$name.out" "$@" sh -c "$task") || return 1
  flux job wait-event -t 120 "$id" clean >/dev/null || return 1
  flux job id --to=f58plain "$id" >"$dir/$name.id"
}

cancelled() {
  # shellcheck disable=SC2046
  id=$(flux submit -n 2 --output="$dir/cancelled.out" $(ask "$probes") \
    sh -c "$task; touch $dir/started.\$FLUX_TASK_RANK; sleep 300") || return 1
  f58=$(flux job id --to=f58plain "$id")
  echo "$f58" >"$dir/cancelled.id"
  i=0
  while [ ! -e "$dir/started.0" ] || [ ! -e "$dir/started.1" ]; do
    i=$((i + 1))
    [ "$i" -lt 1200 ] || return 1
    sleep 0.1
  done
  before=$(cat "$run_dir/datacrumbs-$f58.pid")
  FLUX_JOB_ID=$id FLUX_JOB_USERID=$(id -u) "$perilog" prolog
  after=$(cat "$run_dir/datacrumbs-$f58.pid")
  if [ "$before" = "$after" ] && [ -e "$run_dir/datacrumbs-$f58.ready" ]; then
    echo same >"$dir/double.txt"
  else
    echo "different: $before then $after" >"$dir/double.txt"
  fi
  flux cancel "$id" || return 1
  flux job wait-event -t 120 "$id" clean >/dev/null
}

# shellcheck disable=SC2046
run traced $(ask "$probes") &&
  run plain &&
  run refused --setattr=system.datacrumbs.enable=no --setattr=system.datacrumbs.probe_file="$probes" &&
  run missing $(ask "$dir/none.json.gz") &&
  run tampered $(ask "$tampered") &&
  run foreign $(ask "$foreign") &&
  run numeric --setattr=system.datacrumbs.enable=1 --setattr=system.datacrumbs.probe_file="$probes" &&
  cancelled &&
  flux resource drain >"$dir/drained.txt" 2>&1
