// Queue manager: send-queue ring state, doorbells, round-robin selection
// of the next send queue with work, and the ring commands; the completion
// queues (their state in block RAM, CQ slot allocation, arming, MSI) are
// its cq_manager.
//
// Rings live in host memory; only their indices live here. Indices are
// 16-bit free-running counters, so a ring of N entries (N a power of two up
// to 32768) is full when pi - ci == N. Errors are reported two cycles after
// the register write that caused them.
//
// Record port (REC_PORT 1; issue 19, DESIGN.md section 6, step 1): the send
// queues' per-QP records, read and written whole as REC_WORDS 64-bit words
// per queue (rec_map's layout and contract), for the QP context cache's
// fill and write-back: SQC, SQS in that order, each from a 64-bit word
// boundary (at 64 queues: SQC 58 bits in word 0, SQS 39 in word 1; words
// 2-7 padding). Each is a ram_rec: one more copy of the whole record for
// the read, and the record write takes the RAM's write port in cycles the
// module does not write it (the module's write first). SQF, the list of
// scheduled queues, is not in the record: it is a FIFO addressed by its
// head and tail, not by queue number, and holds only scheduled queues
// (SQS.SCHED 1: work queued, or a pick yet to find none), which the cache
// keeps pinned, never filled or written back; so a queue's record moves
// with SCHED 0, and a fill never puts a queue in the list. A record write
// of SQS counts as a write for the sweep after a reset. The completion
// queues' records are cq_manager's, through its own port (cq_s_rec_*, the
// same contract, CQ_REC_WORDS words). REC_PORT 0 builds none of it (the
// ram_recs are ram_sdp_copies, the ports' outputs are constants).

`resetall
`timescale 1ns / 1ps
`default_nettype none

module queue_manager #(
    parameter NUM_Q = 16,
    parameter QN_W = 4,
    parameter REC_PORT = 0,             // 1: the record ports (header), here and in cq_manager
    parameter REC_WORDS = 8,            // the send queues' record port: 64-bit words per queue, 2^k, 2..64
    parameter CQ_REC_WORDS = 8          // cq_manager's record port: 64-bit words per CQ, 2^k, 2..64
) (
    input  wire             clk,
    input  wire             rst,

    // register interface (from the generated CSR block)
    input  wire [15:0]      reg_q_sel,
    input  wire [31:0]      reg_q_base_lo,
    input  wire [31:0]      reg_q_base_hi,
    input  wire [31:0]      reg_q_size,
    input  wire [15:0]      reg_q_cqn,
    input  wire [3:0]       reg_q_cmd,
    input  wire             reg_q_cmd_valid,
    input  wire [15:0]      reg_sq_db_qn,
    input  wire [15:0]      reg_sq_db_pi,
    input  wire             reg_sq_db_valid,
    input  wire [15:0]      reg_cq_db_cqn,
    input  wire [15:0]      reg_cq_db_ci,
    input  wire             reg_cq_db_valid,
    input  wire [15:0]      reg_cq_arm_cqn,
    input  wire             reg_cq_arm_valid,

    output wire [15:0]      sel_sq_pi,
    output wire [15:0]      sel_sq_ci,
    output wire [15:0]      sel_cq_pi,
    output wire             sel_sq_en,
    output wire             sel_cq_en,
    output wire             sel_cq_armed,
    output wire             sel_cq_phase,

    // next work request for the executor
    output wire             m_sq_valid,
    output wire [QN_W-1:0]  m_sq_qn,
    output wire [63:0]      m_sq_wqe_addr,
    output wire [15:0]      m_sq_index,        // free-running index of that WQE
    output wire [QN_W-1:0]  m_sq_cqn,
    input  wire             m_sq_ready,
    output wire [QN_W-1:0]  sq_hold_qn,        // the queue asked about ...
    input  wire             sq_hold,           // ... its next WQE must wait

    // executor: the work request of queue sq_done_qn is finished (held
    // until sq_done_ready)
    input  wire             sq_done,
    input  wire [QN_W-1:0]  sq_done_qn,
    input  wire             sq_done_back,      // ... not run: given back, offered again
    output wire             sq_done_ready,

    // the completion queue of a send queue: lookup_cqn is the CQ of the
    // lookup_qn of the cycle before (a block RAM read)
    input  wire [QN_W-1:0]  lookup_qn,
    output wire [QN_W-1:0]  lookup_cqn,

    // CQE writer: CQ slot allocation (valid and cqn held until done;
    // cq_manager)
    input  wire             cq_alloc_valid,
    input  wire [QN_W-1:0]  cq_alloc_cqn,
    output wire             cq_alloc_done,
    output wire             cq_alloc_ok,       // a slot: enabled and not full
    output wire             cq_alloc_bad,      // disabled: the CQE cannot be written
    output wire [63:0]      cq_alloc_addr,
    output wire             cq_alloc_phase,

    // executor: a CQE of cq_notify_cqn has been issued; fire MSI if armed
    input  wire             cq_notify,
    input  wire [QN_W-1:0]  cq_notify_cqn,

    output wire [4:0]       msi_vector,
    output wire             msi_valid,
    input  wire             msi_ready,

    // errors seen here: 1 doorbell to a disabled or missing queue,
    // 2 bad ring size or alignment, 6 bad CQ number, 7 doorbell beyond ring size
    // or behind the producer index (posted WQEs cannot be withdrawn)
    output wire             err_valid,
    output wire [7:0]       err_code,
    output wire [15:0]      err_qn,
    // a register write's effects (its record write, its error) are still
    // on their way: a register read waits, so it sees them
    output wire             busy,
    // whether queue pin_qn is scheduled, has WQEs taken or an operation in
    // the pipeline (pin_busy answers the pin_qn of the cycle before): the
    // context table moves no queue that is
    input  wire [QN_W-1:0]  pin_qn,
    output wire             pin_busy,
    // the send and completion queues' sweep after a reset: the register
    // block holds every MMIO request until it is done
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
    output wire             rec_wr_busy,

    // cq_manager's record port (its per-CQ records as CQ_REC_WORDS 64-bit
    // words), passed through
    input  wire             cq_s_rec_rd_valid,
    output wire             cq_s_rec_rd_ready,
    input  wire [QN_W-1:0]  cq_s_rec_rd_slot,
    input  wire [$clog2(CQ_REC_WORDS)-1:0] cq_s_rec_rd_word,
    output wire             cq_m_rec_rd_data_valid,
    output wire [63:0]      cq_m_rec_rd_data,
    input  wire             cq_s_rec_wr_valid,
    output wire             cq_s_rec_wr_ready,
    input  wire [QN_W-1:0]  cq_s_rec_wr_slot,
    input  wire [$clog2(CQ_REC_WORDS)-1:0] cq_s_rec_wr_word,
    input  wire [63:0]      cq_s_rec_wr_data,
    output wire             cq_rec_wr_busy
);

// the ring entry formats: hw/formats/rnic_formats.rdl
`include "rnic_formats.vh"

