//! Bench of `read_reply`, the RDMA READ response engine: seeded random
//! READ jobs, a DMA read engine that takes descriptors and returns their
//! statuses in order after random delays (now and then an error), a
//! packet sink (roce_tx) that takes packets and, after random delays,
//! pulses `s_done` for each in order. Every job's packets are checked
//! against a reference written from the contract, every cycle:
//!
//! - a job of at most one PMTU (zero-length too) is one READ RESPONSE ONLY
//!   (0x10), a longer one FIRST (0x0D), MIDDLE (0x0E)..., LAST (0x0F),
//!   PMTU bytes each but the last (a multiple of the PMTU ends with a full
//!   LAST), at consecutive PSNs from the job's (24-bit wrap), with the
//!   job's MSN, DMAC, DIP, UDP source port and destination QP, syndrome
//!   0x1F; in order, nothing lost, duplicated or extra;
//! - one DMA read per packet with payload (none for a zero-length job), in
//!   packet order: the job's bus address plus the packet's offset, the
//!   packet's length, ID_TAG, and a RAM address that is one of the SLOTS
//!   slots (SLOT_BASE + slot << SLOT_LOG); a packet is handed out only
//!   after its read's status came back, with the slot its read wrote as
//!   payload address;
//! - a read that failed turns its packet into a NAK (ACKNOWLEDGE 0x11,
//!   syndrome 0x63, no payload) at its PSN, `stat_rd_error` pulsing in the
//!   cycle it is first offered; the job's other packets go out as read;
//! - an ACK job (`s_job_ack`, about one job in four; its length random and
//!   ignored) is one ACKNOWLEDGE (0x11) with the job's syndrome (random:
//!   ACK, RNR NAK, NAK codes, anything), PSN and MSN, the job's DMAC, DIP,
//!   UDP source port and QP, no payload, no DMA read, no `stat_rd_error`,
//!   in job order with the READ jobs around it; the READ jobs' syndrome
//!   input carries junk;
//! - a slot is never written while another packet holds it: from its
//!   read's descriptor (a zero-length packet: from being offered) to its
//!   `s_done`, never more than SLOTS packets, each in a slot of its own;
//! - a descriptor or packet offered and not taken stays, unchanged;
//! - `busy` is high exactly while some job accepted has not had its last
//!   packet taken by the sink; `jobs_out` counts (mod 256, from the last
//!   reset) the jobs whose last packet the sink took, from the cycle after;
//!   `s_job_ready` is low exactly while JOBS jobs are held (a job is held
//!   until its last packet is offered);
//! - no output depends on an input combinationally (peeks);
//! - `rst` in the middle of jobs empties the block: nothing from before
//!   it comes out after it (the environment resets with it).
//!
//! While nothing is offered, the job's fields and the status's error
//! carry junk. The readiness of the DMA engine and the sink, the delays
//! and the rate of new jobs change every few hundred cycles.

use crate::{fail, Fail, Kind, Model, PortsIn, PortsOut, PSN_MASK};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::collections::VecDeque;

const OP_FIRST: u32 = 0x0d;
const OP_MIDDLE: u32 = 0x0e;
const OP_LAST: u32 = 0x0f;
const OP_ONLY: u32 = 0x10;
const OP_ACK: u32 = 0x11;
const SYN_ACK: u32 = 0x1f;
const SYN_NAK_REM_OP: u32 = 0x63;

/// One run.
#[derive(Debug, Clone)]
pub struct RrCfg {
    /// configuration name (a `Kind::ReadReply` one)
    pub model: &'static str,
    pub seed: u64,
    /// READ jobs to send
    pub jobs: usize,
    /// chance that a payload read fails
    pub p_err: f64,
    /// resets in the middle of the run (with jobs in flight)
    pub resets: usize,
}

impl RrCfg {
    pub fn new(model: &'static str, seed: u64) -> Self {
        Self {
            model,
            seed,
            jobs: 1000,
            p_err: 0.03,
            resets: 2,
        }
    }
}

