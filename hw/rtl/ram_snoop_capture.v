// Captures a 64-byte entry (a WQE) as the DMA read engine writes it into the
// staging RAM, by watching the RAM write port: the entry is then available
// in flops without a RAM read port of its own.
//
// `clear` does not zero the 512 bits (a reset fanout of 512 flops, once on
// the core's critical path): it clears one valid bit per dword, and a dword
// reads as zero until it is written again. A write of any byte of a dword
// marks the whole dword valid; the read engine writes whole dwords here (a
// WQE is read from a 64-byte aligned address, 64 bytes long).

`resetall
`timescale 1ns / 1ps
`default_nettype none

module ram_snoop_capture #(
    parameter DATA_W = 64,
    parameter RAM_ADDR_W = 17,                 // byte address width
    parameter [RAM_ADDR_W-1:0] BASE = 0        // byte address of the entry
) (
    input  wire                                clk,
    input  wire                                clear,     // the entry reads as zero until written
    input  wire                                enable,    // capture writes now
    input  wire [RAM_ADDR_W-$clog2(DATA_W/8)-1:0] snoop_addr,
    input  wire [DATA_W-1:0]                   snoop_data,
    input  wire [DATA_W/8-1:0]                 snoop_strb,
    input  wire                                snoop_en,
    output wire [511:0]                        entry
);

localparam BEAT_BYTES = DATA_W / 8;
localparam SEG_W = $clog2(BEAT_BYTES);
localparam integer BEAT0_I = {{(32-RAM_ADDR_W){1'b0}}, BASE} / BEAT_BYTES;

initial begin
    if (DATA_W < 64 || DATA_W > 512 || BASE % 64 != 0) begin
        $error("ram_snoop_capture: DATA_W must be 64..512 and BASE 64-byte aligned");
        $finish;
    end
end

localparam NBEATS = 64 / BEAT_BYTES;                 // beats of one entry
localparam WPB = BEAT_BYTES / 4;                      // dwords per beat
localparam [RAM_ADDR_W-SEG_W-1:0] BEAT0 = BEAT0_I[RAM_ADDR_W-SEG_W-1:0];

reg [511:0] entry_reg = 512'd0;
reg [15:0] valid_reg = 16'd0;

// One block, guarded by the write enable, rather than one per byte: the
// hardware is the same decoder, but the simulator evaluates each always
// block every cycle, and 80 of them per capture were its largest idle cost.
wire [RAM_ADDR_W-SEG_W-1:0] beat_rel = snoop_addr - BEAT0;
localparam [RAM_ADDR_W-SEG_W-1:0] NBEATS_A = NBEATS[RAM_ADDR_W-SEG_W-1:0];
wire hit = enable && snoop_en && beat_rel < NBEATS_A;
wire [31:0] beat_i = {{(32-RAM_ADDR_W+SEG_W){1'b0}}, beat_rel};

integer b, w;
always @(posedge clk) begin
    if (hit) begin
        // constant indices: a variable part-select as the target costs
        // synthesis a shifter per byte
        for (b = 0; b < 64; b = b + 1) begin
            if (beat_i == b / BEAT_BYTES && snoop_strb[b % BEAT_BYTES]) begin
                entry_reg[b*8 +: 8] <= snoop_data[(b % BEAT_BYTES)*8 +: 8];
            end
        end
    end
    if (clear) begin
        valid_reg <= 16'd0;
    end else if (hit) begin
        for (w = 0; w < 16; w = w + 1) begin
            if (beat_i == w / WPB && snoop_strb[(w % WPB)*4 +: 4] != 4'd0) begin
                valid_reg[w] <= 1'b1;
            end
        end
    end
end

genvar gw;
generate
    for (gw = 0; gw < 16; gw = gw + 1) begin : words
        assign entry[gw*32 +: 32] = valid_reg[gw] ? entry_reg[gw*32 +: 32] : 32'd0;
    end
endgenerate

endmodule

`resetall
