#!/usr/bin/env python3
"""Write hw/state/state_manifest.json: the on-chip state each QP costs, read
off an elaboration of rnic_core by Verilator (`--xml-only`: every variable
with its elaborated type, every localparam with its value, the instance
tree) for each build configuration in CONFIGS.

What counts as state: a variable of one of STATE_MODULES that a clocked
process writes (a nonblocking assignment; lint's BLKSEQ keeps clocked
writes nonblocking), i.e. flops and memories, or a field of a record in
block RAM. What makes it per-QP or shared is measured, not read from the
text: each configuration is elaborated again with NUM_Q doubled (the pools
held) and with the pools changed (NUM_Q held); an array with one element
per QP (or a vector with one bit per QP) is per-QP state, one whose size
follows the pools alone is shared. State that grows with NUM_Q in another
way (two bits per queue in one vector, say) is listed under "other" and
not counted: the budget's categories are per-QP elements.

Records in block RAM are declared once per module as localparams
`<R>_W` (the word) and `<R>_<F>_LSB`, `<R>_<F>_W` (its fields); a field is
in the word when it lies inside `<R>_W` and the next field (declaration
order) starts after it (a knob that drops a field gives it no room: its
successor starts where it starts, or the word ends before it); the fields
kept must tile the word exactly, else this script fails. The state of a
block in PARTS (rc_message, mp_deferred, completer, atomic_replay) is
counted as its owner's, its records (declarations and block RAMs) too. A
slot_allocator instance (a pool's free bits) is shared state of SLOTS
bits, named after its instance. Every ram_sdp
instance of the module with one word per QP is a copy of (part of) a
record: the bits of the record it is written (wr_data: the record's write
vector, or a part select of it), listed with the fields they hold; a field
is counted once however many copies hold it, but once per instance of a
generate loop of RAMs (several words of the record per QP: a ring's
slots).

Two things the elaboration cannot tell are said by Verilog attributes on
the declaration, which Yosys reads (Verilator drops attributes):
`(* rnic_copy *)` marks a flop copy of state counted elsewhere (listed
under "copies", not counted), `(* rnic_knob = "RC_EN" *)` a structure only
builds with that knob on carry (the logic that uses it is gated by the
knob; the declaration stays).

Usage: hw/state/manifest.py [--check]   (from anywhere; --check: compare
with the committed file instead of writing it)
       hw/state/manifest.py --config NUM_Q=32,MP_W=64,SEND_EN=1,RC_EN=1
       (one configuration, the parameters not given at rnic_core's
       defaults: its entry as JSON on stdout; `rnic build` runs this for a
       build CONFIGS lacks; it may also name READ_EN, which CONFIGS leave
       at 0 but for the atomic builds: the READ responder adds no per-QP
       or pool-sized state; and ATOMIC_EN, whose replay records do)
Env:   VERILATOR (default verilator), YOSYS (default yosys), JOBS
       (configurations elaborated at once; default: the CPUs)
Runtime: three elaborations per configuration, about 1-2 s each (3-5 s at
1,024 QPs); the 16 of CONFIGS take about 20-30 s with two jobs on a 2-core machine (the earlier
27 took 1.0-1.9 min); --config about 3-5 s.
"""

import json
import os
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
from concurrent.futures import ProcessPoolExecutor
from itertools import product

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
OUT = "hw/state/state_manifest.json"
TOP = "rnic_core"
# The modules that keep per-QP state, in the order the budget lists them.
STATE_MODULES = ["qp_context", "queue_manager", "cq_manager", "requester", "responder"]
# Blocks that keep per-QP state for one of them, counted as that module's
# (a knob may leave a block out of a build: then it has none of that state).
PARTS = {"rc_message": "responder", "mp_deferred": "responder", "completer": "requester",
         "atomic_replay": "responder"}
