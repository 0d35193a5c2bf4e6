//! Bench of `qp_cache`, the directory of the on-chip QP context cache: a
//! QP number to a slot of 2^SLOT_LOG, set-associative (WAYS), misses,
//! victims by tree pseudo-LRU, write-backs of dirty victims, pin counts, and
//! a miss queue of MISSQ lookups that wait (for a fill, behind an older
//! lookup of their QP, for a victim) while the lookups that hit go on.
//!
//! The outside world is a behavioural model: lookups of a working set of QP
//! numbers far larger than the cache (misses on most of them) and of a hot
//! set, half of them pinning their slot (the world holds the pin for a
//! random time, then unpins it: never below zero); fill commands taken at
//! random and answered after random delays, out of order, 6 % of them
//! failing (the DMA read of the context); invalidates (QP destroys) of hot,
//! cold and cached QPs; an answer sink of random readiness; junk on every
//! input not valid; moods that change the rates every few hundred cycles;
//! resets with work in flight. Offers are held until taken.
//!
//! Checked every cycle:
//!
//! - against a model written from the block's header comment (the op mux's
//!   priority and credits, the three-stage read-modify-write of a set's
//!   row, the queue's order, wakes and replays, the pseudo-LRU, the sweep
//!   after a reset): every ready, every output (answers, fill commands,
//!   invalidate results, counters, the high-water mark, err_proto,
//!   sweeping); the outputs are registers (a peek with other inputs gives
//!   the same);
//! - in the model's directory: no two valid ways of a set hold one QP; a
//!   pinned or filling way is never taken as a victim;
//! - by the world, from the ports alone: the answers of a QP come in the
//!   order of its lookups, each once, with its id; a pinned answer's slot
//!   holds the QP (the fill the world saw for that slot, done); an error
//!   answer only for a QP whose fill failed; a fill command never names a
//!   slot the world holds a pin on or whose fill is still running, always
//!   for a QP with a lookup waiting, never for a QP that still holds
//!   another slot (the command that evicts it comes first: fill commands in
//!   the order they are made), with wb exactly when the slot's QP was
//!   pinned since its fill and wb_qpn that QP; an invalidate is refused
//!   only while the QP is pinned or filling (or a pinned answer of it is on
//!   its way) and done otherwise; s_lk_ready is low only in a reset or
//!   sweep, while a fill done, unpin or invalidate is offered, while the
//!   lookups taken and not answered fill the queue (or the answer FIFO),
//!   or shortly after a change that replays queued lookups;
//! - at the end (the stimulus drained: every pin given back, every fill
//!   done): every lookup answered, the counters' misses and write-backs
//!   equal to the fill commands and their wb since the last reset.

use crate::{fail, Fail, Model, PortsIn, PortsOut};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::collections::{HashMap, HashSet, VecDeque};

/// The stimulus of a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// random traffic, moods, resets
    Random,
    /// a pinned hot set, then misses that wait (fills withheld) while
    /// lookups of the hot set go on: their answers' latency and rate
    HitsWhileMissesWait,
}

/// One run.
#[derive(Debug, Clone)]
pub struct QcCfg {
    pub model: &'static str,
    pub seed: u64,
    pub cycles: usize,
    pub resets: usize,
    pub mode: Mode,
    /// compare every output with the model's (false: the world's checks
    /// alone, which read only the ports: what they catch does not hang on
    /// the model reading the header as the RTL does)
    pub check_model: bool,
}

impl QcCfg {
    pub fn new(model: &'static str, seed: u64) -> Self {
        Self {
            model,
            seed,
            cycles: 20_000,
            resets: 4,
            mode: Mode::Random,
            check_model: true,
        }
    }
}

/// What a run reached.
#[derive(Debug, Clone, Default)]
pub struct QcReport {
    pub cycles: u64,
    pub lookups: usize,
    pub answers: usize,
    /// answered at their first pass (stat_hit)
    pub hits: usize,
    /// answered after waiting in the queue
    pub queued_answers: usize,
    pub err_answers: usize,
    pub fills: usize,
    pub fills_failed: usize,
    pub evictions: usize,
    pub writebacks: usize,
    /// passes that found no victim or a full pin count; of those, full pin
    /// counts
    pub stalls: usize,
    pub pin_full: usize,
    /// lookups that waited behind an older one of their QP
    pub ordered: usize,
    /// lookups that waited for a fill someone else's lookup started
    pub joined_fill: usize,
    pub unpins: usize,
    pub invals: usize,
    pub inval_busy: usize,
    pub inval_hit: usize,
    /// cycles a lookup was offered while the queue was full (back-pressure)
    pub backpressure: usize,
    pub hwm: u32,
    pub resets: usize,
    /// resets with lookups in flight; sweeps
    pub resets_busy: usize,
    pub sweeps: usize,
    pub peeks: usize,
    /// HitsWhileMissesWait: the hot lookups answered while misses waited,
    /// the most cycles one took (taken to answer shown), the rate (hot
    /// answers per cycle, x1000) at each number of misses waiting
    pub hot_hits: usize,
    pub hot_latency_max: u64,
    pub hot_rate: Vec<(usize, u64)>,
}

#[derive(Debug, Clone, Copy)]
struct P {
    set_w: u32,
    wlog: u32,
    ways: usize,
    sets: usize,
    slots: usize,
    missq: usize,
    qpn_mask: u32,
    id_mask: u32,
    pin_max: u32,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Way {
    v: bool,
    f: bool,
    d: bool,
    pin: u32,
    tag: u32,
}

#[derive(Debug, Clone, Default)]
struct Row {
    w: Vec<Way>,
    pl: u32,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum K {
    Lk,
    Rp,
    Fd,
    Up,
    Iv,
}

#[derive(Debug, Clone, Copy)]
struct Op {
    k: K,
    qpn: u32,
    id: u32,
    pin: bool,
    ok: bool,
    set: usize,
    way: usize,
    qi: usize,
}

#[derive(Debug, Clone, Copy)]
struct Ent {
    qpn: u32,
    id: u32,
    pin: bool,
    wait: bool,
    fly: bool,
    err: bool,
    nf: bool,
    way: usize,
    vtag: u32,
    wb: bool,
    seq: u64,
    /// when its fill command was made (they are shown in that order)
    nseq: u64,
}

/// An answer on m_lk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ans {
    pub slot: u32,
    pub qpn: u32,
    pub id: u32,
    pub err: bool,
}

/// A fill command on m_fill.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FillCmd {
    pub slot: u32,
    pub qpn: u32,
    pub wb: bool,
    pub wb_qpn: u32,
}

