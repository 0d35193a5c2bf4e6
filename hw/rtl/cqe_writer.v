// CQE writer: the one place where completions enter host memory, and so the
// place where the completion barrier of the PCIe layer lives.
//
// A client hands over a CQE only after every payload write it completes has
// been accepted by the DMA write engine. The CQE then goes through the same
// in-order write engine (normal mode, RO=0: PCIe keeps it behind the
// payload), or, in flush mode, after a zero-length read that returns only
// once the earlier writes are visible.
//
// Debug switches break this on purpose: cfg_cqe_ro (RO=1, no flush) and
// cfg_bypass (the CQE leaves as its own TLP on m_byp_*, overtaking payload
// still queued in the write engine).

`resetall
`timescale 1ns / 1ps
`default_nettype none

module cqe_writer #(
    parameter DATA_W = 64,
    parameter RAM_ADDR_W = 17,       // DMA engine RAM address space, bytes
    parameter QN_W = 4,
    parameter LEN_W = 17,
    parameter ID_W = 8,
    parameter [RAM_ADDR_W-1:0] SLOT_BASE = 0,   // 8 CQE slots here
    parameter [ID_W-1:0] ID_TAG = 0             // id of this client's descriptors
) (
    input  wire                   clk,
    input  wire                   rst,

    input  wire                   s_req_valid,
    output wire                   s_req_ready,
    input  wire [QN_W-1:0]        s_req_cqn,
    input  wire [247:0]           s_req_cqe,      // the bytes below the owner byte, which is added here

    // a slot of the CQ: valid and cqn held until done (cq_manager)
    output wire                   cq_alloc_valid,
    output wire [QN_W-1:0]        cq_alloc_cqn,
    input  wire                   cq_alloc_done,
    input  wire                   cq_alloc_ok,
    input  wire                   cq_alloc_bad,
    input  wire [63:0]            cq_alloc_addr,
    input  wire                   cq_alloc_phase,

    output wire                   cq_notify,
    output wire [QN_W-1:0]        cq_notify_cqn,

    output wire [RAM_ADDR_W-$clog2(DATA_W/8)-1:0] m_ram_wr_addr,
    output wire [DATA_W-1:0]      m_ram_wr_data,
    output wire [DATA_W/8-1:0]    m_ram_wr_strb,
    output wire                   m_ram_wr_en,
    input  wire                   m_ram_wr_ready,

    output wire [63:0]            m_wr_desc_pcie_addr,
    output wire [RAM_ADDR_W-1:0]  m_wr_desc_ram_addr,
    output wire [LEN_W-1:0]       m_wr_desc_len,
    output wire                   m_wr_desc_ro,
    output wire [ID_W-1:0]        m_wr_desc_id,
    output wire                   m_wr_desc_valid,
    input  wire                   m_wr_desc_ready,
    input  wire                   s_wr_status_valid,     // statuses of this client's descriptors only

    output wire [63:0]            m_rd_desc_pcie_addr,
    output wire [LEN_W-1:0]       m_rd_desc_len,
    output wire [ID_W-1:0]        m_rd_desc_id,
    output wire                   m_rd_desc_valid,
    input  wire                   m_rd_desc_ready,
    input  wire                   s_rd_status_valid,     // statuses of this client's descriptors only

    input  wire                   wr_engine_idle,        // every accepted write descriptor issued

    // bypass path: a complete MemWr TLP, muxed onto tx_wr_req at a TLP boundary
    output wire [127:0]           m_byp_tlp_hdr,
    output wire [DATA_W-1:0]      m_byp_tlp_data,
    output wire [DATA_W/32-1:0]   m_byp_tlp_keep,
    output wire                   m_byp_tlp_valid,
    output wire                   m_byp_tlp_last,
    input  wire                   m_byp_tlp_ready,

    input  wire                   cfg_cqe_ro,
    input  wire                   cfg_cqe_flush,
    input  wire                   cfg_bypass,
    input  wire [15:0]            cfg_requester_id,

    output wire                   err_cq_disabled,
    output wire [QN_W-1:0]        err_cqn,
    output wire                   stat_cqe
);

// the ring entry formats: hw/formats/rnic_formats.rdl
`include "rnic_formats.vh"

