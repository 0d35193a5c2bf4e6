#!/usr/bin/env bash
# Regenerate everything that comes from the entry formats hw/formats/rnic_formats.rdl:
#
#   hw/rtl/generated/rnic_formats.vh              Verilog localparams
#   host/rnic-driver/src/generated_formats.rs     Rust constants, accessors, enums
#   hw/formats/rnic_formats.md                    the documentation table
#
# all three by hw/formats/generate.py (systemrdl-compiler, pinned in
# hw/regs/requirements.txt; hw/regs/generate.sh checks the pins and runs
# this script). The outputs are committed; CI runs this and fails when
# `git diff` shows a difference.
#
# Usage: hw/formats/generate.sh   (from anywhere)
# Env:   PYTHON (default python3), RUSTFMT (default rustfmt)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT"

PYTHON="${PYTHON:-python3}"
RUSTFMT="${RUSTFMT:-rustfmt}"
RDL=hw/formats/rnic_formats.rdl    # relative on purpose: the path ends up in the outputs
GEN=hw/formats/generate.py

die() { echo "formats/generate.sh: $*" >&2; exit 1; }
command -v "$RUSTFMT" >/dev/null || die "rustfmt not found (rustup component add rustfmt)"
# the compiler pinned with the register generators
"$PYTHON" - <<'PY' || die "systemrdl-compiler differs from hw/regs/requirements.txt; run: $PYTHON -m pip install -r hw/regs/requirements.txt"
from importlib.metadata import version
want = [l.split("==")[1].strip() for l in open("hw/regs/requirements.txt") if l.startswith("systemrdl-compiler==")]
raise SystemExit(0 if want and version("systemrdl-compiler") == want[0] else 1)
PY

TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT

# Write to a temporary file first: a failing generator leaves the old output.
gen() {
    local kind="$1" out="$2"
    echo "formats/generate.sh: $RDL -> $out"
    "$PYTHON" "$GEN" "$RDL" "$kind" > "$TMP/out" || die "$GEN $kind failed"
    if [ "$kind" = rust ]; then
        # in place of the output, so that a workspace rustfmt.toml applies as with cargo fmt
        mv "$TMP/out" "$out"
        "$RUSTFMT" --edition 2021 "$out"
    else
        mv "$TMP/out" "$out"
    fi
}

mkdir -p hw/rtl/generated
gen verilog hw/rtl/generated/rnic_formats.vh
gen rust host/rnic-driver/src/generated_formats.rs
gen markdown hw/formats/rnic_formats.md
echo "formats/generate.sh: done"
