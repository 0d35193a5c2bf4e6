//! Torture campaigns (`rnic campaign`): many independent torture runs,
//! each a seed with a set of `rnic torture` flags, spread over the cores of
//! one machine or the tasks of a Slurm job array.
//!
//! A campaign lives in one directory:
//! - `campaign.json`: the [`Plan`] (legs of seeds and flags, the number of
//!   array tasks);
//! - `results/*.jsonl`: one [`RunRecord`] per finished run, a file per
//!   writer (a Slurm task or a local run), appended a line at a time so a
//!   campaign cut short loses at most the runs in progress;
//! - `pcap/`: the frames before each failure;
//! - `rnic-campaign.sbatch`: the job script for `sbatch` ([`slurm`]).
//!
//! This crate holds the parts with no processes in them (the plan, its
//! slices, the records, the merge), so they are tested on their own; the
//! `rnic` command line runs the torture processes.

pub mod plan;
pub mod results;
pub mod slurm;
pub mod summary;

pub use plan::{Leg, Plan, RunKey, SeedRange};
pub use results::{RunRecord, Status};
pub use summary::Summary;

/// What can go wrong with a campaign's files.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("{0}")]
    Invalid(String),
    #[error("{path}: {source}")]
    Io {
        path: std::path::PathBuf,
        source: std::io::Error,
    },
    #[error("{path}: {source}")]
    Json {
        path: std::path::PathBuf,
        source: serde_json::Error,
    },
}

pub type Result<T> = std::result::Result<T, Error>;

pub(crate) fn io_err(path: &std::path::Path) -> impl FnOnce(std::io::Error) -> Error + '_ {
    move |source| Error::Io {
        path: path.to_path_buf(),
        source,
    }
}
