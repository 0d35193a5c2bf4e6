// Thin C ABI over one Verilated rnic_pcie7_shim model: copy a flat input
// struct onto the ports, run one clock cycle, copy the ports back. No test
// logic lives here; the TRN block model and the checks are Rust
// (src/trn.rs, tests/).
//
// build.rs compiles this file once per DATA_W with
//   SHIM_MODEL      the Verilated class (Vpcie7_w64 / Vpcie7_w128)
//   SHIM_HEADER     its header
//   SHIM_PFX(name)  exported symbol (pcie7_w64_##name)
//   SHIM_WORDS      DATA_W / 32
//
// The structs mirror `PortsIn` / `PortsOut` in src/lib.rs (sizes checked).
// Buses: word i of an array = bits [32i+31:32i]; headers: index = DW number
// (index 0 = bits 127:96).

#include <cstddef>
#include <cstdint>
#include <memory>

#include "verilated.h"
#include "../../csrc/vl_shim_common.hpp"
#include SHIM_HEADER

extern "C" {

struct ShimPortsIn {
    uint32_t trn_rd[4];
    uint32_t tx_cpl_hdr[4];
    uint32_t tx_cpl_data[4];
    uint32_t tx_rd_req_hdr[4];
    uint32_t tx_wr_req_hdr[4];
    uint32_t tx_wr_req_data[4];
    uint32_t tx_cpl_keep;
    uint32_t tx_wr_req_keep;
    uint16_t cfg_msg_data;
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
    uint8_t rx_req_ready;
    uint8_t rx_cpl_ready;
    uint8_t tx_cpl_valid;
    uint8_t tx_cpl_last;
    uint8_t tx_rd_req_valid;
    uint8_t tx_wr_req_valid;
    uint8_t tx_wr_req_last;
    uint8_t msi_vector;
    uint8_t msi_valid;
};

struct ShimPortsOut {
    uint32_t trn_td[4];
    uint32_t rx_req_hdr[4];
    uint32_t rx_req_data[4];
    uint32_t rx_cpl_hdr[4];
    uint32_t rx_cpl_data[4];
    uint32_t rx_req_keep;
    uint32_t rx_cpl_keep;
    uint32_t stat_rx_dropped;
    uint32_t stat_rx_malformed;
    uint32_t stat_rx_discontinued;
    uint32_t stat_msi_dropped;
    uint16_t cfg_requester_id;
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
    uint8_t rx_req_valid;
    uint8_t rx_req_last;
    uint8_t rx_cpl_valid;
    uint8_t rx_cpl_last;
    uint8_t tx_cpl_ready;
    uint8_t tx_rd_req_ready;
    uint8_t tx_wr_req_ready;
    uint8_t msi_ready;
    uint8_t cfg_max_payload;
    uint8_t cfg_max_read_req;
    uint8_t sim_flags;  // bit 0: $finish, bit 1: $error/$stop
};

}  // extern "C"