# Knobs an `rnic_knob` attribute may name (parameters of the module).
KNOBS = ["SEND_EN", "RC_EN"]
# The configurations: the simulator's models and the boards' QP counts with
# every verb/transport set (RC_EN = 0 needs SEND_EN = 0) at the default mp
# window; the boards' full build, the simulator's full and mp-only builds at
# the other windows (the budget's tests check an mp QP against its target
# at each); the pools sized from NUM_Q (knobs 0). Kept short because CI
# regenerates all of them (the drift check); `rnic build` elaborates any
# other build itself (--config).
CONFIGS = [
    {"NUM_Q": q, "MP_W": w, "SEND_EN": s, "RC_EN": r, "OST_RINGS": 0, "MP_PEND": 0, "DMAC_N": 0}
    for q, w, (s, r) in list(product([16, 64, 256], [64], [(1, 1), (0, 1), (0, 0)]))
    + [(q, w, k) for q, k in [(16, (1, 1)), (64, (1, 1)), (64, (0, 0))] for w in [32, 128]]
    # the simulator's many-QP model (and `rnic build --num-q 1024`)
    + [(1024, 64, (1, 1))]
] + [
    # atomics executed (ATOMIC_EN, which needs READ_EN): the per-QP replay
    # records; the simulator's full and many-QP models and the boards' QPs
    {"NUM_Q": q, "MP_W": 64, "SEND_EN": 1, "RC_EN": 1, "READ_EN": 1, "ATOMIC_EN": 1, "OST_RINGS": 0,
     "MP_PEND": 0, "DMAC_N": 0}
    for q in [16, 64, 1024]
]
POOLS = [("OST_RINGS", "OST_RINGS_Q", "rings"), ("MP_PEND", "MP_PEND_Q", "mp_pend"),
         ("DMAC_N", "DMAC_N_Q", "dmacs")]


def die(msg):
    sys.exit(f"manifest.py: {msg}")


def const(s):
    """The value of a Verilator constant name (`32'sh3f`, `8'h40`)."""
    _, v = s.split("'")
    v = v.lstrip("s")
    base = {"h": 16, "d": 10, "b": 2, "o": 8}[v[0]]
    return int(v[1:].replace("_", ""), base)


def sources():
    rtl = sorted(f"hw/rtl/{f}" for f in os.listdir(os.path.join(ROOT, "hw/rtl")) if f.endswith(".v"))
    gen = sorted(f"hw/rtl/generated/{f}" for f in os.listdir(os.path.join(ROOT, "hw/rtl/generated"))
                 if f.endswith(".sv"))
    lint = sorted(f"hw/lint/{f}" for f in os.listdir(os.path.join(ROOT, "hw/lint")) if f.endswith(".vlt"))
    return lint + rtl + gen


