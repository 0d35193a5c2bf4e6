#!/bin/sh
# rnic-init: PID 1 of the rnic soft-RoCE (rdma_rxe) guest.
# Installed as /sbin/rnic-init by build-image.sh; booted with
#   init=/sbin/rnic-init
#
# Kernel command line parameters:
#   rnic.ip=A.B.C.D/NN   eth0 (RoCE port) address        default 192.168.77.2/24
#   rnic.mtu=N           eth0 MTU                         default 4200 (rxe active_mtu 4096)
#   rnic.neigh=IP,MAC    static neighbour on eth0, repeatable (the simulated
#                        NIC does not answer ARP)
#   rnic.ipv6=1          keep IPv6 on eth0 (default: disabled, so the guest
#                        sends no ND/MLD frames into the RoCE fabric)
#   rnic.shell=1         also start a root shell on the console (debugging)
#   rnic.role=vfio       no network and no rxe: load VFIO (vfio-pci,
#                        vfio_iommu_type1) for PCI functions served over
#                        vfio-user (sim/vm/), report ready with "vfio -"
#   rnic.share=TAG       mount the 9p share TAG (QEMU -virtfs ...,mount_tag=TAG)
#                        read-only at /mnt/host
# eth1 (QEMU user network) gets 10.0.2.15/24, default route via 10.0.2.2.
#
# Agent on the virtio-serial port named "rnic.agent":
#   guest -> host   @@rnic-ready <gid index 1> <active_mtu>    (once, first line)
#               or  @@rnic-failed <reason>                      (then power off)
#   host  -> guest  one shell command per line
#   guest -> host   its stdout+stderr, line by line, then  @@rnic-exit <rc>
#   "poweroff" answers @@rnic-exit 0 and powers the VM off.
#
# PID 1 must never exit: every failure prints why and powers off.

PATH=/usr/sbin:/usr/bin:/sbin:/bin
HOME=/root
export PATH HOME
umask 022
set -f # no globbing of words from the command line

RXE_TIMEOUT=60
AGENT_NAME=rnic.agent
PORT_FD_OPEN=0

log() { echo "rnic-init: [$(uptime_s)] $*"; }
uptime_s() {
    if [ -r /proc/uptime ]; then
        read -r up _ </proc/uptime && echo "$up" && return
    fi
    echo "?"
}
# Integer seconds since boot.
now() {
    read -r up _ </proc/uptime 2>/dev/null || up=0
    echo "${up%.*}"
}

poweroff_now() {
    log "powering off"
    sync
    { echo o >/proc/sysrq-trigger; } 2>/dev/null
    sleep 10
    poweroff -f 2>/dev/null
    { echo b >/proc/sysrq-trigger; } 2>/dev/null
    while :; do sleep 3600; done
}

fail() {
    log "FAILED: $*"
    diag 2>/dev/null
    if [ "$PORT_FD_OPEN" = 1 ]; then
        # The write blocks until a host client is connected; bounded.
        timeout 60 sh -c 'printf "@@rnic-failed %s\n" "$1" >&3' _ "$*" ||
            log "could not deliver @@rnic-failed to the agent port"
    fi
    poweroff_now
}

diag() {
    echo "---- rnic-init diagnostics ----"
    ip -br link
    ip -br addr
    ip neigh show dev eth0 2>/dev/null
    ip route
    rdma link 2>&1
    if [ -d /sys/class/infiniband/rxe0 ]; then
        ibv_devinfo -d rxe0 2>&1
        ibv_devinfo -v -d rxe0 2>&1 | grep -i gid
        for g in 0 1; do
            echo "rxe0 port 1 gid[$g] = $(cat /sys/class/infiniband/rxe0/ports/1/gids/$g 2>/dev/null)" \
                "($(cat /sys/class/infiniband/rxe0/ports/1/gid_attrs/types/$g 2>/dev/null))"
        done
    fi
    echo "-------------------------------"
}

is_mounted() { grep -q "^[^ ]* $1 " /proc/self/mounts 2>/dev/null; }
mnt() { # type dir opts
    mkdir -p "$2" 2>/dev/null
    is_mounted "$2" || mount -n -t "$1" -o "$3" "$1" "$2"
}

# --- 1. file systems and console ------------------------------------------
[ -d /proc/self ] || mount -n -t proc -o nosuid,nodev,noexec proc /proc
mnt sysfs /sys nosuid,nodev,noexec
mnt devtmpfs /dev mode=0755,nosuid
if [ -c /dev/console ]; then
    command exec </dev/console >/dev/console 2>&1
