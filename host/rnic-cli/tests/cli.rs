//! The `rnic` binary: exit statuses, one-line errors, reproducible JSON,
//! caught break switches, and the evidence files of a failure.

use std::path::PathBuf;
use std::process::Output;

mod common;
use common::rnic;

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("rnic-cli-test-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d.join(name)
}

/// Exit status 2 and exactly one line on stderr, mentioning `want`.
fn usage_error(args: &[&str], want: &str) {
    let o = rnic(args);
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{args:?}: {e}");
    assert_eq!(
        e.trim_end().lines().count(),
        1,
        "{args:?}: not one line: {e}"
    );
    assert!(e.contains(want), "{args:?}: {e}");
    assert!(!e.contains("panicked"), "{e}");
}

#[test]
fn bad_input_is_a_one_line_error_with_status_2() {
    usage_error(
        &["torture", "--min-size", "100", "--max-size", "10"],
        "--max-size (10) is below --min-size (100)",
    );
    usage_error(&["torture", "--qps", "0"], "--qps must be at least 1");
    usage_error(
        &["torture", "--fabric", "bogus"],
        "valid profiles: ideal, lossy, reorder, hostile, spray-K",
    );
    usage_error(
        &["torture", "--pcap", "/nonexistent-dir/x/y.pcap"],
        "cannot write --pcap /nonexistent-dir/x/y.pcap",
    );
    usage_error(
        &["torture", "--wave", "/nonexistent-dir/x/y.fst"],
        "cannot write --wave",
    );
    usage_error(
        &["torture", "--device", "0000:99:00.0"],
        "no PCI function 0000:99:00.0 in /sys/bus/pci/devices",
    );
    usage_error(&["torture", "--mtu", "1000"], "--mtu 1000");
    usage_error(
        &["bench", "write-bw", "--fabric", "spray-0"],
        "valid profiles",
    );
    usage_error(
        &["bench", "write-lat", "--device", "nope"],
        "--device nope: not a device name",
    );
    usage_error(
        &["info", "--device", "vfio:0000:99:00.0"],
        "no PCI function 0000:99:00.0 in /sys/bus/pci/devices",
    );
    usage_error(
        &["torture", "--break", "no-mr-check"],
        "the fuzz campaign (`rnic fuzz --break no-mr-check`) catches it",
    );
    usage_error(
        &["torture", "--reads", "1.5"],
        "--reads (1.5) must be a fraction from 0 to 1",
    );
    usage_error(
        &["torture", "--transport", "mp", "--reads", "0.3"],
        "RDMA READ runs on rc QPs only",
    );
    usage_error(
        &["torture", "--transport", "local-copy", "--reads", "0.3"],
        "--transport local-copy copies on one NIC and issues no RDMA READ",
    );
    usage_error(
        &["torture", "--sim-model", "write-only", "--reads", "0.3"],
        "NIC a issues no RDMA READ",
    );
    usage_error(&["torture", "--break", "early-read-cqe"], "add --reads R");
    usage_error(
        &["torture", "--atomics", "1.5"],
        "--atomics (1.5) must be a fraction from 0 to 1",
    );
    usage_error(
        &["torture", "--transport", "mp", "--atomics", "0.3"],
        "atomics run on rc QPs only",
    );
    usage_error(
        &["torture", "--transport", "local-copy", "--atomics", "0.3"],
        "--transport local-copy copies on one NIC and issues no atomics",
    );
    usage_error(
        &["torture", "--sim-model", "write-only", "--atomics", "0.3"],
        "a build without ATOMIC_EN",
    );
    usage_error(
        &["fuzz", "--break", "cqe-ro"],
        "the torture test (`rnic torture --break cqe-ro`) catches it",
    );
    // clap's own errors: status 2 as well
    let o = rnic(&["torture", "--break", "everything"]);
    assert_eq!(o.status.code(), Some(2));
    let o = rnic(&["torture", "--messages", "many"]);
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn clean_run_exits_0_and_json_is_reproducible() {
    let args = [
        "torture",
        "--messages",
        "40",
        "--qps",
        "2",
        "--seed",
        "5",
        "--json",
    ];
    let a = rnic(&args);
    let b = rnic(&args);
    assert_eq!(a.status.code(), Some(0), "{}", stderr(&a));
    assert_eq!(b.status.code(), Some(0));
    assert_eq!(a.stdout, b.stdout, "same seed, same JSON");
    let out = String::from_utf8_lossy(&a.stdout);
    assert_eq!(out.trim_end().lines().count(), 1, "one JSON object: {out}");
    for key in [
        "\"seed\":5",
        "\"messages\":40",
        "\"bytes\":",
        "\"violations\":0",
        "\"corruptions\":0",
        "\"lost_completions\":0",
        "\"duplicate_completions\":0",
        "\"out_of_order_completions\":0",
        "\"error_completions\":0",
        "\"cycles\":",
        "\"transport\":\"rc\"",
        "\"fabric\":\"ideal\"",
        "\"break\":null",
    ] {
        assert!(out.contains(key), "{key} missing in {out}");
    }
    assert!(!out.contains("wall"), "wall time only with --timing: {out}");
    assert!(
        !out.contains("\"reads\""),
        "read counts only with --reads: {out}"
    );
}

#[test]
fn break_switch_fails_with_repro_and_evidence() {
    let pcap = tmp("fail.pcapng");
    let wave = tmp("fail.fst");
    let o = rnic(&[
        "torture",
        "--messages",
        "30",
        "--break",
        "early-cqe",
        "--pcap",
        pcap.to_str().unwrap(),
        "--wave",
        wave.to_str().unwrap(),
        "--wave-window",
        "2000",
        "--json",
    ]);
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{e}");
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("\"violations\":") && !out.contains("\"violations\":0"),
        "{out}"
    );
    assert!(e.contains("first failure (violation)"), "{e}");
    let repro = e
        .lines()
        .find_map(|l| l.strip_prefix("reproduce with: "))
        .unwrap_or_else(|| panic!("no repro line: {e}"));
    assert!(
        repro.contains("--break early-cqe") && repro.contains("--seed 1"),
        "{repro}"
    );
    assert!(e.contains("before the first failure"), "{e}");
    assert!(
        std::fs::metadata(&pcap).unwrap().len() > 100,
        "pcap written"
    );
    assert!(
        !e.contains("WARNING"),
        "replay must reproduce the failure: {e}"
    );
    for i in 0..2 {
        let f = rnic_torture::sim::wave_path(&wave, i);
        assert!(
            std::fs::metadata(&f).map(|m| m.len()).unwrap_or(0) > 1000,
            "{} written",
            f.display()
        );
    }
    // The reproduction command (run through the binary) fails the same way.
    let mut args: Vec<&str> = repro
        .split_whitespace()
        .skip_while(|w| *w != "--")
        .skip(1)
        .collect();
    args.push("--json");
    let again = rnic(&args);
    assert_eq!(again.status.code(), Some(1));
    assert_eq!(again.stdout, o.stdout);
}

