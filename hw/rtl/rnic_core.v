// rnic core: everything between the generic PCIe TLP interface and (later)
// the Ethernet MAC. See hw/README.md for the interface contract.

`resetall
`timescale 1ns / 1ps
`default_nettype none

module rnic_core #(
    parameter DATA_W = 64,
    parameter NUM_Q = 16,
    parameter RAM_BYTES = 32768,
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

    input  wire [2:0]            cfg_max_payload,
    input  wire [2:0]            cfg_max_read_req,
    input  wire [15:0]           cfg_requester_id
);

localparam QN_W = NUM_Q > 1 ? $clog2(NUM_Q) : 1;
localparam RAM_ADDR_W = $clog2(RAM_BYTES);
localparam SEG_W = $clog2(DATA_W / 8);
localparam LEN_W = 17;
localparam ID_W = 8;
localparam CHUNK_LOG = 12;
localparam NUM_SLOTS = RAM_BYTES / (1 << CHUNK_LOG) - 1;

localparam [31:0] VERBS = 32'h0000_0001;     // bit 0: local DMA copy
localparam [31:0] CAPS = 32'h0000_0003;      // bit 0: MSI, bit 1: CQE RO debug switch

initial begin
    if (DATA_W != 64 && DATA_W != 128 && DATA_W != 256 && DATA_W != 512) begin
        $error("rnic_core: DATA_W must be 64, 128, 256 or 512 (got %0d)", DATA_W);
        $finish;
    end
    if (NUM_Q < 1 || NUM_Q > 32768) begin
        $error("rnic_core: NUM_Q must be 1..32768");
        $finish;
    end
    if ((RAM_BYTES & (RAM_BYTES - 1)) != 0 || RAM_BYTES < 3 * (1 << CHUNK_LOG)) begin
        $error("rnic_core: RAM_BYTES must be a power of two of at least 3 chunks");
        $finish;
    end
end

// ---------------------------------------------------------------- registers
wire csr_req;
wire csr_req_is_wr;
wire [10:0] csr_addr;
wire [31:0] csr_wr_data;
wire [31:0] csr_wr_biten;
wire csr_req_stall_wr;
wire csr_req_stall_rd;
wire csr_rd_ack;
wire csr_rd_err;
wire [31:0] csr_rd_data;
wire csr_wr_ack;
wire csr_wr_err;

wire [15:0] reg_q_sel;
wire [31:0] reg_q_base_lo;
wire [31:0] reg_q_base_hi;
wire [31:0] reg_q_size;
wire [15:0] reg_q_cqn;
wire [3:0] reg_q_cmd;
wire reg_q_cmd_valid;
wire [15:0] reg_sq_db_pi;
wire reg_sq_db_valid;
wire [15:0] reg_sq_db_qn;
wire [15:0] reg_cq_db_ci;
wire reg_cq_db_valid;
wire [15:0] reg_cq_db_cqn;
wire [15:0] reg_cq_arm_cqn;
wire reg_cq_arm_valid;
wire reg_debug_cqe_ro;

// The generated block pulses *_swmod in the cycle of the write and shows the
// new field value from the next cycle on: act on the value one cycle later.
wire reg_q_cmd_valid_raw;
wire reg_sq_db_valid_raw;
wire reg_cq_db_valid_raw;
wire reg_cq_arm_valid_raw;
reg [3:0] swmod_dly_reg = 4'd0;
assign {reg_q_cmd_valid, reg_sq_db_valid, reg_cq_db_valid, reg_cq_arm_valid} = swmod_dly_reg;
always @(posedge clk) begin
    swmod_dly_reg <= rst ? 4'd0
        : {reg_q_cmd_valid_raw, reg_sq_db_valid_raw, reg_cq_db_valid_raw, reg_cq_arm_valid_raw};
end

wire [15:0] sel_sq_pi;
wire [15:0] sel_sq_ci;
wire [15:0] sel_cq_pi;
wire sel_sq_en;
wire sel_cq_en;
wire sel_cq_armed;
wire sel_cq_phase;

// RoCE transport registers (the transport lands next; until then the port
// only counts frames and drops every received one)
/* verilator lint_off UNUSEDSIGNAL */
wire reg_debug_early_cqe;
wire reg_debug_bypass;
wire reg_cqe_flush;
wire [31:0] reg_mac_lo;
wire [15:0] reg_mac_hi;
wire [31:0] reg_ipv4;
wire [15:0] reg_qp_sel;
wire [2:0] reg_qp_state;
wire [2:0] reg_qp_pmtu;
wire reg_qp_remote_write;
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
wire reg_qp_cmd_valid_raw;
wire [15:0] reg_rq_db_pi;
wire reg_rq_db_valid_raw;
wire [15:0] reg_rq_db_qpn;
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
wire reg_mr_cmd_valid_raw;
wire [DATA_W-1:0] unused_rx_tdata = s_axis_rx_tdata;
wire [DATA_W/8-1:0] unused_rx_tkeep = s_axis_rx_tkeep;
wire unused_rx_tuser = s_axis_rx_tuser;
wire unused_tx_tready = m_axis_tx_tready;
/* verilator lint_on UNUSEDSIGNAL */
reg [31:0] tx_frames_reg = 32'd0;
reg [31:0] rx_frames_reg = 32'd0;

assign m_axis_tx_tdata = {DATA_W{1'b0}};
assign m_axis_tx_tkeep = {DATA_W/8{1'b0}};
assign m_axis_tx_tvalid = 1'b0;
assign m_axis_tx_tlast = 1'b0;
assign m_axis_tx_tuser = 1'b0;
assign s_axis_rx_tready = 1'b1;

always @(posedge clk) begin
    rx_frames_reg <= rst ? 32'd0 : rx_frames_reg + {31'd0, s_axis_rx_tvalid && s_axis_rx_tlast};
    tx_frames_reg <= 32'd0;
end

reg [7:0] err_code_reg = 8'd0;
reg [15:0] err_qn_reg = 16'd0;
reg [31:0] err_count_reg = 32'd0;
reg [31:0] cqe_count_reg = 32'd0;
reg [31:0] rd_req_count_reg = 32'd0;
reg [31:0] wr_req_count_reg = 32'd0;
reg [31:0] rd_err_count_reg = 32'd0;

rnic_csr csr_inst (
    .clk(clk),
    .rst(rst),
    .s_cpuif_req(csr_req),
    .s_cpuif_req_is_wr(csr_req_is_wr),
    .s_cpuif_addr(csr_addr),
    .s_cpuif_wr_data(csr_wr_data),
    .s_cpuif_wr_biten(csr_wr_biten),
    .s_cpuif_req_stall_wr(csr_req_stall_wr),
    .s_cpuif_req_stall_rd(csr_req_stall_rd),
    .s_cpuif_rd_ack(csr_rd_ack),
    .s_cpuif_rd_err(csr_rd_err),
    .s_cpuif_rd_data(csr_rd_data),
    .s_cpuif_wr_ack(csr_wr_ack),
    .s_cpuif_wr_err(csr_wr_err),
    .hwif_in_id_build_version_value(BUILD_VERSION),
    .hwif_in_id_git_hash_value(GIT_HASH),
    .hwif_in_id_board_id_value(BOARD_ID),
    .hwif_in_id_data_w_value(DATA_W),
    .hwif_in_id_num_queues_value(NUM_Q),
    .hwif_in_id_verbs_value(VERBS),
    .hwif_in_id_caps_value(CAPS),
    .hwif_out_queue_q_sel_qn(reg_q_sel),
    .hwif_out_queue_q_base_lo_addr(reg_q_base_lo),
    .hwif_out_queue_q_base_hi_addr(reg_q_base_hi),
    .hwif_out_queue_q_size_entries(reg_q_size),
    .hwif_out_queue_q_cqn_cqn(reg_q_cqn),
    .hwif_out_queue_q_cmd_op(reg_q_cmd),
    .hwif_out_queue_q_cmd_op_swmod(reg_q_cmd_valid_raw),
    .hwif_in_queue_q_sq_state_sq_pi(sel_sq_pi),
    .hwif_in_queue_q_sq_state_sq_ci(sel_sq_ci),
    .hwif_in_queue_q_cq_state_cq_pi(sel_cq_pi),
    .hwif_in_queue_q_cq_state_sq_en(sel_sq_en),
    .hwif_in_queue_q_cq_state_cq_en(sel_cq_en),
    .hwif_in_queue_q_cq_state_cq_armed(sel_cq_armed),
    .hwif_in_queue_q_cq_state_cq_phase(sel_cq_phase),
    .hwif_out_queue_sq_db_pi(reg_sq_db_pi),
    .hwif_out_queue_sq_db_pi_swmod(reg_sq_db_valid_raw),
    .hwif_out_queue_sq_db_qn(reg_sq_db_qn),
    .hwif_out_queue_cq_db_ci(reg_cq_db_ci),
    .hwif_out_queue_cq_db_ci_swmod(reg_cq_db_valid_raw),
    .hwif_out_queue_cq_db_cqn(reg_cq_db_cqn),
    .hwif_out_queue_cq_arm_cqn(reg_cq_arm_cqn),
    .hwif_out_queue_cq_arm_cqn_swmod(reg_cq_arm_valid_raw),
    .hwif_in_queue_err_status_code(err_code_reg),
    .hwif_in_queue_err_status_qn(err_qn_reg),
    .hwif_in_queue_err_count_count(err_count_reg),
    .hwif_in_queue_cqe_count_count(cqe_count_reg),
    .hwif_in_dma_pcie_cfg_max_payload(cfg_max_payload),
    .hwif_in_dma_pcie_cfg_max_read_req(cfg_max_read_req),
    .hwif_out_dma_debug_cqe_ro(reg_debug_cqe_ro),
    .hwif_out_dma_debug_early_cqe(reg_debug_early_cqe),
    .hwif_out_dma_debug_bypass(reg_debug_bypass),
    .hwif_out_dma_cqe_order_cqe_flush(reg_cqe_flush),
    .hwif_out_port_mac_lo_addr(reg_mac_lo),
    .hwif_out_port_mac_hi_addr(reg_mac_hi),
    .hwif_out_port_ipv4_addr(reg_ipv4),
    .hwif_in_port_tx_frames_value(tx_frames_reg),
    .hwif_in_port_rx_frames_value(rx_frames_reg),
    .hwif_in_port_rx_drop_icrc_value(32'd0),
    .hwif_in_port_rx_drop_malformed_value(32'd0),
    .hwif_in_port_rx_drop_nobuf_value(32'd0),
    .hwif_in_port_rx_drop_qp_value(32'd0),
    .hwif_in_port_rx_drop_psn_value(32'd0),
    .hwif_in_port_rx_nak_value(32'd0),
    .hwif_out_qp_qp_sel_qpn(reg_qp_sel),
    .hwif_out_qp_qp_attr_state(reg_qp_state),
    .hwif_out_qp_qp_attr_pmtu(reg_qp_pmtu),
    .hwif_out_qp_qp_attr_remote_write(reg_qp_remote_write),
    .hwif_out_qp_qp_dest_qpn(reg_qp_dest_qpn),
    .hwif_out_qp_qp_sq_psn_psn(reg_qp_sq_psn),
    .hwif_out_qp_qp_rq_psn_psn(reg_qp_rq_psn),
    .hwif_out_qp_qp_dmac_lo_addr(reg_qp_dmac_lo),
    .hwif_out_qp_qp_dmac_hi_addr(reg_qp_dmac_hi),
    .hwif_out_qp_qp_dmac_hi_udp_sport(reg_qp_udp_sport),
    .hwif_out_qp_qp_dip_addr(reg_qp_dip),
    .hwif_out_qp_qp_pd_pd(reg_qp_pd),
    .hwif_out_qp_qp_pd_rcq(reg_qp_rcq),
    .hwif_out_qp_qp_rq_base_lo_addr(reg_qp_rq_base_lo),
    .hwif_out_qp_qp_rq_base_hi_addr(reg_qp_rq_base_hi),
    .hwif_out_qp_qp_rq_size_entries(reg_qp_rq_size),
    .hwif_out_qp_qp_cmd_op(reg_qp_cmd),
    .hwif_out_qp_qp_cmd_op_swmod(reg_qp_cmd_valid_raw),
    .hwif_out_qp_rq_db_pi(reg_rq_db_pi),
    .hwif_out_qp_rq_db_pi_swmod(reg_rq_db_valid_raw),
    .hwif_out_qp_rq_db_qpn(reg_rq_db_qpn),
    .hwif_in_qp_qp_status_state(3'd0),
    .hwif_in_qp_qp_status_last_syndrome(8'd0),
    .hwif_in_qp_qp_sq_psn_now_psn(24'd0),
    .hwif_in_qp_qp_rq_psn_now_psn(24'd0),
    .hwif_out_mr_mr_sel_index(reg_mr_sel),
    .hwif_out_mr_mr_key_key(reg_mr_key),
    .hwif_out_mr_mr_va_lo_addr(reg_mr_va_lo),
    .hwif_out_mr_mr_va_hi_addr(reg_mr_va_hi),
    .hwif_out_mr_mr_len_len(reg_mr_len),
    .hwif_out_mr_mr_bus_lo_addr(reg_mr_bus_lo),
    .hwif_out_mr_mr_bus_hi_addr(reg_mr_bus_hi),
    .hwif_out_mr_mr_attr_pd(reg_mr_pd),
    .hwif_out_mr_mr_attr_access(reg_mr_access),
    .hwif_out_mr_mr_cmd_op(reg_mr_cmd),
    .hwif_out_mr_mr_cmd_op_swmod(reg_mr_cmd_valid_raw),
    .hwif_in_dma_rd_req_count_count(rd_req_count_reg),
    .hwif_in_dma_wr_req_count_count(wr_req_count_reg),
    .hwif_in_dma_rd_err_count_count(rd_err_count_reg)
);

wire mmio_bad_req;

pcie_mmio_bridge #(
    .DATA_W(DATA_W),
    .BAR_ADDR_W(16),
    .CSR_ADDR_W(11)
) mmio_inst (
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
    .csr_req(csr_req),
    .csr_req_is_wr(csr_req_is_wr),
    .csr_addr(csr_addr),
    .csr_wr_data(csr_wr_data),
    .csr_wr_biten(csr_wr_biten),
    .csr_req_stall_wr(csr_req_stall_wr),
    .csr_req_stall_rd(csr_req_stall_rd),
    .csr_rd_ack(csr_rd_ack),
    .csr_rd_err(csr_rd_err),
    .csr_rd_data(csr_rd_data),
    .csr_wr_ack(csr_wr_ack),
    .csr_wr_err(csr_wr_err),
    .cfg_completer_id(cfg_requester_id),
    .stat_bad_req(mmio_bad_req)
);

// ---------------------------------------------------------------- queues
wire qm_sq_valid;
wire [QN_W-1:0] qm_sq_qn;
wire [63:0] qm_sq_wqe_addr;
wire [QN_W-1:0] qm_sq_cqn;
wire qm_sq_ready;
wire sq_done;
wire [QN_W-1:0] sq_done_qn;
wire [QN_W-1:0] cq_alloc_cqn;
wire cq_alloc_ok;
wire cq_alloc_bad;
wire [63:0] cq_alloc_addr;
wire cq_alloc_phase;
wire cq_alloc_take;
wire cq_notify;
wire [QN_W-1:0] cq_notify_cqn;
wire qm_err_valid;
wire [7:0] qm_err_code;
wire [15:0] qm_err_qn;

queue_manager #(
    .NUM_Q(NUM_Q),
    .QN_W(QN_W)
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
    .m_sq_valid(qm_sq_valid),
    .m_sq_qn(qm_sq_qn),
    .m_sq_wqe_addr(qm_sq_wqe_addr),
    .m_sq_cqn(qm_sq_cqn),
    .m_sq_ready(qm_sq_ready),
    .sq_done(sq_done),
    .sq_done_qn(sq_done_qn),
    .cq_alloc_cqn(cq_alloc_cqn),
    .cq_alloc_ok(cq_alloc_ok),
    .cq_alloc_bad(cq_alloc_bad),
    .cq_alloc_addr(cq_alloc_addr),
    .cq_alloc_phase(cq_alloc_phase),
    .cq_alloc_take(cq_alloc_take),
    .cq_notify(cq_notify),
    .cq_notify_cqn(cq_notify_cqn),
    .msi_vector(msi_vector),
    .msi_valid(msi_valid),
    .msi_ready(msi_ready),
    .err_valid(qm_err_valid),
    .err_code(qm_err_code),
    .err_qn(qm_err_qn)
);

// ---------------------------------------------------------------- DMA
wire [63:0] rd_desc_pcie_addr;
wire [RAM_ADDR_W-1:0] rd_desc_ram_addr;
wire [LEN_W-1:0] rd_desc_len;
wire [ID_W-1:0] rd_desc_id;
wire rd_desc_valid;
wire rd_desc_ready;
wire [ID_W-1:0] rd_status_id;
wire [3:0] rd_status_error;
wire rd_status_valid;

wire [63:0] wr_desc_pcie_addr;
wire [RAM_ADDR_W-1:0] wr_desc_ram_addr;
wire [LEN_W-1:0] wr_desc_len;
wire wr_desc_ro;
wire [ID_W-1:0] wr_desc_id;
wire wr_desc_valid;
wire wr_desc_ready;
wire [ID_W-1:0] wr_status_id;
wire wr_status_valid;

wire [RAM_ADDR_W-SEG_W-1:0] rd_ram_wr_addr;
wire [DATA_W-1:0] rd_ram_wr_data;
wire [DATA_W/8-1:0] rd_ram_wr_strb;
wire rd_ram_wr_en;

wire [RAM_ADDR_W-SEG_W-1:0] ex_ram_wr_addr;
wire [DATA_W-1:0] ex_ram_wr_data;
wire [DATA_W/8-1:0] ex_ram_wr_strb;
wire ex_ram_wr_en;

wire [RAM_ADDR_W-SEG_W-1:0] ram_rd_addr;
wire ram_rd_en;
wire [DATA_W-1:0] ram_rd_data;

wire stat_rd_req;
wire stat_rd_err;
wire stat_wr_tlp;

dma_rd_engine #(
    .DATA_W(DATA_W),
    .RAM_ADDR_W(RAM_ADDR_W),
    .LEN_W(LEN_W),
    .ID_W(ID_W)
) rd_inst (
    .clk(clk),
    .rst(rst),
    .s_desc_pcie_addr(rd_desc_pcie_addr),
    .s_desc_ram_addr(rd_desc_ram_addr),
    .s_desc_len(rd_desc_len),
    .s_desc_id(rd_desc_id),
    .s_desc_valid(rd_desc_valid),
    .s_desc_ready(rd_desc_ready),
    .m_status_id(rd_status_id),
    .m_status_error(rd_status_error),
    .m_status_valid(rd_status_valid),
    .tx_rd_req_tlp_hdr(tx_rd_req_tlp_hdr),
    .tx_rd_req_tlp_valid(tx_rd_req_tlp_valid),
    .tx_rd_req_tlp_ready(tx_rd_req_tlp_ready),
    .rx_cpl_tlp_hdr(rx_cpl_tlp_hdr),
    .rx_cpl_tlp_data(rx_cpl_tlp_data),
    .rx_cpl_tlp_keep(rx_cpl_tlp_keep),
    .rx_cpl_tlp_valid(rx_cpl_tlp_valid),
    .rx_cpl_tlp_last(rx_cpl_tlp_last),
    .rx_cpl_tlp_ready(rx_cpl_tlp_ready),
    .m_ram_wr_addr(rd_ram_wr_addr),
    .m_ram_wr_data(rd_ram_wr_data),
    .m_ram_wr_strb(rd_ram_wr_strb),
    .m_ram_wr_en(rd_ram_wr_en),
    .cfg_max_read_req(cfg_max_read_req),
    .cfg_requester_id(cfg_requester_id),
    .stat_rd_req(stat_rd_req),
    .stat_rd_err(stat_rd_err)
);

dma_wr_engine #(
    .DATA_W(DATA_W),
    .RAM_ADDR_W(RAM_ADDR_W),
    .LEN_W(LEN_W),
    .ID_W(ID_W)
) wr_inst (
    .clk(clk),
    .rst(rst),
    .s_desc_pcie_addr(wr_desc_pcie_addr),
    .s_desc_ram_addr(wr_desc_ram_addr),
    .s_desc_len(wr_desc_len),
    .s_desc_ro(wr_desc_ro),
    .s_desc_id(wr_desc_id),
    .s_desc_valid(wr_desc_valid),
    .s_desc_ready(wr_desc_ready),
    .m_status_id(wr_status_id),
    .m_status_valid(wr_status_valid),
    .m_ram_rd_addr(ram_rd_addr),
    .m_ram_rd_en(ram_rd_en),
    .s_ram_rd_data(ram_rd_data),
    .tx_wr_req_tlp_hdr(tx_wr_req_tlp_hdr),
    .tx_wr_req_tlp_data(tx_wr_req_tlp_data),
    .tx_wr_req_tlp_keep(tx_wr_req_tlp_keep),
    .tx_wr_req_tlp_valid(tx_wr_req_tlp_valid),
    .tx_wr_req_tlp_last(tx_wr_req_tlp_last),
    .tx_wr_req_tlp_ready(tx_wr_req_tlp_ready),
    .cfg_max_payload(cfg_max_payload),
    .cfg_requester_id(cfg_requester_id),
    .stat_tlp_issued(stat_wr_tlp)
);

// The read engine's completions never wait; the executor's CQE writes take
// the RAM write port only when it is free.
wire ex_ram_wr_ready = !rd_ram_wr_en;

dma_ram #(
    .DATA_W(DATA_W),
    .ADDR_W(RAM_ADDR_W - SEG_W)
) ram_inst (
    .clk(clk),
    .wr_addr(rd_ram_wr_en ? rd_ram_wr_addr : ex_ram_wr_addr),
    .wr_data(rd_ram_wr_en ? rd_ram_wr_data : ex_ram_wr_data),
    .wr_strb(rd_ram_wr_en ? rd_ram_wr_strb : ex_ram_wr_strb),
    .wr_en(rd_ram_wr_en || ex_ram_wr_en),
    .rd_addr(ram_rd_addr),
    .rd_en(ram_rd_en),
    .rd_data(ram_rd_data)
);

// ---------------------------------------------------------------- executor
wire ex_err_valid;
wire [7:0] ex_err_code;
wire [15:0] ex_err_qn;
wire stat_cqe;

wqe_executor #(
    .DATA_W(DATA_W),
    .RAM_ADDR_W(RAM_ADDR_W),
    .QN_W(QN_W),
    .LEN_W(LEN_W),
    .ID_W(ID_W),
    .CHUNK_LOG(CHUNK_LOG),
    .NUM_SLOTS(NUM_SLOTS)
) exec_inst (
    .clk(clk),
    .rst(rst),
    .s_sq_valid(qm_sq_valid),
    .s_sq_qn(qm_sq_qn),
    .s_sq_wqe_addr(qm_sq_wqe_addr),
    .s_sq_cqn(qm_sq_cqn),
    .s_sq_ready(qm_sq_ready),
    .sq_done(sq_done),
    .sq_done_qn(sq_done_qn),
    .cq_alloc_cqn(cq_alloc_cqn),
    .cq_alloc_ok(cq_alloc_ok),
    .cq_alloc_bad(cq_alloc_bad),
    .cq_alloc_addr(cq_alloc_addr),
    .cq_alloc_phase(cq_alloc_phase),
    .cq_alloc_take(cq_alloc_take),
    .cq_notify(cq_notify),
    .cq_notify_cqn(cq_notify_cqn),
    .m_rd_desc_pcie_addr(rd_desc_pcie_addr),
    .m_rd_desc_ram_addr(rd_desc_ram_addr),
    .m_rd_desc_len(rd_desc_len),
    .m_rd_desc_id(rd_desc_id),
    .m_rd_desc_valid(rd_desc_valid),
    .m_rd_desc_ready(rd_desc_ready),
    .s_rd_status_id(rd_status_id),
    .s_rd_status_error(rd_status_error),
    .s_rd_status_valid(rd_status_valid),
    .m_wr_desc_pcie_addr(wr_desc_pcie_addr),
    .m_wr_desc_ram_addr(wr_desc_ram_addr),
    .m_wr_desc_len(wr_desc_len),
    .m_wr_desc_ro(wr_desc_ro),
    .m_wr_desc_id(wr_desc_id),
    .m_wr_desc_valid(wr_desc_valid),
    .m_wr_desc_ready(wr_desc_ready),
    .s_wr_status_id(wr_status_id),
    .s_wr_status_valid(wr_status_valid),
    .ram_snoop_addr(rd_ram_wr_addr),
    .ram_snoop_data(rd_ram_wr_data),
    .ram_snoop_strb(rd_ram_wr_strb),
    .ram_snoop_en(rd_ram_wr_en),
    .m_ram_wr_addr(ex_ram_wr_addr),
    .m_ram_wr_data(ex_ram_wr_data),
    .m_ram_wr_strb(ex_ram_wr_strb),
    .m_ram_wr_en(ex_ram_wr_en),
    .m_ram_wr_ready(ex_ram_wr_ready),
    .cfg_cqe_ro(reg_debug_cqe_ro),
    .err_valid(ex_err_valid),
    .err_code(ex_err_code),
    .err_qn(ex_err_qn),
    .stat_cqe(stat_cqe)
);

// ---------------------------------------------------------------- status
always @(posedge clk) begin
    if (ex_err_valid) begin
        err_code_reg <= ex_err_code;
        err_qn_reg <= ex_err_qn;
    end else if (qm_err_valid) begin
        err_code_reg <= qm_err_code;
        err_qn_reg <= qm_err_qn;
    end else if (mmio_bad_req) begin
        err_code_reg <= 8'd9;
        err_qn_reg <= 16'hffff;
    end
    err_count_reg <= err_count_reg + {31'd0, ex_err_valid} + {31'd0, qm_err_valid}
        + {31'd0, mmio_bad_req};
    cqe_count_reg <= cqe_count_reg + {31'd0, stat_cqe};
    rd_req_count_reg <= rd_req_count_reg + {31'd0, stat_rd_req};
    wr_req_count_reg <= wr_req_count_reg + {31'd0, stat_wr_tlp};
    rd_err_count_reg <= rd_err_count_reg + {31'd0, stat_rd_err};

    if (rst) begin
        err_code_reg <= 8'd0;
        err_qn_reg <= 16'd0;
        err_count_reg <= 32'd0;
        cqe_count_reg <= 32'd0;
        rd_req_count_reg <= 32'd0;
        wr_req_count_reg <= 32'd0;
        rd_err_count_reg <= 32'd0;
    end
end

endmodule

`resetall