fi
mnt devpts /dev/pts gid=5,mode=620,ptmxmode=000,nosuid,noexec
mnt tmpfs /run mode=0755,nosuid,nodev
mnt tmpfs /tmp mode=1777,nosuid,nodev
mnt tmpfs /dev/shm mode=1777,nosuid,nodev
[ -e /dev/fd ] || ln -s /proc/self/fd /dev/fd
is_mounted / && mount -n -o remount,rw / 2>/dev/null
echo rnic-guest >/proc/sys/kernel/hostname

log "starting on $(uname -r), cmdline: $(cat /proc/cmdline)"

# --- 2. parameters --------------------------------------------------------
IP=192.168.77.2/24
MTU=4200
NEIGHS=""
IPV6=0
SHELL_ON_CONSOLE=0
ROLE=rxe
SHARE=""
for arg in $(cat /proc/cmdline); do
    case $arg in
        rnic.ip=*) IP=${arg#rnic.ip=} ;;
        rnic.mtu=*) MTU=${arg#rnic.mtu=} ;;
        rnic.neigh=*) NEIGHS="$NEIGHS ${arg#rnic.neigh=}" ;;
        rnic.ipv6=*) IPV6=${arg#rnic.ipv6=} ;;
        rnic.shell=*) SHELL_ON_CONSOLE=${arg#rnic.shell=} ;;
        rnic.role=*) ROLE=${arg#rnic.role=} ;;
        rnic.share=*) SHARE=${arg#rnic.share=} ;;
    esac
done
case $MTU in '' | *[!0-9]*) fail "bad rnic.mtu=$MTU" ;; esac
case $IP in */*) ;; *) IP=$IP/24 ;; esac

case $ROLE in
    rxe) MODULES="virtio_pci virtio_net virtio_console udp_tunnel ip6_udp_tunnel ib_core rdma_rxe ib_uverbs rdma_ucm" ;;
    vfio) MODULES="virtio_pci virtio_console vfio vfio_iommu_type1 vfio_pci" ;;
    *) fail "bad rnic.role=$ROLE (rxe or vfio)" ;;
esac
[ -z "$SHARE" ] || MODULES="$MODULES 9pnet_virtio 9p"

# --- 3. modules -----------------------------------------------------------
for m in $MODULES; do
    if ! modprobe "$m" 2>/tmp/modprobe.err; then
        # built in is fine; a missing module is not
        if ! grep -q "/$m\.ko" "/lib/modules/$(uname -r)/modules.builtin" 2>/dev/null; then
            fail "modprobe $m: $(cat /tmp/modprobe.err)"
        fi
    fi
done

# --- 4. agent port ----------------------------------------------------------
find_port() {
    if [ -e /dev/virtio-ports/$AGENT_NAME ]; then
        echo /dev/virtio-ports/$AGENT_NAME
        return 0
    fi
    for d in /sys/class/virtio-ports/*; do
        [ -r "$d/name" ] || continue
        if [ "$(cat "$d/name")" = "$AGENT_NAME" ] && [ -c "/dev/${d##*/}" ]; then
            echo "/dev/${d##*/}"
            return 0
        fi
    done
    return 1
}
set +f
deadline=$(($(now) + 15))
PORT=""
while :; do
    PORT=$(find_port) && break
    [ "$(now)" -ge "$deadline" ] && break
    sleep 0.2
done
set -f
[ -n "$PORT" ] || fail "no virtio-serial port named $AGENT_NAME (need -device virtio-serial-pci -device virtserialport,name=$AGENT_NAME,...)"
# Port, not a tty: no line discipline, bytes pass unchanged.
command exec 3<>"$PORT" || fail "cannot open $PORT"
PORT_FD_OPEN=1
log "agent port $PORT"

# --- 5. shared folder ---------------------------------------------------------
if [ -n "$SHARE" ]; then
    mkdir -p /mnt/host
    mount -t 9p -o trans=virtio,version=9p2000.L,ro,msize=262144 "$SHARE" /mnt/host 2>/tmp/mount.err ||
        fail "mount 9p share $SHARE at /mnt/host: $(cat /tmp/mount.err)"
    log "9p share $SHARE at /mnt/host"
fi

if [ "$ROLE" = vfio ]; then
    log "role vfio: PCI functions:"
    if command -v lspci >/dev/null 2>&1; then lspci -nn; fi
    log "IOMMU groups: $(ls /sys/kernel/iommu_groups 2>/dev/null | wc -l)"
    gid=vfio
    active_mtu=-
else
# --- 6. network -------------------------------------------------------------
deadline=$(($(now) + 15))
while [ ! -e /sys/class/net/eth0 ] || [ ! -e /sys/class/net/eth1 ]; do
    [ "$(now)" -ge "$deadline" ] && fail "eth0/eth1 did not appear (have: $(ls /sys/class/net | tr '\n' ' '))"
    sleep 0.2
