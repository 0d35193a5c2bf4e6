// Reset sequencer of the GTP PCIe PHY (rnic_gtp7_pipe): brings up the quad
// PLL and the channels in the order UG482 ("7 Series FPGAs GTP Transceivers",
// chapter 2, "Reset and Initialization", sequential mode) asks for, and tells
// the PIPE side when the PHY is ready:
//
//   PLL_RESET  PLL0RESET and GTTXRESET/GTRXRESET high for PLL_RESET_CYCLES
//   PLL_WAIT   PLL0RESET low; wait until PLL0LOCK has been high for
//              LOCK_STABLE_CYCLES (restart after TIMEOUT_CYCLES)
//   GT_RESET   GTTXRESET/GTRXRESET still high for GT_RESET_CYCLES with the PLL
//              locked (UG482: the GT resets must be held until the PLL locks);
//              TXUSERRDY/RXUSERRDY rise here (the user clocks come from the
//              MMCM, which is locked before this module leaves reset)
//   DONE_WAIT  GT resets low; wait until every lane reports TXRESETDONE and
//              RXRESETDONE (restart the GT resets after TIMEOUT_CYCLES)
//   READY      phy_ready high: the lanes stop forcing PHYSTATUS high, so the
//              PIPE side sees PHYSTATUS fall (the PIPE end of reset). A loss
//              of PLL lock starts over from PLL_RESET.
//
// Runs on the PIPE clock (free-running 125 MHz from the MMCM); PLL lock and
// the reset-done flags are asynchronous to it and are synchronized here.
// The cycle counts are not from a document: they are generous margins
// (UG482 gives no minimum GTTXRESET width beyond "held until lock").

