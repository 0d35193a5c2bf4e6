//! perftest (`ib_write_bw`, `ib_send_lat`, `ib_read_bw`, `ib_read_lat`,
//! `ib_atomic_bw`) against rnic, in both roles, over perftest's own TCP
//! control channel ([`crate::perftest`]).
//!
//! perftest cannot check its data; in the READ tests with rnic as the
//! server, rnic's region holds the seeded pattern of [`crate::read_run`]
//! and rnic's side checks every READ response it sends on the wire against
//! it ([`crate::read_run`]'s wire tally: requests, re-requests, responses,
//! NAKs). With rnic as the client (the reader), every READ must complete
//! with success, and rnic must have placed at least one response per
//! path MTU of each (`port.rx_read_resp`); perftest's region holds
//! `rand()` bytes, so the bytes are not compared. In `ib_atomic_bw` with
//! rnic as the server, rnic's region holds chosen operands, and
//! [`crate::atomic_run`] checks every answer on the wire, the counters and
//! the region afterwards; with rnic as the client, [`crate::atomic_client`]
//! checks its atomics on the wire, each completion and the original value
//! placed for it, each operand's values in sequence and the counters.
//!
//! The exchange before the data phase needs nothing from the simulation and
//! runs on this thread; the part after it can wait for the guest's program,
//! which in turn may wait for rnic's ACKs, so it runs on a helper thread
//! while this one keeps the simulation going.

use std::io::ErrorKind;
use std::net::{TcpListener, TcpStream};
use std::time::{Duration, Instant};

use rnic_harness::conn::PortAddr;
use rnic_verbs::{AccessFlags, WcOpcode, WrOpcode};

use crate::atomic_client::{self, ClientWire};
use crate::atomic_run::{self, AtomicWire};
use crate::guest::Guest;
use crate::perftest::{self, AtomicOp, BwReport, Dest, Handshake, IbvMtu, Params, Stage, TestKind};
use crate::suite::{RunSpec, Test};
use crate::{InteropError, Report, Result, Rnic, Role};

const RECV_DEPTH: u32 = 32;

fn kind_of(t: Test) -> TestKind {
    match t {
        Test::WriteBw => TestKind::WriteBw,
        Test::ReadBw => TestKind::ReadBw,
        Test::ReadLat => TestKind::ReadLat,
        Test::AtomicBw | Test::AtomicBwCas => TestKind::AtomicBw,
        _ => TestKind::SendLat,
    }
}

/// The atomic of the `ib_atomic_bw` tests.
fn atomic_of(t: Test) -> Option<AtomicOp> {
    match t {
        Test::AtomicBw => Some(AtomicOp::FetchAndAdd),
        Test::AtomicBwCas => Some(AtomicOp::CmpAndSwap),
        _ => None,
    }
}

fn is_read(kind: TestKind) -> bool {
    matches!(kind, TestKind::ReadBw | TestKind::ReadLat)
}

