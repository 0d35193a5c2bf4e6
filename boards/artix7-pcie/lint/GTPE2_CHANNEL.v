// Port declarations of Xilinx 7-series primitives for `verilator --lint-only`
// of the board top (firmware/build/lint-boards.sh reads boards/<board>/lint/
// only). Generated from the declarations in Yosys' techlibs/xilinx cell
// library (cells_xtra.v / cells_sim.v), reduced to the ports and parameters
// rnic_artix7_top uses (the GTPE2 lists sit in *_ports.vh, shared with the
// test model of sim/gtp7-pipe-sim); outputs tie to 0. Not a model: nothing here
// simulates the primitive.
/* verilator lint_off UNUSEDSIGNAL */
/* verilator lint_off UNUSEDPARAM */
`timescale 1ns / 1ps

module GTPE2_CHANNEL #(
`include "GTPE2_CHANNEL_ports.vh"
);
assign GTPTXN = '0;
assign GTPTXP = '0;
assign PHYSTATUS = '0;
assign RXCHANISALIGNED = '0;
assign RXELECIDLE = '0;
assign RXRESETDONE = '0;
assign RXVALID = '0;
assign TXRESETDONE = '0;
assign RXSTATUS = '0;
assign RXDATA = '0;
assign RXCHARISK = '0;
assign RXCHBONDO = '0;
endmodule
