#!/usr/bin/env python3
"""Emit the ring entry formats of hw/formats/rnic_formats.rdl as Verilog
localparams, Rust accessors or a Markdown table.

Used by hw/formats/generate.sh. The RDL describes each entry (send WQE,
receive WQE, CQE) as a regfile, one reg per item at its byte offset, fields
for the bits of an item; enums give the values of the opcode and status
fields (see the header of the RDL file). This script flattens that into
entries of items of fields, with every bit position counted over the whole
entry (little endian: bit 8*b+i is bit i of byte b), and checks what the
compiler does not: items inside the entry and not overlapping, names unique,
each enum used by fields of one width.

Usage: generate.py RDL_FILE verilog|rust|markdown > output
The RDL path is printed into the header as given: pass it relative to the
repository root so that the output does not depend on the checkout's place.
"""

import re
import sys
from dataclasses import dataclass, field as dc_field

from systemrdl import RDLCompiler
from systemrdl.node import RegfileNode

GENERATOR = "hw/formats/generate.sh (hw/formats/generate.py)"


@dataclass
class Field:
    name: str  # qualified by its item unless the field is the whole item
    short: str  # the field's own name
    lsb: int  # bit position in the entry
    width: int
    desc: str
    enum: object  # systemrdl UserEnum type, or None
    item_bit: int  # position inside its item (for masks)


@dataclass
class Item:
    name: str
    offset: int  # bytes
    width: int  # bits
    desc: str
    fields: list = dc_field(default_factory=list)

    @property
    def whole(self):
        """The item is one field covering it (named by the item)."""
        return len(self.fields) == 1 and self.fields[0].width == self.width


@dataclass
class Entry:
    name: str
    title: str
    desc: str
    size: int  # bytes
    writer: str  # "host" or "NIC"
    items: list


@dataclass
class Enum:
    rdl: object
    name: str  # RDL type name
    width: int
    open: bool  # the NIC writes it: a decoder must keep unknown values
    members: list  # (NAME, value, display name, desc)
    users: list  # "entry.field"


def text(s):
    return " ".join((s or "").split())


def die(msg):
    sys.exit(f"generate.py: {msg}")


