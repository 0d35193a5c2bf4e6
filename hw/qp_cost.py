#!/usr/bin/env python3
"""Per-module cost of QPs from two hierarchical Yosys `stat` reports of
rnic_core (hw/qp_cost.sh writes them): each module's LUT4, CCU2C (carry),
TRELLIS_FF and TRELLIS_DPR16X4 (LUT-RAM) cells at both NUM_Q, and the LUT4
and FF every added QP costs, largest first.

Usage: hw/qp_cost.py LOW.txt HIGH.txt NUM_Q_LOW NUM_Q_HIGH
"""

import re
import sys

CELLS = ("LUT4", "CCU2C", "TRELLIS_FF", "TRELLIS_DPR16X4")


def module_name(header: str) -> str:
    # "$paramod$<hash>\requester", "$paramod\mr_table\NUM_MR=...", "rnic_csr"
    m = re.match(r"\$paramod\$[0-9a-f]+\\(\w+)", header) or re.match(r"\$paramod\\(\w+)", header)
    return m.group(1) if m else header


def load(path: str) -> dict:
    text = open(path).read()
    parts = re.split(r"\n=== (.+?) ===\n", text)
    if len(parts) < 3:
        sys.exit(f"qp_cost.py: {path} holds no Yosys stat report")
    out = {}
    for header, body in zip(parts[1::2], parts[2::2]):
        name = "(total)" if header == "design hierarchy" else module_name(header)
        row = out.setdefault(name, dict.fromkeys(CELLS, 0))
        for c in CELLS:
            m = re.search(rf"^\s+{c}\s+(\d+)$", body, re.M)
            # a module's own cells (its submodules are rows of their own),
            # once per parameterisation: a module built with other
            # parameters sums its builds, but one instantiated N times with
            # the same ones counts once (the total row counts every instance)
            row[c] += int(m.group(1)) if m else 0
    return out


def main() -> int:
    if len(sys.argv) != 5:
        print(__doc__, file=sys.stderr)
        return 2
    lo, hi = load(sys.argv[1]), load(sys.argv[2])
    n_lo, n_hi = int(sys.argv[3]), int(sys.argv[4])
    if n_hi <= n_lo:
        sys.exit("qp_cost.py: NUM_Q_HIGH must be above NUM_Q_LOW")
    per = n_hi - n_lo
    names = sorted((set(lo) | set(hi)) - {"(total)"},
                   key=lambda k: -(hi.get(k, {}).get("LUT4", 0) - lo.get(k, {}).get("LUT4", 0)))
    zero = dict.fromkeys(CELLS, 0)
    print(f"| module | LUT4 at {n_lo} | LUT4 at {n_hi} | LUT4 per QP | FF at {n_lo} | FF at {n_hi} "
          f"| FF per QP | carry {n_lo} / {n_hi} | LUT-RAM {n_lo} / {n_hi} |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for k in names + ["(total)"]:
        a, b = lo.get(k, zero), hi.get(k, zero)
        if k != "(total)" and a == b and a["LUT4"] < 500:
            continue
        print(f"| {k} | {a['LUT4']:,} | {b['LUT4']:,} | {(b['LUT4'] - a['LUT4']) / per:.0f} "
              f"| {a['TRELLIS_FF']:,} | {b['TRELLIS_FF']:,} | {(b['TRELLIS_FF'] - a['TRELLIS_FF']) / per:.0f} "
              f"| {a['CCU2C']:,} / {b['CCU2C']:,} | {a['TRELLIS_DPR16X4']:,} / {b['TRELLIS_DPR16X4']:,} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
