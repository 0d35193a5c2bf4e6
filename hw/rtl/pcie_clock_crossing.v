// The core's PCIe side moved from the PCIe block's user clock to the core's
// own clock: the five TLP streams, MSI requests and the link's settings.
// With CORE_W = 2 * PCIE_W the core runs at half the user clock and carries
// the link's full rate (Gen1 x4: 64 bits at 125 MHz on the PCIe side, 128
// bits at 62.5 MHz in the core), so the core's timing no longer has to meet
// the PCIe block's clock. With CORE_W = PCIE_W the streams only cross.
//
// Streams into the core (rx_req, rx_cpl) are widened on the PCIe side
// (tlp_upsize) and then cross (axis_async_fifo); streams out of it
// (tx_cpl, tx_wr_req) cross and are narrowed on the PCIe side
// (tlp_downsize): the crossing always runs at the wide width, half the
// fast side's beat rate. tx_rd_req is a header only; MSI requests cross as
// their vector. The settings (max payload, max read request, requester ID)
// are sent across whole when they change, so the core never sees a mix of
// an old and a new value; the core reads the last one that arrived (zero,
// the smallest sizes, until the first).
//
// Both resets must come from one source (each FIFO clears when either side
// is reset).

`resetall
`timescale 1ns / 1ps
`default_nettype none

module pcie_clock_crossing #(
    parameter PCIE_W = 64,
    parameter CORE_W = 128,
    // log2 of each TLP FIFO's depth in (wide) beats
    parameter FIFO_AW = 4
) (
    input  wire                  pcie_clk,
    input  wire                  pcie_rst,
    input  wire                  core_clk,
    input  wire                  core_rst,

    // PCIe side (pcie_clk): the shim's ports
    input  wire [127:0]          p_rx_req_tlp_hdr,
    input  wire [PCIE_W-1:0]     p_rx_req_tlp_data,
    input  wire [PCIE_W/32-1:0]  p_rx_req_tlp_keep,
    input  wire                  p_rx_req_tlp_valid,
    input  wire                  p_rx_req_tlp_last,
    output wire                  p_rx_req_tlp_ready,

    output wire [127:0]          p_tx_cpl_tlp_hdr,
    output wire [PCIE_W-1:0]     p_tx_cpl_tlp_data,
    output wire [PCIE_W/32-1:0]  p_tx_cpl_tlp_keep,
    output wire                  p_tx_cpl_tlp_valid,
    output wire                  p_tx_cpl_tlp_last,
    input  wire                  p_tx_cpl_tlp_ready,

    output wire [127:0]          p_tx_rd_req_tlp_hdr,
    output wire                  p_tx_rd_req_tlp_valid,
    input  wire                  p_tx_rd_req_tlp_ready,

    input  wire [127:0]          p_rx_cpl_tlp_hdr,
    input  wire [PCIE_W-1:0]     p_rx_cpl_tlp_data,
    input  wire [PCIE_W/32-1:0]  p_rx_cpl_tlp_keep,
    input  wire                  p_rx_cpl_tlp_valid,
    input  wire                  p_rx_cpl_tlp_last,
    output wire                  p_rx_cpl_tlp_ready,

    output wire [127:0]          p_tx_wr_req_tlp_hdr,
    output wire [PCIE_W-1:0]     p_tx_wr_req_tlp_data,
    output wire [PCIE_W/32-1:0]  p_tx_wr_req_tlp_keep,
    output wire                  p_tx_wr_req_tlp_valid,
    output wire                  p_tx_wr_req_tlp_last,
    input  wire                  p_tx_wr_req_tlp_ready,

    output wire [4:0]            p_msi_vector,
    output wire                  p_msi_valid,
    input  wire                  p_msi_ready,

    input  wire [2:0]            p_cfg_max_payload,
    input  wire [2:0]            p_cfg_max_read_req,
    input  wire [15:0]           p_cfg_requester_id,

    // core side (core_clk): rnic_core's ports
    output wire [127:0]          c_rx_req_tlp_hdr,
    output wire [CORE_W-1:0]     c_rx_req_tlp_data,
    output wire [CORE_W/32-1:0]  c_rx_req_tlp_keep,
    output wire                  c_rx_req_tlp_valid,
    output wire                  c_rx_req_tlp_last,
    input  wire                  c_rx_req_tlp_ready,

    input  wire [127:0]          c_tx_cpl_tlp_hdr,
    input  wire [CORE_W-1:0]     c_tx_cpl_tlp_data,
    input  wire [CORE_W/32-1:0]  c_tx_cpl_tlp_keep,
    input  wire                  c_tx_cpl_tlp_valid,
    input  wire                  c_tx_cpl_tlp_last,
    output wire                  c_tx_cpl_tlp_ready,

    input  wire [127:0]          c_tx_rd_req_tlp_hdr,
    input  wire                  c_tx_rd_req_tlp_valid,
    output wire                  c_tx_rd_req_tlp_ready,

    output wire [127:0]          c_rx_cpl_tlp_hdr,
    output wire [CORE_W-1:0]     c_rx_cpl_tlp_data,
    output wire [CORE_W/32-1:0]  c_rx_cpl_tlp_keep,
    output wire                  c_rx_cpl_tlp_valid,
    output wire                  c_rx_cpl_tlp_last,
    input  wire                  c_rx_cpl_tlp_ready,

    input  wire [127:0]          c_tx_wr_req_tlp_hdr,
    input  wire [CORE_W-1:0]     c_tx_wr_req_tlp_data,
    input  wire [CORE_W/32-1:0]  c_tx_wr_req_tlp_keep,
    input  wire                  c_tx_wr_req_tlp_valid,
    input  wire                  c_tx_wr_req_tlp_last,
    output wire                  c_tx_wr_req_tlp_ready,

    input  wire [4:0]            c_msi_vector,
    input  wire                  c_msi_valid,
    output wire                  c_msi_ready,

    output wire [2:0]            c_cfg_max_payload,
    output wire [2:0]            c_cfg_max_read_req,
    output wire [15:0]           c_cfg_requester_id
);

initial begin
    if (PCIE_W < 64 || PCIE_W % 64 != 0 || (CORE_W != PCIE_W && CORE_W != 2 * PCIE_W)) begin
        $error("Error: PCIE_W must be a multiple of 64 and CORE_W PCIE_W or twice it (instance %m)");
        $finish;
    end
end

localparam PK = PCIE_W / 32;
localparam CK = CORE_W / 32;
localparam WIDE = CORE_W != PCIE_W;
// one TLP beat at the core's width: {hdr, data, keep, last}
localparam BEAT_W = 128 + CORE_W + CK + 1;

// ---------------------------------------------------------------- into the core
// stream 0: rx_req, 1: rx_cpl
wire [2*128-1:0]    pi_hdr = {p_rx_cpl_tlp_hdr, p_rx_req_tlp_hdr};
wire [2*PCIE_W-1:0] pi_data = {p_rx_cpl_tlp_data, p_rx_req_tlp_data};
wire [2*PK-1:0]     pi_keep = {p_rx_cpl_tlp_keep, p_rx_req_tlp_keep};
wire [1:0]          pi_valid = {p_rx_cpl_tlp_valid, p_rx_req_tlp_valid};
wire [1:0]          pi_last = {p_rx_cpl_tlp_last, p_rx_req_tlp_last};
wire [1:0]          pi_ready;
wire [2*BEAT_W-1:0] ci_beat;
wire [1:0]          ci_valid;
wire [1:0]          ci_ready = {c_rx_cpl_tlp_ready, c_rx_req_tlp_ready};

// streams 0: tx_cpl, 1: tx_wr_req
wire [2*BEAT_W-1:0] co_beat = {
    c_tx_wr_req_tlp_hdr, c_tx_wr_req_tlp_data, c_tx_wr_req_tlp_keep, c_tx_wr_req_tlp_last,
    c_tx_cpl_tlp_hdr, c_tx_cpl_tlp_data, c_tx_cpl_tlp_keep, c_tx_cpl_tlp_last};
wire [1:0]          co_valid = {c_tx_wr_req_tlp_valid, c_tx_cpl_tlp_valid};
wire [1:0]          co_ready;
wire [2*128-1:0]    po_hdr;
wire [2*PCIE_W-1:0] po_data;
wire [2*PK-1:0]     po_keep;
wire [1:0]          po_valid;
wire [1:0]          po_last;
wire [1:0]          po_ready = {p_tx_wr_req_tlp_ready, p_tx_cpl_tlp_ready};

genvar i;
generate
    for (i = 0; i < 2; i = i + 1) begin : g_stream
        // in: widen (PCIe clock), then cross
        wire [127:0]    w_hdr;
        wire [CORE_W-1:0] w_data;
        wire [CK-1:0]   w_keep;
        wire            w_valid;
        wire            w_last;
        wire            w_ready;
        if (WIDE) begin : g_up
            tlp_upsize #(.IN_W(PCIE_W)) up_inst (
                .clk(pcie_clk),
                .rst(pcie_rst),
                .s_hdr(pi_hdr[128*i +: 128]),
                .s_data(pi_data[PCIE_W*i +: PCIE_W]),
                .s_keep(pi_keep[PK*i +: PK]),
                .s_valid(pi_valid[i]),
                .s_last(pi_last[i]),
                .s_ready(pi_ready[i]),
                .m_hdr(w_hdr),
                .m_data(w_data),
                .m_keep(w_keep),
                .m_valid(w_valid),
                .m_last(w_last),
                .m_ready(w_ready)
            );
        end else begin : g_same_in
            assign w_hdr = pi_hdr[128*i +: 128];
            assign w_data = pi_data[PCIE_W*i +: PCIE_W];
            assign w_keep = pi_keep[PK*i +: PK];
            assign w_valid = pi_valid[i];
            assign w_last = pi_last[i];
            assign pi_ready[i] = w_ready;
        end
        axis_async_fifo #(.WIDTH(BEAT_W), .ADDR_W(FIFO_AW)) in_fifo_inst (
            .s_clk(pcie_clk),
            .s_rst(pcie_rst),
            .s_data({w_hdr, w_data, w_keep, w_last}),
            .s_valid(w_valid),
            .s_ready(w_ready),
            .m_clk(core_clk),
            .m_rst(core_rst),
            .m_data(ci_beat[BEAT_W*i +: BEAT_W]),
            .m_valid(ci_valid[i]),
            .m_ready(ci_ready[i])
        );

        // out: cross, then narrow (PCIe clock)
        wire [BEAT_W-1:0] n_beat;
        wire            n_valid;
        wire            n_ready;
        axis_async_fifo #(.WIDTH(BEAT_W), .ADDR_W(FIFO_AW)) out_fifo_inst (
            .s_clk(core_clk),
            .s_rst(core_rst),
            .s_data(co_beat[BEAT_W*i +: BEAT_W]),
            .s_valid(co_valid[i]),
            .s_ready(co_ready[i]),
            .m_clk(pcie_clk),
            .m_rst(pcie_rst),
            .m_data(n_beat),
            .m_valid(n_valid),
            .m_ready(n_ready)
        );
        wire [127:0]    n_hdr = n_beat[BEAT_W-1 -: 128];
        wire [CORE_W-1:0] n_data = n_beat[CK+1 +: CORE_W];
        wire [CK-1:0]   n_keep = n_beat[1 +: CK];
        wire            n_last = n_beat[0];
        if (WIDE) begin : g_down
            tlp_downsize #(.OUT_W(PCIE_W)) down_inst (
                .clk(pcie_clk),
                .rst(pcie_rst),
                .s_hdr(n_hdr),
                .s_data(n_data),
                .s_keep(n_keep),
                .s_valid(n_valid),
                .s_last(n_last),
                .s_ready(n_ready),
                .m_hdr(po_hdr[128*i +: 128]),
                .m_data(po_data[PCIE_W*i +: PCIE_W]),
                .m_keep(po_keep[PK*i +: PK]),
                .m_valid(po_valid[i]),
                .m_last(po_last[i]),
                .m_ready(po_ready[i])
            );
        end else begin : g_same_out
            assign po_hdr[128*i +: 128] = n_hdr;
            assign po_data[PCIE_W*i +: PCIE_W] = n_data;
            assign po_keep[PK*i +: PK] = n_keep;
            assign po_valid[i] = n_valid;
            assign po_last[i] = n_last;
            assign n_ready = po_ready[i];
        end
    end
endgenerate

assign {p_rx_cpl_tlp_ready, p_rx_req_tlp_ready} = pi_ready;
assign {c_rx_req_tlp_hdr, c_rx_req_tlp_data, c_rx_req_tlp_keep, c_rx_req_tlp_last} = ci_beat[0 +: BEAT_W];
assign {c_rx_cpl_tlp_hdr, c_rx_cpl_tlp_data, c_rx_cpl_tlp_keep, c_rx_cpl_tlp_last} = ci_beat[BEAT_W +: BEAT_W];
assign {c_rx_cpl_tlp_valid, c_rx_req_tlp_valid} = ci_valid;
assign {c_tx_wr_req_tlp_ready, c_tx_cpl_tlp_ready} = co_ready;
assign {p_tx_wr_req_tlp_hdr, p_tx_cpl_tlp_hdr} = po_hdr;
assign {p_tx_wr_req_tlp_data, p_tx_cpl_tlp_data} = po_data;
assign {p_tx_wr_req_tlp_keep, p_tx_cpl_tlp_keep} = po_keep;
assign {p_tx_wr_req_tlp_valid, p_tx_cpl_tlp_valid} = po_valid;
assign {p_tx_wr_req_tlp_last, p_tx_cpl_tlp_last} = po_last;

// ---------------------------------------------------------------- read requests, MSI
axis_async_fifo #(.WIDTH(128), .ADDR_W(FIFO_AW)) rd_req_fifo_inst (
    .s_clk(core_clk),
    .s_rst(core_rst),
    .s_data(c_tx_rd_req_tlp_hdr),
    .s_valid(c_tx_rd_req_tlp_valid),
    .s_ready(c_tx_rd_req_tlp_ready),
    .m_clk(pcie_clk),
    .m_rst(pcie_rst),
    .m_data(p_tx_rd_req_tlp_hdr),
    .m_valid(p_tx_rd_req_tlp_valid),
    .m_ready(p_tx_rd_req_tlp_ready)
);

axis_async_fifo #(.WIDTH(5), .ADDR_W(2)) msi_fifo_inst (
    .s_clk(core_clk),
    .s_rst(core_rst),
    .s_data(c_msi_vector),
    .s_valid(c_msi_valid),
    .s_ready(c_msi_ready),
    .m_clk(pcie_clk),
    .m_rst(pcie_rst),
    .m_data(p_msi_vector),
    .m_valid(p_msi_valid),
    .m_ready(p_msi_ready)
);

// ---------------------------------------------------------------- settings
// sent whole when they differ from the last value sent
wire [21:0] cfg_now = {p_cfg_max_payload, p_cfg_max_read_req, p_cfg_requester_id};
reg [21:0] cfg_sent_reg = 22'd0;
wire cfg_ready;
wire cfg_send = cfg_now != cfg_sent_reg;
always @(posedge pcie_clk) begin
    if (cfg_send && cfg_ready) begin
        cfg_sent_reg <= cfg_now;
    end
    if (pcie_rst) begin
        cfg_sent_reg <= 22'd0;
    end
end
wire [21:0] cfg_arrived;
wire cfg_valid;
reg [21:0] cfg_core_reg = 22'd0;
always @(posedge core_clk) begin
    if (cfg_valid) begin
        cfg_core_reg <= cfg_arrived;
    end
    if (core_rst) begin
        cfg_core_reg <= 22'd0;
    end
end
axis_async_fifo #(.WIDTH(22), .ADDR_W(1)) cfg_fifo_inst (
    .s_clk(pcie_clk),
    .s_rst(pcie_rst),
    .s_data(cfg_now),
    .s_valid(cfg_send),
    .s_ready(cfg_ready),
    .m_clk(core_clk),
    .m_rst(core_rst),
    .m_data(cfg_arrived),
    .m_valid(cfg_valid),
    .m_ready(1'b1)
);
assign {c_cfg_max_payload, c_cfg_max_read_req, c_cfg_requester_id} = cfg_core_reg;

endmodule

`resetall
