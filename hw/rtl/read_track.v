// READ table: the RDMA READs this NIC has issued as a requester and whose
// responses it still places (READ_EN builds). One entry per READ in flight,
// NIC-wide (NUM_RD), looked up by QP and PSN.
//
// - The requester allocates an entry when a READ WQE starts (its QP, first
//   and last PSN, the local buffer's bus address, lkey and length); with
//   no entry free the WQE waits.
// - The responder looks a READ RESPONSE up by (QP, PSN): the entry whose
//   span holds the PSN, and the next PSN it expects there. It places the
//   response only at that PSN, then advances the entry (adv); a response
//   beyond it asks the completer once (ask) for a retransmission from it.
// - The responder also looks every ACK and NAK up: one that covers a PSN
//   of a READ not yet placed (an ACK at or after it, a NAK after it) must
//   not reach the completer as it is, or the READ would complete without
//   its data (cov: the oldest such READ of the QP, by allocation order,
//   which for one QP is PSN order).
// - The completer frees the entry when it retires the READ's WQE
//   (completed or flushed), named by QP and last PSN; a QP loaded (reset,
//   RTR, RTS, ERR) frees all of its entries, and a READ of that QP
//   allocated in the same cycle is not taken (its QP is gone).
//
// Entries are taken lowest free first. Lookups are registered: the
// answers, a cycle after lk_qpn / lk_psn, hold the entries as they were
// in the lookup's cycle (the responder keeps its inputs steady).

