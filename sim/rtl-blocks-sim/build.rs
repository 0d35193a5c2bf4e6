//! Verilates the small reusable blocks of hw/rtl (axis_register,
//! axis_arb_mux with arbiter, icrc_subst, ram_sdp, ram_sdp_copies, ram_rec,
//! rec_map, rec_port_mux,
//! mr_table, tag_match, onehot_mux, slot_allocator, mp_window, rc_message,
//! mp_deferred, axis_async_fifo, tlp_upsize, tlp_downsize, completer,
//! path_pick, path_health, ram_reset_sweep, read_reply, read_track,
//! atomic_replay, qp_cache, qpc_fill, qp_ctx_cache, qp_dir) once per
//! configuration of src/configs.rs and links every
//! model, the Verilator runtime and the thin C ABI (csrc/blocks.cpp) into
//! this crate. Seconds; a model whose sources and parameters did not change
//! is taken from OUT_DIR, so switching between planted bugs rebuilds only
//! the models a bug touches.
//!
//! Without Verilator the crate builds with no models:
//! `rtl_blocks_sim::MODEL_AVAILABLE` is false and the tests say they were
//! skipped. Knobs: `VERILATOR` (binary, default `verilator` on PATH);
//! `RTL_BLOCKS_MUTATION=<name>` builds the blocks with a planted bug (see
//! MUTATIONS below and README.md): some test must then fail.

use std::collections::hash_map::DefaultHasher;
use std::env;
use std::fs;
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::process::Command;

include!("src/configs.rs");

