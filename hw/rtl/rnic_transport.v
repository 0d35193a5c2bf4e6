// rnic transport subsystem: the per-QP state and the engines that act on
// it. The QP context and MR tables, the queue manager (SQ/CQ rings,
// doorbells, MSI), the WQE executor (requester: SQ WQEs to packets, ACKs
// and retransmission), the rc/mp responder (received packets to payload
// writes, receive completions and ACK/NAK), and the completion path: the
// arbiter in front of the CQE writer and the CQE writer.
//
// Why the boundary is here: the tables, the queue manager and the two
// engines are wired to each other by ~150 signals (the context and MR
// lookup ports, the SQ hand-off, flushes and error moves, the ACK path
// from the responder to the executor); the CQE writer takes its CQ slot
// from the queue manager (cq_alloc_*: a request answered a few cycles
// later; cq_notify) and the responder waits on it for early CQEs
// (cqe_writer_idle), so it stays with them. What crosses the boundary is what the neighbours already
// speak: register fields from rnic_csr, the three DMA clients ex, rs and
// cw to rnic_dma (descriptors, in-order statuses, the RAM snoop, the CQE
// slot writes and bypass TLPs), packets to and from rnic_port, and errors
// and event pulses to the core's status counters. Putting the CQE writer
// in rnic_dma instead would cut fewer wires but would make the DMA
// subsystem know the CQ rings and the CQE format.
//
// The pool sizes (OST_RINGS, MP_PEND, DMAC_N) come resolved from rnic_core
// (its OST_RINGS_Q, MP_PEND_Q, DMAC_N_Q, which hw/state/manifest.py reads);
// here they are never 0.

