//! Bench of `rec_port_mux`: one record word port (rec_map's) onto N
//! modules' record ports, port i holding words BASE(i) .. BASE(i) +
//! 2^LOG(i) - 1 of the record and seeing them as 0 .. 2^LOG(i) - 1. The
//! modules' ports are modelled here, in Rust: each port i is a memory of
//! 2^SLOT_W slots of 2^LOG(i) 64-bit words (random to start with), as a
//! rec_map is, taking a read when `p_rd_valid[i] && p_rd_ready[i]` and
//! answering it exactly 3 cycles later (rec_map's latency) with the word
//! it held when it took the read, and a write when `p_wr_valid[i] &&
//! p_wr_ready[i]`, at the low LOG(i) bits of `p_wr_word`. `p_rd_ready`,
//! `p_wr_ready` and `p_wr_busy` are random per port and cycle; a port's
//! `p_rd_data` is random junk whenever its `p_rd_data_valid` is low. The
//! driver offers reads and writes at random (words biased to the first
//! and last of each port's range, slots to a few, some writes of the word
//! read in the same cycle), each held unchanged until taken; random resets
//! of one to three cycles abandon the offers and drop the answers in flight
//! (the ports' too: the answer a port shows in the first cycle of a reset
//! is one the block must drop). Checked every cycle:
//!
//! - with a read offered, `p_rd_valid` is exactly its owner's bit (no port
//!   sees valid for a word it does not own; without an offer none), the
//!   owner sees the slot and, in the low LOG bits of `p_rd_word`, the word
//!   less its BASE; `s_rec_rd_ready` is the owner's `p_rd_ready`; the same
//!   for writes (`p_wr_valid`, `p_wr_slot`, `p_wr_word`, `p_wr_data`,
//!   `s_rec_wr_ready`);
//! - every read taken is answered exactly once, in order, 4 cycles after it
//!   was taken (one after its port's answer): `m_rec_rd_data_valid` then
//!   and only then, with the word the record held at (slot, word) when the
//!   read was taken, by a model of the whole record written from the
//!   driver's side (so a write that reached the wrong port, word or slot
//!   shows as a wrong answer later);
//! - `m_rec_rd_data_valid` and `m_rec_rd_data` are registers: a peek with
//!   the ports' answers and `rst` changed gives the same;
//! - `rec_wr_busy` is the OR of `p_wr_busy`.
//!
//! A run ends with a drain: no new offers until every read is answered.

use crate::{fail, Fail, Kind, Model, PortsIn, PortsOut};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::collections::VecDeque;

/// The ports' read latency (rec_map's).
pub const PORT_LAT: usize = 3;

/// One run of [`run`].
#[derive(Debug, Clone)]
pub struct RpmCfg {
    /// configuration name (a `Kind::RecPortMux` one)
    pub model: &'static str,
    pub seed: u64,
    pub cycles: usize,
    /// chance per cycle that a read (a write) is offered when none waits
    pub p_rd: f64,
    pub p_wr: f64,
    /// chance per port and cycle of p_rd_ready and p_wr_ready
    pub p_ready: f64,
    /// chance per port and cycle of p_wr_busy
    pub p_busy: f64,
    /// chance per cycle of a reset
    pub p_rst: f64,
}

impl RpmCfg {
    pub fn new(model: &'static str, seed: u64) -> Self {
        Self {
            model,
            seed,
            cycles: 20_000,
            p_rd: 0.6,
            p_wr: 0.5,
            p_ready: 0.6,
            p_busy: 0.2,
            p_rst: 0.002,
        }
    }
}

/// What a run measured.
#[derive(Debug, Clone, Default)]
pub struct RpmReport {
    pub cycles: usize,
    /// reads answered and checked, per port
    pub reads: Vec<usize>,
    /// writes taken, per port
    pub writes: Vec<usize>,
    /// reads answered with a word written in the run
    pub reads_of_written: usize,
    /// reads of the first and of the last word of a port's range
    pub edge_reads: usize,
    /// cycles a read (a write) was offered and not taken
    pub rd_waits: usize,
    pub wr_waits: usize,
    /// a read and a write of the same word taken in the same cycle
    pub same_cycle: usize,
    /// cycles with `p_wr_busy` of some port (`rec_wr_busy` up)
    pub busy: usize,
    pub resets: usize,
    /// answers a port showed in a reset's first cycle (dropped)
    pub dropped_at_reset: usize,
}

