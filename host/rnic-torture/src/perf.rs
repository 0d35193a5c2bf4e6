//! perftest-style benchmarks over one or more RC connections, measured in
//! cycles of [`Device::now`] (simulated clock cycles on the simulator, so
//! the figures are deterministic).
//!
//! - [`write_bw`] (`ib_write_bw`): RDMA WRITEs of one size back to back,
//!   `window` in flight per QP, every one signaled; from the first doorbell
//!   to the last send completion (which needs the ACK). Optionally for a
//!   fixed number of cycles instead of messages ([`BwOpts::run_cycles`]),
//!   recording when each completion was seen ([`BwOpts::timeline`]), and
//!   with a look at the world between polls ([`write_bw_observed`]).
//! - [`write_lat`] (`ib_write_lat`-like, one way): a WRITE_WITH_IMM's
//!   doorbell to the moment the receiver polls its CQE.
//! - With [`Op::Read`] both measure RDMA READ instead (`ib_read_bw`,
//!   `ib_read_lat`): `a` reads `b`'s buffer into its own, and a READ's
//!   time ends when `a` polls its CQE (the data is in `a`'s memory then).
//!
//! [`wire_efficiency`] gives the best payload share of the link the RoCEv2
//! framing allows at a PMTU ([`read_wire_efficiency`]: a READ's responses).

use std::collections::HashMap;

use rnic_device::Device;
use rnic_verbs::{
    AccessFlags, AtomicOp, AtomicWr, CompletionQueue, Context, Mtu, RecvWr, SendFlags, SendWr,
    WcStatus, WorkCompletion, WrOpcode,
};

use crate::{Error, Result};
use rnic_harness::conn::{self, ConnOpts, PortAddr, QpPair};

/// Ethernet II header.
pub const ETH_HDR: u32 = 14;
/// IPv4 header (no options).
pub const IPV4_HDR: u32 = 20;
pub const UDP_HDR: u32 = 8;
pub const BTH: u32 = 12;
/// RETH: on the first (or only) packet of a WRITE.
pub const RETH: u32 = 16;
pub const IMMDT: u32 = 4;
pub const ICRC: u32 = 4;
/// AETH: on a READ response's first and last packet.
pub const AETH: u32 = 4;
/// Smallest frame the MAC sends (without FCS): shorter ones are padded.
pub const MIN_FRAME: u32 = 60;

/// Frames of one WRITE (`imm`: WRITE_WITH_IMM) of `len` bytes at `pmtu`:
/// the frame lengths as the NIC hands them to the MAC (no FCS, preamble or
/// inter-frame gap; the simulated MAC and fabric add none). RC puts a RETH
/// in the first packet, mp (`mp`) in every packet.
pub fn write_frames(len: u64, pmtu: u32, imm: bool, mp: bool) -> impl Iterator<Item = u32> {
    let pmtu = u64::from(pmtu);
    let n = len.div_ceil(pmtu).max(1);
    (0..n).map(move |p| {
        let payload = if p + 1 == n { len - p * pmtu } else { pmtu } as u32;
        let mut f = ETH_HDR + IPV4_HDR + UDP_HDR + BTH + ICRC + payload;
        if p == 0 || mp {
            f += RETH;
        }
        if imm && p + 1 == n {
            f += IMMDT;
        }
        // BTH pad count: payload padded to 4 bytes
        f += (4 - payload % 4) % 4;
        f.max(MIN_FRAME)
    })
}

/// Frames of the responses to one READ of `len` bytes at `pmtu`: an AETH on
/// the first and last (READ RESPONSE FIRST / LAST / ONLY), none between.
pub fn read_frames(len: u64, pmtu: u32) -> impl Iterator<Item = u32> {
    let pmtu = u64::from(pmtu);
    let n = len.div_ceil(pmtu).max(1);
    (0..n).map(move |p| {
        let payload = if p + 1 == n { len - p * pmtu } else { pmtu } as u32;
        let mut f = ETH_HDR + IPV4_HDR + UDP_HDR + BTH + ICRC + payload;
        if p == 0 || p + 1 == n {
            f += AETH;
        }
        f += (4 - payload % 4) % 4;
        f.max(MIN_FRAME)
    })
}

