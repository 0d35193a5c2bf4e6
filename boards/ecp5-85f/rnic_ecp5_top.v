// ECP5 timing and resource baseline: rnic_core with no PCIe endpoint and no
// PHY. The board has only a clock pin and one output pin, so every core
// input is driven from on-chip pseudo-random stimulus and every core output
// is folded into that one pin. Nothing is constant and everything is
// observed, so synthesis can drop none of the core, and the figures are
// those of the core itself plus a small, known overhead (STIM_W + OBS_W
// flip-flops and the XOR tree).
//
// The MAC side is a registered loopback (TX frames come back as RX frames),
// as on a board with internal MAC loopback; the TLP side gets the stimulus.

`resetall
`timescale 1ns / 1ps
`default_nettype none

module rnic_ecp5_top #(
    parameter DATA_W = 64,
    parameter NUM_Q = 16,
    parameter MP_W = 64,
    parameter SEND_EN = 1,
    parameter RC_EN = 1,
    parameter READ_EN = 0,           // 1: RDMA READ requests served (responder side; needs RC_EN = 1)
    parameter OST_RINGS = 0,         // shared pools (0: sized from NUM_Q)
    parameter MP_PEND = 0,
    parameter MP_WIMM = 0,           // mp deferred completions per QP (0: 4)
    parameter DMAC_N = 0,
    parameter CLK_MHZ = 125,
    parameter [31:0] BUILD_VERSION = 32'h0001_0000,
    parameter [31:0] GIT_HASH = 32'h0,
    parameter [31:0] BOARD_ID = 32'h0
) (
    input  wire clk,
    output reg  obs_out
);

localparam KEEP_W = DATA_W / 32;
// core inputs fed by stimulus: two TLP input channels (hdr, data, keep,
// valid, last), four ready inputs, the three config fields, the flash data
// inputs and the boot-slot inputs
localparam TLP_IN_W = 128 + DATA_W + KEEP_W + 2;
localparam STIM_W = 2 * TLP_IN_W + 4 + 3 + 3 + 16 + 4 + 3;
// core outputs folded into obs_out: two TLP output channels, the read
// request header channel, MSI, the two ready outputs, the flash pins and
// the reconfiguration request
localparam OBS_W = 2 * TLP_IN_W + 129 + 6 + 2 + 11;
localparam GRP = 16;                          // bits per first-level XOR
localparam NGRP = (OBS_W + GRP - 1) / GRP;

initial begin
    if (DATA_W != 64 && DATA_W != 128 && DATA_W != 256 && DATA_W != 512) begin
        $error("rnic_ecp5_top: DATA_W must be 64, 128, 256 or 512 (got %0d)", DATA_W);
        $finish;
    end
    if (CLK_MHZ < 1) begin
        $error("rnic_ecp5_top: CLK_MHZ must be positive");
        $finish;
    end
end

// Power-on reset from FF init values (ECP5 flip-flops start at their init).
reg [3:0] por_cnt = 4'd0;
reg rst = 1'b1;
always @(posedge clk) begin
    if (por_cnt != 4'hf) por_cnt <= por_cnt + 4'd1;
    rst <= por_cnt != 4'hf;
end

// Stimulus: a 31-bit LFSR (x^31 + x^28 + 1) feeding a shift register, so
// every core input bit is its own flip-flop; no two inputs share a net,
// which would let synthesis merge logic behind them.
reg [30:0] lfsr = 31'h1;
reg [STIM_W-1:0] stim = {STIM_W{1'b0}};
always @(posedge clk) begin
    lfsr <= {lfsr[29:0], lfsr[30] ^ lfsr[27]};
    stim <= {stim[STIM_W-2:0], lfsr[30]};
end

wire [127:0]        rx_req_tlp_hdr   = stim[127:0];
wire [DATA_W-1:0]   rx_req_tlp_data  = stim[128 +: DATA_W];
wire [KEEP_W-1:0]   rx_req_tlp_keep  = stim[128 + DATA_W +: KEEP_W];
wire                rx_req_tlp_valid = stim[TLP_IN_W - 2];
wire                rx_req_tlp_last  = stim[TLP_IN_W - 1];
wire [127:0]        rx_cpl_tlp_hdr   = stim[TLP_IN_W +: 128];
wire [DATA_W-1:0]   rx_cpl_tlp_data  = stim[TLP_IN_W + 128 +: DATA_W];
wire [KEEP_W-1:0]   rx_cpl_tlp_keep  = stim[TLP_IN_W + 128 + DATA_W +: KEEP_W];
wire                rx_cpl_tlp_valid = stim[2 * TLP_IN_W - 2];
wire                rx_cpl_tlp_last  = stim[2 * TLP_IN_W - 1];
wire                tx_cpl_tlp_ready    = stim[2 * TLP_IN_W];
wire                tx_rd_req_tlp_ready = stim[2 * TLP_IN_W + 1];
wire                tx_wr_req_tlp_ready = stim[2 * TLP_IN_W + 2];
wire                msi_ready           = stim[2 * TLP_IN_W + 3];
wire [2:0]          cfg_max_payload     = stim[2 * TLP_IN_W + 4 +: 3];
wire [2:0]          cfg_max_read_req    = stim[2 * TLP_IN_W + 7 +: 3];
wire [15:0]         cfg_requester_id    = stim[2 * TLP_IN_W + 10 +: 16];
wire [3:0]          flash_io_i          = stim[2 * TLP_IN_W + 26 +: 4];
wire [1:0]          boot_slot           = stim[2 * TLP_IN_W + 30 +: 2];
wire                boot_fallback       = stim[2 * TLP_IN_W + 32];
wire                flash_sck;
wire                flash_cs_n;
wire [3:0]          flash_io_o;
wire [3:0]          flash_io_oe;
wire                reconfig_req;

wire                rx_req_tlp_ready;
wire [127:0]        tx_cpl_tlp_hdr;
wire [DATA_W-1:0]   tx_cpl_tlp_data;
wire [KEEP_W-1:0]   tx_cpl_tlp_keep;
wire                tx_cpl_tlp_valid;
wire                tx_cpl_tlp_last;
wire [127:0]        tx_rd_req_tlp_hdr;
wire                tx_rd_req_tlp_valid;
wire                rx_cpl_tlp_ready;
wire [127:0]        tx_wr_req_tlp_hdr;
wire [DATA_W-1:0]   tx_wr_req_tlp_data;
wire [KEEP_W-1:0]   tx_wr_req_tlp_keep;
wire                tx_wr_req_tlp_valid;
wire                tx_wr_req_tlp_last;
wire [4:0]          msi_vector;
wire                msi_valid;

// MAC loopback: one register stage between TX and RX (axis_register: a
// skid buffer, so neither side's ready is combinational through it).
wire [DATA_W-1:0]   mac_tx_tdata;
wire [DATA_W/8-1:0] mac_tx_tkeep;
wire                mac_tx_tvalid;
wire                mac_tx_tlast;
wire                mac_tx_tuser;
wire                mac_tx_tready;
wire                mac_rx_tready;
wire [DATA_W-1:0]   lb_tdata;
wire [DATA_W/8-1:0] lb_tkeep;
wire                lb_tvalid;
wire                lb_tlast;
wire                lb_tuser;
axis_register #(
    .WIDTH(DATA_W + DATA_W/8 + 2)
) loopback_reg (
    .clk(clk),
    .rst(rst),
    .s_data({mac_tx_tdata, mac_tx_tkeep, mac_tx_tlast, mac_tx_tuser}),
    .s_valid(mac_tx_tvalid),
    .s_ready(mac_tx_tready),
    .m_data({lb_tdata, lb_tkeep, lb_tlast, lb_tuser}),
    .m_valid(lb_tvalid),
    .m_ready(mac_rx_tready)
);

rnic_core #(
    .DATA_W(DATA_W),
    .NUM_Q(NUM_Q),
    .MP_W(MP_W),
    .SEND_EN(SEND_EN),
    .RC_EN(RC_EN),
    .READ_EN(READ_EN),
    .OST_RINGS(OST_RINGS),
    .MP_PEND(MP_PEND),
    .MP_WIMM(MP_WIMM),
    .DMAC_N(DMAC_N),
    .CLK_MHZ(CLK_MHZ),
    .BUILD_VERSION(BUILD_VERSION),
    .GIT_HASH(GIT_HASH),
    .BOARD_ID(BOARD_ID)
) core (
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
    .msi_vector(msi_vector),
    .msi_valid(msi_valid),
    .msi_ready(msi_ready),
    .m_axis_tx_tdata(mac_tx_tdata),
    .m_axis_tx_tkeep(mac_tx_tkeep),
    .m_axis_tx_tvalid(mac_tx_tvalid),
    .m_axis_tx_tlast(mac_tx_tlast),
    .m_axis_tx_tuser(mac_tx_tuser),
    .m_axis_tx_tready(mac_tx_tready),
    .s_axis_rx_tdata(lb_tdata),
    .s_axis_rx_tkeep(lb_tkeep),
    .s_axis_rx_tvalid(lb_tvalid),
    .s_axis_rx_tlast(lb_tlast),
    .s_axis_rx_tuser(lb_tuser),
    .s_axis_rx_tready(mac_rx_tready),
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
    .reconfig_req(reconfig_req)
);

// Observation: register every output, XOR groups of GRP bits into one
// register each, then XOR those into the pin. Two register stages keep the
// tree off the critical path (a 16-input XOR is two LUT4 levels).
wire [OBS_W-1:0] obs_comb = {
    tx_cpl_tlp_hdr, tx_cpl_tlp_data, tx_cpl_tlp_keep, tx_cpl_tlp_valid, tx_cpl_tlp_last,
    tx_wr_req_tlp_hdr, tx_wr_req_tlp_data, tx_wr_req_tlp_keep, tx_wr_req_tlp_valid, tx_wr_req_tlp_last,
    tx_rd_req_tlp_hdr, tx_rd_req_tlp_valid,
    msi_vector, msi_valid,
    rx_req_tlp_ready, rx_cpl_tlp_ready,
    flash_sck, flash_cs_n, flash_io_o, flash_io_oe, reconfig_req
};
reg [OBS_W-1:0] obs_q = {OBS_W{1'b0}};
reg [NGRP-1:0] obs_grp = {NGRP{1'b0}};
wire [NGRP*GRP-1:0] obs_pad = {{(NGRP*GRP-OBS_W){1'b0}}, obs_q};
integer g;
always @(posedge clk) begin
    obs_q <= obs_comb;
    for (g = 0; g < NGRP; g = g + 1) obs_grp[g] <= ^obs_pad[g*GRP +: GRP];
    obs_out <= ^obs_grp;
end

endmodule

`resetall