`resetall
`timescale 1ns / 1ps
`default_nettype none

module rnic_transport #(
    parameter DATA_W = 64,
    parameter NUM_Q = 16,
    parameter CLK_MHZ = 250,         // core clock: sets the IB timer units (ACK timeout, RNR)
    parameter MP_W = 64,             // mp transport: receive window (bitmap bits per QP)
    parameter SEND_EN = 1,           // 1 = SEND/RECV carried, 0 = RDMA WRITE(+IMM) only
    parameter RC_EN = 1,             // 1 = rc and mp, 0 = mp only
    parameter READ_EN = 0,           // 1 = RDMA READ requests served (read_reply)
    parameter ATOMIC_EN = 0,         // 1 = atomics executed (read_reply; needs READ_EN)
    // shared pools, sized by rnic_core
    parameter OST_RINGS = 4,         // outstanding-WQE rings
    parameter MP_PEND = 2,           // mp deferred WRITE_WITH_IMM completions
    parameter MP_WIMM = 2,           // ... of them per QP at most (1..MP_PEND)
    parameter DMAC_N = 4,            // destination-MAC table entries
    parameter NUM_MR = 64,           // MR table entries (1..256)
    // the RAM map (see rnic_core)
    parameter RAM_ADDR_W = 17,
    parameter RXR_ADDR_W = 15,
    parameter RX_SLOT_W = 2,
    parameter LEN_W = 17,
    parameter ID_W = 8,
    parameter CHUNK_LOG = 12,
    parameter NUM_SLOTS = 7,
    parameter NUM_TX_SLOTS = 8,
    parameter [RAM_ADDR_W-1:0] WQE_RAM = 17'h07000,
    parameter [RAM_ADDR_W-1:0] RQWQE_RAM = 17'h07040,
    parameter [RAM_ADDR_W-1:0] CQE_RAM = 17'h07100,
    parameter [RAM_ADDR_W-1:0] TX_RAM_BASE = 17'h08000,
    parameter [RAM_ADDR_W-1:0] RX_RAM_BASE = 17'h10000,
    parameter [RAM_ADDR_W-1:0] RR_RAM_BASE = 17'h18000,   // READ responses' payload slots
    parameter RR_SLOTS = 4,
    parameter [RAM_ADDR_W-1:0] ATOM_RAM = 17'h070C0,      // an atomic's new value (staging RAM)
    parameter [RAM_ADDR_W-1:0] ATOM_RQ_RAM = 17'h070C8,   // our atomics' answers (staging RAM)
    // descriptor id client tags (bits [7:6])
    parameter [ID_W-1:0] ID_EXEC = 8'h00,
    parameter [ID_W-1:0] ID_RESP = 8'h40,
    parameter [ID_W-1:0] ID_CQE = 8'h80,
    parameter [ID_W-1:0] ID_RRSP = 8'hC0,
    // 1: the record port (every per-QP record as REC_WORDS 64-bit words;
    // DESIGN.md section 6, step 1) is built
    parameter REC_PORT = 0,
    parameter QPN_W = 0,             // QP directory: QP numbers of QPN_W bits bound to slots (0: QP n is slot n)
    parameter QN_W = NUM_Q > 1 ? $clog2(NUM_Q) : 1,
    parameter SEG_W = $clog2(DATA_W / 8)
) (
    input  wire                              clk,
    input  wire                              rst,

    // registers: queues (the *_valid strobes one cycle after the write)
    input  wire [15:0]                       reg_q_sel,
    input  wire [31:0]                       reg_q_base_lo,
    input  wire [31:0]                       reg_q_base_hi,
    input  wire [31:0]                       reg_q_size,
    input  wire [15:0]                       reg_q_cqn,
    input  wire [3:0]                        reg_q_cmd,
    input  wire                              reg_q_cmd_valid,
    input  wire [15:0]                       reg_sq_db_qn,
    input  wire [15:0]                       reg_sq_db_pi,
    input  wire                              reg_sq_db_valid,
    input  wire [15:0]                       reg_cq_db_cqn,
    input  wire [15:0]                       reg_cq_db_ci,
    input  wire                              reg_cq_db_valid,
    input  wire [15:0]                       reg_cq_arm_cqn,
    input  wire                              reg_cq_arm_valid,
    output wire [15:0]                       sel_sq_pi,
    output wire [15:0]                       sel_sq_ci,
    output wire [15:0]                       sel_cq_pi,
    output wire                              sel_sq_en,
    output wire                              sel_cq_en,
    output wire                              sel_cq_armed,
    output wire                              sel_cq_phase,

    // registers: QPs and receive doorbells
    input  wire [15:0]                       reg_qp_sel,
    input  wire [2:0]                        reg_qp_state,
    input  wire [2:0]                        reg_qp_pmtu,
    input  wire                              reg_qp_remote_write,
    input  wire                              reg_qp_remote_read,
    input  wire                              reg_qp_remote_atomic,
    input  wire [2:0]                        reg_qp_spray_log,
    input  wire                              reg_qp_mp,
    input  wire [2:0]                        reg_qp_mp_wshift,
    input  wire [23:0]                       reg_qp_dest_qpn,
    input  wire [23:0]                       reg_qp_sq_psn,
    input  wire [23:0]                       reg_qp_rq_psn,
    input  wire [31:0]                       reg_qp_dmac_lo,
    input  wire [15:0]                       reg_qp_dmac_hi,
    input  wire [15:0]                       reg_qp_udp_sport,
    input  wire [31:0]                       reg_qp_dip,
    input  wire [15:0]                       reg_qp_pd,
    input  wire [15:0]                       reg_qp_rcq,
    input  wire [31:0]                       reg_qp_rq_base_lo,
    input  wire [31:0]                       reg_qp_rq_base_hi,
    input  wire [31:0]                       reg_qp_rq_size,
    input  wire [4:0]                        reg_qp_timeout,
    input  wire [2:0]                        reg_qp_retry_cnt,
    input  wire [2:0]                        reg_qp_rnr_retry,
    input  wire [4:0]                        reg_qp_min_rnr_timer,
    input  wire [2:0]                        reg_qp_max_rd_atomic,
    input  wire [2:0]                        reg_qp_max_dest_rd_atomic,
    input  wire [3:0]                        reg_qp_cmd,
    input  wire                              reg_qp_cmd_valid,
    input  wire [15:0]                       reg_rq_db_qpn,
    input  wire [15:0]                       reg_rq_db_pi,
    input  wire                              reg_rq_db_valid,
    // doorbells by QP number (qp_block.sq_dbn, rq_dbn): MMIO waits while
    // dbn_busy; a number no slot holds is reported (queue.err_status 14)
    input  wire [15:0]                       reg_sq_dbn_qpn,
    input  wire [15:0]                       reg_sq_dbn_pi,
    input  wire                              reg_sq_dbn_valid,
    input  wire [15:0]                       reg_rq_dbn_qpn,
    input  wire [15:0]                       reg_rq_dbn_pi,
    input  wire                              reg_rq_dbn_valid,
    output wire                              dbn_busy,
    output wire                              dbn_err_valid,
    output wire [15:0]                       dbn_err_qpn,
    // the NIC's fetch (qp_fetch, in rnic_core) uses the directory's
    // command port and lookup while fd_active; the lookup's answer is
    // dir_lk_* (the doorbells' otherwise)
    input  wire                              fd_active,
    input  wire [15:0]                       fd_slot,
    input  wire [23:0]                       fd_qpn,
    input  wire [1:0]                        fd_op,
    input  wire                              fd_valid,
    input  wire [23:0]                       fd_lk_qpn,
    output wire                              dir_lk_hit,
    output wire [QN_W-1:0]                   dir_lk_slot,
    input  wire [15:0]                       fd_free_from,
    output wire                              dir_free_valid,
    output wire [QN_W-1:0]                   dir_free_slot,
    // misses (fd_miss_en): the receive stage's and the doorbells' numbers
    // no slot holds, below fd_records, wait for the NIC's fetch
    input  wire                              fd_miss_en,
    input  wire [24:0]                       fd_records,
    output wire                              rx_miss_valid,
    output wire [23:0]                       rx_miss_qpn,
    input  wire                              rx_miss_drop,
    // the directory's first lookups (packets, doorbells by number) for the
    // cache's hit rate, and the doorbells by number waiting
    output wire                              look_rx_valid,
    output wire                              look_rx_hit,
    output wire                              look_db_valid,
    output wire                              look_db_hit,
    output wire [4:0]                        dbn_waiting,
    output wire [4:0]                        dbn_waiting_max,
    output wire                              dbn_idle,
    output wire                              db_miss_valid,
    output wire [15:0]                       db_miss_qpn,
    input  wire                              db_miss_done,
    input  wire                              db_miss_ok,
    input  wire                              db_miss_full,
    output wire [2:0]                        sel_qp_state,
    input  wire [1:0]                        reg_path_thresh,    // path health: losses to take a path out (0: off)
    output wire [23:0]                       sel_sq_psn,
    output wire [23:0]                       sel_epsn,

    // registers: MRs
    input  wire [15:0]                       reg_mr_sel,
    input  wire [31:0]                       reg_mr_key,
    input  wire [31:0]                       reg_mr_va_lo,
    input  wire [31:0]                       reg_mr_va_hi,
    input  wire [31:0]                       reg_mr_len,
    input  wire [31:0]                       reg_mr_bus_lo,
    input  wire [31:0]                       reg_mr_bus_hi,
    input  wire [15:0]                       reg_mr_pd,
    input  wire [3:0]                        reg_mr_access,
    input  wire [3:0]                        reg_mr_cmd,
    input  wire                              reg_mr_cmd_valid,

    // debug and ordering switches; the completer id for bypass TLPs
    input  wire                              reg_debug_cqe_ro,
    input  wire                              reg_debug_early_cqe,
    input  wire                              reg_debug_bypass,
    input  wire                              reg_debug_no_mr_check,
    input  wire                              reg_debug_early_read_cqe,
    input  wire                              reg_debug_resend_after_cqe,
    input  wire                              reg_cqe_flush,
    input  wire [15:0]                       cfg_requester_id,

    // interrupts
    output wire [4:0]                        msi_vector,
    output wire                              msi_valid,
    input  wire                              msi_ready,

    // errors (the core keeps the error register) and event counts
    output wire                              qp_reg_err,
    output wire                              qp_reg_err_dmac,
    output wire                              mr_reg_err,
    output wire                              qm_err_valid,
    output wire                              qm_busy,
    output wire                              qm_sweep,
    output wire [7:0]                        qm_err_code,
    output wire [15:0]                       qm_err_qn,
    output wire                              ex_err_valid,
    output wire [7:0]                        ex_err_code,
    output wire [15:0]                       ex_err_qn,
    output wire                              cw_err,
    output wire [QN_W-1:0]                   cw_err_cqn,
    output wire                              stat_ack_drop,
    output wire                              stat_retransmit,
    output wire                              stat_timeout,
    output wire                              stat_nak_seq,
    output wire                              stat_rnr,
    output wire                              stat_path_out,
    output wire                              stat_path_back,
    output wire                              stat_probe,
    output wire                              stat_probe_rtt_v,
    output wire [15:0]                       stat_probe_rtt,
    output wire                              stat_ring_busy,
    output wire                              stat_drop_qp,
    output wire                              stat_drop_psn,
    output wire                              stat_drop_xport,
    output wire                              stat_drop_wimm,
    output wire                              stat_nak,
    output wire                              stat_guard,
    output wire                              stat_cqe,
    output wire                              stat_read_req,     // a READ request handed to read_reply
    output wire                              stat_read_resp,    // a READ RESPONSE packet sent
    output wire                              stat_read_placed,  // a READ RESPONSE to our READ placed
    output wire                              stat_rr_nak,       // a NAK sent for a failed payload read
    output wire                              stat_atomic,       // an atomic executed
    output wire                              stat_atomic_replay, // a duplicate atomic answered from its record
    output wire                              stat_rd_over,       // a READ or atomic beyond max_dest_rd_atomic (NAKed)
    output wire                              mr_drain,           // an MR command waits for READs checked before it: MMIO held

    // rnic_dma: read descriptors (ex: WQEs and payload, rs: receive WQEs, cw: CQE flush reads)
    output wire [63:0]                       m_ex_rd_pcie_addr,
    output wire [RAM_ADDR_W-1:0]             m_ex_rd_ram_addr,
    output wire [LEN_W-1:0]                  m_ex_rd_len,
    output wire [ID_W-1:0]                   m_ex_rd_id,
    output wire                              m_ex_rd_valid,
    input  wire                              m_ex_rd_ready,
    output wire [63:0]                       m_rs_rd_pcie_addr,
    output wire [RAM_ADDR_W-1:0]             m_rs_rd_ram_addr,
    output wire [LEN_W-1:0]                  m_rs_rd_len,
    output wire [ID_W-1:0]                   m_rs_rd_id,
    output wire                              m_rs_rd_valid,
    input  wire                              m_rs_rd_ready,
    output wire [63:0]                       m_cw_rd_pcie_addr,
    output wire [LEN_W-1:0]                  m_cw_rd_len,
    output wire [ID_W-1:0]                   m_cw_rd_id,
    output wire                              m_cw_rd_valid,
    input  wire                              m_cw_rd_ready,

    output wire [63:0]                       m_rr_rd_pcie_addr,
    output wire [RAM_ADDR_W-1:0]             m_rr_rd_ram_addr,
    output wire [LEN_W-1:0]                  m_rr_rd_len,
    output wire [ID_W-1:0]                   m_rr_rd_id,
    output wire                              m_rr_rd_valid,
    input  wire                              m_rr_rd_ready,
    // ... and an atomic's write-back (ATOMIC_EN): its staging RAM word, its descriptor
    output wire [RAM_ADDR_W-SEG_W-1:0]       m_rr_ram_wr_addr,
    output wire [DATA_W-1:0]                 m_rr_ram_wr_data,
    output wire [DATA_W/8-1:0]               m_rr_ram_wr_strb,
    output wire                              m_rr_ram_wr_en,
    input  wire                              m_rr_ram_wr_ready,
    output wire [63:0]                       m_rr_wr_pcie_addr,
    output wire [RAM_ADDR_W-1:0]             m_rr_wr_ram_addr,
    output wire [LEN_W-1:0]                  m_rr_wr_len,
    output wire [ID_W-1:0]                   m_rr_wr_id,
    output wire                              m_rr_wr_valid,
    input  wire                              m_rr_wr_ready,
    input  wire                              rr_wr_status,

    // rnic_dma: read statuses (in order; ex/rs/cw/rr by the id client bits)
    input  wire [ID_W-1:0]                   rd_status_id,
    input  wire [3:0]                        rd_status_error,
    input  wire                              ex_rd_status,
    input  wire                              rs_rd_status,
    input  wire                              cw_rd_status,
    input  wire                              rr_rd_status,

    // rnic_dma: write descriptors (ex: copy chunks, rs: received payload, cw: CQEs)
    output wire [63:0]                       m_ex_wr_pcie_addr,
    output wire [RAM_ADDR_W-1:0]             m_ex_wr_ram_addr,
    output wire [LEN_W-1:0]                  m_ex_wr_len,
    output wire [ID_W-1:0]                   m_ex_wr_id,
    output wire                              m_ex_wr_valid,
    input  wire                              m_ex_wr_ready,
    output wire [63:0]                       m_rs_wr_pcie_addr,
    output wire [RAM_ADDR_W-1:0]             m_rs_wr_ram_addr,
    output wire [LEN_W-1:0]                  m_rs_wr_len,
    output wire [ID_W-1:0]                   m_rs_wr_id,
    output wire                              m_rs_wr_valid,
    input  wire                              m_rs_wr_ready,
    output wire [63:0]                       m_cw_wr_pcie_addr,
    output wire [RAM_ADDR_W-1:0]             m_cw_wr_ram_addr,
    output wire [LEN_W-1:0]                  m_cw_wr_len,
    output wire                              m_cw_wr_ro,
    output wire [ID_W-1:0]                   m_cw_wr_id,
    output wire                              m_cw_wr_valid,
    input  wire                              m_cw_wr_ready,

    // rnic_dma: write statuses
    input  wire                              ex_wr_status,
    input  wire                              rs_wr_status,
    input  wire                              cw_wr_status,
    input  wire                              wr_engine_idle,

    // rnic_dma: the CQE bypass TLPs (debug switch)
    output wire [127:0]                      m_byp_tlp_hdr,
    output wire [DATA_W-1:0]                 m_byp_tlp_data,
    output wire [DATA_W/32-1:0]              m_byp_tlp_keep,
    output wire                              m_byp_tlp_valid,
    output wire                              m_byp_tlp_last,
    input  wire                              m_byp_tlp_ready,

    // rnic_dma: the read engine's RAM writes (WQE snoop) and the CQE slot writes
    input  wire [RAM_ADDR_W-SEG_W-1:0]       ram_snoop_addr,
    input  wire [DATA_W-1:0]                 ram_snoop_data,
    input  wire [DATA_W/8-1:0]               ram_snoop_strb,
    input  wire                              ram_snoop_en,
    output wire [RAM_ADDR_W-SEG_W-1:0]       m_cw_ram_wr_addr,
    output wire [DATA_W-1:0]                 m_cw_ram_wr_data,
    output wire [DATA_W/8-1:0]               m_cw_ram_wr_strb,
    output wire                              m_cw_ram_wr_en,
    input  wire                              m_cw_ram_wr_ready,

    // rnic_port: the executor's packets
    output wire [47:0]                       m_ex_pkt_dmac,
    output wire [31:0]                       m_ex_pkt_dip,
    output wire [15:0]                       m_ex_pkt_udp_sport,
    output wire [7:0]                        m_ex_pkt_opcode,
    output wire                              m_ex_pkt_se,
    output wire                              m_ex_pkt_ack_req,
    output wire [23:0]                       m_ex_pkt_dest_qp,
    output wire [23:0]                       m_ex_pkt_psn,
    output wire [63:0]                       m_ex_pkt_reth_va,
    output wire [31:0]                       m_ex_pkt_reth_rkey,
    output wire [31:0]                       m_ex_pkt_reth_len,
    output wire [31:0]                       m_ex_pkt_imm,
    output wire [63:0]                       m_ex_pkt_atomic_cmp,
    output wire [RAM_ADDR_W-1:0]             m_ex_pkt_payload_addr,
    output wire [12:0]                       m_ex_pkt_payload_len,
    output wire                              m_ex_pkt_valid,
    input  wire                              m_ex_pkt_ready,
    input  wire                              ex_pkt_done,

    // rnic_port: the responder's ACK/NAK packets
    output wire [47:0]                       m_ack_dmac,
    output wire [31:0]                       m_ack_dip,
    output wire [15:0]                       m_ack_udp_sport,
    output wire [23:0]                       m_ack_dest_qp,
    output wire [23:0]                       m_ack_psn,
    output wire [7:0]                        m_ack_syndrome,
    output wire [23:0]                       m_ack_msn,
    output wire                              m_ack_mp,
    output wire [MP_W-2:0]                   m_ack_lost,
    output wire                              m_ack_valid,
    input  wire                              m_ack_ready,

    // rnic_port: READ responses (READ_EN; their NAKs too), payload in the reply slots
    output wire [47:0]                       m_rr_pkt_dmac,
    output wire [31:0]                       m_rr_pkt_dip,
    output wire [15:0]                       m_rr_pkt_udp_sport,
    output wire [7:0]                        m_rr_pkt_opcode,
    output wire [23:0]                       m_rr_pkt_dest_qp,
    output wire [23:0]                       m_rr_pkt_psn,
    output wire [7:0]                        m_rr_pkt_syndrome,
    output wire [23:0]                       m_rr_pkt_msn,
    output wire [RAM_ADDR_W-1:0]             m_rr_pkt_payload_addr,
    output wire [12:0]                       m_rr_pkt_payload_len,
    output wire [63:0]                       m_rr_pkt_atomic_orig,
    output wire                              m_rr_pkt_valid,
    input  wire                              m_rr_pkt_ready,
    input  wire                              rr_pkt_done,

    // the QP directory's command (qp_block.qp_bind on slot reg_qp_sel)
    input  wire [23:0]                       reg_qp_bind_qpn,
    input  wire [1:0]                        reg_qp_bind_op,
    input  wire                              reg_qp_bind_valid,
    output wire                              qp_bind_busy,
    output wire [2:0]                        qp_bind_err,
    output wire [23:0]                       qp_bind_rb_qpn,
    output wire                              qp_bind_rb_bound,

    // rnic_port: received packets and their freed RX slots
    input  wire [47:0]                       s_rx_pkt_smac,
    input  wire [31:0]                       s_rx_pkt_sip,
    input  wire [31:0]                       s_rx_pkt_dip,
    input  wire [15:0]                       s_rx_pkt_udp_sport,
    input  wire [7:0]                        s_rx_pkt_opcode,
    input  wire                              s_rx_pkt_se,
    input  wire                              s_rx_pkt_ack_req,
    input  wire [1:0]                        s_rx_pkt_pad_cnt,
    input  wire [23:0]                       s_rx_pkt_dest_qp,
    input  wire [23:0]                       s_rx_pkt_psn,
    input  wire [63:0]                       s_rx_pkt_reth_va,
    input  wire [31:0]                       s_rx_pkt_reth_rkey,
    input  wire [31:0]                       s_rx_pkt_reth_len,
    input  wire [31:0]                       s_rx_pkt_imm,
    input  wire [7:0]                        s_rx_pkt_aeth_syndrome,
    input  wire [23:0]                       s_rx_pkt_aeth_msn,
    input  wire [31:0]                       s_rx_pkt_cmp_lo,
    input  wire [RXR_ADDR_W-1:0]             s_rx_pkt_payload_addr,
    input  wire [12:0]                       s_rx_pkt_payload_len,
    input  wire [RX_SLOT_W-1:0]              s_rx_pkt_slot,
    input  wire                              s_rx_pkt_valid,
    output wire                              s_rx_pkt_ready,
    output wire                              m_rx_free_valid,
    output wire [RX_SLOT_W-1:0]              m_rx_free_slot,

    // the record port (REC_PORT 1): a QP's record, REC_WORDS words of 64
    // bits (rec_map's contract; words by module, see the map below)
    input  wire                              s_rec_rd_valid,
    output wire                              s_rec_rd_ready,
    input  wire [QN_W-1:0]                   s_rec_rd_slot,
    input  wire [5:0]                        s_rec_rd_word,
    output wire                              m_rec_rd_data_valid,
    output wire [63:0]                       m_rec_rd_data,
    input  wire                              s_rec_wr_valid,
    output wire                              s_rec_wr_ready,
    input  wire [QN_W-1:0]                   s_rec_wr_slot,
    input  wire [5:0]                        s_rec_wr_word,
    input  wire [63:0]                       s_rec_wr_data,
    output wire                              rec_wr_busy,

    // the pin (the context table's question, qp_ctx_table): whether slot
    // pin_slot has work outside its records, in the queue manager, the
    // requester or the responder (pin_busy answers the pin_slot of three
    // cycles before); and the receive side's hold of a moving slot: a
    // packet for rx_hold_qp waits while rx_hold
    input  wire [QN_W-1:0]                   pin_slot,
    output reg                               pin_busy = 1'b0,
    output wire [23:0]                       rx_hold_qp,
    input  wire                              rx_hold
);

// The record's words by module: every module keeps its own records' layout
// (its rec_map); the record is their ranges side by side, each aligned to
// its size, so a module's word is the low bits of the record's. The
// responder's range is the widest: its READ and atomic records (READ_EN)
// and the mp receive bitmap (MP_W) take up to 20 words.
localparam REC_WORD_W = 6;             // (the ports' word width)
localparam QPC_REC_LOG = 3, QM_REC_LOG = 3, CQ_REC_LOG = 3, REQ_REC_LOG = 3, RSP_REC_LOG = 5;
localparam QPC_REC_BASE = 0, QM_REC_BASE = 8, CQ_REC_BASE = 16, REQ_REC_BASE = 24, RSP_REC_BASE = 32;

// the ring entry formats: hw/formats/rnic_formats.rdl
`include "rnic_formats.vh"