def elaborate(params, tmp):
    """Elaborate rnic_core with `params`; per STATE_MODULES module: its
    parameters and localparams, its state variables {name: (line, width,
    depth or None)}, its ram_sdp instances."""
    xml = os.path.join(tmp, "core.xml")
    cmd = [os.environ.get("VERILATOR", "verilator"), "--xml-only", "--xml-output", xml,
           "--top-module", TOP, "-Ihw/rtl", "-Ihw/rtl/generated"]
    cmd += [f"-G{k}={v}" for k, v in params.items()]
    r = subprocess.run(cmd + sources(), cwd=ROOT, capture_output=True, text=True)
    if r.returncode != 0:
        die(f"verilator {params}:\n{r.stdout}{r.stderr}")
    root = ET.parse(xml).getroot()
    types = {}
    for t in root.iter("typetable"):
        for d in t:
            types[d.get("id")] = d

    def shape(dtype_id):
        """(packed width, unpacked depth or None) of a type."""
        d = types[dtype_id]
        depth = None
        if d.tag == "unpackarraydtype":
            lo, hi = (const(c.get("name")) for c in d.find("range"))
            depth = abs(hi - lo) + 1
            d = types[d.get("sub_dtype_id")]
        if d.tag != "basicdtype":
            die(f"unexpected type {d.tag} {d.attrib}")
        if d.get("left") is None:
            return 1, depth
        return abs(int(d.get("left")) - int(d.get("right"))) + 1, depth

    def lhs_var(e):
        while e.tag != "varref":
            e = e[0]
        return e.get("name")

    mods = {}
    parts = {}
    core_params = {}
    for m in root.iter("module"):
        orig = m.get("origName")
        if orig == TOP:
            for v in m.iter("var"):
                if v.get("param") or v.get("localparam"):
                    c = v.find("const")
                    if c is not None:
                        core_params[v.get("name")] = const(c.get("name"))
        if orig not in STATE_MODULES and orig not in PARTS:
            continue
        if orig in mods or orig in parts:
            die(f"{orig} elaborated twice: one instance per module expected")
        params, local, vars_ = {}, {}, {}
        own_file = m.get("loc").split(",")[0]
        for v in m.findall("var"):
            name = v.get("name")
            file, line = v.get("loc").split(",")[:2]
            line = int(line)
            if v.get("localparam") and file != own_file:
                continue    # an included file's (the entry formats)
            if v.get("param") or v.get("localparam"):
                c = v.find("const")
                if c is not None:
                    (params if v.get("param") else local)[name] = (const(c.get("name")), line)
            elif v.get("dir") is None:
                vars_[name] = (line,) + shape(v.get("dtype_id"))
        written = {lhs_var(a[1]) for a in m.iter("assigndly")}
        state = {n: s for n, s in vars_.items() if n in written}
        rams, allocs = [], []
        for inst in m.iter("instance"):
            sub = next(x for x in root.iter("module") if x.get("name") == inst.get("defName"))
            if sub.get("origName") == "slot_allocator":
                # a pool's free bits, kept in the block: one per slot
                slots = next(const(v.find("const").get("name")) for v in sub.findall("var")
                             if v.get("param") and v.get("name") == "SLOTS")
                allocs.append({"instance": inst.get("name"), "bits": slots,
                               "line": int(inst.get("loc").split(",")[1])})
                continue
            if sub.get("origName") not in ("ram_sdp", "ram_sdp_copies", "ram_rec"):
                continue
            sp = {v.get("name"): const(v.find("const").get("name"))
                  for v in sub.findall("var") if v.get("param")}
            port = next(p for p in inst.findall("port") if p.get("name") == "wr_data")[0]
            if port.tag == "varref":
                src, lsb = port.get("name"), 0
            elif port.tag == "sel" and port[0].tag == "varref" and port[1].tag == "const":
                src, lsb = port[0].get("name"), const(port[1].get("name"))
            else:
                die(f"{orig}.{inst.get('name')}: wr_data is neither a vector nor a part select of one")
            if sub.get("origName") == "ram_sdp":
                copies = [(inst.get("name"), 0, sp["DATA_W"])]
            else:
                # one ram_sdp per read port, holding that port's slice
                field = lambda v, p: (v >> (32 * p)) & 0xFFFFFFFF
                copies = [(f"{inst.get('name')}.g_port[{p}]", field(sp["RD_LSB"], p), field(sp["RD_W"], p))
                          for p in range(sp["N_RD"] - (0 if sp.get("REC_EN", 1) else sp.get("REC_RD", 0)))]
                if sub.get("origName") == "ram_rec" and sp["REC_EN"]:
                    # the record port's copy of the whole record
                    copies.append((f"{inst.get('name')}.g_rec.rec_inst", 0, sp["DATA_W"]))
            for name, off, width in copies:
                rams.append({"instance": name, "width": width, "depth": sp["DEPTH"],
                             "data_w": sp["DATA_W"],
                             "src": src, "src_width": vars_[src][1], "lsb": lsb + off,
                             "line": vars_[src][0]})
        if orig in PARTS:
            # (its records' declarations go to its owner with its RAMs)
            parts[orig] = (state, allocs, rams, local)
            continue
        mods[orig] = {"params": params, "local": local, "state": state, "rams": rams,
                      "allocs": allocs}
    for m in STATE_MODULES:
        if m not in mods:
            die(f"{m} is not in the elaboration of {TOP}")
    for part, (state, allocs, rams, local) in parts.items():
        owner = mods[PARTS[part]]
        for name, st in state.items():
            if name in owner["state"]:
                die(f"{part}.{name}: {PARTS[part]} has state of that name too")
            owner["state"][name] = st
        owner["allocs"] += allocs
        owner["rams"] += rams
        for name, v in local.items():
            if name in owner["local"] and owner["local"][name][0] != v[0]:
                die(f"{part}.{name}: {PARTS[part]} has a localparam of that name too")
            owner["local"].setdefault(name, v)
    return mods, core_params


