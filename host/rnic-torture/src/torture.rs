//! The data-before-CQE torture test (DESIGN.md section 9.1).
//!
//! On each of `qps` RC connections from context A to context B, message `n`
//! is `k` RDMA WRITEs followed by one RDMA WRITE_WITH_IMM (immediate = `n`),
//! each buffer of random size and random unaligned offsets, its bytes a
//! pattern of `(seed, QP, n, buffer)`. Before the sender posts, the
//! receiver fills the message's slot with the complement of the pattern
//! (so every byte still holding its old value is noticed), framed by guard
//! bytes. At the instant the receiver polls the WRITE_WITH_IMM's CQE it
//! checks every byte of every buffer of the message:
//!
//! - bytes still holding their old value that turn right once everything in
//!   flight has landed: an **ordering violation** (the CQE overtook data);
//! - bytes that stay wrong, or guard bytes overwritten: **corruption**.
//!
//! It also counts lost completions (a QP with work outstanding and no
//! completion for `watchdog` cycles), duplicate and out-of-order
//! completions (per QP, on both sides) and error completions. A window of
//! `window` messages per QP is in flight; a slot is reused once both its
//! send completion and its checked receive completion were seen, so memory
//! does not grow with the number of messages.
//!
//! Completions are polled ([`Completions::Poll`]), or waited for by
//! interrupt ([`Completions::Event`]): a side with nothing to poll arms its
//! CQ, polls it once more (a CQE that arrived before the arm raises no
//! interrupt), then waits for the CQ's MSI for at most
//! [`Config::irq_budget`] cycles and polls again. A CQE found when the
//! budget ran out, whose interrupt does not come within another budget
//! either, is a **missed interrupt** ([`EventStats::missed_interrupts`]),
//! a failure like a lost completion.
//!
//! With [`Config::reads`] `R > 0`, a fraction `R` of messages (chosen from
//! the message's seeded generator) is followed on its QP by a signaled
//! RDMA READ of bytes the message just wrote (one of its buffers, whole or
//! a random sub-range) into a read-back area of the sender's slot, filled
//! with the complement of those bytes and framed by guard bytes before
//! posting. When the READ's completion is polled every byte of the area
//! must be what the WRITEs before it wrote: anything else is a **read**
//! failure (stale bytes that turn right once everything in flight has
//! landed: the READ's CQE overtook its data; that stay stale: the READ did
//! not see the WRITEs before it). Half of those READs (seeded) are
//! followed by a WRITE of new bytes (the old ones XOR [`FENCE_XOR`]) to
//! the same remote bytes, posted with [`SendFlags::FENCE`]: the READ must
//! still bring the old bytes. A second READ of those bytes follows the
//! fenced WRITE, into an area of its own, and must bring the new bytes:
//! its completion also tells the run that the WRITE's bytes have landed on
//! the receiver (the WRITE's own completion only says it was acknowledged),
//! before the receiver prepares the slot for its next message. READ
//! completions share the sender's CQ with the WRITE_WITH_IMM completions
//! and are told apart by their wr_id ([`WR_READ`], [`WR_REREAD`]); a slot
//! is reused only once its READs completed.
//!
//! With [`Config::atomics`] `A > 0`, a fraction `A` of messages (chosen
//! from a generator of their own, so the READs and the layout stay those of
//! a run without atomics) is followed on its QP by one signaled atomic
//! ([`WR_ATOMIC`]), alternately FETCH_AND_ADD and CMP_AND_SWAP, on an
//! 8-byte counter word of that QP in an area of the receiver's region no
//! WRITE touches. The sender keeps the counter's expected value: a
//! FETCH_AND_ADD adds a seeded value, a CMP_AND_SWAP compares with the
//! expected value (so it must succeed) and swaps in the expected value
//! plus a seeded one. The original value lands in an 8-byte word of the
//! slot on the sender, filled with the complement of the value due and
//! framed by guard bytes before posting; when the atomic's completion is
//! polled it must hold the counter's value before this atomic: an atomic
//! executed twice (a duplicate not answered from the replay record), out
//! of order or lost, or a CQE before its value, is an **atomic** failure.
//! At the end of a run the counter word of every QP that never failed must
//! hold the expected total.

use std::collections::VecDeque;

use rnic_device::{Device, DmaBuffer, IrqWait};
use rnic_verbs::{
    AccessFlags, AtomicOp, AtomicWr, CompletionQueue, Context, MemoryRegion, Mtu, RecvWr,
    SendFlags, SendWr, WcOpcode, WcStatus, WorkCompletion, WrOpcode,
};
use std::collections::BTreeMap;
use std::rc::Rc;

use serde::{Deserialize, Serialize};

use rnic_harness::conn::{self, ConnOpts, Connections, PortAddr};
use rnic_harness::pattern::{self, SplitMix};

use crate::{Break, Error, Result};

/// Bytes of guard before and after every buffer of the receive slot.
pub const GUARD: usize = 8;
/// Buffers start up to this many bytes past their nominal place (unaligned
/// offsets).
const MAX_SKEW: u64 = 63;
/// Most bytes of DMA memory a run may allocate (both sides together).
pub const MAX_DMA_BYTES: u64 = 2 << 30;

/// The MR table of a build older than the ID block's `mrs` register (it
/// reads 0 there): every such build held 64 regions.
pub const LEGACY_NIC_MRS: u32 = 64;
/// Most buffers per message (`writes_per_imm + 1`).
pub const MAX_BUFFERS: u32 = 64;
/// Cycles without a completion after which a QP that failed with an error
/// completion is given up on.
const DEAD_QP_WAIT: u64 = 100_000;
/// Most messages in flight per QP.
pub const MAX_WINDOW: u32 = 256;
/// Low byte of the wr_id of a message's RDMA READ (its WRITEs carry the
/// buffer number, below [`MAX_BUFFERS`]).
pub const WR_READ: u64 = 0x80;
/// Low byte of the wr_id of the fenced WRITE behind a message's READ (not
/// signaled: its wr_id shows in an error completion only).
pub const WR_FENCED_WRITE: u64 = 0x81;
/// Low byte of the wr_id of the READ behind the fenced WRITE.
pub const WR_REREAD: u64 = 0x82;
/// The fenced WRITE behind a READ writes the bytes the READ reads XOR this
/// (neither the old bytes nor their complement, at every byte).
pub const FENCE_XOR: u8 = 0x5a;
/// `id.caps` bit of a NIC that issues RDMA READ (the requester side).
const CAPS_READ_REQUESTER: u32 = 8;
/// `id.caps` bit of a NIC that answers RDMA READ (the responder side).
const CAPS_READ_RESPONDER: u32 = 7;
/// Low byte of the wr_id of the atomic behind a message.
pub const WR_ATOMIC: u64 = 0x83;
/// `id.caps` bit of a NIC that serves atomics (the responder side).
const CAPS_ATOMIC_RESPONDER: u32 = 9;
/// `id.verbs` bit of a NIC that issues atomics (the requester side).
const VERBS_ATOMIC: u32 = 6;
/// Bytes of the sender's atomic area per slot: guard, the 8-byte original
/// value, guard, padding (keeps every word 8-byte aligned).
const ATOMIC_STRIDE: usize = 32;

/// How the run learns of completions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Completions {
    /// Poll both CQs on every turn (idling the device between turns).
    #[default]
    Poll,
    /// Poll; a side with nothing to poll arms its CQ and waits for the
    /// CQ's interrupt ([`CompletionQueue::req_notify`],
    /// [`CompletionQueue::wait_event`]).
    Event,
}

impl Completions {
    pub fn name(self) -> &'static str {
        match self {
            Completions::Poll => "poll",
            Completions::Event => "event",
        }
    }
}

impl std::fmt::Display for Completions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for Completions {
    type Err = String;
    fn from_str(s: &str) -> std::result::Result<Self, String> {
        match s {
            "poll" => Ok(Completions::Poll),
            "event" => Ok(Completions::Event),
            _ => Err(format!("{s}: completions are `poll` or `event`")),
        }
    }
}

/// What a torture run does.
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    pub seed: u64,
    /// Messages to post in all (spread over the QPs as slots free up).
    pub messages: u64,
    pub qps: u32,
    /// Size of every buffer, uniform in `min_size..=max_size` (with extra
    /// weight on the sizes around multiples of the PMTU).
    pub min_size: u32,
    pub max_size: u32,
    /// RDMA WRITEs before the WRITE_WITH_IMM of every message.
    pub writes_per_imm: u32,
    /// Messages in flight per QP.
    pub window: u32,
    pub mtu: Mtu,
    /// Break one layer of the ordering contract on purpose.
    pub brk: Option<Break>,
    /// CQE ordering by flush read instead of RO=0 (`dma.cqe_order.cqe_flush`).
    pub flush: bool,
    /// A QP with work outstanding and no completion for this many cycles
    /// (of [`Device::now`]) beyond [`Config::backlog_cycles`] has lost
    /// completions.
    pub watchdog: u64,
    /// Reliability attributes of the QPs (local ACK timeout, retries).
    pub retry: conn::Retry,
    /// Requesters spray over 2^spray_log UDP source ports (0: one flow).
    pub spray_log: u8,
    /// The multipath transport instead of RC.
    pub mp: bool,
    /// Path health threshold of both NICs (`ConnOpts::path_thresh`).
    pub path_thresh: Option<u8>,
    /// Cycles to let in-flight writes land before telling a stale byte from
    /// a corrupt one, when the hooks cannot drain the system themselves.
    pub settle: u64,
    /// Polling, or waiting for interrupts.
    pub completions: Completions,
    /// [`Completions::Event`]: cycles (of [`Device::now`]) to wait for a
    /// CQ's interrupt before polling it anyway.
    pub irq_budget: u64,
    /// Fraction (0..=1) of messages followed by an RDMA READ of bytes they
    /// wrote, checked when its completion is polled (0: no READs).
    pub reads: f64,
    /// Fraction (0..=1) of messages followed by an atomic on the QP's
    /// counter word, checked when its completion is polled (0: none).
    pub atomics: f64,
    /// Put every QP of the run in host memory behind the NICs' context
    /// cache, in a context table of this many records
    /// ([`Context::enable_qp_cache`]; 0: QPs in on-chip slots).
    pub qp_cache: u32,
}

impl Default for Config {
    fn default() -> Self {
        Self {
            seed: 1,
            messages: 1000,
            qps: 4,
            min_size: 1,
            max_size: 8192,
            writes_per_imm: 3,
            window: 4,
            mtu: Mtu::Mtu1024,
            brk: None,
            flush: false,
            watchdog: 2_000_000,
            retry: conn::Retry::default(),
            spray_log: 0,
            mp: false,
            path_thresh: None,
            settle: 200_000,
            completions: Completions::Poll,
            irq_budget: 100_000,
            reads: 0.0,
            atomics: 0.0,
            qp_cache: 0,
        }
    }
}

