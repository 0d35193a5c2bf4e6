//! perftest `ib_atomic_bw` against rnic as the server: rxe (the client,
//! in the guest) sends 8-byte atomics, rnic executes them on its region
//! and answers each with an ATOMIC ACKNOWLEDGE carrying the original value.
//! (With rnic as the client, issuing the atomics: [`crate::atomic_client`].)
//!
//! The exchange is [`crate::perftest_run`]'s (the BW tests' sequence);
//! this module prepares rnic's region, watches the wire and checks the
//! outcome, independently of rxe (perftest checks nothing of it):
//!
//! - The region: the seeded pattern of [`crate::read_run`], with chosen
//!   values in the operands perftest's atomics hit (one every
//!   [`Handshake::addr_inc`] bytes, [`Handshake::slots`] of them): 0 in
//!   every fourth (a CMP_AND_SWAP's compare value 0 matches there), and
//!   `u64::MAX`, `0xffff_ffff` and `0x00ff_ffff_ffff_ffff` in operands 1,
//!   3 and 5 (a FETCH_AND_ADD carries through every byte, into the upper
//!   half, into the top byte).
//! - The wire ([`AtomicWire`], from the world's frame window): every
//!   atomic request that reaches rnic, in PSN order, is applied to a model
//!   of the region; its address must be where perftest sends atomic k
//!   ([`Handshake::msg_offset`]), its opcode the run's, its add or swap
//!   value perftest's ([`perftest::ATOMIC_ADD_VALUE`],
//!   [`perftest::ATOMIC_SWAP_VALUE`]). Every ATOMIC ACKNOWLEDGE rnic sends
//!   must carry an ACK syndrome and the model's original value at its PSN
//!   (a duplicate's answer the first execution's), and every executed
//!   atomic must have had one delivered to the guest. Requests that come
//!   again (the guest lost the answer, or its timer fired first) and out
//!   of sequence ones are counted.
//! - After the run ([`finish`]): rnic executed exactly the client's
//!   iterations (on the wire and by `port.rx_atomic`); the region equals
//!   the model byte for byte; and, from perftest's semantics alone, each
//!   operand of a FETCH_AND_ADD run equals its initial value plus
//!   [`perftest::ATOMIC_ADD_VALUE`] times the atomics its slot received
//!   (`iters / slots`, one more for the first `iters % slots`), each
//!   operand of a CMP_AND_SWAP run its initial value or
//!   [`perftest::ATOMIC_SWAP_VALUE`], and nothing else in the region
//!   changed. The counters agree with the wire: `port.rx_atomic_replay`
//!   (duplicates answered from rnic's replay record) moved by the re-sent
//!   atomics rnic answered, `port.rx_drop_psn` by those it did not answer
//!   plus those out of sequence.
//!
//! What rnic does with a re-sent atomic that reaches it while its first
//! execution is still under way (the guest's timer fired, or it was
//! re-sending from an earlier PSN whose answer was lost): it drops it
//! (`port.rx_drop_psn`) rather than answering it from the replay record
//! once the first execution is done. The first execution's answer still
//! goes out, but ahead of the replays for the earlier PSNs the guest
//! re-sent first; rxe, waiting for the earliest, discards it
//! (`completer_retry_err`) and has to re-send once more. Not a failure
//! (it costs a round trip): the run notes it
//! ([`AtomicTally::re_requests_unanswered`]).

use std::collections::{BTreeSet, HashMap, HashSet, VecDeque};

use rnic_wire::opcode;

use crate::perftest::{self, AtomicOp, Handshake};
use crate::{InteropError, Result, Rnic};

/// Salt of the region's pattern ("atomics\0").
const ATOMIC_KEY_SALT: u64 = 0x6174_6f6d_6963_7300;

/// The region rnic exposes to `ib_atomic_bw` (`len` bytes): the seeded
/// pattern, with the chosen operand values (see the module docs) at
/// `slot * addr_inc` for each of `slots` operands.
pub fn initial_region(seed: u64, len: usize, hs: &Handshake) -> Vec<u8> {
    let mut v = vec![0u8; len];
    rnic_harness::pattern::fill(rnic_harness::pattern::mix(seed ^ ATOMIC_KEY_SALT), &mut v);
    for s in 0..hs.slots() {
        let off = (s * hs.addr_inc()) as usize;
        let special = match s {
            _ if s % 4 == 0 => Some(0),
            1 => Some(u64::MAX),
            3 => Some(0xffff_ffff),
            5 => Some(0x00ff_ffff_ffff_ffff),
            _ => None,
        };
        if let (Some(x), Some(b)) = (special, v.get_mut(off..off + 8)) {
            b.copy_from_slice(&x.to_le_bytes());
        }
    }
    v
}

