#!/usr/bin/env bash
# Generic synthesis check: Yosys `read_verilog -sv` of all RTL (hand-written
# hw/rtl/*.v and generated hw/rtl/generated/*.sv), DATA_W set on the top,
# `synth -top`, `stat`. Any Yosys error fails. The `stat` report goes to
# target/synth/<top>_w<DATA_W>.txt (the full log beside it, .log).
#
# Timing gate: the DATA_W 64 netlist of rnic_core (synth_ecp5, Debian's
# Yosys unless YOSYS says otherwise) is also written as JSON
# (target/synth/rnic_core_w64.json) and firmware/build/logic_depth.py ranks
# its register inputs by LUT levels; the run fails when one is deeper than
# SYNTH_MAX_LEVELS (report: target/synth/rnic_core_w64.depth.txt). A few
# seconds on top of the synthesis; no place and route. hw/README.md ("Where
# the core registers for timing") says how the number was chosen.
#
# Usage: hw/synth.sh                   (from anywhere)
# Env:   TOP             top module (default rnic_core; rnic_csr while
#                        hw/rtl/rnic_core.v does not exist yet)
#        SYNTH_DATA_WS   DATA_W values (default "64"; e.g. "64 256")
#        SYNTH_BLOCKS    reusable blocks synthesized on their own as well,
#                        TOP:P=V,P2=V2 each (default: the arbiter mux, fixed
#                        and round robin, and the record port's blocks and the context
#                        table that only REC_PORT builds carry; "" for none); report
#                        target/synth/<block>_<params>.txt
#        YOSYS           yosys binary (default yosys)
#        SYNTH_MAX_LEVELS  the timing gate's limit in LUT levels (default
#                        below; "" turns the gate off)
#        SYNTH_CORE_PARAMS  rnic_core knobs for its runs, P=V,P2=V2
#                        (e.g. READ_EN=1; default none); the gate reads
#                        that build's DATA_W 64 netlist
#        SYNTH_RTL       the RTL directory (default hw/rtl; .ci/run points it at a
#                        copy taken before its drift step rewrites hw/rtl/generated,
#                        so that the synthesis can run beside that step)
#        SYNTH_DEPTH_PLANT 1: synthesize a copy of the RTL (target/synth/plant/)
#                        whose rnic_core has a planted chain of 16 adders
#                        between two registers (about 23 levels): the gate
#                        must then fail. Shows that it can.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

YOSYS="${YOSYS:-yosys}"
SYNTH_DATA_WS="${SYNTH_DATA_WS:-64}"
# Just above the measured deepest register input, so a change that deepens
# any path past it fails; lower it with each timing fix. 16.0 since the
# deepest measures 14.5 to 15.4 between syntheses of nearly the same RTL
# (abc's mapping moves a path by up to 0.8 level as the netlist around
# it changes, and once moved one by two: hw/README.md, "Where the core
# registers for timing"). 15.5 since 2026-12-06: the completer's, the
# responder's, the QP context's and the queue manager's paths from block
# RAM outputs moved onto flops, and CI's build (READ_EN=1) measures 14.4
# (the default build 14.0), where it measured 15.5 before.
SYNTH_MAX_LEVELS="${SYNTH_MAX_LEVELS-15.5}"
SYNTH_DEPTH_PLANT="${SYNTH_DEPTH_PLANT:-0}"
SRC_RTL="${SYNTH_RTL:-hw/rtl}"
[ -f "$SRC_RTL/rnic_core.v" ] || [ -z "${SYNTH_RTL:-}" ] || { echo "synth.sh: SYNTH_RTL=$SRC_RTL holds no rnic_core.v" >&2; exit 1; }
if [ -z "${TOP:-}" ]; then
    TOP=rnic_core
    if [ ! -f "$SRC_RTL/rnic_core.v" ]; then
        echo "synth.sh: $SRC_RTL/rnic_core.v does not exist yet; synthesizing the generated rnic_csr alone"
        TOP=rnic_csr
    fi
fi

