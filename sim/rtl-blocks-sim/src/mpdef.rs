//! Bench of `mp_deferred`, the mp responder's parked completions: seeded
//! random parks, writes and loads on a few QPs, checked every cycle
//! against a model of what each QP has parked:
//!
//! - `avail` while fewer than MP_PEND completions are parked, `pend` while
//!   the asked QP holds one, `full` while it holds MP_WIMM;
//! - the asked QP's completion read (PSN, immediate, length) is its parked
//!   one of the lowest PSN, whatever order they were parked in, until it is
//!   written (`done`, which frees that one) or its QP loaded (`drop`,
//!   which frees them all), whatever the other QPs park and free meanwhile.
//!
//! The stimulus keeps the responder's side of the contract: a QP parks
//! only with `avail` and not `full`, a PSN it has not parked, within its
//! window (the PSNs of one QP lie within 128 of a base that moves on and
//! wraps at 2^24); `done` names a QP that holds one; park and done are
//! never in one cycle, and a load (drop) is of another QP than a park or
//! done in its cycle (the responder's packet goes stale instead). The
//! asked QP is random every cycle (half the time one that holds a
//! completion), so every slot's contents are read often.

use crate::{fail, psn_sub, Fail, Kind, Model, PortsIn, PSN_MASK};
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
    /// cycles whose asked QP held MP_WIMM (`full` high)
    pub qp_full: usize,
    /// parks below a PSN the QP had parked already (out of order)
    pub out_of_order: usize,
    /// cycles that parked one completion and freed another QP's
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
    let wimm = cfg.param("MP_WIMM") as usize;
    let mut rng = ChaCha8Rng::seed_from_u64(c.seed);
    let mut parked: Vec<Vec<Parked>> = vec![Vec::new(); nq];
    // each QP's window base: near the 24-bit wrap at first
    let mut base: Vec<u32> = (0..nq).map(|_| PSN_MASK - rng.gen_range(0..200)).collect();
    let mut r = MpdReport::default();
    let rst = PortsIn {
        rst: 1,
        ..PortsIn::default()
    };
    m.step(&rst);
    for cycle in 0..c.cycles {
        let n: usize = parked.iter().map(Vec::len).sum();
        let avail = n < slots;
        // half the time a QP that holds one (so the pool drains as well as fills)
        let holders: Vec<usize> = (0..nq).filter(|&x| !parked[x].is_empty()).collect();
        let q = if !holders.is_empty() && rng.gen_bool(0.5) {
            holders[rng.gen_range(0..holders.len())]
        } else {
            rng.gen_range(0..nq)
        };
        let first = parked[q]
            .iter()
            .copied()
            .min_by_key(|p| psn_sub(p.0, base[q]));
        let drop_q = rng.gen_range(0..nq);
        let drop = !parked[drop_q].is_empty() && drop_q != q && rng.gen_bool(0.2);
        let done = first.is_some() && rng.gen_bool(0.3);
        let psn = base[q].wrapping_add(rng.gen_range(0..128)) & PSN_MASK;
        let park = !done
            && avail
            && parked[q].len() < wimm
            && !parked[q].iter().any(|p| p.0 == psn)
            && rng.gen_bool(0.5);
        let value: Parked = (psn, rng.gen(), rng.gen());
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
        let (o_avail, o_pend, o_full) =
            (o.m_valid & 1 == 1, o.m_valid & 2 != 0, o.m_valid & 4 != 0);
        if o_avail != avail {
            fail!("{}: avail {o_avail}, {n} of {slots} slots parked", at());
        }
        if o_pend != first.is_some() || o_full != (parked[q].len() >= wimm) {
            fail!(
                "{}: QP {q} pend {o_pend} full {o_full}, {} parked of {wimm}",
                at(),
                parked[q].len()
            );
        }
        if let Some((psn, imm, len)) = first {
            if (o.m_data[0], o.m_data[1], o.m_data[2]) != (psn, imm, len) {
                fail!(
                    "{}: QP {q} reads psn {:#x} imm {:#x} len {}, its first parked is {psn:#x} {imm:#x} {len} (of {:x?})",
                    at(),
                    o.m_data[0],
                    o.m_data[1],
                    o.m_data[2],
                    parked[q]
                );
            }
        }
        r.full += usize::from(!avail);
        r.qp_full += usize::from(parked[q].len() >= wimm);
        r.park_and_free += usize::from(park && drop);
        if park {
            if parked[q]
                .iter()
                .any(|p| psn_sub(p.0, base[q]) > psn_sub(psn, base[q]))
            {
                r.out_of_order += 1;
            }
            parked[q].push(value);
            r.parks += 1;
        }
        if done {
            let f = first.unwrap();
            parked[q].retain(|p| *p != f);
            r.dones += 1;
            // the point passed it: the QP's window moves on
            if parked[q].is_empty() && rng.gen_bool(0.5) {
                base[q] = base[q].wrapping_add(rng.gen_range(1..200)) & PSN_MASK;
            }
        }
        if drop {
            parked[drop_q].clear();
            base[drop_q] = rng.gen_range(0..=PSN_MASK);
            r.drops += 1;
        }
        r.cycles += 1;
    }
    Ok(r)
}
