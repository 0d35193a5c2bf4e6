// Which of N entries hold a key: match[i] = valid[i] && tag i == key. For
// state kept per pool entry (a ring, a slot) but asked about by QP number:
// N compares of KEY_W bits, whatever the QP count, where a vector with a
// bit per QP read at a QP number costs a NUM_QP-input mux per read and
// next-state logic in every QP.

`resetall
`timescale 1ns / 1ps
`default_nettype none

module tag_match #(
    parameter N = 16,
    parameter KEY_W = 10
) (
    input  wire [N-1:0]       valid,
    input  wire [N*KEY_W-1:0] tags,     // entry i's tag: tags[i*KEY_W +: KEY_W]
    input  wire [KEY_W-1:0]   key,
    output wire [N-1:0]       match
);

initial begin
    if (N < 1 || KEY_W < 1) begin
        $error("tag_match: N and KEY_W must be at least 1");
        $finish;
    end
end

genvar i;
generate
    for (i = 0; i < N; i = i + 1) begin : g_entry
        assign match[i] = valid[i] && tags[i*KEY_W +: KEY_W] == key;
    end
endgenerate

endmodule

`resetall
