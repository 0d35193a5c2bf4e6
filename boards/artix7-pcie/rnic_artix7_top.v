// Artix-7 M.2 PCIe card top (LiteFury XC7A100T / NiteFury XC7A200T class):
// the 7-series integrated PCIe block PCIE_2_1 (endpoint, x4), its transmit
// and receive buffer RAMs, the reference clock buffer and the clocking for
// the block's user and PIPE clocks, the datapath behind the block's TRN
// interface (rnic_artix7_datapath: rnic_pcie7_shim, the clock crossing,
// rnic_core and a MAC-side loopback; the card has no Ethernet port:
// transmitted frames come back as received frames through one register
// stage; the core's own on-chip loopback block is reachable by CSR as on
// every target), and the configuration flash (quad SPI on the
// dedicated configuration pins; its clock through STARTUPE2).
//
// The PCIe PHY is rnic_gtp7_pipe: one GTPE2_COMMON and four GTPE2_CHANNEL
// in PCIe mode, Gen1 (2.5 GT/s) only, so the block advertises and targets
// 2.5 GT/s at both widths. DATA_W selects the TRN width: 64 bits (the
// natural Gen1 x4 setting: USERCLK = USERCLK2 = 125 MHz) or 128 bits
// (USERCLK 250 MHz, USERCLK2 125 MHz: the Gen2 x4 interface, kept for the
// day the PHY does Gen2; at Gen1 it runs the link at half its capacity and
// is not a combination PG054 lists, so treat DATA_W 128 as a resource
// figure only). The user clock (USERCLK2, the core's clock) is 125 MHz in
// both cases.
//
// CLK_MHZ is the core's clock. 62 (the default): the core runs at 62.5 MHz
// from the MMCM, at twice the TRN width, behind pcie_clock_crossing (TLP
// FIFOs between the clocks, streams widened and narrowed on the user-clock
// side), so it carries the link's full rate while its timing has to meet
// only half the PCIe block's clock (the core does not close at 125 MHz:
// hw/README.md). 125: the core runs on the user clock itself at the TRN
// width, as before the crossing existed. PCIE_2_1 parameters other than the
// ones set below are the primitive's defaults, not values checked against
// the vendor core generator; the buffer credit and RAM-size values are
// unverified. Nothing here has run on a card (README.md).

