// A module's record port: its rec_map when EN is 1, nothing when 0.
//
// Why: every module that keeps per-QP records has the same choice to make
// (rnic_core's REC_PORT): build the rec_map over its records, or build
// nothing and answer a port no one drives. Made here once, a build
// without the port carries no flop of it, and each module instantiates
// one block whatever the build.
//
// Ports and parameters: rec_map's (see its header). EN 0: reads are taken
// and never answered, writes are taken and dropped, the record ports are
// idle (no record read address, no record write).

`resetall
`timescale 1ns / 1ps
`default_nettype none

module rec_port #(
    parameter EN = 1,
    parameter N_REC = 2,
    parameter [N_REC*32-1:0] REC_W = {N_REC{32'd64}},
    parameter SLOT_W = 6,
    parameter REC_WORDS = 16,
    parameter WORD_W = REC_WORDS > 1 ? $clog2(REC_WORDS) : 1,
    parameter REC_BITS = 128            // the sum of REC_W (rec_map's bit_off(N_REC))
) (
    input  wire                     clk,
    input  wire                     rst,

    input  wire                     s_rec_rd_valid,
    output wire                     s_rec_rd_ready,
    input  wire [SLOT_W-1:0]        s_rec_rd_slot,
    input  wire [WORD_W-1:0]        s_rec_rd_word,
    output wire                     m_rec_rd_data_valid,
    output wire [63:0]              m_rec_rd_data,

    input  wire                     s_rec_wr_valid,
    output wire                     s_rec_wr_ready,
    input  wire [SLOT_W-1:0]        s_rec_wr_slot,
    input  wire [WORD_W-1:0]        s_rec_wr_word,
    input  wire [63:0]              s_rec_wr_data,

    output wire [SLOT_W-1:0]        rec_rd_addr,
    input  wire [REC_BITS-1:0]      rec_rd_data,
    output wire [N_REC-1:0]         rec_wr_en,
    output wire [SLOT_W-1:0]        rec_wr_addr,
    output wire [REC_BITS-1:0]      rec_wr_data,
    input  wire [N_REC-1:0]         rec_wr_ready,

    output wire                     wr_busy
);

function integer sum_w(input integer n);
    integer i;
    begin
        sum_w = 0;
        for (i = 0; i < n; i = i + 1) begin
            sum_w = sum_w + REC_W[i*32 +: 32];
        end
    end
endfunction

// Checked here for every module that keeps records, with the port or
// without it (a knob wrong in a build without the port is wrong in one
// with it); rec_map checks that the records fit REC_WORDS.
initial begin
    if (EN != 0 && EN != 1) begin
        $error("rec_port: EN (rnic_core's REC_PORT) must be 0 or 1");
        $finish;
    end
    if (REC_WORDS < 2 || REC_WORDS > 64 || (REC_WORDS & (REC_WORDS - 1)) != 0) begin
        $error("rec_port: REC_WORDS must be a power of two, 2..64");
        $finish;
    end
    if (REC_BITS != sum_w(N_REC)) begin
        $error("rec_port: REC_BITS must be the sum of REC_W");
        $finish;
    end
end

generate
if (EN != 0) begin : g_map
    rec_map #(
        .N_REC(N_REC),
        .REC_W(REC_W),
        .SLOT_W(SLOT_W),
        .REC_WORDS(REC_WORDS)
    ) map_inst (
        .clk(clk),
        .rst(rst),
        .s_rec_rd_valid(s_rec_rd_valid),
        .s_rec_rd_ready(s_rec_rd_ready),
        .s_rec_rd_slot(s_rec_rd_slot),
        .s_rec_rd_word(s_rec_rd_word),
        .m_rec_rd_data_valid(m_rec_rd_data_valid),
        .m_rec_rd_data(m_rec_rd_data),
        .s_rec_wr_valid(s_rec_wr_valid),
        .s_rec_wr_ready(s_rec_wr_ready),
        .s_rec_wr_slot(s_rec_wr_slot),
        .s_rec_wr_word(s_rec_wr_word),
        .s_rec_wr_data(s_rec_wr_data),
        .rec_rd_addr(rec_rd_addr),
        .rec_rd_data(rec_rd_data),
        .rec_wr_en(rec_wr_en),
        .rec_wr_addr(rec_wr_addr),
        .rec_wr_data(rec_wr_data),
        .rec_wr_ready(rec_wr_ready),
        .wr_busy(wr_busy)
    );
end else begin : g_none
    assign s_rec_rd_ready = 1'b1;
    assign m_rec_rd_data_valid = 1'b0;
    assign m_rec_rd_data = 64'd0;
    assign s_rec_wr_ready = 1'b1;
    assign rec_rd_addr = {SLOT_W{1'b0}};
    assign rec_wr_en = {N_REC{1'b0}};
    assign rec_wr_addr = {SLOT_W{1'b0}};
    assign rec_wr_data = {REC_BITS{1'b0}};
    assign wr_busy = 1'b0;
    /* verilator lint_off UNUSEDSIGNAL */
    wire unused = &{1'b0, clk, rst, s_rec_rd_valid, s_rec_rd_slot, s_rec_rd_word, s_rec_wr_valid,
        s_rec_wr_slot, s_rec_wr_word, s_rec_wr_data, rec_rd_data, rec_wr_ready};
    /* verilator lint_on UNUSEDSIGNAL */
end
endgenerate

endmodule

`resetall