def records(mod):
    """The record candidates of a module: {R: (width, [(field, lsb, width,
    line)])}, fields in declaration order: a localparam `<R>_W` with
    `<R>_<F>_LSB`, `<R>_<F>_W` pairs (the included entry formats have them
    too, not counted: the module's own file only, and a record is one a
    per-QP block RAM is written from)."""
    local = mod["local"]
    out = {}
    for name, (w, _) in local.items():
        if not name.endswith("_W"):
            continue
        r = name[:-2]
        fields = []
        for n, (lsb, line) in local.items():
            if n.startswith(r + "_") and n.endswith("_LSB"):
                f = n[len(r) + 1:-4]
                if f"{r}_{f}_W" in local:
                    fields.append((f, lsb, local[f"{r}_{f}_W"][0], local[f"{r}_{f}_W"][1]))
        if fields:
            out[r] = (w, sorted(fields, key=lambda x: x[3]))
    return out


def held(r, w, fields):
    """The fields the word of record `r` (`w` bits) holds."""
    out = []
    for i, (f, lsb, fw, line) in enumerate(fields):
        nxt = fields[i + 1][1] if i + 1 < len(fields) else None
        if lsb + fw <= w and (nxt is None or nxt >= lsb + fw):
            out.append((f, lsb, fw, line))
    pos = 0
    for f, lsb, fw, _ in sorted(out, key=lambda x: x[1]):
        if lsb != pos:
            die(f"record {r}: field {f} at bit {lsb}, {pos} expected (the kept fields must tile {r}_W)")
        pos += fw
    if pos != w:
        die(f"record {r}: its fields cover {pos} of {r}_W = {w} bits")
    return out


def attributes():
    """{(module, name): {"copy": bool, "knob": KNOB or None}} from Yosys."""
    files = [f"hw/rtl/{m}.v" for m in STATE_MODULES]
    sels = ["a:rnic_copy", "a:rnic_knob"] + [f"a:rnic_knob={k}" for k in KNOBS]
    script = "; ".join([f"read_verilog -sv -Ihw/rtl -Ihw/rtl/generated {' '.join(files)}"]
                       + [f"tee -q -o {{out}}/{i}.txt select -list {s}" for i, s in enumerate(sels)])
    with tempfile.TemporaryDirectory() as tmp:
        r = subprocess.run([os.environ.get("YOSYS", "yosys"), "-q", "-p", script.format(out=tmp)],
                           cwd=ROOT, capture_output=True, text=True)
        if r.returncode != 0:
            die(f"yosys:\n{r.stdout}{r.stderr}")
        lists = []
        for i in range(len(sels)):
            with open(os.path.join(tmp, f"{i}.txt")) as f:
                lists.append({tuple(x.strip().split("/", 1)) for x in f if "/" in x})
    attrs = {}
    for k in lists[0]:
        attrs.setdefault(k, {"copy": False, "knob": None})["copy"] = True
    for knob, found in zip(KNOBS, lists[2:]):
        for k in found:
            attrs.setdefault(k, {"copy": False, "knob": None})["knob"] = knob
    unknown = lists[1] - set().union(*lists[2:])
    if unknown:
        die(f"rnic_knob names a knob not in {KNOBS}: {sorted(unknown)}")
    return attrs


