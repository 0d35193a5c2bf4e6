// Test-only behavioural model (see below); its parameter and port list is
// boards/artix7-pcie/lint/GTPE2_COMMON_ports.vh, shared with the lint declaration.
`timescale 1ns / 1ps
/* verilator lint_off UNUSEDSIGNAL */
/* verilator lint_off UNUSEDPARAM */
/* verilator lint_off BLKSEQ */
module GTPE2_COMMON #(
`include "GTPE2_COMMON_ports.vh"
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
