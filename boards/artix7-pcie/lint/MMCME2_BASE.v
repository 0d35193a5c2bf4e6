// Port declarations of Xilinx 7-series primitives for `verilator --lint-only`
// of the board top (firmware/build/lint-boards.sh reads boards/<board>/lint/
// only). Generated from the declarations in Yosys' techlibs/xilinx cell
// library (cells_xtra.v / cells_sim.v), reduced to the ports and parameters
// rnic_artix7_top uses; outputs tie to 0. Not a model: nothing here
// simulates the primitive.
/* verilator lint_off UNUSEDSIGNAL */
/* verilator lint_off UNUSEDPARAM */
`timescale 1ns / 1ps

module MMCME2_BASE #(
    parameter real CLKFBOUT_MULT_F = 5.000,
    parameter real CLKIN1_PERIOD = 0.000,
    parameter real CLKOUT0_DIVIDE_F = 1.000,
    parameter integer CLKOUT1_DIVIDE = 1,
    parameter integer CLKOUT2_DIVIDE = 1,
    parameter integer DIVCLK_DIVIDE = 1
) (
    output wire CLKFBOUT,
    output wire CLKOUT0,
    output wire CLKOUT1,
    output wire CLKOUT2,
    output wire LOCKED,
    input wire CLKFBIN,
    input wire CLKIN1,
    input wire PWRDWN,
    input wire RST
);
assign CLKFBOUT = '0;
assign CLKOUT0 = '0;
assign CLKOUT1 = '0;
assign CLKOUT2 = '0;
assign LOCKED = '0;
endmodule
