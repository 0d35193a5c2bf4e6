//! rnic-torture: the data-before-CQE torture test of DESIGN.md section 9.1 and
//! perftest-style benchmarks (`ib_write_bw`, `ib_write_lat`), over two
//! verbs contexts.
//!
//! Everything here is generic over [`rnic_device::Device`], so the same code
//! runs on two simulated NICs or on two boards cabled back to back:
//!
//! - [`conn`]: connect RC queue pairs between two contexts;
//! - [`torture`]: the torture test ([`torture::run`], [`Config`], [`Report`]);
//! - [`perf`]: `write_bw` and `write_lat`, in cycles of [`Device::now`];
//! - [`fuzz`] (feature `sim`): the responder fuzz campaign;
//! - [`sim`] (feature `sim`, on by default): a 2-NIC
//!   [`rnic_sim::SimWorld`] joined by a named fabric, with hooks that drain
//!   the world, capture the wire around the first failure and write
//!   waveforms.
//!
//! [`Device::now`]: rnic_device::Device::now

pub mod conn;
#[cfg(feature = "sim")]
pub mod fuzz;
pub mod pattern;
pub mod perf;
#[cfg(feature = "sim")]
pub mod sim;
pub mod torture;

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

pub use conn::PortAddr;
pub use torture::{Config, Failure, Hooks, NoHooks, Report, RunInfo};

/// Errors of setting up or running a test (not its findings: those are
/// counted in the [`Report`]).
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Bad parameters; one line, for the user.
    #[error("{0}")]
    Config(String),
    #[error(transparent)]
    Verbs(#[from] rnic_verbs::VerbsError),
    #[error(transparent)]
    Device(#[from] rnic_device::DeviceError),
    #[cfg(feature = "sim")]
    #[error(transparent)]
    Sim(#[from] rnic_sim::SimError),
}

pub type Result<T> = std::result::Result<T, Error>;

/// The barrier debug switches (`dma.debug`): each breaks one layer of the
/// ordering contract on purpose.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Break {
    /// CQE writes carry Relaxed Ordering (and skip the flush read).
    CqeRo,
    /// The responder asks for the WRITE_WITH_IMM's CQE before its payload.
    EarlyCqe,
    /// CQEs bypass the payload write queue.
    Bypass,
}

impl Break {
    pub const ALL: [Break; 3] = [Break::CqeRo, Break::EarlyCqe, Break::Bypass];

    pub fn name(self) -> &'static str {
        match self {
            Break::CqeRo => "cqe-ro",
            Break::EarlyCqe => "early-cqe",
            Break::Bypass => "bypass",
        }
    }
}

impl fmt::Display for Break {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Break {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        Break::ALL
            .into_iter()
            .find(|b| b.name() == s)
            .ok_or_else(|| {
                Error::Config(format!(
                    "unknown break switch {s:?} (cqe-ro, early-cqe, bypass)"
                ))
            })
    }
}

/// Path MTU from bytes (256..4096, a power of two).
pub fn mtu_from_bytes(n: u32) -> Result<rnic_verbs::Mtu> {
    use rnic_verbs::Mtu;
    Ok(match n {
        256 => Mtu::Mtu256,
        512 => Mtu::Mtu512,
        1024 => Mtu::Mtu1024,
        2048 => Mtu::Mtu2048,
        4096 => Mtu::Mtu4096,
        _ => {
            return Err(Error::Config(format!(
                "--mtu {n}: must be 256, 512, 1024, 2048 or 4096"
            )))
        }
    })
}