`resetall
`timescale 1ns / 1ps
`default_nettype none

module rnic_artix7_top #(
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
    parameter CLK_MHZ = 62,          // the core's clock: 62 (62.5 MHz, crossing) or 125 (user clock)
    parameter [31:0] BUILD_VERSION = 32'h0001_0000,
    parameter [31:0] GIT_HASH = 32'h0,
    parameter [31:0] BOARD_ID = 32'h0,
    parameter MIM_AW = 11            // entries (of 8 bytes) of each block buffer RAM: 2^MIM_AW
) (
    input  wire       pcie_refclk_p,   // 100 MHz M.2 reference clock (MGTREFCLK0 of the GTP quad)
    input  wire       pcie_refclk_n,
    input  wire       pcie_perst_n,    // PERST# from the host
    output wire       pcie_clkreq_n,   // CLKREQ#: held low (reference clock wanted)
    input  wire [3:0] pcie_rx_p,       // PCIe lanes 0..3 (GTP channels, see the XDC)
    input  wire [3:0] pcie_rx_n,
    output wire [3:0] pcie_tx_p,
    output wire [3:0] pcie_tx_n,
    output wire       flash_cs_n,      // configuration flash (FCS_B)
    inout  wire [3:0] flash_dq,        // configuration flash D00..D03
    output wire [3:0] led_n            // user LEDs: 0 link up, 1 MSI enabled, 2 core out of reset, 3 heartbeat (core clock)
);

localparam GEN2 = DATA_W == 128;
// the core on its own clock (62.5 MHz) at twice the TRN width, or on the
// user clock at the TRN width
localparam CROSS = CLK_MHZ != 125;

initial begin
    if (DATA_W != 64 && DATA_W != 128) begin
        $error("rnic_artix7_top: DATA_W must be 64 or 128 (TRN width; the link is Gen1 x4 either way), got %0d", DATA_W);
        $finish;
    end
    if (CLK_MHZ != 125 && CLK_MHZ != 62) begin
        $error("rnic_artix7_top: CLK_MHZ is the core's clock: 62 (62.5 MHz behind the clock crossing) or 125 (the PCIe user clock), got %0d", CLK_MHZ);
        $finish;
    end
    if (MIM_AW < 9 || MIM_AW > 13) begin
        $error("rnic_artix7_top: MIM_AW must be 9..13");
        $finish;
    end
end

// ---------------------------------------------------------------------------
// Clocks: reference clock buffer (its O feeds the GTP quad PLL and, through
// a BUFG, an MMCM for 125, 250 and 62.5 MHz); PIPE clock 125 MHz (Gen1
// only); the core's clock 62.5 MHz (CLK_MHZ 62) or the user clock.
// ---------------------------------------------------------------------------

wire refclk_gt;
wire refclk_div2_unused;
IBUFDS_GTE2 refclk_ibuf (
    .I(pcie_refclk_p),
    .IB(pcie_refclk_n),
    .CEB(1'b0),
    .O(refclk_gt),
    .ODIV2(refclk_div2_unused)
);

wire refclk_bufg;
BUFG refclk_bufg_i (.I(refclk_gt), .O(refclk_bufg));

wire mmcm_fb;
wire mmcm_125;
wire mmcm_250;
wire mmcm_62;
wire mmcm_locked;
MMCME2_BASE #(
    .CLKIN1_PERIOD(10.0),
    .DIVCLK_DIVIDE(1),
    .CLKFBOUT_MULT_F(10.0),          // VCO 1000 MHz
    .CLKOUT0_DIVIDE_F(8.0),          // 125 MHz
    .CLKOUT1_DIVIDE(4),              // 250 MHz
    .CLKOUT2_DIVIDE(16)              // 62.5 MHz: the core (CLK_MHZ 62)
) mmcm (
    .CLKIN1(refclk_bufg),
    .CLKFBIN(mmcm_fb),
    .CLKFBOUT(mmcm_fb),
    .CLKOUT0(mmcm_125),
    .CLKOUT1(mmcm_250),
    .CLKOUT2(mmcm_62),
    .LOCKED(mmcm_locked),
    .PWRDWN(1'b0),
    .RST(1'b0)
);

wire clk125;
wire clk250;
BUFG clk125_bufg (.I(mmcm_125), .O(clk125));
BUFG clk250_bufg (.I(mmcm_250), .O(clk250));
wire clk62;
BUFG clk62_bufg (.I(mmcm_62), .O(clk62));

// PIPE clock: 125 MHz (Gen1: 2 bytes per lane per cycle at 2.5 Gb/s). It is
// also the GTP channels' TXUSRCLK/RXUSRCLK(2); the MMCM runs off the same
// reference as the quad PLL, so it is frequency-locked to the line rate.
wire pipe_tx_rate;
wire pipe_clk = clk125;

// USERCLK: 250 MHz with the 128-bit TRN (USERCLK2 = USERCLK / 2), 125 MHz
// with 64 bits. USERCLK2 = 125 MHz = the core's clock.
wire user_clk1 = GEN2 ? clk250 : clk125;
wire clk = clk125;
// the core's clock
wire core_clk = CROSS ? clk62 : clk125;

// ---------------------------------------------------------------------------
// Resets
// ---------------------------------------------------------------------------

reg [2:0] perst_sync = 3'b000;
always @(posedge clk125) perst_sync <= {perst_sync[1:0], pcie_perst_n};
wire sys_rst_n = perst_sync[2] && mmcm_locked;

// the datapath's reset source: the block's user reset (USERRSTN) or the
// MMCM out of lock, synchronised into each clock in rnic_artix7_datapath
wire user_rst_n;

// ---------------------------------------------------------------------------
// PCIE_2_1 and its buffer RAMs
// ---------------------------------------------------------------------------

wire [127:0] trn_rd_full;
wire [1:0]   trn_rrem;
wire         trn_rsof;
wire         trn_reof;
wire         trn_rsrc_rdy;
wire         trn_rdst_rdy;
wire [7:0]   trn_rbar_hit;
wire         trn_rerrfwd;
wire         trn_rsrc_dsc;
wire         trn_recrc_err;
wire [DATA_W-1:0] trn_td;
wire [1:0]   trn_trem;
wire         trn_tsof;
wire         trn_teof;
wire         trn_tsrc_rdy;
wire [3:0]   trn_tdst_rdy_bus;
wire [5:0]   trn_tbuf_av;
wire         trn_tsrc_dsc;
wire         trn_tstr;
wire         trn_terrfwd;
wire         trn_tecrc_gen;
wire         trn_tcfg_req;
wire         trn_tcfg_gnt;
wire         trn_lnk_up;
wire         trn_terr_drop;

wire         cfg_interrupt;
wire         cfg_interrupt_rdy_n;
wire [7:0]   cfg_interrupt_di;
wire [7:0]   cfg_interrupt_do;
wire         cfg_interrupt_msienable;
wire [2:0]   cfg_interrupt_mmenable;
wire [2:0]   cfg_dev_control_max_payload;
wire [2:0]   cfg_dev_control_max_read_req;
wire [15:0]  cfg_msg_data;
wire         cfg_msg_received;

wire         mim_tx_wen;
wire [12:0]  mim_tx_waddr;
wire [68:0]  mim_tx_wdata;
wire         mim_tx_ren;
wire [12:0]  mim_tx_raddr;
reg  [68:0]  mim_tx_q1 = 69'd0;
reg  [68:0]  mim_tx_q2 = 69'd0;
wire         mim_rx_wen;
wire [12:0]  mim_rx_waddr;
wire [67:0]  mim_rx_wdata;
wire         mim_rx_ren;
wire [12:0]  mim_rx_raddr;
reg  [67:0]  mim_rx_q1 = 68'd0;
reg  [67:0]  mim_rx_q2 = 68'd0;

wire [5:0]   pl_ltssm_state;
wire         pl_phy_lnk_up_n;

// Transmit (retry) and receive buffers of the block: simple dual-port RAMs,
// two-cycle read latency (TL_*_RAM_RDATA_LATENCY = 2), in block RAM.
reg [68:0] mim_tx_mem [0:(1<<MIM_AW)-1];
reg [67:0] mim_rx_mem [0:(1<<MIM_AW)-1];
always @(posedge user_clk1) begin
    if (mim_tx_wen) mim_tx_mem[mim_tx_waddr[MIM_AW-1:0]] <= mim_tx_wdata;
    if (mim_tx_ren) mim_tx_q1 <= mim_tx_mem[mim_tx_raddr[MIM_AW-1:0]];
    mim_tx_q2 <= mim_tx_q1;
    if (mim_rx_wen) mim_rx_mem[mim_rx_waddr[MIM_AW-1:0]] <= mim_rx_wdata;
    if (mim_rx_ren) mim_rx_q1 <= mim_rx_mem[mim_rx_raddr[MIM_AW-1:0]];
    mim_rx_q2 <= mim_rx_q1;
end

// PIPE of lanes 0..3 between the block and the GTP PHY (lane n in the
// bits of lane n), and the idle inputs of the unused lanes 4..7
wire [63:0] pipe_tx_data;
wire [7:0]  pipe_tx_charisk;
wire [3:0]  pipe_tx_elecidle;
wire [3:0]  pipe_tx_compliance;
wire [7:0]  pipe_tx_powerdown;
wire        pipe_tx_rcvrdet;
wire        pipe_tx_deemph;
wire [2:0]  pipe_tx_margin;
wire        pipe_tx_reset;
wire [3:0]  pipe_rx_polarity;
wire [63:0] pipe_rx_data;
wire [7:0]  pipe_rx_charisk;
wire [3:0]  pipe_rx_valid;
wire [11:0] pipe_rx_status;
wire [3:0]  pipe_rx_phystatus;
wire [3:0]  pipe_rx_elecidle;
wire [3:0]  pipe_rx_chanisaligned;
wire [1:0]  pipe_idle_charisk = 2'b00;
wire [15:0] pipe_idle_data = 16'd0;
wire [2:0]  pipe_idle_status = 3'd0;

PCIE_2_1 #(
    .PCIE_CAP_DEVICE_PORT_TYPE(4'h0),        // endpoint
    .UPSTREAM_FACING("TRUE"),
    .LINK_CAP_MAX_LINK_WIDTH(6'h04),
    .LINK_CAP_MAX_LINK_SPEED(4'h1),           // 2.5 GT/s: the GTP PHY is Gen1 only
    .LINK_CTRL2_TARGET_LINK_SPEED(4'h1),
    .USER_CLK_FREQ(GEN2 ? 3 : 2),            // USERCLK 250 / 125 MHz
    .USER_CLK2_DIV2(GEN2 ? "TRUE" : "FALSE"),// USERCLK2 125 MHz either way
    .TRN_DW(GEN2 ? "TRUE" : "FALSE"),        // 128-bit TRN (unverified reading of TRN_DW)
    .BAR0(32'hFFFF0000),                     // 64 KiB, 32-bit, non-prefetchable memory
    .BAR1(32'h00000000),
    .BAR2(32'h00000000),
    .BAR3(32'h00000000),
    .BAR4(32'h00000000),
    .BAR5(32'h00000000),
    .EXPANSION_ROM(32'h00000000),
    .CLASS_CODE(24'h020000),                 // network controller
    .INTERRUPT_PIN(8'h00),                   // no INTx
    .CMD_INTX_IMPLEMENTED("FALSE"),
    .MSI_CAP_ON("TRUE"),
    .MSI_CAP_MULTIMSGCAP(5),                 // up to 32 vectors
    .MSI_CAP_64_BIT_ADDR_CAPABLE("TRUE"),
    .MSI_CAP_PER_VECTOR_MASKING_CAPABLE("FALSE"),
    .MSIX_CAP_ON("FALSE"),
    .DEV_CAP_MAX_PAYLOAD_SUPPORTED(1),       // 256 bytes
    .DEV_CAP_EXT_TAG_SUPPORTED("FALSE"),
    .VC0_RX_RAM_LIMIT((13'd1 << MIM_AW) - 13'd1),  // unverified
    .VC0_TX_LASTPACKET(28),                        // unverified
    .TL_TX_RAM_RDATA_LATENCY(2),
    .TL_RX_RAM_RDATA_LATENCY(2)
) pcie_block (
    // clocks and resets
    .PIPECLK(pipe_clk),
    .USERCLK(user_clk1),
    .USERCLK2(clk),
    .DRPCLK(clk125),
    .SYSRSTN(sys_rst_n),
    .CMRSTN(1'b1),
    .CMSTICKYRSTN(1'b1),
    .DLRSTN(1'b1),
    .TLRSTN(1'b1),
    .PLRSTN(1'b1),
    .FUNCLVLRSTN(1'b1),
    .PLTRANSMITHOTRST(1'b0),
    .USERRSTN(user_rst_n),
    // TRN receive
    .TRNRD(trn_rd_full),
    .TRNRREM(trn_rrem),
    .TRNRSOF(trn_rsof),
    .TRNREOF(trn_reof),
    .TRNRSRCRDY(trn_rsrc_rdy),
    .TRNRDSTRDY(trn_rdst_rdy),
    .TRNRBARHIT(trn_rbar_hit),
    .TRNRERRFWD(trn_rerrfwd),
    .TRNRSRCDSC(trn_rsrc_dsc),
    .TRNRECRCERR(trn_recrc_err),
    .TRNRNPOK(1'b1),
    .TRNRNPREQ(1'b1),
    .TRNRFCPRET(1'b1),
    // TRN transmit
    .TRNTD({{(128-DATA_W){1'b0}}, trn_td}),
    .TRNTREM(trn_trem),
    .TRNTSOF(trn_tsof),
    .TRNTEOF(trn_teof),
    .TRNTSRCRDY(trn_tsrc_rdy),
    .TRNTDSTRDY(trn_tdst_rdy_bus),
    .TRNTBUFAV(trn_tbuf_av),
    .TRNTSRCDSC(trn_tsrc_dsc),
    .TRNTSTR(trn_tstr),
    .TRNTERRFWD(trn_terrfwd),
    .TRNTECRCGEN(trn_tecrc_gen),
    .TRNTCFGREQ(trn_tcfg_req),
    .TRNTCFGGNT(trn_tcfg_gnt),
    .TRNTERRDROP(trn_terr_drop),
    .TRNLNKUP(trn_lnk_up),
    .TRNFCSEL(3'd0),
    .TRNTDLLPDATA(32'd0),
    .TRNTDLLPSRCRDY(1'b0),
    // configuration
    .CFGVENDID(16'h10EE),                    // placeholder IDs
    .CFGDEVID(16'h7024),
    .CFGREVID(8'h00),
    .CFGSUBSYSVENDID(16'h10EE),
    .CFGSUBSYSID(16'h0007),
    .CFGDSN({GIT_HASH, BOARD_ID}),
    .CFGINTERRUPTN(!cfg_interrupt),
    .CFGINTERRUPTRDYN(cfg_interrupt_rdy_n),
    .CFGINTERRUPTDI(cfg_interrupt_di),
    .CFGINTERRUPTDO(cfg_interrupt_do),
    .CFGINTERRUPTMSIENABLE(cfg_interrupt_msienable),
    .CFGINTERRUPTMMENABLE(cfg_interrupt_mmenable),
    .CFGINTERRUPTASSERTN(1'b1),
    .CFGINTERRUPTSTATN(1'b1),
    .CFGPCIECAPINTERRUPTMSGNUM(5'd0),
    .CFGAERINTERRUPTMSGNUM(5'd0),
    .CFGDEVCONTROLMAXPAYLOAD(cfg_dev_control_max_payload),
    .CFGDEVCONTROLMAXREADREQ(cfg_dev_control_max_read_req),
    .CFGMSGDATA(cfg_msg_data),
    .CFGMSGRECEIVED(cfg_msg_received),
    .CFGTRNPENDINGN(1'b1),
    .CFGPMWAKEN(1'b1),
    .CFGPMTURNOFFOKN(1'b1),                  // PME_Turn_Off not acknowledged (README)
    .CFGPMHALTASPML0SN(1'b1),
    .CFGPMHALTASPML1N(1'b1),
    .CFGPMFORCESTATEENN(1'b1),
    .CFGPMFORCESTATE(2'd0),
    .CFGPMSENDPMETON(1'b1),
    .CFGFORCEMPS(3'd0),
    .CFGFORCECOMMONCLOCKOFF(1'b0),
    .CFGFORCEEXTENDEDSYNCON(1'b0),
    .CFGDSBUSNUMBER(8'd0),
    .CFGDSDEVICENUMBER(5'd0),
    .CFGDSFUNCTIONNUMBER(3'd0),
    .CFGPORTNUMBER(8'd0),
    .CFGERRACSN(1'b1),
    .CFGERRATOMICEGRESSBLOCKEDN(1'b1),
    .CFGERRCORN(1'b1),
    .CFGERRCPLABORTN(1'b1),
    .CFGERRCPLTIMEOUTN(1'b1),
    .CFGERRCPLUNEXPECTN(1'b1),
    .CFGERRECRCN(1'b1),
    .CFGERRINTERNALCORN(1'b1),
    .CFGERRINTERNALUNCORN(1'b1),
    .CFGERRLOCKEDN(1'b1),
    .CFGERRMALFORMEDN(1'b1),
    .CFGERRMCBLOCKEDN(1'b1),
    .CFGERRNORECOVERYN(1'b1),
    .CFGERRPOISONEDN(1'b1),
    .CFGERRPOSTEDN(1'b1),
    .CFGERRURN(1'b1),
    .CFGERRAERHEADERLOG(128'd0),
    .CFGERRTLPCPLHEADER(48'd0),
    .CFGMGMTDI(32'd0),
    .CFGMGMTBYTEENN(4'hf),
    .CFGMGMTDWADDR(10'd0),
    .CFGMGMTRDENN(1'b1),
    .CFGMGMTWRENN(1'b1),
    .CFGMGMTWRREADONLYN(1'b1),
    .CFGMGMTWRRW1CASRWN(1'b1),
    // physical layer control
    .PLDIRECTEDLINKAUTON(1'b0),
    .PLDIRECTEDLINKCHANGE(2'd0),
    .PLDIRECTEDLINKSPEED(1'b0),
    .PLDIRECTEDLINKWIDTH(2'd0),
    .PLDIRECTEDLTSSMNEW(6'd0),
    .PLDIRECTEDLTSSMNEWVLD(1'b0),
    .PLDIRECTEDLTSSMSTALL(1'b0),
    .PLUPSTREAMPREFERDEEMPH(1'b1),
    .PLDOWNSTREAMDEEMPHSOURCE(1'b0),
    .PLLTSSMSTATE(pl_ltssm_state),
    .PLPHYLNKUPN(pl_phy_lnk_up_n),
    .PL2DIRECTEDLSTATE(5'd0),
    .LL2SENDASREQL1(1'b0),
    .LL2SENDENTERL1(1'b0),
    .LL2SENDENTERL23(1'b0),
    .LL2SENDPMACK(1'b0),
    .LL2SUSPENDNOW(1'b0),
    .LL2TLPRCV(1'b0),
    .TL2ASPMSUSPENDCREDITCHECK(1'b0),
    .TL2PPMSUSPENDREQ(1'b0),
    .DRPEN(1'b0),
    .DRPWE(1'b0),
    .DRPADDR(9'd0),
    .DRPDI(16'd0),
    .DBGMODE(2'd0),
    .DBGSUBMODE(1'b0),
    .PLDBGMODE(3'd0),
    // buffer RAMs
    .MIMTXWEN(mim_tx_wen),
    .MIMTXWADDR(mim_tx_waddr),
    .MIMTXWDATA(mim_tx_wdata),
    .MIMTXREN(mim_tx_ren),
    .MIMTXRADDR(mim_tx_raddr),
    .MIMTXRDATA(mim_tx_q2),
    .MIMRXWEN(mim_rx_wen),
    .MIMRXWADDR(mim_rx_waddr),
    .MIMRXWDATA(mim_rx_wdata),
    .MIMRXREN(mim_rx_ren),
    .MIMRXRADDR(mim_rx_raddr),
    .MIMRXRDATA(mim_rx_q2),
    // PIPE: lanes 0..3 to the GTP PHY, lanes 4..7 idle
    .PIPETXRATE(pipe_tx_rate),
    .PIPETXRCVRDET(pipe_tx_rcvrdet),
    .PIPETXDEEMPH(pipe_tx_deemph),
    .PIPETXMARGIN(pipe_tx_margin),
    .PIPETXRESET(pipe_tx_reset),
    .PIPETX0DATA(pipe_tx_data[15:0]), .PIPETX0CHARISK(pipe_tx_charisk[1:0]),
    .PIPETX0ELECIDLE(pipe_tx_elecidle[0]), .PIPETX0COMPLIANCE(pipe_tx_compliance[0]),
    .PIPETX0POWERDOWN(pipe_tx_powerdown[1:0]), .PIPERX0POLARITY(pipe_rx_polarity[0]),
    .PIPERX0CHARISK(pipe_rx_charisk[1:0]), .PIPERX0DATA(pipe_rx_data[15:0]), .PIPERX0VALID(pipe_rx_valid[0]),
    .PIPERX0CHANISALIGNED(pipe_rx_chanisaligned[0]), .PIPERX0STATUS(pipe_rx_status[2:0]),
    .PIPERX0PHYSTATUS(pipe_rx_phystatus[0]), .PIPERX0ELECIDLE(pipe_rx_elecidle[0]),
    .PIPETX1DATA(pipe_tx_data[31:16]), .PIPETX1CHARISK(pipe_tx_charisk[3:2]),
    .PIPETX1ELECIDLE(pipe_tx_elecidle[1]), .PIPETX1COMPLIANCE(pipe_tx_compliance[1]),
    .PIPETX1POWERDOWN(pipe_tx_powerdown[3:2]), .PIPERX1POLARITY(pipe_rx_polarity[1]),
    .PIPERX1CHARISK(pipe_rx_charisk[3:2]), .PIPERX1DATA(pipe_rx_data[31:16]), .PIPERX1VALID(pipe_rx_valid[1]),
    .PIPERX1CHANISALIGNED(pipe_rx_chanisaligned[1]), .PIPERX1STATUS(pipe_rx_status[5:3]),
    .PIPERX1PHYSTATUS(pipe_rx_phystatus[1]), .PIPERX1ELECIDLE(pipe_rx_elecidle[1]),
    .PIPETX2DATA(pipe_tx_data[47:32]), .PIPETX2CHARISK(pipe_tx_charisk[5:4]),
    .PIPETX2ELECIDLE(pipe_tx_elecidle[2]), .PIPETX2COMPLIANCE(pipe_tx_compliance[2]),
    .PIPETX2POWERDOWN(pipe_tx_powerdown[5:4]), .PIPERX2POLARITY(pipe_rx_polarity[2]),
    .PIPERX2CHARISK(pipe_rx_charisk[5:4]), .PIPERX2DATA(pipe_rx_data[47:32]), .PIPERX2VALID(pipe_rx_valid[2]),
    .PIPERX2CHANISALIGNED(pipe_rx_chanisaligned[2]), .PIPERX2STATUS(pipe_rx_status[8:6]),
    .PIPERX2PHYSTATUS(pipe_rx_phystatus[2]), .PIPERX2ELECIDLE(pipe_rx_elecidle[2]),
    .PIPETX3DATA(pipe_tx_data[63:48]), .PIPETX3CHARISK(pipe_tx_charisk[7:6]),
    .PIPETX3ELECIDLE(pipe_tx_elecidle[3]), .PIPETX3COMPLIANCE(pipe_tx_compliance[3]),
    .PIPETX3POWERDOWN(pipe_tx_powerdown[7:6]), .PIPERX3POLARITY(pipe_rx_polarity[3]),
    .PIPERX3CHARISK(pipe_rx_charisk[7:6]), .PIPERX3DATA(pipe_rx_data[63:48]), .PIPERX3VALID(pipe_rx_valid[3]),
    .PIPERX3CHANISALIGNED(pipe_rx_chanisaligned[3]), .PIPERX3STATUS(pipe_rx_status[11:9]),
    .PIPERX3PHYSTATUS(pipe_rx_phystatus[3]), .PIPERX3ELECIDLE(pipe_rx_elecidle[3]),
    .PIPERX4CHARISK(pipe_idle_charisk), .PIPERX4DATA(pipe_idle_data), .PIPERX4VALID(1'b0),
    .PIPERX4CHANISALIGNED(1'b0), .PIPERX4STATUS(pipe_idle_status), .PIPERX4PHYSTATUS(1'b0), .PIPERX4ELECIDLE(1'b1),
    .PIPERX5CHARISK(pipe_idle_charisk), .PIPERX5DATA(pipe_idle_data), .PIPERX5VALID(1'b0),
    .PIPERX5CHANISALIGNED(1'b0), .PIPERX5STATUS(pipe_idle_status), .PIPERX5PHYSTATUS(1'b0), .PIPERX5ELECIDLE(1'b1),
    .PIPERX6CHARISK(pipe_idle_charisk), .PIPERX6DATA(pipe_idle_data), .PIPERX6VALID(1'b0),
    .PIPERX6CHANISALIGNED(1'b0), .PIPERX6STATUS(pipe_idle_status), .PIPERX6PHYSTATUS(1'b0), .PIPERX6ELECIDLE(1'b1),
    .PIPERX7CHARISK(pipe_idle_charisk), .PIPERX7DATA(pipe_idle_data), .PIPERX7VALID(1'b0),
    .PIPERX7CHANISALIGNED(1'b0), .PIPERX7STATUS(pipe_idle_status), .PIPERX7PHYSTATUS(1'b0), .PIPERX7ELECIDLE(1'b1)
);

// ---------------------------------------------------------------------------
// GTP PHY (Gen1 x4)
// ---------------------------------------------------------------------------

wire       phy_ready;
wire       phy_pll_lock;
wire [2:0] phy_reset_state;
wire [7:0] phy_reset_restarts;
wire       phy_rate_error;

rnic_gtp7_pipe #(
    .LANES(4)
) phy (
    .clk(pipe_clk),
    .rst(!sys_rst_n),
    .gt_refclk(refclk_gt),
    .rxp(pcie_rx_p),
    .rxn(pcie_rx_n),
    .txp(pcie_tx_p),
    .txn(pcie_tx_n),
    .pipe_tx_data(pipe_tx_data),
    .pipe_tx_charisk(pipe_tx_charisk),
    .pipe_tx_elecidle(pipe_tx_elecidle),
    .pipe_tx_compliance(pipe_tx_compliance),
    .pipe_tx_powerdown(pipe_tx_powerdown),
    .pipe_tx_rcvrdet(pipe_tx_rcvrdet),
    .pipe_tx_deemph(pipe_tx_deemph),
    .pipe_tx_margin(pipe_tx_margin),
    .pipe_tx_rate(pipe_tx_rate),
    .pipe_rx_polarity(pipe_rx_polarity),
    .pipe_rx_data(pipe_rx_data),
    .pipe_rx_charisk(pipe_rx_charisk),
    .pipe_rx_valid(pipe_rx_valid),
    .pipe_rx_status(pipe_rx_status),
    .pipe_rx_phystatus(pipe_rx_phystatus),
    .pipe_rx_elecidle(pipe_rx_elecidle),
    .pipe_rx_chanisaligned(pipe_rx_chanisaligned),
    .phy_ready(phy_ready),
    .pll_lock(phy_pll_lock),
    .reset_state(phy_reset_state),
    .reset_restarts(phy_reset_restarts),
    .rate_error(phy_rate_error)
);

assign pcie_clkreq_n = 1'b0;

// configuration flash: data pins tristated here, clock through STARTUPE2
wire       flash_sck;
wire [3:0] flash_io_o;
wire [3:0] flash_io_oe;
wire [3:0] flash_io_i;
wire       reconfig_req;
genvar fi;
generate
    for (fi = 0; fi < 4; fi = fi + 1) begin : g_flash_io
        assign flash_dq[fi] = flash_io_oe[fi] ? flash_io_o[fi] : 1'bz;
    end
endgenerate
assign flash_io_i = flash_dq;

wire startup_cfgclk;
wire startup_cfgmclk;
wire startup_eos;
wire startup_preq;
STARTUPE2 startup (
    .CLK(1'b0),
    .GSR(1'b0),
    .GTS(1'b0),
    .KEYCLEARB(1'b1),
    .PACK(1'b0),
    .USRCCLKO(flash_sck),
    .USRCCLKTS(1'b0),
    .USRDONEO(1'b1),
    .USRDONETS(1'b1),
    .CFGCLK(startup_cfgclk),
    .CFGMCLK(startup_cfgmclk),
    .EOS(startup_eos),
    .PREQ(startup_preq)
);

// ---------------------------------------------------------------------------
// The datapath: shim -> crossing (or wires) -> core, MAC looped back
// ---------------------------------------------------------------------------

wire [15:0] stat_rx_dropped;
wire [15:0] stat_rx_malformed;
wire [15:0] stat_rx_discontinued;
wire [15:0] stat_msi_dropped;
wire        core_rst;

rnic_artix7_datapath #(
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
) dp (
    .pcie_clk(clk),
    .core_clk(core_clk),
    .rst(!user_rst_n || !mmcm_locked),
    .core_rst(core_rst),
    .trn_rd(trn_rd_full[DATA_W-1:0]),
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
    .trn_tdst_rdy(trn_tdst_rdy_bus[0]),
    .trn_tbuf_av(trn_tbuf_av),
    .trn_tsrc_dsc(trn_tsrc_dsc),
    .trn_tstr(trn_tstr),
    .trn_terrfwd(trn_terrfwd),
    .trn_tecrc_gen(trn_tecrc_gen),
    .trn_tcfg_req(trn_tcfg_req),
    .trn_tcfg_gnt(trn_tcfg_gnt),
    .trn_lnk_up(trn_lnk_up),
    .cfg_interrupt(cfg_interrupt),
    .cfg_interrupt_rdy(!cfg_interrupt_rdy_n),
    .cfg_interrupt_di(cfg_interrupt_di),
    .cfg_interrupt_msienable(cfg_interrupt_msienable),
    .cfg_interrupt_mmenable(cfg_interrupt_mmenable),
    .cfg_dev_control_max_payload(cfg_dev_control_max_payload),
    .cfg_dev_control_max_read_req(cfg_dev_control_max_read_req),
    .cfg_msg_data(cfg_msg_data),
    .cfg_msg_received(cfg_msg_received),
    .stat_rx_dropped(stat_rx_dropped),
    .stat_rx_malformed(stat_rx_malformed),
    .stat_rx_discontinued(stat_rx_discontinued),
    .stat_msi_dropped(stat_msi_dropped),
    .flash_sck(flash_sck),
    .flash_cs_n(flash_cs_n),
    .flash_io_o(flash_io_o),
    .flash_io_oe(flash_io_oe),
    .flash_io_i(flash_io_i),
    .boot_slot(2'd0),                // which image booted: not read back yet (README)
    .boot_fallback(1'b0),
    .reconfig_req(reconfig_req)
);

// LEDs (active low, as assumed from the card's pull-ups)
reg [25:0] heartbeat = 26'd0;
always @(posedge core_clk) heartbeat <= heartbeat + 26'd1;
assign led_n = ~{heartbeat[25], !core_rst, cfg_interrupt_msienable, trn_lnk_up};

// Outputs not used yet: status for a future debug register, the rebooting
// request (needs an ICAPE2 IPROG sequence), the block's debug signals.
/* verilator lint_off UNUSEDSIGNAL */
wire [127:0] unused_trn_rd_hi = trn_rd_full;
wire [3:0] unused_tdst = trn_tdst_rdy_bus;
wire [51:0] unused_mim_addr = {mim_tx_waddr, mim_tx_raddr, mim_rx_waddr, mim_rx_raddr};  // above MIM_AW
wire unused_phy = ^{phy_ready, phy_pll_lock, phy_reset_state, phy_reset_restarts, phy_rate_error,
                    pipe_tx_reset};  // status for a future debug register; PIPETXRESET: the PHY resets on PERST#
wire unused_misc = ^{trn_recrc_err, trn_terr_drop, cfg_interrupt_do, pl_ltssm_state, pl_phy_lnk_up_n,
                     stat_rx_dropped, stat_rx_malformed, stat_rx_discontinued, stat_msi_dropped,
                     reconfig_req, startup_cfgclk, startup_cfgmclk, startup_eos, startup_preq,
                     refclk_div2_unused};
/* verilator lint_on UNUSEDSIGNAL */

endmodule

`resetall
