#!/usr/bin/env bash
# The full-system proof, from the command line (minutes to an hour on a
# loaded 2-core machine): `rnic vm` runs the hardware-only rnic in a QEMU
# guest whose PCI functions are simulated NICs, and this checks each result.
#
#   sim/vm/prove.sh [OUT_DIR]        (default target/vm-proof)
#
#   MESSAGES=1000   torture messages of the clean runs
#   BREAK_MESSAGES=200   of the --break runs
#
# Runs, each a fresh guest and server (rnic vm --stats):
#   rc on ideal and hostile, mp --paths 8 on spray-8-hostile (exit 0),
#   rc on ideal waiting for the CQs' MSIs (--completions event; exit 0),
#   --break cqe-ro, early-cqe, bypass on ideal (exit 1: caught),
#   rc without the IOMMU (sysfs, DMA by physical address; exit 0),
#   rnic info --latency in the guest and in-process, and the in-process
#   torture for the messages-per-second comparison.
# Each run's stdout is OUT/NAME.out, its stderr (with the server's
# counters) OUT/NAME.err; the summary is OUT/summary.txt.
set -uo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT"
OUT=${1:-target/vm-proof}
MESSAGES=${MESSAGES:-1000}
BREAK_MESSAGES=${BREAK_MESSAGES:-200}
mkdir -p "$OUT"

cargo build -q --release -p rnic-cli || exit 2
cargo build -q --release -p rnic-cli --no-default-features --target-dir target/no-sim || exit 2
RNIC=target/release/rnic
HW=target/no-sim/release/rnic

failed=0
: >"$OUT/summary.txt"
note() { echo "$*" | tee -a "$OUT/summary.txt"; }

# run NAME WANT_EXIT ARGS...: one command, its exit status checked.
run() {
    local name=$1 want=$2 t0=$SECONDS rc
    shift 2
    "$@" >"$OUT/$name.out" 2>"$OUT/$name.err"
    rc=$?
    local verdict=ok
    if [ "$rc" -ne "$want" ]; then
        verdict="FAILED (wanted exit $want)"
        failed=1
    fi
    note "$(printf '%-22s exit %d in %4d s  %s' "$name" "$rc" $((SECONDS - t0)) "$verdict")"
}

T="torture --seed 7 --json --timing"
run rc-ideal 0 $RNIC vm --rnic $HW --stats -- $T --messages "$MESSAGES"
run rc-hostile 0 $RNIC vm --rnic $HW --stats --fabric hostile -- $T --messages "$MESSAGES"
run mp-spray-8-hostile 0 $RNIC vm --rnic $HW --stats --fabric spray-8-hostile -- \
    $T --messages "$MESSAGES" --transport mp --paths 8
run rc-ideal-event 0 $RNIC vm --rnic $HW --stats -- $T --messages "$MESSAGES" --completions event
for b in cqe-ro early-cqe bypass; do
    run "break-$b" 1 $RNIC vm --rnic $HW --stats -- torture --seed 7 --messages "$BREAK_MESSAGES" --break "$b"
done
run rc-ideal-no-iommu 0 $RNIC vm --rnic $HW --stats --no-iommu -- $T --messages "$MESSAGES"
run latency-guest 0 $RNIC vm --rnic $HW --stats -- info --latency 200 --json
run latency-inprocess 0 $RNIC info --device sim --latency 200 --json
run rc-ideal-inprocess 0 $RNIC $T --messages "$MESSAGES"

note ""
note "messages/s (wall) of the clean runs:"
for n in rc-ideal rc-hostile mp-spray-8-hostile rc-ideal-event rc-ideal-no-iommu rc-ideal-inprocess; do
    python3 - "$OUT/$n.out" "$n" <<'EOF' | tee -a "$OUT/summary.txt"
import json, sys
try:
    r = json.loads(open(sys.argv[1]).read().strip().splitlines()[-1])
    w = r.get("wall_seconds") or 0
    print(f"  {sys.argv[2]:<22} {r['messages']} messages in {w:.1f} s = {r['messages'] / max(w, 1e-9):.1f}/s;"
          f" violations {r['violations']} corruptions {r['corruptions']} lost {r['lost_completions']}"
          + (f"; interrupts {r['events']['interrupts']} in {r['events']['waits']} waits, missed {r['events']['missed_interrupts']}"
             if r.get('events') else ""))
except Exception as e:
    print(f"  {sys.argv[2]:<22} (no report: {e})")
EOF
done
note "server counters and guest boot times (from rnic vm --stats):"
for f in "$OUT"/*.err; do
    grep -h 'rnic vm: guest boot\|rnic vm: server:' "$f" | sed "s|^|  $(basename "$f" .err): |" | tee -a "$OUT/summary.txt"
done
note "caught (first failure) of the --break runs:"
for b in cqe-ro early-cqe bypass; do
    grep -h '^first failure' "$OUT/break-$b.err" | cut -c1-160 | sed "s|^|  $b: |" | tee -a "$OUT/summary.txt"
done
exit $failed
