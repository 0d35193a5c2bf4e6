// CRC-32 (Ethernet / RoCEv2 ICRC: reflected, polynomial 0xEDB88320, initial
// value all ones, result inverted) over a byte stream presented one DATA_W
// beat per clock, with a per-byte keep mask.
//
// Bus conventions: byte 0 of a beat is bits [7:0] and is first on the wire;
// every bit is processed LSB first (reflected CRC). The result m_crc equals
// zlib's crc32() of the message; on the wire it goes LSB first, i.e. byte 0
// = m_crc[7:0] (as the Ethernet FCS and the RoCEv2 ICRC).
//
// A message is one or more beats: s_first on its first beat (the state
// restarts from all ones), s_last on its last beat. Every beat except the
// last must have all keep bits set; the last beat's keep is contiguous from
// byte 0 and may be all zeros (no bytes on that beat). Beats of consecutive
// messages may follow each other back to back. One m_crc_valid pulse per
// message, in message order, LATENCY = 3 + log2(DATA_W/8) cycles after the
// last beat (6 cycles at DATA_W = 64); m_crc holds until the next result.
//
// Structure (the only feedback loop is a 32x32 XOR matrix):
//
//   S1  mask the bytes outside keep to zero, count the missing bytes m
//   S2  q = contribution of the (zero-filled) beat to the CRC state, from
//       a zero state: one XOR tree per state bit over the data bits
//   S3  state' = A(state) ^ q, A = effect of DATA_W bits on the state
//       (the state bits enter like the first 32 data bits, so A is the
//       first 32 columns of the data matrix)
//   tail (last beat only, off the loop): the last beat was processed as if
//       it had BL bytes, the missing m bytes as trailing zeros; undo those
//       zero bytes by running the CRC register backwards m bytes, one stage
//       per bit of m (1, 2, 4, ... bytes). An empty last beat (keep = 0)
//       takes the state from before the beat instead.
//
// The XOR matrices are computed at elaboration by constant functions and
// used as masks of reduction XORs (balanced trees).

