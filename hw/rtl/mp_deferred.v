// mp deferred completions: a WRITE_WITH_IMM placed above its QP's
// cumulative point may not complete until the point passes it (the
// completion barrier), so the responder parks its completion (PSN,
// immediate, message length) here and writes it later (ST_MP_PEND). Up to
// MP_WIMM per QP (OCP MRC's `max_wimm`), in MP_PEND slots shared by the
// QPs; when the QP has MP_WIMM parked or no slot is free the packet is
// dropped unplaced and resent (the responder checks `avail` and `full`).
//
// Each slot names its QP, so a QP with nothing parked costs nothing here.
// A QP's completions are written in PSN order, whatever order they were
// parked in (sprayed packets overtake each other): each slot keeps which
// slots of its QP hold an earlier PSN (`before`, an age matrix by PSN,
// filled in when a slot is parked), and the first is the slot of the QP
// with none. The PSNs parked for one QP lie within its window above the
// point, so a 24-bit serial comparison orders them.
//
//   park  (ST_FINISH)   QP qpn's completion takes the lowest free slot
//   done  (ST_FINISH)   QP qpn's first parked completion was written: freed
//   drop                a load of QP drop_qpn: every slot of it freed
// The first parked completion of qpn is read combinationally (pend, psn,
// imm, len); `full` says qpn holds MP_WIMM. park, done and drop are never
// in one cycle (the responder's write-back waits while a load is on).

`resetall
`timescale 1ns / 1ps
`default_nettype none

module mp_deferred #(
    parameter NUM_QP = 16,
    parameter QN_W = 4,
    parameter MP_PEND = 8,
    parameter MP_WIMM = 4
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
    input  wire [QN_W-1:0]  pin_qpn,
    output wire             pin,        // pin_qpn has one parked (a load would drop it)

    output wire             pend,       // qpn has one parked
    output wire             full,       // ... MP_WIMM of them
    output wire [23:0]      psn,        // the first (lowest PSN) of them
    output wire [31:0]      imm,
    output wire [31:0]      len
);

initial begin
    if (MP_PEND < 2 || MP_PEND > NUM_QP || NUM_QP > (1 << QN_W)) begin
        $error("mp_deferred: MP_PEND must be 2..NUM_QP and NUM_QP at most 2^QN_W");
        $finish;
    end
    if (MP_WIMM < 1 || MP_WIMM > MP_PEND) begin
        $error("mp_deferred: MP_WIMM must be 1..MP_PEND");
        $finish;
    end
end

localparam PS_W = $clog2(MP_PEND);
localparam CNT_W = $clog2(MP_PEND + 1);
localparam [CNT_W-1:0] WIMM_C = MP_WIMM[CNT_W-1:0];

reg [QN_W-1:0] slot_qpn_reg [0:MP_PEND-1];
reg [23:0] pend_psn_mem [0:MP_PEND-1];
reg [31:0] pend_imm_mem [0:MP_PEND-1];
reg [31:0] pend_len_mem [0:MP_PEND-1];
// before_reg[i][j]: slot j holds an earlier PSN of slot i's QP (only read
// where both slots are of one QP and parked)
reg [MP_PEND-1:0] before_reg [0:MP_PEND-1];

integer i, j;
initial begin
    for (i = 0; i < MP_PEND; i = i + 1) begin
        slot_qpn_reg[i] = {QN_W{1'b0}};
        pend_psn_mem[i] = 24'd0;
        pend_imm_mem[i] = 32'd0;
        pend_len_mem[i] = 32'd0;
        before_reg[i] = {MP_PEND{1'b0}};
    end
end

wire [MP_PEND-1:0] free;
wire [PS_W-1:0] pick;

// the slots of qpn and of drop_qpn, and qpn's first
reg [MP_PEND-1:0] mine, dropped, first, pinned;
reg [CNT_W-1:0] count;
always @* begin
    count = {CNT_W{1'b0}};
    for (i = 0; i < MP_PEND; i = i + 1) begin
        mine[i] = !free[i] && slot_qpn_reg[i] == qpn;
        dropped[i] = !free[i] && slot_qpn_reg[i] == drop_qpn;
        pinned[i] = !free[i] && slot_qpn_reg[i] == pin_qpn;
        count = count + {{(CNT_W-1){1'b0}}, mine[i]};
    end
    for (i = 0; i < MP_PEND; i = i + 1) begin
        first[i] = mine[i] && (before_reg[i] & mine) == {MP_PEND{1'b0}};
    end
end
assign pend = mine != {MP_PEND{1'b0}};
assign pin = pinned != {MP_PEND{1'b0}};
assign full = count >= WIMM_C;

// the first's fields (one-hot: at most one slot is first)
reg [23:0] psn_sel;
reg [31:0] imm_sel, len_sel;
always @* begin
    psn_sel = 24'd0;
    imm_sel = 32'd0;
    len_sel = 32'd0;
    for (i = 0; i < MP_PEND; i = i + 1) begin
        if (first[i]) begin
            psn_sel = psn_sel | pend_psn_mem[i];
            imm_sel = imm_sel | pend_imm_mem[i];
            len_sel = len_sel | pend_len_mem[i];
        end
    end
end
assign psn = psn_sel;
assign imm = imm_sel;
assign len = len_sel;

wire [MP_PEND-1:0] give = (done ? first : {MP_PEND{1'b0}}) | (drop ? dropped : {MP_PEND{1'b0}});

/* verilator lint_off PINCONNECTEMPTY */
slot_allocator #(.SLOTS(MP_PEND), .IDX_W(PS_W)) pslot_pool_inst (
    .clk(clk),
    .rst(rst),
    .take(park),
    .give(give),
    .avail(avail),
    .pick(pick),
    .free(free)
);
/* verilator lint_on PINCONNECTEMPTY */

// the new completion against each parked one of its QP: earlier PSN first
reg [MP_PEND-1:0] new_before;
always @* begin
    for (j = 0; j < MP_PEND; j = j + 1) begin
        new_before[j] = (pend_psn_mem[j] - park_psn) >= 24'h800000 ? 1'b1 : 1'b0;
    end
end

always @(posedge clk) begin
    if (park) begin
        slot_qpn_reg[pick] <= qpn;
        pend_psn_mem[pick] <= park_psn;
        pend_imm_mem[pick] <= park_imm;
        pend_len_mem[pick] <= park_len;
        before_reg[pick] <= new_before & mine;
        for (i = 0; i < MP_PEND; i = i + 1) begin
            if (mine[i]) begin
                before_reg[i][pick] <= !new_before[i];
            end
        end
    end
end

endmodule

`resetall
