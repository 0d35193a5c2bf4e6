//! The `rnic_core` ports as the root-complex model sees them, and the
//! [`Model`] trait a clocked implementation of them provides (the Verilated
//! RTL, or a scripted stand-in in tests).
//!
//! The structs are `#[repr(C)]` mirrors of `RnicPortsIn` / `RnicPortsOut` in
//! csrc/shim.cpp. Headers are `[u32; 4]` indexed by DW number (`[0]` = DW0 =
//! bits 127:96); payload buses are `[u32; 16]` with word `i` = bits
//! `32i+31:32i` (so 64..512-bit buses fit); keep has one bit per dword.

/// Inputs of `rnic_core` (driven by the root complex).
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PortsIn {
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
}

/// Outputs of `rnic_core` (sampled by the root complex).
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PortsOut {
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
    /// Not a port: bit 0 = the RTL executed `$finish`, bit 1 = `$stop`,
    /// `$error` or `$fatal` (sticky; a stand-in model leaves it 0).
    pub sim_flags: u8,
}

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
