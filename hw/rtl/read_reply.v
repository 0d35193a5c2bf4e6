// RDMA READ responses (Linux rxe's read_reply): the responder hands over
// each READ request it accepted (PSN, key, access and bounds checked, the
// region's bus address from the MR table) as a job; this engine cuts the
// job into PMTU-sized packets, reads each packet's payload by DMA into a
// TX RAM slot of its own and hands the packets to roce_tx in PSN order:
// READ RESPONSE ONLY for a job of at most one PMTU (a zero-length READ
// too, with no payload and no DMA read), else FIRST, MIDDLE..., LAST.
// roce_tx puts the AETH (syndrome, MSN) on FIRST, LAST and ONLY.
//
// Jobs sit in a ring of JOBS entries: written by the responder, issued
// (payload reads) at one pointer and retired at another when their last
// packet is handed on, so the reads of the next READ start while the
// previous one's packets still wait for theirs. Slots are taken in order
// and freed in order when roce_tx has read a packet's payload (s_done).
// The read engine returns statuses in order, so a small FIFO of slot
// numbers says which slot each status is for.
//
// A payload read that fails (IOMMU fault, UR/CA completion) turns its
// packet into a NAK remote operational error at that packet's PSN; the
// job's other packets go out as read (the requester fails the READ at the
// NAK).
//
// An ACK job (s_job_ack) is an ACK or NAK the responder queued for a QP
// whose READ jobs are still here: it leaves as one ACKNOWLEDGE packet with
// the job's syndrome, PSN and MSN, after those READs' responses (an ACK of
// a later PSN that overtook them would tell the requester they were lost).
// Queued here instead of the responder's one ACK slot, it holds up no
// other QP's ACKs.
//
// ATOMIC_EN: an atomic job (CMP_SWAP or FETCH_ADD, checked by the
// responder: key, REMOTE_ATOMIC, bounds, 8-byte alignment) is an 8-byte
// read into its slot. The read engine's RAM write of those bytes is
// snooped for the original value; when the read's status comes, the new
// value (the swap if the original equals the compare, else the original;
// or the original plus the add) goes into the staging RAM at ATOM_RAM and
// is written back by one write descriptor, and when that write has been
// issued the job's packet, an ATOMIC ACKNOWLEDGE with the original value,
// may leave. Nothing is issued while an atomic runs: the next atomic's
// read (or a READ's) then follows the write-back on the link, where a
// read cannot pass a posted write, so atomics through this NIC are atomic
// with respect to each other. Each execution leaves a replay record
// (m_rec_*: QP, PSN, original value); a replay job (a duplicate the
// responder found a record for) reads nothing and answers with its
// record's value. Host memory holds the 8 bytes little-endian (the host's
// order, as rxe reads them); the wire's values are numbers here.
//
// busy: some job is not retired, or its last packet still waits in the
// output register. jobs_out counts the jobs whose last packet roce_tx
// took: the responder knows from it which QPs still have jobs here.