/// `--break early-read-cqe --reads 1`: caught as a `read` failure, and
/// the reproducing command carries `--reads`.
#[test]
fn early_read_cqe_is_caught_with_reads() {
    let o = rnic(&[
        "torture",
        "--messages",
        "30",
        "--reads",
        "1",
        "--break",
        "early-read-cqe",
        "--stop-on-failure",
        "--json",
    ]);
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{e}");
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("\"reads\":{") && !out.contains("\"failures\":0"),
        "{out}"
    );
    assert!(e.contains("first failure (read)"), "{e}");
    let repro = e
        .lines()
        .find_map(|l| l.strip_prefix("reproduce with: "))
        .unwrap_or_else(|| panic!("no repro line: {e}"));
    assert!(
        repro.contains("--break early-read-cqe") && repro.contains("--reads 1"),
        "{repro}"
    );
}

/// `--break early-read-cqe --atomics 1`: caught as an `atomic` failure,
/// and the reproducing command carries `--atomics`.
#[test]
fn early_read_cqe_is_caught_with_atomics() {
    let o = rnic(&[
        "torture",
        "--messages",
        "30",
        "--atomics",
        "1",
        "--break",
        "early-read-cqe",
        "--stop-on-failure",
        "--json",
    ]);
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{e}");
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("\"atomics\":{") && !out.contains("\"failures\":0"),
        "{out}"
    );
    assert!(e.contains("first failure (atomic)"), "{e}");
    assert!(e.contains("the CQE came before its value"), "{e}");
    let repro = e
        .lines()
        .find_map(|l| l.strip_prefix("reproduce with: "))
        .unwrap_or_else(|| panic!("no repro line: {e}"));
    assert!(
        repro.contains("--break early-read-cqe") && repro.contains("--atomics 1"),
        "{repro}"
    );
}

