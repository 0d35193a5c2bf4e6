#!/usr/bin/env bash
# Lint the RTL: `verilator --lint-only -Wall` over every hand-written module
# (hw/rtl/*.v) and every generated one (hw/rtl/generated/*.sv), elaborated
# from TOP, once per DATA_W. Any warning fails. Waivers live in
# hw/lint/*.vlt and must stay narrow (one rule, one file, one signal).
#
# Usage: hw/lint.sh                     (from anywhere)
# Env:   TOP      top module (default rnic_core; rnic_csr while
#                 hw/rtl/rnic_core.v does not exist yet)
#        DATA_WS  DATA_W values to elaborate (default "64 256"; ignored for
#                 a top without a DATA_W parameter)
#        BLOCKS   small blocks linted on their own, TOP:P=V,P2=V2 each
#                 (default: the reusable blocks rnic_core does not
#                 instantiate yet, or not at every parameter; "" for none)
#        VERILATOR  verilator binary (default verilator)
#        LINT_JOBS  runs at once (default: the CPUs)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

VERILATOR="${VERILATOR:-verilator}"
DATA_WS="${DATA_WS:-64 256}"
if [ -z "${TOP:-}" ]; then
    TOP=rnic_core
    if [ ! -f hw/rtl/rnic_core.v ]; then
        echo "lint.sh: hw/rtl/rnic_core.v does not exist yet; linting the generated rnic_csr alone"
        TOP=rnic_csr
    fi
fi

