//! The `rnic_core` ports as the root-complex model sees them, and the
//! [`Model`] trait a clocked implementation of them provides (the Verilated
//! RTL, or a scripted stand-in in tests).
//!
//! The structs are `#[repr(C)]` mirrors of `RnicPortsIn` / `RnicPortsOut` in
//! csrc/shim.cpp. Headers are `[u32; 4]` indexed by DW number (`[0]` = DW0 =
//! bits 127:96); payload buses are `[u32; 16]` with word `i` = bits
//! `32i+31:32i` (so 64..512-bit buses fit); keep has one bit per dword.
//!
//! The Ethernet AXI-Stream ports (`s_axis_rx_*` into the NIC, `m_axis_tx_*`
//! out of it) are byte lanes: `tdata[i]` = bus bits `8i+7:8i` (byte `i` of
//! the beat, the earlier byte on the wire first), `tkeep` bit `i` = byte `i`
//! valid; up to 64 bytes (DATA_W 512). Frames carry no FCS; `tuser` on the
//! last beat marks a bad frame. The Verilated model copies `tdata`/`tkeep`
//! across only while `tvalid` is high (they are stale otherwise).

/// Inputs of `rnic_core` (driven by the root complex).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PortsIn {
    pub s_axis_rx_tkeep: u64,
    pub rx_req_hdr: [u32; 4],
    pub rx_req_data: [u32; 16],
    pub rx_cpl_hdr: [u32; 4],
    pub rx_cpl_data: [u32; 16],
    pub rx_req_keep: u32,
    pub rx_cpl_keep: u32,
    pub cfg_requester_id: u16,
    pub rst: u8,
    pub rx_req_valid: u8,
    pub rx_req_last: u8,
    pub rx_cpl_valid: u8,
    pub rx_cpl_last: u8,
    pub tx_cpl_ready: u8,
    pub tx_rd_req_ready: u8,
    pub tx_wr_req_ready: u8,
    pub msi_ready: u8,
    pub cfg_max_payload: u8,
    pub cfg_max_read_req: u8,
    pub s_axis_rx_tdata: [u8; 64],
    pub s_axis_rx_tvalid: u8,
    pub s_axis_rx_tlast: u8,
    pub s_axis_rx_tuser: u8,
    pub m_axis_tx_tready: u8,
    /// Configuration flash: IO3..IO0 as the pads see them (bits 3:0).
    pub flash_io_i: u8,
    /// Slot the configuration logic booted (0 golden, 1 update).
    pub boot_slot: u8,
    /// The selected slot was invalid and golden booted instead.
    pub boot_fallback: u8,
}

/// Outputs of `rnic_core` (sampled by the root complex).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PortsOut {
    pub m_axis_tx_tkeep: u64,
    pub tx_cpl_hdr: [u32; 4],
    pub tx_cpl_data: [u32; 16],
    pub tx_rd_req_hdr: [u32; 4],
    pub tx_wr_req_hdr: [u32; 4],
    pub tx_wr_req_data: [u32; 16],
    pub tx_cpl_keep: u32,
    pub tx_wr_req_keep: u32,
    pub rx_req_ready: u8,
    pub tx_cpl_valid: u8,
    pub tx_cpl_last: u8,
    pub tx_rd_req_valid: u8,
    pub rx_cpl_ready: u8,
    pub tx_wr_req_valid: u8,
    pub tx_wr_req_last: u8,
    pub msi_valid: u8,
    pub msi_vector: u8,
    pub m_axis_tx_tdata: [u8; 64],
    pub m_axis_tx_tvalid: u8,
    pub m_axis_tx_tlast: u8,
    pub m_axis_tx_tuser: u8,
    pub s_axis_rx_tready: u8,
    /// Not a port: bit 0 = the RTL executed `$finish`, bit 1 = `$stop`,
    /// `$error` or `$fatal` (sticky; a stand-in model leaves it 0).
    pub sim_flags: u8,
    /// Configuration flash pins (IO bits 3:0 = IO3..IO0, `oe` 1 = driven
    /// by the NIC).
    pub flash_sck: u8,
    pub flash_cs_n: u8,
    pub flash_io_o: u8,
    pub flash_io_oe: u8,
    /// Pulse: reconfigure the FPGA from flash.
    pub reconfig_req: u8,
}

// `Default` by hand: arrays of 64 bytes have no derived `Default`.
impl Default for PortsIn {
    fn default() -> Self {
        // SAFETY: every field is an integer or an array of integers, for
        // which all-zero bytes are a valid value.
        unsafe { std::mem::zeroed() }
    }
}

impl Default for PortsOut {
    fn default() -> Self {
        // SAFETY: as for `PortsIn`.
        unsafe { std::mem::zeroed() }
    }
}

/// Field offsets checked against the C++ shim (same order as
/// `RNIC_PFX(port_offsets)` in csrc/shim.cpp).
pub(crate) const PORT_OFFSETS: [usize; 15] = [
    std::mem::offset_of!(PortsIn, s_axis_rx_tkeep),
    std::mem::offset_of!(PortsIn, rx_req_hdr),
    std::mem::offset_of!(PortsIn, cfg_requester_id),
    std::mem::offset_of!(PortsIn, cfg_max_read_req),
    std::mem::offset_of!(PortsIn, s_axis_rx_tdata),
    std::mem::offset_of!(PortsIn, m_axis_tx_tready),
    std::mem::offset_of!(PortsOut, m_axis_tx_tkeep),
    std::mem::offset_of!(PortsOut, tx_cpl_hdr),
    std::mem::offset_of!(PortsOut, msi_vector),
    std::mem::offset_of!(PortsOut, m_axis_tx_tdata),
    std::mem::offset_of!(PortsOut, s_axis_rx_tready),
    std::mem::offset_of!(PortsOut, sim_flags),
    std::mem::offset_of!(PortsIn, flash_io_i),
    std::mem::offset_of!(PortsOut, flash_sck),
    std::mem::offset_of!(PortsOut, reconfig_req),
];

/// A clocked `rnic_core`.
///
/// `step` is one clock cycle: apply `inp`, let combinational logic settle,
/// write the outputs as they are just *before* the rising edge into `out`
/// (these are what the edge samples, so a handshake is `valid && ready` of
/// `inp`/`out` of the same step), then clock the rising edge.
pub trait Model {
    /// Width of the payload buses in bits (64, 128, 256 or 512).
    fn data_w(&self) -> u32;
    fn step(&mut self, inp: &PortsIn, out: &mut PortsOut);
}

impl<M: Model + ?Sized> Model for Box<M> {
    fn data_w(&self) -> u32 {
        (**self).data_w()
    }
    fn step(&mut self, inp: &PortsIn, out: &mut PortsOut) {
        (**self).step(inp, out)
    }
}
