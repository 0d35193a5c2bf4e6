//! Bench of `mr_table`: seeded random region commands and lookups on all
//! three ports, every cycle checked against a model of the table written in
//! the plain arithmetic of the checks (65-bit bounds, never wrapping),
//! not in the precomputed form the RTL stores:
//!
//! - a lookup (ports A and B) is granted when the key's index is below
//!   NUM_MR, the entry is valid, the whole key, the PD match, every asked
//!   access bit is granted, `mr.va <= va` and `va + len <= mr.va + mr.len`;
//!   its bus address is `mr.bus + (va - mr.va)` modulo 2^64 whatever the
//!   grant;
//! - the write guard (port C) is the same check in bus space;
//! - the entry a port answers from is the one read at the edge before
//!   (the table as it was before that edge's command), and reads as
//!   invalid when that edge rewrote it or reset the table; so is the end
//!   of a lookup's range (`va + len`) on ports A and B: their users hold
//!   key, va and len for two cycles;
//! - `reg_err` is registered: a set with an index out of range or a key
//!   whose bits 15:8 are not its index, or an unknown command; `change` is
//!   combinational: a command at an index in range.
//!
//! Stimulus aims at the edges: lookups one byte below, at and past a
//! region's start and end, regions and lookups whose end is past 2^64,
//! zero lengths, keys one low byte off, indices past NUM_MR, PDs and
//! access bits one off.
//!
//! Inputs, packed in [`PortsIn::s_data`] (32-bit words): 0 reg_key, 1-2
//! reg_va, 3 reg_len, 4-5 reg_bus, 6 `{reg_pd, reg_sel}`, 7 `{reg_cmd_valid
//! (bit 8), reg_cmd (7:4), reg_access (3:0)}`; port A 8 key, 9-10 va, 11
//! len, 12 `{access (19:16), pd (15:0)}`; port B 13-17 and port C (bus for
//! va) 18-22 the same way. Outputs: `m_data` 0-1 a_bus, 2-3 b_bus;
//! `m_valid` bits a_ok, b_ok, c_ok, reg_err, change.

use crate::{fail, Fail, Kind, Model, PortsIn};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// One run.
#[derive(Debug, Clone)]
pub struct MrCfg {
    /// configuration name (a `Kind::Mr` one)
    pub model: &'static str,
    pub seed: u64,
    pub cycles: usize,
    /// chance per cycle of a register-window command
    pub p_cmd: f64,
    /// chance per cycle of a reset
    pub p_rst: f64,
}

impl MrCfg {
    pub fn new(model: &'static str, seed: u64) -> Self {
        Self {
            model,
            seed,
            cycles: 20_000,
            p_cmd: 0.15,
            p_rst: 0.001,
        }
    }
}