`resetall
`timescale 1ns / 1ps
`default_nettype none

module icrc_crc32 #(
    // beat width: 64, 128, 256 or 512
    parameter DATA_W = 64
) (
    input  wire                clk,
    input  wire                rst,

    input  wire [DATA_W-1:0]   s_data,
    input  wire [DATA_W/8-1:0] s_keep,
    input  wire                s_first,
    input  wire                s_last,
    input  wire                s_valid,

    output wire [31:0]         m_crc,
    output wire                m_crc_valid
);

localparam BL = DATA_W / 8;
localparam SEG_W = $clog2(BL);

localparam [31:0] POLY = 32'hEDB88320;

// check configuration
initial begin
    if (DATA_W != 64 && DATA_W != 128 && DATA_W != 256 && DATA_W != 512) begin
        $error("Error: DATA_W must be 64, 128, 256 or 512 (instance %m)");
        $finish;
    end
end

// column j (32 bits at [32*j +: 32]) = CRC state after feeding nbits data
// bits, all zero except bit j, into a zero state
function [32*DATA_W-1:0] data_cols(input integer nbits);
    integer j;
    reg [31:0] v;
    begin
        // every column is written below
        v = POLY;
        for (j = nbits - 1; j >= 0; j = j - 1) begin
            data_cols[32*j +: 32] = v;
            v = v[0] ? ((v >> 1) ^ POLY) : (v >> 1);
        end
    end
endfunction

// column i = state that becomes unit vector i after nbytes zero bytes
// (the CRC register run backwards)
function [32*32-1:0] unstep_cols(input integer nbytes);
    integer i, k;
    reg [31:0] v;
    begin
        unstep_cols = {32*32{1'b0}};
        for (i = 0; i < 32; i = i + 1) begin
            v = 32'd1 << i;
            for (k = 0; k < 8 * nbytes; k = k + 1) begin
                v = v[31] ? (((v ^ POLY) << 1) | 32'd1) : (v << 1);
            end
            unstep_cols[32*i +: 32] = v;
        end
    end
endfunction

// row r of a column table: which inputs feed state bit r
function [DATA_W-1:0] data_row(input [32*DATA_W-1:0] cols, input integer r);
    integer j;
    begin
        data_row = {DATA_W{1'b0}};
        for (j = 0; j < DATA_W; j = j + 1) begin
            data_row[j] = cols[32*j + r];
        end
    end
endfunction

function [31:0] unstep_row(input [32*32-1:0] cols, input integer r);
    integer j;
    begin
        unstep_row = 32'd0;
        for (j = 0; j < 32; j = j + 1) begin
            unstep_row[j] = cols[32*j + r];
        end
    end
endfunction

// a column table as rows: row r (which inputs feed state bit r) at [W*r +: W]
function [32*DATA_W-1:0] data_rows(input [32*DATA_W-1:0] cols);
    integer r;
    begin
        for (r = 0; r < 32; r = r + 1) begin
            data_rows[DATA_W*r +: DATA_W] = data_row(cols, r);
        end
    end
endfunction

function [32*32-1:0] unstep_rows(input [32*32-1:0] cols);
    integer r;
    begin
        for (r = 0; r < 32; r = r + 1) begin
            unstep_rows[32*r +: 32] = unstep_row(cols, r);
        end
    end
endfunction

localparam [32*DATA_W-1:0] DROWS = data_rows(data_cols(DATA_W));

// The matrix products are functions called in the clocked blocks, under the
// stage's valid, rather than wires: the logic is the same, but the simulator
// evaluates every wire each cycle, and the CRC of two idle ports was a
// tenth of its idle cost.

// data contribution of a beat: bit r is the parity of the data under row r
function [31:0] mul_data(input [DATA_W-1:0] v);
    integer r;
    begin
        for (r = 0; r < 32; r = r + 1) begin
            mul_data[r] = ^(v & DROWS[DATA_W*r +: DATA_W]);
        end
    end
endfunction

// the state's own contribution over one beat: the first 32 columns
function [31:0] mul_state(input [31:0] v);
    integer r;
    begin
        for (r = 0; r < 32; r = r + 1) begin
            mul_state[r] = ^(v & DROWS[DATA_W*r +: 32]);
        end
    end
endfunction

function [31:0] mul_unstep(input [31:0] v, input [32*32-1:0] rows);
    integer r;
    begin
        for (r = 0; r < 32; r = r + 1) begin
            mul_unstep[r] = ^(v & rows[32*r +: 32]);
        end
    end
endfunction

// ---------------------------------------------------------------------------
// S1: mask and count

reg [DATA_W-1:0] s1_data_reg = {DATA_W{1'b0}};
reg [SEG_W-1:0]  s1_miss_reg = {SEG_W{1'b0}};
reg              s1_empty_reg = 1'b0;
reg              s1_first_reg = 1'b0;
reg              s1_last_reg = 1'b0;
reg              s1_valid_reg = 1'b0;

reg [DATA_W-1:0] in_masked;
reg [SEG_W:0]    in_zeros;
integer b;

always @* begin
    in_zeros = {SEG_W+1{1'b0}};
    for (b = 0; b < BL; b = b + 1) begin
        in_masked[b*8 +: 8] = s_keep[b] ? s_data[b*8 +: 8] : 8'd0;
        in_zeros = in_zeros + {{SEG_W{1'b0}}, !s_keep[b]};
    end
end

always @(posedge clk) begin
    s1_valid_reg <= s_valid;
    if (s_valid) begin
        s1_data_reg <= in_masked;
        // BL missing bytes (keep = 0) is handled as a separate case
        s1_miss_reg <= in_zeros[SEG_W-1:0];
        s1_empty_reg <= in_zeros[SEG_W];
        s1_first_reg <= s_first;
        s1_last_reg <= s_last;
    end
    if (rst) begin
        s1_valid_reg <= 1'b0;
    end
end

// ---------------------------------------------------------------------------
// S2: data contribution

reg [31:0]      s2_q_reg = 32'd0;
reg [SEG_W-1:0] s2_miss_reg = {SEG_W{1'b0}};
reg             s2_empty_reg = 1'b0;
reg             s2_first_reg = 1'b0;
reg             s2_last_reg = 1'b0;
reg             s2_valid_reg = 1'b0;

wire [31:0] state_cur;

reg [31:0] state_reg = 32'hFFFFFFFF;

assign state_cur = s2_first_reg ? 32'hFFFFFFFF : state_reg;


always @(posedge clk) begin
    s2_valid_reg <= s1_valid_reg;
    if (s1_valid_reg) begin
        s2_q_reg <= mul_data(s1_data_reg);
        s2_miss_reg <= s1_miss_reg;
        s2_empty_reg <= s1_empty_reg;
        s2_first_reg <= s1_first_reg;
        s2_last_reg <= s1_last_reg;
    end
    if (rst) begin
        s2_valid_reg <= 1'b0;
    end
end

// ---------------------------------------------------------------------------
// S3: state register (the loop) and capture of the last beat's state

reg [31:0]      t0_state_reg = 32'd0;
reg [SEG_W-1:0] t0_miss_reg = {SEG_W{1'b0}};
reg             t0_valid_reg = 1'b0;

always @(posedge clk) begin
    t0_valid_reg <= s2_valid_reg && s2_last_reg;
    if (s2_valid_reg) begin
        state_reg <= mul_state(state_cur) ^ s2_q_reg;
        t0_state_reg <= s2_empty_reg ? state_cur : mul_state(state_cur) ^ s2_q_reg;
        t0_miss_reg <= s2_empty_reg ? {SEG_W{1'b0}} : s2_miss_reg;
    end
    if (rst) begin
        state_reg <= 32'hFFFFFFFF;
        t0_valid_reg <= 1'b0;
    end
end

// ---------------------------------------------------------------------------
// tail: run the register back over the missing trailing zero bytes

wire [31:0]      t_state [0:SEG_W];
wire [SEG_W-1:0] t_miss [0:SEG_W];
wire             t_valid [0:SEG_W];

assign t_state[0] = t0_state_reg;
assign t_miss[0] = t0_miss_reg;
assign t_valid[0] = t0_valid_reg;

genvar s;
generate
    for (s = 0; s < SEG_W; s = s + 1) begin : g_tail
        localparam [32*32-1:0] UROWS = unstep_rows(unstep_cols(1 << s));

        reg [31:0]      state_reg_s = 32'd0;
        reg [SEG_W-1:0] miss_reg_s = {SEG_W{1'b0}};
        reg             valid_reg_s = 1'b0;

        always @(posedge clk) begin
            valid_reg_s <= t_valid[s];
            if (t_valid[s]) begin
                state_reg_s <= t_miss[s][s] ? mul_unstep(t_state[s], UROWS) : t_state[s];
                miss_reg_s <= t_miss[s];
            end
            if (rst) begin
                valid_reg_s <= 1'b0;
            end
        end

        assign t_state[s+1] = state_reg_s;
        assign t_miss[s+1] = miss_reg_s;
        assign t_valid[s+1] = valid_reg_s;
    end
endgenerate

assign m_crc = ~t_state[SEG_W];
assign m_crc_valid = t_valid[SEG_W];

endmodule

`resetall
`default_nettype wire
