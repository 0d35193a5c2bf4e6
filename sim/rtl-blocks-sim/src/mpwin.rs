//! Bench of `mp_window`, the mp responder's receive window: seeded random
//! packets and stage enables, checked every cycle against a model written
//! from the transport's rules (DESIGN.md, the multipath section):
//!
//! - `dup`: the PSN is below the point (its offset's bit 23 set) or inside
//!   the window with its bitmap bit set; `beyond`: the offset is at or past
//!   the QP's window, MP_W >> wshift;
//! - `load` takes the QP's bitmap; `check` sets the packet's bit in it;
//!   `exec` finds how far the point moves: to the first bit still clear,
//!   MP_W if none;
//! - `check` also finds the highest PSN placed with the packet (`top`)
//!   and registers gap = min(MP_NAK_GAP, window / 2) from the window it
//!   sees; `exec` whether `top` is at least gap beyond the point, `top - gap`, the last PSN that can be lost, and
//!   whether `top` is a gap beyond the last NAK's top (`top >= span +
//!   2 gap`: the NAK or a resend was lost, another NAK may go);
//! - `fetch`: the new point (point + the move, 24-bit), the bitmap seen from
//!   it, a selective NAK when the point did not move, `top` is at least gap
//!   beyond it and no NAK's recovery span stands (`nak_sent`) or the
//!   last NAK's top is a gap behind; with it the
//!   other lost PSNs (bit k: point + 1 + k, not placed, at most `top - gap`)
//!   and the new span (`top - gap + 1`), else the span left after the move
//!   (zero once passed); whether the move passed the span (`recovered`);
//!   and the deferred completion due when the new point has passed its PSN.
//!
//! The packet's fields are held for a few cycles, as the responder holds
//! them from ST_CHECK to ST_RQ_FETCH, and changed at random; the stages
//! run in any order, as often as chance says. Bitmaps are mostly a run of
//! placed PSNs from the point with a few above, and offsets often fill
//! the first hole, so the point moves far, and sometimes over the whole
//! window.

use crate::{fail, from_words, mask, psn_sub, to_words, Fail, Kind, Model, PortsIn, PSN_MASK};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// One run (a `Kind::MpWindow` configuration).
pub type MpwCfg = crate::RunCfg;

/// What a run reached.
#[derive(Debug, Clone, Default)]
pub struct MpwReport {
    pub cycles: usize,
    pub dup: usize,
    pub beyond: usize,
    pub nak: usize,
    /// NAKs that named other lost PSNs too
    pub nak_more: usize,
    /// fetches that moved the point but not past the span
    pub in_span: usize,
    /// NAKs sent again within a span (the last one's top a gap behind)
    pub renak: usize,
    pub due: usize,
    /// fetches that moved the point by more than one
    pub far: usize,
    /// exec stages that found the whole window placed
    pub whole: usize,
}

/// The packet as the responder holds it.
#[derive(Debug, Clone, Copy, Default)]
struct Packet {
    load_bmp: u128,
    diff: u32,
    point: u32,
    wshift: u32,
    nak_sent: bool,
    pend_v: bool,
    pend_psn: u32,
    span: u32,
}

/// The window's registers.
#[derive(Debug, Clone, Copy, Default)]
struct State {
    bmp: u128,
    bmp_new: u128,
    adv: u32,
    point_new: u32,
    bmp_next: u128,
    nak: bool,
    due: bool,
    span: u32,
    top: u32,
    gap: u32,
    top_ge_gap: bool,
    cut: u32,
    renak: bool,
    lost: u128,
    span_next: u32,
    recovered: bool,
}

fn new_packet(rng: &mut ChaCha8Rng, w: u32) -> Packet {
    // (a hole at the point, a quarter of the time: the NAK's case)
    let run = if rng.gen_bool(0.25) {
        0
    } else {
        rng.gen_range(0..=w)
    };
    let mut bmp = mask(u128::MAX, run);
    for _ in 0..rng.gen_range(0..6) {
        bmp |= 1u128 << rng.gen_range(0..w);
    }
    let diff = match rng.gen_range(0..6) {
        0 => run.min(w - 1),
        1 => rng.gen_range(0..w),
        2 => rng.gen_range(w.saturating_sub(4)..w + 4),
        3 => PSN_MASK - rng.gen_range(0..8),
        4 => rng.gen_range(0..=PSN_MASK),
        _ => rng.gen_range(0..24),
    };
    let point = if rng.gen_bool(0.2) {
        PSN_MASK - rng.gen_range(0..w)
    } else {
        rng.gen_range(0..=PSN_MASK)
    };
    let pend_psn = if rng.gen_bool(0.8) {
        (point + rng.gen_range(0..w + 2)) & PSN_MASK
    } else {
        rng.gen_range(0..=PSN_MASK)
    };
    Packet {
        load_bmp: mask(bmp, w),
        diff,
        point,
        wshift: rng.gen_range(0..4),
        nak_sent: rng.gen_bool(0.3),
        pend_v: rng.gen_bool(0.6),
        pend_psn,
        span: rng.gen_range(0..=w),
    }
}

