// QP context: the per-QP configuration the host sets through the QP register
// window (state, path MTU, destination QP, MAC, IP, UDP source port, PD,
// receive CQ, receive ring), with read ports for the requester and the
// responder. The transport moves a QP to ERR on its own; the host moves it
// along RESET -> INIT -> RTR -> RTS (ibv_qp_state numbering).
//
// Destination MACs are kept once in a table of DMAC_N entries shared by the
// QPs (the next hop of every remote peer behind one router is the same
// MAC); a QP holds an index into it. Loading a context finds its MAC in the
// table or takes a free entry (its own, when only it holds it, before any
// other: either leaves as many entries free); a QP that goes to RESET, or
// loads another MAC, gives its reference back. A load into RTR or RTS that
// finds neither its MAC nor a free entry is refused (reg_err_dmac).
//
// Entering RTR tells the responder to load its expected PSN; entering RTS
// tells the requester to load its send PSN and its retry settings; the host
// moving a QP to ERR tells the requester to flush its outstanding WQEs.
//
// Storage: the fields the host loads (cmd 1) form one record per QP,
// declared once below (QPC_*_LSB/_W), held in block RAM (ram_sdp_copies),
// one copy per read port: port a holds the low QPC_A_W bits (the requester's
// fields), port b the whole record. Every load writes the whole record to
// both copies. The reads are registered: a consumer presents the QP number
// (a_qpn, b_qpn) one cycle ahead, i.e. the value its QP register takes at
// the next edge, and sees that QP's record in the next cycle; a load at
// cycle t is seen from t+1 (the RAMs forward a write to a read of the same
// QP in the same cycle), as with the combinational read before.
//
// The state is in block RAM too, though it has three writers (the host,
// set_err_a and set_err_b): HST holds what the host wrote (STATE) and two
// bits HA, HB; EA and EB hold one bit each, written by the two error
// moves. The QP is in ERR by the transport while EA != HA or EB != HB. An
// error move sets its bit to differ from the host's (it reads HA or HB at
// its QP, a cycle after the move: its write is pending for that cycle and
// read through by every port); the host's write copies EA and EB into HA
// and HB (an error move pending for the same QP is cancelled: the host's
// write is the later one, as in the flop version, where the host's write
// went last). EA, EB and the state are read at a, b and sel, HA and HB at
// the error moves' QPs: copies of one field each (ram_sdp_copies). A
// flop vector per state bit with a decoder per writer and a mux per reader
// cost LUTs per QP; this costs a few comparators whatever the number of
// QPs. (One XOR bit HV for both moves needed each move to read the other
// move's bit too: two more 1-bit copies, a block RAM each at 1,024 QPs.)
//
// The host path reads a QP's state, its MAC table entry and whether it
// holds one at reg_sel in the cycle of the command, through registered
// reads addressed by reg_sel: the selector is written by an MMIO write of
// its own, at least a cycle before the command's (one register write per
// cycle), so it is the same in the cycle before the command.
//
// Kept in flops: the MAC table (the shared entries and their reference
// counts).
//
// Reset: block RAM has none, so a reset after the host or the transport
// wrote a state sweeps HST, EA, EB and DMH to zero (RESET, no MAC entry
// held), one QP a cycle, and empties the MAC table; the register block
// holds MMIO meanwhile (`sweep`) and error moves are dropped (the
// transport is out of reset with nothing in flight). At power-up nothing
// is swept. The loaded records (QPC) are not: a QP leaves RESET by a load.
//
// Record port (REC_PORT 1; issue 19, DESIGN.md section 6, step 1): every
// per-QP record above, read and written whole as REC_WORDS 64-bit words per
// QP (rec_map's layout and contract), for the QP context cache's fill and
// write-back: QPC, HST, EA, EB, DMH in that order, each from a 64-bit
// word boundary (at 64 QPs and 16 MACs: QPC 178 bits in words 0-2, HST 5
// in word 3, EA, EB, DMH 1 each in words 4, 5, 6; word 7 padding). Each
// record RAM is a ram_rec: one more copy of the whole record for the read,
// and the record write takes the RAM's write port in cycles the module
// does not write it (the module's write first). The cache fills or writes
// back only a QP no module is using; the MAC table (shared, in flops) is
// not in the record: a QP's DMI and DMH mean an entry of this table, so a
// filled QP must find its MAC there (the cache's business, not this
// block's). A record write of HST, EA, EB or DMH counts as a write for the
// sweep after a reset. REC_PORT 0 builds none of it (the ram_recs are
// ram_sdp_copies, the port's outputs are constants).

