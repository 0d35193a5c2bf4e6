// The record map: qpc_fill's word-wide record port onto N_REC ram_rec
// record ports (issue 19, DESIGN.md section 6, step 1).
//
// Why: qpc_fill moves a slot's per-QP state as REC_WORDS 64-bit words, the
// layout of the host table's record; the core keeps that state in N_REC
// ram_rec record RAMs, each read and written whole (rec_rd_* / rec_wr_*).
// This block is the layout between the two: record r sits at words OFF(r)
// .. OFF(r) + NW(r) - 1 of the slot's record, NW(r) = ceil(REC_W[r] / 64),
// OFF(r) the sum of NW(i) over i < r, its bit 0 at bit 0 of word OFF(r)
// (little-endian), the bits above REC_W[r] in its last word zero. Words
// from OFF(N_REC) up are padding: they read as zero, and writes of them are
// taken and dropped.
//
// Contract with qpc_fill (its copy engine: m_rec_rd_word and m_rec_wr_word
// count 0..REC_WORDS-1 for each slot, one slot at a time):
// - reads: s_rec_rd_ready is 1 (a word a cycle, sustained); a word taken
//   in cycle t is answered in cycle t + 3 (m_rec_rd_data_valid,
//   m_rec_rd_data; registered), in request order. Cycle t + 1 presents the
//   slot on rec_rd_addr (a register, broadcast to every record), cycle t + 2
//   sees every record's rec_rd_data, and the answer register takes the
//   word's 64-bit slice of its record. Reads need no order: any word of any
//   slot in any cycle.
// - writes: the words of one slot come in order 0..REC_WORDS-1 (qpc_fill's
//   copy-in does so); a word of record r is put in the staging register
//   (as wide as the widest record) at its index in r, and the word that
//   ends r (index NW(r) - 1) starts the record write: rec_wr_en[r] alone,
//   rec_wr_addr the word's slot, rec_wr_data record r's field the staging
//   register's low REC_W[r] bits (every field carries the staging register:
//   only rec_wr_en says which record is written). rec_wr_en, the address
//   and the data are held until rec_wr_ready[r] (ram_rec's contract:
//   rec_wr_en does not depend on rec_wr_ready); the write is done exactly
//   in that cycle, once. s_rec_wr_ready (a register) is low from the cycle
//   after the record's last word is taken through the cycle its write is
//   done, so the staging register does not change under a waiting
//   write. Every word of r overwrites its 64 bits of the staging
//   register, so with the words in order nothing of another record or
//   another slot reaches r's write.
// - the end of a copy: the write of the last record is done after its last
//   word is taken, up to as many cycles as its RAM's module keeps
//   rec_wr_ready low. When the layout leaves padding (OFF(N_REC) <
//   REC_WORDS), the slot's last word is padding and is taken only once that
//   write is done, so qpc_fill's copy ends after every record write. With
//   no padding, wr_busy (a record write waiting; registered) says when the
//   slot's records are all written.
// - reset (rst) drops the answers in flight and a record write not yet
//   done (qpc_fill drops its copy with the same reset). The data registers
//   have no reset: the staging register keeps its words, which the next
//   copy, from word 0, overwrites before any record write.
//
// Cost: the read's word select (a 64-bit mux of the slot's REC_WORDS
// words, padding words constant zero) and its answer register, the staging
// register (64 x max NW(r) flops), the slot registers of both ports; the
// layout's tables are constants. Yosys 0.23 synth_ecp5 at N_REC 5, REC_W
// {178, 5, 1, 1, 1}, REC_WORDS 8, SLOT_W 3: 182 LUT4, 44 PFUMX, 264 FF
// (192 the staging register, 64 the answer); at N_REC 4, REC_W {64, 65, 1,
// 322}, REC_WORDS 16, SLOT_W 5: 678 LUT4, 281 PFUMX, 69 L6MUX21, 413 FF.

