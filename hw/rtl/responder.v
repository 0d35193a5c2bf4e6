// Responder (as in Linux rxe: the side that executes requests): takes
// checked packets from roce_rx one at a time, in order,
// and for each: finds the QP, checks the PSN against the expected PSN (24-bit
// arithmetic; duplicates re-ACKed, never executed; a gap NAKed once), checks
// the opcode sequence and lengths, checks the rkey (RETH) or consumes a
// receive WQE (SEND, WRITE_WITH_IMM), places the payload by DMA write (RO=1),
// and asks for the CQE only after that write has been accepted by the
// in-order write engine (the completion barrier). ACKs are coalesced: one
// waiting ACK per responder is overwritten by newer ones of the same QP, and
// packets that did not ask for an ACK are acknowledged by the ACK timer at
// most ACK_TIMER cycles later unless an ACK covers them first.
//
// ACK packets (opcode 0x11; an mp QP's: MP ACKNOWLEDGE) belong to the
// requester and are passed on.
//
// READ_EN builds serve RDMA READ requests on rc QPs: checked as a WRITE's
// RETH is (PSN, key, PD, bounds, REMOTE_READ of the region and the QP),
// handed to read_reply as a job (ST_READ), which sends the responses; the
// expected PSN moves on by their count and no ACK is queued (the responses
// acknowledge). A duplicate READ is checked and answered again from its
// own RETH, the QP's state untouched; one that fails its checks is
// dropped and counted (rx_drop_psn), never NAKed.
//
// READ_EN builds also take the responses to the READs this NIC's requester
// issued (ST_RRESP, ST_RPLACE): a READ RESPONSE is looked up in the READ
// table (read_track) by QP and PSN and placed only at the PSN its READ
// expects next, at the READ's local buffer + (PSN - first) PMTUs, behind
// the same write guard as a WRITE (the lkey's region, LOCAL_WRITE); the
// opcode (FIRST/MIDDLE before the READ's last PSN, LAST/ONLY at it) and the
// length (a PMTU, the rest at the last) must fit. Once its write is
// accepted by the in-order write engine, the response is handed to the
// completer as an ACK of its PSN (ST_RDONE), which retires the READ at its
// last PSN: the READ's CQE follows its data. A response beyond the expected
// PSN asks the completer once for a resend from there (as a sequence NAK
// would, ST_RASK); duplicates, responses to no READ and misfits are dropped
// and counted (rx_drop_psn), never NAKed. An ACK or NAK that covers a PSN
// of a READ whose response is still missing would retire that READ without
// its data: it reaches the completer as a sequence NAK of the first missing
// PSN instead (once; then dropped), as rxe retries the READ.
// ATOMIC_EN builds (which are READ_EN builds) execute CMP_SWAP and
// FETCH_ADD on rc QPs: checked as a READ of 8 bytes is (PSN, key, PD,
// bounds, REMOTE_ATOMIC of the region and the QP), and an address that
// is not 8-byte aligned is an invalid request; handed to read_reply as an
// atomic job, which reads, computes, writes back and answers with an
// ATOMIC ACKNOWLEDGE. A duplicate atomic is never executed again: its PSN
// is looked up in the replay records (atomic_replay: the QP's last
// ATOM_REPLAY executions, written by read_reply as each atomic executes)
// and answered from its record by a replay job; one without a record (a
// stale copy of an atomic answered long ago) is dropped and counted
// (rx_drop_psn).
// Debug switch cfg_early_read_cqe hands the last response over before its
// write (ST_REARLY), so the READ's CQE may pass its data.
//
// A QP with ctx_mp set uses the multipath transport instead: its requester
// sprays packets over several paths with rnic's own opcodes (MP_OPCODE_* of
// rnic_formats.vh): every data packet carries an MPETH, a placement header
// with this packet's address, R_Key and payload length (MP WRITE for all but
// the last packet of a message, MP WRITE LAST or MP WRITE LAST WITH
// IMMEDIATE for the last; the latter adds ImmDt and an MCETH with the
// message length, which roce_rx passes in the AETH fields), and ACKs and
// NAKs are MP ACKNOWLEDGE; so each packet is checked and placed on arrival,
// in any order, within a
// window of MP_W PSNs from the cumulative point (the expected PSN). A bitmap
// per QP records what was placed; the cumulative point advances over it;
// duplicates (below the point or already in the bitmap) are re-ACKed and
// dropped, PSNs beyond the window dropped (both counted as PSN drops). ACKs
// are cumulative (PSN = point - 1), sent on AckReq and whenever the point
// jumps over a filled hole. A hole is normal (spraying reorders); it is
// reported as lost, by a sequence NAK naming the point (once per point, as
// rc does), only when a packet MP_NAK_GAP or more PSNs beyond it arrives;
// the requester resends that one packet. Completions
// keep requester order: a WRITE_WITH_IMM at the point completes at once; one
// above it is placed and its completion deferred (one per QP; a second is
// dropped unplaced, to be resent) until the point passes it; a deferred
// completion that finds no receive WQE stays owed, and the QP accepts no
// packet until a receive is posted. The CQE goes to the in-order write
// engine after every payload write below its PSN, so the bitmap may run
// ahead and the CQ never does. SEND is not carried by mp (an RC opcode: a
// transport drop, below).
//
// The transports never mix: an mp opcode for an rc QP, or an RC opcode
// (data or ACK) for an mp QP, is dropped and counted (stat_drop_xport)
// before anything else looks at it: nothing placed, completed, ACKed or NAKed.
//
// Debug switch cfg_early_cqe asks for the CQE before the payload write;
// cfg_no_mr_check skips the memory-region checks (the fuzz campaign must
// then see writes outside the registered regions).
//
// Record port (REC_PORT 1; DESIGN.md section 6, step 1): the QP context
// cache moves a QP's whole state between the core and host memory, so
// every block RAM that keeps a record at the QP's number is a ram_rec, and
// one rec_map lays their record ports out as REC_WORDS 64-bit words (its
// contract and layout). The records, in this order: RSP, EPS, RQP, RQC,
// RFL, and in ATOMIC_EN builds atomic_replay's ARM and its ATOM_REPLAY
// slots (ARS, one record each); their widths follow the knobs (RSP's
// fields of MP_W, SEND_EN and RC_EN), so the layout is a build's. The
// halves of a bit kept as an XOR of two records (VB of RSP, RQC and RFL
// against LV, LC and LF of EPS) are all in it, so a QP moved whole reads
// as it did. Not in it: state kept by position rather than by QP number,
// which only a QP with work in flight has (the cache keeps such a QP
// pinned): mp_deferred's slots (deferred completions), the READ job ring
// (rrq_qpn, by job number), the waiting ACK and ACK job, the registers of
// the packet in work. REC_PORT 0 builds no record copy and no rec_map
// (the record writes are tied off): the logic is as without the port.

`resetall
`timescale 1ns / 1ps
`default_nettype none

module responder #(
    parameter DATA_W = 64,
    parameter RAM_ADDR_W = 17,
    parameter RX_ADDR_W = 15,
    parameter RX_SLOT_W = 2,
    parameter NUM_QP = 16,
    parameter QN_W = 4,
    parameter LEN_W = 17,
    parameter ID_W = 8,
    parameter [RAM_ADDR_W-1:0] RX_RAM_BASE = 0,   // RX RAM in the engines' address space
    parameter [RAM_ADDR_W-1:0] RQWQE_RAM = 0,     // 64-byte slot for a receive WQE
    parameter [RAM_ADDR_W-1:0] ATOM_RQ_RAM = 0,   // 8 bytes in the staging RAM: our atomics' answers
    parameter ACK_TIMER = 2048,                    // cycles an owed ACK may wait (ACK coalescing)
    parameter MP_W = 64,                           // mp receive window (bitmap) in PSNs
    parameter MP_NAK_GAP = 16,                     // mp: a hole this far behind a placed PSN is a loss
    parameter SEND_EN = 1,                         // 0: SEND packets are invalid requests
    parameter RC_EN = 1,                           // 0: mp-only build (every QP is mp, no rc message state)
    parameter MP_PEND = 8,                         // mp: deferred completions held at once (shared)
    parameter MP_WIMM = 4,                         // mp: ... of them at most per QP (OCP MRC's max_wimm)
    parameter READ_EN = 0,                         // 1: RDMA READ requests served (read_reply sends the data),
                                                   //    and the responses to our READs placed
    parameter RD_IW = 2,                           // the READ table's index width
    parameter ATOMIC_EN = 0,                       // 1: atomics executed (READ_EN too)
    parameter ATOM_REPLAY = 4,                     // replay records per QP (ATOMIC_EN): the largest max_dest_rd_atomic
    parameter REC_PORT = 0,                        // 1: the record port is built (header)
    parameter REC_WORDS = 32,                      // ... its 64-bit words per QP, a power of two
    parameter [ID_W-1:0] ID_TAG = 0
) (
    input  wire                   clk,
    input  wire                   rst,

    // packets from roce_rx
    /* verilator lint_off UNUSEDSIGNAL */
    input  wire [47:0]            s_pkt_smac,
    input  wire [31:0]            s_pkt_sip,
    input  wire [31:0]            s_pkt_dip,
    input  wire                   s_pkt_se,
    input  wire [1:0]             s_pkt_pad_cnt,
    /* verilator lint_on UNUSEDSIGNAL */
    input  wire [15:0]            s_pkt_udp_sport,
    input  wire [7:0]             s_pkt_opcode,
    input  wire                   s_pkt_ack_req,
    input  wire [23:0]            s_pkt_dest_qp,
    input  wire [23:0]            s_pkt_psn,
    input  wire [63:0]            s_pkt_reth_va,
    input  wire [31:0]            s_pkt_reth_rkey,
    input  wire [31:0]            s_pkt_reth_len,
    input  wire [31:0]            s_pkt_imm,
    input  wire [7:0]             s_pkt_aeth_syndrome,
    input  wire [23:0]            s_pkt_aeth_msn,
    input  wire [31:0]            s_pkt_cmp_lo,      // an AtomicETH's last word
    input  wire [RX_ADDR_W-1:0]   s_pkt_payload_addr,
    input  wire [12:0]            s_pkt_payload_len,
    input  wire [RX_SLOT_W-1:0]   s_pkt_slot,
    input  wire                   s_pkt_valid,
    output wire                   s_pkt_ready,

    output wire                   m_free_valid,
    output wire [RX_SLOT_W-1:0]   m_free_slot,

    // QP context (ctx_* are the context of the ctx_qpn of the cycle before)
    output wire [QN_W-1:0]        ctx_qpn,
    input  wire [2:0]             ctx_state,
    input  wire [2:0]             ctx_pmtu,
    input  wire                   ctx_remote_write,
    input  wire                   ctx_remote_read,
    input  wire                   ctx_remote_atomic,
    input  wire [23:0]            ctx_dest_qpn,
    input  wire [47:0]            ctx_dmac,
    input  wire [31:0]            ctx_dip,
    input  wire [15:0]            ctx_udp_sport,
    input  wire [15:0]            ctx_pd,
    input  wire [QN_W-1:0]        ctx_rcq,
    input  wire [63:0]            ctx_rq_base,
    input  wire [3:0]             ctx_rq_log,
    input  wire [4:0]             ctx_min_rnr_timer,
    input  wire [2:0]             ctx_max_dest_rd_atomic,  // READ and atomic jobs the QP may hold
    input  wire                   ctx_mp,             // the QP uses the multipath transport
    input  wire [2:0]             ctx_mp_wshift,      // its window: MP_W >> shift
    input  wire                   load_rtr,
    input  wire                   load_reset,
    input  wire [QN_W-1:0]        load_qpn,
    input  wire [QN_W-1:0]        load_qpn_next,      // the QP a load in the next cycle names
    input  wire [23:0]            load_psn,
    output wire                   set_err,
    output wire [QN_W-1:0]        set_err_qpn,

    input  wire                   rq_db_valid,
    input  wire [15:0]            rq_db_qpn,
    input  wire [15:0]            rq_db_pi,

    // MR lookup
    output wire [31:0]            mr_key,
    output wire [63:0]            mr_va,
    output wire [31:0]            mr_len,
    output wire [15:0]            mr_pd,
    output wire [3:0]             mr_access,
    input  wire                   mr_ok,
    input  wire [63:0]            mr_bus,

    // receive WQE fetch
    output wire [63:0]            m_rd_desc_pcie_addr,
    output wire [RAM_ADDR_W-1:0]  m_rd_desc_ram_addr,
    output wire [LEN_W-1:0]       m_rd_desc_len,
    output wire [ID_W-1:0]        m_rd_desc_id,
    output wire                   m_rd_desc_valid,
    input  wire                   m_rd_desc_ready,
    input  wire                   s_rd_status_valid,
    input  wire [3:0]             s_rd_status_error,
    input  wire [RAM_ADDR_W-$clog2(DATA_W/8)-1:0] ram_snoop_addr,
    input  wire [DATA_W-1:0]      ram_snoop_data,
    input  wire [DATA_W/8-1:0]    ram_snoop_strb,
    input  wire                   ram_snoop_en,

    // payload writes
    output wire [63:0]            m_wr_desc_pcie_addr,
    output wire [RAM_ADDR_W-1:0]  m_wr_desc_ram_addr,
    output wire [LEN_W-1:0]       m_wr_desc_len,
    output wire [ID_W-1:0]        m_wr_desc_id,
    output wire                   m_wr_desc_valid,
    input  wire                   m_wr_desc_ready,
    input  wire                   s_wr_status_valid,
    // the MR that authorized the write, for the guard's re-check
    output wire [31:0]            m_wr_desc_key,
    output wire [3:0]             m_wr_desc_access,
    input  wire                   wr_guard_ok,       // two cycles after the write's key settles
    input  wire                   mr_change,         // the MR table changes this cycle

    // completions
    output wire [QN_W-1:0]        m_cqe_cqn,
    output wire [247:0]           m_cqe_data,
    output wire                   m_cqe_valid,
    input  wire                   m_cqe_ready,
    input  wire                   cqe_writer_idle,   // the CQE writer has issued what it took

    // ACK / NAK packets to roce_tx
    output wire [47:0]            m_ack_dmac,
    output wire [31:0]            m_ack_dip,
    output wire [15:0]            m_ack_udp_sport,
    output wire [23:0]            m_ack_dest_qp,
    output wire [23:0]            m_ack_psn,
    output wire [7:0]             m_ack_syndrome,
    output wire [23:0]            m_ack_msn,
    output wire                   m_ack_mp,           // the ACK is an mp QP's: MP ACKNOWLEDGE
    output wire [MP_W-2:0]        m_ack_lost,         // mp sequence NAK (MP SELECTIVE NAK): the other lost PSNs
    output wire                   m_ack_valid,
    input  wire                   m_ack_ready,

    // READ requests accepted, to read_reply (READ_EN)
    output wire [23:0]            m_rr_psn,
    output wire [23:0]            m_rr_msn,
    output wire [63:0]            m_rr_bus,
    output wire [31:0]            m_rr_len,
    output wire [3:0]             m_rr_pmtu_log,
    output wire [47:0]            m_rr_dmac,
    output wire [31:0]            m_rr_dip,
    output wire [15:0]            m_rr_udp_sport,
    output wire [23:0]            m_rr_dest_qp,
    output wire                   m_rr_ack,          // an ACK job: an ACK/NAK that follows the QP's READs
    output wire [7:0]             m_rr_syndrome,     // ... its syndrome
    output wire [1:0]             m_rr_atomic,       // ATOMIC_EN: 1 CMP_SWAP, 2 FETCH_ADD, 3 replay
    output wire [63:0]            m_rr_opa,          // ... compare, add, or the replay's value
    output wire [63:0]            m_rr_opb,          // ... swap
    output wire [QN_W-1:0]        m_rr_qpn,
    output wire                   m_rr_valid,
    input  wire                   m_rr_ready,
    input  wire [7:0]             rr_jobs_out,       // jobs read_reply has sent whole (mod 256)
    // the original value an ATOMIC ACKNOWLEDGE brought for one of our
    // atomics (ATOMIC_EN), into the staging RAM, whence it is written
    output wire [RAM_ADDR_W-$clog2(DATA_W/8)-1:0] m_at_ram_wr_addr,
    output wire [DATA_W-1:0]      m_at_ram_wr_data,
    output wire [DATA_W/8-1:0]    m_at_ram_wr_strb,
    output wire                   m_at_ram_wr_en,
    input  wire                   m_at_ram_wr_ready,
    // each atomic read_reply executed (ATOMIC_EN): its replay record
    input  wire                   s_rec_valid,
    input  wire [QN_W-1:0]        s_rec_qpn,
    input  wire [23:0]            s_rec_psn,
    input  wire [63:0]            s_rec_orig,

    // ACKs received, for the requester
    output wire                   m_rx_ack_valid,
    output wire [QN_W-1:0]        m_rx_ack_qpn,
    output wire [23:0]            m_rx_ack_psn,
    output wire [7:0]             m_rx_ack_syndrome,
    output wire [23:0]            m_rx_ack_msn,
    output wire [MP_W-2:0]        m_rx_ack_lost,      // MP SELECTIVE NAK: its SNAKETH as far as
                                                      // the window reaches (else zero)

    // the READ table (read_track; READ_EN): lookups answer a cycle later
    output wire [QN_W-1:0]        rt_lk_qpn,
    output wire [23:0]            rt_lk_psn,
    output wire                   rt_lk_nak,
    input  wire                   rt_hit,
    input  wire [RD_IW-1:0]       rt_idx,
    input  wire [23:0]            rt_first,
    input  wire [23:0]            rt_last,
    input  wire [23:0]            rt_next,
    input  wire [63:0]            rt_bus,
    input  wire [31:0]            rt_key,
    input  wire [31:0]            rt_len,
    input  wire                   rt_atomic,        // the entry is an atomic's
    input  wire                   rt_asked,
    input  wire                   rt_cov,
    input  wire [RD_IW-1:0]       rt_cov_idx,
    input  wire [23:0]            rt_cov_next,
    input  wire                   rt_cov_asked,
    output wire                   rt_adv_valid,
    output wire [RD_IW-1:0]       rt_adv_idx,
    output wire [23:0]            rt_adv_psn,
    output wire                   rt_ask_valid,
    output wire [RD_IW-1:0]       rt_ask_idx,
    output wire [23:0]            rt_ask_psn,
    input  wire                   rx_ack_room,       // the completer takes an ACK now
    input  wire                   rx_acks_idle,      // ... and has none queued or in work

    input  wire                   cfg_early_cqe,
    input  wire                   cfg_early_read_cqe,
    input  wire                   cfg_no_mr_check,   // debug: skip the memory-region checks

    input  wire [QN_W-1:0]        sel_qpn,
    output wire [23:0]            sel_epsn,
    // whether QP pin_qpn has work outside its records (pin_busy answers
    // the pin_qpn of two cycles before): the context table moves no QP
    // that has
    input  wire [QN_W-1:0]        pin_qpn,
    output reg                    pin_busy = 1'b0,

    output wire                   stat_drop_qp,
    output wire                   stat_drop_psn,
    output wire                   stat_drop_xport,    // the other transport's opcode for this QP
    output wire                   stat_drop_wimm,     // mp: an early WRITE_WITH_IMM with no deferred slot (resent)
    output wire                   stat_nak,
    output wire                   stat_guard,       // a payload write the MR re-check refused
    output wire                   stat_rd_resp,     // a READ response placed (its write accepted)
    output wire                   stat_rd_over,     // a new READ or atomic beyond max_dest_rd_atomic (NAKed)
    output wire                   mr_drain,         // an MR command waits for READs and atomics checked before it

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

localparam [15:0] NUM_QP16 = NUM_QP[15:0];

localparam [2:0] QPS_RTR = 3'd2, QPS_RTS = 3'd3;

localparam [7:0]
    OP_SEND_FIRST = 8'h00, OP_SEND_MIDDLE = 8'h01, OP_SEND_LAST = 8'h02,
    OP_SEND_LAST_IMM = 8'h03, OP_SEND_ONLY = 8'h04, OP_SEND_ONLY_IMM = 8'h05,
    OP_WRITE_FIRST = 8'h06, OP_WRITE_MIDDLE = 8'h07, OP_WRITE_LAST = 8'h08,
    OP_WRITE_LAST_IMM = 8'h09, OP_WRITE_ONLY = 8'h0A, OP_WRITE_ONLY_IMM = 8'h0B,
    OP_READ_REQ = 8'h0C, OP_ACK = 8'h11, OP_CMP_SWAP = 8'h13, OP_FETCH_ADD = 8'h14;

localparam [7:0] NAK_PSN = 8'h60, NAK_INV_REQ = 8'h61, NAK_REM_ACCESS = 8'h62, NAK_REM_OP = 8'h63,
    RNR_NAK = 8'h20;           // | the QP's min_rnr_timer
localparam [7:0] ACK_SYNDROME = 8'h1F;     // ACK, credit count "invalid" (no end-to-end credits)
`include "ack_syndromes.vh"