// the pin: each module's answer, registered once more (timing)
wire qm_pin_busy, req_pin_busy, rsp_pin_busy;
always @(posedge clk) begin
    pin_busy <= !rst && (qm_pin_busy || req_pin_busy || rsp_pin_busy);
end

// context and MR-guard signals the sections below share
wire ex_ctx_mp;
wire rs_ctx_mp;
wire [2:0] ex_ctx_mp_wshift;
wire [2:0] rs_ctx_mp_wshift;
wire [31:0] rs_wr_key;
wire [3:0] rs_wr_access;
wire rs_wr_guard_ok;
wire mr_change;
wire [2:0] ex_ctx_spray_log;

// ---------------------------------------------------------------- QP and MR tables
wire [QN_W-1:0] ex_ctx_qpn;
wire [2:0] ex_ctx_state;
wire [2:0] ex_ctx_pmtu;
wire [23:0] ex_ctx_dest_qpn;
wire [47:0] ex_ctx_dmac;
wire [31:0] ex_ctx_dip;
wire [15:0] ex_ctx_udp_sport;
wire [15:0] ex_ctx_pd;
wire [QN_W-1:0] rs_ctx_qpn;
wire [2:0] rs_ctx_state;
wire [2:0] rs_ctx_pmtu;
wire rs_ctx_remote_write;
wire rs_ctx_remote_read;
wire rs_ctx_remote_atomic;
wire [23:0] rs_ctx_dest_qpn;
wire [47:0] rs_ctx_dmac;
wire [31:0] rs_ctx_dip;
wire [15:0] rs_ctx_udp_sport;
wire [15:0] rs_ctx_pd;
wire [QN_W-1:0] rs_ctx_rcq;
wire [63:0] rs_ctx_rq_base;
wire [3:0] rs_ctx_rq_log;
wire load_rtr;
wire load_rts;
wire load_reset;
wire [QN_W-1:0] load_qpn, load_qpn_next;
wire [23:0] load_psn;
wire [10:0] load_retry;
wire [2:0] load_spray;
wire load_err;
wire [4:0] rs_ctx_min_rnr_timer;
wire [2:0] rs_ctx_max_dest_rd_atomic;
wire [2:0] ex_ctx_max_rd_atomic;
wire [QN_W-1:0] ex_sq_hold_qn;
wire ex_sq_hold;
wire ex_set_err;
wire [QN_W-1:0] ex_set_err_qpn;
wire rs_set_err;
wire [QN_W-1:0] rs_set_err_qpn;

