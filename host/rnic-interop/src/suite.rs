//! One guest, many runs: each run builds a fresh simulated NIC (its own
//! world, fabric profile and seed), attaches the guest's link to it, runs one
//! test in one role, and hands the link back.

use std::path::PathBuf;
use std::time::Duration;

use crate::guest::Guest;
use crate::imm_run::{self, ImmOpts};
use crate::pingpong_run::{self, PingPongOpts};
use crate::read_client;
use crate::read_run::{self, ReadOpts};
use crate::{perftest_run, InteropError, Report, Result, Rnic, RnicOpts, Role};

/// The tests.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Test {
    /// `ibv_rc_pingpong`: SEND/RECV, every byte checked by rnic.
    PingPong,
    /// WRITE + WRITE_WITH_IMM with `imm_peer.py`: data checked at
    /// completion on the receiving side.
    WriteImm,
    /// perftest `ib_write_bw`.
    WriteBw,
    /// perftest `ib_send_lat`.
    SendLat,
    /// RDMA READ with `read_peer.py`, roles as in `ib_read_bw`: rnic the
    /// responder, the guest reads rnic's region ([`crate::read_run`]);
    /// rnic the requester, rnic reads the guest's ([`crate::read_client`]).
    /// Every byte checked by the reader and on the wire.
    Read,
    /// perftest `ib_read_bw`, both roles.
    ReadBw,
    /// perftest `ib_read_lat`, both roles.
    ReadLat,
    /// perftest `ib_atomic_bw` (FETCH_AND_ADD, its default), both roles:
    /// rnic the server (responder), every answer, the counters and the
    /// operands checked by rnic ([`crate::atomic_run`]); rnic the client
    /// (requester), its atomics on the wire, the original value placed for
    /// each and each operand's values in sequence
    /// ([`crate::atomic_client`]).
    AtomicBw,
    /// perftest `ib_atomic_bw -A CMP_AND_SWAP`, likewise.
    AtomicBwCas,
}

impl Test {
    pub const ALL: [Test; 9] = [
        Test::PingPong,
        Test::WriteImm,
        Test::WriteBw,
        Test::SendLat,
        Test::Read,
        Test::ReadBw,
        Test::ReadLat,
        Test::AtomicBw,
        Test::AtomicBwCas,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Test::PingPong => "pingpong",
            Test::WriteImm => "write-imm",
            Test::WriteBw => "write-bw",
            Test::SendLat => "send-lat",
            Test::Read => "read",
            Test::ReadBw => "read-bw",
            Test::ReadLat => "read-lat",
            Test::AtomicBw => "atomic-bw",
            Test::AtomicBwCas => "atomic-bw-cas",
        }
    }

    /// Whether rnic can play `role` in this test (see
    /// [`Test::unsupported`]).
    pub fn supports(self, role: Role) -> bool {
        self.unsupported(role).is_none()
    }

    /// Why rnic cannot play `role` in this test, if it cannot. Every test
    /// runs in both roles now (`read` since rnic reads as a requester); the
    /// hook stays for a test that cannot.
    pub fn unsupported(self, role: Role) -> Option<&'static str> {
        let _ = (self, role);
        None
    }

    /// The `ib_atomic_bw` tests.
    pub fn is_atomic(self) -> bool {
        matches!(self, Test::AtomicBw | Test::AtomicBwCas)
    }

    pub fn from_name(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|t| t.name() == s)
    }
}

/// One run.
#[derive(Debug, Clone)]
pub struct RunSpec {
    pub test: Test,
    pub role: Role,
    pub fabric: String,
    pub mtu: u32,
    pub seed: u64,
    pub data_w: u32,
    /// Messages (iterations) of the run.
    pub iters: u32,
    /// Message size (pingpong, write-bw, send-lat, read-bw, read-lat) or
    /// chunk size (write-imm); `read` has its own sizes (1, PMTU-1, PMTU,
    /// PMTU+1, 3 PMTU+17, 64 KiB), the atomic tests perftest's 8 bytes.
    pub size: u32,
    /// `read`: READs the reader keeps outstanding at most (rnic grants
    /// `max_dest_rd_atomic` 4 and issues at most its `max_rd_atomic` 4).
    pub depth: u32,
    pub pcap: Option<PathBuf>,
    pub limit: Duration,
}

