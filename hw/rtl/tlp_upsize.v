// A TLP stream (header, data, dword keep, last) at twice the width: two
// beats of IN_W bits become one of 2*IN_W, the first in the low half. A TLP
// whose last beat would fill only the low half ends there (the high half's
// keep clear). Each output beat carries the header of its TLP's first beat,
// so a producer may change the header after that beat.
//
// The beats of a TLP are packed from its first dword (the convention of the
// core's TLP streams: payload from lane 0, every beat but the last full), so
// the packing never shifts data. Used by pcie_clock_crossing on the streams
// into the core, in the fast clock's domain, so that the crossing carries
// the link's rate at half the beat rate.

`resetall
`timescale 1ns / 1ps
`default_nettype none

module tlp_upsize #(
    // input data width (the output is twice this)
    parameter IN_W = 64
) (
    input  wire                  clk,
    input  wire                  rst,

    input  wire [127:0]          s_hdr,
    input  wire [IN_W-1:0]       s_data,
    input  wire [IN_W/32-1:0]    s_keep,
    input  wire                  s_valid,
    input  wire                  s_last,
    output wire                  s_ready,

    output wire [127:0]          m_hdr,
    output wire [2*IN_W-1:0]     m_data,
    output wire [2*IN_W/32-1:0]  m_keep,
    output wire                  m_valid,
    output wire                  m_last,
    input  wire                  m_ready
);

localparam KW = IN_W / 32;

initial begin
    if (IN_W < 32 || IN_W % 32 != 0) begin
        $error("Error: IN_W must be a multiple of 32 (instance %m)");
        $finish;
    end
end

// the low half of the beat being built, and whether the next input beat
// starts a TLP
reg [IN_W-1:0] lo_data_reg = {IN_W{1'b0}};
reg [KW-1:0] lo_keep_reg = {KW{1'b0}};
reg lo_valid_reg = 1'b0;
reg in_tlp_reg = 1'b0;
reg [127:0] tlp_hdr_reg = 128'd0;

reg [127:0] out_hdr_reg = 128'd0;
reg [2*IN_W-1:0] out_data_reg = {2*IN_W{1'b0}};
reg [2*KW-1:0] out_keep_reg = {2*KW{1'b0}};
reg out_valid_reg = 1'b0;
reg out_last_reg = 1'b0;

assign m_hdr = out_hdr_reg;
assign m_data = out_data_reg;
assign m_keep = out_keep_reg;
assign m_valid = out_valid_reg;
assign m_last = out_last_reg;

// an input beat can always be placed while the output is free or moving
assign s_ready = !out_valid_reg || m_ready;

wire take = s_valid && s_ready;
wire [127:0] hdr_now = in_tlp_reg ? tlp_hdr_reg : s_hdr;

always @(posedge clk) begin
    if (m_ready) begin
        out_valid_reg <= 1'b0;
    end
    if (take) begin
        if (!in_tlp_reg) begin
            tlp_hdr_reg <= s_hdr;
        end
        in_tlp_reg <= !s_last;
        if (lo_valid_reg) begin
            // the high half: the beat is complete
            out_data_reg <= {s_data, lo_data_reg};
            out_keep_reg <= {s_keep, lo_keep_reg};
            out_hdr_reg <= hdr_now;
            out_last_reg <= s_last;
            out_valid_reg <= 1'b1;
            lo_valid_reg <= 1'b0;
        end else if (s_last) begin
            // a TLP that ends in the low half
            out_data_reg <= {{IN_W{1'b0}}, s_data};
            out_keep_reg <= {{KW{1'b0}}, s_keep};
            out_hdr_reg <= hdr_now;
            out_last_reg <= 1'b1;
            out_valid_reg <= 1'b1;
        end else begin
            lo_data_reg <= s_data;
            lo_keep_reg <= s_keep;
            lo_valid_reg <= 1'b1;
        end
    end
    if (rst) begin
        lo_valid_reg <= 1'b0;
        in_tlp_reg <= 1'b0;
        out_valid_reg <= 1'b0;
    end
end

endmodule

`resetall
