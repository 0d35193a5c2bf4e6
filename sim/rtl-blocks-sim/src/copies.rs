//! Bench of `ram_sdp_copies`: one write port and N_RD read ports, each
//! reading a slice of the record. Seeded random writes and reads on every
//! port, a share of each port's reads of the address written in the same
//! cycle, checked every cycle against a model of the one record memory:
//!
//! - port p's rd_data (at the sum of the widths of the ports before it) is
//!   bits RD_LSB[p] +: RD_W[p] of the word at its rd_addr of the cycle
//!   before, as the write of that cycle left it (transparent: a write and a
//!   read of one address in one cycle give the new word's slice);
//! - every word starts as INIT, and so does every port's rd_data (its
//!   slice of INIT);
//! - rd_data is a register: other inputs before the edge (a peek) give the
//!   same rd_data.

use crate::ram::{step_registered, RamCfg};
use crate::{fail, from_words, mask, to_words, Config, Fail, Kind, Model, PortsIn};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// What a run measured.
#[derive(Debug, Clone, Default)]
pub struct CopiesReport {
    pub cycles: usize,
    pub writes: usize,
    /// per port: reads of the address written in the same cycle
    pub same_cycle: Vec<usize>,
}

/// One read port: its slice of the record and where it sits in rd_data.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Port {
    pub(crate) lsb: u32,
    pub(crate) width: u32,
    pub(crate) off: u32,
}

/// A ram_sdp_copies' record and read ports, from its configuration (a
/// ram_rec has the same).
pub(crate) struct Layout {
    pub(crate) width: u32,
    pub(crate) addr_w: u32,
    pub(crate) depth: usize,
    pub(crate) n_rd: usize,
    pub(crate) ports: Vec<Port>,
    /// 32-bit words of a record and of rd_data
    pub(crate) in_words: usize,
    pub(crate) out_words: usize,
    pub(crate) init: u128,
}

pub(crate) fn layout(cfg: &Config) -> Layout {
    let width = cfg.param("DATA_W");
    let addr_w = cfg.param("ADDR_W");
    let depth = cfg.param("DEPTH") as usize;
    let n_rd = cfg.param("N_RD") as usize;
    let mut ports = Vec::new();
    let mut off = 0;
    for p in 0..n_rd {
        let lsb = cfg.param(&format!("RD_LSB[{p}]"));
        let w = cfg.param(&format!("RD_W[{p}]"));
        assert!(w >= 1 && lsb + w <= width, "{}: port {p} slice", cfg.name);
        ports.push(Port { lsb, width: w, off });
        off += w;
    }
    assert!(
        width <= 128 && off <= 128,
        "{}: the bench takes records and rd_data of up to 128 bits",
        cfg.name
    );
    assert!(n_rd as u32 * addr_w <= 32 && addr_w <= 16);
    let (in_words, out_words) = (width.div_ceil(32) as usize, off.div_ceil(32) as usize);
    let init = (0..4).fold(0u128, |a, i| {
        a | (u128::from(cfg.param(&format!("INIT[{i}]"))) << (32 * i))
    });
    let init = mask(init, width);
    Layout {
        width,
        addr_w,
        depth,
        n_rd,
        ports,
        in_words,
        out_words,
        init,
    }
}

/// rd_data for each port reading `words[p]` of the memory.
pub(crate) fn port_data(ports: &[Port], words: &[u128]) -> u128 {
    ports
        .iter()
        .zip(words)
        .fold(0u128, |a, (p, &w)| a | (mask(w >> p.lsb, p.width) << p.off))
}

/// One run of `c.model` (a `Kind::RamCopies` configuration); `c.p_same`
/// is per port: the chance that the port reads the address written.
pub fn run(c: &RamCfg) -> Result<CopiesReport, Fail> {
    let mut m = Model::new(c.model, c.seed as u32).map_err(Fail)?;
    let cfg = *m.config();
    assert_eq!(
        cfg.kind,
        Kind::RamCopies,
        "{} is not a ram_sdp_copies",
        cfg.name
    );
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

    let mut rng = ChaCha8Rng::seed_from_u64(c.seed);
    let mut mem = vec![init; depth];
    // what rd_data must show in this cycle: every port's slice of INIT
    let mut expect = rd_data(&vec![init; n_rd]);
    let mut rep = CopiesReport {
        same_cycle: vec![0; n_rd],
        ..Default::default()
    };
    let pack = |addrs: &[usize]| -> u32 {
        addrs
            .iter()
            .enumerate()
            .fold(0u32, |a, (p, &r)| a | ((r as u32) << (p as u32 * addr_w)))
    };
    for cyc in 0..c.cycles {
        let wr_en = rng.gen_bool(c.p_write);
        let wr_addr = rng.gen_range(0..depth);
        let rd_addr: Vec<usize> = (0..n_rd)
            .map(|_| {
                if rng.gen_bool(c.p_same) {
                    wr_addr
                } else {
                    rng.gen_range(0..depth)
                }
            })
            .collect();
        let data = mask(rng.gen::<u128>(), width);
        let mut i = PortsIn {
            s_valid: u32::from(wr_en) | ((wr_addr as u32) << 16),
            s_last: pack(&rd_addr),
            ..Default::default()
        };
        to_words(data, &mut i.s_data[..in_words]);

        // other inputs before the edge: rd_data must not move
        let other_rd: Vec<usize> = rd_addr.iter().map(|r| (r + 1) % depth).collect();
        let mut other = PortsIn {
            s_valid: u32::from(!wr_en) | ((((wr_addr + 1) % depth) as u32) << 16),
            s_last: pack(&other_rd),
            ..Default::default()
        };
        to_words(
            mask(rng.gen::<u128>(), width),
            &mut other.s_data[..in_words],
        );
        let o = step_registered(&mut m, &i, &other, out_words, cyc)?;
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
        if wr_en {
            mem[wr_addr] = data;
            rep.writes += 1;
            for (p, &r) in rd_addr.iter().enumerate() {
                if r == wr_addr {
                    rep.same_cycle[p] += 1;
                }
            }
        }
        let words: Vec<u128> = rd_addr.iter().map(|&r| mem[r]).collect();
        expect = rd_data(&words);
        rep.cycles += 1;
    }
    Ok(rep)
}
