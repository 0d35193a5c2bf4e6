// Shim between the Xilinx 7-series integrated PCIe block (PCIE_2_1) TRN user
// interface and the generic TLP interface of rnic_core (hw/README.md).
//
// TRN conventions this module assumes (7-series PCIe user guide UG477 and the
// vendor's own TRN <-> AXI wrapper, which document the same interface):
// - The first dword of a beat on the wire is in the most significant bits:
//   TRN slot k (k = 0 first) is bits [DATA_W-1-32k -: 32]. Inside a dword the
//   wire byte 0 is bits [31:24] (header fields read as in the PCIe spec); the
//   core's payload is little-endian inside a dword, so every payload dword is
//   byte-swapped here, headers are not.
// - 64-bit: a TLP starts in slot 0; on the EOF beat TRNRREM[0]/TRNTREM[0] = 1
//   when both dwords are valid, 0 when only slot 0 is. 128-bit: on EOF,
//   REM[1:0] = number of valid dwords - 1. Receive may straddle: a beat can
//   carry the end of one TLP in slots 0..1 and the start of the next in slot
//   2; REM[1] on a SOF beat tells where it starts (1: slot 0, 0: slot 2), and
//   since a TLP has at least three dwords this reading is unambiguous also
//   on a beat that has both SOF and EOF. Transmit never straddles.
// - A beat moves when SRCRDY and DSTRDY are both high. TRNTSTR is tied low
//   (no cut-through), so the block tolerates TRNTSRCRDY gaps inside a TLP.
// - New TLPs start only at a packet boundary and only while the block has
//   transmit buffers (TRNTBUFAV above a floor, plus a short pause after a
//   TLP when the count is low), as the vendor wrapper does; a configuration
//   completion the block wants to send (TRNTCFGREQ) is granted with a
//   one-cycle TRNTCFGGNT pulse once this side is idle and drained, after
//   which no TLP starts until TRNTDSTRDY has come back (rising edge, after
//   TCFG_LATENCY cycles).
// - TRNRSRCDSC is sampled with a received beat: the TLP is cut there; if the
//   core already has part of it, the rest of its payload is padded with
//   zero dwords up to the header's length so the core's stream stays framed
//   (the block only discontinues when the link goes down, and the board top
//   resets the core from the block's user reset then).
// These are a model of the hard block's behaviour: the Verilator test in
// sim/pcie7-shim-sim drives the shim with that model; nothing here has run
// against a real PCIE_2_1 yet.
//
// Receive: memory requests (MRd/MWr, 3DW or 4DW) that hit BAR0 go to rx_req,
// completions (Cpl/CplD) to rx_cpl, both with the header taken out of the
// data stream into the 128-bit header port (DW0 in bits 127:96, DW3 zero for
// a 3DW header) and the payload re-aligned so payload dword 0 is in bits
// 31:0 of the first beat; keep comes from the header's length (a TLP digest
// after the payload is dropped). Everything else (messages, I/O, config,
// locked reads, TLP prefixes, requests to another BAR, poisoned requests)
// is consumed and counted in stat_rx_dropped. No UR completion is sent for a
// dropped non-posted request (the block answers UR itself for what its own
// filters reject; BAR0 is the only BAR the top enables).
//
// Transmit ordering rule: a TLP is granted whole (no other TLP's beats
// between its SOF and EOF), and TLPs leave in the order in which their valid
// rose at this module's ports, as far as posted writes are concerned: a
// tx_rd_req or tx_cpl TLP (or an MSI) whose valid rose while a tx_wr_req TLP
// was already waiting here (or in the same cycle) is not granted before that
// write; one that was waiting before the write arrived may go first (PCIe
// lets posted writes pass reads and completions, never the reverse).
// tx_wr_req itself is one in-order stream, so a CQE write never passes its
// payload writes. Reads and completions among themselves alternate. An MSI
// is raised only when no TLP is in progress and every beat already granted
// has been accepted by the block (TRN output register empty), so it is
// behind every earlier write on the TRN interface; that the block then
// keeps its own MSI write behind the TLPs already in its transmit buffer is
// an assumption (posted TLPs in one FIFO), not verified.
//
// MSI: CFGINTERRUPT is held until CFGINTERRUPTRDY; CFGINTERRUPTDI carries
// the core's vector masked to the vectors the host enabled (multiple message
// enable, CFGINTERRUPTMMENABLE: 2^n vectors). With MSI disabled by the host
// the core's request is accepted and counted in stat_msi_dropped (no INTx).
//
// Config: cfg_max_payload / cfg_max_read_req follow CFGDEVCONTROLMAXPAYLOAD
// / CFGDEVCONTROLMAXREADREQ; cfg_requester_id is {bus, device, function},
// which PCIE_2_1 reports on CFGMSGDATA while CFGMSGRECEIVED is low.
//
// Active-low block pins (CFGINTERRUPTN, CFGINTERRUPTRDYN) are inverted in
// the board top; this module's ports are active high.

