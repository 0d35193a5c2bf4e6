//! Benches of the two blocks of path health, each against a reference
//! written from the rules in their headers:
//!
//! - `path_pick`: every input (all 2^6 bases, spray logs 0..=6, all 256
//!   avoid masks): the path is base + k within the 2^spray_log paths for
//!   the smallest k whose path (mod 8) is not avoided, or the base itself
//!   when every path is avoided or the QP does not spray;
//! - `path_health`: seeded random records and events (blames, timed
//!   packets settled, probes), every output field against the reference:
//!   loss counts per epoch, the take-out at the threshold and its cap of
//!   half the active paths, the hold, the failed probes, the comeback.
//!
//! Both blocks are combinational: each case is one peek.

use crate::{fail, Fail, Kind, Model, PortsIn};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// The active paths among the eight health bits.
fn active(spray_log: u32) -> u32 {
    match spray_log {
        0 => 0x01,
        1 => 0x03,
        2 => 0x0F,
        _ => 0xFF,
    }
}

/// The reference path pick.
pub fn pick(base: u32, spray_log: u32, avoid: u32) -> u32 {
    let n = 1u32 << spray_log.min(6);
    let raw = base & (n - 1);
    if spray_log == 0 {
        return raw;
    }
    let blocked = avoid | !active(spray_log);
    (0..8)
        .map(|k| (raw + k) & (n - 1))
        .find(|&p| blocked >> (p & 7) & 1 == 0)
        .unwrap_or(raw)
}

/// What a `path_pick` run checked.
#[derive(Debug, Clone, Default)]
pub struct PickReport {
    pub cases: usize,
    /// of which the path was passed on (not the base's own)
    pub moved: usize,
}

/// Every input of `path_pick`.
pub fn run_pick(model: &'static str) -> Result<PickReport, Fail> {
    let mut m = Model::new(model, 1).map_err(Fail)?;
    assert_eq!(
        m.config().kind,
        Kind::PathPick,
        "{model} is not a path_pick"
    );
    let mut r = PickReport::default();
    for spray_log in 0..=6u32 {
        for avoid in 0..256u32 {
            for base in 0..64u32 {
                let mut i = PortsIn::default();
                i.s_data[0] = base | spray_log << 8 | avoid << 16;
                let o = m.peek(&i);
                if o.sim_flags != 0 {
                    fail!("{model}: the model stopped ({:#x})", o.sim_flags);
                }
                let want = pick(base, spray_log, avoid);
                let got = o.m_data[0] & 63;
                if got != want {
                    fail!(
                        "{model}: base {base}, spray_log {spray_log}, avoid {avoid:#04x}: path {got}, want {want}"
                    );
                }
                r.cases += 1;
                r.moved += usize::from(want != base & ((1 << spray_log) - 1));
            }
        }
    }
    Ok(r)
}

/// One QP's health record and an event, as `path_health` takes them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Health {
    down: u32,
    loss: u32,
    lepo: u32,
    hold: u32,
    back: u32,
}

#[derive(Debug, Clone, Copy, Default)]
struct Ev {
    /// path_cfg.thresh (0: path health off)
    thresh: u32,
    spray_log: u32,
    epoch: u32,
    blame: bool,
    blame_path: u32,
    timed_ok: bool,
    timed_fail: bool,
    timed_probe: bool,
    timed_path: u32,
}

/// The reference: (the record after, taken out, brought back).
fn health(h: Health, e: Ev) -> (Health, bool, bool) {
    let act = active(e.spray_log);
    let cap = match e.spray_log {
        0 => 0,
        1 => 1,
        2 => 2,
        _ => 4,
    };
    let mut n = h;
    let (mut out, mut back) = (false, false);
    if e.blame && act >> e.blame_path & 1 == 1 && h.down >> e.blame_path & 1 == 0 {
        let loss = if h.lepo == e.epoch & 3 { h.loss } else { 0 };
        let sh = 2 * e.blame_path;
        let count = ((loss >> sh & 3) + 1).min(3);
        n.lepo = e.epoch & 3;
        if e.thresh != 0 && count >= e.thresh && (h.down & act).count_ones() < cap {
            n.down |= 1 << e.blame_path;
            n.loss = loss & !(3 << sh);
            n.hold = e.epoch;
            n.back = 0;
            out = true;
        } else {
            n.loss = loss & !(3 << sh) | count << sh;
        }
    }
    if e.timed_ok {
        if e.timed_probe && h.down >> e.timed_path & 1 == 1 {
            n.down &= !(1 << e.timed_path);
            n.loss &= !(3 << (2 * e.timed_path));
            n.back = 0;
            back = true;
        }
    } else if e.timed_fail && e.timed_probe {
        n.hold = e.epoch;
        n.back = (h.back + 1).min(3);
    }
    (n, out, back)
}

