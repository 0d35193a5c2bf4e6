// Loopback and fault injection between the NIC's transmit/receive streams
// and the Ethernet port, so a lab with one board can run the simulator's
// torture profiles on the FPGA.
//
// Every frame the core transmits passes the fault stage: it is dropped
// with probability cfg_drop_thr / 65536, or held back (reordered behind
// the next frame) with probability cfg_reorder_thr / 65536 when the hold
// buffer is free, else passed. The draw is a 32-bit LFSR (reloaded from
// cfg_seed on cfg_seed_load), one draw per frame, so a run is repeatable
// from its seed. A held frame is sent after the next frame that passes,
// or after HOLD_TIMEOUT cycles without one.
//
// cfg_loopback = 0: the fault stage feeds the port's transmit stream and
// the port's receive stream goes to the core untouched. cfg_loopback = 1:
// the fault stage feeds the core's own receive stream and whatever arrives
// from the port is drained and discarded (counted as frames in).
//
// The hold buffer stores one frame of up to MAX_FRAME bytes; a longer frame
// selected for holding is passed instead. Counters pulse once per frame.

`resetall
`timescale 1ns / 1ps
`default_nettype none

module port_loopback_faults #(
    parameter DATA_W = 64,
    parameter MAX_FRAME = 4224,
    parameter HOLD_TIMEOUT = 4096
) (
    input  wire                  clk,
    input  wire                  rst,

    input  wire                  cfg_loopback,
    input  wire [15:0]           cfg_drop_thr,
    input  wire [15:0]           cfg_reorder_thr,
    input  wire [31:0]           cfg_seed,
    input  wire                  cfg_seed_load,

    // from the core's transmit side
    input  wire [DATA_W-1:0]     s_tx_tdata,
    input  wire [DATA_W/8-1:0]   s_tx_tkeep,
    input  wire                  s_tx_tvalid,
    input  wire                  s_tx_tlast,
    input  wire                  s_tx_tuser,
    output wire                  s_tx_tready,

    // to the port
    output wire [DATA_W-1:0]     m_port_tdata,
    output wire [DATA_W/8-1:0]   m_port_tkeep,
    output wire                  m_port_tvalid,
    output wire                  m_port_tlast,
    output wire                  m_port_tuser,
    input  wire                  m_port_tready,

    // from the port
    input  wire [DATA_W-1:0]     s_port_tdata,
    input  wire [DATA_W/8-1:0]   s_port_tkeep,
    input  wire                  s_port_tvalid,
    input  wire                  s_port_tlast,
    input  wire                  s_port_tuser,
    output wire                  s_port_tready,

    // to the core's receive side
    output wire [DATA_W-1:0]     m_rx_tdata,
    output wire [DATA_W/8-1:0]   m_rx_tkeep,
    output wire                  m_rx_tvalid,
    output wire                  m_rx_tlast,
    output wire                  m_rx_tuser,
    input  wire                  m_rx_tready,

    output wire                  stat_dropped,
    output wire                  stat_reordered
);

localparam KEEP_W = DATA_W / 8;
localparam DEPTH = (MAX_FRAME + KEEP_W - 1) / KEEP_W;
localparam AW = $clog2(DEPTH + 1);
localparam ENTRY_W = DATA_W + KEEP_W + 2;

initial begin
    if (DATA_W < 64 || (DATA_W & (DATA_W - 1)) != 0) begin
        $error("port_loopback_faults: DATA_W must be a power of two >= 64");
        $finish;
    end
    if (HOLD_TIMEOUT < 1 || HOLD_TIMEOUT > 65535) begin
        $error("port_loopback_faults: HOLD_TIMEOUT must be 1..65535");
        $finish;
    end
end

// ------------------------------------------------------------ random draw
reg [31:0] lfsr_reg = 32'h1;
// Galois LFSR, taps 32,22,2,1
wire [31:0] lfsr_next = {1'b0, lfsr_reg[31:1]} ^ (lfsr_reg[0] ? 32'h8020_0003 : 32'd0);

// ------------------------------------------------------------ fault stage
localparam [1:0] M_PASS = 2'd0, M_DROP = 2'd1, M_HOLD = 2'd2;

reg in_frame_reg = 1'b0;
reg [1:0] mode_reg = M_PASS;
reg play_reg = 1'b0;             // the held frame is going out
reg held_reg = 1'b0;             // the hold buffer has a frame
reg passed_since_reg = 1'b0;     // a frame passed since the held one came in
reg [15:0] idle_reg = 16'd0;

reg [ENTRY_W-1:0] hold_mem [0:DEPTH-1];
reg [AW-1:0] wr_ptr_reg = {AW{1'b0}};
reg [AW-1:0] end_reg = {AW{1'b0}};
reg [AW-1:0] rd_ptr_reg = {AW{1'b0}};
reg [ENTRY_W-1:0] rd_data_reg = {ENTRY_W{1'b0}};
reg rd_valid_reg = 1'b0;

wire [15:0] draw_drop = lfsr_reg[15:0];
wire [15:0] draw_hold = lfsr_reg[31:16];
wire [1:0] mode_now = draw_drop < cfg_drop_thr ? M_DROP
    : (draw_hold < cfg_reorder_thr && !held_reg) ? M_HOLD : M_PASS;
wire [1:0] mode = in_frame_reg ? mode_reg : mode_now;
// a frame too long for the buffer is passed (decided beat by beat: the
// part already stored is dropped with it, so it is dropped and counted)
wire [AW-1:0] wr_idx = in_frame_reg ? wr_ptr_reg : {AW{1'b0}};
wire hold_full = wr_idx == DEPTH[AW-1:0];

// the held frame goes out between frames: after the next frame that
// passed, or after HOLD_TIMEOUT idle cycles
wire play_now = held_reg && !play_reg && !in_frame_reg
    && (passed_since_reg || (!s_tx_tvalid && idle_reg >= HOLD_TIMEOUT[15:0]));

// the output of the fault stage
wire f_ready;
wire f_valid = play_reg ? rd_valid_reg : (s_tx_tvalid && mode == M_PASS && !play_now);
wire [DATA_W-1:0] f_data = play_reg ? rd_data_reg[ENTRY_W-1:KEEP_W+2] : s_tx_tdata;
wire [KEEP_W-1:0] f_keep = play_reg ? rd_data_reg[KEEP_W+1:2] : s_tx_tkeep;
wire f_last = play_reg ? rd_data_reg[1] : s_tx_tlast;
wire f_user = play_reg ? rd_data_reg[0] : s_tx_tuser;

assign s_tx_tready = !play_reg && !play_now && (mode == M_PASS ? f_ready : 1'b1);

wire in_beat = s_tx_tvalid && s_tx_tready;

reg stat_dropped_reg = 1'b0;
reg stat_reordered_reg = 1'b0;
assign stat_dropped = stat_dropped_reg;
assign stat_reordered = stat_reordered_reg;

integer k;
initial begin
    for (k = 0; k < DEPTH; k = k + 1) begin
        hold_mem[k] = {ENTRY_W{1'b0}};
    end
end

always @(posedge clk) begin
    stat_dropped_reg <= 1'b0;
    stat_reordered_reg <= 1'b0;
    if (cfg_seed_load) begin
        lfsr_reg <= cfg_seed == 32'd0 ? 32'h1 : cfg_seed;
    end

    if (in_beat) begin
        if (!in_frame_reg) begin
            lfsr_reg <= lfsr_next;
            mode_reg <= mode_now;
        end
        in_frame_reg <= !s_tx_tlast;
        case (mode)
            M_HOLD: begin
                if (!hold_full) begin
                    hold_mem[wr_idx] <= {s_tx_tdata, s_tx_tkeep, s_tx_tlast, s_tx_tuser};
                    wr_ptr_reg <= wr_idx + 1'b1;
                end else begin
                    mode_reg <= M_DROP;      // longer than the buffer: dropped
                end
                if (s_tx_tlast) begin
                    if (!hold_full) begin
                        held_reg <= 1'b1;
                        passed_since_reg <= 1'b0;
                        end_reg <= wr_idx + 1'b1;
                        stat_reordered_reg <= 1'b1;
                    end else begin
                        stat_dropped_reg <= 1'b1;
                    end
                end
            end
            M_DROP: begin
                if (s_tx_tlast) begin
                    stat_dropped_reg <= 1'b1;
                end
            end
            default: begin
                if (s_tx_tlast && held_reg) begin
                    passed_since_reg <= 1'b1;
                end
            end
        endcase
    end

    // the held frame goes out between frames
    idle_reg <= (held_reg && !s_tx_tvalid && idle_reg != 16'hFFFF) ? idle_reg + 16'd1
        : (held_reg ? idle_reg : 16'd0);
    if (play_now) begin
        play_reg <= 1'b1;
        rd_ptr_reg <= {AW{1'b0}};
        rd_valid_reg <= 1'b0;
    end
    if (play_reg) begin
        if (f_ready && rd_valid_reg && rd_data_reg[1]) begin
            // the last beat is out
            play_reg <= 1'b0;
            held_reg <= 1'b0;
            passed_since_reg <= 1'b0;
            idle_reg <= 16'd0;
            rd_valid_reg <= 1'b0;
        end else if ((!rd_valid_reg || f_ready) && rd_ptr_reg != end_reg) begin
            rd_data_reg <= hold_mem[rd_ptr_reg];
            rd_ptr_reg <= rd_ptr_reg + 1'b1;
            rd_valid_reg <= 1'b1;
        end else if (f_ready) begin
            rd_valid_reg <= 1'b0;
        end
    end

    if (rst) begin
        in_frame_reg <= 1'b0;
        mode_reg <= M_PASS;
        play_reg <= 1'b0;
        held_reg <= 1'b0;
        passed_since_reg <= 1'b0;
        idle_reg <= 16'd0;
        rd_valid_reg <= 1'b0;
        lfsr_reg <= 32'h1;
    end
end

// ------------------------------------------------------------ routing
assign m_port_tdata = f_data;
assign m_port_tkeep = f_keep;
assign m_port_tlast = f_last;
assign m_port_tuser = f_user;
assign m_port_tvalid = f_valid && !cfg_loopback;

assign m_rx_tdata = cfg_loopback ? f_data : s_port_tdata;
assign m_rx_tkeep = cfg_loopback ? f_keep : s_port_tkeep;
assign m_rx_tlast = cfg_loopback ? f_last : s_port_tlast;
assign m_rx_tuser = cfg_loopback ? f_user : s_port_tuser;
assign m_rx_tvalid = cfg_loopback ? f_valid : s_port_tvalid;

assign f_ready = cfg_loopback ? m_rx_tready : m_port_tready;
assign s_port_tready = cfg_loopback ? 1'b1 : m_rx_tready;

endmodule

`resetall
