// Captures a 64-byte entry (a WQE) as the DMA read engine writes it into the
// staging RAM, by watching the RAM write port: the entry is then available
// in flops without a RAM read port of its own.

`resetall
`timescale 1ns / 1ps
`default_nettype none

module ram_snoop_capture #(
    parameter DATA_W = 64,
    parameter RAM_ADDR_W = 17,                 // byte address width
    parameter [RAM_ADDR_W-1:0] BASE = 0        // byte address of the entry
) (
    input  wire                                clk,
    input  wire                                clear,     // zero the entry
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
assign entry = entry_reg;

genvar gb;
generate
    for (gb = 0; gb < 64; gb = gb + 1) begin : capture
        localparam integer BEAT_I = BEAT0_I + gb / BEAT_BYTES;
        localparam [RAM_ADDR_W-SEG_W-1:0] BEAT = BEAT_I[RAM_ADDR_W-SEG_W-1:0];
        always @(posedge clk) begin
            if (clear) begin
                entry_reg[gb*8 +: 8] <= 8'd0;
            end else if (enable && snoop_en && snoop_addr == BEAT && snoop_strb[gb % BEAT_BYTES]) begin
                entry_reg[gb*8 +: 8] <= snoop_data[(gb % BEAT_BYTES)*8 +: 8];
            end
        end
    end
endgenerate

endmodule

`resetall
