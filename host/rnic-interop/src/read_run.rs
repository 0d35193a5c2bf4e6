//! RDMA READ against rxe, every byte checked: here rxe reads from rnic's
//! region (rnic the responder, `rnic interop --tests read --roles
//! responder`); [`crate::read_client`] has the other role, rnic reading
//! from rxe's region. The plan, the pattern and the wire tally here serve
//! both.
//!
//! The guest runs `sim/rxe-guest/read_peer.py` (pyverbs), which posts READs
//! of 1, PMTU-1, PMTU, PMTU+1, 3 PMTU+17 and 64 KiB bytes (cycling; the
//! last READ ends on the last byte of rnic's region) from rnic's region
//! into its own buffer, up to `depth` outstanding, and checks each
//! destination against the seeded pattern the moment its completion
//! appears. The side channel is imm_run's: one JSON line each way over TCP
//! (the guest's QPN, PSN and GID; rnic's QPN, PSN, GID, region address,
//! rkey and length, the seed, and the READs rnic grants outstanding).
//!
//! The responder's side of the link is tallied ([`ReadTally`], from the
//! world's frame window): READ requests that reached it, those that ask
//! again for PSNs it has answered already (the requester lost responses, or
//! its timer fired before they arrived: the duplicate-READ path), the
//! responses it sent and the link dropped, and its ACKs and NAKs. Every
//! READ response is checked on the wire, independently of the requester:
//! its opcode in the sequence (ONLY, or FIRST, MIDDLE..., LAST), its AETH,
//! its payload length and its bytes against the region's.

use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::time::{Duration, Instant};

use base64::Engine as _;
use rnic_harness::conn::PortAddr;
use rnic_wire::opcode;
use serde::{Deserialize, Serialize};

use crate::guest::Guest;
use crate::{InteropError, Report, Result, Rnic, Role};

/// The guest-side program, sent to the guest when a run starts.
pub const PEER_SCRIPT: &str = include_str!("../../../sim/rxe-guest/read_peer.py");

/// `read_peer.py`'s `READ_KEY_SALT` ("readpat\0").
const READ_KEY_SALT: u64 = 0x7265_6164_7061_7400;
/// Bytes between two READs' places (read_peer.py's `GAP`).
pub(crate) const GAP: u64 = 13;
/// What the reader's buffer holds outside the READs' destinations
/// (read_peer.py's `GUARD`).
pub(crate) const GUARD: u8 = 0xEE;

#[derive(Debug, Clone)]
pub struct ReadOpts {
    /// READs the reader posts.
    pub count: u32,
    /// READs outstanding at most (capped by what the target grants, and
    /// rnic reading, by its own `max_rd_atomic`).
    pub depth: u32,
    pub mtu: u32,
    /// The seed of the region's pattern.
    pub seed: u64,
    /// The guest QP's local ACK timeout exponent (4.096 us * 2^t), the
    /// guest reading.
    pub qp_timeout: u8,
    pub limit: Duration,
    pub server_port: u16,
}

impl Default for ReadOpts {
    fn default() -> Self {
        Self {
            count: 12,
            depth: 4,
            mtu: 1024,
            seed: 1,
            qp_timeout: 14,
            limit: Duration::from_secs(300),
            server_port: 18519,
        }
    }
}

/// The READ sizes, in the order the guest cycles through them.
pub fn read_sizes(pmtu: u32) -> [u64; 6] {
    let p = u64::from(pmtu);
    [1, p - 1, p, p + 1, 3 * p + 17, 65536]
}

/// One READ of the plan.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PlannedRead {
    /// Offset in rnic's region.
    pub remote: u64,
    /// Offset in the guest's buffer.
    pub local: u64,
    pub len: u64,
}

/// read_peer.py's `plan()`: the READs and the guest's buffer size.
pub fn read_plan(count: u32, pmtu: u32, region_len: u64) -> (Vec<PlannedRead>, u64) {
    let sizes = read_sizes(pmtu);
    let mut v = Vec::with_capacity(count as usize);
    let mut cur = 1u64;
    for k in 0..count {
        let len = sizes[k as usize % sizes.len()];
        let remote = if k + 1 == count {
            region_len - len
        } else {
            cur
        };
        v.push(PlannedRead {
            remote,
            local: cur + 2,
            len,
        });
        cur += len + GAP;
    }
    (v, cur + 2 + GAP)
}

/// The size of rnic's region for `count` READs at `pmtu`: the plan's span
/// (the guest's buffer size bounds it) as a power of two, at least 64 KiB.
pub fn region_len(count: u32, pmtu: u32) -> usize {
    let (_, span) = read_plan(count, pmtu, 1 << 20);
    (span as usize).next_power_of_two().max(1 << 16)
}

/// The key of the region's pattern (read_peer.py: `mix(seed ^ READ_KEY_SALT)`).
pub fn read_key(seed: u64) -> u64 {
    rnic_harness::pattern::mix(seed ^ READ_KEY_SALT)
}

/// The region's bytes: byte `i` is byte `i % 8` of `mix(key + i / 8)`
/// ([`rnic_harness::pattern::fill`]).
pub fn read_pattern(seed: u64, len: usize) -> Vec<u8> {
    let mut v = vec![0u8; len];
    rnic_harness::pattern::fill(read_key(seed), &mut v);
    v
}

/// What rnic sends on the side channel.
#[derive(Debug, Clone, Serialize)]
struct RnicLine {
    qpn: u32,
    psn: u32,
    gid: String,
    addr: u64,
    rkey: u32,
    len: u64,
    seed: u64,
    rd_atomic: u32,
}

/// What the guest sends.
#[derive(Debug, Clone, Deserialize)]
struct GuestLine {
    qpn: u32,
    psn: u32,
    gid: String,
}

/// The guest's result line.
#[derive(Debug, Clone, Default, Deserialize)]
struct GuestSummary {
    ok: bool,
    reads: u64,
    bytes: u64,
    #[serde(default)]
    depth: u32,
    #[serde(default)]
    data_secs: f64,
    #[serde(default)]
    errors: Vec<String>,
}

