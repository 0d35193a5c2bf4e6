// One PCIe lane of the GTP PHY (rnic_gtp7_pipe): a GTPE2_CHANNEL in PCIe
// mode at 2.5 Gb/s (Gen1) with a 2-byte fabric interface and 8b/10b, and the
// mapping between its status and the PIPE signals of PCIE_2_1.
//
// All four user clocks are the PIPE clock (125 MHz): 2.5 Gb/s / 20 bits per
// TXUSRCLK cycle = 125 MHz, and with a 2-byte interface TXUSRCLK2 = TXUSRCLK
// (UG482, "Interface Width Configuration"). The TX buffer is used
// (TXBUF_EN, TX_XCLK_SEL = TXOUT), so the PIPE clock only has to be
// frequency-locked to the quad PLL, which it is: both come from the same
// 100 MHz reference. The RX elastic buffer with PCIe clock correction
// (one SKP symbol, K28.0) absorbs the link partner's clock offset.
//
// In PCIe mode (PCS_PCIE_EN) the GTP itself implements the PIPE-style
// controls: TXDETECTRX + TXPD (receiver detection answered by PHYSTATUS with
// RXSTATUS 3 = detected / 0 = not), TXELECIDLE, TXPD/RXPD power states with
// a PHYSTATUS pulse, RXSTATUS codes (1 SKP added, 2 SKP removed, 4 decode
// error, 5/6 buffer over/underflow, 7 disparity error) and RXVALID /
// RXELECIDLE (UG482, "PCI Express Mode" sections of the TX and RX chapters).
// This module adds what PIPE asks of a PHY around it:
//   - PHYSTATUS held high while the PHY is in reset (phy_ready low), so the
//     block sees it fall at the end of reset (PIPE: PhyStatus deasserts once
//     PCLK is stable);
//   - RXVALID and RXSTATUS masked during reset; RXVALID passed only after
//     RXVALID_FILTER consecutive valid cycles (hides a flickering RXVALID
//     while the CDR settles after electrical idle; the count is a guess);
//   - TXCOMPLIANCE mapped onto TXCHARDISPMODE[0] = 1, TXCHARDISPVAL[0] = 0
//     (force negative running disparity on the first symbol of the word, as
//     PIPE defines TxCompliance; UG482 TXCHARDISPMODE/VAL table);
//   - registered PIPE inputs and outputs, RXELECIDLE synchronized (it is an
//     analog detector output).
//
// Attribute values: see the comments at each group. Values marked "vendor
// core" are the ones the 7-series PCIe core generator writes for a GTP lane
// (read off public copies of its generated GT wrapper; facts, not copied
// code); they are unverified on hardware by this project.

