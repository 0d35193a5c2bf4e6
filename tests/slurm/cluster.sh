#!/usr/bin/env bash
# A one-node Slurm cluster on this machine, for the campaign test in CI:
# munged, slurmctld and slurmd from Debian, configured under a state
# directory of their own (SLURM_CONF points there; /etc/slurm is left
# alone), started and stopped by this script. Run as root.
#
#   tests/slurm/cluster.sh install        apt-get the Debian packages (idempotent)
#   tests/slurm/cluster.sh start DIR      start the cluster; prints `export SLURM_CONF=...`
#   tests/slurm/cluster.sh stop DIR       stop every daemon it started
set -euo pipefail

PACKAGES=(munge slurmctld slurmd slurm-client)
die() { echo "cluster.sh: ERROR: $*" >&2; exit 2; }

install() {
    local missing=()
    for p in "${PACKAGES[@]}"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
    done
    if [ ${#missing[@]} -eq 0 ]; then
        echo "cluster.sh: Slurm and munge already installed"
        return
    fi
    [ "$(id -u)" -eq 0 ] || die "need root to install ${missing[*]}"
    echo "cluster.sh: apt: installing ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    # The packages' own service start fails without systemd; that is fine,
    # this script starts the daemons itself.
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

start() {
    local dir="$1"
    for t in munged slurmctld slurmd; do
        command -v "$t" >/dev/null || [ -x "/usr/sbin/$t" ] || die "$t missing: run '$0 install' first"
    done
    [ "$(id -u)" -eq 0 ] || die "the one-node cluster runs its daemons as root"
    stop "$dir" 2>/dev/null || true
    mkdir -p "$dir"/{state,spool,log,munge}
    dir="$(cd "$dir" && pwd)"
    local host cpus
    host="$(hostname -s)"
    cpus="$(nproc)"
    # munge: its own key and socket, so a machine's munge is not touched
    /usr/sbin/mungekey -c -f -k "$dir/munge/munge.key" 2>/dev/null \
        || dd if=/dev/urandom of="$dir/munge/munge.key" bs=1024 count=1 status=none
    chmod 600 "$dir/munge/munge.key"
    /usr/sbin/munged -f --key-file="$dir/munge/munge.key" \
        --socket="$dir/munge/munge.socket" --pid-file="$dir/munge/munged.pid" \
        --log-file="$dir/log/munged.log" --seed-file="$dir/munge/munged.seed"
    cat > "$dir/slurm.conf" <<CONF
ClusterName=rnic-ci
SlurmctldHost=$host(127.0.0.1)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$dir/munge/munge.socket
CredType=cred/munge
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
MpiDefault=none
SchedulerType=sched/backfill
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus State=UNKNOWN
PartitionName=ci Nodes=$host Default=YES MaxTime=INFINITE State=UP
CONF
    export SLURM_CONF="$dir/slurm.conf"
    /usr/sbin/slurmctld -i
    /usr/sbin/slurmd
    # the node registers within a few seconds
    local i
    for i in $(seq 1 60); do
        if sinfo -h -o '%T' 2>/dev/null | grep -Eq '^(idle|mixed|allocated)'; then
            echo "export SLURM_CONF=$SLURM_CONF"
            return 0
        fi
        sleep 0.5
    done
    sinfo >&2 || true
    tail -n 20 "$dir/log/slurmctld.log" "$dir/log/slurmd.log" >&2 || true
    die "the node did not come up in 30 s (logs above)"
}

stop() {
    local dir="$1" f
    for f in slurmd.pid slurmctld.pid munge/munged.pid; do
        if [ -f "$dir/$f" ]; then
            kill "$(cat "$dir/$f")" 2>/dev/null || true
        fi
    done
    # wait for them to go, so a restart does not find the ports taken
    for f in slurmd.pid slurmctld.pid munge/munged.pid; do
        if [ -f "$dir/$f" ]; then
            local p i
            p="$(cat "$dir/$f")"
            for i in $(seq 1 40); do
                kill -0 "$p" 2>/dev/null || break
                sleep 0.25
            done
            kill -9 "$p" 2>/dev/null || true
            rm -f "$dir/$f"
        fi
    done
}

case "${1:-}" in
    install) install ;;
    start) [ $# -eq 2 ] || die "usage: $0 start DIR"; start "$2" ;;
    stop) [ $# -eq 2 ] || die "usage: $0 stop DIR"; stop "$2" ;;
    *) die "usage: $0 install | start DIR | stop DIR" ;;
esac
