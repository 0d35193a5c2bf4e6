// SPI NOR flash command engine for the configuration flash.
//
// The host describes one command in registers (opcode, 0/3/4 address bytes,
// dummy cycles, a data phase of up to BUF_BYTES bytes read into or written
// from the buffer, on one lane or four) and starts it. The engine can send
// WRITE ENABLE (0x06) first and poll the status register (0x05) until WIP
// clears afterwards, so one register write does a whole erase or page
// program without the host bit-banging or polling the flash.
//
// SPI mode 0: SCK idles low, outputs change when SCK falls, the flash
// samples on the rising edge. SCK = clk / (2 * clk_div). The engine samples
// its (registered) inputs at the end of each SCK high phase, i.e. 2*clk_div
// cycles after the flash changed them; clk_div >= 2 leaves one cycle of
// margin for the pad and input registers.
//
// Single-lane mode: IO0 = MOSI, IO1 = MISO, IO2 (WP#) and IO3 (HOLD#/RESET#)
// driven high. Quad data phase: IO0..IO3 carry a nibble per SCK, high
// nibble first; for reads the lines are released from the first dummy
// cycle on.
//
// The whole register block (hw/regs/rnic_csr.rdl, `flash_block`) lives
// here: the generated register file treats the block as external and hands
// every access to it on a request/acknowledge bus, so the buffer can be a
// RAM. Reset values and fields must match the RDL; tests/registers.rs reads
// every register against the generated table.
//
// The buffer is one single-port RAM of 32-bit words shared by the host
// (through the register block's external-register port) and the engine;
// the engine has priority and a waiting host access is served the next
// free cycle.