/// The READ traffic as the responder's side of the link saw it (rnic's,
/// or rxe's when rnic reads).
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct ReadTally {
    /// The responder: "rnic" or "rxe".
    pub responder: &'static str,
    /// READs the reader completed and checked, and their bytes.
    pub reads: u64,
    pub bytes: u64,
    /// READs the reader had outstanding at most.
    pub depth: u32,
    /// READ request frames the reader sent, those the link dropped, and
    /// those that ask for a PSN it had asked for before (its resends).
    pub requests: u64,
    pub requests_dropped: u64,
    pub resent: u64,
    /// Request frames checked against the plan as they were sent (rnic
    /// reading: each one READ k's, or its tail from a PSN inside it).
    pub requests_checked: u64,
    /// First-time requests the responder received (each READ once), and
    /// the bytes they ask for.
    pub served: u64,
    pub served_bytes: u64,
    /// Requests (delivered) that ask again for PSNs the responder had
    /// answered or was answering: its duplicate-READ path.
    pub re_requests: u64,
    /// Requests (delivered) beyond the responder's expected PSN (one
    /// before them was lost or overtaken): it answers the first of a gap
    /// with a NAK (PSN sequence error) and drops them.
    pub out_of_sequence: u64,
    /// READ response packets the responder sent, those the link dropped,
    /// and their payload bytes.
    pub responses: u64,
    pub responses_dropped: u64,
    pub response_bytes: u64,
    /// Copies of READ response packets that reached the reader (a
    /// duplicated frame arrives twice).
    pub responses_delivered: u64,
    /// Response payload bytes checked on the wire against the region.
    pub wire_bytes_checked: u64,
    /// The responder's ACKs and NAKs (AETH syndrome not an ACK); of the
    /// NAKs, those for a PSN sequence error (the answer to a gap).
    pub acks: u64,
    pub naks: u64,
    pub seq_naks: u64,
    /// NAKs (PSN sequence error) sent late: after READ responses that
    /// answer the very PSN the NAK names (made when an out-of-sequence
    /// request arrived, they waited behind READ responses queued after
    /// them). Not a failure (the reader ignores them: their PSN is below
    /// its completer's), but wrong on the wire; described in
    /// `late_nak_notes`.
    pub late_naks: u64,
    pub late_nak_notes: Vec<String>,
    /// What was wrong on the wire (the first few).
    pub wire_errors: Vec<String>,
    /// rnic reading: what its counters moved by: response packets placed
    /// (`port.rx_read_resp`), packets sent again (`port.tx_retransmits`),
    /// ACK timeouts (`port.rtx_timeouts`), frames dropped for their PSN
    /// (`port.rx_drop_psn`).
    pub placed: u32,
    pub tx_retransmits: u32,
    pub rtx_timeouts: u32,
    pub rx_drop_psn: u32,
    /// rnic reading: destination bytes checked at completion, and guard
    /// bytes (around the destinations) checked untouched.
    pub dest_bytes_checked: u64,
    pub guard_bytes_checked: u64,
    /// Seconds the data phase took.
    pub data_secs: f64,
}

/// One READ request as the responder received it.
#[derive(Debug, Clone, Copy)]
struct SeenRequest {
    psn: u32,
    /// Offset of its first byte in the responder's region.
    off: u64,
    len: u64,
}

impl SeenRequest {
    fn packets(&self, pmtu: u64) -> u32 {
        self.len.div_ceil(pmtu).max(1) as u32
    }
}

fn is_read_response(op: u8) -> bool {
    matches!(
        op,
        opcode::RDMA_READ_RESPONSE_FIRST
            | opcode::RDMA_READ_RESPONSE_MIDDLE
            | opcode::RDMA_READ_RESPONSE_LAST
            | opcode::RDMA_READ_RESPONSE_ONLY
    )
}

/// `a - b` in 24-bit PSN space, as a signed distance.
fn psn_diff(a: u32, b: u32) -> i32 {
    ((a.wrapping_sub(b) << 8) as i32) >> 8
}

/// Which end of the link answers the READs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Responder {
    /// rnic serves, the guest reads.
    Rnic,
    /// rxe serves, rnic reads.
    Guest,
}

impl Responder {
    /// The world's frame source of the responder's frames.
    fn src(self) -> usize {
        match self {
            Responder::Rnic => 0,
            Responder::Guest => 1,
        }
    }

    fn name(self) -> &'static str {
        match self {
            Responder::Rnic => "rnic",
            Responder::Guest => "rxe",
        }
    }

    /// The order of the responder's frames and the requests arriving at
    /// the same cycle. rnic's first: it cannot answer a request in the
    /// cycle it arrives. The guest's last: the world hands a frame to the
    /// guest before it polls the guest's socket in the same cycle, and with
    /// the simulation's thread descheduled in between (a loaded host) the
    /// guest's answer can be there by that poll.
    fn tie_order(self) -> (u8, u8) {
        match self {
            Responder::Rnic => (0, 1),
            Responder::Guest => (1, 0),
        }
    }

    /// The directions of the requests and of the responses.
    fn arrows(self) -> (&'static str, &'static str) {
        match self {
            Responder::Rnic => ("guest -> rnic", "rnic -> guest"),
            Responder::Guest => ("rnic -> guest", "guest -> rnic"),
        }
    }
}

/// The requests rnic must send when it reads: READ k at the first PSN plus
/// the packets of the READs before it; a resend from a PSN inside READ k
/// asks for its tail from there.
struct RequestPlan {
    reads: Vec<PlannedRead>,
    /// Each READ's first PSN as a distance from the first, and the end.
    starts: Vec<u32>,
    first_psn: u32,
    rkey: u32,
}

impl RequestPlan {
    fn new(reads: &[PlannedRead], first_psn: u32, rkey: u32, pmtu: u64) -> Self {
        let mut starts = vec![0u32];
        for r in reads {
            let n = r.len.div_ceil(pmtu).max(1) as u32;
            starts.push(starts.last().unwrap() + n);
        }
        Self {
            reads: reads.to_vec(),
            starts,
            first_psn,
            rkey,
        }
    }

    /// Whether the request at `psn` asks for what the plan says.
    fn check(&self, psn: u32, reth: rnic_wire::Reth, pmtu: u64, base: u64) -> Result<(), String> {
        let d = psn_diff(psn, self.first_psn);
        let end = *self.starts.last().unwrap();
        if d < 0 || d as u32 >= end {
            return Err(format!(
                "rnic sent a READ request at PSN {psn:#08x}, outside its {} READs (PSNs {:#08x} to {:#08x})",
                self.reads.len(),
                self.first_psn,
                (self.first_psn + end - 1) & 0xFF_FFFF
            ));
        }
        let d = d as u32;
        let k = self.starts.partition_point(|&s| s <= d) - 1;
        let r = self.reads[k];
        let i = d - self.starts[k];
        let skip = u64::from(i) * pmtu;
        let (off, len) = (r.remote + skip, r.len - skip);
        if reth.va == base + off && u64::from(reth.dma_len) == len && reth.rkey == self.rkey {
            return Ok(());
        }
        Err(format!(
            "rnic's READ request at PSN {psn:#08x} (READ {k}{}) asks for {} bytes at region offset {} with rkey {:#x}; READ {k} wants {len} bytes at offset {off} with rkey {:#x} from there",
            if i > 0 {
                format!(", sent again from its packet {i}")
            } else {
                String::new()
            },
            reth.dma_len,
            reth.va.wrapping_sub(base) as i64,
            reth.rkey,
            self.rkey
        ))
    }
}

