//! The network between simulated NICs (DESIGN.md section 7.3): endpoints joined
//! by `K` paths with delay, jitter, bandwidth and faults.
//!
//! Model, per frame handed to [`Fabric::send`] at cycle `now` by endpoint
//! `src`:
//!
//! 1. **Route**: one endpoint: back to itself ([`Routing::Loopback`]) or
//!    nowhere ([`Routing::Sink`], counted as `unrouted`); two endpoints: the
//!    other one ([`Routing::PointToPoint`]); more: a learning switch
//!    ([`Routing::Switch`]: source MACs are learned, unknown or group
//!    destinations are flooded to every other endpoint).
//! 2. **Path**: `hash(UDP source port) % K` ([`PathHash`]); frames that are
//!    not IPv4/UDP take path 0. Every source endpoint has its own `K` path
//!    instances (full-duplex links), configured alike.
//! 3. **Serialization** (store and forward): the path sends one frame at a
//!    time at `bandwidth` bytes per cycle (default: the NIC's line rate,
//!    `DATA_W/8`), starting when the frame arrived and the path is free.
//! 4. **Faults**, drawn from the fabric's seeded ChaCha8 stream: dropped
//!    (`drop_rate`; the frame still used the path), else duplicated
//!    (`dup_rate`: a second copy is serialized right behind it); each copy
//!    independently corrupted (`corrupt_rate`: one bit flipped where the
//!    receiver must notice, see [`crate::frame::corruptible_range`]), marked
//!    bad (`bad_frame_rate`: delivered with `tuser` = 1, as a MAC does on an
//!    FCS error) and reordered (`reorder_rate`).
//! 5. **Arrival** = end of serialization + `delay` + uniform `0..=jitter`,
//!    but never before the previous frame of the same path (paths are FIFO);
//!    a reordered copy instead gets an extra uniform `1..=reorder_delay`
//!    cycles and is exempt from FIFO, so later frames overtake it.
//!
//! [`Fabric::pop_due`] hands out arrived frames in arrival order (ties in
//! send order). All of it is deterministic for a seed.
//!
//! Endpoints are plain indices: the simulator maps them to NICs, and a later
//! "external port" (frames to/from a socket) can be another index.

use std::cmp::Ordering;
use std::collections::BinaryHeap;
use std::fmt;
use std::str::FromStr;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::frame;
use crate::holes::{self, HoleKey, HoleStats, HoleTracker};
use crate::SimError;

/// Most paths a fabric may have.
pub const MAX_PATHS: usize = 256;

/// Profile names [`FabricConfig::profile`] knows (`spray-K` for any K).
pub const PROFILE_NAMES: &[&str] = &["ideal", "lossy", "reorder", "hostile", "spray-K"];

/// How a UDP source port selects one of `K` paths.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PathHash {
    /// A fixed integer mix of the port, modulo `K` (like switch ECMP).
    #[default]
    Mix,
    /// `port % K`: lets a test pick the path by choosing the port.
    Modulo,
}

impl PathHash {
    /// Path of UDP source port `sport` among `k` paths.
    #[inline]
    pub fn path(self, sport: u16, k: usize) -> usize {
        if k <= 1 {
            return 0;
        }
        let h = match self {
            PathHash::Modulo => u32::from(sport),
            PathHash::Mix => {
                let mut x = u32::from(sport).wrapping_mul(0x9E37_79B1);
                x ^= x >> 15;
                x = x.wrapping_mul(0x85EB_CA77);
                x ^= x >> 13;
                x
            }
        };
        h as usize % k
    }
}

/// One path of the fabric. Times are clock cycles.
#[derive(Debug, Clone, PartialEq)]
pub struct PathConfig {
    /// Fixed latency after serialization.
    pub delay: u64,
    /// Extra latency, uniform in `0..=jitter` (does not reorder: FIFO).
    pub jitter: u64,
    /// Bytes per cycle; `None` = the NIC's line rate (`DATA_W/8`).
    pub bandwidth: Option<f64>,
    pub drop_rate: f64,
    pub dup_rate: f64,
    pub corrupt_rate: f64,
    pub reorder_rate: f64,
    /// A reordered copy is held back by uniform `1..=reorder_delay` cycles.
    pub reorder_delay: u64,
    /// Delivered with `tuser` = 1 (bad frame, e.g. FCS error).
    pub bad_frame_rate: f64,
    /// The path goes down and comes back periodically (a flapping link):
    /// every frame sent while it is down is dropped.
    pub flap: Option<Flap>,
}

/// A flapping path: up for `up` cycles from cycle 0, then down (dropping
/// every frame) for `down` cycles, and so on. Deterministic: the same
/// cycles are down in every run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Flap {
    pub up: u64,
    pub down: u64,
}

impl Flap {
    /// The path of `spray-K-flap` profiles: 50,000 cycles (200 us at 250
    /// MHz) up, then as long down.
    pub const SPRAY: Flap = Flap {
        up: 50_000,
        down: 50_000,
    };

