//! Bench of `axis_async_fifo`, a stream from one clock to another. Time
//! runs in picoseconds with two clocks of their own periods and phases; the
//! model steps at every rising edge (both clocks at once when their edges
//! coincide: the edge mask of `PortsIn::pad[0]`). The write side has a
//! seeded random source that holds each beat until it is taken (sequence
//! numbers with random upper bits), the read side a seeded random sink;
//! both change their inputs only at their own clock's edges, as logic of
//! that domain would. Checked at every edge:
//!
//! - every beat comes out exactly once, in order, with its data; nothing
//!   comes out that was not written;
//! - the memory is never overrun: write n (counted from the last reset) is
//!   taken only once beat n - 2^ADDR_W has left the memory for the output
//!   register, so at most 2^ADDR_W + 1 beats (the memory and the output
//!   register) are inside;
//! - the pointers cross through two flops: a beat is loaded into the output
//!   register no sooner than the third read-clock edge after the write
//!   edge (so it is seen with at least three read-clock edges strictly
//!   between its write and the first sample showing it), and the space a
//!   load frees is used no sooner than the third write-clock edge after it
//!   (at least two write-clock edges strictly between the load and the
//!   write that reuses the entry);
//! - s_ready, m_valid and m_data are registers: changing s_valid, s_data or
//!   m_ready before an edge changes none of them (peeks); a beat offered
//!   and not taken stays;
//! - resets: a reset source driving both resets (held at least three edges
//!   of the slower clock, one fewer than the block's header asks) or only one side's
//!   (the other side follows through the crossing; held longer, see
//!   [`AfifoCfg::hold`]), each side seeing it at its own edges. Beats
//!   written before it may still come out, in order, until it is over;
//!   from the first edge of a side it drives after its release, the FIFO
//!   is empty: no beat written before the reset ever comes out, and a
//!   fresh stream passes intact.
//!
//! The report gives the rate (beats per edge of the slower clock from the
//! first beat out to the last) for the full-rate test.

use crate::{fail, from_words, mask, to_words, Fail, Kind, Model, PortsIn, PortsOut};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::collections::VecDeque;

/// The two clocks: periods and the time of each one's first rising edge,
/// in picoseconds (edges at phase + k * period).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Clocks {
    pub name: &'static str,
    pub s_period: u64,
    pub s_phase: u64,
    pub m_period: u64,
    pub m_phase: u64,
}

impl Clocks {
    /// The slower clock's period.
    pub fn slow(&self) -> u64 {
        self.s_period.max(self.m_period)
    }
}

/// The clock pairs the tests run: the card's (PCIe 125 MHz into the core's
/// 62.5 MHz, and back), a ratio with no common edges for long, equal
/// periods with a phase offset and with every edge coinciding.
pub const CLOCKS: [Clocks; 5] = [
    Clocks {
        name: "s 8 ns, m 16 ns",
        s_period: 8000,
        s_phase: 0,
        m_period: 16000,
        m_phase: 0,
    },
    Clocks {
        name: "s 16 ns, m 8 ns (offset 1 ns)",
        s_period: 16000,
        s_phase: 1000,
        m_period: 8000,
        m_phase: 0,
    },
    Clocks {
        name: "s 7 ns, m 13 ns",
        s_period: 7000,
        s_phase: 0,
        m_period: 13000,
        m_phase: 3000,
    },
    Clocks {
        name: "s 10 ns, m 10 ns (offset 2.5 ns)",
        s_period: 10000,
        s_phase: 0,
        m_period: 10000,
        m_phase: 2500,
    },
    Clocks {
        name: "s 10 ns, m 10 ns (same edges)",
        s_period: 10000,
        s_phase: 0,
        m_period: 10000,
        m_phase: 0,
    },
];

/// Which resets the reset source drives (the other side, if any, is
/// reset through the FIFO's own crossing).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ResetSide {
    /// s_rst and m_rst, each as its own domain sees the source
    Both,
    /// s_rst only
    Write,
    /// m_rst only
    Read,
}

