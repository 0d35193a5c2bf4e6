// Simple dual-port RAM between the DMA engines: one write port with byte
// strobes (read engine, CQE writer), one read port with one cycle of latency
// (write engine). Written so Yosys and vendor tools infer block RAM.

`resetall
`timescale 1ns / 1ps
`default_nettype none

module dma_ram #(
    parameter DATA_W = 64,
    parameter ADDR_W = 10            // beat address width
) (
    input  wire                clk,

    input  wire [ADDR_W-1:0]   wr_addr,
    input  wire [DATA_W-1:0]   wr_data,
    input  wire [DATA_W/8-1:0] wr_strb,
    input  wire                wr_en,

    input  wire [ADDR_W-1:0]   rd_addr,
    input  wire                rd_en,
    output wire [DATA_W-1:0]   rd_data
);

initial begin
    if (DATA_W % 8 != 0 || DATA_W < 32) begin
        $error("dma_ram: DATA_W must be a multiple of 8, at least 32");
        $finish;
    end
end

reg [DATA_W-1:0] mem [0:(1<<ADDR_W)-1];
reg [DATA_W-1:0] rd_data_reg = {DATA_W{1'b0}};

assign rd_data = rd_data_reg;

integer i;

always @(posedge clk) begin
    if (wr_en) begin
        for (i = 0; i < DATA_W/8; i = i + 1) begin
            if (wr_strb[i]) begin
                mem[wr_addr][i*8 +: 8] <= wr_data[i*8 +: 8];
            end
        end
    end
end

always @(posedge clk) begin
    if (rd_en) begin
        rd_data_reg <= mem[rd_addr];
    end
end

endmodule

`resetall