impl Config {
    /// Checks the parameters; the message is one line, for the user.
    pub fn validate(&self) -> Result<()> {
        let bad = |m: String| Err(Error::Config(m));
        if self.qps == 0 {
            return bad("--qps must be at least 1".into());
        }
        if self.min_size == 0 {
            return bad("--min-size must be at least 1 byte".into());
        }
        if self.max_size < self.min_size {
            return bad(format!(
                "--max-size ({}) is below --min-size ({})",
                self.max_size, self.min_size
            ));
        }
        if self.max_size > 64 << 20 {
            return bad(format!("--max-size ({}) is above 64 MiB", self.max_size));
        }
        if u64::from(self.writes_per_imm) + 1 > u64::from(MAX_BUFFERS) {
            return bad(format!(
                "--writes-per-imm ({}) is above {}",
                self.writes_per_imm,
                MAX_BUFFERS - 1
            ));
        }
        if self.window == 0 || self.window > MAX_WINDOW {
            return bad(format!("--window must be 1..={MAX_WINDOW}"));
        }
        if !(0.0..=1.0).contains(&self.reads) {
            return bad(format!(
                "--reads ({}) must be a fraction from 0 to 1",
                self.reads
            ));
        }
        if !(0.0..=1.0).contains(&self.atomics) {
            return bad(format!(
                "--atomics ({}) must be a fraction from 0 to 1",
                self.atomics
            ));
        }
        // work requests per message: with READs, two READs and a fenced
        // WRITE more; with atomics one atomic more
        let per_msg = format!(
            "(--writes-per-imm + {}{}{})",
            self.wqes_per_message() - self.buffers() + 1,
            if self.reads() { " with --reads" } else { "" },
            if self.atomics() {
                " with --atomics"
            } else {
                ""
            }
        );
        let wqes = u64::from(self.window) * self.wqes_per_message() as u64;
        if wqes > u64::from(MAX_RING) {
            return bad(format!(
                "--window x {per_msg} = {wqes} work requests per QP, at most {MAX_RING}"
            ));
        }
        if self.cq_entries() > u64::from(MAX_RING) {
            return bad(format!(
                "--qps x --window x {per_msg} = {} completions, at most {MAX_RING}",
                self.cq_entries()
            ));
        }
        let dma = 2 * u64::from(self.qps) * self.region_bytes() as u64;
        if dma > MAX_DMA_BYTES {
            return bad(format!(
                "the buffers would take {} MiB of DMA memory (at most {} MiB): lower --max-size, --window, --qps or --writes-per-imm",
                dma >> 20,
                MAX_DMA_BYTES >> 20
            ));
        }
        if self.watchdog == 0 {
            return bad("--watchdog must be at least 1 cycle".into());
        }
        if self.irq_budget == 0 {
            return bad("--irq-budget must be at least 1 cycle".into());
        }
        if self.reads() && self.mp {
            return bad(format!(
                "--reads {}: RDMA READ runs on rc QPs only (an mp QP refuses it): use --transport rc",
                self.reads
            ));
        }
        if self.atomics() && self.mp {
            return bad(format!(
                "--atomics {}: atomics run on rc QPs only (an mp QP refuses them): use --transport rc",
                self.atomics
            ));
        }
        if self.brk == Some(Break::EarlyReadCqe) && !self.reads() && !self.atomics() {
            return bad(
                "--break early-read-cqe breaks the completions of RDMA READ and atomics, and without --reads or --atomics the torture issues no READs and no atomics: add --reads R or --atomics A (> 0, e.g. --reads 1) to catch it".into(),
            );
        }
        if let Some((b, why)) = self.brk.and_then(|b| Some((b, b.caught_elsewhere()?))) {
            return bad(format!("--break {b} {why}"));
        }
        if let Some(b) = self
            .brk
            .filter(|b| !b.is_ordering() && *b != Break::EarlyReadCqe)
        {
            return bad(format!(
                "--break {b} breaks memory protection, not the completion ordering: the fuzz campaign (`rnic fuzz --break {b}`) catches it"
            ));
        }
        Ok(())
    }

    fn buffers(&self) -> usize {
        self.writes_per_imm as usize + 1
    }

    /// Some messages are followed by a READ ([`Config::reads`] > 0).
    fn reads(&self) -> bool {
        self.reads > 0.0
    }

    /// Some messages are followed by an atomic ([`Config::atomics`] > 0).
    fn atomics(&self) -> bool {
        self.atomics > 0.0
    }

    /// Work requests one message may post: its WRITEs and WRITE_WITH_IMM,
    /// with READs a READ, a fenced WRITE and a READ again, with atomics
    /// an atomic.
    fn wqes_per_message(&self) -> usize {
        self.buffers() + if self.reads() { 3 } else { 0 } + usize::from(self.atomics())
    }

    /// Bytes of a QP's atomic area behind its slots (page aligned; none
    /// without atomics): on the receiver the counter word framed by guards,
    /// on the sender one original-value word per slot.
    fn atomic_area_bytes(&self) -> usize {
        if !self.atomics() {
            return 0;
        }
        (self.window as usize * ATOMIC_STRIDE + 4095) & !4095
    }

    /// Bytes of one QP's share of a region: its slots and atomic area.
    fn region_bytes(&self) -> usize {
        self.slot_bytes() * self.window as usize + self.atomic_area_bytes()
    }

    /// Room for one buffer of a slot: the largest buffer, its skew and
    /// guards.
    fn segment_bytes(&self) -> usize {
        self.max_size as usize + 2 * GUARD + MAX_SKEW as usize + 1
    }

    /// Bytes of one slot (one message's buffers; with READs three segments
    /// more on the sender: the READ's read-back area, the fenced WRITE's
    /// new bytes and the second READ's area), page aligned.
    fn slot_bytes(&self) -> usize {
        let segments = self.buffers() + if self.reads() { 3 } else { 0 };
        (segments * self.segment_bytes() + 4095) & !4095
    }

    /// Cycles the work of every QP's window may take ahead of one QP's
    /// next completion, which its watchdog allows for on top of
    /// `watchdog`: the QPs share one wire (and, with `qp_cache`, a few
    /// cache slots), so with thousands of QPs a QP's message waits for
    /// thousands of others. Counted at a quarter of the DATA_W 64 wire's
    /// 8 bytes per cycle (retransmissions on hostile fabrics) plus a
    /// context fetch with its write-back per work request.
    pub fn backlog_cycles(&self) -> u64 {
        const BYTES_PER_CYCLE: u64 = 2;
        const CYCLES_PER_WR: u64 = 500;
        let avg = (u64::from(self.min_size) + u64::from(self.max_size)) / 2;
        let per_msg = self.buffers() as u64 * avg / BYTES_PER_CYCLE
            + self.wqes_per_message() as u64 * CYCLES_PER_WR;
        u64::from(self.qps) * u64::from(self.window) * per_msg
    }

    /// Entries of each side's CQ: every WQE in flight may complete (in error,
    /// flushed), plus room.
    fn cq_entries(&self) -> u64 {
        (u64::from(self.qps) * u64::from(self.window) * self.wqes_per_message() as u64 + 16)
            .next_power_of_two()
    }
}

/// Largest work or completion queue (`DeviceAttr::max_qp_wr`).
const MAX_RING: u32 = 32768;

/// Where a run happens (for the report).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunInfo {
    pub fabric: String,
    pub data_w: u32,
}

/// The first failure of a run, as it was seen.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Failure {
    /// `violation`, `corruption`, `lost`, `duplicate`, `out-of-order`,
    /// `error`, `missed-interrupt`, `read` (a READ's bytes wrong when its
    /// completion was seen), `atomic` (an atomic's original value wrong
    /// when its completion was seen, or a counter word wrong at the end).
    pub kind: String,
    /// Cycle ([`Device::now`]) it was seen at.
    pub cycle: u64,
    /// QP index (0..qps) and the QP numbers on the two NICs.
    pub qp: u32,
    pub qpn_send: u32,
    pub qpn_recv: u32,
    pub msg: u64,
    /// Messages checked before this one: how long it took to catch.
    pub messages_before: u64,
    pub detail: String,
}

/// The result of a run. Everything in it but `wall_seconds` and
/// `cycles_per_second` (absent unless filled in) is a function of the
/// configuration and the seed.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Report {
    pub seed: u64,
    pub transport: String,
    pub fabric: String,
    #[serde(rename = "break")]
    pub brk: Option<String>,
    pub flush: bool,
    pub data_w: u32,
    pub qps: u32,
    pub writes_per_imm: u32,
    pub min_size: u32,
    pub max_size: u32,
    pub window: u32,
    pub mtu: u32,
    /// UDP source ports each requester sprays over (1: one flow; 0 in
    /// reports that predate the field).
    #[serde(default)]
    pub spray_ports: u32,
    /// Path health threshold of the sending NIC, as read back from it
    /// after connecting (`port.path_cfg.thresh`; 0 = off).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path_thresh: Option<u8>,
    /// Messages asked for.
    pub messages_requested: u64,
    /// Messages whose WRITE_WITH_IMM completion was seen and checked.
    pub messages: u64,
    /// Bytes of those messages (every buffer).
    pub bytes: u64,
    /// Messages with bytes still stale when their CQE was seen.
    pub violations: u64,
    /// Stale bytes over all violations.
    pub stale_bytes: u64,
    /// Messages with bytes that stayed wrong (or guards overwritten), and
    /// malformed completions.
    pub corruptions: u64,
    pub lost_completions: u64,
    pub duplicate_completions: u64,
    pub out_of_order_completions: u64,
    pub error_completions: u64,
    /// Messages of QPs that had failed with an error completion and never
    /// completed (not counted as lost).
    pub abandoned_messages: u64,
    /// Cycles the run took.
    pub cycles: u64,
    /// How completions were waited for, with `--completions event` (absent:
    /// polled).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub events: Option<EventStats>,
    /// What the READs counted, with `--reads` (absent: no READs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reads: Option<ReadStats>,
    /// What the atomics counted, with `--atomics` (absent: no atomics).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub atomics: Option<AtomicStats>,
    /// What the context caches counted, with `--qp-cache` (absent: QPs on
    /// chip).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub qp_cache: Option<QpCacheStats>,
    pub first_failure: Option<Failure>,
    /// What the NICs (`a.*` sender side, `b.*` receiver side) and the
    /// environment (`fabric.*`) counted: retransmissions, timeouts, NAKs,
    /// drops by reason.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub counters: BTreeMap<String, u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wall_seconds: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cycles_per_second: Option<f64>,
}

/// What a run with [`Completions::Event`] counted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct EventStats {
    /// CQs armed (`req_notify`).
    pub arms: u64,
    /// Arms after which the poll found completions (they arrived before
    /// the arm: no wait).
    pub found_after_arm: u64,
    /// Waits for an interrupt.
    pub waits: u64,
    /// Waits ended by the CQ's interrupt.
    pub interrupts: u64,
    /// Interrupts after which the CQ held nothing (left pending by an arm
    /// whose poll found completions).
    pub spurious: u64,
    /// Waits whose budget ran out with nothing in the CQ (completions
    /// slower than the budget: not a failure).
    pub timeouts: u64,
    /// Budgets that ran out with a completion in the CQ whose interrupt
    /// then came within another budget.
    pub late_interrupts: u64,
    /// Budgets that ran out with a completion in the CQ whose interrupt
    /// never came (within another budget): lost interrupts.
    pub missed_interrupts: u64,
}

/// What a run with [`Config::qp_cache`] counted.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct QpCacheStats {
    /// Records of each NIC's context table (`--qp-cache`).
    pub records: u32,
    /// The sending NIC's cache, and the receiving NIC's (absent when one
    /// NIC is both sides).
    pub a: CacheSide,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub b: Option<CacheSide>,
}

