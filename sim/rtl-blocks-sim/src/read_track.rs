//! Bench of `read_track`, the READ table: the RDMA READs the requester
//! issued, looked up by QP and PSN when their responses, ACKs and NAKs
//! arrive. Seeded random traffic of a requester, a responder and a
//! completer over a few QPs, checked every cycle against a model of the
//! table written from the block's header and port comments:
//!
//! - `alloc_ready` while an entry is free; an allocation takes the lowest
//!   free entry (the index the lookups name) with its QP, span, bus
//!   address, key and length, expecting its first PSN, not asked;
//! - the lookup answers a cycle later, from the entries as they were in
//!   the lookup's cycle (that cycle's updates not yet seen): `lk_hit`
//!   when an entry of `lk_qpn` holds `lk_psn` in its span (first..last,
//!   24-bit wrap), then its index, span, next expected PSN, bus address,
//!   key, length and asked bit; `lk_cov` when an unplaced READ of the QP
//!   (some response not yet placed) is covered: an ACK at or after its
//!   expected PSN, a NAK (`lk_nak`) after it, "after" in 24-bit PSN order
//!   (less than 2^23 ahead); then the oldest such READ's index, expected
//!   PSN and asked bit. The model picks it by expected PSN (the covered
//!   READ whose expected PSN the covering PSN is farthest past) and checks
//!   that this is the oldest allocated too, as the contract below makes it;
//! - `adv` at an entry's index and expected PSN (valid, not every
//!   response placed) moves the expected PSN on by one, clears the asked
//!   bit, and at the last PSN marks every response placed; `ask` at an
//!   entry's index and expected PSN sets the asked bit; either at any
//!   other PSN (stale) or at a free index is ignored;
//! - `free` (QP, last PSN) frees that READ's entry, and nothing when no
//!   entry has them; `drop` frees every entry of its QP and no other;
//!   `rst` frees all;
//! - `q_busy` while `q_qpn` has an entry (placed or not: until it is
//!   freed); `q_full` while it has `q_max` entries or more (the QP's
//!   `max_rd_atomic`, 0..7);
//! - the lookup's outputs are registers: a peek with other lookup inputs
//!   gives the same answer; `q_busy` follows `q_qpn` in the same cycle.
//!
//! The stimulus keeps the users' side of the contract: one QP's READs get
//! increasing, non-overlapping spans in allocation order (other requests'
//! PSNs between them now and then), each span shorter than 2^23 and a
//! QP's READs in flight within 2^23 PSNs; QPs start near the 24-bit wrap
//! now and then (and again after a load). Responses are placed (`adv`)
//! mostly at the QP's oldest unplaced READ and its expected PSN, some
//! stale (a PSN before or after it, a placed or freed entry); `ask`
//! likewise, never in the cycle of an `adv` of the same entry (the
//! responder does one or the other per packet), and never for an entry
//! whose every response is placed (its expected PSN is past its span, so
//! no response can ask there). Frees name real READs (completed, or
//! flushed before their responses) and bogus ones (a last PSN off by one,
//! another QP, a READ freed already); loads drop a QP with READs or
//! without, never in the cycle its own READ is allocated. Lookups are of
//! an entry's QP at PSNs about its span and expected PSN (both edges, one
//! outside each, PSNs 2^23 - 1 and 2^23 past the expected one), at the
//! QP's newest PSN, of QPs without READs and anywhere, ACK or NAK, held a
//! few cycles now and then. The fields of a request not valid are junk.

use crate::{psn_sub, Fail, Kind, Model, PortsIn, PortsOut, PSN_MASK};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// One run (a `Kind::ReadTrack` configuration): `cycles`, with resets at
/// the start and at a third and two thirds of the run.
pub type RtCfg = crate::RunCfg;

/// Half the PSN space: a PSN less than this after another is after it.
const HALF: u32 = 1 << 23;

