// C ABI over one Verilated `rnic_core` model.
//
// This file is compiled once per model. build.rs generates a tiny wrapper
// per DATA_W that defines
//   RNIC_MODEL      the Verilated class (e.g. Vrnic_core_w64)
//   RNIC_HEADER     its header ("Vrnic_core_w64.h")
//   RNIC_PFX(name)  the exported symbol name (e.g. rnic_w64_##name)
// and then includes this file.
//
// The port structs below are mirrored by `#[repr(C)]` structs in
// src/ports.rs; `rnic_*_in_size()` / `rnic_*_out_size()` let Rust check that
// both sides agree.
//
// Clocking: one `step` is one clock cycle:
//   set inputs, clk = 0, eval      (time 2n: inputs settle, combinational outputs valid)
//   read outputs                    (these are the values sampled by the rising edge)
//   clk = 1, eval                   (time 2n+1: rising edge)
// The falling edge of cycle n is merged with the input change of cycle n+1,
// which is legal because the design only uses the rising edge.

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>

#include "verilated.h"
#include "verilated_fst_c.h"
#include "../../csrc/vl_shim_common.hpp"
#include RNIC_HEADER

extern "C" {

struct RnicPortsIn {
    // Ethernet RX (fabric -> NIC): byte i of the beat = tdata bits [8i+7:8i],
    // tkeep bit i = byte i valid (DATA_W/8 bits used).
    uint64_t s_axis_rx_tkeep;
    uint32_t rx_req_hdr[4];  // [0] = DW0 (header bits 127:96) ... [3] = DW3
    uint32_t rx_req_data[16];
    uint32_t rx_cpl_hdr[4];
    uint32_t rx_cpl_data[16];
    uint32_t rx_req_keep;
    uint32_t rx_cpl_keep;
    uint16_t cfg_requester_id;
    uint8_t rst;
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
    uint8_t s_axis_rx_tdata[64];
    uint8_t s_axis_rx_tvalid;
    uint8_t s_axis_rx_tlast;
    uint8_t s_axis_rx_tuser;
    uint8_t m_axis_tx_tready;
    // Configuration flash and boot status (board side).
    uint8_t flash_io_i;       // bits 3:0 = IO3..IO0 as the pads see them
    uint8_t boot_slot;
    uint8_t boot_fallback;
};

struct RnicPortsOut {
    // Ethernet TX (NIC -> fabric), same byte layout as s_axis_rx.
    uint64_t m_axis_tx_tkeep;
    uint32_t tx_cpl_hdr[4];
    uint32_t tx_cpl_data[16];
    uint32_t tx_rd_req_hdr[4];
    uint32_t tx_wr_req_hdr[4];
    uint32_t tx_wr_req_data[16];
    uint32_t tx_cpl_keep;
    uint32_t tx_wr_req_keep;
    uint8_t rx_req_ready;
    uint8_t tx_cpl_valid;
    uint8_t tx_cpl_last;
    uint8_t tx_rd_req_valid;
    uint8_t rx_cpl_ready;
    uint8_t tx_wr_req_valid;
    uint8_t tx_wr_req_last;
    uint8_t msi_valid;
    uint8_t msi_vector;
    uint8_t m_axis_tx_tdata[64];
    uint8_t m_axis_tx_tvalid;
    uint8_t m_axis_tx_tlast;
    uint8_t m_axis_tx_tuser;
    uint8_t s_axis_rx_tready;
    // Not a port: bit 0 = the RTL executed $finish, bit 1 = $stop/$error/$fatal.
    uint8_t sim_flags;
    // Configuration flash pins and the reconfiguration request.
    uint8_t flash_sck;
    uint8_t flash_cs_n;
    uint8_t flash_io_o;
    uint8_t flash_io_oe;
    uint8_t reconfig_req;
};

}  // extern "C"

