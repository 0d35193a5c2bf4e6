// rnic DMA subsystem: the PCIe read and write engines, the three on-chip
// RAMs they move data through, and the multiplexers in front of the
// engines. Its clients are the executor (ex), the responder (rs), the
// CQE writer (cw), in READ_EN builds the READ responses (rr: reads; in
// ATOMIC_EN builds also an atomic's write-back, through the staging RAM
// like a CQE) and, in FILL_EN builds, the QP context fill engine (qf:
// qpc_fill, records between the host's context table and its buffers in
// the staging RAM); each offers descriptors and gets its statuses back by
// the client field of the descriptor id, its top CLIENT_W bits (the
// engines return statuses in order, so no other bookkeeping is needed).
//
// One 128 KiB byte address space of RAMs (RAM_ADDR_W = 17; bits [16:15]
// pick the region):
//   0x00000 staging RAM (2^STG_ADDR_W bytes): copy slots, CQE slots, WQEs
//   0x08000 TX RAM: packet payloads, read engine -> roce_tx
//   0x10000 RX RAM: received frames, roce_rx -> write engine
//   0x18000 reply RAM (READ_EN: 2^RRR_ADDR_W bytes): READ responses'
//           payload, read engine -> roce_tx, which reads it as the upper
//           half of its TX RAM space (one address bit more)
//
// Priorities (fixed, axis_arb_mux: a choice holds from the first beat
// offered until its last beat is taken):
//   - read descriptors: CQE flush reads, then receive-WQE fetches, then
//     READ responses' payload, then the executor (WQE fetches and payload
//     reads), then context fills (a fill delays only the QP waiting for it);
//   - write descriptors: received payload, then CQEs, then atomics'
//     write-backs, then copy chunks, then context write-backs;
//   - staging RAM writes: the read engine, then the CQE writer, then the
//     atomics' write-backs, then the fill engine's buffer words; its
//     buffer reads take the read port in cycles the write engine does not
//     read the staging RAM;
//     payload is written with relaxed ordering, a CQE as cw says (RO=0
//     unless the cqe_ro debug switch is set), so a CQE cannot pass the
//     payload written before it;
//   - tx_wr_req TLPs: the CQE bypass (debug switch) first, a TLP once
//     offered goes out whole.