`resetall
`timescale 1ns / 1ps
`default_nettype none

module rnic_gtp7_reset #(
    parameter LANES = 4,
    parameter PLL_RESET_CYCLES = 64,
    parameter LOCK_STABLE_CYCLES = 64,
    parameter GT_RESET_CYCLES = 64,
    parameter TIMEOUT_CYCLES = 1 << 20     // 8.4 ms at 125 MHz
) (
    input  wire             clk,
    input  wire             rst,             // active high; may be asynchronous (PERST#, MMCM lock): synchronized here
    input  wire             pll_lock,        // GTPE2_COMMON PLL0LOCK (asynchronous)
    input  wire [LANES-1:0] tx_resetdone,    // GTPE2_CHANNEL TXRESETDONE (asynchronous)
    input  wire [LANES-1:0] rx_resetdone,    // GTPE2_CHANNEL RXRESETDONE (asynchronous)
    output reg              pll_reset = 1'b1,
    output reg              gt_txreset = 1'b1,
    output reg              gt_rxreset = 1'b1,
    output reg              user_rdy = 1'b0,
    output reg              phy_ready = 1'b0,
    output reg  [2:0]       state_out = 3'd0,
    output reg  [7:0]       restarts = 8'd0  // timeouts and lock losses seen (saturating)
);

initial begin
    if (LANES < 1 || LANES > 4) begin
        $error("rnic_gtp7_reset: LANES must be 1..4 (one GTP quad)");
        $finish;
    end
    if (PLL_RESET_CYCLES < 2 || LOCK_STABLE_CYCLES < 2 || GT_RESET_CYCLES < 2 ||
        TIMEOUT_CYCLES <= PLL_RESET_CYCLES + LOCK_STABLE_CYCLES + GT_RESET_CYCLES) begin
        $error("rnic_gtp7_reset: cycle counts too small");
        $finish;
    end
end

localparam [2:0] S_PLL_RESET = 3'd0;
localparam [2:0] S_PLL_WAIT  = 3'd1;
localparam [2:0] S_GT_RESET  = 3'd2;
localparam [2:0] S_DONE_WAIT = 3'd3;
localparam [2:0] S_READY     = 3'd4;

localparam CNT_W = $clog2(TIMEOUT_CYCLES + 1);

// two-flop synchronizers for the reset input and the GT's asynchronous status
(* ASYNC_REG = "TRUE" *) reg [1:0] rst_sync = 2'b11;
(* ASYNC_REG = "TRUE" *) reg [1:0] lock_sync = 2'b00;
(* ASYNC_REG = "TRUE" *) reg [LANES-1:0] txdone_s1 = {LANES{1'b0}};
(* ASYNC_REG = "TRUE" *) reg [LANES-1:0] txdone_s2 = {LANES{1'b0}};
(* ASYNC_REG = "TRUE" *) reg [LANES-1:0] rxdone_s1 = {LANES{1'b0}};
(* ASYNC_REG = "TRUE" *) reg [LANES-1:0] rxdone_s2 = {LANES{1'b0}};
always @(posedge clk) begin
    rst_sync <= {rst_sync[0], rst};
    lock_sync <= {lock_sync[0], pll_lock};
    txdone_s1 <= tx_resetdone;
    txdone_s2 <= txdone_s1;
    rxdone_s1 <= rx_resetdone;
    rxdone_s2 <= rxdone_s1;
end
wire locked = lock_sync[1];
wire all_done = &txdone_s2 && &rxdone_s2;
wire rst_s = rst_sync[1];

reg [2:0]       state = S_PLL_RESET;
reg [CNT_W-1:0] cnt = {CNT_W{1'b0}};     // cycles in this state
reg [CNT_W-1:0] stable = {CNT_W{1'b0}};  // cycles the PLL has been locked

always @(posedge clk) begin
    cnt <= cnt + 1'b1;
    stable <= locked ? (stable == {CNT_W{1'b1}} ? stable : stable + 1'b1) : {CNT_W{1'b0}};
    case (state)
        S_PLL_RESET: begin
            if (cnt == PLL_RESET_CYCLES[CNT_W-1:0] - 1'b1) begin
                state <= S_PLL_WAIT;
                cnt <= {CNT_W{1'b0}};
            end
        end
        S_PLL_WAIT: begin
            if (stable >= LOCK_STABLE_CYCLES[CNT_W-1:0]) begin
                state <= S_GT_RESET;
                cnt <= {CNT_W{1'b0}};
            end else if (cnt == TIMEOUT_CYCLES[CNT_W-1:0]) begin
                state <= S_PLL_RESET;
                cnt <= {CNT_W{1'b0}};
                if (restarts != 8'hff) restarts <= restarts + 8'd1;
            end
        end
        S_GT_RESET: begin
            if (!locked) begin
                state <= S_PLL_RESET;
                cnt <= {CNT_W{1'b0}};
                if (restarts != 8'hff) restarts <= restarts + 8'd1;
            end else if (cnt == GT_RESET_CYCLES[CNT_W-1:0] - 1'b1) begin
                state <= S_DONE_WAIT;
                cnt <= {CNT_W{1'b0}};
            end
        end
        S_DONE_WAIT: begin
            if (!locked) begin
                state <= S_PLL_RESET;
                cnt <= {CNT_W{1'b0}};
                if (restarts != 8'hff) restarts <= restarts + 8'd1;
            end else if (all_done) begin
                state <= S_READY;
                cnt <= {CNT_W{1'b0}};
            end else if (cnt == TIMEOUT_CYCLES[CNT_W-1:0]) begin
                state <= S_GT_RESET;
                cnt <= {CNT_W{1'b0}};
                if (restarts != 8'hff) restarts <= restarts + 8'd1;
            end
        end
        default: begin  // S_READY
            cnt <= {CNT_W{1'b0}};
            if (!locked) begin
                state <= S_PLL_RESET;
                if (restarts != 8'hff) restarts <= restarts + 8'd1;
            end
        end
    endcase
    if (rst_s) begin
        state <= S_PLL_RESET;
        cnt <= {CNT_W{1'b0}};
        restarts <= 8'd0;
    end
end

// registered outputs, decoded from the state being entered
always @(posedge clk) begin
    pll_reset <= state == S_PLL_RESET;
    gt_txreset <= state == S_PLL_RESET || state == S_PLL_WAIT || state == S_GT_RESET;
    gt_rxreset <= state == S_PLL_RESET || state == S_PLL_WAIT || state == S_GT_RESET;
    user_rdy <= state == S_GT_RESET || state == S_DONE_WAIT || state == S_READY;
    phy_ready <= state == S_READY;  // all_done was seen on the way in
    state_out <= state;
    if (rst_s) begin
        pll_reset <= 1'b1;
        gt_txreset <= 1'b1;
        gt_rxreset <= 1'b1;
        user_rdy <= 1'b0;
        phy_ready <= 1'b0;
    end
end

endmodule

`resetall
