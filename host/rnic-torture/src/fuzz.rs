//! The responder fuzz campaign: random and mutated RoCEv2 frames sent into
//! NIC b while a legitimate RC connection from NIC a keeps working.
//!
//! The frames go to three kinds of target: the legitimate QP, with PSNs of
//! its duplicate region only (RoCE has no authentication, so a forged frame
//! with its next PSN would simply be the peer's); an attack QP on NIC b whose
//! expected PSN the attacker tracks, so its frames reach the opcode,
//! length and memory-region checks (and re-armed RESET -> RTR whenever a NAK
//! moved it to ERR); and unknown QPs. The mutations: bad ICRC, truncated
//! frames, garbage after the Ethernet header, any opcode (impossible
//! sequences, middles without a first), lengths that disagree with the
//! RETH, PSNs outside the window, bad rkeys, the key of a region without
//! REMOTE_WRITE, addresses out of bounds, payloads beyond the PMTU, and
//! PadCnt abuse with a recomputed ICRC. Both QPs and the playground region
//! allow RDMA READ, and an eighth of the attack is deliberate READ requests
//! ([`ReadCase`]): valid ones inside the playground, the key of the secret
//! region (no REMOTE_READ, no REMOTE_WRITE), bad keys, out of bounds, huge
//! lengths, va + len wrapping, READs with a payload, a READ inside a WRITE
//! message, duplicates at old PSNs. On a build that executes atomics
//! (`id.caps` bit 9) the playground and both QPs also allow REMOTE_ATOMIC
//! (the attack QP is re-armed without it a quarter of the time), a third
//! region allows REMOTE_WRITE and REMOTE_READ but not REMOTE_ATOMIC (only
//! atomics name it: its pattern must stay), random opcodes reach COMPARE
//! SWAP and FETCH ADD (with an AtomicETH aimed like the RETH), and another
//! eighth of the attack is deliberate atomics ([`AtomicCase`]): valid ones
//! in the playground (a CMP_SWAP comparing with the bytes there half the
//! time, so that it swaps), misaligned, the secret region's key, the
//! no-atomic region's key, bad keys, out of bounds, with a payload, inside
//! a WRITE message, duplicates at old PSNs and exact repeats of the last
//! valid one (answered from the replay record).
//!
//! What must hold, checked by [`run`] and reported as failures: no byte is
//! written outside a registered region that allows remote writes (the root
//! complex records every DMA outside the mapped buffers, and a region
//! registered without REMOTE_WRITE keeps its canary); the legitimate QP stays
//! in RTS and every one of its messages completes within a watchdog of
//! simulated cycles with the right bytes; every frame that reached the NIC
//! is counted once, accepted or dropped with a reason. And for what NIC b
//! sends (every frame of it, read from the world's frame window after each
//! burst and counted against its `tx_frames`): it decodes; it goes to NIC
//! a's MAC and IP and to one of the two QPs b's are connected to; each
//! READ RESPONSE answers an injected READ request on the same QP at the
//! same PSN, in order, inside the playground, and carries exactly the
//! playground's bytes at the requested addresses (bytes a later attack
//! frame may have overwritten are not compared, and counted); no frame
//! carries the secret region's pattern. Several requests may share a PSN
//! (the attacker's view of the expected PSN lags; duplicates) and begin
//! with the same packets: an answer keeps every request it fits as a
//! candidate and is narrowed packet by packet (opcode, length, bytes); it
//! fails only when no candidate is left. Each ATOMIC ACKNOWLEDGE is an ACK
//! that answers an atomic injected on the same QP at the same PSN which NIC
//! b may execute (the playground's key, 8 aligned bytes inside it, no
//! payload, the attack QP armed with REMOTE_ATOMIC, an rc QP); where no
//! frame injected after that atomic may have written its 8 bytes, the
//! playground holds what the atomic made of the original value the ACK
//! carries (the swap if it equalled the compare, the sum). An executed
//! atomic may write its 8 bytes, as a WRITE its RETH's range, and the READ
//! checks do not compare bytes a later atomic may have changed. NIC b's
//! `rx_atomic` and `rx_atomic_replay` count at least the ACKs seen (none
//! on mp).

use std::collections::{BTreeMap, VecDeque};

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rnic_device::Device;
use rnic_sim::WireFrame;
use rnic_verbs::{
    AccessFlags, AtomicCap, Mtu, QpState, RecvWr, SendFlags, SendWr, WcStatus, WorkCompletion,
    WrOpcode,
};
use rnic_wire::{
    opcode, Aeth, AtomicAckEth, AtomicEth, Bth, Eth, Ipv4, Mceth, Mpeth, Reth, RoceFrame, Snaketh,
    Udp, ATOMIC_ETH_LEN, BTH_OFFSET,
};
use serde::{Deserialize, Serialize};

use rnic_harness::conn::{self, ConnOpts, PortAddr};
use rnic_harness::pattern;

use crate::sim::{self, SimOpts};
use crate::{Break, Error, Result};

/// A campaign.
#[derive(Debug, Clone)]
pub struct FuzzConfig {
    pub seed: u64,
    /// Attack frames in all.
    pub frames: u64,
    pub data_w: u32,
    /// Which build of the core both NICs are.
    pub knobs: rnic_sim::ModelKnobs,
    /// Attack frames between two legitimate messages.
    pub burst: u32,
    /// Cycles a legitimate message may take before it counts as lost.
    pub watchdog: u64,
    /// A debug switch on the target NIC: only `NoMrCheck` (the responder
    /// skips its memory-region checks; the campaign must then report
    /// writes outside the registered regions).
    pub brk: Option<Break>,
    /// Both QPs (the legitimate one and the attack target) use the
    /// multipath transport: the attack meets the mp responder (placement
    /// on arrival, bitmap window, per-packet RETH checks).
    pub mp: bool,
}

impl Default for FuzzConfig {
    fn default() -> Self {
        Self {
            seed: 4242,
            frames: 3000,
            data_w: 64,
            knobs: rnic_sim::ModelKnobs::Full,
            burst: 50,
            watchdog: 20_000,
            brk: None,
            mp: false,
        }
    }
}

/// What a campaign saw.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct FuzzReport {
    pub seed: u64,
    pub data_w: u32,
    /// "rc" or "mp".
    pub transport: String,
    /// Attack frames sent.
    pub frames: u64,
    /// Of those, with an ICRC that no longer matches.
    pub bad_icrc_frames: u64,
    /// Legitimate WRITE_WITH_IMM messages that completed and were checked.
    pub messages: u64,
    /// Times the attack QP was found in ERR (a NAK) and re-armed.
    pub attack_qp_rearms: u64,
    /// Deliberate READ requests sent, by [`ReadCase`] name.
    pub read_cases: BTreeMap<String, u64>,
    /// Frames NIC b sent, every one decoded and checked (must equal its
    /// `tx_frames`).
    pub b_frames_inspected: u64,
    /// READ RESPONSE frames of NIC b, each matched to a request.
    pub read_responses: u64,
    /// READ requests (deliberate or not) that NIC b answered.
    pub reads_answered: u64,
    /// Payload bytes of READ responses compared with the playground, and
    /// those not compared because an attack frame sent after the request
    /// may have written them.
    pub read_bytes_checked: u64,
    pub read_bytes_unchecked: u64,
    /// Answers that stopped before their last response (the attack QP was
    /// reset meanwhile, or a later request took over): not a failure.
    pub reads_cut_short: u64,
    /// Whether NIC b executes atomics (`id.caps` bit 9): the playground
    /// and the QPs were given REMOTE_ATOMIC.
    pub atomics_served: bool,
    /// Deliberate atomics sent, by [`AtomicCase`] name.
    pub atomic_cases: BTreeMap<String, u64>,
    /// Attack frames sent whose BTH opcode is COMPARE SWAP or FETCH ADD
    /// (deliberate or random, mutated or not).
    pub atomic_frames: u64,
    /// ATOMIC ACKNOWLEDGEs of NIC b, each matched to an atomic it may
    /// execute.
    pub atomic_acks: u64,
    /// Of those, the ones whose original value was checked against the
    /// playground's 8 bytes, and those not compared because a frame
    /// injected after the atomic may have written them.
    pub atomic_values_checked: u64,
    pub atomic_values_unchecked: u64,
    /// Playground bytes that changed from one look to the next, each in a
    /// range an injected frame may write.
    pub playground_bytes_changed: u64,
    pub cycles: u64,
    /// NIC b's port counters (`rx_frames`, drops by reason, NAKs, ...).
    pub counters: BTreeMap<String, u64>,
    /// Everything that broke a promise (empty: the campaign passed).
    pub failures: Vec<String>,
}

impl FuzzReport {
    pub fn failed(&self) -> bool {
        !self.failures.is_empty()
    }
}

/// Where an attack frame goes and what it may name.
struct Target {
    /// The legitimate QP and its expected PSN (frames get older PSNs).
    legit_qpn: u32,
    legit_epsn: u32,
    /// The attack QP and its expected PSN (frames mostly get that one).
    attack_qpn: u32,
    attack_epsn: u32,
    /// Keys the attacker knows: the playground (REMOTE_WRITE and
    /// REMOTE_READ, and REMOTE_ATOMIC where atomics are served) and the
    /// secret region (none of them), with their addresses; both are
    /// [`BUF`] bytes.
    keys: [(u32, u64); 2],
    /// The no-atomic region (REMOTE_WRITE and REMOTE_READ, not
    /// REMOTE_ATOMIC; [`BUF`] bytes): only atomics name it.
    noatom: (u32, u64),
    /// Both QPs are mp: most frames carry mp opcodes (the others, RC ones,
    /// must be dropped as the other transport's); else the reverse.
    mp: bool,
}

/// Frames the world's window keeps between two looks (a burst's worth and
/// far more).
const WINDOW: usize = 1 << 15;

/// Fills the playground with a pattern of `seed`.
fn scratch_fill(buf: &rnic_device::DmaBuffer, seed: u64) {
    let mut v = vec![0u8; BUF];
    pattern::fill(pattern::key(seed, 1, 0, 0), &mut v);
    buf.write(0, &v);
}

/// Each region's size.
const BUF: usize = 1 << 16;
/// The path MTU of both QPs, in bytes.
const PMTU: usize = 1024;
/// The secret region's pattern: this marker and the offset, every 16 bytes.
const SECRET: &[u8; 8] = b"\x5eSECRET\x5e";

fn secret_pattern() -> Vec<u8> {
    (0..BUF / 16)
        .flat_map(|i| {
            let mut rec = [0u8; 16];
            rec[..8].copy_from_slice(SECRET);
            rec[8..].copy_from_slice(&((i * 16) as u64).to_le_bytes());
            rec
        })
        .collect()
}

/// Whether `f` carries the secret marker, or at least its middle
/// `SECRET` (six bytes: a leak of 6 bytes or more at any alignment
/// within a record, the READ checks catch shorter ones).
fn carries_secret(f: &[u8]) -> bool {
    f.windows(6).any(|w| w == &SECRET[1..7])
}

/// The deliberate READ requests of the attack mix.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReadCase {
    /// At the attack QP's expected PSN, inside the playground.
    Valid,
    /// The secret region's key (no REMOTE_READ).
    SecretKey,
    /// The playground's key with bits flipped.
    BadKey,
    /// Crossing the playground's start or end.
    OutOfBounds,
    /// A length of 2^31 or more, or beyond the region.
    HugeLen,
    /// va + len wraps around 2^64 (to inside the playground where it can).
    Wrap,
    /// A READ request carrying a payload.
    WithPayload,
    /// A READ after the FIRST of a WRITE message, before its LAST.
    InsideMessage,
    /// A valid READ at an old PSN of either QP (answered again, or
    /// dropped).
    Duplicate,
}

impl ReadCase {
    pub const ALL: [ReadCase; 9] = [
        ReadCase::Valid,
        ReadCase::SecretKey,
        ReadCase::BadKey,
        ReadCase::OutOfBounds,
        ReadCase::HugeLen,
        ReadCase::Wrap,
        ReadCase::WithPayload,
        ReadCase::InsideMessage,
        ReadCase::Duplicate,
    ];
    pub fn name(self) -> &'static str {
        match self {
            ReadCase::Valid => "valid",
            ReadCase::SecretKey => "secret_key",
            ReadCase::BadKey => "bad_key",
            ReadCase::OutOfBounds => "out_of_bounds",
            ReadCase::HugeLen => "huge_len",
            ReadCase::Wrap => "wrap",
            ReadCase::WithPayload => "with_payload",
            ReadCase::InsideMessage => "inside_message",
            ReadCase::Duplicate => "duplicate",
        }
    }
}

