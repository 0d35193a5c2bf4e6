// QP context cache directory (issue 19): which on-chip slot holds a QP's
// records. The QP contexts live in host memory; the NIC keeps 2^SLOT_LOG
// of them on chip, and the per-QP record RAMs are indexed by the SLOT this
// block hands out, not by the QP number. This block is the directory only:
// it maps a QP number (QPN_W bits) to a slot, decides misses, victims and
// write-backs, counts pins, and queues the lookups that must wait so that
// they never block the lookups that hit. The record moves themselves (the
// DMA read of a context into a slot, the write-back of a victim) are the
// outside's: m_fill asks for them, s_fill_done says they are over.
//
// Organisation. Set-associative: SETS = 2^SLOT_LOG / WAYS sets of WAYS ways
// (WAYS 1, 2 or 4; at least two sets); a QP's set is the low SET_W bits of
// its number, its tag the rest, and way w of set s is slot s * WAYS + w.
// A set's row (per way: valid, filling, dirty, a pin count of PIN_W bits,
// the tag; and the set's tree pseudo-LRU bits, WAYS - 1) is one word of a
// block RAM (ram_sdp, SETS deep), so the logic does not grow with the slot
// count: 63 bits per set at QPN_W 16, SLOT_LOG 10, WAYS 4.
//
// Pipeline. Every operation is a read-modify-write of one set's row through
// three stages, one operation a cycle, no stall:
//   S0  the op mux picks an operation; its set's row is read (the RAM's
//       registered read).
//   S1  the row arrives (registered); if the operation in S2 is of the
//       same set, S2 will take the row that operation writes instead
//       (forwarding, from a register: back-to-back operations on a set see
//       each other's writes; the one two ahead is seen by the RAM's
//       transparent read).
//   S2  the decision, the row written back, the queue and outputs updated.
// An answer is on m_lk three cycles after its lookup was taken (the
// cycle after S2) when m_lk's FIFO is empty; m_lk_id is the lookup's id,
// m_lk_slot is 0 with m_lk_err.
//
// Op mux priority (S0): fill done, unpin, invalidate, a replay from the
// miss queue, a new lookup. Completions and unpins first: they free ways
// and wake waiting lookups, so the cache drains before new work enters;
// replays before new lookups so that the queue empties. A replay goes only
// where a change (below) may have unblocked it, at most once per change,
// so new lookups wait at most MISSQ cycles per change; when no fill done,
// unpin or invalidate is offered and no replay is due, a lookup is taken
// every cycle (the queue and the answer FIFO permitting, below).
//
// Lookups (s_lk: qpn, an opaque id, pin). A new lookup of a QP that has a
// lookup in the miss queue joins the queue behind it, whatever the row says
// (per-QP order); likewise a replay of a lookup with an older one of its QP
// in the queue stays. Otherwise:
//   - hit (a valid way holds the tag, not filling): answered on m_lk (slot,
//     qpn, id, err 0); with the pin flag the way's pin count goes up by one
//     and the way becomes dirty (the QP had traffic since its fill); the
//     pseudo-LRU bits turn away from the way. A pin on a way whose count is
//     at its maximum (2^PIN_W - 1) waits in the queue instead (a stall).
//   - the way holding the tag is filling: the lookup waits in the queue.
//   - miss: a victim way: the lowest invalid way, else by the pseudo-LRU
//     bits among the ways neither pinned nor filling (the tree followed
//     from the root, each node turning to its other side when the side it
//     points to has no such way). The victim becomes valid, filling, clean,
//     unpinned with the new tag; the bits turn away from it; the lookup
//     waits in the queue holding the fill command: slot, qpn, and the
//     victim's qpn with wb set if the victim was valid and dirty (a victim
//     never pinned since its fill is dropped without a write-back).
//   - no victim (every way pinned or filling): the lookup waits in the
//     queue (a pinned-full stall; stat_stall).
// Tree pseudo-LRU: WAYS - 1 bits per set in the row already read, updated
// in the same read-modify-write, no scan of other sets or slots; it evicts
// a way not used recently, which true LRU would do at the cost of a full
// order per set. Pinned and filling ways are never victims.
//
// Miss queue: MISSQ entries in flops, kept in arrival order (an age
// matrix). An entry waits until a change in its set: a fill done, an unpin,
// an invalidate that invalidated, or the answer of a queued lookup of the
// set (which releases the younger lookups of its QP). Then it is replayed
// through the pipeline, the oldest woken entry first, and either answered
// (it leaves the queue), or waits again (keeping its place), or misses and
// takes a victim (it waits for its fill). m_fill shows the fill commands of
// the queued lookups that took a victim, one at a time, each once, in the
// order they were made (a ring of entry numbers): the command that evicts
// a QP always comes before one that fills it again, so the fill engine
// can hold the read behind the write-back; a lookup is answered only
// after its way's fill is done.
// A lookup that hits (no older lookup of its QP queued) never waits for
// the queue: taken, it is answered three cycles later whatever waits there.
// Back-pressure: s_lk_ready is low while the queue's free entries do not
// cover every new lookup in S1 and S2 and one more (any of them may have
// to wait; so a new lookup always finds a free entry in S2): the receive
// side then pauses the MAC as it does when its buffers are full; nothing
// is dropped, no state is lost. Hits pass at one a cycle while up to
// MISSQ - 3 lookups wait, two in three cycles with MISSQ - 2, one in three
// with MISSQ - 1 (a deeper queue keeps the full rate). s_lk_ready is also
// low while the answer FIFO (4 entries) may not hold every answer in
// flight (m_lk_ready low for a while). The outside must give pins back
// without waiting for a lookup's answer (a packet's pin ends when its
// processing does): a queue full of lookups that wait for unpins would
// otherwise wait forever.
//
// s_fill_done (slot, ok): the fill of the slot (and its write-back, which
// the outside performs first: one completion for both) is over; the way
// stops filling. ok = 0 (the
// DMA read failed): the way becomes invalid, and every lookup of that QP in
// the queue then is answered with m_lk_err = 1 (slot 0), in order, so that
// only that QP goes to ERR; a lookup of it taken later misses again.
//
// s_unpin (slot): the way's pin count goes down by one. An unpin of a way
// whose count is 0, and a fill done of a way not filling, break the
// contract: the row is left as it is and err_proto rises (sticky until a
// reset; an assertion under FORMAL).
//
// s_inval (qpn): the QP is destroyed. An unpinned valid way of it becomes
// invalid, without a write-back; not cached, nothing to do. Either way
// m_inval_done pulses (three cycles after it was taken). If the way is
// pinned or filling the invalidate is refused: m_inval_done with
// m_inval_busy; the outside retries once the QP's traffic is over (a
// destroy waits for the QP's packets and WQEs anyway). Lookups of the QP
// still queued are answered as any others (a destroyed QP gets none).
//
// The queue's entries: a lookup's QP, id, pin flag; its wait, replay and
// error state; the fill command it holds (victim way and tag, wb). The
// per-QP order check of S2 is compared in S1 against the queue and the
// entry S2 queues in that cycle, registered (timing).
//
// Counters, one-cycle pulses the cycle after S2 (for registers outside):
// stat_hit (a new lookup answered at its first pass), stat_miss (a victim
// taken: a fill), stat_evict (the victim was valid), stat_wb (the victim was
// dirty), stat_stall (a pass that found no victim or a full pin count);
// stat_hwm, the queue's high-water mark (a register).
//
// Reset: clears the pipeline, the queue, the FIFO and the outputs; the
// directory RAM is swept to zero by ram_reset_sweep (one set a cycle, only
// after a reset that follows a write); no operation is taken during the
// reset or the sweep (every s_*_ready low, `sweeping` high).
//
// Readies depend combinationally on the valids of the higher-priority
// inputs and on rst (the op mux), never on m_lk_ready or m_fill_ready;
// every m_* output comes from registers.

