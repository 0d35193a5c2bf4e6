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
//!
//! With ATOMIC_EN (the configurations that set it), some jobs are atomics
//! (CMP_SWAP with a compare that mostly equals the value the word will
//! hold, FETCH_ADD with adds that carry past bit 31 and past bit 63, and
//! replays of a duplicate, length 0) on a few 8-byte words of a host
//! memory the bench keeps (one just below 4 GiB, one at the top of the bus
//! space). The DMA read engine writes an atomic's 8 bytes into the RAM
//! word of its read's slot through `s_snoop_*` in one to three pieces of
//! byte strobes, junk in every lane not strobed and in the lanes above 7,
//! before its status (or in its status's cycle); it writes parts of the
//! READ payloads into their slots too, and other engines write junk
//! elsewhere in the RAM. The staging RAM's write port and the DMA write
//! engine (descriptor, then a status after a random delay) take their
//! time. Checked, every cycle, against a reference that executes the
//! atomics in job order on its copy of the memory:
//!
//! - an atomic's read is an 8-byte read of its address; the value the read
//!   engine reads there is the one every earlier atomic left (its
//!   write-back was issued before the read);
//! - nothing is issued while an atomic runs: no read descriptor is offered
//!   from the atomic's read's to its write-back's status (or its failed
//!   read's status);
//! - the new value (the swap if the original equals the compare, else the
//!   original; the original plus the add, mod 2^64) goes to the staging
//!   RAM word ATOM_RAM with the strobes of lanes 0..7, then one write
//!   descriptor (the atomic's address, ATOM_RAM, 8 bytes, ID_TAG), only
//!   after that RAM write was taken; both held unchanged until taken; the
//!   host memory takes the staging word when the descriptor is taken;
//! - `m_rec_*` in the write-back's status's cycle (the one output that is
//!   not a register: it follows `s_wr_status_valid`) with the atomic's
//!   QP number, PSN and original value, once per execution; `stat_atomic`
//!   the cycle after;
//! - the ATOMIC ACKNOWLEDGE (0x12, syndrome 0x1F, the job's PSN, MSN and
//!   header fields, payload length 0) with the original value, only after
//!   the write-back's status;
//! - a failed read's atomic: a NAK (0x11, syndrome 0x63) and nothing
//!   written, no record;
//! - a replay: no read, no write, no record, an ATOMIC ACKNOWLEDGE with the
//!   job's value, `stat_replay` in its first cycle offered.
//!
//! Without ATOMIC_EN the atomic inputs carry junk (the jobs' atomic kind
//! too) and must change nothing: no RAM write, write descriptor or record
//! ever. `stat_resp` pulses the cycle after the sink took a READ RESPONSE.

use crate::{fail, Fail, Kind, Model, PortsIn, PortsOut, PSN_MASK};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::collections::{HashMap, VecDeque};

const OP_FIRST: u32 = 0x0d;
const OP_MIDDLE: u32 = 0x0e;
const OP_LAST: u32 = 0x0f;
const OP_ONLY: u32 = 0x10;
const OP_ACK: u32 = 0x11;
const OP_ATOMIC_ACK: u32 = 0x12;
/// `s_job_atomic`
const A_NONE: u32 = 0;
const A_CMP_SWAP: u32 = 1;
const A_FETCH_ADD: u32 = 2;
const A_REPLAY: u32 = 3;
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
    /// ATOMIC_EN configurations: the share of the jobs that are not ACK
    /// jobs that are atomics
    pub p_atomic: f64,
    /// chance that an atomic's read fails
    pub p_atom_err: f64,
}