/// One run.
#[derive(Debug, Clone)]
pub struct AfifoCfg {
    /// configuration name (a `Kind::AsyncFifo` one)
    pub model: &'static str,
    pub seed: u64,
    pub clocks: Clocks,
    /// beats the source sends (some are lost to resets)
    pub beats: usize,
    /// chance per write-clock edge that an idle source offers a new beat
    pub p_valid: f64,
    /// chance per read-clock edge that the sink is ready
    pub p_ready: f64,
    /// the source always has a beat (p_valid ignored): the full-rate check
    pub saturate: bool,
    /// resets in the middle of the stream (besides the first)
    pub resets: usize,
    pub reset_side: ResetSide,
    /// how long each reset is held: a number of slower-clock periods in
    /// this range (both ends included). Both resets need three (the
    /// block's contract); one side's alone needs its other side to learn of
    /// it through two flops and clear at its third edge before the side
    /// reset directly comes out, three periods of the other clock and one
    /// of its own: four (with three, 7 ns writes and 13 ns reads, the read
    /// side still shows an old beat when the write side comes out)
    pub hold: (u64, u64),
}

impl AfifoCfg {
    pub fn new(model: &'static str, seed: u64, clocks: Clocks) -> Self {
        Self {
            model,
            seed,
            clocks,
            beats: 4000,
            p_valid: 0.7,
            p_ready: 0.7,
            saturate: false,
            resets: 0,
            reset_side: ResetSide::Both,
            hold: (3, 6),
        }
    }
}

/// What a run measured.
#[derive(Debug, Clone, Default)]
pub struct AfifoReport {
    /// beats delivered
    pub beats: usize,
    /// beats taken in and then discarded by a reset
    pub lost: usize,
    /// beats delivered while a reset was held
    pub out_in_reset: usize,
    /// resets in the middle of the stream
    pub resets: usize,
    /// resets that began with beats inside
    pub resets_not_empty: usize,
    /// most beats inside at once (written, not delivered)
    pub max_inside: usize,
    /// fewest read-clock edges strictly between a write and the first
    /// sample showing its beat
    pub min_read_edges: u64,
    /// fewest write-clock edges strictly between a load and the write that
    /// reused its entry
    pub min_write_edges: u64,
    /// beats out of the last epoch (since the last reset), from its first
    /// beat out to its last, and the slower clock's edges in that time
    /// (both ends included)
    pub rate_beats: u64,
    pub rate_slow_edges: u64,
}

/// Edges of a clock (period, phase) strictly between times a and b.
fn edges_between(a: u64, b: u64, period: u64, phase: u64) -> u64 {
    // edges at or before x
    let upto = |x: u64| {
        if x < phase {
            0
        } else {
            (x - phase) / period + 1
        }
    };
    if b <= a + 1 {
        return 0;
    }
    upto(b - 1) - upto(a)
}

/// A beat taken in.
#[derive(Debug, Clone, Copy)]
struct Beat {
    seq: u64,
    data: u128,
    /// its write edge
    written: u64,
}

/// The beats since a reset: what is inside, and when each was loaded into
/// the output register (first seen there).
#[derive(Debug, Default)]
struct Epoch {
    inside: VecDeque<Beat>,
    loaded: Vec<u64>,
    writes: usize,
    delivered: usize,
    first_out: Option<u64>,
    last_out: Option<u64>,
}

/// A reset: the source high from when it began to `until` (exclusive),
/// driving `side`.
struct Held {
    until: u64,
    side: ResetSide,
}

