// Packet multiplexer: PORTS valid/ready streams with `last` into one, a
// whole packet at a time, chosen by `arbiter` (fixed priority or round
// robin). The payload of a beat is one vector of WIDTH bits (pack data,
// keep, user, a header, a descriptor's fields into it); `last` is apart
// because the arbiter needs it (tie it high for one-beat transfers such as
// descriptors). m_sel says which port the beat came from.
//
// Hold rule (the one the inline tx_wr_req mux of rnic_core broke once): a
// choice holds from the first beat offered until the packet's last beat is
// taken. The output never switches while a beat is offered and not taken,
// and packets never interleave. m_valid, m_data, m_last and m_sel depend on
// the inputs' valid and payload and on registers, never on m_ready.
//
// OUT_REG = 0: the mux is combinational (s_ready follows m_ready in the
// same cycle, as the inline muxes of rnic_core do). OUT_REG = 1: an
// axis_register after the mux: every output is a register, s_ready no
// longer depends on m_ready, one cycle more latency, still one beat per
// cycle.
//
// Used by rnic_core for every multiplexer in front of a shared engine:
//   - tx_wr_req (CQE bypass vs. write engine): PORTS 2, fixed priority,
//     port 0 the bypass, port 1 the engine, payload {hdr, data, keep};
//     cycle for cycle what the inline mux with its busy/sel registers did.
//   - read descriptors (CQE flush reads, receive WQEs, executor) and write
//     descriptors (payload, CQEs, copy chunks): PORTS 3, fixed priority in
//     that order, s_last all ones, payload {pcie_addr, ram_addr, len, (ro,)
//     id}. Unlike the inline muxes they replaced, a descriptor offered and
//     not yet taken is not pre-empted by a more urgent one that arrives
//     later.
//   - CQE requests (receive, send, local completions): PORTS 3, fixed
//     priority, payload {cqn, data}, s_last all ones.
//   - TX packet descriptors (ACK/NAK before requests): PORTS 2, fixed
//     priority, the descriptor fields as payload, s_last high; m_sel is
//     what the source FIFO behind roce_tx records.

`resetall
`timescale 1ns / 1ps
`default_nettype none

module axis_arb_mux #(
    // number of input streams
    parameter PORTS = 2,
    // payload bits per beat (without last)
    parameter WIDTH = 8,
    // 0: fixed priority (port 0 first), 1: round robin
    parameter ROUND_ROBIN = 0,
    // 1: registered output (axis_register)
    parameter OUT_REG = 0,
    // width of m_sel
    parameter SEL_W = PORTS > 1 ? $clog2(PORTS) : 1
) (
    input  wire                   clk,
    input  wire                   rst,       // synchronous, active high

    // port i: s_data[i*WIDTH +: WIDTH], s_valid[i], s_last[i], s_ready[i]
    input  wire [PORTS*WIDTH-1:0] s_data,
    input  wire [PORTS-1:0]       s_valid,
    input  wire [PORTS-1:0]       s_last,
    output wire [PORTS-1:0]       s_ready,

    output wire [WIDTH-1:0]       m_data,
    output wire                   m_valid,
    output wire                   m_last,
    output wire [SEL_W-1:0]       m_sel,
    input  wire                   m_ready
);

initial begin
    if (PORTS < 1 || WIDTH < 1) begin
        $error("Error: PORTS and WIDTH must be at least 1 (instance %m)");
        $finish;
    end
    if (OUT_REG != 0 && OUT_REG != 1) begin
        $error("Error: OUT_REG must be 0 or 1 (instance %m)");
        $finish;
    end
end

wire [PORTS-1:0] grant;
wire             grant_valid;
wire [SEL_W-1:0] grant_index;

// the mux's own output, before the optional register
reg  [WIDTH-1:0] mux_data;
reg              mux_last;
wire             mux_ready;

arbiter #(
    .PORTS(PORTS),
    .ROUND_ROBIN(ROUND_ROBIN),
    .SEL_W(SEL_W)
) arb_inst (
    .clk(clk),
    .rst(rst),
    .request(s_valid),
    .take(mux_ready),
    .last(mux_last),
    .grant(grant),
    .grant_valid(grant_valid),
    .grant_index(grant_index)
);

// the granted port's beat, found by index: a chain of compares. Yosys
// maps it to about what a hand-written priority mux costs (one LUT level
// per bit and pair of ports); a one-hot AND-OR that also zeroes the output
// without a grant lets it fold the arbiter's state into every bit, about
// twice the size. Without a grant the output is some port's beat, and
// m_valid is low.
integer i;
always @* begin
    mux_data = s_data[0 +: WIDTH];
    mux_last = s_last[0];
    for (i = 1; i < PORTS; i = i + 1) begin
        if (grant_index == i[SEL_W-1:0]) begin
            mux_data = s_data[i*WIDTH +: WIDTH];
            mux_last = s_last[i];
        end
    end
end

assign s_ready = grant & {PORTS{mux_ready}};

generate
    if (OUT_REG != 0) begin : g_reg
        wire [SEL_W-1:0] reg_sel;
        wire [WIDTH-1:0] reg_data;
        wire             reg_last;

        axis_register #(.WIDTH(SEL_W + 1 + WIDTH)) out_reg (
            .clk(clk),
            .rst(rst),
            .s_data({grant_index, mux_last, mux_data}),
            .s_valid(grant_valid),
            .s_ready(mux_ready),
            .m_data({reg_sel, reg_last, reg_data}),
            .m_valid(m_valid),
            .m_ready(m_ready)
        );

        assign m_data = reg_data;
        assign m_last = reg_last;
        assign m_sel = reg_sel;
    end else begin : g_comb
        assign mux_ready = m_ready;
        assign m_data = mux_data;
        assign m_last = mux_last;
        assign m_valid = grant_valid;
        assign m_sel = grant_index;
    end
endgenerate

endmodule

`resetall
`default_nettype wire