def one(cfg, attrs, tmp):
    base, core = elaborate(cfg, tmp)
    n = cfg["NUM_Q"]
    pools = {key: core[local] for _, local, key in POOLS}
    pinned = {knob: core[local] for knob, local, _ in POOLS}
    more_q, _ = elaborate({**cfg, **pinned, "NUM_Q": 2 * n}, tmp)
    changed = {knob: v - 1 if v > 2 else v + 1 for knob, v in pinned.items()}
    more_p, _ = elaborate({**cfg, **changed}, tmp)
    per_qp, shared, copies, other, rams = [], [], [], [], []
    for m in STATE_MODULES:
        mod = base[m]
        for name, (line, w, depth) in mod["state"].items():
            if name not in more_q[m]["state"] or name not in more_p[m]["state"]:
                die(f"{m}.{name}: gone when NUM_Q or the pools change; cannot tell what it scales with")
            _, w_q, d_q = more_q[m]["state"][name]
            _, w_p, d_p = more_p[m]["state"][name]
            if depth == n and d_q == 2 * n:
                kind, bits = "array", w
            elif depth is None and w == n and w_q == 2 * n:
                kind, bits = "bits", 1
            elif depth is not None and d_q == depth and d_p != depth:
                kind, bits = "pool", w * depth
            elif depth is None and w_q == w and w_p != w:
                kind, bits = "pool", w
            elif w_q * (d_q or 1) >= 2 * w * (depth or 1):
                # grows with NUM_Q, but not one element per QP (two bits
                # per queue, say): listed, not in the budget
                kind, bits = "other", w * (depth or 1)
            else:
                continue
            a = attrs.get((m, name), {"copy": False, "knob": None})
            if a["knob"] and a["knob"] not in mod["params"]:
                die(f"{m}.{name}: rnic_knob {a['knob']} is not a parameter of {m}")
            if a["knob"] and mod["params"][a["knob"]][0] == 0:
                continue
            item = {"module": m, "name": name, "bits": bits, "line": line}
            if a["copy"]:
                copies.append(item)
            else:
                {"pool": shared, "other": other}.get(kind, per_qp).append(item)
        for al in mod["allocs"]:
            grown = [a for a in more_p[m]["allocs"] if a["instance"] == al["instance"]]
            if not grown or grown[0]["bits"] == al["bits"]:
                die(f"{m}.{al['instance']}: a slot_allocator whose size does not follow the pools")
            shared.append({"module": m, "name": al["instance"].removesuffix("_inst"),
                           "bits": al["bits"], "line": al["line"]})
        recs = records(mod)
        used = {}
        stored = set()
        pool_rams = set()
        # a RAM instance in a generate loop (the elaboration names each the
        # same) is one of several RAMs holding different words of its
        # record: a ring's slots, say (atomic_replay), each field once per
        # instance; copies for several read ports have names of their own
        names = [r["instance"] for r in mod["rams"]]
        slots = {}
        for ram in mod["rams"]:
            if ram["depth"] != n:
                # a block RAM of a pool (its depth follows the pools, not
                # NUM_Q): its write vector once, however many copies
                inst = ram["instance"].split(".")[0]
                grown = [r for r in more_p[m]["rams"] if r["instance"] == ram["instance"]]
                if not grown or grown[0]["depth"] == ram["depth"]:
                    die(f"{m}.{ram['instance']}: neither one word per QP nor per pool entry")
                if inst not in pool_rams:
                    pool_rams.add(inst)
                    shared.append({"module": m, "name": inst.removesuffix("_inst"),
                                   "bits": ram["src_width"] * ram["depth"], "line": ram["line"]})
                continue
            # the record whose write vector it is (its word, or the logic's
            # view of it with the fields of knobs that are off), else the
            # one of the RAM's word (a copy may hold one field of it), else
            # the one of the copy's width
            owner = [r for r, (w, _) in recs.items() if w == ram["src_width"]] \
                or [r for r, (w, _) in recs.items() if w == ram["data_w"]] \
                or [r for r, (w, _) in recs.items() if w == ram["width"]]
            if len(owner) > 1:
                # named by its write vector (<r>_...), or, where the
                # elaboration shows another name for that vector (a
                # plain alias), by its instance (<r>_inst)
                inst = ram["instance"].split(".")[0]
                owner = [r for r in owner if ram["src"].startswith(r.lower() + "_")] \
                    or [r for r in owner if inst.startswith(r.lower() + "_")]
            if len(owner) != 1:
                die(f"{m}.{ram['instance']}: which record it holds ({ram['src']}: {owner})")
            r = owner[0]
            if r not in used:
                used[r] = held(r, *recs[r])
            lo, hi = ram["lsb"], ram["lsb"] + ram["width"]
            fields = [f for f, lsb, fw, _ in used[r] if lsb >= lo and lsb + fw <= hi]
            if sum(fw for f, lsb, fw, _ in used[r] if f in fields) != ram["width"]:
                die(f"{m}.{ram['instance']}: bits {lo}..{hi - 1} of {r} are not whole fields")
            stored.update((r, f) for f in fields)
            slots[r] = max(slots.get(r, 1), names.count(ram["instance"]))
            rams.append({"module": m, "instance": ram["instance"], "record": r, "lsb": lo,
                         "width": ram["width"], "depth": ram["depth"], "fields": fields})
        for r, fields in used.items():
            for f, lsb, fw, line in fields:
                if (r, f) in stored:
                    per_qp.append({"module": m, "name": f"{r}_{f}".lower(),
                                   "bits": fw * slots.get(r, 1), "line": line, "record": r})
    for items in (per_qp, shared, copies, other):
        items.sort(key=lambda i: (STATE_MODULES.index(i["module"]), i["line"]))
        for i in items:
            del i["line"]
    return {"params": cfg, "pools": pools, "per_qp": per_qp, "shared": shared, "copies": copies,
            "other": other, "block_ram": rams}


