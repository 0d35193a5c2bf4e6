//! Bench of `atomic_replay`, the replay records of the atomics the NIC
//! executed as a responder: per QP a ring of DEPTH records (PSN, original
//! value) in block RAM at the QP's number, the QP's newest replacing its
//! oldest, emptied by a clear of the QP (its load), looked up by QP and PSN
//! with the answer two cycles later.
//!
//! Seeded random stimulus that keeps the block's contract: every QP is
//! cleared (loaded) before its first record; records at least three cycles
//! apart and clears at least two; one record in twenty of a PSN a valid
//! record of its QP holds (a QP that executes fewer than DEPTH atomics in
//! 2^24 PSNs records a PSN again), the others of a PSN its QP's ring does
//! not hold (PSNs from a small pool the QPs share, so that other QPs often
//! hold the PSN looked up; now and then near the 24-bit wrap); QP numbers
//! below NUM_QP (junk ones too, on inputs not valid).
//! Moods change how often records and clears come and which QPs are hot
//! (a few QPs fill their rings, all QPs spread them). Clears are aimed now
//! and then at the QP of the record of the same cycle, at the QP of the
//! record that writes in the clear's cycle (it waits, and is dropped) or
//! at another QP then (it waits, and is written a cycle late). Lookups:
//! the keys of valid records (every slot), PSNs two or more valid records
//! of the QP hold (a lookup in five while there are some), the same PSN
//! on another QP, a PSN one off, the record arriving (not yet seen), the
//! record writing or waiting, keys replaced, cleared, dropped, held before
//! a reset, random.
//! Resets of one or two cycles, some in a record's cycle, some in its
//! write cycle with and without a clear of another QP.
//!
//! A model written from the block's header comment is checked every cycle:
//!
//! - `lk_hit` and `lk_orig` are the answer to the lookup of two cycles
//!   before, from the records as they were after that lookup's cycle (a
//!   record written or a clear in it is seen): of the valid records of
//!   the QP that hold the PSN the newest (the last written, whatever its
//!   slot), `lk_orig` exactly 0 on a miss; a miss (`lk_orig` 0) if a
//!   reset came in the cycle between;
//! - a record arriving in cycle t reads its QP's ring in t and writes in
//!   t+1 the slot its ring writes next (marking it valid, moving the
//!   pointer), unless a clear comes in t+1: then it waits and writes in
//!   t+2, into its ring as it is then;
//! - a QP's ring replaces its oldest record after DEPTH more records of
//!   that QP, and no other QP's records touch it;
//! - a clear empties its QP's ring (its next record goes to slot 0) and
//!   drops the record of that QP arriving in its cycle or waiting in it;
//! - a reset drops the record that arrives in its cycle or would wait
//!   through it (a record writing in the reset cycle is written) and keeps
//!   every stored record and ring;
//! - the answer is a register: a peek with every input changed (reset
//!   included) gives the same outputs.

use crate::{fail, Fail, Kind, Model, PortsIn, PSN_MASK};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::collections::{HashMap, VecDeque};

/// One run.
#[derive(Debug, Clone)]
pub struct ArCfg {
    /// configuration name (a `Kind::AtomicReplay` one)
    pub model: &'static str,
    pub seed: u64,
    pub cycles: usize,
    /// resets in the middle of the run (taking turns: at once, in a
    /// record's cycle, in a record's write cycle with a clear of another
    /// QP, without)
    pub resets: usize,
}

impl ArCfg {
    pub fn new(model: &'static str, seed: u64) -> Self {
        Self {
            model,
            seed,
            cycles: 20_000,
            resets: 16,
        }
    }
}