/// [`wire_efficiency`] of the responses to a READ of `len` bytes.
pub fn read_wire_efficiency(len: u64, pmtu: u32, data_w: u32) -> (f64, f64) {
    efficiency(len, read_frames(len, pmtu), data_w, 0)
}

fn efficiency(
    len: u64,
    frames: impl Iterator<Item = u32>,
    data_w: u32,
    gap_beats: u32,
) -> (f64, f64) {
    let w = u64::from(data_w / 8);
    let (mut beats, mut bytes) = (0u64, 0u64);
    for f in frames {
        beats += u64::from(f).div_ceil(w) + u64::from(gap_beats);
        bytes += u64::from(f);
    }
    (len as f64 / (beats * w) as f64, len as f64 / bytes as f64)
}

/// The best payload efficiency a WRITE of `len` bytes can reach on a link
/// of `data_w` bits per cycle: payload bits over the bits of the beats its
/// frames occupy (each frame a whole number of `data_w` beats, plus
/// `gap_beats` idle beats between frames; `mp`: a RETH in every packet).
/// `(beat-exact, byte-exact)`.
pub fn wire_efficiency(len: u64, pmtu: u32, data_w: u32, gap_beats: u32, mp: bool) -> (f64, f64) {
    efficiency(len, write_frames(len, pmtu, false, mp), data_w, gap_beats)
}

/// What the bandwidth and latency runs move.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Op {
    /// RDMA WRITE from `a` into `b` (latency: WRITE_WITH_IMM, to `b`'s CQE).
    #[default]
    Write,
    /// RDMA READ by `a` of `b`'s buffer (rc only; to `a`'s CQE).
    Read,
    /// Atomic fetch-and-add of 1 by `a` on the first 8 bytes of `b`'s
    /// buffer (rc only; `msg_size` must be 8; bandwidth runs only:
    /// `ib_atomic_bw`).
    FetchAdd,
}

/// `write_bw` settings.
#[derive(Debug, Clone)]
pub struct BwOpts {
    pub msg_size: u32,
    /// WRITEs in all (spread over the QPs).
    pub messages: u64,
    pub qps: u32,
    /// WRITEs in flight per QP.
    pub window: u32,
    pub mtu: Mtu,
    /// Give up after this many cycles without a completion.
    pub watchdog: u64,
    /// Requesters spray over 2^spray_log UDP source ports (0: one flow).
    pub spray_log: u8,
    /// RC, or the multipath transport.
    pub qp_type: rnic_verbs::QpType,
    /// Path health threshold of both NICs ([`ConnOpts::path_thresh`]).
    pub path_thresh: Option<u8>,
    /// Record every send completion in [`BwResult::timeline`].
    pub timeline: bool,
    /// Run this many cycles from the first doorbell instead of `messages`
    /// WRITEs (`messages` is then ignored): WRITEs are posted as long as
    /// the run lasts, and those still in flight at its end are left so.
    /// `None` (the default): `messages` WRITEs.
    pub run_cycles: Option<u64>,
    /// WRITEs, or READs.
    pub op: Op,
}

impl Default for BwOpts {
    /// 4 QPs x 8 WRITEs of 16 KiB in flight, 256 of them, PMTU 1024, RC
    /// over one flow, no timeline.
    fn default() -> Self {
        Self {
            msg_size: 16384,
            messages: 256,
            qps: 4,
            window: 8,
            mtu: Mtu::Mtu1024,
            watchdog: 20_000_000,
            spray_log: 0,
            qp_type: rnic_verbs::QpType::Rc,
            path_thresh: None,
            timeline: false,
            run_cycles: None,
            op: Op::Write,
        }
    }
}

/// `write_bw` outcome.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BwResult {
    /// WRITEs completed.
    pub messages: u64,
    pub bytes: u64,
    /// First doorbell to last completion ([`BwOpts::run_cycles`]: the
    /// run's length).
    pub cycles: u64,
    /// [`Device::now`] at the first doorbell.
    pub start: u64,
    /// With [`BwOpts::timeline`]: `(Device::now, bytes)` of every send
    /// completion, at the poll that saw it (so to within one
    /// [`Device::idle`] step of the CQE's write), in order. Empty otherwise.
    pub timeline: Vec<(u64, u64)>,
}

