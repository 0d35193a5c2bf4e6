// RoCEv2 receive parser: Ethernet frames from AXI-Stream -> RX RAM slots ->
// packet descriptors for the transport, only for frames that pass every
// check.
//
// Each frame is written, as it arrives, into a free RX RAM slot (slot s
// holds RAM bytes [s << SLOT_LOG, (s + 1) << SLOT_LOG); frame byte 0 at the
// slot's first byte). The write port never stalls and never writes outside
// the slot: beats past the slot end are dropped (and the frame is
// malformed). If no slot is free when a frame starts, the frame is still
// accepted, parsed and then discarded (stat_drop_nobuf).
//
// After the frame's last beat, and once its ICRC is known, the frame is
// either emitted as a descriptor (m_pkt_*, valid/ready; the slot stays in
// use until the consumer returns it with s_free_valid/s_free_slot, in any
// order) or dropped (its slot freed at once), with exactly one of the drop
// pulses, in this priority: stat_drop_nobuf (no slot), stat_drop_malformed
// (any header or length check below, tuser on the last beat, frame longer
// than a slot, not addressed to us), stat_drop_icrc. stat_rx_frame pulses
// for every frame.
//
// Checks: Ethernet type 0x0800 (no VLAN), destination MAC == cfg_mac;
// IPv4 version 4, IHL 5, MF 0 and fragment offset 0, header checksum,
// protocol 17, destination IP == cfg_ip, 14 + total length <= frame length
// (trailing Ethernet padding allowed), exactly 44 (a BTH alone) for MP PROBE
// and MP PROBE REPLY; UDP destination port 4791, UDP length
// == total length - 20; BTH TVer 0, opcode an RC opcode 0x00-0x11 or an mp
// opcode (MP_OPCODE_*, 0xC0-0xC6: which transport may take it is the
// responder's decision, per QP), total
// length >= 20 + 8 + 12 + extension headers + 4 (ICRC), PadCnt <= payload
// bytes, payload without pad <= 4096; the ICRC.
//
// ICRC: the CRC engine (icrc_crc32) runs over frame bytes 0 .. 14 + total
// length - 1, i.e. including the received ICRC, with the invariant-CRC
// substitutions of icrc_subst.v (bytes 0..13 -> FF FF FF FF 00 x6 FF FF FF
// FF, which leaves the register as 8 bytes of 0xFF would; TOS, TTL, IP
// checksum, UDP checksum, BTH byte 4 -> 0xFF; see roce_tx.v for the
// sources). A correct ICRC (sent LSB first, as rxe and RDMA NICs do) gives
// the CRC-32 residue 0x2144DF1C.
//
// Pipeline: input register R0 (RAM write, header byte capture, CRC feed
// register) -> E0 (descriptor fields into the pending memory) .. E4 (checks,
// one adder per stage) -> pending entry; CRC engine -> CRC result FIFO; both
// joined in frame order by the decision stage -> descriptor FIFO (one entry
// per slot) -> output register. The descriptor of a good frame is valid 11
// cycles after its last beat at DATA_W = 64 (14 at 512) when m_pkt_ready is
// high. One beat per cycle, back-to-back frames of any length:
// s_axis_rx_tready is registered and only drops when 11 frames are pending,
// which a stream of one-beat frames at one beat per cycle does not reach.
//
// A slot is held from a frame's first beat until the drop decision or the
// consumer's release, so sustaining short frames at line rate needs
// NUM_SLOTS >= (frame beats + ~12 + the consumer's hold time) / frame beats.

`resetall
`timescale 1ns / 1ps
`default_nettype none

module roce_rx #(
    // data path width: 64, 128, 256 or 512
    parameter DATA_W = 64,
    // RX RAM byte address width (>= SLOT_LOG + log2(NUM_SLOTS))
    parameter RAM_ADDR_W = 15,
    // number of frame slots in the RX RAM
    parameter NUM_SLOTS = 4,
    // slot size: 2^SLOT_LOG bytes (13: 8 KiB, enough for 4096-byte payloads)
    parameter SLOT_LOG = 13,
    // 1: a frame is only accepted when a slot is free for it (tready held
    // low meanwhile, as a PFC pause would); 0: it is accepted and dropped
    parameter LOSSLESS = 1
) (
    input  wire                                        clk,
    input  wire                                        rst,

    // Ethernet frames from the MAC (no FCS; tuser on the last beat = bad)
    input  wire [DATA_W-1:0]                           s_axis_rx_tdata,
    input  wire [DATA_W/8-1:0]                         s_axis_rx_tkeep,
    input  wire                                        s_axis_rx_tvalid,
    input  wire                                        s_axis_rx_tlast,
    input  wire                                        s_axis_rx_tuser,
    output wire                                        s_axis_rx_tready,

    // RX RAM write port (beat address, byte strobes)
    output wire [RAM_ADDR_W-$clog2(DATA_W/8)-1:0]      m_ram_wr_addr,
    output wire [DATA_W-1:0]                           m_ram_wr_data,
    output wire [DATA_W/8-1:0]                         m_ram_wr_strb,
    output wire                                        m_ram_wr_en,

    // packet descriptor of a good frame
    output wire [47:0]                                 m_pkt_dmac,
    output wire [47:0]                                 m_pkt_smac,
    output wire [31:0]                                 m_pkt_sip,
    output wire [31:0]                                 m_pkt_dip,
    output wire [15:0]                                 m_pkt_udp_sport,
    output wire [7:0]                                  m_pkt_opcode,
    output wire                                        m_pkt_se,
    output wire                                        m_pkt_ack_req,
    output wire [1:0]                                  m_pkt_pad_cnt,
    output wire [23:0]                                 m_pkt_dest_qp,
    output wire [23:0]                                 m_pkt_psn,
    output wire [63:0]                                 m_pkt_reth_va,
    output wire [31:0]                                 m_pkt_reth_rkey,
    output wire [31:0]                                 m_pkt_reth_len,
    output wire [31:0]                                 m_pkt_imm,
    output wire [7:0]                                  m_pkt_aeth_syndrome,
    output wire [23:0]                                 m_pkt_aeth_msn,
    output wire [31:0]                                 m_pkt_cmp_lo,     // an AtomicETH's last word
    output wire [RAM_ADDR_W-1:0]                       m_pkt_payload_addr,
    output wire [12:0]                                 m_pkt_payload_len,
    output wire [(NUM_SLOTS > 1 ? $clog2(NUM_SLOTS) : 1)-1:0] m_pkt_slot,
    output wire                                        m_pkt_valid,
    input  wire                                        m_pkt_ready,

    // slot release by the consumer
    input  wire [(NUM_SLOTS > 1 ? $clog2(NUM_SLOTS) : 1)-1:0] s_free_slot,
    input  wire                                        s_free_valid,

    // configuration
    input  wire [47:0]                                 cfg_mac,
    input  wire [31:0]                                 cfg_ip,

    // statistics: one-cycle pulses
    output wire                                        stat_rx_frame,
    output wire                                        stat_drop_icrc,
    output wire                                        stat_drop_malformed,
    output wire                                        stat_drop_nobuf
);

`include "rnic_formats.vh"

