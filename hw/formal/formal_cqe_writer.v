// Formal harness: cqe_writer alone, every input free, for the assertions
// inside hw/rtl/cqe_writer.v (f_ro_flushed, f_flush_idle, f_no_bypass,
// f_ro_inv). Small enough for k-induction. BREAK_CQE_RO / BREAK_BYPASS
// force the debug switch on; run.sh requires a counterexample then.
// cfg_cqe_flush is the solver's, fixed from reset (a register in rnic).

`resetall
`timescale 1ns / 1ps
`default_nettype none

module formal_cqe_writer (
    input wire clk
);

`ifdef FORMAL

`ifdef BREAK_CQE_RO
localparam CFG_CQE_RO = 1'b1;
`else
localparam CFG_CQE_RO = 1'b0;
`endif
`ifdef BREAK_BYPASS
localparam CFG_BYPASS = 1'b1;
`else
localparam CFG_BYPASS = 1'b0;
`endif

reg rst = 1'b1;
always @(posedge clk) rst <= 1'b0;

(* anyconst *) reg cfg_cqe_flush;
(* anyseq *) reg req_valid;
(* anyseq *) reg [0:0] req_cqn;
(* anyseq *) reg alloc_done;
(* anyseq *) reg alloc_ok;
(* anyseq *) reg alloc_bad;
(* anyseq *) reg [63:0] alloc_addr;
(* anyseq *) reg alloc_phase;
(* anyseq *) reg ram_ready;
(* anyseq *) reg wr_ready;
(* anyseq *) reg wr_status;
(* anyseq *) reg rd_ready;
(* anyseq *) reg rd_status;
(* anyseq *) reg engine_idle;
(* anyseq *) reg byp_ready;

/* verilator lint_off PINCONNECTEMPTY */
cqe_writer #(
    .DATA_W(64),
    .RAM_ADDR_W(16),
    .QN_W(1),
    .LEN_W(14),
    .ID_W(2),
    .SLOT_BASE(16'h2000),
    .ID_TAG(2'b10)
) cqe (
    .clk(clk),
    .rst(rst),
    .s_req_valid(req_valid),
    .s_req_ready(),
    .s_req_cqn(req_cqn),
    .s_req_cqe(248'd0),
    .cq_alloc_valid(),
    .cq_alloc_cqn(),
    .cq_alloc_done(alloc_done),
    .cq_alloc_ok(alloc_ok),
    .cq_alloc_bad(alloc_bad),
    .cq_alloc_addr(alloc_addr),
    .cq_alloc_phase(alloc_phase),
    .cq_notify(),
    .cq_notify_cqn(),
    .m_ram_wr_addr(),
    .m_ram_wr_data(),
    .m_ram_wr_strb(),
    .m_ram_wr_en(),
    .m_ram_wr_ready(ram_ready),
    .m_wr_desc_pcie_addr(),
    .m_wr_desc_ram_addr(),
    .m_wr_desc_len(),
    .m_wr_desc_ro(),
    .m_wr_desc_id(),
    .m_wr_desc_valid(),
    .m_wr_desc_ready(wr_ready),
    .s_wr_status_valid(wr_status),
    .m_rd_desc_pcie_addr(),
    .m_rd_desc_len(),
    .m_rd_desc_id(),
    .m_rd_desc_valid(),
    .m_rd_desc_ready(rd_ready),
    .s_rd_status_valid(rd_status),
    .wr_engine_idle(engine_idle),
    .m_byp_tlp_hdr(),
    .m_byp_tlp_data(),
    .m_byp_tlp_keep(),
    .m_byp_tlp_valid(),
    .m_byp_tlp_last(),
    .m_byp_tlp_ready(byp_ready),
    .cfg_cqe_ro(CFG_CQE_RO),
    .cfg_cqe_flush(cfg_cqe_flush),
    .cfg_bypass(CFG_BYPASS),
    .cfg_requester_id(16'h0100),
    .err_cq_disabled(),
    .err_cqn(),
    .stat_cqe()
);
/* verilator lint_on PINCONNECTEMPTY */

`endif

endmodule

`resetall
`default_nettype wire
