//! Bench of `atomic_replay`, the replay records of the atomics the NIC
//! executed as a responder: a ring of ENTRIES records (QP number, PSN,
//! original value), the newest replacing the oldest, cleared by QP at a
//! QP's load, looked up by QP and PSN with the answer a cycle later.
//!
//! Seeded random records (QPs of every number, PSNs from a small pool
//! shared by the QPs, so that other QPs often hold the PSN looked up; now
//! and then near the 24-bit wrap; never a key a valid record holds, as the
//! block's contract asks), clears (often of the QP of the entry the ring
//! writes next, in the same cycle as that record; often of the QP being
//! recorded), lookups (the keys of valid records, the same PSN on another
//! QP, a PSN one off, the key recorded in the same cycle or the cycle
//! before, keys that were replaced, cleared or reset, random keys) and
//! resets, against a model of the ring written from the block's contract,
//! every cycle:
//!
//! - `lk_hit` and, on a hit, `lk_orig` are the answer to the lookup of the
//!   cycle before, from the records as they were in that cycle (a record
//!   or clear of that cycle does not change it; a reset in it makes it a
//!   miss);
//! - a record goes to the entry after the last one written (the ring
//!   replaces its oldest record after ENTRIES more records, cleared or
//!   not);
//! - a clear removes exactly the records of its QP; a record in the same
//!   cycle stays, even in the entry the clear names or of the QP cleared;
//! - a reset empties the ring and starts it again at entry 0;
//! - the answer is a register (a peek with other inputs gives the same).

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
    /// resets in the middle of the run
    pub resets: usize,
}

impl ArCfg {
    pub fn new(model: &'static str, seed: u64) -> Self {
        Self {
            model,
            seed,
            cycles: 20_000,
            resets: 3,
        }
    }
}

/// What a run reached.
#[derive(Debug, Clone, Default)]
pub struct ArReport {
    pub cycles: u64,
    pub records: usize,
    pub hits: usize,
    pub misses: usize,
    /// misses whose PSN a valid record of another QP holds
    pub other_qp: usize,
    /// misses of a record the ring replaced
    pub replaced: usize,
    /// misses of a record a clear removed
    pub cleared: usize,
    /// misses of a record from before a reset whose entry no record has
    /// written since
    pub after_reset: usize,
    /// misses one PSN off a valid record of the QP
    pub psn_off: usize,
    /// lookups of the key recorded in the same cycle (a miss)
    pub same_cycle: usize,
    /// hits of the record written in the cycle before
    pub hit_next_cycle: usize,
    /// hits in a cycle with a clear of the QP looked up (answered from
    /// before the clear)
    pub hit_at_clear: usize,
    /// clears that removed records while another QP's stayed
    pub clears_partial: usize,
    /// records into the entry whose QP a clear of the same cycle names
    pub rec_over_clear: usize,
    /// records of the QP a clear of the same cycle names
    pub rec_of_cleared_qp: usize,
    /// records that replaced a valid record (the ring wrapped onto it)
    pub replacements: usize,
    pub resets: usize,
    /// resets that found records in the ring
    pub resets_with_records: usize,
}

/// An entry of the ring as the block keeps it (the key and value stay
/// when it is invalidated: a clear compares the stored QP whatever the
/// valid bit).
#[derive(Debug, Clone, Copy, Default)]
struct Entry {
    valid: bool,
    qpn: u32,
    psn: u32,
    orig: u64,
}

/// Why a key recorded earlier is no longer in the ring.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Gone {
    Replaced,
    Cleared,
    Reset,
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
    qmask: u32,
) -> PortsIn {
    let mut i = PortsIn::default();
    // the record's and the clear's fields carry junk while not valid
    let (rq, rp, ro) = rec.unwrap_or((
        junk.gen::<u32>() & qmask,
        junk.gen::<u32>() & PSN_MASK,
        junk.gen(),
    ));
    let cq = clr.unwrap_or(junk.gen::<u32>() & qmask);
    i.s_data[0] = rp;
    i.s_data[1] = ro as u32;
    i.s_data[2] = (ro >> 32) as u32;
    i.s_data[3] = lk.1;
    i.s_last = rq | (cq << 8) | (lk.0 << 16);
    i.s_valid = if rec.is_some() { V_REC } else { 0 } | if clr.is_some() { V_CLR } else { 0 };
    i
}