impl RrCfg {
    pub fn new(model: &'static str, seed: u64) -> Self {
        Self {
            model,
            seed,
            jobs: 1000,
            p_err: 0.03,
            resets: 2,
            p_atomic: 0.45,
            p_atom_err: 0.06,
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
    /// atomics executed (their record seen)
    pub atomics: usize,
    /// CMP_SWAP executed whose compare equalled the original value
    pub cmp_hits: usize,
    /// ... whose compare did not
    pub cmp_misses: usize,
    pub fetch_adds: usize,
    /// FETCH_ADDs whose sum carried past bit 63 (wrapped)
    pub add_wraps: usize,
    /// ... past bit 31
    pub add_carry32: usize,
    /// atomics executed on the word the atomic executed before wrote
    pub chained: usize,
    /// replays answered
    pub replays: usize,
    /// atomics whose read failed (a NAK)
    pub atomic_naks: usize,
    /// atomics' 8 bytes written in two or three pieces
    pub split_snoops: usize,
    /// atomics' reads whose last piece came in their status's cycle
    pub snoop_at_status: usize,
    /// READ descriptors of a job accepted before the atomic ahead of it
    /// finished (held back by it)
    pub held_back: usize,
    /// atomics' read descriptors of a job accepted before the atomic ahead
    /// finished
    pub atomic_behind_atomic: usize,
    /// cycles a staging RAM write waited
    pub ram_waits: usize,
    /// cycles a write descriptor waited
    pub wr_waits: usize,
    /// resets while an atomic ran
    pub resets_in_atomic: usize,
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
    /// `s_job_atomic` as offered (junk without ATOMIC_EN)
    atomic_in: u32,
    /// what the job is: A_NONE for a READ or ACK job
    kind: u32,
    /// compare or add (a replay: its original value), swap, QP number
    /// (junk for the other jobs)
    opa: u64,
    opb: u64,
    qpn: u32,
    /// the reference, at acceptance (CMP_SWAP, FETCH_ADD): the value the
    /// read finds, the value written back, whether the read fails
    orig: u64,
    new: u64,
    err: bool,
    /// the cycle it was accepted
    accepted_at: u64,
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
    /// the read fails (decided when the DMA engine takes the descriptor;
    /// an atomic's, when it is accepted)
    err: bool,
    /// an atomic's write-back's status: the cycle
    wr_status: Option<u64>,
}

/// The atomics' side of the bench: the host memory's words the atomics
/// work on, and the reference's copy (every job accepted executed).
struct Atoms {
    en: bool,
    p_atomic: f64,
    qmask: u32,
    /// the words' addresses
    pool: Vec<u64>,
    /// host memory as the DMA engines left it
    mem: HashMap<u64, u64>,
    /// ... as the jobs accepted leave it
    refm: HashMap<u64, u64>,
}

impl Atoms {
    fn new(rng: &mut ChaCha8Rng, en: bool, p_atomic: f64, qmask: u32) -> Self {
        let mut pool: Vec<u64> = vec![0xffff_fff8, u64::MAX - 7];
        while pool.len() < 5 {
            pool.push(rng.gen::<u64>() & !7);
        }
        let mem: HashMap<u64, u64> = pool
            .iter()
            .map(|&a| {
                let v = match rng.gen_range(0..4) {
                    0 => u64::MAX - rng.gen_range(0..4),
                    1 => 0xffff_fffe + rng.gen_range(0..3),
                    2 => 0,
                    _ => rng.gen(),
                };
                (a, v)
            })
            .collect();
        Self {
            en,
            p_atomic,
            qmask,
            pool,
            refm: mem.clone(),
            mem,
        }
    }
}

/// The new value of an executed atomic.
fn atomic_new(kind: u32, orig: u64, opa: u64, opb: u64) -> u64 {
    match kind {
        A_FETCH_ADD => orig.wrapping_add(opa),
        _ => {
            if orig == opa {
                opb
            } else {
                orig
            }
        }
    }
}

fn kind_name(kind: u32) -> &'static str {
    match kind {
        A_CMP_SWAP => "CMP_SWAP",
        A_FETCH_ADD => "FETCH_ADD",
        A_REPLAY => "replay",
        _ => "READ",
    }
}

fn gen_job(rng: &mut ChaCha8Rng, a: &Atoms) -> Job {
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
    let mut j = Job {
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
        // (without ATOMIC_EN junk, to be ignored)
        atomic_in: if a.en { A_NONE } else { rng.gen_range(0..4) },
        kind: A_NONE,
        opa: rng.gen(),
        opb: rng.gen(),
        qpn: rng.gen::<u32>() & a.qmask,
        orig: 0,
        new: 0,
        err: false,
        accepted_at: 0,
    };
    if a.en && !ack && rng.gen_bool(a.p_atomic) {
        j.kind = match rng.gen_range(0..10) {
            0..=3 => A_CMP_SWAP,
            4..=7 => A_FETCH_ADD,
            _ => A_REPLAY,
        };
        j.atomic_in = j.kind;
        if j.kind == A_REPLAY {
            // (the responder's: a duplicate reads nothing)
            j.len = 0;
            j.opa = match rng.gen_range(0..3) {
                0 => u64::MAX - rng.gen_range(0..2),
                _ => rng.gen(),
            };
        } else {
            j.len = 8;
            j.bus = a.pool[rng.gen_range(0..a.pool.len())];
            // the value the word will hold when this atomic runs
            let cur = a.refm[&j.bus];
            if j.kind == A_CMP_SWAP {
                j.opa = match rng.gen_range(0..5) {
                    0..=2 => cur,
                    3 => cur ^ (1u64 << rng.gen_range(0..64)),
                    _ => rng.gen(),
                };
            } else {
                j.opa = match rng.gen_range(0..4) {
                    0 => rng.gen(),
                    1 => rng.gen_range(1..16),
                    // past 2^64: the sum wraps to a small number
                    2 => (!cur).wrapping_add(1 + rng.gen_range(0..4)),
                    // a carry into bit 32
                    _ => (1u64 << 32) - (cur & 0xffff_ffff) + rng.gen_range(0..4),
                };
            }
        }
    }
    j
}

/// The packets of job `j` (index `ji`), as the contract says.
fn packets(ji: usize, j: &Job) -> Vec<Pkt> {
    if j.kind != A_NONE {
        // one ATOMIC ACKNOWLEDGE; an executed atomic reads its 8 bytes
        return vec![Pkt {
            job: ji,
            k: 0,
            psn: j.psn,
            opcode: OP_ATOMIC_ACK,
            len: if j.kind == A_REPLAY { 0 } else { 8 },
            bus: j.bus,
            last: true,
            slot: None,
            status: None,
            err: false,
            wr_status: None,
        }];
    }
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
            wr_status: None,
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
                wr_status: None,
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
    w[5] = j.pmtu_log | (u32::from(j.ack) << 4) | (j.atomic_in << 5) | (j.syn << 8) | (j.qpn << 16);
    w[6] = j.dmac as u32;
    w[7] = ((j.dmac >> 32) as u32 & 0xffff) | (j.sport << 16);
    w[8] = j.dip;
    w[9] = j.dqp;
    w[10] = j.opa as u32;
    w[11] = (j.opa >> 32) as u32;
    w[12] = j.opb as u32;
    w[13] = (j.opb >> 32) as u32;
}

/// The block's RAM geometry: the snoop's and the write-back's word.
#[derive(Debug, Clone, Copy)]
struct Geo {
    /// bytes per RAM word, log2
    seg_log: u32,
    /// `s_snoop_addr` bits
    addr_w: u32,
    /// 32-bit words of `s_snoop_data`
    data_words: usize,
    /// the strobes' mask
    strb_mask: u32,
    slot_base: u32,
    slot_log: u32,
    n_slots: usize,
}

/// One write of the read engine into the RAM (a word address).
#[derive(Debug, Clone)]
struct Snoop {
    addr: u32,
    data: [u32; 8],
    strb: u32,
}

impl Geo {
    fn junk_data(&self, rng: &mut ChaCha8Rng) -> [u32; 8] {
        let mut d = [0u32; 8];
        for w in d.iter_mut().take(self.data_words) {
            *w = rng.gen();
        }
        d
    }

