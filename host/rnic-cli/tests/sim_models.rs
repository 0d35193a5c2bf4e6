//! The knob builds of the core, simulated and not only linted: the
//! write-only build (`rnic build --verbs write`, SEND_EN=0) and the mp-only
//! build (`--transports mp --verbs write`, RC_EN=0 SEND_EN=0), selected with
//! `--sim-model`. Each runs a short torture on a hostile fabric clean,
//! catches a break switch (and names itself in the reproducing command),
//! reports what it carries, holds the fuzz campaign, and refuses what it
//! does not carry in one line.

mod common;
use common::{rnic, text};

/// (model, torture flags of its transport)
const MODELS: [(&str, &[&str]); 2] = [
    ("write-only", &["--fabric", "hostile"]),
    (
        "mp-only",
        &[
            "--transport",
            "mp",
            "--spray-ports",
            "8",
            "--fabric",
            "spray-8-hostile",
        ],
    ),
];

#[test]
fn knob_builds_run_the_torture_clean_and_catch_a_break_switch() {
    for (model, flags) in MODELS {
        let mut a = vec!["torture", "--sim-model", model, "--messages", "150"];
        a.extend_from_slice(flags);
        let o = rnic(&a);
        assert_eq!(
            o.status.code(),
            Some(0),
            "{model}: {}{}",
            text(&o.stdout),
            text(&o.stderr)
        );
        assert!(text(&o.stdout).contains("clean"), "{}", text(&o.stdout));

        // the break every transport's barrier must catch
        a.extend_from_slice(&["--break", "early-cqe", "--stop-on-failure"]);
        let o = rnic(&a);
        let err = text(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{model}: {err}");
        let repro = err
            .lines()
            .find_map(|l| l.strip_prefix("reproduce with: "))
            .unwrap_or_else(|| panic!("{model}: no reproducing command: {err}"));
        assert!(
            repro.contains(&format!("--sim-model {model}")),
            "{model}: the reproducing command must name the build: {repro}"
        );
    }
}

/// What each model reports it carries: SEND/RECV (id.verbs bits 3-4), the
/// rc transport (id.caps bit 6) and the READ responder (id.caps bit 7,
/// `read_responder`: the full and many-QP models are built with
/// `READ_EN=1`, the write-only and mp-only ones as `rnic build --verbs
/// write` makes them, without it).
#[test]
fn knob_builds_report_what_they_carry() {
    for (model, send, rc, read) in [
        ("full", true, true, true),
        ("write-only", false, true, false),
        ("mp-only", false, false, false),
        ("many-qps", true, true, true),
    ] {
        let o = rnic(&["info", "--sim-model", model]);
        assert_eq!(o.status.code(), Some(0), "{model}: {}", text(&o.stderr));
        let out = text(&o.stdout);
        let line = |k: &str| {
            out.lines()
                .find(|l| l.starts_with(k))
                .unwrap_or_else(|| panic!("{model}: no `{k}` line: {out}"))
                .to_string()
        };
        assert_eq!(line("verbs").contains("send"), send, "{model}: {out}");
        assert_eq!(
            line("capabilities").contains("rc_transport"),
            rc,
            "{model}: {out}"
        );
        assert_eq!(
            line("capabilities").contains("read_responder"),
            read,
            "{model}: {out}"
        );
        assert!(line("capabilities").contains("mp_transport"), "{out}");
        // every simulated model has the record port: a QP's 64 words
        assert!(
            line("QP record").contains("512 bytes per QP"),
            "{model}: {out}"
        );
        // with a QP directory or without: the line says which
        let qpns = line("QP numbers");
        assert!(
            qpns.contains("(no directory)") || qpns.contains("(directory over"),
            "{model}: {out}"
        );
    }
}

/// The many-QP build (`--sim-model many-qps`: 1,024 QPs) reports them and
/// runs a torture of 300 QPs (more than its 64 memory regions: QPs share
/// them in slices; more than any other model's slots) clean on rc over
/// `hostile` and of 260 on mp over `spray-8-hostile`, one message per QP
/// (the 10,000-message runs are in README.md, "FPGA builds"; 600 and 520
/// QPs until CI's time ran short on 2026-12-07).
#[test]
fn the_many_qp_build_runs_hundreds_of_qps_clean() {
    let o = rnic(&["info", "--sim-model", "many-qps"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert!(
        text(&o.stdout)
            .lines()
            .any(|l| l.split_whitespace().collect::<Vec<_>>() == ["queues", "1024"]),
        "{}",
        text(&o.stdout)
    );
    for (qps, flags) in [
        ("300", &["--fabric", "hostile"][..]),
        (
            "260",
            &[
                "--transport",
                "mp",
                "--spray-ports",
                "8",
                "--fabric",
                "spray-8-hostile",
            ][..],
        ),
    ] {
        let mut a = vec![
            "torture",
            "--sim-model",
            "many-qps",
            "--qps",
            qps,
            "--messages",
            qps,
            "--max-size",
            "2048",
        ];
        a.extend_from_slice(flags);
        let o = rnic(&a);
        let out = text(&o.stdout);
        assert_eq!(
            o.status.code(),
            Some(0),
            "{qps} QPs: {out}{}",
            text(&o.stderr)
        );
        assert!(out.contains(&format!("{qps} QPs x")), "{out}");
        assert!(out.contains("clean"), "{out}");
    }
}

#[test]
fn knob_builds_hold_the_fuzz_campaign() {
    for (model, transport) in [("write-only", "rc"), ("mp-only", "mp")] {
        let o = rnic(&[
            "fuzz",
            "--sim-model",
            model,
            "--transport",
            transport,
            "--frames",
            "1000",
        ]);
        assert_eq!(
            o.status.code(),
            Some(0),
            "{model}: {}{}",
            text(&o.stdout),
            text(&o.stderr)
        );
        // the READ cases are sent; a build without READ_EN answers none
        assert!(
            text(&o.stdout).contains("READ cases: bad_key")
                && text(&o.stdout).contains("; 0 requests answered"),
            "{model}: {}",
            text(&o.stdout)
        );
        // the detector still sees writes outside the regions on this build
        let o = rnic(&[
            "fuzz",
            "--sim-model",
            model,
            "--transport",
            transport,
            "--frames",
            "1000",
            "--break",
            "no-mr-check",
        ]);
        assert_eq!(o.status.code(), Some(1), "{model}: {}", text(&o.stdout));
        assert!(
            text(&o.stdout).contains("outside the mapped buffers"),
            "{model}: {}",
            text(&o.stdout)
        );
    }
}

#[test]
fn knob_builds_refuse_what_they_do_not_carry_in_one_line() {
    for (args, want) in [
        (
            vec!["torture", "--sim-model", "mp-only", "--messages", "20"],
            "built with the mp transport only",
        ),
        (
            vec![
                "torture",
                "--sim-model",
                "mp-only",
                "--data-w",
                "256",
                "--transport",
                "mp",
            ],
            "mp-only model is built at [64]",
        ),
        (
            vec!["info", "--sim-model", "write-only", "--data-w", "256"],
            "no write-only model for DATA_W = 256",
        ),
        (
            vec!["info", "--sim-model", "tiny"],
            "invalid value 'tiny' for '--sim-model",
        ),
    ] {
        let o = rnic(&args);
        let e = text(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {e}");
        assert!(
            e.lines().next().unwrap_or_default().contains(want),
            "{args:?}: {e}"
        );
    }
}