/// Planted bugs: (name, file, text, replacement). Each must make at least
/// one test fail (README.md has the table).
const MUTATIONS: &[(&str, &str, &str, &str)] = &[
    // qp_dir
    (
        "qd_rx_trusts_hint",
        "qp_dir.v",
        "wire out_holds = holds(rx_hint, out_qpn_reg);",
        "wire out_holds = {1'b0, out_qpn_reg} < DIR_END;",
    ),
    (
        "qd_bind_ignores_bound_number",
        "qp_dir.v",
        "wire qpn_taken = holds(cmd_hint, cmd_qpn);",
        "wire qpn_taken = 1'b0;",
    ),
    (
        "qd_unbind_keeps_bound",
        "qp_dir.v",
        "bound_reg[cslot] <= 1'b0;",
        "bound_reg[cslot] <= 1'b1;",
    ),
    (
        "qd_holds_no_slot_range",
        "qp_dir.v",
        "holds = {{(17-QN_W){1'b0}}, s} < NUM_Q17 && {1'b0, q} < DIR_END",
        "holds = {1'b0, q} < DIR_END",
    ),
    (
        "qd_lookup_trusts_hint",
        "qp_dir.v",
        "assign lk_hit = holds(lk_hint, lk_qpn);",
        "assign lk_hit = {1'b0, lk_qpn} < DIR_END;",
    ),
    (
        "qd_free_ignores_from",
        "qp_dir.v",
        "wire [NUM_Q-1:0] free_mask = ~bound_reg & ({NUM_Q{1'b1}} << free_from);",
        "wire [NUM_Q-1:0] free_mask = ~bound_reg;",
    ),
    (
        "qd_rx_addr_ignores_take",
        "qp_dir.v",
        "rx_addr = take ? s_pkt_dest_qp[QPN_W-1:0] : out_qpn_reg[QPN_W-1:0];",
        "rx_addr = out_qpn_reg[QPN_W-1:0];",
    ),
    // qpn_doorbell
    (
        "qdb_coalesce_into_ending",
        "qpn_doorbell.v",
        "&& !(done_cur && cur_reg == i[IX_W-1:0]);",
        ";",
    ),
    (
        "qdb_answer_while_dirty",
        "qpn_doorbell.v",
        "wire answer = run_reg && wait_reg == 3'd1 && !dirty_reg && !lk_busy;",
        "wire answer = run_reg && wait_reg == 3'd1 && !lk_busy;",
    ),
    (
        "qdb_full_drops",
        "qpn_doorbell.v",
        "wire done_cur = emit || drop || (fetched_not && !miss_full);",
        "wire done_cur = emit || drop || fetched_not;",
    ),
    (
        "qdb_emit_ignores_ready",
        "qpn_doorbell.v",
        "wire out_busy = (m_sq_valid || m_rq_valid) && !m_ready;",
        "wire out_busy = 1'b0;",
    ),
    // qp_cache
    (
        "qpc_evicts_pinned",
        "qp_cache.v",
        "assign w_evok[g] = w_v[g] && !w_f[g] && w_p0[g];",
        "assign w_evok[g] = w_v[g] && !w_f[g];",
    ),
    (
        "qpc_fill_lowest_entry_first",
        "qp_cache.v",
        "    nf_idx = nfq[nfq_rp];",
        "    nf_idx = {QI_W{1'b0}};\n    for (i = MISSQ - 1; i >= 0; i = i - 1) if (q_nf[i]) nf_idx = i[QI_W-1:0];",
    ),
    (
        "qpc_no_forwarding",
        "qp_cache.v",
        "fwd2 <= s2_v && s2_set == s1_set;",
        "fwd2 <= 1'b0;",
    ),
    (
        "qpc_replay_overtakes_older",
        "qp_cache.v",
        "(s1_op == OP_LK || q_old[s1_qi][j])",
        "(s1_op == OP_LK)",
    ),
    (
        "qpc_lookup_overtakes_queued",
        "qp_cache.v",
        "(s1_op == OP_LK || q_old[s1_qi][j])",
        "(s1_op != OP_LK && q_old[s1_qi][j])",
    ),
    (
        "qpc_dirty_victim_no_wb",
        "qp_cache.v",
        "wire vic_wb = (vic_oh & w_v & w_d) != {WAYS{1'b0}};",
        "wire vic_wb = 1'b0;",
    ),
    (
        "qpc_failed_fill_no_err",
        "qp_cache.v",
        "            q_err[i] <= 1'b1;",
        "            q_err[i] <= 1'b0;",
    ),
    (
        "qpc_set_index_off_by_one",
        "qp_cache.v",
        "s0_set = s_lk_qpn[SET_W-1:0];",
        "s0_set = s_lk_qpn[SET_W:1];",
    ),
    (
        "qpc_unpin_keeps_pin",
        "qp_cache.v",
        "up_g ? w_p[g] - 1'b1",
        "up_g ? w_p[g]",
    ),
    (
        "qpc_pin_not_counted",
        "qp_cache.v",
        "p_inc ? w_p[g] + 1'b1",
        "p_inc ? w_p[g]",
    ),
    (
        "qpc_pinned_not_dirty",
        "qp_cache.v",
        "w_d[g] | p_inc",
        "w_d[g]",
    ),
    (
        "qpc_fill_done_wakes_nothing",
        "qp_cache.v",
        "wake = s2_op == OP_FD || ",
        "wake = ",
    ),
    (
        "qpc_plru_not_updated",
        "qp_cache.v",
        "new_row = {touch ? plru_n : plru, new_ways};",
        "new_row = {plru, new_ways};",
    ),
    (
        "qpc_queue_overrun",
        "qp_cache.v",
        "wire q_room = q_need < MQ;",
        "wire q_room = q_need < MQ + 1;",
    ),
    (
        "qpc_inval_ignores_pins",
        "qp_cache.v",
        "(w_pres & ~w_p0)",
        "(w_pres & ~w_p0 & {WAYS{1'b0}})",
    ),
    (
        "qpc_no_reset_sweep",
        "qp_cache.v",
        ".wr_en(sw_on || wr_op),",
        ".wr_en(wr_op),",
    ),
    (
        "qpc_highest_invalid_way_first",
        "qp_cache.v",
        "    for (i = WAYS - 1; i >= 0; i = i - 1) begin\n        if (w_inv[i]) begin",
        "    for (i = 0; i < WAYS; i = i + 1) begin\n        if (w_inv[i]) begin",
    ),
    (
        "qpc_pin_count_wraps",
        "qp_cache.v",
        "pinfull = s2_pin && (w_pmax & w_pres) != {WAYS{1'b0}};",
        "pinfull = 1'b0 && s2_pin && (w_pmax & w_pres) != {WAYS{1'b0}};",
    ),
    // qpc_fill
    (
        "qfl_lost_wb_silent",
        "qpc_fill.v",
        "    if (take_fill && s_fill_wb && !wb_go) begin\n        err_proto <= 1'b1;",
        "    if (take_fill && s_fill_wb && !wb_go) begin\n        err_proto <= err_proto;",
    ),
    (
        "qfl_read_before_wb_status",
        "qpc_fill.v",
        "            if (wbp[c] && b_wbq[c] == b_qpn[i]) begin",
        "            if (1'b0 && wbp[c] && b_wbq[c] == b_qpn[i]) begin",
    ),
    (
        "qfl_save_reads_before_its_write_back",
        "qpc_fill.v",
        "            if (wbp[c] && b_wbq[c] == b_qpn[i]) begin",
        "            if (c != i && wbp[c] && b_wbq[c] == b_qpn[i]) begin",
    ),
    (
        "qfl_wb_skipped",
        "qpc_fill.v",
        "        st[free_idx] <= wb_go ? B_WBCP : B_RD;",
        "        st[free_idx] <= B_RD;",
    ),
    (
        "qfl_copy_out_word_short",
        "qpc_fill.v",
        "!cp_in && bw_take && cp_rsp == LAST_W;",
        "!cp_in && bw_take && cp_rsp == LAST_W - 1'b1;",
    ),
    (
        "qfl_oob_off_by_one",
        "qpc_fill.v",
        "oob[i] = {1'b0, b_qpn[i]} >= cfg_table_qps;",
        "oob[i] = {1'b0, b_qpn[i]} > cfg_table_qps;",
    ),
    (
        "qfl_slot_written_on_error",
        "qpc_fill.v",
        "st[ev_pick] <= b_ok[ev_pick] ? B_CPIN : B_DONE;",
        "st[ev_pick] <= B_CPIN;",
    ),
    (
        "qfl_done_ok_on_error",
        "qpc_fill.v",
        "b_ok[rs_b] <= !rs_err;",
        "b_ok[rs_b] <= 1'b1;",
    ),
    (
        "qfl_done_before_copy",
        "qpc_fill.v",
        "cp_in && rw_take && cp_rsp == LAST_W;",
        "cp_in && m_rec_wr_valid && cp_rsp == LAST_W;",
    ),
    (
        "qfl_status_wrong_buffer",
        "qpc_fill.v",
        "wire [BW-1:0] rs_b = s_rd_status_id[BW-1:0];",
        "wire [BW-1:0] rs_b = s_rd_status_id[BW-1:0] + 1'b1;",
    ),
    (
        "qfl_wb_status_not_awaited",
        "qpc_fill.v",
        "if (st[i] == B_DONE && !wbp[i]) begin",
        "if (st[i] == B_DONE) begin",
    ),
    (
        "qfl_wr_status_pops_newest",
        "qpc_fill.v",
        "        wbp[wq[0]] <= 1'b0;",
        "        wbp[wq[wq_last]] <= 1'b0;",
    ),
    (
        "qfl_read_into_wb_half",
        "qpc_fill.v",
        "m_rd_desc_ram_addr <= buf_addr(rd_pick, 1'b1, {CW{1'b0}});",
        "m_rd_desc_ram_addr <= buf_addr(rd_pick, 1'b0, {CW{1'b0}});",
    ),
    (
        "qfl_copy_in_before_copy_out",
        "qpc_fill.v",
        "if (st[i] == B_RD && rdn[i]) begin",
        "if ((st[i] == B_RD || st[i] == B_WBCP) && rdn[i]) begin",
    ),
    (
        "qfl_record_stride_half",
        "qpc_fill.v",
        "off = {{(64-QPN_W){1'b0}}, q} << RB_LOG;",
        "off = {{(64-QPN_W){1'b0}}, q} << (RB_LOG - 1);",
    ),
    (
        "qfl_copy_fifo_overrun",
        "qpc_fill.v",
        "cp_req != N_WORDS && q_fly < QD\n",
        "cp_req != N_WORDS && q_fly <= QD\n",
    ),
    (
        "qfl_buf_write_ignores_ready",
        "qpc_fill.v",
        "wire bw_take = m_buf_wr_en && m_buf_wr_ready;",
        "wire bw_take = m_buf_wr_en;",
    ),
    (
        "qfl_buf_read_ignores_ready",
        "qpc_fill.v",
        "wire br_take = m_buf_rd_en && m_buf_rd_ready;",
        "wire br_take = m_buf_rd_en;",
    ),
    // qp_ctx_cache
    (
        "qcc_fill_wb_forced_0",
        "qp_ctx_cache.v",
        ".s_fill_wb(fill_wb),",
        ".s_fill_wb(1'b0),",
    ),
    (
        "qcc_done_ok_forced_1",
        "qp_ctx_cache.v",
        ".s_fill_done_ok(done_ok),",
        ".s_fill_done_ok(1'b1),",
    ),
    (
        "qcc_rec_word_dropped",
        "qp_ctx_cache.v",
        "assign m_rec_wr_valid = rec_wr_valid;",
        "assign m_rec_wr_valid = rec_wr_valid && m_rec_wr_word != {WORD_W{1'b1}};",
    ),
    (
        "qcc_wb_to_filled_qpn",
        "qp_ctx_cache.v",
        ".s_fill_wb_qpn(fill_wb_qpn),",
        ".s_fill_wb_qpn(fill_qpn),",
    ),
    // tag_match
    (
        "tag_ignores_valid",
        "tag_match.v",
        "valid[i] && tags",
        "tags",
    ),
    (
        "tag_drops_top_bit",
        "tag_match.v",
        "tags[i*KEY_W +: KEY_W] == key",
        "(tags[i*KEY_W +: KEY_W] & ({KEY_W{1'b1}} >> 1)) == (key & ({KEY_W{1'b1}} >> 1))",
    ),
    (
        "tag_drops_bottom_bit",
        "tag_match.v",
        "tags[i*KEY_W +: KEY_W] == key",
        "tags[i*KEY_W +: KEY_W] >> 1 == key >> 1",
    ),
    (
        "tag_stride_one_short",
        "tag_match.v",
        "tags[i*KEY_W +: KEY_W] == key",
        "tags[i*(KEY_W-1) +: KEY_W] == key",
    ),
    // onehot_mux
    (
        "ohm_sel_ignored",
        "onehot_mux.v",
        "({W{sel[i]}} & in[i*W +: W])",
        "in[i*W +: W]",
    ),
    (
        "ohm_last_input_dropped",
        "onehot_mux.v",
        "for (i = 0; i < N; i = i + 1)",
        "for (i = 0; i < N - 1; i = i + 1)",
    ),
    (
        "ohm_stride_one_short",
        "onehot_mux.v",
        "({W{sel[i]}} & in[i*W +: W])",
        "({W{sel[i]}} & in[i*(W-1) +: W])",
    ),
    (
        "ohm_top_bit_dropped",
        "onehot_mux.v",
        "({W{sel[i]}} & in[i*W +: W])",
        "({W{sel[i]}} & in[i*W +: W] & ({W{1'b1}} >> 1))",
    ),
    // ram_reset_sweep
    (
        "sweep_misses_write_at_reset",
        "ram_reset_sweep.v",
        "sweep_reg <= dirty_reg || sweep_reg || wrote;",
        "sweep_reg <= dirty_reg || sweep_reg;",
    ),
    (
        "sweep_one_short",
        "ram_reset_sweep.v",
        "if (addr_reg == LAST) begin",
        "if (addr_reg + 1'b1 == LAST) begin",
    ),
    (
        "sweep_restart_keeps_addr",
        "ram_reset_sweep.v",
        "        addr_reg <= {ADDR_W{1'b0}};\n        dirty_reg",
        "        dirty_reg",
    ),
    (
        "sweep_dirty_kept",
        "ram_reset_sweep.v",
        "        dirty_reg <= 1'b0;",
        "        dirty_reg <= dirty_reg;",
    ),
    // slot_allocator
    (
        "alloc_take_ignored",
        "slot_allocator.v",
        "free_reg <= (free_reg & ~take_oh) | give;",
        "free_reg <= free_reg | give;",
    ),
    (
        "alloc_take_beats_give",
        "slot_allocator.v",
        "free_reg <= (free_reg & ~take_oh) | give;",
        "free_reg <= (free_reg | give) & ~take_oh;",
    ),
    (
        "alloc_rst_ignored",
        "slot_allocator.v",
        "        free_reg <= {SLOTS{1'b1}};",
        "        free_reg <= free_reg;",
    ),
    (
        "prienc_high_half_first",
        "priority_encoder.v",
        "assign index = valid_lo ? index_lo : LO_SPAN | index_hi;",
        "assign index = valid_hi ? LO_SPAN | index_hi : index_lo;",
    ),
    // mp_window
    (
        "mpw_dup_ignores_bitmap",
        "mp_window.v",
        "assign dup = psn_diff[23] || (psn_diff < MP_W24 && bmp_reg[psn_diff[MP_LOG-1:0]]);",
        "assign dup = psn_diff[23];",
    ),
    (
        "mpw_point_past_the_hole",
        "mp_window.v",
        "adv_reg <= hole ? {1'b0, hole_at} : ADV_ALL;",
        "adv_reg <= hole ? {1'b0, hole_at} + 1'b1 : ADV_ALL;",
    ),
    (
        "mpw_gap_not_capped",
        "mp_window.v",
        "wire [23:0] gap = GAP24 < (win >> 1) ? GAP24 : (win >> 1);",
        "wire [23:0] gap = GAP24;",
    ),
    (
        "mpw_lost_past_the_cut",
        "mp_window.v",
        "lost_reg[k] <= !bmp_new_reg[k+1] && k + 1 <= cut_reg;",
        "lost_reg[k] <= !bmp_new_reg[k+1] && k <= cut_reg;",
    ),
    (
        "mpw_renak_within_a_gap",
        "mp_window.v",
        "renak_reg <= {2'b00, top_reg} >= {1'b0, span_reg} + {gap_w, 1'b0};",
        "renak_reg <= {2'b00, top_reg} >= {1'b0, span_reg} + {1'b0, gap_w};",
    ),
    (
        "mpw_span_ignored",
        "mp_window.v",
        "recovered_reg <= adv_reg >= span_reg;",
        "recovered_reg <= adv_reg != 0;",
    ),
    (
        "mpw_due_at_the_point",
        "mp_window.v",
        "due_reg <= pend_v && pend_off < adv24;",
        "due_reg <= pend_v && pend_off <= adv24;",
    ),
    // rc_message
    (
        "rcm_only_keeps_message",
        "rc_message.v",
        "assign msg_set = op_first || op_last || op_only || op_is_read;",
        "assign msg_set = op_first || op_last || op_is_read;",
    ),
    (
        "rcm_middle_of_any_kind",
        "rc_message.v",
        "|| ((op_middle || op_last) && msg != (op_is_write ? MSG_WRITE : MSG_SEND))",
        "|| ((op_middle || op_last) && msg == MSG_IDLE)",
    ),
    (
        "rcm_access_before_sequence",
        "rc_message.v",
        "assign rem_access = !inv_before && access_bad;",
        "assign rem_access = access_bad;",
    ),
    (
        "rcm_write_last_short",
        "rc_message.v",
        "|| (op_is_write && op_last && plen32 != remain)",
        "|| (op_is_write && op_last && plen32 > remain)",
    ),
    // mp_deferred
    (
        "mpd_first_by_arrival",
        "mp_deferred.v",
        "before_reg[pick] <= new_before & mine;",
        "before_reg[pick] <= mine;",
    ),
    (
        "mpd_drop_frees_asked_qp",
        "mp_deferred.v",
        "dropped[i] = !free[i] && slot_qpn_reg[i] == drop_qpn;",
        "dropped[i] = !free[i] && slot_qpn_reg[i] == qpn;",
    ),
    (
        "mpd_done_keeps_slot",
        "mp_deferred.v",
        "wire [MP_PEND-1:0] give = (done ? first : {MP_PEND{1'b0}})",
        "wire [MP_PEND-1:0] give = {MP_PEND{1'b0}}",
    ),
    (
        "mpd_full_one_late",
        "mp_deferred.v",
        "assign full = count >= WIMM_C;",
        "assign full = count > WIMM_C;",
    ),
    // axis_register
    (
        "skid_drops_beat_on_stall",
        "axis_register.v",
        "skid_valid_next = s_valid;",
        "skid_valid_next = 1'b0;",
    ),
    (
        "skid_keeps_beat_after_use",
        "axis_register.v",
        "        skid_valid_next = 1'b0;\n        store_skid_to_out = 1'b1;",
        "        store_skid_to_out = 1'b1;",
    ),
    (
        "skid_ready_ignores_full_skid",
        "axis_register.v",
        "wire s_ready_early = m_ready || (!skid_valid_reg && (!out_valid_reg || !s_valid));",
        "wire s_ready_early = m_ready || !out_valid_reg || !s_valid;",
    ),
    (
        "skid_half_rate",
        "axis_register.v",
        "wire s_ready_early = m_ready || (!skid_valid_reg && (!out_valid_reg || !s_valid));",
        "wire s_ready_early = !skid_valid_reg && (!out_valid_reg || !s_valid);",
    ),
    (
        "skid_ready_not_registered",
        "axis_register.v",
        "assign s_ready = s_ready_reg;",
        "assign s_ready = s_ready_reg && (m_ready || !out_valid_reg);",
    ),
    // arbiter / axis_arb_mux
    (
        "arb_never_holds",
        "arbiter.v",
        "locked_reg <= !(take && last);",
        "locked_reg <= 1'b0;",
    ),
    (
        "arb_holds_only_once_taken",
        "arbiter.v",
        "    if (grant_valid) begin\n        locked_reg",
        "    if (grant_valid && take) begin\n        locked_reg",
    ),
    (
        "arb_keeps_withdrawn_offer",
        "arbiter.v",
        "end else if (!started_reg) begin",
        "end else if (1'b0) begin",
    ),
    (
        "arb_releases_mid_packet",
        "arbiter.v",
        "end else if (!started_reg) begin",
        "end else begin",
    ),
    (
        "rr_does_not_rotate",
        "arbiter.v",
        "after_reg <= ({PORTS{1'b1}} << pick_index) << 1;",
        "after_reg <= {PORTS{1'b0}};",
    ),
    (
        "rr_last_choice_stays_first",
        "arbiter.v",
        "after_reg <= ({PORTS{1'b1}} << pick_index) << 1;",
        "after_reg <= {PORTS{1'b1}} << pick_index;",
    ),
    (
        "fixed_priority_wrong",
        "arbiter.v",
        ".in(request),\n            .valid(pick_valid),",
        ".in(request & ~(request >> 1)),\n            .valid(pick_valid),",
    ),
    (
        "mux_last_from_any_port",
        "axis_arb_mux.v",
        "mux_last = s_last[i];",
        "mux_last = |(s_last & s_valid);",
    ),
    (
        "mux_out_reg_ignored",
        "axis_arb_mux.v",
        "if (OUT_REG != 0) begin : g_reg",
        "if (OUT_REG > 1) begin : g_reg",
    ),
    // icrc_subst
    (
        "icrc_forgets_ttl",
        "icrc_subst.v",
        "f == 15 || f == 22 || f == 24",
        "f == 15 || f == 24",
    ),
    (
        "icrc_forgets_bth_byte4",
        "icrc_subst.v",
        "f == 40 || f == 41 || f == 46;",
        "f == 40 || f == 41;",
    ),
    (
        "icrc_lrh_pattern_all_ones",
        "icrc_subst.v",
        "(is_sub(f) && (f < 4 || f >= 10)) ? 8'hFF : 8'h00;",
        "is_sub(f) ? 8'hFF : 8'h00;",
    ),
    // ram_sdp
    (
        "ram_read_first",
        "ram_sdp.v",
        "rd_data_reg <= wr_en && wr_addr == rd_addr ? wr_data : mem[rd_addr];",
        "rd_data_reg <= mem[rd_addr];",
    ),
    (
        "ram_forwards_without_write",
        "ram_sdp.v",
        "rd_data_reg <= wr_en && wr_addr == rd_addr ? wr_data : mem[rd_addr];",
        "rd_data_reg <= wr_addr == rd_addr ? wr_data : mem[rd_addr];",
    ),
    (
        "ram_read_not_registered",
        "ram_sdp.v",
        "assign rd_data = rd_data_reg;",
        "assign rd_data = mem[rd_addr];",
    ),
    // ram_sdp_copies
    (
        "copies_slice_from_bit_0",
        "ram_sdp_copies.v",
        ".wr_data(wr_data[LSB +: W]),",
        ".wr_data(wr_data[W-1:0]),",
    ),
    (
        "copies_init_not_sliced",
        "ram_sdp_copies.v",
        ".INIT(INIT[LSB +: W])",
        ".INIT(INIT[W-1:0])",
    ),
    (
        "copies_read_port_0_address",
        "ram_sdp_copies.v",
        ".rd_addr(rd_addr[p*ADDR_W +: ADDR_W]),",
        ".rd_addr(rd_addr[ADDR_W-1:0]),",
    ),
    (
        "copies_last_port_not_written",
        "ram_sdp_copies.v",
        ".wr_en(wr_en),",
        ".wr_en(wr_en && p + 1 < N_RD),",
    ),
    // ram_rec
    (
        "rec_wr_beats_module_write",
        "ram_rec.v",
        "wire rec_wr_go = rec_wr_en && rec_wr_ready;",
        "wire rec_wr_go = rec_wr_en;",
    ),
    (
        "rec_copy_not_transparent",
        "ram_rec.v",
        "ram_sdp #(\n    .DATA_W(DATA_W),\n    .ADDR_W(ADDR_W),\n    .DEPTH(DEPTH),\n    \
         .INIT(INIT)\n) rec_inst (\n    .clk(clk),\n    .wr_en(w_en),\n    .wr_addr(w_addr),\n    \
         .wr_data(w_data),\n    .rd_addr(rec_rd_addr),\n    .rd_data(rec_rd_data)\n);",
        "reg [DATA_W-1:0] rec_mem [0:DEPTH-1];\nreg [DATA_W-1:0] rec_q = INIT;\ninteger m;\n\
         initial for (m = 0; m < DEPTH; m = m + 1) rec_mem[m] = INIT;\n\
         always @(posedge clk) begin\n    if (w_en) rec_mem[w_addr] <= w_data;\n    \
         rec_q <= rec_mem[rec_rd_addr];\nend\nassign rec_rd_data = rec_q;",
    ),
    (
        "rec_wr_skips_record_copy",
        "ram_rec.v",
        ") rec_inst (\n    .clk(clk),\n    .wr_en(w_en),",
        ") rec_inst (\n    .clk(clk),\n    .wr_en(wr_en),",
    ),
    (
        "rec_wr_skips_port_copies",
        "ram_rec.v",
        ") copies_inst (\n    .clk(clk),\n    .wr_en(w_en),",
        ") copies_inst (\n    .clk(clk),\n    .wr_en(wr_en),",
    ),
    // rec_map
    (
        "rmap_word_off_by_one",
        "rec_map.v",
        "        rec_off = 0;",
        "        rec_off = r > 0 ? 1 : 0;",
    ),
    (
        "rmap_write_on_first_word",
        "rec_map.v",
        "wire            wr_start = wr_take && !wr_pad && wr_end;",
        "wire            wr_start = wr_take && !wr_pad && wr_idx == {SI_W{1'b0}};",
    ),
    (
        "rmap_wr_en_kept",
        "rec_map.v",
        "    if (wr_done) begin\n        rec_wr_en <= {N_REC{1'b0}};",
        "    if (wr_done) begin\n        rec_wr_en <= rec_wr_en;",
    ),
    (
        "rmap_pad_reads_record_bit",
        "rec_map.v",
        "        assign rd_view[gw*64 +: 64] = 64'd0;",
        "        assign rd_view[gw*64 +: 64] = {63'd0, rec_rd_data[0]};",
    ),
    (
        "rmap_stage_keeps_old_word",
        "rec_map.v",
        "if (wr_take && !wr_pad && {{(32-SI_W){1'b0}}, wr_idx} == j) begin",
        "if (wr_take && !wr_pad && j > 0 && {{(32-SI_W){1'b0}}, wr_idx} == j) begin",
    ),
    // rec_port_mux
    (
        "rpm_ready_from_any_port",
        "rec_port_mux.v",
        "assign s_rec_rd_ready = |(p_rd_ready & rd_sel);",
        "assign s_rec_rd_ready = |p_rd_ready;",
    ),
    (
        "rpm_answer_not_registered",
        "rec_port_mux.v",
        "always @(posedge clk) begin\n    m_rec_rd_data_valid <= !rst && |p_rd_data_valid;\n    \
         m_rec_rd_data <= ans;\nend",
        "always @* begin\n    m_rec_rd_data_valid = !rst && |p_rd_data_valid;\n    \
         m_rec_rd_data = ans;\nend",
    ),
    (
        "rpm_owner_off_by_one",
        "rec_port_mux.v",
        "owner[k] = w32 >= base(k) && w32 < base(k) + size(k);",
        "owner[k] = w32 >= base(k) && w32 <= base(k) + size(k);",
    ),
    (
        "rpm_wr_valid_not_gated",
        "rec_port_mux.v",
        "assign p_wr_valid = s_rec_wr_valid ? wr_sel : {N{1'b0}};",
        "assign p_wr_valid = wr_sel;",
    ),
    (
        "rpm_answer_ignores_data_valid",
        "rec_port_mux.v",
        "ans = ans | (p_rd_data_valid[a] ? p_rd_data[a*64 +: 64] : 64'd0);",
        "ans = ans | p_rd_data[a*64 +: 64];",
    ),
    (
        "rpm_reset_keeps_answer",
        "rec_port_mux.v",
        "m_rec_rd_data_valid <= !rst && |p_rd_data_valid;",
        "m_rec_rd_data_valid <= |p_rd_data_valid;",
    ),
    (
        "rpm_busy_of_port_0",
        "rec_port_mux.v",
        "assign rec_wr_busy = |p_wr_busy;",
        "assign rec_wr_busy = p_wr_busy[0];",
    ),
    // mr_table
    (
        "mr_end_not_checked",
        "mr_table.v",
        "&& a_va >= a_ent_va_reg && a_end_reg <= a_ent_va_end_reg;",
        "&& a_va >= a_ent_va_reg;",
    ),
    (
        "mr_start_not_checked",
        "mr_table.v",
        "&& b_va >= b_ent_va_reg && b_end_reg <= b_ent_va_end_reg;",
        "&& b_end_reg <= b_ent_va_end_reg;",
    ),
    (
        "mr_end_exclusive",
        "mr_table.v",
        "&& a_va >= a_ent_va_reg && a_end_reg <= a_ent_va_end_reg;",
        "&& a_va >= a_ent_va_reg && a_end_reg < a_ent_va_end_reg;",
    ),
    (
        "mr_end_wraps_at_64_bits",
        "mr_table.v",
        "a_end_reg <= {1'b0, a_va} + {33'd0, a_len};",
        "a_end_reg <= {1'b0, a_va + {32'd0, a_len}};",
    ),
    (
        "mr_region_end_wraps_at_64_bits",
        "mr_table.v",
        "va_end_mem[reg_sel[IDX_W-1:0]] <= {1'b0, reg_va} + {33'd0, reg_len};",
        "va_end_mem[reg_sel[IDX_W-1:0]] <= {1'b0, reg_va + {32'd0, reg_len}};",
    ),
    (
        "mr_guard_ignores_len",
        "mr_table.v",
        "&& c_bus >= c_ent_bus_reg && c_end <= c_ent_bus_end_reg;",
        "&& c_bus >= c_ent_bus_reg && {1'b0, c_bus} < c_ent_bus_end_reg;",
    ),
    (
        "mr_bus_delta_reversed",
        "mr_table.v",
        "delta_mem[reg_sel[IDX_W-1:0]] <= reg_bus - reg_va;",
        "delta_mem[reg_sel[IDX_W-1:0]] <= reg_va - reg_bus;",
    ),
    (
        "mr_low_key_byte_ignored",
        "mr_table.v",
        "&& ent_valid && ent_key == key",
        "&& ent_valid && ent_key[31:8] == key[31:8]",
    ),
    (
        "mr_rewrite_reads_valid",
        "mr_table.v",
        "a_ent_valid_reg <= valid_reg[a_idx] && !(rewrite && reg_sel[IDX_W-1:0] == a_idx) && !rst;",
        "a_ent_valid_reg <= valid_reg[a_idx] && !rst;",
    ),
    (
        "mr_access_any_bit",
        "mr_table.v",
        "&& ent_pd == pd && (ent_access & access) == access;",
        "&& ent_pd == pd && ((ent_access & access) != 0 || access == 0);",
    ),
    // axis_async_fifo
    (
        "afifo_full_one_late",
        "axis_async_fifo.v",
        "wire [PW-1:0] rd_bin_s = gray2bin(rd_gray_s2_reg);",
        "wire [PW-1:0] rd_bin_s = gray2bin(rd_gray_s2_reg) + 1'b1;",
    ),
    (
        "afifo_empty_ignores_sync",
        "axis_async_fifo.v",
        "wire empty = rd_gray_reg == wr_gray_m2_reg;",
        "wire empty = rd_gray_reg == wr_gray_m1_reg;",
    ),
    (
        "afifo_full_ignores_sync",
        "axis_async_fifo.v",
        "wire [PW-1:0] rd_bin_s = gray2bin(rd_gray_s2_reg);",
        "wire [PW-1:0] rd_bin_s = gray2bin(rd_gray_s1_reg);",
    ),
    (
        "afifo_rd_gray_of_old_pointer",
        "axis_async_fifo.v",
        "rd_gray_reg <= bin2gray(rd_bin_inc);",
        "rd_gray_reg <= bin2gray(rd_bin_reg);",
    ),
    (
        "afifo_read_ignores_write_reset",
        "axis_async_fifo.v",
        "wire m_clear = m_rst || s_rst_at_m[1];",
        "wire m_clear = m_rst;",
    ),
    (
        "afifo_write_ignores_read_reset",
        "axis_async_fifo.v",
        "wire s_clear = s_rst || m_rst_at_s[1];",
        "wire s_clear = s_rst;",
    ),
    // completer
    (
        "cmp_cqe_passes_the_hold",
        "completer.v",
        "assign m_acq_valid = c_state_reg == C_CQE && !cqe_hold;",
        "assign m_acq_valid = c_state_reg == C_CQE;",
    ),
    (
        "cmp_covered_one_early",
        "completer.v",
        "wire c_cov_now = (c_limit_next - entry_last_psn) < 24'h800000;",
        "wire c_cov_now = (c_limit_next + 24'd1 - entry_last_psn) < 24'h800000;",
    ),
    (
        "cmp_nak_at_sent_counts",
        "completer.v",
        "    c_nak_ok_reg <= c_psn_reg - c_una_reg < outstanding_c;",
        "    c_nak_ok_reg <= c_psn_reg - c_una_reg <= outstanding_c;",
    ),
    (
        "cmp_flush_all_with_first_status",
        "completer.v",
        "                    c_err_status_reg <= WC_STATUS_WR_FLUSH_ERR;\n                    c_state_reg <= C_ERR;",
        "                    c_state_reg <= C_ERR;",
    ),
    (
        "cmp_ack_keeps_retry_count",
        "completer.v",
        "                req_rleft = retry_init;\n",
        "",
    ),
    (
        "cmp_rnr_timer_ignored",
        "completer.v",
        "assign stamp_wd = c_state_reg == C_RNR ? now + rnr_ticks(c_syn_reg[4:0]) : now;",
        "assign stamp_wd = now;",
    ),
    (
        "cmp_seq_nak_asks_again",
        "completer.v",
        "    && !(rtx_req && c_una_reg == c_psn_reg);",
        "    ;",
    ),
    (
        "cmp_same_psn_keeps_paths",
        "completer.v",
        "                        req_rot = rot + 6'd1;\n                    end\n                end",
        "                        req_rot = rot;\n                    end\n                end",
    ),
    (
        "cmp_lost_of_next_ack",
        "completer.v",
        "                c_lost_reg <= ackl[ackq_rd_reg[1:0]];",
        "                c_lost_reg <= ackl[ackq_rd_reg[1:0] + 2'd1];",
    ),
    (
        "cmp_timed_bitmap_ignored",
        "completer.v",
        "    tm_named_reg <= !timed_bare && (timed_psn == c_psn_reg\n        || (timed_after",
        "    tm_named_reg <= !timed_bare && (timed_psn == c_psn_reg\n        || (1'b0 && timed_after",
    ),
    (
        "cmp_probe_settled_by_ack",
        "completer.v",
        "    tm_acked_reg <= !timed_bare && (timed_psn",
        "    tm_acked_reg <= (timed_psn",
    ),
    (
        "cmp_probe_reply_any_psn",
        "completer.v",
        "    tm_reply_reg <= timed_bare && c_syn_reg == ACK_SYN_PROBE_REPLY && timed_psn == c_psn_reg;",
        "    tm_reply_reg <= timed_bare && c_syn_reg == ACK_SYN_PROBE_REPLY;",
    ),
    (
        "cmp_probe_lost_ignored",
        "completer.v",
        "wire timed_fail = (timed_v && timed_bare && c_state_reg == C_PFAIL)",
        "wire timed_fail = (1'b0 && c_state_reg == C_PFAIL)",
    ),
    (
        "cmp_blame_ignores_spray",
        "completer.v",
        "    .spray_log(phr_spray_reg),\n    .avoid(phr_down_reg),",
        "    .spray_log(3'd6),\n    .avoid(phr_down_reg),",
    ),
    (
        "cmp_chg_kept",
        "completer.v",
        "        || (c_state_reg == C_TMO && tmo_takes_reg)) ? sent_now + 24'd2 : phr_chg_reg;",
        "        || (c_state_reg == C_TMO && tmo_takes_reg)) ? phr_chg_reg : phr_chg_reg;",
    ),
    (
        "cmp_flush_takes_loaded_status",
        "completer.v",
        "if (perr_valid_reg && perr_qpn_reg == scan_q && !(load && load_qpn == scan_q)) begin",
        "if (perr_valid_reg && perr_qpn_reg == scan_q) begin",
    ),
    // path_pick, path_health
    (
        "pick_onto_inactive_path",
        "path_pick.v",
        "wire [7:0] blocked = avoid | ~active;",
        "wire [7:0] blocked = avoid;",
    ),
    (
        "health_no_cap",
        "path_health.v",
        "if (thresh != 2'd0 && b_next >= thresh && n_out < n_cap) begin",
        "if (thresh != 2'd0 && b_next >= thresh) begin",
    ),
    (
        "health_off_takes_out",
        "path_health.v",
        "if (thresh != 2'd0 && b_next >= thresh && n_out < n_cap) begin",
        "if (b_next >= thresh && n_out < n_cap) begin",
    ),
    (
        "health_counts_across_epochs",
        "path_health.v",
        "wire [15:0] loss_cur = lepo == epoch[1:0] ? loss : 16'd0;",
        "wire [15:0] loss_cur = loss;",
    ),
    (
        "health_failed_probe_keeps_hold",
        "path_health.v",
        "    end else if (timed_fail && timed_probe) begin\n        hold_next = epoch;",
        "    end else if (timed_fail && timed_probe) begin\n        hold_next = hold;",
    ),
    (
        "health_failed_probe_keeps_wait",
        "path_health.v",
        "back_next = back == 2'd3 ? 2'd3 : back + 2'd1;",
        "back_next = back;",
    ),
    // tlp_upsize
    (
        "tlpup_last_low_keeps_high",
        "tlp_upsize.v",
        "out_keep_reg <= {{KW{1'b0}}, s_keep};",
        "out_keep_reg <= {out_keep_reg[2*KW-1:KW], s_keep};",
    ),
    (
        "tlpup_hdr_of_second_beat",
        "tlp_upsize.v",
        "wire [127:0] hdr_now = in_tlp_reg ? tlp_hdr_reg : s_hdr;",
        "wire [127:0] hdr_now = s_hdr;",
    ),
    // tlp_downsize
    (
        "tlpdown_skips_high_half",
        "tlp_downsize.v",
        "wire final_half = high_reg || !hi_kept;",
        "wire final_half = 1'b1;",
    ),
    (
        "tlpdown_last_on_low_half",
        "tlp_downsize.v",
        "assign m_last = last_reg && final_half;",
        "assign m_last = last_reg;",
    ),
    // read_reply
    (
        "rr_slot_freed_at_push",
        "read_reply.v",
        "    if (s_done) begin\n        slot_done_reg <= slot_done_reg + 1'b1;",
        "    if (push_go) begin\n        slot_done_reg <= slot_done_reg + 1'b1;",
    ),
    (
        "rr_await_not_advanced",
        "read_reply.v",
        "        await_rd_reg <= await_rd_reg + 1'b1;",
        "        await_rd_reg <= await_rd_reg;",
    ),
    (
        "rr_first_last_swapped",
        "read_reply.v",
        "K_FIRST: kind_opcode = OP_RESP_FIRST;\n            K_MIDDLE: kind_opcode = OP_RESP_MIDDLE;\n            K_LAST: kind_opcode = OP_RESP_LAST;",
        "K_FIRST: kind_opcode = OP_RESP_LAST;\n            K_MIDDLE: kind_opcode = OP_RESP_MIDDLE;\n            K_LAST: kind_opcode = OP_RESP_FIRST;",
    ),
    (
        "rr_exact_pmtu_extra_packet",
        "read_reply.v",
        "wire iss_last = iss_remain_reg <= {19'd0, iss_pmtu_reg};",
        "wire iss_last = iss_remain_reg < {19'd0, iss_pmtu_reg};",
    ),
    (
        "rr_last_len_12_bits",
        "read_reply.v",
        "wire [12:0] iss_chunk = iss_last ? iss_remain_reg[12:0] : iss_pmtu_reg;",
        "wire [12:0] iss_chunk = iss_last ? {1'b0, iss_remain_reg[11:0]} : iss_pmtu_reg;",
    ),
    (
        "rr_read_error_ignored",
        "read_reply.v",
        "slot_err_reg[await_head] <= s_rd_status_error != 4'd0;",
        "slot_err_reg[await_head] <= 1'b0;",
    ),
    (
        "rr_msn_of_issuing_job",
        "read_reply.v",
        "pkt_msn_reg <= job_msn[push_job];",
        "pkt_msn_reg <= job_msn[job_iss_reg[JW-1:0]];",
    ),
    (
        "rr_busy_ends_at_push",
        "read_reply.v",
        "assign busy = job_wr_reg != job_ret_reg || pkt_valid_reg;",
        "assign busy = job_wr_reg != job_ret_reg;",
    ),
    (
        "rr_ack_job_reads_payload",
        "read_reply.v",
        "iss_remain_reg <= job_ack[job_iss_reg[JW-1:0]] ? 32'd0 : job_len[job_iss_reg[JW-1:0]];",
        "iss_remain_reg <= job_len[job_iss_reg[JW-1:0]];",
    ),
    (
        "rr_ack_job_syndrome_lost",
        "read_reply.v",
        "pkt_syn_reg <= job_syn[push_job];",
        "pkt_syn_reg <= 8'h1F;",
    ),
    (
        "rr_ack_flag_not_stored",
        "read_reply.v",
        "job_ack[job_wr_reg[JW-1:0]] <= s_job_ack;",
        "job_ack[job_wr_reg[JW-1:0]] <= 1'b0;",
    ),
    (
        "rr_ack_job_not_counted",
        "read_reply.v",
        "pkt_last_reg <= push_kind == K_ONLY || push_kind == K_LAST;",
        "pkt_last_reg <= (push_kind == K_ONLY || push_kind == K_LAST) && !job_ack[push_job];",
    ),
    // read_reply's atomics (ATOMIC_EN)
    (
        "rr_atom_issue_not_blocked",
        "read_reply.v",
        "wire iss_go = iss_active_reg && slot_free && (!rd_valid_reg || m_rd_desc_ready) && !atom_busy;",
        "wire iss_go = iss_active_reg && slot_free && (!rd_valid_reg || m_rd_desc_ready);",
    ),
    (
        "rr_cmp_swap_inverted",
        "read_reply.v",
        "atom_new_reg <= atom_orig_reg == job_opa[atom_job_reg] ? job_opb[atom_job_reg] : atom_orig_reg;",
        "atom_new_reg <= atom_orig_reg != job_opa[atom_job_reg] ? job_opb[atom_job_reg] : atom_orig_reg;",
    ),
    (
        "rr_fetch_add_swaps",
        "read_reply.v",
        "atom_new_reg <= atom_orig_reg + job_opa[atom_job_reg];",
        "atom_new_reg <= job_opb[atom_job_reg];",
    ),
    (
        "rr_snoop_ignores_strobes",
        "read_reply.v",
        "if (s_snoop_strb[k]) begin",
        "if (1'b1) begin",
    ),
    (
        "rr_snoop_any_address",
        "read_reply.v",
        "if (atom_st_reg == AS_READ && s_snoop_en && s_snoop_addr == atom_word_reg) begin",
        "if (atom_st_reg == AS_READ && s_snoop_en) begin",
    ),
    (
        "rr_atom_ack_before_write_status",
        "read_reply.v",
        "    if (atom_st_reg == AS_DESC && m_wr_desc_ready) begin\n        atom_st_reg <= AS_WAIT;\n",
        "    if (atom_st_reg == AS_DESC && m_wr_desc_ready) begin\n        atom_st_reg <= AS_WAIT;\n        slot_ready_reg[atom_slot_reg] <= 1'b1;\n",
    ),
    (
        "rr_atom_done_at_write_issue",
        "read_reply.v",
        "assign atom_done = atom_st_reg == AS_WAIT && s_wr_status_valid;",
        "assign atom_done = atom_st_reg == AS_DESC && m_wr_desc_ready;",
    ),
    (
        "rr_failed_atomic_written_back",
        "read_reply.v",
        "atom_st_reg <= s_rd_status_error != 4'd0 ? AS_IDLE : AS_CALC;",
        "atom_st_reg <= AS_CALC;",
    ),
    (
        "rr_replay_answers_last_orig",
        "read_reply.v",
        "pkt_orig_reg <= job_opa[push_job];",
        "pkt_orig_reg <= atom_orig_reg;",
    ),
    (
        "rr_rec_psn_of_issuing_job",
        "read_reply.v",
        "assign m_rec_psn = job_psn[atom_job_reg];",
        "assign m_rec_psn = job_psn[job_iss_reg[JW-1:0]];",
    ),
    // atomic_replay
    (
        "ar_lookup_ignores_valid",
        "atomic_replay.v",
        "match[i] = arm_l[ARM_VALID_LSB + i]\n",
        "match[i] = 1'b1\n",
    ),
    (
        "ar_ring_stuck",
        "atomic_replay.v",
        "arm_wd[ARM_NEXT_LSB +: ARM_NEXT_W] = rec_slot + 1'b1;",
        "arm_wd[ARM_NEXT_LSB +: ARM_NEXT_W] = rec_slot;",
    ),
    (
        "ar_clear_not_written",
        "atomic_replay.v",
        ".wr_en(s_clr_valid || rec_write),",
        ".wr_en(rec_write),",
    ),
    (
        "ar_waiting_record_not_dropped",
        "atomic_replay.v",
        "pend_drop_reg <= 1'b1;",
        "pend_drop_reg <= 1'b0;",
    ),
    (
        "ar_same_cycle_record_not_dropped",
        "atomic_replay.v",
        "pend_drop_reg <= s_clr_valid && s_clr_qpn == s_rec_qpn;",
        "pend_drop_reg <= 1'b0;",
    ),
    (
        "ar_record_ignores_clear",
        "atomic_replay.v",
        "wire rec_go = pend_reg && !s_clr_valid;",
        "wire rec_go = pend_reg;",
    ),
    (
        "ar_answer_one_cycle_early",
        "atomic_replay.v",
        "assign lk_hit = hit_reg;\nassign lk_orig = orig_reg;",
        "assign lk_hit = hit_next;\nassign lk_orig = orig_next;",
    ),
    (
        "ar_psn_not_registered",
        "atomic_replay.v",
        "ARS_PSN_LSB +: ARS_PSN_W] == lk_psn_reg;",
        "ARS_PSN_LSB +: ARS_PSN_W] == lk_psn;",
    ),
    (
        "ar_record_in_next_slot",
        "atomic_replay.v",
        ".wr_en(rec_write && rec_slot == s_idx),",
        ".wr_en(rec_write && rec_slot + 1'b1 == s_idx),",
    ),
    (
        "ar_record_in_other_qp",
        "atomic_replay.v",
        "            .wr_addr(rec_qpn_reg),",
        "            .wr_addr(rec_qpn_reg ^ 1'b1),",
    ),
    (
        "ar_waiting_record_reads_other_qp",
        "atomic_replay.v",
        ".rd_addr({pend_reg ? rec_qpn_reg : s_rec_qpn, lk_qpn}),",
        ".rd_addr({s_rec_qpn, lk_qpn}),",
    ),
    (
        "ar_answer_through_reset",
        "atomic_replay.v",
        "assign lk_hit = hit_reg;",
        "assign lk_hit = hit_reg && !rst;",
    ),
    (
        "ar_lookup_reads_record_ring",
        "atomic_replay.v",
        ".rd_data({arm_r, arm_l})",
        ".rd_data({arm_l, arm_r})",
    ),
    (
        "ar_rst_keeps_waiting_record",
        "atomic_replay.v",
        "    if (rst) begin\n        pend_reg <= 1'b0;\n    end\n",
        "",
    ),
    (
        "ar_rst_keeps_answer",
        "atomic_replay.v",
        "    if (rst) begin\n        hit_reg <= 1'b0;\n        orig_reg <= 64'd0;\n    end\n",
        "",
    ),
    (
        "ar_rst_keeps_orig",
        "atomic_replay.v",
        "        hit_reg <= 1'b0;\n        orig_reg <= 64'd0;\n",
        "        hit_reg <= 1'b0;\n",
    ),
    (
        "ar_oldest_match_wins",
        "atomic_replay.v",
        "if (match[j] && age_j > age_s) begin",
        "if (match[j] && age_j < age_s) begin",
    ),
    (
        "ar_first_match_wins",
        "atomic_replay.v",
        "if (match[j] && age_j > age_s) begin",
        "if (match[j] && j < i) begin",
    ),
    (
        "ar_match_walk_from_slot_0",
        "atomic_replay.v",
        "wire [SW-1:0] l_next = arm_l[ARM_NEXT_LSB +: ARM_NEXT_W];",
        "wire [SW-1:0] l_next = {SW{1'b0}};",
    ),
    (
        "ar_orig_not_zero_on_miss",
        "atomic_replay.v",
        "    orig_next = 64'd0;\n",
        "    orig_next = orig_reg;\n",
    ),
    // read_track
    (
        "rt_cov_highest_index",
        "read_track.v",
        "if (cov_v[i] && (cov_v & e_before[i]) == {NUM_RD{1'b0}}) begin",
        "if (cov_v[i]) begin",
    ),
    (
        "rt_age_not_cleared",
        "read_track.v",
        "            e_before[i][free_idx] <= 1'b0;\n",
        "",
    ),
    (
        "rt_adv_keeps_asked",
        "read_track.v",
        "            e_next[i] <= adv_psn + 24'd1;\n            e_asked[i] <= 1'b0;\n",
        "            e_next[i] <= adv_psn + 24'd1;\n",
    ),
    (
        "rt_drop_ignores_qpn",
        "read_track.v",
        "|| (drop_valid && e_valid[i] && e_qpn[i] == drop_qpn)",
        "|| (drop_valid && e_valid[i])",
    ),
    (
        "rt_span_one_short",
        "read_track.v",
        "(lk_psn - e_first[i]) <= e_span[i]",
        "(lk_psn - e_first[i]) < e_span[i]",
    ),
    (
        "rt_nak_covers_its_psn",
        "read_track.v",
        "d = lk_psn - e_next[i] - {23'd0, lk_nak};",
        "d = lk_psn - e_next[i];",
    ),
    (
        "rt_cov_of_placed_read",
        "read_track.v",
        "cov_v[i] = e_valid[i] && !e_done[i] && e_qpn[i] == lk_qpn && !d[23];",
        "cov_v[i] = e_valid[i] && e_qpn[i] == lk_qpn && !d[23];",
    ),
    (
        "rt_ask_ignores_psn",
        "read_track.v",
        "if (ask_valid && ask_idx == i[RD_IW-1:0] && e_valid[i] && e_next[i] == ask_psn) begin",
        "if (ask_valid && ask_idx == i[RD_IW-1:0] && e_valid[i]) begin",
    ),
    (
        "rt_free_ignores_last",
        "read_track.v",
        "e_qpn[i] == free_qpn && e_last[i] == free_last",
        "e_qpn[i] == free_qpn",
    ),
    (
        "rt_busy_until_placed",
        "read_track.v",
        "if (e_valid[i] && e_qpn[i] == q_qpn) begin",
        "if (e_valid[i] && !e_done[i] && e_qpn[i] == q_qpn) begin",
    ),
    (
        "rt_done_one_early",
        "read_track.v",
        "e_done[i] <= adv_psn == e_last[i];",
        "e_done[i] <= adv_psn + 24'd1 == e_last[i];",
    ),
];

