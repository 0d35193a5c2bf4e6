//! The plan: legs (a seed range and the torture flags its runs share), and
//! how its runs are dealt to the tasks of an array.

use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::{io_err, Error, Result};

/// The plan's file inside a campaign directory.
pub const PLAN_FILE: &str = "campaign.json";
/// The plan format this build writes and reads.
pub const PLAN_VERSION: u32 = 1;
/// More runs than this in one plan is surely a typo in a seed range.
pub const MAX_RUNS: u64 = 100_000_000;

/// Seeds `first..=last`, written `A..B` (B excluded), `A..=B` or `A`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SeedRange {
    pub first: u64,
    pub last: u64,
}

impl SeedRange {
    pub fn len(&self) -> u64 {
        self.last - self.first + 1
    }

    pub fn is_empty(&self) -> bool {
        false
    }

    pub fn iter(&self) -> impl Iterator<Item = u64> {
        self.first..=self.last
    }
}

impl FromStr for SeedRange {
    type Err = String;

    fn from_str(s: &str) -> std::result::Result<Self, String> {
        let num = |t: &str| {
            t.trim()
                .parse::<u64>()
                .map_err(|e| format!("seed range `{s}`: `{t}`: {e}"))
        };
        let (first, last) = if let Some((a, b)) = s.split_once("..=") {
            (num(a)?, num(b)?)
        } else if let Some((a, b)) = s.split_once("..") {
            let (a, b) = (num(a)?, num(b)?);
            if b <= a {
                return Err(format!("seed range `{s}` is empty (B is excluded in A..B)"));
            }
            (a, b - 1)
        } else {
            let a = num(s)?;
            (a, a)
        };
        if last < first {
            return Err(format!("seed range `{s}` is empty"));
        }
        Ok(SeedRange { first, last })
    }
}

impl fmt::Display for SeedRange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.first == self.last {
            write!(f, "{}", self.first)
        } else {
            write!(f, "{}..={}", self.first, self.last)
        }
    }
}

/// Seeds that share one set of `rnic torture` flags.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Leg {
    pub seeds: SeedRange,
    /// `rnic torture` arguments, without `--seed`, `--json` and `--pcap`
    /// (the campaign sets those per run).
    pub flags: Vec<String>,
}

/// One run of a campaign: a seed of a leg.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct RunKey {
    pub leg: usize,
    pub seed: u64,
}

impl fmt::Display for RunKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "leg {} seed {}", self.leg, self.seed)
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Plan {
    pub version: u32,
    pub name: String,
    /// Tasks of the Slurm array the runs are dealt to (1 for a local run).
    pub tasks: u32,
    pub legs: Vec<Leg>,
}

/// Flags a leg may not carry: the campaign gives each run its own.
const PER_RUN_FLAGS: [&str; 3] = ["--seed", "--json", "--pcap"];

impl Plan {
    pub fn new(name: &str, tasks: u32) -> Plan {
        Plan {
            version: PLAN_VERSION,
            name: name.to_string(),
            tasks,
            legs: Vec::new(),
        }
    }

    /// Adds a leg after checking its flags leave the per-run ones to the
    /// campaign.
    pub fn add_leg(&mut self, seeds: SeedRange, flags: Vec<String>) -> Result<()> {
        for f in &flags {
            let name = f.split('=').next().unwrap_or(f);
            if PER_RUN_FLAGS.contains(&name) {
                return Err(Error::Invalid(format!(
                    "{name}: the campaign sets --seed, --json and --pcap for each run; give the seeds with --seeds"
                )));
            }
        }
        self.legs.push(Leg { seeds, flags });
        self.validate()
    }

    pub fn validate(&self) -> Result<()> {
        if self.version != PLAN_VERSION {
            return Err(Error::Invalid(format!(
                "campaign plan version {} (this rnic reads version {PLAN_VERSION})",
                self.version
            )));
        }
        if self.tasks == 0 {
            return Err(Error::Invalid("--tasks must be at least 1".into()));
        }
        if self.runs_total() > MAX_RUNS {
            return Err(Error::Invalid(format!(
                "{} runs in one campaign (at most {MAX_RUNS})",
                self.runs_total()
            )));
        }
        if self.name.is_empty() || self.name.contains(['/', '\n']) {
            return Err(Error::Invalid(format!(
                "campaign name `{}`: not empty, no `/`",
                self.name
            )));
        }
        Ok(())
    }