fn le64(b: &[u8], off: usize) -> u64 {
    u64::from_le_bytes(b[off..off + 8].try_into().expect("8 bytes"))
}

/// `a - b` in 24-bit PSN space, as a signed distance.
pub(crate) fn psn_diff(a: u32, b: u32) -> i32 {
    ((a.wrapping_sub(b) << 8) as i32) >> 8
}

/// The atomic traffic as rnic's side of the link saw it, and what was
/// checked.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct AtomicTally {
    /// The run's atomic.
    pub op: Option<AtomicOp>,
    /// Atomics the client issued (its `-n`; its report says the same).
    pub iters: u64,
    /// Atomic request frames the guest sent, and those the link dropped.
    pub requests: u64,
    pub requests_dropped: u64,
    /// First-time requests that reached rnic in sequence: the atomics
    /// executed (by the model); of the CMP_AND_SWAPs, those whose compare
    /// value matched.
    pub executed: u64,
    pub swaps_taken: u64,
    /// Requests (delivered) for PSNs rnic had executed already, and
    /// requests beyond rnic's expected PSN (rnic NAKs the gap).
    pub re_requests: u64,
    pub out_of_sequence: u64,
    /// Of the re-requests, those rnic never answered (it dropped them:
    /// `port.rx_drop_psn`), and the first few, each with the wire before
    /// it. Not a failure: the guest asks again.
    pub re_requests_unanswered: u64,
    pub unanswered_notes: Vec<String>,
    /// ATOMIC ACKNOWLEDGE frames rnic sent, those the link dropped, those
    /// answering a PSN answered before (replays), and those whose original
    /// value was checked against the model.
    pub atomic_acks: u64,
    pub atomic_acks_dropped: u64,
    pub atomic_acks_again: u64,
    pub orig_values_checked: u64,
    /// rnic's plain ACKs and NAKs (PSN sequence error answers to gaps
    /// among them).
    pub acks: u64,
    pub naks: u64,
    pub seq_naks: u64,
    /// The distinct add (FETCH_AND_ADD), swap and compare (CMP_AND_SWAP)
    /// values on the wire.
    pub add_values: BTreeSet<u64>,
    pub swap_values: BTreeSet<u64>,
    pub compare_values: BTreeSet<u64>,
    /// Operands checked after the run against perftest's semantics, and
    /// region bytes compared with the model.
    pub operands_checked: u64,
    pub region_bytes_checked: u64,
    /// What rnic's counters moved by: atomics executed, duplicates
    /// answered from the replay record, requests dropped for their PSN
    /// (a duplicate whose record is gone among them).
    pub rx_atomic: u32,
    pub rx_atomic_replay: u32,
    pub rx_drop_psn: u32,
    /// What was wrong (the first few).
    pub wire_errors: Vec<String>,
}

enum Event {
    /// An atomic request reaching rnic.
    Request(rnic_wire::RoceFrame),
    /// A frame rnic sent; whether it reached the guest.
    Sent(rnic_wire::RoceFrame, bool),
}

/// The wire model and checker, fed every frame of the run.
pub(crate) struct AtomicWire {
    op: AtomicOp,
    base: u64,
    slots: u64,
    inc: u64,
    /// The region as the executed atomics leave it.
    mem: Vec<u8>,
    next_psn: Option<u32>,
    /// The original value each executed PSN returned.
    orig: HashMap<u32, u64>,
    /// PSNs answered with an ATOMIC ACKNOWLEDGE, and those delivered.
    answered: HashSet<u32>,
    delivered: HashSet<u32>,
    /// Expected PSNs at which a request arrived out of sequence.
    gap_psns: Vec<u32>,
    /// Requests that reached rnic per PSN (the executed one and its
    /// re-requests) and ATOMIC ACKNOWLEDGEs rnic sent per PSN; the wire up
    /// to the first re-request of each PSN.
    asked: HashMap<u32, u64>,
    answers: HashMap<u32, u64>,
    dup_context: HashMap<u32, Vec<String>>,
    /// Frames not yet taken into account, by the cycle they take effect,
    /// rnic's first on a tie (see `read_run::Wire`).
    pending: Vec<(u64, u8, Event)>,
    log: WireLog,
    pub(crate) tally: AtomicTally,
}

/// The last frames an atomic run's wire checker saw, and those before its
/// first problem (for the report). [`AtomicWire`]'s and
/// [`crate::atomic_client::ClientWire`]'s.
#[derive(Default)]
pub(crate) struct WireLog {
    pub(crate) recent: VecDeque<String>,
    pub(crate) context: Vec<String>,
}

