// Completer (as in Linux rxe: the part of the requester that retires sent
// work requests): takes the ACKs and NAKs the responder's parser hands over,
// and the timeouts and flushes the requester's scanner finds, one QP at a
// time, and applies each to that QP's outstanding ring.
//
// The named steps, one state each:
//   C_LOAD   read the QP's una and the PSNs in flight (into flops)
//   C_CHECK  compare the ACK/NAK's PSN with them (registered for C_EVAL)
//   C_EVAL   check the ACK/NAK against them: an ACK may cover
//            [una - 1, sent - 1], a NAK must name a PSN in [una, sent);
//            anything else claims PSNs never sent and is dropped (counted)
//   C_POP    retire the ring's WQEs the ACK (or a NAK: the PSNs before it)
//            covers, asking for a CQE for each signaled one (C_CQE)
//   C_SEQ    sequence NAK: request a retransmission from its PSN
//   C_RNR    RNR NAK: the same, after the RNR timer
//   C_TLOAD  a timeout: read the QP's records (into flops)
//   C_TCHECK ... and path health's blame from them
//   C_PLOAD  an MP PROBE got no reply in time: read the QP's records
//   C_PFAIL  ... and fail the probe (path health: the path stays out)
//   C_TMO    retransmit timeout: request one from una
//   C_ERR    the QP is in error: the first remaining WQE completes with
//            the error, the rest are flushed
// Path health (sprayed QPs; path_health.v keeps the rules): C_SEQ blames
// the path of the PSN it names, C_TMO the path of una, each taken out
// (up to half of the QP's paths) until a probe comes back; an ACK or NAK
// that covers the NIC's timed packet (if it is this QP's) brings its path
// back if it was a probe; a NAK naming it, or a timeout, fails it. An mp
// QP's probe is an MP PROBE, which carries no data and takes no PSN: only
// its MP PROBE REPLY brings the path back (handed over as an ACK with the
// syndrome ACK_SYN_PROBE_REPLY), and the requester's timer fails it (C_PLOAD).
// Retry counters: timeouts and sequence NAKs without progress spend
// retry_cnt, RNR NAKs spend rnr_retry (7: unlimited); an ACK that moves una
// restores both.
//
// The per-QP records stay with the requester (it owns their block RAMs and
// their layout); this block reads its QP's fields a cycle after naming the
// QP (qpn_next, then qpn) and says what to write back: the REQ fields
// (req_we: written every cycle of the states that may change them, as read
// when nothing changes), the timer stamp, and the retransmission request
// bits. The ring's head moves with `pop`.
//
// An error NAK for a WQE still being sent (not yet in its ring) finds the
// ring empty; its status waits here (perr) for that WQE, which the flush
// that follows completes first (one such status for the whole NIC: a
// second QP in the same situation meanwhile gets a flush status).

