#!/usr/bin/env bash
# CI: a torture campaign as a Slurm job array on a one-node cluster started
# here (tests/slurm/cluster.sh), then stopped. Four tasks share six clean
# seeds and one seed run with a break switch; the merged summary must name
# exactly that seed and print its reproducing command, and a task run again
# must skip its finished runs. About 30 s (apt-get the first time: ~15 s more).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT"
RNIC="${RNIC:-$ROOT/target/release/rnic}"
WORK="${CAMPAIGN_TEST_DIR:-$ROOT/target/slurm-campaign-test}"
fail() { echo "campaign_test: FAIL: $*" >&2; exit 1; }

[ -x "$RNIC" ] || cargo build --release -q -p rnic-cli
tests/slurm/cluster.sh install
rm -rf "$WORK"
mkdir -p "$WORK"
trap 'tests/slurm/cluster.sh stop "$WORK/cluster"' EXIT
eval "$(tests/slurm/cluster.sh start "$WORK/cluster")"
export SLURM_CONF

C="$WORK/campaign"
"$RNIC" campaign plan "$C" --seeds 1..=6 --tasks 4 -- --messages 30 --fabric lossy
"$RNIC" campaign plan "$C" --append --seeds 11 -- --messages 30 --break early-cqe --stop-on-failure
set +e
"$RNIC" campaign sbatch "$C" --submit --wait | tee "$WORK/summary.txt"
rc=${PIPESTATUS[0]}
set -e
[ "$rc" -eq 1 ] || fail "rnic campaign sbatch --wait exited $rc, want 1 (one failing seed)"
grep -q "reproduce with: .* --seed 11 " "$WORK/summary.txt" || fail "no reproducing command for seed 11"

set +e
"$RNIC" campaign merge "$C" --json > "$WORK/summary.json"
rc=$?
set -e
[ "$rc" -eq 1 ] || fail "rnic campaign merge exited $rc, want 1"
python3 - "$WORK/summary.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
failing = sorted((f["leg"], f["seed"]) for f in s["failures"])
assert failing == [(1, 11)], f"failing runs {failing}, want exactly leg 1 seed 11"
f = s["failures"][0]
assert "--seed 11" in f["repro"] and "--break early-cqe" in f["repro"], f["repro"]
assert f["pcap"], "no pcap for the failing run"
assert s["runs_planned"] == 7 and s["runs_done"] == 7, s
assert s["clean"] == 6 and s["failed"] == 1, s
assert s["missing_count"] == 0 and s["unreadable_lines"] == 0, s
assert s["messages"] > 0 and s["bytes"] > 0 and s["cycles"] > 0, s
tasks = {f["task"] for f in s["failures"]}
print(f"campaign_test: summary names leg 1 seed 11 ({f['failure'][:60]}...) on {f['node']} {tasks}")
PY
# all four tasks wrote their own results
n=$(ls "$C/results" | wc -l)
[ "$n" -eq 4 ] || fail "$n results files, want 4 (one per task)"
# a task run again (a resubmitted array) skips what it finished
"$RNIC" campaign task "$C" --task 0 | tee "$WORK/rerun.txt"
grep -q ": 0 runs (2 already finished)" "$WORK/rerun.txt" || fail "the rerun of task 0 did not skip its 2 finished runs"
echo "campaign_test: ok"
