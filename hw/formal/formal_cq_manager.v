// Formal harness: the completion queues (cq_manager, 4 CQs) against a model
// that keeps each CQ's enable, armed and MSI-pending bits in flop vectors,
// as cq_manager did before they moved into block RAM as XORs of one half
// per writer. The model is the contract, written from the rules in
// cq_manager's header (not from its code):
//   - every ring command, doorbell, arm and notification acts a cycle after
//     it comes; a command, doorbell or arm comes at most one a cycle;
//   - a create enables and disarms, a destroy disables and disarms, an arm
//     of an enabled CQ arms, a doorbell or arm of a disabled or missing CQ
//     is an error (code 1);
//   - a notification of a CQ armed as it stood before the cycle disarms it
//     (after that cycle's command or arm) and, unless the CQ owes an MSI
//     (an entry not yet taken out of the FIFO), queues its number; the FIFO
//     is sent in order, one MSI a cycle after the last is taken;
//   - a reset after a command or a queued MSI clears every CQ over NUM_Q
//     cycles, in which a command is refused (code 13) and a doorbell or
//     arm is an error; a reset with nothing written since the last clears
//     nothing.
// Asserted in every cycle out of reset and the sweep: the MSI stream and
// the error reports are the model's (f_cq_msi, f_cq_err), the register
// view's enable and armed bits are the model's at a selector held for a
// cycle (f_cq_view), and an allocation is answered ok only for an enabled
// CQ and bad only for a disabled one (f_cq_alloc).
//
// The solver plays the host and the CQE writer: any command (a create's
// ring size as the queue manager checked it: 2 entries at least), doorbell
// (CQ numbers up to 16 bits), arm, selector, allocation request (held with
// its CQ until answered), notification of any CQ in any cycle, any MSI
// ready, and resets in any cycle.
//
// FORMAL_BREAK_CQ_DISARM (a define cq_manager.v reads) drops the rule that
// a notification's disarm is skipped when a command disarms its CQ in the
// same cycle, so the two halves cancel and the CQ stays armed; run.sh
// requires f_cq_view or f_cq_msi to fail.

`resetall
`timescale 1ns / 1ps
`default_nettype none

module formal_cq_manager #(
    parameter NUM_Q = 4,
    parameter QN_W = 2
) (
    input wire clk
);

`ifdef FORMAL

localparam [15:0] NUM_Q16 = NUM_Q;

// reset in the first cycle and whenever the solver likes
reg init = 1'b1;
always @(posedge clk) init <= 1'b0;
(* anyseq *) reg rst_any;
wire rst = init || rst_any;

(* anyseq *) reg cmd_create;
(* anyseq *) reg cmd_destroy;
(* anyseq *) reg [QN_W-1:0] cmd_qn;
(* anyseq *) reg [51:0] cmd_base;
(* anyseq *) reg [3:0] cmd_log;
(* anyseq *) reg [15:0] db_cqn;
(* anyseq *) reg [15:0] db_ci;
(* anyseq *) reg db_valid;
(* anyseq *) reg [15:0] arm_cqn;
(* anyseq *) reg arm_valid;
(* anyseq *) reg [QN_W-1:0] sel_qn;
(* anyseq *) reg alloc_valid;
(* anyseq *) reg [QN_W-1:0] alloc_cqn;
(* anyseq *) reg notify;
(* anyseq *) reg [QN_W-1:0] notify_cqn;
(* anyseq *) reg msi_ready;

wire alloc_done, alloc_ok, alloc_bad;
wire msi_valid;
wire [4:0] msi_vector;
wire err_valid;
wire [7:0] err_code;
wire [15:0] err_qn;
wire sel_en, sel_armed;

