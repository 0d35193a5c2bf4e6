//! The torture test on two simulated NICs: clean on a fixed seed, every
//! break switch caught, reproducible; with `--reads`, READs of what the
//! messages wrote checked clean on `ideal` and `hostile`, and the
//! `early-read-cqe` switch caught; with `--atomics`, atomics on per-QP
//! counter words checked clean on `hostile` (resends answered from the
//! replay record, never executed twice), and `early-read-cqe` caught on
//! them too; with `qp_cache`, QPs in host memory behind the NICs' context
//! cache clean on hostile fabrics and every break switch caught.

use rnic_torture::sim::{self, Evidence, SimOpts};
use rnic_torture::{Break, Config, Report};

/// Messages within which every break switch must be caught: a tenth of a
/// default run (`Config::default().messages`). Over seeds 1..=8 the first
/// violation came after 0..=4 checked messages (see the README).
const CATCH_WITHIN: u64 = 100;

fn run(cfg: &Config, data_w: u32) -> Report {
    run_on(cfg, data_w, "ideal")
}

fn run_on(cfg: &Config, data_w: u32, fabric: &str) -> Report {
    let o = SimOpts {
        data_w,
        fabric: fabric.into(),
        ..SimOpts::default()
    };
    sim::run_torture(&o, cfg, &Evidence::default(), &mut |_, _| {}, &mut |_| {})
        .unwrap_or_else(|e| panic!("torture: {e}"))
        .report
}

/// A run at DATA_W 64 on `ideal` that ends at its first failure: for the
/// break tests, where the catch is what counts.
fn run_to_first_failure(cfg: &Config) -> Report {
    let ev = Evidence {
        stop_on_failure: true,
        ..Evidence::default()
    };
    sim::run_torture(&SimOpts::default(), cfg, &ev, &mut |_, _| {}, &mut |_| {})
        .unwrap_or_else(|e| panic!("torture: {e}"))
        .report
}

#[test]
fn clean_run_on_a_fixed_seed() {
    let cfg = Config {
        seed: 7,
        messages: 120,
        ..Config::default()
    };
    let r = run(&cfg, 64);
    assert!(!r.failed(), "{r:#?}");
    assert_eq!(r.messages, 120);
    assert!(r.bytes > 0 && r.cycles > 0);
    assert_eq!(r.first_failure, None);
    assert_eq!((r.transport.as_str(), r.fabric.as_str()), ("rc", "ideal"));
}

#[test]
fn clean_run_wide_flush_many_qps() {
    // DATA_W 256, flush mode, PMTU 256 (many packets), 8 QPs.
    let cfg = Config {
        seed: 3,
        messages: 80,
        qps: 8,
        max_size: 3000,
        mtu: rnic_verbs::Mtu::Mtu256,
        flush: true,
        ..Config::default()
    };
    let r = run(&cfg, 256);
    assert!(!r.failed(), "{r:#?}");
    assert_eq!(r.messages, 80);
}

fn caught(b: Break, flush: bool) {
    let cfg = Config {
        seed: 1,
        messages: CATCH_WITHIN,
        brk: Some(b),
        flush,
        ..Config::default()
    };
    let r = run_to_first_failure(&cfg);
    let f = r.first_failure.clone().unwrap_or_else(|| {
        panic!("--break {b} (flush {flush}) not caught in {CATCH_WITHIN} messages: {r:#?}")
    });
    assert!(r.violations > 0, "{r:#?}");
    assert_eq!(f.kind, "violation", "{f:#?}");
    assert!(f.messages_before < CATCH_WITHIN);
    eprintln!(
        "--break {b}{}: first violation after {} messages",
        if flush { " --flush" } else { "" },
        f.messages_before,
    );
    // Breaking the barrier makes CQEs early, never data wrong.
    assert_eq!(r.corruptions, 0, "{r:#?}");
    assert_eq!(r.lost_completions + r.error_completions, 0, "{r:#?}");
}

#[test]
fn cqe_ro_is_caught() {
    caught(Break::CqeRo, false);
    caught(Break::CqeRo, true);
}

