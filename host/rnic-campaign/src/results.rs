//! Run records: one JSON line per finished run, appended to the writer's
//! own file under `results/`.

use std::collections::BTreeMap;
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::plan::RunKey;
use crate::{io_err, Result};

pub const RESULTS_DIR: &str = "results";

/// How a run ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// The torture ran and found nothing.
    Clean,
    /// The torture ran and found a failure (exit status 1).
    Failed,
    /// The torture could not run (exit status 2: bad flags, no device).
    Error,
    /// The process died (a signal, or an exit status rnic never uses).
    Crashed,
}

impl Status {
    /// A finished run: a resumed campaign does not run it again. An error
    /// or a crash may be the machine's (a full disk, the OOM killer), so a
    /// resume tries it again.
    pub fn is_final(self) -> bool {
        matches!(self, Status::Clean | Status::Failed)
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunRecord {
    pub leg: usize,
    pub seed: u64,
    pub status: Status,
    /// The machine that ran it (`SLURMD_NODENAME`, else the host name).
    pub node: String,
    /// The writer: `task-N` in an array, `local` otherwise.
    pub task: String,
    /// Unix time of the start, in seconds.
    pub started: f64,
    pub wall_seconds: f64,
    /// The torture's JSON report (`rnic torture --json`), when it printed one.
    pub report: Option<serde_json::Value>,
    /// The command that reproduces the run (from the torture, on a failure).
    pub repro: Option<String>,
    /// Frames before the first failure, relative to the campaign directory.
    pub pcap: Option<String>,
    /// The end of stderr of a run that errored or crashed.
    pub error: Option<String>,
}

impl RunRecord {
    pub fn key(&self) -> RunKey {
        RunKey {
            leg: self.leg,
            seed: self.seed,
        }
    }

    fn report_u64(&self, field: &str) -> u64 {
        self.report
            .as_ref()
            .and_then(|r| r.get(field))
            .and_then(|v| v.as_u64())
            .unwrap_or(0)
    }

    pub fn messages(&self) -> u64 {
        self.report_u64("messages")
    }

    pub fn bytes(&self) -> u64 {
        self.report_u64("bytes")
    }

    pub fn cycles(&self) -> u64 {
        self.report_u64("cycles")
    }

    /// The first failure in one line: the torture's own words.
    pub fn failure(&self) -> Option<String> {
        match self.status {
            Status::Clean => None,
            Status::Error | Status::Crashed => Some(
                self.error
                    .clone()
                    .unwrap_or_else(|| format!("{:?}", self.status)),
            ),
            Status::Failed => Some(
                match self.report.as_ref().and_then(|r| r.get("first_failure")) {
                    Some(serde_json::Value::Object(f)) => {
                        let s = |k: &str| {
                            f.get(k)
                                .map(|v| v.as_str().map(str::to_string).unwrap_or(v.to_string()))
                                .unwrap_or_default()
                        };
                        format!(
                            "{} at cycle {} on QP {}, message {}: {}",
                            s("kind"),
                            s("cycle"),
                            s("qp"),
                            s("msg"),
                            s("detail")
                        )
                    }
                    Some(serde_json::Value::String(s)) => s.clone(),
                    _ => "failed (no first failure in the report)".into(),
                },
            ),
        }
    }
}

/// The results file of one writer.
pub fn results_path(dir: &Path, task: &str) -> PathBuf {
    dir.join(RESULTS_DIR).join(format!("{task}.jsonl"))
}

/// Appends one record as one line. A line cut short by a killed writer is
/// ended first, so it spoils only itself.
pub fn append(path: &Path, rec: &RunRecord) -> Result<()> {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(io_err(parent))?;
    }
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .read(true)
        .append(true)
        .open(path)
        .map_err(io_err(path))?;
    let len = f.metadata().map_err(io_err(path))?.len();
    let mut line = String::new();
    if len > 0 {
        let mut last = [0u8];
        f.seek(SeekFrom::Start(len - 1)).map_err(io_err(path))?;
        f.read_exact(&mut last).map_err(io_err(path))?;
        if last[0] != b'\n' {
            line.push('\n');
        }
    }
    line.push_str(&serde_json::to_string(rec).expect("a record serializes"));
    line.push('\n');
    // one write: lines of concurrent writers do not interleave
    f.write_all(line.as_bytes()).map_err(io_err(path))?;
    f.sync_data().map_err(io_err(path))
}

/// Every record in a campaign's `results/`, the last one of each run
/// (a resumed run's record replaces an earlier error), and how many lines
/// could not be read (cut short by a killed writer).
pub fn read_all(dir: &Path) -> Result<(BTreeMap<RunKey, RunRecord>, usize)> {
    let rdir = dir.join(RESULTS_DIR);
    let mut files: Vec<PathBuf> = match std::fs::read_dir(&rdir) {
        Ok(rd) => rd
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
            .collect(),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
        Err(e) => return Err(io_err(&rdir)(e)),
    };
    files.sort();
    let mut all: Vec<RunRecord> = Vec::new();
    let mut bad = 0;
    for p in files {
        let text = std::fs::read_to_string(&p).map_err(io_err(&p))?;
        for line in text.lines().filter(|l| !l.trim().is_empty()) {
            match serde_json::from_str::<RunRecord>(line) {
                Ok(r) => all.push(r),
                Err(_) => bad += 1,
            }
        }
    }
    // a final record wins over a non-final one; among equals, the later
    all.sort_by(|a, b| a.started.total_cmp(&b.started));
    let mut out: BTreeMap<RunKey, RunRecord> = BTreeMap::new();
    for r in all {
        match out.get(&r.key()) {
            Some(old) if old.status.is_final() && !r.status.is_final() => {}
            _ => {
                out.insert(r.key(), r);
            }
        }
    }
    Ok((out, bad))
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(crate) fn rec(leg: usize, seed: u64, status: Status, started: f64) -> RunRecord {
        RunRecord {
            leg,
            seed,
            status,
            node: "n1".into(),
            task: "task-0".into(),
            started,
            wall_seconds: 1.0,
            report: Some(serde_json::json!({"messages": 10, "bytes": 1000, "cycles": 5000})),
            repro: None,
            pcap: None,
            error: None,
        }
    }

    fn tmpdir(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("rnic-campaign-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        d
    }

    #[test]
    fn a_line_cut_short_spoils_only_itself() {
        let d = tmpdir("cut");
        let p = results_path(&d, "task-0");
        append(&p, &rec(0, 1, Status::Clean, 1.0)).unwrap();
        // a writer killed in the middle of its line
        let mut f = std::fs::OpenOptions::new().append(true).open(&p).unwrap();
        f.write_all(b"{\"leg\":0,\"seed\":2,\"sta").unwrap();
        drop(f);
        append(&p, &rec(0, 3, Status::Clean, 3.0)).unwrap();
        let (all, bad) = read_all(&d).unwrap();
        assert_eq!(bad, 1);
        assert_eq!(all.keys().map(|k| k.seed).collect::<Vec<_>>(), vec![1, 3]);
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn a_final_record_wins_and_a_rerun_replaces_an_error() {
        let d = tmpdir("final");
        let p = results_path(&d, "task-0");
        let q = results_path(&d, "local");
        append(&p, &rec(0, 1, Status::Error, 1.0)).unwrap();
        append(&q, &rec(0, 1, Status::Failed, 2.0)).unwrap();
        append(&p, &rec(0, 2, Status::Clean, 1.0)).unwrap();
        append(&q, &rec(0, 2, Status::Crashed, 5.0)).unwrap();
        let (all, bad) = read_all(&d).unwrap();
        assert_eq!(bad, 0);
        assert_eq!(all[&RunKey { leg: 0, seed: 1 }].status, Status::Failed);
        assert_eq!(all[&RunKey { leg: 0, seed: 2 }].status, Status::Clean);
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn no_results_yet_is_empty() {
        let d = tmpdir("none");
        assert_eq!(read_all(&d).unwrap().0.len(), 0);
    }
}
