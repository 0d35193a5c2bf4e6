// A record in block RAM with several read ports: one write port and N_RD
// registered, transparent read ports, each reading one field slice of the
// record (bits RD_LSB[p] +: RD_W[p]; a slice may be the whole record).
//
// Why: a block RAM (ram_sdp) has one read port, so a record read by several
// consumers in the same cycle is kept once per reader, every copy written
// by the one write port. Each copy here is a ram_sdp holding only the slice
// its port reads: Yosys 0.23 leaves a copy of the whole record whose read
// bits are mostly unused as an asynchronous read, which no block RAM maps
// (LUTs and flops instead), so a reader of one field gets a copy of that
// field alone. This block writes that pattern once instead of once per
// record.
//
// Ports: rd_addr is packed, port p's address at [p*ADDR_W +: ADDR_W];
// rd_data is packed, port p's slice at the sum of the widths of the ports
// before it (rd_off(p) below), so that an instance can connect it to a
// concatenation of its consumers' wires, last port first. RD_LSB and RD_W
// are packed vectors of 32-bit entries, port p's at [p*32 +: 32] (an
// instance sizes an unsized localparam in the concatenation as
// {32'd0 + F_W, 32'd0 + W}: Verilator 5.006 takes 32'(F_W) for unsized
// when F_W is a plain number). Each port behaves exactly like a ram_sdp of
// its slice: rd_data is the slice at the rd_addr of the cycle before, a
// write of that address in that cycle included; every word starts as the
// slice of INIT.

`resetall
`timescale 1ns / 1ps
`default_nettype none

module ram_sdp_copies #(
    parameter DATA_W = 32,
    parameter ADDR_W = 8,
    parameter DEPTH = 256,
    parameter [DATA_W-1:0] INIT = {DATA_W{1'b0}},
    parameter N_RD = 2,
    // per read port: the slice's lowest bit and its width in the record
    parameter [N_RD*32-1:0] RD_LSB = {N_RD{32'd0}},
    parameter [N_RD*32-1:0] RD_W = {N_RD{32'd0 + DATA_W}}
) (
    input  wire                     clk,

    input  wire                     wr_en,
    input  wire [ADDR_W-1:0]        wr_addr,
    // (bits that no port reads are stored nowhere)
    /* verilator lint_off UNUSEDSIGNAL */
    input  wire [DATA_W-1:0]        wr_data,
    /* verilator lint_on UNUSEDSIGNAL */

    input  wire [N_RD*ADDR_W-1:0]   rd_addr,
    output wire [rd_off(N_RD)-1:0]  rd_data
);

// where port p's slice starts in rd_data: the widths of ports 0..p-1
function integer rd_off(input integer p);
    integer i;
    begin
        rd_off = 0;
        for (i = 0; i < p; i = i + 1) begin
            rd_off = rd_off + RD_W[i*32 +: 32];
        end
    end
endfunction

integer k;
initial begin
    if (N_RD < 1) begin
        $error("ram_sdp_copies: N_RD must be at least 1");
        $finish;
    end
    for (k = 0; k < N_RD; k = k + 1) begin
        if (RD_W[k*32 +: 32] < 1 || RD_LSB[k*32 +: 32] + RD_W[k*32 +: 32] > DATA_W) begin
            $error("ram_sdp_copies: read port %0d: RD_W must be at least 1, RD_LSB + RD_W at most DATA_W", k);
            $finish;
        end
    end
end

genvar p;
generate
    for (p = 0; p < N_RD; p = p + 1) begin : g_port
        localparam integer LSB = RD_LSB[p*32 +: 32];
        localparam integer W = RD_W[p*32 +: 32];
        localparam integer OFF = rd_off(p);

        ram_sdp #(
            .DATA_W(W),
            .ADDR_W(ADDR_W),
            .DEPTH(DEPTH),
            .INIT(INIT[LSB +: W])
        ) copy_inst (
            .clk(clk),
            .wr_en(wr_en),
            .wr_addr(wr_addr),
            .wr_data(wr_data[LSB +: W]),
            .rd_addr(rd_addr[p*ADDR_W +: ADDR_W]),
            .rd_data(rd_data[OFF +: W])
        );
    end
endgenerate

endmodule

`resetall