/// What a run reached.
#[derive(Debug, Clone, Default)]
pub struct RtReport {
    pub cycles: usize,
    pub allocs: usize,
    /// `alloc_valid` with every entry in use (the WQE waits)
    pub alloc_refused: usize,
    /// cycles with every entry in use
    pub full: usize,
    /// allocations whose span wraps past 2^24
    pub wrapped: usize,
    /// allocations of a span of 2^22 PSNs or more
    pub huge: usize,
    /// frees of a READ whose responses were all placed
    pub frees: usize,
    /// frees of a READ with responses still to place (a flush)
    pub flushes: usize,
    /// frees naming no READ in the table
    pub bogus_frees: usize,
    /// loads of a QP with READs while another QP had some
    pub drops: usize,
    /// loads of a QP without READs
    pub empty_drops: usize,
    pub advs: usize,
    /// `adv` ignored (a stale PSN, a placed or free entry)
    pub stale_advs: usize,
    /// READs whose last response was placed
    pub placed: usize,
    /// `adv` of an entry that was asked (clears the asked bit)
    pub adv_of_asked: usize,
    pub asks: usize,
    pub stale_asks: usize,
    pub hits: usize,
    /// hits at an entry's last PSN
    pub hits_at_last: usize,
    /// lookups one PSN before an entry's first or after its last, of its
    /// QP, that no entry holds
    pub misses_outside: usize,
    /// hits of an entry whose span wraps past 2^24
    pub hits_wrapped: usize,
    /// hits with the asked bit set
    pub hits_asked: usize,
    pub covs: usize,
    /// covered lookups with several READs of the QP covered
    pub cov_several: usize,
    /// ... whose oldest READ is not the entry of the highest index
    pub cov_oldest_lower: usize,
    /// covered with the asked bit set
    pub cov_asked: usize,
    /// NAKs at an unplaced READ's expected PSN (which they do not cover)
    pub nak_at_next: usize,
    /// covered by a PSN 2^23 - 1 past the expected one (ACK) or 2^23 (NAK)
    pub cov_far_edge: usize,
    /// cycles with `q_busy` for a QP whose READs are all placed
    pub busy_placed: usize,
    pub resets: usize,
}

/// One READ in the table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Entry {
    qpn: u32,
    first: u32,
    last: u32,
    next: u32,
    bus: u64,
    key: u32,
    len: u32,
    /// every response placed
    done: bool,
    asked: bool,
    /// allocation order
    age: u64,
}

impl Entry {
    fn holds(&self, psn: u32) -> bool {
        psn_sub(psn, self.first) <= psn_sub(self.last, self.first)
    }
}

/// A lookup's answer: the entry holding the PSN, the oldest unplaced
/// READ covered (index and entry, as they were in the lookup's cycle).
#[derive(Debug, Clone, Copy, Default)]
struct Answer {
    hit: Option<(usize, Entry)>,
    cov: Option<(usize, Entry)>,
}

/// One cycle's inputs, as the bench chose them.
#[derive(Debug, Clone, Default)]
struct Inputs {
    rst: bool,
    alloc: Option<(u32, Entry)>,
    /// the alloc fields while `alloc_valid` is low: junk
    alloc_junk: (u32, u32, u32, u64, u32, u32),
    free: Option<(u32, u32)>,
    free_junk: (u32, u32),
    drop: Option<u32>,
    drop_junk: u32,
    lk: (u32, u32, bool),
    adv: Option<(usize, u32)>,
    ask: Option<(usize, u32)>,
    upd_junk: (usize, u32, usize, u32),
    q_qpn: u32,
    q_max: u32,
}

/// The table as the model keeps it.
struct Table {
    e: Vec<Option<Entry>>,
    age: u64,
}

impl Table {
    fn live(&self) -> impl Iterator<Item = (usize, &Entry)> {
        self.e
            .iter()
            .enumerate()
            .filter_map(|(i, e)| e.as_ref().map(|e| (i, e)))
    }

    fn of_qp(&self, q: u32) -> impl Iterator<Item = (usize, &Entry)> {
        self.live().filter(move |(_, e)| e.qpn == q)
    }

