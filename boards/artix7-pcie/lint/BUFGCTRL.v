// Port declarations of Xilinx 7-series primitives for `verilator --lint-only`
// of the board top (firmware/build/lint-boards.sh reads boards/<board>/lint/
// only). Generated from the declarations in Yosys' techlibs/xilinx cell
// library (cells_xtra.v / cells_sim.v), reduced to the ports and parameters
// rnic_artix7_top uses; outputs tie to 0. Not a model: nothing here
// simulates the primitive.
/* verilator lint_off UNUSEDSIGNAL */
/* verilator lint_off UNUSEDPARAM */
`timescale 1ns / 1ps

module BUFGCTRL (
    input wire I0,
    input wire I1,
    input wire S0,
    input wire S1,
    input wire CE0,
    input wire CE1,
    input wire IGNORE0,
    input wire IGNORE1,
    output wire O
);
assign O = S1 ? I1 : I0;
endmodule
