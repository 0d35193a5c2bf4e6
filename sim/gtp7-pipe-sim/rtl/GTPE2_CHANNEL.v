// Test-only behavioural model (see below); its parameter and port list is
// boards/artix7-pcie/lint/GTPE2_CHANNEL_ports.vh, shared with the lint declaration.
`timescale 1ns / 1ps
/* verilator lint_off UNUSEDSIGNAL */
/* verilator lint_off UNUSEDPARAM */
/* verilator lint_off BLKSEQ */
module GTPE2_CHANNEL #(
`include "GTPE2_CHANNEL_ports.vh"
);

// Behavioural model of GTPE2_CHANNEL in PCIe mode for the rnic_gtp7_pipe
// test; NOT the vendor's simulation model and not the silicon. It follows
// UG482's description of the behaviour the PHY relies on, simplified:
//
// Line convention (the model has no analog side): P carries the NRZ bit
// stream, N carries the transmitter's bit clock; the receiver samples P on
// the falling edge of N (an ideal CDR). Electrical idle is P = N = 0 (no
// clock). A missing link partner (no receiver termination) is encoded by
// the test as P = 1 with no clock.
//
// Reset: TXRESETDONE/RXRESETDONE rise DONE_CYCLES user-clock cycles after
// GTTXRESET/GTRXRESET fall with TXUSERRDY/RXUSERRDY high and the PLL clock
// running; a GT reset released while the PLL clock is not running leaves the
// channel broken (RESETDONE stays low) until the next GT reset (UG482: hold
// GTTXRESET until the PLL has locked). PHYSTATUS is 0 during reset (the PHY
// must hold the PIPE PhyStatus high itself).
//
// TX: 2 bytes per TXUSRCLK into a TX buffer, 8b/10b with running
// disparity (TXCHARDISPMODE=1/VAL=0 forces negative disparity on that byte),
// serialized first bit = 'a'. TXELECIDLE or a power state other than P0
// puts the line into electrical idle.
//
// RX: bit-level comma detection on ALIGN_PCOMMA_VALUE / ALIGN_MCOMMA_VALUE
// (wire order, bit 0 first) realigns the symbol boundary; 8b/10b decode
// (RXSTATUS 4 not in table, 7 disparity error); a 64-symbol elastic buffer
// read 2 symbols per RXUSRCLK once half-full between CLK_COR_MIN_LAT and
// CLK_COR_MAX_LAT (in symbols, a simplification); above MAX_LAT one SKP
// (CLK_COR_SEQ_1_1, one-symbol sequence) that is followed by another SKP is
// removed (RXSTATUS 2), below MIN_LAT one SKP is repeated (RXSTATUS 1);
// overflow 5, underflow 6. RXELECIDLE when the line clock stops for a user
// clock cycle; the buffer is flushed and alignment lost on electrical idle
// (RXBUF_RESET_ON_EIDLE). RXVALID while aligned and the buffer runs.
// RXCHANISALIGNED = RXCHBONDEN and RXVALID (lane-to-lane skew is not
// modelled).
//
// PIPE controls: a change of TXPD gives a one-cycle PHYSTATUS PD_CYCLES
// later; TXDETECTRX rising in P1 gives, DETECT_CYCLES later, one cycle of
// PHYSTATUS with RXSTATUS 3 (partner present) or 0 (absent). RXPD must equal
// TXPD (flagged otherwise).
//
// Sticky flags for the test (public): viol_early_reset, viol_txbuf,
// viol_rxpd, viol_detect_in_p0.

