// Simple dual-port RAM: one write port and one read port with a registered
// (synchronous) read, in the form Yosys maps to block RAM (ECP5 DP16KD,
// Xilinx RAMB18/RAMB36), also at small depths (ram_style below).
//
// rd_data is the word at the rd_addr of the cycle before, and the read is
// transparent: a read of the address written in the same cycle returns the
// word being written. So the port behaves like a combinational read of a
// flop array through a registered address: what a write at cycle t stores
// is seen from cycle t+1. A block RAM returns the old word, or an undefined
// one, when its two ports meet at one address; synthesis adds the bypass
// (a register of the written word and a 2:1 mux after the RAM). Yosys 0.23
// recognizes the mux below as a transparent port; a read-first port would
// cost more there, since the ECP5 block cannot promise the old word either.
//
// The memory has no reset (block RAM has none); every word starts as INIT.

`resetall
`timescale 1ns / 1ps
`default_nettype none

module ram_sdp #(
    parameter DATA_W = 32,
    parameter ADDR_W = 8,
    parameter DEPTH = 256,
    parameter [DATA_W-1:0] INIT = {DATA_W{1'b0}}
) (
    input  wire              clk,

    input  wire              wr_en,
    input  wire [ADDR_W-1:0] wr_addr,
    input  wire [DATA_W-1:0] wr_data,

    input  wire [ADDR_W-1:0] rd_addr,
    output wire [DATA_W-1:0] rd_data
);

initial begin
    if (DATA_W < 1 || ADDR_W < 1 || ADDR_W > 20) begin
        $error("ram_sdp: DATA_W must be at least 1, ADDR_W 1..20");
        $finish;
    end
    if (DEPTH < 1 || DEPTH > (1 << ADDR_W)) begin
        $error("ram_sdp: DEPTH must be 1..2^ADDR_W");
        $finish;
    end
end

// block RAM even where Yosys would take LUT RAM (a 16-deep record): the
// point of the block is that logic does not grow with the depth
(* ram_style = "block" *)
reg [DATA_W-1:0] mem [0:DEPTH-1];
reg [DATA_W-1:0] rd_data_reg = INIT;

integer i;
initial begin
    for (i = 0; i < DEPTH; i = i + 1) begin
        mem[i] = INIT;
    end
end

always @(posedge clk) begin
    if (wr_en) begin
        mem[wr_addr] <= wr_data;
    end
    rd_data_reg <= wr_en && wr_addr == rd_addr ? wr_data : mem[rd_addr];
end

assign rd_data = rd_data_reg;

endmodule

`resetall
