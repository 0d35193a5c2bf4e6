//! Random and mutated frames sent into a NIC while a legitimate connection
//! runs (the campaign is `rnic_torture::fuzz`): nothing is ever written
//! outside a registered region that allows remote writes, the legitimate QP
//! keeps working, nothing hangs (watchdog in simulated cycles), every
//! frame is counted once (accepted or dropped with a reason), and every
//! frame the NIC sends is inspected: it goes to the peer's address and a
//! connected QP, READ responses answer injected requests in order with the
//! playground's bytes (told apart packet by packet when several requests
//! share a PSN), and nothing carries the secret region's pattern. The
//! matcher itself has unit tests in `rnic_torture::fuzz`.
//!
//! CI runs a short slice; `rnic fuzz --frames 100000` (or
//! `RNIC_FUZZ_FRAMES=100000` here) runs a long campaign.

use rnic_torture::fuzz::{self, FuzzConfig};

#[test]
fn fuzzed_responder_writes_nothing_it_must_not() {
    let frames: u64 = std::env::var("RNIC_FUZZ_FRAMES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(3000);
    // rc at both widths, and the mp responder (placement on arrival)
    for (w, seed, mp) in [(64, 4242, false), (256, 4243, false), (64, 4244, true)] {
        let rep = fuzz::run(
            &FuzzConfig {
                seed,
                frames: if w == 64 { frames } else { frames / 3 },
                data_w: w,
                mp,
                ..FuzzConfig::default()
            },
            &mut |_| {},
        )
        .unwrap();
        eprintln!("DATA_W={w} mp={mp}: {rep:?}");
        assert!(!rep.failed(), "DATA_W={w} mp={mp}: {:?}", rep.failures);
        assert!(rep.messages > 0);
        let c = |k: &str| rep.counters[k];
        // every deliberate READ case was sent; on rc some were answered,
        // their bytes checked; every frame of NIC b was inspected
        for (k, n) in &rep.read_cases {
            assert!(*n > 0, "DATA_W={w} mp={mp}: READ case {k} never sent");
        }
        assert_eq!(rep.b_frames_inspected, c("b.tx_frames"));
        if !mp {
            assert!(
                rep.reads_answered > 0 && rep.read_bytes_checked > 0,
                "{rep:?}"
            );
        }
        // the campaign really exercised the drop paths
        for k in [
            "b.rx_drop_icrc",
            "b.rx_drop_malformed",
            "b.rx_drop_qp",
            "b.rx_drop_psn",
            "b.rx_drop_transport",
        ] {
            assert!(c(k) > 0, "{k} never counted: {:?}", rep.counters);
        }
    }
}

/// The checks can fail: with the responder's memory-region checks switched
/// off (`dma.debug.no_mr_check`), the same campaign sees forged frames write
/// outside the registered regions, or into the one without REMOTE_WRITE.
#[test]
fn a_responder_without_mr_checks_is_caught() {
    for mp in [false, true] {
        let rep = fuzz::run(
            &FuzzConfig {
                frames: 1500,
                brk: Some(rnic_torture::Break::NoMrCheck),
                mp,
                ..FuzzConfig::default()
            },
            &mut |_| {},
        )
        .unwrap();
        assert!(rep.failed(), "mp={mp}: {rep:?}");
        assert!(
            rep.failures
                .iter()
                .any(|f| f.contains("outside the mapped buffers")
                    || f.contains("without REMOTE_WRITE")),
            "mp={mp}: {:?}",
            rep.failures
        );
        // on rc the READs are caught too: the secret region's bytes on the
        // wire, a READ answered that had to be refused
        if !mp {
            for want in [
                "the secret region's pattern",
                "answered a READ it must refuse",
            ] {
                assert!(
                    rep.failures.iter().any(|f| f.contains(want)),
                    "{want}: {:?}",
                    rep.failures
                );
            }
        }
    }
}

/// A watchdog too short for even the legitimate message is reported too.
#[test]
fn a_lost_legitimate_message_is_caught() {
    let rep = fuzz::run(
        &FuzzConfig {
            frames: 50,
            watchdog: 5,
            ..FuzzConfig::default()
        },
        &mut |_| {},
    )
    .unwrap();
    assert!(rep.failed());
    assert!(
        rep.failures[0].contains("no receive completion"),
        "{:?}",
        rep.failures
    );
}