/// One NIC's context cache over a run ([`rnic_driver::CacheCounters`]).
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct CacheSide {
    /// Slots the cache had (`num_queues - qp_cache_first`).
    pub slots: u32,
    /// Directory lookups of packets and doorbells by number, and those
    /// whose QP no slot held.
    pub lookups: u64,
    pub lookup_misses: u64,
    /// `1 - lookup_misses / lookups` (absent: no lookup).
    pub hit_rate: Option<f64>,
    /// Fetches of misses (retries included), QPs evicted for them, and
    /// fetches that found every slot pinned.
    pub fetches: u64,
    pub evictions: u64,
    pub pinned_full: u64,
    /// Records written back to the table.
    pub writebacks: u64,
    /// Most doorbells by number waiting at once.
    pub db_waiting_max: u32,
}

impl CacheSide {
    fn read<D: Device>(ctx: &Context<D>) -> Result<Self> {
        let nic = ctx.nic();
        let c = nic.qp_cache_counters()?;
        let first = nic.qp_cache_first().map_or(nic.id().num_queues, u32::from);
        Ok(Self {
            slots: nic.id().num_queues.saturating_sub(first),
            lookups: c.lookups.into(),
            lookup_misses: c.lookup_misses.into(),
            hit_rate: c.hit_rate(),
            fetches: c.fetch_misses.into(),
            evictions: c.evictions.into(),
            pinned_full: c.pinned_full.into(),
            writebacks: c.writebacks.into(),
            db_waiting_max: c.db_waiting_max.into(),
        })
    }
}

/// What a run with [`Config::reads`] counted.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct ReadStats {
    /// Fraction of messages followed by a READ (`--reads`).
    pub fraction: f64,
    /// READs posted (the READs behind messages and the READs behind their
    /// fenced WRITEs).
    pub posted: u64,
    /// READs whose completion was seen and whose bytes were checked.
    pub checked: u64,
    /// Bytes of those READs.
    pub bytes: u64,
    /// READs followed by a fenced WRITE of new bytes to what they read (and
    /// a READ of them again).
    pub fenced_writes: u64,
    /// READs with bytes wrong (or guard bytes overwritten) when their
    /// completion was seen.
    pub failures: u64,
    /// Bytes still holding their old value (the complement) over those
    /// failures when the CQE was seen: the CQE came before the data, or
    /// the READ before the WRITEs it follows.
    pub stale_bytes: u64,
}

/// What a run with [`Config::atomics`] counted.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct AtomicStats {
    /// Fraction of messages followed by an atomic (`--atomics`).
    pub fraction: f64,
    /// Atomics posted (FETCH_AND_ADD and CMP_AND_SWAP).
    pub posted: u64,
    pub fetch_adds: u64,
    pub cmp_swaps: u64,
    /// Atomic completions seen (any status).
    pub completed: u64,
    /// Completions with status success whose original value was checked.
    pub checked: u64,
    /// Atomics whose completion was wrong (opcode, length, or original
    /// value or guard bytes when the CQE was seen), and counter words
    /// wrong at the end of the run.
    pub failures: u64,
    /// Of those, original values not yet placed when the CQE was seen
    /// (the CQE came before its value).
    pub early: u64,
    /// QPs whose counter word was checked at the end of the run (all but
    /// those that failed or were given up on).
    pub counters_checked: u64,
    /// Atomics the receiving NIC executed (`b.rx_atomic`).
    pub executed: u64,
    /// Duplicate atomics (resends) the receiving NIC answered from its
    /// replay record without executing them (`b.rx_atomic_replay`).
    pub replayed: u64,
}

impl Report {
    /// Anything counted that a correct NIC on a loss-free fabric never does.
    pub fn failed(&self) -> bool {
        self.violations
            + self.corruptions
            + self.lost_completions
            + self.duplicate_completions
            + self.out_of_order_completions
            + self.error_completions
            + self.events.map_or(0, |e| e.missed_interrupts)
            + self.reads.map_or(0, |r| r.failures)
            + self.atomics.map_or(0, |a| a.failures)
            > 0
    }
}

/// What the environment of a run can do besides the verbs: show progress,
/// let the system drain, capture evidence of the first failure.
pub trait Hooks {
    /// Called on every turn of the run loop.
    fn tick(&mut self, _now: u64, _checked: u64) {}
    /// Let every write in flight land (the simulator drains its world).
    /// False: not supported; the run idles `Config::settle` cycles instead.
    fn settle(&mut self) -> bool {
        false
    }
    /// A failure is being seen and none was before: capture evidence now
    /// (before any settling changes the picture).
    fn snapshot(&mut self) {}
    /// Every failure, as it is counted.
    fn failure(&mut self, _f: &Failure) {}
    /// The first failure (after [`Hooks::snapshot`]). Return true to end the
    /// run right away.
    fn first_failure(&mut self, _f: &Failure) -> bool {
        false
    }
    /// The run is over: add what only the environment knows (e.g. DMA
    /// faults the simulated root complex recorded).
    fn finish(&mut self, _report: &mut Report) {}
}

/// Hooks that do nothing.
pub struct NoHooks;
impl Hooks for NoHooks {}

/// Adds the port block's counters of `ctx` under `side.`.
pub fn add_port_counters<D: Device>(
    m: &mut BTreeMap<String, u64>,
    side: &str,
    ctx: &Context<D>,
) -> Result<()> {
    let c = ctx.query_port_counters()?;
    for (k, v) in [
        ("tx_frames", c.tx_frames),
        ("rx_frames", c.rx_frames),
        ("rx_drop_icrc", c.rx_drop_icrc),
        ("rx_drop_malformed", c.rx_drop_malformed),
        ("rx_drop_nobuf", c.rx_drop_nobuf),
        ("rx_drop_qp", c.rx_drop_qp),
        ("rx_drop_psn", c.rx_drop_psn),
        ("rx_nak", c.rx_nak),
        ("rx_read_req", c.rx_read_req),
        ("tx_read_resp", c.tx_read_resp),
        ("rx_read_resp", c.rx_read_resp),
        ("rx_atomic", c.rx_atomic),
        ("rx_atomic_replay", c.rx_atomic_replay),
        ("rx_rd_over", c.rx_rd_over),
        ("tx_retransmits", c.tx_retransmits),
        ("rtx_timeouts", c.rtx_timeouts),
        ("rx_nak_seq", c.rx_nak_seq),
        ("rx_rnr_nak", c.rx_rnr_nak),
        ("rx_drop_guard", c.rx_drop_guard),
        ("rx_drop_transport", c.rx_drop_transport),
        ("rx_drop_wimm", c.rx_drop_wimm),
        ("ring_busy_cycles", c.ring_busy_cycles),
        ("path_takeouts", c.path_takeouts),
        ("path_comebacks", c.path_comebacks),
        ("path_probes", c.path_probes),
        ("path_probe_rtt", c.path_probe_rtt),
        ("lb_dropped", c.lb_dropped),
        ("lb_reordered", c.lb_reordered),
    ] {
        m.insert(format!("{side}.{k}"), u64::from(v));
    }
    Ok(())
}

/// Turns on the run's ordering switch (if any) and sets the CQE ordering
/// mode on a NIC. Other switches are left as they are.
pub fn set_switches<D: Device>(ctx: &Context<D>, brk: Option<Break>, flush: bool) -> Result<()> {
    let nic = ctx.nic();
    if let Some(b) = brk {
        nic.debug_switches().set(b, true)?;
    }
    nic.set_cqe_flush(flush)?;
    Ok(())
}

/// Undoes [`set_switches`]: the run's switch off, RO=0 ordering.
fn clear_switches<D: Device>(ctx: &Context<D>, brk: Option<Break>) -> Result<()> {
    let nic = ctx.nic();
    if let Some(b) = brk {
        nic.debug_switches().set(b, false)?;
    }
    nic.set_cqe_flush(false)?;
    Ok(())
}

#[derive(Debug, Clone, Copy, Default)]
struct Buf {
    src_off: usize,
    dst_off: usize,
    len: usize,
}

/// The READ behind a message: bytes `off..off + len` of its buffer `buf`
/// read back to `at` on the sender; maybe a fenced WRITE of new bytes from
/// `fence_src` to the same remote bytes behind it, and a READ of them
/// again to `reread_at`.
#[derive(Debug, Clone, Copy, Default)]
struct ReadBack {
    buf: usize,
    off: usize,
    len: usize,
    at: usize,
    fenced: bool,
    fence_src: usize,
    reread_at: usize,
}

impl ReadBack {
    /// Where READ `tag` ([`WR_READ`], [`WR_REREAD`]) brings its bytes.
    fn area(&self, tag: u64) -> usize {
        if tag == WR_REREAD {
            self.reread_at
        } else {
            self.at
        }
    }
}

#[derive(Debug, Default)]
struct Slot {
    msg: u64,
    send_busy: bool,
    recv_busy: bool,
    /// The READ (and the READ behind the fenced WRITE) of the message not
    /// completed yet.
    read_busy: bool,
    reread_busy: bool,
    bufs: Vec<Buf>,
    read: Option<ReadBack>,
    /// The atomic behind the message, not completed yet.
    atomic_busy: bool,
    atomic: Option<AtomicOne>,
}

impl Slot {
    fn busy(&self) -> bool {
        self.send_busy || self.recv_busy || self.read_busy || self.reread_busy || self.atomic_busy
    }
}

/// The atomic behind a message: its operation, the counter's value before
/// it (what it must bring back) and where that lands on the sender.
#[derive(Debug, Clone, Copy)]
struct AtomicOne {
    op: AtomicOp,
    before: u64,
    /// The counter's value after it.
    after: u64,
    /// The original-value word on the sender.
    at: usize,
    /// The QP's `n`th atomic.
    n: u64,
}

/// The guard keys of an atomic's original-value word (before, after).
fn atomic_guard_keys(seed: u64, qp: u32, msg: u64) -> (u64, u64) {
    let k = pattern::key(seed, qp, msg, 0xa70);
    (k, k ^ 0x5a5a)
}

/// The guard keys of a QP's counter word on the receiver.
fn counter_guard_keys(seed: u64, qp: u32) -> (u64, u64) {
    atomic_guard_keys(seed, qp, u64::MAX)
}

/// `guard, value (little-endian), guard`: what an 8-byte word framed by
/// guards must hold.
fn framed(keys: (u64, u64), v: u64) -> [u8; 8 + 2 * GUARD] {
    let mut w = [0u8; 8 + 2 * GUARD];
    pattern::fill(keys.0, &mut w[..GUARD]);
    w[GUARD..GUARD + 8].copy_from_slice(&v.to_le_bytes());
    pattern::fill(keys.1, &mut w[GUARD + 8..]);
    w
}

