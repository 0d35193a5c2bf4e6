//! Bench of `axis_register`: a seeded random source that holds each beat
//! until it is taken, a seeded random sink, and per-cycle checks:
//!
//! - every beat out is the oldest beat in and not yet out (no loss, no
//!   duplicate, no reordering), and at the end every beat came out;
//! - at most two beats inside (the output and the skid register);
//! - a beat offered and not taken stays, unchanged, the next cycle;
//! - every output (s_ready, m_valid, m_data) is a register: changing any
//!   input before the edge changes none of them (peeks);
//! - full rate: with a source that always has a beat, m_valid never falls
//!   once the first beat is out (so every cycle the sink is ready, a beat
//!   leaves).

use crate::{fail, from_words, mask, to_words, Fail, Kind, Model, PortsIn, PortsOut};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::collections::VecDeque;

/// One run.
#[derive(Debug, Clone)]
pub struct SkidCfg {
    /// configuration name (a `Kind::Register` one)
    pub model: &'static str,
    pub seed: u64,
    /// beats to send
    pub beats: usize,
    /// chance per cycle that an idle source offers a new beat
    pub p_valid: f64,
    /// chance per cycle that the sink is ready
    pub p_ready: f64,
    /// the source always has a beat (p_valid ignored): the full-rate check
    pub saturate: bool,
}

impl SkidCfg {
    pub fn new(model: &'static str, seed: u64) -> Self {
        Self {
            model,
            seed,
            beats: 3000,
            p_valid: 0.7,
            p_ready: 0.7,
            saturate: false,
        }
    }
}

/// What a run measured.
#[derive(Debug, Clone, Default)]
pub struct SkidReport {
    pub cycles: u64,
    pub beats: usize,
    /// cycles in which the sink was ready and a beat left
    pub out_cycles: u64,
    /// cycles in which the sink was ready and no beat was offered
    pub bubbles: u64,
    /// most beats inside at once
    pub max_inside: usize,
}

fn input(data: u128, valid: bool, ready: bool, rst: bool) -> PortsIn {
    let mut i = PortsIn {
        s_valid: u32::from(valid),
        m_ready: u8::from(ready),
        rst: u8::from(rst),
        ..Default::default()
    };
    to_words(data, &mut i.s_data);
    i
}

/// Peeks with each input changed: no output may move.
fn check_registered(
    m: &mut Model,
    i: &PortsIn,
    o: &PortsOut,
    width: u32,
    rng: &mut ChaCha8Rng,
    cyc: u64,
) -> Result<(), Fail> {
    let mut flips = Vec::new();
    let mut a = i.clone();
    a.m_ready ^= 1;
    flips.push(("m_ready", a));
    let mut b = i.clone();
    b.s_valid ^= 1;
    flips.push(("s_valid", b));
    let mut c = i.clone();
    to_words(mask(rng.gen::<u128>(), width), &mut c.s_data);
    flips.push(("s_data", c));
    for (what, f) in flips {
        let p = m.peek(&f);
        if p.s_ready != o.s_ready || p.m_valid != o.m_valid || p.m_data != o.m_data {
            fail!(
                "cycle {cyc}: changing {what} before the edge changed an output \
                 (s_ready {}->{}, m_valid {}->{}): the outputs must be registers",
                o.s_ready,
                p.s_ready,
                o.m_valid,
                p.m_valid
            );
        }
    }
    Ok(())
}

/// Runs one configuration; every check above, every cycle.
pub fn run(cfg: &SkidCfg) -> Result<SkidReport, Fail> {
    let mut m = Model::new(cfg.model, cfg.seed as u32).map_err(Fail)?;
    let c = *m.config();
    assert_eq!(c.kind, Kind::Register, "{} is not an axis_register", c.name);
    let width = c.param("WIDTH");
    let mut rng = ChaCha8Rng::seed_from_u64(cfg.seed);

    // reset
    for _ in 0..3 {
        m.step(&input(0, false, false, true));
    }

    let mut rep = SkidReport::default();
    let mut pending: Option<u128> = None;
    let mut sent = 0usize;
    let mut inside: VecDeque<u128> = VecDeque::new();
    let mut prev: Option<(PortsOut, bool)> = None;
    let mut first_out = false;
    let limit = (cfg.beats as u64) * 40 + 1000;
    let mut cyc = 0u64;
    while rep.beats < cfg.beats {
        if cyc > limit {
            fail!(
                "cycle {cyc}: stuck: {sent} beats sent, {} received, {} inside",
                rep.beats,
                inside.len()
            );
        }
        if pending.is_none() && sent < cfg.beats && (cfg.saturate || rng.gen_bool(cfg.p_valid)) {
            pending = Some(mask(rng.gen::<u128>(), width));
        }
        // once everything is sent, the sink comes back for good sooner or later
        let p_ready = if sent == cfg.beats && cyc % 64 >= 32 {
            1.0
        } else {
            cfg.p_ready
        };
        let ready = rng.gen_bool(p_ready);
        // a beat not offered carries junk, which must not come out
        let data = pending.unwrap_or_else(|| mask(rng.gen::<u128>(), width));
        let i = input(data, pending.is_some(), ready, false);
        let o = m.peek(&i);
        check_registered(&mut m, &i, &o, width, &mut rng, cyc)?;
        let o2 = m.step(&i);
        if o2 != o {
            fail!("cycle {cyc}: step and peek disagree");
        }
        if o.sim_flags & 2 != 0 {
            fail!("cycle {cyc}: the model reported an error");
        }
        let m_data = from_words(&o.m_data);

        // a beat offered and not taken stays
        if let Some((p, pr)) = &prev {
            if p.m_valid != 0 && !pr && (o.m_valid == 0 || o.m_data != p.m_data) {
                fail!(
                    "cycle {cyc}: the beat offered last cycle and not taken changed \
                     (valid {}, data {:#x} -> {:#x})",
                    o.m_valid,
                    from_words(&p.m_data),
                    m_data
                );
            }
        }

        if pending.is_some() && o.s_ready != 0 {
            inside.push_back(pending.take().unwrap());
            sent += 1;
        }
        if ready && o.m_valid != 0 {
            match inside.pop_front() {
                Some(exp) if exp == m_data => {}
                Some(exp) => fail!(
                    "cycle {cyc}: beat {} out is {m_data:#x}, expected {exp:#x} \
                     (lost, duplicated or reordered)",
                    rep.beats
                ),
                None => fail!("cycle {cyc}: a beat {m_data:#x} out with none inside (duplicate)"),
            }
            rep.beats += 1;
            rep.out_cycles += 1;
            first_out = true;
        } else if ready {
            rep.bubbles += 1;
            // full rate: a source that always has a beat keeps the output
            // valid from the first beat out until it runs dry
            if cfg.saturate && first_out && sent < cfg.beats {
                fail!("cycle {cyc}: the sink was ready and no beat was offered (bubble)");
            }
        }
        rep.max_inside = rep.max_inside.max(inside.len());
        if inside.len() > 2 {
            fail!(
                "cycle {cyc}: {} beats inside a two-entry register",
                inside.len()
            );
        }
        prev = Some((o, ready));
        cyc += 1;
    }
    // nothing more may come out
    for k in 0..8 {
        let o = m.step(&input(0, false, true, false));
        if o.m_valid != 0 {
            fail!(
                "cycle {}: an extra beat {:#x} after all {} were received (duplicate)",
                cyc + k,
                from_words(&o.m_data),
                cfg.beats
            );
        }
    }
    rep.cycles = cyc;
    Ok(rep)
}
