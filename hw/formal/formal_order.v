// Formal harness: the receive-completion ordering of rnic, checked by
// bounded model checking (yosys-smtbmc). See hw/formal/README.md.
//
// The real modules that decide when a receive CQE may leave the core are
// instantiated as built: responder (completion barrier, layer 3),
// cqe_writer (RO=0 write or flush read first, layer 4), dma_wr_engine (in
// order descriptors, layer 4), and the arbitration between them with the
// project's reusable blocks (axis_arb_mux / arbiter): the write-descriptor
// arbiter (received payload before CQEs, fixed priority) and the tx_wr_req
// multiplexer (CQE bypass path before the engine, a TLP at a time). Around
// them the solver plays the rest of the chip and the host: packets that
// already passed roce_rx's header and ICRC checks (opcode, PSN, QP, lengths,
// RETH, immediate: all solver-chosen, every cycle), the MR table, the
// receive-WQE reads, the CQ slot allocator and PCIe back-pressure.
//
// The properties that span modules are asserted here, at the core's
// boundary (tx_wr_req, where a TLP "leaves the core"):
//   A1 (property 1, rc): a CQE TLP of the symbolic QP fq leaves only after
//      every payload write descriptor of fq that the responder handed over
//      in the same or an earlier packet has been issued completely by the
//      write engine;
//   A2 (property 1): in normal mode every CQE TLP leaves with RO=0;
//   A3 (property 2, flush mode): such a CQE TLP leaves only after a
//      zero-length read, issued once that payload had left, has completed.
// "Every payload write" is checked with a watched write: the solver picks
// any one payload descriptor of fq (w_pick), so a proof for the picked one
// is a proof for all of them.
//
// Build switches (yosys read_verilog -D...): BREAK_CQE_RO, BREAK_EARLY_CQE,
// BREAK_BYPASS force the dma.debug switch of that name on; each must make
// an assertion fail (hw/formal/run.sh requires it).

`resetall
`timescale 1ns / 1ps
`default_nettype none

module formal_order #(
    parameter DATA_W = 64,
    parameter RAM_ADDR_W = 17,       // rnic_dma's address map: three regions
    parameter LEN_W = 14,
    parameter ID_W = 2,
    parameter NUM_QP = 2,
    parameter QN_W = 1
) (
    input wire clk
);

`ifdef FORMAL

localparam [ID_W-1:0] ID_EXEC = 2'b00, ID_RESP = 2'b01, ID_CQE = 2'b10;   // client tags: the top two id bits
localparam RX_ADDR_W = 12;
localparam RX_SLOT_W = 2;
localparam SEG_W = $clog2(DATA_W / 8);
localparam DESC_W = 64 + RAM_ADDR_W + LEN_W + 1 + ID_W;
localparam TLP_W = 128 + DATA_W + DATA_W / 32;

