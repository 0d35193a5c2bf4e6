//! Bench of `axis_arb_mux` (and so of `arbiter`): PORTS seeded random
//! sources of packets (1..=max_len beats, random gaps before and inside
//! packets, each beat held until taken, or with `p_withdraw` a first beat
//! sometimes withdrawn before it is taken and offered again later), a
//! seeded random sink, and per-cycle checks:
//!
//! - per port, the beats out (told apart by m_sel) are the beats taken in,
//!   in order, with their `last` (no loss, duplicate or reordering), and at
//!   the end every beat came out; packets never interleave at the output;
//! - a beat offered at the output and not taken stays, unchanged (valid,
//!   data, last, sel), the next cycle;
//! - the hold rule at the inputs, beat by beat, against a model of the
//!   choice: when no choice holds, the first cycle any port offers a beat
//!   the choice is made from the ports offering in that cycle (fixed: the
//!   lowest; round robin: the first after the last choice, wrapping), and
//!   from then until that port's last beat is taken no other port sees
//!   s_ready (s_ready only ever goes to a port that offers a beat); a
//!   port that withdraws its first beat gives the choice up after that
//!   cycle, a pause between beats of a packet does not;
//! - without the output register the output is that port's beat in the
//!   same cycle and s_ready follows m_ready;
//! - no output depends combinationally on m_ready, and with the output
//!   register none on any input, and s_ready not on m_ready (peeks);
//! - round robin: a waiting port sees at most PORTS-1 other choices;
//! - full rate: with sources that always have a beat, the output never
//!   bubbles while the sink is ready.

use crate::{fail, from_words, mask, Fail, Kind, Model, PortsIn, PortsOut};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::collections::VecDeque;

/// One run.
#[derive(Debug, Clone)]
pub struct ArbCfg {
    /// configuration name (a `Kind::ArbMux` one)
    pub model: &'static str,
    pub seed: u64,
    /// packets per port
    pub packets: usize,
    /// beats per packet: 1..=max_len
    pub max_len: usize,
    /// chance per cycle that an idle port starts offering its next packet
    pub p_start: f64,
    /// chance per cycle that the next beat of a started packet is offered
    pub p_beat: f64,
    /// chance per cycle that the sink is ready
    pub p_ready: f64,
    /// every port always offers (p_start, p_beat ignored): full rate
    pub saturate: bool,
    /// chance per cycle that a port offering the first beat of a packet,
    /// not taken yet, withdraws it (it offers the packet again later)
    pub p_withdraw: f64,
}

impl ArbCfg {
    pub fn new(model: &'static str, seed: u64) -> Self {
        Self {
            model,
            seed,
            packets: 300,
            max_len: 5,
            p_start: 0.3,
            p_beat: 0.8,
            p_ready: 0.7,
            saturate: false,
            p_withdraw: 0.0,
        }
    }
}

/// What a run measured.
#[derive(Debug, Clone, Default)]
pub struct ArbReport {
    pub cycles: u64,
    pub beats: usize,
    /// the choices in order (port numbers)
    pub choices: Vec<u32>,
    /// most choices of other ports a waiting port saw
    pub max_wait: u32,
    /// cycles with the sink ready and nothing offered
    pub bubbles: u64,
    /// offers withdrawn by the port holding the choice
    pub released: usize,
}

struct Port {
    /// packets still to send
    todo: VecDeque<Vec<u128>>,
    /// packet being sent and the index of its next beat
    cur: Option<(Vec<u128>, usize)>,
    offering: bool,
    /// beats taken in and not yet out
    inside: VecDeque<(u128, bool)>,
    /// choices of other ports while this one waited
    wait: u32,
}

impl Port {
    fn beat(&self) -> (u128, bool) {
        let (p, i) = self.cur.as_ref().unwrap();
        (p[*i], *i + 1 == p.len())
    }
}

/// The choice the arbiter must make among `valid`.
fn pick(valid: u32, ports: u32, rr: bool, last: u32) -> u32 {
    if !rr {
        return valid.trailing_zeros();
    }
    (1..=ports)
        .map(|k| (last + k) % ports)
        .find(|p| valid >> p & 1 != 0)
        .unwrap()
}

fn same_out(a: &PortsOut, b: &PortsOut) -> bool {
    a.m_valid == b.m_valid && a.m_data == b.m_data && a.m_last == b.m_last && a.m_sel == b.m_sel
}

