// RoCEv2 transmit framer: packet descriptor + payload in the TX RAM ->
// Ethernet frame on AXI-Stream (no FCS; the MAC adds it and pads runts).
//
// Frame: Ethernet II (dmac, smac, type 0x0800), IPv4 (version 4, IHL 5,
// DSCP/ECN 0, total length, ID 0, DF, TTL 64, protocol 17, header checksum,
// sip, dip), UDP (sport from the descriptor, dport 4791, length, checksum 0),
// BTH (opcode, SE, M 0, PadCnt, TVer 0, P_Key 0xFFFF, FECN/BECN 0, dest QP,
// AckReq, PSN), then per opcode RETH (WRITE FIRST/ONLY/ONLY_IMM, READ
// request), ImmDt (SEND/WRITE *_LAST_IMM/*_ONLY_IMM; after the RETH), AETH
// (read response FIRST/LAST/ONLY, ACK), AETH and AtomicAckETH (ATOMIC
// ACKNOWLEDGE, from s_pkt_atomic_orig), AtomicETH (COMPARE SWAP, FETCH
// ADD: the RETH fields, ImmDt and s_pkt_atomic_cmp), the payload, zero pad to a multiple
// of 4 bytes, and the ICRC. Other opcodes get no extension header.
//
// The mp opcodes (rnic's own, MP_OPCODE_* of rnic_formats.vh): MP WRITE and
// MP WRITE LAST carry an MPETH (virtual address, R_Key, and this packet's
// payload length, which roce_tx fills in from the descriptor's payload
// length), MP WRITE LAST WITH IMMEDIATE an MPETH, ImmDt and MCETH (the
// message length: the descriptor's RETH length), MP ACKNOWLEDGE an AETH,
// MP SELECTIVE NAK an AETH and SNAKETH (the bitmap of lost PSNs, from
// s_pkt_snak: laid out in the descriptor as a RETH and ImmDt whose first
// word is the AETH).
// An mp data packet has no AETH, so its MCETH travels in the AETH fields of
// the descriptor queue.
//
// ICRC as Linux rxe (drivers/infiniband/sw/rxe/rxe_icrc.c) and RDMA NICs
// compute it: CRC-32 (zlib crc32) over 8 bytes of 0xFF, the IPv4 header
// with TOS, TTL and header checksum set to ones, the UDP header with the
// checksum set to ones, the BTH with its byte 4 (FECN, BECN, resv6) set to
// ones, the extension headers, payload and pad; sent LSB first (rxe stores
// ~crc32_le() as a little-endian u32). Checked against a RoCEv2 CNP captured
// on a ConnectX-4 Lx (scapy test/contrib/roce.uts): ICRC bytes 82 fd 00 2a.
// The CRC engine sees frame bytes 0..13 replaced by FF FF FF FF 00 x6
// FF FF FF FF and the masked fields by ones (icrc_subst.v): from the
// initial all-ones state that leaves the CRC register exactly where 8 bytes
// of 0xFF leave it, so the CRC simply runs from byte 0.
//
// Every header length (54 + 0/4/12/16/20/24/28) is 2 mod 4 and payload + pad is a
// multiple of 4, so the ICRC always starts on a byte lane that is 2 mod 4:
// lane x of any beat carries ICRC byte (x - 2) mod 4.
//
// Descriptor pipeline and data path:
//
//   s_pkt -> descriptor queue (raw fields, written at accept; s_pkt_ready is
//   registered: room in the queue and the realigner command FIFO)
//        \-> A -> B -> B2 -> B3: lengths, payload geometry, IP checksum (one
//            adder per stage, never stalls) -> completes the queue entry
//   A also pushes the payload geometry into the realigner command FIFO, so
//   the payloads of the next packets are fetched while one is generated.
//   queue head -> C: the frame being generated.
//
//   realigner: RAM reader (credit based, one word per cycle) -> word buffer
//   -> shifter (two-word window shifted to the payload's byte lane in the
//   frame) -> aligned payload FIFO
//
//   generator: one beat per cycle from the header (C) and the aligned
//   payload -> beat register -> beat FIFO -> output register (ICRC merged)
//                                  \-> CRC engine -> CRC result FIFO
//
// The output starts a frame only when the generator is GAP beats ahead of it
// (or the frame's ICRC is already known), so that the ICRC is ready by the
// time the frame's last beat leaves: no bubbles inside a frame and none
// between back-to-back frames while tready is high and the generator is not
// starved. A beat carrying ICRC bytes never leaves before its CRC is known.
//
// m_done: one pulse per descriptor, in order, the cycle after the last RAM
// read of its payload was performed (the RAM slot may then be reused); for a
// zero-length payload when the reader passes the descriptor.

`resetall
`timescale 1ns / 1ps
`default_nettype none

module roce_tx #(
    // data path width: 64, 128, 256 or 512
    parameter DATA_W = 64,
    // TX RAM byte address width
    parameter RAM_ADDR_W = 16
) (
    input  wire                                   clk,
    input  wire                                   rst,

    // packet descriptor
    input  wire [47:0]                            s_pkt_dmac,
    input  wire [47:0]                            s_pkt_smac,
    input  wire [31:0]                            s_pkt_sip,
    input  wire [31:0]                            s_pkt_dip,
    input  wire [15:0]                            s_pkt_udp_sport,
    input  wire [7:0]                             s_pkt_opcode,
    input  wire                                   s_pkt_se,
    input  wire                                   s_pkt_ack_req,
    input  wire [23:0]                            s_pkt_dest_qp,
    input  wire [23:0]                            s_pkt_psn,
    input  wire [63:0]                            s_pkt_reth_va,
    input  wire [31:0]                            s_pkt_reth_rkey,
    input  wire [31:0]                            s_pkt_reth_len,
    input  wire [31:0]                            s_pkt_imm,
    input  wire [7:0]                             s_pkt_aeth_syndrome,
    input  wire [23:0]                            s_pkt_aeth_msn,
    input  wire [127:0]                           s_pkt_snak,         // MP SELECTIVE NAK: SNAKETH
    input  wire [63:0]                            s_pkt_atomic_orig,  // ATOMIC ACKNOWLEDGE: AtomicAckETH
    input  wire [63:0]                            s_pkt_atomic_cmp,   // CMP_SWAP / FETCH_ADD: AtomicETH's compare
    input  wire [RAM_ADDR_W-1:0]                  s_pkt_payload_addr,
    input  wire [12:0]                            s_pkt_payload_len,
    input  wire                                   s_pkt_valid,
    output wire                                   s_pkt_ready,

    // payload fully read from RAM: one pulse per descriptor, in order
    output wire                                   m_done,

    // TX RAM read port (beat address, data one cycle after rd_en)
    output wire [RAM_ADDR_W-$clog2(DATA_W/8)-1:0] m_ram_rd_addr,
    output wire                                   m_ram_rd_en,
    input  wire [DATA_W-1:0]                      s_ram_rd_data,

    // Ethernet frames to the MAC
    output wire [DATA_W-1:0]                      m_axis_tx_tdata,
    output wire [DATA_W/8-1:0]                    m_axis_tx_tkeep,
    output wire                                   m_axis_tx_tvalid,
    output wire                                   m_axis_tx_tlast,
    output wire                                   m_axis_tx_tuser,
    input  wire                                   m_axis_tx_tready
);

`include "rnic_formats.vh"