/// A read or write offered: slot, word, data.
#[derive(Debug, Clone, Copy)]
struct Offer {
    slot: u32,
    word: u32,
    data: u64,
}

pub fn run(c: &RpmCfg) -> Result<RpmReport, Fail> {
    let mut m = Model::new(c.model, c.seed as u32).map_err(Fail)?;
    let cfg = *m.config();
    assert_eq!(
        cfg.kind,
        Kind::RecPortMux,
        "{} is not a rec_port_mux",
        cfg.name
    );
    let n = cfg.param("N") as usize;
    let slot_w = cfg.param("SLOT_W");
    let word_w = cfg.param("WORD_W");
    assert!(
        (1..=8).contains(&n) && slot_w <= 16 && (1..=8).contains(&word_w),
        "{}: the bench packs at most 8 ports, 16 slot bits, 8 word bits",
        cfg.name
    );
    let base: Vec<u32> = (0..n).map(|i| cfg.param(&format!("BASE[{i}]"))).collect();
    let size: Vec<u32> = (0..n)
        .map(|i| 1u32 << cfg.param(&format!("LOG[{i}]")))
        .collect();
    let slots = 1u32 << slot_w;
    let words = 1u32 << word_w;
    // the owner of each word (the configuration must tile the record)
    let owner: Vec<usize> = (0..words)
        .map(|w| {
            let o: Vec<usize> = (0..n)
                .filter(|&i| w >= base[i] && w < base[i] + size[i])
                .collect();
            assert_eq!(o.len(), 1, "{}: word {w} has owners {o:?}", cfg.name);
            o[0]
        })
        .collect();

    let mut rng = ChaCha8Rng::seed_from_u64(c.seed);
    // the record as the driver wrote it, and each port's memory: the same
    // words to start with
    let mut rec: Vec<u64> = (0..slots * words).map(|_| rng.gen()).collect();
    let mut mem: Vec<Vec<u64>> = (0..n)
        .map(|i| {
            (0..slots * size[i])
                .map(|k| {
                    let (s, w) = (k / size[i], k % size[i]);
                    rec[(s * words + base[i] + w) as usize]
                })
                .collect()
        })
        .collect();
    let mut written = vec![false; (slots * words) as usize];
    // a few slots most offers use (reads of words written)
    let pool: Vec<u32> = (0..4).map(|_| rng.gen_range(0..slots)).collect();
    let mut port_q: Vec<VecDeque<(usize, u64)>> = vec![VecDeque::new(); n];
    // (due, word, written in the run)
    let mut expect: VecDeque<(usize, u64, bool)> = VecDeque::new();
    let mut rd: Option<Offer> = None;
    let mut wr: Option<Offer> = None;
    let mut rst_left = 0usize;
    let mut first_rst = false;
    let mut rep = RpmReport {
        reads: vec![0; n],
        writes: vec![0; n],
        ..Default::default()
    };

    let mut cyc = 0usize;
    loop {
        let drain = cyc >= c.cycles;
        if drain && rd.is_none() && wr.is_none() && expect.is_empty() && rst_left == 0 {
            break;
        }
        if cyc > c.cycles + 1000 {
            fail!("{} cycle {cyc}: the drain did not end", cfg.name);
        }
        if !drain && rst_left == 0 && rng.gen_bool(c.p_rst) {
            rst_left = rng.gen_range(1..=3);
            first_rst = true;
            rd = None;
            wr = None;
            rep.resets += 1;
        }
        let rst = rst_left > 0;
        let pick = |rng: &mut ChaCha8Rng| -> (u32, u32) {
            let slot = if rng.gen_bool(0.5) {
                pool[rng.gen_range(0..pool.len())]
            } else {
                rng.gen_range(0..slots)
            };
            let word = if rng.gen_bool(0.3) {
                let k = rng.gen_range(0..n);
                if rng.gen_bool(0.5) {
                    base[k]
                } else {
                    base[k] + size[k] - 1
                }
            } else {
                rng.gen_range(0..words)
            };
            (slot, word)
        };
        if !rst && !drain && rd.is_none() && rng.gen_bool(c.p_rd) {
            let (slot, word) = pick(&mut rng);
            rd = Some(Offer {
                slot,
                word,
                data: 0,
            });
        }
        if !rst && !drain && wr.is_none() && rng.gen_bool(c.p_wr) {
            let (slot, word) = match rd {
                Some(r) if rng.gen_bool(0.2) => (r.slot, r.word),
                _ => pick(&mut rng),
            };
            wr = Some(Offer {
                slot,
                word,
                data: rng.gen(),
            });
        }
        // the ports' answers due now, junk on the others
        let mut i = PortsIn {
            rst: u8::from(rst),
            ..Default::default()
        };
        let mut ans_valid = 0u32;
        for (p, q) in port_q.iter_mut().enumerate() {
            let d = match q.front() {
                Some(&(due, v)) if due == cyc => {
                    q.pop_front();
                    ans_valid |= 1 << p;
                    v
                }
                _ => rng.gen(),
            };
            i.s_data[2 * p] = d as u32;
            i.s_data[2 * p + 1] = (d >> 32) as u32;
        }
        if first_rst {
            rep.dropped_at_reset += ans_valid.count_ones() as usize;
            first_rst = false;
        }
        let draw = |rng: &mut ChaCha8Rng, p: f64| -> u32 {
            (0..n)
                .filter(|_| rng.gen_bool(p))
                .fold(0, |a, k| a | (1 << k))
        };
        let rd_ready = draw(&mut rng, c.p_ready);
        let wr_ready = draw(&mut rng, c.p_ready);
        let busy = draw(&mut rng, c.p_busy);
        i.s_data[20] = rd_ready | (wr_ready << 8) | (ans_valid << 16) | (busy << 24);
        if let Some(r) = rd {
            i.s_data[18] |= r.slot;
            i.s_data[19] |= r.word;
        }
        if let Some(w) = wr {
            i.s_data[16] = w.data as u32;
            i.s_data[17] = (w.data >> 32) as u32;
            i.s_data[18] |= w.slot << 16;
            i.s_data[19] |= w.word << 8;
        }
        i.s_valid = u32::from(rd.is_some()) | (u32::from(wr.is_some()) << 1);

        // the answer is a register: other answers from the ports and
        // another rst change nothing before the edge
        let mut alt = i.clone();
        for k in 0..2 * n {
            alt.s_data[k] = rng.gen();
        }
        alt.s_data[20] = (i.s_data[20] & !(0xff << 16)) | (draw(&mut rng, 0.5) << 16);
        alt.rst ^= 1;
        let po = m.peek(&alt);
        let o: PortsOut = m.step(&i);
        let at = || format!("{} cycle {cyc}", cfg.name);
        if o.sim_flags != 0 {
            fail!("{}: the model stopped ({:#x})", at(), o.sim_flags);
        }
        let got_ans = o.m_valid & 1 != 0;
        let got_data = u64::from(o.m_data[0]) | (u64::from(o.m_data[1]) << 32);
        if (po.m_valid & 1 != 0) != got_ans || (got_ans && po.m_data[..2] != o.m_data[..2]) {
            fail!(
                "{}: m_rec_rd_data_valid or m_rec_rd_data follows the ports' answers or rst \
                 before the edge (not a register)",
                at()
            );
        }
        // the routing of the read
        let p_rd_valid = o.m_data[6] & 0xff;
        let p_rd_slot = o.m_data[4] & 0xffff;
        let p_rd_word = o.m_data[5] & 0xff;
        let want_rd_valid = rd.map_or(0, |r| 1 << owner[r.word as usize]);
        if p_rd_valid != want_rd_valid {
            fail!(
                "{}: p_rd_valid {p_rd_valid:#x}, expected {want_rd_valid:#x} ({})",
                at(),
                rd.map_or("no read offered".into(), |r| format!(
                    "a read of word {} owned by port {}",
                    r.word, owner[r.word as usize]
                ))
            );
        }
        let s_rd_ready = o.s_ready & 1 != 0;
        let mut rd_taken = None;
        if let Some(r) = rd {
            let p = owner[r.word as usize];
            if p_rd_slot != r.slot || p_rd_word & (size[p] - 1) != r.word - base[p] {
                fail!(
                    "{}: port {p} sees a read of slot {p_rd_slot} word {p_rd_word:#x}, expected \
                     slot {} word {} (word {} less its base {})",
                    at(),
                    r.slot,
                    r.word - base[p],
                    r.word,
                    base[p]
                );
            }
            if s_rd_ready != (rd_ready >> p & 1 != 0) {
                fail!(
                    "{}: s_rec_rd_ready {s_rd_ready} for a read of port {p}, whose p_rd_ready is \
                     {} (p_rd_ready {rd_ready:#x})",
                    at(),
                    rd_ready >> p & 1
                );
            }
            if s_rd_ready {
                rd_taken = Some((r, p));
            } else {
                rep.rd_waits += 1;
            }
        }
        // the routing of the write
        let p_wr_valid = (o.m_data[6] >> 8) & 0xff;
        let p_wr_slot = o.m_data[4] >> 16;
        let p_wr_word = (o.m_data[5] >> 8) & 0xff;
        let p_wr_data = u64::from(o.m_data[2]) | (u64::from(o.m_data[3]) << 32);
        let want_wr_valid = wr.map_or(0, |w| 1 << owner[w.word as usize]);
        if p_wr_valid != want_wr_valid {
            fail!(
                "{}: p_wr_valid {p_wr_valid:#x}, expected {want_wr_valid:#x} ({})",
                at(),
                wr.map_or("no write offered".into(), |w| format!(
                    "a write of word {} owned by port {}",
                    w.word, owner[w.word as usize]
                ))
            );
        }
        let s_wr_ready = o.s_ready & 2 != 0;
        let mut wr_taken = None;
        if let Some(w) = wr {
            let p = owner[w.word as usize];
            if p_wr_slot != w.slot
                || p_wr_word & (size[p] - 1) != w.word - base[p]
                || p_wr_data != w.data
            {
                fail!(
                    "{}: port {p} sees a write of slot {p_wr_slot} word {p_wr_word:#x} data \
                     {p_wr_data:#018x}, expected slot {} word {} (word {} less its base {}) data \
                     {:#018x}",
                    at(),
                    w.slot,
                    w.word - base[p],
                    w.word,
                    base[p],
                    w.data
                );
            }
            if s_wr_ready != (wr_ready >> p & 1 != 0) {
                fail!(
                    "{}: s_rec_wr_ready {s_wr_ready} for a write of port {p}, whose p_wr_ready \
                     is {} (p_wr_ready {wr_ready:#x})",
                    at(),
                    wr_ready >> p & 1
                );
            }
            if s_wr_ready {
                wr_taken = Some((w, p));
            } else {
                rep.wr_waits += 1;
            }
        }
        let got_busy = o.m_valid & 2 != 0;
        if got_busy != (busy != 0) {
            fail!("{}: rec_wr_busy {got_busy} with p_wr_busy {busy:#x}", at());
        }
        rep.busy += usize::from(busy != 0);
        // the answer
        match expect.front() {
            Some(&(due, want, wrote)) if due == cyc => {
                if !got_ans {
                    fail!(
                        "{}: no answer {} cycles after the read was taken",
                        at(),
                        PORT_LAT + 1
                    );
                }
                if got_data != want {
                    fail!(
                        "{}: answer {got_data:#018x}, expected {want:#018x} (the record's word \
                         when the read was taken)",
                        at()
                    );
                }
                expect.pop_front();
                rep.reads_of_written += usize::from(wrote);
            }
            _ if got_ans => fail!(
                "{}: an answer with no read taken {} cycles before",
                at(),
                PORT_LAT + 1
            ),
            _ => {}
        }
        // the ports take what they see (reads before the cycle's write)
        for p in 0..n {
            let k = |slot: u32, word: u32| (slot * size[p] + (word & (size[p] - 1))) as usize;
            if (p_rd_valid & rd_ready) >> p & 1 != 0 {
                port_q[p].push_back((cyc + PORT_LAT, mem[p][k(p_rd_slot, p_rd_word)]));
            }
            if (p_wr_valid & wr_ready) >> p & 1 != 0 {
                mem[p][k(p_wr_slot, p_wr_word)] = p_wr_data;
            }
        }
        // and the record the driver sees
        if let Some((r, p)) = rd_taken {
            let k = (r.slot * words + r.word) as usize;
            expect.push_back((cyc + PORT_LAT + 1, rec[k], written[k]));
            rep.reads[p] += 1;
            let w = r.word - base[p];
            rep.edge_reads += usize::from(w == 0 || w == size[p] - 1);
            rd = None;
        }
        if let Some((w, p)) = wr_taken {
            let k = (w.slot * words + w.word) as usize;
            rec[k] = w.data;
            written[k] = true;
            rep.writes[p] += 1;
            if rd_taken.is_some_and(|(r, _)| r.slot == w.slot && r.word == w.word) {
                rep.same_cycle += 1;
            }
            wr = None;
        }
        if rst {
            // the block and the ports drop what is in flight at the edge
            for q in port_q.iter_mut() {
                q.clear();
            }
            expect.clear();
            rst_left -= 1;
        }
        cyc += 1;
        rep.cycles += 1;
    }
    Ok(rep)
}
