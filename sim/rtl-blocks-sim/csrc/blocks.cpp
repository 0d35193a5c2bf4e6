// Thin C ABI over one Verilated block (axis_register, axis_arb_mux,
// icrc_subst, ram_sdp, mr_table, ram_sdp_copies, tag_match, slot_allocator, mp_window,
// rc_message, mp_deferred, axis_async_fifo, tlp_upsize, tlp_downsize, completer, path_pick,
// path_health, ram_reset_sweep, read_reply, read_track, atomic_replay, qp_cache, qpc_fill,
// qp_ctx_cache, onehot_mux, ram_rec, rec_map, rec_port_mux, qp_dir or qpn_doorbell): copy a
// flat input struct onto the ports, evaluate, copy the ports back. No test logic lives here;
// the stimulus and the checks are Rust (src/).
//
// build.rs compiles this file once per configuration with
//   BLK_MODEL      the Verilated class (V<name>)
//   BLK_HEADER     its header
//   BLK_PFX(name)  exported symbol (<name>_##name)
//   BLK_KIND       1 axis_register, 2 axis_arb_mux, 3 icrc_subst, 4 ram_sdp,
//                  5 mr_table, 6 ram_sdp_copies, 7 tag_match, 8 slot_allocator,
//                  9 mp_window, 10 rc_message, 11 mp_deferred, 12 axis_async_fifo,
//                  13 tlp_upsize, 14 tlp_downsize, 15 completer, 16 path_pick, 17 path_health,
//                  18 ram_reset_sweep, 19 read_reply, 20 read_track, 21 atomic_replay,
//                  22 qp_cache, 23 qpc_fill, 24 qp_ctx_cache, 25 onehot_mux, 26 ram_rec,
//                  27 rec_map, 28 rec_port_mux, 29 qp_dir, 30 qpn_doorbell
//
// The structs mirror `PortsIn` / `PortsOut` in src/lib.rs (sizes checked).
// Buses: word i of an array = bits [32i+31:32i]. The Rust side masks every
// input to its port width (Verilator expects the unused top bits clear).
//
// axis_async_fifo has two clocks: pad[0] is the step's edge mask (bit 0:
// s_clk rises, bit 1: m_clk rises; both when the edges coincide), rst bit 0
// is s_rst and bit 1 m_rst; a peek holds both clocks low. Every other kind
// ignores pad[0] and raises its one clk in each step.
// tlp_upsize / tlp_downsize: s_data words 0..3 s_hdr, 4..11 s_data, 12
// s_keep; s_valid bit 0, s_last bit 0; m_data words 0..3 m_hdr, 4..11
// m_data, 12 m_keep.
// read_reply: s_data words 0 s_job_psn, 1 msn, 2..3 bus, 4 len, 5 {qpn (31:16),
// syndrome (15:8), atomic (6:5), ack (4), pmtu_log (3:0)}, 6..7 dmac (47:0)
// with udp_sport in word 7 bits 31:16, 8 dip, 9 dest_qp, 10..11 opa, 12..13
// opb, 14 s_snoop_addr, 15 s_snoop_strb, 16..23 s_snoop_data; s_valid bits
// 0 s_job_valid, 1 m_rd_desc_ready, 2 s_rd_status_valid, 3 m_pkt_ready, 4
// s_done, 5 s_snoop_en, 6 m_ram_wr_ready, 7 m_wr_desc_ready, 8
// s_wr_status_valid; s_last s_rd_status_error. m_data words 0..1
// m_rd_desc_pcie_addr, 2 ram_addr, 3 len, 4 id, 5..6 m_pkt_dmac, 7 dip, 8
// {syndrome, opcode, udp_sport}, 9 dest_qp, 10 psn, 11 msn, 12
// payload_addr, 13 payload_len, 14 jobs_out, 15..16 m_pkt_atomic_orig, 17
// m_ram_wr_addr, 18..19 m_ram_wr_data (bits 63:0), 20 m_ram_wr_strb, 21..22
// m_wr_desc_pcie_addr, 23 ram_addr, 24 len, 25 id, 26 m_rec_qpn, 27
// m_rec_psn, 28..29 m_rec_orig; s_ready s_job_ready; m_valid {stat_atomic,
// m_rec_valid, m_wr_desc_valid, m_ram_wr_en, stat_rd_error, busy,
// m_pkt_valid, m_rd_desc_valid}; m_last {stat_resp, stat_replay}.
// read_track: s_data words 0 alloc_first, 1 alloc_last, 2..3 alloc_bus, 4
// alloc_key, 5 alloc_len, 6 free_last, 7 lk_psn, 8 adv_psn, 9 ask_psn, 10
// alloc_qpn, 11 free_qpn, 12 drop_qpn, 13 lk_qpn, 14 q_qpn, 15 {q_max
// (18:16), ask_idx (15:8), adv_idx (7:0)}; s_valid bits 0 alloc_valid, 1 free_valid, 2
// drop_valid, 3 lk_nak, 4 adv_valid, 5 ask_valid. m_data words 0 lk_first,
// 1 lk_last, 2 lk_next, 3..4 lk_bus, 5 lk_key, 6 lk_len, 7 lk_cov_next, 8
// {lk_cov_idx (15:8), lk_idx (7:0)}; m_valid {q_full, alloc_ready, q_busy,
// lk_cov_asked, lk_cov, lk_asked, lk_hit}.
// atomic_replay: s_data words 0 s_rec_psn, 1..2 s_rec_orig, 3 lk_psn; s_last
// {lk_qpn (23:16), s_clr_qpn (15:8), s_rec_qpn (7:0)}; s_valid bits 0
// s_rec_valid, 1 s_clr_valid. m_data words 0..1 lk_orig; m_valid bit 0
// lk_hit.
// qp_cache: s_data words 0 s_lk_qpn, 1 s_lk_id, 2 s_fill_done_slot, 3
// s_unpin_slot, 4 s_inval_qpn; s_valid bits 0 s_lk_valid, 1 s_lk_pin, 2
// m_lk_ready, 3 m_fill_ready, 4 s_fill_done_valid, 5 s_fill_done_ok, 6
// s_unpin_valid, 7 s_inval_valid. m_data words 0 m_lk_slot, 1 m_lk_qpn, 2
// m_lk_id, 3 m_fill_slot, 4 m_fill_qpn, 5 m_fill_wb_qpn, 6 stat_hwm;
// s_ready {s_inval_ready, s_unpin_ready, s_fill_done_ready, s_lk_ready};
// m_valid {sweeping, err_proto, m_inval_busy, m_inval_done, m_fill_wb,
// m_fill_valid, m_lk_err, m_lk_valid}; m_last {stat_stall, stat_wb,
// stat_evict, stat_miss, stat_hit}.
// ram_rec: s_data words 0..3 wr_data, 4..7 rec_wr_data, 8 {rec_wr_addr
// (31:16), rec_rd_addr (15:0)}; s_valid {wr_addr (31:16), rec_wr_en (1),
// wr_en (0)}; s_last the packed rd_addr. m_data words 0..3 rd_data, 4..7
// rec_rd_data; s_ready rec_wr_ready.
// rec_map: s_data words 0..15 rec_rd_data (packed, up to 512 bits),
// 16..17 s_rec_wr_data, 18 {s_rec_wr_slot (31:16), s_rec_rd_slot (15:0)},
// 19 {s_rec_wr_word (15:8), s_rec_rd_word (7:0)}; s_valid bits 0
// s_rec_rd_valid, 1 s_rec_wr_valid; s_last rec_wr_ready; rst rst. m_data
// words 0..15 rec_wr_data (packed), 16..17 m_rec_rd_data, 18 {rec_wr_addr
// (31:16), rec_rd_addr (15:0)}, 19 rec_wr_en; s_ready {s_rec_wr_ready,
// s_rec_rd_ready}; m_valid {wr_busy, m_rec_rd_data_valid}.
// rec_port_mux: s_data words 0..15 p_rd_data (packed, up to 8 ports),
// 16..17 s_rec_wr_data, 18 {s_rec_wr_slot (31:16), s_rec_rd_slot (15:0)},
// 19 {s_rec_wr_word (15:8), s_rec_rd_word (7:0)}, 20 {p_wr_busy (31:24),
// p_rd_data_valid (23:16), p_wr_ready (15:8), p_rd_ready (7:0)}; s_valid
// bits 0 s_rec_rd_valid, 1 s_rec_wr_valid; rst rst. m_data words 0..1
// m_rec_rd_data, 2..3 p_wr_data, 4 {p_wr_slot (31:16), p_rd_slot (15:0)}, 5
// {p_wr_word (15:8), p_rd_word (7:0)}, 6 {p_wr_valid (15:8), p_rd_valid
// (7:0)}; s_ready {s_rec_wr_ready, s_rec_rd_ready}; m_valid {rec_wr_busy,
// m_rec_rd_data_valid}.
// qpn_doorbell: s_data words 0 {s_sq_pi (31:16), s_sq_qpn (15:0)}, 1 the
// same of rq, 2 lk_slot, 3 miss_records; s_valid bits 0 s_sq_valid, 1
// s_rq_valid, 2 lk_hit, 3 lk_busy, 4 miss_en, 5 miss_done, 6 miss_ok, 7
// miss_full; m_ready m_ready; rst rst. m_data words 0 {m_pi (31:16), m_slot
// (15:0)}, 1 err_qpn, 2 lk_qpn, 3 miss_qpn, 4 {waiting_max (12:8), waiting
// (4:0)}; m_valid {idle, look_hit, look_valid, err_valid, miss_valid, busy,
// m_rq_valid, m_sq_valid}.
// qp_dir: s_data words 0 cmd_qpn, 1 {cmd_op (17:16), cmd_slot (15:0)}, 2
// s_pkt_dest_qp, 3..4 s_pkt_meta, 5 cqe_slot, 6 lk_qpn, 7 free_from;
// s_valid bits 0 cmd_valid, 1 s_pkt_valid; m_ready m_pkt_ready; rst rst.
// m_data words 0 m_pkt_dest_qp, 1..2 m_pkt_meta, 3 rb_qpn, 4 cqe_qpn, 5
// cmd_err, 6 {lk_hit (16), lk_slot (15:0)}, 7 {free_valid (16), free_slot
// (15:0)}; s_ready s_pkt_ready;
// m_valid {rb_bound, busy, m_pkt_valid}.
// qpc_fill: s_data words 0..1 cfg_table_base, 2 cfg_table_qps, 3
// s_fill_slot, 4 s_fill_qpn, 5 s_fill_wb_qpn, 6..7 s_rec_rd_data, 8..9
// s_buf_rd_data, 10 s_rd_status_id; s_valid bits 0 s_fill_valid, 1
// s_fill_wb, 2 m_done_ready, 3 m_rec_rd_ready, 4 s_rec_rd_data_valid, 5
// m_rec_wr_ready, 6 m_rd_desc_ready, 7 s_rd_status_valid, 8
// m_wr_desc_ready, 9 s_wr_status_valid, 10 m_buf_wr_ready, 11
// m_buf_rd_ready; s_last s_rd_status_error (3:0).
// m_data words 0 m_done_slot, 1 m_rec_rd_slot, 2 m_rec_rd_word, 3
// m_rec_wr_slot, 4 m_rec_wr_word, 5..6 m_rec_wr_data, 7 m_buf_wr_addr, 8..9
// m_buf_wr_data, 10 m_buf_rd_addr, 11..12 m_rd_desc_pcie_addr, 13 ram_addr,
// 14 len, 15 id, 16..17 m_wr_desc_pcie_addr, 18 ram_addr, 19 len, 20 id;
// s_ready s_fill_ready; m_valid {m_wr_desc_valid, m_rd_desc_valid,
// m_buf_rd_en, m_buf_wr_en, m_rec_wr_valid, m_rec_rd_valid, m_done_ok,
// m_done_valid}; m_last {err_proto, busy, stat_oob, stat_fail, stat_wb,
// stat_fill}.
// qp_ctx_cache: s_data words 0..1 cfg_table_base, 2 cfg_table_qps, 3
// s_lk_qpn, 4 s_lk_id, 5 s_unpin_slot, 6 s_inval_qpn, 7..8 s_rec_rd_data,
// 9..10 s_buf_rd_data, 11 s_rd_status_id; s_valid bits 0 s_lk_valid, 1
// s_lk_pin, 2 m_lk_ready, 3 s_unpin_valid, 4 s_inval_valid, 5
// m_rec_rd_ready, 6 s_rec_rd_data_valid, 7 m_rec_wr_ready, 8
// m_rd_desc_ready, 9 s_rd_status_valid, 10 m_wr_desc_ready, 11
// s_wr_status_valid, 12 m_buf_wr_ready, 13 m_buf_rd_ready; s_last
// s_rd_status_error (3:0). m_data words 0
// m_lk_slot, 1 m_lk_qpn, 2 m_lk_id, 3 m_rec_rd_slot, 4 m_rec_rd_word, 5
// m_rec_wr_slot, 6 m_rec_wr_word, 7..8 m_rec_wr_data, 9 m_buf_wr_addr,
// 10..11 m_buf_wr_data, 12 m_buf_rd_addr, 13..14 m_rd_desc_pcie_addr, 15
// ram_addr, 16 len, 17 id, 18..19 m_wr_desc_pcie_addr, 20 ram_addr, 21 len,
// 22 stat_hwm; s_ready {err_proto, busy, sweeping, m_inval_busy,
// m_inval_done, m_lk_err, m_lk_valid, s_inval_ready, s_unpin_ready,
// s_lk_ready}; m_valid {m_wr_desc_valid, m_rd_desc_valid, m_buf_rd_en,
// m_buf_wr_en, m_rec_wr_valid, m_rec_rd_valid}; m_last {stat_oob,
// stat_fail, stat_fill, stat_stall, stat_wb, stat_evict, stat_miss,
// stat_hit}; m_sel stat_wb_dma.

