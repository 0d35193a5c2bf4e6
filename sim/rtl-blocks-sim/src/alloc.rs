//! Bench of `slot_allocator`: seeded random takes, gives and resets,
//! checked every cycle against a model of the pool:
//!
//! - `free` is the pool's free bits; `avail` says one is free and `pick`
//!   is the lowest free slot (whatever the other inputs of the cycle: the
//!   outputs are registers and a priority encoder of them);
//! - at the edge a take (with `avail`) clears `pick`, the gives set their
//!   slots, and a give of the slot taken in the same cycle keeps it free;
//! - `rst` frees every slot; every slot starts free.
//!
//! Gives are mostly of slots in use (as the requester and the responder
//! give), some of the slot being taken, a few of free slots. Takes come
//! often enough to empty the pool; the test checks the run got there.

use crate::{fail, Fail, Kind, Model, PortsIn};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// One run.
#[derive(Debug, Clone)]
pub struct AllocCfg {
    /// configuration name (a `Kind::Alloc` one)
    pub model: &'static str,
    pub seed: u64,
    pub cycles: usize,
    /// chance per cycle of a take
    pub p_take: f64,
    /// chance per slot in use that it is given back in a cycle
    pub p_give: f64,
    /// chance per cycle that the slot being taken is given back with it
    pub p_give_picked: f64,
    /// chance per cycle of `rst`
    pub p_rst: f64,
}

impl AllocCfg {
    pub fn new(model: &'static str, seed: u64) -> Self {
        Self {
            model,
            seed,
            cycles: 4000,
            p_take: 0.6,
            p_give: 0.08,
            p_give_picked: 0.05,
            p_rst: 0.005,
        }
    }
}

/// What a run reached.
#[derive(Debug, Clone, Default)]
pub struct AllocReport {
    pub cycles: usize,
    pub takes: usize,
    pub gives: usize,
    /// cycles with every slot taken (`avail` low)
    pub exhausted: usize,
    /// takes whose slot was given back in the same cycle
    pub take_and_give: usize,
    pub resets: usize,
}

/// The lowest set bit of `free`, if any.
fn lowest(free: u32) -> Option<u32> {
    (free != 0).then(|| free.trailing_zeros())
}

pub fn run(c: &AllocCfg) -> Result<AllocReport, Fail> {
    let mut m = Model::new(c.model, c.seed as u32).map_err(Fail)?;
    let cfg = *m.config();
    assert_eq!(
        cfg.kind,
        Kind::Alloc,
        "{} is not a slot_allocator",
        cfg.name
    );
    let slots = cfg.param("SLOTS");
    assert!((1..=32).contains(&slots), "{}: SLOTS 1..32", cfg.name);
    let all = if slots == 32 {
        u32::MAX
    } else {
        (1u32 << slots) - 1
    };
    let mut rng = ChaCha8Rng::seed_from_u64(c.seed);
    let mut free = all;
    let mut r = AllocReport::default();
    for cycle in 0..c.cycles {
        let rst = rng.gen_bool(c.p_rst);
        let take = rng.gen_bool(c.p_take);
        let pick = lowest(free);
        let mut give = 0u32;
        for s in 0..slots {
            let bit = 1u32 << s;
            let used = free & bit == 0;
            if (used && rng.gen_bool(c.p_give)) || (!used && rng.gen_bool(0.002)) {
                give |= bit;
            }
        }
        if let (true, Some(p)) = (take, pick) {
            if rng.gen_bool(c.p_give_picked) {
                give |= 1 << p;
            }
        }
        let i = PortsIn {
            s_valid: u32::from(take),
            s_data: {
                let mut d = [0u32; 24];
                d[0] = give;
                d
            },
            rst: u8::from(rst),
            ..PortsIn::default()
        };
        let o = m.step(&i);
        let at = || format!("{} seed {} cycle {cycle}", c.model, c.seed);
        if o.sim_flags != 0 {
            fail!("{}: the model stopped ({:#x})", at(), o.sim_flags);
        }
        if o.m_data[0] & all != free || (slots < 32 && o.m_data[0] >> slots != 0) {
            fail!("{}: free {:#x}, want {free:#x}", at(), o.m_data[0]);
        }
        if (o.m_valid != 0) != pick.is_some() {
            fail!("{}: avail {}, free {free:#x}", at(), o.m_valid);
        }
        if let Some(p) = pick {
            if u32::from(o.m_sel) != p {
                fail!("{}: pick {}, want {p} (free {free:#x})", at(), o.m_sel);
            }
        } else {
            r.exhausted += 1;
        }
        // the edge
        let took = match (take, pick) {
            (true, Some(p)) => {
                r.takes += 1;
                if give & (1 << p) != 0 {
                    r.take_and_give += 1;
                }
                1u32 << p
            }
            _ => 0,
        };
        r.gives += give.count_ones() as usize;
        free = (free & !took) | give;
        if rst {
            free = all;
            r.resets += 1;
        }
        r.cycles += 1;
    }
    Ok(r)
}
