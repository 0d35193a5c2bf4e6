//! RDMA READ against rxe with rnic as the reader: rnic reads from rxe's
//! region, every byte checked (`rnic interop --tests read --roles
//! requester`). The roles are named as in `ib_read_bw`: its client, the
//! reader, is rnic's requester role; [`crate::read_run`] has the other
//! (rnic the responder, rxe reading), and the plan, the pattern and the
//! wire tally both use.
//!
//! The guest runs `sim/rxe-guest/read_peer.py --role target` (pyverbs): it
//! registers a region of [`region_len`] bytes with REMOTE_READ, fills it
//! with the seeded pattern ([`read_pattern`]), and rxe's responder serves
//! rnic's READs in the kernel. The side channel is read_run's the other way
//! round: rnic's line first (QPN, PSN, GID), then the guest's, sent once
//! its QP is in RTS so that rnic's first READ finds it ready (QPN, PSN,
//! GID, region address, rkey and length, the seed, the READs it grants
//! outstanding); at the end rnic's verdict, after which the guest checks
//! that its region is unchanged and reports.
//!
//! rnic posts read_peer.py's plan ([`read_plan`]: 1, PMTU-1, PMTU, PMTU+1,
//! 3 PMTU+17 and 64 KiB bytes cycling, two alignments, the last READ ending
//! on the region's last byte), up to `depth` outstanding (at most the
//! guest's grant and rnic's `max_rd_atomic`). Its buffer holds [`GUARD`]
//! everywhere, and a READ's destination the complement of the expected
//! bytes from just before it is posted. Checked:
//!
//! - each completion, in order: `IBV_WC_RDMA_READ`, its wr_id, its byte
//!   length; at that moment the destination holds the region's bytes and
//!   the [`GAP`] guard bytes on either side are intact; after the run,
//!   every byte of rnic's buffer outside the destinations is still the
//!   guard;
//! - the wire ([`Wire`], rxe's side of the link): every request rnic sends
//!   is READ k's, or, sent again from a PSN inside READ k, its tail from
//!   there; every response rxe sends is checked as read_run checks rnic's
//!   (opcode sequence, AETH, length, bytes); rxe received each READ;
//! - rnic's counters: each response packet of each READ placed once
//!   (`port.rx_read_resp`: go-back-N places only the PSN it expects), every
//!   other response that reached rnic dropped for its PSN
//!   (`port.rx_drop_psn`), as many packets sent again
//!   (`port.tx_retransmits`) as requests re-sent on the wire, and the QP
//!   still in RTS.

use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::time::{Duration, Instant};

use base64::Engine as _;
use rnic_harness::conn::PortAddr;
use rnic_verbs::{WcOpcode, WorkCompletion, WrOpcode};
use serde::{Deserialize, Serialize};

use crate::guest::Guest;
use crate::read_run::{
    find, late_nak_note, read_pattern, read_plan, region_len, PlannedRead, ReadOpts, Wire, GAP,
    GUARD, PEER_SCRIPT,
};
use crate::{InteropError, Report, Result, Rnic, Role};

/// What rnic sends first.
#[derive(Debug, Clone, Serialize)]
struct RnicLine {
    qpn: u32,
    psn: u32,
    gid: String,
}

/// What the guest (the target) sends back.
#[derive(Debug, Clone, Deserialize)]
struct TargetLine {
    qpn: u32,
    psn: u32,
    gid: String,
    addr: u64,
    rkey: u32,
    len: u64,
    seed: u64,
    rd_atomic: u32,
}

/// rnic's verdict, the last line to the guest.
#[derive(Debug, Clone, Serialize)]
struct Verdict {
    done: bool,
    reads: u64,
    bytes: u64,
}

/// The guest's result line.
#[derive(Debug, Clone, Default, Deserialize)]
struct TargetSummary {
    ok: bool,
    #[serde(default)]
    region_intact: bool,
    #[serde(default)]
    errors: Vec<String>,
}