localparam WQE_SIZE_LOG = $clog2(SEND_WQE_BYTES);

localparam [7:0]
    ERR_DB_DISABLED = 8'd1,
    ERR_BAD_RING = 8'd2,
    ERR_BAD_CQN = 8'd6,
    ERR_DB_OVERFLOW = 8'd7,
    ERR_BAD_CMD = 8'd8;

localparam [15:0] NUM_Q16 = NUM_Q[15:0];

initial begin
    if (NUM_Q < 1 || NUM_Q > (1 << QN_W)) begin
        $error("queue_manager: NUM_Q must be 1..2^QN_W");
        $finish;
    end
    if (QN_W > 16) begin
        $error("queue_manager: QN_W must be at most 16");
        $finish;
    end
end

// ring state
//
// Every send queue's state is a record in block RAM, read a cycle ahead by
// queue number and written by one read-modify-write pipeline (below), so
// the logic does not grow with the number of queues. A block RAM has no
// reset: a reset after a record was written sweeps them to zero (disabled,
// unscheduled), one queue a cycle, while the register block holds MMIO
// (`sweep`, with the completion queues'); at power-up they hold their
// initial zeros and nothing is swept. Nothing else writes them then: the
// executor holds no WQE after a reset and the list is empty.
//
// SQC: what the ring command (cmd 1) alone writes: the ring's base (rings
// are 4 KiB aligned: the low 12 bits are zero) and the send queue's CQ.
// Read by the pipeline's pick (the base, for the WQE's address, and the
// CQ) and by the ACK completer's lookup (the CQ).
localparam SQC_BASE_W = 52;
localparam SQC_BASE_LSB = 0;
localparam SQC_CQN_W = QN_W;
localparam SQC_CQN_LSB = SQC_BASE_LSB + SQC_BASE_W;
localparam SQC_W = SQC_CQN_LSB + SQC_CQN_W;
// SQS: the ring's state: its size (log2; 0: the queue is disabled, a ring
// has 2 entries or more), the WQEs posted and not finished (the producer
// index the doorbell wrote, pi, less ci), the consumer index (WQEs
// finished), the WQEs handed to the executor and not yet finished (up to
// two, so the executor can fetch the next one while the current one
// streams), and whether the queue is scheduled (in the list of queues to
// look at, parked, or in the pipeline). Indices are free-running, so the
// next WQE to hand over is ci + taken, and the queue has work while
// pi != ci + taken, that is while AV != taken: kept as AV, not pi, that
// test needs no adder behind the record's block RAM (timing).
localparam SQS_LOG_W = 4;
localparam SQS_LOG_LSB = 0;
localparam SQS_AV_W = 16;
localparam SQS_AV_LSB = SQS_LOG_LSB + SQS_LOG_W;
localparam SQS_CI_W = 16;
localparam SQS_CI_LSB = SQS_AV_LSB + SQS_AV_W;
localparam SQS_TAKEN_W = 2;
localparam SQS_TAKEN_LSB = SQS_CI_LSB + SQS_CI_W;
localparam SQS_SCHED_W = 1;
localparam SQS_SCHED_LSB = SQS_TAKEN_LSB + SQS_TAKEN_W;
localparam SQS_W = SQS_SCHED_LSB + SQS_SCHED_W;
// SQF: the list of scheduled queues, a FIFO of queue numbers: each queue
// is in it at most once (its sched bit), so it never holds more than
// NUM_Q; sized a power of two for the free-running pointers.
localparam SQF_QN_W = QN_W;
localparam SQF_QN_LSB = 0;
localparam SQF_W = SQF_QN_LSB + SQF_QN_W;
localparam SQF_DEPTH = 1 << QN_W;