/// The RTL files each kind of block needs.
fn sources(kind: Kind) -> (&'static str, &'static [&'static str]) {
    match kind {
        Kind::Register => ("axis_register", &["axis_register.v"]),
        Kind::ArbMux => (
            "axis_arb_mux",
            &[
                "axis_arb_mux.v",
                "arbiter.v",
                "axis_register.v",
                "priority_encoder.v",
            ],
        ),
        Kind::IcrcSubst => ("icrc_subst", &["icrc_subst.v"]),
        Kind::Ram => ("ram_sdp", &["ram_sdp.v"]),
        Kind::RamCopies => ("ram_sdp_copies", &["ram_sdp_copies.v", "ram_sdp.v"]),
        Kind::RamRec => ("ram_rec", &["ram_rec.v", "ram_sdp_copies.v", "ram_sdp.v"]),
        Kind::RecMap => ("rec_map", &["rec_map.v"]),
        Kind::RecPortMux => ("rec_port_mux", &["rec_port_mux.v"]),
        Kind::Mr => ("mr_table", &["mr_table.v"]),
        Kind::TagMatch => ("tag_match", &["tag_match.v"]),
        Kind::OnehotMux => ("onehot_mux", &["onehot_mux.v"]),
        Kind::Alloc => (
            "slot_allocator",
            &["slot_allocator.v", "priority_encoder.v"],
        ),
        Kind::MpWindow => ("mp_window", &["mp_window.v", "priority_encoder.v"]),
        Kind::RcMessage => ("rc_message", &["rc_message.v"]),
        Kind::MpDeferred => (
            "mp_deferred",
            &["mp_deferred.v", "slot_allocator.v", "priority_encoder.v"],
        ),
        Kind::AsyncFifo => ("axis_async_fifo", &["axis_async_fifo.v"]),
        Kind::TlpUpsize => ("tlp_upsize", &["tlp_upsize.v"]),
        Kind::TlpDownsize => ("tlp_downsize", &["tlp_downsize.v"]),
        Kind::Completer => (
            "completer",
            &[
                "completer.v",
                "path_pick.v",
                "path_health.v",
                "path_active.v",
                "generated/rnic_formats.vh",
                "ack_syndromes.vh",
            ],
        ),
        Kind::PathPick => ("path_pick", &["path_pick.v", "path_active.v"]),
        Kind::PathHealth => ("path_health", &["path_health.v", "path_active.v"]),
        Kind::ResetSweep => ("ram_reset_sweep", &["ram_reset_sweep.v"]),
        Kind::ReadReply => ("read_reply", &["read_reply.v"]),
        Kind::ReadTrack => ("read_track", &["read_track.v"]),
        Kind::AtomicReplay => (
            "atomic_replay",
            &[
                "atomic_replay.v",
                "ram_rec.v",
                "ram_sdp_copies.v",
                "ram_sdp.v",
            ],
        ),
        Kind::QpCache => (
            "qp_cache",
            &[
                "qp_cache.v",
                "onehot_mux.v",
                "ram_sdp.v",
                "ram_reset_sweep.v",
            ],
        ),
        Kind::QpcFill => ("qpc_fill", &["qpc_fill.v"]),
        Kind::QpCtxCache => (
            "qp_ctx_cache",
            &[
                "qp_ctx_cache.v",
                "qp_cache.v",
                "onehot_mux.v",
                "qpc_fill.v",
                "ram_sdp.v",
                "ram_reset_sweep.v",
            ],
        ),
        Kind::QpnDoorbell => ("qpn_doorbell", &["qpn_doorbell.v"]),
        Kind::QpDir => (
            "qp_dir",
            &[
                "qp_dir.v",
                "ram_sdp_copies.v",
                "ram_sdp.v",
                "priority_encoder.v",
            ],
        ),
    }
}

/// What a kind's models are built with beyond the blocks' own text: the
/// source patches of the bench (not planted bugs: the block's contract
/// allows what they make) and Verilator's `--x-assign`.
///
/// `qp_dir`: its hint RAM (by QP number, no reset) starts with junk, as a
/// RAM without an initial value would (an ASIC's, or a RAM after a partial
/// reconfiguration): a seeded random hint per number, the top number's all
/// ones (beyond NUM_Q when NUM_Q is not a power of two); and a select out
/// of range (`bound_reg[s]`, `slot_qpn[s]` with a hint s >= NUM_Q) reads
/// all ones, not 0, as synthesis is free to make it: with 0 the block's
/// slot range check could not be told from its absence.
fn bench_patch(kind: Kind, file: &str, text: &str) -> Option<String> {
    const RAM_INIT: &str = "        mem[i] = INIT;";
    if kind == Kind::QpDir && file == "ram_sdp.v" {
        assert_eq!(
            text.matches(RAM_INIT).count(),
            1,
            "qp_dir's hint RAM junk: its text is not found once in ram_sdp.v"
        );
        return Some(text.replace(
            RAM_INIT,
            "        mem[i] = i == DEPTH - 1 ? {DATA_W{1'b1}} : DATA_W'($urandom);",
        ));
    }
    None
}

fn x_assign(kind: Kind) -> &'static str {
    if kind == Kind::QpDir {
        "1"
    } else {
        "fast"
    }
}