def one_in_tmp(cfg, attrs):
    with tempfile.TemporaryDirectory() as tmp:
        return one(cfg, attrs, tmp)


def render(manifest):
    """JSON with one item per line: a small diff when the RTL changes."""
    out = ['{', f'  "generator": {json.dumps(manifest["generator"])},', '  "configs": [']
    for ci, c in enumerate(manifest["configs"]):
        out.append("    {")
        out.append(f'      "params": {json.dumps(c["params"])},')
        out.append(f'      "pools": {json.dumps(c["pools"])},')
        keys = ["per_qp", "shared", "copies", "other", "block_ram"]
        for ki, k in enumerate(keys):
            rows = [f"        {json.dumps(i)}" for i in c[k]]
            tail = "," if ki + 1 < len(keys) else ""
            if rows:
                out.append(f'      "{k}": [\n' + ",\n".join(rows) + f"\n      ]{tail}")
            else:
                out.append(f'      "{k}": []{tail}')
        out.append("    }" + ("," if ci + 1 < len(manifest["configs"]) else ""))
    out += ["  ]", "}"]
    return "\n".join(out) + "\n"


def main():
    args = sys.argv[1:]
    if args[:1] == ["--config"] and len(args) == 2:
        # one configuration, its entry to stdout (the file untouched): for
        # a build CONFIGS lacks (rnic build runs this)
        cfg = {"NUM_Q": 16, "MP_W": 64, "SEND_EN": 1, "RC_EN": 1, "READ_EN": 0, "ATOMIC_EN": 0,
               "OST_RINGS": 0, "MP_PEND": 0, "DMAC_N": 0}
        for kv in args[1].split(","):
            k, v = kv.split("=")
            if k not in cfg:
                die(f"--config: {k} is not one of {sorted(cfg)}")
            cfg[k] = int(v)
        print(json.dumps(one_in_tmp(cfg, attributes())))
        return
    check = "--check" in args
    attrs = attributes()
    jobs = int(os.environ.get("JOBS", "0")) or os.cpu_count() or 1
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        configs = list(pool.map(one_in_tmp, CONFIGS, [attrs] * len(CONFIGS)))
    text = render({"generator": "hw/state/manifest.py (do not edit; run it)", "configs": configs})
    path = os.path.join(ROOT, OUT)
    if check:
        with open(path) as f:
            if f.read() != text:
                die(f"{OUT} differs from the RTL: run hw/state/manifest.py")
        return
    with open(path, "w") as f:
        f.write(text)


if __name__ == "__main__":
    main()
