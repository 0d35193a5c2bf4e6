// The QP context table in host memory, driven from BAR0 (issue 19): the
// fill engine (qpc_fill) in the core, behind the commands qp_block.qp_ctx_*
// that move one slot's record to or from the table by DMA.
//
// Why: the context cache will drive qpc_fill from its misses; until then
// BAR0 drives it, so the whole path (record port, staging-RAM buffer, the
// DMA engines' fifth client, the host table's layout) runs in the core and
// a lab can park a QP's state in host memory and bring it back.
//
// A command names a slot (qp_sel), a record of the table and an op: 1 load
// the slot from the record, 2 write the slot back to record wb_record, then
// load it from `record`. It is checked before anything moves: a bad op, a
// slot beyond NUM_Q, or a record (either one) at or beyond cfg_records is
// answered at once with its error; a command for a slot a command still
// runs on, a command while the last one has not been taken by the engine,
// or one while the record window runs, is refused (err 5) and changes
// nothing. Up to FILLS commands run at once (qpc_fill's buffers), each on
// its own slot: they overlap their DMA reads, and qpc_fill orders a load
// of a record behind a write-back of the same record still in flight.
//
// The record port. While a command runs (busy) the record port is the fill
// engine's; otherwise the record window's, whose requests wait meanwhile
// (rnic_control stalls MMIO while the window is busy, so a window command
// waits for a running load). A command ends when qpc_fill's completion is
// taken and the last record write has landed (rec_wr_busy low), so a
// window read afterwards sees the loaded words.
//
// Kept words. Words KEEP_LO .. KEEP_LO + KEEP_N - 1 of slot n's record are
// not QP n's: in the core they are completion queue n's (cq_manager's
// records), and CQs have numbers of their own and serve many QPs, so they
// stay on chip. A load leaves them as they are; a write-back copies them
// out like the other words (the host record shows CQ n as it was).
//
// The pin. A slot moves only while its QP has no work outside its records
// (the transport's pin_busy: a ring of WQEs in flight, a send queue
// scheduled, a packet, ACK, READ job or deferred completion in work or
// owed; rnic_transport lists them): such state would be lost by the move,
// or would write the records while they move. A command that passes its
// checks holds the slot's received packets at once (rx_hold: a packet for
// it waits in the receive stage, and the ones behind it), asks the
// transport about the slot, and after PIN_LAT cycles (the answer's latency
// and the pipelines' that may still carry the slot's work) either goes to
// the engine or, the slot busy, is refused with err 7 and moves nothing.
// The hold lasts until the command ends. Nothing else starts work on an
// idle slot on its own (the scans act on rings and owed flags, the queue
// manager on scheduled queues); the host's own writes for a slot it moves
// (doorbells, context writes) are the host's to avoid.
//
// Errors (status err, the last command answered): 0 done, 2 the table read failed (the slot is
// untouched; a write-back before it was made), 3 a record beyond the table,
// 4 bad op, 5 refused, 6 slot beyond NUM_Q, 7 the slot's QP has work in
// flight (the pin). fault: qpc_fill's err_proto
// (a DMA status it did not expect), sticky until reset. done counts the
// commands answered, refusals included; the counters count what the engine
// did (a refused command did nothing).