#include <cstddef>
#include <cstdint>
#include <memory>

#include "verilated.h"
#include "../../csrc/vl_shim_common.hpp"
#include BLK_HEADER

extern "C" {

struct BlkPortsIn {
    uint32_t s_data[24];  // icrc_subst: in_data; ram_sdp: wr_data; mr_table: all (src/mr.rs)
    uint32_t s_valid;     // icrc_subst: beat_oh; ram_sdp: wr_en (bit 0); copies: also wr_addr (31:16)
    uint32_t s_last;      // ram_sdp: wr_addr (bits 15:0), rd_addr (31:16); copies: rd_addr (packed)
    uint8_t rst;          // axis_async_fifo: bit 0 s_rst, bit 1 m_rst
    uint8_t m_ready;
    uint8_t pad[2];       // axis_async_fifo: pad[0] the step's edge mask (bit 0 s_clk, 1 m_clk)
};

struct BlkPortsOut {
    uint32_t m_data[32];  // icrc_subst: out_data; ram_sdp(_copies): rd_data; mr_table: {b_bus, a_bus}
    uint32_t s_ready;
    uint8_t m_valid;      // mr_table: {change, reg_err, c_ok, b_ok, a_ok}
    uint8_t m_last;
    uint8_t m_sel;
    uint8_t sim_flags;  // bit 0: $finish, bit 1: $error/$stop
};

}  // extern "C"