/// The inputs of a cycle.
#[derive(Debug, Clone, Default)]
struct Drive {
    lk: Option<(u32, u32, bool)>,
    m_lk_ready: bool,
    m_fill_ready: bool,
    fd: Option<(u32, bool)>,
    up: Option<u32>,
    iv: Option<u32>,
    rst: bool,
}

/// The outputs of a cycle (what the model predicts, what the block shows).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Out {
    lk: Option<Ans>,
    fill: Option<FillCmd>,
    /// s_lk, s_fill_done, s_unpin, s_inval
    rdy: [bool; 4],
    inval_done: bool,
    inval_busy: bool,
    /// hit, miss, evict, wb, stall
    stat: u8,
    hwm: u32,
    err_proto: bool,
    sweeping: bool,
}

/// What S2 did in a cycle (the report's and the world's view).
#[derive(Debug, Clone, Copy, Default)]
struct Did {
    queued_ans: bool,
    ordered: bool,
    joined: bool,
    pin_full: bool,
}

/// The model of the block.
struct Cache {
    p: P,
    dir: Vec<Row>,
    q: Vec<Option<Ent>>,
    seq: u64,
    nseq: u64,
    s1: Option<Op>,
    s2: Option<Op>,
    fifo: VecDeque<Ans>,
    fill: Option<FillCmd>,
    stat: u8,
    hwm: u32,
    err_proto: bool,
    iv_done: bool,
    iv_busy: bool,
    sw_dirty: bool,
    sw_on: bool,
    sw_addr: usize,
}

const LKQ: usize = 4;

fn pl_pick(ways: usize, pl: u32, ok: &[bool]) -> usize {
    let b = |i: u32| pl >> i & 1 != 0;
    match ways {
        4 => {
            let right = (b(0) && (ok[2] || ok[3])) || !(ok[0] || ok[1]);
            let lo = if right {
                (b(2) && ok[3]) || !ok[2]
            } else {
                (b(1) && ok[1]) || !ok[0]
            };
            2 * usize::from(right) + usize::from(lo)
        }
        2 => usize::from((b(0) && ok[1]) || !ok[0]),
        _ => 0,
    }
}

fn pl_touch(ways: usize, pl: u32, t: usize) -> u32 {
    match ways {
        4 => {
            let mut n = pl & !1 | u32::from(t >> 1 == 0);
            if t >> 1 == 0 {
                n = n & !2 | u32::from(t & 1 == 0) << 1;
            } else {
                n = n & !4 | u32::from(t & 1 == 0) << 2;
            }
            n
        }
        2 => u32::from(t == 0),
        _ => pl,
    }
}

impl Cache {
    fn new(p: P) -> Self {
        Self {
            p,
            dir: (0..p.sets)
                .map(|_| Row {
                    w: vec![Way::default(); p.ways],
                    pl: 0,
                })
                .collect(),
            q: vec![None; p.missq],
            seq: 0,
            nseq: 0,
            s1: None,
            s2: None,
            fifo: VecDeque::new(),
            fill: None,
            stat: 0,
            hwm: 0,
            err_proto: false,
            iv_done: false,
            iv_busy: false,
            sw_dirty: false,
            sw_on: false,
            sw_addr: 0,
        }
    }

    fn q_cnt(&self) -> usize {
        self.q.iter().flatten().count()
    }

    /// The oldest queued lookup that may replay.
    fn eligible(&self) -> Option<usize> {
        self.q
            .iter()
            .enumerate()
            .filter_map(|(i, e)| e.filter(|e| !e.wait && !e.fly).map(|e| (i, e.seq)))
            .min_by_key(|&(_, s)| s)
            .map(|(i, _)| i)
    }

    /// s_lk, s_fill_done, s_unpin, s_inval ready; and whether a replay goes.
    fn ready(&self, d: &Drive) -> ([bool; 4], bool) {
        let go = !d.rst && !self.sw_on;
        let hi = d.fd.is_some() || d.up.is_some() || d.iv.is_some();
        let ans = |o: &Option<Op>| o.is_some_and(|o| o.k == K::Lk || o.k == K::Rp);
        let new = |o: &Option<Op>| o.is_some_and(|o| o.k == K::Lk);
        let ans_room =
            self.fifo.len() + usize::from(ans(&self.s1)) + usize::from(ans(&self.s2)) < LKQ;
        let q_room =
            self.q_cnt() + usize::from(new(&self.s1)) + usize::from(new(&self.s2)) < self.p.missq;
        let el = self.eligible().is_some();
        (
            [
                go && !hi && !el && ans_room && q_room,
                go,
                go && d.fd.is_none(),
                go && d.fd.is_none() && d.up.is_none(),
            ],
            go && !hi && el && ans_room,
        )
    }

    fn outputs(&self, d: &Drive) -> Out {
        Out {
            lk: self.fifo.front().copied(),
            fill: self.fill,
            rdy: self.ready(d).0,
            inval_done: self.iv_done,
            inval_busy: self.iv_busy,
            stat: self.stat,
            hwm: self.hwm,
            err_proto: self.err_proto,
            sweeping: self.sw_on,
        }
    }

    fn set_of(&self, qpn: u32) -> usize {
        (qpn & ((1 << self.p.set_w) - 1)) as usize
    }

    fn slot(&self, set: usize, way: usize) -> u32 {
        ((set << self.p.wlog) | way) as u32
    }