impl WireLog {
    /// Keeps the last 60 lines.
    pub(crate) fn note(&mut self, t: u64, s: String) {
        if self.recent.len() == 60 {
            self.recent.pop_front();
        }
        self.recent.push_back(format!("cycle {t}: {s}"));
    }

    /// Adds `s` to `wire_errors` (the first 8), keeping the wire before
    /// the first.
    pub(crate) fn problem(&mut self, wire_errors: &mut Vec<String>, s: String) {
        if self.context.is_empty() {
            self.context = self.recent.iter().cloned().collect();
        }
        if wire_errors.len() < 8 {
            wire_errors.push(s);
        }
    }

    /// `f` decoded; `None` for a frame rnic-wire rejects (a problem in one
    /// of rnic's).
    pub(crate) fn decode(
        &mut self,
        wire_errors: &mut Vec<String>,
        f: &rnic_sim::WireFrame,
    ) -> Option<rnic_wire::RoceFrame> {
        match rnic_wire::decode(&f.data) {
            Ok(fr) => Some(fr),
            Err(e) => {
                if f.src == 0 {
                    self.problem(
                        wire_errors,
                        format!("rnic sent a frame rnic-wire rejects: {e}"),
                    );
                }
                None
            }
        }
    }
}

/// The arrival cycles of `f`'s copies that reached the other end intact.
pub(crate) fn intact(f: &rnic_sim::WireFrame) -> impl Iterator<Item = u64> + '_ {
    f.fate
        .copies
        .iter()
        .filter(|c| !c.dropped && !c.bad && c.corrupt_bit.is_none())
        .map(|c| c.arrival)
}

/// `fr`'s line in a [`WireLog`], going `dir`; an atomic's VA as an offset
/// from `base`, the start of `region`.
pub(crate) fn frame_line(dir: &str, fr: &rnic_wire::RoceFrame, region: &str, base: u64) -> String {
    let mut line = format!(
        "{dir}: {} PSN {:#08x}",
        rnic_wire::opcode_name(fr.bth.opcode),
        fr.bth.psn
    );
    if let Some(a) = fr.atomiceth {
        line += &format!(
            " VA {region}+{} swap/add {:#x} compare {:#x}",
            a.va.wrapping_sub(base),
            a.swap_add,
            a.compare
        );
    }
    if let Some(a) = fr.aeth {
        line += &format!(" AETH syndrome {:#04x} MSN {}", a.syndrome, a.msn);
    }
    if let Some(a) = fr.atomicacketh {
        line += &format!(" original {:#x}", a.orig);
    }
    line
}

impl AtomicWire {
    /// Start watching `rnic`'s link; `region` is what its buffer holds now.
    pub(crate) fn start(rnic: &Rnic, hs: &Handshake, op: AtomicOp, region: Vec<u8>) -> Self {
        rnic.world.set_window(1 << 14);
        rnic.world.clear_window();
        Self::new(hs, op, rnic.mr.addr(), region)
    }

    /// The model of `region` at bus address `base`, for the exchange `hs`.
    fn new(hs: &Handshake, op: AtomicOp, base: u64, region: Vec<u8>) -> Self {
        Self {
            op,
            base,
            slots: hs.slots(),
            inc: hs.addr_inc(),
            mem: region,
            next_psn: Some(hs.remote[0].psn & 0xFF_FFFF),
            orig: HashMap::new(),
            answered: HashSet::new(),
            delivered: HashSet::new(),
            gap_psns: Vec::new(),
            asked: HashMap::new(),
            answers: HashMap::new(),
            dup_context: HashMap::new(),
            pending: Vec::new(),
            log: WireLog::default(),
            tally: AtomicTally {
                op: Some(op),
                iters: hs.iters,
                ..AtomicTally::default()
            },
        }
    }

    /// Take the frames the window holds, and the effects due by now.
    pub(crate) fn drain(&mut self, rnic: &Rnic) {
        for f in rnic.world.window() {
            self.frame(&f);
        }
        rnic.world.clear_window();
        self.settle(rnic.world.now());
    }

