// Test bench top for rnic_gtp7_pipe (boards/artix7-pcie) with the
// behavioural GTPE2 models of this directory; driven cycle by cycle from
// Rust through csrc/tb.cpp. Per lane the receive pins come from:
//   mode 0: the lane's own transmit pins (loopback through the model),
//   mode 1: the link-partner generator below (its own bit clock far_clk),
//   mode 2: nothing: no receiver termination (P = 1, no clock),
//   mode 3: a present link partner in electrical idle (P = N = 0).
// The link partner sends COM SKP SKP SKP every FAR_PERIOD symbols and
// otherwise data symbols counting up (the test checks the count survives
// clock correction). Test-only.

`timescale 1ns / 1ps
`default_nettype none
/* verilator lint_off BLKSEQ */

module tb_gtp7 #(
    parameter FAR_PERIOD = 40
) (
    input  wire        clk,        // PIPE clock
    input  wire        bit_clk,    // local serial bit clock (fed to the quad as its reference, see the model)
    input  wire        far_clk,    // link partner's bit clock
    input  wire        rst,
    input  wire [7:0]  lane_mode,
    input  wire        far_en,
    input  wire [63:0] pipe_tx_data,
    input  wire [7:0]  pipe_tx_charisk,
    input  wire [3:0]  pipe_tx_elecidle,
    input  wire [3:0]  pipe_tx_compliance,
    input  wire [7:0]  pipe_tx_powerdown,
    input  wire        pipe_tx_rcvrdet,
    input  wire        pipe_tx_rate,
    input  wire [3:0]  pipe_rx_polarity,
    output wire [63:0] pipe_rx_data,
    output wire [7:0]  pipe_rx_charisk,
    output wire [3:0]  pipe_rx_valid,
    output wire [11:0] pipe_rx_status,
    output wire [3:0]  pipe_rx_phystatus,
    output wire [3:0]  pipe_rx_elecidle,
    output wire [3:0]  pipe_rx_chanisaligned,
    output wire        phy_ready,
    output wire        pll_lock,
    output wire [2:0]  reset_state,
    output wire [7:0]  reset_restarts,
    output wire        rate_error,
    // observation of the PHY's internals and the model's flags
    output wire        obs_pll_reset,
    output wire        obs_gt_txreset,
    output wire        obs_gt_rxreset,
    output wire        obs_user_rdy,
    output wire [3:0]  obs_tx_resetdone,
    output wire [3:0]  obs_rx_resetdone,
    output wire [3:0]  obs_viol_early_reset,
    output wire [3:0]  obs_viol_txbuf,
    output wire [3:0]  obs_viol_rxpd,
    output wire [3:0]  obs_viol_detect_p0,
    output wire [3:0]  obs_gt_txchardispmode0,
    output wire [3:0]  obs_gt_rxvalid
);

