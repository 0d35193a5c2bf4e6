// The record window: BAR0's qp_rec_cmd onto the core's record port (a
// word of one QP's record read into qp_rec_rdata, or qp_rec_wdata
// written as one).
//
// Why: the record port (DESIGN.md section 6, step 1) is what the QP
// context cache will move QPs through; through this window the host reads
// and writes every bit of a QP's state as the host table will hold it, so
// the port is proven end to end before the cache drives it, and a lab can
// dump a QP's whole state.
//
// A command names its QP (qp_sel) and word. A QP beyond NUM_Q or a word
// beyond REC_WORDS never reaches the port (the slot and word are
// truncated there: it would alias another QP): a read of one answers 0, a
// write of one is dropped. A write is done once the port takes it and its
// record's write is done (rec_wr_busy low), so a command that follows sees
// it. busy is high from the command to its end (rnic_control stalls MMIO
// meanwhile).

`resetall
`timescale 1ns / 1ps
`default_nettype none

module qp_rec_window #(
    parameter NUM_Q = 16,
    parameter QN_W = 4,
    parameter REC_WORDS = 64,
    parameter WORD_W = 6
) (
    input  wire                 clk,
    input  wire                 rst,

    input  wire [15:0]          cmd_qpn,
    input  wire [7:0]           cmd_word,
    input  wire [1:0]           cmd_op,           // 1 read, 2 write
    input  wire                 cmd_valid,
    input  wire [63:0]          cmd_wdata,
    output reg  [63:0]          rdata = 64'd0,
    output wire                 busy,

    output reg                  m_rec_rd_valid = 1'b0,
    input  wire                 m_rec_rd_ready,
    output reg  [QN_W-1:0]      m_rec_rd_slot = {QN_W{1'b0}},
    output reg  [WORD_W-1:0]    m_rec_rd_word = {WORD_W{1'b0}},
    input  wire                 s_rec_rd_data_valid,
    input  wire [63:0]          s_rec_rd_data,
    output reg                  m_rec_wr_valid = 1'b0,
    input  wire                 m_rec_wr_ready,
    output reg  [QN_W-1:0]      m_rec_wr_slot = {QN_W{1'b0}},
    output reg  [WORD_W-1:0]    m_rec_wr_word = {WORD_W{1'b0}},
    output reg  [63:0]          m_rec_wr_data = 64'd0,
    input  wire                 rec_wr_busy
);

initial begin
    if (NUM_Q < 1 || NUM_Q > (1 << QN_W) || QN_W > 16) begin
        $error("qp_rec_window: NUM_Q must be 1..2^QN_W, QN_W at most 16");
        $finish;
    end
    if (REC_WORDS != (1 << WORD_W) || WORD_W > 8) begin
        $error("qp_rec_window: REC_WORDS must be 2^WORD_W, at most 256");
        $finish;
    end
end

localparam [1:0] ST_IDLE = 2'd0, ST_READ = 2'd1, ST_WRITE = 2'd2, ST_WRITTEN = 2'd3;
reg [1:0] state_reg = ST_IDLE;
assign busy = state_reg != ST_IDLE;

wire in_range = {16'd0, cmd_qpn} < NUM_Q && {24'd0, cmd_word} < REC_WORDS;

always @(posedge clk) begin
    case (state_reg)
        ST_IDLE: begin
            if (cmd_valid && cmd_op == 2'd1) begin
                if (in_range) begin
                    m_rec_rd_valid <= 1'b1;
                    m_rec_rd_slot <= cmd_qpn[QN_W-1:0];
                    m_rec_rd_word <= cmd_word[WORD_W-1:0];
                    state_reg <= ST_READ;
                end else begin
                    rdata <= 64'd0;
                end
            end else if (cmd_valid && cmd_op == 2'd2 && in_range) begin
                m_rec_wr_valid <= 1'b1;
                m_rec_wr_slot <= cmd_qpn[QN_W-1:0];
                m_rec_wr_word <= cmd_word[WORD_W-1:0];
                m_rec_wr_data <= cmd_wdata;
                state_reg <= ST_WRITE;
            end
        end
        ST_READ: begin
            if (m_rec_rd_ready) begin
                m_rec_rd_valid <= 1'b0;
            end
            if (s_rec_rd_data_valid) begin
                rdata <= s_rec_rd_data;
                state_reg <= ST_IDLE;
            end
        end
        ST_WRITE: begin
            if (m_rec_wr_ready) begin
                m_rec_wr_valid <= 1'b0;
                state_reg <= ST_WRITTEN;
            end
        end
        default: begin
            // (rec_wr_busy is registered: it rises the cycle after the
            // last word of a record is taken, which is this one)
            if (!rec_wr_busy) begin
                state_reg <= ST_IDLE;
            end
        end
    endcase
    if (rst) begin
        state_reg <= ST_IDLE;
        m_rec_rd_valid <= 1'b0;
        m_rec_wr_valid <= 1'b0;
    end
end

endmodule

`resetall
