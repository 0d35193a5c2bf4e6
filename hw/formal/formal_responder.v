// Formal harness: responder alone, both transports, for the completion
// barrier assertions inside hw/rtl/responder.v (its `ifdef FORMAL
// block): f_barrier and f_executed (property 1, layer 3), f_mp_point and
// f_order (property 3). See hw/formal/README.md.
//
// The solver plays everything around the responder: packets that passed
// roce_rx's checks (any header on any cycle, a symbolic QP among two),
// which QP is rc and which mp (fixed from the start), the MR table, the
// write guard, the receive-WQE reads, the write engine's acceptance and
// statuses, the CQE writer's acceptance. BREAK_EARLY_CQE forces the
// early-cqe switch on; run.sh requires a counterexample then.

`resetall
`timescale 1ns / 1ps
`default_nettype none

module formal_responder #(
    parameter DATA_W = 64,
    parameter RAM_ADDR_W = 16,
    parameter LEN_W = 14,
    parameter ID_W = 2,
    parameter NUM_QP = 2,
    parameter QN_W = 1
) (
    input wire clk
);

`ifdef FORMAL

localparam [ID_W-1:0] ID_RESP = 2'b01;
localparam RX_ADDR_W = 12;
localparam RX_SLOT_W = 2;
localparam SEG_W = $clog2(DATA_W / 8);

