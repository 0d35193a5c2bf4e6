//! Bench of `mp_deferred`, the mp responder's parked completions: seeded
//! random parks, writes and loads on a few QPs, checked every cycle
//! against a model of what each QP has parked:
//!
//! - `avail` while fewer than MP_PEND completions are parked;
//! - the parked completion of the asked QP (PSN, immediate, length) is the
//!   one it parked, until it is written (`done`) or its QP loaded (`drop`),
//!   whatever the other QPs park and free meanwhile.
//!
//! The stimulus keeps the responder's side of the contract: a QP parks
//! only with `avail` and nothing parked, `done` and `drop` name QPs that
//! hold one, and a QP is never parked or written in the cycle it is
//! loaded (the responder's packet goes stale instead). The asked QP is
//! random every cycle (half the time one that holds a completion), so
//! every slot's contents are read often.

use crate::{fail, Fail, Kind, Model, PortsIn};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// One run (a `Kind::MpDeferred` configuration).
pub type MpdCfg = crate::RunCfg;

/// What a run reached.
#[derive(Debug, Clone, Default)]
pub struct MpdReport {
    pub cycles: usize,
    pub parks: usize,
    pub dones: usize,
    pub drops: usize,
    /// cycles with every slot parked (`avail` low)
    pub full: usize,
    /// cycles that parked one completion and freed another
    pub park_and_free: usize,
}

/// (PSN, immediate, length)
type Parked = (u32, u32, u32);

pub fn run(c: &MpdCfg) -> Result<MpdReport, Fail> {
    let mut m = Model::new(c.model, c.seed as u32).map_err(Fail)?;
    let cfg = *m.config();
    assert_eq!(
        cfg.kind,
        Kind::MpDeferred,
        "{} is not an mp_deferred",
        cfg.name
    );
    let nq = cfg.param("NUM_QP") as usize;
    let slots = cfg.param("MP_PEND") as usize;
    let mut rng = ChaCha8Rng::seed_from_u64(c.seed);
    let mut parked: Vec<Option<Parked>> = vec![None; nq];
    let mut r = MpdReport::default();
    for cycle in 0..c.cycles {
        let n = parked.iter().filter(|p| p.is_some()).count();
        let avail = n < slots;
        // half the time a QP that holds one (so the pool drains as well as fills)
        let holders: Vec<usize> = (0..nq).filter(|&x| parked[x].is_some()).collect();
        let q = if !holders.is_empty() && rng.gen_bool(0.5) {
            holders[rng.gen_range(0..holders.len())]
        } else {
            rng.gen_range(0..nq)
        };
        let drop_q = rng.gen_range(0..nq);
        let drop = parked[drop_q].is_some() && drop_q != q && rng.gen_bool(0.1);
        let park = avail && parked[q].is_none() && rng.gen_bool(0.5);
        let done = parked[q].is_some() && rng.gen_bool(0.3);
        let value: Parked = (rng.gen_range(0..1 << 24), rng.gen(), rng.gen());
        let mut i = PortsIn {
            s_valid: u32::from(park) | u32::from(done) << 1 | u32::from(drop) << 2,
            s_last: q as u32 | (drop_q as u32) << 16,
            ..PortsIn::default()
        };
        i.s_data[..3].copy_from_slice(&[value.0, value.1, value.2]);
        let o = m.step(&i);
        let at = || format!("{} seed {} cycle {cycle}", c.model, c.seed);
        if o.sim_flags != 0 {
            fail!("{}: the model stopped ({:#x})", at(), o.sim_flags);
        }
        if (o.m_valid & 1 == 1) != avail {
            fail!(
                "{}: avail {}, {n} of {slots} slots parked",
                at(),
                o.m_valid & 1
            );
        }
        if let Some((psn, imm, len)) = parked[q] {
            if (o.m_data[0], o.m_data[1], o.m_data[2]) != (psn, imm, len) {
                fail!(
                    "{}: QP {q} reads psn {:#x} imm {:#x} len {}, parked {psn:#x} {imm:#x} {len}",
                    at(),
                    o.m_data[0],
                    o.m_data[1],
                    o.m_data[2]
                );
            }
        }
        r.full += usize::from(!avail);
        r.park_and_free += usize::from(park && (done || drop));
        if park {
            parked[q] = Some(value);
            r.parks += 1;
        }
        if done {
            parked[q] = None;
            r.dones += 1;
        }
        if drop {
            parked[drop_q] = None;
            r.drops += 1;
        }
        r.cycles += 1;
    }
    Ok(r)
}