    /// S2: the decision and its effects on the row, the queue, the FIFO.
    fn exec(&mut self, op: Op, did: &mut Did) -> Result<(), String> {
        let p = self.p;
        let row = self.dir[op.set].clone();
        let mut nrow = row.clone();
        let mut stat = 0u8;
        let mut wake = false;
        let mut proto = false;
        let tag = op.qpn >> p.set_w;
        match op.k {
            K::Lk | K::Rp => {
                let hway = row.w.iter().position(|w| w.v && w.tag == tag);
                if row.w.iter().filter(|w| w.v && w.tag == tag).count() > 1 {
                    return Err(format!(
                        "two valid ways of set {} hold QP {:#x}",
                        op.set, op.qpn
                    ));
                }
                let hitp = hway.is_some_and(|h| !row.w[h].f);
                let hitf = hway.is_some_and(|h| row.w[h].f);
                let my_seq = if op.k == K::Rp {
                    self.q[op.qi].ok_or("a replay of an empty entry")?.seq
                } else {
                    u64::MAX
                };
                let ordblk = self
                    .q
                    .iter()
                    .flatten()
                    .any(|e| e.qpn == op.qpn && e.seq < my_seq);
                let rp_err = op.k == K::Rp && self.q[op.qi].is_some_and(|e| e.err);
                let pinfull = op.pin && hitp && row.w[hway.unwrap()].pin == p.pin_max;
                let evok: Vec<bool> = row.w.iter().map(|w| w.v && !w.f && w.pin == 0).collect();
                let has_vic = row.w.iter().any(|w| !w.v) || evok.iter().any(|&x| x);
                let vway = row
                    .w
                    .iter()
                    .position(|w| !w.v)
                    .unwrap_or_else(|| pl_pick(p.ways, row.pl, &evok));
                let mut ans = None;
                let mut alloc = false;
                let mut stall = false;
                if ordblk {
                    did.ordered = true;
                } else if rp_err {
                    ans = Some(Ans {
                        slot: 0,
                        qpn: op.qpn,
                        id: op.id,
                        err: true,
                    });
                } else if hitp {
                    let h = hway.unwrap();
                    if pinfull {
                        stall = true;
                        did.pin_full = true;
                    } else {
                        ans = Some(Ans {
                            slot: self.slot(op.set, h),
                            qpn: op.qpn,
                            id: op.id,
                            err: false,
                        });
                        if op.pin {
                            nrow.w[h].pin += 1;
                            nrow.w[h].d = true;
                        }
                        nrow.pl = pl_touch(p.ways, row.pl, h);
                    }
                } else if hitf {
                    did.joined = true;
                } else if has_vic {
                    let old = row.w[vway];
                    if old.v && (old.f || old.pin != 0) {
                        return Err(format!(
                            "the victim way {vway} of set {} is pinned or filling",
                            op.set
                        ));
                    }
                    alloc = true;
                    nrow.w[vway] = Way {
                        v: true,
                        f: true,
                        d: false,
                        pin: 0,
                        tag,
                    };
                    nrow.pl = pl_touch(p.ways, row.pl, vway);
                    stat |= 2;
                    if old.v {
                        stat |= 4;
                    }
                    if old.v && old.d {
                        stat |= 8;
                    }
                } else {
                    stall = true;
                }
                if stall {
                    stat |= 16;
                }
                if op.k == K::Lk && ans.is_some() {
                    stat |= 1;
                }
                // the queue
                if op.k == K::Rp {
                    let e = self.q[op.qi].as_mut().unwrap();
                    e.fly = false;
                    if ans.is_some() {
                        self.q[op.qi] = None;
                        did.queued_ans = true;
                        wake = true;
                    } else {
                        e.wait = true;
                        if alloc {
                            let old = row.w[vway];
                            e.nf = true;
                            e.nseq = self.nseq;
                            self.nseq += 1;
                            e.way = vway;
                            e.vtag = old.tag;
                            e.wb = old.v && old.d;
                        }
                    }
                } else if ans.is_none() {
                    let Some(i) = self.q.iter().position(|e| e.is_none()) else {
                        return Err("a lookup to queue and no entry free".into());
                    };
                    let old = row.w[vway];
                    self.q[i] = Some(Ent {
                        qpn: op.qpn,
                        id: op.id,
                        pin: op.pin,
                        wait: true,
                        fly: false,
                        err: false,
                        nf: alloc,
                        way: if alloc { vway } else { 0 },
                        vtag: if alloc { old.tag } else { 0 },
                        wb: alloc && old.v && old.d,
                        seq: self.seq,
                        nseq: self.nseq,
                    });
                    self.seq += 1;
                    self.nseq += u64::from(alloc);
                }
                if let Some(a) = ans {
                    self.fifo.push_back(a);
                }
            }
            K::Fd => {
                wake = true;
                let w = row.w[op.way];
                if !(w.v && w.f) {
                    proto = true;
                } else if op.ok {
                    nrow.w[op.way].f = false;
                } else {
                    nrow.w[op.way] = Way::default();
                    let q = (w.tag << p.set_w) | op.set as u32;
                    for e in self.q.iter_mut().flatten() {
                        if e.qpn == q {
                            e.err = true;
                        }
                    }
                }
            }
            K::Up => {
                wake = true;
                if row.w[op.way].pin == 0 {
                    proto = true;
                } else {
                    nrow.w[op.way].pin -= 1;
                }
            }
            K::Iv => {
                let hway = row.w.iter().position(|w| w.v && w.tag == tag);
                self.iv_done = true;
                match hway {
                    Some(h) if row.w[h].f || row.w[h].pin != 0 => self.iv_busy = true,
                    Some(h) => {
                        nrow.w[h] = Way::default();
                        wake = true;
                    }
                    None => {}
                }
            }
        }
        if wake {
            for e in self.q.iter_mut().flatten() {
                if !e.fly && (e.qpn as usize & (p.sets - 1)) == op.set {
                    e.wait = false;
                }
            }
        }
        self.err_proto |= proto;
        self.stat = stat;
        self.dir[op.set] = nrow;
        Ok(())
    }