localparam BEAT_BYTES = DATA_W / 8;
localparam SEG_W = $clog2(BEAT_BYTES);
localparam CQE_LOG = $clog2(CQE_BYTES);
localparam CQE_BEATS = BEAT_BYTES >= CQE_BYTES ? 1 : CQE_BYTES / BEAT_BYTES;
localparam CQE_EXT_W = DATA_W > 8 * CQE_BYTES ? DATA_W : 8 * CQE_BYTES;
localparam integer CQE_DW_I = CQE_BYTES / 4;
localparam [9:0] CQE_DW = CQE_DW_I[9:0];          // TLP length of a CQE
localparam integer LAST_BEAT_I = CQE_BEATS - 1;
localparam [2:0] LAST_BEAT = LAST_BEAT_I[2:0];

initial begin
    if (DATA_W < 64 || DATA_W > 512) begin
        $error("cqe_writer: DATA_W must be 64..512");
        $finish;
    end
    if (SLOT_BASE % (8 * CQE_BYTES) != 0) begin
        $error("cqe_writer: SLOT_BASE must be aligned to its 8 CQE slots");
        $finish;
    end
    // clients hand over the bytes below the owner byte
    if (CQE_OWNER_LSB + CQE_OWNER_W != 8 * CQE_BYTES) begin
        $error("cqe_writer: the owner byte must be the CQE's last");
        $finish;
    end
end

localparam [2:0]
    ST_IDLE = 3'd0,
    ST_ALLOC = 3'd1,
    ST_FLUSH_WAIT_WR = 3'd2,
    ST_FLUSH_RD = 3'd3,
    ST_FLUSH_WAIT_RD = 3'd4,
    ST_RAM = 3'd5,
    ST_ISSUE = 3'd6,
    ST_BYPASS = 3'd7;

