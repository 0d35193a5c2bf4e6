//! Bench of `qpc_fill`, the fill and write-back engine of the QP context
//! cache: a fill command (slot, qpn, wb, wb_qpn) writes the slot's record
//! back to wb_qpn's place in the host table (if wb), then reads qpn's
//! record from the table into the slot, through DMA and a record buffer per
//! fill in flight; one completion (slot, ok) for both.
//!
//! The world is behavioural: a host table (random initial records, base
//! and size new at every reset, the size sometimes the whole QP space); a
//! DMA model (descriptors taken at random, reads answered after random
//! latencies and out of order, 5 % of them with an error status and junk
//! written to the buffer, writes answered in descriptor order, the buffer
//! read only when the write's status is given, i.e. as late as the engine
//! may reuse it); the buffer RAM (read data one cycle after the read, junk
//! otherwise); the slot record RAMs with a read latency of 1 to 4 cycles
//! (answers in order) and random write readiness; traffic that changes the
//! records of cached QPs (which makes them dirty); fill commands made as
//! qp_cache makes them (never a slot whose fill runs, never a QP cached or
//! filling, wb when the slot's QP is dirty and sometimes when clean, wb_qpn
//! the QP last filled ok into the slot; the QP just evicted missed again at
//! once on purpose; some QPs beyond the table); junk on every input not
//! valid; moods that change the rates; resets with work in flight.
//!
//! Checked, from the ports:
//!
//! - a completion names a slot with a fill in flight (each fill done once);
//!   ok = 1 exactly when the QP is in the table and its read's status was
//!   ok; then the slot holds exactly the host's record of the QP (a record
//!   the bench wrote back a moment ago included); with ok = 0 the slot
//!   holds what it held when the fill was taken; no completion before the
//!   read's status, nor before the fill's write-back's status;
//! - a write descriptor is one the fills asked for (wb_qpn's record, whole,
//!   from a buffer no other DMA uses); what it writes (read from the buffer
//!   when its status is given) is exactly the slot's words when its fill
//!   was taken;
//! - a read descriptor names a QP with a fill waiting for its read, inside
//!   the table (no DMA outside [base, base + qps * REC_BYTES)), whole, into
//!   a buffer no other DMA uses; no read of a QP while a write-back of it
//!   (of a fill taken) has not had its status;
//! - the record port: reads only of a slot whose fill's write-back copy may
//!   run (taken, write descriptor not yet seen), writes only to a slot
//!   whose fill's read has had an ok status; the buffer port: inside the
//!   buffers, never a buffer a DMA uses, never a write and a read in one
//!   cycle;
//! - busy exactly while a fill is taken and not done; s_fill_ready only
//!   with a buffer free; err_proto low (and high after a stray status, in
//!   a directed start); the counters against the completions and the
//!   write descriptors whenever the engine is idle; the outputs are
//!   registers (a peek with other inputs gives the same); no fill in flight
//!   for more than a long while (a hang), every fill done at the end.

use crate::fill_ports::{
    msk, BufHold, Desc, FillPortsIn, FillPortsOut, Layout, Places, RecAnswers,
};
use crate::{fail, Fail, Kind, Model, PortsIn, PortsOut};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::collections::{HashMap, HashSet, VecDeque};

/// One run.
#[derive(Debug, Clone)]
pub struct QfCfg {
    /// configuration name (a `Kind::QpcFill` one)
    pub model: &'static str,
    pub seed: u64,
    pub cycles: usize,
    pub resets: usize,
}

impl QfCfg {
    pub fn new(model: &'static str, seed: u64) -> Self {
        Self {
            model,
            seed,
            cycles: 20_000,
            resets: 4,
        }
    }
}

/// What a run reached.
#[derive(Debug, Clone, Default)]
pub struct QfReport {
    pub cycles: u64,
    pub fills: usize,
    pub fills_ok: usize,
    pub read_errors: usize,
    pub oob: usize,
    pub writebacks: usize,
    /// fills taken of a QP whose write-back (of another fill) had not had
    /// its status yet: the hazard
    pub hazards: usize,
    /// fills that wrote their slot's QP back and loaded it again (a save:
    /// the read waits for its own write-back's status)
    pub saves: usize,
    /// cycles a fill of such a QP waited for that status with its buffer
    /// ready to read
    pub hazard_waits: usize,
    pub max_in_flight: usize,
    /// most read statuses answered out of descriptor order, in a row
    pub reads_reordered: usize,
    pub resets: usize,
    pub resets_busy: usize,
    pub peeks: usize,
}