/// The wire tally and checker: fed every frame of the run (also by the
/// perftest READ runs, [`crate::perftest_run`]).
pub(crate) struct Wire {
    responder: Responder,
    pmtu: u64,
    base: u64,
    region: Vec<u8>,
    /// The PSN after the furthest request the reader sent (a request below
    /// it is a resend).
    sent_end: Option<u32>,
    /// rnic reading: what its requests must be.
    plan: Option<RequestPlan>,
    /// First-time requests, in PSN order.
    seen: Vec<SeenRequest>,
    /// Re-requests, in arrival order.
    again: Vec<SeenRequest>,
    /// The responder's expected PSN as the requests it received move it
    /// (set from the side channel, else by the first request).
    next_psn: Option<u32>,
    /// The expected PSNs at which a request arrived out of sequence (the
    /// PSNs a NAK for a sequence error may name), and whether the
    /// responder has since sent the first response at that PSN.
    gap_psns: Vec<(u32, bool)>,
    /// Frames not yet taken into account, by the cycle they take effect
    /// (the responder's when sent, the requests when they arrive; a frame
    /// can arrive after the drain that saw it sent), a tie in
    /// [`Responder::tie_order`].
    pending: Vec<(u64, u8, Event)>,
    /// The last events, one line each, and a copy of them as they stood at
    /// the first problem (for the report).
    recent: std::collections::VecDeque<String>,
    context: Vec<String>,
    pub(crate) tally: ReadTally,
}

enum Event {
    /// A READ request reaching the responder.
    Request(rnic_wire::RoceFrame),
    /// A frame the responder sent; whether it reached the reader.
    Sent(rnic_wire::RoceFrame, bool),
}

impl Wire {
    /// Start tallying `rnic`'s link, rnic the responder: `region` is its
    /// registered buffer's content (a READ must return these bytes).
    pub(crate) fn start(rnic: &Rnic, pmtu: u32, region: Vec<u8>) -> Self {
        // Every frame of the run passes through the window; drained each step.
        rnic.world.set_window(1 << 14);
        rnic.world.clear_window();
        Self::new(Responder::Rnic, pmtu, rnic.mr.addr(), region)
    }

    /// Start tallying `rnic`'s link, rnic the reader: `region` is the
    /// guest's region's content, at `base` in the guest.
    pub(crate) fn start_reader(rnic: &Rnic, pmtu: u32, base: u64, region: Vec<u8>) -> Self {
        rnic.world.set_window(1 << 14);
        rnic.world.clear_window();
        Self::new(Responder::Guest, pmtu, base, region)
    }

    /// rnic reading: its requests must be `reads`' from the first PSN
    /// (set by [`Wire::expect_psn`] first), with `rkey`.
    pub(crate) fn expect_requests(&mut self, reads: &[PlannedRead], rkey: u32) {
        let first = self.next_psn.unwrap_or(0);
        self.plan = Some(RequestPlan::new(reads, first, rkey, self.pmtu));
    }

    /// Take the frames the window holds, and the effects due by now.
    pub(crate) fn drain(&mut self, rnic: &Rnic) {
        for f in rnic.world.window() {
            self.frame(&f);
        }
        rnic.world.clear_window();
        self.settle(rnic.world.now());
    }

    /// The last frames, and no window any more.
    pub(crate) fn stop(&mut self, rnic: &Rnic) {
        self.drain(rnic);
        self.settle(u64::MAX);
        rnic.world.set_window(0);
    }

    /// Take the pending frames due by cycle `now` into account, in order.
    fn settle(&mut self, now: u64) {
        self.pending.sort_by_key(|&(t, o, _)| (t, o));
        let later = self.pending.partition_point(|&(t, _, _)| t <= now);
        let due: Vec<_> = self.pending.drain(..later).collect();
        let (to_responder, to_reader) = self.responder.arrows();
        for (t, _, e) in due {
            let (fr, line) = match &e {
                Event::Request(fr) => (fr, to_responder.to_string()),
                Event::Sent(fr, d) => (
                    fr,
                    format!("{to_reader}{}", if *d { "" } else { " (lost on the link)" }),
                ),
            };
            let mut line = format!(
                "{line}: {} PSN {:#08x}",
                rnic_wire::opcode_name(fr.bth.opcode),
                fr.bth.psn
            );
            if let Some(r) = fr.reth {
                line += &format!(
                    " VA region+{} len {}",
                    r.va.wrapping_sub(self.base),
                    r.dma_len
                );
            }
            if let Some(a) = fr.aeth {
                line += &format!(" AETH syndrome {:#04x} MSN {}", a.syndrome, a.msn);
            }
            if !fr.payload.is_empty() {
                line += &format!(" ({} payload bytes)", fr.payload.len());
            }
            self.note(t, line);
            match e {
                Event::Request(fr) => self.request(&fr),
                Event::Sent(fr, delivered) => self.sent(&fr, delivered),
            }
        }
    }

    /// The region's bytes.
    pub(crate) fn region(&self) -> &[u8] {
        &self.region
    }

    /// The first PSN of the requester (the responder's `rq_psn`).
    pub(crate) fn expect_psn(&mut self, psn: u32) {
        self.next_psn = Some(psn & 0xFF_FFFF);
    }

    /// One line for the user.
    pub(crate) fn summary(&self) -> String {
        let w = &self.tally;
        format!(
            "{}'s side of the link: {} READ requests ({} dropped by the link, {} sent again, {} re-requests, {} out of sequence), {} responses ({} dropped), {} NAKs ({} PSN sequence errors, {} of them late); wire problems: {}",
            self.responder.name(),
            w.requests,
            w.requests_dropped,
            w.resent,
            w.re_requests,
            w.out_of_sequence,
            w.responses,
            w.responses_dropped,
            w.naks,
            w.seq_naks,
            w.late_naks,
            if w.wire_errors.is_empty() {
                "none".to_string()
            } else {
                format!(
                    "{}\nthe wire before the first, as {}'s side saw it (requests at their arrival):\n  {}",
                    w.wire_errors.join("; "),
                    self.responder.name(),
                    self.context.join("\n  ")
                )
            }
        )
    }

    fn new(responder: Responder, pmtu: u32, base: u64, region: Vec<u8>) -> Self {
        Self {
            responder,
            pmtu: u64::from(pmtu),
            base,
            region,
            sent_end: None,
            plan: None,
            seen: Vec::new(),
            again: Vec::new(),
            gap_psns: Vec::new(),
            pending: Vec::new(),
            recent: Default::default(),
            context: Vec::new(),
            next_psn: None,
            tally: ReadTally {
                responder: responder.name(),
                ..ReadTally::default()
            },
        }
    }

    fn note(&mut self, t: u64, s: String) {
        if self.recent.len() == 400 {
            self.recent.pop_front();
        }
        self.recent.push_back(format!("cycle {t}: {s}"));
    }