localparam BL = DATA_W / 8;
localparam SEG_W = $clog2(BL);
localparam SLOT_W = NUM_SLOTS > 1 ? $clog2(NUM_SLOTS) : 1;
localparam SLOT_BEAT_W = SLOT_LOG - SEG_W;
// beat counter (saturating): one more bit than a slot needs
localparam BC_W = SLOT_BEAT_W + 1;
// frame length in bytes, up to one slot (longer frames are oversize)
localparam FL_W = SLOT_LOG + 1;
// signed remainder of the CRC range relative to a beat
localparam RW = (FL_W > 17 ? FL_W : 17) + 1;

localparam HMAX = 82;
localparam NHB = (HMAX + BL - 1) / BL;

// the beat and lane of IPv4 total length (frame bytes 16, 17)
localparam TL_BEAT = 16 / BL;
localparam TL_LANE = 16 % BL;

localparam PF_AW = 4;
localparam PF_DEPTH = 1 << PF_AW;
localparam PF_STOP = PF_DEPTH - 5;
localparam CF_AW = 2;
localparam CF_DEPTH = 1 << CF_AW;
localparam OF_AW = SLOT_W;
localparam OF_DEPTH = 1 << OF_AW;

localparam [31:0] CRC_RESIDUE = 32'h2144DF1C;

