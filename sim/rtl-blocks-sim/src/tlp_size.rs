//! Bench of `tlp_upsize` and `tlp_downsize`, a TLP stream (128-bit header,
//! data, dword keep, last) to twice and to half its width. A seeded random
//! source sends TLPs (a random header each, 1..64 dwords of random data,
//! packed from lane 0: every beat but the last has every keep bit, the last
//! a run from bit 0), holding each beat until it is taken, with random gaps
//! between and inside TLPs and junk on every input while nothing is
//! offered; a seeded random sink. The header input of a TLP's later beats
//! is junk half the time: `tlp_upsize` must carry its first beat's,
//! `tlp_downsize` each input beat's own. Checked every cycle:
//!
//! - the TLPs reassembled from the output (the dwords whose keep is set,
//!   up to m_last; the header of the first beat) are the TLPs sent, in
//!   order, and nothing more comes out;
//! - every output beat's keep is a run from bit 0, full unless the beat is
//!   its TLP's last: `tlp_upsize` never sends an empty low half (a TLP
//!   whose last beat lands in the low half ends there, with the high keep
//!   and data zero), `tlp_downsize` never an empty beat (a high half with
//!   no keep is skipped);
//! - the header of every output beat: `tlp_upsize` its TLP's (the first
//!   input beat's), `tlp_downsize` its input beat's;
//! - a beat offered and not taken stays, unchanged;
//! - the rate, with a source that always has a beat and a sink always
//!   ready: `tlp_upsize` takes an input beat every cycle, `tlp_downsize`
//!   sends an output beat every cycle (the report counts refusals and
//!   bubbles; the test requires none).

use crate::{fail, from_words, Fail, Kind, Model, PortsIn, PortsOut};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::collections::VecDeque;

/// One run.
#[derive(Debug, Clone)]
pub struct TlpCfg {
    /// configuration name (a `Kind::TlpUpsize` or `Kind::TlpDownsize` one)
    pub model: &'static str,
    pub seed: u64,
    /// TLPs to send
    pub tlps: usize,
    /// chance per cycle that an idle source offers its next beat
    pub p_valid: f64,
    /// chance per cycle that the sink is ready
    pub p_ready: f64,
    /// the source always has a beat (p_valid ignored): the full-rate check
    pub saturate: bool,
}

impl TlpCfg {
    pub fn new(model: &'static str, seed: u64) -> Self {
        Self {
            model,
            seed,
            tlps: 1000,
            p_valid: 0.7,
            p_ready: 0.7,
            saturate: false,
        }
    }
}

/// What a run measured.
#[derive(Debug, Clone, Default)]
pub struct TlpReport {
    pub cycles: u64,
    pub tlps: usize,
    pub in_beats: u64,
    pub out_beats: u64,
    /// upsize: TLPs whose last input beat landed in a low half; downsize:
    /// input beats with no dword in the high half
    pub low_only: usize,
    /// TLPs whose later beats carried a junk header
    pub junk_headers: usize,
    /// cycles in which the sink was ready, a beat was offered and not taken
    pub refused: u64,
    /// cycles in which the sink was ready and no beat was offered, after
    /// the first beat out, while the source had beats left
    pub bubbles: u64,
}

/// A TLP: header and dwords.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Tlp {
    hdr: u128,
    dw: Vec<u32>,
}

/// One input beat.
#[derive(Debug, Clone)]
struct InBeat {
    hdr: u128,
    data: Vec<u32>,
    keep: u32,
    last: bool,
}

fn ones(n: usize) -> u32 {
    if n >= 32 {
        u32::MAX
    } else {
        (1u32 << n) - 1
    }
}

fn put_hdr(h: u128, w: &mut [u32]) {
    for (k, x) in w.iter_mut().enumerate().take(4) {
        *x = (h >> (32 * k)) as u32;
    }
}

