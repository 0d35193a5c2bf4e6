//! Bench of `rc_message`, the rc responder's message rules: seeded random
//! packets on a few QPs whose messages the bench keeps (in the responder
//! they are a field of the per-QP record), checked every cycle against a
//! model of the rules:
//!
//! - only RDMA WRITE and SEND opcodes are served (anything else: invalid
//!   request);
//! - FIRST and ONLY only outside a message, MIDDLE and LAST only inside a
//!   message of their own kind;
//! - FIRST and MIDDLE carry exactly a PMTU, nothing carries more;
//! - a RETH on ONLY announces exactly the packet, on FIRST more than it;
//! - a RETH announcing bytes the MR does not grant: remote access error,
//!   unless one of the rules above failed first;
//! - then a WRITE's MIDDLE and LAST, and a SEND's, against the message's
//!   remaining bytes (a WRITE's LAST exactly them).
//!
//! A packet that passes is executed most of the time: what the block says
//! it does to the message (FIRST starts one of its kind, LAST and ONLY end
//! it, MIDDLE leaves it) is checked and moves the bench's message on; now
//! and then a QP's message is ended as a load would. Packets are biased
//! towards what the QP's message expects, with lengths at and around the
//! limits.

use crate::{fail, Fail, Kind, Model, PortsIn};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// One run (a `Kind::RcMessage` configuration).
pub type RcmCfg = crate::RunCfg;

/// What a run reached.
#[derive(Debug, Clone, Default)]
pub struct RcmReport {
    pub cycles: usize,
    /// packets executed (passed and reported done)
    pub executed: usize,
    /// of which started a message
    pub started: usize,
    /// of which ended one
    pub ended: usize,
    pub inv_sequence: usize,
    pub inv_length: usize,
    pub rem_access: usize,
}

/// QPs the bench keeps messages for (few: messages meet often)
const NUM_QP: usize = 4;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Msg {
    Idle,
    Write,
    Send,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Pos {
    First,
    Middle,
    Last,
    Only,
}

/// A packet's opcode class, as the responder decodes it.
#[derive(Debug, Clone, Copy)]
struct Op {
    /// None: not a WRITE or a SEND (READ, atomics, ...)
    kind: Option<Msg>,
    pos: Pos,
}

impl Op {
    fn has_reth(self) -> bool {
        self.kind == Some(Msg::Write) && matches!(self.pos, Pos::First | Pos::Only)
    }
}

/// The outcome the rules give, and why (for the coverage counts).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Verdict {
    Ok,
    InvSequence,
    InvLength,
    RemAccess,
}

struct Pkt {
    op: Op,
    plen: u32,
    pmtu: u32,
    reth_len: u32,
    remain: u32,
    access_ok: bool,
}

fn msg_code(m: Msg) -> u32 {
    match m {
        Msg::Idle => 0,
        Msg::Write => 1,
        Msg::Send => 2,
    }
}

fn verdict(msg: Msg, p: &Pkt) -> Verdict {
    let Some(kind) = p.op.kind else {
        return Verdict::InvSequence;
    };
    let starts = matches!(p.op.pos, Pos::First | Pos::Only);
    if (starts && msg != Msg::Idle) || (!starts && msg != kind) {
        return Verdict::InvSequence;
    }
    let full = matches!(p.op.pos, Pos::First | Pos::Middle);
    if (full && p.plen != p.pmtu) || p.plen > p.pmtu {
        return Verdict::InvLength;
    }
    if p.op.has_reth() {
        let bad = match p.op.pos {
            Pos::Only => p.reth_len != p.plen,
            _ => p.reth_len <= p.plen,
        };
        if bad {
            return Verdict::InvLength;
        }
        if p.reth_len != 0 && !p.access_ok {
            return Verdict::RemAccess;
        }
    }
    let later = match (kind, p.op.pos) {
        (Msg::Write, Pos::Middle) => p.plen > p.remain,
        (Msg::Write, Pos::Last) => p.plen != p.remain,
        (Msg::Send, Pos::Middle | Pos::Last) => p.plen > p.remain,
        _ => false,
    };
    if later {
        Verdict::InvLength
    } else {
        Verdict::Ok
    }
}

fn random_pkt(rng: &mut ChaCha8Rng, msg: Msg) -> Pkt {
    const POS: [Pos; 4] = [Pos::First, Pos::Middle, Pos::Last, Pos::Only];
    let op = if rng.gen_bool(0.6) {
        // what the message expects next
        match msg {
            Msg::Idle => Op {
                kind: Some(if rng.gen_bool(0.5) {
                    Msg::Write
                } else {
                    Msg::Send
                }),
                pos: if rng.gen_bool(0.5) {
                    Pos::First
                } else {
                    Pos::Only
                },
            },
            k => Op {
                kind: Some(k),
                pos: if rng.gen_bool(0.5) {
                    Pos::Middle
                } else {
                    Pos::Last
                },
            },
        }
    } else {
        Op {
            kind: match rng.gen_range(0..5) {
                0 => None,
                1 | 2 => Some(Msg::Write),
                _ => Some(Msg::Send),
            },
            pos: POS[rng.gen_range(0..4)],
        }
    };
    let pmtu: u32 = 256 << rng.gen_range(0..5);
    let plen = match rng.gen_range(0..6) {
        0..=2 => pmtu,
        3 => pmtu + 1,
        4 => 0,
        _ => rng.gen_range(0..pmtu),
    };
    let reth_len = match rng.gen_range(0..6) {
        0 => plen,
        1 | 2 => plen + pmtu * rng.gen_range(1..4),
        3 => 0,
        4 => plen.saturating_sub(1),
        _ => rng.gen(),
    };
    let remain = match rng.gen_range(0..5) {
        0 | 1 => plen,
        2 => plen + 1,
        3 => plen.saturating_sub(1),
        _ => rng.gen_range(0..3 * pmtu),
    };
    Pkt {
        op,
        plen,
        pmtu,
        reth_len,
        remain,
        access_ok: rng.gen_bool(0.8),
    }
}

