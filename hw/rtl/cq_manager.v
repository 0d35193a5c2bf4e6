// Completion queues: each CQ's ring state in block RAM, the slot allocation
// for the CQE writer, the consumer-index doorbell, arming, and MSI.
//
// Records (one word per CQ, declared once below):
//   CQP, the producer side (the ring's base and size, the producer index):
//     written by a create command or an allocation; read whole by the
//     allocation and in part (size, index) by the register view of the
//     selected queue, so it is kept in two copies (ram_sdp_copies);
//   CQC, the consumer index: written by a create command or the CQ
//     doorbell, read by the allocation;
//   MSIQ, the FIFO of CQs owed an MSI (one entry per CQ at most).
// In flops, a bit per CQ: enabled, armed, MSI pending. The doorbells, the
// notifications and the register view read them in the cycle they come.
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
// full, and the writer asks again.
//
// The register view (sel_pi, sel_phase) comes from a registered read, a
// cycle after sel_qn (two after a write): MMIO reads come many cycles after
// the selector's write.
//
// MSI: a notification of an armed CQ disarms it and, unless an MSI is
// already pending for it, queues its number; the queue is sent in order,
// vector = CQ number mod 32.

`resetall
`timescale 1ns / 1ps
`default_nettype none

module cq_manager #(
    parameter NUM_Q = 16,
    parameter QN_W = 4
) (
    input  wire             clk,
    input  wire             rst,

    // ring commands, already checked by the queue manager
    input  wire             cmd_create,
    input  wire             cmd_destroy,
    input  wire [QN_W-1:0]  cmd_qn,
    input  wire [51:0]      cmd_base,          // bits 63:12 (rings are 4 KiB aligned)
    input  wire [3:0]       cmd_log,           // log2 of the ring's entries

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

    // 1: a doorbell or arm of a disabled or missing CQ
    output wire             err_valid,
    output wire [7:0]       err_code,
    output wire [15:0]      err_qn
);

// the ring entry formats: hw/formats/rnic_formats.rdl
`include "rnic_formats.vh"

localparam CQE_SIZE_LOG = $clog2(CQE_BYTES);
localparam [7:0] ERR_DB_DISABLED = 8'd1;
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

localparam MSIQ_CQN_LSB = 0;
localparam MSIQ_CQN_W = QN_W;
localparam MSIQ_W = QN_W;