/// `write_lat` settings.
#[derive(Debug, Clone)]
pub struct LatOpts {
    pub msg_size: u32,
    pub iterations: u32,
    pub mtu: Mtu,
    pub watchdog: u64,
    /// WRITE_WITH_IMM (to the receiver's CQE), or READ (to the reader's).
    pub op: Op,
}

/// `write_lat` outcome: doorbell to receive CQE, in cycles.
#[derive(Debug, Clone, PartialEq)]
pub struct LatResult {
    pub iterations: u32,
    pub min: u64,
    pub median: u64,
    pub max: u64,
    pub mean: f64,
    /// The whole run (every iteration also waits for its send completion).
    pub cycles: u64,
}

fn check_status(what: &str, wc: &WorkCompletion) -> Result<()> {
    if wc.status != WcStatus::Success {
        return Err(Error::Config(format!(
            "{what}: completion {} failed with {:?} (NAK syndrome {:#x})",
            wc.wr_id, wc.status, wc.vendor_err
        )));
    }
    Ok(())
}

/// `ib_write_bw` between `a` (sender) and `b`.
pub fn write_bw<D: Device>(
    a: &Context<D>,
    addr_a: PortAddr,
    b: &Context<D>,
    addr_b: PortAddr,
    o: &BwOpts,
) -> Result<BwResult> {
    write_bw_observed(a, addr_a, b, addr_b, o, &mut |_| {})
}

/// [`write_bw`], calling `observe(Device::now)` at the start of the run and
/// after every poll of the send CQ (at least once per [`Device::idle`]
/// step), e.g. to sample the simulator's fabric counters as the run goes.
/// `observe` must not advance the device: the run's cycles stay those of
/// [`write_bw`].
pub fn write_bw_observed<D: Device>(
    a: &Context<D>,
    addr_a: PortAddr,
    b: &Context<D>,
    addr_b: PortAddr,
    o: &BwOpts,
    observe: &mut dyn FnMut(u64),
) -> Result<BwResult> {
    if o.msg_size == 0
        || o.qps == 0
        || o.window == 0
        || (o.run_cycles.is_none() && o.messages == 0)
        || o.run_cycles == Some(0)
        || (o.op == Op::FetchAdd && o.msg_size != 8)
    {
        return Err(Error::Config(
            "write_bw needs a positive size (8 for atomics), QP count, window and message count (or run length)"
                .into(),
        ));
    }
    // WRITEs to post in all: unbounded for a run of fixed length
    let messages = if o.run_cycles.is_some() {
        u64::MAX
    } else {
        o.messages
    };
    let conns = conn::connect(
        a,
        addr_a,
        b,
        addr_b,
        o.qps,
        &ConnOpts {
            mtu: o.mtu,
            sq_depth: o.window.next_power_of_two().max(2),
            rq_depth: 0,
            retry: conn::Retry::default(),
            spray_log: o.spray_log,
            qp_type: o.qp_type,
            path_thresh: o.path_thresh,
            qp_access: conn_access(o.op),
            ..ConnOpts::default()
        },
        (o.qps * o.window + 16).next_power_of_two(),
        1,
    )?;
    let len = o.msg_size as usize;
    let mut mrs = Vec::new();
    for _ in 0..o.qps {
        let src = a.alloc_dma(len)?;
        let dst = b.alloc_dma(len)?;
        let sm = a.reg_mr(&conns.pd_a, &src, 0, len, AccessFlags::LOCAL_WRITE)?;
        let dm = b.reg_mr(&conns.pd_b, &dst, 0, len, peer_access(o.op))?;
        mrs.push((src, dst, sm, dm));
    }
    let mut pairs = conns.pairs;
    let dev = a.device();
    let mut timeline = Vec::new();
    let r = stream(
        dev,
        &mut pairs,
        &conns.cq_a,
        &mut [WorkCompletion::default(); 64],
        Stream {
            window: o.window,
            messages,
            run_cycles: o.run_cycles,
            watchdog: o.watchdog,
            check: &|wc| check_status("write_bw", wc),
            post: &mut |p, i, wr_id, n| {
                let (_, _, sm, dm) = &mrs[i];
                let sge = [sm.sge(0, o.msg_size)?];
                let remote = dm.rdma_info(0)?;
                if o.op == Op::FetchAdd {
                    // (one doorbell each, as perftest posts atomics)
                    for x in 0..n {
                        p.send.post_atomic(&AtomicWr {
                            wr_id: wr_id + x,
                            op: AtomicOp::FetchAndAdd { add: 1 },
                            send_flags: SendFlags::SIGNALED,
                            sge: sge[0],
                            remote_addr: remote.remote_addr,
                            rkey: remote.rkey,
                        })?;
                    }
                    return Ok(());
                }
                let wrs: Vec<SendWr> = (0..n)
                    .map(|x| SendWr {
                        wr_id: wr_id + x,
                        opcode: match o.op {
                            Op::Write => WrOpcode::RdmaWrite,
                            Op::Read | Op::FetchAdd => WrOpcode::RdmaRead,
                        },
                        send_flags: SendFlags::SIGNALED,
                        sg_list: &sge,
                        imm_data: None,
                        rdma: Some(remote),
                    })
                    .collect();
                Ok(p.send.post_send_list(&wrs)?)
            },
            recv: None,
            observe: &mut |now, n| {
                if o.timeline {
                    timeline.extend((0..n).map(|_| (now, u64::from(o.msg_size))));
                }
                observe(now);
            },
            stalled: &|done, _| {
                let of = match o.run_cycles {
                    Some(_) => String::new(),
                    None => format!(" of {}", o.messages),
                };
                Error::Config(format!(
                    "write_bw: no completion for {} cycles ({done}{of} done)",
                    o.watchdog
                ))
            },
        },
    )?;
    Ok(BwResult {
        messages: r.sent,
        bytes: r.sent * u64::from(o.msg_size),
        cycles: match o.run_cycles {
            Some(_) => dev.now() - r.start,
            None => r.last - r.start,
        },
        start: r.start,
        timeline,
    })
}