    /// The clock edge.
    fn edge(&mut self, d: &Drive, did: &mut Did) -> Result<(), String> {
        let p = self.p;
        let (rdy, take_rp) = self.ready(d);
        let way_of = |s: u32| (s as usize) & (p.ways - 1);
        let set_of_slot = |s: u32| (s as usize) >> p.wlog;
        // S0
        let s0 = if let (true, Some((s, ok))) = (rdy[1], d.fd) {
            Some(Op {
                k: K::Fd,
                qpn: 0,
                id: 0,
                pin: false,
                ok,
                set: set_of_slot(s),
                way: way_of(s),
                qi: 0,
            })
        } else if let (true, Some(s)) = (rdy[2], d.up) {
            Some(Op {
                k: K::Up,
                qpn: 0,
                id: 0,
                pin: false,
                ok: false,
                set: set_of_slot(s),
                way: way_of(s),
                qi: 0,
            })
        } else if let (true, Some(q)) = (rdy[3], d.iv) {
            Some(Op {
                k: K::Iv,
                qpn: q,
                id: 0,
                pin: false,
                ok: false,
                set: self.set_of(q),
                way: 0,
                qi: 0,
            })
        } else if take_rp {
            let k = self.eligible().unwrap();
            let e = self.q[k].unwrap();
            Some(Op {
                k: K::Rp,
                qpn: e.qpn,
                id: e.id,
                pin: e.pin,
                ok: false,
                set: self.set_of(e.qpn),
                way: 0,
                qi: k,
            })
        } else if let (true, Some((q, id, pin))) = (rdy[0], d.lk) {
            Some(Op {
                k: K::Lk,
                qpn: q,
                id,
                pin,
                ok: false,
                set: self.set_of(q),
                way: 0,
                qi: 0,
            })
        } else {
            None
        };
        let q_cnt = self.q_cnt() as u32;
        // the fill command register loads from the queue as it was
        let nf = (0..self.q.len())
            .filter(|&i| self.q[i].is_some_and(|e| e.nf))
            .min_by_key(|&i| self.q[i].unwrap().nseq);
        let load = (self.fill.is_none() || d.m_fill_ready) && nf.is_some();
        let new_fill = nf.map(|i| {
            let e = self.q[i].unwrap();
            let set = self.set_of(e.qpn);
            FillCmd {
                slot: self.slot(set, e.way),
                qpn: e.qpn,
                wb: e.wb,
                wb_qpn: (e.vtag << p.set_w) | set as u32,
            }
        });
        if !self.fifo.is_empty() && d.m_lk_ready {
            self.fifo.pop_front();
        }
        self.stat = 0;
        self.iv_done = false;
        self.iv_busy = false;
        let wrote = self.s2.is_some() && !d.rst;
        if let (Some(op), false) = (self.s2, d.rst) {
            self.exec(op, did)?;
        }
        if let Some(Op { k: K::Rp, qi, .. }) = s0 {
            self.q[qi].as_mut().unwrap().fly = true;
        }
        if load {
            // (an entry gone meanwhile is the block's divergence, which
            // only the world sees when the model is not compared)
            if let Some(e) = nf.and_then(|i| self.q[i].as_mut()) {
                e.nf = false;
            }
            self.fill = new_fill;
        } else if d.m_fill_ready {
            self.fill = None;
        }
        self.hwm = self.hwm.max(q_cnt);
        self.s2 = self.s1;
        self.s1 = s0;
        // the sweep
        let (dirty, on) = (self.sw_dirty, self.sw_on);
        if wrote {
            self.sw_dirty = true;
        }
        if on {
            if self.sw_addr == p.sets - 1 {
                self.sw_on = false;
            }
            self.sw_addr += 1;
        }
        if d.rst {
            self.sw_on = dirty || on || wrote;
            self.sw_addr = 0;
            self.sw_dirty = false;
            self.s1 = None;
            self.s2 = None;
            self.q = vec![None; p.missq];
            self.fifo.clear();
            self.fill = None;
            self.stat = 0;
            self.iv_done = false;
            self.iv_busy = false;
            self.hwm = 0;
            self.err_proto = false;
            for r in &mut self.dir {
                *r = Row {
                    w: vec![Way::default(); p.ways],
                    pl: 0,
                };
            }
        }
        Ok(())
    }

    fn idle(&self) -> bool {
        self.s1.is_none()
            && self.s2.is_none()
            && self.q.iter().all(|e| e.is_none())
            && self.fifo.is_empty()
            && self.fill.is_none()
    }
}

fn params(m: &Model) -> P {
    let c = m.config();
    let (qpn_w, slot_log, ways) = (c.param("QPN_W"), c.param("SLOT_LOG"), c.param("WAYS"));
    let wlog = ways.trailing_zeros();
    let set_w = slot_log - wlog;
    P {
        set_w,
        wlog,
        ways: ways as usize,
        sets: 1 << set_w,
        slots: 1 << slot_log,
        missq: c.param("MISSQ") as usize,
        qpn_mask: (1 << qpn_w) - 1,
        id_mask: (1 << c.param("ID_W")) - 1,
        pin_max: (1 << c.param("PIN_W")) - 1,
    }
}

/// The ports: s_data words 0 s_lk_qpn, 1 s_lk_id, 2 s_fill_done_slot, 3
/// s_unpin_slot, 4 s_inval_qpn; s_valid bits 0 s_lk_valid, 1 s_lk_pin, 2
/// m_lk_ready, 3 m_fill_ready, 4 s_fill_done_valid, 5 s_fill_done_ok, 6
/// s_unpin_valid, 7 s_inval_valid.
fn pack(d: &Drive, p: &P, junk: &mut ChaCha8Rng) -> PortsIn {
    let mut i = PortsIn::default();
    let smask = (p.slots - 1) as u32;
    let (lq, lid, lpin) = d.lk.unwrap_or((
        junk.gen::<u32>() & p.qpn_mask,
        junk.gen::<u32>() & p.id_mask,
        junk.gen(),
    ));
    let (fs, fok) = d.fd.unwrap_or((junk.gen::<u32>() & smask, junk.gen()));
    i.s_data[0] = lq;
    i.s_data[1] = lid;
    i.s_data[2] = fs;
    i.s_data[3] = d.up.unwrap_or(junk.gen::<u32>() & smask);
    i.s_data[4] = d.iv.unwrap_or(junk.gen::<u32>() & p.qpn_mask);
    i.s_valid = u32::from(d.lk.is_some())
        | u32::from(lpin) << 1
        | u32::from(d.m_lk_ready) << 2
        | u32::from(d.m_fill_ready) << 3
        | u32::from(d.fd.is_some()) << 4
        | u32::from(fok) << 5
        | u32::from(d.up.is_some()) << 6
        | u32::from(d.iv.is_some()) << 7;
    i.rst = u8::from(d.rst);
    i
}