done
log "eth0 $(cat /sys/class/net/eth0/address) (RoCE), eth1 $(cat /sys/class/net/eth1/address) (control)"

ip link set lo up || fail "lo up"
if [ "$IPV6" != 1 ]; then
    echo 1 >/proc/sys/net/ipv6/conf/eth0/disable_ipv6 || fail "disable IPv6 on eth0"
fi
ip link set eth0 mtu "$MTU" || fail "ip link set eth0 mtu $MTU"
ip addr add "$IP" dev eth0 || fail "ip addr add $IP dev eth0"
ip link set eth0 up || fail "eth0 up"
for n in $NEIGHS; do
    nip=${n%%,*}
    nmac=${n#*,}
    ip neigh replace "$nip" lladdr "$nmac" dev eth0 nud permanent || fail "bad rnic.neigh=$n"
done
ip addr add 10.0.2.15/24 dev eth1 || fail "eth1 address"
ip link set eth1 up || fail "eth1 up"
ip route add default via 10.0.2.2 dev eth1 || fail "default route via eth1"

# --- 7. rxe -------------------------------------------------------------------
rdma link add rxe0 type rxe netdev eth0 2>/tmp/rdma.err ||
    fail "rdma link add rxe0 type rxe netdev eth0: $(cat /tmp/rdma.err)"
GID_FILE=/sys/class/infiniband/rxe0/ports/1/gids/1
ZERO_GID=0000:0000:0000:0000:0000:0000:0000:0000
deadline=$(($(now) + RXE_TIMEOUT))
while :; do
    if ibv_devinfo -d rxe0 2>/dev/null | grep -q PORT_ACTIVE; then
        gid=$(cat $GID_FILE 2>/dev/null)
        [ -n "$gid" ] && [ "$gid" != $ZERO_GID ] && break
    fi
    if [ "$(now)" -ge "$deadline" ]; then
        fail "rxe0 not PORT_ACTIVE with a GID at index 1 after ${RXE_TIMEOUT}s (eth0 carrier $(cat /sys/class/net/eth0/carrier 2>/dev/null))"
    fi
    sleep 0.2
done
active_mtu=$(ibv_devinfo -d rxe0 | sed -n 's/.*active_mtu:[[:space:]]*\([0-9][0-9]*\).*/\1/p' | head -n 1)
[ -n "$active_mtu" ] || fail "cannot read active_mtu of rxe0"
log "rxe0 PORT_ACTIVE, gid[1] $gid, active_mtu $active_mtu"
diag
fi

if [ "$SHELL_ON_CONSOLE" = 1 ]; then
    log "rnic.shell=1: root shell on the console"
    setsid -c sh </dev/console >/dev/console 2>&1 3>&- &
fi

# --- 8. agent -----------------------------------------------------------------
RCFILE=/tmp/rnic-agent.rc
CR=$(printf '\r')

# Copy stdin to stdout as lines arrive (streaming), adding a final newline if
# missing so that @@rnic-exit always starts a line. mawk -W interactive reads
# and writes without block buffering and is ~10x faster than the sh loop
# (which moves ~30 KB/s under TCG).
if command -v mawk >/dev/null 2>&1; then
    lines() { mawk -W interactive '{ print }'; }
else
    lines() {
        while IFS= read -r l || [ -n "$l" ]; do
            printf '%s\n' "$l"
        done
    }
fi

log "agent: waiting for the host on $PORT"
printf '@@rnic-ready %s %s\n' "$gid" "$active_mtu" >&3
log "agent: @@rnic-ready delivered"

while :; do
    line=""
    if ! IFS= read -r line <&3; then
        if [ -z "$line" ]; then
            # EOF: host side not connected (virtio ports read 0 then). Poll.
            sleep 0.2
            continue
        fi
    fi
    line=${line%"$CR"}
    case $line in
        poweroff | " poweroff" | "poweroff ")
            log "agent: poweroff"
            printf '@@rnic-exit 0\n' >&3
            poweroff_now
            ;;
    esac
    if [ ${#line} -gt 200 ]; then
        log "agent: \$ $(printf '%.200s' "$line")... (${#line} chars)"
    else
        log "agent: \$ $line"
    fi
    echo 255 >$RCFILE
    { sh -c "$line" </dev/null 2>&1; echo $? >$RCFILE; } 3>&- | lines >&3
    read -r rc <$RCFILE || rc=255
    printf '@@rnic-exit %s\n' "$rc" >&3
    log "agent: exit $rc"
done