/// The deliberate atomics of the attack mix.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AtomicCase {
    /// At the attack QP's expected PSN, 8 aligned bytes inside the
    /// playground (a COMPARE SWAP compares with the bytes there half the
    /// time).
    Valid,
    /// Inside the playground, not 8-byte aligned (NAK invalid request).
    Misaligned,
    /// The secret region's key (no remote access at all).
    SecretKey,
    /// The key of the region with REMOTE_WRITE and REMOTE_READ but without
    /// REMOTE_ATOMIC.
    NoAtomicKey,
    /// The playground's key with bits flipped.
    BadKey,
    /// Before the playground, at or past its end, or across its end.
    OutOfBounds,
    /// An atomic carrying a payload.
    WithPayload,
    /// An atomic after the FIRST of a WRITE message, before its LAST.
    InsideMessage,
    /// A valid atomic at an old PSN of either QP (answered from a replay
    /// record if one is left, else dropped; never executed).
    Duplicate,
    /// The last valid atomic sent again, byte for byte (its PSN included):
    /// answered from its replay record with the first execution's value.
    Repeat,
}

impl AtomicCase {
    pub const ALL: [AtomicCase; 10] = [
        AtomicCase::Valid,
        AtomicCase::Misaligned,
        AtomicCase::SecretKey,
        AtomicCase::NoAtomicKey,
        AtomicCase::BadKey,
        AtomicCase::OutOfBounds,
        AtomicCase::WithPayload,
        AtomicCase::InsideMessage,
        AtomicCase::Duplicate,
        AtomicCase::Repeat,
    ];
    pub fn name(self) -> &'static str {
        match self {
            AtomicCase::Valid => "valid",
            AtomicCase::Misaligned => "misaligned",
            AtomicCase::SecretKey => "secret_key",
            AtomicCase::NoAtomicKey => "no_atomic_key",
            AtomicCase::BadKey => "bad_key",
            AtomicCase::OutOfBounds => "out_of_bounds",
            AtomicCase::WithPayload => "with_payload",
            AtomicCase::InsideMessage => "inside_message",
            AtomicCase::Duplicate => "duplicate",
            AtomicCase::Repeat => "repeat",
        }
    }
}

/// A well-formed frame from NIC a's address to NIC b.
fn frame(
    addrs: &[PortAddr; 2],
    op: u8,
    qpn: u32,
    psn: u32,
    reth: Reth,
    payload: Vec<u8>,
) -> Vec<u8> {
    build(addrs, op, qpn, psn, Some(reth), None, payload)
}

/// A well-formed frame from NIC a's address to NIC b with `ae` as its
/// AtomicETH (COMPARE SWAP, FETCH ADD).
fn atomic_frame(
    addrs: &[PortAddr; 2],
    op: u8,
    qpn: u32,
    psn: u32,
    ae: AtomicEth,
    payload: Vec<u8>,
) -> Vec<u8> {
    build(addrs, op, qpn, psn, None, Some(ae), payload)
}

fn build(
    addrs: &[PortAddr; 2],
    op: u8,
    qpn: u32,
    psn: u32,
    reth: Option<Reth>,
    atomiceth: Option<AtomicEth>,
    payload: Vec<u8>,
) -> Vec<u8> {
    RoceFrame {
        eth: Eth {
            dst: addrs[1].mac,
            src: addrs[0].mac,
        },
        ip: Ipv4 {
            src: addrs[0].ip.octets(),
            dst: addrs[1].ip.octets(),
            ..Ipv4::default()
        },
        udp: Udp {
            src_port: 0xC0DE,
            checksum: 0,
        },
        bth: Bth {
            opcode: op,
            dest_qp: qpn,
            psn: psn & 0xff_ffff,
            ack_req: true,
            ..Bth::default()
        },
        reth,
        atomiceth,
        payload,
        ..RoceFrame::default()
    }
    .encode()
}

/// A deliberate READ case: its frames (the READ last).
fn read_attack(r: &mut ChaCha8Rng, addrs: &[PortAddr; 2], t: &Target) -> (Vec<Vec<u8>>, ReadCase) {
    let case = match r.gen_range(0..12) {
        0..=2 => ReadCase::Valid,
        3 => ReadCase::Duplicate,
        4 => ReadCase::Duplicate,
        n => ReadCase::ALL[n as usize - 4],
    };
    let (pg_key, pg) = t.keys[0];
    let (secret_key, secret) = t.keys[1];
    // a length and an offset inside the playground
    let len = match r.gen_range(0..8) {
        0 => 0,
        1 | 2 => r.gen_range(1..=64),
        3 | 4 => r.gen_range(65..=PMTU),
        _ => r.gen_range(PMTU + 1..=8 * PMTU),
    };
    let off = r.gen_range(0..=BUF - len);
    let mut reth = Reth {
        va: pg + off as u64,
        rkey: pg_key,
        dma_len: len as u32,
    };
    let mut qpn = t.attack_qpn;
    let mut psn = t.attack_epsn;
    let mut payload = Vec::new();
    let mut frames = Vec::new();
    match case {
        ReadCase::Valid => {}
        ReadCase::SecretKey => {
            reth.rkey = secret_key;
            reth.va = secret + off as u64;
            reth.dma_len = reth.dma_len.max(16);
            reth.va = reth.va.min(secret + (BUF - 16) as u64);
        }
        ReadCase::BadKey => reth.rkey ^= r.gen_range(1..=0xffff_ffffu32),
        ReadCase::OutOfBounds => {
            if r.gen() {
                // past the end: from inside, or starting at the end
                let k = r.gen_range(0..=PMTU);
                reth.va = pg + (BUF - k) as u64;
                reth.dma_len = (k + r.gen_range(1..=2 * PMTU)) as u32;
            } else {
                // before the start, reaching into the region or not
                reth.va = pg.wrapping_sub(r.gen_range(1..=2 * PMTU) as u64);
            }
        }
        ReadCase::HugeLen => {
            reth.dma_len = match r.gen_range(0..3) {
                0 => r.gen_range(0x8000_0000..=u32::MAX),
                1 => r.gen_range(BUF as u32 + 1..0x8000_0000),
                _ => (BUF - off) as u32 + 1,
            };
        }
        ReadCase::Wrap => {
            // va near 2^64, so that va + len ends inside the playground
            // when the playground is below 2^32, else just past 2^64
            let d = r.gen_range(1..=PMTU as u64);
            reth.va = 0u64.wrapping_sub(d);
            let end = pg + off as u64 + 1;
            reth.dma_len = match u32::try_from(end.wrapping_sub(reth.va)) {
                Ok(l) if r.gen() => l,
                _ => (d + r.gen_range(1..=PMTU as u64)) as u32,
            };
        }
        ReadCase::WithPayload => {
            payload = vec![0u8; r.gen_range(1..=PMTU)];
            r.fill(&mut payload[..]);
            reth.dma_len = payload.len() as u32;
        }
        ReadCase::InsideMessage => {
            // a valid WRITE_FIRST of a 3-packet message, then the READ
            let mut p = vec![0u8; PMTU];
            r.fill(&mut p[..]);
            let w = Reth {
                va: pg + r.gen_range(0..=BUF - 3 * PMTU) as u64,
                rkey: pg_key,
                dma_len: 3 * PMTU as u32,
            };
            frames.push(frame(addrs, opcode::RDMA_WRITE_FIRST, qpn, psn, w, p));
            psn = psn.wrapping_add(1);
        }
        ReadCase::Duplicate => {
            if r.gen() {
                qpn = t.legit_qpn;
                psn = t.legit_epsn;
            }
            psn = psn.wrapping_sub(r.gen_range(1..=64));
        }
    }
    frames.push(frame(
        addrs,
        opcode::RDMA_READ_REQUEST,
        qpn,
        psn,
        reth,
        payload,
    ));
    (frames, case)
}

/// A deliberate atomic case: its frames (the atomic last). `peek` reads
/// the playground's 8 bytes at an offset as the host holds them now (a
/// COMPARE SWAP compares with them half the time); `last` is the last
/// valid atomic sent, which a [`AtomicCase::Repeat`] sends again.
fn atomic_attack(
    r: &mut ChaCha8Rng,
    addrs: &[PortAddr; 2],
    t: &Target,
    peek: &dyn Fn(usize) -> u64,
    last: &mut Option<Vec<u8>>,
) -> (Vec<Vec<u8>>, AtomicCase) {
    let mut case = match r.gen_range(0..14) {
        0..=3 => AtomicCase::Valid,
        12 | 13 => AtomicCase::Repeat,
        n => AtomicCase::ALL[n as usize - 3],
    };
    if case == AtomicCase::Repeat {
        match last {
            Some(f) => return (vec![f.clone()], case),
            None => case = AtomicCase::Valid,
        }
    }
    let (pg_key, pg) = t.keys[0];
    let op = if r.gen() {
        opcode::COMPARE_SWAP
    } else {
        opcode::FETCH_ADD
    };
    // 8 aligned bytes inside the playground
    let off = r.gen_range(0..BUF / 8) * 8;
    let mut ae = AtomicEth {
        va: pg + off as u64,
        rkey: pg_key,
        swap_add: if r.gen() {
            r.gen_range(1..256)
        } else {
            r.gen()
        },
        compare: if op == opcode::COMPARE_SWAP && r.gen() {
            peek(off)
        } else {
            r.gen()
        },
    };
    let mut qpn = t.attack_qpn;
    let mut psn = t.attack_epsn;
    let mut payload = Vec::new();
    let mut frames = Vec::new();
    match case {
        AtomicCase::Valid | AtomicCase::Repeat => {}
        AtomicCase::Misaligned => ae.va += r.gen_range(1..8),
        AtomicCase::SecretKey => {
            let (k, base) = t.keys[1];
            ae.rkey = k;
            ae.va = base + off as u64;
        }
        AtomicCase::NoAtomicKey => {
            let (k, base) = t.noatom;
            ae.rkey = k;
            ae.va = base + off as u64;
        }
        AtomicCase::BadKey => ae.rkey ^= r.gen_range(1..=0xffff_ffffu32),
        AtomicCase::OutOfBounds => {
            let k = r.gen_range(1..=64u64);
            ae.va = match r.gen_range(0..4) {
                0 => pg + BUF as u64,
                1 => pg + BUF as u64 + 8 * k,
                2 => pg.wrapping_sub(8 * k),
                // across the end (and misaligned)
                _ => pg + BUF as u64 - r.gen_range(1..8),
            };
        }
        AtomicCase::WithPayload => {
            payload = vec![0u8; r.gen_range(1..=64)];
            r.fill(&mut payload[..]);
        }
        AtomicCase::InsideMessage => {
            // a valid WRITE_FIRST of a 3-packet message, then the atomic
            let mut p = vec![0u8; PMTU];
            r.fill(&mut p[..]);
            let w = Reth {
                va: pg + r.gen_range(0..=BUF - 3 * PMTU) as u64,
                rkey: pg_key,
                dma_len: 3 * PMTU as u32,
            };
            frames.push(frame(addrs, opcode::RDMA_WRITE_FIRST, qpn, psn, w, p));
            psn = psn.wrapping_add(1);
        }
        AtomicCase::Duplicate => {
            if r.gen() {
                qpn = t.legit_qpn;
                psn = t.legit_epsn;
            }
            psn = psn.wrapping_sub(r.gen_range(1..=64));
        }
    }
    let f = atomic_frame(addrs, op, qpn, psn, ae, payload);
    if case == AtomicCase::Valid {
        *last = Some(f.clone());
    }
    frames.push(f);
    (frames, case)
}

