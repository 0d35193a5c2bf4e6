#!/usr/bin/env python3
"""Logic depth between registers of a synth_ecp5 netlist: a timing proxy.

Place and route of the core takes half an hour; this reads the JSON netlist
synthesis leaves (`netlist.json` of `rnic build --synth-only`) and in
seconds lists the register inputs with the deepest logic in front of them,
the register each path starts from and the named nets it passes. Depth is
counted in LUT levels (LUT4 = 1, the slice muxes PFUMX/L6MUX21 a fraction,
a carry chain a little per bit), so it ranks paths; it does not predict
nanoseconds (routing is about half of an ECP5 path). Rule of thumb on the
-6/-8 grades: 125 MHz wants about 8 levels or fewer.

A path from a block RAM read without its output register (DP16KD
REGMODE NOREG, as every ram_sdp maps) starts at --bram-start levels, not
at 0: the block's clock-to-output is about 4.3 ns on the -8 grade where a
flop's is 0.4, and the place and route of 2e7e1c4 found such a path
(the executor's timeout scan) the critical one while this proxy, counting
from 0, ranked it far below.

Usage: firmware/build/logic_depth.py NETLIST.json [--top N] [--paths K]
         [--count-at 12,16] [--max-levels L] [--bram-start W]

--max-levels makes it a gate: exit status 1 when any register input is
deeper than L levels (hw/synth.sh runs it so on every synthesis of the
core; see hw/README.md, "Where the core registers for timing"). Exit
status 2: the netlist cannot be read.
"""
import argparse
import json
import re
import sys
from collections import defaultdict

