// Priority encoder: the lowest set bit of `in` (combinational). The shared
// pools (outstanding rings, mp deferred-completion slots, the destination-MAC
// table) take their next free entry with it.

`resetall
`timescale 1ns / 1ps
`default_nettype none

module priority_encoder #(
    parameter WIDTH = 8,
    parameter OUT_W = WIDTH > 1 ? $clog2(WIDTH) : 1
) (
    input  wire [WIDTH-1:0] in,
    output reg              valid,
    output reg  [OUT_W-1:0] index
);

initial begin
    if (WIDTH < 2 || OUT_W < $clog2(WIDTH)) begin
        $error("priority_encoder: WIDTH must be at least 2 and OUT_W hold an index");
        $finish;
    end
end

integer k;
always @* begin
    valid = 1'b0;
    index = {OUT_W{1'b0}};
    for (k = WIDTH - 1; k >= 0; k = k - 1) begin
        if (in[k]) begin
            valid = 1'b1;
            index = k[OUT_W-1:0];
        end
    end
end

endmodule

`resetall
