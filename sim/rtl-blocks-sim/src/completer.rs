//! Bench of `completer`, the requester's ACK completer: seeded random
//! ACKs, NAKs, timeouts and flushes on a few QPs, each QP's records and
//! outstanding ring kept here as the requester keeps them (read at the
//! completer's `qpn`, written from its `req_*`, `stamp_*`, `rtx_*` and
//! `pop`), and every effect checked against a reference written from the
//! IB rules the completer implements:
//!
//! - an ACK for PSN p counts when p is in [una - 1, sent - 1], a NAK when
//!   p is in [una, sent); anything else is dropped (`stat_ack_drop`) and
//!   changes nothing;
//! - an ACK retires the ring's WQEs whose last PSN is at most p (a NAK:
//!   below p), in order, asking for a successful CQE for each signaled
//!   one with its wr_id, length, index and opcode; an ACK that moves una
//!   restores both retry counters and stamps the timer;
//! - a sequence NAK moves una to p and asks for a retransmission (on mp:
//!   of that packet alone, then of the other lost PSNs its bitmap names,
//!   which it writes to the QP's LOST record) unless one from p stands
//!   (and, naming una again, rotates the paths); without progress it
//!   spends retry_cnt, and (path health) the path of the lost packet is
//!   taken out if it was sent since the paths out or the rotation last
//!   changed (at or after CHG) and the QP sprays (the health fields are
//!   zero here: one loss takes a path out at the core's threshold); CHG
//!   becomes the next PSN to send plus 2 whenever a path goes out or the
//!   rotation changes;
//!   an RNR NAK waits the RNR timer and spends rnr_retry (7:
//!   unlimited); a timeout spends retry_cnt and rotates the paths;
//! - the NIC's timed packet (path health), if it is the QP's, is settled
//!   (`timed_done`) by an ACK that moves una past it, a sequence or RNR NAK
//!   beyond it, a sequence NAK that names it (its PSN or its bitmap), and a
//!   timeout that asks for a retransmission; nothing else settles it. An
//!   MP PROBE (`bare`) is settled only by its reply (syndrome 0x40 with
//!   its PSN, which is no drop and acknowledges nothing) and by the
//!   requester's `probe_lost`;
//! - when a counter runs out, or on an error NAK, the QP goes to ERR and
//!   every WQE left completes: the first with the error's status, the
//!   rest flushed; an error NAK that finds the ring empty leaves its
//!   status for the flush that follows.
//!
//! Events come one at a time with the completer idle (so that the
//! reference knows una and sent when each is checked), or as a burst of up
//! to six on consecutive cycles through the four-entry ACK queue (an event
//! offered while the queue is full is lost, as on the wire). The CQE port
//! stalls at random and the ring's copies are late at random
//! (`ring_wait`).

use crate::{fail, psn_sub, Fail, Kind, Model, PortsIn, PortsOut, PSN_MASK};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::collections::VecDeque;

/// The LOST record's bits (LOST_W, the default 63: an MP_W of 64).
const LOST_MASK: u64 = (1 << 63) - 1;

/// One run (a `Kind::Completer` configuration).
pub type CmpCfg = crate::RunCfg;

/// What a run reached.
#[derive(Debug, Clone, Default)]
pub struct CmpReport {
    pub cycles: usize,
    pub events: usize,
    pub acks: usize,
    pub dropped: usize,
    pub seq_naks: usize,
    pub rnr_naks: usize,
    pub timeouts: usize,
    pub errors: usize,
    pub cqes: usize,
    pub flushed: usize,
    /// events lost because the ACK queue was full
    pub lost: usize,
    /// timed packets settled (path health)
    pub timed: usize,
    /// flushes that carried a waiting error NAK's status
    pub pending_status: usize,
}

const WC_SUCCESS: u8 = 0x00;
const WC_FLUSH: u8 = 0x05;
const WC_REM_INV_REQ: u8 = 0x09;
const WC_REM_ACCESS: u8 = 0x0a;
const WC_REM_OP: u8 = 0x0b;
const WC_RETRY_EXC: u8 = 0x0c;
const WC_RNR_RETRY_EXC: u8 = 0x0d;

