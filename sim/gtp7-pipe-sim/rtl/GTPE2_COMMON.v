// Test-only behavioural model (see below); port and parameter list as in
// boards/artix7-pcie/lint/GTPE2_COMMON.v.
`timescale 1ns / 1ps
/* verilator lint_off UNUSEDSIGNAL */
/* verilator lint_off UNUSEDPARAM */
/* verilator lint_off BLKSEQ */
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

// Behavioural model of GTPE2_COMMON for the rnic_gtp7_pipe test; NOT the
// vendor's simulation model and not the silicon. What it does, after UG482
// ("Shared PLL"):
//   - checks the PLL0 divider attributes give 2.5 GHz from a 100 MHz
//     reference (FBDIV x FBDIV_45 / REFCLK_DIV = 25) and that GTREFCLK0 is
//     selected; a wrong setting never locks;
//   - PLL0LOCK rises LOCK_CYCLES reference-clock cycles after PLL0RESET
//     (and PLL0PD) fall, drops immediately on PLL0RESET;
//   - PLL0OUTCLK runs only while locked. Model convention: the test feeds
//     GTREFCLK0 with the *serial bit clock* (2.5 GHz: 20 ticks per 125 MHz
//     PIPE clock), since Verilator cannot multiply a clock; PLL0OUTCLK is
//     that clock gated by lock. PLL0OUTREFCLK = GTREFCLK0.

localparam LOCK_CYCLES = 400;
localparam DIV_OK = PLL0_FBDIV * PLL0_FBDIV_45 / PLL0_REFCLK_DIV == 25;

reg [15:0] lock_cnt = 16'd0;
reg locked = 1'b0;
always @(posedge GTREFCLK0 or posedge PLL0RESET) begin
    if (PLL0RESET) begin
        lock_cnt <= 16'd0;
        locked <= 1'b0;
    end else if (PLL0PD || !DIV_OK || PLL0REFCLKSEL != 3'b001 || !PLL0LOCKEN) begin
        lock_cnt <= 16'd0;
        locked <= 1'b0;
    end else if (lock_cnt == LOCK_CYCLES) begin
        locked <= 1'b1;
    end else begin
        lock_cnt <= lock_cnt + 16'd1;
    end
end
assign PLL0LOCK = locked;
assign PLL0OUTCLK = GTREFCLK0 & locked;
assign PLL0OUTREFCLK = GTREFCLK0;
endmodule