/// The block's parameters.
#[derive(Clone, Copy)]
struct P {
    qpn_w: u32,
    slot_log: u32,
    rw: usize,
    fills: usize,
    id_w: u32,
    len_w: u32,
    ram_w: u32,
    buf_base: u32,
}

impl P {
    fn rec_bytes(&self) -> u64 {
        self.rw as u64 * 8
    }
    /// buffer half holding RAM byte address a (8-byte aligned), if any
    /// (buffer b's write-back half is 2b, its read half 2b + 1)
    fn buf_holding(&self, a: u32) -> Option<usize> {
        let off = a.checked_sub(self.buf_base)?;
        let rb = self.rw as u32 * 8;
        (a % 8 == 0 && ((off / rb) as usize) < 2 * self.fills).then_some((off / rb) as usize)
    }
}

/// The inputs of one cycle.
#[derive(Debug, Clone, Default)]
struct In {
    rst: bool,
    fill_valid: bool,
    fill_slot: u32,
    fill_qpn: u32,
    fill_wb: bool,
    fill_wb_qpn: u32,
    done_ready: bool,
    /// the table, the record, buffer and DMA ports
    fp: FillPortsIn,
}

/// Where csrc/blocks.cpp puts the ports shared with qp_ctx_cache.
fn layout(p: &P) -> Layout {
    Layout {
        qpn_w: p.qpn_w,
        id_w: p.id_w,
        in_word: 6,
        in_bit: 3,
        out_word: 1,
        out_bit: 2,
    }
}

fn pack(i: &In, p: &P) -> PortsIn {
    let mut o = PortsIn {
        rst: i.rst as u8,
        ..PortsIn::default()
    };
    let d = &mut o.s_data;
    d[3] = (u64::from(i.fill_slot) & msk(p.slot_log)) as u32;
    d[4] = (u64::from(i.fill_qpn) & msk(p.qpn_w)) as u32;
    d[5] = (u64::from(i.fill_wb_qpn) & msk(p.qpn_w)) as u32;
    o.s_valid = i.fill_valid as u32 | (i.fill_wb as u32) << 1 | (i.done_ready as u32) << 2;
    i.fp.pack(&layout(p), &mut o);
    o
}

/// The outputs of one cycle.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct Out {
    fill_ready: bool,
    done_valid: bool,
    done_slot: u32,
    done_ok: bool,
    /// the record, buffer and DMA ports
    fp: FillPortsOut,
    stat_fill: bool,
    stat_wb: bool,
    stat_fail: bool,
    stat_oob: bool,
    busy: bool,
    err_proto: bool,
}