initial begin
    if (ACK_TIMER < 16 || ACK_TIMER > 32767) begin
        $error("responder: ACK_TIMER must be 16..32767 cycles");
        $finish;
    end
    if (QN_W > 15 || NUM_QP > (1 << QN_W)) begin
        $error("responder: bad NUM_QP / QN_W");
        $finish;
    end
    if (MP_W != 32 && MP_W != 64 && MP_W != 128) begin
        $error("responder: MP_W must be 32, 64 or 128");
        $finish;
    end
    if (MP_PEND < 2 || MP_PEND > NUM_QP) begin
        $error("responder: MP_PEND must be 2..NUM_QP");
        $finish;
    end
    // (rec_port checks REC_PORT and REC_WORDS, rec_map that the records fit)
end

// per-QP responder state
//
// Storage: the wide fields form one record per QP, declared once below
// (RSP_*_LSB/_W), held in block RAM (ram_sdp): the ACK's MSN, the mp
// bitmap, and the fields that only mean something within a message (the
// rc message's key, cursor, remaining and placed lengths, and SEND's
// receive WQE id). The read is registered: the record's QP number is
// ctx_qpn, the value qpn takes at the next edge (as for the QP context),
// so the record of qpn is there in every state but ST_IDLE, as the
// combinational read of a flop array was. The record is written in one
// place, the write-back in ST_FINISH (every field: the new value or the
// one read); the next packet's read is issued in ST_IDLE, at least a
// cycle later, and a write-back followed by ST_MP_PEND on the same QP
// meets its read in the same cycle, which the RAM forwards.
//
// The receive ring's indices are two more records in block RAM: RQP (the
// producer index, written by the host's RQ doorbell) and RQC (the
// consumer index, written back in ST_FINISH as RSP is). Each
// has two registered read ports: at ctx_qpn (qpn's in every state but
// ST_IDLE, as for RSP) and at tscan_next (the scan's QP in ST_IDLE, whose
// owed deferred completion waits for a receive WQE). A QP's load out of
// RESET empties its ring. RQP's write port takes the load's zero as well
// as the doorbells. Both come from MMIO writes, a doorbell a cycle after
// its write and a load two cycles after its QP command, and
// pcie_mmio_bridge has one request at a time (a write every third cycle at
// most: a TLP's header, the request, its ack), so the two never meet. RQC,
// whose writer is the write-back at qpn, uses two bits in block RAM whose
// XOR says "written since the load" (VB in RQC, LC in EPS: as for RSP
// below).
//
// The expected PSN is a record too (EPS), written by a QP load or the
// write-back in ST_FINISH and read at ctx_qpn and at sel_qpn (the host's
// view). One write port: a load goes first, and ST_FINISH waits a cycle
// when a load of another QP comes in its cycle (of its own QP it is stale
// and writes nothing).
//
// A load makes the record's MSN, bitmap and span read as zero until its
// next write-back (block RAM has a single write port and no reset). That
// "written since the load" bit has two writers, the load and the
// write-back, so it is two bits in block RAM whose XOR it is: LV in EPS,
// which the load sets to RSP's VB as it stands (XOR 0: reads as loaded),
// and VB in RSP, which the write-back sets to the complement of the QP's
// LV (XOR 1). The load reads VB at its QP through a 1-bit RAM copy at
// load_qpn_next (the host's QP selector, which load_qpn takes a cycle
// later). LC is RQC's half, the same way, set by a load out of RESET only
// (another load writes it back as it reads it). A flop vector per bit, with
// a decoder per writer and a mux per reader, cost LUTs in proportion to the
// QPs.
//
// Kept in flops: the deferred completion's slot (mp_deferred).
localparam EPS_PSN_W = 24;
localparam EPS_LV_W = 1;
localparam EPS_LC_W = 1;
localparam EPS_LF_W = 1;                 // the load's half for RFL (below)
localparam EPS_PSN_LSB = 0;
localparam EPS_LV_LSB = EPS_PSN_LSB + EPS_PSN_W;
localparam EPS_LC_LSB = EPS_LV_LSB + EPS_LV_W;
localparam EPS_LF_LSB = EPS_LC_LSB + EPS_LC_W;
localparam EPS_W = EPS_LF_LSB + EPS_LF_W;
// an rc message in progress: rc_message_inst below (rc builds only; an
// mp packet carries its own RETH)
localparam RQP_PI_LSB = 0;
localparam RQP_PI_W = 16;
localparam RQP_W = 16;
localparam RQC_CI_W = 16;
localparam RQC_VB_W = 1;
localparam RQC_CI_LSB = 0;
localparam RQC_VB_LSB = RQC_CI_LSB + RQC_CI_W;
localparam RQC_W = RQC_VB_LSB + RQC_VB_W;
// the record (its fields in the knobs' builds only: RSP_W shrinks)
localparam RSP_VB_W = 1;                 // the record's half of "written since the load" (above)
localparam RSP_VB_LSB = 0;
localparam RSP_BMP_LSB = RSP_VB_LSB + RSP_VB_W;
localparam RSP_BMP_W = MP_W;             // mp: placed PSNs (below)
localparam RSP_SPAN_LSB = RSP_BMP_LSB + RSP_BMP_W;
localparam RSP_SPAN_W = $clog2(MP_W) + 1;   // mp: the last selective NAK's recovery span (mp_window)
localparam RSP_MSN_LSB = RSP_SPAN_LSB + RSP_SPAN_W;
localparam RSP_MSN_W = 24;
localparam RSP_WRID_LSB = RSP_MSN_LSB + RSP_MSN_W;
localparam RSP_WRID_W = 64;              // SEND's receive WQE across its packets (knob: SEND_EN)
localparam RSP_KEY_LSB = RSP_WRID_LSB + (SEND_EN != 0 ? RSP_WRID_W : 0);
localparam RSP_KEY_W = 32;               // key that authorized the current message (knob: RC_EN)
localparam RSP_CURSOR_LSB = RSP_KEY_LSB + RSP_KEY_W;
localparam RSP_CURSOR_W = 64;            // (knob: RC_EN)
localparam RSP_REMAIN_LSB = RSP_CURSOR_LSB + RSP_CURSOR_W;
localparam RSP_REMAIN_W = 32;            // (knob: RC_EN)
localparam RSP_MSGLEN_LSB = RSP_REMAIN_LSB + RSP_REMAIN_W;
localparam RSP_MSGLEN_W = 32;            // (knob: RC_EN)
localparam RSP_MSG_LSB = RSP_MSGLEN_LSB + RSP_MSGLEN_W;
localparam RSP_MSG_W = 2;                // the message the QP is in: rc_message (knob: RC_EN)
localparam RSP_W = RC_EN != 0 ? RSP_MSG_LSB + RSP_MSG_W : RSP_KEY_LSB;
// the logic's view of a record: every field, those of a knob that is off
// read as zero and never stored
localparam RSP_VIEW_BITS = RSP_MSG_LSB + RSP_MSG_W;
// mp: placed PSNs (the record's bitmap, RSP_BMP; bit i: point + i; bit 0 is
// the point, never set), and
// up to MP_WIMM deferred WRITE_WITH_IMM completions per QP, held in
// MP_PEND slots shared by the QPs (mp_deferred, whose slots name their
// QP: a QP without one costs the owed bit here and nothing there; an early
// WRITE_WITH_IMM that finds no free slot, or its QP with MP_WIMM parked,
// is dropped unplaced, counted (stat_drop_wimm) and resent)
localparam MP_LOG = $clog2(MP_W);
// the slots and the completions in them: mp_deferred_inst below (pend:
// qpn has one parked; full: MP_WIMM; psn, imm, len: its first by PSN)
wire pslot_avail, pend_any, pend_full;
wire [23:0] pend_psn;
wire [31:0] pend_imm, pend_len;
// The per-QP flags, one record in block RAM (RFL) whose one writer is the
// state machine: NS (rc: a NAK was sent for the expected PSN; mp: a
// selective NAK's recovery span is not passed yet), OW (mp: a deferred
// completion is due and waits for a receive WQE), AO (accepted packets no
// ACK covers yet: the ACK timer's) and ST (AO's time stamp). A load clears
// the flags by the XOR of two bits, as for RSP: LF in EPS (the load's half,
// set to RFL's VB as it stands) and VB in RFL (set by each write to the
// complement of the QP's LF). They were flop vectors (nak_sent_reg,
// owed_reg, ack_owed_reg and two age bits), which cost a decoder per
// writer, a mux per reader and the next-state logic per QP.
//
// ACK timer: instead of aging two bits of every QP every ACK_TIMER/2 cycles,
// an owed ACK's record keeps the epoch (ACK_TIMER/2 cycles) in which AO was
// set, and it is due once two epochs have begun since: it waits between
// ACK_TIMER/2 and ACK_TIMER cycles, in the very cycles the age bits gave.
// An ACK owed for 2^RFL_ST_W - 2 epochs (260 k cycles at ACK_TIMER 2048)
// without the scan taking it reads as not due for two epochs, and is due
// again after them: it goes out late, never lost.
localparam RFL_VB_W = 1;
localparam RFL_NS_W = 1;
localparam RFL_OW_W = 1;
localparam RFL_AO_W = 1;
localparam RFL_ST_W = 8;                 // (the per-QP budget: state_budget.rs)
localparam RFL_VB_LSB = 0;
localparam RFL_NS_LSB = RFL_VB_LSB + RFL_VB_W;
localparam RFL_OW_LSB = RFL_NS_LSB + RFL_NS_W;
localparam RFL_AO_LSB = RFL_OW_LSB + RFL_OW_W;
localparam RFL_ST_LSB = RFL_AO_LSB + RFL_AO_W;
localparam RFL_W = RFL_ST_LSB + RFL_ST_W;
// The record port's records (header), record r's width: atomic_replay's
// are its ARM and ARS words, restated here (its port's width, sized from
// its own declarations, makes a mismatch a lint error)
localparam RECP_ARM_BITS = (ATOM_REPLAY > 1 ? $clog2(ATOM_REPLAY) : 1) + ATOM_REPLAY;
localparam RECP_ARS_BITS = 64 + 24;
localparam RECP_N = 5 + (ATOMIC_EN != 0 ? 1 + ATOM_REPLAY : 0);
function integer recp_w(input integer r);
    begin
        case (r)
            0: recp_w = RSP_W;
            1: recp_w = EPS_W;
            2: recp_w = RQP_W;
            3: recp_w = RQC_W;
            4: recp_w = RFL_W;
            5: recp_w = RECP_ARM_BITS;
            default: recp_w = RECP_ARS_BITS;
        endcase
    end
endfunction
// record r's first bit in the packed record ports (rec_map's packing)
function integer recp_lsb(input integer r);
    integer ri;
    begin
        recp_lsb = 0;
        for (ri = 0; ri < r; ri = ri + 1) begin
            recp_lsb = recp_lsb + recp_w(ri);
        end
    end