/// Runs one configuration; every check above, at every edge.
pub fn run(cfg: &AfifoCfg) -> Result<AfifoReport, Fail> {
    let mut m = Model::new(cfg.model, cfg.seed as u32).map_err(Fail)?;
    let c = *m.config();
    assert_eq!(
        c.kind,
        Kind::AsyncFifo,
        "{} is not an axis_async_fifo",
        c.name
    );
    let width = c.param("WIDTH");
    let depth = 1usize << c.param("ADDR_W");
    let k = cfg.clocks;
    assert!(k.s_phase < k.s_period && k.m_phase < k.m_period);
    let slow = k.slow();
    let mut rng = ChaCha8Rng::seed_from_u64(cfg.seed);
    let at = |t: u64| format!("{} seed {} ({}) at {} ps", cfg.model, cfg.seed, k.name, t);

    let mut rep = AfifoReport {
        min_read_edges: u64::MAX,
        min_write_edges: u64::MAX,
        ..Default::default()
    };
    let mut ep = Epoch::default();
    // the first reset, from time 0: both sides, four slow periods
    let mut held = Some(Held {
        until: 4 * slow,
        side: ResetSide::Both,
    });
    // the next reset comes once the stream since the last has taken this
    // many beats
    let mut reset_after = rng.gen_range(20..200usize);

    let mut i = PortsIn::default();
    let mut pending: Option<Beat> = None;
    let mut seq = 0u64;
    let mut sent = 0usize;
    let mut ready = false;
    // the last sample's m_valid and whether it left at that edge
    let mut prev_out: Option<(bool, bool)> = None;
    let mut next_s = k.s_phase;
    let mut next_m = k.m_phase;
    let mut last_m_edge: Option<u64> = None;
    let mut last_progress = 0u64;
    let mut drained_at: Option<u64> = None;
    loop {
        let t = next_s.min(next_m);
        let s_edge = next_s == t;
        let m_edge = next_m == t;

        // The reset: over? Once released, at the first edge of a side it
        // drives, the FIFO is empty: the read side went into reset (through
        // its own or through the crossing) before the released side came
        // out, and the write side stopped taking beats.
        if let Some(h) = &held {
            let released_edge = match h.side {
                ResetSide::Both => true,
                ResetSide::Write => s_edge,
                ResetSide::Read => m_edge,
            };
            if t >= h.until && released_edge {
                // the FIFO is to be empty from here: what was inside is lost
                rep.lost += ep.inside.len();
                ep = Epoch::default();
                held = None;
                // a reset ends any wait on the output
                prev_out = None;
            }
        }
        // a new one, in the middle of the stream
        if held.is_none() && rep.resets < cfg.resets && ep.writes >= reset_after && sent < cfg.beats
        {
            let hold = rng.gen_range(cfg.hold.0..=cfg.hold.1) * slow;
            held = Some(Held {
                until: t + hold,
                side: cfg.reset_side,
            });
            rep.resets += 1;
            if !ep.inside.is_empty() {
                rep.resets_not_empty += 1;
            }
            reset_after = rng.gen_range(20..200usize);
        }
        // the source; old beats may come out until the reset is over
        let resetting = held.is_some();
        let (s_rst, m_rst) = match &held {
            Some(h) if t < h.until => match h.side {
                ResetSide::Both => (true, true),
                ResetSide::Write => (true, false),
                ResetSide::Read => (false, true),
            },
            _ => (false, false),
        };

        // each side's inputs change only at its own edges
        if s_edge {
            i.rst = (i.rst & !1) | u8::from(s_rst);
            if pending.is_none() && sent < cfg.beats && (cfg.saturate || rng.gen_bool(cfg.p_valid))
            {
                let data = mask(
                    (rng.gen::<u128>() << 24) | u128::from(seq & 0xff_ffff),
                    width,
                );
                pending = Some(Beat {
                    seq,
                    data,
                    written: 0,
                });
                seq += 1;
            }
            // a beat not offered carries junk, which must not come out
            let data = pending.map_or_else(|| mask(rng.gen::<u128>(), width), |b| b.data);
            to_words(data, &mut i.s_data);
            i.s_valid = u32::from(pending.is_some());
        }
        if m_edge {
            i.rst = (i.rst & !2) | u8::from(m_rst) << 1;
            // once everything is sent, the sink comes back often enough
            let p = if sent == cfg.beats {
                cfg.p_ready.max(0.5)
            } else {
                cfg.p_ready
            };
            ready = rng.gen_bool(p);
            i.m_ready = u8::from(ready);
        }
        i.pad[0] = u8::from(s_edge) | u8::from(m_edge) << 1;

        let o = m.peek(&i);
        check_registered(&mut m, &i, &o, width, &mut rng)
            .map_err(|e| Fail(format!("{}: {e}", at(t))))?;
        let o2 = m.step(&i);
        if o2 != o {
            fail!("{}: step and peek disagree", at(t));
        }
        if o.sim_flags & 2 != 0 {
            fail!("{}: the model reported an error", at(t));
        }
        let m_valid = o.m_valid & 1 != 0;
        let m_data = from_words(&o.m_data);

        // the read side's output
        if let Some((pv, taken)) = prev_out {
            if pv && !taken && !m_valid && !resetting {
                fail!(
                    "{}: the beat offered and not taken (beat {} since the reset) was withdrawn",
                    at(t),
                    ep.delivered
                );
            }
        }
        if m_valid {
            let Some(head) = ep.inside.front().copied() else {
                fail!(
                    "{}: a beat {m_data:#x} out with none inside ({})",
                    at(t),
                    if ep.writes == 0 {
                        "a stale beat: nothing written since the reset"
                    } else {
                        "a duplicate"
                    }
                );
            };
            if head.data != m_data {
                fail!(
                    "{}: beat {} since the reset (seq {}) out as {m_data:#x}, expected {:#x} \
                     (lost, duplicated, reordered or overwritten)",
                    at(t),
                    ep.delivered,
                    head.seq,
                    head.data
                );
            }
            if ep.loaded.len() == ep.delivered {
                // first seen: loaded at the last read-clock edge
                let Some(l) = last_m_edge else {
                    fail!("{}: a beat out before any read-clock edge", at(t));
                };
                let n = edges_between(head.written, t, k.m_period, k.m_phase);
                rep.min_read_edges = rep.min_read_edges.min(n);
                if n < 3 {
                    fail!(
                        "{}: beat {} since the reset (written at {} ps) is out with only {n} \
                         read-clock edges since its write: its pointer must cross two flops \
                         before the output register loads it",
                        at(t),
                        ep.delivered,
                        head.written
                    );
                }
                ep.loaded.push(l);
            }
        }

        // the write side
        if s_edge && s_rst && o.s_ready != 0 {
            fail!("{}: s_ready with s_rst high", at(t));
        }
        if s_edge && o.s_ready != 0 {
            if let Some(mut b) = pending.take() {
                let n = ep.writes;
                if n >= depth {
                    match ep.loaded.get(n - depth) {
                        Some(&l) => {
                            let e = edges_between(l, t, k.s_period, k.s_phase);
                            rep.min_write_edges = rep.min_write_edges.min(e);
                            if e < 2 {
                                fail!(
                                    "{}: write {n} since the reset reuses the entry of beat {} \
                                     loaded at {l} ps, only {e} write-clock edges ago: the read \
                                     pointer must cross two flops first",
                                    at(t),
                                    n - depth
                                );
                            }
                        }
                        None => fail!(
                            "{}: write {n} since the reset taken while beat {} is still in the \
                             memory ({} beats inside a FIFO of {depth} and its output register): \
                             an unread entry is overwritten",
                            at(t),
                            n - depth,
                            ep.inside.len()
                        ),
                    }
                }
                b.written = t;
                ep.inside.push_back(b);
                ep.writes += 1;
                sent += 1;
                last_progress = t;
                rep.max_inside = rep.max_inside.max(ep.inside.len());
                if ep.inside.len() > depth + 1 {
                    fail!(
                        "{}: {} beats inside a FIFO of {depth} and its output register",
                        at(t),
                        ep.inside.len()
                    );
                }
            }
        }

        // the read side's handshake
        let taken = m_edge && m_valid && ready;
        if taken {
            ep.inside.pop_front();
            ep.delivered += 1;
            rep.beats += 1;
            if resetting {
                rep.out_in_reset += 1;
            }
            ep.first_out.get_or_insert(t);
            ep.last_out = Some(t);
            last_progress = t;
        }
        if m_edge {
            prev_out = Some((m_valid, taken));
            last_m_edge = Some(t);
        }

        // the end: everything sent is out (or lost), and nothing more comes
        if sent == cfg.beats && ep.inside.is_empty() && held.is_none() && pending.is_none() {
            let d = *drained_at.get_or_insert(t);
            if t >= d + 20 * slow {
                break;
            }
        }
        if t > last_progress + 2000 * slow {
            fail!(
                "{}: stuck: {sent} beats sent, {} delivered, {} inside",
                at(t),
                rep.beats,
                ep.inside.len()
            );
        }
        if s_edge {
            next_s += k.s_period;
        }
        if m_edge {
            next_m += k.m_period;
        }
    }
    if let (Some(a), Some(b)) = (ep.first_out, ep.last_out) {
        rep.rate_beats = ep.delivered as u64;
        let (p, ph) = if k.s_period >= k.m_period {
            (k.s_period, k.s_phase)
        } else {
            (k.m_period, k.m_phase)
        };
        rep.rate_slow_edges = edges_between(a.saturating_sub(1), b + 1, p, ph);
    }
    Ok(rep)
}

/// Peeks with s_valid, s_data and m_ready changed: no output may move.
fn check_registered(
    m: &mut Model,
    i: &PortsIn,
    o: &PortsOut,
    width: u32,
    rng: &mut ChaCha8Rng,
) -> Result<(), Fail> {
    let mut a = i.clone();
    a.m_ready ^= 1;
    let mut b = i.clone();
    b.s_valid ^= 1;
    let mut c = i.clone();
    to_words(mask(rng.gen::<u128>(), width), &mut c.s_data);
    for (what, f) in [("m_ready", a), ("s_valid", b), ("s_data", c)] {
        let p = m.peek(&f);
        if p.s_ready != o.s_ready || p.m_valid != o.m_valid || p.m_data != o.m_data {
            fail!(
                "changing {what} before the edge changed an output (s_ready {}->{}, m_valid \
                 {}->{}): the outputs must be registers",
                o.s_ready,
                p.s_ready,
                o.m_valid,
                p.m_valid
            );
        }
    }
    Ok(())
}
