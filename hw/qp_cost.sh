#!/usr/bin/env bash
# Where the per-QP logic is: synthesizes rnic_core for the ECP5 (Debian's
# Yosys, DATA_W 64) at two NUM_Q with the hierarchy kept (`synth_ecp5
# -noflatten`), then prints, per module, the LUT4, carry, FF and LUT-RAM
# cells at each and what every added QP costs (hw/qp_cost.py). The state
# that should be in block RAM shows up as LUT4 and FF that grow with NUM_Q.
# Without flattening Yosys cannot optimise across modules, so the totals are
# a few percent above `hw/synth.sh`'s; the differences between the two
# builds are what this is for.
#
# Usage: hw/qp_cost.sh [NUM_Q_LOW [NUM_Q_HIGH]]     (default 16 64)
# Time:  about 10 and 15 minutes of one core for 16 and 64 QPs (both run at
#        once); reports in target/qp_cost/q<N>.txt
# Env:   YOSYS  yosys binary (default yosys)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

YOSYS="${YOSYS:-yosys}"
LO="${1:-16}"
HI="${2:-64}"
for n in "$LO" "$HI"; do
    [[ "$n" =~ ^[0-9]+$ ]] && [ "$n" -ge 1 ] && [ "$n" -le 4096 ] \
        || { echo "qp_cost.sh: NUM_Q must be a number from 1 to 4096, not '$n'" >&2; exit 2; }
done
[ "$LO" -lt "$HI" ] || { echo "qp_cost.sh: the first NUM_Q must be the smaller ($LO, $HI)" >&2; exit 2; }
command -v "$YOSYS" >/dev/null || { echo "qp_cost.sh: $YOSYS not found; run .ci/setup" >&2; exit 1; }

OUT=target/qp_cost
mkdir -p "$OUT"
read_cmds=""
for f in hw/rtl/*.v hw/rtl/generated/*.sv; do
    read_cmds+="read_verilog -sv -Ihw/rtl -Ihw/rtl/generated $f; "
done

pids=()
for n in "$LO" "$HI"; do
    echo "qp_cost.sh: NUM_Q $n: synthesizing (log: $OUT/q$n.log)"
    "$YOSYS" -q -l "$OUT/q$n.log" -p "$read_cmds chparam -set DATA_W 64 -set NUM_Q $n rnic_core;
        synth_ecp5 -noflatten -top rnic_core -run begin:check; tee -q -o $OUT/q$n.txt stat" >/dev/null &
    pids+=($!)
done
status=0
for p in "${pids[@]}"; do wait "$p" || status=1; done
[ "$status" -eq 0 ] || { echo "qp_cost.sh: Yosys failed (logs in $OUT)" >&2; exit 1; }
python3 hw/qp_cost.py "$OUT/q$LO.txt" "$OUT/q$HI.txt" "$LO" "$HI"