shopt -s nullglob
SOURCES=("$SRC_RTL"/*.v "$SRC_RTL"/generated/*.sv)
shopt -u nullglob
[ ${#SOURCES[@]} -gt 0 ] || { echo "synth.sh: no RTL sources found" >&2; exit 1; }

top_file=""
for f in "${SOURCES[@]}"; do
    if grep -Eq "^[[:space:]]*module[[:space:]]+${TOP}\b" "$f"; then top_file="$f"; break; fi
done
[ -n "$top_file" ] || { echo "synth.sh: no module named $TOP in ${SOURCES[*]}" >&2; exit 1; }
if grep -Eq "parameter[^;]*\bDATA_W\b" "$top_file"; then
    read -r -a widths <<< "$SYNTH_DATA_WS"
else
    widths=("")
fi

OUT=target/synth
mkdir -p "$OUT"

# The planted regression: 16 adders in a row between two registers (about
# 23 LUT levels), kept although nothing reads them.
plant_text() {
    cat <<'PLANT'
// planted by hw/synth.sh (SYNTH_DEPTH_PLANT=1 or the gate's self-test): 16 adders in a row
(* keep *) reg [31:0] depth_plant_a = 32'd1;
(* keep *) reg [31:0] depth_plant_q = 32'd0;
reg [31:0] depth_plant_s;
integer depth_plant_i;
always @* begin
    depth_plant_s = depth_plant_a;
    for (depth_plant_i = 0; depth_plant_i < 16; depth_plant_i = depth_plant_i + 1)
        depth_plant_s = depth_plant_s + (depth_plant_s >> (depth_plant_i % 7 + 1));
end
always @(posedge clk) begin
    depth_plant_a <= depth_plant_a + 32'd1;
    depth_plant_q <= depth_plant_s;
end
PLANT
}

# The gate's self-test (a few seconds): a small module passes it, the same
# module with the planted chain fails it.
gate_self_test() {
    local d="$OUT/gate-self-test" plant rc
    mkdir -p "$d"
    for plant in 0 1; do
        {
            echo "module depth_gate_probe (input wire clk, input wire [7:0] a, output reg [7:0] q);"
            echo "always @(posedge clk) q <= a + 8'd1;"
            [ "$plant" = 0 ] || plant_text
            echo "endmodule"
        } > "$d/probe$plant.v"
        "$YOSYS" -q -l "$d/probe$plant.log" -p "read_verilog $d/probe$plant.v; synth_ecp5 -top depth_gate_probe -json $d/probe$plant.json" \
            >/dev/null 2>&1 || { echo "synth.sh: gate self-test: synthesis failed ($d/probe$plant.log)" >&2; return 1; }
        rc=0
        python3 firmware/build/logic_depth.py "$d/probe$plant.json" --max-levels "$SYNTH_MAX_LEVELS" > "$d/probe$plant.txt" 2>&1 || rc=$?
        if [ "$rc" -ne "$plant" ]; then
            echo "synth.sh: gate self-test: logic_depth.py --max-levels $SYNTH_MAX_LEVELS exited $rc on the probe" \
                "$([ "$plant" = 1 ] && echo with || echo without) the planted chain (want $plant; $d/probe$plant.txt)" >&2
            return 1
        fi
    done
    echo "synth.sh: gate self-test: ok (a planted chain of 16 adders fails --max-levels $SYNTH_MAX_LEVELS, the probe without it passes)"
}

RTL="$SRC_RTL"
if [ "$SYNTH_DEPTH_PLANT" = 1 ]; then
    # a copy of the RTL whose rnic_core ends with the planted chain
    [ "$TOP" = rnic_core ] || { echo "synth.sh: SYNTH_DEPTH_PLANT needs TOP=rnic_core" >&2; exit 1; }
    RTL="$OUT/plant"
    rm -rf "$RTL"
    mkdir -p "$RTL"
    cp -r "$SRC_RTL"/. "$RTL/"
    plant_text > "$OUT/plant.txt"
    awk -v n="$(grep -c '^endmodule' "$SRC_RTL/rnic_core.v")" -v f="$OUT/plant.txt" '
        /^endmodule/ && ++seen == n { while ((getline l < f) > 0) print l }
        { print }' "$SRC_RTL/rnic_core.v" > "$RTL/rnic_core.v"
    grep -q depth_plant_q "$RTL/rnic_core.v" || { echo "synth.sh: could not plant the chain" >&2; exit 1; }
    echo "synth.sh: SYNTH_DEPTH_PLANT=1: rnic_core from $RTL with a planted chain of 16 adders; the timing gate must fail"
    shopt -s nullglob
    SOURCES=("$RTL"/*.v "$RTL"/generated/*.sv)
    shopt -u nullglob
fi

read_cmds=""
for f in "${SOURCES[@]}"; do
    read_cmds+="read_verilog -sv -I$RTL -I$RTL/generated $f; "
done

runs=()
for w in "${widths[@]}"; do runs+=("$TOP|${w:+DATA_W=$w}${SYNTH_CORE_PARAMS:+,$SYNTH_CORE_PARAMS}"); done
# Blocks rnic_core does not instantiate yet (or not with these parameters).
# (One chparam per knob, each elaborating the block anew: every prefix of a
# block's knobs must pass its parameter checks.)
SYNTH_BLOCKS="${SYNTH_BLOCKS-axis_arb_mux:PORTS=3,WIDTH=64 axis_arb_mux:PORTS=4,WIDTH=64,ROUND_ROBIN=1,OUT_REG=1 qp_rec_window:NUM_Q=12 rec_port:SLOT_W=6,REC_WORDS=4 qp_dir:NUM_Q=12,QPN_W=10,META_W=16 qp_ctx_table:NUM_Q=12,QN_W=4,FILLS=4}"
if [ "$TOP" = rnic_core ]; then
    for b in $SYNTH_BLOCKS; do runs+=("${b%%:*}|${b#*:}"); done
fi

status=0
if [ "$TOP" = rnic_core ] && [ -z "${SYNTH_CMD:-}" ] && [ -n "$SYNTH_MAX_LEVELS" ]; then
    gate_self_test || status=1
fi
for run in "${runs[@]}"; do
    top="${run%%|*}" params="${run#*|}"
    name="$top"
    script="$read_cmds"
    if [ -n "$params" ]; then
        IFS=, read -r -a kv <<< "$params"
        for k in "${kv[@]}"; do
            script+="chparam -set ${k%%=*} ${k#*=} $top; "
            key="${k%%=*}"
            if [ "$top" = "$TOP" ] && [ "$key" = DATA_W ]; then
                name+="_w${k#*=}"
            else
                name+="_${key,,}${k#*=}"
            fi
        done
    fi
    # the timing gate reads the DATA_W 64 netlist of the core
    gate=""
    if [ "$top" = rnic_core ] && [[ "$name" == rnic_core_w64 || "$name" == rnic_core_w64_* ]] \
            && [ -z "${SYNTH_CMD:-}" ] && [ -n "$SYNTH_MAX_LEVELS" ]; then
        gate="$OUT/$name.json"
    fi
    if [ -n "${SYNTH_CMD:-}" ]; then
        script+="$SYNTH_CMD -top $top; "
    else
        # synth_ecp5 up to its `check` step, then that step without
        # `autoname`: the pass only renames the mapper's nets and cells
        # (the netlist is the same), and on this core it took a quarter
        # of the synthesis (115 of 460 s in a CI run of 2026-12-02).
        script+="synth_ecp5 -top $top -run begin:check; hierarchy -check; check -noinit; "
        script+="blackbox =A:whitebox; ${gate:+write_json $gate; }"
    fi
    script+="tee -q -o $OUT/$name.txt stat"
    start=$SECONDS
    if "$YOSYS" -q -l "$OUT/$name.log" -p "$script" >/dev/null 2>&1; then
        warnings=$(grep -c '^Warning:' "$OUT/$name.log" || true)
        cells=$(grep -E '^[[:space:]]+Number of cells:' "$OUT/$name.txt" | tail -1 | awk '{print $4}')
        echo "synth.sh: $name: ok in $((SECONDS - start)) s, ${cells:-?} cells, $warnings Yosys warnings (report: $OUT/$name.txt)"
        if [ "$warnings" -gt 0 ]; then grep '^Warning:' "$OUT/$name.log" | sort | uniq -c | sed 's/^/    /'; fi
        if [ -n "$gate" ]; then
            rc=0
            python3 firmware/build/logic_depth.py "$gate" --top 12 --paths 3 --max-levels "$SYNTH_MAX_LEVELS" \
                > "$OUT/$name.depth.txt" 2>&1 || rc=$?
            grep -E '^(deepest|logic_depth.py)' "$OUT/$name.depth.txt" | sed "s/^/synth.sh: $name: /"
            if [ "$rc" -ne 0 ]; then
                sed -n '1,16p' "$OUT/$name.depth.txt" | sed 's/^/    /'
                echo "synth.sh: $name: timing gate FAILED: register inputs deeper than $SYNTH_MAX_LEVELS LUT levels" \
                    "(report: $OUT/$name.depth.txt; hw/README.md, \"Where the core registers for timing\")" >&2
                status=1
            fi
        fi
    else
        grep -E '^(ERROR|Warning):' "$OUT/$name.log" >&2 || tail -20 "$OUT/$name.log" >&2
        echo "synth.sh: $name: FAILED (full log: $OUT/$name.log)" >&2
        status=1
    fi
done
exit "$status"