/// What [`stream`] keeps going, and how.
pub(crate) struct Stream<'a, D: Device> {
    /// WRs in flight per QP.
    pub window: u32,
    /// WRs to post and send completions to wait for (`u64::MAX` with
    /// `run_cycles`).
    pub messages: u64,
    /// Stop this many cycles after the first doorbell instead.
    pub run_cycles: Option<u64>,
    /// Give up after this many cycles without a completion.
    pub watchdog: u64,
    /// Fails a send completion that is not a success.
    pub check: &'a dyn Fn(&WorkCompletion) -> Result<()>,
    /// Posts `n` signaled WRs, `wr_id` on, on pair `i`'s send QP.
    pub post: Post<'a, D>,
    /// A receive CQ, polled after the send CQ until it has given `messages`
    /// completions too, each handed over with the pairs (to post the
    /// receive WQE again).
    pub recv: Option<(&'a CompletionQueue<D>, OnRecv<'a, D>)>,
    /// Called with [`Device::now`] and the send completions of the poll, at
    /// the first doorbell (none) and after every poll.
    pub observe: &'a mut dyn FnMut(u64, usize),
    /// The error after `watchdog` idle cycles, from the send and receive
    /// completions so far.
    pub stalled: &'a dyn Fn(u64, u64) -> Error,
}

/// [`Stream::post`]: `(pair, i, wr_id, n)`.
pub(crate) type Post<'a, D> = &'a mut dyn FnMut(&mut QpPair<D>, usize, u64, u64) -> Result<()>;

/// What [`Stream::recv`] does with a receive completion, given the pairs.
pub(crate) type OnRecv<'a, D> = &'a mut dyn FnMut(&mut [QpPair<D>], &WorkCompletion) -> Result<()>;

/// [`stream`] outcome.
pub(crate) struct Streamed {
    /// [`Device::now`] at the first doorbell.
    pub start: u64,
    /// [`Device::now`] at the poll that saw the last completion.
    pub last: u64,
    /// Send completions.
    pub sent: u64,
}

