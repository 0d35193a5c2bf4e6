// Reset sweep of a block RAM's records. Block RAM has no reset, so after a
// reset the owner of a per-queue record RAM writes zero to every record,
// one address a cycle from 0 to DEPTH-1, while `sweep` is high (the owner
// muxes `sweep_addr` and zero data onto its write port, and holds its own
// events meanwhile). Only a reset that follows a write starts it: `wrote`
// marks the records dirty, and a clean RAM (at power-up, or swept and not
// written since) still holds its zero initial contents, so the reset costs
// no cycles. A reset during a sweep starts it again from 0.
//
// Users: cq_manager (CQP, CQM, NTF, MSS), queue_manager (SQS), qp_context
// (HST, EA, EB, DMH).

`resetall
`timescale 1ns / 1ps
`default_nettype none

module ram_reset_sweep #(
    parameter DEPTH = 16,
    parameter ADDR_W = DEPTH > 1 ? $clog2(DEPTH) : 1
) (
    input  wire              clk,
    input  wire              rst,
    input  wire              wrote,      // a record was written this cycle
    output wire              sweep,      // write zero at sweep_addr
    output wire [ADDR_W-1:0] sweep_addr
);

initial begin
    if (DEPTH < 1 || ADDR_W < (DEPTH > 1 ? $clog2(DEPTH) : 1)) begin
        $error("ram_reset_sweep: DEPTH must be at least 1 and ADDR_W hold an address");
        $finish;
    end
end

localparam integer LAST_I = DEPTH - 1;
localparam [ADDR_W-1:0] LAST = LAST_I[ADDR_W-1:0];

reg dirty_reg = 1'b0;
reg sweep_reg = 1'b0;
reg [ADDR_W-1:0] addr_reg = {ADDR_W{1'b0}};

assign sweep = sweep_reg;
assign sweep_addr = addr_reg;

always @(posedge clk) begin
    if (wrote) begin
        dirty_reg <= 1'b1;
    end
    if (sweep_reg) begin
        addr_reg <= addr_reg + 1'b1;
        if (addr_reg == LAST) begin
            sweep_reg <= 1'b0;
        end
    end

    if (rst) begin
        // a write in the reset's own cycle counts
        sweep_reg <= dirty_reg || sweep_reg || wrote;
        addr_reg <= {ADDR_W{1'b0}};
        dirty_reg <= 1'b0;
    end
end

endmodule

`resetall
