// GTP transceiver PHY for the 7-series PCIe block PCIE_2_1: PCIe Gen1
// (2.5 Gb/s), x1..x4, PIPE on one side, the serial lane pins on the other.
// One GTPE2_COMMON (PLL0 from the 100 MHz PCIe reference: 100 MHz x
// PLL0_FBDIV 5 x PLL0_FBDIV_45 5 / PLL0_REFCLK_DIV 1 = 2.5 GHz; UG482
// "Shared PLL" equation), one rnic_gtp7_lane (GTPE2_CHANNEL in PCIe mode) per
// lane, the reset sequencer rnic_gtp7_reset, the OOB clock and the channel
// bonding wiring (lane 0 is the master, the other lanes its slaves).
//
// Gen1 only: TXRATE/RXRATE stay 0, so PIPETXRATE of the block must stay 0
// (the top advertises 2.5 GT/s only). Gen2 would need the PIPE rate-change
// handshake (TXRATE/RXRATE, TXRATEDONE/RXRATEDONE, PHYSTATUS) and a 250 MHz
// PIPE clock; it is not here.
//
// Clocks: clk is the PIPE clock, 125 MHz, frequency-locked to the reference
// (the top's MMCM runs off the same IBUFDS_GTE2). It is every channel's
// TXUSRCLK/TXUSRCLK2/RXUSRCLK/RXUSRCLK2 (2 bytes per cycle at 2.5 Gb/s), the
// PLL lock-detect clock and the sequencer's clock. The OOB (signal detect)
// clock is clk / 2 = 62.5 MHz from a fabric register, as the vendor core
// feeds SIGVALIDCLK in its FABRIC OOB mode (a fact about its behaviour; the
// frequency requirement itself is not stated in UG482: UNVERIFIED).

