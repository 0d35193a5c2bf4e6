// Replay records of the atomics this NIC executed as a responder. A
// duplicate atomic (the requester's retry after its ATOMIC ACKNOWLEDGE was
// lost) must be answered with the original value of the first execution
// and never executed again.
//
// As Linux rxe keeps its responder resources, each QP keeps the records of
// its last DEPTH executions in a ring of its own, DEPTH being the largest
// max_dest_rd_atomic a QP may grant: a requester within its max_rd_atomic
// has at most that many READs and atomics unanswered, each atomic among
// them executed after the ones before it, so the record of any atomic it
// may still retry is among its QP's last DEPTH. A duplicate whose record is
// gone (a stale copy the fabric kept of an atomic answered long ago) finds
// none: the responder drops it, never executes it twice.
//
// Storage, in block RAM at the QP's number: DEPTH slot RAMs (ARS: PSN,
// original value) and the ring (ARM: the slots holding a record of the
// current connection, the slot written next), the latter twice (a read
// port for lookups, one for records): 4 x 88 + 6 bits per QP at DEPTH 4.
//
// - A lookup (QP, PSN) reads the QP's slots and ARM and answers two cycles
//   later (lk_hit, lk_orig), from registers, with the records as they were
//   after the cycle of the lookup (a record written in that cycle is seen);
//   of several records of the PSN, the newest. lk_orig is 0 on a miss.
// - A record reads its QP's ARM in its cycle and writes its slot and
//   ARM in the next, unless a clear takes the ARM write port then: it
//   waits a cycle. (Records come at least three cycles apart and clears
//   two, so at most one record waits: read_reply executes one atomic at a
//   time, a DMA read and write each, and a clear is a QP command.)
// - A clear (a QP loaded: a new connection) writes the QP's ARM empty:
//   its old records never match again. A record of the QP cleared, in the
//   clear's cycle or waiting, is dropped (it is the old connection's).
// - A reset drops a record that arrives in its cycle or would wait through
//   it (a record in its write cycle is written), and the answer due after
//   it is a miss; it clears no ARM (block RAM has no reset): no atomic
//   reaches a QP before its load, which clears it.
//
// Record port (REC_EN 1; DESIGN.md section 6, step 1): ARM and the DEPTH
// slot RAMs are ram_rec, so that a QP's records can be moved whole (the QP
// context cache's fill and write-back, through the responder's rec_map):
// records ARM, ARS slot 0 .. DEPTH-1, in that order, in rec_wr_en /
// rec_wr_ready (one bit each) and in rec_rd_data / rec_wr_data (packed,
// ARM at bit 0, slot s at ARM_W + s * ARS_W). Each record behaves as a
// ram_rec's record port: read every cycle at rec_rd_addr (latency 1), a
// record write done in a cycle the record's own write port is idle. REC_EN
// 0 builds no record copies and leaves the logic as it was (the record
// write's inputs are then tied off).

