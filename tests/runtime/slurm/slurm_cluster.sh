#!/bin/bash
# A real one-node SLURM cluster on localhost for the SLURM runtime test: munged, slurmctld and
# slurmd, each with its own config, state, socket and log under DIR (no systemd, free ports).
#
# usage: slurm_cluster.sh start DIR PREFIX   (PREFIX: a `cmake --install` of DataCrumbs)
#        slurm_cluster.sh stop DIR
# Clients then use SLURM_CONF=DIR/slurm.conf. Prints why and exits non-zero when a daemon does
# not come up.
set -euo pipefail
action=${1:?usage: slurm_cluster.sh start|stop DIR [PREFIX]}
dir=${2:?usage: slurm_cluster.sh start|stop DIR [PREFIX]}

alive() {  # a zombie is gone: this container's init may never reap it
  kill -0 "$1" 2>/dev/null && [ -n "$(tr -d '\0' <"/proc/$1/cmdline" 2>/dev/null)" ]
}
stop_pid_file() {
  [ -f "$1" ] || return 0
  local pid
  pid=$(cat "$1")
  kill -TERM "$pid" 2>/dev/null || return 0
  for _ in $(seq 100); do alive "$pid" || return 0; sleep 0.1; done
  kill -KILL "$pid" 2>/dev/null || true
}

if [ "$action" = stop ]; then
  stop_pid_file "$dir/slurmd.pid"
  stop_pid_file "$dir/slurmctld.pid"
  stop_pid_file "$dir/munge/munged.pid"
  exit 0
fi

prefix=${3:?usage: slurm_cluster.sh start DIR PREFIX}
free_port() {  # a TCP port nothing listens on, from a range unlikely to be handed out
  local p
  for p in $(shuf -i 20000-29999 -n 50); do
    ss -Hltn "sport = :$p" | grep -q . || { echo "$p"; return; }
  done
  echo "no free port" >&2; exit 1
}
ctld_port=$(free_port)
slurmd_port=$(free_port)
[ "$ctld_port" != "$slurmd_port" ] || slurmd_port=$((ctld_port + 1))
host=$(hostname -s)
mkdir -p "$dir/munge" "$dir/state" "$dir/spool" "$dir/prolog.d" "$dir/epilog.d"
ln -sf "$prefix/libexec/datacrumbs/datacrumbs-slurm-prolog" "$dir/prolog.d/datacrumbs-prolog"
ln -sf "$prefix/libexec/datacrumbs/datacrumbs-slurm-epilog" "$dir/epilog.d/datacrumbs-epilog"
chmod 0755 "$dir" "$dir/munge"
dd if=/dev/urandom of="$dir/munge/munge.key" bs=1024 count=1 status=none
chmod 0400 "$dir/munge/munge.key"
munged --force --socket="$dir/munge/munge.sock" --key-file="$dir/munge/munge.key" \
  --log-file="$dir/munge/munged.log" --pid-file="$dir/munge/munged.pid" --seed-file="$dir/munge/munged.seed"

cat >"$dir/slurm.conf" <<CONF
ClusterName=datacrumbs-test
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$dir/munge/munge.sock
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool/%n
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/slurmctld.log
SlurmdLogFile=$dir/slurmd.log
SlurmdDebug=debug
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
MpiDefault=none
ReturnToService=2
SlurmdTimeout=300
InactiveLimit=0
KillWait=5
# DataCrumbs: the lines an admin adds (README "SLURM"), through symlinks as prolog.d setups have.
Prolog=$dir/prolog.d/datacrumbs-prolog
Epilog=$dir/epilog.d/datacrumbs-epilog
PlugStackConfig=$dir/plugstack.conf
NodeName=$host NodeAddr=127.0.0.1 CPUs=2 State=UNKNOWN
PartitionName=debug Nodes=$host Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES
CONF
echo "include $prefix/etc/slurm/plugstack.conf.d/*.conf" >"$dir/plugstack.conf"
chmod 0644 "$dir/slurm.conf" "$dir/plugstack.conf"

export SLURM_CONF="$dir/slurm.conf"
slurmctld -f "$SLURM_CONF" -i
slurmd -f "$SLURM_CONF" -N "$host"
for _ in $(seq 300); do
  if sinfo -h -o '%T' -n "$host" 2>/dev/null | grep -qx idle; then exit 0; fi
  sleep 0.1
done
echo "slurm_cluster: node $host not idle after 30 s: $(sinfo -h -o '%T %E' 2>&1 | head -1);" \
  "slurmctld: $(tail -n 2 "$dir/slurmctld.log" 2>/dev/null); slurmd: $(tail -n 2 "$dir/slurmd.log" 2>/dev/null)" >&2
exit 1
