// rnic core: everything between the generic PCIe TLP interface and the
// Ethernet MAC. See hw/README.md for the interface contract and the
// subsystems: rnic_control (the register block behind its MMIO bridge,
// the error and event counters, the configuration flash), rnic_transport
// (QP and MR tables, queue manager, executor, responder, CQE writer),
// rnic_dma (DMA engines, RAMs, descriptor and TLP muxes) and rnic_port
// (RoCE framing, loopback, TX arbiter). What is left here: the wires
// between the subsystems and the build's sizes (the RAM map, the pool
// sizes that hw/state/manifest.py reads from this module's elaboration).

`resetall
`timescale 1ns / 1ps
`default_nettype none

module rnic_core #(
    parameter DATA_W = 64,
    parameter NUM_Q = 16,
    parameter RAM_BYTES = 32768,
    parameter CLK_MHZ = 250,         // core clock: sets the IB timer units (ACK timeout, RNR)
    parameter MP_W = 64,             // mp transport: receive window (bitmap bits per QP): 32, 64, 128
    parameter SEND_EN = 1,           // verb set: 1 = SEND/RECV carried, 0 = RDMA WRITE(+IMM) only
    parameter RC_EN = 1,             // transports: 1 = rc and mp, 0 = mp only (needs SEND_EN = 0)
    parameter READ_EN = 0,           // 1 = RDMA READ requests served (responder side; needs RC_EN = 1)
    parameter ATOMIC_EN = 0,         // 1 = atomics executed as a responder (needs READ_EN = 1)
    // shared pools (0: sized from NUM_Q, see pool_size; at most NUM_Q are used)
    parameter OST_RINGS = 0,         // outstanding-WQE rings
    parameter MP_PEND = 0,           // mp deferred WRITE_WITH_IMM completions
    parameter MP_WIMM = 0,           // ... of them per QP at most (0: 4, at most MP_PEND)
    parameter DMAC_N = 0,            // destination-MAC table entries
    // 1 = the record port: every per-QP record readable and writable as 64
    // 64-bit words, through BAR0's record window (qp_block.qp_rec_*) now
    // and the QP context cache later (DESIGN.md section 6, step 1)
    parameter REC_PORT = 0,
    // QP directory (DESIGN.md section 6, step 2): QP numbers of QPN_W bits
    // (2^QPN_W of them) bound by the host to the NUM_Q slots; 0: QP n is
    // slot n, as in every build before it
    parameter QPN_W = 0,
    parameter [31:0] BUILD_VERSION = 32'h0001_0000,
    parameter [31:0] GIT_HASH = 32'h0,
    parameter [31:0] BOARD_ID = 32'h0
) (
    input  wire                  clk,
    input  wire                  rst,

    input  wire [127:0]          rx_req_tlp_hdr,
    input  wire [DATA_W-1:0]     rx_req_tlp_data,
    input  wire [DATA_W/32-1:0]  rx_req_tlp_keep,
    input  wire                  rx_req_tlp_valid,
    input  wire                  rx_req_tlp_last,
    output wire                  rx_req_tlp_ready,

    output wire [127:0]          tx_cpl_tlp_hdr,
    output wire [DATA_W-1:0]     tx_cpl_tlp_data,
    output wire [DATA_W/32-1:0]  tx_cpl_tlp_keep,
    output wire                  tx_cpl_tlp_valid,
    output wire                  tx_cpl_tlp_last,
    input  wire                  tx_cpl_tlp_ready,

    output wire [127:0]          tx_rd_req_tlp_hdr,
    output wire                  tx_rd_req_tlp_valid,
    input  wire                  tx_rd_req_tlp_ready,

    input  wire [127:0]          rx_cpl_tlp_hdr,
    input  wire [DATA_W-1:0]     rx_cpl_tlp_data,
    input  wire [DATA_W/32-1:0]  rx_cpl_tlp_keep,
    input  wire                  rx_cpl_tlp_valid,
    input  wire                  rx_cpl_tlp_last,
    output wire                  rx_cpl_tlp_ready,

    output wire [127:0]          tx_wr_req_tlp_hdr,
    output wire [DATA_W-1:0]     tx_wr_req_tlp_data,
    output wire [DATA_W/32-1:0]  tx_wr_req_tlp_keep,
    output wire                  tx_wr_req_tlp_valid,
    output wire                  tx_wr_req_tlp_last,
    input  wire                  tx_wr_req_tlp_ready,

    output wire [4:0]            msi_vector,
    output wire                  msi_valid,
    input  wire                  msi_ready,

    // Ethernet MAC side: AXI-Stream frames without FCS (tuser = bad frame)
    output wire [DATA_W-1:0]     m_axis_tx_tdata,
    output wire [DATA_W/8-1:0]   m_axis_tx_tkeep,
    output wire                  m_axis_tx_tvalid,
    output wire                  m_axis_tx_tlast,
    output wire                  m_axis_tx_tuser,
    input  wire                  m_axis_tx_tready,
    input  wire [DATA_W-1:0]     s_axis_rx_tdata,
    input  wire [DATA_W/8-1:0]   s_axis_rx_tkeep,
    input  wire                  s_axis_rx_tvalid,
    input  wire                  s_axis_rx_tlast,
    input  wire                  s_axis_rx_tuser,
    output wire                  s_axis_rx_tready,

    // configuration flash (SPI NOR; board shim adds the tristate pads)
    output wire                  flash_sck,
    output wire                  flash_cs_n,
    output wire [3:0]            flash_io_o,
    output wire [3:0]            flash_io_oe,
    input  wire [3:0]            flash_io_i,
    // what the configuration logic booted, and the request to reboot
    input  wire [1:0]            boot_slot,
    input  wire                  boot_fallback,
    output wire                  reconfig_req,

    input  wire [2:0]            cfg_max_payload,
    input  wire [2:0]            cfg_max_read_req,
    input  wire [15:0]           cfg_requester_id
);

// the ring entry formats: hw/formats/rnic_formats.rdl
`include "rnic_formats.vh"

localparam QN_W = NUM_Q > 1 ? $clog2(NUM_Q) : 1;
localparam SEG_W = $clog2(DATA_W / 8);
localparam LEN_W = 17;
localparam ID_W = 8;
localparam CHUNK_LOG = 12;

// The DMA engines address one 128 KiB space of on-chip RAMs (byte addresses):
//   0x00000 staging RAM (RAM_BYTES): copy slots, then the control area
//   0x08000 TX RAM: NUM_TX_SLOTS packet payloads of 4 KiB (read engine -> roce_tx)
//   0x10000 RX RAM: received frames (roce_rx -> write engine)
//   0x18000 reply RAM (READ_EN): RR_SLOTS READ response payloads of 4 KiB
//           (read engine -> roce_tx)
localparam RAM_ADDR_W = 17;
localparam STG_ADDR_W = $clog2(RAM_BYTES);
localparam TXR_ADDR_W = 15;
localparam RXR_ADDR_W = 15;
localparam RR_SLOTS = 4;
localparam RRR_ADDR_W = 14;                 // RR_SLOTS x 4 KiB
localparam TXP_ADDR_W = TXR_ADDR_W + (READ_EN != 0 ? 1 : 0);   // roce_tx's RAM space
localparam NUM_TX_SLOTS = 8;
localparam RX_SLOTS = 4;
localparam RX_SLOT_LOG = 13;
localparam RX_SLOT_W = 2;
localparam NUM_SLOTS = RAM_BYTES / (1 << CHUNK_LOG) - 1;   // the last chunk is the control area
localparam integer CTRL_I = NUM_SLOTS * (1 << CHUNK_LOG);
localparam [RAM_ADDR_W-1:0] CTRL = CTRL_I[RAM_ADDR_W-1:0];
localparam [RAM_ADDR_W-1:0] WQE_RAM = CTRL;
localparam [RAM_ADDR_W-1:0] RQWQE_RAM = CTRL + 17'h40;
localparam [RAM_ADDR_W-1:0] CQE_RAM = CTRL + 17'h100;
localparam [RAM_ADDR_W-1:0] ATOM_RAM = CTRL + 17'h0C0;   // an atomic's new value (ATOMIC_EN)
localparam [RAM_ADDR_W-1:0] ATOM_RQ_RAM = CTRL + 17'h0C8; // the original value our atomic brought back
// Context-table commands in flight at once (REC_PORT): their buffers (a
// 512-byte half for the write-back, one for the read, so that a fetch's
// read overlaps its eviction) fill the control area's upper half
localparam CTX_FILLS = 2;
localparam integer FILL_RAM = CTRL_I + 2048;
localparam [RAM_ADDR_W-1:0] TX_RAM_BASE = 17'h08000;
localparam [RAM_ADDR_W-1:0] RX_RAM_BASE = 17'h10000;
localparam [RAM_ADDR_W-1:0] RR_RAM_BASE = 17'h18000;

// descriptor ids tell the engines' clients apart by their top three bits
// (statuses come back in order); the clients use bit 0 (the requester's
// prefetch) and bits 2:0 (the context fill's buffer) of the rest
localparam [ID_W-1:0] ID_EXEC = 8'h00, ID_RESP = 8'h40, ID_CQE = 8'h80, ID_RRSP = 8'hC0, ID_FILL = 8'h20;

// local DMA copy, RDMA_WRITE(+IMM), and SEND(+IMM) when the build carries it
localparam [31:0] VERBS = (SEND_EN != 0 ? 32'h0000_001F : 32'h0000_0007) | (READ_EN != 0 ? 32'h0000_0020 : 32'h0)
    | (ATOMIC_EN != 0 ? 32'h0000_0040 : 32'h0);
// A pool's size: the knob if set, else one entry per `per` QPs within
// [lo, hi]; never more than NUM_Q. Pools sized for the simulator's 64 QPs
// (16 rings, 8 slots, 16 MACs) would be as large as the per-QP state they
// replace at the FPGA's 16, so they scale with the QP count.
function integer pool_size(input integer knob, input integer per, input integer lo, input integer hi);
    integer n;
    begin
        n = NUM_Q / per;
        n = n < lo ? lo : (n > hi ? hi : n);
        n = knob != 0 ? knob : n;
        pool_size = n < NUM_Q ? n : NUM_Q;
    end
endfunction
localparam OST_RINGS_Q = pool_size(OST_RINGS, 4, 4, 16);   // QPs with WQEs in flight at once
localparam MP_PEND_Q = pool_size(MP_PEND, 8, 2, 8);        // mp deferred completions held at once
localparam DMAC_N_Q = pool_size(DMAC_N, 4, 4, 16);         // destination MACs held at once
// mp deferred completions one QP may hold (OCP MRC's max_wimm)
localparam MP_WIMM_A = MP_WIMM != 0 ? MP_WIMM : 4;
localparam MP_WIMM_Q = MP_WIMM_A < MP_PEND_Q ? MP_WIMM_A : MP_PEND_Q;
// Entries of the MR table (mr_table, 1..256: a key's index is bits 15:8);
// the ID block reports it (id.mrs) and the host refuses keys beyond it.
localparam NUM_MR_Q = 64;
// MSI, CQE RO switch, early-CQE switch, bypass switch, flush mode, mp, rc,
// READ served
localparam [31:0] CAPS = (RC_EN != 0 ? 32'h0000_007F : 32'h0000_003F) | (READ_EN != 0 ? 32'h0000_0180 : 32'h0)
    | (ATOMIC_EN != 0 ? 32'h0000_0200 : 32'h0) | 32'h0000_0400;

