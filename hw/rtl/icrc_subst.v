// ICRC field substitution: what the CRC engine sees of one beat of a RoCEv2
// frame (Ethernet + IPv4 without options + UDP + BTH), combinational. The
// one place roce_tx (framer) and roce_rx (parser) take it from.
//
// The ICRC covers 8 bytes of 0xFF standing in for the InfiniBand LRH, then
// the frame from the IPv4 header on, with the fields a router may change
// replaced by ones (DESIGN.md section 12.5). Both sides run one CRC from
// frame byte 0, so this block replaces, in frame bytes 0..47:
//
//   bytes  0..13  Ethernet header -> FF FF FF FF 00 00 00 00 00 00 FF FF FF FF
//                 (from the all-ones CRC state this leaves the register
//                 exactly where 8 bytes of 0xFF would)
//   byte  15      IPv4 type of service (DSCP, ECN)   -> FF
//   byte  22      IPv4 TTL                           -> FF
//   bytes 24, 25  IPv4 header checksum               -> FF FF
//   bytes 40, 41  UDP checksum                       -> FF FF
//   byte  46      BTH byte 4 (FECN, BECN, reserved)  -> FF
//
// Frame byte f sits in beat f / (DATA_W/8), lane f % (DATA_W/8), bits
// [8*lane +: 8] (little-endian lanes, as on the AXI-Stream ports). The
// beat is named by beat_oh, one-hot (bit b: this is beat b of the frame;
// all zero past the first OH_W beats); beats from 48 bytes on pass through
// unchanged, so OH_W may be wider than the substituted beats.

`resetall
`timescale 1ns / 1ps
`default_nettype none

module icrc_subst #(
    // beat width: 64, 128, 256 or 512
    parameter DATA_W = 64,
    // bits of beat_oh (at least the beats that hold frame bytes 0..47)
    parameter OH_W = 6
) (
    input  wire [OH_W-1:0]   beat_oh,
    input  wire [DATA_W-1:0] in_data,
    output wire [DATA_W-1:0] out_data
);

localparam BL = DATA_W / 8;
// substitutions are all in frame bytes 0..NSUB-1, beats 0..NSB-1
localparam NSUB = 48;
localparam NSB = (NSUB + BL - 1) / BL;

initial begin
    if (DATA_W != 64 && DATA_W != 128 && DATA_W != 256 && DATA_W != 512) begin
        $error("Error: DATA_W must be 64, 128, 256 or 512 (instance %m)");
        $finish;
    end
    if (OH_W < NSB) begin
        $error("Error: OH_W must cover the beats of frame bytes 0..47 (instance %m)");
        $finish;
    end
end

// frame bytes the CRC sees replaced
function is_sub(input integer f);
    begin
        is_sub = (f < 14) || f == 15 || f == 22 || f == 24 || f == 25 ||
                 f == 40 || f == 41 || f == 46;
    end
endfunction

// per frame byte, as bit masks over the first NSB beats: replaced or not,
// and by what (ones everywhere replaced, except frame bytes 4..9: zeros)
function [NSB*DATA_W-1:0] sub_mask(input integer n);
    integer f;
    begin
        sub_mask = {NSB*DATA_W{1'b0}};
        for (f = 0; f < n; f = f + 1) begin
            sub_mask[f*8 +: 8] = {8{is_sub(f)}};
        end
    end
endfunction

function [NSB*DATA_W-1:0] sub_value(input integer n);
    integer f;
    begin
        sub_value = {NSB*DATA_W{1'b0}};
        for (f = 0; f < n; f = f + 1) begin
            sub_value[f*8 +: 8] = (is_sub(f) && (f < 4 || f >= 10)) ? 8'hFF : 8'h00;
        end
    end
endfunction

localparam [NSB*DATA_W-1:0] SUB_M = sub_mask(NSUB);
localparam [NSB*DATA_W-1:0] SUB_V = sub_value(NSUB);

// the substitutions of this beat
reg [DATA_W-1:0] sub_m;
reg [DATA_W-1:0] sub_v;
integer sb;

always @* begin
    sub_m = {DATA_W{1'b0}};
    sub_v = {DATA_W{1'b0}};
    for (sb = 0; sb < NSB; sb = sb + 1) begin
        if (beat_oh[sb]) begin
            sub_m = SUB_M[sb*DATA_W +: DATA_W];
            sub_v = SUB_V[sb*DATA_W +: DATA_W];
        end
    end
end

assign out_data = (in_data & ~sub_m) | sub_v;

generate
    if (OH_W > NSB) begin : g_unused
        // beats past the substitutions pass through
        wire unused_beat_oh = ^beat_oh[OH_W-1:NSB];
    end
endgenerate

endmodule

`resetall
`default_nettype wire
