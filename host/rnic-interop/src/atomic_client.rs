//! perftest `ib_atomic_bw` with rnic as the client (the requester): rnic
//! issues the atomics perftest's client issues, against `ib_atomic_bw` as
//! the server in the guest, which rxe executes on the server's region.
//!
//! The exchange is [`crate::perftest_run`]'s (the BW tests' sequence, the
//! client's BW report at the end). The data phase mirrors perftest's
//! client (`run_iter_bw`, `ctx_set_send_wqes`, `increase_rem_addr`,
//! `increase_loc_addr`): `iters` atomics, atomic k on the 8 bytes at the
//! server's `vaddr +` [`Handshake::msg_offset`]`(k)` (64 operands 64 bytes
//! apart with the default cycle buffer and cache line), its original value
//! into rnic's own buffer at the same offset; FETCH_AND_ADD adds
//! [`perftest::ATOMIC_ADD_VALUE`] (1), CMP_AND_SWAP compares with
//! [`perftest::ATOMIC_COMPARE_VALUE`] (0) and swaps in
//! [`perftest::ATOMIC_SWAP_VALUE`] (0). perftest keeps up to its tx depth
//! posted and lets the NIC hold `max_rd_atomic` of them in flight; rnic
//! keeps as many posted as the server grants (its `out_reads`), at most
//! its own `max_rd_atomic` (4), so that no two atomics in flight share a
//! local buffer and each value can be read at its completion.
//!
//! perftest's client checks nothing of the values; rnic's side does,
//! independently of rxe:
//!
//! - Each completion (in order): success, the run's opcode
//!   (`IBV_WC_FETCH_ADD` / `IBV_WC_COMP_SWAP`), byte length 8, and the
//!   value in rnic's local 8 bytes at that moment (they held a poison
//!   before the atomic was posted, [`poison`]).
//! - The wire ([`ClientWire`], from the world's frame window): every
//!   atomic request rnic sends, in PSN order from its `sq_psn`, must be
//!   atomic k's (its opcode, the server's rkey, its address, perftest's
//!   add or swap and compare values); a re-sent one (go-back-N after a
//!   loss) the same. Every ATOMIC ACKNOWLEDGE the guest sends is noted
//!   with its original value; one that answers a PSN again (rxe replays a
//!   re-sent atomic from its responder resources) must carry the same
//!   value. The guest's NAKs other than a PSN sequence error are failures.
//! - After the run ([`finish`]): every atomic went out and completed; the
//!   value rnic's local buffer held at each completion is the original
//!   value of the ATOMIC ACKNOWLEDGE that reached rnic for its PSN (so rnic
//!   placed the right answer in the right place before the CQE); and, from
//!   perftest's semantics alone (the server is passive: only rnic's
//!   atomics touch its operands), the values one operand returns follow
//!   each other as the atomic leaves the operand: FETCH_AND_ADD one more
//!   each time (an atomic executed twice, or an add lost, breaks the
//!   chain), CMP_AND_SWAP the swap where the compare value matched, else
//!   the same value. rnic's counters agree with the wire: each atomic's
//!   answer placed once (`port.rx_read_resp`, which counts ATOMIC
//!   ACKNOWLEDGEs placed with the READ responses), as many packets sent
//!   again as re-sent atomics on the wire (`port.tx_retransmits`), every
//!   other ATOMIC ACKNOWLEDGE that reached rnic dropped (`port.rx_drop_psn`).
//!
//! What perftest's operands cannot show: with CMP_AND_SWAP's compare and
//! swap both 0, a requester that exchanged the two on the wire would pass
//! (`tests/atomic_requester.rs` checks that with distinct values).

use std::collections::{BTreeSet, HashMap};

use rnic_wire::opcode;

use crate::atomic_run::{frame_line, intact, psn_diff, WireLog};
use crate::perftest::{self, AtomicOp, Handshake};
use crate::{InteropError, Result, Rnic};

/// Salt of the poison ("atompois").
const POISON_SALT: u64 = 0x6174_6f6d_706f_6973;

/// What rnic's local 8 bytes of atomic `k` hold before it is posted.
pub fn poison(k: u64) -> u64 {
    rnic_harness::pattern::mix(k ^ POISON_SALT)
}

