// Requester (as in Linux rxe: the side that sends work requests): runs the
// send queues, and completes them from the ACKs (the completer).
//
// Fetches the next WQE of the send queue the queue manager picked and runs
// it; work requests of one queue run strictly in posting order.
//
// - LOCAL_DMA_COPY (0x80) needs no network: the source is read into staging
//   slots and written out to the destination, pipelined over NUM_SLOTS
//   chunks; its CQE is requested once every chunk write has been issued.
// - RDMA_READ (READ_EN, rc QPs): one RDMA READ REQUEST packet (RETH: the
//   remote address, key and length; no payload) that takes a PSN per
//   response it asks for. Its local buffer must be local-writable memory
//   of the QP's PD (lkey); the READ table (read_track) takes its span and
//   the buffer's bus address, and the responder places the responses
//   there. The completer retires it from the response-placed events the
//   responder hands over after each response's write was accepted, so its
//   CQE follows its data. A resend asks again from the first PSN whose
//   response is missing (RETH advanced by as many PMTUs). With
//   IBV_SEND_FENCE a WQE waits until its QP has no READ in flight.
// - RDMA_WRITE, RDMA_WRITE_WITH_IMM, SEND, SEND_WITH_IMM: the local buffer
//   (lkey) is read PMTU by PMTU into TX slots and each chunk leaves as one
//   packet (FIRST / MIDDLE / LAST / ONLY, RETH on the first, ImmDt on the
//   last) with consecutive PSNs. The WQE then waits in the QP's outstanding
//   ring until an ACK covers its last PSN (the ACK completer below), which
//   requests its CQE.
//
// Reliability (go-back-N): a PSN-sequence NAK, an RNR NAK (after its timer)
// or the retransmit timeout asks for a retransmission from a PSN. The
// executor then walks the QP's outstanding ring from that PSN, fetching each
// WQE again from the send ring (the host keeps a slot until its completion
// retires it) and resending its packets with their original PSNs. While a
// retransmission is pending the queue manager does not hand out new WQEs of
// that QP. Timeouts and sequence NAKs without progress spend retry_cnt, RNR
// NAKs spend rnr_retry (7: unlimited); progress restores both. When they run
// out, or a NAK reports an error, the QP goes to ERR and every outstanding
// WQE completes in order: the first with the error, the rest flushed.
//
// Outstanding rings are a shared pool: OST_RINGS rings of OST_DEPTH entries.
// A QP takes one when it records a WQE into an empty ring and gives it back
// when the ring drains (or the QP is reset), so a QP with nothing in flight
// costs its ring number and two counters, not a ring. When every ring is in
// use, QPs with empty rings wait (the queue manager holds them); QPs that
// hold a ring go on, and rings drain as ACKs and timeouts arrive, so the
// wait is bounded.
//
// Prefetch: while a WQE streams (copy or send), the next WQE the queue
// manager offers (of any queue, the same one included) is fetched into the
// second WQE slot, so the next work request starts without a fetch round
// trip. A queue with a prefetched WQE gets no further one until it is used,
// so each queue's WQEs still run in posting order.
//
// Completions are requested from the CQE writer (m_cqe_* for local results,
// m_acq_* from the ACK completer).
//
// Record port (REC_PORT 1; issue 19, DESIGN.md section 6, step 1): a QP's
// whole requester state read and written as 64-bit words (s_rec_* and
// m_rec_*, rec_map's contract), so that the QP context cache can move it
// between a slot and host memory. Its records, in this order, each
// starting a word: RQL, REQ, SNT, SQP, STAMP, LST (ram_rec's record copy
// and record write; REQ's VB and SQP's RV, SNT's VB and SQP's SV, the
// halves of the written-since-the-load bits, travel as they are stored). Not in
// it: the outstanding rings (OST entries, ring owners, heads, requests),
// addressed by ring, not by QP: they hold only QPs with WQEs in flight,
// which the cache will keep pinned; a QP without a ring has its head at
// its tail, which is in SQP.

`resetall
`timescale 1ns / 1ps
`default_nettype none

module requester #(
    parameter DATA_W = 64,
    parameter RAM_ADDR_W = 17,       // DMA engine RAM space, byte address
    parameter QN_W = 4,
    parameter NUM_QP = 16,
    parameter LEN_W = 17,
    parameter ID_W = 8,
    parameter CHUNK_LOG = 12,
    parameter NUM_SLOTS = 6,                        // copy slots in the staging RAM
    parameter [RAM_ADDR_W-1:0] WQE_RAM = 0,         // two 64-byte WQE slots (current, prefetched)
    parameter [RAM_ADDR_W-1:0] TX_RAM_BASE = 0,     // TX RAM: NUM_TX_SLOTS slots of 4 KiB
    parameter NUM_TX_SLOTS = 8,
    parameter MAX_INFLIGHT = 256,                   // unacknowledged packets per QP
    parameter MP_W = 64,                            // mp: the responder's window (packets in flight)
    parameter SEND_EN = 1,                          // 0: SEND(+IMM) WQEs are unknown opcodes
    parameter READ_EN = 0,                          // 1: RDMA_READ WQEs (else unknown opcodes)
    parameter ATOMIC_EN = 0,                        // 1: atomic WQEs (needs READ_EN; else unknown opcodes)
    parameter OST_RINGS = 16,                       // outstanding rings shared by the QPs
    parameter CLK_MHZ = 250,                        // for the IB timer units
    parameter [ID_W-1:0] ID_TAG = 0,
    parameter REC_PORT = 0,                         // 1: the record port (s_rec_*, m_rec_*)
    parameter REC_WORDS = 8                         // ... this module's 64-bit words per QP, 2^k
) (
    input  wire                   clk,
    input  wire                   rst,

    // from the queue manager
    input  wire                   s_sq_valid,
    input  wire [QN_W-1:0]        s_sq_qn,
    input  wire [63:0]            s_sq_wqe_addr,
    input  wire [15:0]            s_sq_index,
    input  wire [QN_W-1:0]        s_sq_cqn,
    output wire                   s_sq_ready,
    output wire                   sq_done,
    output wire [QN_W-1:0]        sq_done_qn,
    output wire                   sq_done_back,       // ... given back, not run (offered again)
    input  wire                   sq_done_ready,
    input  wire [QN_W-1:0]        sq_hold_qn,         // the queue asked about ...
    output wire                   sq_hold,            // ... its new WQEs must wait

    // QP context (requester port; ctx_* are the context of the ctx_qpn of
    // the cycle before) and MR lookup (lkey)
    output wire [QN_W-1:0]        ctx_qpn,
    input  wire [2:0]             ctx_state,
    input  wire [2:0]             ctx_pmtu,
    input  wire [23:0]            ctx_dest_qpn,
    input  wire [47:0]            ctx_dmac,
    input  wire [31:0]            ctx_dip,
    input  wire [15:0]            ctx_udp_sport,
    input  wire [2:0]             ctx_spray_log,      // spread packets over 2^n source ports
    input  wire                   ctx_mp,             // multipath: RETH in every WRITE packet
    input  wire [2:0]             ctx_mp_wshift,      // mp: this QP's window = MP_W >> shift
    input  wire [15:0]            ctx_pd,
    input  wire [2:0]             ctx_max_rd_atomic,  // READs and atomics in flight at most (0: none may be posted)
    input  wire                   load_rts,
    input  wire                   load_reset,
    input  wire [QN_W-1:0]        load_qpn,
    input  wire [QN_W-1:0]        load_qpn_next,      // the QP a load in the next cycle names
    input  wire [23:0]            load_psn,
    input  wire [10:0]            load_retry,         // {rnr_retry, retry_cnt, timeout}, with load_rts
    input  wire [2:0]             load_spray,         // spray_log, with load_rts
    input  wire [1:0]             cfg_path_thresh,    // path health: losses in an epoch to take a path out (0: off)
    input  wire                   cfg_resend_after_cqe, // debug: no cqe_hold (a resend may read a buffer after its CQE)
    input  wire                   flush_a,            // the QP went to ERR elsewhere:
    input  wire [QN_W-1:0]        flush_a_qpn,        // flush its outstanding WQEs
    input  wire                   flush_b,
    input  wire [QN_W-1:0]        flush_b_qpn,
    output wire                   set_err,
    output wire [QN_W-1:0]        set_err_qpn,
    output wire [31:0]            mr_key,
    output wire [63:0]            mr_va,
    output wire [31:0]            mr_len,
    output wire [15:0]            mr_pd,
    output wire [3:0]             mr_access,          // LOCAL_WRITE for a READ's buffer
    input  wire                   mr_ok,
    input  wire [63:0]            mr_bus,

    // the READ table (read_track; READ_EN)
    input  wire                   rt_alloc_ready,
    output wire                   rt_alloc_valid,
    output wire [23:0]            rt_alloc_first,
    output wire [23:0]            rt_alloc_last,
    output wire [63:0]            rt_alloc_bus,
    output wire [31:0]            rt_alloc_key,
    output wire [31:0]            rt_alloc_len,
    output wire                   rt_alloc_atomic,   // the entry is an atomic's (one ATOMIC ACKNOWLEDGE)
    output wire                   rt_free_valid,      // the completer retires a READ
    output wire [QN_W-1:0]        rt_free_qpn,
    output wire [23:0]            rt_free_last,
    output wire [QN_W-1:0]        rt_q_qpn,           // the fence's question (qn)
    input  wire                   rt_q_busy,
    input  wire                   rt_q_full,          // qn has ctx_max_rd_atomic READs in flight
    output wire                   rt_fence_valid,     // a fenced WQE of qn given back
    input  wire                   rt_hold,            // sq_hold_qn's fenced WQE waits for its READs

    // DMA read engine (statuses of this client only)
    output wire [63:0]            m_rd_desc_pcie_addr,
    output wire [RAM_ADDR_W-1:0]  m_rd_desc_ram_addr,
    output wire [LEN_W-1:0]       m_rd_desc_len,
    output wire [ID_W-1:0]        m_rd_desc_id,
    output wire                   m_rd_desc_valid,
    input  wire                   m_rd_desc_ready,
    input  wire [3:0]             s_rd_status_error,
    input  wire                   s_rd_status_valid,
    /* verilator lint_off UNUSEDSIGNAL */
    input  wire [ID_W-1:0]        s_rd_status_id,     // bit 0 tells the prefetch read apart
    /* verilator lint_on UNUSEDSIGNAL */

    // DMA write engine (copy chunks; statuses of this client only)
    output wire [63:0]            m_wr_desc_pcie_addr,
    output wire [RAM_ADDR_W-1:0]  m_wr_desc_ram_addr,
    output wire [LEN_W-1:0]       m_wr_desc_len,
    output wire [ID_W-1:0]        m_wr_desc_id,
    output wire                   m_wr_desc_valid,
    input  wire                   m_wr_desc_ready,
    input  wire                   s_wr_status_valid,

    input  wire [RAM_ADDR_W-$clog2(DATA_W/8)-1:0] ram_snoop_addr,
    input  wire [DATA_W-1:0]      ram_snoop_data,
    input  wire [DATA_W/8-1:0]    ram_snoop_strb,
    input  wire                   ram_snoop_en,

    // packets to roce_tx
    output wire [47:0]            m_pkt_dmac,
    output wire [31:0]            m_pkt_dip,
    output wire [15:0]            m_pkt_udp_sport,
    output wire [7:0]             m_pkt_opcode,
    output wire                   m_pkt_se,
    output wire                   m_pkt_ack_req,
    output wire [23:0]            m_pkt_dest_qp,
    output wire [23:0]            m_pkt_psn,
    output wire [63:0]            m_pkt_reth_va,
    output wire [31:0]            m_pkt_reth_rkey,
    output wire [31:0]            m_pkt_reth_len,
    output wire [31:0]            m_pkt_imm,
    output wire [63:0]            m_pkt_atomic_cmp,  // an AtomicETH's compare (its swap/add: RETH length, ImmDt)
    output wire [RAM_ADDR_W-1:0]  m_pkt_payload_addr,
    output wire [12:0]            m_pkt_payload_len,
    output wire                   m_pkt_valid,
    input  wire                   m_pkt_ready,
    input  wire                   pkt_done,           // roce_tx finished one of our packets

    // ACKs and NAKs received (from the responder's parser)
    input  wire                   s_ack_valid,
    input  wire [QN_W-1:0]        s_ack_qpn,
    input  wire [23:0]            s_ack_psn,
    input  wire [7:0]             s_ack_syndrome,
    input  wire [MP_W-2:0]        s_ack_lost,         // MP SELECTIVE NAK: its SNAKETH (else 0),
                                                      // as far as the window reaches
    output wire                   ack_room,           // the completer takes an ACK now
    output wire                   acks_idle,          // ... and has none queued or in work

    // completion requests
    output wire [QN_W-1:0]        m_cqe_cqn,
    output wire [247:0]           m_cqe_data,
    output wire                   m_cqe_valid,
    input  wire                   m_cqe_ready,
    output wire [QN_W-1:0]        acq_qpn,            // send CQ of this QP (a cycle ahead) ...
    input  wire [QN_W-1:0]        acq_cqn,            // ... looked up in the queue manager
    output wire [QN_W-1:0]        m_acq_cqn,
    output wire [247:0]           m_acq_data,
    output wire                   m_acq_valid,
    input  wire                   m_acq_ready,

    // requester state of a QP, for register read-back
    input  wire [QN_W-1:0]        sel_qpn,
    output wire [23:0]            sel_sq_psn,
    // whether QP pin_qpn has work outside its records (pin_busy answers
    // the pin_qpn of the cycle before): the context table moves no QP
    // that has
    input  wire [QN_W-1:0]        pin_qpn,
    output reg                    pin_busy = 1'b0,

    output wire                   err_valid,
    output wire [7:0]             err_code,
    output wire [15:0]            err_qn,
    output wire                   stat_ack_drop,     // an ACK/NAK for PSNs never sent, ignored
    output wire                   stat_retransmit,   // a packet sent again
    output wire                   stat_timeout,      // a retransmit timeout expired
    output wire                   stat_nak_seq,      // a PSN-sequence NAK received
    output wire                   stat_rnr,          // an RNR NAK received
    output wire                   stat_path_out,     // path health took a path out
    output wire                   stat_path_back,    // a probe brought a path back
    output wire                   stat_probe,        // an MP PROBE was sent
    output wire                   stat_probe_rtt_v,  // ... one was answered, after
    output wire [15:0]            stat_probe_rtt,    // ... this many cycles
    output wire                   stat_ring_busy,    // every outstanding ring is in use

    // record port (REC_PORT 1; DESIGN.md section 6, step 1): this module's
    // per-QP records as REC_WORDS 64-bit words (rec_map's contract)
    input  wire                   s_rec_rd_valid,
    output wire                   s_rec_rd_ready,
    input  wire [QN_W-1:0]        s_rec_rd_slot,
    input  wire [$clog2(REC_WORDS)-1:0] s_rec_rd_word,
    output wire                   m_rec_rd_data_valid,
    output wire [63:0]            m_rec_rd_data,
    input  wire                   s_rec_wr_valid,
    output wire                   s_rec_wr_ready,
    input  wire [QN_W-1:0]        s_rec_wr_slot,
    input  wire [$clog2(REC_WORDS)-1:0] s_rec_wr_word,
    input  wire [63:0]            s_rec_wr_data,
    output wire                   rec_wr_busy
);

// the ring entry formats: hw/formats/rnic_formats.rdl
`include "rnic_formats.vh"

localparam CHUNK = 1 << CHUNK_LOG;
localparam SLOT_W = $clog2(NUM_SLOTS);
localparam integer LAST_SLOT_I = NUM_SLOTS - 1;
localparam [SLOT_W-1:0] LAST_SLOT = LAST_SLOT_I[SLOT_W-1:0];
localparam TXS_W = $clog2(NUM_TX_SLOTS);
localparam OST_DEPTH = 8;
localparam [3:0] OST_DEPTH_4 = 4'd8;
localparam [23:0] MAX_INFLIGHT_24 = MAX_INFLIGHT[23:0];
localparam [23:0] MP_W_24 = MP_W[23:0];                       // outstanding WQEs per QP
// mp: a selective NAK names PSNs up to a window beyond its own (the rest
// of its 128-bit SNAKETH lies beyond what this requester ever has in flight)
localparam LOST_W = MP_W - 1;
localparam LOST_LOG = $clog2(LOST_W);

// Timers count ticks of 2^TICK_LOG cycles. The local ACK timeout is
// 4.096 us * 2^timeout (timeout 0: none); its exponent is clamped so that a
// timeout fits the 24-bit tick arithmetic (2^23 ticks).
localparam TICK_LOG = 6;
localparam TMO_BASE = $clog2(4096 * CLK_MHZ / 1000) - TICK_LOG;
localparam integer MAX_TMO_EXP_I = 23 - TMO_BASE;
localparam integer LAST_QP_I = NUM_QP - 1;
localparam [QN_W-1:0] LAST_QP = LAST_QP_I[QN_W-1:0];

localparam [7:0] ERR_UNKNOWN_OPCODE = 8'd3, ERR_DMA_READ = 8'd4;
localparam [2:0] QPS_RTS = 3'd3;

initial begin
    if (DATA_W < 64 || DATA_W > 512 || (DATA_W & (DATA_W - 1)) != 0) begin
        $error("requester: DATA_W must be 64, 128, 256 or 512");
        $finish;
    end
    if (NUM_SLOTS < 2 || QN_W >= 16 || NUM_TX_SLOTS < 2 || (NUM_TX_SLOTS & (NUM_TX_SLOTS - 1)) != 0) begin
        $error("requester: bad NUM_SLOTS, QN_W or NUM_TX_SLOTS");
        $finish;
    end
    if (CHUNK_LOG >= LEN_W || CHUNK_LOG < 12) begin
        $error("requester: chunks must hold a 4 KiB packet and fit a descriptor");
        $finish;
    end
    if (NUM_QP < 1 || NUM_QP > (1 << QN_W)) begin
        $error("requester: NUM_QP must be 1..2^QN_W");
        $finish;
    end
    if (OST_RINGS < 2 || OST_RINGS > NUM_QP) begin
        $error("requester: OST_RINGS must be 2..NUM_QP");
        $finish;
    end
    if (CLK_MHZ < 16 || CLK_MHZ > 1000 || TMO_BASE < 0) begin
        $error("requester: CLK_MHZ must be 16..1000");
        $finish;
    end
    // (rec_port checks REC_PORT and REC_WORDS, rec_map that the records fit)
end