`resetall
`timescale 1ns / 1ps
`default_nettype none

module completer #(
    parameter QN_W = 4,
    parameter CLK_MHZ = 250,                // for the RNR timer
    parameter TICK_LOG = 6,                 // the requester's timer tick: 2^TICK_LOG cycles
    parameter LOST_W = 63,                  // mp: a selective NAK's bitmap, as far as the window reaches
    parameter PH_EPOCH_LOG = 8              // path health: an epoch is 2^PH_EPOCH_LOG ticks
) (
    input  wire                 clk,
    input  wire                 rst,

    // ACKs and NAKs received (an ACK arriving with the queue full is
    // lost, as on the wire)
    input  wire                 s_ack_valid,
    input  wire [QN_W-1:0]      s_ack_qpn,
    input  wire [23:0]          s_ack_psn,
    input  wire [7:0]           s_ack_syndrome,
    input  wire [LOST_W-1:0]    s_ack_lost,     // MP SELECTIVE NAK: PSN + 1 + k lost too (else 0)
    output wire                 ack_queue_full,
    output wire                 idle,           // no ACK queued or in work
    input  wire [QN_W-1:0]      pin_qpn,        // the QP asked about ...
    output wire                 pin_busy,       // ... is worked on, or has an ACK queued

    // the scanner's findings for scan_q (registered, at most one a cycle)
    input  wire                 scan_flush,     // the QP is in ERR
    input  wire                 scan_tmo,       // its timeout expired
    input  wire [QN_W-1:0]      scan_q,
    output wire                 flush_take,     // the flush is taken up now

    input  wire                 load,           // a QP is loaded (RESET or RTS)
    input  wire [QN_W-1:0]      load_qpn,

    // the QP worked on: qpn_next a cycle ahead (the records' read address)
    output wire [QN_W-1:0]      qpn_next,
    output wire [QN_W-1:0]      qpn,

    // its records, as read at qpn
    input  wire [23:0]          una_now,
    input  wire [23:0]          sent_now,       // one past the highest PSN sent
    input  wire [2:0]           rleft,          // retries left
    input  wire [2:0]           nleft,          // RNR retries left
    input  wire [5:0]           rot,            // spraying: the path rotation
    input  wire [2:0]           spray_log,      // 2^spray_log paths
    input  wire [7:0]           ph_down,        // path health (path_health.v)
    input  wire [15:0]          ph_loss,
    input  wire [1:0]           ph_lepo,
    input  wire [3:0]           ph_hold,
    input  wire [1:0]           ph_back,
    input  wire [23:0]          ph_chg,         // the first PSN sent with today's avoid bits
    input  wire [1:0]           ph_thresh,      // losses in one epoch that take a path out (0: never)
    // the NIC's timed packet (one at a time), if it is this QP's
    input  wire                 timed_v,
    input  wire [23:0]          timed_psn,
    input  wire                 timed_probe,    // sent on a down path
    input  wire [2:0]           timed_path,
    input  wire                 timed_bare,     // ... an MP PROBE (no data, no PSN of its own)
    // the NIC's MP PROBE got no reply in time (the requester's timer)
    input  wire                 probe_lost,
    input  wire [QN_W-1:0]      probe_lost_qpn,
    input  wire [2:0]           retry_init,     // retry_cnt
    input  wire [2:0]           rnr_init,       // rnr_retry
    input  wire                 rtx_req,        // a retransmission is requested
    input  wire                 ring_empty_now, // its ring, as the RAMs read (C_TMO)
    // its ring through the requester's copies of the pointers (C_POP,
    // C_ERR): empty or not, and the entry at the head (a cycle after pop)
    input  wire                 ring_empty,
    input  wire                 ring_wait,      // the copies are not the QP's yet, or OSTH's port is a load's
    input  wire                 entry_sig,
    input  wire                 entry_send,
    input  wire                 entry_read,     // a READ or an atomic...
    input  wire [1:0]           entry_atom,     // ... which: 0 READ, 1 CMP_AND_SWP, 2 FETCH_AND_ADD
    input  wire [23:0]          entry_last_psn,
    input  wire [15:0]          entry_index,
    input  wire [63:0]          entry_wr_id,
    input  wire [31:0]          entry_len,
    output wire                 pop,

    // what it writes back at qpn
    output wire                 req_we,
    output reg  [23:0]          req_una,
    output reg  [2:0]           req_rleft,
    output reg  [2:0]           req_nleft,
    output reg  [5:0]           req_rot,
    output wire [7:0]           req_down,
    output wire [15:0]          req_loss,
    output wire [1:0]           req_lepo,
    output wire [3:0]           req_hold,
    output wire [1:0]           req_back,
    output wire [23:0]          req_chg,
    output wire                 timed_done,     // the timed packet's fate is known
    output wire                 probe_answered, // ... it was an MP PROBE, and its reply came
    input  wire [23:0]          now,            // timer ticks
    output wire                 stamp_we,
    output wire [23:0]          stamp_wd,
    output wire                 rtx_set,        // request a retransmission
    output wire                 rtx_one,        // ... of the named packet alone (mp)
    output wire                 rtx_clr,        // withdraw the request
    output wire                 lost_we,        // the QP's LOST record (a sequence NAK's other
    output wire [LOST_W-1:0]    lost_wd,        // lost PSNs), written at qpn

    // completion requests (send CQ of qpn_next, looked up a cycle ahead)
    output wire [QN_W-1:0]      acq_qpn,
    input  wire [QN_W-1:0]      acq_cqn,
    // the requester's retransmission may still read the buffer of the WQE
    // just retired (at qpn): its CQE waits, so that the host never sees a
    // completion before the NIC's last read of that buffer
    input  wire                 cqe_hold,
    output wire [QN_W-1:0]      m_acq_cqn,
    output wire [247:0]         m_acq_data,
    output wire                 m_acq_valid,
    input  wire                 m_acq_ready,

    output wire                 set_err,        // qpn goes to ERR
    output wire                 stat_ack_drop,  // an ACK/NAK for PSNs never sent, ignored
    output wire                 stat_timeout,
    output wire                 stat_nak_seq,
    output wire                 stat_rnr,
    output wire                 stat_takeout,   // a path was taken out
    output wire                 stat_comeback   // a probe brought one back
);

// the CQE format: hw/formats/rnic_formats.rdl
`include "rnic_formats.vh"

initial begin
    if (QN_W < 1 || QN_W >= 16 || CLK_MHZ < 16 || CLK_MHZ > 1000 || PH_EPOCH_LOG < 1
            || PH_EPOCH_LOG > 19) begin
        $error("completer: QN_W must be 1..15, CLK_MHZ 16..1000 and PH_EPOCH_LOG 1..19");
        $finish;
    end
end

localparam integer CYC_10US = 10 * CLK_MHZ;

// RNR NAK timer (IB table of RNR timer codes) in ticks
function [23:0] rnr_ticks(input [4:0] code);
    reg [31:0] units;    // of 10 us
    /* verilator lint_off UNUSEDSIGNAL */
    reg [31:0] cycles;
    /* verilator lint_on UNUSEDSIGNAL */
    begin
        case (code)
            5'd0: units = 65536;  5'd1: units = 1;      5'd2: units = 2;      5'd3: units = 3;
            5'd4: units = 4;      5'd5: units = 6;      5'd6: units = 8;      5'd7: units = 12;
            5'd8: units = 16;     5'd9: units = 24;     5'd10: units = 32;    5'd11: units = 48;
            5'd12: units = 64;    5'd13: units = 96;    5'd14: units = 128;   5'd15: units = 192;
            5'd16: units = 256;   5'd17: units = 384;   5'd18: units = 512;   5'd19: units = 768;
            5'd20: units = 1024;  5'd21: units = 1536;  5'd22: units = 2048;  5'd23: units = 3072;
            5'd24: units = 4096;  5'd25: units = 6144;  5'd26: units = 8192;  5'd27: units = 12288;
            5'd28: units = 16384; 5'd29: units = 24576; 5'd30: units = 32768; default: units = 49152;
        endcase
        cycles = units * CYC_10US;
        rnr_ticks = cycles[TICK_LOG+23:TICK_LOG];
    end
