//! Verilator model of `boards/artix7-pcie/rnic_pcie7_shim.v` (the Artix-7
//! PCIE_2_1 TRN shim) driven from Rust, and a test bench around it:
//! [`bench`] plays the hard block's TRN side (a model of the timing the
//! 7-series PCIe user guide describes) and rnic_core's side of the generic
//! TLP interface, and checks what comes out byte for byte.
//!
//! Both TRN widths are built: DATA_W 64 and 128. Without Verilator the crate
//! builds with no model ([`MODEL_AVAILABLE`] is false) and [`Model::new`]
//! fails; the tests then report themselves skipped.
//!
//! # The card datapath model
//!
//! A second model, [`card`], is the Artix-7 card's datapath without the
//! PCIE_2_1 hard block: boards/artix7-pcie/rnic_artix7_datapath.v, the
//! module the card top instantiates, which wires `rnic_pcie7_shim` (64-bit
//! TRN, 125 MHz `pcie_clk`) -> `pcie_clock_crossing` (PCIE_W 64, CORE_W
//! 128) -> `rnic_core` (DATA_W 128, NUM_Q 16, CLK_MHZ 62, 62.5 MHz
//! `core_clk`), with the MAC TX looped to RX through one register stage
//! and one reset source synchronised into each clock. The model drives the
//! TRN side, the configuration and MSI signals, the two clocks and the
//! reset; it holds the flash pins idle and boot slot 0. It is built a second time as the
//! top's CLK_MHZ 125 mode ([`card::Variant::Direct`]: no crossing,
//! `rnic_core` at DATA_W 64 on `pcie_clk`); examples/card_dma_rate.rs
//! measures LOCAL_DMA_COPY rates on both. [`card::Card`] steps it at every
//! rising edge of either clock (an edge mask, both at once when edges
//! coincide; the core clock's phase is a knob), drives TRN with the
//! bench's receive beat builder and a transmit collector with stalls, and
//! plays the host: BAR0 MMIO requests with completion checks
//! ([`card::check_cpl`]) and a host memory that answers the core's DMA
//! ([`card::HostMem`]). tests/card_datapath.rs: ID block reads, write/read
//! back of plain registers under random TRN timing, LOCAL_DMA_COPY work
//! requests end to end. Without hw/rtl/rnic_core.v the crate builds
//! without it ([`card::CARD_MODEL_AVAILABLE`] false; those tests skip).

pub mod bench;
pub mod card;
mod card_params;
mod ffi_model;

/// True when build.rs found Verilator and linked the models.
pub const MODEL_AVAILABLE: bool = cfg!(pcie7_model);

/// Inputs of the shim, one clock cycle. Mirrors `ShimPortsIn` in
/// csrc/shim.cpp. Buses: word i = bits [32i+31:32i]; headers: index = DW.
#[repr(C)]
#[derive(Debug, Default, Clone)]
pub struct PortsIn {
    pub trn_rd: [u32; 4],
    pub tx_cpl_hdr: [u32; 4],
    pub tx_cpl_data: [u32; 4],
    pub tx_rd_req_hdr: [u32; 4],
    pub tx_wr_req_hdr: [u32; 4],
    pub tx_wr_req_data: [u32; 4],
    pub tx_cpl_keep: u32,
    pub tx_wr_req_keep: u32,
    pub cfg_msg_data: u16,
    pub rst: u8,
    pub trn_rrem: u8,
    pub trn_rsof: u8,
    pub trn_reof: u8,
    pub trn_rsrc_rdy: u8,
    pub trn_rbar_hit: u8,
    pub trn_rerrfwd: u8,
    pub trn_rsrc_dsc: u8,
    pub trn_tdst_rdy: u8,
    pub trn_tbuf_av: u8,
    pub trn_tcfg_req: u8,
    pub trn_lnk_up: u8,
    pub cfg_interrupt_rdy: u8,
    pub cfg_interrupt_msienable: u8,
    pub cfg_interrupt_mmenable: u8,
    pub cfg_dev_control_max_payload: u8,
    pub cfg_dev_control_max_read_req: u8,
    pub cfg_msg_received: u8,
    pub rx_req_ready: u8,
    pub rx_cpl_ready: u8,
    pub tx_cpl_valid: u8,
    pub tx_cpl_last: u8,
    pub tx_rd_req_valid: u8,
    pub tx_wr_req_valid: u8,
    pub tx_wr_req_last: u8,
    pub msi_vector: u8,
    pub msi_valid: u8,
}

/// Outputs of the shim, sampled before the rising edge. Mirrors
/// `ShimPortsOut` in csrc/shim.cpp.
#[repr(C)]
#[derive(Debug, Default, Clone)]
pub struct PortsOut {
    pub trn_td: [u32; 4],
    pub rx_req_hdr: [u32; 4],
    pub rx_req_data: [u32; 4],
    pub rx_cpl_hdr: [u32; 4],
    pub rx_cpl_data: [u32; 4],
    pub rx_req_keep: u32,
    pub rx_cpl_keep: u32,
    pub stat_rx_dropped: u32,
    pub stat_rx_malformed: u32,
    pub stat_rx_discontinued: u32,
    pub stat_msi_dropped: u32,
    pub cfg_requester_id: u16,
    pub trn_rdst_rdy: u8,
    pub trn_trem: u8,
    pub trn_tsof: u8,
    pub trn_teof: u8,
    pub trn_tsrc_rdy: u8,
    pub trn_tsrc_dsc: u8,
    pub trn_tstr: u8,
    pub trn_terrfwd: u8,
    pub trn_tecrc_gen: u8,
    pub trn_tcfg_gnt: u8,
    pub cfg_interrupt: u8,
    pub cfg_interrupt_di: u8,
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
    pub sim_flags: u8,
}

type Fns = ffi_model::Fns<PortsIn, PortsOut>;

#[cfg(pcie7_model)]
mod ffi {
    use super::*;
    pub(super) fn fns(data_w: u32) -> Option<Fns> {
        match data_w {
            64 => Some(crate::model_fns!("pcie7_w64_", PortsIn, PortsOut)),
            128 => Some(crate::model_fns!("pcie7_w128_", PortsIn, PortsOut)),
            _ => None,
        }
    }
}

#[cfg(not(pcie7_model))]
mod ffi {
    use super::*;
    pub(super) fn fns(_: u32) -> Option<Fns> {
        None
    }
}

/// One Verilated shim.
pub struct Model {
    m: ffi_model::FfiModel<PortsIn, PortsOut>,
    data_w: u32,
}

impl Model {
    /// A shim with a `data_w`-bit TRN interface (64 or 128). `seed` picks
    /// the random initial register values (`--x-initial unique`).
    pub fn new(data_w: u32, seed: u32) -> Result<Self, String> {
        if !MODEL_AVAILABLE {
            return Err("pcie7-shim-sim was built without Verilator: no model".into());
        }
        let fns = ffi::fns(data_w).ok_or_else(|| format!("no model for DATA_W={data_w}"))?;
        let m = ffi_model::FfiModel::new(fns, seed, "csrc/shim.cpp")?;
        Ok(Self { m, data_w })
    }

    pub fn data_w(&self) -> u32 {
        self.data_w
    }

    /// One clock cycle: apply `i`, return the outputs the rising edge sees.
    pub fn step(&mut self, i: &PortsIn) -> PortsOut {
        self.m.step(i)
    }
}