// The timeout is 2^(TMO_BASE + min(exp, MAX)) ticks; its mask holds the
// bits at or above it, each a compare of exp with a constant (no shifter
// or subtractor behind the exponent's block RAM)
function [23:0] tmo_mask(input [4:0] exp);
    integer i;
    begin
        for (i = 0; i < 24; i = i + 1) begin
            tmo_mask[i] = i >= TMO_BASE && ({27'd0, exp} <= i - TMO_BASE
                || MAX_TMO_EXP_I <= i - TMO_BASE);
        end
    end
endfunction

localparam [3:0]
    ST_IDLE = 4'd0,
    ST_FETCH = 4'd1,
    ST_FETCH_WAIT = 4'd2,
    ST_DECODE = 4'd3,
    ST_COPY = 4'd4,
    ST_SEND = 4'd5,
    ST_RECORD = 4'd6,
    ST_CQE = 4'd7,
    ST_DONE = 4'd8,
    ST_RTX_PICK = 4'd9,
    ST_MR = 4'd10;        // the MR table's answer for the fetched WQE, registered

reg [3:0] state_reg = ST_IDLE;

reg [QN_W-1:0] qn_reg = {QN_W{1'b0}};
reg [QN_W-1:0] cqn_reg = {QN_W{1'b0}};
reg [63:0] wqe_addr_reg = 64'd0;
reg [15:0] wqe_index_reg = 16'd0;
// the MR lookup of the WQE's local buffer, a cycle after the WQE settled
reg mr_ok_reg = 1'b0;
reg mr_wait_reg = 1'b0;
reg [63:0] mr_bus_reg = 64'd0;
// the reserved bytes are not read
/* verilator lint_off UNUSEDSIGNAL */
wire [8*SEND_WQE_BYTES-1:0] wqe_reg;
/* verilator lint_on UNUSEDSIGNAL */

wire [SEND_WQE_OPCODE_W-1:0] wqe_opcode = wqe_reg[SEND_WQE_OPCODE_LSB +: SEND_WQE_OPCODE_W];
wire wqe_signaled = wqe_reg[SEND_WQE_FLAGS_SIGNALED_LSB];
wire wqe_solicited = wqe_reg[SEND_WQE_FLAGS_SOLICITED_LSB];
wire [SEND_WQE_LENGTH_W-1:0] wqe_len = wqe_reg[SEND_WQE_LENGTH_LSB +: SEND_WQE_LENGTH_W];
wire [SEND_WQE_WR_ID_W-1:0] wqe_wr_id = wqe_reg[SEND_WQE_WR_ID_LSB +: SEND_WQE_WR_ID_W];
wire [SEND_WQE_LOCAL_ADDR_W-1:0] wqe_laddr = wqe_reg[SEND_WQE_LOCAL_ADDR_LSB +: SEND_WQE_LOCAL_ADDR_W];
wire [SEND_WQE_REMOTE_ADDR_W-1:0] wqe_raddr = wqe_reg[SEND_WQE_REMOTE_ADDR_LSB +: SEND_WQE_REMOTE_ADDR_W];
wire [SEND_WQE_RKEY_W-1:0] wqe_rkey = wqe_reg[SEND_WQE_RKEY_LSB +: SEND_WQE_RKEY_W];
wire [SEND_WQE_IMM_W-1:0] wqe_imm_mem = wqe_reg[SEND_WQE_IMM_LSB +: SEND_WQE_IMM_W];
// the entry holds the immediate in wire order: its first byte is the most significant
wire [31:0] wqe_imm = {wqe_imm_mem[7:0], wqe_imm_mem[15:8], wqe_imm_mem[23:16], wqe_imm_mem[31:24]};
wire [SEND_WQE_LKEY_W-1:0] wqe_lkey = wqe_reg[SEND_WQE_LKEY_LSB +: SEND_WQE_LKEY_W];
// RDMA_WRITE is the default case of every decision below
wire wqe_is_send = SEND_EN != 0
    && (wqe_opcode == WR_OPCODE_SEND || wqe_opcode == WR_OPCODE_SEND_WITH_IMM);
wire wqe_fence = wqe_reg[SEND_WQE_FLAGS_FENCE_LSB];
wire wqe_is_read;               // (below, with the QP's transport)
wire wqe_is_atomic;             // (... as this)
// a READ or an atomic: one request packet, the answer placed into the
// local buffer, tracked in the READ table
wire wqe_is_rdat = wqe_is_read || wqe_is_atomic;
wire wqe_is_roce = wqe_opcode == WR_OPCODE_RDMA_WRITE || wqe_opcode == WR_OPCODE_RDMA_WRITE_WITH_IMM
    || wqe_is_send || wqe_is_rdat;
wire wqe_is_cas = wqe_opcode == WR_OPCODE_ATOMIC_CMP_AND_SWP;
wire [63:0] wqe_compare_add = wqe_reg[SEND_WQE_COMPARE_ADD_LSB +: SEND_WQE_COMPARE_ADD_W];
wire [63:0] wqe_swap = wqe_reg[SEND_WQE_SWAP_LSB +: SEND_WQE_SWAP_W];
// the AtomicETH's swap or add field (ibv_send_wr: FETCH_AND_ADD's add is compare_add)
wire [63:0] wqe_swap_add = wqe_is_cas ? wqe_swap : wqe_compare_add;
wire wqe_has_imm = wqe_opcode == WR_OPCODE_RDMA_WRITE_WITH_IMM || wqe_opcode == WR_OPCODE_SEND_WITH_IMM;

reg [CQE_STATUS_W-1:0] wc_status_reg = {CQE_STATUS_W{1'b0}};
reg [CQE_OPCODE_W-1:0] wc_opcode_reg = {CQE_OPCODE_W{1'b0}};
reg [31:0] byte_len_reg = 32'd0;
reg [63:0] src_reg = 64'd0;             // bus address of the source bytes

// chunk pipeline (copy chunks and packets)
reg [31:0] rd_off_reg = 32'd0;
reg [31:0] wr_off_reg = 32'd0;
reg [31:0] rd_issued_reg = 32'd0;
reg [31:0] rd_done_reg = 32'd0;
reg [31:0] wr_issued_reg = 32'd0;
reg [31:0] wr_done_reg = 32'd0;
reg [SLOT_W-1:0] rd_slot_reg = {SLOT_W{1'b0}};
reg [SLOT_W-1:0] wr_slot_reg = {SLOT_W{1'b0}};
reg copy_err_reg = 1'b0;
reg decode_err_reg = 1'b0;               // a local error waits for older WQEs to flush
reg decode_qpop_reg = 1'b0;              // ... and it is a READ or atomic on a QP that may issue none
reg give_back_reg = 1'b0;                // the WQE must wait: given back, not run (ST_DONE)
reg [23:0] psn0_reg = 24'd0;             // PSN of the first packet of this WQE

// retransmission walk over the outstanding ring
reg rtx_mode_reg = 1'b0;
reg [3:0] rtx_idx_reg = 4'd0;
reg [23:0] rtx_from_reg = 24'd0;         // resend packets from this PSN on
reg [23:0] rtx_psn0_reg = 24'd0;
reg [23:0] rtx_skip_reg = 24'd0;         // packets of the entry before rtx_from
// mp: a selective NAK's other lost PSNs (bit k: rtx_base + 1 + k; taken
// from the QP's LOST record when the walk starts, each cleared as its
// packet is resent) and the next of them, registered from the bitmap
reg [LOST_W-1:0] rtx_lost_reg = {LOST_W{1'b0}};
reg [23:0] rtx_base_reg = 24'd0;
reg rtx_lost_ld_reg = 1'b0;              // take the bitmap in ST_RTX_PICK
reg rtx_hole_done_reg = 1'b0;            // the hole at rtx_from is resent (or acknowledged)
reg rtx_lost_chg_reg = 1'b0;             // the bitmap changed: the next is a cycle late
reg rtx_nxt_v_reg = 1'b0;
reg [LOST_LOG-1:0] rtx_nxt_k_reg = {LOST_LOG{1'b0}};

reg err_valid_reg = 1'b0;
reg [7:0] err_code_reg = 8'd0;

// ---------------------------------------------------------------- per-QP requester state
// Three records in block RAM (ram_sdp_copies), each with one writer,
// declared once below (RQL_*, REQ_*, SNT_*_LSB/_W), one copy per read
// port. A read port presents the QP number one cycle ahead (the value its
// QP register takes at the next edge) and its copy's output is then that
// QP's word, as a combinational read of a flop array through the register
// was; the RAMs forward a write to a read of the same QP in the same cycle.
//
// RQL: the retry settings a load (RESET or RTS) sets. Written by the load
// only. TMO: the local ACK timeout exponent (0: none); RETRY: retry_cnt;
// RNR: rnr_retry (7: unlimited)
localparam RQL_TMO_W = 5;
localparam RQL_RETRY_W = 3;
localparam RQL_RNR_W = 3;
localparam RQL_SPRAY_W = 3;     // SPRAY: spray_log (the completer's path health)
localparam RQL_TMO_LSB = 0;
localparam RQL_RETRY_LSB = RQL_TMO_LSB + RQL_TMO_W;
localparam RQL_RNR_LSB = RQL_RETRY_LSB + RQL_RETRY_W;
localparam RQL_SPRAY_LSB = RQL_RNR_LSB + RQL_RNR_W;
localparam RQL_W = RQL_SPRAY_LSB + RQL_SPRAY_W;
// REQ: what the ACK completer moves. Written by the completer (at
// c_qpn); a load does not write it (the completer owns the write port)
// but makes it read as loaded until its next write: una the loaded PSN
// (sq_psn, which only a load and ST_RECORD move), the retry counters full,
// no rotation, no path out, CHG the loaded PSN. ST_RECORD, which moves
// sq_psn, writes the record as it reads if it reads as loaded (the
// completer's write goes first: ST_RECORD then waits a cycle, unless the
// completer writes this very QP).
//
// "Written since the load" is one bit per QP with two writers, the load
// and the record's writers, and it is read at QP numbers known a cycle
// ahead. It is kept in block RAM as two bits whose XOR it is: RV in SQP,
// which only the load writes (to REQ's VB as it stands: the bit reads 0),
// and VB in REQ, which every write of the record sets to the complement
// of the QP's RV (the bit reads 1). A flop vector with a decoder per
// writer and a mux per reader cost LUTs in proportion to the QPs; this
// costs a comparator and a 1-bit RAM copy read at the load's QP (its
// number is the host's QP selector a cycle ahead, load_qpn_next).
// UNA: the oldest unacknowledged PSN; ONE: the retransmission request
// (ow_rtx_reg) is a sequence NAK's on mp: resend the named packet alone,
// then whatever was never sent (written with every request, read only
// while one stands); RLEFT: retries left (timeouts, sequence NAKs); NLEFT:
// RNR retries left
localparam REQ_UNA_W = 24;
localparam REQ_VB_W = 1;        // VB: the record's half of the written-since-the-load bit
localparam REQ_ONE_W = 1;
// spraying: the PSN -> source port mapping rotates by one after every
// timeout, so a resent packet does not take the path that just lost it
// (a dead path costs throughput, never the packets: they move on) ...
localparam REQ_ROT_W = 6;
// ... and path health (path_health.v): DOWN the paths taken out (their
// packets take the next path), HOLD the epoch of the last take-out or
// failed probe, BACK the probes failed since, LOSS 2-bit loss counts per
// path in the epoch LEPO; eight paths
localparam REQ_DOWN_W = 8;
localparam REQ_HOLD_W = 4;
localparam REQ_BACK_W = 2;
localparam REQ_RLEFT_W = 3;
localparam REQ_NLEFT_W = 3;
localparam REQ_LOSS_W = 16;
localparam REQ_LEPO_W = 2;
localparam REQ_CHG_W = 24;      // CHG: the first PSN the last change of the avoid bits applies to
// (in the order the copies read them: the go copy reads UNA to ONE, the qn
// copy UNA to BACK (REQ_QN_W: at 1,024 QPs three block RAMs, not six), the
// completer's all)
localparam REQ_UNA_LSB = 0;
localparam REQ_VB_LSB = REQ_UNA_LSB + REQ_UNA_W;
localparam REQ_ONE_LSB = REQ_VB_LSB + REQ_VB_W;
localparam REQ_ROT_LSB = REQ_ONE_LSB + REQ_ONE_W;
localparam REQ_DOWN_LSB = REQ_ROT_LSB + REQ_ROT_W;
localparam REQ_HOLD_LSB = REQ_DOWN_LSB + REQ_DOWN_W;
localparam REQ_BACK_LSB = REQ_HOLD_LSB + REQ_HOLD_W;
localparam REQ_RLEFT_LSB = REQ_BACK_LSB + REQ_BACK_W;
localparam REQ_NLEFT_LSB = REQ_RLEFT_LSB + REQ_RLEFT_W;
localparam REQ_LOSS_LSB = REQ_NLEFT_LSB + REQ_NLEFT_W;
localparam REQ_LEPO_LSB = REQ_LOSS_LSB + REQ_LOSS_W;
localparam REQ_CHG_LSB = REQ_LEPO_LSB + REQ_LEPO_W;
localparam REQ_W = REQ_CHG_LSB + REQ_CHG_W;
localparam REQ_QN_W = REQ_BACK_LSB + REQ_BACK_W;
// SNT: one past the highest PSN sent. Written by the executor (at qn_reg,
// as packets leave, and by ST_RECORD as for REQ); after a load it reads as
// loaded (the loaded PSN, sq_psn) until its next write: VB here and SV in
// SQP, as REQ's VB and RV.
localparam SNT_PSN_W = 24;
localparam SNT_VB_W = 1;
localparam SNT_PSN_LSB = 0;
localparam SNT_VB_LSB = SNT_PSN_LSB + SNT_PSN_W;
localparam SNT_W = SNT_VB_LSB + SNT_VB_W;
// the words of the QPs the read ports look at (the RAMs are below, with
// the completer): qn_reg's, and scan_rd's (the QP after scan_next)
wire [23:0] qn_una;
wire [23:0] qn_sent;
wire [5:0] qn_rot;
wire [7:0] qn_down;
wire [3:0] qn_hold;
wire [1:0] qn_back;
wire [4:0] scan_tmo_exp;

// SQP: what ST_RECORD moves: the next PSN to assign (and the loaded PSN
// of REQ and SNT, above) and the outstanding ring's tail; and the load's
// halves of REQ's and SNT's written-since-the-load bits (RV, SV: above),
// which ST_RECORD writes back as it reads them. Written by a
// load and by ST_RECORD: one write port, the load's first (ST_RECORD waits
// a cycle for a load of another QP; a load of its own QP wins). Read at qn
// and c, the PSN and RV also at go (as REQ is) and the PSN by the host at
// sel_qpn (a cycle late, as the responder's).
localparam SQP_PSN_W = 24;
localparam SQP_RV_W = 1;
localparam SQP_SV_W = 1;
localparam SQP_TAIL_W = 4;
localparam SQP_PSN_LSB = 0;
localparam SQP_RV_LSB = SQP_PSN_LSB + SQP_PSN_W;     // (beside the PSN: the go copy reads both)
localparam SQP_SV_LSB = SQP_RV_LSB + SQP_RV_W;
localparam SQP_TAIL_LSB = SQP_SV_LSB + SQP_SV_W;
localparam SQP_W = SQP_TAIL_LSB + SQP_TAIL_W;
// The ring's head, which the completer moves as it pops, is kept per ring
// (ow_head_reg, with the rings' owners): a QP without a ring has its head
// at its tail (empty). Written by the completer's pop (hd_*, which a load
// of the completer's QP overrides, to 0, as its own pointers' copies see
// it); the completer waits a cycle for a load of another QP in C_POP and
// C_ERR, as it did when head and load shared a RAM's write port.
// STAMP: the timer's base: the tick of the last progress (the timeout's
// base) or, while a retransmission is requested, the tick at which it may
// start (the RNR wait). Written by the completer and by the executor: one
// write port, the completer's first (the executor waits a cycle for a
// write of another QP; when both write one QP the completer's stands, as
// it always has). Read at scan (the scanner's timeout) and at qn
// (ST_RTX_PICK's wait).
localparam STAMP_TICK_W = 24;
localparam STAMP_TICK_LSB = 0;
localparam STAMP_W = STAMP_TICK_LSB + STAMP_TICK_W;
// LST: a sequence NAK's other lost PSNs (mp's selective NAK; bit k: the
// NAK's PSN + 1 + k), one record per QP, written by the completer with
// the request, read at qn by the walk when it takes the request
localparam LST_LOST_LSB = 0;
localparam LST_LOST_W = LOST_W;
localparam LST_W = LST_LOST_LSB + LST_LOST_W;
// The retransmission and flush requests are kept per ring (the ring
// owners' bits, below). mp: a sequence NAK names one missing PSN (the
// responder's bitmap has the rest): resend that packet alone, then
// whatever was never sent; a timeout or an RNR NAK still resends
// everything from the PSN (go-back-N). Which one a request is: REQ's ONE.
// A requested retransmission starts at una (every request names una: a
// NAK's PSN or, after a timeout, the oldest unacknowledged one; ACKs that
// arrive meanwhile only move it on).
reg rtx_single_reg = 1'b0;
// the executor's flush requests (all for qn_reg) are set a cycle later,
// from these (the lookup of a write deep in its state machine would be on
// the path); the flush bits below read them in meanwhile
reg x_flush_reg = 1'b0;
reg [QN_W-1:0] x_flush_qn_reg = {QN_W{1'b0}};
// OST: an outstanding WQE, one entry of a ring (the pool's block RAM is
// below, with the completer). Written by ST_RECORD; read by the completer
// (the fields up to the byte length: c_entry) and by the retransmission
// walk (all but the flags: r_entry).
localparam OST_SIG_W = 1;            // signaled
localparam OST_SEND_W = 1;           // a SEND (else a WRITE or READ)
localparam OST_READ_W = 1;           // a READ or an atomic
localparam OST_ATOM_W = 2;           // ... which: 0 READ, 1 CMP_AND_SWP, 2 FETCH_AND_ADD
localparam OST_LAST_W = 24;          // the WQE's last PSN
localparam OST_INDEX_W = 16;         // its index in the send ring
localparam OST_WRID_W = 64;
localparam OST_LEN_W = 32;           // byte length
localparam OST_PSN0_W = 24;          // its first PSN
localparam OST_ADDR_W = 64;          // the WQE's host address
localparam OST_SIG_LSB = 0;
localparam OST_SEND_LSB = OST_SIG_LSB + OST_SIG_W;
localparam OST_READ_LSB = OST_SEND_LSB + OST_SEND_W;
localparam OST_ATOM_LSB = OST_READ_LSB + OST_READ_W;
localparam OST_LAST_LSB = OST_ATOM_LSB + OST_ATOM_W;
localparam OST_INDEX_LSB = OST_LAST_LSB + OST_LAST_W;
localparam OST_WRID_LSB = OST_INDEX_LSB + OST_INDEX_W;
localparam OST_LEN_LSB = OST_WRID_LSB + OST_WRID_W;
localparam OST_PSN0_LSB = OST_LEN_LSB + OST_LEN_W;
localparam OST_ADDR_LSB = OST_PSN0_LSB + OST_PSN0_W;
localparam OST_W = OST_ADDR_LSB + OST_ADDR_W;
localparam OST_C_W = OST_PSN0_LSB;                   // the completer's part
localparam OST_R_W = OST_W - OST_LAST_LSB;           // the walk's part
localparam RG_W = $clog2(OST_RINGS);
localparam OST_AW = $clog2(OST_RINGS*OST_DEPTH);

integer i;
initial begin
    for (i = 0; i < NUM_QP; i = i + 1) begin
    end
end

// timer ticks
reg [TICK_LOG+23:0] cycle_reg = {(TICK_LOG+24){1'b0}};
wire [23:0] now = cycle_reg[TICK_LOG+23:TICK_LOG];

// TX slots in use (freed by roce_tx, in order)
reg [TXS_W:0] tx_used_reg = {(TXS_W+1){1'b0}};
reg [TXS_W-1:0] tx_slot_reg = {TXS_W{1'b0}};

// the WQE slots: the read engine's writes into them are captured in flops
reg cur_b_reg = 1'b0;                    // slot B holds the current WQE
wire fetch_issue = state_reg == ST_FETCH && m_rd_desc_ready;
wire pf_issue;
/* verilator lint_off UNUSEDSIGNAL */
wire [8*SEND_WQE_BYTES-1:0] entry_a;
wire [8*SEND_WQE_BYTES-1:0] entry_b;
/* verilator lint_on UNUSEDSIGNAL */
assign wqe_reg = cur_b_reg ? entry_b : entry_a;

ram_snoop_capture #(
    .DATA_W(DATA_W),
    .RAM_ADDR_W(RAM_ADDR_W),
    .BASE(WQE_RAM)
) wqe_capture_a_inst (
    .clk(clk),
    .clear((fetch_issue && !cur_b_reg) || (pf_issue && cur_b_reg)),
    .enable(1'b1),
    .snoop_addr(ram_snoop_addr),
    .snoop_data(ram_snoop_data),
    .snoop_strb(ram_snoop_strb),
    .snoop_en(ram_snoop_en),
    .entry(entry_a)
);

ram_snoop_capture #(
    .DATA_W(DATA_W),
    .RAM_ADDR_W(RAM_ADDR_W),
    .BASE(WQE_RAM + 17'h80)
) wqe_capture_b_inst (
    .clk(clk),
    .clear((fetch_issue && cur_b_reg) || (pf_issue && !cur_b_reg)),
    .enable(1'b1),
    .snoop_addr(ram_snoop_addr),
    .snoop_data(ram_snoop_data),
    .snoop_strb(ram_snoop_strb),
    .snoop_en(ram_snoop_en),
    .entry(entry_b)
);

// prefetch slot: EMPTY, REQ (read not yet issued), WAIT (in flight), FULL
localparam [1:0] PF_EMPTY = 2'd0, PF_REQ = 2'd1, PF_WAIT = 2'd2, PF_FULL = 2'd3;
reg [1:0] pf_state_reg = PF_EMPTY;
reg pf_err_reg = 1'b0;
reg [QN_W-1:0] pf_qn_reg = {QN_W{1'b0}};
reg [QN_W-1:0] pf_cqn_reg = {QN_W{1'b0}};
reg [63:0] pf_addr_reg = 64'd0;
reg [15:0] pf_index_reg = 16'd0;
wire rd_st = s_rd_status_valid && !s_rd_status_id[0];   // fetch and payload reads
wire pf_st = s_rd_status_valid && s_rd_status_id[0];    // the prefetch read
wire [RAM_ADDR_W-1:0] cur_slot_addr = cur_b_reg ? WQE_RAM + 17'h80 : WQE_RAM;
wire [RAM_ADDR_W-1:0] pf_slot_addr = cur_b_reg ? WQE_RAM : WQE_RAM + 17'h80;

// ---------------------------------------------------------------- registered context
// The current QP's context and per-QP requester state, read through qn_reg
// into registers every cycle: one cycle behind qn_reg. qn_reg changes only
// in ST_IDLE, and none of these is used before ST_DECODE (ST_MR's two
// cycles come first) or ST_SEND, so they always hold the current QP's.
// Values the completer or the host change meanwhile (una, a retransmission
// request, the state) are seen a cycle late, as if they had changed a cycle
// later; una only grows and a stale window is the smaller one.
reg [47:0] q_dmac_reg = 48'd0;
reg [31:0] q_dip_reg = 32'd0;
reg [23:0] q_dest_qpn_reg = 24'd0;
reg [15:0] q_udp_sport_reg = 16'd0;
reg [2:0] q_spray_log_reg = 3'd0;
reg q_mp_reg = 1'b0;
reg [23:0] q_window_reg = 24'd0;         // packets in flight allowed
reg [2:0] q_pmtu_reg = 3'd0;
reg [5:0] q_rot_reg = 6'd0;
reg [7:0] q_down_reg = 8'd0;
reg q_pdue_reg = 1'b0;                   // a path out may be probed
reg [23:0] q_una_reg = 24'd0;
reg [23:0] q_sent_reg = 24'd0;
reg q_stop_reg = 1'b0;                   // stop sending: see stop_want
// (a READ on an mp QP is an unknown opcode: mp carries WRITEs only)
assign wqe_is_read = READ_EN != 0 && wqe_opcode == WR_OPCODE_RDMA_READ && !q_mp_reg;
assign wqe_is_atomic = ATOMIC_EN != 0 && (wqe_is_cas || wqe_opcode == WR_OPCODE_ATOMIC_FETCH_AND_ADD)
    && !q_mp_reg;
wire rtx_gone;

// ---------------------------------------------------------------- chunk arithmetic
// The lengths, offsets, addresses and PSNs of the next read and of the next
// packet (or copy-chunk write) are derived into registers every cycle from
// the chunk pipeline's counters. A derived value is good once the counters
// it comes from have not moved for a cycle: a read is issued only after a
// cycle without one (rd_quiet_reg), a packet or copy write only after two
// cycles without one (wr_quiet2_reg: the source port takes a second stage).
// The counters the other side moves (reads done, writes done, TX slots
// freed, una) only make a stale value more cautious. One read per two
// cycles and one packet per three are far above what a packet's frame or a
// 4 KiB chunk takes to move.
reg [31:0] chunk_reg = 32'd256;          // bytes per read: the PMTU, or CHUNK for a copy
reg roce_reg = 1'b0;                     // the WQE goes to the network (TX slots)
reg rd_quiet_reg = 1'b0;
reg wr_quiet_reg = 1'b0;
reg wr_quiet2_reg = 1'b0;
reg wr_data2_reg = 1'b0;                 // ... and the packet due is not an MP PROBE
reg [LEN_W-1:0] rd_chunk_reg = {LEN_W{1'b0}};
reg rd_more_reg = 1'b0;                  // bytes left to read
reg rd_pkt_ok_reg = 1'b0;                // TX slot free, window open
reg rd_copy_ok_reg = 1'b0;               // staging slot free
reg [63:0] rd_addr_reg = 64'd0;
reg [RAM_ADDR_W-1:0] tx_addr_rd_reg = {RAM_ADDR_W{1'b0}};
reg [LEN_W-1:0] wr_chunk_reg = {LEN_W{1'b0}};
reg wr_have_reg = 1'b0;                  // a chunk read and not yet written or sent
reg zero_len_reg = 1'b0;                 // the one packet of a zero-length message (or a READ) is due
reg rq_read_reg = 1'b0;                  // the WQE is a READ: one request packet, no payload
reg rq_due_reg = 1'b0;                   // ... not yet handed to roce_tx
reg [31:0] rq_len_reg = 32'd0;           // ... its RETH length (from the resend's first PSN on)
reg [63:0] wr_va_reg = 64'd0;
reg [23:0] pkt_psn_reg = 24'd0;
reg pkt_last_reg = 1'b0;
reg [7:0] pkt_opcode_reg = 8'd0;
reg [15:0] pkt_sport_reg = 16'd0;
reg pkt_new_reg = 1'b0;                  // the packet's PSN was never sent before
reg pkt_timed_reg = 1'b0;                // ... it is timed (path health, below)
reg pkt_probe_reg = 1'b0;                // ... as a probe of a path out
reg pkt_bare_reg = 1'b0;                 // ... an MP PROBE: no data, no PSN of its own
reg [2:0] pkt_path_reg = 3'd0;           // ... on this path
reg [23:0] npkts_m1_reg = 24'd0;         // the WQE's packets less one
reg [23:0] rec_last_psn_reg = 24'd0;     // the WQE's last PSN, for ST_RECORD (second stage)
reg [23:0] rec_next_psn_reg = 24'd0;

wire [31:0] rd_rem = wqe_len - rd_off_reg;
wire [31:0] wr_rem = wqe_len - wr_off_reg;
wire [23:0] cur_psn_rd = psn0_reg + rd_issued_reg[23:0];
wire [23:0] unacked = cur_psn_rd - q_una_reg;
wire [23:0] pkt_psn = psn0_reg + wr_issued_reg[23:0];
wire pkt_first = wr_issued_reg == 0;
wire pkt_last = rq_read_reg || wr_rem <= chunk_reg;

// a retransmission request for this QP, or its leaving RTS, stops sending
// new packets; once the started ones are out the WQE is set aside
// (and a resent entry acknowledged meanwhile needs no more packets)
wire rtx_single = rtx_mode_reg && rtx_single_reg && q_mp_reg;
wire stop_want = state_reg == ST_SEND && q_stop_reg;

// copy: read a chunk when a slot is free; RoCE: read a packet's payload when
// a TX slot is free and the QP's window of unacknowledged packets allows
wire can_issue_rd_copy = state_reg == ST_COPY && !copy_err_reg && rd_quiet_reg && rd_more_reg && rd_copy_ok_reg;
wire can_issue_rd_pkt = state_reg == ST_SEND && !copy_err_reg && !stop_want && rd_quiet_reg && rd_more_reg
    && rd_pkt_ok_reg;
wire can_issue_rd = can_issue_rd_copy || can_issue_rd_pkt;
wire can_issue_wr = state_reg == ST_COPY && !copy_err_reg && wr_quiet_reg && wr_have_reg;
// a packet leaves once its payload is in the TX RAM (zero-length: at once)
wire can_push_pkt = state_reg == ST_SEND && !copy_err_reg && wr_quiet2_reg
    && (wr_have_reg || (zero_len_reg && !stop_want));

wire [RAM_ADDR_W-1:0] copy_slot_addr_rd = {{(RAM_ADDR_W-SLOT_W){1'b0}}, rd_slot_reg} << CHUNK_LOG;
wire [RAM_ADDR_W-1:0] copy_slot_addr_wr = {{(RAM_ADDR_W-SLOT_W){1'b0}}, wr_slot_reg} << CHUNK_LOG;
wire [TXS_W-1:0] tx_slot_rd = tx_slot_reg + rd_issued_reg[TXS_W-1:0] - wr_issued_reg[TXS_W-1:0];
wire [RAM_ADDR_W-1:0] tx_addr_wr = TX_RAM_BASE + ({{(RAM_ADDR_W-TXS_W){1'b0}}, tx_slot_reg} << 12);

// the prefetch read takes the port when no fetch or payload read wants it
wire pf_want = pf_state_reg == PF_REQ && state_reg != ST_FETCH && !can_issue_rd;
assign pf_issue = pf_want && m_rd_desc_ready;
assign m_rd_desc_pcie_addr = state_reg == ST_FETCH ? wqe_addr_reg
    : pf_want ? pf_addr_reg : rd_addr_reg;
assign m_rd_desc_ram_addr = state_reg == ST_FETCH ? cur_slot_addr
    : pf_want ? pf_slot_addr : (roce_reg ? tx_addr_rd_reg : copy_slot_addr_rd);
assign m_rd_desc_len = state_reg == ST_FETCH || pf_want ? SEND_WQE_BYTES : rd_chunk_reg;
assign m_rd_desc_id = pf_want ? ID_TAG | 1 : ID_TAG;
assign m_rd_desc_valid = state_reg == ST_FETCH || can_issue_rd || pf_want;

assign m_wr_desc_pcie_addr = wr_va_reg;
assign m_wr_desc_ram_addr = copy_slot_addr_wr;
assign m_wr_desc_len = wr_chunk_reg;
assign m_wr_desc_id = ID_TAG;
assign m_wr_desc_valid = can_issue_wr;

// packet descriptor for the packet wr_issued_reg of this WQE
reg [7:0] pkt_opcode;
always @* begin
    if (rq_read_reg) begin
        // RDMA READ REQUEST, COMPARE SWAP, FETCH ADD
        pkt_opcode = !wqe_is_atomic ? 8'h0C : wqe_is_cas ? 8'h13 : 8'h14;
    end else if (wqe_is_send) begin
        pkt_opcode = pkt_first && pkt_last ? (wqe_has_imm ? 8'h05 : 8'h04)
            : pkt_first ? 8'h00 : pkt_last ? (wqe_has_imm ? 8'h03 : 8'h02) : 8'h01;
    end else if (q_mp_reg) begin
        // mp: its own opcodes, each packet an MPETH placement (this
        // packet's address and length: roce_tx fills the length in); MP
        // WRITE LAST (WITH IMMEDIATE, then also the message length from the
        // RETH length field) marks the last
        pkt_opcode = pkt_last ? (wqe_has_imm ? MP_OPCODE_WRITE_LAST_IMM : MP_OPCODE_WRITE_LAST)
            : MP_OPCODE_WRITE;
    end else begin
        pkt_opcode = pkt_first && pkt_last ? (wqe_has_imm ? 8'h0B : 8'h0A)
            : pkt_first ? 8'h06 : pkt_last ? (wqe_has_imm ? 8'h09 : 8'h08) : 8'h07;
    end
end

// packets of this WQE (a zero-length message is one packet)
wire [4:0] pmtu_log = 5'd7 + {2'd0, q_pmtu_reg};
/* verilator lint_off UNUSEDSIGNAL */
wire [31:0] wqe_npkts_m1 = wqe_len == 0 ? 32'd0 : (wqe_len - 32'd1) >> pmtu_log;
/* verilator lint_on UNUSEDSIGNAL */
wire pkt_push = m_pkt_valid && m_pkt_ready;
// (an MP PROBE moves nothing of the WQE's: only the timer and a TX count;
// wr_data2_reg is wr_quiet2_reg && !pkt_bare_reg, one LUT level earlier)
wire pkt_push_data = state_reg == ST_SEND && !copy_err_reg && wr_data2_reg
    && (wr_have_reg || (zero_len_reg && !stop_want)) && m_pkt_ready;
wire rd_issue = can_issue_rd && m_rd_desc_ready;
wire wr_issue = can_issue_wr && m_wr_desc_ready;

// ---------------------------------------------------------------- the timed packet
// One probe of the whole NIC at a time is timed, for path health: taken
// as it leaves (pkt_timed_reg). An mp QP's probe is an MP PROBE, settled
// by the completer when its reply arrives (the path comes back) or, with
// no reply after PROBE_TMO cycles, as lost (probe_lost: the path stays out
// for another wait). An rc QP's probe is its next data packet sent on the
// path out, settled when an ACK or NAK covers it or names it lost. Either
// is also dropped when its QP is loaded or two epochs pass (a QP gone to
// ERR, say).
localparam PH_EPOCH_LOG = 8;            // an epoch: 2^8 ticks (16,384 cycles)
localparam TM_AGE_W = TICK_LOG + PH_EPOCH_LOG + 2;
localparam PROBE_TMO_LOG = 12;          // an MP PROBE's reply is due within 4,096 cycles
wire [3:0] ph_epoch = now[PH_EPOCH_LOG+3:PH_EPOCH_LOG];
reg tm_busy_reg = 1'b0;
reg [QN_W-1:0] tm_qpn_reg = {QN_W{1'b0}};
reg [23:0] tm_psn_reg = 24'd0;
reg tm_probe_reg = 1'b0;
reg tm_bare_reg = 1'b0;
reg [2:0] tm_path_reg = 3'd0;
reg [TM_AGE_W-1:0] tm_start_reg = {TM_AGE_W{1'b0}};
wire [TM_AGE_W-1:0] tm_age = cycle_reg[TM_AGE_W-1:0] - tm_start_reg;
wire tm_done;
wire tm_answered;
wire tm_lost = tm_busy_reg && tm_bare_reg && tm_age[TM_AGE_W-1:PROBE_TMO_LOG] != 0;
reg stat_probe_reg = 1'b0;
reg stat_probe_rtt_v_reg = 1'b0;
reg [15:0] stat_probe_rtt_reg = 16'd0;
assign stat_probe = stat_probe_reg;
assign stat_probe_rtt_v = stat_probe_rtt_v_reg;
assign stat_probe_rtt = stat_probe_rtt_reg;
always @(posedge clk) begin
    stat_probe_reg <= pkt_push && pkt_bare_reg;
    stat_probe_rtt_v_reg <= tm_answered;
    stat_probe_rtt_reg <= tm_age;     // (TM_AGE_W is 16)
    if (tm_busy_reg && (tm_done || tm_age[TM_AGE_W-1] || ((load_rts || load_reset) && load_qpn == tm_qpn_reg))) begin
        tm_busy_reg <= 1'b0;
    end else if (!tm_busy_reg && pkt_push && pkt_timed_reg) begin
        tm_busy_reg <= 1'b1;
        tm_qpn_reg <= qn_reg;
        tm_psn_reg <= pkt_psn_reg;
        tm_probe_reg <= pkt_probe_reg;
        tm_bare_reg <= pkt_bare_reg;
        tm_path_reg <= pkt_path_reg;
        tm_start_reg <= cycle_reg[TM_AGE_W-1:0];
    end
    if (rst) begin
        tm_busy_reg <= 1'b0;
    end
end

// spraying: consecutive PSNs take consecutive source ports, so an ECMP
// fabric spreads one QP's packets over its paths (from the registered PSN:
// the second stage of the packet's fields); a path taken out passes its
// packets on (path_pick.v). The NIC times one probe at a time (above):
// when the timer is free and a sprayed QP with a path out whose wait is
// over (2^BACK epochs after HOLD) has a new packet ready, the lowest such
// path is probed: an mp QP sends an MP PROBE on it first (the packet
// follows on its own path), an rc QP sends the packet itself there.
wire [5:0] path_normal;
path_pick path_pick_inst (
    .base(pkt_psn_reg[5:0] + q_rot_reg),
    .spray_log(q_spray_log_reg),
    .avoid(q_down_reg),
    .path(path_normal)
);
// (a QP that does not spray never times a packet: time_it)
wire [7:0] q_active;
path_active q_active_inst (.spray_log(q_spray_log_reg), .active(q_active));
wire [7:0] q_out = q_down_reg & q_active;
wire [7:0] q_out_low = q_out & (~q_out + 8'd1);     // the lowest path out
wire [2:0] probe_path = {|(q_out_low & 8'hF0), |(q_out_low & 8'hCC), |(q_out_low & 8'hAA)};
wire pkt_new = (pkt_psn_reg - q_sent_reg) < 24'h800000;
wire probe_it = pkt_new && !tm_busy_reg && q_spray_log_reg != 3'd0 && q_out != 8'd0 && q_pdue_reg;
wire bare_it = probe_it && q_mp_reg;
wire [5:0] path_pick = probe_it ? {3'd0, probe_path} : path_normal;

always @(posedge clk) begin
    q_dmac_reg <= ctx_dmac;
    q_dip_reg <= ctx_dip;
    q_dest_qpn_reg <= ctx_dest_qpn;
    q_udp_sport_reg <= ctx_udp_sport;
    q_spray_log_reg <= ctx_spray_log;
    q_mp_reg <= ctx_mp;
    q_window_reg <= ctx_mp ? MP_W_24 >> ctx_mp_wshift : MAX_INFLIGHT_24;
    q_pmtu_reg <= ctx_pmtu;
    q_rot_reg <= qn_rot;
    q_down_reg <= qn_down;
    q_pdue_reg <= ph_epoch - qn_hold >= 4'd1 << qn_back;
    q_una_reg <= qn_una;
    q_sent_reg <= qn_sent;
    q_stop_reg <= lk_rtx[LK_QN] || ctx_state != QPS_RTS || rtx_gone;

    rd_quiet_reg <= (state_reg == ST_SEND || state_reg == ST_COPY) && !rd_issue;
    wr_quiet_reg <= (state_reg == ST_SEND || state_reg == ST_COPY) && !wr_issue && !pkt_push;
    wr_quiet2_reg <= wr_quiet_reg && (state_reg == ST_SEND || state_reg == ST_COPY) && !wr_issue && !pkt_push;
    wr_data2_reg <= wr_quiet_reg && (state_reg == ST_SEND || state_reg == ST_COPY) && !wr_issue && !pkt_push
        && !bare_it;

    rd_chunk_reg <= rd_rem >= chunk_reg ? chunk_reg[LEN_W-1:0] : rd_rem[LEN_W-1:0];
    rd_more_reg <= rd_off_reg != wqe_len && !rq_read_reg;
    rd_pkt_ok_reg <= (rd_issued_reg - wr_issued_reg) + {{(31-TXS_W){1'b0}}, tx_used_reg} < NUM_TX_SLOTS
        && (unacked < q_window_reg || unacked[23])    // resending PSNs acknowledged meanwhile
        && !(rtx_single && rd_issued_reg != {8'd0, rtx_skip_reg});
    rd_copy_ok_reg <= rd_issued_reg - wr_done_reg < NUM_SLOTS;
    rd_addr_reg <= src_reg + {32'd0, rd_off_reg};
    tx_addr_rd_reg <= TX_RAM_BASE + ({{(RAM_ADDR_W-TXS_W){1'b0}}, tx_slot_rd} << 12);

    wr_chunk_reg <= wr_rem >= chunk_reg ? chunk_reg[LEN_W-1:0] : wr_rem[LEN_W-1:0];
    wr_have_reg <= wr_issued_reg != rd_done_reg;
    zero_len_reg <= ((wqe_len == 0 && wr_issued_reg == 0) || rq_due_reg) && tx_used_reg < NUM_TX_SLOTS;
    rq_len_reg <= wqe_len - wr_off_reg;
    wr_va_reg <= wqe_raddr + {32'd0, wr_off_reg};
    pkt_psn_reg <= pkt_psn;
    pkt_last_reg <= pkt_last;
    pkt_opcode_reg <= bare_it ? MP_OPCODE_PROBE : pkt_opcode;
    pkt_sport_reg <= q_udp_sport_reg + {10'd0, path_pick};
    pkt_new_reg <= pkt_new;
    pkt_timed_reg <= probe_it;
    pkt_probe_reg <= probe_it;
    pkt_bare_reg <= bare_it;
    pkt_path_reg <= path_pick[2:0];
    npkts_m1_reg <= wqe_npkts_m1[23:0];
    rec_last_psn_reg <= psn0_reg + npkts_m1_reg;
    rec_next_psn_reg <= psn0_reg + npkts_m1_reg + 24'd1;

    if (rst) begin
        rd_quiet_reg <= 1'b0;
        wr_quiet_reg <= 1'b0;
        wr_quiet2_reg <= 1'b0;
        wr_data2_reg <= 1'b0;
    end
end

assign m_pkt_dmac = q_dmac_reg;
assign m_pkt_dip = q_dip_reg;
assign m_pkt_udp_sport = pkt_sport_reg;
assign m_pkt_opcode = pkt_opcode_reg;
assign m_pkt_se = pkt_last_reg && wqe_solicited && !pkt_bare_reg;
assign m_pkt_ack_req = pkt_last_reg || pkt_psn_reg[4:0] == 5'd31 || pkt_bare_reg;
assign m_pkt_dest_qp = q_dest_qpn_reg;
assign m_pkt_psn = pkt_psn_reg;
assign m_pkt_reth_va = q_mp_reg || rq_read_reg ? wr_va_reg : wqe_raddr;
assign m_pkt_reth_rkey = wqe_rkey;
assign m_pkt_reth_len = wqe_is_atomic ? wqe_swap_add[63:32] : rq_read_reg ? rq_len_reg : wqe_len;
assign m_pkt_imm = wqe_is_atomic ? wqe_swap_add[31:0] : wqe_imm;
assign m_pkt_atomic_cmp = wqe_is_cas ? wqe_compare_add : 64'd0;
assign m_pkt_payload_addr = tx_addr_wr;
assign m_pkt_payload_len = pkt_bare_reg || rq_read_reg ? 13'd0 : wr_chunk_reg[12:0];
assign m_pkt_valid = can_push_pkt;

assign sq_done = state_reg == ST_DONE;
assign sq_done_back = give_back_reg;
assign sq_done_qn = qn_reg;

assign mr_key = wqe_lkey;
assign mr_va = wqe_laddr;
assign mr_len = wqe_len;
assign mr_pd = ctx_pd;
assign mr_access = wqe_is_rdat ? 4'b0001 : 4'b0000;

// local completion (copy, local errors, flushed WQEs); a CQE client hands
// over the bytes below the owner byte, the CQE writer adds that
reg [CQE_OWNER_LSB-1:0] local_cqe;
always @* begin
    local_cqe = {CQE_OWNER_LSB{1'b0}};
    local_cqe[CQE_WR_ID_LSB +: CQE_WR_ID_W] = wqe_wr_id;
    local_cqe[CQE_BYTE_LEN_LSB +: CQE_BYTE_LEN_W] = byte_len_reg;
    local_cqe[CQE_QN_LSB +: CQE_QN_W] = {{(CQE_QN_W-QN_W){1'b0}}, qn_reg};
    local_cqe[CQE_OPCODE_LSB +: CQE_OPCODE_W] = wc_opcode_reg;
    local_cqe[CQE_STATUS_LSB +: CQE_STATUS_W] = wc_status_reg;
    local_cqe[CQE_WQE_COUNTER_LSB +: CQE_WQE_COUNTER_W] = wqe_index_reg;
end
assign m_cqe_cqn = cqn_reg;
assign m_cqe_data = local_cqe;
assign m_cqe_valid = state_reg == ST_CQE;

assign err_valid = err_valid_reg;
assign err_code = err_code_reg;
assign err_qn = {{(16-QN_W){1'b0}}, qn_reg};


// (the SQP words at qn_reg and c_qpn, the RAM is below; the heads are the
// rings')
wire [SQP_W-1:0] sqp_qn, sqp_c;
wire [3:0] ost_head;
wire [3:0] ost_tail = sqp_qn[SQP_TAIL_LSB +: SQP_TAIL_W];
wire ost_empty = ost_head == ost_tail;
wire [3:0] ost_count = ost_tail - ost_head;     // 4-bit on purpose: the pointers wrap
wire ost_full = ost_count == OST_DEPTH_4;

// the ring pool (ring_pool_inst below): the lowest free ring is the next one taken
wire [RG_W-1:0] ring_pick;
wire ring_avail;
assign stat_ring_busy = !ring_avail;
// a QP with an empty ring may start a network WQE only if a ring is free
wire ost_room = ost_empty ? ring_avail : !ost_full;
// ... and a READ a READ-table entry; with IBV_SEND_FENCE a WQE waits until
// its QP has no READ in flight (entries go when the completer retires
// them). A WQE that must wait is given back to the queue manager, not
// waited for here: the READs it waits for may need retransmissions, which
// start from ST_IDLE. A fenced one is then held (rt_hold) until its QP's
// READs are gone; a READ that found the table full is offered again at
// once (retransmissions go first in ST_IDLE). A QP with max_rd_atomic
// READs and atomics in flight (rt_q_full) gives its next one back the
// same way; on a QP whose limit is 0 one completes with an error.
wire rt_go = ost_room && (!wqe_is_rdat || (rt_alloc_ready && !rt_q_full)) && !(wqe_fence && rt_q_busy);
wire rdat_refused = wqe_is_rdat && ctx_max_rd_atomic == 3'd0;
// (that error's status, when it is the WQE's only one)
wire dec_qpop = rdat_refused && !wqe_len_bad && (wqe_len == 0 || mr_ok_reg);
assign rt_q_qpn = qn_reg;
// a length no message may have (an atomic's local buffer is its 8 bytes)
wire wqe_len_bad = wqe_len > 32'h8000_0000 || (wqe_is_atomic && wqe_len != 32'd8);
// a new network WQE that ST_DECODE starts (rt_go) or gives back (!rt_go)
wire dec_ok = state_reg == ST_DECODE && !rtx_mode_reg && wqe_is_roce && ctx_state == QPS_RTS
    && !decode_err_reg && !wqe_len_bad && !rdat_refused && (wqe_len == 0 || mr_ok_reg);
wire dec_starts = dec_ok && rt_go;
assign rt_alloc_valid = dec_starts && wqe_is_rdat;
wire dec_back = dec_ok && ost_room && !rt_go;
assign rt_fence_valid = dec_back && wqe_fence && rt_q_busy;
assign rt_alloc_first = sqp_qn[SQP_PSN_LSB +: SQP_PSN_W];
assign rt_alloc_last = sqp_qn[SQP_PSN_LSB +: SQP_PSN_W] + npkts_m1_reg;
assign rt_alloc_bus = mr_bus_reg;
assign rt_alloc_key = wqe_lkey;
assign rt_alloc_len = wqe_len;
assign rt_alloc_atomic = wqe_is_atomic;
// (the ring a QP holds is the ring owners' entry naming it: ring_of, below)
wire [RG_W-1:0] ring_qn;
wire [RG_W-1:0] ost_ring = ost_empty ? ring_pick : ring_qn;
wire [OST_AW-1:0] ost_wr_idx = {ost_ring, ost_tail[2:0]};

// the entry the retransmission walk is looking at, in the ring the QP held
// when the retransmission started (it cannot take another before the walk
// ends: only ST_RECORD takes rings), registered then so that the entry's
// address starts at flops, not at the block RAM's output. The block RAM
// reads the entry at the address of the cycle before: ST_RTX_PICK waits
// for it after the walk moves (r_valid, and a cycle more for the compares
// below: r_cmp_ok; a retransmission is rare, two cycles per entry are
// cheap, and the walk's next address is not known a cycle ahead without a
// second copy of its state machine).
reg [RG_W-1:0] rtx_ring_reg = {RG_W{1'b0}};
wire [OST_AW-1:0] r_rd_addr = {rtx_ring_reg, rtx_idx_reg[2:0]};
reg [OST_AW-1:0] r_rd_addr_reg = {OST_AW{1'b0}};
wire r_valid = r_rd_addr_reg == r_rd_addr;
wire [OST_R_W-1:0] r_entry;
wire [63:0] r_addr = r_entry[OST_ADDR_LSB-OST_LAST_LSB +: OST_ADDR_W];
wire [23:0] r_psn0 = r_entry[OST_PSN0_LSB-OST_LAST_LSB +: OST_PSN0_W];
wire [15:0] r_index = r_entry[OST_INDEX_LSB-OST_LAST_LSB +: OST_INDEX_W];
wire [23:0] r_last = r_entry[OST_LAST_LSB-OST_LAST_LSB +: OST_LAST_W];
wire [31:0] r_byte_len = r_entry[OST_LEN_LSB-OST_LAST_LSB +: OST_LEN_W];
wire [63:0] r_wr_id = r_entry[OST_WRID_LSB-OST_LAST_LSB +: OST_WRID_W];
wire [3:0] r_out = ost_tail - ost_head;
wire [3:0] r_off = rtx_idx_reg - ost_head;
wire r_before = r_last - rtx_from_reg >= 24'h800000;      // entry ends before rtx_from
assign rtx_gone = rtx_mode_reg && r_off >= r_out;
wire r_inside = (rtx_from_reg - r_psn0) <= (r_last - r_psn0);
// ... registered: the walk acts on the compares a cycle after the entry is
// read, while neither the entry's address nor rtx_from has moved since
// (r_cmp_ok; a second cycle per entry). Taken straight from the block RAM's
// output they put 16.7 LUT levels into state_reg (hw/synth.sh at 646ca4c).
reg r_before_reg = 1'b0;
reg r_inside_reg = 1'b0;
reg r_cmp_v_reg = 1'b0;                    // r_valid a cycle ago
reg [23:0] r_cmp_from_reg = 24'd0;
// (r_valid now: the address is the one the registered compares read)
wire r_cmp_ok = r_cmp_v_reg && r_valid && r_cmp_from_reg == rtx_from_reg;
always @(posedge clk) begin
    r_before_reg <= r_before;
    r_inside_reg <= r_inside;
    r_cmp_v_reg <= r_valid;
    r_cmp_from_reg <= rtx_from_reg;
end

// New WQEs of a QP wait while it retransmits, flushes, or has no ring
// space (its ring full, or none held and none free), or while a prefetched
// WQE of it waits. A retransmission or a flush matters only to a QP with
// WQEs outstanding, so these requests are kept per ring, with the ring's
// owner and a bit saying it is full (16 entries looked up by QP number:
// 16 compares per lookup whatever NUM_QP, where bits per QP cost a
// NUM_QP-input mux per read and next-state logic in every QP). One more
// entry (OW_X) is the executor's QP while it holds no ring: a NAK for the
// first packets of a WQE not yet recorded asks for a retransmission of a
// QP with an empty ring. Its bits move into the ring it takes (and back
// when its ring drains under it). A request or flush of any other QP is
// dropped: it has nothing outstanding to resend or flush, and its next
// WQE finds the QP's state in the executor.
localparam OW_X = OST_RINGS;
localparam [OST_RINGS-1:0] RING_ONE = {{(OST_RINGS-1){1'b0}}, 1'b1};
// A ring is held (ow_v) from the WQE that takes it until the pop that
// empties it, or the QP's load: exactly while the QP's head and tail differ
// (f_ost_empty). The pop's full bit is registered (pp_*) and applied in
// the next cycle: it comes from the ring entry's block-RAM read and a
// 24-bit compare (the 128-bit place and route's critical path at fe3768d);
// readers see it applied (ow_full_now).
reg [OST_RINGS-1:0] ow_v_reg = {OST_RINGS{1'b0}};
reg [QN_W-1:0] ow_q_reg [0:OST_RINGS-1];
wire [OST_RINGS*QN_W-1:0] ow_q_flat;      // (tag_match's tags)
reg [OST_RINGS-1:0] ow_full_reg = {OST_RINGS{1'b0}};
reg [OST_RINGS*4-1:0] ow_head_reg = {OST_RINGS*4{1'b0}};
reg [OST_RINGS:0] ow_rtx_reg = {(OST_RINGS+1){1'b0}};
reg [OST_RINGS:0] ow_flush_reg = {(OST_RINGS+1){1'b0}};
reg pp_valid_reg = 1'b0;
reg [RG_W-1:0] pp_ring_reg = {RG_W{1'b0}};
reg pp_full_reg = 1'b0;                    // the ring's bit after the pop
wire [OST_RINGS-1:0] pp_ring_oh = pp_valid_reg ? RING_ONE << pp_ring_reg : {OST_RINGS{1'b0}};
wire [OST_RINGS-1:0] ow_full_now = (ow_full_reg & ~pp_ring_oh) | (pp_full_reg ? pp_ring_oh : {OST_RINGS{1'b0}});
// The lookups, each a QP number: the ring it holds (one-hot, or none) and
// whether it is the executor's QP holding none (lk_x)
localparam LK_HOLD = 0, LK_PF = 1, LK_SCAN = 2, LK_GO = 3, LK_QN = 4, LK_C = 5,
    LK_LOAD = 6, LK_SCANQ = 7, LK_FA = 8, LK_FB = 9, LK_XF = 10, LK_PIN = 11, LK_N = 12;
wire [LK_N-1:0] lk_own, lk_x, lk_rtx, lk_flush, lk_full;   // (the lookups: below)
wire [RG_W-1:0] ring_c, ring_go, ring_ld;
wire hold_pf;

// ---------------------------------------------------------------- scanner
// One QP per cycle is examined for a due retransmission, an expired timer
// or a pending flush (a few cycles of latency on a microsecond timer).
reg [QN_W-1:0] scan_reg = {QN_W{1'b0}};
wire [QN_W-1:0] scan_next = rst || scan_reg == LAST_QP ? {QN_W{1'b0}} : scan_reg + 1'b1;
wire [QN_W-1:0] scan_i = scan_reg;
wire scan_out = lk_own[LK_SCAN];
// The timeout exponent is read two QPs ahead (scan_rd) and its threshold
// registered, so the compare starts at a flop and not at the block RAM's
// slow output. The exponent is written only by a load, which also empties
// the QP's ring, so the one cycle of staleness this allows finds no WQE to
// time out.
wire [QN_W-1:0] scan_rd = scan_next == LAST_QP ? {QN_W{1'b0}} : scan_next + 1'b1;
reg scan_tmo_on_reg = 1'b0;                // the QP has a timeout (exponent != 0)
reg [23:0] scan_tmo_thr_reg = 24'd0;       // its bits at or above the timeout: ~(ticks - 1)
always @(posedge clk) begin
    scan_tmo_on_reg <= scan_tmo_exp != 5'd0;
    scan_tmo_thr_reg <= tmo_mask(scan_tmo_exp);
end
wire [23:0] stamp_scan;       // (the stamp RAMs are below, with the completer)
wire [23:0] scan_age = now - stamp_scan;
wire scan_rtx = lk_rtx[LK_SCAN] && !scan_age[23];
// (age >= ticks, ticks a power of two)
wire scan_tmo = scan_out && !lk_rtx[LK_SCAN] && !lk_flush[LK_SCAN]
    && scan_tmo_on_reg && (scan_age & scan_tmo_thr_reg) != 24'd0;
wire scan_flush = lk_flush[LK_SCAN];
// ... registered: they act a cycle after the QP was looked at (a request
// withdrawn meanwhile is caught where they act: the go entry stands only
// while its request does, C_TMO looks again, a flush of an emptied ring
// finds nothing)
reg [QN_W-1:0] scan_q_reg = {QN_W{1'b0}};
reg scan_rtx_reg = 1'b0;
reg scan_tmo_reg = 1'b0;
reg scan_flush_reg = 1'b0;

// A due retransmission the scan found waits here for the executor, one
// at a time: one found while another waits is dropped, and the scan finds
// it again on its next pass (NUM_QP cycles later). A vector of go bits
// with a priority pick cost LUTs in every QP; one register does not. The
// entry stands while its QP's request does (the request withdrawn: gone);
// taking the request or asking again clears it (a new request waits for
// the scan to find it due).
reg go_valid_reg = 1'b0;
reg [QN_W-1:0] go_qpn = {QN_W{1'b0}};
wire go_valid = go_valid_reg && lk_rtx[LK_GO];
wire go_kill_ex, go_kill_c, scan_kill_ex, scan_kill_c;  // (below, with the request's writers)
wire go_keep = go_valid && !go_kill_ex && !go_kill_c;
wire go_load = !go_keep && scan_rtx_reg && !scan_kill_ex && !scan_kill_c;
// (the next entry: the records' go ports read there, a cycle ahead)
wire [QN_W-1:0] go_pick = go_load ? scan_q_reg : go_qpn;

// the pending prefetched WQE is used once its queue may go on
wire pf_use = state_reg == ST_IDLE && !go_valid && pf_state_reg == PF_FULL
    && !hold_pf;
// An idle executor takes no new WQE while the prefetch read is on its way:
// that WQE is a read latency closer than a new fetch, and taking another
// first left it waiting a whole WQE (two host reads instead of one per
// message whenever the queue manager had another queue to offer: the 64 B
// message rate of four QPs was 71 % of one QP's, `rnic bench qp-scale`).
// Once the WQE is in, a held queue's prefetch does not block the others.
wire pf_coming = pf_state_reg == PF_REQ || pf_state_reg == PF_WAIT;
wire idle_take = state_reg == ST_IDLE && !go_valid && !pf_use && !pf_coming;

// the QP context is read a cycle ahead: the QP number qn_reg takes next
// (ST_IDLE's choice below), so ctx_* hold qn_reg's context from the first
// cycle it holds the QP
reg [QN_W-1:0] qn_next;
always @* begin
    qn_next = qn_reg;
    if (state_reg == ST_IDLE) begin
        if (go_valid) begin
            qn_next = go_qpn;
        end else if (pf_use) begin
            qn_next = pf_qn_reg;
        end else if (s_sq_valid && !pf_coming) begin
            qn_next = s_sq_qn;
        end
    end
end
assign ctx_qpn = qn_next;
wire pf_accept = (state_reg == ST_SEND || state_reg == ST_COPY) && !rtx_mode_reg
    && pf_state_reg == PF_EMPTY;
assign s_sq_ready = idle_take || pf_accept;

// ---------------------------------------------------------------- ACK completer
// completer.v (below, with the records it reads): the QP it works on, its
// number a cycle ahead for the records' read ports
wire [QN_W-1:0] c_qpn_next, c_qpn;

// ---------------------------------------------------------------- the record port
// The records' ram_rec record ports in the port's order, record r's bits
// at RP_<r>_LSB of rp_rd_data and rp_wr_data (rec_map's packing). Every
// record is read and written at one slot, so the addresses are shared.
localparam RP_N = 6;
localparam RP_RQL = 0, RP_REQ = 1, RP_SNT = 2, RP_SQP = 3, RP_STAMP = 4, RP_LST = 5;
localparam RP_RQL_LSB = 0;
localparam RP_REQ_LSB = RP_RQL_LSB + RQL_W;
localparam RP_SNT_LSB = RP_REQ_LSB + REQ_W;
localparam RP_SQP_LSB = RP_SNT_LSB + SNT_W;
localparam RP_STAMP_LSB = RP_SQP_LSB + SQP_W;
localparam RP_LST_LSB = RP_STAMP_LSB + STAMP_W;
localparam RP_BITS = RP_LST_LSB + LST_W;
// (each record starts a word, rec_map checks that they fit: LST's width
// follows MP_W, at MP_W 128 its 127 bits take two words, the six take 8)

wire [QN_W-1:0] rp_rd_addr;
wire [RP_BITS-1:0] rp_rd_data;
wire [RP_N-1:0] rp_wr_en;
wire [QN_W-1:0] rp_wr_addr;
wire [RP_BITS-1:0] rp_wr_data;
wire [RP_N-1:0] rp_wr_ready;

rec_port #(
    .EN(REC_PORT),
    .N_REC(RP_N),
    .REC_W({32'd0 + LST_W, 32'd0 + STAMP_W, 32'd0 + SQP_W, 32'd0 + SNT_W,
        32'd0 + REQ_W, 32'd0 + RQL_W}),
    .SLOT_W(QN_W),
    .REC_WORDS(REC_WORDS),
    .REC_BITS(RP_BITS)
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

// ---------------------------------------------------------------- the records in block RAM
// Read ports: qn (qn_next ahead of qn_reg: the executor's QP), go (go_pick
// ahead of go_qpn: a due retransmission's una), c (c_qpn_next ahead of
// c_qpn: the completer's QP), scan (scan_rd, two ahead of scan_reg: the
// timeout, registered once more). RQL has a copy for qn, c and scan, REQ for qn, go and c, SNT
// for qn and c (ram_sdp_copies: one ram_sdp per read port); the go and
// scan copies hold only the field they read (a copy of the whole record
// with most of its read bits unused is left as an asynchronous read by
// Yosys 0.23, which no block RAM maps).
wire rql_we = load_rts || load_reset;
reg [RQL_W-1:0] rql_wd;
always @* begin
    rql_wd = {RQL_W{1'b0}};
    rql_wd[RQL_TMO_LSB +: RQL_TMO_W] = load_retry[4:0];
    rql_wd[RQL_RETRY_LSB +: RQL_RETRY_W] = load_retry[7:5];
    rql_wd[RQL_RNR_LSB +: RQL_RNR_W] = load_retry[10:8];
    rql_wd[RQL_SPRAY_LSB +: RQL_SPRAY_W] = load_spray;
end
wire req_we;
wire [QN_W-1:0] req_wa;
wire [REQ_W-1:0] req_wd;
// ST_RECORD moves sq_psn: a record that reads as loaded is written as it reads
wire rec_state = state_reg == ST_RECORD;
// the written-since-the-load bits (REQ and SNT, above) at qn, c and go
wire req_v_qn, req_v_c, req_v_go, snt_v_qn, snt_v_c;
wire snt_we = (pkt_push_data && pkt_new_reg) || (rec_state && !snt_v_qn);
wire [SNT_W-1:0] snt_wd;
// (a READ request takes the PSNs of all its responses)
assign snt_wd[SNT_PSN_LSB +: SNT_PSN_W] = !pkt_push_data ? qn_sent
    : rq_read_reg ? rec_next_psn_reg : pkt_psn_reg + 24'd1;
assign snt_wd[SNT_VB_LSB] = !sqp_qn[SQP_SV_LSB];
/* verilator lint_off UNUSEDSIGNAL */
wire [RQL_W-1:0] rql_c;          // (the completer uses some fields)
// the executor's copy holds only the retry counters' initial values (a
// whole-record copy with most of its read bits unused is left as an
// asynchronous read by Yosys 0.23, which no block RAM maps)
localparam RQL_RR_W = RQL_RETRY_W + RQL_RNR_W;
wire [RQL_RR_W-1:0] rql_qn_rr;
wire [RQL_W-1:0] rql_qn = {{(RQL_W-RQL_RR_W-RQL_RETRY_LSB){1'b0}}, rql_qn_rr, {RQL_RETRY_LSB{1'b0}}};
wire [REQ_QN_W-1:0] req_qn_raw;
wire [REQ_W-1:0] req_c_raw;
/* verilator lint_on UNUSEDSIGNAL */
wire [SNT_W-1:0] snt_qn_raw, snt_c_raw;
wire [REQ_UNA_W+REQ_VB_W+REQ_ONE_W-1:0] req_go_raw;     // una, VB and ONE
wire req_ld_vb, snt_ld_vb;                      // VB at the load's QP
wire sqp_we;
wire [QN_W-1:0] sqp_wa;
wire [SQP_W-1:0] sqp_wd;
wire [SQP_W-1:0] sqp_go;
wire hd_we;
wire [QN_W-1:0] hd_wa;
wire [3:0] hd_wd;
wire [3:0] go_head;

// (ports in the order qn, c, then scan or go)
ram_rec #(
    .DATA_W(RQL_W),
    .ADDR_W(QN_W),
    .DEPTH(NUM_QP),
    .N_RD(3),
    .RD_LSB({32'd0 + RQL_TMO_LSB, 32'd0, 32'd0 + RQL_RETRY_LSB}),
    .RD_W({32'd0 + RQL_TMO_W, 32'd0 + RQL_W, 32'd0 + RQL_RR_W}),
    .REC_EN(REC_PORT)
) rql_inst (
    .clk(clk),
    .wr_en(rql_we),
    .wr_addr(load_qpn),
    .wr_data(rql_wd),
    .rd_addr({scan_rd, c_qpn_next, qn_next}),
    .rd_data({scan_tmo_exp, rql_c, rql_qn_rr}),
    .rec_rd_addr(rp_rd_addr),
    .rec_rd_data(rp_rd_data[RP_RQL_LSB +: RQL_W]),
    .rec_wr_en(rp_wr_en[RP_RQL]),
    .rec_wr_addr(rp_wr_addr),
    .rec_wr_data(rp_wr_data[RP_RQL_LSB +: RQL_W]),
    .rec_wr_ready(rp_wr_ready[RP_RQL])
);

// (ports in the order qn, c, go, load)
ram_rec #(
    .DATA_W(REQ_W),
    .ADDR_W(QN_W),
    .DEPTH(NUM_QP),
    .N_RD(4),
    .RD_LSB({32'd0 + REQ_VB_LSB, 32'd0 + REQ_UNA_LSB, 32'd0, 32'd0}),
    .RD_W({32'd0 + REQ_VB_W, 32'd0 + REQ_UNA_W + REQ_VB_W + REQ_ONE_W, 32'd0 + REQ_W, 32'd0 + REQ_QN_W}),
    .REC_EN(REC_PORT)
) req_inst (
    .clk(clk),
    .wr_en(req_we),
    .wr_addr(req_wa),
    .wr_data(req_wd),
    .rd_addr({load_qpn_next, go_pick, c_qpn_next, qn_next}),
    .rd_data({req_ld_vb, req_go_raw, req_c_raw, req_qn_raw}),
    .rec_rd_addr(rp_rd_addr),
    .rec_rd_data(rp_rd_data[RP_REQ_LSB +: REQ_W]),
    .rec_wr_en(rp_wr_en[RP_REQ]),
    .rec_wr_addr(rp_wr_addr),
    .rec_wr_data(rp_wr_data[RP_REQ_LSB +: REQ_W]),
    .rec_wr_ready(rp_wr_ready[RP_REQ])
);

// (ports in the order qn, c, load)
ram_rec #(
    .DATA_W(SNT_W),
    .ADDR_W(QN_W),
    .DEPTH(NUM_QP),
    .N_RD(3),
    .RD_LSB({32'd0 + SNT_VB_LSB, 32'd0, 32'd0}),
    .RD_W({32'd0 + SNT_VB_W, 32'd0 + SNT_W, 32'd0 + SNT_W}),
    .REC_EN(REC_PORT)
) snt_inst (
    .clk(clk),
    .wr_en(snt_we),
    .wr_addr(qn_reg),
    .wr_data(snt_wd),
    .rd_addr({load_qpn_next, c_qpn_next, qn_next}),
    .rd_data({snt_ld_vb, snt_c_raw, snt_qn_raw}),
    .rec_rd_addr(rp_rd_addr),
    .rec_rd_data(rp_rd_data[RP_SNT_LSB +: SNT_W]),
    .rec_wr_en(rp_wr_en[RP_SNT]),
    .rec_wr_addr(rp_wr_addr),
    .rec_wr_data(rp_wr_data[RP_SNT_LSB +: SNT_W]),
    .rec_wr_ready(rp_wr_ready[RP_SNT])
);

// (ports in the order qn, c, go, sel)
ram_rec #(
    .DATA_W(SQP_W),
    .ADDR_W(QN_W),
    .DEPTH(NUM_QP),
    .N_RD(4),
    .RD_LSB({32'd0 + SQP_PSN_LSB, 32'd0, 32'd0, 32'd0}),
    .RD_W({32'd0 + SQP_PSN_W, 32'd0 + SQP_W, 32'd0 + SQP_W, 32'd0 + SQP_W}),
    .REC_EN(REC_PORT)
) sqp_inst (
    .clk(clk),
    .wr_en(sqp_we),
    .wr_addr(sqp_wa),
    .wr_data(sqp_wd),
    .rd_addr({sel_qpn, go_pick, c_qpn_next, qn_next}),
    .rd_data({sel_sq_psn, sqp_go, sqp_c, sqp_qn}),
    .rec_rd_addr(rp_rd_addr),
    .rec_rd_data(rp_rd_data[RP_SQP_LSB +: SQP_W]),
    .rec_wr_en(rp_wr_en[RP_SQP]),
    .rec_wr_addr(rp_wr_addr),
    .rec_wr_data(rp_wr_data[RP_SQP_LSB +: SQP_W]),
    .rec_wr_ready(rp_wr_ready[RP_SQP])
);

// a QP's REQ record as it reads: the RAM's word once written since the load
// (the timeout exponent of rql is not read here)
/* verilator lint_off UNUSEDSIGNAL */
function [REQ_W-1:0] req_eff(input v, input [REQ_W-1:0] raw, input [23:0] psn, input [RQL_W-1:0] rql);
    begin
        req_eff = {REQ_W{1'b0}};
        req_eff[REQ_UNA_LSB +: REQ_UNA_W] = psn;
        req_eff[REQ_CHG_LSB +: REQ_CHG_W] = psn;
        req_eff[REQ_RLEFT_LSB +: REQ_RLEFT_W] = rql[RQL_RETRY_LSB +: RQL_RETRY_W];
        req_eff[REQ_NLEFT_LSB +: REQ_NLEFT_W] = rql[RQL_RNR_LSB +: RQL_RNR_W];
        if (v) begin
            req_eff = raw;
        end
    end
endfunction
/* verilator lint_on UNUSEDSIGNAL */

/* verilator lint_off UNUSEDSIGNAL */
assign req_v_qn = sqp_qn[SQP_RV_LSB] ^ req_qn_raw[REQ_VB_LSB];
assign req_v_c = sqp_c[SQP_RV_LSB] ^ req_c_raw[REQ_VB_LSB];
assign req_v_go = sqp_go[SQP_RV_LSB] ^ req_go_raw[REQ_VB_LSB];
assign snt_v_qn = sqp_qn[SQP_SV_LSB] ^ snt_qn_raw[SNT_VB_LSB];
assign snt_v_c = sqp_c[SQP_SV_LSB] ^ snt_c_raw[SNT_VB_LSB];
// (the qn copy holds UNA to BACK; ST_RECORD writes req_qn back only while
// it reads as loaded, all of it from sqp and rql then)
wire [REQ_W-1:0] req_qn = req_eff(req_v_qn, {{(REQ_W-REQ_QN_W){1'b0}}, req_qn_raw},
    sqp_qn[SQP_PSN_LSB +: SQP_PSN_W], rql_qn);
/* verilator lint_on UNUSEDSIGNAL */
wire [REQ_W-1:0] req_c = req_eff(req_v_c, req_c_raw, sqp_c[SQP_PSN_LSB +: SQP_PSN_W], rql_c);
assign qn_una = req_qn[REQ_UNA_LSB +: REQ_UNA_W];
assign qn_rot = req_qn[REQ_ROT_LSB +: REQ_ROT_W];
assign qn_down = req_qn[REQ_DOWN_LSB +: REQ_DOWN_W];
assign qn_hold = req_qn[REQ_HOLD_LSB +: REQ_HOLD_W];
assign qn_back = req_qn[REQ_BACK_LSB +: REQ_BACK_W];
assign qn_sent = snt_v_qn ? snt_qn_raw[SNT_PSN_LSB +: SNT_PSN_W] : sqp_qn[SQP_PSN_LSB +: SQP_PSN_W];
wire [23:0] go_una = req_v_go ? req_go_raw[REQ_UNA_LSB +: REQ_UNA_W] : sqp_go[SQP_PSN_LSB +: SQP_PSN_W];
// (a request stands only after its write of REQ: the record reads as written)
wire go_one = req_go_raw[REQ_ONE_LSB];
wire qn_one = req_qn_raw[REQ_ONE_LSB];
wire [23:0] c_una_now = req_c[REQ_UNA_LSB +: REQ_UNA_W];
wire [23:0] c_sent_now = snt_v_c ? snt_c_raw[SNT_PSN_LSB +: SNT_PSN_W]
    : sqp_c[SQP_PSN_LSB +: SQP_PSN_W];
wire [2:0] c_rleft = req_c[REQ_RLEFT_LSB +: REQ_RLEFT_W];
wire [2:0] c_nleft = req_c[REQ_NLEFT_LSB +: REQ_NLEFT_W];
wire [5:0] c_rot = req_c[REQ_ROT_LSB +: REQ_ROT_W];
wire [2:0] c_retry_init = rql_c[RQL_RETRY_LSB +: RQL_RETRY_W];
wire [2:0] c_rnr_init = rql_c[RQL_RNR_LSB +: RQL_RNR_W];

wire [3:0] c_head;
wire [3:0] c_tail = sqp_c[SQP_TAIL_LSB +: SQP_TAIL_W];
// C_POP and C_ERR take their QP's ring, head and tail from flops, which follow
// the block RAMs' words for the completer's QP (with this cycle's writes),
// so that the ring entry's read starts at a register, not at a block RAM's
// output. They hold what the RAMs read only when the QP was the same a
// cycle before: C_ERR straight from C_IDLE (a flush) waits a cycle
// (c_new_reg); C_POP always follows C_EVAL or C_CQE of the same QP.
reg [3:0] c_head_reg = 4'd0;
reg [3:0] c_tail_reg = 4'd0;
reg [RG_W-1:0] c_ring_reg = {RG_W{1'b0}};
reg c_new_reg = 1'b0;
wire [OST_C_W-1:0] c_entry;

// the completer: the ACK checks, its state machine and its CQE requests
wire c_req_we, c_stamp_we, c_rtx_set, c_rtx_one, c_rtx_clr, c_flush_take, c_pop;
wire [23:0] c_req_una, c_stamp_wd;
wire [2:0] c_req_rleft, c_req_nleft;
wire [5:0] c_req_rot;
wire c_set_err;
wire c_ack_queue_full;
wire c_acks_idle;
assign ack_room = !c_ack_queue_full;
assign acks_idle = c_acks_idle;
// a READ's WQE retired (completed or flushed): its READ-table entry goes
assign rt_free_valid = c_pop && c_entry[OST_READ_LSB];
assign rt_free_qpn = c_qpn;
assign rt_free_last = c_entry[OST_LAST_LSB +: OST_LAST_W];
// C_POP and C_ERR wait a cycle for a load of another QP (hd_*: the head
// write is the load's then), and for the copies (c_new_reg, above)
wire l_any = load_rts || load_reset;
wire c_ring_wait = (l_any && load_qpn != c_qpn) || c_new_reg;
wire c_lost_we;
wire [LOST_W-1:0] c_lost_wd;
wire [7:0] c_req_down;
wire [15:0] c_req_loss;
wire [1:0] c_req_lepo, c_req_back;
wire [3:0] c_req_hold;
wire [23:0] c_req_chg;
reg cqe_hold_reg = 1'b0;                   // the completer's CQE waits (below)
completer #(.QN_W(QN_W), .CLK_MHZ(CLK_MHZ), .TICK_LOG(TICK_LOG), .LOST_W(LOST_W),
    .PH_EPOCH_LOG(PH_EPOCH_LOG)) completer_inst (
    .clk(clk),
    .rst(rst),
    .s_ack_valid(s_ack_valid),
    .s_ack_qpn(s_ack_qpn),
    .s_ack_psn(s_ack_psn),
    .s_ack_syndrome(s_ack_syndrome),
    .s_ack_lost(s_ack_lost),
    .ack_queue_full(c_ack_queue_full),
    .idle(c_acks_idle),
    .pin_qpn(pin_qpn),
    .pin_busy(c_pin_busy),
    .scan_flush(scan_flush_reg),
    .scan_tmo(scan_tmo_reg),
    .scan_q(scan_q_reg),
    .flush_take(c_flush_take),
    .load(l_any),
    .load_qpn(load_qpn),
    .qpn_next(c_qpn_next),
    .qpn(c_qpn),
    .una_now(c_una_now),
    .sent_now(c_sent_now),
    .rleft(c_rleft),
    .nleft(c_nleft),
    .rot(c_rot),
    .spray_log(rql_c[RQL_SPRAY_LSB +: RQL_SPRAY_W]),
    .ph_down(req_c[REQ_DOWN_LSB +: REQ_DOWN_W]),
    .ph_loss(req_c[REQ_LOSS_LSB +: REQ_LOSS_W]),
    .ph_lepo(req_c[REQ_LEPO_LSB +: REQ_LEPO_W]),
    .ph_hold(req_c[REQ_HOLD_LSB +: REQ_HOLD_W]),
    .ph_back(req_c[REQ_BACK_LSB +: REQ_BACK_W]),
    .ph_chg(req_c[REQ_CHG_LSB +: REQ_CHG_W]),
    .ph_thresh(cfg_path_thresh),
    .timed_v(tm_busy_reg && tm_qpn_reg == c_qpn),
    .timed_psn(tm_psn_reg),
    .timed_probe(tm_probe_reg),
    .timed_path(tm_path_reg),
    .timed_bare(tm_bare_reg),
    .probe_lost(tm_lost),
    .probe_lost_qpn(tm_qpn_reg),
    .retry_init(c_retry_init),
    .rnr_init(c_rnr_init),
    .rtx_req(lk_rtx[LK_C]),
    .ring_empty_now(c_head == c_tail),
    .ring_empty(c_head_reg == c_tail_reg),
    .ring_wait(c_ring_wait),
    .entry_sig(c_entry[OST_SIG_LSB]),
    .entry_send(c_entry[OST_SEND_LSB]),
    .entry_read(c_entry[OST_READ_LSB]),
    .entry_atom(c_entry[OST_ATOM_LSB +: OST_ATOM_W]),
    .entry_last_psn(c_entry[OST_LAST_LSB +: OST_LAST_W]),
    .entry_index(c_entry[OST_INDEX_LSB +: OST_INDEX_W]),
    .entry_wr_id(c_entry[OST_WRID_LSB +: OST_WRID_W]),
    .entry_len(c_entry[OST_LEN_LSB +: OST_LEN_W]),
    .pop(c_pop),
    .req_we(c_req_we),
    .req_una(c_req_una),
    .req_rleft(c_req_rleft),
    .req_nleft(c_req_nleft),
    .req_rot(c_req_rot),
    .req_down(c_req_down),
    .req_loss(c_req_loss),
    .req_lepo(c_req_lepo),
    .req_hold(c_req_hold),
    .req_back(c_req_back),
    .req_chg(c_req_chg),
    .timed_done(tm_done),
    .probe_answered(tm_answered),
    .now(now),
    .stamp_we(c_stamp_we),
    .stamp_wd(c_stamp_wd),
    .rtx_set(c_rtx_set),
    .rtx_one(c_rtx_one),
    .rtx_clr(c_rtx_clr),
    .lost_we(c_lost_we),
    .lost_wd(c_lost_wd),
    .acq_qpn(acq_qpn),
    .acq_cqn(acq_cqn),
    .cqe_hold(cqe_hold_reg && !cfg_resend_after_cqe),
    .m_acq_cqn(m_acq_cqn),
    .m_acq_data(m_acq_data),
    .m_acq_valid(m_acq_valid),
    .m_acq_ready(m_acq_ready),
    .set_err(c_set_err),
    .stat_ack_drop(stat_ack_drop),
    .stat_timeout(stat_timeout),
    .stat_nak_seq(stat_nak_seq),
    .stat_rnr(stat_rnr),
    .stat_takeout(stat_path_out),
    .stat_comeback(stat_path_back)
);

// A WQE's CQE waits while the retransmission walk may still read its
// buffer: the walk is on the completer's QP and its entry is retired
// (rtx_gone; the walk then stops, its issued payload reads complete, and it
// moves on), or the completer pops an entry of that QP now (ost_head shows
// the pop a cycle later). Without it a resend's payload read could reach the
// buffer after the host saw the CQE and reused (or freed) it. Registered:
// the CQE follows its pop by a cycle at least (C_POP, then C_CQE), so the
// flop sees the pop itself, then the walk as the moved head shows it. The
// walk stays on a retired entry, in whichever of its states, until
// ST_DECODE or ST_RTX_PICK moves it on, and it leaves ST_SEND only with
// its issued reads done: the hold never ends while a read of the retired
// buffer is issued or to come. (It only ever moves onto an entry that is
// not retired, so a hold, once ended, is not needed again for that CQE.)
always @(posedge clk) begin
    cqe_hold_reg <= rtx_mode_reg && state_reg != ST_IDLE && qn_reg == c_qpn && (rtx_gone || c_pop);
    if (rst) begin
        cqe_hold_reg <= 1'b0;
    end
end
// the completer's write of its QP's REQ record
reg [REQ_W-1:0] req_wd_c;
always @* begin
    req_wd_c = req_c;
    req_wd_c[REQ_UNA_LSB +: REQ_UNA_W] = c_req_una;
    req_wd_c[REQ_RLEFT_LSB +: REQ_RLEFT_W] = c_req_rleft;
    req_wd_c[REQ_NLEFT_LSB +: REQ_NLEFT_W] = c_req_nleft;
    req_wd_c[REQ_ROT_LSB +: REQ_ROT_W] = c_req_rot;
    req_wd_c[REQ_DOWN_LSB +: REQ_DOWN_W] = c_req_down;
    req_wd_c[REQ_LOSS_LSB +: REQ_LOSS_W] = c_req_loss;
    req_wd_c[REQ_LEPO_LSB +: REQ_LEPO_W] = c_req_lepo;
    req_wd_c[REQ_HOLD_LSB +: REQ_HOLD_W] = c_req_hold;
    req_wd_c[REQ_BACK_LSB +: REQ_BACK_W] = c_req_back;
    req_wd_c[REQ_CHG_LSB +: REQ_CHG_W] = c_req_chg;
    if (c_rtx_set) req_wd_c[REQ_ONE_LSB] = c_rtx_one;
    req_wd_c[REQ_VB_LSB] = !sqp_c[SQP_RV_LSB];
end
// ST_RECORD's: as it reads
reg [REQ_W-1:0] req_wd_rec;
always @* begin
    req_wd_rec = req_qn;
    req_wd_rec[REQ_VB_LSB] = !sqp_qn[SQP_RV_LSB];
end
// In the states that may change it the completer writes its QP's record
// every cycle (as it reads, if nothing changes: the enable and the address
// then do not wait for the ACK checks). ST_RECORD writes a record that
// reads as loaded (req_v_qn clear); the completer's write goes first:
// ST_RECORD waits a cycle for it unless it is this QP's (which then sets
// the bit). It waits a cycle for a load of another QP too (SQP's write
// port is the load's then), and for the completer's write of another QP's
// stamp if it would write the stamp (ex_st_stall).
// (the stamp's writers: the completer's, and the executor's QP; below)
wire stc_we = c_stamp_we;
wire [QN_W-1:0] ste_wa = state_reg == ST_IDLE ? go_qpn : qn_reg;
wire ex_st_stall = stc_we && c_qpn != ste_wa;
wire c_wr_state = c_req_we;
wire rec_req = rec_state && !req_v_qn;
wire rec_stall = (rec_req && c_wr_state && c_qpn != qn_reg)
    || (rec_state && l_any && load_qpn != qn_reg)
    || (rec_state && ost_empty && !lk_rtx[LK_QN] && ex_st_stall);
assign req_we = c_wr_state || rec_req;
assign req_wa = c_wr_state ? c_qpn : qn_reg;
// (every write sets VB against its QP's RV: the record reads as written)
assign req_wd = c_wr_state ? req_wd_c : req_wd_rec;

// Rings change hands here. A ring is taken when a WQE is recorded into an
// empty one; it is given back when the completer pops the last entry (unless
// a WQE of the same QP is recorded that cycle) or when the QP is loaded
// (reset or brought to RTS) with entries, or with one being recorded.
wire rec_now = state_reg == ST_RECORD && !rec_stall;
assign sqp_we = l_any || rec_now;
assign sqp_wa = l_any ? load_qpn : qn_reg;
// A load sets RV and SV to VB as it stands after this cycle's writes (the
// RAM copies read at load_qpn_next, the cycle's own write forwarded), so
// REQ and SNT read as loaded; ST_RECORD writes them back as it read them.
wire ld_req_vb = req_we && req_wa == load_qpn ? req_wd[REQ_VB_LSB] : req_ld_vb;
wire ld_snt_vb = snt_we && qn_reg == load_qpn ? snt_wd[SNT_VB_LSB] : snt_ld_vb;
assign sqp_wd = l_any ? {{SQP_TAIL_W{1'b0}}, ld_snt_vb, ld_req_vb, load_psn}
    : {ost_tail + 4'd1, sqp_qn[SQP_SV_LSB], sqp_qn[SQP_RV_LSB], rec_next_psn_reg};
assign hd_we = l_any || c_pop;
assign hd_wa = l_any ? load_qpn : c_qpn;
assign hd_wd = l_any ? 4'd0 : c_head_reg + 4'd1;
wire c_drain = c_pop && c_head_reg + 4'd1 == c_tail_reg && !(rec_now && qn_reg == c_qpn);
wire l_held = lk_own[LK_LOAD];

// The stamp's writes: the completer's when an ACK moves una, on a
// sequence NAK, on an RNR NAK (the wait's end) and on a timeout; the
// executor's when a retransmission starts (the go pick, or ST_RTX_PICK
// starting over) and when a WQE is recorded into an empty ring (unless it
// holds the RNR wait). The executor's waits while the completer writes
// another QP (ex_st_stall: ST_IDLE's go pick, ST_RTX_PICK's start over and
// ST_RECORD wait a cycle).
wire [23:0] stamp_qn;
wire rtx_due = (now - stamp_qn) < 24'h800000;
wire ste_we = (state_reg == ST_IDLE && go_valid)
    || (state_reg == ST_RTX_PICK && ctx_state == QPS_RTS && lk_rtx[LK_QN] && rtx_due)
    || (rec_now && ost_empty && !lk_rtx[LK_QN]);
wire stamp_we = stc_we || ste_we;
wire [QN_W-1:0] stamp_wa = stc_we ? c_qpn : ste_wa;
wire [STAMP_W-1:0] stamp_wd = stc_we ? c_stamp_wd : now;
wire [STAMP_W-1:0] stamp_scan_raw, stamp_qn_raw;

// (ports in the order qn, scan)
ram_rec #(
    .DATA_W(STAMP_W),
    .ADDR_W(QN_W),
    .DEPTH(NUM_QP),
    .N_RD(2),
    .REC_EN(REC_PORT)
) stamp_inst (
    .clk(clk),
    .wr_en(stamp_we),
    .wr_addr(stamp_wa),
    .wr_data(stamp_wd),
    .rd_addr({scan_next, qn_next}),
    .rd_data({stamp_scan_raw, stamp_qn_raw}),
    .rec_rd_addr(rp_rd_addr),
    .rec_rd_data(rp_rd_data[RP_STAMP_LSB +: STAMP_W]),
    .rec_wr_en(rp_wr_en[RP_STAMP]),
    .rec_wr_addr(rp_wr_addr),
    .rec_wr_data(rp_wr_data[RP_STAMP_LSB +: STAMP_W]),
    .rec_wr_ready(rp_wr_ready[RP_STAMP])
);
assign stamp_scan = stamp_scan_raw[STAMP_TICK_LSB +: STAMP_TICK_W];
assign stamp_qn = stamp_qn_raw[STAMP_TICK_LSB +: STAMP_TICK_W];

// The ring a load frees is given back in the cycle after the load (it
// stays taken a cycle longer; not if the completer gives it back in the
// load's cycle)
wire ring_we = rec_now && ost_empty;
reg l_give_reg = 1'b0;
reg [RG_W-1:0] l_give_ring_reg = {RG_W{1'b0}};
always @(posedge clk) begin
    l_give_reg <= l_any && l_held && !(c_drain && c_qpn == load_qpn);
    l_give_ring_reg <= ring_ld;
end

// LST (its format is above, with the other records')
wire [LST_W-1:0] lst_wd = c_lost_wd;
wire [LST_W-1:0] lst_qn;
wire [LOST_W-1:0] lost_qn = lst_qn[LST_LOST_LSB +: LST_LOST_W];
ram_rec #(
    .DATA_W(LST_W),
    .ADDR_W(QN_W),
    .DEPTH(NUM_QP),
    .N_RD(1),
    .RD_LSB(32'd0),
    .RD_W(32'd0 + LST_W),
    .REC_EN(REC_PORT)
) lst_inst (
    .clk(clk),
    .wr_en(c_lost_we),
    .wr_addr(c_qpn),
    .wr_data(lst_wd),
    .rd_addr(qn_next),
    .rd_data(lst_qn),
    .rec_rd_addr(rp_rd_addr),
    .rec_rd_data(rp_rd_data[RP_LST_LSB +: LST_W]),
    .rec_wr_en(rp_wr_en[RP_LST]),
    .rec_wr_addr(rp_wr_addr),
    .rec_wr_data(rp_wr_data[RP_LST_LSB +: LST_W]),
    .rec_wr_ready(rp_wr_ready[RP_LST])
);

// the outstanding rings' entries (OST), in block RAM: the completer's
// port reads at its registers' next values (c_ring_next, c_head_next), so
// c_entry is the entry at c_ring_reg/c_head_reg; the walk's port reads at
// r_rd_addr (r_valid, above). Not in the record port, as neither are the
// ring owners' flops and the ring pool (below): addressed by ring and
// entry, not by QP, they hold only QPs with WQEs in flight, which the
// context cache will keep pinned (DESIGN.md section 6, step 3)
wire [3:0] c_head_next = hd_we && hd_wa == c_qpn ? hd_wd : c_head;
wire [RG_W-1:0] c_ring_next = ring_we && qn_reg == c_qpn ? ring_pick : ring_c;
// (the READ bit is the opcode's bit 2: of the opcodes ST_RECORD sees,
// 0x00..0x06, only RDMA_READ and the atomics have it, and bits 1:0 then
// tell them apart. rq_read_reg would do, but in a build without READ it
// is a constant, and Yosys then maps no block RAM for the completer's
// copy of the ring: "no valid mapping found")
wire [OST_W-1:0] ost_wd = {wqe_addr_reg, psn0_reg, byte_len_reg, wqe_wr_id, wqe_index_reg,
    rec_last_psn_reg, wqe_opcode[1:0], wqe_opcode[2], wqe_is_send, wqe_signaled};
// (ports in the order c, walk)
ram_sdp_copies #(
    .DATA_W(OST_W),
    .ADDR_W(OST_AW),
    .DEPTH(OST_RINGS*OST_DEPTH),
    .N_RD(2),
    .RD_LSB({32'd0 + OST_LAST_LSB, 32'd0}),
    .RD_W({32'd0 + OST_R_W, 32'd0 + OST_C_W})
) ost_inst (
    .clk(clk),
    .wr_en(rec_now),
    .wr_addr(ost_wr_idx),
    .wr_data(ost_wd),
    .rd_addr({r_rd_addr, c_ring_next, c_head_next[2:0]}),
    .rd_data({r_entry, c_entry})
);

wire [OST_RINGS-1:0] ring_give = (c_drain ? RING_ONE << c_ring_reg : {OST_RINGS{1'b0}})
    | (l_give_reg ? RING_ONE << l_give_ring_reg : {OST_RINGS{1'b0}});

// (rst ties low: a QP's ring number and ring pointers survive rst, so the
// rings they hold must stay taken)
/* verilator lint_off PINCONNECTEMPTY */
slot_allocator #(.SLOTS(OST_RINGS), .IDX_W(RG_W)) ring_pool_inst (
    .clk(clk),
    .rst(1'b0),
    // (a load of the recording QP in this cycle empties its ring: no take)
    .take(ring_take),
    .give(ring_give),
    .avail(ring_avail),
    .pick(ring_pick),
    .free()
);
/* verilator lint_on PINCONNECTEMPTY */

reg stat_retransmit_reg = 1'b0;
assign stat_retransmit = stat_retransmit_reg;

// the completer and the executor both move QPs to ERR
reg x_set_err_reg = 1'b0;
assign set_err = c_set_err || x_set_err_reg;
assign set_err_qpn = c_set_err ? c_qpn : qn_reg;

// ---------------------------------------------------------------- the ring owners' lookups
wire [LK_N*QN_W-1:0] lk_key = {pin_qpn, x_flush_qn_reg, flush_b_qpn, flush_a_qpn, scan_q_reg,
    load_qpn, c_qpn, qn_reg, go_qpn, scan_i, pf_qn_reg, sq_hold_qn};
wire [LK_N*OST_RINGS-1:0] lk_ring;
// a flush request: set, or the executor's on its way (x_flush_reg)
wire [OST_RINGS:0] ow_flush_now = ow_flush_reg
    | (x_flush_reg ? {lk_x[LK_XF], lk_ring[LK_XF*OST_RINGS +: OST_RINGS]} : {(OST_RINGS+1){1'b0}});
genvar lk;
generate
    for (lk = 0; lk < LK_N; lk = lk + 1) begin : g_lookup
        wire [OST_RINGS-1:0] ring = lk_ring[lk*OST_RINGS +: OST_RINGS];
        tag_match #(.N(OST_RINGS), .KEY_W(QN_W)) owner_match (
            .valid(ow_v_reg),
            .tags(ow_q_flat),
            .key(lk_key[lk*QN_W +: QN_W]),
            .match(lk_ring[lk*OST_RINGS +: OST_RINGS])
        );
        assign lk_own[lk] = |ring;
        assign lk_x[lk] = lk_key[lk*QN_W +: QN_W] == qn_reg && !lk_own[LK_QN];
        assign lk_rtx[lk] = |({lk_x[lk], ring} & ow_rtx_reg);
        assign lk_flush[lk] = |({lk_x[lk], ring} & ow_flush_now);
        assign lk_full[lk] = |(ring & ow_full_now);
    end
endgenerate
// the ring a QP holds, by number (none: 0; the readers look only while
// it holds one)
function automatic [RG_W-1:0] ring_of(input [OST_RINGS-1:0] oh);
    integer k;
    begin
        ring_of = {RG_W{1'b0}};
        for (k = 0; k < OST_RINGS; k = k + 1) begin
            if (oh[k]) begin
                ring_of = ring_of | k[RG_W-1:0];
            end
        end
    end
endfunction
// the head of the ring a QP holds; without one, its tail (empty)
function automatic [3:0] head_of(input [OST_RINGS-1:0] oh, input [OST_RINGS*4-1:0] heads,
        input [3:0] tail);
    integer k;
    begin
        head_of = |oh ? 4'd0 : tail;
        for (k = 0; k < OST_RINGS; k = k + 1) begin
            if (oh[k]) begin
                head_of = head_of | heads[k*4 +: 4];
            end
        end
    end
endfunction
assign ost_head = head_of(lk_ring[LK_QN*OST_RINGS +: OST_RINGS], ow_head_reg, ost_tail);
assign c_head = head_of(lk_ring[LK_C*OST_RINGS +: OST_RINGS], ow_head_reg, c_tail);
assign go_head = head_of(lk_ring[LK_GO*OST_RINGS +: OST_RINGS], ow_head_reg,
    sqp_go[SQP_TAIL_LSB +: SQP_TAIL_W]);
assign ring_qn = ring_of(lk_ring[LK_QN*OST_RINGS +: OST_RINGS]);
assign ring_c = ring_of(lk_ring[LK_C*OST_RINGS +: OST_RINGS]);
assign ring_go = ring_of(lk_ring[LK_GO*OST_RINGS +: OST_RINGS]);
assign ring_ld = ring_of(lk_ring[LK_LOAD*OST_RINGS +: OST_RINGS]);
// A QP's new WQEs wait while a resend or a flush is asked for it, while
// its ring is full, or while it has no ring and none is free
function automatic held(input rtx, input flush, input full, input own, input avail);
    held = rtx || flush || full || (!avail && !own);
endfunction
// (the prefetched WQE's own test reads the hold without it)
assign hold_pf = held(lk_rtx[LK_PF], lk_flush[LK_PF], lk_full[LK_PF], lk_own[LK_PF], ring_avail);
// A WQE given back (ST_DONE) is the next one of its queue again, but the
// queue manager may already hold the one after it in its output register
// (picked while this one was taken): that entry is stale and, taken, would
// run before the one given back, its completion then counted for it.
// Holding the queue from the give-back until the queue manager has
// counted it back (back_hold_reg) drops that entry; the queue is picked
// again with the right index.
reg [2:0] back_hold_reg = 3'd0;
reg [QN_W-1:0] back_qn_reg = {QN_W{1'b0}};
always @(posedge clk) begin
    if (state_reg == ST_DONE && give_back_reg) begin
        back_hold_reg <= 3'd6;
        back_qn_reg <= qn_reg;
    end else if (back_hold_reg != 3'd0) begin
        back_hold_reg <= back_hold_reg - 3'd1;
    end
    if (rst) begin
        back_hold_reg <= 3'd0;
    end
end
// ---------------------------------------------------------------- pin
// Work of a QP held outside its records, which a move of its records
// would lose or which would write them during the move: a ring (WQEs in
// flight), the executor or the prefetch on it, a retransmission or flush
// requested or on its way, the scanner's finding, a timed packet, a
// give-back, the completer's (its QP, its queued ACKs).
wire c_pin_busy;
always @(posedge clk) begin
    pin_busy <= lk_own[LK_PIN] || lk_rtx[LK_PIN] || lk_flush[LK_PIN]
        || (state_reg != ST_IDLE && qn_reg == pin_qpn)
        || (pf_state_reg != PF_EMPTY && pf_qn_reg == pin_qpn)
        || (go_valid_reg && go_qpn == pin_qpn)
        || (x_flush_reg && x_flush_qn_reg == pin_qpn)
        || ((scan_rtx_reg || scan_tmo_reg || scan_flush_reg) && scan_q_reg == pin_qpn)
        || (tm_busy_reg && tm_qpn_reg == pin_qpn)
        || (back_hold_reg != 3'd0 && back_qn_reg == pin_qpn)
        || c_pin_busy;
    if (rst) begin
        pin_busy <= 1'b0;
    end
end

wire back_hold = (state_reg == ST_DONE && give_back_reg && qn_reg == sq_hold_qn)
    || (back_hold_reg != 3'd0 && back_qn_reg == sq_hold_qn);
assign sq_hold = held(lk_rtx[LK_HOLD], lk_flush[LK_HOLD], lk_full[LK_HOLD], lk_own[LK_HOLD], ring_avail)
    || (pf_state_reg != PF_EMPTY && pf_qn_reg == sq_hold_qn) || rt_hold || back_hold;

// ---------------------------------------------------------------- the ring owners' bits
// Each write reaches the entry its QP number names (the lookups above) and
// the next value follows from the writes in their order (a later one
// wins). Loads go last, then the hand-overs (a ring taken, a ring
// drained under the executor's QP), then the reset.
// The executor takes a retransmission request when it starts on it (the
// go pick in ST_IDLE, or ST_RTX_PICK starting over), at ste_wa.
wire ex_rtx_take = !ex_st_stall && ((state_reg == ST_IDLE && go_valid)
    || (state_reg == ST_RTX_PICK && ctx_state == QPS_RTS && lk_rtx[LK_QN] && rtx_due));
// The completer requests one on a sequence NAK, an RNR NAK and a timeout
// (c_rtx_set; on mp a sequence NAK's packet alone: c_rtx_one) and
// withdraws it in C_ERR (c_rtx_clr); C_IDLE takes up a QP's flush
// (c_flush_take)
localparam [OST_RINGS:0] OW_NONE = {(OST_RINGS+1){1'b0}};
function automatic [OST_RINGS:0] ow_at(input en, input [LK_N*OST_RINGS-1:0] rings,
        input [LK_N-1:0] xs, input integer k);
    ow_at = en ? {xs[k], rings[k*OST_RINGS +: OST_RINGS]} : OW_NONE;
endfunction
wire [OST_RINGS:0] ex_rtx_ow = ow_at(ex_rtx_take, lk_ring, lk_x, state_reg == ST_IDLE ? LK_GO : LK_QN);
wire [OST_RINGS:0] cset_ow = ow_at(c_rtx_set, lk_ring, lk_x, LK_C);
wire [OST_RINGS:0] cclr_ow = ow_at(c_rtx_clr, lk_ring, lk_x, LK_C);
wire [OST_RINGS:0] scan_clr_ow = ow_at(c_flush_take, lk_ring, lk_x, LK_SCANQ);
wire [OST_RINGS:0] fa_ow = ow_at(flush_a, lk_ring, lk_x, LK_FA);
wire [OST_RINGS:0] fb_ow = ow_at(flush_b, lk_ring, lk_x, LK_FB);
wire [OST_RINGS:0] load_ow = ow_at(l_any, lk_ring, lk_x, LK_LOAD);
// the go entry's clears: taking the request, or asking again
assign go_kill_ex = ex_rtx_take && ste_wa == go_qpn;
assign go_kill_c = c_rtx_set && c_qpn == go_qpn;
assign scan_kill_ex = ex_rtx_take && ste_wa == scan_q_reg;
assign scan_kill_c = c_rtx_set && c_qpn == scan_q_reg;
wire [OST_RINGS:0] rtx_w = (((ow_rtx_reg & ~ex_rtx_ow) | cset_ow) & ~cclr_ow) & ~load_ow;
wire [OST_RINGS:0] flush_w = ((ow_flush_now | fa_ow | fb_ow) & ~scan_clr_ow) & ~load_ow;
// The hand-overs: a WQE recorded into an empty ring takes ring_pick (not
// when its QP is loaded in the cycle: the load empties it) with the
// executor entry's bits; the pop that empties the executor's QP's ring
// gives the ring's bits to the executor entry; the executor moving to
// another QP drops the entry's (that QP has no ring: nothing to resend).
wire ring_take = rec_now && ost_empty && !(l_any && qn_reg == load_qpn);
wire [OST_RINGS-1:0] take_oh = ring_take ? RING_ONE << ring_pick : {OST_RINGS{1'b0}};
wire drain_x = c_drain && c_qpn == qn_reg;
wire x_keep = qn_next == qn_reg && !ring_take;
wire [OST_RINGS-1:0] rtx_w_ring = rtx_w[OST_RINGS-1:0];
wire [OST_RINGS-1:0] flush_w_ring = flush_w[OST_RINGS-1:0];
wire [OST_RINGS:0] rtx_next = {x_keep && (drain_x ? rtx_w_ring[c_ring_reg] : rtx_w[OW_X]),
    (rtx_w_ring & ~take_oh) | (rtx_w[OW_X] ? take_oh : {OST_RINGS{1'b0}})};
wire [OST_RINGS:0] flush_next = {x_keep && (drain_x ? flush_w_ring[c_ring_reg] : flush_w[OW_X]),
    (flush_w_ring & ~take_oh) | (flush_w[OW_X] ? take_oh : {OST_RINGS{1'b0}})};
// the owners and the full bits move with the pointers: rec_now moves the
// tail of qn_reg, c_pop the head of c_qpn (both in one cycle when they
// are one QP: the pop's bit, which counts the record, stands), a load
// empties the QP's ring (the pool takes it back a cycle later)
// (a pop of the same QP in the same cycle is left out: the ring's bit is
// then the pop's, pp_full_reg, in the next cycle, so no path runs from
// the ring entry's block RAM through the pop's PSN compare into here)
wire [3:0] push_count = ost_tail + 4'd1 - ost_head;
wire [3:0] pop_count = c_tail_reg + {3'd0, rec_now && qn_reg == c_qpn} - c_head_reg - 4'd1;
wire [OST_RINGS-1:0] rec_ring_oh = rec_now ? RING_ONE << ost_ring : {OST_RINGS{1'b0}};
wire [OST_RINGS-1:0] drain_oh = c_drain ? RING_ONE << c_ring_reg : {OST_RINGS{1'b0}};
wire pp_loaded = l_any && load_qpn == c_qpn;
integer ow_i;
initial begin
    for (ow_i = 0; ow_i < OST_RINGS; ow_i = ow_i + 1) begin
        ow_q_reg[ow_i] = {QN_W{1'b0}};
    end
end
genvar ow_g;
generate
    for (ow_g = 0; ow_g < OST_RINGS; ow_g = ow_g + 1) begin : g_owner
        assign ow_q_flat[ow_g*QN_W +: QN_W] = ow_q_reg[ow_g];
    end
endgenerate
always @(posedge clk) begin
    ow_full_reg <= (ow_full_now & ~rec_ring_oh) | (push_count == OST_DEPTH_4 ? rec_ring_oh : {OST_RINGS{1'b0}});
    ow_v_reg <= (ow_v_reg & ~drain_oh & ~load_ow[OST_RINGS-1:0]) | take_oh;
    // a ring taken starts at its QP's tail; a pop moves it
    for (ow_i = 0; ow_i < OST_RINGS; ow_i = ow_i + 1) begin
        if (take_oh[ow_i]) begin
            ow_head_reg[ow_i*4 +: 4] <= ost_tail;
        end else if (c_pop && !l_any && c_ring_reg == ow_i[RG_W-1:0]) begin
            ow_head_reg[ow_i*4 +: 4] <= c_head_reg + 4'd1;
        end
    end
    if (ring_take) begin
        ow_q_reg[ring_pick] <= qn_reg;
    end
    pp_valid_reg <= c_pop;
    pp_ring_reg <= c_ring_reg;
    pp_full_reg <= pop_count == OST_DEPTH_4 && !pp_loaded;
end

// the next lost PSN of a selective walk: lowest bit first (PSN order),
// registered (rtx_nxt_ok: the registers follow the bitmap's last change)
wire rtx_nxt_v;
wire [LOST_LOG-1:0] rtx_nxt_k;
priority_encoder #(.WIDTH(LOST_W), .OUT_W(LOST_LOG)) rtx_nxt_enc (
    .in(rtx_lost_reg),
    .valid(rtx_nxt_v),
    .index(rtx_nxt_k)
);
wire rtx_nxt_ok = !rtx_lost_chg_reg && !rtx_lost_ld_reg;

always @(posedge clk) begin
    err_valid_reg <= 1'b0;
    x_set_err_reg <= 1'b0;
    rtx_lost_chg_reg <= 1'b0;
    rtx_nxt_v_reg <= rtx_nxt_v;
    rtx_nxt_k_reg <= rtx_nxt_k;
    x_flush_reg <= 1'b0;
    x_flush_qn_reg <= qn_reg;
    stat_retransmit_reg <= 1'b0;
    cycle_reg <= cycle_reg + 1'b1;
    scan_reg <= scan_next;
    scan_q_reg <= scan_reg;
    scan_rtx_reg <= scan_rtx;
    scan_tmo_reg <= scan_tmo;
    scan_flush_reg <= scan_flush;
    go_valid_reg <= go_keep || go_load;
    go_qpn <= go_pick;

    // ---------------------------------------------------------- executor
    qn_reg <= qn_next;
    case (state_reg)
        ST_IDLE: begin
            rtx_mode_reg <= 1'b0;
            decode_err_reg <= 1'b0;
            if (go_valid) begin
                // a retransmission goes before any new work (a cycle
                // later if the stamp's write port is the completer's)
                if (!ex_st_stall) begin
                    rtx_mode_reg <= 1'b1;
                    rtx_single_reg <= go_one;
                    rtx_from_reg <= go_una;
                    rtx_lost_ld_reg <= 1'b1;
                    rtx_hole_done_reg <= 1'b0;
                    // (the request is taken: ex_rtx_take)
                    rtx_idx_reg <= go_head;
                    rtx_ring_reg <= ring_go;
                    state_reg <= ST_RTX_PICK;
                end
            end else if (pf_use) begin
                // the prefetched WQE is already in the other slot
                cqn_reg <= pf_cqn_reg;
                wqe_addr_reg <= pf_addr_reg;
                wqe_index_reg <= pf_index_reg;
                cur_b_reg <= !cur_b_reg;
                pf_state_reg <= PF_EMPTY;
                if (pf_err_reg) begin
                    wc_opcode_reg <= WC_OPCODE_LOCAL_DMA_COPY;
                    byte_len_reg <= 32'd0;
                    wc_status_reg <= WC_STATUS_LOC_PROT_ERR;
                    err_valid_reg <= 1'b1;
                    err_code_reg <= ERR_DMA_READ;
                    state_reg <= ST_CQE;
                end else begin
                    state_reg <= ST_MR;
                end
            end else if (s_sq_valid && !pf_coming) begin
                cqn_reg <= s_sq_cqn;
                wqe_addr_reg <= s_sq_wqe_addr;
                wqe_index_reg <= s_sq_index;
                state_reg <= ST_FETCH;
            end
        end
        ST_RTX_PICK: begin
            // the next outstanding entry holding PSNs from rtx_from on
            if (rtx_lost_ld_reg) begin
                // the request's other lost PSNs (a walk that is not a
                // selective one never looks at them)
                rtx_lost_ld_reg <= 1'b0;
                rtx_lost_reg <= lost_qn;
                rtx_lost_chg_reg <= 1'b1;
                rtx_base_reg <= rtx_from_reg;
            end
            if (ctx_state != QPS_RTS) begin
                state_reg <= ST_IDLE;                 // the completer flushes them
            end else if (lk_rtx[LK_QN]) begin
                // asked again meanwhile: start over from the new PSN once due
                if (rtx_due) begin
                    // (a cycle later if the stamp's write port is the
                    // completer's)
                    if (!ex_st_stall) begin
                        rtx_single_reg <= qn_one;
                        rtx_from_reg <= qn_una;
                        rtx_lost_ld_reg <= 1'b1;
                        rtx_hole_done_reg <= 1'b0;
                        // (the request is taken: ex_rtx_take)
                        rtx_idx_reg <= ost_head;
                    end
                end else begin
                    state_reg <= ST_IDLE;
                end
            end else if (rtx_hole_done_reg) begin
                // mp: the next lost PSN the NAK named, once the bitmap's
                // next is known; after the last, whatever was never sent
                if (rtx_nxt_ok) begin
                    rtx_hole_done_reg <= 1'b0;
                    rtx_idx_reg <= ost_head;
                    if (rtx_nxt_v_reg) begin
                        rtx_from_reg <= rtx_base_reg + 24'd1 + {{(24-LOST_LOG){1'b0}}, rtx_nxt_k_reg};
                        rtx_lost_reg[rtx_nxt_k_reg] <= 1'b0;
                        rtx_lost_chg_reg <= 1'b1;
                    end else begin
                        rtx_single_reg <= 1'b0;
                        rtx_from_reg <= qn_sent;
                    end
                end
            end else if (r_off > r_out) begin
                rtx_idx_reg <= ost_head;              // acknowledged meanwhile
            end else if (r_off == r_out) begin
                state_reg <= ST_IDLE;                 // everything resent
            end else if (!r_cmp_ok) begin
                // the entry's block RAM read is a cycle behind the walk,
                // its compares two
            end else if (r_before_reg) begin
                rtx_idx_reg <= rtx_idx_reg + 4'd1;
            end else if (rtx_single && !r_inside_reg) begin
                // the lost PSN lies before the entry: acknowledged meanwhile
                rtx_hole_done_reg <= 1'b1;
            end else begin
                wqe_addr_reg <= r_addr;
                wqe_index_reg <= r_index;
                rtx_psn0_reg <= r_psn0;
                rtx_skip_reg <= r_inside_reg ? rtx_from_reg - r_psn0 : 24'd0;
                state_reg <= ST_FETCH;
            end
        end
        ST_FETCH: begin
            if (m_rd_desc_ready) begin
                state_reg <= ST_FETCH_WAIT;
            end
        end
        ST_FETCH_WAIT: begin
            if (rd_st) begin
                wc_opcode_reg <= WC_OPCODE_LOCAL_DMA_COPY;
                byte_len_reg <= 32'd0;
                if (s_rd_status_error != 0) begin
                    wc_status_reg <= WC_STATUS_LOC_PROT_ERR;
                    err_valid_reg <= 1'b1;
                    err_code_reg <= ERR_DMA_READ;
                    if (rtx_mode_reg) begin
                        // the send ring became unreadable: give up the QP
                        x_set_err_reg <= 1'b1;
                        x_flush_reg <= 1'b1;
                        state_reg <= ST_IDLE;
                    end else begin
                        state_reg <= ST_CQE;
                    end
                end else begin
                    state_reg <= ST_MR;
                end
            end
        end
        ST_MR: begin
            // the MR table answers once the key has been stable two cycles
            mr_wait_reg <= !mr_wait_reg;
            mr_ok_reg <= mr_ok;
            mr_bus_reg <= mr_bus;
            if (mr_wait_reg) begin
                state_reg <= ST_DECODE;
            end
        end
        ST_DECODE: begin
            rd_off_reg <= 32'd0;
            wr_off_reg <= 32'd0;
            rd_issued_reg <= 32'd0;
            rd_done_reg <= 32'd0;
            wr_issued_reg <= 32'd0;
            wr_done_reg <= 32'd0;
            rd_slot_reg <= {SLOT_W{1'b0}};
            wr_slot_reg <= {SLOT_W{1'b0}};
            copy_err_reg <= 1'b0;
            byte_len_reg <= wqe_len;
            chunk_reg <= wqe_is_roce ? {19'd0, 13'd128 << q_pmtu_reg} : CHUNK;
            roce_reg <= wqe_is_roce;
            rq_read_reg <= wqe_is_rdat;
            rq_due_reg <= wqe_is_rdat;
            psn0_reg <= sqp_qn[SQP_PSN_LSB +: SQP_PSN_W];
            if (rtx_mode_reg) begin
                psn0_reg <= rtx_psn0_reg;
                rd_off_reg <= {8'd0, rtx_skip_reg} << pmtu_log;
                wr_off_reg <= {8'd0, rtx_skip_reg} << pmtu_log;
                rd_issued_reg <= {8'd0, rtx_skip_reg};
                rd_done_reg <= {8'd0, rtx_skip_reg};
                wr_issued_reg <= {8'd0, rtx_skip_reg};
                src_reg <= mr_bus_reg;
                if (ctx_state != QPS_RTS) begin
                    state_reg <= ST_IDLE;
                end else if (r_off >= r_out || wqe_len != r_byte_len || wqe_wr_id != r_wr_id) begin
                    // acknowledged while it was fetched: its completion may
                    // have let the host reuse the ring slot, so what came
                    // back is another WQE; nothing of this entry is owed
                    rtx_idx_reg <= rtx_idx_reg + 4'd1;
                    state_reg <= ST_RTX_PICK;
                end else if (!wqe_is_roce || wqe_len > 32'h8000_0000 || (wqe_len != 0 && !mr_ok_reg)) begin
                    // the WQE or its buffer changed under us
                    x_set_err_reg <= 1'b1;
                    x_flush_reg <= 1'b1;
                    state_reg <= ST_IDLE;
                end else begin
                    state_reg <= ST_SEND;
                end
            end else if (wqe_opcode == WR_OPCODE_LOCAL_DMA_COPY) begin
                wc_opcode_reg <= WC_OPCODE_LOCAL_DMA_COPY;
                wc_status_reg <= WC_STATUS_SUCCESS;
                src_reg <= wqe_laddr;
                state_reg <= ST_COPY;
            end else if (wqe_is_roce) begin
                wc_opcode_reg <= wqe_is_send ? WC_OPCODE_SEND : wqe_is_read ? WC_OPCODE_RDMA_READ
                    : wqe_is_atomic ? (wqe_is_cas ? WC_OPCODE_COMP_SWAP : WC_OPCODE_FETCH_ADD)
                    : WC_OPCODE_RDMA_WRITE;
                src_reg <= mr_bus_reg;
                if (ctx_state != QPS_RTS || decode_err_reg
                        || wqe_len_bad || rdat_refused || (wqe_len != 0 && !mr_ok_reg)) begin
                    // errors complete in order: older WQEs are flushed first
                    if (ctx_state == QPS_RTS) begin
                        x_set_err_reg <= 1'b1;
                        decode_err_reg <= 1'b1;
                        if (!decode_err_reg) begin
                            decode_qpop_reg <= dec_qpop;
                        end
                    end
                    if (!ost_empty) begin
                        x_flush_reg <= 1'b1;
                    end else begin
                        wc_status_reg <= (decode_err_reg ? decode_qpop_reg
                                : ctx_state == QPS_RTS && dec_qpop)
                            ? WC_STATUS_LOC_QP_OP_ERR
                            : decode_err_reg || ctx_state == QPS_RTS
                            ? WC_STATUS_LOC_PROT_ERR : WC_STATUS_WR_FLUSH_ERR;
                        state_reg <= ST_CQE;
                    end
                end else if (rt_go) begin
                    // (a READ takes a READ-table entry: rt_alloc_valid)
                    wc_status_reg <= WC_STATUS_SUCCESS;
                    state_reg <= ST_SEND;
                end else if (ost_room) begin
                    // it must wait (rt_go): given back (dec_back; a fenced
                    // one held: rt_fence_valid)
                    give_back_reg <= 1'b1;
                    state_reg <= ST_DONE;
                end
            end else begin
                wc_status_reg <= WC_STATUS_LOC_QP_OP_ERR;
                err_valid_reg <= 1'b1;
                err_code_reg <= ERR_UNKNOWN_OPCODE;
                state_reg <= ST_CQE;
            end
        end
        ST_COPY: begin
            if (rd_issue) begin
                rd_off_reg <= rd_off_reg + {{(32-LEN_W){1'b0}}, rd_chunk_reg};
                rd_issued_reg <= rd_issued_reg + 32'd1;
                rd_slot_reg <= rd_slot_reg == LAST_SLOT ? {SLOT_W{1'b0}} : rd_slot_reg + 1'b1;
            end
            if (rd_st) begin
                if (s_rd_status_error != 0) begin
                    if (!copy_err_reg) begin
                        err_valid_reg <= 1'b1;
                        err_code_reg <= ERR_DMA_READ;
                    end
                    copy_err_reg <= 1'b1;
                    wc_status_reg <= WC_STATUS_LOC_PROT_ERR;
                end
                rd_done_reg <= rd_done_reg + 32'd1;
            end
            if (wr_issue) begin
                wr_off_reg <= wr_off_reg + {{(32-LEN_W){1'b0}}, wr_chunk_reg};
                wr_issued_reg <= wr_issued_reg + 32'd1;
                wr_slot_reg <= wr_slot_reg == LAST_SLOT ? {SLOT_W{1'b0}} : wr_slot_reg + 1'b1;
            end
            if (s_wr_status_valid) begin
                wr_done_reg <= wr_done_reg + 32'd1;
            end
            // done: every chunk read (or a read failed) and written; the
            // derived rd_more_reg is good after a cycle without a read, and
            // what is left to write is compared here, not derived, since
            // reads complete at any time
            if (rd_done_reg == rd_issued_reg && wr_done_reg == wr_issued_reg
                    && rd_quiet_reg && wr_quiet_reg
                    && (copy_err_reg || (!rd_more_reg && wr_issued_reg == rd_done_reg))
                    && !rd_st && !s_wr_status_valid) begin
                state_reg <= ST_CQE;
            end
        end
        ST_SEND: begin
            if (rd_issue) begin
                rd_off_reg <= rd_off_reg + {{(32-LEN_W){1'b0}}, rd_chunk_reg};
                rd_issued_reg <= rd_issued_reg + 32'd1;
            end
            if (rd_st) begin
                if (s_rd_status_error != 0) begin
                    // local buffer unreadable: stop sending, the QP goes to ERR
                    if (!copy_err_reg) begin
                        err_valid_reg <= 1'b1;
                        err_code_reg <= ERR_DMA_READ;
                    end
                    copy_err_reg <= 1'b1;
                    wc_status_reg <= WC_STATUS_LOC_PROT_ERR;
                end
                rd_done_reg <= rd_done_reg + 32'd1;
            end
            if (pkt_push_data) begin
                wr_off_reg <= wr_off_reg + {{(32-LEN_W){1'b0}}, wr_chunk_reg};
                wr_issued_reg <= wr_issued_reg + 32'd1;
                rq_due_reg <= 1'b0;
            end
            if (copy_err_reg) begin
                if (rd_done_reg == rd_issued_reg && !rd_st && rtx_gone) begin
                    // acknowledged meanwhile: the host may have freed its buffer
                    state_reg <= ST_RTX_PICK;
                end else if (rd_done_reg == rd_issued_reg && !rd_st) begin
                    x_set_err_reg <= 1'b1;
                    if (rtx_mode_reg) begin
                        x_flush_reg <= 1'b1;
                        state_reg <= ST_IDLE;
                    end else begin
                        state_reg <= ST_CQE;
                    end
                end
            end else if (rtx_single && pkt_push_data) begin
                // the one lost packet is out: the next lost one, or what
                // was never sent (ST_RTX_PICK)
                rtx_hole_done_reg <= 1'b1;
                rtx_idx_reg <= ost_head;
                state_reg <= ST_RTX_PICK;
            end else if (pkt_push_data && pkt_last_reg) begin
                if (rtx_mode_reg) begin
                    rtx_from_reg <= pkt_psn_reg + 24'd1;
                    rtx_idx_reg <= rtx_idx_reg + 4'd1;
                    state_reg <= ST_RTX_PICK;
                end else begin
                    state_reg <= ST_RECORD;
                end
            end else if (stop_want && !pkt_push && rd_issued_reg == wr_issued_reg
                    && rd_done_reg == rd_issued_reg && !rd_st) begin
                // set aside: the retransmission (or the flush) takes it from here
                state_reg <= rtx_mode_reg ? ST_RTX_PICK : ST_RECORD;
            end
        end
        ST_RECORD: begin
            // the WQE waits for its ACK (its unsent packets, if it was set
            // aside, go out with the retransmission); a cycle later if the
            // REQ record's write port is the completer's (rec_stall)
            if (!rec_stall) begin
                if (ost_empty) begin
                    // (and the stamp, unless it holds the RNR wait: ste_we;
                    // the ring it takes: ring_take)
                end
                if (ctx_state != QPS_RTS) begin
                    x_flush_reg <= 1'b1;
                end
                state_reg <= ST_DONE;
            end
        end
        ST_CQE: begin
            if (m_cqe_ready) begin
                state_reg <= ST_DONE;
            end
        end
        ST_DONE: begin
            if (sq_done_ready) begin
                give_back_reg <= 1'b0;
                state_reg <= ST_IDLE;
            end
        end
        default: state_reg <= ST_IDLE;
    endcase

    if (pkt_push_data) begin
        stat_retransmit_reg <= !pkt_new_reg;
    end

    // TX slot accounting: taken when a packet with payload is handed over, freed
    // when roce_tx is done with it. An MP PROBE counts until roce_tx is done
    // with it (done pulses come in order, and count) but takes no slot of
    // the ring, whose next slot may hold the packet it went ahead of
    tx_used_reg <= tx_used_reg + {{TXS_W{1'b0}}, pkt_push} - {{TXS_W{1'b0}}, pkt_done};
    if (pkt_push_data) begin
        tx_slot_reg <= tx_slot_reg + 1'b1;
    end

    // the prefetch slot
    if (pf_accept && s_sq_valid) begin
        pf_qn_reg <= s_sq_qn;
        pf_cqn_reg <= s_sq_cqn;
        pf_addr_reg <= s_sq_wqe_addr;
        pf_index_reg <= s_sq_index;
        pf_state_reg <= PF_REQ;
    end
    if (pf_issue) begin
        pf_state_reg <= PF_WAIT;
    end
    if (pf_st) begin
        pf_state_reg <= PF_FULL;
        pf_err_reg <= s_rd_status_error != 4'd0;
    end


    // ---------------------------------------------------------- ACK completer
    // (completer_inst; here the copies of its QP's ring pointers)
    c_new_reg <= c_qpn_next != c_qpn;
    c_head_reg <= c_head_next;
    c_tail_reg <= sqp_we && sqp_wa == c_qpn ? sqp_wd[SQP_TAIL_LSB +: SQP_TAIL_W] : c_tail;
    c_ring_reg <= c_ring_next;
    r_rd_addr_reg <= r_rd_addr;

    // the bit vectors (their writes, in order: below the completer)
    ow_rtx_reg <= rtx_next;
    ow_flush_reg <= flush_next;
    // an executor's flush request is applied a cycle later (x_flush_reg:
    // read through ow_flush_now meanwhile); what clears the bit in its own
    // cycle cancels it, as it would have overwritten it
    if ((l_any && load_qpn == qn_reg) || (c_flush_take && scan_q_reg == qn_reg)) begin
        x_flush_reg <= 1'b0;
    end

    if (rst) begin
        mr_wait_reg <= 1'b0;
        state_reg <= ST_IDLE;
        give_back_reg <= 1'b0;
        err_valid_reg <= 1'b0;
        tx_used_reg <= {(TXS_W+1){1'b0}};
        tx_slot_reg <= {TXS_W{1'b0}};
        rtx_mode_reg <= 1'b0;
        pf_state_reg <= PF_EMPTY;
        ow_rtx_reg <= OW_NONE;
        ow_flush_reg <= OW_NONE;
        x_flush_reg <= 1'b0;
        scan_reg <= {QN_W{1'b0}};
        scan_rtx_reg <= 1'b0;
        scan_tmo_reg <= 1'b0;
        scan_flush_reg <= 1'b0;
        go_valid_reg <= 1'b0;
    end
end

`ifdef FORMAL
// ---------------------------------------------------------------- formal
// Property 4 (issue 21) for hw/formal/formal_requester.v (yosys
// read_verilog -formal defines FORMAL; Verilator and synthesis never see
// this): the successful send CQE of a WRITE/SEND(+IMM) WQE is requested
// only after an ACK covering its last PSN was received. The watched WQE
// is the solver's: QP f_qp, WQE index f_idx (the harness gives every WQE
// a distinct index). Its last PSN is taken from the packets, not from the
// ring entry: the PSN of its packet with a LAST or ONLY opcode (a resent
// one has the same PSN). An ACK for PSN p covers p; a NAK for p covers
// p - 1 (everything before it arrived). An ACK counts when it enters the
// ACK queue (an ACK arriving with the queue full is lost, as on the wire).
// The harness assumes ACKs are legal: they name PSNs already sent.
(* anyconst *) reg [QN_W-1:0] f_qp;
(* anyconst *) reg [15:0] f_idx;
reg f_last_v = 1'b0;                     // its last packet has left
reg [23:0] f_last_psn = 24'd0;           // ... with this PSN
reg f_acked = 1'b0;                      // an ACK covering that PSN was received
wire f_opc_last = m_pkt_opcode == 8'h02 || m_pkt_opcode == 8'h03 || m_pkt_opcode == 8'h04
    || m_pkt_opcode == 8'h05 || m_pkt_opcode == 8'h08 || m_pkt_opcode == 8'h09
    || m_pkt_opcode == 8'h0A || m_pkt_opcode == 8'h0B
    || m_pkt_opcode == MP_OPCODE_WRITE_LAST || m_pkt_opcode == MP_OPCODE_WRITE_LAST_IMM;
wire f_is_w = qn_reg == f_qp && wqe_index_reg == f_idx;
// the ring's pointers, kept here as the RAMs' write ports write them: the
// RAMs read them back at qn_reg and c_qpn, and the hold's full and
// empty bits say what they say
// (and the timer stamp, read back at scan_i and qn_reg)
reg [3:0] f_head [0:NUM_QP-1];
reg [3:0] f_tail [0:NUM_QP-1];
reg [23:0] f_stamp [0:NUM_QP-1];
reg [RG_W-1:0] f_ring [0:NUM_QP-1];
integer f_q;
integer f_r;
integer f_own;
reg f_full;
initial begin
    for (f_q = 0; f_q < NUM_QP; f_q = f_q + 1) begin
        f_head[f_q] = 4'd0;
        f_tail[f_q] = 4'd0;
        f_stamp[f_q] = 24'd0;
        f_ring[f_q] = {RG_W{1'b0}};
    end
end
always @(posedge clk) begin
    if (hd_we) begin
        f_head[hd_wa] <= hd_wd;
    end
    if (sqp_we) begin
        f_tail[sqp_wa] <= sqp_wd[SQP_TAIL_LSB +: SQP_TAIL_W];
    end
    if (stamp_we) begin
        f_stamp[stamp_wa] <= stamp_wd;
    end
    if (ring_we) begin
        f_ring[qn_reg] <= ring_pick;
    end
end
always @* begin
    assert(ost_head == f_head[qn_reg] && ost_tail == f_tail[qn_reg]);      // f_ost_read
    assert(c_head == f_head[c_qpn] && c_tail == f_tail[c_qpn]);    // f_ost_read
    if (!c_new_reg) begin
        assert(c_head_reg == f_head[c_qpn] && c_tail_reg == f_tail[c_qpn]
            && (f_head[c_qpn] == f_tail[c_qpn] || c_ring_reg == f_ring[c_qpn])); // f_c_copy
    end
    assert(stamp_qn == f_stamp[qn_reg] && stamp_scan == f_stamp[scan_i]);  // f_stamp_read
    // a retransmission walks the ring its QP holds (not reached within
    // hw/formal's 21 cycles: the harness's first retransmission comes later;
    // the torture's retransmissions check it, every resent byte compared)
    if (!rst && state_reg != ST_IDLE && rtx_mode_reg && !ost_empty) begin
        assert(rtx_ring_reg == f_ring[qn_reg]);                           // f_rtx_ring
    end
    // the walk's entry is read before ST_DECODE compares it with the
    // WQE fetched again (the walk waits for it in ST_RTX_PICK only)
    if (!rst && state_reg == ST_DECODE && rtx_mode_reg) begin
        assert(r_valid);                                                  // f_rtx_entry
    end
    // a QP holds one ring exactly while it has entries, full when 8
    for (f_q = 0; f_q < NUM_QP; f_q = f_q + 1) begin
        f_own = 0;
        f_full = 1'b0;
        for (f_r = 0; f_r < OST_RINGS; f_r = f_r + 1) begin
            if (ow_v_reg[f_r] && ow_q_reg[f_r] == f_q[QN_W-1:0]) begin
                f_own = f_own + 1;
                assert(f_r[RG_W-1:0] == f_ring[f_q]);                             // f_ost_ring
                assert(ow_head_reg[f_r*4 +: 4] == f_head[f_q]);                  // f_ost_head
                f_full = f_full | ow_full_now[f_r];
            end
        end
        assert(f_own == ((f_tail[f_q] != f_head[f_q]) ? 1 : 0));                 // f_ost_empty
        assert(f_full == (f_tail[f_q] - f_head[f_q] == OST_DEPTH_4));             // f_ost_full
    end
    // the executor's entry has bits only while its QP holds no ring
    if (lk_own[LK_QN]) begin
        assert(!ow_rtx_reg[OW_X] && !ow_flush_reg[OW_X]);                       // f_ow_x
    end
    // the WQE's pipeline moves with its data packets only, never an MP PROBE
    if (!rst) begin
        assert(pkt_push_data == (pkt_push && !pkt_bare_reg));             // f_push_data
    end
end
wire [23:0] f_ack_cov = s_ack_syndrome[6:5] == 2'b00 ? s_ack_psn : s_ack_psn - 24'd1;
always @(posedge clk) begin
    if (pkt_push && f_opc_last && f_is_w) begin
        f_last_v <= 1'b1;
        f_last_psn <= m_pkt_psn;
    end
    if (s_ack_valid && !c_ack_queue_full && s_ack_qpn == f_qp && s_ack_syndrome[6:5] != 2'b10
            && f_last_v && (f_ack_cov - f_last_psn) < 24'h800000) begin
        f_acked <= 1'b1;
    end
end
// the CQE data's WQE counter is the entry's index
always @* begin
    if (!rst && m_acq_valid && m_acq_ready
            && m_acq_data[CQE_STATUS_LSB +: CQE_STATUS_W] == WC_STATUS_SUCCESS
            && m_acq_data[CQE_QN_LSB +: QN_W] == f_qp
            && m_acq_data[CQE_WQE_COUNTER_LSB +: CQE_WQE_COUNTER_W] == f_idx) begin
        assert(f_acked);                                                 // f_send_acked
    end
end
`endif

endmodule

`resetall
