// Arbiter for PORTS requesters that holds its choice for a whole transfer
// (a packet of one or more beats): the core of axis_arb_mux.
//
// Rule: a choice holds from the first cycle it is offered (grant_valid)
// until the cycle its transfer ends (`take` and `last`: the last beat is
// taken), whether or not a beat of it was taken yet: the grant never
// changes while a beat is offered and not taken, so whatever it selects
// (data, last, user) stays stable as AXI-Stream requires. (Holding only
// from the first beat taken is the bug the inline tx_wr_req mux had.)
// While no choice holds, the grant goes to a requester picked from
// `request` in the same cycle:
//
//   ROUND_ROBIN = 0: fixed priority, the lowest requesting port wins
//                    (port 0 is the most urgent);
//   ROUND_ROBIN = 1: round robin, the first requesting port after the one
//                    chosen last (wrapping): a port that keeps requesting
//                    waits for at most PORTS-1 transfers of the others.
//
// The grant depends on `request` and registers only; `take` (in which the
// downstream ready takes part) only moves the registers, so there is no
// combinational path from ready to the grant. A requester holds its
// request until its transfer ends (AXI-Stream valid rule); between beats
// of a transfer it may pause (request low): grant_valid falls and the
// choice still holds. A requester that withdraws an offer before any beat
// of it was taken (a descriptor source that changes its mind, such as the
// responder's payload write when the MR table changes under it) gives the
// choice up: grant_valid falls in that cycle and the next cycle picks
// again, so a withdrawn offer cannot keep the others waiting.
//
// The picks are priority encoders (a tree, see priority_encoder.v): one for
// fixed priority, two for round robin (ports after the last choice, then
// all ports).

`resetall
`timescale 1ns / 1ps
`default_nettype none

module arbiter #(
    // number of requesters
    parameter PORTS = 4,
    // 0: fixed priority (lowest port first), 1: round robin
    parameter ROUND_ROBIN = 0,
    // width of grant_index
    parameter SEL_W = PORTS > 1 ? $clog2(PORTS) : 1
) (
    input  wire             clk,
    input  wire             rst,           // synchronous, active high

    input  wire [PORTS-1:0] request,
    // the granted requester's beat is taken this cycle (ignored while
    // grant_valid is low), and it is the last of its transfer (tie high
    // for one-beat transfers)
    input  wire             take,
    input  wire             last,

    output wire [PORTS-1:0] grant,         // one-hot, zero without grant_valid
    output wire             grant_valid,
    output wire [SEL_W-1:0] grant_index
);

initial begin
    if (PORTS < 1) begin
        $error("Error: PORTS must be at least 1 (instance %m)");
        $finish;
    end
    if (ROUND_ROBIN != 0 && ROUND_ROBIN != 1) begin
        $error("Error: ROUND_ROBIN must be 0 or 1 (instance %m)");
        $finish;
    end
    if (SEL_W < (PORTS > 1 ? $clog2(PORTS) : 1)) begin
        $error("Error: SEL_W must hold a port index (instance %m)");
        $finish;
    end
end

// a choice offered and not finished: hold it
reg             locked_reg = 1'b0;
// a beat of the held transfer was taken (a pause, not a withdrawal)
reg             started_reg = 1'b0;
reg [SEL_W-1:0] index_reg = {SEL_W{1'b0}};

// the pick of this cycle, when nothing is held
wire             pick_valid;
wire [SEL_W-1:0] pick_index;

generate
    if (ROUND_ROBIN != 0) begin : g_rr
        // ports after the one chosen last
        reg [PORTS-1:0] after_reg = {PORTS{1'b0}};

        wire             hi_valid;
        wire [SEL_W-1:0] hi_index;
        wire             all_valid;
        wire [SEL_W-1:0] all_index;

        priority_encoder #(.WIDTH(PORTS), .OUT_W(SEL_W)) hi_enc (
            .in(request & after_reg),
            .valid(hi_valid),
            .index(hi_index)
        );
        priority_encoder #(.WIDTH(PORTS), .OUT_W(SEL_W)) all_enc (
            .in(request),
            .valid(all_valid),
            .index(all_index)
        );

        assign pick_valid = all_valid;
        assign pick_index = hi_valid ? hi_index : all_index;

        always @(posedge clk) begin
            if (!locked_reg && pick_valid) begin
                after_reg <= ({PORTS{1'b1}} << pick_index) << 1;
            end
            if (rst) begin
                after_reg <= {PORTS{1'b0}};
            end
        end
    end else begin : g_fixed
        priority_encoder #(.WIDTH(PORTS), .OUT_W(SEL_W)) enc (
            .in(request),
            .valid(pick_valid),
            .index(pick_index)
        );
    end
endgenerate

assign grant_index = locked_reg ? index_reg : pick_index;
assign grant_valid = locked_reg ? request[index_reg] : pick_valid;

genvar gi;
generate
    for (gi = 0; gi < PORTS; gi = gi + 1) begin : g_grant
        assign grant[gi] = grant_valid && grant_index == gi;
    end
endgenerate

always @(posedge clk) begin
    if (grant_valid) begin
        locked_reg <= !(take && last);
        index_reg <= grant_index;
        if (take) begin
            started_reg <= !last;
        end
    end else if (!started_reg) begin
        // nothing offered, or the held offer withdrawn before its first beat
        locked_reg <= 1'b0;
    end
    if (rst) begin
        locked_reg <= 1'b0;
        started_reg <= 1'b0;
        index_reg <= {SEL_W{1'b0}};
    end
end

endmodule

`resetall
`default_nettype wire
