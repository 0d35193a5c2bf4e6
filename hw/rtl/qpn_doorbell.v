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
// Doorbells wait in a small table (PEND entries) until they can go on, so a
// doorbell for a QP the NIC must fetch first does not hold the doorbells
// of QPs on chip, nor the host's MMIO: MMIO waits only while the table is
// nearly full (busy). One entry per queue: a later doorbell of a queue that
// is waiting replaces its producer index (an index is a position, not a
// count, so the latest says everything). The entries are served round
// robin, one at a time: lk_qpn is held from the cycle after an entry is
// taken, and the directory answers (lk_hit, the number is bound; lk_slot,
// its slot) LK_LAT cycles later. A hit goes on as a doorbell by slot
// (m_*, a valid/ready stream: a doorbell by slot from MMIO goes first in
// its cycle). A miss, with miss_en and the number within the context
// table, asks the NIC to fetch the QP (qp_fetch) and is looked up again;
// if the fetch found no slot (every cache slot's QP had work in flight:
// miss_full) the entry stays and is tried again BACKOFF cycles later, so
// the QPs that pin the cache can finish. Any other miss is dropped and
// reported (err_valid, err_qpn: the number): no such QP, no cache, the
// table read failed.

`resetall
`timescale 1ns / 1ps
`default_nettype none

module qpn_doorbell #(
    parameter QN_W = 4,
    parameter LK_LAT = 2,            // cycles from lk_qpn to the directory's answer, 1..5
    parameter PEND = 4,              // doorbells waiting at most, 2..16
    parameter BACKOFF = 64           // cycles before a doorbell whose fetch found no slot tries again
) (
    input  wire            clk,
    input  wire            rst,

    input  wire            s_sq_valid,
    input  wire [15:0]     s_sq_qpn,
    input  wire [15:0]     s_sq_pi,
    input  wire            s_rq_valid,
    input  wire [15:0]     s_rq_qpn,
    input  wire [15:0]     s_rq_pi,
    output wire            busy,
    output wire            idle,     // no doorbell waits, none is handed on

    output wire [15:0]     lk_qpn,
    input  wire            lk_hit,
    input  wire [QN_W-1:0] lk_slot,
    input  wire            lk_busy,  // the lookup port is the fetch's: its answers are not ours

    input  wire            miss_en,
    input  wire [24:0]     miss_records,
    output wire            miss_valid,
    output wire [15:0]     miss_qpn,
    input  wire            miss_done,
    input  wire            miss_ok,
    input  wire            miss_full,

    output reg             m_sq_valid = 1'b0,
    output reg             m_rq_valid = 1'b0,
    output reg  [QN_W-1:0] m_slot = {QN_W{1'b0}},
    output reg  [15:0]     m_pi = 16'd0,
    input  wire            m_ready,

    output reg             err_valid = 1'b0,
    output reg  [15:0]     err_qpn = 16'd0,

    // a doorbell's first lookup (look_hit: its QP was on chip), and the
    // doorbells waiting now and at most since reset
    output reg             look_valid = 1'b0,
    output reg             look_hit = 1'b0,
    output reg  [4:0]      waiting = 5'd0,
    output reg  [4:0]      waiting_max = 5'd0
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
    if (PEND < 2 || PEND > 16 || BACKOFF < 1 || BACKOFF > 65535) begin
        $error("qpn_doorbell: PEND must be 2..16, BACKOFF 1..65535");
        $finish;
    end
end

localparam IX_W = PEND > 8 ? 4 : PEND > 4 ? 3 : PEND > 2 ? 2 : 1;
localparam integer PEND_I = PEND;
localparam [4:0] PEND_M1 = PEND_I[4:0] - 5'd1;
localparam integer BACKOFF_I = BACKOFF;

// the table
reg [PEND-1:0] v_reg = {PEND{1'b0}};
reg [PEND-1:0] rq_reg = {PEND{1'b0}};
reg [16*PEND-1:0] qpn_reg = {16*PEND{1'b0}};
reg [16*PEND-1:0] pi_reg = {16*PEND{1'b0}};

// the entry served
reg [IX_W-1:0] cur_reg = {IX_W{1'b0}};
reg run_reg = 1'b0;
reg [2:0] wait_reg = 3'd0;
reg miss_reg = 1'b0;        // the fetch is asked for the entry's QP
reg again_reg = 1'b0;       // ... and was: a second miss goes round again
reg [15:0] back_reg = 16'd0;
// the fetch had the lookup port during the wait: look again
reg dirty_reg = 1'b0;

wire [15:0] cur_qpn = qpn_reg[16*cur_reg +: 16];
wire cur_rq = rq_reg[cur_reg];
assign lk_qpn = cur_qpn;
assign miss_valid = miss_reg;
assign miss_qpn = cur_qpn;
wire answer = run_reg && wait_reg == 3'd1 && !dirty_reg && !lk_busy;
wire look_bad = run_reg && wait_reg == 3'd1 && (dirty_reg || lk_busy);
wire out_busy = (m_sq_valid || m_rq_valid) && !m_ready;
wire fetch_it = answer && !lk_hit && miss_en && !again_reg && {9'd0, cur_qpn} < miss_records;
wire emit = answer && lk_hit && !out_busy;
// the entry ends (gone on, or dropped) or goes round (tried again later)
wire drop = answer && !lk_hit && !fetch_it && !again_reg;
wire fetched_not = run_reg && miss_reg && miss_done && !miss_ok;
wire done_cur = emit || drop || (fetched_not && !miss_full);
wire round_cur = (answer && !lk_hit && again_reg) || (fetched_not && miss_full);
// (an answer that cannot go on for a busy output is taken again)
wire retake = answer && lk_hit && out_busy;

// a new doorbell: onto its queue's entry, or a free one (never the entry
// that ends this cycle, whose index has gone on with the old value)
wire in_valid = s_sq_valid || s_rq_valid;
wire in_rq = !s_sq_valid;
wire [15:0] in_qpn = s_sq_valid ? s_sq_qpn : s_rq_qpn;
wire [15:0] in_pi = s_sq_valid ? s_sq_pi : s_rq_pi;
reg [PEND-1:0] match;
reg [PEND-1:0] free;
reg [IX_W-1:0] free_ix;
reg [IX_W-1:0] next_ix;
reg next_any;
reg [4:0] count;
integer i;
always @* begin
    match = {PEND{1'b0}};
    free = {PEND{1'b0}};
    free_ix = {IX_W{1'b0}};
    count = 5'd0;
    for (i = 0; i < PEND; i = i + 1) begin
        match[i] = v_reg[i] && rq_reg[i] == in_rq && qpn_reg[16*i +: 16] == in_qpn
            && !(done_cur && cur_reg == i[IX_W-1:0]);
        free[i] = !v_reg[i];
        count = count + {4'd0, v_reg[i]};
    end
    for (i = PEND - 1; i >= 0; i = i - 1) begin
        if (free[i]) begin
            free_ix = i[IX_W-1:0];
        end
    end
    // round robin: the first waiting entry after the last served
    next_any = 1'b0;
    next_ix = {IX_W{1'b0}};
    for (i = PEND - 1; i >= 0; i = i - 1) begin
        if (v_reg[i] && i[IX_W-1:0] > cur_reg) begin
            next_any = 1'b1;
            next_ix = i[IX_W-1:0];
        end
    end
    if (!next_any) begin
        for (i = PEND - 1; i >= 0; i = i - 1) begin
            if (v_reg[i]) begin
                next_any = 1'b1;
                next_ix = i[IX_W-1:0];
            end
        end
    end
end

// (one entry spare: a doorbell in the cycle an entry ends may need it)
assign busy = count >= PEND_M1;
assign idle = count == 5'd0 && !m_sq_valid && !m_rq_valid;

always @(posedge clk) begin
    err_valid <= drop || (fetched_not && !miss_full);
    look_valid <= answer && !again_reg && !out_busy;
    look_hit <= lk_hit;
    waiting <= count;
    if (count > waiting_max) begin
        waiting_max <= count;
    end
    if (answer || fetched_not) begin
        err_qpn <= cur_qpn;
    end
    if (m_ready) begin
        m_sq_valid <= 1'b0;
        m_rq_valid <= 1'b0;
    end
    if (emit) begin
        m_sq_valid <= !cur_rq;
        m_rq_valid <= cur_rq;
        m_slot <= lk_slot;
        m_pi <= pi_reg[16*cur_reg +: 16];
    end
    if (wait_reg != 3'd0) begin
        wait_reg <= wait_reg - 3'd1;
    end
    if (back_reg != 16'd0) begin
        back_reg <= back_reg - 16'd1;
    end
    if (fetch_it) begin
        miss_reg <= 1'b1;
        again_reg <= 1'b1;
    end
    if (run_reg && miss_reg && miss_done) begin
        miss_reg <= 1'b0;
        if (miss_ok) begin
            wait_reg <= LK_LAT[2:0] + 3'd2;
        end
    end
    if (retake) begin
        wait_reg <= 3'd1;
    end
    if (run_reg && wait_reg != 3'd0 && lk_busy) begin
        dirty_reg <= 1'b1;
    end
    if (look_bad) begin
        wait_reg <= LK_LAT[2:0] + 3'd1;
        dirty_reg <= lk_busy;
    end
    if (run_reg && miss_reg && miss_done) begin
        dirty_reg <= 1'b0;
    end
    if (done_cur) begin
        v_reg[cur_reg] <= 1'b0;
        run_reg <= 1'b0;
    end
    if (round_cur) begin
        run_reg <= 1'b0;
        back_reg <= BACKOFF_I[15:0];
    end
    if (!run_reg && next_any && !lk_busy && (back_reg == 16'd0 || next_ix != cur_reg)) begin
        cur_reg <= next_ix;
        dirty_reg <= 1'b0;
        run_reg <= 1'b1;
        again_reg <= 1'b0;
        wait_reg <= LK_LAT[2:0] + 3'd1;
    end
    if (in_valid) begin
        if (|match) begin
            for (i = 0; i < PEND; i = i + 1) begin
                if (match[i]) begin
                    pi_reg[16*i +: 16] <= in_pi;
                end
            end
        end else begin
            v_reg[free_ix] <= 1'b1;
            rq_reg[free_ix] <= in_rq;
            qpn_reg[16*free_ix +: 16] <= in_qpn;
            pi_reg[16*free_ix +: 16] <= in_pi;
        end
    end
    if (rst) begin
        v_reg <= {PEND{1'b0}};
        run_reg <= 1'b0;
        wait_reg <= 3'd0;
        miss_reg <= 1'b0;
        back_reg <= 16'd0;
        m_sq_valid <= 1'b0;
        m_rq_valid <= 1'b0;
        err_valid <= 1'b0;
        look_valid <= 1'b0;
        waiting_max <= 5'd0;
    end
end

endmodule

`resetall