pub fn run(rnic: &mut Rnic, guest: &mut Guest, spec: &RunSpec) -> Result<Report> {
    let kind = kind_of(spec.test);
    let t0 = Instant::now();
    let mtu = IbvMtu::from_bytes(spec.mtu)
        .ok_or_else(|| InteropError::Failed(format!("MTU {}", spec.mtu)))?;
    let atomic = atomic_of(spec.test);
    // ib_atomic_bw takes no other size than its 8 bytes
    let size = if atomic.is_some() {
        perftest::ATOMIC_SIZE as u32
    } else {
        spec.size
    };
    let mut params = Params::new(kind);
    params.size = u64::from(size);
    params.iters = u64::from(spec.iters);
    params.mtu = mtu;
    params.rx_depth = RECV_DEPTH;
    let program = match atomic {
        Some(op) => format!(
            "{} -d rxe0 -i 1 -x 1 -F -A {} -n {} -m {}",
            kind.program(),
            op.arg(),
            spec.iters,
            spec.mtu
        ),
        None => format!(
            "{} -d rxe0 -i 1 -x 1 -F -s {} -n {} -m {}",
            kind.program(),
            size,
            spec.iters,
            spec.mtu
        ),
    };
    let mut local = [Dest::new(
        rnic.qpn(),
        rnic.sq_psn,
        rnic.mr.rkey(),
        rnic.mr.addr(),
        rnic.gid(),
    )];
    let mut wire = None;
    if is_read(kind) && spec.role == Role::Requester {
        if rnic.max_rd_atomic == 0 {
            return Err(InteropError::Failed(format!(
                "this rnic build does not issue RDMA READ (READ_EN=0), which {} as the client needs",
                kind.program()
            )));
        }
        // (the server grants the client's out_reads as its max_dest_rd_atomic)
        local[0].out_reads = u32::from(rnic.max_rd_atomic);
    } else if is_read(kind) {
        if rnic.max_dest_rd_atomic == 0 {
            return Err(InteropError::Failed(format!(
                "this rnic build does not serve RDMA READ (READ_EN=0), which {} needs",
                kind.program()
            )));
        }
        // The READs rnic grants: the client's max_rd_atomic.
        local[0].out_reads = u32::from(rnic.max_dest_rd_atomic);
        let region = crate::read_run::read_pattern(spec.seed, rnic.opts.buf_len);
        rnic.buf.write(0, &region);
        wire = Some(crate::read_run::Wire::start(rnic, spec.mtu, region));
    } else if atomic.is_some() && spec.role == Role::Requester {
        if !rnic.issues_atomics() {
            return Err(InteropError::Failed(format!(
                "this rnic build does not issue atomics (id.verbs bit 6 clear or max_qp_init_rd_atom {}; rnic build --verbs ...,atomic), which {} as the client needs",
                rnic.max_rd_atomic,
                kind.program()
            )));
        }
        // (as the READ client does; a BW server stops at RTR and does not
        // use the client's out_reads)
        local[0].out_reads = u32::from(rnic.max_rd_atomic);
    } else if atomic.is_some() {
        if rnic.max_dest_rd_atomic == 0 || !rnic.qp_access.contains(AccessFlags::REMOTE_ATOMIC) {
            return Err(InteropError::Failed(format!(
                "{} needs rnic to execute atomics: this build grants {} responder resources and its QP's access is {:?} (REMOTE_ATOMIC needed)",
                kind.program(),
                rnic.max_dest_rd_atomic,
                rnic.qp_access
            )));
        }
        // The atomics rnic grants outstanding: the client's max_rd_atomic.
        local[0].out_reads = u32::from(rnic.max_dest_rd_atomic);
    }
    let server_atomic = atomic.filter(|_| spec.role == Role::Responder);
    let client_atomic = atomic.filter(|_| spec.role == Role::Requester);
    let atomic_before = match server_atomic {
        Some(_) => Some(atomic_run::CountersBefore::read(rnic)?),
        None => None,
    };
    let client_before = match client_atomic {
        Some(_) => Some(atomic_client::CountersBefore::read(rnic)?),
        None => None,
    };
    let seed = spec.seed;
    let buf_len = rnic.opts.buf_len;
    let stream = match spec.role {
        Role::Requester => {
            guest.start(&program)?;
            connect_retry(guest, spec.limit)?
        }
        Role::Responder => {
            let l = TcpListener::bind(("127.0.0.1", 18517))?;
            guest.start(&format!("{program} -p 18517 10.0.2.2"))?;
            let s = crate::pingpong_run::accept(&l, rnic, guest, spec.limit)?;
            s.set_nodelay(true)?;
            s
        }
    };
    let peer_mac = guest.config().mac;
    let guest_ip = guest.config().ip;
    // rnic's part of the exchange's two stops.
    let mut hook = |st: Stage, hs: &Handshake| -> std::result::Result<(), perftest::HookError> {
        match st {
            Stage::Connect => {
                if hs.region_len() > rnic.opts.buf_len as u64 {
                    return Err(format!(
                        "perftest's region is {} bytes, rnic's buffer {}",
                        hs.region_len(),
                        rnic.opts.buf_len
                    )
                    .into());
                }
                if server_atomic.is_some() {
                    // The operands before the client can reach them.
                    rnic.buf
                        .write(0, &atomic_run::initial_region(seed, buf_len, hs));
                }
                let r = &hs.remote[0];
                let peer = PortAddr {
                    mac: peer_mac,
                    ip: guest_ip,
                };
                rnic.connect_gid(hs.negotiated.mtu.bytes(), peer, &r.gid, r.qpn, r.psn)
                    .map_err(|e| e.to_string())?;
            }
            Stage::Arm => {
                if kind == TestKind::SendLat {
                    let half = rnic.opts.buf_len / 2;
                    for _ in 0..RECV_DEPTH.min(spec.iters) {
                        rnic.post_recv(0, half, size).map_err(|e| e.to_string())?;
                    }
                }
            }
        }
        Ok(())
    };
    let mut stream = stream;
    let hs = match spec.role {
        Role::Requester => {
            perftest::client_handshake(&mut stream, kind, &params, &local, &mut hook)?
        }
        Role::Responder => {
            perftest::server_handshake(&mut stream, kind, &params, &local, &mut hook)?
        }
    };
    tracing::info!(?kind, role = ?spec.role, mtu = hs.negotiated.mtu.bytes(), peer = %hs.remote[0], "perftest connected");
    if let Some(w) = wire.as_mut() {
        w.expect_psn(hs.remote[0].psn);
    }
    // (the simulation has not run since the exchange began: every atomic
    // is still to come)
    let initial = server_atomic.map(|_| atomic_run::initial_region(seed, buf_len, &hs));
    let mut atomic_wire = server_atomic
        .zip(initial.clone())
        .map(|(op, region)| AtomicWire::start(rnic, &hs, op, region));
    let mut client_wire = client_atomic.map(|op| ClientWire::start(rnic, &hs, op, rnic.sq_psn));

    let iters = u64::from(spec.iters);
    let (mut sent, mut recvd, mut completed) = (0u64, 0u64, 0u64);
    let mut guest_result = None;
    let mut wcs = Vec::new();
    let data_t0 = Instant::now();
    let mut finisher: Option<std::thread::JoinHandle<perftest::Result<perftest::Finish>>> = None;
    let mut finish = None;
    let mut stream = Some(stream);
    let half = rnic.opts.buf_len / 2;
    let reads_before = rnic.counters()?.rx_read_resp;
    if wire.is_none() && atomic.is_none() {
        let pattern: Vec<u8> = (0..size).map(|i| (i as u8) ^ 0xA5).collect();
        rnic.buf.write(0, &pattern);
    }
    loop {
        // Post what the role and the test allow now.
        match (kind, spec.role) {
            (TestKind::WriteBw, Role::Requester) => {
                while sent < iters && sent - completed < 32 {
                    let off = hs.msg_offset(sent);
                    rnic.post_send(
                        sent,
                        WrOpcode::RdmaWrite,
                        off as usize,
                        size,
                        Some((hs.remote[0].vaddr + off, hs.remote[0].rkey)),
                        None,
                    )?;
                    sent += 1;
                }
            }
            (TestKind::ReadBw | TestKind::ReadLat, Role::Requester) => {
                // ib_read_lat one at a time; ib_read_bw as many as the
                // server grants (its out_reads), at most rnic's own
                let depth = if kind == TestKind::ReadLat {
                    1
                } else {
                    u64::from(
                        hs.remote[0]
                            .out_reads
                            .clamp(1, u32::from(rnic.max_rd_atomic)),
                    )
                };
                while sent < iters && sent - completed < depth {
                    let off = hs.msg_offset(sent);
                    rnic.post_send(
                        sent,
                        WrOpcode::RdmaRead,
                        off as usize,
                        size,
                        Some((hs.remote[0].vaddr + off, hs.remote[0].rkey)),
                        None,
                    )?;
                    sent += 1;
                }
            }
            (TestKind::AtomicBw, Role::Requester) => {
                // perftest's client keeps its tx depth posted and its QP
                // holds max_rd_atomic (the server's out_reads) in flight;
                // rnic posts no more than that, at most its own
                // max_rd_atomic, so no two atomics in flight share a local
                // buffer
                let depth = u64::from(
                    hs.remote[0]
                        .out_reads
                        .clamp(1, u32::from(rnic.max_rd_atomic)),
                );
                let op = client_atomic.expect("an atomic test");
                while sent < iters && sent - completed < depth {
                    let off = hs.msg_offset(sent);
                    rnic.buf
                        .write(off as usize, &atomic_client::poison(sent).to_le_bytes());
                    rnic.post_atomic(
                        sent,
                        atomic_client::verbs_op(op),
                        off as usize,
                        hs.remote[0].vaddr + off,
                        hs.remote[0].rkey,
                    )?;
                    sent += 1;
                }
                if let Some(w) = client_wire.as_mut() {
                    w.tally.depth = depth as u32;
                }
            }
            (TestKind::SendLat, role) => {
                // Ping-pong: the client sends first; after that each side
                // sends once it has received.
                let may = if role == Role::Requester {
                    sent == 0 || recvd >= sent
                } else {
                    recvd > sent
                };
                if sent < iters && may && completed == sent {
                    rnic.post_send(sent, WrOpcode::Send, 0, size, None, None)?;
                    sent += 1;
                }
            }
            _ => {}
        }
        let data_done = match (kind, spec.role) {
            (
                TestKind::WriteBw | TestKind::ReadBw | TestKind::ReadLat | TestKind::AtomicBw,
                Role::Requester,
            ) => completed == iters,
            // Passive servers: the client's READs, WRITEs or atomics need
            // only answers.
            (
                TestKind::WriteBw | TestKind::ReadBw | TestKind::ReadLat | TestKind::AtomicBw,
                Role::Responder,
            ) => true,
            _ => completed == iters && recvd == iters,
        };
        // After our data phase: perftest's closing exchange, on a thread.
        if data_done && finisher.is_none() && finish.is_none() {
            let ready = match spec.role {
                Role::Requester => true,
                // A server may only enter it once the client has: it reads
                // first, and the client writes only after its data phase.
                Role::Responder => readable(stream.as_ref().expect("stream"))?,
            };
            if ready {
                let mut s = stream.take().expect("stream");
                let hs2 = hs.clone();
                let role = spec.role;
                let report = (kind.exchanges_bw_reports() && role == Role::Requester)
                    .then(|| BwReport::from_run(u64::from(size), iters, data_t0.elapsed(), false));
                let rep0 =
                    (kind.exchanges_bw_reports() && role == Role::Responder).then(BwReport::zero);
                s.set_read_timeout(Some(Duration::from_secs(120)))?;
                finisher = Some(std::thread::spawn(move || match role {
                    Role::Requester => perftest::client_finish(&mut s, &hs2, report.as_ref()),
                    Role::Responder => perftest::server_finish(&mut s, &hs2, rep0.as_ref()),
                }));
            }
        }
        if finisher.as_ref().is_some_and(|h| h.is_finished()) {
            let r = finisher.take().expect("thread").join().map_err(|_| {
                InteropError::Failed("the perftest closing exchange panicked".into())
            })?;
            finish = Some(r?);
        }
        if finish.is_some() && guest_result.is_some() {
            break;
        }
        let stepped = rnic.step(guest, 2_000, spec.limit);
        if let Some(w) = wire.as_mut() {
            w.drain(rnic);
        }
        if let Some(w) = atomic_wire.as_mut() {
            w.drain(rnic);
        }
        if let Some(w) = client_wire.as_mut() {
            w.drain(rnic);
        }
        if let Some(r) = stepped? {
            if r.rc != 0 {
                if let Some(w) = atomic_wire.as_mut() {
                    w.stop(rnic);
                }
                if let Some(w) = client_wire.as_mut() {
                    w.stop(rnic);
                }
                return Err(InteropError::Failed(format!(
                    "the guest's `{program}` failed (exit {}) with rnic at {sent} sent, {recvd} received:\n{}{}{}{}",
                    r.rc,
                    r.output,
                    wire.as_ref().map(|w| format!("\n{}", w.summary())).unwrap_or_default(),
                    atomic_wire.as_ref().map(|w| format!("\n{}", w.summary())).unwrap_or_default(),
                    client_wire.as_ref().map(|w| format!("\n{}\nthe last frames:\n  {}", w.summary(), w.recent())).unwrap_or_default()
                )));
            }
            guest_result = Some(r);
        }
        wcs.clear();
        if let Err(e) = rnic.poll(&mut wcs) {
            return Err(match client_wire.as_mut() {
                Some(w) => {
                    w.stop(rnic);
                    InteropError::Failed(format!(
                        "{e} (rnic at {sent} atomics posted, {completed} completed)\n{}\nthe last frames:\n  {}",
                        w.summary(),
                        w.recent()
                    ))
                }
                None => e,
            });
        }
        for wc in &wcs {
            match wc.opcode {
                WcOpcode::RdmaWrite | WcOpcode::Send | WcOpcode::RdmaRead => completed += 1,
                WcOpcode::CompSwap | WcOpcode::FetchAdd if client_atomic.is_some() => {
                    // In order, the run's opcode, 8 bytes; the value in
                    // the local buffer now (the CQE comes behind it).
                    let op = client_atomic.expect("an atomic test");
                    let want = atomic_client::wc_opcode(op);
                    if wc.opcode != want || wc.wr_id != completed || wc.byte_len != 8 {
                        return Err(InteropError::Failed(format!(
                            "rnic's completion {completed} is {:?} wr_id {} byte_len {}; {want:?} wr_id {completed} byte_len 8 expected",
                            wc.opcode, wc.wr_id, wc.byte_len
                        )));
                    }
                    let off = hs.msg_offset(completed) as usize;
                    let b = rnic.buf.to_vec(off, 8);
                    let v = u64::from_le_bytes(b.try_into().expect("8 bytes"));
                    if let Some(w) = client_wire.as_mut() {
                        w.completed(completed, v);
                    }
                    completed += 1;
                }
                WcOpcode::Recv => {
                    if wc.byte_len != size {
                        return Err(InteropError::Failed(format!(
                            "SEND {recvd} from the guest: {} bytes, {size} expected",
                            wc.byte_len
                        )));
                    }
                    recvd += 1;
                    if recvd + u64::from(RECV_DEPTH.min(spec.iters)) <= iters {
                        rnic.post_recv(0, half, size)?;
                    }
                }
                op => {
                    return Err(InteropError::Failed(format!(
                        "unexpected completion {op:?}"
                    )))
                }
            }
        }
        if t0.elapsed() > spec.limit {
            return Err(InteropError::Failed(format!(
                "{} did not finish within {:?}: rnic sent {sent} (completed {completed}), received {recvd}; guest output:\n{}{}{}",
                kind.program(),
                spec.limit,
                guest.output_so_far(),
                atomic_wire.as_ref().map(|w| format!("\n{}", w.summary())).unwrap_or_default(),
                client_wire
                    .as_ref()
                    .map(|w| format!("\n{}\nthe last frames:\n  {}", w.summary(), w.recent()))
                    .unwrap_or_default()
            )));
        }
    }
    let out = guest_result.map(|r| r.output).unwrap_or_default();
    if let Some(p) = finish.as_ref().and_then(|f| f.peer_report.as_ref()) {
        tracing::info!(?p, "perftest peer report");
        // A passive ib_write_bw server sees no completion; the client's
        // report says how many WRITEs it completed.
        if kind == TestKind::WriteBw && spec.role == Role::Responder {
            recvd = p.iters;
        }
    }
    let mut checked = 0;
    let mut read = None;
    let mut atomic_tally = None;
    if let (Some(w), Some(init), Some(before)) = (atomic_wire, initial.as_ref(), atomic_before) {
        let reported = finish.as_ref().and_then(|f| f.peer_report).map(|p| p.iters);
        let t = atomic_run::finish(rnic, w, &hs, init, before, reported)?;
        // rnic received and executed the atomics, and answered each:
        // the original values checked on the wire and the operands after.
        recvd = t.executed;
        sent = t.executed;
        checked = 8 * (t.orig_values_checked + t.operands_checked);
        atomic_tally = Some(t);
    }
    let mut client_tally = None;
    if let (Some(w), Some(before)) = (client_wire, client_before) {
        let t = atomic_client::finish(rnic, w, before)?;
        // rnic issued the atomics and received an answer for each: the
        // original values checked where rnic placed them.
        sent = t.completed;
        recvd = t.completed;
        checked = 8 * t.values_checked;
        client_tally = Some(t);
        // The BW report: the server prints the client's (ours) as its
        // result, `#bytes #iterations BW peak BW average MsgRate`.
        let printed = server_printed_iters(&out, u64::from(size));
        if printed != Some(iters) {
            return Err(InteropError::Failed(format!(
                "{} (rnic the client) finished, but the server's result line counts {} iterations, rnic's report said {iters}; guest output:\n{out}",
                kind.program(),
                printed.map_or("no".to_string(), |n| n.to_string())
            )));
        }
    }
    if is_read(kind) && spec.role == Role::Requester {
        // every READ completed with success (rnic.poll refuses any other);
        // each placed its responses
        let placed = rnic.counters()?.rx_read_resp.wrapping_sub(reads_before);
        let want = iters * u64::from(size.div_ceil(hs.negotiated.mtu.bytes()).max(1));
        if u64::from(placed) < want {
            return Err(InteropError::Failed(format!(
                "{} finished, but rnic placed {placed} READ responses for {iters} READs of {size} B ({want} expected)",
                kind.program()
            )));
        }
    }
    if let Some(mut w) = wire {
        // What is still in flight (a late response, an ACK) goes too.
        rnic.world.run(20_000);
        w.stop(rnic);
        if !w.tally.wire_errors.is_empty() {
            return Err(InteropError::Failed(format!(
                "{} finished, but rnic's READ responses were wrong on the wire: {}",
                kind.program(),
                w.summary()
            )));
        }
        if w.tally.served != iters {
            return Err(InteropError::Failed(format!(
                "{} asked for {iters} READs, rnic received {}: {}",
                kind.program(),
                w.tally.served,
                w.summary()
            )));
        }
        // rnic served the READs: its sends, checked on the wire.
        sent = w.tally.served;
        checked = w.tally.wire_bytes_checked;
        w.tally.reads = w.tally.served;
        w.tally.bytes = w.tally.served_bytes;
        // ib_read_lat has one READ outstanding; ib_read_bw as many as rnic
        // grants (its max_rd_atomic is rnic's out_reads).
        w.tally.depth = if kind == TestKind::ReadLat {
            1
        } else {
            u32::from(rnic.max_dest_rd_atomic)
        };
        read = Some(w.tally);
    }
    let mut rep = Report::collect(
        &format!("perftest {}", kind.program()),
        spec.role,
        rnic,
        hs.negotiated.mtu.bytes(),
        sent,
        recvd,
        sent * u64::from(size),
        checked,
        out,
        t0.elapsed(),
    );
    rep.note = read.as_ref().and_then(crate::read_run::late_nak_note);
    if let Some(t) = atomic_tally
        .as_ref()
        .filter(|t| t.re_requests_unanswered > 0)
    {
        rep.note = Some(format!(
            "rnic left {} of the guest's {} re-sent atomics unanswered (dropped, port.rx_drop_psn; the guest asked again); the first: {}",
            t.re_requests_unanswered,
            t.re_requests,
            t.unanswered_notes.first().map_or("", String::as_str)
        ));
    }
    rep.read = read;
    rep.atomic = atomic_tally;
    rep.atomic_client = client_tally;
    Ok(rep)
}

