//! Bench of `qpn_doorbell`, the doorbells by QP number: each waits in a
//! small table (one entry per queue, a later doorbell of a waiting queue
//! replacing its producer index) for its lookup in the QP directory, and
//! on a miss for the NIC's fetch; a fetch that found every cache slot
//! pinned leaves it waiting, anything else that finds no slot drops it
//! with an error.
//!
//! The bench plays the directory and the fetch. QP numbers 0 .. NQ - 1 name
//! slot n itself (`lk_slot` = the number), so an output names its queue:
//! even numbers ring send queues, odd ones receive queues. The directory
//! answers `lk_qpn` of LK_LAT cycles before, by the bound set; the lookup
//! port is the fetch's while `lk_busy` (random phases, and every fetch the
//! block asks), and an answer whose window saw `lk_busy` is junk (a random
//! hit and slot). Bindings change only while `lk_busy`, as in the core,
//! where only the fetch binds. A fetch answers ok (and binds the number),
//! full (every slot pinned) or failed, at random.
//!
//! Checked: every doorbell handed on (`m_*_valid` with `m_ready`) is one
//! the host wrote for that queue, later than the last handed on (an index
//! older than one already given, or one never written, fails), of a number
//! bound at its answer, on the queue kind its number rings; the output
//! holds while `m_ready` is low; a fetch is asked only for a number that
//! missed with misses on and within `miss_records`; an error names a
//! number whose lookup missed with misses off or beyond the records, or
//! whose fetch failed (never one that found every slot pinned), and covers
//! the doorbells written before its decision; the gauges. At the end the
//! bench binds everything and drains: every queue's last doorbell must be
//! handed on or dropped, and the block idle.

use std::collections::VecDeque;

use crate::{fail, Fail, Kind, Model, PortsIn};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// QP numbers the bench rings.
const NQ: u32 = 12;

/// One run of [`run`].
#[derive(Debug, Clone)]
pub struct QdbCfg {
    /// configuration name (a `Kind::QpnDoorbell` one)
    pub model: &'static str,
    pub seed: u64,
    pub cycles: usize,
    /// chance per cycle of a doorbell when one may come
    pub p_db: f64,
    /// chance per cycle that a random lookup-port phase starts
    pub p_busy: f64,
    /// chance per cycle that `m_ready` is low
    pub p_stall: f64,
}

impl QdbCfg {
    pub fn new(model: &'static str, seed: u64) -> Self {
        Self {
            model,
            seed,
            cycles: 20_000,
            p_db: 0.4,
            p_busy: 0.02,
            p_stall: 0.3,
        }
    }
}

/// What a run saw.
#[derive(Debug, Clone, Default)]
pub struct QdbReport {
    pub doorbells: usize,
    /// doorbells handed on, and doorbells written that a later one of the
    /// same queue replaced before they were handed on
    pub handed_on: usize,
    pub replaced: usize,
    pub fetches: usize,
    pub fetch_full: usize,
    pub fetch_failed: usize,
    pub errors: usize,
    /// cycles an output waited for `m_ready`
    pub out_stalls: usize,
    /// answers the bench gave as junk (the port was the fetch's)
    pub junk_answers: usize,
    pub waiting_max: u32,
    /// quiet phases in which everything written was handed on or dropped
    pub drains: usize,
}

#[derive(Default, Clone)]
struct Queue {
    /// (index, cycle written), every doorbell in order
    written: Vec<(u32, usize)>,
    /// written[..done] are handed on, replaced or dropped
    done: usize,
    /// the block may drop it: its last clean lookup missed with misses off
    /// or beyond the records, or its fetch failed
    may_drop: bool,
}

enum Fetch {
    Idle,
    /// the number, cycles left, the outcome (0 ok, 1 full, 2 failed)
    Run(u32, u32, u8),
}