    /// Whether the path is down at cycle `t`.
    pub fn is_down(&self, t: u64) -> bool {
        t % (self.up + self.down) >= self.up
    }
}

impl Default for PathConfig {
    fn default() -> Self {
        Self {
            delay: 100,
            jitter: 0,
            bandwidth: None,
            drop_rate: 0.0,
            dup_rate: 0.0,
            corrupt_rate: 0.0,
            reorder_rate: 0.0,
            reorder_delay: 1000,
            bad_frame_rate: 0.0,
            flap: None,
        }
    }
}

/// The fabric: its paths and how frames pick one.
#[derive(Debug, Clone, PartialEq)]
pub struct FabricConfig {
    /// Profile name (informational).
    pub name: String,
    pub paths: Vec<PathConfig>,
    pub hash: PathHash,
    /// Bytes added to every frame for serialization (e.g. 24 for preamble,
    /// FCS and inter-frame gap); 0 by default.
    pub frame_overhead: u32,
}

impl Default for FabricConfig {
    fn default() -> Self {
        Self::ideal()
    }
}

impl FabricConfig {
    /// One path, 100 cycles, no faults.
    pub fn ideal() -> Self {
        Self::with_paths("ideal", vec![PathConfig::default()])
    }

    /// A fabric named `name` with `paths` and the default hash.
    pub fn with_paths(name: &str, paths: Vec<PathConfig>) -> Self {
        Self {
            name: name.to_string(),
            paths,
            hash: PathHash::Mix,
            frame_overhead: 0,
        }
    }

    /// A named profile: `ideal`, `lossy`, `reorder`, `hostile` or `spray-K`
    /// (K paths, 1..=256), optionally `spray-K-lossy` (1 % loss on every
    /// path), `spray-K-hostile` (the faults of `hostile` on every path) or
    /// `spray-K-dead` (the slowest path drops everything) or `spray-K-lossP`
    /// (loss rate P on every path, e.g. `spray-8-loss0.02`); `-flap` after
    /// any of these but `dead` (or `spray-K-flap`) makes the slowest path
    /// flap ([`Flap::SPRAY`]: down half of the time, 50,000 cycles at a time).
    /// `-mod` at the very end of a `spray-K` profile hashes ports to paths
    /// by [`PathHash::Modulo`], so that consecutive ports take consecutive
    /// paths and every QP that sprays over K ports uses every path (e.g.
    /// `spray-8-flap-mod`: each QP has one port on the flapping path).
    /// See the crate README for the parameters.
    pub fn profile(name: &str) -> Result<Self, SimError> {
        if let Some(base) = name
            .strip_suffix("-mod")
            .filter(|b| b.starts_with("spray-"))
        {
            let mut cfg = Self::profile(base).map_err(|_| SimError::UnknownProfile {
                name: name.to_string(),
                valid: "a spray-K profile followed by -mod, e.g. spray-8-flap-mod".into(),
            })?;
            cfg.name = name.to_string();
            cfg.hash = PathHash::Modulo;
            return Ok(cfg);
        }
        let unknown = || {
            SimError::UnknownProfile {
            name: name.to_string(),
            valid: format!(
                "{} (spray-K with K = 1..={MAX_PATHS}, e.g. spray-8, and spray-K-lossy, spray-K-hostile, spray-K-dead, spray-K-lossP, each but dead optionally with -flap, e.g. spray-8-loss0.05-flap, and spray-K-flap; any spray profile with -mod at the end hashes ports modulo K)",
                PROFILE_NAMES.join(", ")
            ),
        }
        };
        let p = PathConfig::default();
        // the faults of `hostile`, on its own paths and on every sprayed one
        let hostile = PathConfig {
            jitter: 50,
            drop_rate: 0.01,
            dup_rate: 0.01,
            corrupt_rate: 0.001,
            reorder_rate: 0.05,
            reorder_delay: 1000,
            ..p.clone()
        };
        let cfg = match name {
            "ideal" => Self::ideal(),
            "lossy" => Self::with_paths(
                name,
                vec![PathConfig {
                    drop_rate: 0.01,
                    ..p
                }],
            ),
            "reorder" => Self::with_paths(
                name,
                [100, 150, 250, 400]
                    .iter()
                    .map(|&delay| PathConfig {
                        delay,
                        reorder_rate: 0.05,
                        reorder_delay: 1000,
                        ..p.clone()
                    })
                    .collect(),
            ),
            "hostile" => Self::with_paths(
                name,
                [100, 200, 300, 400]
                    .iter()
                    .map(|&delay| PathConfig {
                        delay,
                        ..hostile.clone()
                    })
                    .collect(),
            ),
            _ => {
                let rest = name.strip_prefix("spray-").ok_or_else(unknown)?;
                let (k, faults) = match rest.split_once('-') {
                    Some((k, f)) => (k, Some(f)),
                    None => (rest, None),
                };
                // a flapping slowest path: `-flap` at the end
                let (faults, flap) = match faults {
                    Some("flap") => (None, true),
                    Some(f) => match f.strip_suffix("-flap") {
                        Some(g) if g != "dead" => (Some(g), true),
                        _ => (Some(f), false),
                    },
                    None => (None, false),
                };
                let dead = faults == Some("dead");
                let faults = match faults {
                    None | Some("dead") => p.clone(),
                    Some("lossy") => PathConfig {
                        drop_rate: 0.01,
                        ..p.clone()
                    },
                    Some("hostile") => hostile.clone(),
                    Some(f) => match f.strip_prefix("loss").and_then(|r| r.parse::<f64>().ok()) {
                        // spray-K-lossP: loss rate P (0..=1) on every path
                        Some(r) if (0.0..=1.0).contains(&r) => PathConfig {
                            drop_rate: r,
                            ..p.clone()
                        },
                        _ => return Err(unknown()),
                    },
                };
                let k: usize = Some(k)
                    .filter(|_| !(dead || flap) || k != "1")
                    .and_then(|k| k.parse().ok())
                    .filter(|k| (1..=MAX_PATHS).contains(k))
                    .ok_or_else(unknown)?;
                // Path i: 100 .. 400 cycles, linear, so the slowest is 4x
                // the fastest.
                Self::with_paths(
                    name,
                    (0..k)
                        .map(|i| PathConfig {
                            delay: if k == 1 {
                                100
                            } else {
                                100 + (300 * i as u64) / (k as u64 - 1)
                            },
                            drop_rate: if dead && i == k - 1 {
                                1.0
                            } else {
                                faults.drop_rate
                            },
                            flap: (flap && i == k - 1).then_some(Flap::SPRAY),
                            ..faults.clone()
                        })
                        .collect(),
                )
            }
        };
        Ok(cfg)
    }

