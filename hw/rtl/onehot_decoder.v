// Binary to one-hot: out[i] = en && in == i. For the per-QP bit vectors
// that stay in flops (written at a QP number: `vec[qn] <= ...`): Yosys
// lowers each such write to a full compare of the index for every bit, so
// a vector written at three QP numbers cost about ten LUT4 per QP. Here
// both halves of the index are decoded once and each output is a
// two-input AND of one line of each, about one LUT4 per output, which the
// flop's next-state logic can absorb.

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

// Each group of LO_N outputs is the low half's lines when the high half
// names the group: a slice per group (not a bit per output), so that a
// simulator evaluates HI_N words, not 2^IN_W bits.
wire [HI_N-1:0] hi_line;
wire [LO_N-1:0] lo_line;
/* verilator lint_off UNUSEDSIGNAL */
wire [HI_N*LO_N-1:0] all_lines;       // (the lines from OUT_N on name no output)
/* verilator lint_on UNUSEDSIGNAL */
genvar k;
generate
    for (k = 0; k < HI_N; k = k + 1) begin : g_hi
        assign hi_line[k] = en && in[IN_W-1:LO_W] == k[HI_W-1:0];
        assign all_lines[k*LO_N +: LO_N] = hi_line[k] ? lo_line : {LO_N{1'b0}};
    end
    if (LO_W == 0) begin : g_one
        assign lo_line = 1'b1;
    end else begin : g_two
        for (k = 0; k < LO_N; k = k + 1) begin : g_lo
            assign lo_line[k] = in[LO_W-1:0] == k[LO_W-1:0];
        end
    end
endgenerate
assign out = all_lines[OUT_N-1:0];

endmodule

`resetall
