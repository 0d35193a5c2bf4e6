//! WRITE and WRITE_WITH_IMM against rxe, data checked before completion.
//!
//! perftest 4.5 (Debian 12's) has no WRITE_WITH_IMM test, so the guest runs
//! `sim/rxe-guest/imm_peer.py` (pyverbs) and the two sides exchange QPN,
//! PSN, GID, buffer address and rkey as one JSON line each way over TCP
//! (the side channel). Message m is `writes` WRITEs of `chunk` bytes then a
//! WRITE_WITH_IMM of `chunk` bytes with immediate m, all into slot m of the
//! responder's buffer; when the responder's completion for m appears, the
//! whole slot must hold the message: rnic checks that as responder (the
//! data-before-completion contract against an independent requester), the
//! script checks it as responder when rnic sends.

use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::time::{Duration, Instant};

use base64::Engine as _;
use rnic_harness::conn::PortAddr;
use rnic_verbs::{WcOpcode, WrOpcode};
use serde::{Deserialize, Serialize};

use crate::guest::Guest;
use crate::{InteropError, Report, Result, Rnic, Role};

/// The guest-side program, sent to the guest when a run starts.
pub const PEER_SCRIPT: &str = include_str!("../../../sim/rxe-guest/imm_peer.py");

#[derive(Debug, Clone)]
pub struct ImmOpts {
    pub count: u32,
    pub writes: u32,
    pub chunk: u32,
    pub mtu: u32,
    pub limit: Duration,
    pub server_port: u16,
}

impl Default for ImmOpts {
    fn default() -> Self {
        Self {
            count: 64,
            writes: 3,
            chunk: 2048,
            mtu: 1024,
            limit: Duration::from_secs(300),
            server_port: 18516,
        }
    }
}

impl ImmOpts {
    pub fn msg_len(&self) -> usize {
        (self.writes as usize + 1) * self.chunk as usize
    }
}

/// What each side sends on the side channel.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Line {
    qpn: u32,
    psn: u32,
    gid: String,
    addr: u64,
    rkey: u32,
    len: u64,
}

/// Byte `i` of message `m` (the script's `pattern`).
pub fn imm_pattern(m: u32, len: usize) -> Vec<u8> {
    let block: Vec<u8> = (0..251u32)
        .map(|j| (j * 13 + m * 37 + (m >> 8) + 1) as u8)
        .collect();
    (0..len).map(|i| block[i % 251]).collect()
}