`resetall
`timescale 1ns / 1ps
`default_nettype none

module rnic_pcie7_shim #(
    parameter DATA_W = 128,          // TRN width = core DATA_W: 64 or 128
    parameter TCFG_LATENCY = 2,      // cycles after TRNTCFGGNT before TRNTDSTRDY is trusted again
    parameter STAT_W = 16            // saturating counter width
) (
    input  wire                  clk,
    input  wire                  rst,

    // TRN receive (block -> user)
    input  wire [DATA_W-1:0]     trn_rd,
    input  wire [1:0]            trn_rrem,
    input  wire                  trn_rsof,
    input  wire                  trn_reof,
    input  wire                  trn_rsrc_rdy,
    output wire                  trn_rdst_rdy,
    input  wire [7:0]            trn_rbar_hit,
    input  wire                  trn_rerrfwd,
    input  wire                  trn_rsrc_dsc,

    // TRN transmit (user -> block)
    output wire [DATA_W-1:0]     trn_td,
    output wire [1:0]            trn_trem,
    output wire                  trn_tsof,
    output wire                  trn_teof,
    output wire                  trn_tsrc_rdy,
    input  wire                  trn_tdst_rdy,
    input  wire [5:0]            trn_tbuf_av,
    output wire                  trn_tsrc_dsc,
    output wire                  trn_tstr,
    output wire                  trn_terrfwd,
    output wire                  trn_tecrc_gen,
    input  wire                  trn_tcfg_req,
    output wire                  trn_tcfg_gnt,
    input  wire                  trn_lnk_up,

    // configuration / interrupt (active high; the top inverts the _N pins)
    output wire                  cfg_interrupt,
    input  wire                  cfg_interrupt_rdy,
    output wire [7:0]            cfg_interrupt_di,
    input  wire                  cfg_interrupt_msienable,
    input  wire [2:0]            cfg_interrupt_mmenable,
    input  wire [2:0]            cfg_dev_control_max_payload,
    input  wire [2:0]            cfg_dev_control_max_read_req,
    input  wire [15:0]           cfg_msg_data,
    input  wire                  cfg_msg_received,

    // rnic_core side
    output wire [127:0]          rx_req_tlp_hdr,
    output wire [DATA_W-1:0]     rx_req_tlp_data,
    output wire [DATA_W/32-1:0]  rx_req_tlp_keep,
    output wire                  rx_req_tlp_valid,
    output wire                  rx_req_tlp_last,
    input  wire                  rx_req_tlp_ready,

    input  wire [127:0]          tx_cpl_tlp_hdr,
    input  wire [DATA_W-1:0]     tx_cpl_tlp_data,
    input  wire [DATA_W/32-1:0]  tx_cpl_tlp_keep,
    input  wire                  tx_cpl_tlp_valid,
    input  wire                  tx_cpl_tlp_last,
    output wire                  tx_cpl_tlp_ready,

    input  wire [127:0]          tx_rd_req_tlp_hdr,
    input  wire                  tx_rd_req_tlp_valid,
    output wire                  tx_rd_req_tlp_ready,

    output wire [127:0]          rx_cpl_tlp_hdr,
    output wire [DATA_W-1:0]     rx_cpl_tlp_data,
    output wire [DATA_W/32-1:0]  rx_cpl_tlp_keep,
    output wire                  rx_cpl_tlp_valid,
    output wire                  rx_cpl_tlp_last,
    input  wire                  rx_cpl_tlp_ready,

    input  wire [127:0]          tx_wr_req_tlp_hdr,
    input  wire [DATA_W-1:0]     tx_wr_req_tlp_data,
    input  wire [DATA_W/32-1:0]  tx_wr_req_tlp_keep,
    input  wire                  tx_wr_req_tlp_valid,
    input  wire                  tx_wr_req_tlp_last,
    output wire                  tx_wr_req_tlp_ready,

    input  wire [4:0]            msi_vector,
    input  wire                  msi_valid,
    output wire                  msi_ready,

    output wire [2:0]            cfg_max_payload,
    output wire [2:0]            cfg_max_read_req,
    output wire [15:0]           cfg_requester_id,

    // saturating event counters
    output wire [STAT_W-1:0]     stat_rx_dropped,     // unsupported / other-BAR / poisoned request TLPs
    output wire [STAT_W-1:0]     stat_rx_malformed,   // framing errors: no SOF, EOF inside the header, payload short of its length
    output wire [STAT_W-1:0]     stat_rx_discontinued,// TLPs cut by TRNRSRCDSC
    output wire [STAT_W-1:0]     stat_msi_dropped     // MSIs asked for while the host had MSI disabled
);

localparam W = DATA_W / 32;          // dwords per beat
localparam CW = 3;                   // width of a dword count 0..4
localparam [CW-1:0] WN = W == 4 ? 3'd4 : 3'd2;
localparam [2:0] TCFG_LAT = TCFG_LATENCY;

// thresholds the vendor wrapper uses for the transmit buffer count
localparam [5:0] TBUF_MIN = W == 4 ? 6'd5 : 6'd1;
localparam [5:0] TBUF_GAP = TBUF_MIN + 6'd1;
localparam [2:0] GAP_TIME = W == 4 ? 3'd4 : 3'd1;

initial begin
    if (DATA_W != 64 && DATA_W != 128) begin
        $error("rnic_pcie7_shim: DATA_W must be 64 or 128 (the PCIE_2_1 TRN widths used here), got %0d", DATA_W);
        $finish;
    end
    if (TCFG_LATENCY < 1 || TCFG_LATENCY > 7) begin
        $error("rnic_pcie7_shim: TCFG_LATENCY must be 1..7");
        $finish;
    end
    if (STAT_W < 1 || STAT_W > 32) begin
        $error("rnic_pcie7_shim: STAT_W must be 1..32");
        $finish;
    end
end

function [31:0] bswap(input [31:0] x);
    bswap = {x[7:0], x[15:8], x[23:16], x[31:24]};
endfunction

// dword k of a TRN beat in wire order
function [31:0] slot(input [DATA_W-1:0] d, input integer k);
    slot = d[DATA_W-1-32*k -: 32];
endfunction

// keep mask of n dwords (n <= W)
function [W-1:0] keep_of(input integer n);
    integer i;
    begin
        keep_of = {W{1'b0}};
        for (i = 0; i < W; i = i + 1) keep_of[i] = i < n;
    end
endfunction

function [STAT_W-1:0] sat_inc(input [STAT_W-1:0] v, input inc);
    sat_inc = (inc && v != {STAT_W{1'b1}}) ? v + 1'b1 : v;
endfunction

// ---------------------------------------------------------------------------
// Configuration values
// ---------------------------------------------------------------------------

reg [2:0] cfg_mps_reg = 3'd0;
reg [2:0] cfg_mrrs_reg = 3'd2;
reg [15:0] cfg_rid_reg = 16'd0;

assign cfg_max_payload = cfg_mps_reg;
assign cfg_max_read_req = cfg_mrrs_reg;
assign cfg_requester_id = cfg_rid_reg;

always @(posedge clk) begin
    cfg_mps_reg <= cfg_dev_control_max_payload;
    cfg_mrrs_reg <= cfg_dev_control_max_read_req;
    if (!trn_lnk_up) begin
        cfg_rid_reg <= 16'd0;
    end else if (!cfg_msg_received) begin
        cfg_rid_reg <= cfg_msg_data;
    end
    if (rst) begin
        cfg_mps_reg <= 3'd0;
        cfg_mrrs_reg <= 3'd2;
        cfg_rid_reg <= 16'd0;
    end
end

// ---------------------------------------------------------------------------
// Receive stage 0: two-entry input buffer, so TRNRDSTRDY is a register
// ---------------------------------------------------------------------------

localparam IB_W = DATA_W + 2 + 1 + 1 + 1 + 1 + 1;   // data, rem, sof, eof, bar0, errfwd, dsc

wire [IB_W-1:0] ib_in = {trn_rd, trn_rrem, trn_rsof, trn_reof, trn_rbar_hit[0], trn_rerrfwd, trn_rsrc_dsc};
reg [IB_W-1:0] ib0 = {IB_W{1'b0}};
reg [IB_W-1:0] ib1 = {IB_W{1'b0}};
reg ib0_v = 1'b0;
reg ib1_v = 1'b0;
reg rdst_rdy_reg = 1'b0;
wire ib_pop;                         // stage A takes ib0 this cycle

assign trn_rdst_rdy = rdst_rdy_reg;
wire ib_push = trn_rsrc_rdy && rdst_rdy_reg;
wire [1:0] ib_cnt_next = {1'b0, ib0_v} + {1'b0, ib1_v} + {1'b0, ib_push} - {1'b0, ib_pop};

always @(posedge clk) begin
    case ({ib_pop, ib_push})
        2'b10: begin
            ib0 <= ib1;
            ib0_v <= ib1_v;
            ib1_v <= 1'b0;
        end
        2'b01: begin
            if (!ib0_v) begin
                ib0 <= ib_in;
                ib0_v <= 1'b1;
            end else begin
                ib1 <= ib_in;
                ib1_v <= 1'b1;
            end
        end
        2'b11: begin
            if (ib1_v) begin
                ib0 <= ib1;
                ib1 <= ib_in;
            end else begin
                ib0 <= ib_in;
            end
        end
        default: ;
    endcase
    // ready next cycle while at most one beat is held then (room for one more)
    rdst_rdy_reg <= ib_cnt_next <= 2'd1;
    if (rst) begin
        ib0_v <= 1'b0;
        ib1_v <= 1'b0;
        rdst_rdy_reg <= 1'b0;
    end
end

wire [DATA_W-1:0] a_d      = ib0[IB_W-1 -: DATA_W];
wire [1:0]        a_rem    = ib0[6:5];
wire              a_sof    = ib0[4];
wire              a_eof    = ib0[3];
wire              a_bar0   = ib0[2];
wire              a_errfwd = ib0[1];
wire              a_dsc    = ib0[0];

// ---------------------------------------------------------------------------
// Receive stage A: cut beats into chunks of one TLP each (a straddled
// 128-bit beat gives two chunks on two cycles), left-aligned: chunk lane j
// (bits 32j+31:32j) is the j-th dword of the chunk in wire order.
// ---------------------------------------------------------------------------

reg [DATA_W-1:0] ch_data = {DATA_W{1'b0}};
reg [CW-1:0]     ch_n = {CW{1'b0}};
reg              ch_first = 1'b0;
reg              ch_last = 1'b0;
reg              ch_bar0 = 1'b0;
reg              ch_errfwd = 1'b0;
reg              ch_dsc = 1'b0;
reg              ch_v = 1'b0;
wire             ch_ready;           // stage B takes the chunk this cycle

reg seg_in_tlp = 1'b0;               // inside a TLP (its SOF seen, EOF not yet)
reg seg_hi = 1'b0;                   // ib0's first half already cut off (128-bit straddle)

wire [1:0] a_sof_slot = (W == 4 && !a_rem[1]) ? 2'd2 : 2'd0;
wire [1:0] a_eof_slot = W == 4 ? a_rem : {1'b0, a_rem[0]};
// on a SOF beat: the EOF is this TLP's own (not the end of the one before)
wire a_eof_own = a_eof && !(a_sof_slot[1] && !a_eof_slot[1]);

reg        a_go;                     // stage A produces a chunk / consumes this cycle
reg        a_pop;
reg        a_bad;
reg [1:0]  a_start;
reg [1:0]  a_end;
reg        a_first;
reg        a_last;
reg        a_in_tlp_n;
reg        a_hi_n;
reg        a_emit;

assign ib_pop = a_pop;

always @* begin
    a_go = ib0_v && (!ch_v || ch_ready);
    a_pop = 1'b0;
    a_bad = 1'b0;
    a_emit = 1'b0;
    a_start = 2'd0;
    a_end = W == 4 ? 2'd3 : 2'd1;
    a_first = 1'b0;
    a_last = 1'b0;
    a_in_tlp_n = seg_in_tlp;
    a_hi_n = seg_hi;
    if (a_go) begin
        if (!seg_in_tlp) begin
            if (!a_sof || (seg_hi && a_sof_slot == 2'd0)) begin
                // nothing starts here: not a TLP boundary we can follow
                a_pop = 1'b1;
                a_bad = 1'b1;
                a_hi_n = 1'b0;
            end else begin
                a_emit = 1'b1;
                a_first = 1'b1;
                a_start = a_sof_slot;
                if (a_eof_own || a_dsc) begin
                    a_last = 1'b1;
                    if (a_eof_own) a_end = a_eof_slot;
                end
                a_pop = 1'b1;
                a_hi_n = 1'b0;
                a_in_tlp_n = !a_last;
            end
        end else begin
            a_emit = 1'b1;
            a_start = 2'd0;
            if (a_eof) a_end = a_eof_slot;
            a_last = a_eof || a_dsc;
            a_in_tlp_n = !a_last;
            if (W == 4 && a_eof && a_sof && a_sof_slot > a_eof_slot && !a_dsc) begin
                // straddle: the next TLP starts in slot 2 of this beat
                a_hi_n = 1'b1;
            end else begin
                a_pop = 1'b1;
                a_hi_n = 1'b0;
            end
        end
    end
end

integer aj;
always @(posedge clk) begin
    if (ch_v && ch_ready) ch_v <= 1'b0;
    if (a_go) begin
        seg_in_tlp <= a_in_tlp_n;
        seg_hi <= a_hi_n;
        if (a_emit) begin
            ch_v <= 1'b1;
            for (aj = 0; aj < W; aj = aj + 1) begin
                ch_data[32*aj +: 32] <= a_start == 2'd0 ? slot(a_d, aj)
                                      : aj < 2 ? slot(a_d, (aj + 2) % W) : 32'd0;
            end
            ch_n <= {1'b0, a_end - a_start} + 1'b1;
            ch_first <= a_first;
            ch_last <= a_last;
            ch_bar0 <= a_bar0;
            ch_errfwd <= a_errfwd;
            ch_dsc <= a_dsc;
        end
    end
    if (rst) begin
        ch_v <= 1'b0;
        seg_in_tlp <= 1'b0;
        seg_hi <= 1'b0;
    end
end

// ---------------------------------------------------------------------------
// Receive stage B: header out, classify, payload re-aligned to lane 0
// ---------------------------------------------------------------------------

localparam [1:0] B_HDR = 2'd0, B_PAY = 2'd1, B_SKIP = 2'd2;

reg [1:0]        b_state = B_HDR;
reg [127:0]      hdr_buf = 128'd0;   // DW k at [127-32k -: 32], as the core wants it
reg [CW-1:0]     hdr_cnt = {CW{1'b0}};
reg              hdr_4dw = 1'b0;
reg              hdr_bar0 = 1'b0;
reg              hdr_errfwd = 1'b0;
reg [DATA_W-1:0] carry = {DATA_W{1'b0}};   // core lane order, payload byte-swapped
reg [CW-1:0]     carry_n = {CW{1'b0}};
reg [10:0]       pay_left = 11'd0;
reg              b_eof = 1'b0;       // TLP ended on TRN with payload still owed: pad
reg              b_cpl = 1'b0;       // destination: 1 = rx_cpl, 0 = rx_req
reg              b_padded = 1'b0;    // zero dwords already padded into this TLP

// output register (shared by rx_req and rx_cpl: one ordered stream)
reg              o_valid = 1'b0;
reg              o_cpl = 1'b0;
reg [127:0]      o_hdr = 128'd0;
reg [DATA_W-1:0] o_data = {DATA_W{1'b0}};
reg [W-1:0]      o_keep = {W{1'b0}};
reg              o_last = 1'b0;

wire o_ready = o_cpl ? rx_cpl_tlp_ready : rx_req_tlp_ready;
wire o_free = !o_valid || o_ready;

assign rx_req_tlp_hdr = o_hdr;
assign rx_req_tlp_data = o_data;
assign rx_req_tlp_keep = o_keep;
assign rx_req_tlp_last = o_last;
assign rx_req_tlp_valid = o_valid && !o_cpl;
assign rx_cpl_tlp_hdr = o_hdr;
assign rx_cpl_tlp_data = o_data;
assign rx_cpl_tlp_keep = o_keep;
assign rx_cpl_tlp_last = o_last;
assign rx_cpl_tlp_valid = o_valid && o_cpl;

// next-state of stage B
reg [1:0]        bn_state;
reg [127:0]      bn_hdr;
reg [CW-1:0]     bn_hdr_cnt;
reg              bn_4dw;
reg              bn_bar0;
reg              bn_errfwd;
reg [DATA_W-1:0] bn_carry;
reg [CW-1:0]     bn_carry_n;
reg [10:0]       bn_pay_left;
reg              bn_eof;
reg              bn_cpl;
reg              bn_padded;
reg              b_take;             // consume the chunk
reg              b_emit;
reg [DATA_W-1:0] b_data;
reg [W-1:0]      b_keep;
reg              b_last;
reg              b_drop;             // count: dropped TLP
reg              b_bad;              // count: malformed framing
reg              b_dsc;              // count: discontinued TLP

// scratch
integer i, h_base, h_len, tot, skip, e_cnt, avail, take, c_i, pl_i, n_i, pl_new;
/* verilator lint_off UNUSEDSIGNAL */
reg [31:0] dw0;                      // only Fmt, Type, EP and Length are looked at
/* verilator lint_on UNUSEDSIGNAL */
reg [DATA_W-1:0] in_dw;              // lane j at [32j +: 32]
reg is_memreq, is_cpl, req_ok, cpl_hit;
reg [10:0] plen;

assign ch_ready = b_take;

always @* begin
    bn_state = b_state;
    bn_hdr = hdr_buf;
    bn_hdr_cnt = hdr_cnt;
    bn_4dw = hdr_4dw;
    bn_bar0 = hdr_bar0;
    bn_errfwd = hdr_errfwd;
    bn_carry = carry;
    bn_carry_n = carry_n;
    bn_pay_left = pay_left;
    bn_eof = b_eof;
    bn_cpl = b_cpl;
    bn_padded = b_padded;
    b_take = 1'b0;
    b_emit = 1'b0;
    b_data = {DATA_W{1'b0}};
    b_keep = {W{1'b0}};
    b_last = 1'b0;
    b_drop = 1'b0;
    b_bad = 1'b0;
    b_dsc = 1'b0;
    dw0 = 32'd0;
    is_memreq = 1'b0;
    is_cpl = 1'b0;
    req_ok = 1'b0;
    cpl_hit = 1'b0;
    plen = 11'd0;
    h_base = 0;
    h_len = 0;
    tot = 0;
    skip = 0;
    e_cnt = 0;
    avail = 0;
    take = 0;
    c_i = {{(32-CW){1'b0}}, carry_n};
    pl_i = {21'd0, pay_left};
    n_i = {{(32-CW){1'b0}}, ch_n};
    pl_new = 0;
    in_dw = {DATA_W{1'b0}};

    if (o_free) begin
        case (b_state)
            B_HDR: begin
                if (ch_v) begin
                    b_take = 1'b1;
                    h_base = ch_first ? 0 : {{(32-CW){1'b0}}, hdr_cnt};
                    if (ch_first) begin
                        bn_4dw = ch_data[29];      // Fmt[0] of DW0
                        bn_bar0 = ch_bar0;
                        bn_errfwd = ch_errfwd;
                    end else begin
                        bn_errfwd = hdr_errfwd || ch_errfwd;
                    end
                    for (i = 0; i < W; i = i + 1) begin
                        if (i < n_i && h_base + i < 4) bn_hdr[127-32*(h_base+i) -: 32] = ch_data[32*i +: 32];
                    end
                    h_len = bn_4dw ? 4 : 3;
                    tot = h_base + n_i;
                    if (ch_dsc) b_dsc = 1'b1;
                    if (tot >= h_len) begin
                        if (!bn_4dw) bn_hdr[31:0] = 32'd0;
                        dw0 = bn_hdr[127:96];
                        is_memreq = dw0[31] == 1'b0 && dw0[28:24] == 5'b00000;
                        is_cpl = dw0[31] == 1'b0 && dw0[28:24] == 5'b01010;
                        req_ok = is_memreq && bn_bar0 && !dw0[14] && !bn_errfwd;
                        cpl_hit = is_cpl;
                        plen = !dw0[30] ? 11'd0 : (dw0[9:0] == 10'd0 ? 11'd1024 : {1'b0, dw0[9:0]});
                        pl_new = {21'd0, plen};
                        skip = h_len - h_base;           // header dwords in this chunk
                        e_cnt = tot - h_len;             // payload dwords in this chunk
                        bn_hdr_cnt = {CW{1'b0}};
                        if (!(req_ok || cpl_hit) || ch_dsc) begin
                            // not for the core (or cut before any beat went out)
                            b_drop = !(req_ok || cpl_hit);
                            bn_state = ch_last ? B_HDR : B_SKIP;
                        end else begin
                            bn_cpl = cpl_hit;
                            bn_carry = {DATA_W{1'b0}};
                            for (i = 0; i < W; i = i + 1) begin
                                if (i < e_cnt) bn_carry[32*i +: 32] = bswap(ch_data[32*(i+skip) +: 32]);
                            end
                            if (pl_new <= e_cnt) begin
                                // whole payload (maybe none) already here: one beat
                                b_emit = 1'b1;
                                for (i = 0; i < W; i = i + 1) begin
                                    b_data[32*i +: 32] = i < pl_new ? bn_carry[32*i +: 32] : 32'd0;
                                end
                                b_keep = keep_of(pl_new);
                                b_last = 1'b1;
                                bn_carry_n = {CW{1'b0}};
                                bn_state = ch_last ? B_HDR : B_SKIP;
                            end else begin
                                bn_carry_n = e_cnt[CW-1:0];
                                bn_pay_left = plen;
                                bn_eof = ch_last;
                                bn_state = B_PAY;
                            end
                        end
                    end else begin
                        bn_hdr_cnt = tot[CW-1:0];
                        if (ch_last) begin
                            // EOF (or discontinue) inside the header
                            b_bad = !ch_dsc;
                            bn_hdr_cnt = {CW{1'b0}};
                        end
                    end
                end
            end
            B_PAY: begin
                if (b_eof || ch_v) begin
                    for (i = 0; i < W; i = i + 1) begin
                        in_dw[32*i +: 32] = b_eof ? 32'd0 : bswap(ch_data[32*i +: 32]);
                    end
                    avail = c_i + (b_eof ? W : n_i);
                    if (!b_eof) begin
                        b_take = 1'b1;
                        if (ch_dsc) b_dsc = 1'b1;
                    end
                    if (avail >= W || avail >= pl_i) begin
                        take = pl_i < W ? pl_i : W;
                        b_emit = 1'b1;
                        for (i = 0; i < W; i = i + 1) begin
                            if (i < take) b_data[32*i +: 32] = i < c_i ? carry[32*i +: 32] : in_dw[32*((i - c_i) % W) +: 32];
                        end
                        b_keep = keep_of(take);
                        b_last = pl_i == take;
                        bn_pay_left = pay_left - take[10:0];
                        // zero dwords padded in: count the TLP once
                        if (b_eof && c_i < take) begin
                            b_bad = !b_padded;
                            bn_padded = 1'b1;
                        end
                        bn_carry = {DATA_W{1'b0}};
                        if (b_last) begin
                            bn_carry_n = {CW{1'b0}};
                            bn_eof = 1'b0;
                            bn_padded = 1'b0;
                            bn_state = (b_eof || ch_last) ? B_HDR : B_SKIP;
                        end else begin
                            for (i = 0; i < W; i = i + 1) begin
                                if (i < avail - W) bn_carry[32*i +: 32] = in_dw[32*((W - c_i + i) % W) +: 32];
                            end
                            bn_carry_n = avail >= W ? avail[CW-1:0] - WN : {CW{1'b0}};
                            if (!b_eof && ch_last) bn_eof = 1'b1;
                        end
                    end else begin
                        // short chunk (only at EOF or after a cut): gather
                        for (i = 0; i < W; i = i + 1) begin
                            if (i >= c_i && i < avail) bn_carry[32*i +: 32] = in_dw[32*((i - c_i) % W) +: 32];
                        end
                        bn_carry_n = avail[CW-1:0];
                        if (ch_last) bn_eof = 1'b1;
                    end
                end
            end
            default: begin // B_SKIP: rest of a dropped TLP, or a digest
                if (ch_v) begin
                    b_take = 1'b1;
                    if (ch_dsc) b_dsc = 1'b1;
                    if (ch_last) bn_state = B_HDR;
                end
            end
        endcase
    end
end

reg [STAT_W-1:0] stat_drop_reg = {STAT_W{1'b0}};
reg [STAT_W-1:0] stat_bad_reg = {STAT_W{1'b0}};
reg [STAT_W-1:0] stat_dsc_reg = {STAT_W{1'b0}};

always @(posedge clk) begin
    b_state <= bn_state;
    hdr_buf <= bn_hdr;
    hdr_cnt <= bn_hdr_cnt;
    hdr_4dw <= bn_4dw;
    hdr_bar0 <= bn_bar0;
    hdr_errfwd <= bn_errfwd;
    carry <= bn_carry;
    carry_n <= bn_carry_n;
    pay_left <= bn_pay_left;
    b_eof <= bn_eof;
    b_cpl <= bn_cpl;
    b_padded <= bn_padded;
    if (b_emit) begin
        o_valid <= 1'b1;
        o_cpl <= bn_cpl;
        o_hdr <= bn_hdr;
        o_data <= b_data;
        o_keep <= b_keep;
        o_last <= b_last;
    end else if (o_ready) begin
        o_valid <= 1'b0;
    end
    stat_drop_reg <= sat_inc(stat_drop_reg, b_drop);
    stat_bad_reg <= sat_inc(stat_bad_reg, b_bad || a_bad);
    stat_dsc_reg <= sat_inc(stat_dsc_reg, b_dsc);
    if (rst) begin
        b_state <= B_HDR;
        hdr_cnt <= {CW{1'b0}};
        carry_n <= {CW{1'b0}};
        b_eof <= 1'b0;
        b_padded <= 1'b0;
        o_valid <= 1'b0;
        stat_drop_reg <= {STAT_W{1'b0}};
        stat_bad_reg <= {STAT_W{1'b0}};
        stat_dsc_reg <= {STAT_W{1'b0}};
    end
end

assign stat_rx_dropped = stat_drop_reg;
assign stat_rx_malformed = stat_bad_reg;
assign stat_rx_discontinued = stat_dsc_reg;

// ---------------------------------------------------------------------------
// Transmit: arbitration (see the ordering rule at the top)
// ---------------------------------------------------------------------------

localparam [1:0] SRC_CPL = 2'd0, SRC_RD = 2'd1, SRC_WR = 2'd2;
localparam [1:0] T_IDLE = 2'd0, T_TLP = 2'd1, T_MSI = 2'd2;

reg [1:0]   t_state = T_IDLE;
reg [1:0]   t_src = SRC_CPL;
reg         rr_rd = 1'b0;            // rd/cpl alternation: 1 = rd goes first next time

// arrival bookkeeping against the waiting write
reg rd_seen = 1'b0, rd_behind = 1'b0;
reg cpl_seen = 1'b0, cpl_behind = 1'b0;
reg msi_seen = 1'b0, msi_behind = 1'b0;

// a source's valid belongs to the TLP in progress until its last beat is taken
wire t_open = t_state == T_TLP && !t_ended;
wire wr_wait = tx_wr_req_tlp_valid && !(t_open && t_src == SRC_WR);
wire rd_wait = tx_rd_req_tlp_valid && !(t_open && t_src == SRC_RD);
wire cpl_wait = tx_cpl_tlp_valid && !(t_open && t_src == SRC_CPL);
wire rd_behind_now = rd_seen ? rd_behind : wr_wait;
wire cpl_behind_now = cpl_seen ? cpl_behind : wr_wait;
wire msi_behind_now = msi_seen ? msi_behind : wr_wait;
wire rd_ok = rd_wait && !rd_behind_now;
wire cpl_ok = cpl_wait && !cpl_behind_now;
wire msi_ok = msi_valid && !msi_behind_now;

// start permission: link up, transmit buffers, no configuration grant pending
reg [5:0] tbuf_d = 6'd0;
reg [2:0] gap_cnt = 3'd0;
reg       tcfg_req_d = 1'b0;
reg       tcfg_pend = 1'b0;
reg       tcfg_hold = 1'b0;
reg [2:0] tcfg_cnt = 3'd0;
reg       tdst_d = 1'b0;
reg       tcfg_gnt_reg = 1'b0;

// TRN output register
reg [DATA_W-1:0] td_reg = {DATA_W{1'b0}};
reg [1:0]        trem_reg = 2'd0;
reg              tsof_reg = 1'b0;
reg              teof_reg = 1'b0;
reg              tsrc_rdy_reg = 1'b0;

wire t_out_free = !tsrc_rdy_reg || trn_tdst_rdy;
wire t_drained = !tsrc_rdy_reg;
wire start_ok = trn_lnk_up && trn_tbuf_av > TBUF_MIN && gap_cnt == 3'd0 && !tcfg_pend && !tcfg_hold;

reg       g_tlp;                     // grant a TLP this cycle
reg [1:0] g_src;
reg       g_msi;                     // grant the MSI this cycle

always @* begin
    g_tlp = 1'b0;
    g_src = SRC_CPL;
    g_msi = 1'b0;
    if (t_state == T_IDLE && start_ok) begin
        if (msi_ok) begin
            // an MSI ahead of every waiting write: wait for the pipe to drain
            g_msi = t_drained;
        end else if (rd_ok && (rr_rd || !cpl_ok)) begin
            g_tlp = 1'b1;
            g_src = SRC_RD;
        end else if (cpl_ok) begin
            g_tlp = 1'b1;
            g_src = SRC_CPL;
        end else if (tx_wr_req_tlp_valid) begin
            g_tlp = 1'b1;
            g_src = SRC_WR;
        end
    end
end

wire wr_grant = g_tlp && g_src == SRC_WR;

// ---------------------------------------------------------------------------
// Transmit: one TLP into TRN beats (header dwords, then the payload shifted
// behind them; payload dwords byte-swapped)
// ---------------------------------------------------------------------------

// the granted source's current beat
wire [127:0]      s_hdr  = t_src == SRC_WR ? tx_wr_req_tlp_hdr : t_src == SRC_RD ? tx_rd_req_tlp_hdr : tx_cpl_tlp_hdr;
wire [DATA_W-1:0] s_data = t_src == SRC_WR ? tx_wr_req_tlp_data : t_src == SRC_RD ? {DATA_W{1'b0}} : tx_cpl_tlp_data;
wire [W-1:0]      s_keep = t_src == SRC_WR ? tx_wr_req_tlp_keep : t_src == SRC_RD ? {W{1'b0}} : tx_cpl_tlp_keep;
wire              s_valid = t_src == SRC_WR ? tx_wr_req_tlp_valid : t_src == SRC_RD ? tx_rd_req_tlp_valid : tx_cpl_tlp_valid;
wire              s_last = t_src == SRC_WR ? tx_wr_req_tlp_last : t_src == SRC_RD ? 1'b1 : tx_cpl_tlp_last;

reg [127:0] tq = 128'd0;             // dwords waiting to go out, next one in [127:96]
reg [CW-1:0] tq_n = {CW{1'b0}};      // how many (0..4)
reg         t_ended = 1'b0;          // the source's last beat has been taken
reg         t_sof = 1'b0;            // next beat out is the TLP's first

reg         tn_take;                 // consume the source's beat
reg         tn_emit;
reg         tn_eof;
reg [DATA_W-1:0] tn_data;
reg [CW-1:0] tn_cnt;                 // dwords in the beat
reg [127:0] tn_q;
reg [CW-1:0] tn_q_n;
reg         tn_ended;
reg         tn_done;
reg         tn_core_err;

integer k, kq, kin, ktot;
reg [DATA_W-1:0] s_dw;               // source lane j, byte-swapped, at [32j +: 32]

always @* begin
    tn_take = 1'b0;
    tn_emit = 1'b0;
    tn_eof = 1'b0;
    tn_data = {DATA_W{1'b0}};
    tn_cnt = {CW{1'b0}};
    tn_q = tq;
    tn_q_n = tq_n;
    tn_ended = t_ended;
    tn_done = 1'b0;
    tn_core_err = 1'b0;
    kq = {{(32-CW){1'b0}}, tq_n};
    kin = 0;
    ktot = 0;
    for (k = 0; k < W; k = k + 1) begin
        s_dw[32*k +: 32] = bswap(s_data[32*k +: 32]);
        if (s_keep[k]) kin = k + 1;
    end
    if (t_state == T_TLP && t_out_free) begin
        if (kq >= W) begin
            // header dwords fill a whole beat
            tn_emit = 1'b1;
            tn_cnt = WN;
            for (k = 0; k < W; k = k + 1) tn_data[DATA_W-1-32*k -: 32] = tq[127-32*k -: 32];
            tn_q = tq << (32 * W);
            tn_q_n = tq_n - WN;
            if (kq == W && !t_ended && s_valid && s_last && kin == 0) begin
                // header-only TLP ending on a full beat
                tn_take = 1'b1;
                tn_eof = 1'b1;
                tn_done = 1'b1;
            end else if (kq == W && t_ended) begin
                tn_eof = 1'b1;
                tn_done = 1'b1;
            end
        end else if (t_ended) begin
            // flush what is left
            tn_emit = kq != 0;
            tn_cnt = tq_n;
            for (k = 0; k < W; k = k + 1) begin
                if (k < kq) tn_data[DATA_W-1-32*k -: 32] = tq[127-32*k -: 32];
            end
            tn_q_n = {CW{1'b0}};
            tn_eof = 1'b1;
            tn_done = 1'b1;
        end else if (s_valid) begin
            tn_take = 1'b1;
            ktot = kq + kin;
            for (k = 0; k < W; k = k + 1) begin
                if (k < kq) tn_data[DATA_W-1-32*k -: 32] = tq[127-32*k -: 32];
                else if (k < ktot) tn_data[DATA_W-1-32*k -: 32] = s_dw[32*((k - kq) % W) +: 32];
            end
            if (s_last && ktot <= W) begin
                tn_emit = ktot != 0;
                tn_core_err = ktot == 0;   // a data TLP whose last beat is empty
                tn_cnt = ktot[CW-1:0];
                tn_q_n = {CW{1'b0}};
                tn_eof = 1'b1;
                tn_done = 1'b1;
            end else if (ktot >= W) begin
                tn_emit = 1'b1;
                tn_cnt = WN;
                tn_q = 128'd0;
                for (k = 0; k < W; k = k + 1) begin
                    if (k < ktot - W) tn_q[127-32*k -: 32] = s_dw[32*((W - kq + k) % W) +: 32];
                end
                tn_q_n = ktot[CW-1:0] - WN;
                tn_ended = s_last;
            end else begin
                // a short beat before the last: gather
                for (k = 0; k < W; k = k + 1) begin
                    if (k >= kq && k < ktot) tn_q[127-32*k -: 32] = s_dw[32*((k - kq) % W) +: 32];
                end
                tn_q_n = ktot[CW-1:0];
            end
        end
    end
end

assign tx_wr_req_tlp_ready = tn_take && t_src == SRC_WR;
assign tx_rd_req_tlp_ready = tn_take && t_src == SRC_RD;
assign tx_cpl_tlp_ready = tn_take && t_src == SRC_CPL;

// MSI
reg       int_reg = 1'b0;
reg [7:0] int_di_reg = 8'd0;
reg [STAT_W-1:0] stat_msi_drop_reg = {STAT_W{1'b0}};
wire [7:0] msi_mask = (8'd1 << cfg_interrupt_mmenable) - 8'd1;

assign msi_ready = g_msi;
assign cfg_interrupt = int_reg;
assign cfg_interrupt_di = int_di_reg;
assign stat_msi_dropped = stat_msi_drop_reg;

assign trn_td = td_reg;
assign trn_trem = trem_reg;
assign trn_tsof = tsof_reg;
assign trn_teof = teof_reg;
assign trn_tsrc_rdy = tsrc_rdy_reg;
assign trn_tsrc_dsc = 1'b0;
assign trn_tstr = 1'b0;
assign trn_terrfwd = 1'b0;
assign trn_tecrc_gen = 1'b0;
assign trn_tcfg_gnt = tcfg_gnt_reg;

wire [1:0] rem_full = W == 4 ? 2'b11 : 2'b01;

always @(posedge clk) begin
    // arbitration bookkeeping
    if (g_tlp && g_src == SRC_RD) begin
        rd_seen <= 1'b0;
        rd_behind <= 1'b0;
    end else if (!rd_wait) begin
        rd_seen <= 1'b0;
        rd_behind <= 1'b0;
    end else if (wr_grant) begin
        rd_seen <= 1'b1;
        rd_behind <= 1'b0;
    end else if (!rd_seen) begin
        rd_seen <= 1'b1;
        rd_behind <= wr_wait;
    end
    if (g_tlp && g_src == SRC_CPL) begin
        cpl_seen <= 1'b0;
        cpl_behind <= 1'b0;
    end else if (!cpl_wait) begin
        cpl_seen <= 1'b0;
        cpl_behind <= 1'b0;
    end else if (wr_grant) begin
        cpl_seen <= 1'b1;
        cpl_behind <= 1'b0;
    end else if (!cpl_seen) begin
        cpl_seen <= 1'b1;
        cpl_behind <= wr_wait;
    end
    if (g_msi || !msi_valid) begin
        msi_seen <= 1'b0;
        msi_behind <= 1'b0;
    end else if (wr_grant) begin
        msi_seen <= 1'b1;
        msi_behind <= 1'b0;
    end else if (!msi_seen) begin
        msi_seen <= 1'b1;
        msi_behind <= wr_wait;
    end

    // TLP engine
    if (g_tlp) begin
        t_state <= T_TLP;
        t_src <= g_src;
        if (g_src == SRC_RD) rr_rd <= 1'b0;
        if (g_src == SRC_CPL) rr_rd <= 1'b1;
        tq <= g_src == SRC_WR ? tx_wr_req_tlp_hdr : g_src == SRC_RD ? tx_rd_req_tlp_hdr : tx_cpl_tlp_hdr;
        tq_n <= (g_src == SRC_WR ? tx_wr_req_tlp_hdr[125] : g_src == SRC_RD ? tx_rd_req_tlp_hdr[125] : tx_cpl_tlp_hdr[125]) ? 3'd4 : 3'd3;
        t_ended <= 1'b0;
        t_sof <= 1'b1;
    end else if (t_state == T_TLP) begin
        tq <= tn_q;
        tq_n <= tn_q_n;
        t_ended <= tn_ended;
        if (tn_emit) t_sof <= 1'b0;
        if (tn_done) t_state <= T_IDLE;
    end

    // TRN output register
    if (t_out_free) begin
        tsrc_rdy_reg <= tn_emit;
        if (tn_emit) begin
            td_reg <= tn_data;
            tsof_reg <= t_sof;
            teof_reg <= tn_eof;
            trem_reg <= !tn_eof ? rem_full : W == 4 ? tn_cnt[1:0] - 2'd1 : {1'b0, tn_cnt == 3'd2};
        end
    end

    // MSI through the configuration interface
    if (g_msi) begin
        if (cfg_interrupt_msienable) begin
            t_state <= T_MSI;
            int_reg <= 1'b1;
            int_di_reg <= {3'd0, msi_vector} & msi_mask;
        end
        stat_msi_drop_reg <= sat_inc(stat_msi_drop_reg, !cfg_interrupt_msienable);
    end else if (t_state == T_MSI && cfg_interrupt_rdy) begin
        int_reg <= 1'b0;
        t_state <= T_IDLE;
    end

    // transmit buffer pause
    tbuf_d <= trn_tbuf_av;
    if ((trn_tsrc_rdy && trn_tdst_rdy && teof_reg && trn_tbuf_av <= TBUF_GAP)
            || (trn_tbuf_av == TBUF_GAP && tbuf_d == TBUF_GAP + 6'd1)) begin
        gap_cnt <= GAP_TIME;
    end else if (gap_cnt != 3'd0) begin
        gap_cnt <= gap_cnt - 3'd1;
    end

    // configuration-completion grant: once per request, at a TLP boundary
    tcfg_req_d <= trn_tcfg_req;
    tdst_d <= trn_tdst_rdy;
    tcfg_gnt_reg <= 1'b0;
    if (trn_tcfg_req && !tcfg_req_d) tcfg_pend <= 1'b1;
    if (tcfg_pend && t_state == T_IDLE && t_drained && !g_tlp && !g_msi) begin
        tcfg_gnt_reg <= 1'b1;
        tcfg_pend <= 1'b0;
        tcfg_hold <= 1'b1;
        tcfg_cnt <= TCFG_LAT;
    end else if (tcfg_hold) begin
        if (tcfg_cnt != 3'd0) begin
            tcfg_cnt <= tcfg_cnt - 3'd1;
        end else if (trn_tdst_rdy && !tdst_d) begin
            tcfg_hold <= 1'b0;
        end
    end

    if (rst) begin
        t_state <= T_IDLE;
        rr_rd <= 1'b0;
        rd_seen <= 1'b0;
        rd_behind <= 1'b0;
        cpl_seen <= 1'b0;
        cpl_behind <= 1'b0;
        msi_seen <= 1'b0;
        msi_behind <= 1'b0;
        tq_n <= {CW{1'b0}};
        t_ended <= 1'b0;
        tsrc_rdy_reg <= 1'b0;
        int_reg <= 1'b0;
        gap_cnt <= 3'd0;
        tcfg_pend <= 1'b0;
        tcfg_hold <= 1'b0;
        tcfg_gnt_reg <= 1'b0;
        stat_msi_drop_reg <= {STAT_W{1'b0}};
    end
end

// the source's header is taken at grant; the core's copy on later beats is
// not looked at; only BAR0 is enabled in the top
/* verilator lint_off UNUSEDSIGNAL */
wire [6:0] unused_bar = trn_rbar_hit[7:1];
wire [127:0] unused_s_hdr = s_hdr;
wire unused_core_err = tn_core_err;
/* verilator lint_on UNUSEDSIGNAL */

endmodule

`resetall