def load(path):
    rdlc = RDLCompiler()
    rdlc.compile_file(path)
    top = rdlc.elaborate(top_def_name="rnic_formats").top
    entries, enums = [], {}
    for rf in top.children():
        if not isinstance(rf, RegfileNode):
            die(f"{rf.get_path()}: only regfiles (one per entry) may sit in the top addrmap")
        size = rf.get_property("entry_bytes")
        if size is None:
            die(f"{rf.inst_name}: entry_bytes missing")
        if size & (size - 1):
            die(f"{rf.inst_name}: entry_bytes {size} is not a power of two (ring slots are)")
        items, names, writers = [], set(), set()
        taken = [None] * size
        for r in rf.children():
            if r.is_array:
                die(f"{r.get_path()}: arrays are not supported")
            width = r.get_property("regwidth")
            off = r.address_offset
            if off % (width // 8):
                die(f"{r.get_path()}: offset {off} not aligned to its {width // 8} bytes")
            if off + width // 8 > size:
                die(f"{r.get_path()}: past the end of the {size}-byte entry")
            for b in range(off, off + width // 8):
                if taken[b] is not None:
                    die(f"{r.get_path()}: byte {b} is also in {taken[b]}")
                taken[b] = r.inst_name
            item = Item(r.inst_name, off, width, text(r.get_property("desc")))
            fl = list(r.fields())
            for f in fl:
                whole = len(fl) == 1 and f.width == width
                name = r.inst_name if whole else f"{r.inst_name}_{f.inst_name}"
                item.fields.append(
                    Field(name, f.inst_name, off * 8 + f.lsb, f.width, text(f.get_property("desc")),
                          f.get_property("encode"), f.lsb)
                )
                writers.add("NIC" if f.is_hw_writable else "host")
                if f.is_hw_writable == f.is_sw_writable:
                    die(f"{f.get_path()}: exactly one of host (sw) and NIC (hw) writes a field")
            for n in [item.name] + ([] if item.whole else [f.name for f in item.fields]):
                if n in names:
                    die(f"{rf.inst_name}: name {n} used twice")
                names.add(n)
            items.append(item)
        if len(writers) != 1:
            die(f"{rf.inst_name}: an entry is written by the host or by the NIC, not both")
        e = Entry(rf.inst_name, text(rf.get_property("name")), text(rf.get_property("desc")), size,
                  writers.pop(), sorted(items, key=lambda i: i.offset))
        entries.append(e)
        for it in e.items:
            for f in it.fields:
                if f.enum is None:
                    continue
                en = enums.get(f.enum.type_name)
                if en is None:
                    members = [
                        (m.name.upper(), m.value, text(m.rdl_name) or m.name.upper(), text(m.rdl_desc))
                        for m in f.enum
                    ]
                    en = enums[f.enum.type_name] = Enum(f.enum, f.enum.type_name, f.width, False, members, [])
                if en.width != f.width:
                    die(f"enum {en.name}: used by fields of {en.width} and {f.width} bits")
                en.open |= e.writer == "NIC"
                en.users.append(f"{e.name}.{f.name}")
    for en in enums.values():
        for m in en.members:
            if m[1] >= 1 << en.width:
                die(f"enum {en.name}: {m[0]} = {m[1]} does not fit {en.width} bits")
    return entries, list(enums.values())  # in order of first use


def bytes_of(off, n):
    return f"byte {off}" if n == 1 else f"bytes {off}..{off + n - 1}"


def header(rdl, comment):
    return f"{comment} Generated by {GENERATOR} from {rdl}. Do not edit.\n"


def wrap_comment(s):
    return "".join(f"// {line}\n" for line in wrap(s, 76))


# --- Verilog ---------------------------------------------------------------------


def verilog(rdl, entries, enums):
    out = [header(rdl, "//")]
    out.append(
        "//\n"
        "// The ring entry formats as localparams: `include this file inside a module\n"
        "// body. A bit position counts over the whole entry, little endian (bit\n"
        "// 8*b+i is bit i of byte b), so an entry of N bytes is a vector [8*N-1:0]\n"
        "// as the DMA engines capture it: field F is entry[F_LSB +: F_W].\n"
        "// A module uses a few of these: the rest must not warn.\n"
        "// verilator lint_off UNUSEDPARAM\n"
    )
    for e in entries:
        p = e.name.upper()
        out.append("\n" + wrap_comment(f"{e.title}, {e.size} bytes, written by the {e.writer}. {e.desc}"))
        out.append(f"localparam {p}_BYTES = {e.size};\n")
        for it in e.items:
            nb = it.width // 8
            out.append(wrap_comment(f"{bytes_of(it.offset, nb)}: {it.name}. {it.desc}"))
            if not it.whole:
                q = f"{p}_{it.name.upper()}"
                out.append(f"localparam {q}_LSB = {it.offset * 8}, {q}_W = {it.width};\n")
            for f in it.fields:
                q = f"{p}_{f.name.upper()}"
                note = f"  // {f.desc}" if f.desc and not it.whole else ""
                out.append(f"localparam {q}_LSB = {f.lsb}, {q}_W = {f.width};{note}\n")
    for en in enums:
        p = en.name.upper()
        out.append(f"\n// {en.name} values ({', '.join(en.users)})\n")
        for name, value, _disp, _desc in en.members:
            out.append(f"localparam [{en.width - 1}:0] {p}_{name} = {en.width}'h{value:02x};\n")
    out.append("// verilator lint_on UNUSEDPARAM\n")
    return "".join(out)


# --- Rust --------------------------------------------------------------------------


def camel(name):
    return "".join(w.capitalize() for w in name.lower().split("_"))


def rust_str(s):
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def rust_doc(s, ind=""):
    return "".join(f"{ind}/// {line}\n" for line in wrap(s, 90 - len(ind)))


def wrap(s, n):
    words, lines, cur = s.split(), [], ""
    for w in words:
        if cur and len(cur) + 1 + len(w) > n:
            lines.append(cur)
            cur = w
        else:
            cur = f"{cur} {w}" if cur else w
    return lines + ([cur] if cur else [])


def rust_ty(width):
    if width == 1:
        return "bool"
    for t in (8, 16, 32, 64):
        if width <= t:
            return f"u{t}"
    die(f"a field of {width} bits is wider than u64")


def doc_escape(s):
    """Escape what Markdown would read as a link or emphasis in a doc comment."""
    return re.sub(r"([\[*])", r"\\\1", s)


def rust(rdl, entries, enums):
    out = [header(rdl, "//")]
    out.append(
        "\n"
        "//! The ring entry formats (hw/formats/rnic_formats.md): for each entry its size,\n"
        "//! every item's byte offset and every field's bit position and width, getters\n"
        "//! and setters over the entry's bytes, and the enums of the opcode and status\n"
        "//! values. A bit position counts over the whole entry, little endian: bit\n"
        "//! `8 * b + i` is bit `i` of byte `b`.\n"
        "\n"
        "/// Bits `lsb..lsb + width` of `e` (little endian), `width` at most 64.\n"
        "#[inline]\n"
        "pub fn get_bits(e: &[u8], lsb: usize, width: usize) -> u64 {\n"
        "    let mut v: u128 = 0;\n"
        "    for b in (lsb / 8..(lsb + width).div_ceil(8)).rev() {\n"
        "        v = (v << 8) | u128::from(e[b]);\n"
        "    }\n"
        "    ((v >> (lsb % 8)) & ((1u128 << width) - 1)) as u64\n"
        "}\n"
        "\n"
        "/// Sets bits `lsb..lsb + width` of `e` (little endian) to the low `width`\n"
        "/// bits of `v`, leaving the other bits as they are.\n"
        "#[inline]\n"
        "pub fn set_bits(e: &mut [u8], lsb: usize, width: usize, v: u64) {\n"
        "    let mask = ((1u128 << width) - 1) << (lsb % 8);\n"
        "    let v = (u128::from(v) << (lsb % 8)) & mask;\n"
        "    for (i, b) in (lsb / 8..(lsb + width).div_ceil(8)).enumerate() {\n"
        "        let m = (mask >> (8 * i)) as u8;\n"
        "        e[b] = (e[b] & !m) | (((v >> (8 * i)) as u8) & m);\n"
        "    }\n"
        "}\n"
    )
    for e in entries:
        out.append(f"\n{rust_doc(f'{e.title}, {e.size} bytes, written by the {e.writer}. {e.desc}')}")
        out.append(f"pub mod {e.name} {{\n")
        out.append(f"    /// Bytes of an entry.\n    pub const SIZE: usize = {e.size};\n")
        for it in e.items:
            nb = it.width // 8
            up = it.name.upper()
            desc = f"{bytes_of(it.offset, nb).capitalize()}: {it.name}. {it.desc}"
            out.append(f"\n{rust_doc(doc_escape(desc), '    ')}")
            out.append(f"    pub const {up}_OFFSET: usize = {it.offset};\n")
            fields = [f for f in it.fields] if it.whole else [None] + it.fields
            for f in fields:
                name, lsb, width = (it.name, it.offset * 8, it.width) if f is None else (f.name, f.lsb, f.width)
                q = name.upper()
                ty = rust_ty(width)
                if f is not None and not it.whole:
                    fd = f"{it.name}.{f.short}: bit {f.item_bit} of byte {it.offset}. {f.desc}"
                    out.append(rust_doc(doc_escape(fd), "    "))
                    out.append(
                        f"    pub const {q}: {rust_ty(it.width)} = 1 << {f.item_bit};\n"
                        if width == 1 else ""
                    )
                out.append(f"    pub const {q}_LSB: usize = {lsb};\n")
                out.append(f"    pub const {q}_WIDTH: usize = {width};\n")
                getter = name
                if ty == "bool":
                    get = f"super::get_bits(e, {q}_LSB, {q}_WIDTH) != 0"
                    setv = "u64::from(v)"
                elif ty == "u64":
                    get = f"super::get_bits(e, {q}_LSB, {q}_WIDTH)"
                    setv = "v"
                else:
                    get = f"super::get_bits(e, {q}_LSB, {q}_WIDTH) as {ty}"
                    setv = "u64::from(v)"
                out.append(
                    f"    #[inline]\n"
                    f"    pub fn {getter}(e: &[u8; SIZE]) -> {ty} {{\n        {get}\n    }}\n"
                    f"    #[inline]\n"
                    f"    pub fn set_{getter}(e: &mut [u8; SIZE], v: {ty}) {{\n"
                    f"        super::set_bits(e, {q}_LSB, {q}_WIDTH, {setv});\n    }}\n"
                )
        out.append("}\n")
    for en in enums:
        out.append(rust_enum(en))
    return "".join(out)


def rust_enum(en):
    ty = camel(en.name)
    raw = rust_ty(en.width)
    users = ", ".join(f"`{u}`" for u in en.users)
    kind = (
        "The NIC writes these, so an unknown value is kept in `Other`."
        if en.open
        else "Converted with `as` or [`Self::to_raw`]; [`Self::from_raw`] refuses unknown values."
    )
    has_zero = any(m[1] == 0 for m in en.members)
    derives = "Debug, Clone, Copy, PartialEq, Eq, Hash" + (", Default" if has_zero else "")
    o = ["\n" + rust_doc(f"Values of {users} (`{en.name}` in the RDL). {kind}")]
    o.append(f"#[derive({derives})]\n")
    if not en.open:
        o.append(f"#[repr({raw})]\n")
    o.append(f"pub enum {ty} {{\n")
    for name, value, disp, desc in en.members:
        o.append(rust_doc(doc_escape(desc or f'"{disp}"'), "    "))
        if value == 0:
            o.append("    #[default]\n")
        o.append(f"    {camel(name)}" + ("" if en.open else f" = {value:#04x}") + ",\n")
    if en.open:
        o.append("    /// A value the format does not define (kept, never dropped).\n")
        o.append(f"    Other({raw}),\n")
    o.append("}\n\n")
    o.append(f"impl {ty} {{\n")
    o.append(f"    /// Every defined value, in declaration order.\n    pub const ALL: [Self; {len(en.members)}] = [\n")
    for name, *_ in en.members:
        o.append(f"        Self::{camel(name)},\n")
    o.append("    ];\n\n")
    if en.open:
        o.append("    /// The value read from an entry.\n")
        o.append(f"    pub const fn from_raw(v: {raw}) -> Self {{\n        match v {{\n")
        for name, value, *_ in en.members:
            o.append(f"            {value:#04x} => Self::{camel(name)},\n")
        o.append("            x => Self::Other(x),\n        }\n    }\n\n")
        o.append(f"    /// The value in the entry.\n    pub const fn to_raw(self) -> {raw} {{\n        match self {{\n")
        for name, value, *_ in en.members:
            o.append(f"            Self::{camel(name)} => {value:#04x},\n")
        o.append("            Self::Other(x) => x,\n        }\n    }\n\n")
    else:
        o.append("    /// The value read from an entry; `None` for one the format does not define.\n")
        o.append(f"    pub const fn from_raw(v: {raw}) -> Option<Self> {{\n        match v {{\n")
        for name, value, *_ in en.members:
            o.append(f"            {value:#04x} => Some(Self::{camel(name)}),\n")
        o.append("            _ => None,\n        }\n    }\n\n")
        o.append(f"    /// The value in the entry.\n    pub const fn to_raw(self) -> {raw} {{\n        self as {raw}\n    }}\n\n")
    o.append("    /// The value's name (its `name` in the RDL, else the member's).\n")
    o.append("    pub const fn as_str(self) -> &'static str {\n        match self {\n")
    for name, _v, disp, _d in en.members:
        o.append(f"            Self::{camel(name)} => {rust_str(disp)},\n")
    if en.open:
        o.append('            Self::Other(_) => "unknown",\n')
    o.append("        }\n    }\n}\n")
    return "".join(o)


# --- Markdown ----------------------------------------------------------------------


def md_cell(s):
    return s.replace("|", "\\|")


def markdown(rdl, entries, enums):
    out = [header(rdl, "<!--").rstrip("\n") + " -->\n\n"]
    out.append(
        "# Ring entry formats\n\n"
        "The entries the host and the NIC exchange through memory, little endian.\n"
        "A bit position counts over the whole entry: bit 8*b+i is bit i of byte b\n"
        "(the `_LSB` localparams of `hw/rtl/generated/rnic_formats.vh`, the `*_LSB`\n"
        "constants of `rnic_driver::formats`). Bytes not listed are reserved: the\n"
        "writer leaves them 0 and the reader ignores them.\n"
    )
    for e in entries:
        out.append(f"\n## {e.title} ({e.size} bytes, written by the {e.writer})\n\n{md_cell(e.desc)}\n\n")
        out.append("| bytes | bits | field | description |\n|---|---|---|---|\n")
        for it in e.items:
            nb = it.width // 8
            rng = f"{it.offset * 8 + it.width - 1}:{it.offset * 8}"
            enc = ""
            if it.whole and it.fields[0].enum is not None:
                enc = f" Values: [{it.fields[0].enum.type_name}](#{it.fields[0].enum.type_name})."
            out.append(f"| {bytes_of(it.offset, nb).split()[1]} | {rng} | `{it.name}` | {md_cell(it.desc)}{enc} |\n")
            if not it.whole:
                for f in it.fields:
                    fr = str(f.lsb) if f.width == 1 else f"{f.lsb + f.width - 1}:{f.lsb}"
                    out.append(f"| | {fr} | `{it.name}.{f.short}` | {md_cell(f.desc)} |\n")
    for en in enums:
        out.append(f"\n## {en.name}\n\nValues of {', '.join(f'`{u}`' for u in en.users)}.\n\n")
        out.append("| value | name | description |\n|---|---|---|\n")
        for name, value, disp, desc in en.members:
            d = desc if disp == name else (f'"{disp}". {desc}' if desc else f'"{disp}"')
            out.append(f"| {value} ({value:#04x}) | `{name}` | {md_cell(d)} |\n")
    return "".join(out)


def main(argv):
    if len(argv) != 3 or argv[2] not in ("verilog", "rust", "markdown"):
        sys.exit("usage: generate.py RDL_FILE verilog|rust|markdown > output")
    entries, enums = load(argv[1])
    sys.stdout.write({"verilog": verilog, "rust": rust, "markdown": markdown}[argv[2]](argv[1], entries, enums))


if __name__ == "__main__":
    main(sys.argv)
