// The QP directory (issue 19, step 2 of DESIGN.md section 6): QP numbers
// on the wire are not slot numbers. The host binds a QP number (QPN_W
// bits, up to 2^QPN_W of them) to one of the NUM_Q slots that hold the
// per-QP records; received packets name their QP by number and reach the
// responder by slot, and a CQE written by slot leaves with the QP number.
//
// Why: the number of QPs a NIC names must not be the number it holds on
// chip. The cache (qp_ctx_cache) will bind and unbind by itself on a
// miss; until it drives this block, the host binds (BAR0 qp_bind) and
// moves records through the record window. A number is never given to two
// slots, and a stale packet for a number no slot holds is dropped as one
// for a QP that does not exist, whatever slot its old QP had.
//
// Two tables:
//   - by slot (flops, reset): bound bit and QP number. This one is the
//     truth; it answers the CQEs' and the host's questions.
//   - by QP number (block RAM, no reset, three read copies: the receive
//     stage, the bind commands, the host's doorbells by number): a slot
//     hint. A lookup takes the hint and checks it against the slot table, so the
//     RAM needs no sweep after a reset and an unbind is one bit.
//
// Receive path: one register stage (s_pkt -> m_pkt) with the QP number's
// hint read in the same cycle; the check is made on the stage's output, so
// a packet held there by back-pressure while its QP is unbound (or its
// slot bound again) never reaches the old slot. A packet whose QP number
// no slot holds leaves with dest QP 0xFFFFFF, which the responder drops
// and counts as a packet for a QP it does not have (port.rx_drop_qp).
//
// Commands (cmd_valid one cycle, the fields held until busy falls):
//   op 1 bind slot cmd_slot to QP number cmd_qpn; op 2 unbind cmd_slot.
//   cmd_err after the command: 0 done; 2 QP number beyond the directory;
//   3 the number is bound to a slot already; 4 bind: the slot is bound
//   already, unbind: the slot is not bound; 5 slot beyond NUM_Q; 6 bad op.
//   (1 is left for builds without a directory, which answer it always.)
// rb_qpn / rb_bound: slot cmd_slot's binding, registered (a host read of
// qp_bind_status). An unbound slot keeps its last number: a late CQE of a
// destroyed QP still names it. A slot not bound since the reset names
// itself (slot n: number n).