`resetall
`timescale 1ns / 1ps
`default_nettype none

module qp_cache #(
    parameter QPN_W = 16,
    parameter SLOT_LOG = 6,
    parameter WAYS = 4,                 // 1, 2 or 4
    parameter MISSQ = 4,                // miss queue entries, 2..16
    parameter ID_W = 8,
    parameter PIN_W = 4                 // pin count bits per way
) (
    input  wire                clk,
    input  wire                rst,

    // lookups
    input  wire                s_lk_valid,
    output wire                s_lk_ready,
    input  wire [QPN_W-1:0]    s_lk_qpn,
    input  wire [ID_W-1:0]     s_lk_id,
    input  wire                s_lk_pin,
    output wire                m_lk_valid,
    input  wire                m_lk_ready,
    output wire [SLOT_LOG-1:0] m_lk_slot,
    output wire [QPN_W-1:0]    m_lk_qpn,
    output wire [ID_W-1:0]     m_lk_id,
    output wire                m_lk_err,

    // fill commands: write back wb_qpn's record from the slot if wb, then
    // read qpn's into it
    output reg                 m_fill_valid = 1'b0,
    input  wire                m_fill_ready,
    output reg  [SLOT_LOG-1:0] m_fill_slot = {SLOT_LOG{1'b0}},
    output reg  [QPN_W-1:0]    m_fill_qpn = {QPN_W{1'b0}},
    output reg                 m_fill_wb = 1'b0,
    output reg  [QPN_W-1:0]    m_fill_wb_qpn = {QPN_W{1'b0}},
    input  wire                s_fill_done_valid,
    output wire                s_fill_done_ready,
    input  wire [SLOT_LOG-1:0] s_fill_done_slot,
    input  wire                s_fill_done_ok,

    input  wire                s_unpin_valid,
    output wire                s_unpin_ready,
    input  wire [SLOT_LOG-1:0] s_unpin_slot,

    input  wire                s_inval_valid,
    output wire                s_inval_ready,
    input  wire [QPN_W-1:0]    s_inval_qpn,
    output reg                 m_inval_done = 1'b0,
    output reg                 m_inval_busy = 1'b0,

    output reg                 stat_hit = 1'b0,
    output reg                 stat_miss = 1'b0,
    output reg                 stat_evict = 1'b0,
    output reg                 stat_wb = 1'b0,
    output reg                 stat_stall = 1'b0,
    output reg  [4:0]          stat_hwm = 5'd0,
    output reg                 err_proto = 1'b0,
    output wire                sweeping
);

localparam WLOG = WAYS == 4 ? 2 : WAYS == 2 ? 1 : 0;
localparam WW = WLOG > 0 ? WLOG : 1;        // a way number's register width
localparam SET_W = SLOT_LOG - WLOG;
localparam SETS = 1 << SET_W;
localparam TAG_W = QPN_W - SET_W;
localparam PL_W = WAYS > 1 ? WAYS - 1 : 1;  // pseudo-LRU bits (none used at 1 way)
// a way's record in the row
localparam W_VALID = 0;
localparam W_FILL = 1;
localparam W_DIRTY = 2;
localparam W_PIN = 3;
localparam W_TAG = W_PIN + PIN_W;
localparam WREC_W = W_TAG + TAG_W;
localparam ROW_PL = WAYS * WREC_W;
localparam ROW_W = ROW_PL + PL_W;
localparam QI_W = MISSQ > 1 ? $clog2(MISSQ) : 1;
localparam QC_W = $clog2(MISSQ + 1);
localparam [31:0] QI_LAST_I = MISSQ - 1;
localparam [QI_W-1:0] QI_LAST = QI_LAST_I[QI_W-1:0];
localparam LKQ = 4;                         // answer FIFO entries
localparam LK_W = SLOT_LOG + QPN_W + ID_W + 1;

initial begin
    if (WAYS != 1 && WAYS != 2 && WAYS != 4) begin
        $error("qp_cache: WAYS must be 1, 2 or 4");
        $finish;
    end
    if (SLOT_LOG < WLOG + 1 || SLOT_LOG > 14) begin
        $error("qp_cache: SLOT_LOG must give at least two sets, at most 2^14 slots");
        $finish;
    end
    if (QPN_W < SET_W + 1 || QPN_W > 24) begin
        $error("qp_cache: QPN_W must exceed the set bits (a tag of 1 bit at least), at most 24");
        $finish;
    end
    if (MISSQ < 2 || MISSQ > 16 || ID_W < 1 || PIN_W < 1 || PIN_W > 8) begin
        $error("qp_cache: MISSQ must be 2..16, ID_W at least 1, PIN_W 1..8");
        $finish;
    end
end

localparam [2:0] OP_LK = 3'd0;      // a new lookup
localparam [2:0] OP_RP = 3'd1;      // a replay of queue entry qidx
localparam [2:0] OP_FD = 3'd2;      // fill done
localparam [2:0] OP_UP = 3'd3;      // unpin
localparam [2:0] OP_IV = 3'd4;      // invalidate

// ---------------------------------------------------------------- state
// miss queue
reg [MISSQ-1:0]  q_v = {MISSQ{1'b0}};
reg [MISSQ-1:0]  q_wait = {MISSQ{1'b0}};
reg [MISSQ-1:0]  q_fly = {MISSQ{1'b0}};     // replay in the pipeline
reg [MISSQ-1:0]  q_err = {MISSQ{1'b0}};     // its QP's fill failed
reg [MISSQ-1:0]  q_nf = {MISSQ{1'b0}};      // fill command not shown yet
reg [MISSQ-1:0]  q_pin = {MISSQ{1'b0}};
reg [MISSQ-1:0]  q_wb = {MISSQ{1'b0}};
// (the queue is in flops: mem2reg, said so that Yosys need not warn)
(* mem2reg *) reg [QPN_W-1:0]  q_qpn [0:MISSQ-1];
(* mem2reg *) reg [ID_W-1:0]   q_id [0:MISSQ-1];
(* mem2reg *) reg [WW-1:0]     q_way [0:MISSQ-1];         // the victim way it took
(* mem2reg *) reg [TAG_W-1:0]  q_vtag [0:MISSQ-1];        // ... and the victim's tag
(* mem2reg *) reg [MISSQ-1:0]  q_old [0:MISSQ-1];         // q_old[i][j]: j arrived before i
// the entries whose fill command is not shown yet (q_nf), in the order
// the commands were made: a ring of entry numbers (an entry holds at most
// one command, so MISSQ places suffice)
(* mem2reg *) reg [QI_W-1:0]   nfq [0:MISSQ-1];
reg [QI_W-1:0]   nfq_wp = {QI_W{1'b0}}, nfq_rp = {QI_W{1'b0}};

// pipeline
reg              s1_v = 1'b0, s2_v = 1'b0;
reg [2:0]        s1_op = OP_LK, s2_op = OP_LK;
reg [QPN_W-1:0]  s1_qpn = {QPN_W{1'b0}}, s2_qpn = {QPN_W{1'b0}};
reg [ID_W-1:0]   s1_id = {ID_W{1'b0}}, s2_id = {ID_W{1'b0}};
reg              s1_pin = 1'b0, s2_pin = 1'b0;
reg              s1_ok = 1'b0, s2_ok = 1'b0;
reg [SET_W-1:0]  s1_set = {SET_W{1'b0}}, s2_set = {SET_W{1'b0}};
reg [WW-1:0]     s1_way = {WW{1'b0}}, s2_way = {WW{1'b0}};
reg [QI_W-1:0]   s1_qi = {QI_W{1'b0}}, s2_qi = {QI_W{1'b0}};
reg [ROW_W-1:0]  row2 = {ROW_W{1'b0}};    // the RAM's row, registered
reg [ROW_W-1:0]  wrow = {ROW_W{1'b0}};    // the row S2 wrote last cycle
reg              fwd2 = 1'b0;             // ... of S2's set: S2 takes it

// answer FIFO
reg [LK_W-1:0]   lk_mem [0:LKQ-1];
reg [1:0]        lk_wp = 2'd0, lk_rp = 2'd0;
reg [2:0]        lk_cnt = 3'd0;

integer i, j;
initial begin
    for (i = 0; i < MISSQ; i = i + 1) begin
        q_qpn[i] = {QPN_W{1'b0}};
        q_id[i] = {ID_W{1'b0}};
        q_way[i] = {WW{1'b0}};
        q_vtag[i] = {TAG_W{1'b0}};
        q_old[i] = {MISSQ{1'b0}};
    end
    for (i = 0; i < LKQ; i = i + 1) begin
        lk_mem[i] = {LK_W{1'b0}};
    end
end

// ---------------------------------------------------------------- S0: the op mux
wire sw_on;
reg [QC_W-1:0] q_cnt;
reg [MISSQ-1:0] elig, rp_oh;
reg [QI_W-1:0] rp_idx;
always @* begin
    q_cnt = {QC_W{1'b0}};
    for (i = 0; i < MISSQ; i = i + 1) begin
        q_cnt = q_cnt + {{(QC_W-1){1'b0}}, q_v[i]};
    end
    elig = q_v & ~q_wait & ~q_fly;
    rp_idx = {QI_W{1'b0}};
    for (i = 0; i < MISSQ; i = i + 1) begin
        rp_oh[i] = elig[i] && (elig & q_old[i]) == {MISSQ{1'b0}};
        if (rp_oh[i]) begin
            rp_idx = rp_idx | i[QI_W-1:0];
        end
    end
end

wire s1_ans = s1_v && (s1_op == OP_LK || s1_op == OP_RP);
wire s2_ans = s2_v && (s2_op == OP_LK || s2_op == OP_RP);
wire s1_new = s1_v && s1_op == OP_LK;
wire s2_new = s2_v && s2_op == OP_LK;
wire go = !rst && !sw_on;
wire ans_room = {1'b0, lk_cnt} + {3'd0, s1_ans} + {3'd0, s2_ans} < LKQ;
wire [QC_W+1:0] q_need = {2'b00, q_cnt} + {{(QC_W+1){1'b0}}, s1_new} + {{(QC_W+1){1'b0}}, s2_new};
localparam integer MQ_I = MISSQ;
localparam [QC_W+1:0] MQ = MQ_I[QC_W+1:0];
wire q_room = q_need < MQ;

wire take_fd = go && s_fill_done_valid;
wire take_up = go && !s_fill_done_valid && s_unpin_valid;
wire take_iv = go && !s_fill_done_valid && !s_unpin_valid && s_inval_valid;
wire hi_busy = s_fill_done_valid || s_unpin_valid || s_inval_valid;
wire take_rp = go && !hi_busy && elig != {MISSQ{1'b0}} && ans_room;
wire take_lk = go && !hi_busy && elig == {MISSQ{1'b0}} && ans_room && q_room && s_lk_valid;

assign s_fill_done_ready = go;
assign s_unpin_ready = go && !s_fill_done_valid;
assign s_inval_ready = go && !s_fill_done_valid && !s_unpin_valid;
assign s_lk_ready = go && !hi_busy && elig == {MISSQ{1'b0}} && ans_room && q_room;

wire [WW-1:0]    fd_way, up_way;    // (the ways of the slots named)
wire [MISSQ*QPN_W-1:0] q_qpn_all;   // (the queue's QP numbers, packed)
wire [QPN_W-1:0] rp_qpn;             // (one-hot: the RAM's read address)
genvar g;
generate
    for (g = 0; g < MISSQ; g = g + 1) begin : g_qpn
        assign q_qpn_all[g*QPN_W +: QPN_W] = q_qpn[g];
    end
endgenerate
onehot_mux #(
    .N(MISSQ),
    .W(QPN_W)
) rp_qpn_inst (
    .sel(rp_oh),
    .in(q_qpn_all),
    .out(rp_qpn)
);
wire [SET_W-1:0] rp_set = rp_qpn[SET_W-1:0];
reg [2:0]       s0_op;
reg [QPN_W-1:0] s0_qpn;
reg [SET_W-1:0] s0_set;
reg [WW-1:0]    s0_way;
always @* begin
    s0_op = OP_LK;
    s0_qpn = s_lk_qpn;
    s0_set = s_lk_qpn[SET_W-1:0];
    s0_way = {WW{1'b0}};
    // (by the valids alone: the op taken, if any, is this one; the RAM's
    // read address does not wait for the credits)
    if (s_fill_done_valid) begin
        s0_op = OP_FD;
        s0_set = s_fill_done_slot[SLOT_LOG-1:WLOG];
        s0_way = fd_way;
    end else if (s_unpin_valid) begin
        s0_op = OP_UP;
        s0_set = s_unpin_slot[SLOT_LOG-1:WLOG];
        s0_way = up_way;
    end else if (s_inval_valid) begin
        s0_op = OP_IV;
        s0_qpn = s_inval_qpn;
        s0_set = s_inval_qpn[SET_W-1:0];
    end else if (elig != {MISSQ{1'b0}}) begin
        s0_op = OP_RP;
        s0_qpn = rp_qpn;
        s0_set = rp_set;
    end
end
wire s0_v = take_fd || take_up || take_iv || take_rp || take_lk;

// ---------------------------------------------------------------- directory RAM
wire [ROW_W-1:0] rd_row;
reg  [ROW_W-1:0] new_row;
wire [SET_W-1:0] sw_addr;
wire wr_op = s2_v && !rst;

ram_reset_sweep #(
    .DEPTH(SETS),
    .ADDR_W(SET_W)
) sweep_inst (
    .clk(clk),
    .rst(rst),
    .wrote(wr_op),
    .sweep(sw_on),
    .sweep_addr(sw_addr)
);
assign sweeping = sw_on;

ram_sdp #(
    .DATA_W(ROW_W),
    .ADDR_W(SET_W),
    .DEPTH(SETS)
) dir_inst (
    .clk(clk),
    .wr_en(sw_on || wr_op),
    .wr_addr(sw_on ? sw_addr : s2_set),
    .wr_data(sw_on ? {ROW_W{1'b0}} : new_row),
    .rd_addr(s0_set),
    .rd_data(rd_row)
);

// ---------------------------------------------------------------- S2: the decision
// the row's fields
wire [WAYS-1:0]  w_v, w_f, w_d, w_pmax, w_p0, w_match, w_pres, w_evok, w_inv;
wire [PIN_W-1:0] w_p [0:WAYS-1];
wire [TAG_W-1:0] w_t [0:WAYS-1];
wire [WAYS*TAG_W-1:0] w_t_all;      // (the tags, packed)
wire [ROW_W-1:0] row_s2 = fwd2 ? wrow : row2;
wire [PL_W-1:0]  plru = row_s2[ROW_PL +: PL_W];
generate
    for (g = 0; g < WAYS; g = g + 1) begin : g_way
        assign w_v[g] = row_s2[g*WREC_W + W_VALID];
        assign w_f[g] = row_s2[g*WREC_W + W_FILL];
        assign w_d[g] = row_s2[g*WREC_W + W_DIRTY];
        assign w_p[g] = row_s2[g*WREC_W + W_PIN +: PIN_W];
        assign w_t[g] = row_s2[g*WREC_W + W_TAG +: TAG_W];
        assign w_t_all[g*TAG_W +: TAG_W] = w_t[g];
        assign w_pmax[g] = &w_p[g];
        assign w_p0[g] = w_p[g] == {PIN_W{1'b0}};
        assign w_match[g] = w_v[g] && w_t[g] == s2_qpn[QPN_W-1:SET_W];
        assign w_pres[g] = w_match[g] && !w_f[g];
        assign w_evok[g] = w_v[g] && !w_f[g] && w_p0[g];
        assign w_inv[g] = !w_v[g];
    end
endgenerate

// Tree pseudo-LRU: a node's bit 1 points to its right (upper) half as the
// older; the victim follows the bits from the root, turning to the other
// half where the half pointed to has no evictable way (pl_vway; the lowest
// invalid way comes first, below); a way used (a hit, a victim taken) turns
// the bits on its path away from it (plru_n).
wire [WW-1:0]   pl_vway;
wire [PL_W-1:0] plru_n;
reg  [WW-1:0]   tway, hway, vway;
generate
    if (WAYS == 4) begin : g_pl4
        wire right = (plru[0] && (w_evok[2] || w_evok[3])) || !(w_evok[0] || w_evok[1]);
        wire lo = right ? (plru[2] && w_evok[3]) || !w_evok[2]
                        : (plru[1] && w_evok[1]) || !w_evok[0];
        assign pl_vway = {right, lo};
        assign plru_n[0] = !tway[1];
        assign plru_n[1] = tway[1] ? plru[1] : !tway[0];
        assign plru_n[2] = tway[1] ? !tway[0] : plru[2];
    end else if (WAYS == 2) begin : g_pl2
        assign pl_vway = (plru[0] && w_evok[1]) || !w_evok[0];
        assign plru_n = !tway[0];
    end else begin : g_pl1
        assign pl_vway = 1'b0;
        assign plru_n = plru ^ {PL_W{tway[0] & 1'b0}};   // (no bits at one way)
    end
endgenerate

// the slot of a way in S2's set; the fill command's slot
wire [SLOT_LOG-1:0] hit_slot;
wire [SLOT_LOG-1:0] nf_slot;
reg  [QI_W-1:0] nf_idx;
generate
    if (WLOG > 0) begin : g_slot_w
        assign hit_slot = {s2_set, hway};
        assign nf_slot = {q_qpn[nf_idx][SET_W-1:0], q_way[nf_idx]};
        assign fd_way = s_fill_done_slot[WW-1:0];
        assign up_way = s_unpin_slot[WW-1:0];
    end else begin : g_slot_1
        wire unused_way = &{1'b0, hway, q_way[nf_idx]};
        assign hit_slot = s2_set | {SLOT_LOG{unused_way}};
        assign nf_slot = q_qpn[nf_idx][SET_W-1:0];
        assign fd_way = 1'b0;
        assign up_way = 1'b0;
    end
endgenerate

// per-QP order: an older queued lookup of the QP. Compared in S1 against
// the queue (the entry S2 queues in that cycle included) and registered; in
// S2 only the entries still there count (ordm2 & q_v).
reg  [MISSQ-1:0] ordm1, ord_next, ordm2 = {MISSQ{1'b0}}, errm;
reg  [WAYS-1:0]  vic_oh, op_oh;
reg              rp_err, hitp, hitf, has_vic, pinfull, is_lk, ordblk;
reg              ans, ans_err, hit_ans, alloc, stall, wake, iv_busy, iv_do, proto, touch;
wire [TAG_W-1:0] fd_tag;            // the tag of the way S2's op names
wire [MISSQ-1:0] free_oh;
wire [ROW_PL-1:0] new_ways;

always @* begin
    hitp = w_pres != {WAYS{1'b0}};
    hitf = (w_match & w_f) != {WAYS{1'b0}};
    hway = {WW{1'b0}};
    for (i = 0; i < WAYS; i = i + 1) begin
        if (w_match[i]) begin
            hway = hway | i[WW-1:0];
        end
    end
    // the victim: the lowest invalid way, else the pseudo-LRU's
    has_vic = (w_inv | w_evok) != {WAYS{1'b0}};
    vway = pl_vway;
    for (i = WAYS - 1; i >= 0; i = i - 1) begin
        if (w_inv[i]) begin
            vway = i[WW-1:0];
        end
    end
    tway = hitp ? hway : vway;
    for (i = 0; i < WAYS; i = i + 1) begin
        vic_oh[i] = vway == i[WW-1:0];
        op_oh[i] = s2_way == i[WW-1:0];
    end
end
onehot_mux #(
    .N(WAYS),
    .W(TAG_W)
) fd_tag_inst (
    .sel(op_oh),
    .in(w_t_all),
    .out(fd_tag)
);

always @* begin
    for (j = 0; j < MISSQ; j = j + 1) begin
        errm[j] = q_v[j] && q_qpn[j] == {fd_tag, s2_set};
    end
    ordblk = (ordm2 & q_v) != {MISSQ{1'b0}};
    is_lk = s2_op == OP_LK || s2_op == OP_RP;
    rp_err = s2_op == OP_RP && q_err[s2_qi];
    pinfull = s2_pin && (w_pmax & w_pres) != {WAYS{1'b0}};
    ans = is_lk && !ordblk && (rp_err || (hitp && !pinfull));
    ans_err = is_lk && !ordblk && rp_err;
    hit_ans = ans && !rp_err;
    alloc = is_lk && !ordblk && !rp_err && !hitp && !hitf && has_vic;
    stall = is_lk && !ordblk && !rp_err && (hitp ? pinfull : !hitf && !has_vic);
    proto = (s2_op == OP_FD && (op_oh & w_v & w_f) == {WAYS{1'b0}})
        || (s2_op == OP_UP && (op_oh & w_p0) != {WAYS{1'b0}});
    iv_busy = s2_op == OP_IV && (hitf || (w_pres & ~w_p0) != {WAYS{1'b0}});
    iv_do = s2_op == OP_IV && !iv_busy && hitp;
    // a change in the set wakes its waiting lookups; a queued lookup
    // answered releases the younger ones of its QP
    wake = s2_op == OP_FD || s2_op == OP_UP || iv_do || (s2_op == OP_RP && ans);
    touch = hit_ans || alloc;
end
always @* begin
    for (j = 0; j < MISSQ; j = j + 1) begin
        ordm1[j] = q_v[j] && q_qpn[j] == s1_qpn && (s1_op == OP_LK || q_old[s1_qi][j]);
        ord_next[j] = ordm1[j];
        if (s2_v && s2_op == OP_LK && !ans && free_oh[j]) begin
            ord_next[j] = s1_op == OP_LK && s1_qpn == s2_qpn;
        end
    end
    new_row = {touch ? plru_n : plru, new_ways};
end

// each way's new record
generate
    for (g = 0; g < WAYS; g = g + 1) begin : g_upd
        wire p_inc = hit_ans && s2_pin && w_pres[g];
        wire alloc_g = alloc && vic_oh[g];
        wire fd_g = s2_op == OP_FD && op_oh[g] && w_v[g] && w_f[g];
        wire up_g = s2_op == OP_UP && op_oh[g] && !w_p0[g];
        wire clr_g = (fd_g && !s2_ok) || (iv_do && w_pres[g]);
        wire [PIN_W-1:0] pin_n = p_inc ? w_p[g] + 1'b1 : up_g ? w_p[g] - 1'b1 : w_p[g];
        wire [WREC_W-1:0] kept = {w_t[g], pin_n, w_d[g] | p_inc, w_f[g] && !fd_g, w_v[g]};
        wire [WREC_W-1:0] fresh = {s2_qpn[QPN_W-1:SET_W], {PIN_W{1'b0}}, 1'b0, 1'b1, 1'b1};
        assign new_ways[g*WREC_W +: WREC_W] = clr_g ? {WREC_W{1'b0}} : alloc_g ? fresh : kept;
    end
endgenerate

// ---------------------------------------------------------------- registers
// the lowest free entry, one-hot; the oldest fill command not shown, from
// the ring (encoded for the reads of its fields, one-hot for the update).
// Oldest, not lowest: a QP evicted by one command and missed again at once
// gets a second command, in any entry; the fill engine must see the
// eviction (and its write-back) first, or it may read the QP's record
// before the write-back reaches the host.
assign free_oh = ~q_v & (q_v + 1'b1);
always @* begin
    nf_idx = nfq[nfq_rp];
end
reg [MISSQ-1:0] nf_oh;
reg [QI_W-1:0]  new_idx;    // the entry S2 writes: its command, if it makes one
always @* begin
    new_idx = s2_qi;
    for (i = 0; i < MISSQ; i = i + 1) begin
        nf_oh[i] = nf_idx == i[QI_W-1:0];
        if (s2_op == OP_LK && free_oh[i]) begin
            new_idx = i[QI_W-1:0];
        end
    end
end

wire [TAG_W-1:0] vic_tag;
onehot_mux #(
    .N(WAYS),
    .W(TAG_W)
) vic_tag_inst (
    .sel(vic_oh),
    .in(w_t_all),
    .out(vic_tag)
);
wire vic_wb = (vic_oh & w_v & w_d) != {WAYS{1'b0}};
reg [MISSQ-1:0] ent_oh;     // the entry S2's lookup queues into or updates
always @* begin
    for (i = 0; i < MISSQ; i = i + 1) begin
        ent_oh[i] = s2_op == OP_LK ? free_oh[i] : s2_qi == i[QI_W-1:0];
    end
end
wire s2_lk = s2_v && (s2_op == OP_LK || s2_op == OP_RP);
wire fill_load = (!m_fill_valid || m_fill_ready) && q_nf != {MISSQ{1'b0}};

always @(posedge clk) begin
    // pipeline
    s1_v <= s0_v;
    s1_op <= s0_op;
    s1_qpn <= s0_qpn;
    s1_id <= s_lk_id;
    s1_pin <= s_lk_pin;
    s1_ok <= s_fill_done_ok;
    s1_set <= s0_set;
    s1_way <= s0_way;
    s1_qi <= rp_idx;
    if (take_rp) begin
        s1_id <= q_id[rp_idx];
        s1_pin <= q_pin[rp_idx];
    end
    s2_v <= s1_v;
    s2_op <= s1_op;
    s2_qpn <= s1_qpn;
    s2_id <= s1_id;
    s2_pin <= s1_pin;
    s2_ok <= s1_ok;
    s2_set <= s1_set;
    s2_way <= s1_way;
    s2_qi <= s1_qi;
    // (forwarding: the row S2 writes now, if of S1's set, is S2's next
    // cycle: taken from a register there, not muxed into row2, so that
    // the decision logic is not copied into the forwarding path)
    row2 <= rd_row;
    wrow <= new_row;
    fwd2 <= s2_v && s2_set == s1_set;
    ordm2 <= ord_next;

    // queue, entry by entry: fill command shown; woken (a change in its
    // set), marked (its QP's fill failed), replayed; S2's own entry last
    for (i = 0; i < MISSQ; i = i + 1) begin
        if (fill_load && nf_oh[i]) begin
            q_nf[i] <= 1'b0;
        end
        if (s2_v && wake && !q_fly[i] && q_qpn[i][SET_W-1:0] == s2_set) begin
            q_wait[i] <= 1'b0;
        end
        if (s2_v && s2_op == OP_FD && !s2_ok && !proto && errm[i]) begin
            q_err[i] <= 1'b1;
        end
        if (take_rp && rp_oh[i]) begin
            q_fly[i] <= 1'b1;
        end
        if (s2_lk && ent_oh[i]) begin
            // answered: leaves the queue; else waits (a new lookup in the
            // free entry, which the admission kept)
            q_v[i] <= !ans;
            q_wait[i] <= !ans;
            q_fly[i] <= 1'b0;
            if (s2_op == OP_LK || ans) begin
                q_err[i] <= 1'b0;
            end
            if (s2_op == OP_LK || alloc) begin
                q_nf[i] <= alloc;
                q_way[i] <= vway;
                q_vtag[i] <= vic_tag;
                q_wb[i] <= vic_wb;
            end
        end
        // a new lookup's fields go to the free entry whether it waits or
        // not (unused while the entry is not valid)
        if (s2_new && free_oh[i]) begin
            q_qpn[i] <= s2_qpn;
            q_id[i] <= s2_id;
            q_pin[i] <= s2_pin;
            q_old[i] <= q_v;
        end else if (s2_new) begin
            q_old[i] <= q_old[i] & ~free_oh;
        end
    end
    // fill commands: made in S2 (at most one a cycle), shown in that order
    if (s2_lk && alloc) begin
        nfq[nfq_wp] <= new_idx;
        nfq_wp <= nfq_wp == QI_LAST ? {QI_W{1'b0}} : nfq_wp + 1'b1;
    end
    if (fill_load) begin
        nfq_rp <= nfq_rp == QI_LAST ? {QI_W{1'b0}} : nfq_rp + 1'b1;
    end
    if (fill_load) begin
        m_fill_valid <= 1'b1;
        m_fill_slot <= nf_slot;
        m_fill_qpn <= q_qpn[nf_idx];
        m_fill_wb <= q_wb[nf_idx];
        m_fill_wb_qpn <= {q_vtag[nf_idx], q_qpn[nf_idx][SET_W-1:0]};
    end else if (m_fill_ready) begin
        m_fill_valid <= 1'b0;
    end

    // answers
    if (s2_lk && ans) begin
        lk_mem[lk_wp] <= {ans_err, ans_err ? {SLOT_LOG{1'b0}} : hit_slot, s2_qpn, s2_id};
        lk_wp <= lk_wp + 1'b1;
    end
    if (m_lk_valid && m_lk_ready) begin
        lk_rp <= lk_rp + 1'b1;
    end
    lk_cnt <= lk_cnt + {2'b00, s2_lk && ans} - {2'b00, m_lk_valid && m_lk_ready};

    m_inval_done <= s2_v && s2_op == OP_IV;
    m_inval_busy <= s2_v && s2_op == OP_IV && iv_busy;
    stat_hit <= s2_v && s2_op == OP_LK && ans;
    stat_miss <= s2_lk && alloc;
    stat_evict <= s2_lk && alloc && (vic_oh & w_v) != {WAYS{1'b0}};
    stat_wb <= s2_lk && alloc && vic_wb;
    stat_stall <= s2_lk && stall;
    if ({{(5-QC_W){1'b0}}, q_cnt} > stat_hwm) begin
        stat_hwm <= {{(5-QC_W){1'b0}}, q_cnt};
    end
    if (s2_v && proto) begin
        err_proto <= 1'b1;
    end

    if (rst) begin
        s1_v <= 1'b0;
        s2_v <= 1'b0;
        q_v <= {MISSQ{1'b0}};
        q_wait <= {MISSQ{1'b0}};
        q_fly <= {MISSQ{1'b0}};
        q_err <= {MISSQ{1'b0}};
        q_nf <= {MISSQ{1'b0}};
        nfq_wp <= {QI_W{1'b0}};
        nfq_rp <= {QI_W{1'b0}};
        m_fill_valid <= 1'b0;
        lk_wp <= 2'd0;
        lk_rp <= 2'd0;
        lk_cnt <= 3'd0;
        m_inval_done <= 1'b0;
        m_inval_busy <= 1'b0;
        stat_hit <= 1'b0;
        stat_miss <= 1'b0;
        stat_evict <= 1'b0;
        stat_wb <= 1'b0;
        stat_stall <= 1'b0;
        stat_hwm <= 5'd0;
        err_proto <= 1'b0;
    end
end

assign m_lk_valid = lk_cnt != 3'd0;
assign {m_lk_err, m_lk_slot, m_lk_qpn, m_lk_id} = lk_mem[lk_rp];

`ifdef FORMAL
always @(posedge clk) begin
    if (!rst && s2_v && s2_op == OP_UP) begin
        assert ((op_oh & w_p0) == {WAYS{1'b0}});   // no unpin below zero
    end
    if (!rst && s2_lk && !ans && s2_op == OP_LK) begin
        assert (free_oh != {MISSQ{1'b0}});  // the admission kept an entry free
    end
end
`endif

endmodule

`resetall
