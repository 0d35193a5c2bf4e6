// mp receive window: one packet of a multipath QP against the QP's
// cumulative point (the first PSN not yet placed) and its bitmap of the
// PSNs placed above it (bit i: point + i; bit 0, the point itself, is
// never set), in the responder's stages:
//
//   load   (ST_LOAD)      the QP's bitmap, read from its record
//   -      (ST_CHECK)     dup, beyond: whether the packet is taken at all
//   check  (ST_CHECK)     the bitmap with this packet's PSN set, the
//                         QP's NAK gap (from its window: registered, so
//                         exec's compares start at a flop)
//   exec   (ST_EXEC)      how far the point moves: to the first hole left
//   fetch  (ST_RQ_FETCH)  the new point and bitmap, whether a loss is
//                         seen (NAK), whether the QP's deferred completion
//                         is now due
//
// so no stage is a record read, a subtraction, a priority encoder and a
// shifter deep (timing). The responder holds the packet's offset from the
// point (`psn_diff`, 24-bit: bit 23 set is below the point) and the point
// steady from ST_CHECK to ST_RQ_FETCH. A hole is lost once a packet
// NAK_GAP or more PSNs beyond it has arrived (at most half the window).
// When the point's own packet is lost and the point does not move, a
// selective NAK names the point and, in `lost`, every other lost hole of
// the window (bit k: point + 1 + k), so one round trip repairs them all.
// The NAK also sets the recovery span, the PSNs from the point up to the
// last hole it names: no other NAK is sent (`nak_sent`) until the point
// has passed the span, else a NAK sent while the first resends are on
// their way would name the same holes again; unless a packet arrives a
// gap beyond the NAK's highest PSN (top): the requester sends its resends
// before anything new, so by then the NAK or a resend it asked for was
// lost, and a NAK now (naming what is still missing) saves a timeout. A
// deferred completion is due when the new point has passed its PSN.

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
    input  wire [ADV_W-1:0]  load_span,  // the recovery span, from the record

    input  wire [23:0]       psn_diff,   // this PSN - the point
    input  wire [23:0]       point,
    input  wire [2:0]        wshift,     // the QP's window: MP_W >> wshift
    output wire              dup,        // below the point, or placed already
    output wire              beyond,     // at or past the QP's window

    input  wire              check,
    input  wire              exec,
    input  wire              fetch,
    input  wire              nak_sent,   // a NAK's recovery span is not passed yet
    input  wire              pend_v,     // the QP holds a deferred completion
    input  wire [23:0]       pend_psn,   // ... of this PSN

    output wire [ADV_W-1:0]  adv,        // how far the point moves (0..MP_W)
    output wire [23:0]       point_new,
    output wire [MP_W-1:0]   bmp_next,   // the bitmap from the new point
    output wire              nak,
    output wire [MP_W-2:0]   lost,       // with nak: the other lost PSNs (bit k: point + 1 + k)
    output wire [ADV_W-1:0]  span_next,  // the recovery span from the new point
    output wire              recovered,  // the point passed the span (nak_sent may clear)
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
reg [MP_LOG:0] span_reg = {(MP_LOG+1){1'b0}};
reg [MP_LOG-1:0] top_reg = {MP_LOG{1'b0}};       // the highest PSN placed (offset)
reg top_ge_gap_reg = 1'b0;
reg [MP_LOG-1:0] cut_reg = {MP_LOG{1'b0}};       // top - gap: the last lost offset
reg [MP_W-2:0] lost_reg = {(MP_W-1){1'b0}};
reg [MP_LOG:0] span_next_reg = {(MP_LOG+1){1'b0}};
reg recovered_reg = 1'b0;
reg renak_reg = 1'b0;                            // a gap beyond the last NAK's top
reg [MP_LOG:0] gap_reg = {(MP_LOG+1){1'b0}};     // min(MP_NAK_GAP, window / 2)

localparam [23:0] MP_W24 = MP_W[23:0];
localparam [23:0] GAP24 = MP_NAK_GAP[23:0];
localparam [MP_LOG:0] ADV_ALL = MP_W[MP_LOG:0];
localparam [MP_W-1:0] ONE = 1;
integer k;

wire [23:0] win = MP_W24 >> wshift;
// (at most half the window: its bits above MP_LOG are zero)
/* verilator lint_off UNUSEDSIGNAL */
wire [23:0] gap = GAP24 < (win >> 1) ? GAP24 : (win >> 1);
/* verilator lint_on UNUSEDSIGNAL */

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

// the highest PSN placed before this packet (a priority encoder of the
// bitmap reversed), and with it
wire [MP_W-1:0] bmp_rev;
genvar gb;
generate
    for (gb = 0; gb < MP_W; gb = gb + 1) begin : g_rev
        assign bmp_rev[gb] = bmp_reg[MP_W-1-gb];
    end
endgenerate
wire bmp_any;
wire [MP_LOG-1:0] bmp_hi_rev;
priority_encoder #(.WIDTH(MP_W), .OUT_W(MP_LOG)) top_enc (
    .in(bmp_rev),
    .valid(bmp_any),
    .index(bmp_hi_rev)
);
wire [MP_LOG-1:0] bmp_hi = ~bmp_hi_rev;     // MP_W - 1 - index
wire [MP_LOG-1:0] pkt_off = psn_diff[MP_LOG-1:0];
wire [MP_LOG:0] gap_w = gap_reg;
wire nak_now = adv_reg == 0 && top_ge_gap_reg && (!nak_sent || renak_reg);
wire [MP_LOG:0] span_left = span_reg > adv_reg ? span_reg - adv_reg : {(MP_LOG+1){1'b0}};

always @(posedge clk) begin
    if (load) begin
        bmp_reg <= load_bmp;
        span_reg <= load_span;
    end
    if (check) begin
        bmp_new_reg <= bmp_reg | (ONE << psn_diff[MP_LOG-1:0]);
        top_reg <= bmp_any && bmp_hi > pkt_off ? bmp_hi : pkt_off;
        gap_reg <= gap[MP_LOG:0];
    end
    if (exec) begin
        adv_reg <= hole ? {1'b0, hole_at} : ADV_ALL;
        top_ge_gap_reg <= {1'b0, top_reg} >= gap_w;
        cut_reg <= top_reg - gap_w[MP_LOG-1:0];
        // (the span is the last NAK's top - gap + 1 from the point)
        renak_reg <= {2'b00, top_reg} >= {1'b0, span_reg} + {gap_w, 1'b0};
    end
    if (fetch) begin
        point_reg <= point + adv24;
        bmp_next_reg <= bmp_new_reg >> adv_reg;
        nak_reg <= nak_now;
        for (k = 0; k < MP_W - 1; k = k + 1) begin
            lost_reg[k] <= !bmp_new_reg[k+1] && k + 1 <= cut_reg;
        end
        span_next_reg <= nak_now ? {1'b0, cut_reg} + 1'b1 : span_left;
        recovered_reg <= adv_reg >= span_reg;
        due_reg <= pend_v && pend_off < adv24;
    end
end

assign adv = adv_reg;
assign point_new = point_reg;
assign bmp_next = bmp_next_reg;
assign nak = nak_reg;
assign lost = lost_reg;
assign span_next = span_next_reg;
assign recovered = recovered_reg;
assign pend_due = due_reg;

endmodule

`resetall