/// What a run reached.
#[derive(Debug, Clone, Default)]
pub struct ArReport {
    pub cycles: u64,
    /// records that arrived, were written, were written a cycle late
    /// (behind a clear of another QP)
    pub records: usize,
    pub written: usize,
    pub waited: usize,
    /// records dropped by a clear of their QP in their cycle, while they
    /// waited; by a reset
    pub dropped_at_clear: usize,
    pub dropped_waiting: usize,
    pub dropped_at_reset: usize,
    /// records written in a reset cycle (kept)
    pub written_at_reset: usize,
    pub clears: usize,
    /// records written over a valid one (the QP's ring wrapped)
    pub replacements: usize,
    /// records written with a PSN a valid record of their QP held
    pub dup_records: usize,
    pub hits: usize,
    /// hits by the slot that held the record
    pub hits_slot: Vec<usize>,
    /// hits where two or more valid records of the QP held the PSN (the
    /// newest answers); of those, the ones where an older match sits in a
    /// higher slot than the newest (the ring wrapped between them)
    pub hits_dup: usize,
    pub hits_dup_wrapped: usize,
    /// hits of an older record of the PSN while a newer one arrives in the
    /// lookup's cycle or waits to be written (not seen yet)
    pub hits_dup_arriving: usize,
    /// hits of a record after which at least 2 x DEPTH records were written
    /// (at least DEPTH + 1 of other QPs: a NIC-wide ring would have lost it)
    pub hits_old: usize,
    /// hits of the record written in the lookup's cycle; of those, the ones
    /// written a cycle late behind a clear
    pub hits_written_now: usize,
    pub hits_waited_now: usize,
    /// hits of a record stored before the last reset
    pub hits_after_reset: usize,
    pub misses: usize,
    /// misses whose PSN a valid record of another QP holds
    pub other_qp: usize,
    /// misses one PSN off a valid record of the QP
    pub psn_off: usize,
    /// misses of a record the QP's ring replaced, a clear removed, a clear
    /// or a reset dropped
    pub replaced: usize,
    pub cleared: usize,
    pub dropped: usize,
    /// lookups of the record arriving in the lookup's cycle (a miss)
    pub arriving: usize,
    /// lookups of a record waiting behind a clear (a miss)
    pub waiting: usize,
    /// misses of a record valid before a clear of its QP in the lookup's
    /// cycle; in the cycle before
    pub at_clear: usize,
    pub after_clear: usize,
    pub resets: usize,
    /// answers a reset turned into a miss (they would have hit)
    pub reset_misses: usize,
    /// peeks with every input changed
    pub peeks: usize,
}

/// A slot of a ring: the record (its number among those written, for the
/// report) and whether it is valid.
#[derive(Debug, Clone, Copy, Default)]
struct Slot {
    valid: bool,
    psn: u32,
    orig: u64,
    seq: u64,
}

#[derive(Debug, Clone)]
struct Ring {
    slots: Vec<Slot>,
    next: usize,
}

/// The record between its cycle and its write.
#[derive(Debug, Clone, Copy)]
struct Pend {
    q: u32,
    p: u32,
    o: u64,
    /// a clear of its QP came: it is dropped
    drop: bool,
    /// its cycle
    at: u64,
    /// a clear made it wait
    waited: bool,
}

/// Why a key recorded earlier is not in its QP's ring.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Gone {
    Replaced,
    Cleared,
    Dropped,
}

/// What the outputs must show in a cycle: hit (with the original value)
/// or miss, and the lookup it answers.
#[derive(Debug, Clone)]
struct Want {
    hit: Option<u64>,
    what: String,
}

// The ports (csrc/blocks.cpp): `s_data` words 0 s_rec_psn, 1..2 s_rec_orig,
// 3 lk_psn; `s_last` {lk_qpn (23:16), s_clr_qpn (15:8), s_rec_qpn (7:0)};
// `s_valid` bit 0 s_rec_valid, bit 1 s_clr_valid. `m_data` words 0..1
// lk_orig; `m_valid` bit 0 lk_hit.
const V_REC: u32 = 1;
const V_CLR: u32 = 2;