`resetall
`timescale 1ns / 1ps
`default_nettype none

module qp_dir #(
    parameter NUM_Q = 16,
    parameter QN_W = 4,
    parameter QPN_W = 16,            // QP numbers the directory holds: 2^QPN_W
    parameter META_W = 8             // packet fields carried beside the QP number
) (
    input  wire                 clk,
    input  wire                 rst,

    // bind commands (BAR0 qp_bind on slot qp_sel)
    input  wire [15:0]          cmd_slot,
    input  wire [23:0]          cmd_qpn,
    input  wire [1:0]           cmd_op,
    input  wire                 cmd_valid,
    output wire                 busy,
    output reg  [2:0]           cmd_err = 3'd0,
    output reg  [23:0]          rb_qpn = 24'd0,
    output reg                  rb_bound = 1'b0,

    // received packets: QP number in, slot out
    input  wire                 s_pkt_valid,
    output wire                 s_pkt_ready,
    input  wire [23:0]          s_pkt_dest_qp,
    input  wire [META_W-1:0]    s_pkt_meta,
    output wire                 m_pkt_valid,
    input  wire                 m_pkt_ready,
    output wire [23:0]          m_pkt_dest_qp,
    output wire [META_W-1:0]    m_pkt_meta,

    // completions: the QP number last bound to a slot
    input  wire [QN_W-1:0]      cqe_slot,
    output wire [23:0]          cqe_qpn,

    // the host's lookups (doorbells by number): lk_qpn held, the answer
    // from the second cycle on
    input  wire [23:0]          lk_qpn,
    output wire                 lk_hit,
    output wire [QN_W-1:0]      lk_slot,

    // misses (miss_en): a packet whose number no slot holds, within the
    // context table (below miss_records), waits in the stage and is
    // offered to the NIC's fetch (miss_valid, miss_qpn); once its number is
    // bound it leaves for the slot; miss_drop (the fetch failed) lets it
    // leave for no slot
    input  wire                 miss_en,
    input  wire [24:0]          miss_records,
    output wire                 miss_valid,
    output wire [23:0]          miss_qpn,
    input  wire                 miss_drop,

    // the lowest slot at or above free_from that no number is bound to
    // (the fetch fills those before it evicts), a cycle late
    input  wire [15:0]          free_from,
    output reg                  free_valid = 1'b0,
    output reg  [QN_W-1:0]      free_slot = {QN_W{1'b0}},

    // a packet's first look in the stage (look_hit: its number was bound)
    output reg                  look_valid = 1'b0,
    output wire                 look_hit
);

initial begin
    if (NUM_Q < 1 || NUM_Q > (1 << QN_W) || QN_W > 16) begin
        $error("qp_dir: NUM_Q must be 1..2^QN_W, QN_W at most 16");
        $finish;
    end
    if (QPN_W < QN_W || QPN_W > 24) begin
        $error("qp_dir: QPN_W must be QN_W..24");
        $finish;
    end
end

localparam integer DIR_DEPTH = 1 << QPN_W;
localparam [24:0] DIR_END = 25'd1 << QPN_W;
localparam integer NUM_Q_I = NUM_Q;
localparam [16:0] NUM_Q17 = NUM_Q_I[16:0];
localparam [23:0] NO_SLOT = 24'hFFFFFF;

// --- the slot table -------------------------------------------------------
reg [NUM_Q-1:0] bound_reg = {NUM_Q{1'b0}};
// slot s's number at [s*QPN_W +: QPN_W]: a vector, not an array, so that
// Yosys keeps it as the flops it is instead of a memory it must dissolve
reg [NUM_Q*QPN_W-1:0] slot_qpn_reg;

// a slot never bound since the reset names itself (a send queue without a
// QP, a DMA copy queue, keeps its CQEs' QN as it was without a directory)
integer i;
initial begin
    for (i = 0; i < NUM_Q; i = i + 1) begin
        slot_qpn_reg[i*QPN_W +: QPN_W] = i[QPN_W-1:0];
    end
end

// a select per slot (a mux tree), not a shift by s*QPN_W, which Yosys
// builds as a barrel shifter of the whole table
integer k;
function [QPN_W-1:0] slot_qpn(input [QN_W-1:0] s);
    begin
        slot_qpn = {QPN_W{1'b0}};
        for (k = 0; k < NUM_Q; k = k + 1) begin
            if ({{(32-QN_W){1'b0}}, s} == k) begin
                slot_qpn = slot_qpn_reg[k*QPN_W +: QPN_W];
            end
        end
    end
endfunction

// does slot s hold QP number q? (s may be a hint beyond NUM_Q)
function holds(input [QN_W-1:0] s, input [23:0] q);
    begin
        holds = {{(17-QN_W){1'b0}}, s} < NUM_Q17 && {1'b0, q} < DIR_END
            && bound_reg[s] && slot_qpn(s) == q[QPN_W-1:0];
    end
endfunction

// --- the hint RAM: port 0 the receive stage, port 1 the commands, port 2
// the host's lookups ----------------------------------------------------------
reg out_valid_reg = 1'b0;
reg [23:0] out_qpn_reg = 24'd0;
reg [META_W-1:0] out_meta_reg = {META_W{1'b0}};

wire take = s_pkt_valid && s_pkt_ready;
// the address is the stage's QP number, or the next one's as it enters:
// the hint of the stage's packet is on the RAM's output from the next cycle
wire [QPN_W-1:0] rx_addr = take ? s_pkt_dest_qp[QPN_W-1:0] : out_qpn_reg[QPN_W-1:0];
wire [QN_W-1:0] rx_hint;
wire [QN_W-1:0] cmd_hint;
wire [QN_W-1:0] lk_hint;

// a bind writes its hint in the cycle it decides, with the slot table, so
// a packet of the number leaving in the next cycle reads the new hint
wire bind_ok;

ram_sdp_copies #(
    .DATA_W(QN_W),
    .ADDR_W(QPN_W),
    .DEPTH(DIR_DEPTH),
    .N_RD(3)
) hint_inst (
    .clk(clk),
    .wr_en(bind_ok && !rst),
    .wr_addr(cmd_qpn[QPN_W-1:0]),
    .wr_data(cmd_slot[QN_W-1:0]),
    .rd_addr({lk_qpn[QPN_W-1:0], cmd_qpn[QPN_W-1:0], rx_addr}),
    .rd_data({lk_hint, cmd_hint, rx_hint})
);

// --- the receive stage ------------------------------------------------------
// a miss waits: the packet stays in the stage (and the ones behind it) until
// its number is bound or the fetch gave up (miss_drop)
reg drop_reg = 1'b0;
wire out_holds = holds(rx_hint, out_qpn_reg);
wire out_miss = out_valid_reg && miss_en && !out_holds && !drop_reg && {1'b0, out_qpn_reg} < DIR_END
    && {1'b0, out_qpn_reg} < miss_records;
assign miss_valid = out_miss;
assign look_hit = out_holds;
assign miss_qpn = out_qpn_reg;
assign s_pkt_ready = !out_valid_reg || (m_pkt_ready && !out_miss);
assign m_pkt_valid = out_valid_reg && !out_miss;
assign m_pkt_meta = out_meta_reg;
assign m_pkt_dest_qp = out_holds ? {{(24-QN_W){1'b0}}, rx_hint} : NO_SLOT;

always @(posedge clk) begin
    look_valid <= take && !rst;
    if (take) begin
        out_valid_reg <= 1'b1;
        out_qpn_reg <= s_pkt_dest_qp;
        out_meta_reg <= s_pkt_meta;
        drop_reg <= 1'b0;
    end else if (m_pkt_ready && !out_miss) begin
        out_valid_reg <= 1'b0;
    end
    if (miss_drop && out_miss) begin
        drop_reg <= 1'b1;
    end
    if (rst) begin
        out_valid_reg <= 1'b0;
        drop_reg <= 1'b0;
    end
end

// --- commands -----------------------------------------------------------------
// ST_LOOK: the command's number is on the hint RAM's address since
// cmd_valid; its hint is read in this state
localparam [1:0] ST_IDLE = 2'd0, ST_WAIT = 2'd1, ST_LOOK = 2'd2;
reg [1:0] state_reg = ST_IDLE;
assign busy = state_reg != ST_IDLE;

wire [QN_W-1:0] cslot = cmd_slot[QN_W-1:0];
wire slot_in = {1'b0, cmd_slot} < NUM_Q17;
wire qpn_taken = holds(cmd_hint, cmd_qpn);
assign bind_ok = state_reg == ST_LOOK && cmd_op == 2'd1 && slot_in && {1'b0, cmd_qpn} < DIR_END
    && !qpn_taken && !bound_reg[cslot];

always @(posedge clk) begin
    case (state_reg)
        ST_IDLE: begin
            if (cmd_valid) begin
                state_reg <= ST_WAIT;
            end
        end
        ST_WAIT: begin
            state_reg <= ST_LOOK;
        end
        default: begin
            state_reg <= ST_IDLE;
            if (cmd_op != 2'd1 && cmd_op != 2'd2) begin
                cmd_err <= 3'd6;
            end else if (!slot_in) begin
                cmd_err <= 3'd5;
            end else if (cmd_op == 2'd2) begin
                if (!bound_reg[cslot]) begin
                    cmd_err <= 3'd4;
                end else begin
                    bound_reg[cslot] <= 1'b0;
                    cmd_err <= 3'd0;
                end
            end else if ({1'b0, cmd_qpn} >= DIR_END) begin
                cmd_err <= 3'd2;
            end else if (qpn_taken) begin
                cmd_err <= 3'd3;
            end else if (bound_reg[cslot]) begin
                cmd_err <= 3'd4;
            end else begin
                // (bind_ok)
                bound_reg[cslot] <= 1'b1;
                cmd_err <= 3'd0;
            end
        end
    endcase
    if (rst) begin
        state_reg <= ST_IDLE;
        bound_reg <= {NUM_Q{1'b0}};
        cmd_err <= 3'd0;
    end
end

genvar g;
generate
    for (g = 0; g < NUM_Q; g = g + 1) begin : g_slot
        localparam integer G_I = g;
        always @(posedge clk) begin
            if (rst) begin
                slot_qpn_reg[g*QPN_W +: QPN_W] <= G_I[QPN_W-1:0];
            end else if (bind_ok && {{(32-QN_W){1'b0}}, cslot} == G_I) begin
                slot_qpn_reg[g*QPN_W +: QPN_W] <= cmd_qpn[QPN_W-1:0];
            end
        end
    end
endgenerate

// the host's read-back of slot cmd_slot
always @(posedge clk) begin
    rb_bound <= slot_in && bound_reg[cslot];
    rb_qpn <= slot_in ? {{(24-QPN_W){1'b0}}, slot_qpn(cslot)} : 24'd0;
end

assign cqe_qpn = {{(24-QPN_W){1'b0}}, slot_qpn(cqe_slot)};

assign lk_hit = holds(lk_hint, lk_qpn);
assign lk_slot = lk_hint;

wire [NUM_Q-1:0] free_mask = ~bound_reg & ({NUM_Q{1'b1}} << free_from);
wire free_any;
wire [QN_W-1:0] free_first;
priority_encoder #(
    .WIDTH(NUM_Q),
    .OUT_W(QN_W)
) free_enc (
    .in(free_mask),
    .valid(free_any),
    .index(free_first)
);
always @(posedge clk) begin
    free_valid <= free_any && !rst;
    free_slot <= free_first;
end

endmodule

`resetall