`ifdef BREAK_EARLY_CQE
localparam CFG_EARLY_CQE = 1'b1;
`else
localparam CFG_EARLY_CQE = 1'b0;
`endif

reg rst = 1'b1;
always @(posedge clk) rst <= 1'b0;

// which QPs use the multipath transport: all rc (MP_ONLY undefined) or all
// mp (MP_ONLY): one run per transport keeps each model small enough for
// the solver (the other transport's logic folds away as constant)
`ifdef MP_ONLY
wire [NUM_QP-1:0] mp_cfg = {NUM_QP{1'b1}};
`else
wire [NUM_QP-1:0] mp_cfg = {NUM_QP{1'b0}};
`endif

(* anyseq *) reg [7:0]  pkt_opcode;
(* anyseq *) reg        pkt_ack_req;
(* anyseq *) reg [QN_W-1:0] pkt_qp;
(* anyseq *) reg [3:0]  pkt_psn;        // PSNs 0..15: wrap-around at 2^24 is not covered
(* anyseq *) reg [9:0]  pkt_reth_len;   // messages up to 1023 bytes
(* anyseq *) reg [RX_ADDR_W-1:0] pkt_payload_addr;
(* anyseq *) reg [12:0] pkt_payload_len;
(* anyseq *) reg [RX_SLOT_W-1:0] pkt_slot;
(* anyseq *) reg        pkt_valid;
(* anyseq *) reg        mr_ok;
(* anyseq *) reg [15:0] mr_bus_lo;
(* anyseq *) reg        wr_guard_ok;
(* anyseq *) reg        mr_change;
(* anyseq *) reg        rq_db_valid;
(* anyseq *) reg [QN_W-1:0] rq_db_qpn;
(* anyseq *) reg [15:0] rq_db_pi;
(* anyseq *) reg        rd_ready;
(* anyseq *) reg        rd_done;
(* anyseq *) reg [3:0]  rd_error;
(* anyseq *) reg [RAM_ADDR_W-SEG_W-1:0] snoop_addr;
(* anyseq *) reg [DATA_W-1:0] snoop_data;
(* anyseq *) reg [DATA_W/8-1:0] snoop_strb;
(* anyseq *) reg        snoop_en;
`ifdef RESP_LOADS
// QP loads (RTR, or out of RESET): the QP is named a cycle ahead
// (load_qpn_next, as qp_context does), never both kinds at once, and a
// load out of RESET never meets a receive doorbell (RQP's one write port:
// the MMIO bridge spaces the writes that cause them)
(* anyseq *) reg        ld_rtr;
(* anyseq *) reg        ld_reset;
(* anyseq *) reg [QN_W-1:0] ld_qpn_next;
(* anyseq *) reg [3:0]  ld_psn;
reg [QN_W-1:0] ld_qpn = {QN_W{1'b0}};
always @(posedge clk) ld_qpn <= ld_qpn_next;
always @* begin
    assume(!(ld_rtr && ld_reset));
    assume(!(ld_reset && rq_db_valid));
end
`else
wire ld_rtr = 1'b0;
wire ld_reset = 1'b0;
wire [QN_W-1:0] ld_qpn_next = {QN_W{1'b0}};
wire [QN_W-1:0] ld_qpn = {QN_W{1'b0}};
wire [3:0] ld_psn = 4'd0;
`endif
(* anyseq *) reg        wr_ready;
(* anyseq *) reg        wr_done;
(* anyseq *) reg        cqe_ready;
(* anyseq *) reg        cw_idle;
(* anyseq *) reg        ack_ready;

wire [63:0] mr_bus = {48'd0, mr_bus_lo};
wire [QN_W-1:0] ctx_qpn;
// the QP context answers a cycle after the QP number, as qp_context does
reg [QN_W-1:0] ctx_qpn_q = {QN_W{1'b0}};
always @(posedge clk) ctx_qpn_q <= ctx_qpn;
wire s_pkt_ready;
wire [QN_W-1:0] rs_cqe_cqn;
wire [247:0] rs_cqe_data;
wire rs_cqe_valid;
wire [63:0] rs_wr_pcie_addr;
wire [RAM_ADDR_W-1:0] rs_wr_ram_addr;
wire [LEN_W-1:0] rs_wr_len;
wire [ID_W-1:0] rs_wr_id;
wire rs_wr_valid;
wire [ID_W-1:0] rs_rd_id;
wire rs_rd_valid;
wire ack_valid;

// the read engine: one receive-WQE read at a time, answered when the solver likes
reg rd_pend = 1'b0;
wire rd_status = rd_pend && rd_done;
always @(posedge clk) begin
    if (rd_status) rd_pend <= 1'b0;
    if (rs_rd_valid && rd_ready) rd_pend <= 1'b1;
    if (rst) rd_pend <= 1'b0;
end
// the write engine: one status per accepted descriptor, in order, later
reg [3:0] wr_out = 4'd0;
wire wr_status = wr_out != 4'd0 && wr_done;
always @(posedge clk) begin
    wr_out <= rst ? 4'd0 : wr_out + {3'd0, rs_wr_valid && wr_ready} - {3'd0, wr_status};
end

/* verilator lint_off PINCONNECTEMPTY */
responder #(
    .DATA_W(DATA_W),
    .RAM_ADDR_W(RAM_ADDR_W),
    .RX_ADDR_W(RX_ADDR_W),
    .RX_SLOT_W(RX_SLOT_W),
    .NUM_QP(NUM_QP),
    .QN_W(QN_W),
    .LEN_W(LEN_W),
    .ID_W(ID_W),
    .RX_RAM_BASE(16'h8000),
    .RQWQE_RAM(16'h4000),
    .ACK_TIMER(16),
    .MP_W(32),
    .MP_NAK_GAP(4),
    .MP_PEND(2),
    .MP_WIMM(2),            // two deferred completions on one QP: their order is checked too
    .ID_TAG(ID_RESP)
) resp (
    .clk(clk),
    .rst(rst),
    .s_pkt_smac(48'd0),
    .s_pkt_sip(32'd0),
    .s_pkt_dip(32'd0),
    .s_pkt_udp_sport(16'd0),
    .s_pkt_se(1'b0),
    .s_pkt_pad_cnt(2'd0),
    .s_pkt_opcode(pkt_opcode),
    .s_pkt_ack_req(pkt_ack_req),
    .s_pkt_dest_qp({{(24-QN_W){1'b0}}, pkt_qp}),
    .s_pkt_psn({20'd0, pkt_psn}),
    .s_pkt_reth_va(64'd0),           // only the MR check reads it: mr_ok is the solver's
    .s_pkt_reth_rkey(32'd0),          // only the MR check reads it: mr_ok is the solver's
    .s_pkt_reth_len({22'd0, pkt_reth_len}),
    .s_pkt_imm(32'h12345678),       // data only: goes into the CQE's bytes
    .s_pkt_aeth_syndrome(8'd0),
    .s_pkt_aeth_msn(24'd0),
    .s_pkt_cmp_lo(32'd0),
    .s_pkt_payload_addr(pkt_payload_addr),
    .s_pkt_payload_len(pkt_payload_len),
    .s_pkt_slot(pkt_slot),
    .s_pkt_valid(pkt_valid && !rst),   // (a packet in the reset cycle would be lost)
    .s_pkt_ready(s_pkt_ready),
    .m_free_valid(),
    .m_free_slot(),
    .ctx_qpn(ctx_qpn),
    .ctx_state(3'd3),                 // RTS
    .ctx_pmtu(3'd0),                  // 128 bytes
    .ctx_remote_write(1'b1),
    .ctx_remote_read(1'b0),
    .ctx_remote_atomic(1'b0),
    .ctx_dest_qpn(24'd7),
    .ctx_dmac(48'd0),
    .ctx_dip(32'd0),
    .ctx_udp_sport(16'd0),
    .ctx_pd(16'd1),
    .ctx_rcq(ctx_qpn_q),
    .ctx_rq_base(64'h1000),
    .ctx_rq_log(4'd3),
    .ctx_min_rnr_timer(5'd0),
    .ctx_max_dest_rd_atomic(3'd0),
    .ctx_mp(mp_cfg[ctx_qpn_q]),
    .ctx_mp_wshift(3'd0),
    .load_rtr(ld_rtr),
    .load_reset(ld_reset),
    .load_qpn(ld_qpn),
    .load_qpn_next(ld_qpn_next),
    .load_psn({20'd0, ld_psn}),
    .set_err(),
    .set_err_qpn(),
    .rq_db_valid(rq_db_valid),
    .rq_db_qpn({{(16-QN_W){1'b0}}, rq_db_qpn}),
    .rq_db_pi(rq_db_pi),
    .mr_key(),
    .mr_va(),
    .mr_len(),
    .mr_pd(),
    .mr_access(),
    .mr_ok(mr_ok),
    .mr_bus(mr_bus),
    .m_rd_desc_pcie_addr(),
    .m_rd_desc_ram_addr(),
    .m_rd_desc_len(),
    .m_rd_desc_id(rs_rd_id),
    .m_rd_desc_valid(rs_rd_valid),
    .m_rd_desc_ready(rd_ready),
    .s_rd_status_valid(rd_status),
    .s_rd_status_error(rd_error),
    .ram_snoop_addr(snoop_addr),
    .ram_snoop_data(snoop_data),
    .ram_snoop_strb(snoop_strb),
    .ram_snoop_en(snoop_en),
    .m_wr_desc_pcie_addr(rs_wr_pcie_addr),
    .m_wr_desc_ram_addr(rs_wr_ram_addr),
    .m_wr_desc_len(rs_wr_len),
    .m_wr_desc_id(rs_wr_id),
    .m_wr_desc_valid(rs_wr_valid),
    .m_wr_desc_ready(wr_ready),
    .s_wr_status_valid(wr_status),
    .m_wr_desc_key(),
    .m_wr_desc_access(),
    .wr_guard_ok(wr_guard_ok),
    .mr_change(mr_change),
    .m_cqe_cqn(rs_cqe_cqn),
    .m_cqe_data(rs_cqe_data),
    .m_cqe_valid(rs_cqe_valid),
    .m_cqe_ready(cqe_ready),
    .cqe_writer_idle(cw_idle),
    .m_ack_dmac(),
    .m_ack_dip(),
    .m_ack_udp_sport(),
    .m_ack_dest_qp(),
    .m_ack_psn(),
    .m_ack_syndrome(),
    .m_ack_msn(),
    .m_ack_mp(),
    .m_ack_valid(ack_valid),
    .m_ack_ready(ack_ready),
    // READ is not served (READ_EN = 0): no job is ever offered
    .m_rr_psn(), .m_rr_msn(), .m_rr_bus(), .m_rr_len(), .m_rr_pmtu_log(), .m_rr_dmac(),
    .m_rr_dip(), .m_rr_udp_sport(), .m_rr_dest_qp(), .m_rr_ack(), .m_rr_syndrome(), .m_rr_valid(),
    .m_rr_atomic(), .m_rr_opa(), .m_rr_opb(), .m_rr_qpn(),
    .m_at_ram_wr_addr(), .m_at_ram_wr_data(), .m_at_ram_wr_strb(), .m_at_ram_wr_en(),
    .m_at_ram_wr_ready(1'b0),
    .s_rec_valid(1'b0), .s_rec_qpn({QN_W{1'b0}}), .s_rec_psn(24'd0), .s_rec_orig(64'd0),
    .m_rr_ready(1'b0),
    .rr_jobs_out(8'd0),
    .m_rx_ack_valid(),
    .m_rx_ack_qpn(),
    .m_rx_ack_psn(),
    .m_rx_ack_syndrome(),
    .m_rx_ack_msn(),
    .rt_lk_qpn(), .rt_lk_psn(), .rt_lk_nak(),
    // our READs' responses are not taken (READ_EN = 0): no READ table
    .rt_hit(1'b0), .rt_idx(2'd0), .rt_first(24'd0), .rt_last(24'd0), .rt_next(24'd0),
    .rt_bus(64'd0), .rt_key(32'd0), .rt_len(32'd0), .rt_atomic(1'b0), .rt_asked(1'b0), .rt_cov(1'b0),
    .rt_cov_idx(2'd0), .rt_cov_next(24'd0), .rt_cov_asked(1'b0),
    .rt_adv_valid(), .rt_adv_idx(), .rt_adv_psn(), .rt_ask_valid(), .rt_ask_idx(), .rt_ask_psn(),
    .rx_ack_room(1'b1), .rx_acks_idle(1'b1),
    .cfg_early_cqe(CFG_EARLY_CQE),
    .cfg_early_read_cqe(1'b0),
    .cfg_no_mr_check(1'b0),
    .sel_qpn({QN_W{1'b0}}),
    .sel_epsn(),
    .pin_qpn({QN_W{1'b0}}),
    .pin_busy(),
    .stat_drop_qp(),
    .stat_drop_psn(),
    .stat_drop_xport(),
    .stat_drop_wimm(),
    .stat_nak(),
    .stat_guard(),
    .stat_rd_resp(),
    .stat_rd_over(),
    .mr_drain()
);

/* verilator lint_on PINCONNECTEMPTY */

// reachability: two complete messages with a CQE each on one QP
reg [7:0] f_cqes [0:NUM_QP-1];
integer k;
initial for (k = 0; k < NUM_QP; k = k + 1) f_cqes[k] = 8'd0;
always @(posedge clk) if (rs_cqe_valid && cqe_ready) f_cqes[ctx_qpn_q] <= f_cqes[ctx_qpn_q] + 8'd1;
wire f_reach = f_cqes[0] == 8'd2 || f_cqes[1] == 8'd2;
`ifdef COVER_CHECK
always @* assert(!f_reach);    // run.sh expects this to fail: the depth is reached
`else
always @* cover(f_reach);
`endif

`endif

endmodule

`resetall
`default_nettype wire
