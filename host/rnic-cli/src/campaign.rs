//! `rnic campaign`: many torture runs, one seed each, spread over this
//! machine's cores (`run`) or a Slurm job array (`sbatch`, whose tasks run
//! `task`), merged into one summary (`merge`). The plan and the records
//! are the `rnic-campaign` crate's; here the runs are processes: each run
//! is `rnic torture ... --seed S --json` in a process of its own, so a
//! crash is one run's, and the parallel runs share nothing.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use anyhow::{anyhow, bail, Context, Result};
use clap::{Args, Parser, Subcommand};
use indicatif::{ProgressBar, ProgressStyle};
use rnic_campaign::results::{self, RunRecord, Status};
use rnic_campaign::slurm::{self, SbatchOpts};
use rnic_campaign::{Plan, RunKey, SeedRange, Summary};

use crate::devices::{self, Target};
use crate::torture::{TortureArgs, Transport};

#[derive(Subcommand)]
pub enum CampaignCmd {
    /// Write a campaign's plan in DIR: seeds and the `rnic torture` flags
    /// they share (after `--`); `--append` adds another leg.
    Plan(PlanArgs),
    /// Run the campaign's unfinished runs here, on every core; prints the
    /// merged summary.
    Run(RunArgs),
    /// Write the campaign's Slurm job script (a job array); `--submit`
    /// hands it to sbatch.
    Sbatch(SbatchArgs),
    /// Run one task of the Slurm array (what the job script runs).
    Task(TaskArgs),
    /// Merge every task's results into one summary.
    Merge(MergeArgs),
}

#[derive(Args)]
pub struct PlanArgs {
    /// The campaign's directory (created).
    pub dir: PathBuf,
    /// Seeds: `A..B` (B excluded), `A..=B` or one seed.
    #[arg(long)]
    pub seeds: SeedRange,
    /// Tasks of the Slurm array the runs are dealt to.
    #[arg(long, default_value_t = 1)]
    pub tasks: u32,
    /// The campaign's name (default: the directory's).
    #[arg(long)]
    pub name: Option<String>,
    /// Add a leg to the plan already in DIR.
    #[arg(long)]
    pub append: bool,
    /// `rnic torture` flags of these runs (without --seed, --json, --pcap).
    #[arg(last = true, allow_hyphen_values = true)]
    pub flags: Vec<String>,
}