fn kind_code(kind: Kind) -> u32 {
    match kind {
        Kind::Register => 1,
        Kind::ArbMux => 2,
        Kind::IcrcSubst => 3,
        Kind::Ram => 4,
        Kind::Mr => 5,
        Kind::RamCopies => 6,
        Kind::TagMatch => 7,
        Kind::Alloc => 8,
        Kind::MpWindow => 9,
        Kind::RcMessage => 10,
        Kind::MpDeferred => 11,
        Kind::AsyncFifo => 12,
        Kind::TlpUpsize => 13,
        Kind::TlpDownsize => 14,
        Kind::Completer => 15,
        Kind::PathPick => 16,
        Kind::PathHealth => 17,
        Kind::ResetSweep => 18,
        Kind::ReadReply => 19,
        Kind::ReadTrack => 20,
        Kind::AtomicReplay => 21,
        Kind::QpCache => 22,
        Kind::QpcFill => 23,
        Kind::QpCtxCache => 24,
        Kind::OnehotMux => 25,
        Kind::RamRec => 26,
        Kind::RecMap => 27,
        Kind::RecPortMux => 28,
        Kind::QpDir => 29,
        Kind::QpnDoorbell => 30,
    }
}

fn main() {
    println!("cargo:rustc-check-cfg=cfg(blocks_model)");
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=src/configs.rs");
    println!("cargo:rerun-if-changed=csrc/blocks.cpp");
    println!("cargo:rerun-if-changed=../csrc/vl_shim_common.hpp");
    println!("cargo:rerun-if-env-changed=VERILATOR");
    println!("cargo:rerun-if-env-changed=VERILATOR_ROOT");
    println!("cargo:rerun-if-env-changed=RTL_BLOCKS_MUTATION");

    let manifest = PathBuf::from(env::var("CARGO_MANIFEST_DIR").unwrap());
    let out = PathBuf::from(env::var("OUT_DIR").unwrap());
    let rtl = manifest.join("../../hw/rtl");

    // the sources, read once; a planted bug patches its file's text
    let mut text = Vec::new();
    for c in CONFIGS {
        for f in sources(c.kind).1 {
            if text.iter().any(|(n, _): &(&str, String)| n == f) {
                continue;
            }
            let p = rtl.join(f);
            println!("cargo:rerun-if-changed={}", p.display());
            match fs::read_to_string(&p) {
                Ok(t) => text.push((*f, t)),
                Err(_) => {
                    println!(
                        "cargo:warning=rtl-blocks-sim: {} not found; building without the models",
                        p.display()
                    );
                    write_ffi(&out, &[]);
                    return;
                }
            }
        }
    }
    // every planted bug must still apply: a stale one would only be found
    // when someone plants it
    for (name, file, from, _) in MUTATIONS {
        let n = text
            .iter()
            .find(|(f, _)| f == file)
            .map_or(0, |(_, t)| t.matches(from).count());
        assert_eq!(
            n, 1,
            "mutation {name}: its text is not found once in {file}"
        );
    }
    let mutation = env::var("RTL_BLOCKS_MUTATION").unwrap_or_default();
    if !mutation.is_empty() {
        let Some(&(_, file, from, to)) = MUTATIONS.iter().find(|m| m.0 == mutation) else {
            let names: Vec<&str> = MUTATIONS.iter().map(|m| m.0).collect();
            panic!("RTL_BLOCKS_MUTATION={mutation}: unknown; known: {names:?}");
        };
        let t = &mut text.iter_mut().find(|(n, _)| *n == file).unwrap().1;
        assert_eq!(
            t.matches(from).count(),
            1,
            "mutation {mutation}: text not found once in {file}"
        );
        *t = t.replace(from, to);
        println!("cargo:warning=rtl-blocks-sim: built with the planted bug {mutation}");
    }

    let verilator = env::var("VERILATOR").unwrap_or_else(|_| "verilator".to_string());
    let root = match vl_build::verilator_root(&verilator) {
        Ok(r) => r,
        Err(e) => {
            println!(
                "cargo:warning=rtl-blocks-sim: {e}; building without the models (the tests \
                 report themselves skipped). Run .ci/setup."
            );
            write_ffi(&out, &[]);
            return;
        }
    };
    let include = root.join("include");

    // the same library as pcie7-shim-sim's: compiled once (vl_build's cache)
    let runtime_lib = "vl_runtime_o2";
    vl_build::runtime(&out, &include, false, "2", runtime_lib);

    let shim = fs::read_to_string(manifest.join("csrc/blocks.cpp")).unwrap();
    let common = fs::read_to_string(manifest.join("../csrc/vl_shim_common.hpp")).unwrap();
    // A model's key is a hash of everything it is built from, so that it
    // is verilated only when that changed: vl_build's cache (OUT_DIR, then
    // target/<profile>/vl-cache, which clippy and the build share).
    // The models are independent: one at a time per core.
    let next = std::sync::atomic::AtomicUsize::new(0);
    let workers = std::thread::available_parallelism().map_or(1, |n| n.get());
    std::thread::scope(|s| {
        for _ in 0..workers.min(CONFIGS.len()) {
            s.spawn(|| loop {
                let k = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let Some(c) = CONFIGS.get(k) else { break };
                let (top, files) = sources(c.kind);
                // the sources with the bench's patches of this kind
                let text: Vec<(&str, String)> = text
                    .iter()
                    .map(|(n, t)| (*n, bench_patch(c.kind, n, t).unwrap_or_else(|| t.clone())))
                    .collect();
                let text = &text;
                let mut h = DefaultHasher::new();
                (c.name, top, c.params, &shim, &common, &include, "unity -O1").hash(&mut h);
                if x_assign(c.kind) != "fast" {
                    x_assign(c.kind).hash(&mut h);
                }
                for f in files {
                    text.iter().find(|(n, _)| n == f).unwrap().hash(&mut h);
                }
                let key = format!("{:016x}", h.finish());
                let tools = Tools {
                    verilator: &verilator,
                    out: &out,
                    include: &include,
                    manifest: &manifest,
                };
                vl_build::compile_cached(&out, &format!("blk_{}", c.name), &key, || {
                    build_model(&tools, c, top, files, text)
                });
            });
        }
    });
    vl_build::link_runtime();
    write_ffi(&out, CONFIGS);
    println!("cargo:rustc-cfg=blocks_model");
}

