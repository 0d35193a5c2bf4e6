#!/usr/bin/env python3
"""Emit a static Rust table of every register in a SystemRDL address map.

Used by hw/regs/generate.sh to produce host/rnic-regs/src/generated_table.rs:
for each register block (each top-level child of the address map) its
offset, size, block type (the reset value of its `blk_type` register, if it
has one) and version, and for each register its offsets, access and fields
with bit ranges, access, reset value and description. Host tools (`rnic regs`)
use it to dump BAR0 with field names, and the discovery walker uses the block
types to name the blocks it finds.

The table types (BlockDesc, RegDesc, FieldDesc, Access) are defined by hand in
host/rnic-regs/src/table.rs; this script only writes data.

Usage: gen_table.py RDL_FILE [TOP] > generated_table.rs
The RDL path is printed into the header as given, so pass it relative to the
repository root to keep the output independent of where the checkout lives.
"""

import sys

from systemrdl import RDLCompiler
from systemrdl.node import AddrmapNode, FieldNode, RegfileNode, RegNode
from systemrdl.rdltypes import AccessType

ACCESS = {
    AccessType.na: "Access::Na",
    AccessType.r: "Access::R",
    AccessType.w: "Access::W",
    AccessType.rw: "Access::Rw",
    AccessType.w1: "Access::W1",
    AccessType.rw1: "Access::Rw1",
}


def rust_str(s):
    """A Rust string literal for s (whitespace collapsed to single spaces)."""
    s = " ".join((s or "").split())
    out = []
    for ch in s:
        if ch == "\\":
            out.append("\\\\")
        elif ch == '"':
            out.append('\\"')
        elif 0x20 <= ord(ch) < 0x7F:
            out.append(ch)
        else:
            out.append("\\u{%x}" % ord(ch))
    return '"' + "".join(out) + '"'


def rust_opt_str(v):
    return "None" if v is None else "Some(%s)" % rust_str(v)


def rust_opt_int(v):
    return "None" if v is None else "Some(%#x)" % v


def field_reset(f: FieldNode):
    r = f.get_property("reset")
    # A reset may also be a reference to another signal/field: not a constant.
    return r if isinstance(r, int) else None


def side_effect(v):
    # OnReadType / OnWriteType enum members, e.g. OnWriteType.woclr -> "woclr"
    return None if v is None else v.name


def reg_reset(r: RegNode):
    """The register's reset value if every field has a constant reset."""
    val = 0
    for f in r.fields():
        fr = field_reset(f)
        if fr is None:
            return None
        val |= fr << f.lsb
    return val


def emit_field(f: FieldNode, ind):
    return (
        f"{ind}FieldDesc {{\n"
        f"{ind}    name: {rust_str(f.inst_name)},\n"
        f"{ind}    msb: {f.msb},\n"
        f"{ind}    lsb: {f.lsb},\n"
        f"{ind}    sw: {ACCESS[f.get_property('sw')]},\n"
        f"{ind}    hw: {ACCESS[f.get_property('hw')]},\n"
        f"{ind}    reset: {rust_opt_int(field_reset(f))},\n"
        f"{ind}    onread: {rust_opt_str(side_effect(f.get_property('onread')))},\n"
        f"{ind}    onwrite: {rust_opt_str(side_effect(f.get_property('onwrite')))},\n"
        f"{ind}    swmod: {'true' if f.get_property('swmod') else 'false'},\n"
        f"{ind}    desc: {rust_str(f.get_property('desc'))},\n"
        f"{ind}}},\n"
    )


def emit_reg(r: RegNode, block, ind):
    fields = "".join(emit_field(f, ind + "        ") for f in r.fields())
    return (
        f"{ind}RegDesc {{\n"
        f"{ind}    name: {rust_str(r.get_rel_path(block))},\n"
        f"{ind}    offset: {r.absolute_address:#x},\n"
        f"{ind}    block_offset: {r.absolute_address - block.absolute_address:#x},\n"
        f"{ind}    width: {r.get_property('regwidth')},\n"
        f"{ind}    readable: {'true' if r.has_sw_readable else 'false'},\n"
        f"{ind}    writable: {'true' if r.has_sw_writable else 'false'},\n"
        f"{ind}    reset: {rust_opt_int(reg_reset(r))},\n"
        f"{ind}    desc: {rust_str(r.get_property('desc'))},\n"
        f"{ind}    fields: &[\n{fields}{ind}    ],\n"
        f"{ind}}},\n"
    )


def block_word(block, reg_name, field_name):
    """Reset value of block.<reg_name>.<field_name>, if it exists."""
    for r in block.registers(unroll=True):
        if r.inst_name == reg_name:
            f = r.get_child_by_name(field_name)
            if f is not None:
                return field_reset(f)
    return None


def main(argv):
    if len(argv) not in (2, 3):
        sys.exit("usage: gen_table.py RDL_FILE [TOP] > generated_table.rs")
    rdl_path = argv[1]
    rdlc = RDLCompiler()
    rdlc.compile_file(rdl_path)
    root = rdlc.elaborate(top_def_name=argv[2] if len(argv) == 3 else None)
    top = root.top

    blocks = []
    consts = []
    for b in top.children(unroll=True):
        if not isinstance(b, (RegfileNode, AddrmapNode)):
            sys.exit(
                f"gen_table.py: {b.get_path()}: only register blocks (regfile or "
                "addrmap) may sit at the top of the map"
            )
        name = b.inst_name if not b.is_array else f"{b.inst_name}{list(b.current_idx)}"
        btype = block_word(b, "blk_type", "id")
        bver = block_word(b, "blk_version", "version")
        if btype is not None:
            consts.append(
                f"/// Block type of `{name}` (its `blk_type` reset value).\n"
                f"pub const BLOCK_TYPE_{name.upper()}: u32 = {btype:#010x};\n"
            )
        regs = "".join(
            emit_reg(r, b, "            ") for r in b.descendants(unroll=True) if isinstance(r, RegNode)
        )
        blocks.append(
            "    BlockDesc {\n"
            f"        name: {rust_str(name)},\n"
            f"        type_name: {rust_str(b.type_name)},\n"
            f"        offset: {b.absolute_address:#x},\n"
            f"        size: {b.size:#x},\n"
            f"        block_type: {rust_opt_int(btype)},\n"
            f"        version: {rust_opt_int(bver)},\n"
            f"        desc: {rust_str(b.get_property('desc'))},\n"
            f"        regs: &[\n{regs}        ],\n"
            "    },\n"
        )

    out = sys.stdout
    out.write(
        f"// Generated by hw/regs/generate.sh (hw/regs/gen_table.py) from {rdl_path}. Do not edit.\n"
        "\n"
        "//! Every register of BAR0 as static data, generated from the SystemRDL map.\n"
        "\n"
        "use crate::table::{Access, BlockDesc, FieldDesc, RegDesc};\n"
        "\n"
        "/// The SystemRDL file this table was generated from.\n"
        f"pub const RDL_SOURCE: &str = {rust_str(rdl_path)};\n"
        "\n"
        "/// Name of the top-level address map.\n"
        f"pub const TOP_NAME: &str = {rust_str(top.inst_name)};\n"
        "\n"
        "/// Bytes spanned by the address map (BAR0 must be at least this large).\n"
        f"pub const MAP_SIZE: u64 = {top.size:#x};\n"
        "\n"
        + "\n".join(consts)
        + "\n"
        "/// All register blocks, in address order.\n"
        "pub static BLOCKS: &[BlockDesc] = &[\n" + "".join(blocks) + "];\n"
    )


if __name__ == "__main__":
    main(sys.argv)