#[derive(Args)]
pub struct RunArgs {
    pub dir: PathBuf,
    /// Runs at once (default: every core).
    #[arg(long)]
    pub jobs: Option<usize>,
    /// Print the merged summary as JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(Args)]
pub struct SbatchArgs {
    pub dir: PathBuf,
    /// Slurm partition.
    #[arg(long)]
    pub partition: Option<String>,
    /// Time limit of each task (e.g. `2:00:00`).
    #[arg(long)]
    pub time: Option<String>,
    /// Cores per task: each task runs this many torture processes at once.
    #[arg(long, default_value_t = 1)]
    pub cpus_per_task: u32,
    /// At most this many tasks running at once.
    #[arg(long)]
    pub max_running: Option<u32>,
    /// The `rnic` the tasks run (default: this one); every node must see it.
    #[arg(long)]
    pub rnic: Option<PathBuf>,
    /// Submit the script with sbatch.
    #[arg(long)]
    pub submit: bool,
    /// With --submit: wait until every task has ended (`sbatch --wait`),
    /// then print the merged summary.
    #[arg(long, requires = "submit")]
    pub wait: bool,
}

#[derive(Args)]
pub struct TaskArgs {
    pub dir: PathBuf,
    /// The task (default: $SLURM_ARRAY_TASK_ID).
    #[arg(long)]
    pub task: Option<u32>,
    /// Runs at once (default: $SLURM_CPUS_PER_TASK, else 1).
    #[arg(long)]
    pub jobs: Option<usize>,
}

#[derive(Args)]
pub struct MergeArgs {
    pub dir: PathBuf,
    /// Print the summary as JSON.
    #[arg(long)]
    pub json: bool,
}

pub fn run(c: &CampaignCmd) -> Result<ExitCode> {
    match c {
        CampaignCmd::Plan(a) => plan(a),
        CampaignCmd::Run(a) => run_local(a),
        CampaignCmd::Sbatch(a) => sbatch(a),
        CampaignCmd::Task(a) => task(a),
        CampaignCmd::Merge(a) => merge(a),
    }
}

/// The flags of a leg as `rnic torture` reads them.
#[derive(Parser)]
#[command(name = "rnic torture")]
struct TortureFlags {
    #[command(flatten)]
    a: TortureArgs,
}

fn parse_flags(flags: &[String]) -> Result<TortureArgs> {
    TortureFlags::try_parse_from(
        std::iter::once("rnic torture".to_string()).chain(flags.iter().cloned()),
    )
    .map(|t| t.a)
    .map_err(|e| {
        let first = e.to_string().lines().next().unwrap_or_default().to_string();
        anyhow!(
            "torture flags `{}`: {}",
            flags.join(" "),
            first.trim_start_matches("error: ")
        )
    })
}

/// Whether a leg runs on the simulator (and so may run many at once and
/// record the frames of a failure).
struct LegKind {
    sim: bool,
    pcap: bool,
}

fn leg_kind(flags: &[String]) -> Result<LegKind> {
    let a = parse_flags(flags)?;
    let sim = devices::parse_target(&a.dev.device)? == Target::Sim;
    Ok(LegKind {
        sim,
        pcap: sim && a.transport != Transport::LocalCopy && !a.onchip_loopback,
    })
}

fn plan(a: &PlanArgs) -> Result<ExitCode> {
    let kind = leg_kind(&a.flags)?;
    if !kind.sim && a.tasks > 1 {
        bail!(
            "a leg on a PCI function ({}) runs as one task: its runs share the card",
            a.flags.join(" ")
        );
    }
    let mut p = if a.append {
        let p = Plan::load(&a.dir)
            .with_context(|| format!("--append: no campaign to add to in {}", a.dir.display()))?;
        if a.name.as_ref().is_some_and(|n| *n != p.name) || a.tasks != 1 && a.tasks != p.tasks {
            bail!(
                "--append adds seeds and flags; the name and --tasks are the plan's ({}, {} tasks)",
                p.name,
                p.tasks
            );
        }
        p
    } else {
        if Plan::path(&a.dir).exists() {
            bail!(
                "{} already holds a campaign: --append adds a leg to it, or choose another directory",
                a.dir.display()
            );
        }
        let name = match &a.name {
            Some(n) => n.clone(),
            None => std::path::absolute(&a.dir)?
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_else(|| "campaign".into()),
        };
        Plan::new(&name, a.tasks)
    };
    p.add_leg(a.seeds, a.flags.clone())?;
    p.save(&a.dir)?;
    println!(
        "campaign {}: leg {} ({} seeds: {}), {} runs in all, {} task{}; plan in {}",
        p.name,
        p.legs.len() - 1,
        a.seeds.len(),
        a.seeds,
        p.runs_total(),
        p.tasks,
        if p.tasks == 1 { "" } else { "s" },
        Plan::path(&a.dir).display()
    );
    Ok(ExitCode::SUCCESS)
}

fn node_name() -> String {
    std::env::var("SLURMD_NODENAME")
        .ok()
        .filter(|s| !s.is_empty())
        .or_else(|| {
            std::fs::read_to_string("/proc/sys/kernel/hostname")
                .ok()
                .map(|s| s.trim().to_string())
        })
        .unwrap_or_else(|| "unknown".into())
}

fn unix_now() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or(0.0)
}

/// The last lines of a run's stderr, on one line.
fn tail(text: &str, lines: usize) -> String {
    let v: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    let s = v[v.len().saturating_sub(lines)..].join(" | ");
    if s.len() > 600 {
        let mut cut = 600;
        while !s.is_char_boundary(cut) {
            cut -= 1;
        }
        format!("{}...", &s[..cut])
    } else {
        s
    }
}