/// The verbs work request's operation for perftest's atomic.
pub fn verbs_op(op: AtomicOp) -> rnic_verbs::AtomicOp {
    match op {
        AtomicOp::FetchAndAdd => rnic_verbs::AtomicOp::FetchAndAdd {
            add: perftest::ATOMIC_ADD_VALUE,
        },
        AtomicOp::CmpAndSwap => rnic_verbs::AtomicOp::CmpAndSwp {
            compare: perftest::ATOMIC_COMPARE_VALUE,
            swap: perftest::ATOMIC_SWAP_VALUE,
        },
    }
}

/// The completion opcode of perftest's atomic.
pub fn wc_opcode(op: AtomicOp) -> rnic_verbs::WcOpcode {
    match op {
        AtomicOp::FetchAndAdd => rnic_verbs::WcOpcode::FetchAdd,
        AtomicOp::CmpAndSwap => rnic_verbs::WcOpcode::CompSwap,
    }
}

/// What an operand holds after `op` found `v` there.
pub fn after(op: AtomicOp, v: u64) -> u64 {
    match op {
        AtomicOp::FetchAndAdd => v.wrapping_add(perftest::ATOMIC_ADD_VALUE),
        AtomicOp::CmpAndSwap if v == perftest::ATOMIC_COMPARE_VALUE => perftest::ATOMIC_SWAP_VALUE,
        AtomicOp::CmpAndSwap => v,
    }
}

/// rnic's atomics as a client, and what was checked.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct AtomicClientTally {
    /// The run's atomic.
    pub op: Option<AtomicOp>,
    /// Atomics rnic issued (perftest's `-n`) and completed.
    pub iters: u64,
    pub completed: u64,
    /// Atomics rnic kept posted and not completed at most: the server's
    /// `out_reads`, at most rnic's `max_rd_atomic`.
    pub depth: u32,
    /// Atomic request frames rnic sent, those the link dropped, and those
    /// that sent a PSN again (go-back-N after a loss or a timeout).
    pub requests: u64,
    pub requests_dropped: u64,
    pub resent: u64,
    /// ATOMIC ACKNOWLEDGE frames the guest sent, those the link dropped,
    /// and those answering a PSN answered before (rxe's replays of re-sent
    /// atomics, from its responder resources).
    pub atomic_acks: u64,
    pub atomic_acks_dropped: u64,
    pub atomic_acks_again: u64,
    /// Copies of ATOMIC ACKNOWLEDGEs that reached rnic.
    pub atomic_acks_delivered: u64,
    /// The guest's plain ACKs and NAKs (PSN sequence errors among them).
    pub acks: u64,
    pub naks: u64,
    pub seq_naks: u64,
    /// Completions whose local 8 bytes held the original value of the
    /// ATOMIC ACKNOWLEDGE that reached rnic for their PSN.
    pub values_checked: u64,
    /// Operands of the server's the atomics hit, and the successive values
    /// on them checked against perftest's semantics.
    pub operands: u64,
    pub operand_steps_checked: u64,
    /// The distinct add (FETCH_AND_ADD), swap and compare (CMP_AND_SWAP)
    /// values rnic sent.
    pub add_values: BTreeSet<u64>,
    pub swap_values: BTreeSet<u64>,
    pub compare_values: BTreeSet<u64>,
    /// What rnic's counters moved by: answers placed
    /// (`port.rx_read_resp`), packets sent again (`port.tx_retransmits`),
    /// frames dropped for their PSN (`port.rx_drop_psn`).
    pub placed: u32,
    pub tx_retransmits: u32,
    pub rx_drop_psn: u32,
    /// What was wrong (the first few).
    pub wire_errors: Vec<String>,
}

enum Event {
    /// A frame rnic sent; whether it reached the guest.
    Sent(rnic_wire::RoceFrame, bool),
    /// A frame of the guest's reaching rnic.
    Arrived(rnic_wire::RoceFrame),
    /// A frame of the guest's the link lost.
    Lost(rnic_wire::RoceFrame),
}