/// m_data words 0 m_lk_slot, 1 m_lk_qpn, 2 m_lk_id, 3 m_fill_slot, 4
/// m_fill_qpn, 5 m_fill_wb_qpn, 6 stat_hwm; s_ready bits 0 s_lk_ready, 1
/// s_fill_done_ready, 2 s_unpin_ready, 3 s_inval_ready; m_valid bits 0
/// m_lk_valid, 1 m_lk_err, 2 m_fill_valid, 3 m_fill_wb, 4 m_inval_done, 5
/// m_inval_busy, 6 err_proto, 7 sweeping; m_last {stat_stall, stat_wb,
/// stat_evict, stat_miss, stat_hit}.
fn unpack(o: &PortsOut) -> Out {
    let v = |b: u32| o.m_valid >> b & 1 != 0;
    Out {
        lk: v(0).then_some(Ans {
            slot: o.m_data[0],
            qpn: o.m_data[1],
            id: o.m_data[2],
            err: v(1),
        }),
        fill: v(2).then_some(FillCmd {
            slot: o.m_data[3],
            qpn: o.m_data[4],
            wb: v(3),
            wb_qpn: o.m_data[5],
        }),
        rdy: [0, 1, 2, 3].map(|b| o.s_ready >> b & 1 != 0),
        inval_done: v(4),
        inval_busy: v(5),
        stat: o.m_last,
        hwm: o.m_data[6],
        err_proto: v(6),
        sweeping: v(7),
    }
}

/// The world's view of a slot: the QP it was filled with, whether that
/// fill is done, whether it was pinned since, the pins the world holds.
#[derive(Debug, Clone, Copy)]
struct Own {
    qpn: u32,
    present: bool,
    dirty: bool,
    pins: u32,
    /// an invalidate of its QP was done since its fill
    gone: bool,
    /// which fill command it was
    serial: u64,
}

/// An invalidate taken: the world's view then.
#[derive(Debug, Clone, Copy)]
struct Inval {
    qpn: u32,
    /// pinned or filling
    held: bool,
    /// ... or a lookup of it waiting (a pin or a fill may come first)
    may_be_busy: bool,
    /// the slot the world saw it in, and that fill's serial
    slot: Option<(usize, u64)>,
}

#[derive(Debug, Clone, Copy)]
struct Req {
    id: u32,
    pin: bool,
    at: u64,
    hot: bool,
}

/// The rates of a stretch of the run.
#[derive(Debug, Clone, Copy)]
struct Mood {
    p_lk: f64,
    p_hot: f64,
    p_pin: f64,
    pin_hold: u64,
    p_lk_ready: f64,
    p_fill_ready: f64,
    fill_delay: u64,
    p_iv: f64,
}

fn mood(rng: &mut ChaCha8Rng) -> Mood {
    Mood {
        p_lk: [0.2, 0.6, 1.0][rng.gen_range(0..3)],
        p_hot: [0.2, 0.5, 0.8][rng.gen_range(0..3)],
        p_pin: [0.1, 0.5, 0.9][rng.gen_range(0..3)],
        pin_hold: [4, 30, 200][rng.gen_range(0..3)],
        p_lk_ready: [0.3, 0.8, 1.0][rng.gen_range(0..3)],
        p_fill_ready: [0.2, 0.7, 1.0][rng.gen_range(0..3)],
        fill_delay: [1, 8, 60][rng.gen_range(0..3)],
        p_iv: [0.0, 0.003, 0.02][rng.gen_range(0..3)],
    }
}

