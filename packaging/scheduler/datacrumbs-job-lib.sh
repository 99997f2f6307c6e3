# Shared by the scheduler prologs and epilogs (sourced, POSIX sh): start the DataCrumbs daemon
# for one job on this node, stop it, and say why a job that asked for tracing is not traced.
# A tracing problem never fails the job (a failing prolog drains the node): every function
# returns 0 and leaves the reason in <run dir>/datacrumbs-JOB.off, which the SPANK plugin and the
# flux-shell plugin print into the job's output. A node where BPF cannot be loaded (no
# CAP_BPF/CAP_SYS_ADMIN over the kernel, e.g. a user-namespaced container) is one such problem:
# the daemon exits with "cannot load ... BPF programs: ..." and the job runs untraced.
# The scripts find this file and the install prefix through symlinks (readlink -f $0).
#
# Settings (environment, or <prefix>/etc/datacrumbs/scheduler.env, sourced):
#   DATACRUMBS_RUN_DIR        ready/pid files (default /run/datacrumbs)
#   DATACRUMBS_READY_TIMEOUT  seconds the prolog waits for the daemon's ready file (default 60)
#   DATACRUMBS_STOP_TIMEOUT   seconds the epilog waits for the trace to be finished (default 600);
#                             then the daemon is killed (SIGKILL) and the trace is left cut short
#   DATACRUMBS_TRACE_DIR, DATACRUMBS_TRACE_PATTERN, DATACRUMBS_SECRET_FILE: passed to the daemon

# Schedulers run prologs with a bare environment.
PATH=${PATH:+$PATH:}/usr/sbin:/usr/bin:/sbin:/bin
export PATH
dc_prefix=$(cd "$(dirname "$(readlink -f "$0")")/../.." && pwd)
if [ -r "$dc_prefix/etc/datacrumbs/scheduler.env" ]; then
  set -a
  . "$dc_prefix/etc/datacrumbs/scheduler.env"
  set +a
fi
dc_run_dir=${DATACRUMBS_RUN_DIR:-/run/datacrumbs}
dc_host=$(hostname -s)

dc_files() {  # JOB: the names of one job's files in the run dir
  dc_pid_file="$dc_run_dir/datacrumbs-$1.pid"
  dc_ready_file="$dc_run_dir/datacrumbs-$1.ready"
  dc_off_file="$dc_run_dir/datacrumbs-$1.off"
  dc_probe_copy="$dc_run_dir/datacrumbs-$1.probes.json.gz"
  dc_log="$dc_run_dir/datacrumbs-$1.log"
}

dc_tracing_off() {  # JOB REASON
  dc_files "$1"
  mkdir -p "$dc_run_dir"
  printf 'datacrumbs: tracing is off for job %s on %s: %s\n' "$1" "$dc_host" "$2" >"$dc_off_file.tmp"
  chmod 0644 "$dc_off_file.tmp"
  mv -f "$dc_off_file.tmp" "$dc_off_file"
  cat "$dc_off_file" >&2
}

# PID: exists and is not a zombie (nobody may reap an exited daemon: it is no child of ours,
# and a container's init may not reap orphans).
dc_running() {
  state=$(sed -n 's/^[0-9]* (.*) \(.\) .*/\1/p' "/proc/$1/stat" 2>/dev/null)
  [ -n "$state" ] && [ "$state" != Z ]
}

# PID: running and still a datacrumbs daemon (not a reused pid). Not for a process that may be
# inside execve: its cmdline reads empty there.
dc_daemon_alive() {
  dc_running "$1" && tr '\0' ' ' <"/proc/$1/cmdline" 2>/dev/null | grep -q datacrumbs
}

# One prolog or epilog at a time per job (a second prolog while the first is still waiting for
# its daemon would start another daemon and orphan the first): fd 8 holds the job's lock until
# the script exits; the daemon is started without it.
dc_lock() {  # JOB
  mkdir -p "$dc_run_dir"
  chmod 0755 "$dc_run_dir"
  exec 8>"$dc_run_dir/datacrumbs-$1.lock"
  flock 8
}