#[test]
fn local_copy_transport_still_works() {
    let o = rnic(&[
        "torture",
        "--transport",
        "local-copy",
        "--messages",
        "40",
        "--json",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let o = rnic(&[
        "torture",
        "--transport",
        "local-copy",
        "--messages",
        "200",
        "--break",
        "cqe-ro",
        "--json",
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
}

#[test]
fn bench_rows_are_json() {
    let o = rnic(&[
        "bench",
        "write-bw",
        "--sizes",
        "4096",
        "--bytes",
        "65536",
        "--min-iters",
        "1",
        "--json",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    for key in [
        "\"test\":\"write_bw\"",
        "\"transport\":\"rc\"",
        "\"fabric\":\"ideal\"",
        "\"msg_size\":4096",
        "\"bytes\":65536",
        "\"cycles\":",
        "\"clock_mhz\":",
        "\"gbps\":",
        "\"wire_max_efficiency\":",
    ] {
        assert!(out.contains(key), "{key} missing in {out}");
    }
    let o = rnic(&[
        "bench",
        "write-lat",
        "--sizes",
        "64",
        "--iters",
        "10",
        "--json",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("\"test\":\"write_lat\"") && out.contains("\"lat_median_cycles\":"),
        "{out}"
    );
}

#[test]
fn ctx_table_bench_times_loads_and_saves() {
    let o = rnic(&["bench", "ctx-table", "--commands", "4", "--json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    let rows: Vec<serde_json::Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    let ops: Vec<&str> = rows.iter().map(|r| r["op"].as_str().unwrap()).collect();
    assert_eq!(ops, ["load", "save", "evict"], "{out}");
    let per: Vec<f64> = rows
        .iter()
        .map(|r| {
            let f = |k: &str| r[k].as_f64().unwrap_or_else(|| panic!("{k} missing: {r}"));
            assert_eq!(f("record_bytes"), 512.0, "{r}");
            assert!(
                (f("cycles_per_command") - f("cycles") / 4.0).abs() < 1e-9,
                "{r}"
            );
            // a load waits for a DMA read of 100 cycles at least
            assert!(f("cycles_per_command") > 100.0, "{r}");
            f("cycles_per_command")
        })
        .collect();
    assert!(
        per[1] > per[0],
        "a save (write-back, then load) costs more than a load: {out}"
    );
    // an evict's read (of another record) overlaps its write-back: 1.3
    // loads, where a save's (of the same record) waits for the write's
    // status (1.6 loads)
    assert!(
        per[2] < 1.4 * per[0] && per[2] < per[1],
        "an evict costs a load and a write-back in a row: {out}"
    );
    // two at once overlap their DMA reads (simulated cycles: deterministic)
    let o = rnic(&[
        "bench",
        "ctx-table",
        "--commands",
        "8",
        "--in-flight",
        "2",
        "--json",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out2 = String::from_utf8_lossy(&o.stdout);
    let load2: serde_json::Value = serde_json::from_str(out2.lines().next().unwrap()).unwrap();
    assert_eq!(load2["in_flight"], 2, "{out2}");
    assert!(
        load2["cycles_per_command"].as_f64().unwrap() < per[0],
        "two loads in flight take no less per load than one: {out2} against {out}"
    );
    usage_error(
        &["bench", "ctx-table", "--commands", "0"],
        "--commands must be 1..=65536",
    );
    usage_error(
        &["bench", "ctx-table", "--in-flight", "3"],
        "--in-flight must be 1..=2",
    );
}

#[test]
fn qp_scale_rows_plot_and_limits() {
    let svg = tmp("qp_scale.svg");
    let o = rnic(&[
        "bench",
        "qp-scale",
        "--active",
        "1,16",
        "--messages",
        "64",
        "--json",
        "--plot",
        svg.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    let rows: Vec<serde_json::Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    let kinds: Vec<(u64, u64)> = rows
        .iter()
        .map(|r| {
            (
                r["active_qps"].as_u64().unwrap(),
                r["msg_size"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(kinds, [(1, 4096), (1, 64), (16, 4096), (16, 64)], "{out}");
    for r in &rows {
        let f = |k: &str| r[k].as_f64().unwrap_or_else(|| panic!("{k} missing: {r}"));
        // every QP on chip in this model: no cache, no hit rate
        assert!(r["hit_rate"].is_null(), "{r}");
        assert_eq!(r["qps_on_chip"], 64, "{r}");
        assert_eq!(f("bytes"), f("messages") * f("msg_size"), "{r}");
        assert!(f("messages") >= 64.0 && f("cycles") > 0.0, "{r}");
        let gbps = f("bytes") * 8.0 / f("cycles") * f("clock_mhz") / 1000.0;
        assert!((f("gbps") - gbps).abs() < 1e-9 * gbps, "{r}");
        let mpps = f("messages") / f("cycles") * f("clock_mhz");
        assert!((f("mpps") - mpps).abs() < 1e-9 * mpps, "{r}");
        if f("active_qps") == 1.0 {
            assert_eq!(f("of_one_qp"), 1.0, "{r}");
        } else {
            // every QP on chip: 16 QPs run at the rate of one (at ae17cda
            // the requester's prefetch race cost a quarter of it)
            assert!(f("of_one_qp") > 0.97, "{r}");
        }
    }
    let plot = std::fs::read_to_string(&svg).unwrap();
    assert!(
        plot.contains("<svg") && plot.contains("active QPs"),
        "{plot}"
    );
    // a count beyond what the model holds is refused before anything runs
    usage_error(
        &["bench", "qp-scale", "--active", "1,100"],
        "--active 100: this NIC model holds 64 QPs",
    );
    usage_error(
        &["bench", "qp-scale", "--active", "0"],
        "--active needs counts of at least 1",
    );
}

#[test]
fn regs_prints_a_qps_record_and_refuses_one_beyond_the_build() {
    let o = rnic(&["regs", "--qp-record", "1"]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(out.starts_with("QP 1: 64 words of 64 bits"), "{out}");
    let words = out
        .lines()
        .filter(|l| l.trim_start().split(": 0x").count() == 2)
        .count();
    assert_eq!(words, 64, "{out}");
    usage_error(&["regs", "--qp-record", "64"], "beyond the build's 64 QPs");
    // the same record to a context table by DMA and back
    let o = rnic(&["regs", "--qp-ctx-check", "1"]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        out.contains("round trip: ok") && out.contains("1 fills, 1 write-backs, 0 failed"),
        "{out}"
    );
    usage_error(
        &["regs", "--qp-ctx-check", "64"],
        "beyond the build's 64 QPs",
    );
}