/// Where things are: the verilator binary, OUT_DIR, Verilator's include
/// directory, this crate.
struct Tools<'a> {
    verilator: &'a str,
    out: &'a Path,
    include: &'a Path,
    manifest: &'a Path,
}

/// Verilates configuration `c` from the (possibly patched) `text` of its
/// `files`; returns the build of model and C ABI as one unit.
fn build_model(
    t: &Tools,
    c: &Config,
    top: &str,
    files: &[&str],
    text: &[(&str, String)],
) -> vl_build::cc::Build {
    let (verilator, out, include, manifest) = (t.verilator, t.out, t.include, t.manifest);
    let mdir = out.join(c.name);
    let _ = fs::remove_dir_all(&mdir);
    fs::create_dir_all(mdir.join("rtl")).unwrap();
    let mut srcs = Vec::new();
    for f in files {
        // an included header goes beside the sources under its own name
        let name = Path::new(f).file_name().unwrap();
        let p = mdir.join("rtl").join(name);
        fs::write(&p, &text.iter().find(|(n, _)| n == f).unwrap().1).unwrap();
        if !f.ends_with(".vh") {
            srcs.push(p);
        }
    }
    let prefix = format!("V{}", c.name);
    let mut cmd = Command::new(verilator);
    cmd.args([
        "--cc",
        "-O3",
        "--x-assign",
        x_assign(c.kind),
        "--x-initial",
        "unique",
    ])
    .args(["-Wall", "-Wno-fatal"])
    .args(["--top-module", top])
    .arg("--prefix")
    .arg(&prefix)
    .arg("--Mdir")
    .arg(&mdir)
    .arg(format!("-I{}", mdir.join("rtl").display()));
    for g in g_args(c.params) {
        cmd.arg(g);
    }
    cmd.args(&srcs);
    let o = match cmd.output() {
        Ok(o) => o,
        Err(e) => panic!("could not run {verilator}: {e}"),
    };
    if !o.status.success() {
        panic!(
            "verilator failed on {top} ({}):\n{}{}",
            c.name,
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        );
    }
    let mut cpp: Vec<PathBuf> = fs::read_dir(&mdir)
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "cpp"))
        .collect();
    cpp.sort();
    // One translation unit per model, as Verilator's own makefile builds
    // with VM_PARALLEL_BUILDS=0 (its __ALL.cpp): a block's model is a few
    // small files, and compiling each apart parsed verilated.h nine times
    // per model (164 s of CPU for the 17 models, against 34 s so).
    let tail = format!(
        "#define BLK_MODEL {prefix}\n#define BLK_HEADER \"{prefix}.h\"\n\
         #define BLK_PFX(name) {}_##name\n#define BLK_KIND {}\n#include \"{}\"\n",
        c.name,
        kind_code(c.kind),
        manifest.join("csrc/blocks.cpp").display()
    );
    let wrapper = vl_build::unity_source(&mdir.join(format!("{}_all.cpp", c.name)), &cpp, &tail);
    let mut b = vl_build::cc_build(out, &[wrapper], include, std::slice::from_ref(&mdir), false);
    b.opt_level(1);
    b
}