// ---------------------------------------------------------------- record port
// The records in the port's order (record r's width at [r*32 +: 32], its
// bits at RB_* in the packed record-port vectors, as rec_map packs them)
localparam REC_N = 2;
localparam [REC_N*32-1:0] REC_WS = {32'd0 + SQS_W, 32'd0 + SQC_W};
localparam RB_SQC = 0;
localparam RB_SQS = RB_SQC + SQC_W;
localparam REC_BITS = RB_SQS + SQS_W;
// (rec_port checks REC_PORT and REC_WORDS, rec_map that the records fit)

// the record RAMs' record ports (rec_map's side; constant 0 with REC_PORT 0)
wire [QN_W-1:0]     rp_rd_addr;
wire [REC_BITS-1:0] rp_rd_data;
wire [REC_N-1:0]    rp_wr_en;
wire [QN_W-1:0]     rp_wr_addr;
wire [REC_BITS-1:0] rp_wr_data;
wire [REC_N-1:0]    rp_wr_ready;
// a record write of SQS (the swept record) done this cycle: a reset after
// it must sweep as after the pipeline's writes
wire rp_wrote_swept = rp_wr_en[1] && rp_wr_ready[1];

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

reg err_valid_reg = 1'b0;
reg [7:0] err_code_reg = 8'd0;
reg [15:0] err_qn_reg = 16'd0;

integer i;

