// Port declarations of Xilinx 7-series primitives for `verilator --lint-only`
// of the board top (firmware/build/lint-boards.sh reads boards/<board>/lint/
// only). Generated from the declarations in Yosys' techlibs/xilinx cell
// library (cells_xtra.v / cells_sim.v), reduced to the ports and parameters
// rnic_artix7_top uses; outputs tie to 0. Not a model: nothing here
// simulates the primitive.
/* verilator lint_off UNUSEDSIGNAL */
/* verilator lint_off UNUSEDPARAM */
`timescale 1ns / 1ps

module GTPE2_COMMON #(
    parameter [63:0] BIAS_CFG = 64'h0000000000000000,
    parameter [31:0] COMMON_CFG = 32'h00000000,
    parameter [26:0] PLL0_CFG = 27'h01F03DC,
    parameter [0:0] PLL0_DMON_CFG = 1'b0,
    parameter integer PLL0_FBDIV = 4,
    parameter integer PLL0_FBDIV_45 = 5,
    parameter [23:0] PLL0_INIT_CFG = 24'h00001E,
    parameter [8:0] PLL0_LOCK_CFG = 9'h1E8,
    parameter integer PLL0_REFCLK_DIV = 1,
    parameter [26:0] PLL1_CFG = 27'h01F03DC,
    parameter [0:0] PLL1_DMON_CFG = 1'b0,
    parameter integer PLL1_FBDIV = 4,
    parameter integer PLL1_FBDIV_45 = 5,
    parameter [23:0] PLL1_INIT_CFG = 24'h00001E,
    parameter [8:0] PLL1_LOCK_CFG = 9'h1E8,
    parameter integer PLL1_REFCLK_DIV = 1,
    parameter [7:0] PLL_CLKOUT_CFG = 8'b00000000,
    parameter [15:0] RSVD_ATTR0 = 16'h0000,
    parameter [15:0] RSVD_ATTR1 = 16'h0000,
    parameter [2:0] SIM_PLL0REFCLK_SEL = 3'b001,
    parameter [2:0] SIM_PLL1REFCLK_SEL = 3'b001,
    parameter SIM_RESET_SPEEDUP = "TRUE",
    parameter SIM_VERSION = "1.0"
) (
    output wire PLL0LOCK,
    output wire PLL0OUTCLK,
    output wire PLL0OUTREFCLK,
    input wire BGBYPASSB,
    input wire BGMONITORENB,
    input wire BGPDB,
    input wire BGRCALOVRDENB,
    input wire DRPCLK,
    input wire DRPEN,
    input wire DRPWE,
    input wire GTEASTREFCLK0,
    input wire GTEASTREFCLK1,
    input wire GTGREFCLK0,
    input wire GTGREFCLK1,
    input wire GTREFCLK0,
    input wire GTREFCLK1,
    input wire GTWESTREFCLK0,
    input wire GTWESTREFCLK1,
    input wire PLL0LOCKDETCLK,
    input wire PLL0LOCKEN,
    input wire PLL0PD,
    input wire PLL0RESET,
    input wire PLL1LOCKDETCLK,
    input wire PLL1LOCKEN,
    input wire PLL1PD,
    input wire PLL1RESET,
    input wire RCALENB,
    input wire [15:0] DRPDI,
    input wire [15:0] PLLRSVD1,
    input wire [2:0] PLL0REFCLKSEL,
    input wire [2:0] PLL1REFCLKSEL,
    input wire [4:0] BGRCALOVRD,
    input wire [4:0] PLLRSVD2,
    input wire [7:0] DRPADDR,
    input wire [7:0] PMARSVD
);
assign PLL0LOCK = '0;
assign PLL0OUTCLK = '0;
assign PLL0OUTREFCLK = '0;
endmodule
