// DMA write engine: on-chip RAM -> host memory as posted MemWr TLPs.
//
// Descriptors (pcie_addr, ram_addr, len, ro, id) are queued, then split into
// MemWr TLPs that never exceed MPS (128 << cfg_max_payload bytes) and never
// cross an MPS-aligned (hence 4 KiB) boundary of the PCIe address: the first
// TLP of a descriptor runs up to the next MPS boundary, the following ones
// are full MPS TLPs, the last one takes the rest. A zero-length descriptor
// becomes a 1-DW MemWr with both byte enables 0 (a flush marker).
//
// Descriptors execute strictly in order: every TLP of descriptor N leaves
// before the first TLP of descriptor N+1. One status (id) per descriptor, a
// one-cycle pulse in descriptor order, one cycle after the handshake of the
// last beat of its last TLP on tx_wr_req.
//
// Pipeline:
//
//   desc FIFO -> splitter -> TLP register -> TLP command FIFO -----+
//                   |                                              v
//                   +-> RAM read command FIFO -> RAM reader -> word buffer
//                                                               -> assembler
//                                                               -> out skid
//
// The RAM reader fetches, per descriptor, the contiguous run of RAM words
// that holds its bytes (including the bytes of the first dword that precede
// the first byte, which become don't-care payload bytes masked by first BE),
// each word exactly once, as long as the word buffer has room for it (credit
// counting covers the one-cycle RAM latency and the registered read port).
// The assembler builds each TLP beat from a two-word window
// {buf[rd+1], buf[rd]} shifted right by the TLP's byte offset, and advances
// the window by 0, 1 or 2 words per beat; with the header on the sideband,
// TLPs and descriptors follow each other without bubbles.

