// QP context: the per-QP configuration the host sets through the QP register
// window (state, path MTU, destination QP, MAC, IP, UDP source port, PD,
// receive CQ, receive ring), with read ports for the requester and the
// responder. The transport moves a QP to ERR on its own; the host moves it
// along RESET -> INIT -> RTR -> RTS (ibv_qp_state numbering).
//
// Entering RTR tells the responder to load its expected PSN; entering RTS
// tells the requester to load its send PSN and its retry settings; the host
// moving a QP to ERR tells the requester to flush its outstanding WQEs.

`resetall
`timescale 1ns / 1ps
`default_nettype none

module qp_context #(
    parameter NUM_QP = 16,
    parameter QN_W = 4
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
    output wire [23:0]      load_psn,
    output wire [10:0]      load_retry,     // {rnr_retry, retry_cnt, timeout}, with load_rts
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

initial begin
    if (NUM_QP < 1 || NUM_QP > (1 << QN_W) || QN_W > 15) begin
        $error("qp_context: NUM_QP must be 1..2^QN_W, QN_W at most 15");
        $finish;
    end
end

reg [2:0] state_mem [0:NUM_QP-1];
reg [2:0] pmtu_mem [0:NUM_QP-1];
reg [NUM_QP-1:0] rw_reg = {NUM_QP{1'b0}};
reg [NUM_QP-1:0] mp_reg = {NUM_QP{1'b0}};
reg [23:0] dest_mem [0:NUM_QP-1];
reg [47:0] dmac_mem [0:NUM_QP-1];
reg [31:0] dip_mem [0:NUM_QP-1];
reg [15:0] sport_mem [0:NUM_QP-1];
reg [15:0] pd_mem [0:NUM_QP-1];
reg [QN_W-1:0] rcq_mem [0:NUM_QP-1];
reg [63:0] rqb_mem [0:NUM_QP-1];
reg [3:0] rql_mem [0:NUM_QP-1];
reg [4:0] rnrt_mem [0:NUM_QP-1];
reg [2:0] spray_mem [0:NUM_QP-1];
reg [2:0] wshift_mem [0:NUM_QP-1];

reg err_reg = 1'b0;
reg load_rtr_reg = 1'b0;
reg load_rts_reg = 1'b0;
reg load_reset_reg = 1'b0;
reg load_err_reg = 1'b0;
reg [10:0] load_retry_reg = 11'd0;
reg [QN_W-1:0] load_qpn_reg = {QN_W{1'b0}};
reg [23:0] load_psn_reg = 24'd0;

integer i;
initial begin
    for (i = 0; i < NUM_QP; i = i + 1) begin
        state_mem[i] = QPS_RESET;
        pmtu_mem[i] = 3'd1;
        dest_mem[i] = 24'd0;
        dmac_mem[i] = 48'd0;
        dip_mem[i] = 32'd0;
        sport_mem[i] = 16'd0;
        pd_mem[i] = 16'd0;
        rcq_mem[i] = {QN_W{1'b0}};
        rqb_mem[i] = 64'd0;
        rql_mem[i] = 4'd0;
        rnrt_mem[i] = 5'd0;
        spray_mem[i] = 3'd0;
        wshift_mem[i] = 3'd0;
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
wire [2:0] cur = state_mem[sel];
wire pmtu_ok = reg_pmtu >= 3'd1 && reg_pmtu <= 3'd5;
wire state_ok = reg_state <= QPS_RTS || reg_state == QPS_ERR;
wire [15:0] num_qp_cq = NUM_QP16;

assign reg_err = err_reg;
assign sel_state = sel_ok ? cur : QPS_RESET;
assign load_rtr = load_rtr_reg;
assign load_rts = load_rts_reg;
assign load_reset = load_reset_reg;
assign load_qpn = load_qpn_reg;
assign load_psn = load_psn_reg;
assign load_retry = load_retry_reg;
assign load_err = load_err_reg;

assign a_state = state_mem[a_qpn];
assign a_pmtu = pmtu_mem[a_qpn];
assign a_dest_qpn = dest_mem[a_qpn];
assign a_dmac = dmac_mem[a_qpn];
assign a_dip = dip_mem[a_qpn];
assign a_udp_sport = sport_mem[a_qpn];
assign a_pd = pd_mem[a_qpn];
assign a_spray_log = spray_mem[a_qpn];
assign a_mp = mp_reg[a_qpn];
assign a_mp_wshift = wshift_mem[a_qpn];

assign b_state = state_mem[b_qpn];
assign b_pmtu = pmtu_mem[b_qpn];
assign b_remote_write = rw_reg[b_qpn];
assign b_dest_qpn = dest_mem[b_qpn];
assign b_dmac = dmac_mem[b_qpn];
assign b_dip = dip_mem[b_qpn];
assign b_udp_sport = sport_mem[b_qpn];
assign b_pd = pd_mem[b_qpn];
assign b_rcq = rcq_mem[b_qpn];
assign b_rq_base = rqb_mem[b_qpn];
assign b_rq_log = rql_mem[b_qpn];
assign b_min_rnr_timer = rnrt_mem[b_qpn];
assign b_mp = mp_reg[b_qpn];
assign b_mp_wshift = wshift_mem[b_qpn];

always @(posedge clk) begin
    err_reg <= 1'b0;
    load_rtr_reg <= 1'b0;
    load_rts_reg <= 1'b0;
    load_reset_reg <= 1'b0;
    load_err_reg <= 1'b0;

    if (set_err_a) begin
        state_mem[set_err_a_qpn] <= QPS_ERR;
    end
    if (set_err_b) begin
        state_mem[set_err_b_qpn] <= QPS_ERR;
    end

    if (reg_cmd_valid) begin
        if (!sel_ok || !state_ok || (reg_cmd != 4'd1 && reg_cmd != 4'd2)) begin
            err_reg <= 1'b1;
        end else if (reg_cmd == 4'd1 && (!pmtu_ok || reg_spray_log > 3'd6 || !rq_size_ok || reg_rcq >= num_qp_cq
                || reg_rq_base[5:0] != 6'd0)) begin
            err_reg <= 1'b1;
        end else begin
            state_mem[sel] <= reg_state;
            if (reg_cmd == 4'd1) begin
                pmtu_mem[sel] <= reg_pmtu;
                rw_reg[sel] <= reg_remote_write;
                dest_mem[sel] <= reg_dest_qpn;
                dmac_mem[sel] <= reg_dmac;
                dip_mem[sel] <= reg_dip;
                sport_mem[sel] <= reg_udp_sport;
                pd_mem[sel] <= reg_pd;
                rcq_mem[sel] <= reg_rcq[QN_W-1:0];
                rqb_mem[sel] <= reg_rq_base;
                rql_mem[sel] <= rq_log;
                rnrt_mem[sel] <= reg_min_rnr_timer;
                spray_mem[sel] <= reg_spray_log;
                mp_reg[sel] <= reg_mp;
                wshift_mem[sel] <= reg_mp_wshift;
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
        load_rtr_reg <= 1'b0;
        load_rts_reg <= 1'b0;
        load_reset_reg <= 1'b0;
        load_err_reg <= 1'b0;
        rw_reg <= {NUM_QP{1'b0}};
        mp_reg <= {NUM_QP{1'b0}};
    end
end

endmodule

`resetall