pub fn run(c: &QdbCfg) -> Result<QdbReport, Fail> {
    let mut m = Model::new(c.model, c.seed as u32).map_err(Fail)?;
    let cfg = *m.config();
    assert_eq!(
        cfg.kind,
        Kind::QpnDoorbell,
        "{} is not a qpn_doorbell",
        cfg.name
    );
    let lk_lat = cfg.param("LK_LAT") as usize;
    let pend = cfg.param("PEND");
    assert!(cfg.param("QN_W") >= 4 && (1..=5).contains(&lk_lat));
    let mut rng = ChaCha8Rng::seed_from_u64(c.seed);
    let mut rep = QdbReport::default();

    let mut bound = vec![false; NQ as usize];
    let mut q: Vec<Queue> = vec![Queue::default(); NQ as usize];
    let mut pi_next: u32 = 1;
    // lk_qpn and lk_busy of the last cycles, newest last
    let mut lk_hist: VecDeque<(u32, bool)> = VecDeque::new();
    let mut busy_left = 0u32;
    let mut fetch = Fetch::Idle;
    let mut done_pulse: Option<u8> = None;
    let mut miss_en = true;
    let mut records = NQ;
    // the (miss_en, records) of the last cycles
    let mut cfg_hist: VecDeque<(bool, u32)> = VecDeque::new();
    let mut prev_busy_out = true;
    let mut last_db = 0usize;
    let mut prev_out: Option<(u32, bool)> = None; // (m_data[0], rq) pending last cycle
    let mut prev_handshake = false;
    let mut prev_bound = bound.clone();
    let mut waiting_max = 0u32;
    // drains: quiet phases every few hundred cycles and one at the end, in
    // which every queue's last doorbell must be handed on or dropped (a
    // doorbell lost while a later one of its queue follows looks like one
    // replaced: only a queue's last one shows a loss)
    let mut drain_from = rng.gen_range(300..800usize);
    let mut drains = 0usize;
    let end = c.cycles + 20_000;

    for cyc in 0..end {
        let draining = cyc >= drain_from;
        if draining && cyc > drain_from + 5_000 {
            let left: Vec<(usize, usize)> = q
                .iter()
                .enumerate()
                .filter(|(_, qu)| qu.done < qu.written.len())
                .map(|(n, qu)| (n, qu.written.len() - qu.done))
                .collect();
            fail!("cycle {cyc}: a drain from cycle {drain_from}: doorbells never handed on nor dropped (QP, how many): {left:?}");
        }
        // --- inputs
        let mut i = PortsIn::default();
        // a doorbell: two cycles apart at least, and only while the block
        // was not busy (the MMIO path's spacing and wait)
        if !draining && !prev_busy_out && cyc > last_db + 1 && rng.gen_bool(c.p_db) {
            let n = rng.gen_range(0..NQ);
            let pi = pi_next & 0xffff;
            pi_next += 1;
            if n % 2 == 0 {
                i.s_data[0] = n | pi << 16;
                i.s_valid |= 1;
            } else {
                i.s_data[1] = n | pi << 16;
                i.s_valid |= 2;
            }
            q[n as usize].written.push((pi, cyc));
            last_db = cyc;
            rep.doorbells += 1;
        }
        // the lookup port: a fetch's, or a random phase (bindings change;
        // the drain's first phase binds every number)
        if !draining && busy_left == 0 && matches!(fetch, Fetch::Idle) && rng.gen_bool(c.p_busy) {
            busy_left = rng.gen_range(1..12);
        }
        if cyc == drain_from {
            busy_left = busy_left.max(4);
        }
        let port_busy = busy_left > 0 || matches!(fetch, Fetch::Run(..));
        if busy_left > 0 {
            busy_left -= 1;
            if draining {
                bound.iter_mut().for_each(|b| *b = true);
            } else if rng.gen_bool(0.3) {
                let n = rng.gen_range(0..NQ) as usize;
                bound[n] = !bound[n];
            }
        }
        // the answer for lk_qpn of LK_LAT cycles before, junk if the port
        // was the fetch's in that window (or is now)
        let clean = lk_hist.len() >= lk_lat
            && !port_busy
            && lk_hist.iter().rev().take(lk_lat).all(|h| !h.1);
        let asked = lk_hist.len().checked_sub(lk_lat).map(|k| lk_hist[k].0);
        let (hit, slot) = match (clean, asked) {
            (true, Some(n)) if n < NQ => (bound[n as usize], n),
            (true, _) => (false, 0),
            _ => {
                rep.junk_answers += 1;
                (rng.gen_bool(0.7), rng.gen_range(0..NQ))
            }
        };
        i.s_data[2] = slot;
        if hit {
            i.s_valid |= 1 << 2;
        }
        if port_busy {
            i.s_valid |= 1 << 3;
        }
        // misses off and the records shrunk now and then, for a while
        if !draining && rng.gen_bool(if miss_en { 0.0005 } else { 0.01 }) {
            miss_en = !miss_en;
        }
        if !draining && rng.gen_bool(if records == NQ { 0.0005 } else { 0.01 }) {
            records = if records == NQ {
                rng.gen_range(0..NQ)
            } else {
                NQ
            };
        }
        if draining {
            miss_en = true;
            records = NQ;
        }
        if miss_en {
            i.s_valid |= 1 << 4;
        }
        i.s_data[3] = records;
        let done_now = done_pulse.is_some();
        if let Some(outcome) = done_pulse.take() {
            i.s_valid |= 1 << 5;
            if outcome == 0 {
                i.s_valid |= 1 << 6;
            }
            if outcome == 1 {
                i.s_valid |= 1 << 7;
            }
        }
        let ready = draining || !rng.gen_bool(c.p_stall);
        i.m_ready = ready as u8;

        let o = m.step(&i);

        // --- outputs
        let out_valid = o.m_valid & 3;
        let busy_out = o.m_valid & 4 != 0;
        let miss_valid = o.m_valid & 8 != 0;
        let err_valid = o.m_valid & 16 != 0;
        let idle = o.m_valid & 128 != 0;
        let waiting = o.m_data[4] & 0x1f;
        let wmax = (o.m_data[4] >> 8) & 0x1f;
        if out_valid == 3 {
            fail!("cycle {cyc}: m_sq_valid and m_rq_valid at once");
        }
        if waiting > pend || wmax < waiting || wmax < waiting_max {
            fail!("cycle {cyc}: waiting {waiting}, most {wmax} (before {waiting_max}), table of {pend}");
        }
        waiting_max = wmax;
        if out_valid != 0 {
            let rq = out_valid == 2;
            let data = o.m_data[0];
            let n = data & 0xffff;
            let pi = data >> 16;
            match prev_out {
                Some(p) if !prev_handshake => {
                    if p != (data, rq) {
                        fail!("cycle {cyc}: the output changed while it waited for m_ready: {p:?} to {:?}", (data, rq));
                    }
                }
                _ => {
                    // new: its number was bound at its answer (the cycle before)
                    if n >= NQ || !prev_bound[n as usize] {
                        fail!(
                            "cycle {cyc}: doorbell handed on to slot {n}, not bound at its lookup"
                        );
                    }
                }
            }
            if n >= NQ || (n % 2 == 1) != rq {
                fail!(
                    "cycle {cyc}: slot {n} handed on as a {} doorbell",
                    if rq { "receive" } else { "send" }
                );
            }
            if ready {
                let qu = &mut q[n as usize];
                let Some(k) = qu.written[qu.done..].iter().position(|w| w.0 == pi) else {
                    fail!("cycle {cyc}: QP {n}'s doorbell {pi} handed on: not written after the last handed on ({:?})", &qu.written[qu.done.saturating_sub(2)..]);
                };
                rep.replaced += k;
                rep.handed_on += 1;
                qu.done += k + 1;
                qu.may_drop = false;
            } else {
                rep.out_stalls += 1;
            }
            prev_out = Some((data, rq));
            prev_handshake = ready;
        } else {
            prev_out = None;
            prev_handshake = false;
        }
        // a fetch asked: the number missed with misses on, within the records
        // (in the cycle its done pulse goes in, the ask is still up)
        if miss_valid && !done_now {
            let n = o.m_data[3];
            if let Fetch::Idle = fetch {
                let (en, recs) = cfg_hist.back().copied().unwrap_or((miss_en, records));
                if n >= NQ || q[n as usize].done == q[n as usize].written.len() {
                    fail!("cycle {cyc}: fetch asked for QP {n}, which has no doorbell waiting");
                }
                // (by the binding of its answer, the cycle before: one may
                // come meanwhile, as another fetch binds the number first)
                if !en || n >= recs || prev_bound[n as usize] {
                    fail!("cycle {cyc}: fetch asked for QP {n}: misses {en}, records {recs}, bound {}", prev_bound[n as usize]);
                }
                let outcome = if draining {
                    0
                } else {
                    match rng.gen_range(0..20) {
                        0..=11 => 0,
                        12..=16 => 1,
                        _ => 2,
                    }
                };
                fetch = Fetch::Run(n, rng.gen_range(2..40), outcome);
                rep.fetches += 1;
            }
        }
        if let Fetch::Run(n, left, outcome) = &mut fetch {
            if *left == 0 {
                match *outcome {
                    0 => bound[*n as usize] = true,
                    1 => rep.fetch_full += 1,
                    _ => {
                        rep.fetch_failed += 1;
                        q[*n as usize].may_drop = true;
                    }
                }
                done_pulse = Some(*outcome);
                fetch = Fetch::Idle;
            } else {
                *left -= 1;
            }
        }
        // a clean miss with misses off or beyond the records may be dropped
        if clean {
            if let Some(n) = asked {
                let (en, recs) = (miss_en, records);
                if n < NQ && !bound[n as usize] && (!en || n >= recs) {
                    q[n as usize].may_drop = true;
                }
            }
        }
        if err_valid {
            let n = o.m_data[1];
            if n >= NQ || !q[n as usize].may_drop {
                fail!("cycle {cyc}: QP {n}'s doorbell dropped with an error, but its lookup did not fail for good");
            }
            let qu = &mut q[n as usize];
            // (the decision was the cycle before: doorbells written then or
            // later went to a new entry)
            let covered = qu.written.iter().filter(|w| w.1 + 2 <= cyc).count();
            qu.done = qu.done.max(covered);
            qu.may_drop = false;
            rep.errors += 1;
        }
        lk_hist.push_back((o.m_data[2], port_busy));
        if lk_hist.len() > 8 {
            lk_hist.pop_front();
        }
        cfg_hist.push_back((miss_en, records));
        if cfg_hist.len() > 8 {
            cfg_hist.pop_front();
        }
        prev_busy_out = busy_out;
        prev_bound = bound.clone();
        if draining && idle && q.iter().all(|qu| qu.done == qu.written.len()) && out_valid == 0 {
            drains += 1;
            if cyc >= c.cycles {
                rep.waiting_max = waiting_max;
                rep.drains = drains;
                return Ok(rep);
            }
            drain_from = (cyc + rng.gen_range(300..800usize)).min(c.cycles.max(cyc + 1));
        }
    }
    let left: Vec<(usize, usize)> = q
        .iter()
        .enumerate()
        .filter(|(_, qu)| qu.done < qu.written.len())
        .map(|(n, qu)| (n, qu.written.len() - qu.done))
        .collect();
    fail!("drain: doorbells never handed on nor dropped (QP, how many): {left:?}")
}