fn attack(r: &mut ChaCha8Rng, addrs: &[PortAddr; 2], t: &Target) -> (Vec<u8>, bool) {
    let op = match (t.mp, r.gen_range(0..10)) {
        (_, 0) => r.gen(),
        (false, 1..=3) => opcode::RDMA_WRITE_ONLY,
        (false, 4) => opcode::RDMA_WRITE_FIRST,
        (false, 5) => opcode::RDMA_WRITE_MIDDLE,
        (false, 6) => opcode::SEND_ONLY,
        (false, 7) => opcode::ACKNOWLEDGE,
        (true, 1..=3) => opcode::MP_WRITE_LAST,
        (true, 4) => opcode::MP_WRITE,
        (true, 5) => opcode::MP_WRITE_LAST_WITH_IMMEDIATE,
        // the ACK classes: an ACK / NAK, or a selective NAK with a random
        // bitmap of lost PSNs, for the attack QP's requester side
        (true, 6) => {
            if r.gen() {
                opcode::MP_ACKNOWLEDGE
            } else {
                opcode::MP_SELECTIVE_NAK
            }
        }
        (true, 7) => r.gen_range(0..=opcode::FETCH_ADD),
        (false, 8) => r.gen_range(0..=opcode::FETCH_ADD),
        (true, 8) => r.gen_range(opcode::MP_WRITE..=opcode::MP_PROBE_REPLY),
        // the other transport's opcodes: dropped, never placed
        (false, _) => r.gen_range(opcode::MP_WRITE..=opcode::MP_PROBE_REPLY),
        (true, _) => r.gen_range(0..=opcode::FETCH_ADD),
    };
    let len = match r.gen_range(0..4) {
        0 => 0,
        1 => r.gen_range(1..64),
        2 => r.gen_range(64..1100),
        _ => r.gen_range(1100..4200),
    };
    let mut payload = vec![0u8; len];
    r.fill(&mut payload[..]);
    let dest_qp = match r.gen_range(0..6) {
        0 => r.gen::<u32>() & 0xff_ffff,
        1 => r.gen_range(0..64),
        2 | 3 => t.legit_qpn,
        _ => t.attack_qpn,
    };
    let psn = if dest_qp == t.legit_qpn {
        t.legit_epsn.wrapping_sub(r.gen_range(1..1000)) & 0xff_ffff
    } else if dest_qp == t.attack_qpn && r.gen_range(0..8) != 0 {
        t.attack_epsn
    } else {
        r.gen::<u32>() & 0xff_ffff
    };
    let (rkey, va) = t.keys[r.gen_range(0..2)];
    let reth = Reth {
        va: match r.gen_range(0..4) {
            0 => r.gen(),
            1 => va.wrapping_sub(r.gen_range(1..4096)),
            _ => va + r.gen_range(0..70_000),
        },
        rkey: if r.gen_bool(0.3) {
            rkey ^ r.gen_range(1..=0xffff)
        } else {
            rkey
        },
        dma_len: if r.gen_bool(0.5) { len as u32 } else { r.gen() },
    };
    // the AtomicETH aimed like the RETH: mostly at the playground (in or
    // just past it, aligned or not), at the secret or the no-atomic region,
    // before a region, or anywhere; a key with bits flipped a third of the
    // time
    let (akey, abase) = match r.gen_range(0..4) {
        0 => t.keys[1],
        1 => t.noatom,
        _ => t.keys[0],
    };
    let atomiceth = AtomicEth {
        va: match r.gen_range(0..4) {
            0 => r.gen(),
            1 => abase.wrapping_sub(r.gen_range(1..=64)),
            _ => {
                let off = r.gen_range(0..BUF as u64 + 64);
                abase + if r.gen_bool(0.75) { off & !7 } else { off }
            }
        },
        rkey: if r.gen_bool(0.3) {
            akey ^ r.gen_range(1..=0xffff)
        } else {
            akey
        },
        swap_add: r.gen(),
        compare: r.gen(),
    };
    let f = RoceFrame {
        eth: Eth {
            dst: addrs[1].mac,
            src: addrs[0].mac,
        },
        ip: Ipv4 {
            src: addrs[0].ip.octets(),
            dst: addrs[1].ip.octets(),
            ..Ipv4::default()
        },
        udp: Udp {
            src_port: r.gen(),
            checksum: 0,
        },
        bth: Bth {
            opcode: op,
            dest_qp,
            psn,
            ack_req: r.gen(),
            ..Bth::default()
        },
        reth: Some(reth),
        mpeth: Some(Mpeth {
            va: reth.va,
            rkey: reth.rkey,
            len: reth.dma_len,
        }),
        immdt: Some(r.gen()),
        mceth: Some(Mceth { msg_len: r.gen() }),
        aeth: Some(Aeth {
            syndrome: r.gen(),
            msn: r.gen::<u32>() & 0xff_ffff,
        }),
        snaketh: Some(Snaketh { bitmap: r.gen() }),
        atomiceth: Some(atomiceth),
        atomicacketh: Some(AtomicAckEth { orig: r.gen() }),
        payload,
    };
    let mut bytes = f.encode();
    let mut bad_icrc = false;
    match r.gen_range(0..8) {
        0 => {
            // a bit flip after the IP header (not in the masked TTL/checksum)
            let i = r.gen_range(34..bytes.len());
            if i != 46 {
                bytes[i] ^= 1 << r.gen_range(0..8);
                bad_icrc = true;
            }
        }
        1 => bytes.truncate(r.gen_range(1..bytes.len())),
        2 => {
            // PadCnt abuse; the ICRC is recomputed so only the pad is wrong
            bytes[43] = (bytes[43] & !0x30) | (r.gen_range(0..4u8) << 4);
            let end = bytes.len() - 4;
            let c = rnic_wire::icrc(&bytes, end);
            bytes[end..].copy_from_slice(&c.to_le_bytes());
        }
        3 => r.fill(&mut bytes[14..]),
        _ => {}
    }
    (bytes, bad_icrc)
}

/// A READ request injected into NIC b, as the checks remember it.
#[derive(Debug, Clone, Copy)]
struct ReadReq {
    psn: u32,
    va: u64,
    rkey: u32,
    len: u32,
    /// Payload bytes the request carried (it must be refused if any).
    payload: usize,
    /// Its injection number.
    seq: u64,
}

/// An atomic (COMPARE SWAP, FETCH ADD) injected into NIC b, as the checks
/// remember it.
#[derive(Debug, Clone, Copy)]
struct AtomicReq {
    psn: u32,
    op: u8,
    va: u64,
    rkey: u32,
    swap_add: u64,
    compare: u64,
    /// Payload bytes the atomic carried (it must be refused if any).
    payload: usize,
    /// Why NIC b must refuse it, or `None`: it may execute it (and answer
    /// it with an ATOMIC ACKNOWLEDGE): an atomic of the attack QP, armed
    /// with REMOTE_ATOMIC, on rc, with the playground's key, 8 aligned
    /// bytes inside it and no payload.
    refuse: Option<&'static str>,
    /// The attack QP's arming it was injected in.
    arm: u64,
    /// Its injection number, and the cycle it was injected at.
    seq: u64,
    cycle: u64,
}

/// A READ being answered: the requests it may be the answer to, and how
/// far its responses got.
#[derive(Debug, Clone)]
struct Answer {
    /// The requests at its PSN that every response so far fits (shape,
    /// length, bytes), in injection order, never empty: several may share
    /// the PSN (the attacker's view of the expected PSN lags; duplicates)
    /// and their first packets (or all but their last) may be the same.
    /// The answer is narrowed packet by packet; it fails only when no
    /// candidate is left.
    cands: Vec<ReadReq>,
    next_psn: u32,
    /// Bytes answered so far (the same for every candidate).
    off: usize,
    /// The request must not have been answered (reported once): its
    /// further responses are only consumed.
    refused: bool,
}

/// What one response packet says about a candidate request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Fit {
    /// Its opcode and length are the request's next ones, and every
    /// compared byte is the playground's.
    Yes,
    /// Not the opcode or length the request's next response has (the
    /// ones it has).
    Shape(u8, usize),
    /// The right shape, but this byte of the packet is not the
    /// playground's.
    Byte(usize),
}

/// The opcode and payload length of the response to `r` that starts at
/// byte `off` of the answer.
fn next_response(r: &ReadReq, off: usize) -> (u8, usize) {
    let rest = (r.len as usize).saturating_sub(off);
    match (off == 0, rest <= PMTU) {
        (true, true) => (opcode::RDMA_READ_RESPONSE_ONLY, rest),
        (true, false) => (opcode::RDMA_READ_RESPONSE_FIRST, PMTU),
        (false, true) => (opcode::RDMA_READ_RESPONSE_LAST, rest),
        (false, false) => (opcode::RDMA_READ_RESPONSE_MIDDLE, PMTU),
    }
}

/// Requests older than this many injections are forgotten (the NIC's
/// receive queue holds far fewer frames).
const PENDING_AGE: u64 = 4096;

/// The checks of what NIC b sends, and what they remember of what was
/// injected.
struct Inspector {
    /// NIC b's QP numbers: the legitimate one, the attack one.
    qpns: [u32; 2],
    /// NIC a's QP numbers of the same connections (b's answers go there).
    peers: [u32; 2],
    /// NIC a's addresses (everything b sends goes there).
    peer_addr: PortAddr,
    pg_key: u32,
    pg_addr: u64,
    mp: bool,
    pending: [VecDeque<ReadReq>; 2],
    answering: [Option<Answer>; 2],
    /// The atomics injected on each QP (forgotten after [`PENDING_AGE`]
    /// injections, not when answered: a repeat is answered from the first
    /// execution's record).
    atomics: [VecDeque<AtomicReq>; 2],
    /// The attack QP is armed with REMOTE_ATOMIC (on a build that executes
    /// atomics), and how often it was armed.
    atomic_qp: bool,
    arm: u64,
    /// The simulated cycle the frames are being injected at.
    now: u64,
    /// (injection number, playground offsets lo..hi) an injected frame may
    /// have written.
    writes: Vec<(u64, usize, usize)>,
    /// The same, kept for [`Inspector::changes`]: those injected since the
    /// look before the last one.
    recent_writes: Vec<(u64, usize, usize)>,
    /// The injection numbers at the last two looks at the playground, and
    /// what it held at the last one.
    looks: VecDeque<u64>,
    last_pg: Option<Vec<u8>>,
    /// Playground ranges of the WRITE messages begun on each QP (since the
    /// attack QP's last re-arm): a MIDDLE or LAST may land anywhere in them.
    firsts: [Vec<(usize, usize)>; 2],
    seq: u64,
    /// Failures reported by kind, to keep the report short.
    reported: BTreeMap<&'static str, u64>,
}

fn is_rc_write(op: u8) -> bool {
    (opcode::RDMA_WRITE_FIRST..=opcode::RDMA_WRITE_ONLY_WITH_IMMEDIATE).contains(&op)
}

fn is_mp_write(op: u8) -> bool {
    (opcode::MP_WRITE..=opcode::MP_WRITE_LAST_WITH_IMMEDIATE).contains(&op)
}

fn is_atomic(op: u8) -> bool {
    op == opcode::COMPARE_SWAP || op == opcode::FETCH_ADD
}

/// What atomic `op` (COMPARE SWAP with `swap_add` and `compare`, or
/// FETCH ADD of `swap_add`) leaves in memory that held `orig`.
fn atomic_result(op: u8, orig: u64, swap_add: u64, compare: u64) -> u64 {
    if op == opcode::COMPARE_SWAP {
        if orig == compare {
            swap_add
        } else {
            orig
        }
    } else {
        orig.wrapping_add(swap_add)
    }
}

impl Inspector {
    fn qp_of(&self, qpn: u32) -> Option<usize> {
        self.qpns.iter().position(|&q| q == qpn)
    }

    /// Playground offsets `va .. va + len`, clipped to the region.
    fn clip(&self, va: u64, len: u64) -> Option<(usize, usize)> {
        let lo = u128::from(va).max(u128::from(self.pg_addr));
        let hi = (u128::from(va) + u128::from(len)).min(u128::from(self.pg_addr) + BUF as u128);
        (lo < hi).then(|| {
            (
                (lo - u128::from(self.pg_addr)) as usize,
                (hi - u128::from(self.pg_addr)) as usize,
            )
        })
    }

    /// An injected frame (number `seq`) may write playground offsets
    /// `lo..hi`.
    fn may_write(&mut self, seq: u64, lo: usize, hi: usize) {
        self.writes.push((seq, lo, hi));
        self.recent_writes.push((seq, lo, hi));
    }

    /// Checks the playground `pg` against what it held at the last look:
    /// every byte that changed lies in a range that a frame injected since
    /// the look before the last one may write (a frame may be executed
    /// after the look that follows its injection, not after the next).
    fn changes(&mut self, pg: &[u8], rep: &mut FuzzReport) {
        if let Some(prev) = &self.last_pg {
            let since = if self.looks.len() == 2 {
                self.looks[0]
            } else {
                0
            };
            let changed: Vec<usize> = (0..BUF).filter(|&i| prev[i] != pg[i]).collect();
            rep.playground_bytes_changed += changed.len() as u64;
            let stray: Vec<usize> = changed
                .into_iter()
                .filter(|&i| {
                    !self
                        .recent_writes
                        .iter()
                        .any(|&(s, lo, hi)| s > since && lo <= i && i < hi)
                })
                .collect();
            if let (Some(&lo), Some(&hi)) = (stray.first(), stray.last()) {
                self.fail(
                    rep,
                    "stray",
                    format!(
                        "{} bytes of the playground changed between two looks (offsets {lo:#x}..={hi:#x}, first {:#04x} -> {:#04x}) where no frame injected since frame {since} may write (frames up to {} injected)",
                        stray.len(),
                        prev[lo],
                        pg[lo],
                        self.seq
                    ),
                );
            }
        }
        self.looks.push_back(self.seq);
        if self.looks.len() > 2 {
            self.looks.pop_front();
        }
        let keep = self.looks[0];
        self.recent_writes.retain(|w| w.0 > keep);
        match &mut self.last_pg {
            Some(v) => v.copy_from_slice(pg),
            None => self.last_pg = Some(pg.to_vec()),
        }
    }

