//! Bench of `qp_dir`, the QP directory: QP numbers (QPN_W bits) bound to
//! NUM_Q slots by commands, a receive stage that maps a packet's QP number
//! to the slot holding it (0xFFFFFF when none does), and the CQEs' slot to
//! QP number read. The reference model keeps the two tables of the block's
//! header: the slot table (bound bit and QP number per slot, the truth;
//! bound bits cleared by `rst`, each slot's number back to the slot's own
//! index) and the number table (the hint per QP number, never
//! cleared; unknown until written, since the models start with junk in
//! the hint RAM: see build.rs `bench_patch`).
//!
//! The driver, seeded: random commands (binds and unbinds, valid and not:
//! numbers beyond 2^QPN_W, some of them the low bits of a bound number;
//! numbers bound already, to another slot or to the slot itself; slots
//! bound or unbound; slots beyond NUM_Q, some whose low QN_W bits name a
//! bound slot; ops 0 and 3), `cmd_valid` one cycle with the fields held
//! until `busy` falls, junk fields between commands (the read-back of
//! random slots); random packets (numbers bound, just unbound, being bound
//! or unbound by the command in flight, the top number, 0, beyond 2^QPN_W,
//! 0xFFFFFF, any), each offered until taken, with random back-pressure in
//! phases so that packets sit in the stage while commands change their
//! number's binding; random `cqe_slot`. Checked every cycle:
//!
//! - `s_pkt_ready` is `!m_pkt_valid || m_pkt_ready`; `m_pkt_valid` is a
//!   packet in the stage (one register: so no loss, duplicate or
//!   reordering), `m_pkt_meta` its meta, `m_pkt_dest_qp` the slot that
//!   holds its number in this cycle, by the slot table, or 0xFFFFFF when
//!   none does (a number beyond 2^QPN_W never has a slot), from the cycle
//!   `busy` falls after a bind (the block writes the number's hint in the
//!   cycle it decides). `QdCfg::strict_bind` off accepts a lag of one cycle
//!   there and counts it (`late_binds`), to show the case against an RTL
//!   that writes the hint a cycle late.
//! - `busy` exactly in the two cycles after `cmd_valid`; `cmd_err` the
//!   last command's code from the cycle `busy` falls (0 after a reset):
//!   6 bad op, else 5 slot beyond NUM_Q, else for an unbind 4 slot not
//!   bound, for a bind 2 number beyond 2^QPN_W, 3 number held by a slot
//!   (the command's slot too), 4 slot bound; else 0 and the tables change.
//! - `rb_bound` / `rb_qpn` are slot `cmd_slot`'s binding a cycle before
//!   (registered; 0 for a slot beyond NUM_Q); `cqe_qpn` the number slot
//!   `cqe_slot` was last bound to (its own index for a slot not bound since
//!   the reset), in the same
//!   cycle.
//! - `lk_hit` / `lk_slot`, the host's lookup (doorbells by QP number,
//!   `lk_qpn` driven with bound numbers, the command's, recently unbound
//!   and any 16-bit number, each held a few cycles): from the second cycle
//!   a number is held, the answer a packet of that number would get in
//!   the stage (a hit and its slot, or no hit), with the same one-cycle
//!   lag after a bind.
//! - `free_valid` / `free_slot`: the lowest slot at or above `free_from`
//!   bound to no number, by the slot table and `free_from` of the cycle
//!   before (a register), none after a reset cycle.
//! - No output but `s_pkt_ready` depends on an input combinationally
//!   (`cqe_qpn` on `cqe_slot` alone, the lookup's answer on `lk_qpn`,
//!   which the peek leaves as it is): a peek with the packet, command,
//!   `m_pkt_ready` and `rst` inputs changed gives the same.
//!
//! The miss wait (`miss_en`: a packet whose number no slot holds kept in
//! the stage for the NIC's fetch) is off in this bench; the core's test
//! `tests/qp_fetch.rs` checks it with the fetch.
//!
//! Sweeps: after power-up (junk in the hint RAM) and after a reset in the
//! middle of the run (bindings gone, the number RAM not cleared: every
//! hint stale), a packet of every number 0 .. 2^QPN_W - 1 and a few beyond
//! must leave with 0xFFFFFF. Random short resets besides.