namespace {

inline void put(CData& d, const uint32_t* s) { d = static_cast<CData>(s[0]); }
inline void put(SData& d, const uint32_t* s) { d = static_cast<SData>(s[0]); }
inline void put(IData& d, const uint32_t* s) { d = s[0]; }
inline void put(QData& d, const uint32_t* s) {
    d = static_cast<QData>(s[0]) | (static_cast<QData>(s[1]) << 32);
}
template <std::size_t N>
inline void put(VlWide<N>& d, const uint32_t* s) {
    for (std::size_t i = 0; i < N; ++i) d[i] = s[i];
}
inline void get(const CData& d, uint32_t* s) { s[0] = d; }
inline void get(const SData& d, uint32_t* s) { s[0] = d; }
inline void get(const IData& d, uint32_t* s) { s[0] = d; }
inline void get(const QData& d, uint32_t* s) {
    s[0] = static_cast<uint32_t>(d);
    s[1] = static_cast<uint32_t>(d >> 32);
}
template <std::size_t N>
inline void get(const VlWide<N>& d, uint32_t* s) {
    for (std::size_t i = 0; i < N; ++i) s[i] = d[i];
}
// bits 63:0 of a bus of 64 bits or more
inline void get_lo64(const QData& d, uint32_t* s) { get(d, s); }
template <std::size_t N>
inline void get_lo64(const VlWide<N>& d, uint32_t* s) {
    s[0] = d[0];
    s[1] = d[1];
}

using Sim = VlSim<BLK_MODEL>;

inline void set_inputs(BLK_MODEL* t, const BlkPortsIn* in) {
#if BLK_KIND == 1
    t->rst = in->rst;
    put(t->s_data, in->s_data);
    t->s_valid = in->s_valid & 1;
    t->m_ready = in->m_ready;
#elif BLK_KIND == 2
    t->rst = in->rst;
    put(t->s_data, in->s_data);
    t->s_valid = in->s_valid;
    t->s_last = in->s_last;
    t->m_ready = in->m_ready;
#elif BLK_KIND == 5
    const uint32_t* w = in->s_data;
    t->rst = in->rst;
    t->reg_key = w[0];
    put(t->reg_va, w + 1);
    t->reg_len = w[3];
    put(t->reg_bus, w + 4);
    t->reg_sel = w[6] & 0xffff;
    t->reg_pd = w[6] >> 16;
    t->reg_access = w[7] & 0xf;
    t->reg_cmd = (w[7] >> 4) & 0xf;
    t->reg_cmd_valid = (w[7] >> 8) & 1;
    t->a_key = w[8];
    put(t->a_va, w + 9);
    t->a_len = w[11];
    t->a_pd = w[12] & 0xffff;
    t->a_access = (w[12] >> 16) & 0xf;
    t->b_key = w[13];
    put(t->b_va, w + 14);
    t->b_len = w[16];
    t->b_pd = w[17] & 0xffff;
    t->b_access = (w[17] >> 16) & 0xf;
    t->c_key = w[18];
    put(t->c_bus, w + 19);
    t->c_len = w[21];
    t->c_pd = w[22] & 0xffff;
    t->c_access = (w[22] >> 16) & 0xf;
#elif BLK_KIND == 4
    t->wr_en = in->s_valid & 1;
    t->wr_addr = in->s_last & 0xffff;
    t->rd_addr = in->s_last >> 16;
    put(t->wr_data, in->s_data);
#elif BLK_KIND == 6
    t->wr_en = in->s_valid & 1;
    t->wr_addr = in->s_valid >> 16;
    t->rd_addr = in->s_last;
    put(t->wr_data, in->s_data);
#elif BLK_KIND == 26
    t->wr_en = in->s_valid & 1;
    t->rec_wr_en = (in->s_valid >> 1) & 1;
    t->wr_addr = in->s_valid >> 16;
    t->rd_addr = in->s_last;
    put(t->wr_data, in->s_data);
    put(t->rec_wr_data, in->s_data + 4);
    t->rec_rd_addr = in->s_data[8] & 0xffff;
    t->rec_wr_addr = in->s_data[8] >> 16;
#elif BLK_KIND == 27
    // rec_map (src/rec_map.rs has the packing and masks every field)
    t->rst = in->rst;
    put(t->rec_rd_data, in->s_data);
    put(t->s_rec_wr_data, in->s_data + 16);
    t->s_rec_rd_slot = in->s_data[18] & 0xffff;
    t->s_rec_wr_slot = in->s_data[18] >> 16;
    t->s_rec_rd_word = in->s_data[19] & 0xff;
    t->s_rec_wr_word = (in->s_data[19] >> 8) & 0xff;
    t->s_rec_rd_valid = in->s_valid & 1;
    t->s_rec_wr_valid = (in->s_valid >> 1) & 1;
    t->rec_wr_ready = in->s_last;
#elif BLK_KIND == 28
    // rec_port_mux (src/rec_port_mux.rs has the packing and masks every
    // field)
    t->rst = in->rst;
    put(t->p_rd_data, in->s_data);
    put(t->s_rec_wr_data, in->s_data + 16);
    t->s_rec_rd_slot = in->s_data[18] & 0xffff;
    t->s_rec_wr_slot = in->s_data[18] >> 16;
    t->s_rec_rd_word = in->s_data[19] & 0xff;
    t->s_rec_wr_word = (in->s_data[19] >> 8) & 0xff;
    t->p_rd_ready = in->s_data[20] & 0xff;
    t->p_wr_ready = (in->s_data[20] >> 8) & 0xff;
    t->p_rd_data_valid = (in->s_data[20] >> 16) & 0xff;
    t->p_wr_busy = in->s_data[20] >> 24;
    t->s_rec_rd_valid = in->s_valid & 1;
    t->s_rec_wr_valid = (in->s_valid >> 1) & 1;
#elif BLK_KIND == 30
    // qpn_doorbell (src/qpn_doorbell.rs masks every field)
    t->rst = in->rst;
    t->s_sq_qpn = in->s_data[0] & 0xffff;
    t->s_sq_pi = in->s_data[0] >> 16;
    t->s_rq_qpn = in->s_data[1] & 0xffff;
    t->s_rq_pi = in->s_data[1] >> 16;
    t->lk_slot = in->s_data[2];
    t->miss_records = in->s_data[3];
    t->s_sq_valid = in->s_valid & 1;
    t->s_rq_valid = (in->s_valid >> 1) & 1;
    t->lk_hit = (in->s_valid >> 2) & 1;
    t->lk_busy = (in->s_valid >> 3) & 1;
    t->miss_en = (in->s_valid >> 4) & 1;
    t->miss_done = (in->s_valid >> 5) & 1;
    t->miss_ok = (in->s_valid >> 6) & 1;
    t->miss_full = (in->s_valid >> 7) & 1;
    t->m_ready = in->m_ready;
#elif BLK_KIND == 29
    // qp_dir (src/qp_dir.rs masks every field)
    t->rst = in->rst;
    t->cmd_qpn = in->s_data[0];
    t->cmd_slot = in->s_data[1] & 0xffff;
    t->cmd_op = (in->s_data[1] >> 16) & 3;
    t->cmd_valid = in->s_valid & 1;
    t->s_pkt_valid = (in->s_valid >> 1) & 1;
    t->s_pkt_dest_qp = in->s_data[2];
    put(t->s_pkt_meta, in->s_data + 3);
    t->cqe_slot = in->s_data[5];
    t->lk_qpn = in->s_data[6];
    t->free_from = in->s_data[7] & 0xffff;
    // (the miss wait is checked in the core, tests/qp_fetch.rs: off here)
    t->miss_en = 0;
    t->miss_records = 0;
    t->miss_drop = 0;
    t->m_pkt_ready = in->m_ready;
#elif BLK_KIND == 7
    // tag_match: s_valid valid, s_data the packed tags, s_last key
    t->valid = in->s_valid;
    put(t->tags, in->s_data);
    t->key = in->s_last;
#elif BLK_KIND == 25
    // onehot_mux: s_valid sel, s_data the packed inputs
    t->sel = in->s_valid;
    put(t->in, in->s_data);
#elif BLK_KIND == 16
    // path_pick: s_data[0] = base | spray_log << 8 | avoid << 16
    t->base = in->s_data[0] & 0x3f;
    t->spray_log = (in->s_data[0] >> 8) & 7;
    t->avoid = (in->s_data[0] >> 16) & 0xff;
#elif BLK_KIND == 17
    // path_health (src/path_health.rs has the packing)
    const uint32_t* w = in->s_data;
    t->down = w[0] & 0xff;
    t->lepo = (w[0] >> 8) & 3;
    t->hold = (w[0] >> 10) & 0xf;
    t->spray_log = (w[0] >> 14) & 7;
    t->epoch = (w[0] >> 17) & 0xf;
    t->blame = (w[0] >> 21) & 1;
    t->blame_path = (w[0] >> 22) & 7;
    t->timed_ok = (w[0] >> 25) & 1;
    t->timed_fail = (w[0] >> 26) & 1;
    t->timed_probe = (w[0] >> 27) & 1;
    t->timed_path = (w[0] >> 28) & 7;
    t->loss = w[1] & 0xffff;
    t->back = (w[1] >> 16) & 3;
    t->thresh = (w[1] >> 18) & 3;
#elif BLK_KIND == 8
    t->rst = in->rst;
    t->take = in->s_valid & 1;
    put(t->give, in->s_data);
#elif BLK_KIND == 18
    t->rst = in->rst;
    t->wrote = in->s_valid & 1;
#elif BLK_KIND == 9
    put(t->load_bmp, in->s_data);
    t->psn_diff = in->s_data[4] & 0xffffff;
    t->point = in->s_data[5] & 0xffffff;
    t->pend_psn = in->s_data[6] & 0xffffff;
    t->load_span = in->s_data[7] & 0xff;
    t->load = in->s_valid & 1;
    t->check = (in->s_valid >> 1) & 1;
    t->exec = (in->s_valid >> 2) & 1;
    t->fetch = (in->s_valid >> 3) & 1;
    t->nak_sent = (in->s_valid >> 4) & 1;
    t->pend_v = (in->s_valid >> 5) & 1;
    t->wshift = (in->s_valid >> 8) & 7;
#elif BLK_KIND == 10
    const uint32_t v = in->s_valid;
    t->msg = in->s_last & 3;
    t->op_is_write = (v >> 2) & 1;
    t->op_is_send = (v >> 3) & 1;
    t->op_is_read = 0;   // READ requests: the responder tests (rnic-tests read_responder)
    t->op_first = (v >> 4) & 1;
    t->op_middle = (v >> 5) & 1;
    t->op_last = (v >> 6) & 1;
    t->op_only = (v >> 7) & 1;
    t->op_has_reth = (v >> 8) & 1;
    t->access_ok = (v >> 9) & 1;
    t->plen = in->s_data[0] & 0x1fff;
    t->pmtu_bytes = in->s_data[1] & 0x1fff;
    t->reth_len = in->s_data[2];
    t->remain = in->s_data[3];
#elif BLK_KIND == 11
    t->rst = in->rst;
    t->park = in->s_valid & 1;
    t->done = (in->s_valid >> 1) & 1;
    t->drop = (in->s_valid >> 2) & 1;
    t->qpn = in->s_last & 0xffff;
    t->drop_qpn = in->s_last >> 16;
    t->park_psn = in->s_data[0] & 0xffffff;
    t->park_imm = in->s_data[1];
    t->park_len = in->s_data[2];
#elif BLK_KIND == 12
    t->s_rst = in->rst & 1;
    t->m_rst = (in->rst >> 1) & 1;
    put(t->s_data, in->s_data);
    t->s_valid = in->s_valid & 1;
    t->m_ready = in->m_ready & 1;
#elif BLK_KIND == 15
    // completer (src/completer.rs has the packing)
    const uint32_t v = in->s_valid;
    const uint32_t* w = in->s_data;
    t->rst = in->rst;
    t->s_ack_valid = v & 1;
    t->scan_flush = (v >> 1) & 1;
    t->scan_tmo = (v >> 2) & 1;
    t->load = (v >> 3) & 1;
    t->rtx_req = (v >> 5) & 1;
    t->ring_empty_now = (v >> 6) & 1;
    t->ring_empty = (v >> 7) & 1;
    t->ring_wait = (v >> 8) & 1;
    t->entry_sig = (v >> 9) & 1;
    t->entry_send = (v >> 10) & 1;
    t->entry_read = 0;  // (a READ entry completes as an ACK does; its CQE opcode: tests/read_requester.rs)
    t->m_acq_ready = (v >> 11) & 1;
    t->cqe_hold = (v >> 12) & 1;
    t->s_ack_qpn = in->s_last & 0xffff;
    t->scan_q = in->s_last >> 16;
    t->s_ack_psn = w[0] & 0xffffff;
    t->s_ack_syndrome = w[0] >> 24;
    t->load_qpn = w[1] & 0xffff;
    t->acq_cqn = w[1] >> 16;
    t->una_now = w[2] & 0xffffff;
    t->sent_now = w[3] & 0xffffff;
    t->rleft = w[4] & 7;
    t->nleft = (w[4] >> 3) & 7;
    t->retry_init = (w[4] >> 6) & 7;
    t->rnr_init = (w[4] >> 9) & 7;
    t->rot = (w[4] >> 12) & 0x3f;
    t->spray_log = (w[4] >> 24) & 7;
    t->timed_v = (w[13] >> 24) & 1;
    t->timed_psn = w[13] & 0xffffff;
    // path health: no path out, nothing counted (src/path_health.rs tests the rules)
    t->ph_down = 0;
    t->ph_loss = 0;
    t->ph_lepo = 0;
    t->ph_hold = 0;
    t->ph_chg = w[14] & 0xffffff;
    t->ph_thresh = (w[14] >> 24) & 3;
    t->timed_probe = 0;
    t->timed_path = 0;
    // an MP PROBE as the timed packet: settled by its reply or probe_lost
    t->timed_bare = (w[13] >> 25) & 1;
    t->probe_lost = (w[13] >> 26) & 1;
    t->probe_lost_qpn = in->s_last >> 16;
    t->entry_last_psn = w[5] & 0xffffff;
    t->entry_index = w[6] & 0xffff;
    put(t->entry_wr_id, w + 7);
    t->entry_len = w[9];
    t->now = w[10] & 0xffffff;
    put(t->s_ack_lost, w + 11);
#elif BLK_KIND == 19
    // read_reply (src/read_reply.rs has the packing; it masks the QP
    // number, the snoop's address, strobes and data to their widths)
    const uint32_t* w = in->s_data;
    const uint32_t v = in->s_valid;
    t->rst = in->rst;
    t->s_job_psn = w[0] & 0xffffff;
    t->s_job_msn = w[1] & 0xffffff;
    put(t->s_job_bus, w + 2);
    t->s_job_len = w[4];
    t->s_job_pmtu_log = w[5] & 0xf;
    t->s_job_ack = (w[5] >> 4) & 1;
    t->s_job_atomic = (w[5] >> 5) & 3;
    t->s_job_syndrome = (w[5] >> 8) & 0xff;
    t->s_job_qpn = w[5] >> 16;
    t->s_job_dmac = static_cast<QData>(w[6]) | (static_cast<QData>(w[7] & 0xffff) << 32);
    t->s_job_udp_sport = w[7] >> 16;
    t->s_job_dip = w[8];
    t->s_job_dest_qp = w[9] & 0xffffff;
    put(t->s_job_opa, w + 10);
    put(t->s_job_opb, w + 12);
    t->s_snoop_addr = w[14];
    t->s_snoop_strb = w[15];
    put(t->s_snoop_data, w + 16);
    t->s_job_valid = v & 1;
    t->m_rd_desc_ready = (v >> 1) & 1;
    t->s_rd_status_valid = (v >> 2) & 1;
    t->m_pkt_ready = (v >> 3) & 1;
    t->s_done = (v >> 4) & 1;
    t->s_snoop_en = (v >> 5) & 1;
    t->m_ram_wr_ready = (v >> 6) & 1;
    t->m_wr_desc_ready = (v >> 7) & 1;
    t->s_wr_status_valid = (v >> 8) & 1;
    t->s_rd_status_error = in->s_last & 0xf;
#elif BLK_KIND == 20
    // read_track (src/read_track.rs has the packing; it masks the QP numbers
    // and indices to QN_W and RD_IW)
    const uint32_t* w = in->s_data;
    const uint32_t v = in->s_valid;
    t->rst = in->rst;
    t->alloc_valid = v & 1;
    t->alloc_qpn = w[10];
    t->alloc_first = w[0] & 0xffffff;
    t->alloc_last = w[1] & 0xffffff;
    put(t->alloc_bus, w + 2);
    t->alloc_key = w[4];
    t->alloc_len = w[5];
    t->free_valid = (v >> 1) & 1;
    t->free_qpn = w[11];
    t->free_last = w[6] & 0xffffff;
    t->drop_valid = (v >> 2) & 1;
    t->drop_qpn = w[12];
    t->lk_qpn = w[13];
    t->lk_psn = w[7] & 0xffffff;
    t->lk_nak = (v >> 3) & 1;
    t->adv_valid = (v >> 4) & 1;
    t->adv_idx = w[15] & 0xff;
    t->adv_psn = w[8] & 0xffffff;
    t->ask_valid = (v >> 5) & 1;
    t->ask_idx = (w[15] >> 8) & 0xff;
    t->ask_psn = w[9] & 0xffffff;
    t->q_qpn = w[14];
    t->q_max = (w[15] >> 16) & 7;
    t->fence_valid = 0;  // (the fence hold: tests/read_requester.rs, host/rnic-torture)
    t->fence_qpn = 0;
    t->hold_qpn = 0;
#elif BLK_KIND == 21
    // atomic_replay (src/atomic_replay.rs has the packing; it masks the QP
    // numbers to QN_W)
    t->rst = in->rst;
    t->s_rec_valid = in->s_valid & 1;
    t->s_clr_valid = (in->s_valid >> 1) & 1;
    t->s_rec_qpn = in->s_last & 0xff;
    t->s_clr_qpn = (in->s_last >> 8) & 0xff;
    t->lk_qpn = (in->s_last >> 16) & 0xff;
    t->s_rec_psn = in->s_data[0] & 0xffffff;
    put(t->s_rec_orig, in->s_data + 1);
    t->lk_psn = in->s_data[3] & 0xffffff;
    // (the record port is the core's: idle here, the module's own ports
    // are what this bench checks)
    t->rec_rd_addr = 0;
    t->rec_wr_en = 0;
    t->rec_wr_addr = 0;
#elif BLK_KIND == 22
    // qp_cache (src/qp_cache.rs has the packing; it masks the QP numbers,
    // ids and slots to their widths)
    const uint32_t v = in->s_valid;
    t->rst = in->rst;
    t->s_lk_valid = v & 1;
    t->s_lk_pin = (v >> 1) & 1;
    t->m_lk_ready = (v >> 2) & 1;
    t->m_fill_ready = (v >> 3) & 1;
    t->s_fill_done_valid = (v >> 4) & 1;
    t->s_fill_done_ok = (v >> 5) & 1;
    t->s_unpin_valid = (v >> 6) & 1;
    t->s_inval_valid = (v >> 7) & 1;
    t->s_lk_qpn = in->s_data[0];
    t->s_lk_id = in->s_data[1];
    t->s_fill_done_slot = in->s_data[2];
    t->s_unpin_slot = in->s_data[3];
    t->s_inval_qpn = in->s_data[4];
#elif BLK_KIND == 23
    // qpc_fill (src/qpc_fill.rs has the packing and masks every field)
    const uint32_t v = in->s_valid;
    t->rst = in->rst;
    put(t->cfg_table_base, in->s_data);
    t->cfg_table_qps = in->s_data[2];
    t->s_fill_slot = in->s_data[3];
    t->s_fill_qpn = in->s_data[4];
    t->s_fill_wb_qpn = in->s_data[5];
    put(t->s_rec_rd_data, in->s_data + 6);
    put(t->s_buf_rd_data, in->s_data + 8);
    t->s_rd_status_id = in->s_data[10];
    t->s_fill_valid = v & 1;
    t->s_fill_wb = (v >> 1) & 1;
    t->m_done_ready = (v >> 2) & 1;
    t->m_rec_rd_ready = (v >> 3) & 1;
    t->s_rec_rd_data_valid = (v >> 4) & 1;
    t->m_rec_wr_ready = (v >> 5) & 1;
    t->m_rd_desc_ready = (v >> 6) & 1;
    t->s_rd_status_valid = (v >> 7) & 1;
    t->m_wr_desc_ready = (v >> 8) & 1;
    t->s_wr_status_valid = (v >> 9) & 1;
    t->m_buf_wr_ready = (v >> 10) & 1;
    t->m_buf_rd_ready = (v >> 11) & 1;
    t->s_rd_status_error = in->s_last & 0xf;
#elif BLK_KIND == 24
    // qp_ctx_cache (src/qp_ctx_cache.rs has the packing and masks every field)
    const uint32_t v = in->s_valid;
    t->rst = in->rst;
    put(t->cfg_table_base, in->s_data);
    t->cfg_table_qps = in->s_data[2];
    t->s_lk_qpn = in->s_data[3];
    t->s_lk_id = in->s_data[4];
    t->s_unpin_slot = in->s_data[5];
    t->s_inval_qpn = in->s_data[6];
    put(t->s_rec_rd_data, in->s_data + 7);
    put(t->s_buf_rd_data, in->s_data + 9);
    t->s_rd_status_id = in->s_data[11];
    t->s_lk_valid = v & 1;
    t->s_lk_pin = (v >> 1) & 1;
    t->m_lk_ready = (v >> 2) & 1;
    t->s_unpin_valid = (v >> 3) & 1;
    t->s_inval_valid = (v >> 4) & 1;
    t->m_rec_rd_ready = (v >> 5) & 1;
    t->s_rec_rd_data_valid = (v >> 6) & 1;
    t->m_rec_wr_ready = (v >> 7) & 1;
    t->m_rd_desc_ready = (v >> 8) & 1;
    t->s_rd_status_valid = (v >> 9) & 1;
    t->m_wr_desc_ready = (v >> 10) & 1;
    t->s_wr_status_valid = (v >> 11) & 1;
    t->m_buf_wr_ready = (v >> 12) & 1;
    t->m_buf_rd_ready = (v >> 13) & 1;
    t->s_rd_status_error = in->s_last & 0xf;
#elif BLK_KIND == 13 || BLK_KIND == 14
    t->rst = in->rst;
    put(t->s_hdr, in->s_data);
    put(t->s_data, in->s_data + 4);
    put(t->s_keep, in->s_data + 12);
    t->s_valid = in->s_valid & 1;
    t->s_last = in->s_last & 1;
    t->m_ready = in->m_ready;
#else
    put(t->in_data, in->s_data);
    t->beat_oh = in->s_valid;
#endif
}

inline void get_outputs(const BLK_MODEL* t, BlkPortsOut* o) {
#if BLK_KIND == 1
    get(t->m_data, o->m_data);
    o->s_ready = t->s_ready;
    o->m_valid = t->m_valid;
#elif BLK_KIND == 2
    get(t->m_data, o->m_data);
    o->s_ready = t->s_ready;
    o->m_valid = t->m_valid;
    o->m_last = t->m_last;
    o->m_sel = t->m_sel;
#elif BLK_KIND == 4 || BLK_KIND == 6
    get(t->rd_data, o->m_data);
#elif BLK_KIND == 26
    get(t->rd_data, o->m_data);
    get(t->rec_rd_data, o->m_data + 4);
    o->s_ready = t->rec_wr_ready;
#elif BLK_KIND == 27
    get(t->rec_wr_data, o->m_data);
    get(t->m_rec_rd_data, o->m_data + 16);
    o->m_data[18] = t->rec_rd_addr | (static_cast<uint32_t>(t->rec_wr_addr) << 16);
    o->m_data[19] = t->rec_wr_en;
    o->s_ready = t->s_rec_rd_ready | (t->s_rec_wr_ready << 1);
    o->m_valid = static_cast<uint8_t>(t->m_rec_rd_data_valid | (t->wr_busy << 1));
#elif BLK_KIND == 28
    get(t->m_rec_rd_data, o->m_data);
    get(t->p_wr_data, o->m_data + 2);
    o->m_data[4] = t->p_rd_slot | (static_cast<uint32_t>(t->p_wr_slot) << 16);
    o->m_data[5] = t->p_rd_word | (static_cast<uint32_t>(t->p_wr_word) << 8);
    o->m_data[6] = t->p_rd_valid | (static_cast<uint32_t>(t->p_wr_valid) << 8);
    o->s_ready = t->s_rec_rd_ready | (t->s_rec_wr_ready << 1);
    o->m_valid = static_cast<uint8_t>(t->m_rec_rd_data_valid | (t->rec_wr_busy << 1));
#elif BLK_KIND == 30
    o->m_data[0] = t->m_slot | (static_cast<uint32_t>(t->m_pi) << 16);
    o->m_data[1] = t->err_qpn;
    o->m_data[2] = t->lk_qpn;
    o->m_data[3] = t->miss_qpn;
    o->m_data[4] = t->waiting | (static_cast<uint32_t>(t->waiting_max) << 8);
    o->m_valid = static_cast<uint8_t>(t->m_sq_valid | (t->m_rq_valid << 1) | (t->busy << 2)
                                      | (t->miss_valid << 3) | (t->err_valid << 4)
                                      | (t->look_valid << 5) | (t->look_hit << 6) | (t->idle << 7));
#elif BLK_KIND == 29
    o->m_data[0] = t->m_pkt_dest_qp;
    get(t->m_pkt_meta, o->m_data + 1);
    o->m_data[3] = t->rb_qpn;
    o->m_data[4] = t->cqe_qpn;
    o->m_data[5] = t->cmd_err;
    o->m_data[6] = t->lk_slot | (static_cast<uint32_t>(t->lk_hit) << 16);
    o->m_data[7] = t->free_slot | (static_cast<uint32_t>(t->free_valid) << 16);
    o->s_ready = t->s_pkt_ready;
    o->m_valid = static_cast<uint8_t>(t->m_pkt_valid | (t->busy << 1) | (t->rb_bound << 2));
#elif BLK_KIND == 5
    get(t->a_bus, o->m_data);
    get(t->b_bus, o->m_data + 2);
    o->m_valid = static_cast<uint8_t>(t->a_ok | (t->b_ok << 1) | (t->c_ok << 2)
                                      | (t->reg_err << 3) | (t->change << 4));
#elif BLK_KIND == 7
    get(t->match, o->m_data);
#elif BLK_KIND == 25
    get(t->out, o->m_data);
#elif BLK_KIND == 16
    o->m_data[0] = t->path;
#elif BLK_KIND == 17
    o->m_data[0] = t->down_next | (t->lepo_next << 8) | (t->hold_next << 10)
        | (t->back_next << 14) | (t->takeout << 16) | (t->comeback << 17);
    o->m_data[1] = t->loss_next;
#elif BLK_KIND == 8
    get(t->free, o->m_data);
    o->m_valid = t->avail;
    o->m_sel = static_cast<uint8_t>(t->pick);
#elif BLK_KIND == 18
    o->m_valid = t->sweep;
    o->m_data[0] = t->sweep_addr;
#elif BLK_KIND == 9
    get(t->bmp_next, o->m_data);
    o->m_data[4] = t->point_new;
    o->m_data[5] = t->adv;
    get(t->lost, o->m_data + 6);
    o->m_data[10] = t->span_next;
    o->m_valid = static_cast<uint8_t>(t->dup | (t->beyond << 1) | (t->nak << 2)
                                      | (t->pend_due << 3) | (t->recovered << 4));
#elif BLK_KIND == 10
    o->m_valid = static_cast<uint8_t>(t->inv_req | (t->rem_access << 1));
    o->m_last = static_cast<uint8_t>(t->msg_set | (t->msg_new << 1));
#elif BLK_KIND == 11
    o->m_valid = static_cast<uint8_t>(t->avail | (t->pend << 1) | (t->full << 2));
    o->m_data[0] = t->psn;
    o->m_data[1] = t->imm;
    o->m_data[2] = t->len;
#elif BLK_KIND == 12
    get(t->m_data, o->m_data);
    o->s_ready = t->s_ready;
    o->m_valid = t->m_valid;
#elif BLK_KIND == 15
    o->m_valid = static_cast<uint8_t>(t->ack_queue_full | (t->flush_take << 1) | (t->pop << 2)
        | (t->req_we << 3) | (t->stamp_we << 4) | (t->rtx_set << 5) | (t->rtx_one << 6)
        | (t->rtx_clr << 7));
    o->m_last = static_cast<uint8_t>(t->m_acq_valid | (t->set_err << 1) | (t->stat_ack_drop << 2)
        | (t->stat_timeout << 3) | (t->stat_nak_seq << 4) | (t->stat_rnr << 5)
        | (t->idle << 6) | (t->lost_we << 7));
    o->m_data[0] = t->qpn_next | (static_cast<uint32_t>(t->qpn) << 16);
    o->m_data[1] = t->req_una;
    o->m_data[2] = t->req_rleft | (t->req_nleft << 3) | (t->req_rot << 6);
    o->m_data[3] = t->stamp_wd;
    o->m_data[4] = t->acq_qpn | (static_cast<uint32_t>(t->m_acq_cqn) << 16);
    get(t->m_acq_data, o->m_data + 5);
    get(t->lost_wd, o->m_data + 13);
    o->m_data[15] = t->timed_done | (t->stat_takeout << 1) | (t->stat_comeback << 2)
        | (static_cast<uint32_t>(t->req_chg) << 8);
#elif BLK_KIND == 19
    get(t->m_rd_desc_pcie_addr, o->m_data);
    o->m_data[2] = t->m_rd_desc_ram_addr;
    o->m_data[3] = t->m_rd_desc_len;
    o->m_data[4] = t->m_rd_desc_id;
    get(t->m_pkt_dmac, o->m_data + 5);
    o->m_data[7] = t->m_pkt_dip;
    o->m_data[8] = t->m_pkt_udp_sport | (static_cast<uint32_t>(t->m_pkt_opcode) << 16)
        | (static_cast<uint32_t>(t->m_pkt_syndrome) << 24);
    o->m_data[9] = t->m_pkt_dest_qp;
    o->m_data[10] = t->m_pkt_psn;
    o->m_data[11] = t->m_pkt_msn;
    o->m_data[12] = t->m_pkt_payload_addr;
    o->m_data[13] = t->m_pkt_payload_len;
    o->m_data[14] = t->jobs_out;
    o->s_ready = t->s_job_ready;
    get(t->m_pkt_atomic_orig, o->m_data + 15);
    o->m_data[17] = t->m_ram_wr_addr;
    get_lo64(t->m_ram_wr_data, o->m_data + 18);
    o->m_data[20] = t->m_ram_wr_strb;
    get(t->m_wr_desc_pcie_addr, o->m_data + 21);
    o->m_data[23] = t->m_wr_desc_ram_addr;
    o->m_data[24] = t->m_wr_desc_len;
    o->m_data[25] = t->m_wr_desc_id;
    o->m_data[26] = t->m_rec_qpn;
    o->m_data[27] = t->m_rec_psn;
    get(t->m_rec_orig, o->m_data + 28);
    o->m_valid = static_cast<uint8_t>(t->m_rd_desc_valid | (t->m_pkt_valid << 1) | (t->busy << 2)
        | (t->stat_rd_error << 3) | (t->m_ram_wr_en << 4) | (t->m_wr_desc_valid << 5)
        | (t->m_rec_valid << 6) | (t->stat_atomic << 7));
    o->m_last = static_cast<uint8_t>(t->stat_replay | (t->stat_resp << 1));
#elif BLK_KIND == 20
    o->m_data[0] = t->lk_first;
    o->m_data[1] = t->lk_last;
    o->m_data[2] = t->lk_next;
    get(t->lk_bus, o->m_data + 3);
    o->m_data[5] = t->lk_key;
    o->m_data[6] = t->lk_len;
    o->m_data[7] = t->lk_cov_next;
    o->m_data[8] = t->lk_idx | (static_cast<uint32_t>(t->lk_cov_idx) << 8);
    o->m_valid = static_cast<uint8_t>(t->lk_hit | (t->lk_asked << 1) | (t->lk_cov << 2)
        | (t->lk_cov_asked << 3) | (t->q_busy << 4) | (t->alloc_ready << 5)
        | (t->q_full << 6));
#elif BLK_KIND == 21
    get(t->lk_orig, o->m_data);
    o->m_valid = t->lk_hit;
#elif BLK_KIND == 22
    o->m_data[0] = t->m_lk_slot;
    o->m_data[1] = t->m_lk_qpn;
    o->m_data[2] = t->m_lk_id;
    o->m_data[3] = t->m_fill_slot;
    o->m_data[4] = t->m_fill_qpn;
    o->m_data[5] = t->m_fill_wb_qpn;
    o->m_data[6] = t->stat_hwm;
    o->s_ready = t->s_lk_ready | (t->s_fill_done_ready << 1) | (t->s_unpin_ready << 2)
        | (t->s_inval_ready << 3);
    o->m_valid = static_cast<uint8_t>(t->m_lk_valid | (t->m_lk_err << 1) | (t->m_fill_valid << 2)
        | (t->m_fill_wb << 3) | (t->m_inval_done << 4) | (t->m_inval_busy << 5)
        | (t->err_proto << 6) | (t->sweeping << 7));
    o->m_last = static_cast<uint8_t>(t->stat_hit | (t->stat_miss << 1) | (t->stat_evict << 2)
        | (t->stat_wb << 3) | (t->stat_stall << 4));
#elif BLK_KIND == 23
    o->m_data[0] = t->m_done_slot;
    o->m_data[1] = t->m_rec_rd_slot;
    o->m_data[2] = t->m_rec_rd_word;
    o->m_data[3] = t->m_rec_wr_slot;
    o->m_data[4] = t->m_rec_wr_word;
    get(t->m_rec_wr_data, o->m_data + 5);
    o->m_data[7] = t->m_buf_wr_addr;
    get(t->m_buf_wr_data, o->m_data + 8);
    o->m_data[10] = t->m_buf_rd_addr;
    get(t->m_rd_desc_pcie_addr, o->m_data + 11);
    o->m_data[13] = t->m_rd_desc_ram_addr;
    o->m_data[14] = t->m_rd_desc_len;
    o->m_data[15] = t->m_rd_desc_id;
    get(t->m_wr_desc_pcie_addr, o->m_data + 16);
    o->m_data[18] = t->m_wr_desc_ram_addr;
    o->m_data[19] = t->m_wr_desc_len;
    o->m_data[20] = t->m_wr_desc_id;
    o->s_ready = t->s_fill_ready;
    o->m_valid = static_cast<uint8_t>(t->m_done_valid | (t->m_done_ok << 1)
        | (t->m_rec_rd_valid << 2) | (t->m_rec_wr_valid << 3) | (t->m_buf_wr_en << 4)
        | (t->m_buf_rd_en << 5) | (t->m_rd_desc_valid << 6) | (t->m_wr_desc_valid << 7));
    o->m_last = static_cast<uint8_t>(t->stat_fill | (t->stat_wb << 1) | (t->stat_fail << 2)
        | (t->stat_oob << 3) | (t->busy << 4) | (t->err_proto << 5));
#elif BLK_KIND == 24
    o->m_data[0] = t->m_lk_slot;
    o->m_data[1] = t->m_lk_qpn;
    o->m_data[2] = t->m_lk_id;
    o->m_data[3] = t->m_rec_rd_slot;
    o->m_data[4] = t->m_rec_rd_word;
    o->m_data[5] = t->m_rec_wr_slot;
    o->m_data[6] = t->m_rec_wr_word;
    get(t->m_rec_wr_data, o->m_data + 7);
    o->m_data[9] = t->m_buf_wr_addr;
    get(t->m_buf_wr_data, o->m_data + 10);
    o->m_data[12] = t->m_buf_rd_addr;
    get(t->m_rd_desc_pcie_addr, o->m_data + 13);
    o->m_data[15] = t->m_rd_desc_ram_addr;
    o->m_data[16] = t->m_rd_desc_len;
    o->m_data[17] = t->m_rd_desc_id;
    get(t->m_wr_desc_pcie_addr, o->m_data + 18);
    o->m_data[20] = t->m_wr_desc_ram_addr;
    o->m_data[21] = t->m_wr_desc_len;
    o->m_data[22] = t->stat_hwm;
    o->s_ready = t->s_lk_ready | (t->s_unpin_ready << 1) | (t->s_inval_ready << 2)
        | (t->m_lk_valid << 3) | (t->m_lk_err << 4) | (t->m_inval_done << 5)
        | (t->m_inval_busy << 6) | (t->sweeping << 7) | (t->busy << 8) | (t->err_proto << 9);
    o->m_valid = static_cast<uint8_t>(t->m_rec_rd_valid | (t->m_rec_wr_valid << 1)
        | (t->m_buf_wr_en << 2) | (t->m_buf_rd_en << 3) | (t->m_rd_desc_valid << 4)
        | (t->m_wr_desc_valid << 5));
    o->m_last = static_cast<uint8_t>(t->stat_hit | (t->stat_miss << 1) | (t->stat_evict << 2)
        | (t->stat_wb << 3) | (t->stat_stall << 4) | (t->stat_fill << 5) | (t->stat_fail << 6)
        | (t->stat_oob << 7));
    o->m_sel = static_cast<uint8_t>(t->stat_wb_dma);
#elif BLK_KIND == 13 || BLK_KIND == 14
    get(t->m_hdr, o->m_data);
    get(t->m_data, o->m_data + 4);
    get(t->m_keep, o->m_data + 12);
    o->s_ready = t->s_ready;
    o->m_valid = t->m_valid;
    o->m_last = t->m_last;
#else
    get(t->out_data, o->m_data);
#endif
}

inline void set_clk(BLK_MODEL* t, int v) {
#if BLK_KIND == 12
    t->s_clk = v;
    t->m_clk = v;
#elif BLK_KIND != 3 && BLK_KIND != 7 && BLK_KIND != 10 && BLK_KIND != 16 && BLK_KIND != 17 \
    && BLK_KIND != 25
    t->clk = v;
#else
    (void)t;
    (void)v;
#endif
}

// The step's rising edge: the one clock, or for axis_async_fifo the clocks
// of the edge mask pad[0].
inline void rise(BLK_MODEL* t, const BlkPortsIn* in) {
#if BLK_KIND == 12
    t->s_clk = in->pad[0] & 1;
    t->m_clk = (in->pad[0] >> 1) & 1;
#else
    (void)in;
    set_clk(t, 1);
#endif
}

}  // namespace

