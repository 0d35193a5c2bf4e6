//! Bench of `rec_map`: qpc_fill's word-wide record port onto N_REC
//! ram_rec record ports. The record RAMs are modelled here, in Rust (not
//! Verilated ram_rec instances): each record r is a memory of 2^SLOT_W
//! words of REC_W[r] bits, read whole one cycle after `rec_rd_addr`
//! (transparent: a record write of that cycle included) and written whole
//! in a cycle with `rec_wr_en[r] && rec_wr_ready[r]`, `rec_wr_ready[r]`
//! random per record and cycle (ram_rec's is `!wr_en` of its module: any
//! pattern). The driver plays qpc_fill's copy engine: one copy at a time,
//! either a copy-out (reads of words 0..REC_WORDS-1 of a slot, one a
//! cycle or with random gaps) or a copy-in (writes of words 0..REC_WORDS-1
//! of a slot, random data, each held until taken, random gaps), a copy-out
//! only once every record write the model expects is done; random resets
//! (one to three cycles) abandon the copy in progress. Checked every cycle:
//!
//! - `s_rec_rd_ready` is 1; every read is answered exactly 3 cycles after
//!   it was taken (`m_rec_rd_data_valid` then and only then), in order,
//!   with the word of the model's records the layout gives (record r at
//!   words OFF(r) .. OFF(r) + NW(r) - 1, zero above its width; padding
//!   words zero);
//! - record writes: the word that ends record r, when taken, makes the
//!   model expect one write of r (the slot, the record's words of the copy
//!   masked to its width); `rec_wr_en` must be exactly the oldest expected
//!   write's record (one bit, from the cycle after that word was taken) or
//!   0 when none is expected, so a write early, late, twice, of two records
//!   or of a record not asked for fails; when done (`rec_wr_en[r] &&
//!   rec_wr_ready[r]`) its `rec_wr_addr` and field of `rec_wr_data` must be
//!   the expected ones (no word of another record or slot); a write not
//!   taken is held (address and data unchanged);
//! - `s_rec_wr_ready` is low while `rec_wr_en` is up, and a copy must end:
//!   a word offered 200 cycles without being taken fails;
//! - a reset drops the answers in flight and the writes not yet done (a
//!   write done in a reset cycle counts: the RAM took it).
//!
//! `wr_busy` is checked too: it is up exactly while `rec_wr_en` is.

use crate::{fail, Fail, Kind, Model, PortsIn, PortsOut};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::collections::VecDeque;

/// One run of [`run`].
#[derive(Debug, Clone)]
pub struct RmapCfg {
    /// configuration name (a `Kind::RecMap` one)
    pub model: &'static str,
    pub seed: u64,
    pub cycles: usize,
    /// chance per record and cycle of rec_wr_ready
    pub p_ready: f64,
    /// chance per cycle that a copy offers no word
    pub p_gap: f64,
    /// chance that a new copy is a copy-out
    pub p_out: f64,
    /// chance per cycle of a reset
    pub p_rst: f64,
}

impl RmapCfg {
    pub fn new(model: &'static str, seed: u64) -> Self {
        Self {
            model,
            seed,
            cycles: 20_000,
            p_ready: 0.5,
            p_gap: 0.2,
            p_out: 0.5,
            p_rst: 0.002,
        }
    }
}

/// What a run measured.
#[derive(Debug, Clone, Default)]
pub struct RmapReport {
    pub cycles: usize,
    /// read answers checked, and those of padding words
    pub reads: usize,
    pub pad_reads: usize,
    /// record writes done, and those that waited for rec_wr_ready
    pub rec_writes: usize,
    pub rec_waited: usize,
    /// copies finished (every word taken), each way
    pub copies_out: usize,
    pub copies_in: usize,
    pub resets: usize,
}

/// The copy in progress: its slot, the next word, the words of a copy-in.
struct Copy {
    out: bool,
    slot: u32,
    word: usize,
    data: Vec<u64>,
    /// cycles the current word has been offered
    offered: usize,
}

/// A record write the model waits for.
struct Want {
    rec: usize,
    slot: u32,
    data: Vec<u64>,
}

/// `width` bits of `words` from bit `off`, as 64-bit words.
fn get_bits(words: &[u32], off: usize, width: usize) -> Vec<u64> {
    let mut v = vec![0u64; width.div_ceil(64)];
    for b in 0..width {
        let p = off + b;
        if (words[p / 32] >> (p % 32)) & 1 != 0 {
            v[b / 64] |= 1 << (b % 64);
        }
    }
    v
}

/// Puts `width` bits of `v` into `words` from bit `off`.
fn put_bits(words: &mut [u32], off: usize, width: usize, v: &[u64]) {
    for b in 0..width {
        if (v[b / 64] >> (b % 64)) & 1 != 0 {
            let p = off + b;
            words[p / 32] |= 1 << (p % 32);
        }
    }
}