`resetall
`timescale 1ns / 1ps
`default_nettype none

module rnic_dma #(
    parameter DATA_W = 64,
    parameter RAM_ADDR_W = 17,
    parameter STG_ADDR_W = 15,       // staging RAM bytes, log2
    parameter TXR_ADDR_W = 15,       // TX RAM bytes, log2
    parameter RXR_ADDR_W = 15,       // RX RAM bytes, log2
    parameter READ_EN = 0,           // 1: the reply RAM and the rr read client
    parameter RRR_ADDR_W = 14,       // reply RAM bytes, log2 (READ_EN)
    parameter ATOMIC_EN = 0,         // 1: the rr write client and its staging RAM writes
    parameter FILL_EN = 0,           // 1: the qf client (context fills) and its staging RAM port
    parameter LEN_W = 17,
    parameter ID_W = 8,
    // read engine tags (up to 2**RD_TAG_W reads outstanding) and write
    // engine descriptor FIFO depth (small values for hw/formal)
    parameter RD_TAG_W = 5,
    parameter WR_DESC_FIFO_DEPTH = 8,
    // descriptor id client tags: the top CLIENT_W bits (3 with FILL_EN)
    parameter CLIENT_W = 2,
    parameter [ID_W-1:0] ID_EXEC = 8'h00,
    parameter [ID_W-1:0] ID_RESP = 8'h40,
    parameter [ID_W-1:0] ID_CQE = 8'h80,
    parameter [ID_W-1:0] ID_RRSP = 8'hC0,
    parameter [ID_W-1:0] ID_FILL = {ID_W{1'b0}},
    parameter SEG_W = $clog2(DATA_W / 8),
    // roce_tx's RAM space: the TX RAM, and the reply RAM above it
    parameter TXP_ADDR_W = TXR_ADDR_W + (READ_EN != 0 ? 1 : 0)
) (
    input  wire                         clk,
    input  wire                         rst,

    // PCIe: memory read requests, their completions, memory writes
    output wire [127:0]                 tx_rd_req_tlp_hdr,
    output wire                         tx_rd_req_tlp_valid,
    input  wire                         tx_rd_req_tlp_ready,
    input  wire [127:0]                 rx_cpl_tlp_hdr,
    input  wire [DATA_W-1:0]            rx_cpl_tlp_data,
    input  wire [DATA_W/32-1:0]         rx_cpl_tlp_keep,
    input  wire                         rx_cpl_tlp_valid,
    input  wire                         rx_cpl_tlp_last,
    output wire                         rx_cpl_tlp_ready,
    output wire [127:0]                 tx_wr_req_tlp_hdr,
    output wire [DATA_W-1:0]            tx_wr_req_tlp_data,
    output wire [DATA_W/32-1:0]         tx_wr_req_tlp_keep,
    output wire                         tx_wr_req_tlp_valid,
    output wire                         tx_wr_req_tlp_last,
    input  wire                         tx_wr_req_tlp_ready,
    input  wire [2:0]                   cfg_max_payload,
    input  wire [2:0]                   cfg_max_read_req,
    input  wire [15:0]                  cfg_requester_id,

    // read descriptors (host -> RAM)
    input  wire [63:0]                  s_ex_rd_pcie_addr,
    input  wire [RAM_ADDR_W-1:0]        s_ex_rd_ram_addr,
    input  wire [LEN_W-1:0]             s_ex_rd_len,
    input  wire [ID_W-1:0]              s_ex_rd_id,
    input  wire                         s_ex_rd_valid,
    output wire                         s_ex_rd_ready,
    input  wire [63:0]                  s_rs_rd_pcie_addr,
    input  wire [RAM_ADDR_W-1:0]        s_rs_rd_ram_addr,
    input  wire [LEN_W-1:0]             s_rs_rd_len,
    input  wire [ID_W-1:0]              s_rs_rd_id,
    input  wire                         s_rs_rd_valid,
    output wire                         s_rs_rd_ready,
    // the CQE writer's reads are zero-length flush reads: no RAM address
    input  wire [63:0]                  s_cw_rd_pcie_addr,
    input  wire [LEN_W-1:0]             s_cw_rd_len,
    input  wire [ID_W-1:0]              s_cw_rd_id,
    input  wire                         s_cw_rd_valid,
    output wire                         s_cw_rd_ready,
    // READ responses' payload reads (READ_EN; valid tied low otherwise)
    input  wire [63:0]                  s_rr_rd_pcie_addr,
    input  wire [RAM_ADDR_W-1:0]        s_rr_rd_ram_addr,
    input  wire [LEN_W-1:0]             s_rr_rd_len,
    input  wire [ID_W-1:0]              s_rr_rd_id,
    input  wire                         s_rr_rd_valid,
    output wire                         s_rr_rd_ready,
    // read statuses: id and error shared, valid per client
    output wire [ID_W-1:0]              rd_status_id,
    output wire [3:0]                   rd_status_error,
    output wire                         ex_rd_status,
    output wire                         rs_rd_status,
    output wire                         cw_rd_status,
    output wire                         rr_rd_status,

    // write descriptors (RAM -> host)
    input  wire [63:0]                  s_ex_wr_pcie_addr,
    input  wire [RAM_ADDR_W-1:0]        s_ex_wr_ram_addr,
    input  wire [LEN_W-1:0]             s_ex_wr_len,
    input  wire [ID_W-1:0]              s_ex_wr_id,
    input  wire                         s_ex_wr_valid,
    output wire                         s_ex_wr_ready,
    input  wire [63:0]                  s_rs_wr_pcie_addr,
    input  wire [RAM_ADDR_W-1:0]        s_rs_wr_ram_addr,
    input  wire [LEN_W-1:0]             s_rs_wr_len,
    input  wire [ID_W-1:0]              s_rs_wr_id,
    input  wire                         s_rs_wr_valid,
    output wire                         s_rs_wr_ready,
    input  wire [63:0]                  s_cw_wr_pcie_addr,
    input  wire [RAM_ADDR_W-1:0]        s_cw_wr_ram_addr,
    input  wire [LEN_W-1:0]             s_cw_wr_len,
    input  wire                         s_cw_wr_ro,
    input  wire [ID_W-1:0]              s_cw_wr_id,
    input  wire                         s_cw_wr_valid,
    output wire                         s_cw_wr_ready,
    input  wire [63:0]                  s_rr_wr_pcie_addr,
    input  wire [RAM_ADDR_W-1:0]        s_rr_wr_ram_addr,
    input  wire [LEN_W-1:0]             s_rr_wr_len,
    input  wire [ID_W-1:0]              s_rr_wr_id,
    input  wire                         s_rr_wr_valid,
    output wire                         s_rr_wr_ready,
    output wire                         rr_wr_status,
    output wire                         ex_wr_status,
    output wire                         rs_wr_status,
    output wire                         cw_wr_status,
    // the fill engine (FILL_EN; valids tied low otherwise): its reads and
    // writes of the host context table, its statuses, and its port of
    // 64-bit words into the staging RAM (byte addresses; a read's word
    // the cycle after the read is taken; requests wait for their ready)
    input  wire [63:0]                  s_qf_rd_pcie_addr,
    input  wire [RAM_ADDR_W-1:0]        s_qf_rd_ram_addr,
    input  wire [LEN_W-1:0]             s_qf_rd_len,
    input  wire [ID_W-1:0]              s_qf_rd_id,
    input  wire                         s_qf_rd_valid,
    output wire                         s_qf_rd_ready,
    output wire                         qf_rd_status,
    input  wire [63:0]                  s_qf_wr_pcie_addr,
    input  wire [RAM_ADDR_W-1:0]        s_qf_wr_ram_addr,
    input  wire [LEN_W-1:0]             s_qf_wr_len,
    input  wire [ID_W-1:0]              s_qf_wr_id,
    input  wire                         s_qf_wr_valid,
    output wire                         s_qf_wr_ready,
    output wire                         qf_wr_status,
    input  wire [RAM_ADDR_W-1:0]        s_qf_ram_wr_addr,
    input  wire [63:0]                  s_qf_ram_wr_data,
    input  wire                         s_qf_ram_wr_en,
    output wire                         s_qf_ram_wr_ready,
    input  wire [RAM_ADDR_W-1:0]        s_qf_ram_rd_addr,
    input  wire                         s_qf_ram_rd_en,
    output wire                         s_qf_ram_rd_ready,
    output wire [63:0]                  s_qf_ram_rd_data,
    // no write descriptor accepted and not yet issued (CQE flush mode)
    output wire                         wr_engine_idle,

    // the CQE writer's TLP bypass (debug switch)
    input  wire [127:0]                 s_byp_tlp_hdr,
    input  wire [DATA_W-1:0]            s_byp_tlp_data,
    input  wire [DATA_W/32-1:0]         s_byp_tlp_keep,
    input  wire                         s_byp_tlp_valid,
    input  wire                         s_byp_tlp_last,
    output wire                         s_byp_tlp_ready,

    // the read engine's RAM writes, for the clients that snoop WQEs
    output wire [RAM_ADDR_W-SEG_W-1:0]  ram_snoop_addr,
    output wire [DATA_W-1:0]            ram_snoop_data,
    output wire [DATA_W/8-1:0]          ram_snoop_strb,
    output wire                         ram_snoop_en,

    // the CQE writer's staging RAM writes (the read engine goes first)
    input  wire [RAM_ADDR_W-SEG_W-1:0]  s_cw_ram_wr_addr,
    input  wire [DATA_W-1:0]            s_cw_ram_wr_data,
    input  wire [DATA_W/8-1:0]          s_cw_ram_wr_strb,
    input  wire                         s_cw_ram_wr_en,
    output wire                         s_cw_ram_wr_ready,
    // an atomic's new value (ATOMIC_EN; after the read engine and cw)
    input  wire [RAM_ADDR_W-SEG_W-1:0]  s_rr_ram_wr_addr,
    input  wire [DATA_W-1:0]            s_rr_ram_wr_data,
    input  wire [DATA_W/8-1:0]          s_rr_ram_wr_strb,
    input  wire                         s_rr_ram_wr_en,
    output wire                         s_rr_ram_wr_ready,

    // TX RAM read port (roce_tx; READ_EN: the reply RAM above the TX RAM)
    input  wire [TXP_ADDR_W-SEG_W-1:0]  s_txr_rd_addr,
    input  wire                         s_txr_rd_en,
    output wire [DATA_W-1:0]            s_txr_rd_data,

    // RX RAM write port (roce_rx)
    input  wire [RXR_ADDR_W-SEG_W-1:0]  s_rxr_wr_addr,
    input  wire [DATA_W-1:0]            s_rxr_wr_data,
    input  wire [DATA_W/8-1:0]          s_rxr_wr_strb,
    input  wire                         s_rxr_wr_en,

    output wire                         stat_rd_req,
    output wire                         stat_rd_err,
    output wire                         stat_wr_tlp
);

initial begin
    if (RAM_ADDR_W != 17) begin
        $error("rnic_dma: RAM_ADDR_W must be 17 (three 32 KiB regions, picked by bits [16:15])");
        $finish;
    end
    if (STG_ADDR_W > 15 || TXR_ADDR_W > 15 || RXR_ADDR_W > 15
            || (READ_EN != 0 && RRR_ADDR_W >= TXR_ADDR_W)) begin
        $error("rnic_dma: each RAM must fit its 32 KiB region");
        $finish;
    end
    if (SEG_W != $clog2(DATA_W / 8)) begin
        $error("rnic_dma: SEG_W must be log2(DATA_W/8)");
        $finish;
    end
    if (CLIENT_W < 2 || CLIENT_W > ID_W || (FILL_EN != 0 && CLIENT_W < 3)) begin
        $error("rnic_dma: CLIENT_W must be 2..ID_W, at least 3 with FILL_EN (five clients)");
        $finish;
    end
    if (ID_EXEC[ID_W-1 -: CLIENT_W] == ID_RESP[ID_W-1 -: CLIENT_W]
            || ID_EXEC[ID_W-1 -: CLIENT_W] == ID_CQE[ID_W-1 -: CLIENT_W]
            || ID_RESP[ID_W-1 -: CLIENT_W] == ID_CQE[ID_W-1 -: CLIENT_W]
            || ID_RRSP[ID_W-1 -: CLIENT_W] == ID_EXEC[ID_W-1 -: CLIENT_W]
            || ID_RRSP[ID_W-1 -: CLIENT_W] == ID_RESP[ID_W-1 -: CLIENT_W]
            || ID_RRSP[ID_W-1 -: CLIENT_W] == ID_CQE[ID_W-1 -: CLIENT_W]
            || (FILL_EN != 0 && (ID_FILL[ID_W-1 -: CLIENT_W] == ID_EXEC[ID_W-1 -: CLIENT_W]
                || ID_FILL[ID_W-1 -: CLIENT_W] == ID_RESP[ID_W-1 -: CLIENT_W]
                || ID_FILL[ID_W-1 -: CLIENT_W] == ID_CQE[ID_W-1 -: CLIENT_W]
                || ID_FILL[ID_W-1 -: CLIENT_W] == ID_RRSP[ID_W-1 -: CLIENT_W]))) begin
        $error("rnic_dma: the client tags must differ in the top CLIENT_W id bits");
        $finish;
    end
    if (FILL_EN != 0 && DATA_W < 64) begin
        $error("rnic_dma: FILL_EN needs DATA_W of at least 64 (its 64-bit words)");
        $finish;
    end
end

// ---------------------------------------------------------------- engines
wire [63:0] rd_desc_pcie_addr;
wire [RAM_ADDR_W-1:0] rd_desc_ram_addr;
wire [LEN_W-1:0] rd_desc_len;
wire [ID_W-1:0] rd_desc_id;
wire rd_desc_valid;
wire rd_desc_ready;
wire rd_status_valid;

wire [63:0] wr_desc_pcie_addr;
wire [RAM_ADDR_W-1:0] wr_desc_ram_addr;
wire [LEN_W-1:0] wr_desc_len;
wire wr_desc_ro;
wire [ID_W-1:0] wr_desc_id;
wire wr_desc_valid;
wire wr_desc_ready;
/* verilator lint_off UNUSEDSIGNAL */
wire [ID_W-1:0] wr_status_id;     // only the client bits route statuses
/* verilator lint_on UNUSEDSIGNAL */
wire wr_status_valid;

wire [RAM_ADDR_W-SEG_W-1:0] rd_ram_wr_addr;
wire [DATA_W-1:0] rd_ram_wr_data;
wire [DATA_W/8-1:0] rd_ram_wr_strb;
wire rd_ram_wr_en;
wire [RAM_ADDR_W-SEG_W-1:0] wr_ram_rd_addr;
wire wr_ram_rd_en;
wire [DATA_W-1:0] wr_ram_rd_data;

wire eng_wr_tlp_valid;
wire eng_wr_tlp_ready;
wire [127:0] eng_wr_tlp_hdr;
wire [DATA_W-1:0] eng_wr_tlp_data;
wire [DATA_W/32-1:0] eng_wr_tlp_keep;
wire eng_wr_tlp_last;

assign ram_snoop_addr = rd_ram_wr_addr;
assign ram_snoop_data = rd_ram_wr_data;
assign ram_snoop_strb = rd_ram_wr_strb;
assign ram_snoop_en = rd_ram_wr_en;

dma_rd_engine #(
    .DATA_W(DATA_W),
    .RAM_ADDR_W(RAM_ADDR_W),
    .LEN_W(LEN_W),
    .ID_W(ID_W),
    .TAG_W(RD_TAG_W)
) rd_inst (
    .clk(clk),
    .rst(rst),
    .s_desc_pcie_addr(rd_desc_pcie_addr),
    .s_desc_ram_addr(rd_desc_ram_addr),
    .s_desc_len(rd_desc_len),
    .s_desc_id(rd_desc_id),
    .s_desc_valid(rd_desc_valid),
    .s_desc_ready(rd_desc_ready),
    .m_status_id(rd_status_id),
    .m_status_error(rd_status_error),
    .m_status_valid(rd_status_valid),
    .tx_rd_req_tlp_hdr(tx_rd_req_tlp_hdr),
    .tx_rd_req_tlp_valid(tx_rd_req_tlp_valid),
    .tx_rd_req_tlp_ready(tx_rd_req_tlp_ready),
    .rx_cpl_tlp_hdr(rx_cpl_tlp_hdr),
    .rx_cpl_tlp_data(rx_cpl_tlp_data),
    .rx_cpl_tlp_keep(rx_cpl_tlp_keep),
    .rx_cpl_tlp_valid(rx_cpl_tlp_valid),
    .rx_cpl_tlp_last(rx_cpl_tlp_last),
    .rx_cpl_tlp_ready(rx_cpl_tlp_ready),
    .m_ram_wr_addr(rd_ram_wr_addr),
    .m_ram_wr_data(rd_ram_wr_data),
    .m_ram_wr_strb(rd_ram_wr_strb),
    .m_ram_wr_en(rd_ram_wr_en),
    .cfg_max_read_req(cfg_max_read_req),
    .cfg_requester_id(cfg_requester_id),
    .stat_rd_req(stat_rd_req),
    .stat_rd_err(stat_rd_err)
);

dma_wr_engine #(
    .DATA_W(DATA_W),
    .RAM_ADDR_W(RAM_ADDR_W),
    .LEN_W(LEN_W),
    .ID_W(ID_W),
    .DESC_FIFO_DEPTH(WR_DESC_FIFO_DEPTH)
) wr_inst (
    .clk(clk),
    .rst(rst),
    .s_desc_pcie_addr(wr_desc_pcie_addr),
    .s_desc_ram_addr(wr_desc_ram_addr),
    .s_desc_len(wr_desc_len),
    .s_desc_ro(wr_desc_ro),
    .s_desc_id(wr_desc_id),
    .s_desc_valid(wr_desc_valid),
    .s_desc_ready(wr_desc_ready),
    .m_status_id(wr_status_id),
    .m_status_valid(wr_status_valid),
    .m_ram_rd_addr(wr_ram_rd_addr),
    .m_ram_rd_en(wr_ram_rd_en),
    .s_ram_rd_data(wr_ram_rd_data),
    .tx_wr_req_tlp_hdr(eng_wr_tlp_hdr),
    .tx_wr_req_tlp_data(eng_wr_tlp_data),
    .tx_wr_req_tlp_keep(eng_wr_tlp_keep),
    .tx_wr_req_tlp_valid(eng_wr_tlp_valid),
    .tx_wr_req_tlp_last(eng_wr_tlp_last),
    .tx_wr_req_tlp_ready(eng_wr_tlp_ready),
    .cfg_max_payload(cfg_max_payload),
    .cfg_requester_id(cfg_requester_id),
    .stat_tlp_issued(stat_wr_tlp)
);

// ---------------------------------------------------------------- read descriptors
/* verilator lint_off UNUSEDSIGNAL */
wire rd_arb_last;                     // descriptors are one beat
wire [2:0] rd_arb_sel;                // statuses are routed by id
/* verilator lint_on UNUSEDSIGNAL */

// port 0 first: CQE flush reads, receive WQEs, READ responses, the
// executor, context fills
axis_arb_mux #(
    .PORTS(5),
    .WIDTH(64 + RAM_ADDR_W + LEN_W + ID_W)
) rd_arb_inst (
    .clk(clk),
    .rst(rst),
    .s_data({s_qf_rd_pcie_addr, s_qf_rd_ram_addr, s_qf_rd_len, s_qf_rd_id,
             s_ex_rd_pcie_addr, s_ex_rd_ram_addr, s_ex_rd_len, s_ex_rd_id,
             s_rr_rd_pcie_addr, s_rr_rd_ram_addr, s_rr_rd_len, s_rr_rd_id,
             s_rs_rd_pcie_addr, s_rs_rd_ram_addr, s_rs_rd_len, s_rs_rd_id,
             s_cw_rd_pcie_addr, {RAM_ADDR_W{1'b0}}, s_cw_rd_len, s_cw_rd_id}),
    .s_valid({s_qf_rd_valid && FILL_EN != 0, s_ex_rd_valid, s_rr_rd_valid && READ_EN != 0, s_rs_rd_valid,
              s_cw_rd_valid}),
    .s_last(5'b11111),
    .s_ready({s_qf_rd_ready, s_ex_rd_ready, s_rr_rd_ready, s_rs_rd_ready, s_cw_rd_ready}),
    .m_data({rd_desc_pcie_addr, rd_desc_ram_addr, rd_desc_len, rd_desc_id}),
    .m_valid(rd_desc_valid),
    .m_last(rd_arb_last),
    .m_sel(rd_arb_sel),
    .m_ready(rd_desc_ready)
);
assign ex_rd_status = rd_status_valid && rd_status_id[ID_W-1 -: CLIENT_W] == ID_EXEC[ID_W-1 -: CLIENT_W];
assign rs_rd_status = rd_status_valid && rd_status_id[ID_W-1 -: CLIENT_W] == ID_RESP[ID_W-1 -: CLIENT_W];
assign cw_rd_status = rd_status_valid && rd_status_id[ID_W-1 -: CLIENT_W] == ID_CQE[ID_W-1 -: CLIENT_W];
assign rr_rd_status = rd_status_valid && rd_status_id[ID_W-1 -: CLIENT_W] == ID_RRSP[ID_W-1 -: CLIENT_W];
assign qf_rd_status = FILL_EN != 0 && rd_status_valid && rd_status_id[ID_W-1 -: CLIENT_W] == ID_FILL[ID_W-1 -: CLIENT_W];

// ---------------------------------------------------------------- write descriptors
/* verilator lint_off UNUSEDSIGNAL */
wire wr_arb_last;                     // descriptors are one beat
wire [2:0] wr_arb_sel;                // statuses are routed by id
/* verilator lint_on UNUSEDSIGNAL */

// port 0 first: received payload, CQEs, atomics' write-backs, copy
// chunks, context write-backs; payload always relaxed (RO), CQEs as the
// cqe_ro switch says, an atomic's write-back strictly ordered (the next
// atomic's read must find it), a context write-back too (a fill's read
// of the same record, issued after its status, must find it)
axis_arb_mux #(
    .PORTS(5),
    .WIDTH(64 + RAM_ADDR_W + LEN_W + 1 + ID_W)
) wr_arb_inst (
    .clk(clk),
    .rst(rst),
    .s_data({s_qf_wr_pcie_addr, s_qf_wr_ram_addr, s_qf_wr_len, 1'b0, s_qf_wr_id,
             s_ex_wr_pcie_addr, s_ex_wr_ram_addr, s_ex_wr_len, 1'b1, s_ex_wr_id,
             s_rr_wr_pcie_addr, s_rr_wr_ram_addr, s_rr_wr_len, 1'b0, s_rr_wr_id,
             s_cw_wr_pcie_addr, s_cw_wr_ram_addr, s_cw_wr_len, s_cw_wr_ro, s_cw_wr_id,
             s_rs_wr_pcie_addr, s_rs_wr_ram_addr, s_rs_wr_len, 1'b1, s_rs_wr_id}),
    .s_valid({s_qf_wr_valid && FILL_EN != 0, s_ex_wr_valid, s_rr_wr_valid && ATOMIC_EN != 0, s_cw_wr_valid,
              s_rs_wr_valid}),
    .s_last(5'b11111),
    .s_ready({s_qf_wr_ready, s_ex_wr_ready, s_rr_wr_ready, s_cw_wr_ready, s_rs_wr_ready}),
    .m_data({wr_desc_pcie_addr, wr_desc_ram_addr, wr_desc_len, wr_desc_ro, wr_desc_id}),
    .m_valid(wr_desc_valid),
    .m_last(wr_arb_last),
    .m_sel(wr_arb_sel),
    .m_ready(wr_desc_ready)
);
assign ex_wr_status = wr_status_valid && wr_status_id[ID_W-1 -: CLIENT_W] == ID_EXEC[ID_W-1 -: CLIENT_W];
assign rs_wr_status = wr_status_valid && wr_status_id[ID_W-1 -: CLIENT_W] == ID_RESP[ID_W-1 -: CLIENT_W];
assign cw_wr_status = wr_status_valid && wr_status_id[ID_W-1 -: CLIENT_W] == ID_CQE[ID_W-1 -: CLIENT_W];
assign rr_wr_status = wr_status_valid && wr_status_id[ID_W-1 -: CLIENT_W] == ID_RRSP[ID_W-1 -: CLIENT_W];
assign qf_wr_status = FILL_EN != 0 && wr_status_valid && wr_status_id[ID_W-1 -: CLIENT_W] == ID_FILL[ID_W-1 -: CLIENT_W];

// write descriptors accepted but not yet issued (flush mode waits for zero)
reg [7:0] wr_outstanding_reg = 8'd0;
always @(posedge clk) begin
    wr_outstanding_reg <= rst ? 8'd0
        : wr_outstanding_reg + {7'd0, wr_desc_valid && wr_desc_ready} - {7'd0, wr_status_valid};
end
assign wr_engine_idle = wr_outstanding_reg == 8'd0;

// ---------------------------------------------------------------- tx_wr_req
/* verilator lint_off UNUSEDSIGNAL */
wire tlp_arb_sel;
/* verilator lint_on UNUSEDSIGNAL */

// port 0 (the bypass) first; a TLP once offered goes out whole before the
// other side's (the arbiter's hold rule)
axis_arb_mux #(
    .PORTS(2),
    .WIDTH(128 + DATA_W + DATA_W/32)
) tlp_arb_inst (
    .clk(clk),
    .rst(rst),
    .s_data({eng_wr_tlp_hdr, eng_wr_tlp_data, eng_wr_tlp_keep,
             s_byp_tlp_hdr, s_byp_tlp_data, s_byp_tlp_keep}),
    .s_valid({eng_wr_tlp_valid, s_byp_tlp_valid}),
    .s_last({eng_wr_tlp_last, s_byp_tlp_last}),
    .s_ready({eng_wr_tlp_ready, s_byp_tlp_ready}),
    .m_data({tx_wr_req_tlp_hdr, tx_wr_req_tlp_data, tx_wr_req_tlp_keep}),
    .m_valid(tx_wr_req_tlp_valid),
    .m_last(tx_wr_req_tlp_last),
    .m_sel(tlp_arb_sel),
    .m_ready(tx_wr_req_tlp_ready)
);

// ---------------------------------------------------------------- on-chip RAMs
localparam RGN_HI = RAM_ADDR_W - SEG_W - 1;
wire [1:0] rd_wr_rgn = rd_ram_wr_addr[RGN_HI:RGN_HI-1];

wire stg_rd_wr = rd_ram_wr_en && rd_wr_rgn == 2'd0;
assign s_cw_ram_wr_ready = !stg_rd_wr;
assign s_rr_ram_wr_ready = ATOMIC_EN != 0 && !stg_rd_wr && !s_cw_ram_wr_en;
wire stg_rr_wr = s_rr_ram_wr_en && s_rr_ram_wr_ready;
assign s_qf_ram_wr_ready = FILL_EN != 0 && !stg_rd_wr && !s_cw_ram_wr_en
    && !(s_rr_ram_wr_en && ATOMIC_EN != 0);
wire stg_qf_wr = s_qf_ram_wr_en && s_qf_ram_wr_ready;

wire [DATA_W-1:0] stg_rd_data;
wire [DATA_W-1:0] rxr_rd_data;
wire [1:0] wr_rd_rgn = wr_ram_rd_addr[RGN_HI:RGN_HI-1];
reg [1:0] wr_rd_rgn_reg = 2'd0;
always @(posedge clk) begin
    if (wr_ram_rd_en) begin
        wr_rd_rgn_reg <= wr_rd_rgn;
    end
end
assign wr_ram_rd_data = wr_rd_rgn_reg == 2'd2 ? rxr_rd_data : stg_rd_data;

/* verilator lint_off UNUSEDSIGNAL */
wire [RAM_ADDR_W-SEG_W-1:0] cw_ram_wr_addr = s_cw_ram_wr_addr;   // always in the staging RAM
wire [RAM_ADDR_W-SEG_W-1:0] rr_ram_wr_addr = s_rr_ram_wr_addr;   // (so is this)
wire [RAM_ADDR_W-1:0] qf_ram_wr_addr = s_qf_ram_wr_addr;         // (and these: the
wire [RAM_ADDR_W-1:0] qf_ram_rd_addr = s_qf_ram_rd_addr;         // fill buffers)
/* verilator lint_on UNUSEDSIGNAL */

// The fill engine's 64-bit words in the staging RAM's DATA_W-bit words:
// a write's strobes pick its bytes, a read's data its quarter (DATA_W 256)
// by the address bits below the RAM word, kept for the data's cycle.
wire stg_wr_rd = wr_ram_rd_en && wr_rd_rgn == 2'd0;
assign s_qf_ram_rd_ready = FILL_EN != 0 && !stg_wr_rd;
wire stg_qf_rd = s_qf_ram_rd_en && s_qf_ram_rd_ready;
wire [DATA_W-1:0] qf_wr_data = {(DATA_W / 64){s_qf_ram_wr_data}};
wire [DATA_W/8-1:0] qf_wr_strb;
generate
    if (DATA_W > 64) begin : g_qf_lanes
        localparam LANE_W = SEG_W - 3;
        reg [LANE_W-1:0] qf_rd_lane_reg = {LANE_W{1'b0}};
        always @(posedge clk) begin
            if (stg_qf_rd) begin
                qf_rd_lane_reg <= qf_ram_rd_addr[SEG_W-1:3];
            end
        end
        assign qf_wr_strb = {{(DATA_W/8-8){1'b0}}, 8'hFF} << {qf_ram_wr_addr[SEG_W-1:3], 3'b000};
        assign s_qf_ram_rd_data = stg_rd_data[qf_rd_lane_reg*64 +: 64];
    end else begin : g_qf_word
        assign qf_wr_strb = {(DATA_W/8){1'b1}};
        assign s_qf_ram_rd_data = stg_rd_data[63:0];
    end
endgenerate

dma_ram #(
    .DATA_W(DATA_W),
    .ADDR_W(STG_ADDR_W - SEG_W)
) stg_ram_inst (
    .clk(clk),
    .wr_addr(stg_rd_wr ? rd_ram_wr_addr[STG_ADDR_W-SEG_W-1:0]
        : stg_rr_wr ? rr_ram_wr_addr[STG_ADDR_W-SEG_W-1:0]
        : stg_qf_wr ? qf_ram_wr_addr[STG_ADDR_W-1:SEG_W] : cw_ram_wr_addr[STG_ADDR_W-SEG_W-1:0]),
    .wr_data(stg_rd_wr ? rd_ram_wr_data : stg_rr_wr ? s_rr_ram_wr_data
        : stg_qf_wr ? qf_wr_data : s_cw_ram_wr_data),
    .wr_strb(stg_rd_wr ? rd_ram_wr_strb : stg_rr_wr ? s_rr_ram_wr_strb
        : stg_qf_wr ? qf_wr_strb : s_cw_ram_wr_strb),
    .wr_en(stg_rd_wr || stg_rr_wr || stg_qf_wr || (s_cw_ram_wr_en && s_cw_ram_wr_ready)),
    .rd_addr(stg_wr_rd ? wr_ram_rd_addr[STG_ADDR_W-SEG_W-1:0] : qf_ram_rd_addr[STG_ADDR_W-1:SEG_W]),
    .rd_en(stg_wr_rd || stg_qf_rd),
    .rd_data(stg_rd_data)
);

wire [DATA_W-1:0] txr_rd_data;
dma_ram #(
    .DATA_W(DATA_W),
    .ADDR_W(TXR_ADDR_W - SEG_W)
) tx_ram_inst (
    .clk(clk),
    .wr_addr(rd_ram_wr_addr[TXR_ADDR_W-SEG_W-1:0]),
    .wr_data(rd_ram_wr_data),
    .wr_strb(rd_ram_wr_strb),
    .wr_en(rd_ram_wr_en && rd_wr_rgn == 2'd1),
    .rd_addr(s_txr_rd_addr[TXR_ADDR_W-SEG_W-1:0]),
    .rd_en(s_txr_rd_en && (READ_EN == 0 || !s_txr_rd_addr[TXP_ADDR_W-SEG_W-1])),
    .rd_data(txr_rd_data)
);

generate
    if (READ_EN != 0) begin : g_reply_ram
        wire [DATA_W-1:0] rrr_rd_data;
        reg rrr_sel_reg = 1'b0;
        always @(posedge clk) begin
            if (s_txr_rd_en) begin
                rrr_sel_reg <= s_txr_rd_addr[TXP_ADDR_W-SEG_W-1];
            end
        end
        dma_ram #(
            .DATA_W(DATA_W),
            .ADDR_W(RRR_ADDR_W - SEG_W)
        ) rr_ram_inst (
            .clk(clk),
            .wr_addr(rd_ram_wr_addr[RRR_ADDR_W-SEG_W-1:0]),
            .wr_data(rd_ram_wr_data),
            .wr_strb(rd_ram_wr_strb),
            .wr_en(rd_ram_wr_en && rd_wr_rgn == 2'd3),
            .rd_addr(s_txr_rd_addr[RRR_ADDR_W-SEG_W-1:0]),
            .rd_en(s_txr_rd_en && s_txr_rd_addr[TXP_ADDR_W-SEG_W-1]),
            .rd_data(rrr_rd_data)
        );
        assign s_txr_rd_data = rrr_sel_reg ? rrr_rd_data : txr_rd_data;
        /* verilator lint_off UNUSEDSIGNAL */
        wire [TXP_ADDR_W-RRR_ADDR_W-2:0] rrr_addr_unused = s_txr_rd_addr[TXP_ADDR_W-SEG_W-2:RRR_ADDR_W-SEG_W];
        /* verilator lint_on UNUSEDSIGNAL */
    end else begin : g_no_reply_ram
        assign s_txr_rd_data = txr_rd_data;
        /* verilator lint_off UNUSEDSIGNAL */
        wire [RAM_ADDR_W+LEN_W+ID_W+64:0] rr_unused = {s_rr_rd_pcie_addr, s_rr_rd_ram_addr, s_rr_rd_len,
            s_rr_rd_id, s_rr_rd_valid};
        /* verilator lint_on UNUSEDSIGNAL */
    end
endgenerate

dma_ram #(
    .DATA_W(DATA_W),
    .ADDR_W(RXR_ADDR_W - SEG_W)
) rx_ram_inst (
    .clk(clk),
    .wr_addr(s_rxr_wr_addr),
    .wr_data(s_rxr_wr_data),
    .wr_strb(s_rxr_wr_strb),
    .wr_en(s_rxr_wr_en),
    .rd_addr(wr_ram_rd_addr[RXR_ADDR_W-SEG_W-1:0]),
    .rd_en(wr_ram_rd_en && wr_rd_rgn == 2'd2),
    .rd_data(rxr_rd_data)
);

endmodule

`resetall