    pub fn runs_total(&self) -> u64 {
        self.legs.iter().map(|l| l.seeds.len()).sum()
    }

    /// Every run, leg by leg, seeds in order.
    pub fn runs(&self) -> impl Iterator<Item = RunKey> + '_ {
        self.legs
            .iter()
            .enumerate()
            .flat_map(|(leg, l)| l.seeds.iter().map(move |seed| RunKey { leg, seed }))
    }

    /// The runs of array task `task`: every `tasks`-th run, so each task
    /// gets a share of every leg (a leg's runs cost alike; legs differ).
    pub fn task_runs(&self, task: u32) -> Result<Vec<RunKey>> {
        if task >= self.tasks {
            return Err(Error::Invalid(format!(
                "task {task}: the campaign has tasks 0..{}",
                self.tasks
            )));
        }
        Ok(self
            .runs()
            .enumerate()
            .filter(|(i, _)| *i as u64 % self.tasks as u64 == task as u64)
            .map(|(_, k)| k)
            .collect())
    }

    pub fn leg(&self, key: RunKey) -> Result<&Leg> {
        self.legs
            .get(key.leg)
            .filter(|l| (l.seeds.first..=l.seeds.last).contains(&key.seed))
            .ok_or_else(|| Error::Invalid(format!("{key} is not in the campaign's plan")))
    }

    pub fn path(dir: &Path) -> PathBuf {
        dir.join(PLAN_FILE)
    }

    pub fn load(dir: &Path) -> Result<Plan> {
        let path = Plan::path(dir);
        let text = std::fs::read_to_string(&path).map_err(io_err(&path))?;
        let plan: Plan = serde_json::from_str(&text).map_err(|source| Error::Json {
            path: path.clone(),
            source,
        })?;
        plan.validate()?;
        Ok(plan)
    }

    pub fn save(&self, dir: &Path) -> Result<()> {
        self.validate()?;
        std::fs::create_dir_all(dir).map_err(io_err(dir))?;
        let path = Plan::path(dir);
        let tmp = dir.join(format!("{PLAN_FILE}.tmp"));
        let text = serde_json::to_string_pretty(self).expect("a plan serializes") + "\n";
        std::fs::write(&tmp, text).map_err(io_err(&tmp))?;
        std::fs::rename(&tmp, &path).map_err(io_err(&path))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seed_ranges_parse_and_refuse() {
        assert_eq!("3".parse(), Ok(SeedRange { first: 3, last: 3 }));
        assert_eq!("1..5".parse(), Ok(SeedRange { first: 1, last: 4 }));
        assert_eq!("1..=5".parse(), Ok(SeedRange { first: 1, last: 5 }));
        assert!("5..5".parse::<SeedRange>().unwrap_err().contains("empty"));
        assert!("5..=4".parse::<SeedRange>().unwrap_err().contains("empty"));
        assert!("x..4".parse::<SeedRange>().unwrap_err().contains("`x`"));
        assert_eq!(SeedRange { first: 1, last: 5 }.to_string(), "1..=5");
    }

    #[test]
    fn every_run_goes_to_exactly_one_task() {
        let mut p = Plan::new("t", 4);
        p.add_leg(
            "1..=10".parse().unwrap(),
            vec!["--fabric".into(), "hostile".into()],
        )
        .unwrap();
        p.add_leg(
            "1..=3".parse().unwrap(),
            vec!["--transport".into(), "mp".into()],
        )
        .unwrap();
        let mut all: Vec<RunKey> = (0..4).flat_map(|t| p.task_runs(t).unwrap()).collect();
        all.sort();
        let mut want: Vec<RunKey> = p.runs().collect();
        want.sort();
        assert_eq!(all, want);
        assert_eq!(all.len(), 13);
        // dealt round: no task has more than one run over another's
        let sizes: Vec<usize> = (0..4).map(|t| p.task_runs(t).unwrap().len()).collect();
        assert_eq!(sizes, vec![4, 3, 3, 3]);
        assert!(p.task_runs(4).is_err());
    }

    #[test]
    fn per_run_flags_are_refused() {
        let mut p = Plan::new("t", 1);
        for f in ["--seed", "--json", "--pcap=x.pcap"] {
            let e = p.add_leg("1".parse().unwrap(), vec![f.into()]).unwrap_err();
            assert!(e.to_string().contains("the campaign sets"), "{e}");
        }
        assert!(Plan::new("t", 0).validate().is_err());
        assert!(Plan::new("a/b", 1).validate().is_err());
    }
}
