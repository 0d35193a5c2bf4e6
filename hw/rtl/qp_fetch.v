// Brings a QP into an on-chip slot by its number (BAR0 qp_block.qp_fetch):
// the NIC picks the slot, writes back the idle QP it evicts, loads the QP's
// record from the host's context table (record n for QP number n) and
// rebinds the directory, all on its own. This is the cache's miss path in
// its first form, run on the host's command; the cache will run it on its
// own misses (a packet or a doorbell for a number no slot holds).
//
// Why the NIC and not the host: the host would have to pick an idle slot,
// unbind it, move its records and bind the new number in separate
// commands, with packets arriving between them; here the slot is chosen
// by the pin question and the binding changes while the slot's packets are
// held, so no packet reaches a slot whose QP is not the one it names.
//
// The slots the fetch may use are cfg_first .. NUM_Q - 1 (the cache's); the
// host keeps what it manages itself (DMA copy queues, QPs it wants on chip)
// below cfg_first. A free cache slot (bound to no number) is taken first;
// else victims are tried round robin from the one after the last slot
// filled, each through the context engine (qp_ctx_table): a slot
// with a bound QP is written back to the QP's record and loaded (op 2), an
// unbound one loaded (op 1); a slot the engine refuses (its QP has work in
// flight, the pin; a command still on it; its QP's record beyond the
// table) is passed over. Once the engine has taken the command, the
// directory unbinds the old QP and binds the new number to the slot while
// the engine holds the slot's packets, so from then on the old number's
// packets find no slot (the old QP was idle; a packet for it is dropped and
// counted, and its sender will resend it) and the new number's wait until
// the load has landed. If the table read fails, the slot holds the old QP
// as it was and the old binding is restored.
//
// Result (res_*, from the cycle busy falls): err 0 done (loaded: a record
// was loaded, evicted: a QP was written back, its number in res_victim;
// neither: the number was on chip already), 2 the table read failed
// (nothing changed), 3 the number is beyond the table or the directory,
// 5 no slot: every cache slot was refused (or cfg_first >= NUM_Q), 6 the
// directory refused a bind or unbind (a fault: it cannot happen while the
// host's commands wait). The host's MMIO waits while busy, so no host
// command for the directory or the engine comes meanwhile.
//
// The hold (cmd_hold): a host fetch that succeeds with it keeps its slot
// out of every later fetch's search until the host's next command, so the
// host can program the QP through the slot's windows while misses go on
// fetching other QPs. One slot at a time; every host command drops it
// (cmd_unhold drops it and fetches nothing). Misses never hold.
//
// A host command waits (busy, so MMIO waits) until no doorbell by number
// written before it is waiting (db_idle): a doorbell the host rang before
// a fetch or a hold is looked up, and fetched if need be, first. Misses
// are served meanwhile.