`resetall
`timescale 1ns / 1ps
`default_nettype none

module read_reply #(
    parameter RAM_ADDR_W = 17,
    parameter LEN_W = 17,
    parameter ID_W = 8,
    parameter JOBS = 4,                          // READ requests held at once (power of 2)
    parameter SLOTS = 4,                         // payload slots (power of 2)
    parameter SLOT_LOG = 12,                     // bytes per slot, log2 (at least the largest PMTU)
    parameter [RAM_ADDR_W-1:0] SLOT_BASE = 0,    // slot 0 in the engines' RAM space
    parameter [ID_W-1:0] ID_TAG = 0,
    parameter ATOMIC_EN = 0,                     // 1: atomic jobs (s_job_atomic)
    parameter DATA_W = 64,                       // the RAMs' word (snoop, write-back)
    parameter QN_W = 4,
    parameter [RAM_ADDR_W-1:0] ATOM_RAM = 0      // a staging RAM word for the new value
) (
    input  wire                   clk,
    input  wire                   rst,

    // READ requests accepted by the responder
    input  wire [23:0]            s_job_psn,        // the first response's PSN
    input  wire [23:0]            s_job_msn,        // AETH MSN
    input  wire [63:0]            s_job_bus,        // the region's bus address at the request's VA
    input  wire [31:0]            s_job_len,
    input  wire [3:0]             s_job_pmtu_log,   // log2 of the PMTU in bytes (8..12)
    input  wire [47:0]            s_job_dmac,
    input  wire [31:0]            s_job_dip,
    input  wire [15:0]            s_job_udp_sport,
    input  wire [23:0]            s_job_dest_qp,
    input  wire                   s_job_ack,        // an ACK job: no data, one ACKNOWLEDGE
    input  wire [7:0]             s_job_syndrome,   // ... with this AETH syndrome (else unused)
    input  wire [1:0]             s_job_atomic,     // 1 CMP_SWAP, 2 FETCH_ADD, 3 a duplicate's replay
    input  wire [63:0]            s_job_opa,        // compare, add, or the replay's original value
    input  wire [63:0]            s_job_opb,        // swap
    input  wire [QN_W-1:0]        s_job_qpn,        // (the replay record's key)
    input  wire                   s_job_valid,
    output wire                   s_job_ready,

    // payload reads
    output wire [63:0]            m_rd_desc_pcie_addr,
    output wire [RAM_ADDR_W-1:0]  m_rd_desc_ram_addr,
    output wire [LEN_W-1:0]       m_rd_desc_len,
    output wire [ID_W-1:0]        m_rd_desc_id,
    output wire                   m_rd_desc_valid,
    input  wire                   m_rd_desc_ready,
    input  wire                   s_rd_status_valid,
    input  wire [3:0]             s_rd_status_error,
    // the read engine's RAM writes (an atomic's original value)
    input  wire [RAM_ADDR_W-$clog2(DATA_W/8)-1:0] s_snoop_addr,
    input  wire [DATA_W-1:0]      s_snoop_data,
    input  wire [DATA_W/8-1:0]    s_snoop_strb,
    input  wire                   s_snoop_en,
    // an atomic's write-back: the staging RAM word, then its descriptor
    output wire [RAM_ADDR_W-$clog2(DATA_W/8)-1:0] m_ram_wr_addr,
    output wire [DATA_W-1:0]      m_ram_wr_data,
    output wire [DATA_W/8-1:0]    m_ram_wr_strb,
    output wire                   m_ram_wr_en,
    input  wire                   m_ram_wr_ready,
    output wire [63:0]            m_wr_desc_pcie_addr,
    output wire [RAM_ADDR_W-1:0]  m_wr_desc_ram_addr,
    output wire [LEN_W-1:0]       m_wr_desc_len,
    output wire [ID_W-1:0]        m_wr_desc_id,
    output wire                   m_wr_desc_valid,
    input  wire                   m_wr_desc_ready,
    input  wire                   s_wr_status_valid,
    // each atomic executed, for atomic_replay
    output wire                   m_rec_valid,
    output wire [QN_W-1:0]        m_rec_qpn,
    output wire [23:0]            m_rec_psn,
    output wire [63:0]            m_rec_orig,

    // packets to roce_tx
    output wire [47:0]            m_pkt_dmac,
    output wire [31:0]            m_pkt_dip,
    output wire [15:0]            m_pkt_udp_sport,
    output wire [7:0]             m_pkt_opcode,
    output wire [23:0]            m_pkt_dest_qp,
    output wire [23:0]            m_pkt_psn,
    output wire [7:0]             m_pkt_syndrome,
    output wire [23:0]            m_pkt_msn,
    output wire [RAM_ADDR_W-1:0]  m_pkt_payload_addr,
    output wire [12:0]            m_pkt_payload_len,
    output wire [63:0]            m_pkt_atomic_orig,  // ATOMIC ACKNOWLEDGE: AtomicAckETH
    output wire                   m_pkt_valid,
    input  wire                   m_pkt_ready,
    input  wire                   s_done,           // roce_tx read one of our packets' payload

    output wire                   busy,
    output wire [7:0]             jobs_out,         // jobs whose last packet roce_tx took (mod 256)
    output wire                   stat_rd_error,    // a payload read failed (a NAK went instead)
    output wire                   stat_resp,        // roce_tx took a READ RESPONSE packet (a cycle late)
    output wire                   stat_atomic,      // an atomic executed (its write-back issued)
    output wire                   stat_replay       // a duplicate atomic answered from its record
);

localparam JW = JOBS > 1 ? $clog2(JOBS) : 1;
localparam SW = SLOTS > 1 ? $clog2(SLOTS) : 1;

localparam [7:0] OP_RESP_FIRST = 8'h0D, OP_RESP_MIDDLE = 8'h0E, OP_RESP_LAST = 8'h0F,
    OP_RESP_ONLY = 8'h10, OP_ACK = 8'h11, OP_ATOMIC_ACK = 8'h12;
localparam [1:0] A_NONE = 2'd0, A_CMP_SWAP = 2'd1, A_FETCH_ADD = 2'd2, A_REPLAY = 2'd3;
localparam SEG_W = $clog2(DATA_W / 8);
localparam [7:0] SYN_ACK = 8'h1F, SYN_NAK_REM_OP = 8'h63;

initial begin
    if (JOBS < 2 || (1 << JW) != JOBS || SLOTS < 2 || (1 << SW) != SLOTS) begin
        $error("read_reply: JOBS and SLOTS must be powers of 2, at least 2");
        $finish;
    end
    if (SLOT_LOG < 12 || LEN_W <= SLOT_LOG || SLOT_LOG + SW > RAM_ADDR_W) begin
        $error("read_reply: a slot must hold a 4 KiB packet and the slots fit the RAM space");
        $finish;
    end
    if (DATA_W < 64 || ATOM_RAM[SEG_W-1:0] != {SEG_W{1'b0}} || SLOT_BASE[SEG_W-1:0] != {SEG_W{1'b0}}) begin
        $error("read_reply: the atomics' 8 bytes must sit in lanes 0..7 of a RAM word");
        $finish;
    end
end

// ---------------------------------------------------------------- the jobs
reg [23:0] job_psn [0:JOBS-1];
reg [23:0] job_msn [0:JOBS-1];
reg [63:0] job_bus [0:JOBS-1];
reg [31:0] job_len [0:JOBS-1];
reg [3:0]  job_pmtu [0:JOBS-1];
reg [47:0] job_dmac [0:JOBS-1];
reg [31:0] job_dip [0:JOBS-1];
reg [15:0] job_sport [0:JOBS-1];
reg [23:0] job_dqp [0:JOBS-1];
reg        job_ack [0:JOBS-1];
reg [7:0]  job_syn [0:JOBS-1];
reg [1:0]  job_atom [0:JOBS-1];
reg [63:0] job_opa [0:JOBS-1];       // (an executed atomic's original value, once known)
reg [63:0] job_opb [0:JOBS-1];
reg [QN_W-1:0] job_qpn [0:JOBS-1];
// (tied off in builds without atomics, so that these cost nothing)
wire [1:0]  in_atom = ATOMIC_EN != 0 ? s_job_atomic : A_NONE;
wire [63:0] in_opa = ATOMIC_EN != 0 ? s_job_opa : 64'd0;
wire [63:0] in_opb = ATOMIC_EN != 0 ? s_job_opb : 64'd0;
wire [QN_W-1:0] in_qpn = ATOMIC_EN != 0 ? s_job_qpn : {QN_W{1'b0}};
// the executing atomic's result, into its job (below)
wire atom_done;
reg [JW-1:0] atom_job_reg = {JW{1'b0}};
reg [63:0] atom_orig_reg = 64'd0;

reg [JW:0] job_wr_reg = {(JW+1){1'b0}};    // next free
reg [JW:0] job_iss_reg = {(JW+1){1'b0}};   // being issued
reg [JW:0] job_ret_reg = {(JW+1){1'b0}};   // oldest not retired

// (full: the pointers one lap apart)
assign s_job_ready = job_wr_reg[JW] == job_ret_reg[JW] || job_wr_reg[JW-1:0] != job_ret_reg[JW-1:0];

always @(posedge clk) begin
    if (s_job_valid && s_job_ready) begin
        job_psn[job_wr_reg[JW-1:0]] <= s_job_psn;
        job_msn[job_wr_reg[JW-1:0]] <= s_job_msn;
        job_bus[job_wr_reg[JW-1:0]] <= s_job_bus;
        job_len[job_wr_reg[JW-1:0]] <= s_job_len;
        job_pmtu[job_wr_reg[JW-1:0]] <= s_job_pmtu_log;
        job_dmac[job_wr_reg[JW-1:0]] <= s_job_dmac;
        job_dip[job_wr_reg[JW-1:0]] <= s_job_dip;
        job_sport[job_wr_reg[JW-1:0]] <= s_job_udp_sport;
        job_dqp[job_wr_reg[JW-1:0]] <= s_job_dest_qp;
        job_ack[job_wr_reg[JW-1:0]] <= s_job_ack;
        job_syn[job_wr_reg[JW-1:0]] <= s_job_syndrome;
        job_atom[job_wr_reg[JW-1:0]] <= in_atom;
        job_opa[job_wr_reg[JW-1:0]] <= in_opa;
        job_opb[job_wr_reg[JW-1:0]] <= in_opb;
        job_qpn[job_wr_reg[JW-1:0]] <= in_qpn;
    end
    // (the atomic's job is not retired yet, so never the one written above)
    if (atom_done) begin
        job_opa[atom_job_reg] <= atom_orig_reg;
    end
end

// ---------------------------------------------------------------- the slots
// per slot: its packet (PSN, length, opcode kind, job) and whether its
// payload is in (ready) or its read failed (err)
localparam [1:0] K_ONLY = 2'd0, K_FIRST = 2'd1, K_MIDDLE = 2'd2, K_LAST = 2'd3;
reg [23:0] slot_psn [0:SLOTS-1];
reg [12:0] slot_len [0:SLOTS-1];
reg [1:0]  slot_kind [0:SLOTS-1];
reg [JW-1:0] slot_job [0:SLOTS-1];
reg [SLOTS-1:0] slot_ready_reg = {SLOTS{1'b0}};
reg [SLOTS-1:0] slot_err_reg = {SLOTS{1'b0}};

reg [SW:0] slot_wr_reg = {(SW+1){1'b0}};     // next to take
reg [SW:0] slot_push_reg = {(SW+1){1'b0}};   // next to hand to roce_tx
reg [SW:0] slot_done_reg = {(SW+1){1'b0}};   // oldest roce_tx has not finished
wire slot_free = slot_wr_reg[SW] == slot_done_reg[SW] || slot_wr_reg[SW-1:0] != slot_done_reg[SW-1:0];

// the slots whose reads are out, in issue order (the statuses' order)
reg [SW-1:0] await_fifo [0:SLOTS-1];
reg [SW:0] await_wr_reg = {(SW+1){1'b0}};
reg [SW:0] await_rd_reg = {(SW+1){1'b0}};
wire [SW-1:0] await_head = await_fifo[await_rd_reg[SW-1:0]];

// ---------------------------------------------------------------- issue
// the job at job_iss_reg: its next packet's PSN, bus address and the bytes
// still to read
reg iss_active_reg = 1'b0;
reg iss_first_reg = 1'b0;
reg [23:0] iss_psn_reg = 24'd0;
reg [63:0] iss_bus_reg = 64'd0;
reg [31:0] iss_remain_reg = 32'd0;
reg [12:0] iss_pmtu_reg = 13'd0;

wire iss_last = iss_remain_reg <= {19'd0, iss_pmtu_reg};
wire [12:0] iss_chunk = iss_last ? iss_remain_reg[12:0] : iss_pmtu_reg;

reg [63:0] rd_addr_reg = 64'd0;
reg [RAM_ADDR_W-1:0] rd_ram_reg = {RAM_ADDR_W{1'b0}};
reg [12:0] rd_len_reg = 13'd0;
reg rd_valid_reg = 1'b0;

assign m_rd_desc_pcie_addr = rd_addr_reg;
assign m_rd_desc_ram_addr = rd_ram_reg;
assign m_rd_desc_len = {{(LEN_W-13){1'b0}}, rd_len_reg};
assign m_rd_desc_id = ID_TAG;
assign m_rd_desc_valid = rd_valid_reg;

function [RAM_ADDR_W-1:0] slot_addr(input [SW-1:0] s);
    begin
        slot_addr = SLOT_BASE + ({{(RAM_ADDR_W-SW){1'b0}}, s} << SLOT_LOG);
    end
endfunction

// ---------------------------------------------------------------- atomics
// one at a time: from its read's issue until its write-back is issued
localparam [2:0] AS_IDLE = 3'd0, AS_READ = 3'd1, AS_CALC = 3'd2, AS_RAM = 3'd3, AS_DESC = 3'd4,
    AS_WAIT = 3'd5;
reg [2:0] atom_st_reg = AS_IDLE;
reg [SW-1:0] atom_slot_reg = {SW{1'b0}};
reg [RAM_ADDR_W-SEG_W-1:0] atom_word_reg = {(RAM_ADDR_W-SEG_W){1'b0}};
reg [63:0] atom_new_reg = 64'd0;
reg [SLOTS-1:0] slot_atom_reg = {SLOTS{1'b0}};   // the slot's read is an atomic's
reg stat_atomic_reg = 1'b0;
reg stat_replay_reg = 1'b0;
wire atom_busy = atom_st_reg != AS_IDLE;
assign atom_done = atom_st_reg == AS_WAIT && s_wr_status_valid;

assign m_ram_wr_addr = ATOM_RAM[RAM_ADDR_W-1:SEG_W];
assign m_ram_wr_data = {{(DATA_W-64){1'b0}}, atom_new_reg};
assign m_ram_wr_strb = {{(DATA_W/8-8){1'b0}}, 8'hFF};
assign m_ram_wr_en = atom_st_reg == AS_RAM;
assign m_wr_desc_pcie_addr = job_bus[atom_job_reg];
assign m_wr_desc_ram_addr = ATOM_RAM;
assign m_wr_desc_len = {{(LEN_W-4){1'b0}}, 4'd8};
assign m_wr_desc_id = ID_TAG;
assign m_wr_desc_valid = atom_st_reg == AS_DESC;
assign m_rec_valid = atom_done;
assign m_rec_qpn = job_qpn[atom_job_reg];
assign m_rec_psn = job_psn[atom_job_reg];
assign m_rec_orig = atom_orig_reg;
assign stat_atomic = stat_atomic_reg;
assign stat_replay = stat_replay_reg;

// a packet is issued when its slot is free and the descriptor register is
// empty (or being taken), and no atomic runs
wire iss_go = iss_active_reg && slot_free && (!rd_valid_reg || m_rd_desc_ready) && !atom_busy;
wire [SW-1:0] iss_slot = slot_wr_reg[SW-1:0];
/* verilator lint_off UNUSEDSIGNAL */
wire [RAM_ADDR_W-1:0] iss_slot_addr = slot_addr(iss_slot);   // (its low bits are 0: a word)
/* verilator lint_on UNUSEDSIGNAL */
wire iss_atom = ATOMIC_EN != 0 && (job_atom[job_iss_reg[JW-1:0]] == A_CMP_SWAP
    || job_atom[job_iss_reg[JW-1:0]] == A_FETCH_ADD);

// ---------------------------------------------------------------- push
reg [47:0] pkt_dmac_reg = 48'd0;
reg [31:0] pkt_dip_reg = 32'd0;
reg [15:0] pkt_sport_reg = 16'd0;
reg [7:0]  pkt_opcode_reg = 8'd0;
reg [23:0] pkt_dqp_reg = 24'd0;
reg [23:0] pkt_psn_reg = 24'd0;
reg [7:0]  pkt_syn_reg = 8'd0;
reg [23:0] pkt_msn_reg = 24'd0;
reg [RAM_ADDR_W-1:0] pkt_addr_reg = {RAM_ADDR_W{1'b0}};
reg [12:0] pkt_len_reg = 13'd0;
reg [63:0] pkt_orig_reg = 64'd0;
reg pkt_valid_reg = 1'b0;
reg pkt_last_reg = 1'b0;                 // the packet is its job's last
reg [7:0] jobs_out_reg = 8'd0;
reg stat_rd_error_reg = 1'b0;
reg stat_resp_reg = 1'b0;

assign m_pkt_dmac = pkt_dmac_reg;
assign m_pkt_dip = pkt_dip_reg;
assign m_pkt_udp_sport = pkt_sport_reg;
assign m_pkt_opcode = pkt_opcode_reg;
assign m_pkt_dest_qp = pkt_dqp_reg;
assign m_pkt_psn = pkt_psn_reg;
assign m_pkt_syndrome = pkt_syn_reg;
assign m_pkt_msn = pkt_msn_reg;
assign m_pkt_payload_addr = pkt_addr_reg;
assign m_pkt_payload_len = pkt_len_reg;
assign m_pkt_atomic_orig = pkt_orig_reg;
assign m_pkt_valid = pkt_valid_reg;
// busy until roce_tx takes the last packet (a retired job's may still wait here)
assign busy = job_wr_reg != job_ret_reg || pkt_valid_reg;
assign stat_rd_error = stat_rd_error_reg;
assign stat_resp = stat_resp_reg;
assign jobs_out = jobs_out_reg;

wire [SW-1:0] push_slot = slot_push_reg[SW-1:0];
wire push_have = slot_push_reg != slot_wr_reg && slot_ready_reg[push_slot];
wire push_go = push_have && (!pkt_valid_reg || m_pkt_ready);
wire [JW-1:0] push_job = slot_job[push_slot];
wire push_err = slot_err_reg[push_slot];
wire [1:0] push_kind = slot_kind[push_slot];
wire push_atom = ATOMIC_EN != 0 && job_atom[push_job] != A_NONE;

function [7:0] kind_opcode(input [1:0] k);
    begin
        case (k)
            K_FIRST: kind_opcode = OP_RESP_FIRST;
            K_MIDDLE: kind_opcode = OP_RESP_MIDDLE;
            K_LAST: kind_opcode = OP_RESP_LAST;
            default: kind_opcode = OP_RESP_ONLY;
        endcase
    end
endfunction

integer k;
initial begin
    for (k = 0; k < SLOTS; k = k + 1) begin
        slot_psn[k] = 24'd0;
        slot_len[k] = 13'd0;
        slot_kind[k] = 2'd0;
        slot_job[k] = {JW{1'b0}};
        await_fifo[k] = {SW{1'b0}};
    end
end

always @(posedge clk) begin
    stat_rd_error_reg <= 1'b0;

    // a job starts issuing
    if (!iss_active_reg && job_iss_reg != job_wr_reg) begin
        iss_active_reg <= 1'b1;
        iss_first_reg <= 1'b1;
        iss_psn_reg <= job_psn[job_iss_reg[JW-1:0]];
        iss_bus_reg <= job_bus[job_iss_reg[JW-1:0]];
        iss_remain_reg <= job_ack[job_iss_reg[JW-1:0]] ? 32'd0 : job_len[job_iss_reg[JW-1:0]];
        iss_pmtu_reg <= 13'd1 << job_pmtu[job_iss_reg[JW-1:0]];
    end

    if (m_rd_desc_ready) begin
        rd_valid_reg <= 1'b0;
    end
    if (iss_go) begin
        slot_psn[iss_slot] <= iss_psn_reg;
        slot_len[iss_slot] <= iss_chunk;
        slot_kind[iss_slot] <= iss_first_reg && iss_last ? K_ONLY
            : iss_first_reg ? K_FIRST : iss_last ? K_LAST : K_MIDDLE;
        slot_job[iss_slot] <= job_iss_reg[JW-1:0];
        slot_ready_reg[iss_slot] <= iss_chunk == 13'd0;
        slot_err_reg[iss_slot] <= 1'b0;
        slot_atom_reg[iss_slot] <= iss_atom;
        slot_wr_reg <= slot_wr_reg + 1'b1;
        if (iss_atom) begin
            atom_st_reg <= AS_READ;
            atom_slot_reg <= iss_slot;
            atom_job_reg <= job_iss_reg[JW-1:0];
            atom_word_reg <= iss_slot_addr[RAM_ADDR_W-1:SEG_W];
        end
        if (iss_chunk != 13'd0) begin
            rd_addr_reg <= iss_bus_reg;
            rd_ram_reg <= slot_addr(iss_slot);
            rd_len_reg <= iss_chunk;
            rd_valid_reg <= 1'b1;
            await_fifo[await_wr_reg[SW-1:0]] <= iss_slot;
            await_wr_reg <= await_wr_reg + 1'b1;
        end
        iss_first_reg <= 1'b0;
        iss_psn_reg <= iss_psn_reg + 24'd1;
        iss_bus_reg <= iss_bus_reg + {51'd0, iss_chunk};
        iss_remain_reg <= iss_remain_reg - {19'd0, iss_chunk};
        if (iss_last) begin
            iss_active_reg <= 1'b0;
            job_iss_reg <= job_iss_reg + 1'b1;
        end
    end

    if (s_rd_status_valid) begin
        // (an atomic's slot is ready once its write-back is issued; a
        // failed read sends a NAK instead, nothing is written)
        if (!slot_atom_reg[await_head] || s_rd_status_error != 4'd0) begin
            slot_ready_reg[await_head] <= 1'b1;
        end
        slot_err_reg[await_head] <= s_rd_status_error != 4'd0;
        await_rd_reg <= await_rd_reg + 1'b1;
        if (slot_atom_reg[await_head]) begin
            atom_st_reg <= s_rd_status_error != 4'd0 ? AS_IDLE : AS_CALC;
        end
    end

    // the atomic: the original value from the read engine's RAM write
    // into its slot, the new value, its write-back
    stat_atomic_reg <= 1'b0;
    // (byte by byte: the read engine may write the word in pieces)
    if (atom_st_reg == AS_READ && s_snoop_en && s_snoop_addr == atom_word_reg) begin
        for (k = 0; k < 8; k = k + 1) begin
            if (s_snoop_strb[k]) begin
                atom_orig_reg[k*8 +: 8] <= s_snoop_data[k*8 +: 8];
            end
        end
    end
    if (atom_st_reg == AS_CALC) begin
        if (job_atom[atom_job_reg] == A_FETCH_ADD) begin
            atom_new_reg <= atom_orig_reg + job_opa[atom_job_reg];
        end else begin
            atom_new_reg <= atom_orig_reg == job_opa[atom_job_reg] ? job_opb[atom_job_reg] : atom_orig_reg;
        end
        atom_st_reg <= AS_RAM;
    end
    if (atom_st_reg == AS_RAM && m_ram_wr_ready) begin
        atom_st_reg <= AS_DESC;
    end
    if (atom_st_reg == AS_DESC && m_wr_desc_ready) begin
        atom_st_reg <= AS_WAIT;
    end
    if (atom_done) begin
        slot_ready_reg[atom_slot_reg] <= 1'b1;
        stat_atomic_reg <= 1'b1;
        atom_st_reg <= AS_IDLE;
    end

    if (m_pkt_ready) begin
        pkt_valid_reg <= 1'b0;
    end
    if (pkt_valid_reg && m_pkt_ready && pkt_last_reg) begin
        jobs_out_reg <= jobs_out_reg + 8'd1;
    end
    // (ACK jobs and the NAKs of failed reads leave as ACKNOWLEDGE: not counted)
    stat_resp_reg <= pkt_valid_reg && m_pkt_ready && pkt_opcode_reg != OP_ACK
        && pkt_opcode_reg != OP_ATOMIC_ACK;
    stat_replay_reg <= push_go && push_atom && job_atom[push_job] == A_REPLAY;
    if (push_go) begin
        pkt_dmac_reg <= job_dmac[push_job];
        pkt_dip_reg <= job_dip[push_job];
        pkt_sport_reg <= job_sport[push_job];
        pkt_dqp_reg <= job_dqp[push_job];
        pkt_msn_reg <= job_msn[push_job];
        pkt_psn_reg <= slot_psn[push_slot];
        pkt_addr_reg <= slot_addr(push_slot);
        if (job_ack[push_job]) begin
            pkt_opcode_reg <= OP_ACK;
            pkt_syn_reg <= job_syn[push_job];
            pkt_len_reg <= 13'd0;
        end else if (push_err) begin
            pkt_opcode_reg <= OP_ACK;
            pkt_syn_reg <= SYN_NAK_REM_OP;
            pkt_len_reg <= 13'd0;
            stat_rd_error_reg <= 1'b1;
        end else if (push_atom) begin
            pkt_opcode_reg <= OP_ATOMIC_ACK;
            pkt_syn_reg <= SYN_ACK;
            pkt_len_reg <= 13'd0;
        end else begin
            pkt_opcode_reg <= kind_opcode(push_kind);
            pkt_syn_reg <= SYN_ACK;
            pkt_len_reg <= slot_len[push_slot];
        end
        pkt_orig_reg <= job_opa[push_job];
        pkt_valid_reg <= 1'b1;
        pkt_last_reg <= push_kind == K_ONLY || push_kind == K_LAST;
        slot_ready_reg[push_slot] <= 1'b0;
        slot_push_reg <= slot_push_reg + 1'b1;
        if (push_kind == K_ONLY || push_kind == K_LAST) begin
            job_ret_reg <= job_ret_reg + 1'b1;
        end
    end

    if (s_done) begin
        slot_done_reg <= slot_done_reg + 1'b1;
    end

    if (rst) begin
        job_iss_reg <= {(JW+1){1'b0}};
        job_ret_reg <= {(JW+1){1'b0}};
        slot_wr_reg <= {(SW+1){1'b0}};
        slot_push_reg <= {(SW+1){1'b0}};
        slot_done_reg <= {(SW+1){1'b0}};
        await_wr_reg <= {(SW+1){1'b0}};
        await_rd_reg <= {(SW+1){1'b0}};
        slot_ready_reg <= {SLOTS{1'b0}};
        iss_active_reg <= 1'b0;
        rd_valid_reg <= 1'b0;
        atom_st_reg <= AS_IDLE;
        slot_atom_reg <= {SLOTS{1'b0}};
        stat_atomic_reg <= 1'b0;
        stat_replay_reg <= 1'b0;
        pkt_valid_reg <= 1'b0;
        jobs_out_reg <= 8'd0;
        stat_rd_error_reg <= 1'b0;
        stat_resp_reg <= 1'b0;
    end
end

// job_wr_reg is written here, apart from the job arrays
always @(posedge clk) begin
    if (s_job_valid && s_job_ready) begin
        job_wr_reg <= job_wr_reg + 1'b1;
    end
    if (rst) begin
        job_wr_reg <= {(JW+1){1'b0}};
    end
end

endmodule

`resetall