    fn fail(&mut self, rep: &mut FuzzReport, kind: &'static str, msg: String) {
        let n = self.reported.entry(kind).or_default();
        *n += 1;
        if *n <= 3 {
            rep.failures.push(msg);
        }
    }

    /// Remembers frame `f`, just injected: a READ request it is, the
    /// playground bytes it may write.
    fn injected(&mut self, f: &[u8]) {
        self.seq += 1;
        let seq = self.seq;
        // what fails the ICRC the NIC drops before acting on it
        if f.len() < BTH_OFFSET + 16
            || rnic_wire::icrc(f, f.len() - 4).to_le_bytes()[..] != f[f.len() - 4..]
        {
            return;
        }
        let (q, op, reth, mpeth_va, atomiceth, payload) = match rnic_wire::decode(f) {
            Ok(d) => {
                let Some(q) = self.qp_of(d.bth.dest_qp) else {
                    return;
                };
                let mp = d.mpeth.map(|m| (m.va, u64::from(m.len)));
                (q, d.bth.opcode, d.reth, mp, d.atomiceth, d.payload.len())
            }
            Err(_) => {
                // the NIC may act on what rnic-wire refuses (a pad count
                // larger than the payload): read the headers raw
                let b = BTH_OFFSET;
                if f.len() < b + 12 {
                    return;
                }
                let qpn = u32::from_be_bytes([0, f[b + 5], f[b + 6], f[b + 7]]);
                let Some(q) = self.qp_of(qpn) else {
                    return;
                };
                let op = f[b];
                if is_rc_write(op) || is_mp_write(op) {
                    self.may_write(seq, 0, BUF);
                    return;
                }
                if is_atomic(op) {
                    // an atomic's AtomicETH, read raw (every byte after it
                    // counts as payload, the pad count ignored)
                    let Some(ae) = f.get(b + 12..).and_then(AtomicEth::parse) else {
                        return;
                    };
                    let payload = f.len().saturating_sub(b + 12 + ATOMIC_ETH_LEN + 4);
                    (q, op, None, None, Some(ae), payload)
                } else {
                    if op != opcode::RDMA_READ_REQUEST || f.len() < b + 12 + 16 + 4 {
                        return;
                    }
                    let e = &f[b + 12..];
                    let reth = Reth {
                        va: u64::from_be_bytes(e[..8].try_into().expect("8 bytes")),
                        rkey: u32::from_be_bytes(e[8..12].try_into().expect("4 bytes")),
                        dma_len: u32::from_be_bytes(e[12..16].try_into().expect("4 bytes")),
                    };
                    (q, op, Some(reth), None, None, f.len() - (b + 12 + 16 + 4))
                }
            }
        };
        let psn =
            u32::from_be_bytes([0, f[BTH_OFFSET + 9], f[BTH_OFFSET + 10], f[BTH_OFFSET + 11]]);
        match op {
            opcode::RDMA_READ_REQUEST => {
                let Some(x) = reth else { return };
                let p = &mut self.pending[q];
                p.push_back(ReadReq {
                    psn,
                    va: x.va,
                    rkey: x.rkey,
                    len: x.dma_len,
                    payload,
                    seq,
                });
                while p.front().is_some_and(|r| r.seq + PENDING_AGE < seq) {
                    p.pop_front();
                }
            }
            opcode::RDMA_WRITE_FIRST
            | opcode::RDMA_WRITE_ONLY
            | opcode::RDMA_WRITE_ONLY_WITH_IMMEDIATE => {
                let Some(x) = reth else { return };
                if let Some(rg) = self.clip(x.va, u64::from(x.dma_len).max(payload as u64)) {
                    self.may_write(seq, rg.0, rg.1);
                    if op == opcode::RDMA_WRITE_FIRST {
                        self.firsts[q].push(rg);
                        if self.firsts[q].len() > 64 {
                            self.firsts[q].remove(0);
                        }
                    }
                }
            }
            opcode::RDMA_WRITE_MIDDLE
            | opcode::RDMA_WRITE_LAST
            | opcode::RDMA_WRITE_LAST_WITH_IMMEDIATE => {
                let lo = self.firsts[q].iter().map(|r| r.0).min();
                let hi = self.firsts[q].iter().map(|r| r.1).max();
                if let (Some(lo), Some(hi)) = (lo, hi) {
                    self.may_write(seq, lo, hi);
                }
            }
            op if is_mp_write(op) => {
                if let Some((va, len)) = mpeth_va {
                    if let Some(rg) = self.clip(va, len.max(payload as u64)) {
                        self.may_write(seq, rg.0, rg.1);
                    }
                }
            }
            op if is_atomic(op) => {
                let Some(ae) = atomiceth else { return };
                // an executed atomic writes its 8 bytes (only the
                // playground's key names a region that allows atomics)
                if ae.rkey == self.pg_key {
                    if let Some(rg) = self.clip(ae.va, 8) {
                        self.may_write(seq, rg.0, rg.1);
                    }
                }
                let mut req = AtomicReq {
                    psn,
                    op,
                    va: ae.va,
                    rkey: ae.rkey,
                    swap_add: ae.swap_add,
                    compare: ae.compare,
                    payload,
                    refuse: None,
                    arm: self.arm,
                    seq,
                    cycle: self.now,
                };
                req.refuse = if self.mp {
                    Some("an mp QP")
                } else if q != 1 {
                    Some("the legitimate QP, at an old PSN")
                } else if !self.atomic_qp {
                    Some("the attack QP armed without REMOTE_ATOMIC")
                } else {
                    self.atomic_refusal(&req)
                };
                let a = &mut self.atomics[q];
                a.push_back(req);
                while a.front().is_some_and(|r| r.seq + PENDING_AGE < seq) {
                    a.pop_front();
                }
            }
            _ => {}
        }
    }

    /// Checks ATOMIC ACKNOWLEDGE `f` of NIC b (sent at `cycle`): an ACK,
    /// for an atomic injected on the QP at its PSN before `cycle` that NIC
    /// b may execute (the first such of the latest arming that has one),
    /// whose original value turned the playground's 8 bytes into what they
    /// hold (unless a frame injected after the atomic may have written
    /// them).
    fn atomic_ack(&mut self, f: &RoceFrame, cycle: u64, playground: &[u8], rep: &mut FuzzReport) {
        rep.atomic_acks += 1;
        let psn = f.bth.psn;
        let orig = f.atomicacketh.map_or(0, |a| a.orig);
        if self.mp {
            self.fail(
                rep,
                "mp",
                format!(
                    "NIC b answered an atomic on an mp QP: ATOMIC ACKNOWLEDGE psn {psn:#x} cycle {cycle}"
                ),
            );
            return;
        }
        let Some(q) = self.peers.iter().position(|&p| p == f.bth.dest_qp) else {
            return; // (failed: not a QP of NIC a's that b is connected to)
        };
        let syn = f.aeth.map_or(0xff, |a| a.syndrome);
        if syn >> 5 != 0 {
            self.fail(
                rep,
                "atomic_syndrome",
                format!(
                    "NIC b sent an ATOMIC ACKNOWLEDGE psn {psn:#x} (cycle {cycle}) with AETH syndrome {syn:#04x}, not an ACK"
                ),
            );
        }
        // the atomics at its PSN injected before it was sent: it answers
        // one NIC b may execute, the first of the latest arming that has
        // one (the answer of an atomic executed before a re-arm may leave
        // after it, behind the QP's queued answers; a repeat of that atomic
        // sent after it is no candidate)
        let at: Vec<AtomicReq> = self.atomics[q]
            .iter()
            .filter(|a| a.psn == psn && a.cycle <= cycle)
            .copied()
            .collect();
        if at.is_empty() {
            self.fail(
                rep,
                "unasked_atomic",
                format!(
                    "NIC b sent an ATOMIC ACKNOWLEDGE psn {psn:#x} (cycle {cycle}) on QP {:#x}: no atomic was injected at that PSN before",
                    self.qpns[q]
                ),
            );
            return;
        }
        let arm = at
            .iter()
            .filter(|a| a.refuse.is_none())
            .map(|a| a.arm)
            .max();
        let Some(c) = at
            .iter()
            .find(|a| a.refuse.is_none() && Some(a.arm) == arm)
            .copied()
        else {
            let last = at[at.len() - 1];
            self.fail(
                rep,
                "refusable_atomic",
                format!(
                    "NIC b answered an atomic it must refuse ({}; the playground is {BUF} bytes at {:#x}, key {:#x}): ATOMIC ACKNOWLEDGE psn {psn:#x} orig {orig:#x} (cycle {cycle}) on QP {:#x} for {last:?}{}",
                    last.refuse.unwrap_or("?"),
                    self.pg_addr,
                    self.pg_key,
                    self.qpns[q],
                    if at.len() > 1 {
                        format!(" (nor may it execute the {} other atomics at that PSN)", at.len() - 1)
                    } else {
                        String::new()
                    }
                ),
            );
            return;
        };
        let o = (c.va - self.pg_addr) as usize;
        if self.overwritten(c.seq, o, 8).iter().any(|m| *m) {
            rep.atomic_values_unchecked += 1;
            return;
        }
        let now = u64::from_le_bytes(playground[o..o + 8].try_into().expect("8 bytes"));
        let want = atomic_result(c.op, orig, c.swap_add, c.compare);
        if now == want {
            rep.atomic_values_checked += 1;
        } else {
            self.fail(
                rep,
                "atomic_value",
                format!(
                    "NIC b's ATOMIC ACKNOWLEDGE psn {psn:#x} (cycle {cycle}) says the original was {orig:#x}: {} leaves {want:#x}, the playground holds {now:#x} at offset {o:#x} ({c:?})",
                    rnic_wire::opcode_name(c.op)
                ),
            );
        }
    }

