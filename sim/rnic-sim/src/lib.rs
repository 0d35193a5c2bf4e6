//! rnic-sim: the `rnic_core` RTL, Verilated (DATA_W = 64 and 256), driven
//! cycle by cycle from Rust through a PCIe root-complex model, behind the
//! `rnic_device::Device` trait.
//!
//! - [`SimDevice`] / [`SimConfig`]: the device (MMIO, DMA memory, MSI wait).
//! - [`RootComplex`] / [`RootComplexConfig`]: the host side of the TLP
//!   channels: IOMMU, MMIO round trips, DMA read completions, the posted
//!   write queue with PCIe ordering, error and fault records.
//! - [`Model`]: a clocked `rnic_core` ([`VerilatedModel`], or a stand-in).
//!
//! One run = one seed: the root complex's choices and the RTL's
//! `--x-initial unique` register values all derive from `SimConfig::seed`.

pub mod device;
pub mod host_memory;
pub mod ports;
pub mod posted_queue;
pub mod read_completer;
pub mod root_complex;
pub mod tlp;
pub mod verilated;

pub use device::{SimConfig, SimDevice};
pub use ports::{Model, PortsIn, PortsOut};
pub use root_complex::{
    Channel, ChannelStats, IommuFault, ModelError, RootComplex, RootComplexConfig, Stats,
};
pub use verilated::{VerilatedModel, MODEL_WIDTHS, RTL_AVAILABLE};

use std::path::PathBuf;

/// Errors of building or configuring a simulation.
#[derive(Debug, thiserror::Error)]
pub enum SimError {
    #[error(
        "this build of rnic-sim has no RTL model: hw/rtl/rnic_core.v was missing when it was built \
         (add it and rebuild)"
    )]
    NoRtl,
    #[error("no model for DATA_W = {0} (built: 64, 256)")]
    DataWidth(u32),
    #[error("could not open waveform file {0}")]
    Wave(PathBuf),
    #[error("C++ shim mismatch: {0}")]
    Abi(String),
    #[error(transparent)]
    Device(#[from] rnic_device::DeviceError),
}
