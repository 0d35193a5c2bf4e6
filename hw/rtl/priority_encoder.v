// Priority encoder: the lowest set bit of `in` (combinational). Every
// "first free / first ready" pick of the core uses it: the shared pools,
// the mp responder's first hole, the send-queue round robin, MSI, DMA read
// tags, retransmission and receive slots. A tree of halves, so the depth
// grows with log2(WIDTH); written as a scan it was a chain (a 64-bit scan
// was 20 LUT levels deep).

`resetall
`timescale 1ns / 1ps
`default_nettype none

module priority_encoder #(
    parameter WIDTH = 8,
    parameter OUT_W = WIDTH > 1 ? $clog2(WIDTH) : 1
) (
    input  wire [WIDTH-1:0] in,
    output wire             valid,
    output wire [OUT_W-1:0] index
);

initial begin
    if (WIDTH < 1 || OUT_W < (WIDTH > 1 ? $clog2(WIDTH) : 1)) begin
        $error("priority_encoder: WIDTH must be at least 1 and OUT_W hold an index");
        $finish;
    end
end

generate
    if (WIDTH == 1) begin : g_leaf
        assign valid = in[0];
        assign index = {OUT_W{1'b0}};
    end else if (WIDTH == 2) begin : g_pair
        localparam [OUT_W-1:0] ONE = 1;
        assign valid = in[0] || in[1];
        assign index = in[0] ? {OUT_W{1'b0}} : ONE;
    end else begin : g_split
        // the low half is the largest power of two below WIDTH
        localparam W_LO = 1 << ($clog2(WIDTH) - 1);
        localparam W_HI = WIDTH - W_LO;
        wire valid_lo, valid_hi;
        wire [OUT_W-1:0] index_lo, index_hi;
        priority_encoder #(.WIDTH(W_LO), .OUT_W(OUT_W)) lo_inst (
            .in(in[W_LO-1:0]),
            .valid(valid_lo),
            .index(index_lo)
        );
        priority_encoder #(.WIDTH(W_HI), .OUT_W(OUT_W)) hi_inst (
            .in(in[WIDTH-1:W_LO]),
            .valid(valid_hi),
            .index(index_hi)
        );
        localparam [OUT_W-1:0] LO_SPAN = W_LO[OUT_W-1:0];
        assign valid = valid_lo || valid_hi;
        // index_hi < W_LO, a power of two: placing it above the low half is an OR
        assign index = valid_lo ? index_lo : LO_SPAN | index_hi;
    end
endgenerate

endmodule

`resetall