pub fn run(c: &MpwCfg) -> Result<MpwReport, Fail> {
    let mut m = Model::new(c.model, c.seed as u32).map_err(Fail)?;
    let cfg = *m.config();
    assert_eq!(cfg.kind, Kind::MpWindow, "{} is not an mp_window", cfg.name);
    let w = cfg.param("MP_W");
    let gap_param = cfg.param("MP_NAK_GAP");
    let mut rng = ChaCha8Rng::seed_from_u64(c.seed);
    let mut s = State::default();
    let mut p = new_packet(&mut rng, w);
    let mut r = MpwReport::default();
    for cycle in 0..c.cycles {
        if rng.gen_bool(0.15) {
            p = new_packet(&mut rng, w);
        }
        let (load, check, exec, fetch) = (
            rng.gen_bool(0.4),
            rng.gen_bool(0.4),
            rng.gen_bool(0.4),
            rng.gen_bool(0.4),
        );
        let mut i = PortsIn {
            s_valid: u32::from(load)
                | u32::from(check) << 1
                | u32::from(exec) << 2
                | u32::from(fetch) << 3
                | u32::from(p.nak_sent) << 4
                | u32::from(p.pend_v) << 5
                | p.wshift << 8,
            ..PortsIn::default()
        };
        to_words(p.load_bmp, &mut i.s_data[..4]);
        i.s_data[4] = p.diff;
        i.s_data[5] = p.point;
        i.s_data[6] = p.pend_psn;
        i.s_data[7] = p.span;
        let o = m.step(&i);
        let at = || format!("{} seed {} cycle {cycle}", c.model, c.seed);
        if o.sim_flags != 0 {
            fail!("{}: the model stopped ({:#x})", at(), o.sim_flags);
        }

        // the outputs before the edge
        let win = w >> p.wshift;
        let dup = p.diff & 0x80_0000 != 0 || (p.diff < w && s.bmp >> p.diff & 1 == 1);
        let beyond = p.diff >= win;
        let got = |b: u32| o.m_valid >> b & 1 == 1;
        if got(0) != dup || got(1) != beyond {
            fail!(
                "{}: dup {} beyond {}, want {dup} {beyond} (offset {:#x}, bitmap {:#x}, window {win})",
                at(),
                got(0),
                got(1),
                p.diff,
                s.bmp
            );
        }
        let bmp_next = mask(from_words(&o.m_data[..4]), w);
        if o.m_data[5] != s.adv
            || o.m_data[4] != s.point_new
            || bmp_next != s.bmp_next
            || got(2) != s.nak
            || got(3) != s.due
        {
            fail!(
                "{}: adv {} point {:#x} bitmap {bmp_next:#x} nak {} due {}, want {} {:#x} {:#x} {} {}",
                at(),
                o.m_data[5],
                o.m_data[4],
                got(2),
                got(3),
                s.adv,
                s.point_new,
                s.bmp_next,
                s.nak,
                s.due
            );
        }
        let lost = mask(from_words(&o.m_data[6..10]), w - 1);
        if lost != s.lost || o.m_data[10] != s.span_next || got(4) != s.recovered {
            fail!(
                "{}: lost {lost:#x} span {} recovered {}, want {:#x} {} {}",
                at(),
                o.m_data[10],
                got(4),
                s.lost,
                s.span_next,
                s.recovered
            );
        }
        r.dup += usize::from(dup);
        r.beyond += usize::from(beyond);

        // the edge, every stage from the registers before it
        let old = s;
        if load {
            s.bmp = p.load_bmp;
            s.span = p.span;
        }
        if check {
            s.bmp_new = old.bmp | 1u128 << (p.diff & (w - 1));
            let off = p.diff & (w - 1);
            s.top = if old.bmp == 0 {
                off
            } else {
                (127 - old.bmp.leading_zeros()).max(off)
            };
            s.gap = gap_param.min(win / 2);
        }
        if exec {
            let free = mask(!old.bmp_new, w);
            s.adv = if free == 0 { w } else { free.trailing_zeros() };
            r.whole += usize::from(free == 0);
            s.top_ge_gap = old.top >= old.gap;
            s.cut = old.top.wrapping_sub(old.gap) & (w - 1);
            s.renak = old.top >= old.span + 2 * old.gap;
        }
        if fetch {
            s.point_new = (p.point + old.adv) & PSN_MASK;
            s.bmp_next = if old.adv >= w {
                0
            } else {
                old.bmp_new >> old.adv
            };
            s.nak = old.adv == 0 && old.top_ge_gap && (!p.nak_sent || old.renak);
            r.renak += usize::from(s.nak && p.nak_sent);
            s.lost = (0..w - 1)
                .filter(|&k| old.bmp_new >> (k + 1) & 1 == 0 && k < old.cut)
                .fold(0u128, |a, k| a | 1u128 << k);
            s.span_next = if s.nak {
                old.cut + 1
            } else {
                old.span.saturating_sub(old.adv)
            };
            s.recovered = old.adv >= old.span;
            r.nak_more += usize::from(s.nak && s.lost != 0);
            r.in_span += usize::from(old.adv != 0 && old.adv < old.span);
            s.due = p.pend_v && psn_sub(p.pend_psn, p.point) < old.adv;
            r.nak += usize::from(s.nak);
            r.due += usize::from(s.due);
            r.far += usize::from(old.adv > 1);
        }
        r.cycles += 1;
    }
    Ok(r)
}
