// AETH syndromes the core passes between its blocks without a wire meaning:
// `include inside a module body, as rnic_formats.vh.
//
// The responder hands its ACKs to rnic_port (which sends them) and its
// received ACKs to the requester's completer as an 8-bit AETH syndrome.
// An MP PROBE REPLY travels both ways as an ACK with syndrome 0x40: AETH
// class 10, which is reserved on the wire, so no received ACK is ever
// passed on with it (the responder turns a received 0x40 into 0x41).
// verilator lint_off UNUSEDPARAM
localparam [7:0] ACK_SYN_PROBE_REPLY = 8'h40;
// verilator lint_on UNUSEDPARAM
