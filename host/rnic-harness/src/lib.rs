//! rnic-harness: the one test harness of rnic. Everything that sets up
//! traffic between verbs contexts lives here once, and the end-to-end
//! tests, the torture test, the benchmarks, the fuzz campaign and the
//! soft-RoCE interop runs all use it:
//!
//! - [`conn`]: port addresses, connection options, moving QPs through
//!   INIT/RTR/RTS towards a peer, and connected QP pairs with their PDs,
//!   CQs, buffers and memory regions;
//! - [`pattern`]: the seeded generator and the per-message byte patterns
//!   that tell stale, misplaced and corrupt bytes apart;
//! - [`poll`]: waiting for completions while the device advances;
//! - `sim` (feature `sim`): two simulated NICs of one world, ready to
//!   connect.
//!
//! Everything but `sim` is generic over [`rnic_device::Device`], so the same
//! code runs against the simulator and against boards.

pub mod conn;
pub mod pattern;
pub mod poll;
#[cfg(feature = "sim")]
pub mod sim;

pub use conn::{ConnOpts, End, EndOpts, PortAddr, Remote, Retry, DEFAULT_ADDRS};

/// Errors of setting up traffic (bad options, or the device or verbs
/// refusing a step).
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Bad parameters; one line, for the user.
    #[error("{0}")]
    Config(String),
    #[error(transparent)]
    Verbs(#[from] rnic_verbs::VerbsError),
    #[error(transparent)]
    Driver(#[from] rnic_driver::DriverError),
    #[error(transparent)]
    Device(#[from] rnic_device::DeviceError),
    #[cfg(feature = "sim")]
    #[error(transparent)]
    Sim(#[from] rnic_sim::SimError),
}

pub type Result<T> = std::result::Result<T, Error>;

/// Path MTU from bytes (256..4096, a power of two), with the error a user
/// of `--mtu` sees.
pub fn mtu_from_bytes(n: u32) -> Result<rnic_verbs::Mtu> {
    rnic_verbs::Mtu::from_bytes(n)
        .ok_or_else(|| Error::Config(format!("--mtu {n}: must be 256, 512, 1024, 2048 or 4096")))
}