/// Run it; `role` is rnic's.
pub fn run(rnic: &mut Rnic, guest: &mut Guest, role: Role, o: &ImmOpts) -> Result<Report> {
    let msg_len = o.msg_len();
    let total = msg_len * o.count as usize;
    if o.count == 0 || o.chunk == 0 || total > rnic.opts.buf_len {
        return Err(InteropError::Failed(format!(
            "{} messages of {msg_len} bytes do not fit rnic's {}-byte buffer",
            o.count, rnic.opts.buf_len
        )));
    }
    let t0 = Instant::now();
    let script = format!(
        "echo {} | base64 -d > /tmp/imm_peer.py && python3 /tmp/imm_peer.py --mtu {} --count {} --writes {} --chunk {} --timeout {}",
        base64::engine::general_purpose::STANDARD.encode(PEER_SCRIPT),
        o.mtu,
        o.count,
        o.writes,
        o.chunk,
        o.limit.as_secs()
    );
    let mine = Line {
        qpn: rnic.qpn(),
        psn: rnic.sq_psn,
        gid: rnic.gid().iter().map(|b| format!("{b:02x}")).collect(),
        addr: rnic.mr.addr(),
        rkey: rnic.mr.rkey(),
        len: total as u64,
    };
    let rq = rnic.opts.rq_depth.min(o.count);
    let mut posted_recv = 0u32;
    let (mut stream, peer) = match role {
        Role::Requester => {
            guest.start(&format!("{script} --role responder --port 18515"))?;
            let t = Instant::now();
            loop {
                let r = TcpStream::connect(("127.0.0.1", guest.control_port)).and_then(|mut s| {
                    s.set_read_timeout(Some(Duration::from_secs(60)))?;
                    writeln!(s, "{}", serde_json::to_string(&mine).unwrap())?;
                    let mut line = String::new();
                    BufReader::new(s.try_clone()?).read_line(&mut line)?;
                    if line.is_empty() {
                        return Err(std::io::ErrorKind::UnexpectedEof.into());
                    }
                    Ok((s, line))
                });
                match r {
                    Ok((s, line)) => break (s, parse_line(&line)?),
                    Err(e) => {
                        if let Some(res) = guest.poll()? {
                            return Err(InteropError::Failed(format!(
                                "the guest's imm_peer.py ended (exit {}) before the exchange:\n{}",
                                res.rc, res.output
                            )));
                        }
                        if t.elapsed() > Duration::from_secs(120) {
                            return Err(InteropError::Failed(format!(
                                "could not exchange with the guest's imm_peer.py: {e}"
                            )));
                        }
                        rnic.world.run(1000);
                        std::thread::sleep(Duration::from_millis(300));
                    }
                }
            }
        }
        Role::Responder => {
            for _ in 0..rq {
                rnic.post_recv(posted_recv as u64, 0, 0)?;
                posted_recv += 1;
            }
            let l = TcpListener::bind(("127.0.0.1", o.server_port))?;
            guest.start(&format!(
                "{script} --role requester --host 10.0.2.2 --port {}",
                o.server_port
            ))?;
            let mut s = crate::pingpong_run::accept(&l, rnic, guest, o.limit)?;
            let mut line = String::new();
            BufReader::new(s.try_clone()?).read_line(&mut line)?;
            let peer = parse_line(&line)?;
            connect(rnic, guest, &peer, o.mtu)?;
            writeln!(s, "{}", serde_json::to_string(&mine).unwrap())?;
            (s, peer)
        }
    };
    if role == Role::Requester {
        connect(rnic, guest, &peer, o.mtu)?;
        if peer.len < total as u64 {
            return Err(InteropError::Failed(format!(
                "the guest's buffer is {} bytes, {total} needed",
                peer.len
            )));
        }
        for m in 0..o.count {
            rnic.buf
                .write(m as usize * msg_len, &imm_pattern(m, msg_len));
        }
    }
    stream.set_read_timeout(Some(Duration::from_secs(5)))?;

    let per_msg = o.writes + 1;
    let window = (rnic.opts.sq_depth / per_msg).max(1);
    let (mut sent, mut done) = (0u32, 0u32);
    let mut checked = 0u64;
    let mut wcs = Vec::new();
    let mut guest_result = None;
    let mut send_wcs = 0u32;
    let mut bye_sent = false;
    while done < o.count || guest_result.is_none() {
        if role == Role::Requester {
            while sent < o.count && sent - done < window {
                let base = sent as usize * msg_len;
                for j in 0..per_msg {
                    let off = base + (j * o.chunk) as usize;
                    let last = j == o.writes;
                    rnic.post_send(
                        u64::from(sent),
                        if last {
                            WrOpcode::RdmaWriteWithImm
                        } else {
                            WrOpcode::RdmaWrite
                        },
                        off,
                        o.chunk,
                        Some((peer.addr + off as u64, peer.rkey)),
                        last.then_some(sent),
                    )?;
                }
                sent += 1;
            }
        }
        if let Some(r) = rnic.step(guest, 2_000, o.limit)? {
            if r.rc != 0 {
                return Err(InteropError::Failed(format!(
                    "the guest's imm_peer.py failed (exit {}) with rnic at message {done}:\n{}",
                    r.rc, r.output
                )));
            }
            guest_result = Some(r);
        }
        wcs.clear();
        rnic.poll(&mut wcs)?;
        for wc in &wcs {
            match (role, wc.opcode) {
                (Role::Requester, WcOpcode::RdmaWrite) => {
                    send_wcs += 1;
                    if send_wcs.is_multiple_of(per_msg) {
                        done += 1;
                    }
                }
                (Role::Responder, WcOpcode::RecvRdmaWithImm) => {
                    let m = wc.imm_data.map(u32::from_be).unwrap_or(u32::MAX);
                    if m != done {
                        return Err(InteropError::Failed(format!(
                            "completion {done} carries immediate {m}"
                        )));
                    }
                    let got = rnic.buf.to_vec(m as usize * msg_len, msg_len);
                    let want = imm_pattern(m, msg_len);
                    if got != want {
                        let at = got.iter().zip(&want).position(|(a, b)| a != b);
                        return Err(InteropError::Failed(format!(
                            "message {m}: its completion is visible but its data is not (first bad byte {at:?}): data-before-completion broken"
                        )));
                    }
                    checked += msg_len as u64;
                    done += 1;
                    if posted_recv < o.count {
                        rnic.post_recv(u64::from(posted_recv), 0, 0)?;
                        posted_recv += 1;
                    }
                }
                (_, op) => {
                    return Err(InteropError::Failed(format!(
                        "unexpected completion {op:?} as {role:?}"
                    )))
                }
            }
        }
        if done == o.count && !bye_sent {
            // The script keeps its QP until this line (see imm_peer.py).
            writeln!(stream, "{{\"bye\": true}}")?;
            bye_sent = true;
        }
        if t0.elapsed() > o.limit {
            return Err(InteropError::Failed(format!(
                "WRITE_WITH_IMM run did not finish within {:?}: {done} of {} messages; guest output:\n{}",
                o.limit,
                o.count,
                guest.output_so_far()
            )));
        }
    }
    let out = guest_result.map(|r| r.output).unwrap_or_default();
    let summary = out.lines().rev().find(|l| l.starts_with('{')).unwrap_or("");
    if !summary.contains("\"ok\": true") {
        return Err(InteropError::Failed(format!(
            "imm_peer.py did not report success:\n{out}"
        )));
    }
    drop(stream);
    let (ms, mr) = match role {
        Role::Requester => (done, 0),
        Role::Responder => (0, done),
    };
    let mut rep = Report::collect(
        "WRITE + WRITE_WITH_IMM (imm_peer.py, pyverbs)",
        role,
        rnic,
        o.mtu,
        u64::from(ms) * u64::from(per_msg),
        u64::from(mr),
        u64::from(ms) * msg_len as u64,
        checked,
        out,
        t0.elapsed(),
    );
    if role == Role::Requester {
        // The guest checked every byte.
        rep.bytes_checked = u64::from(done) * msg_len as u64;
    }
    Ok(rep)
}

fn parse_line(line: &str) -> Result<Line> {
    serde_json::from_str(line.trim())
        .map_err(|e| InteropError::Failed(format!("bad side-channel line {:?}: {e}", line.trim())))
}

fn connect(rnic: &mut Rnic, guest: &Guest, peer: &Line, mtu: u32) -> Result<()> {
    let gid = crate::guest::parse_gid(&peer.gid)
        .ok_or_else(|| InteropError::Failed(format!("bad GID {:?}", peer.gid)))?;
    let addr = PortAddr {
        mac: guest.config().mac,
        ip: guest.config().ip,
    };
    rnic.connect_gid(mtu, addr, &gid, peer.qpn, peer.psn)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pattern_matches_the_script() {
        // imm_peer.py: pattern(5, 8) == bytes([(j*13 + 5*37 + 0 + 1) & 255 for j in range(8)])
        let p = imm_pattern(5, 300);
        assert_eq!(p[0], 186);
        assert_eq!(p[1], 199);
        assert_eq!(p[251], p[0]);
        assert_ne!(imm_pattern(6, 300), p);
    }
}