    /// An atomic's 8 bytes `v` into word `addr` (lanes 0..7): one to three
    /// pieces of strobes, junk in every other lane.
    fn atomic_pieces(&self, rng: &mut ChaCha8Rng, addr: u32, v: u64) -> VecDeque<Snoop> {
        let n = match rng.gen_range(0..10) {
            0..=2 => 1,
            3..=7 => 2,
            _ => 3,
        };
        // each byte's piece, every piece with a byte
        let mut of = [0usize; 8];
        loop {
            for b in of.iter_mut() {
                *b = rng.gen_range(0..n);
            }
            if (0..n).all(|p| of.contains(&p)) {
                break;
            }
        }
        (0..n)
            .map(|p| {
                let mut data = self.junk_data(rng);
                let mut strb = 0u32;
                for (b, &q) in of.iter().enumerate() {
                    if q == p {
                        strb |= 1 << b;
                        let byte = ((v >> (8 * b)) & 0xff) as u32;
                        let (wi, sh) = (b / 4, 8 * (b % 4));
                        data[wi] = (data[wi] & !(0xff << sh)) | (byte << sh);
                    }
                }
                Snoop { addr, data, strb }
            })
            .collect()
    }

    /// Some writes of a READ payload of `len` bytes into slot word `addr`
    /// onwards.
    fn read_pieces(&self, rng: &mut ChaCha8Rng, addr: u32, len: u32) -> VecDeque<Snoop> {
        let words = len.div_ceil(1 << self.seg_log).max(1);
        (0..rng.gen_range(0..=2))
            .map(|_| Snoop {
                addr: addr + rng.gen_range(0..words),
                data: self.junk_data(rng),
                strb: (rng.gen::<u32>() & self.strb_mask).max(1),
            })
            .collect()
    }

    /// Another engine's write: a word outside the slots.
    fn junk_snoop(&self, rng: &mut ChaCha8Rng) -> Snoop {
        let lo = self.slot_base >> self.seg_log;
        let hi = (self.slot_base + ((self.n_slots as u32) << self.slot_log)) >> self.seg_log;
        let addr = loop {
            let a = rng.gen::<u32>() & ((1 << self.addr_w) - 1);
            if a < lo || a >= hi {
                break a;
            }
        };
        Snoop {
            addr,
            data: self.junk_data(rng),
            strb: rng.gen::<u32>() & self.strb_mask,
        }
    }
}

fn snoop_input(i: &mut PortsIn, s: &Snoop) {
    i.s_data[14] = s.addr;
    i.s_data[15] = s.strb;
    i.s_data[16..24].copy_from_slice(&s.data);
}

/// Masks the inputs the C ABI passes whole to their ports' widths.
fn mask_inputs(i: &mut PortsIn, g: &Geo, qmask: u32) {
    let w = &mut i.s_data;
    w[5] = (w[5] & 0xffff) | (((w[5] >> 16) & qmask) << 16);
    w[14] &= (1 << g.addr_w) - 1;
    w[15] &= g.strb_mask;
    for d in w[16 + g.data_words..24].iter_mut() {
        *d = 0;
    }
}

/// The environment's changing moods: how often things happen.
#[derive(Debug, Clone, Copy)]
struct Mood {
    p_job: f64,
    p_desc_ready: f64,
    status_delay: u64,
    p_pkt_ready: f64,
    done_delay: u64,
    /// the read engine's RAM writes, the staging RAM's and the write
    /// engine's readiness, the write's status delay
    p_snoop: f64,
    p_wr_ready: f64,
    wr_delay: u64,
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
        p_snoop: pick(rng, &[0.2, 0.6, 1.0]),
        p_wr_ready: pick(rng, &[0.1, 0.5, 0.9, 1.0]),
        wr_delay: pick_u(rng, &[1, 3, 20, 120]),
    }
}

/// Cycles without a handshake, a status or an s_done before the run
/// counts as stuck (the longest wait the environment makes is 200).
const STALL: u64 = 5000;