// ring size check: a power of two from 2 to 32768
reg size_ok;
reg [3:0] size_log;
always @* begin
    size_ok = 1'b0;
    size_log = 4'd0;
    for (i = 1; i < 16; i = i + 1) begin
        if (reg_q_size == (32'd1 << i)) begin
            size_ok = 1'b1;
            size_log = i[3:0];
        end
    end
end

wire [63:0] reg_base = {reg_q_base_hi, reg_q_base_lo};
wire sel_ok = reg_q_sel < NUM_Q16;
wire [QN_W-1:0] sel = reg_q_sel[QN_W-1:0];

// the completion queues
wire cq_create = reg_q_cmd_valid && sel_ok && reg_q_cmd == 4'd3 && size_ok && reg_base[11:0] == 12'd0;
wire cq_destroy = reg_q_cmd_valid && sel_ok && reg_q_cmd == 4'd4;
wire [15:0] cqm_sel_pi;
wire cqm_sel_en, cqm_sel_armed, cqm_sel_phase;
wire cqm_err_valid;
wire cq_sweep;
wire [7:0] cqm_err_code;
wire [15:0] cqm_err_qn;

cq_manager #(
    .NUM_Q(NUM_Q),
    .QN_W(QN_W),
    .REC_PORT(REC_PORT),
    .REC_WORDS(CQ_REC_WORDS)
) cq_inst (
    .clk(clk),
    .rst(rst),
    .cmd_create(cq_create),
    .cmd_destroy(cq_destroy),
    .cmd_qn(sel),
    .cmd_base(reg_base[63:12]),
    .cmd_log(size_log),
    .db_cqn(reg_cq_db_cqn),
    .db_ci(reg_cq_db_ci),
    .db_valid(reg_cq_db_valid),
    .arm_cqn(reg_cq_arm_cqn),
    .arm_valid(reg_cq_arm_valid),
    .sel_qn(sel),
    .sel_pi(cqm_sel_pi),
    .sel_en(cqm_sel_en),
    .sel_armed(cqm_sel_armed),
    .sel_phase(cqm_sel_phase),
    .alloc_valid(cq_alloc_valid),
    .alloc_cqn(cq_alloc_cqn),
    .alloc_done(cq_alloc_done),
    .alloc_ok(cq_alloc_ok),
    .alloc_bad(cq_alloc_bad),
    .alloc_addr(cq_alloc_addr),
    .alloc_phase(cq_alloc_phase),
    .notify(cq_notify),
    .notify_cqn(cq_notify_cqn),
    .msi_vector(msi_vector),
    .msi_valid(msi_valid),
    .msi_ready(msi_ready),
    .err_valid(cqm_err_valid),
    .err_code(cqm_err_code),
    .err_qn(cqm_err_qn),
    .busy(cq_sweep),
    .s_rec_rd_valid(cq_s_rec_rd_valid),
    .s_rec_rd_ready(cq_s_rec_rd_ready),
    .s_rec_rd_slot(cq_s_rec_rd_slot),
    .s_rec_rd_word(cq_s_rec_rd_word),
    .m_rec_rd_data_valid(cq_m_rec_rd_data_valid),
    .m_rec_rd_data(cq_m_rec_rd_data),
    .s_rec_wr_valid(cq_s_rec_wr_valid),
    .s_rec_wr_ready(cq_s_rec_wr_ready),
    .s_rec_wr_slot(cq_s_rec_wr_slot),
    .s_rec_wr_word(cq_s_rec_wr_word),
    .s_rec_wr_data(cq_s_rec_wr_data),
    .rec_wr_busy(cq_rec_wr_busy)
);

assign sel_cq_pi = sel_ok ? cqm_sel_pi : 16'd0;
assign sel_cq_en = sel_ok && cqm_sel_en;
assign sel_cq_armed = sel_ok && cqm_sel_armed;
assign sel_cq_phase = sel_ok && cqm_sel_phase;

// ---------------------------------------------------------------- the pipeline
// One operation per cycle reads a queue's SQS record (S0: the RAM's read
// address) and writes it back a cycle later (S1). The RAM's read is
// transparent, so an operation reads what the one before it writes, also
// for the same queue in back-to-back cycles: no other forwarding. The
// operations, in priority order at S0:
//   host: a ring command (create, destroy) or a doorbell: register writes,
//         which cannot wait (at most one per cycle);
//   done: the executor finished a WQE of the queue (sq_done_ready: it
//         waits while the host has the slot);
//   take: the executor took the offered WQE (not offered while the host
//         or a done has the slot);
//   pick: the next queue of the list (the parked one first).
// Round robin is the list's order, as in Corundum's tx_scheduler_rr: a
// doorbell or a done that finds its queue unscheduled puts it at the tail,
// and a pick puts a queue with work back at the tail, so every queue with
// work gets its turn after each other one's. A pick finds:
//   - no work (disabled, pi == ci + taken, or two WQEs taken): the queue
//     leaves the list (its sched bit clears) until a doorbell or a done;
//   - work, and the output register free: the WQE's address, index and CQ
//     go to the output register, offered to the executor unless the
//     executor holds the queue (a retransmission or flush pending, its
//     outstanding ring full, a prefetched WQE of it waiting: the entry is
//     then dropped in the next cycle), and the queue back to the tail;
//   - work, but the output register taken by the pick just before, or a
//     ring command in this cycle: the queue is parked and is the next
//     pick, so it keeps its place in the round.
// Picks start back to back while the output register is empty, so a list
// of held queues is walked at one queue per two cycles (the pick does not
// look at the hold itself; the offer asks the executor about its queue,
// sq_hold_qn).
//
// The output entry is not counted in taken until the executor takes it;
// nothing is picked while it waits, and the take's write is read by the
// next pick. The entry is dropped when the executor holds its queue (the
// queue is in the list, and is picked again once it may go on) and when a
// ring command arrives. The offer is gated by the current hold, because a
// queue with no outstanding ring whose entry the executor took would park
// the executor in ST_DECODE waiting for a ring, while the rings it waits
// for are freed only by retransmissions the executor starts from ST_IDLE
// (a deadlock); an entry counts as taken only when it was offered (sq_take):
// counting one the executor never saw would keep its WQE in taken for good
// (reliability's more_qps_in_flight_than_outstanding_rings runs every ring
// out and exercises both).
localparam [2:0]
    OP_NONE = 3'd0,
    OP_CREATE = 3'd1,
    OP_DESTROY = 3'd2,
    OP_DB = 3'd3,
    OP_DONE = 3'd4,
    OP_TAKE = 3'd5,
    OP_PICK = 3'd6,
    OP_DB2 = 3'd7;      // a doorbell's second pass: its checks, registered, applied

// the sweep after a reset (ram_reset_sweep, its instance at the SQS RAM)
wire sq_sweep;
wire [QN_W-1:0] sq_sweep_q;

reg [2:0] s1_op_reg = OP_NONE;
reg [QN_W-1:0] s1_qn_reg = {QN_W{1'b0}};
reg [15:0] s1_arg_reg = 16'd0;     // a doorbell's pi, a ring's size log
reg s1_back_reg = 1'b0;            // a done: the WQE was given back

// the list (SQF), its head read a cycle ahead; the parked queue
reg [QN_W:0] sqf_head_reg = {(QN_W+1){1'b0}};
reg [QN_W:0] sqf_tail_reg = {(QN_W+1){1'b0}};
// tail + 1, kept beside it: a push (which comes from the record's checks,
// behind the block RAM's read) then only enables the tail's flops
reg [QN_W:0] sqf_tail_p1_reg = {{QN_W{1'b0}}, 1'b1};
reg park_valid_reg = 1'b0;
reg [QN_W-1:0] park_qn_reg = {QN_W{1'b0}};

reg out_valid_reg = 1'b0;
reg [QN_W-1:0] out_qn_reg = {QN_W{1'b0}};
reg [63:0] out_addr_reg = 64'd0;
reg [15:0] out_index_reg = 16'd0;
reg [QN_W-1:0] out_cqn_reg = {QN_W{1'b0}};

// S0: the operation of this cycle
// (a doorbell's second pass follows it in S0 at once: the executor's
// handshakes wait for it as for the host's operations)
wire db2_now = s1_op_reg == OP_DB;
wire host_busy = reg_q_cmd_valid || reg_sq_db_valid || db2_now;
wire sqc_we = reg_q_cmd_valid && sel_ok && reg_q_cmd == 4'd1 && size_ok && reg_base[11:0] == 12'd0
    && reg_q_cqn < NUM_Q16;
wire op_destroy = reg_q_cmd_valid && sel_ok && reg_q_cmd == 4'd2;
wire op_db = reg_sq_db_valid && reg_sq_db_qn < NUM_Q16;
assign sq_done_ready = !host_busy && !sq_sweep;
assign sq_hold_qn = out_qn_reg;
assign m_sq_valid = out_valid_reg && !sq_hold && !host_busy && !sq_done;
wire sq_take = m_sq_valid && m_sq_ready;
wire [SQF_W-1:0] sqf_rd;
wire op_pick = (park_valid_reg || sqf_head_reg != sqf_tail_reg) && !out_valid_reg && !host_busy
    && !sq_done;

reg [2:0] op_next;
reg [QN_W-1:0] op_qn_next;
reg [15:0] op_arg_next;
always @* begin
    op_next = OP_NONE;
    op_qn_next = out_qn_reg;
    op_arg_next = reg_sq_db_pi;
    if (db2_now) begin
        // (MMIO writes come at least three cycles apart: no host
        // operation is due in this cycle; formal assumes as much)
        op_next = OP_DB2;
        op_qn_next = s1_qn_reg;
        op_arg_next = s1_arg_reg;
    end else if (sqc_we) begin
        op_next = OP_CREATE;
        op_qn_next = sel;
        op_arg_next = {12'd0, size_log};
    end else if (op_destroy) begin
        op_next = OP_DESTROY;
        op_qn_next = sel;
    end else if (op_db) begin
        op_next = OP_DB;
        op_qn_next = reg_sq_db_qn[QN_W-1:0];
    end else if (sq_done && sq_done_ready) begin
        // (a refused register write also holds the done: sq_done_ready)
        op_next = OP_DONE;
        op_qn_next = sq_done_qn;
    end else if (sq_take) begin
        op_next = OP_TAKE;
    end else if (op_pick) begin
        op_next = OP_PICK;
        op_qn_next = park_valid_reg ? park_qn_reg : sqf_rd[SQF_QN_LSB +: SQF_QN_W];
    end
end
wire sqf_pop = op_next == OP_PICK && !park_valid_reg;
wire [QN_W:0] sqf_head_next = sqf_head_reg + {{QN_W{1'b0}}, sqf_pop};

// S1: the record as read
wire [SQS_W-1:0] sqs_rd;
wire [SQS_W-1:0] rec = sqs_rd;
wire [3:0] r_log = rec[SQS_LOG_LSB +: SQS_LOG_W];
wire r_en = r_log != 4'd0;
wire [15:0] r_av = rec[SQS_AV_LSB +: SQS_AV_W];
wire [15:0] r_ci = rec[SQS_CI_LSB +: SQS_CI_W];
wire [1:0] r_taken = rec[SQS_TAKEN_LSB +: SQS_TAKEN_W];
wire r_sched = rec[SQS_SCHED_LSB];
// the next WQE to hand over, and whether there is one the executor may have
wire [15:0] r_next = r_ci + {14'd0, r_taken};
wire r_work = r_en && r_av != {14'd0, r_taken} && r_taken != 2'd2;
// a doorbell's check: the ring may not hold more than its size, and the
// producer index may not move back (a WQE once posted may already be
// offered or taken: refused, it stays posted)
// Checked in the doorbell's first pass (OP_DB: the record as read, the
// result registered) and applied in its second (OP_DB2, the next cycle:
// the first pass wrote the record unchanged and nothing else came
// between), so no path runs from the record's block RAM through the
// subtract and the compares into the record's write and the list.
wire [15:0] db_size = 16'd1 << r_log;
wire [15:0] db_used = s1_arg_reg - r_ci;
wire db_ok = r_en && db_used <= db_size && db_used >= r_av;
reg [15:0] db_used_reg = 16'd0;
reg db_ok_reg = 1'b0;
reg db_en_reg = 1'b0;
always @(posedge clk) begin
    db_used_reg <= db_used;
    db_ok_reg <= db_ok;
    db_en_reg <= r_en;
end

// Every operation writes the record back (unchanged where it changes
// nothing), so the write enable does not wait for the record's checks.
wire sqs_we = s1_op_reg != OP_NONE;
reg [SQS_W-1:0] sqs_wd;
reg sqf_push;
reg park;
reg go;
always @* begin
    sqs_wd = rec;
    sqf_push = 1'b0;
    park = 1'b0;
    go = 1'b0;
    case (s1_op_reg)
        OP_CREATE: begin
            // (taken and sched stay: WQEs of the old ring may still finish,
            // and the queue may be in the list)
            sqs_wd[SQS_LOG_LSB +: SQS_LOG_W] = s1_arg_reg[3:0];
            sqs_wd[SQS_AV_LSB +: SQS_AV_W] = 16'd0;
            sqs_wd[SQS_CI_LSB +: SQS_CI_W] = 16'd0;
        end
        OP_DESTROY: begin
            sqs_wd[SQS_LOG_LSB +: SQS_LOG_W] = 4'd0;
        end
        OP_DB2: begin
            if (db_ok_reg) begin
                sqs_wd[SQS_AV_LSB +: SQS_AV_W] = db_used_reg;
                sqs_wd[SQS_SCHED_LSB] = 1'b1;
                sqf_push = !r_sched;
`ifdef FORMAL_BREAK_LIST
                sqf_push = 1'b1;
`endif
            end
        end
        OP_DONE: begin
            // (a WQE given back stays the next one: ci and av as they were)
            if (!s1_back_reg) begin
                sqs_wd[SQS_CI_LSB +: SQS_CI_W] = r_ci + 16'd1;
                sqs_wd[SQS_AV_LSB +: SQS_AV_W] = r_av - 16'd1;
            end
            sqs_wd[SQS_TAKEN_LSB +: SQS_TAKEN_W] = r_taken - 2'd1;
            sqs_wd[SQS_SCHED_LSB] = 1'b1;
            sqf_push = !r_sched;
        end
        OP_TAKE: begin
            sqs_wd[SQS_TAKEN_LSB +: SQS_TAKEN_W] = r_taken + 2'd1;
        end
        OP_PICK: begin
            if (out_valid_reg || reg_q_cmd_valid) begin
                park = 1'b1;
            end else if (!r_work) begin
                    sqs_wd[SQS_SCHED_LSB] = 1'b0;
            end else begin
                sqf_push = 1'b1;
                go = 1'b1;
            end
        end
        default: begin
        end
    endcase
    if (sq_sweep) begin
        sqs_wd = {SQS_W{1'b0}};
    end
end

ram_reset_sweep #(.DEPTH(NUM_Q), .ADDR_W(QN_W)) sq_sweep_inst (
    .clk(clk),
    .rst(rst),
    .wrote(sqs_we || rp_wrote_swept),
    .sweep(sq_sweep),
    .sweep_addr(sq_sweep_q)
);

// the records: SQS (port 0 the pipeline's, port 1 the host's view: log,
// pi, ci, port 2 the pin's: taken, sched), SQC (port 0 the pick's, port 1
// the lookup's CQ), SQF
wire [SQS_CI_LSB+SQS_CI_W-1:0] sqs_sel;
wire [SQS_TAKEN_W+SQS_SCHED_W-1:0] sqs_pin;
ram_rec #(
    .DATA_W(SQS_W),
    .ADDR_W(QN_W),
    .DEPTH(NUM_Q),
    .N_RD(3),
    .RD_LSB({32'd0 + SQS_TAKEN_LSB, 32'd0, 32'd0}),
    .RD_W({32'd0 + SQS_TAKEN_W + SQS_SCHED_W, 32'd0 + SQS_CI_LSB + SQS_CI_W, 32'd0 + SQS_W}),
    .REC_EN(REC_PORT),
    .REC_RD(1)
) sqs_inst (
    .clk(clk),
    .wr_en(sqs_we || sq_sweep),
    .wr_addr(sq_sweep ? sq_sweep_q : s1_qn_reg),
    .wr_data(sqs_wd),
    .rd_addr({pin_qn, sel, op_qn_next}),
    .rd_data({sqs_pin, sqs_sel, sqs_rd}),
    .rec_rd_addr(rp_rd_addr),
    .rec_rd_data(rp_rd_data[RB_SQS +: SQS_W]),
    .rec_wr_en(rp_wr_en[1]),
    .rec_wr_addr(rp_wr_addr),
    .rec_wr_data(rp_wr_data[RB_SQS +: SQS_W]),
    .rec_wr_ready(rp_wr_ready[1])
);

reg [SQC_W-1:0] sqc_wd;
always @* begin
    sqc_wd = {SQC_W{1'b0}};
    sqc_wd[SQC_BASE_LSB +: SQC_BASE_W] = reg_base[63:12];
    sqc_wd[SQC_CQN_LSB +: SQC_CQN_W] = reg_q_cqn[QN_W-1:0];
end
wire [SQC_W-1:0] sqc_pick;
wire [SQC_CQN_W-1:0] sqc_lookup;
ram_rec #(
    .DATA_W(SQC_W),
    .ADDR_W(QN_W),
    .DEPTH(NUM_Q),
    .N_RD(2),
    .RD_LSB({32'd0 + SQC_CQN_LSB, 32'd0}),
    .RD_W({32'd0 + SQC_CQN_W, 32'd0 + SQC_W}),
    .REC_EN(REC_PORT)
) sqc_inst (
    .clk(clk),
    .wr_en(sqc_we),
    .wr_addr(sel),
    .wr_data(sqc_wd),
    .rd_addr({lookup_qn, op_qn_next}),
    .rd_data({sqc_lookup, sqc_pick}),
    .rec_rd_addr(rp_rd_addr),
    .rec_rd_data(rp_rd_data[RB_SQC +: SQC_W]),
    .rec_wr_en(rp_wr_en[0]),
    .rec_wr_addr(rp_wr_addr),
    .rec_wr_data(rp_wr_data[RB_SQC +: SQC_W]),
    .rec_wr_ready(rp_wr_ready[0])
);
assign lookup_cqn = sqc_lookup;

wire [SQF_W-1:0] sqf_wd = s1_qn_reg;
// (not in the record port: a FIFO addressed by its head and tail, holding
// only queues with work queued, which the cache keeps pinned; header)
ram_sdp #(
    .DATA_W(SQF_W),
    .ADDR_W(QN_W),
    .DEPTH(SQF_DEPTH)
) sqf_inst (
    .clk(clk),
    .wr_en(sqf_push),
    .wr_addr(sqf_tail_reg[QN_W-1:0]),
    .wr_data(sqf_wd),
    .rd_addr(sqf_head_next[QN_W-1:0]),
    .rd_data(sqf_rd)
);

// the pin: the record (a cycle behind pin_qn) or the operation in S1,
// whose write the read may not have seen
reg pin_s1_reg = 1'b0;
always @(posedge clk) begin
    pin_s1_reg <= op_next != OP_NONE && op_qn_next == pin_qn;
end
assign pin_busy = |sqs_pin || pin_s1_reg;

// the host's view, a cycle behind reg_q_sel (as the CQs' and the
// responder's): a register read comes many cycles after the select
assign sel_sq_pi = sel_ok ? sqs_sel[SQS_CI_LSB +: SQS_CI_W] + sqs_sel[SQS_AV_LSB +: SQS_AV_W] : 16'd0;
assign sel_sq_ci = sel_ok ? sqs_sel[SQS_CI_LSB +: SQS_CI_W] : 16'd0;
assign sel_sq_en = sel_ok && sqs_sel[SQS_LOG_LSB +: SQS_LOG_W] != 4'd0;

wire [15:0] r_mask = (16'd1 << r_log) - 16'd1;
reg [15:0] s1_qn16;
always @* begin
    s1_qn16 = 16'd0;
    s1_qn16[QN_W-1:0] = s1_qn_reg;
end

always @(posedge clk) begin
    s1_op_reg <= op_next;
    s1_qn_reg <= op_qn_next;
    s1_arg_reg <= op_arg_next;
    s1_back_reg <= sq_done_back;

    sqf_head_reg <= sqf_head_next;
    if (sqf_push) begin
        sqf_tail_reg <= sqf_tail_p1_reg;
        sqf_tail_p1_reg <= sqf_tail_p1_reg + 1'b1;
    end
    if (op_next == OP_PICK && park_valid_reg) begin
        park_valid_reg <= 1'b0;
    end
    if (park) begin
        park_valid_reg <= 1'b1;
        park_qn_reg <= s1_qn_reg;
    end

    if (sq_take || (out_valid_reg && sq_hold)) begin
        out_valid_reg <= 1'b0;
    end
    if (go) begin
        out_valid_reg <= 1'b1;
        out_qn_reg <= s1_qn_reg;
        out_addr_reg <= {sqc_pick[SQC_BASE_LSB +: SQC_BASE_W], 12'd0}
            + ({48'd0, r_next & r_mask} << WQE_SIZE_LOG);
        out_index_reg <= r_next;
        out_cqn_reg <= sqc_pick[SQC_CQN_LSB +: SQC_CQN_W];
    end
    if (reg_q_cmd_valid) begin
        out_valid_reg <= 1'b0;
    end

    if (rst) begin
        s1_op_reg <= OP_NONE;
        sqf_head_reg <= {(QN_W+1){1'b0}};
        sqf_tail_reg <= {(QN_W+1){1'b0}};
        sqf_tail_p1_reg <= {{QN_W{1'b0}}, 1'b1};
        park_valid_reg <= 1'b0;
        out_valid_reg <= 1'b0;
    end
end

assign m_sq_qn = out_qn_reg;
assign m_sq_wqe_addr = out_addr_reg;
assign m_sq_cqn = out_cqn_reg;
assign m_sq_index = out_index_reg;

// ---------------------------------------------------------------- errors
// Reported two cycles after the register write: a ring command's at once
// (registered twice), the CQs' a cycle later, a doorbell's from its check
// at S1; register writes come one per cycle, so two never meet.
reg e1_valid_reg = 1'b0;
reg [7:0] e1_code_reg = 8'd0;
reg [15:0] e1_qn_reg = 16'd0;

always @(posedge clk) begin
    e1_valid_reg <= 1'b0;

    // register commands on the selected queue
    if (reg_q_cmd_valid) begin
        if (!sel_ok) begin
            e1_valid_reg <= 1'b1;
            e1_code_reg <= ERR_DB_DISABLED;
            e1_qn_reg <= reg_q_sel;
        end else begin
            case (reg_q_cmd)
                4'd1, 4'd3: begin
                    if (!size_ok || reg_base[11:0] != 12'd0) begin
                        e1_valid_reg <= 1'b1;
                        e1_code_reg <= ERR_BAD_RING;
                        e1_qn_reg <= reg_q_sel;
                    end else if (reg_q_cmd == 4'd1 && reg_q_cqn >= NUM_Q16) begin
                        e1_valid_reg <= 1'b1;
                        e1_code_reg <= ERR_BAD_CQN;
                        e1_qn_reg <= reg_q_sel;
                    end
                    // (else sqc_we, cq_create)
                end
                4'd2, 4'd4: begin
                    // (op_destroy, cq_destroy)
                end
                default: begin
                    e1_valid_reg <= 1'b1;
                    e1_code_reg <= ERR_BAD_CMD;
                    e1_qn_reg <= reg_q_sel;
                end
            endcase
        end
    end
    if (reg_sq_db_valid && !op_db) begin
        e1_valid_reg <= 1'b1;
        e1_code_reg <= ERR_DB_DISABLED;
        e1_qn_reg <= reg_sq_db_qn;
    end

    err_valid_reg <= e1_valid_reg || cqm_err_valid;
    err_code_reg <= e1_valid_reg ? e1_code_reg : cqm_err_code;
    err_qn_reg <= e1_valid_reg ? e1_qn_reg : cqm_err_qn;
    if (s1_op_reg == OP_DB2 && !db_ok_reg) begin
        err_valid_reg <= 1'b1;
        err_code_reg <= db_en_reg ? ERR_DB_OVERFLOW : ERR_DB_DISABLED;
        err_qn_reg <= s1_qn16;
    end

    if (rst) begin
        e1_valid_reg <= 1'b0;
        err_valid_reg <= 1'b0;
        err_code_reg <= 8'd0;
        err_qn_reg <= 16'd0;
    end
end

assign err_valid = err_valid_reg;
assign sweep = cq_sweep || sq_sweep;
// (the error reaches the status register a cycle after err_valid)
assign busy = s1_op_reg == OP_CREATE || s1_op_reg == OP_DESTROY || s1_op_reg == OP_DB
    || s1_op_reg == OP_DB2 || e1_valid_reg || err_valid_reg;
assign err_code = err_code_reg;
assign err_qn = err_qn_reg;

`ifdef FORMAL
// ---------------------------------------------------------------- formal
// For hw/formal/formal_queue_manager.v (yosys read_verilog -formal defines
// FORMAL; Verilator and synthesis never see this). The pipeline and the
// list, against shadows kept from the write ports:
//   f_rmw    an operation reads its queue's record as last written (the
//            transparent read is the forwarding);
//   f_list   the list never holds more than NUM_Q entries, and a queue is
//            in it (or parked, or being picked) exactly when its record
//            says scheduled, never twice;
//   f_work   a queue with work is scheduled, unless an operation on it is
//            in the pipeline (no queue is forgotten: a hang);
//   f_offer  the offered WQE is its queue's next one by the current
//            record (ci + taken), and the queue has work.
// FORMAL_BREAK_LIST (run.sh's qm_list_twice) puts a queue in the list on
// every doorbell, scheduled or not; f_list must fail.
reg [SQS_W-1:0] f_rec [0:NUM_Q-1];
// times each queue is in the FIFO, a field per queue
localparam F_IN_W = QN_W + 1;
reg [NUM_Q*F_IN_W-1:0] f_in = {(NUM_Q*F_IN_W){1'b0}};
integer f_q;
initial begin
    for (f_q = 0; f_q < NUM_Q; f_q = f_q + 1) begin
        f_rec[f_q] = {SQS_W{1'b0}};
    end
end
always @(posedge clk) begin
    if (sqs_we) begin
        f_rec[s1_qn_reg] <= sqs_wd;
    end
end
genvar f_g;
generate
    for (f_g = 0; f_g < NUM_Q; f_g = f_g + 1) begin : g_f_in
        always @(posedge clk) begin
            f_in[f_g*F_IN_W +: F_IN_W] <= rst ? {F_IN_W{1'b0}} : f_in[f_g*F_IN_W +: F_IN_W]
                + {{QN_W{1'b0}}, sqf_push && s1_qn_reg == f_g}
                - {{QN_W{1'b0}}, sqf_pop && sqf_rd == f_g};
        end
    end
endgenerate
function f_has_work(input [SQS_W-1:0] r);
    begin
        f_has_work = r[SQS_LOG_LSB +: SQS_LOG_W] != 4'd0
            && r[SQS_AV_LSB +: SQS_AV_W] != {14'd0, r[SQS_TAKEN_LSB +: SQS_TAKEN_W]}
            && r[SQS_TAKEN_LSB +: SQS_TAKEN_W] != 2'd2;
    end
endfunction
reg f_started = 1'b0;
always @(posedge clk) f_started <= f_started || rst;
reg [QN_W+1:0] f_n;
wire [QN_W:0] f_count = sqf_tail_reg - sqf_head_reg;
always @* begin
    if (f_started && !rst) begin
        if (s1_op_reg != OP_NONE) begin
            assert(rec == f_rec[s1_qn_reg]);                                  // f_rmw
        end
        assert(f_count <= NUM_Q);                                              // f_list
        assert(sqf_tail_p1_reg == sqf_tail_reg + 1'b1);                        // f_tail_p1
        for (f_q = 0; f_q < NUM_Q; f_q = f_q + 1) begin
            f_n = {1'b0, f_in[f_q*F_IN_W +: F_IN_W]} + {{(QN_W+1){1'b0}}, park_valid_reg && park_qn_reg == f_q[QN_W-1:0]}
                + {{(QN_W+1){1'b0}}, s1_op_reg == OP_PICK && s1_qn_reg == f_q[QN_W-1:0]};
            assert(f_n == {{(QN_W+1){1'b0}}, f_rec[f_q][SQS_SCHED_LSB]});    // f_list
            if (f_has_work(f_rec[f_q]) && !(s1_op_reg != OP_NONE && s1_qn_reg == f_q[QN_W-1:0])) begin
                assert(f_rec[f_q][SQS_SCHED_LSB]);                             // f_work
            end
        end
        if (out_valid_reg) begin
            assert(f_has_work(f_rec[out_qn_reg]));                             // f_offer
            assert(out_index_reg == f_rec[out_qn_reg][SQS_CI_LSB +: SQS_CI_W]
                + {14'd0, f_rec[out_qn_reg][SQS_TAKEN_LSB +: SQS_TAKEN_W]});   // f_offer
        end
    end
end
`endif

endmodule

`resetall