namespace {

// ---- bus copies: C arrays <-> Verilator port types -------------------------

// Payload: word i of the array = bits [32i+31:32i] of the bus.
inline void put_data(QData& d, const uint32_t* s) {
    d = static_cast<QData>(s[0]) | (static_cast<QData>(s[1]) << 32);
}
inline void put_data(IData& d, const uint32_t* s) { d = s[0]; }
template <std::size_t N>
inline void put_data(VlWide<N>& d, const uint32_t* s) {
    for (std::size_t i = 0; i < N; ++i) d[i] = s[i];
}
inline void get_data(const QData& d, uint32_t* s) {
    s[0] = static_cast<uint32_t>(d);
    s[1] = static_cast<uint32_t>(d >> 32);
}
inline void get_data(const IData& d, uint32_t* s) { s[0] = d; }
template <std::size_t N>
inline void get_data(const VlWide<N>& d, uint32_t* s) {
    for (std::size_t i = 0; i < N; ++i) s[i] = d[i];
}

// Byte lanes (AXI-Stream): byte i of the array = bits [8i+7:8i] of the bus.
inline void put_bytes(QData& d, const uint8_t* s) {
    QData v = 0;
    for (int i = 0; i < 8; ++i) v |= static_cast<QData>(s[i]) << (8 * i);
    d = v;
}
inline void put_bytes(IData& d, const uint8_t* s) {
    d = static_cast<IData>(s[0]) | (static_cast<IData>(s[1]) << 8) |
        (static_cast<IData>(s[2]) << 16) | (static_cast<IData>(s[3]) << 24);
}
template <std::size_t N>
inline void put_bytes(VlWide<N>& d, const uint8_t* s) {
    for (std::size_t i = 0; i < N; ++i) {
        const uint8_t* b = s + 4 * i;
        d[i] = static_cast<EData>(b[0]) | (static_cast<EData>(b[1]) << 8) |
               (static_cast<EData>(b[2]) << 16) | (static_cast<EData>(b[3]) << 24);
    }
}
inline void get_bytes(const QData& d, uint8_t* s) {
    for (int i = 0; i < 8; ++i) s[i] = static_cast<uint8_t>(d >> (8 * i));
}
inline void get_bytes(const IData& d, uint8_t* s) {
    for (int i = 0; i < 4; ++i) s[i] = static_cast<uint8_t>(d >> (8 * i));
}
template <std::size_t N>
inline void get_bytes(const VlWide<N>& d, uint8_t* s) {
    for (std::size_t i = 0; i < N; ++i) {
        for (int k = 0; k < 4; ++k) s[4 * i + k] = static_cast<uint8_t>(d[i] >> (8 * k));
    }
}


struct Sim : VlSim<RNIC_MODEL> {
    std::unique_ptr<VerilatedFstC> fst;
    uint64_t time = 0;
};

inline void set_inputs(RNIC_MODEL* t, const RnicPortsIn* in) {
    t->rst = in->rst;
    put_hdr(t->rx_req_tlp_hdr, in->rx_req_hdr);
    put_data(t->rx_req_tlp_data, in->rx_req_data);
    t->rx_req_tlp_keep = in->rx_req_keep;
    t->rx_req_tlp_valid = in->rx_req_valid;
    t->rx_req_tlp_last = in->rx_req_last;
    t->tx_cpl_tlp_ready = in->tx_cpl_ready;
    t->tx_rd_req_tlp_ready = in->tx_rd_req_ready;
    put_hdr(t->rx_cpl_tlp_hdr, in->rx_cpl_hdr);
    put_data(t->rx_cpl_tlp_data, in->rx_cpl_data);
    t->rx_cpl_tlp_keep = in->rx_cpl_keep;
    t->rx_cpl_tlp_valid = in->rx_cpl_valid;
    t->rx_cpl_tlp_last = in->rx_cpl_last;
    t->tx_wr_req_tlp_ready = in->tx_wr_req_ready;
    t->msi_ready = in->msi_ready;
    t->cfg_max_payload = in->cfg_max_payload;
    t->cfg_max_read_req = in->cfg_max_read_req;
    t->cfg_requester_id = in->cfg_requester_id;
    // Data and keep only matter with valid (held otherwise: saves copies
    // on idle cycles).
    if (in->s_axis_rx_tvalid) {
        put_bytes(t->s_axis_rx_tdata, in->s_axis_rx_tdata);
        t->s_axis_rx_tkeep = in->s_axis_rx_tkeep;
    }
    t->s_axis_rx_tvalid = in->s_axis_rx_tvalid;
    t->s_axis_rx_tlast = in->s_axis_rx_tlast;
    t->s_axis_rx_tuser = in->s_axis_rx_tuser;
    t->m_axis_tx_tready = in->m_axis_tx_tready;
    t->flash_io_i = in->flash_io_i;
    t->boot_slot = in->boot_slot;
    t->boot_fallback = in->boot_fallback;
}

inline void get_outputs(const RNIC_MODEL* t, RnicPortsOut* out) {
    out->rx_req_ready = t->rx_req_tlp_ready;
    get_hdr(t->tx_cpl_tlp_hdr, out->tx_cpl_hdr);
    get_data(t->tx_cpl_tlp_data, out->tx_cpl_data);
    out->tx_cpl_keep = t->tx_cpl_tlp_keep;
    out->tx_cpl_valid = t->tx_cpl_tlp_valid;
    out->tx_cpl_last = t->tx_cpl_tlp_last;
    get_hdr(t->tx_rd_req_tlp_hdr, out->tx_rd_req_hdr);
    out->tx_rd_req_valid = t->tx_rd_req_tlp_valid;
    out->rx_cpl_ready = t->rx_cpl_tlp_ready;
    get_hdr(t->tx_wr_req_tlp_hdr, out->tx_wr_req_hdr);
    get_data(t->tx_wr_req_tlp_data, out->tx_wr_req_data);
    out->tx_wr_req_keep = t->tx_wr_req_tlp_keep;
    out->tx_wr_req_valid = t->tx_wr_req_tlp_valid;
    out->tx_wr_req_last = t->tx_wr_req_tlp_last;
    out->msi_valid = t->msi_valid;
    out->msi_vector = t->msi_vector;
    // m_axis_tx data/keep are copied only with valid (stale otherwise).
    out->m_axis_tx_tvalid = t->m_axis_tx_tvalid;
    if (out->m_axis_tx_tvalid) {
        get_bytes(t->m_axis_tx_tdata, out->m_axis_tx_tdata);
        out->m_axis_tx_tkeep = t->m_axis_tx_tkeep;
    }
    out->m_axis_tx_tlast = t->m_axis_tx_tlast;
    out->m_axis_tx_tuser = t->m_axis_tx_tuser;
    out->s_axis_rx_tready = t->s_axis_rx_tready;
    out->flash_sck = t->flash_sck;
    out->flash_cs_n = t->flash_cs_n;
    out->flash_io_o = t->flash_io_o;
    out->flash_io_oe = t->flash_io_oe;
    out->reconfig_req = t->reconfig_req;
}

// Make this model's context the thread's one before running it: runtime
// services ($stop, $error, $display, ...) go through the thread context, and
// another model may have been created (or destroyed) on this thread since.


inline void eval_dump(Sim* s) {
    s->top->eval();
    if (s->fst) s->fst->dump(s->time);
}

}  // namespace