#[test]
fn early_cqe_is_caught() {
    caught(Break::EarlyCqe, false);
    caught(Break::EarlyCqe, true);
}

#[test]
fn bypass_is_caught() {
    caught(Break::Bypass, false);
    caught(Break::Bypass, true);
}

/// Issue 19: every QP in host memory behind the context cache, three
/// twice as many QPs as the cache's 64 slots, so most messages miss on
/// both NICs. Over a hostile fabric (loss, duplicates, corruption,
/// reordering) rc and mp (sprayed over 8 ports) stay clean: the barrier,
/// PSN tracking and the mp window survive every eviction and fetch.
#[test]
fn clean_over_cached_qps_on_hostile_fabrics() {
    for (mp, fabric, spray_log) in [(false, "hostile", 0), (true, "spray-8-hostile", 3)] {
        let cfg = Config {
            seed: 19,
            messages: 200,
            qps: 128,
            window: 1,
            max_size: 1024,
            mp,
            spray_log,
            qp_cache: 1024,
            ..Config::default()
        };
        let r = run_on(&cfg, 64, fabric);
        assert!(!r.failed(), "{fabric}: {r:#?}");
        assert_eq!(r.messages, 200, "{fabric}");
        let q = r.qp_cache.clone().expect("the cache's counters");
        for (side, c) in [("a", q.a), ("b", q.b.expect("two NICs"))] {
            eprintln!("{fabric} NIC {side}: {c:?}");
            assert!(c.slots <= cfg.qps / 2, "{fabric} {side}: {c:?}");
            // most messages miss, and every miss fetched
            assert!(
                c.hit_rate.is_some_and(|h| h < 0.9) && c.fetches >= c.lookup_misses,
                "{fabric} {side}: {c:?}"
            );
            assert!(c.evictions > 0 && c.writebacks >= c.evictions);
        }
    }
}

/// The three break switches are caught on cached QPs too: with 80 QPs on
/// 64 cache slots, within the first few messages checked.
#[test]
fn breaks_are_caught_over_cached_qps() {
    for b in [Break::CqeRo, Break::EarlyCqe, Break::Bypass] {
        let cfg = Config {
            seed: 5,
            messages: CATCH_WITHIN,
            qps: 80,
            window: 1,
            max_size: 2048,
            brk: Some(b),
            qp_cache: 256,
            ..Config::default()
        };
        let r = run_to_first_failure(&cfg);
        let f = r
            .first_failure
            .clone()
            .unwrap_or_else(|| panic!("--break {b} --qp-cache: not caught: {r:#?}"));
        assert_eq!(f.kind, "violation", "{b}: {f:#?}");
        assert_eq!(r.corruptions + r.lost_completions, 0, "{b}: {r:#?}");
        let q = r.qp_cache.expect("the cache's counters");
        assert!(
            q.a.evictions > 0 && q.b.is_some_and(|c| c.evictions > 0),
            "{b}: no QP went through the cache: {q:#?}"
        );
        eprintln!(
            "--break {b} over 80 cached QPs: caught after {} messages",
            f.messages_before
        );
    }
}

/// The lost-completion detector can fail: on a fabric that drops every
/// frame, with an ACK timeout far beyond the watchdog, the message's
/// completions never come and the watchdog counts them lost, after
/// `--watchdog` plus the window's backlog and no sooner.
#[test]
fn a_completion_that_never_comes_is_lost() {
    let cfg = Config {
        messages: 1,
        qps: 1,
        window: 1,
        max_size: 64,
        watchdog: 100_000,
        retry: rnic_harness::Retry {
            timeout: 12,
            ..rnic_harness::Retry::default()
        },
        ..Config::default()
    };
    let r = run_on(&cfg, 64, "spray-1-loss1");
    let f = r.first_failure.clone().expect("a lost completion");
    assert_eq!(f.kind, "lost", "{f:#?}");
    assert_eq!(r.lost_completions, 2, "{r:#?}");
    let limit = cfg.watchdog + cfg.backlog_cycles();
    assert!(
        f.detail
            .contains(&format!("no completion for {limit} cycles")),
        "{f:#?}"
    );
    assert!(r.cycles > limit, "{r:#?}");
}