/// One run: stimulus for `cfg.cycles`, then the drain.
pub fn run(cfg: &QcCfg) -> Result<QcReport, Fail> {
    let mut m = Model::new(cfg.model, cfg.seed as u32).map_err(Fail)?;
    let p = params(&m);
    let mut rng = ChaCha8Rng::seed_from_u64(cfg.seed ^ 0x9c_ac4e);
    let mut junk = ChaCha8Rng::seed_from_u64(cfg.seed ^ 0x5eed_0f10);
    let mut r = QcReport::default();
    let mut c = Cache::new(p);

    // the working set: a hot set (half the slots, spread over the sets) and
    // a cold one eight times the slots (or every QP number)
    let space = p.qpn_mask as usize + 1;
    let mut hot: Vec<u32> = Vec::new();
    let mut cold: Vec<u32> = Vec::new();
    match cfg.mode {
        Mode::Random => {
            let n_hot = (p.slots / 2).max(2);
            while hot.len() < n_hot {
                let q = rng.gen::<u32>() & p.qpn_mask;
                if !hot.contains(&q) {
                    hot.push(q);
                }
            }
            let n_cold = (8 * p.slots).min(space - n_hot);
            while cold.len() < n_cold {
                let q = rng.gen::<u32>() & p.qpn_mask;
                if !hot.contains(&q) && !cold.contains(&q) {
                    cold.push(q);
                }
            }
        }
        Mode::HitsWhileMissesWait => {
            // one hot QP in each set of the lower half, the cold ones in the
            // upper half (each its own QP, one per way at most)
            for s in 0..p.sets / 2 {
                hot.push(((rng.gen::<u32>() << p.set_w) | s as u32) & p.qpn_mask);
            }
            let mut s = p.sets / 2;
            while cold.len() < p.missq + 2 {
                let q = ((rng.gen::<u32>() << p.set_w) | s as u32) & p.qpn_mask;
                if !cold.contains(&q) {
                    cold.push(q);
                    s = if s + 1 == p.sets { p.sets / 2 } else { s + 1 };
                }
            }
        }
    }

    // the world
    let mut outst: HashMap<u32, VecDeque<Req>> = HashMap::new();
    let mut n_out = 0usize;
    let mut owner: Vec<Option<Own>> = vec![None; p.slots];
    let mut held: Vec<(u32, u64)> = Vec::new();
    let mut fills: Vec<(u32, u32, u64, bool)> = Vec::new(); // slot, qpn, due, ok
    let mut failed: HashSet<u32> = HashSet::new();
    let mut iv_taken: VecDeque<Inval> = VecDeque::new();
    let mut d = Drive::default();
    let mut next_id = 0u32;
    let mut md = mood(&mut rng);
    let mut mood_until = 0u64;
    let mut last_event = 0u64;
    let mut fills_epoch = (0usize, 0usize); // fills, with wb, since the reset
    let mut stat_epoch = (0usize, 0usize); // stat_miss, stat_wb pulses
    let reset_at: Vec<u64> = (0..cfg.resets)
        .map(|k| ((k as u64 + 1) * cfg.cycles as u64) / (cfg.resets as u64 + 1))
        .collect();
    let mut rst_left = 0u32;
    let total_limit = cfg.cycles as u64 + 20_000;
    // HitsWhileMissesWait: the phase, its cycle count, the hot lookups of
    // the phase, the answers and the misses waiting
    let mut phase = 0usize;
    let mut settle_until = 0u64;
    let mut last_hot_ans = 0u64;
    let mut hot_sent = 0usize;
    let mut hot_done = 0usize;
    let mut cold_sent = 0usize;
    let mut first_hot_ans = 0u64;
    let hot_n = 200usize;
    let miss_levels: Vec<usize> = {
        let mut v = vec![1usize.max(p.missq.saturating_sub(3))];
        if p.missq - 1 > v[0] {
            v.push(p.missq - 1);
        }
        v
    };

    let mut cyc = 0u64;
    let mut draining = false;
    let mut quiet_run = 0u32;
    loop {
        let at = |cyc: u64| format!("{} seed {} cycle {cyc}", cfg.model, cfg.seed);
        if cyc >= total_limit {
            fail!(
                "{}: the drain did not end (a hang): {} lookups unanswered",
                at(cyc),
                n_out
            );
        }
        if cfg.mode == Mode::Random && cyc as usize >= cfg.cycles {
            draining = true;
        }
        if cyc >= mood_until {
            md = mood(&mut rng);
            mood_until = cyc + rng.gen_range(200..800);
        }

        // ---- the world's offers (held until taken)
        let mut rst = false;
        if rst_left > 0 {
            rst = true;
            rst_left -= 1;
        } else if cfg.mode == Mode::Random && !draining && reset_at.contains(&cyc) {
            rst = true;
            rst_left = rng.gen_range(0..2);
            r.resets += 1;
            if n_out > 0 {
                r.resets_busy += 1;
            }
        }
        d.rst = rst;
        let hw = cfg.mode == Mode::HitsWhileMissesWait;
        if d.lk.is_none() {
            let want = if hw {
                match phase {
                    0 => hot_sent < hot.len(),
                    1 => cold_sent < miss_levels[0],
                    2 | 4 => hot_sent < hot_n,
                    3 => cold_sent < miss_levels[miss_levels.len() - 1],
                    _ => false,
                }
            } else {
                !draining && rng.gen_bool(md.p_lk)
            };
            if want {
                let (q, pin) = if hw {
                    match phase {
                        0 => (hot[hot_sent], true),
                        1 | 3 => (cold[cold_sent], false),
                        _ => (hot[hot_sent % hot.len()], false),
                    }
                } else if rng.gen_bool(md.p_hot) {
                    (hot[rng.gen_range(0..hot.len())], rng.gen_bool(md.p_pin))
                } else {
                    (cold[rng.gen_range(0..cold.len())], rng.gen_bool(md.p_pin))
                };
                d.lk = Some((q, next_id, pin));
                next_id = (next_id + 1) & p.id_mask;
            }
        }
        d.m_lk_ready = if hw || draining {
            true
        } else {
            rng.gen_bool(md.p_lk_ready)
        };
        d.m_fill_ready = if hw {
            phase == 0 || phase >= 5
        } else {
            draining || rng.gen_bool(md.p_fill_ready)
        };
        if d.fd.is_none() {
            let due: Vec<usize> = (0..fills.len()).filter(|&k| fills[k].2 <= cyc).collect();
            if !due.is_empty() {
                let k = due[rng.gen_range(0..due.len())];
                let (s, _, _, ok) = fills[k];
                d.fd = Some((s, ok));
            }
        }
        if d.up.is_none() {
            let due: Vec<usize> = (0..held.len())
                .filter(|&k| held[k].1 <= cyc || (draining && !hw))
                .collect();
            if !due.is_empty() {
                d.up = Some(held[due[rng.gen_range(0..due.len())]].0);
            }
        }
        if d.iv.is_none() && !draining && !hw && rng.gen_bool(md.p_iv) {
            let cached: Vec<u32> = owner.iter().flatten().map(|o| o.qpn).collect();
            d.iv = Some(match rng.gen_range(0..3) {
                0 if !cached.is_empty() => cached[rng.gen_range(0..cached.len())],
                1 => hot[rng.gen_range(0..hot.len())],
                _ => cold[rng.gen_range(0..cold.len())],
            });
        }

        // ---- the block and the model
        let i = pack(&d, &p, &mut junk);
        if cyc % 4 == 1 {
            // registers: other inputs before the edge change no m_* output
            let mut alt = d.clone();
            alt.lk = Some((rng.gen::<u32>() & p.qpn_mask, 0, true));
            alt.m_lk_ready = !d.m_lk_ready;
            alt.m_fill_ready = !d.m_fill_ready;
            alt.fd = Some((0, false));
            alt.rst = !d.rst;
            let a = unpack(&m.peek(&pack(&alt, &p, &mut junk)));
            let b = unpack(&m.peek(&i));
            if a.lk != b.lk
                || a.fill != b.fill
                || a.stat != b.stat
                || (a.inval_done, a.inval_busy, a.hwm, a.err_proto, a.sweeping)
                    != (b.inval_done, b.inval_busy, b.hwm, b.err_proto, b.sweeping)
            {
                fail!(
                    "{}: other inputs changed an m_* output before the edge: {b:?} -> {a:?}",
                    at(cyc)
                );
            }
            r.peeks += 1;
        }
        let po = m.step(&i);
        if po.sim_flags != 0 {
            fail!("{}: the model stopped ({:#x})", at(cyc), po.sim_flags);
        }
        let got = unpack(&po);
        let want = c.outputs(&d);
        if cfg.check_model && got != want {
            fail!(
                "{}: the block's outputs differ from the model's\n  block {got:?}\n  \
                 model {want:?}\n  model queue {:?}",
                at(cyc),
                c.q
            );
        }
        let o = got;
        let dc = d.clone();

        // ---- the world sees the handshakes
        if o.stat & 2 != 0 {
            stat_epoch.0 += 1;
        }
        if o.stat & 8 != 0 {
            stat_epoch.1 += 1;
        }
        if !rst {
            r.hits += usize::from(o.stat & 1 != 0);
            r.evictions += usize::from(o.stat & 4 != 0);
            r.writebacks += usize::from(o.stat & 8 != 0);
            r.stalls += usize::from(o.stat & 16 != 0);
        }
        r.hwm = r.hwm.max(o.hwm);
        if o.err_proto {
            fail!(
                "{}: err_proto rose, but the world keeps the contract",
                at(cyc)
            );
        }
        // back-pressure only where the contract allows it
        let hi = d.fd.is_some() || d.up.is_some() || d.iv.is_some();
        if d.lk.is_some() && !o.rdy[0] {
            let full = n_out >= p.missq.min(LKQ);
            if full {
                r.backpressure += 1;
            }
            if !(rst || o.sweeping || hi || full || cyc <= last_event + 6 * p.missq as u64 + 8) {
                fail!(
                    "{}: s_lk_ready low with {n_out} lookups unanswered (MISSQ {}), nothing else \
                     offered and no change for {} cycles",
                    at(cyc),
                    p.missq,
                    cyc - last_event
                );
            }
        }
        if let (Some(a), true) = (o.lk, d.m_lk_ready && !rst) {
            last_event = cyc;
            let Some(qq) = outst.get_mut(&a.qpn) else {
                fail!(
                    "{}: an answer {a:?} for a QP with no lookup waiting",
                    at(cyc)
                );
            };
            let Some(front) = qq.pop_front() else {
                fail!(
                    "{}: an answer {a:?} for a QP with no lookup waiting",
                    at(cyc)
                );
            };
            if front.id != a.id {
                fail!(
                    "{}: QP {:#x} answered id {} but its oldest lookup is id {} (order, loss or \
                     duplicate)",
                    at(cyc),
                    a.qpn,
                    a.id,
                    front.id
                );
            }
            n_out -= 1;
            r.answers += 1;
            if a.err {
                r.err_answers += 1;
                if !failed.contains(&a.qpn) {
                    fail!(
                        "{}: an error answer for QP {:#x} whose fill never failed",
                        at(cyc),
                        a.qpn
                    );
                }
            } else if front.pin {
                let s = a.slot as usize;
                match owner.get_mut(s).and_then(|o| o.as_mut()) {
                    Some(w) if w.qpn == a.qpn && w.present && !w.gone => {
                        w.pins += 1;
                        w.dirty = true;
                    }
                    other => fail!(
                        "{}: a pinned answer of QP {:#x} at slot {s}, which holds {other:?}",
                        at(cyc),
                        a.qpn
                    ),
                }
                let due = if hw {
                    u64::MAX
                } else {
                    cyc + rng.gen_range(1..=md.pin_hold)
                };
                held.push((a.slot, due));
            }
            if hw && front.hot && phase >= 2 {
                let lat = cyc - front.at;
                r.hot_latency_max = r.hot_latency_max.max(lat);
                if lat != 3 {
                    fail!(
                        "{}: a hit of the hot set took {lat} cycles (3 from taken to shown) while \
                         misses waited",
                        at(cyc)
                    );
                }
                if a.err {
                    fail!("{}: a hot lookup answered with an error", at(cyc));
                }
                if hot_done == 0 {
                    first_hot_ans = cyc;
                }
                last_hot_ans = cyc;
                hot_done += 1;
                r.hot_hits += 1;
            }
            if qq.is_empty() {
                outst.remove(&a.qpn);
            }
        }
        if let (Some(f), true) = (o.fill, d.m_fill_ready && !rst) {
            let s = f.slot as usize;
            if fills.iter().any(|x| x.0 == f.slot) {
                fail!(
                    "{}: a fill command {f:?} for a slot whose fill runs",
                    at(cyc)
                );
            }
            if !outst.contains_key(&f.qpn) {
                fail!(
                    "{}: a fill command {f:?} for a QP with no lookup waiting",
                    at(cyc)
                );
            }
            // the command that evicted the QP from its last slot comes
            // first (the fill engine holds the read behind its write-back)
            if let Some(o) = owner
                .iter()
                .position(|w| w.is_some_and(|w| w.qpn == f.qpn && !w.gone))
            {
                fail!(
                    "{}: a fill command {f:?} while the QP still holds slot {o} for the world: the command that evicts it is not shown yet",
                    at(cyc)
                );
            }
            let (ww, wq, gone) = match owner[s] {
                Some(w) => {
                    if w.pins != 0 {
                        fail!(
                            "{}: a fill command {f:?} evicts a slot the world holds {} pins on",
                            at(cyc),
                            w.pins
                        );
                    }
                    (w.present && w.dirty, w.qpn, w.gone)
                }
                None => (false, 0, false),
            };
            // (after an invalidate done the slot may have been invalidated,
            // or its QP evicted before: a write-back of it or none)
            let ok_wb = if gone {
                !f.wb || (ww && f.wb_qpn == wq)
            } else {
                f.wb == ww && (!f.wb || f.wb_qpn == wq)
            };
            if !ok_wb {
                fail!(
                    "{}: a fill command {f:?}, but the slot held {:?} (write-back {ww} of {wq:#x})",
                    at(cyc),
                    owner[s]
                );
            }
            owner[s] = Some(Own {
                qpn: f.qpn,
                present: false,
                dirty: false,
                pins: 0,
                gone: false,
                serial: r.fills as u64,
            });
            let delay = if hw {
                1
            } else {
                rng.gen_range(0..=md.fill_delay)
            };
            let ok = hw || draining || !rng.gen_bool(0.06);
            fills.push((f.slot, f.qpn, cyc + delay, ok));
            r.fills += 1;
            fills_epoch.0 += 1;
            if f.wb {
                fills_epoch.1 += 1;
            }
        }
        if let (Some((s, ok)), true) = (d.fd, o.rdy[1]) {
            last_event = cyc;
            let k = fills.iter().position(|x| x.0 == s && x.3 == ok).unwrap();
            let (_, q, _, _) = fills.remove(k);
            if ok {
                owner[s as usize].as_mut().unwrap().present = true;
            } else {
                owner[s as usize] = None;
                failed.insert(q);
                r.fills_failed += 1;
            }
            d.fd = None;
        }
        if let (Some(s), true) = (d.up, o.rdy[2]) {
            last_event = cyc;
            let k = held.iter().position(|x| x.0 == s).unwrap();
            held.remove(k);
            owner[s as usize].as_mut().unwrap().pins -= 1;
            r.unpins += 1;
            d.up = None;
        }
        if let (Some(q), true) = (d.iv, o.rdy[3]) {
            last_event = cyc;
            // what may make it refused: the world as it was when taken
            let slot = owner
                .iter()
                .position(|w| w.is_some_and(|w| w.qpn == q && !w.gone));
            let held = slot.is_some_and(|s| {
                let w = owner[s].unwrap();
                w.pins > 0 || !w.present
            });
            iv_taken.push_back(Inval {
                qpn: q,
                held,
                may_be_busy: held || outst.contains_key(&q),
                slot: slot.map(|s| (s, owner[s].unwrap().serial)),
            });
            r.invals += 1;
            d.iv = None;
        }
        if o.inval_done && !rst {
            let Some(iv) = iv_taken.pop_front() else {
                fail!("{}: m_inval_done with no invalidate taken", at(cyc));
            };
            if o.inval_busy {
                r.inval_busy += 1;
                if !iv.may_be_busy {
                    fail!(
                        "{}: the invalidate of QP {:#x} refused, but it was neither pinned nor \
                         filling nor looked up when taken",
                        at(cyc),
                        iv.qpn
                    );
                }
            } else {
                if iv.held {
                    fail!(
                        "{}: the invalidate of QP {:#x} done, but it was pinned or filling when \
                         taken",
                        at(cyc),
                        iv.qpn
                    );
                }
                if let Some((s, serial)) = iv.slot {
                    if let Some(w) = owner[s].as_mut().filter(|w| w.serial == serial) {
                        w.gone = true;
                        r.inval_hit += 1;
                    }
                }
            }
        }
        if let (Some((q, id, pin)), true) = (d.lk, o.rdy[0]) {
            outst.entry(q).or_default().push_back(Req {
                id,
                pin,
                at: cyc,
                hot: hot.contains(&q),
            });
            n_out += 1;
            r.lookups += 1;
            d.lk = None;
            if hw {
                match phase {
                    0 | 2 | 4 => hot_sent += 1,
                    _ => cold_sent += 1,
                }
            }
        }

        // ---- the edge
        let mut did = Did::default();
        let before_sw = c.sw_on;
        if let (Err(e), true) = (c.edge(&dc, &mut did), cfg.check_model) {
            fail!("{}: {e}", at(cyc));
        }
        if !before_sw && c.sw_on {
            r.sweeps += 1;
        }
        // idle: the model's pipeline and queue empty (the world's checks
        // alone: nothing shown on m_lk or m_fill for the pipeline's length)
        quiet_run = if o.lk.is_none() && o.fill.is_none() {
            quiet_run + 1
        } else {
            0
        };
        let idle = if cfg.check_model {
            c.idle()
        } else {
            quiet_run >= 4
        };
        r.ordered += usize::from(did.ordered);
        r.queued_answers += usize::from(did.queued_ans);
        r.joined_fill += usize::from(did.joined);
        r.pin_full += usize::from(did.pin_full);
        for (s, row) in c.dir.iter().enumerate().filter(|_| cfg.check_model) {
            for (a, wa) in row.w.iter().enumerate() {
                for wb in &row.w[a + 1..] {
                    if wa.v && wb.v && wa.tag == wb.tag {
                        fail!(
                            "{}: two valid ways of set {s} hold tag {:#x}",
                            at(cyc),
                            wa.tag
                        );
                    }
                }
            }
        }
        if rst {
            // the world starts again
            outst.clear();
            n_out = 0;
            owner = vec![None; p.slots];
            held.clear();
            fills.clear();
            failed.clear();
            iv_taken.clear();
            d = Drive::default();
            fills_epoch = (0, 0);
            stat_epoch = (0, 0);
        }

        // HitsWhileMissesWait: the phases
        if hw {
            let quiet = n_out == 0 && fills.is_empty() && d.fd.is_none() && idle;
            match phase {
                0 if hot_sent == hot.len() && quiet => {
                    phase = 1;
                }
                1 | 3 if d.lk.is_none() && cold_sent == miss_levels[(phase - 1) / 2] => {
                    // the misses wait; let them settle into the queue
                    if settle_until == 0 {
                        settle_until = cyc + 10;
                    } else if cyc >= settle_until {
                        settle_until = 0;
                        phase += 1;
                        hot_sent = 0;
                        hot_done = 0;
                    }
                }
                2 | 4 if hot_done == hot_n => {
                    let waiting = cold_sent;
                    let span = last_hot_ans - first_hot_ans + 1;
                    r.hot_rate.push((waiting, 1000 * hot_n as u64 / span));
                    // the misses still wait (fills withheld)
                    let cold_out: usize = cold
                        .iter()
                        .map(|q| outst.get(q).map_or(0, |v| v.len()))
                        .sum();
                    if cold_out != waiting {
                        fail!("{}: {cold_out} misses waiting, want {waiting}", at(cyc));
                    }
                    phase = if phase == 2 && miss_levels.len() > 1 {
                        3
                    } else {
                        5
                    };
                }
                5 => {
                    // release: the pins go, the fills come
                    held.iter_mut().for_each(|h| h.1 = 0);
                    draining = true;
                    phase = 6;
                }
                _ => {}
            }
        }

        cyc += 1;
        if draining && (!hw || phase == 6) {
            let done = n_out == 0
                && held.is_empty()
                && fills.is_empty()
                && d.fd.is_none()
                && d.up.is_none()
                && d.lk.is_none()
                && idle
                && rst_left == 0;
            if done {
                break;
            }
        }
    }
    // drained: the counters against the fills seen since the last reset
    if stat_epoch != fills_epoch {
        fail!(
            "{} seed {}: stat_miss / stat_wb pulses {stat_epoch:?}, fill commands (with wb) \
             {fills_epoch:?}",
            cfg.model,
            cfg.seed
        );
    }
    for (s, row) in c.dir.iter().enumerate().filter(|_| cfg.check_model) {
        if row.w.iter().any(|w| w.pin != 0 || w.f) {
            fail!(
                "{} seed {}: set {s} still pinned or filling after the drain",
                cfg.model,
                cfg.seed
            );
        }
    }
    r.cycles = cyc;
    Ok(r)
}
