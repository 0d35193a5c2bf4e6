// QP context cache (issue 19): the directory (qp_cache) joined to its fill
// and write-back engine (qpc_fill). A lookup (QP number, an opaque id, a pin
// flag) is answered with the on-chip slot that holds the QP's records; on a
// miss the directory picks a victim, and the engine writes the victim's
// record back to the host table (if it was dirty) and reads the QP's record
// from the table into the slot before the lookup is answered. The records
// themselves live in the core's slot-indexed record RAMs, which the engine
// reads and writes through the record port; the engine's record buffers are
// in the DMA RAM (the buffer port), and it moves them with the DMA engines'
// read and write descriptors.
//
// This block is the wiring only: qp_cache's m_fill goes to qpc_fill's
// s_fill, qpc_fill's m_done to qp_cache's s_fill_done. Both sides are
// registered where they leave a block (qp_cache's m_fill_* and qpc_fill's
// m_done_* and s_fill_ready are flops), so joining them adds no
// combinational path and no register: a fill command is taken the cycle
// it is offered if a buffer is free, and a completion costs qp_cache one
// operation slot of its pipeline. The order of the fill commands, which
// the engine's write-back-before-re-read hazard check relies on, is kept:
// one command at a time, in qp_cache's order (see both blocks).
//
// The contract of the ports is the sub-blocks'; in short:
//   - lookups (s_lk) are answered on m_lk (slot, qpn, id, err) in per-QP
//     order; err = 1 only when the QP's record could not be read (a DMA
//     read error or a QP beyond cfg_table_qps); a pinned answer's slot
//     stays the QP's until its unpin (s_unpin), and while pinned the core
//     may change the slot's record: the slot is then dirty and is written
//     back to the table when it is evicted;
//   - s_inval destroys a QP's cached record without a write-back
//     (m_inval_done, m_inval_busy when it is pinned or filling: retry);
//   - the record port reads (m_rec_rd: slot, word; data in request order,
//     any latency) and writes (m_rec_wr) the slots' REC_WORDS 64-bit words;
//   - the buffer port is the engine's port of the DMA RAM (requests held
//     until m_buf_wr_ready / m_buf_rd_ready, read data the cycle after the
//     read is taken); FILLS buffers of REC_WORDS * 8 bytes from BUF_BASE;
//   - DMA reads (host -> buffer; statuses by id, any order) and writes
//     (buffer -> host; statuses in descriptor order).
//
// Parameters are few on purpose: the DMA descriptor ids and the lookup ids
// share ID_W (the engine needs log2(FILLS) bits of it), and the descriptor
// length is LEN_W = 17 bits (up to 64 KiB, a record is at most 512 bytes).
//
// Counters (one-cycle pulses, registered in the sub-blocks, for the
// statistics registers outside): stat_hit, stat_miss (a fill), stat_evict
// (the victim was valid), stat_wb (the victim was dirty: a write-back
// asked), stat_stall (a pinned-full pass), stat_hwm (the miss queue's
// high-water mark, a register), stat_fill (a fill done ok), stat_fail (a
// fill failed, out-of-table ones included), stat_wb_dma (a write-back's
// descriptor taken), stat_oob (a fill of a QP beyond the table).
// err_proto: either block saw its contract broken (sticky until a reset).
//
// Reset: both blocks together; cached state is lost by design (the core
// resets the QPs' records with it).

