// Thin C ABI over the Verilated tb_gtp7 (rtl/tb_gtp7.v: rnic_gtp7_pipe with
// the behavioural GTPE2 models): copy a flat input struct onto the ports,
// run one PIPE clock period, copy the ports back. The period is cut into
// integer time units: the PIPE clock's half period is 20000 units, the
// local bit clock's 1000 (20 bits per PIPE cycle: 2.5 Gb/s against
// 125 MHz) and the link partner's `far_half` units (1000 = same rate; 995 =
// 0.5 % faster). No test logic lives here; the checks are Rust (tests/).
//
// The structs mirror `PortsIn` / `PortsOut` in src/lib.rs (sizes checked).

#include <cstddef>
#include <cstdint>
#include <memory>

#include "verilated.h"
#include "../../csrc/vl_shim_common.hpp"
#include "Vtb_gtp7.h"

extern "C" {

struct GtpPortsIn {
    uint16_t tx_data[4];
    uint32_t far_half;
    uint8_t tx_charisk[4];
    uint8_t tx_powerdown[4];
    uint8_t lane_mode[4];
    uint8_t rst;
    uint8_t far_en;
    uint8_t tx_elecidle;     // bit per lane
    uint8_t tx_compliance;   // bit per lane
    uint8_t tx_rcvrdet;
    uint8_t tx_rate;
    uint8_t rx_polarity;     // bit per lane
    uint8_t pad;
};

struct GtpPortsOut {
    uint16_t rx_data[4];
    uint8_t rx_charisk[4];
    uint8_t rx_status[4];
    uint8_t rx_valid;
    uint8_t rx_phystatus;
    uint8_t rx_elecidle;
    uint8_t rx_chanisaligned;
    uint8_t phy_ready;
    uint8_t pll_lock;
    uint8_t reset_state;
    uint8_t reset_restarts;
    uint8_t rate_error;
    uint8_t pll_reset;
    uint8_t gt_txreset;
    uint8_t gt_rxreset;
    uint8_t user_rdy;
    uint8_t tx_resetdone;
    uint8_t rx_resetdone;
    uint8_t viol_early_reset;
    uint8_t viol_txbuf;
    uint8_t viol_rxpd;
    uint8_t viol_detect_p0;
    uint8_t gt_txchardispmode0;
    uint8_t gt_rxvalid;
    uint8_t flags;
    uint8_t pad[2];
};

struct GtpSim {
    std::unique_ptr<VerilatedContext> ctx;
    std::unique_ptr<Vtb_gtp7> top;
    int64_t t_pipe = 0;   // time of the next PIPE clock edge
    int64_t t_bit = 0;
    int64_t t_far = 0;
    int64_t now = 0;
};

size_t gtp7_in_size() { return sizeof(GtpPortsIn); }
size_t gtp7_out_size() { return sizeof(GtpPortsOut); }

void* gtp7_new(uint32_t seed) {
    auto* s = new GtpSim;
    s->ctx = new_context(seed, false);
    s->top.reset(new Vtb_gtp7(s->ctx.get()));
    s->top->clk = 0;
    s->top->bit_clk = 0;
    s->top->far_clk = 0;
    s->top->rst = 1;
    s->top->eval();
    return s;
}

void gtp7_free(void* p) {
    auto* s = static_cast<GtpSim*>(p);
    s->top->final();
    delete s;
}

static void put(Vtb_gtp7* t, const GtpPortsIn* in) {
    t->rst = in->rst;
    t->far_en = in->far_en;
    uint64_t d = 0;
    uint8_t k = 0, pd = 0, mode = 0;
    for (int i = 0; i < 4; i++) {
        d |= static_cast<uint64_t>(in->tx_data[i]) << (16 * i);
        k |= (in->tx_charisk[i] & 3) << (2 * i);
        pd |= (in->tx_powerdown[i] & 3) << (2 * i);
        mode |= (in->lane_mode[i] & 3) << (2 * i);
    }
    t->pipe_tx_data = d;
    t->pipe_tx_charisk = k;
    t->pipe_tx_powerdown = pd;
    t->lane_mode = mode;
    t->pipe_tx_elecidle = in->tx_elecidle & 15;
    t->pipe_tx_compliance = in->tx_compliance & 15;
    t->pipe_tx_rcvrdet = in->tx_rcvrdet & 1;
    t->pipe_tx_rate = in->tx_rate & 1;
    t->pipe_rx_polarity = in->rx_polarity & 15;
}

static void get(const GtpSim* s, GtpPortsOut* o) {
    const Vtb_gtp7* t = s->top.get();
    for (int i = 0; i < 4; i++) {
        o->rx_data[i] = static_cast<uint16_t>(t->pipe_rx_data >> (16 * i));
        o->rx_charisk[i] = (t->pipe_rx_charisk >> (2 * i)) & 3;
        o->rx_status[i] = (t->pipe_rx_status >> (3 * i)) & 7;
    }
    o->rx_valid = t->pipe_rx_valid;
    o->rx_phystatus = t->pipe_rx_phystatus;
    o->rx_elecidle = t->pipe_rx_elecidle;
    o->rx_chanisaligned = t->pipe_rx_chanisaligned;
    o->phy_ready = t->phy_ready;
    o->pll_lock = t->pll_lock;
    o->reset_state = t->reset_state;
    o->reset_restarts = t->reset_restarts;
    o->rate_error = t->rate_error;
    o->pll_reset = t->obs_pll_reset;
    o->gt_txreset = t->obs_gt_txreset;
    o->gt_rxreset = t->obs_gt_rxreset;
    o->user_rdy = t->obs_user_rdy;
    o->tx_resetdone = t->obs_tx_resetdone;
    o->rx_resetdone = t->obs_rx_resetdone;
    o->viol_early_reset = t->obs_viol_early_reset;
    o->viol_txbuf = t->obs_viol_txbuf;
    o->viol_rxpd = t->obs_viol_rxpd;
    o->viol_detect_p0 = t->obs_viol_detect_p0;
    o->gt_txchardispmode0 = t->obs_gt_txchardispmode0;
    o->gt_rxvalid = t->obs_gt_rxvalid;
    o->flags = sim_flags(*s->ctx);
}

// One PIPE clock period, starting at its rising edge.
void gtp7_tick(void* p, const GtpPortsIn* in, GtpPortsOut* out) {
    auto* s = static_cast<GtpSim*>(p);
    Vtb_gtp7* t = s->top.get();
    const int64_t pipe_half = 20000;
    const int64_t bit_half = 1000;
    const int64_t far_half = in->far_half == 0 ? 1000 : in->far_half;
    put(t, in);
    const int64_t end = s->t_pipe + 2 * pipe_half;
    while (true) {
        int64_t next = s->t_pipe;
        if (s->t_bit < next) next = s->t_bit;
        if (s->t_far < next) next = s->t_far;
        if (next >= end) break;
        s->now = next;
        if (s->t_pipe == next) {
            t->clk = !t->clk;
            s->t_pipe += pipe_half;
        }
        if (s->t_bit == next) {
            t->bit_clk = !t->bit_clk;
            s->t_bit += bit_half;
        }
        if (s->t_far == next) {
            t->far_clk = !t->far_clk;
            s->t_far += far_half;
        }
        t->eval();
    }
    get(s, out);
}

}  // extern "C"
