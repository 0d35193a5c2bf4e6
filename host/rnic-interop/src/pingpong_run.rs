//! `ibv_rc_pingpong` against rnic, in both roles: the guest's program is
//! the server and rnic the client, or the other way round. rnic checks every
//! byte the guest echoes; the guest's `--chk` checks the first byte of
//! every page of what rnic sends.

use std::io::ErrorKind;
use std::net::{TcpListener, TcpStream};
use std::time::{Duration, Instant};

use rnic_harness::conn::PortAddr;
use rnic_verbs::{WcOpcode, WrOpcode};

use crate::guest::Guest;
use crate::pingpong::{self, PpDest};
use crate::rnic_side::Rnic;
use crate::{InteropError, Report, Result, Role};

/// Parameters of one pingpong run.
#[derive(Debug, Clone)]
pub struct PingPongOpts {
    pub size: usize,
    pub iters: u32,
    pub mtu: u32,
    /// Wall-clock limit of the whole run.
    pub limit: Duration,
    /// TCP port rnic listens on as the server (the guest reaches it as
    /// 10.0.2.2:port).
    pub server_port: u16,
}

impl Default for PingPongOpts {
    fn default() -> Self {
        Self {
            size: 4096,
            iters: 100,
            mtu: 1024,
            limit: Duration::from_secs(300),
            server_port: 18515,
        }
    }
}

const RECV_DEPTH: u32 = 16;
/// Cycles rnic waits, after the program exited, for the ACK of its last
/// message before it counts it as acknowledged by the exit.
const UNACKED_GRACE: u64 = 2_000_000;
const WR_SEND: u64 = 1;
const WR_RECV: u64 = 2;

/// Run it; `role` is rnic's.
pub fn run(rnic: &mut Rnic, guest: &mut Guest, role: Role, o: &PingPongOpts) -> Result<Report> {
    if o.size == 0 || 2 * o.size > rnic.opts.buf_len {
        return Err(InteropError::Failed(format!(
            "message size {} does not fit the {}-byte buffer twice",
            o.size, rnic.opts.buf_len
        )));
    }
    let t0 = Instant::now();
    let size = o.size as u32;
    // Receives land in the upper half, sends come from the lower one.
    let rx_off = rnic.opts.buf_len / 2;
    for _ in 0..RECV_DEPTH {
        rnic.post_recv(WR_RECV, rx_off, size)?;
    }
    let local = PpDest {
        lid: 0,
        qpn: rnic.qpn(),
        psn: rnic.sq_psn,
        gid: rnic.gid(),
    };
    let common = format!(
        "ibv_rc_pingpong -d rxe0 -i 1 -g 1 -s {} -n {} -m {} -r {} -c",
        o.size,
        o.iters,
        o.mtu,
        RECV_DEPTH * 2
    );
    let remote = match role {
        Role::Requester => {
            guest.start(&common)?;
            client_connect(rnic, guest, &local, o.limit)?
        }
        Role::Responder => {
            let l = TcpListener::bind(("127.0.0.1", o.server_port))?;
            guest.start(&format!("{common} -p {} 10.0.2.2", o.server_port))?;
            let mut s = accept(&l, rnic, guest, o.limit)?;
            let remote = pingpong::server_read(&mut s)?;
            connect_qp(rnic, guest, &remote, o.mtu)?;
            pingpong::server_reply(&mut s, &local)?;
            remote
        }
    };
    if role == Role::Requester {
        connect_qp(rnic, guest, &remote, o.mtu)?;
    }
    tracing::info!(
        ?role,
        guest_qpn = remote.qpn,
        rnic_qpn = local.qpn,
        "pingpong connected"
    );

    // The data phase, as the program runs it on its side.
    let (mut scnt, mut rcnt) = (0u32, 0u32);
    let mut pending_send = false;
    let mut pending_recv = true;
    let mut last_sent: Option<Vec<u8>> = None;
    let mut checked = 0u64;
    let send = |rnic: &mut Rnic, k: u32, last: &mut Option<Vec<u8>>| -> Result<()> {
        let p = pingpong::pattern(k, o.size);
        rnic.buf.write(0, &p);
        rnic.post_send(WR_SEND, WrOpcode::Send, 0, size, None, None)?;
        *last = Some(p);
        Ok(())
    };
    if role == Role::Requester {
        send(rnic, 0, &mut last_sent)?;
        pending_send = true;
    }
    let mut wcs = Vec::new();
    let mut guest_result = None;
    let mut guest_exit = 0u64;
    let mut note = None;
    while scnt < o.iters || rcnt < o.iters || guest_result.is_none() {
        if let Some(r) = rnic.step(guest, 2_000, o.limit)? {
            if r.rc != 0 {
                return Err(InteropError::Failed(format!(
                    "the guest's `{common}` failed (exit {}) after rnic sent {scnt} and received {rcnt}:\n{}",
                    r.rc, r.output
                )));
            }
            guest_result = Some(r);
            guest_exit = rnic.world.now();
        }
        // ibv_rc_pingpong's client exits once it has received the last
        // message; its QP goes with it, so if rxe's ACK of that message was
        // lost, nothing acknowledges rnic's resends. The program's clean exit
        // proves the message arrived; say so instead of waiting for the
        // retry count to run out.
        if guest_result.is_some()
            && rcnt == o.iters
            && scnt + 1 == o.iters
            && rnic.world.now() - guest_exit > UNACKED_GRACE
        {
            note = Some(format!(
                "rnic's last SEND was not acknowledged within {UNACKED_GRACE} cycles of the program's exit (its ACK was lost and the program's QP is gone); the program received it"
            ));
            break;
        }
        wcs.clear();
        rnic.poll(&mut wcs)?;
        for wc in &wcs {
            match wc.opcode {
                WcOpcode::Send => {
                    scnt += 1;
                    pending_send = false;
                }
                WcOpcode::Recv => {
                    // The program echoes the last message it received; the
                    // server's first message is its initial buffer.
                    let want = match &last_sent {
                        Some(p) => p.clone(),
                        None => pingpong::initial_buffer(o.size, true),
                    };
                    let got = rnic.buf.to_vec(rx_off, o.size);
                    if wc.byte_len != size || got != want {
                        let at = got.iter().zip(&want).position(|(a, b)| a != b);
                        return Err(InteropError::Failed(format!(
                            "message {rcnt} from the guest: {} bytes, first difference at {at:?}",
                            wc.byte_len
                        )));
                    }
                    checked += u64::from(size);
                    rcnt += 1;
                    pending_recv = false;
                    rnic.post_recv(WR_RECV, rx_off, size)?;
                }
                op => {
                    return Err(InteropError::Failed(format!(
                        "unexpected completion {op:?}"
                    )))
                }
            }
        }
        if scnt < o.iters && !pending_send && !pending_recv {
            send(rnic, scnt, &mut last_sent)?;
            pending_send = true;
            pending_recv = true;
        }
        if t0.elapsed() > o.limit {
            return Err(InteropError::Failed(format!(
                "pingpong did not finish within {:?}: rnic sent {scnt}, received {rcnt}; guest output so far:\n{}",
                o.limit,
                guest.output_so_far()
            )));
        }
    }
    let guest_out = guest_result.map(|r| r.output).unwrap_or_default();
    let mut rep = Report::collect(
        "ibv_rc_pingpong (SEND/RECV)",
        role,
        rnic,
        o.mtu,
        u64::from(scnt),
        u64::from(rcnt),
        u64::from(scnt) * u64::from(size),
        checked,
        guest_out,
        t0.elapsed(),
    );
    rep.note = note;
    Ok(rep)
}