    /// Why atomic `a` does not name what an atomic may change (on a QP
    /// with REMOTE_ATOMIC), or `None`: the playground's key, 8 aligned
    /// bytes inside it, no payload.
    fn atomic_refusal(&self, a: &AtomicReq) -> Option<&'static str> {
        let inside = a.va >= self.pg_addr
            && a.va
                .checked_add(8)
                .is_some_and(|end| end <= self.pg_addr + BUF as u64);
        if a.payload != 0 {
            Some("a payload")
        } else if a.rkey != self.pg_key {
            Some("not the playground's key")
        } else if !a.va.is_multiple_of(8) {
            Some("not 8-byte aligned")
        } else if !inside {
            Some("outside the playground")
        } else {
            None
        }
    }

    /// Request `seq` of QP `q` was answered (or is given up): it and
    /// every request injected before it are forgotten.
    fn settle(&mut self, q: usize, seq: u64) {
        let p = &mut self.pending[q];
        while p.front().is_some_and(|r| r.seq <= seq) {
            p.pop_front();
        }
    }

    /// Whether NIC b must refuse READ request `r` (a READ of 0 bytes names
    /// no memory: its key and va are not checked).
    fn refusable(&self, r: &ReadReq) -> bool {
        let inside = r.rkey == self.pg_key
            && r.va >= self.pg_addr
            && u128::from(r.va) + u128::from(r.len) <= u128::from(self.pg_addr) + BUF as u128;
        r.payload != 0 || r.len > 1 << 31 || (r.len != 0 && !inside)
    }

    /// Which of the `len` playground bytes from offset `base` a frame
    /// injected after request `seq` may have written.
    fn overwritten(&self, seq: u64, base: usize, len: usize) -> Vec<bool> {
        let mut mask = vec![false; len];
        for &(s, lo, hi) in &self.writes {
            if s > seq && lo < base + len && hi > base {
                for m in &mut mask[lo.max(base) - base..hi.min(base + len) - base] {
                    *m = true;
                }
            }
        }
        mask
    }

    /// Whether response `op` with `payload` is the one of request `r` (one
    /// NIC b may answer) at byte `off` of the answer.
    fn fit(&self, r: &ReadReq, off: usize, op: u8, payload: &[u8], playground: &[u8]) -> Fit {
        let (want_op, want_len) = next_response(r, off);
        if op != want_op || payload.len() != want_len {
            return Fit::Shape(want_op, want_len);
        }
        if want_len == 0 {
            return Fit::Yes; // a READ of 0 bytes: one empty ONLY, no memory
        }
        let base = (r.va - self.pg_addr) as usize + off;
        let want = &playground[base..base + want_len];
        let skip = self.overwritten(r.seq, base, want_len);
        match (0..want_len).find(|&i| !skip[i] && payload[i] != want[i]) {
            Some(i) => Fit::Byte(i),
            None => Fit::Yes,
        }
    }

    /// The attack QP was reset (and armed again, with REMOTE_ATOMIC if
    /// `atomic`): no WRITE message of it is in progress, its atomics'
    /// replay records are gone.
    fn rearmed(&mut self, atomic: bool) {
        self.firsts[1].clear();
        self.atomic_qp = atomic;
        self.arm += 1;
    }

    /// Checks `frames` (the world's window since the last call): every
    /// frame of NIC b decodes and carries no secret, every READ RESPONSE
    /// answers a request in order with the playground's bytes.
    fn inspect(&mut self, frames: &[WireFrame], playground: &[u8], rep: &mut FuzzReport) {
        for w in frames.iter().filter(|w| w.src == 1) {
            rep.b_frames_inspected += 1;
            if carries_secret(&w.data) {
                self.fail(
                    rep,
                    "secret",
                    format!(
                        "NIC b sent the secret region's pattern (cycle {}): {:02x?}",
                        w.cycle,
                        &w.data[..w.data.len().min(80)]
                    ),
                );
            }
            let f = match rnic_wire::decode(&w.data) {
                Ok(f) => f,
                Err(e) => {
                    self.fail(
                        rep,
                        "decode",
                        format!(
                            "NIC b sent a frame that does not decode (cycle {}): {e}",
                            w.cycle
                        ),
                    );
                    continue;
                }
            };
            let op = f.bth.opcode;
            // everything NIC b sends (ACKs, NAKs, READ responses, probe
            // replies) goes to NIC a, to one of the two QPs b's QPs are
            // connected to, with the addressing of the QP's context
            if f.eth.dst != self.peer_addr.mac
                || f.ip.dst != self.peer_addr.ip.octets()
                || !self.peers.contains(&f.bth.dest_qp)
            {
                self.fail(
                    rep,
                    "address",
                    format!(
                        "NIC b sent {} psn {:#x} (cycle {}) to MAC {:02x?}, IP {}, QP {:#x}: NIC a is {:02x?}, {}, its QPs {:#x} and {:#x}",
                        rnic_wire::opcode_name(op),
                        f.bth.psn,
                        w.cycle,
                        f.eth.dst,
                        std::net::Ipv4Addr::from(f.ip.dst),
                        f.bth.dest_qp,
                        self.peer_addr.mac,
                        self.peer_addr.ip,
                        self.peers[0],
                        self.peers[1]
                    ),
                );
            }
            if op == opcode::ATOMIC_ACKNOWLEDGE {
                self.atomic_ack(&f, w.cycle, playground, rep);
                continue;
            }
            if !(opcode::RDMA_READ_RESPONSE_FIRST..=opcode::RDMA_READ_RESPONSE_ONLY).contains(&op) {
                continue;
            }
            rep.read_responses += 1;
            let psn = f.bth.psn;
            let name = rnic_wire::opcode_name(op);
            if self.mp {
                self.fail(
                    rep,
                    "mp",
                    format!(
                        "NIC b answered a READ on an mp QP: {name} psn {psn:#x} cycle {}",
                        w.cycle
                    ),
                );
                continue;
            }
            let Some(q) = self.peers.iter().position(|&p| p == f.bth.dest_qp) else {
                continue; // (failed above: not a QP of NIC a's that b is connected to)
            };
            if op == opcode::RDMA_READ_RESPONSE_FIRST || op == opcode::RDMA_READ_RESPONSE_ONLY {
                if let Some(a) = self.answering[q].take() {
                    rep.reads_cut_short += 1;
                    self.settle(q, a.cands[0].seq);
                }
                // the requests at this PSN the packet fits (not one that
                // must be refused): all are candidates until a later
                // response tells them apart; the requests before the one
                // answered were dropped (a full READ job ring) or refused
                let cands: Vec<ReadReq> = self.pending[q]
                    .iter()
                    .filter(|r| {
                        r.psn == psn
                            && !self.refusable(r)
                            && self.fit(r, 0, op, &f.payload, playground) == Fit::Yes
                    })
                    .copied()
                    .collect();
                let (cands, refused) = if cands.is_empty() {
                    // none fits: the first request at the PSN, which the
                    // checks below fail (refused, shape, bytes)
                    let Some(req) = self.pending[q].iter().find(|r| r.psn == psn).copied() else {
                        self.fail(
                            rep,
                            "unasked",
                            format!(
                                "NIC b sent {name} psn {psn:#x} (cycle {}) on QP {:#x}: no READ request at that PSN waits (answered twice, out of order, or never asked)",
                                w.cycle, self.qpns[q]
                            ),
                        );
                        continue;
                    };
                    let refused = self.refusable(&req);
                    if refused {
                        self.fail(
                            rep,
                            "refusable",
                            format!(
                                "NIC b answered a READ it must refuse (the playground is {BUF} bytes at {:#x}, key {:#x}): {req:?}, QP {:#x}, cycle {}",
                                self.pg_addr, self.pg_key, self.qpns[q], w.cycle
                            ),
                        );
                    }
                    (vec![req], refused)
                } else {
                    (cands, false)
                };
                rep.reads_answered += 1;
                self.answering[q] = Some(Answer {
                    cands,
                    next_psn: psn,
                    off: 0,
                    refused,
                });
            }
            let Some(mut a) = self.answering[q].take() else {
                self.fail(
                    rep,
                    "orphan",
                    format!(
                        "NIC b sent {name} psn {psn:#x} (cycle {}) with no READ being answered",
                        w.cycle
                    ),
                );
                continue;
            };
            if a.next_psn != psn {
                self.fail(rep, "order", format!("NIC b sent {name} psn {psn:#x} (cycle {}), the answer to {:?} was at {:#x}", w.cycle, a.cands, a.next_psn));
                self.settle(q, a.cands[0].seq);
                continue;
            }
            if a.refused {
                a.next_psn = (psn + 1) & 0xff_ffff;
                self.answering[q] = Some(a);
                continue;
            }
            // narrow the candidates: first by shape, then by bytes
            let fits: Vec<(ReadReq, Fit)> = a
                .cands
                .iter()
                .map(|c| (*c, self.fit(c, a.off, op, &f.payload, playground)))
                .collect();
            let shaped: Vec<(ReadReq, Fit)> = fits
                .iter()
                .copied()
                .filter(|(_, x)| !matches!(x, Fit::Shape(..)))
                .collect();
            let Some(&(first, _)) = shaped.first() else {
                let (c, x) = fits[0];
                let Fit::Shape(want_op, want_len) = x else {
                    unreachable!("no candidate has the shape")
                };
                self.fail(
                    rep,
                    "shape",
                    format!(
                        "NIC b sent {name} psn {psn:#x} with {} bytes (cycle {}), {} with {want_len} bytes expected for {c:?} at offset {}{}",
                        f.payload.len(), w.cycle, rnic_wire::opcode_name(want_op), a.off,
                        if fits.len() > 1 {
                            format!(" (nor does it fit the {} other requests at that PSN: {:?})", fits.len() - 1, &a.cands[1..])
                        } else {
                            String::new()
                        }
                    ),
                );
                self.settle(q, c.seq);
                continue;
            };
            let good: Vec<ReadReq> = shaped
                .iter()
                .filter(|(_, x)| *x == Fit::Yes)
                .map(|(c, _)| *c)
                .collect();
            a.cands = if good.is_empty() {
                let Fit::Byte(i) = shaped[0].1 else {
                    unreachable!("a wrong byte")
                };
                let base = (first.va - self.pg_addr) as usize + a.off;
                self.fail(
                    rep,
                    "bytes",
                    format!(
                        "NIC b's {name} psn {psn:#x} (cycle {}) for {first:?}: byte {} of the answer is {:#04x}, the playground holds {:#04x}",
                        w.cycle, a.off + i, f.payload[i], playground[base + i]
                    ),
                );
                shaped.iter().map(|(c, _)| *c).collect()
            } else {
                good
            };
            // the bytes compared, counted for the first candidate left
            let n = f.payload.len();
            if n > 0 {
                let c = a.cands[0];
                let skip = self.overwritten(c.seq, (c.va - self.pg_addr) as usize + a.off, n);
                let unchecked = skip.iter().filter(|s| **s).count() as u64;
                rep.read_bytes_unchecked += unchecked;
                rep.read_bytes_checked += n as u64 - unchecked;
            }
            a.off += n;
            a.next_psn = (psn + 1) & 0xff_ffff;
            if a.off < a.cands[0].len as usize {
                self.answering[q] = Some(a);
            } else {
                // answered whole: the first candidate left is the one
                self.settle(q, a.cands[0].seq);
            }
        }
        // forget the writes no remembered request can be overtaken by
        let oldest = self
            .pending
            .iter()
            .filter_map(|p| p.front().map(|r| r.seq))
            .chain(self.answering.iter().flatten().map(|a| a.cands[0].seq))
            .chain(self.atomics.iter().filter_map(|a| a.front().map(|r| r.seq)))
            .min()
            .unwrap_or(self.seq);
        self.writes.retain(|w| w.0 > oldest);
    }
}

fn poll_one<D: Device>(
    dev: &D,
    cq: &rnic_verbs::CompletionQueue<D>,
    budget: u64,
) -> Result<Option<WorkCompletion>> {
    let start = dev.now();
    let mut wc = [WorkCompletion::default(); 1];
    while dev.now() - start < budget {
        if cq.poll(&mut wc)? == 1 {
            return Ok(Some(wc[0]));
        }
        dev.idle();
    }
    Ok(None)
}