/// A WQE in a QP's outstanding ring.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Entry {
    last: u32,
    sig: bool,
    send: bool,
    index: u16,
    wr_id: u64,
    len: u32,
}

/// A QP's requester records, as the requester keeps them.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Qp {
    una: u32,
    sent: u32,
    rleft: u32,
    nleft: u32,
    retry_init: u32,
    rnr_init: u32,
    rot: u32,
    /// 2^spray_log paths
    spray_log: u32,
    /// the first PSN sent with the current avoid bits
    chg: u32,
    /// the NIC's timed packet, if it is this QP's (the requester frees it
    /// when the completer settles it)
    timed: Option<u32>,
    /// ... an MP PROBE
    bare: bool,
    rtx_req: bool,
    /// the request is for the named packet alone (mp)
    rtx_one: bool,
    /// the LOST record: the last sequence NAK's other lost PSNs
    lost: u64,
    stamp: u32,
    ring: VecDeque<Entry>,
}

/// A completion request: (qn, wr_id, len, index, opcode, status, syndrome).
type Cqe = (u32, u64, u32, u16, u8, u8, u8);

#[derive(Debug, Clone, Copy)]
enum Event {
    /// (qpn, psn, syndrome, the selective NAK's bitmap of other lost PSNs)
    Ack(usize, u32, u8, u64),
    Tmo(usize),
    Flush(usize),
    /// the requester's timer: the QP's MP PROBE got no reply
    ProbeLost(usize),
}

/// What the events of one round should do, beyond the records.
#[derive(Debug, Default)]
struct Expect {
    cqes: Vec<Cqe>,
    drops: usize,
    seq: usize,
    rnr: usize,
    tmo: usize,
    errs: usize,
    /// retransmission requests
    asks: usize,
    /// flushes that took up a waiting error status
    perr_used: usize,
    /// timed packets settled
    timed: usize,
}

/// The error NAK status waiting for a flush: (qpn, status, syndrome).
type Perr = Option<(usize, u8, u8)>;

struct Reference {
    clk_mhz: u32,
    tick_log: u32,
    /// path_cfg.thresh, seed mod 4 for the run: the bench's records hold
    /// no loss counts, so a blame takes its path out only at a threshold
    /// of one
    ph_thresh: u32,
}

impl Reference {
    fn rnr_ticks(&self, code: u8) -> u32 {
        const UNITS: [u32; 32] = [
            65536, 1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256, 384, 512, 768,
            1024, 1536, 2048, 3072, 4096, 6144, 8192, 12288, 16384, 24576, 32768, 49152,
        ];
        let cycles = UNITS[usize::from(code & 31)].wrapping_mul(10 * self.clk_mhz);
        (cycles >> self.tick_log) & PSN_MASK
    }

    /// Completes every WQE left on `qp` (C_ERR): the first with `status`
    /// unless it is a flush, the rest flushed.
    fn flush(q: usize, qp: &mut Qp, status: u8, syn: u8, perr: &mut Perr, e: &mut Expect) {
        let mut st = status;
        let mut first = true;
        while let Some(w) = qp.ring.pop_front() {
            e.cqes.push(cqe(q, &w, st, syn));
            st = WC_FLUSH;
            first = false;
        }
        qp.rtx_req = false;
        if first && status != WC_FLUSH && perr.is_none() {
            *perr = Some((q, status, syn));
        }
    }

