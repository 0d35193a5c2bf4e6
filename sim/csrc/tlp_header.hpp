// The generic TLP interface's 128-bit header (DESIGN section 3) as the C
// shims of the Verilator models hand it to Rust: array index = DW number
// (DW0 first, as on the wire), while Verilator's word 0 holds bits 31:0 of
// the port, which is DW3. Shared by sim/rnic-sim and sim/pcie7-shim-sim.

#pragma once

#include <cstdint>

#include "verilated.h"

inline void put_hdr(VlWide<4>& d, const uint32_t* s) {
    d[3] = s[0];
    d[2] = s[1];
    d[1] = s[2];
    d[0] = s[3];
}

inline void get_hdr(const VlWide<4>& d, uint32_t* s) {
    s[0] = d[3];
    s[1] = d[2];
    s[2] = d[1];
    s[3] = d[0];
}