    /// Check the parameters (rates in 0..=1, 1..=256 paths, bandwidth > 0).
    pub fn validate(&self) -> Result<(), SimError> {
        let bad = |m: String| Err(SimError::Config(format!("fabric {:?}: {m}", self.name)));
        if self.paths.is_empty() || self.paths.len() > MAX_PATHS {
            return bad(format!(
                "{} paths (1..={MAX_PATHS} allowed)",
                self.paths.len()
            ));
        }
        for (i, p) in self.paths.iter().enumerate() {
            for (what, r) in [
                ("drop_rate", p.drop_rate),
                ("dup_rate", p.dup_rate),
                ("corrupt_rate", p.corrupt_rate),
                ("reorder_rate", p.reorder_rate),
                ("bad_frame_rate", p.bad_frame_rate),
            ] {
                if !(0.0..=1.0).contains(&r) {
                    return bad(format!("path {i}: {what} {r} is not in 0..=1"));
                }
            }
            if let Some(b) = p.bandwidth {
                if !(b.is_finite() && b > 0.0) {
                    return bad(format!("path {i}: bandwidth {b} is not positive"));
                }
            }
            if p.flap.is_some_and(|f| f.up == 0 || f.down == 0) {
                return bad(format!("path {i}: a flap needs up and down periods"));
            }
            if p.reorder_rate > 0.0 && p.reorder_delay == 0 {
                return bad(format!(
                    "path {i}: reorder_rate > 0 needs reorder_delay > 0"
                ));
            }
        }
        Ok(())
    }
}

impl FromStr for FabricConfig {
    type Err = SimError;
    fn from_str(s: &str) -> Result<Self, SimError> {
        Self::profile(s)
    }
}

/// Where frames go.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Routing {
    /// Nowhere: frames are counted as `unrouted` and dropped.
    Sink,
    /// Back to the sender (one endpoint).
    Loopback,
    /// To the other endpoint (exactly two).
    PointToPoint,
    /// Learning switch on MAC addresses (any number of endpoints).
    Switch,
}

/// What happened to one copy of a sent frame (one per destination, plus
/// one per duplicate).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CopyFate {
    pub dst: usize,
    pub path: usize,
    pub dropped: bool,
    /// This is the extra copy of a duplicated frame.
    pub duplicate: bool,
    /// Bit flipped: byte `bit / 8`, bit `bit % 8` (LSB = 0).
    pub corrupt_bit: Option<u32>,
    /// Delivered with `tuser` = 1.
    pub bad: bool,
    /// Held back by `reorder_delay`, out of FIFO order.
    pub reordered: bool,
    /// Cycle of arrival at `dst` (meaningless when dropped).
    pub arrival: u64,
}

/// The fate of one frame given to [`Fabric::send`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SendReport {
    /// Sequence number of the frame (its copies carry it in [`Delivery`]).
    pub id: u64,
    pub cycle: u64,
    pub src: usize,
    pub len: usize,
    /// No destination (sink routing, or a switch that knows only the sender).
    pub unrouted: bool,
    pub copies: Vec<CopyFate>,
}

