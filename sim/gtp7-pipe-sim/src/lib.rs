//! Verilator model of the Artix-7 GTP PCIe PHY (`boards/artix7-pcie/
//! rnic_gtp7_pipe.v` with its lane and reset modules) inside a test bench
//! (`rtl/tb_gtp7.v`) whose GTPE2_COMMON / GTPE2_CHANNEL are this crate's
//! *behavioural models* (`rtl/GTPE2_*.v`), written after UG482 for this
//! test: what passes here is the PHY against that model, not against the
//! silicon or the vendor's simulation model.
//!
//! One [`Model::tick`] is one 125 MHz PIPE clock cycle; inside it the bench
//! also runs the 2.5 Gb/s serial bit clock (20 ticks) and the link partner's
//! bit clock (rate set by [`PortsIn::far_half`]). Without Verilator the
//! crate builds with no model ([`MODEL_AVAILABLE`] is false) and
//! [`Model::new`] fails; the tests then report themselves skipped.

use std::ffi::c_void;

/// True when build.rs found Verilator and linked the model.
pub const MODEL_AVAILABLE: bool = cfg!(gtp7_model);

/// Receive-pin source of a lane in the bench (`lane_mode` in tb_gtp7.v).
pub mod lane_mode {
    /// The lane's own transmit pins (loopback through the model).
    pub const LOOPBACK: u8 = 0;
    /// The link-partner generator (COM SKP SKP SKP, then counting data).
    pub const PARTNER: u8 = 1;
    /// No link partner: no receiver termination.
    pub const ABSENT: u8 = 2;
    /// A link partner in electrical idle.
    pub const IDLE: u8 = 3;
}

/// PIPE power states (PIPETXnPOWERDOWN).
pub mod power {
    pub const P0: u8 = 0;
    pub const P0S: u8 = 1;
    pub const P1: u8 = 2;
    pub const P2: u8 = 3;
}

/// Inputs of the bench for one PIPE cycle. Mirrors `GtpPortsIn` in
/// csrc/tb.cpp. Per-lane masks: bit n = lane n.
#[repr(C)]
#[derive(Debug, Default, Clone)]
pub struct PortsIn {
    pub tx_data: [u16; 4],
    /// Half period of the link partner's bit clock in bench time units
    /// (1000 = the local rate; 995 = 0.5 % faster; 0 = 1000).
    pub far_half: u32,
    pub tx_charisk: [u8; 4],
    pub tx_powerdown: [u8; 4],
    pub lane_mode: [u8; 4],
    pub rst: u8,
    pub far_en: u8,
    pub tx_elecidle: u8,
    pub tx_compliance: u8,
    pub tx_rcvrdet: u8,
    pub tx_rate: u8,
    pub rx_polarity: u8,
    pub pad: u8,
}

/// Outputs of the bench, sampled at the end of the cycle. Mirrors
/// `GtpPortsOut` in csrc/tb.cpp.
#[repr(C)]
#[derive(Debug, Default, Clone)]
pub struct PortsOut {
    pub rx_data: [u16; 4],
    pub rx_charisk: [u8; 4],
    pub rx_status: [u8; 4],
    pub rx_valid: u8,
    pub rx_phystatus: u8,
    pub rx_elecidle: u8,
    pub rx_chanisaligned: u8,
    pub phy_ready: u8,
    pub pll_lock: u8,
    pub reset_state: u8,
    pub reset_restarts: u8,
    pub rate_error: u8,
    /// The PHY's PLL0RESET.
    pub pll_reset: u8,
    /// The PHY's GTTXRESET / GTRXRESET.
    pub gt_txreset: u8,
    pub gt_rxreset: u8,
    /// The PHY's TXUSERRDY/RXUSERRDY.
    pub user_rdy: u8,
    /// TXRESETDONE / RXRESETDONE of the four channels.
    pub tx_resetdone: u8,
    pub rx_resetdone: u8,
    /// The model's sticky protocol-violation flags, per lane.
    pub viol_early_reset: u8,
    pub viol_txbuf: u8,
    pub viol_rxpd: u8,
    pub viol_detect_p0: u8,
    /// TXCHARDISPMODE[0] of each channel.
    pub gt_txchardispmode0: u8,
    /// RXVALID of each channel (before the PHY's filter).
    pub gt_rxvalid: u8,
    /// Bit 0: $finish, bit 1: an error ($error / $stop) in the model.
    pub flags: u8,
    pub pad: [u8; 2],
}

#[cfg(gtp7_model)]
mod ffi {
    use super::*;
    extern "C" {
        pub fn gtp7_in_size() -> usize;
        pub fn gtp7_out_size() -> usize;
        pub fn gtp7_new(seed: u32) -> *mut c_void;
        pub fn gtp7_free(p: *mut c_void);
        pub fn gtp7_tick(p: *mut c_void, i: *const PortsIn, o: *mut PortsOut);
    }
}

#[cfg(not(gtp7_model))]
mod ffi {
    //! Without a model nothing here is reached: `Model::new` fails first.
    use super::*;
    pub unsafe fn gtp7_in_size() -> usize {
        unreachable!()
    }
    pub unsafe fn gtp7_out_size() -> usize {
        unreachable!()
    }
    pub unsafe fn gtp7_new(_: u32) -> *mut c_void {
        unreachable!()
    }
    pub unsafe fn gtp7_free(_: *mut c_void) {
        unreachable!()
    }
    pub unsafe fn gtp7_tick(_: *mut c_void, _: *const PortsIn, _: *mut PortsOut) {
        unreachable!()
    }
}
use ffi::*;

/// One simulated PHY and bench.
pub struct Model {
    ptr: *mut c_void,
    cycle: u64,
}

impl Model {
    /// A new bench; registers start from values drawn from `seed`.
    pub fn new(seed: u32) -> Result<Self, String> {
        if !MODEL_AVAILABLE {
            return Err("gtp7-pipe-sim was built without Verilator".into());
        }
        // SAFETY: plain size queries of the linked C shim.
        let (i, o) = unsafe { (gtp7_in_size(), gtp7_out_size()) };
        if i != std::mem::size_of::<PortsIn>() || o != std::mem::size_of::<PortsOut>() {
            return Err(format!(
                "port struct size mismatch: C {i}/{o}, Rust {}/{}",
                std::mem::size_of::<PortsIn>(),
                std::mem::size_of::<PortsOut>()
            ));
        }
        // SAFETY: gtp7_new returns an owned model freed in Drop.
        let ptr = unsafe { gtp7_new(seed) };
        Ok(Self { ptr, cycle: 0 })
    }

    /// Runs one PIPE clock cycle with `inp` applied from its rising edge.
    pub fn tick(&mut self, inp: &PortsIn) -> PortsOut {
        let mut out = PortsOut::default();
        // SAFETY: ptr is a live model; the structs match the C layout
        // (sizes checked in new).
        unsafe { gtp7_tick(self.ptr, inp, &mut out) };
        self.cycle += 1;
        out
    }

    /// PIPE cycles run so far.
    pub fn cycle(&self) -> u64 {
        self.cycle
    }
}

impl Drop for Model {
    fn drop(&mut self) {
        // SAFETY: ptr came from gtp7_new and is freed once.
        unsafe { gtp7_free(self.ptr) };
    }
}
