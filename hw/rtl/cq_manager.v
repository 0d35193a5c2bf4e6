// Completion queues: each CQ's ring state, enable, arming and MSI-pending
// bits in block RAM, the slot allocation for the CQE writer, the
// consumer-index doorbell, arming, and MSI.
//
// Records (one word per CQ, declared once below), by writer:
//   CQP, the ring (base, size, producer index): written by a ring command
//     or an allocation; read whole by the allocation, in part by the
//     register view and (the size) by the doorbells. A CQ is enabled while
//     its size is not 0 (a ring has 2 entries at least; a destroy writes
//     the record as zero);
//   CQC, the consumer index: written by a create or the CQ doorbell, read
//     by the allocation;
//   CQM, the MMIO side's half of the armed bit (a command disarms, an arm
//     arms);
//   NTF, the notifications' halves of the armed bit (a notification of an
//     armed CQ disarms it) and of the MSI-pending bit (it queues an MSI);
//   MSS, the MSI sender's half of the MSI-pending bit (a sent MSI clears);
//   MSIQ, the FIFO of CQs owed an MSI (one entry per CQ at most), each
//     entry with the pending half its push wrote.
// A CQ is armed while CQM ^ NTF.ARMED is 1 and owes an MSI while
// NTF.PEND ^ MSS is 1: a bit with several writers, each writing its own
// half against the others as they stand (hw/README.md, "One-bit per-QP
// state with more than one writer"). Flop vectors with a decoder per writer
// and a mux per reader cost LUTs per CQ; this costs a few comparators.
//
// Every event acts a cycle after it comes, reading its CQ's records in
// the cycle it comes (the registered RAM reads are addressed by the
// event's CQ number): a ring command, a doorbell and an arm (one register
// write per cycle, so never two in one cycle, as they came) and a
// notification. A notification and an MMIO event of the same CQ in one
// cycle act as if the MMIO event came first: the notification's push
// looks at the bits as they stood, and its disarm is dropped when a
// command disarms the CQ in that cycle (the halves would cancel).
//
// Allocation: the CQE writer holds alloc_valid and alloc_cqn until
// alloc_done. The records are read at alloc_cqn, captured, then checked
// and the producer index written back; a done pulse three cycles after the
// request answers ok (a slot: its address and phase; the index has moved),
// bad (the CQ is disabled) or neither (the ring is full, or a ring command
// came meanwhile: ask again). One allocation at a time, so a read never
// misses a write of its own still on its way; a command during one aborts
// it (its write would undo a create). A doorbell meanwhile may leave the
// read's consumer index old: the ring looks fuller than it is, never less
// full, and the writer asks again. A destroy writes the record as zero.
//
// The register view (sel_pi, sel_phase, sel_en, sel_armed) comes from
// registered reads, a cycle after sel_qn (two after a write): MMIO reads
// come many cycles after the selector's write.
//
// MSI: a notification of an armed CQ disarms it and, unless an MSI is
// already pending for it, queues its number; the queue is sent in order,
// vector = CQ number mod 32.
//
// Reset: block RAM has no reset, so a reset after the records were
// written sweeps them (NUM_Q cycles, one CQ a cycle: disabled, disarmed,
// no MSI owed). At power-up the RAMs hold their initial words and nothing
// is swept. Events in the sweep are refused: a doorbell or an arm as of a
// disabled CQ, a ring command with ERR_CQ_BUSY; a host may not access a
// PCIe function for 100 ms after a reset, and the register block holds
// MMIO requests while `busy` (a simulated host may come sooner).
//
// Record port (REC_PORT 1; issue 19, DESIGN.md section 6, step 1): the
// per-CQ records, read and written whole as REC_WORDS 64-bit words per CQ
// (rec_map's layout and contract), for the QP context cache's fill and
// write-back: CQP, CQC, CQM, NTF, MSS in that order, each from a 64-bit
// word boundary (CQP 72 bits in words 0-1, CQC 16 in word 2, CQM 1 in
// word 3, NTF 2 in word 4, MSS 1 in word 5; words 6-7 padding at the
// default REC_WORDS 8). Each is a ram_rec: one more copy of the whole
// record for the read, and the record write takes the RAM's write port in
// cycles the module does not write it (the module's write first). MSIQ is
// not in the record: a FIFO addressed by its head and tail, not by CQ
// number, holding only CQs that owe an MSI (NTF.PEND ^ MSS.PEND 1), which
// the cache keeps pinned, never filled or written back; so a CQ's record
// moves owing none. A record write of CQP, CQM, NTF or MSS counts as a
// write for the sweep after a reset. REC_PORT 0 builds none of it (the
// ram_recs are ram_sdp_copies, the port's outputs are constants).