/// Verilator's `-G` arguments for `params`: a plain one as its number; the
/// entries `NAME[i]` of a packed one (src/configs.rs) as one vector of
/// 32-bit entries, entry i at bits 32i+31:32i (entries not given are 0).
fn g_args(params: &[(&str, u32)]) -> Vec<String> {
    let mut plain = Vec::new();
    let mut packed: Vec<(&str, Vec<u32>)> = Vec::new();
    for &(p, v) in params {
        let Some((name, idx)) = p.strip_suffix(']').and_then(|q| q.split_once('[')) else {
            plain.push(format!("-G{p}={v}"));
            continue;
        };
        let i: usize = idx
            .parse()
            .unwrap_or_else(|_| panic!("parameter {p}: bad index"));
        let pos = match packed.iter().position(|e| e.0 == name) {
            Some(pos) => pos,
            None => {
                packed.push((name, Vec::new()));
                packed.len() - 1
            }
        };
        let e = &mut packed[pos].1;
        if e.len() <= i {
            e.resize(i + 1, 0);
        }
        e[i] = v;
    }
    for (name, e) in packed {
        let hex: String = e.iter().rev().map(|v| format!("{v:08x}")).collect();
        plain.push(format!("-G{name}={}'h{hex}", 32 * e.len()));
    }
    plain
}

