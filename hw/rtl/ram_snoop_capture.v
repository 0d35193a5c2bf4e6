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

reg [511:0] entry_reg = 512'd0;
reg [15:0] valid_reg = 16'd0;

genvar gb, gw;
generate
    for (gb = 0; gb < 64; gb = gb + 1) begin : capture
        localparam integer BEAT_I = BEAT0_I + gb / BEAT_BYTES;
        localparam [RAM_ADDR_W-SEG_W-1:0] BEAT = BEAT_I[RAM_ADDR_W-SEG_W-1:0];
        always @(posedge clk) begin
            if (enable && snoop_en && snoop_addr == BEAT && snoop_strb[gb % BEAT_BYTES]) begin
                entry_reg[gb*8 +: 8] <= snoop_data[(gb % BEAT_BYTES)*8 +: 8];
            end
        end
    end
    for (gw = 0; gw < 16; gw = gw + 1) begin : words
        localparam integer BEAT_I = BEAT0_I + (gw * 4) / BEAT_BYTES;
        localparam [RAM_ADDR_W-SEG_W-1:0] BEAT = BEAT_I[RAM_ADDR_W-SEG_W-1:0];
        localparam integer LANE = (gw * 4) % BEAT_BYTES;
        always @(posedge clk) begin
            if (clear) begin
                valid_reg[gw] <= 1'b0;
            end else if (enable && snoop_en && snoop_addr == BEAT && snoop_strb[LANE +: 4] != 4'd0) begin
                valid_reg[gw] <= 1'b1;
            end
        end
        assign entry[gw*32 +: 32] = valid_reg[gw] ? entry_reg[gw*32 +: 32] : 32'd0;
    end
endgenerate

endmodule

`resetall