impl fmt::Display for SendReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "frame {} from {}", self.id, self.src)?;
        if self.unrouted {
            return write!(f, ": unrouted (dropped)");
        }
        for c in &self.copies {
            write!(f, "; to {} path {}", c.dst, c.path)?;
            if c.duplicate {
                write!(f, " duplicate")?;
            }
            if c.dropped {
                write!(f, " DROPPED")?;
                continue;
            }
            if let Some(b) = c.corrupt_bit {
                write!(f, " CORRUPTED(byte {} bit {})", b / 8, b % 8)?;
            }
            if c.bad {
                write!(f, " BAD(tuser)")?;
            }
            if c.reordered {
                write!(f, " REORDERED")?;
            }
            write!(f, " arrives at cycle {}", c.arrival)?;
        }
        Ok(())
    }
}

/// A frame arriving at an endpoint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Delivery {
    /// Cycle it arrived.
    pub cycle: u64,
    pub src: usize,
    pub dst: usize,
    pub path: usize,
    /// [`SendReport::id`] of the frame (a duplicate carries the same id).
    pub id: u64,
    pub data: Vec<u8>,
    /// Deliver with `tuser` = 1.
    pub bad: bool,
}

/// Counters of one path (summed over source endpoints, or of one source
/// endpoint: [`Fabric::path_stats_from`]) or of the fabric.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PathStats {
    /// Frames handed to the path (per destination; a duplicate is not sent
    /// again).
    pub sent: u64,
    /// Copies delivered to the destination endpoint.
    pub delivered: u64,
    pub dropped: u64,
    /// Of `dropped`: sent while the path was down ([`Flap`]).
    pub down_dropped: u64,
    pub duplicated: u64,
    pub corrupted: u64,
    pub reordered: u64,
    pub bad_frames: u64,
    pub bytes_sent: u64,
    pub bytes_delivered: u64,
}

impl PathStats {
    fn add(&mut self, o: &PathStats) {
        self.sent += o.sent;
        self.delivered += o.delivered;
        self.dropped += o.dropped;
        self.down_dropped += o.down_dropped;
        self.duplicated += o.duplicated;
        self.corrupted += o.corrupted;
        self.reordered += o.reordered;
        self.bad_frames += o.bad_frames;
        self.bytes_sent += o.bytes_sent;
        self.bytes_delivered += o.bytes_delivered;
    }
}

/// Counters of a fabric.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FabricStats {
    pub total: PathStats,
    pub paths: Vec<PathStats>,
    /// Frames that had no destination.
    pub unrouted: u64,
    /// Frames a switch flooded (unknown or group destination).
    pub flooded: u64,
    /// Copies in flight now.
    pub in_flight: usize,
    /// Lost request packets and their repair times (when tracked:
    /// [`Fabric::track_holes`]).
    pub holes: HoleStats,
}

#[derive(Debug, Clone, Copy, Default)]
struct PathState {
    /// When the path finishes serializing its last frame (fractional cycles).
    busy_until: f64,
    /// Arrival of its last FIFO frame.
    last_arrival: u64,
}

enum Dest {
    Nowhere,
    One(usize),
    Flood,
}

struct InFlight {
    arrival: u64,
    order: u64,
    d: Delivery,
    /// The hole tracker's key of an intact request copy (when tracked).
    hole_key: Option<HoleKey>,
}

impl PartialEq for InFlight {
    fn eq(&self, o: &Self) -> bool {
        (self.arrival, self.order) == (o.arrival, o.order)
    }
}
impl Eq for InFlight {}
impl PartialOrd for InFlight {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for InFlight {
    // Reversed: BinaryHeap is a max-heap, we want the earliest first.
    fn cmp(&self, o: &Self) -> Ordering {
        (o.arrival, o.order).cmp(&(self.arrival, self.order))
    }
}

/// The fabric model. Pure Rust: frames in with [`Fabric::send`], out with
/// [`Fabric::pop_due`].
pub struct Fabric {
    cfg: FabricConfig,
    routing: Routing,
    endpoints: usize,
    /// Bytes per cycle of each path (resolved line rate).
    bw: Vec<f64>,
    rng: ChaCha8Rng,
    /// `[src * K + path]`.
    state: Vec<PathState>,
    events: BinaryHeap<InFlight>,
    next_due: u64,
    order: u64,
    next_id: u64,
    paths: Vec<PathStats>,
    /// The same counters per source endpoint: `[src * K + path]`.
    from: Vec<PathStats>,
    unrouted: u64,
    flooded: u64,
    macs: Vec<([u8; 6], usize)>,
    report: SendReport,
    pool: Vec<Vec<u8>>,
    holes: HoleTracker,
}

impl Fabric {
    /// A fabric with `endpoints` endpoints. `line_rate` (bytes per cycle)
    /// replaces `bandwidth: None`.
    pub fn new(
        cfg: &FabricConfig,
        endpoints: usize,
        routing: Routing,
        line_rate: f64,
        seed: u64,
    ) -> Result<Self, SimError> {
        cfg.validate()?;
        let ok = match routing {
            Routing::Sink | Routing::Switch => true,
            Routing::Loopback => endpoints == 1,
            Routing::PointToPoint => endpoints == 2,
        };
        if !ok || endpoints == 0 {
            return Err(SimError::Config(format!(
                "routing {routing:?} does not fit {endpoints} endpoints"
            )));
        }
        if !(line_rate.is_finite() && line_rate > 0.0) {
            return Err(SimError::Config(format!("line rate {line_rate}")));
        }
        let k = cfg.paths.len();
        Ok(Self {
            bw: cfg
                .paths
                .iter()
                .map(|p| p.bandwidth.unwrap_or(line_rate))
                .collect(),
            cfg: cfg.clone(),
            routing,
            endpoints,
            rng: ChaCha8Rng::seed_from_u64(seed),
            state: vec![PathState::default(); endpoints * k],
            events: BinaryHeap::with_capacity(256),
            next_due: u64::MAX,
            order: 0,
            next_id: 0,
            paths: vec![PathStats::default(); k],
            from: vec![PathStats::default(); endpoints * k],
            unrouted: 0,
            flooded: 0,
            macs: Vec::new(),
            report: SendReport::default(),
            pool: Vec::new(),
            holes: HoleTracker::default(),
        })
    }