endfunction
// rec_map's REC_W: record r's width at [r*32 +: 32]
function [RECP_N*32-1:0] recp_tab(input integer n);
    integer ri;
    begin
        recp_tab = {RECP_N*32{1'b0}};
        for (ri = 0; ri < n; ri = ri + 1) begin
            recp_tab[ri*32 +: 32] = recp_w(ri);
        end
    end
endfunction
localparam RECP_BITS = recp_lsb(RECP_N);
localparam [RECP_N*32-1:0] RECP_TAB = recp_tab(RECP_N);
// the records' ram_rec record ports, packed (rec_map_inst at the end)
wire [QN_W-1:0]      recp_rd_addr;
wire [RECP_BITS-1:0] recp_rd_data;
wire [RECP_N-1:0]    recp_wr_en;
wire [QN_W-1:0]      recp_wr_addr;
wire [RECP_BITS-1:0] recp_wr_data;
wire [RECP_N-1:0]    recp_wr_ready;
// The state machine's writes are all at its QP (qpn) and in states other
// than ST_IDLE (so qpn is the same QP in the next cycle): each is held a
// cycle in a pending bit and value (*_pw_reg, *_pv_reg) and written from
// there, with the rest of the record as the read port shows it in that
// cycle (qpn's); a read of the record in that cycle takes the written word.
reg [QN_W-1:0] pq_qn_reg = {QN_W{1'b0}};
reg nak_sent_pw_reg = 1'b0;
reg nak_sent_pv_reg = 1'b0;
reg owed_pw_reg = 1'b0;
reg owed_pv_reg = 1'b0;
reg ack_owed_pw_reg = 1'b0;
reg ack_owed_pv_reg = 1'b0;
reg ack_stamp_pw_reg = 1'b0;             // (with AO set: the timer starts)
reg [15:0] now_reg = 16'd0;
reg [RFL_ST_W-1:0] epoch_reg = {RFL_ST_W{1'b0}};
reg [RFL_ST_W-1:0] epoch_m1_reg = {RFL_ST_W{1'b1}};   // epoch_reg - 1
reg [QN_W-1:0] tscan_reg = {QN_W{1'b0}};
localparam integer LAST_QP_I = NUM_QP - 1;
localparam [QN_W-1:0] LAST_QP = LAST_QP_I[QN_W-1:0];
localparam integer ACK_EPOCH_I = ACK_TIMER / 2 - 1;
localparam [15:0] ACK_EPOCH = ACK_EPOCH_I[15:0];

localparam [4:0]
    ST_IDLE = 5'd0,
    ST_CHECK = 5'd1,
    ST_EXEC = 5'd2,
    ST_RQ_FETCH = 5'd3,
    ST_RQ_WAIT = 5'd4,
    ST_RQ_USE = 5'd5,
    ST_EARLY_CQE = 5'd6,
    ST_PAYLOAD = 5'd7,
    ST_CQE = 5'd8,
    ST_FINISH = 5'd9,
    ST_DROP = 5'd10,
    ST_EARLY_WAIT = 5'd11,
    ST_TACK = 5'd12,
    ST_MP_PEND = 5'd13,
    ST_LOAD = 5'd14,
    ST_MR = 5'd15,        // the MR lookup of the RETH, registered
    ST_RQ_MR = 5'd16,     // the MR lookup of the receive buffer, registered
    ST_GUARD = 5'd17,     // the write guard's answer, registered
    ST_MP_NEXT = 5'd18,   // after a deferred completion: is the QP's next one due?
    ST_TNAK_TOP = 5'd19,  // mp: the ACK timer found the point a hole: the highest PSN placed
    ST_TNAK = 5'd20,      // ... and NAKs every hole below it
    ST_READ = 5'd21,      // a READ request checked: its job to read_reply
    ST_RRESP = 5'd22,     // a response to our READ: the READ table's answer, registered
    ST_RPLACE = 5'd23,    // ... checked against its READ
    ST_RASK = 5'd24,      // ... beyond the expected PSN: ask for a resend from there
    ST_RDONE = 5'd25,     // ... placed: the completer gets its PSN as an ACK
    ST_REARLY = 5'd26,    // (cfg_early_read_cqe: the last response handed over first)
    ST_REWAIT = 5'd27,    // (... and its CQE written, before the write)
    ST_RATOM = 5'd28;     // an ATOMIC ACKNOWLEDGE fits: its value into the staging RAM

reg [4:0] state_reg = ST_IDLE;

// the packet being processed
reg [7:0] op_reg = 8'd0;
reg ack_req_reg = 1'b0;
reg [23:0] qp_field_reg = 24'd0;
reg [23:0] psn_reg = 24'd0;
reg [15:0] sport_reg = 16'd0;            // the packet's UDP source port (a probe's reply takes it)
reg [63:0] reth_va_reg = 64'd0;
reg [31:0] reth_rkey_reg = 32'd0;
reg [31:0] reth_len_reg = 32'd0;
reg [31:0] imm_reg = 32'd0;
reg [7:0] aeth_syn_reg = 8'd0;
reg [23:0] aeth_msn_reg = 24'd0;
reg [RX_ADDR_W-1:0] paddr_reg = {RX_ADDR_W{1'b0}};
reg [12:0] plen_reg = 13'd0;
reg [RX_SLOT_W-1:0] slot_reg = {RX_SLOT_W{1'b0}};
// an atomic's operands (its AtomicETH after VA and R_Key; the RETH length
// register holds its 8 bytes)
reg [63:0] atom_swap_reg = 64'd0;
reg [63:0] atom_cmp_reg = 64'd0;
reg at_hit_reg = 1'b0;                   // a duplicate atomic's replay record...
reg [63:0] at_orig_reg = 64'd0;          // ... and its value (ST_MR)

wire [QN_W-1:0] qpn = qp_field_reg[QN_W-1:0];

// working copies of the QP's state
reg [63:0] cursor_reg = 64'd0;
reg [31:0] remain_reg = 32'd0;
reg [31:0] msglen_reg = 32'd0;
reg [63:0] wrid_reg = 64'd0;
reg [15:0] rqci_reg = 16'd0;
reg [31:0] key_reg = 32'd0;
reg completes_reg = 1'b0;
reg early_done_reg = 1'b0;
reg [7:0] nak_reg = 8'd0;
reg mp_defer_reg = 1'b0;       // mp: this WRITE_WITH_IMM's completion waits for the point
reg rd_dup_reg = 1'b0;         // a duplicate READ request: executed again, the QP's state untouched
// a READ's response packets, the PSNs it takes: from the RETH length and
// the PMTU, in two steps off the packet's registers (used in ST_FINISH)
reg [31:0] rd_len_m1_reg = 32'd0;
reg [23:0] rd_npkts_reg = 24'd1;
reg mp_pend_pass_reg = 1'b0;   // mp: completing a deferred WRITE_WITH_IMM (no packet, no slot)
// a response to one of our READs (ST_RRESP on): the READ table's answer
reg rresp_reg = 1'b0;          // the packet is one (its write: LOCAL_WRITE; no NAK, no CQE)
reg rp_atom_reg = 1'b0;        // ... for an atomic of ours (ATOMIC ACKNOWLEDGE)
reg at_place_reg = 1'b0;       // ... which writes its value from the staging RAM
reg rp_hit_reg = 1'b0;         // its PSN lies in a READ of this QP
reg rp_exact_reg = 1'b0;       // ... it is the one that READ expects next
reg rp_beyond_reg = 1'b0;      // ... it is beyond that one (one before it went missing)
// ... an older READ of the QP still misses a response: the completer would
// take this one's PSN as acknowledging that READ too, so it is not placed,
// and a resend is asked from the older one's expected PSN (rp_older_*)
reg rp_older_reg = 1'b0;
reg rp_last_reg = 1'b0;        // ... it is the READ's last
reg [RD_IW-1:0] rp_idx_reg = {RD_IW{1'b0}};
reg [RD_IW-1:0] rp_ask_idx_reg = {RD_IW{1'b0}};    // the READ a resend is asked for
reg [23:0] rp_ask_psn_reg = 24'd0;                 // ... from this PSN
reg rp_ask_done_reg = 1'b0;                        // ... asked already
reg [31:0] rp_off_reg = 32'd0;  // its bytes' offset in the READ's buffer
reg [63:0] rp_bus_reg = 64'd0;
reg [31:0] rp_key_reg = 32'd0;
reg [31:0] rp_len_reg = 32'd0;
reg [2:0] rp_quiet_reg = 3'd0;  // (cfg_early_read_cqe: cycles the CQE path has been idle)
// the packet's PSN state, read once (ST_LOAD) and carried through registers
// so no state is a per-QP read, a subtraction, a priority encoder and a
// shifter deep in one cycle (timing)
reg [23:0] epsn_reg = 24'd0;
reg [23:0] psn_diff_reg = 24'd0;
// mp: the window's stages (mp_window_inst below)
wire mp_dup, mp_beyond;
wire [MP_LOG:0] mp_adv;           // how far the point moves (ST_EXEC)
wire [23:0] mp_point_new;         // the new point (ST_RQ_FETCH)
wire [MP_W-1:0] bmp_next;         // the bitmap from the new point (ST_RQ_FETCH)
wire mp_nak;                      // a loss: NAK the point (ST_RQ_FETCH) ...
wire [MP_W-2:0] mp_lost;          // ... and these PSNs beyond it
wire [MP_LOG:0] mp_span_next;     // the recovery span, written back
wire mp_recovered;                // the point passed the span
wire mp_pend_due;                 // the deferred completion is due (ST_RQ_FETCH)
// the MR table's answer for this packet, a cycle after its inputs settled
reg mr_ok_reg = 1'b0;
reg mr_wait_reg = 1'b0;
// the write guard's answer, and whether the MR table is still as it was
// when the guard read it (a change voids the answer: checked again)
reg guard_ok_reg = 1'b0;
reg guard_fresh_reg = 1'b0;
reg [63:0] mr_bus_reg = 64'd0;
// the QP was loaded (RTR or RESET) while its packet was in flight here:
// nothing read before may be written back
reg qp_stale_reg = 1'b0;
// or is loaded in this cycle: the write-back of ST_FINISH gives way to the
// load as well (nothing of the packet is written over the loaded state)
// a QP load of any kind (RTR or RESET)
wire load_any = load_rtr || load_reset;
wire qp_stale = qp_stale_reg || (load_any && load_qpn == qpn);
// the replay records of the atomics executed (ATOMIC_EN): looked up at
// the packet's QP and PSN, cleared at a QP's load
wire at_lk_hit;
wire [63:0] at_lk_orig;
generate
    if (ATOMIC_EN != 0) begin : g_replay
        atomic_replay #(
            .NUM_QP(NUM_QP),
            .QN_W(QN_W),
            .DEPTH(ATOM_REPLAY),
            .REC_EN(REC_PORT)
        ) atomic_replay_inst (
            .clk(clk),
            .rst(rst),
            .s_rec_valid(s_rec_valid),
            .s_rec_qpn(s_rec_qpn),
            .s_rec_psn(s_rec_psn),
            .s_rec_orig(s_rec_orig),
            .s_clr_valid(load_any),
            .s_clr_qpn(load_qpn),
            .lk_qpn(qpn),
            .lk_psn(psn_reg),
            .lk_hit(at_lk_hit),
            .lk_orig(at_lk_orig),
            // records 5 (ARM) and 6.. (ARS slots)
            .rec_rd_addr(recp_rd_addr),
            .rec_rd_data(recp_rd_data[recp_lsb(5) +: RECP_ARM_BITS + ATOM_REPLAY * RECP_ARS_BITS]),
            .rec_wr_en(recp_wr_en[5 +: 1 + ATOM_REPLAY]),
            .rec_wr_addr(recp_wr_addr),
            .rec_wr_data(recp_wr_data[recp_lsb(5) +: RECP_ARM_BITS + ATOM_REPLAY * RECP_ARS_BITS]),
            .rec_wr_ready(recp_wr_ready[5 +: 1 + ATOM_REPLAY])
        );
    end else begin : g_no_replay
        assign at_lk_hit = 1'b0;
        assign at_lk_orig = 64'd0;
        /* verilator lint_off UNUSEDSIGNAL */
        wire [QN_W+24+64:0] rec_unused = {s_rec_valid, s_rec_qpn, s_rec_psn, s_rec_orig};
        /* verilator lint_on UNUSEDSIGNAL */
    end
endgenerate

// receive WQE capture (its reserved bytes are not read)
/* verilator lint_off UNUSEDSIGNAL */
wire [8*RECV_WQE_BYTES-1:0] rqwqe_reg;
/* verilator lint_on UNUSEDSIGNAL */
wire [RECV_WQE_LENGTH_W-1:0] rq_len = rqwqe_reg[RECV_WQE_LENGTH_LSB +: RECV_WQE_LENGTH_W];
wire [RECV_WQE_WR_ID_W-1:0] rq_wr_id = rqwqe_reg[RECV_WQE_WR_ID_LSB +: RECV_WQE_WR_ID_W];
wire [RECV_WQE_ADDR_W-1:0] rq_va = rqwqe_reg[RECV_WQE_ADDR_LSB +: RECV_WQE_ADDR_W];
wire [RECV_WQE_LKEY_W-1:0] rq_lkey = rqwqe_reg[RECV_WQE_LKEY_LSB +: RECV_WQE_LKEY_W];

ram_snoop_capture #(
    .DATA_W(DATA_W),
    .RAM_ADDR_W(RAM_ADDR_W),
    .BASE(RQWQE_RAM)
) rqwqe_capture_inst (
    .clk(clk),
    .clear(state_reg == ST_RQ_FETCH),
    .enable(state_reg == ST_RQ_WAIT),
    .snoop_addr(ram_snoop_addr),
    .snoop_data(ram_snoop_data),
    .snoop_strb(ram_snoop_strb),
    .snoop_en(ram_snoop_en),
    .entry(rqwqe_reg)
);

// opcode classes (mp: its own opcodes, 0xC0-0xC6; roce_rx lets through no
// other value with the top bits set)
wire op_mp = op_reg[7:6] == 2'b11;
// mp: a path probe, answered (never placed), and the answer to ours
wire op_probe = op_reg == MP_OPCODE_PROBE;
wire op_probe_reply = op_reg == MP_OPCODE_PROBE_REPLY;
wire op_mp_write = op_reg == MP_OPCODE_WRITE || op_reg == MP_OPCODE_WRITE_LAST
    || op_reg == MP_OPCODE_WRITE_LAST_IMM;
// an ACK of this QP's transport (an ACK of the other is a transport drop)
wire op_ack = ctx_mp ? op_reg == MP_OPCODE_ACK || op_reg == MP_OPCODE_SELECTIVE_NAK || op_probe_reply
    : op_reg == OP_ACK;
wire op_is_write = (op_reg >= OP_WRITE_FIRST && op_reg <= OP_WRITE_ONLY_IMM) || op_mp_write;
wire op_is_send = SEND_EN != 0 && op_reg <= OP_SEND_ONLY_IMM;
wire op_first = op_reg == OP_SEND_FIRST || op_reg == OP_WRITE_FIRST;
wire op_middle = op_reg == OP_SEND_MIDDLE || op_reg == OP_WRITE_MIDDLE;
wire op_last = op_reg == OP_SEND_LAST || op_reg == OP_SEND_LAST_IMM
    || op_reg == OP_WRITE_LAST || op_reg == OP_WRITE_LAST_IMM;
wire op_only = op_reg == OP_SEND_ONLY || op_reg == OP_SEND_ONLY_IMM
    || op_reg == OP_WRITE_ONLY || op_reg == OP_WRITE_ONLY_IMM;
wire op_imm = op_reg == OP_SEND_LAST_IMM || op_reg == OP_SEND_ONLY_IMM
    || op_reg == OP_WRITE_LAST_IMM || op_reg == OP_WRITE_ONLY_IMM || op_reg == MP_OPCODE_WRITE_LAST_IMM;
// a response to a READ or atomic (READ RESPONSE FIRST..ONLY, ATOMIC
// ACKNOWLEDGE): bound for a requester, and rnic issues neither, so it
// answers nothing of ours: dropped and counted (rx_drop_psn), never NAKed
wire op_rd_resp = (op_reg >= 8'h0D && op_reg <= 8'h10) || op_reg == 8'h12;
// an RDMA READ request (READ_EN builds; else an invalid request, rc_message)
wire op_read = READ_EN != 0 && op_reg == OP_READ_REQ;
// CMP_SWAP or FETCH_ADD (ATOMIC_EN builds; else an invalid request)
wire op_atomic = ATOMIC_EN != 0 && (op_reg == OP_CMP_SWAP || op_reg == OP_FETCH_ADD);
// ... either: a job for read_reply, whose packets answer it
wire op_rdat = op_read || op_atomic;
// a RETH, or an mp data packet's MPETH (the same layout: address, key, length)
wire op_has_reth = op_reg == OP_WRITE_FIRST || op_reg == OP_WRITE_ONLY || op_reg == OP_WRITE_ONLY_IMM
    || op_mp_write || op_rdat;
// mp: MP WRITE LAST WITH IMMEDIATE's MCETH (the message length), from the AETH fields
wire [31:0] mceth_len = {aeth_syn_reg, aeth_msn_reg};
// a receive WQE is consumed by SEND (at its first packet) and WRITE_WITH_IMM (at its last)
wire op_needs_rq = ((op_is_send && (op_first || op_only)) || (op_is_write && op_imm)) && !mp_defer_reg;

wire [12:0] pmtu_bytes = 13'd128 << ctx_pmtu;
wire [23:0] psn_diff = psn_diff_reg;
wire qp_ok = qp_field_reg < {8'd0, NUM_QP16} && (ctx_state == QPS_RTR || ctx_state == QPS_RTS);
// (rq_pi, rq_ci: below)
wire [15:0] rq_pi;
wire [15:0] rq_ci;
wire rq_empty = rq_ci == rq_pi;
// ST_RQ_FETCH's test, from registers only (it feeds the read-descriptor
// mux): the index taken in ST_CHECK or ST_MP_PEND, and the producer index
// read a cycle earlier (qpn's in every state but ST_IDLE, and
// ST_RQ_FETCH follows a busy state). A doorbell is then seen a cycle
// later; the index only grows, so a ring found not empty stays so. A QP
// loaded since ST_CHECK (qp_stale) has a new ring, which that index does
// not belong to: its packet finds it empty (RNR), as it found the ring a
// reset emptied when the index was read in ST_RQ_FETCH itself.
reg [15:0] rq_pi_reg = 16'd0;
wire rq_fetch_empty = rqci_reg == rq_pi_reg || qp_stale;

// ACK / NAK buffer (one entry; a newer ACK of the same QP replaces a waiting one)
reg ack_valid_reg = 1'b0;
reg [QN_W-1:0] ack_qpn_reg = {QN_W{1'b0}};
reg [23:0] ack_psn_reg = 24'd0;
reg [7:0] ack_syn_reg = 8'd0;
reg [23:0] ack_msn_reg = 24'd0;
reg [47:0] ack_dmac_reg = 48'd0;
reg [31:0] ack_dip_reg = 32'd0;
reg [15:0] ack_sport_reg = 16'd0;
reg [23:0] ack_dqp_reg = 24'd0;
reg ack_mp_reg = 1'b0;
reg [MP_W-2:0] ack_lost_reg = {(MP_W-1){1'b0}};
// mp: the ACK timer's NAK (ST_TACK -> ST_TNAK_TOP -> ST_TNAK). The timer
// fires an ACK timer after a packet that got no ACK; if the QP's point is
// then a hole with packets placed above it, the QP's traffic has stalled
// with the hole open (no packet arrives a gap beyond it: a tail loss, or
// small messages), so every hole below the highest PSN placed is lost:
// one selective NAK names them all, instead of the requester's timeout
// and its go-back-N
reg [MP_W-1:0] tnak_bmp_reg = {MP_W{1'b0}};
reg [MP_LOG-1:0] tnak_top_reg = {MP_LOG{1'b0}};
wire [MP_W-1:0] tnak_rev;
genvar tb;
generate
    for (tb = 0; tb < MP_W; tb = tb + 1) begin : g_tnak_rev
        assign tnak_rev[tb] = tnak_bmp_reg[MP_W-1-tb];
    end
endgenerate
/* verilator lint_off UNUSEDSIGNAL */
wire tnak_any;                    // (the bitmap is not empty in ST_TNAK_TOP)
/* verilator lint_on UNUSEDSIGNAL */
wire [MP_LOG-1:0] tnak_top_rev;
priority_encoder #(.WIDTH(MP_W), .OUT_W(MP_LOG)) tnak_top_enc (
    .in(tnak_rev),
    .valid(tnak_any),
    .index(tnak_top_rev)
);
reg [MP_W-2:0] tnak_lost;
integer tk;
always @* begin
    for (tk = 0; tk < MP_W - 1; tk = tk + 1) begin
        tnak_lost[tk] = !tnak_bmp_reg[tk+1] && tk + 1 < tnak_top_reg;
    end
end

// READ_EN: an ACK or NAK of a QP whose READ jobs are still in read_reply
// is queued there, behind them, as an ACK job (an ACK of a later PSN that
// overtook a READ's responses would tell the requester they were lost);
// every other ACK takes the ACK slot and waits for nothing, so one QP's
// READs never hold up another QP's ACKs, nor the responder. The QP of each
// job handed over is kept by the job's number mod 8 (at most JOBS + 1 = 5
// are out: four in the ring, a last packet in its output register), and
// whether the QP at ctx_qpn has one is registered (rr_mine_reg: qpn's in
// every state but ST_IDLE; a job handed over in a cycle is not in it the
// next, when no ACK of that QP is queued: ST_READ is followed by ST_FINISH,
// which queues none for a READ, and an ACK job waits in rra_valid_reg,
// which counts, until handed over). The jobs of new requests (not ACK
// jobs, not duplicates) are counted too (rr_cnt_reg): a new READ or
// atomic beyond the QP's max_dest_rd_atomic is NAKed invalid request, as
// rxe does. A requester within its max_rd_atomic never meets it: it sends
// the next one only once an earlier one's last response reached it,
// i.e. once that job is out. Duplicates are not counted, nor limited
// (the ring bounds them): one may still be queued when the requester
// already has the first execution's answer.
reg [7:0] rr_jobs_in_reg = 8'd0;
reg [QN_W-1:0] rrq_qpn [0:7];
reg [7:0] rrq_new_reg = 8'd0;
reg [3:0] rr_cnt_reg = 4'd0;
reg [3:0] rr_cnt_next;
/* verilator lint_off UNUSEDSIGNAL */
wire [7:0] rr_out_now = rr_jobs_in_reg - rr_jobs_out;     // (at most 5)
/* verilator lint_on UNUSEDSIGNAL */
reg rra_valid_reg = 1'b0;               // an ACK job for read_reply
reg [QN_W-1:0] rra_qpn_reg = {QN_W{1'b0}};
reg [23:0] rra_psn_reg = 24'd0;
reg [7:0] rra_syn_reg = 8'd0;
reg [23:0] rra_msn_reg = 24'd0;
reg [47:0] rra_dmac_reg = 48'd0;
reg [31:0] rra_dip_reg = 32'd0;
reg [15:0] rra_sport_reg = 16'd0;
reg [23:0] rra_dqp_reg = 24'd0;
reg rr_mine_reg = 1'b0;
reg rr_mine_next;
integer rq;
initial begin
    for (rq = 0; rq < 8; rq = rq + 1) begin
        rrq_qpn[rq] = {QN_W{1'b0}};
    end
end
always @* begin
    rr_mine_next = rra_valid_reg && rra_qpn_reg == ctx_qpn;
    rr_cnt_next = 4'd0;
    for (rq = 0; rq < 8; rq = rq + 1) begin
        if ({1'b0, rq[2:0] - rr_jobs_out[2:0]} < rr_out_now[3:0] && rrq_qpn[rq] == ctx_qpn) begin
            rr_mine_next = 1'b1;
            rr_cnt_next = rr_cnt_next + {3'd0, rrq_new_reg[rq]};
        end
    end
end
wire rd_over = rr_cnt_reg >= {1'b0, ctx_max_dest_rd_atomic};

// READ_EN: a READ's payload reads and an atomic's write-back happen in
// read_reply, long after the responder checked the request against the MR
// table, and nothing checks them again. So an MR command (a deregistration:
// after it, no byte of the region may move) holds MMIO (mr_drain) until
// every request checked before it is answered: the jobs handed over by then
// (drain_to_reg, against rr_jobs_out, which counts a job once its last
// packet left, an atomic's after its write-back was issued) and the one
// the responder holds past its check, if any (drain_held_reg: counted once
// handed over, forgotten if refused). The driver reads the error status
// after every command, so ibv_dereg_mr returns only after them, as on
// NICs whose firmware fences a deregistration. (cfg_no_mr_check, which
// breaks the region checks on purpose, skips this too.)
reg drain_reg = 1'b0;
reg drain_held_reg = 1'b0;
reg [7:0] drain_to_reg = 8'd0;
wire rd_checked = READ_EN != 0 && op_rdat && (state_reg == ST_MR || state_reg == ST_EXEC
    || state_reg == ST_RQ_FETCH || state_reg == ST_READ);
wire rr_take_job = m_rr_valid && m_rr_ready && !rra_valid_reg;     // (ST_READ's)
wire [7:0] rr_in_now = rr_jobs_in_reg + {7'd0, m_rr_valid && m_rr_ready};
wire [7:0] drain_left = drain_to_reg - rr_jobs_out;
always @(posedge clk) begin
    if (mr_change && READ_EN != 0 && !cfg_no_mr_check) begin
        drain_reg <= 1'b1;
        drain_to_reg <= rr_in_now;
        drain_held_reg <= rd_checked && !rr_take_job;
    end else begin
        if (drain_held_reg && rr_take_job) begin
            drain_to_reg <= rr_in_now;
        end
        if (!rd_checked || rr_take_job) begin
            drain_held_reg <= 1'b0;
        end
        if (drain_reg && !drain_held_reg && (drain_left == 8'd0 || drain_left[7])) begin
            drain_reg <= 1'b0;
        end
    end
    if (rst) begin
        drain_reg <= 1'b0;
        drain_held_reg <= 1'b0;
    end
end
assign mr_drain = drain_reg;
wire rr_route = READ_EN != 0 && rr_mine_reg;
wire ack_go = m_ack_ready;
// (a waiting ACK is replaced by a newer one of its QP, and its addressing
// reloaded, only outside ST_IDLE: there ctx_* are the next packet's or the
// scan's QP, not qpn's)
wire ack_slot_free = !ack_valid_reg || ack_go
    || (state_reg != ST_IDLE && ack_qpn_reg == qpn && ack_syn_reg == ACK_SYNDROME);
// where qpn's next ACK goes has room
wire ack_room = rr_route ? !rra_valid_reg : ack_slot_free;

assign m_ack_dmac = ack_dmac_reg;
assign m_ack_dip = ack_dip_reg;
assign m_ack_udp_sport = ack_sport_reg;
assign m_ack_dest_qp = ack_dqp_reg;
assign m_ack_psn = ack_psn_reg;
assign m_ack_syndrome = ack_syn_reg;
assign m_ack_msn = ack_msn_reg;
assign m_ack_mp = ack_mp_reg;
assign m_ack_lost = ack_lost_reg;
assign m_ack_valid = ack_valid_reg;

// slot release: in order for slots whose payload went to the write engine,
// directly for packets that placed nothing
reg [RX_SLOT_W-1:0] free_fifo [0:7];
reg [2:0] free_wr_reg = 3'd0;
reg [2:0] free_rd_reg = 3'd0;
reg drop_free_reg = 1'b0;
reg [RX_SLOT_W-1:0] drop_free_slot_reg = {RX_SLOT_W{1'b0}};
wire fifo_full = free_wr_reg + 3'd1 == free_rd_reg;

assign m_free_valid = s_wr_status_valid || drop_free_reg;
assign m_free_slot = s_wr_status_valid ? free_fifo[free_rd_reg] : drop_free_slot_reg;

integer i;
initial begin
    for (i = 0; i < 8; i = i + 1) begin
        free_fifo[i] = {RX_SLOT_W{1'b0}};
    end
end

assign s_pkt_ready = state_reg == ST_IDLE && !drop_free_reg && !rfl_sweep;

// the QP context is read a cycle ahead: in ST_IDLE the QP the next state
// would work on (the packet's, else the scan's: qp_field_reg takes one of
// them when ST_IDLE is left, and nothing reads ctx_* in ST_IDLE), else the
// current one; so ctx_* hold qpn's context in every other state
assign ctx_qpn = state_reg != ST_IDLE ? qpn
    : s_pkt_valid && !drop_free_reg ? s_pkt_dest_qp[QN_W-1:0] : tscan_reg;

// the expected PSN (EPS above): written by a load, else by ST_FINISH's
// write-back (which waits while a load is on the port: fin_wait)
wire fin_wait = state_reg == ST_FINISH && !qp_stale && load_any;
wire eps_fsm_we;
wire [23:0] eps_fsm_psn;
wire eps_we = load_any || eps_fsm_we;
wire [QN_W-1:0] eps_wa = load_any ? load_qpn : qpn;
// (a load sets LV and, out of RESET, LC to the records' VB as they stand
// after this cycle's writes; the write-back writes them back as read)
wire rsp_vb_now, rqc_vb_now, rfl_vb_now, eps_ld_lc;
wire [EPS_W-1:0] eps_q;
reg [EPS_W-1:0] eps_wd;
always @* begin
    eps_wd = eps_q;
    eps_wd[EPS_PSN_LSB +: EPS_PSN_W] = eps_fsm_psn;
    if (load_any) begin
        eps_wd[EPS_PSN_LSB +: EPS_PSN_W] = load_psn;
        eps_wd[EPS_LV_LSB] = rsp_vb_now;
        eps_wd[EPS_LC_LSB] = load_reset ? rqc_vb_now : eps_ld_lc;
        eps_wd[EPS_LF_LSB] = rfl_vb_now;
    end
end
wire [EPS_PSN_W-1:0] eps_sel_q;
wire eps_scan_lc, eps_scan_lf;
wire eps_pin_lf;
wire [QN_W-1:0] tscan_next = tscan_reg == LAST_QP ? {QN_W{1'b0}} : tscan_reg + 1'b1;
// (ports in the order ctx, sel, scan, load)
ram_rec #(
    .DATA_W(EPS_W),
    .ADDR_W(QN_W),
    .DEPTH(NUM_QP),
    .N_RD(5),
    .RD_LSB({32'd0 + EPS_LF_LSB, 32'd0 + EPS_LC_LSB, 32'd0 + EPS_LC_LSB, 32'd0 + EPS_PSN_LSB, 32'd0}),
    .RD_W({32'd0 + EPS_LF_W, 32'd0 + EPS_LC_W, 32'd0 + EPS_LC_W + EPS_LF_W, 32'd0 + EPS_PSN_W, 32'd0 + EPS_W}),
    .REC_EN(REC_PORT),
    .REC_RD(1)
) eps_inst (
    .clk(clk),
    .wr_en(eps_we),
    .wr_addr(eps_wa),
    .wr_data(eps_wd),
    .rd_addr({pin_qpn, load_qpn_next, tscan_next, sel_qpn, ctx_qpn}),
    .rd_data({eps_pin_lf, eps_ld_lc, eps_scan_lf, eps_scan_lc, eps_sel_q, eps_q}),
    // record 1 of the record port
    .rec_rd_addr(recp_rd_addr),
    .rec_rd_data(recp_rd_data[recp_lsb(1) +: EPS_W]),
    .rec_wr_en(recp_wr_en[1]),
    .rec_wr_addr(recp_wr_addr),
    .rec_wr_data(recp_wr_data[recp_lsb(1) +: EPS_W]),
    .rec_wr_ready(recp_wr_ready[1])
);
// the flags (RFL above): read at ctx_qpn (qpn's in every state but
// ST_IDLE), at tscan_next (the scan's) and at load_qpn_next (VB, for a
// load's LF); written by the state machine's pending writes at pq_qn_reg,
// which is qpn (the read port holds its record: the writes come from
// states other than ST_IDLE), or by the sweep after a reset
wire rfl_sweep;
wire [QN_W-1:0] rfl_sweep_q;
wire rfl_fsm_we = nak_sent_pw_reg || owed_pw_reg || ack_owed_pw_reg;
wire rfl_we = rfl_fsm_we || rfl_sweep;
wire [QN_W-1:0] rfl_wa = rfl_sweep ? rfl_sweep_q : pq_qn_reg;
wire [RFL_W-1:0] rfl_q;
wire [RFL_W-1:0] rfl_scan_q;
wire rfl_ld_vb;
// qpn's flags as they read: zero while loaded and not written since
wire rfl_loaded = !(eps_q[EPS_LF_LSB] ^ rfl_q[RFL_VB_LSB]);
`ifdef FORMAL_BREAK_RFL_LOAD
// (formal's resp_rfl_load job: a load does not clear the flags)
wire [RFL_W-1:0] rfl_view = rfl_q;
`else
wire [RFL_W-1:0] rfl_view = rfl_loaded ? {RFL_W{1'b0}} : rfl_q;
`endif
reg [RFL_W-1:0] rfl_wd;
always @* begin
    rfl_wd = rfl_view;
    rfl_wd[RFL_VB_LSB] = !eps_q[EPS_LF_LSB];
    if (nak_sent_pw_reg) rfl_wd[RFL_NS_LSB] = nak_sent_pv_reg;
    if (owed_pw_reg) rfl_wd[RFL_OW_LSB] = owed_pv_reg;
    if (ack_owed_pw_reg) rfl_wd[RFL_AO_LSB] = ack_owed_pv_reg;
    if (ack_stamp_pw_reg) rfl_wd[RFL_ST_LSB +: RFL_ST_W] = epoch_reg;
    if (rfl_sweep) rfl_wd = {RFL_W{1'b0}};
end
// (ports in the order ctx, scan, load, pin)
wire [RFL_AO_LSB+RFL_AO_W-1:0] rfl_pin_q;
ram_rec #(
    .DATA_W(RFL_W),
    .ADDR_W(QN_W),
    .DEPTH(NUM_QP),
    .N_RD(4),
    .RD_LSB({32'd0, 32'd0 + RFL_VB_LSB, 32'd0, 32'd0}),
    .RD_W({32'd0 + RFL_AO_LSB + RFL_AO_W, 32'd0 + RFL_VB_W, 32'd0 + RFL_W, 32'd0 + RFL_W}),
    .REC_EN(REC_PORT),
    .REC_RD(1)
) rfl_inst (
    .clk(clk),
    .wr_en(rfl_we),
    .wr_addr(rfl_wa),
    .wr_data(rfl_wd),
    .rd_addr({pin_qpn, load_qpn_next, tscan_next, ctx_qpn}),
    .rd_data({rfl_pin_q, rfl_ld_vb, rfl_scan_q, rfl_q}),
    // record 4 of the record port
    .rec_rd_addr(recp_rd_addr),
    .rec_rd_data(recp_rd_data[recp_lsb(4) +: RFL_W]),
    .rec_wr_en(recp_wr_en[4]),
    .rec_wr_addr(recp_wr_addr),
    .rec_wr_data(recp_wr_data[recp_lsb(4) +: RFL_W]),
    .rec_wr_ready(recp_wr_ready[4])
);
// ---------------------------------------------------------------- pin
// Work of a QP held outside its records, which a move of its records
// would lose or which would write them during the move: the packet in
// work and its pending flag writes, the waiting ACK, READ and atomic jobs
// for read_reply, parked mp completions, and the flags OW and AO (a
// deferred completion owed, an ACK owed: the scan acts on them), read as
// the state machine reads them (zero while loaded). A cycle behind the
// RAMs' read: two behind pin_qpn.
reg [7:0] pin_rr;
always @* begin
    for (rq = 0; rq < 8; rq = rq + 1) begin
        pin_rr[rq] = {1'b0, rq[2:0] - rr_jobs_out[2:0]} < rr_out_now[3:0] && rrq_qpn[rq] == pin_qpn;
    end
end
wire pin_deferred;
reg pin_now_reg = 1'b0;
always @(posedge clk) begin
    pin_now_reg <= (state_reg != ST_IDLE && qpn == pin_qpn)
        || (rfl_fsm_we && pq_qn_reg == pin_qpn)
        || (ack_valid_reg && ack_qpn_reg == pin_qpn)
        || (rra_valid_reg && rra_qpn_reg == pin_qpn)
        || |pin_rr || pin_deferred;
    pin_busy <= pin_now_reg || ((eps_pin_lf ^ rfl_pin_q[RFL_VB_LSB])
        && (rfl_pin_q[RFL_OW_LSB] || rfl_pin_q[RFL_AO_LSB]));
    if (rst) begin
        pin_now_reg <= 1'b0;
        pin_busy <= 1'b0;
    end
end

// block RAM has no reset: a reset after a write sweeps the records to zero
// (the state machine takes no packet and the scan acts on nothing
// meanwhile; a load may come, and its LF then meets a zero VB: the flags
// read zero either way). A record written by the record port is a write
// too: else a reset would leave its flags set.
ram_reset_sweep #(.DEPTH(NUM_QP), .ADDR_W(QN_W)) rfl_sweep_inst (
    .clk(clk),
    .rst(rst),
    .wrote(rfl_fsm_we || (recp_wr_en[4] && recp_wr_ready[4])),
    .sweep(rfl_sweep),
    .sweep_addr(rfl_sweep_q)
);
assign rfl_vb_now = rfl_we && rfl_wa == load_qpn ? rfl_wd[RFL_VB_LSB] : rfl_ld_vb;
// qpn's flags (every state but ST_IDLE), with this cycle's write
wire [RFL_W-1:0] rfl_eff = rfl_fsm_we ? rfl_wd : rfl_view;
wire qp_ns = rfl_eff[RFL_NS_LSB];
wire qp_ow = rfl_eff[RFL_OW_LSB];
wire qp_ao = rfl_eff[RFL_AO_LSB];
// the scan's QP's, with this cycle's write. An ACK is due once two epochs
// have begun since its stamp: the stamp is neither this epoch nor the
// last. Each source's bit is worked out on its own and the write's
// chosen last (the write's word passes the ctx port's load test: a mux
// of the whole word before the compares was 17.3 LUT levels deep)
wire rfl_scan_fwd = rfl_fsm_we && pq_qn_reg == tscan_reg;
wire rfl_scan_loaded = !(eps_scan_lf ^ rfl_scan_q[RFL_VB_LSB]);
function stamp_old;
    input [RFL_ST_W-1:0] st;
`ifdef FORMAL_BREAK_RFL_STAMP
    // (formal's resp_rfl_stamp job: due an epoch early)
    stamp_old = st != epoch_reg;
`else
    stamp_old = st != epoch_reg && st != epoch_m1_reg;
`endif
endfunction
wire scan_st_old = stamp_old(rfl_scan_q[RFL_ST_LSB +: RFL_ST_W]);
wire qp_st_old = stamp_old(rfl_q[RFL_ST_LSB +: RFL_ST_W]);
wire scan_ow = rfl_scan_fwd ? rfl_wd[RFL_OW_LSB]
    : !rfl_scan_loaded && rfl_scan_q[RFL_OW_LSB];
// (the write's stamp: this epoch when it starts the timer, else the
// record's, whose AO reads zero when loaded)
wire tack_due = rfl_scan_fwd ? rfl_wd[RFL_AO_LSB] && !ack_stamp_pw_reg && qp_st_old
    : !rfl_scan_loaded && rfl_scan_q[RFL_AO_LSB] && scan_st_old;

// qpn's expected PSN in every state but ST_IDLE
wire [23:0] epsn_q = eps_q[EPS_PSN_LSB +: EPS_PSN_W];
assign sel_epsn = eps_sel_q;

// the receive ring's indices (RQP, RQC above): a doorbell's producer
// index, or the zero of a load out of RESET (never both in one cycle)
wire rqp_we = (rq_db_valid && rq_db_qpn < NUM_QP16) || load_reset;
wire [QN_W-1:0] rqp_wa = load_reset ? load_qpn : rq_db_qpn[QN_W-1:0];
wire [RQP_W-1:0] rqp_wd = load_reset ? {RQP_W{1'b0}} : rq_db_pi;
wire [RQP_W-1:0] rqp_q;
wire [RQP_W-1:0] rqp_scan_q;
ram_rec #(
    .DATA_W(RQP_W),
    .ADDR_W(QN_W),
    .DEPTH(NUM_QP),
    .N_RD(2),
    .RD_LSB({32'd0, 32'd0}),
    .RD_W({32'd0 + RQP_W, 32'd0 + RQP_W}),
    .REC_EN(REC_PORT)
) rqp_inst (
    .clk(clk),
    .wr_en(rqp_we),
    .wr_addr(rqp_wa),
    .wr_data(rqp_wd),
    .rd_addr({tscan_next, ctx_qpn}),
    .rd_data({rqp_scan_q, rqp_q}),
    // record 2 of the record port
    .rec_rd_addr(recp_rd_addr),
    .rec_rd_data(recp_rd_data[recp_lsb(2) +: RQP_W]),
    .rec_wr_en(recp_wr_en[2]),
    .rec_wr_addr(recp_wr_addr),
    .rec_wr_data(recp_wr_data[recp_lsb(2) +: RQP_W]),
    .rec_wr_ready(recp_wr_ready[2])
);
// written back with the record, by the message that took a receive WQE
// (or the deferred completion that did)
wire rqc_we;
wire [RQC_W-1:0] rqc_wd;
assign rqc_wd[RQC_CI_LSB +: RQC_CI_W] = rqci_reg + 16'd1;
assign rqc_wd[RQC_VB_LSB] = !eps_q[EPS_LC_LSB];
wire [RQC_W-1:0] rqc_q;
wire [RQC_W-1:0] rqc_scan_q;
wire rqc_ld_vb;
// (ports in the order ctx, scan, load)
ram_rec #(
    .DATA_W(RQC_W),
    .ADDR_W(QN_W),
    .DEPTH(NUM_QP),
    .N_RD(3),
    .RD_LSB({32'd0 + RQC_VB_LSB, 32'd0, 32'd0}),
    .RD_W({32'd0 + RQC_VB_W, 32'd0 + RQC_W, 32'd0 + RQC_W}),
    .REC_EN(REC_PORT)
) rqc_inst (
    .clk(clk),
    .wr_en(rqc_we),
    .wr_addr(qpn),
    .wr_data(rqc_wd),
    .rd_addr({load_qpn_next, tscan_next, ctx_qpn}),
    .rd_data({rqc_ld_vb, rqc_scan_q, rqc_q}),
    // record 3 of the record port
    .rec_rd_addr(recp_rd_addr),
    .rec_rd_data(recp_rd_data[recp_lsb(3) +: RQC_W]),
    .rec_wr_en(recp_wr_en[3]),
    .rec_wr_addr(recp_wr_addr),
    .rec_wr_data(recp_wr_data[recp_lsb(3) +: RQC_W]),
    .rec_wr_ready(recp_wr_ready[3])
);
assign rqc_vb_now = rqc_we && qpn == load_qpn ? rqc_wd[RQC_VB_LSB] : rqc_ld_vb;
// the ring emptied by a load out of RESET and not written since (qpn's and
// the scan's QP's)
wire rqc_clr_qn = !(eps_q[EPS_LC_LSB] ^ rqc_q[RQC_VB_LSB]);
wire rqc_clr_scan = !(eps_scan_lc ^ rqc_scan_q[RQC_VB_LSB]);
assign rq_pi = rqp_q[RQP_PI_LSB +: RQP_PI_W];
always @(posedge clk) begin
    rq_pi_reg <= rq_pi;
end
assign rq_ci = rqc_clr_qn ? 16'd0 : rqc_q[RQC_CI_LSB +: RQC_CI_W];
wire [15:0] scan_pi = rqp_scan_q[RQP_PI_LSB +: RQP_PI_W];
wire [15:0] scan_ci = rqc_clr_scan ? 16'd0 : rqc_scan_q[RQC_CI_LSB +: RQC_CI_W];

// the record: read at ctx_qpn (so it is qpn's in every state but ST_IDLE),
// written back in ST_FINISH, in the cycle the FSM's write-back takes place
wire fin_mp_go = !(ack_req_reg || mp_adv > 1 || mp_nak) || ack_room;
wire fin_rc_go = !ack_req_reg || op_rdat || ack_room;
wire rec_wr = state_reg == ST_FINISH && !qp_stale && !fin_wait
    && (mp_pend_pass_reg || (ctx_mp ? fin_mp_go : fin_rc_go));
// ... and in ST_TNAK, which writes the recovery span of its NAK alone
wire tnak_wr = state_reg == ST_TNAK && !qp_stale && ack_room;
wire rec_we = rec_wr || tnak_wr;
// mp: the new point is a hole with packets placed above it
wire mp_hole_open = bmp_next != {MP_W{1'b0}};
assign eps_fsm_we = rec_wr && !mp_pend_pass_reg;
// the deferred completions: ST_FINISH parks one for a WRITE_WITH_IMM above
// the point and frees it once that completion is written; a load frees
// its QP's
mp_deferred #(.NUM_QP(NUM_QP), .QN_W(QN_W), .MP_PEND(MP_PEND), .MP_WIMM(MP_WIMM)) mp_deferred_inst (
    .clk(clk),
    .rst(rst),
    .avail(pslot_avail),
    .qpn(qpn),
    .park(rec_wr && !mp_pend_pass_reg && ctx_mp && mp_defer_reg),
    .park_psn(psn_reg),
    .park_imm(imm_reg),
    .park_len(mceth_len),
    .done(rec_wr && mp_pend_pass_reg),
    .drop(load_any),
    .drop_qpn(load_qpn),
    .pin_qpn(pin_qpn),
    .pin(pin_deferred),
    .pend(pend_any),
    .full(pend_full),
    .psn(pend_psn),
    .imm(pend_imm),
    .len(pend_len)
);
assign eps_fsm_psn = ctx_mp ? mp_point_new : psn_reg + (op_read ? rd_npkts_reg : 24'd1);
assign rqc_we = rec_wr && (mp_pend_pass_reg || op_needs_rq);
wire [RSP_W-1:0] rec_q;
// loaded since the last write-back: no message, nothing placed
wire rec_loaded = !(eps_q[EPS_LV_LSB] ^ rec_q[RSP_VB_LSB]);
// ... and registered for the write-back, which comes two or more cycles
// after its QP's record settled (as msn_reg below): keeps the EPS RAM's
// output and the XOR off the RSP RAM's data input (the 256-QP build's
// critical path, 21.0 ns; f_loaded_reg)
reg rec_loaded_reg = 1'b0;
always @(posedge clk) begin
    rec_loaded_reg <= rec_loaded;
end
function [RSP_VIEW_BITS-1:0] record_as_read(input [RSP_W-1:0] q, input loaded);
    begin
        record_as_read = {RSP_VIEW_BITS{1'b0}};
        record_as_read[RSP_W-1:0] = q;
        if (loaded) begin
            record_as_read[RSP_BMP_LSB +: RSP_BMP_W] = {RSP_BMP_W{1'b0}};
            record_as_read[RSP_SPAN_LSB +: RSP_SPAN_W] = {RSP_SPAN_W{1'b0}};
            record_as_read[RSP_MSN_LSB +: RSP_MSN_W] = {RSP_MSN_W{1'b0}};
            record_as_read[RSP_MSG_LSB +: RSP_MSG_W] = {RSP_MSG_W{1'b0}};
        end
    end
endfunction
/* verilator lint_off UNUSEDSIGNAL */
wire [RSP_VIEW_BITS-1:0] rec_rd = record_as_read(rec_q, rec_loaded);   // (VB: the write-back's)
/* verilator lint_on UNUSEDSIGNAL */
wire [MP_W-1:0] rd_bmp = rec_rd[RSP_BMP_LSB +: RSP_BMP_W];

// mp: the packet against the point and the bitmap, stage by stage (the
// stages' registers are the window's; rc QPs pass through them unused)
mp_window #(.MP_W(MP_W), .MP_NAK_GAP(MP_NAK_GAP)) mp_window_inst (
    .clk(clk),
    .load(state_reg == ST_LOAD),
    .load_bmp(rd_bmp),
    .load_span(rec_rd[RSP_SPAN_LSB +: RSP_SPAN_W]),
    .psn_diff(psn_diff),
    .point(epsn_reg),
    .wshift(ctx_mp_wshift),
    .dup(mp_dup),
    .beyond(mp_beyond),
    .check(state_reg == ST_CHECK),
    .exec(state_reg == ST_EXEC),
    .fetch(state_reg == ST_RQ_FETCH),
    .nak_sent(qp_ns),
    .pend_v(pend_any),
    .pend_psn(pend_psn),
    .adv(mp_adv),
    .point_new(mp_point_new),
    .bmp_next(bmp_next),
    .nak(mp_nak),
    .lost(mp_lost),
    .span_next(mp_span_next),
    .recovered(mp_recovered),
    .pend_due(mp_pend_due)
);
wire [23:0] rd_msn = rec_rd[RSP_MSN_LSB +: RSP_MSN_W];
// ... and registered, with its successor, for ST_FINISH: the write-back
// (rec_wr) comes two or more cycles after its QP's record settled
// (ST_FINISH is never the first state after ST_IDLE, nor after a
// write-back of the same QP), and a load of the QP meanwhile makes the
// packet stale (no write-back). Keeps the clear bit's read-through and
// the 24-bit increment off the record RAM's data input (f_msn_reg).
reg [23:0] msn_reg = 24'd0;
reg [23:0] msn_p1_reg = 24'd1;
always @(posedge clk) begin
    msn_reg <= rd_msn;
    msn_p1_reg <= rd_msn + 24'd1;
end
// a duplicate READ that may not be answered (ST_EXEC): a payload, more
// than 2^31 bytes, or the region's or the QP's REMOTE_READ missing
// (a duplicate atomic: one whose replay record is gone)
wire rd_dup_bad = op_atomic ? !at_hit_reg
    : plen_reg != 13'd0 || (reth_len_reg[31] && reth_len_reg[30:0] != 31'd0)
    || (reth_len_reg != 32'd0 && !(mr_ok_reg && ctx_remote_read) && !cfg_no_mr_check);
// a READ's packets: 1 for zero length, else (len - 1) / PMTU + 1
// (PMTU 256 << (ctx_pmtu - 1); at most 2^23 for 2^31 bytes)
/* verilator lint_off UNUSEDSIGNAL */
wire [31:0] rd_len_sh = rd_len_m1_reg >> (5'd7 + {2'd0, ctx_pmtu});   // (below 2^23)
/* verilator lint_on UNUSEDSIGNAL */
always @(posedge clk) begin
    rd_len_m1_reg <= reth_len_reg - 32'd1;
    rd_npkts_reg <= reth_len_reg == 32'd0 ? 24'd1 : rd_len_sh[23:0] + 24'd1;
end
// an ACK job goes first: the READ in ST_READ came after it
assign m_rr_psn = rra_valid_reg ? rra_psn_reg : psn_reg;
assign m_rr_msn = rra_valid_reg ? rra_msn_reg : rd_dup_reg ? msn_reg : msn_p1_reg;
assign m_rr_bus = mr_bus_reg;
assign m_rr_len = op_atomic && rd_dup_reg ? 32'd0 : reth_len_reg;
assign m_rr_pmtu_log = 4'd7 + {1'b0, ctx_pmtu};
assign m_rr_dmac = rra_valid_reg ? rra_dmac_reg : ctx_dmac;
assign m_rr_dip = rra_valid_reg ? rra_dip_reg : ctx_dip;
assign m_rr_udp_sport = rra_valid_reg ? rra_sport_reg : ctx_udp_sport;
assign m_rr_dest_qp = rra_valid_reg ? rra_dqp_reg : ctx_dest_qpn;
assign m_rr_ack = rra_valid_reg;
assign m_rr_syndrome = rra_syn_reg;
assign m_rr_atomic = rra_valid_reg || !op_atomic ? 2'd0 : rd_dup_reg ? 2'd3
    : op_reg == OP_CMP_SWAP ? 2'd1 : 2'd2;
assign m_rr_opa = rd_dup_reg ? at_orig_reg : op_reg == OP_CMP_SWAP ? atom_cmp_reg : atom_swap_reg;
assign m_rr_opb = atom_swap_reg;
assign m_rr_qpn = qpn;
// a READ's job waits until every payload write handed to the write engine
// before it has been issued (its status came back): its payload reads then
// cannot pass them (reads push posted writes), so a READ sees the WRITEs
// received before it
wire rr_wr_issued = free_wr_reg == free_rd_reg;
assign m_rr_valid = rra_valid_reg || (state_reg == ST_READ && !qp_stale && rr_wr_issued);
wire [63:0] rd_wrid = SEND_EN != 0 ? rec_rd[RSP_WRID_LSB +: RSP_WRID_W] : 64'd0;
wire [31:0] rd_key = RC_EN != 0 ? rec_rd[RSP_KEY_LSB +: RSP_KEY_W] : 32'd0;
wire [63:0] rd_cursor = RC_EN != 0 ? rec_rd[RSP_CURSOR_LSB +: RSP_CURSOR_W] : 64'd0;
wire [31:0] rd_remain = RC_EN != 0 ? rec_rd[RSP_REMAIN_LSB +: RSP_REMAIN_W] : 32'd0;
wire [31:0] rd_msglen = RC_EN != 0 ? rec_rd[RSP_MSGLEN_LSB +: RSP_MSGLEN_W] : 32'd0;
wire [1:0] rd_msg = RC_EN != 0 ? rec_rd[RSP_MSG_LSB +: RSP_MSG_W] : 2'd0;

// rc: the packet's checks against the message its QP is in (RSP_MSG;
// ST_EXEC); ST_FINISH's write-back of an rc packet moves the message on. An
// mp-only build has no rc QP (qp_context makes every QP mp) and no message
// state.
wire rc_inv_req, rc_rem_access, rc_msg_set;
wire [1:0] rc_msg_new;
generate
    if (RC_EN != 0) begin : g_rc
        rc_message rc_message_inst (
            .msg(rd_msg),
            .op_is_write(op_is_write),
            .op_is_send(op_is_send),
            .op_is_read(op_rdat),
            .op_first(op_first),
            .op_middle(op_middle),
            .op_last(op_last),
            .op_only(op_only),
            .op_has_reth(op_has_reth),
            .plen(plen_reg),
            .pmtu_bytes(pmtu_bytes),
            .reth_len(reth_len_reg),
            .remain(rd_remain),
            .access_ok((mr_ok_reg && (op_atomic ? ctx_remote_atomic : op_read ? ctx_remote_read
                : ctx_remote_write)) || cfg_no_mr_check),
            .inv_req(rc_inv_req),
            .rem_access(rc_rem_access),
            .msg_set(rc_msg_set),
            .msg_new(rc_msg_new)
        );
    end else begin : g_no_rc
        assign rc_inv_req = 1'b0;
        assign rc_rem_access = 1'b0;
        assign rc_msg_set = 1'b0;
        assign rc_msg_new = 2'd0;
        /* verilator lint_off UNUSEDSIGNAL */
        wire [3:0] rc_only = {op_middle, rd_msg, ctx_remote_atomic};   // only the rc checks read them
        /* verilator lint_on UNUSEDSIGNAL */
    end
endgenerate
// the write-back: what ST_FINISH's branch changes, the rest as read
/* verilator lint_off UNUSEDSIGNAL */
reg [RSP_VIEW_BITS-1:0] rec_in;     // (the fields of a knob that is off are not stored)
/* verilator lint_on UNUSEDSIGNAL */
always @* begin
    rec_in = record_as_read(rec_q, rec_loaded_reg);
    if (state_reg != ST_TNAK) begin
        // (the write-back: the record reads as written from now on)
        rec_in[RSP_VB_LSB] = !eps_q[EPS_LV_LSB];
    end
    if (SEND_EN != 0 && state_reg != ST_TNAK) begin
        rec_in[RSP_WRID_LSB +: RSP_WRID_W] = wrid_reg;
    end
    if (state_reg == ST_TNAK) begin
        // the timer's NAK: its span, up to the highest PSN placed
        rec_in[RSP_SPAN_LSB +: RSP_SPAN_W] = {1'b0, tnak_top_reg};
    end else if (mp_pend_pass_reg) begin
        rec_in[RSP_MSN_LSB +: RSP_MSN_W] = msn_p1_reg;
    end else if (ctx_mp) begin
        rec_in[RSP_BMP_LSB +: RSP_BMP_W] = bmp_next;
        rec_in[RSP_SPAN_LSB +: RSP_SPAN_W] = mp_span_next;
        rec_in[RSP_MSN_LSB +: RSP_MSN_W] = completes_reg ? msn_p1_reg : msn_reg;
    end else begin
        rec_in[RSP_MSN_LSB +: RSP_MSN_W] = op_last || op_only || op_rdat ? msn_p1_reg : msn_reg;
        rec_in[RSP_KEY_LSB +: RSP_KEY_W] = key_reg;
        rec_in[RSP_CURSOR_LSB +: RSP_CURSOR_W] = cursor_reg + {51'd0, plen_reg};
        rec_in[RSP_REMAIN_LSB +: RSP_REMAIN_W] = remain_reg - {19'd0, plen_reg};
        rec_in[RSP_MSGLEN_LSB +: RSP_MSGLEN_W] = msglen_reg + {19'd0, plen_reg};
        if (rc_msg_set) rec_in[RSP_MSG_LSB +: RSP_MSG_W] = rc_msg_new;
    end
end

wire rsp_ld_vb;
// (ports in the order ctx, load)
ram_rec #(
    .DATA_W(RSP_W),
    .ADDR_W(QN_W),
    .DEPTH(NUM_QP),
    .N_RD(2),
    .RD_LSB({32'd0 + RSP_VB_LSB, 32'd0}),
    .RD_W({32'd0 + RSP_VB_W, 32'd0 + RSP_W}),
    .REC_EN(REC_PORT)
) rec_inst (
    .clk(clk),
    .wr_en(rec_we),
    .wr_addr(qpn),
    .wr_data(rec_in[RSP_W-1:0]),
    .rd_addr({load_qpn_next, ctx_qpn}),
    .rd_data({rsp_ld_vb, rec_q}),
    // record 0 of the record port
    .rec_rd_addr(recp_rd_addr),
    .rec_rd_data(recp_rd_data[recp_lsb(0) +: RSP_W]),
    .rec_wr_en(recp_wr_en[0]),
    .rec_wr_addr(recp_wr_addr),
    .rec_wr_data(recp_wr_data[recp_lsb(0) +: RSP_W]),
    .rec_wr_ready(recp_wr_ready[0])
);
assign rsp_vb_now = rec_we && qpn == load_qpn ? rec_in[RSP_VB_LSB] : rsp_ld_vb;
// the fatal NAKs move the QP to ERR in the one cycle they are queued: a
// NAK that waits for room (an ACK job behind the QP's READ responses,
// thousands of cycles) must not keep overriding a RESET the host writes
// meanwhile
assign set_err = state_reg == ST_DROP && ack_room && !qp_stale
    && (nak_reg == NAK_INV_REQ || nak_reg == NAK_REM_ACCESS || nak_reg == NAK_REM_OP);
assign set_err_qpn = qpn;

// MR checks: RETH (remote write) or receive buffer (local write)
assign mr_key = op_has_reth ? reth_rkey_reg : rq_lkey;
assign mr_va = op_has_reth ? reth_va_reg : rq_va;
assign mr_len = op_has_reth ? (ctx_mp ? {19'd0, plen_reg} : reth_len_reg) : rq_len;
assign mr_pd = ctx_pd;
// (ibv_access_flags: LOCAL_WRITE 1, REMOTE_WRITE 2, REMOTE_READ 4, REMOTE_ATOMIC 8)
assign mr_access = op_atomic ? 4'b1000 : op_read ? 4'b0100 : op_has_reth ? 4'b0010 : 4'b0001;

assign m_rd_desc_pcie_addr = ctx_rq_base
    + ({48'd0, rqci_reg & ((16'd1 << ctx_rq_log) - 16'd1)} << $clog2(RECV_WQE_BYTES));
assign m_rd_desc_ram_addr = RQWQE_RAM;
assign m_rd_desc_len = RECV_WQE_BYTES;
assign m_rd_desc_id = ID_TAG;
assign m_rd_desc_valid = state_reg == ST_RQ_FETCH && nak_reg == 8'd0 && op_needs_rq && !rq_fetch_empty;

assign m_wr_desc_pcie_addr = cursor_reg;
assign m_wr_desc_ram_addr = at_place_reg ? ATOM_RQ_RAM
    : RX_RAM_BASE + {{(RAM_ADDR_W-RX_ADDR_W){1'b0}}, paddr_reg};
assign m_wr_desc_len = {{(LEN_W-13){1'b0}}, plen_reg};
assign m_wr_desc_id = ID_TAG;
assign m_wr_desc_valid = state_reg == ST_PAYLOAD && plen_reg != 0 && !fifo_full && guard_ok_reg
    && guard_fresh_reg;
assign m_wr_desc_key = key_reg;
assign m_wr_desc_access = op_is_send || rresp_reg ? 4'b0001 : 4'b0010;

// CQE of a receive completion: the bytes below the owner byte, which the
// CQE writer adds
wire [31:0] cqe_byte_len = msglen_reg + {19'd0, plen_reg};
reg [CQE_OWNER_LSB-1:0] recv_cqe;
always @* begin
    recv_cqe = {CQE_OWNER_LSB{1'b0}};
    recv_cqe[CQE_WR_ID_LSB +: CQE_WR_ID_W] = wrid_reg;
    recv_cqe[CQE_BYTE_LEN_LSB +: CQE_BYTE_LEN_W] = cqe_byte_len;
    // the entry holds the immediate in wire order: the most significant byte first
    recv_cqe[CQE_IMM_LSB +: CQE_IMM_W] = op_imm
        ? {imm_reg[7:0], imm_reg[15:8], imm_reg[23:16], imm_reg[31:24]} : 32'd0;
    recv_cqe[CQE_QN_LSB +: CQE_QN_W] = {{(CQE_QN_W-QN_W){1'b0}}, qpn};
    recv_cqe[CQE_OPCODE_LSB +: CQE_OPCODE_W] = op_is_write ? WC_OPCODE_RECV_RDMA_WITH_IMM : WC_OPCODE_RECV;
    recv_cqe[CQE_STATUS_LSB +: CQE_STATUS_W] = WC_STATUS_SUCCESS;
    recv_cqe[CQE_WQE_COUNTER_LSB +: CQE_WQE_COUNTER_W] = rqci_reg;
    recv_cqe[CQE_SRC_QP_LSB +: CQE_SRC_QP_W] = {{(CQE_SRC_QP_W-24){1'b0}}, ctx_dest_qpn};
    recv_cqe[CQE_FLAGS_WITH_IMM_LSB] = op_imm;
    recv_cqe[CQE_FLAGS_RECV_LSB] = 1'b1;
end
assign m_cqe_cqn = ctx_rcq;
assign m_cqe_data = recv_cqe;
assign m_cqe_valid = state_reg == ST_CQE || state_reg == ST_EARLY_CQE;

assign m_rx_ack_valid = rx_ack_pass || rx_ack_own;
assign m_rx_ack_qpn = qpn;
assign m_rx_ack_psn = state_reg == ST_RASK ? rp_ask_psn_reg : rx_ack_own ? psn_reg
    : ack_cov ? rt_cov_next : psn_reg;
assign m_rx_ack_syndrome = state_reg == ST_RASK ? NAK_PSN : rx_ack_own ? ACK_SYNDROME
    : ack_cov ? NAK_PSN : op_probe_reply ? ACK_SYN_PROBE_REPLY
    : aeth_syn_reg == ACK_SYN_PROBE_REPLY ? 8'h41 : aeth_syn_reg;
assign m_rx_ack_msn = aeth_msn_reg;
// (roce_rx lays an MP SELECTIVE NAK out as a RETH and ImmDt: the AETH, then
// the bitmap; this requester never has PSNs beyond its window in flight)
/* verilator lint_off UNUSEDSIGNAL */
wire [127:0] rx_snak = {reth_va_reg[31:0], reth_rkey_reg, reth_len_reg, imm_reg};
/* verilator lint_on UNUSEDSIGNAL */
assign m_rx_ack_lost = op_reg == MP_OPCODE_SELECTIVE_NAK ? rx_snak[MP_W-2:0] : {(MP_W-1){1'b0}};

reg stat_drop_qp_reg = 1'b0;
reg stat_drop_psn_reg = 1'b0;
reg stat_drop_xport_reg = 1'b0;
reg stat_drop_wimm_reg = 1'b0;
reg stat_nak_reg = 1'b0;
reg stat_rd_over_reg = 1'b0;
reg stat_guard_reg = 1'b0;
assign stat_guard = stat_guard_reg;
reg stat_rd_resp_reg = 1'b0;
assign stat_rd_resp = stat_rd_resp_reg;

// ---------------------------------------------------------------- READ responses
assign rt_lk_qpn = qpn;
assign rt_lk_psn = psn_reg;
// (a READ RESPONSE's AETH, if any, is an ACK: it covers its own PSN)
assign rt_lk_nak = aeth_syn_reg[6:5] != 2'b00 && !op_rd_resp;
// an ACK or NAK that covers a PSN of one of our READs whose response is
// still missing: the completer gets a sequence NAK of that PSN instead
// (once; a second such ACK is dropped), or the READ would be retired
// without its data
wire ack_cov = READ_EN != 0 && !ctx_mp && rt_cov;
wire rx_ack_pass = state_reg == ST_CHECK && op_ack && qp_ok && !(ack_cov && rt_cov_asked);
wire rx_ack_own = (state_reg == ST_RASK || state_reg == ST_REARLY
    || (state_reg == ST_RDONE && !early_done_reg)) && rx_ack_room && !qp_stale;
wire [31:0] rp_rem = rp_len_reg - rp_off_reg;
// (an atomic's entry: one ATOMIC ACKNOWLEDGE, its value in the header)
wire rp_fits = rp_atom_reg ? op_reg == 8'h12 && plen_reg == 13'd0
    : rp_last_reg ? (op_reg == 8'h0F || op_reg == 8'h10) && {19'd0, plen_reg} == rp_rem
    : (op_reg == 8'h0D || op_reg == 8'h0E) && plen_reg == pmtu_bytes;
// an ATOMIC ACKNOWLEDGE's original value: its AtomicAckETH, which roce_rx
// hands over as the RETH's VA low word and R_Key; little-endian in the
// RAM, as the host keeps a u64
localparam AT_LANE = ATOM_RQ_RAM[$clog2(DATA_W/8)-1:0];
wire [63:0] at_orig = {reth_va_reg[31:0], reth_rkey_reg};
assign m_at_ram_wr_addr = ATOM_RQ_RAM[RAM_ADDR_W-1:$clog2(DATA_W/8)];
assign m_at_ram_wr_data = {{(DATA_W-64){1'b0}}, at_orig} << (8 * AT_LANE);
assign m_at_ram_wr_strb = {{(DATA_W/8-8){1'b0}}, 8'hFF} << AT_LANE;
// (the word is rewritten only once every write handed over is issued: the
// write engine may not have read the last one's yet)
assign m_at_ram_wr_en = state_reg == ST_RATOM && rr_wr_issued;
assign rt_adv_valid = state_reg == ST_RDONE && !qp_stale && (early_done_reg || rx_ack_room);
assign rt_adv_idx = rp_idx_reg;
assign rt_adv_psn = psn_reg;
assign rt_ask_valid = (state_reg == ST_CHECK && op_ack && qp_ok && ack_cov && !rt_cov_asked)
    || (state_reg == ST_RASK && rx_ack_room && !qp_stale);
assign rt_ask_idx = state_reg == ST_RASK ? rp_ask_idx_reg : rt_cov_idx;
assign rt_ask_psn = state_reg == ST_RASK ? rp_ask_psn_reg : rt_cov_next;
assign stat_drop_qp = stat_drop_qp_reg;
assign stat_drop_psn = stat_drop_psn_reg;
assign stat_drop_xport = stat_drop_xport_reg;
assign stat_drop_wimm = stat_drop_wimm_reg;
assign stat_nak = stat_nak_reg;
assign stat_rd_over = stat_rd_over_reg;

// queue an ACK or NAK for the current QP (caller checks ack_room): behind
// its READs as an ACK job, else in the ACK slot
task queue_ack;
    input [23:0] psn;
    input [7:0] syn;
    input [23:0] msn;
    begin
        if (rr_route) begin
            rra_valid_reg <= 1'b1;
            rra_qpn_reg <= qpn;
            rra_psn_reg <= psn;
            rra_syn_reg <= syn;
            rra_msn_reg <= msn;
            rra_dmac_reg <= ctx_dmac;
            rra_dip_reg <= ctx_dip;
            rra_sport_reg <= ctx_udp_sport;
            rra_dqp_reg <= ctx_dest_qpn;
        end else begin
            ack_valid_reg <= 1'b1;
            ack_psn_reg <= psn;
            ack_syn_reg <= syn;
            ack_msn_reg <= msn;
        end
    end
endtask

// Every ACK is queued for qpn, so its QP and addressing (the current QP's
// context) are loaded whenever the slot may take an ACK, not only when
// one is queued: the queueing decision, behind the QP context's block RAM
// and the mp window, was the enable of these 121 + QN_W flops and the
// critical path of the 128-bit place and route at 0c09195. While the slot
// holds an ACK that is not being taken they hold; otherwise what they
// take is either the ACK queued in the same cycle or never sent. (A waiting ACK
// replaced by a newer one of its QP is the one case where they load
// without a queue_ack: the same QP, so the same fields, unless the host
// reloaded the QP meanwhile; the ACK then carries its new addressing.)
always @(posedge clk) begin
    if (ack_slot_free) begin
        ack_qpn_reg <= qpn;
        ack_dmac_reg <= ctx_dmac;
        ack_dip_reg <= ctx_dip;
        ack_sport_reg <= state_reg == ST_CHECK && op_probe ? sport_reg : ctx_udp_sport;
        ack_dqp_reg <= ctx_dest_qpn;
        ack_mp_reg <= ctx_mp;
    end
end

always @(posedge clk) begin
    pq_qn_reg <= qpn;
    nak_sent_pw_reg <= 1'b0;
    owed_pw_reg <= 1'b0;
    ack_owed_pw_reg <= 1'b0;
    ack_stamp_pw_reg <= 1'b0;
    stat_drop_qp_reg <= 1'b0;
    stat_drop_psn_reg <= 1'b0;
    stat_drop_xport_reg <= 1'b0;
    stat_drop_wimm_reg <= 1'b0;
    stat_nak_reg <= 1'b0;
    stat_rd_over_reg <= 1'b0;
    stat_guard_reg <= 1'b0;
    stat_rd_resp_reg <= 1'b0;
    if (!s_wr_status_valid) begin
        drop_free_reg <= 1'b0;      // else the write engine's release took the port this cycle
    end

    rr_mine_reg <= rr_mine_next;
    rr_cnt_reg <= rr_cnt_next;
    if (m_rr_valid && m_rr_ready) begin
        rr_jobs_in_reg <= rr_jobs_in_reg + 8'd1;
        rrq_qpn[rr_jobs_in_reg[2:0]] <= rra_valid_reg ? rra_qpn_reg : qpn;
        rrq_new_reg[rr_jobs_in_reg[2:0]] <= !rra_valid_reg && !rd_dup_reg;
        rra_valid_reg <= 1'b0;
    end
    if (m_ack_valid && m_ack_ready) begin
        ack_valid_reg <= 1'b0;
    end

    if (s_wr_status_valid) begin
        free_rd_reg <= free_rd_reg + 3'd1;
    end

    now_reg <= now_reg == ACK_EPOCH ? 16'd0 : now_reg + 16'd1;
    if (now_reg == ACK_EPOCH) begin
        epoch_reg <= epoch_reg + 1'b1;
        epoch_m1_reg <= epoch_reg;
    end
    tscan_reg <= tscan_reg == LAST_QP ? {QN_W{1'b0}} : tscan_reg + 1'b1;

    if (load_any && load_qpn == qpn && state_reg != ST_IDLE) begin
        qp_stale_reg <= 1'b1;
    end

    case (state_reg)
        ST_IDLE: begin
            qp_stale_reg <= 1'b0;
            rresp_reg <= 1'b0;
            at_place_reg <= 1'b0;
            // nothing starts while a reset's sweep clears RFL (a packet, the
            // ACK timer and the owed scan all read it)
            if (!rfl_sweep) begin
                if (s_pkt_valid && !drop_free_reg) begin
                    op_reg <= s_pkt_opcode;
                    ack_req_reg <= s_pkt_ack_req;
                    qp_field_reg <= s_pkt_dest_qp;
                    psn_reg <= s_pkt_psn;
                    sport_reg <= s_pkt_udp_sport;
                    reth_va_reg <= s_pkt_reth_va;
                    reth_rkey_reg <= s_pkt_reth_rkey;
                    reth_len_reg <= ATOMIC_EN != 0 && (s_pkt_opcode == OP_CMP_SWAP
                        || s_pkt_opcode == OP_FETCH_ADD) ? 32'd8 : s_pkt_reth_len;
                    atom_swap_reg <= ATOMIC_EN != 0 ? {s_pkt_reth_len, s_pkt_imm} : 64'd0;
                    atom_cmp_reg <= ATOMIC_EN != 0 ? {s_pkt_aeth_syndrome, s_pkt_aeth_msn, s_pkt_cmp_lo} : 64'd0;
                    imm_reg <= s_pkt_imm;
                    aeth_syn_reg <= s_pkt_aeth_syndrome;
                    aeth_msn_reg <= s_pkt_aeth_msn;
                    paddr_reg <= s_pkt_payload_addr;
                    plen_reg <= s_pkt_payload_len;
                    slot_reg <= s_pkt_slot;
                    mp_defer_reg <= 1'b0;
                    state_reg <= ST_LOAD;
                end else if (tack_due) begin
                    qp_field_reg <= {{(24-QN_W){1'b0}}, tscan_reg};
                    state_reg <= ST_TACK;
                end else if (scan_ow && scan_ci != scan_pi) begin
                    // a receive WQE arrived for an owed mp completion
                    qp_field_reg <= {{(24-QN_W){1'b0}}, tscan_reg};
                    state_reg <= ST_MP_PEND;
                end
            end
        end
        ST_TNAK_TOP: begin
            tnak_top_reg <= ~tnak_top_rev;          // MP_W - 1 - index
            state_reg <= ST_TNAK;
        end
        ST_TNAK: begin
            // (the record's span: tnak_wr)
            if (qp_stale) begin
                state_reg <= ST_IDLE;
            end else if (ack_room) begin
                queue_ack(epsn_q, NAK_PSN, rd_msn);
                ack_lost_reg <= tnak_lost;
                stat_nak_reg <= 1'b1;
                nak_sent_pw_reg <= 1'b1; nak_sent_pv_reg <= 1'b1;
                ack_owed_pw_reg <= 1'b1; ack_owed_pv_reg <= 1'b0;
                state_reg <= ST_IDLE;
            end
        end
        ST_LOAD: begin
            epsn_reg <= epsn_q;
            psn_diff_reg <= psn_reg - epsn_q;
            state_reg <= ST_CHECK;
        end
        ST_TACK: begin
            // the ACK timer: acknowledge what arrived without an AckReq
            // (mp, with the point a hole: NAK the holes, ST_TNAK)
            tnak_bmp_reg <= rd_bmp;
            if (!qp_ok) begin
                ack_owed_pw_reg <= 1'b1; ack_owed_pv_reg <= 1'b0;
                state_reg <= ST_IDLE;
            end else if (ctx_mp && rd_bmp != {MP_W{1'b0}}) begin
                state_reg <= ST_TNAK_TOP;
            end else if (ack_room) begin
                queue_ack(epsn_q - 24'd1, ACK_SYNDROME, rd_msn);
                ack_owed_pw_reg <= 1'b1; ack_owed_pv_reg <= 1'b0;
                state_reg <= ST_IDLE;
            end
        end
        ST_CHECK: begin
            cursor_reg <= rd_cursor;
            remain_reg <= rd_remain;
            msglen_reg <= rd_msglen;
            wrid_reg <= rd_wrid;
            rqci_reg <= rq_ci;
            key_reg <= rd_key;
            completes_reg <= 1'b0;
            early_done_reg <= 1'b0;
            nak_reg <= 8'd0;
            rd_dup_reg <= 1'b0;
            if (!qp_ok || qp_stale_reg) begin
                stat_drop_qp_reg <= 1'b1;
                state_reg <= ST_DROP;
            end else if (op_mp != ctx_mp) begin
                // the other transport's opcode: never placed, ACKed or NAKed
                stat_drop_xport_reg <= 1'b1;
                state_reg <= ST_DROP;
            end else if (op_ack) begin
                state_reg <= ST_DROP;        // handed to the requester this cycle
            end else if (op_rd_resp && READ_EN != 0 && (op_reg != 8'h12 || ATOMIC_EN != 0)) begin
                state_reg <= ST_RRESP;       // a response to one of our READs?
            end else if (op_rd_resp) begin
                stat_drop_psn_reg <= 1'b1;   // a response to a request never sent
                state_reg <= ST_DROP;
            end else if (op_probe) begin
                // answered on its own path, if the ACK slot is free (a
                // waiting ACK is not replaced: the requester probes again)
                if (!rr_route && (!ack_valid_reg || ack_go)) begin
                    queue_ack(psn_reg, ACK_SYN_PROBE_REPLY, rd_msn);
                end
                state_reg <= ST_DROP;
            end else if (ctx_mp) begin
                if (qp_ow) begin
                    // a completion waits for a receive WQE: nothing else
                    // is taken (the requester resends it)
                    stat_drop_psn_reg <= 1'b1;
                    state_reg <= ST_DROP;
                end else if (mp_dup) begin
                    // duplicate: never placed again; ACK the point
                    stat_drop_psn_reg <= 1'b1;
                    if (ack_req_reg && ack_room) begin
                        queue_ack(epsn_reg - 24'd1, ACK_SYNDROME, rd_msn);
                    end
                    state_reg <= ST_DROP;
                end else if (mp_beyond) begin
                    // beyond the window: dropped, resent once the window moves
                    stat_drop_psn_reg <= 1'b1;
                    state_reg <= ST_DROP;
                end else begin
                    state_reg <= ST_MR;
                end
            end else if (psn_diff == 24'd0) begin
                state_reg <= ST_MR;
            end else if (psn_diff[23] && op_rdat) begin
                // a duplicate READ: the requester lost responses and asks
                // again from this PSN; answered again, as the IB spec asks
                // (a duplicate atomic: from its replay record)
                rd_dup_reg <= 1'b1;
                state_reg <= ST_MR;
            end else if (psn_diff[23]) begin
                // duplicate: never executed again; ACK what we have
                stat_drop_psn_reg <= 1'b1;
                if (ack_req_reg && ack_room) begin
                    queue_ack(epsn_reg - 24'd1, ACK_SYNDROME, rd_msn);
                end
                state_reg <= ST_DROP;
            end else begin
                // a gap: NAK once per expected PSN, drop until it is filled
                stat_drop_psn_reg <= 1'b1;
                if (!qp_ns && ack_room) begin
                    nak_sent_pw_reg <= 1'b1; nak_sent_pv_reg <= 1'b1;
                    queue_ack(epsn_reg, NAK_PSN, rd_msn);
                    stat_nak_reg <= 1'b1;
                end
                state_reg <= ST_DROP;
            end
        end
        ST_MR: begin
            // the MR table answers once the key has been stable two cycles
            // (and the replay records, looked up at qpn and psn_reg since ST_LOAD)
            mr_wait_reg <= !mr_wait_reg;
            mr_ok_reg <= mr_ok;
            mr_bus_reg <= mr_bus;
            at_hit_reg <= at_lk_hit;
            at_orig_reg <= at_lk_orig;
            if (mr_wait_reg) begin
                state_reg <= ST_EXEC;
            end
        end
        ST_RQ_MR: begin
            // the MR table answers once the key has been stable two cycles
            mr_wait_reg <= !mr_wait_reg;
            mr_ok_reg <= mr_ok;
            mr_bus_reg <= mr_bus;
            if (mr_wait_reg) begin
                state_reg <= ST_RQ_USE;
            end
        end
        ST_EXEC: begin
            // opcode sequence and length checks
            if (ctx_mp) begin
                // every packet stands alone: an MPETH in each, no sequence;
                // its length is this packet's payload, and MP WRITE LAST
                // WITH IMMEDIATE's message (MCETH) holds at least the packet
                if (!op_mp_write) begin
                    nak_reg <= NAK_INV_REQ;
                end else if (op_reg == MP_OPCODE_WRITE && plen_reg != pmtu_bytes) begin
                    nak_reg <= NAK_INV_REQ;
                end else if (plen_reg > pmtu_bytes || reth_len_reg != {19'd0, plen_reg}
                        || (op_imm && mceth_len < {19'd0, plen_reg})) begin
                    nak_reg <= NAK_INV_REQ;
                end else if (plen_reg != 0 && !(mr_ok_reg && ctx_remote_write) && !cfg_no_mr_check) begin
                    nak_reg <= NAK_REM_ACCESS;
                end
                key_reg <= reth_rkey_reg;
                cursor_reg <= mr_bus_reg;
                msglen_reg <= mceth_len - {19'd0, plen_reg};
                if (op_imm && psn_diff != 24'd0 && !cfg_early_cqe) begin
                    // above the point: placed now, completed when the point passes
                    mp_defer_reg <= 1'b1;
                    completes_reg <= 1'b0;
                    if (pend_full || !pslot_avail) begin
                        // MP_WIMM deferred per QP and a free slot: else
                        // dropped unplaced, it is resent
                        nak_reg <= 8'd0;
                        stat_drop_wimm_reg <= 1'b1;
                        state_reg <= ST_DROP;
                    end else begin
                        state_reg <= ST_RQ_FETCH;
                    end
                end else begin
                    completes_reg <= op_imm;
                    state_reg <= ST_RQ_FETCH;
                end
            end else if (rd_dup_reg) begin
                // (outside the message rules: it repeats an executed
                // request) one that fails its checks is dropped and
                // counted, never NAKed: the QP is past its PSN, and a NAK
                // would move it to ERR on a forged old frame
                if (rd_dup_bad) begin
                    stat_drop_psn_reg <= 1'b1;
                end
            end else if (op_atomic && reth_va_reg[2:0] != 3'd0) begin
                nak_reg <= NAK_INV_REQ;            // an atomic not 8-byte aligned
            end else if (rc_inv_req) begin
                nak_reg <= NAK_INV_REQ;            // opcode sequence, lengths (rc_message)
            end else if (op_rdat && rd_over) begin
                nak_reg <= NAK_INV_REQ;            // beyond max_dest_rd_atomic
                stat_rd_over_reg <= 1'b1;
            end else if (rc_rem_access) begin
                nak_reg <= NAK_REM_ACCESS;
            end

            if (!ctx_mp) begin
                if (op_has_reth) begin
                    key_reg <= reth_rkey_reg;
                    cursor_reg <= mr_bus_reg;
                    remain_reg <= reth_len_reg;
                    msglen_reg <= 32'd0;
                end
                completes_reg <= (op_is_send && (op_last || op_only)) || (op_is_write && op_imm);
                state_reg <= rd_dup_reg && rd_dup_bad ? ST_DROP : ST_RQ_FETCH;
            end
        end
        ST_MP_PEND: begin
            // complete the deferred WRITE_WITH_IMM: a receive WQE, then its
            // CQE (behind every payload write of the PSNs below it)
            op_reg <= MP_OPCODE_WRITE_LAST_IMM;
            ack_req_reg <= 1'b0;
            psn_reg <= pend_psn;
            imm_reg <= pend_imm;
            msglen_reg <= pend_len;
            plen_reg <= 13'd0;
            rqci_reg <= rq_ci;
            completes_reg <= 1'b1;
            early_done_reg <= 1'b0;
            mp_defer_reg <= 1'b0;
            mp_pend_pass_reg <= 1'b1;
            nak_reg <= 8'd0;
            if (rq_empty) begin
                owed_pw_reg <= 1'b1; owed_pv_reg <= 1'b1;        // waits for a receive WQE
                mp_pend_pass_reg <= 1'b0;
                state_reg <= ST_IDLE;
            end else begin
                owed_pw_reg <= 1'b1; owed_pv_reg <= 1'b0;
                state_reg <= ST_RQ_FETCH;
            end
        end
        ST_MP_NEXT: begin
            // a deferred completion was written (its slot freed a cycle
            // ago): the QP's next one, by PSN, is due too if the point
            // (as written back: epsn_q) has passed it
            state_reg <= pend_any && (pend_psn - epsn_q) >= 24'h800000 ? ST_MP_PEND : ST_IDLE;
        end
        ST_RQ_FETCH: begin
            // (mp: the window registers the point's move)
            if (nak_reg != 8'd0) begin
                state_reg <= ST_DROP;
            end else if (op_rdat) begin
                state_reg <= ST_READ;
            end else if (!op_needs_rq) begin
                state_reg <= cfg_early_cqe && completes_reg ? ST_EARLY_CQE : ST_GUARD;
            end else if (rq_fetch_empty) begin
                nak_reg <= RNR_NAK | {3'd0, ctx_min_rnr_timer};
                state_reg <= ST_DROP;
            end else if (m_rd_desc_ready) begin
                state_reg <= ST_RQ_WAIT;
            end
        end
        ST_READ: begin
            // the responses carry the data and acknowledge the request:
            // no ACK (ST_FINISH); a QP reloaded meanwhile answers nothing
            if (qp_stale || (m_rr_ready && !rra_valid_reg && rr_wr_issued)) begin
                drop_free_reg <= 1'b1;
                drop_free_slot_reg <= slot_reg;
                state_reg <= rd_dup_reg ? ST_IDLE : ST_FINISH;
            end
        end
        ST_RRESP: begin
            // (the READ table answered for this QP and PSN)
            rp_hit_reg <= rt_hit;
            rp_idx_reg <= rt_idx;
            rp_exact_reg <= psn_reg == rt_next;
            rp_beyond_reg <= psn_reg != rt_next && (psn_reg - rt_next) < 24'h800000;
            rp_older_reg <= rt_cov && rt_cov_idx != rt_idx;
            rp_ask_idx_reg <= rt_cov && rt_cov_idx != rt_idx ? rt_cov_idx : rt_idx;
            rp_ask_psn_reg <= rt_cov && rt_cov_idx != rt_idx ? rt_cov_next : rt_next;
            rp_ask_done_reg <= rt_cov && rt_cov_idx != rt_idx ? rt_cov_asked : rt_asked;
            rp_last_reg <= psn_reg == rt_last;
            rp_off_reg <= {8'd0, psn_reg - rt_first} << (5'd7 + {2'd0, ctx_pmtu});
            rp_bus_reg <= rt_bus;
            rp_key_reg <= rt_key;
            rp_len_reg <= rt_len;
            rp_atom_reg <= ATOMIC_EN != 0 && rt_atomic;
            state_reg <= ST_RPLACE;
        end
        ST_RPLACE: begin
            if (!rp_hit_reg || rp_older_reg || !rp_exact_reg || !rp_fits) begin
                // no READ of ours asked for it; an older READ of the QP
                // misses a response, or it is beyond the expected PSN (a
                // resend from the first missing one is asked, once); a
                // duplicate; or one whose opcode or length does not fit
                stat_drop_psn_reg <= 1'b1;
                state_reg <= rp_hit_reg && (rp_older_reg || rp_beyond_reg) && !rp_ask_done_reg
                    ? ST_RASK : ST_DROP;
            end else begin
                cursor_reg <= rp_bus_reg + {32'd0, rp_off_reg};
                key_reg <= rp_key_reg;
                rresp_reg <= 1'b1;
                if (rp_atom_reg) begin
                    // its 8 bytes come from the staging RAM (m_wr_desc_ram_addr)
                    at_place_reg <= 1'b1;
                    plen_reg <= 13'd8;
                    state_reg <= ST_RATOM;
                end else begin
                    state_reg <= cfg_early_read_cqe && rp_last_reg ? ST_REARLY : ST_GUARD;
                end
            end
        end
        ST_RATOM: begin
            if (m_at_ram_wr_en && m_at_ram_wr_ready) begin
                state_reg <= cfg_early_read_cqe ? ST_REARLY : ST_GUARD;
            end
        end
        ST_RASK: begin
            // (the sequence NAK of the expected PSN: m_rx_ack_*; rt_ask)
            if (qp_stale || rx_ack_room) begin
                state_reg <= ST_DROP;
            end
        end
        ST_REARLY: begin
            // broken on purpose: the last response acknowledged before its write
            rp_quiet_reg <= 3'd0;
            if (qp_stale) begin
                state_reg <= ST_DROP;
            end else if (rx_ack_room) begin
                early_done_reg <= 1'b1;
                state_reg <= ST_REWAIT;
            end
        end
        ST_REWAIT: begin
            // ... and its CQE issued before the write is
            rp_quiet_reg <= rx_acks_idle && cqe_writer_idle ? rp_quiet_reg + 3'd1 : 3'd0;
            if (rp_quiet_reg == 3'd7) begin
                state_reg <= ST_GUARD;
            end
        end
        ST_RDONE: begin
            // placed: its PSN goes to the completer as an ACK (m_rx_ack_*),
            // and the READ expects the next (rt_adv)
            if (qp_stale) begin
                state_reg <= ST_IDLE;
            end else if (early_done_reg || rx_ack_room) begin
                stat_rd_resp_reg <= 1'b1;
                state_reg <= ST_IDLE;
            end
        end
        ST_RQ_WAIT: begin
            if (s_rd_status_valid) begin
                if (s_rd_status_error != 0) begin
                    nak_reg <= NAK_REM_OP;
                    state_reg <= ST_DROP;
                end else begin
                    state_reg <= ST_RQ_MR;
                end
            end
        end
        ST_RQ_USE: begin
            wrid_reg <= rq_wr_id;
            if (op_is_send) begin
                // the receive buffer must be local-writable memory of this PD
                if (!mr_ok_reg && rq_len != 0 && !cfg_no_mr_check) begin
                    nak_reg <= NAK_REM_OP;
                    state_reg <= ST_DROP;
                end else if ({19'd0, plen_reg} > rq_len) begin
                    nak_reg <= NAK_INV_REQ;
                    state_reg <= ST_DROP;
                end else begin
                    cursor_reg <= mr_bus_reg;
                    key_reg <= rq_lkey;
                    remain_reg <= rq_len;
                    msglen_reg <= 32'd0;
                    state_reg <= cfg_early_cqe && completes_reg ? ST_EARLY_CQE : ST_GUARD;
                end
            end else begin
                state_reg <= cfg_early_cqe && completes_reg ? ST_EARLY_CQE : ST_GUARD;
            end
        end
        ST_EARLY_CQE: begin
            // broken on purpose: the CQE goes first, the payload after it
            if (m_cqe_ready) begin
                early_done_reg <= 1'b1;
                state_reg <= ST_EARLY_WAIT;
            end
        end
        ST_EARLY_WAIT: begin
            // the CQE's write is queued before this packet's payload
            if (cqe_writer_idle) begin
                state_reg <= ST_GUARD;
            end
        end
        ST_GUARD: begin
            // the guard reads the region in the first cycle and answers in
            // the second; any MR change from the first cycle on voids it
            mr_wait_reg <= !mr_wait_reg;
            guard_ok_reg <= wr_guard_ok;
            guard_fresh_reg <= (!mr_wait_reg || guard_fresh_reg) && !mr_change;
            if (mr_wait_reg) begin
                state_reg <= ST_PAYLOAD;
            end
        end
        ST_PAYLOAD: begin
            if (!(m_wr_desc_valid && m_wr_desc_ready)) begin
                guard_fresh_reg <= guard_fresh_reg && !mr_change;
            end
            if (plen_reg == 0) begin
                drop_free_reg <= !mp_pend_pass_reg;
                drop_free_slot_reg <= slot_reg;
                state_reg <= rresp_reg ? ST_RDONE : completes_reg && !early_done_reg ? ST_CQE : ST_FINISH;
            end else if (!guard_fresh_reg) begin
                state_reg <= ST_GUARD;      // the MR table changed since the check
            end else if (!guard_ok_reg) begin
                // the address the transport computed is not inside the MR
                // (or the MR is gone): nothing is written
                // (a READ response's: dropped, never NAKed; the READ is
                // retried until its retries run out)
                stat_guard_reg <= 1'b1;
                nak_reg <= rresp_reg ? 8'd0 : NAK_REM_ACCESS;
                state_reg <= ST_DROP;
            end else if (m_wr_desc_ready && !fifo_full) begin
                free_fifo[free_wr_reg] <= slot_reg;
                free_wr_reg <= free_wr_reg + 3'd1;
                state_reg <= rresp_reg ? ST_RDONE : completes_reg && !early_done_reg ? ST_CQE : ST_FINISH;
            end
        end
        ST_CQE: begin
            // the payload write is in the engine's queue: the CQE may follow it
            if (m_cqe_ready) begin
                state_reg <= ST_FINISH;
            end
        end
        ST_FINISH: begin
            if (qp_stale) begin
                // reloaded meanwhile: its new state stands
                mp_pend_pass_reg <= 1'b0;
                state_reg <= ST_IDLE;
            end else if (fin_wait) begin
                // a load of another QP has the EPS write port: a cycle later
                state_reg <= ST_FINISH;
            end else if (mp_pend_pass_reg) begin
                // the deferred completion is written
                // (the receive ring's index: rqc_we; the record: wrid, MSN + 1)
                // (the slot: mp_deferred's done)
                mp_pend_pass_reg <= 1'b0;
                state_reg <= ST_MP_NEXT;
            end else if (ctx_mp) begin
                if (fin_mp_go) begin
                    // (the point: eps_fsm_we)
                    // (the record: bitmap, wrid, MSN; the ring's index: rqc_we)
                    // (a deferred completion: mp_deferred's park)
                    if (mp_adv != 0 && mp_recovered) begin
                        nak_sent_pw_reg <= 1'b1; nak_sent_pv_reg <= 1'b0;
                    end
                    if (mp_nak) begin
                        // the point's packet is lost: ask for it and for
                        // every other lost one (MP SELECTIVE NAK; the span:
                        // the record)
                        nak_sent_pw_reg <= 1'b1; nak_sent_pv_reg <= 1'b1;
                        queue_ack(epsn_reg, NAK_PSN, msn_reg);
                        ack_lost_reg <= mp_lost;
                        stat_nak_reg <= 1'b1;
                        ack_owed_pw_reg <= 1'b1; ack_owed_pv_reg <= 1'b0;
                    end else if (ack_req_reg || mp_adv > 1) begin
                        // AckReq, or the point jumped over a filled hole;
                        // with a hole left at the new point the ACK timer
                        // keeps running (its NAK: ST_TNAK), from the first
                        // packet that found the hole
                        queue_ack(mp_point_new - 24'd1, ACK_SYNDROME, msn_reg);
                        if (!mp_hole_open) begin
                            ack_owed_pw_reg <= 1'b1; ack_owed_pv_reg <= 1'b0;
                        end else if (!qp_ao || mp_adv != 0) begin
                            ack_owed_pw_reg <= 1'b1; ack_owed_pv_reg <= 1'b1;
                            ack_stamp_pw_reg <= 1'b1;
                        end
                    end else if (!qp_ao) begin
                        ack_owed_pw_reg <= 1'b1; ack_owed_pv_reg <= 1'b1;
                        ack_stamp_pw_reg <= 1'b1;
                    end
                    state_reg <= mp_pend_due ? ST_MP_PEND : ST_IDLE;
                end
            end else if (fin_rc_go) begin
                // (the expected PSN: eps_fsm_we)
                nak_sent_pw_reg <= 1'b1; nak_sent_pv_reg <= 1'b0;
                // the record (rec_in): the message's cursor, lengths, key, wrid, MSN
                // (the ring's index: rqc_we)
                // (the message moves on: rc_message's done)
                if (op_rdat) begin
                    // (its last response acknowledges it and all before it)
                    ack_owed_pw_reg <= 1'b1; ack_owed_pv_reg <= 1'b0;
                end else if (ack_req_reg) begin
                    queue_ack(psn_reg, ACK_SYNDROME, (op_last || op_only) ? msn_p1_reg : msn_reg);
                    ack_owed_pw_reg <= 1'b1; ack_owed_pv_reg <= 1'b0;
                end else if (!qp_ao) begin
                    ack_owed_pw_reg <= 1'b1; ack_owed_pv_reg <= 1'b1;
                    ack_stamp_pw_reg <= 1'b1;
                end
                state_reg <= ST_IDLE;
            end
        end
        ST_DROP: begin
            // error NAKs (invalid request, remote access, remote operational,
            // RNR), queued once there is room for them; a QP the host
            // reloaded meanwhile gets none (its new state stands)
            if (nak_reg != 8'd0 && !ack_room && !qp_stale) begin
                state_reg <= ST_DROP;
            end else begin
                if (nak_reg != 8'd0 && !qp_stale) begin
                    queue_ack(psn_reg, nak_reg, rd_msn);
                    stat_nak_reg <= 1'b1;
                end
                drop_free_reg <= 1'b1;
                drop_free_slot_reg <= slot_reg;
                state_reg <= ST_IDLE;
            end
        end
        default: state_reg <= ST_IDLE;
    endcase

    if (rst) begin
        rr_jobs_in_reg <= 8'd0;
        rra_valid_reg <= 1'b0;
        rr_mine_reg <= 1'b0;
        mr_wait_reg <= 1'b0;
        state_reg <= ST_IDLE;
        ack_valid_reg <= 1'b0;
        free_wr_reg <= 3'd0;
        free_rd_reg <= 3'd0;
        drop_free_reg <= 1'b0;
        nak_sent_pw_reg <= 1'b0;
        ack_owed_pw_reg <= 1'b0;
        owed_pw_reg <= 1'b0;
        ack_stamp_pw_reg <= 1'b0;
        mp_pend_pass_reg <= 1'b0;
    end
end

// ---------------------------------------------------------------- record port
// (header) REC_PORT 0: the port takes nothing and answers nothing, and the
// records' record writes are tied off
rec_port #(
    .EN(REC_PORT),
    .N_REC(RECP_N),
    .REC_W(RECP_TAB),
    .SLOT_W(QN_W),
    .REC_WORDS(REC_WORDS),
    .REC_BITS(RECP_BITS)
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
    .rec_rd_addr(recp_rd_addr),
    .rec_rd_data(recp_rd_data),
    .rec_wr_en(recp_wr_en),
    .rec_wr_addr(recp_wr_addr),
    .rec_wr_data(recp_wr_data),
    .rec_wr_ready(recp_wr_ready),
    .wr_busy(rec_wr_busy)
);

`ifdef FORMAL
// ---------------------------------------------------------------- formal
// The completion barrier (layer 3 of DESIGN.md section 2.2), as assertions
// for hw/formal (yosys-smtbmc; `FORMAL` is defined by read_verilog -formal
// only, so Verilator and synthesis never see this block). They hold with
// every input, whatever the debug switches say: cfg_early_cqe must make
// f_barrier fail (hw/formal/run.sh requires it).

// this packet's payload descriptor has been accepted by the write engine
reg f_paid = 1'b0;
always @(posedge clk) begin
    if (state_reg == ST_IDLE) f_paid <= 1'b0;
    if (m_wr_desc_valid && m_wr_desc_ready) f_paid <= 1'b1;
end
// the point (first unplaced PSN) of the packet's QP, now
wire [23:0] f_point = epsn_q;
// the completion's PSN is at or below the point: every PSN below it placed
wire [23:0] f_below = f_point - psn_reg;
// a QP's completions in requester (PSN) order
reg [23:0] f_cq_psn [0:NUM_QP-1];
reg [NUM_QP-1:0] f_cq_seen = {NUM_QP{1'b0}};
wire [23:0] f_step = psn_reg - f_cq_psn[qpn];
always @(posedge clk) begin
    if (m_cqe_valid && m_cqe_ready) begin
        f_cq_psn[qpn] <= psn_reg;
        f_cq_seen[qpn] <= 1'b1;
    end
    if (load_any) f_cq_seen[load_qpn] <= 1'b0;   // a new PSN space
    if (rst) f_cq_seen <= {NUM_QP{1'b0}};
end

// the record's MSN and bitmap as the flop arrays held them before they
// moved to block RAM: what the write-back stores, cleared by a load in
// that cycle; the block RAM's read (a cycle ahead, forwarded, the clear
// bit) must give them in every state that reads them (all but ST_IDLE)
localparam F_W = RSP_MSN_W + RSP_BMP_W;
reg [F_W-1:0] f_rec [0:NUM_QP-1];
integer f_i;
initial begin
    for (f_i = 0; f_i < NUM_QP; f_i = f_i + 1) begin
        f_rec[f_i] = {F_W{1'b0}};
    end
end
always @(posedge clk) begin
    if (rec_we) f_rec[qpn] <= {rec_in[RSP_MSN_LSB +: RSP_MSN_W], rec_in[RSP_BMP_LSB +: RSP_BMP_W]};
    if (load_any) f_rec[load_qpn] <= {F_W{1'b0}};
end
wire [F_W-1:0] f_rec_now = f_rec[qpn];

// the flags as the flop vectors held them before they moved to block RAM
// (RFL): the state machine's pending writes, a load's clear after them,
// the ACK timer's two age bits aged every epoch (cleared by a timer
// start) and due once the second is set; the record's views (qpn's in
// every state but ST_IDLE, the scan's always) must give the same, and the
// ACK timer must fire in the same cycles
localparam [NUM_QP-1:0] F_ONE = 1;
function [NUM_QP-1:0] f_thru;
    input [NUM_QP-1:0] v;
    input w;
    input val;
    input [QN_W-1:0] q;
    f_thru = !w ? v : val ? v | (F_ONE << q) : v & ~(F_ONE << q);
endfunction
reg [NUM_QP-1:0] f_ns = {NUM_QP{1'b0}};
reg [NUM_QP-1:0] f_ow = {NUM_QP{1'b0}};
reg [NUM_QP-1:0] f_ao = {NUM_QP{1'b0}};
reg [NUM_QP-1:0] f_a1 = {NUM_QP{1'b0}};
reg [NUM_QP-1:0] f_a2 = {NUM_QP{1'b0}};
wire [NUM_QP-1:0] f_ns_e = f_thru(f_ns, nak_sent_pw_reg, nak_sent_pv_reg, pq_qn_reg);
wire [NUM_QP-1:0] f_ow_e = f_thru(f_ow, owed_pw_reg, owed_pv_reg, pq_qn_reg);
wire [NUM_QP-1:0] f_ao_e = f_thru(f_ao, ack_owed_pw_reg, ack_owed_pv_reg, pq_qn_reg);
wire [NUM_QP-1:0] f_a1_e = f_thru(f_a1, ack_stamp_pw_reg, 1'b0, pq_qn_reg);
wire [NUM_QP-1:0] f_a2_e = f_thru(f_a2, ack_stamp_pw_reg, 1'b0, pq_qn_reg);
wire [NUM_QP-1:0] f_ld = load_any ? F_ONE << load_qpn : {NUM_QP{1'b0}};
always @(posedge clk) begin
    f_ns <= f_ns_e & ~f_ld;
    f_ow <= f_ow_e & ~f_ld;
    f_ao <= f_ao_e & ~f_ld;
    f_a1 <= now_reg == ACK_EPOCH ? f_ao_e : f_a1_e;
    f_a2 <= now_reg == ACK_EPOCH ? f_a1_e & f_ao_e : f_a2_e;
    if (rst) begin
        f_ns <= {NUM_QP{1'b0}};
        f_ow <= {NUM_QP{1'b0}};
        f_ao <= {NUM_QP{1'b0}};
    end
end

always @* begin
    if (!rst) begin
        // the record's MSN and bitmap read from block RAM: the last written
        if (state_reg != ST_IDLE) assert({rd_msn, rd_bmp} == f_rec_now);   // f_record
        // ST_FINISH's registered MSN is the record's
        if (state_reg == ST_FINISH && !qp_stale) assert(msn_reg == rd_msn && msn_p1_reg == rd_msn + 24'd1); // f_msn_reg
        if (rec_we) assert(rec_loaded_reg == rec_loaded);                 // f_loaded_reg
        // the flags in block RAM read as the flop vectors did
        if (!rfl_sweep) begin
            if (state_reg != ST_IDLE) assert(qp_ns == f_ns_e[qpn] && qp_ow == f_ow_e[qpn]
                && qp_ao == f_ao_e[qpn]);                                   // f_rfl_qp
            assert(scan_ow == f_ow_e[tscan_reg]
                && tack_due == (f_ao_e[tscan_reg] && f_a2_e[tscan_reg]));  // f_rfl_scan
        end
        // the receive index ST_RQ_FETCH fetches at is the ring's
        if (state_reg == ST_RQ_FETCH && !qp_stale) assert(rqci_reg == rq_ci); // f_rq_ci
        // the pending write's record is the one the read port holds
        if (rfl_fsm_we) assert(pq_qn_reg == qpn);                           // f_rfl_pq
        // property 1 (rc) and 3, this packet: its CQE is asked for only
        // once its own payload is in the in-order write engine's queue;
        // every earlier packet of the QP went through ST_FINISH, which
        // f_executed covers
        if (m_cqe_valid) assert(plen_reg == 13'd0 || f_paid);                 // f_barrier
        // no packet is executed (its PSN state written back) with its
        // payload still outside the write engine
        if (state_reg == ST_FINISH) assert(plen_reg == 13'd0 || f_paid);     // f_executed
        // property 3 (mp): a completion is asked for only when no PSN
        // below it on the QP is unplaced (the point is at or beyond it)
        if (m_cqe_valid && ctx_mp) assert(!f_below[23]);                     // f_mp_point
        // property 3 (and rc): the CQEs of a QP in requester order
        if (m_cqe_valid && f_cq_seen[qpn]) assert(f_step != 24'd0 && !f_step[23]); // f_order
    end
end
`endif

endmodule

`resetall