/// What a run reached.
#[derive(Debug, Clone, Default)]
pub struct RrReport {
    pub cycles: u64,
    /// jobs accepted
    pub jobs: usize,
    /// jobs whose every packet was taken
    pub jobs_done: usize,
    pub packets: usize,
    pub only: usize,
    pub first: usize,
    pub middle: usize,
    pub last: usize,
    /// zero-length jobs done
    pub zero_len: usize,
    /// jobs of 2 PMTUs or more, an exact multiple (a full LAST)
    pub exact: usize,
    /// jobs whose PSNs wrap past 2^24 - 1
    pub psn_wraps: usize,
    /// ACK jobs' packets offered
    pub acks: usize,
    /// ... of ACK jobs with a nonzero (ignored) length
    pub acks_with_len: usize,
    /// ... whose syndrome is not 0x1F
    pub acks_not_1f: usize,
    /// ACK jobs accepted while an earlier READ job had packets not offered
    pub acks_behind_reads: usize,
    pub descriptors: usize,
    pub naks: usize,
    /// cycles with s_job_ready low (the ring full)
    pub ring_full: usize,
    /// cycles with every slot held
    pub slots_full: usize,
    /// descriptors offered while an earlier job had packets not handed out
    pub overlap: usize,
    /// cycles a job's last packet was offered and not taken
    pub last_waits: usize,
    /// cycles with no job in the block (busy low)
    pub idle: usize,
    pub resets: usize,
}

/// A READ job (or an ACK job) as the responder hands it over.
#[derive(Debug, Clone)]
struct Job {
    psn: u32,
    msn: u32,
    bus: u64,
    len: u32,
    pmtu_log: u32,
    dmac: u64,
    dip: u32,
    sport: u32,
    dqp: u32,
    /// an ACK job: one ACKNOWLEDGE with `syn`, `len` ignored
    ack: bool,
    /// the AETH syndrome (junk for a READ job)
    syn: u32,
}

/// A packet the reference expects.
#[derive(Debug, Clone)]
struct Pkt {
    job: usize,
    k: usize,
    psn: u32,
    opcode: u32,
    len: u32,
    /// the payload's bus address
    bus: u64,
    /// the job's last packet
    last: bool,
    /// the slot its read's descriptor named
    slot: Option<u32>,
    /// its read's status: the cycle and whether it failed
    status: Option<(u64, bool)>,
    /// the read fails (decided when the DMA engine takes the descriptor)
    err: bool,
}

fn gen_job(rng: &mut ChaCha8Rng) -> Job {
    let pmtu_log = rng.gen_range(8..=12u32);
    let pmtu = 1u32 << pmtu_log;
    let len = match rng.gen_range(0..12) {
        0 => 0,
        1 => 1,
        2 => pmtu - 1,
        3 => pmtu,
        4 => pmtu + 1,
        5 | 6 => rng.gen_range(2..=5) * pmtu,
        7 | 8 => rng.gen_range(1..=5) * pmtu + rng.gen_range(1..pmtu),
        _ => rng.gen_range(0..=5 * 4096),
    };
    let psn = if rng.gen_bool(0.2) {
        PSN_MASK - rng.gen_range(0..8)
    } else {
        rng.gen::<u32>() & PSN_MASK
    };
    let bus = match rng.gen_range(0..6) {
        // a payload that crosses bit 32 of the bus address
        0 => {
            (u64::from(rng.gen::<u32>()) << 32)
                | u64::from(0xffff_ffff - rng.gen_range(0..0x6000u32))
        }
        _ => rng.gen(),
    };
    let ack = rng.gen_bool(0.25);
    let syn = match rng.gen_range(0..6) {
        0 | 1 => SYN_ACK,
        // NAKs: PSN sequence error, invalid request, remote access error,
        // remote operational error
        2 | 3 => rng.gen_range(0x60..=0x63),
        // RNR NAK with a timer
        4 => 0x20 | rng.gen_range(0..32),
        _ => rng.gen::<u32>() & 0xff,
    };
    Job {
        psn,
        msn: rng.gen::<u32>() & PSN_MASK,
        bus,
        len,
        pmtu_log,
        dmac: rng.gen::<u64>() & 0xffff_ffff_ffff,
        dip: rng.gen(),
        sport: rng.gen::<u32>() & 0xffff,
        dqp: rng.gen::<u32>() & PSN_MASK,
        ack,
        syn,
    }
}