/// What a `path_health` run checked.
#[derive(Debug, Clone, Default)]
pub struct HealthReport {
    pub cases: usize,
    pub takeouts: usize,
    /// take-outs refused: half the active paths already out
    pub capped: usize,
    pub comebacks: usize,
    /// probes named lost (the wait doubles)
    pub failed_probes: usize,
    /// blames in a new epoch (the counts started over)
    pub new_epoch: usize,
}

/// `cases` random records and events.
pub fn run_health(model: &'static str, seed: u64, cases: usize) -> Result<HealthReport, Fail> {
    let mut m = Model::new(model, seed as u32).map_err(Fail)?;
    let c = *m.config();
    assert_eq!(c.kind, Kind::PathHealth, "{model} is not a path_health");
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut r = HealthReport::default();
    for _ in 0..cases {
        let h = Health {
            // mostly few paths out, so that the cap is reached and not
            down: if rng.gen_bool(0.5) {
                0
            } else {
                rng.gen::<u32>() & rng.gen::<u32>() & 0xFF
            },
            loss: rng.gen::<u32>() & 0xFFFF,
            lepo: rng.gen_range(0..4),
            hold: rng.gen_range(0..16),
            back: rng.gen_range(0..4),
        };
        let timed = rng.gen_range(0..3);
        let e = Ev {
            thresh: rng.gen_range(0..4),
            spray_log: rng.gen_range(0..8),
            epoch: if rng.gen_bool(0.6) {
                h.lepo | rng.gen_range(0..4) << 2
            } else {
                rng.gen_range(0..16)
            },
            blame: rng.gen_bool(0.7),
            blame_path: rng.gen_range(0..8),
            timed_ok: timed == 1,
            timed_fail: timed == 2,
            timed_probe: rng.gen_bool(0.5),
            timed_path: rng.gen_range(0..8),
        };
        let mut i = PortsIn::default();
        i.s_data[0] = h.down
            | h.lepo << 8
            | h.hold << 10
            | e.spray_log << 14
            | e.epoch << 17
            | u32::from(e.blame) << 21
            | e.blame_path << 22
            | u32::from(e.timed_ok) << 25
            | u32::from(e.timed_fail) << 26
            | u32::from(e.timed_probe) << 27
            | e.timed_path << 28;
        i.s_data[1] = h.loss | h.back << 16 | e.thresh << 18;
        let o = m.peek(&i);
        if o.sim_flags != 0 {
            fail!("{model}: the model stopped ({:#x})", o.sim_flags);
        }
        let got = Health {
            down: o.m_data[0] & 0xFF,
            lepo: o.m_data[0] >> 8 & 3,
            hold: o.m_data[0] >> 10 & 15,
            back: o.m_data[0] >> 14 & 3,
            loss: o.m_data[1] & 0xFFFF,
        };
        let (got_out, got_back) = (o.m_data[0] >> 16 & 1 == 1, o.m_data[0] >> 17 & 1 == 1);
        let (want, out, back) = health(h, e);
        if (got, got_out, got_back) != (want, out, back) {
            fail!(
                "{model} seed {seed}: record {h:x?}, event {e:?}:\n  got  {got:x?} out {got_out} back {got_back}\n  want {want:x?} out {out} back {back}"
            );
        }
        r.cases += 1;
        r.takeouts += usize::from(out);
        r.comebacks += usize::from(back);
        r.failed_probes += usize::from(!e.timed_ok && e.timed_fail && e.timed_probe);
        let act = active(e.spray_log);
        let eligible = e.blame && act >> e.blame_path & 1 == 1 && h.down >> e.blame_path & 1 == 0;
        if eligible && h.lepo != e.epoch & 3 {
            r.new_epoch += 1;
        }
        if eligible && !out && want.down == h.down && {
            let loss = if h.lepo == e.epoch & 3 { h.loss } else { 0 };
            e.thresh != 0 && ((loss >> (2 * e.blame_path) & 3) + 1).min(3) >= e.thresh
        } {
            r.capped += 1;
        }
    }
    Ok(r)
}