fn word_of(w: &[u8; 8 + 2 * GUARD]) -> u64 {
    u64::from_le_bytes(w[GUARD..GUARD + 8].try_into().expect("8 bytes"))
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum QpLife {
    Live,
    /// An error completion was seen: no more posts.
    Dead,
    /// Given up on (nothing more expected).
    Retired,
}

struct QpRun<D: Device> {
    src: DmaBuffer,
    dst: DmaBuffer,
    src_mr: Rc<MemoryRegion<D>>,
    dst_mr: Rc<MemoryRegion<D>>,
    /// Where this QP's slots start in its (maybe shared) region.
    base: usize,
    /// Next message number to post.
    next_msg: u64,
    /// Oldest message whose send / receive completion is outstanding.
    send_next: u64,
    recv_next: u64,
    slots: Vec<Slot>,
    life: QpLife,
    last_progress: u64,
    recv_wr_id: u64,
    /// READs and atomics outstanding, in posting order: (message,
    /// [`WR_READ`], [`WR_REREAD`] or [`WR_ATOMIC`]).
    extra: VecDeque<(u64, u64)>,
    /// The atomic area behind the slots (same offset on both sides).
    atomic_base: usize,
    /// The counter word's value once every atomic posted has executed.
    counter: u64,
    /// Atomics posted on this QP.
    atomics: u64,
}

impl<D: Device> QpRun<D> {
    fn busy(&self) -> bool {
        self.send_next < self.next_msg || self.recv_next < self.next_msg || !self.extra.is_empty()
    }

    fn slot_of(&self, msg: u64) -> usize {
        (msg % self.slots.len() as u64) as usize
    }

    fn advance_send(&mut self) {
        while self.send_next < self.next_msg {
            let s = &self.slots[self.slot_of(self.send_next)];
            if s.msg == self.send_next && s.send_busy {
                break;
            }
            self.send_next += 1;
        }
    }

    fn advance_recv(&mut self) {
        while self.recv_next < self.next_msg {
            let s = &self.slots[self.slot_of(self.recv_next)];
            if s.msg == self.recv_next && s.recv_busy {
                break;
            }
            self.recv_next += 1;
        }
    }
}

/// Outcome of checking a READ's read-back area.
#[derive(Debug, Default)]
struct ReadCheck {
    wrong: u64,
    /// Wrong bytes holding the complement (never written).
    stale: u64,
    /// Wrong bytes holding the other version of the bytes: the fenced
    /// WRITE's new ones where the old ones were due, or the other way
    /// round.
    other: u64,
    guards: u64,
    /// (byte, expected, found)
    first: Option<(usize, u8, u8)>,
}

impl ReadCheck {
    fn clean(&self) -> bool {
        self.wrong == 0 && self.guards == 0
    }
}

/// A uniform fraction in `0..1` from `r`.
fn unit(r: &mut SplitMix) -> f64 {
    (r.next() >> 11) as f64 / (1u64 << 53) as f64
}

/// The guard keys of the area of READ `tag` (before, after).
fn read_guard_keys(key: u64, tag: u64) -> (u64, u64) {
    let k = !key ^ 0x7265_6164 ^ (tag << 32);
    (k, k ^ 0x5a5a)
}

/// The bytes READ `tag` must bring, from the bytes the message wrote.
fn read_want(tag: u64, old: u8) -> u8 {
    if tag == WR_REREAD {
        old ^ FENCE_XOR
    } else {
        old
    }
}

/// Outcome of checking one message's bytes.
#[derive(Debug, Default)]
struct Check {
    wrong: u64,
    guards: u64,
    first: Option<(usize, usize, u8, u8)>,
}

impl Check {
    fn clean(&self) -> bool {
        self.wrong == 0 && self.guards == 0
    }
}

/// Runs the torture test from `a` to `b`. Both contexts must have their
/// port addresses set (`addr_a`, `addr_b`); the run creates its own PDs,
/// CQs, QPs and memory regions and sets the debug switches on both NICs
/// (and clears them again at the end).
pub fn run<D: Device>(
    a: &Context<D>,
    addr_a: PortAddr,
    b: &Context<D>,
    addr_b: PortAddr,
    cfg: &Config,
    info: &RunInfo,
    hooks: &mut dyn Hooks,
) -> Result<Report> {
    cfg.validate()?;
    // one NIC looped back on chip is both sides
    let one_nic = std::ptr::eq(a, b);
    let sides: &[&Context<D>] = if one_nic { &[a] } else { &[a, b] };
    if cfg.qp_cache > 0 {
        for ctx in sides {
            ctx.enable_qp_cache(cfg.qp_cache).map_err(|e| {
                Error::Config(format!(
                    "--qp-cache {}: the NIC's context cache: {e}",
                    cfg.qp_cache
                ))
            })?;
        }
    }
    for ctx in sides {
        let max_qp = ctx.query_device()?.max_qp;
        if cfg.qps > max_qp {
            return Err(Error::Config(format!(
                "--qps {}: the NIC has {max_qp} queue pairs{}",
                cfg.qps,
                if cfg.qp_cache > 0 {
                    format!(" with --qp-cache {} (its context table's records, less the reserved QP numbers)", cfg.qp_cache)
                } else {
                    String::new()
                }
            )));
        }
    }
    if cfg.reads() {
        // (one NIC looped back on chip is both sides)
        for (side, ctx, bit, what) in [
            ("a", a, CAPS_READ_REQUESTER, "issues no RDMA READ"),
            ("b", b, CAPS_READ_RESPONDER, "answers no RDMA READ"),
        ] {
            let caps = ctx.nic().id().caps;
            if caps & (1 << bit) == 0 {
                return Err(Error::Config(format!(
                    "--reads {}: NIC {side} {what} (id.caps {caps:#x}, bit {bit} clear: a build without READ)",
                    cfg.reads
                )));
            }
        }
    }
    if cfg.atomics() {
        let (verbs, caps) = (a.nic().id().verbs, b.nic().id().caps);
        let why = if verbs & (1 << VERBS_ATOMIC) == 0 {
            Some(format!(
                "NIC a issues no atomics (id.verbs {verbs:#x}, bit {VERBS_ATOMIC} clear"
            ))
        } else if caps & (1 << CAPS_ATOMIC_RESPONDER) == 0 {
            Some(format!(
                "NIC b serves no atomics (id.caps {caps:#x}, bit {CAPS_ATOMIC_RESPONDER} clear"
            ))
        } else {
            None
        };
        if let Some(why) = why {
            return Err(Error::Config(format!(
                "--atomics {}: {why}: a build without ATOMIC_EN)",
                cfg.atomics
            )));
        }
    }
    set_switches(a, cfg.brk, cfg.flush)?;
    set_switches(b, cfg.brk, cfg.flush)?;
    let res = Runner::new(a, addr_a, b, addr_b, cfg, info)
        .and_then(|mut r| r.run(hooks))
        .and_then(|mut rep| {
            add_port_counters(&mut rep.counters, "a", a)?;
            // one NIC talking to itself (on-chip loopback) has one set
            let side_b = if one_nic {
                "a"
            } else {
                add_port_counters(&mut rep.counters, "b", b)?;
                "b"
            };
            if cfg.qp_cache > 0 {
                rep.qp_cache = Some(QpCacheStats {
                    records: cfg.qp_cache,
                    a: CacheSide::read(a)?,
                    b: if one_nic {
                        None
                    } else {
                        Some(CacheSide::read(b)?)
                    },
                });
            }
            let c = |k: &str| rep.counters.get(&format!("{side_b}.{k}")).copied();
            let (executed, replayed) = (c("rx_atomic"), c("rx_atomic_replay"));
            if let Some(st) = rep.atomics.as_mut() {
                st.executed = executed.unwrap_or(0);
                st.replayed = replayed.unwrap_or(0);
            }
            Ok(rep)
        });
    // Leave the NICs as the run found them.
    let _ = clear_switches(a, cfg.brk);
    let _ = clear_switches(b, cfg.brk);
    res
}

/// Memory regions the run registers per side at most: what the NIC's MR
/// table holds (`id.mrs`; [`LEGACY_NIC_MRS`] for a build that reads 0
/// there), the smaller of the two NICs, half of it when both sides are one
/// NIC (on-chip loopback: both sides' regions are in its table). With more
/// QPs, QP `i` takes region `i % regions`, and QPs share a region in
/// slices of their own (a region is `ceil(qps / regions)` QPs' buffers).
pub fn regions_per_side<D: Device>(a: &Context<D>, b: &Context<D>) -> u32 {
    let held = |c: &Context<D>| match c.nic().id().mrs {
        0 => LEGACY_NIC_MRS,
        n => n.min(rnic_verbs::MAX_MR),
    };
    if std::ptr::eq(a, b) {
        (held(a) / 2).max(1)
    } else {
        held(a).min(held(b))
    }
}

struct Runner<'a, D: Device> {
    b: &'a Context<D>,
    cfg: &'a Config,
    conns: Connections<D>,
    qps: Vec<QpRun<D>>,
    /// QP index by QP number, per side.
    by_qpn_a: Vec<Option<u32>>,
    by_qpn_b: Vec<Option<u32>>,
    rep: Report,
    snapshot_taken: bool,
    issued: u64,
    scratch: Vec<u8>,
    scratch2: Vec<u8>,
    pmtu: u64,
}

