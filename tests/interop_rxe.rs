//! Interoperability with Linux soft-RoCE: the simulated NIC against
//! `rdma_rxe` in a QEMU guest (image: `sim/rxe-guest/build-image.sh`, built
//! by `.ci/run`; set RNIC_GUEST_IMAGE to use another directory).
//!
//! One guest serves every run (it takes tens of seconds to boot under TCG);
//! each run is a fresh simulated NIC. Without QEMU or the image the test
//! fails with the command that fixes it; `RNIC_INTEROP=skip` skips it
//! explicitly (and says so).

use std::path::PathBuf;
use std::time::Duration;

use rnic_interop::suite::{run_one, RunSpec, Test};
use rnic_interop::{Guest, GuestConfig, Role};

fn image() -> PathBuf {
    rnic_tests::guest_image()
}

fn skip() -> bool {
    if std::env::var("RNIC_INTEROP").as_deref() == Ok("skip") {
        eprintln!("RNIC_INTEROP=skip: the rxe interop suite is SKIPPED");
        return true;
    }
    false
}

fn boot() -> Guest {
    let run_dir = std::env::temp_dir().join(format!("rnic-interop-test-{}", std::process::id()));
    let cfg = GuestConfig::new(image(), run_dir);
    match Guest::boot(&cfg) {
        Ok(g) => g,
        Err(e) => panic!(
            "{e}\n(build the image with `sudo sim/rxe-guest/build-image.sh {}`, or set RNIC_INTEROP=skip to skip this suite)",
            image().display()
        ),
    }
}

fn spec(test: Test, role: Role, fabric: &str, mtu: u32) -> RunSpec {
    let mut s = RunSpec::new(test, role);
    s.fabric = fabric.into();
    s.mtu = mtu;
    s.limit = Duration::from_secs(240);
    s.iters = match test {
        Test::PingPong | Test::SendLat | Test::ReadLat => 40,
        Test::WriteImm => 24,
        Test::WriteBw | Test::ReadBw | Test::AtomicBw | Test::AtomicBwCas => 100,
        // 1, PMTU-1, PMTU, PMTU+1, 3 PMTU+17 and 64 KiB, twice
        Test::Read => 12,
    };
    s.size = match test {
        Test::WriteImm => 2048,
        Test::WriteBw | Test::ReadBw => 16384,
        _ => 4096,
    };
    s
}