/// Run it: rnic reads, the guest's rxe serves.
pub fn run(rnic: &mut Rnic, guest: &mut Guest, o: &ReadOpts) -> Result<Report> {
    if !rnic.issues_reads() {
        return Err(InteropError::Failed(format!(
            "this rnic build does not issue RDMA READ (id.verbs bit 5 clear or max_qp_init_rd_atom {}: READ_EN=0, or `rnic build --verbs` without read); rnic as the reader needs it",
            rnic.max_rd_atomic
        )));
    }
    let region = region_len(o.count, o.mtu) as u64;
    let (plan, local_len) = read_plan(o.count, o.mtu, region);
    if o.count == 0 || local_len > rnic.opts.buf_len as u64 {
        return Err(InteropError::Failed(format!(
            "{} READs need a {local_len}-byte buffer, rnic's is {} bytes",
            o.count, rnic.opts.buf_len
        )));
    }
    let t0 = Instant::now();
    let mut check = Check::default();
    rnic.buf.write(0, &vec![GUARD; rnic.opts.buf_len]);

    let script = format!(
        "echo {} | base64 -d > /tmp/read_peer.py && python3 /tmp/read_peer.py --role target --mtu {} --len {region} --seed {} --timeout {} --host 10.0.2.2 --port {}",
        base64::engine::general_purpose::STANDARD.encode(PEER_SCRIPT),
        o.mtu,
        o.seed,
        o.limit.as_secs(),
        o.server_port
    );
    let l = TcpListener::bind(("127.0.0.1", o.server_port))?;
    guest.start(&script)?;
    let mut s = crate::pingpong_run::accept(&l, rnic, guest, o.limit)?;
    let mine = RnicLine {
        qpn: rnic.qpn(),
        psn: rnic.sq_psn,
        gid: rnic.gid().iter().map(|b| format!("{b:02x}")).collect(),
    };
    writeln!(s, "{}", serde_json::to_string(&mine).unwrap())?;
    let mut line = String::new();
    // (EOF or a timeout: the guest's program failed; its output says why)
    let _ = BufReader::new(s.try_clone()?).read_line(&mut line);
    let peer: TargetLine = match serde_json::from_str(line.trim()) {
        Ok(p) => p,
        Err(e) => {
            return Err(fail(
                rnic,
                guest,
                &mut s,
                o.limit,
                format!(
                    "bad side-channel line {:?} from read_peer.py: {e}",
                    line.trim()
                ),
                &check,
            ))
        }
    };
    if peer.len != region || peer.seed != o.seed || peer.rd_atomic == 0 {
        return Err(fail(
            rnic,
            guest,
            &mut s,
            o.limit,
            format!(
                "read_peer.py offers a {}-byte region of seed {} granting {} READs; asked for {region} bytes of seed {}, at least one READ",
                peer.len, peer.seed, peer.rd_atomic, o.seed
            ),
            &check,
        ));
    }
    let Some(gid) = crate::guest::parse_gid(&peer.gid) else {
        return Err(fail(
            rnic,
            guest,
            &mut s,
            o.limit,
            format!("bad GID {:?}", peer.gid),
            &check,
        ));
    };
    let addr = PortAddr {
        mac: guest.config().mac,
        ip: guest.config().ip,
    };
    let before = rnic.counters()?;
    let mut wire = Wire::start_reader(
        rnic,
        o.mtu,
        peer.addr,
        read_pattern(o.seed, region as usize),
    );
    wire.expect_psn(rnic.sq_psn);
    wire.expect_requests(&plan, peer.rkey);
    if let Err(e) = rnic.connect_gid(o.mtu, addr, &gid, peer.qpn, peer.psn) {
        return Err(fail(rnic, guest, &mut s, o.limit, e.to_string(), &check));
    }
    let depth = o
        .depth
        .min(peer.rd_atomic)
        .min(u32::from(rnic.max_rd_atomic))
        .max(1) as usize;

    let data_t0 = Instant::now();
    let (mut posted, mut done) = (0usize, 0usize);
    let mut wcs = Vec::new();
    while done < plan.len() {
        while posted < plan.len() && posted - done < depth {
            let r = plan[posted];
            let poison: Vec<u8> = want(&wire, &r).iter().map(|b| !b).collect();
            rnic.buf.write(r.local as usize, &poison);
            if let Err(e) = rnic.post_send(
                posted as u64,
                WrOpcode::RdmaRead,
                r.local as usize,
                r.len as u32,
                Some((peer.addr + r.remote, peer.rkey)),
                None,
            ) {
                let e = format!("posting READ {posted}: {e}");
                return Err(fail(rnic, guest, &mut s, o.limit, e, &check));
            }
            posted += 1;
        }
        if let Some(res) = rnic.step(guest, 2_000, o.limit)? {
            return Err(InteropError::Failed(format!(
                "read_peer.py (the target) ended (exit {}) with rnic at READ {done} of {}: {}\nguest output:\n{}",
                res.rc,
                plan.len(),
                wire.summary(),
                res.output
            )));
        }
        wire.drain(rnic);
        wcs.clear();
        // (a failed completion ends the poll; the ones before it count)
        let polled = rnic.poll(&mut wcs);
        let mut bad = None;
        for wc in &wcs {
            match check.completion(rnic, wc, done, &plan, wire.region(), u64::from(o.mtu)) {
                Ok(()) => done += 1,
                Err(e) => {
                    bad = Some(e);
                    break;
                }
            }
        }
        if let (None, Err(e)) = (&bad, polled) {
            bad = Some(format!("READ {done}: {e} ({posted} posted)"));
        }
        if bad.is_none() && t0.elapsed() > o.limit {
            bad = Some(format!(
                "{done} of {} READs completed within {:?} ({posted} posted)",
                plan.len(),
                o.limit
            ));
        }
        if let Some(e) = bad {
            rnic.world.run(20_000);
            wire.stop(rnic);
            let w = wire.summary();
            return Err(fail(
                rnic,
                guest,
                &mut s,
                o.limit,
                format!("{e}\n{w}"),
                &check,
            ));
        }
    }
    let data_secs = data_t0.elapsed().as_secs_f64();
    let outside = check.outside(rnic, &plan);

    // The verdict; the guest then checks its region and ends.
    let verdict = Verdict {
        done: outside.is_ok(),
        reads: done as u64,
        bytes: check.bytes,
    };
    let _ = writeln!(s, "{}", serde_json::to_string(&verdict).unwrap());
    let result = loop {
        if let Some(r) = rnic.step(guest, 2_000, o.limit)? {
            break r;
        }
        wire.drain(rnic);
        if t0.elapsed() > o.limit {
            return Err(InteropError::Failed(format!(
                "read_peer.py (the target) did not end within {:?} after rnic's verdict; guest output:\n{}",
                o.limit,
                guest.output_so_far()
            )));
        }
    };
    // What is still in flight goes too.
    rnic.world.run(20_000);
    wire.stop(rnic);
    drop(s);
    outside.map_err(|e| InteropError::Failed(format!("{e}\n{}", wire.summary())))?;

    let out = result.output;
    let summary_line = out.lines().rev().find(|l| l.starts_with('{')).unwrap_or("");
    let summary: TargetSummary = serde_json::from_str(summary_line).unwrap_or_default();
    if result.rc != 0 || !summary.ok || !summary.region_intact {
        return Err(InteropError::Failed(format!(
            "read_peer.py (the target) failed (exit {}) after rnic's READs: {}\nguest output:\n{out}",
            result.rc,
            if summary.errors.is_empty() {
                "no summary".to_string()
            } else {
                summary.errors.join("\n  ")
            }
        )));
    }
    let mut t = wire.tally.clone();
    let c = rnic.counters()?;
    t.placed = c.rx_read_resp.wrapping_sub(before.rx_read_resp);
    t.tx_retransmits = c.tx_retransmits.wrapping_sub(before.tx_retransmits);
    t.rtx_timeouts = c.rtx_timeouts.wrapping_sub(before.rtx_timeouts);
    t.rx_drop_psn = c.rx_drop_psn.wrapping_sub(before.rx_drop_psn);
    t.reads = done as u64;
    t.bytes = check.bytes;
    t.depth = depth as u32;
    t.dest_bytes_checked = check.bytes;
    t.guard_bytes_checked = check.guard;
    t.data_secs = data_secs;
    finish(&t, &plan, u64::from(o.mtu)).map_err(|e| {
        InteropError::Failed(format!(
            "rnic completed every READ with the right bytes, but {e}\n{}",
            wire.summary()
        ))
    })?;
    let state = rnic.qp.state()?;
    if state != rnic_verbs::QpState::Rts {
        return Err(InteropError::Failed(format!(
            "rnic's QP is in {state:?} after the READs, not RTS"
        )));
    }
    let mut rep = Report::collect(
        "RDMA READ (read_peer.py --role target, pyverbs; rnic reads, rxe serves)",
        Role::Requester,
        rnic,
        o.mtu,
        t.reads,
        t.reads,
        0,
        t.bytes,
        out,
        t0.elapsed(),
    );
    rep.note = late_nak_note(&t);
    rep.read = Some(t);
    Ok(rep)
}