// The ports (csrc/blocks.cpp): `s_data` words 0 s_job_psn, 1 msn, 2..3
// bus, 4 len, 5 {qpn (31:16), syndrome (15:8), atomic (6:5), ack (4),
// pmtu_log (3:0)}, 6..7 dmac with udp_sport in word 7 bits 31:16, 8 dip, 9
// dest_qp, 10..11 opa, 12..13 opb, 14 s_snoop_addr, 15 s_snoop_strb,
// 16..23 s_snoop_data; `s_valid` the bits below; `s_last`
// s_rd_status_error. `m_data` words 0..1 m_rd_desc_pcie_addr, 2 ram_addr,
// 3 len, 4 id, 5..6 m_pkt_dmac, 7 dip, 8 {syndrome, opcode, udp_sport}, 9
// dest_qp, 10 psn, 11 msn, 12 payload_addr, 13 payload_len, 14 jobs_out,
// 15..16 m_pkt_atomic_orig, 17 m_ram_wr_addr, 18..19 m_ram_wr_data (63:0),
// 20 m_ram_wr_strb, 21..22 m_wr_desc_pcie_addr, 23 ram_addr, 24 len, 25
// id, 26 m_rec_qpn, 27 m_rec_psn, 28..29 m_rec_orig; `s_ready`
// s_job_ready; `m_valid` {stat_atomic, m_rec_valid, m_wr_desc_valid,
// m_ram_wr_en, stat_rd_error, busy, m_pkt_valid, m_rd_desc_valid};
// `m_last` {stat_resp, stat_replay}.
const V_JOB: u32 = 1;
const V_DESC_READY: u32 = 2;
const V_STATUS: u32 = 4;
const V_PKT_READY: u32 = 8;
const V_DONE: u32 = 16;
const V_SNOOP: u32 = 32;
const V_RAM_READY: u32 = 64;
const V_WR_READY: u32 = 128;
const V_WR_STATUS: u32 = 256;
/// `m_valid`'s m_rec_valid: it follows `s_wr_status_valid` in its cycle
const M_REC_VALID: u8 = 0x40;

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
    orig: u64,
    ram_en: bool,
    ram_addr: u32,
    ram_data: u64,
    ram_strb: u32,
    wr_valid: bool,
    wr_addr: u64,
    wr_ram: u32,
    wr_len: u32,
    wr_id: u32,
    rec_valid: bool,
    rec_qpn: u32,
    rec_psn: u32,
    rec_orig: u64,
    stat_atomic: bool,
    stat_replay: bool,
    stat_resp: bool,
}

fn word64(d: &[u32]) -> u64 {
    u64::from(d[0]) | (u64::from(d[1]) << 32)
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
        orig: word64(&d[15..]),
        ram_en: o.m_valid & 0x10 != 0,
        ram_addr: d[17],
        ram_data: word64(&d[18..]),
        ram_strb: d[20],
        wr_valid: o.m_valid & 0x20 != 0,
        wr_addr: word64(&d[21..]),
        wr_ram: d[23],
        wr_len: d[24],
        wr_id: d[25],
        rec_valid: o.m_valid & M_REC_VALID != 0,
        rec_qpn: d[26],
        rec_psn: d[27],
        rec_orig: word64(&d[28..]),
        stat_atomic: o.m_valid & 0x80 != 0,
        stat_replay: o.m_last & 1 != 0,
        stat_resp: o.m_last & 2 != 0,
    }
}

/// The atomic that runs (from its read's descriptor to its write-back's
/// status or its failed read's status).
#[derive(Debug, Clone)]
struct Run {
    /// its packet
    p: usize,
    /// its read's status came (without error)
    read_ok: bool,
    /// the cycle the staging RAM took its new value
    ram_at: Option<u64>,
    /// the cycle the write engine took its descriptor
    desc_at: Option<u64>,
    /// when the write's status comes
    wr_due: Option<u64>,
}

