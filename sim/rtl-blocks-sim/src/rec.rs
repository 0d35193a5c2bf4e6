//! Bench of `ram_rec`: a `ram_sdp_copies` (one write port, N_RD read ports
//! of a slice each) with a record port (a read of the whole record, a
//! whole-record write that yields to the module's write). Seeded random
//! module writes, record writes held until ready (rec_wr_en, the address
//! and the data stay up and unchanged until the cycle they are taken),
//! module writes of the address a record write waits for, and random reads
//! on every port, a share of them of the address written in the same
//! cycle; checked every cycle against a model of the one record memory:
//!
//! - rec_wr_ready is !wr_en in every cycle (combinational);
//! - a record write is done in the cycle it is offered with rec_wr_ready,
//!   and only then: the model writes it there, so a record write lost,
//!   taken early (over a module write) or done again shows as a word that
//!   differs on some port;
//! - port p's rd_data (at the sum of the widths of the ports before it) is
//!   bits RD_LSB[p] +: RD_W[p] of the word at its rd_addr of the cycle
//!   before, and rec_rd_data the whole word at rec_rd_addr of the cycle
//!   before, as that cycle's write (module or record) left it (transparent);
//! - every word starts as INIT, and so does every read port (its slice of
//!   INIT, the record port the whole of it);
//! - rd_data and rec_rd_data are registers: other inputs before the edge
//!   (a peek) give the same;
//! - after the random cycles, a sweep without writes reads every address
//!   on every port: the final memory, word by word, is the model's.

use crate::copies::{layout, port_data, Layout};
use crate::ram::step_registered;
use crate::{fail, from_words, mask, to_words, Fail, Kind, Model, PortsIn};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// One run of [`run`].
#[derive(Debug, Clone)]
pub struct RecCfg {
    /// configuration name (a `Kind::RamRec` one)
    pub model: &'static str,
    pub seed: u64,
    /// random cycles (the final sweep comes on top)
    pub cycles: usize,
    /// chance per cycle of a module write
    pub p_write: f64,
    /// chance per cycle, with no record write waiting, that one starts
    pub p_rec: f64,
    /// chance per cycle and read port that it reads the address written
    /// (the module's, else the record write's)
    pub p_same: f64,
    /// chance that a module write goes to the address a record write
    /// waits for
    pub p_collide: f64,
}

impl RecCfg {
    pub fn new(model: &'static str, seed: u64) -> Self {
        Self {
            model,
            seed,
            cycles: 4000,
            p_write: 0.5,
            p_rec: 0.3,
            p_same: 0.25,
            p_collide: 0.3,
        }
    }
}

/// What a run measured.
#[derive(Debug, Clone, Default)]
pub struct RecReport {
    pub cycles: usize,
    /// module writes done
    pub writes: usize,
    /// record writes done
    pub rec_writes: usize,
    /// record writes that waited at least a cycle (a module write)
    pub rec_waited: usize,
    /// module writes of the address a record write waited for
    pub collisions: usize,
    /// per read port, the record port last: reads of the address written
    /// in the same cycle
    pub same_cycle: Vec<usize>,
}

/// A record write offered: held until taken.
#[derive(Debug, Clone, Copy)]
struct RecWrite {
    addr: usize,
    data: u128,
    /// cycles offered so far
    waited: usize,
}

/// One cycle's inputs.
struct Drive {
    wr_en: bool,
    wr_addr: usize,
    wr_data: u128,
    rd_addr: Vec<usize>,
    rec_rd_addr: usize,
    rec: Option<RecWrite>,
}