localparam [RW-1:0]   BL_RW = {{RW-SEG_W-1{1'b0}}, 1'b1, {SEG_W{1'b0}}};
localparam TL_OFF = 14 - TL_BEAT * BL;
localparam [RW-1:0]   TL_OFF_RW = TL_OFF[RW-1:0];
localparam TL_OFF_M_BL = TL_OFF - BL;
localparam TL_END = (TL_BEAT + 1) * BL - 14;
localparam [15:0]     TL_END_MAX = TL_END[15:0];
localparam [RW-1:0]   TL_OFF_M_BL_RW = TL_OFF_M_BL[RW-1:0];
localparam [PF_AW:0]  PF_STOP_C = PF_STOP[PF_AW:0];
localparam [21:0]     FL14 = 22'd14;

// check configuration
initial begin
    if (DATA_W != 64 && DATA_W != 128 && DATA_W != 256 && DATA_W != 512) begin
        $error("Error: DATA_W must be 64, 128, 256 or 512 (instance %m)");
        $finish;
    end
    if (NUM_SLOTS < 1 || NUM_SLOTS > 64) begin
        $error("Error: NUM_SLOTS must be 1..64 (instance %m)");
        $finish;
    end
    if (SLOT_LOG < 8 || SLOT_LOG <= SEG_W || SLOT_LOG > 20) begin
        $error("Error: SLOT_LOG must be 8..20 and larger than log2(DATA_W/8) (instance %m)");
        $finish;
    end
    if (RAM_ADDR_W < SLOT_LOG + SLOT_W || RAM_ADDR_W > 32) begin
        $error("Error: RAM_ADDR_W must be at least SLOT_LOG + log2(NUM_SLOTS) and at most 32 (instance %m)");
        $finish;
    end
end

// lanes below rem (signed): 0 if rem <= 0, all if rem >= BL
function [BL-1:0] therm(input [RW-1:0] rem);
    begin
        if (rem[RW-1] || rem == {RW{1'b0}}) begin
            therm = {BL{1'b0}};
        end else if (rem[RW-2:SEG_W] != {RW-1-SEG_W{1'b0}}) begin
            therm = {BL{1'b1}};
        end else begin
            therm = ~({BL{1'b1}} << rem[SEG_W-1:0]);
        end
    end
endfunction

// ---------------------------------------------------------------------------
// input register

reg [DATA_W-1:0] r0_data_reg = {DATA_W{1'b0}};
reg [BL-1:0]     r0_keep_reg = {BL{1'b0}};
reg              r0_last_reg = 1'b0;
reg              r0_user_reg = 1'b0;
reg              r0_valid_reg = 1'b0;

reg rx_ready_reg = 1'b0;

assign s_axis_rx_tready = rx_ready_reg;

always @(posedge clk) begin
    r0_valid_reg <= s_axis_rx_tvalid && rx_ready_reg;
    if (s_axis_rx_tvalid && rx_ready_reg) begin
        r0_data_reg <= s_axis_rx_tdata;
        r0_keep_reg <= s_axis_rx_tkeep;
        r0_last_reg <= s_axis_rx_tlast;
        r0_user_reg <= s_axis_rx_tuser;
    end
    if (rst) begin
        r0_valid_reg <= 1'b0;
    end
end

// ---------------------------------------------------------------------------
// slot allocation

reg [NUM_SLOTS-1:0] free_map_reg = {NUM_SLOTS{1'b1}};

wire              alloc_ok;
wire [SLOT_W-1:0] alloc_slot;

priority_encoder #(.WIDTH(NUM_SLOTS), .OUT_W(SLOT_W)) alloc_enc (
    .in(free_map_reg),
    .valid(alloc_ok),
    .index(alloc_slot)
);

// ---------------------------------------------------------------------------
// per-beat processing of R0

reg [BC_W-1:0]   bc_reg = {BC_W{1'b0}};        // beat index of R0 in its frame
reg [SLOT_W-1:0] fr_slot_reg = {SLOT_W{1'b0}};
reg              fr_has_slot_reg = 1'b0;
reg              crc_on_reg = 1'b0;
reg [RW-1:0]     crc_rem_reg = {RW{1'b0}};     // CRC bytes left from R0's beat
// (the P_Key, MigReq and reserved BTH bits are captured but not read)
/* verilator lint_off UNUSEDSIGNAL */
reg [HMAX*8-1:0] hdr_reg = {HMAX*8{1'b0}};   // frame bytes 0..HMAX-1, byte f at [8f +: 8]
/* verilator lint_on UNUSEDSIGNAL */

// one-hot beat index for the header beats (all zero past the header)
reg [NHB-1:0]    beat_oh_reg = {{NHB-1{1'b0}}, 1'b1};
reg              past_hdr_reg = 1'b0;

wire             r_first = beat_oh_reg[0];
wire [SLOT_W-1:0] r_slot = r_first ? alloc_slot : fr_slot_reg;
wire             r_has_slot = r_first ? alloc_ok : fr_has_slot_reg;
wire             r_in_slot = !bc_reg[BC_W-1];
wire             r_claim = r0_valid_reg && r_first && alloc_ok;

// lossless input: slots left for frames that have not started yet
reg in_frame_reg = 1'b0;
wire in_accept = s_axis_rx_tvalid && rx_ready_reg;
wire in_frame_next = in_accept ? !s_axis_rx_tlast : in_frame_reg;
reg [SLOT_W:0] free_count;
integer fc;
always @* begin
    free_count = {(SLOT_W+1){1'b0}};
    for (fc = 0; fc < NUM_SLOTS; fc = fc + 1) begin
        free_count = free_count + {{SLOT_W{1'b0}}, free_map_reg[fc]};
    end
end
wire [SLOT_W+1:0] free_used = {1'b0, {SLOT_W{1'b0}}, r_claim} + {1'b0, {SLOT_W{1'b0}}, in_accept && !in_frame_reg};
wire [SLOT_W+1:0] free_after = {1'b0, free_count} > free_used ? {1'b0, free_count} - free_used : {(SLOT_W+2){1'b0}};
always @(posedge clk) begin
    if (in_accept) begin
        in_frame_reg <= !s_axis_rx_tlast;
    end
    if (rst) begin
        in_frame_reg <= 1'b0;
    end
end


// CRC range: frame bytes 0 .. 14 + total length - 1
wire             r_tl_here = beat_oh_reg[TL_BEAT];
wire             r_tl_known = past_hdr_reg || beat_oh_reg[NHB-1:TL_BEAT] != {NHB-TL_BEAT{1'b0}};
wire [15:0]      r_tl_data = {r0_data_reg[TL_LANE*8 +: 8], r0_data_reg[(TL_LANE+1)*8 +: 8]};
wire [RW-1:0]    r_crc_rem = r_tl_here ? {{RW-16{1'b0}}, r_tl_data} + TL_OFF_RW : crc_rem_reg;
wire             r_crc_on = r_first || crc_on_reg;
wire [BL-1:0]    r_crc_keep = (r_tl_known ? therm(r_crc_rem) : {BL{1'b1}}) & r0_keep_reg;
// the CRC range ends in this beat (on the total length's beat: compare the
// total length itself, 14 + tl - TL_BEAT * BL <= BL)
wire             r_crc_end = r_tl_here ? (r_tl_data <= TL_END_MAX) :
                             (r_tl_known && (crc_rem_reg[RW-1] || crc_rem_reg <= BL_RW));
wire             r_crc_last = r0_last_reg || r_crc_end;

// what the CRC sees of this beat: the ICRC field substitutions
wire [DATA_W-1:0] r_crc_data;

icrc_subst #(.DATA_W(DATA_W), .OH_W(NHB)) crc_subst (
    .beat_oh(beat_oh_reg),
    .in_data(r0_data_reg),
    .out_data(r_crc_data)
);

// bytes in the last beat
reg [SEG_W:0] r_nbytes;
integer kb;

always @* begin
    r_nbytes = {SEG_W+1{1'b0}};
    for (kb = 0; kb < BL; kb = kb + 1) begin
        r_nbytes = r_nbytes + {{SEG_W{1'b0}}, r0_keep_reg[kb]};
    end
end

// RAM write register
reg [RAM_ADDR_W-SEG_W-1:0] wr_addr_reg = {RAM_ADDR_W-SEG_W{1'b0}};
reg [DATA_W-1:0]           wr_data_reg = {DATA_W{1'b0}};
reg [BL-1:0]               wr_strb_reg = {BL{1'b0}};
reg                        wr_en_reg = 1'b0;

assign m_ram_wr_addr = wr_addr_reg;
assign m_ram_wr_data = wr_data_reg;
assign m_ram_wr_strb = wr_strb_reg;
assign m_ram_wr_en = wr_en_reg;

// CRC feed register
reg [DATA_W-1:0] cr_data_reg = {DATA_W{1'b0}};
reg [BL-1:0]     cr_keep_reg = {BL{1'b0}};
reg              cr_first_reg = 1'b0;
reg              cr_last_reg = 1'b0;
reg              cr_valid_reg = 1'b0;

// end of frame -> E0
reg [FL_W-1:0]   e0_flen_reg = {FL_W{1'b0}};
reg              e0_oversize_reg = 1'b0;
reg              e0_user_reg = 1'b0;
reg              e0_has_slot_reg = 1'b0;
reg [SLOT_W-1:0] e0_slot_reg = {SLOT_W{1'b0}};
reg              e0_valid_reg = 1'b0;

reg stat_rx_frame_reg = 1'b0;

assign stat_rx_frame = stat_rx_frame_reg;

wire [RAM_ADDR_W-SEG_W-1:0] r_wr_addr =
    ({{RAM_ADDR_W-SEG_W-SLOT_W{1'b0}}, r_slot} << SLOT_BEAT_W) |
    {{RAM_ADDR_W-SLOT_LOG{1'b0}}, bc_reg[SLOT_BEAT_W-1:0]};

wire [FL_W-1:0] r_flen = {bc_reg[SLOT_BEAT_W-1:0], {SEG_W{1'b0}}} + {{FL_W-SEG_W-1{1'b0}}, r_nbytes};

integer hb;

always @(posedge clk) begin
    wr_en_reg <= 1'b0;
    cr_valid_reg <= 1'b0;
    e0_valid_reg <= 1'b0;
    stat_rx_frame_reg <= 1'b0;

    if (r0_valid_reg) begin
        // RAM write, inside the slot only
        wr_en_reg <= r_has_slot && r_in_slot;
        wr_addr_reg <= r_wr_addr;
        wr_data_reg <= r0_data_reg;
        wr_strb_reg <= r0_keep_reg;

        // header bytes: frame byte f arrives in beat f / BL, lane f % BL
        for (hb = 0; hb < HMAX; hb = hb + 1) begin
            if (beat_oh_reg[hb / BL]) begin
                hdr_reg[hb*8 +: 8] <= r0_data_reg[(hb % BL)*8 +: 8];
            end
        end

        // CRC feed
        cr_valid_reg <= r_crc_on;
        cr_data_reg <= r_crc_data;
        cr_keep_reg <= r_crc_keep;
        cr_first_reg <= r_first;
        cr_last_reg <= r_crc_last;
        crc_on_reg <= r_crc_on && !r_crc_last;
        crc_rem_reg <= r_tl_here ? {{RW-16{1'b0}}, r_tl_data} + TL_OFF_M_BL_RW : crc_rem_reg - BL_RW;

        if (r_first) begin
            fr_slot_reg <= alloc_slot;
            fr_has_slot_reg <= alloc_ok;
        end

        if (r0_last_reg) begin
            bc_reg <= {BC_W{1'b0}};
            beat_oh_reg <= {{NHB-1{1'b0}}, 1'b1};
            past_hdr_reg <= 1'b0;
            e0_flen_reg <= r_flen;
            e0_oversize_reg <= !r_in_slot;
            e0_user_reg <= r0_user_reg;
            e0_has_slot_reg <= r_has_slot;
            e0_slot_reg <= r_slot;
            e0_valid_reg <= 1'b1;
            stat_rx_frame_reg <= 1'b1;
        end else begin
            if (bc_reg != {BC_W{1'b1}}) begin
                bc_reg <= bc_reg + 1'b1;
            end
            beat_oh_reg <= beat_oh_reg << 1;
            if (beat_oh_reg[NHB-1]) begin
                past_hdr_reg <= 1'b1;
            end
        end
    end

    if (rst) begin
        wr_en_reg <= 1'b0;
        cr_valid_reg <= 1'b0;
        e0_valid_reg <= 1'b0;
        stat_rx_frame_reg <= 1'b0;
        bc_reg <= {BC_W{1'b0}};
        beat_oh_reg <= {{NHB-1{1'b0}}, 1'b1};
        past_hdr_reg <= 1'b0;
        crc_on_reg <= 1'b0;
    end
end

// ---------------------------------------------------------------------------
// CRC engine and result FIFO

wire [31:0] crc_out;
wire        crc_out_valid;

icrc_crc32 #(
    .DATA_W(DATA_W)
) crc_inst (
    .clk(clk),
    .rst(rst),
    .s_data(cr_data_reg),
    .s_keep(cr_keep_reg),
    .s_first(cr_first_reg),
    .s_last(cr_last_reg),
    .s_valid(cr_valid_reg),
    .m_crc(crc_out),
    .m_crc_valid(crc_out_valid)
);

// results wait here for the (later) end of their frame's checks: at most
// one result per frame whose last beat was seen, and a result never waits
// for more than one frame's checks
reg           cf_ok_mem [0:CF_DEPTH-1];
reg [CF_AW:0] cf_wr_ptr_reg = {CF_AW+1{1'b0}};
reg [CF_AW:0] cf_rd_ptr_reg = {CF_AW+1{1'b0}};

wire cf_empty = cf_wr_ptr_reg == cf_rd_ptr_reg;
wire cf_head_ok = cf_ok_mem[cf_rd_ptr_reg[CF_AW-1:0]];
wire cf_pop;

always @(posedge clk) begin
    if (crc_out_valid) begin
        cf_ok_mem[cf_wr_ptr_reg[CF_AW-1:0]] <= crc_out == CRC_RESIDUE;
        cf_wr_ptr_reg <= cf_wr_ptr_reg + 1'b1;
    end
    if (cf_pop) begin
        cf_rd_ptr_reg <= cf_rd_ptr_reg + 1'b1;
    end
    if (rst) begin
        cf_wr_ptr_reg <= {CF_AW+1{1'b0}};
        cf_rd_ptr_reg <= {CF_AW+1{1'b0}};
    end
end

// ---------------------------------------------------------------------------
// E0: header checks (hdr_reg holds the whole header of the frame that ended)
//
// The descriptor fields go from hdr_reg straight into the pending field
// memory; the checks run on through E1..E4 (at most one adder per stage)
// and their result is pushed, in the same frame order, into the pending
// flag memory. A pending entry is complete once its flags are pushed.

// header byte f, and the big-endian 16-bit word at f: macros rather than
// functions, because the simulator copied the whole header into each of the
// 60 calls on every cycle
`define HB8(f) hdr_reg[(f)*8 +: 8]
`define HB16(f) {hdr_reg[(f)*8 +: 8], hdr_reg[((f)+1)*8 +: 8]}

wire [7:0] h_op = `HB8(42);
wire       h_se = hdr_reg[43*8+7];
wire [1:0] h_pad = hdr_reg[43*8+4 +: 2];
wire [3:0] h_tver = hdr_reg[43*8 +: 4];
wire       h_ack_req = hdr_reg[50*8+7];
wire [5:0] h_frag = hdr_reg[20*8 +: 6];   // MF, fragment offset high bits
// mp: MPETH (laid out as a RETH) in every data packet; ImmDt and MCETH in
// MP WRITE LAST WITH IMMEDIATE; AETH in MP ACKNOWLEDGE
wire h_mceth = h_op == MP_OPCODE_WRITE_LAST_IMM;
// MP SELECTIVE NAK: AETH and SNAKETH, taken in as a RETH and ImmDt (the
// AETH is the RETH's first word, and the AETH's place too)
wire h_snak = h_op == MP_OPCODE_SELECTIVE_NAK;
// MP PROBE and its reply: a BTH alone, so IP total length 20 + 8 + 12 + 4
wire h_probe = h_op == MP_OPCODE_PROBE || h_op == MP_OPCODE_PROBE_REPLY;
wire h_mp = h_op == MP_OPCODE_WRITE || h_op == MP_OPCODE_WRITE_LAST || h_mceth || h_op == MP_OPCODE_ACK
    || h_snak || h_probe;
// CMP_SWAP and FETCH_ADD: an AtomicETH (VA, R_Key, swap or add, compare),
// taken in as a RETH (its length: the swap's high word), ImmDt (the swap's
// low word), the AETH fields (the compare's high word; an MCETH's place)
// and cmp_lo; ATOMIC ACKNOWLEDGE: an AETH and AtomicAckETH, whose original
// value is the RETH's VA low word and R_Key
wire h_atomic = h_op == 8'h13 || h_op == 8'h14;
wire h_atack = h_op == 8'h12;
wire h_reth = h_op == 8'h06 || h_op == 8'h0A || h_op == 8'h0B || h_op == 8'h0C || h_atomic
    || h_op == MP_OPCODE_WRITE || h_op == MP_OPCODE_WRITE_LAST || h_mceth || h_snak;
wire h_imm = h_op == 8'h03 || h_op == 8'h05 || h_op == 8'h09 || h_op == 8'h0B || h_mceth || h_snak;
wire h_aeth = h_op == 8'h0D || h_op == 8'h0F || h_op == 8'h10 || h_op == 8'h11 || h_op == MP_OPCODE_ACK;

wire h_ok = `HB16(12) == 16'h0800 &&
            {`HB16(0), `HB16(2), `HB16(4)} == cfg_mac &&
            `HB8(14) == 8'h45 &&
            h_frag == 6'd0 && `HB8(21) == 8'h00 &&
            `HB8(23) == 8'd17 &&
            {`HB16(30), `HB16(32)} == cfg_ip &&
            `HB16(36) == 16'd4791 &&
            h_tver == 4'd0 &&
            (h_op <= 8'h14 || h_mp) &&
            !(h_probe && `HB16(16) != 16'd44);

// header length (payload offset) and the IP total length of a packet with
// no payload: 20 + 8 + 12 + extension headers + 4
wire [6:0]  h_hlen = h_atomic ? 7'd82 : h_atack ? 7'd66
    : h_reth ? (h_mceth ? 7'd78 : h_imm ? 7'd74 : 7'd70) : ((h_imm || h_aeth) ? 7'd58 : 7'd54);
wire [15:0] h_min_tot = {9'd0, h_hlen} - 16'd10;
wire [15:0] h_tot = `HB16(16);

// IPv4 header checksum: the ten 16-bit words, summed in pairs
wire [16:0] h_pair0 = {1'b0, `HB16(14)} + {1'b0, `HB16(16)};
wire [16:0] h_pair1 = {1'b0, `HB16(18)} + {1'b0, `HB16(20)};
wire [16:0] h_pair2 = {1'b0, `HB16(22)} + {1'b0, `HB16(24)};
wire [16:0] h_pair3 = {1'b0, `HB16(26)} + {1'b0, `HB16(28)};
wire [16:0] h_pair4 = {1'b0, `HB16(30)} + {1'b0, `HB16(32)};

// descriptor fields; ext = the 16 bytes after the BTH (RETH or MPETH), ImmDt
// after the RETH if both; aw = the AETH (the first 4 bytes after the BTH),
// or an MP WRITE LAST WITH IMMEDIATE's MCETH (after its ImmDt)
localparam DF_W = 48 + 48 + 32 + 32 + 16 + 8 + 1 + 1 + 2 + 24 + 24 + 32 + 128 + 32 + 32;

wire [31:0] h_aw = h_mceth || h_atomic ? {`HB16(74), `HB16(76)} : {`HB16(54), `HB16(56)};

wire [31:0] h_immdt = h_reth ? {`HB16(70), `HB16(72)} : {`HB16(54), `HB16(56)};

wire [DF_W-1:0] h_fields = {
    `HB16(0), `HB16(2), `HB16(4),      // dmac
    `HB16(6), `HB16(8), `HB16(10),     // smac
    `HB16(26), `HB16(28),                      // sip
    `HB16(30), `HB16(32),                      // dip
    `HB16(34),                                         // UDP source port
    h_op,                                                      // opcode
    h_se,                                                      // SE
    h_ack_req,                                                 // AckReq
    h_pad,                                                     // PadCnt
    `HB8(47), `HB16(48),                       // dest QP
    `HB8(51), `HB16(52),                       // PSN
    h_immdt,                                                   // ImmDt
    `HB16(54), `HB16(56), `HB16(58), `HB16(60),
    `HB16(62), `HB16(64), `HB16(66), `HB16(68),
    h_aw,                                                      // AETH or MCETH
    `HB16(78), `HB16(80)                                       // AtomicETH's last word
};

// payload address: slot base + header length
wire [RAM_ADDR_W-1:0] h_addr =
    ({{RAM_ADDR_W-SLOT_W{1'b0}}, e0_slot_reg} << SLOT_LOG) |
    {{RAM_ADDR_W-7{1'b0}}, h_hlen};

// pending entries: fields (written at E0) and flags (pushed at E4)
localparam PD_W = SLOT_W + RAM_ADDR_W + DF_W;
localparam OD_W = SLOT_W + RAM_ADDR_W + 13 + DF_W;

reg [PD_W-1:0] pfd_mem [0:PF_DEPTH-1];
reg [14:0]     pff_mem [0:PF_DEPTH-1];    // ok, has_slot, payload length
reg [PF_AW:0]  pfd_wr_ptr_reg = {PF_AW+1{1'b0}};
reg [PF_AW:0]  pf_wr_ptr_reg = {PF_AW+1{1'b0}};
reg [PF_AW:0]  pf_rd_ptr_reg = {PF_AW+1{1'b0}};

wire pf_empty = pf_wr_ptr_reg == pf_rd_ptr_reg;
// entries in use, including frames still in E1..E4
wire [PF_AW:0] pf_count = pfd_wr_ptr_reg - pf_rd_ptr_reg;
wire pf_pop;

reg              e1_ok_reg = 1'b0;
reg              e1_has_slot_reg = 1'b0;
reg [15:0]       e1_tot_reg = 16'd0;
reg [15:0]       e1_min_tot_reg = 16'd0;
reg [15:0]       e1_udp_reg = 16'd0;
reg [15:0]       e1_tot_m20_reg = 16'd0;
reg [21:0]       e1_flen_m14_reg = 22'd0;   // signed
reg [1:0]        e1_pad_reg = 2'd0;
reg [16:0]       e1_pair0_reg = 17'd0;
reg [16:0]       e1_pair1_reg = 17'd0;
reg [16:0]       e1_pair2_reg = 17'd0;
reg [16:0]       e1_pair3_reg = 17'd0;
reg [16:0]       e1_pair4_reg = 17'd0;
reg              e1_valid_reg = 1'b0;

always @(posedge clk) begin
    e1_valid_reg <= e0_valid_reg;
    if (e0_valid_reg) begin
        pfd_mem[pfd_wr_ptr_reg[PF_AW-1:0]] <= {e0_slot_reg, h_addr, h_fields};
        pfd_wr_ptr_reg <= pfd_wr_ptr_reg + 1'b1;

        e1_ok_reg <= h_ok && !e0_user_reg && !e0_oversize_reg;
        e1_has_slot_reg <= e0_has_slot_reg;
        e1_tot_reg <= h_tot;
        e1_min_tot_reg <= h_min_tot;
        e1_udp_reg <= `HB16(38);
        e1_tot_m20_reg <= h_tot - 16'd20;
        e1_flen_m14_reg <= {{22-FL_W{1'b0}}, e0_flen_reg} - FL14;
        e1_pad_reg <= h_pad;
        e1_pair0_reg <= h_pair0;
        e1_pair1_reg <= h_pair1;
        e1_pair2_reg <= h_pair2;
        e1_pair3_reg <= h_pair3;
        e1_pair4_reg <= h_pair4;
    end
    if (rst) begin
        e1_valid_reg <= 1'b0;
        pfd_wr_ptr_reg <= {PF_AW+1{1'b0}};
    end
end

// ---------------------------------------------------------------------------
// E1: lengths

wire [16:0] e1_plp = {1'b0, e1_tot_reg} - {1'b0, e1_min_tot_reg};   // payload + pad
// 14 + total length <= frame length
wire e1_end_ok = !e1_flen_m14_reg[21] && {6'd0, e1_tot_reg} <= e1_flen_m14_reg;
wire e1_udp_ok = e1_udp_reg == e1_tot_m20_reg;

reg              e2_ok_reg = 1'b0;
reg              e2_has_slot_reg = 1'b0;
reg [15:0]       e2_plp_reg = 16'd0;
reg [1:0]        e2_pad_reg = 2'd0;
reg [17:0]       e2_q0_reg = 18'd0;
reg [17:0]       e2_q1_reg = 18'd0;
reg [16:0]       e2_p4_reg = 17'd0;
reg              e2_valid_reg = 1'b0;

always @(posedge clk) begin
    e2_valid_reg <= e1_valid_reg;
    if (e1_valid_reg) begin
        e2_ok_reg <= e1_ok_reg && !e1_plp[16] && e1_end_ok && e1_udp_ok;
        e2_has_slot_reg <= e1_has_slot_reg;
        e2_plp_reg <= e1_plp[15:0];
        e2_pad_reg <= e1_pad_reg;
        e2_q0_reg <= {1'b0, e1_pair0_reg} + {1'b0, e1_pair1_reg};
        e2_q1_reg <= {1'b0, e1_pair2_reg} + {1'b0, e1_pair3_reg};
        e2_p4_reg <= e1_pair4_reg;
    end
    if (rst) begin
        e2_valid_reg <= 1'b0;
    end
end

// ---------------------------------------------------------------------------
// E2: pad

reg              e3_ok_reg = 1'b0;
reg              e3_has_slot_reg = 1'b0;
reg [15:0]       e3_plen_reg = 16'd0;
reg [18:0]       e3_r_reg = 19'd0;
reg [16:0]       e3_p4_reg = 17'd0;
reg              e3_valid_reg = 1'b0;

always @(posedge clk) begin
    e3_valid_reg <= e2_valid_reg;
    if (e2_valid_reg) begin
        e3_ok_reg <= e2_ok_reg && e2_plp_reg >= {14'd0, e2_pad_reg};
        e3_has_slot_reg <= e2_has_slot_reg;
        e3_plen_reg <= e2_plp_reg - {14'd0, e2_pad_reg};
        e3_r_reg <= {1'b0, e2_q0_reg} + {1'b0, e2_q1_reg};
        e3_p4_reg <= e2_p4_reg;
    end
    if (rst) begin
        e3_valid_reg <= 1'b0;
    end
end

// ---------------------------------------------------------------------------
// E3: payload length limit, checksum sum

reg              e4_ok_reg = 1'b0;
reg              e4_has_slot_reg = 1'b0;
reg [12:0]       e4_plen_reg = 13'd0;
reg [19:0]       e4_sum_reg = 20'd0;
reg              e4_valid_reg = 1'b0;

always @(posedge clk) begin
    e4_valid_reg <= e3_valid_reg;
    if (e3_valid_reg) begin
        e4_ok_reg <= e3_ok_reg && e3_plen_reg <= 16'd4096;
        e4_has_slot_reg <= e3_has_slot_reg;
        e4_plen_reg <= e3_plen_reg[12:0];
        e4_sum_reg <= {1'b0, e3_r_reg} + {3'd0, e3_p4_reg};
    end
    if (rst) begin
        e4_valid_reg <= 1'b0;
    end
end

// ---------------------------------------------------------------------------
// E4: the one's complement sum of the header is 0xFFFF exactly when the
// plain sum of its ten words is a non-zero multiple of 0xFFFF (at most 10)

reg e4_csum_ok;
integer ck;

always @* begin
    e4_csum_ok = 1'b0;
    for (ck = 1; ck <= 10; ck = ck + 1) begin
        if ({12'd0, e4_sum_reg} == ck * 32'hFFFF) begin
            e4_csum_ok = 1'b1;
        end
    end
end

always @(posedge clk) begin
    if (e4_valid_reg) begin
        pff_mem[pf_wr_ptr_reg[PF_AW-1:0]] <= {e4_ok_reg && e4_csum_ok, e4_has_slot_reg, e4_plen_reg};
        pf_wr_ptr_reg <= pf_wr_ptr_reg + 1'b1;
    end
    if (pf_pop) begin
        pf_rd_ptr_reg <= pf_rd_ptr_reg + 1'b1;
    end
    // input throttle: back-to-back tiny frames, and (LOSSLESS) no slot for
    // the next frame
    rx_ready_reg <= pf_count < PF_STOP_C && (LOSSLESS == 0 || in_frame_next || free_after != 0);
    if (rst) begin
        pf_wr_ptr_reg <= {PF_AW+1{1'b0}};
        pf_rd_ptr_reg <= {PF_AW+1{1'b0}};
        rx_ready_reg <= 1'b0;
    end
end

// ---------------------------------------------------------------------------
// decision: join check results and ICRC results in frame order

wire [PD_W-1:0]   pd_fields = pfd_mem[pf_rd_ptr_reg[PF_AW-1:0]];
wire [14:0]       pd_flags = pff_mem[pf_rd_ptr_reg[PF_AW-1:0]];
wire              pd_ok = pd_flags[14];
wire              pd_has_slot = pd_flags[13];
wire [SLOT_W-1:0] pd_slot = pd_fields[PD_W-1 -: SLOT_W];
wire [OD_W-1:0]   pd_desc = {pd_fields[PD_W-1 -: SLOT_W + RAM_ADDR_W], pd_flags[12:0], pd_fields[DF_W-1:0]};

wire dec = !pf_empty && !cf_empty;
assign pf_pop = dec;
assign cf_pop = dec;

wire dec_pass = dec && pd_has_slot && pd_ok && cf_head_ok;

reg              free_int_valid_reg = 1'b0;
reg [SLOT_W-1:0] free_int_slot_reg = {SLOT_W{1'b0}};
reg              stat_drop_icrc_reg = 1'b0;
reg              stat_drop_malformed_reg = 1'b0;
reg              stat_drop_nobuf_reg = 1'b0;

assign stat_drop_icrc = stat_drop_icrc_reg;
assign stat_drop_malformed = stat_drop_malformed_reg;
assign stat_drop_nobuf = stat_drop_nobuf_reg;

always @(posedge clk) begin
    free_int_valid_reg <= dec && pd_has_slot && !(pd_ok && cf_head_ok);
    free_int_slot_reg <= pd_slot;
    stat_drop_nobuf_reg <= dec && !pd_has_slot;
    stat_drop_malformed_reg <= dec && pd_has_slot && !pd_ok;
    stat_drop_icrc_reg <= dec && pd_has_slot && pd_ok && !cf_head_ok;
    if (rst) begin
        free_int_valid_reg <= 1'b0;
        stat_drop_nobuf_reg <= 1'b0;
        stat_drop_malformed_reg <= 1'b0;
        stat_drop_icrc_reg <= 1'b0;
    end
end

// slot map: claimed at a frame's first beat, freed by drops and the consumer
reg [NUM_SLOTS-1:0] free_set;
reg [NUM_SLOTS-1:0] claim_clr;
integer fs;

always @* begin
    free_set = {NUM_SLOTS{1'b0}};
    claim_clr = {NUM_SLOTS{1'b0}};
    for (fs = 0; fs < NUM_SLOTS; fs = fs + 1) begin
        if ((free_int_valid_reg && free_int_slot_reg == fs[SLOT_W-1:0]) ||
            (s_free_valid && s_free_slot == fs[SLOT_W-1:0])) begin
            free_set[fs] = 1'b1;
        end
        if (r_claim && alloc_slot == fs[SLOT_W-1:0]) begin
            claim_clr[fs] = 1'b1;
        end
    end
end

always @(posedge clk) begin
    free_map_reg <= (free_map_reg & ~claim_clr) | free_set;
    if (rst) begin
        free_map_reg <= {NUM_SLOTS{1'b1}};
    end
end

// ---------------------------------------------------------------------------
// descriptor FIFO (at most one entry per slot) and output register

reg [OD_W-1:0] of_mem [0:OF_DEPTH-1];
reg [OF_AW:0]  of_wr_ptr_reg = {OF_AW+1{1'b0}};
reg [OF_AW:0]  of_rd_ptr_reg = {OF_AW+1{1'b0}};

wire of_empty = of_wr_ptr_reg == of_rd_ptr_reg;

reg [OD_W-1:0] out_reg = {OD_W{1'b0}};
reg            out_valid_reg = 1'b0;

wire of_pop = !of_empty && (!out_valid_reg || m_pkt_ready);

always @(posedge clk) begin
    if (dec_pass) begin
        of_mem[of_wr_ptr_reg[OF_AW-1:0]] <= pd_desc;
        of_wr_ptr_reg <= of_wr_ptr_reg + 1'b1;
    end
    if (of_pop) begin
        of_rd_ptr_reg <= of_rd_ptr_reg + 1'b1;
    end

    if (m_pkt_ready) begin
        out_valid_reg <= 1'b0;
    end
    if (of_pop) begin
        out_reg <= of_mem[of_rd_ptr_reg[OF_AW-1:0]];
        out_valid_reg <= 1'b1;
    end

    if (rst) begin
        of_wr_ptr_reg <= {OF_AW+1{1'b0}};
        of_rd_ptr_reg <= {OF_AW+1{1'b0}};
        out_valid_reg <= 1'b0;
    end
end

wire [127:0] o_ext;
wire [31:0] o_aw;

assign {m_pkt_slot, m_pkt_payload_addr, m_pkt_payload_len,
        m_pkt_dmac, m_pkt_smac, m_pkt_sip, m_pkt_dip, m_pkt_udp_sport,
        m_pkt_opcode, m_pkt_se, m_pkt_ack_req, m_pkt_pad_cnt, m_pkt_dest_qp,
        m_pkt_psn, m_pkt_imm, o_ext, o_aw, m_pkt_cmp_lo} = out_reg;

assign m_pkt_reth_va = o_ext[127:64];
assign m_pkt_reth_rkey = o_ext[63:32];
assign m_pkt_reth_len = o_ext[31:0];
assign m_pkt_aeth_syndrome = o_aw[31:24];   // an mp data packet: its MCETH
assign m_pkt_aeth_msn = o_aw[23:0];
assign m_pkt_valid = out_valid_reg;

`undef HB8
`undef HB16

endmodule

`resetall
`default_nettype wire