impl<'a, D: Device> Runner<'a, D> {
    fn new(
        a: &'a Context<D>,
        addr_a: PortAddr,
        b: &'a Context<D>,
        addr_b: PortAddr,
        cfg: &'a Config,
        info: &RunInfo,
    ) -> Result<Self> {
        let k = cfg.buffers() as u32;
        let rq_depth = cfg.window.next_power_of_two().max(2);
        let wqes = cfg.wqes_per_message() as u32;
        // READs and atomics need the responder to let them in (QP and
        // region).
        let read = if cfg.reads() {
            AccessFlags::REMOTE_READ
        } else {
            AccessFlags::empty()
        } | if cfg.atomics() {
            AccessFlags::REMOTE_ATOMIC
        } else {
            AccessFlags::empty()
        };
        let opts = ConnOpts {
            mtu: cfg.mtu,
            sq_depth: (cfg.window * wqes).next_power_of_two().max(2),
            rq_depth,
            retry: cfg.retry,
            spray_log: cfg.spray_log,
            qp_type: if cfg.mp {
                rnic_verbs::QpType::Mp
            } else {
                rnic_verbs::QpType::Rc
            },
            path_thresh: cfg.path_thresh,
            qp_access: AccessFlags::REMOTE_WRITE | read,
            ..ConnOpts::default()
        };
        let conns = conn::connect(
            a,
            addr_a,
            b,
            addr_b,
            cfg.qps,
            &opts,
            cfg.cq_entries() as u32,
            cfg.seed,
        )?;
        let slot_bytes = cfg.slot_bytes();
        let region = cfg.region_bytes();
        let access = AccessFlags::LOCAL_WRITE | AccessFlags::REMOTE_WRITE | read;
        let mut qps = Vec::with_capacity(cfg.qps as usize);
        let mut by_qpn_a = Vec::new();
        let mut by_qpn_b = Vec::new();
        // one region per QP, or as many as the NICs hold shared in slices
        let mrs = cfg.qps.min(regions_per_side(a, b)) as usize;
        let shared = region * (cfg.qps as usize).div_ceil(mrs);
        let mut regions = Vec::with_capacity(mrs);
        for _ in 0..mrs {
            let src = a.alloc_dma(shared)?;
            let dst = b.alloc_dma(shared)?;
            let src_mr = a.reg_mr(&conns.pd_a, &src, 0, shared, AccessFlags::LOCAL_WRITE)?;
            let dst_mr = b.reg_mr(&conns.pd_b, &dst, 0, shared, access)?;
            regions.push((src, dst, Rc::new(src_mr), Rc::new(dst_mr)));
        }
        for (i, p) in conns.pairs.iter().enumerate() {
            let (src, dst, src_mr, dst_mr) = &regions[i % mrs];
            let (src, dst) = (src.clone(), dst.clone());
            let (src_mr, dst_mr) = (Rc::clone(src_mr), Rc::clone(dst_mr));
            let base = (i / mrs) * region;
            for (v, qpn) in [
                (&mut by_qpn_a, p.send.qp_num()),
                (&mut by_qpn_b, p.recv.qp_num()),
            ] {
                let qpn = qpn as usize;
                if v.len() <= qpn {
                    v.resize(qpn + 1, None);
                }
                v[qpn] = Some(i as u32);
            }
            qps.push(QpRun {
                src,
                dst,
                src_mr,
                dst_mr,
                base,
                next_msg: 0,
                send_next: 0,
                recv_next: 0,
                slots: (0..cfg.window)
                    .map(|_| Slot {
                        bufs: Vec::with_capacity(k as usize),
                        ..Slot::default()
                    })
                    .collect(),
                life: QpLife::Live,
                last_progress: 0,
                recv_wr_id: 0,
                extra: VecDeque::new(),
                atomic_base: base + slot_bytes * cfg.window as usize,
                counter: 0,
                atomics: 0,
            });
        }
        let mut r = Self {
            b,
            cfg,
            conns,
            qps,
            by_qpn_a,
            by_qpn_b,
            rep: Report {
                seed: cfg.seed,
                transport: if cfg.mp { "mp" } else { "rc" }.into(),
                fabric: info.fabric.clone(),
                brk: cfg.brk.map(|b| b.name().to_string()),
                flush: cfg.flush,
                data_w: info.data_w,
                qps: cfg.qps,
                writes_per_imm: cfg.writes_per_imm,
                min_size: cfg.min_size,
                max_size: cfg.max_size,
                window: cfg.window,
                mtu: cfg.mtu.bytes(),
                spray_ports: 1 << cfg.spray_log,
                path_thresh: a.path_thresh().ok(),
                messages_requested: cfg.messages,
                events: (cfg.completions == Completions::Event).then(EventStats::default),
                reads: cfg.reads().then(|| ReadStats {
                    fraction: cfg.reads,
                    ..ReadStats::default()
                }),
                atomics: cfg.atomics().then(|| AtomicStats {
                    fraction: cfg.atomics,
                    ..AtomicStats::default()
                }),
                ..Report::default()
            },
            snapshot_taken: false,
            issued: 0,
            scratch: vec![0; cfg.max_size as usize + 2 * GUARD],
            scratch2: vec![0; cfg.max_size as usize + 2 * GUARD],
            pmtu: u64::from(cfg.mtu.bytes()),
        };
        // Every counter word starts at a seeded value, framed by guards.
        if cfg.atomics() {
            for (i, q) in r.qps.iter_mut().enumerate() {
                q.counter = SplitMix::for_message(cfg.seed ^ 0xa70, i as u32, u64::MAX).next();
                let w = framed(counter_guard_keys(cfg.seed, i as u32), q.counter);
                q.dst.write(q.atomic_base, &w);
            }
        }
        // Keep receive WQEs posted: one per message in flight, at least.
        for i in 0..r.qps.len() {
            for _ in 0..rq_depth {
                r.post_recv(i)?;
            }
        }
        Ok(r)
    }

    fn now(&self) -> u64 {
        self.b.device().now()
    }

    fn post_recv(&mut self, i: usize) -> Result<()> {
        let q = &mut self.qps[i];
        let wr_id = q.recv_wr_id;
        q.recv_wr_id += 1;
        self.conns.pairs[i].recv.post_recv(&RecvWr {
            wr_id,
            sg_list: &[],
        })?;
        Ok(())
    }

    /// Size of one buffer: uniform, or (one in four) right around a
    /// multiple of the PMTU, or (one in sixteen) the smallest.
    fn size(&self, r: &mut SplitMix) -> usize {
        let (lo, hi) = (u64::from(self.cfg.min_size), u64::from(self.cfg.max_size));
        let n = if r.one_in(16) {
            lo
        } else if hi >= self.pmtu && r.one_in(4) {
            let m = r.range(1, hi / self.pmtu) * self.pmtu;
            (m + r.range(0, 2)).saturating_sub(1).clamp(lo, hi)
        } else {
            r.range(lo, hi)
        };
        n as usize
    }

    /// Lays out, prepares and posts the next message of QP `i`.
    fn post_message(&mut self, i: usize) -> Result<()> {
        let cfg = self.cfg;
        let k = cfg.buffers();
        let seed = cfg.seed;
        let msg = self.qps[i].next_msg;
        let mut r = SplitMix::for_message(seed, i as u32, msg);
        let si = self.qps[i].slot_of(msg);
        let slot_base = self.qps[i].base + si * cfg.slot_bytes();
        let mut bufs = std::mem::take(&mut self.qps[i].slots[si].bufs);
        bufs.clear();
        let (mut src_cur, mut dst_cur) = (slot_base, slot_base);
        for _ in 0..k {
            let len = self.size(&mut r);
            let src_off = src_cur + r.range(0, MAX_SKEW) as usize;
            let dst_off = dst_cur + GUARD + r.range(0, MAX_SKEW) as usize;
            src_cur = src_off + len;
            dst_cur = dst_off + len + GUARD;
            bufs.push(Buf {
                src_off,
                dst_off,
                len,
            });
        }
        let q = &self.qps[i];
        for (j, bf) in bufs.iter().enumerate() {
            let key = pattern::key(seed, i as u32, msg, j as u32);
            // The sender's data.
            let data = &mut self.scratch[..bf.len];
            pattern::fill(key, data);
            q.src.write(bf.src_off, data);
            // The receiver's slot: guard, the complement of the data, guard.
            let n = bf.len + 2 * GUARD;
            let pre = &mut self.scratch2[..n];
            pattern::fill(!key, &mut pre[..GUARD]);
            for (d, s) in pre[GUARD..GUARD + bf.len].iter_mut().zip(data.iter()) {
                *d = !*s;
            }
            pattern::fill(!key ^ 0x5a5a, &mut pre[GUARD + bf.len..]);
            q.dst.write(bf.dst_off - GUARD, pre);
        }
        // A READ behind the message, of bytes it wrote, after a fraction
        // `reads` of messages (the layout above drew first: a run without
        // READs lays out every message as it always did).
        let read = if cfg.reads() && unit(&mut r) < cfg.reads {
            let j = r.range(0, k as u64 - 1) as usize;
            let blen = bufs[j].len;
            let (off, len) = if r.one_in(2) {
                (0, blen)
            } else {
                let len = r.range(1, blen as u64) as usize;
                (r.range(0, (blen - len) as u64) as usize, len)
            };
            // the slot's three segments past its buffers (on the sender)
            let seg = |n: usize| slot_base + (k + n) * cfg.segment_bytes();
            let rb = ReadBack {
                buf: j,
                off,
                len,
                at: seg(0) + GUARD + r.range(0, MAX_SKEW) as usize,
                fenced: r.one_in(2),
                fence_src: seg(1) + r.range(0, MAX_SKEW) as usize,
                reread_at: seg(2) + GUARD + r.range(0, MAX_SKEW) as usize,
            };
            // Each READ's area: guard, the complement of the bytes it must
            // bring, guard; and the fenced WRITE's new bytes.
            let key = pattern::key(seed, i as u32, msg, j as u32);
            let old = &mut self.scratch[..blen];
            pattern::fill(key, old);
            let old = &old[off..off + len];
            let tags: &[u64] = if rb.fenced {
                &[WR_READ, WR_REREAD]
            } else {
                &[WR_READ]
            };
            for &tag in tags {
                let (g0, g1) = read_guard_keys(key, tag);
                let n = len + 2 * GUARD;
                let pre = &mut self.scratch2[..n];
                pattern::fill(g0, &mut pre[..GUARD]);
                for (d, s) in pre[GUARD..GUARD + len].iter_mut().zip(old) {
                    *d = !read_want(tag, *s);
                }
                pattern::fill(g1, &mut pre[GUARD + len..]);
                q.src.write(rb.area(tag) - GUARD, pre);
            }
            if rb.fenced {
                let new = &mut self.scratch2[..len];
                for (d, s) in new.iter_mut().zip(old) {
                    *d = *s ^ FENCE_XOR;
                }
                q.src.write(rb.fence_src, new);
            }
            Some(rb)
        } else {
            None
        };
        let sges: Vec<[rnic_verbs::Sge; 1]> = bufs
            .iter()
            .map(|bf| Ok([q.src_mr.sge(bf.src_off, bf.len as u32)?]))
            .collect::<Result<_>>()?;
        let mut wrs = Vec::with_capacity(k);
        for (j, bf) in bufs.iter().enumerate() {
            let last = j + 1 == k;
            wrs.push(SendWr {
                wr_id: (msg << 8) | j as u64,
                opcode: if last {
                    WrOpcode::RdmaWriteWithImm
                } else {
                    WrOpcode::RdmaWrite
                },
                send_flags: if last {
                    SendFlags::SIGNALED
                } else {
                    SendFlags::empty()
                },
                sg_list: &sges[j],
                imm_data: last.then(|| (msg as u32).to_be()),
                rdma: Some(q.dst_mr.rdma_info(bf.dst_off)?),
            });
        }
        // The READ (signaled), and maybe the WRITE of new bytes to the same
        // remote bytes fenced behind it (not signaled) and a READ of them
        // again (signaled).
        let read_sges = match &read {
            Some(rb) => [
                [q.src_mr.sge(rb.at, rb.len as u32)?],
                [q.src_mr.sge(rb.fence_src, rb.len as u32)?],
                [q.src_mr.sge(rb.reread_at, rb.len as u32)?],
            ],
            None => Default::default(),
        };
        if let Some(rb) = &read {
            let remote = q.dst_mr.rdma_info(bufs[rb.buf].dst_off + rb.off)?;
            wrs.push(SendWr {
                wr_id: (msg << 8) | WR_READ,
                opcode: WrOpcode::RdmaRead,
                send_flags: SendFlags::SIGNALED,
                sg_list: &read_sges[0],
                imm_data: None,
                rdma: Some(remote),
            });
            if rb.fenced {
                wrs.push(SendWr {
                    wr_id: (msg << 8) | WR_FENCED_WRITE,
                    opcode: WrOpcode::RdmaWrite,
                    send_flags: SendFlags::FENCE,
                    sg_list: &read_sges[1],
                    imm_data: None,
                    rdma: Some(remote),
                });
                wrs.push(SendWr {
                    wr_id: (msg << 8) | WR_REREAD,
                    opcode: WrOpcode::RdmaRead,
                    send_flags: SendFlags::SIGNALED,
                    sg_list: &read_sges[2],
                    imm_data: None,
                    rdma: Some(remote),
                });
            }
        }
        // An atomic behind the message, after a fraction `atomics` of
        // messages; its own generator leaves the choices above as they are.
        let mut ra = SplitMix::for_message(seed ^ 0xa70, i as u32, msg);
        let atomic = if cfg.atomics() && unit(&mut ra) < cfg.atomics {
            let (n, before) = (q.atomics, q.counter);
            let v = ra.next();
            let after = before.wrapping_add(v);
            // alternately FETCH_AND_ADD and CMP_AND_SWAP (which must hit)
            let op = if n % 2 == 0 {
                AtomicOp::FetchAndAdd { add: v }
            } else {
                AtomicOp::CmpAndSwp {
                    compare: before,
                    swap: after,
                }
            };
            let at = q.atomic_base + si * ATOMIC_STRIDE + GUARD;
            // the complement of the value due, so a value not placed shows
            q.src.write(
                at - GUARD,
                &framed(atomic_guard_keys(seed, i as u32, msg), !before),
            );
            Some(AtomicOne {
                op,
                before,
                after,
                at,
                n,
            })
        } else {
            None
        };
        let atomic_wr = match &atomic {
            Some(a) => {
                let remote = q.dst_mr.rdma_info(q.atomic_base + GUARD)?;
                Some(AtomicWr {
                    wr_id: (msg << 8) | WR_ATOMIC,
                    op: a.op,
                    send_flags: SendFlags::SIGNALED,
                    sge: q.src_mr.sge(a.at, 8)?,
                    remote_addr: remote.remote_addr,
                    rkey: remote.rkey,
                })
            }
            None => None,
        };
        let now = self.now();
        let q = &mut self.qps[i];
        if !q.busy() {
            q.last_progress = now;
        }
        let s = q.slot_of(msg);
        let fenced = read.is_some_and(|rb| rb.fenced);
        q.slots[s] = Slot {
            msg,
            send_busy: true,
            recv_busy: true,
            read_busy: read.is_some(),
            reread_busy: fenced,
            bufs,
            read,
            atomic_busy: atomic.is_some(),
            atomic,
        };
        if read.is_some() {
            q.extra.push_back((msg, WR_READ));
            if fenced {
                q.extra.push_back((msg, WR_REREAD));
            }
            if let Some(st) = self.rep.reads.as_mut() {
                st.posted += 1 + u64::from(fenced);
                st.fenced_writes += u64::from(fenced);
            }
        }
        if let Some(a) = &atomic {
            q.extra.push_back((msg, WR_ATOMIC));
            q.atomics += 1;
            q.counter = a.after;
            if let Some(st) = self.rep.atomics.as_mut() {
                st.posted += 1;
                match a.op {
                    AtomicOp::FetchAndAdd { .. } => st.fetch_adds += 1,
                    AtomicOp::CmpAndSwp { .. } => st.cmp_swaps += 1,
                }
            }
        }
        q.next_msg += 1;
        self.issued += 1;
        let qp = &mut self.conns.pairs[i].send;
        qp.post_send_list(&wrs)?;
        // (behind the message and its READs on the same send queue)
        if let Some(wr) = &atomic_wr {
            qp.post_atomic(wr)?;
        }
        Ok(())
    }

