//! The merged summary of a campaign: what ran, what it checked, and every
//! failure with the node that saw it and the command that reproduces it.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde::Serialize;

use crate::plan::{Plan, RunKey};
use crate::results::{RunRecord, Status};

/// Missing runs listed by name (the rest only counted).
const MISSING_LISTED: usize = 20;

#[derive(Clone, Debug, Serialize)]
pub struct FailedRun {
    pub leg: usize,
    pub seed: u64,
    pub status: Status,
    pub node: String,
    pub task: String,
    /// The leg's torture flags.
    pub flags: Vec<String>,
    /// The first failure (or the error) in one line.
    pub failure: String,
    pub repro: String,
    pub pcap: Option<String>,
}

#[derive(Clone, Debug, Serialize)]
pub struct Summary {
    pub name: String,
    pub runs_planned: u64,
    pub runs_done: u64,
    pub clean: u64,
    pub failed: u64,
    pub errors: u64,
    pub crashed: u64,
    pub messages: u64,
    pub bytes: u64,
    pub cycles: u64,
    /// Sum of the runs' wall times: core-seconds spent.
    pub core_seconds: f64,
    /// From the first run's start to the last run's end.
    pub span_seconds: f64,
    /// Runs per node.
    pub nodes: BTreeMap<String, u64>,
    pub failures: Vec<FailedRun>,
    /// Runs of the plan with no final record yet (the first few).
    pub missing: Vec<RunKey>,
    pub missing_count: u64,
    /// Result lines that could not be read (cut short by a killed writer).
    pub unreadable_lines: usize,
    /// Records of runs the plan does not hold (an older plan's).
    pub foreign_records: usize,
}

impl Summary {
    pub fn merge(plan: &Plan, records: &BTreeMap<RunKey, RunRecord>, unreadable: usize) -> Summary {
        let mut s = Summary {
            name: plan.name.clone(),
            runs_planned: plan.runs_total(),
            runs_done: 0,
            clean: 0,
            failed: 0,
            errors: 0,
            crashed: 0,
            messages: 0,
            bytes: 0,
            cycles: 0,
            core_seconds: 0.0,
            span_seconds: 0.0,
            nodes: BTreeMap::new(),
            failures: Vec::new(),
            missing: Vec::new(),
            missing_count: 0,
            unreadable_lines: unreadable,
            foreign_records: 0,
        };
        let (mut t0, mut t1) = (f64::INFINITY, f64::NEG_INFINITY);
        for key in plan.runs() {
            let Some(r) = records.get(&key) else {
                s.missing_count += 1;
                if s.missing.len() < MISSING_LISTED {
                    s.missing.push(key);
                }
                continue;
            };
            match r.status {
                Status::Clean => s.clean += 1,
                Status::Failed => s.failed += 1,
                Status::Error => s.errors += 1,
                Status::Crashed => s.crashed += 1,
            }
            if r.status.is_final() {
                s.runs_done += 1;
            } else {
                s.missing_count += 1;
                if s.missing.len() < MISSING_LISTED {
                    s.missing.push(key);
                }
            }
            s.messages += r.messages();
            s.bytes += r.bytes();
            s.cycles += r.cycles();
            s.core_seconds += r.wall_seconds;
            t0 = t0.min(r.started);
            t1 = t1.max(r.started + r.wall_seconds);
            *s.nodes.entry(r.node.clone()).or_default() += 1;
            if let Some(failure) = r.failure() {
                let flags = plan.legs[key.leg].flags.clone();
                let repro = r.repro.clone().unwrap_or_else(|| {
                    format!("rnic torture {} --seed {}", flags.join(" "), key.seed)
                });
                s.failures.push(FailedRun {
                    leg: key.leg,
                    seed: key.seed,
                    status: r.status,
                    node: r.node.clone(),
                    task: r.task.clone(),
                    flags,
                    failure,
                    repro,
                    pcap: r.pcap.clone(),
                });
            }
        }
        s.foreign_records = records.keys().filter(|k| plan.leg(**k).is_err()).count();
        if t1 > t0 {
            s.span_seconds = t1 - t0;
        }
        s
    }

    /// Clean: every planned run finished and none failed.
    pub fn clean(&self) -> bool {
        self.failures.is_empty() && self.missing_count == 0
    }

    /// Finished runs per hour of one core.
    pub fn runs_per_core_hour(&self) -> f64 {
        if self.core_seconds > 0.0 {
            self.runs_done as f64 * 3600.0 / self.core_seconds
        } else {
            0.0
        }
    }