/// The lookup's answer from the ring as it is: hit and original value.
fn answer(ring: &[Entry], lk: (u32, u32)) -> (bool, u64) {
    ring.iter()
        .find(|e| e.valid && e.qpn == lk.0 && e.psn == lk.1)
        .map_or((false, 0), |e| (true, e.orig))
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
    let n = c.param("ENTRIES") as usize;
    let qn_w = c.param("QN_W");
    let qmask = (1u32 << qn_w) - 1;
    let mut rng = ChaCha8Rng::seed_from_u64(cfg.seed);
    let mut junk = ChaCha8Rng::seed_from_u64(cfg.seed ^ 0x5eed);

    // reset
    for _ in 0..2 {
        m.step(&PortsIn {
            rst: 1,
            ..PortsIn::default()
        });
    }

    let mut r = ArReport::default();
    let mut ring = vec![Entry::default(); n];
    let mut next = 0usize;
    // the keys recorded, newest last, and why those gone are gone
    let mut hist: VecDeque<(u32, u32)> = VecDeque::new();
    let mut gone: HashMap<(u32, u32), Gone> = HashMap::new();
    // the answer the outputs show this cycle (to the lookup of the cycle
    // before), and what that lookup was
    let mut want: (bool, u64) = (false, 0);
    let mut want_what = String::from("the reset");
    let mut prev_rec: Option<(u32, u32)> = None;
    // the PSN pool the QPs share; moved now and then
    let mut pool_base = 0u32;
    let (mut p_rec, mut p_clr) = (0.5, 0.05);
    let mut mood_left = 0u32;
    let mut rst_left = 0u32;
    let mut resets_left = cfg.resets;
    // the records valid at the last reset whose entries no record has
    // written since, and the cycles since that reset: the next few cycles
    // look them up (a reset that kept them would show)
    let mut pre_reset: Vec<(usize, u32, u32)> = Vec::new();
    let mut since_reset = u64::MAX;

    for cyc in 0..cfg.cycles as u64 {
        let at = || format!("{} seed {} cycle {cyc}", cfg.model, cfg.seed);
        if mood_left == 0 {
            mood_left = rng.gen_range(50..500);
            p_rec = [0.05, 0.3, 0.7, 1.0][rng.gen_range(0..4)];
            p_clr = [0.0, 0.03, 0.1, 0.3][rng.gen_range(0..4)];
            pool_base = if rng.gen_bool(0.3) {
                PSN_MASK - rng.gen_range(0..6)
            } else {
                rng.gen::<u32>() & PSN_MASK
            };
        }
        mood_left -= 1;
        if rst_left == 0
            && resets_left > 0
            && (cyc as usize) * (cfg.resets + 1) >= cfg.cycles * (cfg.resets + 1 - resets_left)
            && rng.gen_bool(0.05)
        {
            rst_left = rng.gen_range(1..=2);
            resets_left -= 1;
            r.resets += 1;
            if ring.iter().any(|e| e.valid) {
                r.resets_with_records += 1;
            }
        }
        let rst = rst_left > 0;
        let valid: Vec<Entry> = ring.iter().copied().filter(|e| e.valid).collect();

        // a record: a key no valid record holds
        let fresh = since_reset < 16 && !pre_reset.is_empty();
        let rec = if !rst && rng.gen_bool(if fresh { p_rec / 4.0 } else { p_rec }) {
            let q = rng.gen::<u32>() & qmask;
            let mut p = (pool_base + rng.gen_range(0..8)) & PSN_MASK;
            if valid.iter().any(|e| e.qpn == q && e.psn == p) {
                p = rng.gen::<u32>() & PSN_MASK;
            }
            if valid.iter().any(|e| e.qpn == q && e.psn == p) {
                None
            } else {
                Some((q, p, rng.gen::<u64>()))
            }
        } else {
            None
        };
        // a clear: often of the entry the ring writes next, or of the QP
        // being recorded
        let clr = if !rst && rng.gen_bool(p_clr) {
            Some(match (rng.gen_range(0..4), rec) {
                (0 | 1, _) => ring[next].qpn,
                (2, Some((q, _, _))) => q,
                _ => rng.gen::<u32>() & qmask,
            })
        } else {
            None
        };
        // the lookup
        let pick_valid = |rng: &mut ChaCha8Rng| {
            if valid.is_empty() {
                None
            } else {
                Some(valid[rng.gen_range(0..valid.len())])
            }
        };
        let lk = match if fresh && rng.gen_bool(0.6) {
            12
        } else {
            rng.gen_range(0..12)
        } {
            12 => {
                let (_, q, p) = pre_reset[rng.gen_range(0..pre_reset.len())];
                Some((q, p))
            }
            0..=3 => pick_valid(&mut rng).map(|e| (e.qpn, e.psn)),
            4 => pick_valid(&mut rng)
                .map(|e| ((e.qpn + rng.gen_range(1..=qmask.max(1))) & qmask, e.psn)),
            5 => rec.map(|(q, p, _)| (q, p)),
            6 => prev_rec,
            7 | 8 => {
                if hist.is_empty() {
                    None
                } else {
                    Some(hist[rng.gen_range(0..hist.len())])
                }
            }
            9 => pick_valid(&mut rng).map(|e| {
                (
                    e.qpn,
                    if rng.gen_bool(0.5) {
                        e.psn.wrapping_add(1) & PSN_MASK
                    } else {
                        e.psn.wrapping_sub(1) & PSN_MASK
                    },
                )
            }),
            10 => clr.map(|q| {
                // a record of the QP cleared in this cycle, if any
                valid
                    .iter()
                    .find(|e| e.qpn == q)
                    .map_or((q, pool_base), |e| (q, e.psn))
            }),
            _ => None,
        }
        .unwrap_or_else(|| {
            (
                rng.gen::<u32>() & qmask,
                (pool_base + rng.gen_range(0..8)) & PSN_MASK,
            )
        });
        let mut i = inputs(rec, clr, lk, &mut junk, qmask);
        i.rst = u8::from(rst);

        // the answer is a register: other inputs before the edge change nothing
        let alt = if cyc % 4 == 0 {
            let mut a = inputs(
                Some((
                    rng.gen::<u32>() & qmask,
                    rng.gen::<u32>() & PSN_MASK,
                    rng.gen(),
                )),
                Some(rng.gen::<u32>() & qmask),
                (rng.gen::<u32>() & qmask, rng.gen::<u32>() & PSN_MASK),
                &mut junk,
                qmask,
            );
            a.rst = rng.gen_range(0..2);
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
        if hit != want.0 || (hit && orig != want.1) {
            fail!(
                "{}: the answer to {want_what} is hit {hit} orig {orig:#x}, want hit {} orig \
                 {:#x}",
                at(),
                want.0,
                want.1
            );
        }

        // this cycle's lookup: its answer, next cycle
        let a = answer(&ring, lk);
        want_what = format!(
            "the lookup of QP {} PSN {:#x} in cycle {cyc}{}",
            lk.0,
            lk.1,
            if rst { " (a reset cycle)" } else { "" }
        );
        if rst {
            want = (false, 0);
        } else {
            want = a;
            if a.0 {
                r.hits += 1;
                if prev_rec == Some(lk) {
                    r.hit_next_cycle += 1;
                }
                if clr == Some(lk.0) {
                    r.hit_at_clear += 1;
                }
            } else {
                r.misses += 1;
                if rec.is_some_and(|(q, p, _)| (q, p) == lk) {
                    r.same_cycle += 1;
                }
                if valid.iter().any(|e| e.psn == lk.1 && e.qpn != lk.0) {
                    r.other_qp += 1;
                }
                if valid.iter().any(|e| {
                    e.qpn == lk.0
                        && (e.psn == (lk.1 + 1) & PSN_MASK || lk.1 == (e.psn + 1) & PSN_MASK)
                }) {
                    r.psn_off += 1;
                }
                if pre_reset.iter().any(|&(_, q, p)| (q, p) == lk) {
                    r.after_reset += 1;
                }
                match gone.get(&lk) {
                    Some(Gone::Replaced) => r.replaced += 1,
                    Some(Gone::Cleared) => r.cleared += 1,
                    Some(Gone::Reset) => {}
                    None => {}
                }
            }
        }

        // the edge
        since_reset = since_reset.saturating_add(1);
        if rst {
            // (a reset's first cycle)
            if since_reset > 1 {
                pre_reset = ring
                    .iter()
                    .enumerate()
                    .filter(|(_, e)| e.valid)
                    .map(|(k, e)| (k, e.qpn, e.psn))
                    .collect();
            }
            since_reset = 0;
            for e in ring.iter_mut().filter(|e| e.valid) {
                gone.insert((e.qpn, e.psn), Gone::Reset);
                e.valid = false;
            }
            next = 0;
            rst_left -= 1;
            prev_rec = None;
            continue;
        }
        if let Some(q) = clr {
            pre_reset.retain(|&(_, pq, _)| pq != q);
            let mut removed = 0;
            for e in ring.iter_mut().filter(|e| e.qpn == q && e.valid) {
                gone.insert((e.qpn, e.psn), Gone::Cleared);
                e.valid = false;
                removed += 1;
            }
            if removed > 0 && ring.iter().any(|e| e.valid && e.qpn != q) {
                r.clears_partial += 1;
            }
        }
        if let Some((q, p, o)) = rec {
            if clr == Some(ring[next].qpn) {
                r.rec_over_clear += 1;
            }
            if clr == Some(q) {
                r.rec_of_cleared_qp += 1;
            }
            pre_reset.retain(|&(k, _, _)| k != next);
            if ring[next].valid {
                r.replacements += 1;
                gone.insert((ring[next].qpn, ring[next].psn), Gone::Replaced);
            }
            ring[next] = Entry {
                valid: true,
                qpn: q,
                psn: p,
                orig: o,
            };
            gone.remove(&(q, p));
            next = (next + 1) % n;
            hist.push_back((q, p));
            if hist.len() > 4 * n + 16 {
                hist.pop_front();
            }
            r.records += 1;
        }
        prev_rec = rec.map(|(q, p, _)| (q, p));
    }
    r.cycles = cfg.cycles as u64;
    Ok(r)
}