`ifdef BREAK_CQE_RO
localparam CFG_CQE_RO = 1'b1;
`else
localparam CFG_CQE_RO = 1'b0;
`endif
`ifdef BREAK_EARLY_CQE
localparam CFG_EARLY_CQE = 1'b1;
`else
localparam CFG_EARLY_CQE = 1'b0;
`endif
`ifdef BREAK_BYPASS
localparam CFG_BYPASS = 1'b1;
`else
localparam CFG_BYPASS = 1'b0;
`endif

// ------------------------------------------------------------ reset
// reset in the first cycle, never again (every register also has its
// initial value, as on the FPGA)
reg rst = 1'b1;
always @(posedge clk) rst <= 1'b0;

// ------------------------------------------------------------ solver's choices
(* anyconst *) reg [QN_W-1:0] fq;          // the symbolic QP
(* anyconst *) reg cfg_cqe_flush;          // normal or flush mode: both proven in one run

// packets from roce_rx: any header, any time (the responder samples them
// only at its handshake, so this includes every legal valid/ready sequence)
(* anyseq *) reg [7:0]  pkt_opcode;
(* anyseq *) reg        pkt_ack_req;
(* anyseq *) reg [QN_W-1:0] pkt_qp;
(* anyseq *) reg [3:0]  pkt_psn;        // PSNs 0..15: wrap-around at 2^24 is not covered
(* anyseq *) reg [31:0] pkt_reth_rkey;
(* anyseq *) reg [9:0]  pkt_reth_len;   // messages up to 1023 bytes (8 packets)
(* anyseq *) reg [RX_ADDR_W-1:0] pkt_payload_addr;
(* anyseq *) reg [12:0] pkt_payload_len;
(* anyseq *) reg [RX_SLOT_W-1:0] pkt_slot;
(* anyseq *) reg        pkt_valid;

// MR table, receive doorbells, write guard
(* anyseq *) reg        mr_ok;
(* anyseq *) reg [15:0] mr_bus_lo;
(* anyseq *) reg        wr_guard_ok;
(* anyseq *) reg        mr_change;
(* anyseq *) reg        rq_db_valid;
(* anyseq *) reg [QN_W-1:0] rq_db_qpn;
(* anyseq *) reg [15:0] rq_db_pi;

// receive-WQE reads and CQE staging-RAM writes
`ifdef RESP_ENV
// rnic_dma's read engine, its RAM writes snooped; the staging RAM's port
wire [3:0]  rd_error;
wire [RAM_ADDR_W-SEG_W-1:0] snoop_addr;
wire [DATA_W-1:0] snoop_data;
wire [DATA_W/8-1:0] snoop_strb;
wire        snoop_en;
wire        cw_ram_ready;
`else
// the solver's (see the DMA section)
(* anyseq *) reg        rd_desc_ready;
(* anyseq *) reg        rd_done_cw;
(* anyseq *) reg        rd_done_rs;
(* anyseq *) reg [3:0]  rd_error;
(* anyseq *) reg [RAM_ADDR_W-SEG_W-1:0] snoop_addr;
(* anyseq *) reg [DATA_W-1:0] snoop_data;
(* anyseq *) reg [DATA_W/8-1:0] snoop_strb;
(* anyseq *) reg        snoop_en;
(* anyseq *) reg        cw_ram_ready;
`endif
wire [63:0] cw_rd_pcie_addr;
wire [LEN_W-1:0] cw_rd_len;
wire [63:0] rs_rd_pcie_addr;
wire [RAM_ADDR_W-1:0] rs_rd_ram_addr;
wire [LEN_W-1:0] rs_rd_len;
wire [RAM_ADDR_W-SEG_W-1:0] cw_ram_addr;
wire [DATA_W-1:0] cw_ram_data;
wire [DATA_W/8-1:0] cw_ram_strb;
wire        cw_ram_en;

// CQ slot allocator, staging RAM, ACK path, host side of tx_wr_req
(* anyseq *) reg        cq_alloc_done;
(* anyseq *) reg        cq_alloc_ok;
(* anyseq *) reg        cq_alloc_phase;
(* anyseq *) reg [8:0]  cq_slot_lo;
(* anyseq *) reg        ack_ready;
(* anyseq *) reg        tx_ready;

(* anyseq *) reg        w_pick;            // which payload descriptor is watched