/// The packets of job `j` (index `ji`), as the contract says.
fn packets(ji: usize, j: &Job) -> Vec<Pkt> {
    if j.ack {
        // one ACKNOWLEDGE, whatever the length
        return vec![Pkt {
            job: ji,
            k: 0,
            psn: j.psn,
            opcode: OP_ACK,
            len: 0,
            bus: j.bus,
            last: true,
            slot: None,
            status: None,
            err: false,
        }];
    }
    let pmtu = 1u32 << j.pmtu_log;
    let n = if j.len == 0 {
        1
    } else {
        j.len.div_ceil(pmtu) as usize
    };
    (0..n)
        .map(|k| {
            let off = k as u32 * pmtu;
            let len = if k + 1 == n { j.len - off } else { pmtu };
            Pkt {
                job: ji,
                k,
                psn: (j.psn + k as u32) & PSN_MASK,
                opcode: if n == 1 {
                    OP_ONLY
                } else if k == 0 {
                    OP_FIRST
                } else if k + 1 == n {
                    OP_LAST
                } else {
                    OP_MIDDLE
                },
                len,
                bus: j.bus.wrapping_add(u64::from(off)),
                last: k + 1 == n,
                slot: None,
                status: None,
                err: false,
            }
        })
        .collect()
}

fn job_input(i: &mut PortsIn, j: &Job) {
    let w = &mut i.s_data;
    w[0] = j.psn;
    w[1] = j.msn;
    w[2] = j.bus as u32;
    w[3] = (j.bus >> 32) as u32;
    w[4] = j.len;
    w[5] = j.pmtu_log;
    w[6] = j.dmac as u32;
    w[7] = (j.dmac >> 32) as u32;
    w[8] = j.dip;
    w[9] = j.sport;
    w[10] = j.dqp;
    w[11] = u32::from(j.ack);
    w[12] = j.syn;
}

/// The environment's changing moods: how often things happen.
#[derive(Debug, Clone, Copy)]
struct Mood {
    p_job: f64,
    p_desc_ready: f64,
    status_delay: u64,
    p_pkt_ready: f64,
    done_delay: u64,
}

fn gen_mood(rng: &mut ChaCha8Rng) -> Mood {
    let pick = |rng: &mut ChaCha8Rng, v: &[f64]| v[rng.gen_range(0..v.len())];
    let pick_u = |rng: &mut ChaCha8Rng, v: &[u64]| v[rng.gen_range(0..v.len())];
    Mood {
        p_job: pick(rng, &[0.02, 0.2, 0.7, 1.0]),
        p_desc_ready: pick(rng, &[0.1, 0.5, 0.9, 1.0]),
        status_delay: pick_u(rng, &[1, 4, 30, 150]),
        p_pkt_ready: pick(rng, &[0.05, 0.4, 0.8, 1.0]),
        done_delay: pick_u(rng, &[1, 6, 40, 200]),
    }
}

/// Cycles without a handshake, a status or an s_done before the run
/// counts as stuck (the longest wait the environment makes is 200).
const STALL: u64 = 5000;

// The ports (csrc/blocks.cpp): `s_data` words 0 s_job_psn, 1 msn, 2..3
// bus, 4 len, 5 pmtu_log, 6..7 dmac, 8 dip, 9 udp_sport, 10 dest_qp, 11
// ack, 12 syndrome; `s_valid` the bits below; `s_last` s_rd_status_error.
// `m_data` words 0..1 m_rd_desc_pcie_addr, 2 ram_addr, 3 len, 4 id, 5..6
// m_pkt_dmac, 7 dip, 8 {syndrome, opcode, udp_sport}, 9 dest_qp, 10 psn,
// 11 msn, 12 payload_addr, 13 payload_len, 14 jobs_out; `s_ready`
// s_job_ready; `m_valid` {stat_rd_error, busy, m_pkt_valid,
// m_rd_desc_valid}.
const V_JOB: u32 = 1;
const V_DESC_READY: u32 = 2;
const V_STATUS: u32 = 4;
const V_PKT_READY: u32 = 8;
const V_DONE: u32 = 16;
/// The `s_data` words of a job.
const JOB_WORDS: usize = 13;

