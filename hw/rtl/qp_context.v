// QP context: the per-QP configuration the host sets through the QP register
// window (state, path MTU, destination QP, MAC, IP, UDP source port, PD,
// receive CQ, receive ring), with read ports for the requester and the
// responder. The transport moves a QP to ERR on its own; the host moves it
// along RESET -> INIT -> RTR -> RTS (ibv_qp_state numbering).
//
// Destination MACs are kept once in a table of DMAC_N entries shared by the
// QPs (the next hop of every remote peer behind one router is the same
// MAC); a QP holds an index into it. Loading a context finds its MAC in the
// table or takes a free entry; a QP that goes to RESET, or loads another
// MAC, gives its reference back. A load into RTR or RTS that finds neither
// its MAC nor a free entry is refused (reg_err_dmac).
//
// Entering RTR tells the responder to load its expected PSN; entering RTS
// tells the requester to load its send PSN and its retry settings; the host
// moving a QP to ERR tells the requester to flush its outstanding WQEs.
//
// Storage: the fields the host loads (cmd 1) form one record per QP,
// declared once below (QPC_*_LSB/_W), held in block RAM (ram_sdp_copies),
// one copy per read port: port a holds the low QPC_A_W bits (the requester's
// fields), port b the whole record. Every load writes the whole record to
// both copies. The reads are registered: a consumer presents the QP number
// (a_qpn, b_qpn) one cycle ahead, i.e. the value its QP register takes at
// the next edge, and sees that QP's record in the next cycle; a load at
// cycle t is seen from t+1 (the RAMs forward a write to a read of the same
// QP in the same cycle), as with the combinational read before.
//
// Kept in flops, read through the registered QP number: the state (three
// bits, written by the host and by set_err_a and set_err_b in one cycle),
// remote_write and mp (cleared by rst, which block RAM cannot be), and the
// MAC table's bookkeeping (the shared table, its reference counts, and per
// QP whether and which entry it holds: the host path reads these by
// reg_sel in the cycle of the command).