`resetall
`timescale 1ns / 1ps
`default_nettype none

module dma_wr_engine #(
    // width of the TLP data path and the RAM port: 64, 128, 256 or 512
    parameter DATA_W = 64,
    // RAM byte address width
    parameter RAM_ADDR_W = 16,
    // descriptor length width (bytes)
    parameter LEN_W = 17,
    // descriptor id width
    parameter ID_W = 8,
    // descriptor FIFO depth (power of two, >= 2)
    parameter DESC_FIFO_DEPTH = 8
) (
    input  wire                                   clk,
    input  wire                                   rst,

    // descriptor in
    input  wire [63:0]                            s_desc_pcie_addr,
    input  wire [RAM_ADDR_W-1:0]                  s_desc_ram_addr,
    input  wire [LEN_W-1:0]                       s_desc_len,
    input  wire                                   s_desc_ro,
    input  wire [ID_W-1:0]                        s_desc_id,
    input  wire                                   s_desc_valid,
    output wire                                   s_desc_ready,

    // status out (one-cycle pulse per descriptor, in order, no ready)
    output wire [ID_W-1:0]                        m_status_id,
    output wire                                   m_status_valid,

    // RAM read port (beat address, data one cycle after rd_en)
    output wire [RAM_ADDR_W-$clog2(DATA_W/8)-1:0] m_ram_rd_addr,
    output wire                                   m_ram_rd_en,
    input  wire [DATA_W-1:0]                      s_ram_rd_data,

    // posted write TLP stream
    output wire [127:0]                           tx_wr_req_tlp_hdr,
    output wire [DATA_W-1:0]                      tx_wr_req_tlp_data,
    output wire [DATA_W/32-1:0]                   tx_wr_req_tlp_keep,
    output wire                                   tx_wr_req_tlp_valid,
    output wire                                   tx_wr_req_tlp_last,
    input  wire                                   tx_wr_req_tlp_ready,

    // configuration
    input  wire [2:0]                             cfg_max_payload,
    input  wire [15:0]                            cfg_requester_id,

    // statistics: one-cycle pulse per TLP issued
    output wire                                   stat_tlp_issued
);

// bytes per beat, dwords per beat
localparam BL = DATA_W / 8;
localparam SEG_W = $clog2(BL);
localparam DWL = DATA_W / 32;
localparam DWL_W = $clog2(DWL);
localparam WORD_ADDR_W = RAM_ADDR_W - SEG_W;

// working width for length arithmetic (>= 13 bits for 4096-byte TLPs)
localparam CW = (LEN_W > 13 ? LEN_W : 13) + 1;
// width of per-descriptor RAM word counts
localparam KW = (LEN_W > SEG_W + 3 ? LEN_W : SEG_W + 3) + 2;

localparam DF_AW = $clog2(DESC_FIFO_DEPTH);

localparam [KW-1:0] BL_M1_KW = {{KW-SEG_W{1'b0}}, {SEG_W{1'b1}}};
localparam [10:0] DWL_M1 = {{11-DWL_W{1'b0}}, {DWL_W{1'b1}}};
localparam [SEG_W+3:0] DATA_W_SH = {1'b1, {SEG_W+3{1'b0}}};

// TLP command FIFO and RAM read command FIFO
localparam TF_AW = 2;
localparam TF_DEPTH = 1 << TF_AW;
localparam RF_AW = 2;
localparam RF_DEPTH = 1 << RF_AW;

// word buffer between the RAM read port and the assembler
localparam WB_AW = 2;
localparam WB_DEPTH = 1 << WB_AW;

// beats per TLP: up to 1024 dwords
localparam NB_W = 11;

// check configuration
initial begin
    if (DATA_W != 64 && DATA_W != 128 && DATA_W != 256 && DATA_W != 512) begin
        $error("Error: DATA_W must be 64, 128, 256 or 512 (instance %m)");
        $finish;
    end
    if (RAM_ADDR_W <= SEG_W || RAM_ADDR_W > 32) begin
        $error("Error: RAM_ADDR_W must be larger than log2(DATA_W/8) and at most 32 (instance %m)");
        $finish;
    end
    if (LEN_W < 1 || LEN_W > 32) begin
        $error("Error: LEN_W must be 1..32 (instance %m)");
        $finish;
    end
    if (ID_W < 1) begin
        $error("Error: ID_W must be at least 1 (instance %m)");
        $finish;
    end
    if (DESC_FIFO_DEPTH < 2 || (DESC_FIFO_DEPTH & (DESC_FIFO_DEPTH - 1)) != 0) begin
        $error("Error: DESC_FIFO_DEPTH must be a power of two, at least 2 (instance %m)");
        $finish;
    end
end

// ---------------------------------------------------------------------------
// descriptor FIFO

reg [63:0]           df_pcie_addr_mem [0:DESC_FIFO_DEPTH-1];
reg [RAM_ADDR_W-1:0] df_ram_addr_mem [0:DESC_FIFO_DEPTH-1];
reg [LEN_W-1:0]      df_len_mem [0:DESC_FIFO_DEPTH-1];
reg                  df_ro_mem [0:DESC_FIFO_DEPTH-1];
reg [ID_W-1:0]       df_id_mem [0:DESC_FIFO_DEPTH-1];

reg [DF_AW:0] df_wr_ptr_reg = {DF_AW+1{1'b0}};
reg [DF_AW:0] df_rd_ptr_reg = {DF_AW+1{1'b0}};

wire df_full = df_wr_ptr_reg == (df_rd_ptr_reg ^ {1'b1, {DF_AW{1'b0}}});
wire df_empty = df_wr_ptr_reg == df_rd_ptr_reg;

wire [63:0]           df_pcie_addr = df_pcie_addr_mem[df_rd_ptr_reg[DF_AW-1:0]];
wire [RAM_ADDR_W-1:0] df_ram_addr = df_ram_addr_mem[df_rd_ptr_reg[DF_AW-1:0]];
wire [LEN_W-1:0]      df_len = df_len_mem[df_rd_ptr_reg[DF_AW-1:0]];
wire                  df_ro = df_ro_mem[df_rd_ptr_reg[DF_AW-1:0]];
wire [ID_W-1:0]       df_id = df_id_mem[df_rd_ptr_reg[DF_AW-1:0]];

assign s_desc_ready = !df_full;

wire df_push = s_desc_valid && !df_full;
wire df_pop;

always @(posedge clk) begin
    if (df_push) begin
        df_pcie_addr_mem[df_wr_ptr_reg[DF_AW-1:0]] <= s_desc_pcie_addr;
        df_ram_addr_mem[df_wr_ptr_reg[DF_AW-1:0]] <= s_desc_ram_addr;
        df_len_mem[df_wr_ptr_reg[DF_AW-1:0]] <= s_desc_len;
        df_ro_mem[df_wr_ptr_reg[DF_AW-1:0]] <= s_desc_ro;
        df_id_mem[df_wr_ptr_reg[DF_AW-1:0]] <= s_desc_id;
        df_wr_ptr_reg <= df_wr_ptr_reg + 1'b1;
    end
    if (df_pop) begin
        df_rd_ptr_reg <= df_rd_ptr_reg + 1'b1;
    end
    if (rst) begin
        df_wr_ptr_reg <= {DF_AW+1{1'b0}};
        df_rd_ptr_reg <= {DF_AW+1{1'b0}};
    end
end

// ---------------------------------------------------------------------------
// RAM read command FIFO: per descriptor, first RAM word and word count

reg [WORD_ADDR_W-1:0] rf_base_mem [0:RF_DEPTH-1];
reg [KW-1:0]          rf_count_mem [0:RF_DEPTH-1];
reg [RF_AW:0] rf_wr_ptr_reg = {RF_AW+1{1'b0}};
reg [RF_AW:0] rf_rd_ptr_reg = {RF_AW+1{1'b0}};

wire rf_full = rf_wr_ptr_reg == (rf_rd_ptr_reg ^ {1'b1, {RF_AW{1'b0}}});
wire rf_empty = rf_wr_ptr_reg == rf_rd_ptr_reg;
wire [WORD_ADDR_W-1:0] rf_base = rf_base_mem[rf_rd_ptr_reg[RF_AW-1:0]];
wire [KW-1:0]          rf_count = rf_count_mem[rf_rd_ptr_reg[RF_AW-1:0]];

// ---------------------------------------------------------------------------
// splitter: walks the current descriptor, one TLP per cycle

reg [63:0]           cur_pcie_addr_reg = 64'd0;
reg [RAM_ADDR_W-1:0] cur_ram_addr_reg = {RAM_ADDR_W{1'b0}};
reg [LEN_W-1:0]      cur_len_reg = {LEN_W{1'b0}};
reg                  cur_ro_reg = 1'b0;
reg [ID_W-1:0]       cur_id_reg = {ID_W{1'b0}};
reg                  cur_valid_reg = 1'b0;

// registered raw TLP (stage between splitter and TLP command FIFO)
reg [63:0]           tr_pcie_addr_reg = 64'd0;
reg [SEG_W-1:0]      tr_ram_lo_reg = {SEG_W{1'b0}};
reg [12:0]           tr_len_reg = 13'd0;
reg                  tr_zero_reg = 1'b0;
reg                  tr_last_reg = 1'b0;
reg                  tr_ro_reg = 1'b0;
reg [ID_W-1:0]       tr_id_reg = {ID_W{1'b0}};
reg                  tr_valid_reg = 1'b0;

wire tf_full;
wire tr_pop = tr_valid_reg && !tf_full;

// max payload size in bytes (encodings above 4096 B are reserved: clamp)
wire [2:0]  mps_sel = cfg_max_payload > 3'd5 ? 3'd5 : cfg_max_payload;
wire [12:0] mps_bytes = 13'd128 << mps_sel;
// bytes up to the next MPS boundary (MPS divides 4 KiB, so no 4 KiB crossing)
wire [12:0] sp_space = mps_bytes - ({1'b0, cur_pcie_addr_reg[11:0]} & (mps_bytes - 13'd1));
wire [CW-1:0] sp_len_ext = {{CW-LEN_W{1'b0}}, cur_len_reg};
wire [CW-1:0] sp_space_ext = {{CW-13{1'b0}}, sp_space};
wire sp_last = sp_len_ext <= sp_space_ext;
wire [12:0] sp_tlp_len = sp_last ? sp_len_ext[12:0] : sp_space;

wire [63:0] sp_tlp_len_ext = {51'd0, sp_tlp_len};

wire sp_emit = cur_valid_reg && (!tr_valid_reg || tr_pop);
wire sp_load = !df_empty && !rf_full && (!cur_valid_reg || (sp_emit && sp_last));
assign df_pop = sp_load;

// RAM words of the descriptor at the head of the FIFO: from the word holding
// the first byte of the first dword to the word holding the last byte
wire [RAM_ADDR_W-1:0] ld_ram_start = df_ram_addr - {{RAM_ADDR_W-2{1'b0}}, df_pcie_addr[1:0]};
wire [KW-1:0] ld_eff_len = (df_len == {LEN_W{1'b0}}) ? {{KW-1{1'b0}}, 1'b1} : {{KW-LEN_W{1'b0}}, df_len};
wire [KW-1:0] ld_span = {{KW-SEG_W{1'b0}}, ld_ram_start[SEG_W-1:0]} + {{KW-2{1'b0}}, df_pcie_addr[1:0]} + ld_eff_len;
wire [KW-1:0] ld_count = (ld_span + BL_M1_KW) >> SEG_W;

always @(posedge clk) begin
    if (sp_load) begin
        rf_base_mem[rf_wr_ptr_reg[RF_AW-1:0]] <= ld_ram_start[RAM_ADDR_W-1:SEG_W];
        rf_count_mem[rf_wr_ptr_reg[RF_AW-1:0]] <= ld_count;
    end
end

always @(posedge clk) begin
    if (tr_pop) begin
        tr_valid_reg <= 1'b0;
    end

    if (sp_emit) begin
        tr_pcie_addr_reg <= cur_pcie_addr_reg;
        tr_ram_lo_reg <= cur_ram_addr_reg[SEG_W-1:0];
        tr_len_reg <= sp_tlp_len;
        tr_zero_reg <= cur_len_reg == {LEN_W{1'b0}};
        tr_last_reg <= sp_last;
        tr_ro_reg <= cur_ro_reg;
        tr_id_reg <= cur_id_reg;
        tr_valid_reg <= 1'b1;

        cur_pcie_addr_reg <= cur_pcie_addr_reg + sp_tlp_len_ext;
        cur_ram_addr_reg <= cur_ram_addr_reg + sp_tlp_len_ext[RAM_ADDR_W-1:0];
        cur_len_reg <= cur_len_reg - sp_tlp_len_ext[LEN_W-1:0];
        if (sp_last) begin
            cur_valid_reg <= 1'b0;
        end
    end

    if (sp_load) begin
        cur_pcie_addr_reg <= df_pcie_addr;
        cur_ram_addr_reg <= df_ram_addr;
        cur_len_reg <= df_len;
        cur_ro_reg <= df_ro;
        cur_id_reg <= df_id;
        cur_valid_reg <= 1'b1;
    end

    if (rst) begin
        cur_valid_reg <= 1'b0;
        tr_valid_reg <= 1'b0;
    end
end

// ---------------------------------------------------------------------------
// TLP geometry and header (from the TLP register into the command FIFO)

wire [1:0]  tr_a10 = tr_pcie_addr_reg[1:0];
// a zero-length TLP reads (and sends) one don't-care byte
wire [12:0] tr_eff_len = tr_zero_reg ? 13'd1 : tr_len_reg;
// bytes from the start of the first dword to the last byte
// (at most 3 + 4096)
wire [12:0] tr_span = {11'd0, tr_a10} + tr_eff_len;
wire [10:0] tr_dw = tr_span[12:2] + {10'd0, tr_span[1:0] != 2'd0};
wire [1:0]  tr_end_off = tr_span[1:0];

wire [3:0] tr_first_mask = 4'b1111 << tr_a10;
wire [3:0] tr_last_mask = (tr_end_off == 2'd0) ? 4'b1111 : ~(4'b1111 << tr_end_off);
wire [3:0] tr_first_be = tr_zero_reg ? 4'b0000 :
                         (tr_dw == 11'd1) ? (tr_first_mask & tr_last_mask) : tr_first_mask;
wire [3:0] tr_last_be = (tr_zero_reg || tr_dw == 11'd1) ? 4'b0000 : tr_last_mask;

wire tr_4dw = tr_pcie_addr_reg[63:32] != 32'd0;

wire [31:0] tr_hdr_dw0 = {
    tr_4dw ? 3'b011 : 3'b010,   // Fmt: MemWr 4DW / 3DW with data
    5'b00000,                   // Type: MemWr
    1'b0,                       // T9
    3'b000,                     // TC
    1'b0,                       // T8
    1'b0,                       // Attr[2] IDO
    1'b0,                       // LN
    1'b0,                       // TH
    1'b0,                       // TD
    1'b0,                       // EP
    tr_ro_reg,                  // Attr[1] relaxed ordering
    1'b0,                       // Attr[0] no snoop
    2'b00,                      // AT
    tr_dw[9:0]                  // Length (1024 -> 0)
};
wire [31:0] tr_hdr_dw1 = {cfg_requester_id, 8'd0, tr_last_be, tr_first_be};
wire [31:0] tr_hdr_dw2 = tr_4dw ? tr_pcie_addr_reg[63:32] : {tr_pcie_addr_reg[31:2], 2'b00};
wire [31:0] tr_hdr_dw3 = tr_4dw ? {tr_pcie_addr_reg[31:2], 2'b00} : 32'd0;
wire [127:0] tr_hdr = {tr_hdr_dw0, tr_hdr_dw1, tr_hdr_dw2, tr_hdr_dw3};

// byte offset of payload byte 0 inside the first RAM word of the TLP
wire [SEG_W-1:0] tr_shift = tr_ram_lo_reg - {{SEG_W-2{1'b0}}, tr_a10};
// output beats
wire [NB_W-1:0] tr_beats = (tr_dw + DWL_M1) >> DWL_W;
wire [DWL_W-1:0] tr_dw_rem = tr_dw[DWL_W-1:0];
wire [DWL-1:0] tr_last_keep = (tr_dw_rem == {DWL_W{1'b0}}) ? {DWL{1'b1}} : ~({DWL{1'b1}} << tr_dw_rem);
// end of the TLP's bytes, relative to the window word of beat 0
wire [14:0] tr_end = {{15-SEG_W{1'b0}}, tr_shift} + {2'b00, tr_span};
// low two bits of floor(tr_end / BL) and ceil(tr_end / BL)
wire [1:0] tr_end_words_floor = tr_end[SEG_W+1:SEG_W];
wire [1:0] tr_end_words_ceil = tr_end[SEG_W+1:SEG_W] + {1'b0, tr_end[SEG_W-1:0] != {SEG_W{1'b0}}};
// the last beat needs the second window word
wire tr_need1_last = tr_end > ({{15-NB_W{1'b0}}, tr_beats} << SEG_W);
// window advance after the last beat: to the word of the next TLP's first
// byte, or past the descriptor's last word
wire [1:0] tr_adv = (tr_last_reg ? tr_end_words_ceil : tr_end_words_floor) - tr_beats[1:0] + 2'd1;

// ---------------------------------------------------------------------------
// TLP command FIFO

reg [127:0]      tf_hdr_mem [0:TF_DEPTH-1];
reg [SEG_W-1:0]  tf_shift_mem [0:TF_DEPTH-1];
reg [NB_W-1:0]   tf_last_beat_mem [0:TF_DEPTH-1];   // beats - 1 (timing: no subtract after the read)
reg [DWL-1:0]    tf_last_keep_mem [0:TF_DEPTH-1];
reg              tf_need1_last_mem [0:TF_DEPTH-1];
reg [1:0]        tf_adv_mem [0:TF_DEPTH-1];
reg              tf_desc_last_mem [0:TF_DEPTH-1];
reg [ID_W-1:0]   tf_id_mem [0:TF_DEPTH-1];

reg [TF_AW:0] tf_wr_ptr_reg = {TF_AW+1{1'b0}};
reg [TF_AW:0] tf_rd_ptr_reg = {TF_AW+1{1'b0}};

assign tf_full = tf_wr_ptr_reg == (tf_rd_ptr_reg ^ {1'b1, {TF_AW{1'b0}}});
wire tf_empty = tf_wr_ptr_reg == tf_rd_ptr_reg;

wire [127:0]     tc_hdr = tf_hdr_mem[tf_rd_ptr_reg[TF_AW-1:0]];
wire [SEG_W-1:0] tc_shift = tf_shift_mem[tf_rd_ptr_reg[TF_AW-1:0]];
wire [NB_W-1:0]  tc_last_beat = tf_last_beat_mem[tf_rd_ptr_reg[TF_AW-1:0]];
wire [DWL-1:0]   tc_last_keep = tf_last_keep_mem[tf_rd_ptr_reg[TF_AW-1:0]];
wire             tc_need1_last = tf_need1_last_mem[tf_rd_ptr_reg[TF_AW-1:0]];
wire [1:0]       tc_adv_last = tf_adv_mem[tf_rd_ptr_reg[TF_AW-1:0]];
wire             tc_desc_last = tf_desc_last_mem[tf_rd_ptr_reg[TF_AW-1:0]];
wire [ID_W-1:0]  tc_id = tf_id_mem[tf_rd_ptr_reg[TF_AW-1:0]];

wire tf_pop;

always @(posedge clk) begin
    if (tr_pop) begin
        tf_hdr_mem[tf_wr_ptr_reg[TF_AW-1:0]] <= tr_hdr;
        tf_shift_mem[tf_wr_ptr_reg[TF_AW-1:0]] <= tr_shift;
        tf_last_beat_mem[tf_wr_ptr_reg[TF_AW-1:0]] <= tr_beats - 1'b1;
        tf_last_keep_mem[tf_wr_ptr_reg[TF_AW-1:0]] <= tr_last_keep;
        tf_need1_last_mem[tf_wr_ptr_reg[TF_AW-1:0]] <= tr_need1_last;
        tf_adv_mem[tf_wr_ptr_reg[TF_AW-1:0]] <= tr_adv;
        tf_desc_last_mem[tf_wr_ptr_reg[TF_AW-1:0]] <= tr_last_reg;
        tf_id_mem[tf_wr_ptr_reg[TF_AW-1:0]] <= tr_id_reg;
        tf_wr_ptr_reg <= tf_wr_ptr_reg + 1'b1;
    end
    if (tf_pop) begin
        tf_rd_ptr_reg <= tf_rd_ptr_reg + 1'b1;
    end
    if (rst) begin
        tf_wr_ptr_reg <= {TF_AW+1{1'b0}};
        tf_rd_ptr_reg <= {TF_AW+1{1'b0}};
    end
end

// ---------------------------------------------------------------------------
// RAM reader and word buffer

reg [DATA_W-1:0] wb_mem [0:WB_DEPTH-1];
reg [WB_AW-1:0] wb_wr_ptr_reg = {WB_AW{1'b0}};
reg [WB_AW-1:0] wb_rd_ptr_reg = {WB_AW{1'b0}};
reg [WB_AW:0]   wb_count_reg = {WB_AW+1{1'b0}};

reg [WORD_ADDR_W-1:0] ram_rd_addr_reg = {WORD_ADDR_W{1'b0}};
reg                   ram_rd_en_reg = 1'b0;
reg                   ram_rd_data_valid_reg = 1'b0;

reg [WORD_ADDR_W-1:0] rd_addr_reg = {WORD_ADDR_W{1'b0}};
reg [KW-1:0]          rd_count_reg = {KW{1'b0}};
reg                   rd_active_reg = 1'b0;

assign m_ram_rd_addr = ram_rd_addr_reg;
assign m_ram_rd_en = ram_rd_en_reg;

// words consumed by the assembler this cycle
wire [1:0] asm_pop_n;

// Words in the buffer after this cycle, and the reader's credit (those
// plus the word being read, below WB_DEPTH): both computed from registers
// for each number of words the assembler may take this cycle, and
// asm_pop_n only picks one. The assembler's fire comes late (the transfer
// FIFO's fields, compares), and with an adder and a compare behind it this
// was the engine's deepest path. (The same arithmetic, wrap included.)
wire [WB_AW+1:0] after_if [0:3];   // [n]: the words left if it takes n
wire [3:0] rd_credit_if;           // [n]: the credit then
genvar ci;
generate
    for (ci = 0; ci < 4; ci = ci + 1) begin : g_credit
        assign after_if[ci] = {1'b0, wb_count_reg} + {{WB_AW+1{1'b0}}, ram_rd_data_valid_reg}
            - ci[WB_AW+1:0];
        wire [WB_AW+2:0] ahead = {1'b0, after_if[ci]} + {{WB_AW+2{1'b0}}, ram_rd_en_reg};
        assign rd_credit_if[ci] = ahead < WB_DEPTH;
    end
endgenerate
// (its top bit, the wrap, matters only to the credit)
/* verilator lint_off UNUSEDSIGNAL */
wire [WB_AW+1:0] wb_count_pick = after_if[asm_pop_n];
/* verilator lint_on UNUSEDSIGNAL */
wire [WB_AW:0] wb_count_after = wb_count_pick[WB_AW:0];
wire rd_credit = rd_credit_if[asm_pop_n];

wire rd_issue_cur = rd_active_reg && rd_credit;
wire rd_issue_new = !rd_active_reg && !rf_empty && rd_credit;
wire rf_pop = rd_issue_new;

always @(posedge clk) begin
    ram_rd_en_reg <= 1'b0;
    ram_rd_data_valid_reg <= ram_rd_en_reg;

    if (rd_issue_cur) begin
        ram_rd_addr_reg <= rd_addr_reg;
        ram_rd_en_reg <= 1'b1;
        rd_addr_reg <= rd_addr_reg + 1'b1;
        rd_count_reg <= rd_count_reg - 1'b1;
        if (rd_count_reg == {{KW-1{1'b0}}, 1'b1}) begin
            rd_active_reg <= 1'b0;
        end
    end else if (rd_issue_new) begin
        ram_rd_addr_reg <= rf_base;
        ram_rd_en_reg <= 1'b1;
        rd_addr_reg <= rf_base + 1'b1;
        rd_count_reg <= rf_count - 1'b1;
        rd_active_reg <= rf_count != {{KW-1{1'b0}}, 1'b1};
    end

    if (ram_rd_data_valid_reg) begin
        wb_mem[wb_wr_ptr_reg] <= s_ram_rd_data;
        wb_wr_ptr_reg <= wb_wr_ptr_reg + 1'b1;
    end
    wb_rd_ptr_reg <= wb_rd_ptr_reg + asm_pop_n[WB_AW-1:0];
    wb_count_reg <= wb_count_after;

    if (rst) begin
        ram_rd_en_reg <= 1'b0;
        ram_rd_data_valid_reg <= 1'b0;
        rd_active_reg <= 1'b0;
        wb_wr_ptr_reg <= {WB_AW{1'b0}};
        wb_rd_ptr_reg <= {WB_AW{1'b0}};
        wb_count_reg <= {WB_AW+1{1'b0}};
    end
end

always @(posedge clk) begin
    if (rf_pop) begin
        rf_rd_ptr_reg <= rf_rd_ptr_reg + 1'b1;
    end
    if (sp_load) begin
        rf_wr_ptr_reg <= rf_wr_ptr_reg + 1'b1;
    end
    if (rst) begin
        rf_wr_ptr_reg <= {RF_AW+1{1'b0}};
        rf_rd_ptr_reg <= {RF_AW+1{1'b0}};
    end
end

// ---------------------------------------------------------------------------
// assembler

reg [NB_W-1:0] asm_beat_reg = {NB_W{1'b0}};

wire out_ready_int;

wire [DATA_W-1:0] win0 = wb_mem[wb_rd_ptr_reg];
wire [DATA_W-1:0] win1 = wb_mem[wb_rd_ptr_reg + 1'b1];

wire asm_last_beat = asm_beat_reg == tc_last_beat;
wire asm_need1 = asm_last_beat ? tc_need1_last : (tc_shift != {SEG_W{1'b0}});
wire asm_have0 = wb_count_reg != {WB_AW+1{1'b0}};
wire asm_have1 = wb_count_reg > {{WB_AW{1'b0}}, 1'b1};
wire asm_fire = out_ready_int && !tf_empty && asm_have0 && (asm_have1 || !asm_need1);

assign asm_pop_n = !asm_fire ? 2'd0 : (asm_last_beat ? tc_adv_last : 2'd1);
assign tf_pop = asm_fire && asm_last_beat;

// {win1, win0} >> 8 * shift, low DATA_W bits
wire [SEG_W+3:0] asm_rsh = {1'b0, tc_shift, 3'b000};
wire [SEG_W+3:0] asm_lsh = DATA_W_SH - asm_rsh;
wire [DATA_W-1:0] asm_data = (win0 >> asm_rsh) | (win1 << asm_lsh);

always @(posedge clk) begin
    if (asm_fire) begin
        asm_beat_reg <= asm_last_beat ? {NB_W{1'b0}} : asm_beat_reg + 1'b1;
    end
    if (rst) begin
        asm_beat_reg <= {NB_W{1'b0}};
    end
end

// ---------------------------------------------------------------------------
// output register with skid buffer (registered ready towards the assembler)

wire            out_desc_last;
wire [ID_W-1:0] out_id;

axis_register #(.WIDTH(128 + DATA_W + DWL + 2 + ID_W)) out_reg (
    .clk(clk),
    .rst(rst),
    .s_data({tc_hdr, asm_data, asm_last_beat ? tc_last_keep : {DWL{1'b1}},
             asm_last_beat, asm_last_beat && tc_desc_last, tc_id}),
    .s_valid(asm_fire),
    .s_ready(out_ready_int),
    .m_data({tx_wr_req_tlp_hdr, tx_wr_req_tlp_data, tx_wr_req_tlp_keep,
             tx_wr_req_tlp_last, out_desc_last, out_id}),
    .m_valid(tx_wr_req_tlp_valid),
    .m_ready(tx_wr_req_tlp_ready)
);

reg [ID_W-1:0] status_id_reg = {ID_W{1'b0}};
reg            status_valid_reg = 1'b0;
reg            stat_tlp_issued_reg = 1'b0;

assign m_status_id = status_id_reg;
assign m_status_valid = status_valid_reg;
assign stat_tlp_issued = stat_tlp_issued_reg;

// status and statistics, one cycle after the handshake
always @(posedge clk) begin
    status_valid_reg <= tx_wr_req_tlp_valid && tx_wr_req_tlp_ready && tx_wr_req_tlp_last && out_desc_last;
    status_id_reg <= out_id;
    stat_tlp_issued_reg <= tx_wr_req_tlp_valid && tx_wr_req_tlp_ready && tx_wr_req_tlp_last;

    if (rst) begin
        status_valid_reg <= 1'b0;
        stat_tlp_issued_reg <= 1'b0;
    end
end

endmodule

`resetall
`default_nettype wire
