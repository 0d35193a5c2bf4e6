// The paths a sprayed QP uses among the eight that path health tracks:
// 2^spray_log of them, all eight from spray_log 3 on (paths p and p + 8k
// then share one). The path pick, the health rules and the executor's
// probe choice all read it, so they agree on which bits count.

`resetall
`timescale 1ns / 1ps
`default_nettype none

module path_active (
    input  wire [2:0] spray_log,
    output wire [7:0] active
);

assign active = spray_log >= 3'd3 ? 8'hFF : spray_log == 3'd2 ? 8'h0F
    : spray_log == 3'd1 ? 8'h03 : 8'h01;

endmodule

`resetall