/// The bytes READ `r` must bring.
fn want<'a>(w: &'a Wire, r: &PlannedRead) -> &'a [u8] {
    &w.region()[r.remote as usize..(r.remote + r.len) as usize]
}

/// The checks after the run on the tally: the wire clean, rxe received each
/// READ, rnic's counters agree with the wire.
fn finish(t: &crate::read_run::ReadTally, plan: &[PlannedRead], pmtu: u64) -> Result<(), String> {
    if !t.wire_errors.is_empty() {
        return Err("the wire was wrong (rnic's requests or rxe's responses)".into());
    }
    let n = plan.len() as u64;
    if t.served != n || t.requests_checked != t.requests {
        return Err(format!(
            "rxe received {} of the {n} READs first-time; {} of rnic's {} requests checked against the plan",
            t.served, t.requests_checked, t.requests
        ));
    }
    let packets: u64 = plan.iter().map(|r| r.len.div_ceil(pmtu).max(1)).sum();
    if u64::from(t.placed) != packets {
        return Err(format!(
            "rnic's port.rx_read_resp (responses placed) moved by {}, for READs of {packets} response packets",
            t.placed
        ));
    }
    let extra = t.responses_delivered.saturating_sub(packets);
    if u64::from(t.rx_drop_psn) != extra {
        return Err(format!(
            "rnic's port.rx_drop_psn moved by {}, but {extra} of the {} responses that reached it were not placed",
            t.rx_drop_psn, t.responses_delivered
        ));
    }
    if u64::from(t.tx_retransmits) != t.resent {
        return Err(format!(
            "rnic's port.tx_retransmits moved by {}, it sent {} READ requests again on the wire",
            t.tx_retransmits, t.resent
        ));
    }
    Ok(())
}