    /// The last frames, and no window any more.
    pub(crate) fn stop(&mut self, rnic: &Rnic) {
        self.drain(rnic);
        self.settle(u64::MAX);
        rnic.world.set_window(0);
        // A PSN asked for n times (executed once, re-requested n - 1
        // times) should have had n answers.
        let mut short: Vec<(u32, u64)> = self
            .asked
            .iter()
            .map(|(&p, &n)| {
                (
                    p,
                    n.saturating_sub(self.answers.get(&p).copied().unwrap_or(0)),
                )
            })
            .filter(|&(_, d)| d > 0)
            .collect();
        short.sort_unstable();
        self.tally.re_requests_unanswered = short.iter().map(|s| s.1).sum();
        self.tally.unanswered_notes.clear();
        for (psn, n) in short.iter().take(4) {
            let ctx = self
                .dup_context
                .get(psn)
                .map_or(String::new(), |c| c.join("\n  "));
            self.tally.unanswered_notes.push(format!(
                "PSN {psn:#08x}: {n} request(s) without an answer; the wire up to its first re-request:\n  {ctx}"
            ));
        }
    }

    /// One line for the user.
    pub(crate) fn summary(&self) -> String {
        let t = &self.tally;
        format!(
            "rnic's side of the link: {} atomic requests ({} dropped by the link, {} executed, {} again, {} out of sequence), {} ATOMIC ACKNOWLEDGEs ({} dropped, {} again, {} original values checked), {} NAKs; wire problems: {}",
            t.requests,
            t.requests_dropped,
            t.executed,
            t.re_requests,
            t.out_of_sequence,
            t.atomic_acks,
            t.atomic_acks_dropped,
            t.atomic_acks_again,
            t.orig_values_checked,
            t.naks,
            if t.wire_errors.is_empty() {
                "none".to_string()
            } else {
                format!(
                    "{}\nthe wire before the first, as rnic's side saw it (requests at their arrival):\n  {}",
                    t.wire_errors.join("; "),
                    self.log.context.join("\n  ")
                )
            }
        )
    }

    fn problem(&mut self, s: String) {
        self.log.problem(&mut self.tally.wire_errors, s);
    }

    fn frame(&mut self, f: &rnic_sim::WireFrame) {
        let mut good = intact(f).peekable();
        let Some(fr) = self.log.decode(&mut self.tally.wire_errors, f) else {
            return;
        };
        if f.src == 0 {
            let delivered = good.peek().is_some();
            self.pending.push((f.cycle, 0, Event::Sent(fr, delivered)));
            return;
        }
        if !rnic_wire::is_atomic(fr.bth.opcode) {
            return;
        }
        self.tally.requests += 1;
        if good.peek().is_none() {
            self.tally.requests_dropped += 1;
        }
        for t in good {
            self.pending.push((t, 1, Event::Request(fr.clone())));
        }
    }

    fn settle(&mut self, now: u64) {
        self.pending.sort_by_key(|&(t, o, _)| (t, o));
        let later = self.pending.partition_point(|&(t, _, _)| t <= now);
        let due: Vec<_> = self.pending.drain(..later).collect();
        for (t, _, e) in due {
            let (fr, dir) = match &e {
                Event::Request(fr) => (fr, "guest -> rnic"),
                Event::Sent(fr, true) => (fr, "rnic -> guest"),
                Event::Sent(fr, false) => (fr, "rnic -> guest (lost on the link)"),
            };
            let line = frame_line(dir, fr, "region", self.base);
            self.log.note(t, line);
            match e {
                Event::Request(fr) => self.request(&fr),
                Event::Sent(fr, delivered) => self.sent(&fr, delivered),
            }
        }
    }