/// src/lib.rs includes this: the C ABI of every model built, by name.
fn write_ffi(out: &Path, built: &[Config]) {
    let mut s = String::from("// generated by build.rs\n");
    for c in built {
        let n = c.name;
        s += &format!(
            "mod ffi_{n} {{\n    use super::{{PortsIn, PortsOut}};\n    use std::ffi::c_void;\n    \
             extern \"C\" {{\n        pub fn {n}_in_size() -> usize;\n        \
             pub fn {n}_out_size() -> usize;\n        pub fn {n}_create(seed: u32) -> *mut c_void;\n        \
             pub fn {n}_destroy(h: *mut c_void);\n        \
             pub fn {n}_step(h: *mut c_void, i: *const PortsIn, o: *mut PortsOut);\n        \
             pub fn {n}_peek(h: *mut c_void, i: *const PortsIn, o: *mut PortsOut);\n    }}\n}}\n"
        );
    }
    s += "fn model_fns(name: &str) -> Option<Fns> {\n    match name {\n";
    for c in built {
        let n = c.name;
        s += &format!(
            "        \"{n}\" => Some(Fns {{\n            in_size: ffi_{n}::{n}_in_size,\n            \
             out_size: ffi_{n}::{n}_out_size,\n            create: ffi_{n}::{n}_create,\n            \
             destroy: ffi_{n}::{n}_destroy,\n            step: ffi_{n}::{n}_step,\n            \
             peek: ffi_{n}::{n}_peek,\n        }}),\n"
        );
    }
    s += "        _ => {\n            let _ = name;\n            None\n        }\n    }\n}\n";
    fs::write(out.join("ffi.rs"), s).unwrap();
}
