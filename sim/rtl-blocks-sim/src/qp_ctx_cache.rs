//! Bench of `qp_ctx_cache`, the QP context cache end to end: the directory
//! (`qp_cache`) joined to its fill and write-back engine (`qpc_fill`). Its
//! point is the cache's promise that no state is lost: whatever the core
//! writes into a pinned slot's record is what a later lookup of the QP
//! finds, wherever the record went in between (eviction, write-back, the
//! host table, a fill into another slot).
//!
//! The world, behavioural: a host table (every QP's record, REC_WORDS
//! random words; the table ends below the QP space, so that some lookups
//! are of QPs beyond it); a DMA model (descriptors taken at random, reads
//! answered after random latencies and out of order, 4 % of them with an
//! error status and junk in the buffer, a read's data taken from the table
//! when its descriptor is taken; writes applied to the table when their
//! status is given, statuses in descriptor order); the buffer RAM (the
//! engine's port, registered read, junk on the read data otherwise); the
//! record store (every slot's words; record-port reads answered in order
//! after 1 to 4 cycles, writes taken at random); traffic: lookups of a
//! working set eight times the cache with a hot set of half the cache,
//! 80 % with pin; while the world holds a pin it modifies the slot's
//! record in the store directly (a new word, as the core's modules do) and
//! remembers the QP's true record; it unpins after a random time;
//! invalidates of QPs with no lookup outstanding (destroyed: the world
//! forgets the record, the host table's is then the true one); junk on
//! every input not valid; random readiness of every output.
//!
//! Checked, from the ports:
//!
//! - an answer without error: its QP is inside the table and the slot
//!   holds exactly the QP's true record (pinned answers always; others
//!   when the slot has not been written and the QP not modified since the
//!   lookup was taken, since an answer without pin may be evicted while it
//!   waits in the answer FIFO); its qpn is the lookup's;
//! - an error answer: the QP is beyond the table, or a DMA read of its
//!   record failed a moment before (not earlier than the lookup was taken,
//!   give or take the completion's few cycles);
//! - every lookup answered once; no lookup outstanding for long (a hang);
//! - the record port: no read or write of a slot the world holds pinned,
//!   slots and words in range; the buffer port inside the buffers;
//! - DMA: every descriptor names a whole record inside the table and a
//!   buffer; a write-back writes exactly the QP's true record (its last
//!   version), read statuses name a read in flight;
//! - no read of a QP while a write-back of it has had no status; no two
//!   QPs answered in one slot while the world holds a pin of either; every
//!   output but the readies a register (a peek with other inputs every 61
//!   cycles gives the same);
//! - invalidates: refused exactly while the world holds a pin of the QP
//!   (no lookup of it is outstanding then, so it cannot be filling);
//! - at the end (pins given back, nothing invalidated any more, the engine
//!   idle, the DMA drained): every QP whose true record the world wrote is
//!   either in a slot or in the host table; then a lookup of each such QP
//!   (more evictions and write-backs) finds it, and again at rest;
//! - the counters against the world's counts: fills = ok reads + failed
//!   reads + out-of-table fills = misses; write-backs asked (directory) =
//!   write descriptors (engine) = the world's writes; hits, evictions, the
//!   queue's high-water mark within their bounds; err_proto low.
//!
//! No resets in this bench: a reset loses the cached state by design (the
//! core resets the QPs with it), and the blocks' own benches cover their
//! resets.

use crate::fill_ports::{
    msk, BufHold, Desc, FillPortsIn, FillPortsOut, Layout, Places, RecAnswers,
};
use crate::{fail, Fail, Kind, Model, PortsIn, PortsOut};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::collections::{HashMap, VecDeque};

/// One run.
#[derive(Debug, Clone)]
pub struct QccCfg {
    /// configuration name (a `Kind::QpCtxCache` one)
    pub model: &'static str,
    pub seed: u64,
    /// cycles of traffic (the drains and the final sweep come on top)
    pub cycles: usize,
}

impl QccCfg {
    pub fn new(model: &'static str, seed: u64) -> Self {
        Self {
            model,
            seed,
            cycles: 100_000,
        }
    }
}

