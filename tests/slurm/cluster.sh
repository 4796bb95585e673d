#!/usr/bin/env bash
# Start/stop a throwaway local Slurm cluster (1 controller + 3 nodes, all on
# 127.0.0.1, no munge) for tests. Slurm itself (Debian: slurm-wlm) must
# already be installed; this script installs nothing.
#
# Usage:
#   eval "$(bash tests/slurm/cluster.sh start STATE_DIR)"  # sets SLURM_CONF
#   ...  srun / sbatch / squeue  (SLURM_CONF=STATE_DIR/slurm.conf)
#   bash tests/slurm/cluster.sh stop STATE_DIR
#
# STATE_DIR is wiped on start. Partitions: "low" (default, PriorityTier=1,
# preemptable by requeue) and "high" (PriorityTier=2), both on node[1-3],
# one CPU each. Ports: SlurmctldPort=$SLURM_TEST_PORT (default 16817),
# nodes on the next three ports; pick another base to run clusters side by side.
set -euo pipefail

die() { echo "cluster.sh: $*" >&2; exit 1; }
[ $# -eq 2 ] || die "usage: cluster.sh start|stop STATE_DIR"
cmd=$1
dir=$(realpath -m "$2")
[ "$dir" != / ] || die "refusing to use / as STATE_DIR"
conf=$dir/slurm.conf

# True if process $1 exists and is not a zombie.
alive() { local st; { read -r st <"/proc/$1/stat"; } 2>/dev/null && [[ ${st##*) } != Z* ]]; }

# Print the ids of live (not zombie) processes in the sessions listed in $1
# (" sid sid ... "). /proc/PID/stat is "pid (comm) state ppid pgrp session ..".
members() {
  local f st f4
  for f in /proc/[0-9]*/stat; do
    { read -r st <"$f"; } 2>/dev/null || continue
    read -r -a f4 <<<"${st##*) }"
    if [ "${f4[0]}" != Z ] && [[ $1 == *" ${f4[3]} "* ]]; then echo "${st%% *}"; fi
  done
}

# Stop the cluster. Each daemon was started as a session leader (setsid), so
# kill its whole session; pids are checked against our slurm.conf in case one
# was reused. Job steps run under slurmstepd in sessions of their own, outlive
# slurmd and ignore TERM: find them by the SLURM_CONF they inherited from
# slurmd and KILL their sessions right away. Waits until all are gone/zombies.
stop() {
  [ -f "$dir/pids" ] || return 0
  local pid f i st f4 live sids=" " steps=" "
  while read -r pid; do
    tr '\0' ' ' 2>/dev/null <"/proc/$pid/cmdline" | grep -F -- "-f $conf " >/dev/null && sids+="$pid "
  done <"$dir/pids"
  for f in /proc/[0-9]*; do
    if [ "$(cat "$f/comm" 2>/dev/null)" = slurmstepd ] &&
      tr '\0' '\n' 2>/dev/null <"$f/environ" | grep -xF "SLURM_CONF=$conf" >/dev/null &&
      { read -r st <"$f/stat"; } 2>/dev/null; then
      read -r -a f4 <<<"${st##*) }"
      steps+="${f4[3]} "
    fi
  done
  # shellcheck disable=SC2046  # word splitting of pid lists is intended
  kill -KILL $(members "$steps") 2>/dev/null || true
  for i in $(seq 100); do               # 100 x 0.1 s: TERM, KILL after 5 s
    live=$(members "$sids$steps")
    [ -z "$live" ] && break
    # shellcheck disable=SC2086
    case $i in 1) kill -TERM $live ;; 50) kill -KILL $live ;; esac 2>/dev/null || true
    sleep 0.1
  done
  rm -f "$dir/pids"
}

case $cmd in
stop) stop; exit 0 ;;
start) ;;
*) die "unknown command: $cmd" ;;
esac

for b in slurmctld slurmd srun sinfo scontrol; do
  command -v "$b" >/dev/null || die "slurm-wlm is not installed"
done

stop                                   # a previous cluster in the same dir
rm -rf "$dir"
mkdir -p "$dir"/{state,run,log} "$dir"/spool/node{1,2,3}
base=${SLURM_TEST_PORT:-16817}
user=$(id -un)

cat >"$conf" <<CONF
ClusterName=fruntest
SlurmctldHost=localhost
SlurmctldPort=$base
SlurmdPort=$((base + 1))
AuthType=auth/none
CredType=cred/none
AuthInfo=cred_expire=5
SlurmUser=$user
SlurmdUser=$user
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool/%n
SlurmdPidFile=$dir/run/slurmd-%n.pid
SlurmctldPidFile=$dir/run/slurmctld.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd-%n.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerType=sched/backfill
SchedulerParameters=sched_interval=1,bf_interval=1
MpiDefault=none
ReturnToService=2
SlurmdParameters=config_overrides
CommunicationParameters=NoInAddrAny
InactiveLimit=0
KillWait=5
MinJobAge=300
SlurmctldTimeout=30
SlurmdTimeout=30
MailProg=/bin/true
PreemptType=preempt/partition_prio
PreemptMode=REQUEUE
NodeName=node1 NodeHostname=localhost NodeAddr=127.0.0.1 Port=$((base + 1)) CPUs=1 RealMemory=500 State=UNKNOWN
NodeName=node2 NodeHostname=localhost NodeAddr=127.0.0.1 Port=$((base + 2)) CPUs=1 RealMemory=500 State=UNKNOWN
NodeName=node3 NodeHostname=localhost NodeAddr=127.0.0.1 Port=$((base + 3)) CPUs=1 RealMemory=500 State=UNKNOWN
PartitionName=low Nodes=node[1-3] Default=YES MaxTime=INFINITE State=UP PriorityTier=1
PartitionName=high Nodes=node[1-3] MaxTime=INFINITE State=UP PriorityTier=2 PreemptMode=OFF
CONF

# setsid: own session, so the daemons outlive this script and its terminal.
export SLURM_CONF=$conf                # also marks slurmstepd as ours, see stop
setsid slurmctld -D -f "$conf" >"$dir/log/slurmctld.out" 2>&1 </dev/null &
echo $! >"$dir/pids"
for n in 1 2 3; do
  setsid slurmd -D -f "$conf" -N "node$n" >"$dir/log/slurmd-node$n.out" 2>&1 </dev/null &
  echo $! >>"$dir/pids"
done

for _ in $(seq 80); do                 # up to 20 s for 3 idle nodes
  while read -r pid; do alive "$pid" || break 2; done <"$dir/pids"  # one died
  idle=$(sinfo -h -N -p low -o '%t' 2>/dev/null | grep -c '^idle$' || true)
  # ...and they are ours, not another cluster's on the same port
  if [ "$idle" -eq 3 ] && scontrol show config 2>/dev/null |
    grep -x "StateSaveLocation *= $dir/state" >/dev/null; then
    echo "export SLURM_CONF=$conf"
    exit 0
  fi
  sleep 0.25
done
echo "cluster.sh: a daemon died or nodes not idle within 20 s" >&2
sinfo -N >&2 || true
tail -n 20 "$dir"/log/*.out >&2
stop
exit 1
