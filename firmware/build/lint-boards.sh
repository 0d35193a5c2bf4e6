#!/usr/bin/env bash
# Lint every board top (boards/*/*.v) with the core under it:
# `verilator --lint-only -Wall`, once per DATA_W the board table allows for
# that top. Any warning fails, as in hw/lint.sh (whose waivers apply).
# A hard block a top instantiates (PCIE_2_1) needs a port declaration for
# Verilator: boards/<board>/lint/*.v, read only here.
# Env: TOP_VARIANTS  further parameter settings, each linted at the top's
#      first DATA_W (TOP:P=V,P2=V2; default: the Artix-7 card with its core
#      on the PCIe user clock, CLK_MHZ=125, besides its default 62).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT"
VERILATOR="${VERILATOR:-verilator}"
command -v "$VERILATOR" >/dev/null || { echo "lint-boards.sh: $VERILATOR not found" >&2; exit 2; }

shopt -s nullglob
CORE=(hw/rtl/*.v hw/rtl/generated/*.sv)
WAIVERS=(hw/lint/*.vlt)
TOP_VARIANTS="${TOP_VARIANTS-rnic_artix7_top:CLK_MHZ=125}"
status=0
# top, directory and DATA_W list of each board with a top of its own
while IFS=$'\t' read -r top dir widths; do
    files=("$dir"/*.v)
    [ ${#files[@]} -gt 0 ] || continue
    stubs=("$dir"/lint/*.v)
    runs=()
    for w in $widths; do runs+=("DATA_W=$w"); done
    for v in $TOP_VARIANTS; do
        [ "${v%%:*}" = "$top" ] && runs+=("DATA_W=${widths%% *},${v#*:}")
    done
    for run in "${runs[@]}"; do
        gargs=()
        IFS=, read -r -a kv <<< "$run"
        for k in "${kv[@]}"; do gargs+=("-G$k"); done
        log="$(mktemp)"
        if "$VERILATOR" --lint-only -Wall --top-module "$top" -Ihw/rtl -Ihw/rtl/generated "-I$dir/lint" \
                "${gargs[@]}" "${WAIVERS[@]}" "${CORE[@]}" "${files[@]}" "${stubs[@]}" >"$log" 2>&1 \
                && ! grep -q '^%' "$log"; then
            echo "lint-boards.sh: $top ${run//,/ }: clean"
        else
            cat "$log"
            echo "lint-boards.sh: $top ${run//,/ }: FAILED" >&2
            status=1
        fi
        rm -f "$log"
    done
done < <(python3 - <<'PY'
import json
seen = set()
for b in json.load(open("boards/boards.json"))["boards"]:
    if b["top"] == "rnic_core" or (b["top"], b["dir"]) in seen:
        continue
    seen.add((b["top"], b["dir"]))
    print(b["top"], b["dir"], " ".join(map(str, b["data_w"])), sep="\t")
PY
)
exit "$status"