`resetall
`timescale 1ns / 1ps
`default_nettype none

module cq_manager #(
    parameter NUM_Q = 16,
    parameter QN_W = 4,
    parameter REC_PORT = 0,             // 1: the record port (header)
    parameter REC_WORDS = 8             // the record port's 64-bit words per CQ, 2^k, 2..64
) (
    input  wire             clk,
    input  wire             rst,

    // ring commands, already checked by the queue manager
    input  wire             cmd_create,
    input  wire             cmd_destroy,
    input  wire [QN_W-1:0]  cmd_qn,
    input  wire [51:0]      cmd_base,          // bits 63:12 (rings are 4 KiB aligned)
    input  wire [3:0]       cmd_log,           // log2 of the ring's entries, 1..15

    // doorbells (from the register block, unchecked)
    input  wire [15:0]      db_cqn,
    input  wire [15:0]      db_ci,
    input  wire             db_valid,
    input  wire [15:0]      arm_cqn,
    input  wire             arm_valid,

    // register view of one CQ
    input  wire [QN_W-1:0]  sel_qn,
    output wire [15:0]      sel_pi,
    output wire             sel_en,
    output wire             sel_armed,
    output wire             sel_phase,

    // CQE writer: a slot of alloc_cqn
    input  wire             alloc_valid,
    input  wire [QN_W-1:0]  alloc_cqn,
    output wire             alloc_done,
    output wire             alloc_ok,
    output wire             alloc_bad,
    output wire [63:0]      alloc_addr,
    output wire             alloc_phase,

    // CQE writer: a CQE of notify_cqn has been written
    input  wire             notify,
    input  wire [QN_W-1:0]  notify_cqn,

    output wire [4:0]       msi_vector,
    output wire             msi_valid,
    input  wire             msi_ready,

    // 1: a doorbell or arm of a disabled or missing CQ, or a ring command
    // in the sweep after a reset
    output wire             err_valid,
    output wire [7:0]       err_code,
    output wire [15:0]      err_qn,

    // the sweep after a reset is clearing the records (the register block
    // holds MMIO requests meanwhile)
    output wire             busy,

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

// the ring entry formats: hw/formats/rnic_formats.rdl
`include "rnic_formats.vh"

localparam CQE_SIZE_LOG = $clog2(CQE_BYTES);
localparam [7:0] ERR_DB_DISABLED = 8'd1;
localparam [7:0] ERR_CQ_BUSY = 8'd13;
localparam [15:0] NUM_Q16 = NUM_Q[15:0];

initial begin
    if (NUM_Q < 2 || NUM_Q > (1 << QN_W)) begin
        $error("cq_manager: NUM_Q must be 2..2^QN_W");
        $finish;
    end
    if (QN_W > 16) begin
        $error("cq_manager: QN_W must be at most 16");
        $finish;
    end
end

localparam CQP_BASE_LSB = 0;
localparam CQP_BASE_W = 52;
localparam CQP_LOG_LSB = 52;
localparam CQP_LOG_W = 4;
localparam CQP_PI_LSB = 56;
localparam CQP_PI_W = 16;
localparam CQP_W = 72;
// what the register view reads: the size and the index
localparam VIEW_LSB = CQP_LOG_LSB;
localparam VIEW_W = CQP_LOG_W + CQP_PI_W;