/// The iterations of a BW server's result line (`#bytes #iterations BW
/// peak BW average MsgRate`, the client's report), the last one for `size`
/// bytes.
fn server_printed_iters(out: &str, size: u64) -> Option<u64> {
    out.lines().rev().find_map(|l| {
        let t: Vec<&str> = l.split_whitespace().collect();
        (t.len() >= 5 && t[0].parse::<u64>().ok() == Some(size))
            .then(|| t[1].parse::<u64>().ok())
            .flatten()
    })
}

/// Whether the peer has written something we have not read yet.
fn readable(s: &TcpStream) -> Result<bool> {
    s.set_nonblocking(true)?;
    let mut b = [0u8; 1];
    let r = match s.peek(&mut b) {
        Ok(0) => Err(InteropError::Failed(
            "the guest's perftest closed the control connection".into(),
        )),
        Ok(_) => Ok(true),
        Err(e) if e.kind() == ErrorKind::WouldBlock => Ok(false),
        Err(e) => Err(e.into()),
    };
    s.set_nonblocking(false)?;
    r
}

/// Connect to the guest's perftest server through the forwarded port; it
/// listens a moment after it starts.
fn connect_retry(guest: &mut Guest, limit: Duration) -> Result<TcpStream> {
    let t0 = Instant::now();
    loop {
        // QEMU's user network accepts at once and then closes if nothing
        // listens in the guest: only a version message back proves a server.
        if let Ok(s) = TcpStream::connect(("127.0.0.1", guest.control_port)) {
            s.set_nodelay(true)?;
            s.set_read_timeout(Some(Duration::from_secs(60)))?;
            std::thread::sleep(Duration::from_secs(1));
            s.set_nonblocking(true)?;
            let mut b = [0u8; 1];
            // A perftest server reads first: silence means it is there.
            let alive = matches!(s.peek(&mut b), Err(ref e) if e.kind() == ErrorKind::WouldBlock);
            s.set_nonblocking(false)?;
            if alive {
                return Ok(s);
            }
        }
        if let Some(res) = guest.poll()? {
            return Err(InteropError::Failed(format!(
                "the guest's perftest server ended (exit {}) before the exchange: {}",
                res.rc, res.output
            )));
        }
        if t0.elapsed() > limit.min(Duration::from_secs(120)) {
            return Err(InteropError::Failed(
                "could not reach the guest's perftest server".into(),
            ));
        }
        std::thread::sleep(Duration::from_millis(300));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_servers_result_line_is_found() {
        let out = "---------------------------------------------------------------------------------------\n #bytes     #iterations    BW peak[MB/sec]    BW average[MB/sec]   MsgRate[Mpps]\n 8          100              0.00               0.00   \t\t   0.000232\n---------------------------------------------------------------------------------------\n";
        assert_eq!(server_printed_iters(out, 8), Some(100));
        assert_eq!(server_printed_iters(out, 16), None);
        assert_eq!(server_printed_iters("", 8), None);
    }
}