/// A context table too small for the QPs asked for is refused before any
/// QP is made, with the flag named.
#[test]
fn a_qp_cache_smaller_than_the_qps_is_refused() {
    let cfg = Config {
        qps: 100,
        qp_cache: 64,
        ..Config::default()
    };
    let e = sim::run_torture(
        &SimOpts::default(),
        &cfg,
        &Evidence::default(),
        &mut |_, _| {},
        &mut |_| {},
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("--qps 100") && e.contains("62 queue pairs with --qp-cache 64"),
        "{e}"
    );
}

#[test]
fn same_seed_same_report() {
    let cfg = Config {
        seed: 11,
        messages: 60,
        qps: 3,
        brk: Some(Break::CqeRo),
        ..Config::default()
    };
    let a = serde_json::to_string(&run(&cfg, 64)).unwrap();
    let b = serde_json::to_string(&run(&cfg, 64)).unwrap();
    assert_eq!(a, b);
    let other = serde_json::to_string(&run(
        &Config {
            seed: 12,
            ..cfg.clone()
        },
        64,
    ))
    .unwrap();
    assert_ne!(a, other, "the seed must matter");
}

/// `--reads 0.3`: about a third of the messages are read back (half of
/// those with a fenced WRITE of new bytes and a second READ behind), every
/// READ's bytes right when its CQE is seen.
fn clean_with_reads(fabric: &str, seed: u64, messages: u64) {
    let cfg = Config {
        seed,
        messages,
        reads: 0.3,
        ..Config::default()
    };
    let r = run_on(&cfg, 64, fabric);
    assert!(!r.failed(), "{fabric}: {r:#?}");
    assert_eq!(r.messages, messages, "{fabric}: {r:#?}");
    let rd = r.reads.expect("read counts with --reads");
    assert!(rd.posted > 0 && rd.fenced_writes > 0, "{fabric}: {rd:?}");
    assert_eq!(rd.checked, rd.posted, "{fabric}: every READ checked");
    assert!(rd.bytes > 0 && rd.failures == 0, "{fabric}: {rd:?}");
    assert!(
        r.counters.get("a.rx_read_resp").copied().unwrap_or(0) > 0,
        "{fabric}: no READ response placed: {:?}",
        r.counters
    );
    eprintln!(
        "{fabric} --reads 0.3 seed {seed}: {} messages, {} READs checked ({} bytes, {} behind fenced WRITEs), {} cycles",
        r.messages, rd.checked, rd.bytes, rd.fenced_writes, r.cycles
    );
}

#[test]
fn reads_are_clean_on_ideal() {
    clean_with_reads("ideal", 7, 120);
}

#[test]
fn reads_are_clean_on_hostile() {
    clean_with_reads("hostile", 3, 60);
}

/// `--break early-read-cqe --reads 1`: a READ's CQE before its data is
/// caught as a `read` failure (stale bytes), and nothing else goes wrong.
#[test]
fn early_read_cqe_is_caught_with_reads() {
    let cfg = Config {
        seed: 1,
        messages: CATCH_WITHIN,
        brk: Some(Break::EarlyReadCqe),
        reads: 1.0,
        ..Config::default()
    };
    let r = run(&cfg, 64);
    let f = r.first_failure.clone().unwrap_or_else(|| {
        panic!("--break early-read-cqe --reads 1 not caught in {CATCH_WITHIN} messages: {r:#?}")
    });
    assert_eq!(f.kind, "read", "{f:#?}");
    assert!(f.messages_before < CATCH_WITHIN);
    let rd = r.reads.expect("read counts");
    assert!(rd.failures > 0 && rd.stale_bytes > 0, "{rd:?}");
    eprintln!(
        "--break early-read-cqe --reads 1: first read failure after {} messages; {} of {} READs failed",
        f.messages_before, rd.failures, rd.checked
    );
    // The switch makes READ CQEs early, never the WRITEs' data wrong.
    assert_eq!(r.violations + r.corruptions, 0, "{r:#?}");
    assert_eq!(r.lost_completions + r.error_completions, 0, "{r:#?}");
}