    fn can_post(&self, i: usize) -> bool {
        let q = &self.qps[i];
        if q.life != QpLife::Live || self.issued >= self.cfg.messages {
            return false;
        }
        !q.slots[q.slot_of(q.next_msg)].busy()
    }

    /// Records a failure seen at `cycle`; true to stop the run.
    #[allow(clippy::too_many_arguments)]
    fn fail_at(
        &mut self,
        hooks: &mut dyn Hooks,
        kind: &str,
        i: u32,
        msg: u64,
        cycle: u64,
        messages_before: u64,
        detail: String,
    ) -> bool {
        let p = &self.conns.pairs[i as usize];
        let f = Failure {
            kind: kind.into(),
            cycle,
            qp: i,
            qpn_send: p.send.qp_num(),
            qpn_recv: p.recv.qp_num(),
            msg,
            messages_before,
            detail,
        };
        hooks.failure(&f);
        if self.rep.first_failure.is_some() {
            return false;
        }
        if !self.snapshot_taken {
            self.snapshot_taken = true;
            hooks.snapshot();
        }
        let stop = hooks.first_failure(&f);
        self.rep.first_failure = Some(f);
        stop
    }

    fn fail(
        &mut self,
        hooks: &mut dyn Hooks,
        kind: &str,
        i: u32,
        msg: u64,
        detail: String,
    ) -> bool {
        let (now, before) = (self.now(), self.rep.messages);
        self.fail_at(hooks, kind, i, msg, now, before, detail)
    }

    /// Compares every byte of message slot `s` of QP `i` with what it must
    /// hold.
    fn check(&mut self, i: usize, s: usize) -> Check {
        let seed = self.cfg.seed;
        let q = &self.qps[i];
        let slot = &q.slots[s];
        // The fenced WRITE behind the message's READ may have landed: its
        // new bytes are as right as the message's own there.
        let fence = slot.read.filter(|rb| rb.fenced);
        let mut c = Check::default();
        for (j, bf) in slot.bufs.iter().enumerate() {
            let key = pattern::key(seed, i as u32, slot.msg, j as u32);
            let n = bf.len + 2 * GUARD;
            let want = &mut self.scratch[..n];
            pattern::fill(!key, &mut want[..GUARD]);
            pattern::fill(key, &mut want[GUARD..GUARD + bf.len]);
            pattern::fill(!key ^ 0x5a5a, &mut want[GUARD + bf.len..]);
            let got = &mut self.scratch2[..n];
            q.dst.read(bf.dst_off - GUARD, got);
            if let Some(rb) = fence.filter(|rb| rb.buf == j) {
                let r = GUARD + rb.off..GUARD + rb.off + rb.len;
                for (g, w) in got[r.clone()].iter_mut().zip(&want[r]) {
                    if *g == *w ^ FENCE_XOR {
                        *g = *w;
                    }
                }
            }
            if want == got {
                continue;
            }
            for (x, (w, g)) in want.iter().zip(got.iter()).enumerate() {
                if w == g {
                    continue;
                }
                if x < GUARD || x >= GUARD + bf.len {
                    c.guards += 1;
                } else {
                    c.wrong += 1;
                    if c.first.is_none() {
                        c.first = Some((j, x - GUARD, *w, *g));
                    }
                }
            }
        }
        c
    }

    fn settle(&mut self, hooks: &mut dyn Hooks) {
        if hooks.settle() {
            return;
        }
        let dev = self.b.device();
        let until = dev.now() + self.cfg.settle;
        while dev.now() < until {
            dev.idle();
        }
    }

    /// A receive completion (context B). Returns true to stop the run.
    fn on_recv(&mut self, wc: &WorkCompletion, hooks: &mut dyn Hooks) -> Result<bool> {
        let Some(i) = self.by_qpn_b.get(wc.qp_num as usize).copied().flatten() else {
            self.rep.duplicate_completions += 1;
            return Ok(self.fail(
                hooks,
                "duplicate",
                0,
                0,
                format!("receive completion for unknown QP {}: {wc:?}", wc.qp_num),
            ));
        };
        let iu = i as usize;
        let now = self.now();
        self.qps[iu].last_progress = now;
        if wc.status != WcStatus::Success {
            self.rep.error_completions += 1;
            if self.qps[iu].life == QpLife::Live {
                self.qps[iu].life = QpLife::Dead;
            }
            return Ok(self.fail(
                hooks,
                "error",
                i,
                self.qps[iu].recv_next,
                format!("receive completion with status {:?}", wc.status),
            ));
        }
        let Some(imm) = wc.imm_data.map(u32::from_be) else {
            self.rep.corruptions += 1;
            return Ok(self.fail(
                hooks,
                "corruption",
                i,
                self.qps[iu].recv_next,
                format!("receive completion without immediate: {wc:?}"),
            ));
        };
        let q = &self.qps[iu];
        let msg = q.recv_next + u64::from(imm.wrapping_sub(q.recv_next as u32));
        let s = q.slot_of(msg);
        if msg >= q.next_msg || !(q.slots[s].msg == msg && q.slots[s].recv_busy) {
            self.rep.duplicate_completions += 1;
            return Ok(self.fail(
                hooks,
                "duplicate",
                i,
                msg,
                format!("receive completion for message {msg} (immediate {imm:#x}), which is not in flight"),
            ));
        }
        let mut stop = false;
        if msg != q.recv_next {
            self.rep.out_of_order_completions += 1;
            let next = q.recv_next;
            stop |= self.fail(
                hooks,
                "out-of-order",
                i,
                msg,
                format!("receive completion of message {msg} before that of message {next}"),
            );
        }
        let q = &self.qps[iu];
        let last_len = q.slots[s].bufs.last().map_or(0, |b| b.len);
        let total: usize = q.slots[s].bufs.iter().map(|b| b.len).sum();
        if wc.opcode != WcOpcode::RecvRdmaWithImm || wc.byte_len as usize != last_len {
            self.rep.corruptions += 1;
            stop |= self.fail(
                hooks,
                "corruption",
                i,
                msg,
                format!(
                    "receive completion of message {msg}: opcode {:?} byte_len {} (expected RecvRdmaWithImm, {last_len})",
                    wc.opcode, wc.byte_len
                ),
            );
        }
        // The moment of truth: every byte of every buffer, right now.
        let c = self.check(iu, s);
        let (seen_at, before) = (self.now(), self.rep.messages);
        self.rep.messages += 1;
        self.rep.bytes += total as u64;
        if !c.clean() {
            let (j, off, want, got) = c.first.unwrap_or((0, 0, 0, 0));
            let bf = self.qps[iu].slots[s]
                .bufs
                .get(j)
                .copied()
                .unwrap_or_default();
            let at_cqe = format!(
                "{} of {total} bytes wrong when the CQE of message {msg} was seen (first: buffer {j} of {}, {} B at offset {:#x}, byte {off}: expected {want:#04x}, found {got:#04x}{}); {} guard bytes overwritten",
                c.wrong,
                self.cfg.buffers(),
                bf.len,
                bf.dst_off,
                if got == !want { " = old value" } else { "" },
                c.guards
            );
            // Stale or corrupt? Decided once everything in flight has
            // landed; the evidence is taken before.
            if !self.snapshot_taken {
                self.snapshot_taken = true;
                hooks.snapshot();
            }
            self.settle(hooks);
            let later = self.check(iu, s);
            if later.clean() {
                self.rep.violations += 1;
                self.rep.stale_bytes += c.wrong;
                stop |= self.fail_at(hooks, "violation", i, msg, seen_at, before, at_cqe);
            } else {
                self.rep.corruptions += 1;
                let (j, off, want, got) = later.first.unwrap_or((0, 0, 0, 0));
                stop |= self.fail_at(
                    hooks,
                    "corruption",
                    i,
                    msg,
                    seen_at,
                    before,
                    format!(
                        "{at_cqe}; once everything landed still {} bytes wrong (first: buffer {j} byte {off}: expected {want:#04x}, found {got:#04x}), {} guard bytes",
                        later.wrong, later.guards
                    ),
                );
            }
        }
        let q = &mut self.qps[iu];
        q.slots[s].recv_busy = false;
        q.advance_recv();
        if q.life == QpLife::Live {
            self.post_recv(iu)?;
        }
        Ok(stop)
    }

