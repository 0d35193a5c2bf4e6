//! rnic-sim: the `rnic_core` RTL, Verilated (DATA_W = 64 and 256), driven
//! cycle by cycle from Rust through a PCIe root-complex model, behind the
//! `rnic_device::Device` trait.
//!
//! - [`SimDevice`] / [`SimConfig`]: the device (MMIO, DMA memory, MSI wait),
//!   a handle to one NIC of a [`SimWorld`].
//! - [`SimWorld`] / [`WorldConfig`]: N NICs with separate hosts, stepping in
//!   lockstep, their Ethernet ports joined by a [`Fabric`] (paths, delay,
//!   loss, reorder; named profiles), with pcap capture of the wire.
//! - [`RootComplex`] / [`RootComplexConfig`]: the host side of the TLP
//!   channels: IOMMU, MMIO round trips, DMA read completions, the posted
//!   write queue with PCIe ordering, error and fault records.
//! - [`Model`]: a clocked `rnic_core` ([`VerilatedModel`], or a stand-in).
//!
//! With [`WorldConfig::parallel`] (or `RNIC_SIM_THREADS=1`) a world steps
//! its NICs on worker threads, one per NIC, with the serial world's results.
//!
//! One run = one seed: the root complexes' choices, the fabric's faults and
//! the RTL's `--x-initial unique` register values all derive from the seed.

pub mod device;
pub mod fabric;
pub mod frame;
pub mod holes;
pub mod host_memory;
mod lockstep;
pub mod mac;
mod model_table;
pub mod pcap;
pub mod ports;
pub mod posted_queue;
pub mod read_completer;
pub mod root_complex;
pub mod spi_flash;
pub mod stream_port;
pub mod tlp;
pub mod verilated;
pub mod world;

pub use device::{SimConfig, SimDevice};
pub use fabric::{
    CopyFate, Delivery, Fabric, FabricConfig, FabricStats, Flap, PathConfig, PathHash, PathStats,
    Routing, SendReport, PROFILE_NAMES,
};
pub use holes::HoleStats;
pub use host_memory::{Access, DmaMemory, Iommu, MapError, Mapping};
pub use mac::{MacConfig, MacStats};
pub use pcap::{CaptureFile, CaptureFormat, FrameRing, WireFrame};
pub use ports::{Model, PortsIn, PortsOut};
pub use root_complex::{
    Channel, ChannelStats, FaultReason, IommuFault, ModelError, NoHook, PortHook, RootComplex,
    RootComplexConfig, Stats,
};
pub use spi_flash::{FlashOp, FlashOpKind, FlashStats, FlashTiming, SpiFlash, SpiFlashConfig};
pub use stream_port::{StreamPort, StreamPortStats};
pub use verilated::{ModelKnobs, VerilatedModel, MODEL_WIDTHS, RTL_AVAILABLE};
pub use world::{Parallel, SimWorld, World, WorldConfig};

use std::path::PathBuf;

/// Errors of building or configuring a simulation.
#[derive(Debug, thiserror::Error)]
pub enum SimError {
    #[error(
        "this build of rnic-sim has no RTL model: hw/rtl/rnic_core.v was missing when it was built \
         (add it and rebuild)"
    )]
    NoRtl,
    #[error("no {knobs} model for DATA_W = {data_w} (built: {})", knobs.widths().iter().map(|w| w.to_string()).collect::<Vec<_>>().join(", "))]
    NoModel { data_w: u32, knobs: ModelKnobs },
    #[error("could not open waveform file {0}")]
    Wave(PathBuf),
    #[error("C++ shim mismatch: {0}")]
    Abi(String),
    #[error("unknown fabric profile {name:?}; valid profiles: {valid}")]
    UnknownProfile { name: String, valid: String },
    #[error("bad simulation configuration: {0}")]
    Config(String),
    #[error("pcap: {0}")]
    Pcap(String),
    #[error(transparent)]
    Device(#[from] rnic_device::DeviceError),
}
