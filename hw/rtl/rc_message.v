// rc message rules of the responder: the checks of an rc packet's opcode
// and lengths against the message its QP is in (none, an RDMA WRITE or a
// SEND) and the PMTU (the IB rules: FIRST and MIDDLE carry exactly a PMTU,
// ONLY and LAST at most one; a message ends with the bytes its RETH
// announced; MIDDLE and LAST only inside a message of their kind, FIRST and
// ONLY only outside one), and what an executed packet does to the message.
// An RDMA READ request (READ_EN builds) stands alone like an ONLY, carries
// no payload and asks for at most 2^31 bytes.
// Only rc builds have it (RC_EN): an mp packet stands alone, with its own
// placement header, and is checked by the responder's mp branch.
//
// The message itself is a field of the responder's per-QP record (RSP_MSG,
// in block RAM), read with the rest of the record and written back with it
// in ST_FINISH; a QP load clears it with the record. It was a flop array
// here, with a write port for the load and one for the packet, which cost
// LUTs in every QP.
//
// The responder asks in ST_EXEC (the packet's fields, held since
// ST_CHECK, and the message and its remaining bytes from the record).

`resetall
`timescale 1ns / 1ps
`default_nettype none

module rc_message (
    input  wire [1:0]       msg,         // the QP's message: 0 none, 1 WRITE, 2 SEND
    input  wire             op_is_write,
    input  wire             op_is_send,
    input  wire             op_is_read,  // an RDMA READ request (0 where READ is not carried)
    input  wire             op_first,
    input  wire             op_middle,
    input  wire             op_last,
    input  wire             op_only,
    input  wire             op_has_reth,
    input  wire [12:0]      plen,
    input  wire [12:0]      pmtu_bytes,
    input  wire [31:0]      reth_len,
    input  wire [31:0]      remain,      // the message's bytes still to come
    input  wire             access_ok,   // the MR grants the RETH (or checks are off)

    output wire             inv_req,     // NAK: invalid request
    output wire             rem_access,  // NAK: remote access error

    // the packet, once executed, sets the message (FIRST starts one of its
    // kind, LAST and ONLY end it; MIDDLE leaves it): from the opcode alone,
    // so the record's write-back does not wait for the record's read
    output wire             msg_set,
    output wire [1:0]       msg_new
);

localparam [1:0] MSG_IDLE = 2'd0, MSG_WRITE = 2'd1, MSG_SEND = 2'd2;

wire [31:0] plen32 = {19'd0, plen};

// in the order the checks are made: a violation before the access check
// is an invalid request, then the access, then the length rules that need
// the message's remaining bytes
wire inv_before = !(op_is_write || op_is_send || op_is_read)   // atomics and the rest are not served
    || ((op_first || op_only || op_is_read) && msg != MSG_IDLE)
    || (op_is_read && (plen != 13'd0 || (reth_len[31] && reth_len[30:0] != 31'd0)))
    || ((op_middle || op_last) && msg != (op_is_write ? MSG_WRITE : MSG_SEND))
    || ((op_first || op_middle) && plen != pmtu_bytes)
    || plen > pmtu_bytes
    || (op_has_reth && op_only && reth_len != plen32)
    || (op_has_reth && op_first && reth_len <= plen32);
wire access_bad = op_has_reth && reth_len != 0 && !access_ok;
wire inv_after = (op_is_write && !op_has_reth && plen32 > remain)
    || (op_is_write && op_last && plen32 != remain)
    || (op_is_send && (op_middle || op_last) && plen32 > remain);

assign inv_req = inv_before || (!access_bad && inv_after);
assign rem_access = !inv_before && access_bad;

assign msg_set = op_first || op_last || op_only || op_is_read;
assign msg_new = op_first ? (op_is_write ? MSG_WRITE : MSG_SEND) : MSG_IDLE;

endmodule

`resetall