/// Runs a campaign on a fresh simulated pair; `progress` gets the attack
/// frames sent so far. Stops early once the legitimate QP is broken.
pub fn run(cfg: &FuzzConfig, progress: &mut dyn FnMut(u64)) -> Result<FuzzReport> {
    if cfg.frames == 0 || cfg.burst == 0 || cfg.watchdog == 0 {
        return Err(Error::Config(
            "--frames, the burst and the watchdog must be positive".into(),
        ));
    }
    if let Some((b, why)) = cfg.brk.and_then(|b| Some((b, b.caught_elsewhere()?))) {
        return Err(Error::Config(format!("--break {b} {why}")));
    }
    if let Some(b) = cfg.brk.filter(|b| *b != Break::NoMrCheck) {
        return Err(Error::Config(format!(
            "--break {b} breaks the completion ordering, which the campaign does not check: the torture test (`rnic torture --break {b}`) catches it"
        )));
    }
    let pair = sim::pair(&SimOpts {
        data_w: cfg.data_w,
        knobs: cfg.knobs,
        seed: cfg.seed,
        pcap_window: WINDOW,
        ..SimOpts::default()
    })?;
    let (a, b, world) = (&pair.a, &pair.b, &pair.world);
    if let Some(brk) = cfg.brk {
        b.nic().debug_switches().set(brk, true)?;
    }
    // a build that executes atomics (id.caps bit 9) takes REMOTE_ATOMIC on
    // the QPs and the playground; any other refuses it
    let atomics = a.query_device()?.atomic_cap == AtomicCap::Hca
        && b.query_device()?.atomic_cap == AtomicCap::Hca;
    let atomic_access = if atomics {
        AccessFlags::REMOTE_ATOMIC
    } else {
        AccessFlags::empty()
    };
    let opts = ConnOpts {
        mtu: Mtu::Mtu1024,
        sq_depth: 4,
        rq_depth: 4,
        retry: conn::Retry::default(),
        spray_log: 0,
        qp_access: AccessFlags::REMOTE_WRITE | AccessFlags::REMOTE_READ | atomic_access,
        qp_type: if cfg.mp {
            rnic_verbs::QpType::Mp
        } else {
            rnic_verbs::QpType::Rc
        },
        ..ConnOpts::default()
    };
    let conns = conn::connect(a, pair.addrs[0], b, pair.addrs[1], 2, &opts, 16, cfg.seed)?;
    let mut pairs = conns.pairs.into_iter();
    let mut qp = pairs.next().expect("the legitimate pair");
    let mut atk = pairs.next().expect("the attack pair");
    let atk_peer = conn::Remote {
        qpn: atk.send.qp_num(),
        psn: 0,
        addr: pair.addrs[0],
    };
    let src = a.alloc_dma(BUF)?;
    let src_mr = a.reg_mr(&conns.pd_a, &src, 0, BUF, AccessFlags::LOCAL_WRITE)?;
    let dst = b.alloc_dma(BUF)?;
    let dst_mr = b.reg_mr(
        &conns.pd_b,
        &dst,
        0,
        BUF,
        AccessFlags::LOCAL_WRITE | AccessFlags::REMOTE_WRITE,
    )?;
    // a region without REMOTE_WRITE or REMOTE_READ whose key the attacker
    // knows, filled with the secret pattern
    let secret = secret_pattern();
    let canary = b.alloc_dma(BUF)?;
    canary.write(0, &secret);
    let canary_mr = b.reg_mr(&conns.pd_b, &canary, 0, BUF, AccessFlags::LOCAL_WRITE)?;
    // where the attacker may legitimately write and read (RoCE cannot
    // tell it apart), filled with a pattern so that READs carry something
    let playground = b.alloc_dma(BUF)?;
    scratch_fill(&playground, cfg.seed);
    let playground_mr = b.reg_mr(
        &conns.pd_b,
        &playground,
        0,
        BUF,
        AccessFlags::LOCAL_WRITE
            | AccessFlags::REMOTE_WRITE
            | AccessFlags::REMOTE_READ
            | atomic_access,
    )?;
    // a region that allows remote writes and reads but not atomics, which
    // only atomics name: its pattern must stay
    let noatom_bytes = {
        let mut v = vec![0u8; BUF];
        pattern::fill(pattern::key(cfg.seed, 2, 0, 0), &mut v);
        v
    };
    let noatom = b.alloc_dma(BUF)?;
    noatom.write(0, &noatom_bytes);
    let noatom_mr = b.reg_mr(
        &conns.pd_b,
        &noatom,
        0,
        BUF,
        AccessFlags::LOCAL_WRITE | AccessFlags::REMOTE_WRITE | AccessFlags::REMOTE_READ,
    )?;

    let mut r = ChaCha8Rng::seed_from_u64(cfg.seed);
    let mut t = Target {
        legit_qpn: qp.recv.qp_num(),
        legit_epsn: 0,
        attack_qpn: atk.recv.qp_num(),
        attack_epsn: 0,
        keys: [
            (playground_mr.rkey(), playground_mr.addr()),
            (canary_mr.rkey(), canary_mr.addr()),
        ],
        noatom: (noatom_mr.rkey(), noatom_mr.addr()),
        mp: cfg.mp,
    };
    let mut rep = FuzzReport {
        seed: cfg.seed,
        data_w: cfg.data_w,
        transport: if cfg.mp { "mp" } else { "rc" }.into(),
        atomics_served: atomics,
        ..FuzzReport::default()
    };
    let mut insp = Inspector {
        qpns: [t.legit_qpn, t.attack_qpn],
        peers: [qp.send.qp_num(), atk.send.qp_num()],
        peer_addr: pair.addrs[0],
        pg_key: playground_mr.rkey(),
        pg_addr: playground_mr.addr(),
        mp: cfg.mp,
        pending: Default::default(),
        answering: Default::default(),
        atomics: Default::default(),
        atomic_qp: atomics,
        arm: 0,
        now: 0,
        writes: Vec::new(),
        recent_writes: Vec::new(),
        looks: VecDeque::new(),
        last_pg: None,
        firsts: Default::default(),
        seq: 0,
        reported: BTreeMap::new(),
    };
    for c in ReadCase::ALL {
        rep.read_cases.insert(c.name().into(), 0);
    }
    for c in AtomicCase::ALL {
        rep.atomic_cases.insert(c.name().into(), 0);
    }
    let peek = |o: usize| {
        u64::from_le_bytes(
            playground
                .to_vec(o, 8)
                .try_into()
                .expect("8 bytes of the playground"),
        )
    };
    let mut last_atomic = None;
    // NIC b's frames since the last look, checked
    let look = |insp: &mut Inspector, rep: &mut FuzzReport| {
        let w = world.window();
        world.clear_window();
        if w.len() >= WINDOW {
            insp.fail(
                rep,
                "window",
                format!(
                    "{} frames on the wire since the last look: the window may have lost some",
                    w.len()
                ),
            );
        }
        let pg = playground.to_vec(0, BUF);
        insp.changes(&pg, rep);
        if w.iter().any(|f| f.src == 1) {
            insp.inspect(&w, &pg, rep);
        }
    };
    let start = b.device().now();
    let mut scratch = Vec::new();
    'campaign: while rep.frames < cfg.frames {
        for _ in 0..cfg.burst {
            if rep.frames >= cfg.frames {
                break;
            }
            t.legit_epsn = qp.recv.status()?.rq_psn_now;
            let st = atk.recv.status()?;
            if st.state != QpState::Rtr && st.state != QpState::Rts {
                // a NAK moved the attack QP to ERR: back to RTR
                if let Err(e) = atk.recv.modify(
                    &rnic_verbs::QpAttr {
                        qp_state: QpState::Reset,
                        ..Default::default()
                    },
                    rnic_verbs::QpAttrMask::STATE,
                ) {
                    // the transport moved it back to ERR after the host's
                    // RESET: a NAK of a frame checked before the RESET
                    rep.failures.push(format!(
                        "after {} frames (cycle {}) the attack QP, found in ERR, would not stay in RESET: {e}",
                        rep.frames,
                        b.device().now()
                    ));
                    break 'campaign;
                }
                let peer = conn::Remote {
                    psn: r.gen::<u32>() & 0xff_ffff,
                    ..atk_peer
                };
                // a quarter of the time without REMOTE_ATOMIC: the QP's
                // own refusal of atomics
                let atomic = atomics && r.gen_range(0..4) != 0;
                let o = ConnOpts {
                    qp_access: if atomic {
                        opts.qp_access
                    } else {
                        opts.qp_access - AccessFlags::REMOTE_ATOMIC
                    },
                    ..opts
                };
                conn::bring_up(&mut atk.recv, &o, &peer, 0)?;
                rep.attack_qp_rearms += 1;
                insp.rearmed(atomic);
            }
            t.attack_epsn = atk.recv.status()?.rq_psn_now;
            // an eighth deliberate READ cases, an eighth deliberate
            // atomics, the rest random frames
            let (frames, bad) = match r.gen_range(0..8) {
                0 if cfg.frames - rep.frames >= 2 => {
                    let (fs, case) = read_attack(&mut r, &pair.addrs, &t);
                    *rep.read_cases.entry(case.name().into()).or_default() += 1;
                    (fs, false)
                }
                1 if cfg.frames - rep.frames >= 2 => {
                    let (fs, case) =
                        atomic_attack(&mut r, &pair.addrs, &t, &peek, &mut last_atomic);
                    *rep.atomic_cases.entry(case.name().into()).or_default() += 1;
                    (fs, false)
                }
                _ => {
                    let (f, bad) = attack(&mut r, &pair.addrs, &t);
                    (vec![f], bad)
                }
            };
            for f in &frames {
                while !world.inject_frame(1, f, false) {
                    world.run(2000); // the MAC's queue is full: let the NIC drain
                }
                insp.now = b.device().now();
                insp.injected(f);
                rep.frames += 1;
                rep.atomic_frames += u64::from(f.get(BTH_OFFSET).is_some_and(|&op| is_atomic(op)));
            }
            rep.bad_icrc_frames += u64::from(bad);
        }
        progress(rep.frames);
        world.run(3000);
        look(&mut insp, &mut rep);
        let st = qp.recv.status()?.state;
        if st != QpState::Rts {
            rep.failures.push(format!(
                "after {} frames the legitimate QP is in {st:?}",
                rep.frames
            ));
            break;
        }
        // one legitimate message, every byte checked at its CQE
        let msg = rep.messages + 1;
        let len = r.gen_range(1..3000usize);
        scratch.resize(len, 0);
        pattern::fill(pattern::key(cfg.seed, 0, msg, 0), &mut scratch);
        src.write(0, &scratch);
        qp.recv.post_recv(&RecvWr {
            wr_id: msg,
            sg_list: &[],
        })?;
        qp.send.post_send(&SendWr {
            wr_id: msg,
            opcode: WrOpcode::RdmaWriteWithImm,
            send_flags: SendFlags::SIGNALED,
            sg_list: &[src_mr.sge(0, len as u32)?],
            imm_data: Some((msg as u32).to_be()),
            rdma: Some(dst_mr.rdma_info(0)?),
        })?;
        for (side, dev, cq) in [
            ("receive", b.device(), &conns.cq_b),
            ("send", a.device(), &conns.cq_a),
        ] {
            match poll_one(dev, cq, cfg.watchdog)? {
                None => {
                    rep.failures.push(format!(
                        "message {msg}: no {side} completion within {} cycles",
                        cfg.watchdog
                    ));
                    break 'campaign;
                }
                Some(wc) if wc.status != WcStatus::Success || wc.wr_id != msg => {
                    rep.failures
                        .push(format!("message {msg}: {side} completion {wc:?}"));
                    break 'campaign;
                }
                Some(_) => {}
            }
        }
        if dst.to_vec(0, len) != scratch {
            rep.failures
                .push(format!("message {msg}: the received bytes differ"));
        }
        rep.messages = msg;
    }
    rep.cycles = b.device().now() - start;

    let faults = b.device().iommu_faults();
    if !faults.is_empty() {
        rep.failures.push(format!(
            "{} DMA accesses outside the mapped buffers; first {:?}",
            faults.len(),
            faults[0]
        ));
    }
    let errors = b.device().model_errors();
    if !errors.is_empty() {
        rep.failures.push(format!(
            "{} malformed TLPs; first {:?}",
            errors.len(),
            errors[0]
        ));
    }
    if canary.to_vec(0, BUF) != secret {
        rep.failures.push(
            "a region registered without REMOTE_WRITE (nor REMOTE_READ, nor REMOTE_ATOMIC) was written"
                .into(),
        );
    }
    let noatom_now = noatom.to_vec(0, BUF);
    if noatom_now != noatom_bytes {
        let n = noatom_now
            .iter()
            .zip(&noatom_bytes)
            .filter(|(x, y)| x != y)
            .count();
        rep.failures.push(format!(
            "the region registered without REMOTE_ATOMIC (REMOTE_WRITE and REMOTE_READ, named by atomics only) was written: {n} bytes changed"
        ));
    }
    // (reading the counters takes cycles, in which b may send: again until
    // what was inspected and b's count agree)
    for _ in 0..4 {
        world.drain(1_000_000);
        look(&mut insp, &mut rep);
        crate::torture::add_port_counters(&mut rep.counters, "b", b)?;
        crate::torture::add_port_counters(&mut rep.counters, "a", a)?;
        for (side, ctx) in [("b", b), ("a", a)] {
            let pc = ctx.query_port_counters()?;
            rep.counters
                .insert(format!("{side}.rx_atomic"), u64::from(pc.rx_atomic));
            rep.counters.insert(
                format!("{side}.rx_atomic_replay"),
                u64::from(pc.rx_atomic_replay),
            );
        }
        if rep.counters.get("b.tx_frames") == Some(&rep.b_frames_inspected) {
            break;
        }
    }
    rep.reads_cut_short += insp.answering.iter().flatten().count() as u64;
    for (k, n) in &insp.reported {
        if *n > 3 {
            rep.failures
                .push(format!("... {} more failures of kind {k}", n - 3));
        }
    }
    let c = |k: &str| rep.counters.get(k).copied().unwrap_or(0);
    if rep.b_frames_inspected != c("b.tx_frames") {
        rep.failures.push(format!(
            "NIC b sent {} frames, {} were inspected",
            c("b.tx_frames"),
            rep.b_frames_inspected
        ));
    }
    // every frame that reached b is counted: the attack, and what a sent
    let arrived = rep.frames + c("a.tx_frames");
    if c("b.rx_frames") != arrived {
        rep.failures.push(format!(
            "NIC b counted {} frames, {arrived} arrived: frames lost without a count",
            c("b.rx_frames")
        ));
    }
    if c("b.rx_drop_icrc") + c("b.rx_drop_malformed") < rep.bad_icrc_frames {
        rep.failures.push(format!(
            "{} frames had a bad ICRC, {} were dropped for ICRC or malformed headers",
            rep.bad_icrc_frames,
            c("b.rx_drop_icrc") + c("b.rx_drop_malformed")
        ));
    }
    // every ATOMIC ACKNOWLEDGE answers an atomic executed or replayed (an
    // answer may be lost to a reset of its QP, never made up); none on a
    // build or a transport without atomics
    let atomics_done = c("b.rx_atomic") + c("b.rx_atomic_replay");
    if rep.atomic_acks > atomics_done {
        rep.failures.push(format!(
            "NIC b sent {} ATOMIC ACKNOWLEDGEs, it counted {} atomics executed and {} replayed",
            rep.atomic_acks,
            c("b.rx_atomic"),
            c("b.rx_atomic_replay")
        ));
    }
    if (cfg.mp || !atomics) && atomics_done != 0 {
        rep.failures.push(format!(
            "NIC b executed {} atomics and replayed {} ({}): it must execute none",
            c("b.rx_atomic"),
            c("b.rx_atomic_replay"),
            if cfg.mp {
                "mp QPs"
            } else {
                "a build without atomics"
            }
        ));
    }
    if c("b.rx_drop_guard") != 0 {
        rep.failures.push(format!(
            "the MR re-check refused {} payload writes the transport had let through",
            c("b.rx_drop_guard")
        ));
    }
    Ok(rep)
}

#[cfg(test)]
mod tests {
    //! The checks of NIC b's READ responses, on hand-made frames.

    use super::*;

    const PG: u64 = 0x7f00_0000_0000;
    const KEY: u32 = 0x201;
    const SECRET_KEY: u32 = 0x301;

