// Spraying: the path (UDP source port offset) of one packet. Consecutive
// PSNs take consecutive paths (base = PSN + the QP's rotation), so an ECMP
// fabric spreads one QP's packets over its 2^spray_log paths; a path the
// requester avoids (taken out by path health, or the suspect one) passes
// its packets on to the next path it does not avoid. Health is kept for
// eight paths: with more than eight, paths p and p + 8k share one bit.
// Combinational; the executor uses it for the packet it sends, the
// completer for the packet a NAK names (which path it took, as far as the
// avoid bits did not change since).

`resetall
`timescale 1ns / 1ps
`default_nettype none

module path_pick (
    input  wire [5:0] base,         // PSN + rotation (low bits)
    input  wire [2:0] spray_log,    // 2^spray_log paths (0..6)
    input  wire [7:0] avoid,        // path p mod 8 is avoided
    output wire [5:0] path
);

// the active paths among the eight health bits (fewer than eight: the
// rest count as avoided, so the search below wraps within the active ones)
wire [7:0] active;
path_active active_inst (.spray_log(spray_log), .active(active));
wire [5:0] mask = 6'h3F >> (3'd6 - (spray_log > 3'd6 ? 3'd6 : spray_log));
wire [5:0] raw = base & mask;
wire [7:0] blocked = avoid | ~active;
// blocked, rotated so that bit k is the path raw + k
wire [15:0] twice = {blocked, blocked};
/* verilator lint_off UNUSEDSIGNAL */
wire [15:0] rot_full = twice >> raw[2:0];
/* verilator lint_on UNUSEDSIGNAL */
wire [7:0] rot = rot_full[7:0];
reg [2:0] step;
reg found;
integer k;
always @* begin
    step = 3'd0;
    found = 1'b0;
    for (k = 7; k >= 0; k = k - 1) begin
        if (!rot[k]) begin
            step = k[2:0];
            found = 1'b1;
        end
    end
end
// nothing to pass to (every active path avoided), or one path: the raw one
assign path = (found && spray_log != 3'd0) ? (raw + {3'd0, step}) & mask : raw;

endmodule

`resetall