// ------------------------------------------------------------ QP context
// every QP in RTS, rc, PMTU 128 bytes (the smallest); QP n completes on CQ n
wire [QN_W-1:0] ctx_qpn;
// the QP context answers a cycle after the QP number, as qp_context does
reg [QN_W-1:0] ctx_qpn_q = {QN_W{1'b0}};
always @(posedge clk) ctx_qpn_q <= ctx_qpn;
wire [QN_W-1:0] cq_alloc_cqn;

// The address map is how the harness tells TLPs apart at tx_wr_req:
// payload goes below 2^16 (so its TLPs have 3DW headers), a CQ slot has
// bit 63 set (4DW header) and bit 62 set only for fq's CQ; the slot is
// 32-byte aligned. Address bits that only move data around are narrowed
// to keep the solver fast: the low 16 bits of a buffer and 9 bits of a slot
// are the solver's, which covers every MPS and 4 KiB boundary case of the
// engine's splitter.
wire [63:0] mr_bus = {48'd0, mr_bus_lo};
wire [63:0] cq_alloc_addr = {1'b1, cq_alloc_cqn == fq, 48'd0, cq_slot_lo, 5'd0};

// ------------------------------------------------------------ responder
wire        s_pkt_ready;
wire [QN_W-1:0] rs_cqe_cqn;
wire [247:0] rs_cqe_data;
wire        rs_cqe_valid, rs_cqe_ready;
wire [63:0] rs_wr_pcie_addr;
wire [RAM_ADDR_W-1:0] rs_wr_ram_addr;
wire [LEN_W-1:0] rs_wr_len;
wire [ID_W-1:0] rs_wr_id;
wire        rs_wr_valid, rs_wr_ready, rs_wr_status;
wire [ID_W-1:0] rs_rd_id;
wire        rs_rd_valid, rs_rd_ready, rs_rd_status;
wire        cq_req_ready;
wire        ack_valid;

/* verilator lint_off PINCONNECTEMPTY */
`ifdef RESP_ENV
// The back end alone (cqe_writer, arbiters, write engine): the solver
// plays the responder's two outputs, payload write descriptors (any QP,
// 1..128 bytes, RO=1) and CQE requests (any CQ), in any order and timing.
// Layer 4 must keep every payload descriptor accepted before a CQE
// request of the QP ahead of that CQE on tx_wr_req, whatever the
// responder does; that the responder asks only after its payload is
// accepted is layer 3, proven by formal_responder.
(* anyseq *) reg env_wr_valid;
(* anyseq *) reg [QN_W-1:0] env_qp;
(* anyseq *) reg [15:0] env_wr_addr;
(* anyseq *) reg [11:0] env_wr_ram;
(* anyseq *) reg [6:0] env_wr_len;
(* anyseq *) reg env_cqe_valid;
(* anyseq *) reg [QN_W-1:0] env_cqe_qp;
assign ctx_qpn = env_qp;
assign rs_wr_valid = env_wr_valid && !rst;     // (nothing is taken in reset)
assign rs_wr_pcie_addr = {48'd0, env_wr_addr};
assign rs_wr_ram_addr = {5'h10, env_wr_ram};   // RX RAM region
assign rs_wr_len = {{(LEN_W-8){1'b0}}, {1'b0, env_wr_len} + 8'd1};
assign rs_wr_id = ID_RESP;
assign rs_cqe_valid = env_cqe_valid && !rst;
assign rs_cqe_cqn = env_cqe_qp;
assign rs_cqe_data = 248'd0;
assign s_pkt_ready = 1'b0;
assign rs_rd_valid = 1'b0;
assign rs_rd_id = ID_RESP;
assign rs_rd_pcie_addr = 64'd0;
assign rs_rd_ram_addr = {RAM_ADDR_W{1'b0}};
assign rs_rd_len = {LEN_W{1'b0}};
assign ack_valid = 1'b0;
wire unused_env = &{1'b0, rs_wr_status, rs_rd_ready, rs_rd_status, pkt_opcode, pkt_ack_req,
    pkt_qp, pkt_psn, pkt_reth_rkey, pkt_reth_len, pkt_payload_addr, pkt_payload_len, pkt_slot,
    pkt_valid, mr_ok, mr_bus, wr_guard_ok, mr_change, rq_db_valid, rq_db_qpn, rq_db_pi,
    rd_error, snoop_addr, snoop_data, snoop_strb, snoop_en, ack_ready};
`else
responder #(
    .DATA_W(DATA_W),
    .RAM_ADDR_W(RAM_ADDR_W),
    .RX_ADDR_W(RX_ADDR_W),
    .RX_SLOT_W(RX_SLOT_W),
    .NUM_QP(NUM_QP),
    .QN_W(QN_W),
    .LEN_W(LEN_W),
    .ID_W(ID_W),
    .RX_RAM_BASE(17'h10000),  // rnic_dma's RX RAM region
    .RQWQE_RAM(17'h00400),    // in the staging RAM region
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
    .s_pkt_reth_rkey(pkt_reth_rkey),
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
    .ctx_mp(1'b0),
    .ctx_mp_wshift(3'd0),
    .load_rtr(1'b0),
    .load_reset(1'b0),
    .load_qpn({QN_W{1'b0}}),
    .load_qpn_next({QN_W{1'b0}}),
    .load_psn(24'd0),
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
    .m_rd_desc_pcie_addr(rs_rd_pcie_addr),
    .m_rd_desc_ram_addr(rs_rd_ram_addr),
    .m_rd_desc_len(rs_rd_len),
    .m_rd_desc_id(rs_rd_id),
    .m_rd_desc_valid(rs_rd_valid),
    .m_rd_desc_ready(rs_rd_ready),
    .s_rd_status_valid(rs_rd_status),
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
    .m_wr_desc_ready(rs_wr_ready),
    .s_wr_status_valid(rs_wr_status),
    .m_wr_desc_key(),
    .m_wr_desc_access(),
    .wr_guard_ok(wr_guard_ok),
    .mr_change(mr_change),
    .m_cqe_cqn(rs_cqe_cqn),
    .m_cqe_data(rs_cqe_data),
    .m_cqe_valid(rs_cqe_valid),
    .m_cqe_ready(rs_cqe_ready),
    .cqe_writer_idle(cq_req_ready),
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
`endif

// ------------------------------------------------------------ CQE writer
// (its only client here is the responder: receive completions)
wire [63:0] cw_wr_pcie_addr;
wire [RAM_ADDR_W-1:0] cw_wr_ram_addr;
wire [LEN_W-1:0] cw_wr_len;
wire        cw_wr_ro;
wire [ID_W-1:0] cw_wr_id;
wire        cw_wr_valid, cw_wr_ready, cw_wr_status;
wire [ID_W-1:0] cw_rd_id;
wire        cw_rd_valid, cw_rd_ready, cw_rd_status;
wire        wr_engine_idle;
wire [127:0] byp_hdr;
wire [DATA_W-1:0] byp_data;
wire [DATA_W/32-1:0] byp_keep;
wire        byp_valid, byp_last, byp_ready;

assign rs_cqe_ready = cq_req_ready;

cqe_writer #(
    .DATA_W(DATA_W),
    .RAM_ADDR_W(RAM_ADDR_W),
    .QN_W(QN_W),
    .LEN_W(LEN_W),
    .ID_W(ID_W),
    .SLOT_BASE(17'h00000),
    .ID_TAG(ID_CQE)
) cqe (
    .clk(clk),
    .rst(rst),
    .s_req_valid(rs_cqe_valid),
    .s_req_ready(cq_req_ready),
    .s_req_cqn(rs_cqe_cqn),
    .s_req_cqe(rs_cqe_data),
    .cq_alloc_valid(),
    .cq_alloc_cqn(cq_alloc_cqn),
    .cq_alloc_done(cq_alloc_done),
    .cq_alloc_ok(cq_alloc_ok),
    .cq_alloc_bad(1'b0),
    .cq_alloc_addr(cq_alloc_addr),
    .cq_alloc_phase(cq_alloc_phase),
    .cq_notify(),
    .cq_notify_cqn(),
    .m_ram_wr_addr(cw_ram_addr),
    .m_ram_wr_data(cw_ram_data),
    .m_ram_wr_strb(cw_ram_strb),
    .m_ram_wr_en(cw_ram_en),
    .m_ram_wr_ready(cw_ram_ready),
    .m_wr_desc_pcie_addr(cw_wr_pcie_addr),
    .m_wr_desc_ram_addr(cw_wr_ram_addr),
    .m_wr_desc_len(cw_wr_len),
    .m_wr_desc_ro(cw_wr_ro),
    .m_wr_desc_id(cw_wr_id),
    .m_wr_desc_valid(cw_wr_valid),
    .m_wr_desc_ready(cw_wr_ready),
    .s_wr_status_valid(cw_wr_status),
    .m_rd_desc_pcie_addr(cw_rd_pcie_addr),
    .m_rd_desc_len(cw_rd_len),
    .m_rd_desc_id(cw_rd_id),
    .m_rd_desc_valid(cw_rd_valid),
    .m_rd_desc_ready(cw_rd_ready),
    .s_rd_status_valid(cw_rd_status),
    .wr_engine_idle(wr_engine_idle),
    .m_byp_tlp_hdr(byp_hdr),
    .m_byp_tlp_data(byp_data),
    .m_byp_tlp_keep(byp_keep),
    .m_byp_tlp_valid(byp_valid),
    .m_byp_tlp_last(byp_last),
    .m_byp_tlp_ready(byp_ready),
    .cfg_cqe_ro(CFG_CQE_RO),
    .cfg_cqe_flush(cfg_cqe_flush),
    .cfg_bypass(CFG_BYPASS),
    .cfg_requester_id(16'h0100),
    .err_cq_disabled(),
    .err_cqn(),
    .stat_cqe()
);

`ifdef RESP_ENV
// ------------------------------------------------------------ DMA subsystem
// rnic_dma as built: both engines, the RAMs, the read- and write-descriptor
// arbiters, the outstanding-write count (flush mode's "engine idle") and
// the tx_wr_req multiplexer with the CQE bypass. Small parameters: one read
// tag (RD_TAG_W=1: two reads outstanding), a 4-deep write-descriptor FIFO,
// 16-byte RAMs (payload bytes have no bearing on order). The executor
// (port ex) is absent: no executor descriptors. The host's side of PCIe is
// the solver's: read-request back-pressure and completions (any header, any
// data, any time; the read engine checks them against its tag table, so a
// read can only finish after its request left), and tx_wr_req back-pressure.
(* anyseq *) reg        tx_rd_ready;
(* anyseq *) reg [127:0] cpl_hdr;
(* anyseq *) reg [DATA_W-1:0] cpl_data;
(* anyseq *) reg [DATA_W/32-1:0] cpl_keep;
(* anyseq *) reg        cpl_valid;
(* anyseq *) reg        cpl_last;

wire        ex_rd_ready, ex_wr_ready, ex_rd_status, ex_wr_status;
wire [ID_W-1:0] rd_status_id;
wire [127:0] tx_hdr;
wire        tx_valid, tx_last;

rnic_dma #(
    .DATA_W(DATA_W),
    .RAM_ADDR_W(RAM_ADDR_W),
    .STG_ADDR_W(4),
    .TXR_ADDR_W(4),
    .RXR_ADDR_W(4),
    .LEN_W(LEN_W),
    .ID_W(ID_W),
    .RD_TAG_W(1),
    .WR_DESC_FIFO_DEPTH(4),
    .ID_EXEC(ID_EXEC),
    .ID_RESP(ID_RESP),
    .ID_CQE(ID_CQE),
    .ID_RRSP({ID_W{1'b1}})
) dma (
    .clk(clk),
    .rst(rst),
    .tx_rd_req_tlp_hdr(),
    .tx_rd_req_tlp_valid(),
    .tx_rd_req_tlp_ready(tx_rd_ready),
    .rx_cpl_tlp_hdr(cpl_hdr),
    .rx_cpl_tlp_data(cpl_data),
    .rx_cpl_tlp_keep(cpl_keep),
    .rx_cpl_tlp_valid(cpl_valid && !rst),
    .rx_cpl_tlp_last(cpl_last),
    .rx_cpl_tlp_ready(),
    .tx_wr_req_tlp_hdr(tx_hdr),
    .tx_wr_req_tlp_data(),
    .tx_wr_req_tlp_keep(),
    .tx_wr_req_tlp_valid(tx_valid),
    .tx_wr_req_tlp_last(tx_last),
    .tx_wr_req_tlp_ready(tx_ready),
    .cfg_max_payload(3'd0),           // MPS 128 bytes
    .cfg_max_read_req(3'd0),          // MRRS 128 bytes
    .cfg_requester_id(16'h0100),
    .s_ex_rd_pcie_addr(64'd0),
    .s_ex_rd_ram_addr({RAM_ADDR_W{1'b0}}),
    .s_ex_rd_len({LEN_W{1'b0}}),
    .s_ex_rd_id(ID_EXEC),
    .s_ex_rd_valid(1'b0),
    .s_ex_rd_ready(ex_rd_ready),
    .s_rs_rd_pcie_addr(rs_rd_pcie_addr),
    .s_rs_rd_ram_addr(rs_rd_ram_addr),
    .s_rs_rd_len(rs_rd_len),
    .s_rs_rd_id(rs_rd_id),
    .s_rs_rd_valid(rs_rd_valid),
    .s_rs_rd_ready(rs_rd_ready),
    .s_cw_rd_pcie_addr(cw_rd_pcie_addr),
    .s_cw_rd_len(cw_rd_len),
    .s_cw_rd_id(cw_rd_id),
    .s_cw_rd_valid(cw_rd_valid),
    .s_cw_rd_ready(cw_rd_ready),
    .s_rr_rd_pcie_addr(64'd0),
    .s_rr_rd_ram_addr({RAM_ADDR_W{1'b0}}),
    .s_rr_rd_len({LEN_W{1'b0}}),
    .s_rr_rd_id({ID_W{1'b1}}),
    .s_rr_rd_valid(1'b0),
    .s_rr_rd_ready(),
    .rd_status_id(rd_status_id),
    .rd_status_error(rd_error),
    .ex_rd_status(ex_rd_status),
    .rs_rd_status(rs_rd_status),
    .cw_rd_status(cw_rd_status),
    .rr_rd_status(),
    .s_ex_wr_pcie_addr(64'd0),
    .s_ex_wr_ram_addr({RAM_ADDR_W{1'b0}}),
    .s_ex_wr_len({LEN_W{1'b0}}),
    .s_ex_wr_id(ID_EXEC),
    .s_ex_wr_valid(1'b0),
    .s_ex_wr_ready(ex_wr_ready),
    .s_rs_wr_pcie_addr(rs_wr_pcie_addr),
    .s_rs_wr_ram_addr(rs_wr_ram_addr),
    .s_rs_wr_len(rs_wr_len),
    .s_rs_wr_id(rs_wr_id),
    .s_rs_wr_valid(rs_wr_valid),
    .s_rs_wr_ready(rs_wr_ready),
    .s_cw_wr_pcie_addr(cw_wr_pcie_addr),
    .s_cw_wr_ram_addr(cw_wr_ram_addr),
    .s_cw_wr_len(cw_wr_len),
    .s_cw_wr_ro(cw_wr_ro),
    .s_cw_wr_id(cw_wr_id),
    .s_cw_wr_valid(cw_wr_valid),
    .s_cw_wr_ready(cw_wr_ready),
    .ex_wr_status(ex_wr_status),
    .rs_wr_status(rs_wr_status),
    .cw_wr_status(cw_wr_status),
    .wr_engine_idle(wr_engine_idle),
    .s_byp_tlp_hdr(byp_hdr),
    .s_byp_tlp_data(byp_data),
    .s_byp_tlp_keep(byp_keep),
    .s_byp_tlp_valid(byp_valid),
    .s_byp_tlp_last(byp_last),
    .s_byp_tlp_ready(byp_ready),
    .ram_snoop_addr(snoop_addr),
    .ram_snoop_data(snoop_data),
    .ram_snoop_strb(snoop_strb),
    .ram_snoop_en(snoop_en),
    .s_cw_ram_wr_addr(cw_ram_addr),
    .s_cw_ram_wr_data(cw_ram_data),
    .s_cw_ram_wr_strb(cw_ram_strb),
    .s_cw_ram_wr_en(cw_ram_en),
    .s_cw_ram_wr_ready(cw_ram_ready),
    .s_txr_rd_addr({(4-SEG_W){1'b0}}),
    .s_txr_rd_en(1'b0),
    .s_txr_rd_data(),
    .s_rxr_wr_addr({(4-SEG_W){1'b0}}),
    .s_rxr_wr_data({DATA_W{1'b0}}),
    .s_rxr_wr_strb({(DATA_W/8){1'b0}}),
    .s_rxr_wr_en(1'b0),
    .stat_rd_req(),
    .stat_rd_err(),
    .stat_wr_tlp()
);
wire wr_status_valid = rs_wr_status || cw_wr_status;
// rnic_dma's write-descriptor arbiter is combinational (axis_arb_mux passes
// a beat through in the cycle it is taken), so a client's handshake is the
// engine's acceptance (no executor descriptors here)
wire eng_acc = (rs_wr_valid && rs_wr_ready) || (cw_wr_valid && cw_wr_ready);
`else
// e2e: rnic_dma's arbitration rebuilt from the same blocks (axis_arb_mux)
// plus a copy of its wr_outstanding_reg line, and the read engine played
// by the solver. rnic_dma as built (with the real read engine) measured
// 99 s for e2e at depth 28 instead of 20 s, moved the early-cqe
// counterexample from cycle 12 to 25 and took 222 s for that job alone:
// over the CI budget (hw/formal/README.md). The back end above is the
// real rnic_dma.
// ------------------------------------------------------------ read side
// read-descriptor arbiter (CQE flush reads before receive-WQE fetches);
// the read engine is the solver: each client has at most one read
// outstanding (both wait for it), answered with one status whenever the
// solver likes, one status per cycle
wire [1:0] rd_s_ready;
wire rd_m_valid;
wire [ID_W-1:0] rd_m_id;
axis_arb_mux #(.PORTS(2), .WIDTH(ID_W)) rd_arb (
    .clk(clk),
    .rst(rst),
    .s_data({rs_rd_id, cw_rd_id}),
    .s_valid({rs_rd_valid, cw_rd_valid}),
    .s_last(2'b11),
    .s_ready(rd_s_ready),
    .m_data(rd_m_id),
    .m_valid(rd_m_valid),
    .m_last(),
    .m_sel(),
    .m_ready(rd_desc_ready)
);
assign cw_rd_ready = rd_s_ready[0];
assign rs_rd_ready = rd_s_ready[1];

reg rd_pend_cw = 1'b0;
reg rd_pend_rs = 1'b0;
assign cw_rd_status = rd_pend_cw && rd_done_cw;
assign rs_rd_status = rd_pend_rs && rd_done_rs && !cw_rd_status;
always @(posedge clk) begin
    if (cw_rd_status) rd_pend_cw <= 1'b0;
    if (rs_rd_status) rd_pend_rs <= 1'b0;
    if (rd_m_valid && rd_desc_ready && rd_m_id == ID_CQE) rd_pend_cw <= 1'b1;
    if (rd_m_valid && rd_desc_ready && rd_m_id == ID_RESP) rd_pend_rs <= 1'b1;
    if (rst) begin
        rd_pend_cw <= 1'b0;
        rd_pend_rs <= 1'b0;
    end
end

// ------------------------------------------------------------ write side
// write-descriptor arbiter: received payload (RO=1) before CQEs
wire [1:0] wr_s_ready;
wire [DESC_W-1:0] wr_m_desc;
wire wr_m_valid, wr_m_ready;
axis_arb_mux #(.PORTS(2), .WIDTH(DESC_W)) wr_arb (
    .clk(clk),
    .rst(rst),
    .s_data({cw_wr_pcie_addr, cw_wr_ram_addr, cw_wr_len, cw_wr_ro, cw_wr_id,
             rs_wr_pcie_addr, rs_wr_ram_addr, rs_wr_len, 1'b1, rs_wr_id}),
    .s_valid({cw_wr_valid, rs_wr_valid}),
    .s_last(2'b11),
    .s_ready(wr_s_ready),
    .m_data(wr_m_desc),
    .m_valid(wr_m_valid),
    .m_last(),
    .m_sel(),
    .m_ready(wr_m_ready)
);
assign rs_wr_ready = wr_s_ready[0];
assign cw_wr_ready = wr_s_ready[1];

wire [ID_W-1:0] wr_status_id;
wire wr_status_valid;
wire [127:0] eng_hdr;
wire [DATA_W-1:0] eng_data;
wire [DATA_W/32-1:0] eng_keep;
wire eng_valid, eng_last, eng_ready;

dma_wr_engine #(
    .DATA_W(DATA_W),
    .RAM_ADDR_W(RAM_ADDR_W),
    .LEN_W(LEN_W),
    .ID_W(ID_W),
    .DESC_FIFO_DEPTH(4)
) eng (
    .clk(clk),
    .rst(rst),
    .s_desc_pcie_addr(wr_m_desc[DESC_W-1 -: 64]),
    .s_desc_ram_addr(wr_m_desc[DESC_W-65 -: RAM_ADDR_W]),
    .s_desc_len(wr_m_desc[ID_W+1 +: LEN_W]),
    .s_desc_ro(wr_m_desc[ID_W]),
    .s_desc_id(wr_m_desc[ID_W-1:0]),
    .s_desc_valid(wr_m_valid),
    .s_desc_ready(wr_m_ready),
    .m_status_id(wr_status_id),
    .m_status_valid(wr_status_valid),
    .m_ram_rd_addr(),
    .m_ram_rd_en(),
    .s_ram_rd_data({DATA_W{1'b0}}),   // payload bytes: no bearing on order
    .tx_wr_req_tlp_hdr(eng_hdr),
    .tx_wr_req_tlp_data(eng_data),
    .tx_wr_req_tlp_keep(eng_keep),
    .tx_wr_req_tlp_valid(eng_valid),
    .tx_wr_req_tlp_last(eng_last),
    .tx_wr_req_tlp_ready(eng_ready),
    .cfg_max_payload(3'd0),           // MPS 128 bytes
    .cfg_requester_id(16'h0100),
    .stat_tlp_issued()
);
assign rs_wr_status = wr_status_valid && wr_status_id == ID_RESP;
assign cw_wr_status = wr_status_valid && wr_status_id == ID_CQE;

// write descriptors accepted but not yet issued: flush mode waits for zero
// (rnic_dma's wr_outstanding_reg, the one line of glue that is not a module)
reg [7:0] wr_outstanding_reg = 8'd0;
always @(posedge clk) begin
    wr_outstanding_reg <= rst ? 8'd0
        : wr_outstanding_reg + {7'd0, wr_m_valid && wr_m_ready} - {7'd0, wr_status_valid};
end
assign wr_engine_idle = wr_outstanding_reg == 8'd0;

// tx_wr_req: the CQE bypass path (debug switch) before the engine, a TLP at a time
wire [1:0] tx_s_ready;
wire [TLP_W-1:0] tx_tlp;
wire tx_valid, tx_last;
axis_arb_mux #(.PORTS(2), .WIDTH(TLP_W)) tx_mux (
    .clk(clk),
    .rst(rst),
    .s_data({eng_hdr, eng_data, eng_keep, byp_hdr, byp_data, byp_keep}),
    .s_valid({eng_valid, byp_valid}),
    .s_last({eng_last, byp_last}),
    .s_ready(tx_s_ready),
    .m_data(tx_tlp),
    .m_valid(tx_valid),
    .m_last(tx_last),
    .m_sel(),
    .m_ready(tx_ready)
);
assign byp_ready = tx_s_ready[0];
assign eng_ready = tx_s_ready[1];
wire [127:0] tx_hdr = tx_tlp[TLP_W-1 -: 128];
wire eng_acc = wr_m_valid && wr_m_ready;
wire ex_wr_status = 1'b0;
wire ex_rd_status = 1'b0;
`endif
/* verilator lint_on PINCONNECTEMPTY */

// ------------------------------------------------------------ observers
wire tx_hs = tx_valid && tx_ready;
// a CQE TLP: 4DW header (fmt 011) whose address has bit 63 set
wire tx_is_cqe = tx_hdr[125] && tx_hdr[63];
wire tx_cqe_fq = tx_is_cqe && tx_hdr[62];
wire tx_ro = tx_hdr[109];             // Attr[1], relaxed ordering

wire pkt_hs = pkt_valid && !rst && s_pkt_ready;
wire rs_cqe_fq = rs_cqe_valid && rs_cqe_ready && rs_cqe_cqn == fq;
wire rs_wr_hs = rs_wr_valid && rs_wr_ready;

reg [7:0] cqe_req_cnt = 8'd0;        // fq CQEs requested by the responder
reg [7:0] cqe_req_before = 8'd0;     // ... by packets before the current one
reg [7:0] cqe_out_cnt = 8'd0;        // fq CQE TLPs that have left
reg [7:0] acc_cnt = 8'd0;            // descriptors the engine accepted
reg [7:0] st_cnt = 8'd0;             // descriptors it issued completely (statuses)
reg       w_armed = 1'b0;            // the watched payload descriptor
reg [7:0] w_seq = 8'd0;              // its place in the engine's descriptor order
reg [7:0] w_k = 8'd0;                // fq CQEs requested before its packet
reg       w_flush_sent = 1'b0;       // a flush read accepted after it left
reg       w_flush_done = 1'b0;       // ... and completed

wire w_arm = rs_wr_hs && ctx_qpn == fq && w_pick && !w_armed;
// statuses come in descriptor order, one cycle after the last beat of the
// descriptor's last TLP was taken on tx_wr_req
wire w_left = w_armed && (st_cnt > w_seq || (st_cnt == w_seq && wr_status_valid));
// a CQE TLP of fq that completes the watched write's packet or a later one
wire cqe_covers_w = w_armed && cqe_out_cnt >= w_k;

always @(posedge clk) begin
    if (pkt_hs) cqe_req_before <= cqe_req_cnt;
    if (rs_cqe_fq) cqe_req_cnt <= cqe_req_cnt + 8'd1;
    if (tx_hs && tx_last && tx_cqe_fq) cqe_out_cnt <= cqe_out_cnt + 8'd1;
    if (eng_acc) acc_cnt <= acc_cnt + 8'd1;
    if (wr_status_valid) st_cnt <= st_cnt + 8'd1;
    if (w_arm) begin
        w_armed <= 1'b1;
        w_seq <= acc_cnt;             // the responder's descriptor is the one the engine takes now
`ifdef RESP_ENV
        w_k <= cqe_req_cnt;           // CQEs requested after it cover it
`else
        w_k <= cqe_req_before;        // CQEs of its packet and later ones cover it
`endif
    end
    if (cw_rd_valid && cw_rd_ready && w_left) w_flush_sent <= 1'b1;
    if (cw_rd_status && w_flush_sent) w_flush_done <= 1'b1;
end

// consistency of the counting (what w_seq relies on): a status only for a
// descriptor accepted and not yet answered, none for the absent executor
always @* if (wr_status_valid) assert(st_cnt < acc_cnt && !ex_wr_status);
always @* assert(!ex_rd_status);
`ifndef RESP_ENV
// (the rebuilt arbiter is combinational: a responder descriptor taken is one
// the engine takes in the same cycle)
always @* if (rs_wr_hs) assert(eng_acc && wr_m_desc[ID_W-1:0] == ID_RESP);
`endif

// A1, property 1: payload of the CQE's packet and of every earlier packet of
// the QP has left before the CQE (whatever the mode)
always @* if (tx_hs && tx_cqe_fq && cqe_covers_w) assert(w_left);                          // A1

// A2, property 1: in normal mode the CQE is written with RO=0 (so PCIe
// keeps it behind the RO=1 payload)
always @* if (tx_hs && tx_is_cqe && !cfg_cqe_flush) assert(!tx_ro);                        // A2

// A3, property 2: in flush mode, the zero-length read issued after the
// payload left has completed before the CQE leaves
always @* if (tx_hs && tx_cqe_fq && cqe_covers_w && cfg_cqe_flush) assert(w_flush_done);    // A3

// reachability (yosys-smtbmc -c): two complete messages of fq, each
// with payload, have their CQEs out; run.sh checks the depth it needs
reg [7:0] fq_pay_pkts = 8'd0;
always @(posedge clk) if (rs_wr_hs && ctx_qpn == fq) fq_pay_pkts <= fq_pay_pkts + 8'd1;
// (REACH_ONE: one message, for the bounds this model affords: see the README)
`ifdef REACH_ONE
wire f_reach = cqe_out_cnt == 8'd1 && fq_pay_pkts >= 8'd1 && w_armed && w_left;
`else
wire f_reach = cqe_out_cnt == 8'd2 && fq_pay_pkts >= 8'd2 && w_armed && w_left;
`endif
`ifdef COVER_CHECK
always @* assert(!f_reach);    // run.sh expects this to fail: the depth is reached
`else
always @* cover(f_reach);
`endif

`endif

endmodule

`resetall
`default_nettype wire