`resetall
`timescale 1ns / 1ps
`default_nettype none

module qp_context #(
    parameter NUM_QP = 16,
    parameter QN_W = 4,
    parameter DMAC_N = 16,              // destination MACs held at once
    parameter RC_EN = 1                 // 0: mp-only build: every QP is mp, rc loads are refused
) (
    input  wire             clk,
    input  wire             rst,

    input  wire [15:0]      reg_sel,
    input  wire [2:0]       reg_state,
    input  wire [2:0]       reg_pmtu,
    input  wire             reg_remote_write,
    input  wire [2:0]       reg_spray_log,      // requester: 2^n UDP source ports per QP
    input  wire             reg_mp,             // transport: 0 rc, 1 mp (multipath)
    input  wire [2:0]       reg_mp_wshift,      // mp window = MP_W >> shift
    input  wire [23:0]      reg_dest_qpn,
    input  wire [23:0]      reg_sq_psn,
    input  wire [23:0]      reg_rq_psn,
    input  wire [47:0]      reg_dmac,
    input  wire [15:0]      reg_udp_sport,
    input  wire [31:0]      reg_dip,
    input  wire [15:0]      reg_pd,
    input  wire [15:0]      reg_rcq,
    input  wire [63:0]      reg_rq_base,
    input  wire [31:0]      reg_rq_size,
    input  wire [4:0]       reg_timeout,        // local ACK timeout exponent (0: none)
    input  wire [2:0]       reg_retry_cnt,
    input  wire [2:0]       reg_rnr_retry,      // 7: unlimited
    input  wire [4:0]       reg_min_rnr_timer,  // RNR NAK timer code the responder sends
    input  wire [3:0]       reg_cmd,
    input  wire             reg_cmd_valid,
    output wire             reg_err,
    output wire             reg_err_dmac,       // with reg_err: the MAC table is full
    output wire [2:0]       sel_state,

    // the transport moves QPs to ERR
    input  wire             set_err_a,
    input  wire [QN_W-1:0]  set_err_a_qpn,
    input  wire             set_err_b,
    input  wire [QN_W-1:0]  set_err_b_qpn,

    output wire             load_rtr,       // pulse: QP load_qpn entered RTR, epsn = load_psn
    output wire             load_rts,       // pulse: QP load_qpn entered RTS, sq_psn = load_psn
    output wire             load_reset,     // pulse: QP load_qpn was reset: clear its transport state
    output wire [QN_W-1:0]  load_qpn,
    output wire [QN_W-1:0]  load_qpn_next,  // load_qpn of a load pulse in the next cycle (the host's selector)
    output wire [23:0]      load_psn,
    output wire [10:0]      load_retry,     // {rnr_retry, retry_cnt, timeout}, with load_rts
    output wire [2:0]       load_spray,     // spray_log, with load_rts (path health)
    output wire             load_err,       // pulse: the host moved QP load_qpn to ERR

    // requester read port
    input  wire [QN_W-1:0]  a_qpn,
    output wire [2:0]       a_state,
    output wire [2:0]       a_pmtu,
    output wire [23:0]      a_dest_qpn,
    output wire [47:0]      a_dmac,
    output wire [31:0]      a_dip,
    output wire [15:0]      a_udp_sport,
    output wire [2:0]       a_spray_log,
    output wire             a_mp,
    output wire [2:0]       a_mp_wshift,
    output wire [15:0]      a_pd,

    // responder read port
    input  wire [QN_W-1:0]  b_qpn,
    output wire [2:0]       b_state,
    output wire [2:0]       b_pmtu,
    output wire             b_remote_write,
    output wire [23:0]      b_dest_qpn,
    output wire [47:0]      b_dmac,
    output wire [31:0]      b_dip,
    output wire [15:0]      b_udp_sport,
    output wire [15:0]      b_pd,
    output wire [QN_W-1:0]  b_rcq,
    output wire [63:0]      b_rq_base,
    output wire [3:0]       b_rq_log,
    output wire [4:0]       b_min_rnr_timer,
    output wire             b_mp,
    output wire [2:0]       b_mp_wshift
);

localparam [2:0] QPS_RESET = 3'd0, QPS_INIT = 3'd1, QPS_RTR = 3'd2, QPS_RTS = 3'd3, QPS_ERR = 3'd6;
localparam [15:0] NUM_QP16 = NUM_QP[15:0];
localparam MI_W = $clog2(DMAC_N);

// ---------------------------------------------------------------- the record
// One QP's loaded context. The requester's fields come first: port a's copy
// holds bits [QPC_A_W-1:0] only.
localparam QPC_PMTU_W = 3;
localparam QPC_SPRAY_W = 3;
localparam QPC_WSHIFT_W = 3;
localparam QPC_DEST_W = 24;
localparam QPC_DMI_W = MI_W;
localparam QPC_DIP_W = 32;
localparam QPC_SPORT_W = 16;
localparam QPC_PD_W = 16;
localparam QPC_MP_W = 1;        // an mp QP (rc when 0)
localparam QPC_RCQ_W = QN_W;
localparam QPC_RQB_W = 52;
localparam QPC_RQL_W = 4;
localparam QPC_RNRT_W = 5;
localparam QPC_RW_W = 1;        // remote WRITE allowed

localparam QPC_PMTU_LSB = 0;
localparam QPC_SPRAY_LSB = QPC_PMTU_LSB + QPC_PMTU_W;
localparam QPC_WSHIFT_LSB = QPC_SPRAY_LSB + QPC_SPRAY_W;
localparam QPC_DEST_LSB = QPC_WSHIFT_LSB + QPC_WSHIFT_W;
localparam QPC_DMI_LSB = QPC_DEST_LSB + QPC_DEST_W;
localparam QPC_DIP_LSB = QPC_DMI_LSB + QPC_DMI_W;
localparam QPC_SPORT_LSB = QPC_DIP_LSB + QPC_DIP_W;
localparam QPC_PD_LSB = QPC_SPORT_LSB + QPC_SPORT_W;
localparam QPC_MP_LSB = QPC_PD_LSB + QPC_PD_W;
localparam QPC_A_W = QPC_MP_LSB + QPC_MP_W;
localparam QPC_RCQ_LSB = QPC_A_W;
localparam QPC_RQB_LSB = QPC_RCQ_LSB + QPC_RCQ_W;
localparam QPC_RQL_LSB = QPC_RQB_LSB + QPC_RQB_W;
localparam QPC_RNRT_LSB = QPC_RQL_LSB + QPC_RQL_W;
localparam QPC_RW_LSB = QPC_RNRT_LSB + QPC_RNRT_W;
localparam QPC_W = QPC_RW_LSB + QPC_RW_W;
// a record as it leaves reset: PMTU 256 (code 1), all else 0
localparam [QPC_W-1:0] QPC_INIT = {{(QPC_W-1){1'b0}}, 1'b1} << QPC_PMTU_LSB;

initial begin
    if (NUM_QP < 1 || NUM_QP > (1 << QN_W) || QN_W > 15) begin
        $error("qp_context: NUM_QP must be 1..2^QN_W, QN_W at most 15");
        $finish;
    end
    if (DMAC_N < 2 || DMAC_N > NUM_QP) begin
        $error("qp_context: DMAC_N must be 2..NUM_QP");
        $finish;
    end
end

// the QP states: a bit vector per bit of the state (QPS_RESET is 0), each
// write decoded once (onehot_decoder), not a 3-bit array with three write
// ports that Yosys builds as a compare per QP and port
reg [NUM_QP-1:0] state_b0_reg = {NUM_QP{1'b0}};
reg [NUM_QP-1:0] state_b1_reg = {NUM_QP{1'b0}};
reg [NUM_QP-1:0] state_b2_reg = {NUM_QP{1'b0}};
(* rnic_copy *)  // (a copy of the record's DMI field: not counted again, hw/state)
reg [MI_W-1:0] dmi_mem [0:NUM_QP-1];    // the QP's entry in the MAC table, for the host path (copy)
reg [NUM_QP-1:0] dmh_reg = {NUM_QP{1'b0}};   // ... while it holds one
reg [47:0] mac_tbl [0:DMAC_N-1];
reg [QN_W:0] mac_ref [0:DMAC_N-1];      // QPs holding each entry (0: free)
reg [QN_W-1:0] a_qpn_reg = {QN_W{1'b0}};
reg [QN_W-1:0] b_qpn_reg = {QN_W{1'b0}};

reg err_reg = 1'b0;
reg err_dmac_reg = 1'b0;
reg load_rtr_reg = 1'b0;
reg load_rts_reg = 1'b0;
reg load_reset_reg = 1'b0;
reg load_err_reg = 1'b0;
reg [10:0] load_retry_reg = 11'd0;
reg [2:0] load_spray_reg = 3'd0;
reg [QN_W-1:0] load_qpn_reg = {QN_W{1'b0}};
reg [23:0] load_psn_reg = 24'd0;

integer i;
initial begin
    for (i = 0; i < NUM_QP; i = i + 1) begin
        dmi_mem[i] = {MI_W{1'b0}};
    end
end

// its own loop variable: Yosys takes the value a loop leaves in a variable
// as that variable's initial value, and two initial loops of different
// lengths over one variable conflict
integer m;
initial begin
    for (m = 0; m < DMAC_N; m = m + 1) begin
        mac_tbl[m] = 48'd0;
        mac_ref[m] = {(QN_W+1){1'b0}};
    end
end

// receive ring size: a power of two 2..32768, or 0 for no receive queue
reg rq_size_ok;
reg [3:0] rq_log;
always @* begin
    rq_size_ok = reg_rq_size == 32'd0;
    rq_log = 4'd0;
    for (i = 1; i < 16; i = i + 1) begin
        if (reg_rq_size == (32'd1 << i)) begin
            rq_size_ok = 1'b1;
            rq_log = i[3:0];
        end
    end
end

wire [QN_W-1:0] sel = reg_sel[QN_W-1:0];
wire sel_ok = reg_sel < NUM_QP16;
wire [2:0] cur = {state_b2_reg[sel], state_b1_reg[sel], state_b0_reg[sel]};
wire pmtu_ok = reg_pmtu >= 3'd1 && reg_pmtu <= 3'd5;
wire state_ok = reg_state <= QPS_RTS || reg_state == QPS_ERR;
wire [15:0] num_qp_cq = NUM_QP16;

// the MAC table entry a context load would use: the one holding its MAC,
// else a free one (the QP's own, if only it holds it, counts as free)
wire [MI_W-1:0] old_mi = dmi_mem[sel];
wire old_held = dmh_reg[sel];
localparam [QN_W:0] REF_ONE = {{QN_W{1'b0}}, 1'b1};
wire [DMAC_N-1:0] mac_hits;
wire [DMAC_N-1:0] mac_frees;
genvar gm;
generate
    for (gm = 0; gm < DMAC_N; gm = gm + 1) begin : g_mac
        assign mac_hits[gm] = mac_ref[gm] != 0 && mac_tbl[gm] == reg_dmac;
        assign mac_frees[gm] = mac_ref[gm] == 0
            || (old_held && old_mi == gm[MI_W-1:0] && mac_ref[gm] == REF_ONE);
    end
endgenerate
wire mac_hit;
wire mac_free;
wire [MI_W-1:0] hit_mi;
wire [MI_W-1:0] free_mi;
priority_encoder #(.WIDTH(DMAC_N), .OUT_W(MI_W)) mac_hit_enc (
    .in(mac_hits),
    .valid(mac_hit),
    .index(hit_mi)
);
priority_encoder #(.WIDTH(DMAC_N), .OUT_W(MI_W)) mac_free_enc (
    .in(mac_frees),
    .valid(mac_free),
    .index(free_mi)
);
wire [MI_W-1:0] new_mi = mac_hit ? hit_mi : free_mi;
// only RTR and RTS need a destination: a QP in INIT takes no entry
wire mac_load = reg_cmd == 4'd1 && (reg_state == QPS_RTR || reg_state == QPS_RTS);

assign reg_err = err_reg;
assign reg_err_dmac = err_dmac_reg;
assign sel_state = sel_ok ? cur : QPS_RESET;
assign load_rtr = load_rtr_reg;
assign load_rts = load_rts_reg;
assign load_reset = load_reset_reg;
assign load_qpn = load_qpn_reg;
// a load takes its QP number from the selector in the command's cycle, so
// a RAM read at this address returns the loaded QP's word with the load
assign load_qpn_next = sel;
assign load_psn = load_psn_reg;
assign load_retry = load_retry_reg;
assign load_spray = load_spray_reg;
assign load_err = load_err_reg;

// a load writes the whole record (a QP keeps its MAC entry unless the load
// takes one)
wire cmd_bad = !sel_ok || !state_ok || (reg_cmd != 4'd1 && reg_cmd != 4'd2);
wire load_bad = reg_cmd == 4'd1 && (!pmtu_ok || reg_spray_log > 3'd6 || !rq_size_ok || reg_rcq >= num_qp_cq
    || reg_rq_base[11:0] != 12'd0);
wire rc_bad = reg_cmd == 4'd1 && RC_EN == 0 && !reg_mp;     // this build has no rc transport
wire dmac_bad = mac_load && !mac_hit && !mac_free;
wire cmd_ok = !cmd_bad && !load_bad && !rc_bad && !dmac_bad;
wire rec_wr = reg_cmd_valid && cmd_ok && reg_cmd == 4'd1;
reg [QPC_W-1:0] rec_in;
always @* begin
    rec_in = {QPC_W{1'b0}};
    rec_in[QPC_PMTU_LSB +: QPC_PMTU_W] = reg_pmtu;
    rec_in[QPC_SPRAY_LSB +: QPC_SPRAY_W] = reg_spray_log;
    rec_in[QPC_WSHIFT_LSB +: QPC_WSHIFT_W] = reg_mp_wshift;
    rec_in[QPC_DEST_LSB +: QPC_DEST_W] = reg_dest_qpn;
    rec_in[QPC_DMI_LSB +: QPC_DMI_W] = mac_load ? new_mi : old_mi;
    rec_in[QPC_DIP_LSB +: QPC_DIP_W] = reg_dip;
    rec_in[QPC_SPORT_LSB +: QPC_SPORT_W] = reg_udp_sport;
    rec_in[QPC_PD_LSB +: QPC_PD_W] = reg_pd;
    rec_in[QPC_MP_LSB] = reg_mp;
    rec_in[QPC_RCQ_LSB +: QPC_RCQ_W] = reg_rcq[QN_W-1:0];
    rec_in[QPC_RQB_LSB +: QPC_RQB_W] = reg_rq_base[63:12];
    rec_in[QPC_RQL_LSB +: QPC_RQL_W] = rq_log;
    rec_in[QPC_RNRT_LSB +: QPC_RNRT_W] = reg_min_rnr_timer;
    rec_in[QPC_RW_LSB] = reg_remote_write;
end

wire [QPC_A_W-1:0] a_rec;
/* verilator lint_off UNUSEDSIGNAL */
wire [QPC_W-1:0] b_rec;     // (its spray field is the requester's)
/* verilator lint_on UNUSEDSIGNAL */

// port a: the low QPC_A_W bits; port b: the whole record
ram_sdp_copies #(
    .DATA_W(QPC_W),
    .ADDR_W(QN_W),
    .DEPTH(NUM_QP),
    .INIT(QPC_INIT),
    .N_RD(2),
    .RD_LSB({32'd0, 32'd0}),
    .RD_W({32'd0 + QPC_W, 32'd0 + QPC_A_W})
) rec_inst (
    .clk(clk),
    .wr_en(rec_wr),
    .wr_addr(sel),
    .wr_data(rec_in),
    .rd_addr({b_qpn, a_qpn}),
    .rd_data({b_rec, a_rec})
);

// the flops are read through the registered QP numbers, in step with the RAMs
always @(posedge clk) begin
    a_qpn_reg <= a_qpn;
    b_qpn_reg <= b_qpn;
end

assign a_state = {state_b2_reg[a_qpn_reg], state_b1_reg[a_qpn_reg], state_b0_reg[a_qpn_reg]};
assign a_pmtu = a_rec[QPC_PMTU_LSB +: QPC_PMTU_W];
assign a_dest_qpn = a_rec[QPC_DEST_LSB +: QPC_DEST_W];
assign a_dmac = mac_tbl[a_rec[QPC_DMI_LSB +: QPC_DMI_W]];
assign a_dip = a_rec[QPC_DIP_LSB +: QPC_DIP_W];
assign a_udp_sport = a_rec[QPC_SPORT_LSB +: QPC_SPORT_W];
assign a_pd = a_rec[QPC_PD_LSB +: QPC_PD_W];
assign a_spray_log = a_rec[QPC_SPRAY_LSB +: QPC_SPRAY_W];
assign a_mp = RC_EN == 0 || a_rec[QPC_MP_LSB];
assign a_mp_wshift = a_rec[QPC_WSHIFT_LSB +: QPC_WSHIFT_W];

assign b_state = {state_b2_reg[b_qpn_reg], state_b1_reg[b_qpn_reg], state_b0_reg[b_qpn_reg]};
assign b_pmtu = b_rec[QPC_PMTU_LSB +: QPC_PMTU_W];
assign b_remote_write = b_rec[QPC_RW_LSB];
assign b_dest_qpn = b_rec[QPC_DEST_LSB +: QPC_DEST_W];
assign b_dmac = mac_tbl[b_rec[QPC_DMI_LSB +: QPC_DMI_W]];
assign b_dip = b_rec[QPC_DIP_LSB +: QPC_DIP_W];
assign b_udp_sport = b_rec[QPC_SPORT_LSB +: QPC_SPORT_W];
assign b_pd = b_rec[QPC_PD_LSB +: QPC_PD_W];
assign b_rcq = b_rec[QPC_RCQ_LSB +: QPC_RCQ_W];
assign b_rq_base = {b_rec[QPC_RQB_LSB +: QPC_RQB_W], 12'd0};
assign b_rq_log = b_rec[QPC_RQL_LSB +: QPC_RQL_W];
assign b_min_rnr_timer = b_rec[QPC_RNRT_LSB +: QPC_RNRT_W];
assign b_mp = RC_EN == 0 || b_rec[QPC_MP_LSB];
assign b_mp_wshift = b_rec[QPC_WSHIFT_LSB +: QPC_WSHIFT_W];

// the error moves (the requester's and the responder's), then the host's
// write, which goes last as it always has
wire host_wr = reg_cmd_valid && cmd_ok;
wire dmh_set = host_wr && mac_load;
wire dmh_clr = host_wr && !mac_load && reg_state == QPS_RESET && old_held;
wire [NUM_QP-1:0] erra_oh, errb_oh, host_oh;
onehot_decoder #(.IN_W(QN_W), .OUT_N(NUM_QP)) erra_dec (.en(set_err_a), .in(set_err_a_qpn), .out(erra_oh));
onehot_decoder #(.IN_W(QN_W), .OUT_N(NUM_QP)) errb_dec (.en(set_err_b), .in(set_err_b_qpn), .out(errb_oh));
onehot_decoder #(.IN_W(QN_W), .OUT_N(NUM_QP)) host_dec (.en(host_wr), .in(sel), .out(host_oh));
wire [NUM_QP-1:0] err_oh = (erra_oh | errb_oh) & ~host_oh;
wire [NUM_QP-1:0] keep_oh = ~(err_oh | host_oh);
always @(posedge clk) begin
    state_b0_reg <= (state_b0_reg & keep_oh) | (QPS_ERR[0] ? err_oh : {NUM_QP{1'b0}})
        | (reg_state[0] ? host_oh : {NUM_QP{1'b0}});
    state_b1_reg <= (state_b1_reg & keep_oh) | (QPS_ERR[1] ? err_oh : {NUM_QP{1'b0}})
        | (reg_state[1] ? host_oh : {NUM_QP{1'b0}});
    state_b2_reg <= (state_b2_reg & keep_oh) | (QPS_ERR[2] ? err_oh : {NUM_QP{1'b0}})
        | (reg_state[2] ? host_oh : {NUM_QP{1'b0}});
    dmh_reg <= (dmh_reg & ~(dmh_clr ? host_oh : {NUM_QP{1'b0}})) | (dmh_set ? host_oh : {NUM_QP{1'b0}});
end

always @(posedge clk) begin
    err_reg <= 1'b0;
    err_dmac_reg <= 1'b0;
    load_rtr_reg <= 1'b0;
    load_rts_reg <= 1'b0;
    load_reset_reg <= 1'b0;
    load_err_reg <= 1'b0;

    // (the states and the MAC-held bits: below)

    if (reg_cmd_valid) begin
        if (!cmd_ok) begin
            err_reg <= 1'b1;
            err_dmac_reg <= !cmd_bad && !load_bad && !rc_bad;   // only the MAC table was full
        end else begin
            // (a load's record goes to the RAMs: rec_wr)
            if (mac_load) begin
                if (!(old_held && old_mi == new_mi)) begin
                    mac_ref[new_mi] <= mac_ref[new_mi] + REF_ONE;
                    if (old_held) begin
                        mac_ref[old_mi] <= mac_ref[old_mi] - REF_ONE;
                    end
                end
                if (!mac_hit) begin
                    mac_tbl[new_mi] <= reg_dmac;
                end
                dmi_mem[sel] <= new_mi;     // (and dmh_set)
            end else if (reg_state == QPS_RESET && old_held) begin
                mac_ref[old_mi] <= mac_ref[old_mi] - REF_ONE;   // (and dmh_clr)
            end
            load_qpn_reg <= sel;
            if (reg_state == QPS_RTR && cur != QPS_RTR) begin
                load_rtr_reg <= 1'b1;
                load_psn_reg <= reg_rq_psn;
            end
            if (reg_state == QPS_RTS && cur != QPS_RTS) begin
                load_rts_reg <= 1'b1;
                load_psn_reg <= reg_sq_psn;
                load_retry_reg <= {reg_rnr_retry, reg_retry_cnt, reg_timeout};
                load_spray_reg <= reg_spray_log;
            end
            if (reg_state == QPS_ERR && cur != QPS_ERR) begin
                load_err_reg <= 1'b1;
            end
            // going to RESET, or leaving it, clears the transport state
            if (reg_state == QPS_RESET || (reg_state == QPS_INIT && cur == QPS_RESET)) begin
                load_reset_reg <= 1'b1;
                load_psn_reg <= 24'd0;
            end
        end
    end

    if (rst) begin
        err_reg <= 1'b0;
        err_dmac_reg <= 1'b0;
        load_rtr_reg <= 1'b0;
        load_rts_reg <= 1'b0;
        load_reset_reg <= 1'b0;
        load_err_reg <= 1'b0;
    end
end

endmodule

`resetall
