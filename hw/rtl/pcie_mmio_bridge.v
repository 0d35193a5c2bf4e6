// BAR0 MMIO: turns MemRd/MemWr TLPs from the host (rx_req) into accesses on
// the generated register block's passthrough CPU interface, and answers reads
// with CplD TLPs (tx_cpl). One access at a time: MMIO is never on a fast path.
//
// Only 1-dword accesses are supported, as the host tooling issues them.
// A longer MemRd gets an Unsupported Request completion; a longer MemWr is
// dropped and counted. Offsets beyond the register block read as zero.

`resetall
`timescale 1ns / 1ps
`default_nettype none

module pcie_mmio_bridge #(
    parameter DATA_W = 64,
    parameter BAR_ADDR_W = 16,       // BAR0 size 2^BAR_ADDR_W bytes
    parameter CSR_ADDR_W = 10        // register block address width
) (
    input  wire                  clk,
    input  wire                  rst,

    /* verilator lint_off UNUSEDSIGNAL */
    // unused: reserved/TH/TD/EP header bits, last BE of a 1-dword request
    input  wire [127:0]          rx_req_tlp_hdr,
    /* verilator lint_on UNUSEDSIGNAL */
    input  wire [DATA_W-1:0]     rx_req_tlp_data,
    input  wire [DATA_W/32-1:0]  rx_req_tlp_keep,
    input  wire                  rx_req_tlp_valid,
    input  wire                  rx_req_tlp_last,
    output wire                  rx_req_tlp_ready,

    output wire [127:0]          tx_cpl_tlp_hdr,
    output wire [DATA_W-1:0]     tx_cpl_tlp_data,
    output wire [DATA_W/32-1:0]  tx_cpl_tlp_keep,
    output wire                  tx_cpl_tlp_valid,
    output wire                  tx_cpl_tlp_last,
    input  wire                  tx_cpl_tlp_ready,

    output wire                  csr_req,
    output wire                  csr_req_is_wr,
    output wire [CSR_ADDR_W-1:0] csr_addr,
    output wire [31:0]           csr_wr_data,
    output wire [31:0]           csr_wr_biten,
    input  wire                  csr_req_stall_wr,
    input  wire                  csr_req_stall_rd,
    input  wire                  csr_rd_ack,
    input  wire                  csr_rd_err,
    input  wire [31:0]           csr_rd_data,
    input  wire                  csr_wr_ack,
    input  wire                  csr_wr_err,

    input  wire [15:0]           cfg_completer_id,

    output wire                  stat_bad_req
);

initial begin
    if (DATA_W < 32 || DATA_W % 32 != 0) begin
        $error("pcie_mmio_bridge: DATA_W must be a multiple of 32");
        $finish;
    end
    if (CSR_ADDR_W > BAR_ADDR_W || BAR_ADDR_W > 32) begin
        $error("pcie_mmio_bridge: need CSR_ADDR_W <= BAR_ADDR_W <= 32");
        $finish;
    end
end

localparam [2:0]
    STATE_IDLE = 3'd0,
    STATE_DRAIN = 3'd1,
    STATE_CSR = 3'd2,
    STATE_WAIT = 3'd3,
    STATE_CPL = 3'd4;

reg [2:0] state_reg = STATE_IDLE;

reg is_wr_reg = 1'b0;
reg is_ur_reg = 1'b0;
reg in_csr_reg = 1'b0;
reg [CSR_ADDR_W-1:0] addr_reg = {CSR_ADDR_W{1'b0}};
reg [31:0] wr_data_reg = 32'd0;
reg [3:0] first_be_reg = 4'd0;
reg [15:0] req_id_reg = 16'd0;
reg [7:0] tag_reg = 8'd0;
reg [2:0] tc_reg = 3'd0;
reg [2:0] attr_reg = 3'd0;
reg [31:0] rd_data_reg = 32'd0;
reg csr_req_reg = 1'b0;
reg bad_req_reg = 1'b0;

// request header fields (upper address bits select the BAR, done by the endpoint)
/* verilator lint_off UNUSEDSIGNAL */
wire [2:0] hdr_fmt = rx_req_tlp_hdr[127:125];
wire [4:0] hdr_type = rx_req_tlp_hdr[124:120];
wire [9:0] hdr_len = rx_req_tlp_hdr[105:96];
wire hdr_4dw = hdr_fmt[0];
wire hdr_has_data = hdr_fmt[1];
wire [31:0] hdr_addr_lo = hdr_4dw ? rx_req_tlp_hdr[31:0] : rx_req_tlp_hdr[63:32];
wire [31:0] hdr_addr_hi = hdr_4dw ? rx_req_tlp_hdr[63:32] : 32'd0;
wire hdr_is_mem = hdr_type == 5'b00000;
wire hdr_one_dw = hdr_len == 10'd1;
/* verilator lint_on UNUSEDSIGNAL */

assign rx_req_tlp_ready = state_reg == STATE_IDLE || state_reg == STATE_DRAIN;

assign csr_req = csr_req_reg;
assign csr_req_is_wr = is_wr_reg;
assign csr_addr = addr_reg;
assign csr_wr_data = wr_data_reg;
assign csr_wr_biten = {{8{first_be_reg[3]}}, {8{first_be_reg[2]}}, {8{first_be_reg[1]}}, {8{first_be_reg[0]}}};

assign stat_bad_req = bad_req_reg;

// Completion: byte count and lower address of a 1-dword read follow the
// first byte enables (PCIe base spec, byte count table).
reg [1:0] be_lo;
reg [2:0] be_cnt;
always @* begin
    casez (first_be_reg)
        4'b???1: be_lo = 2'd0;
        4'b??10: be_lo = 2'd1;
        4'b?100: be_lo = 2'd2;
        4'b1000: be_lo = 2'd3;
        default: be_lo = 2'd0;      // 0000: a zero-length read (PCIe: 00b)
    endcase
    casez (first_be_reg)
        4'b1??1: be_cnt = 3'd4;
        4'b01?1: be_cnt = 3'd3;
        4'b1?10: be_cnt = 3'd3;
        4'b0011, 4'b0110, 4'b1100: be_cnt = 3'd2;
        default: be_cnt = 3'd1;
    endcase
end

wire [6:0] cpl_lower_addr = {addr_reg[6:2], is_ur_reg ? 2'd0 : be_lo};
wire [11:0] cpl_byte_count = is_ur_reg ? 12'd4 : {9'd0, be_cnt};

assign tx_cpl_tlp_hdr = {
    is_ur_reg ? 3'b000 : 3'b010, 5'b01010, 1'b0, tc_reg, 1'b0, attr_reg[2], 1'b0, 1'b0, 1'b0, 1'b0,
    attr_reg[1:0], 2'b00, is_ur_reg ? 10'd0 : 10'd1,
    cfg_completer_id, is_ur_reg ? 3'b001 : 3'b000, 1'b0, cpl_byte_count,
    req_id_reg, tag_reg, 1'b0, cpl_lower_addr,
    32'd0
};
assign tx_cpl_tlp_data = {{(DATA_W-32){1'b0}}, rd_data_reg};
assign tx_cpl_tlp_keep = {{(DATA_W/32-1){1'b0}}, !is_ur_reg};
assign tx_cpl_tlp_valid = state_reg == STATE_CPL;
assign tx_cpl_tlp_last = 1'b1;

always @(posedge clk) begin
    bad_req_reg <= 1'b0;
    csr_req_reg <= 1'b0;

    case (state_reg)
        STATE_IDLE: begin
            if (rx_req_tlp_valid) begin
                is_wr_reg <= hdr_has_data;
                is_ur_reg <= 1'b0;
                addr_reg <= hdr_addr_lo[CSR_ADDR_W-1:0];
                in_csr_reg <= hdr_addr_lo[BAR_ADDR_W-1:CSR_ADDR_W] == 0;
                wr_data_reg <= rx_req_tlp_data[31:0];
                first_be_reg <= rx_req_tlp_hdr[67:64];
                req_id_reg <= rx_req_tlp_hdr[95:80];
                tag_reg <= rx_req_tlp_hdr[79:72];
                tc_reg <= rx_req_tlp_hdr[118:116];
                attr_reg <= {rx_req_tlp_hdr[114], rx_req_tlp_hdr[109:108]};
                rd_data_reg <= 32'd0;
                if (!hdr_is_mem || !hdr_one_dw || hdr_addr_hi != 0 || hdr_addr_lo[1:0] != 0) begin
                    // Unsupported: reads get UR, writes are dropped.
                    bad_req_reg <= 1'b1;
                    is_ur_reg <= !hdr_has_data;
                    if (!rx_req_tlp_last) begin
                        state_reg <= STATE_DRAIN;
                    end else begin
                        state_reg <= hdr_has_data ? STATE_IDLE : STATE_CPL;
                    end
                end else if (!rx_req_tlp_last) begin
                    bad_req_reg <= 1'b1;
                    is_ur_reg <= !hdr_has_data;
                    state_reg <= STATE_DRAIN;
                end else begin
                    state_reg <= STATE_CSR;
                end
            end
        end
        STATE_DRAIN: begin
            if (rx_req_tlp_valid && rx_req_tlp_last) begin
                state_reg <= is_wr_reg ? STATE_IDLE : STATE_CPL;
            end
        end
        STATE_CSR: begin
            if (!in_csr_reg) begin
                state_reg <= is_wr_reg ? STATE_IDLE : STATE_CPL;
            end else if (!(is_wr_reg ? csr_req_stall_wr : csr_req_stall_rd)) begin
                csr_req_reg <= 1'b1;
                state_reg <= STATE_WAIT;
            end
        end
        STATE_WAIT: begin
            if (is_wr_reg && (csr_wr_ack || csr_wr_err)) begin
                state_reg <= STATE_IDLE;
            end else if (!is_wr_reg && (csr_rd_ack || csr_rd_err)) begin
                rd_data_reg <= csr_rd_err ? 32'hffffffff : csr_rd_data;
                state_reg <= STATE_CPL;
            end
        end
        STATE_CPL: begin
            if (tx_cpl_tlp_ready) begin
                state_reg <= STATE_IDLE;
            end
        end
        default: state_reg <= STATE_IDLE;
    endcase

    if (rst) begin
        state_reg <= STATE_IDLE;
        csr_req_reg <= 1'b0;
        bad_req_reg <= 1'b0;
    end
end

// A 1-dword write carries its dword in bits [31:0] of its only beat.
/* verilator lint_off UNUSEDSIGNAL */
wire [DATA_W/32-1:0] unused_keep = rx_req_tlp_keep;
wire [DATA_W-1:0] unused_data = rx_req_tlp_data;
/* verilator lint_on UNUSEDSIGNAL */

endmodule

`resetall