/// The buffer checks, and what they covered.
#[derive(Debug, Default)]
struct Check {
    /// READs, destination bytes and guard bytes checked.
    reads: u64,
    bytes: u64,
    guard: u64,
}

impl Check {
    /// READ `k`'s completion, the `k`-th: its CQE, its bytes, its guards.
    fn completion(
        &mut self,
        rnic: &Rnic,
        wc: &WorkCompletion,
        k: usize,
        plan: &[PlannedRead],
        region: &[u8],
        pmtu: u64,
    ) -> Result<(), String> {
        let Some(r) = plan.get(k) else {
            return Err(format!(
                "a completion beyond the {} READs (wr_id {})",
                plan.len(),
                wc.wr_id
            ));
        };
        if wc.wr_id != k as u64 {
            return Err(format!(
                "completion {k} names READ {} (completions out of order)",
                wc.wr_id
            ));
        }
        if wc.opcode != WcOpcode::RdmaRead || u64::from(wc.byte_len) != r.len {
            return Err(format!(
                "READ {k}: completion opcode {:?} byte_len {}, want RdmaRead and {}",
                wc.opcode, wc.byte_len, r.len
            ));
        }
        let want = &region[r.remote as usize..(r.remote + r.len) as usize];
        let got = rnic.buf.to_vec(r.local as usize, r.len as usize);
        if got != want {
            return Err(describe(k, r, want, &got, region, pmtu));
        }
        self.reads += 1;
        self.bytes += r.len;
        // The guards before and after it (the one before is the previous
        // READ's after; the first READ's is the buffer's first bytes).
        let lo = r.local.saturating_sub(GAP);
        for (at, len) in [(lo, r.local - lo), (r.local + r.len, GAP)] {
            let g = rnic.buf.to_vec(at as usize, len as usize);
            if let Some(i) = g.iter().position(|&b| b != GUARD) {
                return Err(format!(
                    "READ {k} ({} bytes of rxe's region at offset {} into rnic's buffer at {}): at its completion the guard {} it changed: byte {} of rnic's buffer is {:#04x}, want {GUARD:#04x} (a READ wrote outside its destination)",
                    r.len,
                    r.remote,
                    r.local,
                    if at < r.local { "before" } else { "after" },
                    at + i as u64,
                    g[i]
                ));
            }
            self.guard += len;
        }
        Ok(())
    }

