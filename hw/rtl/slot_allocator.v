// Slot allocator: a pool of SLOTS slots shared by the QPs, a free bit each.
// `pick` is the lowest free slot (`avail`: there is one); `take` hands it
// out at the clock edge, and `give` returns any slots at once. A slot given
// back in the cycle it is taken stays free (give wins). The pools of
// the core use it: the requester's outstanding rings (OST_RINGS) and the mp
// responder's deferred-completion slots (MP_PEND).
//
// `rst` frees every slot; a user whose per-QP state survives `rst` (the
// slot numbers it holds) ties it low, so the pool stays consistent with
// the QPs that hold slots.

`resetall
`timescale 1ns / 1ps
`default_nettype none

module slot_allocator #(
    parameter SLOTS = 8,
    parameter IDX_W = SLOTS > 1 ? $clog2(SLOTS) : 1
) (
    input  wire             clk,
    input  wire             rst,
    input  wire             take,     // hand out `pick` (only with `avail`)
    input  wire [SLOTS-1:0] give,     // slots given back
    output wire             avail,
    output wire [IDX_W-1:0] pick,
    output wire [SLOTS-1:0] free
);

initial begin
    if (SLOTS < 1 || IDX_W < (SLOTS > 1 ? $clog2(SLOTS) : 1)) begin
        $error("slot_allocator: SLOTS must be at least 1 and IDX_W hold a slot number");
        $finish;
    end
end

reg [SLOTS-1:0] free_reg = {SLOTS{1'b1}};
assign free = free_reg;

priority_encoder #(.WIDTH(SLOTS), .OUT_W(IDX_W)) pick_enc (
    .in(free_reg),
    .valid(avail),
    .index(pick)
);

localparam [SLOTS-1:0] ONE = 1;
wire [SLOTS-1:0] take_oh = take && avail ? ONE << pick : {SLOTS{1'b0}};

always @(posedge clk) begin
    free_reg <= (free_reg & ~take_oh) | give;
    if (rst) begin
        free_reg <= {SLOTS{1'b1}};
    end
end

endmodule

`resetall
