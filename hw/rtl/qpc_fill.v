// QP context cache: the fill and write-back engine (issue 19). qp_cache is
// the cache's directory; its fill commands (m_fill: slot, qpn, wb, wb_qpn)
// come here, and this block moves the records: the write-back of the slot's
// record to wb_qpn's place in the host table (if wb), then the read of
// qpn's record from the table into the slot; one completion for both
// (m_done: slot, ok) goes back to qp_cache's s_fill_done.
//
// The table. Record q of the host table is at cfg_table_base + q *
// REC_BYTES (REC_BYTES = REC_WORDS * 8, the table aligned to it); the table
// holds cfg_table_qps records. A fill of a qpn >= cfg_table_qps has no
// record: it is done with ok = 0 and nothing is read (stat_oob), as a read
// error would be (qp_cache answers the QP's lookups with an error). A
// write-back of a wb_qpn >= cfg_table_qps (the table shrunk under a cached
// QP: a driver error) is dropped, so that no DMA ever leaves [base, base +
// qps * REC_BYTES), and raises err_proto: that QP's state is lost, and
// the driver must hear of it.
//
// Buffers. FILLS record buffers (buffer b at RAM address BUF_BASE + b *
// 2 * REC_BYTES, in the DMA RAM the DMA engines read and write), one per
// fill in flight; a fill command is taken when a buffer is free
// (s_fill_ready, a register). A buffer has two halves: the write-back's
// (the slot's old record on its way out) and, REC_BYTES above it, the
// read's (the new record on its way in), so a fill's read is issued as
// soon as the fill is taken and runs while its write-back is copied out
// and written: an evicting fill costs about what a plain one does instead
// of the two in a row. A fill's buffer goes through
//   WBCP    the slot's REC_WORDS words copied through the record port into
//           the write-back half (only with wb);
//   WBDESC  the write descriptor (that half -> wb_qpn's record) waits for
//           the write-descriptor register;
//   RD      waiting for the read: once its status has come, CPIN, or on
//           an error DONE with ok = 0 and the slot untouched;
//   CPIN    the read half's words copied through the record port into the
//           slot;
//   DONE    the completion waits for the m_done register, and for the
//           write's status (the write engine may still be reading the
//           write-back half, and the hazard below needs the flag); the
//           buffer is free once the completion is loaded there.
// Beside these, each buffer's read (from the take on): the table bound is
// checked (out: done with ok = 0, nothing read), then the read descriptor
// (qpn's record -> the read half, id = the buffer's number) waits for the
// read-descriptor register and for the hazard below, then its status.
// CPIN comes after WBCP, so the slot is copied out before it is written.
//
// The hazard. A QP written back by one fill (wb_qpn = X) and missed again
// at once is filled by a later command into another slot (qpn = X); a
// fill may also write a record back and load the same one (qpn = wb_qpn:
// qp_ctx_table's save). Such a read must not be issued before the
// write-back's status: the status says the write's TLPs have left, and a
// read request issued afterwards cannot pass them on PCIe, so the read
// returns what the write-back wrote. Each buffer keeps a flag, wbp, set
// when its fill is taken with a write-back and cleared when that write's
// status comes; a buffer does not issue its read while any buffer, itself
// included, has wbp set with wb_qpn equal to its qpn (a compare of every
// buffer's qpn with every wb_qpn). Commands
// are taken in order, so a write-back command taken before the re-miss's
// is always seen. This relies on the commands coming in the order qp_cache
// made them: the one that evicts X before any fill of X into another slot,
// which qp_cache guarantees (its commands leave a ring in the order they
// were made; its bench checks it from the ports).
//
// Statuses. Read statuses come in any order and name the buffer by id; one
// for a buffer not waiting for a read (or an id >= FILLS) is a protocol
// error (err_proto, sticky). Write statuses carry no id: the write engine
// completes in descriptor order, so the buffers of accepted write
// descriptors are queued (FILLS entries) and a status pops the oldest; a
// status with the queue empty is a protocol error.
//
// Arbitration. The record port and the engine's buffer port serve one copy
// at a time (a copy is REC_WORDS words, either way). When the copy engine
// is idle it takes the next buffer in WBCP or CPIN after the one it served
// last (round robin over the buffers: none waits for more than FILLS - 1
// copies); a copy starts the cycle after the previous one ended, so the
// buffer port never writes and reads in one cycle. The descriptor registers
// and the completion register each take the lowest-numbered buffer that
// waits for them (a buffer passes each once per fill).
//
// Copies. Both go through one 4-word FIFO, a read issued only while the
// FIFO and the reads in flight leave room. Slot -> buffer: record reads
// (answers in request order, any latency) into the FIFO, the FIFO feeding
// the buffer-write register; the copy is over when the last buffer write
// is taken, and only then is the write descriptor made. Buffer -> slot:
// buffer reads (data the cycle after the read is taken) into the FIFO,
// the FIFO feeding the record-write register; the copy is over when the
// last record write is taken, and only then is the fill done.
//
// The buffer port has back-pressure on both sides (m_buf_wr_ready,
// m_buf_rd_ready): in the core the buffers are in the staging RAM, whose
// ports the DMA engines go first on. A write or a read request is held,
// address and data unchanged, until its ready.
//
// Reset drops every fill in flight and every copy; the DMA engines and the
// record port's read pipeline reset with it (no status or record data for
// work from before the reset comes afterwards).
//
// Counters, one-cycle pulses (registered): stat_fill (a completion with ok
// = 1 taken by m_done), stat_fail (with ok = 0, out-of-table ones too),
// stat_wb (a write descriptor taken), stat_oob (a fill found beyond the
// table). busy: a fill in flight (a buffer not free, or a completion not
// taken).

