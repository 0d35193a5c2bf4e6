// rnic Ethernet port subsystem: RoCEv2 framing both ways and the port's
// loopback / fault injection. roce_tx builds frames from packet
// descriptors (the executor's requests and the responder's ACKs/NAKs,
// payload from the TX RAM); roce_rx parses frames addressed to us, writes
// them into the RX RAM and hands their headers to the responder.
// port_loopback_faults sits between both and the MAC (on-chip loopback,
// seeded drops and reordering, for tests without a wire).
//
// The TX arbiter gives ACKs priority over READ responses, and both over
// requests (axis_arb_mux, fixed priority: an ACK waits for a descriptor
// already offered, never the other way round mid-transfer). roce_tx
// reports each packet done in order, so a small FIFO remembers whose
// packet it was: the executor's packets free a TX RAM slot (ex_pkt_done),
// the READ responses a reply slot (rr_pkt_done). In READ_EN builds roce_tx
// reads a RAM space twice the TX RAM's: the reply RAM is its upper half.

`resetall
`timescale 1ns / 1ps
`default_nettype none

module rnic_port #(
    parameter DATA_W = 64,
    parameter RAM_ADDR_W = 17,                 // DMA RAM space (byte addresses)
    parameter TXR_ADDR_W = 15,                 // TX RAM bytes, log2
    parameter RXR_ADDR_W = 15,                 // RX RAM bytes, log2
    parameter [RAM_ADDR_W-1:0] TX_RAM_BASE = 17'h08000,
    parameter RX_SLOTS = 4,                    // RX RAM frame slots
    parameter RX_SLOT_LOG = 13,                // bytes per slot, log2
    parameter RX_SLOT_W = 2,
    parameter READ_EN = 0,                     // 1: READ responses (s_rr_pkt_*)
    parameter [RAM_ADDR_W-1:0] RR_RAM_BASE = 17'h18000,   // the reply RAM (READ_EN)
    parameter SEG_W = $clog2(DATA_W / 8),
    parameter TXP_ADDR_W = TXR_ADDR_W + (READ_EN != 0 ? 1 : 0)
) (
    input  wire                         clk,
    input  wire                         rst,

    // Ethernet MAC side: AXI-Stream frames without FCS (tuser = bad frame)
    output wire [DATA_W-1:0]            m_axis_tx_tdata,
    output wire [DATA_W/8-1:0]          m_axis_tx_tkeep,
    output wire                         m_axis_tx_tvalid,
    output wire                         m_axis_tx_tlast,
    output wire                         m_axis_tx_tuser,
    input  wire                         m_axis_tx_tready,
    input  wire [DATA_W-1:0]            s_axis_rx_tdata,
    input  wire [DATA_W/8-1:0]          s_axis_rx_tkeep,
    input  wire                         s_axis_rx_tvalid,
    input  wire                         s_axis_rx_tlast,
    input  wire                         s_axis_rx_tuser,
    output wire                         s_axis_rx_tready,

    input  wire [47:0]                  cfg_mac,
    input  wire [31:0]                  cfg_ip,
    input  wire                         cfg_lb_loopback,
    input  wire [15:0]                  cfg_lb_drop_thr,
    input  wire [15:0]                  cfg_lb_reorder_thr,
    input  wire [31:0]                  cfg_lb_seed,         // a new value reseeds
    output wire [31:0]                  lb_dropped,
    output wire [31:0]                  lb_reordered,

    // the executor's packets (RETH and ImmDt also used by nothing else)
    input  wire [47:0]                  s_ex_pkt_dmac,
    input  wire [31:0]                  s_ex_pkt_dip,
    input  wire [15:0]                  s_ex_pkt_udp_sport,
    input  wire [7:0]                   s_ex_pkt_opcode,
    input  wire                         s_ex_pkt_se,
    input  wire                         s_ex_pkt_ack_req,
    input  wire [23:0]                  s_ex_pkt_dest_qp,
    input  wire [23:0]                  s_ex_pkt_psn,
    input  wire [63:0]                  s_ex_pkt_reth_va,
    input  wire [31:0]                  s_ex_pkt_reth_rkey,
    input  wire [31:0]                  s_ex_pkt_reth_len,
    input  wire [31:0]                  s_ex_pkt_imm,
    input  wire [63:0]                  s_ex_pkt_atomic_cmp,
    input  wire [RAM_ADDR_W-1:0]        s_ex_pkt_payload_addr,
    input  wire [12:0]                  s_ex_pkt_payload_len,
    input  wire                         s_ex_pkt_valid,
    output wire                         s_ex_pkt_ready,
    output wire                         ex_pkt_done,

    // the responder's ACK/NAK packets (AETH also used by nothing else)
    input  wire [47:0]                  s_ack_dmac,
    input  wire [31:0]                  s_ack_dip,
    input  wire [15:0]                  s_ack_udp_sport,
    input  wire [23:0]                  s_ack_dest_qp,
    input  wire [23:0]                  s_ack_psn,
    input  wire [7:0]                   s_ack_syndrome,
    input  wire [23:0]                  s_ack_msn,
    input  wire                         s_ack_mp,           // the ACK is an mp QP's (MP ACKNOWLEDGE)
    input  wire [127:0]                 s_ack_snak,         // an mp sequence NAK's SNAKETH (MP SELECTIVE NAK)
    input  wire                         s_ack_valid,
    output wire                         s_ack_ready,

    // READ responses (and their NAKs), payload in the reply RAM
    input  wire [47:0]                  s_rr_pkt_dmac,
    input  wire [31:0]                  s_rr_pkt_dip,
    input  wire [15:0]                  s_rr_pkt_udp_sport,
    input  wire [7:0]                   s_rr_pkt_opcode,
    input  wire [23:0]                  s_rr_pkt_dest_qp,
    input  wire [23:0]                  s_rr_pkt_psn,
    input  wire [7:0]                   s_rr_pkt_syndrome,
    input  wire [23:0]                  s_rr_pkt_msn,
    input  wire [RAM_ADDR_W-1:0]        s_rr_pkt_payload_addr,
    input  wire [12:0]                  s_rr_pkt_payload_len,
    input  wire [63:0]                  s_rr_pkt_atomic_orig,   // (beside the mux, as s_ack_snak)
    input  wire                         s_rr_pkt_valid,
    output wire                         s_rr_pkt_ready,
    output wire                         rr_pkt_done,

    // received packets, payload in the RX RAM, slot given back by m_free
    output wire [47:0]                  m_rx_pkt_smac,
    output wire [31:0]                  m_rx_pkt_sip,
    output wire [31:0]                  m_rx_pkt_dip,
    output wire [15:0]                  m_rx_pkt_udp_sport,
    output wire [7:0]                   m_rx_pkt_opcode,
    output wire                         m_rx_pkt_se,
    output wire                         m_rx_pkt_ack_req,
    output wire [1:0]                   m_rx_pkt_pad_cnt,
    output wire [23:0]                  m_rx_pkt_dest_qp,
    output wire [23:0]                  m_rx_pkt_psn,
    output wire [63:0]                  m_rx_pkt_reth_va,
    output wire [31:0]                  m_rx_pkt_reth_rkey,
    output wire [31:0]                  m_rx_pkt_reth_len,
    output wire [31:0]                  m_rx_pkt_imm,
    output wire [7:0]                   m_rx_pkt_aeth_syndrome,
    output wire [23:0]                  m_rx_pkt_aeth_msn,
    output wire [31:0]                  m_rx_pkt_cmp_lo,
    output wire [RXR_ADDR_W-1:0]        m_rx_pkt_payload_addr,
    output wire [12:0]                  m_rx_pkt_payload_len,
    output wire [RX_SLOT_W-1:0]         m_rx_pkt_slot,
    output wire                         m_rx_pkt_valid,
    input  wire                         m_rx_pkt_ready,
    input  wire                         s_rx_free_valid,
    input  wire [RX_SLOT_W-1:0]         s_rx_free_slot,

    // TX RAM read port, RX RAM write port (in rnic_dma)
    output wire [TXP_ADDR_W-SEG_W-1:0]  m_txr_rd_addr,
    output wire                         m_txr_rd_en,
    input  wire [DATA_W-1:0]            m_txr_rd_data,
    output wire [RXR_ADDR_W-SEG_W-1:0]  m_rxr_wr_addr,
    output wire [DATA_W-1:0]            m_rxr_wr_data,
    output wire [DATA_W/8-1:0]          m_rxr_wr_strb,
    output wire                         m_rxr_wr_en,

    output wire                         stat_tx_frame,
    output wire                         stat_rx_frame,
    output wire                         stat_drop_icrc,
    output wire                         stat_drop_malformed,
    output wire                         stat_drop_nobuf
);

`include "rnic_formats.vh"
`include "ack_syndromes.vh"

initial begin
    if (TXR_ADDR_W > RAM_ADDR_W || RXR_ADDR_W > RAM_ADDR_W) begin
        $error("rnic_port: the TX and RX RAMs must fit the DMA RAM space");
        $finish;
    end
    if (RX_SLOTS > (1 << RX_SLOT_W) || RX_SLOTS * (1 << RX_SLOT_LOG) > (1 << RXR_ADDR_W)) begin
        $error("rnic_port: RX_SLOTS slots of 2^RX_SLOT_LOG bytes must fit RX_SLOT_W and the RX RAM");
        $finish;
    end
    if (SEG_W != $clog2(DATA_W / 8)) begin
        $error("rnic_port: SEG_W must be log2(DATA_W/8)");
        $finish;
    end
end

// ---------------------------------------------------------------- loopback and fault injection
wire [DATA_W-1:0] core_tx_tdata;
wire [DATA_W/8-1:0] core_tx_tkeep;
wire core_tx_tvalid, core_tx_tlast, core_tx_tuser, core_tx_tready;
wire [DATA_W-1:0] core_rx_tdata;
wire [DATA_W/8-1:0] core_rx_tkeep;
wire core_rx_tvalid, core_rx_tlast, core_rx_tuser, core_rx_tready;
reg [31:0] lb_seed_prev_reg = 32'd1;
reg lb_seed_load_reg = 1'b0;
wire stat_lb_dropped, stat_lb_reordered;
reg [31:0] lb_dropped_reg = 32'd0;
reg [31:0] lb_reordered_reg = 32'd0;

assign lb_dropped = lb_dropped_reg;
assign lb_reordered = lb_reordered_reg;

always @(posedge clk) begin
    lb_seed_prev_reg <= cfg_lb_seed;
    lb_seed_load_reg <= cfg_lb_seed != lb_seed_prev_reg;
    lb_dropped_reg <= lb_dropped_reg + {31'd0, stat_lb_dropped};
    lb_reordered_reg <= lb_reordered_reg + {31'd0, stat_lb_reordered};
    if (rst) begin
        lb_dropped_reg <= 32'd0;
        lb_reordered_reg <= 32'd0;
    end
end

port_loopback_faults #(
    .DATA_W(DATA_W)
) lb_inst (
    .clk(clk),
    .rst(rst),
    .cfg_loopback(cfg_lb_loopback),
    .cfg_drop_thr(cfg_lb_drop_thr),
    .cfg_reorder_thr(cfg_lb_reorder_thr),
    .cfg_seed(cfg_lb_seed),
    .cfg_seed_load(lb_seed_load_reg),
    .s_tx_tdata(core_tx_tdata),
    .s_tx_tkeep(core_tx_tkeep),
    .s_tx_tvalid(core_tx_tvalid),
    .s_tx_tlast(core_tx_tlast),
    .s_tx_tuser(core_tx_tuser),
    .s_tx_tready(core_tx_tready),
    .m_port_tdata(m_axis_tx_tdata),
    .m_port_tkeep(m_axis_tx_tkeep),
    .m_port_tvalid(m_axis_tx_tvalid),
    .m_port_tlast(m_axis_tx_tlast),
    .m_port_tuser(m_axis_tx_tuser),
    .m_port_tready(m_axis_tx_tready),
    .s_port_tdata(s_axis_rx_tdata),
    .s_port_tkeep(s_axis_rx_tkeep),
    .s_port_tvalid(s_axis_rx_tvalid),
    .s_port_tlast(s_axis_rx_tlast),
    .s_port_tuser(s_axis_rx_tuser),
    .s_port_tready(s_axis_rx_tready),
    .m_rx_tdata(core_rx_tdata),
    .m_rx_tkeep(core_rx_tkeep),
    .m_rx_tvalid(core_rx_tvalid),
    .m_rx_tlast(core_rx_tlast),
    .m_rx_tuser(core_rx_tuser),
    .m_rx_tready(core_rx_tready),
    .stat_dropped(stat_lb_dropped),
    .stat_reordered(stat_lb_reordered)
);

// ---------------------------------------------------------------- receive
/* verilator lint_off UNUSEDSIGNAL */
wire [47:0] rx_pkt_dmac;           // roce_rx only passes frames addressed to us
/* verilator lint_on UNUSEDSIGNAL */

roce_rx #(
    .DATA_W(DATA_W),
    .RAM_ADDR_W(RXR_ADDR_W),
    .NUM_SLOTS(RX_SLOTS),
    .SLOT_LOG(RX_SLOT_LOG)
) roce_rx_inst (
    .clk(clk),
    .rst(rst),
    .s_axis_rx_tdata(core_rx_tdata),
    .s_axis_rx_tkeep(core_rx_tkeep),
    .s_axis_rx_tvalid(core_rx_tvalid),
    .s_axis_rx_tlast(core_rx_tlast),
    .s_axis_rx_tuser(core_rx_tuser),
    .s_axis_rx_tready(core_rx_tready),
    .cfg_mac(cfg_mac),
    .cfg_ip(cfg_ip),
    .m_ram_wr_addr(m_rxr_wr_addr),
    .m_ram_wr_data(m_rxr_wr_data),
    .m_ram_wr_strb(m_rxr_wr_strb),
    .m_ram_wr_en(m_rxr_wr_en),
    .m_pkt_dmac(rx_pkt_dmac),
    .m_pkt_smac(m_rx_pkt_smac),
    .m_pkt_sip(m_rx_pkt_sip),
    .m_pkt_dip(m_rx_pkt_dip),
    .m_pkt_udp_sport(m_rx_pkt_udp_sport),
    .m_pkt_opcode(m_rx_pkt_opcode),
    .m_pkt_se(m_rx_pkt_se),
    .m_pkt_ack_req(m_rx_pkt_ack_req),
    .m_pkt_pad_cnt(m_rx_pkt_pad_cnt),
    .m_pkt_dest_qp(m_rx_pkt_dest_qp),
    .m_pkt_psn(m_rx_pkt_psn),
    .m_pkt_reth_va(m_rx_pkt_reth_va),
    .m_pkt_reth_rkey(m_rx_pkt_reth_rkey),
    .m_pkt_reth_len(m_rx_pkt_reth_len),
    .m_pkt_imm(m_rx_pkt_imm),
    .m_pkt_aeth_syndrome(m_rx_pkt_aeth_syndrome),
    .m_pkt_aeth_msn(m_rx_pkt_aeth_msn),
    .m_pkt_cmp_lo(m_rx_pkt_cmp_lo),
    .m_pkt_payload_addr(m_rx_pkt_payload_addr),
    .m_pkt_payload_len(m_rx_pkt_payload_len),
    .m_pkt_slot(m_rx_pkt_slot),
    .m_pkt_valid(m_rx_pkt_valid),
    .m_pkt_ready(m_rx_pkt_ready),
    .s_free_valid(s_rx_free_valid),
    .s_free_slot(s_rx_free_slot),
    .stat_rx_frame(stat_rx_frame),
    .stat_drop_icrc(stat_drop_icrc),
    .stat_drop_malformed(stat_drop_malformed),
    .stat_drop_nobuf(stat_drop_nobuf)
);

// ---------------------------------------------------------------- transmit
wire [47:0] tx_pkt_dmac;
wire [31:0] tx_pkt_dip;
wire [15:0] tx_pkt_udp_sport;
wire [7:0] tx_pkt_opcode;
wire tx_pkt_se;
wire tx_pkt_ack_req;
wire [23:0] tx_pkt_dest_qp;
wire [23:0] tx_pkt_psn;
wire [7:0] tx_pkt_syndrome;
wire [23:0] tx_pkt_msn;
wire [TXP_ADDR_W-1:0] tx_pkt_payload_addr;
wire [12:0] tx_pkt_payload_len;
wire tx_pkt_valid;
wire tx_pkt_ready;
wire [1:0] tx_pkt_src;                // 0 ACK, 1 READ response, 2 executor
/* verilator lint_off UNUSEDSIGNAL */
wire tx_arb_last;                     // packet descriptors are one beat
wire [RAM_ADDR_W-1:0] ex_pkt_txr_addr = s_ex_pkt_payload_addr - TX_RAM_BASE;
wire [RAM_ADDR_W-1:0] rr_pkt_txr_addr = s_rr_pkt_payload_addr - RR_RAM_BASE;
/* verilator lint_on UNUSEDSIGNAL */
// roce_tx's RAM space: the TX RAM, then (READ_EN) the reply RAM
wire [TXP_ADDR_W-1:0] ex_pkt_txp_addr = {{(TXP_ADDR_W-TXR_ADDR_W){1'b0}}, ex_pkt_txr_addr[TXR_ADDR_W-1:0]};
wire [TXP_ADDR_W-1:0] rr_pkt_txp_addr = {1'b1, rr_pkt_txr_addr[TXP_ADDR_W-2:0]};

// port 0 (ACKs) first. An ACK: opcode ACKNOWLEDGE (an mp QP's: MP
// ACKNOWLEDGE; its sequence NAK: MP SELECTIVE NAK; the responder's syndrome
// 0x40, reserved on the wire: MP PROBE REPLY, BTH only), no payload;
// RETH/MPETH and ImmDt come from the executor and SNAKETH from the
// responder, whichever opcode uses them; the AETH from the ACK or the READ
// response
wire [7:0] ack_opcode = !s_ack_mp ? 8'h11
    : s_ack_syndrome == 8'h60 ? MP_OPCODE_SELECTIVE_NAK
    : s_ack_syndrome == ACK_SYN_PROBE_REPLY ? MP_OPCODE_PROBE_REPLY : MP_OPCODE_ACK;
localparam TXD_W = 48 + 32 + 16 + 8 + 1 + 1 + 24 + 24 + 8 + 24 + TXP_ADDR_W + 13;
axis_arb_mux #(
    .PORTS(3),
    .WIDTH(TXD_W)
) tx_arb_inst (
    .clk(clk),
    .rst(rst),
    .s_data({s_ex_pkt_dmac, s_ex_pkt_dip, s_ex_pkt_udp_sport, s_ex_pkt_opcode, s_ex_pkt_se,
             s_ex_pkt_ack_req, s_ex_pkt_dest_qp, s_ex_pkt_psn, 8'd0, 24'd0, ex_pkt_txp_addr,
             s_ex_pkt_payload_len,
             s_rr_pkt_dmac, s_rr_pkt_dip, s_rr_pkt_udp_sport, s_rr_pkt_opcode, 1'b0, 1'b0,
             s_rr_pkt_dest_qp, s_rr_pkt_psn, s_rr_pkt_syndrome, s_rr_pkt_msn, rr_pkt_txp_addr,
             s_rr_pkt_payload_len,
             s_ack_dmac, s_ack_dip, s_ack_udp_sport, ack_opcode, 1'b0, 1'b0,
             s_ack_dest_qp, s_ack_psn, s_ack_syndrome, s_ack_msn, {TXP_ADDR_W{1'b0}}, 13'd0}),
    .s_valid({s_ex_pkt_valid, s_rr_pkt_valid && READ_EN != 0, s_ack_valid}),
    .s_last(3'b111),
    .s_ready({s_ex_pkt_ready, s_rr_pkt_ready, s_ack_ready}),
    .m_data({tx_pkt_dmac, tx_pkt_dip, tx_pkt_udp_sport, tx_pkt_opcode, tx_pkt_se, tx_pkt_ack_req,
             tx_pkt_dest_qp, tx_pkt_psn, tx_pkt_syndrome, tx_pkt_msn, tx_pkt_payload_addr,
             tx_pkt_payload_len}),
    .m_valid(tx_pkt_valid),
    .m_last(tx_arb_last),
    .m_sel(tx_pkt_src),
    .m_ready(tx_pkt_ready)
);

// whose packet each one in roce_tx is, in the order it finishes them
wire tx_done;
reg [15:0] tx_src_ex_reg = 16'd0;
reg [15:0] tx_src_rr_reg = 16'd0;
reg [4:0] tx_src_wr_reg = 5'd0;
reg [4:0] tx_src_rd_reg = 5'd0;
assign ex_pkt_done = tx_done && tx_src_ex_reg[tx_src_rd_reg[3:0]];
assign rr_pkt_done = tx_done && tx_src_rr_reg[tx_src_rd_reg[3:0]];
assign stat_tx_frame = tx_pkt_valid && tx_pkt_ready;
always @(posedge clk) begin
    if (tx_pkt_valid && tx_pkt_ready) begin
        tx_src_ex_reg[tx_src_wr_reg[3:0]] <= tx_pkt_src == 2'd2;
        tx_src_rr_reg[tx_src_wr_reg[3:0]] <= tx_pkt_src == 2'd1;
        tx_src_wr_reg <= tx_src_wr_reg + 5'd1;
    end
    if (tx_done) begin
        tx_src_rd_reg <= tx_src_rd_reg + 5'd1;
    end
    if (rst) begin
        tx_src_wr_reg <= 5'd0;
        tx_src_rd_reg <= 5'd0;
    end
end

roce_tx #(
    .DATA_W(DATA_W),
    .RAM_ADDR_W(TXP_ADDR_W)
) roce_tx_inst (
    .clk(clk),
    .rst(rst),
    .s_pkt_dmac(tx_pkt_dmac),
    .s_pkt_smac(cfg_mac),
    .s_pkt_sip(cfg_ip),
    .s_pkt_dip(tx_pkt_dip),
    .s_pkt_udp_sport(tx_pkt_udp_sport),
    .s_pkt_opcode(tx_pkt_opcode),
    .s_pkt_se(tx_pkt_se),
    .s_pkt_ack_req(tx_pkt_ack_req),
    .s_pkt_dest_qp(tx_pkt_dest_qp),
    .s_pkt_psn(tx_pkt_psn),
    .s_pkt_reth_va(s_ex_pkt_reth_va),
    .s_pkt_reth_rkey(s_ex_pkt_reth_rkey),
    .s_pkt_reth_len(s_ex_pkt_reth_len),
    .s_pkt_imm(s_ex_pkt_imm),
    .s_pkt_aeth_syndrome(tx_pkt_syndrome),
    .s_pkt_aeth_msn(tx_pkt_msn),
    .s_pkt_snak(s_ack_snak),
    .s_pkt_atomic_orig(s_rr_pkt_atomic_orig),
    .s_pkt_atomic_cmp(s_ex_pkt_atomic_cmp),
    .s_pkt_payload_addr(tx_pkt_payload_addr),
    .s_pkt_payload_len(tx_pkt_payload_len),
    .s_pkt_valid(tx_pkt_valid),
    .s_pkt_ready(tx_pkt_ready),
    .m_ram_rd_addr(m_txr_rd_addr),
    .m_ram_rd_en(m_txr_rd_en),
    .s_ram_rd_data(m_txr_rd_data),
    .m_axis_tx_tdata(core_tx_tdata),
    .m_axis_tx_tkeep(core_tx_tkeep),
    .m_axis_tx_tvalid(core_tx_tvalid),
    .m_axis_tx_tlast(core_tx_tlast),
    .m_axis_tx_tuser(core_tx_tuser),
    .m_axis_tx_tready(core_tx_tready),
    .m_done(tx_done)
);

endmodule

`resetall