localparam BL = DATA_W / 8;
localparam SEG_W = $clog2(BL);
localparam WORD_ADDR_W = RAM_ADDR_W - SEG_W;

// frame positions (bytes): up to 78 + 8191 + 3 + 4; remainders are signed
localparam PW = 15;
// RAM words / aligned words per packet
localparam NW_W = 14;

// header: at most 78 bytes, NHB beats
localparam HMAX = 82;
localparam NHB = (HMAX + BL - 1) / BL;

// CRC engine latency (icrc_crc32) and the output's lead
localparam CRC_LAT = 3 + SEG_W;
localparam GAP = CRC_LAT + 2;

// FIFOs
localparam GQ_AW = 3;
localparam GQ_DEPTH = 1 << GQ_AW;
localparam RF_AW = GQ_AW + 1;
localparam RF_DEPTH = 1 << RF_AW;
localparam WB_AW = 3;
localparam WB_DEPTH = 1 << WB_AW;
localparam AF_AW = 2;
localparam AF_DEPTH = 1 << AF_AW;
localparam BF_AW = 4;
localparam BF_DEPTH = 1 << BF_AW;
localparam CF_AW = BF_AW;
localparam CF_DEPTH = 1 << CF_AW;

localparam [SEG_W+3:0] DATA_W_SH = {1'b1, {SEG_W+3{1'b0}}};
localparam [13:0] BL_M1_14 = {{14-SEG_W{1'b0}}, {SEG_W{1'b1}}};
localparam [13:0] BL_14 = {{13-SEG_W{1'b0}}, 1'b1, {SEG_W{1'b0}}};
localparam [6:0]  BL_7 = BL_14[6:0];
localparam [PW-1:0] BL2_PW = {{PW-SEG_W-2{1'b0}}, 1'b1, {SEG_W+1{1'b0}}};
localparam [PW-1:0] BL_PW = {{PW-SEG_W-1{1'b0}}, 1'b1, {SEG_W{1'b0}}};
localparam [BF_AW:0] GAP_BF = GAP[BF_AW:0];

// check configuration
initial begin
    if (DATA_W != 64 && DATA_W != 128 && DATA_W != 256 && DATA_W != 512) begin
        $error("Error: DATA_W must be 64, 128, 256 or 512 (instance %m)");
        $finish;
    end
    if (RAM_ADDR_W <= SEG_W || RAM_ADDR_W > 32) begin
        $error("Error: RAM_ADDR_W must be larger than log2(DATA_W/8) and at most 32 (instance %m)");
        $finish;
    end
    if (GAP >= BF_DEPTH - 1) begin
        $error("Error: beat FIFO too shallow for the CRC latency (instance %m)");
        $finish;
    end
end

// lanes below rem (signed): 0 if rem <= 0, all if rem >= BL
function [BL-1:0] therm(input [PW-1:0] rem);
    begin
        if (rem[PW-1] || rem == {PW{1'b0}}) begin
            therm = {BL{1'b0}};
        end else if (rem[PW-2:SEG_W] != {PW-1-SEG_W{1'b0}}) begin
            therm = {BL{1'b1}};
        end else begin
            therm = ~({BL{1'b1}} << rem[SEG_W-1:0]);
        end
    end
endfunction

// byte mask to bit mask
function [DATA_W-1:0] bytes_to_bits(input [BL-1:0] m);
    integer i;
    begin
        for (i = 0; i < BL; i = i + 1) begin
            bytes_to_bits[i*8 +: 8] = {8{m[i]}};
        end
    end
endfunction

// ---------------------------------------------------------------------------
// descriptor pipeline

// raw descriptor fields carried A -> B -> C
localparam DESC_W = 48 + 48 + 32 + 32 + 16 + 8 + 1 + 1 + 24 + 24 + 64 + 32 + 32 + 32 + 8 + 24 + 32;

wire [7:0] op = s_pkt_opcode;
// mp data packets: MPETH (its length = this packet's payload), and MCETH
// (the message length) in the AETH fields
wire in_mp_data = op == MP_OPCODE_WRITE || op == MP_OPCODE_WRITE_LAST || op == MP_OPCODE_WRITE_LAST_IMM;
// ATOMIC ACKNOWLEDGE: AETH and AtomicAckETH (the original value), laid out
// as the first 12 bytes of a RETH (as MP SELECTIVE NAK's AETH and SNAKETH)
wire in_atack = op == 8'h12;
// COMPARE SWAP and FETCH ADD: an AtomicETH (VA, R_Key, swap or add,
// compare), laid out as a RETH whose length is the swap's high word, then
// ImmDt (its low word), the AETH fields (the compare's high word) and a
// last word (its low word)
wire in_atomic = op == 8'h13 || op == 8'h14;
wire in_reth = op == 8'h06 || op == 8'h0A || op == 8'h0B || op == 8'h0C || in_mp_data || in_snak
    || in_atack || in_atomic;
wire in_imm = op == 8'h03 || op == 8'h05 || op == 8'h09 || op == 8'h0B || op == MP_OPCODE_WRITE_LAST_IMM
    || in_snak;
wire in_aeth = op == 8'h0D || op == 8'h0F || op == 8'h10 || op == 8'h11 || op == MP_OPCODE_ACK;
wire in_mceth = op == MP_OPCODE_WRITE_LAST_IMM;
wire in_snak = op == MP_OPCODE_SELECTIVE_NAK;

wire [DESC_W-1:0] in_desc = {
    s_pkt_dmac, s_pkt_smac, s_pkt_sip, s_pkt_dip, s_pkt_udp_sport,
    s_pkt_opcode, s_pkt_se, s_pkt_ack_req, s_pkt_dest_qp, s_pkt_psn,
    in_snak ? {s_pkt_aeth_syndrome, s_pkt_aeth_msn, s_pkt_snak[127:96]}
        : in_atack ? {s_pkt_aeth_syndrome, s_pkt_aeth_msn, s_pkt_atomic_orig[63:32]} : s_pkt_reth_va,
    in_snak ? s_pkt_snak[95:64] : in_atack ? s_pkt_atomic_orig[31:0] : s_pkt_reth_rkey,
    in_snak ? s_pkt_snak[63:32] : in_mp_data ? {19'd0, s_pkt_payload_len} : s_pkt_reth_len,
    in_snak ? s_pkt_snak[31:0] : s_pkt_imm,
    in_mp_data ? s_pkt_reth_len : in_atomic ? s_pkt_atomic_cmp[63:32] : {s_pkt_aeth_syndrome, s_pkt_aeth_msn},
    s_pkt_atomic_cmp[31:0]
};

wire [6:0] in_hlen = in_atomic ? 7'd82 : in_atack ? 7'd66 : in_reth ? (in_mceth ? 7'd78 : in_imm ? 7'd74 : 7'd70) : ((in_imm || in_aeth) ? 7'd58 : 7'd54);

// The raw descriptor goes into the queue memory at once; the values derived
// from it run through A, B, B2, B3 (one adder per stage, never stalling: a
// queue entry is reserved at accept) and complete the queue entry at B3.

// stage A
reg                  a_reth_reg = 1'b0;
reg                  a_imm_reg = 1'b0;
reg [6:0]            a_hlen_reg = 7'd0;
reg [RAM_ADDR_W-1:0] a_addr_reg = {RAM_ADDR_W{1'b0}};
reg [12:0]           a_len_reg = 13'd0;
reg [13:0]           a_lm1_reg = 14'd0;     // payload - 1
reg [13:0]           a_lpb_reg = 14'd0;     // payload + BL - 1
reg [13:0]           a_lp_reg = 14'd0;      // payload + pad
reg [16:0]           a_sip_reg = 17'd0;     // sum of the sip 16-bit words
reg [16:0]           a_dip_reg = 17'd0;     // sum of the dip 16-bit words
reg                  a_valid_reg = 1'b0;

// stage B
reg                  b_reth_reg = 1'b0;
reg                  b_imm_reg = 1'b0;
reg [1:0]            b_pad_reg = 2'd0;
reg [15:0]           b_totlen_reg = 16'd0;
reg [15:0]           b_udplen_reg = 16'd0;
reg [17:0]           b_q1_reg = 18'd0;
reg [16:0]           b_q2_reg = 17'd0;
reg [6:0]            b_hlen_reg = 7'd0;
reg [13:0]           b_pay_end_reg = 14'd0;
reg [13:0]           b_dat_end_reg = 14'd0;
reg [13:0]           b_frm_end_reg = 14'd0;
reg                  b_has_pay_reg = 1'b0;
reg                  b_need_pay0_reg = 1'b0;   // beat 0 carries payload
reg                  b_valid_reg = 1'b0;

// stages B2, B3: the IP header checksum
localparam GD_W = 2 + 2 + 16 + 16 + 7 + 14 + 14 + 14 + 2;   // carried B2 -> B3 -> queue

reg [GD_W-1:0]       b2_d_reg = {GD_W{1'b0}};
reg                  b2_last0_reg = 1'b0;      // the frame is one beat
reg [18:0]           b2_sum_reg = 19'd0;
reg                  b2_valid_reg = 1'b0;
reg [GD_W-1:0]       b3_d_reg = {GD_W{1'b0}};
reg                  b3_last0_reg = 1'b0;
reg [16:0]           b3_fold_reg = 17'd0;
reg                  b3_valid_reg = 1'b0;

// descriptor queue between the pipeline and C: lets the realigner fetch the
// payload of the next packets while the current one is generated
localparam GQ_W = GD_W + 1 + 16;

reg [DESC_W-1:0] gqd_mem [0:GQ_DEPTH-1];   // raw fields, written at accept
reg [GQ_W-1:0]   gqf_mem [0:GQ_DEPTH-1];   // derived, written from B3
reg [GQ_AW:0]    gqd_wr_ptr_reg = {GQ_AW+1{1'b0}};
reg [GQ_AW:0]    gq_wr_ptr_reg = {GQ_AW+1{1'b0}};
reg [GQ_AW:0]    gq_rd_ptr_reg = {GQ_AW+1{1'b0}};

// entries reserved (accepted, not yet in C), entries complete
wire [GQ_AW:0] gq_used = gqd_wr_ptr_reg - gq_rd_ptr_reg;
reg  gq_ready_reg = 1'b0;     // a complete entry waits (registered)

// stage C: the frame being generated
reg [DESC_W-1:0]     c_desc_reg = {DESC_W{1'b0}};
reg                  c_reth_reg = 1'b0;
reg                  c_imm_reg = 1'b0;
reg [1:0]            c_pad_reg = 2'd0;
reg [15:0]           c_totlen_reg = 16'd0;
reg [15:0]           c_udplen_reg = 16'd0;
reg [15:0]           c_csum_reg = 16'd0;
reg                  c_has_pay_reg = 1'b0;
reg                  c_valid_reg = 1'b0;

// generator position: bytes from the current beat's start to the end of
// the header, payload, data (payload + pad) and frame (signed, count down),
// and the current beat's control flags (kept registered for timing)
reg [PW-1:0]         hdr_rem_reg = {PW{1'b0}};
reg [PW-1:0]         pay_rem_reg = {PW{1'b0}};
reg [PW-1:0]         dat_rem_reg = {PW{1'b0}};
reg [PW-1:0]         frm_rem_reg = {PW{1'b0}};
reg                  g_need_pay_reg = 1'b0;
reg                  g_last_reg = 1'b0;

wire gen_pop;   // last beat of the frame in C generated
wire [RF_AW:0] rf_used;

wire move_qc = gq_ready_reg && (!c_valid_reg || gen_pop);
// room in the queue and (counting the packet in A) in the realigner FIFO,
// registered: assumes an accept in the current cycle
reg  pkt_ready_reg = 1'b0;
assign s_pkt_ready = pkt_ready_reg;
wire accept = s_pkt_valid && pkt_ready_reg;
wire [RF_AW:0] rf_used_a = rf_used + {{RF_AW{1'b0}}, a_valid_reg};

// A -> B: lengths and payload geometry
wire [SEG_W-1:0] a_alo = a_addr_reg[SEG_W-1:0];
wire [SEG_W-1:0] a_hlo = a_hlen_reg[SEG_W-1:0];
wire             a_zero = a_len_reg == 13'd0;
wire [13:0]      a_wspan = {{14-SEG_W{1'b0}}, a_alo} + a_lpb_reg;
// frame lane of the last payload byte, and the output beats after the first
wire [13:0]      a_bspan = {{14-SEG_W{1'b0}}, a_hlo} + a_lm1_reg;
wire [NW_W-1:0]  a_nwords = a_zero ? {NW_W{1'b0}} : a_wspan >> SEG_W;
wire [NW_W-1:0]  a_nb_m1 = a_bspan >> SEG_W;
wire [SEG_W-1:0] a_delta = a_alo - a_hlo;
wire             a_c = a_alo < a_hlo;
// the last payload byte comes from the second word of the last window
wire [SEG_W:0]   a_last_pos = {1'b0, a_delta} + {1'b0, a_bspan[SEG_W-1:0]};
wire             a_need1_last = a_last_pos[SEG_W];

always @(posedge clk) begin
    // queue
    if (accept) begin
        gqd_mem[gqd_wr_ptr_reg[GQ_AW-1:0]] <= in_desc;
        gqd_wr_ptr_reg <= gqd_wr_ptr_reg + 1'b1;
    end
    if (b3_valid_reg) begin
        gqf_mem[gq_wr_ptr_reg[GQ_AW-1:0]] <= {b3_d_reg, b3_last0_reg, ~(b3_fold_reg[15:0] + {15'd0, b3_fold_reg[16]})};
        gq_wr_ptr_reg <= gq_wr_ptr_reg + 1'b1;
    end
    if (move_qc) begin
        gq_rd_ptr_reg <= gq_rd_ptr_reg + 1'b1;
    end
    gq_ready_reg <= (gq_wr_ptr_reg + {{GQ_AW{1'b0}}, b3_valid_reg}) != (gq_rd_ptr_reg + {{GQ_AW{1'b0}}, move_qc});

    pkt_ready_reg <= gq_used < GQ_DEPTH - 1 && rf_used_a < RF_DEPTH - 1;

    // A
    a_valid_reg <= accept;
    if (accept) begin
        a_reth_reg <= in_reth;
        a_imm_reg <= in_imm;
        a_hlen_reg <= in_hlen;
        a_addr_reg <= s_pkt_payload_addr;
        a_len_reg <= s_pkt_payload_len;
        a_lm1_reg <= {1'b0, s_pkt_payload_len} - 14'd1;
        a_lpb_reg <= {1'b0, s_pkt_payload_len} + BL_M1_14;
        a_lp_reg <= ({1'b0, s_pkt_payload_len} + 14'd3) & 14'h3FFC;
        a_sip_reg <= {1'b0, s_pkt_sip[31:16]} + {1'b0, s_pkt_sip[15:0]};
        a_dip_reg <= {1'b0, s_pkt_dip[31:16]} + {1'b0, s_pkt_dip[15:0]};
    end

    // B
    b_valid_reg <= a_valid_reg;
    if (a_valid_reg) begin
        b_reth_reg <= a_reth_reg;
        b_imm_reg <= a_imm_reg;
        b_pad_reg <= a_lp_reg[1:0] - a_len_reg[1:0];
        // IP total length: 20 + 8 + 12 + ext + payload + pad + 4 = hlen - 10 + lp
        b_totlen_reg <= {2'd0, a_lp_reg} + ({9'd0, a_hlen_reg} - 16'd10);
        b_udplen_reg <= {2'd0, a_lp_reg} + ({9'd0, a_hlen_reg} - 16'd30);
        b_q1_reg <= {1'b0, a_sip_reg} + {1'b0, a_dip_reg};
        // constant words 0x4500, 0x4000, 0x4011 and the total length
        b_q2_reg <= {3'd0, a_lp_reg} + (17'h0C511 + {10'd0, a_hlen_reg} - 17'd10);
        b_hlen_reg <= a_hlen_reg;
        b_pay_end_reg <= {7'd0, a_hlen_reg} + {1'b0, a_len_reg};
        b_dat_end_reg <= {7'd0, a_hlen_reg} + a_lp_reg;
        b_frm_end_reg <= {7'd0, a_hlen_reg} + 14'd4 + a_lp_reg;
        b_has_pay_reg <= !a_zero;
        b_need_pay0_reg <= !a_zero && a_hlen_reg < BL_7;
    end

    // B2
    b2_valid_reg <= b_valid_reg;
    if (b_valid_reg) begin
        b2_d_reg <= {b_reth_reg, b_imm_reg, b_pad_reg, b_totlen_reg, b_udplen_reg, b_hlen_reg,
                     b_pay_end_reg, b_dat_end_reg, b_frm_end_reg, b_has_pay_reg, b_need_pay0_reg};
        b2_last0_reg <= b_frm_end_reg <= BL_14;
        b2_sum_reg <= {1'b0, b_q1_reg} + {2'd0, b_q2_reg};
    end

    // B3
    b3_valid_reg <= b2_valid_reg;
    if (b2_valid_reg) begin
        b3_d_reg <= b2_d_reg;
        b3_last0_reg <= b2_last0_reg;
        b3_fold_reg <= {1'b0, b2_sum_reg[15:0]} + {14'd0, b2_sum_reg[18:16]};
    end

    if (rst) begin
        pkt_ready_reg <= 1'b0;
        gqd_wr_ptr_reg <= {GQ_AW+1{1'b0}};
        gq_wr_ptr_reg <= {GQ_AW+1{1'b0}};
        gq_rd_ptr_reg <= {GQ_AW+1{1'b0}};
        gq_ready_reg <= 1'b0;
        a_valid_reg <= 1'b0;
        b_valid_reg <= 1'b0;
        b2_valid_reg <= 1'b0;
        b3_valid_reg <= 1'b0;
    end
end

// queue head
wire [DESC_W-1:0] q_desc = gqd_mem[gq_rd_ptr_reg[GQ_AW-1:0]];
wire              q_reth, q_imm, q_has_pay, q_need_pay0, q_last0;
wire [1:0]        q_pad;
wire [15:0]       q_totlen, q_udplen, q_csum;
wire [6:0]        q_hlen;
wire [13:0]       q_pay_end, q_dat_end, q_frm_end;

assign {q_reth, q_imm, q_pad, q_totlen, q_udplen, q_hlen, q_pay_end, q_dat_end, q_frm_end,
        q_has_pay, q_need_pay0, q_last0, q_csum} = gqf_mem[gq_rd_ptr_reg[GQ_AW-1:0]];

always @(posedge clk) begin
    if (gen_pop) begin
        c_valid_reg <= 1'b0;
    end
    if (move_qc) begin
        c_desc_reg <= q_desc;
        c_reth_reg <= q_reth;
        c_imm_reg <= q_imm;
        c_pad_reg <= q_pad;
        c_totlen_reg <= q_totlen;
        c_udplen_reg <= q_udplen;
        c_csum_reg <= q_csum;
        c_has_pay_reg <= q_has_pay;
        c_valid_reg <= 1'b1;
    end
    if (rst) begin
        c_valid_reg <= 1'b0;
    end
end

// ---------------------------------------------------------------------------
// realigner command FIFO: one entry per packet, two readers (RAM reader,
// shifter); the shifter never passes the reader

reg [WORD_ADDR_W-1:0] rf_wa_mem [0:RF_DEPTH-1];
reg [NW_W-1:0]        rf_nwords_mem [0:RF_DEPTH-1];
reg [NW_W-1:0]        rf_nb_m1_mem [0:RF_DEPTH-1];
reg                   rf_zero_mem [0:RF_DEPTH-1];
reg                   rf_one_mem [0:RF_DEPTH-1];     // one aligned word
reg                   rf_dnz_mem [0:RF_DEPTH-1];     // delta != 0
reg [SEG_W-1:0]       rf_delta_mem [0:RF_DEPTH-1];
reg                   rf_c_mem [0:RF_DEPTH-1];
reg                   rf_need1_last_mem [0:RF_DEPTH-1];

reg [RF_AW:0] rf_wr_ptr_reg = {RF_AW+1{1'b0}};
reg [RF_AW:0] rf_rd_ptr_reg = {RF_AW+1{1'b0}};   // RAM reader
reg [RF_AW:0] rf_sh_ptr_reg = {RF_AW+1{1'b0}};   // shifter

assign rf_used = rf_wr_ptr_reg - rf_sh_ptr_reg;
wire rf_rd_empty = rf_wr_ptr_reg == rf_rd_ptr_reg;
// the shifter only looks at packets the reader has started
wire rf_sh_empty = rf_rd_ptr_reg == rf_sh_ptr_reg;

wire [WORD_ADDR_W-1:0] rd_cmd_wa = rf_wa_mem[rf_rd_ptr_reg[RF_AW-1:0]];
wire [NW_W-1:0]        rd_cmd_nwords = rf_nwords_mem[rf_rd_ptr_reg[RF_AW-1:0]];

// the shifter's command: a registered copy of the entry at its pointer,
// refreshed every cycle (an entry is written at least two cycles before the
// shifter may use it: the reader has to start it first)
reg              sh_cmd_zero = 1'b0;
reg [NW_W-1:0]   sh_cmd_nb_m1 = {NW_W{1'b0}};
reg              sh_cmd_one = 1'b0;
reg              sh_cmd_dnz = 1'b0;
reg [SEG_W-1:0]  sh_cmd_delta = {SEG_W{1'b0}};
reg              sh_cmd_c = 1'b0;
reg              sh_cmd_need1_last = 1'b0;
reg [RF_AW:0]    rf_sh_ptr1_reg = {{RF_AW{1'b0}}, 1'b1};   // rf_sh_ptr_reg + 1

wire rf_rd_pop;
wire rf_sh_pop;
wire [RF_AW-1:0] sh_ptr_next = rf_sh_pop ? rf_sh_ptr1_reg[RF_AW-1:0] : rf_sh_ptr_reg[RF_AW-1:0];

always @(posedge clk) begin
    if (a_valid_reg) begin
        rf_wa_mem[rf_wr_ptr_reg[RF_AW-1:0]] <= a_addr_reg[RAM_ADDR_W-1:SEG_W];
        rf_nwords_mem[rf_wr_ptr_reg[RF_AW-1:0]] <= a_nwords;
        rf_nb_m1_mem[rf_wr_ptr_reg[RF_AW-1:0]] <= a_nb_m1;
        rf_zero_mem[rf_wr_ptr_reg[RF_AW-1:0]] <= a_zero;
        rf_one_mem[rf_wr_ptr_reg[RF_AW-1:0]] <= a_nb_m1 == {NW_W{1'b0}};
        rf_dnz_mem[rf_wr_ptr_reg[RF_AW-1:0]] <= a_delta != {SEG_W{1'b0}};
        rf_delta_mem[rf_wr_ptr_reg[RF_AW-1:0]] <= a_delta;
        rf_c_mem[rf_wr_ptr_reg[RF_AW-1:0]] <= a_c;
        rf_need1_last_mem[rf_wr_ptr_reg[RF_AW-1:0]] <= a_need1_last;
        rf_wr_ptr_reg <= rf_wr_ptr_reg + 1'b1;
    end
    if (rf_rd_pop) begin
        rf_rd_ptr_reg <= rf_rd_ptr_reg + 1'b1;
    end
    if (rf_sh_pop) begin
        rf_sh_ptr_reg <= rf_sh_ptr1_reg;
        rf_sh_ptr1_reg <= rf_sh_ptr1_reg + 1'b1;
    end
    sh_cmd_zero <= rf_zero_mem[sh_ptr_next];
    sh_cmd_nb_m1 <= rf_nb_m1_mem[sh_ptr_next];
    sh_cmd_one <= rf_one_mem[sh_ptr_next];
    sh_cmd_dnz <= rf_dnz_mem[sh_ptr_next];
    sh_cmd_delta <= rf_delta_mem[sh_ptr_next];
    sh_cmd_c <= rf_c_mem[sh_ptr_next];
    sh_cmd_need1_last <= rf_need1_last_mem[sh_ptr_next];
    if (rst) begin
        rf_wr_ptr_reg <= {RF_AW+1{1'b0}};
        rf_rd_ptr_reg <= {RF_AW+1{1'b0}};
        rf_sh_ptr_reg <= {RF_AW+1{1'b0}};
        rf_sh_ptr1_reg <= {{RF_AW{1'b0}}, 1'b1};
    end
end

// ---------------------------------------------------------------------------
// RAM reader and word buffer

reg [DATA_W-1:0] wb_mem [0:WB_DEPTH-1];
reg [WB_AW-1:0]  wb_wr_ptr_reg = {WB_AW{1'b0}};
reg [WB_AW-1:0]  wb_rd_ptr_reg = {WB_AW{1'b0}};
reg [WB_AW-1:0]  wb_rd_ptr1_reg = {{WB_AW-1{1'b0}}, 1'b1};   // wb_rd_ptr_reg + 1
reg [WB_AW:0]    wb_count_reg = {WB_AW+1{1'b0}};
reg              wb_ge1_reg = 1'b0;     // at least one word
reg              wb_ge2_reg = 1'b0;     // at least two words

reg [WORD_ADDR_W-1:0] ram_rd_addr_reg = {WORD_ADDR_W{1'b0}};
reg                   ram_rd_en_reg = 1'b0;
reg                   ram_rd_data_valid_reg = 1'b0;

reg [WORD_ADDR_W-1:0] rd_addr_reg = {WORD_ADDR_W{1'b0}};
reg [NW_W-1:0]        rd_count_reg = {NW_W{1'b0}};
reg                   rd_active_reg = 1'b0;

reg done_p1_reg = 1'b0;
reg done_p2_reg = 1'b0;

assign m_ram_rd_addr = ram_rd_addr_reg;
assign m_ram_rd_en = ram_rd_en_reg;
assign m_done = done_p2_reg;

// words taken by the shifter this cycle
wire [1:0] sh_pop_n;

wire [WB_AW:0]   wb_count_after = wb_count_reg + {{WB_AW{1'b0}}, ram_rd_data_valid_reg} - {{WB_AW-1{1'b0}}, sh_pop_n};
// conservative credit from registers only (this cycle's pops are ignored)
wire [WB_AW+1:0] wb_claimed = {1'b0, wb_count_reg} + {{WB_AW+1{1'b0}}, ram_rd_data_valid_reg} + {{WB_AW+1{1'b0}}, ram_rd_en_reg};
wire rd_credit = wb_claimed < WB_DEPTH;

wire rd_cmd_zero = rd_cmd_nwords == {NW_W{1'b0}};
wire rd_issue_cur = rd_active_reg && rd_credit;
wire rd_skip_new = !rd_active_reg && !rf_rd_empty && rd_cmd_zero;
wire rd_issue_new = !rd_active_reg && !rf_rd_empty && !rd_cmd_zero && rd_credit;
assign rf_rd_pop = rd_skip_new || rd_issue_new;

always @(posedge clk) begin
    ram_rd_en_reg <= 1'b0;
    ram_rd_data_valid_reg <= ram_rd_en_reg;
    done_p1_reg <= 1'b0;
    done_p2_reg <= done_p1_reg;

    if (rd_issue_cur) begin
        ram_rd_addr_reg <= rd_addr_reg;
        ram_rd_en_reg <= 1'b1;
        rd_addr_reg <= rd_addr_reg + 1'b1;
        rd_count_reg <= rd_count_reg - 1'b1;
        if (rd_count_reg == {{NW_W-1{1'b0}}, 1'b1}) begin
            rd_active_reg <= 1'b0;
            done_p1_reg <= 1'b1;
        end
    end else if (rd_issue_new) begin
        ram_rd_addr_reg <= rd_cmd_wa;
        ram_rd_en_reg <= 1'b1;
        rd_addr_reg <= rd_cmd_wa + 1'b1;
        rd_count_reg <= rd_cmd_nwords - 1'b1;
        rd_active_reg <= rd_cmd_nwords != {{NW_W-1{1'b0}}, 1'b1};
        done_p1_reg <= rd_cmd_nwords == {{NW_W-1{1'b0}}, 1'b1};
    end else if (rd_skip_new) begin
        done_p1_reg <= 1'b1;
    end

    if (ram_rd_data_valid_reg) begin
        wb_mem[wb_wr_ptr_reg] <= s_ram_rd_data;
        wb_wr_ptr_reg <= wb_wr_ptr_reg + 1'b1;
    end
    wb_rd_ptr_reg <= wb_rd_ptr_reg + {{WB_AW-2{1'b0}}, sh_pop_n};
    wb_rd_ptr1_reg <= wb_rd_ptr1_reg + {{WB_AW-2{1'b0}}, sh_pop_n};
    wb_count_reg <= wb_count_after;
    wb_ge1_reg <= wb_count_after != {WB_AW+1{1'b0}};
    wb_ge2_reg <= wb_count_after > {{WB_AW{1'b0}}, 1'b1};

    if (rst) begin
        ram_rd_en_reg <= 1'b0;
        ram_rd_data_valid_reg <= 1'b0;
        rd_active_reg <= 1'b0;
        done_p1_reg <= 1'b0;
        done_p2_reg <= 1'b0;
        wb_wr_ptr_reg <= {WB_AW{1'b0}};
        wb_rd_ptr_reg <= {WB_AW{1'b0}};
        wb_rd_ptr1_reg <= {{WB_AW-1{1'b0}}, 1'b1};
        wb_count_reg <= {WB_AW+1{1'b0}};
        wb_ge1_reg <= 1'b0;
        wb_ge2_reg <= 1'b0;
    end
end

// ---------------------------------------------------------------------------
// shifter: aligned payload word j of a packet is the two-word window
// {W[j-c+1], W[j-c]} >> 8 * delta, W = the packet's RAM words, W[-1] = 0

reg [DATA_W-1:0] af_mem [0:AF_DEPTH-1];
reg [AF_AW:0]    af_wr_ptr_reg = {AF_AW+1{1'b0}};
reg [AF_AW:0]    af_rd_ptr_reg = {AF_AW+1{1'b0}};

// fill level (including the word in the shifter's output register) and
// registered full / empty flags (timing); empty counts written words only
reg  [AF_AW:0] af_count_reg = {AF_AW+1{1'b0}};
reg  [AF_AW:0] af_wcount_reg = {AF_AW+1{1'b0}};
reg            af_full_reg = 1'b0;
reg            af_empty_reg = 1'b1;

reg [DATA_W-1:0] sh_out_reg = {DATA_W{1'b0}};
reg              sh_out_valid_reg = 1'b0;
wire af_full = af_full_reg;
wire af_empty = af_empty_reg;
wire [DATA_W-1:0] af_head = af_mem[af_rd_ptr_reg[AF_AW-1:0]];
wire af_pop;
wire sh_fire;
wire [AF_AW:0] af_count_next = af_count_reg + {{AF_AW{1'b0}}, sh_fire} - {{AF_AW{1'b0}}, af_pop};

reg            sh_start_reg = 1'b1;            // next output is j = 0
reg [NW_W-1:0] sh_left_reg = {NW_W{1'b0}};     // outputs after this one (j > 0)
reg            sh_left_zero_reg = 1'b0;        // sh_left_reg == 0

wire [NW_W-1:0] sh_left = sh_start_reg ? sh_cmd_nb_m1 : sh_left_reg;
wire sh_zero = sh_cmd_zero;
wire sh_last = sh_start_reg ? sh_cmd_one : sh_left_zero_reg;
wire sh_virt0 = sh_start_reg && sh_cmd_c;
wire sh_need0 = !sh_virt0;
wire sh_need1 = sh_last ? sh_cmd_need1_last : sh_cmd_dnz;
wire sh_have = (sh_need0 && sh_need1) ? wb_ge2_reg : ((sh_need0 || sh_need1) ? wb_ge1_reg : 1'b1);

wire sh_skip = !rf_sh_empty && sh_zero;
assign sh_fire = !rf_sh_empty && !sh_zero && sh_have && !af_full;
assign rf_sh_pop = sh_skip || (sh_fire && sh_last);
assign sh_pop_n = !sh_fire ? 2'd0 :
                  sh_last ? ({1'b0, sh_need0} + {1'b0, sh_cmd_need1_last}) :
                  {1'b0, sh_need0};

wire [DATA_W-1:0] wb_w0 = wb_mem[wb_rd_ptr_reg];
wire [DATA_W-1:0] wb_w1 = wb_mem[wb_rd_ptr1_reg];
wire [DATA_W-1:0] sh_win0 = sh_virt0 ? {DATA_W{1'b0}} : wb_w0;
wire [DATA_W-1:0] sh_win1 = sh_virt0 ? wb_w0 : wb_w1;
wire [SEG_W+3:0]  sh_rsh = {1'b0, sh_cmd_delta, 3'b000};
wire [SEG_W+3:0]  sh_lsh = DATA_W_SH - sh_rsh;
wire [DATA_W-1:0] sh_data = (sh_win0 >> sh_rsh) | (sh_win1 << sh_lsh);

always @(posedge clk) begin
    sh_out_valid_reg <= sh_fire;
    if (sh_fire) begin
        sh_out_reg <= sh_data;
    end
    if (sh_out_valid_reg) begin
        af_mem[af_wr_ptr_reg[AF_AW-1:0]] <= sh_out_reg;
        af_wr_ptr_reg <= af_wr_ptr_reg + 1'b1;
    end
    if (sh_fire) begin
        sh_start_reg <= sh_last;
        sh_left_reg <= sh_left - 1'b1;
        sh_left_zero_reg <= sh_left == {{NW_W-1{1'b0}}, 1'b1};
    end
    if (af_pop) begin
        af_rd_ptr_reg <= af_rd_ptr_reg + 1'b1;
    end
    af_count_reg <= af_count_next;
    af_full_reg <= (sh_fire && !af_pop) ? af_count_reg == AF_DEPTH - 1 :
                   (!sh_fire && af_pop) ? 1'b0 : af_full_reg;
    af_wcount_reg <= af_wcount_reg + {{AF_AW{1'b0}}, sh_out_valid_reg} - {{AF_AW{1'b0}}, af_pop};
    af_empty_reg <= (!sh_out_valid_reg && af_pop) ? af_wcount_reg == {{AF_AW{1'b0}}, 1'b1} :
                    (sh_out_valid_reg && !af_pop) ? 1'b0 : af_empty_reg;
    if (rst) begin
        af_wr_ptr_reg <= {AF_AW+1{1'b0}};
        af_rd_ptr_reg <= {AF_AW+1{1'b0}};
        af_count_reg <= {AF_AW+1{1'b0}};
        af_wcount_reg <= {AF_AW+1{1'b0}};
        sh_out_valid_reg <= 1'b0;
        af_full_reg <= 1'b0;
        af_empty_reg <= 1'b1;
        sh_start_reg <= 1'b1;
    end
end

// ---------------------------------------------------------------------------
// generator

// header of the frame in C, wire order (first byte in the top bits)
wire [47:0] c_dmac, c_smac;
wire [31:0] c_sip, c_dip;
wire [15:0] c_sport;
wire [7:0]  c_opcode;
wire        c_se, c_ack_req;
wire [23:0] c_dqp, c_psn;
wire [63:0] c_va;
wire [31:0] c_rkey, c_rlen, c_imm;
wire [7:0]  c_syn;
wire [23:0] c_msn;
wire [31:0] c_cmp_lo;

assign {c_dmac, c_smac, c_sip, c_dip, c_sport, c_opcode, c_se, c_ack_req,
        c_dqp, c_psn, c_va, c_rkey, c_rlen, c_imm, c_syn, c_msn, c_cmp_lo} = c_desc_reg;

wire [31:0] c_ext0 = c_reth_reg ? c_va[63:32] : (c_imm_reg ? c_imm : {c_syn, c_msn});

wire [HMAX*8-1:0] hdr_be = {
    // Ethernet
    c_dmac, c_smac, 16'h0800,
    // IPv4
    8'h45, 8'h00, c_totlen_reg, 16'h0000, 16'h4000, 8'h40, 8'h11, c_csum_reg, c_sip, c_dip,
    // UDP
    c_sport, 16'd4791, c_udplen_reg, 16'h0000,
    // BTH
    c_opcode, c_se, 1'b0, c_pad_reg, 4'h0, 16'hFFFF, 8'h00, c_dqp, c_ack_req, 7'd0, c_psn,
    // RETH or MPETH / ImmDt / MCETH, or AETH (bytes beyond the header length
    // are never used)
    c_ext0, c_va[31:0], c_rkey, c_rlen, c_imm, c_syn, c_msn, c_cmp_lo
};

// little-endian byte order (frame byte f in bits [8f+7:8f]), padded. A
// generate loop of wires, not a procedural loop: Verilator rebuilt the
// whole of hdr_be in every iteration of one, HMAX times a cycle (a fifth of
// the simulator's time; see sim/README.md)
wire [NHB*DATA_W-1:0] hdr_le;
genvar hb;
generate
    for (hb = 0; hb < HMAX; hb = hb + 1) begin : g_hdr_le
        assign hdr_le[hb*8 +: 8] = hdr_be[(HMAX-1-hb)*8 +: 8];
    end
    if (NHB*DATA_W > HMAX*8) begin : g_hdr_pad
        assign hdr_le[NHB*DATA_W-1:HMAX*8] = {(NHB*DATA_W-HMAX*8){1'b0}};
    end
endgenerate

// beat index of the current beat, one-hot while in the header (all zero
// after it)
reg [NHB-1:0] g_oh_reg = {{NHB-1{1'b0}}, 1'b1};

wire [BL-1:0] g_hdr_m = therm(hdr_rem_reg);
wire [BL-1:0] g_pay_m = therm(pay_rem_reg) & ~g_hdr_m;
wire [BL-1:0] g_dat_m = therm(dat_rem_reg);
wire [BL-1:0] g_keep = therm(frm_rem_reg);
wire [BL-1:0] g_icrc_m = g_keep & ~g_dat_m;

wire g_need_pay = g_need_pay_reg;
wire g_first = g_oh_reg[0];
wire g_last = g_last_reg;
wire g_crc_valid = !dat_rem_reg[PW-1] && dat_rem_reg != {PW{1'b0}};
wire g_crc_last = g_crc_valid && dat_rem_reg <= BL_PW;

// flags of the next beat of the same frame (remainders drop by BL)
wire g_need_pay_next = c_has_pay_reg && !pay_rem_reg[PW-1] && pay_rem_reg > BL_PW &&
                       (hdr_rem_reg[PW-1] || hdr_rem_reg < BL2_PW);
wire g_last_next = frm_rem_reg <= BL2_PW;

reg [DATA_W-1:0] g_hdr_data;
integer ob;

always @* begin
    g_hdr_data = {DATA_W{1'b0}};
    for (ob = 0; ob < NHB; ob = ob + 1) begin
        g_hdr_data = g_hdr_data | (hdr_le[ob*DATA_W +: DATA_W] & {DATA_W{g_oh_reg[ob]}});
    end
end
wire [DATA_W-1:0] g_data = (g_hdr_data & bytes_to_bits(g_hdr_m)) | (af_head & bytes_to_bits(g_pay_m));

// what the CRC sees of this beat: the ICRC field substitutions
wire [DATA_W-1:0] g_crc_data;

icrc_subst #(.DATA_W(DATA_W), .OH_W(NHB)) crc_subst (
    .beat_oh(g_oh_reg),
    .in_data(g_data),
    .out_data(g_crc_data)
);

// beat register
reg [DATA_W-1:0] gr_data_reg = {DATA_W{1'b0}};
reg [DATA_W-1:0] gr_crc_data_reg = {DATA_W{1'b0}};
reg [BL-1:0]     gr_keep_reg = {BL{1'b0}};
reg [BL-1:0]     gr_icrc_m_reg = {BL{1'b0}};
reg [BL-1:0]     gr_crc_keep_reg = {BL{1'b0}};
reg              gr_first_reg = 1'b0;
reg              gr_last_reg = 1'b0;
reg              gr_crc_valid_reg = 1'b0;
reg              gr_crc_last_reg = 1'b0;
reg              gr_valid_reg = 1'b0;

wire bf_full;
wire bf_push = gr_valid_reg && !bf_full;
wire gr_ready = !gr_valid_reg || bf_push;

wire g_fire = c_valid_reg && gr_ready && (!g_need_pay || !af_empty);
assign gen_pop = g_fire && g_last;
assign af_pop = g_fire && g_need_pay;

always @(posedge clk) begin
    if (bf_push) begin
        gr_valid_reg <= 1'b0;
    end
    if (g_fire) begin
        gr_data_reg <= g_data;
        gr_crc_data_reg <= g_crc_data;
        gr_keep_reg <= g_keep;
        gr_icrc_m_reg <= g_icrc_m;
        gr_crc_keep_reg <= g_dat_m;
        gr_first_reg <= g_first;
        gr_last_reg <= g_last;
        gr_crc_valid_reg <= g_crc_valid;
        gr_crc_last_reg <= g_crc_last;
        gr_valid_reg <= 1'b1;
        g_oh_reg <= g_oh_reg << 1;
        hdr_rem_reg <= hdr_rem_reg - BL_PW;
        pay_rem_reg <= pay_rem_reg - BL_PW;
        dat_rem_reg <= dat_rem_reg - BL_PW;
        frm_rem_reg <= frm_rem_reg - BL_PW;
        g_need_pay_reg <= g_need_pay_next;
        g_last_reg <= g_last_next;
    end
    // a new frame: its beat 0
    if (move_qc) begin
        hdr_rem_reg <= {{PW-7{1'b0}}, q_hlen};
        pay_rem_reg <= {{PW-14{1'b0}}, q_pay_end};
        dat_rem_reg <= {{PW-14{1'b0}}, q_dat_end};
        frm_rem_reg <= {{PW-14{1'b0}}, q_frm_end};
        g_need_pay_reg <= q_need_pay0;
        g_last_reg <= q_last0;
        g_oh_reg <= {{NHB-1{1'b0}}, 1'b1};
    end
    if (rst) begin
        gr_valid_reg <= 1'b0;
        g_oh_reg <= {{NHB-1{1'b0}}, 1'b1};
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
    .s_data(gr_crc_data_reg),
    .s_keep(gr_crc_keep_reg),
    .s_first(gr_first_reg),
    .s_last(gr_crc_last_reg),
    .s_valid(bf_push && gr_crc_valid_reg),
    .m_crc(crc_out),
    .m_crc_valid(crc_out_valid)
);

reg [31:0]    cf_mem [0:CF_DEPTH-1];
reg [CF_AW:0] cf_wr_ptr_reg = {CF_AW+1{1'b0}};
reg [CF_AW:0] cf_rd_ptr_reg = {CF_AW+1{1'b0}};

reg  [CF_AW:0] cf_count_reg = {CF_AW+1{1'b0}};
reg  cf_empty_reg = 1'b1;
wire cf_empty = cf_empty_reg;
wire [31:0] cf_head = cf_mem[cf_rd_ptr_reg[CF_AW-1:0]];
wire cf_pop;

// at most one result per frame whose last beat is in the beat FIFO: the
// result FIFO, as deep as the beat FIFO, cannot overflow
always @(posedge clk) begin
    if (crc_out_valid) begin
        cf_mem[cf_wr_ptr_reg[CF_AW-1:0]] <= crc_out;
        cf_wr_ptr_reg <= cf_wr_ptr_reg + 1'b1;
    end
    if (cf_pop) begin
        cf_rd_ptr_reg <= cf_rd_ptr_reg + 1'b1;
    end
    cf_count_reg <= cf_count_reg + {{CF_AW{1'b0}}, crc_out_valid} - {{CF_AW{1'b0}}, cf_pop};
    cf_empty_reg <= (!crc_out_valid && cf_pop) ? cf_count_reg == {{CF_AW{1'b0}}, 1'b1} :
                    (crc_out_valid && !cf_pop) ? 1'b0 : cf_empty_reg;
    if (rst) begin
        cf_count_reg <= {CF_AW+1{1'b0}};
        cf_empty_reg <= 1'b1;
        cf_wr_ptr_reg <= {CF_AW+1{1'b0}};
        cf_rd_ptr_reg <= {CF_AW+1{1'b0}};
    end
end

// ---------------------------------------------------------------------------
// beat FIFO

reg [DATA_W-1:0] bf_data_mem [0:BF_DEPTH-1];
reg [BL-1:0]     bf_keep_mem [0:BF_DEPTH-1];
reg [BL-1:0]     bf_icrc_m_mem [0:BF_DEPTH-1];
reg              bf_has_icrc_mem [0:BF_DEPTH-1];
reg              bf_first_mem [0:BF_DEPTH-1];
reg              bf_last_mem [0:BF_DEPTH-1];

reg [BF_AW:0] bf_wr_ptr_reg = {BF_AW+1{1'b0}};
reg [BF_AW:0] bf_rd_ptr_reg = {BF_AW+1{1'b0}};

reg  bf_full_reg = 1'b0;
reg  bf_empty_reg = 1'b1;
assign bf_full = bf_full_reg;
wire bf_empty = bf_empty_reg;
// the output's lead: at least GAP beats in the FIFO (registered)
reg            bf_gap_ok_reg = 1'b0;
reg [BF_AW:0]  bf_count_reg = {BF_AW+1{1'b0}};

wire [DATA_W-1:0] bf_data = bf_data_mem[bf_rd_ptr_reg[BF_AW-1:0]];
wire [BL-1:0]     bf_keep = bf_keep_mem[bf_rd_ptr_reg[BF_AW-1:0]];
wire [BL-1:0]     bf_icrc_m = bf_icrc_m_mem[bf_rd_ptr_reg[BF_AW-1:0]];
wire              bf_has_icrc = bf_has_icrc_mem[bf_rd_ptr_reg[BF_AW-1:0]];
wire              bf_first = bf_first_mem[bf_rd_ptr_reg[BF_AW-1:0]];
wire              bf_last = bf_last_mem[bf_rd_ptr_reg[BF_AW-1:0]];

wire bf_pop;
wire [BF_AW:0] bf_count_next = bf_count_reg + {{BF_AW{1'b0}}, bf_push} - {{BF_AW{1'b0}}, bf_pop};

always @(posedge clk) begin
    if (bf_push) begin
        bf_data_mem[bf_wr_ptr_reg[BF_AW-1:0]] <= gr_data_reg;
        bf_keep_mem[bf_wr_ptr_reg[BF_AW-1:0]] <= gr_keep_reg;
        bf_icrc_m_mem[bf_wr_ptr_reg[BF_AW-1:0]] <= gr_icrc_m_reg;
        bf_has_icrc_mem[bf_wr_ptr_reg[BF_AW-1:0]] <= gr_icrc_m_reg != {BL{1'b0}};
        bf_first_mem[bf_wr_ptr_reg[BF_AW-1:0]] <= gr_first_reg;
        bf_last_mem[bf_wr_ptr_reg[BF_AW-1:0]] <= gr_last_reg;
        bf_wr_ptr_reg <= bf_wr_ptr_reg + 1'b1;
    end
    if (bf_pop) begin
        bf_rd_ptr_reg <= bf_rd_ptr_reg + 1'b1;
    end
    bf_count_reg <= bf_count_next;
    bf_full_reg <= (bf_push && !bf_pop) ? bf_count_reg == BF_DEPTH - 1 :
                   (!bf_push && bf_pop) ? 1'b0 : bf_full_reg;
    bf_empty_reg <= (!bf_push && bf_pop) ? bf_count_reg == {{BF_AW{1'b0}}, 1'b1} :
                    (bf_push && !bf_pop) ? 1'b0 : bf_empty_reg;
    bf_gap_ok_reg <= (bf_push && !bf_pop) ? bf_count_reg >= GAP_BF - 1'b1 :
                     (!bf_push && bf_pop) ? bf_count_reg >= GAP_BF + 1'b1 :
                     bf_count_reg >= GAP_BF;
    if (rst) begin
        bf_wr_ptr_reg <= {BF_AW+1{1'b0}};
        bf_rd_ptr_reg <= {BF_AW+1{1'b0}};
        bf_count_reg <= {BF_AW+1{1'b0}};
        bf_full_reg <= 1'b0;
        bf_empty_reg <= 1'b1;
        bf_gap_ok_reg <= 1'b0;
    end
end

// ---------------------------------------------------------------------------
// output register: ICRC merged into its lanes

reg [DATA_W-1:0] out_data_reg = {DATA_W{1'b0}};
reg [BL-1:0]     out_keep_reg = {BL{1'b0}};
reg              out_last_reg = 1'b0;
reg              out_valid_reg = 1'b0;

assign m_axis_tx_tdata = out_data_reg;
assign m_axis_tx_tkeep = out_keep_reg;
assign m_axis_tx_tvalid = out_valid_reg;
assign m_axis_tx_tlast = out_last_reg;
assign m_axis_tx_tuser = 1'b0;

// ICRC byte i sits on lanes that are (i + 2) mod 4
wire [31:0]       icrc_word = {cf_head[15:8], cf_head[7:0], cf_head[31:24], cf_head[23:16]};
wire [DATA_W-1:0] icrc_rep = {BL/4{icrc_word}};

wire out_free = !out_valid_reg || m_axis_tx_tready;
wire out_crc_ok = !bf_has_icrc || !cf_empty;
wire out_start_ok = !bf_first || !cf_empty || bf_gap_ok_reg;
assign bf_pop = out_free && !bf_empty && out_crc_ok && out_start_ok;
assign cf_pop = bf_pop && bf_last;

always @(posedge clk) begin
    if (m_axis_tx_tready) begin
        out_valid_reg <= 1'b0;
    end
    if (bf_pop) begin
        out_data_reg <= bf_data | (icrc_rep & bytes_to_bits(bf_icrc_m));
        out_keep_reg <= bf_keep;
        out_last_reg <= bf_last;
        out_valid_reg <= 1'b1;
    end
    if (rst) begin
        out_valid_reg <= 1'b0;
    end
end

endmodule

`resetall
`default_nettype wire