use crate::{fail, Fail, Kind, Model, PortsIn};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// `m_pkt_dest_qp` of a packet whose number no slot holds.
pub const NO_SLOT: u32 = 0xff_ffff;

/// One run of [`run`].
#[derive(Debug, Clone)]
pub struct QdCfg {
    /// configuration name (a `Kind::QpDir` one)
    pub model: &'static str,
    pub seed: u64,
    /// cycles of random traffic (the sweeps come on top)
    pub cycles: usize,
    /// chance per idle cycle of a command
    pub p_cmd: f64,
    /// chance per cycle that a packet is offered when none waits
    pub p_pkt: f64,
    /// chance per cycle of a short random reset (besides the one in the
    /// middle of the run)
    pub p_rst: f64,
    /// refuse the one-cycle lag of a bind on the receive path: the
    /// answer must follow the slot table from the cycle `busy` falls
    pub strict_bind: bool,
}

impl QdCfg {
    pub fn new(model: &'static str, seed: u64) -> Self {
        Self {
            model,
            seed,
            cycles: 20_000,
            p_cmd: 0.3,
            p_pkt: 0.7,
            p_rst: 0.0005,
            strict_bind: true,
        }
    }
}

/// What a run measured.
#[derive(Debug, Clone, Default)]
pub struct QdReport {
    pub cycles: usize,
    /// host lookups checked (`lk_qpn` held a cycle): answered with a slot,
    /// and with no slot
    pub lk_hits: usize,
    pub lk_misses: usize,
    /// cycles the free-slot search found a slot, and found none
    pub free_found: usize,
    pub free_none: usize,
    /// packets out (taken by the sink), to a slot and with 0xFFFFFF
    pub to_slot: usize,
    pub no_slot: usize,
    /// packets out whose number is beyond 2^QPN_W (all of them 0xFFFFFF)
    pub beyond: usize,
    /// of those, the low QPN_W bits a number bound then
    pub beyond_alias: usize,
    /// packets whose answer changed while they sat in the stage, to a slot
    /// and to 0xFFFFFF (a command's edge, or a bind's hint written)
    pub held_to_slot: usize,
    pub held_to_none: usize,
    /// cycles a packet sat in the stage (offered, not taken)
    pub held_cycles: usize,
    /// cycles a packet showed 0xFFFFFF in the cycle after its number's bind
    /// (the old hint on the RAM's output: see the module's comment)
    pub late_binds: usize,
    /// binds and unbinds done
    pub binds: usize,
    pub unbinds: usize,
    /// binds of a number whose hint names another slot (a stale hint: the
    /// number was bound there before)
    pub rebinds: usize,
    /// commands answered with each code 0..6
    pub errs: [usize; 7],
    /// refused binds of a number the slot itself holds
    pub err3_own: usize,
    /// refused commands of a slot beyond NUM_Q whose low bits name a slot
    pub slot_alias: usize,
    pub resets: usize,
    /// numbers swept (each must answer 0xFFFFFF)
    pub swept: usize,
    /// cqe_qpn reads of a bound slot, of an unbound slot that was bound
    pub cqe_bound: usize,
    pub cqe_stale: usize,
}

/// A packet in the stage (or offered): its number, its meta, the answer
/// of its first cycle in the stage.
#[derive(Debug, Clone, Copy)]
struct Pkt {
    qpn: u32,
    meta: u64,
    first: Option<u32>,
}

/// A command: op, slot, number.
#[derive(Debug, Clone, Copy)]
struct Cmd {
    op: u32,
    slot: u32,
    qpn: u32,
}

/// The expected `m_pkt_dest_qp` of a number.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Want {
    /// exactly this (a slot or NO_SLOT)
    Is(u32),
    /// the slot table says slot `s`, the hint is not written yet: NO_SLOT
    /// (the hint names another slot) or either (junk)
    Lag(u32, bool),
}