reg [NUM_Q-1:0] cq_en = {NUM_Q{1'b0}};
reg [NUM_Q-1:0] cq_armed = {NUM_Q{1'b0}};
reg [NUM_Q-1:0] msi_pending_reg = {NUM_Q{1'b0}};

wire cmd_any = cmd_create || cmd_destroy;

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
wire a_start = alloc_valid && a_state_reg == A_IDLE && !done_reg;

wire [CQP_W-1:0] cqp_alloc;
wire [VIEW_W-1:0] cqp_view;
wire [CQC_W-1:0] cqc_alloc;

wire [51:0] a_base = a_rec_reg[CQP_BASE_LSB +: CQP_BASE_W];
wire [3:0] a_log = a_rec_reg[CQP_LOG_LSB +: CQP_LOG_W];
wire [15:0] a_pi = a_rec_reg[CQP_PI_LSB +: CQP_PI_W];
wire [15:0] a_size = 16'd1 << a_log;
wire a_full = a_pi - a_ci_reg[CQC_CI_LSB +: CQC_CI_W] == a_size;
wire a_en = cq_en[a_qn_reg];
wire a_live = a_state_reg == A_CHECK && !a_abort_reg && !cmd_any;
wire a_commit = a_live && a_en && !a_full;

// the CQP write: a create (pi 0), else an allocation's commit (pi + 1)
reg cqp_we;
reg [QN_W-1:0] cqp_wa;
reg [CQP_W-1:0] cqp_wd;
always @* begin
    cqp_we = cmd_create || a_commit;
    cqp_wa = cmd_create ? cmd_qn : a_qn_reg;
    cqp_wd = a_rec_reg;
    cqp_wd[CQP_PI_LSB +: CQP_PI_W] = a_pi + 16'd1;
    if (cmd_create) begin
        cqp_wd[CQP_BASE_LSB +: CQP_BASE_W] = cmd_base;
        cqp_wd[CQP_LOG_LSB +: CQP_LOG_W] = cmd_log;
        cqp_wd[CQP_PI_LSB +: CQP_PI_W] = 16'd0;
    end
end

ram_sdp_copies #(
    .DATA_W(CQP_W),
    .ADDR_W(QN_W),
    .DEPTH(NUM_Q),
    .N_RD(2),
    .RD_LSB({32'd0 + VIEW_LSB, 32'd0}),
    .RD_W({32'd0 + VIEW_W, 32'd0 + CQP_W})
) cqp_inst (
    .clk(clk),
    .wr_en(cqp_we),
    .wr_addr(cqp_wa),
    .wr_data(cqp_wd),
    .rd_addr({sel_qn, alloc_cqn}),
    .rd_data({cqp_view, cqp_alloc})
);

// the CQC write: a create (ci 0), else a checked doorbell (the two are
// writes of different registers, never in one cycle)
wire db_ok = db_valid && db_cqn < NUM_Q16 && cq_en[db_cqn[QN_W-1:0]];
wire cqc_we = cmd_create || db_ok;
wire [QN_W-1:0] cqc_wa = cmd_create ? cmd_qn : db_cqn[QN_W-1:0];
reg [CQC_W-1:0] cqc_wd;
always @* begin
    cqc_wd = {CQC_W{1'b0}};
    cqc_wd[CQC_CI_LSB +: CQC_CI_W] = cmd_create ? 16'd0 : db_ci;
end

ram_sdp #(
    .DATA_W(CQC_W),
    .ADDR_W(QN_W),
    .DEPTH(NUM_Q)
) cqc_inst (
    .clk(clk),
    .wr_en(cqc_we),
    .wr_addr(cqc_wa),
    .wr_data(cqc_wd),
    .rd_addr(alloc_cqn),
    .rd_data(cqc_alloc)
);

always @(posedge clk) begin
    done_reg <= 1'b0;
    case (a_state_reg)
        A_IDLE: begin
            if (a_start) begin
                a_qn_reg <= alloc_cqn;
                a_abort_reg <= cmd_any;
                a_state_reg <= A_READ;
            end
        end
        A_READ: begin
            a_rec_reg <= cqp_alloc;
            a_ci_reg <= cqc_alloc;
            a_abort_reg <= a_abort_reg || cmd_any;
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
assign sel_en = cq_en[sel_qn];
assign sel_armed = cq_armed[sel_qn];

// ---------------------------------------------------------------- MSI
reg [QN_W-1:0] mq_head_reg = {QN_W{1'b0}};
reg [QN_W-1:0] mq_tail_reg = {QN_W{1'b0}};
reg [QN_W:0] mq_count_reg = {(QN_W+1){1'b0}};
reg [4:0] msi_vector_reg = 5'd0;
reg msi_valid_reg = 1'b0;

wire [MSIQ_W-1:0] msiq_head;
wire [QN_W-1:0] mq_cqn = msiq_head[MSIQ_CQN_LSB +: MSIQ_CQN_W];
// a pop waits a cycle after the last (msi_valid_reg): the head's word is
// read a cycle after head moves
wire mq_pop = !msi_valid_reg && mq_count_reg != 0;
wire notify_armed = notify && cq_armed[notify_cqn];
// The popped CQ's pending bit is cleared a cycle after the pop, from a
// register (the FIFO's word comes from block RAM, too slow to decode into
// NUM_Q flops); meanwhile its bit still reads set, so the push looks at
// the pop of this cycle and of the cycle before.
reg pclr_valid_reg = 1'b0;
reg [QN_W-1:0] pclr_cqn_reg = {QN_W{1'b0}};
wire mq_push = notify_armed && (!msi_pending_reg[notify_cqn] || (mq_pop && mq_cqn == notify_cqn)
    || (pclr_valid_reg && pclr_cqn_reg == notify_cqn));
wire [MSIQ_W-1:0] msiq_wd = notify_cqn;
localparam integer LAST_Q_I = NUM_Q - 1;
localparam [QN_W-1:0] LAST_Q = LAST_Q_I[QN_W-1:0];

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
reg [15:0] err_qn_reg = 16'd0;

// the bits' writes, each at one CQ number, decoded once
// (onehot_decoder: a write `vec[cqn] <= ...` costs a compare per bit)
wire arm_ok = arm_valid && arm_cqn < NUM_Q16 && cq_en[arm_cqn[QN_W-1:0]];
wire [NUM_Q-1:0] cmd_oh, arm_oh, ntf_oh, pclr_oh;
onehot_decoder #(.IN_W(QN_W), .OUT_N(NUM_Q)) cmd_dec (
    .en(cmd_any), .in(cmd_qn), .out(cmd_oh));
onehot_decoder #(.IN_W(QN_W), .OUT_N(NUM_Q)) arm_dec (
    .en(arm_ok), .in(arm_cqn[QN_W-1:0]), .out(arm_oh));
onehot_decoder #(.IN_W(QN_W), .OUT_N(NUM_Q)) ntf_dec (
    .en(notify_armed), .in(notify_cqn), .out(ntf_oh));
onehot_decoder #(.IN_W(QN_W), .OUT_N(NUM_Q)) pclr_dec (
    .en(pclr_valid_reg), .in(pclr_cqn_reg), .out(pclr_oh));
// a create enables, a destroy disables; either disarms, then an arm
// arms, then a notification disarms (a push is a notification's)
wire [NUM_Q-1:0] cq_en_next = (cq_en & ~cmd_oh) | (cmd_create ? cmd_oh : {NUM_Q{1'b0}});
wire [NUM_Q-1:0] cq_armed_next = ((cq_armed & ~cmd_oh) | arm_oh) & ~ntf_oh;
wire [NUM_Q-1:0] msi_pending_next = (msi_pending_reg & ~pclr_oh)
    | (mq_push ? ntf_oh : {NUM_Q{1'b0}});

always @(posedge clk) begin
    err_valid_reg <= 1'b0;

    cq_en <= cq_en_next;
    cq_armed <= cq_armed_next;
    msi_pending_reg <= msi_pending_next;

    if (db_valid && !db_ok) begin
        err_valid_reg <= 1'b1;
        err_qn_reg <= db_cqn;
    end
    if (arm_valid) begin
        if (!arm_ok) begin
            err_valid_reg <= 1'b1;
            err_qn_reg <= arm_cqn;
        end
    end

    if (msi_valid_reg && msi_ready) begin
        msi_valid_reg <= 1'b0;
    end
    // (not when the popped CQ is pushed again in the cycle of its pop)
    pclr_valid_reg <= mq_pop && !(notify_armed && mq_cqn == notify_cqn);
    pclr_cqn_reg <= mq_cqn;
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
        cq_en <= {NUM_Q{1'b0}};
        cq_armed <= {NUM_Q{1'b0}};
        msi_pending_reg <= {NUM_Q{1'b0}};
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
assign err_code = ERR_DB_DISABLED;
assign err_qn = err_qn_reg;

endmodule

`resetall