    fn problem(&mut self, s: String) {
        if self.context.is_empty() {
            // The requests, ACKs and NAKs, and the responses' first and
            // last packets: the MIDDLEs only as a count.
            let mut middles = 0;
            for l in &self.recent {
                if l.contains("RESPONSE MIDDLE") && !l.contains("lost") {
                    middles += 1;
                    continue;
                }
                if middles > 0 {
                    self.context.push(format!("({middles} MIDDLE responses)"));
                    middles = 0;
                }
                self.context.push(l.clone());
            }
            let keep = self.context.len().saturating_sub(40);
            self.context.drain(..keep);
        }
        if self.tally.wire_errors.len() < 8 {
            self.tally.wire_errors.push(s);
        }
    }

    fn frame(&mut self, f: &rnic_sim::WireFrame) {
        // Copies that reached the other end intact (a corrupted copy is
        // dropped there for its ICRC; a duplicated frame has two).
        let mut good = f
            .fate
            .copies
            .iter()
            .filter(|c| !c.dropped && !c.bad && c.corrupt_bit.is_none())
            .map(|c| c.arrival)
            .peekable();
        let fr = match rnic_wire::decode(&f.data) {
            Ok(fr) => fr,
            Err(e) => {
                if f.src == 0 {
                    self.problem(format!("rnic sent a frame rnic-wire rejects: {e}"));
                }
                return;
            }
        };
        if f.src == self.responder.src() {
            let delivered = good.peek().is_some();
            if is_read_response(fr.bth.opcode) {
                self.tally.responses_delivered += good.count() as u64;
            }
            let o = self.responder.tie_order().0;
            self.pending.push((f.cycle, o, Event::Sent(fr, delivered)));
            return;
        }
        if fr.bth.opcode != opcode::RDMA_READ_REQUEST {
            return;
        }
        self.tally.requests += 1;
        if good.peek().is_none() {
            self.tally.requests_dropped += 1;
        }
        self.requested(&fr);
        for t in good {
            let o = self.responder.tie_order().1;
            self.pending.push((t, o, Event::Request(fr.clone())));
        }
    }

    /// A READ request as the reader sends it: a resend if it asks for a
    /// PSN asked for before; rnic's checked against the plan.
    fn requested(&mut self, fr: &rnic_wire::RoceFrame) {
        let psn = fr.bth.psn;
        let Some(reth) = fr.reth else {
            if self.plan.is_some() {
                self.problem(format!(
                    "rnic sent a READ request without a RETH at PSN {psn:#08x}"
                ));
            }
            return;
        };
        let n = u64::from(reth.dma_len).div_ceil(self.pmtu).max(1) as u32;
        match self.sent_end {
            Some(e) if psn_diff(psn, e) < 0 => self.tally.resent += 1,
            _ => self.sent_end = Some(psn.wrapping_add(n) & 0xFF_FFFF),
        }
        let Some(p) = &self.plan else { return };
        match p.check(psn, reth, self.pmtu, self.base) {
            Ok(()) => self.tally.requests_checked += 1,
            Err(e) => self.problem(e),
        }
    }

    /// A READ request reaches the responder.
    fn request(&mut self, fr: &rnic_wire::RoceFrame) {
        let psn = fr.bth.psn;
        let Some(reth) = fr.reth else { return };
        let req = SeenRequest {
            psn,
            off: reth.va.wrapping_sub(self.base),
            len: u64::from(reth.dma_len),
        };
        let d = self.next_psn.map_or(0, |n| psn_diff(psn, n));
        if d == 0 {
            self.tally.served += 1;
            self.tally.served_bytes += req.len;
            self.next_psn = Some((psn + req.packets(self.pmtu)) & 0xFF_FFFF);
            self.seen.push(req);
        } else if d < 0 {
            self.tally.re_requests += 1;
            self.again.push(req);
        } else {
            self.tally.out_of_sequence += 1;
            if let Some(n) = self.next_psn {
                match self.gap_psns.iter_mut().find(|g| g.0 == n) {
                    Some(g) => g.1 = false,
                    None => self.gap_psns.push((n, false)),
                }
            }
        }
    }

    /// The responder sends a frame.
    fn sent(&mut self, fr: &rnic_wire::RoceFrame, delivered: bool) {
        let op = fr.bth.opcode;
        let psn = fr.bth.psn;
        let who = self.responder.name();
        match op {
            opcode::ACKNOWLEDGE => {
                let (syn, msn) = fr.aeth.map_or((0, 0), |a| (a.syndrome, a.msn));
                if syn >> 5 == 0 {
                    self.tally.acks += 1;
                    return;
                }
                self.tally.naks += 1;
                // NAK PSN sequence error at the expected PSN: the answer
                // to a request beyond it.
                let gap = self.gap_psns.iter().find(|g| g.0 == psn).copied();
                if syn == 0x60 && gap.is_some() {
                    self.tally.seq_naks += 1;
                    if gap.is_some_and(|g| !g.1) {
                        return;
                    }
                    // The responder has already sent the response at PSN `psn` to
                    // the request that arrived after the gap: this NAK
                    // went out after responses that supersede it.
                    self.tally.late_naks += 1;
                    if self.tally.late_nak_notes.len() < 4 {
                        let mut ctx: Vec<String> = self
                            .recent
                            .iter()
                            .rev()
                            .filter(|l| !l.contains("RESPONSE MIDDLE"))
                            .take(14)
                            .cloned()
                            .collect();
                        ctx.reverse();
                        self.tally.late_nak_notes.push(format!(
                            "NAK (PSN sequence error) at PSN {psn:#08x} with MSN {msn}, sent after {who}'s own response at PSN {psn:#08x} ({who}'s expected PSN by then: {}): made when a request beyond PSN {psn:#08x} arrived, it waited behind READ responses queued after it. The wire before it (requests at their arrival):\n  {}",
                            self.next_psn.map_or("unknown".into(), |p| format!("{p:#08x}")),
                            ctx.join("\n  ")
                        ));
                    }
                    return;
                }
                self.problem(format!(
                    "{who} sent a NAK (AETH syndrome {syn:#04x}, MSN {msn}) at PSN {psn:#08x}; its expected PSN (by the requests it received) is {}, {} requests came out of sequence",
                    self.next_psn.map_or("unknown".into(), |p| format!("{p:#08x}")),
                    self.tally.out_of_sequence
                ));
            }
            opcode::RDMA_READ_RESPONSE_FIRST
            | opcode::RDMA_READ_RESPONSE_MIDDLE
            | opcode::RDMA_READ_RESPONSE_LAST
            | opcode::RDMA_READ_RESPONSE_ONLY => {
                self.tally.responses += 1;
                self.tally.response_bytes += fr.payload.len() as u64;
                if matches!(
                    op,
                    opcode::RDMA_READ_RESPONSE_FIRST | opcode::RDMA_READ_RESPONSE_ONLY
                ) {
                    for g in self.gap_psns.iter_mut().filter(|g| g.0 == psn) {
                        g.1 = true;
                    }
                }
                if !delivered {
                    self.tally.responses_dropped += 1;
                }
                self.check_response(op, psn, fr);
            }
            _ => {}
        }
    }