initial begin
    if (DATA_W != 64 && DATA_W != 128 && DATA_W != 256 && DATA_W != 512) begin
        $error("rnic_core: DATA_W must be 64, 128, 256 or 512 (got %0d)", DATA_W);
        $finish;
    end
    if (NUM_Q < 2 || NUM_Q > 1024) begin
        $error("rnic_core: NUM_Q must be 2..1024");
        $finish;
    end
    if ((OST_RINGS != 0 && OST_RINGS < 2) || (MP_PEND != 0 && MP_PEND < 2) || (DMAC_N != 0 && DMAC_N < 2)) begin
        $error("rnic_core: OST_RINGS, MP_PEND and DMAC_N must be 0 (from NUM_Q) or at least 2");
        $finish;
    end
    if (MP_WIMM < 0 || MP_WIMM > 256) begin
        $error("rnic_core: MP_WIMM must be 0 (4) or 1..256 (clamped to the MP_PEND pool)");
        $finish;
    end
    if (RC_EN != 0 && RC_EN != 1) begin
        $error("rnic_core: RC_EN must be 0 or 1");
        $finish;
    end
    if (RC_EN == 0 && SEND_EN != 0) begin
        $error("rnic_core: SEND/RECV needs the rc transport (SEND_EN = 1 with RC_EN = 0)");
        $finish;
    end
    if ((READ_EN != 0 && READ_EN != 1) || (READ_EN != 0 && RC_EN == 0)) begin
        $error("rnic_core: READ_EN must be 0 or 1, and READ needs the rc transport");
        $finish;
    end
    if ((ATOMIC_EN != 0 && ATOMIC_EN != 1) || (ATOMIC_EN != 0 && READ_EN == 0)) begin
        $error("rnic_core: ATOMIC_EN must be 0 or 1, and atomics need READ_EN (they run in the READ engine)");
        $finish;
    end
    if (SEND_EN != 0 && SEND_EN != 1) begin
        $error("rnic_core: SEND_EN must be 0 or 1");
        $finish;
    end
    if (RAM_BYTES != 32768) begin
        $error("rnic_core: RAM_BYTES must be 32768 (the RAM map above is fixed)");
        $finish;
    end
end

// ---------------------------------------------------------------- register fields
// from rnic_control (instantiated last, below), and what they read back
wire [15:0] reg_q_sel;
wire [31:0] reg_q_base_lo;
wire [31:0] reg_q_base_hi;
wire [31:0] reg_q_size;
wire [15:0] reg_q_cqn;
wire [3:0] reg_q_cmd;
wire [15:0] reg_sq_db_pi;
wire [15:0] reg_sq_db_qn;
wire [15:0] reg_cq_db_ci;
wire [15:0] reg_cq_db_cqn;
wire [15:0] reg_cq_arm_cqn;
wire reg_debug_cqe_ro;
wire reg_debug_early_cqe;
wire reg_debug_bypass;
wire reg_debug_no_mr_check;
wire reg_debug_early_read_cqe;
wire reg_debug_resend_after_cqe;
wire reg_debug_unpinned_move;
wire reg_cqe_flush;
wire [31:0] reg_mac_lo;
wire [15:0] reg_mac_hi;
wire [31:0] reg_ipv4;
wire [15:0] reg_qp_sel;
wire [2:0] reg_qp_state;
wire [2:0] reg_qp_pmtu;
wire reg_qp_remote_write;
wire reg_qp_remote_read;
wire reg_qp_remote_atomic;
wire [2:0] reg_qp_spray_log;
wire reg_qp_mp;
wire [2:0] reg_qp_mp_wshift;
wire [23:0] reg_qp_dest_qpn;
wire [23:0] reg_qp_sq_psn;
wire [23:0] reg_qp_rq_psn;
wire [31:0] reg_qp_dmac_lo;
wire [15:0] reg_qp_dmac_hi;
wire [15:0] reg_qp_udp_sport;
wire [31:0] reg_qp_dip;
wire [15:0] reg_qp_pd;
wire [15:0] reg_qp_rcq;
wire [31:0] reg_qp_rq_base_lo;
wire [31:0] reg_qp_rq_base_hi;
wire [31:0] reg_qp_rq_size;
wire [3:0] reg_qp_cmd;
wire [15:0] reg_rq_db_pi;
wire [15:0] reg_rq_db_qpn;
wire [15:0] reg_sq_dbn_qpn;
wire [15:0] reg_sq_dbn_pi;
wire reg_sq_dbn_valid;
wire [15:0] reg_rq_dbn_qpn;
wire [15:0] reg_rq_dbn_pi;
wire reg_rq_dbn_valid;
wire dbn_busy;
wire dbn_err_valid;
wire [15:0] dbn_err_qpn;
wire [15:0] reg_qp_cache_first;
wire [23:0] reg_qp_fetch_qpn;
wire reg_qp_fetch_valid;
wire reg_qp_fetch_hold, reg_qp_fetch_unhold;
wire fetch_held;
wire fetch_busy;
wire [2:0] fetch_err;
wire [15:0] fetch_slot;
wire fetch_loaded;
wire fetch_evicted;
wire [23:0] fetch_victim;
// the fetch's use of the directory (rnic_transport's qp_dir)
wire fd_active;
wire fetch_active;
wire dbn_idle;
wire [15:0] fd_slot;
wire [23:0] fd_qpn;
wire [1:0] fd_op;
wire fd_valid;
wire [23:0] fd_lk_qpn;
wire dir_lk_hit;
wire [QN_W-1:0] dir_lk_slot;
wire dir_free_valid;
wire [QN_W-1:0] dir_free_slot;
wire reg_qp_cache_auto;
wire [31:0] fetch_misses, fetch_evictions, fetch_full, qp_lookups, qp_lookup_misses;
wire look_rx_valid, look_rx_hit, look_db_valid, look_db_hit;
wire [4:0] dbn_waiting, dbn_waiting_max;
// misses wait for the fetch only where there is one
wire fd_miss_en = reg_qp_cache_auto && REC_PORT != 0 && QPN_W > 0;
wire rx_miss_valid, db_miss_valid;
wire [23:0] rx_miss_qpn;
wire [15:0] db_miss_qpn;
wire rx_miss_done, rx_miss_ok, db_miss_done, db_miss_ok, db_miss_full;
wire [15:0] reg_mr_sel;
wire [31:0] reg_mr_key;
wire [31:0] reg_mr_va_lo;
wire [31:0] reg_mr_va_hi;
wire [31:0] reg_mr_len;
wire [31:0] reg_mr_bus_lo;
wire [31:0] reg_mr_bus_hi;
wire [15:0] reg_mr_pd;
wire [3:0] reg_mr_access;
wire [3:0] reg_mr_cmd;
wire [4:0] reg_qp_timeout;
wire reg_lb_loopback;
wire [15:0] reg_lb_drop_thr;
wire [15:0] reg_lb_reorder_thr;
wire [31:0] reg_lb_seed;
wire [1:0] reg_path_thresh;
wire [2:0] reg_qp_retry_cnt;
wire [2:0] reg_qp_rnr_retry;
wire [4:0] reg_qp_min_rnr_timer;
wire [2:0] reg_qp_max_rd_atomic;
wire [2:0] reg_qp_max_dest_rd_atomic;
wire reg_q_cmd_valid;
wire reg_sq_db_valid;
wire reg_cq_db_valid;
wire reg_cq_arm_valid;
wire reg_qp_cmd_valid;
wire reg_rq_db_valid;
wire reg_mr_cmd_valid;
wire [15:0] sel_sq_pi;
wire [15:0] sel_sq_ci;
wire [15:0] sel_cq_pi;
wire sel_sq_en;
wire sel_cq_en;
wire sel_cq_armed;
wire sel_cq_phase;
wire [2:0] sel_qp_state;
wire [23:0] sel_sq_psn;
wire [23:0] sel_epsn;
wire stat_guard;
wire [31:0] lb_dropped;
wire [31:0] lb_reordered;

// ---------------------------------------------------------------- DMA (rnic_dma)
// read descriptors: CQE flush reads, then receive WQEs, then the executor
wire [63:0] ex_rd_pcie_addr;
wire [RAM_ADDR_W-1:0] ex_rd_ram_addr;
wire [LEN_W-1:0] ex_rd_len;
wire [ID_W-1:0] ex_rd_id;
wire ex_rd_valid, ex_rd_ready;
wire [63:0] rs_rd_pcie_addr;
wire [RAM_ADDR_W-1:0] rs_rd_ram_addr;
wire [LEN_W-1:0] rs_rd_len;
wire [ID_W-1:0] rs_rd_id;
wire rs_rd_valid, rs_rd_ready;
wire [63:0] cw_rd_pcie_addr;
wire [LEN_W-1:0] cw_rd_len;
wire [ID_W-1:0] cw_rd_id;
wire cw_rd_valid, cw_rd_ready;
wire [ID_W-1:0] rd_status_id;
wire [3:0] rd_status_error;
wire [63:0] rr_rd_pcie_addr;
wire [RAM_ADDR_W-1:0] rr_rd_ram_addr;
wire [LEN_W-1:0] rr_rd_len;
wire [ID_W-1:0] rr_rd_id;
wire rr_rd_valid, rr_rd_ready;
wire ex_rd_status, rs_rd_status, cw_rd_status, rr_rd_status;

// write descriptors: received payload, then CQEs, then copy chunks
wire [63:0] ex_wr_pcie_addr;
wire [RAM_ADDR_W-1:0] ex_wr_ram_addr;
wire [LEN_W-1:0] ex_wr_len;
wire [ID_W-1:0] ex_wr_id;
wire ex_wr_valid, ex_wr_ready;
wire [63:0] rs_wr_pcie_addr;
wire [RAM_ADDR_W-1:0] rs_wr_ram_addr;
wire [LEN_W-1:0] rs_wr_len;
wire [ID_W-1:0] rs_wr_id;
wire rs_wr_valid, rs_wr_ready;
wire [63:0] cw_wr_pcie_addr;
wire [RAM_ADDR_W-1:0] cw_wr_ram_addr;
wire [LEN_W-1:0] cw_wr_len;
wire cw_wr_ro;
wire [ID_W-1:0] cw_wr_id;
wire cw_wr_valid, cw_wr_ready;
wire ex_wr_status, rs_wr_status, cw_wr_status;
wire wr_engine_idle;

// the CQE bypass TLPs (debug switch), the RAM ports of the other subsystems
wire [127:0] byp_tlp_hdr;
wire [DATA_W-1:0] byp_tlp_data;
wire [DATA_W/32-1:0] byp_tlp_keep;
wire byp_tlp_valid, byp_tlp_last, byp_tlp_ready;
wire [RAM_ADDR_W-SEG_W-1:0] rd_ram_wr_addr;
wire [DATA_W-1:0] rd_ram_wr_data;
wire [DATA_W/8-1:0] rd_ram_wr_strb;
wire rd_ram_wr_en;
wire [RAM_ADDR_W-SEG_W-1:0] cw_ram_wr_addr;
wire [DATA_W-1:0] cw_ram_wr_data;
wire [DATA_W/8-1:0] cw_ram_wr_strb;
wire cw_ram_wr_en, cw_ram_wr_ready;
wire [RAM_ADDR_W-SEG_W-1:0] rr_ram_wr_addr;
wire [DATA_W-1:0] rr_ram_wr_data;
wire [DATA_W/8-1:0] rr_ram_wr_strb;
wire rr_ram_wr_en, rr_ram_wr_ready;
wire [63:0] rr_wr_pcie_addr;
wire [RAM_ADDR_W-1:0] rr_wr_ram_addr;
wire [LEN_W-1:0] rr_wr_len;
wire [ID_W-1:0] rr_wr_id;
wire rr_wr_valid, rr_wr_ready, rr_wr_status;
wire [TXP_ADDR_W-SEG_W-1:0] txr_rd_addr;
wire txr_rd_en;
wire [DATA_W-1:0] txr_rd_data;
wire [RXR_ADDR_W-SEG_W-1:0] rxr_wr_addr;
wire [DATA_W-1:0] rxr_wr_data;
wire [DATA_W/8-1:0] rxr_wr_strb;
wire rxr_wr_en;
wire stat_rd_req, stat_rd_err, stat_wr_tlp;
// the context fill engine's DMA client (qp_ctx_table, REC_PORT builds)
wire [63:0] qf_rd_pcie_addr, qf_wr_pcie_addr;
wire [RAM_ADDR_W-1:0] qf_rd_ram_addr, qf_wr_ram_addr;
wire [LEN_W-1:0] qf_rd_len, qf_wr_len;
wire [ID_W-1:0] qf_rd_id, qf_wr_id;
wire qf_rd_valid, qf_rd_ready, qf_rd_status;
wire qf_wr_valid, qf_wr_ready, qf_wr_status;
wire [RAM_ADDR_W-1:0] qf_ram_wr_addr, qf_ram_rd_addr;
wire [63:0] qf_ram_wr_data, qf_ram_rd_data;
wire qf_ram_wr_en, qf_ram_wr_ready, qf_ram_rd_en, qf_ram_rd_ready;

