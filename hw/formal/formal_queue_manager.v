// Formal harness: the queue manager's send-queue pipeline and round-robin
// list (queue_manager, with its cq_manager, 4 queues). Its assertions are
// in hw/rtl/queue_manager.v under `ifdef FORMAL (f_rmw, f_list, f_work,
// f_offer). See hw/formal/README.md.
//
// The solver plays the host and the executor: any ring command (create,
// destroy, bad ones) or send doorbell on any queue, any size, base and
// producer index, in any cycle (one register write per cycle, as the CSR
// block gives them); the executor takes an offered WQE whenever it likes,
// holds any queue in any cycle (sq_hold), and finishes the WQEs it took,
// in any order across queues and in order within one, holding a finish
// until it is accepted (sq_done_ready). One contract is assumed of the
// host: a send ring is created again only when the executor holds none of
// its WQEs (the driver destroys the QP and lets its WQEs drain first; a
// ring re-created under WQEs in flight would be completed by them). The
// completion queues are left idle.
//
// FORMAL_BREAK_LIST (a define queue_manager.v reads) puts a queue in the
// list on every doorbell; run.sh requires f_list to fail.

`resetall
`timescale 1ns / 1ps
`default_nettype none

module formal_queue_manager #(
    parameter NUM_Q = 4,
    parameter QN_W = 2
) (
    input wire clk
);

`ifdef FORMAL

// reset in the first cycle, never again
reg rst = 1'b1;
always @(posedge clk) rst <= 1'b0;

(* anyseq *) reg [15:0] q_sel;
(* anyseq *) reg [31:0] q_base_lo;
(* anyseq *) reg [31:0] q_size;
(* anyseq *) reg [15:0] q_cqn;
(* anyseq *) reg [3:0] q_cmd;
(* anyseq *) reg q_cmd_valid;
(* anyseq *) reg [15:0] db_qn;
(* anyseq *) reg [15:0] db_pi;
(* anyseq *) reg db_valid;
(* anyseq *) reg sq_ready;
(* anyseq *) reg hold;
(* anyseq *) reg done_new;
(* anyseq *) reg [QN_W-1:0] done_new_qn;

// one register write per cycle; small rings, so the indices wrap soon;
// none in the cycle after a doorbell (pcie_mmio_bridge passes MMIO
// writes at least three cycles apart: the doorbell's second pass)
reg f_db_prev = 1'b0;
always @(posedge clk) f_db_prev <= db_valid && !rst;
always @* begin
    assume(!(q_cmd_valid && db_valid));
    assume(!(f_db_prev && (q_cmd_valid || db_valid)));
    assume(q_size <= 32'd8);
end

wire m_valid;
wire [QN_W-1:0] m_qn;
wire done_ready;

// the executor: WQEs taken and not finished, a field per queue
reg [NUM_Q*3-1:0] held = {(NUM_Q*3){1'b0}};
reg done_reg = 1'b0;
reg [QN_W-1:0] done_qn_reg = {QN_W{1'b0}};
wire take = m_valid && sq_ready;
wire fin = done_reg && done_ready;
// a finish is offered for a queue with a WQE held and stays until accepted
always @* begin
    // (less the one finishing in this cycle)
    if (done_new && !(done_reg && !done_ready)) begin
        assume(held[done_new_qn*3 +: 3] != {2'd0, fin && done_qn_reg == done_new_qn});
    end
    // the contract: a ring is created again only with none of its WQEs held
    if (q_cmd_valid && q_cmd == 4'd1 && q_sel < NUM_Q) begin
        assume(held[q_sel[QN_W-1:0]*3 +: 3] == 3'd0);
        assume(!(done_reg && done_qn_reg == q_sel[QN_W-1:0]));
    end
end
always @(posedge clk) begin
    if (!done_reg || done_ready) begin
        done_reg <= done_new;
        done_qn_reg <= done_new_qn;
    end
    if (rst) begin
        done_reg <= 1'b0;
    end
end
genvar g;
generate
    for (g = 0; g < NUM_Q; g = g + 1) begin : g_held
        always @(posedge clk) begin
            held[g*3 +: 3] <= rst ? 3'd0 : held[g*3 +: 3] + {2'd0, take && m_qn == g}
                - {2'd0, fin && done_qn_reg == g};
        end
    end
endgenerate

queue_manager #(
    .NUM_Q(NUM_Q),
    .QN_W(QN_W)
) dut (
    .clk(clk),
    .rst(rst),
    .reg_q_sel(q_sel),
    .reg_q_base_lo(q_base_lo),
    .reg_q_base_hi(32'd0),
    .reg_q_size(q_size),
    .reg_q_cqn(q_cqn),
    .reg_q_cmd(q_cmd),
    .reg_q_cmd_valid(q_cmd_valid && !rst),
    .reg_sq_db_qn(db_qn),
    .reg_sq_db_pi(db_pi),
    .reg_sq_db_valid(db_valid && !rst),
    .reg_cq_db_cqn(16'd0),
    .reg_cq_db_ci(16'd0),
    .reg_cq_db_valid(1'b0),
    .reg_cq_arm_cqn(16'd0),
    .reg_cq_arm_valid(1'b0),
    .sel_sq_pi(),
    .sel_sq_ci(),
    .sel_cq_pi(),
    .sel_sq_en(),
    .sel_cq_en(),
    .sel_cq_armed(),
    .sel_cq_phase(),
    .m_sq_valid(m_valid),
    .m_sq_qn(m_qn),
    .m_sq_wqe_addr(),
    .m_sq_index(),
    .m_sq_cqn(),
    .m_sq_ready(sq_ready),
    .sq_hold_qn(),
    .sq_hold(hold),
    .sq_done(done_reg),
    .sq_done_qn(done_qn_reg),
    .sq_done_back(1'b0),            // (READ_EN's give-back: not modelled)
    .sq_done_ready(done_ready),
    .lookup_qn({QN_W{1'b0}}),
    .lookup_cqn(),
    .cq_alloc_valid(1'b0),
    .cq_alloc_cqn({QN_W{1'b0}}),
    .cq_alloc_done(),
    .cq_alloc_ok(),
    .cq_alloc_bad(),
    .cq_alloc_addr(),
    .cq_alloc_phase(),
    .cq_notify(1'b0),
    .cq_notify_cqn({QN_W{1'b0}}),
    .msi_vector(),
    .msi_valid(),
    .msi_ready(1'b1),
    .err_valid(),
    .err_code(),
    .err_qn(),
    .busy(),
    .pin_qn({QN_W{1'b0}}),
    .pin_busy(),
    .sweep()
);

`endif

endmodule

`resetall
