// A valid/ready stream from one clock to another: a FIFO of 2^ADDR_W beats
// whose write pointer crosses to the read side (and the read pointer to the
// write side) in Gray code through two flops, so a pointer caught mid-change
// is off by at most one step and only ever too cautious: the reader sees an
// entry only after it was written, the writer sees space only after it was
// read. Used by pcie_clock_crossing to run the core on its own clock, away
// from the PCIe block's user clock.
//
// The payload is one vector of WIDTH bits (pack data, keep, last and any
// sideband into it). s_ready is !full, from registers only; m_valid/m_data
// are an output register loaded from the memory, so neither side has a
// combinational path through the FIFO. Latency: a beat is offered at the
// read side three to four read-clock edges after it was written.
//
// Reset: either side's reset empties the whole FIFO. Each reset reaches the
// other side through two of that side's flops and holds it in reset while
// it lasts there, so after a reset neither side runs on a pointer the other
// has cleared. Hold a reset for at least four periods of the slower clock
// (one side's reset alone must last three periods of the other side's
// clock and one of its own), so that a side never comes out of reset
// before the other has gone into it; pcie_clock_crossing drives both from
// one source.

`resetall
`timescale 1ns / 1ps
`default_nettype none

module axis_async_fifo #(
    // payload bits per beat
    parameter WIDTH = 8,
    // log2 of the depth in beats
    parameter ADDR_W = 4
) (
    input  wire             s_clk,
    input  wire             s_rst,   // active high, s_clk domain
    input  wire [WIDTH-1:0] s_data,
    input  wire             s_valid,
    output wire             s_ready,

    input  wire             m_clk,
    input  wire             m_rst,   // active high, m_clk domain
    output wire [WIDTH-1:0] m_data,
    output wire             m_valid,
    input  wire             m_ready
);

initial begin
    if (WIDTH < 1) begin
        $error("Error: WIDTH must be at least 1 (instance %m)");
        $finish;
    end
    if (ADDR_W < 1 || ADDR_W > 12) begin
        $error("Error: ADDR_W must be 1..12 (instance %m)");
        $finish;
    end
end

localparam DEPTH = 1 << ADDR_W;
localparam PW = ADDR_W + 1;          // a pointer with the wrap bit

function [PW-1:0] bin2gray(input [PW-1:0] b);
    bin2gray = b ^ (b >> 1);
endfunction

function [PW-1:0] gray2bin(input [PW-1:0] g);
    integer i;
    begin
        gray2bin[PW-1] = g[PW-1];
        for (i = PW - 2; i >= 0; i = i - 1) begin
            gray2bin[i] = gray2bin[i+1] ^ g[i];
        end
    end
endfunction

// ------------------------------------------------------------------ resets
// s side in reset: its own, or the read side's (through two s_clk flops);
// and the same the other way round
(* ASYNC_REG = "TRUE" *) reg [1:0] m_rst_at_s = 2'b11;
(* ASYNC_REG = "TRUE" *) reg [1:0] s_rst_at_m = 2'b11;
always @(posedge s_clk) begin
    m_rst_at_s <= {m_rst_at_s[0], m_rst};
end
always @(posedge m_clk) begin
    s_rst_at_m <= {s_rst_at_m[0], s_rst};
end
wire s_clear = s_rst || m_rst_at_s[1];
wire m_clear = m_rst || s_rst_at_m[1];

reg [WIDTH-1:0] mem [0:DEPTH-1];

// ------------------------------------------------------------------ write side
reg [PW-1:0] wr_bin_reg = {PW{1'b0}};
reg [PW-1:0] wr_gray_reg = {PW{1'b0}};
(* ASYNC_REG = "TRUE" *) reg [PW-1:0] rd_gray_s1_reg = {PW{1'b0}};
(* ASYNC_REG = "TRUE" *) reg [PW-1:0] rd_gray_s2_reg = {PW{1'b0}};
wire [PW-1:0] rd_bin_s = gray2bin(rd_gray_s2_reg);
// full: the pointers differ only in the wrap bit
wire full = wr_bin_reg[ADDR_W] != rd_bin_s[ADDR_W]
    && wr_bin_reg[ADDR_W-1:0] == rd_bin_s[ADDR_W-1:0];
assign s_ready = !full && !s_clear;

wire [PW-1:0] wr_bin_inc = wr_bin_reg + 1'b1;
always @(posedge s_clk) begin
    rd_gray_s1_reg <= rd_gray_reg;
    rd_gray_s2_reg <= rd_gray_s1_reg;
    if (s_valid && s_ready) begin
        mem[wr_bin_reg[ADDR_W-1:0]] <= s_data;
        wr_bin_reg <= wr_bin_inc;
        wr_gray_reg <= bin2gray(wr_bin_inc);
    end
    if (s_clear) begin
        wr_bin_reg <= {PW{1'b0}};
        wr_gray_reg <= {PW{1'b0}};
        rd_gray_s1_reg <= {PW{1'b0}};
        rd_gray_s2_reg <= {PW{1'b0}};
    end
end

// ------------------------------------------------------------------ read side
reg [PW-1:0] rd_bin_reg = {PW{1'b0}};
reg [PW-1:0] rd_gray_reg = {PW{1'b0}};
(* ASYNC_REG = "TRUE" *) reg [PW-1:0] wr_gray_m1_reg = {PW{1'b0}};
(* ASYNC_REG = "TRUE" *) reg [PW-1:0] wr_gray_m2_reg = {PW{1'b0}};
wire empty = rd_gray_reg == wr_gray_m2_reg;

reg [WIDTH-1:0] out_data_reg = {WIDTH{1'b0}};
reg out_valid_reg = 1'b0;
assign m_data = out_data_reg;
assign m_valid = out_valid_reg;

// the output register takes the next entry when it is free or moving
wire load = !empty && (!out_valid_reg || m_ready);
wire [PW-1:0] rd_bin_inc = rd_bin_reg + 1'b1;
always @(posedge m_clk) begin
    wr_gray_m1_reg <= wr_gray_reg;
    wr_gray_m2_reg <= wr_gray_m1_reg;
    if (load) begin
        out_data_reg <= mem[rd_bin_reg[ADDR_W-1:0]];
        out_valid_reg <= 1'b1;
        rd_bin_reg <= rd_bin_inc;
        rd_gray_reg <= bin2gray(rd_bin_inc);
    end else if (m_ready) begin
        out_valid_reg <= 1'b0;
    end
    if (m_clear) begin
        out_valid_reg <= 1'b0;
        rd_bin_reg <= {PW{1'b0}};
        rd_gray_reg <= {PW{1'b0}};
        wr_gray_m1_reg <= {PW{1'b0}};
        wr_gray_m2_reg <= {PW{1'b0}};
    end
end

endmodule

`resetall