`resetall
`timescale 1ns / 1ps
`default_nettype none

module rnic_gtp7_lane #(
    parameter CHBOND_MASTER = 0,         // 1: this lane is the channel-bonding master
    parameter [2:0] CHBOND_LEVEL = 3'd0, // master 1, slaves 0 (star from the master)
    parameter RXVALID_FILTER = 4         // consecutive RXVALID cycles before passing it
) (
    input  wire        clk,              // PIPE clock = TXUSRCLK(2) = RXUSRCLK(2), 125 MHz
    input  wire        pll_clk,          // GTPE2_COMMON PLL0OUTCLK
    input  wire        pll_refclk,       // GTPE2_COMMON PLL0OUTREFCLK
    input  wire        sigvalid_clk,     // OOB / signal-detect clock (FABRIC mode)
    // serial pins
    input  wire        rxp,
    input  wire        rxn,
    output wire        txp,
    output wire        txn,
    // from the reset sequencer
    input  wire        gt_txreset,
    input  wire        gt_rxreset,
    input  wire        user_rdy,
    input  wire        phy_ready,
    output wire        tx_resetdone,
    output wire        rx_resetdone,
    // channel bonding
    input  wire [3:0]  chbond_i,
    output wire [3:0]  chbond_o,
    // PIPE, from PCIE_2_1
    input  wire [15:0] pipe_tx_data,
    input  wire [1:0]  pipe_tx_charisk,
    input  wire        pipe_tx_elecidle,
    input  wire        pipe_tx_compliance,
    input  wire [1:0]  pipe_tx_powerdown,
    input  wire        pipe_tx_rcvrdet,
    input  wire        pipe_tx_deemph,
    input  wire [2:0]  pipe_tx_margin,
    input  wire        pipe_rx_polarity,
    // PIPE, to PCIE_2_1
    output reg  [15:0] pipe_rx_data = 16'd0,
    output reg  [1:0]  pipe_rx_charisk = 2'b00,
    output reg         pipe_rx_valid = 1'b0,
    output reg  [2:0]  pipe_rx_status = 3'd0,
    output reg         pipe_rx_phystatus = 1'b1,
    output reg         pipe_rx_elecidle = 1'b1,
    output reg         pipe_rx_chanisaligned = 1'b0
);

initial begin
    if (RXVALID_FILTER < 1 || RXVALID_FILTER > 15) begin
        $error("rnic_gtp7_lane: RXVALID_FILTER must be 1..15");
        $finish;
    end
    if (CHBOND_MASTER != 0 && CHBOND_MASTER != 1) begin
        $error("rnic_gtp7_lane: CHBOND_MASTER must be 0 or 1");
        $finish;
    end
end

// ---------------------------------------------------------------------------
// PIPE transmit side: one register stage (every control delayed alike)
// ---------------------------------------------------------------------------

reg [15:0] tx_data_q = 16'd0;
reg [1:0]  tx_charisk_q = 2'b00;
reg        tx_elecidle_q = 1'b1;
reg        tx_compliance_q = 1'b0;
reg [1:0]  tx_powerdown_q = 2'b10;       // P1 until the block says otherwise
reg        tx_rcvrdet_q = 1'b0;
reg        tx_deemph_q = 1'b1;
reg [2:0]  tx_margin_q = 3'd0;
reg        rx_polarity_q = 1'b0;
always @(posedge clk) begin
    tx_data_q <= pipe_tx_data;
    tx_charisk_q <= pipe_tx_charisk;
    tx_elecidle_q <= pipe_tx_elecidle;
    tx_compliance_q <= pipe_tx_compliance;
    tx_powerdown_q <= pipe_tx_powerdown;
    tx_rcvrdet_q <= pipe_tx_rcvrdet;
    tx_deemph_q <= pipe_tx_deemph;
    tx_margin_q <= pipe_tx_margin;
    rx_polarity_q <= pipe_rx_polarity;
end

// ---------------------------------------------------------------------------
// The transceiver
// ---------------------------------------------------------------------------

wire [31:0] gt_rxdata;
wire [3:0]  gt_rxcharisk;
wire        gt_rxvalid;
wire [2:0]  gt_rxstatus;
wire        gt_phystatus;
wire        gt_rxelecidle;
wire        gt_rxchanisaligned;

GTPE2_CHANNEL #(
    // simulation-only attributes (ignored by synthesis)
    .SIM_RESET_SPEEDUP("FALSE"),
    .SIM_RECEIVER_DETECT_PASS("TRUE"),
    .SIM_TX_EIDLE_DRIVE_LEVEL("1"),
    .SIM_VERSION("2.0"),
    // clocking: PLL0 at 2.5 GHz, /2 = 2.5 Gb/s (UG482 "PLL" and "Serial
    // Clock Divider"); 100 MHz / 4 = 25 MHz for the internal timers
    .TXOUT_DIV(2),
    .RXOUT_DIV(2),
    .TX_CLK25_DIV(4),
    .RX_CLK25_DIV(4),
    .TX_XCLK_SEL("TXOUT"),               // TX buffer used (UG482 table "TX_XCLK_SEL")
    .RX_XCLK_SEL("RXREC"),               // RX elastic buffer used
    // reset timings (vendor core)
    .TXPCSRESET_TIME(5'b00001),
    .RXPCSRESET_TIME(5'b00001),
    .TXPMARESET_TIME(5'b00011),
    .RXPMARESET_TIME(5'b00011),
    // 2-byte interface with 8b/10b: 20-bit internal width
    .TX_DATA_WIDTH(20),
    .RX_DATA_WIDTH(20),
    // receiver detection and electrical idle (vendor core; TX_RXDETECT_CFG
    // is the reference clock frequency in MHz for the detect timer)
    .TX_RXDETECT_CFG(14'd100),
    .TX_RXDETECT_REF(3'b011),
    .RX_CM_SEL(2'd3),
    .RX_CM_TRIM(4'b1010),
    .TX_EIDLE_ASSERT_DELAY(3'd2),
    .TX_EIDLE_DEASSERT_DELAY(3'b010),
    .PD_TRANS_TIME_NONE_P2(8'h09),
    // PIPE-driven TX swing and de-emphasis (vendor core values)
    .TX_DRIVE_MODE("PIPE"),
    .TX_DEEMPH0(6'b010100),
    .TX_DEEMPH1(6'b001011),
    .TX_MARGIN_FULL_0(7'b1001111),
    .TX_MARGIN_FULL_1(7'b1001110),
    .TX_MARGIN_FULL_2(7'b1001101),
    .TX_MARGIN_FULL_3(7'b1001100),
    .TX_MARGIN_FULL_4(7'b1000011),
    .TX_MARGIN_LOW_0(7'b1000101),
    .TX_MARGIN_LOW_1(7'b1000110),
    .TX_MARGIN_LOW_2(7'b1000011),
    .TX_MARGIN_LOW_3(7'b1000010),
    .TX_MARGIN_LOW_4(7'b1000000),
    .TX_MAINCURSOR_SEL(1'b0),
    .TX_PREDRIVER_MODE(1'b0),
    // PCIe mode of the PCS. PCS_RSVD_ATTR: bit 3 = OOB clock from the
    // fabric (SIGVALIDCLK), bits 8:4 = 5'h1C, bits 2:0 = 3'd6 for "TX buffer
    // used, no TX/RX phase-sync modes": the vendor core's formula for
    // production silicon. Reserved bits: UNVERIFIED meaning.
    .PCS_PCIE_EN("TRUE"),
    .PCS_RSVD_ATTR(48'h0000_0000_01CE),
    .RXOOB_CLK_CFG("FABRIC"),
    .TXOOB_CFG(1'b1),
    // analog and CDR (vendor core values for a synchronous-clock GTP lane)
    .PMA_RSV2(32'h00002040),
    .RX_BIAS_CFG(16'h0F33),
    .TERM_RCAL_CFG(15'b100001000010000),
    .TERM_RCAL_OVRD(3'b000),
    .RXPI_CFG0(3'd0),
    .RXPI_CFG1(1'd1),
    .RXPI_CFG2(1'd1),
    .RXCDR_CFG(83'h0_0001_07FE_4060_0104_1010),
    .RXCDR_LOCK_CFG(6'b010101),
    .RXCDR_HOLD_DURING_EIDLE(1'b1),
    .RXCDR_FR_RESET_ON_EIDLE(1'b0),
    .RXCDR_PH_RESET_ON_EIDLE(1'b0),
    .RXLPM_CFG(4'b0110),
    .RXLPM_GC_CFG(9'b111100010),
    .RXLPM_GC_CFG2(3'b001),
    .RXLPM_HF_CFG2(5'b01010),
    .RXLPM_HOLD_DURING_EIDLE(1'b1),
    .RXLPM_INCM_CFG(1'b1),
    .RXLPM_IPCM_CFG(1'b0),
    .RXLPM_LF_CFG2(5'b01010),
    .RXLPM_OSINT_CFG(3'b100),
    .RX_OS_CFG(13'h0080),
    .RXOSCALRESET_TIME(5'b00011),
    .RXOSCALRESET_TIMEOUT(5'b00000),
    .ES_EYE_SCAN_EN("FALSE"),
    // TX buffer, RX elastic buffer (reset on electrical idle; over/underflow
    // thresholds are the primitive's defaults, as the vendor core keeps them)
    .TXBUF_EN("TRUE"),
    .TXBUF_RESET_ON_RATE_CHANGE("TRUE"),
    .RXBUF_EN("TRUE"),
    .RX_DEFER_RESET_BUF_EN("TRUE"),
    .RXBUF_ADDR_MODE("FULL"),
    .RXBUF_EIDLE_HI_CNT(4'd4),
    .RXBUF_EIDLE_LO_CNT(4'd0),
    .RXBUF_RESET_ON_CB_CHANGE("TRUE"),
    .RXBUF_RESET_ON_COMMAALIGN("FALSE"),
    .RXBUF_RESET_ON_EIDLE("TRUE"),
    .RXBUF_RESET_ON_RATE_CHANGE("TRUE"),
    .RXBUF_THRESH_OVRD("FALSE"),
    .RXBUF_THRESH_OVFLW(61),
    .RXBUF_THRESH_UNDFLW(4),
    // comma detection and alignment on K28.5 of either disparity, to any
    // byte of the 2-byte word (attribute values are in wire order, first bit
    // in bit 0: 0101111100 = K28.5 with negative running disparity)
    .ALIGN_COMMA_DOUBLE("FALSE"),
    .ALIGN_COMMA_ENABLE(10'b1111111111),
    .ALIGN_COMMA_WORD(1),
    .ALIGN_MCOMMA_DET("TRUE"),
    .ALIGN_MCOMMA_VALUE(10'b1010000011),
    .ALIGN_PCOMMA_DET("TRUE"),
    .ALIGN_PCOMMA_VALUE(10'b0101111100),
    .DEC_MCOMMA_DETECT("TRUE"),
    .DEC_PCOMMA_DETECT("TRUE"),
    .DEC_VALID_COMMA_ONLY("FALSE"),
    .SHOW_REALIGN_COMMA("FALSE"),
    .RXSLIDE_AUTO_WAIT(7),
    .RXSLIDE_MODE("PMA"),
    // channel bonding on TS1/TS2 (decoded symbols: bit 8 = K; D10.2 = TS1
    // identifier, D5.2 = TS2 identifier, K28.5 = COM), vendor core values
    .CHAN_BOND_KEEP_ALIGN("TRUE"),
    .CHAN_BOND_MAX_SKEW(7),
    .CHAN_BOND_SEQ_LEN(4),
    .CHAN_BOND_SEQ_1_ENABLE(4'b1111),
    .CHAN_BOND_SEQ_1_1(10'b0001001010),
    .CHAN_BOND_SEQ_1_2(10'b0001001010),
    .CHAN_BOND_SEQ_1_3(10'b0001001010),
    .CHAN_BOND_SEQ_1_4(10'b0110111100),
    .CHAN_BOND_SEQ_2_USE("TRUE"),
    .CHAN_BOND_SEQ_2_ENABLE(4'b1111),
    .CHAN_BOND_SEQ_2_1(10'b0001000101),
    .CHAN_BOND_SEQ_2_2(10'b0001000101),
    .CHAN_BOND_SEQ_2_3(10'b0001000101),
    .CHAN_BOND_SEQ_2_4(10'b0110111100),
    .FTS_DESKEW_SEQ_ENABLE(4'b1111),
    .FTS_LANE_DESKEW_EN("TRUE"),
    .FTS_LANE_DESKEW_CFG(4'b1111),
    // clock correction on one SKP symbol (K28.0 = 1_0001_1100); latencies
    // are the vendor core's for 4 bonded lanes
    .CBCC_DATA_SOURCE_SEL("DECODED"),
    .CLK_CORRECT_USE("TRUE"),
    .CLK_COR_KEEP_IDLE("TRUE"),
    .CLK_COR_MAX_LAT(21),
    .CLK_COR_MIN_LAT(19),
    .CLK_COR_PRECEDENCE("TRUE"),
    .CLK_COR_REPEAT_WAIT(0),
    .CLK_COR_SEQ_LEN(1),
    .CLK_COR_SEQ_1_ENABLE(4'b1111),
    .CLK_COR_SEQ_1_1(10'b0100011100),
    .CLK_COR_SEQ_1_2(10'b0000000000),
    .CLK_COR_SEQ_1_3(10'b0000000000),
    .CLK_COR_SEQ_1_4(10'b0000000000),
    .CLK_COR_SEQ_2_USE("FALSE"),
    .CLK_COR_SEQ_2_ENABLE(4'b0000),
    .CLK_COR_SEQ_2_1(10'b0000000000),
    .CLK_COR_SEQ_2_2(10'b0000000000),
    .CLK_COR_SEQ_2_3(10'b0000000000),
    .CLK_COR_SEQ_2_4(10'b0000000000),
    .RX_DISPERR_SEQ_MATCH("TRUE"),
    // no gearbox, no loopback
    .GEARBOX_MODE(3'd0),
    .TXGEARBOX_EN("FALSE"),
    .RXGEARBOX_EN("FALSE"),
    .LOOPBACK_CFG(1'b0),
    .RXPRBS_ERR_LOOPBACK(1'b0),
    .TX_LOOPBACK_DRIVE_HIZ("FALSE"),
    // TX/RX phase alignment is not used (buffers in the path); synchronous
    // multi-lane settings as the vendor core writes them with buffers
    .TXSYNC_OVRD(1'b1),
    .TXSYNC_MULTILANE(1'b1),
    .RXSYNC_OVRD(1'b1),
    .RXSYNC_MULTILANE(1'b1),
    .DMONITOR_CFG(24'h000B01),
    .RX_DEBUG_CFG(14'h0000),
    .CFOK_CFG(43'h490_0004_0E80),
    .CFOK_CFG2(7'b010_0000),
    .CFOK_CFG3(7'b010_0000),
    .CFOK_CFG4(1'b0),
    .CFOK_CFG5(2'd0),
    .CFOK_CFG6(4'd0)
) gtp (
    // clocks
    .PLL0CLK(pll_clk),
    .PLL0REFCLK(pll_refclk),
    .PLL1CLK(1'b0),
    .PLL1REFCLK(1'b0),
    .TXSYSCLKSEL(2'b00),                 // PLL0
    .RXSYSCLKSEL(2'b00),
    .TXUSRCLK(clk),
    .TXUSRCLK2(clk),
    .RXUSRCLK(clk),
    .RXUSRCLK2(clk),
    .TXOUTCLKSEL(3'b011),                // reference clock (unused: the PIPE clock comes from the MMCM)
    .RXOUTCLKSEL(3'b000),
    .SIGVALIDCLK(sigvalid_clk),
    .DRPCLK(clk),
    .DRPEN(1'b0),
    .DRPWE(1'b0),
    .DRPADDR(9'd0),
    .DRPDI(16'd0),
    .CLKRSVD0(1'b0),
    .CLKRSVD1(1'b0),
    .DMONITORCLK(1'b0),
    // resets (sequential mode)
    .GTRESETSEL(1'b0),
    .RESETOVRD(1'b0),
    .CFGRESET(1'b0),
    .GTTXRESET(gt_txreset),
    .GTRXRESET(gt_rxreset),
    .TXUSERRDY(user_rdy),
    .RXUSERRDY(user_rdy),
    .TXPMARESET(1'b0),
    .RXPMARESET(1'b0),
    .TXPCSRESET(1'b0),
    .RXPCSRESET(1'b0),
    .RXBUFRESET(1'b0),
    .RXCDRRESET(1'b0),
    .RXCDRRESETRSV(1'b0),
    .RXCDRFREQRESET(1'b0),
    .RXLPMRESET(1'b0),
    .RXOOBRESET(1'b0),
    .RXOSCALRESET(1'b0),
    .EYESCANRESET(1'b0),
    .TXRESETDONE(tx_resetdone),
    .RXRESETDONE(rx_resetdone),
    // serial pins
    .GTPTXP(txp),
    .GTPTXN(txn),
    .GTPRXP(rxp),
    .GTPRXN(rxn),
    // transmit data, 8b/10b
    .TXDATA({16'd0, tx_data_q}),
    .TXCHARISK({2'b00, tx_charisk_q}),
    .TX8B10BEN(1'b1),
    .TX8B10BBYPASS(4'd0),
    .TXCHARDISPMODE({3'b000, tx_compliance_q}),
    .TXCHARDISPVAL(4'b0000),
    .TXPOLARITY(1'b0),
    .TXHEADER(3'd0),
    .TXSEQUENCE(7'd0),
    .TXSTARTSEQ(1'b0),
    .TXPRBSSEL(3'd0),
    .TXPRBSFORCEERR(1'b0),
    .TXINHIBIT(1'b0),
    // PIPE controls
    .TXDETECTRX(tx_rcvrdet_q),
    .TXELECIDLE(tx_elecidle_q),
    .TXPD(tx_powerdown_q),
    .RXPD(tx_powerdown_q),
    .TXPDELECIDLEMODE(1'b0),
    .RXELECIDLEMODE(2'b00),
    .TXRATE(3'd0),                       // Gen1 only: TXOUT_DIV/RXOUT_DIV apply
    .RXRATE(3'd0),
    .TXRATEMODE(1'b0),
    .RXRATEMODE(1'b0),
    .TXDEEMPH(tx_deemph_q),
    .TXMARGIN(tx_margin_q),
    .TXSWING(1'b0),
    .TXBUFDIFFCTRL(3'b100),
    .TXDIFFCTRL(4'b1100),
    .TXPRECURSOR(5'd0),
    .TXPRECURSORINV(1'b0),
    .TXPOSTCURSOR(5'd0),
    .TXPOSTCURSORINV(1'b0),
    .TXDIFFPD(1'b0),
    .TXPISOPD(1'b0),
    .TXCOMINIT(1'b0),
    .TXCOMSAS(1'b0),
    .TXCOMWAKE(1'b0),
    // TX phase alignment unused (TX buffer)
    .TXPHDLYRESET(1'b0),
    .TXPHALIGN(1'b0),
    .TXPHALIGNEN(1'b0),
    .TXPHDLYPD(1'b0),
    .TXPHINIT(1'b0),
    .TXPHOVRDEN(1'b0),
    .TXDLYBYPASS(1'b1),
    .TXDLYSRESET(1'b0),
    .TXDLYEN(1'b0),
    .TXDLYOVRDEN(1'b0),
    .TXDLYHOLD(1'b0),
    .TXDLYUPDOWN(1'b0),
    .TXPHDLYTSTCLK(1'b0),
    .TXSYNCMODE(1'b0),
    .TXSYNCIN(1'b0),
    .TXSYNCALLIN(1'b0),
    .TXPIPPMEN(1'b0),
    .TXPIPPMOVRDEN(1'b0),
    .TXPIPPMPD(1'b0),
    .TXPIPPMSEL(1'b0),
    .TXPIPPMSTEPSIZE(5'd0),
    // receive data, 8b/10b, comma alignment
    .RXDATA(gt_rxdata),
    .RXCHARISK(gt_rxcharisk),
    .RX8B10BEN(1'b1),
    .RXPOLARITY(rx_polarity_q),
    .RXCOMMADETEN(1'b1),
    .RXMCOMMAALIGNEN(1'b1),
    .RXPCOMMAALIGNEN(1'b1),
    .RXSLIDE(1'b0),
    .RXGEARBOXSLIP(1'b0),
    .RXPRBSSEL(3'd0),
    .RXPRBSCNTRESET(1'b0),
    .LOOPBACK(3'd0),
    // PIPE status
    .RXVALID(gt_rxvalid),
    .RXSTATUS(gt_rxstatus),
    .PHYSTATUS(gt_phystatus),
    .RXELECIDLE(gt_rxelecidle),
    // channel bonding
    .RXCHBONDEN(phy_ready),
    .RXCHBONDMASTER(CHBOND_MASTER == 1),
    .RXCHBONDSLAVE(CHBOND_MASTER == 0),
    .RXCHBONDLEVEL(CHBOND_LEVEL),
    .RXCHBONDI(chbond_i),
    .RXCHBONDO(chbond_o),
    .RXCHANISALIGNED(gt_rxchanisaligned),
    // RX phase alignment unused (RX buffer)
    .RXPHDLYRESET(1'b0),
    .RXPHALIGN(1'b0),
    .RXPHALIGNEN(1'b0),
    .RXPHDLYPD(1'b0),
    .RXPHOVRDEN(1'b0),
    .RXDLYBYPASS(1'b1),
    .RXDLYSRESET(1'b0),
    .RXDLYEN(1'b0),
    .RXDLYOVRDEN(1'b0),
    .RXDDIEN(1'b0),
    .RXSYNCMODE(1'b0),
    .RXSYNCIN(1'b0),
    .RXSYNCALLIN(1'b0),
    // CDR and LPM equalizer: automatic
    .RXCDRHOLD(1'b0),
    .RXCDROVRDEN(1'b0),
    .RXLPMHFHOLD(1'b0),
    .RXLPMHFOVRDEN(1'b0),
    .RXLPMLFHOLD(1'b0),
    .RXLPMLFOVRDEN(1'b0),
    .RXLPMOSINTNTRLEN(1'b0),
    .RXOSHOLD(1'b0),
    .RXOSOVRDEN(1'b0),
    .RXOSINTEN(1'b1),
    .RXOSINTHOLD(1'b0),
    .RXOSINTNTRLEN(1'b0),
    .RXOSINTOVRDEN(1'b0),
    .RXOSINTPD(1'b0),
    .RXOSINTSTROBE(1'b0),
    .RXOSINTTESTOVRDEN(1'b0),
    .RXOSINTCFG(4'b0010),
    .RXOSINTID0(4'd0),
    .RXDFEXYDEN(1'b0),
    .RXADAPTSELTEST(14'd0),
    // eye scan, reserved and test pins: inactive
    .EYESCANMODE(1'b0),
    .EYESCANTRIGGER(1'b0),
    .SETERRSTATUS(1'b0),
    .DMONFIFORESET(1'b0),
    .PMARSVDIN0(1'b0),
    .PMARSVDIN1(1'b0),
    .PMARSVDIN2(1'b0),
    .PMARSVDIN3(1'b0),
    .PMARSVDIN4(1'b0),
    .GTRSVD(16'd0),
    .PCSRSVDIN(16'd0),
    .TSTIN(20'hFFFFF)
);

// ---------------------------------------------------------------------------
// PIPE receive side
// ---------------------------------------------------------------------------

(* ASYNC_REG = "TRUE" *) reg [1:0] elecidle_sync = 2'b11;
reg [3:0] valid_cnt = 4'd0;
always @(posedge clk) begin
    elecidle_sync <= {elecidle_sync[0], gt_rxelecidle};
    if (!gt_rxvalid || !phy_ready)
        valid_cnt <= 4'd0;
    else if (valid_cnt != RXVALID_FILTER[3:0])
        valid_cnt <= valid_cnt + 4'd1;

    pipe_rx_data <= gt_rxdata[15:0];
    pipe_rx_charisk <= gt_rxcharisk[1:0];
    pipe_rx_valid <= phy_ready && gt_rxvalid && valid_cnt == RXVALID_FILTER[3:0];
    pipe_rx_status <= phy_ready ? gt_rxstatus : 3'd0;
    pipe_rx_phystatus <= !phy_ready || gt_phystatus;
    pipe_rx_elecidle <= elecidle_sync[1];
    pipe_rx_chanisaligned <= phy_ready && gt_rxchanisaligned;
end

// upper halves of the 4-byte primitive ports are unused at 2 bytes
/* verilator lint_off UNUSEDSIGNAL */
wire [17:0] unused_rx_hi = {gt_rxdata[31:16], gt_rxcharisk[3:2]};
/* verilator lint_on UNUSEDSIGNAL */

endmodule

`resetall
