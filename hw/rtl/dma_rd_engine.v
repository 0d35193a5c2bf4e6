// DMA read engine: host memory -> on-chip RAM via MemRd requests and CplD.
//
// Descriptors (pcie_addr, ram_addr, len, id) are queued, then split into
// MemRd requests that never exceed MRRS (128 << cfg_max_read_req bytes) and
// never cross an MRRS-aligned (hence 4 KiB) boundary: dword-granular, with
// first/last byte enables for the exact byte range; a zero-length descriptor
// becomes a 1-DW read with both byte enables 0 (a flush). Every request takes
// a tag from a free list; the tag table remembers the RAM address, the PCIe
// address offset, the byte count still expected and the descriptor.
//
// Completions (split at any RCB, tags in any order, one TLP at a time) are
// checked against the tag table: a successful completion must carry the
// byte count still expected for its tag (so completions of a tag must come
// in address order, as PCIe requires) and the matching lower address; its
// payload is byte-shifted from the dword-packed TLP payload to the RAM
// alignment and written with byte strobes that cover exactly the bytes this
// completion carries. A tag is freed when its byte count reaches zero or on
// an error completion (UR, CA, other status, poisoned) or a malformed one
// (wrong byte count, lower address or length, no data): its data is
// dropped and the descriptor gets error 1 (UR), 2 (CA) or 3 (other). A
// completion whose beats disagree with its Length (beat count, keep) is
// written within its byte range and also gives error 3. A zero-length read
// is finished by any successful completion of its tag (data ignored).
// Completions with an unknown tag (or not a completion at all) are dropped
// and counted on stat_rd_err only; every error TLP pulses stat_rd_err once.
//
// Status: one per descriptor, in descriptor order, once all its requests
// are issued and all their tags are finished and every byte is written to
// the RAM (the pulse comes at least one cycle after the last RAM write). The
// first error seen wins. There is no completion timeout: a lost completion
// stalls its descriptor and every later one.
//
// Completion path (rx_cpl_tlp_ready is registered and stays high unless the
// RAM write port needs an extra cycle, see below):
//
//   rx_cpl -> input skid -> header check, tag table, byte masks (S1 register)
//          -> shift to RAM alignment, merge carried partial words (S2)
//          -> RAM write port (registered)
//
// When the RAM offset of a completion is not a multiple of DATA_W/8, each
// beat fills the end of one RAM word and the start of the next, so its
// trailing bytes are carried to the next beat. Between completions of the
// same tag the carried word is kept per tag (completions of a tag are
// contiguous in RAM), so interleaved completions of many tags need no extra
// write cycles. Only the tail of a request's last completion needs a write
// of its own, merged into a later write of the same word if one comes next,
// else done in an idle input cycle or with one cycle of back-pressure: at
// most one extra cycle per read request.