/// Runs one configuration; every check above, every cycle.
pub fn run(cfg: &ArbCfg) -> Result<ArbReport, Fail> {
    let mut m = Model::new(cfg.model, cfg.seed as u32).map_err(Fail)?;
    let c = *m.config();
    assert_eq!(c.kind, Kind::ArbMux, "{} is not an axis_arb_mux", c.name);
    let ports = c.param("PORTS");
    let width = c.param("WIDTH");
    let rr = c.param("ROUND_ROBIN") != 0;
    let out_reg = c.param("OUT_REG") != 0;
    let w = width as usize;
    let all = (1u32 << ports) - 1;
    let mut rng = ChaCha8Rng::seed_from_u64(cfg.seed);

    let mut port: Vec<Port> = (0..ports)
        .map(|_| Port {
            todo: (0..cfg.packets)
                .map(|_| {
                    let n = rng.gen_range(1..=cfg.max_len);
                    (0..n).map(|_| mask(rng.gen::<u128>(), width)).collect()
                })
                .collect(),
            cur: None,
            offering: false,
            inside: VecDeque::new(),
            wait: 0,
        })
        .collect();
    let total: usize = port
        .iter()
        .map(|p| p.todo.iter().map(Vec::len).sum::<usize>())
        .sum();

    let reset = PortsIn {
        rst: 1,
        ..Default::default()
    };
    for _ in 0..3 {
        m.step(&reset);
    }

    let mut rep = ArbReport::default();
    let mut hold: Option<u32> = None;
    let mut last_choice = ports - 1;
    let mut out_pkt: Option<u32> = None;
    let mut prev: Option<(PortsOut, bool)> = None;
    let mut first_out = false;
    let limit = total as u64 * 40 + 1000;
    let mut cyc = 0u64;
    while rep.beats < total {
        if cyc > limit {
            fail!("cycle {cyc}: stuck with {} of {total} beats out", rep.beats);
        }
        // sources
        let mut i = PortsIn::default();
        let mut withdrew = 0u32;
        for (n, p) in port.iter_mut().enumerate() {
            if p.offering
                && p.cur.as_ref().is_some_and(|c| c.1 == 0)
                && cfg.p_withdraw > 0.0
                && rng.gen_bool(cfg.p_withdraw)
            {
                p.offering = false;
                p.wait = 0; // its next offer is a new one: the turns start again
                withdrew |= 1 << n;
            } else if !p.offering {
                let go = if p.cur.is_none() {
                    !p.todo.is_empty() && (cfg.saturate || rng.gen_bool(cfg.p_start))
                } else {
                    cfg.saturate || rng.gen_bool(cfg.p_beat)
                };
                if go {
                    if p.cur.is_none() {
                        p.cur = Some((p.todo.pop_front().unwrap(), 0));
                    }
                    p.offering = true;
                }
            }
            // a port not offering shows junk, which must not come out
            let (d, l) = if p.offering {
                p.beat()
            } else {
                (mask(rng.gen::<u128>(), width), rng.gen())
            };
            i.s_valid |= u32::from(p.offering) << n;
            i.s_last |= u32::from(l) << n;
            for b in 0..w {
                if d >> b & 1 != 0 {
                    let k = n * w + b;
                    i.s_data[k / 32] |= 1 << (k % 32);
                }
            }
        }
        let drained = port.iter().all(|p| p.todo.is_empty() && p.cur.is_none());
        let p_ready = if drained && cyc % 64 >= 32 {
            1.0
        } else {
            cfg.p_ready
        };
        let ready = rng.gen_bool(p_ready);
        i.m_ready = u8::from(ready);

        // what depends on what (peeks, no clock)
        let o = m.peek(&i);
        let mut f = i.clone();
        f.m_ready ^= 1;
        let p = m.peek(&f);
        if !same_out(&o, &p) {
            fail!("cycle {cyc}: the output changed with m_ready before the edge");
        }
        if out_reg && p.s_ready != o.s_ready {
            fail!("cycle {cyc}: s_ready changed with m_ready behind the output register");
        }
        if out_reg {
            let mut f = i.clone();
            f.s_valid ^= rng.gen_range(1..=all);
            f.s_last ^= rng.gen_range(0..=all);
            let k = rng.gen_range(0..ports as usize * w);
            f.s_data[k / 32] ^= 1 << (k % 32);
            if !same_out(&o, &m.peek(&f)) {
                fail!("cycle {cyc}: the output changed with an input behind the output register");
            }
        }

        let o2 = m.step(&i);
        if o2 != o {
            fail!("cycle {cyc}: step and peek disagree");
        }
        if o.sim_flags & 2 != 0 {
            fail!("cycle {cyc}: the model reported an error");
        }

        // inputs: s_ready only to a port that offers, at most one
        if o.s_ready & !i.s_valid != 0 || o.s_ready.count_ones() > 1 {
            fail!(
                "cycle {cyc}: s_ready {:#b} with s_valid {:#b}",
                o.s_ready,
                i.s_valid
            );
        }
        // the choice and the hold rule
        if hold.is_none() && i.s_valid != 0 {
            let ch = pick(i.s_valid, ports, rr, last_choice);
            for (n, p) in port.iter_mut().enumerate() {
                if n as u32 == ch {
                    p.wait = 0;
                } else if p.offering {
                    p.wait += 1;
                    rep.max_wait = rep.max_wait.max(p.wait);
                    if rr && p.wait > ports - 1 {
                        fail!(
                            "cycle {cyc}: port {n} waited for {} other choices (round robin: \
                             at most {})",
                            p.wait,
                            ports - 1
                        );
                    }
                }
            }
            hold = Some(ch);
            last_choice = ch;
            rep.choices.push(ch);
        }
        if let Some(h) = hold {
            if o.s_ready & !(1 << h) != 0 {
                fail!(
                    "cycle {cyc}: s_ready {:#b} while port {h} holds the choice \
                     (offered {:#b}; {} arbitration)",
                    o.s_ready,
                    i.s_valid,
                    if rr { "round-robin" } else { "fixed-priority" }
                );
            }
            if !out_reg {
                let v = i.s_valid >> h & 1 != 0;
                if (o.s_ready >> h & 1 != 0) != (v && ready) || (o.m_valid != 0) != v {
                    fail!(
                        "cycle {cyc}: port {h} holds, offers {v}, m_ready {ready}: \
                         s_ready {:#b}, m_valid {}",
                        o.s_ready,
                        o.m_valid
                    );
                }
                if v {
                    let (d, l) = port[h as usize].beat();
                    if o.m_sel as u32 != h
                        || from_words(&o.m_data[..4]) != d
                        || (o.m_last != 0) != l
                    {
                        fail!("cycle {cyc}: the output is not port {h}'s beat");
                    }
                }
            }
        } else if !out_reg && o.m_valid != 0 {
            fail!("cycle {cyc}: m_valid with no port offering");
        }
        // a withdrawn first beat gives the choice up after this cycle
        if let Some(h) = hold {
            if withdrew >> h & 1 != 0 {
                hold = None;
                rep.released += 1;
            }
        }
        // handshake in
        for (n, p) in port.iter_mut().enumerate() {
            if p.offering && o.s_ready >> n & 1 != 0 {
                let (d, l) = p.beat();
                p.inside.push_back((d, l));
                p.offering = false;
                let (pk, idx) = p.cur.as_mut().unwrap();
                *idx += 1;
                if *idx == pk.len() {
                    p.cur = None;
                }
                if l && hold == Some(n as u32) {
                    hold = None;
                }
            }
        }

        // output: stability, packets whole, every beat in order
        if let Some((p, pr)) = &prev {
            // without the output register a withdrawn offer leaves the output
            let gone = !out_reg && withdrew >> p.m_sel & 1 != 0;
            if p.m_valid != 0 && !pr && !gone && !same_out(p, &o) {
                fail!(
                    "cycle {cyc}: the beat offered last cycle and not taken changed \
                     (sel {} -> {}, valid {})",
                    p.m_sel,
                    o.m_sel,
                    o.m_valid
                );
            }
        }
        if ready && o.m_valid != 0 {
            let s = o.m_sel as u32;
            if s >= ports {
                fail!("cycle {cyc}: m_sel {s} out of range");
            }
            if let Some(cur) = out_pkt {
                if cur != s {
                    fail!("cycle {cyc}: a beat of port {s} inside a packet of port {cur}");
                }
            }
            let d = from_words(&o.m_data[..4]);
            let l = o.m_last != 0;
            match port[s as usize].inside.pop_front() {
                Some(e) if e == (d, l) => {}
                Some(e) => fail!(
                    "cycle {cyc}: port {s}: beat out ({d:#x}, last {l}), expected \
                     ({:#x}, last {}) (lost, duplicated or reordered)",
                    e.0,
                    e.1
                ),
                None => fail!("cycle {cyc}: port {s}: a beat out that was never taken in"),
            }
            out_pkt = if l { None } else { Some(s) };
            rep.beats += 1;
            first_out = true;
        } else if ready {
            rep.bubbles += 1;
            let more = port
                .iter()
                .any(|p| !p.todo.is_empty() || p.cur.is_some() || !p.inside.is_empty());
            if cfg.saturate && first_out && more {
                fail!("cycle {cyc}: the sink was ready and no beat was offered (bubble)");
            }
        }
        prev = Some((o, ready));
        cyc += 1;
    }
    for k in 0..8 {
        let o = m.step(&PortsIn {
            m_ready: 1,
            ..Default::default()
        });
        if o.m_valid != 0 || o.s_ready != 0 {
            fail!(
                "cycle {}: activity after all {total} beats came out (m_valid {}, s_ready {:#b})",
                cyc + k,
                o.m_valid,
                o.s_ready
            );
        }
    }
    rep.cycles = cyc;
    Ok(rep)
}
