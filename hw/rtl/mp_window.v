// mp receive window: one packet of a multipath QP against the QP's
// cumulative point (the first PSN not yet placed) and its bitmap of the
// PSNs placed above it (bit i: point + i; bit 0, the point itself, is
// never set), in the responder's stages:
//
//   load   (ST_LOAD)      the QP's bitmap, read from its record
//   -      (ST_CHECK)     dup, beyond: whether the packet is taken at all
//   check  (ST_CHECK)     the bitmap with this packet's PSN set
//   exec   (ST_EXEC)      how far the point moves: to the first hole left
//   fetch  (ST_RQ_FETCH)  the new point and bitmap, whether a loss is
//                         seen (NAK), whether the QP's deferred completion
//                         is now due
//
// so no stage is a record read, a subtraction, a priority encoder and a
// shifter deep (timing). The responder holds the packet's offset from the
// point (`psn_diff`, 24-bit: bit 23 set is below the point) and the point
// steady from ST_CHECK to ST_RQ_FETCH. A hole is reported lost, by a NAK
// of the point, once a packet NAK_GAP or more PSNs beyond it arrives (at
// most half the window) and the point does not move, once per point
// (`nak_sent`). A deferred completion is due when the new point has passed
// its PSN.

`resetall
`timescale 1ns / 1ps
`default_nettype none

module mp_window #(
    parameter MP_W = 64,            // the window (bitmap) in PSNs
    parameter MP_NAK_GAP = 16,      // a hole this far behind a placed PSN is a loss
    parameter ADV_W = $clog2(MP_W) + 1
) (
    input  wire              clk,

    input  wire              load,
    input  wire [MP_W-1:0]   load_bmp,

    input  wire [23:0]       psn_diff,   // this PSN - the point
    input  wire [23:0]       point,
    input  wire [2:0]        wshift,     // the QP's window: MP_W >> wshift
    output wire              dup,        // below the point, or placed already
    output wire              beyond,     // at or past the QP's window

    input  wire              check,
    input  wire              exec,
    input  wire              fetch,
    input  wire              nak_sent,   // a NAK named this point already
    input  wire              pend_v,     // the QP holds a deferred completion
    input  wire [23:0]       pend_psn,   // ... of this PSN

    output wire [ADV_W-1:0]  adv,        // how far the point moves (0..MP_W)
    output wire [23:0]       point_new,
    output wire [MP_W-1:0]   bmp_next,   // the bitmap from the new point
    output wire              nak,
    output wire              pend_due
);

localparam MP_LOG = $clog2(MP_W);

initial begin
    if (MP_W != 32 && MP_W != 64 && MP_W != 128) begin
        $error("mp_window: MP_W must be 32, 64 or 128");
        $finish;
    end
    if (ADV_W != MP_LOG + 1 || MP_NAK_GAP < 1) begin
        $error("mp_window: ADV_W must be log2(MP_W) + 1 and MP_NAK_GAP at least 1");
        $finish;
    end
end

reg [MP_W-1:0] bmp_reg = {MP_W{1'b0}};
reg [MP_W-1:0] bmp_new_reg = {MP_W{1'b0}};
reg [MP_LOG:0] adv_reg = {(MP_LOG+1){1'b0}};
reg [23:0] point_reg = 24'd0;
reg [MP_W-1:0] bmp_next_reg = {MP_W{1'b0}};
reg nak_reg = 1'b0;
reg due_reg = 1'b0;

localparam [23:0] MP_W24 = MP_W[23:0];
localparam [23:0] GAP24 = MP_NAK_GAP[23:0];
localparam [MP_LOG:0] ADV_ALL = MP_W[MP_LOG:0];
localparam [MP_W-1:0] ONE = 1;

wire [23:0] win = MP_W24 >> wshift;
wire [23:0] gap = GAP24 < (win >> 1) ? GAP24 : (win >> 1);

assign dup = psn_diff[23] || (psn_diff < MP_W24 && bmp_reg[psn_diff[MP_LOG-1:0]]);
assign beyond = psn_diff >= win;

// the first PSN still missing (MP_W if the whole window is placed)
wire hole;
wire [MP_LOG-1:0] hole_at;
priority_encoder #(.WIDTH(MP_W), .OUT_W(MP_LOG)) hole_enc (
    .in(~bmp_new_reg),
    .valid(hole),
    .index(hole_at)
);

wire [23:0] adv24 = {{(23-MP_LOG){1'b0}}, adv_reg};
wire [23:0] pend_off = pend_psn - point;

always @(posedge clk) begin
    if (load) begin
        bmp_reg <= load_bmp;
    end
    if (check) begin
        bmp_new_reg <= bmp_reg | (ONE << psn_diff[MP_LOG-1:0]);
    end
    if (exec) begin
        adv_reg <= hole ? {1'b0, hole_at} : ADV_ALL;
    end
    if (fetch) begin
        point_reg <= point + adv24;
        bmp_next_reg <= bmp_new_reg >> adv_reg;
        nak_reg <= adv_reg == 0 && psn_diff >= gap && !nak_sent;
        due_reg <= pend_v && pend_off < adv24;
    end
end

assign adv = adv_reg;
assign point_new = point_reg;
assign bmp_next = bmp_next_reg;
assign nak = nak_reg;
assign pend_due = due_reg;

endmodule

`resetall