rnic_dma #(
    .DATA_W(DATA_W),
    .RAM_ADDR_W(RAM_ADDR_W),
    .STG_ADDR_W(STG_ADDR_W),
    .TXR_ADDR_W(TXR_ADDR_W),
    .READ_EN(READ_EN),
    .RRR_ADDR_W(RRR_ADDR_W),
    .ATOMIC_EN(ATOMIC_EN),
    .RXR_ADDR_W(RXR_ADDR_W),
    .LEN_W(LEN_W),
    .ID_W(ID_W),
    .FILL_EN(REC_PORT),
    .CLIENT_W(3),
    .ID_EXEC(ID_EXEC),
    .ID_RESP(ID_RESP),
    .ID_CQE(ID_CQE),
    .ID_RRSP(ID_RRSP),
    .ID_FILL(ID_FILL)
) dma_inst (
    .clk(clk),
    .rst(rst),
    .tx_rd_req_tlp_hdr(tx_rd_req_tlp_hdr),
    .tx_rd_req_tlp_valid(tx_rd_req_tlp_valid),
    .tx_rd_req_tlp_ready(tx_rd_req_tlp_ready),
    .rx_cpl_tlp_hdr(rx_cpl_tlp_hdr),
    .rx_cpl_tlp_data(rx_cpl_tlp_data),
    .rx_cpl_tlp_keep(rx_cpl_tlp_keep),
    .rx_cpl_tlp_valid(rx_cpl_tlp_valid),
    .rx_cpl_tlp_last(rx_cpl_tlp_last),
    .rx_cpl_tlp_ready(rx_cpl_tlp_ready),
    .tx_wr_req_tlp_hdr(tx_wr_req_tlp_hdr),
    .tx_wr_req_tlp_data(tx_wr_req_tlp_data),
    .tx_wr_req_tlp_keep(tx_wr_req_tlp_keep),
    .tx_wr_req_tlp_valid(tx_wr_req_tlp_valid),
    .tx_wr_req_tlp_last(tx_wr_req_tlp_last),
    .tx_wr_req_tlp_ready(tx_wr_req_tlp_ready),
    .cfg_max_payload(cfg_max_payload),
    .cfg_max_read_req(cfg_max_read_req),
    .cfg_requester_id(cfg_requester_id),
    .s_ex_rd_pcie_addr(ex_rd_pcie_addr),
    .s_ex_rd_ram_addr(ex_rd_ram_addr),
    .s_ex_rd_len(ex_rd_len),
    .s_ex_rd_id(ex_rd_id),
    .s_ex_rd_valid(ex_rd_valid),
    .s_ex_rd_ready(ex_rd_ready),
    .s_rs_rd_pcie_addr(rs_rd_pcie_addr),
    .s_rs_rd_ram_addr(rs_rd_ram_addr),
    .s_rs_rd_len(rs_rd_len),
    .s_rs_rd_id(rs_rd_id),
    .s_rs_rd_valid(rs_rd_valid),
    .s_rs_rd_ready(rs_rd_ready),
    .s_cw_rd_pcie_addr(cw_rd_pcie_addr),
    .s_cw_rd_len(cw_rd_len),
    .s_cw_rd_id(cw_rd_id),
    .s_cw_rd_valid(cw_rd_valid),
    .s_cw_rd_ready(cw_rd_ready),
    .s_rr_rd_pcie_addr(rr_rd_pcie_addr),
    .s_rr_rd_ram_addr(rr_rd_ram_addr),
    .s_rr_rd_len(rr_rd_len),
    .s_rr_rd_id(rr_rd_id),
    .s_rr_rd_valid(rr_rd_valid),
    .s_rr_rd_ready(rr_rd_ready),
    .rd_status_id(rd_status_id),
    .rd_status_error(rd_status_error),
    .ex_rd_status(ex_rd_status),
    .rs_rd_status(rs_rd_status),
    .cw_rd_status(cw_rd_status),
    .rr_rd_status(rr_rd_status),
    .s_ex_wr_pcie_addr(ex_wr_pcie_addr),
    .s_ex_wr_ram_addr(ex_wr_ram_addr),
    .s_ex_wr_len(ex_wr_len),
    .s_ex_wr_id(ex_wr_id),
    .s_ex_wr_valid(ex_wr_valid),
    .s_ex_wr_ready(ex_wr_ready),
    .s_rs_wr_pcie_addr(rs_wr_pcie_addr),
    .s_rs_wr_ram_addr(rs_wr_ram_addr),
    .s_rs_wr_len(rs_wr_len),
    .s_rs_wr_id(rs_wr_id),
    .s_rs_wr_valid(rs_wr_valid),
    .s_rs_wr_ready(rs_wr_ready),
    .s_cw_wr_pcie_addr(cw_wr_pcie_addr),
    .s_cw_wr_ram_addr(cw_wr_ram_addr),
    .s_cw_wr_len(cw_wr_len),
    .s_cw_wr_ro(cw_wr_ro),
    .s_cw_wr_id(cw_wr_id),
    .s_cw_wr_valid(cw_wr_valid),
    .s_cw_wr_ready(cw_wr_ready),
    .s_rr_wr_pcie_addr(rr_wr_pcie_addr),
    .s_rr_wr_ram_addr(rr_wr_ram_addr),
    .s_rr_wr_len(rr_wr_len),
    .s_rr_wr_id(rr_wr_id),
    .s_rr_wr_valid(rr_wr_valid),
    .s_rr_wr_ready(rr_wr_ready),
    .rr_wr_status(rr_wr_status),
    .ex_wr_status(ex_wr_status),
    .rs_wr_status(rs_wr_status),
    .cw_wr_status(cw_wr_status),
    .s_qf_rd_pcie_addr(qf_rd_pcie_addr),
    .s_qf_rd_ram_addr(qf_rd_ram_addr),
    .s_qf_rd_len(qf_rd_len),
    .s_qf_rd_id(qf_rd_id),
    .s_qf_rd_valid(qf_rd_valid),
    .s_qf_rd_ready(qf_rd_ready),
    .qf_rd_status(qf_rd_status),
    .s_qf_wr_pcie_addr(qf_wr_pcie_addr),
    .s_qf_wr_ram_addr(qf_wr_ram_addr),
    .s_qf_wr_len(qf_wr_len),
    .s_qf_wr_id(qf_wr_id),
    .s_qf_wr_valid(qf_wr_valid),
    .s_qf_wr_ready(qf_wr_ready),
    .qf_wr_status(qf_wr_status),
    .s_qf_ram_wr_addr(qf_ram_wr_addr),
    .s_qf_ram_wr_data(qf_ram_wr_data),
    .s_qf_ram_wr_en(qf_ram_wr_en),
    .s_qf_ram_wr_ready(qf_ram_wr_ready),
    .s_qf_ram_rd_addr(qf_ram_rd_addr),
    .s_qf_ram_rd_en(qf_ram_rd_en),
    .s_qf_ram_rd_ready(qf_ram_rd_ready),
    .s_qf_ram_rd_data(qf_ram_rd_data),
    .wr_engine_idle(wr_engine_idle),
    .s_byp_tlp_hdr(byp_tlp_hdr),
    .s_byp_tlp_data(byp_tlp_data),
    .s_byp_tlp_keep(byp_tlp_keep),
    .s_byp_tlp_valid(byp_tlp_valid),
    .s_byp_tlp_last(byp_tlp_last),
    .s_byp_tlp_ready(byp_tlp_ready),
    .ram_snoop_addr(rd_ram_wr_addr),
    .ram_snoop_data(rd_ram_wr_data),
    .ram_snoop_strb(rd_ram_wr_strb),
    .ram_snoop_en(rd_ram_wr_en),
    .s_cw_ram_wr_addr(cw_ram_wr_addr),
    .s_cw_ram_wr_data(cw_ram_wr_data),
    .s_cw_ram_wr_strb(cw_ram_wr_strb),
    .s_cw_ram_wr_en(cw_ram_wr_en),
    .s_cw_ram_wr_ready(cw_ram_wr_ready),
    .s_rr_ram_wr_addr(rr_ram_wr_addr),
    .s_rr_ram_wr_data(rr_ram_wr_data),
    .s_rr_ram_wr_strb(rr_ram_wr_strb),
    .s_rr_ram_wr_en(rr_ram_wr_en),
    .s_rr_ram_wr_ready(rr_ram_wr_ready),
    .s_txr_rd_addr(txr_rd_addr),
    .s_txr_rd_en(txr_rd_en),
    .s_txr_rd_data(txr_rd_data),
    .s_rxr_wr_addr(rxr_wr_addr),
    .s_rxr_wr_data(rxr_wr_data),
    .s_rxr_wr_strb(rxr_wr_strb),
    .s_rxr_wr_en(rxr_wr_en),
    .stat_rd_req(stat_rd_req),
    .stat_rd_err(stat_rd_err),
    .stat_wr_tlp(stat_wr_tlp)
);

// ---------------------------------------------------------------- Ethernet port (rnic_port)
wire [47:0] ex_pkt_dmac;
wire [31:0] ex_pkt_dip;
wire [15:0] ex_pkt_udp_sport;
wire [7:0] ex_pkt_opcode;
wire ex_pkt_se;
wire ex_pkt_ack_req;
wire [23:0] ex_pkt_dest_qp;
wire [23:0] ex_pkt_psn;
wire [63:0] ex_pkt_reth_va;
wire [31:0] ex_pkt_reth_rkey;
wire [31:0] ex_pkt_reth_len;
wire [63:0] ex_pkt_atomic_cmp;
wire [31:0] ex_pkt_imm;
wire [RAM_ADDR_W-1:0] ex_pkt_payload_addr;
wire [12:0] ex_pkt_payload_len;
wire ex_pkt_valid;
wire ex_pkt_ready;
wire ex_pkt_done;
// READ responses from read_reply (READ_EN)
wire [47:0] rr_pkt_dmac;
wire [31:0] rr_pkt_dip;
wire [15:0] rr_pkt_udp_sport;
wire [7:0] rr_pkt_opcode;
wire [23:0] rr_pkt_dest_qp;
wire [23:0] rr_pkt_psn;
wire [7:0] rr_pkt_syndrome;
wire [23:0] rr_pkt_msn;
wire [RAM_ADDR_W-1:0] rr_pkt_payload_addr;
wire [12:0] rr_pkt_payload_len;
wire [63:0] rr_pkt_atomic_orig;
wire rr_pkt_valid;
wire rr_pkt_ready;
wire rr_pkt_done;
wire [47:0] rx_pkt_smac;
wire [31:0] rx_pkt_sip;
wire [31:0] rx_pkt_dip;
wire [15:0] rx_pkt_udp_sport;
wire [7:0] rx_pkt_opcode;
wire rx_pkt_se;
wire rx_pkt_ack_req;
wire [1:0] rx_pkt_pad_cnt;
wire [23:0] rx_pkt_dest_qp;
wire [23:0] rx_pkt_psn;
wire [63:0] rx_pkt_reth_va;
wire [31:0] rx_pkt_reth_rkey;
wire [31:0] rx_pkt_reth_len;
wire [31:0] rx_pkt_imm;
wire [7:0] rx_pkt_aeth_syndrome;
wire [23:0] rx_pkt_aeth_msn;
wire [31:0] rx_pkt_cmp_lo;
wire [RXR_ADDR_W-1:0] rx_pkt_payload_addr;
wire [12:0] rx_pkt_payload_len;
wire [RX_SLOT_W-1:0] rx_pkt_slot;
wire rx_pkt_valid;
wire rx_pkt_ready;
wire rx_free_valid;
wire [RX_SLOT_W-1:0] rx_free_slot;