/// `v` with the bits from `width` up cleared.
fn masked(mut v: Vec<u64>, width: usize) -> Vec<u64> {
    for (i, w) in v.iter_mut().enumerate() {
        let lo = i * 64;
        if lo >= width {
            *w = 0;
        } else if width - lo < 64 {
            *w &= (1u64 << (width - lo)) - 1;
        }
    }
    v
}

pub fn run(c: &RmapCfg) -> Result<RmapReport, Fail> {
    const LAT: usize = 3;
    let mut m = Model::new(c.model, c.seed as u32).map_err(Fail)?;
    let cfg = *m.config();
    assert_eq!(cfg.kind, Kind::RecMap, "{} is not a rec_map", cfg.name);
    let n_rec = cfg.param("N_REC") as usize;
    let slot_w = cfg.param("SLOT_W");
    let rec_words = cfg.param("REC_WORDS") as usize;
    let slots = 1usize << slot_w;
    let width: Vec<usize> = (0..n_rec)
        .map(|r| cfg.param(&format!("REC_W[{r}]")) as usize)
        .collect();
    let nw: Vec<usize> = width.iter().map(|w| w.div_ceil(64)).collect();
    let off: Vec<usize> = (0..n_rec).map(|r| nw[..r].iter().sum()).collect();
    let boff: Vec<usize> = (0..n_rec).map(|r| width[..r].iter().sum()).collect();
    let total_bits: usize = width.iter().sum();
    assert!(
        total_bits <= 512 && slot_w <= 16 && rec_words <= 256,
        "{}: the bench packs at most 512 record bits",
        cfg.name
    );
    assert!(off[n_rec - 1] + nw[n_rec - 1] <= rec_words);
    // slot word -> (record, index in it), None for padding
    let word_of = |w: usize| -> Option<(usize, usize)> {
        (0..n_rec).find_map(|r| (w >= off[r] && w < off[r] + nw[r]).then(|| (r, w - off[r])))
    };

    let mut rng = ChaCha8Rng::seed_from_u64(c.seed);
    // the record RAMs, random to start with
    let mut mem: Vec<Vec<Vec<u64>>> = (0..n_rec)
        .map(|r| {
            (0..slots)
                .map(|_| masked((0..nw[r]).map(|_| rng.gen()).collect(), width[r]))
                .collect()
        })
        .collect();
    // every record's rec_rd_data in this cycle (the RAMs' registers)
    let mut ram_q: Vec<Vec<u64>> = (0..n_rec).map(|r| mem[r][0].clone()).collect();
    let mut reads: VecDeque<(usize, u64, bool)> = VecDeque::new();
    let mut wants: VecDeque<Want> = VecDeque::new();
    let mut copy: Option<Copy> = None;
    let mut rst_left = 0usize;
    // the write offered last cycle and not taken: (rec_wr_en, addr, data)
    let mut held: Option<(u32, u32, Vec<u64>)> = None;
    let mut waited = false;
    let mut rep = RmapReport::default();

    for cyc in 0..c.cycles {
        if rst_left == 0 && rng.gen_bool(c.p_rst) {
            rst_left = rng.gen_range(1..=3);
            copy = None;
            rep.resets += 1;
        }
        let rst = rst_left > 0;
        if !rst && copy.is_none() {
            let out = wants.is_empty() && rng.gen_bool(c.p_out);
            copy = Some(Copy {
                out,
                slot: rng.gen_range(0..slots as u32),
                word: 0,
                data: (0..rec_words).map(|_| rng.gen()).collect(),
                offered: 0,
            });
        }
        let mut i = PortsIn {
            rst: u8::from(rst),
            ..Default::default()
        };
        for r in 0..n_rec {
            put_bits(&mut i.s_data[..16], boff[r], width[r], &ram_q[r]);
        }
        let ready_mask: u32 = (0..n_rec)
            .filter(|_| rng.gen_bool(c.p_ready))
            .fold(0, |a, r| a | (1 << r));
        i.s_last = ready_mask;
        let (mut rd_v, mut wr_v) = (false, false);
        if let Some(cp) = copy.as_mut() {
            // a write offered stays offered (qpc_fill's register)
            let offer = (!cp.out && cp.offered > 0) || !rng.gen_bool(c.p_gap);
            if !rst && offer {
                if cp.out {
                    rd_v = true;
                    i.s_data[18] = cp.slot;
                    i.s_data[19] = cp.word as u32;
                } else {
                    wr_v = true;
                    i.s_data[16] = cp.data[cp.word] as u32;
                    i.s_data[17] = (cp.data[cp.word] >> 32) as u32;
                    i.s_data[18] = cp.slot << 16;
                    i.s_data[19] = (cp.word as u32) << 8;
                }
            }
        }
        i.s_valid = u32::from(rd_v) | (u32::from(wr_v) << 1);
        let o: PortsOut = m.step(&i);
        let at = || format!("{} cycle {cyc}", cfg.name);
        if o.sim_flags != 0 {
            fail!("{}: the model stopped ({:#x})", at(), o.sim_flags);
        }
        let rd_ready = o.s_ready & 1 != 0;
        let wr_ready = o.s_ready & 2 != 0;
        let en = o.m_data[19] & ((1u32 << n_rec) - 1);
        let wr_addr = o.m_data[18] >> 16;
        let rd_addr = (o.m_data[18] & 0xffff) as usize;
        let busy = o.m_valid & 2 != 0;
        if !rd_ready {
            fail!("{}: s_rec_rd_ready is 0", at());
        }
        if busy != (en != 0) {
            fail!("{}: wr_busy {busy} with rec_wr_en {en:#x}", at());
        }
        if en != 0 && wr_ready {
            fail!("{}: s_rec_wr_ready up while rec_wr_en {en:#x} waits", at());
        }
        // rec_wr_en: exactly the oldest write expected
        let want_en = wants.front().map_or(0, |w| 1u32 << w.rec);
        if en != want_en {
            fail!(
                "{}: rec_wr_en {en:#x}, expected {want_en:#x} (the record whose last word was \
                 taken, from the cycle after, until its write is done)",
                at()
            );
        }
        if let Some((hen, haddr, hdata)) = &held {
            let r = hen.trailing_zeros() as usize;
            if *hen != en
                || *haddr != wr_addr
                || *hdata != get_bits(&o.m_data[..16], boff[r], width[r])
            {
                fail!(
                    "{}: a record write of record {r} not taken was not held",
                    at()
                );
            }
        }
        held = None;
        // the answer to a read
        let ans = o.m_valid & 1 != 0;
        match reads.front() {
            Some(&(due, want, pad)) if due == cyc => {
                if !ans {
                    fail!("{}: no read answer {LAT} cycles after the read", at());
                }
                let got = u64::from(o.m_data[16]) | (u64::from(o.m_data[17]) << 32);
                if got != want {
                    fail!(
                        "{}: read answer {got:#018x}, expected {want:#018x} ({})",
                        at(),
                        if pad {
                            "a padding word"
                        } else {
                            "a record's word"
                        }
                    );
                }
                reads.pop_front();
                rep.reads += 1;
                rep.pad_reads += usize::from(pad);
            }
            _ if ans => fail!("{}: a read answer that was not asked for (or early)", at()),
            _ => {}
        }
        // a record write done
        if en & ready_mask != 0 {
            let w = wants.pop_front().unwrap();
            let got = get_bits(&o.m_data[..16], boff[w.rec], width[w.rec]);
            if wr_addr != w.slot || got != w.data {
                fail!(
                    "{}: record {} written at slot {wr_addr} with {got:x?}, expected slot {} \
                     with {:x?}",
                    at(),
                    w.rec,
                    w.slot,
                    w.data
                );
            }
            mem[w.rec][w.slot as usize] = got;
            rep.rec_writes += 1;
            rep.rec_waited += usize::from(waited);
            waited = false;
        } else if en != 0 {
            let r = en.trailing_zeros() as usize;
            held = Some((en, wr_addr, get_bits(&o.m_data[..16], boff[r], width[r])));
            waited = true;
        }
        // the word offered, taken or not
        let mut done = false;
        if let Some(cp) = copy.as_mut() {
            if rd_v || wr_v {
                cp.offered += 1;
                if cp.offered > 200 {
                    fail!("{}: a word offered for 200 cycles was not taken", at());
                }
            }
            if rd_v {
                let (want, pad) = match word_of(cp.word) {
                    Some((r, k)) => (mem[r][cp.slot as usize][k], false),
                    None => (0, true),
                };
                reads.push_back((cyc + LAT, want, pad));
            }
            if rd_v || (wr_v && wr_ready) {
                if wr_v {
                    if let Some((r, k)) = word_of(cp.word) {
                        if k + 1 == nw[r] {
                            let d = cp.data[off[r]..off[r] + nw[r]].to_vec();
                            wants.push_back(Want {
                                rec: r,
                                slot: cp.slot,
                                data: masked(d, width[r]),
                            });
                        }
                    }
                }
                cp.word += 1;
                cp.offered = 0;
                if cp.word == rec_words {
                    done = true;
                    if cp.out {
                        rep.copies_out += 1;
                    } else {
                        rep.copies_in += 1;
                    }
                }
            }
        }
        if done {
            copy = None;
        }
        if rst {
            // the block drops what is in flight at the edge
            reads.clear();
            wants.clear();
            held = None;
            waited = false;
            rst_left -= 1;
        }
        // the RAMs read at this cycle's rec_rd_addr, this cycle's write
        // included
        if rd_addr >= slots {
            fail!("{}: rec_rd_addr {rd_addr} beyond the slots", at());
        }
        for r in 0..n_rec {
            ram_q[r] = mem[r][rd_addr].clone();
        }
        rep.cycles += 1;
    }
    Ok(rep)
}