// the record port onto the modules' ports (REC_PORT 0: the modules tie
// theirs off and no command comes)
wire [4:0] rp_rd_valid;
wire [4:0] rp_rd_ready;
wire [QN_W-1:0] rp_rd_slot;
wire [REC_WORD_W-1:0] rp_rd_word;
wire [4:0] rp_rd_data_valid;
wire [5*64-1:0] rp_rd_data;
wire [4:0] rp_wr_valid;
wire [4:0] rp_wr_ready;
wire [QN_W-1:0] rp_wr_slot;
wire [REC_WORD_W-1:0] rp_wr_word;
wire [63:0] rp_wr_data;
wire [4:0] rp_wr_busy;
rec_port_mux #(
    .N(5),
    .SLOT_W(QN_W),
    .WORD_W(REC_WORD_W),
    .BASE({32'd0 + RSP_REC_BASE, 32'd0 + REQ_REC_BASE, 32'd0 + CQ_REC_BASE, 32'd0 + QM_REC_BASE,
           32'd0 + QPC_REC_BASE}),
    .LOG({32'd0 + RSP_REC_LOG, 32'd0 + REQ_REC_LOG, 32'd0 + CQ_REC_LOG, 32'd0 + QM_REC_LOG,
          32'd0 + QPC_REC_LOG})
) rec_mux_inst (
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
    .rec_wr_busy(rec_wr_busy),
    .p_rd_valid(rp_rd_valid),
    .p_rd_ready(rp_rd_ready),
    .p_rd_slot(rp_rd_slot),
    .p_rd_word(rp_rd_word),
    .p_rd_data_valid(rp_rd_data_valid),
    .p_rd_data(rp_rd_data),
    .p_wr_valid(rp_wr_valid),
    .p_wr_ready(rp_wr_ready),
    .p_wr_slot(rp_wr_slot),
    .p_wr_word(rp_wr_word),
    .p_wr_data(rp_wr_data),
    .p_wr_busy(rp_wr_busy)
);
// (a module sees the low bits of the word: the mux has routed by the rest)
wire unused_rp_word = ^{rp_rd_word[REC_WORD_W-1:RSP_REC_LOG], rp_wr_word[REC_WORD_W-1:RSP_REC_LOG]};

wire qpc_sweep;
wire qm_queues_sweep;
qp_context #(
    .NUM_QP(NUM_Q),
    .QN_W(QN_W),
    .DMAC_N(DMAC_N),
    .RC_EN(RC_EN),
    .REC_PORT(REC_PORT),
    .REC_WORDS(1 << QPC_REC_LOG)
) qpc_inst (
    .clk(clk),
    .rst(rst),
    .reg_sel(reg_qp_sel),
    .reg_state(reg_qp_state),
    .reg_pmtu(reg_qp_pmtu),
    .reg_remote_write(reg_qp_remote_write),
    .reg_remote_read(reg_qp_remote_read),
    .reg_remote_atomic(reg_qp_remote_atomic),
    .reg_spray_log(reg_qp_spray_log),
    .reg_mp(reg_qp_mp),
    .reg_mp_wshift(reg_qp_mp_wshift),
    .reg_dest_qpn(reg_qp_dest_qpn),
    .reg_sq_psn(reg_qp_sq_psn),
    .reg_rq_psn(reg_qp_rq_psn),
    .reg_dmac({reg_qp_dmac_hi, reg_qp_dmac_lo}),
    .reg_udp_sport(reg_qp_udp_sport),
    .reg_dip(reg_qp_dip),
    .reg_pd(reg_qp_pd),
    .reg_rcq(reg_qp_rcq),
    .reg_rq_base({reg_qp_rq_base_hi, reg_qp_rq_base_lo}),
    .reg_rq_size(reg_qp_rq_size),
    .reg_timeout(reg_qp_timeout),
    .reg_retry_cnt(reg_qp_retry_cnt),
    .reg_rnr_retry(reg_qp_rnr_retry),
    .reg_min_rnr_timer(reg_qp_min_rnr_timer),
    .reg_max_rd_atomic(reg_qp_max_rd_atomic),
    .reg_max_dest_rd_atomic(reg_qp_max_dest_rd_atomic),
    .reg_cmd(reg_qp_cmd),
    .reg_cmd_valid(reg_qp_cmd_valid),
    .reg_err(qp_reg_err),
    .reg_err_dmac(qp_reg_err_dmac),
    .sel_state(sel_qp_state),
    .set_err_a(ex_set_err),
    .set_err_a_qpn(ex_set_err_qpn),
    .set_err_b(rs_set_err),
    .set_err_b_qpn(rs_set_err_qpn),
    .load_rtr(load_rtr),
    .load_rts(load_rts),
    .load_reset(load_reset),
    .load_qpn(load_qpn),
    .load_qpn_next(load_qpn_next),
    .load_psn(load_psn),
    .load_retry(load_retry),
    .load_spray(load_spray),
    .load_err(load_err),
    .a_qpn(ex_ctx_qpn),
    .a_state(ex_ctx_state),
    .a_pmtu(ex_ctx_pmtu),
    .a_dest_qpn(ex_ctx_dest_qpn),
    .a_dmac(ex_ctx_dmac),
    .a_dip(ex_ctx_dip),
    .a_udp_sport(ex_ctx_udp_sport),
    .a_spray_log(ex_ctx_spray_log),
    .a_mp(ex_ctx_mp),
    .a_mp_wshift(ex_ctx_mp_wshift),
    .a_pd(ex_ctx_pd),
    .a_max_rd_atomic(ex_ctx_max_rd_atomic),
    .b_qpn(rs_ctx_qpn),
    .b_state(rs_ctx_state),
    .b_pmtu(rs_ctx_pmtu),
    .b_remote_write(rs_ctx_remote_write),
    .b_remote_read(rs_ctx_remote_read),
    .b_remote_atomic(rs_ctx_remote_atomic),
    .b_dest_qpn(rs_ctx_dest_qpn),
    .b_dmac(rs_ctx_dmac),
    .b_dip(rs_ctx_dip),
    .b_udp_sport(rs_ctx_udp_sport),
    .b_pd(rs_ctx_pd),
    .b_rcq(rs_ctx_rcq),
    .b_rq_base(rs_ctx_rq_base),
    .b_rq_log(rs_ctx_rq_log),
    .b_min_rnr_timer(rs_ctx_min_rnr_timer),
    .b_max_dest_rd_atomic(rs_ctx_max_dest_rd_atomic),
    .b_mp(rs_ctx_mp),
    .b_mp_wshift(rs_ctx_mp_wshift),
    .sweep(qpc_sweep),
    .s_rec_rd_valid(rp_rd_valid[0]),
    .s_rec_rd_ready(rp_rd_ready[0]),
    .s_rec_rd_slot(rp_rd_slot),
    .s_rec_rd_word(rp_rd_word[QPC_REC_LOG-1:0]),
    .m_rec_rd_data_valid(rp_rd_data_valid[0]),
    .m_rec_rd_data(rp_rd_data[0*64 +: 64]),
    .s_rec_wr_valid(rp_wr_valid[0]),
    .s_rec_wr_ready(rp_wr_ready[0]),
    .s_rec_wr_slot(rp_wr_slot),
    .s_rec_wr_word(rp_wr_word[QPC_REC_LOG-1:0]),
    .s_rec_wr_data(rp_wr_data),
    .rec_wr_busy(rp_wr_busy[0])
);

wire [31:0] ex_mr_key;
wire [63:0] ex_mr_va;
wire [31:0] ex_mr_len;
wire [15:0] ex_mr_pd;
wire [3:0] ex_mr_access;
wire ex_mr_ok;
wire [63:0] ex_mr_bus;
wire [31:0] rs_mr_key;
wire [63:0] rs_mr_va;
wire [31:0] rs_mr_len;
wire [15:0] rs_mr_pd;
wire [3:0] rs_mr_access;
wire rs_mr_ok;
wire [63:0] rs_mr_bus;

mr_table #(
    .NUM_MR(NUM_MR)
) mr_inst (
    .clk(clk),
    .rst(rst),
    .reg_sel(reg_mr_sel),
    .reg_key(reg_mr_key),
    .reg_va({reg_mr_va_hi, reg_mr_va_lo}),
    .reg_len(reg_mr_len),
    .reg_bus({reg_mr_bus_hi, reg_mr_bus_lo}),
    .reg_pd(reg_mr_pd),
    .reg_access(reg_mr_access),
    .reg_cmd(reg_mr_cmd),
    .reg_cmd_valid(reg_mr_cmd_valid),
    .reg_err(mr_reg_err),
    .a_key(ex_mr_key),
    .a_va(ex_mr_va),
    .a_len(ex_mr_len),
    .a_pd(ex_mr_pd),
    .a_access(ex_mr_access),
    .a_ok(ex_mr_ok),
    .a_bus(ex_mr_bus),
    .b_key(rs_mr_key),
    .b_va(rs_mr_va),
    .b_len(rs_mr_len),
    .b_pd(rs_mr_pd),
    .b_access(rs_mr_access),
    .b_ok(rs_mr_ok),
    .b_bus(rs_mr_bus),
    .c_key(rs_wr_key),
    .c_bus(m_rs_wr_pcie_addr),
    .c_len({{(32-LEN_W){1'b0}}, m_rs_wr_len}),
    .c_pd(rs_mr_pd),
    .c_access(rs_wr_access),
    .c_ok(rs_wr_guard_ok),
    .change(mr_change)
);

// ---------------------------------------------------------------- queues
wire qm_sq_valid;
wire [QN_W-1:0] qm_sq_qn;
wire [63:0] qm_sq_wqe_addr;
wire [15:0] qm_sq_index;
wire [QN_W-1:0] qm_sq_cqn;
wire qm_sq_ready;
wire sq_done;
wire [QN_W-1:0] sq_done_qn;
wire sq_done_ready;
wire [QN_W-1:0] acq_qpn;
wire [QN_W-1:0] acq_cqn;
wire cq_alloc_valid;
wire [QN_W-1:0] cq_alloc_cqn;
wire cq_alloc_done;
wire cq_alloc_ok;
wire cq_alloc_bad;
wire [63:0] cq_alloc_addr;
wire cq_alloc_phase;
wire cq_notify;
wire [QN_W-1:0] cq_notify_cqn;

// ---------------------------------------------------------------- doorbells by QP number
// looked up in the QP directory (below), then merged with the doorbells by
// slot; one by slot from MMIO goes first in its cycle, the other waits
wire [15:0] dbn_lk_qpn;
wire dbn_lk_hit;
wire [QN_W-1:0] dbn_lk_slot;
wire dbn_sq_valid, dbn_rq_valid;
wire [QN_W-1:0] dbn_slot;
wire [15:0] dbn_pi;
wire dbn_ready = !reg_sq_db_valid && !reg_rq_db_valid;
qpn_doorbell #(
    .QN_W(QN_W),
    .LK_LAT(2)
) qpn_doorbell_inst (
    .clk(clk),
    .rst(rst),
    .s_sq_valid(reg_sq_dbn_valid),
    .s_sq_qpn(reg_sq_dbn_qpn),
    .s_sq_pi(reg_sq_dbn_pi),
    .s_rq_valid(reg_rq_dbn_valid),
    .s_rq_qpn(reg_rq_dbn_qpn),
    .s_rq_pi(reg_rq_dbn_pi),
    .busy(dbn_busy),
    .idle(dbn_idle),
    .lk_qpn(dbn_lk_qpn),
    .lk_hit(dbn_lk_hit),
    .lk_slot(dbn_lk_slot),
    .lk_busy(fd_active),
    .miss_en(fd_miss_en),
    .miss_records(fd_records),
    .miss_valid(db_miss_valid),
    .miss_qpn(db_miss_qpn),
    .miss_done(db_miss_done),
    .miss_ok(db_miss_ok),
    .miss_full(db_miss_full),
    .m_sq_valid(dbn_sq_valid),
    .m_rq_valid(dbn_rq_valid),
    .m_slot(dbn_slot),
    .m_pi(dbn_pi),
    .m_ready(dbn_ready),
    .err_valid(dbn_err_valid),
    .err_qpn(dbn_err_qpn),
    .look_valid(look_db_valid),
    .look_hit(look_db_hit),
    .waiting(dbn_waiting),
    .waiting_max(dbn_waiting_max)
);
assign dir_lk_hit = dbn_lk_hit;
assign dir_lk_slot = dbn_lk_slot;
wire sq_db_valid = reg_sq_db_valid || dbn_sq_valid;
wire [15:0] sq_db_qn = reg_sq_db_valid ? reg_sq_db_qn : {{(16-QN_W){1'b0}}, dbn_slot};
wire [15:0] sq_db_pi = reg_sq_db_valid ? reg_sq_db_pi : dbn_pi;
wire rq_db_valid = reg_rq_db_valid || dbn_rq_valid;
wire [15:0] rq_db_qpn = reg_rq_db_valid ? reg_rq_db_qpn : {{(16-QN_W){1'b0}}, dbn_slot};
wire [15:0] rq_db_pi = reg_rq_db_valid ? reg_rq_db_pi : dbn_pi;

queue_manager #(
    .NUM_Q(NUM_Q),
    .QN_W(QN_W),
    .REC_PORT(REC_PORT),
    .REC_WORDS(1 << QM_REC_LOG),
    .CQ_REC_WORDS(1 << CQ_REC_LOG)
) qm_inst (
    .clk(clk),
    .rst(rst),
    .reg_q_sel(reg_q_sel),
    .reg_q_base_lo(reg_q_base_lo),
    .reg_q_base_hi(reg_q_base_hi),
    .reg_q_size(reg_q_size),
    .reg_q_cqn(reg_q_cqn),
    .reg_q_cmd(reg_q_cmd),
    .reg_q_cmd_valid(reg_q_cmd_valid),
    .reg_sq_db_qn(sq_db_qn),
    .reg_sq_db_pi(sq_db_pi),
    .reg_sq_db_valid(sq_db_valid),
    .reg_cq_db_cqn(reg_cq_db_cqn),
    .reg_cq_db_ci(reg_cq_db_ci),
    .reg_cq_db_valid(reg_cq_db_valid),
    .reg_cq_arm_cqn(reg_cq_arm_cqn),
    .reg_cq_arm_valid(reg_cq_arm_valid),
    .sel_sq_pi(sel_sq_pi),
    .sel_sq_ci(sel_sq_ci),
    .sel_cq_pi(sel_cq_pi),
    .sel_sq_en(sel_sq_en),
    .sel_cq_en(sel_cq_en),
    .sel_cq_armed(sel_cq_armed),
    .sel_cq_phase(sel_cq_phase),
    .m_sq_valid(qm_sq_valid),
    .m_sq_qn(qm_sq_qn),
    .m_sq_wqe_addr(qm_sq_wqe_addr),
    .m_sq_index(qm_sq_index),
    .m_sq_cqn(qm_sq_cqn),
    .m_sq_ready(qm_sq_ready),
    .sq_hold_qn(ex_sq_hold_qn),
    .sq_hold(ex_sq_hold),
    .sq_done(sq_done),
    .sq_done_qn(sq_done_qn),
    .sq_done_back(sq_done_back),
    .sq_done_ready(sq_done_ready),
    .lookup_qn(acq_qpn),
    .lookup_cqn(acq_cqn),
    .cq_alloc_valid(cq_alloc_valid),
    .cq_alloc_cqn(cq_alloc_cqn),
    .cq_alloc_done(cq_alloc_done),
    .cq_alloc_ok(cq_alloc_ok),
    .cq_alloc_bad(cq_alloc_bad),
    .cq_alloc_addr(cq_alloc_addr),
    .cq_alloc_phase(cq_alloc_phase),
    .cq_notify(cq_notify),
    .cq_notify_cqn(cq_notify_cqn),
    .msi_vector(msi_vector),
    .msi_valid(msi_valid),
    .msi_ready(msi_ready),
    .err_valid(qm_err_valid),
    .err_code(qm_err_code),
    .err_qn(qm_err_qn),
    .busy(qm_busy),
    .pin_qn(pin_slot),
    .pin_busy(qm_pin_busy),
    .sweep(qm_queues_sweep),
    .s_rec_rd_valid(rp_rd_valid[1]),
    .s_rec_rd_ready(rp_rd_ready[1]),
    .s_rec_rd_slot(rp_rd_slot),
    .s_rec_rd_word(rp_rd_word[QM_REC_LOG-1:0]),
    .m_rec_rd_data_valid(rp_rd_data_valid[1]),
    .m_rec_rd_data(rp_rd_data[1*64 +: 64]),
    .s_rec_wr_valid(rp_wr_valid[1]),
    .s_rec_wr_ready(rp_wr_ready[1]),
    .s_rec_wr_slot(rp_wr_slot),
    .s_rec_wr_word(rp_wr_word[QM_REC_LOG-1:0]),
    .s_rec_wr_data(rp_wr_data),
    .rec_wr_busy(rp_wr_busy[1]),
    .cq_s_rec_rd_valid(rp_rd_valid[2]),
    .cq_s_rec_rd_ready(rp_rd_ready[2]),
    .cq_s_rec_rd_slot(rp_rd_slot),
    .cq_s_rec_rd_word(rp_rd_word[CQ_REC_LOG-1:0]),
    .cq_m_rec_rd_data_valid(rp_rd_data_valid[2]),
    .cq_m_rec_rd_data(rp_rd_data[2*64 +: 64]),
    .cq_s_rec_wr_valid(rp_wr_valid[2]),
    .cq_s_rec_wr_ready(rp_wr_ready[2]),
    .cq_s_rec_wr_slot(rp_wr_slot),
    .cq_s_rec_wr_word(rp_wr_word[CQ_REC_LOG-1:0]),
    .cq_s_rec_wr_data(rp_wr_data),
    .cq_rec_wr_busy(rp_wr_busy[2])
);
// the records swept after a reset: the register block holds MMIO meanwhile
assign qm_sweep = qm_queues_sweep || qpc_sweep;

// ---------------------------------------------------------------- the READ table
// The READs the requester issued and the responder places the responses
// of (READ_EN; read_track.v)
initial begin
    if (ATOMIC_EN != 0 && (READ_EN == 0 || RC_EN == 0)) begin
        $error("rnic_transport: atomics (ATOMIC_EN) run in the READ engine on rc QPs: READ_EN and RC_EN too");
        $finish;
    end
end

localparam NUM_RD = 4;
localparam RD_IW = 2;
wire rx_ack_room;
wire rx_acks_idle;
wire rt_alloc_ready, rt_alloc_valid;
wire [23:0] rt_alloc_first, rt_alloc_last;
wire [63:0] rt_alloc_bus;
wire [31:0] rt_alloc_key, rt_alloc_len;
wire rt_alloc_atomic;
wire rt_free_valid;
wire [QN_W-1:0] rt_free_qpn;
wire [23:0] rt_free_last;
wire [QN_W-1:0] rt_q_qpn;
wire rt_q_busy;
wire rt_q_full;
wire rt_fence_valid;
wire rt_hold;
wire sq_done_back;
wire [QN_W-1:0] rt_lk_qpn;
wire [23:0] rt_lk_psn;
wire rt_lk_nak;
wire rt_hit, rt_asked, rt_cov, rt_cov_asked;
wire [RD_IW-1:0] rt_idx, rt_cov_idx;
wire [23:0] rt_first, rt_last, rt_next, rt_cov_next;
wire [63:0] rt_bus;
wire [31:0] rt_key, rt_len;
wire rt_atomic;
wire rt_adv_valid, rt_ask_valid;
wire [RD_IW-1:0] rt_adv_idx, rt_ask_idx;
wire [23:0] rt_adv_psn, rt_ask_psn;
generate
    if (READ_EN != 0) begin : g_read_track
        read_track #(
            .QN_W(QN_W),
            .NUM_RD(NUM_RD),
            .RD_IW(RD_IW)
        ) rt_inst (
            .clk(clk),
            .rst(rst),
            .alloc_ready(rt_alloc_ready),
            .alloc_valid(rt_alloc_valid),
            .alloc_qpn(rt_q_qpn),
            .alloc_first(rt_alloc_first),
            .alloc_last(rt_alloc_last),
            .alloc_bus(rt_alloc_bus),
            .alloc_key(rt_alloc_key),
            .alloc_len(rt_alloc_len),
            .alloc_atomic(rt_alloc_atomic),
            .free_valid(rt_free_valid),
            .free_qpn(rt_free_qpn),
            .free_last(rt_free_last),
            .drop_valid(load_rts || load_reset || load_rtr || load_err),
            .drop_qpn(load_qpn),
            .lk_qpn(rt_lk_qpn),
            .lk_psn(rt_lk_psn),
            .lk_nak(rt_lk_nak),
            .lk_hit(rt_hit),
            .lk_idx(rt_idx),
            .lk_first(rt_first),
            .lk_last(rt_last),
            .lk_next(rt_next),
            .lk_bus(rt_bus),
            .lk_key(rt_key),
            .lk_len(rt_len),
            .lk_atomic(rt_atomic),
            .lk_asked(rt_asked),
            .lk_cov(rt_cov),
            .lk_cov_idx(rt_cov_idx),
            .lk_cov_next(rt_cov_next),
            .lk_cov_asked(rt_cov_asked),
            .adv_valid(rt_adv_valid),
            .adv_idx(rt_adv_idx),
            .adv_psn(rt_adv_psn),
            .ask_valid(rt_ask_valid),
            .ask_idx(rt_ask_idx),
            .ask_psn(rt_ask_psn),
            .q_qpn(rt_q_qpn),
            .q_busy(rt_q_busy),
            .q_max(ex_ctx_max_rd_atomic),
            .q_full(rt_q_full),
            .fence_valid(rt_fence_valid),
            .fence_qpn(rt_q_qpn),
            .hold_qpn(ex_sq_hold_qn),
            .hold(rt_hold)
        );
    end else begin : g_no_read_track
        // (no READ WQE is ever decoded, no response looked up)
        assign rt_alloc_ready = 1'b0;
        assign rt_q_busy = 1'b0;
        assign rt_q_full = 1'b0;
        assign rt_hold = 1'b0;
        assign {rt_hit, rt_asked, rt_cov, rt_cov_asked} = 4'd0;
        assign {rt_idx, rt_cov_idx} = {(2*RD_IW){1'b0}};
        assign {rt_first, rt_last, rt_next, rt_cov_next} = 96'd0;
        assign rt_bus = 64'd0;
        assign {rt_key, rt_len} = 64'd0;
        assign rt_atomic = 1'b0;
        /* verilator lint_off UNUSEDSIGNAL */
        wire rt_unused = ^{rt_alloc_valid, rt_alloc_first, rt_alloc_last, rt_alloc_bus,
            rt_alloc_key, rt_alloc_len, rt_free_valid, rt_free_qpn, rt_free_last, rt_q_qpn,
            rt_lk_qpn, rt_lk_psn, rt_lk_nak, rt_adv_valid, rt_adv_idx, rt_adv_psn, rt_ask_valid,
            rt_ask_idx, rt_ask_psn, rt_fence_valid, rt_alloc_atomic, ex_ctx_max_rd_atomic};
        /* verilator lint_on UNUSEDSIGNAL */
    end
endgenerate

// ---------------------------------------------------------------- executor (requester)

wire rx_ack_valid;
wire [QN_W-1:0] rx_ack_qpn;
wire [23:0] rx_ack_psn;
wire [7:0] rx_ack_syndrome;
wire [MP_W-2:0] rx_ack_lost;
/* verilator lint_off UNUSEDSIGNAL */
wire [23:0] rx_ack_msn;
/* verilator lint_on UNUSEDSIGNAL */

// CQE requests carry the bytes below the owner byte (the CQE writer adds it)
wire [QN_W-1:0] ex_cqe_cqn;
wire [CQE_OWNER_LSB-1:0] ex_cqe_data;
wire ex_cqe_valid;
wire ex_cqe_ready;
wire [QN_W-1:0] ac_cqe_cqn;
wire [CQE_OWNER_LSB-1:0] ac_cqe_data;
wire ac_cqe_valid;
wire ac_cqe_ready;


requester #(
    .DATA_W(DATA_W),
    .RAM_ADDR_W(RAM_ADDR_W),
    .QN_W(QN_W),
    .NUM_QP(NUM_Q),
    .LEN_W(LEN_W),
    .ID_W(ID_W),
    .CHUNK_LOG(CHUNK_LOG),
    .NUM_SLOTS(NUM_SLOTS),
    .WQE_RAM(WQE_RAM),
    .TX_RAM_BASE(TX_RAM_BASE),
    .NUM_TX_SLOTS(NUM_TX_SLOTS),
    .CLK_MHZ(CLK_MHZ),
    .MP_W(MP_W),
    .SEND_EN(SEND_EN),
    .READ_EN(READ_EN),
    .ATOMIC_EN(ATOMIC_EN),
    .OST_RINGS(OST_RINGS),
    .REC_PORT(REC_PORT),
    .REC_WORDS(1 << REQ_REC_LOG),
    .ID_TAG(ID_EXEC)
) req_inst (
    .clk(clk),
    .rst(rst),
    .cfg_path_thresh(reg_path_thresh),
    .cfg_resend_after_cqe(reg_debug_resend_after_cqe),
    .s_sq_valid(qm_sq_valid),
    .s_sq_qn(qm_sq_qn),
    .s_sq_wqe_addr(qm_sq_wqe_addr),
    .s_sq_index(qm_sq_index),
    .s_sq_cqn(qm_sq_cqn),
    .s_sq_ready(qm_sq_ready),
    .sq_done(sq_done),
    .sq_done_qn(sq_done_qn),
    .sq_done_back(sq_done_back),
    .sq_done_ready(sq_done_ready),
    .sq_hold_qn(ex_sq_hold_qn),
    .sq_hold(ex_sq_hold),
    .ctx_qpn(ex_ctx_qpn),
    .ctx_state(ex_ctx_state),
    .ctx_pmtu(ex_ctx_pmtu),
    .ctx_dest_qpn(ex_ctx_dest_qpn),
    .ctx_dmac(ex_ctx_dmac),
    .ctx_dip(ex_ctx_dip),
    .ctx_udp_sport(ex_ctx_udp_sport),
    .ctx_spray_log(ex_ctx_spray_log),
    .ctx_mp(ex_ctx_mp),
    .ctx_mp_wshift(ex_ctx_mp_wshift),
    .ctx_pd(ex_ctx_pd),
    .ctx_max_rd_atomic(ex_ctx_max_rd_atomic),
    .load_rts(load_rts),
    .load_reset(load_reset),
    .load_qpn(load_qpn),
    .load_qpn_next(load_qpn_next),
    .load_psn(load_psn),
    .load_retry(load_retry),
    .load_spray(load_spray),
    .flush_a(rs_set_err),
    .flush_a_qpn(rs_set_err_qpn),
    .flush_b(load_err),
    .flush_b_qpn(load_qpn),
    .set_err(ex_set_err),
    .set_err_qpn(ex_set_err_qpn),
    .mr_key(ex_mr_key),
    .mr_va(ex_mr_va),
    .mr_len(ex_mr_len),
    .mr_pd(ex_mr_pd),
    .mr_access(ex_mr_access),
    .mr_ok(ex_mr_ok),
    .mr_bus(ex_mr_bus),
    .rt_alloc_ready(rt_alloc_ready),
    .rt_alloc_valid(rt_alloc_valid),
    .rt_alloc_first(rt_alloc_first),
    .rt_alloc_last(rt_alloc_last),
    .rt_alloc_bus(rt_alloc_bus),
    .rt_alloc_key(rt_alloc_key),
    .rt_alloc_len(rt_alloc_len),
    .rt_alloc_atomic(rt_alloc_atomic),
    .rt_free_valid(rt_free_valid),
    .rt_free_qpn(rt_free_qpn),
    .rt_free_last(rt_free_last),
    .rt_q_qpn(rt_q_qpn),
    .rt_q_busy(rt_q_busy),
    .rt_q_full(rt_q_full),
    .rt_fence_valid(rt_fence_valid),
    .rt_hold(rt_hold),
    .m_rd_desc_pcie_addr(m_ex_rd_pcie_addr),
    .m_rd_desc_ram_addr(m_ex_rd_ram_addr),
    .m_rd_desc_len(m_ex_rd_len),
    .m_rd_desc_id(m_ex_rd_id),
    .m_rd_desc_valid(m_ex_rd_valid),
    .m_rd_desc_ready(m_ex_rd_ready),
    .s_rd_status_error(rd_status_error),
    .s_rd_status_valid(ex_rd_status),
    .s_rd_status_id(rd_status_id),
    .m_wr_desc_pcie_addr(m_ex_wr_pcie_addr),
    .m_wr_desc_ram_addr(m_ex_wr_ram_addr),
    .m_wr_desc_len(m_ex_wr_len),
    .m_wr_desc_id(m_ex_wr_id),
    .m_wr_desc_valid(m_ex_wr_valid),
    .m_wr_desc_ready(m_ex_wr_ready),
    .s_wr_status_valid(ex_wr_status),
    .ram_snoop_addr(ram_snoop_addr),
    .ram_snoop_data(ram_snoop_data),
    .ram_snoop_strb(ram_snoop_strb),
    .ram_snoop_en(ram_snoop_en),
    .m_pkt_dmac(m_ex_pkt_dmac),
    .m_pkt_dip(m_ex_pkt_dip),
    .m_pkt_udp_sport(m_ex_pkt_udp_sport),
    .m_pkt_opcode(m_ex_pkt_opcode),
    .m_pkt_se(m_ex_pkt_se),
    .m_pkt_ack_req(m_ex_pkt_ack_req),
    .m_pkt_dest_qp(m_ex_pkt_dest_qp),
    .m_pkt_psn(m_ex_pkt_psn),
    .m_pkt_reth_va(m_ex_pkt_reth_va),
    .m_pkt_reth_rkey(m_ex_pkt_reth_rkey),
    .m_pkt_reth_len(m_ex_pkt_reth_len),
    .m_pkt_imm(m_ex_pkt_imm),
    .m_pkt_atomic_cmp(m_ex_pkt_atomic_cmp),
    .m_pkt_payload_addr(m_ex_pkt_payload_addr),
    .m_pkt_payload_len(m_ex_pkt_payload_len),
    .m_pkt_valid(m_ex_pkt_valid),
    .m_pkt_ready(m_ex_pkt_ready),
    .pkt_done(ex_pkt_done),
    .s_ack_valid(rx_ack_valid),
    .s_ack_qpn(rx_ack_qpn),
    .s_ack_psn(rx_ack_psn),
    .s_ack_syndrome(rx_ack_syndrome),
    .s_ack_lost(rx_ack_lost),
    .ack_room(rx_ack_room),
    .acks_idle(rx_acks_idle),
    .m_cqe_cqn(ex_cqe_cqn),
    .m_cqe_data(ex_cqe_data),
    .m_cqe_valid(ex_cqe_valid),
    .m_cqe_ready(ex_cqe_ready),
    .acq_qpn(acq_qpn),
    .acq_cqn(acq_cqn),
    .m_acq_cqn(ac_cqe_cqn),
    .m_acq_data(ac_cqe_data),
    .m_acq_valid(ac_cqe_valid),
    .m_acq_ready(ac_cqe_ready),
    .sel_qpn(reg_qp_sel[QN_W-1:0]),
    .sel_sq_psn(sel_sq_psn),
    .pin_qpn(pin_slot),
    .pin_busy(req_pin_busy),
    .err_valid(ex_err_valid),
    .err_code(ex_err_code),
    .err_qn(ex_err_qn),
    .stat_ack_drop(stat_ack_drop),
    .stat_retransmit(stat_retransmit),
    .stat_timeout(stat_timeout),
    .stat_nak_seq(stat_nak_seq),
    .stat_rnr(stat_rnr),
    .stat_path_out(stat_path_out),
    .stat_path_back(stat_path_back),
    .stat_probe(stat_probe),
    .stat_probe_rtt_v(stat_probe_rtt_v),
    .stat_probe_rtt(stat_probe_rtt),
    .stat_ring_busy(stat_ring_busy),
    .s_rec_rd_valid(rp_rd_valid[3]),
    .s_rec_rd_ready(rp_rd_ready[3]),
    .s_rec_rd_slot(rp_rd_slot),
    .s_rec_rd_word(rp_rd_word[REQ_REC_LOG-1:0]),
    .m_rec_rd_data_valid(rp_rd_data_valid[3]),
    .m_rec_rd_data(rp_rd_data[3*64 +: 64]),
    .s_rec_wr_valid(rp_wr_valid[3]),
    .s_rec_wr_ready(rp_wr_ready[3]),
    .s_rec_wr_slot(rp_wr_slot),
    .s_rec_wr_word(rp_wr_word[REQ_REC_LOG-1:0]),
    .s_rec_wr_data(rp_wr_data),
    .rec_wr_busy(rp_wr_busy[3])
);

// ------------------------------------------------------------ QP directory
// Received packets name their QP by number; the responder takes them by
// slot. The CQEs leave with the slot's QP number (below, at the CQE mux).
localparam RXD_META_W = 48 + 32 + 32 + 16 + 8 + 1 + 1 + 2 + 24 + 64 + 32 + 32 + 32 + 8 + 24 + 32
    + RXR_ADDR_W + 13 + RX_SLOT_W;
wire [47:0] rxd_pkt_smac;
wire [31:0] rxd_pkt_sip;
wire [31:0] rxd_pkt_dip;
wire [15:0] rxd_pkt_udp_sport;
wire [7:0] rxd_pkt_opcode;
wire rxd_pkt_se;
wire rxd_pkt_ack_req;
wire [1:0] rxd_pkt_pad_cnt;
wire [23:0] rxd_pkt_dest_qp;
wire [23:0] rxd_pkt_psn;
wire [63:0] rxd_pkt_reth_va;
wire [31:0] rxd_pkt_reth_rkey;
wire [31:0] rxd_pkt_reth_len;
wire [31:0] rxd_pkt_imm;
wire [7:0] rxd_pkt_aeth_syndrome;
wire [23:0] rxd_pkt_aeth_msn;
wire [31:0] rxd_pkt_cmp_lo;
wire [RXR_ADDR_W-1:0] rxd_pkt_payload_addr;
wire [12:0] rxd_pkt_payload_len;
wire [RX_SLOT_W-1:0] rxd_pkt_slot;
wire rxd_pkt_valid;
wire rxd_pkt_ready;
// a packet for a slot being moved waits (the context table's hold)
wire rsp_pkt_ready;
assign rx_hold_qp = rxd_pkt_dest_qp;
assign rxd_pkt_ready = rsp_pkt_ready && !rx_hold;
// every field but the QP number and the handshake, packed once each way
wire [RXD_META_W-1:0] rx_meta = {s_rx_pkt_smac, s_rx_pkt_sip, s_rx_pkt_dip, s_rx_pkt_udp_sport,
    s_rx_pkt_opcode, s_rx_pkt_se, s_rx_pkt_ack_req, s_rx_pkt_pad_cnt,
    s_rx_pkt_psn, s_rx_pkt_reth_va, s_rx_pkt_reth_rkey, s_rx_pkt_reth_len,
    s_rx_pkt_imm, s_rx_pkt_aeth_syndrome, s_rx_pkt_aeth_msn, s_rx_pkt_cmp_lo,
    s_rx_pkt_payload_addr, s_rx_pkt_payload_len, s_rx_pkt_slot};
wire [RXD_META_W-1:0] rxd_meta;
assign {rxd_pkt_smac, rxd_pkt_sip, rxd_pkt_dip, rxd_pkt_udp_sport,
        rxd_pkt_opcode, rxd_pkt_se, rxd_pkt_ack_req, rxd_pkt_pad_cnt,
        rxd_pkt_psn, rxd_pkt_reth_va, rxd_pkt_reth_rkey, rxd_pkt_reth_len,
        rxd_pkt_imm, rxd_pkt_aeth_syndrome, rxd_pkt_aeth_msn, rxd_pkt_cmp_lo,
        rxd_pkt_payload_addr, rxd_pkt_payload_len, rxd_pkt_slot} = rxd_meta;
wire [QN_W-1:0] cqe_slot;
wire [23:0] cqe_qpn;

generate
    if (QPN_W > 0) begin : g_qp_dir
        qp_dir #(
            .NUM_Q(NUM_Q),
            .QN_W(QN_W),
            .QPN_W(QPN_W),
            .META_W(RXD_META_W)
        ) qp_dir_inst (
            .clk(clk),
            .rst(rst),
            .cmd_slot(fd_active ? fd_slot : reg_qp_sel),
            .cmd_qpn(fd_active ? fd_qpn : reg_qp_bind_qpn),
            .cmd_op(fd_active ? fd_op : reg_qp_bind_op),
            .cmd_valid(fd_active ? fd_valid : reg_qp_bind_valid),
            .busy(qp_bind_busy),
            .cmd_err(qp_bind_err),
            .rb_qpn(qp_bind_rb_qpn),
            .rb_bound(qp_bind_rb_bound),
            .s_pkt_valid(s_rx_pkt_valid),
            .s_pkt_ready(s_rx_pkt_ready),
            .s_pkt_dest_qp(s_rx_pkt_dest_qp),
            .s_pkt_meta(rx_meta),
            .m_pkt_valid(rxd_pkt_valid),
            .m_pkt_ready(rxd_pkt_ready),
            .m_pkt_dest_qp(rxd_pkt_dest_qp),
            .m_pkt_meta(rxd_meta),
            .cqe_slot(cqe_slot),
            .cqe_qpn(cqe_qpn),
            .lk_qpn(fd_active ? fd_lk_qpn : {8'd0, dbn_lk_qpn}),
            .lk_hit(dbn_lk_hit),
            .lk_slot(dbn_lk_slot),
            .miss_en(fd_miss_en),
            .miss_records(fd_records),
            .miss_valid(rx_miss_valid),
            .miss_qpn(rx_miss_qpn),
            .miss_drop(rx_miss_drop),
            .free_from(fd_free_from),
            .free_valid(dir_free_valid),
            .free_slot(dir_free_slot),
            .look_valid(look_rx_valid),
            .look_hit(look_rx_hit)
        );
    end else begin : g_no_qp_dir
        // QP n is slot n: no stage, and every command answers "no directory"
        assign rxd_meta = rx_meta;
        assign rxd_pkt_dest_qp = s_rx_pkt_dest_qp;
        assign rxd_pkt_valid = s_rx_pkt_valid;
        assign s_rx_pkt_ready = rxd_pkt_ready;
        assign qp_bind_busy = 1'b0;
        assign qp_bind_err = 3'd1;
        assign qp_bind_rb_bound = {16'd0, reg_qp_sel} < NUM_Q;
        assign qp_bind_rb_qpn = {8'd0, reg_qp_sel};
        assign cqe_qpn = {{(24-QN_W){1'b0}}, cqe_slot};
        assign dbn_lk_hit = {16'd0, dbn_lk_qpn} < NUM_Q;
        assign dbn_lk_slot = dbn_lk_qpn[QN_W-1:0];
        assign dir_free_valid = 1'b0;
        assign dir_free_slot = {QN_W{1'b0}};
        assign rx_miss_valid = 1'b0;
        assign rx_miss_qpn = 24'd0;
        assign {look_rx_valid, look_rx_hit} = 2'b00;
        /* verilator lint_off UNUSEDSIGNAL */
        wire unused_bind = ^{reg_qp_bind_qpn, reg_qp_bind_op, reg_qp_bind_valid, fd_active, fd_slot,
            fd_qpn, fd_op, fd_valid, fd_lk_qpn, fd_free_from, rx_miss_drop};
        /* verilator lint_on UNUSEDSIGNAL */
    end
endgenerate

// ---------------------------------------------------------------- responder
wire [QN_W-1:0] rs_cqe_cqn;
wire rs_ack_valid;
wire rs_ack_ready;
wire [23:0] rs_rr_psn;
wire [23:0] rs_rr_msn;
wire [63:0] rs_rr_bus;
wire [31:0] rs_rr_len;
wire [3:0] rs_rr_pmtu_log;
wire [47:0] rs_rr_dmac;
wire [31:0] rs_rr_dip;
wire [15:0] rs_rr_udp_sport;
wire [23:0] rs_rr_dest_qp;
wire rs_rr_ack;
wire [7:0] rs_rr_syndrome;
wire [1:0] rs_rr_atomic;
wire [63:0] rs_rr_opa;
wire [63:0] rs_rr_opb;
wire [QN_W-1:0] rs_rr_qpn;
wire rr_rec_valid;
// the staging RAM word writes of the responder (our atomics' answers),
// behind read_reply's
wire [RAM_ADDR_W-SEG_W-1:0] rs_at_ram_wr_addr;
wire [DATA_W-1:0] rs_at_ram_wr_data;
wire [DATA_W/8-1:0] rs_at_ram_wr_strb;
wire rs_at_ram_wr_en, rs_at_ram_wr_ready;
wire [QN_W-1:0] rr_rec_qpn;
wire [23:0] rr_rec_psn;
wire [63:0] rr_rec_orig;
wire rs_rr_valid;
wire rs_rr_ready;
wire [7:0] rr_jobs_out;
wire [CQE_OWNER_LSB-1:0] rs_cqe_data;
wire rs_cqe_valid;
wire rs_cqe_ready;

responder #(
    .DATA_W(DATA_W),
    .RAM_ADDR_W(RAM_ADDR_W),
    .RX_ADDR_W(RXR_ADDR_W),
    .RX_SLOT_W(RX_SLOT_W),
    .NUM_QP(NUM_Q),
    .QN_W(QN_W),
    .LEN_W(LEN_W),
    .ID_W(ID_W),
    .RX_RAM_BASE(RX_RAM_BASE),
    .RQWQE_RAM(RQWQE_RAM),
    .MP_W(MP_W),
    .SEND_EN(SEND_EN),
    .MP_PEND(MP_PEND),
    .MP_WIMM(MP_WIMM),
    .RC_EN(RC_EN),
    .READ_EN(READ_EN),
    .RD_IW(RD_IW),
    .ATOMIC_EN(ATOMIC_EN),
    .ATOM_RQ_RAM(ATOM_RQ_RAM),
    .REC_PORT(REC_PORT),
    .REC_WORDS(1 << RSP_REC_LOG),
    .ID_TAG(ID_RESP)
) resp_inst (
    .clk(clk),
    .rst(rst),
    .s_pkt_smac(rxd_pkt_smac),
    .s_pkt_sip(rxd_pkt_sip),
    .s_pkt_dip(rxd_pkt_dip),
    .s_pkt_udp_sport(rxd_pkt_udp_sport),
    .s_pkt_se(rxd_pkt_se),
    .s_pkt_pad_cnt(rxd_pkt_pad_cnt),
    .s_pkt_opcode(rxd_pkt_opcode),
    .s_pkt_ack_req(rxd_pkt_ack_req),
    .s_pkt_dest_qp(rxd_pkt_dest_qp),
    .s_pkt_psn(rxd_pkt_psn),
    .s_pkt_reth_va(rxd_pkt_reth_va),
    .s_pkt_reth_rkey(rxd_pkt_reth_rkey),
    .s_pkt_reth_len(rxd_pkt_reth_len),
    .s_pkt_imm(rxd_pkt_imm),
    .s_pkt_aeth_syndrome(rxd_pkt_aeth_syndrome),
    .s_pkt_aeth_msn(rxd_pkt_aeth_msn),
    .s_pkt_cmp_lo(rxd_pkt_cmp_lo),
    .s_pkt_payload_addr(rxd_pkt_payload_addr),
    .s_pkt_payload_len(rxd_pkt_payload_len),
    .s_pkt_slot(rxd_pkt_slot),
    .s_pkt_valid(rxd_pkt_valid && !rx_hold),
    .s_pkt_ready(rsp_pkt_ready),
    .m_free_valid(m_rx_free_valid),
    .m_free_slot(m_rx_free_slot),
    .ctx_qpn(rs_ctx_qpn),
    .ctx_state(rs_ctx_state),
    .ctx_pmtu(rs_ctx_pmtu),
    .ctx_remote_write(rs_ctx_remote_write),
    .ctx_remote_read(rs_ctx_remote_read),
    .ctx_remote_atomic(rs_ctx_remote_atomic),
    .ctx_dest_qpn(rs_ctx_dest_qpn),
    .ctx_dmac(rs_ctx_dmac),
    .ctx_dip(rs_ctx_dip),
    .ctx_udp_sport(rs_ctx_udp_sport),
    .ctx_pd(rs_ctx_pd),
    .ctx_rcq(rs_ctx_rcq),
    .ctx_rq_base(rs_ctx_rq_base),
    .ctx_rq_log(rs_ctx_rq_log),
    .ctx_min_rnr_timer(rs_ctx_min_rnr_timer),
    .ctx_max_dest_rd_atomic(rs_ctx_max_dest_rd_atomic),
    .ctx_mp(rs_ctx_mp),
    .ctx_mp_wshift(rs_ctx_mp_wshift),
    .load_rtr(load_rtr),
    .load_reset(load_reset),
    .load_qpn(load_qpn),
    .load_qpn_next(load_qpn_next),
    .load_psn(load_psn),
    .set_err(rs_set_err),
    .set_err_qpn(rs_set_err_qpn),
    .rq_db_valid(rq_db_valid),
    .rq_db_qpn(rq_db_qpn),
    .rq_db_pi(rq_db_pi),
    .mr_key(rs_mr_key),
    .mr_va(rs_mr_va),
    .mr_len(rs_mr_len),
    .mr_pd(rs_mr_pd),
    .mr_access(rs_mr_access),
    .mr_ok(rs_mr_ok),
    .mr_bus(rs_mr_bus),
    .m_rd_desc_pcie_addr(m_rs_rd_pcie_addr),
    .m_rd_desc_ram_addr(m_rs_rd_ram_addr),
    .m_rd_desc_len(m_rs_rd_len),
    .m_rd_desc_id(m_rs_rd_id),
    .m_rd_desc_valid(m_rs_rd_valid),
    .m_rd_desc_ready(m_rs_rd_ready),
    .s_rd_status_valid(rs_rd_status),
    .s_rd_status_error(rd_status_error),
    .ram_snoop_addr(ram_snoop_addr),
    .ram_snoop_data(ram_snoop_data),
    .ram_snoop_strb(ram_snoop_strb),
    .ram_snoop_en(ram_snoop_en),
    .m_wr_desc_pcie_addr(m_rs_wr_pcie_addr),
    .m_wr_desc_ram_addr(m_rs_wr_ram_addr),
    .m_wr_desc_len(m_rs_wr_len),
    .m_wr_desc_id(m_rs_wr_id),
    .m_wr_desc_valid(m_rs_wr_valid),
    .m_wr_desc_key(rs_wr_key),
    .m_wr_desc_access(rs_wr_access),
    .wr_guard_ok(rs_wr_guard_ok || reg_debug_no_mr_check),
    .mr_change(mr_change),
    .m_wr_desc_ready(m_rs_wr_ready),
    .s_wr_status_valid(rs_wr_status),
    .m_cqe_cqn(rs_cqe_cqn),
    .m_cqe_data(rs_cqe_data),
    .m_cqe_valid(rs_cqe_valid),
    .m_cqe_ready(rs_cqe_ready),
    .cqe_writer_idle(cq_req_ready),
    .m_ack_dmac(m_ack_dmac),
    .m_ack_dip(m_ack_dip),
    .m_ack_udp_sport(m_ack_udp_sport),
    .m_ack_dest_qp(m_ack_dest_qp),
    .m_ack_psn(m_ack_psn),
    .m_ack_syndrome(m_ack_syndrome),
    .m_ack_msn(m_ack_msn),
    .m_ack_mp(m_ack_mp),
    .m_ack_lost(m_ack_lost),
    .m_ack_valid(rs_ack_valid),
    .m_ack_ready(rs_ack_ready),
    .m_rr_psn(rs_rr_psn),
    .m_rr_msn(rs_rr_msn),
    .m_rr_bus(rs_rr_bus),
    .m_rr_len(rs_rr_len),
    .m_rr_pmtu_log(rs_rr_pmtu_log),
    .m_rr_dmac(rs_rr_dmac),
    .m_rr_dip(rs_rr_dip),
    .m_rr_udp_sport(rs_rr_udp_sport),
    .m_rr_dest_qp(rs_rr_dest_qp),
    .m_rr_ack(rs_rr_ack),
    .m_rr_syndrome(rs_rr_syndrome),
    .m_rr_atomic(rs_rr_atomic),
    .m_rr_opa(rs_rr_opa),
    .m_rr_opb(rs_rr_opb),
    .m_rr_qpn(rs_rr_qpn),
    .m_at_ram_wr_addr(rs_at_ram_wr_addr),
    .m_at_ram_wr_data(rs_at_ram_wr_data),
    .m_at_ram_wr_strb(rs_at_ram_wr_strb),
    .m_at_ram_wr_en(rs_at_ram_wr_en),
    .m_at_ram_wr_ready(rs_at_ram_wr_ready),
    .s_rec_valid(rr_rec_valid),
    .s_rec_qpn(rr_rec_qpn),
    .s_rec_psn(rr_rec_psn),
    .s_rec_orig(rr_rec_orig),
    .m_rr_valid(rs_rr_valid),
    .m_rr_ready(rs_rr_ready),
    .rr_jobs_out(rr_jobs_out),
    .m_rx_ack_valid(rx_ack_valid),
    .m_rx_ack_qpn(rx_ack_qpn),
    .m_rx_ack_psn(rx_ack_psn),
    .m_rx_ack_syndrome(rx_ack_syndrome),
    .m_rx_ack_msn(rx_ack_msn),
    .m_rx_ack_lost(rx_ack_lost),
    .rt_lk_qpn(rt_lk_qpn),
    .rt_lk_psn(rt_lk_psn),
    .rt_lk_nak(rt_lk_nak),
    .rt_hit(rt_hit),
    .rt_idx(rt_idx),
    .rt_first(rt_first),
    .rt_last(rt_last),
    .rt_next(rt_next),
    .rt_bus(rt_bus),
    .rt_key(rt_key),
    .rt_len(rt_len),
    .rt_atomic(rt_atomic),
    .rt_asked(rt_asked),
    .rt_cov(rt_cov),
    .rt_cov_idx(rt_cov_idx),
    .rt_cov_next(rt_cov_next),
    .rt_cov_asked(rt_cov_asked),
    .rt_adv_valid(rt_adv_valid),
    .rt_adv_idx(rt_adv_idx),
    .rt_adv_psn(rt_adv_psn),
    .rt_ask_valid(rt_ask_valid),
    .rt_ask_idx(rt_ask_idx),
    .rt_ask_psn(rt_ask_psn),
    .rx_ack_room(rx_ack_room),
    .rx_acks_idle(rx_acks_idle),
    .cfg_early_cqe(reg_debug_early_cqe),
    .cfg_early_read_cqe(reg_debug_early_read_cqe),
    .cfg_no_mr_check(reg_debug_no_mr_check),
    .sel_qpn(reg_qp_sel[QN_W-1:0]),
    .sel_epsn(sel_epsn),
    .pin_qpn(pin_slot),
    .pin_busy(rsp_pin_busy),
    .stat_drop_qp(stat_drop_qp),
    .stat_drop_psn(stat_drop_psn),
    .stat_drop_xport(stat_drop_xport),
    .stat_drop_wimm(stat_drop_wimm),
    .stat_nak(stat_nak),
    .stat_guard(stat_guard),
    .stat_rd_resp(stat_read_placed),
    .stat_rd_over(stat_rd_over),
    .mr_drain(mr_drain),
    .s_rec_rd_valid(rp_rd_valid[4]),
    .s_rec_rd_ready(rp_rd_ready[4]),
    .s_rec_rd_slot(rp_rd_slot),
    .s_rec_rd_word(rp_rd_word[RSP_REC_LOG-1:0]),
    .m_rec_rd_data_valid(rp_rd_data_valid[4]),
    .m_rec_rd_data(rp_rd_data[4*64 +: 64]),
    .s_rec_wr_valid(rp_wr_valid[4]),
    .s_rec_wr_ready(rp_wr_ready[4]),
    .s_rec_wr_slot(rp_wr_slot),
    .s_rec_wr_word(rp_wr_word[RSP_REC_LOG-1:0]),
    .s_rec_wr_data(rp_wr_data),
    .rec_wr_busy(rp_wr_busy[4])
);

// ---------------------------------------------------------------- READ responses
// An ACK or NAK of a QP whose READ jobs are still in read_reply goes there
// too, as an ACK job behind them (the responder keeps track of whose jobs
// are out by rr_jobs_out): a QP's responses and ACKs leave in the order
// the responder made them (an ACK beyond an outstanding READ would tell
// the requester its responses were lost); other ACKs take the ACK port.
assign m_ack_valid = rs_ack_valid;
assign rs_ack_ready = m_ack_ready;

generate
    if (READ_EN != 0) begin : g_read
        /* verilator lint_off UNUSEDSIGNAL */
        wire rr_busy;               // (the responder counts jobs instead: rr_jobs_out)
        /* verilator lint_on UNUSEDSIGNAL */
        // a READ request handed over (an ACK job is an ACK/NAK queued behind
        // READs, not a READ: the responder counted its NAKs already; an
        // atomic job counts in rx_atomic or rx_atomic_replay)
        assign stat_read_req = rs_rr_valid && rs_rr_ready && !rs_rr_ack && rs_rr_atomic == 2'd0;
        wire [RAM_ADDR_W-SEG_W-1:0] rr_ram_wr_addr;
        wire [DATA_W-1:0] rr_ram_wr_data;
        wire [DATA_W/8-1:0] rr_ram_wr_strb;
        wire rr_ram_wr_en;
        assign m_rr_ram_wr_addr = rr_ram_wr_en ? rr_ram_wr_addr : rs_at_ram_wr_addr;
        assign m_rr_ram_wr_data = rr_ram_wr_en ? rr_ram_wr_data : rs_at_ram_wr_data;
        assign m_rr_ram_wr_strb = rr_ram_wr_en ? rr_ram_wr_strb : rs_at_ram_wr_strb;
        assign m_rr_ram_wr_en = rr_ram_wr_en || rs_at_ram_wr_en;
        assign rs_at_ram_wr_ready = m_rr_ram_wr_ready && !rr_ram_wr_en;
        read_reply #(
            .RAM_ADDR_W(RAM_ADDR_W),
            .LEN_W(LEN_W),
            .ID_W(ID_W),
            .JOBS(4),
            .SLOTS(RR_SLOTS),
            .SLOT_LOG(CHUNK_LOG),
            .SLOT_BASE(RR_RAM_BASE),
            .ID_TAG(ID_RRSP),
            .ATOMIC_EN(ATOMIC_EN),
            .DATA_W(DATA_W),
            .QN_W(QN_W),
            .ATOM_RAM(ATOM_RAM)
        ) rr_inst (
            .clk(clk),
            .rst(rst),
            .s_job_psn(rs_rr_psn),
            .s_job_msn(rs_rr_msn),
            .s_job_bus(rs_rr_bus),
            .s_job_len(rs_rr_len),
            .s_job_pmtu_log(rs_rr_pmtu_log),
            .s_job_dmac(rs_rr_dmac),
            .s_job_dip(rs_rr_dip),
            .s_job_udp_sport(rs_rr_udp_sport),
            .s_job_dest_qp(rs_rr_dest_qp),
            .s_job_ack(rs_rr_ack),
            .s_job_syndrome(rs_rr_syndrome),
            .s_job_atomic(rs_rr_atomic),
            .s_job_opa(rs_rr_opa),
            .s_job_opb(rs_rr_opb),
            .s_job_qpn(rs_rr_qpn),
            .s_job_valid(rs_rr_valid),
            .s_job_ready(rs_rr_ready),
            .m_rd_desc_pcie_addr(m_rr_rd_pcie_addr),
            .m_rd_desc_ram_addr(m_rr_rd_ram_addr),
            .m_rd_desc_len(m_rr_rd_len),
            .m_rd_desc_id(m_rr_rd_id),
            .m_rd_desc_valid(m_rr_rd_valid),
            .m_rd_desc_ready(m_rr_rd_ready),
            .s_rd_status_valid(rr_rd_status),
            .s_rd_status_error(rd_status_error),
            .s_snoop_addr(ram_snoop_addr),
            .s_snoop_data(ram_snoop_data),
            .s_snoop_strb(ram_snoop_strb),
            .s_snoop_en(ram_snoop_en),
            .m_ram_wr_addr(rr_ram_wr_addr),
            .m_ram_wr_data(rr_ram_wr_data),
            .m_ram_wr_strb(rr_ram_wr_strb),
            .m_ram_wr_en(rr_ram_wr_en),
            .m_ram_wr_ready(m_rr_ram_wr_ready),
            .m_wr_desc_pcie_addr(m_rr_wr_pcie_addr),
            .m_wr_desc_ram_addr(m_rr_wr_ram_addr),
            .m_wr_desc_len(m_rr_wr_len),
            .m_wr_desc_id(m_rr_wr_id),
            .m_wr_desc_valid(m_rr_wr_valid),
            .m_wr_desc_ready(m_rr_wr_ready),
            .s_wr_status_valid(rr_wr_status),
            .m_rec_valid(rr_rec_valid),
            .m_rec_qpn(rr_rec_qpn),
            .m_rec_psn(rr_rec_psn),
            .m_rec_orig(rr_rec_orig),
            .m_pkt_dmac(m_rr_pkt_dmac),
            .m_pkt_dip(m_rr_pkt_dip),
            .m_pkt_udp_sport(m_rr_pkt_udp_sport),
            .m_pkt_opcode(m_rr_pkt_opcode),
            .m_pkt_dest_qp(m_rr_pkt_dest_qp),
            .m_pkt_psn(m_rr_pkt_psn),
            .m_pkt_syndrome(m_rr_pkt_syndrome),
            .m_pkt_msn(m_rr_pkt_msn),
            .m_pkt_payload_addr(m_rr_pkt_payload_addr),
            .m_pkt_payload_len(m_rr_pkt_payload_len),
            .m_pkt_atomic_orig(m_rr_pkt_atomic_orig),
            .m_pkt_valid(m_rr_pkt_valid),
            .m_pkt_ready(m_rr_pkt_ready),
            .s_done(rr_pkt_done),
            .busy(rr_busy),
            .jobs_out(rr_jobs_out),
            .stat_rd_error(stat_rr_nak),
            .stat_resp(stat_read_resp),
            .stat_atomic(stat_atomic),
            .stat_replay(stat_atomic_replay)
        );
    end else begin : g_no_read
        // (the responder never offers a job: READ is an invalid request)
        assign rs_rr_ready = 1'b0;
        assign rr_jobs_out = 8'd0;
        assign stat_read_req = 1'b0;
        assign stat_read_resp = 1'b0;
        assign stat_rr_nak = 1'b0;
        assign m_rr_rd_pcie_addr = 64'd0;
        assign m_rr_rd_ram_addr = {RAM_ADDR_W{1'b0}};
        assign m_rr_rd_len = {LEN_W{1'b0}};
        assign m_rr_rd_id = ID_RRSP;
        assign m_rr_rd_valid = 1'b0;
        assign m_rr_pkt_dmac = 48'd0;
        assign m_rr_pkt_dip = 32'd0;
        assign m_rr_pkt_udp_sport = 16'd0;
        assign m_rr_pkt_opcode = 8'd0;
        assign m_rr_pkt_dest_qp = 24'd0;
        assign m_rr_pkt_psn = 24'd0;
        assign m_rr_pkt_syndrome = 8'd0;
        assign m_rr_pkt_msn = 24'd0;
        assign m_rr_pkt_payload_addr = {RAM_ADDR_W{1'b0}};
        assign m_rr_pkt_payload_len = 13'd0;
        assign m_rr_pkt_atomic_orig = 64'd0;
        assign m_rr_pkt_valid = 1'b0;
        assign stat_atomic = 1'b0;
        assign stat_atomic_replay = 1'b0;
        assign m_rr_ram_wr_addr = {(RAM_ADDR_W-SEG_W){1'b0}};
        assign m_rr_ram_wr_data = {DATA_W{1'b0}};
        assign m_rr_ram_wr_strb = {(DATA_W/8){1'b0}};
        assign m_rr_ram_wr_en = 1'b0;
        assign rs_at_ram_wr_ready = 1'b0;
        assign m_rr_wr_pcie_addr = 64'd0;
        assign m_rr_wr_ram_addr = {RAM_ADDR_W{1'b0}};
        assign m_rr_wr_len = {LEN_W{1'b0}};
        assign m_rr_wr_id = ID_RRSP;
        assign m_rr_wr_valid = 1'b0;
        assign rr_rec_valid = 1'b0;
        assign rr_rec_qpn = {QN_W{1'b0}};
        assign rr_rec_psn = 24'd0;
        assign rr_rec_orig = 64'd0;
        /* verilator lint_off UNUSEDSIGNAL */
        wire [281:0] rr_unused = {rs_rr_psn, rs_rr_msn, rs_rr_bus, rs_rr_len, rs_rr_pmtu_log,
            rs_rr_dmac, rs_rr_valid, rr_rd_status, m_rr_rd_ready, m_rr_pkt_ready, rr_pkt_done,
            rs_rr_dip, rs_rr_udp_sport, rs_rr_dest_qp, rs_rr_ack, rs_rr_syndrome};
        wire [QN_W+132:0] at_unused = {rs_rr_atomic, rs_rr_opa, rs_rr_opb, rs_rr_qpn, m_rr_ram_wr_ready,
            m_rr_wr_ready, rr_wr_status};
        wire [RAM_ADDR_W-SEG_W+DATA_W+DATA_W/8:0] rs_at_unused = {rs_at_ram_wr_addr, rs_at_ram_wr_data,
            rs_at_ram_wr_strb, rs_at_ram_wr_en};
        /* verilator lint_on UNUSEDSIGNAL */
    end
endgenerate

// ---------------------------------------------------------------- completions
// CQE requests: receive completions, then send completions, then local ones
wire cq_req_valid;
wire cq_req_ready;
wire [QN_W-1:0] cq_req_cqn;
wire [CQE_OWNER_LSB-1:0] cq_req_data;
/* verilator lint_off UNUSEDSIGNAL */
wire cq_arb_last;                     // CQE requests are one beat
wire [1:0] cq_arb_sel;
/* verilator lint_on UNUSEDSIGNAL */

axis_arb_mux #(
    .PORTS(3),
    .WIDTH(QN_W + CQE_OWNER_LSB)
) cq_arb_inst (
    .clk(clk),
    .rst(rst),
    .s_data({ex_cqe_cqn, ex_cqe_data, ac_cqe_cqn, ac_cqe_data, rs_cqe_cqn, rs_cqe_data}),
    .s_valid({ex_cqe_valid, ac_cqe_valid, rs_cqe_valid}),
    .s_last(3'b111),
    .s_ready({ex_cqe_ready, ac_cqe_ready, rs_cqe_ready}),
    .m_data({cq_req_cqn, cq_req_data}),
    .m_valid(cq_req_valid),
    .m_last(cq_arb_last),
    .m_sel(cq_arb_sel),
    .m_ready(cq_req_ready)
);


// a CQE names its QP by number (the directory's, or the slot's)
assign cqe_slot = cq_req_data[CQE_QN_LSB +: QN_W];
/* verilator lint_off UNUSEDSIGNAL */
wire unused_cqe_qn = ^cq_req_data[CQE_QN_LSB + QN_W +: CQE_QN_W - QN_W];   // (slots are QN_W bits)
/* verilator lint_on UNUSEDSIGNAL */
wire [CQE_OWNER_LSB-1:0] cq_req_named;
assign cq_req_named = {cq_req_data[CQE_OWNER_LSB-1:CQE_QN_LSB + CQE_QN_W],
                       {(CQE_QN_W - 24){1'b0}}, cqe_qpn, cq_req_data[CQE_QN_LSB-1:0]};

cqe_writer #(
    .DATA_W(DATA_W),
    .RAM_ADDR_W(RAM_ADDR_W),
    .QN_W(QN_W),
    .LEN_W(LEN_W),
    .ID_W(ID_W),
    .SLOT_BASE(CQE_RAM),
    .ID_TAG(ID_CQE)
) cqe_inst (
    .clk(clk),
    .rst(rst),
    .s_req_valid(cq_req_valid),
    .s_req_ready(cq_req_ready),
    .s_req_cqn(cq_req_cqn),
    .s_req_cqe(cq_req_named),
    .cq_alloc_valid(cq_alloc_valid),
    .cq_alloc_cqn(cq_alloc_cqn),
    .cq_alloc_done(cq_alloc_done),
    .cq_alloc_ok(cq_alloc_ok),
    .cq_alloc_bad(cq_alloc_bad),
    .cq_alloc_addr(cq_alloc_addr),
    .cq_alloc_phase(cq_alloc_phase),
    .cq_notify(cq_notify),
    .cq_notify_cqn(cq_notify_cqn),
    .m_ram_wr_addr(m_cw_ram_wr_addr),
    .m_ram_wr_data(m_cw_ram_wr_data),
    .m_ram_wr_strb(m_cw_ram_wr_strb),
    .m_ram_wr_en(m_cw_ram_wr_en),
    .m_ram_wr_ready(m_cw_ram_wr_ready),
    .m_wr_desc_pcie_addr(m_cw_wr_pcie_addr),
    .m_wr_desc_ram_addr(m_cw_wr_ram_addr),
    .m_wr_desc_len(m_cw_wr_len),
    .m_wr_desc_ro(m_cw_wr_ro),
    .m_wr_desc_id(m_cw_wr_id),
    .m_wr_desc_valid(m_cw_wr_valid),
    .m_wr_desc_ready(m_cw_wr_ready),
    .s_wr_status_valid(cw_wr_status),
    .m_rd_desc_pcie_addr(m_cw_rd_pcie_addr),
    .m_rd_desc_len(m_cw_rd_len),
    .m_rd_desc_id(m_cw_rd_id),
    .m_rd_desc_valid(m_cw_rd_valid),
    .m_rd_desc_ready(m_cw_rd_ready),
    .s_rd_status_valid(cw_rd_status),
    .wr_engine_idle(wr_engine_idle),
    .m_byp_tlp_hdr(m_byp_tlp_hdr),
    .m_byp_tlp_data(m_byp_tlp_data),
    .m_byp_tlp_keep(m_byp_tlp_keep),
    .m_byp_tlp_valid(m_byp_tlp_valid),
    .m_byp_tlp_last(m_byp_tlp_last),
    .m_byp_tlp_ready(m_byp_tlp_ready),
    .cfg_cqe_ro(reg_debug_cqe_ro),
    .cfg_cqe_flush(reg_cqe_flush),
    .cfg_bypass(reg_debug_bypass),
    .cfg_requester_id(cfg_requester_id),
    .err_cq_disabled(cw_err),
    .err_cqn(cw_err_cqn),
    .stat_cqe(stat_cqe)
);

endmodule

`resetall