`resetall
`timescale 1ns / 1ps
`default_nettype none

module spi_flash_ctrl #(
    parameter BUF_BYTES = 256,
    parameter [31:0] BLOCK_NEXT = 32'h0
) (
    input  wire        clk,
    input  wire        rst,

    // register bus: byte offset in the block, one request at a time
    input  wire        s_req,
    input  wire [8:0]  s_addr,
    input  wire        s_req_is_wr,
    input  wire [31:0] s_wr_data,
    input  wire [31:0] s_wr_biten,
    output wire        s_rd_ack,
    output wire [31:0] s_rd_data,
    output wire        s_wr_ack,

    // configuration logic of the board
    input  wire [1:0]  boot_slot,
    input  wire        boot_fallback,
    output wire        reconfig_req,

    // flash pins
    output wire        flash_sck,
    output wire        flash_cs_n,
    output wire [3:0]  flash_io_o,
    output wire [3:0]  flash_io_oe,
    input  wire [3:0]  flash_io_i
);

localparam WORDS = BUF_BYTES / 4;
localparam IDX_W = 6;

initial begin
    if (BUF_BYTES != 256) begin
        $error("spi_flash_ctrl: BUF_BYTES must be 256 (the register map has 64 buffer words)");
        $finish;
    end
end

localparam [7:0] OP_WREN = 8'h06, OP_RDSR = 8'h05;
localparam [2:0] S_IDLE = 3'd0, S_START = 3'd1, S_CSS = 3'd2, S_SHIFT = 3'd3,
                 S_CSH = 3'd4, S_GAP = 3'd5;
localparam [1:0] T_WREN = 2'd0, T_MAIN = 2'd1, T_POLL = 2'd2;
localparam [1:0] P_OP = 2'd0, P_ADDR = 2'd1, P_DUMMY = 2'd2, P_DATA = 2'd3;
localparam [1:0] DIR_NONE = 2'd0, DIR_READ = 2'd1, DIR_WRITE = 2'd2;

// engine state (the bus reads some of it)
reg [2:0] state_reg = S_IDLE;
reg [1:0] txn_reg = T_WREN;
reg [1:0] phase_reg = P_OP;
reg busy_reg = 1'b0;
reg error_reg = 1'b0;
reg [7:0] sr_reg = 8'd0;
reg [15:0] done_reg = 16'd0;
reg [31:0] polls_reg = 32'd0;

// latched command
reg [31:0] c_addr_reg = 32'd0;
reg [8:0] c_len_reg = 9'd0;
reg [7:0] c_op_reg = 8'd0;
reg [2:0] c_ab_reg = 3'd0;
reg [3:0] c_dummy_reg = 4'd0;
reg [1:0] c_dir_reg = DIR_NONE;
reg c_quad_reg = 1'b0;
reg c_poll_reg = 1'b0;
reg [7:0] div_reg = 8'd2;

reg [7:0] cnt_reg = 8'd0;
reg [3:0] units_reg = 4'd0;     // SCK cycles left in the current byte / dummy run
reg [8:0] bytes_reg = 9'd0;     // bytes left in the current phase after this one
reg [8:0] pos_reg = 9'd0;       // buffer byte position of the data phase
reg [7:0] sh_out_reg = 8'd0;
reg [6:0] sh_in_reg = 7'd0;
reg [31:0] rword_reg = 32'd0;
reg [3:0] rbe_reg = 4'd0;
reg lane4_reg = 1'b0;           // current phase runs on four lanes
reg rd_phase_reg = 1'b0;        // current phase samples data in

reg sck_reg = 1'b0;
reg cs_n_reg = 1'b1;
reg [3:0] io_o_reg = 4'b1100;
reg [3:0] io_oe_reg = 4'b1101;
reg [3:0] io_i_reg = 4'b1111;

// ------------------------------------------------------------- buffer RAM
reg [31:0] mem [0:WORDS-1];

reg eng_re, eng_we;
reg [IDX_W-1:0] eng_idx;
reg [31:0] eng_wdata;
reg [3:0] eng_wbe;
reg [31:0] eng_rdata_reg = 32'd0;

localparam [31:0] BLOCK_TYPE = 32'h5249_0007, BLOCK_VERSION = 32'h0001_0000;
localparam [31:0] RECONFIG_KEY = 32'h5245_424F;    // 'REBO'

// register file
reg [7:0] cfg_clk_div_reg = 8'd4;
reg [31:0] cmd_addr_reg = 32'd0;
reg [8:0] cmd_len_reg = 9'd0;
reg cmd_valid_reg = 1'b0;
reg [19:0] cmd_word_reg = 20'd0;     // flash_cmd bits 20:12 and 10:0
reg [1:0] boot_slot_reg = 2'd0;
reg boot_fallback_reg = 1'b0;
reg reconfig_reg = 1'b0;

// bus: a register access is answered the next cycle, a buffer access when
// the RAM is free
reg host_pend_reg = 1'b0;
reg host_wr_reg = 1'b0;
reg [IDX_W-1:0] host_idx_reg = {IDX_W{1'b0}};
reg [31:0] host_wdata_reg = 32'd0;
reg [3:0] host_be_reg = 4'd0;
reg rd_ack_reg = 1'b0, wr_ack_reg = 1'b0;
reg [31:0] rd_data_reg = 32'd0;

wire [3:0] s_be = {|s_wr_biten[31:24], |s_wr_biten[23:16], |s_wr_biten[15:8], |s_wr_biten[7:0]};
wire [31:0] s_mask = {{8{s_be[3]}}, {8{s_be[2]}}, {8{s_be[1]}}, {8{s_be[0]}}};

wire host_go = host_pend_reg && !(eng_re || eng_we);
wire [IDX_W-1:0] ram_idx = (eng_re || eng_we) ? eng_idx : host_idx_reg;
wire ram_we = eng_we || (host_go && host_wr_reg);
wire [31:0] ram_wdata = eng_we ? eng_wdata : host_wdata_reg;
wire [3:0] ram_be = eng_we ? eng_wbe : host_be_reg;
reg [31:0] ram_q;

integer k;
always @(posedge clk) begin
    for (k = 0; k < 4; k = k + 1) begin
        if (ram_we && ram_be[k]) mem[ram_idx][8*k +: 8] <= ram_wdata[8*k +: 8];
    end
    ram_q <= mem[ram_idx];
end

reg host_rd_q = 1'b0;
reg eng_re_q = 1'b0;
always @(posedge clk) begin
    rd_ack_reg <= 1'b0;
    wr_ack_reg <= 1'b0;
    host_rd_q <= 1'b0;
    cmd_valid_reg <= 1'b0;
    reconfig_reg <= 1'b0;
    eng_re_q <= eng_re;
    boot_slot_reg <= boot_slot;
    boot_fallback_reg <= boot_fallback;
    if (s_req && s_addr[8]) begin
        host_pend_reg <= 1'b1;
        host_wr_reg <= s_req_is_wr;
        host_idx_reg <= s_addr[7:2];
        host_wdata_reg <= s_wr_data;
        host_be_reg <= s_be;
    end else if (s_req && s_req_is_wr) begin
        wr_ack_reg <= 1'b1;
        case (s_addr[7:0])
        8'h10: cfg_clk_div_reg <= (cfg_clk_div_reg & ~s_mask[7:0]) | (s_wr_data[7:0] & s_mask[7:0]);
        8'h14: cmd_addr_reg <= (cmd_addr_reg & ~s_mask) | (s_wr_data & s_mask);
        8'h18: cmd_len_reg <= (cmd_len_reg & ~s_mask[8:0]) | (s_wr_data[8:0] & s_mask[8:0]);
        8'h1C: begin
            cmd_valid_reg <= 1'b1;
            cmd_word_reg <= {s_wr_data[20:12] & s_mask[20:12], s_wr_data[10:0] & s_mask[10:0]};
        end
        8'h2C: reconfig_reg <= (s_wr_data & s_mask) == RECONFIG_KEY;
        default: ;
        endcase
    end else if (s_req) begin
        rd_ack_reg <= 1'b1;
        case (s_addr[7:0])
        8'h00: rd_data_reg <= BLOCK_TYPE;
        8'h04: rd_data_reg <= BLOCK_VERSION;
        8'h08: rd_data_reg <= BLOCK_NEXT;
        8'h10: rd_data_reg <= {24'd0, cfg_clk_div_reg};
        8'h14: rd_data_reg <= cmd_addr_reg;
        8'h18: rd_data_reg <= {23'd0, cmd_len_reg};
        8'h20: rd_data_reg <= {done_reg, sr_reg, 6'd0, error_reg, busy_reg};
        8'h24: rd_data_reg <= polls_reg;
        8'h28: rd_data_reg <= {27'd0, boot_fallback_reg, 2'd0, boot_slot_reg};
        8'h30: rd_data_reg <= {15'd0, 1'b1, BUF_BYTES[15:0]};
        default: rd_data_reg <= 32'd0;
        endcase
    end else if (host_go) begin
        host_pend_reg <= 1'b0;
        if (host_wr_reg) wr_ack_reg <= 1'b1;
        else host_rd_q <= 1'b1;
    end
    if (host_rd_q) begin
        rd_ack_reg <= 1'b1;
        rd_data_reg <= ram_q;
    end
    if (eng_re_q) eng_rdata_reg <= ram_q;
    if (rst) begin
        cfg_clk_div_reg <= 8'd4;
        cmd_addr_reg <= 32'd0;
        cmd_len_reg <= 9'd0;
        cmd_valid_reg <= 1'b0;
        reconfig_reg <= 1'b0;
        host_pend_reg <= 1'b0;
        rd_ack_reg <= 1'b0;
        wr_ack_reg <= 1'b0;
        host_rd_q <= 1'b0;
        eng_re_q <= 1'b0;
    end
end

assign s_rd_ack = rd_ack_reg;
assign s_wr_ack = wr_ack_reg;
assign s_rd_data = rd_data_reg;
assign reconfig_req = reconfig_reg;

// command fields (flash_cmd in the RDL)
wire [7:0] cmd_opcode = cmd_word_reg[7:0];
wire [2:0] cmd_addr_bytes = cmd_word_reg[10:8];
wire [3:0] cmd_dummy = cmd_word_reg[14:11];
wire [1:0] cmd_dir = cmd_word_reg[16:15];
wire cmd_quad = cmd_word_reg[17];
wire cmd_wren = cmd_word_reg[18];
wire cmd_poll = cmd_word_reg[19];
wire [7:0] cfg_clk_div = cfg_clk_div_reg;
wire [31:0] cmd_addr = cmd_addr_reg;
wire [8:0] cmd_len = cmd_len_reg;

// ------------------------------------------------------------- engine

wire [2:0] ab = (cmd_addr_bytes == 3'd3 || cmd_addr_bytes == 3'd4) ? cmd_addr_bytes : 3'd0;
wire [7:0] div = (cfg_clk_div < 8'd2) ? 8'd2 : cfg_clk_div;
wire [8:0] len_cl = (cmd_len > 9'd256) ? 9'd256 : cmd_len;

// next byte of the address, most significant first
function [7:0] addr_byte(input [31:0] a, input [1:0] left);
    begin
        // left = address bytes after this one
        addr_byte = a[{left, 3'b000} +: 8];
    end
endfunction

// the outputs that present byte `b` on the lanes of the phase
task load_byte(input [7:0] b, input quad);
    begin
        sh_out_reg <= quad ? {b[3:0], 4'h0} : {b[6:0], 1'b0};
        if (quad) begin
            io_o_reg <= b[7:4];
            io_oe_reg <= 4'b1111;
        end else begin
            io_o_reg <= {2'b11, 1'b0, b[7]};
            io_oe_reg <= 4'b1101;
        end
    end
endtask

// the byte completed by this sample
wire [7:0] in_byte = lane4_reg ? {sh_in_reg[3:0], io_i_reg} : {sh_in_reg[6:0], io_i_reg[1]};

// byte after the one at pos_reg, in the word already fetched
wire [1:0] nxt_lane = pos_reg[1:0] + 2'd1;
wire [7:0] next_wr_byte = eng_rdata_reg[{nxt_lane, 3'b000} +: 8];

always @(posedge clk) begin
    eng_re <= 1'b0;
    eng_we <= 1'b0;
    io_i_reg <= flash_io_i;

    if (cmd_valid_reg) begin
        if (busy_reg) begin
            error_reg <= 1'b1;
        end else begin
            error_reg <= 1'b0;
            busy_reg <= 1'b1;
            c_addr_reg <= cmd_addr;
            c_len_reg <= (cmd_dir == DIR_NONE || cmd_dir == 2'd3) ? 9'd0 : len_cl;
            c_op_reg <= cmd_opcode;
            c_ab_reg <= ab;
            c_dummy_reg <= cmd_dummy;
            c_dir_reg <= (cmd_dir == 2'd3) ? DIR_NONE : cmd_dir;
            c_quad_reg <= cmd_quad;
            c_poll_reg <= cmd_poll;
            div_reg <= div;
            polls_reg <= 32'd0;
            txn_reg <= cmd_wren ? T_WREN : T_MAIN;
            state_reg <= S_START;
            // word 0 of the buffer, for a write data phase
            eng_re <= 1'b1;
            eng_idx <= {IDX_W{1'b0}};
        end
    end

    case (state_reg)
    S_IDLE: begin
        sck_reg <= 1'b0;
        cs_n_reg <= 1'b1;
        io_o_reg <= 4'b1100;
        io_oe_reg <= 4'b1101;
    end
    S_START: begin
        // select the flash, present the opcode
        cs_n_reg <= 1'b0;
        phase_reg <= P_OP;
        lane4_reg <= 1'b0;
        rd_phase_reg <= 1'b0;
        units_reg <= 4'd7;
        pos_reg <= 9'd0;
        rbe_reg <= 4'd0;
        load_byte(txn_reg == T_WREN ? OP_WREN : txn_reg == T_POLL ? OP_RDSR : c_op_reg, 1'b0);
        cnt_reg <= div_reg - 8'd1;
        state_reg <= S_CSS;
    end
    S_CSS: begin
        // CS setup time: one SCK half period before the first edge
        if (cnt_reg != 8'd0) begin
            cnt_reg <= cnt_reg - 8'd1;
        end else begin
            cnt_reg <= div_reg - 8'd1;
            state_reg <= S_SHIFT;
        end
    end
    S_SHIFT: begin
        if (cnt_reg != 8'd0) begin
            cnt_reg <= cnt_reg - 8'd1;
        end else if (!sck_reg) begin
            sck_reg <= 1'b1;
            cnt_reg <= div_reg - 8'd1;
        end else begin
            // end of the high half: sample, drop SCK, set up the next unit
            sck_reg <= 1'b0;
            cnt_reg <= div_reg - 8'd1;
            if (rd_phase_reg) begin
                sh_in_reg <= lane4_reg ? {sh_in_reg[2:0], io_i_reg} : {sh_in_reg[5:0], io_i_reg[1]};
            end
            if (units_reg != 4'd0) begin
                // more units of this byte (or dummy run)
                units_reg <= units_reg - 4'd1;
                if (phase_reg != P_DUMMY) begin
                    if (lane4_reg) begin
                        if (!rd_phase_reg) io_o_reg <= sh_out_reg[7:4];
                        sh_out_reg <= {sh_out_reg[3:0], 4'h0};
                    end else begin
                        io_o_reg[0] <= sh_out_reg[7];
                        sh_out_reg <= {sh_out_reg[6:0], 1'b0};
                    end
                end
            end else begin
                // a byte (or the dummy run) is complete
                if (phase_reg == P_DATA && rd_phase_reg) begin
                    // store the byte just completed
                    if (txn_reg == T_POLL) begin
                        sr_reg <= in_byte;
                    end else begin
                        rword_reg[8*pos_reg[1:0] +: 8] <= in_byte;
                        if (pos_reg[1:0] == 2'd3 || bytes_reg == 9'd0) begin
                            eng_we <= 1'b1;
                            eng_idx <= pos_reg[7:2];
                            eng_wdata <= rword_reg;
                            eng_wdata[8*pos_reg[1:0] +: 8] <= in_byte;
                            eng_wbe <= rbe_reg | (4'b0001 << pos_reg[1:0]);
                            rbe_reg <= 4'd0;
                        end else begin
                            rbe_reg <= rbe_reg | (4'b0001 << pos_reg[1:0]);
                        end
                    end
                end
                if (phase_reg == P_DATA) pos_reg <= pos_reg + 9'd1;

                if (phase_reg == P_OP || phase_reg == P_ADDR) begin
                    if (phase_reg == P_ADDR && bytes_reg != 9'd0) begin
                        bytes_reg <= bytes_reg - 9'd1;
                        units_reg <= 4'd7;
                        load_byte(addr_byte(c_addr_reg, bytes_reg[1:0] - 2'd1), 1'b0);
                    end else if (phase_reg == P_OP && txn_reg == T_MAIN && c_ab_reg != 3'd0) begin
                        phase_reg <= P_ADDR;
                        bytes_reg <= {6'd0, c_ab_reg} - 9'd1;
                        units_reg <= 4'd7;
                        load_byte(addr_byte(c_addr_reg, c_ab_reg[1:0] - 2'd1), 1'b0);
                    end else if (txn_reg == T_MAIN && c_dummy_reg != 4'd0) begin
                        phase_reg <= P_DUMMY;
                        units_reg <= c_dummy_reg - 4'd1;
                        if (c_quad_reg && c_dir_reg == DIR_READ) io_oe_reg <= 4'b0000;
                    end else begin
                        state_reg <= S_CSH;
                        if (txn_reg == T_POLL) begin
                            state_reg <= S_SHIFT;
                            phase_reg <= P_DATA;
                            rd_phase_reg <= 1'b1;
                            bytes_reg <= 9'd0;
                            units_reg <= 4'd7;
                        end else if (txn_reg == T_MAIN && c_len_reg != 9'd0) begin
                            state_reg <= S_SHIFT;
                            phase_reg <= P_DATA;
                            lane4_reg <= c_quad_reg;
                            rd_phase_reg <= c_dir_reg == DIR_READ;
                            bytes_reg <= c_len_reg - 9'd1;
                            units_reg <= c_quad_reg ? 4'd1 : 4'd7;
                            if (c_dir_reg == DIR_WRITE) begin
                                load_byte(eng_rdata_reg[7:0], c_quad_reg);
                            end else if (c_quad_reg) begin
                                io_oe_reg <= 4'b0000;
                            end
                        end
                    end
                end else if (phase_reg == P_DUMMY) begin
                    state_reg <= S_CSH;
                    if (c_len_reg != 9'd0) begin
                        state_reg <= S_SHIFT;
                        phase_reg <= P_DATA;
                        lane4_reg <= c_quad_reg;
                        rd_phase_reg <= c_dir_reg == DIR_READ;
                        bytes_reg <= c_len_reg - 9'd1;
                        units_reg <= c_quad_reg ? 4'd1 : 4'd7;
                        if (c_dir_reg == DIR_WRITE) load_byte(eng_rdata_reg[7:0], c_quad_reg);
                    end
                end else begin
                    // data phase
                    if (bytes_reg == 9'd0) begin
                        state_reg <= S_CSH;
                    end else begin
                        bytes_reg <= bytes_reg - 9'd1;
                        units_reg <= lane4_reg ? 4'd1 : 4'd7;
                        if (!rd_phase_reg) begin
                            load_byte(next_wr_byte, lane4_reg);
                        end
                    end
                    // fetch the next word while its first byte is still ahead
                    if (!rd_phase_reg && pos_reg[1:0] == 2'd2) begin
                        eng_re <= 1'b1;
                        eng_idx <= pos_reg[7:2] + 6'd1;
                    end
                end
            end
        end
    end
    S_CSH: begin
        // CS hold: a half period after the last falling edge, then deselect
        if (cnt_reg != 8'd0) begin
            cnt_reg <= cnt_reg - 8'd1;
        end else begin
            cs_n_reg <= 1'b1;
            io_o_reg <= 4'b1100;
            io_oe_reg <= 4'b1101;
            cnt_reg <= {div_reg[6:0], 1'b0};
            state_reg <= S_GAP;
        end
    end
    S_GAP: begin
        // CS high between transactions: at least one SCK period
        if (cnt_reg != 8'd0) begin
            cnt_reg <= cnt_reg - 8'd1;
        end else if (txn_reg == T_WREN) begin
            txn_reg <= T_MAIN;
            state_reg <= S_START;
        end else if (c_poll_reg && (txn_reg == T_MAIN || sr_reg[0])) begin
            txn_reg <= T_POLL;
            polls_reg <= polls_reg + 32'd1;
            state_reg <= S_START;
        end else begin
            busy_reg <= 1'b0;
            done_reg <= done_reg + 16'd1;
            state_reg <= S_IDLE;
        end
    end
    default: state_reg <= S_IDLE;
    endcase

    if (rst) begin
        state_reg <= S_IDLE;
        busy_reg <= 1'b0;
        error_reg <= 1'b0;
        sr_reg <= 8'd0;
        done_reg <= 16'd0;
        polls_reg <= 32'd0;
        sck_reg <= 1'b0;
        cs_n_reg <= 1'b1;
        io_o_reg <= 4'b1100;
        io_oe_reg <= 4'b1101;
        eng_re <= 1'b0;
        eng_we <= 1'b0;
    end
end

assign flash_sck = sck_reg;
assign flash_cs_n = cs_n_reg;
assign flash_io_o = io_o_reg;
assign flash_io_oe = io_oe_reg;

endmodule

`resetall