pub fn run(c: &QdCfg) -> Result<QdReport, Fail> {
    let mut m = Model::new(c.model, c.seed as u32).map_err(Fail)?;
    let cfg = *m.config();
    assert_eq!(cfg.kind, Kind::QpDir, "{} is not a qp_dir", cfg.name);
    let nq = cfg.param("NUM_Q");
    let qn_w = cfg.param("QN_W");
    let qpn_w = cfg.param("QPN_W");
    let meta_w = cfg.param("META_W");
    assert!(
        (1..=16).contains(&qn_w) && (qn_w..24).contains(&qpn_w) && (1..=64).contains(&meta_w),
        "{}: parameters out of the bench's range",
        cfg.name
    );
    let nums = 1u32 << qpn_w;
    let top = nums - 1;
    let meta_mask = if meta_w == 64 {
        u64::MAX
    } else {
        (1u64 << meta_w) - 1
    };
    let mut rng = ChaCha8Rng::seed_from_u64(c.seed);

    // the slot table and the number table
    let mut bound = vec![false; nq as usize];
    // a slot not bound since the reset names itself
    let mut qpn: Vec<u32> = (0..nq).collect();
    let mut ever = vec![false; nq as usize];
    let mut hint: Vec<Option<u32>> = vec![None; nums as usize];
    // the hint write of the bind done at the last edge (number, slot)
    let mut hint_wr: Option<(u32, u32)> = None;
    // the command in flight and its cycle (0 cmd_valid, 1 WAIT, 2 LOOK)
    let mut cmd: Option<(Cmd, u32)> = None;
    let mut err = 0u32;
    let mut rb_want = (false, 0u32);
    let mut stage: Option<Pkt> = None;
    let mut offer: Option<Pkt> = None;
    let mut unbound_recent: Vec<u32> = Vec::new();
    let mut p_ready = 0.5;
    let mut phase_left = 0usize;
    // a reset: cycles left of it
    let mut rst_left = 0usize;
    // a sweep: the next number to offer, the end (the power-up sweep first)
    let mut sweep: Option<(u32, u32)> = Some((0, nums + 3));
    let mut mid_done = false;
    let mut rep = QdReport::default();

    // who holds number q by the slot table
    let holder = |bound: &[bool], qpn: &[u32], q: u32| -> Option<u32> {
        (0..nq).find(|&s| bound[s as usize] && qpn[s as usize] == q)
    };
    // the answer for number q, its hint read from the RAM since the cycle
    // before (a packet in the stage, a held lookup)
    let want_of = |bound: &[bool], qpn: &[u32], hint: &[Option<u32>], q: u32| -> Want {
        if q >= nums {
            return Want::Is(NO_SLOT);
        }
        match holder(bound, qpn, q) {
            None => Want::Is(NO_SLOT),
            Some(s) => match hint[q as usize] {
                Some(h) if h == s => Want::Is(s),
                Some(_) => Want::Lag(s, false),
                None => Want::Lag(s, true),
            },
        }
    };
    let answer_ok = |want: Want, got: u32| -> bool {
        match want {
            Want::Is(w) => got == w,
            Want::Lag(s, _) if c.strict_bind => got == s,
            Want::Lag(_, false) => got == NO_SLOT,
            Want::Lag(s, true) => got == NO_SLOT || got == s,
        }
    };
    // the host's lookup: its number, and whether it was on lk_qpn the
    // cycle before too (the answer comes from the second cycle on)
    let mut lk = (0u32, false);
    // the free-slot search's answer due this cycle (registered: the slot
    // table and free_from before the last edge); None after a reset
    let mut free_want: Option<u32> = None;

    let mut cyc = 0usize;
    loop {
        let in_sweep = sweep.is_some();
        let cmd_busy = cmd.is_some_and(|(_, k)| k > 0);
        if !in_sweep && rep.cycles >= c.cycles && cmd.is_none() && stage.is_none() && mid_done {
            break;
        }
        if cyc > c.cycles + 3 * nums as usize + 10_000 {
            fail!("{} cycle {cyc}: the run did not end", cfg.name);
        }
        // a reset: the one in the middle, then a sweep; random short ones
        let idle_cmd = cmd.is_none();
        if rst_left == 0 && idle_cmd && !in_sweep {
            if !mid_done && rep.cycles >= c.cycles / 2 {
                rst_left = rng.gen_range(1..=3);
                mid_done = true;
                sweep = Some((0, nums + 3));
                rep.resets += 1;
                offer = None;
            } else if rng.gen_bool(c.p_rst) {
                rst_left = rng.gen_range(1..=3);
                rep.resets += 1;
                offer = None;
            }
        }
        let rst = rst_left > 0;

        // back-pressure phases
        if phase_left == 0 {
            phase_left = rng.gen_range(20..300);
            p_ready = [0.05, 0.3, 0.6, 0.9, 1.0][rng.gen_range(0..5)];
        }
        phase_left -= 1;
        let m_ready = if rst {
            false
        } else if in_sweep {
            true
        } else {
            rng.gen_bool(p_ready)
        };

        // a packet
        if !rst && offer.is_none() {
            if let Some((next, last)) = sweep {
                if stage.is_none() || m_ready {
                    // numbers up to the top, then a few beyond
                    let q = if next < nums {
                        next
                    } else {
                        [nums, NO_SLOT, nums | top][(next - nums) as usize % 3]
                    };
                    offer = Some(Pkt {
                        qpn: q,
                        meta: rng.gen::<u64>() & meta_mask,
                        first: None,
                    });
                    sweep = if next + 1 >= last {
                        None
                    } else {
                        Some((next + 1, last))
                    };
                    rep.swept += 1;
                }
            } else if rng.gen_bool(c.p_pkt) {
                let bound_q: Vec<u32> = (0..nq as usize)
                    .filter(|&s| bound[s])
                    .map(|s| qpn[s])
                    .collect();
                let r = rng.gen_range(0..100);
                let q = if r < 30 && !bound_q.is_empty() {
                    bound_q[rng.gen_range(0..bound_q.len())]
                } else if let (true, Some((k, _))) = (r < 45, cmd) {
                    // the command in flight's number, or its slot's
                    if k.op == 2 && k.slot < nq {
                        qpn[k.slot as usize]
                    } else {
                        k.qpn & 0xff_ffff
                    }
                } else if r < 55 && !unbound_recent.is_empty() {
                    unbound_recent[rng.gen_range(0..unbound_recent.len())]
                } else if r < 63 {
                    top
                } else if r < 67 {
                    0
                } else if r < 77 {
                    let low = if bound_q.is_empty() {
                        rng.gen_range(0..nums)
                    } else {
                        bound_q[rng.gen_range(0..bound_q.len())]
                    };
                    if rng.gen_bool(0.2) {
                        NO_SLOT
                    } else {
                        let hi = rng.gen_range(1..=(0xff_ffffu32 >> qpn_w));
                        (hi << qpn_w) | low
                    }
                } else {
                    rng.gen_range(0..nums)
                };
                offer = Some(Pkt {
                    qpn: q,
                    meta: rng.gen::<u64>() & meta_mask,
                    first: None,
                });
            }
        }

        // a command
        let mut cmd_valid = false;
        if !rst && !in_sweep && cmd.is_none() && rep.cycles < c.cycles && rng.gen_bool(c.p_cmd) {
            let nb = bound.iter().filter(|&&b| b).count() as u32;
            let bound_s: Vec<u32> = (0..nq).filter(|&s| bound[s as usize]).collect();
            let free_s: Vec<u32> = (0..nq).filter(|&s| !bound[s as usize]).collect();
            // binds more often than unbinds, unless 3/4 of the slots are bound
            let p_bind = if 4 * nb > 3 * nq { 35 } else { 55 };
            let r = rng.gen_range(0..100);
            let op = if r < 5 {
                [0, 3][rng.gen_range(0..2)]
            } else if r < 5 + p_bind {
                1
            } else {
                2
            };
            let slot = if rng.gen_bool(0.06) {
                match rng.gen_range(0..3) {
                    0 => nq,
                    1 => {
                        let low = rng.gen_range(0..nq);
                        let hi = rng.gen_range(1..=(0xffffu32 >> qn_w));
                        (hi << qn_w) | low
                    }
                    _ => rng.gen_range(nq..=0xffff),
                }
            } else if op == 1 && !free_s.is_empty() && rng.gen_bool(0.7) {
                free_s[rng.gen_range(0..free_s.len())]
            } else if op == 2 && !bound_s.is_empty() && rng.gen_bool(0.75) {
                bound_s[rng.gen_range(0..bound_s.len())]
            } else {
                rng.gen_range(0..nq)
            };
            let held = stage.or(offer).map(|p| p.qpn).filter(|&q| q < nums);
            let r = rng.gen_range(0..100);
            let q = if r < 6 {
                if rng.gen_bool(0.3) {
                    NO_SLOT
                } else {
                    let low = if bound_s.is_empty() {
                        rng.gen_range(0..nums)
                    } else {
                        qpn[bound_s[rng.gen_range(0..bound_s.len())] as usize]
                    };
                    (rng.gen_range(1..=(0xff_ffffu32 >> qpn_w)) << qpn_w) | low
                }
            } else if r < 26 && !bound_s.is_empty() {
                if slot < nq && bound[slot as usize] && rng.gen_bool(0.3) {
                    qpn[slot as usize]
                } else {
                    qpn[bound_s[rng.gen_range(0..bound_s.len())] as usize]
                }
            } else if r < 36 {
                top
            } else if let (true, Some(h)) = (r < 56, held) {
                h
            } else if r < 66 && !unbound_recent.is_empty() {
                unbound_recent[rng.gen_range(0..unbound_recent.len())]
            } else {
                rng.gen_range(0..nums)
            };
            // an unbind of the slot holding the packet in the stage
            let slot = match held.and_then(|h| holder(&bound, &qpn, h)) {
                Some(s) if op == 2 && rng.gen_bool(0.3) => s,
                _ => slot,
            };
            // a bind of a bound slot to its own number
            let (slot, q) = if op == 1 && !bound_s.is_empty() && rng.gen_bool(0.05) {
                let s = bound_s[rng.gen_range(0..bound_s.len())];
                (s, qpn[s as usize])
            } else {
                (slot, q)
            };
            cmd = Some((Cmd { op, slot, qpn: q }, 0));
            cmd_valid = true;
        }
        // the command's fields: held while it is in flight, junk else
        let fields = match cmd {
            Some((k, _)) => k,
            None => Cmd {
                op: rng.gen_range(0..4),
                slot: if rng.gen_bool(0.8) {
                    rng.gen_range(0..nq)
                } else {
                    rng.gen_range(0..=0xffff)
                },
                qpn: rng.gen_range(0..=0xff_ffff),
            },
        };
        let cqe_slot = rng.gen_range(0..nq);

        let mut i = PortsIn {
            rst: u8::from(rst),
            m_ready: u8::from(m_ready),
            ..Default::default()
        };
        i.s_data[0] = fields.qpn & 0xff_ffff;
        i.s_data[1] = (fields.slot & 0xffff) | ((fields.op & 3) << 16);
        if let Some(p) = offer {
            i.s_data[2] = p.qpn;
            i.s_data[3] = p.meta as u32;
            i.s_data[4] = (p.meta >> 32) as u32;
        }
        i.s_data[5] = cqe_slot;
        // the lookup: a new number now and then, held for a few cycles
        if rng.gen_bool(0.35) {
            let bound_q: Vec<u32> = (0..nq as usize)
                .filter(|&s| bound[s])
                .map(|s| qpn[s])
                .collect();
            let r = rng.gen_range(0..100);
            let q = if r < 45 && !bound_q.is_empty() {
                bound_q[rng.gen_range(0..bound_q.len())]
            } else if let (true, Some((k, _))) = (r < 60, cmd) {
                k.qpn & 0xffff
            } else if r < 70 && !unbound_recent.is_empty() {
                unbound_recent[rng.gen_range(0..unbound_recent.len())]
            } else {
                rng.gen_range(0..=0xffff)
            };
            lk = (q, q == lk.0);
        } else {
            lk.1 = true;
        }
        i.s_data[6] = lk.0;
        // free_from: mostly within the slots, sometimes beyond
        let free_from = if rng.gen_bool(0.9) {
            rng.gen_range(0..nq)
        } else {
            rng.gen_range(nq..=0xffff)
        };
        i.s_data[7] = free_from;
        i.s_valid = u32::from(cmd_valid) | (u32::from(offer.is_some()) << 1);

        // a peek with every input but cqe_slot changed
        let mut alt = i.clone();
        alt.s_data[0] = rng.gen_range(0..=0xff_ffff);
        alt.s_data[1] = rng.gen_range(0..0x4_0000);
        alt.s_data[2] = rng.gen_range(0..=0xff_ffff);
        let am: u64 = rng.gen::<u64>() & meta_mask;
        alt.s_data[3] = am as u32;
        alt.s_data[4] = (am >> 32) as u32;
        alt.s_valid ^= 3;
        alt.rst ^= 1;
        alt.m_ready ^= 1;
        let po = m.peek(&alt);
        let o = m.step(&i);
        let at = || format!("{} cycle {cyc}", cfg.name);
        if o.sim_flags != 0 {
            fail!("{}: the model stopped ({:#x})", at(), o.sim_flags);
        }
        if po.m_valid != o.m_valid || po.m_data[..4] != o.m_data[..4] || po.m_data[5] != o.m_data[5]
        {
            fail!(
                "{}: an output follows the packet, command, m_pkt_ready or rst inputs before the \
                 edge: m_valid {:#x} / {:#x}, m_data {:x?} / {:x?}",
                at(),
                o.m_valid,
                po.m_valid,
                &o.m_data[..6],
                &po.m_data[..6]
            );
        }
        let got_valid = o.m_valid & 1 != 0;
        let got_busy = o.m_valid & 2 != 0;
        let got_rb_bound = o.m_valid & 4 != 0;
        let got_dest = o.m_data[0];
        let got_meta = (u64::from(o.m_data[1]) | (u64::from(o.m_data[2]) << 32)) & meta_mask;
        let s_ready = o.s_ready & 1 != 0;

        // the command side
        if got_busy != cmd_busy {
            fail!(
                "{}: busy {got_busy}, expected {cmd_busy} (command {:?})",
                at(),
                cmd
            );
        }
        if o.m_data[5] != err {
            fail!(
                "{}: cmd_err {}, expected {err} (the last command's)",
                at(),
                o.m_data[5]
            );
        }
        if (got_rb_bound, o.m_data[3]) != rb_want {
            fail!(
                "{}: rb_bound {got_rb_bound} rb_qpn {:#x}, expected {} {:#x} (the slot on \
                 cmd_slot a cycle before)",
                at(),
                o.m_data[3],
                rb_want.0,
                rb_want.1
            );
        }
        let want_cqe = qpn[cqe_slot as usize];
        if o.m_data[4] != want_cqe {
            fail!(
                "{}: cqe_qpn {:#x} for slot {cqe_slot}, expected {want_cqe:#x} ({})",
                at(),
                o.m_data[4],
                if bound[cqe_slot as usize] {
                    "bound"
                } else if ever[cqe_slot as usize] {
                    "unbound, its last number"
                } else {
                    "never bound"
                }
            );
        }
        if bound[cqe_slot as usize] {
            rep.cqe_bound += 1;
        } else if ever[cqe_slot as usize] {
            rep.cqe_stale += 1;
        }

        // the host's lookup (16-bit numbers: beyond 2^QPN_W when QPN_W < 16)
        if lk.1 {
            let want = want_of(&bound, &qpn, &hint, lk.0);
            let got_hit = o.m_data[6] >> 16 & 1 != 0;
            let got = if got_hit {
                o.m_data[6] & 0xffff
            } else {
                NO_SLOT
            };
            if !answer_ok(want, got) {
                fail!(
                    "{}: lk_hit {got_hit} lk_slot {} for QP number {:#x}, expected {want:?}",
                    at(),
                    o.m_data[6] & 0xffff,
                    lk.0
                );
            }
            if got_hit {
                rep.lk_hits += 1;
            } else {
                rep.lk_misses += 1;
            }
        }

        // the free-slot search
        let got_free = (o.m_data[7] >> 16 & 1 != 0).then_some(o.m_data[7] & 0xffff);
        if got_free != free_want {
            fail!(
                "{}: free slot {got_free:?}, expected {free_want:?} (the lowest unbound slot \
                 from free_from on, a cycle before)",
                at()
            );
        }
        if got_free.is_some() {
            rep.free_found += 1;
        } else {
            rep.free_none += 1;
        }

        // the receive stage
        let want_ready = stage.is_none() || m_ready;
        if s_ready != want_ready {
            fail!(
                "{}: s_pkt_ready {s_ready}, expected {want_ready} (stage {}, m_pkt_ready \
                 {m_ready})",
                at(),
                if stage.is_some() { "full" } else { "empty" }
            );
        }
        if got_valid != stage.is_some() {
            fail!(
                "{}: m_pkt_valid {got_valid}, expected {} ({:?})",
                at(),
                stage.is_some(),
                stage
            );
        }
        if let Some(p) = stage.as_mut() {
            let want = want_of(&bound, &qpn, &hint, p.qpn);
            let ok = answer_ok(want, got_dest);
            if !ok {
                fail!(
                    "{}: m_pkt_dest_qp {got_dest:#x} for a packet of QP number {:#x}, expected \
                     {}",
                    at(),
                    p.qpn,
                    match want {
                        Want::Is(NO_SLOT) => "0xffffff: no slot holds it".to_string(),
                        Want::Is(s) => format!("slot {s} (it holds the number)"),
                        Want::Lag(s, _) => format!(
                            "slot {s}{}: the slot holds it since the edge before (a bind \
                             done; the hint is written at this edge)",
                            if c.strict_bind { "" } else { " or 0xffffff" }
                        ),
                    }
                );
            }
            if matches!(want, Want::Lag(..)) && got_dest == NO_SLOT {
                rep.late_binds += 1;
            }
            if got_meta != p.meta {
                fail!(
                    "{}: m_pkt_meta {got_meta:#x}, expected {:#x} (packet of QP number {:#x})",
                    at(),
                    p.meta,
                    p.qpn
                );
            }
            match p.first {
                None => p.first = Some(got_dest),
                Some(f) if f != got_dest => {
                    if got_dest == NO_SLOT {
                        rep.held_to_none += 1;
                    } else {
                        rep.held_to_slot += 1;
                    }
                    p.first = Some(got_dest);
                }
                _ => {}
            }
            if m_ready {
                if got_dest == NO_SLOT {
                    rep.no_slot += 1;
                } else {
                    rep.to_slot += 1;
                }
                if p.qpn >= nums {
                    rep.beyond += 1;
                    if holder(&bound, &qpn, p.qpn & top).is_some() {
                        rep.beyond_alias += 1;
                    }
                }
            } else {
                rep.held_cycles += 1;
            }
        }

        // the edge: the free-slot search samples the slot table before it
        free_want = if rst {
            None
        } else {
            (free_from..nq).find(|&s| !bound[s as usize])
        };
        // the edge: the stage
        let take = offer.is_some() && s_ready;
        if take {
            stage = offer.take();
        } else if m_ready {
            stage = None;
        }
        // the read-back register: slot cmd_slot before the edge
        rb_want = if fields.slot < nq {
            (bound[fields.slot as usize], qpn[fields.slot as usize])
        } else {
            (false, 0)
        };
        // the hint written at this edge (the bind done at the one before)
        if let Some((q, s)) = hint_wr.take() {
            hint[q as usize] = Some(s);
        }
        // the command
        if let Some((k, n)) = cmd.as_mut() {
            if *n < 2 {
                *n += 1;
            } else {
                let k = *k;
                cmd = None;
                let s = k.slot;
                err = if k.op != 1 && k.op != 2 {
                    6
                } else if s >= nq {
                    if s & ((1 << qn_w) - 1) < nq {
                        rep.slot_alias += 1;
                    }
                    5
                } else if k.op == 2 {
                    if !bound[s as usize] {
                        4
                    } else {
                        bound[s as usize] = false;
                        unbound_recent.push(qpn[s as usize]);
                        if unbound_recent.len() > 8 {
                            unbound_recent.remove(0);
                        }
                        rep.unbinds += 1;
                        0
                    }
                } else if k.qpn >= nums {
                    2
                } else if let Some(h) = holder(&bound, &qpn, k.qpn) {
                    rep.err3_own += usize::from(h == s);
                    3
                } else if bound[s as usize] {
                    4
                } else {
                    if hint[k.qpn as usize].is_some_and(|h| h != s) {
                        rep.rebinds += 1;
                    }
                    bound[s as usize] = true;
                    qpn[s as usize] = k.qpn;
                    ever[s as usize] = true;
                    hint_wr = Some((k.qpn, s));
                    rep.binds += 1;
                    0
                };
                rep.errs[err as usize] += 1;
            }
        }
        if rst {
            // cmd is None (no reset with a command in flight)
            bound.iter_mut().for_each(|b| *b = false);
            qpn.iter_mut().enumerate().for_each(|(i, n)| *n = i as u32);
            ever.iter_mut().for_each(|e| *e = false);
            err = 0;
            stage = None;
            rst_left -= 1;
        }
        if !in_sweep && !rst {
            rep.cycles += 1;
        }
        cyc += 1;
    }
    Ok(rep)
}