    /// Changes the drop rate of one path (`Some(i)`) or of all paths
    /// (`None`) from now on: 1.0 is a dead link, e.g. a peer that vanished.
    pub fn set_drop_rate(&mut self, path: Option<usize>, rate: f64) -> Result<(), SimError> {
        if !(0.0..=1.0).contains(&rate) {
            return Err(SimError::Config(format!(
                "drop rate {rate} is not in 0..=1"
            )));
        }
        let k = self.cfg.paths.len();
        match path {
            Some(i) if i >= k => {
                return Err(SimError::Config(format!(
                    "path {i}: the fabric has {k} paths"
                )))
            }
            Some(i) => self.cfg.paths[i].drop_rate = rate,
            None => self.cfg.paths.iter_mut().for_each(|p| p.drop_rate = rate),
        }
        Ok(())
    }

    pub fn config(&self) -> &FabricConfig {
        &self.cfg
    }

    /// Turns the hole tracker on or off ([`crate::holes`]; off by default):
    /// request packets the fabric loses, and when a copy of each is next
    /// delivered intact, in [`FabricStats::holes`].
    pub fn track_holes(&mut self, on: bool) {
        self.holes.on = on;
    }

    /// The fabric's base round trip for frames of `len` bytes: the mean
    /// over its paths of 2 x delay + jitter (the mean of two draws) +
    /// serialization of `len` bytes plus the frame overhead.
    pub fn base_rtt_cycles(&self, len: u64) -> f64 {
        let k = self.cfg.paths.len();
        let sum: f64 = self
            .cfg
            .paths
            .iter()
            .zip(&self.bw)
            .map(|(p, bw)| {
                (2 * p.delay + p.jitter) as f64
                    + (len as f64 + f64::from(self.cfg.frame_overhead)) / bw
            })
            .sum();
        sum / k as f64
    }

    pub fn routing(&self) -> Routing {
        self.routing
    }

    pub fn endpoints(&self) -> usize {
        self.endpoints
    }

    /// Path a frame takes (by its UDP source port; 0 for non-UDP frames).
    pub fn path_of(&self, f: &[u8]) -> usize {
        match frame::udp_src_port(f) {
            Some(p) => self.cfg.hash.path(p, self.cfg.paths.len()),
            None => 0,
        }
    }

    /// Earliest arrival cycle of a frame in flight (`u64::MAX`: none).
    #[inline]
    pub fn next_due(&self) -> u64 {
        self.next_due
    }

    /// Copies in flight.
    pub fn in_flight(&self) -> usize {
        self.events.len()
    }

    /// The next copy that has arrived by cycle `now`, if any.
    #[inline]
    pub fn pop_due(&mut self, now: u64) -> Option<Delivery> {
        if self.next_due > now {
            return None;
        }
        let e = self.events.pop()?;
        self.next_due = self.events.peek().map_or(u64::MAX, |e| e.arrival);
        let k = self.cfg.paths.len();
        for s in [
            &mut self.paths[e.d.path],
            &mut self.from[e.d.src * k + e.d.path],
        ] {
            s.delivered += 1;
            s.bytes_delivered += e.d.data.len() as u64;
        }
        if let Some(key) = e.hole_key {
            // the cycle it arrived (`now` may be later: a caller that
            // drains the fabric)
            self.holes.delivered(key, e.arrival);
        }
        Some(e.d)
    }

    /// An empty buffer (recycled when possible) for a frame to send.
    pub fn take_buf(&mut self) -> Vec<u8> {
        self.pool.pop().unwrap_or_default()
    }

    /// Return a delivered frame's buffer for reuse.
    pub fn recycle(&mut self, mut v: Vec<u8>) {
        if self.pool.len() < 1024 {
            v.clear();
            self.pool.push(v);
        }
    }

    fn buf_copy(&mut self, src: &[u8]) -> Vec<u8> {
        let mut v = self.take_buf();
        v.extend_from_slice(src);
        v
    }

    #[inline]
    fn chance(rng: &mut ChaCha8Rng, p: f64) -> bool {
        p > 0.0 && rng.gen::<f64>() < p
    }