fn inputs(
    rec: Option<(u32, u32, u64)>,
    clr: Option<u32>,
    lk: (u32, u32),
    junk: &mut ChaCha8Rng,
    nq: u32,
) -> PortsIn {
    let mut i = PortsIn::default();
    // the record's and the clear's fields carry junk while not valid (QP
    // numbers below NUM_QP: the RAMs are NUM_QP deep)
    let (rq, rp, ro) = rec.unwrap_or((
        junk.gen_range(0..nq),
        junk.gen::<u32>() & PSN_MASK,
        junk.gen(),
    ));
    let cq = clr.unwrap_or(junk.gen_range(0..nq));
    i.s_data[0] = rp;
    i.s_data[1] = ro as u32;
    i.s_data[2] = (ro >> 32) as u32;
    i.s_data[3] = lk.1;
    i.s_last = rq | (cq << 8) | (lk.0 << 16);
    i.s_valid = if rec.is_some() { V_REC } else { 0 } | if clr.is_some() { V_CLR } else { 0 };
    i
}

/// The valid records of the lookup's QP that hold its PSN: their slots
/// and records.
fn matches(rings: &[Ring], lk: (u32, u32)) -> Vec<(usize, Slot)> {
    rings[lk.0 as usize]
        .slots
        .iter()
        .enumerate()
        .filter(|(_, s)| s.valid && s.psn == lk.1)
        .map(|(k, s)| (k, *s))
        .collect()
}

/// The lookup's answer from the rings as they are: of the valid records
/// of the QP that hold the PSN, the newest (the last written); its slot
/// and record.
fn answer(rings: &[Ring], lk: (u32, u32)) -> Option<(usize, Slot)> {
    matches(rings, lk).into_iter().max_by_key(|(_, s)| s.seq)
}

/// The keys two or more valid records of their QP hold.
fn dup_keys(rings: &[Ring]) -> Vec<(u32, u32)> {
    let mut keys = Vec::new();
    for (q, g) in rings.iter().enumerate() {
        for (k, s) in g.slots.iter().enumerate() {
            if s.valid
                && g.slots[..k].iter().all(|t| !t.valid || t.psn != s.psn)
                && g.slots[k + 1..].iter().any(|t| t.valid && t.psn == s.psn)
            {
                keys.push((q as u32, s.psn));
            }
        }
    }
    keys
}

/// Whether a valid record of QP `q` holds PSN `p`.
fn holds(rings: &[Ring], q: u32, p: u32) -> bool {
    answer(rings, (q, p)).is_some()
}

