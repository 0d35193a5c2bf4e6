//! Bench of `ram_reset_sweep`: seeded random writes and resets, checked
//! every cycle against a model of the sweep, and against what its users
//! rely on, with a record RAM kept by the bench (a flag per record: written
//! since it was last zeroed):
//!
//! - `sweep` and `sweep_addr` are the model's (both are registers: the
//!   cycle's inputs do not move them);
//! - a reset that follows a write (since power-up or since the last sweep
//!   started, the reset's own cycle included) starts a sweep at address 0,
//!   one address a cycle up to DEPTH-1; a reset during a sweep starts it
//!   again from 0; a reset of a clean RAM starts none (power-up costs no
//!   cycles);
//! - when a sweep ends, every record reads zero.
//!
//! Writes come as the users make them: never while `sweep` is high (they
//! hold their events), sometimes in the reset's own cycle.

use crate::{fail, Fail, Kind, Model, PortsIn, RunCfg};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// What a run reached.
#[derive(Debug, Clone, Default)]
pub struct SweepReport {
    pub cycles: usize,
    pub writes: usize,
    /// sweeps that ran to the last address
    pub sweeps_done: usize,
    /// resets that started no sweep (nothing written)
    pub clean_resets: usize,
    /// resets in a sweep (it starts again)
    pub restarts: usize,
    /// resets whose only write was in their own cycle
    pub write_at_reset: usize,
}

pub fn run(c: &RunCfg) -> Result<SweepReport, Fail> {
    let mut m = Model::new(c.model, c.seed as u32).map_err(Fail)?;
    let cfg = *m.config();
    assert_eq!(
        cfg.kind,
        Kind::ResetSweep,
        "{} is not a ram_reset_sweep",
        cfg.name
    );
    let depth = cfg.param("DEPTH") as usize;
    assert!(depth >= 1, "{}: DEPTH at least 1", cfg.name);
    let mut rng = ChaCha8Rng::seed_from_u64(c.seed);
    // the model: the block's three registers
    let (mut dirty, mut sweep, mut addr) = (false, false, 0usize);
    // the RAM: a record written since it was last zeroed
    let mut written = vec![false; depth];
    let mut r = SweepReport::default();
    for cycle in 0..c.cycles {
        let at = || format!("{} seed {} cycle {cycle}", c.model, c.seed);
        // bursts of writes, then quiet stretches with resets
        let rst = rng.gen_bool(if sweep { 0.01 } else { 0.04 });
        let wrote = !sweep && rng.gen_bool(if rst { 0.3 } else { 0.05 });
        let i = PortsIn {
            s_valid: u32::from(wrote),
            rst: u8::from(rst),
            ..PortsIn::default()
        };
        let o = m.step(&i);
        if o.sim_flags != 0 {
            fail!("{}: the model stopped ({:#x})", at(), o.sim_flags);
        }
        if (o.m_valid & 1 != 0) != sweep {
            fail!("{}: sweep {}, want {sweep}", at(), o.m_valid & 1);
        }
        if o.m_data[0] as usize != addr {
            fail!("{}: sweep_addr {}, want {addr}", at(), o.m_data[0]);
        }
        // the users' writes: the sweep's zero, or one of theirs
        if sweep {
            written[addr] = false;
        }
        if wrote {
            written[rng.gen_range(0..depth)] = true;
            r.writes += 1;
        }
        // the edge
        let (was_dirty, was_sweep) = (dirty, sweep);
        dirty |= wrote;
        if sweep {
            if addr == depth - 1 {
                sweep = false;
                r.sweeps_done += 1;
                if !rst {
                    if let Some(k) = written.iter().position(|&w| w) {
                        fail!("{}: the sweep ended with record {k} not zeroed", at());
                    }
                }
            }
            addr += 1;
        }
        if rst {
            if was_sweep {
                r.restarts += 1;
            }
            if !(was_dirty || was_sweep || wrote) {
                r.clean_resets += 1;
            }
            if wrote && !was_dirty && !was_sweep {
                r.write_at_reset += 1;
            }
            sweep = was_dirty || was_sweep || wrote;
            addr = 0;
            dirty = false;
        }
        // the counter is ADDR_W bits (it passes DEPTH-1 only when the sweep
        // ends, and then wraps to 0 unless DEPTH is a power of two)
        addr %= depth.next_power_of_two().max(2);
        r.cycles += 1;
    }
    Ok(r)
}
