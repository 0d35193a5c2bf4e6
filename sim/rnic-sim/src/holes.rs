//! The fabric's hole tracker: how long a lost RoCEv2 request packet takes
//! to be repaired (issue 22: round trips per recovered hole).
//!
//! A **hole** opens when the fabric drops, corrupts or marks bad (`tuser`)
//! a copy of a request packet that carries payload (RC SEND / RDMA WRITE,
//! opcodes 0x00-0x0B; mp MP WRITE*, 0xC0-0xC2), keyed by (destination
//! endpoint, BTH destination QP, BTH PSN), at the cycle the fabric was
//! handed that copy. It closes (is **repaired**) when a copy with the same
//! key is delivered intact (not corrupted, not bad); its repair time is
//! the delivery cycle minus the loss cycle, so it includes the one-way trip
//! of the copy that repaired it. Not holes:
//!
//! - a copy lost while its hole is open (a lost repair attempt): counted
//!   in `relosses`, the hole keeps its first loss cycle;
//! - a copy lost while the same key was already delivered intact or has
//!   an intact copy in flight (a spurious resend, or a duplicate's twin):
//!   counted in `redundant_losses`;
//! - ACKs, NAKs, READ responses, READ and atomic requests (no payload),
//!   mp probes and probe replies (a probe carries the next PSN but takes
//!   none, so it would alias the data packet of that PSN), and anything
//!   that is not IPv4/UDP to port 4791.
//!
//! Off by default ([`crate::Fabric::track_holes`]): it keeps every
//! delivered key of a run.

use std::collections::{HashMap, HashSet};

use crate::frame;

/// RoCEv2 UDP destination port.
const ROCEV2_PORT: u16 = 4791;
/// BTH bytes.
const BTH_LEN: usize = 12;

/// (destination endpoint, destination QP, PSN) packed in a u64.
pub(crate) type HoleKey = u64;

/// Whether BTH opcode `op` is a request that carries payload: RC SEND and
/// RDMA WRITE (0x00-0x0B) or the mp transport's MP WRITE, MP WRITE LAST
/// and MP WRITE LAST WITH IMMEDIATE (0xC0-0xC2).
pub fn is_payload_request(op: u8) -> bool {
    op <= 0x0B || (0xC0..=0xC2).contains(&op)
}

/// The tracker's key of a frame to endpoint `dst`: `Some` for a RoCEv2
/// request carrying payload ([`is_payload_request`]), `None` otherwise.
pub(crate) fn request_key(dst: usize, f: &[u8]) -> Option<HoleKey> {
    let udp = frame::udp_offset(f)?;
    if frame::udp_dst_port(f)? != ROCEV2_PORT {
        return None;
    }
    let bth = udp + 8;
    let b = f.get(bth..bth + BTH_LEN)?;
    if !is_payload_request(b[0]) {
        return None;
    }
    let qp = u64::from(u32::from_be_bytes([0, b[5], b[6], b[7]]));
    let psn = u64::from(u32::from_be_bytes([0, b[9], b[10], b[11]]));
    Some(((dst as u64) << 48) | (qp << 24) | psn)
}

/// What the hole tracker saw (see the module documentation). Times are
/// cycles.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HoleStats {
    /// The tracker was on ([`crate::Fabric::track_holes`]).
    pub tracked: bool,
    /// Holes opened: request packets lost (dropped, corrupted or bad)
    /// whose data was neither delivered nor on its way intact.
    pub holes: u64,
    /// Of `holes`: repaired (a copy delivered intact).
    pub holes_repaired: u64,
    /// Of `holes`: still open (never repaired so far).
    pub holes_open: u64,
    /// Copies lost while their hole was open (lost resends).
    pub relosses: u64,
    /// Copies lost whose data was already delivered or in flight intact.
    pub redundant_losses: u64,
    /// Sum, over repaired holes, of (delivery of the repairing copy - the
    /// first loss).
    pub repair_cycles_sum: u64,
    pub repair_cycles_max: u64,
    /// Nearest-rank percentiles of the repair times (0 with no repair).
    pub repair_cycles_p50: u64,
    pub repair_cycles_p90: u64,
    pub repair_cycles_p99: u64,
    /// Longest tracked request frame seen (bytes).
    pub largest_request_frame: u64,
    /// The fabric's base round trip: the mean over its paths of 2 x delay,
    /// plus jitter, plus serialization of `largest_request_frame` and the
    /// frame overhead, rounded to a cycle; an ACK's own serialization and
    /// any queueing are left out.
    pub base_rtt_cycles: u64,
}