    /// The opcode the response at `psn` has if it answers `req`.
    fn opcode_in(&self, req: &SeenRequest, psn: u32) -> u8 {
        let i = psn_diff(psn, req.psn) as u32;
        let n = req.packets(self.pmtu);
        match (n, i) {
            (1, _) => opcode::RDMA_READ_RESPONSE_ONLY,
            (_, 0) => opcode::RDMA_READ_RESPONSE_FIRST,
            (_, i) if i == n - 1 => opcode::RDMA_READ_RESPONSE_LAST,
            _ => opcode::RDMA_READ_RESPONSE_MIDDLE,
        }
    }

    /// Check one response against the requests whose PSNs hold it: the
    /// first-time request, or a re-request (which is answered as a READ of
    /// its own, FIRST at its PSN, from the address it names).
    fn check_response(&mut self, op: u8, psn: u32, fr: &rnic_wire::RoceFrame) {
        let pmtu = self.pmtu;
        let covering: Vec<SeenRequest> = self
            .seen
            .iter()
            .chain(self.again.iter())
            .rev()
            .copied()
            .filter(|r| {
                let d = psn_diff(psn, r.psn);
                d >= 0 && (d as u32) < r.packets(pmtu)
            })
            .collect();
        let Some(&first) = covering.last() else {
            // (a request for it still on its way, by the link's model?)
            let later: Vec<String> = self
                .pending
                .iter()
                .filter_map(|(t, _, e)| match e {
                    Event::Request(r) if r.bth.psn == psn => Some(format!("cycle {t}")),
                    _ => None,
                })
                .collect();
            self.problem(format!(
                "{} sent {} at PSN {psn:#08x}, which no READ request it received covers{}",
                self.responder.name(),
                rnic_wire::opcode_name(op),
                if later.is_empty() {
                    String::new()
                } else {
                    format!(
                        " (a request at that PSN arrives later: {})",
                        later.join(", ")
                    )
                }
            ));
            return;
        };
        // The latest request this response fits, else the first-time one.
        let req = covering
            .iter()
            .copied()
            .find(|r| self.opcode_in(r, psn) == op)
            .unwrap_or(first);
        let i = psn_diff(psn, req.psn) as u64;
        let n = u64::from(req.packets(pmtu));
        let want_op = self.opcode_in(&req, psn);
        let what = format!(
            "the response at PSN {psn:#08x} (packet {i} of {n}) to the READ of {} bytes at region offset {} (PSN {:#08x})",
            req.len, req.off, req.psn
        );
        if op != want_op {
            self.problem(format!(
                "{what} is {}, want {}",
                rnic_wire::opcode_name(op),
                rnic_wire::opcode_name(want_op)
            ));
        }
        let aeth_wanted = op != opcode::RDMA_READ_RESPONSE_MIDDLE;
        match fr.aeth {
            Some(a) if aeth_wanted && a.syndrome >> 5 != 0 => self.problem(format!(
                "{what} carries AETH syndrome {:#04x}, not an ACK",
                a.syndrome
            )),
            None if aeth_wanted => self.problem(format!("{what} has no AETH")),
            Some(_) if !aeth_wanted => self.problem(format!("{what} (MIDDLE) has an AETH")),
            _ => {}
        }
        let off = req.off + i * pmtu;
        let len = pmtu.min(req.len.saturating_sub(i * pmtu));
        if fr.payload.len() as u64 != len {
            self.problem(format!(
                "{what} carries {} payload bytes, want {len}",
                fr.payload.len()
            ));
            return;
        }
        let (o, l) = (off as usize, len as usize);
        match self.region.get(o..o + l) {
            Some(want) if want == fr.payload.as_slice() => {
                self.tally.wire_bytes_checked += len;
            }
            Some(want) => {
                let at = want
                    .iter()
                    .zip(&fr.payload)
                    .position(|(a, b)| a != b)
                    .unwrap_or(0);
                let bad = want.iter().zip(&fr.payload).filter(|(a, b)| a != b).count();
                let from = find(&self.region, &fr.payload[at..(at + 16).min(l)]);
                self.problem(format!(
                    "{what}: {bad} of its {len} bytes differ from region offset {off}, the first at byte {at} (got {:02x?}, want {:02x?}){}",
                    &fr.payload[at..(at + 8).min(l)],
                    &want[at..(at + 8).min(l)],
                    match from {
                        Some(p) => format!("; those bytes are the region's at offset {p}"),
                        None => String::new(),
                    }
                ));
            }
            None => self.problem(format!(
                "{what} lies outside {}'s region",
                self.responder.name()
            )),
        }
    }
}

/// The run's note when the responder sent NAKs late (see
/// [`ReadTally::late_naks`]).
pub(crate) fn late_nak_note(t: &ReadTally) -> Option<String> {
    (t.late_naks > 0).then(|| {
        format!(
            "{} sent {} NAK(s) late, after READ responses to the PSN they name (the reader ignored them); the first: {}",
            t.responder,
            t.late_naks,
            t.late_nak_notes.first().map_or("", String::as_str)
        )
    })
}

pub(crate) fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    if needle.len() < 8 {
        return None;
    }
    hay.windows(needle.len()).position(|w| w == needle)
}