`resetall
`timescale 1ns / 1ps
`default_nettype none

module qp_fetch #(
    parameter NUM_Q = 16,
    parameter QN_W = 4,
    parameter QPN_W = 16,
    parameter LK_LAT = 2                 // the directory's lookup latency
) (
    input  wire                 clk,
    input  wire                 rst,

    input  wire [15:0]          cfg_first,
    input  wire [24:0]          cfg_records,

    input  wire                 cmd_valid,
    input  wire [23:0]          cmd_qpn,
    input  wire                 cmd_hold,
    input  wire                 cmd_unhold,
    // no doorbell by number waits: a host command waits for those before it
    input  wire                 db_idle,
    output wire                 busy,       // for the host's MMIO
    output wire                 active,     // the directory's and the engine's ports are ours
    // misses (cfg_auto): the receive stage's packet and a doorbell by
    // number whose QP no slot holds; each held until its done pulse
    input  wire                 cfg_auto,
    input  wire                 rx_miss_valid,
    input  wire [23:0]          rx_miss_qpn,
    output reg                  rx_miss_done = 1'b0,
    output reg                  rx_miss_ok = 1'b0,
    input  wire                 db_miss_valid,
    input  wire [23:0]          db_miss_qpn,
    output reg                  db_miss_done = 1'b0,
    output reg                  db_miss_ok = 1'b0,
    output reg                  db_miss_full = 1'b0,    // (not ok:) no slot could be had
    output reg  [31:0]          count_misses = 32'd0,    // fetches started by a miss
    output reg  [31:0]          count_evictions = 32'd0, // QPs written back and unbound, every fetch
    output reg  [31:0]          count_full = 32'd0,      // fetches that found every cache slot pinned
    // the directory's first lookups of packets and doorbells by number,
    // and those that found no slot: the cache's hit rate
    input  wire                 look_rx_valid,
    input  wire                 look_rx_hit,
    input  wire                 look_db_valid,
    input  wire                 look_db_hit,
    output reg  [31:0]          count_lookups = 32'd0,
    output reg  [31:0]          count_lookup_misses = 32'd0,
    output reg  [2:0]           res_err = 3'd0,
    output reg  [QN_W-1:0]      res_slot = {QN_W{1'b0}},
    output reg                  res_loaded = 1'b0,
    output reg                  res_evicted = 1'b0,
    output reg  [23:0]          res_victim = 24'd0,
    output reg                  res_held = 1'b0,

    // the directory (its command port and lookup are ours while busy)
    output wire [23:0]          lk_qpn,
    input  wire                 lk_hit,
    input  wire [QN_W-1:0]      lk_slot,
    output wire [15:0]          d_slot,
    output wire [23:0]          d_qpn,
    output wire [1:0]           d_op,
    output wire                 d_valid,
    input  wire                 d_busy,
    input  wire [2:0]           d_err,
    input  wire                 d_rb_bound,     // slot d_slot's binding, a cycle late
    input  wire [23:0]          d_rb_qpn,
    input  wire                 d_free_valid,   // the lowest unbound slot from cfg_first on
    input  wire [QN_W-1:0]      d_free_slot,

    // the context engine
    input  wire                 c_ready,
    output wire                 c_valid,
    output wire [15:0]          c_slot,
    output wire [1:0]           c_op,
    output wire [23:0]          c_record,
    output wire [23:0]          c_wb,
    input  wire                 c_ans_valid,
    input  wire                 c_ans_taken,
    input  wire                 c_end_valid,
    input  wire [QN_W-1:0]      c_end_slot,
    input  wire                 c_end_ok
);

initial begin
    if (NUM_Q < 1 || NUM_Q > (1 << QN_W) || QN_W > 15) begin
        $error("qp_fetch: NUM_Q must be 1..2^QN_W, QN_W at most 15");
        $finish;
    end
    if (QPN_W < QN_W || QPN_W > 24 || LK_LAT < 1 || LK_LAT > 6) begin
        $error("qp_fetch: QPN_W must be QN_W..24, LK_LAT 1..6");
        $finish;
    end
end

localparam [2:0] E_OK = 3'd0, E_READ = 3'd2, E_BOUND = 3'd3, E_FULL = 3'd5, E_DIR = 3'd6;
localparam [3:0] S_IDLE = 4'd0, S_LOOK = 4'd1, S_READ = 4'd2, S_ISSUE = 4'd3, S_ANS = 4'd4,
    S_UNB_OLD = 4'd5, S_BIND_NEW = 4'd6, S_END = 4'd7, S_UNB_NEW = 4'd8, S_BIND_OLD = 4'd9,
    S_DIR = 4'd10, S_NEXT = 4'd11;
localparam integer NUM_Q_I = NUM_Q;
localparam [16:0] NUM_Q17 = NUM_Q_I[16:0];
localparam [24:0] DIR_END = 25'd1 << QPN_W;

reg [3:0] state_reg = S_IDLE;
// a directory command's state returns to when it is done
reg [3:0] after_reg = S_IDLE;
reg [2:0] wait_reg = 3'd0;
reg [23:0] qpn_reg = 24'd0;
reg [QN_W-1:0] cand_reg = {QN_W{1'b0}};
reg [QN_W-1:0] next_reg = {QN_W{1'b0}};     // where the next search starts
reg [16:0] tries_reg = 17'd0;
reg old_bound_reg = 1'b0;
reg [23:0] old_qpn_reg = 24'd0;
reg end_seen_reg = 1'b0;
reg end_ok_reg = 1'b0;
reg [1:0] dop_reg = 2'd0;
reg [23:0] dqpn_reg = 24'd0;
reg dvalid_reg = 1'b0;
reg cvalid_reg = 1'b0;
// the fetch's result (res_* shows a host fetch's; a miss's goes to its
// requester as done and ok) and who asked: 0 the host, 1 the receive
// stage, 2 a doorbell
reg [2:0] e_err = 3'd0;
reg [QN_W-1:0] e_slot = {QN_W{1'b0}};
reg e_loaded = 1'b0;
reg e_evicted = 1'b0;
reg [23:0] e_victim = 24'd0;
reg [1:0] src_reg = 2'd0;
reg hold_want_reg = 1'b0;
// a host command waiting for the doorbells written before it
reg cmd_pend_reg = 1'b0;
reg cmd_hold_reg = 1'b0;
reg cmd_unhold_reg = 1'b0;
reg [23:0] cmd_qpn_reg = 24'd0;
wire cmd_go = cmd_pend_reg && db_idle;
reg [QN_W-1:0] hold_slot_reg = {QN_W{1'b0}};
wire skip_held = res_held && cand_reg == hold_slot_reg;
// the last miss served was a doorbell's: a packet's goes first
reg last_db_reg = 1'b0;
wire take_db = db_miss_valid && !(rx_miss_valid && last_db_reg);
reg busy_q = 1'b0;
// after a miss's fetch, the receive stage's re-check sees the new binding a
// cycle or two late: no new miss is taken meanwhile
reg [1:0] cool_reg = 2'd0;

wire [QN_W-1:0] first = cfg_first[QN_W-1:0];
wire first_ok = {1'b0, cfg_first} < NUM_Q17;
wire [16:0] cand_up = {{(17-QN_W){1'b0}}, cand_reg} + 17'd1;
wire [QN_W-1:0] cand_next = cand_up >= NUM_Q17 ? first : cand_up[QN_W-1:0];
wire [16:0] cache_slots = NUM_Q17 - {1'b0, cfg_first};

wire run = state_reg != S_IDLE;
// (busy a cycle past the run: the result is copied out in that cycle)
assign busy = run || busy_q || cmd_pend_reg;
assign active = run || busy_q;
assign lk_qpn = qpn_reg;
assign d_slot = {{(16-QN_W){1'b0}}, cand_reg};
assign d_qpn = dqpn_reg;
assign d_op = dop_reg;
assign d_valid = dvalid_reg;
assign c_valid = cvalid_reg;
assign c_slot = {{(16-QN_W){1'b0}}, cand_reg};
assign c_op = old_bound_reg ? 2'd2 : 2'd1;
assign c_record = qpn_reg;
assign c_wb = old_qpn_reg;

always @(posedge clk) begin
    dvalid_reg <= 1'b0;
    cvalid_reg <= 1'b0;
    rx_miss_done <= 1'b0;
    db_miss_done <= 1'b0;
    busy_q <= run;
    if (cool_reg != 2'd0) begin
        cool_reg <= cool_reg - 2'd1;
    end
    count_lookups <= count_lookups + {31'd0, look_rx_valid} + {31'd0, look_db_valid};
    count_lookup_misses <= count_lookup_misses + {31'd0, look_rx_valid && !look_rx_hit}
        + {31'd0, look_db_valid && !look_db_hit};
    if (busy_q && !run && e_err == E_FULL) begin
        count_full <= count_full + 32'd1;
    end
    // the end of a fetch: its result to whoever asked
    if (busy_q && !run) begin
        case (src_reg)
            2'd0: begin
                res_held <= hold_want_reg && e_err == E_OK;
                hold_slot_reg <= e_slot;
                res_err <= e_err;
                res_slot <= e_slot;
                res_loaded <= e_loaded;
                res_evicted <= e_evicted;
                res_victim <= e_victim;
            end
            2'd1: begin
                last_db_reg <= 1'b0;
                rx_miss_done <= 1'b1;
                rx_miss_ok <= e_err == E_OK;
                cool_reg <= 2'd3;
            end
            default: begin
                last_db_reg <= 1'b1;
                db_miss_done <= 1'b1;
                db_miss_ok <= e_err == E_OK;
                db_miss_full <= e_err == E_FULL;
                cool_reg <= 2'd3;
            end
        endcase
    end
    if (wait_reg != 3'd0) begin
        wait_reg <= wait_reg - 3'd1;
    end
    // a host command waits for the doorbells by number written before it
    // (they may need the fetch themselves, which it lets them have)
    if (cmd_valid) begin
        cmd_pend_reg <= 1'b1;
        cmd_hold_reg <= cmd_hold;
        cmd_unhold_reg <= cmd_unhold;
        cmd_qpn_reg <= cmd_qpn;
    end
    // the engine's end of our command may come before the binds are done
    if (state_reg != S_IDLE && c_end_valid && c_end_slot == cand_reg) begin
        end_seen_reg <= 1'b1;
        end_ok_reg <= c_end_ok;
    end
    case (state_reg)
        S_IDLE: begin
            if (cmd_go && cmd_unhold_reg) begin
                res_held <= 1'b0;
                cmd_pend_reg <= 1'b0;
            end else if (cmd_go) begin
                // (the old hold ends: its slot may be this fetch's)
                res_held <= 1'b0;
                cmd_pend_reg <= 1'b0;
                hold_want_reg <= cmd_hold_reg;
                qpn_reg <= cmd_qpn_reg;
                src_reg <= 2'd0;
                e_loaded <= 1'b0;
                e_evicted <= 1'b0;
                if ({1'b0, cmd_qpn_reg} >= DIR_END || {1'b0, cmd_qpn_reg} >= cfg_records) begin
                    // (answered at once: never busy)
                    res_err <= E_BOUND;
                    res_loaded <= 1'b0;
                    res_evicted <= 1'b0;
                end else begin
                    state_reg <= S_LOOK;
                    wait_reg <= LK_LAT[2:0] + 3'd1;
                end
            end else if (cfg_auto && !busy_q && cool_reg == 2'd0 && (db_miss_valid || rx_miss_valid)) begin
                // (the two take turns, so a doorbell tried again and
                // again never keeps a packet waiting; the requesters check
                // the number against the table)
                qpn_reg <= take_db ? db_miss_qpn : rx_miss_qpn;
                src_reg <= take_db ? 2'd2 : 2'd1;
                e_loaded <= 1'b0;
                e_evicted <= 1'b0;
                count_misses <= count_misses + 32'd1;
                state_reg <= S_LOOK;
                wait_reg <= LK_LAT[2:0] + 3'd1;
            end
        end
        S_LOOK: begin
            if (wait_reg == 3'd1) begin
                if (lk_hit) begin
                    // on chip already: nothing moves
                    e_err <= E_OK;
                    e_slot <= lk_slot;
                    state_reg <= S_IDLE;
                end else if (!first_ok) begin
                    e_err <= E_FULL;
                    state_reg <= S_IDLE;
                end else begin
                    // a free slot first; else round robin from the last fill
                    cand_reg <= d_free_valid ? d_free_slot : next_reg < first ? first : next_reg;
                    tries_reg <= 17'd0;
                    state_reg <= S_READ;
                    wait_reg <= 3'd2;
                end
            end
        end
        S_READ: begin
            // the candidate's binding, read back through the directory;
            // the host's held slot is passed over as the engine's refusal is
            if (wait_reg == 3'd0 && skip_held) begin
                state_reg <= S_NEXT;
            end else if (wait_reg == 3'd0) begin
                old_bound_reg <= d_rb_bound;
                old_qpn_reg <= d_rb_qpn;
                state_reg <= S_ISSUE;
            end
        end
        S_ISSUE: begin
            if (c_ready) begin
                cvalid_reg <= 1'b1;
                end_seen_reg <= 1'b0;
                state_reg <= S_ANS;
            end
        end
        S_ANS: begin
            if (c_ans_valid && !cvalid_reg) begin
                if (c_ans_taken) begin
                    // the slot's packets are held from here to the end
                    dop_reg <= 2'd2;
                    state_reg <= old_bound_reg ? S_UNB_OLD : S_BIND_NEW;
                end else begin
                    state_reg <= S_NEXT;
                end
            end
        end
        S_NEXT: begin
            // the candidate was refused: the next one, unless all were
            if (tries_reg + 17'd1 >= cache_slots) begin
                e_err <= E_FULL;
                state_reg <= S_IDLE;
            end else begin
                tries_reg <= tries_reg + 17'd1;
                cand_reg <= cand_next;
                state_reg <= S_READ;
                wait_reg <= 3'd2;
            end
        end
        S_UNB_OLD: begin
            dop_reg <= 2'd2;
            dvalid_reg <= 1'b1;
            after_reg <= S_BIND_NEW;
            wait_reg <= 3'd2;
            state_reg <= S_DIR;
        end
        S_BIND_NEW: begin
            dop_reg <= 2'd1;
            dqpn_reg <= qpn_reg;
            dvalid_reg <= 1'b1;
            after_reg <= S_END;
            wait_reg <= 3'd2;
            state_reg <= S_DIR;
        end
        S_END: begin
            if (end_seen_reg) begin
                if (end_ok_reg) begin
                    e_err <= E_OK;
                    e_slot <= cand_reg;
                    e_loaded <= 1'b1;
                    e_evicted <= old_bound_reg;
                    e_victim <= old_qpn_reg;
                    if (old_bound_reg) begin
                        next_reg <= cand_next;
                        count_evictions <= count_evictions + 32'd1;
                    end
                    state_reg <= S_IDLE;
                end else begin
                    state_reg <= S_UNB_NEW;
                end
            end
        end
        S_UNB_NEW: begin
            dop_reg <= 2'd2;
            dvalid_reg <= 1'b1;
            after_reg <= old_bound_reg ? S_BIND_OLD : S_IDLE;
            e_err <= E_READ;
            wait_reg <= 3'd2;
            state_reg <= S_DIR;
        end
        S_BIND_OLD: begin
            dop_reg <= 2'd1;
            dqpn_reg <= old_qpn_reg;
            dvalid_reg <= 1'b1;
            after_reg <= S_IDLE;
            wait_reg <= 3'd2;
            state_reg <= S_DIR;
        end
        S_DIR: begin
            // a directory command: busy from the cycle after it, err after
            if (wait_reg == 3'd0 && !d_busy) begin
                if (d_err != 3'd0) begin
                    e_err <= E_DIR;
                    state_reg <= S_IDLE;
                end else begin
                    state_reg <= after_reg;
                end
            end
        end
        default: begin
            state_reg <= S_IDLE;
        end
    endcase
    if (rst) begin
        state_reg <= S_IDLE;
        next_reg <= {QN_W{1'b0}};
        e_err <= E_OK;
        res_err <= E_OK;
        dvalid_reg <= 1'b0;
        cvalid_reg <= 1'b0;
        rx_miss_done <= 1'b0;
        db_miss_done <= 1'b0;
        busy_q <= 1'b0;
        cool_reg <= 2'd0;
        count_misses <= 32'd0;
        count_evictions <= 32'd0;
        count_full <= 32'd0;
        cmd_pend_reg <= 1'b0;
        count_lookups <= 32'd0;
        count_lookup_misses <= 32'd0;
        res_held <= 1'b0;
    end
end

endmodule

`resetall