localparam CQC_CI_LSB = 0;
localparam CQC_CI_W = 16;
localparam CQC_W = 16;

localparam CQM_ARMED_LSB = 0;
localparam CQM_ARMED_W = 1;
localparam CQM_W = 1;

localparam NTF_ARMED_LSB = 0;
localparam NTF_ARMED_W = 1;
localparam NTF_PEND_LSB = 1;
localparam NTF_PEND_W = 1;
localparam NTF_W = 2;

localparam MSS_PEND_LSB = 0;
localparam MSS_PEND_W = 1;
localparam MSS_W = 1;

localparam MSIQ_CQN_LSB = 0;
localparam MSIQ_CQN_W = QN_W;
localparam MSIQ_PEND_LSB = QN_W;
localparam MSIQ_PEND_W = 1;
localparam MSIQ_W = QN_W + 1;

// ---------------------------------------------------------------- record port
// The records in the port's order (record r's width at [r*32 +: 32], its
// bits at RB_* in the packed record-port vectors, as rec_map packs them)
localparam REC_N = 5;
localparam [REC_N*32-1:0] REC_WS = {32'd0 + MSS_W, 32'd0 + NTF_W, 32'd0 + CQM_W, 32'd0 + CQC_W,
    32'd0 + CQP_W};
localparam RB_CQP = 0;
localparam RB_CQC = RB_CQP + CQP_W;
localparam RB_CQM = RB_CQC + CQC_W;
localparam RB_NTF = RB_CQM + CQM_W;
localparam RB_MSS = RB_NTF + NTF_W;
localparam REC_BITS = RB_MSS + MSS_W;
// (rec_port checks REC_PORT and REC_WORDS, rec_map that the records fit)

// the record RAMs' record ports (rec_map's side; constant 0 with REC_PORT 0)
wire [QN_W-1:0]     rp_rd_addr;
wire [REC_BITS-1:0] rp_rd_data;
wire [REC_N-1:0]    rp_wr_en;
wire [QN_W-1:0]     rp_wr_addr;
wire [REC_BITS-1:0] rp_wr_data;
wire [REC_N-1:0]    rp_wr_ready;
// a record write of a swept record (CQP, CQM, NTF, MSS: all but CQC) done
// this cycle: a reset after it must sweep as after the events' writes
localparam [REC_N-1:0] REC_SWEPT = 5'b11101;
wire rp_wrote_swept = (rp_wr_en & rp_wr_ready & REC_SWEPT) != {REC_N{1'b0}};

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

localparam integer LAST_Q_I = NUM_Q - 1;
localparam [QN_W-1:0] LAST_Q = LAST_Q_I[QN_W-1:0];

// ---------------------------------------------------------------- reset sweep
// (the sweep writes zero to CQP, CQM, NTF and MSS: ram_reset_sweep, its
// instance below the events that write them)
wire sweep;
wire [QN_W-1:0] sweep_q;

// ---------------------------------------------------------------- the events
// Each event is registered here and acts in the next cycle (stage "m" for
// the MMIO events, "n" for the notification); its CQ's records are read
// with the registers' address in the cycle it comes.
reg m_create_reg = 1'b0;
reg m_destroy_reg = 1'b0;
reg m_db_reg = 1'b0;
reg m_arm_reg = 1'b0;
reg [15:0] m_qn16_reg = 16'd0;
reg m_in_range_reg = 1'b0;
reg [15:0] m_ci_reg = 16'd0;
reg [51:0] m_base_reg = 52'd0;
reg [3:0] m_log_reg = 4'd0;
reg n_valid_reg = 1'b0;
reg [QN_W-1:0] n_qn_reg = {QN_W{1'b0}};

// (a doorbell's and an arm's CQ numbers are 16 bits; beyond NUM_Q is an error)
wire [15:0] m_qn16_next = cmd_create || cmd_destroy ? {{(16-QN_W){1'b0}}, cmd_qn}
    : db_valid ? db_cqn : arm_cqn;
wire [QN_W-1:0] m_rd_qn = m_qn16_next[QN_W-1:0];
wire [QN_W-1:0] m_qn = m_qn16_reg[QN_W-1:0];

always @(posedge clk) begin
    m_create_reg <= cmd_create;
    m_destroy_reg <= cmd_destroy;
    m_db_reg <= db_valid;
    m_arm_reg <= arm_valid;
    m_qn16_reg <= m_qn16_next;
    m_in_range_reg <= m_qn16_next < NUM_Q16;
    m_ci_reg <= db_ci;
    m_base_reg <= cmd_base;
    m_log_reg <= cmd_log;
    n_valid_reg <= notify;
    n_qn_reg <= notify_cqn;
    if (rst) begin
        m_create_reg <= 1'b0;
        m_destroy_reg <= 1'b0;
        m_db_reg <= 1'b0;
        m_arm_reg <= 1'b0;
        n_valid_reg <= 1'b0;
    end
end

wire m_cmd = (m_create_reg || m_destroy_reg) && !sweep;
wire m_cmd_refused = (m_create_reg || m_destroy_reg) && sweep;

// the records at the events' CQs (read with the events) and at sel_qn
wire [CQP_LOG_W-1:0] m_log; // CQP.LOG at the MMIO event's CQ
wire m_ntf_armed;          // NTF.ARMED there
wire n_cqm_armed;          // the notification's CQ: CQM.ARMED,
wire n_ntf_armed;          // NTF.ARMED,
wire n_ntf_pend;           // NTF.PEND,
wire n_mss_pend;           // MSS.PEND
wire [VIEW_W-1:0] cqp_view;
wire v_cqm_armed, v_ntf_armed;

// an MMIO event of an enabled CQ in range (never in the sweep: the
// records read as they are being cleared)
wire m_live = m_in_range_reg && m_log != 4'd0 && !sweep;
wire db_ok = m_db_reg && m_live;
wire arm_ok = m_arm_reg && m_live;

// The notification: its CQ was armed, and owes an MSI, as the bits stood
// before this cycle's events.
wire n_armed = n_cqm_armed ^ n_ntf_armed;
wire n_pend = n_ntf_pend ^ n_mss_pend;
wire notify_armed = n_valid_reg && n_armed && !sweep;

// ---------------------------------------------------------------- allocation
localparam [1:0] A_IDLE = 2'd0, A_READ = 2'd1, A_CHECK = 2'd2;
reg [1:0] a_state_reg = A_IDLE;
reg [QN_W-1:0] a_qn_reg = {QN_W{1'b0}};
reg a_abort_reg = 1'b0;
reg [CQP_W-1:0] a_rec_reg = {CQP_W{1'b0}};
reg [CQC_W-1:0] a_ci_reg = {CQC_W{1'b0}};
reg done_reg = 1'b0;
reg ok_reg = 1'b0;
reg bad_reg = 1'b0;
reg [63:0] addr_reg = 64'd0;
reg phase_reg = 1'b0;

// (not while the answer to the last request is out: the writer still holds
// its valid in that cycle)
wire a_start = alloc_valid && a_state_reg == A_IDLE && !done_reg && !sweep;

wire [CQP_W-1:0] cqp_alloc;
wire [CQC_W-1:0] cqc_alloc;

wire [51:0] a_base = a_rec_reg[CQP_BASE_LSB +: CQP_BASE_W];
wire [3:0] a_log = a_rec_reg[CQP_LOG_LSB +: CQP_LOG_W];
wire [15:0] a_pi = a_rec_reg[CQP_PI_LSB +: CQP_PI_W];
wire [15:0] a_size = 16'd1 << a_log;
wire a_full = a_pi - a_ci_reg[CQC_CI_LSB +: CQC_CI_W] == a_size;
wire a_en = a_log != 4'd0;
wire a_live = a_state_reg == A_CHECK && !a_abort_reg && !m_cmd && !sweep;
wire a_commit = a_live && a_en && !a_full;

// the CQP write: the sweep (zero), a create (pi 0), a destroy (zero:
// disabled), else an allocation's commit (pi + 1)
reg cqp_we;
reg [QN_W-1:0] cqp_wa;
reg [CQP_W-1:0] cqp_wd;
always @* begin
    cqp_we = sweep || m_cmd || a_commit;
    cqp_wa = sweep ? sweep_q : m_cmd ? m_qn : a_qn_reg;
    cqp_wd = a_rec_reg;
    cqp_wd[CQP_PI_LSB +: CQP_PI_W] = a_pi + 16'd1;
    if (sweep || m_cmd) begin
        cqp_wd = {CQP_W{1'b0}};
    end
    if (m_create_reg && !sweep) begin
        cqp_wd[CQP_BASE_LSB +: CQP_BASE_W] = m_base_reg;
        cqp_wd[CQP_LOG_LSB +: CQP_LOG_W] = m_log_reg;
    end
end

ram_rec #(
    .DATA_W(CQP_W),
    .ADDR_W(QN_W),
    .DEPTH(NUM_Q),
    .N_RD(3),
    .RD_LSB({32'd0 + CQP_LOG_LSB, 32'd0 + VIEW_LSB, 32'd0}),
    .RD_W({32'd0 + CQP_LOG_W, 32'd0 + VIEW_W, 32'd0 + CQP_W}),
    .REC_EN(REC_PORT)
) cqp_inst (
    .clk(clk),
    .wr_en(cqp_we),
    .wr_addr(cqp_wa),
    .wr_data(cqp_wd),
    .rd_addr({m_rd_qn, sel_qn, alloc_cqn}),
    .rd_data({m_log, cqp_view, cqp_alloc}),
    .rec_rd_addr(rp_rd_addr),
    .rec_rd_data(rp_rd_data[RB_CQP +: CQP_W]),
    .rec_wr_en(rp_wr_en[0]),
    .rec_wr_addr(rp_wr_addr),
    .rec_wr_data(rp_wr_data[RB_CQP +: CQP_W]),
    .rec_wr_ready(rp_wr_ready[0])
);

// the CQC write: a create (ci 0), else a checked doorbell (never both:
// one MMIO event a cycle)
wire cqc_we = (m_create_reg && m_cmd) || db_ok;
reg [CQC_W-1:0] cqc_wd;
always @* begin
    cqc_wd = {CQC_W{1'b0}};
    cqc_wd[CQC_CI_LSB +: CQC_CI_W] = db_ok ? m_ci_reg : 16'd0;
end

ram_rec #(
    .DATA_W(CQC_W),
    .ADDR_W(QN_W),
    .DEPTH(NUM_Q),
    .N_RD(1),
    .RD_LSB(32'd0),
    .RD_W(32'd0 + CQC_W),
    .REC_EN(REC_PORT)
) cqc_inst (
    .clk(clk),
    .wr_en(cqc_we),
    .wr_addr(m_qn),
    .wr_data(cqc_wd),
    .rd_addr(alloc_cqn),
    .rd_data(cqc_alloc),
    .rec_rd_addr(rp_rd_addr),
    .rec_rd_data(rp_rd_data[RB_CQC +: CQC_W]),
    .rec_wr_en(rp_wr_en[1]),
    .rec_wr_addr(rp_wr_addr),
    .rec_wr_data(rp_wr_data[RB_CQC +: CQC_W]),
    .rec_wr_ready(rp_wr_ready[1])
);

always @(posedge clk) begin
    done_reg <= 1'b0;
    case (a_state_reg)
        A_IDLE: begin
            if (a_start) begin
                a_qn_reg <= alloc_cqn;
                a_abort_reg <= m_cmd;
                a_state_reg <= A_READ;
            end
        end
        A_READ: begin
            a_rec_reg <= cqp_alloc;
            a_ci_reg <= cqc_alloc;
            a_abort_reg <= a_abort_reg || m_cmd;
            a_state_reg <= A_CHECK;
        end
        A_CHECK: begin
            done_reg <= 1'b1;
            ok_reg <= a_commit;
            bad_reg <= a_live && !a_en;
            addr_reg <= {a_base, 12'd0} + ({48'd0, a_pi & (a_size - 16'd1)} << CQE_SIZE_LOG);
            phase_reg <= !a_pi[a_log];
            a_state_reg <= A_IDLE;
        end
        default: a_state_reg <= A_IDLE;
    endcase
    if (rst) begin
        a_state_reg <= A_IDLE;
        done_reg <= 1'b0;
    end
end

assign alloc_done = done_reg;
assign alloc_ok = ok_reg;
assign alloc_bad = bad_reg;
assign alloc_addr = addr_reg;
assign alloc_phase = phase_reg;

assign sel_pi = cqp_view[CQP_PI_LSB - VIEW_LSB +: CQP_PI_W];
assign sel_phase = !sel_pi[cqp_view[CQP_LOG_LSB - VIEW_LSB +: CQP_LOG_W]];
assign sel_en = cqp_view[CQP_LOG_LSB - VIEW_LSB +: CQP_LOG_W] != 4'd0;
assign sel_armed = v_cqm_armed ^ v_ntf_armed;

// ---------------------------------------------------------------- arming
// CQM: a command disarms (its half made equal to NTF's), an arm of an
// enabled CQ arms (made unequal)
wire cqm_we = sweep || m_cmd || arm_ok;
wire [QN_W-1:0] cqm_wa = sweep ? sweep_q : m_qn;
reg [CQM_W-1:0] cqm_wd;
always @* begin
    cqm_wd = {CQM_W{1'b0}};
    cqm_wd[CQM_ARMED_LSB] = !sweep && (m_ntf_armed ^ arm_ok);
end

ram_rec #(
    .DATA_W(CQM_W),
    .ADDR_W(QN_W),
    .DEPTH(NUM_Q),
    .N_RD(2),
    .RD_LSB({32'd0 + CQM_ARMED_LSB, 32'd0 + CQM_ARMED_LSB}),
    .RD_W({32'd0 + CQM_ARMED_W, 32'd0 + CQM_ARMED_W}),
    .REC_EN(REC_PORT)
) cqm_inst (
    .clk(clk),
    .wr_en(cqm_we),
    .wr_addr(cqm_wa),
    .wr_data(cqm_wd),
    .rd_addr({sel_qn, notify_cqn}),
    .rd_data({v_cqm_armed, n_cqm_armed}),
    .rec_rd_addr(rp_rd_addr),
    .rec_rd_data(rp_rd_data[RB_CQM +: CQM_W]),
    .rec_wr_en(rp_wr_en[2]),
    .rec_wr_addr(rp_wr_addr),
    .rec_wr_data(rp_wr_data[RB_CQM +: CQM_W]),
    .rec_wr_ready(rp_wr_ready[2])
);

// ---------------------------------------------------------------- MSI
reg [QN_W-1:0] mq_head_reg = {QN_W{1'b0}};
reg [QN_W-1:0] mq_tail_reg = {QN_W{1'b0}};
reg [QN_W:0] mq_count_reg = {(QN_W+1){1'b0}};
reg [4:0] msi_vector_reg = 5'd0;
reg msi_valid_reg = 1'b0;

wire [MSIQ_W-1:0] msiq_head;
wire [QN_W-1:0] mq_cqn = msiq_head[MSIQ_CQN_LSB +: MSIQ_CQN_W];
wire mq_pend = msiq_head[MSIQ_PEND_LSB];
// a pop waits a cycle after the last (msi_valid_reg): the head's word is
// read a cycle after head moves
wire mq_pop = !msi_valid_reg && mq_count_reg != 0;
// The popped CQ's MSS half is written a cycle after the pop, from a
// register (the FIFO's word comes from block RAM); meanwhile the CQ still
// reads as owing an MSI, so the push looks at the pop of this cycle and of
// the cycle before. The MSS half is set to the NTF half the entry's push
// wrote (no push of that CQ since: it owed an MSI).
reg pclr_valid_reg = 1'b0;
reg [QN_W-1:0] pclr_cqn_reg = {QN_W{1'b0}};
reg pclr_pend_reg = 1'b0;
wire pclr_same = pclr_valid_reg && pclr_cqn_reg == n_qn_reg;

// every writer of CQP, CQM, NTF and MSS but the sweep itself
ram_reset_sweep #(.DEPTH(NUM_Q), .ADDR_W(QN_W)) cq_sweep (
    .clk(clk),
    .rst(rst),
    .wrote(m_cmd || a_commit || arm_ok || notify_armed || pclr_valid_reg || rp_wrote_swept),
    .sweep(sweep),
    .sweep_addr(sweep_q)
);

wire mq_push = notify_armed && (!n_pend || (mq_pop && mq_cqn == n_qn_reg) || pclr_same);
// a push makes the CQ owe an MSI against MSS as it stands after this cycle
wire push_pend = !(pclr_same ? pclr_pend_reg : n_mss_pend);
// a command disarming the CQ in this cycle makes the notification's disarm
// a second one: the halves would cancel
`ifdef FORMAL_BREAK_CQ_DISARM
// (formal's cq_disarm job: the disarm is not dropped, the halves cancel)
wire cmd_same = 1'b0;
`else
wire cmd_same = m_cmd && m_qn == n_qn_reg;
`endif

reg [NTF_W-1:0] ntf_wd;
always @* begin
    ntf_wd = {NTF_W{1'b0}};
    if (!sweep) begin
        ntf_wd[NTF_ARMED_LSB] = n_ntf_armed ^ !cmd_same;
        ntf_wd[NTF_PEND_LSB +: NTF_PEND_W] = mq_push ? push_pend : n_ntf_pend;
    end
end

ram_rec #(
    .DATA_W(NTF_W),
    .ADDR_W(QN_W),
    .DEPTH(NUM_Q),
    .N_RD(3),
    .RD_LSB({32'd0 + NTF_ARMED_LSB, 32'd0 + NTF_ARMED_LSB, 32'd0}),
    .RD_W({32'd0 + NTF_ARMED_W, 32'd0 + NTF_ARMED_W, 32'd0 + NTF_W}),
    .REC_EN(REC_PORT)
) ntf_inst (
    .clk(clk),
    .wr_en(sweep || notify_armed),
    .wr_addr(sweep ? sweep_q : n_qn_reg),
    .wr_data(ntf_wd),
    .rd_addr({m_rd_qn, sel_qn, notify_cqn}),
    .rd_data({m_ntf_armed, v_ntf_armed, n_ntf_pend, n_ntf_armed}),
    .rec_rd_addr(rp_rd_addr),
    .rec_rd_data(rp_rd_data[RB_NTF +: NTF_W]),
    .rec_wr_en(rp_wr_en[3]),
    .rec_wr_addr(rp_wr_addr),
    .rec_wr_data(rp_wr_data[RB_NTF +: NTF_W]),
    .rec_wr_ready(rp_wr_ready[3])
);

reg [MSS_W-1:0] mss_wd;
always @* begin
    mss_wd = {MSS_W{1'b0}};
    mss_wd[MSS_PEND_LSB +: MSS_PEND_W] = !sweep && pclr_pend_reg;
end

ram_rec #(
    .DATA_W(MSS_W),
    .ADDR_W(QN_W),
    .DEPTH(NUM_Q),
    .N_RD(1),
    .RD_LSB(32'd0),
    .RD_W(32'd0 + MSS_W),
    .REC_EN(REC_PORT)
) mss_inst (
    .clk(clk),
    .wr_en(sweep || pclr_valid_reg),
    .wr_addr(sweep ? sweep_q : pclr_cqn_reg),
    .wr_data(mss_wd),
    .rd_addr(notify_cqn),
    .rd_data(n_mss_pend),
    .rec_rd_addr(rp_rd_addr),
    .rec_rd_data(rp_rd_data[RB_MSS +: MSS_W]),
    .rec_wr_en(rp_wr_en[4]),
    .rec_wr_addr(rp_wr_addr),
    .rec_wr_data(rp_wr_data[RB_MSS +: MSS_W]),
    .rec_wr_ready(rp_wr_ready[4])
);

// (not in the record port: a FIFO addressed by its head and tail, holding
// only CQs that owe an MSI, which the cache keeps pinned; header)
reg [MSIQ_W-1:0] msiq_wd;
always @* begin
    msiq_wd = {MSIQ_W{1'b0}};
    msiq_wd[MSIQ_CQN_LSB +: MSIQ_CQN_W] = n_qn_reg;
    msiq_wd[MSIQ_PEND_LSB +: MSIQ_PEND_W] = push_pend;
end

ram_sdp #(
    .DATA_W(MSIQ_W),
    .ADDR_W(QN_W),
    .DEPTH(NUM_Q)
) msiq_inst (
    .clk(clk),
    .wr_en(mq_push),
    .wr_addr(mq_tail_reg),
    .wr_data(msiq_wd),
    .rd_addr(mq_head_reg),
    .rd_data(msiq_head)
);

/* verilator lint_off UNUSEDSIGNAL */
reg [15:0] mq_cqn_ext;
/* verilator lint_on UNUSEDSIGNAL */
always @* begin
    mq_cqn_ext = 16'd0;
    mq_cqn_ext[QN_W-1:0] = mq_cqn;
end

reg err_valid_reg = 1'b0;
reg [7:0] err_code_reg = ERR_DB_DISABLED;
reg [15:0] err_qn_reg = 16'd0;

always @(posedge clk) begin
    err_valid_reg <= (m_db_reg && !db_ok) || (m_arm_reg && !arm_ok) || m_cmd_refused;
    err_code_reg <= m_cmd_refused ? ERR_CQ_BUSY : ERR_DB_DISABLED;
    err_qn_reg <= m_qn16_reg;

    if (msi_valid_reg && msi_ready) begin
        msi_valid_reg <= 1'b0;
    end
    // (not when the popped CQ is pushed again in the cycle of its pop)
    pclr_valid_reg <= mq_pop && !(notify_armed && mq_cqn == n_qn_reg);
    pclr_cqn_reg <= mq_cqn;
    pclr_pend_reg <= mq_pend;
    if (mq_pop) begin
        msi_valid_reg <= 1'b1;
        msi_vector_reg <= mq_cqn_ext[4:0];
        mq_head_reg <= mq_head_reg == LAST_Q ? {QN_W{1'b0}} : mq_head_reg + 1'b1;
    end
    if (mq_push) begin
        mq_tail_reg <= mq_tail_reg == LAST_Q ? {QN_W{1'b0}} : mq_tail_reg + 1'b1;
    end
    mq_count_reg <= mq_count_reg + {{QN_W{1'b0}}, mq_push} - {{QN_W{1'b0}}, mq_pop};

    if (rst) begin
        mq_head_reg <= {QN_W{1'b0}};
        mq_tail_reg <= {QN_W{1'b0}};
        mq_count_reg <= {(QN_W+1){1'b0}};
        msi_valid_reg <= 1'b0;
        pclr_valid_reg <= 1'b0;
        err_valid_reg <= 1'b0;
    end
end

assign msi_vector = msi_vector_reg;
assign msi_valid = msi_valid_reg;

assign err_valid = err_valid_reg;
assign err_code = err_code_reg;
assign err_qn = err_qn_reg;
assign busy = sweep;

endmodule

`resetall