fn connect_qp(rnic: &mut Rnic, guest: &Guest, remote: &PpDest, mtu: u32) -> Result<()> {
    let peer = PortAddr {
        mac: guest.config().mac,
        ip: guest.config().ip,
    };
    rnic.connect_gid(mtu, peer, &remote.gid, remote.qpn, remote.psn)
}

/// Connect to the guest's server (forwarded port), retrying while it is
/// not listening yet (QEMU's user network accepts and then closes).
fn client_connect(
    rnic: &Rnic,
    guest: &mut Guest,
    local: &PpDest,
    limit: Duration,
) -> Result<PpDest> {
    let t0 = Instant::now();
    loop {
        let r = TcpStream::connect(("127.0.0.1", guest.control_port)).and_then(|mut s| {
            s.set_read_timeout(Some(Duration::from_secs(20)))?;
            pingpong::client_exchange(&mut s, local)
                .map_err(|e| std::io::Error::other(e.to_string()))
        });
        match r {
            Ok(d) => return Ok(d),
            Err(e) => {
                if let Some(res) = guest.poll()? {
                    return Err(InteropError::Failed(format!(
                        "the guest's server ended (exit {}) before the exchange: {}",
                        res.rc, res.output
                    )));
                }
                if t0.elapsed() > limit.min(Duration::from_secs(120)) {
                    return Err(InteropError::Failed(format!(
                        "could not exchange with the guest's server: {e}"
                    )));
                }
                rnic.world.run(1000);
                std::thread::sleep(Duration::from_millis(200));
            }
        }
    }
}

/// Wait for the guest's client on `l`.
pub(crate) fn accept(
    l: &TcpListener,
    rnic: &Rnic,
    guest: &mut Guest,
    limit: Duration,
) -> Result<TcpStream> {
    l.set_nonblocking(true)?;
    let t0 = Instant::now();
    loop {
        match l.accept() {
            Ok((s, _)) => {
                s.set_nonblocking(false)?;
                s.set_read_timeout(Some(Duration::from_secs(60)))?;
                return Ok(s);
            }
            Err(e) if e.kind() == ErrorKind::WouldBlock => {}
            Err(e) => return Err(e.into()),
        }
        if let Some(res) = guest.poll()? {
            return Err(InteropError::Failed(format!(
                "the guest's client ended (exit {}) before connecting: {}",
                res.rc, res.output
            )));
        }
        if t0.elapsed() > limit.min(Duration::from_secs(120)) {
            return Err(InteropError::Failed(
                "the guest's client did not connect within 120 s".into(),
            ));
        }
        rnic.world.run(1000);
        std::thread::sleep(Duration::from_millis(50));
    }
}
