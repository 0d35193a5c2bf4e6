// A record in block RAM with several read ports (ram_sdp_copies) and a
// record port: one more copy holding every bit of the record, read whole,
// and a whole-record write that takes the write port in the cycles the
// module does not write.
//
// Why: the QP context cache (issue 19, DESIGN.md section 6, step 1) moves
// a slot's per-QP state between the core's record RAMs and host memory.
// Its fill and write-back engine (qpc_fill) must read a slot's whole
// record and write a whole record, but a ram_sdp_copies keeps in each copy
// only the slice its port reads, and its one write port belongs to the
// module that owns the record. This block adds what the engine needs and
// changes nothing for the module: its write port and its N_RD read ports
// behave exactly as ram_sdp_copies' (same parameters, same packing).
//
// Ports (beyond ram_sdp_copies', see its header):
// - rec_rd_addr / rec_rd_data: the whole record at the rec_rd_addr of the
//   cycle before, a write of that address in that cycle included (module
//   or record write): registered and transparent, exactly like a ram_sdp.
//   There is no read enable: the port reads every cycle; a reader that
//   needs the word later holds rec_rd_addr.
// - rec_wr_en / rec_wr_addr / rec_wr_data / rec_wr_ready: a whole-record
//   write, valid/ready. The module's write port has priority:
//   rec_wr_ready = !wr_en, combinational (a path from wr_en to
//   rec_wr_ready; the writer must not make rec_wr_en depend on it in the
//   same cycle). A record write is done, to every copy (the N_RD read
//   ports' slices and the record copy), exactly in a cycle with
//   rec_wr_en && rec_wr_ready, and only then: the writer holds rec_wr_en,
//   rec_wr_addr and rec_wr_data until that cycle, and a record write is
//   never lost nor done twice. A module write and a record write of one
//   address are the owner's business (the cache writes only slots no
//   module uses); the one done later wins.
//
// Cost: one more block RAM copy, of the whole record (DATA_W bits x
// DEPTH), with its transparent read's bypass mux (DATA_W LUTs), and a 2:1
// mux of address and data before the shared write port. Yosys 0.23
// synth_ecp5 at DATA_W 100, ADDR_W 6, DEPTH 64, N_RD 2 (both ports the
// whole record): 9 DP16KD, 437 LUT4, 103 FF, against 6 DP16KD, 220 LUT4,
// 102 FF for the ram_sdp_copies alone.

`resetall
`timescale 1ns / 1ps
`default_nettype none

module ram_rec #(
    parameter DATA_W = 32,
    parameter ADDR_W = 8,
    parameter DEPTH = 256,
    parameter [DATA_W-1:0] INIT = {DATA_W{1'b0}},
    parameter N_RD = 2,
    // per read port: the slice's lowest bit and its width in the record
    parameter [N_RD*32-1:0] RD_LSB = {N_RD{32'd0}},
    parameter [N_RD*32-1:0] RD_W = {N_RD{32'd0 + DATA_W}},
    // 1: the record port's read copy is built; 0: it is not (rec_rd_data
    // reads 0), so a build without the record port (rnic_core REC_PORT 0)
    // pays nothing for it; the record write stays (tied off, it synthesizes
    // away)
    parameter REC_EN = 1,
    // the last REC_RD read ports serve only the record port's users (the
    // context table's pin): built with REC_EN, else they read 0
    parameter REC_RD = 0
) (
    input  wire                     clk,

    input  wire                     wr_en,
    input  wire [ADDR_W-1:0]        wr_addr,
    input  wire [DATA_W-1:0]        wr_data,

    input  wire [N_RD*ADDR_W-1:0]   rd_addr,
    output wire [rd_off(N_RD)-1:0]  rd_data,

    // record port: read
    input  wire [ADDR_W-1:0]        rec_rd_addr,
    output wire [DATA_W-1:0]        rec_rd_data,

    // record port: write (rec_wr_ready = !wr_en, combinational)
    input  wire                     rec_wr_en,
    input  wire [ADDR_W-1:0]        rec_wr_addr,
    input  wire [DATA_W-1:0]        rec_wr_data,
    output wire                     rec_wr_ready
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
    if (N_RD < 1 || REC_RD < 0 || REC_RD >= N_RD) begin
        $error("ram_rec: N_RD must be at least 1, REC_RD 0..N_RD-1");
        $finish;
    end
    if (DATA_W < 1 || ADDR_W < 1 || ADDR_W > 20) begin
        $error("ram_rec: DATA_W must be at least 1, ADDR_W 1..20");
        $finish;
    end
    if (DEPTH < 1 || DEPTH > (1 << ADDR_W)) begin
        $error("ram_rec: DEPTH must be 1..2^ADDR_W");
        $finish;
    end
    for (k = 0; k < N_RD; k = k + 1) begin
        if (RD_W[k*32 +: 32] < 1 || RD_LSB[k*32 +: 32] + RD_W[k*32 +: 32] > DATA_W) begin
            $error("ram_rec: read port %0d: RD_W must be at least 1, RD_LSB + RD_W at most DATA_W", k);
            $finish;
        end
    end
end

// the module's write first; a record write only in a cycle without one
assign rec_wr_ready = !wr_en;
wire rec_wr_go = rec_wr_en && rec_wr_ready;

wire              w_en = wr_en || rec_wr_go;
wire [ADDR_W-1:0] w_addr = rec_wr_go ? rec_wr_addr : wr_addr;
wire [DATA_W-1:0] w_data = rec_wr_go ? rec_wr_data : wr_data;

// the module's read ports: a copy of each port's slice (the record
// port's helpers only with REC_EN)
localparam N_ON = REC_EN != 0 ? N_RD : N_RD - REC_RD;
ram_sdp_copies #(
    .DATA_W(DATA_W),
    .ADDR_W(ADDR_W),
    .DEPTH(DEPTH),
    .INIT(INIT),
    .N_RD(N_ON),
    .RD_LSB(RD_LSB[N_ON*32-1:0]),
    .RD_W(RD_W[N_ON*32-1:0])
) copies_inst (
    .clk(clk),
    .wr_en(w_en),
    .wr_addr(w_addr),
    .wr_data(w_data),
    .rd_addr(rd_addr[N_ON*ADDR_W-1:0]),
    .rd_data(rd_data[rd_off(N_ON)-1:0])
);
generate
if (N_ON < N_RD) begin : g_off
assign rd_data[rd_off(N_RD)-1:rd_off(N_ON)] = {(rd_off(N_RD) - rd_off(N_ON)){1'b0}};
/* verilator lint_off UNUSEDSIGNAL */
wire unused_rd_addr = &{1'b0, rd_addr[N_RD*ADDR_W-1:N_ON*ADDR_W]};
/* verilator lint_on UNUSEDSIGNAL */
end
endgenerate

// the record port's read: a copy of the whole record
generate
if (REC_EN != 0) begin : g_rec
ram_sdp #(
    .DATA_W(DATA_W),
    .ADDR_W(ADDR_W),
    .DEPTH(DEPTH),
    .INIT(INIT)
) rec_inst (
    .clk(clk),
    .wr_en(w_en),
    .wr_addr(w_addr),
    .wr_data(w_data),
    .rd_addr(rec_rd_addr),
    .rd_data(rec_rd_data)
);
end else begin : g_no_rec
assign rec_rd_data = {DATA_W{1'b0}};
/* verilator lint_off UNUSEDSIGNAL */
wire unused_rec_rd_addr = &{1'b0, rec_rd_addr};
/* verilator lint_on UNUSEDSIGNAL */
end
endgenerate

endmodule

`resetall