/// What a run reached.
#[derive(Debug, Clone, Default)]
pub struct QccReport {
    pub cycles: u64,
    pub lookups: usize,
    pub pinned_answers: usize,
    /// answers without error whose slot's record was compared
    pub checked_answers: usize,
    pub err_answers: usize,
    pub oob_answers: usize,
    /// words the world changed in pinned slots
    pub modifications: usize,
    pub reads_ok: usize,
    pub read_errors: usize,
    pub writebacks: usize,
    /// ok reads of a record the world had modified (it went through a
    /// write-back and the host table and came back)
    pub refills_modified: usize,
    pub invals: usize,
    pub inval_busy: usize,
    /// invalidates that made the world forget a modified record
    pub inval_forgot: usize,
    pub stat_hits: usize,
    pub stat_misses: usize,
    pub stat_evictions: usize,
    pub stat_stalls: usize,
    pub stat_oob: usize,
    pub hwm: u32,
    /// modified records found in a slot / in the host table at the first
    /// rest (after the traffic; after the sweep every one is home)
    pub end_in_slot: usize,
    pub end_in_host: usize,
    /// write-back statuses given while a lookup of their QP waited (the
    /// re-miss whose read must wait for the write-back)
    pub remiss_on_wb: usize,
    /// peeks with other inputs that gave the same outputs
    pub peeks: usize,
}

#[derive(Clone, Copy)]
struct P {
    qpn_w: u32,
    slot_log: u32,
    missq: u32,
    id_w: u32,
    rw: usize,
    fills: usize,
    ram_w: u32,
    buf_base: u32,
}

/// The inputs of one cycle.
#[derive(Debug, Clone, Default)]
struct In {
    rst: bool,
    lk_valid: bool,
    lk_pin: bool,
    lk_qpn: u32,
    lk_id: u32,
    lk_ready: bool,
    unpin_valid: bool,
    unpin_slot: u32,
    inval_valid: bool,
    inval_qpn: u32,
    /// the table, the record, buffer and DMA ports
    fp: FillPortsIn,
}

/// Where csrc/blocks.cpp puts the ports shared with qpc_fill.
fn layout(p: &P) -> Layout {
    Layout {
        qpn_w: p.qpn_w,
        id_w: p.id_w,
        in_word: 7,
        in_bit: 5,
        out_word: 3,
        out_bit: 0,
    }
}

fn pack(i: &In, p: &P) -> PortsIn {
    let mut o = PortsIn {
        rst: i.rst as u8,
        ..PortsIn::default()
    };
    let d = &mut o.s_data;
    d[3] = (u64::from(i.lk_qpn) & msk(p.qpn_w)) as u32;
    d[4] = (u64::from(i.lk_id) & msk(p.id_w)) as u32;
    d[5] = (u64::from(i.unpin_slot) & msk(p.slot_log)) as u32;
    d[6] = (u64::from(i.inval_qpn) & msk(p.qpn_w)) as u32;
    o.s_valid = i.lk_valid as u32
        | (i.lk_pin as u32) << 1
        | (i.lk_ready as u32) << 2
        | (i.unpin_valid as u32) << 3
        | (i.inval_valid as u32) << 4;
    i.fp.pack(&layout(p), &mut o);
    o
}

/// The outputs of one cycle.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct Out {
    lk_ready: bool,
    unpin_ready: bool,
    inval_ready: bool,
    lk_valid: bool,
    lk_err: bool,
    lk_slot: u32,
    lk_qpn: u32,
    lk_id: u32,
    inval_done: bool,
    inval_busy: bool,
    sweeping: bool,
    busy: bool,
    err_proto: bool,
    /// the record, buffer and DMA ports
    fp: FillPortsOut,
    hwm: u32,
    hit: bool,
    miss: bool,
    evict: bool,
    wb: bool,
    stall: bool,
    fill: bool,
    fail: bool,
    oob: bool,
    wb_dma: bool,
}

fn unpack(o: &PortsOut, p: &P) -> Out {
    let d = &o.m_data;
    let r = |b: u32| (o.s_ready >> b) & 1 != 0;
    let l = |b: u32| (o.m_last >> b) & 1 != 0;
    Out {
        lk_ready: r(0),
        unpin_ready: r(1),
        inval_ready: r(2),
        lk_valid: r(3),
        lk_err: r(4),
        inval_done: r(5),
        inval_busy: r(6),
        sweeping: r(7),
        busy: r(8),
        err_proto: r(9),
        lk_slot: d[0],
        lk_qpn: d[1],
        lk_id: d[2],
        fp: FillPortsOut::unpack(&layout(p), o),
        hwm: d[22],
        hit: l(0),
        miss: l(1),
        evict: l(2),
        wb: l(3),
        stall: l(4),
        fill: l(5),
        fail: l(6),
        oob: l(7),
        wb_dma: o.m_sel & 1 != 0,
    }
}

/// A lookup taken, not yet answered.
struct Lk {
    qpn: u32,
    pin: bool,
    at: u64,
}