// ACK / NAK packets from the responder
wire [47:0] ack_dmac;
wire [31:0] ack_dip;
wire [15:0] ack_udp_sport;
wire [23:0] ack_dest_qp;
wire [23:0] ack_psn;
wire [7:0] ack_syndrome;
wire [23:0] ack_msn;
wire ack_mp;
wire [MP_W-2:0] ack_lost;
wire [127:0] ack_snak = {{(129-MP_W){1'b0}}, ack_lost};     // SNAKETH: 128 bits whatever the window
wire ack_valid;
wire ack_ready;

wire [47:0] port_mac = {reg_mac_hi, reg_mac_lo};
wire stat_tx_frame, stat_rx_frame, stat_drop_icrc, stat_drop_malformed, stat_drop_nobuf;

rnic_port #(
    .DATA_W(DATA_W),
    .RAM_ADDR_W(RAM_ADDR_W),
    .TXR_ADDR_W(TXR_ADDR_W),
    .READ_EN(READ_EN),
    .RXR_ADDR_W(RXR_ADDR_W),
    .TX_RAM_BASE(TX_RAM_BASE),
    .RX_SLOTS(RX_SLOTS),
    .RX_SLOT_LOG(RX_SLOT_LOG),
    .RX_SLOT_W(RX_SLOT_W),
    .RR_RAM_BASE(RR_RAM_BASE)
) port_inst (
    .clk(clk),
    .rst(rst),
    .m_axis_tx_tdata(m_axis_tx_tdata),
    .m_axis_tx_tkeep(m_axis_tx_tkeep),
    .m_axis_tx_tvalid(m_axis_tx_tvalid),
    .m_axis_tx_tlast(m_axis_tx_tlast),
    .m_axis_tx_tuser(m_axis_tx_tuser),
    .m_axis_tx_tready(m_axis_tx_tready),
    .s_axis_rx_tdata(s_axis_rx_tdata),
    .s_axis_rx_tkeep(s_axis_rx_tkeep),
    .s_axis_rx_tvalid(s_axis_rx_tvalid),
    .s_axis_rx_tlast(s_axis_rx_tlast),
    .s_axis_rx_tuser(s_axis_rx_tuser),
    .s_axis_rx_tready(s_axis_rx_tready),
    .cfg_mac(port_mac),
    .cfg_ip(reg_ipv4),
    .cfg_lb_loopback(reg_lb_loopback),
    .cfg_lb_drop_thr(reg_lb_drop_thr),
    .cfg_lb_reorder_thr(reg_lb_reorder_thr),
    .cfg_lb_seed(reg_lb_seed),
    .lb_dropped(lb_dropped),
    .lb_reordered(lb_reordered),
    .s_ex_pkt_dmac(ex_pkt_dmac),
    .s_ex_pkt_dip(ex_pkt_dip),
    .s_ex_pkt_udp_sport(ex_pkt_udp_sport),
    .s_ex_pkt_opcode(ex_pkt_opcode),
    .s_ex_pkt_se(ex_pkt_se),
    .s_ex_pkt_ack_req(ex_pkt_ack_req),
    .s_ex_pkt_dest_qp(ex_pkt_dest_qp),
    .s_ex_pkt_psn(ex_pkt_psn),
    .s_ex_pkt_reth_va(ex_pkt_reth_va),
    .s_ex_pkt_reth_rkey(ex_pkt_reth_rkey),
    .s_ex_pkt_reth_len(ex_pkt_reth_len),
    .s_ex_pkt_imm(ex_pkt_imm),
    .s_ex_pkt_atomic_cmp(ex_pkt_atomic_cmp),
    .s_ex_pkt_payload_addr(ex_pkt_payload_addr),
    .s_ex_pkt_payload_len(ex_pkt_payload_len),
    .s_ex_pkt_valid(ex_pkt_valid),
    .s_ex_pkt_ready(ex_pkt_ready),
    .ex_pkt_done(ex_pkt_done),
    .s_rr_pkt_dmac(rr_pkt_dmac),
    .s_rr_pkt_dip(rr_pkt_dip),
    .s_rr_pkt_udp_sport(rr_pkt_udp_sport),
    .s_rr_pkt_opcode(rr_pkt_opcode),
    .s_rr_pkt_dest_qp(rr_pkt_dest_qp),
    .s_rr_pkt_psn(rr_pkt_psn),
    .s_rr_pkt_syndrome(rr_pkt_syndrome),
    .s_rr_pkt_msn(rr_pkt_msn),
    .s_rr_pkt_payload_addr(rr_pkt_payload_addr),
    .s_rr_pkt_payload_len(rr_pkt_payload_len),
    .s_rr_pkt_atomic_orig(rr_pkt_atomic_orig),
    .s_rr_pkt_valid(rr_pkt_valid),
    .s_rr_pkt_ready(rr_pkt_ready),
    .rr_pkt_done(rr_pkt_done),
    .s_ack_dmac(ack_dmac),
    .s_ack_dip(ack_dip),
    .s_ack_udp_sport(ack_udp_sport),
    .s_ack_dest_qp(ack_dest_qp),
    .s_ack_psn(ack_psn),
    .s_ack_syndrome(ack_syndrome),
    .s_ack_msn(ack_msn),
    .s_ack_mp(ack_mp),
    .s_ack_snak(ack_snak),
    .s_ack_valid(ack_valid),
    .s_ack_ready(ack_ready),
    .m_rx_pkt_smac(rx_pkt_smac),
    .m_rx_pkt_sip(rx_pkt_sip),
    .m_rx_pkt_dip(rx_pkt_dip),
    .m_rx_pkt_udp_sport(rx_pkt_udp_sport),
    .m_rx_pkt_opcode(rx_pkt_opcode),
    .m_rx_pkt_se(rx_pkt_se),
    .m_rx_pkt_ack_req(rx_pkt_ack_req),
    .m_rx_pkt_pad_cnt(rx_pkt_pad_cnt),
    .m_rx_pkt_dest_qp(rx_pkt_dest_qp),
    .m_rx_pkt_psn(rx_pkt_psn),
    .m_rx_pkt_reth_va(rx_pkt_reth_va),
    .m_rx_pkt_reth_rkey(rx_pkt_reth_rkey),
    .m_rx_pkt_reth_len(rx_pkt_reth_len),
    .m_rx_pkt_imm(rx_pkt_imm),
    .m_rx_pkt_aeth_syndrome(rx_pkt_aeth_syndrome),
    .m_rx_pkt_aeth_msn(rx_pkt_aeth_msn),
    .m_rx_pkt_cmp_lo(rx_pkt_cmp_lo),
    .m_rx_pkt_payload_addr(rx_pkt_payload_addr),
    .m_rx_pkt_payload_len(rx_pkt_payload_len),
    .m_rx_pkt_slot(rx_pkt_slot),
    .m_rx_pkt_valid(rx_pkt_valid),
    .m_rx_pkt_ready(rx_pkt_ready),
    .s_rx_free_valid(rx_free_valid),
    .s_rx_free_slot(rx_free_slot),
    .m_txr_rd_addr(txr_rd_addr),
    .m_txr_rd_en(txr_rd_en),
    .m_txr_rd_data(txr_rd_data),
    .m_rxr_wr_addr(rxr_wr_addr),
    .m_rxr_wr_data(rxr_wr_data),
    .m_rxr_wr_strb(rxr_wr_strb),
    .m_rxr_wr_en(rxr_wr_en),
    .stat_tx_frame(stat_tx_frame),
    .stat_rx_frame(stat_rx_frame),
    .stat_drop_icrc(stat_drop_icrc),
    .stat_drop_malformed(stat_drop_malformed),
    .stat_drop_nobuf(stat_drop_nobuf)
);

// ---------------------------------------------------------------- transport (rnic_transport)
// errors and event pulses for the status block below
wire qp_reg_err;
wire qp_reg_err_dmac;
wire mr_reg_err;
wire qm_err_valid;
wire qm_busy;
wire qm_sweep;
wire [7:0] qm_err_code;
wire [15:0] qm_err_qn;
wire ex_err_valid;
wire stat_ack_drop;
wire stat_retransmit;
wire stat_timeout;
wire stat_nak_seq;
wire stat_rnr;
wire stat_path_out, stat_path_back;
wire stat_probe, stat_probe_rtt_v;
wire [15:0] stat_probe_rtt;
wire stat_ring_busy;
wire [7:0] ex_err_code;
wire [15:0] ex_err_qn;
wire stat_drop_qp;
wire stat_drop_psn;
wire stat_drop_xport;
wire stat_drop_wimm;
wire stat_nak;
wire cw_err;
wire [QN_W-1:0] cw_err_cqn;
wire stat_cqe;
wire stat_read_req;
wire stat_read_resp;
wire stat_read_placed;
wire stat_rr_nak;
wire stat_atomic, stat_atomic_replay;
wire stat_rd_over;
wire mr_drain;
wire [7:0] reg_qp_rec_word;
wire [1:0] reg_qp_rec_op;
wire reg_qp_rec_valid;
wire [63:0] reg_qp_rec_wdata;
wire [63:0] qp_rec_rdata;
wire qp_rec_busy;
wire [23:0] reg_qp_bind_qpn;
wire [1:0] reg_qp_bind_op;
wire reg_qp_bind_valid;
wire qp_bind_busy;
wire [2:0] qp_bind_err;
wire [23:0] qp_bind_rb_qpn;
wire qp_bind_rb_bound;
wire rec_rd_valid;
wire rec_rd_ready;
wire [QN_W-1:0] rec_rd_slot;
wire [5:0] rec_rd_word;
wire rec_rd_data_valid;
wire [63:0] rec_rd_data;
wire rec_wr_valid;
wire rec_wr_ready;
wire [QN_W-1:0] rec_wr_slot;
wire [5:0] rec_wr_word;
wire [63:0] rec_wr_data;
wire rec_wr_busy;
// the context table's pin and the receive stage's hold (qp_ctx_table)
wire [QN_W-1:0] ctx_pin_slot;
wire ctx_pin_busy;
wire [23:0] ctx_rx_qp;
wire ctx_rx_hold;
wire [63:0] reg_qp_ctx_base;
wire [24:0] reg_qp_ctx_records;
wire [23:0] reg_qp_ctx_wb;
wire [23:0] reg_qp_ctx_record;
wire [1:0] reg_qp_ctx_op;
wire reg_qp_ctx_valid;
wire qp_ctx_busy;
wire [2:0] qp_ctx_err;
wire qp_ctx_fault;
wire [15:0] qp_ctx_done;
wire [31:0] qp_ctx_fills, qp_ctx_wbs, qp_ctx_fails;

rnic_transport #(
    .DATA_W(DATA_W),
    .NUM_Q(NUM_Q),
    .CLK_MHZ(CLK_MHZ),
    .MP_W(MP_W),
    .SEND_EN(SEND_EN),
    .RC_EN(RC_EN),
    .READ_EN(READ_EN),
    .RR_RAM_BASE(RR_RAM_BASE),
    .RR_SLOTS(RR_SLOTS),
    .ATOM_RAM(ATOM_RAM),
    .ATOM_RQ_RAM(ATOM_RQ_RAM),
    .ATOMIC_EN(ATOMIC_EN),
    .OST_RINGS(OST_RINGS_Q),
    .MP_PEND(MP_PEND_Q),
    .MP_WIMM(MP_WIMM_Q),
    .DMAC_N(DMAC_N_Q),
    .NUM_MR(NUM_MR_Q),
    .REC_PORT(REC_PORT),
    .QPN_W(QPN_W),
    .RAM_ADDR_W(RAM_ADDR_W),
    .RXR_ADDR_W(RXR_ADDR_W),
    .RX_SLOT_W(RX_SLOT_W),
    .LEN_W(LEN_W),
    .ID_W(ID_W),
    .CHUNK_LOG(CHUNK_LOG),
    .NUM_SLOTS(NUM_SLOTS),
    .NUM_TX_SLOTS(NUM_TX_SLOTS),
    .WQE_RAM(WQE_RAM),
    .RQWQE_RAM(RQWQE_RAM),
    .CQE_RAM(CQE_RAM),
    .TX_RAM_BASE(TX_RAM_BASE),
    .RX_RAM_BASE(RX_RAM_BASE),
    .ID_EXEC(ID_EXEC),
    .ID_RESP(ID_RESP),
    .ID_CQE(ID_CQE),
    .ID_RRSP(ID_RRSP)
) transport_inst (
    .clk(clk),
    .rst(rst),
    .reg_path_thresh(reg_path_thresh),
    .reg_q_sel(reg_q_sel),
    .reg_q_base_lo(reg_q_base_lo),
    .reg_q_base_hi(reg_q_base_hi),
    .reg_q_size(reg_q_size),
    .reg_q_cqn(reg_q_cqn),
    .reg_q_cmd(reg_q_cmd),
    .reg_q_cmd_valid(reg_q_cmd_valid),
    .reg_sq_db_qn(reg_sq_db_qn),
    .reg_sq_db_pi(reg_sq_db_pi),
    .reg_sq_db_valid(reg_sq_db_valid),
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
    .reg_qp_sel(reg_qp_sel),
    .reg_qp_state(reg_qp_state),
    .reg_qp_pmtu(reg_qp_pmtu),
    .reg_qp_remote_write(reg_qp_remote_write),
    .reg_qp_remote_read(reg_qp_remote_read),
    .reg_qp_remote_atomic(reg_qp_remote_atomic),
    .reg_qp_spray_log(reg_qp_spray_log),
    .reg_qp_mp(reg_qp_mp),
    .reg_qp_mp_wshift(reg_qp_mp_wshift),
    .reg_qp_dest_qpn(reg_qp_dest_qpn),
    .reg_qp_sq_psn(reg_qp_sq_psn),
    .reg_qp_rq_psn(reg_qp_rq_psn),
    .reg_qp_dmac_lo(reg_qp_dmac_lo),
    .reg_qp_dmac_hi(reg_qp_dmac_hi),
    .reg_qp_udp_sport(reg_qp_udp_sport),
    .reg_qp_dip(reg_qp_dip),
    .reg_qp_pd(reg_qp_pd),
    .reg_qp_rcq(reg_qp_rcq),
    .reg_qp_rq_base_lo(reg_qp_rq_base_lo),
    .reg_qp_rq_base_hi(reg_qp_rq_base_hi),
    .reg_qp_rq_size(reg_qp_rq_size),
    .reg_qp_timeout(reg_qp_timeout),
    .reg_qp_retry_cnt(reg_qp_retry_cnt),
    .reg_qp_rnr_retry(reg_qp_rnr_retry),
    .reg_qp_min_rnr_timer(reg_qp_min_rnr_timer),
    .reg_qp_max_rd_atomic(reg_qp_max_rd_atomic),
    .reg_qp_max_dest_rd_atomic(reg_qp_max_dest_rd_atomic),
    .reg_qp_cmd(reg_qp_cmd),
    .reg_qp_cmd_valid(reg_qp_cmd_valid),
    .reg_rq_db_qpn(reg_rq_db_qpn),
    .reg_qp_bind_qpn(reg_qp_bind_qpn),
    .reg_qp_bind_op(reg_qp_bind_op),
    .reg_qp_bind_valid(reg_qp_bind_valid),
    .qp_bind_busy(qp_bind_busy),
    .qp_bind_err(qp_bind_err),
    .qp_bind_rb_qpn(qp_bind_rb_qpn),
    .qp_bind_rb_bound(qp_bind_rb_bound),
    .reg_sq_dbn_qpn(reg_sq_dbn_qpn),
    .reg_sq_dbn_pi(reg_sq_dbn_pi),
    .reg_sq_dbn_valid(reg_sq_dbn_valid),
    .reg_rq_dbn_qpn(reg_rq_dbn_qpn),
    .reg_rq_dbn_pi(reg_rq_dbn_pi),
    .reg_rq_dbn_valid(reg_rq_dbn_valid),
    .dbn_busy(dbn_busy),
    .dbn_err_valid(dbn_err_valid),
    .dbn_err_qpn(dbn_err_qpn),
    .fd_active(fd_active),
    .fd_slot(fd_slot),
    .fd_qpn(fd_qpn),
    .fd_op(fd_op),
    .fd_valid(fd_valid),
    .fd_lk_qpn(fd_lk_qpn),
    .dir_lk_hit(dir_lk_hit),
    .dir_lk_slot(dir_lk_slot),
    .fd_free_from(reg_qp_cache_first),
    .dir_free_valid(dir_free_valid),
    .dir_free_slot(dir_free_slot),
    .fd_miss_en(fd_miss_en),
    .fd_records(reg_qp_ctx_records),
    .rx_miss_valid(rx_miss_valid),
    .rx_miss_qpn(rx_miss_qpn),
    .rx_miss_drop(rx_miss_done && !rx_miss_ok),
    .db_miss_valid(db_miss_valid),
    .db_miss_qpn(db_miss_qpn),
    .db_miss_done(db_miss_done),
    .look_rx_valid(look_rx_valid),
    .look_rx_hit(look_rx_hit),
    .look_db_valid(look_db_valid),
    .look_db_hit(look_db_hit),
    .dbn_waiting(dbn_waiting),
    .dbn_waiting_max(dbn_waiting_max),
    .dbn_idle(dbn_idle),
    .db_miss_ok(db_miss_ok),
    .db_miss_full(db_miss_full),
    .reg_rq_db_pi(reg_rq_db_pi),
    .reg_rq_db_valid(reg_rq_db_valid),
    .sel_qp_state(sel_qp_state),
    .sel_sq_psn(sel_sq_psn),
    .sel_epsn(sel_epsn),
    .reg_mr_sel(reg_mr_sel),
    .reg_mr_key(reg_mr_key),
    .reg_mr_va_lo(reg_mr_va_lo),
    .reg_mr_va_hi(reg_mr_va_hi),
    .reg_mr_len(reg_mr_len),
    .reg_mr_bus_lo(reg_mr_bus_lo),
    .reg_mr_bus_hi(reg_mr_bus_hi),
    .reg_mr_pd(reg_mr_pd),
    .reg_mr_access(reg_mr_access),
    .reg_mr_cmd(reg_mr_cmd),
    .reg_mr_cmd_valid(reg_mr_cmd_valid),
    .reg_debug_cqe_ro(reg_debug_cqe_ro),
    .reg_debug_early_cqe(reg_debug_early_cqe),
    .reg_debug_bypass(reg_debug_bypass),
    .reg_debug_no_mr_check(reg_debug_no_mr_check),
    .reg_debug_early_read_cqe(reg_debug_early_read_cqe),
    .reg_debug_resend_after_cqe(reg_debug_resend_after_cqe),
    .reg_cqe_flush(reg_cqe_flush),
    .cfg_requester_id(cfg_requester_id),
    .msi_vector(msi_vector),
    .msi_valid(msi_valid),
    .msi_ready(msi_ready),
    .qp_reg_err(qp_reg_err),
    .qp_reg_err_dmac(qp_reg_err_dmac),
    .mr_reg_err(mr_reg_err),
    .qm_err_valid(qm_err_valid),
    .qm_busy(qm_busy),
    .qm_sweep(qm_sweep),
    .qm_err_code(qm_err_code),
    .qm_err_qn(qm_err_qn),
    .ex_err_valid(ex_err_valid),
    .ex_err_code(ex_err_code),
    .ex_err_qn(ex_err_qn),
    .cw_err(cw_err),
    .cw_err_cqn(cw_err_cqn),
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
    .stat_drop_qp(stat_drop_qp),
    .stat_drop_psn(stat_drop_psn),
    .stat_drop_xport(stat_drop_xport),
    .stat_drop_wimm(stat_drop_wimm),
    .stat_nak(stat_nak),
    .stat_guard(stat_guard),
    .stat_cqe(stat_cqe),
    .stat_read_req(stat_read_req),
    .stat_read_resp(stat_read_resp),
    .stat_read_placed(stat_read_placed),
    .stat_rr_nak(stat_rr_nak),
    .stat_atomic(stat_atomic),
    .stat_atomic_replay(stat_atomic_replay),
    .stat_rd_over(stat_rd_over),
    .mr_drain(mr_drain),
    .m_ex_rd_pcie_addr(ex_rd_pcie_addr),
    .m_ex_rd_ram_addr(ex_rd_ram_addr),
    .m_ex_rd_len(ex_rd_len),
    .m_ex_rd_id(ex_rd_id),
    .m_ex_rd_valid(ex_rd_valid),
    .m_ex_rd_ready(ex_rd_ready),
    .m_rs_rd_pcie_addr(rs_rd_pcie_addr),
    .m_rs_rd_ram_addr(rs_rd_ram_addr),
    .m_rs_rd_len(rs_rd_len),
    .m_rs_rd_id(rs_rd_id),
    .m_rs_rd_valid(rs_rd_valid),
    .m_rs_rd_ready(rs_rd_ready),
    .m_cw_rd_pcie_addr(cw_rd_pcie_addr),
    .m_cw_rd_len(cw_rd_len),
    .m_cw_rd_id(cw_rd_id),
    .m_cw_rd_valid(cw_rd_valid),
    .m_cw_rd_ready(cw_rd_ready),
    .m_rr_rd_pcie_addr(rr_rd_pcie_addr),
    .m_rr_rd_ram_addr(rr_rd_ram_addr),
    .m_rr_rd_len(rr_rd_len),
    .m_rr_rd_id(rr_rd_id),
    .m_rr_rd_valid(rr_rd_valid),
    .m_rr_rd_ready(rr_rd_ready),
    .m_rr_ram_wr_addr(rr_ram_wr_addr),
    .m_rr_ram_wr_data(rr_ram_wr_data),
    .m_rr_ram_wr_strb(rr_ram_wr_strb),
    .m_rr_ram_wr_en(rr_ram_wr_en),
    .m_rr_ram_wr_ready(rr_ram_wr_ready),
    .m_rr_wr_pcie_addr(rr_wr_pcie_addr),
    .m_rr_wr_ram_addr(rr_wr_ram_addr),
    .m_rr_wr_len(rr_wr_len),
    .m_rr_wr_id(rr_wr_id),
    .m_rr_wr_valid(rr_wr_valid),
    .m_rr_wr_ready(rr_wr_ready),
    .rr_wr_status(rr_wr_status),
    .rd_status_id(rd_status_id),
    .rd_status_error(rd_status_error),
    .ex_rd_status(ex_rd_status),
    .rs_rd_status(rs_rd_status),
    .cw_rd_status(cw_rd_status),
    .rr_rd_status(rr_rd_status),
    .m_ex_wr_pcie_addr(ex_wr_pcie_addr),
    .m_ex_wr_ram_addr(ex_wr_ram_addr),
    .m_ex_wr_len(ex_wr_len),
    .m_ex_wr_id(ex_wr_id),
    .m_ex_wr_valid(ex_wr_valid),
    .m_ex_wr_ready(ex_wr_ready),
    .m_rs_wr_pcie_addr(rs_wr_pcie_addr),
    .m_rs_wr_ram_addr(rs_wr_ram_addr),
    .m_rs_wr_len(rs_wr_len),
    .m_rs_wr_id(rs_wr_id),
    .m_rs_wr_valid(rs_wr_valid),
    .m_rs_wr_ready(rs_wr_ready),
    .m_cw_wr_pcie_addr(cw_wr_pcie_addr),
    .m_cw_wr_ram_addr(cw_wr_ram_addr),
    .m_cw_wr_len(cw_wr_len),
    .m_cw_wr_ro(cw_wr_ro),
    .m_cw_wr_id(cw_wr_id),
    .m_cw_wr_valid(cw_wr_valid),
    .m_cw_wr_ready(cw_wr_ready),
    .ex_wr_status(ex_wr_status),
    .rs_wr_status(rs_wr_status),
    .cw_wr_status(cw_wr_status),
    .wr_engine_idle(wr_engine_idle),
    .m_byp_tlp_hdr(byp_tlp_hdr),
    .m_byp_tlp_data(byp_tlp_data),
    .m_byp_tlp_keep(byp_tlp_keep),
    .m_byp_tlp_valid(byp_tlp_valid),
    .m_byp_tlp_last(byp_tlp_last),
    .m_byp_tlp_ready(byp_tlp_ready),
    .ram_snoop_addr(rd_ram_wr_addr),
    .ram_snoop_data(rd_ram_wr_data),
    .ram_snoop_strb(rd_ram_wr_strb),
    .ram_snoop_en(rd_ram_wr_en),
    .m_cw_ram_wr_addr(cw_ram_wr_addr),
    .m_cw_ram_wr_data(cw_ram_wr_data),
    .m_cw_ram_wr_strb(cw_ram_wr_strb),
    .m_cw_ram_wr_en(cw_ram_wr_en),
    .m_cw_ram_wr_ready(cw_ram_wr_ready),
    .m_ex_pkt_dmac(ex_pkt_dmac),
    .m_ex_pkt_dip(ex_pkt_dip),
    .m_ex_pkt_udp_sport(ex_pkt_udp_sport),
    .m_ex_pkt_opcode(ex_pkt_opcode),
    .m_ex_pkt_se(ex_pkt_se),
    .m_ex_pkt_ack_req(ex_pkt_ack_req),
    .m_ex_pkt_dest_qp(ex_pkt_dest_qp),
    .m_ex_pkt_psn(ex_pkt_psn),
    .m_ex_pkt_reth_va(ex_pkt_reth_va),
    .m_ex_pkt_reth_rkey(ex_pkt_reth_rkey),
    .m_ex_pkt_reth_len(ex_pkt_reth_len),
    .m_ex_pkt_imm(ex_pkt_imm),
    .m_ex_pkt_atomic_cmp(ex_pkt_atomic_cmp),
    .m_ex_pkt_payload_addr(ex_pkt_payload_addr),
    .m_ex_pkt_payload_len(ex_pkt_payload_len),
    .m_ex_pkt_valid(ex_pkt_valid),
    .m_ex_pkt_ready(ex_pkt_ready),
    .ex_pkt_done(ex_pkt_done),
    .m_rr_pkt_dmac(rr_pkt_dmac),
    .m_rr_pkt_dip(rr_pkt_dip),
    .m_rr_pkt_udp_sport(rr_pkt_udp_sport),
    .m_rr_pkt_opcode(rr_pkt_opcode),
    .m_rr_pkt_dest_qp(rr_pkt_dest_qp),
    .m_rr_pkt_psn(rr_pkt_psn),
    .m_rr_pkt_syndrome(rr_pkt_syndrome),
    .m_rr_pkt_msn(rr_pkt_msn),
    .m_rr_pkt_payload_addr(rr_pkt_payload_addr),
    .m_rr_pkt_payload_len(rr_pkt_payload_len),
    .m_rr_pkt_atomic_orig(rr_pkt_atomic_orig),
    .m_rr_pkt_valid(rr_pkt_valid),
    .m_rr_pkt_ready(rr_pkt_ready),
    .rr_pkt_done(rr_pkt_done),
    .m_ack_dmac(ack_dmac),
    .m_ack_dip(ack_dip),
    .m_ack_udp_sport(ack_udp_sport),
    .m_ack_dest_qp(ack_dest_qp),
    .m_ack_psn(ack_psn),
    .m_ack_syndrome(ack_syndrome),
    .m_ack_msn(ack_msn),
    .m_ack_mp(ack_mp),
    .m_ack_lost(ack_lost),
    .m_ack_valid(ack_valid),
    .m_ack_ready(ack_ready),
    .s_rx_pkt_smac(rx_pkt_smac),
    .s_rx_pkt_sip(rx_pkt_sip),
    .s_rx_pkt_dip(rx_pkt_dip),
    .s_rx_pkt_udp_sport(rx_pkt_udp_sport),
    .s_rx_pkt_opcode(rx_pkt_opcode),
    .s_rx_pkt_se(rx_pkt_se),
    .s_rx_pkt_ack_req(rx_pkt_ack_req),
    .s_rx_pkt_pad_cnt(rx_pkt_pad_cnt),
    .s_rx_pkt_dest_qp(rx_pkt_dest_qp),
    .s_rx_pkt_psn(rx_pkt_psn),
    .s_rx_pkt_reth_va(rx_pkt_reth_va),
    .s_rx_pkt_reth_rkey(rx_pkt_reth_rkey),
    .s_rx_pkt_reth_len(rx_pkt_reth_len),
    .s_rx_pkt_imm(rx_pkt_imm),
    .s_rx_pkt_aeth_syndrome(rx_pkt_aeth_syndrome),
    .s_rx_pkt_aeth_msn(rx_pkt_aeth_msn),
    .s_rx_pkt_cmp_lo(rx_pkt_cmp_lo),
    .s_rx_pkt_payload_addr(rx_pkt_payload_addr),
    .s_rx_pkt_payload_len(rx_pkt_payload_len),
    .s_rx_pkt_slot(rx_pkt_slot),
    .s_rx_pkt_valid(rx_pkt_valid),
    .s_rx_pkt_ready(rx_pkt_ready),
    .m_rx_free_valid(rx_free_valid),
    .m_rx_free_slot(rx_free_slot),
    .s_rec_rd_valid(rec_rd_valid),
    .s_rec_rd_ready(rec_rd_ready),
    .s_rec_rd_slot(rec_rd_slot),
    .s_rec_rd_word(rec_rd_word),
    .m_rec_rd_data_valid(rec_rd_data_valid),
    .m_rec_rd_data(rec_rd_data),
    .s_rec_wr_valid(rec_wr_valid),
    .s_rec_wr_ready(rec_wr_ready),
    .s_rec_wr_slot(rec_wr_slot),
    .s_rec_wr_word(rec_wr_word),
    .s_rec_wr_data(rec_wr_data),
    .rec_wr_busy(rec_wr_busy),
    .pin_slot(ctx_pin_slot),
    .pin_busy(ctx_pin_busy),
    .rx_hold_qp(ctx_rx_qp),
    .rx_hold(ctx_rx_hold)
);

// ---------------------------------------------------------------- record window, context table
// the context engine's commands: the host's (BAR0 qp_ctx_cmd), or the
// fetch's while it runs (the host's MMIO waits meanwhile), and each
// command's fate for the fetch
wire c_ready, c_ans_valid, c_ans_taken, c_end_valid, c_end_ok;
wire [QN_W-1:0] c_end_slot;
wire f_c_valid;
wire [15:0] f_c_slot;
wire [1:0] f_c_op;
wire [23:0] f_c_record, f_c_wb;

// BAR0's qp_rec_cmd (the record window) and qp_ctx_cmd (the context table's
// fill engine, a DMA client) onto the transport's record port (REC_PORT
// builds); the fill engine has the port while its command runs
generate
if (REC_PORT != 0) begin : g_rec_window
    wire win_rd_valid, win_rd_ready, win_rd_data_valid;
    wire [QN_W-1:0] win_rd_slot, win_wr_slot;
    wire [5:0] win_rd_word, win_wr_word;
    wire win_wr_valid, win_wr_ready;
    wire [63:0] win_wr_data;

    qp_rec_window #(
        .NUM_Q(NUM_Q),
        .QN_W(QN_W),
        .REC_WORDS(64),
        .WORD_W(6)
    ) rec_window_inst (
        .clk(clk),
        .rst(rst),
        .cmd_qpn(reg_qp_sel),
        .cmd_word(reg_qp_rec_word),
        .cmd_op(reg_qp_rec_op),
        .cmd_valid(reg_qp_rec_valid),
        .cmd_wdata(reg_qp_rec_wdata),
        .rdata(qp_rec_rdata),
        .busy(qp_rec_busy),
        .m_rec_rd_valid(win_rd_valid),
        .m_rec_rd_ready(win_rd_ready),
        .m_rec_rd_slot(win_rd_slot),
        .m_rec_rd_word(win_rd_word),
        .s_rec_rd_data_valid(win_rd_data_valid),
        .s_rec_rd_data(rec_rd_data),
        .m_rec_wr_valid(win_wr_valid),
        .m_rec_wr_ready(win_wr_ready),
        .m_rec_wr_slot(win_wr_slot),
        .m_rec_wr_word(win_wr_word),
        .m_rec_wr_data(win_wr_data),
        .rec_wr_busy(rec_wr_busy)
    );

    qp_ctx_table #(
        .NUM_Q(NUM_Q),
        .QN_W(QN_W),
        .REC_WORDS(64),
        .WORD_W(6),
        .FILLS(CTX_FILLS),
        .ID_W(ID_W),
        .LEN_W(LEN_W),
        .RAM_ADDR_W(RAM_ADDR_W),
        .BUF_BASE(FILL_RAM),
        .ID_TAG(ID_FILL),
        // CQ n's words of slot n's record (rnic_transport's map): CQs stay
        // on chip
        .KEEP_LO(16),
        .KEEP_N(8)
    ) ctx_table_inst (
        .clk(clk),
        .rst(rst),
        .pin_slot(ctx_pin_slot),
        .pin_busy(ctx_pin_busy),
        .cfg_unpinned(reg_debug_unpinned_move),
        .rx_qp(ctx_rx_qp),
        .rx_hold(ctx_rx_hold),
        .cfg_base(reg_qp_ctx_base),
        .cfg_records(reg_qp_ctx_records),
        .cmd_slot(fetch_active ? f_c_slot : reg_qp_sel),
        .cmd_record(fetch_active ? f_c_record : reg_qp_ctx_record),
        .cmd_wb_record(fetch_active ? f_c_wb : reg_qp_ctx_wb),
        .cmd_op(fetch_active ? f_c_op : reg_qp_ctx_op),
        .cmd_valid(fetch_active ? f_c_valid : reg_qp_ctx_valid),
        .cmd_ready(c_ready),
        .ans_valid(c_ans_valid),
        .ans_taken(c_ans_taken),
        .end_valid(c_end_valid),
        .end_slot(c_end_slot),
        .end_ok(c_end_ok),
        .busy(qp_ctx_busy),
        .err(qp_ctx_err),
        .fault(qp_ctx_fault),
        .done(qp_ctx_done),
        .count_fills(qp_ctx_fills),
        .count_wbs(qp_ctx_wbs),
        .count_fails(qp_ctx_fails),
        .win_busy(qp_rec_busy),
        .s_win_rd_valid(win_rd_valid),
        .s_win_rd_ready(win_rd_ready),
        .s_win_rd_slot(win_rd_slot),
        .s_win_rd_word(win_rd_word),
        .s_win_rd_data_valid(win_rd_data_valid),
        .s_win_wr_valid(win_wr_valid),
        .s_win_wr_ready(win_wr_ready),
        .s_win_wr_slot(win_wr_slot),
        .s_win_wr_word(win_wr_word),
        .s_win_wr_data(win_wr_data),
        .m_rec_rd_valid(rec_rd_valid),
        .m_rec_rd_ready(rec_rd_ready),
        .m_rec_rd_slot(rec_rd_slot),
        .m_rec_rd_word(rec_rd_word),
        .s_rec_rd_data_valid(rec_rd_data_valid),
        .s_rec_rd_data(rec_rd_data),
        .m_rec_wr_valid(rec_wr_valid),
        .m_rec_wr_ready(rec_wr_ready),
        .m_rec_wr_slot(rec_wr_slot),
        .m_rec_wr_word(rec_wr_word),
        .m_rec_wr_data(rec_wr_data),
        .rec_wr_busy(rec_wr_busy),
        .m_buf_wr_en(qf_ram_wr_en),
        .m_buf_wr_ready(qf_ram_wr_ready),
        .m_buf_wr_addr(qf_ram_wr_addr),
        .m_buf_wr_data(qf_ram_wr_data),
        .m_buf_rd_en(qf_ram_rd_en),
        .m_buf_rd_ready(qf_ram_rd_ready),
        .m_buf_rd_addr(qf_ram_rd_addr),
        .s_buf_rd_data(qf_ram_rd_data),
        .m_rd_desc_valid(qf_rd_valid),
        .m_rd_desc_ready(qf_rd_ready),
        .m_rd_desc_pcie_addr(qf_rd_pcie_addr),
        .m_rd_desc_ram_addr(qf_rd_ram_addr),
        .m_rd_desc_len(qf_rd_len),
        .m_rd_desc_id(qf_rd_id),
        .s_rd_status_valid(qf_rd_status),
        .s_rd_status_id(rd_status_id),
        .s_rd_status_error(rd_status_error),
        .m_wr_desc_valid(qf_wr_valid),
        .m_wr_desc_ready(qf_wr_ready),
        .m_wr_desc_pcie_addr(qf_wr_pcie_addr),
        .m_wr_desc_ram_addr(qf_wr_ram_addr),
        .m_wr_desc_len(qf_wr_len),
        .m_wr_desc_id(qf_wr_id),
        .s_wr_status_valid(qf_wr_status)
    );
