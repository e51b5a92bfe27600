#!/usr/bin/env bash
# A throwaway one-node SLURM cluster on this machine, for the sweep's SLURM
# test (harness/sweep/slurm_test.go) and for trying `xbench sweep --slurm`.
#
#   scripts/slurm-local.sh start DIR   install slurm-wlm and munge if missing, write
#                                      DIR/slurm.conf, start munged, slurmctld and slurmd,
#                                      wait for the node to be idle
#   scripts/slurm-local.sh stop DIR    stop what start started
#   scripts/slurm-local.sh logs DIR    print the daemons' logs
#
# Clients need SLURM_CONF=DIR/slurm.conf (start prints it). Runs as root: the
# daemons and the jobs run as root, state and spool live under DIR, no
# cgroups, no accounting. Ports: XBENCH_SLURM_PORT (slurmctld, default
# 16817) and the next one (slurmd), away from a system SLURM's 6817/6818.
set -euo pipefail

die() { echo "slurm-local: $*" >&2; exit 1; }

cmd=${1:-}
dir=${2:-}
[[ -n $cmd && -n $dir ]] || die "usage: $0 start|stop|logs DIR"
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
conf=$dir/slurm.conf
port=${XBENCH_SLURM_PORT:-16817}
host=$(hostname -s)

install() {
    local missing=()
    command -v slurmctld >/dev/null || missing+=(slurmctld)
    command -v slurmd >/dev/null || missing+=(slurmd)
    command -v sbatch >/dev/null || missing+=(slurm-client)
    command -v munged >/dev/null || missing+=(munge)
    ((${#missing[@]} == 0)) && return 0
    [[ $(id -u) == 0 ]] || die "need root to install ${missing[*]}"
    echo "slurm-local: installing ${missing[*]} (apt-get)" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get install -y -q --no-install-recommends slurm-wlm munge >"$dir/apt.log" 2>&1 ||
        { apt-get update -q >>"$dir/apt.log" 2>&1 && apt-get install -y -q --no-install-recommends slurm-wlm munge >>"$dir/apt.log" 2>&1; } ||
        { tail -20 "$dir/apt.log" >&2; die "apt-get install slurm-wlm munge failed (log: $dir/apt.log)"; }
}

start_munge() {
    # One munged serves the machine; reuse a running one.
    if munge -n </dev/null >/dev/null 2>&1; then return 0; fi
    if [[ ! -s /etc/munge/munge.key ]]; then
        mkdir -p /etc/munge
        if command -v mungekey >/dev/null; then mungekey --create --keyfile=/etc/munge/munge.key --force
        else dd if=/dev/urandom of=/etc/munge/munge.key bs=1024 count=1 status=none; fi
    fi
    mkdir -p /run/munge /var/lib/munge /var/log/munge
    if id munge >/dev/null 2>&1; then
        chown munge:munge /etc/munge /etc/munge/munge.key /run/munge /var/lib/munge /var/log/munge
        chmod 0700 /etc/munge /var/lib/munge /var/log/munge
        chmod 0400 /etc/munge/munge.key
        chmod 0755 /run/munge
        runuser -u munge -- munged
    else
        munged --force
    fi
    for _ in $(seq 50); do munge -n </dev/null >/dev/null 2>&1 && { touch "$dir/munged.ours"; return 0; }; sleep 0.2; done
    die "munged does not answer (munge -n fails)"
}

write_conf() {
    mkdir -p "$dir/state" "$dir/spool"
    cat >"$conf" <<CONF
ClusterName=xbench-local
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$port
SlurmdPort=$((port + 1))
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/slurmctld.log
SlurmdLogFile=$dir/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
MpiDefault=none
ReturnToService=2
SlurmdTimeout=60
NodeName=$host NodeAddr=127.0.0.1 CPUs=$(nproc) State=UNKNOWN
PartitionName=local Nodes=$host Default=YES MaxTime=INFINITE State=UP
CONF
}

listening() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# running NAME: the daemon wrote its pid file and is alive (not a zombie).
running() {
    local pid
    pid=$(cat "$dir/$1.pid" 2>/dev/null) || return 1
    [[ -n $pid && -e /proc/$pid ]] && ! grep -q '^[0-9]* ([^)]*) Z' "/proc/$pid/stat" 2>/dev/null
}

start() {
    install
    # Another cluster on these ports would answer our clients and run our
    # jobs; refuse rather than test the wrong one.
    for p in "$port" $((port + 1)); do
        listening "$p" && die "port $p is in use (another slurmctld/slurmd?); set XBENCH_SLURM_PORT to a free pair"
    done
    start_munge
    write_conf
    export SLURM_CONF=$conf
    # -i: ignore state from an earlier run of this folder.
    slurmctld -i -f "$conf" || die "slurmctld did not start; see $dir/slurmctld.log"
    slurmd -f "$conf" || die "slurmd did not start; see $dir/slurmd.log"
    for d in slurmctld slurmd; do
        for _ in $(seq 50); do running "$d" && break; sleep 0.1; done
        running "$d" || { logs >&2; die "$d exited right after starting"; }
    done
    local state=""
    for _ in $(seq 120); do
        state=$(sinfo -h -N -n "$host" -o %T 2>/dev/null || true)
        case $state in
        idle*) echo "slurm-local: node $host is idle; export SLURM_CONF=$conf"; return 0 ;;
        down* | drain*) scontrol update nodename="$host" state=resume >/dev/null 2>&1 || true ;;
        esac
        sleep 0.5
    done
    logs >&2
    die "node $host not idle after 60s (state: ${state:-none})"
}

stop() {
    export SLURM_CONF=$conf
    [[ -f $conf ]] && scontrol shutdown >/dev/null 2>&1 || true
    for d in slurmd slurmctld; do
        local pidfile=$dir/$d.pid
        [[ -f $pidfile ]] || continue
        local pid
        pid=$(cat "$pidfile")
        for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
        kill -9 "$pid" 2>/dev/null || true
        rm -f "$pidfile"
    done
    if [[ -f $dir/munged.ours ]]; then
        local mpid
        mpid=$(cat /run/munge/munged.pid 2>/dev/null || true)
        [[ -n $mpid ]] && kill "$mpid" 2>/dev/null || true
        rm -f "$dir/munged.ours"
    fi
}

logs() {
    for f in slurmctld.log slurmd.log; do
        echo "==== $dir/$f"
        tail -n 60 "$dir/$f" 2>/dev/null || echo "(none)"
    done
}

case $cmd in
start) start ;;
stop) stop ;;
logs) logs ;;
*) die "unknown command $cmd (start, stop, logs)" ;;
esac