/// What a run saw: enough to show the stimulus reached the edges.
#[derive(Debug, Clone, Default)]
pub struct MrReport {
    pub cycles: usize,
    /// answers granted, over ports A, B and C
    pub granted: usize,
    /// answers refused only because of the bounds (key, PD, access right)
    pub refused_on_bounds: usize,
    /// granted lookups that end exactly at the region's end
    pub exact_fit: usize,
    /// answers, granted or not, for regions or lookups ending past 2^64
    pub past_2_64: usize,
    /// commands refused (`reg_err`)
    pub cmd_errors: usize,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Entry {
    valid: bool,
    key: u32,
    va: u64,
    len: u32,
    bus: u64,
    pd: u16,
    access: u8,
}

#[derive(Debug, Clone, Copy, Default)]
struct Ask {
    key: u32,
    va: u64,
    len: u32,
    pd: u16,
    access: u8,
}

#[derive(Debug, Clone, Copy, Default)]
struct Cmd {
    valid: bool,
    cmd: u8,
    sel: u16,
    key: u32,
    va: u64,
    len: u32,
    bus: u64,
    pd: u16,
    access: u8,
}

/// The answer of one port: granted, and why not (the bounds alone). `end`
/// is the end of the range asked (ports A and B: the one asked the cycle
/// before).
fn check(num_mr: u32, e: &Entry, a: &Ask, end: u128, bus_space: bool) -> (bool, bool) {
    let key_ok = (a.key >> 8) & 0xff < num_mr
        && e.valid
        && e.key == a.key
        && e.pd == a.pd
        && e.access & a.access == a.access;
    let start = if bus_space { e.bus } else { e.va };
    let in_range = a.va >= start && end <= u128::from(start) + u128::from(e.len);
    (key_ok && in_range, key_ok && !in_range)
}

fn translate(e: &Entry, va: u64) -> u64 {
    e.bus.wrapping_add(va.wrapping_sub(e.va))
}

fn put64(w: &mut [u32], v: u64) {
    w[0] = v as u32;
    w[1] = (v >> 32) as u32;
}

fn pack(c: &Cmd, asks: &[Ask; 3], rst: bool) -> PortsIn {
    let mut i = PortsIn {
        rst: u8::from(rst),
        ..Default::default()
    };
    let w = &mut i.s_data;
    w[0] = c.key;
    put64(&mut w[1..3], c.va);
    w[3] = c.len;
    put64(&mut w[4..6], c.bus);
    w[6] = u32::from(c.sel) | (u32::from(c.pd) << 16);
    w[7] = u32::from(c.access & 0xf) | (u32::from(c.cmd & 0xf) << 4) | (u32::from(c.valid) << 8);
    for (p, a) in asks.iter().enumerate() {
        let b = 8 + 5 * p;
        w[b] = a.key;
        put64(&mut w[b + 1..b + 3], a.va);
        w[b + 3] = a.len;
        w[b + 4] = u32::from(a.pd) | (u32::from(a.access & 0xf) << 16);
    }
    i
}

/// An address near an interesting place: 0, the top of the address
/// space, or anywhere.
fn address(rng: &mut ChaCha8Rng) -> u64 {
    match rng.gen_range(0..10) {
        0..=2 => u64::MAX - rng.gen_range(0..(1u64 << 33)),
        3 => rng.gen_range(0..(1u64 << 20)),
        _ => rng.gen(),
    }
}

fn length(rng: &mut ChaCha8Rng) -> u32 {
    match rng.gen_range(0..10) {
        0 => 0,
        1 => 1,
        2 => u32::MAX,
        3..=5 => rng.gen_range(0..4096),
        _ => rng.gen(),
    }
}

/// A region command: mostly well-formed sets and removes at an index in
/// range, some out of range, with a wrong key index or an unknown command.
fn command(rng: &mut ChaCha8Rng, num_mr: u32) -> Cmd {
    let sel = if rng.gen_bool(0.9) {
        rng.gen_range(0..num_mr) as u16
    } else {
        rng.gen_range(num_mr..num_mr + 4) as u16
    };
    let idx_byte = if rng.gen_bool(0.9) {
        u32::from(sel as u8)
    } else {
        rng.gen_range(0..256)
    };
    let cmd = match rng.gen_range(0..10) {
        0..=6 => 1,
        7 | 8 => 2,
        _ => rng.gen_range(0..16),
    };
    Cmd {
        valid: true,
        cmd,
        sel,
        key: (rng.gen::<u32>() & 0xffff_00ff) | (idx_byte << 8),
        va: address(rng),
        len: length(rng),
        bus: address(rng),
        pd: rng.gen_range(0..4),
        access: rng.gen_range(0..16),
    }
}

/// A lookup aimed at entry `e` of index `idx` (or off it), on the edges of
/// its range; for the write guard (`bus_space`) in bus addresses.
fn ask(rng: &mut ChaCha8Rng, num_mr: u32, idx: u32, e: &Entry, bus_space: bool) -> Ask {
    let start = if bus_space { e.bus } else { e.va };
    let key = match rng.gen_range(0..20) {
        0 => e.key ^ (1 << rng.gen_range(0..8)),
        1 => (e.key & 0xffff_00ff) | (rng.gen_range(num_mr.min(255)..256) << 8),
        2 => rng.gen(),
        _ => (e.key & 0xffff_00ff) | (idx << 8),
    };
    // where the lookup starts and how far it goes, relative to the region
    let (off, len): (i128, i128) = match rng.gen_range(0..8) {
        0 => (-1, i128::from(rng.gen_range(0..3u32))),
        1 => (0, i128::from(e.len)),
        2 => (0, i128::from(e.len) + 1),
        3 => {
            let o = i128::from(rng.gen_range(0..=e.len));
            (o, i128::from(e.len) - o)
        }
        4 => {
            let o = i128::from(rng.gen_range(0..=e.len));
            (o, i128::from(e.len) - o + 1)
        }
        5 => (i128::from(e.len), 0),
        6 => (i128::from(rng.gen::<u32>()), i128::from(length(rng))),
        _ => (rng.gen::<i64>() as i128, i128::from(length(rng))),
    };
    let va = (i128::from(start) + off).rem_euclid(1i128 << 64) as u64;
    let len = len.clamp(0, i128::from(u32::MAX)) as u32;
    let access = if rng.gen_bool(0.85) {
        e.access & rng.gen_range(0..16)
    } else {
        rng.gen_range(0..16)
    };
    let pd = if rng.gen_bool(0.9) {
        e.pd
    } else {
        rng.gen_range(0..4)
    };
    Ask {
        key,
        va,
        len,
        pd,
        access,
    }
}

pub fn run(c: &MrCfg) -> Result<MrReport, Fail> {
    let mut m = Model::new(c.model, c.seed as u32).map_err(Fail)?;
    let cfg = *m.config();
    assert_eq!(cfg.kind, Kind::Mr, "{} is not an mr_table", cfg.name);
    let num_mr = cfg.param("NUM_MR");
    let idx_mask = num_mr.next_power_of_two().max(2) - 1;
    let mut rng = ChaCha8Rng::seed_from_u64(c.seed);
    let mut table = vec![Entry::default(); num_mr as usize];
    // the entries the three ports read at the last edge, and reg_err
    let mut ent = [Entry::default(); 3];
    let mut err = false;
    let mut asks = [Ask::default(); 3];
    let mut hold = [0u32; 3];
    let mut end_reg = [0u128; 3];
    let mut rep = MrReport::default();
    for cyc in 0..c.cycles {
        let rst = rng.gen_bool(c.p_rst);
        let cmd = if rng.gen_bool(c.p_cmd) {
            command(&mut rng, num_mr)
        } else {
            Cmd::default()
        };
        // a user holds its question for a few cycles (the executor and the
        // responder hold it two): new ones now and then
        let live: Vec<u32> = (0..num_mr).filter(|&i| table[i as usize].valid).collect();
        for p in 0..3 {
            if hold[p] > 0 {
                hold[p] -= 1;
                continue;
            }
            hold[p] = rng.gen_range(0..3);
            // mostly a live region, else any index
            let idx = if !live.is_empty() && rng.gen_bool(0.9) {
                live[rng.gen_range(0..live.len())]
            } else {
                rng.gen_range(0..num_mr)
            };
            asks[p] = ask(&mut rng, num_mr, idx, &table[idx as usize], p == 2);
        }
        let o = m.step(&pack(&cmd, &asks, rst));
        if o.sim_flags != 0 {
            fail!(
                "cycle {cyc}: the model stopped or reported an error ({:#x})",
                o.sim_flags
            );
        }
        for p in 0..3 {
            let ask_end = u128::from(asks[p].va) + u128::from(asks[p].len);
            let end = if p == 2 { ask_end } else { end_reg[p] };
            let (ok, on_bounds) = check(num_mr, &ent[p], &asks[p], end, p == 2);
            let got = o.m_valid >> p & 1 == 1;
            if got != ok {
                fail!(
                    "cycle {cyc}: port {} answered {} for {:x?} against {:x?}, expected {}",
                    ["A", "B", "C"][p],
                    if got { "granted" } else { "refused" },
                    asks[p],
                    ent[p],
                    if ok { "granted" } else { "refused" }
                );
            }
            if p < 2 {
                let bus = u64::from(o.m_data[2 * p]) | (u64::from(o.m_data[2 * p + 1]) << 32);
                let want = translate(&ent[p], asks[p].va);
                if bus != want {
                    fail!(
                        "cycle {cyc}: port {} translated {:#x} to {bus:#x}, expected {want:#x} ({:x?})",
                        ["A", "B"][p],
                        asks[p].va,
                        ent[p]
                    );
                }
            }
            let start = if p == 2 { ent[p].bus } else { ent[p].va };
            rep.granted += usize::from(ok);
            rep.refused_on_bounds += usize::from(on_bounds);
            let region_end = u128::from(start) + u128::from(ent[p].len);
            rep.exact_fit += usize::from(ok && end == region_end);
            rep.past_2_64 += usize::from(region_end >> 64 != 0 || end >> 64 != 0);
        }
        if (o.m_valid >> 3 & 1 == 1) != err {
            fail!(
                "cycle {cyc}: reg_err {}, expected {err}",
                o.m_valid >> 3 & 1
            );
        }
        let rewrite = cmd.valid && u32::from(cmd.sel) < num_mr;
        if (o.m_valid >> 4 & 1 == 1) != rewrite {
            fail!(
                "cycle {cyc}: change {}, expected {rewrite}",
                o.m_valid >> 4 & 1
            );
        }

        // the edge: each port reads its entry from the table before this
        // edge's command
        for p in 0..3 {
            let idx = (asks[p].key >> 8) & idx_mask;
            let mut e = table.get(idx as usize).copied().unwrap_or_default();
            e.valid = e.valid && !(rewrite && u32::from(cmd.sel) & idx_mask == idx) && !rst;
            ent[p] = e;
            end_reg[p] = u128::from(asks[p].va) + u128::from(asks[p].len);
        }
        err = false;
        if cmd.valid {
            let bad = u32::from(cmd.sel) >= num_mr
                || (cmd.cmd == 1 && (cmd.key >> 8) & 0xff != u32::from(cmd.sel) & 0xff)
                || (cmd.cmd != 1 && cmd.cmd != 2);
            if bad {
                err = true;
                rep.cmd_errors += 1;
            } else if cmd.cmd == 1 {
                table[cmd.sel as usize] = Entry {
                    valid: true,
                    key: cmd.key,
                    va: cmd.va,
                    len: cmd.len,
                    bus: cmd.bus,
                    pd: cmd.pd,
                    access: cmd.access,
                };
            } else {
                table[cmd.sel as usize].valid = false;
            }
        }
        if rst {
            for e in table.iter_mut() {
                e.valid = false;
            }
            err = false;
        }
        rep.cycles += 1;
    }
    Ok(rep)
}