/// The short suite CI runs: every test in both roles (the pyverbs READ
/// exchange as ib_read_bw's roles: rnic the requester reads rxe's region,
/// rnic the responder is read) at PMTU 1024 on an ideal link, and again at
/// PMTU 4096 those whose messages take more than one packet there, and
/// the data-carrying tests on the lossy profile (the READ exchange in both
/// roles at both PMTUs: rnic serving, lost responses make rxe ask again,
/// which rnic's duplicate-READ path answers; rnic reading, lost responses
/// make rnic ask again from the first missing PSN, every byte and the
/// guards around it checked at each completion;
/// ib_read_bw with rnic as the reader: rxe's lost responses make rnic ask
/// again, and a later READ's responses must not complete an earlier one;
/// ib_atomic_bw, FETCH_AND_ADD and CMP_AND_SWAP, with rnic as the server
/// at both PMTUs: lost atomics and lost answers make rxe re-send, which
/// rnic answers from its replay record, never executing an atomic twice;
/// with rnic as the client at PMTU 1024: rnic re-sends, rxe answers from
/// its own responder resources, and every value rnic places must be its
/// answer's, one more than the last on its operand for FETCH_AND_ADD).
#[test]
fn rnic_interoperates_with_rxe_in_both_roles() {
    if skip() {
        return;
    }
    let mut guest = boot();
    assert_eq!(guest.active_mtu, 4096, "rxe0's active MTU");
    let mut plan = Vec::new();
    for mtu in [1024, 4096] {
        for t in Test::ALL {
            // At PMTU 4096 only the tests whose messages still take more
            // than one packet: the others are single-packet exchanges the
            // PMTU-1024 runs already carry (20 of 120 s, 2026-12-07).
            if mtu == 4096 && !matches!(t, Test::WriteBw | Test::Read | Test::ReadBw) {
                continue;
            }
            for r in [Role::Requester, Role::Responder] {
                if t.supports(r) {
                    plan.push(spec(t, r, "ideal", mtu));
                }
            }
        }
    }
    for t in [Test::PingPong, Test::WriteImm] {
        for r in [Role::Requester, Role::Responder] {
            plan.push(spec(t, r, "lossy", 1024));
        }
    }
    // (seed 1's lossy fabric drops frame 30 of every run: each of these
    // has more than 60)
    for mtu in [1024, 4096] {
        plan.push(spec(Test::Read, Role::Responder, "lossy", mtu));
        plan.push(spec(Test::Read, Role::Requester, "lossy", mtu));
    }
    plan.push(spec(Test::ReadBw, Role::Requester, "lossy", 1024));
    for t in [Test::AtomicBw, Test::AtomicBwCas] {
        for mtu in [1024, 4096] {
            plan.push(spec(t, Role::Responder, "lossy", mtu));
        }
        plan.push(spec(t, Role::Requester, "lossy", 1024));
    }
    // The first run is captured: every frame across the link is in the pcap.
    let pcap_dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target/interop-pcap");
    std::fs::create_dir_all(&pcap_dir).unwrap();
    let pcap = pcap_dir.join("pingpong-requester-ideal-1024.pcap");
    plan[0].pcap = Some(pcap.clone());
    let mut failures = Vec::new();
    for (i, s) in plan.iter().enumerate() {
        match run_one(&mut guest, s) {
            Ok(r) => {
                eprintln!(
                    "ok   {}: {} msgs sent, {} received, {} B checked, {} frames to / {} from the guest, {} dropped, {} retransmitted ({:.1} s)",
                    s.command(),
                    r.messages_sent,
                    r.messages_received,
                    r.bytes_checked,
                    r.frames_to_guest,
                    r.frames_from_guest,
                    r.frames_dropped,
                    r.rnic_retransmits,
                    r.wall_secs
                );
                if let Some(rd) = &r.read {
                    eprintln!(
                        "     READ (served by {}): {} READs, {} B; {} requests ({} sent again, {} re-requests, {} out of sequence), {} responses ({} lost), {} B checked on the wire, {} NAKs ({} late)",
                        rd.responder,
                        rd.reads,
                        rd.bytes,
                        rd.requests,
                        rd.resent,
                        rd.re_requests,
                        rd.out_of_sequence,
                        rd.responses,
                        rd.responses_dropped,
                        rd.wire_bytes_checked,
                        rd.naks,
                        rd.late_naks
                    );
                    // every READ asked for was served
                    assert_eq!(rd.reads, u64::from(s.iters), "{}", s.command());
                    assert!(rd.wire_bytes_checked >= rd.bytes, "{}", s.command());
                    if s.fabric == "ideal" {
                        // requests arrive in order: the responder never NAKs
                        assert_eq!((rd.out_of_sequence, rd.naks), (0, 0), "{}", s.command());
                    }
                    if s.role == Role::Requester && s.test == Test::Read {
                        // rnic read (read_client failed the run otherwise)
                        eprintln!(
                            "     rnic reading: {} requests checked against the plan, {} responses placed, {} packets sent again ({} timeouts), {} dropped for their PSN; {} destination and {} guard bytes checked",
                            rd.requests_checked,
                            rd.placed,
                            rd.tx_retransmits,
                            rd.rtx_timeouts,
                            rd.rx_drop_psn,
                            rd.dest_bytes_checked,
                            rd.guard_bytes_checked
                        );
                        assert_eq!(rd.responder, "rxe", "{}", s.command());
                        assert_eq!(rd.requests_checked, rd.requests, "{}", s.command());
                        assert_eq!(rd.dest_bytes_checked, rd.bytes, "{}", s.command());
                        assert_eq!(u64::from(rd.tx_retransmits), rd.resent, "{}", s.command());
                        assert!(rd.guard_bytes_checked > 0, "{}", s.command());
                    }
                }
                if let Some(at) = &r.atomic {
                    eprintln!(
                        "     atomics: {} executed (port.rx_atomic +{}, replayed +{}); {} requests ({} again, {} of them unanswered, {} out of sequence), {} ATOMIC ACKNOWLEDGEs ({} original values checked), {} operands checked",
                        at.executed,
                        at.rx_atomic,
                        at.rx_atomic_replay,
                        at.requests,
                        at.re_requests,
                        at.re_requests_unanswered,
                        at.out_of_sequence,
                        at.atomic_acks,
                        at.orig_values_checked,
                        at.operands_checked
                    );
                    // (atomic_run::finish failed the run otherwise)
                    assert_eq!(at.executed, u64::from(s.iters), "{}", s.command());
                    assert_eq!(
                        u64::from(at.rx_atomic),
                        u64::from(s.iters),
                        "{}",
                        s.command()
                    );
                    assert_eq!(at.orig_values_checked, at.atomic_acks, "{}", s.command());
                    assert!(at.operands_checked > 0, "{}", s.command());
                    if s.fabric == "ideal" {
                        // requests arrive in order: rnic never NAKs
                        assert_eq!((at.out_of_sequence, at.naks), (0, 0), "{}", s.command());
                    }
                } else if let Some(at) = &r.atomic_client {
                    eprintln!(
                        "     atomics issued: {} completed (at most {} posted); {} requests ({} sent again), {} ATOMIC ACKNOWLEDGEs ({} answering a PSN again), {} NAKs; {} values checked where placed, {} successive values on {} operands; {} placed (port.rx_read_resp), {} dropped for their PSN",
                        at.completed,
                        at.depth,
                        at.requests,
                        at.resent,
                        at.atomic_acks,
                        at.atomic_acks_again,
                        at.naks,
                        at.values_checked,
                        at.operand_steps_checked,
                        at.operands,
                        at.placed,
                        at.rx_drop_psn
                    );
                    // (atomic_client::finish failed the run otherwise)
                    let n = u64::from(s.iters);
                    assert_eq!(s.role, Role::Requester, "{}", s.command());
                    assert_eq!(
                        (at.completed, at.values_checked, u64::from(at.placed)),
                        (n, n, n),
                        "{}",
                        s.command()
                    );
                    // 64 operands: atomic k and k + 64 share one
                    assert_eq!(at.operand_steps_checked, n - 64, "{}", s.command());
                    assert_eq!(r.messages_sent, n, "{}", s.command());
                    if s.fabric == "ideal" && r.rnic_timeouts == 0 {
                        assert_eq!((at.resent, at.naks), (0, 0), "{}", s.command());
                    }
                } else {
                    assert!(!s.test.is_atomic(), "{}: no atomic tally", s.command());
                }
                if let Some(n) = &r.note {
                    eprintln!("     note: {n}");
                }
                if i == 0 {
                    let f = std::fs::File::open(&pcap).unwrap();
                    let mut rd = pcap_file::pcap::PcapReader::new(f).unwrap();
                    let mut n = 0u64;
                    while let Some(p) = rd.next_packet() {
                        p.unwrap();
                        n += 1;
                    }
                    assert_eq!(
                        n,
                        r.frames_to_guest + r.frames_from_guest,
                        "frames in {}",
                        pcap.display()
                    );
                }
                let moved = r.messages_sent + r.messages_received;
                assert!(
                    r.frames_to_guest > 0 && r.frames_from_guest > 0,
                    "{}",
                    s.command()
                );
                assert!(moved > 0, "{}: nothing moved", s.command());
                let rxe = |k: &str| r.rxe_counters.get(k).copied().unwrap_or(0);
                // Every frame rxe sends passes rnic's checks, and on a clean
                // link rnic never resends and rxe never sees a duplicate or
                // a gap from rnic. (rxe itself resends now and then on a
                // clean link: its retransmit timer is armed once and not
                // pushed back by later sends, so it can fire a few ms after
                // a new message; rnic drops those copies as duplicates.)
                assert_eq!(
                    (r.rnic_rx_drop_icrc, r.rnic_rx_drop_qp),
                    (0, 0),
                    "{}",
                    s.command()
                );
                if s.fabric == "ideal" {
                    // rxe never sees a gap from rnic, and never has to NAK
                    // it; rnic resends only after its own timeout, which a
                    // guest stalled for seconds by a loaded host can cause
                    assert_eq!(r.rnic_seq_naks_received, 0, "{}", s.command());
                    for k in ["out_of_seq_request", "retry_exceeded_err", "send_err"] {
                        assert_eq!(rxe(k), 0, "{}: rxe0 {k}", s.command());
                    }
                    if r.rnic_timeouts == 0 {
                        assert_eq!(r.rnic_retransmits, 0, "{}", s.command());
                        assert_eq!(rxe("duplicate_request"), 0, "{}", s.command());
                    }
                }
                if s.fabric == "lossy" {
                    assert!(
                        r.frames_dropped > 0,
                        "{}: the lossy link dropped nothing",
                        s.command()
                    );
                }
                let reader =
                    matches!(s.test, Test::ReadBw | Test::ReadLat) && s.role == Role::Requester;
                if reader {
                    // (perftest's rand() bytes cannot be compared: the run
                    // fails unless every READ succeeded and rnic placed a
                    // response per path MTU of each)
                    assert_eq!(r.messages_sent, u64::from(s.iters), "{}", s.command());
                } else if matches!(
                    s.test,
                    Test::PingPong
                        | Test::WriteImm
                        | Test::Read
                        | Test::ReadBw
                        | Test::ReadLat
                        | Test::AtomicBw
                        | Test::AtomicBwCas
                ) {
                    assert!(r.bytes_checked > 0, "{}: nothing checked", s.command());
                }
            }
            Err(e) => {
                eprintln!("FAIL {}: {e}", s.command());
                failures.push(format!("{}: {e}", s.command()));
                if matches!(e, rnic_interop::InteropError::Guest(_)) {
                    break;
                }
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} runs failed:\n{}",
        failures.len(),
        failures.join("\n")
    );

    // Nothing hangs: the guest vanishes (QEMU killed) in the middle of a
    // long run; the run ends with an error naming the lost link, in bounded
    // time.
    let pid = guest.pid();
    let killer = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_secs(4));
        std::process::Command::new("kill")
            .args(["-9", &pid.to_string()])
            .status()
            .expect("kill");
    });
    let mut s = spec(Test::PingPong, Role::Requester, "ideal", 1024);
    s.iters = 1_000_000;
    let t0 = std::time::Instant::now();
    let e = run_one(&mut guest, &s).expect_err("a run whose peer vanished must fail");
    killer.join().unwrap();
    let msg = e.to_string();
    eprintln!("vanished guest: {msg} (after {:?})", t0.elapsed());
    assert!(
        msg.contains("link is gone") || msg.contains("QEMU exited"),
        "unclear error: {msg}"
    );
    assert!(
        t0.elapsed() < Duration::from_secs(60),
        "took {:?}",
        t0.elapsed()
    );
}

/// A guest that cannot boot (here: a kernel file that is no kernel) ends in
/// a clear error, not a hang.
#[test]
fn a_guest_that_cannot_boot_is_a_clear_error() {
    if skip() {
        return;
    }
    let dir = std::env::temp_dir().join(format!("rnic-bad-image-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("vmlinuz"), b"this is not a kernel").unwrap();
    std::fs::write(dir.join("initrd.img"), b"").unwrap();
    std::fs::write(dir.join("rootfs.ext4"), vec![0u8; 1 << 20]).unwrap();
    let mut cfg = GuestConfig::new(&dir, dir.join("run"));
    cfg.boot_timeout = Duration::from_secs(60);
    let t0 = std::time::Instant::now();
    let e = Guest::boot(&cfg)
        .err()
        .expect("a guest without a kernel must not boot");
    eprintln!("bad image: {e}");
    assert!(t0.elapsed() < Duration::from_secs(90));
    let _ = std::fs::remove_dir_all(&dir);
}