    fn route(&mut self, src: usize, data: &[u8]) -> Dest {
        match self.routing {
            Routing::Sink => Dest::Nowhere,
            Routing::Loopback => Dest::One(src),
            Routing::PointToPoint => Dest::One(1 - src),
            Routing::Switch => {
                if let Some(sm) = frame::src_mac(data) {
                    if sm[0] & 1 == 0 {
                        match self.macs.iter_mut().find(|(m, _)| *m == sm) {
                            Some(e) => e.1 = src,
                            None => self.macs.push((sm, src)),
                        }
                    }
                }
                let Some(dm) = frame::dst_mac(data) else {
                    return Dest::Nowhere;
                };
                if dm[0] & 1 != 0 {
                    return Dest::Flood;
                }
                match self.macs.iter().find(|(m, _)| *m == dm) {
                    Some(&(_, d)) if d == src => Dest::Nowhere,
                    Some(&(_, d)) => Dest::One(d),
                    None => Dest::Flood,
                }
            }
        }
    }

    /// Hand a frame from endpoint `src` to the fabric at cycle `now`.
    /// Returns its fate (valid until the next `send`).
    pub fn send(&mut self, now: u64, src: usize, data: Vec<u8>) -> &SendReport {
        assert!(src < self.endpoints, "endpoint {src} out of range");
        let id = self.next_id;
        self.next_id += 1;
        let mut report = std::mem::take(&mut self.report);
        report.id = id;
        report.cycle = now;
        report.src = src;
        report.len = data.len();
        report.unrouted = false;
        report.copies.clear();
        match self.route(src, &data) {
            Dest::One(d) => self.send_copy(now, src, d, data, &mut report),
            Dest::Flood if self.endpoints > 1 => {
                self.flooded += 1;
                let last = if src == self.endpoints - 1 {
                    self.endpoints - 2
                } else {
                    self.endpoints - 1
                };
                let mut data = Some(data);
                for d in (0..self.endpoints).filter(|&e| e != src) {
                    let v = if d == last {
                        data.take().unwrap_or_default()
                    } else {
                        self.buf_copy(data.as_deref().unwrap_or_default())
                    };
                    self.send_copy(now, src, d, v, &mut report);
                }
            }
            Dest::Flood | Dest::Nowhere => {
                report.unrouted = true;
                self.unrouted += 1;
                self.recycle(data);
            }
        }
        self.report = report;
        &self.report
    }

    fn send_copy(
        &mut self,
        now: u64,
        src: usize,
        dst: usize,
        data: Vec<u8>,
        report: &mut SendReport,
    ) {
        let k = self.cfg.paths.len();
        let path = self.path_of(&data);
        let pc = &self.cfg.paths[path];
        let (delay, jitter) = (pc.delay, pc.jitter);
        let (drop_r, dup_r, cor_r, bad_r, reo_r, reo_d) = (
            pc.drop_rate,
            pc.dup_rate,
            pc.corrupt_rate,
            pc.bad_frame_rate,
            pc.reorder_rate,
            pc.reorder_delay,
        );
        let ser = (data.len() as f64 + f64::from(self.cfg.frame_overhead)) / self.bw[path];
        let len = data.len() as u64;
        let si = src * k + path;
        for s in [&mut self.paths[path], &mut self.from[si]] {
            s.sent += 1;
            s.bytes_sent += len;
        }
        // parsed before any corruption
        let hole_key = if self.holes.on {
            holes::request_key(dst, &data)
        } else {
            None
        };
        let serialize = |st: &mut PathState| -> u64 {
            let start = st.busy_until.max(now as f64);
            st.busy_until = start + ser;
            (st.busy_until.ceil() as u64).max(now + 1)
        };
        let done = serialize(&mut self.state[si]);
        let down = self.cfg.paths[path].flap.is_some_and(|f| f.is_down(now));
        if down || Self::chance(&mut self.rng, drop_r) {
            for s in [&mut self.paths[path], &mut self.from[si]] {
                s.dropped += 1;
                s.down_dropped += u64::from(down);
            }
            if let Some(key) = hole_key {
                self.holes.lost(key, now, data.len());
            }
            report.copies.push(CopyFate {
                dst,
                path,
                dropped: true,
                duplicate: false,
                corrupt_bit: None,
                bad: false,
                reordered: false,
                arrival: 0,
            });
            self.recycle(data);
            return;
        }
        let dup = Self::chance(&mut self.rng, dup_r);
        let mut copies: [Option<(Vec<u8>, u64)>; 2] = [None, None];
        if dup {
            self.paths[path].duplicated += 1;
            self.from[si].duplicated += 1;
            let second = self.buf_copy(&data);
            let done2 = serialize(&mut self.state[si]);
            copies[1] = Some((second, done2));
        }
        copies[0] = Some((data, done));
        // per copy: intact or not, for the hole tracker after the loop
        let mut intact = [None; 2];
        for (ci, c) in copies.iter_mut().enumerate() {
            let Some((mut data, done)) = c.take() else {
                continue;
            };
            let corrupt_bit = if Self::chance(&mut self.rng, cor_r) && !data.is_empty() {
                let (range, skip) = frame::corruptible_range(&data);
                let n = range.len() - usize::from(skip.is_some());
                let mut byte = range.start + self.rng.gen_range(0..n.max(1));
                if skip.is_some_and(|s| byte >= s) {
                    byte += 1;
                }
                let bit = self.rng.gen_range(0..8u32);
                data[byte] ^= 1 << bit;
                self.paths[path].corrupted += 1;
                self.from[si].corrupted += 1;
                Some(byte as u32 * 8 + bit)
            } else {
                None
            };
            let bad = Self::chance(&mut self.rng, bad_r);
            if bad {
                self.paths[path].bad_frames += 1;
                self.from[si].bad_frames += 1;
            }
            let jit = if jitter > 0 {
                self.rng.gen_range(0..=jitter)
            } else {
                0
            };
            let base = done + delay + jit;
            let reordered = Self::chance(&mut self.rng, reo_r);
            let arrival = if reordered {
                self.paths[path].reordered += 1;
                self.from[si].reordered += 1;
                base + self.rng.gen_range(1..=reo_d)
            } else {
                let st = &mut self.state[si];
                let a = base.max(st.last_arrival);
                st.last_arrival = a;
                a
            };
            report.copies.push(CopyFate {
                dst,
                path,
                dropped: false,
                duplicate: ci == 1,
                corrupt_bit,
                bad,
                reordered,
                arrival,
            });
            let ok = corrupt_bit.is_none() && !bad;
            intact[ci] = Some((ok, data.len()));
            self.order += 1;
            self.next_due = self.next_due.min(arrival);
            self.events.push(InFlight {
                arrival,
                order: self.order,
                hole_key: hole_key.filter(|_| ok),
                d: Delivery {
                    cycle: arrival,
                    src,
                    dst,
                    path,
                    id: report.id,
                    data,
                    bad,
                },
            });
        }
        // the intact copies first: a corrupted copy whose twin arrives
        // intact opens no hole
        if let Some(key) = hole_key {
            for &(ok, len) in intact.iter().flatten() {
                if ok {
                    self.holes.sent_intact(key, len);
                }
            }
            for &(ok, len) in intact.iter().flatten() {
                if !ok {
                    self.holes.lost(key, now, len);
                }
            }
        }
    }