    /// One event, as the completer takes it up from C_IDLE.
    fn apply(&self, ev: Event, qps: &mut [Qp], perr: &mut Perr, now: u32, e: &mut Expect) {
        match ev {
            Event::Flush(q) => {
                let (mut st, mut syn) = (WC_FLUSH, 0);
                if let Some((pq, ps, psyn)) = *perr {
                    if pq == q {
                        st = ps;
                        syn = psyn;
                        *perr = None;
                        e.perr_used += 1;
                    }
                }
                Self::flush(q, &mut qps[q], st, syn, perr, e);
            }
            Event::Tmo(q) => {
                let qp = &mut qps[q];
                if qp.ring.is_empty() || qp.rtx_req {
                    return;
                }
                e.tmo += 1;
                qp.stamp = now;
                if qp.rleft != 0 && !qp.bare && qp.timed.take().is_some() {
                    e.timed += 1;
                }
                if qp.rleft != 0 {
                    qp.chg = qp.sent.wrapping_add(2) & PSN_MASK;
                }
                if qp.rleft == 0 {
                    e.errs += 1;
                    Self::flush(q, qp, WC_RETRY_EXC, 0, perr, e);
                } else {
                    qp.rleft -= 1;
                    qp.rot = (qp.rot + 1) & 63;
                    qp.rtx_req = true;
                    qp.rtx_one = false;
                    e.asks += 1;
                }
            }
            Event::ProbeLost(q) => {
                let qp = &mut qps[q];
                if qp.bare && qp.timed.take().is_some() {
                    e.timed += 1;
                }
            }
            Event::Ack(q, p, 0x40, _) => {
                let qp = &mut qps[q];
                if qp.bare && qp.timed == Some(p) {
                    qp.timed = None;
                    e.timed += 1;
                }
            }
            Event::Ack(q, p, syn, lost) => {
                let qp = &mut qps[q];
                let outstanding = psn_sub(qp.sent, qp.una);
                let kind = syn >> 5 & 3;
                let ok = match kind {
                    0 => psn_sub(p.wrapping_add(1), qp.una) <= outstanding,
                    2 => false,
                    _ => psn_sub(p, qp.una) < outstanding,
                };
                if !ok {
                    e.drops += 1;
                    return;
                }
                let limit = if kind == 0 {
                    p
                } else {
                    p.wrapping_sub(1) & PSN_MASK
                };
                let una0 = qp.una;
                if let Some(t) = qp.timed.filter(|_| !qp.bare) {
                    let before = |x: u32| psn_sub(t, una0) < psn_sub(x, una0);
                    let d = psn_sub(t, p).wrapping_sub(1);
                    let settled = match (kind, syn & 31) {
                        (0, _) => before(p.wrapping_add(1) & PSN_MASK),
                        (1, _) => before(p),
                        (_, 0) => before(p) || t == p || (d < 63 && lost >> d & 1 == 1),
                        _ => false,
                    };
                    if settled {
                        qp.timed = None;
                        e.timed += 1;
                    }
                }
                if kind == 0 && psn_sub(p.wrapping_add(1), qp.una) != 0 {
                    qp.una = p.wrapping_add(1) & PSN_MASK;
                    qp.rleft = qp.retry_init;
                    qp.nleft = qp.rnr_init;
                    qp.stamp = now;
                }
                while let Some(w) = qp.ring.front().copied() {
                    if psn_sub(limit, w.last) >= 1 << 23 {
                        break;
                    }
                    qp.ring.pop_front();
                    if w.sig {
                        e.cqes.push(cqe(q, &w, WC_SUCCESS, 0));
                    }
                }
                match (kind, syn & 31) {
                    (0, _) => {}
                    (1, code) => {
                        e.rnr += 1;
                        qp.una = p;
                        qp.stamp = now.wrapping_add(self.rnr_ticks(code)) & PSN_MASK;
                        if qp.rnr_init != 7 && qp.nleft == 0 {
                            e.errs += 1;
                            Self::flush(q, qp, WC_RNR_RETRY_EXC, syn, perr, e);
                        } else {
                            if qp.rnr_init != 7 {
                                qp.nleft -= 1;
                            }
                            qp.rtx_req = true;
                            qp.rtx_one = false;
                            e.asks += 1;
                        }
                    }
                    (_, 0) => {
                        e.seq += 1;
                        qp.lost = lost;
                        qp.una = p;
                        qp.stamp = now;
                        if p == una0 && qp.rleft == 0 {
                            e.errs += 1;
                            Self::flush(q, qp, WC_RETRY_EXC, syn, perr, e);
                        } else {
                            qp.rleft = if p == una0 {
                                qp.rleft - 1
                            } else {
                                qp.retry_init
                            };
                            if !(qp.rtx_req && una0 == p) {
                                let out = psn_sub(p, qp.chg) < 1 << 23
                                    && qp.spray_log > 0
                                    && self.ph_thresh == 1;
                                if p == una0 {
                                    qp.rot = (qp.rot + 1) & 63;
                                }
                                if out {
                                    qp.chg = qp.sent.wrapping_add(2) & PSN_MASK;
                                }
                                qp.rtx_req = true;
                                qp.rtx_one = true;
                                e.asks += 1;
                            }
                            // una named again: the map may rotate (if the
                            // executor took the request meanwhile), so CHG
                            // moves either way
                            if p == una0 {
                                qp.chg = qp.sent.wrapping_add(2) & PSN_MASK;
                            }
                        }
                    }
                    (_, code) => {
                        e.errs += 1;
                        let st = match code {
                            1 => WC_REM_INV_REQ,
                            2 => WC_REM_ACCESS,
                            _ => WC_REM_OP,
                        };
                        Self::flush(q, qp, st, syn, perr, e);
                    }
                }
            }
        }
    }
}