/// Runs one seed of a leg as `rnic torture` in a process of its own.
fn run_one(
    exe: &Path,
    dir: &Path,
    plan: &Plan,
    kind: &LegKind,
    key: RunKey,
    task: &str,
) -> Result<RunRecord> {
    let leg = plan.leg(key)?;
    let tmp = dir.join("tmp");
    std::fs::create_dir_all(&tmp).with_context(|| format!("creating {}", tmp.display()))?;
    let stem = format!("{task}-leg{}-seed{}", key.leg, key.seed);
    let out_p = tmp.join(format!("{stem}.out"));
    let err_p = tmp.join(format!("{stem}.err"));
    let pcap_rel = format!("pcap/leg{}-seed{}.pcapng", key.leg, key.seed);
    let mut cmd = Command::new(exe);
    cmd.arg("torture")
        .args(&leg.flags)
        .args(["--seed", &key.seed.to_string(), "--json"]);
    if kind.pcap {
        std::fs::create_dir_all(dir.join("pcap"))?;
        cmd.arg("--pcap").arg(dir.join(&pcap_rel));
    }
    die_with_parent(&mut cmd);
    cmd.stdin(Stdio::null())
        .stdout(
            std::fs::File::create(&out_p)
                .with_context(|| format!("creating {}", out_p.display()))?,
        )
        .stderr(
            std::fs::File::create(&err_p)
                .with_context(|| format!("creating {}", err_p.display()))?,
        );
    let started = unix_now();
    let t = Instant::now();
    let st = cmd
        .status()
        .with_context(|| format!("running {}", exe.display()))?;
    let wall = t.elapsed().as_secs_f64();
    let out = std::fs::read_to_string(&out_p).unwrap_or_default();
    let err = std::fs::read_to_string(&err_p).unwrap_or_default();
    let _ = std::fs::remove_file(&out_p);
    let _ = std::fs::remove_file(&err_p);
    let report = out
        .lines()
        .rev()
        .find(|l| l.trim_start().starts_with('{'))
        .and_then(|l| serde_json::from_str::<serde_json::Value>(l).ok());
    let status = match st.code() {
        Some(0) if report.is_some() => Status::Clean,
        Some(1) if report.is_some() => Status::Failed,
        Some(2) => Status::Error,
        _ => Status::Crashed,
    };
    let repro = err
        .lines()
        .find_map(|l| l.strip_prefix("reproduce with: "))
        .map(str::to_string);
    let pcap = if status == Status::Failed && dir.join(&pcap_rel).exists() {
        Some(pcap_rel)
    } else {
        let _ = std::fs::remove_file(dir.join(&pcap_rel));
        None
    };
    let error = match status {
        Status::Error => Some(tail(&err, 3)),
        Status::Crashed => Some(format!(
            "{}{}",
            match st.code() {
                Some(c) => format!("exit status {c}"),
                None => format!("killed ({st})"),
            },
            match tail(&err, 3) {
                t if t.is_empty() => String::new(),
                t => format!(": {t}"),
            }
        )),
        _ => None,
    };
    Ok(RunRecord {
        leg: key.leg,
        seed: key.seed,
        status,
        node: node_name(),
        task: task.to_string(),
        started,
        wall_seconds: wall,
        report,
        repro,
        pcap,
        error,
    })
}

/// A run must not outlive its campaign: a campaign killed by a signal it
/// cannot catch (SIGKILL, the OOM killer, a `kill` of its PID alone) would
/// otherwise leave its tortures running, their records never written. The
/// kernel sends the child SIGKILL when the thread that spawned it ends;
/// that thread waits for the child, so this happens only when the campaign
/// dies.
fn die_with_parent(cmd: &mut Command) {
    use std::os::unix::process::CommandExt;
    let parent = std::process::id() as libc::pid_t;
    // SAFETY: between fork and exec only async-signal-safe calls: prctl,
    // getppid and _exit.
    unsafe {
        cmd.pre_exec(move || {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            // the campaign died before the prctl took effect
            if libc::getppid() != parent {
                libc::_exit(1);
            }
            Ok(())
        });
    }
}

