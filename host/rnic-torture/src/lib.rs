//! rnic-torture: the data-before-CQE torture test of DESIGN.md section 9.1 and
//! perftest-style benchmarks (`ib_write_bw`, `ib_write_lat`), over two
//! verbs contexts.
//!
//! Everything here is generic over [`rnic_device::Device`], so the same code
//! runs on two simulated NICs or on two boards cabled back to back. The
//! connections and byte patterns come from the one harness, `rnic-harness`.
//!
//! - [`torture`]: the torture test ([`torture::run`], [`Config`], [`Report`]);
//! - [`local_copy`]: the same check on one NIC without the network (DMA
//!   copy work requests);
//! - [`perf`]: `write_bw` and `write_lat`, in cycles of [`Device::now`];
//! - [`qp_scale`]: throughput and message rate against the number of
//!   active QPs (`rnic bench qp-scale`);
//! - [`fuzz`] (feature `sim`): the responder fuzz campaign;
//! - [`sim`] (feature `sim`, on by default): a 2-NIC
//!   [`rnic_sim::SimWorld`] joined by a named fabric, with hooks that drain
//!   the world, capture the wire around the first failure and write
//!   waveforms.
//!
//! [`Device::now`]: rnic_device::Device::now

#[cfg(feature = "sim")]
pub mod fuzz;
pub mod local_copy;
pub mod perf;
pub mod qp_scale;
#[cfg(feature = "sim")]
pub mod sim;
pub mod torture;

pub use rnic_driver::Break;
pub use rnic_harness::{Error, PortAddr, Result};
pub use torture::{
    CacheSide, Completions, Config, EventStats, Failure, Hooks, NoHooks, QpCacheStats, Report,
    RunInfo,
};