    /// The QP's oldest READ with responses to place.
    fn oldest_unplaced(&self, q: u32) -> Option<(usize, Entry)> {
        self.of_qp(q)
            .filter(|(_, e)| !e.done)
            .min_by_key(|(_, e)| e.age)
            .map(|(i, e)| (i, *e))
    }

    fn lookup(&self, qpn: u32, psn: u32, nak: bool) -> Result<Answer, String> {
        let hits: Vec<(usize, Entry)> = self
            .of_qp(qpn)
            .filter(|(_, e)| e.holds(psn))
            .map(|(i, e)| (i, *e))
            .collect();
        if hits.len() > 1 {
            return Err(format!(
                "bench: spans of QP {qpn} overlap at {psn:#x}: {hits:x?}"
            ));
        }
        // the last PSN the ACK or NAK covers
        let upto = if nak {
            psn.wrapping_sub(1) & PSN_MASK
        } else {
            psn
        };
        let cands: Vec<(usize, Entry)> = self
            .of_qp(qpn)
            .filter(|(_, e)| !e.done && psn_sub(upto, e.next) < HALF)
            .map(|(i, e)| (i, *e))
            .collect();
        // the earliest expected PSN, which must be the oldest READ's
        let cov = cands
            .iter()
            .copied()
            .max_by_key(|(_, e)| psn_sub(upto, e.next));
        let oldest = cands.iter().copied().min_by_key(|(_, e)| e.age);
        if cov.map(|c| c.0) != oldest.map(|c| c.0) {
            return Err(format!(
                "bench: the earliest covered READ of QP {qpn} is not the oldest: {cands:x?}"
            ));
        }
        Ok(Answer {
            hit: hits.first().copied(),
            cov,
        })
    }
}

/// A QP as the requester keeps it: the next PSN it would send.
#[derive(Debug, Clone, Copy)]
struct Qp {
    qpn: u32,
    psn: u32,
}

/// A PSN to start a QP at: now and then just below the 24-bit wrap.
fn start_psn(rng: &mut ChaCha8Rng) -> u32 {
    if rng.gen_bool(0.4) {
        PSN_MASK - rng.gen_range(0..80)
    } else {
        rng.gen_range(0..=PSN_MASK)
    }
}

/// A READ's span, last - first (< 2^23).
fn span_len(rng: &mut ChaCha8Rng) -> u32 {
    match rng.gen_range(0..100) {
        0..=29 => 0,
        30..=69 => rng.gen_range(1..=4),
        70..=89 => rng.gen_range(5..=64),
        90..=97 => rng.gen_range(1 << 10..1 << 20),
        _ => rng.gen_range(1 << 22..HALF),
    }
}

fn pack(x: &Inputs, qmask: u32, imask: u32) -> PortsIn {
    let mut i = PortsIn {
        rst: u8::from(x.rst),
        ..PortsIn::default()
    };
    let w = &mut i.s_data;
    let (aq, af, al, ab, ak, an) = match x.alloc {
        Some((q, e)) => (q, e.first, e.last, e.bus, e.key, e.len),
        None => x.alloc_junk,
    };
    w[0] = af & PSN_MASK;
    w[1] = al & PSN_MASK;
    w[2] = ab as u32;
    w[3] = (ab >> 32) as u32;
    w[4] = ak;
    w[5] = an;
    let (fq, fl) = x.free.unwrap_or(x.free_junk);
    w[6] = fl & PSN_MASK;
    w[7] = x.lk.1 & PSN_MASK;
    let (jai, jap, jki, jkp) = x.upd_junk;
    let (ai, ap) = x.adv.unwrap_or((jai, jap));
    let (ki, kp) = x.ask.unwrap_or((jki, jkp));
    w[8] = ap & PSN_MASK;
    w[9] = kp & PSN_MASK;
    w[10] = aq & qmask;
    w[11] = fq & qmask;
    w[12] = x.drop.unwrap_or(x.drop_junk) & qmask;
    w[13] = x.lk.0 & qmask;
    w[14] = x.q_qpn & qmask;
    w[15] = (ai as u32 & imask) | (ki as u32 & imask) << 8 | (x.q_max & 7) << 16;
    i.s_valid = u32::from(x.alloc.is_some())
        | u32::from(x.free.is_some()) << 1
        | u32::from(x.drop.is_some()) << 2
        | u32::from(x.lk.2) << 3
        | u32::from(x.adv.is_some()) << 4
        | u32::from(x.ask.is_some()) << 5;
    i
}

