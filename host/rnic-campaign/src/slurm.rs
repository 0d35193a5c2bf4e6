//! The Slurm job script of a campaign: one job array, a task per slice of
//! the plan, each task running `rnic campaign task DIR` on its node.

use std::fmt::Write as _;
use std::path::Path;

use crate::plan::Plan;

pub const SCRIPT_FILE: &str = "rnic-campaign.sbatch";
pub const LOGS_DIR: &str = "logs";

/// What `sbatch` is asked for beyond the array itself.
#[derive(Clone, Debug, Default)]
pub struct SbatchOpts {
    pub partition: Option<String>,
    /// `--time` of each task (Slurm's formats, e.g. `2:00:00`).
    pub time: Option<String>,
    /// Cores per task: the task runs this many torture processes at once.
    pub cpus_per_task: u32,
    /// At most this many tasks at once (`--array=0-N%M`).
    pub max_running: Option<u32>,
}

/// Quotes `s` for a POSIX shell.
pub fn shell_quote(s: &str) -> String {
    if !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:@%+,".contains(c))
    {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', r"'\''"))
    }
}

/// The job script for `plan` in campaign directory `dir` (absolute), run by
/// the `rnic` at `rnic` (absolute: every node must see both paths, as on a
/// cluster's shared file system).
pub fn script(plan: &Plan, dir: &Path, rnic: &Path, o: &SbatchOpts) -> String {
    let d = dir.display().to_string();
    let mut s = String::new();
    let _ = writeln!(s, "#!/bin/bash");
    let _ = writeln!(
        s,
        "# rnic campaign `{}`: {} runs in {} array tasks. Written by `rnic campaign sbatch`.",
        plan.name,
        plan.runs_total(),
        plan.tasks
    );
    let _ = writeln!(
        s,
        "#   submit:  sbatch {}",
        shell_quote(&format!("{d}/{SCRIPT_FILE}"))
    );
    let _ = writeln!(s, "#   merge:   rnic campaign merge {}", shell_quote(&d));
    let _ = writeln!(
        s,
        "# Submitting it again after a cut-short campaign runs only the runs not yet finished."
    );
    let _ = writeln!(s, "#SBATCH --job-name=rnic-{}", plan.name);
    let _ = writeln!(
        s,
        "#SBATCH --array=0-{}{}",
        plan.tasks - 1,
        o.max_running.map(|m| format!("%{m}")).unwrap_or_default()
    );
    let _ = writeln!(s, "#SBATCH --ntasks=1");
    let _ = writeln!(s, "#SBATCH --cpus-per-task={}", o.cpus_per_task.max(1));
    let _ = writeln!(s, "#SBATCH --output={d}/{LOGS_DIR}/%A_%a.out");
    if let Some(p) = &o.partition {
        let _ = writeln!(s, "#SBATCH --partition={p}");
    }
    if let Some(t) = &o.time {
        let _ = writeln!(s, "#SBATCH --time={t}");
    }
    let _ = writeln!(s, "set -euo pipefail");
    let _ = writeln!(
        s,
        "exec {} campaign task {}",
        shell_quote(&rnic.display().to_string()),
        shell_quote(&d)
    );
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_script_asks_for_one_array_of_the_plans_tasks() {
        let mut p = Plan::new("night", 16);
        p.add_leg("1..=1000".parse().unwrap(), vec![]).unwrap();
        let s = script(
            &p,
            Path::new("/shared/c 1"),
            Path::new("/opt/rnic/bin/rnic"),
            &SbatchOpts {
                partition: Some("sim".into()),
                time: None,
                cpus_per_task: 4,
                max_running: Some(8),
            },
        );
        assert!(s.contains("#SBATCH --array=0-15%8\n"), "{s}");
        assert!(s.contains("#SBATCH --cpus-per-task=4\n"), "{s}");
        assert!(s.contains("#SBATCH --partition=sim\n"), "{s}");
        assert!(!s.contains("--time"), "{s}");
        assert!(
            s.ends_with("exec /opt/rnic/bin/rnic campaign task '/shared/c 1'\n"),
            "{s}"
        );
        assert_eq!(shell_quote("it's"), r"'it'\''s'");
    }
}