# combinational arcs of the ECP5 cells: (input, output, weight in LUT levels)
ARCS = {
    "LUT4": [(p, "Z", 1.0) for p in "ABCD"],
    "PFUMX": [("ALUT", "Z", 0.3), ("BLUT", "Z", 0.3), ("C0", "Z", 0.5)],
    "L6MUX21": [("D0", "Z", 0.3), ("D1", "Z", 0.3), ("SD", "Z", 0.5)],
    "CCU2C": [("CIN", "COUT", 0.05), ("CIN", "S0", 0.3), ("CIN", "S1", 0.35)]
    + [(p, o, 1.0) for p in ("A0", "B0", "C0", "D0") for o in ("S0", "S1", "COUT")]
    + [(p, o, 1.0) for p in ("A1", "B1", "C1", "D1") for o in ("S1", "COUT")],
    "TRELLIS_DPR16X4": [(f"RAD[{i}]", f"DO[{j}]", 1.2) for i in range(4) for j in range(4)],
}
# register inputs that end a path
ENDS = {
    "TRELLIS_FF": ("DI", "CE", "LSR", "M"),
    "DP16KD": ("AD", "DI", "CE", "WE"),
    "TRELLIS_DPR16X4": ("WRE", "DI", "WAD"),
}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("netlist")
    ap.add_argument("--top", type=int, default=30, help="distinct registers to list")
    ap.add_argument("--paths", type=int, default=5, help="of which this many with their nets")
    ap.add_argument("--count-at", default="12,16", help="report how many register inputs are this deep or deeper")
    ap.add_argument("--max-levels", type=float, help="fail (exit 1) when a register input is deeper")
    ap.add_argument("--bram-start", type=float, default=4.5,
                    help="levels a path from an unregistered block RAM output starts at (0: count from 0)")
    a = ap.parse_args()
    try:
        count_at = [float(x) for x in a.count_at.split(",") if x]
    except ValueError:
        ap.error("--count-at takes numbers separated by commas")

    def fail(msg):
        print(f"logic_depth.py: {msg}", file=sys.stderr)
        sys.exit(2)

    try:
        d = json.load(open(a.netlist))
    except (OSError, ValueError) as e:
        fail(f"cannot read {a.netlist}: {e}")
    mods = d.get("modules", {})
    if not mods:
        fail(f"{a.netlist} holds no module")
    mod = max(mods.values(), key=lambda m: len(m.get("cells", {})))
    cells = mod["cells"]

    def port_bits(c, port):
        return [b for b in c["connections"].get(port, [])]

    driver = {}
    for name, c in cells.items():
        for port, dirn in c["port_directions"].items():
            if dirn != "output":
                continue
            bl = port_bits(c, port)
            for i, b in enumerate(bl):
                if not isinstance(b, str):
                    driver[b] = (name, port if len(bl) == 1 else f"{port}[{i}]")

    def bit_of(c, pname):
        if pname.endswith("]"):
            p, i = pname[:-1].split("[")
            bl = port_bits(c, p)
            return bl[int(i)] if int(i) < len(bl) else None
        bl = port_bits(c, pname)
        return bl[0] if bl else None

    by_out = {}

    def arcs_to(cname, oport):
        key = (cname, oport)
        if key not in by_out:
            c = cells[cname]
            t = c["type"]
            if t == "MULT18X18D":
                ins = [f"{p}[{i}]" for p in ("A", "B") for i in range(len(port_bits(c, p)))]
                arcs = [(i, oport, 4.0) for i in ins]
            else:
                arcs = [(i, o, w) for i, o, w in ARCS.get(t, []) if o == oport]
            by_out[key] = [(bit_of(c, i), w) for i, o, w in arcs]
        return by_out[key]

    arr, prev = {}, {}

    def start_weight(dv):
        if not dv:
            return 0.0
        c = cells[dv[0]]
        if c["type"] != "DP16KD" or not dv[1].startswith("DO"):
            return 0.0
        # port A drives DOA*, port B DOB*; a registered output is a flop
        side = dv[1][2] if dv[1][2] in "AB" else "A"
        return 0.0 if c.get("parameters", {}).get(f"REGMODE_{side}", "NOREG") != "NOREG" else a.bram_start

    def arrival(b):
        stack = [b]
        while stack:
            x = stack[-1]
            if x in arr:
                stack.pop()
                continue
            dv = driver.get(x)
            ins = [(ib, w) for ib, w in arcs_to(*dv) if ib is not None and not isinstance(ib, str)] if dv else []
            if not ins:
                arr[x], prev[x] = start_weight(dv), ("start", dv[0] if dv else None)
                stack.pop()
                continue
            pend = [ib for ib, _ in ins if ib not in arr]
            if pend:
                stack.extend(pend)
                continue
            best = max(ins, key=lambda t: arr[t[0]] + t[1])
            arr[x], prev[x] = arr[best[0]] + best[1], ("via", dv[0], best[0])
            stack.pop()
        return arr[b]

    netname = {}
    for nn, n in mod["netnames"].items():
        if n.get("hide_name"):
            continue
        for b in n["bits"]:
            if not isinstance(b, str) and (b not in netname or len(nn) < len(netname[b])):
                netname[b] = nn

    def reg_name(cname):
        c = cells[cname]
        for p in ("Q", "DO", "DOA0", "DOB0", "Z", "S0", "P"):
            for b in port_bits(c, p)[:1]:
                if b in netname:
                    return re.sub(r"(_[A-Z0-9]+_[A-Z0-9]+.*|\[\d+\])$", "", netname[b])
        # no named output (hw/synth.sh leaves out `autoname`): a block RAM
        # cell still carries its memory's name
        return c["type"] if cname.startswith("$") else f"{cname} ({c['type']})"

    ends = []
    for name, c in cells.items():
        ports = ENDS.get(c["type"])
        if not ports:
            continue
        for p, bl in c["connections"].items():
            if p.startswith(ports):
                for b in bl:
                    if not isinstance(b, str):
                        ends.append((arrival(b), name, p, b))
    ends.sort(key=lambda e: -e[0])

    print(f"{'levels':>6}  register input  <- path start")
    seen, shown = set(), 0
    for lv, name, p, b in ends:
        key = reg_name(name)
        if key in seen:
            continue
        seen.add(key)
        x, nets = b, []
        while prev.get(x, ("start",))[0] == "via":
            n = netname.get(x)
            if n:
                n = re.sub(r"_(LUT4|PFUMX|L6MUX21|CCU2C|TRELLIS)_.*$", "", n)
                if not nets or nets[-1] != n:
                    nets.append(n)
            x = prev[x][2]
        start = prev.get(x, ("start", None))[1]
        print(f"{lv:6.1f}  {key} ({p})  <- {reg_name(start) if start else 'a constant or input'}")
        if shown < a.paths and nets:
            print("        through " + " < ".join(nets[:12]))
        shown += 1
        if shown >= a.top:
            break
    hist = defaultdict(int)
    for lv, *_ in ends:
        hist[int(lv)] += 1
    print("register inputs by depth (levels: count): " + ", ".join(f"{k}: {v}" for k, v in sorted(hist.items(), reverse=True)[:16]))
    deepest = ends[0][0] if ends else 0.0
    counts = ", ".join(f">= {c:g}: {sum(1 for e in ends if e[0] >= c)}" for c in count_at)
    print(f"deepest {deepest:.1f} levels; register inputs {len(ends)} ({counts})")
    if a.max_levels is not None:
        over = [e for e in ends if e[0] > a.max_levels]
        if over:
            names = sorted({reg_name(e[1]) for e in over})
            print(f"logic_depth.py: FAILED: {len(over)} register inputs deeper than {a.max_levels:g} levels"
                  f" (deepest {deepest:.1f}): {', '.join(names[:8])}{' ...' if len(names) > 8 else ''}", file=sys.stderr)
            sys.exit(1)
        print(f"logic_depth.py: ok: no register input deeper than {a.max_levels:g} levels")


if __name__ == "__main__":
    main()