    pub fn render(&self) -> String {
        let mut o = String::new();
        let nodes: Vec<String> = self
            .nodes
            .iter()
            .map(|(n, c)| format!("{n} ({c})"))
            .collect();
        let _ = writeln!(
            o,
            "campaign {}: {} of {} runs finished{}",
            self.name,
            self.runs_done,
            self.runs_planned,
            if nodes.is_empty() {
                String::new()
            } else {
                format!(" on {}", nodes.join(", "))
            }
        );
        let _ = writeln!(
            o,
            "  clean {}   failed {}   errors {}   crashed {}",
            self.clean, self.failed, self.errors, self.crashed
        );
        let _ = writeln!(
            o,
            "  messages {}   bytes checked {}   simulated cycles {}",
            self.messages, self.bytes, self.cycles
        );
        let _ = writeln!(
            o,
            "  wall {:.1} s, {:.1} core-seconds: {:.0} runs per core-hour",
            self.span_seconds,
            self.core_seconds,
            self.runs_per_core_hour()
        );
        for f in &self.failures {
            let _ = writeln!(
                o,
                "  {} leg {} seed {} on {} ({}): {}",
                match f.status {
                    Status::Failed => "FAILED",
                    Status::Error => "ERROR",
                    Status::Crashed => "CRASHED",
                    Status::Clean => "clean",
                },
                f.leg,
                f.seed,
                f.node,
                f.task,
                f.failure
            );
            let _ = writeln!(o, "    reproduce with: {}", f.repro);
            if let Some(p) = &f.pcap {
                let _ = writeln!(o, "    pcap: {p}");
            }
        }
        if self.missing_count > 0 {
            let listed: Vec<String> = self.missing.iter().map(|k| k.to_string()).collect();
            let _ = writeln!(
                o,
                "  not finished: {} runs ({}{}); run or submit the campaign again: finished runs are skipped",
                self.missing_count,
                listed.join(", "),
                if self.missing_count as usize > listed.len() { ", ..." } else { "" }
            );
        }
        if self.unreadable_lines > 0 {
            let _ = writeln!(
                o,
                "  {} result lines unreadable (a writer killed mid-line); their runs count as not finished",
                self.unreadable_lines
            );
        }
        if self.foreign_records > 0 {
            let _ = writeln!(
                o,
                "  {} records of runs not in this plan, ignored",
                self.foreign_records
            );
        }
        let _ = writeln!(
            o,
            "  {}",
            if self.clean() {
                "clean"
            } else if self.failures.is_empty() {
                "INCOMPLETE"
            } else {
                "FAILED"
            }
        );
        o
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::RunRecord;

    fn rec(leg: usize, seed: u64, status: Status) -> RunRecord {
        RunRecord {
            leg,
            seed,
            status,
            node: format!("n{}", seed % 2),
            task: "task-0".into(),
            started: seed as f64,
            wall_seconds: 2.0,
            report: Some(serde_json::json!({
                "messages": 10, "bytes": 1000, "cycles": 5000,
                "first_failure": if status == Status::Failed {
                    serde_json::json!({"kind": "ordering violation", "cycle": 77, "qp": 1, "msg": 3, "detail": "stale"})
                } else { serde_json::Value::Null }
            })),
            repro: (status == Status::Failed).then(|| format!("rnic torture --seed {seed}")),
            pcap: None,
            error: (status == Status::Error).then(|| "no such device".to_string()),
        }
    }

    #[test]
    fn the_summary_names_exactly_the_failing_runs() {
        let mut plan = Plan::new("t", 2);
        plan.add_leg("1..=4".parse().unwrap(), vec![]).unwrap();
        plan.add_leg(
            "9".parse().unwrap(),
            vec!["--break".into(), "cqe-ro".into()],
        )
        .unwrap();
        let mut m = BTreeMap::new();
        for r in [
            rec(0, 1, Status::Clean),
            rec(0, 2, Status::Clean),
            rec(0, 3, Status::Error),
            rec(1, 9, Status::Failed),
            rec(5, 1, Status::Clean),
        ] {
            m.insert(r.key(), r);
        }
        let s = Summary::merge(&plan, &m, 1);
        assert_eq!((s.runs_planned, s.runs_done), (5, 3));
        let named: Vec<(usize, u64)> = s.failures.iter().map(|f| (f.leg, f.seed)).collect();
        assert_eq!(named, vec![(0, 3), (1, 9)]);
        assert_eq!(s.failures[1].repro, "rnic torture --seed 9");
        assert!(s.failures[1]
            .failure
            .starts_with("ordering violation at cycle 77"));
        assert_eq!(s.failures[1].flags, vec!["--break", "cqe-ro"]);
        // seed 4 never ran; seed 3 errored: both wait for a resume
        assert_eq!(s.missing_count, 2);
        assert_eq!(s.foreign_records, 1);
        assert_eq!(s.messages, 40);
        assert!(!s.clean());
        let text = s.render();
        assert!(text.contains("FAILED leg 1 seed 9 on n1"), "{text}");
        assert!(
            text.contains("reproduce with: rnic torture --seed 9"),
            "{text}"
        );
        assert!(text.contains("1 result lines unreadable"), "{text}");
    }

    #[test]
    fn all_clean_and_complete_is_clean() {
        let mut plan = Plan::new("t", 1);
        plan.add_leg("1..=2".parse().unwrap(), vec![]).unwrap();
        let mut m = BTreeMap::new();
        for r in [rec(0, 1, Status::Clean), rec(0, 2, Status::Clean)] {
            m.insert(r.key(), r);
        }
        let s = Summary::merge(&plan, &m, 0);
        assert!(s.clean());
        assert_eq!(s.runs_per_core_hour(), 2.0 * 3600.0 / 4.0);
        assert!(s.render().trim_end().ends_with("clean"));
    }
}
