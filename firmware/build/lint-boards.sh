#!/usr/bin/env bash
# Lint every board top (boards/*/*.v) with the core under it:
# `verilator --lint-only -Wall`, once per DATA_W the board table allows for
# that top. Any warning fails, as in hw/lint.sh (whose waivers apply).
# A hard block a top instantiates (PCIE_2_1) needs a port declaration for
# Verilator: boards/<board>/lint/*.v, read only here.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT"
VERILATOR="${VERILATOR:-verilator}"
command -v "$VERILATOR" >/dev/null || { echo "lint-boards.sh: $VERILATOR not found" >&2; exit 2; }

shopt -s nullglob
CORE=(hw/rtl/*.v hw/rtl/generated/*.sv)
WAIVERS=(hw/lint/*.vlt)
status=0
# top, directory and DATA_W list of each board with a top of its own
while IFS=$'\t' read -r top dir widths; do
    files=("$dir"/*.v)
    [ ${#files[@]} -gt 0 ] || continue
    stubs=("$dir"/lint/*.v)
    for w in $widths; do
        log="$(mktemp)"
        if "$VERILATOR" --lint-only -Wall --top-module "$top" -Ihw/rtl -Ihw/rtl/generated "-I$dir/lint" \
                "-GDATA_W=$w" "${WAIVERS[@]}" "${CORE[@]}" "${files[@]}" "${stubs[@]}" >"$log" 2>&1 \
                && ! grep -q '^%' "$log"; then
            echo "lint-boards.sh: $top DATA_W=$w: clean"
        else
            cat "$log"
            echo "lint-boards.sh: $top DATA_W=$w: FAILED" >&2
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