pub fn run(c: &RcmCfg) -> Result<RcmReport, Fail> {
    let mut m = Model::new(c.model, c.seed as u32).map_err(Fail)?;
    let cfg = *m.config();
    assert_eq!(
        cfg.kind,
        Kind::RcMessage,
        "{} is not an rc_message",
        cfg.name
    );
    let nq = NUM_QP;
    let mut rng = ChaCha8Rng::seed_from_u64(c.seed);
    let mut msgs = vec![Msg::Idle; nq];
    let mut r = RcmReport::default();
    for cycle in 0..c.cycles {
        let q = rng.gen_range(0..nq);
        let p = random_pkt(&mut rng, msgs[q]);
        let v = verdict(msgs[q], &p);
        let done = v == Verdict::Ok && rng.gen_bool(0.8);
        let (kind_w, kind_s) = (p.op.kind == Some(Msg::Write), p.op.kind == Some(Msg::Send));
        // (bits 0 and 1 were the load and the done of the block's own
        // message state)
        let bits = [
            false,
            false,
            kind_w,
            kind_s,
            p.op.pos == Pos::First,
            p.op.pos == Pos::Middle,
            p.op.pos == Pos::Last,
            p.op.pos == Pos::Only,
            p.op.has_reth(),
            p.access_ok,
        ];
        let mut i = PortsIn {
            s_valid: bits
                .iter()
                .enumerate()
                .fold(0, |a, (n, &b)| a | u32::from(b) << n),
            s_last: msg_code(msgs[q]),
            ..PortsIn::default()
        };
        i.s_data[..4].copy_from_slice(&[p.plen, p.pmtu, p.reth_len, p.remain]);
        let o = m.step(&i);
        if o.sim_flags != 0 {
            fail!(
                "{} seed {} cycle {cycle}: the model stopped ({:#x})",
                c.model,
                c.seed,
                o.sim_flags
            );
        }
        let want = match v {
            Verdict::Ok => 0,
            Verdict::InvSequence | Verdict::InvLength => 1,
            Verdict::RemAccess => 2,
        };
        if u32::from(o.m_valid) != want {
            fail!(
                "{} seed {} cycle {cycle}: QP {q} in {:?}, {:?} {:?} plen {} pmtu {} reth {} remain {} access {}: \
                 {{rem_access, inv_req}} = {:#b}, want {want:#b} ({v:?})",
                c.model,
                c.seed,
                msgs[q],
                p.op.kind,
                p.op.pos,
                p.plen,
                p.pmtu,
                p.reth_len,
                p.remain,
                p.access_ok,
                o.m_valid
            );
        }
        // what an executed packet does to the message: {msg_new, msg_set}
        let (set, new) = match p.op.pos {
            Pos::First => (true, p.op.kind.unwrap_or(Msg::Idle)),
            Pos::Last | Pos::Only => (true, Msg::Idle),
            Pos::Middle => (false, msgs[q]),
        };
        let got_set = o.m_last & 1 != 0;
        let got_new = u32::from(o.m_last >> 1);
        if v == Verdict::Ok && (got_set != set || (set && got_new != msg_code(new))) {
            fail!(
                "{} seed {} cycle {cycle}: QP {q} in {:?}, {:?} {:?}: msg_set {got_set} msg_new {got_new}, \
                 want {set} {}",
                c.model,
                c.seed,
                msgs[q],
                p.op.kind,
                p.op.pos,
                msg_code(new)
            );
        }
        match v {
            Verdict::InvSequence => r.inv_sequence += 1,
            Verdict::InvLength => r.inv_length += 1,
            Verdict::RemAccess => r.rem_access += 1,
            Verdict::Ok => {}
        }
        if done {
            r.executed += 1;
            match p.op.pos {
                Pos::First => r.started += 1,
                Pos::Last | Pos::Only => r.ended += usize::from(msgs[q] != Msg::Idle),
                Pos::Middle => {}
            }
            msgs[q] = new;
        }
        // a load ends a message (in the responder: the record reads as
        // loaded)
        if rng.gen_bool(0.03) {
            msgs[rng.gen_range(0..nq)] = Msg::Idle;
        }
        r.cycles += 1;
    }
    Ok(r)
}
