// Port declarations of Xilinx 7-series primitives for `verilator --lint-only`
// of the board top (firmware/build/lint-boards.sh reads boards/<board>/lint/
// only). Generated from the declarations in Yosys' techlibs/xilinx cell
// library (cells_xtra.v / cells_sim.v), reduced to the ports and parameters
// rnic_artix7_top uses; outputs tie to 0. Not a model: nothing here
// simulates the primitive.
/* verilator lint_off UNUSEDSIGNAL */
/* verilator lint_off UNUSEDPARAM */
`timescale 1ns / 1ps

module STARTUPE2 (
    output wire CFGCLK,
    output wire CFGMCLK,
    output wire EOS,
    output wire PREQ,
    input wire CLK,
    input wire GSR,
    input wire GTS,
    input wire KEYCLEARB,
    input wire PACK,
    input wire USRCCLKO,
    input wire USRCCLKTS,
    input wire USRDONEO,
    input wire USRDONETS
);
assign CFGCLK = '0;
assign CFGMCLK = '0;
assign EOS = '0;
assign PREQ = '0;
endmodule