/// Run it: rnic is the responder, the guest reads.
pub fn run(rnic: &mut Rnic, guest: &mut Guest, o: &ReadOpts) -> Result<Report> {
    if rnic.max_dest_rd_atomic == 0 {
        return Err(InteropError::Failed(
            "this rnic build does not serve RDMA READ (READ_EN=0: `rnic info` lists no read_responder); the READ exchange needs it".into(),
        ));
    }
    let region = rnic.opts.buf_len as u64;
    let (plan, _) = read_plan(o.count, o.mtu, region);
    if o.count == 0 || plan.iter().any(|r| r.remote + r.len > region) {
        return Err(InteropError::Failed(format!(
            "{} READs do not fit rnic's {region}-byte region",
            o.count
        )));
    }
    let t0 = Instant::now();
    let pattern = read_pattern(o.seed, region as usize);
    rnic.buf.write(0, &pattern);
    let mut wire = Wire::start(rnic, o.mtu, pattern);

    let script = format!(
        "echo {} | base64 -d > /tmp/read_peer.py && python3 /tmp/read_peer.py --mtu {} --count {} --depth {} --qp-timeout {} --timeout {} --host 10.0.2.2 --port {}",
        base64::engine::general_purpose::STANDARD.encode(PEER_SCRIPT),
        o.mtu,
        o.count,
        o.depth,
        o.qp_timeout,
        o.limit.as_secs(),
        o.server_port
    );
    let l = TcpListener::bind(("127.0.0.1", o.server_port))?;
    guest.start(&script)?;
    let mut s = crate::pingpong_run::accept(&l, rnic, guest, o.limit)?;
    let mut line = String::new();
    BufReader::new(s.try_clone()?).read_line(&mut line)?;
    let peer: GuestLine = serde_json::from_str(line.trim()).map_err(|e| {
        InteropError::Failed(format!("bad side-channel line {:?}: {e}", line.trim()))
    })?;
    let gid = crate::guest::parse_gid(&peer.gid)
        .ok_or_else(|| InteropError::Failed(format!("bad GID {:?}", peer.gid)))?;
    let addr = PortAddr {
        mac: guest.config().mac,
        ip: guest.config().ip,
    };
    rnic.connect_gid(o.mtu, addr, &gid, peer.qpn, peer.psn)?;
    wire.expect_psn(peer.psn);
    let mine = RnicLine {
        qpn: rnic.qpn(),
        psn: rnic.sq_psn,
        gid: rnic.gid().iter().map(|b| format!("{b:02x}")).collect(),
        addr: rnic.mr.addr(),
        rkey: rnic.mr.rkey(),
        len: region,
        seed: o.seed,
        rd_atomic: u32::from(rnic.max_dest_rd_atomic),
    };
    writeln!(s, "{}", serde_json::to_string(&mine).unwrap())?;

    let mut wcs = Vec::new();
    let result = loop {
        let r = rnic.step(guest, 2_000, o.limit)?;
        wire.drain(rnic);
        wcs.clear();
        rnic.poll(&mut wcs)?;
        if let Some(wc) = wcs.first() {
            return Err(InteropError::Failed(format!(
                "rnic, only the READ responder here, completed {:?} (wr_id {})",
                wc.opcode, wc.wr_id
            )));
        }
        if let Some(r) = r {
            break r;
        }
        if t0.elapsed() > o.limit {
            return Err(InteropError::Failed(format!(
                "the READ run did not finish within {:?}; guest output:\n{}",
                o.limit,
                guest.output_so_far()
            )));
        }
    };
    // What is still in flight (an ACK, a late response) goes too.
    rnic.world.run(20_000);
    wire.stop(rnic);
    drop(s);

    let out = result.output;
    let summary_line = out.lines().rev().find(|l| l.starts_with('{')).unwrap_or("");
    let summary: GuestSummary = serde_json::from_str(summary_line).unwrap_or_default();
    if result.rc != 0 || !summary.ok {
        return Err(InteropError::Failed(format!(
            "read_peer.py failed (exit {}): {}\n{}\nguest output:\n{out}",
            result.rc,
            if summary.errors.is_empty() {
                "no summary".to_string()
            } else {
                summary.errors.join("\n  ")
            },
            wire.summary()
        )));
    }
    if !wire.tally.wire_errors.is_empty() {
        return Err(InteropError::Failed(format!(
            "rxe completed every READ, but rnic's responses were wrong on the wire: {}",
            wire.summary()
        )));
    }
    // A READ must not touch the region.
    let now = rnic.buf.to_vec(0, region as usize);
    if now != wire.region {
        let at = now.iter().zip(&wire.region).position(|(a, b)| a != b);
        return Err(InteropError::Failed(format!(
            "rnic's region changed during the READs (first changed byte {at:?})"
        )));
    }
    let state = rnic.qp.state()?;
    if state != rnic_verbs::QpState::Rts {
        return Err(InteropError::Failed(format!(
            "rnic's QP is in {state:?} after the READs, not RTS"
        )));
    }
    let mut t = wire.tally;
    t.reads = summary.reads;
    t.bytes = summary.bytes;
    t.depth = summary.depth;
    t.data_secs = summary.data_secs;
    let mut rep = Report::collect(
        "RDMA READ (read_peer.py, pyverbs; rxe reads, rnic serves)",
        Role::Responder,
        rnic,
        o.mtu,
        summary.reads,
        0,
        summary.bytes,
        summary.bytes,
        out,
        t0.elapsed(),
    );
    rep.note = late_nak_note(&t);
    rep.read = Some(t);
    Ok(rep)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pattern_matches_the_script() {
        let p = read_pattern(1, 16);
        let hex: String = p.iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(hex, PY_PATTERN_1_16);
        assert_ne!(read_pattern(2, 16), p);
    }

    /// `python3 -c 'import read_peer as r; print(r.pattern(r.mix(1 ^
    /// r.READ_KEY_SALT), 0, 16).hex())'` (pyverbs stubbed).
    const PY_PATTERN_1_16: &str = "99aa6810ecd4cb9ab7031251e569537f";

    #[test]
    fn the_plan_matches_the_script() {
        // read_peer.py: plan(7, 1024, 65536) == ([(1, 3, 1), (15, 17, 1023),
        // (1051, 1053, 1024), (2088, 2090, 1025), (3126, 3128, 3089),
        // (6228, 6230, 65536), (65535, 71779, 1)], 71806)
        let (p, len) = read_plan(7, 1024, 65536);
        let sizes: Vec<u64> = p.iter().map(|r| r.len).collect();
        assert_eq!(sizes, [1, 1023, 1024, 1025, 3089, 65536, 1]);
        assert_eq!(
            p[0],
            PlannedRead {
                remote: 1,
                local: 3,
                len: 1
            }
        );
        assert_eq!(p[1].remote, 1 + 1 + GAP);
        assert_eq!(
            p[4],
            PlannedRead {
                remote: 3126,
                local: 3128,
                len: 3089
            }
        );
        assert_eq!(
            p[6],
            PlannedRead {
                remote: 65535,
                local: 71779,
                len: 1
            },
            "the last READ ends on the region's last byte"
        );
        assert_eq!(len, PY_PLAN_7_1024_LEN);
        assert_eq!(region_len(12, 4096), 1 << 18);
    }

    const PY_PLAN_7_1024_LEN: u64 = 71806;

    // The wire checker, fed frames built by rnic-wire: quiet on a correct
    // exchange, loud on each kind of wrong response.

    const BASE: u64 = 0x10_0000;
    const PMTU: u32 = 1024;

    fn frame(
        src: usize,
        cycle: u64,
        dropped: bool,
        f: rnic_wire::RoceFrame,
    ) -> rnic_sim::WireFrame {
        rnic_sim::WireFrame {
            cycle,
            src,
            data: f.encode(),
            fate: rnic_sim::SendReport {
                cycle,
                src,
                copies: vec![rnic_sim::CopyFate {
                    dst: 1 - src,
                    path: 0,
                    dropped,
                    duplicate: false,
                    corrupt_bit: None,
                    bad: false,
                    reordered: false,
                    arrival: cycle + 10,
                }],
                ..Default::default()
            },
        }
    }

    fn bth(opcode: u8, psn: u32) -> rnic_wire::Bth {
        rnic_wire::Bth {
            opcode,
            psn,
            ..Default::default()
        }
    }

    fn request(cycle: u64, psn: u32, off: u64, len: u32) -> rnic_sim::WireFrame {
        frame(
            1,
            cycle,
            false,
            rnic_wire::RoceFrame {
                bth: bth(opcode::RDMA_READ_REQUEST, psn),
                reth: Some(rnic_wire::Reth {
                    va: BASE + off,
                    rkey: 1,
                    dma_len: len,
                }),
                ..Default::default()
            },
        )
    }

    fn response(cycle: u64, op: u8, psn: u32, msn: u32, payload: &[u8]) -> rnic_sim::WireFrame {
        frame(
            0,
            cycle,
            false,
            rnic_wire::RoceFrame {
                bth: bth(op, psn),
                aeth: (op != opcode::RDMA_READ_RESPONSE_MIDDLE).then_some(rnic_wire::Aeth {
                    syndrome: 0x1f,
                    msn,
                }),
                payload: payload.to_vec(),
                ..Default::default()
            },
        )
    }

    fn nak(cycle: u64, psn: u32, msn: u32) -> rnic_sim::WireFrame {
        frame(
            0,
            cycle,
            false,
            rnic_wire::RoceFrame {
                bth: bth(opcode::ACKNOWLEDGE, psn),
                aeth: Some(rnic_wire::Aeth {
                    syndrome: 0x60,
                    msn,
                }),
                ..Default::default()
            },
        )
    }

    fn wire() -> (Wire, Vec<u8>) {
        let region = read_pattern(7, 1 << 16);
        let mut w = Wire::new(Responder::Rnic, PMTU, BASE, region.clone());
        w.expect_psn(100);
        (w, region)
    }

    fn feed(w: &mut Wire, frames: &[rnic_sim::WireFrame]) {
        for f in frames {
            w.frame(f);
        }
        w.settle(u64::MAX);
    }

    /// A READ of 2,500 bytes at offset 77 answered right: FIRST, MIDDLE, LAST.
    fn good_exchange(r: &[u8]) -> Vec<rnic_sim::WireFrame> {
        vec![
            request(0, 100, 77, 2500),
            response(100, opcode::RDMA_READ_RESPONSE_FIRST, 100, 1, &r[77..1101]),
            response(
                200,
                opcode::RDMA_READ_RESPONSE_MIDDLE,
                101,
                0,
                &r[1101..2125],
            ),
            response(300, opcode::RDMA_READ_RESPONSE_LAST, 102, 1, &r[2125..2577]),
        ]
    }

    #[test]
    fn the_wire_check_passes_a_right_read_and_its_re_request() {
        let (mut w, r) = wire();
        let mut f = good_exchange(&r);
        // the requester lost PSN 101 and asks again from there: answered
        // as a READ of its own, FIRST at 101
        f.push(request(400, 101, 1101, 1476));
        f.push(response(
            500,
            opcode::RDMA_READ_RESPONSE_FIRST,
            101,
            1,
            &r[1101..2125],
        ));
        f.push(response(
            600,
            opcode::RDMA_READ_RESPONSE_LAST,
            102,
            1,
            &r[2125..2577],
        ));
        feed(&mut w, &f);
        assert!(w.tally.wire_errors.is_empty(), "{:?}", w.tally.wire_errors);
        assert_eq!((w.tally.served, w.tally.re_requests), (1, 1));
        assert_eq!(w.tally.wire_bytes_checked, 2500 + 1476);
    }

    #[test]
    fn the_wire_check_names_a_wrong_byte_opcode_length_and_aeth() {
        let (_, r) = wire();
        let cases: [(usize, rnic_sim::WireFrame, &str); 4] = [
            (
                2,
                response(300, opcode::RDMA_READ_RESPONSE_LAST, 102, 1, &{
                    let mut p = r[2125..2577].to_vec();
                    p[9] ^= 0x40;
                    p
                }),
                "1 of its 452 bytes differ from region offset 2125, the first at byte 9",
            ),
            (
                1,
                response(
                    200,
                    opcode::RDMA_READ_RESPONSE_MIDDLE,
                    101,
                    0,
                    &r[1101 + 1024..2125 + 1024],
                ),
                "those bytes are the region's at offset 2125",
            ),
            (
                2,
                response(
                    300,
                    opcode::RDMA_READ_RESPONSE_MIDDLE,
                    102,
                    0,
                    &r[2125..2577],
                ),
                "is RDMA READ RESPONSE MIDDLE, want RDMA READ RESPONSE LAST",
            ),
            (
                2,
                response(300, opcode::RDMA_READ_RESPONSE_LAST, 102, 1, &r[2125..2576]),
                "carries 451 payload bytes, want 452",
            ),
        ];
        for (i, bad, want) in cases {
            let (mut w, r) = wire();
            let mut f = good_exchange(&r);
            f[i + 1] = bad;
            feed(&mut w, &f);
            let got = w.tally.wire_errors.join("; ");
            assert!(got.contains(want), "want {want:?} in {got:?}");
        }
        // (the AETH's presence is the opcode's: rnic-wire reads what is there)
        let (mut w, r) = wire();
        let mut f = good_exchange(&r);
        f[3] = frame(
            0,
            300,
            false,
            rnic_wire::RoceFrame {
                bth: bth(opcode::RDMA_READ_RESPONSE_LAST, 102),
                aeth: Some(rnic_wire::Aeth {
                    syndrome: 0x60,
                    msn: 1,
                }),
                payload: r[2125..2577].to_vec(),
                ..Default::default()
            },
        );
        feed(&mut w, &f);
        assert!(w
            .tally
            .wire_errors
            .join(";")
            .contains("AETH syndrome 0x60, not an ACK"));
    }

    #[test]
    fn a_sequence_nak_is_right_before_the_gap_is_answered_and_late_after() {
        // PSN 100 is overtaken by 101: rnic NAKs 100 (sequence error),
        // then 100 arrives and is answered. Right: NAK, then the response.
        let (mut w, r) = wire();
        feed(
            &mut w,
            &[
                request(0, 101, 0, 1),
                request(5, 100, 10, 1),
                nak(30, 100, 0),
                response(60, opcode::RDMA_READ_RESPONSE_ONLY, 100, 1, &r[10..11]),
            ],
        );
        assert!(w.tally.wire_errors.is_empty(), "{:?}", w.tally.wire_errors);
        assert_eq!(
            (w.tally.out_of_sequence, w.tally.seq_naks, w.tally.late_naks),
            (1, 1, 0)
        );
        // The same NAK after the response to PSN 100: late (what rnic did
        // when the NAK waited behind READ responses queued after it).
        let (mut w, r) = wire();
        feed(
            &mut w,
            &[
                request(0, 101, 0, 1),
                request(5, 100, 10, 1),
                response(60, opcode::RDMA_READ_RESPONSE_ONLY, 100, 1, &r[10..11]),
                nak(70, 100, 0),
            ],
        );
        assert!(w.tally.wire_errors.is_empty(), "{:?}", w.tally.wire_errors);
        assert_eq!(w.tally.late_naks, 1);
        assert!(late_nak_note(&w.tally).is_some());
        // A NAK with no gap behind it is an error.
        let (mut w, _) = wire();
        feed(&mut w, &[request(0, 100, 0, 1), nak(30, 100, 0)]);
        assert!(w.tally.wire_errors.join(";").contains("rnic sent a NAK"));
    }

    /// The same frame sent the other way (rnic reading, rxe serving).
    fn swap(mut f: rnic_sim::WireFrame) -> rnic_sim::WireFrame {
        f.src = 1 - f.src;
        f.fate.src = f.src;
        for c in &mut f.fate.copies {
            c.dst = 1 - f.src;
        }
        f
    }

    /// rnic reading read_plan(5, 1024, 64 KiB) from PSN 100: READs of 1,
    /// 1023, 1024, 1025 (PSNs 103-104) and 3089 bytes (the last, at the
    /// region's end: PSNs 105-108).
    fn reader() -> (Wire, Vec<u8>, Vec<PlannedRead>) {
        let region = read_pattern(7, 1 << 16);
        let (plan, _) = read_plan(5, PMTU, 1 << 16);
        let mut w = Wire::new(Responder::Guest, PMTU, BASE, region.clone());
        w.expect_psn(100);
        w.expect_requests(&plan, 1);
        (w, region, plan)
    }

    /// READ `k` of `plan` from its packet `i`, and rxe's answer.
    fn read_k(
        plan: &[PlannedRead],
        r: &[u8],
        k: usize,
        i: u64,
        t: u64,
    ) -> Vec<rnic_sim::WireFrame> {
        let psn0 = [100u32, 101, 102, 103, 105][k] + i as u32;
        let p = plan[k];
        let (off, len) = (p.remote + i * 1024, p.len - i * 1024);
        let n = len.div_ceil(1024);
        let mut f = vec![swap(request(t, psn0, off, len as u32))];
        for j in 0..n {
            let op = match (n, j) {
                (1, _) => opcode::RDMA_READ_RESPONSE_ONLY,
                (_, 0) => opcode::RDMA_READ_RESPONSE_FIRST,
                (_, j) if j == n - 1 => opcode::RDMA_READ_RESPONSE_LAST,
                _ => opcode::RDMA_READ_RESPONSE_MIDDLE,
            };
            let a = (off + j * 1024) as usize;
            let b = (off + len).min(off + (j + 1) * 1024) as usize;
            f.push(swap(response(t + 20 + j, op, psn0 + j as u32, 1, &r[a..b])));
        }
        f
    }

    #[test]
    fn rnic_reading_passes_the_plan_and_its_tails_sent_again() {
        let (mut w, r, plan) = reader();
        let mut f = Vec::new();
        for k in 0..5 {
            f.extend(read_k(&plan, &r, k, 0, 100 * k as u64));
        }
        // READ 4 again from its packet 2 (rnic lost responses 107-108)
        f.extend(read_k(&plan, &r, 4, 2, 1000));
        feed(&mut w, &f);
        assert!(w.tally.wire_errors.is_empty(), "{:?}", w.tally.wire_errors);
        assert_eq!(w.tally.responder, "rxe");
        assert_eq!(
            (w.tally.requests, w.tally.requests_checked, w.tally.served),
            (6, 6, 5)
        );
        assert_eq!((w.tally.resent, w.tally.re_requests), (1, 1));
        // 1 + 1 + 1 + 2 + 4 responses, and 2 again
        assert_eq!(w.tally.responses_delivered, 11);
        let bytes: u64 = plan.iter().map(|p| p.len).sum();
        assert_eq!(w.tally.wire_bytes_checked, bytes + 3089 - 2048);
    }

    #[test]
    fn rxe_answering_in_the_cycle_its_request_arrives_is_no_problem() {
        // the request sent at 0 arrives at 10; the guest's answer was read
        // in cycle 10 too (the poll after the delivery in the same cycle)
        let (mut w, r, plan) = reader();
        let mut f = read_k(&plan, &r, 0, 0, 0);
        f[1].cycle = 10;
        f[1].fate.cycle = 10;
        feed(&mut w, &f);
        assert!(w.tally.wire_errors.is_empty(), "{:?}", w.tally.wire_errors);
        assert_eq!(w.tally.wire_bytes_checked, 1);
    }

    #[test]
    fn rnic_reading_the_wrong_bytes_or_beyond_its_reads_is_named() {
        let cases: [(u32, u64, u32, &str); 4] = [
            // READ 1 at the wrong offset
            (
                101,
                16,
                1023,
                "READ 1) asks for 1023 bytes at region offset 16",
            ),
            // READ 3 sent again from its packet 1, the whole length
            (
                104,
                2088 + 1024,
                1025,
                "(READ 3, sent again from its packet 1) asks for 1025 bytes",
            ),
            // a PSN past the plan
            (109, 0, 1, "outside its 5 READs (PSNs 0x000064 to 0x00006c)"),
            (99, 0, 1, "outside its 5 READs"),
        ];
        for (psn, off, len, want) in cases {
            let (mut w, _, _) = reader();
            feed(&mut w, &[swap(request(0, psn, off, len))]);
            let got = w.tally.wire_errors.join("; ");
            assert!(got.contains(want), "want {want:?} in {got:?}");
            assert_eq!(w.tally.requests_checked, 0);
        }
        // the wrong rkey
        let (mut w, _, plan) = reader();
        let mut f = swap(request(0, 100, plan[0].remote, 1));
        let mut fr = rnic_wire::decode(&f.data).unwrap();
        fr.reth.as_mut().unwrap().rkey = 2;
        f.data = fr.encode();
        feed(&mut w, &[f]);
        assert!(
            w.tally.wire_errors.join(";").contains("with rkey 0x2"),
            "{:?}",
            w.tally.wire_errors
        );
        // rxe's wrong byte: named as rxe's
        let (mut w, r, plan) = reader();
        let mut f = read_k(&plan, &r, 0, 0, 0);
        f.extend(read_k(&plan, &r, 1, 0, 100));
        let mut fr = rnic_wire::decode(&f[3].data).unwrap();
        fr.payload[5] ^= 1;
        f[3].data = fr.encode();
        feed(&mut w, &f);
        let e = w.tally.wire_errors.join(";");
        assert!(e.contains("1 of its 1023 bytes differ"), "{e}");
        assert!(w.summary().starts_with("rxe's side of the link"));
    }

    #[test]
    fn psn_distance_wraps() {
        assert_eq!(psn_diff(0, 0xFF_FFFF), 1);
        assert_eq!(psn_diff(0xFF_FFFF, 0), -1);
        assert_eq!(psn_diff(5, 3), 2);
    }
}