`resetall
`timescale 1ns / 1ps
`default_nettype none

module rnic_gtp7_pipe #(
    parameter LANES = 4,
    parameter RXVALID_FILTER = 4,
    parameter PLL_RESET_CYCLES = 64,
    parameter LOCK_STABLE_CYCLES = 64,
    parameter GT_RESET_CYCLES = 64,
    parameter TIMEOUT_CYCLES = 1 << 20
) (
    input  wire                 clk,              // PIPE clock, 125 MHz
    input  wire                 rst,              // PERST# or MMCM not locked (synchronized inside)
    input  wire                 gt_refclk,        // IBUFDS_GTE2 O (100 MHz)
    // lane pins
    input  wire [LANES-1:0]     rxp,
    input  wire [LANES-1:0]     rxn,
    output wire [LANES-1:0]     txp,
    output wire [LANES-1:0]     txn,
    // PIPE from PCIE_2_1 (lane n in bits of lane n)
    input  wire [16*LANES-1:0]  pipe_tx_data,
    input  wire [2*LANES-1:0]   pipe_tx_charisk,
    input  wire [LANES-1:0]     pipe_tx_elecidle,
    input  wire [LANES-1:0]     pipe_tx_compliance,
    input  wire [2*LANES-1:0]   pipe_tx_powerdown,
    input  wire                 pipe_tx_rcvrdet,
    input  wire                 pipe_tx_deemph,
    input  wire [2:0]           pipe_tx_margin,
    input  wire                 pipe_tx_rate,     // must stay 0 (Gen1); counted if not
    input  wire [LANES-1:0]     pipe_rx_polarity,
    // PIPE to PCIE_2_1
    output wire [16*LANES-1:0]  pipe_rx_data,
    output wire [2*LANES-1:0]   pipe_rx_charisk,
    output wire [LANES-1:0]     pipe_rx_valid,
    output wire [3*LANES-1:0]   pipe_rx_status,
    output wire [LANES-1:0]     pipe_rx_phystatus,
    output wire [LANES-1:0]     pipe_rx_elecidle,
    output wire [LANES-1:0]     pipe_rx_chanisaligned,
    // status
    output wire                 phy_ready,
    output wire                 pll_lock,
    output wire [2:0]           reset_state,
    output wire [7:0]           reset_restarts,
    output reg                  rate_error = 1'b0 // the block asked for Gen2 (sticky)
);

initial begin
    if (LANES < 1 || LANES > 4) begin
        $error("rnic_gtp7_pipe: LANES must be 1..4 (one GTP quad)");
        $finish;
    end
end

// ---------------------------------------------------------------------------
// Quad PLL
// ---------------------------------------------------------------------------

wire pll_reset;
wire pll_clk;
wire pll_refclk;
wire pll_lock_raw;

GTPE2_COMMON #(
    .SIM_RESET_SPEEDUP("FALSE"),
    .SIM_PLL0REFCLK_SEL(3'b001),
    .SIM_PLL1REFCLK_SEL(3'b001),
    .SIM_VERSION("2.0"),
    .PLL0_FBDIV(5),
    .PLL0_FBDIV_45(5),
    .PLL0_REFCLK_DIV(1),
    .PLL1_FBDIV(1),
    .PLL1_FBDIV_45(4),
    .PLL1_REFCLK_DIV(1),
    // the primitive's documented defaults for the PLL loop, and the bias
    // value every public 7-series GTP design sets (64'h...0005_0001)
    .BIAS_CFG(64'h0000_0000_0005_0001),
    .COMMON_CFG(32'h0000_0000),
    .PLL0_CFG(27'h01F03DC),
    .PLL0_INIT_CFG(24'h00001E),
    .PLL0_LOCK_CFG(9'h1E8),
    .PLL0_DMON_CFG(1'b0),
    .PLL1_CFG(27'h01F03DC),
    .PLL1_INIT_CFG(24'h00001E),
    .PLL1_LOCK_CFG(9'h1E8),
    .PLL1_DMON_CFG(1'b0),
    .PLL_CLKOUT_CFG(8'd0),
    .RSVD_ATTR0(16'h0000),
    .RSVD_ATTR1(16'h0000)
) common (
    .GTREFCLK0(gt_refclk),
    .GTREFCLK1(1'b0),
    .GTEASTREFCLK0(1'b0),
    .GTEASTREFCLK1(1'b0),
    .GTWESTREFCLK0(1'b0),
    .GTWESTREFCLK1(1'b0),
    .GTGREFCLK0(1'b0),
    .GTGREFCLK1(1'b0),
    .PLL0REFCLKSEL(3'b001),               // GTREFCLK0
    .PLL1REFCLKSEL(3'b001),
    .PLL0PD(1'b0),
    .PLL1PD(1'b1),                        // PLL1 unused
    .PLL0RESET(pll_reset),
    .PLL1RESET(1'b1),
    .PLL0LOCKEN(1'b1),
    .PLL1LOCKEN(1'b0),
    .PLL0LOCKDETCLK(clk),
    .PLL1LOCKDETCLK(1'b0),
    .PLL0LOCK(pll_lock_raw),
    .PLL0OUTCLK(pll_clk),
    .PLL0OUTREFCLK(pll_refclk),
    .BGBYPASSB(1'b1),
    .BGMONITORENB(1'b1),
    .BGPDB(1'b1),
    .BGRCALOVRD(5'b11111),
    .BGRCALOVRDENB(1'b1),
    .RCALENB(1'b1),
    .DRPCLK(clk),
    .DRPEN(1'b0),
    .DRPWE(1'b0),
    .DRPADDR(8'd0),
    .DRPDI(16'd0),
    .PLLRSVD1(16'd0),
    .PLLRSVD2(5'd0),
    .PMARSVD(8'd0)
);
assign pll_lock = pll_lock_raw;

// ---------------------------------------------------------------------------
// Reset sequencer
// ---------------------------------------------------------------------------

wire             gt_txreset;
wire             gt_rxreset;
wire             user_rdy;
wire [LANES-1:0] tx_resetdone;
wire [LANES-1:0] rx_resetdone;

rnic_gtp7_reset #(
    .LANES(LANES),
    .PLL_RESET_CYCLES(PLL_RESET_CYCLES),
    .LOCK_STABLE_CYCLES(LOCK_STABLE_CYCLES),
    .GT_RESET_CYCLES(GT_RESET_CYCLES),
    .TIMEOUT_CYCLES(TIMEOUT_CYCLES)
) seq (
    .clk(clk),
    .rst(rst),
    .pll_lock(pll_lock_raw),
    .tx_resetdone(tx_resetdone),
    .rx_resetdone(rx_resetdone),
    .pll_reset(pll_reset),
    .gt_txreset(gt_txreset),
    .gt_rxreset(gt_rxreset),
    .user_rdy(user_rdy),
    .phy_ready(phy_ready),
    .state_out(reset_state),
    .restarts(reset_restarts)
);

// ---------------------------------------------------------------------------
// OOB clock: clk / 2
// ---------------------------------------------------------------------------

reg oob_clk = 1'b0;
always @(posedge clk) oob_clk <= !oob_clk;

always @(posedge clk) begin
    if (pipe_tx_rate) rate_error <= 1'b1;
    if (!phy_ready) rate_error <= 1'b0;
end

// ---------------------------------------------------------------------------
// Lanes; lane 0 is the channel-bonding master, its RXCHBONDO feeds every
// slave directly (one level: master 1, slaves 0). UG482 allows a daisy
// chain or this star inside a quad; the level values are this project's
// reading of the "RXCHBONDLEVEL" rule, UNVERIFIED.
// ---------------------------------------------------------------------------

wire [3:0] chbond_master_o;

genvar i;
generate
    for (i = 0; i < LANES; i = i + 1) begin : lane
        wire [3:0] chbond_o;
        rnic_gtp7_lane #(
            .CHBOND_MASTER(i == 0 ? 1 : 0),
            .CHBOND_LEVEL(i == 0 ? 3'd1 : 3'd0),
            .RXVALID_FILTER(RXVALID_FILTER)
        ) l (
            .clk(clk),
            .pll_clk(pll_clk),
            .pll_refclk(pll_refclk),
            .sigvalid_clk(oob_clk),
            .rxp(rxp[i]),
            .rxn(rxn[i]),
            .txp(txp[i]),
            .txn(txn[i]),
            .gt_txreset(gt_txreset),
            .gt_rxreset(gt_rxreset),
            .user_rdy(user_rdy),
            .phy_ready(phy_ready),
            .tx_resetdone(tx_resetdone[i]),
            .rx_resetdone(rx_resetdone[i]),
            .chbond_i(i == 0 ? 4'd0 : chbond_master_o),
            .chbond_o(chbond_o),
            .pipe_tx_data(pipe_tx_data[16*i +: 16]),
            .pipe_tx_charisk(pipe_tx_charisk[2*i +: 2]),
            .pipe_tx_elecidle(pipe_tx_elecidle[i]),
            .pipe_tx_compliance(pipe_tx_compliance[i]),
            .pipe_tx_powerdown(pipe_tx_powerdown[2*i +: 2]),
            .pipe_tx_rcvrdet(pipe_tx_rcvrdet),
            .pipe_tx_deemph(pipe_tx_deemph),
            .pipe_tx_margin(pipe_tx_margin),
            .pipe_rx_polarity(pipe_rx_polarity[i]),
            .pipe_rx_data(pipe_rx_data[16*i +: 16]),
            .pipe_rx_charisk(pipe_rx_charisk[2*i +: 2]),
            .pipe_rx_valid(pipe_rx_valid[i]),
            .pipe_rx_status(pipe_rx_status[3*i +: 3]),
            .pipe_rx_phystatus(pipe_rx_phystatus[i]),
            .pipe_rx_elecidle(pipe_rx_elecidle[i]),
            .pipe_rx_chanisaligned(pipe_rx_chanisaligned[i])
        );
        if (i == 0) begin : master
            assign chbond_master_o = chbond_o;
        end else begin : slave
            /* verilator lint_off UNUSEDSIGNAL */
            wire [3:0] unused_chbond = chbond_o;
            /* verilator lint_on UNUSEDSIGNAL */
        end
    end
endgenerate

endmodule

`resetall
