// Memory-region table: key, virtual range, bus address, protection domain
// and access flags of every registered MR, set by the host through the MR
// register window. Two lookup ports (requester lkey, responder rkey) check
// key, PD, access and bounds and translate a virtual address to a bus
// address; they answer two cycles after their key settles (the entry is
// read into registers first). The write guard (port C) answers the same
// way; its user re-checks when `change` pulses between check and write. A region is contiguous in bus space. A third port re-checks a
// finished DMA write descriptor (bus address and length) against the region
// whose key authorized it, just before the write engine takes it.
//
// Keys carry the table index in bits 15:8; the low byte must match too, so a
// stale key of a re-registered region misses.

`resetall
`timescale 1ns / 1ps
`default_nettype none

module mr_table #(
    parameter NUM_MR = 64
) (
    input  wire        clk,
    input  wire        rst,

    // register window
    input  wire [15:0] reg_sel,
    input  wire [31:0] reg_key,
    input  wire [63:0] reg_va,
    input  wire [31:0] reg_len,
    input  wire [63:0] reg_bus,
    input  wire [15:0] reg_pd,
    input  wire [3:0]  reg_access,
    input  wire [3:0]  reg_cmd,
    input  wire        reg_cmd_valid,
    output wire        reg_err,          // pulse: command refused

    // lookup port A
    input  wire [31:0] a_key,
    input  wire [63:0] a_va,
    input  wire [31:0] a_len,
    input  wire [15:0] a_pd,
    input  wire [3:0]  a_access,         // every bit set here must be granted
    output wire        a_ok,
    output wire [63:0] a_bus,

    // lookup port B
    input  wire [31:0] b_key,
    input  wire [63:0] b_va,
    input  wire [31:0] b_len,
    input  wire [15:0] b_pd,
    input  wire [3:0]  b_access,
    output wire        b_ok,
    output wire [63:0] b_bus,

    // write guard: [c_bus, c_bus + c_len) inside region c_key, with c_access
    input  wire [31:0] c_key,
    input  wire [63:0] c_bus,
    input  wire [31:0] c_len,
    input  wire [15:0] c_pd,
    input  wire [3:0]  c_access,
    output wire        c_ok,
    output wire        change            // an entry is being set or removed this cycle
);

localparam IDX_W = NUM_MR > 1 ? $clog2(NUM_MR) : 1;

initial begin
    if (NUM_MR < 1 || NUM_MR > 256) begin
        $error("mr_table: NUM_MR must be 1..256 (the index lives in key bits 15:8)");
        $finish;
    end
end

reg [NUM_MR-1:0] valid_reg = {NUM_MR{1'b0}};
reg [31:0] key_mem [0:NUM_MR-1];
// The region is stored in the form the checks want, so each answer is one
// carry chain after the block RAM (timing): its first and one-past-last
// virtual address, the distance from virtual to bus address, and its first
// and one-past-last bus address (the write guard's view).
reg [63:0] va_mem [0:NUM_MR-1];
reg [64:0] va_end_mem [0:NUM_MR-1];
reg [63:0] delta_mem [0:NUM_MR-1];
reg [63:0] bus_mem [0:NUM_MR-1];
reg [64:0] bus_end_mem [0:NUM_MR-1];
reg [15:0] pd_mem [0:NUM_MR-1];
reg [3:0] access_mem [0:NUM_MR-1];
reg err_reg = 1'b0;

integer i;
initial begin
    for (i = 0; i < NUM_MR; i = i + 1) begin
        key_mem[i] = 32'd0;
        va_mem[i] = 64'd0;
        va_end_mem[i] = 65'd0;
        delta_mem[i] = 64'd0;
        bus_mem[i] = 64'd0;
        bus_end_mem[i] = 65'd0;
        pd_mem[i] = 16'd0;
        access_mem[i] = 4'd0;
    end
end

localparam [15:0] NUM_MR16 = NUM_MR[15:0];

assign reg_err = err_reg;

always @(posedge clk) begin
    err_reg <= 1'b0;
    if (reg_cmd_valid) begin
        if (reg_sel >= NUM_MR16 || (reg_cmd == 4'd1 && reg_key[15:8] != reg_sel[7:0])
                || (reg_cmd != 4'd1 && reg_cmd != 4'd2)) begin
            err_reg <= 1'b1;
        end else if (reg_cmd == 4'd1) begin
            valid_reg[reg_sel[IDX_W-1:0]] <= 1'b1;
            key_mem[reg_sel[IDX_W-1:0]] <= reg_key;
            va_mem[reg_sel[IDX_W-1:0]] <= reg_va;
            va_end_mem[reg_sel[IDX_W-1:0]] <= {1'b0, reg_va} + {33'd0, reg_len};
            delta_mem[reg_sel[IDX_W-1:0]] <= reg_bus - reg_va;
            bus_mem[reg_sel[IDX_W-1:0]] <= reg_bus;
            bus_end_mem[reg_sel[IDX_W-1:0]] <= {1'b0, reg_bus} + {33'd0, reg_len};
            pd_mem[reg_sel[IDX_W-1:0]] <= reg_pd;
            access_mem[reg_sel[IDX_W-1:0]] <= reg_access;
        end else begin
            valid_reg[reg_sel[IDX_W-1:0]] <= 1'b0;
        end
    end
    if (rst) begin
        valid_reg <= {NUM_MR{1'b0}};
        err_reg <= 1'b0;
    end
end

// A lookup: the key selects the entry; everything else is checked against it.
// Bounds: mr.va <= va and va + len <= mr.va + mr.len, in 65 bits so nothing
// wraps; the bus address is va + (mr.bus - mr.va). The table holds mr.va +
// mr.len and mr.bus - mr.va, computed when the region is set, and va + len
// is registered beside the entry's read, so each check is one carry chain
// after registers (timing: the subtract, add and compare in series behind
// the block RAM were the critical path, 52 MHz). Ports A and B read their
// entry into registers first, so an answer holds once the key, va and len
// have been stable for two cycles; the executor and the responder hold
// them that long in their MR states. An entry being rewritten reads as
// invalid for that cycle. The write guard (port C) reads its entry the same
// way and answers from that cycle's descriptor: whatever the lookups saw,
// no write leaves the region as it is when the write is taken.
function entry_ok;
    input [31:0] key;
    input [15:0] pd;
    input [3:0] access;
    input ent_valid;
    input [31:0] ent_key;
    input [15:0] ent_pd;
    input [3:0] ent_access;
    begin
        entry_ok = ({24'd0, key[15:8]} < NUM_MR) && ent_valid && ent_key == key
            && ent_pd == pd && (ent_access & access) == access;
    end
endfunction

wire [IDX_W-1:0] a_idx = a_key[IDX_W+7:8];
wire [IDX_W-1:0] b_idx = b_key[IDX_W+7:8];
wire [IDX_W-1:0] c_idx = c_key[IDX_W+7:8];
wire rewrite = reg_cmd_valid && reg_sel < NUM_MR16;
reg a_ent_valid_reg = 1'b0, b_ent_valid_reg = 1'b0, c_ent_valid_reg = 1'b0;
reg [31:0] a_ent_key_reg = 32'd0, b_ent_key_reg = 32'd0, c_ent_key_reg = 32'd0;
reg [15:0] a_ent_pd_reg = 16'd0, b_ent_pd_reg = 16'd0, c_ent_pd_reg = 16'd0;
reg [3:0] a_ent_access_reg = 4'd0, b_ent_access_reg = 4'd0, c_ent_access_reg = 4'd0;
reg [63:0] a_ent_va_reg = 64'd0, b_ent_va_reg = 64'd0;
reg [64:0] a_ent_va_end_reg = 65'd0, b_ent_va_end_reg = 65'd0;
reg [63:0] a_ent_delta_reg = 64'd0, b_ent_delta_reg = 64'd0;
reg [63:0] c_ent_bus_reg = 64'd0;
reg [64:0] c_ent_bus_end_reg = 65'd0;
reg [64:0] a_end_reg = 65'd0, b_end_reg = 65'd0;

always @(posedge clk) begin
    a_ent_valid_reg <= valid_reg[a_idx] && !(rewrite && reg_sel[IDX_W-1:0] == a_idx) && !rst;
    a_ent_key_reg <= key_mem[a_idx];
    a_ent_pd_reg <= pd_mem[a_idx];
    a_ent_access_reg <= access_mem[a_idx];
    a_ent_va_reg <= va_mem[a_idx];
    a_ent_va_end_reg <= va_end_mem[a_idx];
    a_ent_delta_reg <= delta_mem[a_idx];
    b_ent_valid_reg <= valid_reg[b_idx] && !(rewrite && reg_sel[IDX_W-1:0] == b_idx) && !rst;
    b_ent_key_reg <= key_mem[b_idx];
    b_ent_pd_reg <= pd_mem[b_idx];
    b_ent_access_reg <= access_mem[b_idx];
    b_ent_va_reg <= va_mem[b_idx];
    b_ent_va_end_reg <= va_end_mem[b_idx];
    b_ent_delta_reg <= delta_mem[b_idx];
    c_ent_valid_reg <= valid_reg[c_idx] && !(rewrite && reg_sel[IDX_W-1:0] == c_idx) && !rst;
    c_ent_key_reg <= key_mem[c_idx];
    c_ent_pd_reg <= pd_mem[c_idx];
    c_ent_access_reg <= access_mem[c_idx];
    c_ent_bus_reg <= bus_mem[c_idx];
    c_ent_bus_end_reg <= bus_end_mem[c_idx];
    a_end_reg <= {1'b0, a_va} + {33'd0, a_len};
    b_end_reg <= {1'b0, b_va} + {33'd0, b_len};
end

wire [64:0] c_end = {1'b0, c_bus} + {33'd0, c_len};

assign a_ok = entry_ok(a_key, a_pd, a_access, a_ent_valid_reg, a_ent_key_reg, a_ent_pd_reg,
        a_ent_access_reg)
    && a_va >= a_ent_va_reg && a_end_reg <= a_ent_va_end_reg;
assign a_bus = a_va + a_ent_delta_reg;
assign b_ok = entry_ok(b_key, b_pd, b_access, b_ent_valid_reg, b_ent_key_reg, b_ent_pd_reg,
        b_ent_access_reg)
    && b_va >= b_ent_va_reg && b_end_reg <= b_ent_va_end_reg;
assign b_bus = b_va + b_ent_delta_reg;
// the write guard, in bus space
assign c_ok = entry_ok(c_key, c_pd, c_access, c_ent_valid_reg, c_ent_key_reg, c_ent_pd_reg,
        c_ent_access_reg)
    && c_bus >= c_ent_bus_reg && c_end <= c_ent_bus_end_reg;
assign change = rewrite;

endmodule

`resetall