    /// A send completion (context A). Returns true to stop the run.
    fn on_send(&mut self, wc: &WorkCompletion, hooks: &mut dyn Hooks) -> bool {
        let Some(i) = self.by_qpn_a.get(wc.qp_num as usize).copied().flatten() else {
            self.rep.duplicate_completions += 1;
            return self.fail(
                hooks,
                "duplicate",
                0,
                0,
                format!("send completion for unknown QP {}: {wc:?}", wc.qp_num),
            );
        };
        let iu = i as usize;
        let now = self.now();
        self.qps[iu].last_progress = now;
        let msg = wc.wr_id >> 8;
        let j = (wc.wr_id & 0xff) as usize;
        if wc.status != WcStatus::Success {
            self.rep.error_completions += 1;
            if self.qps[iu].life == QpLife::Live {
                self.qps[iu].life = QpLife::Dead;
            }
            let what = match wc.wr_id & 0xff {
                WR_READ => "READ".to_string(),
                WR_FENCED_WRITE => "fenced WRITE".to_string(),
                WR_REREAD => "READ behind the fenced WRITE".to_string(),
                WR_ATOMIC => "atomic".to_string(),
                _ => format!("buffer {j}"),
            };
            if wc.wr_id & 0xff == WR_ATOMIC {
                if let Some(st) = self.rep.atomics.as_mut() {
                    st.completed += 1;
                }
            }
            return self.fail(
                hooks,
                "error",
                i,
                msg,
                format!(
                    "send completion of message {msg} {what} with status {:?} (NAK syndrome {:#x})",
                    wc.status, wc.vendor_err
                ),
            );
        }
        if self.cfg.reads() && matches!(wc.wr_id & 0xff, WR_READ | WR_REREAD) {
            return self.on_read(wc, i, hooks);
        }
        if self.cfg.atomics() && wc.wr_id & 0xff == WR_ATOMIC {
            return self.on_atomic(wc, i, hooks);
        }
        let q = &self.qps[iu];
        let s = q.slot_of(msg);
        if j + 1 != self.cfg.buffers()
            || msg >= q.next_msg
            || !(q.slots[s].msg == msg && q.slots[s].send_busy)
        {
            self.rep.duplicate_completions += 1;
            return self.fail(
                hooks,
                "duplicate",
                i,
                msg,
                format!("send completion of message {msg} buffer {j}, which is not in flight (or not signaled)"),
            );
        }
        let mut stop = false;
        if msg != q.send_next {
            self.rep.out_of_order_completions += 1;
            let next = q.send_next;
            stop = self.fail(
                hooks,
                "out-of-order",
                i,
                msg,
                format!("send completion of message {msg} before that of message {next}"),
            );
        }
        // (the READ of an earlier message was posted before this one)
        let q = &self.qps[iu];
        if let Some(&(m, t)) = q.extra.front().filter(|(m, _)| *m < msg) {
            self.rep.out_of_order_completions += 1;
            stop |= self.fail(
                hooks,
                "out-of-order",
                i,
                msg,
                format!(
                    "send completion of message {msg} before that of the {} of message {m}",
                    extra_name(t)
                ),
            );
        }
        let q = &mut self.qps[iu];
        q.slots[s].send_busy = false;
        q.advance_send();
        stop
    }

    /// Takes the READ or atomic `(msg, tag)` of QP `i` off the list of
    /// those in flight, failing one that is not on it (a duplicate: `Err`
    /// with whether to stop) or that completes before what was posted
    /// before it. Returns the message's slot and whether to stop.
    fn take_extra(
        &mut self,
        i: u32,
        msg: u64,
        tag: u64,
        hooks: &mut dyn Hooks,
    ) -> std::result::Result<(usize, bool), bool> {
        let iu = i as usize;
        let what = extra_name(tag);
        let q = &self.qps[iu];
        let s = q.slot_of(msg);
        let Some(pos) = q.extra.iter().position(|&e| e == (msg, tag)) else {
            self.rep.duplicate_completions += 1;
            return Err(self.fail(
                hooks,
                "duplicate",
                i,
                msg,
                format!("send completion of the {what} of message {msg}, which is not in flight"),
            ));
        };
        let mut stop = false;
        // Posted after the message's WRITE_WITH_IMM and its earlier READs
        // (the READ behind the fenced WRITE after the first, the atomic
        // after both), and after everything of earlier messages: completes
        // after them.
        let before = if q.slots[s].send_busy {
            Some(format!("the WRITE_WITH_IMM of message {msg}"))
        } else if pos > 0 {
            let (m, t) = q.extra[0];
            Some(format!("the {} of message {m}", extra_name(t)))
        } else {
            None
        };
        if let Some(before) = before {
            self.rep.out_of_order_completions += 1;
            stop |= self.fail(
                hooks,
                "out-of-order",
                i,
                msg,
                format!("completion of the {what} of message {msg} before that of {before}"),
            );
        }
        self.qps[iu].extra.remove(pos);
        Ok((s, stop))
    }

    /// The completion of a READ behind a message (context A, status
    /// success): every byte of its area, right now. Returns true to stop
    /// the run.
    fn on_read(&mut self, wc: &WorkCompletion, i: u32, hooks: &mut dyn Hooks) -> bool {
        let iu = i as usize;
        let (msg, tag) = (wc.wr_id >> 8, wc.wr_id & 0xff);
        let what = extra_name(tag);
        let (s, mut stop) = match self.take_extra(i, msg, tag, hooks) {
            Ok(x) => x,
            Err(stop) => return stop,
        };
        let q = &mut self.qps[iu];
        if tag == WR_REREAD {
            q.slots[s].reread_busy = false;
        } else {
            q.slots[s].read_busy = false;
        }
        let Some(rb) = q.slots[s].read else {
            return stop;
        };
        let bf = q.slots[s].bufs[rb.buf];
        if wc.opcode != WcOpcode::RdmaRead || wc.byte_len as usize != rb.len {
            self.rep.corruptions += 1;
            stop |= self.fail(
                hooks,
                "corruption",
                i,
                msg,
                format!(
                    "completion of the {what} of message {msg}: opcode {:?} byte_len {} (expected RdmaRead, {})",
                    wc.opcode, wc.byte_len, rb.len
                ),
            );
        }
        // The moment of truth of the READ: its bytes, right now.
        let c = self.check_read(iu, s, tag);
        let (seen_at, before) = (self.now(), self.rep.messages);
        if let Some(st) = self.rep.reads.as_mut() {
            st.checked += 1;
            st.bytes += rb.len as u64;
        }
        if c.clean() {
            return stop;
        }
        let (x, want, got) = c.first.unwrap_or((0, 0, 0));
        let kind_of = |g: u8, w: u8| {
            if g == !w {
                " = old value"
            } else if g == w ^ FENCE_XOR && tag == WR_REREAD {
                " = the bytes before the fenced WRITE"
            } else if g == w ^ FENCE_XOR && rb.fenced {
                " = the fenced WRITE's"
            } else {
                ""
            }
        };
        let other = match (tag, rb.fenced) {
            (WR_REREAD, _) => format!(
                ", {} the bytes before the fenced WRITE (the READ did not see the WRITE before it)",
                c.other
            ),
            (_, true) => format!(", {} the fenced WRITE's (the fence did not hold)", c.other),
            _ => String::new(),
        };
        let at_cqe = format!(
            "{} of {} bytes wrong when the CQE of the {what} of message {msg} was seen ({} B at offset {} of buffer {} ({} B at remote offset {:#x}) into local offset {:#x}{}; first: byte {x}: expected {want:#04x}, found {got:#04x}{}): {} stale (the CQE before its data, or the READ before the WRITEs it follows){other}; {} guard bytes overwritten",
            c.wrong,
            rb.len,
            rb.len,
            rb.off,
            rb.buf,
            bf.len,
            bf.dst_off,
            rb.area(tag),
            match (tag, rb.fenced) {
                (WR_REREAD, _) => ", behind the fenced WRITE of new bytes",
                (_, true) => ", a fenced WRITE of new bytes behind it",
                _ => "",
            },
            kind_of(got, want),
            c.stale,
            c.guards
        );
        if let Some(st) = self.rep.reads.as_mut() {
            st.failures += 1;
            st.stale_bytes += c.stale;
        }
        // What it looks like once everything in flight has landed (the
        // evidence is taken before).
        if !self.snapshot_taken {
            self.snapshot_taken = true;
            hooks.snapshot();
        }
        self.settle(hooks);
        let later = self.check_read(iu, s, tag);
        let detail = if later.clean() {
            format!("{at_cqe}; right once everything landed (the CQE came before its data)")
        } else {
            let (x, want, got) = later.first.unwrap_or((0, 0, 0));
            format!(
                "{at_cqe}; once everything landed still {} bytes wrong, {} of them stale (the READ brought bytes from before the WRITEs it follows) (first: byte {x}: expected {want:#04x}, found {got:#04x}{}), {} guard bytes",
                later.wrong,
                later.stale,
                kind_of(got, want),
                later.guards
            )
        };
        stop |= self.fail_at(hooks, "read", i, msg, seen_at, before, detail);
        stop
    }

    /// The completion of the atomic behind a message (context A, status
    /// success): its original value, right now. Returns true to stop the
    /// run.
    fn on_atomic(&mut self, wc: &WorkCompletion, i: u32, hooks: &mut dyn Hooks) -> bool {
        let iu = i as usize;
        let msg = wc.wr_id >> 8;
        if let Some(st) = self.rep.atomics.as_mut() {
            st.completed += 1;
        }
        let (s, stop) = match self.take_extra(i, msg, WR_ATOMIC, hooks) {
            Ok(x) => x,
            Err(stop) => return stop,
        };
        let q = &mut self.qps[iu];
        q.slots[s].atomic_busy = false;
        let Some(a) = q.slots[s].atomic else {
            return stop;
        };
        let name = match a.op {
            AtomicOp::FetchAndAdd { .. } => "FETCH_AND_ADD",
            AtomicOp::CmpAndSwp { .. } => "CMP_AND_SWAP",
        };
        let want_op = match a.op {
            AtomicOp::FetchAndAdd { .. } => WcOpcode::FetchAdd,
            AtomicOp::CmpAndSwp { .. } => WcOpcode::CompSwap,
        };
        let (seen_at, checked_before) = (self.now(), self.rep.messages);
        if wc.opcode != want_op || wc.byte_len != 8 {
            if let Some(st) = self.rep.atomics.as_mut() {
                st.failures += 1;
            }
            return stop
                | self.fail(
                    hooks,
                    "atomic",
                    i,
                    msg,
                    format!(
                        "completion of the {name} of message {msg}: opcode {:?} byte_len {} (expected {want_op:?}, 8)",
                        wc.opcode, wc.byte_len
                    ),
                );
        }
        // The moment of truth of the atomic: its original value, right now.
        if let Some(st) = self.rep.atomics.as_mut() {
            st.checked += 1;
        }
        let keys = atomic_guard_keys(self.cfg.seed, i, msg);
        let want = framed(keys, a.before);
        let read = |q: &QpRun<D>| {
            let mut got = [0u8; 8 + 2 * GUARD];
            q.src.read(a.at - GUARD, &mut got);
            got
        };
        let got = read(&self.qps[iu]);
        if got == want {
            return stop;
        }
        let due = word_of(&want);
        let describe = |got: &[u8; 8 + 2 * GUARD]| {
            let v = word_of(got);
            let guards = got[..GUARD] != want[..GUARD] || got[GUARD + 8..] != want[GUARD + 8..];
            let what = if v == due {
                "right"
            } else if v == !due {
                "not placed (still the complement of the value due)"
            } else if v == a.after {
                "the value after this atomic: executed twice?"
            } else {
                "neither: an atomic executed twice, out of order or lost before it"
            };
            format!(
                "original value {v:#018x}, expected {due:#018x} ({what}){}",
                if guards {
                    ", guard bytes overwritten"
                } else {
                    ""
                }
            )
        };
        let at_cqe = format!(
            "when the CQE of the {name} of message {msg} (atomic {} of QP {i}) was seen: {}",
            a.n,
            describe(&got)
        );
        if let Some(st) = self.rep.atomics.as_mut() {
            st.failures += 1;
        }
        // What it looks like once everything in flight has landed.
        if !self.snapshot_taken {
            self.snapshot_taken = true;
            hooks.snapshot();
        }
        self.settle(hooks);
        let later = read(&self.qps[iu]);
        let detail = if later == want {
            if let Some(st) = self.rep.atomics.as_mut() {
                st.early += 1;
            }
            format!("{at_cqe}; right once everything landed (the CQE came before its value)")
        } else {
            format!("{at_cqe}; once everything landed: {}", describe(&later))
        };
        stop | self.fail_at(hooks, "atomic", i, msg, seen_at, checked_before, detail)
    }