fn cqe(q: usize, w: &Entry, status: u8, syn: u8) -> Cqe {
    let op = if w.send { 0x00 } else { 0x01 };
    (q as u32, w.wr_id, w.len, w.index, op, status, syn)
}

fn out_cqe(o: &PortsOut) -> Cqe {
    let d = &o.m_data[5..13];
    (
        d[4],
        u64::from(d[0]) | u64::from(d[1]) << 32,
        d[2],
        (d[5] >> 16) as u16,
        d[5] as u8,
        (d[5] >> 8) as u8,
        (d[7] >> 8) as u8,
    )
}

fn fresh_qp(rng: &mut ChaCha8Rng) -> Qp {
    // near the 24-bit wrap now and then
    let psn = if rng.gen_bool(0.3) {
        PSN_MASK - rng.gen_range(0..20)
    } else {
        rng.gen_range(0..=PSN_MASK)
    };
    let retry_init = rng.gen_range(0..8);
    let rnr_init = rng.gen_range(0..8);
    Qp {
        una: psn,
        sent: psn,
        rleft: retry_init,
        nleft: rnr_init,
        retry_init,
        rnr_init,
        rot: 0,
        spray_log: rng.gen_range(0..7),
        chg: psn,
        timed: None,
        bare: false,
        rtx_req: false,
        rtx_one: false,
        lost: 0,
        stamp: 0,
        ring: VecDeque::new(),
    }
}

/// A random event on QP q: mostly legal ACKs and NAKs, some for PSNs never
/// sent, some of the reserved kind.
fn random_event(rng: &mut ChaCha8Rng, q: usize, qp: &Qp) -> Event {
    let out = psn_sub(qp.sent, qp.una);
    let in_flight =
        |rng: &mut ChaCha8Rng| qp.una.wrapping_add(rng.gen_range(0..out.max(1))) & PSN_MASK;
    let wild = |rng: &mut ChaCha8Rng| {
        qp.una
            .wrapping_add(out)
            .wrapping_add(rng.gen_range(0..(1 << 23)))
            & PSN_MASK
    };
    let lost = rng.gen::<u64>() & LOST_MASK;
    match rng.gen_range(0..100) {
        0..=39 => {
            // an ACK in [una - 1, sent - 1]
            let p = qp.una.wrapping_sub(1).wrapping_add(rng.gen_range(0..=out)) & PSN_MASK;
            Event::Ack(q, p, rng.gen_range(0..32), lost)
        }
        40..=47 => Event::Ack(q, wild(rng), rng.gen_range(0..32), lost),
        48..=61 => Event::Ack(q, in_flight(rng), 0x60, lost),
        62..=64 => Event::Ack(q, wild(rng), 0x60, lost),
        65..=71 => Event::Ack(q, in_flight(rng), 0x20 | rng.gen_range(0..32), lost),
        72..=76 => Event::Ack(q, in_flight(rng), 0x60 | rng.gen_range(1..32), lost),
        77..=78 => Event::Ack(q, in_flight(rng), 0x40 | rng.gen_range(0..32), lost),
        // an MP PROBE REPLY: for the timed probe, or stale
        79..=81 => match qp.timed {
            Some(t) if rng.gen_bool(0.7) => Event::Ack(q, t, 0x40, 0),
            _ => Event::Ack(q, wild(rng), 0x40, 0),
        },
        82..=83 => Event::ProbeLost(q),
        84..=91 => Event::Tmo(q),
        _ => Event::Flush(q),
    }
}