/// The wire checker of rnic's atomics, fed every frame of the run.
pub(crate) struct ClientWire {
    op: AtomicOp,
    hs: Handshake,
    first_psn: u32,
    iters: u64,
    /// Atomics rnic has sent (the next new one's index).
    next_k: u64,
    /// The original value of the first ATOMIC ACKNOWLEDGE that reached
    /// rnic, per atomic.
    orig: HashMap<u64, u64>,
    /// ATOMIC ACKNOWLEDGE frames the guest sent, per atomic.
    answers: HashMap<u64, u64>,
    /// The local value at each completion.
    values: Vec<Option<u64>>,
    pending: Vec<(u64, u8, Event)>,
    log: WireLog,
    pub(crate) tally: AtomicClientTally,
}

impl ClientWire {
    /// Start watching `rnic`'s link; rnic's first PSN is `first_psn`.
    pub(crate) fn start(rnic: &Rnic, hs: &Handshake, op: AtomicOp, first_psn: u32) -> Self {
        rnic.world.set_window(1 << 14);
        rnic.world.clear_window();
        Self::new(hs, op, first_psn)
    }

    fn new(hs: &Handshake, op: AtomicOp, first_psn: u32) -> Self {
        Self {
            op,
            hs: hs.clone(),
            first_psn: first_psn & 0xFF_FFFF,
            iters: hs.iters,
            next_k: 0,
            orig: HashMap::new(),
            answers: HashMap::new(),
            values: vec![None; hs.iters as usize],
            pending: Vec::new(),
            log: WireLog::default(),
            tally: AtomicClientTally {
                op: Some(op),
                iters: hs.iters,
                ..AtomicClientTally::default()
            },
        }
    }

    /// The PSN of atomic `k`.
    pub(crate) fn psn(&self, k: u64) -> u32 {
        self.first_psn.wrapping_add(k as u32) & 0xFF_FFFF
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
    }

    /// Atomic `k` completed with `value` in its local 8 bytes.
    pub(crate) fn completed(&mut self, k: u64, value: u64) {
        if let Some(v) = self.values.get_mut(k as usize) {
            *v = Some(value);
        }
        self.tally.completed += 1;
    }

    /// One line for the user.
    pub(crate) fn summary(&self) -> String {
        let t = &self.tally;
        format!(
            "rnic's side of the link: {} of {} atomics sent, {} completed; {} atomic requests ({} dropped by the link, {} sent again), {} ATOMIC ACKNOWLEDGEs from the guest ({} dropped by the link, {} answering a PSN again), {} ACKs, {} NAKs ({} PSN sequence errors); wire problems: {}",
            self.next_k,
            t.iters,
            t.completed,
            t.requests,
            t.requests_dropped,
            t.resent,
            t.atomic_acks,
            t.atomic_acks_dropped,
            t.atomic_acks_again,
            t.acks,
            t.naks,
            t.seq_naks,
            if t.wire_errors.is_empty() {
                "none".to_string()
            } else {
                format!(
                    "{}\nthe wire before the first, as rnic's side saw it (the guest's frames at their arrival):\n  {}",
                    t.wire_errors.join("; "),
                    self.log.context.join("\n  ")
                )
            }
        )
    }