#[test]
fn no_reads_no_read_counts() {
    let cfg = Config {
        seed: 7,
        messages: 20,
        ..Config::default()
    };
    let r = run(&cfg, 64);
    assert_eq!(r.reads, None);
    let json = serde_json::to_string(&r).unwrap();
    assert!(!json.contains("\"reads\""), "{json}");
}

#[test]
fn a_nic_without_read_is_refused() {
    let o = SimOpts {
        knobs: rnic_sim::ModelKnobs::WriteOnly,
        ..SimOpts::default()
    };
    let cfg = Config {
        messages: 10,
        reads: 0.5,
        ..Config::default()
    };
    let Err(e) = sim::run_torture(&o, &cfg, &Evidence::default(), &mut |_, _| {}, &mut |_| {})
    else {
        panic!("a build without READ must refuse --reads");
    };
    let e = e.to_string();
    assert!(e.contains("--reads 0.5") && e.contains("bit 8"), "{e}");
    assert!(!e.contains('\n'), "{e}");
}

#[test]
fn bad_configs_are_refused() {
    let base = Config::default();
    for (cfg, want) in [
        (
            Config {
                max_size: 10,
                min_size: 20,
                ..base.clone()
            },
            "below --min-size",
        ),
        (
            Config {
                qps: 0,
                ..base.clone()
            },
            "--qps",
        ),
        (
            Config {
                window: 0,
                ..base.clone()
            },
            "--window",
        ),
        (
            Config {
                reads: 1.5,
                ..base.clone()
            },
            "--reads (1.5) must be a fraction from 0 to 1",
        ),
        (
            Config {
                reads: -0.1,
                ..base.clone()
            },
            "--reads (-0.1) must be a fraction from 0 to 1",
        ),
        (
            Config {
                reads: f64::NAN,
                ..base.clone()
            },
            "must be a fraction from 0 to 1",
        ),
        (
            Config {
                reads: 0.3,
                mp: true,
                ..base.clone()
            },
            "RDMA READ runs on rc QPs only",
        ),
        (
            Config {
                brk: Some(Break::EarlyReadCqe),
                ..base.clone()
            },
            "without --reads or --atomics the torture issues no READs and no atomics",
        ),
        (
            Config {
                atomics: 1.5,
                ..base.clone()
            },
            "--atomics (1.5) must be a fraction from 0 to 1",
        ),
        (
            Config {
                atomics: f64::NAN,
                ..base.clone()
            },
            "--atomics (NaN) must be a fraction from 0 to 1",
        ),
        (
            Config {
                atomics: 0.3,
                mp: true,
                ..base.clone()
            },
            "atomics run on rc QPs only",
        ),
    ] {
        let e = cfg.validate().unwrap_err().to_string();
        assert!(e.contains(want), "{e}");
        assert!(!e.contains('\n'));
    }
    // with READs the switch is the torture's to catch
    Config {
        brk: Some(Break::EarlyReadCqe),
        reads: 1.0,
        ..base.clone()
    }
    .validate()
    .expect("--break early-read-cqe --reads 1");
    Config {
        brk: Some(Break::EarlyReadCqe),
        atomics: 1.0,
        ..base.clone()
    }
    .validate()
    .expect("--break early-read-cqe --atomics 1");
    let e = sim::fabric("nope").unwrap_err().to_string();
    assert!(e.contains("ideal, lossy, reorder, hostile, spray-K"), "{e}");
}