`resetall
`timescale 1ns / 1ps
`default_nettype none

module qp_context #(
    parameter NUM_QP = 16,
    parameter QN_W = 4,
    parameter DMAC_N = 16,              // destination MACs held at once
    parameter RC_EN = 1,                // 0: mp-only build: every QP is mp, rc loads are refused
    parameter REC_PORT = 0,             // 1: the record port (header)
    parameter REC_WORDS = 8             // the record port's 64-bit words per QP, 2^k, 2..64
) (
    input  wire             clk,
    input  wire             rst,

    input  wire [15:0]      reg_sel,
    input  wire [2:0]       reg_state,
    input  wire [2:0]       reg_pmtu,
    input  wire             reg_remote_write,
    input  wire             reg_remote_read,
    input  wire             reg_remote_atomic,
    input  wire [2:0]       reg_spray_log,      // requester: 2^n UDP source ports per QP
    input  wire             reg_mp,             // transport: 0 rc, 1 mp (multipath)
    input  wire [2:0]       reg_mp_wshift,      // mp window = MP_W >> shift
    input  wire [23:0]      reg_dest_qpn,
    input  wire [23:0]      reg_sq_psn,
    input  wire [23:0]      reg_rq_psn,
    input  wire [47:0]      reg_dmac,
    input  wire [15:0]      reg_udp_sport,
    input  wire [31:0]      reg_dip,
    input  wire [15:0]      reg_pd,
    input  wire [15:0]      reg_rcq,
    input  wire [63:0]      reg_rq_base,
    input  wire [31:0]      reg_rq_size,
    input  wire [4:0]       reg_timeout,        // local ACK timeout exponent (0: none)
    input  wire [2:0]       reg_retry_cnt,
    input  wire [2:0]       reg_rnr_retry,      // 7: unlimited
    input  wire [4:0]       reg_min_rnr_timer,  // RNR NAK timer code the responder sends
    input  wire [2:0]       reg_max_rd_atomic,  // READs and atomics outstanding as the requester
    input  wire [2:0]       reg_max_dest_rd_atomic, // ... held as the responder
    input  wire [3:0]       reg_cmd,
    input  wire             reg_cmd_valid,
    output wire             reg_err,
    output wire             reg_err_dmac,       // with reg_err: the MAC table is full
    output wire [2:0]       sel_state,

    // the transport moves QPs to ERR
    input  wire             set_err_a,
    input  wire [QN_W-1:0]  set_err_a_qpn,
    input  wire             set_err_b,
    input  wire [QN_W-1:0]  set_err_b_qpn,

    output wire             load_rtr,       // pulse: QP load_qpn entered RTR, epsn = load_psn
    output wire             load_rts,       // pulse: QP load_qpn entered RTS, sq_psn = load_psn
    output wire             load_reset,     // pulse: QP load_qpn was reset: clear its transport state
    output wire [QN_W-1:0]  load_qpn,
    output wire [QN_W-1:0]  load_qpn_next,  // load_qpn of a load pulse in the next cycle (the host's selector)
    output wire [23:0]      load_psn,
    output wire [10:0]      load_retry,     // {rnr_retry, retry_cnt, timeout}, with load_rts
    output wire [2:0]       load_spray,     // spray_log, with load_rts (path health)
    output wire             load_err,       // pulse: the host moved QP load_qpn to ERR

    // requester read port
    input  wire [QN_W-1:0]  a_qpn,
    output wire [2:0]       a_state,
    output wire [2:0]       a_pmtu,
    output wire [23:0]      a_dest_qpn,
    output wire [47:0]      a_dmac,
    output wire [31:0]      a_dip,
    output wire [15:0]      a_udp_sport,
    output wire [2:0]       a_spray_log,
    output wire             a_mp,
    output wire [2:0]       a_mp_wshift,
    output wire [15:0]      a_pd,
    output wire [2:0]       a_max_rd_atomic,

    // responder read port
    input  wire [QN_W-1:0]  b_qpn,
    output wire [2:0]       b_state,
    output wire [2:0]       b_pmtu,
    output wire             b_remote_write,
    output wire             b_remote_read,
    output wire             b_remote_atomic,
    output wire [23:0]      b_dest_qpn,
    output wire [47:0]      b_dmac,
    output wire [31:0]      b_dip,
    output wire [15:0]      b_udp_sport,
    output wire [15:0]      b_pd,
    output wire [QN_W-1:0]  b_rcq,
    output wire [63:0]      b_rq_base,
    output wire [3:0]       b_rq_log,
    output wire [4:0]       b_min_rnr_timer,
    output wire [2:0]       b_max_dest_rd_atomic,
    output wire             b_mp,
    output wire [2:0]       b_mp_wshift,

    // the sweep after a reset is clearing the states (the register block
    // holds MMIO meanwhile)
    output wire             sweep,

    // record port (REC_PORT 1; DESIGN.md section 6, step 1): this module's
    // per-QP records as REC_WORDS 64-bit words (rec_map's contract)
    input  wire             s_rec_rd_valid,
    output wire             s_rec_rd_ready,
    input  wire [QN_W-1:0]  s_rec_rd_slot,
    input  wire [$clog2(REC_WORDS)-1:0] s_rec_rd_word,
    output wire             m_rec_rd_data_valid,
    output wire [63:0]      m_rec_rd_data,
    input  wire             s_rec_wr_valid,
    output wire             s_rec_wr_ready,
    input  wire [QN_W-1:0]  s_rec_wr_slot,
    input  wire [$clog2(REC_WORDS)-1:0] s_rec_wr_word,
    input  wire [63:0]      s_rec_wr_data,
    output wire             rec_wr_busy
);

localparam [2:0] QPS_RESET = 3'd0, QPS_INIT = 3'd1, QPS_RTR = 3'd2, QPS_RTS = 3'd3, QPS_ERR = 3'd6;
localparam [15:0] NUM_QP16 = NUM_QP[15:0];
localparam MI_W = $clog2(DMAC_N);

// ---------------------------------------------------------------- the record
// One QP's loaded context. The requester's fields come first: port a's copy
// holds bits [QPC_A_W-1:0] only.
localparam QPC_PMTU_W = 3;
localparam QPC_SPRAY_W = 3;
localparam QPC_WSHIFT_W = 3;
localparam QPC_DEST_W = 24;
localparam QPC_DMI_W = MI_W;
localparam QPC_DIP_W = 32;
localparam QPC_SPORT_W = 16;
localparam QPC_PD_W = 16;
localparam QPC_MRA_W = 3;       // max_rd_atomic (read in READ_EN builds)
localparam QPC_MP_W = 1;        // an mp QP (rc when 0)
localparam QPC_RCQ_W = QN_W;
localparam QPC_RQB_W = 52;
localparam QPC_RQL_W = 4;
localparam QPC_RNRT_W = 5;
localparam QPC_MDRA_W = 3;      // max_dest_rd_atomic (read in READ_EN builds)
localparam QPC_RA_W = 1;        // remote atomics allowed (executed in ATOMIC_EN builds)
localparam QPC_RR_W = 1;        // remote READ allowed (served in READ_EN builds)
localparam QPC_RW_W = 1;        // remote WRITE allowed

localparam QPC_PMTU_LSB = 0;
localparam QPC_SPRAY_LSB = QPC_PMTU_LSB + QPC_PMTU_W;
localparam QPC_WSHIFT_LSB = QPC_SPRAY_LSB + QPC_SPRAY_W;
localparam QPC_DEST_LSB = QPC_WSHIFT_LSB + QPC_WSHIFT_W;
localparam QPC_DMI_LSB = QPC_DEST_LSB + QPC_DEST_W;
localparam QPC_DIP_LSB = QPC_DMI_LSB + QPC_DMI_W;
localparam QPC_SPORT_LSB = QPC_DIP_LSB + QPC_DIP_W;
localparam QPC_PD_LSB = QPC_SPORT_LSB + QPC_SPORT_W;
localparam QPC_MRA_LSB = QPC_PD_LSB + QPC_PD_W;
localparam QPC_MP_LSB = QPC_MRA_LSB + QPC_MRA_W;
localparam QPC_A_W = QPC_MP_LSB + QPC_MP_W;
localparam QPC_RCQ_LSB = QPC_A_W;
localparam QPC_RQB_LSB = QPC_RCQ_LSB + QPC_RCQ_W;
localparam QPC_RQL_LSB = QPC_RQB_LSB + QPC_RQB_W;
localparam QPC_RNRT_LSB = QPC_RQL_LSB + QPC_RQL_W;
// (RA and RR below RW: Yosys 0.23 finds no block RAM mapping for port b's
// copy when its top bit is unread, as RR is in builds without READ)
localparam QPC_MDRA_LSB = QPC_RNRT_LSB + QPC_RNRT_W;
localparam QPC_RA_LSB = QPC_MDRA_LSB + QPC_MDRA_W;
localparam QPC_RR_LSB = QPC_RA_LSB + QPC_RA_W;
localparam QPC_RW_LSB = QPC_RR_LSB + QPC_RR_W;
localparam QPC_W = QPC_RW_LSB + QPC_RW_W;
// a record as it leaves reset: PMTU 256 (code 1), all else 0
localparam [QPC_W-1:0] QPC_INIT = {{(QPC_W-1){1'b0}}, 1'b1} << QPC_PMTU_LSB;

initial begin
    if (NUM_QP < 1 || NUM_QP > (1 << QN_W) || QN_W > 15) begin
        $error("qp_context: NUM_QP must be 1..2^QN_W, QN_W at most 15");
        $finish;
    end
    if (DMAC_N < 2 || DMAC_N > NUM_QP) begin
        $error("qp_context: DMAC_N must be 2..NUM_QP");
        $finish;
    end
end

// HST: the host's state and its halves of the error bits (above)
localparam HST_STATE_W = 3;
localparam HST_HA_W = 1;
localparam HST_HB_W = 1;
localparam HST_STATE_LSB = 0;
localparam HST_HA_LSB = HST_STATE_LSB + HST_STATE_W;
localparam HST_HB_LSB = HST_HA_LSB + HST_HA_W;
localparam HST_W = HST_HB_LSB + HST_HB_W;
// EA, EB: the error moves' halves
localparam EA_V_W = 1;
localparam EA_V_LSB = 0;
localparam EA_W = EA_V_LSB + EA_V_W;
localparam EB_V_W = 1;
localparam EB_V_LSB = 0;
localparam EB_W = EB_V_LSB + EB_V_W;
// DMH: whether the QP holds a MAC table entry (its number: the record's DMI)
localparam DMH_HELD_W = 1;
localparam DMH_HELD_LSB = 0;
localparam DMH_W = DMH_HELD_LSB + DMH_HELD_W;

// ---------------------------------------------------------------- record port
// The records in the port's order (record r's width at [r*32 +: 32], its
// bits at RB_* in the packed record-port vectors, as rec_map packs them)
localparam REC_N = 5;
localparam [REC_N*32-1:0] REC_WS = {32'd0 + DMH_W, 32'd0 + EB_W, 32'd0 + EA_W, 32'd0 + HST_W,
    32'd0 + QPC_W};
localparam RB_QPC = 0;
localparam RB_HST = RB_QPC + QPC_W;
localparam RB_EA = RB_HST + HST_W;
localparam RB_EB = RB_EA + EA_W;
localparam RB_DMH = RB_EB + EB_W;
localparam REC_BITS = RB_DMH + DMH_W;
// (rec_port checks REC_PORT and REC_WORDS, rec_map that the records fit)

// the record RAMs' record ports (rec_map's side; constant 0 with REC_PORT 0)
wire [QN_W-1:0]     rp_rd_addr;
wire [REC_BITS-1:0] rp_rd_data;
wire [REC_N-1:0]    rp_wr_en;
wire [QN_W-1:0]     rp_wr_addr;
wire [REC_BITS-1:0] rp_wr_data;
wire [REC_N-1:0]    rp_wr_ready;
// a record write of a swept record (HST, EA, EB, DMH) done this cycle: a
// reset after it must sweep as after the module's own writes
wire rp_wrote_swept = (rp_wr_en[REC_N-1:1] & rp_wr_ready[REC_N-1:1]) != {(REC_N-1){1'b0}};

rec_port #(
    .EN(REC_PORT),
    .N_REC(REC_N),
    .REC_W(REC_WS),
    .SLOT_W(QN_W),
    .REC_WORDS(REC_WORDS),
    .REC_BITS(REC_BITS)
) rec_port_inst (
    .clk(clk),
    .rst(rst),
    .s_rec_rd_valid(s_rec_rd_valid),
    .s_rec_rd_ready(s_rec_rd_ready),
    .s_rec_rd_slot(s_rec_rd_slot),
    .s_rec_rd_word(s_rec_rd_word),
    .m_rec_rd_data_valid(m_rec_rd_data_valid),
    .m_rec_rd_data(m_rec_rd_data),
    .s_rec_wr_valid(s_rec_wr_valid),
    .s_rec_wr_ready(s_rec_wr_ready),
    .s_rec_wr_slot(s_rec_wr_slot),
    .s_rec_wr_word(s_rec_wr_word),
    .s_rec_wr_data(s_rec_wr_data),
    .rec_rd_addr(rp_rd_addr),
    .rec_rd_data(rp_rd_data),
    .rec_wr_en(rp_wr_en),
    .rec_wr_addr(rp_wr_addr),
    .rec_wr_data(rp_wr_data),
    .rec_wr_ready(rp_wr_ready),
    .wr_busy(rec_wr_busy)
);

reg [47:0] mac_tbl [0:DMAC_N-1];
reg [QN_W:0] mac_ref [0:DMAC_N-1];      // QPs holding each entry (0: free)

reg err_reg = 1'b0;
reg err_dmac_reg = 1'b0;
reg load_rtr_reg = 1'b0;
reg load_rts_reg = 1'b0;
reg load_reset_reg = 1'b0;
reg load_err_reg = 1'b0;
reg [10:0] load_retry_reg = 11'd0;
reg [2:0] load_spray_reg = 3'd0;
reg [QN_W-1:0] load_qpn_reg = {QN_W{1'b0}};
reg [23:0] load_psn_reg = 24'd0;

integer i;

// its own loop variable: Yosys takes the value a loop leaves in a variable
// as that variable's initial value, and two initial loops of different
// lengths over one variable conflict
integer m;
integer mr;
initial begin
    for (m = 0; m < DMAC_N; m = m + 1) begin
        mac_tbl[m] = 48'd0;
        mac_ref[m] = {(QN_W+1){1'b0}};
    end
end

// receive ring size: a power of two 2..32768, or 0 for no receive queue
reg rq_size_ok;
reg [3:0] rq_log;
always @* begin
    rq_size_ok = reg_rq_size == 32'd0;
    rq_log = 4'd0;
    for (i = 1; i < 16; i = i + 1) begin
        if (reg_rq_size == (32'd1 << i)) begin
            rq_size_ok = 1'b1;
            rq_log = i[3:0];
        end
    end
end

wire [QN_W-1:0] sel = reg_sel[QN_W-1:0];
wire sel_ok = reg_sel < NUM_QP16;
wire [2:0] cur;
wire pmtu_ok = reg_pmtu >= 3'd1 && reg_pmtu <= 3'd5;
wire state_ok = reg_state <= QPS_RTS || reg_state == QPS_ERR;
wire [15:0] num_qp_cq = NUM_QP16;

// the MAC table entry a context load would use: the one holding its MAC,
// else the QP's own if only it holds it, else a free one (the search
// reads only the table's flops: the QP's own entry, from the block RAMs,
// is looked at after it)
wire [MI_W-1:0] old_mi;
wire old_held;
wire q_sweep;
localparam [QN_W:0] REF_ONE = {{QN_W{1'b0}}, 1'b1};
wire [DMAC_N-1:0] mac_hits;
wire [DMAC_N-1:0] mac_zero;     // entries no QP holds
wire [DMAC_N-1:0] mac_one;      // entries one QP holds
genvar gm;
generate
    for (gm = 0; gm < DMAC_N; gm = gm + 1) begin : g_mac
        assign mac_zero[gm] = mac_ref[gm] == 0;
        assign mac_one[gm] = mac_ref[gm] == REF_ONE;
        assign mac_hits[gm] = !mac_zero[gm] && mac_tbl[gm] == reg_dmac;
    end
endgenerate
wire mac_hit;
wire mac_zero_any;
wire [MI_W-1:0] hit_mi;
wire [MI_W-1:0] zero_mi;
priority_encoder #(.WIDTH(DMAC_N), .OUT_W(MI_W)) mac_hit_enc (
    .in(mac_hits),
    .valid(mac_hit),
    .index(hit_mi)
);
priority_encoder #(.WIDTH(DMAC_N), .OUT_W(MI_W)) mac_zero_enc (
    .in(mac_zero),
    .valid(mac_zero_any),
    .index(zero_mi)
);
// The command's MAC bookkeeping reads the QP's entry from flop copies of
// the block RAMs' answers (old_*_q), not from the RAMs (4.3 ns
// clock-to-out on the ECP5, then the reference counts' update: the
// deepest logic of the core): the selector is an MMIO write of its own,
// MMIO writes come at least three cycles apart, and only a command writes
// DMI and DMH, so in a command's cycle the RAMs answered for its QP, as
// now, in the cycle before too. The sweep after a reset writes DMH last
// in the cycle before the first command can come: the copy reads it as
// not held then (every held bit is swept to zero).
reg [MI_W-1:0] old_mi_q = {MI_W{1'b0}};
reg old_held_q = 1'b0;
always @(posedge clk) begin
    old_mi_q <= old_mi;
    old_held_q <= old_held && !q_sweep;
end
// (old_mi < DMAC_N whenever old_held: a load writes only entries of the table)
wire own_free = old_held_q && mac_one[old_mi_q];
wire mac_free = own_free || mac_zero_any;
wire [MI_W-1:0] new_mi = mac_hit ? hit_mi : own_free ? old_mi_q : zero_mi;
// only RTR and RTS need a destination: a QP in INIT takes no entry
wire mac_load = reg_cmd == 4'd1 && (reg_state == QPS_RTR || reg_state == QPS_RTS);

assign reg_err = err_reg;
assign reg_err_dmac = err_dmac_reg;
assign sel_state = sel_ok ? cur : QPS_RESET;
assign load_rtr = load_rtr_reg;
assign load_rts = load_rts_reg;
assign load_reset = load_reset_reg;
assign load_qpn = load_qpn_reg;
// a load takes its QP number from the selector in the command's cycle, so
// a RAM read at this address returns the loaded QP's word with the load
assign load_qpn_next = sel;
assign load_psn = load_psn_reg;
assign load_retry = load_retry_reg;
assign load_spray = load_spray_reg;
assign load_err = load_err_reg;

// a load writes the whole record (a QP keeps its MAC entry unless the load
// takes one)
wire cmd_bad = !sel_ok || !state_ok || (reg_cmd != 4'd1 && reg_cmd != 4'd2);
wire load_bad = reg_cmd == 4'd1 && (!pmtu_ok || reg_spray_log > 3'd6 || !rq_size_ok || reg_rcq >= num_qp_cq
    || reg_rq_base[11:0] != 12'd0);
wire rc_bad = reg_cmd == 4'd1 && RC_EN == 0 && !reg_mp;     // this build has no rc transport
wire dmac_bad = mac_load && !mac_hit && !mac_free;
wire cmd_ok = !cmd_bad && !load_bad && !rc_bad && !dmac_bad;
wire rec_wr = reg_cmd_valid && cmd_ok && reg_cmd == 4'd1;
reg [QPC_W-1:0] rec_in;
always @* begin
    rec_in = {QPC_W{1'b0}};
    rec_in[QPC_PMTU_LSB +: QPC_PMTU_W] = reg_pmtu;
    rec_in[QPC_SPRAY_LSB +: QPC_SPRAY_W] = reg_spray_log;
    rec_in[QPC_WSHIFT_LSB +: QPC_WSHIFT_W] = reg_mp_wshift;
    rec_in[QPC_DEST_LSB +: QPC_DEST_W] = reg_dest_qpn;
    rec_in[QPC_DMI_LSB +: QPC_DMI_W] = mac_load ? new_mi : old_mi;
    rec_in[QPC_DIP_LSB +: QPC_DIP_W] = reg_dip;
    rec_in[QPC_SPORT_LSB +: QPC_SPORT_W] = reg_udp_sport;
    rec_in[QPC_PD_LSB +: QPC_PD_W] = reg_pd;
    rec_in[QPC_MRA_LSB +: QPC_MRA_W] = reg_max_rd_atomic;
    rec_in[QPC_MP_LSB] = reg_mp;
    rec_in[QPC_RCQ_LSB +: QPC_RCQ_W] = reg_rcq[QN_W-1:0];
    rec_in[QPC_RQB_LSB +: QPC_RQB_W] = reg_rq_base[63:12];
    rec_in[QPC_RQL_LSB +: QPC_RQL_W] = rq_log;
    rec_in[QPC_RNRT_LSB +: QPC_RNRT_W] = reg_min_rnr_timer;
    rec_in[QPC_MDRA_LSB +: QPC_MDRA_W] = reg_max_dest_rd_atomic;
    rec_in[QPC_RW_LSB] = reg_remote_write;
    rec_in[QPC_RR_LSB] = reg_remote_read;
    rec_in[QPC_RA_LSB] = reg_remote_atomic;
end

wire [QPC_A_W-1:0] a_rec;
/* verilator lint_off UNUSEDSIGNAL */
wire [QPC_W-1:0] b_rec;     // (its spray field is the requester's)
/* verilator lint_on UNUSEDSIGNAL */

// port a: the low QPC_A_W bits; port b: the whole record; the host path's
// port: the MAC table entry (at sel, above)
ram_rec #(
    .DATA_W(QPC_W),
    .ADDR_W(QN_W),
    .DEPTH(NUM_QP),
    .INIT(QPC_INIT),
    .N_RD(3),
    .RD_LSB({32'd0 + QPC_DMI_LSB, 32'd0, 32'd0}),
    .RD_W({32'd0 + QPC_DMI_W, 32'd0 + QPC_W, 32'd0 + QPC_A_W}),
    .REC_EN(REC_PORT)
) rec_inst (
    .clk(clk),
    .wr_en(rec_wr),
    .wr_addr(sel),
    .wr_data(rec_in),
    .rd_addr({sel, b_qpn, a_qpn}),
    .rd_data({old_mi, b_rec, a_rec}),
    .rec_rd_addr(rp_rd_addr),
    .rec_rd_data(rp_rd_data[RB_QPC +: QPC_W]),
    .rec_wr_en(rp_wr_en[0]),
    .rec_wr_addr(rp_wr_addr),
    .rec_wr_data(rp_wr_data[RB_QPC +: QPC_W]),
    .rec_wr_ready(rp_wr_ready[0])
);

// the MAC-held bit: the host path alone writes and reads it, at sel
wire dmh_we;
// the sweep after a reset (ram_reset_sweep, its instance at the EA and EB
// writes)
wire [QN_W-1:0] q_sweep_q;
assign sweep = q_sweep;
wire [DMH_W-1:0] dmh_wd;
wire [DMH_W-1:0] dmh_sel;
ram_rec #(
    .DATA_W(DMH_W),
    .ADDR_W(QN_W),
    .DEPTH(NUM_QP),
    .N_RD(1),
    .RD_LSB(32'd0),
    .RD_W(32'd0 + DMH_W),
    .REC_EN(REC_PORT)
) dmh_inst (
    .clk(clk),
    .wr_en(dmh_we || q_sweep),
    .wr_addr(q_sweep ? q_sweep_q : sel),
    .wr_data(dmh_wd),
    .rd_addr(sel),
    .rd_data(dmh_sel),
    .rec_rd_addr(rp_rd_addr),
    .rec_rd_data(rp_rd_data[RB_DMH +: DMH_W]),
    .rec_wr_en(rp_wr_en[4]),
    .rec_wr_addr(rp_wr_addr),
    .rec_wr_data(rp_wr_data[RB_DMH +: DMH_W]),
    .rec_wr_ready(rp_wr_ready[4])
);
assign old_held = dmh_sel[DMH_HELD_LSB];

assign a_pmtu = a_rec[QPC_PMTU_LSB +: QPC_PMTU_W];
assign a_dest_qpn = a_rec[QPC_DEST_LSB +: QPC_DEST_W];
assign a_dmac = mac_tbl[a_rec[QPC_DMI_LSB +: QPC_DMI_W]];
assign a_dip = a_rec[QPC_DIP_LSB +: QPC_DIP_W];
assign a_udp_sport = a_rec[QPC_SPORT_LSB +: QPC_SPORT_W];
assign a_pd = a_rec[QPC_PD_LSB +: QPC_PD_W];
assign a_max_rd_atomic = a_rec[QPC_MRA_LSB +: QPC_MRA_W];
assign a_spray_log = a_rec[QPC_SPRAY_LSB +: QPC_SPRAY_W];
assign a_mp = RC_EN == 0 || a_rec[QPC_MP_LSB];
assign a_mp_wshift = a_rec[QPC_WSHIFT_LSB +: QPC_WSHIFT_W];

assign b_pmtu = b_rec[QPC_PMTU_LSB +: QPC_PMTU_W];
assign b_remote_write = b_rec[QPC_RW_LSB];
assign b_remote_read = b_rec[QPC_RR_LSB];
assign b_remote_atomic = b_rec[QPC_RA_LSB];
assign b_dest_qpn = b_rec[QPC_DEST_LSB +: QPC_DEST_W];
assign b_dmac = mac_tbl[b_rec[QPC_DMI_LSB +: QPC_DMI_W]];
assign b_dip = b_rec[QPC_DIP_LSB +: QPC_DIP_W];
assign b_udp_sport = b_rec[QPC_SPORT_LSB +: QPC_SPORT_W];
assign b_pd = b_rec[QPC_PD_LSB +: QPC_PD_W];
assign b_rcq = b_rec[QPC_RCQ_LSB +: QPC_RCQ_W];
assign b_rq_base = {b_rec[QPC_RQB_LSB +: QPC_RQB_W], 12'd0};
assign b_rq_log = b_rec[QPC_RQL_LSB +: QPC_RQL_W];
assign b_min_rnr_timer = b_rec[QPC_RNRT_LSB +: QPC_RNRT_W];
assign b_max_dest_rd_atomic = b_rec[QPC_MDRA_LSB +: QPC_MDRA_W];
assign b_mp = RC_EN == 0 || b_rec[QPC_MP_LSB];
assign b_mp_wshift = b_rec[QPC_WSHIFT_LSB +: QPC_WSHIFT_W];

// the MAC-held bit: set by a load that takes an entry, cleared by a move
// to RESET that gives one back
wire host_wr = reg_cmd_valid && cmd_ok;

wire dmh_set = host_wr && mac_load;
wire dmh_clr = host_wr && !mac_load && reg_state == QPS_RESET && old_held_q;
assign dmh_we = dmh_set || dmh_clr;
reg [DMH_W-1:0] dmh_wd_c;
always @* begin
    dmh_wd_c = {DMH_W{1'b0}};
    dmh_wd_c[DMH_HELD_LSB] = dmh_set && !q_sweep;
end
assign dmh_wd = dmh_wd_c;

// ---------------------------------------------------------------- the state
// The error moves are registered (pending) and written a cycle later, once
// the other two bits at their QP are read; a move of a QP the host writes
// in the same cycle is dropped (the host's write goes last), and of the
// two moves of one QP in one cycle the first is kept.
reg pa_v_reg = 1'b0;
reg [QN_W-1:0] pa_q_reg = {QN_W{1'b0}};
reg pb_v_reg = 1'b0;
reg [QN_W-1:0] pb_q_reg = {QN_W{1'b0}};
wire pa_v_next = set_err_a && !(host_wr && sel == set_err_a_qpn) && !q_sweep;
wire pb_v_next = set_err_b && !(host_wr && sel == set_err_b_qpn) && !q_sweep
    && !(set_err_a && set_err_a_qpn == set_err_b_qpn);
// whether a pending move is of the QP a port reads (a_qpn, b_qpn: a
// cycle ahead, as for the RAMs; sel), registered with it (the compares stay off the state's read path, which
// many of the requester's and responder's decisions start from; sel is
// the same in both cycles: above)
reg pend_a_reg = 1'b0;
reg pend_b_reg = 1'b0;
reg pend_s_reg = 1'b0;
always @(posedge clk) begin
    pa_v_reg <= pa_v_next;
    pa_q_reg <= set_err_a_qpn;
    pb_v_reg <= pb_v_next;
    pb_q_reg <= set_err_b_qpn;
    pend_a_reg <= (pa_v_next && set_err_a_qpn == a_qpn) || (pb_v_next && set_err_b_qpn == a_qpn);
    pend_b_reg <= (pa_v_next && set_err_a_qpn == b_qpn) || (pb_v_next && set_err_b_qpn == b_qpn);
    pend_s_reg <= (pa_v_next && set_err_a_qpn == sel) || (pb_v_next && set_err_b_qpn == sel);
    if (rst) begin
        pa_v_reg <= 1'b0;
        pb_v_reg <= 1'b0;
        pend_a_reg <= 1'b0;
        pend_b_reg <= 1'b0;
        pend_s_reg <= 1'b0;
    end
end
// a pending move writes unless the host writes its QP now
wire pa_we = pa_v_reg && !(host_wr && sel == pa_q_reg);
wire pb_we = pb_v_reg && !(host_wr && sel == pb_q_reg);

// the writers of HST, EA, EB and DMH (a DMH write is a host write)
ram_reset_sweep #(.DEPTH(NUM_QP), .ADDR_W(QN_W)) q_sweep_inst (
    .clk(clk),
    .rst(rst),
    .wrote(host_wr || pa_we || pb_we || rp_wrote_swept),
    .sweep(q_sweep),
    .sweep_addr(q_sweep_q)
);

// the bits at the pending moves' QPs (read with the move) and at a, b, sel
wire ha_pa, hb_pb;
wire [HST_W-1:0] hst_a, hst_b, hst_s;
wire ea_a, ea_b, ea_s, eb_a, eb_b, eb_s;
// (an error move sets its bit to differ from the host's)
wire [EA_W-1:0] ea_wd;
wire [EB_W-1:0] eb_wd;
assign ea_wd[EA_V_LSB] = !ha_pa && !q_sweep;
assign eb_wd[EB_V_LSB] = !hb_pb && !q_sweep;
reg [HST_W-1:0] hst_wd;
always @* begin
    hst_wd = {HST_W{1'b0}};
    if (!q_sweep) begin
        hst_wd[HST_STATE_LSB +: HST_STATE_W] = reg_state;
        hst_wd[HST_HA_LSB] = ea_s;
        hst_wd[HST_HB_LSB] = eb_s;
    end
end
// (ports in the order a, b, sel, pending a, pending b)
ram_rec #(
    .DATA_W(HST_W),
    .ADDR_W(QN_W),
    .DEPTH(NUM_QP),
    .N_RD(5),
    .RD_LSB({32'd0 + HST_HB_LSB, 32'd0 + HST_HA_LSB, 32'd0, 32'd0, 32'd0}),
    .RD_W({32'd0 + HST_HB_W, 32'd0 + HST_HA_W, 32'd0 + HST_W, 32'd0 + HST_W, 32'd0 + HST_W}),
    .REC_EN(REC_PORT)
) hst_inst (
    .clk(clk),
    .wr_en(host_wr || q_sweep),
    .wr_addr(q_sweep ? q_sweep_q : sel),
    .wr_data(hst_wd),
    .rd_addr({set_err_b_qpn, set_err_a_qpn, sel, b_qpn, a_qpn}),
    .rd_data({hb_pb, ha_pa, hst_s, hst_b, hst_a}),
    .rec_rd_addr(rp_rd_addr),
    .rec_rd_data(rp_rd_data[RB_HST +: HST_W]),
    .rec_wr_en(rp_wr_en[1]),
    .rec_wr_addr(rp_wr_addr),
    .rec_wr_data(rp_wr_data[RB_HST +: HST_W]),
    .rec_wr_ready(rp_wr_ready[1])
);
// (ports in the order a, b, sel)
ram_rec #(
    .DATA_W(EA_W),
    .ADDR_W(QN_W),
    .DEPTH(NUM_QP),
    .N_RD(3),
    .REC_EN(REC_PORT)
) ea_inst (
    .clk(clk),
    .wr_en(pa_we || q_sweep),
    .wr_addr(q_sweep ? q_sweep_q : pa_q_reg),
    .wr_data(ea_wd),
    .rd_addr({sel, b_qpn, a_qpn}),
    .rd_data({ea_s, ea_b, ea_a}),
    .rec_rd_addr(rp_rd_addr),
    .rec_rd_data(rp_rd_data[RB_EA +: EA_W]),
    .rec_wr_en(rp_wr_en[2]),
    .rec_wr_addr(rp_wr_addr),
    .rec_wr_data(rp_wr_data[RB_EA +: EA_W]),
    .rec_wr_ready(rp_wr_ready[2])
);
// (ports in the order a, b, sel)
ram_rec #(
    .DATA_W(EB_W),
    .ADDR_W(QN_W),
    .DEPTH(NUM_QP),
    .N_RD(3),
    .REC_EN(REC_PORT)
) eb_inst (
    .clk(clk),
    .wr_en(pb_we || q_sweep),
    .wr_addr(q_sweep ? q_sweep_q : pb_q_reg),
    .wr_data(eb_wd),
    .rd_addr({sel, b_qpn, a_qpn}),
    .rd_data({eb_s, eb_b, eb_a}),
    .rec_rd_addr(rp_rd_addr),
    .rec_rd_data(rp_rd_data[RB_EB +: EB_W]),
    .rec_wr_en(rp_wr_en[3]),
    .rec_wr_addr(rp_wr_addr),
    .rec_wr_data(rp_wr_data[RB_EB +: EB_W]),
    .rec_wr_ready(rp_wr_ready[3])
);
// a QP's state: ERR while an error bit differs from the host's or a move
// of it is pending
function [2:0] state_of(input [HST_W-1:0] hst, input ea, input eb, input pend);
    state_of = hst[HST_HA_LSB] != ea || hst[HST_HB_LSB] != eb || pend ? QPS_ERR
        : hst[HST_STATE_LSB +: HST_STATE_W];
endfunction
wire [2:0] a_st = state_of(hst_a, ea_a, eb_a, pend_a_reg);
wire [2:0] b_st = state_of(hst_b, ea_b, eb_b, pend_b_reg);
assign cur = state_of(hst_s, ea_s, eb_s, pend_s_reg);
assign a_state = a_st;
assign b_state = b_st;

always @(posedge clk) begin
    err_reg <= 1'b0;
    err_dmac_reg <= 1'b0;
    load_rtr_reg <= 1'b0;
    load_rts_reg <= 1'b0;
    load_reset_reg <= 1'b0;
    load_err_reg <= 1'b0;

    // (the states and the MAC-held bits: below)

    if (reg_cmd_valid) begin
        if (!cmd_ok) begin
            err_reg <= 1'b1;
            err_dmac_reg <= !cmd_bad && !load_bad && !rc_bad;   // only the MAC table was full
        end else begin
            // (a load's record goes to the RAMs: rec_wr)
            if (mac_load) begin
                if (!(old_held_q && old_mi_q == new_mi)) begin
                    mac_ref[new_mi] <= mac_ref[new_mi] + REF_ONE;
                    if (old_held_q) begin
                        mac_ref[old_mi_q] <= mac_ref[old_mi_q] - REF_ONE;
                    end
                end
                if (!mac_hit) begin
                    mac_tbl[new_mi] <= reg_dmac;
                end
            end else if (reg_state == QPS_RESET && old_held_q) begin
                mac_ref[old_mi_q] <= mac_ref[old_mi_q] - REF_ONE;   // (and dmh_clr)
            end
            load_qpn_reg <= sel;
            if (reg_state == QPS_RTR && cur != QPS_RTR) begin
                load_rtr_reg <= 1'b1;
                load_psn_reg <= reg_rq_psn;
            end
            if (reg_state == QPS_RTS && cur != QPS_RTS) begin
                load_rts_reg <= 1'b1;
                load_psn_reg <= reg_sq_psn;
                load_retry_reg <= {reg_rnr_retry, reg_retry_cnt, reg_timeout};
                load_spray_reg <= reg_spray_log;
            end
            if (reg_state == QPS_ERR && cur != QPS_ERR) begin
                load_err_reg <= 1'b1;
            end
            // going to RESET, or leaving it, clears the transport state
            if (reg_state == QPS_RESET || (reg_state == QPS_INIT && cur == QPS_RESET)) begin
                load_reset_reg <= 1'b1;
                load_psn_reg <= 24'd0;
            end
        end
    end

    if (rst) begin
        err_reg <= 1'b0;
        err_dmac_reg <= 1'b0;
        load_rtr_reg <= 1'b0;
        load_rts_reg <= 1'b0;
        load_reset_reg <= 1'b0;
        load_err_reg <= 1'b0;
        // (no entry is held once the sweep is done; none was before it
        // unless something was written)
        for (mr = 0; mr < DMAC_N; mr = mr + 1) begin
            mac_ref[mr] <= {(QN_W+1){1'b0}};
        end
    end
end

endmodule

`resetall