    fn inspector() -> Inspector {
        Inspector {
            qpns: [0x10, 0x11],
            peers: [0x20, 0x21],
            peer_addr: conn::DEFAULT_ADDRS[0],
            pg_key: KEY,
            pg_addr: PG,
            mp: false,
            pending: Default::default(),
            answering: Default::default(),
            atomics: Default::default(),
            atomic_qp: true,
            arm: 0,
            now: 0,
            writes: Vec::new(),
            recent_writes: Vec::new(),
            looks: VecDeque::new(),
            last_pg: None,
            firsts: Default::default(),
            seq: 0,
            reported: BTreeMap::new(),
        }
    }

    fn playground() -> Vec<u8> {
        let mut v = vec![0u8; BUF];
        pattern::fill(pattern::key(7, 1, 0, 0), &mut v);
        v
    }

    /// A READ request of the attack QP, injected.
    fn request(insp: &mut Inspector, psn: u32, off: usize, len: u32, rkey: u32) {
        let reth = Reth {
            va: PG + off as u64,
            rkey,
            dma_len: len,
        };
        let f = frame(
            &conn::DEFAULT_ADDRS,
            opcode::RDMA_READ_REQUEST,
            0x11,
            psn,
            reth,
            Vec::new(),
        );
        insp.injected(&f);
    }

    /// One response of NIC b to NIC a's attack QP.
    fn response(op: u8, psn: u32, payload: &[u8]) -> WireFrame {
        let aeth = matches!(
            op,
            opcode::RDMA_READ_RESPONSE_FIRST
                | opcode::RDMA_READ_RESPONSE_LAST
                | opcode::RDMA_READ_RESPONSE_ONLY
        );
        let a = conn::DEFAULT_ADDRS[0];
        let data = RoceFrame {
            eth: Eth {
                dst: a.mac,
                src: conn::DEFAULT_ADDRS[1].mac,
            },
            ip: Ipv4 {
                src: conn::DEFAULT_ADDRS[1].ip.octets(),
                dst: a.ip.octets(),
                ..Ipv4::default()
            },
            bth: Bth {
                opcode: op,
                dest_qp: 0x21,
                psn,
                ..Bth::default()
            },
            aeth: aeth.then_some(Aeth {
                syndrome: 0x1f,
                msn: 1,
            }),
            payload: payload.to_vec(),
            ..RoceFrame::default()
        }
        .encode();
        wire(data)
    }

    /// A frame NIC b sent.
    fn wire(data: Vec<u8>) -> WireFrame {
        WireFrame {
            cycle: 0,
            src: 1,
            data,
            fate: Default::default(),
        }
    }

    /// NIC b's answer to a READ of `len` bytes at playground offset `off`
    /// from `psn`, with the bytes of `pg`.
    fn answer(pg: &[u8], psn: u32, off: usize, len: usize) -> Vec<WireFrame> {
        let mut out = Vec::new();
        let mut at = 0;
        loop {
            let (op, n) = next_response(
                &ReadReq {
                    psn,
                    va: 0,
                    rkey: 0,
                    len: len as u32,
                    payload: 0,
                    seq: 0,
                },
                at,
            );
            out.push(response(
                op,
                psn + out.len() as u32,
                &pg[off + at..off + at + n],
            ));
            at += n;
            if at >= len {
                return out;
            }
        }
    }

    fn check(insp: &mut Inspector, frames: &[WireFrame], pg: &[u8]) -> FuzzReport {
        let mut rep = FuzzReport::default();
        insp.inspect(frames, pg, &mut rep);
        rep
    }

    /// Two requests at one PSN with the same first packets (the same
    /// address, lengths 5,266 and 2,605: FIRST and MIDDLE alike): either
    /// may be the one answered, in either order of injection, and one
    /// answer per request is checked whole.
    #[test]
    fn two_requests_at_one_psn_are_told_apart_late() {
        let pg = playground();
        for (long_first, answered_long) in
            [(true, false), (false, true), (true, true), (false, false)]
        {
            let mut insp = inspector();
            let lens = if long_first {
                [5266, 2605]
            } else {
                [2605, 5266]
            };
            for len in lens {
                request(&mut insp, 0x4f0d6f, 100, len, KEY);
            }
            let len = if answered_long { 5266 } else { 2605 };
            let rep = check(&mut insp, &answer(&pg, 0x4f0d6f, 100, len), &pg);
            assert!(
                !rep.failed(),
                "{long_first} {answered_long}: {:?}",
                rep.failures
            );
            assert_eq!(rep.reads_answered, 1);
            assert_eq!(rep.read_bytes_checked, len as u64);
            assert!(insp.answering[1].is_none());
            // the request answered and those before it are settled: the
            // later one (if the answer was the first) may still be answered
            let left = usize::from(lens[0] == len as u32);
            assert_eq!(insp.pending[1].len(), left, "{long_first} {answered_long}");
            if left == 1 {
                let other = lens[1] as usize;
                let rep = check(&mut insp, &answer(&pg, 0x4f0d6f, 100, other), &pg);
                assert!(!rep.failed(), "{:?}", rep.failures);
                assert!(insp.pending[1].is_empty());
            }
            // nothing is left to answer twice
            let rep = check(&mut insp, &answer(&pg, 0x4f0d6f, 100, len), &pg);
            assert!(
                rep.failures[0].contains("no READ request at that PSN waits"),
                "{:?}",
                rep.failures
            );
        }
    }

    /// The answers' bytes tell requests at one PSN apart from the first
    /// packet on; an answer split over two looks is narrowed across them.
    #[test]
    fn requests_at_one_psn_with_other_bytes() {
        let pg = playground();
        let mut insp = inspector();
        request(&mut insp, 9, 0, 3000, KEY);
        request(&mut insp, 9, 5000, 3000, KEY);
        let a = answer(&pg, 9, 5000, 3000);
        let rep = check(&mut insp, &a[..2], &pg);
        assert!(!rep.failed(), "{:?}", rep.failures);
        assert_eq!(insp.answering[1].as_ref().map(|a| a.cands.len()), Some(1));
        let rep = check(&mut insp, &a[2..], &pg);
        assert!(!rep.failed(), "{:?}", rep.failures);
        assert!(insp.pending[1].is_empty());
    }

    /// Every frame of NIC b goes to NIC a's addresses and a connected QP:
    /// an ACK with the addressing of another QP's context (IP 0.0.0.0,
    /// seen from the RTL of 223af43) or to an unknown QP fails.
    #[test]
    fn misaddressed_frames_fail() {
        let pg = playground();
        let mut ok =
            rnic_wire::decode(&response(opcode::RDMA_READ_RESPONSE_ONLY, 5, &[]).data).unwrap();
        ok.bth.opcode = opcode::ACKNOWLEDGE;
        let rep = check(&mut inspector(), &[wire(ok.encode())], &pg);
        assert!(!rep.failed(), "{:?}", rep.failures);
        let mut no_ip = ok.clone();
        no_ip.ip.dst = [0; 4];
        let mut other_qp = ok.clone();
        other_qp.bth.dest_qp = 0x37;
        for f in [no_ip, other_qp] {
            let rep = check(&mut inspector(), &[wire(f.encode())], &pg);
            assert!(
                rep.failures.len() == 1 && rep.failures[0].contains("NIC a is"),
                "{:?}",
                rep.failures
            );
        }
    }

    /// The checks still fail: an answer that fits no request at its PSN
    /// (a LAST too short for both, wrong bytes), one at a PSN nobody
    /// asked for, the answer to a request that must be refused, the
    /// secret's pattern, responses out of order.
    #[test]
    fn wrong_answers_fail() {
        let pg = playground();
        let fresh = || {
            let mut i = inspector();
            request(&mut i, 0x100, 100, 5266, KEY);
            request(&mut i, 0x100, 100, 2605, KEY);
            i
        };
        // a LAST of 556 bytes: neither 2,605 nor 5,266
        let mut a = answer(&pg, 0x100, 100, 2604);
        let rep = check(&mut fresh(), &a, &pg);
        assert!(
            rep.failures[0].contains("expected for"),
            "{:?}",
            rep.failures
        );
        assert!(
            rep.failures[0].contains("nor does it fit the 1 other"),
            "{:?}",
            rep.failures
        );
        // a wrong byte in the MIDDLE
        a = answer(&pg, 0x100, 100, 2605);
        let mut wrong = rnic_wire::decode(&a[1].data).unwrap();
        wrong.payload[17] ^= 1;
        a[1].data = wrong.encode();
        let rep = check(&mut fresh(), &a, &pg);
        assert_eq!(rep.failures.len(), 1, "{:?}", rep.failures);
        assert!(
            rep.failures[0].contains("byte 1041 of the answer"),
            "{:?}",
            rep.failures
        );
        // an answer at another PSN
        let rep = check(&mut fresh(), &answer(&pg, 0x101, 100, 2605), &pg);
        assert!(
            rep.failures[0].contains("no READ request at that PSN waits"),
            "{:?}",
            rep.failures
        );
        // responses out of order
        a = answer(&pg, 0x100, 100, 2605);
        a.swap(1, 2);
        let rep = check(&mut fresh(), &a, &pg);
        assert!(rep.failed(), "{:?}", rep.failures);
        // the answer to a READ with the secret region's key, carrying its pattern
        let mut insp = inspector();
        request(&mut insp, 0x200, 0, 64, SECRET_KEY);
        let secret = secret_pattern();
        let rep = check(
            &mut insp,
            &[response(
                opcode::RDMA_READ_RESPONSE_ONLY,
                0x200,
                &secret[..64],
            )],
            &pg,
        );
        assert!(
            rep.failures
                .iter()
                .any(|f| f.contains("answered a READ it must refuse")),
            "{:?}",
            rep.failures
        );
        assert!(
            rep.failures
                .iter()
                .any(|f| f.contains("the secret region's pattern")),
            "{:?}",
            rep.failures
        );
    }

    /// An atomic of QP `qpn` (0x11: the attack QP, 0x10: the legitimate
    /// one), injected.
    #[allow(clippy::too_many_arguments)]
    fn atomic(
        insp: &mut Inspector,
        op: u8,
        qpn: u32,
        psn: u32,
        va: u64,
        rkey: u32,
        swap_add: u64,
        compare: u64,
        payload: usize,
    ) -> Vec<u8> {
        let ae = AtomicEth {
            va,
            rkey,
            swap_add,
            compare,
        };
        let f = atomic_frame(&conn::DEFAULT_ADDRS, op, qpn, psn, ae, vec![0x5a; payload]);
        insp.injected(&f);
        f
    }

    /// NIC b's ATOMIC ACKNOWLEDGE to NIC a's attack QP.
    fn atomic_ack(psn: u32, orig: u64, syndrome: u8) -> WireFrame {
        let a = conn::DEFAULT_ADDRS[0];
        wire(
            RoceFrame {
                eth: Eth {
                    dst: a.mac,
                    src: conn::DEFAULT_ADDRS[1].mac,
                },
                ip: Ipv4 {
                    src: conn::DEFAULT_ADDRS[1].ip.octets(),
                    dst: a.ip.octets(),
                    ..Ipv4::default()
                },
                bth: Bth {
                    opcode: opcode::ATOMIC_ACKNOWLEDGE,
                    dest_qp: 0x21,
                    psn,
                    ..Bth::default()
                },
                aeth: Some(Aeth { syndrome, msn: 1 }),
                atomicacketh: Some(AtomicAckEth { orig }),
                ..RoceFrame::default()
            }
            .encode(),
        )
    }

    fn put(pg: &mut [u8], off: usize, v: u64) {
        pg[off..off + 8].copy_from_slice(&v.to_le_bytes());
    }