reg [2:0] state_reg = ST_IDLE;
reg [QN_W-1:0] cqn_reg = {QN_W{1'b0}};
reg [CQE_OWNER_LSB-1:0] cqe_reg = {CQE_OWNER_LSB{1'b0}};
reg [63:0] addr_reg = 64'd0;
reg phase_reg = 1'b0;
reg [2:0] beat_reg = 3'd0;
reg [2:0] slot_reg = 3'd0;          // next CQE RAM slot
reg [3:0] inflight_reg = 4'd0;      // CQE descriptors not yet issued by the write engine
reg [QN_W-1:0] notify_fifo [0:7];
reg [2:0] notify_wr_reg = 3'd0;
reg [2:0] notify_rd_reg = 3'd0;
reg flush_ro_reg = 1'b0;
reg err_reg = 1'b0;

reg [8*CQE_BYTES-1:0] cqe_full;
always @* begin
    cqe_full = {{(8*CQE_BYTES-CQE_OWNER_LSB){1'b0}}, cqe_reg};
    cqe_full[CQE_OWNER_PHASE_LSB] = phase_reg;
end
wire [CQE_EXT_W-1:0] cqe_ext = {{(CQE_EXT_W-8*CQE_BYTES){1'b0}}, cqe_full};
wire [CQE_EXT_W/8-1:0] strb_ext = {{(CQE_EXT_W/8-CQE_BYTES){1'b0}}, {CQE_BYTES{1'b1}}};

wire [RAM_ADDR_W-1:0] slot_addr = SLOT_BASE + {{(RAM_ADDR_W-3-CQE_LOG){1'b0}}, slot_reg, {CQE_LOG{1'b0}}};

assign s_req_ready = state_reg == ST_IDLE;

// (a CQE slot of the RAM must be free: inflight_reg only falls meanwhile,
// so the request holds until done)
assign cq_alloc_valid = state_reg == ST_ALLOC && inflight_reg != 4'd8;
assign cq_alloc_cqn = cqn_reg;

assign m_ram_wr_addr = slot_addr[RAM_ADDR_W-1:SEG_W] + {{(RAM_ADDR_W-SEG_W-3){1'b0}}, beat_reg};
assign m_ram_wr_data = cqe_ext[beat_reg*DATA_W +: DATA_W];
assign m_ram_wr_strb = strb_ext[beat_reg*BEAT_BYTES +: BEAT_BYTES];
assign m_ram_wr_en = state_reg == ST_RAM;

assign m_wr_desc_pcie_addr = addr_reg;
assign m_wr_desc_ram_addr = slot_addr;
assign m_wr_desc_len = CQE_BYTES;
assign m_wr_desc_ro = cfg_cqe_ro || flush_ro_reg;
assign m_wr_desc_id = ID_TAG;
assign m_wr_desc_valid = state_reg == ST_ISSUE;

assign m_rd_desc_pcie_addr = addr_reg;
assign m_rd_desc_len = 0;
assign m_rd_desc_id = ID_TAG;
assign m_rd_desc_valid = state_reg == ST_FLUSH_RD;

// bypass TLP: the CQE's dwords
wire [2:0] byp_fmt = addr_reg[63:32] != 0 ? 3'b011 : 3'b010;
wire [127:0] byp_hdr = {
    byp_fmt, 5'b00000, 1'b0, 3'd0, 1'b0, 1'b0, 1'b0, 1'b0, 1'b0, 1'b0, 2'b00, 2'b00, CQE_DW,
    cfg_requester_id, 8'd0, 4'hf, 4'hf,
    addr_reg[63:32] != 0 ? addr_reg[63:32] : {addr_reg[31:2], 2'b00},
    addr_reg[63:32] != 0 ? {addr_reg[31:2], 2'b00} : 32'd0
};
assign m_byp_tlp_hdr = byp_hdr;
assign m_byp_tlp_data = cqe_ext[beat_reg*DATA_W +: DATA_W];
assign m_byp_tlp_keep = {DATA_W/32{1'b1}} >> (DATA_W/32 - (DATA_W >= 8 * CQE_BYTES ? CQE_DW_I : DATA_W/32));
assign m_byp_tlp_valid = state_reg == ST_BYPASS;
assign m_byp_tlp_last = beat_reg == LAST_BEAT;

assign cq_notify = s_wr_status_valid || (state_reg == ST_BYPASS && m_byp_tlp_ready && m_byp_tlp_last);
assign cq_notify_cqn = state_reg == ST_BYPASS ? cqn_reg : notify_fifo[notify_rd_reg];

assign err_cq_disabled = err_reg;
assign err_cqn = cqn_reg;
assign stat_cqe = cq_notify;

integer i;
initial begin
    for (i = 0; i < 8; i = i + 1) begin
        notify_fifo[i] = {QN_W{1'b0}};
    end
end

always @(posedge clk) begin
    err_reg <= 1'b0;

    case (state_reg)
        ST_IDLE: begin
            if (s_req_valid) begin
                cqn_reg <= s_req_cqn;
                cqe_reg <= s_req_cqe;
                beat_reg <= 3'd0;
                flush_ro_reg <= 1'b0;
                state_reg <= ST_ALLOC;
            end
        end
        ST_ALLOC: begin
            addr_reg <= cq_alloc_addr;
            phase_reg <= cq_alloc_phase;
            // (done without either: full, ask again)
            if (!cq_alloc_valid || !cq_alloc_done) begin
                state_reg <= ST_ALLOC;
            end else if (cq_alloc_bad) begin
                err_reg <= 1'b1;
                state_reg <= ST_IDLE;
            end else if (cq_alloc_ok) begin
                if (cfg_bypass) begin
                    state_reg <= ST_BYPASS;
                end else if (cfg_cqe_flush && !cfg_cqe_ro) begin
                    state_reg <= ST_FLUSH_WAIT_WR;
                end else begin
                    state_reg <= ST_RAM;
                end
            end
        end
        ST_FLUSH_WAIT_WR: begin
            // the payload this CQE completes has been issued once the
            // engine is idle; only then may the flush read go out
            if (wr_engine_idle) begin
                state_reg <= ST_FLUSH_RD;
            end
        end
        ST_FLUSH_RD: begin
            if (m_rd_desc_ready) begin
                state_reg <= ST_FLUSH_WAIT_RD;
            end
        end
        ST_FLUSH_WAIT_RD: begin
            if (s_rd_status_valid) begin
                flush_ro_reg <= 1'b1;    // visibility proven: the CQE may be relaxed
                state_reg <= ST_RAM;
            end
        end
        ST_RAM: begin
            if (m_ram_wr_ready) begin
                if (beat_reg == LAST_BEAT) begin
                    state_reg <= ST_ISSUE;
                end else begin
                    beat_reg <= beat_reg + 3'd1;
                end
            end
        end
        ST_ISSUE: begin
            if (m_wr_desc_ready) begin
                notify_fifo[notify_wr_reg] <= cqn_reg;
                notify_wr_reg <= notify_wr_reg + 3'd1;
                slot_reg <= slot_reg + 3'd1;
                state_reg <= ST_IDLE;
            end
        end
        ST_BYPASS: begin
            if (m_byp_tlp_ready) begin
                if (beat_reg == LAST_BEAT) begin
                    state_reg <= ST_IDLE;
                end else begin
                    beat_reg <= beat_reg + 3'd1;
                end
            end
        end
        default: state_reg <= ST_IDLE;
    endcase

    if (s_wr_status_valid) begin
        notify_rd_reg <= notify_rd_reg + 3'd1;
    end
    inflight_reg <= inflight_reg + {3'd0, state_reg == ST_ISSUE && m_wr_desc_ready}
        - {3'd0, s_wr_status_valid};

    if (rst) begin
        state_reg <= ST_IDLE;
        slot_reg <= 3'd0;
        inflight_reg <= 4'd0;
        notify_wr_reg <= 3'd0;
        notify_rd_reg <= 3'd0;
        err_reg <= 1'b0;
    end
end

`ifdef FORMAL
// ---------------------------------------------------------------- formal
// Layer 4 inside the CQE writer, as assertions for hw/formal (yosys
// read_verilog -formal defines FORMAL; Verilator and synthesis never see
// this). They hold with every input; cfg_cqe_ro and cfg_bypass must make
// them fail (hw/formal/run.sh requires it). f_ro_flushed and f_no_bypass
// are proven by k-induction (hw/formal/README.md).

// the flush read of the CQE in hand has completed (cleared when the
// next request is taken, as flush_ro_reg is)
reg f_flushed = 1'b0;
// ... and it went out with the write engine idle
reg f_idle_seen = 1'b0;
always @(posedge clk) begin
    if (state_reg == ST_IDLE && s_req_valid) begin
        f_flushed <= 1'b0;
        f_idle_seen <= 1'b0;
    end
    if (state_reg == ST_FLUSH_WAIT_WR && wr_engine_idle) f_idle_seen <= 1'b1;
    if (state_reg == ST_FLUSH_WAIT_RD && s_rd_status_valid) f_flushed <= 1'b1;
end

// (formal_order builds with CQE_WRITER_ASSERTS_OFF, so that its own
// end-to-end assertions, not these, must catch the break switches there)
`ifndef CQE_WRITER_ASSERTS_OFF
always @* begin
    if (!rst) begin
        // a CQE written relaxed (RO=1) only once a flush read issued behind
        // every earlier write has completed; otherwise RO=0
        if (m_wr_desc_valid && m_wr_desc_ro) assert(f_flushed);              // f_ro_flushed
        // the flush read goes out only once the engine has issued
        // everything accepted before it
        if (m_rd_desc_valid) assert(f_idle_seen);                            // f_flush_idle
        // a CQE leaves only through the in-order write engine
        assert(!m_byp_tlp_valid);                                            // f_no_bypass
        // (the invariant the induction needs: the relaxed flag and the
        // completed flush read go together)
        assert(flush_ro_reg == f_flushed);                                   // f_ro_inv
    end
end
`endif
`endif

endmodule

`resetall