endfunction

// ACK events queue here; each is applied to its QP's outstanding ring
reg [QN_W+24+8-1:0] ackq [0:3];
reg [2:0] ackq_wr_reg = 3'd0;
reg [2:0] ackq_rd_reg = 3'd0;
// ... with a selective NAK's bitmap beside each (zero for the others)
reg [LOST_W-1:0] ackl [0:3];
reg [LOST_W-1:0] c_lost_reg = {LOST_W{1'b0}};
integer i;
initial begin
    for (i = 0; i < 4; i = i + 1) begin
        ackq[i] = {(QN_W+32){1'b0}};
        ackl[i] = {LOST_W{1'b0}};
    end
end
wire ackq_empty = ackq_wr_reg == ackq_rd_reg;
wire ackq_full = ackq_wr_reg - ackq_rd_reg == 3'd4;
assign ack_queue_full = ackq_full;

localparam [3:0] C_IDLE = 4'd0, C_EVAL = 4'd1, C_POP = 4'd2, C_ERR = 4'd3, C_CQE = 4'd4,
    C_SEQ = 4'd5, C_RNR = 4'd6, C_TMO = 4'd7, C_LOAD = 4'd8, C_TLOAD = 4'd9, C_PLOAD = 4'd10,
    C_PFAIL = 4'd11, C_CHECK = 4'd12, C_TCHECK = 4'd13;
`include "ack_syndromes.vh"
reg [3:0] c_state_reg = C_IDLE;
reg [3:0] c_next_reg = C_IDLE;
reg [QN_W-1:0] c_qpn_reg = {QN_W{1'b0}};
reg [23:0] c_psn_reg = 24'd0;
reg [7:0] c_syn_reg = 8'd0;
reg [23:0] c_limit_reg = 24'd0;
reg c_error_reg = 1'b0;
reg [CQE_STATUS_W-1:0] c_err_status_reg = {CQE_STATUS_W{1'b0}};
// the entry being completed (its PSN and signaled bit were used to pick it)
reg c_send_reg = 1'b0;
reg c_read_reg = 1'b0;
reg [1:0] c_atom_reg = 2'd0;
reg [15:0] c_index_reg = 16'd0;
reg [63:0] c_wr_id_reg = 64'd0;
reg [31:0] c_len_reg = 32'd0;

// the QP taken up next (C_IDLE's choice)
wire [QN_W+24+8-1:0] ackq_head = ackq[ackq_rd_reg[1:0]];
reg [QN_W-1:0] c_qpn_next;
always @* begin
    c_qpn_next = c_qpn_reg;
    if (c_state_reg == C_IDLE) begin
        if (scan_flush || scan_tmo) begin
            c_qpn_next = scan_q;
        end else if (!ackq_empty) begin
            c_qpn_next = ackq_head[QN_W+32-1:32];
        end else if (probe_lost) begin
            c_qpn_next = probe_lost_qpn;
        end
    end
end
assign qpn_next = c_qpn_next;
assign qpn = c_qpn_reg;

// C_EVAL's check: una and sent read in C_LOAD into flops (only the
// completer moves una; sent grows as packets leave, and an ACK for a
// packet sent in the last two cycles cannot have arrived), the offsets
// from una compared in C_CHECK and registered: no path runs from the
// records' block RAMs (4.3 ns clock-to-out on the ECP5) through the 24-bit
// compares, and C_EVAL starts its decisions at flops. C_TLOAD reads una
// and the rotation for the timeout's blame the same way (C_TCHECK).
reg [23:0] c_una_reg = 24'd0;
reg [23:0] c_sent_reg = 24'd0;
reg [5:0] c_rot_reg = 6'd0;
wire [23:0] outstanding_c = c_sent_reg - c_una_reg;
wire [23:0] ack_off_c = (c_psn_reg + 24'd1) - c_una_reg;
reg c_ack_ok_reg = 1'b0;        // the ACK's PSN is outstanding (or una - 1)
reg c_nak_ok_reg = 1'b0;        // the NAK's PSN is outstanding
reg c_ack_nz_reg = 1'b0;        // ... and the ACK moves una
always @(posedge clk) begin
    c_ack_ok_reg <= ack_off_c <= outstanding_c;
    c_nak_ok_reg <= c_psn_reg - c_una_reg < outstanding_c;
    c_ack_nz_reg <= ack_off_c != 24'd0;
end
wire c_una_moves = c_syn_reg[6:5] == 2'b00 && c_ack_ok_reg && c_ack_nz_reg;
// C_POP's compare of the entry at the ring's head with the limit is
// registered (c_cov_reg): no path runs from the ring's block RAM through
// the 24-bit compare into the pop, which moves the ring's pointers, its
// owner bits and the READ table. It is computed with the limit as it is
// in the next cycle (C_EVAL sets it) and holds for the entry read in this
// cycle, so it counts (c_cov_ok_reg) only when the head did not move and
// the ring was not empty (a WQE recorded into an empty ring writes the
// entry the head reads): after a pop C_POP waits a cycle, so a run of
// unsignaled WQEs retires one every two cycles.
wire [23:0] c_limit_next = c_state_reg != C_EVAL ? c_limit_reg
    : c_syn_reg[6:5] == 2'b00 ? c_psn_reg : c_psn_reg - 24'd1;
wire c_cov_now;
reg c_cov_reg = 1'b0;
reg c_cov_ok_reg = 1'b0;
always @(posedge clk) begin
    c_cov_reg <= c_cov_now;
    c_cov_ok_reg <= !pop && !ring_empty;
end
`ifdef FORMAL_BREAK_EARLY_SEND_CQE
// a planted bug for hw/formal only (never defined elsewhere): the entry
// counts as covered one PSN early; formal_requester must catch it
wire c_cov_now = (c_limit_next + 24'd1 - entry_last_psn) < 24'h800000;
`else
wire c_cov_now = (c_limit_next - entry_last_psn) < 24'h800000;   // entry's last PSN <= limit
`endif

// ---------------------------------------------------------------- path health
// The path blamed for a loss is the one the executor's pick gave the
// named packet (una on a timeout): PSN + rotation, passed on past the
// paths out (path_pick.v). The pick is known only for packets sent since
// the paths out or the rotation last changed (CHG: the PSN sent next
// then, with a margin for the executor's pipeline): a loss of an earlier
// packet is not counted, as its path is not known.
// Its inputs are registered a cycle ahead (their logic and the update's
// in one cycle were twice the depth the timing gate allows): for C_SEQ in
// C_POP (or C_CQE), for C_TMO in C_TCHECK, for C_EVAL in C_CHECK; each
// also registers timed_v, so that a packet timed meanwhile is not
// settled by what was computed for the one before. They start at flops
// (una, the rotation, the health fields and CHG as C_LOAD, C_TLOAD or
// C_POP read them: only C_SEQ and C_TMO change the rotation, and they end
// the QP's turn).
// (the health fields as read: below)
reg [7:0] phr_down_reg = 8'd0;
reg [15:0] phr_loss_reg = 16'd0;
reg [1:0] phr_lepo_reg = 2'd0;
reg [3:0] phr_hold_reg = 4'd0;
reg [1:0] phr_back_reg = 2'd0;
reg [23:0] phr_chg_reg = 24'd0;
reg [2:0] phr_spray_reg = 3'd0;
reg [1:0] phr_thresh_reg = 2'd1;
reg phr_loaded_reg = 1'b0;
wire [3:0] epoch = now[PH_EPOCH_LOG+3:PH_EPOCH_LOG];
wire [23:0] blame_psn = c_state_reg == C_TCHECK ? c_una_reg : c_psn_reg;
/* verilator lint_off UNUSEDSIGNAL */
wire [5:0] blame_path;          // (health: mod 8)
/* verilator lint_on UNUSEDSIGNAL */
path_pick blame_pick_inst (
    .base(blame_psn[5:0] + c_rot_reg),
    .spray_log(phr_spray_reg),
    .avoid(phr_down_reg),
    .path(blame_path)
);
localparam [23:0] LOST_W24 = LOST_W[23:0];
wire [23:0] timed_after = timed_psn - c_psn_reg - 24'd1;
reg [2:0] bl_path_reg = 3'd0;
reg bl_fresh_reg = 1'b0;
reg bl_probe_reg = 1'b0;
reg tm_v_reg = 1'b0;
// (each of these for a timed data packet, never an MP PROBE)
reg tm_acked_reg = 1'b0;        // an ACK for c_psn covers it (from c_una_reg: C_CHECK)
reg tm_before_reg = 1'b0;       // it is before a NAK's PSN (from c_una_reg)
reg tm_named_reg = 1'b0;        // the NAK names it
reg tm_tmo_reg = 1'b0;          // the timeout takes (tmo_takes_reg)
reg tm_reply_reg = 1'b0;        // an MP PROBE: a reply with its PSN
always @(posedge clk) begin
    bl_path_reg <= blame_path[2:0];
    bl_fresh_reg <= (blame_psn - phr_chg_reg) < 24'h800000;
    // (an MP PROBE's PSN is the next data packet's: a loss named there is that packet's)
    bl_probe_reg <= timed_v && timed_probe && !timed_bare && timed_psn == blame_psn;
    tm_reply_reg <= timed_bare && c_syn_reg == ACK_SYN_PROBE_REPLY && timed_psn == c_psn_reg;
    tm_v_reg <= timed_v;
    tm_acked_reg <= !timed_bare && (timed_psn - c_una_reg) < ack_off_c;
    tm_before_reg <= !timed_bare && (timed_psn - c_una_reg) < (c_psn_reg - c_una_reg);
    tm_named_reg <= !timed_bare && (timed_psn == c_psn_reg
        || (timed_after < LOST_W24 && c_lost_reg[timed_after[$clog2(LOST_W+1)-1:0]]));
end
// a NAK that is news (not one for a PSN whose resend is already asked),
// and one that may rotate the map (it names una again, retries left), as
// seen in C_POP. Whether it rotates also depends on the request bit, which
// the executor may clear before C_SEQ; CHG moves whether or not (a later
// CHG only blames fewer packets, an earlier one could blame a neighbour)
reg seq_new_reg = 1'b0;
reg seq_same_reg = 1'b0;
always @(posedge clk) begin
    seq_new_reg <= !(c_psn_reg == c_una_reg && rleft == 3'd0) && !(rtx_req && c_una_reg == c_psn_reg);
    seq_same_reg <= c_psn_reg == c_una_reg && rleft != 3'd0;
end
wire c_tmo_takes = !(ring_empty_now || rtx_req) && rleft != 3'd0;
// ... as seen in C_TLOAD, for path health (a ring only the completer
// empties, a request only the completer sets: if the timeout took then,
// it takes in C_TMO)
reg tmo_takes_reg = 1'b0;
always @(posedge clk) begin
    tmo_takes_reg <= c_tmo_takes;
    tm_tmo_reg <= c_tmo_takes && !timed_bare;
end
// the timed packet: acknowledged by an ACK (una moves past it) or by a NAK
// (every PSN before the named one arrived); named lost by a NAK. An MP
// PROBE: answered by its reply, failed by the requester's timer (C_PFAIL)
wire tm_same = timed_v && tm_v_reg;
wire c_reply = c_syn_reg == ACK_SYN_PROBE_REPLY;
wire timed_ok = tm_same && ((c_state_reg == C_EVAL && (tm_reply_reg || (c_una_moves && tm_acked_reg)))
    || ((c_state_reg == C_SEQ || c_state_reg == C_RNR) && tm_before_reg));
wire timed_fail = (timed_v && timed_bare && c_state_reg == C_PFAIL)
    || (tm_same && c_state_reg == C_SEQ && !tm_before_reg && tm_named_reg)
    || (timed_v && c_state_reg == C_TMO && tm_tmo_reg);
assign timed_done = timed_ok || timed_fail;
assign probe_answered = timed_ok && timed_bare;
// a lost probe tells of its own path (timed_fail), not of the pick's
wire blame = ((c_state_reg == C_SEQ && seq_new_reg) || (c_state_reg == C_TMO && tmo_takes_reg))
    && !bl_probe_reg && bl_fresh_reg;
// The health fields too are taken from a register of the cycle before
// (the records of the QP do not change between C_LOAD, C_POP, C_CQE or
// C_TLOAD and the update that follows), unless a load of the QP came
// between: then as a load leaves them (nothing out, no counts, no RTT,
// spraying off for this write, CHG as read), so no path from a block
// RAM's output runs through the update.
// (taken only in the states before an update: C_LOAD before C_CHECK and
// C_EVAL, C_POP before C_SEQ and C_RNR, C_TLOAD before C_TCHECK and C_TMO)
wire phr_take = c_state_reg == C_LOAD || c_state_reg == C_POP || c_state_reg == C_TLOAD
    || c_state_reg == C_PLOAD;
always @(posedge clk) begin
    if (phr_take) begin
        phr_down_reg <= ph_down;
        phr_loss_reg <= ph_loss;
        phr_lepo_reg <= ph_lepo;
        phr_hold_reg <= ph_hold;
        phr_back_reg <= ph_back;
        phr_chg_reg <= ph_chg;
        phr_spray_reg <= spray_log;
        phr_thresh_reg <= ph_thresh;
    end
    // (from the take to the update: C_CHECK and C_TCHECK lie between)
    phr_loaded_reg <= (phr_loaded_reg && !phr_take) || (load && load_qpn == c_qpn_reg);
end
wire [7:0] phu_down = phr_loaded_reg ? 8'd0 : phr_down_reg;
wire [15:0] phu_loss = phr_loaded_reg ? 16'd0 : phr_loss_reg;
wire [1:0] phu_lepo = phr_loaded_reg ? 2'd0 : phr_lepo_reg;
wire [3:0] phu_hold = phr_loaded_reg ? 4'd0 : phr_hold_reg;
wire [1:0] phu_back = phr_loaded_reg ? 2'd0 : phr_back_reg;
wire [2:0] phu_spray = phr_loaded_reg ? 3'd0 : phr_spray_reg;
wire ph_takeout, ph_comeback;
path_health health_inst (
    .down(phu_down),
    .loss(phu_loss),
    .lepo(phu_lepo),
    .hold(phu_hold),
    .back(phu_back),
    .spray_log(phu_spray),
    .thresh(phr_thresh_reg),
    .epoch(epoch),
    .blame(blame),
    .blame_path(bl_path_reg),
    .timed_ok(timed_ok),
    .timed_fail(timed_fail),
    .timed_probe(timed_probe),
    .timed_path(timed_path),
    .down_next(req_down),
    .loss_next(req_loss),
    .lepo_next(req_lepo),
    .hold_next(req_hold),
    .back_next(req_back),
    .takeout(ph_takeout),
    .comeback(ph_comeback)
);
// the avoid bits change: packets from a little beyond the next PSN on
// take the new pick
// (takeout or comeback: the avoid bits changed, without comparing them)
assign req_chg = phr_loaded_reg ? ph_chg
    : (ph_takeout || ph_comeback || (c_state_reg == C_SEQ && seq_same_reg)
        || (c_state_reg == C_TMO && tmo_takes_reg)) ? sent_now + 24'd2 : phr_chg_reg;
assign stat_takeout = ph_takeout && req_we;
assign stat_comeback = ph_comeback && req_we;

// the write-back of the QP's REQ fields (every cycle of the states that
// may change them: the enable and the address do not wait for the checks)
assign req_we = c_state_reg == C_EVAL || c_state_reg == C_SEQ || c_state_reg == C_RNR
    || c_state_reg == C_TMO || c_state_reg == C_PFAIL;
always @* begin
    req_una = una_now;
    req_rleft = rleft;
    req_nleft = nleft;
    req_rot = rot;
    case (c_state_reg)
        C_EVAL: begin
            // an ACK that moves una: the retry counters are full again
            if (c_una_moves) begin
                req_una = c_psn_reg + 24'd1;
                req_rleft = retry_init;
                req_nleft = rnr_init;
            end
        end
        C_SEQ: begin
            req_una = c_psn_reg;
            if (!(c_psn_reg == c_una_reg && rleft == 3'd0)) begin
                req_rleft = c_psn_reg == c_una_reg ? rleft - 3'd1 : retry_init;
                if (!(rtx_req && c_una_reg == c_psn_reg)) begin
                    // (the path the lost packet took: path health, above)
                    if (c_psn_reg == c_una_reg) begin
                        // the same PSN lost again (its resend too): the
                        // map rotates, as after a timeout, so that the next
                        // resend does not take a path that drops it again
                        // (a flapping path, say) until the retries run out
                        req_rot = rot + 6'd1;
                    end
                end
            end
        end
        C_RNR: begin
            req_una = c_psn_reg;
            if (rnr_init != 3'd7 && nleft != 3'd0) begin
                req_nleft = nleft - 3'd1;
            end
        end
        C_TMO: begin
            if (!(ring_empty_now || rtx_req) && rleft != 3'd0) begin
                // the next rotation: a resent packet avoids the path that lost it
                req_rleft = rleft - 3'd1;
                req_rot = rot + 6'd1;
            end
        end
        default: begin
        end
    endcase
end

// the timer's base: when an ACK moves una, on a sequence NAK, on an RNR
// NAK (the wait's end) and on a timeout
assign stamp_we = (c_state_reg == C_EVAL && c_una_moves) || c_state_reg == C_SEQ
    || c_state_reg == C_RNR || (c_state_reg == C_TMO && !ring_empty_now && !rtx_req);
assign stamp_wd = c_state_reg == C_RNR ? now + rnr_ticks(c_syn_reg[4:0]) : now;

// the retransmission request: on a sequence NAK (unless one from this PSN
// stands; on mp that packet alone), an RNR NAK and a timeout, when their
// retry counters allow; C_ERR withdraws it
wire c_seq_rtx = c_state_reg == C_SEQ && !(c_psn_reg == c_una_reg && rleft == 3'd0)
    && !(rtx_req && c_una_reg == c_psn_reg);
wire c_rnr_rtx = c_state_reg == C_RNR && !(rnr_init != 3'd7 && nleft == 3'd0);
wire c_tmo_rtx = c_state_reg == C_TMO && !(ring_empty_now || rtx_req) && rleft != 3'd0;
assign rtx_set = c_seq_rtx || c_rnr_rtx || c_tmo_rtx;
assign rtx_one = c_seq_rtx;
assign rtx_clr = c_state_reg == C_ERR && !ring_wait;
// a sequence NAK's other lost PSNs go with the request (on mp the
// executor resends them after the named one; an rc NAK's are zero and
// unused); a newer NAK from the same PSN replaces them
assign lost_we = c_state_reg == C_SEQ;
assign lost_wd = c_lost_reg;
assign flush_take = c_state_reg == C_IDLE && scan_flush;
assign idle = c_state_reg == C_IDLE && ackq_empty;
// (the context table's question: an ACK queued or in work writes the
// QP's records; the queue's unused entries may hold anything)
reg [3:0] pin_q;
always @* begin
    for (i = 0; i < 4; i = i + 1) begin
        pin_q[i] = ackq[i][QN_W+32-1:32] == pin_qpn
            && (ackq_wr_reg - ackq_rd_reg) > ((i[2:0] - {1'b0, ackq_rd_reg[1:0]}) & 3'd3);
    end
end
assign pin_busy = (c_state_reg != C_IDLE && c_qpn_reg == pin_qpn) || |pin_q;

assign pop = !ring_wait && !ring_empty
    && ((c_state_reg == C_POP && c_cov_ok_reg && c_cov_reg) || c_state_reg == C_ERR);

assign acq_qpn = c_qpn_next;
assign m_acq_cqn = acq_cqn;
reg [CQE_OWNER_LSB-1:0] ack_cqe;
always @* begin
    ack_cqe = {CQE_OWNER_LSB{1'b0}};
    ack_cqe[CQE_WR_ID_LSB +: CQE_WR_ID_W] = c_wr_id_reg;
    ack_cqe[CQE_BYTE_LEN_LSB +: CQE_BYTE_LEN_W] = c_len_reg;
    ack_cqe[CQE_QN_LSB +: CQE_QN_W] = {{(CQE_QN_W-QN_W){1'b0}}, c_qpn_reg};
    ack_cqe[CQE_OPCODE_LSB +: CQE_OPCODE_W] = c_send_reg ? WC_OPCODE_SEND
        // (IBV_WC_RDMA_READ, COMP_SWAP, FETCH_ADD are 2, 3, 4)
        : c_read_reg ? WC_OPCODE_RDMA_READ + {6'd0, c_atom_reg} : WC_OPCODE_RDMA_WRITE;
    ack_cqe[CQE_STATUS_LSB +: CQE_STATUS_W] = c_error_reg ? c_err_status_reg : WC_STATUS_SUCCESS;
    ack_cqe[CQE_WQE_COUNTER_LSB +: CQE_WQE_COUNTER_W] = c_index_reg;
    ack_cqe[CQE_SYNDROME_LSB +: CQE_SYNDROME_W] = c_error_reg ? c_syn_reg : 8'd0;
end
assign m_acq_data = ack_cqe;
assign m_acq_valid = c_state_reg == C_CQE && !cqe_hold;

reg c_set_err_reg = 1'b0;
reg c_drop_reg = 1'b0;
reg stat_timeout_reg = 1'b0;
reg stat_nak_seq_reg = 1'b0;
reg stat_rnr_reg = 1'b0;
assign set_err = c_set_err_reg;
assign stat_ack_drop = c_drop_reg;
assign stat_timeout = stat_timeout_reg;
assign stat_nak_seq = stat_nak_seq_reg;
assign stat_rnr = stat_rnr_reg;

reg perr_valid_reg = 1'b0;
reg [QN_W-1:0] perr_qpn_reg = {QN_W{1'b0}};
reg [CQE_STATUS_W-1:0] perr_status_reg = {CQE_STATUS_W{1'b0}};
reg [7:0] perr_syn_reg = 8'd0;

always @(posedge clk) begin
    c_set_err_reg <= 1'b0;
    c_drop_reg <= 1'b0;
    stat_timeout_reg <= 1'b0;
    stat_nak_seq_reg <= 1'b0;
    stat_rnr_reg <= 1'b0;

    if (s_ack_valid && !ackq_full) begin
        ackq[ackq_wr_reg[1:0]] <= {s_ack_qpn, s_ack_psn, s_ack_syndrome};
        ackl[ackq_wr_reg[1:0]] <= s_ack_lost;
        ackq_wr_reg <= ackq_wr_reg + 3'd1;
    end

    c_qpn_reg <= c_qpn_next;
    case (c_state_reg)
        C_IDLE: begin
            c_error_reg <= 1'b0;
            if (scan_flush) begin
                // the QP is in ERR: complete what it still holds, flushed
                // (the first one with a waiting NAK status, if any)
                c_syn_reg <= 8'd0;
                c_err_status_reg <= WC_STATUS_WR_FLUSH_ERR;
                // (unless the QP is loaded now: the load drops the status)
                if (perr_valid_reg && perr_qpn_reg == scan_q && !(load && load_qpn == scan_q)) begin
                    c_syn_reg <= perr_syn_reg;
                    c_err_status_reg <= perr_status_reg;
                    perr_valid_reg <= 1'b0;
                end
                c_state_reg <= C_ERR;                   // (flush_take)
            end else if (scan_tmo) begin
                c_syn_reg <= 8'd0;
                c_state_reg <= C_TLOAD;
            end else if (!ackq_empty) begin
                {c_psn_reg, c_syn_reg} <= ackq_head[31:0];
                c_lost_reg <= ackl[ackq_rd_reg[1:0]];
                ackq_rd_reg <= ackq_rd_reg + 3'd1;
                c_state_reg <= C_LOAD;
            end else if (probe_lost) begin
                c_syn_reg <= 8'd0;
                c_state_reg <= C_PLOAD;
            end
        end
        C_PLOAD: begin
            // (the records of the QP read, for path health)
            c_state_reg <= C_PFAIL;
        end
        C_PFAIL: begin
            // the probe failed: its path stays out (req_*: path health)
            c_state_reg <= C_IDLE;
        end
        C_TLOAD: begin
            // (the records of the QP read)
            c_una_reg <= una_now;
            c_rot_reg <= rot;
            c_state_reg <= C_TCHECK;
        end
        C_TCHECK: begin
            // (path health's blame registered)
            c_state_reg <= C_TMO;
        end
        C_LOAD: begin
            c_una_reg <= una_now;
            c_sent_reg <= sent_now;
            c_rot_reg <= rot;
            c_state_reg <= C_CHECK;
        end
        C_CHECK: begin
            // (the ACK/NAK's offsets from una registered)
            c_state_reg <= C_EVAL;
        end
        C_EVAL: begin
            if (c_reply) begin
                // an MP PROBE REPLY: settles the timed probe (timed_ok) or,
                // late or duplicated, nothing; it acknowledges no PSN
                c_state_reg <= C_IDLE;
            end else if (c_syn_reg[6:5] == 2'b10 || (c_syn_reg[6:5] == 2'b00 ? !c_ack_ok_reg : !c_nak_ok_reg)) begin
                // claims PSNs this QP never sent (or a stale NAK): ignored
                c_drop_reg <= 1'b1;
                c_state_reg <= C_IDLE;
            end else if (c_syn_reg[6:5] == 2'b00) begin
                // ACK: everything up to this PSN arrived (una, the retry
                // counters and the stamp, if it moves una: req_*, stamp_we)
                c_limit_reg <= c_limit_next;    // (the ACK's PSN)
                c_state_reg <= C_POP;
                c_next_reg <= C_IDLE;
            end else begin
                // NAK: what precedes its PSN completed
                c_limit_reg <= c_limit_next;    // (the PSN before the NAK's)
                c_state_reg <= C_POP;
                if (c_syn_reg[6:5] == 2'b01) begin
                    c_next_reg <= C_RNR;
                end else if (c_syn_reg[4:0] == 5'd0) begin
                    c_next_reg <= C_SEQ;
                end else begin
                    c_next_reg <= C_ERR;
                end
                case (c_syn_reg[4:0])
                    5'd1: c_err_status_reg <= WC_STATUS_REM_INV_REQ_ERR;
                    5'd2: c_err_status_reg <= WC_STATUS_REM_ACCESS_ERR;
                    default: c_err_status_reg <= WC_STATUS_REM_OP_ERR;
                endcase
            end
        end
        C_POP: if (!ring_wait) begin
            if (!ring_empty && !c_cov_ok_reg) begin
                // (the entry at the head is compared with the limit a
                // cycle after it is read: c_cov_reg)
            end else if (!ring_empty && c_cov_reg) begin
                // (the entry: latched with the pop, below)
                if (entry_sig) begin
                    c_state_reg <= C_CQE;
                end
            end else begin
                c_state_reg <= c_next_reg;
                if (c_next_reg == C_ERR) begin
                    c_set_err_reg <= 1'b1;
                end
            end
        end
        C_SEQ: begin
            // PSN sequence error: go back to the PSN the responder expects
            // (una, the retry counter, path health: req_*; the stamp;
            // the request, unless one from this PSN stands: rtx_set)
            stat_nak_seq_reg <= 1'b1;
            if (c_psn_reg == c_una_reg && rleft == 3'd0) begin
                c_err_status_reg <= WC_STATUS_RETRY_EXC_ERR;
                c_set_err_reg <= 1'b1;
                c_state_reg <= C_ERR;
            end else begin
                c_state_reg <= C_IDLE;
            end
        end
        C_RNR: begin
            // receiver not ready: resend from its PSN after the RNR timer
            // (una and the RNR retry counter: req_*; the stamp; rtx_set)
            stat_rnr_reg <= 1'b1;
            if (rnr_init != 3'd7 && nleft == 3'd0) begin
                c_err_status_reg <= WC_STATUS_RNR_RETRY_EXC_ERR;
                c_set_err_reg <= 1'b1;
                c_state_reg <= C_ERR;
            end else begin
                c_state_reg <= C_IDLE;
            end
        end
        C_TMO: begin
            // no progress within the local ACK timeout: resend from una
            if (ring_empty_now || rtx_req) begin
                c_state_reg <= C_IDLE;
            end else begin
                stat_timeout_reg <= 1'b1;               // (the stamp: stamp_we)
                if (rleft == 3'd0) begin
                    c_err_status_reg <= WC_STATUS_RETRY_EXC_ERR;
                    c_set_err_reg <= 1'b1;
                    c_state_reg <= C_ERR;
                end else begin
                    // (the retry counter and the rotation: req_*; rtx_set)
                    c_state_reg <= C_IDLE;
                end
            end
        end
        C_ERR: if (!ring_wait) begin
            // the first remaining WQE gets the error, the rest are flushed
            // (and a retransmission request is withdrawn: rtx_clr)
            if (!ring_empty) begin
                c_error_reg <= 1'b1;
                c_state_reg <= C_CQE;
            end else begin
                if (!c_error_reg && c_err_status_reg != WC_STATUS_WR_FLUSH_ERR && !perr_valid_reg) begin
                    perr_valid_reg <= 1'b1;
                    perr_qpn_reg <= c_qpn_reg;
                    perr_status_reg <= c_err_status_reg;
                    perr_syn_reg <= c_syn_reg;
                end
                c_state_reg <= C_IDLE;
            end
        end
        C_CQE: begin
            if (m_acq_ready && !cqe_hold) begin
                if (c_error_reg) begin
                    c_err_status_reg <= WC_STATUS_WR_FLUSH_ERR;
                    c_state_reg <= C_ERR;
                end else begin
                    c_state_reg <= C_POP;
                end
            end
        end
        default: c_state_reg <= C_IDLE;
    endcase
    // the entry popped, for its CQE
    if (pop) begin
        c_send_reg <= entry_send;
        c_read_reg <= entry_read;
        c_atom_reg <= entry_atom;
        c_index_reg <= entry_index;
        c_wr_id_reg <= entry_wr_id;
        c_len_reg <= entry_len;
    end

    if (load && load_qpn == perr_qpn_reg) begin
        perr_valid_reg <= 1'b0;
    end

    if (rst) begin
        perr_valid_reg <= 1'b0;
        c_state_reg <= C_IDLE;
        ackq_wr_reg <= 3'd0;
        ackq_rd_reg <= 3'd0;
    end
end

endmodule

`resetall