impl HoleStats {
    /// Mean repair time in cycles (0 with no repair).
    pub fn repair_cycles_mean(&self) -> f64 {
        if self.holes_repaired == 0 {
            0.0
        } else {
            self.repair_cycles_sum as f64 / self.holes_repaired as f64
        }
    }

    /// Mean repair time in base round trips (0 with no repair).
    pub fn repair_rtts_mean(&self) -> f64 {
        if self.base_rtt_cycles == 0 {
            0.0
        } else {
            self.repair_cycles_mean() / self.base_rtt_cycles as f64
        }
    }
}

#[derive(Debug, Default)]
pub(crate) struct HoleTracker {
    pub(crate) on: bool,
    /// Open holes: key -> cycle of the first loss.
    open: HashMap<HoleKey, u64>,
    /// Keys delivered intact.
    delivered: HashSet<HoleKey>,
    /// Intact copies in flight per key.
    in_flight: HashMap<HoleKey, u32>,
    repairs: Vec<u64>,
    holes: u64,
    relosses: u64,
    redundant: u64,
    largest: u64,
}

impl HoleTracker {
    /// An intact copy of `key` entered the fabric (call before
    /// [`HoleTracker::lost`] for the other copies of the same send).
    pub(crate) fn sent_intact(&mut self, key: HoleKey, len: usize) {
        self.largest = self.largest.max(len as u64);
        *self.in_flight.entry(key).or_insert(0) += 1;
    }

    /// A copy of `key` handed to the fabric at `now` was dropped, or will
    /// arrive corrupted or bad.
    pub(crate) fn lost(&mut self, key: HoleKey, now: u64, len: usize) {
        self.largest = self.largest.max(len as u64);
        if self.open.contains_key(&key) {
            self.relosses += 1;
        } else if self.delivered.contains(&key) || self.in_flight.get(&key).is_some_and(|&n| n > 0)
        {
            self.redundant += 1;
        } else {
            self.holes += 1;
            self.open.insert(key, now);
        }
    }

    /// An intact copy of `key` arrived at `now`.
    pub(crate) fn delivered(&mut self, key: HoleKey, now: u64) {
        if let Some(n) = self.in_flight.get_mut(&key) {
            *n -= 1;
            if *n == 0 {
                self.in_flight.remove(&key);
            }
        }
        if let Some(t) = self.open.remove(&key) {
            self.repairs.push(now - t);
        }
        self.delivered.insert(key);
    }

    pub(crate) fn stats(&self, base_rtt: impl Fn(u64) -> f64) -> HoleStats {
        let mut r = self.repairs.clone();
        r.sort_unstable();
        let pct = |p: f64| -> u64 {
            if r.is_empty() {
                return 0;
            }
            let i = ((p * r.len() as f64).ceil() as usize).clamp(1, r.len()) - 1;
            r[i]
        };
        HoleStats {
            tracked: self.on,
            holes: self.holes,
            holes_repaired: r.len() as u64,
            holes_open: self.open.len() as u64,
            relosses: self.relosses,
            redundant_losses: self.redundant,
            repair_cycles_sum: r.iter().sum(),
            repair_cycles_max: r.last().copied().unwrap_or(0),
            repair_cycles_p50: pct(0.50),
            repair_cycles_p90: pct(0.90),
            repair_cycles_p99: pct(0.99),
            largest_request_frame: self.largest,
            base_rtt_cycles: base_rtt(self.largest).round() as u64,
        }
    }
}