/* verilator lint_off MULTIDRIVEN */
`include "gtp_model_8b10b.vh"

localparam DONE_CYCLES = 40;
localparam PD_CYCLES = 6;
localparam DETECT_CYCLES = 30;
localparam EB_START = (CLK_COR_MIN_LAT + CLK_COR_MAX_LAT) / 2;

function automatic [9:0] rev10(input [9:0] v);
    integer i;
    for (i = 0; i < 10; i = i + 1) rev10[i] = v[9 - i];
endfunction
localparam [9:0] PCOMMA = rev10(ALIGN_PCOMMA_VALUE);  // abcdeifghj, 'a' in bit 9
localparam [9:0] MCOMMA = rev10(ALIGN_MCOMMA_VALUE);
localparam CC_ON = CLK_CORRECT_USE == "TRUE" && CLK_COR_SEQ_LEN == 1;
localparam [8:0] SKP = CLK_COR_SEQ_1_1[8:0];

initial begin
    if (PCS_PCIE_EN != "TRUE" || TX_DATA_WIDTH != 20 || RX_DATA_WIDTH != 20 || TXOUT_DIV != 2 ||
        RXOUT_DIV != 2 || TXBUF_EN != "TRUE" || RXBUF_EN != "TRUE" || CLK_COR_MIN_LAT >= CLK_COR_MAX_LAT ||
        CLK_COR_MAX_LAT > 60) begin
        $display("GTPE2_CHANNEL model: attributes are not a PCIe Gen1 2-byte buffered lane");
        $stop;
    end
end

// decode table, built from the encoder: {valid, k, byte}
reg [9:0] dec_table [0:1023];
integer ti, tk, trd;
reg [10:0] te;
initial begin
    for (ti = 0; ti < 1024; ti = ti + 1) dec_table[ti] = 10'd0;
    for (trd = 0; trd < 2; trd = trd + 1)
        for (tk = 0; tk < 2; tk = tk + 1)
            for (ti = 0; ti < 256; ti = ti + 1)
                if (tk == 0 || gtpm_valid_k(ti[7:0])) begin
                    te = gtpm_enc(tk[0], ti[7:0], trd[0]);
                    dec_table[te[9:0]] = {1'b1, tk[0], ti[7:0]};
                end
end

// sticky test flags
reg viol_early_reset /* verilator public_flat_rw */ = 1'b0;
reg viol_txbuf /* verilator public_flat_rw */ = 1'b0;
reg viol_rxpd /* verilator public_flat_rw */ = 1'b0;
reg viol_detect_in_p0 /* verilator public_flat_rw */ = 1'b0;

// ---------------------------------------------------------------------------
// reset (user clock domain)
// ---------------------------------------------------------------------------
reg [7:0] pll_cnt = 8'd0;          // a counter, not a toggle: 20 bit clocks per user clock would alias
always @(posedge PLL0CLK) pll_cnt <= pll_cnt + 8'd1;
reg [7:0] pll_q = 8'd0;
reg pll_alive = 1'b0;
always @(posedge TXUSRCLK2) begin
    pll_q <= pll_cnt;
    pll_alive <= pll_q != pll_cnt;
end

reg tx_done = 1'b0, rx_done = 1'b0, tx_bad = 1'b0, rx_bad = 1'b0, txr_q = 1'b1, rxr_q = 1'b1;
reg [7:0] tx_cnt = 8'd0, rx_cnt = 8'd0;
always @(posedge TXUSRCLK2) begin
    txr_q <= GTTXRESET;
    rxr_q <= GTRXRESET;
    if (GTTXRESET) begin
        tx_done <= 1'b0; tx_cnt <= 8'd0; tx_bad <= 1'b0;
    end else begin
        if (txr_q && !pll_alive) begin tx_bad <= 1'b1; viol_early_reset <= 1'b1; end
        if (!tx_bad && !(txr_q && !pll_alive) && TXUSERRDY && pll_alive) begin
            if (tx_cnt == DONE_CYCLES) tx_done <= 1'b1; else tx_cnt <= tx_cnt + 8'd1;
        end
    end
    if (GTRXRESET) begin
        rx_done <= 1'b0; rx_cnt <= 8'd0; rx_bad <= 1'b0;
    end else begin
        if (rxr_q && !pll_alive) begin rx_bad <= 1'b1; viol_early_reset <= 1'b1; end
        if (!rx_bad && !(rxr_q && !pll_alive) && RXUSERRDY && pll_alive) begin
            if (rx_cnt == DONE_CYCLES) rx_done <= 1'b1; else rx_cnt <= rx_cnt + 8'd1;
        end
    end
end
assign TXRESETDONE = tx_done;
assign RXRESETDONE = rx_done;

// ---------------------------------------------------------------------------
// TX buffer and serializer
// ---------------------------------------------------------------------------
reg [10:0] txq [0:15];              // {idle, force negative, k, byte}
reg [4:0] txq_wr = 5'd0, txq_rd = 5'd0;
always @(posedge TXUSRCLK2) begin
    if (tx_done) begin
        txq[txq_wr[3:0]] <= {TXELECIDLE || TXPD != 2'b00, TXCHARDISPMODE[0] && !TXCHARDISPVAL[0], TXCHARISK[0], TXDATA[7:0]};
        txq[txq_wr[3:0] + 4'd1] <= {TXELECIDLE || TXPD != 2'b00, TXCHARDISPMODE[1] && !TXCHARDISPVAL[1], TXCHARISK[1], TXDATA[15:8]};
        txq_wr <= txq_wr + 5'd2;
    end else begin
        txq_wr <= txq_rd;           // the buffer is empty while in reset
    end
end

reg [3:0] tx_bit_n = 4'd0;
reg [9:0] tx_code = 10'd0;
reg tx_sym_idle = 1'b1;
reg tx_rd = 1'b0;                   // running disparity, 1 = plus
reg tx_started = 1'b0;
reg tx_p = 1'b0, tx_active = 1'b0;
reg [10:0] tx_e;
reg [10:0] tx_enc;
always @(posedge PLL0CLK) begin
    if (tx_bit_n == 4'd0) begin
        if (!tx_done) begin
            tx_started <= 1'b0;
            tx_sym_idle <= 1'b1;
        end else if (!tx_started && txq_wr - txq_rd >= 5'd4) begin
            tx_started <= 1'b1;
            tx_sym_idle <= 1'b1;
        end else if (tx_started) begin
            if (txq_wr == txq_rd) begin
                viol_txbuf <= 1'b1;
                tx_sym_idle <= 1'b1;
            end else begin
                tx_e = txq[txq_rd[3:0]];
                txq_rd <= txq_rd + 5'd1;
                tx_sym_idle <= tx_e[10];
                if (!tx_e[10]) begin
                    tx_enc = gtpm_enc(tx_e[8], tx_e[7:0], tx_e[9] ? 1'b0 : tx_rd);
                    tx_code <= tx_enc[9:0];
                    tx_rd <= tx_enc[10];
                end
            end
        end
    end
    tx_bit_n <= tx_bit_n == 4'd9 ? 4'd0 : tx_bit_n + 4'd1;
end
// the bit on the line during bit time tx_bit_n - 1 (registered above, so
// one bit clock later than the load): use the loaded symbol's bits in order
always @(posedge PLL0CLK) begin
    tx_active <= !tx_sym_idle_now;
    tx_p <= tx_code_now[4'd9 - tx_bit_now];
end
wire tx_sym_idle_now = tx_sym_idle;
wire [9:0] tx_code_now = tx_code;
wire [3:0] tx_bit_now = tx_bit_n == 4'd0 ? 4'd9 : tx_bit_n - 4'd1;
assign GTPTXP = tx_active ? tx_p : 1'b0;
assign GTPTXN = tx_active ? PLL0CLK : 1'b0;

// ---------------------------------------------------------------------------
// RX: deserializer, comma alignment, decoder (recovered clock = negedge N)
// ---------------------------------------------------------------------------
reg [8:0] rx_sr = 9'd0;
reg [3:0] rx_bit_n = 4'd0;
reg rx_aligned = 1'b0;
reg rx_rd = 1'b0;
reg [7:0] rx_epoch = 8'd0, rx_epoch_seen = 8'd0;
reg [11:0] eb [0:63];               // {status[2:0], k, byte}
reg [6:0] eb_wr = 7'd0;
reg [6:0] eb_rd = 7'd0;
reg eb_ovf = 1'b0;
wire rx_b = GTPRXP ^ RXPOLARITY;
wire [9:0] rx_word = {rx_sr, rx_b};
wire rx_comma = (RXPCOMMAALIGNEN && rx_word == PCOMMA) || (RXMCOMMAALIGNEN && rx_word == MCOMMA);
reg [9:0] rx_dec;
reg [2:0] rx_st;
reg [3:0] rx_ones;
integer oi;
always @(negedge GTPRXN) begin
    rx_sr <= rx_word[8:0];
    if (rx_epoch_seen != rx_epoch) begin
        rx_epoch_seen <= rx_epoch;
        rx_aligned <= 1'b0;
        rx_bit_n <= 4'd0;
    end else if (rx_comma || (rx_aligned && rx_bit_n == 4'd9)) begin
        rx_bit_n <= 4'd0;
        rx_aligned <= 1'b1;
        rx_dec = dec_table[rx_word];
        rx_ones = 4'd0;
        for (oi = 0; oi < 10; oi = oi + 1) rx_ones = rx_ones + {3'd0, rx_word[oi]};
        rx_st = 3'd0;
        if (!rx_dec[9]) rx_st = 3'd4;
        else if ((rx_ones == 4'd6 && rx_rd) || (rx_ones == 4'd4 && !rx_rd)) rx_st = 3'd7;
        if (rx_ones == 4'd6) rx_rd <= 1'b1;
        else if (rx_ones == 4'd4) rx_rd <= 1'b0;
        if (eb_wr - eb_rd >= 7'd62) begin
            eb_ovf <= 1'b1;
        end else begin
            eb[eb_wr[5:0]] <= {rx_st, rx_dec[8:0]};
            eb_wr <= eb_wr + 7'd1;
        end
    end else begin
        rx_bit_n <= rx_bit_n + 4'd1;
    end
end

// ---------------------------------------------------------------------------
// RX: electrical idle, elastic buffer read side, PIPE status (user clock)
// ---------------------------------------------------------------------------
reg [7:0] rec_cnt = 8'd0;
always @(negedge GTPRXN) rec_cnt <= rec_cnt + 8'd1;
reg [7:0] rec_q = 8'd0;
reg [1:0] quiet = 2'b11;
reg elecidle = 1'b1;
always @(posedge RXUSRCLK2) begin
    rec_q <= rec_cnt;
    quiet <= {quiet[0], rec_q == rec_cnt};
    elecidle <= &{quiet, rec_q == rec_cnt};
end
wire partner_present = !(elecidle && GTPRXP);

reg eb_started = 1'b0;
reg ovf_seen = 1'b0;
reg [15:0] rxd = 16'd0;
reg [1:0] rxk = 2'b00;
reg [2:0] rxs = 3'd0;
reg rxv = 1'b0;
reg phys = 1'b0;
reg [1:0] pd_q = 2'b10;
reg [3:0] pd_cnt = 4'd0;
reg det_q = 1'b0;
reg [5:0] det_cnt = 6'd0;
reg [6:0] lvl;
reg [6:0] rp;
reg [11:0] h;
reg [2:0] ws;
reg cc_done;
integer s;
always @(posedge RXUSRCLK2) begin
    phys <= 1'b0;
    rxs <= 3'd0;
    rxv <= 1'b0;
    // electrical idle or reset: flush and lose alignment
    if (!rx_done || elecidle) begin
        if (eb_started || eb_rd != eb_wr) rx_epoch <= rx_epoch + 8'd1;
        eb_started <= 1'b0;
        eb_rd <= eb_wr;
        ovf_seen <= 1'b0;
        rxd <= 16'd0;
        rxk <= 2'b00;
    end else begin
        lvl = eb_wr - eb_rd;
        if (!eb_started) begin
            if (lvl >= EB_START[6:0]) eb_started <= 1'b1;
        end else begin
            rp = eb_rd;
            ws = 3'd0;
            cc_done = 1'b0;
            for (s = 0; s < 2; s = s + 1) begin
                h = eb[rp[5:0]];
                if (CC_ON && !cc_done && lvl > CLK_COR_MAX_LAT[6:0] && h[8:0] == SKP &&
                    eb[rp[5:0] + 6'd1][8:0] == SKP && eb_wr - rp >= 7'd2) begin
                    rp = rp + 7'd1;      // drop one SKP
                    lvl = lvl - 7'd1;
                    h = eb[rp[5:0]];
                    ws = 3'd2;
                    cc_done = 1'b1;
                end
                if (eb_wr == rp) begin
                    ws = 3'd6;           // underflow
                    h = 12'd0;
                end else if (CC_ON && !cc_done && lvl < CLK_COR_MIN_LAT[6:0] && h[8:0] == SKP) begin
                    ws = 3'd1;           // repeat this SKP
                    cc_done = 1'b1;
                end else begin
                    rp = rp + 7'd1;
                    lvl = lvl - 7'd1;
                    if (h[11:9] != 3'd0) ws = h[11:9];
                end
                if (s == 0) begin rxd[7:0] <= h[7:0]; rxk[0] <= h[8]; end
                else begin rxd[15:8] <= h[7:0]; rxk[1] <= h[8]; end
            end
            if (eb_ovf && !ovf_seen) begin
                ws = 3'd5;
                ovf_seen <= 1'b1;
            end
            eb_rd <= rp;
            rxs <= ws;
            rxv <= rx_aligned;
        end
    end
    // PIPE power states and receiver detection (PCIe mode)
    if (tx_done) begin
        pd_q <= TXPD;
        if (RXPD != TXPD) viol_rxpd <= 1'b1;
        if (TXPD != pd_q) pd_cnt <= PD_CYCLES[3:0];
        else if (pd_cnt != 4'd0) begin
            pd_cnt <= pd_cnt - 4'd1;
            if (pd_cnt == 4'd1) phys <= 1'b1;
        end
        det_q <= TXDETECTRX;
        if (TXDETECTRX && !det_q) begin
            if (TXPD == 2'b10) det_cnt <= DETECT_CYCLES[5:0];
            else if (TXPD == 2'b00) viol_detect_in_p0 <= 1'b1;  // loopback request: not modelled
        end else if (det_cnt != 6'd0) begin
            det_cnt <= det_cnt - 6'd1;
            if (det_cnt == 6'd1) begin
                phys <= 1'b1;
                rxs <= partner_present ? 3'd3 : 3'd0;
            end
        end
    end else begin
        pd_q <= TXPD;
        pd_cnt <= 4'd0;
        det_cnt <= 6'd0;
    end
end
assign RXDATA = {16'd0, rxd};
assign RXCHARISK = {2'b00, rxk};
assign RXSTATUS = rxs;
assign RXVALID = rxv;
assign PHYSTATUS = phys;
assign RXELECIDLE = elecidle;
assign RXCHANISALIGNED = RXCHBONDEN && rxv;
assign RXCHBONDO = 4'd0;
/* verilator lint_on MULTIDRIVEN */
endmodule
