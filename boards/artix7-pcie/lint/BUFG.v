// Port declarations of Xilinx 7-series primitives for `verilator --lint-only`
// of the board top (firmware/build/lint-boards.sh reads boards/<board>/lint/
// only). Generated from the declarations in Yosys' techlibs/xilinx cell
// library (cells_xtra.v / cells_sim.v), reduced to the ports and parameters
// rnic_artix7_top uses; outputs tie to 0. Not a model: nothing here
// simulates the primitive.
/* verilator lint_off UNUSEDSIGNAL */
/* verilator lint_off UNUSEDPARAM */
`timescale 1ns / 1ps

module BUFG (
    input wire I,
    output wire O
);
assign O = I;
endmodule
