//! Interoperability with an independent RoCEv2 peer: Linux's soft-RoCE
//! driver (`rdma_rxe`) with rdma-core and perftest, in a QEMU guest whose
//! RoCE port is attached to the simulator's fabric.
//!
//! - [`guest`]: boot the guest (image from `sim/rxe-guest/build-image.sh`),
//!   run commands in it.
//! - [`rnic_side`]: the simulated NIC with one QP, the guest's NIC on the
//!   other end of the fabric.
//! - [`pingpong`] / [`pingpong_run`]: `ibv_rc_pingpong`'s exchange and data
//!   phase, rnic in either role.
//! - [`imm_run`]: WRITE and WRITE_WITH_IMM against a pyverbs script in the
//!   guest, data checked at completion time on both sides.
//! - [`read_run`]: RDMA READ by a pyverbs script in the guest from rnic's
//!   region (rnic the responder), every byte checked, the wire tallied.
//! - [`read_client`]: RDMA READ by rnic from the pyverbs script's region
//!   (rnic the reader, rxe serving), every byte and the guards around each
//!   destination checked, the wire tallied and checked.
//! - [`perftest`]: perftest's TCP control channel, rnic in either role.
//! - [`atomic_run`]: `ib_atomic_bw` with rnic as the server: its region's
//!   operands, the wire (every ATOMIC ACKNOWLEDGE's original value) and the
//!   counters checked.
//! - [`atomic_client`]: `ib_atomic_bw` with rnic as the client: its
//!   atomics on the wire, the original value placed for each by its
//!   completion, each operand's values in sequence, the counters.
//! - [`vm`]: the full system: simulated NICs as the guest's PCI functions
//!   (vfio-user) and `rnic` run inside the guest (`rnic vm`).

use std::time::Duration;

pub mod atomic_client;
pub mod atomic_run;
pub mod guest;
pub mod imm_run;
pub mod perftest;
pub mod perftest_run;
pub mod pingpong;
pub mod pingpong_run;
pub mod read_client;
pub mod read_run;
pub mod rnic_side;
pub mod suite;
pub mod vm;

pub use guest::{Guest, GuestConfig, GuestError};
pub use rnic_side::{Rnic, RnicOpts};

