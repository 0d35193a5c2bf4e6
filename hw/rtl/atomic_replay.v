// Replay records of the atomics this NIC executed as a responder. A
// duplicate atomic (the requester's retry after its ATOMIC ACKNOWLEDGE was
// lost) must be answered with the original value of the first execution
// and never executed again. Linux rxe keeps such records per QP (its
// responder resources); here ENTRIES records serve the whole NIC in a ring,
// the newest replacing the oldest, so a retry of an atomic older than the
// last ENTRIES executions finds none: the responder then drops it (as rxe
// drops a duplicate it has no resource for), never executes it twice.
//
// A lookup (QP, PSN) answers a cycle later (lk_hit, lk_orig), from
// registers. Loading a QP (a new connection) clears its records: the old
// connection's PSNs mean nothing to the new one.

`resetall
`timescale 1ns / 1ps
`default_nettype none

module atomic_replay #(
    parameter QN_W = 4,
    parameter ENTRIES = 16                  // power of 2, at least 2
) (
    input  wire            clk,
    input  wire            rst,

    // an atomic executed: its QP, PSN and the value it read
    input  wire            s_rec_valid,
    input  wire [QN_W-1:0] s_rec_qpn,
    input  wire [23:0]     s_rec_psn,
    input  wire [63:0]     s_rec_orig,

    // a QP loaded: its records go
    input  wire            s_clr_valid,
    input  wire [QN_W-1:0] s_clr_qpn,

    // lookup, answered the next cycle
    input  wire [QN_W-1:0] lk_qpn,
    input  wire [23:0]     lk_psn,
    output wire            lk_hit,
    output wire [63:0]     lk_orig
);

localparam EW = ENTRIES > 1 ? $clog2(ENTRIES) : 1;

initial begin
    if (ENTRIES < 2 || (1 << EW) != ENTRIES) begin
        $error("atomic_replay: ENTRIES must be a power of 2, at least 2");
        $finish;
    end
end

reg [ENTRIES-1:0] e_valid_reg = {ENTRIES{1'b0}};
reg [QN_W-1:0]    e_qpn [0:ENTRIES-1];
reg [23:0]        e_psn [0:ENTRIES-1];
reg [63:0]        e_orig [0:ENTRIES-1];
reg [EW-1:0]      e_next_reg = {EW{1'b0}};

integer i;
initial begin
    for (i = 0; i < ENTRIES; i = i + 1) begin
        e_qpn[i] = {QN_W{1'b0}};
        e_psn[i] = 24'd0;
        e_orig[i] = 64'd0;
    end
end

// the lookup: one match at most (a PSN is executed once per connection)
reg            hit_reg = 1'b0;
reg [63:0]     orig_reg = 64'd0;
reg            hit_next;
reg [63:0]     orig_next;
always @* begin
    hit_next = 1'b0;
    orig_next = 64'd0;
    for (i = 0; i < ENTRIES; i = i + 1) begin
        if (e_valid_reg[i] && e_qpn[i] == lk_qpn && e_psn[i] == lk_psn) begin
            hit_next = 1'b1;
            orig_next = orig_next | e_orig[i];
        end
    end
end
assign lk_hit = hit_reg;
assign lk_orig = orig_reg;

always @(posedge clk) begin
    hit_reg <= hit_next;
    orig_reg <= orig_next;
    if (s_clr_valid) begin
        for (i = 0; i < ENTRIES; i = i + 1) begin
            if (e_qpn[i] == s_clr_qpn) begin
                e_valid_reg[i] <= 1'b0;
            end
        end
    end
    if (s_rec_valid) begin
        e_valid_reg[e_next_reg] <= 1'b1;
        e_qpn[e_next_reg] <= s_rec_qpn;
        e_psn[e_next_reg] <= s_rec_psn;
        e_orig[e_next_reg] <= s_rec_orig;
        e_next_reg <= e_next_reg + 1'b1;
    end
    if (rst) begin
        e_valid_reg <= {ENTRIES{1'b0}};
        e_next_reg <= {EW{1'b0}};
        hit_reg <= 1'b0;
    end
end

endmodule

`resetall
