#!/usr/bin/env bash
# Generic synthesis check: Yosys `read_verilog -sv` of all RTL (hand-written
# hw/rtl/*.v and generated hw/rtl/generated/*.sv), DATA_W set on the top,
# `synth -top`, `stat`. Any Yosys error fails. The `stat` report goes to
# target/synth/<top>_w<DATA_W>.txt (the full log beside it, .log).
#
# Usage: hw/synth.sh                   (from anywhere)
# Env:   TOP             top module (default rnic_core; rnic_csr while
#                        hw/rtl/rnic_core.v does not exist yet)
#        SYNTH_DATA_WS   DATA_W values (default "64"; e.g. "64 256")
#        SYNTH_BLOCKS    reusable blocks synthesized on their own as well,
#                        TOP:P=V,P2=V2 each (default: the arbiter mux, fixed
#                        and round robin; "" for none); report
#                        target/synth/<block>_<params>.txt
#        YOSYS           yosys binary (default yosys)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

YOSYS="${YOSYS:-yosys}"
SYNTH_DATA_WS="${SYNTH_DATA_WS:-64}"
if [ -z "${TOP:-}" ]; then
    TOP=rnic_core
    if [ ! -f hw/rtl/rnic_core.v ]; then
        echo "synth.sh: hw/rtl/rnic_core.v does not exist yet; synthesizing the generated rnic_csr alone"
        TOP=rnic_csr
    fi
fi

shopt -s nullglob
SOURCES=(hw/rtl/*.v hw/rtl/generated/*.sv)
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

read_cmds=""
for f in "${SOURCES[@]}"; do
    read_cmds+="read_verilog -sv -Ihw/rtl -Ihw/rtl/generated $f; "
done

runs=()
for w in "${widths[@]}"; do runs+=("$TOP|${w:+DATA_W=$w}"); done
# Blocks rnic_core does not instantiate yet (or not with these parameters).
SYNTH_BLOCKS="${SYNTH_BLOCKS-axis_arb_mux:PORTS=3,WIDTH=64 axis_arb_mux:PORTS=4,WIDTH=64,ROUND_ROBIN=1,OUT_REG=1}"
if [ "$TOP" = rnic_core ]; then
    for b in $SYNTH_BLOCKS; do runs+=("${b%%:*}|${b#*:}"); done
fi

status=0
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
    script+="${SYNTH_CMD:-synth_ecp5} -top $top; tee -q -o $OUT/$name.txt stat"
    start=$SECONDS
    if "$YOSYS" -q -l "$OUT/$name.log" -p "$script" >/dev/null 2>&1; then
        warnings=$(grep -c '^Warning:' "$OUT/$name.log" || true)
        cells=$(grep -E '^[[:space:]]+Number of cells:' "$OUT/$name.txt" | tail -1 | awk '{print $4}')
        echo "synth.sh: $name: ok in $((SECONDS - start)) s, ${cells:-?} cells, $warnings Yosys warnings (report: $OUT/$name.txt)"
        if [ "$warnings" -gt 0 ]; then grep '^Warning:' "$OUT/$name.log" | sort | uniq -c | sed 's/^/    /'; fi
    else
        grep -E '^(ERROR|Warning):' "$OUT/$name.log" >&2 || tail -20 "$OUT/$name.log" >&2
        echo "synth.sh: $name: FAILED (full log: $OUT/$name.log)" >&2
        status=1
    fi
done
exit "$status"
