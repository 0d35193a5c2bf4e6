#!/bin/bash
# Reference launcher for the rnic rxe guest (manual use; the Rust runner
# builds the same QEMU command line itself). The command line is:
#
#   qemu-system-x86_64 -accel tcg -machine q35 -cpu max -m 1024 -smp 1 \
#     -nodefaults -display none -no-reboot \
#     -kernel OUT/vmlinuz -initrd OUT/initrd.img \
#     -append "root=/dev/vda rw console=ttyS0 net.ifnames=0 init=/sbin/rnic-init \
#              rnic.ip=192.168.77.2/24 rnic.neigh=192.168.77.1,02:00:00:00:00:01" \
#     -drive file=OUT/rootfs.ext4,if=virtio,format=raw,snapshot=on \
#     -netdev stream,id=roce,server=off,addr.type=unix,addr.path=FABRIC_SOCK \
#     -device virtio-net-pci,netdev=roce,mac=52:54:00:12:34:02 \
#     -netdev user,id=ctl,hostfwd=tcp:127.0.0.1:HOSTPORT-:18515 \
#     -device virtio-net-pci,netdev=ctl,mac=52:54:00:12:34:03 \
#     -device virtio-serial-pci \
#     -chardev socket,id=agent,path=AGENT_SOCK,server=on,wait=off \
#     -device virtserialport,chardev=agent,name=rnic.agent \
#     -serial file:CONSOLE_LOG
#
# - eth0 in the guest = the first virtio-net (RoCE port, MAC ...:02) on the
#   stream netdev: QEMU *connects* to FABRIC_SOCK (server=off), so the peer
#   must be listening before QEMU starts. QEMU 10 does NOT fail without one:
#   it boots, the guest sees carrier, rxe0 goes PORT_ACTIVE, and every frame
#   is silently dropped; it never retries unless ",reconnect-ms=N" is added
#   to the -netdev (then it connects when the listener appears, and again
#   after the peer goes away). Frames are a 4-byte big-endian length + the
#   Ethernet frame. Without a simulator, this script starts fabric-sink.py.
# - eth1 = the second virtio-net (slirp, MAC ...:03): host 127.0.0.1:HOSTPORT
#   -> guest 10.0.2.15:18515 (perftest's TCP port); the guest reaches the
#   host as 10.0.2.2.
# - AGENT_SOCK: QEMU listens; connect with agent.py (protocol in README.md).
# - -accel tcg: KVM is not used (not available here).
#
# Usage: run-guest.sh OUTDIR        (QEMU in the foreground; Ctrl-C or
#                                    "agent.py AGENT_SOCK poweroff" to stop)
# Environment (all optional):
#   FABRIC_SOCK  stream peer socket   (default: start fabric-sink.py on WORK/fabric.sock)
#   AGENT_SOCK   agent socket         (default WORK/agent.sock)
#   HOSTPORT     host TCP port -> guest 18515 (default 18515)
#   CONSOLE_LOG  serial console file  (default WORK/console.log; "stdio" = this terminal)
#   WORK         directory for the above (default: a new mktemp -d)
#   GUEST_IP     default 192.168.77.2/24
#   NEIGH        default 192.168.77.1,02:00:00:00:00:01 (the simulated NIC)
#   EXTRA_APPEND more kernel parameters (rnic.mtu=, rnic.ipv6=1, rnic.shell=1 ...)
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
[ $# -eq 1 ] || { echo "usage: $0 OUTDIR" >&2; exit 2; }
OUT=$(cd "$1" && pwd)
for f in vmlinuz initrd.img rootfs.ext4; do
    [ -s "$OUT/$f" ] || { echo "$OUT/$f missing; build with: sudo $HERE/build-image.sh $OUT" >&2; exit 1; }
done

WORK=${WORK:-$(mktemp -d /tmp/rnic-rxe-guest.XXXXXX)}
mkdir -p "$WORK"
AGENT_SOCK=${AGENT_SOCK:-$WORK/agent.sock}
HOSTPORT=${HOSTPORT:-18515}
CONSOLE_LOG=${CONSOLE_LOG:-$WORK/console.log}
GUEST_IP=${GUEST_IP:-192.168.77.2/24}
NEIGH=${NEIGH:-192.168.77.1,02:00:00:00:00:01}

sink_pid=""
cleanup() { [ -n "$sink_pid" ] && kill "$sink_pid" 2>/dev/null; wait 2>/dev/null; true; }
trap cleanup EXIT

if [ -z "${FABRIC_SOCK:-}" ]; then
    FABRIC_SOCK=$WORK/fabric.sock
    python3 "$HERE/fabric-sink.py" "$FABRIC_SOCK" --pcap "$WORK/eth0.pcap" --log "$WORK/eth0-frames.txt" &
    sink_pid=$!
    for _ in $(seq 50); do [ -S "$FABRIC_SOCK" ] && break; sleep 0.1; done
    echo "run-guest: fabric-sink on $FABRIC_SOCK (frames: $WORK/eth0-frames.txt, $WORK/eth0.pcap)" >&2
fi

if [ "$CONSOLE_LOG" = stdio ]; then serial=(-serial stdio); else serial=(-serial "file:$CONSOLE_LOG"); fi

cmd=(qemu-system-x86_64 -accel tcg -machine q35 -cpu max -m 1024 -smp 1
    -nodefaults -display none -no-reboot
    -kernel "$OUT/vmlinuz" -initrd "$OUT/initrd.img"
    -append "root=/dev/vda rw console=ttyS0 net.ifnames=0 init=/sbin/rnic-init rnic.ip=$GUEST_IP rnic.neigh=$NEIGH${EXTRA_APPEND:+ $EXTRA_APPEND}"
    -drive "file=$OUT/rootfs.ext4,if=virtio,format=raw,snapshot=on"
    -netdev "stream,id=roce,server=off,addr.type=unix,addr.path=$FABRIC_SOCK"
    -device virtio-net-pci,netdev=roce,mac=52:54:00:12:34:02
    -netdev "user,id=ctl,hostfwd=tcp:127.0.0.1:$HOSTPORT-:18515"
    -device virtio-net-pci,netdev=ctl,mac=52:54:00:12:34:03
    -device virtio-serial-pci
    -chardev "socket,id=agent,path=$AGENT_SOCK,server=on,wait=off"
    -device virtserialport,chardev=agent,name=rnic.agent
    "${serial[@]}")

echo "run-guest: agent socket $AGENT_SOCK, console $CONSOLE_LOG" >&2
echo "run-guest: $(printf '%q ' "${cmd[@]}")" >&2
if [ -z "$sink_pid" ]; then
    trap - EXIT
    exec "${cmd[@]}"
fi
# QEMU in the background so that the sink is stopped when it ends, and a
# signal to this script reaches QEMU too.
"${cmd[@]}" <&0 & # (explicit: a background job's stdin would be /dev/null)
qemu_pid=$!
trap 'kill "$qemu_pid" 2>/dev/null' INT TERM HUP
rc=0
wait "$qemu_pid" || rc=$?
# (a trapped signal interrupts wait: wait for QEMU itself to end)
while kill -0 "$qemu_pid" 2>/dev/null; do wait "$qemu_pid" || rc=$?; done
exit "$rc"
