// Doorbells that name their QP by number (BAR0 qp_block.sq_dbn and rq_dbn),
// the number on the wire, not the slot that holds the QP's records. Each is
// looked up in the QP directory and handed on as a doorbell by slot, to the
// queue manager (a send queue's producer index) or the responder (a receive
// queue's).
//
// Why: once the context cache binds QPs to slots by itself, the host cannot
// know which slot holds a QP, and a doorbell by slot could reach the slot's
// next QP. The QP number is the name the host keeps.
//
// One doorbell at a time: MMIO waits while busy (rnic_control), so a new one
// never comes before the last has gone on, and a doorbell by slot never
// comes in the cycle this block hands one on. The lookup: lk_qpn is held
// from the cycle after the doorbell, and the directory answers (lk_hit, the
// number is bound; lk_slot, its slot) LK_LAT cycles later. A number no slot
// holds is dropped and reported (err_valid, err_qpn: the number) instead,
// or, with miss_en and the number within the context table, fetched by the
// NIC first (qp_fetch) and looked up again: MMIO waits for the fetch.

`resetall
`timescale 1ns / 1ps
`default_nettype none

module qpn_doorbell #(
    parameter QN_W = 4,
    parameter LK_LAT = 2             // cycles from lk_qpn to the directory's answer, 1..5
) (
    input  wire            clk,
    input  wire            rst,

    // doorbells by QP number (one-cycle pulses)
    input  wire            s_sq_valid,
    input  wire [15:0]     s_sq_qpn,
    input  wire [15:0]     s_sq_pi,
    input  wire            s_rq_valid,
    input  wire [15:0]     s_rq_qpn,
    input  wire [15:0]     s_rq_pi,
    output wire            busy,

    // the directory's lookup
    output wire [15:0]     lk_qpn,
    input  wire            lk_hit,
    input  wire [QN_W-1:0] lk_slot,

    // misses (miss_en): a number no slot holds but within the context
    // table (below miss_records) asks the NIC's fetch for it (miss_valid
    // until miss_done) and is looked up again once
    input  wire            miss_en,
    input  wire [24:0]     miss_records,
    output wire            miss_valid,
    output wire [15:0]     miss_qpn,
    input  wire            miss_done,

    // doorbells by slot (registered one-cycle pulses)
    output reg             m_sq_valid = 1'b0,
    output reg             m_rq_valid = 1'b0,
    output reg  [QN_W-1:0] m_slot = {QN_W{1'b0}},
    output reg  [15:0]     m_pi = 16'd0,

    // a number no slot holds
    output reg             err_valid = 1'b0,
    output reg  [15:0]     err_qpn = 16'd0
);

initial begin
    if (QN_W < 1 || QN_W > 16) begin
        $error("qpn_doorbell: QN_W must be 1..16");
        $finish;
    end
    if (LK_LAT < 1 || LK_LAT > 5) begin
        $error("qpn_doorbell: LK_LAT must be 1..5");
        $finish;
    end
end

reg [2:0] wait_reg = 3'd0;
reg miss_reg = 1'b0;        // the fetch is asked for this doorbell's QP
reg again_reg = 1'b0;       // ... and was: a second miss is final
reg rq_reg = 1'b0;
reg [15:0] qpn_reg = 16'd0;
reg [15:0] pi_reg = 16'd0;

assign lk_qpn = qpn_reg;
// (the cycle its doorbell by slot leaves counts too: MMIO waits for it)
assign busy = wait_reg != 3'd0 || miss_reg || m_sq_valid || m_rq_valid;
assign miss_valid = miss_reg;
assign miss_qpn = qpn_reg;
wire answer = wait_reg == 3'd1;
wire fetch_it = answer && !lk_hit && miss_en && !again_reg && {9'd0, qpn_reg} < miss_records;

always @(posedge clk) begin
    m_sq_valid <= answer && lk_hit && !rq_reg;
    m_rq_valid <= answer && lk_hit && rq_reg;
    err_valid <= answer && !lk_hit && !fetch_it;
    if (fetch_it) begin
        miss_reg <= 1'b1;
        again_reg <= 1'b1;
    end
    if (miss_reg && miss_done) begin
        // looked up again once the fetch has let the directory go
        miss_reg <= 1'b0;
        wait_reg <= LK_LAT[2:0] + 3'd2;
    end
    if (answer) begin
        m_slot <= lk_slot;
        m_pi <= pi_reg;
        err_qpn <= qpn_reg;
    end
    if (wait_reg != 3'd0) begin
        wait_reg <= wait_reg - 3'd1;
    end else if (!miss_reg && (s_sq_valid || s_rq_valid)) begin
        // (both in one cycle cannot happen: one MMIO write at a time)
        wait_reg <= LK_LAT[2:0] + 3'd1;
        again_reg <= 1'b0;
        rq_reg <= !s_sq_valid;
        qpn_reg <= s_sq_valid ? s_sq_qpn : s_rq_qpn;
        pi_reg <= s_sq_valid ? s_sq_pi : s_rq_pi;
    end
    if (rst) begin
        wait_reg <= 3'd0;
        miss_reg <= 1'b0;
        m_sq_valid <= 1'b0;
        m_rq_valid <= 1'b0;
        err_valid <= 1'b0;
    end
end

endmodule

`resetall
