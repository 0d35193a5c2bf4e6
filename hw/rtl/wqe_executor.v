// Work-request executor: fetches the next WQE of the queue the queue manager
// picked, executes it, and writes its CQE.
//
// Opcode 0x80 (LOCAL_DMA_COPY) needs no network: it reads the source into
// staging-RAM slots and writes each slot out to the destination, pipelined
// over NUM_SLOTS chunks. The CQE goes through the same DMA write engine as
// the payload, behind it, with RO=0: PCIe then keeps it from becoming visible
// before the payload (the completion barrier). The debug switch cqe_ro sets
// RO=1 on CQEs to break that on purpose.
//
// WQE (64 B, little endian): [0] opcode, [1] flags, [4..7] length,
// [8..15] wr_id, [16..23] source bus address, [24..31] destination address.
// CQE (32 B): [0..7] wr_id, [8..11] byte_len, [12..15] imm, [16..19] qn,
// [20] opcode, [21] status (ibv_wc_status numbering), [31] bit 0 owner/phase.

`resetall
`timescale 1ns / 1ps
`default_nettype none

module wqe_executor #(
    parameter DATA_W = 64,
    parameter RAM_ADDR_W = 15,       // staging RAM, byte address
    parameter QN_W = 4,
    parameter LEN_W = 17,
    parameter ID_W = 8,
    parameter CHUNK_LOG = 12,
    parameter NUM_SLOTS = 7          // RAM holds NUM_SLOTS + 1 chunks; the last one holds WQE and CQE
) (
    input  wire                   clk,
    input  wire                   rst,

    // from the queue manager
    input  wire                   s_sq_valid,
    input  wire [QN_W-1:0]        s_sq_qn,
    input  wire [63:0]            s_sq_wqe_addr,
    input  wire [QN_W-1:0]        s_sq_cqn,
    output wire                   s_sq_ready,

    output wire                   sq_done,
    output wire [QN_W-1:0]        sq_done_qn,

    output wire [QN_W-1:0]        cq_alloc_cqn,
    input  wire                   cq_alloc_ok,
    input  wire                   cq_alloc_bad,
    input  wire [63:0]            cq_alloc_addr,
    input  wire                   cq_alloc_phase,
    output wire                   cq_alloc_take,

    output wire                   cq_notify,
    output wire [QN_W-1:0]        cq_notify_cqn,

    // DMA read engine
    output wire [63:0]            m_rd_desc_pcie_addr,
    output wire [RAM_ADDR_W-1:0]  m_rd_desc_ram_addr,
    output wire [LEN_W-1:0]       m_rd_desc_len,
    output wire [ID_W-1:0]        m_rd_desc_id,
    output wire                   m_rd_desc_valid,
    input  wire                   m_rd_desc_ready,
    /* verilator lint_off UNUSEDSIGNAL */
    input  wire [ID_W-1:0]        s_rd_status_id,
    /* verilator lint_on UNUSEDSIGNAL */
    input  wire [3:0]             s_rd_status_error,
    input  wire                   s_rd_status_valid,

    // DMA write engine
    output wire [63:0]            m_wr_desc_pcie_addr,
    output wire [RAM_ADDR_W-1:0]  m_wr_desc_ram_addr,
    output wire [LEN_W-1:0]       m_wr_desc_len,
    output wire                   m_wr_desc_ro,
    output wire [ID_W-1:0]        m_wr_desc_id,
    output wire                   m_wr_desc_valid,
    input  wire                   m_wr_desc_ready,
    /* verilator lint_off UNUSEDSIGNAL */
    input  wire [ID_W-1:0]        s_wr_status_id,
    /* verilator lint_on UNUSEDSIGNAL */
    input  wire                   s_wr_status_valid,

    // staging RAM: the read engine's writes are watched to capture the WQE;
    // the executor writes CQEs through its own port (muxed in the top)
    input  wire [RAM_ADDR_W-$clog2(DATA_W/8)-1:0] ram_snoop_addr,
    input  wire [DATA_W-1:0]      ram_snoop_data,
    input  wire [DATA_W/8-1:0]    ram_snoop_strb,
    input  wire                   ram_snoop_en,
    output wire [RAM_ADDR_W-$clog2(DATA_W/8)-1:0] m_ram_wr_addr,
    output wire [DATA_W-1:0]      m_ram_wr_data,
    output wire [DATA_W/8-1:0]    m_ram_wr_strb,
    output wire                   m_ram_wr_en,
    input  wire                   m_ram_wr_ready,

    input  wire                   cfg_cqe_ro,

    output wire                   err_valid,
    output wire [7:0]             err_code,
    output wire [15:0]            err_qn,
    output wire                   stat_cqe
);

localparam BEAT_BYTES = DATA_W / 8;
localparam SEG_W = $clog2(BEAT_BYTES);
localparam CHUNK = 1 << CHUNK_LOG;
localparam integer CTRL_BASE_I = NUM_SLOTS * CHUNK;
localparam [RAM_ADDR_W-1:0] CTRL_BASE = CTRL_BASE_I[RAM_ADDR_W-1:0];
localparam SLOT_W = $clog2(NUM_SLOTS);
localparam integer LAST_SLOT_I = NUM_SLOTS - 1;
localparam [SLOT_W-1:0] LAST_SLOT = LAST_SLOT_I[SLOT_W-1:0];
localparam [RAM_ADDR_W-1:0] WQE_RAM = CTRL_BASE;
localparam [RAM_ADDR_W-1:0] CQE_RAM = CTRL_BASE + 64;
localparam CQE_BEATS = 32 > BEAT_BYTES ? 32 / BEAT_BYTES : 1;
localparam integer CQE_LAST_BEAT_I = CQE_BEATS - 1;
localparam [2:0] CQE_LAST_BEAT = CQE_LAST_BEAT_I[2:0];
localparam CQE_EXT_W = DATA_W > 256 ? DATA_W : 256;

localparam [7:0] OP_LOCAL_DMA_COPY = 8'h80;
localparam [7:0] WC_SUCCESS = 8'd0, WC_LOC_QP_OP_ERR = 8'd2, WC_LOC_PROT_ERR = 8'd4;
localparam [7:0] ERR_UNKNOWN_OPCODE = 8'd3, ERR_DMA_READ = 8'd4, ERR_CQ_DISABLED = 8'd5;

initial begin
    if (DATA_W < 64 || DATA_W > 512 || (DATA_W & (DATA_W - 1)) != 0) begin
        $error("wqe_executor: DATA_W must be 64, 128, 256 or 512");
        $finish;
    end
    if (NUM_SLOTS < 2 || (NUM_SLOTS + 1) * CHUNK > (1 << RAM_ADDR_W)) begin
        $error("wqe_executor: need 2 <= NUM_SLOTS and (NUM_SLOTS+1) chunks in the RAM");
        $finish;
    end
    if (QN_W >= 16) begin
        $error("wqe_executor: QN_W must be below 16");
        $finish;
    end
    if (CHUNK_LOG >= LEN_W || CHUNK_LOG < 7) begin
        $error("wqe_executor: chunk must fit a descriptor length and hold a WQE and CQE");
        $finish;
    end
end

localparam [3:0]
    ST_IDLE = 4'd0,
    ST_FETCH = 4'd1,
    ST_FETCH_WAIT = 4'd2,
    ST_DECODE = 4'd3,
    ST_COPY = 4'd4,
    ST_CQE_ALLOC = 4'd5,
    ST_CQE_RAM = 4'd6,
    ST_CQE_ISSUE = 4'd7,
    ST_CQE_WAIT = 4'd8,
    ST_DONE = 4'd9;

reg [3:0] state_reg = ST_IDLE;

reg [QN_W-1:0] qn_reg = {QN_W{1'b0}};
reg [QN_W-1:0] cqn_reg = {QN_W{1'b0}};
reg [63:0] wqe_addr_reg = 64'd0;
// bytes 1..3 (flags) and 32..63 are reserved for the RoCE work requests
/* verilator lint_off UNUSEDSIGNAL */
reg [511:0] wqe_reg = 512'd0;
/* verilator lint_on UNUSEDSIGNAL */

reg [7:0] wc_status_reg = 8'd0;
reg [7:0] wc_opcode_reg = 8'd0;
reg [31:0] byte_len_reg = 32'd0;

// copy progress, in bytes and chunks
reg [31:0] rd_off_reg = 32'd0;
reg [31:0] wr_off_reg = 32'd0;
reg [31:0] rd_issued_reg = 32'd0;
reg [31:0] rd_done_reg = 32'd0;
reg [31:0] wr_issued_reg = 32'd0;
reg [31:0] wr_done_reg = 32'd0;
reg [SLOT_W-1:0] rd_slot_reg = {SLOT_W{1'b0}};
reg [SLOT_W-1:0] wr_slot_reg = {SLOT_W{1'b0}};
reg copy_err_reg = 1'b0;

reg [63:0] cqe_addr_reg = 64'd0;
reg cqe_phase_reg = 1'b0;
reg [2:0] cqe_beat_reg = 3'd0;

reg err_valid_reg = 1'b0;
reg [7:0] err_code_reg = 8'd0;

wire [7:0] wqe_opcode = wqe_reg[7:0];
wire [31:0] wqe_len = wqe_reg[63:32];
wire [63:0] wqe_wr_id = wqe_reg[127:64];
wire [63:0] wqe_src = wqe_reg[191:128];
wire [63:0] wqe_dst = wqe_reg[255:192];

// capture the WQE as the read engine writes it into the RAM
localparam integer WQE_BEAT0 = (NUM_SLOTS * CHUNK) / BEAT_BYTES;
genvar gb;
generate
    for (gb = 0; gb < 64; gb = gb + 1) begin : wqe_capture
        localparam integer BEAT_I = WQE_BEAT0 + gb / BEAT_BYTES;
        localparam [RAM_ADDR_W-SEG_W-1:0] BEAT = BEAT_I[RAM_ADDR_W-SEG_W-1:0];
        always @(posedge clk) begin
            if (state_reg == ST_IDLE) begin
                wqe_reg[gb*8 +: 8] <= 8'd0;
            end else if (ram_snoop_en && ram_snoop_addr == BEAT && ram_snoop_strb[gb % BEAT_BYTES]
                    && state_reg == ST_FETCH_WAIT) begin
                wqe_reg[gb*8 +: 8] <= ram_snoop_data[(gb % BEAT_BYTES)*8 +: 8];
            end
        end
    end
endgenerate

// chunk lengths
wire [31:0] rd_rem = wqe_len - rd_off_reg;
wire [31:0] wr_rem = wqe_len - wr_off_reg;
wire [LEN_W-1:0] rd_chunk = rd_rem >= CHUNK ? CHUNK[LEN_W-1:0] : rd_rem[LEN_W-1:0];
wire [LEN_W-1:0] wr_chunk = wr_rem >= CHUNK ? CHUNK[LEN_W-1:0] : wr_rem[LEN_W-1:0];
wire [31:0] in_flight = rd_issued_reg - wr_done_reg;

wire can_issue_rd = state_reg == ST_COPY && !copy_err_reg && rd_off_reg != wqe_len
    && in_flight < NUM_SLOTS;
wire can_issue_wr = state_reg == ST_COPY && !copy_err_reg && wr_issued_reg != rd_done_reg;

// read descriptors: WQE fetch or copy chunk
assign m_rd_desc_pcie_addr = state_reg == ST_FETCH ? wqe_addr_reg : wqe_src + {32'd0, rd_off_reg};
assign m_rd_desc_ram_addr = state_reg == ST_FETCH ? WQE_RAM : ({{(RAM_ADDR_W-SLOT_W){1'b0}}, rd_slot_reg} << CHUNK_LOG);
assign m_rd_desc_len = state_reg == ST_FETCH ? 64 : rd_chunk;
assign m_rd_desc_id = {ID_W{1'b0}};
assign m_rd_desc_valid = state_reg == ST_FETCH || can_issue_rd;

// write descriptors: copy chunk or CQE
assign m_wr_desc_pcie_addr = state_reg == ST_CQE_ISSUE ? cqe_addr_reg : wqe_dst + {32'd0, wr_off_reg};
assign m_wr_desc_ram_addr = state_reg == ST_CQE_ISSUE ? CQE_RAM : ({{(RAM_ADDR_W-SLOT_W){1'b0}}, wr_slot_reg} << CHUNK_LOG);
assign m_wr_desc_len = state_reg == ST_CQE_ISSUE ? 32 : wr_chunk;
assign m_wr_desc_ro = state_reg == ST_CQE_ISSUE ? cfg_cqe_ro : 1'b1;
assign m_wr_desc_id = {ID_W{1'b0}};
assign m_wr_desc_valid = (state_reg == ST_CQE_ISSUE) || can_issue_wr;

assign s_sq_ready = state_reg == ST_IDLE;
assign sq_done = state_reg == ST_DONE;
assign sq_done_qn = qn_reg;

assign cq_alloc_cqn = cqn_reg;
assign cq_alloc_take = state_reg == ST_CQE_ALLOC && cq_alloc_ok;
assign cq_notify = state_reg == ST_CQE_WAIT && s_wr_status_valid;
assign cq_notify_cqn = cqn_reg;

// CQE image
wire [255:0] cqe = {
    7'd0, cqe_phase_reg,            // byte 31: owner/phase
    72'd0,                          // bytes 22..30
    wc_status_reg, wc_opcode_reg,   // bytes 21, 20
    {{(32-QN_W){1'b0}}, qn_reg},
    32'd0,
    byte_len_reg,
    wqe_wr_id
};
wire [CQE_EXT_W-1:0] cqe_ext = {{(CQE_EXT_W-256){1'b0}}, cqe};
wire [CQE_EXT_W/8-1:0] cqe_strb_ext = {{(CQE_EXT_W/8-32){1'b0}}, 32'hffffffff};

localparam integer CQE_BEAT0_I = (NUM_SLOTS * CHUNK + 64) / BEAT_BYTES;
localparam [RAM_ADDR_W-SEG_W-1:0] CQE_BEAT0 = CQE_BEAT0_I[RAM_ADDR_W-SEG_W-1:0];
assign m_ram_wr_addr = CQE_BEAT0 + {{(RAM_ADDR_W-SEG_W-3){1'b0}}, cqe_beat_reg};
assign m_ram_wr_data = cqe_ext[cqe_beat_reg*DATA_W +: DATA_W];
assign m_ram_wr_strb = cqe_strb_ext[cqe_beat_reg*BEAT_BYTES +: BEAT_BYTES];
assign m_ram_wr_en = state_reg == ST_CQE_RAM;

assign err_valid = err_valid_reg;
assign err_code = err_code_reg;
assign err_qn = {{(16-QN_W){1'b0}}, qn_reg};
assign stat_cqe = state_reg == ST_CQE_WAIT && s_wr_status_valid;

always @(posedge clk) begin
    err_valid_reg <= 1'b0;

    case (state_reg)
        ST_IDLE: begin
            if (s_sq_valid) begin
                qn_reg <= s_sq_qn;
                cqn_reg <= s_sq_cqn;
                wqe_addr_reg <= s_sq_wqe_addr;
                state_reg <= ST_FETCH;
            end
        end
        ST_FETCH: begin
            if (m_rd_desc_ready) begin
                state_reg <= ST_FETCH_WAIT;
            end
        end
        ST_FETCH_WAIT: begin
            if (s_rd_status_valid) begin
                wc_opcode_reg <= OP_LOCAL_DMA_COPY;
                byte_len_reg <= 32'd0;
                if (s_rd_status_error != 0) begin
                    // the WQE itself is unreadable
                    wc_status_reg <= WC_LOC_PROT_ERR;
                    err_valid_reg <= 1'b1;
                    err_code_reg <= ERR_DMA_READ;
                    state_reg <= ST_CQE_ALLOC;
                end else begin
                    state_reg <= ST_DECODE;
                end
            end
        end
        ST_DECODE: begin
            wc_opcode_reg <= wqe_opcode;
            rd_off_reg <= 32'd0;
            wr_off_reg <= 32'd0;
            rd_issued_reg <= 32'd0;
            rd_done_reg <= 32'd0;
            wr_issued_reg <= 32'd0;
            wr_done_reg <= 32'd0;
            rd_slot_reg <= {SLOT_W{1'b0}};
            wr_slot_reg <= {SLOT_W{1'b0}};
            copy_err_reg <= 1'b0;
            if (wqe_opcode == OP_LOCAL_DMA_COPY) begin
                wc_status_reg <= WC_SUCCESS;
                byte_len_reg <= wqe_len;
                state_reg <= ST_COPY;
            end else begin
                wc_status_reg <= WC_LOC_QP_OP_ERR;
                err_valid_reg <= 1'b1;
                err_code_reg <= ERR_UNKNOWN_OPCODE;
                state_reg <= ST_CQE_ALLOC;
            end
        end
        ST_COPY: begin
            if (can_issue_rd && m_rd_desc_ready) begin
                rd_off_reg <= rd_off_reg + {{(32-LEN_W){1'b0}}, rd_chunk};
                rd_issued_reg <= rd_issued_reg + 32'd1;
                rd_slot_reg <= rd_slot_reg == LAST_SLOT ? {SLOT_W{1'b0}} : rd_slot_reg + 1'b1;
            end
            if (s_rd_status_valid) begin
                if (s_rd_status_error != 0) begin
                    if (!copy_err_reg) begin
                        err_valid_reg <= 1'b1;
                        err_code_reg <= ERR_DMA_READ;
                    end
                    copy_err_reg <= 1'b1;
                    wc_status_reg <= WC_LOC_PROT_ERR;
                end
                rd_done_reg <= rd_done_reg + 32'd1;
            end
            if (can_issue_wr && m_wr_desc_ready) begin
                wr_off_reg <= wr_off_reg + {{(32-LEN_W){1'b0}}, wr_chunk};
                wr_issued_reg <= wr_issued_reg + 32'd1;
                wr_slot_reg <= wr_slot_reg == LAST_SLOT ? {SLOT_W{1'b0}} : wr_slot_reg + 1'b1;
            end
            if (s_wr_status_valid) begin
                wr_done_reg <= wr_done_reg + 32'd1;
            end
            // finished: every issued read answered, every issued write out
            if (rd_done_reg == rd_issued_reg && wr_done_reg == wr_issued_reg
                    && !(can_issue_rd || can_issue_wr)
                    && !s_rd_status_valid && !s_wr_status_valid) begin
                state_reg <= ST_CQE_ALLOC;
            end
        end
        ST_CQE_ALLOC: begin
            cqe_addr_reg <= cq_alloc_addr;
            cqe_phase_reg <= cq_alloc_phase;
            cqe_beat_reg <= 3'd0;
            if (cq_alloc_bad) begin
                // no CQ to report to: the work request still retires
                err_valid_reg <= 1'b1;
                err_code_reg <= ERR_CQ_DISABLED;
                state_reg <= ST_DONE;
            end else if (cq_alloc_ok) begin
                state_reg <= ST_CQE_RAM;
            end
        end
        ST_CQE_RAM: begin
            if (m_ram_wr_ready) begin
                if (cqe_beat_reg == CQE_LAST_BEAT) begin
                    state_reg <= ST_CQE_ISSUE;
                end else begin
                    cqe_beat_reg <= cqe_beat_reg + 3'd1;
                end
            end
        end
        ST_CQE_ISSUE: begin
            if (m_wr_desc_ready) begin
                state_reg <= ST_CQE_WAIT;
            end
        end
        ST_CQE_WAIT: begin
            if (s_wr_status_valid) begin
                state_reg <= ST_DONE;
            end
        end
        ST_DONE: begin
            state_reg <= ST_IDLE;
        end
        default: state_reg <= ST_IDLE;
    endcase

    if (rst) begin
        state_reg <= ST_IDLE;
        err_valid_reg <= 1'b0;
    end
end

endmodule

`resetall