/// The outputs, decoded.
struct Out {
    desc_valid: bool,
    pkt_valid: bool,
    busy: bool,
    stat_err: bool,
    job_ready: bool,
    desc_addr: u64,
    desc_ram: u32,
    desc_len: u32,
    desc_id: u32,
    dmac: u64,
    dip: u32,
    sport: u32,
    opcode: u32,
    syndrome: u32,
    dqp: u32,
    psn: u32,
    msn: u32,
    pay_addr: u32,
    pay_len: u32,
    jobs_out: u32,
}

fn decode(o: &PortsOut) -> Out {
    let d = &o.m_data;
    Out {
        desc_valid: o.m_valid & 1 != 0,
        pkt_valid: o.m_valid & 2 != 0,
        busy: o.m_valid & 4 != 0,
        stat_err: o.m_valid & 8 != 0,
        job_ready: o.s_ready != 0,
        desc_addr: u64::from(d[0]) | (u64::from(d[1]) << 32),
        desc_ram: d[2],
        desc_len: d[3],
        desc_id: d[4],
        dmac: u64::from(d[5]) | (u64::from(d[6]) << 32),
        dip: d[7],
        sport: d[8] & 0xffff,
        opcode: (d[8] >> 16) & 0xff,
        syndrome: d[8] >> 24,
        dqp: d[9],
        psn: d[10],
        msn: d[11],
        pay_addr: d[12],
        pay_len: d[13],
        jobs_out: d[14],
    }
}

