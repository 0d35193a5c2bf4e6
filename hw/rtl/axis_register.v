// Register slice for one valid/ready stream: a skid buffer with registered
// ready and registered data, one beat per cycle (full throughput).
//
// The payload is one vector of WIDTH bits (pack data, keep, last, user, id
// into it; the register does not look inside). s_ready is a register: it
// says whether a beat offered in this cycle will be taken, decided in the
// previous cycle from the output side. When the output stalls while a beat
// is already coming in, that beat goes into the skid register and s_ready
// drops the next cycle; the skid beat leaves first once the output moves.
// No combinational path runs from m_ready to s_ready or to m_valid/m_data.
//
// A source whose valid is itself gated by s_ready (an "output register"
// use: the source fires only when s_ready is high) gets exactly the
// handshake of a source that holds valid until taken (an "input skid"
// use): both are the same block. Used by dma_rd_engine (request output,
// completion input) and dma_wr_engine (TLP output), and by axis_arb_mux
// for its registered output.

`resetall
`timescale 1ns / 1ps
`default_nettype none

module axis_register #(
    // payload bits per beat
    parameter WIDTH = 8
) (
    input  wire             clk,
    input  wire             rst,     // synchronous, active high

    input  wire [WIDTH-1:0] s_data,
    input  wire             s_valid,
    output wire             s_ready,

    output wire [WIDTH-1:0] m_data,
    output wire             m_valid,
    input  wire             m_ready
);

initial begin
    if (WIDTH < 1) begin
        $error("Error: WIDTH must be at least 1 (instance %m)");
        $finish;
    end
end

reg             s_ready_reg = 1'b0;

reg [WIDTH-1:0] out_data_reg = {WIDTH{1'b0}};
reg             out_valid_reg = 1'b0, out_valid_next;

reg [WIDTH-1:0] skid_data_reg = {WIDTH{1'b0}};
reg             skid_valid_reg = 1'b0, skid_valid_next;

reg store_in_to_out;
reg store_in_to_skid;
reg store_skid_to_out;

assign s_ready = s_ready_reg;
assign m_data = out_data_reg;
assign m_valid = out_valid_reg;

// take a beat next cycle if the output moves now, or if the skid register
// is empty and will stay empty (nothing held, or nothing coming in)
wire s_ready_early = m_ready || (!skid_valid_reg && (!out_valid_reg || !s_valid));

always @* begin
    out_valid_next = out_valid_reg;
    skid_valid_next = skid_valid_reg;

    store_in_to_out = 1'b0;
    store_in_to_skid = 1'b0;
    store_skid_to_out = 1'b0;

    if (s_ready_reg) begin
        // the input is open: the beat (if any) goes to the output when it
        // is free or moving, else it lands in the skid register
        if (m_ready || !out_valid_reg) begin
            out_valid_next = s_valid;
            store_in_to_out = 1'b1;
        end else begin
            skid_valid_next = s_valid;
            store_in_to_skid = 1'b1;
        end
    end else if (m_ready) begin
        // the input is closed: the skid beat moves to the output
        out_valid_next = skid_valid_reg;
        skid_valid_next = 1'b0;
        store_skid_to_out = 1'b1;
    end
end

always @(posedge clk) begin
    out_valid_reg <= out_valid_next;
    s_ready_reg <= s_ready_early;
    skid_valid_reg <= skid_valid_next;

    if (store_in_to_out) begin
        out_data_reg <= s_data;
    end else if (store_skid_to_out) begin
        out_data_reg <= skid_data_reg;
    end

    if (store_in_to_skid) begin
        skid_data_reg <= s_data;
    end

    if (rst) begin
        out_valid_reg <= 1'b0;
        s_ready_reg <= 1'b0;
        skid_valid_reg <= 1'b0;
    end
end

endmodule

`resetall
`default_nettype wire