    /// Counters per path and in total.
    pub fn stats(&self) -> FabricStats {
        let mut total = PathStats::default();
        for p in &self.paths {
            total.add(p);
        }
        FabricStats {
            total,
            paths: self.paths.clone(),
            unrouted: self.unrouted,
            flooded: self.flooded,
            in_flight: self.events.len(),
            holes: self.holes.stats(|len| self.base_rtt_cycles(len)),
        }
    }

    /// The counters of the `K` paths of source endpoint `src` (frames it
    /// sent into each path, dropped, delivered, ...), readable at any time;
    /// [`Fabric::stats`] sums them over the sources.
    ///
    /// # Panics
    /// If `src` is not an endpoint.
    pub fn path_stats_from(&self, src: usize) -> &[PathStats] {
        assert!(src < self.endpoints, "endpoint {src} out of range");
        let k = self.cfg.paths.len();
        &self.from[src * k..(src + 1) * k]
    }

    /// Draw from the fabric's random stream (for harness decisions that
    /// must follow the seed too).
    pub fn rng(&mut self) -> &mut ChaCha8Rng {
        &mut self.rng
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn profiles_parse() {
        for n in ["ideal", "lossy", "reorder", "hostile", "spray-1", "spray-8"] {
            let c = FabricConfig::profile(n).unwrap();
            c.validate().unwrap();
            assert_eq!(c.name, n);
        }
        let s = FabricConfig::profile("spray-8").unwrap();
        assert_eq!(s.paths.len(), 8);
        let d: Vec<u64> = s.paths.iter().map(|p| p.delay).collect();
        assert_eq!(*d.iter().max().unwrap(), 4 * *d.iter().min().unwrap());
        for bad in ["", "spray", "spray-0", "spray-257", "Ideal", "lossy2"] {
            let e = FabricConfig::profile(bad).unwrap_err().to_string();
            assert!(e.contains("ideal, lossy, reorder, hostile, spray-K"), "{e}");
        }
        assert!("hostile".parse::<FabricConfig>().is_ok());
        // -mod: the same paths, hashed modulo K
        let m = FabricConfig::profile("spray-8-flap-mod").unwrap();
        let f = FabricConfig::profile("spray-8-flap").unwrap();
        assert_eq!((m.paths.clone(), m.hash), (f.paths, PathHash::Modulo));
        assert_eq!(f.hash, PathHash::Mix);
        for bad in ["ideal-mod", "spray-mod", "spray-8-bogus-mod", "-mod"] {
            assert!(FabricConfig::profile(bad).is_err(), "{bad}");
        }
    }

    /// A RoCEv2 frame: BTH with `op`, dest QP `qp`, PSN `psn`, then
    /// `payload` bytes.
    fn roce(op: u8, qp: u32, psn: u32, payload: usize) -> Vec<u8> {
        let mut bth = vec![op, 0, 0xff, 0xff];
        bth.extend_from_slice(&qp.to_be_bytes());
        bth.extend_from_slice(&psn.to_be_bytes());
        bth.resize(12 + payload, 0xa5);
        frame::ipv4_udp(&frame::UdpFlow::default(), &bth)
    }

    fn pair(drop_rate: f64, corrupt_rate: f64) -> Fabric {
        let cfg = FabricConfig::with_paths(
            "holes",
            vec![PathConfig {
                delay: 100,
                drop_rate,
                corrupt_rate,
                ..PathConfig::default()
            }],
        );
        let mut f = Fabric::new(&cfg, 2, Routing::PointToPoint, 8.0, 1).unwrap();
        f.track_holes(true);
        f
    }

    fn drain(f: &mut Fabric) -> Vec<Delivery> {
        let mut v = Vec::new();
        while let Some(d) = f.pop_due(u64::MAX) {
            v.push(d);
        }
        v
    }

    #[test]
    fn hole_tracker_times_a_dropped_then_resent_request() {
        let mut f = pair(1.0, 0.0);
        let w = roce(0x0A, 0x12, 77, 1024); // RDMA WRITE ONLY, 1 KiB
        let len = w.len() as u64;
        assert!(f.send(10, 0, w.clone()).copies[0].dropped);
        // the same PSN lost again: a lost resend, the first loss counts
        assert!(f.send(200, 0, w.clone()).copies[0].dropped);
        // an ACK lost opens no hole, nor does a request without payload
        f.send(300, 1, roce(0x11, 0x34, 77, 4));
        f.send(310, 0, roce(0x0C, 0x12, 90, 16)); // READ request
        let s = f.stats().holes;
        assert!(s.tracked);
        assert_eq!((s.holes, s.holes_open, s.relosses), (1, 1, 1), "{s:?}");
        f.set_drop_rate(None, 0.0).unwrap();
        let arrival = f.send(1000, 0, w.clone()).copies[0].arrival;
        assert_eq!(arrival, 1000 + len.div_ceil(8) + 100);
        // another QP's frame with the same PSN repairs nothing
        f.send(1001, 0, roce(0x0A, 0x13, 77, 1024));
        assert_eq!(drain(&mut f).len(), 2);
        let s = f.stats().holes;
        assert_eq!((s.holes, s.holes_repaired, s.holes_open), (1, 1, 0));
        assert_eq!(s.repair_cycles_sum, arrival - 10);
        assert_eq!(s.repair_cycles_max, arrival - 10);
        assert_eq!(s.repair_cycles_p99, arrival - 10);
        assert_eq!(s.largest_request_frame, len);
        // one path: 2 x 100 + the frame's serialization
        assert_eq!(s.base_rtt_cycles, (200.0 + len as f64 / 8.0).round() as u64);
        assert!(
            (s.repair_rtts_mean() - (arrival - 10) as f64 / s.base_rtt_cycles as f64).abs() < 1e-9
        );
        // lost once more after its repair: redundant, no new hole
        f.set_drop_rate(None, 1.0).unwrap();
        f.send(2000, 0, w);
        let s = f.stats().holes;
        assert_eq!((s.holes, s.redundant_losses), (1, 1));
        // untracked: nothing counted
        let mut g = pair(1.0, 0.0);
        g.track_holes(false);
        g.send(10, 0, roce(0x0A, 1, 1, 64));
        let s = g.stats().holes;
        assert_eq!((s.tracked, s.holes, s.redundant_losses), (false, 0, 0));
    }

    #[test]
    fn hole_tracker_counts_a_corrupted_copy_and_mp_packets() {
        let mut f = pair(0.0, 1.0);
        let rep = f.send(5, 0, roce(0xC0, 9, 4, 256)); // MP WRITE
        assert!(rep.copies[0].corrupt_bit.is_some());
        f.send(6, 0, roce(0xC5, 9, 5, 0)); // MP PROBE: not tracked
        f.send(7, 1, roce(0xC3, 2, 4, 4)); // MP ACKNOWLEDGE: not tracked
        assert_eq!(drain(&mut f).len(), 3);
        // the corrupted copy arrived and repaired nothing
        let s = f.stats().holes;
        assert_eq!(
            (s.holes, s.holes_repaired, s.holes_open),
            (1, 0, 1),
            "{s:?}"
        );
        assert_eq!(s.repair_cycles_sum, 0);
    }

    #[test]
    fn hash_spreads_and_is_stable() {
        let mut n = [0usize; 8];
        for p in 0..8192u16 {
            n[PathHash::Mix.path(p, 8)] += 1;
        }
        for c in n {
            assert!((900..1150).contains(&c), "{n:?}");
        }
        assert_eq!(PathHash::Modulo.path(13, 4), 1);
        assert_eq!(PathHash::Mix.path(13, 1), 0);
    }
}