/// Runs one configuration; every check above, every cycle.
pub fn run(cfg: &RrCfg) -> Result<RrReport, Fail> {
    let mut m = Model::new(cfg.model, cfg.seed as u32).map_err(Fail)?;
    let c = *m.config();
    assert_eq!(c.kind, Kind::ReadReply, "{} is not a read_reply", c.name);
    let n_jobs = c.param("JOBS") as usize;
    let n_slots = c.param("SLOTS") as usize;
    let slot_log = c.param("SLOT_LOG");
    let slot_base = c.param("SLOT_BASE");
    let id_tag = c.param("ID_TAG");
    let mut rng = ChaCha8Rng::seed_from_u64(cfg.seed);

    // reset
    for _ in 0..2 {
        m.step(&PortsIn {
            rst: 1,
            ..PortsIn::default()
        });
    }

    let mut r = RrReport::default();
    let mut jobs: Vec<Job> = Vec::new();
    let mut pkts: Vec<Pkt> = Vec::new();
    // the job offered and not taken
    let mut offer: Option<Job> = None;
    let mut sent = 0usize;
    // since the last reset: jobs accepted, jobs whose last packet was
    // offered (retired), jobs whose last packet was taken
    let (mut accepted, mut retired, mut finished) = (0usize, 0usize, 0usize);
    // the next packet whose read may come (those without payload are
    // skipped), the next packet expected out
    let (mut next_desc, mut next_out) = (0usize, 0usize);
    // offered and not taken: the packet index and the output words
    let mut desc_pending: Option<(usize, [u32; 5])> = None;
    let mut pkt_pending: Option<(usize, [u32; 9])> = None;
    // reads taken by the DMA engine (packet, status due), packets taken by
    // the sink (packet, s_done due)
    let mut dma: VecDeque<(usize, u64)> = VecDeque::new();
    let mut done_q: VecDeque<(usize, u64)> = VecDeque::new();
    let (mut last_status, mut last_done) = (0u64, 0u64);
    // which packet holds each slot; packets between descriptor (or, with
    // no payload, being offered) and s_done
    let mut held: Vec<Option<usize>> = vec![None; n_slots];
    let mut in_flight = 0usize;
    let mut mood = gen_mood(&mut rng);
    let mut mood_left = 0u64;
    let mut rst_left = 0u32;
    let mut resets_left = cfg.resets;
    // the last cycle anything moved (a handshake, a status, an s_done)
    let mut progress = 0u64;

    let mut cyc = 0u64;
    loop {
        let all_out =
            next_out == pkts.len() && pkt_pending.is_none() && done_q.is_empty() && dma.is_empty();
        if sent == cfg.jobs && offer.is_none() && all_out && rst_left == 0 {
            break;
        }
        let at = || format!("{} seed {} cycle {cyc}", cfg.model, cfg.seed);
        if cyc > progress + STALL {
            fail!(
                "{}: stuck for {STALL} cycles: {sent} jobs sent, {accepted} accepted since \
                 the last reset, {finished} done; packet {next_out} of {} expected out, \
                 descriptor of packet {next_desc} expected, {} reads out, {} s_done due",
                at(),
                pkts.len(),
                dma.len(),
                done_q.len()
            );
        }
        if mood_left == 0 {
            mood = gen_mood(&mut rng);
            mood_left = rng.gen_range(50..400);
        }
        mood_left -= 1;
        // a reset with jobs in flight, now and then
        if rst_left == 0
            && resets_left > 0
            && sent * (cfg.resets + 1) >= cfg.jobs * (cfg.resets + 1 - resets_left)
            && accepted > finished + 1
            && rng.gen_bool(0.05)
        {
            rst_left = rng.gen_range(1..=3);
            resets_left -= 1;
            r.resets += 1;
        }
        let rst = rst_left > 0;

        // the inputs
        let mut i = PortsIn::default();
        for w in i.s_data.iter_mut().take(JOB_WORDS) {
            *w = rng.gen();
        }
        i.s_data[0] &= PSN_MASK;
        i.s_data[1] &= PSN_MASK;
        i.s_data[5] &= 0xf;
        i.s_data[7] &= 0xffff;
        i.s_data[9] &= 0xffff;
        i.s_data[10] &= PSN_MASK;
        i.s_data[11] &= 1;
        i.s_data[12] &= 0xff;
        i.s_last = rng.gen_range(0..16);
        if offer.is_none() && sent < cfg.jobs && rng.gen_bool(mood.p_job) {
            offer = Some(gen_job(&mut rng));
        }
        if let (Some(j), false) = (&offer, rst) {
            job_input(&mut i, j);
            i.s_valid |= V_JOB;
        }
        if !rst && rng.gen_bool(mood.p_desc_ready) {
            i.s_valid |= V_DESC_READY;
        }
        let status = match dma.front() {
            Some(&(p, due)) if !rst && due <= cyc => {
                dma.pop_front();
                i.s_valid |= V_STATUS;
                i.s_last = if pkts[p].err { rng.gen_range(1..16) } else { 0 };
                Some(p)
            }
            _ => None,
        };
        if !rst && rng.gen_bool(mood.p_pkt_ready) {
            i.s_valid |= V_PKT_READY;
        }
        let done = match done_q.front() {
            Some(&(p, due)) if !rst && due <= cyc => {
                done_q.pop_front();
                i.s_valid |= V_DONE;
                Some(p)
            }
            _ => None,
        };
        i.rst = u8::from(rst);

        // every output is a register: other inputs before the edge change none
        let alt = if cyc % 4 == 0 {
            let mut a = PortsIn {
                s_valid: rng.gen_range(0..32),
                s_last: rng.gen_range(0..16),
                rst: rng.gen_range(0..2),
                ..i.clone()
            };
            for w in a.s_data.iter_mut().take(JOB_WORDS) {
                *w = rng.gen::<u32>() & 0xffff;
            }
            Some(m.peek(&a))
        } else {
            None
        };
        let po = m.step(&i);
        if po.sim_flags != 0 {
            fail!("{}: the model stopped ({:#x})", at(), po.sim_flags);
        }
        if let Some(p) = alt {
            if p.m_data != po.m_data || p.m_valid != po.m_valid || p.s_ready != po.s_ready {
                fail!(
                    "{}: other inputs before the edge changed an output (valid {:#x} -> {:#x}, \
                     s_job_ready {} -> {}): the outputs must be registers",
                    at(),
                    po.m_valid,
                    p.m_valid,
                    po.s_ready,
                    p.s_ready
                );
            }
        }
        let o = decode(&po);
        let desc_ready = i.s_valid & V_DESC_READY != 0;
        let pkt_ready = i.s_valid & V_PKT_READY != 0;

        // the DMA read descriptor
        let desc_words = [
            po.m_data[0],
            po.m_data[1],
            po.m_data[2],
            po.m_data[3],
            po.m_data[4],
        ];
        if let Some((p, w)) = desc_pending {
            if !o.desc_valid || desc_words != w {
                fail!(
                    "{}: the descriptor of packet {p} offered last cycle and not taken \
                     changed (valid {}, {:x?} -> {:x?})",
                    at(),
                    o.desc_valid,
                    w,
                    desc_words
                );
            }
        } else if o.desc_valid {
            // a new one: the next packet with a payload
            while next_desc < pkts.len() && pkts[next_desc].len == 0 {
                next_desc += 1;
            }
            if next_desc == pkts.len() {
                fail!(
                    "{}: a read descriptor (bus {:#x}, len {}) with nothing to read",
                    at(),
                    o.desc_addr,
                    o.desc_len
                );
            }
            let p = next_desc;
            let e = &pkts[p];
            let j = &jobs[e.job];
            if o.desc_addr != e.bus || o.desc_len != e.len || o.desc_id != id_tag {
                fail!(
                    "{}: the read of packet {} of job {} (bus {:#x} + {}, PMTU {}) is bus {:#x} \
                     len {} id {:#x}, want bus {:#x} len {} id {id_tag:#x}",
                    at(),
                    e.k,
                    e.job,
                    j.bus,
                    j.len,
                    1u32 << j.pmtu_log,
                    o.desc_addr,
                    o.desc_len,
                    o.desc_id,
                    e.bus,
                    e.len
                );
            }
            let rel = o.desc_ram.wrapping_sub(slot_base);
            let slot = rel >> slot_log;
            if rel & ((1 << slot_log) - 1) != 0 || slot as usize >= n_slots {
                fail!(
                    "{}: the read of packet {} of job {} writes RAM {:#x}: not a slot",
                    at(),
                    e.k,
                    e.job,
                    o.desc_ram
                );
            }
            if let Some(q) = held[slot as usize] {
                fail!(
                    "{}: the read of packet {} of job {} writes slot {slot}, which packet {} \
                     of job {} holds until its s_done",
                    at(),
                    e.k,
                    e.job,
                    pkts[q].k,
                    pkts[q].job
                );
            }
            held[slot as usize] = Some(p);
            in_flight += 1;
            if in_flight > n_slots {
                fail!(
                    "{}: {in_flight} packets between their reads and s_done, {n_slots} slots",
                    at()
                );
            }
            if next_out < pkts.len() && pkts[next_out].job < e.job {
                r.overlap += 1;
            }
            pkts[p].slot = Some(slot);
            next_desc += 1;
            r.descriptors += 1;
            desc_pending = Some((p, desc_words));
        }
        if let Some((p, _)) = desc_pending {
            if desc_ready {
                desc_pending = None;
                pkts[p].err = rng.gen_bool(cfg.p_err);
                let due = (cyc + rng.gen_range(1..=mood.status_delay)).max(last_status + 1);
                last_status = due;
                dma.push_back((p, due));
            }
        }

        // the packet to roce_tx
        let pkt_words: [u32; 9] = po.m_data[5..14].try_into().unwrap();
        let mut new_pkt = None;
        if let Some((p, w)) = pkt_pending {
            if !o.pkt_valid || pkt_words != w {
                fail!(
                    "{}: packet {} of job {} offered last cycle and not taken changed \
                     (valid {}, {:x?} -> {:x?})",
                    at(),
                    pkts[p].k,
                    pkts[p].job,
                    o.pkt_valid,
                    w,
                    pkt_words
                );
            }
        } else if o.pkt_valid {
            if next_out == pkts.len() {
                fail!(
                    "{}: a packet (opcode {:#x}, PSN {:#x}) with no job to send",
                    at(),
                    o.opcode,
                    o.psn
                );
            }
            let p = next_out;
            let e = &pkts[p];
            let j = &jobs[e.job];
            let what = format!(
                "packet {} of {} job {} (PSN {:#x}, len {}, PMTU {})",
                e.k,
                if j.ack { "ACK" } else { "READ" },
                e.job,
                j.psn,
                j.len,
                1u32 << j.pmtu_log
            );
            // its read's status, if it came back before the packet was
            // handed out (the fields are checked first: a wrong length
            // says more than a missing status)
            let read = match e.status {
                Some((t, err)) if t < cyc => Some(err),
                _ => None,
            };
            let nak = e.len != 0 && read == Some(true);
            let (op, syn, len) = if j.ack {
                (OP_ACK, j.syn, 0)
            } else if nak {
                (OP_ACK, SYN_NAK_REM_OP, 0)
            } else {
                (e.opcode, SYN_ACK, e.len)
            };
            if o.opcode != op || o.syndrome != syn || o.pay_len != len || o.psn != e.psn {
                fail!(
                    "{}: {what}{}: opcode {:#x} syndrome {:#x} len {} PSN {:#x}, want opcode \
                     {op:#x} syndrome {syn:#x} len {len} PSN {:#x}",
                    at(),
                    if nak { " (its read failed)" } else { "" },
                    o.opcode,
                    o.syndrome,
                    o.pay_len,
                    o.psn,
                    e.psn
                );
            }
            if o.msn != j.msn
                || o.dmac != j.dmac
                || o.dip != j.dip
                || o.sport != j.sport
                || o.dqp != j.dqp
            {
                fail!(
                    "{}: {what}: MSN {:#x} DMAC {:#x} DIP {:#x} sport {:#x} QP {:#x}, want the \
                     job's {:#x} {:#x} {:#x} {:#x} {:#x}",
                    at(),
                    o.msn,
                    o.dmac,
                    o.dip,
                    o.sport,
                    o.dqp,
                    j.msn,
                    j.dmac,
                    j.dip,
                    j.sport,
                    j.dqp
                );
            }
            if e.len != 0 && read.is_none() {
                fail!("{}: {what} handed out before its read's status", at());
            }
            if !nak && e.len != 0 {
                let s = e.slot.unwrap();
                let want = slot_base + (s << slot_log);
                if o.pay_addr != want {
                    fail!(
                        "{}: {what}: payload at {:#x}, its read wrote slot {s} ({want:#x})",
                        at(),
                        o.pay_addr
                    );
                }
            }
            if e.len == 0 {
                in_flight += 1;
                if in_flight > n_slots {
                    fail!(
                        "{}: {in_flight} packets between their reads and s_done, {n_slots} \
                         slots",
                        at()
                    );
                }
            }
            if nak {
                r.naks += 1;
            }
            match e.opcode {
                OP_ACK => {
                    r.acks += 1;
                    if j.len != 0 {
                        r.acks_with_len += 1;
                    }
                    if j.syn != SYN_ACK {
                        r.acks_not_1f += 1;
                    }
                }
                OP_ONLY => r.only += 1,
                OP_FIRST => r.first += 1,
                OP_MIDDLE => r.middle += 1,
                _ => r.last += 1,
            }
            if e.last {
                retired += 1;
            }
            new_pkt = Some(nak);
            next_out += 1;
            pkt_pending = Some((p, pkt_words));
        }
        if o.stat_err != (new_pkt == Some(true)) {
            fail!(
                "{}: stat_rd_error {} with {}",
                at(),
                o.stat_err,
                match new_pkt {
                    Some(true) => "a NAK first offered",
                    Some(false) => "a packet first offered",
                    None => "no new packet",
                }
            );
        }

        // busy: a job accepted whose last packet was not taken; the ring:
        // JOBS jobs whose last packet was not offered
        if o.busy != (accepted > finished) {
            fail!(
                "{}: busy {} with {accepted} jobs accepted and {finished} whose last packet \
                 was taken",
                at(),
                o.busy
            );
        }
        if o.jobs_out != (finished & 0xff) as u32 {
            fail!(
                "{}: jobs_out {} with {finished} jobs whose last packet was taken since the \
                 last reset",
                at(),
                o.jobs_out
            );
        }
        if o.job_ready != (accepted - retired < n_jobs) {
            fail!(
                "{}: s_job_ready {} with {} jobs held of {n_jobs}",
                at(),
                o.job_ready,
                accepted - retired
            );
        }
        if !o.job_ready {
            r.ring_full += 1;
        }
        if in_flight == n_slots {
            r.slots_full += 1;
        }
        if !o.busy {
            r.idle += 1;
        }
        let moved = (o.desc_valid && desc_ready)
            || (o.pkt_valid && pkt_ready)
            || status.is_some()
            || done.is_some()
            || (offer.is_some() && !rst && o.job_ready)
            || rst;
        if moved {
            progress = cyc;
        }

        // this cycle's handshakes, at the edge
        if let Some((p, _)) = pkt_pending {
            if pkts[p].last && !pkt_ready {
                r.last_waits += 1;
            }
            if pkt_ready {
                pkt_pending = None;
                let due = (cyc + rng.gen_range(1..=mood.done_delay)).max(last_done + 1);
                last_done = due;
                done_q.push_back((p, due));
                r.packets += 1;
                if pkts[p].last {
                    finished += 1;
                    r.jobs_done += 1;
                    let j = &jobs[pkts[p].job];
                    let pmtu = 1u32 << j.pmtu_log;
                    if !j.ack && j.len == 0 {
                        r.zero_len += 1;
                    }
                    if !j.ack && j.len >= 2 * pmtu && j.len % pmtu == 0 {
                        r.exact += 1;
                    }
                    if j.psn > pkts[p].psn {
                        r.psn_wraps += 1;
                    }
                }
            }
        }
        if let Some(p) = status {
            pkts[p].status = Some((cyc, pkts[p].err));
        }
        if let Some(p) = done {
            if let Some(s) = pkts[p].slot {
                held[s as usize] = None;
            }
            in_flight -= 1;
        }
        if let Some(j) = offer.take() {
            if !rst && o.job_ready {
                if j.ack && pkts[next_out..].iter().any(|q| !jobs[q.job].ack) {
                    r.acks_behind_reads += 1;
                }
                let ji = jobs.len();
                pkts.extend(packets(ji, &j));
                jobs.push(j);
                accepted += 1;
                sent += 1;
                r.jobs += 1;
            } else {
                offer = Some(j);
            }
        }
        if rst {
            rst_left -= 1;
            // the DMA engine and roce_tx reset with it: what was in flight
            // is gone
            accepted = 0;
            retired = 0;
            finished = 0;
            next_desc = pkts.len();
            next_out = pkts.len();
            desc_pending = None;
            pkt_pending = None;
            dma.clear();
            done_q.clear();
            held.iter_mut().for_each(|h| *h = None);
            in_flight = 0;
        }
        cyc += 1;
    }
    // nothing more comes out; idle
    for k in 0..16 {
        let po = m.step(&PortsIn {
            s_valid: V_DESC_READY | V_PKT_READY,
            ..PortsIn::default()
        });
        let o = decode(&po);
        if o.desc_valid || o.pkt_valid || o.busy || !o.job_ready || o.stat_err {
            fail!(
                "{} seed {} cycle {}: idle after every job, yet valid {:#x} s_job_ready {}",
                cfg.model,
                cfg.seed,
                cyc + k,
                po.m_valid,
                o.job_ready
            );
        }
    }
    r.cycles = cyc;
    Ok(r)
}
