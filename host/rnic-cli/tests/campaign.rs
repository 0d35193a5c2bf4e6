//! `rnic campaign` on this machine: a plan with a clean leg and a leg with
//! a break switch, run on two cores, merged; a second run skips every
//! finished run; a writer killed mid-line loses only that run; bad plans
//! are one-line errors; a campaign killed with SIGKILL leaves no run
//! behind. (The Slurm array is tests/slurm/campaign_test.sh.)

use std::io::Write;
use std::path::PathBuf;
use std::process::Command;

mod common;
use common::{rnic, text};

fn dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("rnic-campaign-test-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

#[test]
fn a_campaign_names_its_failing_seed_and_resumes_without_repeating() {
    let d = dir("run");
    let ds = d.to_str().unwrap();
    let o = rnic(&[
        "campaign",
        "plan",
        ds,
        "--seeds",
        "1..4",
        "--",
        "--messages",
        "20",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let o = rnic(&[
        "campaign",
        "plan",
        ds,
        "--append",
        "--seeds",
        "9",
        "--",
        "--messages",
        "20",
        "--break",
        "cqe-ro",
        "--stop-on-failure",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));

    let o = rnic(&["campaign", "run", ds, "--jobs", "2", "--json"]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o.stderr));
    let s: serde_json::Value = serde_json::from_slice(&o.stdout).expect("summary JSON");
    assert_eq!(s["runs_planned"], 4);
    assert_eq!(s["runs_done"], 4);
    assert_eq!(s["clean"], 3);
    let failures = s["failures"].as_array().unwrap();
    assert_eq!(failures.len(), 1, "{s}");
    assert_eq!(
        (failures[0]["leg"].as_u64(), failures[0]["seed"].as_u64()),
        (Some(1), Some(9))
    );
    let repro = failures[0]["repro"].as_str().unwrap();
    assert!(
        repro.contains("--seed 9") && repro.contains("--break cqe-ro"),
        "{repro}"
    );
    let pcap = failures[0]["pcap"].as_str().expect("a pcap of the failure");
    assert!(d.join(pcap).exists());
    // clean runs keep no pcap
    assert_eq!(std::fs::read_dir(d.join("pcap")).unwrap().count(), 1);

    // run again: nothing left to run, the same verdict
    let o = rnic(&["campaign", "run", ds]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        text(&o.stderr).contains("4 runs already finished, skipped"),
        "{}",
        text(&o.stderr)
    );
    assert!(
        text(&o.stdout).contains("FAILED leg 1 seed 9"),
        "{}",
        text(&o.stdout)
    );

    // a writer killed mid-line, and seed 3's record lost with it
    let results = d.join("results/local.jsonl");
    let all = std::fs::read_to_string(&results).unwrap();
    let kept: Vec<&str> = all.lines().filter(|l| !l.contains("\"seed\":3,")).collect();
    let mut f = std::fs::File::create(&results).unwrap();
    writeln!(f, "{}", kept.join("\n")).unwrap();
    write!(f, "{{\"leg\":0,\"seed\":3,\"stat").unwrap();
    drop(f);
    let o = rnic(&["campaign", "merge", ds]);
    let out = text(&o.stdout);
    assert_eq!(o.status.code(), Some(1));
    assert!(out.contains("not finished: 1 runs (leg 0 seed 3)"), "{out}");
    assert!(out.contains("1 result lines unreadable"), "{out}");
    // the resume runs only seed 3
    let o = rnic(&["campaign", "run", ds, "--jobs", "1"]);
    assert!(
        text(&o.stderr).contains("3 runs already finished"),
        "{}",
        text(&o.stderr)
    );
    assert!(
        text(&o.stdout).contains("4 of 4 runs finished"),
        "{}",
        text(&o.stdout)
    );
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn bad_plans_are_one_line_errors() {
    let d = dir("bad");
    let ds = d.to_str().unwrap();
    for (args, want) in [
        (
            vec!["--seeds", "1..4", "--", "--seed", "3"],
            "the campaign sets --seed",
        ),
        (vec!["--seeds", "4..4", "--"], "is empty"),
        (
            vec!["--seeds", "1", "--", "--no-such-flag"],
            "torture flags `--no-such-flag`",
        ),
        (
            vec![
                "--seeds",
                "1",
                "--tasks",
                "2",
                "--",
                "--device",
                "0000:03:00.0",
            ],
            "runs as one task",
        ),
        (
            vec!["--seeds", "1", "--append", "--"],
            "--append: no campaign to add to",
        ),
    ] {
        let mut a = vec!["campaign", "plan", ds];
        a.extend(args.iter().copied());
        let o = rnic(&a);
        let e = text(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{a:?}: {e}");
        // clap's own errors add a `--help` hint below the one line
        let first = e.lines().next().unwrap_or_default();
        assert!(first.contains(want), "{a:?}: {e}");
        if !first.contains("invalid value") {
            assert_eq!(e.trim_end().lines().count(), 1, "{a:?}: not one line: {e}");
        }
    }
    let o = rnic(&["campaign", "merge", ds]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o.stderr).contains("campaign.json"),
        "{}",
        text(&o.stderr)
    );
    let o = rnic(&["campaign", "task", "/nonexistent-campaign"]);
    assert_eq!(o.status.code(), Some(2));
}

/// Children of `pid` (every thread's), from /proc.
fn children(pid: u32) -> Vec<u32> {
    let mut out = Vec::new();
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return out;
    };
    for t in tasks.flatten() {
        if let Ok(s) = std::fs::read_to_string(t.path().join("children")) {
            out.extend(s.split_whitespace().filter_map(|c| c.parse::<u32>().ok()));
        }
    }
    out
}

/// Whether `pid` still runs (a zombie has ended: only its parent's wait is
/// missing).
fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|s| s.rsplit(") ").next().map(|r| !r.starts_with('Z')))
        .unwrap_or(false)
}

#[test]
fn a_killed_campaign_takes_its_runs_with_it() {
    let d = dir("kill");
    let ds = d.to_str().unwrap();
    // runs long enough to be killed in the middle
    let o = rnic(&[
        "campaign",
        "plan",
        ds,
        "--seeds",
        "1..3",
        "--",
        "--messages",
        "1000000",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let mut c = Command::new(env!("CARGO_BIN_EXE_rnic"))
        .args(["campaign", "run", ds, "--jobs", "2"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("run rnic campaign");
    let t0 = std::time::Instant::now();
    let kids = loop {
        let k = children(c.id());
        if k.len() == 2 {
            break k;
        }
        assert!(
            t0.elapsed().as_secs() < 60,
            "no two runs started within 60 s: {k:?}"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    // SIGKILL: the campaign cannot clean up after itself
    c.kill().unwrap();
    c.wait().unwrap();
    let t0 = std::time::Instant::now();
    while kids.iter().any(|&k| alive(k)) {
        assert!(
            t0.elapsed().as_secs() < 10,
            "runs {kids:?} outlived their killed campaign"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    // nothing was recorded for the killed runs: a rerun would run them
    let o = rnic(&["campaign", "merge", ds]);
    assert!(
        text(&o.stdout).contains("not finished: 2 runs"),
        "{}",
        text(&o.stdout)
    );
    std::fs::remove_dir_all(&d).unwrap();
}