/// A pin the world holds (an answered pinned lookup).
struct Pin {
    slot: usize,
    qpn: u32,
    until: u64,
}

struct PendRd {
    id: u32,
    ram: u32,
    qpn: u32,
    data: Vec<u64>,
    err: u32,
    due: u64,
}

struct PendWr {
    qpn: u32,
    ram: u32,
    due: u64,
}

/// Traffic phase.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// random lookups, pins, modifications, invalidates
    Traffic,
    /// no new lookups; pins given back; the DMA and the engine drain
    Drain,
    /// lookups (without pin) of every QP the world modified
    Sweep,
}

/// The world's counters, to compare with the block's.
#[derive(Default)]
struct Stats {
    hit: usize,
    miss: usize,
    evict: usize,
    wb: usize,
    stall: usize,
    fill: usize,
    fail: usize,
    oob: usize,
    wb_dma: usize,
    wr_desc: usize,
    wr_status: usize,
}

/// Runs one bench; `Err` names the first failed check and its cycle.
pub fn run(cfg: &QccCfg) -> Result<QccReport, Fail> {
    let mut m = Model::new(cfg.model, cfg.seed as u32).map_err(Fail)?;
    let c = *m.config();
    assert_eq!(c.kind, Kind::QpCtxCache, "{} is not a qp_ctx_cache", c.name);
    let p = P {
        qpn_w: c.param("QPN_W"),
        slot_log: c.param("SLOT_LOG"),
        missq: c.param("MISSQ"),
        id_w: c.param("ID_W"),
        rw: c.param("REC_WORDS") as usize,
        fills: c.param("FILLS") as usize,
        ram_w: c.param("RAM_ADDR_W"),
        buf_base: c.param("BUF_BASE"),
    };
    let name = c.name;
    let rw = p.rw;
    let rb = rw as u64 * 8;
    let slots = 1usize << p.slot_log;
    let space = 1u32 << p.qpn_w;
    let mut rng = ChaCha8Rng::seed_from_u64(cfg.seed);
    let mut junk = ChaCha8Rng::seed_from_u64(cfg.seed ^ 0x0cc0_5eed);
    // the buffer port's readiness, a stream of its own so that the other
    // generators draw as they did before the port had back-pressure
    let mut buf_rdy = ChaCha8Rng::seed_from_u64(cfg.seed ^ 0xb0f_7ead);
    let mut r = QccReport::default();

    // the table: a few QPs of the space beyond it
    let qps = space - space / 16;
    let base = (rng.gen::<u64>() & 0x0000_ffff_ffff_0000) | 0x1_0000_0000;
    let mut host: Vec<Vec<u64>> = (0..qps)
        .map(|_| (0..rw).map(|_| rng.gen()).collect())
        .collect();
    let init = host.clone();
    // the world's true record of a QP it modified (None: the host table's)
    let mut truth: HashMap<u32, Vec<u64>> = HashMap::new();
    let mut store: Vec<Vec<u64>> = (0..slots)
        .map(|_| (0..rw).map(|_| junk.gen()).collect())
        .collect();
    let mut slot_wr_at = vec![0u64; slots];
    let mut mod_at: HashMap<u32, u64> = HashMap::new();
    let mut ram = vec![0u64; 1usize << (p.ram_w - 3)];
    let buf_lo = p.buf_base;
    let buf_hi = p.buf_base + (2 * p.fills as u64 * rb) as u32;
    let places = Places {
        base,
        qps,
        rec_bytes: rb,
        buf_base: p.buf_base,
        areas: 2 * p.fills,
    };

    // traffic: a working set of eight times the cache with a hot set of
    // half of it; the working set reaches beyond the table
    let ws = (slots * 8).min(space as usize) as u32;
    let ws_base = qps.saturating_sub(ws - ws / 16);
    let hot: Vec<u32> = (0..(slots / 2).max(2))
        .map(|_| ws_base + rng.gen_range(0..ws))
        .collect();

    let mut lks: HashMap<u32, Lk> = HashMap::new();
    let mut lk_of_qp: HashMap<u32, usize> = HashMap::new();
    let mut next_id = 0u32;
    let id_n = 1u32 << p.id_w.min(16);
    let mut offer: Option<(u32, bool, u32)> = None; // qpn, pin, id
    let mut pins: Vec<Pin> = Vec::new();
    let mut pins_of_qp: HashMap<u32, usize> = HashMap::new();
    let mut unpin_offer: Option<usize> = None; // index into pins
    let mut inval_offer: Option<u32> = None;
    let mut inval_wait: Option<(u32, bool)> = None; // qpn, busy expected
                                                    // a QP's failed reads: (the read's status, the first error answer of
                                                    // the QP from then on, which ends the failed fill's answers)
    let mut read_err_at: HashMap<u32, Vec<(u64, Option<u64>)>> = HashMap::new();

    let mut rec_rd_q = RecAnswers::default();
    let mut buf_rd_next: Option<u64> = None;
    let mut buf_hold = BufHold::default();
    let mut rds: Vec<PendRd> = Vec::new();
    let mut wrs: VecDeque<PendWr> = VecDeque::new();
    let mut st = Stats::default();

    let mut phase = Phase::Traffic;
    let mut sweep_list: Vec<u32> = Vec::new();
    let mut sweeps_done = 0;
    let mut quiet = 0u32;
    let mut phase_start = 0u64;
    // moods: the rates change every few thousand cycles
    let mut lk_rate = 0.5f64;
    let mut rdy_rate = 0.8f64;

    let step = |m: &mut Model, i: &In| -> Out { unpack(&m.step(&pack(i, &p)), &p) };
    let table = FillPortsIn {
        base,
        qps,
        ..FillPortsIn::default()
    };
    for _ in 0..2 {
        step(
            &mut m,
            &In {
                rst: true,
                fp: table.clone(),
                ..In::default()
            },
        );
    }
    let mut cyc = 0u64;
    loop {
        cyc += 1;
        if cyc % 3000 == 1 {
            lk_rate = [0.2, 0.5, 0.9][rng.gen_range(0..3)];
            rdy_rate = [0.5, 0.8, 1.0][rng.gen_range(0..3)];
        }
        if phase == Phase::Traffic && cyc as usize >= cfg.cycles {
            phase = Phase::Drain;
            phase_start = cyc;
        }
        if cyc - phase_start > 200_000 {
            fail!("{name}: cycle {cyc}: the drain does not end (a hang)");
        }

        // ---------------------------------------------------- the offers
        if offer.is_none() && lks.len() < 32 {
            let want = match phase {
                Phase::Traffic => rng.gen_bool(lk_rate),
                Phase::Sweep => !sweep_list.is_empty() && rng.gen_bool(0.5),
                Phase::Drain => false,
            };
            if want {
                let q = if phase == Phase::Sweep {
                    sweep_list.pop().unwrap()
                } else if rng.gen_bool(0.7) {
                    hot[rng.gen_range(0..hot.len())]
                } else {
                    ws_base + rng.gen_range(0..ws)
                };
                let q = q % space;
                let busy_inval = inval_offer == Some(q) || inval_wait.is_some_and(|w| w.0 == q);
                if !busy_inval {
                    while lks.contains_key(&next_id) {
                        next_id = (next_id + 1) % id_n;
                    }
                    let pin = phase == Phase::Traffic && rng.gen_bool(0.8);
                    offer = Some((q, pin, next_id));
                    next_id = (next_id + 1) % id_n;
                }
            }
        }
        // pins given back when due (in the drain at once)
        if unpin_offer.is_none() {
            if let Some(k) =
                (0..pins.len()).find(|&k| pins[k].until <= cyc || phase != Phase::Traffic)
            {
                unpin_offer = Some(k);
            }
        }
        // an invalidate now and then: a QP with no lookup outstanding
        if phase == Phase::Traffic
            && inval_offer.is_none()
            && inval_wait.is_none()
            && rng.gen_ratio(1, 150)
        {
            let q = if rng.gen_bool(0.5) {
                hot[rng.gen_range(0..hot.len())]
            } else {
                ws_base + rng.gen_range(0..ws)
            } % space;
            if !lk_of_qp.contains_key(&q) && offer.is_none_or(|o| o.0 != q) {
                inval_offer = Some(q);
            }
        }

        // ---------------------------------------------------- the inputs
        // (each generator drawn in the order it always was)
        let lk_ready = rng.gen_bool(rdy_rate);
        let rdy: [bool; 4] = std::array::from_fn(|_| rng.gen_bool(rdy_rate));
        let mut i = In {
            lk_ready,
            lk_qpn: junk.gen(),
            lk_id: junk.gen(),
            lk_pin: junk.gen(),
            unpin_slot: junk.gen(),
            inval_qpn: junk.gen(),
            fp: FillPortsIn {
                rec_rd_ready: rdy[0],
                rec_wr_ready: rdy[1],
                rd_desc_ready: rdy[2],
                wr_desc_ready: rdy[3],
                // the staging RAM's ports, which the DMA engines go first on
                buf_wr_ready: buf_rdy.gen_bool(rdy_rate),
                buf_rd_ready: buf_rdy.gen_bool(rdy_rate),
                rec_rd_data: junk.gen(),
                buf_rd_data: junk.gen(),
                rd_status_id: junk.gen(),
                rd_status_error: junk.gen(),
                ..table.clone()
            },
            ..In::default()
        };
        if let Some((q, pin, id)) = offer {
            i.lk_valid = true;
            i.lk_qpn = q;
            i.lk_pin = pin;
            i.lk_id = id;
        }
        if let Some(k) = unpin_offer {
            i.unpin_valid = true;
            i.unpin_slot = pins[k].slot as u32;
        }
        if let Some(q) = inval_offer {
            i.inval_valid = true;
            i.inval_qpn = q;
        }
        if let Some(d) = rec_rd_q.pop(cyc) {
            i.fp.rec_rd_data_valid = true;
            i.fp.rec_rd_data = d;
        }
        if let Some(d) = buf_rd_next.take() {
            i.fp.buf_rd_data = d;
        }
        // a read status: any read due, out of order
        let due: Vec<usize> = (0..rds.len()).filter(|&k| rds[k].due <= cyc).collect();
        let mut rd_st: Option<PendRd> = None;
        if !due.is_empty() && rng.gen_bool(0.7) {
            let k = due[rng.gen_range(0..due.len())];
            let pr = rds.swap_remove(k);
            i.fp.rd_status_valid = true;
            i.fp.rd_status_id = pr.id;
            i.fp.rd_status_error = pr.err;
            rd_st = Some(pr);
        }
        // a write status: the oldest write, in order
        let mut wr_st: Option<PendWr> = None;
        if wrs.front().is_some_and(|w| w.due <= cyc) && rng.gen_bool(0.7) {
            i.fp.wr_status_valid = true;
            wr_st = wrs.pop_front();
        }

        // the outputs but the readies are registers: a peek with other
        // inputs gives the same (the readies follow the valids of the
        // higher-priority operations, by design)
        if cyc % 61 == 0 {
            let (jbase, jqps) = (junk.gen(), junk.gen());
            let j = In {
                rst: false,
                lk_valid: junk.gen(),
                lk_pin: junk.gen(),
                lk_qpn: junk.gen(),
                lk_id: junk.gen(),
                lk_ready: junk.gen(),
                unpin_valid: junk.gen(),
                unpin_slot: junk.gen(),
                inval_valid: junk.gen(),
                inval_qpn: junk.gen(),
                fp: FillPortsIn::random(&mut junk, jbase, jqps),
            };
            let regs = |o: Out| Out {
                lk_ready: false,
                unpin_ready: false,
                inval_ready: false,
                ..o
            };
            let a = regs(unpack(&m.peek(&pack(&i, &p)), &p));
            let b = regs(unpack(&m.peek(&pack(&j, &p)), &p));
            if a != b {
                fail!(
                    "{name}: cycle {cyc}: an output follows the inputs combinationally:\n\
                     {a:?}\n{b:?}"
                );
            }
            r.peeks += 1;
        }
        let o = step(&mut m, &i);

        // ---------------------------------------------------- checks
        if o.err_proto {
            fail!("{name}: cycle {cyc}: err_proto high");
        }
        if o.sweeping && cyc > 2 * slots as u64 + 8 {
            fail!("{name}: cycle {cyc}: sweeping with no reset");
        }
        // the DMA statuses given this cycle take effect
        if let Some(pr) = rd_st {
            for (k, w) in pr.data.iter().enumerate() {
                ram[(pr.ram / 8) as usize + k] = *w;
            }
            if pr.err != 0 {
                r.read_errors += 1;
                read_err_at.entry(pr.qpn).or_default().push((cyc, None));
            } else {
                r.reads_ok += 1;
                if host[pr.qpn as usize] != init[pr.qpn as usize] {
                    r.refills_modified += 1;
                }
            }
        }
        if let Some(w) = wr_st {
            let q = w.qpn;
            let a = (w.ram / 8) as usize;
            let data = ram[a..a + rw].to_vec();
            if let Some(t) = truth.get(&q) {
                if *t != data {
                    fail!(
                        "{name}: cycle {cyc}: the write-back of QP {q} writes {data:x?}, \
                         its true record is {t:x?}"
                    );
                }
            }
            host[q as usize] = data;
            r.remiss_on_wb += lk_of_qp.contains_key(&q) as usize;
            st.wr_status += 1;
            r.writebacks += 1;
        }
        // the buffer port: a request waits, unchanged, for its ready
        if let Err(e) = buf_hold.check(&o.fp, &i.fp) {
            fail!("{name}: cycle {cyc}: {e}");
        }
        if o.fp.buf_wr_en && i.fp.buf_wr_ready {
            let a = o.fp.buf_wr_addr;
            if a % 8 != 0 || a < buf_lo || a >= buf_hi {
                fail!("{name}: cycle {cyc}: buffer write at {a:#x}, outside the buffers");
            }
            ram[(a / 8) as usize] = o.fp.buf_wr_data;
        }
        if o.fp.buf_rd_en && i.fp.buf_rd_ready {
            let a = o.fp.buf_rd_addr;
            if a % 8 != 0 || a < buf_lo || a >= buf_hi {
                fail!("{name}: cycle {cyc}: buffer read at {a:#x}, outside the buffers");
            }
            buf_rd_next = Some(ram[(a / 8) as usize]);
        }
        // the record port
        if o.fp.rec_rd_valid && i.fp.rec_rd_ready {
            let (s, w) = (o.fp.rec_rd_slot as usize, o.fp.rec_rd_word as usize);
            if s >= slots || w >= rw {
                fail!("{name}: cycle {cyc}: record read of slot {s} word {w}");
            }
            if let Some(pn) = pins.iter().find(|x| x.slot == s) {
                fail!(
                    "{name}: cycle {cyc}: record read of slot {s}, which the world holds \
                     pinned (QP {})",
                    pn.qpn
                );
            }
            rec_rd_q.push(cyc, rng.gen_range(1..=4), store[s][w]);
        }
        if o.fp.rec_wr_valid && i.fp.rec_wr_ready {
            let (s, w) = (o.fp.rec_wr_slot as usize, o.fp.rec_wr_word as usize);
            if s >= slots || w >= rw {
                fail!("{name}: cycle {cyc}: record write of slot {s} word {w}");
            }
            if let Some(pn) = pins.iter().find(|x| x.slot == s) {
                fail!(
                    "{name}: cycle {cyc}: record write of slot {s}, which the world holds \
                     pinned (QP {})",
                    pn.qpn
                );
            }
            store[s][w] = o.fp.rec_wr_data;
            slot_wr_at[s] = cyc;
        }
        // DMA descriptors: a whole record of the table, a buffer (the
        // checks qpc_fill's bench makes too), then the buffers and ids in use
        let check_desc = |d: Desc| {
            places
                .check_desc(&d)
                .map(|(q, _)| q)
                .map_err(|e| Fail(format!("{name}: cycle {cyc}: DMA: {e}")))
        };
        if o.fp.rd_valid && i.fp.rd_desc_ready {
            let q = check_desc(Desc::read(&o.fp))?;
            if rds
                .iter()
                .any(|x| x.id == o.fp.rd_id || x.ram == o.fp.rd_ram)
                || wrs.iter().any(|x| x.ram == o.fp.rd_ram)
            {
                fail!(
                    "{name}: cycle {cyc}: DMA read of QP {q} (id {}) into a buffer or id in use",
                    o.fp.rd_id
                );
            }
            if wrs.iter().any(|w| w.qpn == q) {
                fail!(
                    "{name}: cycle {cyc}: DMA read of QP {q} while its write-back has had no \
                     status"
                );
            }
            let err = if rng.gen_ratio(1, 25) {
                rng.gen_range(1..16)
            } else {
                0
            };
            let data = if err != 0 {
                (0..rw).map(|_| junk.gen()).collect()
            } else {
                host[q as usize].clone()
            };
            rds.push(PendRd {
                id: o.fp.rd_id,
                ram: o.fp.rd_ram,
                qpn: q,
                data,
                err,
                due: cyc + rng.gen_range(2..40),
            });
        }
        if o.fp.wr_valid && i.fp.wr_desc_ready {
            let q = check_desc(Desc::write_back(&o.fp))?;
            if rds.iter().any(|x| x.ram == o.fp.wr_ram) || wrs.iter().any(|x| x.ram == o.fp.wr_ram)
            {
                fail!("{name}: cycle {cyc}: DMA write of QP {q} from a buffer in use");
            }
            let last = wrs.back().map_or(0, |w| w.due);
            wrs.push_back(PendWr {
                qpn: q,
                ram: o.fp.wr_ram,
                due: (cyc + rng.gen_range(2..30)).max(last),
            });
            st.wr_desc += 1;
        }
        // counters
        st.hit += o.hit as usize;
        st.miss += o.miss as usize;
        st.evict += o.evict as usize;
        st.wb += o.wb as usize;
        st.stall += o.stall as usize;
        st.fill += o.fill as usize;
        st.fail += o.fail as usize;
        st.oob += o.oob as usize;
        st.wb_dma += o.wb_dma as usize;
        if o.hwm > p.missq {
            fail!("{name}: cycle {cyc}: high-water mark {} > MISSQ", o.hwm);
        }
        r.hwm = o.hwm;

        // lookups taken
        if let Some((q, pin, id)) = offer {
            if o.lk_ready {
                lks.insert(
                    id,
                    Lk {
                        qpn: q,
                        pin,
                        at: cyc,
                    },
                );
                *lk_of_qp.entry(q).or_default() += 1;
                offer = None;
                r.lookups += 1;
            }
        }
        // answers
        if o.lk_valid && i.lk_ready {
            let id = o.lk_id;
            let Some(l) = lks.remove(&id) else {
                fail!("{name}: cycle {cyc}: an answer with id {id}, no such lookup outstanding");
            };
            let q = l.qpn;
            let n = lk_of_qp.get_mut(&q).unwrap();
            *n -= 1;
            if *n == 0 {
                lk_of_qp.remove(&q);
            }
            if o.lk_qpn != q {
                fail!(
                    "{name}: cycle {cyc}: the answer of lookup {id} (QP {q}) names QP {}",
                    o.lk_qpn
                );
            }
            if o.lk_err {
                r.err_answers += 1;
                if q >= qps {
                    r.oob_answers += 1;
                } else {
                    // the lookup waited for a fill whose read failed: it
                    // was taken before that fill answered (its read fails
                    // while its write-back may still run: qpc_fill issues
                    // the read first), or within 64 cycles of the failure
                    let recent = read_err_at.get_mut(&q).is_some_and(|v| {
                        let ok = v
                            .iter()
                            .any(|&(t, first)| l.at <= (t + 64).max(first.unwrap_or(cyc) + 8));
                        for (_, first) in v.iter_mut() {
                            first.get_or_insert(cyc);
                        }
                        ok
                    });
                    if !recent {
                        fail!(
                            "{name}: cycle {cyc}: an error answer for QP {q} (lookup taken at \
                             {}), whose record no read failed to fetch",
                            l.at
                        );
                    }
                }
            } else {
                let s = o.lk_slot as usize;
                if q >= qps {
                    fail!("{name}: cycle {cyc}: QP {q} beyond the table answered slot {s}");
                }
                let want = truth.get(&q).unwrap_or(&host[q as usize]);
                let stale =
                    !l.pin && (slot_wr_at[s] >= l.at || mod_at.get(&q).is_some_and(|&t| t >= l.at));
                if !stale {
                    if store[s] != *want {
                        fail!(
                            "{name}: cycle {cyc}: QP {q} answered slot {s} (pin {}), which holds \
                             {:x?}; the QP's true record is {want:x?}",
                            l.pin,
                            store[s]
                        );
                    }
                    r.checked_answers += 1;
                }
                if let Some(x) = pins.iter().find(|x| (x.slot == s) != (x.qpn == q)) {
                    fail!(
                        "{name}: cycle {cyc}: QP {q} answered slot {s} while the world holds a \
                         pin of QP {} in slot {}",
                        x.qpn,
                        x.slot
                    );
                }
                if l.pin {
                    r.pinned_answers += 1;
                    let until = cyc + rng.gen_range(1..200);
                    pins.push(Pin {
                        slot: s,
                        qpn: q,
                        until,
                    });
                    *pins_of_qp.entry(q).or_default() += 1;
                }
            }
        }
        // unpins taken
        if let Some(k) = unpin_offer {
            if o.unpin_ready {
                let pn = pins.swap_remove(k);
                let n = pins_of_qp.get_mut(&pn.qpn).unwrap();
                *n -= 1;
                if *n == 0 {
                    pins_of_qp.remove(&pn.qpn);
                }
                unpin_offer = None;
            }
        }
        // invalidates
        if let Some(q) = inval_offer {
            if o.inval_ready {
                inval_wait = Some((q, pins_of_qp.contains_key(&q)));
                inval_offer = None;
                r.invals += 1;
            }
        }
        if o.inval_done {
            let Some((q, busy)) = inval_wait.take() else {
                fail!("{name}: cycle {cyc}: m_inval_done with no invalidate taken");
            };
            if o.inval_busy != busy {
                fail!(
                    "{name}: cycle {cyc}: invalidate of QP {q}: busy {}, the world holds {} \
                     pins of it and no lookup",
                    o.inval_busy,
                    pins_of_qp.get(&q).copied().unwrap_or(0)
                );
            }
            if busy {
                r.inval_busy += 1;
            } else if truth.remove(&q).is_some() {
                r.inval_forgot += 1;
            }
        }
        // hangs
        if let Some((id, l)) = lks.iter().find(|(_, l)| l.at + 20_000 < cyc) {
            fail!(
                "{name}: cycle {cyc}: lookup {id} of QP {} taken at {} not answered",
                l.qpn,
                l.at
            );
        }

        // ---------------------------------------------------- the core
        // changes records of pinned slots (after this cycle's edge: the
        // block saw the store as it was)
        if !pins.is_empty() && rng.gen_bool(0.3) {
            let k = rng.gen_range(0..pins.len());
            let (s, q) = (pins[k].slot, pins[k].qpn);
            let w = rng.gen_range(0..rw);
            store[s][w] = rng.gen();
            truth.insert(q, store[s].clone());
            mod_at.insert(q, cyc);
            r.modifications += 1;
        }

        // ---------------------------------------------------- phases
        let idle = lks.is_empty()
            && offer.is_none()
            && pins.is_empty()
            && unpin_offer.is_none()
            && inval_offer.is_none()
            && inval_wait.is_none()
            && rds.is_empty()
            && wrs.is_empty()
            && rec_rd_q.is_empty()
            && !o.busy
            && (phase != Phase::Sweep || sweep_list.is_empty());
        quiet = if idle { quiet + 1 } else { 0 };
        if phase != Phase::Traffic && quiet >= 16 {
            // at rest: every record the world wrote is in a slot or home
            for (&q, t) in &truth {
                let first = sweeps_done == 0;
                if host[q as usize] == *t {
                    r.end_in_host += first as usize;
                } else if store.iter().any(|s| s == t) {
                    r.end_in_slot += first as usize;
                } else {
                    fail!(
                        "{name}: cycle {cyc}: at rest, QP {q}'s true record {t:x?} is in no slot \
                         and not in the host table ({:x?})",
                        host[q as usize]
                    );
                }
            }
            if sweeps_done == 1 {
                break;
            }
            sweeps_done += 1;
            sweep_list = truth.keys().copied().collect();
            sweep_list.sort_unstable();
            for k in (1..sweep_list.len()).rev() {
                sweep_list.swap(k, rng.gen_range(0..=k));
            }
            phase = Phase::Sweep;
            phase_start = cyc;
            quiet = 0;
        }
    }
    r.cycles = cyc;

    // the counters against the world
    let fills = st.fill + st.fail;
    if st.miss != fills {
        fail!("{name}: {} misses counted, {fills} fills done", st.miss);
    }
    if st.fill != r.reads_ok {
        fail!(
            "{name}: {} fills ok counted, {} reads ok",
            st.fill,
            r.reads_ok
        );
    }
    if st.fail != r.read_errors + st.oob {
        fail!(
            "{name}: {} fills failed counted, {} read errors + {} out of the table",
            st.fail,
            r.read_errors,
            st.oob
        );
    }
    if st.oob > r.oob_answers || (r.oob_answers > 0) != (st.oob > 0) {
        fail!(
            "{name}: {} out-of-table fills counted, {} out-of-table answers",
            st.oob,
            r.oob_answers
        );
    }
    if st.wb != st.wb_dma || st.wb != st.wr_desc || st.wr_desc != st.wr_status {
        fail!(
            "{name}: write-backs: {} asked, {} counted by the engine, {} descriptors, {} done",
            st.wb,
            st.wb_dma,
            st.wr_desc,
            st.wr_status
        );
    }
    if st.evict < st.wb || st.evict > st.miss {
        fail!(
            "{name}: {} evictions, {} write-backs, {} misses",
            st.evict,
            st.wb,
            st.miss
        );
    }
    let answers = r.lookups;
    if st.hit + r.err_answers > answers || st.hit + st.miss > r.lookups {
        fail!(
            "{name}: {} hits and {} misses counted, {} lookups, {} error answers",
            st.hit,
            st.miss,
            r.lookups,
            r.err_answers
        );
    }
    if st.miss > 0 && r.hwm == 0 {
        fail!("{name}: misses waited, the high-water mark is 0");
    }
    r.stat_hits = st.hit;
    r.stat_misses = st.miss;
    r.stat_evictions = st.evict;
    r.stat_stalls = st.stall;
    r.stat_oob = st.oob;
    Ok(r)
}