    /// An atomic request reaches rnic.
    fn request(&mut self, fr: &rnic_wire::RoceFrame) {
        let psn = fr.bth.psn;
        let Some(a) = fr.atomiceth else {
            self.problem(format!(
                "{} at PSN {psn:#08x} without an AtomicETH",
                rnic_wire::opcode_name(fr.bth.opcode)
            ));
            return;
        };
        let d = self.next_psn.map_or(0, |n| psn_diff(psn, n));
        if d < 0 {
            self.tally.re_requests += 1;
            *self.asked.entry(psn).or_default() += 1;
            if !self.dup_context.contains_key(&psn) {
                let ctx = self
                    .log
                    .recent
                    .iter()
                    .rev()
                    .take(16)
                    .rev()
                    .cloned()
                    .collect();
                self.dup_context.insert(psn, ctx);
            }
            return;
        }
        if d > 0 {
            self.tally.out_of_sequence += 1;
            if let Some(n) = self.next_psn {
                if !self.gap_psns.contains(&n) {
                    self.gap_psns.push(n);
                }
            }
            return;
        }
        // In sequence: rnic executes it.
        let k = self.tally.executed;
        let off = a.va.wrapping_sub(self.base);
        let want_off = (k % self.slots) * self.inc;
        let want_op = match self.op {
            AtomicOp::FetchAndAdd => opcode::FETCH_ADD,
            AtomicOp::CmpAndSwap => opcode::COMPARE_SWAP,
        };
        if fr.bth.opcode != want_op {
            self.problem(format!(
                "atomic {k} (PSN {psn:#08x}) is {}, the run's is {}",
                rnic_wire::opcode_name(fr.bth.opcode),
                rnic_wire::opcode_name(want_op)
            ));
        }
        if off != want_off {
            self.problem(format!(
                "atomic {k} (PSN {psn:#08x}) is for region offset {off}, perftest's atomic {k} goes to offset {want_off}"
            ));
        }
        if off % 8 != 0 || off + 8 > self.mem.len() as u64 {
            self.problem(format!(
                "atomic {k} (PSN {psn:#08x}) at region offset {off}: misaligned or outside the region"
            ));
            return;
        }
        let o = off as usize;
        let before = le64(&self.mem, o);
        let after = if fr.bth.opcode == opcode::FETCH_ADD {
            self.tally.add_values.insert(a.swap_add);
            before.wrapping_add(a.swap_add)
        } else {
            self.tally.swap_values.insert(a.swap_add);
            self.tally.compare_values.insert(a.compare);
            if before == a.compare {
                self.tally.swaps_taken += 1;
                a.swap_add
            } else {
                before
            }
        };
        self.mem[o..o + 8].copy_from_slice(&after.to_le_bytes());
        self.orig.insert(psn, before);
        *self.asked.entry(psn).or_default() += 1;
        self.tally.executed += 1;
        self.next_psn = Some((psn + 1) & 0xFF_FFFF);
    }

    /// rnic sends a frame.
    fn sent(&mut self, fr: &rnic_wire::RoceFrame, delivered: bool) {
        let psn = fr.bth.psn;
        match fr.bth.opcode {
            opcode::ATOMIC_ACKNOWLEDGE => {
                self.tally.atomic_acks += 1;
                if !delivered {
                    self.tally.atomic_acks_dropped += 1;
                }
                if !self.answered.insert(psn) {
                    self.tally.atomic_acks_again += 1;
                }
                *self.answers.entry(psn).or_default() += 1;
                if delivered {
                    self.delivered.insert(psn);
                }
                match fr.aeth {
                    Some(a) if a.syndrome >> 5 == 0 => {}
                    Some(a) => self.problem(format!(
                        "the ATOMIC ACKNOWLEDGE at PSN {psn:#08x} carries AETH syndrome {:#04x}, not an ACK",
                        a.syndrome
                    )),
                    None => self.problem(format!(
                        "the ATOMIC ACKNOWLEDGE at PSN {psn:#08x} has no AETH"
                    )),
                }
                let Some(got) = fr.atomicacketh.map(|a| a.orig) else {
                    self.problem(format!(
                        "the ATOMIC ACKNOWLEDGE at PSN {psn:#08x} has no AtomicAckETH"
                    ));
                    return;
                };
                match self.orig.get(&psn).copied() {
                    Some(want) if want == got => self.tally.orig_values_checked += 1,
                    Some(want) => self.problem(format!(
                        "the ATOMIC ACKNOWLEDGE at PSN {psn:#08x} returns {got:#x}, the operand held {want:#x} before that atomic"
                    )),
                    None => self.problem(format!(
                        "rnic sent an ATOMIC ACKNOWLEDGE at PSN {psn:#08x} (original {got:#x}), which no atomic it executed has"
                    )),
                }
            }
            opcode::ACKNOWLEDGE => {
                let syn = fr.aeth.map_or(0, |a| a.syndrome);
                if syn >> 5 == 0 {
                    self.tally.acks += 1;
                    return;
                }
                self.tally.naks += 1;
                if syn == 0x60 && self.gap_psns.contains(&psn) {
                    self.tally.seq_naks += 1;
                    return;
                }
                self.problem(format!(
                    "rnic sent a NAK (AETH syndrome {syn:#04x}) at PSN {psn:#08x}; its expected PSN (by the requests it received) is {}",
                    self.next_psn
                        .map_or("unknown".into(), |p| format!("{p:#08x}"))
                ));
            }
            _ => {}
        }
    }

    /// Executed atomics whose answer never reached the guest.
    fn unanswered(&self) -> Vec<u32> {
        let mut v: Vec<u32> = self
            .orig
            .keys()
            .filter(|p| !self.delivered.contains(p))
            .copied()
            .collect();
        v.sort_unstable();
        v
    }
}

/// rnic's counters before the run, for [`finish`].
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct CountersBefore {
    pub rx_atomic: u32,
    pub rx_atomic_replay: u32,
    pub rx_drop_psn: u32,
}

