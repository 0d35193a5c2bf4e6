// Binary to one-hot: out[i] = en && in == i. For the per-QP bit vectors
// that stay in flops (written at a QP number: `vec[qn] <= ...`): Yosys
// lowers each such write to a full compare of the index for every bit, so
// a vector written at three QP numbers cost about ten LUT4 per QP. Here
// both halves of the index are decoded once and each output is a
// two-input AND of one line of each, about one LUT4 per output, which the
// flop's next-state logic can absorb. Both decodes are shifts, so a
// simulator does a few word operations per decoder instead of one per
// line: the core has about 30 of them, evaluated every cycle. Yosys maps
// the shifts to the same LUTs as per-line compares.

`resetall
`timescale 1ns / 1ps
`default_nettype none

module onehot_decoder #(
    parameter IN_W = 4,
    parameter OUT_N = 1 << IN_W
) (
    input  wire             en,
    input  wire [IN_W-1:0]  in,
    output wire [OUT_N-1:0] out
);

initial begin
    if (IN_W < 1 || IN_W > 16 || OUT_N < 1 || OUT_N > (1 << IN_W)) begin
        $error("onehot_decoder: IN_W must be 1..16 and OUT_N 1..2^IN_W");
        $finish;
    end
end

localparam LO_W = IN_W / 2;
localparam HI_W = IN_W - LO_W;

localparam LO_N = 1 << LO_W;
localparam HI_N = 1 << HI_W;

// The high half picks a group of LO_N outputs (a mask of LO_N ones shifted
// by whole groups), the low half a line within every group, and each
// output is the AND of the two: two words of work for a simulator.
/* verilator lint_off UNUSEDSIGNAL */
wire [HI_N*LO_N-1:0] all_lines;       // (the lines from OUT_N on name no output)
/* verilator lint_on UNUSEDSIGNAL */
generate
    if (LO_W == 0) begin : g_one
        localparam [HI_N-1:0] ONE = 1;
        assign all_lines = en ? ONE << in : {HI_N{1'b0}};
    end else begin : g_two
        localparam [HI_N*LO_N-1:0] GROUP = {{(HI_N-1)*LO_N{1'b0}}, {LO_N{1'b1}}};
        localparam [LO_N-1:0] LO_ONE = 1;
        wire [LO_N-1:0] lo_line = LO_ONE << in[LO_W-1:0];
        wire [HI_N*LO_N-1:0] group = en ? GROUP << {in[IN_W-1:LO_W], {LO_W{1'b0}}} : {HI_N*LO_N{1'b0}};
        assign all_lines = group & {HI_N{lo_line}};
    end
endgenerate
assign out = all_lines[OUT_N-1:0];

endmodule

`resetall