dc_start_daemon() {  # JOB UID PROBE-FILE
  job=$1 uid=$2 probe=$3
  dc_files "$job"
  dc_lock "$job"
  if [ -f "$dc_pid_file" ] && dc_daemon_alive "$(cat "$dc_pid_file")"; then
    # A second prolog for the same job: already traced, or (the first prolog was killed while
    # it waited) still starting: wait for that daemon, start none.
    [ -f "$dc_ready_file" ] || dc_wait_ready "$job" "$(cat "$dc_pid_file")" "$probe"
    return 0
  fi
  rm -f "$dc_off_file" "$dc_ready_file"
  user=$(id -nu "$uid" 2>/dev/null) || { dc_tracing_off "$job" "no user has uid $uid"; return 0; }
  gid=$(id -g "$uid")
  # Read as the job's user: a probe file the user cannot read is not the user's to use. The
  # daemon then reads root's copy, which nobody can swap under it.
  if ! setpriv --reuid="$uid" --regid="$gid" --init-groups cat -- "$probe" >"$dc_probe_copy" 2>"$dc_log"; then
    dc_tracing_off "$job" "$user cannot read the probe file $probe ($(sed -n '$s/^cat: //p' "$dc_log"))"
    rm -f "$dc_probe_copy"
    return 0
  fi
  chmod 0600 "$dc_probe_copy"
  # Its own session: nothing the scheduler does to the prolog's process group reaches it.
  DATACRUMBS_EXPECT_UID=$uid setsid "$dc_prefix/bin/datacrumbs" "$dc_probe_copy" "$job" </dev/null >"$dc_log" 2>&1 8>&- &
  pid=$!
  echo "$pid" >"$dc_pid_file"
  dc_wait_ready "$job" "$pid" "$probe"
}

dc_wait_ready() {  # JOB PID PROBE-FILE: 0 always; a daemon not ready in time is stopped
  limit=$(( ${DATACRUMBS_READY_TIMEOUT:-60} * 10 ))
  i=0
  while [ ! -e "$dc_ready_file" ]; do
    if ! dc_running "$2"; then
      # It names the root copy it was given: the user knows the file by its own name.
      reason=$(tail -n 1 "$dc_log" | sed -e 's/^datacrumbs: //' -e "s|$dc_probe_copy|$3|")
      dc_tracing_off "$1" "the daemon refused: $reason"
      rm -f "$dc_pid_file" "$dc_probe_copy"
      return 0
    fi
    i=$((i + 1))
    if [ "$i" -gt "$limit" ]; then
      kill -TERM "$2" 2>/dev/null
      dc_wait_gone "$2" 100 || kill -KILL "$2" 2>/dev/null
      dc_tracing_off "$1" "the daemon was not ready after ${DATACRUMBS_READY_TIMEOUT:-60} s"
      rm -f "$dc_pid_file" "$dc_probe_copy"
      return 0
    fi
    sleep 0.1
  done
  return 0
}

dc_wait_gone() {  # PID TENTHS: 0 once the daemon PID has exited, 1 if it still runs after TENTHS/10 s
  n=0
  while dc_running "$1"; do
    n=$((n + 1))
    [ "$n" -le "$2" ] || return 1
    sleep 0.1
  done
  return 0
}

# JOB: SIGTERM, then wait until the daemon has finished the trace and exited. One still running
# after DATACRUMBS_STOP_TIMEOUT is killed: no process of ours outlives the job; its trace is
# then cut short (analyze reads every complete part) and <trace>.incomplete says so.
dc_stop_daemon() {
  dc_files "$1"
  dc_lock "$1"
  if [ -f "$dc_pid_file" ]; then
    pid=$(cat "$dc_pid_file")
    if dc_daemon_alive "$pid"; then
      trace=$(sed -n 's/.*"trace":"\([^"]*\)".*/\1/p' "$dc_ready_file" 2>/dev/null)
      kill -TERM "$pid"
      if ! dc_wait_gone "$pid" $(( ${DATACRUMBS_STOP_TIMEOUT:-600} * 10 )); then
        kill -KILL "$pid" 2>/dev/null
        dc_wait_gone "$pid" 100
        msg="datacrumbs: job $1 on $dc_host: the daemon (pid $pid) had not finished the trace after ${DATACRUMBS_STOP_TIMEOUT:-600} s: killed; the trace ${trace:-} is cut short"
        echo "$msg" >&2
        if [ -n "$trace" ] && [ -f "$trace" ]; then
          echo "$msg" >"$trace.incomplete"
          chown --reference="$trace" "$trace.incomplete" 2>/dev/null
        fi
      fi
    fi
  fi
  # The job is over: its live view's last frame (datacrumbs live) goes with its other files.
  rm -f "$dc_pid_file" "$dc_off_file" "$dc_probe_copy" "$dc_log" "$dc_ready_file" "$dc_run_dir/datacrumbs-$1.lock" \
    "$dc_run_dir/datacrumbs-$1.live.json" "$dc_run_dir/datacrumbs-$1.live.json.tmp"
  return 0
}
