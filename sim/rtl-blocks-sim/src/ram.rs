//! Bench of `ram_sdp`: seeded random writes and reads, a share of them
//! reading the address written in the same cycle, checked every cycle
//! against a model of the memory:
//!
//! - rd_data is the word at the rd_addr of the cycle before, as the write
//!   of that cycle left it (the read is transparent: a write and a read of
//!   one address in one cycle give the new word);
//! - every word starts as INIT (0), and so does rd_data;
//! - rd_data is a register: other inputs before the edge (a peek) give the
//!   same rd_data.

use crate::{fail, Fail, Kind, Model, PortsIn, PortsOut};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// One run (of this bench, or of [`crate::copies`]).
#[derive(Debug, Clone)]
pub struct RamCfg {
    /// configuration name (a `Kind::Ram` one; `Kind::RamCopies` for
    /// [`crate::copies`])
    pub model: &'static str,
    pub seed: u64,
    pub cycles: usize,
    /// chance per cycle of a write
    pub p_write: f64,
    /// chance per cycle that the read is of the address written
    pub p_same: f64,
}

impl RamCfg {
    pub fn new(model: &'static str, seed: u64) -> Self {
        Self {
            model,
            seed,
            cycles: 4000,
            p_write: 0.5,
            p_same: 0.25,
        }
    }
}

/// What a run measured.
#[derive(Debug, Clone, Default)]
pub struct RamReport {
    pub cycles: usize,
    pub writes: usize,
    /// reads of the address written in the same cycle
    pub same_cycle: usize,
}

/// The words of a DATA_W-bit bus holding random bits.
fn random_word(rng: &mut ChaCha8Rng, width: usize) -> Vec<u32> {
    let words = width.div_ceil(32);
    let mut v: Vec<u32> = (0..words).map(|_| rng.gen()).collect();
    if width % 32 != 0 {
        v[words - 1] &= (1u32 << (width % 32)) - 1;
    }
    v
}

/// One cycle of a RAM block (here and in [`crate::copies`]): `i` clocked
/// in, after a peek with the `other` inputs; fails if the model stopped or
/// reported an error, or if the first `words` of rd_data differ between
/// the two (rd_data must be a register).
pub(crate) fn step_registered(
    m: &mut Model,
    i: &PortsIn,
    other: &PortsIn,
    words: usize,
    cyc: usize,
) -> Result<PortsOut, Fail> {
    let alt = m.peek(other);
    let o = m.step(i);
    if o.sim_flags != 0 {
        fail!(
            "cycle {cyc}: the model stopped or reported an error ({:#x})",
            o.sim_flags
        );
    }
    if alt.m_data[..words] != o.m_data[..words] {
        fail!("cycle {cyc}: rd_data depends on this cycle's inputs: not a register");
    }
    Ok(o)
}

pub fn run(c: &RamCfg) -> Result<RamReport, Fail> {
    let mut m = Model::new(c.model, c.seed as u32).map_err(Fail)?;
    let cfg = *m.config();
    assert_eq!(cfg.kind, Kind::Ram, "{} is not a ram_sdp", cfg.name);
    let width = cfg.param("DATA_W") as usize;
    let depth = cfg.param("DEPTH") as usize;
    let words = width.div_ceil(32);
    let mut rng = ChaCha8Rng::seed_from_u64(c.seed);
    let mut mem = vec![vec![0u32; words]; depth];
    // what rd_data must show in this cycle: INIT at first
    let mut expect = vec![0u32; words];
    let mut rep = RamReport::default();
    for cyc in 0..c.cycles {
        let wr_en = rng.gen_bool(c.p_write);
        let wr_addr = rng.gen_range(0..depth);
        let rd_addr = if rng.gen_bool(c.p_same) {
            wr_addr
        } else {
            rng.gen_range(0..depth)
        };
        let data = random_word(&mut rng, width);
        let mut i = PortsIn {
            s_valid: u32::from(wr_en),
            s_last: wr_addr as u32 | ((rd_addr as u32) << 16),
            ..Default::default()
        };
        i.s_data[..words].copy_from_slice(&data);

        // other inputs before the edge: rd_data must not move
        let mut other = PortsIn {
            s_valid: u32::from(!wr_en),
            s_last: ((wr_addr + 1) % depth) as u32 | ((((rd_addr + 1) % depth) as u32) << 16),
            ..Default::default()
        };
        other.s_data[..words].copy_from_slice(&random_word(&mut rng, width));
        let o = step_registered(&mut m, &i, &other, words, cyc)?;
        if o.m_data[..words] != expect[..] {
            fail!(
                "cycle {cyc}: rd_data {:x?}, expected {:x?} (the word read in the cycle before)",
                &o.m_data[..words],
                expect
            );
        }
        if wr_en {
            mem[wr_addr] = data;
            rep.writes += 1;
            if rd_addr == wr_addr {
                rep.same_cycle += 1;
            }
        }
        expect = mem[rd_addr].clone();
        rep.cycles += 1;
    }
    Ok(rep)
}