/// The lookup's outputs.
#[derive(Debug)]
struct LkOut {
    hit: bool,
    idx: u32,
    first: u32,
    last: u32,
    next: u32,
    bus: u64,
    key: u32,
    len: u32,
    asked: bool,
    cov: bool,
    cov_idx: u32,
    cov_next: u32,
    cov_asked: bool,
}

fn lk_out(o: &PortsOut) -> LkOut {
    LkOut {
        hit: o.m_valid & 1 != 0,
        idx: o.m_data[8] & 0xff,
        first: o.m_data[0],
        last: o.m_data[1],
        next: o.m_data[2],
        bus: u64::from(o.m_data[3]) | u64::from(o.m_data[4]) << 32,
        key: o.m_data[5],
        len: o.m_data[6],
        asked: o.m_valid & 2 != 0,
        cov: o.m_valid & 4 != 0,
        cov_idx: (o.m_data[8] >> 8) & 0xff,
        cov_next: o.m_data[7],
        cov_asked: o.m_valid & 8 != 0,
    }
}

/// `o`'s lookup outputs against the answer expected.
fn check_answer(o: &PortsOut, a: &Answer) -> Result<(), String> {
    let l = lk_out(o);
    match a.hit {
        None if l.hit => return Err(format!("lk_hit, no entry holds the PSN (idx {})", l.idx)),
        Some((i, e)) if !l.hit => {
            return Err(format!("no lk_hit, entry {i} holds the PSN: {e:x?}"));
        }
        Some((i, e)) => {
            let got = (l.idx, l.first, l.last, l.next, l.bus, l.key, l.len, l.asked);
            let want = (
                i as u32, e.first, e.last, e.next, e.bus, e.key, e.len, e.asked,
            );
            if got != want {
                return Err(format!(
                    "hit (idx, first, last, next, bus, key, len, asked) {got:x?}, \
                     expected {want:x?}"
                ));
            }
        }
        None => {}
    }
    match a.cov {
        None if l.cov => {
            return Err(format!(
                "lk_cov (idx {}), no unplaced READ covered",
                l.cov_idx
            ))
        }
        Some((i, e)) if !l.cov => {
            return Err(format!("no lk_cov, entry {i} is covered: {e:x?}"));
        }
        Some((i, e)) => {
            let got = (l.cov_idx, l.cov_next, l.cov_asked);
            let want = (i as u32, e.next, e.asked);
            if got != want {
                return Err(format!(
                    "cov (idx, next, asked) {got:x?}, expected {want:x?} ({e:x?})"
                ));
            }
        }
        None => {}
    }
    Ok(())
}