/// Runs one configuration; every check above, every cycle.
pub fn run(cfg: &TlpCfg) -> Result<TlpReport, Fail> {
    let mut m = Model::new(cfg.model, cfg.seed as u32).map_err(Fail)?;
    let c = *m.config();
    let up = match c.kind {
        Kind::TlpUpsize => true,
        Kind::TlpDownsize => false,
        _ => panic!("{} is not a tlp_upsize or tlp_downsize", c.name),
    };
    // dwords per input and per output beat
    let (in_dw, out_dw) = if up {
        let w = c.param("IN_W") as usize / 32;
        (w, 2 * w)
    } else {
        let w = c.param("OUT_W") as usize / 32;
        (2 * w, w)
    };
    assert!(
        in_dw <= 8 && out_dw <= 8,
        "{}: wider than the port struct",
        c.name
    );
    let half = out_dw.min(in_dw);
    let mut rng = ChaCha8Rng::seed_from_u64(cfg.seed);
    let at = |cyc: u64| format!("{} seed {} cycle {cyc}", cfg.model, cfg.seed);

    // reset
    for _ in 0..3 {
        m.step(&PortsIn {
            rst: 1,
            ..Default::default()
        });
    }

    let mut rep = TlpReport::default();
    // the TLPs sent (not yet all out), and the source's beats to come
    let mut sent: VecDeque<Tlp> = VecDeque::new();
    let mut beats: VecDeque<InBeat> = VecDeque::new();
    let mut made = 0usize;
    let mut offer: Option<InBeat> = None;
    // downsize: the header each output beat still to come must carry
    let mut exp_hdr: VecDeque<u128> = VecDeque::new();
    // the output TLP being reassembled: its header and dwords
    let mut cur: Option<Tlp> = None;
    let mut prev: Option<(PortsOut, bool)> = None;
    let mut first_out = false;
    let mut cyc = 0u64;
    let limit = 200 * cfg.tlps as u64 + 1000;
    loop {
        if cyc > limit {
            fail!("{}: stuck: {made} TLPs made, {} out", at(cyc), rep.tlps);
        }
        // the next TLP's beats, when the source runs out
        if beats.is_empty() && made < cfg.tlps {
            let len = if rng.gen_bool(0.5) {
                rng.gen_range(1..=64)
            } else {
                rng.gen_range(1..=2 * in_dw.max(out_dw))
            };
            let t = Tlp {
                hdr: rng.gen(),
                dw: (0..len).map(|_| rng.gen()).collect(),
            };
            let junk = rng.gen_bool(0.5);
            rep.junk_headers += usize::from(junk);
            let chunks: Vec<&[u32]> = t.dw.chunks(in_dw).collect();
            let n = chunks.len();
            for (k, ch) in chunks.into_iter().enumerate() {
                let mut data: Vec<u32> = ch.to_vec();
                // lanes past the TLP's end carry junk
                data.resize_with(in_dw, || rng.gen());
                beats.push_back(InBeat {
                    hdr: if k > 0 && junk { rng.gen() } else { t.hdr },
                    data,
                    keep: ones(ch.len()),
                    last: k + 1 == n,
                });
            }
            if up && n % 2 == 1 {
                rep.low_only += 1;
            }
            sent.push_back(t);
            made += 1;
        }
        if offer.is_none() && !beats.is_empty() && (cfg.saturate || rng.gen_bool(cfg.p_valid)) {
            offer = beats.pop_front();
        }
        let p_ready = if made == cfg.tlps && beats.is_empty() {
            cfg.p_ready.max(0.5)
        } else {
            cfg.p_ready
        };
        let ready = rng.gen_bool(p_ready);

        let mut i = PortsIn {
            m_ready: u8::from(ready),
            ..Default::default()
        };
        match &offer {
            Some(b) => {
                put_hdr(b.hdr, &mut i.s_data[..4]);
                i.s_data[4..4 + in_dw].copy_from_slice(&b.data);
                i.s_data[12] = b.keep;
                i.s_valid = 1;
                i.s_last = u32::from(b.last);
            }
            None => {
                // junk, which must not come out
                for w in i.s_data[..4 + in_dw].iter_mut() {
                    *w = rng.gen();
                }
                i.s_data[12] = rng.gen::<u32>() & ones(in_dw);
                i.s_last = u32::from(rng.gen_bool(0.5));
            }
        }
        let more = offer.is_some() || !beats.is_empty() || made < cfg.tlps;
        let o = m.step(&i);
        if o.sim_flags & 2 != 0 {
            fail!("{}: the model reported an error", at(cyc));
        }
        let m_valid = o.m_valid & 1 != 0;

        // a beat offered and not taken stays
        if let Some((p, pr)) = &prev {
            if p.m_valid != 0
                && !pr
                && (o.m_valid != p.m_valid || o.m_last != p.m_last || o.m_data != p.m_data)
            {
                fail!(
                    "{}: the beat offered last cycle and not taken changed",
                    at(cyc)
                );
            }
        }

        // the input handshake
        let taken_in = offer.is_some() && o.s_ready & 1 != 0;
        if let Some(b) = &offer {
            if taken_in {
                rep.in_beats += 1;
                if !up {
                    let hi = b.keep >> half != 0;
                    exp_hdr.push_back(b.hdr);
                    if hi {
                        exp_hdr.push_back(b.hdr);
                    } else {
                        rep.low_only += 1;
                    }
                }
            } else if ready {
                rep.refused += 1;
            }
        }
        if taken_in {
            offer = None;
        }

        // the output
        if ready && !m_valid && first_out && more {
            rep.bubbles += 1;
        }
        if ready && m_valid {
            first_out = true;
            rep.out_beats += 1;
            let hdr = from_words(&o.m_data[..4]);
            let data = &o.m_data[4..4 + out_dw];
            let keep = o.m_data[12];
            let last = o.m_last & 1 != 0;
            let beat = rep.out_beats - 1;
            if keep == 0 {
                fail!("{}: output beat {beat} with no keep bit", at(cyc));
            }
            if keep & keep.wrapping_add(1) != 0 || keep > ones(out_dw) {
                fail!(
                    "{}: output beat {beat}: keep {keep:#x} is not a run from bit 0",
                    at(cyc)
                );
            }
            if !last && keep != ones(out_dw) {
                fail!(
                    "{}: output beat {beat}: keep {keep:#x} on a beat that is not its TLP's last \
                     (every beat but the last is full)",
                    at(cyc)
                );
            }
            if up && keep >> half == 0 && data[half..].iter().any(|&w| w != 0) {
                fail!(
                    "{}: output beat {beat}: a TLP ending in the low half with high data \
                     {:x?} (must be zero)",
                    at(cyc),
                    &data[half..]
                );
            }
            let Some(want) = sent.front() else {
                fail!("{}: output beat {beat} with every TLP already out", at(cyc));
            };
            let hdr_want = if up {
                want.hdr
            } else {
                match exp_hdr.pop_front() {
                    Some(h) => h,
                    None => fail!(
                        "{}: output beat {beat} with no input beat left to send",
                        at(cyc)
                    ),
                }
            };
            if hdr != hdr_want {
                fail!(
                    "{}: output beat {beat} (TLP {}) carries header {hdr:#x}, expected {hdr_want:#x} \
                     ({})",
                    at(cyc),
                    rep.tlps,
                    if up {
                        "its TLP's first beat's"
                    } else {
                        "its input beat's"
                    }
                );
            }
            let t = cur.get_or_insert_with(|| Tlp {
                hdr,
                dw: Vec::new(),
            });
            t.dw.extend(
                data.iter()
                    .enumerate()
                    .filter(|(k, _)| keep >> k & 1 != 0)
                    .map(|(_, &w)| w),
            );
            if t.dw.len() > want.dw.len() || (last && t.dw.len() != want.dw.len()) {
                fail!(
                    "{}: TLP {} out with {}{} dwords, sent with {} (output beat {beat}, last {})",
                    at(cyc),
                    rep.tlps,
                    if last { "" } else { "at least " },
                    t.dw.len(),
                    want.dw.len(),
                    last
                );
            }
            if last {
                let t = cur.take().unwrap();
                if t != *want {
                    let k = t.dw.iter().zip(&want.dw).position(|(a, b)| a != b);
                    fail!(
                        "{}: TLP {} out differs from the one sent (header {:#x} vs {:#x}, first \
                         differing dword {k:?})",
                        at(cyc),
                        rep.tlps,
                        t.hdr,
                        want.hdr
                    );
                }
                sent.pop_front();
                rep.tlps += 1;
            }
        }
        prev = Some((o, ready));
        cyc += 1;
        if rep.tlps == cfg.tlps {
            break;
        }
    }
    if !exp_hdr.is_empty() {
        fail!(
            "{}: every TLP out, {} output beats short",
            at(cyc),
            exp_hdr.len()
        );
    }
    // nothing more may come out
    for k in 0..8 {
        let o = m.step(&PortsIn {
            m_ready: 1,
            ..Default::default()
        });
        if o.m_valid & 1 != 0 {
            fail!(
                "{}: an extra beat after all {} TLPs were out",
                at(cyc + k),
                cfg.tlps
            );
        }
    }
    rep.cycles = cyc;
    Ok(rep)
}
