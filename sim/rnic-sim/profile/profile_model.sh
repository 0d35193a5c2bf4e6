#!/usr/bin/env bash
# Where the Verilated model's time goes, in instructions (deterministic:
# callgrind counts them, so a loaded machine gives the same figures).
#
#   sim/rnic-sim/profile/profile_model.sh [DATA_W] [NUM_Q] [CYCLES]
#
# Builds rnic_core (default DATA_W 64, NUM_Q 64: the simulator's model) twice
# into target/profile/ with the simulator's Verilator flags, clocked idle by
# idle_harness.cpp:
#   1. as the simulator builds it: instructions per idle cycle, the
#      difference of two runs (so reset and start-up cancel);
#   2. with --prof-cfuncs (one C++ function per always block or assign,
#      named after its module and line; not inlined): the share of each
#      module and source line (attribute.py). Splitting the model moves
#      some cost into the scheduler, so these are shares, not timings.
# RNIC_SIM_RTL_DIR profiles another RTL directory (as for the simulator).
# Needs verilator, valgrind (apt-get install valgrind) and python3; about
# 3 minutes on 2 cores. Not part of CI.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)"
HERE="$ROOT/sim/rnic-sim/profile"
DATA_W="${1:-64}"
NUM_Q="${2:-64}"
CYCLES="${3:-10000}"
OUT="$ROOT/target/profile/w${DATA_W}_q${NUM_Q}${RNIC_SIM_RTL_DIR:+_other}"
RTL="${RNIC_SIM_RTL_DIR:-$ROOT/hw/rtl}"   # (another RTL tree: to compare)

for tool in verilator valgrind callgrind_annotate python3 make; do
    if ! command -v "$tool" >/dev/null; then
        echo "profile_model.sh: $tool not found (valgrind: apt-get install valgrind; the rest: .ci/setup)" >&2
        exit 2
    fi
done
case "$DATA_W$NUM_Q$CYCLES" in
    *[!0-9]*) echo "profile_model.sh: DATA_W, NUM_Q and CYCLES are numbers" >&2; exit 2 ;;
esac

sources=("$RTL"/*.v "$RTL"/generated/*.sv)
build() {   # build DIR [extra verilator args]: the idle harness
    local dir="$1"
    shift
    rm -rf "$dir"
    mkdir -p "$dir"
    verilator --cc --exe -O3 --x-assign fast --x-initial unique -Wno-fatal -Wno-lint -Wno-style \
        --top-module rnic_core -GDATA_W="$DATA_W" -GNUM_Q="$NUM_Q" -I"$RTL" -I"$RTL/generated" \
        "$@" "${sources[@]}" "$HERE/idle_harness.cpp" --Mdir "$dir" >"$dir/verilator.log" 2>&1 ||
        { cat "$dir/verilator.log" >&2; exit 1; }
}
instructions() {   # instructions BINARY CYCLES
    valgrind --tool=callgrind --callgrind-out-file=/dev/null "$1" "$2" 2>&1 |
        awk '/Collected/ { print $4 }'
}

echo "== model as simulated (DATA_W $DATA_W, NUM_Q $NUM_Q)"
build "$OUT/plain"
make -s -C "$OUT/plain" -j2 -f Vrnic_core.mk OPT_FAST=-O2 >/dev/null
"$OUT/plain/Vrnic_core" 300000
a=$(instructions "$OUT/plain/Vrnic_core" "$CYCLES")
b=$(instructions "$OUT/plain/Vrnic_core" $((CYCLES * 3)))
echo "instructions per idle cycle: $(( (b - a) / (CYCLES * 2) ))"

echo "== split by source (--prof-cfuncs)"
build "$OUT/split" --prof-cfuncs
# VM_PROFC=0: no gprof instrumentation (callgrind needs none)
make -s -C "$OUT/split" -j2 -f Vrnic_core.mk VM_PROFC=0 OPT_FAST="-O2 -fno-inline" >/dev/null
valgrind --tool=callgrind --callgrind-out-file="$OUT/split/callgrind.out" \
    "$OUT/split/Vrnic_core" "$CYCLES" >/dev/null 2>&1
python3 "$HERE/attribute.py" "$OUT/split/callgrind.out" 25