/// Runs `keys` of `plan`, `jobs` at once, each record appended to the
/// writer `task`'s results file as it ends; `each` sees every record.
fn run_many(
    dir: &Path,
    plan: &Plan,
    keys: &[RunKey],
    jobs: usize,
    task: &str,
    each: &(dyn Fn(&RunRecord) + Sync),
) -> Result<()> {
    let exe = std::env::current_exe().context("finding this rnic")?;
    let kinds = plan
        .legs
        .iter()
        .map(|l| leg_kind(&l.flags))
        .collect::<Result<Vec<_>>>()?;
    if jobs > 1 {
        if let Some(l) = kinds.iter().position(|k| !k.sim) {
            bail!(
                "--jobs {jobs}: leg {l} runs on a PCI function ({}); its runs share the card, one at a time (--jobs 1)",
                plan.legs[l].flags.join(" ")
            );
        }
    }
    let path = results::results_path(dir, task);
    let next = AtomicUsize::new(0);
    let first_err: Mutex<Option<anyhow::Error>> = Mutex::new(None);
    std::thread::scope(|s| {
        for _ in 0..jobs.max(1).min(keys.len().max(1)) {
            s.spawn(|| loop {
                if first_err.lock().expect("lock").is_some() {
                    return;
                }
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(&key) = keys.get(i) else { return };
                let r = run_one(&exe, dir, plan, &kinds[key.leg], key, task).and_then(|rec| {
                    results::append(&path, &rec)?;
                    Ok(rec)
                });
                match r {
                    Ok(rec) => each(&rec),
                    Err(e) => {
                        first_err.lock().expect("lock").get_or_insert(e);
                        return;
                    }
                }
            });
        }
    });
    // the scratch directory of the runs' output, when nothing is left in it
    let _ = std::fs::remove_dir(dir.join("tmp"));
    match first_err.into_inner().expect("lock") {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

/// The runs of `keys` with no final record yet.
fn unfinished(dir: &Path, keys: Vec<RunKey>) -> Result<(Vec<RunKey>, usize)> {
    let (done, _) = results::read_all(dir)?;
    let total = keys.len();
    let left: Vec<RunKey> = keys
        .into_iter()
        .filter(|k| !done.get(k).is_some_and(|r| r.status.is_final()))
        .collect();
    let skipped = total - left.len();
    Ok((left, skipped))
}

fn print_summary(dir: &Path, plan: &Plan, json: bool) -> Result<ExitCode> {
    let (records, bad) = results::read_all(dir)?;
    let s = Summary::merge(plan, &records, bad);
    if json {
        println!("{}", serde_json::to_string(&s)?);
    } else {
        print!("{}", s.render());
    }
    Ok(if s.clean() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

fn run_local(a: &RunArgs) -> Result<ExitCode> {
    let plan = Plan::load(&a.dir)?;
    let jobs = match a.jobs {
        Some(0) => bail!("--jobs must be at least 1"),
        Some(j) => j,
        None => std::thread::available_parallelism().map_or(1, |n| n.get()),
    };
    let (left, skipped) = unfinished(&a.dir, plan.runs().collect())?;
    if skipped > 0 {
        eprintln!(
            "campaign {}: {skipped} runs already finished, skipped",
            plan.name
        );
    }
    let bar = if std::io::stderr().is_terminal() && !a.json {
        let b = ProgressBar::new(left.len() as u64);
        b.set_style(
            ProgressStyle::with_template("{spinner} [{elapsed_precise}] {bar:40} {pos}/{len} runs ({per_sec}, eta {eta}) {msg}")
                .unwrap_or_else(|_| ProgressStyle::default_bar()),
        );
        b
    } else {
        ProgressBar::hidden()
    };
    let failed = AtomicUsize::new(0);
    run_many(&a.dir, &plan, &left, jobs, "local", &|r| {
        if r.status != Status::Clean {
            let n = failed.fetch_add(1, Ordering::Relaxed) + 1;
            bar.set_message(format!("{n} not clean"));
            bar.suspend(|| {
                eprintln!(
                    "{:?} leg {} seed {}: {}",
                    r.status,
                    r.leg,
                    r.seed,
                    r.failure().unwrap_or_default()
                )
            });
        }
        bar.inc(1);
    })?;
    bar.finish_and_clear();
    print_summary(&a.dir, &plan, a.json)
}

fn task(a: &TaskArgs) -> Result<ExitCode> {
    let plan = Plan::load(&a.dir)?;
    let id = match a.task {
        Some(t) => t,
        None => std::env::var("SLURM_ARRAY_TASK_ID")
            .map_err(|_| anyhow!("no --task and no SLURM_ARRAY_TASK_ID: this runs inside a Slurm array task, or give --task N"))?
            .parse()
            .context("SLURM_ARRAY_TASK_ID")?,
    };
    let jobs = match a.jobs {
        Some(0) => bail!("--jobs must be at least 1"),
        Some(j) => j,
        None => std::env::var("SLURM_CPUS_PER_TASK")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(1),
    };
    let tag = format!("task-{id}");
    let (left, skipped) = unfinished(&a.dir, plan.task_runs(id)?)?;
    println!(
        "campaign {} {tag} on {}: {} runs ({skipped} already finished), {jobs} at once",
        plan.name,
        node_name(),
        left.len()
    );
    let bad = AtomicUsize::new(0);
    run_many(&a.dir, &plan, &left, jobs, &tag, &|r| {
        if r.status != Status::Clean {
            bad.fetch_add(1, Ordering::Relaxed);
        }
        println!(
            "leg {} seed {}: {:?} in {:.1} s{}",
            r.leg,
            r.seed,
            r.status,
            r.wall_seconds,
            r.failure().map(|f| format!(": {f}")).unwrap_or_default()
        );
    })?;
    // a task that saw a failure shows as failed in sacct
    Ok(if bad.into_inner() == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

fn sbatch(a: &SbatchArgs) -> Result<ExitCode> {
    let plan = Plan::load(&a.dir)?;
    let dir = std::fs::canonicalize(&a.dir)?;
    let rnic = match &a.rnic {
        Some(p) => std::fs::canonicalize(p).with_context(|| format!("--rnic {}", p.display()))?,
        None => std::env::current_exe().context("finding this rnic")?,
    };
    if a.cpus_per_task == 0 {
        bail!("--cpus-per-task must be at least 1");
    }
    std::fs::create_dir_all(dir.join(slurm::LOGS_DIR))?;
    let text = slurm::script(
        &plan,
        &dir,
        &rnic,
        &SbatchOpts {
            partition: a.partition.clone(),
            time: a.time.clone(),
            cpus_per_task: a.cpus_per_task,
            max_running: a.max_running,
        },
    );
    let script = dir.join(slurm::SCRIPT_FILE);
    std::fs::write(&script, text).with_context(|| format!("writing {}", script.display()))?;
    println!("job script: {}", script.display());
    if !a.submit {
        println!("submit it with: sbatch {}", script.display());
        return Ok(ExitCode::SUCCESS);
    }
    let mut cmd = Command::new("sbatch");
    cmd.arg("--parsable");
    if a.wait {
        cmd.arg("--wait");
    }
    let out = cmd.arg(&script).output().map_err(|e| {
        anyhow!(
            "sbatch: {e} (is this a Slurm submit host? the script is {})",
            script.display()
        )
    })?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    let job = stdout.lines().next().unwrap_or_default().trim().to_string();
    if job.is_empty() {
        bail!(
            "sbatch did not take the job: {}",
            tail(&String::from_utf8_lossy(&out.stderr), 3)
        );
    }
    println!(
        "submitted job array {job} ({} tasks); logs in {}",
        plan.tasks,
        dir.join(slurm::LOGS_DIR).display()
    );
    if !a.wait {
        println!("when it ends: rnic campaign merge {}", dir.display());
        return Ok(ExitCode::SUCCESS);
    }
    // sbatch --wait's status is the worst task's: the summary says more
    print_summary(&dir, &plan, false)
}

fn merge(a: &MergeArgs) -> Result<ExitCode> {
    let plan = Plan::load(&a.dir)?;
    print_summary(&a.dir, &plan, a.json)
}
