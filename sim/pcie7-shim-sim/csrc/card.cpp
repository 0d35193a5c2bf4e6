// Thin C ABI over the Verilated card datapath (boards/artix7-pcie/rnic_artix7_datapath.v: shim ->
// clock crossing -> rnic_core, 64-bit TRN): copy a flat input struct onto
// the ports, run one step, copy the ports back. The step's rising edges are
// those of the edge mask (bit 0 pcie_clk, bit 1 core_clk; both when the two
// clocks' edges coincide), as rtl-blocks-sim steps axis_async_fifo. No test
// logic lives here: the TRN block model and the checks are Rust
// (src/card.rs, tests/card_datapath.rs).
//
// build.rs compiles this file once per variant of the datapath (CLK_MHZ 62:
// the crossing, CLK_MHZ 125: direct) with CARD_MODEL / CARD_HEADER set to
// the Verilated class and its header and CARD_PFX(name) to the exported
// symbol (card_x_##name, card_d_##name). The structs mirror `CardIn` / `CardOut`
// in src/card.rs (sizes checked). trn_rd / trn_td: word i = bits
// [32i+31:32i].

#include <cstddef>
#include <cstdint>

#include "verilated.h"
#include "../../csrc/vl_shim_common.hpp"
#include CARD_HEADER

extern "C" {

struct CardIn {
    uint32_t trn_rd[2];
    uint16_t cfg_msg_data;
    uint8_t edges;  // bit 0: pcie_clk rises, bit 1: core_clk rises
    uint8_t rst;
    uint8_t trn_rrem;
    uint8_t trn_rsof;
    uint8_t trn_reof;
    uint8_t trn_rsrc_rdy;
    uint8_t trn_rbar_hit;
    uint8_t trn_rerrfwd;
    uint8_t trn_rsrc_dsc;
    uint8_t trn_tdst_rdy;
    uint8_t trn_tbuf_av;
    uint8_t trn_tcfg_req;
    uint8_t trn_lnk_up;
    uint8_t cfg_interrupt_rdy;
    uint8_t cfg_interrupt_msienable;
    uint8_t cfg_interrupt_mmenable;
    uint8_t cfg_dev_control_max_payload;
    uint8_t cfg_dev_control_max_read_req;
    uint8_t cfg_msg_received;
};

struct CardOut {
    uint32_t trn_td[2];
    uint8_t trn_rdst_rdy;
    uint8_t trn_trem;
    uint8_t trn_tsof;
    uint8_t trn_teof;
    uint8_t trn_tsrc_rdy;
    uint8_t trn_tsrc_dsc;
    uint8_t trn_tstr;
    uint8_t trn_terrfwd;
    uint8_t trn_tecrc_gen;
    uint8_t trn_tcfg_gnt;
    uint8_t cfg_interrupt;
    uint8_t cfg_interrupt_di;
    uint8_t sim_flags;  // bit 0: $finish, bit 1: $error/$stop
};

}  // extern "C"

namespace {

using Sim = VlSim<CARD_MODEL>;

inline void set_inputs(CARD_MODEL* t, const CardIn* in) {
    t->rst = in->rst;
    t->trn_rd = static_cast<QData>(in->trn_rd[0]) | (static_cast<QData>(in->trn_rd[1]) << 32);
    t->trn_rrem = in->trn_rrem;
    t->trn_rsof = in->trn_rsof;
    t->trn_reof = in->trn_reof;
    t->trn_rsrc_rdy = in->trn_rsrc_rdy;
    t->trn_rbar_hit = in->trn_rbar_hit;
    t->trn_rerrfwd = in->trn_rerrfwd;
    t->trn_rsrc_dsc = in->trn_rsrc_dsc;
    t->trn_tdst_rdy = in->trn_tdst_rdy;
    t->trn_tbuf_av = in->trn_tbuf_av;
    t->trn_tcfg_req = in->trn_tcfg_req;
    t->trn_lnk_up = in->trn_lnk_up;
    t->cfg_interrupt_rdy = in->cfg_interrupt_rdy;
    t->cfg_interrupt_msienable = in->cfg_interrupt_msienable;
    t->cfg_interrupt_mmenable = in->cfg_interrupt_mmenable;
    t->cfg_dev_control_max_payload = in->cfg_dev_control_max_payload;
    t->cfg_dev_control_max_read_req = in->cfg_dev_control_max_read_req;
    t->cfg_msg_data = in->cfg_msg_data;
    t->cfg_msg_received = in->cfg_msg_received;
}

inline void get_outputs(const CARD_MODEL* t, CardOut* o) {
    o->trn_td[0] = static_cast<uint32_t>(t->trn_td);
    o->trn_td[1] = static_cast<uint32_t>(t->trn_td >> 32);
    o->trn_rdst_rdy = t->trn_rdst_rdy;
    o->trn_trem = t->trn_trem;
    o->trn_tsof = t->trn_tsof;
    o->trn_teof = t->trn_teof;
    o->trn_tsrc_rdy = t->trn_tsrc_rdy;
    o->trn_tsrc_dsc = t->trn_tsrc_dsc;
    o->trn_tstr = t->trn_tstr;
    o->trn_terrfwd = t->trn_terrfwd;
    o->trn_tecrc_gen = t->trn_tecrc_gen;
    o->trn_tcfg_gnt = t->trn_tcfg_gnt;
    o->cfg_interrupt = t->cfg_interrupt;
    o->cfg_interrupt_di = t->cfg_interrupt_di;
}

}  // namespace

extern "C" {

std::size_t CARD_PFX(in_size)() { return sizeof(CardIn); }
std::size_t CARD_PFX(out_size)() { return sizeof(CardOut); }

void* CARD_PFX(create)(uint32_t seed) {
    Sim* s = vl_sim_create<Sim>(seed, false, "rnic_artix7_datapath");
    s->top->pcie_clk = 0;
    s->top->core_clk = 0;
    // the card's flash data pins idle high (pull-ups), boot slot 0
    s->top->flash_io_i = 0xf;
    s->top->boot_slot = 0;
    s->top->boot_fallback = 0;
    return s;
}

void CARD_PFX(destroy)(void* h) { vl_sim_destroy(static_cast<Sim*>(h)); }

// One step: inputs applied with both clocks low, outputs read (the values
// the coming edges sample), then the rising edges of the mask together.
void CARD_PFX(step)(void* h, const CardIn* in, CardOut* out) {
    Sim* s = static_cast<Sim*>(h);
    s->enter();
    CARD_MODEL* t = s->top.get();
    set_inputs(t, in);
    t->pcie_clk = 0;
    t->core_clk = 0;
    t->eval();
    get_outputs(t, out);
    t->pcie_clk = in->edges & 1;
    t->core_clk = (in->edges >> 1) & 1;
    t->eval();
    out->sim_flags = sim_flags(*s->ctx);
}

}  // extern "C"
