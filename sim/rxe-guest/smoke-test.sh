#!/bin/bash
# Boot the rxe guest once with a frame sink as the fabric and check it over
# the agent channel: @@rnic-ready, ibv_devinfo, perftest/pingpong present,
# eth0/eth1 order, then power off. Prints boot-to-ready time and what the
# guest sent on eth0.
#
#   sim/rxe-guest/smoke-test.sh OUTDIR      (image from build-image.sh)
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
[ $# -eq 1 ] || { echo "usage: $0 OUTDIR" >&2; exit 2; }
OUT=$(cd "$1" && pwd)
WORK=$(mktemp -d /tmp/rnic-rxe-smoke.XXXXXX)
export WORK FABRIC_SOCK=$WORK/fabric.sock AGENT_SOCK=$WORK/agent.sock CONSOLE_LOG=$WORK/console.log
HOSTPORT=${HOSTPORT:-$((20000 + RANDOM % 20000))}
export HOSTPORT

sink_pid="" qemu_pid=""
cleanup() {
    [ -n "$qemu_pid" ] && kill "$qemu_pid" 2>/dev/null
    [ -n "$sink_pid" ] && kill "$sink_pid" 2>/dev/null
    wait 2>/dev/null || true
}
trap cleanup EXIT

python3 "$HERE/fabric-sink.py" "$FABRIC_SOCK" --pcap "$WORK/eth0.pcap" --log "$WORK/eth0-frames.txt" \
    2>"$WORK/sink.err" &
sink_pid=$!
for _ in $(seq 50); do [ -S "$FABRIC_SOCK" ] && break; sleep 0.1; done

t0=$(date +%s.%N)
"$HERE/run-guest.sh" "$OUT" 2>"$WORK/qemu.err" &
qemu_pid=$!

fail() {
    echo "smoke-test: FAILED: $*" >&2
    echo "--- qemu stderr" >&2; cat "$WORK/qemu.err" >&2 || true
    echo "--- console (tail)" >&2; tail -n 40 "$CONSOLE_LOG" >&2 || true
    exit 1
}

python3 "$HERE/agent.py" "$AGENT_SOCK" --ready --timeout 300 >"$WORK/ready.txt" || fail "no @@rnic-ready"
t_ready=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
read -r _ gid mtu <"$WORK/ready.txt"
echo "smoke-test: ready after $t_ready s (QEMU start -> @@rnic-ready): gid1=$gid active_mtu=$mtu"

run() { python3 "$HERE/agent.py" "$AGENT_SOCK" --timeout 120 "$@"; }
run 'cat /sys/class/net/eth0/address /sys/class/net/eth1/address' >"$WORK/macs.txt" || fail "agent: macs"
[ "$(sed -n 1p "$WORK/macs.txt")" = 52:54:00:12:34:02 ] || fail "eth0 is not the RoCE NIC: $(cat "$WORK/macs.txt")"
[ "$(sed -n 2p "$WORK/macs.txt")" = 52:54:00:12:34:03 ] || fail "eth1 is not the control NIC: $(cat "$WORK/macs.txt")"
echo "smoke-test: eth0=52:54:00:12:34:02 (RoCE), eth1=52:54:00:12:34:03 (slirp)"
run 'ibv_devinfo -d rxe0' | tee "$WORK/devinfo.txt" || fail "ibv_devinfo"
grep -q PORT_ACTIVE "$WORK/devinfo.txt" || fail "rxe0 not active"
run 'ib_write_bw --help' >"$WORK/ib_write_bw-help.txt" || true # perftest --help exits 1
grep -q -- '--report_gbits' "$WORK/ib_write_bw-help.txt" || fail "ib_write_bw --help output unexpected"
if grep -q -- 'write_with_imm' "$WORK/ib_write_bw-help.txt"; then imm=yes; else imm=no; fi
echo "smoke-test: ib_write_bw --write_with_imm: $imm"
run 'ibv_rc_pingpong --help' >"$WORK/pingpong-help.txt" || true
grep -q -- '--ib-dev' "$WORK/pingpong-help.txt" || fail "ibv_rc_pingpong --help output unexpected"
run 'rdma link; ip -br addr; ip neigh show dev eth0; cat /sys/class/infiniband/rxe0/ports/1/gid_attrs/types/1' ||
    fail "agent: rdma link"
# RoCEv2 frames out of eth0: one 4096-byte SEND to the (absent) NIC, retried once.
probe=$(base64 -w0 "$HERE/roce-probe.py")
run "echo $probe | base64 -d >/tmp/roce-probe.py && python3 /tmp/roce-probe.py --size 4096 --retry 1" |
    tee "$WORK/probe.txt" || fail "roce-probe.py"
grep -q RETRY_EXC_ERR "$WORK/probe.txt" || fail "roce-probe: expected RETRY_EXC_ERR (no peer)"
run 'exit 3' && fail "rc 3 not reported" || [ $? = 3 ] || fail "rc 3 not reported"
run 'printf "no newline"' | grep -qx 'no newline' || fail "partial last line"
run poweroff || fail "poweroff"
for _ in $(seq 100); do kill -0 "$qemu_pid" 2>/dev/null || break; sleep 0.1; done
kill -0 "$qemu_pid" 2>/dev/null && fail "QEMU still running 10 s after poweroff"
wait "$qemu_pid" || true
qemu_pid=""
t_total=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
kill "$sink_pid"; wait "$sink_pid" 2>/dev/null || true; sink_pid=""
echo "smoke-test: QEMU exited after $t_total s"
echo "smoke-test: frames on eth0: $(cat "$WORK/sink.err")"
sed 's/^/  /' "$WORK/eth0-frames.txt"
# SEND_ONLY (opcode 0x04) with 4096 bytes: 14 Eth + 20 IPv4 + 8 UDP + 12 BTH + 4096 + 4 ICRC = 4154
grep -q '52:54:00:12:34:02 > 02:00:00:00:00:01 len 4154 IPv4 192.168.77.2 > 192.168.77.1 RoCEv2 opcode 0x04 dqp 0x000011' \
    "$WORK/eth0-frames.txt" || fail "no 4154-byte RoCEv2 SEND_ONLY frame to the NIC's MAC on eth0"
echo "smoke-test: OK (work dir $WORK)"