`resetall
`timescale 1ns / 1ps
`default_nettype none

module qp_ctx_table #(
    parameter NUM_Q = 16,
    parameter QN_W = 4,
    parameter REC_WORDS = 64,
    parameter WORD_W = 6,
    parameter FILLS = 1,                    // commands in flight (qpc_fill's buffers), 1..4
    parameter ID_W = 8,
    parameter LEN_W = 17,
    parameter RAM_ADDR_W = 17,
    parameter integer BUF_BASE = 0,         // staging RAM byte address of buffer 0
    parameter PIN_LAT = 4,                  // cycles from a command to its pin answer
    parameter KEEP_LO = 0,                  // words KEEP_LO .. KEEP_LO + KEEP_N - 1 of a slot are
    parameter KEEP_N = 0,                   // never loaded (CQ n's, not QP n's: they stay on chip)
    parameter [ID_W-1:0] ID_TAG = {ID_W{1'b0}}  // the client field; the low 3 bits are the engine's
) (
    input  wire                  clk,
    input  wire                  rst,

    // the pin: the slot asked about, and the answer (PIN_LAT cycles later);
    // the receive stage's question: does a packet for rx_qp wait
    output wire [QN_W-1:0]       pin_slot,
    input  wire                  pin_busy,
    input  wire                  cfg_unpinned,      // debug: the pin is not asked (a busy slot moves)
    input  wire [23:0]           rx_qp,
    output wire                  rx_hold,

    input  wire [63:0]           cfg_base,
    input  wire [24:0]           cfg_records,

    input  wire [15:0]           cmd_slot,
    input  wire [23:0]           cmd_record,
    input  wire [23:0]           cmd_wb_record,
    input  wire [1:0]            cmd_op,            // 1 load, 2 write back then load
    input  wire                  cmd_valid,
    output reg                   busy = 1'b0,
    output reg  [2:0]            err = 3'd0,
    output wire                  fault,
    output reg  [15:0]           done = 16'd0,
    // since reset: records loaded, slots written back, loads failed
    output reg  [31:0]           count_fills = 32'd0,
    output reg  [31:0]           count_wbs = 32'd0,
    output reg  [31:0]           count_fails = 32'd0,
    // each command's fate, for a client that issues its own (qp_fetch):
    // cmd_ready, a command now is not refused for another's hand-over;
    // ans_* a cycle after a command's refusal or its pin answer (taken:
    // it goes to the engine); end_* a cycle after a taken command ended
    output wire                  cmd_ready,
    output reg                   ans_valid = 1'b0,
    output reg                   ans_taken = 1'b0,
    output reg                   end_valid = 1'b0,
    output reg  [QN_W-1:0]       end_slot = {QN_W{1'b0}},
    output reg                   end_ok = 1'b0,

    // the record window's port, and whether it runs a command
    input  wire                  win_busy,
    input  wire                  s_win_rd_valid,
    output wire                  s_win_rd_ready,
    input  wire [QN_W-1:0]       s_win_rd_slot,
    input  wire [WORD_W-1:0]     s_win_rd_word,
    output wire                  s_win_rd_data_valid,
    input  wire                  s_win_wr_valid,
    output wire                  s_win_wr_ready,
    input  wire [QN_W-1:0]       s_win_wr_slot,
    input  wire [WORD_W-1:0]     s_win_wr_word,
    input  wire [63:0]           s_win_wr_data,

    // the core's record port
    output wire                  m_rec_rd_valid,
    input  wire                  m_rec_rd_ready,
    output wire [QN_W-1:0]       m_rec_rd_slot,
    output wire [WORD_W-1:0]     m_rec_rd_word,
    input  wire                  s_rec_rd_data_valid,
    input  wire [63:0]           s_rec_rd_data,
    output wire                  m_rec_wr_valid,
    input  wire                  m_rec_wr_ready,
    output wire [QN_W-1:0]       m_rec_wr_slot,
    output wire [WORD_W-1:0]     m_rec_wr_word,
    output wire [63:0]           m_rec_wr_data,
    input  wire                  rec_wr_busy,

    // the buffer's words in the staging RAM
    output wire                  m_buf_wr_en,
    input  wire                  m_buf_wr_ready,
    output wire [RAM_ADDR_W-1:0] m_buf_wr_addr,
    output wire [63:0]           m_buf_wr_data,
    output wire                  m_buf_rd_en,
    input  wire                  m_buf_rd_ready,
    output wire [RAM_ADDR_W-1:0] m_buf_rd_addr,
    input  wire [63:0]           s_buf_rd_data,

    // DMA: the table's reads and writes
    output wire                  m_rd_desc_valid,
    input  wire                  m_rd_desc_ready,
    output wire [63:0]           m_rd_desc_pcie_addr,
    output wire [RAM_ADDR_W-1:0] m_rd_desc_ram_addr,
    output wire [LEN_W-1:0]      m_rd_desc_len,
    output wire [ID_W-1:0]       m_rd_desc_id,
    input  wire                  s_rd_status_valid,
    input  wire [ID_W-1:0]       s_rd_status_id,
    input  wire [3:0]            s_rd_status_error,
    output wire                  m_wr_desc_valid,
    input  wire                  m_wr_desc_ready,
    output wire [63:0]           m_wr_desc_pcie_addr,
    output wire [RAM_ADDR_W-1:0] m_wr_desc_ram_addr,
    output wire [LEN_W-1:0]      m_wr_desc_len,
    output wire [ID_W-1:0]       m_wr_desc_id,
    input  wire                  s_wr_status_valid
);

localparam [2:0] E_OK = 3'd0, E_READ = 3'd2, E_BOUND = 3'd3, E_OP = 3'd4, E_REFUSED = 3'd5, E_SLOT = 3'd6,
    E_PINNED = 3'd7;

initial begin
    if (NUM_Q < 1 || NUM_Q > (1 << QN_W) || QN_W > 16) begin
        $error("qp_ctx_table: NUM_Q must be 1..2^QN_W, QN_W at most 16");
        $finish;
    end
    if (REC_WORDS != (1 << WORD_W)) begin
        $error("qp_ctx_table: REC_WORDS must be 2^WORD_W");
        $finish;
    end
    if (FILLS < 1 || FILLS > 4) begin
        $error("qp_ctx_table: FILLS must be 1..4");
        $finish;
    end
    if (KEEP_N < 0 || KEEP_LO < 0 || KEEP_LO + KEEP_N > REC_WORDS) begin
        $error("qp_ctx_table: the kept words must lie in the record");
        $finish;
    end
    if (PIN_LAT < 1 || PIN_LAT > 15) begin
        $error("qp_ctx_table: PIN_LAT must be 1..15");
        $finish;
    end
    if (ID_W < 4 || ID_TAG[2:0] != 3'd0) begin
        $error("qp_ctx_table: ID_TAG's low three bits carry the buffer, keep them 0");
        $finish;
    end
end

// ---------------------------------------------------------------- commands
// a command taken: its pin asked (pin_reg), then given to the engine
// (fill_valid_reg)
reg pin_reg = 1'b0;
reg [3:0] pin_cnt_reg = 4'd0;
reg fill_valid_reg = 1'b0;
wire fill_ready;
reg [QN_W-1:0] fill_slot_reg = {QN_W{1'b0}};
reg [23:0] fill_record_reg = 24'd0;
reg fill_wb_reg = 1'b0;
reg [23:0] fill_wb_record_reg = 24'd0;
reg oob_reg = 1'b0;

wire done_valid;
wire done_ok;
wire [QN_W-1:0] done_slot;
wire done_take = done_valid && !rec_wr_busy;

// The slots commands run on: one entry per command taken by the engine
// until its completion is taken. The engine takes a command only with a
// buffer free, and frees a buffer when its completion is loaded, so FILLS
// + 1 entries always leave one free for the command being taken.
localparam FL = FILLS + 1;
reg [FL-1:0] fl_v = {FL{1'b0}};
reg [FL*QN_W-1:0] fl_slot = {(FL*QN_W){1'b0}};
wire [FL-1:0] fl_done;
reg [FL-1:0] fl_new;
genvar fi;
generate
    for (fi = 0; fi < FL; fi = fi + 1) begin : g_fl
        always @(posedge clk) begin
            if (fl_new[fi]) begin
                fl_slot[fi*QN_W +: QN_W] <= fill_slot_reg;
            end
        end
    end
endgenerate
integer k;
always @* begin
    fl_new = {FL{1'b0}};
    if (fill_valid_reg && fill_ready) begin
        for (k = FL - 1; k >= 0; k = k - 1) begin
            if (!fl_v[k]) begin
                fl_new = {{(FL-1){1'b0}}, 1'b1} << k;
            end
        end
    end
end
assign pin_slot = fill_slot_reg;
wire pin_due = pin_reg && pin_cnt_reg == PIN_LAT[3:0];
wire pinned = pin_busy && !cfg_unpinned;

// Every slot a command is on: the engine's entries and the command being
// asked about or handed over. A new command for one of them is refused, and
// the receive stage holds their packets.
wire [FL:0] on_v = {pin_reg || fill_valid_reg, fl_v};
wire [(FL+1)*QN_W-1:0] on_slot = {fill_slot_reg, fl_slot};
wire [FL:0] on_cmd, on_rx;
tag_match #(.N(FL + 1), .KEY_W(QN_W)) m_on_cmd (
    .valid(on_v),
    .tags(on_slot),
    .key(cmd_slot[QN_W-1:0]),
    .match(on_cmd)
);
tag_match #(.N(FL + 1), .KEY_W(QN_W)) m_on_rx (
    .valid(on_v),
    .tags(on_slot),
    .key(rx_qp[QN_W-1:0]),
    .match(on_rx)
);
tag_match #(.N(FL), .KEY_W(QN_W)) m_done (
    .valid(fl_v & {FL{done_take}}),
    .tags(fl_slot),
    .key(done_slot),
    .match(fl_done)
);
wire slot_running = |on_cmd;
assign rx_hold = |on_rx && rx_qp[23:QN_W] == {(24-QN_W){1'b0}};
wire stat_oob;
wire stat_fill, stat_wb, stat_fail;

wire bad_op = cmd_op == 2'd0 || cmd_op == 2'd3;
wire bad_slot = {16'd0, cmd_slot} >= NUM_Q;
wire bad_record = {1'b0, cmd_record} >= cfg_records
    || (cmd_op == 2'd2 && {1'b0, cmd_wb_record} >= cfg_records);
wire refused = pin_reg || fill_valid_reg || win_busy || slot_running;
assign cmd_ready = !pin_reg && !fill_valid_reg && !win_busy;
// taken: it runs and is counted when it ends (a refusal is counted at once)
wire cmd_go = !refused && !bad_op && !bad_slot && !bad_record;

always @(posedge clk) begin
    if (fill_valid_reg && fill_ready) begin
        fill_valid_reg <= 1'b0;
    end
    pin_cnt_reg <= pin_cnt_reg + {3'd0, pin_reg};
    if (pin_due) begin
        pin_reg <= 1'b0;
        fill_valid_reg <= !pinned;
        if (pinned) begin
            err <= E_PINNED;
        end
    end
    if (stat_oob) begin
        oob_reg <= 1'b1;
    end
    done <= done + {15'd0, done_take} + {15'd0, cmd_valid && !cmd_go} + {15'd0, pin_due && pinned};
    fl_v <= (fl_v & ~fl_done) | fl_new;
    busy <= (pin_reg && !(pin_due && pinned)) || fill_valid_reg || |((fl_v & ~fl_done) | fl_new)
        || (cmd_valid && cmd_go);
    if (done_take) begin
        err <= done_ok ? E_OK : (oob_reg || stat_oob ? E_BOUND : E_READ);
        oob_reg <= 1'b0;
    end
    if (cmd_valid) begin
        if (refused) begin
            err <= E_REFUSED;
        end else if (bad_op) begin
            err <= E_OP;
        end else if (bad_slot) begin
            err <= E_SLOT;
        end else if (bad_record) begin
            err <= E_BOUND;
        end else begin
            pin_reg <= 1'b1;
            pin_cnt_reg <= 4'd0;
            fill_slot_reg <= cmd_slot[QN_W-1:0];
            fill_record_reg <= cmd_record;
            fill_wb_reg <= cmd_op == 2'd2;
            fill_wb_record_reg <= cmd_wb_record;
        end
    end

    ans_valid <= (cmd_valid && !cmd_go) || pin_due;
    ans_taken <= pin_due && !pinned;
    end_valid <= done_take;
    end_slot <= done_slot;
    end_ok <= done_ok;

    count_fills <= count_fills + {31'd0, stat_fill};
    count_wbs <= count_wbs + {31'd0, stat_wb};
    count_fails <= count_fails + {31'd0, stat_fail};

    if (rst) begin
        fl_v <= {FL{1'b0}};
        count_fills <= 32'd0;
        count_wbs <= 32'd0;
        count_fails <= 32'd0;
        busy <= 1'b0;
        ans_valid <= 1'b0;
        end_valid <= 1'b0;
        err <= E_OK;
        done <= 16'd0;
        fill_valid_reg <= 1'b0;
        pin_reg <= 1'b0;
        oob_reg <= 1'b0;
    end
end

// ---------------------------------------------------------------- record port
wire fill_rd_valid, fill_wr_valid;
wire [QN_W-1:0] fill_rd_slot, fill_wr_slot;
wire [WORD_W-1:0] fill_rd_word, fill_wr_word;
wire [63:0] fill_wr_data;

assign m_rec_rd_valid = busy ? fill_rd_valid : s_win_rd_valid;
assign m_rec_rd_slot = busy ? fill_rd_slot : s_win_rd_slot;
assign m_rec_rd_word = busy ? fill_rd_word : s_win_rd_word;
assign s_win_rd_ready = !busy && m_rec_rd_ready;
assign s_win_rd_data_valid = !busy && s_rec_rd_data_valid;
// the engine's writes of the kept words are taken and dropped: a load
// never changes them (a write-back still copies them out, as they are)
wire [31:0] fill_wr_word32 = {{(32-WORD_W){1'b0}}, fill_wr_word};
localparam [31:0] KEEP_LO32 = KEEP_LO, KEEP_N32 = KEEP_N;
// (unsigned: below KEEP_LO wraps to a large number)
wire [31:0] fill_wr_off = fill_wr_word32 - KEEP_LO32;
wire fill_wr_keep = fill_wr_off < KEEP_N32;
assign m_rec_wr_valid = busy ? fill_wr_valid && !fill_wr_keep : s_win_wr_valid;
assign m_rec_wr_slot = busy ? fill_wr_slot : s_win_wr_slot;
assign m_rec_wr_word = busy ? fill_wr_word : s_win_wr_word;
assign m_rec_wr_data = busy ? fill_wr_data : s_win_wr_data;
assign s_win_wr_ready = !busy && m_rec_wr_ready;

// ---------------------------------------------------------------- the engine
wire [2:0] rd_id, wr_id;
assign m_rd_desc_id = {ID_TAG[ID_W-1:3], rd_id};
assign m_wr_desc_id = {ID_TAG[ID_W-1:3], wr_id};

/* verilator lint_off UNUSEDSIGNAL */
wire [ID_W-1:0] rd_status_id = s_rd_status_id;     // the client bits routed it here
wire engine_busy;
/* verilator lint_on UNUSEDSIGNAL */

qpc_fill #(
    .QPN_W(24),
    .SLOT_LOG(QN_W),
    .REC_WORDS(REC_WORDS),
    .FILLS(FILLS),
    .ID_W(3),                                       // the buffer's number (and room to see a wrong one)
    .LEN_W(LEN_W),
    .RAM_ADDR_W(RAM_ADDR_W),
    .BUF_BASE(BUF_BASE)
) fill_inst (
    .clk(clk),
    .rst(rst),
    .cfg_table_base(cfg_base),
    .cfg_table_qps(cfg_records),
    .s_fill_valid(fill_valid_reg),
    .s_fill_ready(fill_ready),
    .s_fill_slot(fill_slot_reg),
    .s_fill_qpn(fill_record_reg),
    .s_fill_wb(fill_wb_reg),
    .s_fill_wb_qpn(fill_wb_record_reg),
    .m_done_valid(done_valid),
    .m_done_ready(!rec_wr_busy),
    .m_done_slot(done_slot),
    .m_done_ok(done_ok),
    .m_rec_rd_valid(fill_rd_valid),
    .m_rec_rd_ready(busy && m_rec_rd_ready),
    .m_rec_rd_slot(fill_rd_slot),
    .m_rec_rd_word(fill_rd_word),
    .s_rec_rd_data_valid(busy && s_rec_rd_data_valid),
    .s_rec_rd_data(s_rec_rd_data),
    .m_rec_wr_valid(fill_wr_valid),
    .m_rec_wr_ready(busy && (m_rec_wr_ready || fill_wr_keep)),
    .m_rec_wr_slot(fill_wr_slot),
    .m_rec_wr_word(fill_wr_word),
    .m_rec_wr_data(fill_wr_data),
    .m_buf_wr_en(m_buf_wr_en),
    .m_buf_wr_ready(m_buf_wr_ready),
    .m_buf_wr_addr(m_buf_wr_addr),
    .m_buf_wr_data(m_buf_wr_data),
    .m_buf_rd_en(m_buf_rd_en),
    .m_buf_rd_ready(m_buf_rd_ready),
    .m_buf_rd_addr(m_buf_rd_addr),
    .s_buf_rd_data(s_buf_rd_data),
    .m_rd_desc_valid(m_rd_desc_valid),
    .m_rd_desc_ready(m_rd_desc_ready),
    .m_rd_desc_pcie_addr(m_rd_desc_pcie_addr),
    .m_rd_desc_ram_addr(m_rd_desc_ram_addr),
    .m_rd_desc_len(m_rd_desc_len),
    .m_rd_desc_id(rd_id),
    .s_rd_status_valid(s_rd_status_valid),
    .s_rd_status_id(rd_status_id[2:0]),
    .s_rd_status_error(s_rd_status_error),
    .m_wr_desc_valid(m_wr_desc_valid),
    .m_wr_desc_ready(m_wr_desc_ready),
    .m_wr_desc_pcie_addr(m_wr_desc_pcie_addr),
    .m_wr_desc_ram_addr(m_wr_desc_ram_addr),
    .m_wr_desc_len(m_wr_desc_len),
    .m_wr_desc_id(wr_id),
    .s_wr_status_valid(s_wr_status_valid),
    .stat_fill(stat_fill),
    .stat_wb(stat_wb),
    .stat_fail(stat_fail),
    .stat_oob(stat_oob),
    .busy(engine_busy),
    .err_proto(fault)
);

endmodule

`resetall