extern "C" {

std::size_t RNIC_PFX(in_size)() { return sizeof(RnicPortsIn); }
std::size_t RNIC_PFX(out_size)() { return sizeof(RnicPortsOut); }

// Offsets of the fields Rust checks besides the sizes (same order as
// `PORT_OFFSETS` in src/verilated.rs). Returns how many were written.
std::size_t RNIC_PFX(port_offsets)(std::size_t* o, std::size_t n) {
    const std::size_t v[] = {
        offsetof(RnicPortsIn, s_axis_rx_tkeep),
        offsetof(RnicPortsIn, rx_req_hdr),
        offsetof(RnicPortsIn, cfg_requester_id),
        offsetof(RnicPortsIn, cfg_max_read_req),
        offsetof(RnicPortsIn, s_axis_rx_tdata),
        offsetof(RnicPortsIn, m_axis_tx_tready),
        offsetof(RnicPortsOut, m_axis_tx_tkeep),
        offsetof(RnicPortsOut, tx_cpl_hdr),
        offsetof(RnicPortsOut, msi_vector),
        offsetof(RnicPortsOut, m_axis_tx_tdata),
        offsetof(RnicPortsOut, s_axis_rx_tready),
        offsetof(RnicPortsOut, sim_flags),
        offsetof(RnicPortsIn, flash_io_i),
        offsetof(RnicPortsOut, flash_sck),
        offsetof(RnicPortsOut, reconfig_req),
    };
    std::size_t k = sizeof(v) / sizeof(v[0]);
    if (n < k) k = n;
    for (std::size_t i = 0; i < k; ++i) o[i] = v[i];
    return sizeof(v) / sizeof(v[0]);
}

// Create a model. `seed` seeds `--x-initial unique` (randReset(2)): the
// initial value of every register comes from it. Returns null on failure.
void* RNIC_PFX(create)(uint32_t seed) {
    Sim* s = vl_sim_create<Sim>(seed, true, "rnic_core");
    s->top->clk = 0;
    return s;
}

void RNIC_PFX(destroy)(void* h) {
    Sim* s = static_cast<Sim*>(h);
    if (s && s->fst) {
        s->enter();
        s->fst->close();
        s->fst.reset();
    }
    vl_sim_destroy(s);
}

void RNIC_PFX(set_inputs)(void* h, const RnicPortsIn* in) {
    set_inputs(static_cast<Sim*>(h)->top.get(), in);
}

void RNIC_PFX(get_outputs)(void* h, RnicPortsOut* out) {
    Sim* s = static_cast<Sim*>(h);
    get_outputs(s->top.get(), out);
    out->sim_flags = sim_flags(*s->ctx);
}

void RNIC_PFX(eval)(void* h) {
    Sim* s = static_cast<Sim*>(h);
    s->enter();
    s->top->eval();
}

// One full clock cycle with the current inputs: clk 0->1 (eval), 1->0 (eval).
void RNIC_PFX(tick)(void* h) {
    Sim* s = static_cast<Sim*>(h);
    s->enter();
    s->top->clk = 1;
    eval_dump(s);
    s->time++;
    s->top->clk = 0;
    eval_dump(s);
    s->time++;
}

// One clock cycle, see the comment at the top of the file.
void RNIC_PFX(step)(void* h, const RnicPortsIn* in, RnicPortsOut* out) {
    Sim* s = static_cast<Sim*>(h);
    s->enter();
    RNIC_MODEL* t = s->top.get();
    set_inputs(t, in);
    t->clk = 0;
    eval_dump(s);
    s->time++;
    get_outputs(t, out);
    t->clk = 1;
    eval_dump(s);
    s->time++;
    out->sim_flags = sim_flags(*s->ctx);
}

// Open an FST waveform. Returns 0 on success.
int RNIC_PFX(trace_open)(void* h, const char* path) {
    Sim* s = static_cast<Sim*>(h);
    s->enter();
    if (s->fst) {
        s->fst->close();
        s->fst.reset();
    }
    std::unique_ptr<VerilatedFstC> fst(new VerilatedFstC);
    s->top->trace(fst.get(), 99);
    fst->open(path);
    if (!fst->isOpen()) return -1;
    s->fst = std::move(fst);
    return 0;
}

void RNIC_PFX(trace_close)(void* h) {
    Sim* s = static_cast<Sim*>(h);
    if (s->fst) {
        s->fst->close();
        s->fst.reset();
    }
}

void RNIC_PFX(trace_flush)(void* h) {
    Sim* s = static_cast<Sim*>(h);
    if (s->fst) s->fst->flush();
}

// Dump the current signal values at `time` (for harnesses that drive the
// model with set_inputs/eval instead of step/tick). `time` must not go back.
void RNIC_PFX(trace_dump)(void* h, uint64_t time) {
    Sim* s = static_cast<Sim*>(h);
    if (s->fst) s->fst->dump(time);
    if (time > s->time) s->time = time;
}

// Simulation time in trace units (2 per clock cycle).
uint64_t RNIC_PFX(time)(void* h) { return static_cast<Sim*>(h)->time; }

}  // extern "C"