`resetall
`timescale 1ns / 1ps
`default_nettype none

module dma_rd_engine #(
    // width of the TLP data path and the RAM port: 64, 128, 256 or 512
    parameter DATA_W = 64,
    // RAM byte address width
    parameter RAM_ADDR_W = 16,
    // descriptor length width (bytes)
    parameter LEN_W = 17,
    // descriptor id width
    parameter ID_W = 8,
    // tag width: up to 2**TAG_W outstanding read requests (1..8)
    parameter TAG_W = 5,
    // descriptor FIFO depth (power of two, >= 2)
    parameter DESC_FIFO_DEPTH = 8,
    // descriptors in flight (power of two, >= 2)
    parameter DESC_TABLE_SIZE = 1 << TAG_W
) (
    input  wire                                   clk,
    input  wire                                   rst,

    // descriptor in
    input  wire [63:0]                            s_desc_pcie_addr,
    input  wire [RAM_ADDR_W-1:0]                  s_desc_ram_addr,
    input  wire [LEN_W-1:0]                       s_desc_len,
    input  wire [ID_W-1:0]                        s_desc_id,
    input  wire                                   s_desc_valid,
    output wire                                   s_desc_ready,

    // status out (one-cycle pulse per descriptor, in order, no ready)
    output wire [ID_W-1:0]                        m_status_id,
    output wire [3:0]                             m_status_error,
    output wire                                   m_status_valid,

    // read request TLPs (header only, one beat)
    output wire [127:0]                           tx_rd_req_tlp_hdr,
    output wire                                   tx_rd_req_tlp_valid,
    input  wire                                   tx_rd_req_tlp_ready,

    // completion TLPs
    input  wire [127:0]                           rx_cpl_tlp_hdr,
    input  wire [DATA_W-1:0]                      rx_cpl_tlp_data,
    input  wire [DATA_W/32-1:0]                   rx_cpl_tlp_keep,
    input  wire                                   rx_cpl_tlp_valid,
    input  wire                                   rx_cpl_tlp_last,
    output wire                                   rx_cpl_tlp_ready,

    // RAM write port (beat address, byte strobes)
    output wire [RAM_ADDR_W-$clog2(DATA_W/8)-1:0] m_ram_wr_addr,
    output wire [DATA_W-1:0]                      m_ram_wr_data,
    output wire [DATA_W/8-1:0]                    m_ram_wr_strb,
    output wire                                   m_ram_wr_en,

    // configuration
    input  wire [2:0]                             cfg_max_read_req,
    input  wire [15:0]                            cfg_requester_id,

    // statistics: one-cycle pulses
    output wire                                   stat_rd_req,
    output wire                                   stat_rd_err
);

localparam BL = DATA_W / 8;
localparam SEG_W = $clog2(BL);
localparam DWL = DATA_W / 32;
localparam DWL_W = $clog2(DWL);
localparam WORD_ADDR_W = RAM_ADDR_W - SEG_W;

localparam NTAGS = 1 << TAG_W;
localparam DT_W = $clog2(DESC_TABLE_SIZE);
// per-descriptor request counters (modulo; at most NTAGS outstanding)
localparam CNT_W = TAG_W + 1;

localparam CW = (LEN_W > 13 ? LEN_W : 13) + 1;
localparam DF_AW = $clog2(DESC_FIFO_DEPTH);

// beats per TLP: up to 1024 dwords, saturating counter for malformed TLPs
localparam NB_W = 11;

localparam [10:0] DWL_M1 = {{11-DWL_W{1'b0}}, {DWL_W{1'b1}}};
localparam [SEG_W+3:0] DATA_W_SH = {1'b1, {SEG_W+3{1'b0}}};
localparam [SEG_W:0] BL_SH = {1'b1, {SEG_W{1'b0}}};
localparam [12:0] BL_13 = {{12-SEG_W{1'b0}}, 1'b1, {SEG_W{1'b0}}};

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
    if (TAG_W < 1 || TAG_W > 8) begin
        $error("Error: TAG_W must be 1..8 (8-bit PCIe tags) (instance %m)");
        $finish;
    end
    if (DESC_FIFO_DEPTH < 2 || (DESC_FIFO_DEPTH & (DESC_FIFO_DEPTH - 1)) != 0) begin
        $error("Error: DESC_FIFO_DEPTH must be a power of two, at least 2 (instance %m)");
        $finish;
    end
    if (DESC_TABLE_SIZE < 2 || (DESC_TABLE_SIZE & (DESC_TABLE_SIZE - 1)) != 0) begin
        $error("Error: DESC_TABLE_SIZE must be a power of two, at least 2 (instance %m)");
        $finish;
    end
end

// ---------------------------------------------------------------------------
// descriptor FIFO

reg [63:0]           df_pcie_addr_mem [0:DESC_FIFO_DEPTH-1];
reg [RAM_ADDR_W-1:0] df_ram_addr_mem [0:DESC_FIFO_DEPTH-1];
reg [LEN_W-1:0]      df_len_mem [0:DESC_FIFO_DEPTH-1];
reg [ID_W-1:0]       df_id_mem [0:DESC_FIFO_DEPTH-1];

reg [DF_AW:0] df_wr_ptr_reg = {DF_AW+1{1'b0}};
reg [DF_AW:0] df_rd_ptr_reg = {DF_AW+1{1'b0}};

wire df_full = df_wr_ptr_reg == (df_rd_ptr_reg ^ {1'b1, {DF_AW{1'b0}}});
wire df_empty = df_wr_ptr_reg == df_rd_ptr_reg;

wire [63:0]           df_pcie_addr = df_pcie_addr_mem[df_rd_ptr_reg[DF_AW-1:0]];
wire [RAM_ADDR_W-1:0] df_ram_addr = df_ram_addr_mem[df_rd_ptr_reg[DF_AW-1:0]];
wire [LEN_W-1:0]      df_len = df_len_mem[df_rd_ptr_reg[DF_AW-1:0]];
wire [ID_W-1:0]       df_id = df_id_mem[df_rd_ptr_reg[DF_AW-1:0]];

assign s_desc_ready = !df_full;

wire df_push = s_desc_valid && !df_full;
wire df_pop;

always @(posedge clk) begin
    if (df_push) begin
        df_pcie_addr_mem[df_wr_ptr_reg[DF_AW-1:0]] <= s_desc_pcie_addr;
        df_ram_addr_mem[df_wr_ptr_reg[DF_AW-1:0]] <= s_desc_ram_addr;
        df_len_mem[df_wr_ptr_reg[DF_AW-1:0]] <= s_desc_len;
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
// descriptor table: descriptors in flight, retired in order

reg [DT_W:0] dt_wr_ptr_reg = {DT_W+1{1'b0}};
reg [DT_W:0] dt_rd_ptr_reg = {DT_W+1{1'b0}};

wire dt_full = dt_wr_ptr_reg == (dt_rd_ptr_reg ^ {1'b1, {DT_W{1'b0}}});
wire dt_empty = dt_wr_ptr_reg == dt_rd_ptr_reg;

// written by the request issuer (its requests counted per slot, below)
reg [ID_W-1:0]  dt_id_mem [0:DESC_TABLE_SIZE-1];
// per slot (registers, see below): every request issued and finished
wire [DESC_TABLE_SIZE-1:0]   dt_complete;
wire [DESC_TABLE_SIZE*4-1:0] dt_err_flat;
// the head as one-hot beside the pointer, so that whether it is complete
// is an AND-OR of registers and not a wide mux behind the pointer (the
// retire loop, pointer -> head done -> pointer, was the routed critical
// path of the 128-bit build)
reg [DESC_TABLE_SIZE-1:0] dt_head_oh_reg = {{DESC_TABLE_SIZE-1{1'b0}}, 1'b1};

// ---------------------------------------------------------------------------
// tag table

// Per tag, where the next completion of the request must start, kept in the
// form the header check wants (timing: deriving it from the request's start
// and length in the header cycle put two carry chains in series there):
// its RAM byte address, its byte offset inside the request (modulo 4096)
// and its expected Lower Address (bits 6:0 of its bus address); each moves
// on by the bytes a completion delivers.
reg [NTAGS-1:0]      tag_active_reg = {NTAGS{1'b0}};
reg [RAM_ADDR_W-1:0] tag_ram_mem [0:NTAGS-1];
reg [11:0]           tag_off_mem [0:NTAGS-1];
reg [6:0]            tag_exp_la_mem [0:NTAGS-1];
reg [12:0]           tag_rem_mem [0:NTAGS-1];
reg [DT_W-1:0]       tag_slot_mem [0:NTAGS-1];
reg                  tag_zero_mem [0:NTAGS-1];

// lowest free tag
wire [TAG_W-1:0] free_tag;
wire             free_tag_valid;

priority_encoder #(.WIDTH(NTAGS), .OUT_W(TAG_W)) free_tag_enc (
    .in(~tag_active_reg),
    .valid(free_tag_valid),
    .index(free_tag)
);

// ---------------------------------------------------------------------------
// request issuer

reg [63:0]           cur_pcie_addr_reg = 64'd0;
reg [RAM_ADDR_W-1:0] cur_ram_addr_reg = {RAM_ADDR_W{1'b0}};
reg [LEN_W-1:0]      cur_len_reg = {LEN_W{1'b0}};
reg [DT_W-1:0]       cur_slot_reg = {DT_W{1'b0}};
reg                  cur_valid_reg = 1'b0;

wire req_ready_int;

// The next request's size is computed from the current address and length
// in one cycle and registered; the header is built from the registered
// size in the next (timing: the MRRS split, the size, the byte enables and
// the header were one 20-level path). A request issues only when the
// registered size belongs to the current address and length, i.e. not in
// the cycle after they changed: at most one request every two cycles, no
// more than a 3-4 DW request takes on the link anyway.
wire [2:0]  mrrs_sel = cfg_max_read_req > 3'd5 ? 3'd5 : cfg_max_read_req;
wire [12:0] mrrs_bytes = 13'd128 << mrrs_sel;
wire [12:0] rq_space = mrrs_bytes - ({1'b0, cur_pcie_addr_reg[11:0]} & (mrrs_bytes - 13'd1));
wire [CW-1:0] rq_len_ext = {{CW-LEN_W{1'b0}}, cur_len_reg};
wire [CW-1:0] rq_space_ext = {{CW-13{1'b0}}, rq_space};
wire rq_last_next = rq_len_ext <= rq_space_ext;
reg rq_last_reg = 1'b0;
reg [12:0] rq_len_reg = 13'd0;
reg rq_zero_reg = 1'b0;
reg rq_sized_reg = 1'b0;        // rq_len_reg, rq_last_reg, rq_zero_reg describe cur_*
wire [63:0] rq_len_64 = {51'd0, rq_len_reg};

wire rq_issue = cur_valid_reg && rq_sized_reg && free_tag_valid && req_ready_int;
wire rq_load = !df_empty && !dt_full && (!cur_valid_reg || (rq_issue && rq_last_reg));
assign df_pop = rq_load;

// request header
wire [1:0]  rq_a10 = cur_pcie_addr_reg[1:0];
wire [12:0] rq_eff_len = rq_zero_reg ? 13'd1 : rq_len_reg;
wire [12:0] rq_span = {11'd0, rq_a10} + rq_eff_len;
wire [10:0] rq_dw = rq_span[12:2] + {10'd0, rq_span[1:0] != 2'd0};
wire [3:0]  rq_first_mask = 4'b1111 << rq_a10;
wire [3:0]  rq_last_mask = (rq_span[1:0] == 2'd0) ? 4'b1111 : ~(4'b1111 << rq_span[1:0]);
wire [3:0]  rq_first_be = rq_zero_reg ? 4'b0000 :
                          (rq_dw == 11'd1) ? (rq_first_mask & rq_last_mask) : rq_first_mask;
wire [3:0]  rq_last_be = (rq_zero_reg || rq_dw == 11'd1) ? 4'b0000 : rq_last_mask;
wire        rq_4dw = cur_pcie_addr_reg[63:32] != 32'd0;

wire [7:0] rq_tag8;
generate
    if (TAG_W < 8) begin : g_tag_pad
        assign rq_tag8 = {{8-TAG_W{1'b0}}, free_tag};
    end else begin : g_tag_full
        assign rq_tag8 = free_tag;
    end
endgenerate

wire [31:0] rq_hdr_dw0 = {
    rq_4dw ? 3'b001 : 3'b000,   // Fmt: MemRd 4DW / 3DW, no data
    5'b00000,                   // Type: MemRd
    1'b0,                       // T9
    3'b000,                     // TC
    1'b0,                       // T8
    1'b0,                       // Attr[2] IDO
    1'b0,                       // LN
    1'b0,                       // TH
    1'b0,                       // TD
    1'b0,                       // EP
    2'b00,                      // Attr[1:0]
    2'b00,                      // AT
    rq_dw[9:0]                  // Length (1024 -> 0)
};
wire [31:0] rq_hdr_dw1 = {cfg_requester_id, rq_tag8, rq_last_be, rq_first_be};
wire [31:0] rq_hdr_dw2 = rq_4dw ? cur_pcie_addr_reg[63:32] : {cur_pcie_addr_reg[31:2], 2'b00};
wire [31:0] rq_hdr_dw3 = rq_4dw ? {cur_pcie_addr_reg[31:2], 2'b00} : 32'd0;
wire [127:0] rq_hdr = {rq_hdr_dw0, rq_hdr_dw1, rq_hdr_dw2, rq_hdr_dw3};

always @(posedge clk) begin
    if (rq_issue) begin
        cur_pcie_addr_reg <= cur_pcie_addr_reg + rq_len_64;
        cur_ram_addr_reg <= cur_ram_addr_reg + rq_len_64[RAM_ADDR_W-1:0];
        cur_len_reg <= cur_len_reg - rq_len_64[LEN_W-1:0];
        if (rq_last_reg) begin
            cur_valid_reg <= 1'b0;
        end
    end

    rq_last_reg <= rq_last_next;
    rq_len_reg <= rq_last_next ? rq_len_ext[12:0] : rq_space;
    rq_zero_reg <= cur_len_reg == {LEN_W{1'b0}};
    rq_sized_reg <= cur_valid_reg && !rq_issue && !rq_load;

    if (rq_load) begin
        cur_pcie_addr_reg <= df_pcie_addr;
        cur_ram_addr_reg <= df_ram_addr;
        cur_len_reg <= df_len;
        cur_slot_reg <= dt_wr_ptr_reg[DT_W-1:0];
        cur_valid_reg <= 1'b1;
        dt_id_mem[dt_wr_ptr_reg[DT_W-1:0]] <= df_id;
        dt_wr_ptr_reg <= dt_wr_ptr_reg + 1'b1;
    end

    if (rst) begin
        cur_valid_reg <= 1'b0;
        rq_sized_reg <= 1'b0;
        dt_wr_ptr_reg <= {DT_W+1{1'b0}};
    end
end

// request output register with skid buffer

reg         stat_rd_req_reg = 1'b0;

axis_register #(.WIDTH(128)) req_reg (
    .clk(clk),
    .rst(rst),
    .s_data(rq_hdr),
    .s_valid(rq_issue),
    .s_ready(req_ready_int),
    .m_data(tx_rd_req_tlp_hdr),
    .m_valid(tx_rd_req_tlp_valid),
    .m_ready(tx_rd_req_tlp_ready)
);

assign stat_rd_req = stat_rd_req_reg;

always @(posedge clk) begin
    stat_rd_req_reg <= tx_rd_req_tlp_valid && tx_rd_req_tlp_ready;
    if (rst) begin
        stat_rd_req_reg <= 1'b0;
    end
end

// ---------------------------------------------------------------------------
// completion input skid buffer (registered rx_cpl_tlp_ready)

wire s1_ready;

wire [127:0]      s0_hdr;
wire [DATA_W-1:0] s0_data;
wire [DWL-1:0]    s0_keep;
wire              s0_last;
wire              s0_valid;

axis_register #(.WIDTH(128 + DATA_W + DWL + 1)) cpl_reg (
    .clk(clk),
    .rst(rst),
    .s_data({rx_cpl_tlp_hdr, rx_cpl_tlp_data, rx_cpl_tlp_keep, rx_cpl_tlp_last}),
    .s_valid(rx_cpl_tlp_valid),
    .s_ready(rx_cpl_tlp_ready),
    .m_data({s0_hdr, s0_data, s0_keep, s0_last}),
    .m_valid(s0_valid),
    .m_ready(s1_ready)
);

// ---------------------------------------------------------------------------
// completion header decode and tag lookup (first beat of a TLP)

reg s0_in_tlp_reg = 1'b0;
wire s0_first = !s0_in_tlp_reg;
wire s1_load = s0_valid && s1_ready;

wire [2:0]  h_fmt = s0_hdr[127:125];
wire [4:0]  h_type = s0_hdr[124:120];
wire [9:0]  h_len10 = s0_hdr[105:96];
wire [2:0]  h_status = s0_hdr[79:77];
wire [11:0] h_bc12 = s0_hdr[75:64];
wire [7:0]  h_tag8 = s0_hdr[47:40];
wire [6:0]  h_la = s0_hdr[38:32];
wire        h_ep = s0_hdr[110];

// header fields not checked: TC, attributes, TD, AT, completer ID, BCM,
// requester ID (the endpoint routes completions by ID), DW3
wire unused_hdr_bits = ^{s0_hdr[119:111], s0_hdr[109:106], s0_hdr[95:80],
                         s0_hdr[76], s0_hdr[63:48], s0_hdr[39], s0_hdr[31:0]};

wire h_is_cpl = (h_type == 5'b01010) && (h_fmt == 3'b000 || h_fmt == 3'b010);
wire h_has_data = h_fmt == 3'b010;
wire [TAG_W-1:0] h_tag = h_tag8[TAG_W-1:0];
wire h_known = h_is_cpl && ((h_tag8 >> TAG_W) == 8'd0) && tag_active_reg[h_tag];

wire [RAM_ADDR_W-1:0] t_ram = tag_ram_mem[h_tag];
wire [12:0]           t_rem = tag_rem_mem[h_tag];
wire [DT_W-1:0]       t_slot = tag_slot_mem[h_tag];
wire                  t_zero = tag_zero_mem[h_tag];

// byte offset of this completion's first byte inside the request (< 4096)
wire [11:0] h_off = tag_off_mem[h_tag];
wire [6:0]  h_exp_la = tag_exp_la_mem[h_tag];
wire [12:0] h_bc = {h_bc12 == 12'd0, h_bc12};
wire [10:0] h_len_dw = {h_len10 == 10'd0, h_len10};
// payload bytes from the lower address to the end of the payload
wire [12:0] h_len_b = {h_len_dw, 2'b00};
wire [12:0] h_avail = h_len_b - {11'd0, h_la[1:0]};
wire [12:0] h_span = {11'd0, h_la[1:0]} + h_bc;
// h_avail >= h_bc, said without the subtract (neither side wraps: at
// most 4,096 and 4,099), so the beat mask below is one adder and one
// compare from the header, not three adders and two compares
wire        h_final = h_len_b >= h_span;
wire [12:0] h_this = h_final ? h_bc : h_avail;
wire [10:0] h_dw_need = h_span[12:2] + {10'd0, h_span[1:0] != 2'd0};
wire h_ok = h_has_data && (h_bc == t_rem) && (h_la == h_exp_la) && (!h_final || h_len_dw == h_dw_need);

// RAM byte address of payload byte 0 (the start of the first dword)
wire [RAM_ADDR_W-1:0] h_ram_base = t_ram - {{RAM_ADDR_W-2{1'b0}}, h_la[1:0]};
wire [RAM_ADDR_W-1:0] h_this_ram;
generate
    if (RAM_ADDR_W > 13) begin : g_this_ext
        assign h_this_ram = {{RAM_ADDR_W-13{1'b0}}, h_this};
    end else begin : g_this_trunc
        assign h_this_ram = h_this[RAM_ADDR_W-1:0];
    end
endgenerate
// valid payload bytes: [lo, hi); hi = lo + h_this, which is h_span for
// the final completion and the payload's end otherwise
wire [12:0] h_hi = h_final ? h_span : h_len_b;

wire [NB_W-1:0] h_beats = h_has_data ? ((h_len_dw + DWL_M1) >> DWL_W) : {{NB_W-1{1'b0}}, 1'b1};
wire [DWL_W-1:0] h_dw_rem = h_len_dw[DWL_W-1:0];
wire [DWL-1:0] h_last_keep = !h_has_data ? {DWL{1'b0}} :
                             (h_dw_rem == {DWL_W{1'b0}}) ? {DWL{1'b1}} : ~({DWL{1'b1}} << h_dw_rem);

wire [3:0] h_status_err = (h_status == 3'b001) ? 4'd1 : (h_status == 3'b100) ? 4'd2 : 4'd3;

// classification
reg        h_drop;
reg        h_fin;
reg [3:0]  h_err;
reg        h_upd;      // update the tag's remaining byte count
reg        h_free;     // free the tag

always @* begin
    h_drop = 1'b1;
    h_fin = 1'b1;
    h_err = 4'd0;
    h_upd = 1'b0;
    h_free = 1'b0;
    if (!h_known) begin
        // unknown tag: no descriptor to charge, counted on stat_rd_err
        h_fin = 1'b0;
        h_err = 4'd3;
    end else if (h_status != 3'b000) begin
        h_err = h_status_err;
        h_free = 1'b1;
    end else if (h_ep) begin
        // poisoned data
        h_err = 4'd3;
        h_free = 1'b1;
    end else if (t_zero) begin
        // zero-length read: any successful completion finishes it
        h_free = 1'b1;
    end else if (!h_ok) begin
        h_err = 4'd3;
        h_free = 1'b1;
    end else begin
        h_drop = 1'b0;
        h_fin = h_final;
        h_upd = !h_final;
        h_free = h_final;
    end
end

// ---------------------------------------------------------------------------
// per-beat processing into the S1 register

reg                   ctx_known_reg = 1'b0;
reg                   ctx_drop_reg = 1'b1;
reg [WORD_ADDR_W-1:0] ctx_word_reg = {WORD_ADDR_W{1'b0}};
reg [SEG_W-1:0]       ctx_shift_reg = {SEG_W{1'b0}};
reg [12:0]            ctx_left_reg = 13'd0;
reg [NB_W-1:0]        ctx_idx_reg = {NB_W{1'b0}};
reg [NB_W-1:0]        ctx_beats_reg = {NB_W{1'b0}};
reg [DWL-1:0]         ctx_last_keep_reg = {DWL{1'b0}};
reg                   ctx_bad_reg = 1'b0;
reg                   ctx_fin_reg = 1'b0;
reg [3:0]             ctx_err_reg = 4'd0;
reg [DT_W-1:0]        ctx_slot_reg = {DT_W{1'b0}};
reg [TAG_W-1:0]       ctx_tag_reg = {TAG_W{1'b0}};

wire                   b_known = s0_first ? h_known : ctx_known_reg;
wire                   b_drop = s0_first ? h_drop : ctx_drop_reg;
wire [WORD_ADDR_W-1:0] b_word = s0_first ? h_ram_base[RAM_ADDR_W-1:SEG_W] : ctx_word_reg;
wire [SEG_W-1:0]       b_shift = s0_first ? h_ram_base[SEG_W-1:0] : ctx_shift_reg;
wire [12:0]            b_left = s0_first ? h_hi : ctx_left_reg;
wire [1:0]             b_lo = s0_first ? h_la[1:0] : 2'd0;
wire [NB_W-1:0]        b_idx = s0_first ? {NB_W{1'b0}} : ctx_idx_reg;
wire [NB_W-1:0]        b_beats = s0_first ? h_beats : ctx_beats_reg;
wire [DWL-1:0]         b_last_keep = s0_first ? h_last_keep : ctx_last_keep_reg;
wire                   b_bad_prev = s0_first ? 1'b0 : ctx_bad_reg;
wire                   b_fin = s0_first ? h_fin : ctx_fin_reg;
wire [3:0]             b_err_hdr = s0_first ? h_err : ctx_err_reg;
wire [DT_W-1:0]        b_slot = s0_first ? t_slot : ctx_slot_reg;
wire [TAG_W-1:0]       b_tag = s0_first ? h_tag : ctx_tag_reg;

// valid payload bytes of this beat
wire [BL-1:0] b_mask_lo = {BL{1'b1}} << b_lo;
wire [BL-1:0] b_mask_hi = (b_left >= BL_13) ? {BL{1'b1}} : ~({BL{1'b1}} << b_left[SEG_W-1:0]);
wire [BL-1:0] b_mask = b_drop ? {BL{1'b0}} : (b_mask_lo & b_mask_hi);

wire          b_idx_last = b_idx == b_beats - 1'b1;
wire [DWL-1:0] b_exp_keep = b_idx_last ? b_last_keep : {DWL{1'b1}};
wire          b_bad = b_bad_prev || (b_idx >= b_beats) || (s0_keep != b_exp_keep);
// at the last beat: malformed if any beat was bad or the TLP ended early
wire          b_malformed = !b_drop && (b_bad || !b_idx_last);
wire [3:0]    b_ev_err = (b_err_hdr != 4'd0) ? b_err_hdr : (b_malformed ? 4'd3 : 4'd0);

reg                   s1_valid_reg = 1'b0;
reg [DATA_W-1:0]      s1_data_reg = {DATA_W{1'b0}};
reg [BL-1:0]          s1_mask_reg = {BL{1'b0}};
reg [WORD_ADDR_W-1:0] s1_word_reg = {WORD_ADDR_W{1'b0}};
reg [SEG_W-1:0]       s1_shift_reg = {SEG_W{1'b0}};
reg                   s1_ev_valid_reg = 1'b0;
reg                   s1_ev_fin_reg = 1'b0;
reg [3:0]             s1_ev_err_reg = 4'd0;
reg [DT_W-1:0]        s1_ev_slot_reg = {DT_W{1'b0}};
reg                   s1_first_reg = 1'b0;
reg                   s1_last_reg = 1'b0;
reg                   s1_known_reg = 1'b0;
reg                   s1_drop_reg = 1'b0;
reg [TAG_W-1:0]       s1_tag_reg = {TAG_W{1'b0}};

reg stat_rd_err_reg = 1'b0;
assign stat_rd_err = stat_rd_err_reg;

wire s2_consume;
assign s1_ready = !s1_valid_reg || s2_consume;

always @(posedge clk) begin
    stat_rd_err_reg <= 1'b0;

    if (s2_consume) begin
        s1_valid_reg <= 1'b0;
    end

    if (s1_load) begin
        s0_in_tlp_reg <= !s0_last;

        s1_valid_reg <= 1'b1;
        s1_data_reg <= s0_data;
        s1_mask_reg <= b_mask;
        s1_word_reg <= b_word;
        s1_shift_reg <= b_shift;
        s1_ev_valid_reg <= s0_last && b_known;
        s1_ev_fin_reg <= b_fin;
        s1_ev_err_reg <= b_ev_err;
        s1_ev_slot_reg <= b_slot;
        s1_first_reg <= s0_first;
        s1_last_reg <= s0_last;
        s1_known_reg <= b_known;
        s1_drop_reg <= b_drop;
        s1_tag_reg <= b_tag;

        stat_rd_err_reg <= s0_last && (!b_known || b_ev_err != 4'd0);

        ctx_known_reg <= b_known;
        ctx_drop_reg <= b_drop;
        ctx_word_reg <= b_word + 1'b1;
        ctx_shift_reg <= b_shift;
        ctx_left_reg <= (b_left > BL_13) ? b_left - BL_13 : 13'd0;
        ctx_idx_reg <= (b_idx == {NB_W{1'b1}}) ? b_idx : b_idx + 1'b1;
        ctx_beats_reg <= b_beats;
        ctx_last_keep_reg <= b_last_keep;
        ctx_bad_reg <= b_bad;
        ctx_fin_reg <= b_fin;
        ctx_err_reg <= b_err_hdr;
        ctx_slot_reg <= b_slot;
        ctx_tag_reg <= b_tag;
    end

    if (rst) begin
        s0_in_tlp_reg <= 1'b0;
        s1_valid_reg <= 1'b0;
        stat_rd_err_reg <= 1'b0;
    end
end

// the free tag the encoder picks (the lowest), as one-hot: the allocation
// sets it without decoding free_tag again (the loop tag_active -> encoder
// -> decoder -> tag_active was the deepest of the 128-bit build)
wire [NTAGS-1:0] free_oh = ~tag_active_reg & (tag_active_reg + 1'b1);

// tag table writes: allocation by the issuer, byte count update / free by
// the completion header (never the same tag in one cycle)
always @(posedge clk) begin
    if (rq_issue) begin
        tag_active_reg <= tag_active_reg | free_oh;
        tag_ram_mem[free_tag] <= cur_ram_addr_reg;
        tag_off_mem[free_tag] <= 12'd0;
        tag_exp_la_mem[free_tag] <= cur_pcie_addr_reg[6:0];
        tag_rem_mem[free_tag] <= rq_eff_len;
        tag_slot_mem[free_tag] <= cur_slot_reg;
        tag_zero_mem[free_tag] <= rq_zero_reg;
    end
    if (s1_load && s0_first) begin
        if (h_upd) begin
            tag_rem_mem[h_tag] <= t_rem - h_this;
            tag_ram_mem[h_tag] <= t_ram + h_this_ram;
            tag_off_mem[h_tag] <= h_off + h_this[11:0];
            tag_exp_la_mem[h_tag] <= h_exp_la + h_this[6:0];
        end
        if (h_free) begin
            tag_active_reg[h_tag] <= 1'b0;
        end
    end
    if (rst) begin
        tag_active_reg <= {NTAGS{1'b0}};
    end
end

// ---------------------------------------------------------------------------
// S2: shift to RAM alignment, merge with carried partial words, write
//
// Each beat, shifted left by the RAM byte offset, gives a main word (RAM
// word s1_word) and a new partial word (s1_word + 1) with the beat's
// trailing bytes. Partial words are carried:
// - R: to the next beat of the same TLP (always the same RAM word);
// - PT[tag]: from the last beat of a completion that does not finish its
//   tag to the first beat of the tag's next completion (completions of a tag
//   are contiguous, checked by byte count and lower address);
// - T: from the last beat of a completion that finishes its tag; T is
//   merged if a later beat writes the same word, else written in a cycle
//   when the port is free (one cycle of back-pressure if the input is busy).
// The completion event (descriptor accounting) waits in T for its bytes.

wire [SEG_W+3:0] s2_lsh = {1'b0, s1_shift_reg, 3'b000};
wire [SEG_W+3:0] s2_rsh = DATA_W_SH - s2_lsh;
wire [SEG_W:0]   s2_mrsh = BL_SH - {1'b0, s1_shift_reg};
wire [DATA_W-1:0] s2_main_data = s1_data_reg << s2_lsh;
wire [DATA_W-1:0] s2_np_data = s1_data_reg >> s2_rsh;
wire [BL-1:0]     s2_main_strb = s1_mask_reg << s1_shift_reg;
wire [BL-1:0]     s2_np_strb = s1_mask_reg >> s2_mrsh;
wire s2_np_any = s2_np_strb != {BL{1'b0}};

// the completion's trailing partial word goes to T (tag finished) or PT
wire s2_tail_to_t = s1_last_reg && !s1_drop_reg && s1_ev_fin_reg;
wire s2_tail_to_pt = s1_last_reg && !s1_drop_reg && !s1_ev_fin_reg && s1_known_reg;

// per-tag partial words
reg [DATA_W-1:0] pt_data_mem [0:NTAGS-1];
reg [BL-1:0]     pt_strb_mem [0:NTAGS-1];
reg [NTAGS-1:0]  pt_valid_reg = {NTAGS{1'b0}};

wire [DATA_W-1:0] pt_data = pt_data_mem[s1_tag_reg];
wire [BL-1:0]     pt_strb = pt_strb_mem[s1_tag_reg];
wire              pt_hit = s1_first_reg && s1_known_reg && !s1_drop_reg && pt_valid_reg[s1_tag_reg];

// carry within a TLP
reg                   r_valid_reg = 1'b0;
reg [DATA_W-1:0]      r_data_reg = {DATA_W{1'b0}};
reg [BL-1:0]          r_strb_reg = {BL{1'b0}};

// tail of a finished tag
reg                   t_valid_reg = 1'b0;
reg [WORD_ADDR_W-1:0] t_word_reg = {WORD_ADDR_W{1'b0}};
reg [DATA_W-1:0]      t_data_reg = {DATA_W{1'b0}};
reg [BL-1:0]          t_strb_reg = {BL{1'b0}};
reg                   t_ev_valid_reg = 1'b0;
reg                   t_ev_fin_reg = 1'b0;
reg [3:0]             t_ev_err_reg = 4'd0;
reg [DT_W-1:0]        t_ev_slot_reg = {DT_W{1'b0}};

wire [DATA_W-1:0] s2_carry_data = s1_first_reg ? pt_data : r_data_reg;
wire [BL-1:0]     s2_carry_strb = s1_first_reg ? (pt_hit ? pt_strb : {BL{1'b0}}) :
                                                 (r_valid_reg ? r_strb_reg : {BL{1'b0}});
wire              s2_t_hit = t_valid_reg && t_word_reg == s1_word_reg;
wire [BL-1:0]     s2_t_strb = s2_t_hit ? t_strb_reg : {BL{1'b0}};
wire              s2_need_main = (s2_main_strb | s2_carry_strb) != {BL{1'b0}};

reg [DATA_W-1:0] s2_merge_data;
integer bi;
always @* begin
    for (bi = 0; bi < BL; bi = bi + 1) begin
        s2_merge_data[bi*8 +: 8] = s2_main_strb[bi] ? s2_main_data[bi*8 +: 8] :
                                   s2_carry_strb[bi] ? s2_carry_data[bi*8 +: 8] : t_data_reg[bi*8 +: 8];
    end
end

reg                   s2_consume_r;
reg                   s2_wr;
reg [WORD_ADDR_W-1:0] s2_wr_addr;
reg [DATA_W-1:0]      s2_wr_data;
reg [BL-1:0]          s2_wr_strb;
reg                   s2_t_written;

assign s2_consume = s2_consume_r;

always @* begin
    s2_consume_r = 1'b0;
    s2_wr = 1'b0;
    s2_wr_addr = t_word_reg;
    s2_wr_data = t_data_reg;
    s2_wr_strb = t_strb_reg;
    s2_t_written = 1'b0;

    if (s1_valid_reg) begin
        if (t_valid_reg && !s2_t_hit && s2_need_main) begin
            // the beat and T need the port: write T first
            s2_wr = 1'b1;
            s2_t_written = 1'b1;
        end else begin
            s2_consume_r = 1'b1;
            if (s2_need_main || s2_t_hit) begin
                s2_wr = 1'b1;
                s2_wr_addr = s1_word_reg;
                s2_wr_data = s2_merge_data;
                s2_wr_strb = s2_main_strb | s2_carry_strb | s2_t_strb;
                s2_t_written = s2_t_hit;
            end else if (t_valid_reg) begin
                s2_wr = 1'b1;
                s2_t_written = 1'b1;
            end
        end
    end else if (t_valid_reg) begin
        // idle input: write T
        s2_wr = 1'b1;
        s2_t_written = 1'b1;
    end
end

wire s2_new_t = s2_consume_r && s2_tail_to_t && s2_np_any;

// completion events: A when T is written, B from a consumed last beat
// whose bytes are all written now
wire            ev_a_valid = s2_t_written && t_ev_valid_reg;
wire            ev_a_fin = t_ev_fin_reg;
wire [3:0]      ev_a_err = t_ev_err_reg;
wire [DT_W-1:0] ev_a_slot = t_ev_slot_reg;
wire            ev_b_valid = s2_consume_r && s1_ev_valid_reg && !s2_new_t;
wire            ev_b_fin = s1_ev_fin_reg;
wire [3:0]      ev_b_err = s1_ev_err_reg;
wire [DT_W-1:0] ev_b_slot = s1_ev_slot_reg;

reg [WORD_ADDR_W-1:0] ram_wr_addr_reg = {WORD_ADDR_W{1'b0}};
reg [DATA_W-1:0]      ram_wr_data_reg = {DATA_W{1'b0}};
reg [BL-1:0]          ram_wr_strb_reg = {BL{1'b0}};
reg                   ram_wr_en_reg = 1'b0;

assign m_ram_wr_addr = ram_wr_addr_reg;
assign m_ram_wr_data = ram_wr_data_reg;
assign m_ram_wr_strb = ram_wr_strb_reg;
assign m_ram_wr_en = ram_wr_en_reg;

always @(posedge clk) begin
    ram_wr_en_reg <= s2_wr;
    if (s2_wr) begin
        ram_wr_addr_reg <= s2_wr_addr;
        ram_wr_data_reg <= s2_wr_data;
        ram_wr_strb_reg <= s2_wr_strb;
    end

    if (s2_t_written) begin
        t_valid_reg <= 1'b0;
    end

    if (s2_consume_r) begin
        r_valid_reg <= !s1_last_reg && s2_np_any;
        r_data_reg <= s2_np_data;
        r_strb_reg <= s2_np_strb;

        if (s1_first_reg && s1_known_reg) begin
            pt_valid_reg[s1_tag_reg] <= 1'b0;
        end
        if (s2_tail_to_pt) begin
            pt_valid_reg[s1_tag_reg] <= s2_np_any;
        end
    end

    if (s2_new_t) begin
        t_valid_reg <= 1'b1;
        t_word_reg <= s1_word_reg + 1'b1;
        t_data_reg <= s2_np_data;
        t_strb_reg <= s2_np_strb;
        t_ev_valid_reg <= s1_ev_valid_reg;
        t_ev_fin_reg <= s1_ev_fin_reg;
        t_ev_err_reg <= s1_ev_err_reg;
        t_ev_slot_reg <= s1_ev_slot_reg;
    end

    if (rst) begin
        ram_wr_en_reg <= 1'b0;
        t_valid_reg <= 1'b0;
        r_valid_reg <= 1'b0;
        pt_valid_reg <= {NTAGS{1'b0}};
    end
end

// partial word storage (one write port, asynchronous read)
always @(posedge clk) begin
    if (s2_consume_r && s2_tail_to_pt) begin
        pt_data_mem[s1_tag_reg] <= s2_np_data;
        pt_strb_mem[s1_tag_reg] <= s2_np_strb;
    end
end

// ---------------------------------------------------------------------------
// descriptor completion accounting and in-order status

wire [DT_W-1:0] dt_head = dt_rd_ptr_reg[DT_W-1:0];
wire dt_head_done = !dt_empty && (dt_complete & dt_head_oh_reg) != {DESC_TABLE_SIZE{1'b0}};

// per descriptor: requests issued (the issuer works on one slot at a time,
// cur_slot_reg; a load starts the next at zero), whether the last one was,
// requests finished and first error (up to two events per cycle, cleared
// when the descriptor retires); complete: all issued and as many finished.
// One block under one guard: the simulator skips every slot on cycles
// without an event (the hardware is the same).
reg [DESC_TABLE_SIZE*CNT_W-1:0] dt_issued_reg = {DESC_TABLE_SIZE*CNT_W{1'b0}};
reg [DESC_TABLE_SIZE-1:0]       dt_all_issued_reg = {DESC_TABLE_SIZE{1'b0}};
reg [DESC_TABLE_SIZE*CNT_W-1:0] dt_done_reg = {DESC_TABLE_SIZE*CNT_W{1'b0}};
reg [DESC_TABLE_SIZE*4-1:0]     dt_err_reg = {DESC_TABLE_SIZE*4{1'b0}};
assign dt_err_flat = dt_err_reg;

wire dt_event = rq_issue || rq_load || ev_a_valid || ev_b_valid || dt_head_done || rst;
localparam DT_REC_W = 2 * CNT_W + 5;   // {err, done, all issued, issued}

// one slot's next record (the events of this cycle applied to it)
function [DT_REC_W-1:0] dt_slot_next;
    input [DT_W-1:0]  idx;
    input [CNT_W-1:0] issued;
    input             all_issued;
    input [CNT_W-1:0] done;
    input [3:0]       err;
    reg [CNT_W-1:0] issued_n;
    reg             all_n;
    reg [CNT_W-1:0] done_n;
    reg [3:0]       err_n;
    begin
        issued_n = issued;
        all_n = all_issued;
        if (rq_issue && cur_slot_reg == idx) begin
            issued_n = issued + 1'b1;
            all_n = all_issued || rq_last_reg;
        end
        if (rq_load && dt_wr_ptr_reg[DT_W-1:0] == idx) begin
            issued_n = {CNT_W{1'b0}};
            all_n = 1'b0;
        end
        done_n = done + {{CNT_W-1{1'b0}}, ev_a_valid && ev_a_slot == idx && ev_a_fin}
            + {{CNT_W-1{1'b0}}, ev_b_valid && ev_b_slot == idx && ev_b_fin};
        err_n = err;
        if (err == 4'd0) begin
            if (ev_a_valid && ev_a_slot == idx && ev_a_err != 4'd0) begin
                err_n = ev_a_err;
            end else if (ev_b_valid && ev_b_slot == idx && ev_b_err != 4'd0) begin
                err_n = ev_b_err;
            end
        end
        if ((dt_head_done && dt_head_oh_reg[idx]) || rst) begin
            done_n = {CNT_W{1'b0}};
            err_n = 4'd0;
        end
        dt_slot_next = {err_n, done_n, all_n, issued_n};
    end
endfunction

integer si;
always @(posedge clk) begin
    if (dt_event) begin
        for (si = 0; si < DESC_TABLE_SIZE; si = si + 1) begin
            {dt_err_reg[si*4 +: 4], dt_done_reg[si*CNT_W +: CNT_W],
             dt_all_issued_reg[si], dt_issued_reg[si*CNT_W +: CNT_W]} <= dt_slot_next(si[DT_W-1:0],
                dt_issued_reg[si*CNT_W +: CNT_W], dt_all_issued_reg[si],
                dt_done_reg[si*CNT_W +: CNT_W], dt_err_reg[si*4 +: 4]);
        end
    end
end

genvar gi;
generate
    for (gi = 0; gi < DESC_TABLE_SIZE; gi = gi + 1) begin : g_dt_complete
        assign dt_complete[gi] = dt_all_issued_reg[gi]
            && dt_issued_reg[gi*CNT_W +: CNT_W] == dt_done_reg[gi*CNT_W +: CNT_W];
    end
endgenerate

reg [ID_W-1:0] status_id_reg = {ID_W{1'b0}};
reg [3:0]      status_err_reg = 4'd0;
reg            status_valid_reg = 1'b0;

assign m_status_id = status_id_reg;
assign m_status_error = status_err_reg;
assign m_status_valid = status_valid_reg;

always @(posedge clk) begin
    status_valid_reg <= 1'b0;

    if (dt_head_done) begin
        status_valid_reg <= 1'b1;
        status_id_reg <= dt_id_mem[dt_head];
        status_err_reg <= dt_err_flat[dt_head*4 +: 4];
        dt_rd_ptr_reg <= dt_rd_ptr_reg + 1'b1;
        dt_head_oh_reg <= {dt_head_oh_reg[DESC_TABLE_SIZE-2:0], dt_head_oh_reg[DESC_TABLE_SIZE-1]};
    end

    if (rst) begin
        status_valid_reg <= 1'b0;
        dt_rd_ptr_reg <= {DT_W+1{1'b0}};
        dt_head_oh_reg <= {{DESC_TABLE_SIZE-1{1'b0}}, 1'b1};
    end
end

endmodule

`resetall
`default_nettype wire