`resetall
`timescale 1ns / 1ps
`default_nettype none

module qp_ctx_cache #(
    parameter QPN_W = 16,
    parameter SLOT_LOG = 6,
    parameter WAYS = 4,                 // 1, 2 or 4
    parameter MISSQ = 8,                // miss queue entries, 2..16
    parameter ID_W = 8,                 // lookup ids and DMA descriptor ids
    parameter PIN_W = 4,                // pin count bits per way
    parameter REC_WORDS = 16,           // 64-bit words per record, 2^k, 1..64
    parameter FILLS = 4,                // fills in flight, 1..4
    parameter RAM_ADDR_W = 17,
    parameter BUF_BASE = 0,             // DMA RAM byte address of the buffers
    parameter WORD_W = REC_WORDS > 1 ? $clog2(REC_WORDS) : 1
) (
    input  wire                  clk,
    input  wire                  rst,

    input  wire [63:0]           cfg_table_base,
    input  wire [QPN_W:0]        cfg_table_qps,

    // lookups and answers
    input  wire                  s_lk_valid,
    output wire                  s_lk_ready,
    input  wire [QPN_W-1:0]      s_lk_qpn,
    input  wire [ID_W-1:0]       s_lk_id,
    input  wire                  s_lk_pin,
    output wire                  m_lk_valid,
    input  wire                  m_lk_ready,
    output wire [SLOT_LOG-1:0]   m_lk_slot,
    output wire [QPN_W-1:0]      m_lk_qpn,
    output wire [ID_W-1:0]       m_lk_id,
    output wire                  m_lk_err,

    input  wire                  s_unpin_valid,
    output wire                  s_unpin_ready,
    input  wire [SLOT_LOG-1:0]   s_unpin_slot,

    input  wire                  s_inval_valid,
    output wire                  s_inval_ready,
    input  wire [QPN_W-1:0]      s_inval_qpn,
    output wire                  m_inval_done,
    output wire                  m_inval_busy,

    // record port: the core's slot-indexed record RAMs
    output wire                  m_rec_rd_valid,
    input  wire                  m_rec_rd_ready,
    output wire [SLOT_LOG-1:0]   m_rec_rd_slot,
    output wire [WORD_W-1:0]     m_rec_rd_word,
    input  wire                  s_rec_rd_data_valid,
    input  wire [63:0]           s_rec_rd_data,
    output wire                  m_rec_wr_valid,
    input  wire                  m_rec_wr_ready,
    output wire [SLOT_LOG-1:0]   m_rec_wr_slot,
    output wire [WORD_W-1:0]     m_rec_wr_word,
    output wire [63:0]           m_rec_wr_data,

    // the engine's port of the DMA RAM (read data one cycle later)
    output wire                  m_buf_wr_en,
    input  wire                  m_buf_wr_ready,
    output wire [RAM_ADDR_W-1:0] m_buf_wr_addr,
    output wire [63:0]           m_buf_wr_data,
    output wire                  m_buf_rd_en,
    input  wire                  m_buf_rd_ready,
    output wire [RAM_ADDR_W-1:0] m_buf_rd_addr,
    input  wire [63:0]           s_buf_rd_data,

    // DMA reads: host -> buffer
    output wire                  m_rd_desc_valid,
    input  wire                  m_rd_desc_ready,
    output wire [63:0]           m_rd_desc_pcie_addr,
    output wire [RAM_ADDR_W-1:0] m_rd_desc_ram_addr,
    output wire [16:0]           m_rd_desc_len,
    output wire [ID_W-1:0]       m_rd_desc_id,
    input  wire                  s_rd_status_valid,
    input  wire [ID_W-1:0]       s_rd_status_id,
    input  wire [3:0]            s_rd_status_error,

    // DMA writes: buffer -> host (statuses in descriptor order)
    output wire                  m_wr_desc_valid,
    input  wire                  m_wr_desc_ready,
    output wire [63:0]           m_wr_desc_pcie_addr,
    output wire [RAM_ADDR_W-1:0] m_wr_desc_ram_addr,
    output wire [16:0]           m_wr_desc_len,
    output wire [ID_W-1:0]       m_wr_desc_id,
    input  wire                  s_wr_status_valid,

    output wire                  stat_hit,
    output wire                  stat_miss,
    output wire                  stat_evict,
    output wire                  stat_wb,
    output wire                  stat_stall,
    output wire [4:0]            stat_hwm,
    output wire                  stat_fill,
    output wire                  stat_fail,
    output wire                  stat_wb_dma,
    output wire                  stat_oob,
    output wire                  busy,
    output wire                  sweeping,
    output reg                   err_proto = 1'b0
);

localparam LEN_W = 17;

// The sub-blocks check their own parameters; these are the ones the join
// adds: the engine's widths must be the directory's, and the engine names
// its buffers with the shared ID_W.
initial begin
    if (WORD_W != (REC_WORDS > 1 ? $clog2(REC_WORDS) : 1)) begin
        $error("qp_ctx_cache: WORD_W is derived from REC_WORDS, do not set it");
        $finish;
    end
    if (ID_W < (FILLS > 1 ? $clog2(FILLS) : 1)) begin
        $error("qp_ctx_cache: ID_W must name one of the FILLS buffers");
        $finish;
    end
    if (QPN_W > 24 || SLOT_LOG > 14) begin
        $error("qp_ctx_cache: QPN_W at most 24, SLOT_LOG at most 14");
        $finish;
    end
end

// qp_cache -> qpc_fill: fill commands (registered in qp_cache)
wire                fill_valid;
wire                fill_ready;
wire [SLOT_LOG-1:0] fill_slot;
wire [QPN_W-1:0]    fill_qpn;
wire                fill_wb;
wire [QPN_W-1:0]    fill_wb_qpn;

// qpc_fill -> qp_cache: completions (registered in qpc_fill)
wire                done_valid;
wire                done_ready;
wire [SLOT_LOG-1:0] done_slot;
wire                done_ok;

// the record write port, named here so that the port is one place
wire                rec_wr_valid;

wire err_cache;
wire err_fill;

qp_cache #(
    .QPN_W(QPN_W),
    .SLOT_LOG(SLOT_LOG),
    .WAYS(WAYS),
    .MISSQ(MISSQ),
    .ID_W(ID_W),
    .PIN_W(PIN_W)
) dir (
    .clk(clk),
    .rst(rst),
    .s_lk_valid(s_lk_valid),
    .s_lk_ready(s_lk_ready),
    .s_lk_qpn(s_lk_qpn),
    .s_lk_id(s_lk_id),
    .s_lk_pin(s_lk_pin),
    .m_lk_valid(m_lk_valid),
    .m_lk_ready(m_lk_ready),
    .m_lk_slot(m_lk_slot),
    .m_lk_qpn(m_lk_qpn),
    .m_lk_id(m_lk_id),
    .m_lk_err(m_lk_err),
    .m_fill_valid(fill_valid),
    .m_fill_ready(fill_ready),
    .m_fill_slot(fill_slot),
    .m_fill_qpn(fill_qpn),
    .m_fill_wb(fill_wb),
    .m_fill_wb_qpn(fill_wb_qpn),
    .s_fill_done_valid(done_valid),
    .s_fill_done_ready(done_ready),
    .s_fill_done_slot(done_slot),
    .s_fill_done_ok(done_ok),
    .s_unpin_valid(s_unpin_valid),
    .s_unpin_ready(s_unpin_ready),
    .s_unpin_slot(s_unpin_slot),
    .s_inval_valid(s_inval_valid),
    .s_inval_ready(s_inval_ready),
    .s_inval_qpn(s_inval_qpn),
    .m_inval_done(m_inval_done),
    .m_inval_busy(m_inval_busy),
    .stat_hit(stat_hit),
    .stat_miss(stat_miss),
    .stat_evict(stat_evict),
    .stat_wb(stat_wb),
    .stat_stall(stat_stall),
    .stat_hwm(stat_hwm),
    .err_proto(err_cache),
    .sweeping(sweeping)
);

qpc_fill #(
    .QPN_W(QPN_W),
    .SLOT_LOG(SLOT_LOG),
    .REC_WORDS(REC_WORDS),
    .FILLS(FILLS),
    .ID_W(ID_W),
    .LEN_W(LEN_W),
    .RAM_ADDR_W(RAM_ADDR_W),
    .BUF_BASE(BUF_BASE)
) eng (
    .clk(clk),
    .rst(rst),
    .cfg_table_base(cfg_table_base),
    .cfg_table_qps(cfg_table_qps),
    .s_fill_valid(fill_valid),
    .s_fill_ready(fill_ready),
    .s_fill_slot(fill_slot),
    .s_fill_qpn(fill_qpn),
    .s_fill_wb(fill_wb),
    .s_fill_wb_qpn(fill_wb_qpn),
    .m_done_valid(done_valid),
    .m_done_ready(done_ready),
    .m_done_slot(done_slot),
    .m_done_ok(done_ok),
    .m_rec_rd_valid(m_rec_rd_valid),
    .m_rec_rd_ready(m_rec_rd_ready),
    .m_rec_rd_slot(m_rec_rd_slot),
    .m_rec_rd_word(m_rec_rd_word),
    .s_rec_rd_data_valid(s_rec_rd_data_valid),
    .s_rec_rd_data(s_rec_rd_data),
    .m_rec_wr_valid(rec_wr_valid),
    .m_rec_wr_ready(m_rec_wr_ready),
    .m_rec_wr_slot(m_rec_wr_slot),
    .m_rec_wr_word(m_rec_wr_word),
    .m_rec_wr_data(m_rec_wr_data),
    .m_buf_wr_en(m_buf_wr_en),
    .m_buf_wr_ready(m_buf_wr_ready),
    .m_buf_wr_addr(m_buf_wr_addr),
    .m_buf_wr_data(m_buf_wr_data),
    .m_buf_rd_en(m_buf_rd_en),
    .m_buf_rd_ready(m_buf_rd_ready),
    .m_buf_rd_addr(m_buf_rd_addr),
    .s_buf_rd_data(s_buf_rd_data),
    .m_rd_desc_valid(m_rd_desc_valid),
    .m_rd_desc_ready(m_rd_desc_ready),
    .m_rd_desc_pcie_addr(m_rd_desc_pcie_addr),
    .m_rd_desc_ram_addr(m_rd_desc_ram_addr),
    .m_rd_desc_len(m_rd_desc_len),
    .m_rd_desc_id(m_rd_desc_id),
    .s_rd_status_valid(s_rd_status_valid),
    .s_rd_status_id(s_rd_status_id),
    .s_rd_status_error(s_rd_status_error),
    .m_wr_desc_valid(m_wr_desc_valid),
    .m_wr_desc_ready(m_wr_desc_ready),
    .m_wr_desc_pcie_addr(m_wr_desc_pcie_addr),
    .m_wr_desc_ram_addr(m_wr_desc_ram_addr),
    .m_wr_desc_len(m_wr_desc_len),
    .m_wr_desc_id(m_wr_desc_id),
    .s_wr_status_valid(s_wr_status_valid),
    .stat_fill(stat_fill),
    .stat_wb(stat_wb_dma),
    .stat_fail(stat_fail),
    .stat_oob(stat_oob),
    .busy(busy),
    .err_proto(err_fill)
);

assign m_rec_wr_valid = rec_wr_valid;

// one flag for the status register; a register so that it is one flop's
// output like every other flag here (both inputs are sticky flops)
always @(posedge clk) begin
    err_proto <= rst ? 1'b0 : err_cache | err_fill;
end

endmodule

`resetall
