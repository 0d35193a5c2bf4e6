// One-hot multiplexer: out is the OR of the inputs whose sel bit is set
// (combinational). With sel one-hot that is the selected input, with sel
// zero it is zero; the users give one-hot or zero (an entry picked by a
// one-hot decision), but the OR holds for any sel. An AND-OR, one level of
// AND and an OR tree of N inputs per bit: no priority chain, and no index
// to encode first where the choice is already one-hot (the index mux of
// `axis_arb_mux` is the other way round: its choice comes as an index).
// `qp_cache` picks a queued lookup's QP number and a way's tag with it;
// written out there the same loop was three times in one file.
//
// Input i is in[i*W +: W].

`resetall
`timescale 1ns / 1ps
`default_nettype none

module onehot_mux #(
    parameter N = 4,
    parameter W = 8
) (
    input  wire [N-1:0]   sel,
    input  wire [N*W-1:0] in,       // input i: in[i*W +: W]
    output wire [W-1:0]   out
);

initial begin
    if (N < 1 || W < 1) begin
        $error("onehot_mux: N and W must be at least 1");
        $finish;
    end
end

reg [W-1:0] acc;    // (combinational)
integer i;
always @* begin
    acc = {W{1'b0}};
    for (i = 0; i < N; i = i + 1) begin
        acc = acc | ({W{sel[i]}} & in[i*W +: W]);
    end
end
assign out = acc;

endmodule

`resetall