/// `--atomics`: a fraction of messages followed by an atomic on their QP's
/// counter word; every original value right when its CQE is seen, every
/// counter right at the end, each atomic executed once.
fn clean_with_atomics(fabric: &str, seed: u64, messages: u64, reads: f64) -> Report {
    let cfg = Config {
        seed,
        messages,
        atomics: 0.5,
        reads,
        ..Config::default()
    };
    let r = run_on(&cfg, 64, fabric);
    assert!(!r.failed(), "{fabric}: {r:#?}");
    assert_eq!(r.messages, messages, "{fabric}: {r:#?}");
    let at = r.atomics.expect("atomic counts with --atomics");
    assert!(at.fetch_adds > 0 && at.cmp_swaps > 0, "{fabric}: {at:?}");
    assert_eq!(at.posted, at.fetch_adds + at.cmp_swaps, "{fabric}: {at:?}");
    assert_eq!(at.completed, at.posted, "{fabric}: every atomic completed");
    assert_eq!(at.checked, at.posted, "{fabric}: every atomic checked");
    assert_eq!(at.counters_checked, u64::from(cfg.qps), "{fabric}: {at:?}");
    // executed once each: resends are answered from the replay record
    assert_eq!(at.executed, at.posted, "{fabric}: {at:?}");
    assert_eq!(at.failures, 0, "{fabric}: {at:?}");
    eprintln!(
        "{fabric} --atomics 0.5 --reads {reads} seed {seed}: {} messages, {} atomics checked, {} duplicates answered from the replay record, {} cycles",
        r.messages, at.checked, at.replayed, r.cycles
    );
    r
}

#[test]
fn atomics_are_clean_on_hostile() {
    clean_with_atomics("hostile", 3, 60, 0.0);
}

#[test]
fn atomics_and_reads_are_clean_on_lossy() {
    let r = clean_with_atomics("lossy", 5, 60, 0.3);
    let rd = r.reads.expect("read counts");
    assert!(
        rd.posted > 0 && rd.checked == rd.posted && rd.failures == 0,
        "{rd:?}"
    );
}

#[test]
fn no_atomics_no_atomic_counts() {
    let r = run(
        &Config {
            seed: 7,
            messages: 20,
            ..Config::default()
        },
        64,
    );
    assert_eq!(r.atomics, None);
    let json = serde_json::to_string(&r).unwrap();
    assert!(!json.contains("\"atomics\""), "{json}");
}

/// `--break early-read-cqe --atomics 1`: an atomic's CQE before its
/// original value is caught as an `atomic` failure, and nothing else goes
/// wrong.
#[test]
fn early_read_cqe_is_caught_with_atomics() {
    let cfg = Config {
        seed: 1,
        messages: CATCH_WITHIN,
        brk: Some(Break::EarlyReadCqe),
        atomics: 1.0,
        ..Config::default()
    };
    let r = run(&cfg, 64);
    let f = r.first_failure.clone().unwrap_or_else(|| {
        panic!("--break early-read-cqe --atomics 1 not caught in {CATCH_WITHIN} messages: {r:#?}")
    });
    assert_eq!(f.kind, "atomic", "{f:#?}");
    assert!(f.detail.contains("the CQE came before its value"), "{f:#?}");
    assert!(f.messages_before < CATCH_WITHIN);
    let at = r.atomics.expect("atomic counts");
    assert!(at.failures > 0 && at.early > 0, "{at:?}");
    eprintln!(
        "--break early-read-cqe --atomics 1: first atomic failure after {} messages; {} of {} atomics early",
        f.messages_before, at.early, at.checked
    );
    assert_eq!(r.violations + r.corruptions, 0, "{r:#?}");
    assert_eq!(r.lost_completions + r.error_completions, 0, "{r:#?}");
}

#[test]
fn a_nic_without_atomics_is_refused() {
    let o = SimOpts {
        knobs: rnic_sim::ModelKnobs::WriteOnly,
        ..SimOpts::default()
    };
    let cfg = Config {
        messages: 10,
        atomics: 0.5,
        ..Config::default()
    };
    let Err(e) = sim::run_torture(&o, &cfg, &Evidence::default(), &mut |_, _| {}, &mut |_| {})
    else {
        panic!("a build without atomics must refuse --atomics");
    };
    let e = e.to_string();
    assert!(
        e.contains("--atomics 0.5") && e.contains("without ATOMIC_EN"),
        "{e}"
    );
    assert!(!e.contains('\n'), "{e}");
}