shopt -s nullglob
SOURCES=(hw/rtl/*.v hw/rtl/generated/*.sv)
WAIVERS=(hw/lint/*.vlt)
shopt -u nullglob
[ ${#SOURCES[@]} -gt 0 ] || { echo "lint.sh: no RTL sources found" >&2; exit 1; }

# Lint with DATA_W only if the top module has such a parameter.
top_file=""
for f in "${SOURCES[@]}"; do
    if grep -Eq "^[[:space:]]*module[[:space:]]+${TOP}\b" "$f"; then top_file="$f"; break; fi
done
[ -n "$top_file" ] || { echo "lint.sh: no module named $TOP in ${SOURCES[*]}" >&2; exit 1; }
if grep -Eq "parameter[^;]*\bDATA_W\b" "$top_file"; then
    read -r -a widths <<< "$DATA_WS"
else
    widths=("")
fi

# Build knobs other than DATA_W, each linted once at the first width (a
# parameter that removes logic can leave something unread or unused);
# NAME=V,NAME2=V2 sets several at once.
KNOB_VARIANTS="${KNOB_VARIANTS:-READ_EN=1 READ_EN=1,ATOMIC_EN=1 SEND_EN=0 SEND_EN=0,RC_EN=0 MP_W=32 MP_W=128 OST_RINGS=3,MP_PEND=3,DMAC_N=5 NUM_Q=2 NUM_Q=64 REC_PORT=1,READ_EN=1,ATOMIC_EN=1,MP_W=128,QPN_W=16 REC_PORT=1,SEND_EN=0,RC_EN=0,NUM_Q=2,MP_W=32,QPN_W=9}"
runs=()
for w in "${widths[@]}"; do runs+=("$TOP|$w|"); done
for k in $KNOB_VARIANTS; do
    if grep -Eq "parameter[^;]*\b${k%%=*}\b" "$top_file"; then runs+=("$TOP|${widths[0]}|$k"); fi
done

# Reusable blocks, each at a few parameter sets (rnic_core elaborates only
# the parameters it uses, and nothing of a block it does not instantiate).
BLOCKS="${BLOCKS-axis_register:WIDTH=1 axis_arb_mux:PORTS=1 axis_arb_mux:PORTS=2 axis_arb_mux:PORTS=3,ROUND_ROBIN=1 axis_arb_mux:PORTS=5,WIDTH=72,OUT_REG=1 axis_arb_mux:PORTS=4,ROUND_ROBIN=1,OUT_REG=1 icrc_subst:DATA_W=512,OH_W=1 tag_match:N=1,KEY_W=1 tag_match:N=16,KEY_W=10 onehot_mux:N=1,W=1 onehot_mux:N=5,W=37 slot_allocator:SLOTS=1 slot_allocator:SLOTS=3 slot_allocator:SLOTS=16 ram_reset_sweep:DEPTH=1 ram_reset_sweep:DEPTH=20 mp_window:MP_W=32 mp_window:MP_W=128,MP_NAK_GAP=40 rc_message: mp_deferred:NUM_QP=2,QN_W=1,MP_PEND=2,MP_WIMM=1 mp_deferred:NUM_QP=20,QN_W=5,MP_PEND=3,MP_WIMM=2 mp_deferred:NUM_QP=20,QN_W=5,MP_PEND=8,MP_WIMM=8 axis_async_fifo:WIDTH=1,ADDR_W=1 axis_async_fifo:WIDTH=72,ADDR_W=5 tlp_upsize:IN_W=32 tlp_downsize:OUT_W=256 pcie_clock_crossing:PCIE_W=64,CORE_W=64 pcie_clock_crossing:PCIE_W=64,CORE_W=128 pcie_clock_crossing:PCIE_W=128,CORE_W=256 qp_cache: qp_cache:QPN_W=10,SLOT_LOG=2,WAYS=1 qp_cache:QPN_W=5,SLOT_LOG=3,WAYS=2,MISSQ=3,PIN_W=2 qp_cache:SLOT_LOG=10,WAYS=4,MISSQ=16,ID_W=1,PIN_W=1 qpc_fill:FILLS=1,REC_WORDS=4 qpc_fill:FILLS=4,REC_WORDS=16,SLOT_LOG=10 qp_ctx_cache:SLOT_LOG=3,WAYS=2,MISSQ=4,FILLS=2,REC_WORDS=4 ram_rec:N_RD=1,DATA_W=1,ADDR_W=1,DEPTH=1 ram_rec:N_RD=1,DATA_W=3,ADDR_W=2,DEPTH=4,REC_EN=0 ram_rec:DATA_W=64,ADDR_W=4,DEPTH=16,N_RD=1,RD_LSB=32'd20,RD_W=32'd17 ram_rec:DATA_W=100,ADDR_W=6,DEPTH=50,N_RD=3,RD_LSB=96'h000000630000001e00000000,RD_W=96'h000000010000004600000028 ram_rec:DATA_W=100,ADDR_W=6,DEPTH=50,N_RD=3,RD_LSB=96'h000000630000001e00000000,RD_W=96'h000000010000004600000028,REC_EN=0,REC_RD=2 rec_map:N_REC=1,REC_W=32'd1,REC_WORDS=1,SLOT_W=1 rec_map:N_REC=5,REC_W=160'h00000001000000010000000100000005000000b2,REC_WORDS=8,SLOT_W=3 rec_map:N_REC=4,REC_W=128'h00000142000000010000004100000040,REC_WORDS=16,SLOT_W=5 rec_map:N_REC=2,REC_W=64'h0000040000000400,REC_WORDS=32,SLOT_W=9 rec_port_mux:N=1,WORD_W=1,BASE=32'd0,LOG=32'd1 rec_port_mux:N=3,SLOT_W=1,WORD_W=3,BASE=96'h000000060000000400000000,LOG=96'h000000010000000100000002 qp_rec_window:NUM_Q=1,QN_W=1,REC_WORDS=2,WORD_W=1 qp_rec_window:NUM_Q=1000,QN_W=10 qp_dir:NUM_Q=1,QN_W=1,QPN_W=1,META_W=1 qp_dir:NUM_Q=20,QN_W=5,QPN_W=16,META_W=40 qpn_doorbell:QN_W=1,LK_LAT=1 qpn_doorbell:QN_W=15,LK_LAT=5 qpn_doorbell:QN_W=8,LK_LAT=3,PEND=2,BACKOFF=1 qpn_doorbell:QN_W=8,LK_LAT=1,PEND=16,BACKOFF=65535 qp_fetch:NUM_Q=1,QN_W=1,QPN_W=1,LK_LAT=1 qp_fetch:NUM_Q=20,QN_W=5,QPN_W=24,LK_LAT=6}"
if [ "$TOP" = rnic_core ]; then
    for b in $BLOCKS; do runs+=("${b%%:*}||${b#*:}"); done
fi

# Each run alone takes one core for a second or two; LINT_JOBS of them run
# at once (default: the CPUs), and the reports come in the runs' order.
JOBS="${LINT_JOBS:-$(nproc 2>/dev/null || echo 1)}"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
lint_one() {
    local i="$1" run="$2"
    local top="${run%%|*}" rest="${run#*|}"
    local w="${rest%%|*}" knob="${rest#*|}"
    local args=(--lint-only -Wall --top-module "$top" -Ihw/rtl -Ihw/rtl/generated)
    [ -n "$w" ] && args+=("-GDATA_W=$w")
    if [ -n "$knob" ]; then
        local kv k
        IFS=, read -r -a kv <<< "$knob"
        for k in "${kv[@]}"; do args+=("-G$k"); done
    fi
    if "$VERILATOR" "${args[@]}" "${WAIVERS[@]}" "${SOURCES[@]}" >"$tmp/$i.log" 2>&1 \
        && ! grep -q '^%' "$tmp/$i.log"; then
        echo 0 >"$tmp/$i.rc"
    else
        echo 1 >"$tmp/$i.rc"
    fi
    return 0
}
i=0
for run in "${runs[@]}"; do
    while [ "$(jobs -rp | wc -l)" -ge "$JOBS" ]; do wait -n || true; done
    lint_one "$i" "$run" &
    i=$((i + 1))
done
wait

status=0
i=0
for run in "${runs[@]}"; do
    top="${run%%|*}" rest="${run#*|}"
    w="${rest%%|*}" knob="${rest#*|}"
    label="$top${w:+ DATA_W=$w}${knob:+ $knob}"
    if [ "$(cat "$tmp/$i.rc" 2>/dev/null || echo 1)" = 0 ]; then
        echo "lint.sh: $label: clean"
    else
        cat "$tmp/$i.log" 2>/dev/null || true
        echo "lint.sh: $label: FAILED ($(grep -c '^%Warning' "$tmp/$i.log" 2>/dev/null || true) warnings)" >&2
        status=1
    fi
    i=$((i + 1))
done
exit "$status"
