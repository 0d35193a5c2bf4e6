// mp deferred completions: a WRITE_WITH_IMM placed above its QP's
// cumulative point may not complete until the point passes it (the
// completion barrier), so the responder parks its completion (PSN,
// immediate, message length) here and writes it later (ST_MP_PEND). At
// most one per QP, in MP_PEND slots shared by the QPs: a QP without one
// costs a slot number, not a slot; when no slot is free the packet is
// dropped unplaced and resent (the responder checks `avail`).
//
// The responder keeps the per-QP flags (one is parked, one is owed a
// receive WQE); this block keeps the slots, which slot each QP holds, and
// the slot pool:
//   park  (ST_FINISH)   QP qpn's completion takes the lowest free slot
//   done  (ST_FINISH)   QP qpn's parked completion was written: freed
//   drop                a load of QP drop_qpn, which holds one: freed
// The parked completion of qpn is read combinationally (psn, imm, len).

`resetall
`timescale 1ns / 1ps
`default_nettype none

module mp_deferred #(
    parameter NUM_QP = 16,
    parameter QN_W = 4,
    parameter MP_PEND = 8
) (
    input  wire             clk,
    input  wire             rst,

    output wire             avail,

    input  wire [QN_W-1:0]  qpn,
    input  wire             park,
    input  wire [23:0]      park_psn,
    input  wire [31:0]      park_imm,
    input  wire [31:0]      park_len,
    input  wire             done,
    input  wire             drop,
    input  wire [QN_W-1:0]  drop_qpn,

    output wire [23:0]      psn,
    output wire [31:0]      imm,
    output wire [31:0]      len
);

initial begin
    if (MP_PEND < 2 || MP_PEND > NUM_QP || NUM_QP > (1 << QN_W)) begin
        $error("mp_deferred: MP_PEND must be 2..NUM_QP and NUM_QP at most 2^QN_W");
        $finish;
    end
end

localparam PS_W = $clog2(MP_PEND);
localparam [MP_PEND-1:0] ONE = 1;

reg [PS_W-1:0] pslot_mem [0:NUM_QP-1];      // the slot a QP's completion is in
reg [23:0] pend_psn_mem [0:MP_PEND-1];
reg [31:0] pend_imm_mem [0:MP_PEND-1];
reg [31:0] pend_len_mem [0:MP_PEND-1];

integer i;
initial begin
    for (i = 0; i < NUM_QP; i = i + 1) begin
        pslot_mem[i] = {PS_W{1'b0}};
    end
end

wire [PS_W-1:0] slot = pslot_mem[qpn];
wire [PS_W-1:0] pick;
wire [MP_PEND-1:0] give = (done ? ONE << slot : {MP_PEND{1'b0}})
    | (drop ? ONE << pslot_mem[drop_qpn] : {MP_PEND{1'b0}});

/* verilator lint_off PINCONNECTEMPTY */
slot_allocator #(.SLOTS(MP_PEND), .IDX_W(PS_W)) pslot_pool_inst (
    .clk(clk),
    .rst(rst),
    .take(park),
    .give(give),
    .avail(avail),
    .pick(pick),
    .free()
);
/* verilator lint_on PINCONNECTEMPTY */

assign psn = pend_psn_mem[slot];
assign imm = pend_imm_mem[slot];
assign len = pend_len_mem[slot];

always @(posedge clk) begin
    if (park) begin
        pslot_mem[qpn] <= pick;
        pend_psn_mem[pick] <= park_psn;
        pend_imm_mem[pick] <= park_imm;
        pend_len_mem[pick] <= park_len;
    end
end

endmodule

`resetall