/// The measured loop of [`write_bw`] and [`crate::qp_scale::run`]: keeps
/// `window` WRs in flight on every pair round robin, and polls `cq` (and
/// the receive CQ) into `wcs`, whose length sets how many a poll takes.
pub(crate) fn stream<D: Device>(
    dev: &D,
    pairs: &mut [QpPair<D>],
    cq: &CompletionQueue<D>,
    wcs: &mut [WorkCompletion],
    mut s: Stream<'_, D>,
) -> Result<Streamed> {
    let send_ix: HashMap<u32, usize> = pairs
        .iter()
        .enumerate()
        .map(|(i, p)| (p.send.qp_num(), i))
        .collect();
    let start = dev.now();
    let mut inflight = vec![0u32; pairs.len()];
    let (mut posted, mut sent, mut received) = (0u64, 0u64, 0u64);
    let mut last = start;
    (s.observe)(start, 0);
    while match s.run_cycles {
        Some(c) => dev.now() - start < c,
        None => sent < s.messages || (s.recv.is_some() && received < s.messages),
    } {
        for (i, p) in pairs.iter_mut().enumerate() {
            let n = u64::from(s.window - inflight[i]).min(s.messages - posted);
            if n == 0 {
                continue;
            }
            (s.post)(p, i, posted, n)?;
            posted += n;
            inflight[i] += n as u32;
        }
        let n = cq.poll(wcs)?;
        for wc in &wcs[..n] {
            (s.check)(wc)?;
            let i = *send_ix
                .get(&wc.qp_num)
                .ok_or_else(|| Error::Config(format!("completion of unknown QP {}", wc.qp_num)))?;
            inflight[i] -= 1;
            sent += 1;
        }
        let mut got = n;
        if let Some((rcq, on_recv)) = &mut s.recv {
            let m = rcq.poll(wcs)?;
            for wc in &wcs[..m] {
                on_recv(pairs, wc)?;
                received += 1;
            }
            got += m;
        }
        let now = dev.now();
        (s.observe)(now, n);
        if got == 0 {
            if now - last > s.watchdog {
                return Err((s.stalled)(sent, received));
            }
            dev.idle();
        } else {
            last = now;
        }
    }
    Ok(Streamed { start, last, sent })
}