    /// The wire as it stands (the last frames), for a run that failed
    /// before [`finish`].
    pub(crate) fn recent(&self) -> String {
        self.log
            .recent
            .iter()
            .cloned()
            .collect::<Vec<_>>()
            .join("\n  ")
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
            if rnic_wire::is_atomic(fr.bth.opcode) {
                self.tally.requests += 1;
                if !delivered {
                    self.tally.requests_dropped += 1;
                }
            }
            self.pending.push((f.cycle, 0, Event::Sent(fr, delivered)));
            return;
        }
        if fr.bth.opcode == opcode::ATOMIC_ACKNOWLEDGE {
            self.tally.atomic_acks += 1;
            if let Ok(k) = u64::try_from(psn_diff(fr.bth.psn, self.first_psn)) {
                let n = self.answers.entry(k).or_insert(0);
                *n += 1;
                if *n > 1 {
                    self.tally.atomic_acks_again += 1;
                }
            }
        }
        if good.peek().is_none() {
            if fr.bth.opcode == opcode::ATOMIC_ACKNOWLEDGE {
                self.tally.atomic_acks_dropped += 1;
            }
            self.pending.push((f.cycle, 1, Event::Lost(fr)));
            return;
        }
        for t in good {
            self.pending.push((t, 1, Event::Arrived(fr.clone())));
        }
    }

    fn settle(&mut self, now: u64) {
        self.pending.sort_by_key(|&(t, o, _)| (t, o));
        let later = self.pending.partition_point(|&(t, _, _)| t <= now);
        let due: Vec<_> = self.pending.drain(..later).collect();
        for (t, _, e) in due {
            let (fr, dir) = match &e {
                Event::Sent(fr, true) => (fr, "rnic -> guest"),
                Event::Sent(fr, false) => (fr, "rnic -> guest (lost on the link)"),
                Event::Arrived(fr) => (fr, "guest -> rnic"),
                Event::Lost(fr) => (fr, "guest -> rnic (lost on the link)"),
            };
            let line = frame_line(dir, fr, "server", self.hs.remote[0].vaddr);
            self.log.note(t, line);
            match e {
                Event::Sent(fr, _) => self.sent(&fr),
                Event::Arrived(fr) => self.arrived(&fr),
                Event::Lost(_) => {}
            }
        }
    }

    /// A frame rnic sent: an atomic request, nothing else.
    fn sent(&mut self, fr: &rnic_wire::RoceFrame) {
        let psn = fr.bth.psn;
        if !rnic_wire::is_atomic(fr.bth.opcode) {
            self.problem(format!(
                "rnic sent {} at PSN {psn:#08x}; it only issues atomics in this run",
                rnic_wire::opcode_name(fr.bth.opcode)
            ));
            return;
        }
        let want_op = match self.op {
            AtomicOp::FetchAndAdd => opcode::FETCH_ADD,
            AtomicOp::CmpAndSwap => opcode::COMPARE_SWAP,
        };
        let d = psn_diff(psn, self.first_psn);
        let k = match u64::try_from(d) {
            Ok(k) if k < self.iters => k,
            _ => {
                self.problem(format!(
                    "rnic sent an atomic at PSN {psn:#08x}, {d} from its first PSN {:#08x}: it issues {} atomics",
                    self.first_psn, self.iters
                ));
                return;
            }
        };
        if fr.bth.opcode != want_op {
            self.problem(format!(
                "rnic's atomic {k} (PSN {psn:#08x}) is {}, the run's is {}",
                rnic_wire::opcode_name(fr.bth.opcode),
                rnic_wire::opcode_name(want_op)
            ));
        }
        match k.cmp(&self.next_k) {
            std::cmp::Ordering::Equal => self.next_k += 1,
            std::cmp::Ordering::Less => self.tally.resent += 1,
            std::cmp::Ordering::Greater => self.problem(format!(
                "rnic sent atomic {k} (PSN {psn:#08x}) before atomic {} (PSN {:#08x})",
                self.next_k,
                self.psn(self.next_k)
            )),
        }
        let Some(a) = fr.atomiceth else {
            self.problem(format!(
                "rnic's atomic {k} (PSN {psn:#08x}) has no AtomicETH"
            ));
            return;
        };
        let r = self.hs.remote[0];
        let va = r.vaddr + self.hs.msg_offset(k);
        if a.va != va || a.rkey != r.rkey {
            self.problem(format!(
                "rnic's atomic {k} (PSN {psn:#08x}) goes to VA {:#x} rkey {:#x}; perftest's client sends it to {va:#x} (the server's region + {}) rkey {:#x}",
                a.va,
                a.rkey,
                self.hs.msg_offset(k),
                r.rkey
            ));
        }
        match self.op {
            AtomicOp::FetchAndAdd => {
                self.tally.add_values.insert(a.swap_add);
                if a.swap_add != perftest::ATOMIC_ADD_VALUE {
                    self.problem(format!(
                        "rnic's FETCH_AND_ADD {k} (PSN {psn:#08x}) adds {:#x}, perftest's {:#x}",
                        a.swap_add,
                        perftest::ATOMIC_ADD_VALUE
                    ));
                }
            }
            AtomicOp::CmpAndSwap => {
                self.tally.swap_values.insert(a.swap_add);
                self.tally.compare_values.insert(a.compare);
                if a.swap_add != perftest::ATOMIC_SWAP_VALUE
                    || a.compare != perftest::ATOMIC_COMPARE_VALUE
                {
                    self.problem(format!(
                        "rnic's CMP_AND_SWAP {k} (PSN {psn:#08x}) swaps {:#x} compares {:#x}, perftest's {:#x} and {:#x}",
                        a.swap_add,
                        a.compare,
                        perftest::ATOMIC_SWAP_VALUE,
                        perftest::ATOMIC_COMPARE_VALUE
                    ));
                }
            }
        }
    }

    /// A frame of the guest's reached rnic.
    fn arrived(&mut self, fr: &rnic_wire::RoceFrame) {
        let psn = fr.bth.psn;
        match fr.bth.opcode {
            opcode::ATOMIC_ACKNOWLEDGE => {
                self.tally.atomic_acks_delivered += 1;
                let d = psn_diff(psn, self.first_psn);
                let k = match u64::try_from(d) {
                    Ok(k) if k < self.next_k => k,
                    _ => {
                        self.problem(format!(
                            "the guest answered PSN {psn:#08x} with an ATOMIC ACKNOWLEDGE; rnic has sent atomics up to PSN {:#08x} (exclusive)",
                            self.psn(self.next_k)
                        ));
                        return;
                    }
                };
                match fr.aeth {
                    Some(a) if a.syndrome >> 5 == 0 => {}
                    Some(a) => self.problem(format!(
                        "the guest's ATOMIC ACKNOWLEDGE at PSN {psn:#08x} carries AETH syndrome {:#04x}, not an ACK",
                        a.syndrome
                    )),
                    None => self.problem(format!(
                        "the guest's ATOMIC ACKNOWLEDGE at PSN {psn:#08x} has no AETH"
                    )),
                }
                let Some(v) = fr.atomicacketh.map(|a| a.orig) else {
                    self.problem(format!(
                        "the guest's ATOMIC ACKNOWLEDGE at PSN {psn:#08x} has no AtomicAckETH"
                    ));
                    return;
                };
                match self.orig.get(&k).copied() {
                    None => {
                        self.orig.insert(k, v);
                    }
                    Some(first) if first == v => {}
                    Some(first) => self.problem(format!(
                        "the guest answered atomic {k} (PSN {psn:#08x}) with original {first:#x}, and again with {v:#x} (executed twice?)"
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
                if syn == 0x60 {
                    // (rnic's request after a lost one reached rxe)
                    self.tally.seq_naks += 1;
                    return;
                }
                self.problem(format!(
                    "the guest NAKed rnic's atomic at PSN {psn:#08x} (AETH syndrome {syn:#04x}: {})",
                    match syn {
                        0x61 => "invalid request",
                        0x62 => "remote access error",
                        0x63 => "remote operational error",
                        0x64 => "invalid RD request",
                        _ if syn >> 5 == 1 => "RNR",
                        _ => "?",
                    }
                ));
            }
            _ => {}
        }
    }
}

/// rnic's counters before the run, for [`finish`].
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct CountersBefore {
    pub rx_read_resp: u32,
    pub tx_retransmits: u32,
    pub rx_drop_psn: u32,
}

impl CountersBefore {
    pub(crate) fn read(rnic: &Rnic) -> Result<Self> {
        let c = rnic.counters()?;
        Ok(Self {
            rx_read_resp: c.rx_read_resp,
            tx_retransmits: c.tx_retransmits,
            rx_drop_psn: c.rx_drop_psn,
        })
    }
}

/// The checks after the run (see the module docs). Returns the tally, or
/// what failed.
pub(crate) fn finish(
    rnic: &Rnic,
    mut w: ClientWire,
    before: CountersBefore,
) -> Result<AtomicClientTally> {
    // What is still in flight (a late answer) goes too.
    rnic.world.run(20_000);
    w.stop(rnic);
    let c = rnic.counters()?;
    w.tally.placed = c.rx_read_resp.wrapping_sub(before.rx_read_resp);
    w.tally.tx_retransmits = c.tx_retransmits.wrapping_sub(before.tx_retransmits);
    w.tally.rx_drop_psn = c.rx_drop_psn.wrapping_sub(before.rx_drop_psn);
    check(&mut w)?;
    Ok(w.tally)
}

/// [`finish`]'s checks, on what the run left in `w`.
fn check(w: &mut ClientWire) -> Result<()> {
    let iters = w.iters;
    let fail = |w: &ClientWire, what: String| {
        Err(InteropError::Failed(format!(
            "ib_atomic_bw -A {} (rnic the client) finished, but {what}\n{}",
            w.op.arg(),
            w.summary()
        )))
    };
    if !w.tally.wire_errors.is_empty() {
        return fail(w, "the atomics were wrong on the wire".into());
    }
    if w.next_k != iters || w.tally.completed != iters {
        return fail(
            w,
            format!(
                "rnic sent {} and completed {} of its {iters} atomics",
                w.next_k, w.tally.completed
            ),
        );
    }
    if w.tally.requests != iters + w.tally.resent {
        return fail(
            w,
            format!(
                "rnic sent {} atomic requests: {iters} atomics and {} sent again do not add up",
                w.tally.requests, w.tally.resent
            ),
        );
    }
    // Each completion's value is its answer's.
    for k in 0..iters {
        let psn = w.psn(k);
        let off = w.hs.msg_offset(k);
        let Some(got) = w.values[k as usize] else {
            return fail(w, format!("atomic {k} (PSN {psn:#08x}) has no completion"));
        };
        let Some(want) = w.orig.get(&k).copied() else {
            return fail(
                w,
                format!(
                    "rnic completed atomic {k} (PSN {psn:#08x}), but no ATOMIC ACKNOWLEDGE for it reached rnic"
                ),
            );
        };
        if got != want {
            return fail(
                w,
                format!(
                    "at atomic {k}'s completion (PSN {psn:#08x}) rnic's local 8 bytes at offset {off} held {got:#x}{}, the ATOMIC ACKNOWLEDGE that reached rnic carried {want:#x}",
                    if got == poison(k) {
                        " (the poison written before it was posted: nothing was placed)"
                    } else {
                        ""
                    }
                ),
            );
        }
        w.tally.values_checked += 1;
    }
    // perftest's semantics: atomic k and atomic k + slots hit the same
    // operand, nothing else touches it in between.
    let slots = w.hs.slots();
    w.tally.operands = slots.min(iters);
    for k in 0..iters.saturating_sub(slots) {
        let v = w.values[k as usize].expect("checked above");
        let next = w.values[(k + slots) as usize].expect("checked above");
        let want = after(w.op, v);
        if next != want {
            return fail(
                w,
                format!(
                    "the server's operand at +{} returned {v:#x} to atomic {k} and {next:#x} to atomic {} (the next on it), {want:#x} expected",
                    w.hs.msg_offset(k),
                    k + slots
                ),
            );
        }
        w.tally.operand_steps_checked += 1;
    }
    // The counters: every answer placed once, every resend counted, every
    // other answer that reached rnic dropped for its PSN.
    if u64::from(w.tally.placed) != iters {
        return fail(
            w,
            format!(
                "rnic's port.rx_read_resp (answers placed) moved by {}, for {iters} atomics",
                w.tally.placed
            ),
        );
    }
    if u64::from(w.tally.tx_retransmits) != w.tally.resent {
        return fail(
            w,
            format!(
                "rnic's port.tx_retransmits moved by {}, it sent {} atomics again on the wire",
                w.tally.tx_retransmits, w.tally.resent
            ),
        );
    }
    let extra = w.tally.atomic_acks_delivered - iters.min(w.tally.atomic_acks_delivered);
    if u64::from(w.tally.rx_drop_psn) != extra {
        return fail(
            w,
            format!(
                "rnic's port.rx_drop_psn moved by {}, but {} of the {} ATOMIC ACKNOWLEDGEs that reached it were not placed",
                w.tally.rx_drop_psn, extra, w.tally.atomic_acks_delivered
            ),
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::perftest::{Dest, IbvMtu, Negotiated, Role, TestKind};
    use rnic_wire::{Aeth, AtomicAckEth, AtomicEth, Bth, RoceFrame};

    const VADDR: u64 = 0x7f00_1234_0000;
    const RKEY: u32 = 0x1234;
    const PSN: u32 = 0xff_fffe;

    fn hs(iters: u64) -> Handshake {
        let local = Dest::new(0x11, PSN, 0x22, 0x1000, [0; 16]);
        let remote = Dest::new(0x33, 0x100, RKEY, VADDR, [0; 16]);
        Handshake {
            kind: TestKind::AtomicBw,
            role: Role::Client,
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
            local: vec![local],
            remote: vec![remote],
        }
    }

    fn request(h: &Handshake, op: AtomicOp, k: u64) -> RoceFrame {
        let (opc, swap_add) = match op {
            AtomicOp::FetchAndAdd => (opcode::FETCH_ADD, 1),
            AtomicOp::CmpAndSwap => (opcode::COMPARE_SWAP, 0),
        };
        RoceFrame {
            bth: Bth {
                opcode: opc,
                psn: PSN.wrapping_add(k as u32) & 0xff_ffff,
                ..Bth::default()
            },
            atomiceth: Some(AtomicEth {
                va: VADDR + h.msg_offset(k),
                rkey: RKEY,
                swap_add,
                compare: 0,
            }),
            ..RoceFrame::default()
        }
    }

    fn answer(k: u64, orig: u64) -> RoceFrame {
        RoceFrame {
            bth: Bth {
                opcode: opcode::ATOMIC_ACKNOWLEDGE,
                psn: PSN.wrapping_add(k as u32) & 0xff_ffff,
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

    /// A server whose operands start at `init(slot)`, answering each of
    /// `iters` atomics right; rnic placing each value. Returns the wire.
    fn run(op: AtomicOp, iters: u64, init: impl Fn(u64) -> u64) -> ClientWire {
        let h = hs(iters);
        let mut w = ClientWire::new(&h, op, PSN);
        let mut mem: Vec<u64> = (0..h.slots()).map(&init).collect();
        for k in 0..iters {
            w.sent(&request(&h, op, k));
            let s = (k % h.slots()) as usize;
            let v = mem[s];
            mem[s] = after(op, v);
            w.arrived(&answer(k, v));
            w.completed(k, v);
        }
        w.tally.requests = iters;
        w.tally.atomic_acks_delivered = iters;
        w.tally.placed = iters as u32;
        w
    }

    #[test]
    fn right_answers_pass_and_chain_per_operand() {
        // PSNs wrap; operand 1 carries through every byte
        let mut w = run(AtomicOp::FetchAndAdd, 200, |s| {
            if s == 1 {
                u64::MAX - 1
            } else {
                s * 1000
            }
        });
        check(&mut w).unwrap();
        assert_eq!(w.tally.values_checked, 200);
        assert_eq!(w.tally.operand_steps_checked, 200 - 64);
        assert_eq!(w.tally.operands, 64);
        let mut w = run(
            AtomicOp::CmpAndSwap,
            130,
            |s| if s % 2 == 0 { 0 } else { s },
        );
        check(&mut w).unwrap();
        assert_eq!(w.tally.operand_steps_checked, 130 - 64);
        assert_eq!(w.tally.swap_values, [0].into());
    }

    #[test]
    fn a_value_not_placed_or_executed_twice_fails() {
        // rnic's local buffer still holds the poison
        let mut w = run(AtomicOp::FetchAndAdd, 100, |s| s);
        w.values[70] = Some(poison(70));
        let e = check(&mut w).unwrap_err().to_string();
        assert!(e.contains("nothing was placed"), "{e}");
        // the server executed atomic 66 twice: operand 2 jumps by 2 and
        // both answers agree with what rnic placed
        let h = hs(100);
        let mut w = ClientWire::new(&h, AtomicOp::FetchAndAdd, PSN);
        for k in 0..100u64 {
            w.sent(&request(&h, AtomicOp::FetchAndAdd, k));
            let v = (k % 64) * 1000 + k / 64 + u64::from(k == 66);
            w.arrived(&answer(k, v));
            w.completed(k, v);
        }
        w.tally.requests = 100;
        w.tally.atomic_acks_delivered = 100;
        w.tally.placed = 100;
        let e = check(&mut w).unwrap_err().to_string();
        assert!(e.contains("the next on it"), "{e}");
    }

    #[test]
    fn wrong_requests_and_answers_are_problems() {
        let h = hs(8);
        let mut w = ClientWire::new(&h, AtomicOp::FetchAndAdd, PSN);
        // atomic 0 to the wrong operand
        let mut r = request(&h, AtomicOp::FetchAndAdd, 0);
        r.atomiceth.as_mut().unwrap().va += 64;
        w.sent(&r);
        assert_eq!(w.tally.wire_errors.len(), 1, "{:?}", w.tally.wire_errors);
        // atomic 1 adding 2
        let mut r = request(&h, AtomicOp::FetchAndAdd, 1);
        r.atomiceth.as_mut().unwrap().swap_add = 2;
        w.sent(&r);
        assert_eq!(w.tally.wire_errors.len(), 2, "{:?}", w.tally.wire_errors);
        // a CMP_AND_SWAP in a FETCH_AND_ADD run (its operand the add's)
        let mut r = request(&h, AtomicOp::CmpAndSwap, 2);
        r.atomiceth.as_mut().unwrap().swap_add = 1;
        w.sent(&r);
        assert_eq!(w.tally.wire_errors.len(), 3, "{:?}", w.tally.wire_errors);
        // atomic 4 before 3
        w.sent(&request(&h, AtomicOp::FetchAndAdd, 4));
        assert_eq!(w.tally.wire_errors.len(), 4, "{:?}", w.tally.wire_errors);
        // a resend of atomic 1 is counted, not a problem
        w.sent(&request(&h, AtomicOp::FetchAndAdd, 1));
        assert_eq!((w.tally.resent, w.tally.wire_errors.len()), (1, 4));
        // answered twice, differently
        w.arrived(&answer(1, 5));
        w.arrived(&answer(1, 5));
        assert_eq!(w.tally.wire_errors.len(), 4, "{:?}", w.tally.wire_errors);
        w.arrived(&answer(1, 6));
        assert_eq!(w.tally.wire_errors.len(), 5, "{:?}", w.tally.wire_errors);
        // an answer for an atomic rnic never sent
        w.arrived(&answer(7, 0));
        assert_eq!(w.tally.wire_errors.len(), 6, "{:?}", w.tally.wire_errors);
        // a remote access error NAK; a sequence NAK is fine
        let mut nak = answer(0, 0);
        nak.bth.opcode = opcode::ACKNOWLEDGE;
        nak.atomicacketh = None;
        nak.aeth = Some(Aeth {
            syndrome: 0x60,
            msn: 0,
        });
        w.arrived(&nak);
        assert_eq!((w.tally.seq_naks, w.tally.wire_errors.len()), (1, 6));
        nak.aeth = Some(Aeth {
            syndrome: 0x62,
            msn: 0,
        });
        w.arrived(&nak);
        assert_eq!(w.tally.wire_errors.len(), 7, "{:?}", w.tally.wire_errors);
        assert!(w.tally.wire_errors[6].contains("remote access error"));
    }

    #[test]
    fn the_operands_are_perftests() {
        assert_eq!(
            verbs_op(AtomicOp::CmpAndSwap),
            rnic_verbs::AtomicOp::CmpAndSwp {
                compare: 0,
                swap: 0
            }
        );
        assert_eq!(
            verbs_op(AtomicOp::FetchAndAdd),
            rnic_verbs::AtomicOp::FetchAndAdd { add: 1 }
        );
        assert_eq!(after(AtomicOp::CmpAndSwap, 0), 0);
        assert_eq!(after(AtomicOp::CmpAndSwap, 7), 7);
        assert_eq!(after(AtomicOp::FetchAndAdd, u64::MAX), 0);
        assert_ne!(poison(0), poison(1));
    }
}