namespace {

inline void put(QData& d, const uint32_t* s) {
    d = static_cast<QData>(s[0]) | (static_cast<QData>(s[1]) << 32);
}
template <std::size_t N>
inline void put(VlWide<N>& d, const uint32_t* s) {
    for (std::size_t i = 0; i < N; ++i) d[i] = s[i];
}
inline void get(const QData& d, uint32_t* s) {
    s[0] = static_cast<uint32_t>(d);
    s[1] = static_cast<uint32_t>(d >> 32);
}
template <std::size_t N>
inline void get(const VlWide<N>& d, uint32_t* s) {
    for (std::size_t i = 0; i < N; ++i) s[i] = d[i];
}

using Sim = VlSim<SHIM_MODEL>;

inline void set_inputs(SHIM_MODEL* t, const ShimPortsIn* in) {
    t->rst = in->rst;
    put(t->trn_rd, in->trn_rd);
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
    t->rx_req_tlp_ready = in->rx_req_ready;
    t->rx_cpl_tlp_ready = in->rx_cpl_ready;
    put_hdr(t->tx_cpl_tlp_hdr, in->tx_cpl_hdr);
    put(t->tx_cpl_tlp_data, in->tx_cpl_data);
    t->tx_cpl_tlp_keep = in->tx_cpl_keep;
    t->tx_cpl_tlp_valid = in->tx_cpl_valid;
    t->tx_cpl_tlp_last = in->tx_cpl_last;
    put_hdr(t->tx_rd_req_tlp_hdr, in->tx_rd_req_hdr);
    t->tx_rd_req_tlp_valid = in->tx_rd_req_valid;
    put_hdr(t->tx_wr_req_tlp_hdr, in->tx_wr_req_hdr);
    put(t->tx_wr_req_tlp_data, in->tx_wr_req_data);
    t->tx_wr_req_tlp_keep = in->tx_wr_req_keep;
    t->tx_wr_req_tlp_valid = in->tx_wr_req_valid;
    t->tx_wr_req_tlp_last = in->tx_wr_req_last;
    t->msi_vector = in->msi_vector;
    t->msi_valid = in->msi_valid;
}

inline void get_outputs(const SHIM_MODEL* t, ShimPortsOut* o) {
    get(t->trn_td, o->trn_td);
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
    get_hdr(t->rx_req_tlp_hdr, o->rx_req_hdr);
    get(t->rx_req_tlp_data, o->rx_req_data);
    o->rx_req_keep = t->rx_req_tlp_keep;
    o->rx_req_valid = t->rx_req_tlp_valid;
    o->rx_req_last = t->rx_req_tlp_last;
    get_hdr(t->rx_cpl_tlp_hdr, o->rx_cpl_hdr);
    get(t->rx_cpl_tlp_data, o->rx_cpl_data);
    o->rx_cpl_keep = t->rx_cpl_tlp_keep;
    o->rx_cpl_valid = t->rx_cpl_tlp_valid;
    o->rx_cpl_last = t->rx_cpl_tlp_last;
    o->tx_cpl_ready = t->tx_cpl_tlp_ready;
    o->tx_rd_req_ready = t->tx_rd_req_tlp_ready;
    o->tx_wr_req_ready = t->tx_wr_req_tlp_ready;
    o->msi_ready = t->msi_ready;
    o->cfg_max_payload = t->cfg_max_payload;
    o->cfg_max_read_req = t->cfg_max_read_req;
    o->cfg_requester_id = t->cfg_requester_id;
    o->stat_rx_dropped = t->stat_rx_dropped;
    o->stat_rx_malformed = t->stat_rx_malformed;
    o->stat_rx_discontinued = t->stat_rx_discontinued;
    o->stat_msi_dropped = t->stat_msi_dropped;
}

}  // namespace

extern "C" {

std::size_t SHIM_PFX(in_size)() { return sizeof(ShimPortsIn); }
std::size_t SHIM_PFX(out_size)() { return sizeof(ShimPortsOut); }

void* SHIM_PFX(create)(uint32_t seed) {
    Sim* s = vl_sim_create<Sim>(seed, false, "rnic_pcie7_shim");
    s->top->clk = 0;
    return s;
}

void SHIM_PFX(destroy)(void* h) { vl_sim_destroy(static_cast<Sim*>(h)); }

// One clock cycle: inputs applied with clk low, outputs read (the values the
// rising edge samples), then the rising edge.
void SHIM_PFX(step)(void* h, const ShimPortsIn* in, ShimPortsOut* out) {
    Sim* s = static_cast<Sim*>(h);
    s->enter();
    SHIM_MODEL* t = s->top.get();
    set_inputs(t, in);
    t->clk = 0;
    t->eval();
    get_outputs(t, out);
    t->clk = 1;
    t->eval();
    out->sim_flags = sim_flags(*s->ctx);
}

}  // extern "C"
