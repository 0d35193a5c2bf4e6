// rnic control plane: the register block (rnic_csr, generated from
// hw/regs/rnic_csr.rdl) behind its MMIO bridge, the error capture and the
// event counters it reads, and the configuration flash controller. What
// the registers command goes out as fields and one-cycle *_valid strobes;
// the subsystems' errors and event strobes come in.

`resetall
`timescale 1ns / 1ps
`default_nettype none

module rnic_control #(
    parameter DATA_W = 64,
    parameter QN_W = 4,
    // what the ID block reports (see rnic_core for their meaning)
    parameter [31:0] BUILD_VERSION = 32'h0001_0000,
    parameter [31:0] GIT_HASH = 32'h0,
    parameter [31:0] BOARD_ID = 32'h0,
    parameter [31:0] ID_NUM_Q = 16,
    parameter [31:0] ID_VERBS = 0,
    parameter [31:0] ID_CAPS = 0,
    parameter [31:0] ID_MP_W = 64,
    parameter [31:0] ID_OST_RINGS = 0,
    parameter [31:0] ID_MP_PEND = 0,
    parameter [31:0] ID_MP_WIMM = 0,
    parameter [31:0] ID_DMACS = 0,
    parameter [31:0] ID_MRS = 0,
    parameter [31:0] ID_QP_REC_WORDS = 0,
    parameter [31:0] ID_CTX_FILLS = 0,
    parameter [31:0] ID_QPN_BITS = 0
) (
    input  wire                  clk,
    input  wire                  rst,

    // PCIe requests to BAR0 and their completions (pcie_mmio_bridge)
    input  wire [127:0]          rx_req_tlp_hdr,
    input  wire [DATA_W-1:0]     rx_req_tlp_data,
    input  wire [DATA_W/32-1:0]  rx_req_tlp_keep,
    input  wire                  rx_req_tlp_valid,
    input  wire                  rx_req_tlp_last,
    output wire                  rx_req_tlp_ready,
    output wire [127:0]          tx_cpl_tlp_hdr,
    output wire [DATA_W-1:0]     tx_cpl_tlp_data,
    output wire [DATA_W/32-1:0]  tx_cpl_tlp_keep,
    output wire                  tx_cpl_tlp_valid,
    output wire                  tx_cpl_tlp_last,
    input  wire                  tx_cpl_tlp_ready,
    input  wire [2:0]            cfg_max_payload,
    input  wire [2:0]            cfg_max_read_req,
    input  wire [15:0]           cfg_requester_id,

    // configuration flash (SPI NOR) and the boot state
    output wire                  flash_sck,
    output wire                  flash_cs_n,
    output wire [3:0]            flash_io_o,
    output wire [3:0]            flash_io_oe,
    input  wire [3:0]            flash_io_i,
    input  wire [1:0]            boot_slot,
    input  wire                  boot_fallback,
    output wire                  reconfig_req,

    // register fields (commands and doorbells: *_valid, a cycle after the write)
    output wire [15:0]           reg_q_sel,
    output wire [31:0]           reg_q_base_lo,
    output wire [31:0]           reg_q_base_hi,
    output wire [31:0]           reg_q_size,
    output wire [15:0]           reg_q_cqn,
    output wire [3:0]            reg_q_cmd,
    output wire [15:0]           reg_sq_db_pi,
    output wire [15:0]           reg_sq_db_qn,
    output wire [15:0]           reg_cq_db_ci,
    output wire [15:0]           reg_cq_db_cqn,
    output wire [15:0]           reg_cq_arm_cqn,
    output wire                  reg_debug_cqe_ro,
    output wire                  reg_debug_early_cqe,
    output wire                  reg_debug_bypass,
    output wire                  reg_debug_no_mr_check,
    output wire                  reg_debug_early_read_cqe,
    output wire                  reg_debug_resend_after_cqe,
    output wire                  reg_debug_unpinned_move,
    output wire                  reg_cqe_flush,
    output wire [31:0]           reg_mac_lo,
    output wire [15:0]           reg_mac_hi,
    output wire [31:0]           reg_ipv4,
    output wire [15:0]           reg_qp_sel,
    output wire [2:0]            reg_qp_state,
    output wire [2:0]            reg_qp_pmtu,
    output wire                  reg_qp_remote_write,
    output wire                  reg_qp_remote_read,
    output wire                  reg_qp_remote_atomic,
    output wire [2:0]            reg_qp_spray_log,
    output wire                  reg_qp_mp,
    output wire [2:0]            reg_qp_mp_wshift,
    output wire [23:0]           reg_qp_dest_qpn,
    output wire [23:0]           reg_qp_sq_psn,
    output wire [23:0]           reg_qp_rq_psn,
    output wire [31:0]           reg_qp_dmac_lo,
    output wire [15:0]           reg_qp_dmac_hi,
    output wire [15:0]           reg_qp_udp_sport,
    output wire [31:0]           reg_qp_dip,
    output wire [15:0]           reg_qp_pd,
    output wire [15:0]           reg_qp_rcq,
    output wire [31:0]           reg_qp_rq_base_lo,
    output wire [31:0]           reg_qp_rq_base_hi,
    output wire [31:0]           reg_qp_rq_size,
    output wire [3:0]            reg_qp_cmd,
    output wire [15:0]           reg_rq_db_pi,
    output wire [15:0]           reg_rq_db_qpn,
    output wire [15:0]           reg_mr_sel,
    output wire [31:0]           reg_mr_key,
    output wire [31:0]           reg_mr_va_lo,
    output wire [31:0]           reg_mr_va_hi,
    output wire [31:0]           reg_mr_len,
    output wire [31:0]           reg_mr_bus_lo,
    output wire [31:0]           reg_mr_bus_hi,
    output wire [15:0]           reg_mr_pd,
    output wire [3:0]            reg_mr_access,
    output wire [3:0]            reg_mr_cmd,
    output wire [4:0]            reg_qp_timeout,
    output wire                  reg_lb_loopback,
    output wire [15:0]           reg_lb_drop_thr,
    output wire [15:0]           reg_lb_reorder_thr,
    output wire [31:0]           reg_lb_seed,
    output wire [1:0]            reg_path_thresh,
    output wire [2:0]            reg_qp_retry_cnt,
    output wire [2:0]            reg_qp_rnr_retry,
    output wire [4:0]            reg_qp_min_rnr_timer,
    output wire [2:0]            reg_qp_max_rd_atomic,
    output wire [2:0]            reg_qp_max_dest_rd_atomic,
    output wire                  reg_q_cmd_valid,
    output wire                  reg_sq_db_valid,
    output wire                  reg_cq_db_valid,
    output wire                  reg_cq_arm_valid,
    output wire                  reg_qp_cmd_valid,
    output wire                  reg_rq_db_valid,
    output wire                  reg_mr_cmd_valid,
    // the record window's command (qp_block.qp_rec_*), and its answer
    output wire [7:0]            reg_qp_rec_word,
    output wire [1:0]            reg_qp_rec_op,
    output wire                  reg_qp_rec_valid,
    output wire [63:0]           reg_qp_rec_wdata,
    input  wire [63:0]           qp_rec_rdata,
    input  wire                  qp_rec_busy,        // every request waits (a record command running)
    // the QP directory's command (qp_block.qp_bind), and its answer
    output wire [23:0]           reg_qp_bind_qpn,
    output wire [1:0]            reg_qp_bind_op,
    output wire                  reg_qp_bind_valid,
    input  wire                  qp_bind_busy,       // every request waits (a bind command running)
    input  wire [2:0]            qp_bind_err,
    input  wire [23:0]           qp_bind_rb_qpn,
    input  wire                  qp_bind_rb_bound,
    // doorbells by QP number (qp_block.sq_dbn, rq_dbn): every request
    // waits while one is looked up; a number no slot holds is error 14
    output wire [15:0]           reg_sq_dbn_qpn,
    output wire [15:0]           reg_sq_dbn_pi,
    output wire                  reg_sq_dbn_valid,
    output wire [15:0]           reg_rq_dbn_qpn,
    output wire [15:0]           reg_rq_dbn_pi,
    output wire                  reg_rq_dbn_valid,
    input  wire                  dbn_busy,
    input  wire                  dbn_err_valid,
    input  wire [15:0]           dbn_err_qpn,
    // the NIC's fetch of a QP by number (qp_block.qp_fetch): every request
    // waits while it runs
    output wire [15:0]           reg_qp_cache_first,
    output wire                  reg_qp_cache_auto,
    input  wire [31:0]           fetch_misses,
    input  wire [31:0]           fetch_evictions,
    input  wire [31:0]           fetch_full,
    input  wire [31:0]           qp_lookups,
    input  wire [31:0]           qp_lookup_misses,
    input  wire [4:0]            dbn_waiting,
    input  wire [4:0]            dbn_waiting_max,
    output wire [23:0]           reg_qp_fetch_qpn,
    output wire                  reg_qp_fetch_valid,
    output wire                  reg_qp_fetch_hold,
    output wire                  reg_qp_fetch_unhold,
    input  wire                  fetch_held,
    input  wire                  fetch_busy,
    input  wire [2:0]            fetch_err,
    input  wire [15:0]           fetch_slot,
    input  wire                  fetch_loaded,
    input  wire                  fetch_evicted,
    input  wire [23:0]           fetch_victim,
    // the QP context table (qp_block.qp_ctx_*): its place, a command, its state
    output wire [63:0]           reg_qp_ctx_base,
    output wire [24:0]           reg_qp_ctx_records,
    output wire [23:0]           reg_qp_ctx_wb,
    output wire [23:0]           reg_qp_ctx_record,
    output wire [1:0]            reg_qp_ctx_op,
    output wire                  reg_qp_ctx_valid,
    input  wire                  qp_ctx_busy,
    input  wire [2:0]            qp_ctx_err,
    input  wire                  qp_ctx_fault,
    input  wire [15:0]           qp_ctx_done,
    input  wire [31:0]           qp_ctx_fills,
    input  wire [31:0]           qp_ctx_wbs,
    input  wire [31:0]           qp_ctx_fails,

    // the selected queue's and QP's state, read back
    input  wire [15:0]           sel_sq_pi,
    input  wire [15:0]           sel_sq_ci,
    input  wire [15:0]           sel_cq_pi,
    input  wire                  sel_sq_en,
    input  wire                  sel_cq_en,
    input  wire                  sel_cq_armed,
    input  wire                  sel_cq_phase,
    input  wire [2:0]            sel_qp_state,
    input  wire [23:0]           sel_sq_psn,
    input  wire [23:0]           sel_epsn,

    // errors (status.err_*) and event strobes (the counters)
    input  wire                  ex_err_valid,
    input  wire [7:0]            ex_err_code,
    input  wire [15:0]           ex_err_qn,
    input  wire                  qm_err_valid,
    input  wire                  qm_busy,            // a read waits (read after write)
    input  wire                  qm_sweep,           // every request waits (records cleared after a reset)
    input  wire                  mr_drain,           // every request waits (an MR command's READs draining)
    input  wire [7:0]            qm_err_code,
    input  wire [15:0]           qm_err_qn,
    input  wire                  cw_err,
    input  wire [QN_W-1:0]       cw_err_cqn,
    input  wire                  mr_reg_err,
    input  wire                  qp_reg_err,
    input  wire                  qp_reg_err_dmac,
    // (events: one count each per cycle)
    input  wire                  stat_cqe,
    input  wire                  stat_rd_req,
    input  wire                  stat_wr_tlp,
    input  wire                  stat_rd_err,
    input  wire                  stat_tx_frame,
    input  wire                  stat_rx_frame,
    input  wire                  stat_drop_icrc,
    input  wire                  stat_drop_malformed,
    input  wire                  stat_drop_nobuf,
    input  wire                  stat_drop_qp,
    input  wire                  stat_drop_psn,
    input  wire                  stat_ack_drop,
    input  wire                  stat_nak,
    input  wire                  stat_retransmit,
    input  wire                  stat_timeout,
    input  wire                  stat_nak_seq,
    input  wire                  stat_rnr,
    input  wire                  stat_path_out,
    input  wire                  stat_path_back,
    input  wire                  stat_probe,         // an MP PROBE sent
    input  wire                  stat_probe_rtt_v,   // ... one answered after
    input  wire [15:0]           stat_probe_rtt,     // ... this many cycles
    input  wire                  stat_guard,
    input  wire                  stat_drop_xport,
    input  wire                  stat_drop_wimm,
    input  wire                  stat_ring_busy,
    input  wire                  stat_read_req,      // a READ request handed to read_reply
    input  wire                  stat_read_resp,     // a READ RESPONSE packet sent
    input  wire                  stat_read_placed,   // a READ RESPONSE to our READ placed
    input  wire                  stat_rr_nak,        // read_reply's NAK for a failed payload read
    input  wire                  stat_atomic,        // an atomic executed
    input  wire                  stat_atomic_replay, // a duplicate atomic answered from its record
    input  wire                  stat_rd_over,       // a READ or atomic beyond max_dest_rd_atomic (NAKed)
    input  wire [31:0]           lb_dropped,
    input  wire [31:0]           lb_reordered
);

wire csr_req;
wire csr_req_is_wr;
wire [10:0] csr_addr;
wire [31:0] csr_wr_data;
wire [31:0] csr_wr_biten;
wire csr_req_stall_wr;
wire csr_req_stall_rd;
wire csr_rd_ack;
wire csr_rd_err;
wire [31:0] csr_rd_data;
wire csr_wr_ack;
wire csr_wr_err;

// The generated block pulses *_swmod in the cycle of the write and shows the
// new field value from the next cycle on: act on the value one cycle later.
wire reg_q_cmd_valid_raw;
wire reg_sq_db_valid_raw;
wire reg_cq_db_valid_raw;
wire reg_cq_arm_valid_raw;
wire reg_qp_cmd_valid_raw;
wire reg_rq_db_valid_raw;
wire reg_mr_cmd_valid_raw;
wire reg_qp_rec_valid_raw;
reg [6:0] swmod_dly_reg = 7'd0;
reg qp_rec_dly_reg = 1'b0;
assign reg_qp_rec_valid = qp_rec_dly_reg;
// (MMIO waits from the command's write on, not only once the window is busy)
wire qp_rec_wait = reg_qp_rec_valid_raw || qp_rec_dly_reg || qp_rec_busy;
wire reg_qp_bind_valid_raw;
reg qp_bind_dly_reg = 1'b0;
assign reg_qp_bind_valid = qp_bind_dly_reg;
wire qp_bind_wait = reg_qp_bind_valid_raw || qp_bind_dly_reg || qp_bind_busy;
wire reg_sq_dbn_valid_raw;
wire reg_rq_dbn_valid_raw;
reg [1:0] dbn_dly_reg = 2'd0;
assign reg_sq_dbn_valid = dbn_dly_reg[1];
assign reg_rq_dbn_valid = dbn_dly_reg[0];
wire dbn_wait = reg_sq_dbn_valid_raw || reg_rq_dbn_valid_raw || |dbn_dly_reg || dbn_busy;
wire reg_qp_fetch_valid_raw;
reg qp_fetch_dly_reg = 1'b0;
assign reg_qp_fetch_valid = qp_fetch_dly_reg;
wire fetch_wait = reg_qp_fetch_valid_raw || qp_fetch_dly_reg || fetch_busy;
// (a context command runs in the background: MMIO does not wait for it)
wire reg_qp_ctx_valid_raw;
reg qp_ctx_dly_reg = 1'b0;
assign reg_qp_ctx_valid = qp_ctx_dly_reg;
assign reg_q_cmd_valid = swmod_dly_reg[6];
assign reg_sq_db_valid = swmod_dly_reg[5];
assign reg_cq_db_valid = swmod_dly_reg[4];
assign reg_cq_arm_valid = swmod_dly_reg[3];
assign reg_qp_cmd_valid = swmod_dly_reg[2];
assign reg_rq_db_valid = swmod_dly_reg[1];
assign reg_mr_cmd_valid = swmod_dly_reg[0];
always @(posedge clk) begin
    swmod_dly_reg <= rst ? 7'd0
        : {reg_q_cmd_valid_raw, reg_sq_db_valid_raw, reg_cq_db_valid_raw, reg_cq_arm_valid_raw,
           reg_qp_cmd_valid_raw, reg_rq_db_valid_raw, reg_mr_cmd_valid_raw};
    qp_rec_dly_reg <= !rst && reg_qp_rec_valid_raw;
    qp_bind_dly_reg <= !rst && reg_qp_bind_valid_raw;
    qp_ctx_dly_reg <= !rst && reg_qp_ctx_valid_raw;
    dbn_dly_reg <= rst ? 2'd0 : {reg_sq_dbn_valid_raw, reg_rq_dbn_valid_raw};
    qp_fetch_dly_reg <= !rst && reg_qp_fetch_valid_raw;
end

reg [7:0] err_code_reg = 8'd0;
reg [15:0] err_qn_reg = 16'd0;
reg [31:0] err_count_reg = 32'd0;
reg [31:0] cqe_count_reg = 32'd0;
reg [31:0] rd_req_count_reg = 32'd0;
reg [31:0] wr_req_count_reg = 32'd0;
reg [31:0] rd_err_count_reg = 32'd0;
reg [31:0] tx_frames_reg = 32'd0;
reg [31:0] rx_frames_reg = 32'd0;
reg [31:0] rx_drop_icrc_reg = 32'd0;
reg [31:0] rx_drop_malformed_reg = 32'd0;
reg [31:0] rx_drop_nobuf_reg = 32'd0;
reg [31:0] rx_drop_qp_reg = 32'd0;
reg [31:0] rx_drop_psn_reg = 32'd0;
reg [31:0] rx_nak_reg = 32'd0;
reg [31:0] tx_retransmits_reg = 32'd0;
reg [31:0] rtx_timeouts_reg = 32'd0;
reg [31:0] path_takeouts_reg = 32'd0;
reg [31:0] path_comebacks_reg = 32'd0;
reg [31:0] path_probes_reg = 32'd0;
reg [15:0] path_probe_rtt_reg = 16'd0;
reg [31:0] rx_nak_seq_reg = 32'd0;
reg [31:0] rx_rnr_nak_reg = 32'd0;
reg [31:0] rx_drop_guard_reg = 32'd0;
reg [31:0] rx_drop_transport_reg = 32'd0;
reg [31:0] rx_drop_wimm_reg = 32'd0;
reg [31:0] ring_busy_cycles_reg = 32'd0;
reg [31:0] rx_read_req_reg = 32'd0;
reg [31:0] tx_read_resp_reg = 32'd0;
reg [31:0] rx_read_resp_reg = 32'd0;
reg [31:0] rx_atomic_reg = 32'd0;
reg [31:0] rx_atomic_replay_reg = 32'd0;
reg [31:0] rx_rd_over_reg = 32'd0;

// configuration flash block: external to the generated file, served by
// spi_flash_ctrl below
wire flash_s_req;
wire [8:0] flash_s_addr;
wire flash_s_req_is_wr;
wire [31:0] flash_s_wr_data;
wire [31:0] flash_s_wr_biten;
wire flash_s_rd_ack;
wire [31:0] flash_s_rd_data;
wire flash_s_wr_ack;

rnic_csr csr_inst (
    .clk(clk),
    .rst(rst),
    .s_cpuif_req(csr_req),
    .s_cpuif_req_is_wr(csr_req_is_wr),
    .s_cpuif_addr(csr_addr),
    .s_cpuif_wr_data(csr_wr_data),
    .s_cpuif_wr_biten(csr_wr_biten),
    .s_cpuif_req_stall_wr(csr_req_stall_wr),
    .s_cpuif_req_stall_rd(csr_req_stall_rd),
    .s_cpuif_rd_ack(csr_rd_ack),
    .s_cpuif_rd_err(csr_rd_err),
    .s_cpuif_rd_data(csr_rd_data),
    .s_cpuif_wr_ack(csr_wr_ack),
    .s_cpuif_wr_err(csr_wr_err),
    .hwif_in_id_build_version_value(BUILD_VERSION),
    .hwif_in_id_git_hash_value(GIT_HASH),
    .hwif_in_id_board_id_value(BOARD_ID),
    .hwif_in_id_data_w_value(DATA_W),
    .hwif_in_id_num_queues_value(ID_NUM_Q),
    .hwif_in_id_verbs_value(ID_VERBS),
    .hwif_in_id_caps_value(ID_CAPS),
    .hwif_in_id_mp_window_value(ID_MP_W),
    .hwif_in_id_ost_rings_value(ID_OST_RINGS),
    .hwif_in_id_mp_pend_value(ID_MP_PEND),
    .hwif_in_id_mp_wimm_value(ID_MP_WIMM),
    .hwif_in_id_dmacs_value(ID_DMACS),
    .hwif_in_id_mrs_value(ID_MRS),
    .hwif_in_id_qp_rec_words_value(ID_QP_REC_WORDS),
    .hwif_in_id_ctx_fills_value(ID_CTX_FILLS),
    .hwif_in_id_qpn_bits_value(ID_QPN_BITS),
    .hwif_out_flash_req(flash_s_req),
    .hwif_out_flash_addr(flash_s_addr),
    .hwif_out_flash_req_is_wr(flash_s_req_is_wr),
    .hwif_out_flash_wr_data(flash_s_wr_data),
    .hwif_out_flash_wr_biten(flash_s_wr_biten),
    .hwif_in_flash_wr_ack(flash_s_wr_ack),
    .hwif_in_flash_rd_data(flash_s_rd_data),
    .hwif_in_flash_rd_ack(flash_s_rd_ack),
    .hwif_out_queue_q_sel_qn(reg_q_sel),
    .hwif_out_queue_q_base_lo_addr(reg_q_base_lo),
    .hwif_out_queue_q_base_hi_addr(reg_q_base_hi),
    .hwif_out_queue_q_size_entries(reg_q_size),
    .hwif_out_queue_q_cqn_cqn(reg_q_cqn),
    .hwif_out_queue_q_cmd_op(reg_q_cmd),
    .hwif_out_queue_q_cmd_op_swmod(reg_q_cmd_valid_raw),
    .hwif_in_queue_q_sq_state_sq_pi(sel_sq_pi),
    .hwif_in_queue_q_sq_state_sq_ci(sel_sq_ci),
    .hwif_in_queue_q_cq_state_cq_pi(sel_cq_pi),
    .hwif_in_queue_q_cq_state_sq_en(sel_sq_en),
    .hwif_in_queue_q_cq_state_cq_en(sel_cq_en),
    .hwif_in_queue_q_cq_state_cq_armed(sel_cq_armed),
    .hwif_in_queue_q_cq_state_cq_phase(sel_cq_phase),
    .hwif_out_queue_sq_db_pi(reg_sq_db_pi),
    .hwif_out_queue_sq_db_pi_swmod(reg_sq_db_valid_raw),
    .hwif_out_queue_sq_db_qn(reg_sq_db_qn),
    .hwif_out_queue_cq_db_ci(reg_cq_db_ci),
    .hwif_out_queue_cq_db_ci_swmod(reg_cq_db_valid_raw),
    .hwif_out_queue_cq_db_cqn(reg_cq_db_cqn),
    .hwif_out_queue_cq_arm_cqn(reg_cq_arm_cqn),
    .hwif_out_queue_cq_arm_cqn_swmod(reg_cq_arm_valid_raw),
    .hwif_in_queue_err_status_code(err_code_reg),
    .hwif_in_queue_err_status_qn(err_qn_reg),
    .hwif_in_queue_err_count_count(err_count_reg),
    .hwif_in_queue_cqe_count_count(cqe_count_reg),
    .hwif_in_dma_pcie_cfg_max_payload(cfg_max_payload),
    .hwif_in_dma_pcie_cfg_max_read_req(cfg_max_read_req),
    .hwif_out_dma_debug_cqe_ro(reg_debug_cqe_ro),
    .hwif_out_dma_debug_early_cqe(reg_debug_early_cqe),
    .hwif_out_dma_debug_bypass(reg_debug_bypass),
    .hwif_out_dma_debug_no_mr_check(reg_debug_no_mr_check),
    .hwif_out_dma_debug_early_read_cqe(reg_debug_early_read_cqe),
    .hwif_out_dma_debug_resend_after_cqe(reg_debug_resend_after_cqe),
    .hwif_out_dma_debug_unpinned_move(reg_debug_unpinned_move),
    .hwif_out_dma_cqe_order_cqe_flush(reg_cqe_flush),
    .hwif_out_port_mac_lo_addr(reg_mac_lo),
    .hwif_out_port_mac_hi_addr(reg_mac_hi),
    .hwif_out_port_ipv4_addr(reg_ipv4),
    .hwif_in_port_tx_frames_value(tx_frames_reg),
    .hwif_in_port_rx_frames_value(rx_frames_reg),
    .hwif_in_port_rx_drop_icrc_value(rx_drop_icrc_reg),
    .hwif_in_port_rx_drop_malformed_value(rx_drop_malformed_reg),
    .hwif_in_port_rx_drop_nobuf_value(rx_drop_nobuf_reg),
    .hwif_in_port_rx_drop_qp_value(rx_drop_qp_reg),
    .hwif_in_port_rx_drop_psn_value(rx_drop_psn_reg),
    .hwif_in_port_rx_nak_value(rx_nak_reg),
    .hwif_in_port_tx_retransmits_value(tx_retransmits_reg),
    .hwif_in_port_rtx_timeouts_value(rtx_timeouts_reg),
    .hwif_in_port_path_takeouts_value(path_takeouts_reg),
    .hwif_in_port_path_comebacks_value(path_comebacks_reg),
    .hwif_in_port_path_probes_value(path_probes_reg),
    .hwif_in_port_path_probe_rtt_cycles(path_probe_rtt_reg),
    .hwif_in_port_rx_nak_seq_value(rx_nak_seq_reg),
    .hwif_in_port_rx_rnr_nak_value(rx_rnr_nak_reg),
    .hwif_in_port_rx_drop_guard_value(rx_drop_guard_reg),
    .hwif_in_port_rx_drop_transport_value(rx_drop_transport_reg),
    .hwif_in_port_rx_drop_wimm_value(rx_drop_wimm_reg),
    .hwif_in_port_ring_busy_cycles_value(ring_busy_cycles_reg),
    .hwif_in_port_rx_read_req_value(rx_read_req_reg),
    .hwif_in_port_tx_read_resp_value(tx_read_resp_reg),
    .hwif_in_port_rx_read_resp_value(rx_read_resp_reg),
    .hwif_in_port_rx_atomic_value(rx_atomic_reg),
    .hwif_in_port_rx_atomic_replay_value(rx_atomic_replay_reg),
    .hwif_in_port_rx_rd_over_value(rx_rd_over_reg),
    .hwif_in_port_lb_dropped_value(lb_dropped),
    .hwif_in_port_lb_reordered_value(lb_reordered),
    .hwif_out_port_lb_ctrl_loopback(reg_lb_loopback),
    .hwif_out_port_lb_drop_thr(reg_lb_drop_thr),
    .hwif_out_port_lb_reorder_thr(reg_lb_reorder_thr),
    .hwif_out_port_lb_seed_seed(reg_lb_seed),
    .hwif_out_port_path_cfg_thresh(reg_path_thresh),
    .hwif_out_qp_qp_sel_qpn(reg_qp_sel),
    .hwif_out_qp_qp_attr_state(reg_qp_state),
    .hwif_out_qp_qp_attr_pmtu(reg_qp_pmtu),
    .hwif_out_qp_qp_attr_remote_write(reg_qp_remote_write),
    .hwif_out_qp_qp_attr_remote_read(reg_qp_remote_read),
    .hwif_out_qp_qp_attr_remote_atomic(reg_qp_remote_atomic),
    .hwif_out_qp_qp_attr_spray_log(reg_qp_spray_log),
    .hwif_out_qp_qp_attr_mp(reg_qp_mp),
    .hwif_out_qp_qp_attr_mp_window_shift(reg_qp_mp_wshift),
    .hwif_out_qp_qp_dest_qpn(reg_qp_dest_qpn),
    .hwif_out_qp_qp_sq_psn_psn(reg_qp_sq_psn),
    .hwif_out_qp_qp_rq_psn_psn(reg_qp_rq_psn),
    .hwif_out_qp_qp_dmac_lo_addr(reg_qp_dmac_lo),
    .hwif_out_qp_qp_dmac_hi_addr(reg_qp_dmac_hi),
    .hwif_out_qp_qp_dmac_hi_udp_sport(reg_qp_udp_sport),
    .hwif_out_qp_qp_dip_addr(reg_qp_dip),
    .hwif_out_qp_qp_pd_pd(reg_qp_pd),
    .hwif_out_qp_qp_pd_rcq(reg_qp_rcq),
    .hwif_out_qp_qp_rq_base_lo_addr(reg_qp_rq_base_lo),
    .hwif_out_qp_qp_rq_base_hi_addr(reg_qp_rq_base_hi),
    .hwif_out_qp_qp_rq_size_entries(reg_qp_rq_size),
    .hwif_out_qp_qp_retry_timeout(reg_qp_timeout),
    .hwif_out_qp_qp_retry_retry_cnt(reg_qp_retry_cnt),
    .hwif_out_qp_qp_retry_rnr_retry(reg_qp_rnr_retry),
    .hwif_out_qp_qp_retry_min_rnr_timer(reg_qp_min_rnr_timer),
    .hwif_out_qp_qp_retry_max_rd_atomic(reg_qp_max_rd_atomic),
    .hwif_out_qp_qp_retry_max_dest_rd_atomic(reg_qp_max_dest_rd_atomic),
    .hwif_out_qp_qp_rec_cmd_word(reg_qp_rec_word),
    .hwif_out_qp_qp_rec_cmd_op(reg_qp_rec_op),
    .hwif_out_qp_qp_rec_cmd_op_swmod(reg_qp_rec_valid_raw),
    .hwif_out_qp_qp_rec_wdata_lo_data(reg_qp_rec_wdata[31:0]),
    .hwif_out_qp_qp_rec_wdata_hi_data(reg_qp_rec_wdata[63:32]),
    .hwif_in_qp_qp_rec_rdata_lo_value(qp_rec_rdata[31:0]),
    .hwif_in_qp_qp_rec_rdata_hi_value(qp_rec_rdata[63:32]),
    .hwif_out_qp_qp_bind_qpn(reg_qp_bind_qpn),
    .hwif_out_qp_qp_bind_op(reg_qp_bind_op),
    .hwif_out_qp_qp_bind_op_swmod(reg_qp_bind_valid_raw),
    .hwif_in_qp_qp_bind_status_qpn(qp_bind_rb_qpn),
    .hwif_in_qp_qp_bind_status_bound(qp_bind_rb_bound),
    .hwif_in_qp_qp_bind_status_err(qp_bind_err),
    .hwif_out_qp_qp_ctx_base_lo_addr(reg_qp_ctx_base[31:0]),
    .hwif_out_qp_qp_ctx_base_hi_addr(reg_qp_ctx_base[63:32]),
    .hwif_out_qp_qp_ctx_records_records(reg_qp_ctx_records),
    .hwif_out_qp_qp_ctx_wb_record(reg_qp_ctx_wb),
    .hwif_out_qp_qp_ctx_cmd_record(reg_qp_ctx_record),
    .hwif_out_qp_qp_ctx_cmd_op(reg_qp_ctx_op),
    .hwif_out_qp_qp_ctx_cmd_op_swmod(reg_qp_ctx_valid_raw),
    .hwif_in_qp_qp_ctx_status_busy(qp_ctx_busy),
    .hwif_in_qp_qp_ctx_status_err(qp_ctx_err),
    .hwif_in_qp_qp_ctx_status_fault(qp_ctx_fault),
    .hwif_in_qp_qp_ctx_status_done(qp_ctx_done),
    .hwif_in_qp_qp_ctx_fills_value(qp_ctx_fills),
    .hwif_in_qp_qp_ctx_writebacks_value(qp_ctx_wbs),
    .hwif_in_qp_qp_ctx_fails_value(qp_ctx_fails),
    .hwif_out_qp_qp_cmd_op(reg_qp_cmd),
    .hwif_out_qp_qp_cmd_op_swmod(reg_qp_cmd_valid_raw),
    .hwif_out_qp_rq_db_pi(reg_rq_db_pi),
    .hwif_out_qp_rq_db_pi_swmod(reg_rq_db_valid_raw),
    .hwif_out_qp_rq_db_qpn(reg_rq_db_qpn),
    .hwif_out_qp_sq_dbn_pi(reg_sq_dbn_pi),
    .hwif_out_qp_sq_dbn_pi_swmod(reg_sq_dbn_valid_raw),
    .hwif_out_qp_sq_dbn_qpn(reg_sq_dbn_qpn),
    .hwif_out_qp_rq_dbn_pi(reg_rq_dbn_pi),
    .hwif_out_qp_rq_dbn_pi_swmod(reg_rq_dbn_valid_raw),
    .hwif_out_qp_rq_dbn_qpn(reg_rq_dbn_qpn),
    .hwif_out_qp_qp_cache_first_first(reg_qp_cache_first),
    .hwif_out_qp_qp_cache_first_auto(reg_qp_cache_auto),
    .hwif_in_qp_qp_fetch_misses_value(fetch_misses),
    .hwif_in_qp_qp_fetch_evictions_value(fetch_evictions),
    .hwif_in_qp_qp_fetch_full_value(fetch_full),
    .hwif_in_qp_qp_lookups_value(qp_lookups),
    .hwif_in_qp_qp_lookup_misses_value(qp_lookup_misses),
    .hwif_in_qp_qp_db_waiting_now(dbn_waiting),
    .hwif_in_qp_qp_db_waiting_max(dbn_waiting_max),
    .hwif_out_qp_qp_fetch_qpn(reg_qp_fetch_qpn),
    .hwif_out_qp_qp_fetch_qpn_swmod(reg_qp_fetch_valid_raw),
    .hwif_out_qp_qp_fetch_hold(reg_qp_fetch_hold),
    .hwif_out_qp_qp_fetch_unhold(reg_qp_fetch_unhold),
    .hwif_in_qp_qp_fetch_status_held(fetch_held),
    .hwif_in_qp_qp_fetch_status_slot(fetch_slot),
    .hwif_in_qp_qp_fetch_status_err(fetch_err),
    .hwif_in_qp_qp_fetch_status_loaded(fetch_loaded),
    .hwif_in_qp_qp_fetch_status_evicted(fetch_evicted),
    .hwif_in_qp_qp_fetch_victim_qpn(fetch_victim),
    .hwif_in_qp_qp_status_state(sel_qp_state),
    .hwif_in_qp_qp_status_last_syndrome(8'd0),
    .hwif_in_qp_qp_sq_psn_now_psn(sel_sq_psn),
    .hwif_in_qp_qp_rq_psn_now_psn(sel_epsn),
    .hwif_out_mr_mr_sel_index(reg_mr_sel),
    .hwif_out_mr_mr_key_key(reg_mr_key),
    .hwif_out_mr_mr_va_lo_addr(reg_mr_va_lo),
    .hwif_out_mr_mr_va_hi_addr(reg_mr_va_hi),
    .hwif_out_mr_mr_len_len(reg_mr_len),
    .hwif_out_mr_mr_bus_lo_addr(reg_mr_bus_lo),
    .hwif_out_mr_mr_bus_hi_addr(reg_mr_bus_hi),
    .hwif_out_mr_mr_attr_pd(reg_mr_pd),
    .hwif_out_mr_mr_attr_access(reg_mr_access),
    .hwif_out_mr_mr_cmd_op(reg_mr_cmd),
    .hwif_out_mr_mr_cmd_op_swmod(reg_mr_cmd_valid_raw),
    .hwif_in_dma_rd_req_count_count(rd_req_count_reg),
    .hwif_in_dma_wr_req_count_count(wr_req_count_reg),
    .hwif_in_dma_rd_err_count_count(rd_err_count_reg)
);
wire mmio_bad_req;

pcie_mmio_bridge #(
    .DATA_W(DATA_W),
    .BAR_ADDR_W(16),
    .CSR_ADDR_W(11)
) mmio_inst (
    .clk(clk),
    .rst(rst),
    .rx_req_tlp_hdr(rx_req_tlp_hdr),
    .rx_req_tlp_data(rx_req_tlp_data),
    .rx_req_tlp_keep(rx_req_tlp_keep),
    .rx_req_tlp_valid(rx_req_tlp_valid),
    .rx_req_tlp_last(rx_req_tlp_last),
    .rx_req_tlp_ready(rx_req_tlp_ready),
    .tx_cpl_tlp_hdr(tx_cpl_tlp_hdr),
    .tx_cpl_tlp_data(tx_cpl_tlp_data),
    .tx_cpl_tlp_keep(tx_cpl_tlp_keep),
    .tx_cpl_tlp_valid(tx_cpl_tlp_valid),
    .tx_cpl_tlp_last(tx_cpl_tlp_last),
    .tx_cpl_tlp_ready(tx_cpl_tlp_ready),
    .csr_req(csr_req),
    .csr_req_is_wr(csr_req_is_wr),
    .csr_addr(csr_addr),
    .csr_wr_data(csr_wr_data),
    .csr_wr_biten(csr_wr_biten),
    .csr_req_stall_wr(csr_req_stall_wr || qm_sweep || mr_drain || qp_rec_wait || qp_bind_wait || dbn_wait
        || fetch_wait),
    .csr_req_stall_rd(csr_req_stall_rd || qm_busy || qm_sweep || mr_drain || qp_rec_wait || qp_bind_wait
        || dbn_wait || fetch_wait),
    .csr_rd_ack(csr_rd_ack),
    .csr_rd_err(csr_rd_err),
    .csr_rd_data(csr_rd_data),
    .csr_wr_ack(csr_wr_ack),
    .csr_wr_err(csr_wr_err),
    .cfg_completer_id(cfg_requester_id),
    .stat_bad_req(mmio_bad_req)
);

// ---------------------------------------------------------------- status
// error codes: 1..8 queue manager / executor (see rnic-driver), 9 MMIO,
// 10 MR command refused, 11 and 12 QP command refused, 13 CQ command during
// the sweep, 14 doorbell by a QP number no slot holds
always @(posedge clk) begin
    if (ex_err_valid) begin
        err_code_reg <= ex_err_code;
        err_qn_reg <= ex_err_qn;
    end else if (qm_err_valid) begin
        err_code_reg <= qm_err_code;
        err_qn_reg <= qm_err_qn;
    end else if (cw_err) begin
        err_code_reg <= 8'd5;
        err_qn_reg <= {{(16-QN_W){1'b0}}, cw_err_cqn};
    end else if (mr_reg_err) begin
        err_code_reg <= 8'd10;
        err_qn_reg <= reg_mr_sel;
    end else if (qp_reg_err) begin
        err_code_reg <= qp_reg_err_dmac ? 8'd12 : 8'd11;
        err_qn_reg <= reg_qp_sel;
    end else if (dbn_err_valid) begin
        err_code_reg <= 8'd14;
        err_qn_reg <= dbn_err_qpn;
    end else if (mmio_bad_req) begin
        err_code_reg <= 8'd9;
        err_qn_reg <= 16'hffff;
    end
    err_count_reg <= err_count_reg + {31'd0, ex_err_valid} + {31'd0, qm_err_valid}
        + {31'd0, mmio_bad_req} + {31'd0, cw_err} + {31'd0, mr_reg_err} + {31'd0, qp_reg_err}
        + {31'd0, dbn_err_valid};
    cqe_count_reg <= cqe_count_reg + {31'd0, stat_cqe};
    rd_req_count_reg <= rd_req_count_reg + {31'd0, stat_rd_req};
    wr_req_count_reg <= wr_req_count_reg + {31'd0, stat_wr_tlp};
    rd_err_count_reg <= rd_err_count_reg + {31'd0, stat_rd_err};
    tx_frames_reg <= tx_frames_reg + {31'd0, stat_tx_frame};
    rx_frames_reg <= rx_frames_reg + {31'd0, stat_rx_frame};
    rx_drop_icrc_reg <= rx_drop_icrc_reg + {31'd0, stat_drop_icrc};
    rx_drop_malformed_reg <= rx_drop_malformed_reg + {31'd0, stat_drop_malformed};
    rx_drop_nobuf_reg <= rx_drop_nobuf_reg + {31'd0, stat_drop_nobuf};
    rx_drop_qp_reg <= rx_drop_qp_reg + {31'd0, stat_drop_qp};
    rx_drop_psn_reg <= rx_drop_psn_reg + {31'd0, stat_drop_psn} + {31'd0, stat_ack_drop};
    // (the responder's NAK and read_reply's may come in one cycle: both count)
    rx_nak_reg <= rx_nak_reg + {31'd0, stat_nak} + {31'd0, stat_rr_nak};
    tx_retransmits_reg <= tx_retransmits_reg + {31'd0, stat_retransmit};
    rtx_timeouts_reg <= rtx_timeouts_reg + {31'd0, stat_timeout};
    path_takeouts_reg <= path_takeouts_reg + {31'd0, stat_path_out};
    path_comebacks_reg <= path_comebacks_reg + {31'd0, stat_path_back};
    path_probes_reg <= path_probes_reg + {31'd0, stat_probe};
    if (stat_probe_rtt_v) begin
        path_probe_rtt_reg <= stat_probe_rtt;
    end
    rx_nak_seq_reg <= rx_nak_seq_reg + {31'd0, stat_nak_seq};
    rx_rnr_nak_reg <= rx_rnr_nak_reg + {31'd0, stat_rnr};
    rx_drop_guard_reg <= rx_drop_guard_reg + {31'd0, stat_guard};
    rx_drop_transport_reg <= rx_drop_transport_reg + {31'd0, stat_drop_xport};
    rx_drop_wimm_reg <= rx_drop_wimm_reg + {31'd0, stat_drop_wimm};
    ring_busy_cycles_reg <= ring_busy_cycles_reg + {31'd0, stat_ring_busy};
    rx_read_req_reg <= rx_read_req_reg + {31'd0, stat_read_req};
    tx_read_resp_reg <= tx_read_resp_reg + {31'd0, stat_read_resp};
    rx_read_resp_reg <= rx_read_resp_reg + {31'd0, stat_read_placed};
    rx_atomic_reg <= rx_atomic_reg + {31'd0, stat_atomic};
    rx_atomic_replay_reg <= rx_atomic_replay_reg + {31'd0, stat_atomic_replay};
    rx_rd_over_reg <= rx_rd_over_reg + {31'd0, stat_rd_over};

    if (rst) begin
        err_code_reg <= 8'd0;
        err_qn_reg <= 16'd0;
        err_count_reg <= 32'd0;
        cqe_count_reg <= 32'd0;
        rd_req_count_reg <= 32'd0;
        wr_req_count_reg <= 32'd0;
        rd_err_count_reg <= 32'd0;
        tx_frames_reg <= 32'd0;
        rx_frames_reg <= 32'd0;
        rx_drop_icrc_reg <= 32'd0;
        rx_drop_malformed_reg <= 32'd0;
        rx_drop_nobuf_reg <= 32'd0;
        rx_drop_qp_reg <= 32'd0;
        rx_drop_psn_reg <= 32'd0;
        rx_nak_reg <= 32'd0;
        tx_retransmits_reg <= 32'd0;
        rtx_timeouts_reg <= 32'd0;
        path_takeouts_reg <= 32'd0;
        path_comebacks_reg <= 32'd0;
        path_probes_reg <= 32'd0;
        path_probe_rtt_reg <= 16'd0;
        rx_nak_seq_reg <= 32'd0;
        rx_rnr_nak_reg <= 32'd0;
        rx_drop_guard_reg <= 32'd0;
        rx_drop_transport_reg <= 32'd0;
        rx_drop_wimm_reg <= 32'd0;
        ring_busy_cycles_reg <= 32'd0;
        rx_read_req_reg <= 32'd0;
        tx_read_resp_reg <= 32'd0;
        rx_read_resp_reg <= 32'd0;
        rx_atomic_reg <= 32'd0;
        rx_atomic_replay_reg <= 32'd0;
        rx_rd_over_reg <= 32'd0;
    end
end

// ---------------------------------------------------------------- configuration flash
spi_flash_ctrl #(
    .BUF_BYTES(256),
    .BLOCK_NEXT(32'h0)
) flash_inst (
    .clk(clk),
    .rst(rst),
    .s_req(flash_s_req),
    .s_addr(flash_s_addr),
    .s_req_is_wr(flash_s_req_is_wr),
    .s_wr_data(flash_s_wr_data),
    .s_wr_biten(flash_s_wr_biten),
    .s_rd_ack(flash_s_rd_ack),
    .s_rd_data(flash_s_rd_data),
    .s_wr_ack(flash_s_wr_ack),
    .boot_slot(boot_slot),
    .boot_fallback(boot_fallback),
    .reconfig_req(reconfig_req),
    .flash_sck(flash_sck),
    .flash_cs_n(flash_cs_n),
    .flash_io_o(flash_io_o),
    .flash_io_oe(flash_io_oe),
    .flash_io_i(flash_io_i)
);

endmodule

`resetall
