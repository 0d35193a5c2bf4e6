// A TLP stream (header, data, dword keep, last) at half the width: a beat
// of 2*OUT_W bits leaves as its low half, then its high half when any dword
// of it is kept (a TLP's last beat may fill only the low half). Each output
// beat carries its input beat's header.
//
// The beat is held in one register and both halves are read from it, so a
// wide beat is taken as its last half leaves: full rate on the narrow side.
// Used by pcie_clock_crossing on the streams out of the core, in the fast
// clock's domain.

`resetall
`timescale 1ns / 1ps
`default_nettype none

module tlp_downsize #(
    // output data width (the input is twice this)
    parameter OUT_W = 64
) (
    input  wire                   clk,
    input  wire                   rst,

    input  wire [127:0]           s_hdr,
    input  wire [2*OUT_W-1:0]     s_data,
    input  wire [2*OUT_W/32-1:0]  s_keep,
    input  wire                   s_valid,
    input  wire                   s_last,
    output wire                   s_ready,

    output wire [127:0]           m_hdr,
    output wire [OUT_W-1:0]       m_data,
    output wire [OUT_W/32-1:0]    m_keep,
    output wire                   m_valid,
    output wire                   m_last,
    input  wire                   m_ready
);

localparam KW = OUT_W / 32;

initial begin
    if (OUT_W < 32 || OUT_W % 32 != 0) begin
        $error("Error: OUT_W must be a multiple of 32 (instance %m)");
        $finish;
    end
end

reg [127:0] hdr_reg = 128'd0;
reg [2*OUT_W-1:0] data_reg = {2*OUT_W{1'b0}};
reg [2*KW-1:0] keep_reg = {2*KW{1'b0}};
reg last_reg = 1'b0;
reg valid_reg = 1'b0;
reg high_reg = 1'b0;                 // the low half has left

wire hi_kept = keep_reg[2*KW-1:KW] != {KW{1'b0}};
// the half on the output is the beat's last
wire final_half = high_reg || !hi_kept;

assign m_hdr = hdr_reg;
assign m_data = high_reg ? data_reg[2*OUT_W-1:OUT_W] : data_reg[OUT_W-1:0];
assign m_keep = high_reg ? keep_reg[2*KW-1:KW] : keep_reg[KW-1:0];
assign m_valid = valid_reg;
assign m_last = last_reg && final_half;

assign s_ready = !valid_reg || (m_ready && final_half);

always @(posedge clk) begin
    if (valid_reg && m_ready) begin
        if (final_half) begin
            valid_reg <= 1'b0;
            high_reg <= 1'b0;
        end else begin
            high_reg <= 1'b1;
        end
    end
    if (s_valid && s_ready) begin
        hdr_reg <= s_hdr;
        data_reg <= s_data;
        keep_reg <= s_keep;
        last_reg <= s_last;
        valid_reg <= 1'b1;
        high_reg <= 1'b0;
    end
    if (rst) begin
        valid_reg <= 1'b0;
        high_reg <= 1'b0;
    end
end

endmodule

`resetall