`resetall
`timescale 1ns / 1ps
`default_nettype none

module rec_map #(
    parameter N_REC = 2,
    // per record: its width in bits, record r's at [r*32 +: 32]
    parameter [N_REC*32-1:0] REC_W = {N_REC{32'd64}},
    parameter SLOT_W = 6,
    parameter REC_WORDS = 16,           // 64-bit words per slot, 2^k, 1..64
    parameter WORD_W = REC_WORDS > 1 ? $clog2(REC_WORDS) : 1
) (
    input  wire                     clk,
    input  wire                     rst,

    // qpc_fill's record port: reads
    input  wire                     s_rec_rd_valid,
    output wire                     s_rec_rd_ready,
    input  wire [SLOT_W-1:0]        s_rec_rd_slot,
    input  wire [WORD_W-1:0]        s_rec_rd_word,
    output reg                      m_rec_rd_data_valid = 1'b0,
    output reg  [63:0]              m_rec_rd_data = 64'd0,

    // qpc_fill's record port: writes
    input  wire                     s_rec_wr_valid,
    output reg                      s_rec_wr_ready = 1'b0,
    input  wire [SLOT_W-1:0]        s_rec_wr_slot,
    input  wire [WORD_W-1:0]        s_rec_wr_word,
    input  wire [63:0]              s_rec_wr_data,

    // the records' ram_rec record ports (record r's bits at bit_off(r))
    output reg  [SLOT_W-1:0]        rec_rd_addr = {SLOT_W{1'b0}},
    input  wire [bit_off(N_REC)-1:0] rec_rd_data,
    output reg  [N_REC-1:0]         rec_wr_en = {N_REC{1'b0}},
    output reg  [SLOT_W-1:0]        rec_wr_addr = {SLOT_W{1'b0}},
    output wire [bit_off(N_REC)-1:0] rec_wr_data,
    input  wire [N_REC-1:0]         rec_wr_ready,

    output reg                      wr_busy = 1'b0
);

// record r's width, and its 64-bit words
function integer rec_w(input integer r);
    begin
        rec_w = REC_W[r*32 +: 32];
    end
endfunction

function integer rec_nw(input integer r);
    begin
        rec_nw = (REC_W[r*32 +: 32] + 63) / 64;
    end
endfunction

// record r's first word in the slot
function integer rec_off(input integer r);
    integer i;
    begin
        rec_off = 0;
        for (i = 0; i < r; i = i + 1) begin
            rec_off = rec_off + rec_nw(i);
        end
    end
endfunction

// where record r's bits start in rec_rd_data and rec_wr_data
function integer bit_off(input integer r);
    integer i;
    begin
        bit_off = 0;
        for (i = 0; i < r; i = i + 1) begin
            bit_off = bit_off + REC_W[i*32 +: 32];
        end
    end
endfunction

// the words every record takes (apart from rec_off: the layout's check)
function integer words_used(input integer n);
    integer i;
    begin
        words_used = 0;
        for (i = 0; i < n; i = i + 1) begin
            words_used = words_used + (REC_W[i*32 +: 32] + 63) / 64;
        end
    end
endfunction

function integer max_nw(input integer n);
    integer i;
    begin
        max_nw = 1;
        for (i = 0; i < n; i = i + 1) begin
            if (rec_nw(i) > max_nw) begin
                max_nw = rec_nw(i);
            end
        end
    end
endfunction

// the record word w belongs to (N_REC: padding)
function integer word_rec(input integer w);
    integer r;
    begin
        word_rec = N_REC;
        for (r = 0; r < N_REC; r = r + 1) begin
            if (w >= rec_off(r) && w < rec_off(r) + rec_nw(r)) begin
                word_rec = r;
            end
        end
    end
endfunction

localparam RI_W = $clog2(N_REC + 1);        // a record number, N_REC for padding
localparam SW = max_nw(N_REC);              // staging words
localparam SI_W = SW > 1 ? $clog2(SW) : 1;  // a word's index in its record
localparam SB = SW * 64;
localparam integer N_REC_I = N_REC;
localparam [RI_W-1:0] PAD_R = N_REC_I[RI_W-1:0];

integer k;
initial begin
    if (N_REC < 1 || N_REC > 32) begin
        $error("rec_map: N_REC must be 1..32");
        $finish;
    end
    for (k = 0; k < N_REC; k = k + 1) begin
        if (rec_w(k) < 1 || rec_w(k) > 1024) begin
            $error("rec_map: record %0d: REC_W must be 1..1024", k);
            $finish;
        end
    end
    if (REC_WORDS < 1 || REC_WORDS > 64 || (REC_WORDS & (REC_WORDS - 1)) != 0) begin
        $error("rec_map: REC_WORDS must be a power of two, 1..64");
        $finish;
    end
    if (WORD_W != (REC_WORDS > 1 ? $clog2(REC_WORDS) : 1)) begin
        $error("rec_map: WORD_W is derived from REC_WORDS, do not set it");
        $finish;
    end
    if (SLOT_W < 1 || SLOT_W > 16) begin
        $error("rec_map: SLOT_W must be 1..16");
        $finish;
    end
    if (words_used(N_REC) > REC_WORDS) begin
        $error("rec_map: the records take %0d words, more than REC_WORDS %0d",
            words_used(N_REC), REC_WORDS);
        $finish;
    end
end

// ---------------------------------------------------------------- layout
// per slot word: its record, its index there, whether it ends the record
wire [REC_WORDS*RI_W-1:0] t_rec;
wire [REC_WORDS*SI_W-1:0] t_idx;
wire [REC_WORDS-1:0]      t_end;

genvar gw, gr;
generate
for (gw = 0; gw < REC_WORDS; gw = gw + 1) begin : g_word
    localparam integer R = word_rec(gw);
    localparam integer I = R < N_REC ? gw - rec_off(R) : 0;
    localparam integer E = (R < N_REC && I == rec_nw(R) - 1) ? 1 : 0;
    assign t_rec[gw*RI_W +: RI_W] = R[RI_W-1:0];
    assign t_idx[gw*SI_W +: SI_W] = I[SI_W-1:0];
    assign t_end[gw] = E != 0;
end
endgenerate

// ---------------------------------------------------------------- reads
assign s_rec_rd_ready = 1'b1;

reg              rd1_v = 1'b0, rd2_v = 1'b0;
reg [WORD_W-1:0] rd1_word = {WORD_W{1'b0}}, rd2_word = {WORD_W{1'b0}};

// the slot's words as the records read give them: word w record R's
// 64-bit slice I (zero above its width), a padding word zero
wire [REC_WORDS*64-1:0] rd_view;
for (gw = 0; gw < REC_WORDS; gw = gw + 1) begin : g_view
    localparam integer R = word_rec(gw);
    if (R < N_REC) begin : g_rec
        localparam integer I = gw - rec_off(R);
        localparam integer LO = bit_off(R) + 64 * I;
        localparam integer NB = rec_w(R) - 64 * I > 64 ? 64 : rec_w(R) - 64 * I;
        if (NB < 64) begin : g_part
            assign rd_view[gw*64 +: 64] = {{(64-NB){1'b0}}, rec_rd_data[LO +: NB]};
        end else begin : g_full
            assign rd_view[gw*64 +: 64] = rec_rd_data[LO +: 64];
        end
    end else begin : g_pad
        assign rd_view[gw*64 +: 64] = 64'd0;
    end
end

// the word asked for (a mux of the slot's words; rd2_word < REC_WORDS)
wire [63:0] rd_word = rd_view[rd2_word*64 +: 64];
integer j;

// the layout's tables at a slot word: a compare with each word number
function [RI_W+SI_W:0] word_info(input [WORD_W-1:0] w);
    integer n;
    begin
        word_info = {PAD_R, {SI_W{1'b0}}, 1'b0};
        for (n = 0; n < REC_WORDS; n = n + 1) begin
            if ({{(32-WORD_W){1'b0}}, w} == n) begin
                word_info = {t_rec[n*RI_W +: RI_W], t_idx[n*SI_W +: SI_W], t_end[n]};
            end
        end
    end
endfunction

always @(posedge clk) begin
    rd1_v <= s_rec_rd_valid;
    rd1_word <= s_rec_rd_word;
    rec_rd_addr <= s_rec_rd_slot;
    rd2_v <= rd1_v;
    rd2_word <= rd1_word;
    m_rec_rd_data_valid <= rd2_v;
    m_rec_rd_data <= rd_word;

    if (rst) begin
        rd1_v <= 1'b0;
        rd2_v <= 1'b0;
        m_rec_rd_data_valid <= 1'b0;
    end
end

// ---------------------------------------------------------------- writes
reg [SB-1:0] stage = {SB{1'b0}};

// the staging bits above the widest record are read by nothing
wire unused_bits = ^stage;

for (gr = 0; gr < N_REC; gr = gr + 1) begin : g_wr
    assign rec_wr_data[bit_off(gr) +: rec_w(gr)] = stage[rec_w(gr)-1:0];
end

wire            wr_take = s_rec_wr_valid && s_rec_wr_ready;
wire [RI_W+SI_W:0] wr_info = word_info(s_rec_wr_word);
wire [RI_W-1:0] wr_rec = wr_info[SI_W+1 +: RI_W];
wire [SI_W-1:0] wr_idx = wr_info[1 +: SI_W];
wire            wr_pad = wr_rec == PAD_R;
wire            wr_end = wr_info[0];
wire            wr_done = (rec_wr_en & rec_wr_ready) != {N_REC{1'b0}};
wire            wr_start = wr_take && !wr_pad && wr_end;
wire            wait_n = (wr_busy && !wr_done) || wr_start;

reg [N_REC-1:0] wr_oh;
always @* begin
    wr_oh = {N_REC{1'b0}};
    for (j = 0; j < N_REC; j = j + 1) begin
        if ({{(32-RI_W){1'b0}}, wr_rec} == j) begin
            wr_oh[j] = 1'b1;
        end
    end
end

always @(posedge clk) begin
    s_rec_wr_ready <= !wait_n;
    wr_busy <= wait_n;
    for (j = 0; j < SW; j = j + 1) begin
        if (wr_take && !wr_pad && {{(32-SI_W){1'b0}}, wr_idx} == j) begin
            stage[j*64 +: 64] <= s_rec_wr_data;
        end
    end
    if (wr_done) begin
        rec_wr_en <= {N_REC{1'b0}};
    end
    if (wr_start) begin
        rec_wr_en <= wr_oh;
        rec_wr_addr <= s_rec_wr_slot;
    end

    if (rst) begin
        s_rec_wr_ready <= 1'b0;
        wr_busy <= 1'b0;
        rec_wr_en <= {N_REC{1'b0}};
    end
end

endmodule

`resetall