    /// An ATOMIC ACKNOWLEDGE for an atomic NIC b may execute passes when the
    /// playground holds what the atomic made of the original value (a
    /// FETCH ADD's sum; a COMPARE SWAP's swap, or the original where the
    /// compare differed); a repeat of the atomic answered from its record
    /// again (with the first execution's value) passes too, and one whose
    /// value disagrees with the playground fails.
    #[test]
    fn atomic_acks_of_executed_atomics_are_checked_against_the_playground() {
        let mut pg = playground();
        let mut insp = inspector();
        let orig = 0x1122_3344_5566_7788u64;
        let fa = atomic(&mut insp, opcode::FETCH_ADD, 0x11, 7, PG + 64, KEY, 5, 0, 0);
        put(&mut pg, 64, orig + 5);
        atomic(
            &mut insp,
            opcode::COMPARE_SWAP,
            0x11,
            8,
            PG + 128,
            KEY,
            0xdead,
            orig,
            0,
        );
        put(&mut pg, 128, 0xdead);
        atomic(
            &mut insp,
            opcode::COMPARE_SWAP,
            0x11,
            9,
            PG + 256,
            KEY,
            0xdead,
            orig ^ 1,
            0,
        );
        put(&mut pg, 256, orig);
        let rep = check(
            &mut insp,
            &[
                atomic_ack(7, orig, 0x1f),
                atomic_ack(8, orig, 0x1f),
                atomic_ack(9, orig, 0x1f),
            ],
            &pg,
        );
        assert!(!rep.failed(), "{:?}", rep.failures);
        assert_eq!((rep.atomic_acks, rep.atomic_values_checked), (3, 3));
        // the FETCH ADD again, byte for byte: its record answers (the
        // repeat itself may have been executed, as far as the checks know
        // what the NIC took for a duplicate: its bytes are not compared)
        insp.injected(&fa);
        let rep = check(&mut insp, &[atomic_ack(7, orig, 0x1f)], &pg);
        assert!(!rep.failed(), "{:?}", rep.failures);
        assert_eq!(
            (rep.atomic_values_checked, rep.atomic_values_unchecked),
            (0, 1)
        );
        // an original value the playground disagrees with
        let rep = check(&mut insp, &[atomic_ack(8, orig + 1, 0x1f)], &pg);
        assert!(
            rep.failures.len() == 1 && rep.failures[0].contains("the playground holds 0xdead"),
            "{:?}",
            rep.failures
        );
        // a NAK syndrome in an ATOMIC ACKNOWLEDGE
        let rep = check(&mut insp, &[atomic_ack(7, orig, 0x62)], &pg);
        assert!(
            rep.failures.iter().any(|f| f.contains("not an ACK")),
            "{:?}",
            rep.failures
        );
    }

    /// An atomic's 8 bytes may be written: a READ injected before it does
    /// not compare them, nor does an ATOMIC ACKNOWLEDGE whose atomic a later
    /// frame may have overwritten (counted as not compared). An atomic
    /// rnic-wire refuses (a pad count beyond its payload, ICRC recomputed)
    /// is read raw and accounted alike.
    #[test]
    fn atomic_writes_are_accounted_raw_headers_too() {
        let mut pg = playground();
        let mut insp = inspector();
        request(&mut insp, 3, 0, 64, KEY);
        let mut f = atomic_frame(
            &conn::DEFAULT_ADDRS,
            opcode::FETCH_ADD,
            0x11,
            4,
            AtomicEth {
                va: PG + 16,
                rkey: KEY,
                swap_add: 1,
                compare: 0,
            },
            Vec::new(),
        );
        f[BTH_OFFSET + 1] |= 3 << 4;
        let end = f.len() - 4;
        let c = rnic_wire::icrc(&f, end);
        f[end..].copy_from_slice(&c.to_le_bytes());
        assert!(rnic_wire::decode(&f).is_err());
        insp.injected(&f);
        assert_eq!(insp.writes.last(), Some(&(2, 16, 24)));
        // the READ's answer carries the bytes before the atomic, the
        // playground those after it
        let answer = answer(&pg, 3, 0, 64);
        let before = u64::from_le_bytes(pg[16..24].try_into().unwrap());
        put(&mut pg, 16, before.wrapping_add(1));
        let rep = check(&mut insp, &answer, &pg);
        assert!(!rep.failed(), "{:?}", rep.failures);
        assert_eq!((rep.read_bytes_checked, rep.read_bytes_unchecked), (56, 8));
        let rep = check(&mut insp, &[atomic_ack(4, before, 0x1f)], &pg);
        assert!(!rep.failed(), "{:?}", rep.failures);
        assert_eq!(rep.atomic_values_checked, 1);
        // a WRITE over those bytes after the atomic: not compared
        let w = frame(
            &conn::DEFAULT_ADDRS,
            opcode::RDMA_WRITE_ONLY,
            0x11,
            5,
            Reth {
                va: PG + 20,
                rkey: KEY,
                dma_len: 2,
            },
            vec![0, 0],
        );
        insp.injected(&w);
        let rep = check(&mut insp, &[atomic_ack(4, 0xbad, 0x1f)], &pg);
        assert!(!rep.failed(), "{:?}", rep.failures);
        assert_eq!(
            (rep.atomic_values_checked, rep.atomic_values_unchecked),
            (0, 1)
        );
    }

    /// An ATOMIC ACKNOWLEDGE fails for an atomic NIC b must refuse: the
    /// secret region's key, a bad key, misaligned, outside the playground,
    /// with a payload, on the legitimate QP (an old PSN), on the attack QP
    /// armed without REMOTE_ATOMIC, on an mp QP; and at a PSN no atomic
    /// was injected at. The orig of the secret region's pattern is seen as
    /// a leak too.
    #[test]
    fn answers_to_atomics_that_must_be_refused_fail() {
        let pg = playground();
        type Case = (&'static str, u8, u32, u64, u32, usize);
        let cases: [Case; 6] = [
            (
                "not the playground's key",
                opcode::FETCH_ADD,
                0x11,
                PG + 8,
                SECRET_KEY,
                0,
            ),
            (
                "not the playground's key",
                opcode::COMPARE_SWAP,
                0x11,
                PG + 8,
                KEY ^ 0x100,
                0,
            ),
            (
                "not 8-byte aligned",
                opcode::FETCH_ADD,
                0x11,
                PG + 12,
                KEY,
                0,
            ),
            (
                "outside the playground",
                opcode::FETCH_ADD,
                0x11,
                PG + BUF as u64,
                KEY,
                0,
            ),
            (
                "outside the playground",
                opcode::COMPARE_SWAP,
                0x11,
                PG - 8,
                KEY,
                0,
            ),
            ("a payload", opcode::FETCH_ADD, 0x11, PG + 8, KEY, 8),
        ];
        for (why, op, qpn, va, rkey, payload) in cases {
            let mut insp = inspector();
            atomic(&mut insp, op, qpn, 0x40, va, rkey, 1, 0, payload);
            let rep = check(&mut insp, &[atomic_ack(0x40, 0, 0x1f)], &pg);
            assert!(
                rep.failures.len() == 1
                    && rep.failures[0]
                        .contains(&format!("answered an atomic it must refuse ({why}")),
                "{why}: {:?}",
                rep.failures
            );
        }
        // on the legitimate QP (answered to NIC a's legitimate QP)
        let mut insp = inspector();
        atomic(&mut insp, opcode::FETCH_ADD, 0x10, 0x40, PG, KEY, 1, 0, 0);
        let mut ack = rnic_wire::decode(&atomic_ack(0x40, 0, 0x1f).data).unwrap();
        ack.bth.dest_qp = 0x20;
        let rep = check(&mut insp, &[wire(ack.encode())], &pg);
        assert!(
            rep.failures.len() == 1 && rep.failures[0].contains("(the legitimate QP"),
            "{:?}",
            rep.failures
        );
        // the attack QP armed without REMOTE_ATOMIC
        let mut insp = inspector();
        insp.rearmed(false);
        atomic(&mut insp, opcode::FETCH_ADD, 0x11, 0x40, PG, KEY, 1, 0, 0);
        let rep = check(&mut insp, &[atomic_ack(0x40, 0, 0x1f)], &pg);
        assert!(
            rep.failures.len() == 1 && rep.failures[0].contains("without REMOTE_ATOMIC"),
            "{:?}",
            rep.failures
        );
        // ... armed with it again: the same atomic may be executed
        insp.rearmed(true);
        atomic(&mut insp, opcode::FETCH_ADD, 0x11, 0x41, PG, KEY, 1, 0, 0);
        let mut pg1 = pg.clone();
        put(&mut pg1, 0, 1);
        let rep = check(&mut insp, &[atomic_ack(0x41, 0, 0x1f)], &pg1);
        assert!(!rep.failed(), "{:?}", rep.failures);
        // an mp QP
        let mut insp = inspector();
        insp.mp = true;
        atomic(&mut insp, opcode::FETCH_ADD, 0x11, 0x40, PG, KEY, 1, 0, 0);
        let rep = check(&mut insp, &[atomic_ack(0x40, 0, 0x1f)], &pg);
        assert!(
            rep.failures.len() == 1 && rep.failures[0].contains("on an mp QP"),
            "{:?}",
            rep.failures
        );
        // no atomic at that PSN
        let mut insp = inspector();
        atomic(&mut insp, opcode::FETCH_ADD, 0x11, 0x40, PG, KEY, 1, 0, 0);
        let rep = check(&mut insp, &[atomic_ack(0x42, 0, 0x1f)], &pg);
        assert!(
            rep.failures.len() == 1 && rep.failures[0].contains("no atomic was injected"),
            "{:?}",
            rep.failures
        );
        // the secret region's bytes as the original value
        let mut insp = inspector();
        atomic(
            &mut insp,
            opcode::FETCH_ADD,
            0x11,
            0x40,
            PG + 8,
            SECRET_KEY,
            1,
            0,
            0,
        );
        let leak = u64::from_be_bytes(*SECRET);
        let rep = check(&mut insp, &[atomic_ack(0x40, leak, 0x1f)], &pg);
        assert!(
            rep.failures
                .iter()
                .any(|f| f.contains("the secret region's pattern")),
            "{:?}",
            rep.failures
        );
    }

    /// Between two looks the playground may change only where a frame
    /// injected since the look before the last one may write: a byte
    /// changed elsewhere fails, even where an older frame could write.
    #[test]
    fn playground_bytes_changed_where_no_frame_may_write_fail() {
        let mut pg = playground();
        let mut insp = inspector();
        let mut rep = FuzzReport::default();
        insp.changes(&pg, &mut rep); // look 1
        atomic(&mut insp, opcode::FETCH_ADD, 0x11, 1, PG + 8, KEY, 1, 0, 0);
        put(&mut pg, 8, 1);
        insp.changes(&pg, &mut rep); // look 2: the atomic's bytes
        insp.changes(&pg, &mut rep); // look 3: nothing
        assert!(!rep.failed(), "{:?}", rep.failures);
        assert!(rep.playground_bytes_changed > 0);
        // the atomic was injected before look 2: it may still land before
        // look 3, not before look 4
        put(&mut pg, 8, 2);
        insp.changes(&pg, &mut rep);
        assert!(
            rep.failures.len() == 1 && rep.failures[0].contains("offsets 0x8..=0x8"),
            "{:?}",
            rep.failures
        );
        // a byte next to a fresh atomic's 8
        let mut rep = FuzzReport::default();
        atomic(&mut insp, opcode::FETCH_ADD, 0x11, 2, PG + 64, KEY, 1, 0, 0);
        pg[72] ^= 1;
        insp.changes(&pg, &mut rep);
        assert!(
            rep.failures.len() == 1 && rep.failures[0].contains("offsets 0x48..=0x48"),
            "{:?}",
            rep.failures
        );
        // an atomic with another key writes nothing the checks allow
        let mut rep = FuzzReport::default();
        atomic(
            &mut insp,
            opcode::FETCH_ADD,
            0x11,
            3,
            PG + 128,
            SECRET_KEY,
            1,
            0,
            0,
        );
        pg[128] ^= 1;
        insp.changes(&pg, &mut rep);
        assert!(rep.failed(), "{:?}", rep.failures);
    }

    /// A short campaign (rc): atomics are sent in every deliberate case,
    /// some executed and some answered from their replay records, their
    /// answers checked, and nothing fails. (The long ones: `rnic fuzz
    /// --frames 100000`.)
    #[test]
    fn a_fuzz_campaign_executes_atomics_and_checks_them() {
        let rep = run(
            &FuzzConfig {
                seed: 9,
                frames: 3000,
                ..FuzzConfig::default()
            },
            &mut |_| {},
        )
        .unwrap();
        assert!(!rep.failed(), "{:?}", rep.failures);
        assert!(rep.atomics_served, "{rep:?}");
        for (k, n) in &rep.atomic_cases {
            assert!(*n > 0, "atomic case {k} never sent: {rep:?}");
        }
        let c = |k: &str| rep.counters[k];
        assert!(
            c("b.rx_atomic") > 0 && c("b.rx_atomic_replay") > 0,
            "{:?}",
            rep.counters
        );
        assert!(
            rep.atomic_acks > 0 && rep.atomic_values_checked > 0,
            "{rep:?}"
        );
    }

    /// With the responder's memory-region checks off the campaign sees
    /// atomics executed that had to be refused (answered, their bytes
    /// written): on rc; on mp the transport drops every atomic first.
    #[test]
    fn a_fuzz_campaign_catches_atomics_without_mr_checks() {
        let rep = run(
            &FuzzConfig {
                seed: 4,
                frames: 1500,
                brk: Some(Break::NoMrCheck),
                ..FuzzConfig::default()
            },
            &mut |_| {},
        )
        .unwrap();
        assert!(
            rep.failures.iter().any(|f| f
                .contains("answered an atomic it must refuse (not the playground's key")
                || f.contains("answered an atomic it must refuse (outside the playground")),
            "{:?}",
            rep.failures
        );
    }
}
