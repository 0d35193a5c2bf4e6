// Path health of one QP's sprayed paths (eight tracked: with more paths,
// p and p + 8k share one): what the completer writes back for an event.
// Combinational; the fields live in the requester's REQ record.
//
//   down   the path is taken out: the executor's path pick passes its
//          packets on to the next path (path_pick.v)
//   loss   per path, a 2-bit count of the losses blamed on it (the first
//          PSN a sequence NAK names, una on a timeout) in the epoch lepo;
//          a blame in a later epoch starts the counts over
//   hold   the epoch of the last take-out or failed probe, and
//   back   the probes failed in a row since the take-out (0..3): a path
//          out may be probed 2^back epochs after hold (the executor's
//          rule), so a dead path costs fewer and fewer probes
//
// (No RTT is kept: an mp ACK is cumulative, so the time from a packet to
// the ACK that covers it is the time until every packet before it arrived,
// much the same on every path; see DESIGN.md.)
//
// A blame that brings a path's count to thresh takes it out, unless half
// of the active paths are out already (a path is never taken out when the
// QP does not spray). A timed packet that was acknowledged brings its path
// back if it was a probe (sent on a down path). A probe named lost restarts the hold
// and doubles the wait before the next (up to eight epochs).

`resetall
`timescale 1ns / 1ps
`default_nettype none

module path_health (
    input  wire [7:0]  down,
    input  wire [15:0] loss,
    input  wire [1:0]  lepo,
    input  wire [3:0]  hold,
    input  wire [1:0]  back,
    input  wire [2:0]  spray_log,
    input  wire [1:0]  thresh,          // losses in one epoch that take a path out (0: never)
    input  wire [3:0]  epoch,           // now

    input  wire        blame,           // a loss on blame_path
    input  wire [2:0]  blame_path,
    input  wire        timed_ok,        // the timed packet on timed_path arrived
    input  wire        timed_fail,      // ... was named lost (or timed out)
    input  wire        timed_probe,     // ... and it was a probe
    input  wire [2:0]  timed_path,

    output reg  [7:0]  down_next,
    output reg  [15:0] loss_next,
    output reg  [1:0]  lepo_next,
    output reg  [3:0]  hold_next,
    output reg  [1:0]  back_next,
    output reg         takeout,         // blame took blame_path out
    output reg         comeback         // a probe brought timed_path back
);

wire [7:0] active;
path_active active_inst (.spray_log(spray_log), .active(active));
// paths out now (of the active ones), and how many may be
wire [7:0] out_now = down & active;
wire [3:0] n_out = {3'd0, out_now[0]} + {3'd0, out_now[1]} + {3'd0, out_now[2]} + {3'd0, out_now[3]}
    + {3'd0, out_now[4]} + {3'd0, out_now[5]} + {3'd0, out_now[6]} + {3'd0, out_now[7]};
wire [3:0] n_cap = spray_log >= 3'd3 ? 4'd4 : spray_log == 3'd2 ? 4'd2
    : spray_log == 3'd1 ? 4'd1 : 4'd0;

wire [15:0] loss_cur = lepo == epoch[1:0] ? loss : 16'd0;
wire [1:0] b_count = loss_cur[{blame_path, 1'b0} +: 2];
wire [1:0] b_next = b_count == 2'd3 ? 2'd3 : b_count + 2'd1;

always @* begin
    down_next = down;
    loss_next = loss;
    lepo_next = lepo;
    hold_next = hold;
    back_next = back;
    takeout = 1'b0;
    comeback = 1'b0;
    if (blame && active[blame_path] && !down[blame_path]) begin
        loss_next = loss_cur;
        lepo_next = epoch[1:0];
        if (thresh != 2'd0 && b_next >= thresh && n_out < n_cap) begin
            down_next[blame_path] = 1'b1;
            loss_next[{blame_path, 1'b0} +: 2] = 2'd0;
            hold_next = epoch;
            back_next = 2'd0;
            takeout = 1'b1;
        end else begin
            loss_next[{blame_path, 1'b0} +: 2] = b_next;
        end
    end
    // (a probe is of a path out before this event: blame never takes out
    // a path that is out already, so it cannot be this one)
    if (timed_ok) begin
        if (timed_probe && down[timed_path]) begin
            down_next[timed_path] = 1'b0;
            loss_next[{timed_path, 1'b0} +: 2] = 2'd0;
            back_next = 2'd0;
            comeback = 1'b1;
        end
    end else if (timed_fail && timed_probe) begin
        hold_next = epoch;
        back_next = back == 2'd3 ? 2'd3 : back + 2'd1;
    end
end

endmodule

`resetall
