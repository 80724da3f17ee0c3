#!/usr/bin/env bash
# A single-node Slurm cluster on this machine, for testing the batch scripts against a
# real scheduler (Debian's slurm-wlm and munge; installed here if missing; needs root):
#
#   bash scripts/slurm/local-cluster.sh start   # munged, slurmctld, slurmd; waits for the node
#   bash scripts/slurm/local-cluster.sh stop    # stops exactly the daemons `start` started
#
# The configuration is written to a directory of its own ($NTK_SLURM_DIR, default
# /tmp/ntk-slurm) and passed by SLURM_CONF, so a Slurm already configured on the machine is
# left alone; `start` prints the `export SLURM_CONF=...` its clients need.
set -euo pipefail
dir=${NTK_SLURM_DIR:-/tmp/ntk-slurm}
conf=$dir/slurm.conf
pids=$dir/pids

need() {
    command -v slurmctld >/dev/null && command -v munged >/dev/null && return
    echo "local-cluster: installing slurm-wlm and munge (Debian packages)"
    apt-get update -qq >/dev/null
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
        slurm-wlm munge >/dev/null
}

start() {
    need
    # A fresh cluster each time: no jobs of an earlier one.
    rm -rf "$dir/ctld" "$dir/d"
    mkdir -p "$dir/ctld" "$dir/d" "$dir/log"
    : >"$pids"
    # munge: a key, its directories, the daemon as the munge user (its own socket).
    install -d -o munge -g munge -m 0700 "$dir/munge"
    install -d -o munge -g munge -m 0755 "$dir/munge-run"
    if [ ! -s "$dir/munge.key" ]; then
        dd if=/dev/urandom of="$dir/munge.key" bs=1024 count=1 status=none
    fi
    chown munge:munge "$dir/munge.key"
    chmod 0400 "$dir/munge.key"
    runuser -u munge -- munged --key-file="$dir/munge.key" \
        --socket="$dir/munge-run/munge.socket" --pid-file="$dir/munge-run/munged.pid" \
        --log-file="$dir/munge/munged.log" --seed-file="$dir/munge/munged.seed"
    cat "$dir/munge-run/munged.pid" >>"$pids"
    local host cpus mem
    host=$(hostname -s)
    cpus=$(nproc)
    mem=$(awk '/MemTotal/ {print int($2 / 1024 * 0.9)}' /proc/meminfo)
    cat >"$conf" <<CONF
ClusterName=ntk
SlurmctldHost=$host
SlurmUser=root
AuthType=auth/munge
AuthInfo=socket=$dir/munge-run/munge.socket
CredType=cred/munge
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/backfill
MpiDefault=none
ReturnToService=2
StateSaveLocation=$dir/ctld
SlurmdSpoolDir=$dir/d
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.log
SlurmctldPort=16817
SlurmdPort=16818
MinJobAge=600
KillWait=10
NodeName=$host CPUs=$cpus RealMemory=$mem State=UNKNOWN
PartitionName=debug Nodes=$host Default=YES MaxTime=INFINITE State=UP
CONF
    export SLURM_CONF=$conf
    slurmctld -f "$conf"
    slurmd -f "$conf"
    for _ in $(seq 1 100); do
        [ -s "$dir/slurmctld.pid" ] && [ -s "$dir/slurmd.pid" ] && break
        sleep 0.1
    done
    cat "$dir/slurmctld.pid" "$dir/slurmd.pid" >>"$pids"
    for _ in $(seq 1 100); do
        if sinfo -h -o %t 2>/dev/null | grep -qx idle; then
            echo "local-cluster: up ($host, $cpus CPUs); clients need: export SLURM_CONF=$conf"
            return
        fi
        sleep 0.2
    done
    echo "local-cluster: the node did not come up; see $dir/log" >&2
    stop
    exit 1
}

stop() {
    [ -f "$pids" ] || { echo "local-cluster: nothing started here"; return; }
    # slurmd, slurmctld, then munged: exactly the processes `start` recorded.
    tac "$pids" | while read -r pid; do
        kill "$pid" 2>/dev/null || true
        for _ in $(seq 1 50); do
            kill -0 "$pid" 2>/dev/null || break
            sleep 0.1
        done
    done
    rm -f "$pids"
    echo "local-cluster: stopped"
}

case "${1:-}" in
    start) start ;;
    stop) stop ;;
    *) echo "usage: $0 start|stop" >&2; exit 2 ;;
esac