/// Everything that can end an interop run.
#[derive(Debug, thiserror::Error)]
pub enum InteropError {
    #[error(transparent)]
    Guest(#[from] GuestError),
    #[error(transparent)]
    PingPong(#[from] pingpong::PingPongError),
    #[error(transparent)]
    Perftest(#[from] perftest::PerftestError),
    #[error(transparent)]
    Setup(#[from] rnic_harness::Error),
    #[error(transparent)]
    Verbs(#[from] rnic_verbs::VerbsError),
    #[error(transparent)]
    Sim(#[from] rnic_sim::SimError),
    #[error("{0}")]
    Io(#[from] std::io::Error),
    /// The run's finding: what went wrong, for the user.
    #[error("{0}")]
    Failed(String),
}

pub type Result<T, E = InteropError> = std::result::Result<T, E>;

/// rnic's role in a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Role {
    /// rnic sends (the guest's program is the server / receiver).
    Requester,
    /// rnic receives (the guest's program is the client / sender).
    Responder,
}

/// rxe counters that mean trouble when they move on a clean link.
pub const RXE_ERROR_COUNTERS: [&str; 9] = [
    "duplicate_request",
    "out_of_seq_request",
    "rcvd_seq_err",
    "rcvd_rnr_err",
    "retry_exceeded_err",
    "retry_rnr_exceeded_err",
    "completer_retry_err",
    "send_err",
    "link_downed",
];

/// What one run did.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Report {
    pub test: String,
    pub rnic_role: Role,
    pub fabric: String,
    pub mtu: u32,
    /// Messages rnic sent and received.
    pub messages_sent: u64,
    pub messages_received: u64,
    /// Payload bytes rnic sent, and bytes rnic received and checked.
    pub bytes_sent: u64,
    pub bytes_checked: u64,
    /// Frames across the link (rnic to guest, guest to rnic), frames the
    /// fabric dropped.
    pub frames_to_guest: u64,
    pub frames_from_guest: u64,
    pub frames_dropped: u64,
    /// rnic's requester recoveries and its drops of the guest's frames.
    pub rnic_retransmits: u32,
    pub rnic_timeouts: u32,
    pub rnic_seq_naks_received: u32,
    pub rnic_error_naks_sent: u32,
    pub rnic_rx_dropped: u32,
    /// The same by reason: bad ICRC, malformed or not for rnic (the
    /// guest's IPv6 neighbour discovery and the like land here), unknown
    /// QP, PSN out of sequence or duplicate (re-ACKed, not executed).
    pub rnic_rx_drop_icrc: u32,
    pub rnic_rx_drop_malformed: u32,
    pub rnic_rx_drop_qp: u32,
    pub rnic_rx_drop_psn: u32,
    /// rnic's READ counters: requests it accepted and served (duplicates
    /// answered again too), READ RESPONSE packets it sent.
    pub rnic_read_requests: u32,
    pub rnic_read_responses: u32,
    /// rnic's atomic counters: atomics executed, duplicates answered from
    /// the replay record (port.rx_atomic, port.rx_atomic_replay).
    pub rnic_atomics: u32,
    pub rnic_atomic_replays: u32,
    /// What rxe0's counters moved by during the run (non-zero changes).
    pub rxe_counters: std::collections::BTreeMap<String, u64>,
    pub cycles: u64,
    pub wall_secs: f64,
    /// The guest program's output.
    pub guest_output: String,
    /// Anything the run had to tolerate, said plainly.
    pub note: Option<String>,
    /// The READ runs: READs, bytes, re-requests and responses on the wire.
    pub read: Option<read_run::ReadTally>,
    /// The atomic runs with rnic as the server: atomics, answers and
    /// operands checked.
    pub atomic: Option<atomic_run::AtomicTally>,
    /// The atomic runs with rnic as the client: its atomics, the values
    /// placed and checked.
    pub atomic_client: Option<atomic_client::AtomicClientTally>,
}

impl Report {
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn collect(
        test: &str,
        role: Role,
        rnic: &Rnic,
        mtu: u32,
        sent: u64,
        received: u64,
        bytes_sent: u64,
        bytes_checked: u64,
        guest_output: String,
        wall: Duration,
    ) -> Self {
        let c = rnic.counters().unwrap_or_default();
        let l = rnic.link_stats();
        let f = rnic.fabric_stats();
        Self {
            test: test.to_string(),
            rnic_role: role,
            fabric: rnic.opts.fabric.clone(),
            mtu,
            messages_sent: sent,
            messages_received: received,
            bytes_sent,
            bytes_checked,
            frames_to_guest: l.frames_out,
            frames_from_guest: l.frames_in,
            frames_dropped: f.total.dropped,
            rnic_retransmits: c.tx_retransmits,
            rnic_timeouts: c.rtx_timeouts,
            rnic_seq_naks_received: c.rx_nak_seq,
            rnic_error_naks_sent: c.rx_nak,
            rnic_rx_dropped: c.rx_drop_icrc
                + c.rx_drop_malformed
                + c.rx_drop_nobuf
                + c.rx_drop_qp
                + c.rx_drop_psn,
            rxe_counters: Default::default(),
            rnic_rx_drop_icrc: c.rx_drop_icrc,
            rnic_rx_drop_malformed: c.rx_drop_malformed,
            rnic_rx_drop_qp: c.rx_drop_qp,
            rnic_rx_drop_psn: c.rx_drop_psn,
            rnic_read_requests: c.rx_read_req,
            rnic_read_responses: c.tx_read_resp,
            rnic_atomics: c.rx_atomic,
            rnic_atomic_replays: c.rx_atomic_replay,
            cycles: rnic.world.now(),
            wall_secs: wall.as_secs_f64(),
            guest_output,
            note: None,
            read: None,
            atomic: None,
            atomic_client: None,
        }
    }
}