    /// End of a run: the counter word of every QP that never failed holds
    /// the sum of its atomics. Returns true to stop (a failure was seen).
    fn check_counters(&mut self, hooks: &mut dyn Hooks) -> bool {
        if !self.cfg.atomics() {
            return false;
        }
        // The responder's last writes may still be in flight.
        self.settle(hooks);
        let mut stop = false;
        for i in 0..self.qps.len() {
            let q = &self.qps[i];
            if q.life != QpLife::Live || q.busy() {
                continue;
            }
            let want = framed(counter_guard_keys(self.cfg.seed, i as u32), q.counter);
            let mut got = [0u8; 8 + 2 * GUARD];
            q.dst.read(q.atomic_base, &mut got);
            let (n, msg) = (q.atomics, q.next_msg);
            if let Some(st) = self.rep.atomics.as_mut() {
                st.counters_checked += 1;
            }
            if got == want {
                continue;
            }
            if let Some(st) = self.rep.atomics.as_mut() {
                st.failures += 1;
            }
            let guards = got[..GUARD] != want[..GUARD] || got[GUARD + 8..] != want[GUARD + 8..];
            stop |= self.fail(
                hooks,
                "atomic",
                i as u32,
                msg,
                format!(
                    "at the end of the run the counter word of QP {i} holds {:#018x}, expected {:#018x} after its {n} atomics{}",
                    word_of(&got),
                    word_of(&want),
                    if guards { "; guard bytes around it overwritten" } else { "" }
                ),
            );
        }
        stop
    }

    /// Compares the area of READ `tag` of slot `s` of QP `i` with the bytes
    /// it must bring: those the message wrote ([`WR_READ`]), or those the
    /// fenced WRITE wrote over them ([`WR_REREAD`]).
    fn check_read(&mut self, i: usize, s: usize, tag: u64) -> ReadCheck {
        let q = &self.qps[i];
        let slot = &q.slots[s];
        let mut c = ReadCheck::default();
        let Some(rb) = slot.read else {
            return c;
        };
        let key = pattern::key(self.cfg.seed, i as u32, slot.msg, rb.buf as u32);
        let blen = slot.bufs[rb.buf].len;
        let n = rb.len + 2 * GUARD;
        let (g0, g1) = read_guard_keys(key, tag);
        let want = &mut self.scratch[..blen.max(n)];
        pattern::fill(key, &mut want[..blen]);
        want.copy_within(rb.off..rb.off + rb.len, GUARD);
        for w in &mut want[GUARD..GUARD + rb.len] {
            *w = read_want(tag, *w);
        }
        pattern::fill(g0, &mut want[..GUARD]);
        pattern::fill(g1, &mut want[GUARD + rb.len..n]);
        let want = &want[..n];
        let got = &mut self.scratch2[..n];
        q.src.read(rb.area(tag) - GUARD, got);
        if want == got {
            return c;
        }
        for (x, (w, g)) in want.iter().zip(got.iter()).enumerate() {
            if w == g {
                continue;
            }
            if x < GUARD || x >= GUARD + rb.len {
                c.guards += 1;
                continue;
            }
            c.wrong += 1;
            if *g == !*w {
                c.stale += 1;
            } else if *g == *w ^ FENCE_XOR {
                c.other += 1;
            }
            if c.first.is_none() {
                c.first = Some((x - GUARD, *w, *g));
            }
        }
        c
    }

    /// QPs with work outstanding and no completion for `watchdog` cycles.
    fn watchdog(&mut self, hooks: &mut dyn Hooks) -> bool {
        let now = self.now();
        let backlog = self.cfg.backlog_cycles();
        let mut stop = false;
        for i in 0..self.qps.len() {
            let q = &self.qps[i];
            // A QP that failed with an error completion has nothing more
            // coming once its flushes are in: give up on it sooner.
            let limit = match q.life {
                QpLife::Dead => self.cfg.watchdog.min(DEAD_QP_WAIT),
                _ => self.cfg.watchdog + backlog,
            };
            if q.life == QpLife::Retired
                || !q.busy()
                || now.saturating_sub(q.last_progress) <= limit
            {
                continue;
            }
            let recv_missing = q
                .slots
                .iter()
                .filter(|s| s.recv_busy && s.msg < q.next_msg)
                .count() as u64;
            let send_missing = q
                .slots
                .iter()
                .filter(|s| s.send_busy && s.msg < q.next_msg)
                .count() as u64
                + q.extra.len() as u64;
            let (oldest, life) = (q.recv_next.min(q.send_next), q.life);
            if life == QpLife::Live {
                self.rep.lost_completions += recv_missing + send_missing;
                stop |= self.fail(
                    hooks,
                    "lost",
                    i as u32,
                    oldest,
                    format!(
                        "no completion for {} cycles (--watchdog {} and {} for every QP's window of work): {recv_missing} receive and {send_missing} send completions missing (oldest message {oldest})",
                        limit,
                        self.cfg.watchdog,
                        backlog
                    ),
                );
            } else {
                self.rep.abandoned_messages += recv_missing;
            }
            self.qps[i].life = QpLife::Retired;
        }
        stop
    }

    fn finished(&self) -> bool {
        let posting =
            self.issued < self.cfg.messages && self.qps.iter().any(|q| q.life == QpLife::Live);
        !posting
            && self
                .qps
                .iter()
                .all(|q| q.life == QpLife::Retired || !q.busy())
    }

    fn cq(&self, side: Side) -> &CompletionQueue<D> {
        match side {
            Side::A => &self.conns.cq_a,
            Side::B => &self.conns.cq_b,
        }
    }

    /// Polls `side`'s CQ once and handles what it held: (completions, stop).
    fn take(
        &mut self,
        side: Side,
        wcs: &mut [WorkCompletion],
        hooks: &mut dyn Hooks,
    ) -> Result<(usize, bool)> {
        let n = self.cq(side).poll(wcs)?;
        let mut stop = false;
        for wc in &wcs[..n] {
            stop |= match side {
                Side::B => self.on_recv(wc, hooks)?,
                Side::A => self.on_send(wc, hooks),
            };
        }
        Ok((n, stop))
    }

    /// Completions outstanding on `side` (of QPs not given up on).
    fn outstanding(&self, side: Side) -> bool {
        self.qps.iter().any(|q| {
            q.life != QpLife::Retired
                && match side {
                    Side::A => q.send_next < q.next_msg || !q.extra.is_empty(),
                    Side::B => q.recv_next < q.next_msg,
                }
        })
    }

    /// [`Completions::Event`], nothing polled on either side: arms the CQ
    /// of a side with completions outstanding (the receiver's first: a
    /// message's receive completion comes before its send completion),
    /// polls it once more (a CQE that arrived before the arm raises no
    /// interrupt), and if it is still empty waits for its interrupt for
    /// at most `irq_budget` cycles, then polls it again. Returns true to
    /// stop the run.
    fn wait_event(&mut self, wcs: &mut [WorkCompletion], hooks: &mut dyn Hooks) -> Result<bool> {
        let side = if self.outstanding(Side::B) {
            Side::B
        } else if self.outstanding(Side::A) {
            Side::A
        } else {
            self.b.device().idle();
            return Ok(false);
        };
        let budget = self.cfg.irq_budget;
        let mut ev = self.rep.events.unwrap_or_default();
        self.cq(side).req_notify(false)?;
        ev.arms += 1;
        let (n, mut stop) = self.take(side, wcs, hooks)?;
        if n > 0 {
            ev.found_after_arm += 1;
        } else {
            ev.waits += 1;
            let fired = self.cq(side).wait_event(budget)? == IrqWait::Fired;
            let (n, s) = self.take(side, wcs, hooks)?;
            stop |= s;
            match (fired, n > 0) {
                (true, got) => {
                    ev.interrupts += 1;
                    ev.spurious += u64::from(!got);
                }
                (false, false) => ev.timeouts += 1,
                // A completion is there and its interrupt is not: give
                // the interrupt (a posted write behind the CQE) one more
                // budget before calling it lost.
                (false, true) => {
                    if self.cq(side).wait_event(budget)? == IrqWait::Fired {
                        ev.late_interrupts += 1;
                    } else {
                        ev.missed_interrupts += 1;
                        let cq = self.cq(side).cq_num();
                        let i = wcs[..n]
                            .iter()
                            .find_map(|wc| {
                                let by = match side {
                                    Side::A => &self.by_qpn_a,
                                    Side::B => &self.by_qpn_b,
                                };
                                by.get(wc.qp_num as usize).copied().flatten()
                            })
                            .unwrap_or(0);
                        self.rep.events = Some(ev);
                        stop |= self.fail(
                            hooks,
                            "missed-interrupt",
                            i,
                            0,
                            format!(
                                "CQ {cq} of NIC {} (MSI vector {}) held {n} completion(s) after an armed wait of {budget} cycles, and no interrupt came in {budget} cycles more",
                                side.name(),
                                cq % 32
                            ),
                        );
                    }
                }
            }
        }
        self.rep.events = Some(ev);
        Ok(stop)
    }

    fn run(&mut self, hooks: &mut dyn Hooks) -> Result<Report> {
        let dev = self.b.device();
        let start = dev.now();
        let mut wcs = [WorkCompletion::default(); 32];
        let mut stop = false;
        while !stop && !self.finished() {
            hooks.tick(dev.now(), self.rep.messages);
            for i in 0..self.qps.len() {
                while self.can_post(i) {
                    self.post_message(i)?;
                }
            }
            let (nb, sb) = self.take(Side::B, &mut wcs, hooks)?;
            let (na, sa) = self.take(Side::A, &mut wcs, hooks)?;
            stop |= sb | sa;
            if nb + na == 0 {
                stop |= self.watchdog(hooks);
                match self.cfg.completions {
                    Completions::Poll => dev.idle(),
                    Completions::Event if !stop && !self.finished() => {
                        stop |= self.wait_event(&mut wcs, hooks)?
                    }
                    Completions::Event => {}
                }
            }
        }
        if !stop {
            self.check_counters(hooks);
        }
        self.rep.cycles = dev.now() - start;
        let mut rep = std::mem::take(&mut self.rep);
        hooks.finish(&mut rep);
        Ok(rep)
    }
}

/// What a READ's or atomic's wr_id tag stands for.
fn extra_name(tag: u64) -> &'static str {
    match tag {
        WR_REREAD => "READ behind the fenced WRITE",
        WR_ATOMIC => "atomic",
        _ => "READ",
    }
}

/// The two ends of the run: A sends, B receives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Side {
    A,
    B,
}

impl Side {
    fn name(self) -> &'static str {
        match self {
            Side::A => "a",
            Side::B => "b",
        }
    }
}