/// A read the DMA engine took: its packet, when its status is due, its
/// RAM writes still to come, the cycle of its last one.
#[derive(Debug, Clone)]
struct Rd {
    p: usize,
    due: u64,
    pieces: VecDeque<Snoop>,
    last_piece: Option<u64>,
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
    let atomic_en = c.param("ATOMIC_EN") != 0;
    let data_w = c.param("DATA_W");
    let atom_ram = c.param("ATOM_RAM");
    let qmask = (1u32 << c.param("QN_W")) - 1;
    let seg_log = (data_w / 8).trailing_zeros();
    let geo = Geo {
        seg_log,
        addr_w: c.param("RAM_ADDR_W") - seg_log,
        data_words: (data_w / 32) as usize,
        strb_mask: if data_w / 8 >= 32 {
            u32::MAX
        } else {
            (1 << (data_w / 8)) - 1
        },
        slot_base,
        slot_log,
        n_slots,
    };
    let mut rng = ChaCha8Rng::seed_from_u64(cfg.seed);
    let mut atoms = Atoms::new(&mut rng, atomic_en, cfg.p_atomic, qmask);

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
    let mut pkt_pending: Option<(usize, [u32; 12])> = None;
    // reads taken by the DMA engine, packets taken by the sink (packet,
    // s_done due)
    let mut dma: VecDeque<Rd> = VecDeque::new();
    let mut done_q: VecDeque<(usize, u64)> = VecDeque::new();
    let (mut last_status, mut last_done) = (0u64, 0u64);
    // which packet holds each slot; packets between descriptor (or, with
    // no payload, being offered) and s_done
    let mut held: Vec<Option<usize>> = vec![None; n_slots];
    let mut in_flight = 0usize;
    // the atomic that runs; the staging RAM word ATOM_RAM; offered and not
    // taken: the staging RAM write's and the write descriptor's words
    let mut run: Option<Run> = None;
    let mut staging = 0u64;
    let mut ram_pending: Option<[u32; 4]> = None;
    let mut wr_pending: Option<[u32; 5]> = None;
    // the last atomic that finished: its job and the cycle; the address the
    // last executed one wrote
    let mut last_atom_end: Option<(usize, u64)> = None;
    let mut last_atom_bus: Option<u64> = None;
    // last cycle: m_rec_valid, the sink took a READ RESPONSE
    let (mut rec_before, mut resp_before) = (false, false);
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
        if sent == cfg.jobs && offer.is_none() && all_out && run.is_none() && rst_left == 0 {
            break;
        }
        let at = || format!("{} seed {} cycle {cyc}", cfg.model, cfg.seed);
        if cyc > progress + STALL {
            fail!(
                "{}: stuck for {STALL} cycles: {sent} jobs sent, {accepted} accepted since \
                 the last reset, {finished} done; packet {next_out} of {} expected out, \
                 descriptor of packet {next_desc} expected, {} reads out, {} s_done due, \
                 atomic running: {run:?}",
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
        // a reset with jobs in flight (with ATOMIC_EN, in an atomic), now
        // and then
        if rst_left == 0
            && resets_left > 0
            && sent * (cfg.resets + 1) >= cfg.jobs * (cfg.resets + 1 - resets_left)
            && accepted > finished + 1
            && (!atomic_en || run.is_some())
            && rng.gen_bool(0.05)
        {
            rst_left = rng.gen_range(1..=3);
            resets_left -= 1;
            r.resets += 1;
            if run.is_some() {
                r.resets_in_atomic += 1;
            }
        }
        let rst = rst_left > 0;

        // the inputs: junk everywhere nothing is offered
        let mut i = PortsIn::default();
        for w in i.s_data.iter_mut() {
            *w = rng.gen();
        }
        i.s_last = rng.gen_range(0..16);
        if offer.is_none() && sent < cfg.jobs && rng.gen_bool(mood.p_job) {
            offer = Some(gen_job(&mut rng, &atoms));
        }
        if let (Some(j), false) = (&offer, rst) {
            job_input(&mut i, j);
            i.s_valid |= V_JOB;
        }
        if !rst && rng.gen_bool(mood.p_desc_ready) {
            i.s_valid |= V_DESC_READY;
        }
        // the read engine's RAM writes: the reads' pieces in order, else
        // now and then another engine's
        let mut snooped = false;
        if !rst {
            if let Some(d) = dma.iter_mut().find(|d| !d.pieces.is_empty()) {
                if rng.gen_bool(mood.p_snoop) {
                    let sn = d.pieces.pop_front().unwrap();
                    snoop_input(&mut i, &sn);
                    i.s_valid |= V_SNOOP;
                    d.last_piece = Some(cyc);
                    snooped = true;
                }
            }
            if !snooped && rng.gen_bool(0.1) {
                snoop_input(&mut i, &geo.junk_snoop(&mut rng));
                i.s_valid |= V_SNOOP;
            }
        }
        // a status after the read's RAM writes (in the last one's cycle
        // half the time)
        let status = match dma.front() {
            Some(d)
                if !rst
                    && d.due <= cyc
                    && d.pieces.is_empty()
                    && (d.last_piece != Some(cyc) || rng.gen_bool(0.5)) =>
            {
                let d = dma.pop_front().unwrap();
                i.s_valid |= V_STATUS;
                i.s_last = if pkts[d.p].err {
                    rng.gen_range(1..16)
                } else {
                    0
                };
                if d.last_piece == Some(cyc) && jobs[pkts[d.p].job].kind != A_NONE {
                    r.snoop_at_status += 1;
                }
                Some(d.p)
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
        if !rst && rng.gen_bool(mood.p_wr_ready) {
            i.s_valid |= V_RAM_READY;
        }
        if !rst && rng.gen_bool(mood.p_wr_ready) {
            i.s_valid |= V_WR_READY;
        }
        // the write-back's status; without ATOMIC_EN junk
        let wr_status = if atomic_en {
            !rst && run
                .as_ref()
                .is_some_and(|a| a.wr_due.is_some_and(|d| d <= cyc))
        } else {
            rng.gen_bool(0.05)
        };
        if wr_status {
            i.s_valid |= V_WR_STATUS;
        }
        i.rst = u8::from(rst);
        mask_inputs(&mut i, &geo, qmask);

        // every output but m_rec_valid is a register: other inputs before
        // the edge change none
        let alt = if cyc % 4 == 0 {
            let mut a = PortsIn {
                s_valid: rng.gen_range(0..512),
                s_last: rng.gen_range(0..16),
                rst: rng.gen_range(0..2),
                ..i.clone()
            };
            for w in a.s_data.iter_mut() {
                *w = rng.gen();
            }
            mask_inputs(&mut a, &geo, qmask);
            Some(m.peek(&a))
        } else {
            None
        };
        let po = m.step(&i);
        if po.sim_flags != 0 {
            fail!("{}: the model stopped ({:#x})", at(), po.sim_flags);
        }
        if let Some(p) = alt {
            if p.m_data != po.m_data
                || p.m_valid & !M_REC_VALID != po.m_valid & !M_REC_VALID
                || p.m_last != po.m_last
                || p.s_ready != po.s_ready
            {
                fail!(
                    "{}: other inputs before the edge changed an output (valid {:#x} -> {:#x}, \
                     last {:#x} -> {:#x}, s_job_ready {} -> {}, data {:x?} -> {:x?}): the \
                     outputs must be registers",
                    at(),
                    po.m_valid,
                    p.m_valid,
                    po.m_last,
                    p.m_last,
                    po.s_ready,
                    p.s_ready,
                    po.m_data,
                    p.m_data
                );
            }
        }
        let o = decode(&po);
        let desc_ready = i.s_valid & V_DESC_READY != 0;
        let pkt_ready = i.s_valid & V_PKT_READY != 0;
        let ram_ready = i.s_valid & V_RAM_READY != 0;
        let wr_ready = i.s_valid & V_WR_READY != 0;

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
                    "{}: the read of packet {} of {} job {} (bus {:#x} + {}, PMTU {}) is bus \
                     {:#x} len {} id {:#x}, want bus {:#x} len {} id {id_tag:#x}",
                    at(),
                    e.k,
                    kind_name(j.kind),
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
            // nothing is issued while an atomic runs
            if let Some(a) = &run {
                let q = &pkts[a.p];
                fail!(
                    "{}: the read of packet {} of {} job {} issued while the {} of job {} runs \
                     (its read's status {}, its write-back's descriptor {})",
                    at(),
                    e.k,
                    kind_name(j.kind),
                    e.job,
                    kind_name(jobs[q.job].kind),
                    q.job,
                    if a.read_ok { "came" } else { "not yet" },
                    if a.desc_at.is_some() {
                        "taken"
                    } else {
                        "not yet"
                    }
                );
            }
            if let Some((aj, end)) = last_atom_end {
                if aj < e.job && j.accepted_at < end {
                    if j.kind == A_NONE {
                        r.held_back += 1;
                    } else {
                        r.atomic_behind_atomic += 1;
                    }
                }
            }
            if j.kind != A_NONE {
                run = Some(Run {
                    p,
                    read_ok: false,
                    ram_at: None,
                    desc_at: None,
                    wr_due: None,
                });
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
                let j = &jobs[pkts[p].job];
                let word = (slot_base + (pkts[p].slot.unwrap() << slot_log)) >> seg_log;
                let pieces = if j.kind != A_NONE {
                    // the atomic's read: it sees what every earlier atomic left
                    pkts[p].err = j.err;
                    let v = atoms.mem[&j.bus];
                    if v != j.orig {
                        fail!(
                            "{}: the {} of job {} reads {v:#x} at {:#x}, where the atomics \
                             before it leave {:#x} (an earlier write-back not issued yet)",
                            at(),
                            kind_name(j.kind),
                            pkts[p].job,
                            j.bus,
                            j.orig
                        );
                    }
                    if j.err {
                        VecDeque::new()
                    } else {
                        let ps = geo.atomic_pieces(&mut rng, word, v);
                        if ps.len() > 1 {
                            r.split_snoops += 1;
                        }
                        ps
                    }
                } else {
                    pkts[p].err = rng.gen_bool(cfg.p_err);
                    if pkts[p].err {
                        VecDeque::new()
                    } else {
                        geo.read_pieces(&mut rng, word, pkts[p].len)
                    }
                };
                let due = (cyc + rng.gen_range(1..=mood.status_delay)).max(last_status + 1);
                last_status = due;
                dma.push_back(Rd {
                    p,
                    due,
                    pieces,
                    last_piece: None,
                });
            }
        }

        // the packet to roce_tx
        let pkt_words: [u32; 12] = po.m_data[5..17].try_into().unwrap();
        // a packet first offered: whether it is a NAK, a replay's answer
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
                if j.ack { "ACK" } else { kind_name(j.kind) },
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
            } else if j.kind != A_NONE {
                (OP_ATOMIC_ACK, SYN_ACK, 0)
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
            if j.kind != A_NONE && !nak {
                if j.kind != A_REPLAY && !matches!(e.wr_status, Some(t) if t < cyc) {
                    fail!(
                        "{}: {what}: the ATOMIC ACKNOWLEDGE offered before its write-back's \
                         status",
                        at()
                    );
                }
                let want = if j.kind == A_REPLAY { j.opa } else { j.orig };
                if o.orig != want {
                    fail!(
                        "{}: {what}: the ATOMIC ACKNOWLEDGE's original value is {:#x}, want \
                         {want:#x} ({}; compare/add {:#x}, swap {:#x})",
                        at(),
                        o.orig,
                        if j.kind == A_REPLAY {
                            "the replay's"
                        } else {
                            "the value its read found"
                        },
                        j.opa,
                        j.opb
                    );
                }
            }
            if !nak && e.len != 0 && j.kind == A_NONE {
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
                if j.kind != A_NONE {
                    r.atomic_naks += 1;
                }
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
                OP_ATOMIC_ACK => {
                    if j.kind == A_REPLAY {
                        r.replays += 1;
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
            new_pkt = Some((nak, j.kind == A_REPLAY));
            next_out += 1;
            pkt_pending = Some((p, pkt_words));
        }
        if o.stat_err != (new_pkt.map(|n| n.0) == Some(true)) {
            fail!(
                "{}: stat_rd_error {} with {}",
                at(),
                o.stat_err,
                match new_pkt {
                    Some((true, _)) => "a NAK first offered",
                    Some(_) => "a packet first offered",
                    None => "no new packet",
                }
            );
        }
        if o.stat_replay != (new_pkt.map(|n| n.1) == Some(true)) {
            fail!(
                "{}: stat_replay {} with {}",
                at(),
                o.stat_replay,
                match new_pkt {
                    Some((_, true)) => "a replay's ATOMIC ACKNOWLEDGE first offered",
                    Some(_) => "another packet first offered",
                    None => "no new packet",
                }
            );
        }
        if o.stat_resp != resp_before {
            fail!(
                "{}: stat_resp {}, the cycle after the sink {} a READ RESPONSE",
                at(),
                o.stat_resp,
                if resp_before { "took" } else { "took no" }
            );
        }

        // an atomic's write-back: the staging RAM word, then the descriptor
        let ram_words = [po.m_data[17], po.m_data[18], po.m_data[19], po.m_data[20]];
        let mut ram_took = false;
        if o.ram_en {
            let Some(a) = run.as_mut().filter(|a| a.read_ok && a.ram_at.is_none()) else {
                fail!(
                    "{}: a staging RAM write (word {:#x}, {:#x}) with no atomic whose read came \
                     back to write back (running: {run:?})",
                    at(),
                    o.ram_addr,
                    o.ram_data
                );
            };
            let j = &jobs[pkts[a.p].job];
            if o.ram_addr != atom_ram >> seg_log || o.ram_strb != 0xff || o.ram_data != j.new {
                fail!(
                    "{}: the {} of job {} (original {:#x}, compare/add {:#x}, swap {:#x}) \
                     writes {:#x} to RAM word {:#x} strobes {:#x}, want {:#x} to word {:#x} \
                     ({atom_ram:#x}) strobes 0xff",
                    at(),
                    kind_name(j.kind),
                    pkts[a.p].job,
                    j.orig,
                    j.opa,
                    j.opb,
                    o.ram_data,
                    o.ram_addr,
                    o.ram_strb,
                    j.new,
                    atom_ram >> seg_log
                );
            }
            if ram_pending.is_some_and(|w| w != ram_words) {
                fail!(
                    "{}: the staging RAM write offered last cycle and not taken changed",
                    at()
                );
            }
            if ram_ready {
                a.ram_at = Some(cyc);
                staging = o.ram_data;
                ram_pending = None;
                ram_took = true;
            } else {
                ram_pending = Some(ram_words);
                r.ram_waits += 1;
            }
        } else if ram_pending.is_some() {
            fail!(
                "{}: the staging RAM write offered last cycle was withdrawn",
                at()
            );
        }
        let wr_words = [
            po.m_data[21],
            po.m_data[22],
            po.m_data[23],
            po.m_data[24],
            po.m_data[25],
        ];
        let mut wr_took = false;
        if o.wr_valid {
            let Some(a) = run
                .as_mut()
                .filter(|a| a.ram_at.is_some_and(|t| t < cyc) && a.desc_at.is_none())
            else {
                fail!(
                    "{}: a write descriptor (bus {:#x}) with no atomic whose new value the \
                     staging RAM took in an earlier cycle (running: {run:?})",
                    at(),
                    o.wr_addr
                );
            };
            let j = &jobs[pkts[a.p].job];
            if o.wr_addr != j.bus || o.wr_ram != atom_ram || o.wr_len != 8 || o.wr_id != id_tag {
                fail!(
                    "{}: the write-back of the {} of job {} is bus {:#x} RAM {:#x} len {} id \
                     {:#x}, want bus {:#x} RAM {atom_ram:#x} len 8 id {id_tag:#x}",
                    at(),
                    kind_name(j.kind),
                    pkts[a.p].job,
                    o.wr_addr,
                    o.wr_ram,
                    o.wr_len,
                    o.wr_id,
                    j.bus
                );
            }
            if wr_pending.is_some_and(|w| w != wr_words) {
                fail!(
                    "{}: the write descriptor offered last cycle and not taken changed",
                    at()
                );
            }
            if wr_ready {
                a.desc_at = Some(cyc);
                a.wr_due = Some(cyc + rng.gen_range(1..=mood.wr_delay));
                atoms.mem.insert(j.bus, staging);
                wr_pending = None;
                wr_took = true;
            } else {
                wr_pending = Some(wr_words);
                r.wr_waits += 1;
            }
        } else if wr_pending.is_some() {
            fail!(
                "{}: the write descriptor offered last cycle was withdrawn",
                at()
            );
        }
        // the record, in the write-back's status's cycle
        if o.rec_valid != (atomic_en && wr_status) {
            fail!(
                "{}: m_rec_valid {} in a cycle {} the write-back's status (running: {run:?})",
                at(),
                o.rec_valid,
                if wr_status { "with" } else { "without" }
            );
        }
        if o.stat_atomic != rec_before {
            fail!(
                "{}: stat_atomic {}, the cycle after {} record",
                at(),
                o.stat_atomic,
                if rec_before { "a" } else { "no" }
            );
        }
        let mut atom_end = false;
        if o.rec_valid {
            let a = run.take().unwrap();
            let ji = pkts[a.p].job;
            let j = &jobs[ji];
            if o.rec_qpn != j.qpn || o.rec_psn != j.psn || o.rec_orig != j.orig {
                fail!(
                    "{}: the record of the {} of job {} is QP {} PSN {:#x} orig {:#x}, want QP \
                     {} PSN {:#x} orig {:#x}",
                    at(),
                    kind_name(j.kind),
                    ji,
                    o.rec_qpn,
                    o.rec_psn,
                    o.rec_orig,
                    j.qpn,
                    j.psn,
                    j.orig
                );
            }
            pkts[a.p].wr_status = Some(cyc);
            r.atomics += 1;
            if j.kind == A_CMP_SWAP {
                if j.orig == j.opa {
                    r.cmp_hits += 1;
                } else {
                    r.cmp_misses += 1;
                }
            } else {
                r.fetch_adds += 1;
                if j.orig.checked_add(j.opa).is_none() {
                    r.add_wraps += 1;
                }
                if (j.orig & 0xffff_ffff) + (j.opa & 0xffff_ffff) > 0xffff_ffff {
                    r.add_carry32 += 1;
                }
            }
            if last_atom_bus == Some(j.bus) {
                r.chained += 1;
            }
            last_atom_bus = Some(j.bus);
            last_atom_end = Some((ji, cyc));
            atom_end = true;
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
            || snooped
            || ram_took
            || wr_took
            || atom_end
            || rst;
        if moved {
            progress = cyc;
        }

        // this cycle's handshakes, at the edge
        resp_before = false;
        if let Some((p, _)) = pkt_pending {
            if pkts[p].last && !pkt_ready {
                r.last_waits += 1;
            }
            if pkt_ready {
                pkt_pending = None;
                resp_before = (OP_FIRST..=OP_ONLY).contains(&o.opcode);
                let due = (cyc + rng.gen_range(1..=mood.done_delay)).max(last_done + 1);
                last_done = due;
                done_q.push_back((p, due));
                r.packets += 1;
                if pkts[p].last {
                    finished += 1;
                    r.jobs_done += 1;
                    let j = &jobs[pkts[p].job];
                    let pmtu = 1u32 << j.pmtu_log;
                    if !j.ack && j.kind == A_NONE && j.len == 0 {
                        r.zero_len += 1;
                    }
                    if !j.ack && j.kind == A_NONE && j.len >= 2 * pmtu && j.len % pmtu == 0 {
                        r.exact += 1;
                    }
                    if j.psn > pkts[p].psn {
                        r.psn_wraps += 1;
                    }
                }
            }
        }
        rec_before = o.rec_valid;
        if let Some(p) = status {
            pkts[p].status = Some((cyc, pkts[p].err));
            if jobs[pkts[p].job].kind != A_NONE {
                // (its run started at its descriptor, before this status)
                let Some(a) = run.as_mut().filter(|a| a.p == p) else {
                    fail!("{}: bench: the status of an atomic not running", at());
                };
                if pkts[p].err {
                    // a failed read: nothing to write back
                    run = None;
                    last_atom_end = Some((pkts[p].job, cyc));
                } else {
                    a.read_ok = true;
                }
            }
        }
        if let Some(p) = done {
            if let Some(s) = pkts[p].slot {
                held[s as usize] = None;
            }
            in_flight -= 1;
        }
        if let Some(mut j) = offer.take() {
            if !rst && o.job_ready {
                if j.ack && pkts[next_out..].iter().any(|q| !jobs[q.job].ack) {
                    r.acks_behind_reads += 1;
                }
                // the reference executes the atomic now, in job order
                if j.kind == A_CMP_SWAP || j.kind == A_FETCH_ADD {
                    j.orig = atoms.refm[&j.bus];
                    j.err = rng.gen_bool(cfg.p_atom_err);
                    j.new = atomic_new(j.kind, j.orig, j.opa, j.opb);
                    if !j.err {
                        atoms.refm.insert(j.bus, j.new);
                    }
                }
                j.accepted_at = cyc;
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
            // the DMA engines and roce_tx reset with it: what was in flight
            // is gone; host memory keeps the write-backs issued
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
            run = None;
            ram_pending = None;
            wr_pending = None;
            last_atom_end = None;
            atoms.refm = atoms.mem.clone();
        }
        cyc += 1;
    }
    // nothing more comes out; idle
    for k in 0..16 {
        let po = m.step(&PortsIn {
            s_valid: V_DESC_READY | V_PKT_READY | V_RAM_READY | V_WR_READY,
            ..PortsIn::default()
        });
        let o = decode(&po);
        if o.desc_valid
            || o.pkt_valid
            || o.busy
            || !o.job_ready
            || o.stat_err
            || o.ram_en
            || o.wr_valid
            || o.rec_valid
        {
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
    if atoms.en && atoms.mem != atoms.refm {
        fail!(
            "{} seed {}: host memory after the run {:x?}, the reference's {:x?}",
            cfg.model,
            cfg.seed,
            atoms.mem,
            atoms.refm
        );
    }
    r.cycles = cyc;
    Ok(r)
}