impl RunSpec {
    pub fn new(test: Test, role: Role) -> Self {
        Self {
            test,
            role,
            fabric: "ideal".into(),
            mtu: 1024,
            seed: 1,
            data_w: 64,
            iters: 50,
            size: 4096,
            depth: 4,
            pcap: None,
            limit: Duration::from_secs(300),
        }
    }

    /// The command that repeats this run.
    pub fn command(&self) -> String {
        let depth = if self.test == Test::Read {
            format!(" --read-depth {}", self.depth)
        } else {
            String::new()
        };
        // (the atomic tests have perftest's 8 bytes)
        let size = if self.test.is_atomic() {
            String::new()
        } else {
            format!(" --size {}", self.size)
        };
        format!(
            "rnic interop --tests {} --roles {} --fabric {} --mtu {} --seed {} --data-w {} --iters {}{size}{depth}",
            self.test.name(),
            match self.role {
                Role::Requester => "requester",
                Role::Responder => "responder",
            },
            self.fabric,
            self.mtu,
            self.seed,
            self.data_w,
            self.iters,
        )
    }
}

/// Run `spec` against `guest`.
pub fn run_one(guest: &mut Guest, spec: &RunSpec) -> Result<Report> {
    if let Some(why) = spec.test.unsupported(spec.role) {
        return Err(InteropError::Failed(format!(
            "{} cannot run with rnic as the {:?}: {why}",
            spec.test.name(),
            spec.role
        )));
    }
    let before = guest.rxe_counters()?;
    let mut port = guest
        .take_roce_port()
        .ok_or_else(|| InteropError::Failed("the guest's link is in use".into()))?;
    port.reset_stats();
    let msg = spec.size as usize;
    let buf_len = match spec.test {
        Test::WriteImm => (msg * 4 * spec.iters as usize).next_power_of_two(),
        Test::Read => read_run::region_len(spec.iters, spec.mtu),
        _ => (4 * msg).next_power_of_two(),
    }
    .max(1 << 16);
    let o = RnicOpts {
        data_w: spec.data_w,
        seed: spec.seed,
        fabric: spec.fabric.clone(),
        pcap: spec.pcap.clone(),
        buf_len,
        // (the server's region and QP take atomics; the client's need not)
        remote_atomic: spec.test.is_atomic() && spec.role == Role::Responder,
        addr: rnic_harness::conn::PortAddr {
            mac: guest.config().peer_mac,
            ip: guest.config().peer_ip,
        },
        ..RnicOpts::default()
    };
    let mut rnic = match Rnic::new(&o) {
        Ok(r) => r,
        Err(e) => {
            guest.put_roce_port(port);
            return Err(e);
        }
    };
    rnic.world.connect_external(0, port)?;
    let r = match spec.test {
        Test::PingPong => pingpong_run::run(
            &mut rnic,
            guest,
            spec.role,
            &PingPongOpts {
                size: msg,
                iters: spec.iters,
                mtu: spec.mtu,
                limit: spec.limit,
                ..PingPongOpts::default()
            },
        ),
        Test::WriteImm => imm_run::run(
            &mut rnic,
            guest,
            spec.role,
            &ImmOpts {
                count: spec.iters,
                chunk: spec.size,
                mtu: spec.mtu,
                limit: spec.limit,
                ..ImmOpts::default()
            },
        ),
        Test::Read => {
            let o = ReadOpts {
                count: spec.iters,
                depth: spec.depth,
                mtu: spec.mtu,
                seed: spec.seed,
                limit: spec.limit,
                ..ReadOpts::default()
            };
            match spec.role {
                Role::Responder => read_run::run(&mut rnic, guest, &o),
                Role::Requester => read_client::run(&mut rnic, guest, &o),
            }
        }
        Test::WriteBw
        | Test::SendLat
        | Test::ReadBw
        | Test::ReadLat
        | Test::AtomicBw
        | Test::AtomicBwCas => perftest_run::run(&mut rnic, guest, spec),
    };
    let _ = rnic.world.flush_pcap();
    if let Some(p) = rnic.world.disconnect_external(0) {
        guest.put_roce_port(p);
    }
    let mut r = r?;
    let after = guest.rxe_counters()?;
    r.rxe_counters = after
        .iter()
        .filter_map(|(k, &v)| {
            let d = v.saturating_sub(before.get(k).copied().unwrap_or(0));
            (d > 0).then(|| (k.clone(), d))
        })
        .collect();
    Ok(r)
}