end else begin : g_no_rec_window
    assign qp_rec_rdata = 64'd0;
    assign qp_rec_busy = 1'b0;
    assign rec_rd_valid = 1'b0;
    assign rec_rd_slot = {QN_W{1'b0}};
    assign rec_rd_word = 6'd0;
    assign rec_wr_valid = 1'b0;
    assign rec_wr_slot = {QN_W{1'b0}};
    assign rec_wr_word = 6'd0;
    assign rec_wr_data = 64'd0;
    assign {qf_rd_pcie_addr, qf_rd_ram_addr, qf_rd_len, qf_rd_id, qf_rd_valid} = {(64 + RAM_ADDR_W + LEN_W + ID_W + 1){1'b0}};
    assign {qf_wr_pcie_addr, qf_wr_ram_addr, qf_wr_len, qf_wr_id, qf_wr_valid} = {(64 + RAM_ADDR_W + LEN_W + ID_W + 1){1'b0}};
    assign {qf_ram_wr_addr, qf_ram_wr_data, qf_ram_wr_en, qf_ram_rd_addr, qf_ram_rd_en} = {(2 * RAM_ADDR_W + 66){1'b0}};
    // a context command answers "no context engine in this build"
    reg ctx_cmd_seen_reg = 1'b0;
    always @(posedge clk) begin
        ctx_cmd_seen_reg <= !rst && (ctx_cmd_seen_reg || reg_qp_ctx_valid);
    end
    assign qp_ctx_busy = 1'b0;
    assign {c_ready, c_ans_valid, c_ans_taken, c_end_valid, c_end_ok} = 5'd0;
    assign c_end_slot = {QN_W{1'b0}};
    assign ctx_pin_slot = {QN_W{1'b0}};
    assign ctx_rx_hold = 1'b0;
    assign qp_ctx_err = ctx_cmd_seen_reg ? 3'd1 : 3'd0;
    assign qp_ctx_fault = 1'b0;
    assign qp_ctx_done = 16'd0;
    assign {qp_ctx_fills, qp_ctx_wbs, qp_ctx_fails} = 96'd0;
    // (the commands of a build without the port do nothing)
    /* verilator lint_off UNUSEDSIGNAL */
    wire unused_rec = ^{reg_qp_rec_word, reg_qp_rec_op, reg_qp_rec_valid, reg_qp_rec_wdata,
                        rec_rd_ready, rec_rd_data_valid, rec_rd_data, rec_wr_ready, rec_wr_busy,
                        reg_qp_ctx_base, reg_qp_ctx_records, reg_qp_ctx_wb, reg_qp_ctx_record, reg_qp_ctx_op,
                        qf_rd_ready, qf_rd_status, qf_wr_ready, qf_wr_status, qf_ram_wr_ready,
                        qf_ram_rd_ready, qf_ram_rd_data, ctx_pin_busy, ctx_rx_qp,
                        reg_debug_unpinned_move, f_c_valid, f_c_slot, f_c_op, f_c_record, f_c_wb};
    /* verilator lint_on UNUSEDSIGNAL */
end
endgenerate

// The NIC's fetch of a QP by number (qp_block.qp_fetch): the context
// engine and the directory, driven by qp_fetch (builds with both)
generate
if (REC_PORT != 0 && QPN_W > 0) begin : g_fetch
    wire [QN_W-1:0] fetch_slot_q;
    qp_fetch #(
        .NUM_Q(NUM_Q),
        .QN_W(QN_W),
        .QPN_W(QPN_W),
        .LK_LAT(2)
    ) fetch_inst (
        .clk(clk),
        .rst(rst),
        .cfg_first(reg_qp_cache_first),
        .cfg_records(reg_qp_ctx_records),
        .cmd_valid(reg_qp_fetch_valid),
        .cmd_qpn(reg_qp_fetch_qpn),
        .cmd_hold(reg_qp_fetch_hold),
        .cmd_unhold(reg_qp_fetch_unhold),
        .busy(fetch_busy),
        .active(fetch_active),
        .db_idle(dbn_idle),
        .cfg_auto(fd_miss_en),
        .rx_miss_valid(rx_miss_valid),
        .rx_miss_qpn(rx_miss_qpn),
        .rx_miss_done(rx_miss_done),
        .rx_miss_ok(rx_miss_ok),
        .db_miss_valid(db_miss_valid),
        .db_miss_qpn({8'd0, db_miss_qpn}),
        .db_miss_done(db_miss_done),
        .db_miss_ok(db_miss_ok),
        .db_miss_full(db_miss_full),
        .count_misses(fetch_misses),
        .count_evictions(fetch_evictions),
        .count_full(fetch_full),
        .look_rx_valid(look_rx_valid),
        .look_rx_hit(look_rx_hit),
        .look_db_valid(look_db_valid),
        .look_db_hit(look_db_hit),
        .count_lookups(qp_lookups),
        .count_lookup_misses(qp_lookup_misses),
        .res_err(fetch_err),
        .res_slot(fetch_slot_q),
        .res_loaded(fetch_loaded),
        .res_evicted(fetch_evicted),
        .res_victim(fetch_victim),
        .res_held(fetch_held),
        .lk_qpn(fd_lk_qpn),
        .lk_hit(dir_lk_hit),
        .lk_slot(dir_lk_slot),
        .d_slot(fd_slot),
        .d_qpn(fd_qpn),
        .d_op(fd_op),
        .d_valid(fd_valid),
        .d_busy(qp_bind_busy),
        .d_err(qp_bind_err),
        .d_rb_bound(qp_bind_rb_bound),
        .d_rb_qpn(qp_bind_rb_qpn),
        .d_free_valid(dir_free_valid),
        .d_free_slot(dir_free_slot),
        .c_ready(c_ready),
        .c_valid(f_c_valid),
        .c_slot(f_c_slot),
        .c_op(f_c_op),
        .c_record(f_c_record),
        .c_wb(f_c_wb),
        .c_ans_valid(c_ans_valid),
        .c_ans_taken(c_ans_taken),
        .c_end_valid(c_end_valid),
        .c_end_slot(c_end_slot),
        .c_end_ok(c_end_ok)
    );
    assign fetch_slot = {{(16-QN_W){1'b0}}, fetch_slot_q};
    assign fd_active = fetch_active;
end else begin : g_no_fetch
    // a fetch answers "no fetch in this build" and moves nothing
    reg fetch_seen_reg = 1'b0;
    always @(posedge clk) begin
        fetch_seen_reg <= !rst && (fetch_seen_reg || reg_qp_fetch_valid);
    end
    assign fetch_busy = 1'b0;
    assign fetch_active = 1'b0;
    assign fetch_err = fetch_seen_reg ? 3'd1 : 3'd0;
    assign {rx_miss_done, rx_miss_ok, db_miss_done, db_miss_ok, db_miss_full} = 5'd0;
    assign {fetch_misses, fetch_evictions, fetch_full, qp_lookups, qp_lookup_misses} = 160'd0;
    assign {fetch_slot, fetch_loaded, fetch_evicted, fetch_victim, fetch_held} = {16'd0, 1'b0, 1'b0, 24'd0, 1'b0};
    assign {fd_active, fd_slot, fd_qpn, fd_op, fd_valid, fd_lk_qpn} = {1'b0, 16'd0, 24'd0, 2'd0, 1'b0, 24'd0};
    assign {f_c_valid, f_c_slot, f_c_op, f_c_record, f_c_wb} = {1'b0, 16'd0, 2'd0, 24'd0, 24'd0};
    /* verilator lint_off UNUSEDSIGNAL */
    wire unused_fetch = ^{reg_qp_fetch_qpn, reg_qp_fetch_hold, reg_qp_fetch_unhold, dir_lk_hit, dir_lk_slot, c_ready, c_ans_valid, c_ans_taken,
                          c_end_valid, c_end_slot, c_end_ok, dir_free_valid, dir_free_slot, rx_miss_valid,
                          rx_miss_qpn, db_miss_valid, db_miss_qpn, look_rx_valid, look_rx_hit, look_db_valid, look_db_hit, dbn_idle, fetch_active};
    /* verilator lint_on UNUSEDSIGNAL */
end
endgenerate

// ---------------------------------------------------------------- control plane
// (declared first, above: its fields feed the subsystems)
rnic_control #(
    .DATA_W(DATA_W),
    .QN_W(QN_W),
    .BUILD_VERSION(BUILD_VERSION),
    .GIT_HASH(GIT_HASH),
    .BOARD_ID(BOARD_ID),
    .ID_NUM_Q(NUM_Q),
    .ID_VERBS(VERBS),
    .ID_CAPS(CAPS),
    .ID_MP_W(MP_W),
    .ID_OST_RINGS(OST_RINGS_Q),
    .ID_MP_PEND(MP_PEND_Q),
    .ID_MP_WIMM(MP_WIMM_Q),
    .ID_DMACS(DMAC_N_Q),
    .ID_MRS(NUM_MR_Q),
    .ID_QP_REC_WORDS(REC_PORT != 0 ? 32'd64 : 32'd0),
    .ID_CTX_FILLS(REC_PORT != 0 ? CTX_FILLS : 32'd0),
    .ID_QPN_BITS(QPN_W)
) control_inst (
    .clk(clk),
    .rst(rst),
    .rx_req_tlp_hdr(rx_req_tlp_hdr),
    .rx_req_tlp_data(rx_req_tlp_data),
    .rx_req_tlp_keep(rx_req_tlp_keep),
    .rx_req_tlp_valid(rx_req_tlp_valid),
    .rx_req_tlp_last(rx_req_tlp_last),
    .rx_req_tlp_ready(rx_req_tlp_ready),
    .tx_cpl_tlp_hdr(tx_cpl_tlp_hdr),
    .tx_cpl_tlp_data(tx_cpl_tlp_data),
    .tx_cpl_tlp_keep(tx_cpl_tlp_keep),
    .tx_cpl_tlp_valid(tx_cpl_tlp_valid),
    .tx_cpl_tlp_last(tx_cpl_tlp_last),
    .tx_cpl_tlp_ready(tx_cpl_tlp_ready),
    .cfg_max_payload(cfg_max_payload),
    .cfg_max_read_req(cfg_max_read_req),
    .cfg_requester_id(cfg_requester_id),
    .flash_sck(flash_sck),
    .flash_cs_n(flash_cs_n),
    .flash_io_o(flash_io_o),
    .flash_io_oe(flash_io_oe),
    .flash_io_i(flash_io_i),
    .boot_slot(boot_slot),
    .boot_fallback(boot_fallback),
    .reconfig_req(reconfig_req),
    .reg_q_sel(reg_q_sel),
    .reg_q_base_lo(reg_q_base_lo),
    .reg_q_base_hi(reg_q_base_hi),
    .reg_q_size(reg_q_size),
    .reg_q_cqn(reg_q_cqn),
    .reg_q_cmd(reg_q_cmd),
    .reg_sq_db_pi(reg_sq_db_pi),
    .reg_sq_db_qn(reg_sq_db_qn),
    .reg_cq_db_ci(reg_cq_db_ci),
    .reg_cq_db_cqn(reg_cq_db_cqn),
    .reg_cq_arm_cqn(reg_cq_arm_cqn),
    .reg_debug_cqe_ro(reg_debug_cqe_ro),
    .reg_debug_early_cqe(reg_debug_early_cqe),
    .reg_debug_bypass(reg_debug_bypass),
    .reg_debug_no_mr_check(reg_debug_no_mr_check),
    .reg_debug_early_read_cqe(reg_debug_early_read_cqe),
    .reg_debug_resend_after_cqe(reg_debug_resend_after_cqe),
    .reg_debug_unpinned_move(reg_debug_unpinned_move),
    .reg_cqe_flush(reg_cqe_flush),
    .reg_mac_lo(reg_mac_lo),
    .reg_mac_hi(reg_mac_hi),
    .reg_ipv4(reg_ipv4),
    .reg_qp_sel(reg_qp_sel),
    .reg_qp_state(reg_qp_state),
    .reg_qp_pmtu(reg_qp_pmtu),
    .reg_qp_remote_write(reg_qp_remote_write),
    .reg_qp_remote_read(reg_qp_remote_read),
    .reg_qp_remote_atomic(reg_qp_remote_atomic),
    .reg_qp_spray_log(reg_qp_spray_log),
    .reg_qp_mp(reg_qp_mp),
    .reg_qp_mp_wshift(reg_qp_mp_wshift),
    .reg_qp_dest_qpn(reg_qp_dest_qpn),
    .reg_qp_sq_psn(reg_qp_sq_psn),
    .reg_qp_rq_psn(reg_qp_rq_psn),
    .reg_qp_dmac_lo(reg_qp_dmac_lo),
    .reg_qp_dmac_hi(reg_qp_dmac_hi),
    .reg_qp_udp_sport(reg_qp_udp_sport),
    .reg_qp_dip(reg_qp_dip),
    .reg_qp_pd(reg_qp_pd),
    .reg_qp_rcq(reg_qp_rcq),
    .reg_qp_rq_base_lo(reg_qp_rq_base_lo),
    .reg_qp_rq_base_hi(reg_qp_rq_base_hi),
    .reg_qp_rq_size(reg_qp_rq_size),
    .reg_qp_cmd(reg_qp_cmd),
    .reg_rq_db_pi(reg_rq_db_pi),
    .reg_rq_db_qpn(reg_rq_db_qpn),
    .reg_qp_bind_qpn(reg_qp_bind_qpn),
    .reg_qp_bind_op(reg_qp_bind_op),
    .reg_qp_bind_valid(reg_qp_bind_valid),
    .qp_bind_busy(qp_bind_busy),
    .qp_bind_err(qp_bind_err),
    .qp_bind_rb_qpn(qp_bind_rb_qpn),
    .qp_bind_rb_bound(qp_bind_rb_bound),
    .reg_sq_dbn_qpn(reg_sq_dbn_qpn),
    .reg_sq_dbn_pi(reg_sq_dbn_pi),
    .reg_sq_dbn_valid(reg_sq_dbn_valid),
    .reg_rq_dbn_qpn(reg_rq_dbn_qpn),
    .reg_rq_dbn_pi(reg_rq_dbn_pi),
    .reg_rq_dbn_valid(reg_rq_dbn_valid),
    .dbn_busy(dbn_busy),
    .dbn_err_valid(dbn_err_valid),
    .dbn_err_qpn(dbn_err_qpn),
    .reg_qp_cache_first(reg_qp_cache_first),
    .reg_qp_cache_auto(reg_qp_cache_auto),
    .fetch_misses(fetch_misses),
    .fetch_evictions(fetch_evictions),
    .fetch_full(fetch_full),
    .qp_lookups(qp_lookups),
    .qp_lookup_misses(qp_lookup_misses),
    .dbn_waiting(dbn_waiting),
    .dbn_waiting_max(dbn_waiting_max),
    .reg_qp_fetch_qpn(reg_qp_fetch_qpn),
    .reg_qp_fetch_valid(reg_qp_fetch_valid),
    .reg_qp_fetch_hold(reg_qp_fetch_hold),
    .reg_qp_fetch_unhold(reg_qp_fetch_unhold),
    .fetch_held(fetch_held),
    .fetch_busy(fetch_busy),
    .fetch_err(fetch_err),
    .fetch_slot(fetch_slot),
    .fetch_loaded(fetch_loaded),
    .fetch_evicted(fetch_evicted),
    .fetch_victim(fetch_victim),
    .reg_mr_sel(reg_mr_sel),
    .reg_mr_key(reg_mr_key),
    .reg_mr_va_lo(reg_mr_va_lo),
    .reg_mr_va_hi(reg_mr_va_hi),
    .reg_mr_len(reg_mr_len),
    .reg_mr_bus_lo(reg_mr_bus_lo),
    .reg_mr_bus_hi(reg_mr_bus_hi),
    .reg_mr_pd(reg_mr_pd),
    .reg_mr_access(reg_mr_access),
    .reg_mr_cmd(reg_mr_cmd),
    .reg_qp_timeout(reg_qp_timeout),
    .reg_lb_loopback(reg_lb_loopback),
    .reg_lb_drop_thr(reg_lb_drop_thr),
    .reg_lb_reorder_thr(reg_lb_reorder_thr),
    .reg_lb_seed(reg_lb_seed),
    .reg_path_thresh(reg_path_thresh),
    .reg_qp_retry_cnt(reg_qp_retry_cnt),
    .reg_qp_rnr_retry(reg_qp_rnr_retry),
    .reg_qp_min_rnr_timer(reg_qp_min_rnr_timer),
    .reg_qp_max_rd_atomic(reg_qp_max_rd_atomic),
    .reg_qp_max_dest_rd_atomic(reg_qp_max_dest_rd_atomic),
    .reg_q_cmd_valid(reg_q_cmd_valid),
    .reg_sq_db_valid(reg_sq_db_valid),
    .reg_cq_db_valid(reg_cq_db_valid),
    .reg_cq_arm_valid(reg_cq_arm_valid),
    .reg_qp_cmd_valid(reg_qp_cmd_valid),
    .reg_rq_db_valid(reg_rq_db_valid),
    .reg_mr_cmd_valid(reg_mr_cmd_valid),
    .reg_qp_rec_word(reg_qp_rec_word),
    .reg_qp_rec_op(reg_qp_rec_op),
    .reg_qp_rec_valid(reg_qp_rec_valid),
    .reg_qp_rec_wdata(reg_qp_rec_wdata),
    .qp_rec_rdata(qp_rec_rdata),
    .qp_rec_busy(qp_rec_busy),
    .reg_qp_ctx_base(reg_qp_ctx_base),
    .reg_qp_ctx_records(reg_qp_ctx_records),
    .reg_qp_ctx_wb(reg_qp_ctx_wb),
    .reg_qp_ctx_record(reg_qp_ctx_record),
    .reg_qp_ctx_op(reg_qp_ctx_op),
    .reg_qp_ctx_valid(reg_qp_ctx_valid),
    .qp_ctx_busy(qp_ctx_busy),
    .qp_ctx_err(qp_ctx_err),
    .qp_ctx_fault(qp_ctx_fault),
    .qp_ctx_done(qp_ctx_done),
    .qp_ctx_fills(qp_ctx_fills),
    .qp_ctx_wbs(qp_ctx_wbs),
    .qp_ctx_fails(qp_ctx_fails),
    .sel_sq_pi(sel_sq_pi),
    .sel_sq_ci(sel_sq_ci),
    .sel_cq_pi(sel_cq_pi),
    .sel_sq_en(sel_sq_en),
    .sel_cq_en(sel_cq_en),
    .sel_cq_armed(sel_cq_armed),
    .sel_cq_phase(sel_cq_phase),
    .sel_qp_state(sel_qp_state),
    .sel_sq_psn(sel_sq_psn),
    .sel_epsn(sel_epsn),
    .ex_err_valid(ex_err_valid),
    .ex_err_code(ex_err_code),
    .ex_err_qn(ex_err_qn),
    .qm_err_valid(qm_err_valid),
    .qm_busy(qm_busy),
    .qm_sweep(qm_sweep),
    .qm_err_code(qm_err_code),
    .qm_err_qn(qm_err_qn),
    .cw_err(cw_err),
    .cw_err_cqn(cw_err_cqn),
    .mr_reg_err(mr_reg_err),
    .qp_reg_err(qp_reg_err),
    .qp_reg_err_dmac(qp_reg_err_dmac),
    .stat_cqe(stat_cqe),
    .stat_rd_req(stat_rd_req),
    .stat_wr_tlp(stat_wr_tlp),
    .stat_rd_err(stat_rd_err),
    .stat_tx_frame(stat_tx_frame),
    .stat_rx_frame(stat_rx_frame),
    .stat_drop_icrc(stat_drop_icrc),
    .stat_drop_malformed(stat_drop_malformed),
    .stat_drop_nobuf(stat_drop_nobuf),
    .stat_drop_qp(stat_drop_qp),
    .stat_drop_psn(stat_drop_psn),
    .stat_ack_drop(stat_ack_drop),
    .stat_nak(stat_nak),
    .stat_retransmit(stat_retransmit),
    .stat_timeout(stat_timeout),
    .stat_nak_seq(stat_nak_seq),
    .stat_rnr(stat_rnr),
    .stat_path_out(stat_path_out),
    .stat_path_back(stat_path_back),
    .stat_probe(stat_probe),
    .stat_probe_rtt_v(stat_probe_rtt_v),
    .stat_probe_rtt(stat_probe_rtt),
    .stat_guard(stat_guard),
    .stat_drop_xport(stat_drop_xport),
    .stat_drop_wimm(stat_drop_wimm),
    .stat_ring_busy(stat_ring_busy),
    .stat_read_req(stat_read_req),
    .stat_read_resp(stat_read_resp),
    .stat_read_placed(stat_read_placed),
    .stat_rr_nak(stat_rr_nak),
    .stat_atomic(stat_atomic),
    .stat_atomic_replay(stat_atomic_replay),
    .stat_rd_over(stat_rd_over),
    .mr_drain(mr_drain),
    .lb_dropped(lb_dropped),
    .lb_reordered(lb_reordered)
);

endmodule

`resetall