extern "C" {

std::size_t BLK_PFX(in_size)() { return sizeof(BlkPortsIn); }
std::size_t BLK_PFX(out_size)() { return sizeof(BlkPortsOut); }

void* BLK_PFX(create)(uint32_t seed) {
    Sim* s = vl_sim_create<Sim>(seed, false, "blk");
    set_clk(s->top.get(), 0);
    return s;
}

void BLK_PFX(destroy)(void* h) { vl_sim_destroy(static_cast<Sim*>(h)); }

// The outputs for these inputs with the clock held low: no edge, no state
// change. Two peeks with inputs that differ in one port show whether an
// output depends on that port combinationally.
void BLK_PFX(peek)(void* h, const BlkPortsIn* in, BlkPortsOut* out) {
    Sim* s = static_cast<Sim*>(h);
    s->enter();
    BLK_MODEL* t = s->top.get();
    set_inputs(t, in);
    set_clk(t, 0);
    t->eval();
    get_outputs(t, out);
    out->sim_flags = sim_flags(*s->ctx);
}

// One clock cycle: the peek (inputs applied with clk low, the outputs the
// rising edge samples), then the rising edge. For the blocks without a clock (icrc_subst,
// tag_match, rc_message, path_pick, path_health, onehot_mux) just the evaluation; for
// axis_async_fifo the edges of the mask in pad[0].
void BLK_PFX(step)(void* h, const BlkPortsIn* in, BlkPortsOut* out) {
    BLK_PFX(peek)(h, in, out);
    Sim* s = static_cast<Sim*>(h);
    rise(s->top.get(), in);
    s->top->eval();
    out->sim_flags = sim_flags(*s->ctx);
}

}  // extern "C"