`resetall
`timescale 1ns / 1ps
`default_nettype none

module read_track #(
    parameter QN_W = 4,
    parameter NUM_RD = 4,
    parameter RD_IW = 2                  // $clog2(NUM_RD)
) (
    input  wire                 clk,
    input  wire                 rst,

    // a READ WQE starts (requester)
    output wire                 alloc_ready,    // an entry is free
    input  wire                 alloc_valid,
    input  wire [QN_W-1:0]      alloc_qpn,
    input  wire [23:0]          alloc_first,    // its first PSN
    input  wire [23:0]          alloc_last,     // ... and its last
    input  wire [63:0]          alloc_bus,      // bus address of the local buffer's first byte
    input  wire [31:0]          alloc_key,      // lkey (the write guard's re-check)
    input  wire [31:0]          alloc_len,
    input  wire                 alloc_atomic,   // an atomic (answered by one ATOMIC ACKNOWLEDGE)

    // the completer retires the READ's WQE
    input  wire                 free_valid,
    input  wire [QN_W-1:0]      free_qpn,
    input  wire [23:0]          free_last,
    // a QP is loaded: its entries go
    input  wire                 drop_valid,
    input  wire [QN_W-1:0]      drop_qpn,

    // lookup (responder); answers a cycle later
    input  wire [QN_W-1:0]      lk_qpn,
    input  wire [23:0]          lk_psn,
    input  wire                 lk_nak,         // coverage of a NAK (PSNs before lk_psn), else an ACK's
    output reg                  lk_hit = 1'b0,  // lk_psn lies in an entry's span
    output reg  [RD_IW-1:0]     lk_idx = {RD_IW{1'b0}},
    output reg  [23:0]          lk_first = 24'd0,
    output reg  [23:0]          lk_last = 24'd0,
    output reg  [23:0]          lk_next = 24'd0,
    output reg  [63:0]          lk_bus = 64'd0,
    output reg  [31:0]          lk_key = 32'd0,
    output reg  [31:0]          lk_len = 32'd0,
    output reg                  lk_atomic = 1'b0,
    output reg                  lk_asked = 1'b0,
    output reg                  lk_cov = 1'b0,  // an unplaced READ PSN is covered
    output reg  [RD_IW-1:0]     lk_cov_idx = {RD_IW{1'b0}},
    output reg  [23:0]          lk_cov_next = 24'd0,
    output reg                  lk_cov_asked = 1'b0,

    // responder updates, each applied only if the entry still expects psn
    input  wire                 adv_valid,      // the response at adv_psn is placed
    input  wire [RD_IW-1:0]     adv_idx,
    input  wire [23:0]          adv_psn,
    input  wire                 ask_valid,      // a retransmission from ask_psn was asked
    input  wire [RD_IW-1:0]     ask_idx,
    input  wire [23:0]          ask_psn,

    // the requester's fence: does q_qpn have READs in flight; and its
    // max_rd_atomic: does it have q_max of them (or more) in flight
    input  wire [QN_W-1:0]      q_qpn,
    output wire                 q_busy,
    input  wire [2:0]           q_max,
    output wire                 q_full,
    // a fenced WQE of fence_qpn was given back: its READs hold the QP's
    // next WQE (hold, asked about hold_qpn) until they are gone
    input  wire                 fence_valid,
    input  wire [QN_W-1:0]      fence_qpn,
    input  wire [QN_W-1:0]      hold_qpn,
    output wire                 hold
);

initial begin
    if (NUM_RD < 1 || NUM_RD > 255 || (1 << RD_IW) < NUM_RD || QN_W < 1) begin
        $error("read_track: NUM_RD must be 1..2^RD_IW, at most 255");
        $finish;
    end
end

reg              e_valid [0:NUM_RD-1];
reg              e_done  [0:NUM_RD-1];     // every response placed
reg              e_asked [0:NUM_RD-1];     // a retransmission from e_next was asked
reg              e_fenced [0:NUM_RD-1];    // a fenced WQE of its QP waits for it
reg [QN_W-1:0]   e_qpn   [0:NUM_RD-1];
reg [23:0]       e_first [0:NUM_RD-1];
reg [23:0]       e_last  [0:NUM_RD-1];
reg [23:0]       e_span  [0:NUM_RD-1];     // last - first
reg [23:0]       e_next  [0:NUM_RD-1];
reg [63:0]       e_bus   [0:NUM_RD-1];
reg [31:0]       e_key   [0:NUM_RD-1];
reg [31:0]       e_len   [0:NUM_RD-1];
reg [NUM_RD-1:0] e_atomic_reg = {NUM_RD{1'b0}};

integer i;
initial begin
    for (i = 0; i < NUM_RD; i = i + 1) begin
        e_valid[i] = 1'b0;
        e_done[i] = 1'b0;
        e_asked[i] = 1'b0;
        e_fenced[i] = 1'b0;
        e_qpn[i] = {QN_W{1'b0}};
        e_first[i] = 24'd0;
        e_last[i] = 24'd0;
        e_span[i] = 24'd0;
        e_next[i] = 24'd0;
        e_bus[i] = 64'd0;
        e_key[i] = 32'd0;
        e_len[i] = 32'd0;
    end
end

// the lowest free entry
reg any_free;
reg [RD_IW-1:0] free_idx;
always @* begin
    any_free = 1'b0;
    free_idx = {RD_IW{1'b0}};
    for (i = NUM_RD - 1; i >= 0; i = i - 1) begin
        if (!e_valid[i]) begin
            any_free = 1'b1;
            free_idx = i[RD_IW-1:0];
        end
    end
end
assign alloc_ready = any_free;

reg busy;
reg [7:0] q_cnt;
always @* begin
    busy = 1'b0;
    q_cnt = 8'd0;
    for (i = 0; i < NUM_RD; i = i + 1) begin
        if (e_valid[i] && e_qpn[i] == q_qpn) begin
            busy = 1'b1;
            q_cnt = q_cnt + 8'd1;
        end
    end
end
assign q_busy = busy;
assign q_full = q_cnt >= {5'd0, q_max};

reg held;
always @* begin
    held = 1'b0;
    for (i = 0; i < NUM_RD; i = i + 1) begin
        if (e_valid[i] && e_fenced[i] && e_qpn[i] == hold_qpn) begin
            held = 1'b1;
        end
    end
end
assign hold = held;

// age: e_before[k][j] says entry j was taken before entry k (both valid), so
// the oldest of several READs of one QP is picked without comparing PSNs
reg [NUM_RD-1:0] e_before [0:NUM_RD-1];
initial begin
    for (i = 0; i < NUM_RD; i = i + 1) begin
        e_before[i] = {NUM_RD{1'b0}};
    end
end

// the lookup: the entry whose span holds lk_psn, and the oldest unplaced
// READ of the QP that the ACK (at or after its expected PSN) or the NAK
// (after it) covers
reg hit;
reg [RD_IW-1:0] hit_idx;
reg [NUM_RD-1:0] cov_v;
/* verilator lint_off UNUSEDSIGNAL */
reg [23:0] d;                   // (its sign)
/* verilator lint_on UNUSEDSIGNAL */
always @* begin
    hit = 1'b0;
    hit_idx = {RD_IW{1'b0}};
    d = 24'd0;
    for (i = 0; i < NUM_RD; i = i + 1) begin
        if (e_valid[i] && e_qpn[i] == lk_qpn && (lk_psn - e_first[i]) <= e_span[i]) begin
            hit = 1'b1;
            hit_idx = i[RD_IW-1:0];
        end
        d = lk_psn - e_next[i] - {23'd0, lk_nak};
        cov_v[i] = e_valid[i] && !e_done[i] && e_qpn[i] == lk_qpn && !d[23];
    end
end
reg cov;
reg [RD_IW-1:0] cov_idx;
always @* begin
    cov = 1'b0;
    cov_idx = {RD_IW{1'b0}};
    for (i = 0; i < NUM_RD; i = i + 1) begin
        if (cov_v[i] && (cov_v & e_before[i]) == {NUM_RD{1'b0}}) begin
            cov = 1'b1;
            cov_idx = i[RD_IW-1:0];
        end
    end
end

always @(posedge clk) begin
    lk_hit <= hit;
    lk_idx <= hit_idx;
    lk_first <= e_first[hit_idx];
    lk_last <= e_last[hit_idx];
    lk_next <= e_next[hit_idx];
    lk_bus <= e_bus[hit_idx];
    lk_key <= e_key[hit_idx];
    lk_len <= e_len[hit_idx];
    lk_atomic <= e_atomic_reg[hit_idx];
    lk_asked <= e_asked[hit_idx];
    lk_cov <= cov;
    lk_cov_idx <= cov_idx;
    lk_cov_next <= e_next[cov_idx];
    lk_cov_asked <= e_asked[cov_idx];
end

always @(posedge clk) begin
    for (i = 0; i < NUM_RD; i = i + 1) begin
        if (adv_valid && adv_idx == i[RD_IW-1:0] && e_valid[i] && !e_done[i]
                && e_next[i] == adv_psn) begin
            e_next[i] <= adv_psn + 24'd1;
            e_asked[i] <= 1'b0;
            e_done[i] <= adv_psn == e_last[i];
        end
        if (ask_valid && ask_idx == i[RD_IW-1:0] && e_valid[i] && e_next[i] == ask_psn) begin
            e_asked[i] <= 1'b1;
        end
        if (fence_valid && e_qpn[i] == fence_qpn) begin
            e_fenced[i] <= 1'b1;
        end
        if ((free_valid && e_valid[i] && e_qpn[i] == free_qpn && e_last[i] == free_last)
                || (drop_valid && e_valid[i] && e_qpn[i] == drop_qpn)) begin
            e_valid[i] <= 1'b0;
        end
    end
    if (alloc_valid && any_free && !(drop_valid && drop_qpn == alloc_qpn)) begin
        // younger than every entry in use, older than none
        for (i = 0; i < NUM_RD; i = i + 1) begin
            e_before[free_idx][i] <= e_valid[i];
            e_before[i][free_idx] <= 1'b0;
        end
        e_valid[free_idx] <= 1'b1;
        e_done[free_idx] <= 1'b0;
        e_asked[free_idx] <= 1'b0;
        e_fenced[free_idx] <= 1'b0;
        e_qpn[free_idx] <= alloc_qpn;
        e_first[free_idx] <= alloc_first;
        e_last[free_idx] <= alloc_last;
        e_span[free_idx] <= alloc_last - alloc_first;
        e_next[free_idx] <= alloc_first;
        e_bus[free_idx] <= alloc_bus;
        e_key[free_idx] <= alloc_key;
        e_len[free_idx] <= alloc_len;
        e_atomic_reg[free_idx] <= alloc_atomic;
    end
    if (rst) begin
        for (i = 0; i < NUM_RD; i = i + 1) begin
            e_valid[i] <= 1'b0;
        end
    end
end

endmodule

`resetall