/// Runs one configuration; every check above, every cycle.
pub fn run(cfg: &ArCfg) -> Result<ArReport, Fail> {
    let mut m = Model::new(cfg.model, cfg.seed as u32).map_err(Fail)?;
    let c = *m.config();
    assert_eq!(
        c.kind,
        Kind::AtomicReplay,
        "{} is not an atomic_replay",
        c.name
    );
    let nq = c.param("NUM_QP");
    let depth = c.param("DEPTH") as usize;
    assert!(nq >= 2 && nq <= 1 << c.param("QN_W") && depth >= 2);
    let mut rng = ChaCha8Rng::seed_from_u64(cfg.seed);
    let mut junk = ChaCha8Rng::seed_from_u64(cfg.seed ^ 0x5eed);

    // reset (it clears no ring: the rings start empty as the RAMs' INIT,
    // and the first cycles load, i.e. clear, every QP anyway)
    for _ in 0..2 {
        m.step(&PortsIn {
            rst: 1,
            ..PortsIn::default()
        });
    }

    let mut r = ArReport {
        hits_slot: vec![0; depth],
        ..ArReport::default()
    };
    let mut rings = vec![
        Ring {
            slots: vec![Slot::default(); depth],
            next: 0,
        };
        nq as usize
    ];
    let mut loaded = vec![false; nq as usize];
    let mut load_next = 0u32;
    let mut pend: Option<Pend> = None;
    let mut last_rec: Option<u64> = None;
    let mut last_clr: Option<(u64, u32)> = None;
    // records written (the next one's number); at the last reset
    let mut seq = 0u64;
    let mut seq_at_reset = 0u64;
    // the keys recorded, newest last, and why those gone are gone
    let mut hist: VecDeque<(u32, u32)> = VecDeque::new();
    let mut gone: HashMap<(u32, u32), Gone> = HashMap::new();
    // the answer the outputs show this cycle (to the lookup two cycles
    // before) and next cycle (to the lookup of the cycle before)
    let miss = |what: &str| Want {
        hit: None,
        what: what.to_string(),
    };
    let mut want_now = miss("the reset");
    let mut want_next = miss("the reset");
    // moods
    let mut pool_base = 0u32;
    let (mut p_rec, mut p_clr) = (0.3, 0.05);
    let mut hot: Vec<u32> = (0..nq).collect();
    let mut mood_left = 0u32;
    // resets: the next one's cycle and kind; cycles of reset left
    let mut resets_done = 0usize;
    let mut rst_left = 0u32;
    // the keys valid at the last reset, looked up in the cycles after it
    let mut pre_reset: Vec<(u32, u32)> = Vec::new();
    let mut since_reset = u64::MAX;

    for cyc in 0..cfg.cycles as u64 {
        let at = || format!("{} seed {} cycle {cyc}", cfg.model, cfg.seed);
        if mood_left == 0 {
            mood_left = rng.gen_range(50..400);
            p_rec = [0.05, 0.3, 0.6, 1.0][rng.gen_range(0..4)];
            p_clr = [0.0, 0.03, 0.1, 0.3][rng.gen_range(0..4)];
            pool_base = if rng.gen_bool(0.3) {
                PSN_MASK - rng.gen_range(0..6)
            } else {
                rng.gen::<u32>() & PSN_MASK
            };
            hot = if rng.gen_bool(0.5) {
                (0..nq).collect()
            } else {
                let k = rng.gen_range(1..=3.min(nq));
                (0..k).map(|_| rng.gen_range(0..nq)).collect()
            };
        }
        mood_left -= 1;
        let rec_ok = last_rec.is_none_or(|t| cyc >= t + 3);
        let clr_ok = last_clr.is_none_or(|(t, _)| cyc >= t + 2);
        // the record writing in this cycle (if no clear comes)
        let writing = pend.filter(|p| !p.drop && (p.at + 1 == cyc || p.waited));
        let fresh_pend = pend.filter(|p| !p.drop && p.at + 1 == cyc);

        // a reset: the turn of the next one, and its kind
        let rst_kind = if rst_left == 0
            && resets_done < cfg.resets
            && cyc as usize * (cfg.resets + 1) >= cfg.cycles * (resets_done + 1)
            && load_next >= nq
        {
            Some(resets_done % 4)
        } else {
            None
        };

        // a record: of a hot QP loaded; one in twenty of a PSN a valid
        // record of the QP holds (a QP that executed fewer than DEPTH
        // atomics in 2^24 PSNs), the others of a PSN its ring does not hold
        let want_rec = match rst_kind {
            Some(1) => true,
            _ => rng.gen_bool(p_rec),
        };
        let rec = if rec_ok && want_rec {
            let cands: Vec<u32> = hot
                .iter()
                .copied()
                .filter(|&q| loaded[q as usize])
                .collect();
            if cands.is_empty() {
                None
            } else {
                let q = cands[rng.gen_range(0..cands.len())];
                let held: Vec<u32> = rings[q as usize]
                    .slots
                    .iter()
                    .filter(|s| s.valid)
                    .map(|s| s.psn)
                    .collect();
                if !held.is_empty() && rng.gen_bool(0.05) {
                    Some((q, held[rng.gen_range(0..held.len())], rng.gen::<u64>()))
                } else {
                    let mut p = (pool_base + rng.gen_range(0..depth as u32 + 4)) & PSN_MASK;
                    if holds(&rings, q, p) {
                        p = rng.gen::<u32>() & PSN_MASK;
                    }
                    if holds(&rings, q, p) {
                        None
                    } else {
                        Some((q, p, rng.gen::<u64>()))
                    }
                }
            }
        } else {
            None
        };
        // a clear: every QP loaded first, in turn; then now and then, often
        // aimed at the record arriving or writing
        let other = |rng: &mut ChaCha8Rng, q: u32| (q + rng.gen_range(1..nq)) % nq;
        let mut clr = if !clr_ok {
            None
        } else if load_next < nq {
            load_next += 1;
            Some(load_next - 1)
        } else if let Some(fp) = fresh_pend.filter(|_| rng.gen_bool(0.1)) {
            let q = fp.q;
            Some(if rng.gen_bool(0.5) {
                q
            } else {
                other(&mut rng, q)
            })
        } else if rng.gen_bool(p_clr) {
            Some(match (rng.gen_range(0..4), rec) {
                (0, Some((q, _, _))) => q,
                (1, _) => hot[rng.gen_range(0..hot.len())],
                _ => rng.gen_range(0..nq),
            })
        } else {
            None
        };
        // the reset's kind says when it comes
        let rst_go = match rst_kind {
            Some(0) => true,
            Some(1) => rec.is_some(),
            Some(2) => match fresh_pend {
                Some(p) if clr_ok => {
                    clr = Some(other(&mut rng, p.q));
                    true
                }
                _ => false,
            },
            Some(_) => match fresh_pend {
                Some(_) => {
                    clr = None;
                    true
                }
                None => false,
            },
            None => false,
        };
        if rst_go {
            rst_left = rng.gen_range(1..=2);
            resets_done += 1;
            r.resets += 1;
        }
        let rst = rst_left > 0;

        // the lookup
        let valid: Vec<(u32, Slot)> = rings
            .iter()
            .enumerate()
            .flat_map(|(q, g)| {
                g.slots
                    .iter()
                    .filter(|s| s.valid)
                    .map(move |s| (q as u32, *s))
            })
            .collect();
        let pick_valid = |rng: &mut ChaCha8Rng| {
            if valid.is_empty() {
                None
            } else {
                Some(valid[rng.gen_range(0..valid.len())])
            }
        };
        let fresh = since_reset < 16 && !pre_reset.is_empty();
        let dups = dup_keys(&rings);
        let lk = match if fresh && rng.gen_bool(0.6) {
            12
        } else if !dups.is_empty() && rng.gen_bool(0.2) {
            13
        } else {
            rng.gen_range(0..12)
        } {
            12 => Some(pre_reset[rng.gen_range(0..pre_reset.len())]),
            // a PSN two or more valid records of the QP hold
            13 => Some(dups[rng.gen_range(0..dups.len())]),
            0..=2 => pick_valid(&mut rng).map(|(q, s)| (q, s.psn)),
            3 => pick_valid(&mut rng).map(|(q, s)| (other(&mut rng, q), s.psn)),
            4 => rec.map(|(q, p, _)| (q, p)),
            5 => pend.map(|p| (p.q, p.p)),
            6 | 7 => {
                if hist.is_empty() {
                    None
                } else {
                    Some(hist[rng.gen_range(0..hist.len())])
                }
            }
            8 => pick_valid(&mut rng).map(|(q, s)| {
                (
                    q,
                    if rng.gen_bool(0.5) {
                        s.psn.wrapping_add(1) & PSN_MASK
                    } else {
                        s.psn.wrapping_sub(1) & PSN_MASK
                    },
                )
            }),
            9 => {
                // a record of the QP cleared in this cycle or the one before
                let q = clr.or(last_clr.filter(|&(t, _)| t + 1 == cyc).map(|(_, q)| q));
                q.and_then(|q| {
                    let held: Vec<u32> = rings[q as usize]
                        .slots
                        .iter()
                        .filter(|s| s.valid)
                        .map(|s| s.psn)
                        .collect();
                    let was: Vec<(u32, u32)> = hist
                        .iter()
                        .copied()
                        .filter(|&(hq, hp)| hq == q && gone.get(&(hq, hp)) == Some(&Gone::Cleared))
                        .collect();
                    if !held.is_empty() {
                        Some((q, held[rng.gen_range(0..held.len())]))
                    } else if !was.is_empty() {
                        Some(was[rng.gen_range(0..was.len())])
                    } else {
                        None
                    }
                })
            }
            10 => writing.map(|p| (p.q, p.p)),
            _ => None,
        }
        .unwrap_or_else(|| {
            (
                rng.gen_range(0..nq),
                (pool_base + rng.gen_range(0..depth as u32 + 4)) & PSN_MASK,
            )
        });
        let mut i = inputs(rec, clr, lk, &mut junk, nq);
        i.rst = u8::from(rst);

        // the answer is a register: other inputs before the edge change nothing
        let alt = if cyc % 4 == 0 {
            let mut a = inputs(
                Some((rng.gen_range(0..nq), rng.gen::<u32>() & PSN_MASK, rng.gen())),
                Some(rng.gen_range(0..nq)),
                (rng.gen_range(0..nq), rng.gen::<u32>() & PSN_MASK),
                &mut junk,
                nq,
            );
            a.rst = rng.gen_range(0..2);
            r.peeks += 1;
            Some(m.peek(&a))
        } else {
            None
        };
        let po = m.step(&i);
        if po.sim_flags != 0 {
            fail!("{}: the model stopped ({:#x})", at(), po.sim_flags);
        }
        if let Some(p) = alt {
            if p.m_valid != po.m_valid || p.m_data[..2] != po.m_data[..2] {
                fail!(
                    "{}: other inputs before the edge changed the answer (hit {} -> {}): it \
                     must be a register",
                    at(),
                    po.m_valid & 1,
                    p.m_valid & 1
                );
            }
        }
        let hit = po.m_valid & 1 != 0;
        let orig = u64::from(po.m_data[0]) | (u64::from(po.m_data[1]) << 32);
        // (lk_orig is 0 on a miss)
        if hit != want_now.hit.is_some() || orig != want_now.hit.unwrap_or(0) {
            fail!(
                "{}: the answer to {} is hit {hit} orig {orig:#x}, want {}",
                at(),
                want_now.what,
                want_now
                    .hit
                    .map_or("a miss, orig 0".to_string(), |o| format!(
                        "a hit, orig {o:#x}"
                    ))
            );
        }

        // ---- the edge
        let before = answer(&rings, lk);
        // the record of the cycle before (or waiting): written unless a
        // clear takes the ring's port (then it waits; dropped if the clear
        // is of its QP)
        let mut written_now: Option<(u32, u32, bool)> = None;
        if let Some(mut p) = pend.take() {
            if p.drop {
                // (dropped)
            } else if let Some(cq) = clr {
                p.waited = true;
                if cq == p.q {
                    p.drop = true;
                    r.dropped_waiting += 1;
                    // (the clear removes any older record of the PSN)
                    gone.insert((p.q, p.p), Gone::Dropped);
                }
                pend = Some(p);
            } else {
                if holds(&rings, p.q, p.p) {
                    r.dup_records += 1;
                }
                let g = &mut rings[p.q as usize];
                let s = g.next;
                let old = g.slots[s];
                if old.valid {
                    r.replacements += 1;
                }
                g.slots[s] = Slot {
                    valid: true,
                    psn: p.p,
                    orig: p.o,
                    seq,
                };
                g.next = (s + 1) % depth;
                seq += 1;
                // (a record of the PSN may remain: a newer one, or this)
                if old.valid && !holds(&rings, p.q, old.psn) {
                    gone.insert((p.q, old.psn), Gone::Replaced);
                }
                gone.remove(&(p.q, p.p));
                hist.push_back((p.q, p.p));
                if hist.len() > 8 * depth + 32 {
                    hist.pop_front();
                }
                r.written += 1;
                if p.waited {
                    r.waited += 1;
                }
                if rst {
                    r.written_at_reset += 1;
                }
                written_now = Some((p.q, p.p, p.waited));
            }
        }
        // the clear: its QP's ring empty, slot 0 next
        if let Some(q) = clr {
            let g = &mut rings[q as usize];
            for s in g.slots.iter_mut().filter(|s| s.valid) {
                gone.insert((q, s.psn), Gone::Cleared);
                s.valid = false;
            }
            g.next = 0;
            loaded[q as usize] = true;
            pre_reset.retain(|&(pq, _)| pq != q);
            last_clr = Some((cyc, q));
            r.clears += 1;
        }
        // the record of this cycle: dropped by a clear of its QP now
        if let Some((q, p, o)) = rec {
            let drop = clr == Some(q);
            if drop {
                r.dropped_at_clear += 1;
                gone.insert((q, p), Gone::Dropped);
            }
            pend = Some(Pend {
                q,
                p,
                o,
                drop,
                at: cyc,
                waited: false,
            });
            last_rec = Some(cyc);
            r.records += 1;
        }
        // a reset drops the record arriving or waiting through it
        since_reset = since_reset.saturating_add(1);
        if rst {
            if let Some(p) = pend.take() {
                if !p.drop {
                    r.dropped_at_reset += 1;
                    if !holds(&rings, p.q, p.p) {
                        gone.insert((p.q, p.p), Gone::Dropped);
                    }
                }
            }
            if since_reset > 1 {
                // (a reset's first cycle)
                pre_reset = rings
                    .iter()
                    .enumerate()
                    .flat_map(|(q, g)| {
                        g.slots
                            .iter()
                            .filter(|s| s.valid)
                            .map(move |s| (q as u32, s.psn))
                    })
                    .collect();
                seq_at_reset = seq;
            }
            since_reset = 0;
            rst_left -= 1;
        }

        // this cycle's lookup, answered two cycles later
        let a = answer(&rings, lk);
        let what = format!(
            "the lookup of QP {} PSN {:#x} in cycle {cyc}{}",
            lk.0,
            lk.1,
            if rst { " (a reset cycle)" } else { "" }
        );
        if let Some((k, s)) = a {
            r.hits += 1;
            r.hits_slot[k] += 1;
            let all = matches(&rings, lk);
            if all.len() >= 2 {
                r.hits_dup += 1;
                if all.iter().any(|&(j, _)| j > k) {
                    r.hits_dup_wrapped += 1;
                }
            }
            if rec.is_some_and(|(q, p, _)| (q, p) == lk)
                || pend.is_some_and(|p| !p.drop && (p.q, p.p) == lk)
            {
                r.hits_dup_arriving += 1;
            }
            if seq - 1 - s.seq >= 2 * depth as u64 {
                r.hits_old += 1;
            }
            if let Some((_, _, waited)) = written_now.filter(|w| (w.0, w.1) == lk) {
                r.hits_written_now += 1;
                if waited {
                    r.hits_waited_now += 1;
                }
            }
            if s.seq < seq_at_reset {
                r.hits_after_reset += 1;
            }
        } else {
            r.misses += 1;
            if valid.iter().any(|&(q, s)| q != lk.0 && s.psn == lk.1) {
                r.other_qp += 1;
            }
            if valid.iter().any(|&(q, s)| {
                q == lk.0 && (s.psn == (lk.1 + 1) & PSN_MASK || lk.1 == (s.psn + 1) & PSN_MASK)
            }) {
                r.psn_off += 1;
            }
            match gone.get(&lk) {
                Some(Gone::Replaced) => r.replaced += 1,
                Some(Gone::Cleared) => r.cleared += 1,
                Some(Gone::Dropped) => r.dropped += 1,
                None => {}
            }
            if rec.is_some_and(|(q, p, _)| (q, p) == lk) {
                r.arriving += 1;
            }
            if pend.is_some_and(|p| p.waited && !p.drop && (p.q, p.p) == lk) {
                r.waiting += 1;
            }
            if before.is_some() && clr == Some(lk.0) {
                r.at_clear += 1;
            }
            if last_clr.is_some_and(|(t, q)| t + 1 == cyc && q == lk.0)
                && gone.get(&lk) == Some(&Gone::Cleared)
            {
                r.after_clear += 1;
            }
        }
        want_now = if rst {
            if want_next.hit.is_some() {
                r.reset_misses += 1;
            }
            miss(&format!("{} (a reset in the cycle after)", want_next.what))
        } else {
            want_next
        };
        want_next = Want {
            hit: a.map(|(_, s)| s.orig),
            what,
        };
    }
    r.cycles = cfg.cycles as u64;
    Ok(r)
}