`resetall
`timescale 1ns / 1ps
`default_nettype none

module qpc_fill #(
    parameter QPN_W = 16,
    parameter SLOT_LOG = 6,
    parameter REC_WORDS = 16,           // 64-bit words per record, 2^k, 1..64
    parameter FILLS = 2,                // fills in flight (buffers), 1..4
    parameter ID_W = 8,
    parameter LEN_W = 17,
    parameter RAM_ADDR_W = 17,
    parameter BUF_BASE = 0,             // RAM byte address of buffer 0
    parameter WORD_W = REC_WORDS > 1 ? $clog2(REC_WORDS) : 1
) (
    input  wire                  clk,
    input  wire                  rst,

    input  wire [63:0]           cfg_table_base,
    input  wire [QPN_W:0]        cfg_table_qps,

    // fill commands (qp_cache's m_fill)
    input  wire                  s_fill_valid,
    output reg                   s_fill_ready = 1'b0,
    input  wire [SLOT_LOG-1:0]   s_fill_slot,
    input  wire [QPN_W-1:0]      s_fill_qpn,
    input  wire                  s_fill_wb,
    input  wire [QPN_W-1:0]      s_fill_wb_qpn,

    // completions (qp_cache's s_fill_done)
    output reg                   m_done_valid = 1'b0,
    input  wire                  m_done_ready,
    output reg  [SLOT_LOG-1:0]   m_done_slot = {SLOT_LOG{1'b0}},
    output reg                   m_done_ok = 1'b0,

    // record port: the slot-indexed record RAMs
    output reg                   m_rec_rd_valid = 1'b0,
    input  wire                  m_rec_rd_ready,
    output reg  [SLOT_LOG-1:0]   m_rec_rd_slot = {SLOT_LOG{1'b0}},
    output reg  [WORD_W-1:0]     m_rec_rd_word = {WORD_W{1'b0}},
    input  wire                  s_rec_rd_data_valid,
    input  wire [63:0]           s_rec_rd_data,
    output reg                   m_rec_wr_valid = 1'b0,
    input  wire                  m_rec_wr_ready,
    output reg  [SLOT_LOG-1:0]   m_rec_wr_slot = {SLOT_LOG{1'b0}},
    output reg  [WORD_W-1:0]     m_rec_wr_word = {WORD_W{1'b0}},
    output reg  [63:0]           m_rec_wr_data = 64'd0,

    // the engine's port of the buffer RAM: requests held until their ready,
    // read data the cycle after the read is taken
    output reg                   m_buf_wr_en = 1'b0,
    input  wire                  m_buf_wr_ready,
    output reg  [RAM_ADDR_W-1:0] m_buf_wr_addr = {RAM_ADDR_W{1'b0}},
    output reg  [63:0]           m_buf_wr_data = 64'd0,
    output reg                   m_buf_rd_en = 1'b0,
    input  wire                  m_buf_rd_ready,
    output reg  [RAM_ADDR_W-1:0] m_buf_rd_addr = {RAM_ADDR_W{1'b0}},
    input  wire [63:0]           s_buf_rd_data,

    // DMA reads: host -> buffer
    output reg                   m_rd_desc_valid = 1'b0,
    input  wire                  m_rd_desc_ready,
    output reg  [63:0]           m_rd_desc_pcie_addr = 64'd0,
    output reg  [RAM_ADDR_W-1:0] m_rd_desc_ram_addr = {RAM_ADDR_W{1'b0}},
    output reg  [LEN_W-1:0]      m_rd_desc_len = {LEN_W{1'b0}},
    output reg  [ID_W-1:0]       m_rd_desc_id = {ID_W{1'b0}},
    input  wire                  s_rd_status_valid,
    input  wire [ID_W-1:0]       s_rd_status_id,
    input  wire [3:0]            s_rd_status_error,

    // DMA writes: buffer -> host (statuses in descriptor order)
    output reg                   m_wr_desc_valid = 1'b0,
    input  wire                  m_wr_desc_ready,
    output reg  [63:0]           m_wr_desc_pcie_addr = 64'd0,
    output reg  [RAM_ADDR_W-1:0] m_wr_desc_ram_addr = {RAM_ADDR_W{1'b0}},
    output reg  [LEN_W-1:0]      m_wr_desc_len = {LEN_W{1'b0}},
    output reg  [ID_W-1:0]       m_wr_desc_id = {ID_W{1'b0}},
    input  wire                  s_wr_status_valid,

    output reg                   stat_fill = 1'b0,
    output reg                   stat_wb = 1'b0,
    output reg                   stat_fail = 1'b0,
    output reg                   stat_oob = 1'b0,
    output reg                   busy = 1'b0,
    output reg                   err_proto = 1'b0
);

localparam WL = REC_WORDS > 1 ? $clog2(REC_WORDS) : 0;
localparam CW = WL + 1;                     // a word count, 0..REC_WORDS
localparam RB_LOG = WL + 3;                 // log2(REC_BYTES)
localparam integer REC_BYTES = REC_WORDS * 8;
localparam BW = FILLS > 1 ? $clog2(FILLS) : 1;
localparam QD = 4;                          // copy-in FIFO words

initial begin
    if (REC_WORDS < 1 || REC_WORDS > 64 || (REC_WORDS & (REC_WORDS - 1)) != 0) begin
        $error("qpc_fill: REC_WORDS must be a power of two, 1..64");
        $finish;
    end
    if (FILLS < 1 || FILLS > 4) begin
        $error("qpc_fill: FILLS must be 1..4");
        $finish;
    end
    if (WORD_W != (REC_WORDS > 1 ? $clog2(REC_WORDS) : 1)) begin
        $error("qpc_fill: WORD_W is derived from REC_WORDS, do not set it");
        $finish;
    end
    if (QPN_W < 1 || QPN_W > 24 || SLOT_LOG < 1 || SLOT_LOG > 16) begin
        $error("qpc_fill: QPN_W must be 1..24, SLOT_LOG 1..16");
        $finish;
    end
    if (ID_W < BW || LEN_W < RB_LOG + 1 || LEN_W > 32) begin
        $error("qpc_fill: ID_W must name a buffer, LEN_W hold REC_BYTES (at most 32)");
        $finish;
    end
    if (RAM_ADDR_W > 32 || RAM_ADDR_W < CW + 3 || BUF_BASE < 0 || BUF_BASE % 8 != 0
        || BUF_BASE + FILLS * 2 * REC_BYTES > (1 << RAM_ADDR_W)) begin
        $error("qpc_fill: the buffers must fit RAM_ADDR_W (at most 32), BUF_BASE 8-byte aligned");
        $finish;
    end
end

localparam integer FILLS_I = FILLS;
localparam [BW:0] N_BUF = FILLS_I[BW:0];
localparam [ID_W-1:0] N_ID = FILLS_I[ID_W-1:0];

localparam [2:0] B_FREE = 3'd0;
localparam [2:0] B_WBCP = 3'd1;
localparam [2:0] B_WBDESC = 3'd2;
localparam [2:0] B_RD = 3'd4;
localparam [2:0] B_CPIN = 3'd6;
localparam [2:0] B_DONE = 3'd7;

localparam integer RW_I = REC_WORDS;
localparam integer RWL_I = REC_WORDS - 1;
localparam integer BASE_I = BUF_BASE;
localparam [CW-1:0] N_WORDS = RW_I[CW-1:0];
localparam [CW-1:0] LAST_W = RWL_I[CW-1:0];
localparam [LEN_W-1:0] REC_LEN = REC_BYTES[LEN_W-1:0];
localparam [RAM_ADDR_W-1:0] BASE_A = BASE_I[RAM_ADDR_W-1:0];
localparam [RAM_ADDR_W-1:0] STRIDE_A = REC_BYTES[RAM_ADDR_W-1:0];

// ---------------------------------------------------------------- state
// per buffer (in flops)
(* mem2reg *) reg [2:0]          st [0:FILLS-1];
(* mem2reg *) reg [SLOT_LOG-1:0] b_slot [0:FILLS-1];
(* mem2reg *) reg [QPN_W-1:0]    b_qpn [0:FILLS-1];
(* mem2reg *) reg [QPN_W-1:0]    b_wbq [0:FILLS-1];
reg [FILLS-1:0] wbp = {FILLS{1'b0}};    // write-back of b_wbq taken, status not seen
reg [FILLS-1:0] b_ok = {FILLS{1'b0}};   // the read's status was ok
reg [FILLS-1:0] rq = {FILLS{1'b0}};     // the read is still to be issued
reg [FILLS-1:0] rd_iss = {FILLS{1'b0}}; // the read descriptor was taken, no status yet
reg [FILLS-1:0] rdn = {FILLS{1'b0}};    // the read is over (status, or out of the table)

// the descriptor registers' buffers
reg [BW-1:0] rdd_buf = {BW{1'b0}};
reg [BW-1:0] wrd_buf = {BW{1'b0}};

// buffers of the accepted write descriptors, oldest at 0
(* mem2reg *) reg [BW-1:0] wq [0:FILLS-1];
reg [BW:0] wq_cnt = {(BW+1){1'b0}};

// copy engine
reg          cp_act = 1'b0;
reg          cp_in = 1'b0;                  // buffer -> slot
reg [BW-1:0] cp_buf = {BW{1'b0}};
reg [BW-1:0] cp_rr = {BW{1'b0}};            // the buffer served last
reg [CW-1:0] cp_req = {CW{1'b0}};           // reads issued (slot or buffer)
reg [CW-1:0] cp_rsp = {CW{1'b0}};           // writes taken (buffer or slot)
reg [CW-1:0] cp_wi = {CW{1'b0}};            // words loaded into the write register
reg          rd_pend = 1'b0;                // a buffer read's data is on s_buf_rd_data
reg [2:0]    rec_fly = 3'd0;                // record reads taken, not answered
(* mem2reg *) reg [63:0] q_d [0:QD-1];
reg [2:0]    q_cnt = 3'd0;

integer i;
initial begin
    for (i = 0; i < FILLS; i = i + 1) begin
        st[i] = B_FREE;
        b_slot[i] = {SLOT_LOG{1'b0}};
        b_qpn[i] = {QPN_W{1'b0}};
        b_wbq[i] = {QPN_W{1'b0}};
        wq[i] = {BW{1'b0}};
    end
    for (i = 0; i < QD; i = i + 1) begin
        q_d[i] = 64'd0;
    end
end

// buffer b's word w, in its write-back half (h = 0) or its read half
// (h = 1) (the initial block checks that it fits RAM_ADDR_W)
function [RAM_ADDR_W-1:0] buf_addr(input [BW-1:0] b, input h, input [CW-1:0] w);
    begin
        buf_addr = BASE_A + STRIDE_A * {{(RAM_ADDR_W-BW-1){1'b0}}, b, h}
            + {{(RAM_ADDR_W-CW-3){1'b0}}, w, 3'b000};
    end
endfunction

function [63:0] rec_addr(input [QPN_W-1:0] q);
    reg [63:0] off;
    begin
        off = {{(64-QPN_W){1'b0}}, q} << RB_LOG;
        rec_addr = cfg_table_base + off;
    end
endfunction

// ---------------------------------------------------------------- picks
reg [FILLS-1:0] haz, oob, is_free;
reg          cp_any, rd_any, oob_any, wr_any, dn_any, ev_any;
reg [BW-1:0] free_idx, cp_pick, rd_pick, oob_pick, wr_pick, dn_pick, ev_pick;
reg [BW:0]   rr_i;
integer c;
always @* begin
    cp_any = 1'b0; rd_any = 1'b0; oob_any = 1'b0; wr_any = 1'b0; dn_any = 1'b0;
    ev_any = 1'b0;
    free_idx = {BW{1'b0}}; cp_pick = {BW{1'b0}}; rd_pick = {BW{1'b0}};
    oob_pick = {BW{1'b0}}; wr_pick = {BW{1'b0}}; dn_pick = {BW{1'b0}};
    ev_pick = {BW{1'b0}};
    rr_i = {(BW+1){1'b0}};
    for (i = 0; i < FILLS; i = i + 1) begin
        is_free[i] = st[i] == B_FREE;
        oob[i] = {1'b0, b_qpn[i]} >= cfg_table_qps;
        // the hazard: a write-back of this QP not yet statused (another
        // buffer's, or this one's: a save writes a record back and loads
        // it again)
        haz[i] = 1'b0;
        for (c = 0; c < FILLS; c = c + 1) begin
            if (wbp[c] && b_wbq[c] == b_qpn[i]) begin
                haz[i] = 1'b1;
            end
        end
    end
    // lowest first (the loops run downwards: the last match wins)
    for (i = FILLS - 1; i >= 0; i = i - 1) begin
        if (is_free[i]) begin
            free_idx = i[BW-1:0];
        end
        if (rq[i] && !oob[i] && !haz[i]) begin
            rd_any = 1'b1;
            rd_pick = i[BW-1:0];
        end
        if (rq[i] && oob[i]) begin
            oob_any = 1'b1;
            oob_pick = i[BW-1:0];
        end
        if (st[i] == B_WBDESC) begin
            wr_any = 1'b1;
            wr_pick = i[BW-1:0];
        end
        // the read over, and the slot copied out if it had to be
        if (st[i] == B_RD && rdn[i]) begin
            ev_any = 1'b1;
            ev_pick = i[BW-1:0];
        end
        if (st[i] == B_DONE && !wbp[i]) begin
            dn_any = 1'b1;
            dn_pick = i[BW-1:0];
        end
    end
    // the copy engine: round robin, starting after the buffer served last
    for (i = FILLS; i >= 1; i = i - 1) begin
        rr_i = {1'b0, cp_rr} + i[BW:0];
        if (rr_i >= N_BUF) begin
            rr_i = rr_i - N_BUF;
        end
        if (st[rr_i[BW-1:0]] == B_WBCP || st[rr_i[BW-1:0]] == B_CPIN) begin
            cp_any = 1'b1;
            cp_pick = rr_i[BW-1:0];
        end
    end
end

// handshakes
wire take_fill = s_fill_valid && s_fill_ready;
wire wb_go = s_fill_wb && {1'b0, s_fill_wb_qpn} < cfg_table_qps;
wire rdd_take = m_rd_desc_valid && m_rd_desc_ready;
wire wrd_take = m_wr_desc_valid && m_wr_desc_ready;
wire dn_take = m_done_valid && m_done_ready;
wire rdd_load = rd_any && (!m_rd_desc_valid || m_rd_desc_ready);
wire wrd_load = wr_any && (!m_wr_desc_valid || m_wr_desc_ready);
wire dn_load = dn_any && (!m_done_valid || m_done_ready);
wire cp_start = !cp_act && cp_any;
wire [BW-1:0] rs_b = s_rd_status_id[BW-1:0];
wire rs_bad = s_rd_status_id >= N_ID || !rd_iss[rs_b];
wire rs_err = s_rd_status_error != 4'd0;
// the copy's writes and reads as they are taken
wire bw_take = m_buf_wr_en && m_buf_wr_ready;
wire br_take = m_buf_rd_en && m_buf_rd_ready;
wire rw_take = m_rec_wr_valid && m_rec_wr_ready;
wire rr_take = m_rec_rd_valid && m_rec_rd_ready;
// copy-out: the last buffer write is taken
wire out_last = cp_act && !cp_in && bw_take && cp_rsp == LAST_W;
// copy-in: the last record write is taken
wire in_last = cp_act && cp_in && rw_take && cp_rsp == LAST_W;
// the FIFO: pushed by the reads' answers, popped into the write register
wire q_in = cp_in ? rd_pend : s_rec_rd_data_valid;
wire [63:0] q_in_d = cp_in ? s_buf_rd_data : s_rec_rd_data;
wire q_pop = cp_act && q_cnt != 3'd0
    && (cp_in ? !m_rec_wr_valid || m_rec_wr_ready : !m_buf_wr_en || m_buf_wr_ready);
wire [2:0] q_fly = q_cnt + (cp_in ? {2'b00, m_buf_rd_en} + {2'b00, rd_pend}
    : {2'b00, m_rec_rd_valid} + rec_fly);
wire rd_issue = cp_act && cp_req != N_WORDS && q_fly < QD
    && (cp_in ? !m_buf_rd_en || m_buf_rd_ready : !m_rec_rd_valid || m_rec_rd_ready);

// (modulo 2^BW and 4: wq_cnt - 1 < FILLS, q_cnt - q_pop < QD where used)
wire [BW-1:0] wq_last = wq_cnt[BW-1:0] - 1'b1;
wire [1:0] q_push = q_cnt[1:0] - {1'b0, q_pop};

reg [FILLS-1:0] free_n;
always @* begin
    free_n = is_free;
    if (take_fill) begin
        free_n[free_idx] = 1'b0;
    end
    if (dn_load) begin
        free_n[dn_pick] = 1'b1;
    end
end

always @(posedge clk) begin
    stat_fill <= 1'b0;
    stat_fail <= 1'b0;
    stat_wb <= 1'b0;
    stat_oob <= 1'b0;
    s_fill_ready <= free_n != {FILLS{1'b0}};
    busy <= ~free_n != {FILLS{1'b0}} || dn_load || (m_done_valid && !m_done_ready);

    // a fill taken
    if (take_fill) begin
        st[free_idx] <= wb_go ? B_WBCP : B_RD;
        wbp[free_idx] <= wb_go;
        b_slot[free_idx] <= s_fill_slot;
        b_qpn[free_idx] <= s_fill_qpn;
        b_wbq[free_idx] <= s_fill_wb_qpn;
        b_ok[free_idx] <= 1'b0;
        rq[free_idx] <= 1'b1;
        rd_iss[free_idx] <= 1'b0;
        rdn[free_idx] <= 1'b0;
    end

    // ---- write-backs
    if (wrd_take) begin
        m_wr_desc_valid <= 1'b0;
        stat_wb <= 1'b1;
    end
    if (wrd_load) begin
        m_wr_desc_valid <= 1'b1;
        m_wr_desc_pcie_addr <= rec_addr(b_wbq[wr_pick]);
        m_wr_desc_ram_addr <= buf_addr(wr_pick, 1'b0, {CW{1'b0}});
        m_wr_desc_len <= REC_LEN;
        m_wr_desc_id <= {{(ID_W-BW){1'b0}}, wr_pick};
        wrd_buf <= wr_pick;
        st[wr_pick] <= B_RD;
    end
    // the queue of written buffers: pop on a status, push on a taken
    // descriptor
    if (s_wr_status_valid && wq_cnt == {(BW+1){1'b0}}) begin
        err_proto <= 1'b1;
    end
    if (take_fill && s_fill_wb && !wb_go) begin
        err_proto <= 1'b1;
    end
    if (s_wr_status_valid && wq_cnt != {(BW+1){1'b0}}) begin
        wbp[wq[0]] <= 1'b0;
        for (i = 0; i < FILLS - 1; i = i + 1) begin
            wq[i] <= wq[i + 1];
        end
        if (wrd_take) begin
            wq[wq_last] <= wrd_buf;
        end else begin
            wq_cnt <= wq_cnt - 1'b1;
        end
    end else if (wrd_take) begin
        wq[wq_cnt[BW-1:0]] <= wrd_buf;  // (wq_cnt < FILLS here)
        wq_cnt <= wq_cnt + 1'b1;
    end

    // ---- reads
    if (oob_any) begin
        rq[oob_pick] <= 1'b0;
        rdn[oob_pick] <= 1'b1;
        b_ok[oob_pick] <= 1'b0;
        stat_oob <= 1'b1;
    end
    if (rdd_take) begin
        m_rd_desc_valid <= 1'b0;
        rd_iss[rdd_buf] <= 1'b1;
    end
    if (rdd_load) begin
        m_rd_desc_valid <= 1'b1;
        m_rd_desc_pcie_addr <= rec_addr(b_qpn[rd_pick]);
        m_rd_desc_ram_addr <= buf_addr(rd_pick, 1'b1, {CW{1'b0}});
        m_rd_desc_len <= REC_LEN;
        m_rd_desc_id <= {{(ID_W-BW){1'b0}}, rd_pick};
        rdd_buf <= rd_pick;
        rq[rd_pick] <= 1'b0;
    end
    if (s_rd_status_valid) begin
        if (rs_bad) begin
            err_proto <= 1'b1;
        end else begin
            rdn[rs_b] <= 1'b1;
            b_ok[rs_b] <= !rs_err;
            rd_iss[rs_b] <= 1'b0;
        end
    end
    if (ev_any) begin
        st[ev_pick] <= b_ok[ev_pick] ? B_CPIN : B_DONE;
    end

    // ---- completions
    if (dn_take) begin
        m_done_valid <= 1'b0;
        stat_fill <= m_done_ok;
        stat_fail <= !m_done_ok;
    end
    if (dn_load) begin
        m_done_valid <= 1'b1;
        m_done_slot <= b_slot[dn_pick];
        m_done_ok <= b_ok[dn_pick];
        st[dn_pick] <= B_FREE;
    end

    // ---- the copy engine
    if (cp_start) begin
        cp_act <= 1'b1;
        cp_in <= st[cp_pick] == B_CPIN;
        cp_buf <= cp_pick;
        cp_rr <= cp_pick;
        cp_req <= {CW{1'b0}};
        cp_rsp <= {CW{1'b0}};
        cp_wi <= {CW{1'b0}};
        m_rec_wr_slot <= b_slot[cp_pick];
        m_rec_rd_slot <= b_slot[cp_pick];
    end
    // reads: the slot's words (copy-out) or the buffer's (copy-in), in
    // order, while the FIFO and the reads in flight leave room
    if (rr_take) begin
        m_rec_rd_valid <= 1'b0;
    end
    if (br_take) begin
        m_buf_rd_en <= 1'b0;
    end
    if (rd_issue) begin
        if (cp_in) begin
            m_buf_rd_en <= 1'b1;
            m_buf_rd_addr <= buf_addr(cp_buf, 1'b1, cp_req);
        end else begin
            m_rec_rd_valid <= 1'b1;
            m_rec_rd_word <= cp_req[WORD_W-1:0];
        end
        cp_req <= cp_req + 1'b1;
    end
    rd_pend <= br_take;
    rec_fly <= rec_fly + {2'b00, rr_take} - {2'b00, s_rec_rd_data_valid && rec_fly != 3'd0};
    // writes: the FIFO's head into the buffer-write or record-write register
    if (bw_take) begin
        m_buf_wr_en <= 1'b0;
        cp_rsp <= cp_rsp + 1'b1;
    end
    if (rw_take) begin
        m_rec_wr_valid <= 1'b0;
        cp_rsp <= cp_rsp + 1'b1;
    end
    if (q_pop) begin
        if (cp_in) begin
            m_rec_wr_valid <= 1'b1;
            m_rec_wr_data <= q_d[0];
            m_rec_wr_word <= cp_wi[WORD_W-1:0];
        end else begin
            m_buf_wr_en <= 1'b1;
            m_buf_wr_addr <= buf_addr(cp_buf, 1'b0, cp_wi);
            m_buf_wr_data <= q_d[0];
        end
        cp_wi <= cp_wi + 1'b1;
    end
    for (i = 0; i < QD; i = i + 1) begin
        if (q_pop) begin
            q_d[i] <= i + 1 < QD ? q_d[(i + 1) % QD] : 64'd0;
        end
    end
    if (cp_act && q_in) begin
        q_d[q_push] <= q_in_d;
    end
    q_cnt <= q_cnt + {2'b00, cp_act && q_in} - {2'b00, q_pop};
    if (out_last) begin
        cp_act <= 1'b0;
        st[cp_buf] <= B_WBDESC;
    end
    if (in_last) begin
        cp_act <= 1'b0;
        st[cp_buf] <= B_DONE;
    end

    if (rst) begin
        for (i = 0; i < FILLS; i = i + 1) begin
            st[i] <= B_FREE;
        end
        wbp <= {FILLS{1'b0}};
        rq <= {FILLS{1'b0}};
        rd_iss <= {FILLS{1'b0}};
        rdn <= {FILLS{1'b0}};
        wq_cnt <= {(BW+1){1'b0}};
        cp_act <= 1'b0;
        rd_pend <= 1'b0;
        rec_fly <= 3'd0;
        q_cnt <= 3'd0;
        s_fill_ready <= 1'b0;
        m_done_valid <= 1'b0;
        m_rec_rd_valid <= 1'b0;
        m_rec_wr_valid <= 1'b0;
        m_buf_wr_en <= 1'b0;
        m_buf_rd_en <= 1'b0;
        m_rd_desc_valid <= 1'b0;
        m_wr_desc_valid <= 1'b0;
        stat_fill <= 1'b0;
        stat_wb <= 1'b0;
        stat_fail <= 1'b0;
        stat_oob <= 1'b0;
        busy <= 1'b0;
        err_proto <= 1'b0;
    end
end

endmodule

`resetall