impl CountersBefore {
    pub(crate) fn read(rnic: &Rnic) -> Result<Self> {
        let c = rnic.counters()?;
        Ok(Self {
            rx_atomic: c.rx_atomic,
            rx_atomic_replay: c.rx_atomic_replay,
            rx_drop_psn: c.rx_drop_psn,
        })
    }
}

/// The checks after the run (see the module docs): `initial` is the
/// region as rnic exposed it, `reported` the iterations in the client's
/// BW report. Returns the tally, or what failed.
pub(crate) fn finish(
    rnic: &Rnic,
    mut w: AtomicWire,
    hs: &Handshake,
    initial: &[u8],
    before: CountersBefore,
    reported: Option<u64>,
) -> Result<AtomicTally> {
    // What is still in flight (a late answer) goes too.
    rnic.world.run(20_000);
    w.stop(rnic);
    let program = hs.kind.program();
    let iters = hs.iters;
    let c = rnic.counters()?;
    w.tally.rx_atomic = c.rx_atomic.wrapping_sub(before.rx_atomic);
    w.tally.rx_atomic_replay = c.rx_atomic_replay.wrapping_sub(before.rx_atomic_replay);
    w.tally.rx_drop_psn = c.rx_drop_psn.wrapping_sub(before.rx_drop_psn);
    let fail = |w: &AtomicWire, what: String| {
        Err(InteropError::Failed(format!(
            "{program} -A {} finished, but {what}\n{}",
            w.op.arg(),
            w.summary()
        )))
    };
    if !w.tally.wire_errors.is_empty() {
        return fail(&w, "rnic's answers were wrong on the wire".into());
    }
    if let Some(r) = reported.filter(|&r| r != iters) {
        return fail(
            &w,
            format!("its report counts {r} atomics, it was asked for {iters}"),
        );
    }
    if w.tally.executed != iters {
        return fail(
            &w,
            format!(
                "{} atomics reached rnic in sequence, the client issued {iters}",
                w.tally.executed
            ),
        );
    }
    if u64::from(w.tally.rx_atomic) != iters {
        return fail(
            &w,
            format!(
                "rnic's port.rx_atomic moved by {}, the client issued {iters} atomics",
                w.tally.rx_atomic
            ),
        );
    }
    // Every re-request rnic answered was answered from its replay record;
    // the others, and the requests out of sequence, it dropped for their
    // PSN.
    let replayed = w.tally.re_requests - w.tally.re_requests_unanswered;
    if u64::from(w.tally.rx_atomic_replay) != replayed || w.tally.atomic_acks_again != replayed {
        return fail(
            &w,
            format!(
                "rnic's port.rx_atomic_replay moved by {} and it answered {} PSNs again, but {replayed} of the {} re-sent atomics that reached it had an answer",
                w.tally.rx_atomic_replay, w.tally.atomic_acks_again, w.tally.re_requests
            ),
        );
    }
    let dropped = w.tally.out_of_sequence + w.tally.re_requests_unanswered;
    if u64::from(w.tally.rx_drop_psn) != dropped {
        return fail(
            &w,
            format!(
                "rnic's port.rx_drop_psn moved by {}, but {} atomics reached it out of sequence and {} re-sent ones had no answer",
                w.tally.rx_drop_psn, w.tally.out_of_sequence, w.tally.re_requests_unanswered
            ),
        );
    }
    let missing = w.unanswered();
    if !missing.is_empty() {
        return fail(
            &w,
            format!(
                "{} executed atomics never had an ATOMIC ACKNOWLEDGE delivered to the guest (PSNs {:#08x?})",
                missing.len(),
                &missing[..missing.len().min(8)]
            ),
        );
    }
    let want = match w.op {
        AtomicOp::FetchAndAdd => (&w.tally.add_values, perftest::ATOMIC_ADD_VALUE, "add"),
        AtomicOp::CmpAndSwap => (&w.tally.swap_values, perftest::ATOMIC_SWAP_VALUE, "swap"),
    };
    if want.0.iter().any(|&v| v != want.1) {
        return fail(
            &w,
            format!(
                "its {} values were {:#x?}, perftest's is {:#x}",
                want.2, want.0, want.1
            ),
        );
    }
    // The region: the model's bytes exactly.
    let len = initial.len();
    let now = rnic.buf.to_vec(0, len);
    if let Some(i) = now.iter().zip(&w.mem).position(|(a, b)| a != b) {
        let at = i & !7;
        return fail(
            &w,
            format!(
                "rnic's region differs from the atomics' result at offset {i}: the 8 bytes at {at} hold {:#x}, the executed atomics leave {:#x} (initially {:#x})",
                le64(&now, at),
                le64(&w.mem, at),
                le64(initial, at)
            ),
        );
    }
    w.tally.region_bytes_checked = len as u64;
    // perftest's semantics alone: which operands its atomics hit, and
    // what FETCH_AND_ADD / CMP_AND_SWAP leave there.
    let slots = hs.slots();
    let mut expect = initial.to_vec();
    for s in 0..slots {
        let off = (s * hs.addr_inc()) as usize;
        let hits = iters / slots + u64::from(s < iters % slots);
        let init = le64(initial, off);
        let got = le64(&now, off);
        let ok = match w.op {
            AtomicOp::FetchAndAdd => {
                got == init.wrapping_add(hits.wrapping_mul(perftest::ATOMIC_ADD_VALUE))
            }
            AtomicOp::CmpAndSwap => got == init || (hits > 0 && got == perftest::ATOMIC_SWAP_VALUE),
        };
        if !ok {
            return fail(
                &w,
                format!(
                    "the operand at region offset {off} (initially {init:#x}, {hits} atomics) holds {got:#x}"
                ),
            );
        }
        expect[off..off + 8].copy_from_slice(&got.to_le_bytes());
        w.tally.operands_checked += 1;
    }
    if let Some(i) = now.iter().zip(&expect).position(|(a, b)| a != b) {
        return fail(
            &w,
            format!(
                "byte {i} of rnic's region changed ({:#04x} -> {:#04x}), which is no operand of perftest's atomics",
                initial[i], now[i]
            ),
        );
    }
    Ok(w.tally)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::perftest::{Dest, IbvMtu, Negotiated, Role, TestKind};
    use rnic_wire::{Aeth, AtomicAckEth, AtomicEth, Bth, RoceFrame};

    const BASE: u64 = 0x5600_0000_1000;
    const PSN: u32 = 0xff_fffe;

    fn hs(iters: u64) -> Handshake {
        let d = Dest::new(0x11, PSN, 0x22, BASE, [0; 16]);
        Handshake {
            kind: TestKind::AtomicBw,
            role: Role::Server,
            size: perftest::ATOMIC_SIZE,
            iters,
            use_gid: true,
            negotiated: Negotiated {
                peer_version: "6.06".into(),
                peer_cycle_buffer: 4096,
                peer_cache_line_size: 64,
                cycle_buffer: 4096,
                cache_line_size: 64,
                peer_mtu: Some(IbvMtu::Mtu1024),
                mtu: IbvMtu::Mtu1024,
            },
            local: vec![d],
            remote: vec![d],
        }
    }

    fn request(op: u8, psn: u32, off: u64, swap_add: u64, compare: u64) -> RoceFrame {
        RoceFrame {
            bth: Bth {
                opcode: op,
                psn: psn & 0xff_ffff,
                ..Bth::default()
            },
            atomiceth: Some(AtomicEth {
                va: BASE + off,
                rkey: 0x22,
                swap_add,
                compare,
            }),
            ..RoceFrame::default()
        }
    }

    fn answer(psn: u32, orig: u64) -> RoceFrame {
        RoceFrame {
            bth: Bth {
                opcode: opcode::ATOMIC_ACKNOWLEDGE,
                psn: psn & 0xff_ffff,
                ..Bth::default()
            },
            aeth: Some(Aeth {
                syndrome: 0x1f,
                msn: 0,
            }),
            atomicacketh: Some(AtomicAckEth { orig }),
            ..RoceFrame::default()
        }
    }

    #[test]
    fn the_region_holds_the_chosen_operands() {
        let h = hs(100);
        assert_eq!((h.slots(), h.addr_inc()), (64, 64));
        let r = initial_region(1, 1 << 16, &h);
        assert_eq!(r, initial_region(1, 1 << 16, &h), "seeded");
        assert_eq!(le64(&r, 0), 0);
        assert_eq!(le64(&r, 64), u64::MAX);
        assert_eq!(le64(&r, 3 * 64), 0xffff_ffff);
        assert_eq!(le64(&r, 4 * 64), 0);
        assert_eq!(le64(&r, 5 * 64), 0x00ff_ffff_ffff_ffff);
        assert_ne!(le64(&r, 2 * 64), le64(&r, 6 * 64));
    }

    /// FETCH_AND_ADDs as perftest sends them (PSNs wrapping), answered
    /// right: no problem, the model carries through every byte.
    #[test]
    fn right_answers_pass_and_the_model_adds() {
        let h = hs(130);
        let init = initial_region(7, 1 << 16, &h);
        let mut w = AtomicWire::new(&h, AtomicOp::FetchAndAdd, BASE, init.clone());
        let mut model = init.clone();
        for k in 0..130u64 {
            let psn = PSN.wrapping_add(k as u32);
            let off = h.msg_offset(k);
            w.request(&request(opcode::FETCH_ADD, psn, off, 1, 0));
            let o = off as usize;
            let before = le64(&model, o);
            model[o..o + 8].copy_from_slice(&before.wrapping_add(1).to_le_bytes());
            w.sent(&answer(psn, before), true);
            w.delivered.insert(psn & 0xff_ffff);
        }
        // a duplicate of the last, answered again from the record
        let last = PSN.wrapping_add(129);
        w.request(&request(opcode::FETCH_ADD, last, h.msg_offset(129), 1, 0));
        // (atomic 129 is the third at operand 1, initially u64::MAX)
        let again = le64(&init, h.msg_offset(129) as usize).wrapping_add(2);
        w.sent(&answer(last, again), true);
        assert!(w.tally.wire_errors.is_empty(), "{:?}", w.tally.wire_errors);
        assert_eq!(w.tally.executed, 130);
        assert_eq!(w.tally.re_requests, 1);
        assert_eq!((w.tally.atomic_acks, w.tally.atomic_acks_again), (131, 1));
        assert_eq!(w.tally.orig_values_checked, 131);
        assert_eq!(w.mem, model);
        assert_eq!(le64(&w.mem, 64), 2, "u64::MAX and 3 adds");
        assert!(w.unanswered().is_empty());
    }

    #[test]
    fn wrong_answers_and_addresses_are_problems() {
        let h = hs(4);
        let init = initial_region(7, 1 << 16, &h);
        let mut w = AtomicWire::new(&h, AtomicOp::FetchAndAdd, BASE, init.clone());
        w.request(&request(opcode::FETCH_ADD, PSN, 0, 1, 0));
        // the operand held 0: an answer of 1 is wrong
        w.sent(&answer(PSN, 1), true);
        assert_eq!(w.tally.wire_errors.len(), 1, "{:?}", w.tally.wire_errors);
        // atomic 1 belongs at offset 64
        w.request(&request(opcode::FETCH_ADD, PSN + 1, 128, 1, 0));
        assert_eq!(w.tally.wire_errors.len(), 2, "{:?}", w.tally.wire_errors);
        // a CMP_AND_SWAP in a FETCH_AND_ADD run
        w.request(&request(opcode::COMPARE_SWAP, PSN + 2, 128, 0, 0));
        assert_eq!(w.tally.wire_errors.len(), 3, "{:?}", w.tally.wire_errors);
        // an answer for a PSN nothing was executed at
        w.sent(&answer(PSN + 9, 0), true);
        assert_eq!(w.tally.wire_errors.len(), 4, "{:?}", w.tally.wire_errors);
        // executed, never answered to the guest
        assert_eq!(w.unanswered().len(), 2);
    }

    #[test]
    fn compare_and_swap_swaps_only_on_a_match() {
        let h = hs(2);
        let init = initial_region(7, 1 << 16, &h);
        let mut w = AtomicWire::new(&h, AtomicOp::CmpAndSwap, BASE, init.clone());
        // operand 0 holds 0 (compare matches), operand 1 u64::MAX (not)
        w.request(&request(opcode::COMPARE_SWAP, PSN, 0, 5, 0));
        w.request(&request(opcode::COMPARE_SWAP, PSN + 1, 64, 5, 0));
        w.sent(&answer(PSN, 0), true);
        w.sent(&answer(PSN + 1, u64::MAX), true);
        assert!(w.tally.wire_errors.is_empty(), "{:?}", w.tally.wire_errors);
        assert_eq!(w.tally.swaps_taken, 1);
        assert_eq!((le64(&w.mem, 0), le64(&w.mem, 64)), (5, u64::MAX));
        // out of sequence: not executed, and the NAK naming the gap is fine
        w.request(&request(opcode::COMPARE_SWAP, PSN + 3, 192, 5, 0));
        assert_eq!((w.tally.executed, w.tally.out_of_sequence), (2, 1));
        let mut nak = answer(PSN + 2, 0);
        nak.bth.opcode = opcode::ACKNOWLEDGE;
        nak.aeth = Some(Aeth {
            syndrome: 0x60,
            msn: 2,
        });
        nak.atomicacketh = None;
        w.sent(&nak, true);
        assert!(w.tally.wire_errors.is_empty(), "{:?}", w.tally.wire_errors);
        assert_eq!(w.tally.seq_naks, 1);
    }
}
