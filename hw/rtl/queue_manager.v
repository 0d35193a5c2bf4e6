// Queue manager: send-queue ring state, doorbells, round-robin selection
// of the next send queue with work, and the ring commands; the completion
// queues (their state in block RAM, CQ slot allocation, arming, MSI) are
// its cq_manager.
//
// Rings live in host memory; only their indices live here. Indices are
// 16-bit free-running counters, so a ring of N entries (N a power of two up
// to 32768) is full when pi - ci == N.

`resetall
`timescale 1ns / 1ps
`default_nettype none

module queue_manager #(
    parameter NUM_Q = 16,
    parameter QN_W = 4
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
    input  wire [NUM_Q-1:0] sq_hold,           // queues whose next WQE must wait

    // executor: the work request of queue sq_done_qn is finished
    input  wire             sq_done,
    input  wire [QN_W-1:0]  sq_done_qn,

    // the completion queue of a send queue
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
    output wire             err_valid,
    output wire [7:0]       err_code,
    output wire [15:0]      err_qn
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
// SQC: a send queue's configuration that only the WQE address reads, in
// block RAM (ram_sdp): the ring's base (rings are 4 KiB aligned: the low 12
// bits are zero). Written by the host's ring command (cmd 1) only, read
// through the picked queue: the read port is given the queue sel_qn_reg
// takes at the next edge, so the word is there when sel_valid_reg is (a
// command at cycle t is seen from t+1, as with a flop array).
//
// Kept in flops: the indices (pi, ci: the doorbells and the executor move
// them, the ready vector reads every queue's each cycle), the size (also
// read by the doorbell check at the doorbell's queue), the send queue's CQ
// (also read by the ACK completer's lookup at lookup_qn) and the enables.
localparam SQC_BASE_W = 52;
localparam SQC_BASE_LSB = 0;
localparam SQC_W = SQC_BASE_LSB + SQC_BASE_W;
reg [3:0] sq_log [0:NUM_Q-1];
reg [15:0] sq_pi [0:NUM_Q-1];
reg [15:0] sq_ci [0:NUM_Q-1];
reg [QN_W-1:0] sq_cqn [0:NUM_Q-1];
reg [NUM_Q-1:0] sq_en = {NUM_Q{1'b0}};

// WQEs handed to the executor and not yet finished, per queue: up to two,
// so the executor can fetch the next one while the current one streams
reg [2*NUM_Q-1:0] taken_reg = {(2*NUM_Q){1'b0}};
integer tq;
reg [QN_W-1:0] rr_reg = {QN_W{1'b0}};

reg err_valid_reg = 1'b0;
reg [7:0] err_code_reg = 8'd0;
reg [15:0] err_qn_reg = 16'd0;

integer i;

initial begin
    for (i = 0; i < NUM_Q; i = i + 1) begin
        sq_log[i] = 4'd0;
        sq_pi[i] = 16'd0;
        sq_ci[i] = 16'd0;
        sq_cqn[i] = {QN_W{1'b0}};
    end
end

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

assign sel_sq_pi = sel_ok ? sq_pi[sel] : 16'd0;
assign sel_sq_ci = sel_ok ? sq_ci[sel] : 16'd0;
assign sel_sq_en = sel_ok ? sq_en[sel] : 1'b0;

// the completion queues
wire cq_create = reg_q_cmd_valid && sel_ok && reg_q_cmd == 4'd3 && size_ok && reg_base[11:0] == 12'd0;
wire cq_destroy = reg_q_cmd_valid && sel_ok && reg_q_cmd == 4'd4;
wire [15:0] cqm_sel_pi;
wire cqm_sel_en, cqm_sel_armed, cqm_sel_phase;
wire cqm_err_valid;
wire [7:0] cqm_err_code;
wire [15:0] cqm_err_qn;

cq_manager #(
    .NUM_Q(NUM_Q),
    .QN_W(QN_W)
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
    .err_qn(cqm_err_qn)
);

assign sel_cq_pi = sel_ok ? cqm_sel_pi : 16'd0;
assign sel_cq_en = sel_ok && cqm_sel_en;
assign sel_cq_armed = sel_ok && cqm_sel_armed;
assign sel_cq_phase = sel_ok && cqm_sel_phase;

// round-robin pick of a send queue with posted work: a ready bit per queue
// from its own registers, then the first ready queue after the last pick
// (a per-queue vector and two priority scans instead of a scan that reads
// every queue's counters through a rotating index: fewer LUTs, fewer levels).
// Whether a queue has work beyond what the executor holds is registered
// (pi != ci + taken, a 16-bit sum per queue, off the pick's path); a queue
// whose counters moved last cycle other than by a retirement (which moves
// ci and taken together) waits a cycle for its bit to catch up. The
// executor's hold is registered too: a queue it holds is seen a cycle late
// (below).
//
// The pick reaches the executor through two registers (an output register
// of one entry, in two steps): the picked queue (sel_*), then its WQE's
// address, index and CQ (out_*), which the executor is offered. The entry
// is not counted in taken_reg until the executor takes it, so nothing is
// picked while one is on its way. An entry whose queue the executor holds
// meanwhile (a retransmission or flush pending, its outstanding ring full,
// a prefetched WQE of it waiting) is dropped, and so is every entry when a
// ring command arrives: the queue is picked again once it may go on. The
// offer itself is gated by the current hold (one bit of sq_hold muxed by a
// register: shallow), because the registered hold is a cycle late: a queue
// with no outstanding ring whose entry the executor took in that cycle
// would park the executor in ST_DECODE waiting for a ring, while the rings
// it waits for are freed only by retransmissions the executor starts from
// ST_IDLE (a deadlock). The executor's ready does not look at the hold, so
// an entry counts as taken only when it was offered (sq_take): counting a
// held entry the executor never saw would leave its WQE in taken_reg for
// good and the queue would never complete it (a hang; reliability's
// more_qps_in_flight_than_outstanding_rings runs every ring out and
// exercises both).
reg [NUM_Q-1:0] sq_work_reg = {NUM_Q{1'b0}};
reg [NUM_Q-1:0] sq_stale_reg = {NUM_Q{1'b1}};
reg [NUM_Q-1:0] sq_hold_reg = {NUM_Q{1'b0}};
reg sel_valid_reg = 1'b0;
reg [QN_W-1:0] sel_qn_reg = {QN_W{1'b0}};
reg out_valid_reg = 1'b0;
reg [QN_W-1:0] out_qn_reg = {QN_W{1'b0}};
reg [63:0] out_addr_reg = 64'd0;
reg [15:0] out_index_reg = 16'd0;
reg [QN_W-1:0] out_cqn_reg = {QN_W{1'b0}};
wire [NUM_Q-1:0] sq_ready_vec;
genvar gq;
generate
    for (gq = 0; gq < NUM_Q; gq = gq + 1) begin : g_ready
        assign sq_ready_vec[gq] = sq_en[gq] && taken_reg[2*gq +: 2] != 2'd2 && !sq_hold_reg[gq]
            && sq_work_reg[gq] && !sq_stale_reg[gq];
    end
endgenerate
// the queues after the last pick: above rr_reg's bit
localparam [NUM_Q-1:0] Q_ONE = 1;
wire [NUM_Q-1:0] rr_bit = Q_ONE << rr_reg;
wire [NUM_Q-1:0] rr_above = ~(rr_bit | (rr_bit - Q_ONE));
wire pick_valid, pick_above;
wire [QN_W-1:0] pick_first, pick_next;
priority_encoder #(.WIDTH(NUM_Q), .OUT_W(QN_W)) pick_first_enc (
    .in(sq_ready_vec),
    .valid(pick_valid),
    .index(pick_first)
);
priority_encoder #(.WIDTH(NUM_Q), .OUT_W(QN_W)) pick_next_enc (
    .in(sq_ready_vec & rr_above),
    .valid(pick_above),
    .index(pick_next)
);
wire [QN_W-1:0] pick_qn = pick_above ? pick_next : pick_first;
// a new pick while nothing is on its way to the executor
wire pick_load = pick_valid && !sel_valid_reg && !out_valid_reg;
// (the queue sel_qn_reg takes at the next edge: the SQC read port's)
wire [QN_W-1:0] sel_qn_next = pick_load ? pick_qn : sel_qn_reg;
// taken only as offered (above)
wire sq_take = m_sq_valid && m_sq_ready;

// the SQC record: written by an accepted ring command (cmd 1, below),
// read at sel_qn_reg
wire sqc_we = reg_q_cmd_valid && sel_ok && reg_q_cmd == 4'd1 && size_ok && reg_base[11:0] == 12'd0
    && reg_q_cqn < NUM_Q16;
reg [SQC_W-1:0] sqc_wd;
always @* begin
    sqc_wd = {SQC_W{1'b0}};
    sqc_wd[SQC_BASE_LSB +: SQC_BASE_W] = reg_base[63:12];
end
wire [SQC_W-1:0] sqc_sel;
ram_sdp #(
    .DATA_W(SQC_W),
    .ADDR_W(QN_W),
    .DEPTH(NUM_Q)
) sqc_inst (
    .clk(clk),
    .wr_en(sqc_we),
    .wr_addr(sel),
    .wr_data(sqc_wd),
    .rd_addr(sel_qn_next),
    .rd_data(sqc_sel)
);

// the WQE of the selected queue: the next one after those the executor holds
wire [15:0] sel_mask = (16'd1 << sq_log[sel_qn_reg]) - 16'd1;
wire [15:0] sel_ci = sq_ci[sel_qn_reg] + {14'd0, taken_reg[2*sel_qn_reg +: 2]};
wire [15:0] sel_index = sel_ci & sel_mask;

always @(posedge clk) begin
    sq_hold_reg <= sq_hold;
    if (pick_load) begin
        sel_valid_reg <= 1'b1;
        sel_qn_reg <= pick_qn;
    end
    if (sel_valid_reg) begin
        sel_valid_reg <= 1'b0;
        out_valid_reg <= 1'b1;
        out_qn_reg <= sel_qn_reg;
        out_addr_reg <= {sqc_sel[SQC_BASE_LSB +: SQC_BASE_W], 12'd0} + ({48'd0, sel_index} << WQE_SIZE_LOG);
        out_index_reg <= sel_ci;
        out_cqn_reg <= sq_cqn[sel_qn_reg];
    end
    if (sq_take || (out_valid_reg && sq_hold_reg[out_qn_reg])) begin
        out_valid_reg <= 1'b0;
    end
    if (reg_q_cmd_valid || rst) begin
        sel_valid_reg <= 1'b0;
        out_valid_reg <= 1'b0;
    end
end

// A QP's work bit can only change after a write to a ring index or a take
// count, so the compares run only in the cycle after one: the simulator then
// skips NUM_Q compares on most cycles (in the FPGA it is a clock enable).
// Every write of sq_pi, sq_ci or taken_reg must be among its terms.
reg work_dirty_reg = 1'b1;

always @(posedge clk) begin
    work_dirty_reg <= sq_take || sq_done || reg_sq_db_valid || reg_q_cmd_valid || rst;
    if (work_dirty_reg) begin
        for (i = 0; i < NUM_Q; i = i + 1) begin
            sq_work_reg[i] <= sq_pi[i] != sq_ci[i] + {14'd0, taken_reg[2*i +: 2]};
        end
    end
    sq_stale_reg <= {NUM_Q{1'b0}};
    if (sq_take) begin
        sq_stale_reg[out_qn_reg] <= 1'b1;
    end
    if (reg_sq_db_valid && reg_sq_db_qn < NUM_Q16) begin
        sq_stale_reg[reg_sq_db_qn[QN_W-1:0]] <= 1'b1;
    end
    if (reg_q_cmd_valid || rst) begin
        sq_stale_reg <= {NUM_Q{1'b1}};
    end
end

assign m_sq_valid = out_valid_reg && !sq_hold[out_qn_reg];
assign m_sq_qn = out_qn_reg;
assign m_sq_wqe_addr = out_addr_reg;
assign m_sq_cqn = out_cqn_reg;
assign m_sq_index = out_index_reg;
assign lookup_cqn = sq_cqn[lookup_qn];

// (the two report errors of different register writes, never in one cycle)
assign err_valid = err_valid_reg || cqm_err_valid;
assign err_code = err_valid_reg ? err_code_reg : cqm_err_code;
assign err_qn = err_valid_reg ? err_qn_reg : cqm_err_qn;

wire [15:0] db_size = 16'd1 << sq_log[reg_sq_db_qn[QN_W-1:0]];
wire [15:0] db_used = reg_sq_db_pi - sq_ci[reg_sq_db_qn[QN_W-1:0]];

always @(posedge clk) begin
    err_valid_reg <= 1'b0;

    // register commands on the selected queue
    if (reg_q_cmd_valid) begin
        if (!sel_ok) begin
            err_valid_reg <= 1'b1;
            err_code_reg <= ERR_DB_DISABLED;
            err_qn_reg <= reg_q_sel;
        end else begin
            case (reg_q_cmd)
                4'd1: begin
                    if (!size_ok || reg_base[11:0] != 12'd0) begin
                        err_valid_reg <= 1'b1;
                        err_code_reg <= ERR_BAD_RING;
                        err_qn_reg <= reg_q_sel;
                    end else if (reg_q_cqn >= NUM_Q16) begin
                        err_valid_reg <= 1'b1;
                        err_code_reg <= ERR_BAD_CQN;
                        err_qn_reg <= reg_q_sel;
                    end else begin
                        // (and the base: sqc_we)
                        sq_log[sel] <= size_log;
                        sq_pi[sel] <= 16'd0;
                        sq_ci[sel] <= 16'd0;
                        sq_cqn[sel] <= reg_q_cqn[QN_W-1:0];
                        sq_en[sel] <= 1'b1;
                    end
                end
                4'd2: sq_en[sel] <= 1'b0;
                4'd3: begin
                    if (!size_ok || reg_base[11:0] != 12'd0) begin
                        err_valid_reg <= 1'b1;
                        err_code_reg <= ERR_BAD_RING;
                        err_qn_reg <= reg_q_sel;
                    end
                    // (else cq_create)
                end
                4'd4: begin
                    // cq_destroy
                end
                default: begin
                    err_valid_reg <= 1'b1;
                    err_code_reg <= ERR_BAD_CMD;
                    err_qn_reg <= reg_q_sel;
                end
            endcase
        end
    end

    // send-queue doorbell
    if (reg_sq_db_valid) begin
        if (reg_sq_db_qn >= NUM_Q16 || !sq_en[reg_sq_db_qn[QN_W-1:0]]) begin
            err_valid_reg <= 1'b1;
            err_code_reg <= ERR_DB_DISABLED;
            err_qn_reg <= reg_sq_db_qn;
        end else if (db_used > db_size) begin
            err_valid_reg <= 1'b1;
            err_code_reg <= ERR_DB_OVERFLOW;
            err_qn_reg <= reg_sq_db_qn;
        end else begin
            sq_pi[reg_sq_db_qn[QN_W-1:0]] <= reg_sq_db_pi;
        end
    end

    // work dispatch and retirement
    if (pick_load) begin
        rr_reg <= pick_qn;
    end
    if (sq_take || sq_done) begin
        for (tq = 0; tq < NUM_Q; tq = tq + 1) begin
            taken_reg[2*tq +: 2] <= taken_reg[2*tq +: 2]
                + {1'b0, sq_take && out_qn_reg == tq[QN_W-1:0]}
                - {1'b0, sq_done && sq_done_qn == tq[QN_W-1:0]};
        end
    end
    if (sq_done) begin
        sq_ci[sq_done_qn] <= sq_ci[sq_done_qn] + 16'd1;
    end

    if (rst) begin
        sq_en <= {NUM_Q{1'b0}};
        taken_reg <= {(2*NUM_Q){1'b0}};
        rr_reg <= {QN_W{1'b0}};
        err_valid_reg <= 1'b0;
        err_code_reg <= 8'd0;
        err_qn_reg <= 16'd0;
    end
end

endmodule

`resetall
