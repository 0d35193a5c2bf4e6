// One record port (rec_map's word port) onto N modules' record ports, each
// holding a range of the record's words.
//
// Why: the core's per-QP state is kept by several modules, each with its
// own rec_map over its own records (its layout is its business); the QP's
// record as the host table stores it is their ranges side by side. Port
// i holds words BASE(i) .. BASE(i) + 2^LOG(i) - 1 and sees them as 0 ..
// 2^LOG(i) - 1. The ranges tile 0 .. 2^WORD_W - 1 exactly (checked), so
// every word has one owner and no word is answered by the mux itself.
//
// Contract (rec_map's, see its header): reads are routed to the owner of
// the word, the answer of whichever port answers is registered once more
// here, so a read is answered a cycle later than its port answers; every
// port must answer with the same latency (they are all rec_maps), so the
// answers stay in request order. Writes are routed the same way; a port
// sees its own words in the order they come, so words written in order
// reach each port in order. wr_busy is any port's.
//
// Cost: the range compares (constants against the word's high bits), an
// OR of the ports' answers and its register (64 + 1 flops).

`resetall
`timescale 1ns / 1ps
`default_nettype none

module rec_port_mux #(
    parameter N = 2,
    parameter SLOT_W = 6,
    parameter WORD_W = 6,
    // per port: its first word and log2 of its word count, port i's at
    // [i*32 +: 32]
    parameter [N*32-1:0] BASE = {32'd32, 32'd0},
    parameter [N*32-1:0] LOG = {32'd5, 32'd5}
) (
    input  wire                     clk,
    input  wire                     rst,

    // the record port
    input  wire                     s_rec_rd_valid,
    output wire                     s_rec_rd_ready,
    input  wire [SLOT_W-1:0]        s_rec_rd_slot,
    input  wire [WORD_W-1:0]        s_rec_rd_word,
    output reg                      m_rec_rd_data_valid = 1'b0,
    output reg  [63:0]              m_rec_rd_data = 64'd0,
    input  wire                     s_rec_wr_valid,
    output wire                     s_rec_wr_ready,
    input  wire [SLOT_W-1:0]        s_rec_wr_slot,
    input  wire [WORD_W-1:0]        s_rec_wr_word,
    input  wire [63:0]              s_rec_wr_data,
    output wire                     rec_wr_busy,

    // the modules' ports (slot, word and data shared; the word's low bits
    // are each port's word)
    output wire [N-1:0]             p_rd_valid,
    input  wire [N-1:0]             p_rd_ready,
    output wire [SLOT_W-1:0]        p_rd_slot,
    output wire [WORD_W-1:0]        p_rd_word,
    input  wire [N-1:0]             p_rd_data_valid,
    input  wire [N*64-1:0]          p_rd_data,
    output wire [N-1:0]             p_wr_valid,
    input  wire [N-1:0]             p_wr_ready,
    output wire [SLOT_W-1:0]        p_wr_slot,
    output wire [WORD_W-1:0]        p_wr_word,
    output wire [63:0]              p_wr_data,
    input  wire [N-1:0]             p_wr_busy
);

function integer base(input integer i);
    begin
        base = BASE[i*32 +: 32];
    end
endfunction

function integer size(input integer i);
    begin
        size = 1 << LOG[i*32 +: 32];
    end
endfunction

// whether the ranges tile the record: one owner per word
function integer tiles(input integer dummy);
    integer t, u, n;
    begin
        tiles = 1;
        for (t = 0; t < (1 << WORD_W); t = t + 1) begin
            n = 0;
            for (u = 0; u < N; u = u + 1) begin
                if (t >= base(u) && t < base(u) + size(u)) begin
                    n = n + 1;
                end
            end
            if (n != 1) begin
                tiles = 0;
            end
        end
        tiles = tiles + 0 * dummy;
    end
endfunction

integer i;
initial begin
    if (N < 1 || WORD_W < 1 || WORD_W > 8) begin
        $error("rec_port_mux: N must be at least 1, WORD_W 1..8");
        $finish;
    end
    for (i = 0; i < N; i = i + 1) begin
        if (LOG[i*32 +: 32] > WORD_W || base(i) % size(i) != 0
                || base(i) + size(i) > (1 << WORD_W)) begin
            $error("rec_port_mux: port %0d: its range must be aligned to its size and inside the record", i);
            $finish;
        end
    end
    if (tiles(0) == 0) begin
        $error("rec_port_mux: the ranges must tile the record, one owner per word");
        $finish;
    end
end

// which port owns a word: its high bits above the port's size
function [N-1:0] owner(input [WORD_W-1:0] word);
    integer k;
    reg [31:0] w32;
    begin
        w32 = {{(32-WORD_W){1'b0}}, word};
        owner = {N{1'b0}};
        for (k = 0; k < N; k = k + 1) begin
            owner[k] = w32 >= base(k) && w32 < base(k) + size(k);
        end
    end
endfunction

wire [N-1:0] rd_sel = owner(s_rec_rd_word);
wire [N-1:0] wr_sel = owner(s_rec_wr_word);

assign p_rd_valid = s_rec_rd_valid ? rd_sel : {N{1'b0}};
assign s_rec_rd_ready = |(p_rd_ready & rd_sel);
assign p_rd_slot = s_rec_rd_slot;
assign p_rd_word = s_rec_rd_word;

assign p_wr_valid = s_rec_wr_valid ? wr_sel : {N{1'b0}};
assign s_rec_wr_ready = |(p_wr_ready & wr_sel);
assign p_wr_slot = s_rec_wr_slot;
assign p_wr_word = s_rec_wr_word;
assign p_wr_data = s_rec_wr_data;
assign rec_wr_busy = |p_wr_busy;

// (one read in flight per cycle at most: one answer at a time)
reg [63:0] ans;
integer a;
always @* begin
    ans = 64'd0;
    for (a = 0; a < N; a = a + 1) begin
        ans = ans | (p_rd_data_valid[a] ? p_rd_data[a*64 +: 64] : 64'd0);
    end
end

always @(posedge clk) begin
    m_rec_rd_data_valid <= !rst && |p_rd_data_valid;
    m_rec_rd_data <= ans;
end

endmodule

`resetall