pub fn run(c: &CmpCfg) -> Result<CmpReport, Fail> {
    let mut m = Model::new(c.model, c.seed as u32).map_err(Fail)?;
    let cfg = *m.config();
    assert_eq!(cfg.kind, Kind::Completer, "{} is not a completer", cfg.name);
    let nq = 1usize << cfg.param("QN_W");
    let refm = Reference {
        clk_mhz: cfg.param("CLK_MHZ"),
        tick_log: cfg.param("TICK_LOG"),
        ph_thresh: (c.seed % 4) as u32,
    };
    let mut rng = ChaCha8Rng::seed_from_u64(c.seed);
    let mut qps: Vec<Qp> = (0..nq).map(|_| fresh_qp(&mut rng)).collect();
    let mut perr: Perr = None;
    let mut next_index = 0u16;
    let mut r = CmpReport::default();
    let mut now = 0u32;
    let mut cycle = 0usize;

    let rst = PortsIn {
        rst: 1,
        ..PortsIn::default()
    };
    for _ in 0..2 {
        m.step(&rst);
    }

    // one clock: inputs from the records at the completer's QP, the
    // outputs' writes applied to them; `offer` an event (accepted unless
    // the queue is full: returned), `load` a QP
    let clock = |m: &mut Model,
                 qps: &mut Vec<Qp>,
                 offer: Option<Event>,
                 load: Option<usize>,
                 now: u32,
                 rng: &mut ChaCha8Rng,
                 cycle: &mut usize|
     -> Result<(PortsOut, bool, bool), Fail> {
        let o0 = m.peek(&PortsIn::default());
        let q = (o0.m_data[0] >> 16) as usize;
        let qp = &qps[q];
        let head = qp.ring.front().copied();
        let wait = rng.gen_bool(0.15);
        let ready = rng.gen_bool(0.7);
        // the requester's hold on the CQE (a resend still reading the
        // retired WQE's buffer): no CQE request while it stands
        let hold = rng.gen_bool(0.2);
        let mut i = PortsIn::default();
        let mut v = 0u32;
        match offer {
            Some(Event::Ack(aq, p, syn, lost)) => {
                v |= 1;
                i.s_last |= aq as u32;
                i.s_data[0] = p | u32::from(syn) << 24;
                i.s_data[11] = lost as u32;
                i.s_data[12] = (lost >> 32) as u32;
            }
            Some(Event::Flush(sq)) => {
                v |= 2;
                i.s_last |= (sq as u32) << 16;
            }
            Some(Event::Tmo(sq)) => {
                v |= 4;
                i.s_last |= (sq as u32) << 16;
            }
            Some(Event::ProbeLost(sq)) => {
                i.s_data[13] |= 1 << 26;
                i.s_last |= (sq as u32) << 16;
            }
            None => {}
        }
        if let Some(l) = load {
            v |= 8;
            i.s_data[1] = l as u32;
        }
        let cqn = rng.gen_range(0..nq as u32);
        i.s_data[1] |= cqn << 16;
        v |= u32::from(qp.rtx_req) << 5
            | u32::from(qp.ring.is_empty()) << 6
            | u32::from(qp.ring.is_empty()) << 7
            | u32::from(wait) << 8
            | u32::from(head.is_some_and(|w| w.sig)) << 9
            | u32::from(head.is_some_and(|w| w.send)) << 10
            | u32::from(ready) << 11
            | u32::from(hold) << 12;
        i.s_valid = v;
        i.s_data[2] = qp.una;
        i.s_data[3] = qp.sent;
        i.s_data[4] = qp.rleft
            | qp.nleft << 3
            | qp.retry_init << 6
            | qp.rnr_init << 9
            | qp.rot << 12
            | qp.spray_log << 24;
        if let Some(t) = qp.timed {
            i.s_data[13] |= t | 1 << 24 | u32::from(qp.bare) << 25;
        }
        i.s_data[14] = qp.chg | refm.ph_thresh << 24;
        if let Some(w) = head {
            i.s_data[5] = w.last;
            i.s_data[6] = u32::from(w.index);
            i.s_data[7] = w.wr_id as u32;
            i.s_data[8] = (w.wr_id >> 32) as u32;
            i.s_data[9] = w.len;
        }
        i.s_data[10] = now;
        let o = m.step(&i);
        let at = format!("{} seed {} cycle {}", cfg.name, c.seed, *cycle);
        *cycle += 1;
        if o.sim_flags != 0 {
            fail!("{at}: the model stopped ({:#x})", o.sim_flags);
        }
        let accepted =
            offer.is_some() && (!matches!(offer, Some(Event::Ack(..))) || o.m_valid & 1 == 0);
        let (we, stamp_we, pop) = (
            o.m_valid >> 3 & 1 == 1,
            o.m_valid >> 4 & 1 == 1,
            o.m_valid >> 2 & 1 == 1,
        );
        if hold && o.m_last & 1 == 1 {
            fail!("{at}: a CQE request while the requester holds it (cqe_hold)");
        }
        if (o.m_data[4] >> 16) != cqn {
            fail!("{at}: m_acq_cqn {} is not acq_cqn {cqn}", o.m_data[4] >> 16);
        }
        if pop && (wait || head.is_none()) {
            fail!("{at}: QP {q} pops while its ring copies wait or it is empty");
        }
        let qp = &mut qps[q];
        if we {
            qp.una = o.m_data[1] & PSN_MASK;
            qp.rleft = o.m_data[2] & 7;
            qp.nleft = o.m_data[2] >> 3 & 7;
            qp.rot = o.m_data[2] >> 6 & 63;
            qp.chg = o.m_data[15] >> 8;
        }
        if stamp_we {
            qp.stamp = o.m_data[3] & PSN_MASK;
        }
        if o.m_last >> 7 & 1 == 1 {
            qp.lost = (u64::from(o.m_data[14]) << 32 | u64::from(o.m_data[13])) & LOST_MASK;
        }
        if o.m_valid >> 5 & 1 == 1 {
            qp.rtx_req = true;
            qp.rtx_one = o.m_valid >> 6 & 1 == 1;
        } else if o.m_valid >> 7 & 1 == 1 {
            qp.rtx_req = false;
        }
        if pop {
            qp.ring.pop_front();
        }
        if o.m_data[15] & 1 == 1 {
            if qp.timed.is_none() {
                fail!("{at}: QP {q}: timed_done without a timed packet");
            }
            qp.timed = None;
        }
        Ok((o, accepted, ready))
    };

    while cycle < c.cycles {
        // the requester side, between rounds: WQEs sent, a QP in error
        // reloaded, a retransmission request taken by the executor
        for _ in 0..rng.gen_range(0..3) {
            let q = rng.gen_range(0..nq);
            let qp = &mut qps[q];
            if qp.ring.len() < 8 {
                let n = rng.gen_range(1..5);
                qp.sent = qp.sent.wrapping_add(n) & PSN_MASK;
                next_index = next_index.wrapping_add(1);
                qp.ring.push_back(Entry {
                    last: qp.sent.wrapping_sub(1) & PSN_MASK,
                    sig: rng.gen_bool(0.7),
                    send: rng.gen_bool(0.3),
                    index: next_index,
                    wr_id: rng.gen(),
                    len: rng.gen(),
                });
            }
        }
        let mut load = None;
        if rng.gen_bool(0.05) {
            let q = rng.gen_range(0..nq);
            qps[q] = fresh_qp(&mut rng);
            if perr.is_some_and(|p| p.0 == q) {
                perr = None;
            }
            load = Some(q);
        }
        for qp in qps.iter_mut() {
            if qp.rtx_req && rng.gen_bool(0.3) {
                qp.rtx_req = false;
            }
            // the NIC times a packet in flight now and then
            let out = psn_sub(qp.sent, qp.una);
            if qp.timed.is_none() && out > 0 && rng.gen_bool(0.3) {
                // an MP PROBE carries the next PSN to send
                qp.bare = rng.gen_bool(0.4);
                qp.timed = Some(if qp.bare {
                    qp.sent
                } else {
                    qp.una.wrapping_add(rng.gen_range(0..out)) & PSN_MASK
                });
            }
        }
        now = now.wrapping_add(rng.gen_range(1..1000)) & PSN_MASK;

        // the events of this round: one, or a burst of ACKs and NAKs
        let q = rng.gen_range(0..nq);
        let burst = if rng.gen_bool(0.2) {
            rng.gen_range(2..7)
        } else {
            1
        };
        let mut offers = Vec::new();
        for _ in 0..burst {
            let ev = random_event(&mut rng, q, &qps[q]);
            if burst > 1 && !matches!(ev, Event::Ack(..)) {
                continue; // a scan event would go first: one at a time only
            }
            offers.push(ev);
        }
        let mut expect = Expect::default();
        let mut want = qps.clone();
        let mut want_perr = perr;
        let mut accepted = Vec::new();
        let mut quiet = 0;
        let mut got = Vec::new();
        let (mut drops, mut seq, mut rnr, mut tmo, mut errs, mut asks) = (0, 0, 0, 0, 0, 0);
        let mut timed = 0;
        let mut k = 0;
        let round_start = cycle;
        while k < offers.len() || quiet < 8 {
            let offer = offers.get(k).copied();
            let (o, acc, ready) = clock(
                &mut m,
                &mut qps,
                offer,
                load.take(),
                now,
                &mut rng,
                &mut cycle,
            )?;
            if let Some(ev) = offer {
                if acc {
                    accepted.push(ev);
                } else {
                    r.lost += 1;
                }
                k += 1;
            }
            drops += usize::from(o.m_last >> 2 & 1);
            tmo += usize::from(o.m_last >> 3 & 1);
            seq += usize::from(o.m_last >> 4 & 1);
            rnr += usize::from(o.m_last >> 5 & 1);
            errs += usize::from(o.m_last >> 1 & 1);
            asks += usize::from(o.m_valid >> 5 & 1);
            timed += (o.m_data[15] & 1) as usize;
            if o.m_last & 1 == 1 && ready {
                got.push(out_cqe(&o));
            }
            // (quiet: idle, with nothing written; the completer's turn has
            // steps that write nothing, so outputs alone do not tell)
            let busy = o.m_valid & 0xfe != 0 || o.m_last & 0x3f != 0 || o.m_last >> 6 & 1 == 0;
            quiet = if busy || offer.is_some() {
                0
            } else {
                quiet + 1
            };
            if cycle - round_start > 5_000 {
                fail!(
                    "{} seed {}: the completer never went idle",
                    cfg.name,
                    c.seed
                );
            }
        }
        for ev in &accepted {
            refm.apply(*ev, &mut want, &mut want_perr, now, &mut expect);
        }
        r.events += accepted.len();
        let want_cqes = &expect.cqes;
        let at = format!(
            "{} seed {} (round ending at cycle {cycle})",
            cfg.name, c.seed
        );
        if got != *want_cqes {
            fail!(
                "{at}: events {accepted:?}\n  CQE requests {got:x?}\n  expected     {want_cqes:x?}"
            );
        }
        for (what, n, w) in [
            ("drops", drops, expect.drops),
            ("sequence NAKs", seq, expect.seq),
            ("RNR NAKs", rnr, expect.rnr),
            ("timeouts", tmo, expect.tmo),
            ("QPs to ERR", errs, expect.errs),
            ("retransmission requests", asks, expect.asks),
            ("timed packets settled", timed, expect.timed),
        ] {
            if n != w {
                fail!("{at}: events {accepted:?}: {what} {n}, expected {w}");
            }
        }
        for (q, (g, w)) in qps.iter().zip(&want).enumerate() {
            if g != w {
                fail!(
                    "{at}: events {accepted:?}: QP {q} records\n  are      {g:?}\n  expected {w:?}"
                );
            }
        }
        perr = want_perr;
        r.acks += accepted
            .iter()
            .filter(|e| matches!(e, Event::Ack(..)))
            .count();
        r.dropped += drops;
        r.seq_naks += seq;
        r.rnr_naks += rnr;
        r.timeouts += tmo;
        r.errors += errs;
        r.cqes += want_cqes.len();
        r.flushed += want_cqes.iter().filter(|c| c.5 != WC_SUCCESS).count();
        r.pending_status += expect.perr_used;
        r.timed += expect.timed;
    }
    r.cycles = cycle;
    Ok(r)
}