    /// After the run: every byte of rnic's buffer outside the destinations
    /// is still the guard.
    fn outside(&mut self, rnic: &Rnic, plan: &[PlannedRead]) -> Result<(), String> {
        let buf = rnic.buf.to_vec(0, rnic.opts.buf_len);
        let mut mask = vec![false; buf.len()];
        for r in plan {
            mask[r.local as usize..(r.local + r.len) as usize].fill(true);
        }
        let bad: Vec<usize> = (0..buf.len())
            .filter(|&i| !mask[i] && buf[i] != GUARD)
            .collect();
        if let Some(&i) = bad.first() {
            return Err(format!(
                "after the READs, {} bytes of rnic's buffer outside every READ's destination changed, the first at offset {i} ({:#04x}, want {GUARD:#04x})",
                bad.len(),
                buf[i]
            ));
        }
        self.guard += mask.iter().filter(|&&m| !m).count() as u64;
        Ok(())
    }
}

/// What is wrong with READ `k`'s bytes, as precisely as we can say
/// (read_peer.py's `describe()`).
fn describe(
    k: usize,
    r: &PlannedRead,
    want: &[u8],
    got: &[u8],
    region: &[u8],
    pmtu: u64,
) -> String {
    let bad = want.iter().zip(got).filter(|(a, b)| a != b).count();
    let i = want.iter().zip(got).position(|(a, b)| a != b).unwrap_or(0);
    let end = (i + 8).min(want.len());
    let mut s = format!(
        "READ {k} ({} bytes of rxe's region at offset {}, into rnic's buffer at {}): {bad} bad bytes, the first at byte {i} (packet {} of the response, byte {} in it): got {}, want {}",
        r.len,
        r.remote,
        r.local,
        i as u64 / pmtu,
        i as u64 % pmtu,
        hex(&got[i..end]),
        hex(&want[i..end])
    );
    let poison: Vec<u8> = want[i..end].iter().map(|b| !b).collect();
    if got[i..end] == poison[..] {
        s += " (the bytes there were never written: still their poison)";
    } else if got.len() - i >= 16 {
        match find(region, &got[i..i + 16]) {
            Some(at) => {
                s += &format!(
                    " (the bytes there are rxe's from region offset {at}, {:+} bytes from where they belong)",
                    at as i64 - (r.remote as i64 + i as i64)
                )
            }
            None => s += " (the bytes there are nowhere in rxe's region)",
        }
    }
    s
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// Tell the guest rnic failed, let its program end (so the guest is free
/// for the next run), and say what failed.
fn fail(
    rnic: &Rnic,
    guest: &mut Guest,
    s: &mut TcpStream,
    limit: Duration,
    what: String,
    check: &Check,
) -> InteropError {
    let v = Verdict {
        done: false,
        reads: check.reads,
        bytes: check.bytes,
    };
    let _ = writeln!(s, "{}", serde_json::to_string(&v).unwrap());
    let t = Instant::now();
    let mut out = String::new();
    while guest.busy() && t.elapsed() < Duration::from_secs(60) {
        match rnic.step(guest, 2_000, limit) {
            Ok(Some(r)) => {
                out = r.output;
                break;
            }
            Ok(None) => {}
            Err(_) => break,
        }
    }
    InteropError::Failed(format!("{what}\nguest output:\n{out}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::read_run::ReadTally;

    /// The tally of a clean run of read_plan(12, 1024): 146 response
    /// packets; 6 lost, 13 requests sent again, 162 responses dropped.
    fn clean() -> (ReadTally, Vec<PlannedRead>) {
        let (plan, _) = read_plan(12, 1024, 1 << 18);
        let t = ReadTally {
            requests: 25,
            requests_checked: 25,
            resent: 13,
            served: 12,
            responses_delivered: 308,
            placed: 146,
            tx_retransmits: 13,
            rx_drop_psn: 162,
            ..ReadTally::default()
        };
        (t, plan)
    }

    #[test]
    fn the_counters_must_agree_with_the_wire() {
        let (t, plan) = clean();
        finish(&t, &plan, 1024).unwrap();
        type Break = fn(&mut ReadTally);
        let cases: [(Break, &str); 6] = [
            (|t| t.wire_errors.push("x".into()), "the wire was wrong"),
            (|t| t.served = 11, "rxe received 11 of the 12 READs"),
            (
                |t| t.requests_checked = 24,
                "24 of rnic's 25 requests checked",
            ),
            (
                |t| t.placed = 147,
                "port.rx_read_resp (responses placed) moved by 147",
            ),
            (|t| t.rx_drop_psn = 161, "port.rx_drop_psn moved by 161"),
            (|t| t.tx_retransmits = 12, "port.tx_retransmits moved by 12"),
        ];
        for (break_it, want) in cases {
            let (mut t, plan) = clean();
            break_it(&mut t);
            let e = finish(&t, &plan, 1024).unwrap_err();
            assert!(e.contains(want), "want {want:?} in {e:?}");
        }
    }

    #[test]
    fn describe_names_the_read_the_byte_and_where_the_bytes_came_from() {
        let region = read_pattern(3, 1 << 16);
        let r = PlannedRead {
            remote: 1000,
            local: 3,
            len: 3000,
        };
        let want = &region[1000..4000];
        // one flipped byte in the second packet
        let mut got = want.to_vec();
        got[1500] ^= 0x10;
        let d = describe(4, &r, want, &got, &region, 1024);
        assert!(
            d.contains("READ 4 (3000 bytes of rxe's region at offset 1000")
                && d.contains("1 bad bytes, the first at byte 1500 (packet 1 of the response, byte 476 in it)"),
            "{d}"
        );
        // never written
        let got: Vec<u8> = want.iter().map(|b| !b).collect();
        let d = describe(4, &r, want, &got, &region, 1024);
        assert!(
            d.contains("3000 bad bytes") && d.contains("still their poison"),
            "{d}"
        );
        // a packet from 1024 bytes further on
        let mut got = want.to_vec();
        got[1024..2048].copy_from_slice(&region[3048..4072]);
        let d = describe(4, &r, want, &got, &region, 1024);
        assert!(d.contains("+1024 bytes from where they belong"), "{d}");
    }
}