/// One-way WRITE_WITH_IMM latency from `a` to `b`: the cycle of the doorbell
/// to the cycle the receiver's poll sees the CQE. The resolution is one
/// [`Device::idle`] step (make it 1 cycle on the simulator).
pub fn write_lat<D: Device>(
    a: &Context<D>,
    addr_a: PortAddr,
    b: &Context<D>,
    addr_b: PortAddr,
    o: &LatOpts,
) -> Result<LatResult> {
    if o.msg_size == 0 || o.iterations == 0 || (o.op == Op::FetchAdd && o.msg_size != 8) {
        return Err(Error::Config(
            "write_lat needs a positive size (8 for atomics) and iteration count".into(),
        ));
    }
    let mut conns = conn::connect(
        a,
        addr_a,
        b,
        addr_b,
        1,
        &ConnOpts {
            mtu: o.mtu,
            sq_depth: 4,
            rq_depth: 4,
            retry: conn::Retry::default(),
            spray_log: 0,
            qp_type: rnic_verbs::QpType::Rc,
            qp_access: conn_access(o.op),
            ..ConnOpts::default()
        },
        16,
        1,
    )?;
    let len = o.msg_size as usize;
    let src = a.alloc_dma(len)?;
    let dst = b.alloc_dma(len)?;
    let sm = a.reg_mr(&conns.pd_a, &src, 0, len, AccessFlags::LOCAL_WRITE)?;
    let dm = b.reg_mr(&conns.pd_b, &dst, 0, len, peer_access(o.op))?;
    let p = &mut conns.pairs[0];
    for x in 0..2 {
        p.recv.post_recv(&RecvWr {
            wr_id: x,
            sg_list: &[],
        })?;
    }
    let sge = [sm.sge(0, o.msg_size)?];
    let remote = dm.rdma_info(0)?;
    let rdma = Some(remote);
    let dev = a.device();
    let start = dev.now();
    let mut samples = Vec::with_capacity(o.iterations as usize);
    let wait = |cq: &rnic_verbs::CompletionQueue<D>, what: &str| -> Result<WorkCompletion> {
        let t = dev.now();
        loop {
            if let Some(wc) = cq.poll_one()? {
                check_status(what, &wc)?;
                return Ok(wc);
            }
            if dev.now() - t > o.watchdog {
                return Err(Error::Config(format!(
                    "write_lat: no {what} completion for {} cycles",
                    o.watchdog
                )));
            }
            dev.idle();
        }
    };
    for it in 0..o.iterations {
        let t0 = dev.now();
        if o.op == Op::Read {
            p.send.post_send(&SendWr {
                wr_id: u64::from(it),
                opcode: WrOpcode::RdmaRead,
                send_flags: SendFlags::SIGNALED,
                sg_list: &sge,
                imm_data: None,
                rdma,
            })?;
            wait(&conns.cq_a, "READ")?;
            samples.push(dev.now() - t0);
            continue;
        }
        if o.op == Op::FetchAdd {
            let r = remote;
            p.send.post_atomic(&AtomicWr {
                wr_id: u64::from(it),
                op: AtomicOp::FetchAndAdd { add: 1 },
                send_flags: SendFlags::SIGNALED,
                sge: sge[0],
                remote_addr: r.remote_addr,
                rkey: r.rkey,
            })?;
            wait(&conns.cq_a, "FETCH_ADD")?;
            samples.push(dev.now() - t0);
            continue;
        }
        p.send.post_send(&SendWr {
            wr_id: u64::from(it),
            opcode: WrOpcode::RdmaWriteWithImm,
            send_flags: SendFlags::SIGNALED,
            sg_list: &sge,
            imm_data: Some(it.to_be()),
            rdma,
        })?;
        wait(&conns.cq_b, "receive")?;
        samples.push(dev.now() - t0);
        p.recv.post_recv(&RecvWr {
            wr_id: u64::from(it) + 2,
            sg_list: &[],
        })?;
        wait(&conns.cq_a, "send")?;
    }
    let cycles = dev.now() - start;
    let mean = samples.iter().sum::<u64>() as f64 / samples.len() as f64;
    samples.sort_unstable();
    Ok(LatResult {
        iterations: o.iterations,
        min: samples[0],
        median: samples[samples.len() / 2],
        max: samples[samples.len() - 1],
        mean,
        cycles,
    })
}

/// What `b`'s QP lets `a` do.
fn conn_access(op: Op) -> AccessFlags {
    match op {
        Op::Write => AccessFlags::REMOTE_WRITE,
        Op::Read => AccessFlags::REMOTE_WRITE | AccessFlags::REMOTE_READ,
        Op::FetchAdd => AccessFlags::REMOTE_WRITE | AccessFlags::REMOTE_ATOMIC,
    }
}

/// `b`'s region.
fn peer_access(op: Op) -> AccessFlags {
    AccessFlags::LOCAL_WRITE
        | match op {
            Op::Write => AccessFlags::REMOTE_WRITE,
            Op::Read => AccessFlags::REMOTE_READ,
            Op::FetchAdd => AccessFlags::REMOTE_ATOMIC,
        }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_of_a_write() {
        // 64 KiB at 4096: 16 frames of 4096 + 58, the first with RETH.
        let f: Vec<u32> = write_frames(65536, 4096, false, false).collect();
        assert_eq!(f.len(), 16);
        assert_eq!(f[0], 4096 + 58 + 16);
        assert_eq!(f[1], 4096 + 58);
        // a 1-byte write: one padded frame
        let f: Vec<u32> = write_frames(1, 4096, false, false).collect();
        assert_eq!(f, vec![14 + 20 + 8 + 12 + 16 + 4 + 4]);
        let f: Vec<u32> = write_frames(4097, 4096, true, false).collect();
        assert_eq!(f, vec![4096 + 74, 58 + 4 + 4]);
        let (beat, byte) = wire_efficiency(65536, 4096, 64, 0, false);
        assert!(beat < byte && byte < 1.0 && beat > 0.98, "{beat} {byte}");
        // mp: a RETH in every packet
        let f: Vec<u32> = write_frames(65536, 4096, false, true).collect();
        assert!(f.iter().all(|&x| x == 4096 + 58 + 16), "{f:?}");
        assert!(wire_efficiency(65536, 4096, 64, 0, true).0 < beat);
    }
}