`include "gtp_model_8b10b.vh"

wire [3:0] txp, txn;
reg  [3:0] rxp, rxn;

rnic_gtp7_pipe #(
    .LANES(4),
    .TIMEOUT_CYCLES(4096)
) phy (
    .clk(clk),
    .rst(rst),
    .gt_refclk(bit_clk),
    .rxp(rxp),
    .rxn(rxn),
    .txp(txp),
    .txn(txn),
    .pipe_tx_data(pipe_tx_data),
    .pipe_tx_charisk(pipe_tx_charisk),
    .pipe_tx_elecidle(pipe_tx_elecidle),
    .pipe_tx_compliance(pipe_tx_compliance),
    .pipe_tx_powerdown(pipe_tx_powerdown),
    .pipe_tx_rcvrdet(pipe_tx_rcvrdet),
    .pipe_tx_deemph(1'b1),
    .pipe_tx_margin(3'd0),
    .pipe_tx_rate(pipe_tx_rate),
    .pipe_rx_polarity(pipe_rx_polarity),
    .pipe_rx_data(pipe_rx_data),
    .pipe_rx_charisk(pipe_rx_charisk),
    .pipe_rx_valid(pipe_rx_valid),
    .pipe_rx_status(pipe_rx_status),
    .pipe_rx_phystatus(pipe_rx_phystatus),
    .pipe_rx_elecidle(pipe_rx_elecidle),
    .pipe_rx_chanisaligned(pipe_rx_chanisaligned),
    .phy_ready(phy_ready),
    .pll_lock(pll_lock),
    .reset_state(reset_state),
    .reset_restarts(reset_restarts),
    .rate_error(rate_error)
);

assign obs_pll_reset = phy.seq.pll_reset;
assign obs_gt_txreset = phy.seq.gt_txreset;
assign obs_gt_rxreset = phy.seq.gt_rxreset;
assign obs_user_rdy = phy.seq.user_rdy;
assign obs_tx_resetdone = phy.tx_resetdone;
assign obs_rx_resetdone = phy.rx_resetdone;
assign obs_viol_early_reset = {phy.lane[3].l.gtp.viol_early_reset, phy.lane[2].l.gtp.viol_early_reset,
                               phy.lane[1].l.gtp.viol_early_reset, phy.lane[0].l.gtp.viol_early_reset};
assign obs_viol_txbuf = {phy.lane[3].l.gtp.viol_txbuf, phy.lane[2].l.gtp.viol_txbuf,
                         phy.lane[1].l.gtp.viol_txbuf, phy.lane[0].l.gtp.viol_txbuf};
assign obs_viol_rxpd = {phy.lane[3].l.gtp.viol_rxpd, phy.lane[2].l.gtp.viol_rxpd,
                        phy.lane[1].l.gtp.viol_rxpd, phy.lane[0].l.gtp.viol_rxpd};
assign obs_viol_detect_p0 = {phy.lane[3].l.gtp.viol_detect_in_p0, phy.lane[2].l.gtp.viol_detect_in_p0,
                             phy.lane[1].l.gtp.viol_detect_in_p0, phy.lane[0].l.gtp.viol_detect_in_p0};
assign obs_gt_txchardispmode0 = {phy.lane[3].l.gtp.TXCHARDISPMODE[0], phy.lane[2].l.gtp.TXCHARDISPMODE[0],
                                 phy.lane[1].l.gtp.TXCHARDISPMODE[0], phy.lane[0].l.gtp.TXCHARDISPMODE[0]};

assign obs_gt_rxvalid = {phy.lane[3].l.gtp.RXVALID, phy.lane[2].l.gtp.RXVALID,
                         phy.lane[1].l.gtp.RXVALID, phy.lane[0].l.gtp.RXVALID};

// link partner: symbol generator and serializer on far_clk
reg [7:0] far_sym_n = 8'd0;
reg [7:0] far_count = 8'd0;
reg [3:0] far_bit = 4'd0;
reg [9:0] far_code = 10'd0;
reg far_rd = 1'b0;
reg far_active = 1'b0;
reg far_p = 1'b0;
reg [8:0] far_s;
reg [10:0] far_e;
always @(posedge far_clk) begin
    if (!far_en) begin
        far_active <= 1'b0;
        far_bit <= 4'd0;
        far_sym_n <= 8'd0;
    end else begin
        if (far_bit == 4'd0) begin
            if (far_sym_n == 8'd0) far_s = {1'b1, 8'hBC};                 // COM
            else if (far_sym_n < 8'd4) far_s = {1'b1, 8'h1C};             // SKP
            else far_s = {1'b0, far_count};
            if (far_sym_n >= 8'd4) far_count <= far_count + 8'd1;
            far_sym_n <= far_sym_n == FAR_PERIOD[7:0] - 8'd1 ? 8'd0 : far_sym_n + 8'd1;
            far_e = gtpm_enc(far_s[8], far_s[7:0], far_rd);
            far_code <= far_e[9:0];
            far_rd <= far_e[10];
            far_p <= far_e[9];
        end else begin
            far_p <= far_code[4'd9 - far_bit];
        end
        far_active <= 1'b1;
        far_bit <= far_bit == 4'd9 ? 4'd0 : far_bit + 4'd1;
    end
end
wire far_line_p = far_active ? far_p : 1'b0;
wire far_line_n = far_active ? far_clk : 1'b0;

integer i;
always @(*) begin
    for (i = 0; i < 4; i = i + 1) begin
        case (lane_mode[2*i +: 2])
            2'd0: begin rxp[i] = txp[i]; rxn[i] = txn[i]; end
            2'd1: begin rxp[i] = far_line_p; rxn[i] = far_line_n; end
            2'd2: begin rxp[i] = 1'b1; rxn[i] = 1'b0; end
            default: begin rxp[i] = 1'b0; rxn[i] = 1'b0; end
        endcase
    end
end

endmodule