pub fn run(c: &RtCfg) -> Result<RtReport, Fail> {
    let mut m = Model::new(c.model, c.seed as u32).map_err(Fail)?;
    let cfg = *m.config();
    assert_eq!(
        cfg.kind,
        Kind::ReadTrack,
        "{} is not a read_track",
        cfg.name
    );
    let qn_w = cfg.param("QN_W");
    let nrd = cfg.param("NUM_RD") as usize;
    let iw = cfg.param("RD_IW");
    assert!((1..=8).contains(&qn_w) && (1..=8).contains(&iw) && nrd <= 1 << iw);
    let (qmask, imask) = ((1u32 << qn_w) - 1, (1u32 << iw) - 1);
    let mut rng = ChaCha8Rng::seed_from_u64(c.seed);
    let mut t = Table {
        e: vec![None; nrd],
        age: 0,
    };
    // the QPs that issue READs: up to three, the first the busiest
    let mut qps: Vec<Qp> = Vec::new();
    while qps.len() < 3.min(1 << qn_w) {
        let q = rng.gen_range(0..=qmask);
        if qps.iter().all(|p| p.qpn != q) {
            qps.push(Qp {
                qpn: q,
                psn: start_psn(&mut rng),
            });
        }
    }
    // READs freed lately (stale frees)
    let mut gone: Vec<(u32, u32)> = Vec::new();
    let mut r = RtReport::default();
    let mut expect: Option<Answer> = None;
    let mut lk = (0u32, 0u32, false);
    let resets = [0, c.cycles / 3, 2 * c.cycles / 3];
    for cycle in 0..c.cycles {
        let at = |s: String| Fail(format!("{} seed {} cycle {cycle}: {s}", c.model, c.seed));
        let mut x = Inputs {
            rst: resets.contains(&cycle),
            alloc_junk: (
                rng.gen(),
                rng.gen(),
                rng.gen(),
                rng.gen(),
                rng.gen(),
                rng.gen(),
            ),
            free_junk: (rng.gen(), rng.gen()),
            drop_junk: rng.gen(),
            upd_junk: (rng.gen(), rng.gen(), rng.gen(), rng.gen()),
            ..Inputs::default()
        };
        let free_now = t.e.iter().any(Option::is_none);

        // a QP loaded
        if rng.gen_bool(0.012) {
            let withs: Vec<u32> = t.live().map(|(_, e)| e.qpn).collect();
            let q = if !withs.is_empty() && rng.gen_bool(0.6) {
                withs[rng.gen_range(0..withs.len())]
            } else {
                rng.gen_range(0..=qmask)
            };
            x.drop = Some(q);
        }

        // a READ WQE starts
        if rng.gen_bool(0.3) {
            let k = if rng.gen_bool(0.5) {
                0
            } else {
                rng.gen_range(0..qps.len())
            };
            let qp = qps[k];
            if x.drop != Some(qp.qpn) {
                let gap = if rng.gen_bool(0.7) {
                    0
                } else {
                    rng.gen_range(1..=40)
                };
                let first = qp.psn.wrapping_add(gap) & PSN_MASK;
                // a QP's READs in flight stay within 2^23 PSNs
                let start = t
                    .of_qp(qp.qpn)
                    .min_by_key(|(_, e)| e.age)
                    .map_or(first, |(_, e)| e.first);
                let mut span = span_len(&mut rng);
                if psn_sub(first.wrapping_add(span), start) >= HALF - 1 {
                    span = rng.gen_range(0..=4);
                }
                if psn_sub(first.wrapping_add(span), start) < HALF - 1 {
                    let e = Entry {
                        qpn: qp.qpn,
                        first,
                        last: first.wrapping_add(span) & PSN_MASK,
                        next: first,
                        bus: rng.gen(),
                        key: rng.gen(),
                        len: rng.gen(),
                        done: false,
                        asked: false,
                        age: 0,
                    };
                    x.alloc = Some((qp.qpn, e));
                }
            }
        }

        // the completer retires a READ's WQE (or names a bogus one)
        if rng.gen_bool(0.25) {
            let live: Vec<Entry> = t.live().map(|(_, e)| *e).collect();
            let placed: Vec<Entry> = live.iter().copied().filter(|e| e.done).collect();
            let pick = |v: &[Entry], rng: &mut ChaCha8Rng| v[rng.gen_range(0..v.len())];
            x.free = Some(match rng.gen_range(0..100) {
                0..=54 if !placed.is_empty() => {
                    let e = pick(&placed, &mut rng);
                    (e.qpn, e.last)
                }
                55..=74 if !live.is_empty() => {
                    let e = pick(&live, &mut rng);
                    (e.qpn, e.last)
                }
                75..=84 if !live.is_empty() => {
                    let e = pick(&live, &mut rng);
                    let d = if rng.gen_bool(0.5) { 1 } else { PSN_MASK };
                    (e.qpn, (e.last + d) & PSN_MASK)
                }
                85..=89 if !live.is_empty() => {
                    let e = pick(&live, &mut rng);
                    ((e.qpn + rng.gen_range(1..=qmask.max(1))) & qmask, e.last)
                }
                90..=96 if !gone.is_empty() => gone[rng.gen_range(0..gone.len())],
                _ => (rng.gen_range(0..=qmask), rng.gen_range(0..=PSN_MASK)),
            });
        }

        // a response placed: mostly at the oldest unplaced READ of a QP
        if rng.gen_bool(0.5) {
            let qs: Vec<u32> = t
                .live()
                .filter(|(_, e)| !e.done)
                .map(|(_, e)| e.qpn)
                .collect();
            let roll = rng.gen_range(0..100);
            if !qs.is_empty() && roll < 88 {
                let q = qs[rng.gen_range(0..qs.len())];
                let (i, e) = if rng.gen_bool(0.85) {
                    t.oldest_unplaced(q).unwrap()
                } else {
                    let v: Vec<(usize, Entry)> = t.of_qp(q).map(|(i, e)| (i, *e)).collect();
                    v[rng.gen_range(0..v.len())]
                };
                let psn = match rng.gen_range(0..100) {
                    0..=79 => e.next,
                    80..=89 => e.next.wrapping_sub(1),
                    90..=94 => e.next.wrapping_add(1),
                    _ => rng.gen(),
                };
                x.adv = Some((i, psn & PSN_MASK));
            } else if roll < 94 {
                // a placed READ at its expected PSN (past its span)
                let v: Vec<(usize, Entry)> = t
                    .live()
                    .filter(|(_, e)| e.done)
                    .map(|(i, e)| (i, *e))
                    .collect();
                if !v.is_empty() {
                    let (i, e) = v[rng.gen_range(0..v.len())];
                    x.adv = Some((i, e.next));
                }
            } else {
                // an index that is free, or that no entry has
                let i = rng.gen_range(0..=imask as usize);
                if t.e.get(i).is_none_or(Option::is_none) {
                    x.adv = Some((i, rng.gen_range(0..=PSN_MASK)));
                }
            }
        }

        // a retransmission asked (not of the entry advanced now)
        if rng.gen_bool(0.2) {
            let v: Vec<(usize, Entry)> = t
                .live()
                .filter(|(i, e)| !e.done && x.adv.is_none_or(|a| a.0 != *i))
                .map(|(i, e)| (i, *e))
                .collect();
            if !v.is_empty() && rng.gen_bool(0.95) {
                let (i, e) = v[rng.gen_range(0..v.len())];
                let psn = match rng.gen_range(0..100) {
                    0..=74 => e.next,
                    75..=84 => e.next.wrapping_sub(1),
                    85..=94 => e.next.wrapping_add(rng.gen_range(1..4)),
                    _ => rng.gen(),
                };
                x.ask = Some((i, psn & PSN_MASK));
            } else {
                let i = rng.gen_range(0..=imask as usize);
                if t.e.get(i).is_none_or(Option::is_none) {
                    x.ask = Some((i, rng.gen_range(0..=PSN_MASK)));
                }
            }
        }

        // the responder's lookup, held now and then
        if cycle == 0 || rng.gen_bool(0.7) {
            let live: Vec<Entry> = t.live().map(|(_, e)| *e).collect();
            let nak = rng.gen_bool(0.35);
            lk = match rng.gen_range(0..100) {
                0..=79 if !live.is_empty() => {
                    let e = live[rng.gen_range(0..live.len())];
                    let youngest = t
                        .of_qp(e.qpn)
                        .max_by_key(|(_, e)| e.age)
                        .map(|(_, e)| e.last)
                        .unwrap();
                    let psn = match rng.gen_range(0..15) {
                        0 => e.next,
                        1 => e.next.wrapping_sub(1),
                        2 => e.next.wrapping_add(1),
                        3 => e.first,
                        4 => e.last,
                        5 => e.first.wrapping_sub(1),
                        6 => e.last.wrapping_add(1),
                        7 => e
                            .first
                            .wrapping_add(rng.gen_range(0..=psn_sub(e.last, e.first))),
                        8 => e.next.wrapping_add(HALF - 1),
                        9 => e.next.wrapping_add(HALF),
                        10 => e.next.wrapping_add(HALF + 1),
                        11 => youngest,
                        12 => youngest.wrapping_add(rng.gen_range(1..4)),
                        13 => e.next.wrapping_add(rng.gen_range(0..8)),
                        _ => e.next.wrapping_sub(rng.gen_range(0..8)),
                    };
                    (e.qpn, psn & PSN_MASK, nak)
                }
                0..=89 => {
                    let qp = qps[rng.gen_range(0..qps.len())];
                    let psn = qp.psn.wrapping_sub(rng.gen_range(0..16));
                    (qp.qpn, psn & PSN_MASK, nak)
                }
                _ => (rng.gen_range(0..=qmask), rng.gen_range(0..=PSN_MASK), nak),
            };
        }
        x.lk = lk;
        x.q_qpn = match (x.alloc, rng.gen_range(0..4)) {
            (Some((q, _)), 0 | 1) => q,
            (_, 0 | 1) => qps[rng.gen_range(0..qps.len())].qpn,
            (_, 2) => t
                .live()
                .next()
                .map_or(rng.gen_range(0..=qmask), |(_, e)| e.qpn),
            _ => rng.gen_range(0..=qmask),
        };
        x.q_max = rng.gen_range(0..=7);

        // the registered answer does not follow this cycle's lookup; q_busy
        // follows q_qpn now
        let i = pack(&x, qmask, imask);
        let busy = |q: u32| t.of_qp(q & qmask).next().is_some();
        if cycle % 4 == 1 {
            let mut alt = i.clone();
            alt.s_data[7] = rng.gen_range(0..=PSN_MASK);
            alt.s_data[13] = rng.gen_range(0..=qmask);
            alt.s_data[14] = rng.gen_range(0..=qmask);
            alt.s_valid ^= 1 << 3;
            let o = m.peek(&alt);
            if let Some(a) = &expect {
                check_answer(&o, a).map_err(|s| at(format!("(peek, other lookup) {s}")))?;
            }
            if (o.m_valid & 16 != 0) != busy(alt.s_data[14]) {
                return Err(at(format!("(peek) q_busy wrong for QP {}", alt.s_data[14])));
            }
        }
        let o = m.step(&i);
        if o.sim_flags != 0 {
            return Err(at(format!("the model stopped ({:#x})", o.sim_flags)));
        }
        let ready = o.m_valid & 32 != 0;
        if ready != free_now {
            return Err(at(format!("alloc_ready {ready}, table {:x?}", t.e)));
        }
        let q_full = o.m_valid & 64 != 0;
        let held = t.of_qp(x.q_qpn & qmask).count() as u32;
        if q_full != (held >= x.q_max) {
            return Err(at(format!(
                "q_full {q_full} for QP {} with {held} entries, q_max {}",
                x.q_qpn & qmask,
                x.q_max
            )));
        }
        let q_busy = o.m_valid & 16 != 0;
        if q_busy != busy(x.q_qpn) {
            return Err(at(format!(
                "q_busy {q_busy} for QP {}, table {:x?}",
                x.q_qpn & qmask,
                t.e
            )));
        }
        if let Some(a) = &expect {
            check_answer(&o, a).map_err(|s| at(format!("{s}; table now {:x?}", t.e)))?;
        }

        // this cycle's lookup, answered next cycle
        let (lq, lp, ln) = (x.lk.0 & qmask, x.lk.1 & PSN_MASK, x.lk.2);
        let a = t.lookup(lq, lp, ln).map_err(at)?;
        if let Some((_, e)) = a.hit {
            r.hits += 1;
            r.hits_at_last += usize::from(lp == e.last);
            r.hits_wrapped += usize::from(e.last < e.first);
            r.hits_asked += usize::from(e.asked);
        } else if t.of_qp(lq).any(|(_, e)| {
            lp == e.first.wrapping_sub(1) & PSN_MASK || lp == e.last.wrapping_add(1) & PSN_MASK
        }) {
            r.misses_outside += 1;
        }
        if let Some((ci, e)) = a.cov {
            r.covs += 1;
            r.cov_asked += usize::from(e.asked);
            let upto = if ln {
                lp.wrapping_sub(1) & PSN_MASK
            } else {
                lp
            };
            let cands: Vec<usize> = t
                .of_qp(lq)
                .filter(|(_, e)| !e.done && psn_sub(upto, e.next) < HALF)
                .map(|(i, _)| i)
                .collect();
            if cands.len() > 1 {
                r.cov_several += 1;
                r.cov_oldest_lower += usize::from(cands.iter().any(|&i| i > ci));
            }
            r.cov_far_edge += usize::from(psn_sub(lp, e.next) == if ln { HALF } else { HALF - 1 });
        }
        if ln && t.of_qp(lq).any(|(_, e)| !e.done && e.next == lp) {
            r.nak_at_next += 1;
        }
        expect = Some(a);
        r.full += usize::from(!free_now);
        if t.of_qp(x.q_qpn & qmask).next().is_some()
            && t.of_qp(x.q_qpn & qmask).all(|(_, e)| e.done)
        {
            r.busy_placed += 1;
        }

        // the edge
        let old = t.e.clone();
        if let Some((i, psn)) = x.adv {
            match old.get(i).copied().flatten() {
                Some(e) if !e.done && e.next == psn => {
                    let n = t.e[i].as_mut().unwrap();
                    n.next = (psn + 1) & PSN_MASK;
                    n.asked = false;
                    n.done = psn == e.last;
                    r.advs += 1;
                    r.placed += usize::from(n.done);
                    r.adv_of_asked += usize::from(e.asked);
                }
                _ => r.stale_advs += 1,
            }
        }
        if let Some((i, psn)) = x.ask {
            match old.get(i).copied().flatten() {
                Some(e) if e.next == psn => {
                    t.e[i].as_mut().unwrap().asked = true;
                    r.asks += 1;
                }
                _ => r.stale_asks += 1,
            }
        }
        let mut freed = 0;
        for (k, e) in old.iter().enumerate() {
            let Some(e) = e else { continue };
            if x.free
                .is_some_and(|(q, l)| e.qpn == q & qmask && e.last == l)
            {
                t.e[k] = None;
                freed += 1;
                if e.done {
                    r.frees += 1;
                } else {
                    r.flushes += 1;
                }
                gone.push((e.qpn, e.last));
                if gone.len() > 8 {
                    gone.remove(0);
                }
            }
        }
        if x.free.is_some() && freed == 0 {
            r.bogus_frees += 1;
        }
        if let Some(q) = x.drop {
            let q = q & qmask;
            let mine = old.iter().flatten().filter(|e| e.qpn == q).count();
            let others = old.iter().flatten().filter(|e| e.qpn != q).count();
            for (k, e) in old.iter().enumerate() {
                if e.is_some_and(|e| e.qpn == q) {
                    t.e[k] = None;
                }
            }
            if mine == 0 {
                r.empty_drops += 1;
            } else if others > 0 {
                r.drops += 1;
            }
            // the QP starts anew
            for qp in qps.iter_mut().filter(|p| p.qpn == q) {
                qp.psn = start_psn(&mut rng);
            }
        }
        if let Some((q, mut e)) = x.alloc {
            if let Some(k) = old.iter().position(Option::is_none) {
                e.age = t.age;
                t.age += 1;
                t.e[k] = Some(e);
                r.allocs += 1;
                r.wrapped += usize::from(e.last < e.first);
                r.huge += usize::from(psn_sub(e.last, e.first) >= 1 << 22);
                let qp = qps.iter_mut().find(|p| p.qpn == q).unwrap();
                qp.psn = (e.last + 1) & PSN_MASK;
            } else {
                r.alloc_refused += 1;
            }
        }
        if x.rst {
            t.e.iter_mut().for_each(|e| *e = None);
            r.resets += 1;
        }
        r.cycles += 1;
    }
    Ok(r)
}