pub fn run(c: &RecCfg) -> Result<RecReport, Fail> {
    let mut m = Model::new(c.model, c.seed as u32).map_err(Fail)?;
    let cfg = *m.config();
    assert_eq!(cfg.kind, Kind::RamRec, "{} is not a ram_rec", cfg.name);
    let Layout {
        width,
        addr_w,
        depth,
        n_rd,
        ports,
        in_words,
        out_words,
        init,
    } = layout(&cfg);
    let rd_data = |words: &[u128]| port_data(&ports, words);
    let pack_in = |d: &Drive| -> PortsIn {
        let rec_en = d.rec.is_some();
        let (rec_addr, rec_data) = d.rec.map_or((0, 0), |r| (r.addr, r.data));
        let mut i = PortsIn {
            s_valid: u32::from(d.wr_en) | (u32::from(rec_en) << 1) | ((d.wr_addr as u32) << 16),
            s_last: d
                .rd_addr
                .iter()
                .enumerate()
                .fold(0u32, |a, (p, &r)| a | ((r as u32) << (p as u32 * addr_w))),
            ..Default::default()
        };
        to_words(d.wr_data, &mut i.s_data[..in_words]);
        to_words(rec_data, &mut i.s_data[4..4 + in_words]);
        i.s_data[8] = d.rec_rd_addr as u32 | ((rec_addr as u32) << 16);
        i
    };

    let mut rng = ChaCha8Rng::seed_from_u64(c.seed);
    let mut mem = vec![init; depth];
    // what the read ports must show in this cycle: INIT
    let mut expect = rd_data(&vec![init; n_rd]);
    let mut expect_rec = init;
    let mut rep = RecReport {
        same_cycle: vec![0; n_rd + 1],
        ..Default::default()
    };
    let mut pending: Option<RecWrite> = None;
    let total = c.cycles + depth + 1;
    for cyc in 0..total {
        let sweep = cyc >= c.cycles;
        if !sweep && pending.is_none() && rng.gen_bool(c.p_rec) {
            pending = Some(RecWrite {
                addr: rng.gen_range(0..depth),
                data: mask(rng.gen::<u128>(), width),
                waited: 0,
            });
        }
        let wr_en = !sweep && rng.gen_bool(c.p_write);
        let wr_addr = match pending {
            Some(r) if rng.gen_bool(c.p_collide) => r.addr,
            _ => rng.gen_range(0..depth),
        };
        // the address written in this cycle, if any
        let written = if wr_en {
            Some(wr_addr)
        } else {
            pending.map(|r| r.addr)
        };
        let pick = |rng: &mut ChaCha8Rng| -> usize {
            if sweep {
                (cyc - c.cycles) % depth
            } else {
                match written {
                    Some(a) if rng.gen_bool(c.p_same) => a,
                    _ => rng.gen_range(0..depth),
                }
            }
        };
        let rd_addr: Vec<usize> = (0..n_rd).map(|_| pick(&mut rng)).collect();
        let rec_rd_addr = pick(&mut rng);
        let d = Drive {
            wr_en,
            wr_addr,
            wr_data: mask(rng.gen::<u128>(), width),
            rd_addr,
            rec_rd_addr,
            rec: pending,
        };
        let i = pack_in(&d);

        // other inputs before the edge: the read data must not move
        let other = Drive {
            wr_en: !wr_en,
            wr_addr: (wr_addr + 1) % depth,
            wr_data: mask(rng.gen::<u128>(), width),
            rd_addr: d.rd_addr.iter().map(|r| (r + 1) % depth).collect(),
            rec_rd_addr: (rec_rd_addr + 1) % depth,
            rec: match pending {
                Some(_) => None,
                None => Some(RecWrite {
                    addr: (wr_addr + 2) % depth,
                    data: mask(rng.gen::<u128>(), width),
                    waited: 0,
                }),
            },
        };
        let o = step_registered(&mut m, &i, &pack_in(&other), 8, cyc)?;
        let ready = o.s_ready & 1 != 0;
        if ready == wr_en {
            fail!("cycle {cyc}: rec_wr_ready {ready} with wr_en {wr_en} (must be !wr_en)");
        }
        let got = from_words(&o.m_data[..out_words]);
        if got != expect {
            let bad: Vec<usize> = ports
                .iter()
                .enumerate()
                .filter(|(_, p)| mask(got >> p.off, p.width) != mask(expect >> p.off, p.width))
                .map(|(n, _)| n)
                .collect();
            fail!(
                "cycle {cyc}: rd_data {got:#x}, expected {expect:#x} (each port's slice of the \
                 word read in the cycle before); wrong on port(s) {bad:?}"
            );
        }
        let got_rec = from_words(&o.m_data[4..4 + in_words]);
        if got_rec != expect_rec {
            fail!(
                "cycle {cyc}: rec_rd_data {got_rec:#x}, expected {expect_rec:#x} (the whole \
                 word read in the cycle before)"
            );
        }

        if wr_en {
            mem[wr_addr] = d.wr_data;
            rep.writes += 1;
            if let Some(r) = pending.as_mut() {
                r.waited += 1;
                if r.addr == wr_addr {
                    rep.collisions += 1;
                }
            }
        } else if let Some(r) = pending.take() {
            // taken in exactly this cycle: rec_wr_en && rec_wr_ready
            mem[r.addr] = r.data;
            rep.rec_writes += 1;
            if r.waited > 0 {
                rep.rec_waited += 1;
            }
        }
        if let Some(a) = written {
            for (p, &r) in d.rd_addr.iter().enumerate() {
                if r == a {
                    rep.same_cycle[p] += 1;
                }
            }
            if rec_rd_addr == a {
                rep.same_cycle[n_rd] += 1;
            }
        }
        let words: Vec<u128> = d.rd_addr.iter().map(|&r| mem[r]).collect();
        expect = rd_data(&words);
        expect_rec = mem[rec_rd_addr];
        rep.cycles += 1;
    }
    Ok(rep)
}