`resetall
`timescale 1ns / 1ps
`default_nettype none

module atomic_replay #(
    parameter NUM_QP = 16,
    parameter QN_W = 4,
    parameter DEPTH = 4,                    // records per QP, power of 2, at least 2
    parameter REC_EN = 0                    // 1: the record port's read copies are built
) (
    input  wire            clk,
    input  wire            rst,

    // an atomic executed: its QP, PSN and the value it read
    input  wire            s_rec_valid,
    input  wire [QN_W-1:0] s_rec_qpn,
    input  wire [23:0]     s_rec_psn,
    input  wire [63:0]     s_rec_orig,

    // a QP loaded: its records go
    input  wire            s_clr_valid,
    input  wire [QN_W-1:0] s_clr_qpn,

    // lookup, answered two cycles later
    input  wire [QN_W-1:0] lk_qpn,
    input  wire [23:0]     lk_psn,
    output wire            lk_hit,
    output wire [63:0]     lk_orig,

    // record port: ARM, then slot 0 .. DEPTH-1 (ram_rec's contract each)
    input  wire [QN_W-1:0] rec_rd_addr,
    output wire [rec_bits(DEPTH)-1:0] rec_rd_data,
    input  wire [DEPTH:0]  rec_wr_en,
    input  wire [QN_W-1:0] rec_wr_addr,
    input  wire [rec_bits(DEPTH)-1:0] rec_wr_data,
    output wire [DEPTH:0]  rec_wr_ready
);

// the record port's width: ARM and d slots (the layout below, from the
// parameters alone, as the port list needs it before the localparams)
function integer rec_bits(input integer d);
    begin
        rec_bits = (DEPTH > 1 ? $clog2(DEPTH) : 1) + DEPTH + d * (64 + 24);
    end
endfunction

localparam SW = DEPTH > 1 ? $clog2(DEPTH) : 1;
// the records, declared once (hw/state/manifest.py reads them): ARS, a
// slot (one RAM per slot, one word per QP); ARM, the QP's ring (twice)
localparam ARS_ORIG_W = 64;
localparam ARS_PSN_W = 24;
localparam ARS_ORIG_LSB = 0;
localparam ARS_PSN_LSB = ARS_ORIG_LSB + ARS_ORIG_W;
localparam ARS_W = ARS_PSN_LSB + ARS_PSN_W;
localparam ARM_NEXT_W = SW;                 // the slot written next
localparam ARM_VALID_W = DEPTH;             // the slots holding a record
localparam ARM_NEXT_LSB = 0;
localparam ARM_VALID_LSB = ARM_NEXT_LSB + ARM_NEXT_W;
localparam ARM_W = ARM_VALID_LSB + ARM_VALID_W;

initial begin
    if (DEPTH < 2 || (1 << SW) != DEPTH) begin
        $error("atomic_replay: DEPTH must be a power of 2, at least 2");
        $finish;
    end
    if (NUM_QP < 1 || NUM_QP > (1 << QN_W)) begin
        $error("atomic_replay: NUM_QP must be 1..2^QN_W");
        $finish;
    end
    if (rec_bits(DEPTH) != ARM_W + DEPTH * ARS_W) begin
        $error("atomic_replay: rec_bits does not follow the records' layout");
        $finish;
    end
end

// ---------------------------------------------------------------- records
reg            pend_reg = 1'b0;             // a record read its ARM, to be written
reg            pend_drop_reg = 1'b0;        // ... but its QP was cleared since
reg [QN_W-1:0] rec_qpn_reg = {QN_W{1'b0}};
reg [23:0]     rec_psn_reg = 24'd0;
reg [63:0]     rec_orig_reg = 64'd0;

wire [ARM_W-1:0] arm_r;                   // the record's QP's ring (a cycle after its read)
wire [ARM_W-1:0] arm_l;                   // the lookup's QP's ring
wire [SW-1:0] rec_slot = arm_r[ARM_NEXT_LSB +: ARM_NEXT_W];
wire rec_go = pend_reg && !s_clr_valid;     // (a clear takes the ARM port)
wire rec_write = rec_go && !pend_drop_reg;

reg [ARM_W-1:0] arm_wd;
always @* begin
    arm_wd = {ARM_W{1'b0}};                 // a clear: no slot valid, slot 0 next
    if (!s_clr_valid) begin
        arm_wd[ARM_NEXT_LSB +: ARM_NEXT_W] = rec_slot + 1'b1;
        arm_wd[ARM_VALID_LSB +: ARM_VALID_W] = arm_r[ARM_VALID_LSB +: ARM_VALID_W]
            | ({{(DEPTH-1){1'b0}}, 1'b1} << rec_slot);
    end
end
wire [ARS_W-1:0] ars_wd = {rec_psn_reg, rec_orig_reg};

ram_rec #(
    .DATA_W(ARM_W),
    .ADDR_W(QN_W),
    .DEPTH(NUM_QP),
    .N_RD(2),
    .REC_EN(REC_EN)
) arm_inst (
    .clk(clk),
    .wr_en(s_clr_valid || rec_write),
    .wr_addr(s_clr_valid ? s_clr_qpn : rec_qpn_reg),
    .wr_data(arm_wd),
    // (a waiting record keeps reading its QP)
    .rd_addr({pend_reg ? rec_qpn_reg : s_rec_qpn, lk_qpn}),
    .rd_data({arm_r, arm_l}),
    .rec_rd_addr(rec_rd_addr),
    .rec_rd_data(rec_rd_data[0 +: ARM_W]),
    .rec_wr_en(rec_wr_en[0]),
    .rec_wr_addr(rec_wr_addr),
    .rec_wr_data(rec_wr_data[0 +: ARM_W]),
    .rec_wr_ready(rec_wr_ready[0])
);

always @(posedge clk) begin
    if (pend_reg && (rec_go || pend_drop_reg)) begin
        pend_reg <= 1'b0;
    end
    if (pend_reg && s_clr_valid && s_clr_qpn == rec_qpn_reg) begin
        pend_drop_reg <= 1'b1;
    end
    if (s_rec_valid) begin
        pend_reg <= 1'b1;
        pend_drop_reg <= s_clr_valid && s_clr_qpn == s_rec_qpn;
        rec_qpn_reg <= s_rec_qpn;
        rec_psn_reg <= s_rec_psn;
        rec_orig_reg <= s_rec_orig;
    end
    if (rst) begin
        pend_reg <= 1'b0;
    end
end

// ---------------------------------------------------------------- slots
wire [DEPTH*ARS_W-1:0] slot_rd;
genvar s;
generate
    for (s = 0; s < DEPTH; s = s + 1) begin : g_slot
        wire [SW-1:0] s_idx = s;
        ram_rec #(
            .DATA_W(ARS_W),
            .ADDR_W(QN_W),
            .DEPTH(NUM_QP),
            .N_RD(1),
            .REC_EN(REC_EN)
        ) ars_inst (
            .clk(clk),
            .wr_en(rec_write && rec_slot == s_idx),
            .wr_addr(rec_qpn_reg),
            .wr_data(ars_wd),
            .rd_addr(lk_qpn),
            .rd_data(slot_rd[s*ARS_W +: ARS_W]),
            .rec_rd_addr(rec_rd_addr),
            .rec_rd_data(rec_rd_data[ARM_W + s*ARS_W +: ARS_W]),
            .rec_wr_en(rec_wr_en[1 + s]),
            .rec_wr_addr(rec_wr_addr),
            .rec_wr_data(rec_wr_data[ARM_W + s*ARS_W +: ARS_W]),
            .rec_wr_ready(rec_wr_ready[1 + s])
        );
    end
endgenerate

// ---------------------------------------------------------------- lookup
// The newest match answers: a QP that executes fewer than DEPTH atomics
// in 2^24 PSNs records a PSN again while the old record is still valid.
// Each slot is compared on its own (match), then kept only if no newer
// slot matches (sel: slot j is newer than slot s when it was written
// after it, counting from the slot written next, the oldest), and the
// original values are combined one-hot: no slot is chosen by a computed
// index behind the block RAM (timing).
wire [SW-1:0] l_next = arm_l[ARM_NEXT_LSB +: ARM_NEXT_W];
reg [23:0] lk_psn_reg = 24'd0;
reg        hit_reg = 1'b0;
reg [63:0] orig_reg = 64'd0;
reg [DEPTH-1:0] match;
reg [DEPTH-1:0] sel;
reg        hit_next;
reg [63:0] orig_next;
reg [SW-1:0] age_s, age_j;
integer i, j;
always @* begin
    for (i = 0; i < DEPTH; i = i + 1) begin
        match[i] = arm_l[ARM_VALID_LSB + i]
            && slot_rd[i*ARS_W + ARS_PSN_LSB +: ARS_PSN_W] == lk_psn_reg;
    end
    for (i = 0; i < DEPTH; i = i + 1) begin
        sel[i] = match[i];
        age_s = i[SW-1:0] - l_next;
        for (j = 0; j < DEPTH; j = j + 1) begin
            age_j = j[SW-1:0] - l_next;
            if (match[j] && age_j > age_s) begin
                sel[i] = 1'b0;
            end
        end
    end
    hit_next = match != {DEPTH{1'b0}};
    orig_next = 64'd0;
    for (i = 0; i < DEPTH; i = i + 1) begin
        orig_next = orig_next | ({64{sel[i]}} & slot_rd[i*ARS_W + ARS_ORIG_LSB +: ARS_ORIG_W]);
    end
end
assign lk_hit = hit_reg;
assign lk_orig = orig_reg;

always @(posedge clk) begin
    lk_psn_reg <= lk_psn;
    hit_reg <= hit_next;
    orig_reg <= orig_next;
    if (rst) begin
        hit_reg <= 1'b0;
        orig_reg <= 64'd0;
    end
end

endmodule

`resetall
