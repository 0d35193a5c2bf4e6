// The Artix-7 card's datapath behind the PCIE_2_1 hard block: the TRN shim
// (rnic_pcie7_shim, the user clock) -> the clock crossing or straight wires
// -> rnic_core, its MAC TX looped to its RX through one register stage.
// rnic_artix7_top wires the hard block, the PHY, the clocks and the pins
// around it; sim/pcie7-shim-sim verilates this module on its own, so the
// simulated card datapath is the card's, not a copy of it.
//
// CLK_MHZ is the core's clock:
// - 62 (62.5 MHz): rnic_core at twice the TRN width on core_clk, behind
//   pcie_clock_crossing;
// - 125: rnic_core at the TRN width on pcie_clk, wired straight to the
//   shim; core_clk is then unused.
//
// One reset source, `rst` (the block's user reset or the MMCM out of lock),
// is synchronised into each clock through two flops; core_rst is the core's
// (for the board's LEDs).

`resetall
`timescale 1ns / 1ps
`default_nettype none

module rnic_artix7_datapath #(
    parameter DATA_W = 64,           // TRN width: 64 (Gen1 x4) or 128 (Gen2 x4)
    parameter NUM_Q = 16,
    parameter MP_W = 64,
    parameter SEND_EN = 1,
    parameter RC_EN = 1,
    parameter READ_EN = 0,           // 1: RDMA READ requests served (responder side; needs RC_EN = 1)
    parameter OST_RINGS = 0,
    parameter MP_PEND = 0,
    parameter MP_WIMM = 0,           // mp deferred completions per QP (0: 4)
    parameter DMAC_N = 0,
    parameter CLK_MHZ = 62,
    parameter [31:0] BUILD_VERSION = 32'h0001_0000,
    parameter [31:0] GIT_HASH = 32'h0,
    parameter [31:0] BOARD_ID = 32'h0
) (
    input  wire        pcie_clk,       // USERCLK2: 125 MHz
    input  wire        core_clk,       // the core's clock: 62.5 MHz (CLK_MHZ 62 only)
    input  wire        rst,            // reset source (either clock or none)
    output wire        core_rst,       // the core's reset, in its clock

    // TRN receive
    input  wire [DATA_W-1:0] trn_rd,
    input  wire [1:0]  trn_rrem,
    input  wire        trn_rsof,
    input  wire        trn_reof,
    input  wire        trn_rsrc_rdy,
    output wire        trn_rdst_rdy,
    input  wire [7:0]  trn_rbar_hit,
    input  wire        trn_rerrfwd,
    input  wire        trn_rsrc_dsc,
    // TRN transmit
    output wire [DATA_W-1:0] trn_td,
    output wire [1:0]  trn_trem,
    output wire        trn_tsof,
    output wire        trn_teof,
    output wire        trn_tsrc_rdy,
    input  wire        trn_tdst_rdy,
    input  wire [5:0]  trn_tbuf_av,
    output wire        trn_tsrc_dsc,
    output wire        trn_tstr,
    output wire        trn_terrfwd,
    output wire        trn_tecrc_gen,
    input  wire        trn_tcfg_req,
    output wire        trn_tcfg_gnt,
    input  wire        trn_lnk_up,
    // configuration and MSI
    output wire        cfg_interrupt,
    input  wire        cfg_interrupt_rdy,
    output wire [7:0]  cfg_interrupt_di,
    input  wire        cfg_interrupt_msienable,
    input  wire [2:0]  cfg_interrupt_mmenable,
    input  wire [2:0]  cfg_dev_control_max_payload,
    input  wire [2:0]  cfg_dev_control_max_read_req,
    input  wire [15:0] cfg_msg_data,
    input  wire        cfg_msg_received,
    // the shim's statistics (pcie_clk)
    output wire [15:0] stat_rx_dropped,
    output wire [15:0] stat_rx_malformed,
    output wire [15:0] stat_rx_discontinued,
    output wire [15:0] stat_msi_dropped,

    // configuration flash (core_clk) and the rebooting request
    output wire        flash_sck,
    output wire        flash_cs_n,
    output wire [3:0]  flash_io_o,
    output wire [3:0]  flash_io_oe,
    input  wire [3:0]  flash_io_i,
    input  wire [1:0]  boot_slot,
    input  wire        boot_fallback,
    output wire        reconfig_req
);

localparam KEEP_W = DATA_W / 32;
localparam CROSS = CLK_MHZ != 125;
localparam CORE_W = CROSS ? 2 * DATA_W : DATA_W;
localparam CORE_KEEP_W = CORE_W / 32;

// ---------------------------------------------------------------------------
// Resets: the one source through two flops in each clock
// ---------------------------------------------------------------------------

initial begin
    if (CLK_MHZ != 125 && CLK_MHZ != 62) begin
        $error("rnic_artix7_datapath: CLK_MHZ 62 (crossing) or 125 (direct), got %0d", CLK_MHZ);
        $finish;
    end
    if (DATA_W != 64 && DATA_W != 128) begin
        $error("rnic_artix7_datapath: DATA_W (the TRN width) must be 64 or 128, got %0d", DATA_W);
        $finish;
    end
end

// the core's clock: core_clk behind the crossing, else the user clock
wire c_clk = CROSS ? core_clk : pcie_clk;

reg [1:0] rst_sync = 2'b11;
always @(posedge pcie_clk) rst_sync <= {rst_sync[0], rst};
wire p_rst = rst_sync[1];
(* ASYNC_REG = "TRUE" *) reg [1:0] core_rst_sync = 2'b11;
always @(posedge c_clk) core_rst_sync <= {core_rst_sync[0], rst};
assign core_rst = CROSS ? core_rst_sync[1] : p_rst;

// ---------------------------------------------------------------------------
// Shim (pcie_clk, DATA_W)
// ---------------------------------------------------------------------------

wire [127:0]        rx_req_tlp_hdr;
wire [DATA_W-1:0]   rx_req_tlp_data;
wire [KEEP_W-1:0]   rx_req_tlp_keep;
wire                rx_req_tlp_valid;
wire                rx_req_tlp_last;
wire                rx_req_tlp_ready;
wire [127:0]        tx_cpl_tlp_hdr;
wire [DATA_W-1:0]   tx_cpl_tlp_data;
wire [KEEP_W-1:0]   tx_cpl_tlp_keep;
wire                tx_cpl_tlp_valid;
wire                tx_cpl_tlp_last;
wire                tx_cpl_tlp_ready;
wire [127:0]        tx_rd_req_tlp_hdr;
wire                tx_rd_req_tlp_valid;
wire                tx_rd_req_tlp_ready;
wire [127:0]        rx_cpl_tlp_hdr;
wire [DATA_W-1:0]   rx_cpl_tlp_data;
wire [KEEP_W-1:0]   rx_cpl_tlp_keep;
wire                rx_cpl_tlp_valid;
wire                rx_cpl_tlp_last;
wire                rx_cpl_tlp_ready;
wire [127:0]        tx_wr_req_tlp_hdr;
wire [DATA_W-1:0]   tx_wr_req_tlp_data;
wire [KEEP_W-1:0]   tx_wr_req_tlp_keep;
wire                tx_wr_req_tlp_valid;
wire                tx_wr_req_tlp_last;
wire                tx_wr_req_tlp_ready;
wire [4:0]          msi_vector;
wire                msi_valid;
wire                msi_ready;
wire [2:0]          cfg_max_payload;
wire [2:0]          cfg_max_read_req;
wire [15:0]         cfg_requester_id;

rnic_pcie7_shim #(
    .DATA_W(DATA_W)
) shim (
    .clk(pcie_clk),
    .rst(p_rst),
    .trn_rd(trn_rd),
    .trn_rrem(trn_rrem),
    .trn_rsof(trn_rsof),
    .trn_reof(trn_reof),
    .trn_rsrc_rdy(trn_rsrc_rdy),
    .trn_rdst_rdy(trn_rdst_rdy),
    .trn_rbar_hit(trn_rbar_hit),
    .trn_rerrfwd(trn_rerrfwd),
    .trn_rsrc_dsc(trn_rsrc_dsc),
    .trn_td(trn_td),
    .trn_trem(trn_trem),
    .trn_tsof(trn_tsof),
    .trn_teof(trn_teof),
    .trn_tsrc_rdy(trn_tsrc_rdy),
    .trn_tdst_rdy(trn_tdst_rdy),
    .trn_tbuf_av(trn_tbuf_av),
    .trn_tsrc_dsc(trn_tsrc_dsc),
    .trn_tstr(trn_tstr),
    .trn_terrfwd(trn_terrfwd),
    .trn_tecrc_gen(trn_tecrc_gen),
    .trn_tcfg_req(trn_tcfg_req),
    .trn_tcfg_gnt(trn_tcfg_gnt),
    .trn_lnk_up(trn_lnk_up),
    .cfg_interrupt(cfg_interrupt),
    .cfg_interrupt_rdy(cfg_interrupt_rdy),
    .cfg_interrupt_di(cfg_interrupt_di),
    .cfg_interrupt_msienable(cfg_interrupt_msienable),
    .cfg_interrupt_mmenable(cfg_interrupt_mmenable),
    .cfg_dev_control_max_payload(cfg_dev_control_max_payload),
    .cfg_dev_control_max_read_req(cfg_dev_control_max_read_req),
    .cfg_msg_data(cfg_msg_data),
    .cfg_msg_received(cfg_msg_received),
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
    .cfg_max_payload(cfg_max_payload),
    .cfg_max_read_req(cfg_max_read_req),
    .cfg_requester_id(cfg_requester_id),
    .stat_rx_dropped(stat_rx_dropped),
    .stat_rx_malformed(stat_rx_malformed),
    .stat_rx_discontinued(stat_rx_discontinued),
    .stat_msi_dropped(stat_msi_dropped)
);

// ---------------------------------------------------------------------------
// Clock crossing: pcie_clk at DATA_W <-> core_clk at CORE_W (CLK_MHZ 62);
// straight wires (CLK_MHZ 125)
// ---------------------------------------------------------------------------

wire [127:0]        c_rx_req_tlp_hdr;
wire [CORE_W-1:0]   c_rx_req_tlp_data;
wire [CORE_KEEP_W-1:0] c_rx_req_tlp_keep;
wire                c_rx_req_tlp_valid;
wire                c_rx_req_tlp_last;
wire                c_rx_req_tlp_ready;
wire [127:0]        c_tx_cpl_tlp_hdr;
wire [CORE_W-1:0]   c_tx_cpl_tlp_data;
wire [CORE_KEEP_W-1:0] c_tx_cpl_tlp_keep;
wire                c_tx_cpl_tlp_valid;
wire                c_tx_cpl_tlp_last;
wire                c_tx_cpl_tlp_ready;
wire [127:0]        c_rx_cpl_tlp_hdr;
wire [CORE_W-1:0]   c_rx_cpl_tlp_data;
wire [CORE_KEEP_W-1:0] c_rx_cpl_tlp_keep;
wire                c_rx_cpl_tlp_valid;
wire                c_rx_cpl_tlp_last;
wire                c_rx_cpl_tlp_ready;
wire [127:0]        c_tx_wr_req_tlp_hdr;
wire [CORE_W-1:0]   c_tx_wr_req_tlp_data;
wire [CORE_KEEP_W-1:0] c_tx_wr_req_tlp_keep;
wire                c_tx_wr_req_tlp_valid;
wire                c_tx_wr_req_tlp_last;
wire                c_tx_wr_req_tlp_ready;
wire [127:0]        c_tx_rd_req_tlp_hdr;
wire                c_tx_rd_req_tlp_valid;
wire                c_tx_rd_req_tlp_ready;
wire [4:0]          c_msi_vector;
wire                c_msi_valid;
wire                c_msi_ready;
wire [2:0]          c_cfg_max_payload;
wire [2:0]          c_cfg_max_read_req;
wire [15:0]         c_cfg_requester_id;

generate
    if (CROSS) begin : g_cross
        pcie_clock_crossing #(
            .PCIE_W(DATA_W),
            .CORE_W(CORE_W)
        ) crossing (
            .pcie_clk(pcie_clk),
            .pcie_rst(p_rst),
            .core_clk(core_clk),
            .core_rst(core_rst),
            .p_rx_req_tlp_hdr(rx_req_tlp_hdr),
            .p_rx_req_tlp_data(rx_req_tlp_data),
            .p_rx_req_tlp_keep(rx_req_tlp_keep),
            .p_rx_req_tlp_valid(rx_req_tlp_valid),
            .p_rx_req_tlp_last(rx_req_tlp_last),
            .p_rx_req_tlp_ready(rx_req_tlp_ready),
            .p_tx_cpl_tlp_hdr(tx_cpl_tlp_hdr),
            .p_tx_cpl_tlp_data(tx_cpl_tlp_data),
            .p_tx_cpl_tlp_keep(tx_cpl_tlp_keep),
            .p_tx_cpl_tlp_valid(tx_cpl_tlp_valid),
            .p_tx_cpl_tlp_last(tx_cpl_tlp_last),
            .p_tx_cpl_tlp_ready(tx_cpl_tlp_ready),
            .p_tx_rd_req_tlp_hdr(tx_rd_req_tlp_hdr),
            .p_tx_rd_req_tlp_valid(tx_rd_req_tlp_valid),
            .p_tx_rd_req_tlp_ready(tx_rd_req_tlp_ready),
            .p_rx_cpl_tlp_hdr(rx_cpl_tlp_hdr),
            .p_rx_cpl_tlp_data(rx_cpl_tlp_data),
            .p_rx_cpl_tlp_keep(rx_cpl_tlp_keep),
            .p_rx_cpl_tlp_valid(rx_cpl_tlp_valid),
            .p_rx_cpl_tlp_last(rx_cpl_tlp_last),
            .p_rx_cpl_tlp_ready(rx_cpl_tlp_ready),
            .p_tx_wr_req_tlp_hdr(tx_wr_req_tlp_hdr),
            .p_tx_wr_req_tlp_data(tx_wr_req_tlp_data),
            .p_tx_wr_req_tlp_keep(tx_wr_req_tlp_keep),
            .p_tx_wr_req_tlp_valid(tx_wr_req_tlp_valid),
            .p_tx_wr_req_tlp_last(tx_wr_req_tlp_last),
            .p_tx_wr_req_tlp_ready(tx_wr_req_tlp_ready),
            .p_msi_vector(msi_vector),
            .p_msi_valid(msi_valid),
            .p_msi_ready(msi_ready),
            .p_cfg_max_payload(cfg_max_payload),
            .p_cfg_max_read_req(cfg_max_read_req),
            .p_cfg_requester_id(cfg_requester_id),
            .c_rx_req_tlp_hdr(c_rx_req_tlp_hdr),
            .c_rx_req_tlp_data(c_rx_req_tlp_data),
            .c_rx_req_tlp_keep(c_rx_req_tlp_keep),
            .c_rx_req_tlp_valid(c_rx_req_tlp_valid),
            .c_rx_req_tlp_last(c_rx_req_tlp_last),
            .c_rx_req_tlp_ready(c_rx_req_tlp_ready),
            .c_tx_cpl_tlp_hdr(c_tx_cpl_tlp_hdr),
            .c_tx_cpl_tlp_data(c_tx_cpl_tlp_data),
            .c_tx_cpl_tlp_keep(c_tx_cpl_tlp_keep),
            .c_tx_cpl_tlp_valid(c_tx_cpl_tlp_valid),
            .c_tx_cpl_tlp_last(c_tx_cpl_tlp_last),
            .c_tx_cpl_tlp_ready(c_tx_cpl_tlp_ready),
            .c_tx_rd_req_tlp_hdr(c_tx_rd_req_tlp_hdr),
            .c_tx_rd_req_tlp_valid(c_tx_rd_req_tlp_valid),
            .c_tx_rd_req_tlp_ready(c_tx_rd_req_tlp_ready),
            .c_rx_cpl_tlp_hdr(c_rx_cpl_tlp_hdr),
            .c_rx_cpl_tlp_data(c_rx_cpl_tlp_data),
            .c_rx_cpl_tlp_keep(c_rx_cpl_tlp_keep),
            .c_rx_cpl_tlp_valid(c_rx_cpl_tlp_valid),
            .c_rx_cpl_tlp_last(c_rx_cpl_tlp_last),
            .c_rx_cpl_tlp_ready(c_rx_cpl_tlp_ready),
            .c_tx_wr_req_tlp_hdr(c_tx_wr_req_tlp_hdr),
            .c_tx_wr_req_tlp_data(c_tx_wr_req_tlp_data),
            .c_tx_wr_req_tlp_keep(c_tx_wr_req_tlp_keep),
            .c_tx_wr_req_tlp_valid(c_tx_wr_req_tlp_valid),
            .c_tx_wr_req_tlp_last(c_tx_wr_req_tlp_last),
            .c_tx_wr_req_tlp_ready(c_tx_wr_req_tlp_ready),
            .c_msi_vector(c_msi_vector),
            .c_msi_valid(c_msi_valid),
            .c_msi_ready(c_msi_ready),
            .c_cfg_max_payload(c_cfg_max_payload),
            .c_cfg_max_read_req(c_cfg_max_read_req),
            .c_cfg_requester_id(c_cfg_requester_id)
        );
    end else begin : g_direct
        assign c_rx_req_tlp_hdr = rx_req_tlp_hdr;
        assign c_rx_req_tlp_data = rx_req_tlp_data;
        assign c_rx_req_tlp_keep = rx_req_tlp_keep;
        assign c_rx_req_tlp_valid = rx_req_tlp_valid;
        assign c_rx_req_tlp_last = rx_req_tlp_last;
        assign rx_req_tlp_ready = c_rx_req_tlp_ready;
        assign tx_cpl_tlp_hdr = c_tx_cpl_tlp_hdr;
        assign tx_cpl_tlp_data = c_tx_cpl_tlp_data;
        assign tx_cpl_tlp_keep = c_tx_cpl_tlp_keep;
        assign tx_cpl_tlp_valid = c_tx_cpl_tlp_valid;
        assign tx_cpl_tlp_last = c_tx_cpl_tlp_last;
        assign c_tx_cpl_tlp_ready = tx_cpl_tlp_ready;
        assign tx_rd_req_tlp_hdr = c_tx_rd_req_tlp_hdr;
        assign tx_rd_req_tlp_valid = c_tx_rd_req_tlp_valid;
        assign c_tx_rd_req_tlp_ready = tx_rd_req_tlp_ready;
        assign c_rx_cpl_tlp_hdr = rx_cpl_tlp_hdr;
        assign c_rx_cpl_tlp_data = rx_cpl_tlp_data;
        assign c_rx_cpl_tlp_keep = rx_cpl_tlp_keep;
        assign c_rx_cpl_tlp_valid = rx_cpl_tlp_valid;
        assign c_rx_cpl_tlp_last = rx_cpl_tlp_last;
        assign rx_cpl_tlp_ready = c_rx_cpl_tlp_ready;
        assign tx_wr_req_tlp_hdr = c_tx_wr_req_tlp_hdr;
        assign tx_wr_req_tlp_data = c_tx_wr_req_tlp_data;
        assign tx_wr_req_tlp_keep = c_tx_wr_req_tlp_keep;
        assign tx_wr_req_tlp_valid = c_tx_wr_req_tlp_valid;
        assign tx_wr_req_tlp_last = c_tx_wr_req_tlp_last;
        assign c_tx_wr_req_tlp_ready = tx_wr_req_tlp_ready;
        assign msi_vector = c_msi_vector;
        assign msi_valid = c_msi_valid;
        assign c_msi_ready = msi_ready;
        assign c_cfg_max_payload = cfg_max_payload;
        assign c_cfg_max_read_req = cfg_max_read_req;
        assign c_cfg_requester_id = cfg_requester_id;
    end
endgenerate

// ---------------------------------------------------------------------------
// MAC loopback: one register stage between TX and RX in the core's clock (axis_register)
// ---------------------------------------------------------------------------

wire [CORE_W-1:0]   mac_tx_tdata;
wire [CORE_W/8-1:0] mac_tx_tkeep;
wire                mac_tx_tvalid;
wire                mac_tx_tlast;
wire                mac_tx_tuser;
wire                mac_tx_tready;
wire                mac_rx_tready;
wire [CORE_W-1:0]   lb_tdata;
wire [CORE_W/8-1:0] lb_tkeep;
wire                lb_tvalid;
wire                lb_tlast;
wire                lb_tuser;
axis_register #(
    .WIDTH(CORE_W + CORE_W/8 + 2)
) loopback_reg (
    .clk(c_clk),
    .rst(core_rst),
    .s_data({mac_tx_tdata, mac_tx_tkeep, mac_tx_tlast, mac_tx_tuser}),
    .s_valid(mac_tx_tvalid),
    .s_ready(mac_tx_tready),
    .m_data({lb_tdata, lb_tkeep, lb_tlast, lb_tuser}),
    .m_valid(lb_tvalid),
    .m_ready(mac_rx_tready)
);

// ---------------------------------------------------------------------------
// The core (c_clk, CORE_W)
// ---------------------------------------------------------------------------

rnic_core #(
    .DATA_W(CORE_W),
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
    .clk(c_clk),
    .rst(core_rst),
    .rx_req_tlp_hdr(c_rx_req_tlp_hdr),
    .rx_req_tlp_data(c_rx_req_tlp_data),
    .rx_req_tlp_keep(c_rx_req_tlp_keep),
    .rx_req_tlp_valid(c_rx_req_tlp_valid),
    .rx_req_tlp_last(c_rx_req_tlp_last),
    .rx_req_tlp_ready(c_rx_req_tlp_ready),
    .tx_cpl_tlp_hdr(c_tx_cpl_tlp_hdr),
    .tx_cpl_tlp_data(c_tx_cpl_tlp_data),
    .tx_cpl_tlp_keep(c_tx_cpl_tlp_keep),
    .tx_cpl_tlp_valid(c_tx_cpl_tlp_valid),
    .tx_cpl_tlp_last(c_tx_cpl_tlp_last),
    .tx_cpl_tlp_ready(c_tx_cpl_tlp_ready),
    .tx_rd_req_tlp_hdr(c_tx_rd_req_tlp_hdr),
    .tx_rd_req_tlp_valid(c_tx_rd_req_tlp_valid),
    .tx_rd_req_tlp_ready(c_tx_rd_req_tlp_ready),
    .rx_cpl_tlp_hdr(c_rx_cpl_tlp_hdr),
    .rx_cpl_tlp_data(c_rx_cpl_tlp_data),
    .rx_cpl_tlp_keep(c_rx_cpl_tlp_keep),
    .rx_cpl_tlp_valid(c_rx_cpl_tlp_valid),
    .rx_cpl_tlp_last(c_rx_cpl_tlp_last),
    .rx_cpl_tlp_ready(c_rx_cpl_tlp_ready),
    .tx_wr_req_tlp_hdr(c_tx_wr_req_tlp_hdr),
    .tx_wr_req_tlp_data(c_tx_wr_req_tlp_data),
    .tx_wr_req_tlp_keep(c_tx_wr_req_tlp_keep),
    .tx_wr_req_tlp_valid(c_tx_wr_req_tlp_valid),
    .tx_wr_req_tlp_last(c_tx_wr_req_tlp_last),
    .tx_wr_req_tlp_ready(c_tx_wr_req_tlp_ready),
    .msi_vector(c_msi_vector),
    .msi_valid(c_msi_valid),
    .msi_ready(c_msi_ready),
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
    .cfg_max_payload(c_cfg_max_payload),
    .cfg_max_read_req(c_cfg_max_read_req),
    .cfg_requester_id(c_cfg_requester_id),
    .flash_sck(flash_sck),
    .flash_cs_n(flash_cs_n),
    .flash_io_o(flash_io_o),
    .flash_io_oe(flash_io_oe),
    .flash_io_i(flash_io_i),
    .boot_slot(boot_slot),
    .boot_fallback(boot_fallback),
    .reconfig_req(reconfig_req)
);

endmodule

`resetall