// one register write a cycle; the CQE writer holds a request until done
reg a_held_reg = 1'b0;
reg [QN_W-1:0] a_cqn_reg = {QN_W{1'b0}};
always @* begin
    assume(!(cmd_create && cmd_destroy));
    // (the queue manager's check: a ring has 2 to 32,768 entries)
    assume(!cmd_create || cmd_log != 4'd0);
    assume({1'b0, cmd_create || cmd_destroy} + {1'b0, db_valid} + {1'b0, arm_valid} <= 2'd1);
    if (a_held_reg) begin
        assume(alloc_valid && alloc_cqn == a_cqn_reg);
    end
end
always @(posedge clk) begin
    a_held_reg <= alloc_valid && !alloc_done && !rst;
    a_cqn_reg <= alloc_cqn;
end

cq_manager #(
    .NUM_Q(NUM_Q),
    .QN_W(QN_W)
) dut (
    .clk(clk),
    .rst(rst),
    .cmd_create(cmd_create),
    .cmd_destroy(cmd_destroy),
    .cmd_qn(cmd_qn),
    .cmd_base(cmd_base),
    .cmd_log(cmd_log),
    .db_cqn(db_cqn),
    .db_ci(db_ci),
    .db_valid(db_valid),
    .arm_cqn(arm_cqn),
    .arm_valid(arm_valid),
    .sel_qn(sel_qn),
    .sel_pi(),
    .sel_en(sel_en),
    .sel_armed(sel_armed),
    .sel_phase(),
    .alloc_valid(alloc_valid),
    .alloc_cqn(alloc_cqn),
    .alloc_done(alloc_done),
    .alloc_ok(alloc_ok),
    .alloc_bad(alloc_bad),
    .alloc_addr(),
    .alloc_phase(),
    .notify(notify),
    .notify_cqn(notify_cqn),
    .msi_vector(msi_vector),
    .msi_valid(msi_valid),
    .msi_ready(msi_ready),
    .err_valid(err_valid),
    .err_code(err_code),
    .err_qn(err_qn),
    .busy()
);

// ---------------------------------------------------------------- the model
// the events, a cycle after they come
reg e_create = 1'b0, e_destroy = 1'b0, e_db = 1'b0, e_arm = 1'b0, e_ntf = 1'b0;
reg [15:0] e_qn = 16'd0;
reg [QN_W-1:0] e_nq = {QN_W{1'b0}};
always @(posedge clk) begin
    e_create <= cmd_create && !rst;
    e_destroy <= cmd_destroy && !rst;
    e_db <= db_valid && !rst;
    e_arm <= arm_valid && !rst;
    e_ntf <= notify && !rst;
    e_qn <= cmd_create || cmd_destroy ? {{(16-QN_W){1'b0}}, cmd_qn} : db_valid ? db_cqn : arm_cqn;
    e_nq <= notify_cqn;
end

reg [NUM_Q-1:0] m_en = {NUM_Q{1'b0}};
reg [NUM_Q-1:0] m_armed = {NUM_Q{1'b0}};
reg [NUM_Q-1:0] m_pend = {NUM_Q{1'b0}};
reg [QN_W-1:0] m_fifo [0:NUM_Q-1];
reg [QN_W-1:0] m_head = {QN_W{1'b0}};
reg [QN_W-1:0] m_tail = {QN_W{1'b0}};
reg [QN_W:0] m_count = {(QN_W+1){1'b0}};
reg m_msi_valid = 1'b0;
reg [4:0] m_msi_vector = 5'd0;
reg m_err_valid = 1'b0;
reg [7:0] m_err_code = 8'd0;
reg [15:0] m_err_qn = 16'd0;
reg m_dirty = 1'b0;
reg m_sweep = 1'b0;
reg [QN_W:0] m_sweep_n = {(QN_W+1){1'b0}};

integer i;
initial begin
    for (i = 0; i < NUM_Q; i = i + 1) begin
        m_fifo[i] = {QN_W{1'b0}};
    end
end

wire [QN_W-1:0] e_q = e_qn[QN_W-1:0];
wire e_cmd = (e_create || e_destroy) && !m_sweep;
wire e_live = e_qn < NUM_Q16 && m_en[e_q] && !m_sweep;
wire e_arm_ok = e_arm && e_live;
wire n_armed = e_ntf && m_armed[e_nq] && !m_sweep;
wire m_pop = !m_msi_valid && m_count != 0;
wire m_push = n_armed && !(m_pend[e_nq] && !(m_pop && m_fifo[m_head] == e_nq));

reg [NUM_Q-1:0] en_next, armed_next, pend_next;
always @* begin
    en_next = m_en;
    armed_next = m_armed;
    pend_next = m_pend;
    if (e_cmd) begin
        en_next[e_q] = e_create;
        armed_next[e_q] = 1'b0;
    end
    if (e_arm_ok) begin
        armed_next[e_q] = 1'b1;
    end
    if (n_armed) begin
        armed_next[e_nq] = 1'b0;
    end
    if (m_pop) begin
        pend_next[m_fifo[m_head]] = 1'b0;
    end
    if (m_push) begin
        pend_next[e_nq] = 1'b1;
    end
end

always @(posedge clk) begin
    m_en <= en_next;
    m_armed <= armed_next;
    m_pend <= pend_next;
    m_err_valid <= (e_db && !e_live) || (e_arm && !e_live) || ((e_create || e_destroy) && m_sweep);
    m_err_code <= (e_create || e_destroy) && m_sweep ? 8'd13 : 8'd1;
    m_err_qn <= e_qn;
    if (m_msi_valid && msi_ready) begin
        m_msi_valid <= 1'b0;
    end
    if (m_pop) begin
        m_msi_valid <= 1'b1;
        m_msi_vector <= {{(5-QN_W){1'b0}}, m_fifo[m_head]};
        m_head <= m_head + 1'b1;
    end
    if (m_push) begin
        m_fifo[m_tail] <= e_nq;
        m_tail <= m_tail + 1'b1;
    end
    m_count <= m_count + {{QN_W{1'b0}}, m_push} - {{QN_W{1'b0}}, m_pop};
    if (e_cmd || n_armed) begin
        m_dirty <= 1'b1;
    end
    if (m_sweep) begin
        m_sweep_n <= m_sweep_n + 1'b1;
        if (m_sweep_n == NUM_Q - 1) begin
            m_sweep <= 1'b0;
        end
    end
    if (rst) begin
        // (nothing written since the last clear: the bits are all 0 already)
        m_en <= {NUM_Q{1'b0}};
        m_armed <= {NUM_Q{1'b0}};
        m_pend <= {NUM_Q{1'b0}};
        m_head <= {QN_W{1'b0}};
        m_tail <= {QN_W{1'b0}};
        m_count <= {(QN_W+1){1'b0}};
        m_msi_valid <= 1'b0;
        m_err_valid <= 1'b0;
        m_sweep <= m_dirty || m_sweep || e_cmd || n_armed;
        m_sweep_n <= {(QN_W+1){1'b0}};
        m_dirty <= 1'b0;
    end
end

// ---------------------------------------------------------------- the checks
reg past_rst = 1'b1;
reg past_sweep = 1'b0;
reg [QN_W-1:0] past_sel = {QN_W{1'b0}};
always @(posedge clk) begin
    past_rst <= rst;
    past_sweep <= m_sweep;
    past_sel <= sel_qn;
end
wire quiet = !rst && !past_rst && !m_sweep && !past_sweep;

always @* begin
    if (quiet) begin
        assert(msi_valid == m_msi_valid);                               // f_cq_msi
        assert(!msi_valid || msi_vector == m_msi_vector);               // f_cq_msi
        assert(err_valid == m_err_valid);                               // f_cq_err
        assert(!err_valid || (err_code == m_err_code && err_qn == m_err_qn)); // f_cq_err
        if (sel_qn == past_sel) begin
            assert(sel_en == m_en[sel_qn]);                             // f_cq_view
            assert(sel_armed == m_armed[sel_qn]);                       // f_cq_view
        end
        if (alloc_done) begin
            assert(!alloc_ok || m_en[a_cqn_reg]);                       // f_cq_alloc
            assert(!alloc_bad || !m_en[a_cqn_reg]);                     // f_cq_alloc
        end
    end
end

`endif

endmodule

`resetall