fn unpack(o: &PortsOut, p: &P) -> Out {
    let v = |b: u32| (o.m_valid >> b) & 1 != 0;
    let l = |b: u32| (o.m_last >> b) & 1 != 0;
    Out {
        fill_ready: o.s_ready & 1 != 0,
        done_valid: v(0),
        done_slot: o.m_data[0],
        done_ok: v(1),
        fp: FillPortsOut::unpack(&layout(p), o),
        stat_fill: l(0),
        stat_wb: l(1),
        stat_fail: l(2),
        stat_oob: l(3),
        busy: l(4),
        err_proto: l(5),
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Rd {
    NotIssued,
    Issued,
    Ok,
    Err,
}

/// A fill command offered or in flight.
#[derive(Debug, Clone)]
struct Fill {
    slot: usize,
    qpn: u32,
    wb: Option<u32>,
    /// the slot's words when the command was made (no traffic since)
    before: Vec<u64>,
    /// its write descriptor seen; its write's status seen
    wb_issued: bool,
    wb_done: bool,
    rd: Rd,
    taken_at: u64,
}

/// A slot as qp_cache would see it.
#[derive(Debug, Clone, Default)]
struct Slot {
    owner: Option<u32>,
    dirty: bool,
    filling: bool,
}

struct PendRd {
    slot: usize,
    id: u32,
    buf: usize,
    data: Vec<u64>,
    err: u32,
    due: u64,
    order: u64,
}

struct PendWr {
    qpn: u32,
    buf: usize,
    want: Vec<u64>,
    due: u64,
}

/// Every input random (the peeks' other inputs).
fn random_in(junk: &mut ChaCha8Rng, rst: bool) -> In {
    let (base, qps) = (junk.gen(), junk.gen());
    In {
        rst,
        fill_valid: junk.gen(),
        fill_slot: junk.gen(),
        fill_qpn: junk.gen(),
        fill_wb: junk.gen(),
        fill_wb_qpn: junk.gen(),
        done_ready: junk.gen(),
        fp: FillPortsIn::random(junk, base, qps),
    }
}

/// The host table's initial record words (a hash of seed, QP and word).
fn init_word(seed: u64, q: u32, w: usize) -> u64 {
    let mut x = seed ^ (u64::from(q) << 20) ^ (w as u64) ^ 0x9e37_79b9_7f4a_7c15;
    for _ in 0..3 {
        x ^= x >> 31;
        x = x.wrapping_mul(0xbf58_476d_1ce4_e5b9);
        x ^= x >> 29;
    }
    x
}

/// Runs one configuration; every check above, every cycle.
pub fn run(cfg: &QfCfg) -> Result<QfReport, Fail> {
    let mut m = Model::new(cfg.model, cfg.seed as u32).map_err(Fail)?;
    let c = *m.config();
    assert_eq!(c.kind, Kind::QpcFill, "{} is not a qpc_fill", c.name);
    let p = P {
        qpn_w: c.param("QPN_W"),
        slot_log: c.param("SLOT_LOG"),
        rw: c.param("REC_WORDS") as usize,
        fills: c.param("FILLS") as usize,
        id_w: c.param("ID_W"),
        len_w: c.param("LEN_W"),
        ram_w: c.param("RAM_ADDR_W"),
        buf_base: c.param("BUF_BASE"),
    };
    let rw = p.rw;
    let rb = p.rec_bytes();
    assert!(
        rb < 1 << p.len_w
            && u64::from(p.buf_base) + 2 * p.fills as u64 * rb <= 1 << p.ram_w
            && p.fills <= 1 << p.id_w
    );
    let mut rng = ChaCha8Rng::seed_from_u64(cfg.seed);
    let mut junk = ChaCha8Rng::seed_from_u64(cfg.seed ^ 0x7a11);
    let mut r = QfReport::default();

    // the directed start: a write-back of a QP beyond the table (dropped:
    // its state is lost) or a stray status of either kind raises err_proto
    // (sticky), a reset clears it
    let idle = |base: u64, qps: u32| In {
        fp: FillPortsIn {
            base,
            qps,
            ..FillPortsIn::default()
        },
        ..In::default()
    };
    let mut cyc = 0u64;
    let step = |m: &mut Model, i: &In| -> Out { unpack(&m.step(&pack(i, &p)), &p) };
    for stray in 0..3 {
        for _ in 0..2 {
            step(
                &mut m,
                &In {
                    rst: true,
                    ..idle(0, 1)
                },
            );
        }
        let o = step(&mut m, &idle(0, 1));
        if o.err_proto {
            fail!("{}: err_proto high after a reset", c.name);
        }
        let mut s = idle(0, 1);
        let what = match stray {
            0 => {
                // (s_fill_ready is high: every buffer is free after the reset)
                s.fill_valid = true;
                s.fill_wb = true;
                s.fill_wb_qpn = 1;
                "fill writing back a QP beyond the table"
            }
            1 => {
                s.fp.wr_status_valid = true;
                "stray write status"
            }
            _ => {
                s.fp.rd_status_valid = true;
                s.fp.rd_status_id = 0;
                "stray read status"
            }
        };
        step(&mut m, &s);
        for k in 0..3 {
            let o = step(&mut m, &idle(0, 1));
            if !o.err_proto {
                fail!("{}: err_proto low {k} cycles after a {what}", c.name);
            }
        }
    }

    // the world
    let nslots = 1usize << p.slot_log;
    let mut store: Vec<Vec<u64>> = (0..nslots)
        .map(|_| (0..rw).map(|_| rng.gen()).collect())
        .collect();
    let mut host: HashMap<u32, Vec<u64>> = HashMap::new();
    let mut ram: HashMap<u32, u64> = HashMap::new(); // buffer RAM, by byte address
    let mut slots: Vec<Slot> = vec![Slot::default(); nslots];
    let mut fills: HashMap<usize, Fill> = HashMap::new(); // taken, by slot
    let mut offer: Option<Fill> = None;
    let mut wb_pend: Vec<u32> = Vec::new(); // write-backs taken, status not seen
    let mut rds: Vec<PendRd> = Vec::new();
    let mut wrs: VecDeque<PendWr> = VecDeque::new();
    let mut rec_q = RecAnswers::default();
    let mut buf_rd_prev: Option<u32> = None;
    let mut buf_hold = BufHold::default();
    let mut dma_buf: Vec<u32> = vec![0; 2 * p.fills]; // DMAs in flight per buffer half
    let mut last_evicted: Option<u32> = None;
    let mut rd_order = 0u64;
    let mut reordered_run = 0usize;
    // counters since the last reset: the world's and the pulses seen
    let mut want = [0usize; 4]; // fill ok, wb, fail, oob
    let mut seen = [0usize; 4];
    let mut idle_for = 0u32;
    let mut last_progress = 0u64;

    // the segment's table, pools and moods
    let qspace = 1u64 << p.qpn_w;
    let mut base = 0u64;
    let mut qps = 0u32;
    let mut pool: Vec<u32> = Vec::new();
    let mut slot_pool: Vec<usize> = Vec::new();
    let (mut p_cmd, mut p_rdy, mut p_traffic, mut p_err) = (0.5, 0.7, 0.05, 0.05);
    let mut mood_left = 0u32;
    let seg_len = (cfg.cycles / (cfg.resets + 1)).max(1) as u64;
    let drain_at = cfg.cycles as u64;
    let end_at = drain_at + 20_000;
    let mut rst_left = 2u32;
    let mut new_segment = true;

    let host_rec = |host: &HashMap<u32, Vec<u64>>, q: u32| -> Vec<u64> {
        host.get(&q)
            .cloned()
            .unwrap_or_else(|| (0..rw).map(|w| init_word(cfg.seed, q, w)).collect())
    };

    loop {
        let now = cyc;
        cyc += 1;
        if now >= end_at {
            fail!(
                "{}: {} fills still in flight {} cycles after the stimulus stopped",
                c.name,
                fills.len(),
                end_at - drain_at
            );
        }
        let draining = now >= drain_at;
        if draining && fills.is_empty() && offer.is_none() && rst_left == 0 && idle_for > 3 {
            break;
        }
        // a reset now and then, with work in flight
        if !draining && now > 0 && now % seg_len == 0 && r.resets < cfg.resets {
            rst_left = rng.gen_range(1..=3);
            r.resets += 1;
            if !fills.is_empty() {
                r.resets_busy += 1;
            }
        }
        if rst_left > 0 && !new_segment {
            new_segment = true;
        }
        if new_segment && rst_left > 0 {
            // a new table
            qps = match rng.gen_range(0..4) {
                0 => qspace as u32,
                1 => qspace.min(6) as u32,
                _ => rng.gen_range(8..=qspace.min(300) as u32),
            };
            let span = u64::from(qps) * rb;
            base = (rng.gen_range(0..(u64::MAX - span) / rb)) * rb;
            if rng.gen_bool(0.25) {
                base = (u64::MAX - span) / rb * rb; // the table's end at 2^64
            }
            host.clear();
            pool.clear();
            // the table's ends, some inside, some beyond (when there is room)
            pool.push(0);
            pool.push(qps - 1);
            for _ in 0..20 {
                pool.push(rng.gen_range(0..qps));
            }
            for k in 0..3u64 {
                if u64::from(qps) + k < qspace {
                    pool.push(qps + k as u32);
                }
            }
            if u64::from(qps) + 40 < qspace && rng.gen_bool(0.5) {
                pool.push(rng.gen_range(qps + 3..=(qspace - 1) as u32));
            }
            pool.sort_unstable();
            pool.dedup();
            slot_pool = vec![0, nslots - 1];
            for _ in 0..6.min(nslots) {
                slot_pool.push(rng.gen_range(0..nslots));
            }
            slot_pool.sort_unstable();
            slot_pool.dedup();
        }

        // moods
        if mood_left == 0 {
            mood_left = rng.gen_range(100..800);
            p_cmd = [0.05, 0.3, 0.8, 1.0][rng.gen_range(0..4)];
            p_rdy = [0.2, 0.6, 0.9, 1.0][rng.gen_range(0..4)];
            p_traffic = [0.0, 0.05, 0.3][rng.gen_range(0..3)];
            p_err = [0.0, 0.05, 0.05, 0.2][rng.gen_range(0..4)];
        }
        mood_left -= 1;

        let rst = rst_left > 0;
        let mut i = In {
            rst,
            ..In::default()
        };
        i.fp.base = base;
        i.fp.qps = qps;
        // junk on everything, the valid fields set below
        i.fill_slot = junk.gen();
        i.fill_qpn = junk.gen();
        i.fill_wb = junk.gen();
        i.fill_wb_qpn = junk.gen();
        i.fp.rec_rd_data = junk.gen();
        i.fp.buf_rd_data = junk.gen();
        i.fp.rd_status_id = junk.gen();
        i.fp.rd_status_error = junk.gen();

        // traffic: a cached QP's record changes (it becomes dirty)
        if !rst && rng.gen_bool(p_traffic) {
            let s = slot_pool[rng.gen_range(0..slot_pool.len())];
            if slots[s].owner.is_some() && !slots[s].filling {
                let w = rng.gen_range(0..rw);
                store[s][w] = rng.gen();
                slots[s].dirty = true;
            }
        }

        // a fill command, as qp_cache makes them
        if !rst && !draining && offer.is_none() && rng.gen_bool(p_cmd) {
            let free: Vec<usize> = slot_pool
                .iter()
                .copied()
                .filter(|&s| !slots[s].filling)
                .collect();
            let busy_q: HashSet<u32> = slots
                .iter()
                .filter_map(|s| s.owner)
                .chain(fills.values().map(|f| f.qpn))
                .collect();
            if !free.is_empty() {
                let s = free[rng.gen_range(0..free.len())];
                let cands: Vec<u32> = pool
                    .iter()
                    .copied()
                    .filter(|q| !busy_q.contains(q))
                    .collect();
                // sometimes a save, as qp_ctx_table makes them: the
                // slot's QP written back and loaded again (qpn = wb_qpn)
                let save = slots[s].owner.filter(|_| rng.gen_bool(0.1));
                let q = match last_evicted {
                    _ if save.is_some() => save,
                    Some(x) if !busy_q.contains(&x) && rng.gen_bool(0.6) => Some(x),
                    _ if cands.is_empty() => None,
                    _ => Some(cands[rng.gen_range(0..cands.len())]),
                };
                if let Some(q) = q {
                    let wb = match slots[s].owner {
                        _ if save.is_some() => save,
                        Some(o) if slots[s].dirty || rng.gen_bool(0.3) => Some(o),
                        _ => None,
                    };
                    r.saves += usize::from(save.is_some());
                    last_evicted = slots[s].owner.or(last_evicted);
                    slots[s] = Slot {
                        owner: None,
                        dirty: false,
                        filling: true,
                    };
                    offer = Some(Fill {
                        slot: s,
                        qpn: q,
                        wb,
                        before: store[s].clone(),
                        wb_issued: false,
                        wb_done: false,
                        rd: Rd::NotIssued,
                        taken_at: 0,
                    });
                }
            }
        }
        if let Some(f) = &offer {
            if !rst {
                i.fill_valid = true;
                i.fill_slot = f.slot as u32;
                i.fill_qpn = f.qpn;
                i.fill_wb = f.wb.is_some();
                if let Some(w) = f.wb {
                    i.fill_wb_qpn = w;
                }
            }
        }

        // the sinks' readiness
        if !rst {
            i.done_ready = rng.gen_bool(p_rdy);
            i.fp.rec_rd_ready = rng.gen_bool(p_rdy);
            i.fp.rec_wr_ready = rng.gen_bool(p_rdy);
            i.fp.rd_desc_ready = rng.gen_bool(p_rdy);
            i.fp.wr_desc_ready = rng.gen_bool(p_rdy);
            i.fp.buf_wr_ready = rng.gen_bool(p_rdy);
            i.fp.buf_rd_ready = rng.gen_bool(p_rdy);
        } else {
            i.done_ready = junk.gen();
            i.fp.rec_rd_ready = junk.gen();
            i.fp.rec_wr_ready = junk.gen();
            i.fp.rd_desc_ready = junk.gen();
            i.fp.wr_desc_ready = junk.gen();
            i.fp.buf_wr_ready = junk.gen();
            i.fp.buf_rd_ready = junk.gen();
        }

        // the record RAMs' answers, in order
        if let Some(d) = if rst { None } else { rec_q.pop(now) } {
            i.fp.rec_rd_data_valid = true;
            i.fp.rec_rd_data = d;
        }
        // the buffer RAM's registered read
        if let Some(a) = buf_rd_prev.take() {
            i.fp.buf_rd_data = ram.get(&a).copied().unwrap_or(0);
        }
        // a read status, any due one (out of order)
        if !rst {
            let due: Vec<usize> = (0..rds.len()).filter(|&k| rds[k].due <= now).collect();
            if !due.is_empty() {
                let k = due[rng.gen_range(0..due.len())];
                let d = rds.swap_remove(k);
                if rds.iter().any(|o| o.order < d.order) {
                    reordered_run += 1;
                    r.reads_reordered = r.reads_reordered.max(reordered_run);
                } else {
                    reordered_run = 0;
                }
                // the DMA's writes into the buffer: the record, or junk
                for w in 0..rw {
                    let a = p.buf_base + (d.buf * rw + w) as u32 * 8;
                    let v = if d.err == 0 { d.data[w] } else { junk.gen() };
                    if d.err == 0 || junk.gen_bool(0.5) {
                        ram.insert(a, v);
                    }
                }
                dma_buf[d.buf] -= 1;
                i.fp.rd_status_valid = true;
                i.fp.rd_status_id = d.id;
                i.fp.rd_status_error = d.err;
                if let Some(f) = fills.get_mut(&d.slot) {
                    f.rd = if d.err == 0 { Rd::Ok } else { Rd::Err };
                }
                if d.err != 0 {
                    r.read_errors += 1;
                }
            }
        }
        // a write status, in order: the write reads the buffer now
        if !rst && wrs.front().is_some_and(|w| w.due <= now) {
            let w = wrs.pop_front().unwrap();
            let got: Vec<u64> = (0..rw)
                .map(|k| {
                    let a = p.buf_base + (w.buf * rw + k) as u32 * 8;
                    ram.get(&a).copied().unwrap_or(0)
                })
                .collect();
            if got != w.want {
                let k = (0..rw).find(|&k| got[k] != w.want[k]).unwrap();
                fail!(
                    "{} cycle {now}: the write-back of QP {} wrote word {k} {:#x}, the slot held {:#x}",
                    c.name,
                    w.qpn,
                    got[k],
                    w.want[k]
                );
            }
            host.insert(w.qpn, got);
            dma_buf[w.buf] -= 1;
            if let Some(k) = wb_pend.iter().position(|&q| q == w.qpn) {
                wb_pend.swap_remove(k);
            }
            for f in fills.values_mut() {
                if f.wb == Some(w.qpn) && f.wb_issued && !f.wb_done {
                    f.wb_done = true;
                }
            }
            i.fp.wr_status_valid = true;
        }

        // the cycle
        let pi = pack(&i, &p);
        if now % 61 == 0 {
            // the outputs are registers: other inputs, the same outputs
            let alt = pack(&random_in(&mut junk, rst), &p);
            let a = unpack(&m.peek(&alt), &p);
            let b = unpack(&m.peek(&pi), &p);
            if a != b {
                fail!(
                    "{} cycle {now}: an output depends on an input combinationally:\n{a:?}\n{b:?}",
                    c.name
                );
            }
            r.peeks += 1;
        }
        let o = unpack(&m.step(&pi), &p);

        if rst {
            // the pulses of the cycle before belong to the old segment
            rst_left -= 1;
            fills.clear();
            offer = None;
            wb_pend.clear();
            rds.clear();
            wrs.clear();
            rec_q.clear();
            buf_rd_prev = None;
            buf_hold.clear();
            dma_buf.iter_mut().for_each(|d| *d = 0);
            slots.iter_mut().for_each(|s| *s = Slot::default());
            last_evicted = None;
            want = [0; 4];
            seen = [0; 4];
            idle_for = 0;
            last_progress = now;
            if rst_left == 0 {
                new_segment = false;
            }
            continue;
        }
        new_segment = false;

        // ---- checks on what the block shows
        if o.err_proto {
            fail!("{} cycle {now}: err_proto with no stray status", c.name);
        }
        if o.busy == fills.is_empty() {
            fail!(
                "{} cycle {now}: busy {} with {} fills in flight",
                c.name,
                o.busy,
                fills.len()
            );
        }
        let buffers_held = fills.len() - usize::from(o.done_valid);
        if o.fill_ready && buffers_held >= p.fills {
            fail!(
                "{} cycle {now}: s_fill_ready with every buffer held ({} fills in flight)",
                c.name,
                fills.len()
            );
        }
        for (k, b) in [o.stat_fill, o.stat_wb, o.stat_fail, o.stat_oob]
            .into_iter()
            .enumerate()
        {
            seen[k] += usize::from(b);
        }
        if let Err(e) = buf_hold.check(&o.fp, &i.fp) {
            fail!("{} cycle {now}: {e}", c.name);
        }
        if o.fp.buf_wr_en && o.fp.buf_rd_en {
            fail!(
                "{} cycle {now}: the buffer port writes and reads in one cycle",
                c.name
            );
        }
        for (what, en, a) in [
            ("writes", o.fp.buf_wr_en, o.fp.buf_wr_addr),
            ("reads", o.fp.buf_rd_en, o.fp.buf_rd_addr),
        ] {
            if !en {
                continue;
            }
            let Some(b) = p.buf_holding(a) else {
                fail!("{} cycle {now}: the buffer port {what} RAM address {a:#x}, outside the buffers", c.name);
            };
            if dma_buf[b] != 0 {
                fail!(
                    "{} cycle {now}: the buffer port {what} buffer {b} while a DMA uses it",
                    c.name
                );
            }
        }
        if o.fp.buf_wr_en && i.fp.buf_wr_ready {
            ram.insert(o.fp.buf_wr_addr, o.fp.buf_wr_data);
        }
        if o.fp.buf_rd_en && i.fp.buf_rd_ready {
            buf_rd_prev = Some(o.fp.buf_rd_addr);
        }

        // fill taken
        if i.fill_valid && o.fill_ready {
            let mut f = offer.take().unwrap();
            f.taken_at = now;
            if let Some(w) = f.wb {
                wb_pend.push(w);
            }
            if wb_pend.contains(&f.qpn) {
                r.hazards += 1;
            }
            r.fills += 1;
            fills.insert(f.slot, f);
            r.max_in_flight = r.max_in_flight.max(fills.len());
        }
        // record reads: only a write-back's copy
        if o.fp.rec_rd_valid && i.fp.rec_rd_ready {
            let s = o.fp.rec_rd_slot as usize;
            match fills.get(&s) {
                Some(f) if f.wb.is_some() && !f.wb_issued => {}
                _ => fail!(
                    "{} cycle {now}: a record read of slot {s}, which has no write-back to copy",
                    c.name
                ),
            }
            if o.fp.rec_rd_word as usize >= rw {
                fail!(
                    "{} cycle {now}: a record read of word {}",
                    c.name,
                    o.fp.rec_rd_word
                );
            }
            let lat = rng.gen_range(1..=4u64);
            rec_q.push(now, lat, store[s][o.fp.rec_rd_word as usize]);
        }
        // record writes: only after the fill's read was ok
        if o.fp.rec_wr_valid && i.fp.rec_wr_ready {
            let s = o.fp.rec_wr_slot as usize;
            match fills.get(&s) {
                Some(f) if f.rd == Rd::Ok => {}
                Some(f) => fail!(
                    "{} cycle {now}: a record write to slot {s}, whose fill (QP {}) has read state {:?}",
                    c.name,
                    f.qpn,
                    f.rd
                ),
                None => fail!("{} cycle {now}: a record write to slot {s}, which has no fill in flight", c.name),
            }
            if o.fp.rec_wr_word as usize >= rw {
                fail!(
                    "{} cycle {now}: a record write of word {}",
                    c.name,
                    o.fp.rec_wr_word
                );
            }
            store[s][o.fp.rec_wr_word as usize] = o.fp.rec_wr_data;
        }
        // the checks both descriptors have: inside the table, a whole
        // record, from or into a buffer no DMA uses
        let places = Places {
            base,
            qps,
            rec_bytes: rb,
            buf_base: p.buf_base,
            areas: 2 * p.fills,
        };
        let check_desc = |d: Desc, dma_buf: &[u32]| -> Result<(u32, usize), Fail> {
            let at = |e: String| Fail(format!("{} cycle {now}: {e}", c.name));
            let (q, b) = places.check_desc(&d).map_err(at)?;
            if dma_buf[b] != 0 {
                return Err(at(format!(
                    "a {} {} buffer {b}, which a DMA uses",
                    d.what, d.dir
                )));
            }
            Ok((q, b))
        };
        // write descriptors
        if o.fp.wr_valid && i.fp.wr_desc_ready {
            let (q, b) = check_desc(Desc::write_back(&o.fp), &dma_buf)?;
            let Some(f) = fills.values_mut().find(|f| f.wb == Some(q) && !f.wb_issued) else {
                fail!(
                    "{} cycle {now}: a write-back of QP {q} that no fill asked for",
                    c.name
                );
            };
            f.wb_issued = true;
            dma_buf[b] += 1;
            let due = now + rng.gen_range(2..40u64);
            let due = wrs.back().map_or(due, |w| due.max(w.due + 1));
            wrs.push_back(PendWr {
                qpn: q,
                buf: b,
                want: f.before.clone(),
                due,
            });
            want[1] += 1;
            r.writebacks += 1;
        }
        // read descriptors
        if o.fp.rd_valid && i.fp.rd_desc_ready {
            let (q, b) = check_desc(Desc::read(&o.fp), &dma_buf)?;
            if wb_pend.contains(&q) {
                fail!(
                    "{} cycle {now}: a read of QP {q} while its write-back has not had its status",
                    c.name
                );
            }
            let Some(f) = fills
                .values_mut()
                .find(|f| f.qpn == q && f.rd == Rd::NotIssued)
            else {
                fail!(
                    "{} cycle {now}: a read of QP {q} that no fill waits for",
                    c.name
                );
            };
            f.rd = Rd::Issued;
            dma_buf[b] += 1;
            let err = if rng.gen_bool(p_err) {
                rng.gen_range(1..16)
            } else {
                0
            };
            rds.push(PendRd {
                slot: f.slot,
                id: o.fp.rd_id,
                buf: b,
                data: host_rec(&host, q),
                err,
                due: now + rng.gen_range(2..60u64),
                order: rd_order,
            });
            rd_order += 1;
        }
        // completions
        if o.done_valid && i.done_ready {
            let s = o.done_slot as usize;
            let Some(f) = fills.remove(&s) else {
                fail!(
                    "{} cycle {now}: a completion for slot {s}, which has no fill in flight",
                    c.name
                );
            };
            let inside = f.qpn < qps;
            if inside && matches!(f.rd, Rd::NotIssued | Rd::Issued) {
                fail!(
                    "{} cycle {now}: slot {s} (QP {}) done with its read {:?}",
                    c.name,
                    f.qpn,
                    f.rd
                );
            }
            if !inside && f.rd != Rd::NotIssued {
                fail!(
                    "{} cycle {now}: QP {} beyond the table was read",
                    c.name,
                    f.qpn
                );
            }
            if let Some(w) = f.wb {
                if !f.wb_done {
                    fail!(
                        "{} cycle {now}: slot {s} done before its write-back of QP {w} had its status",
                        c.name
                    );
                }
            }
            let ok = inside && f.rd == Rd::Ok;
            if o.done_ok != ok {
                fail!(
                    "{} cycle {now}: slot {s} (QP {}, {}, read {:?}) done with ok {}",
                    c.name,
                    f.qpn,
                    if inside {
                        "in the table"
                    } else {
                        "beyond the table"
                    },
                    f.rd,
                    o.done_ok
                );
            }
            let expect = if ok {
                host_rec(&host, f.qpn)
            } else {
                f.before.clone()
            };
            if store[s] != expect {
                let k = (0..rw).find(|&k| store[s][k] != expect[k]).unwrap();
                fail!(
                    "{} cycle {now}: slot {s} done (ok {ok}, QP {}) holds word {k} {:#x}, expected {:#x} ({})",
                    c.name,
                    f.qpn,
                    store[s][k],
                    expect[k],
                    if ok { "the host's record" } else { "untouched" }
                );
            }
            slots[s] = Slot {
                owner: ok.then_some(f.qpn),
                dirty: false,
                filling: false,
            };
            if ok {
                want[0] += 1;
                r.fills_ok += 1;
            } else {
                want[2] += 1;
            }
            if !inside {
                want[3] += 1;
                r.oob += 1;
            }
            last_progress = now;
        }
        // the hazard's wait: a fill whose read is held for a write-back
        if fills.values().any(|f| {
            f.rd == Rd::NotIssued && (f.wb.is_none() || f.wb_done) && wb_pend.contains(&f.qpn)
        }) {
            r.hazard_waits += 1;
        }

        // idle: the counters
        if fills.is_empty() && offer.is_none() {
            idle_for += 1;
            last_progress = now;
            if idle_for == 3 && seen != want {
                fail!(
                    "{} cycle {now}: counters (fill, wb, fail, oob) {seen:?}, expected {want:?}",
                    c.name
                );
            }
        } else {
            idle_for = 0;
        }
        if now - last_progress > 5_000 {
            let oldest = fills.values().map(|f| f.taken_at).min().unwrap_or(now);
            fail!(
                "{} cycle {now}: no completion for 5000 cycles ({} fills in flight, the oldest taken at cycle {oldest})",
                c.name,
                fills.len()
            );
        }
    }
    if seen != want {
        fail!(
            "{}: counters (fill, wb, fail, oob) {seen:?} at the end, expected {want:?}",
            c.name
        );
    }
    r.cycles = cyc;
    Ok(r)
}
