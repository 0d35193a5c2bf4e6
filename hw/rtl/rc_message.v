// rc message state of the responder: which message each QP is in the
// middle of (none, an RDMA WRITE or a SEND), and the checks of an rc
// packet's opcode and lengths against it and the PMTU (the IB rules: FIRST
// and MIDDLE carry exactly a PMTU, ONLY and LAST at most one; a message
// ends with the bytes its RETH announced; MIDDLE and LAST only inside a
// message of their kind, FIRST and ONLY only outside one). Only rc builds
// have it (RC_EN): an mp packet stands alone, with its own placement
// header, and is checked by the responder's mp branch.
//
// The responder asks in ST_EXEC (the packet's fields, held since
// ST_CHECK, and the message's remaining bytes from its record) and reports
// the packet executed in ST_FINISH (`done`), which moves the message on; a
// QP load (RTR or RESET) ends any message of that QP.

`resetall
`timescale 1ns / 1ps
`default_nettype none

module rc_message #(
    parameter NUM_QP = 16,
    parameter QN_W = 4
) (
    input  wire             clk,

    input  wire             load,
    input  wire [QN_W-1:0]  load_qpn,

    input  wire [QN_W-1:0]  qpn,
    input  wire             op_is_write,
    input  wire             op_is_send,
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

    input  wire             done
);

initial begin
    if (NUM_QP < 1 || NUM_QP > (1 << QN_W)) begin
        $error("rc_message: NUM_QP must be 1..2^QN_W");
        $finish;
    end
end

localparam [1:0] MSG_IDLE = 2'd0, MSG_WRITE = 2'd1, MSG_SEND = 2'd2;

reg [1:0] inmsg_mem [0:NUM_QP-1];

integer i;
initial begin
    for (i = 0; i < NUM_QP; i = i + 1) begin
        inmsg_mem[i] = MSG_IDLE;
    end
end

wire [1:0] msg = inmsg_mem[qpn];
wire [31:0] plen32 = {19'd0, plen};

// in the order the checks are made: a violation before the access check
// is an invalid request, then the access, then the length rules that need
// the message's remaining bytes
wire inv_before = !(op_is_write || op_is_send)     // READ and the rest are not served
    || ((op_first || op_only) && msg != MSG_IDLE)
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

always @(posedge clk) begin
    if (load) begin
        inmsg_mem[load_qpn] <= MSG_IDLE;
    end
    if (done) begin
        if (op_last || op_only) begin
            inmsg_mem[qpn] <= MSG_IDLE;
        end else if (op_first) begin
            inmsg_mem[qpn] <= op_is_write ? MSG_WRITE : MSG_SEND;
        end
    end
end

endmodule

`resetall
