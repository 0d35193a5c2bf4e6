//! `rnic torture`: the data-before-completion torture test (DESIGN.md
//! section 9.1) over RoCEv2 RC between two simulated NICs (the `rnic-torture`
//! crate), or, with `--transport local-copy`, on local DMA copies of one NIC.
//!
//! On PCI functions (`--device A --peer B`, or `--device A
//! --onchip-loopback`) the same `rnic_torture::torture::run` drives two
//! `Context<Box<dyn Device>>` (or one, looped back on chip) with no
//! simulator hooks: telling a stale byte from a corrupt one waits
//! `--settle` cycles of `Device::now`, and the `--break` switches are set
//! through `DebugSwitches` on both NICs.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{anyhow, bail, Result};
use clap::builder::{PossibleValuesParser, TypedValueParser};
use clap::{Args, ValueEnum};
use indicatif::{ProgressBar, ProgressStyle};
use rnic_torture::{local_copy, Break, Completions, Config, Report};

use crate::devices::{self, DeviceArgs, Target};

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Transport {
    /// RoCEv2 Reliable Connection between two NICs over a fabric.
    Rc,
    /// rnic's multipath transport between two NICs: packets sprayed over
    /// --paths source ports, placed on arrival, completions in order.
    Mp,
    /// Local DMA copies on one NIC (no network).
    LocalCopy,
}

/// `--break`: any debug switch by name; the run refuses, in one line, a
/// switch it cannot catch and names the command that does.
pub fn break_parser() -> impl TypedValueParser<Value = Break> {
    PossibleValuesParser::new(Break::ALL.map(Break::name))
        .map(|s| s.parse::<Break>().expect("listed value"))
}

/// `--completions`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum CompletionMode {
    /// Poll the completion queues.
    Poll,
    /// A side with nothing to poll arms its CQ, polls once more, and waits
    /// for the CQ's interrupt (MSI).
    Event,
}

impl From<CompletionMode> for Completions {
    fn from(m: CompletionMode) -> Self {
        match m {
            CompletionMode::Poll => Completions::Poll,
            CompletionMode::Event => Completions::Event,
        }
    }
}

#[derive(Args)]
pub struct TortureArgs {
    #[command(flatten)]
    pub dev: DeviceArgs,
    /// The second NIC, for a run between two PCI functions (`BDF`,
    /// `vfio:BDF`, `sysfs:BDF`) whose ports are joined by a network; A
    /// sends, B receives.
    #[arg(long)]
    pub peer: Option<String>,
    #[arg(long, value_enum, default_value = "rc")]
    pub transport: Transport,
    /// Messages to send in all (each: --writes-per-imm WRITEs and one
    /// WRITE_WITH_IMM).
    #[arg(long, default_value_t = Config::default().messages)]
    pub messages: u64,
    /// Queue pairs used at once.
    #[arg(long, default_value_t = Config::default().qps)]
    pub qps: u32,
    /// Smallest buffer in bytes.
    #[arg(long, default_value_t = Config::default().min_size)]
    pub min_size: u32,
    /// Largest buffer in bytes.
    #[arg(long, default_value_t = Config::default().max_size)]
    pub max_size: u32,
    /// RDMA WRITEs before the WRITE_WITH_IMM of each message.
    #[arg(long, default_value_t = Config::default().writes_per_imm)]
    pub writes_per_imm: u32,
    /// Messages in flight per QP.
    #[arg(long, default_value_t = Config::default().window)]
    pub window: u32,
    /// Path MTU in bytes (256, 512, 1024, 2048, 4096).
    #[arg(long, default_value_t = Config::default().mtu.bytes())]
    pub mtu: u32,
    /// Fabric profile: ideal, lossy, reorder, hostile, spray-K.
    #[arg(long, default_value = "ideal")]
    pub fabric: String,
    /// Break one layer of the ordering contract on purpose (cqe-ro,
    /// early-cqe, bypass; early-read-cqe with --reads or --atomics;
    /// no-mr-check is for `rnic fuzz`; resend-after-cqe only the wire
    /// shows: tests/mp_wire.rs; unpinned-move only context moves:
    /// tests/qp_record.rs).
    #[arg(long = "break", value_parser = break_parser())]
    pub brk: Option<Break>,
    /// Fraction (0..=1) of messages followed by an RDMA READ of bytes they
    /// wrote, checked when its completion is polled (half of them with a
    /// fenced WRITE of new bytes behind: the READ must still see the old
    /// ones). rc only, on a NIC that issues READ.
    #[arg(long, default_value_t = Config::default().reads)]
    pub reads: f64,
    /// Fraction (0..=1) of messages followed by an atomic (alternately
    /// FETCH_AND_ADD and CMP_AND_SWAP) on a counter word of their QP, its
    /// original value checked when its completion is polled and the
    /// counters checked at the end. rc only, on a NIC with atomics.
    #[arg(long, default_value_t = Config::default().atomics)]
    pub atomics: f64,
    /// Keep every QP of the run in host memory behind the NICs' context
    /// cache, in a context table of N records: `--qps` may then go up to
    /// N - 2 while the NIC holds only its cache slots on chip, and misses
    /// fetch QPs by DMA (the report gives the hit rates). 0: QPs in
    /// on-chip slots. A build without the cache refuses it.
    #[arg(long, default_value_t = 0, value_name = "N")]
    pub qp_cache: u32,
    /// Order CQEs behind their data by a flush read instead of RO=0.
    #[arg(long)]
    pub flush: bool,
    /// Cycles without a completion after which a busy QP's completions
    /// count as lost, on top of the time every QP's window of work may
    /// take ahead of it (with thousands of QPs a QP's message waits for
    /// thousands of others): --qps x --window x (the message's bytes at 2
    /// B per cycle + 500 per work request).
    #[arg(long, default_value_t = Config::default().watchdog)]
    pub watchdog: u64,
    /// Cycles to wait for writes in flight to land before telling a stale
    /// byte from a corrupt one (PCI functions; the simulator drains its
    /// world instead).
    #[arg(long, default_value_t = Config::default().settle)]
    pub settle: u64,
    /// How completions are learnt of: `poll` the CQs, or `event`: a side
    /// with nothing to poll arms its CQ, polls once more and waits for the
    /// CQ's interrupt (the simulator, or VFIO; sysfs has no interrupts).
    /// An interrupt that does not come while a completion waits is counted
    /// as missed, a failure.
    #[arg(long, value_enum, default_value = "poll")]
    pub completions: CompletionMode,
    /// With --completions event: cycles to wait for an interrupt before
    /// polling anyway.
    #[arg(long, default_value_t = Config::default().irq_budget)]
    pub irq_budget: u64,
    /// Local ACK timeout exponent of the QPs (ibv_qp_attr.timeout):
    /// 4.096 us * 2^N, 0 = never; retransmission after this long without
    /// progress.
    #[arg(long, default_value_t = Config::default().retry.timeout, value_parser = clap::value_parser!(u8).range(0..=31))]
    pub timeout: u8,
    /// Spread each requester's packets over this many UDP source ports
    /// (a power of two, 1..=64), so a multipath fabric sprays them; RC then
    /// sees reordering and falls back on go-back-N.
    #[arg(long, alias = "paths", default_value_t = 1, value_parser = spray_parser)]
    pub spray_ports: u32,
    #[command(flatten)]
    pub health: PathHealthArgs,
    /// Retransmissions without progress before the QP fails (ibv_qp_attr.retry_cnt).
    #[arg(long, default_value_t = Config::default().retry.retry_cnt, value_parser = clap::value_parser!(u8).range(0..=7))]
    pub retry_cnt: u8,
    /// Write the frames on the wire before the first failure (the last
    /// --pcap-window frames; at the end of a clean run) here; `.pcapng`
    /// adds each frame's fate.
    #[arg(long)]
    pub pcap: Option<PathBuf>,
    /// Frames kept for --pcap.
    #[arg(long, default_value_t = 256)]
    pub pcap_window: usize,
    /// On a failure, replay the run and write FST waveforms (x.nic0.fst,
    /// x.nic1.fst) of the --wave-window cycles before the first failure.
    #[arg(long)]
    pub wave: Option<PathBuf>,
    /// Cycles of waveform before the first failure.
    #[arg(long, default_value_t = 20_000)]
    pub wave_window: u64,
    /// End the run at its first failure (exit status 1 all the same): a
    /// --break run is caught sooner.
    #[arg(long)]
    pub stop_on_failure: bool,
    /// Print every failure as it is counted (up to this many) on stderr.
    #[arg(long, default_value_t = 0)]
    pub show_failures: u64,
    /// Print one JSON object (deterministic for a seed) instead of a summary.
    #[arg(long)]
    pub json: bool,
    /// Add wall time and simulated cycles per second (to the JSON too).
    #[arg(long)]
    pub timing: bool,
    /// One NIC, its QPs connected to each other through the NIC's on-chip
    /// loopback (no peer, no fabric: how a lab with one board runs the
    /// torture), with the on-chip fault injection below.
    #[arg(long)]
    pub onchip_loopback: bool,
    /// On-chip fault injection: drop rate per transmitted frame (0..1).
    #[arg(long, default_value_t = 0.0, requires = "onchip_loopback")]
    pub onchip_drop: f64,
    /// On-chip fault injection: reorder (hold-back) rate per frame (0..1).
    #[arg(long, default_value_t = 0.0, requires = "onchip_loopback")]
    pub onchip_reorder: f64,
}

/// Path health of sprayed QPs (the torture and the benches that spray).
#[derive(clap::Args, Clone, Copy, Debug, Default)]
pub struct PathHealthArgs {
    /// Path health: take a path out of a QP's use at its Nth loss in one
    /// epoch (16,384 cycles), on both NICs (`port.path_cfg.thresh`): 1
    /// (the NIC's reset value) fails over fastest from a dying path, 2
    /// does slightly better under random loss alone, 3; 0 turns path
    /// health off.
    /// Unset: the NIC's own setting.
    #[arg(long, value_parser = clap::value_parser!(u8).range(0..=3))]
    pub path_thresh: Option<u8>,
}

/// `--spray-ports`: a power of two, 1..=64.
pub fn spray_parser(s: &str) -> std::result::Result<u32, String> {
    let k: u32 = s.parse().map_err(|e| format!("{e}"))?;
    if !(1..=64).contains(&k) || !k.is_power_of_two() {
        return Err(format!("{k}: must be a power of two from 1 to 64"));
    }
    Ok(k)
}

/// Checks that `p` can be written by creating it now (a one-line error
/// otherwise).
// Used by the simulator's runs only.
#[cfg_attr(not(feature = "sim"), allow(dead_code))]
fn check_writable(flag: &str, p: &Path) -> Result<()> {
    std::fs::File::create(p)
        .map(drop)
        .map_err(|e| anyhow!("cannot write {flag} {}: {e}", p.display()))
}

fn config(a: &TortureArgs) -> Result<Config> {
    let cfg = Config {
        seed: a.dev.seed,
        messages: a.messages,
        qps: a.qps,
        min_size: a.min_size,
        max_size: a.max_size,
        writes_per_imm: a.writes_per_imm,
        window: a.window,
        mtu: rnic_harness::mtu_from_bytes(a.mtu)?,
        brk: a.brk,
        flush: a.flush,
        watchdog: a.watchdog,
        settle: a.settle,
        completions: a.completions.into(),
        irq_budget: a.irq_budget,
        reads: a.reads,
        atomics: a.atomics,
        qp_cache: a.qp_cache,
        spray_log: a.spray_ports.trailing_zeros() as u8,
        mp: a.transport == Transport::Mp,
        path_thresh: a.health.path_thresh,
        retry: rnic_harness::Retry {
            timeout: a.timeout,
            retry_cnt: a.retry_cnt,
            ..Default::default()
        },
    };
    cfg.validate()?;
    Ok(cfg)
}

/// The command line that reproduces a run: on the simulator through cargo,
/// on PCI functions the `rnic` a lab runs, with the same devices.
pub fn repro(a: &TortureArgs) -> String {
    let pci = devices::parse_target(&a.dev.device).is_ok_and(|t| t != Target::Sim);
    let head = if pci {
        let mut h = format!("rnic torture --device {}", a.dev.device);
        if let Some(p) = &a.peer {
            h.push_str(&format!(" --peer {p}"));
        }
        h
    } else {
        format!(
            "cargo run --release --bin rnic -- torture --data-w {}{} --fabric {}",
            a.dev.data_w,
            a.dev.sim_model_flag(),
            a.fabric
        )
    };
    let mut s = format!(
        "{head} --transport {} --seed {} --messages {} --qps {} --min-size {} --max-size {} --writes-per-imm {} --window {} --mtu {} --watchdog {} --timeout {} --retry-cnt {} --spray-ports {}",
        match a.transport {
            Transport::Rc => "rc",
            Transport::Mp => "mp",
            Transport::LocalCopy => "local-copy",
        },
        a.dev.seed,
        a.messages,
        a.qps,
        a.min_size,
        a.max_size,
        a.writes_per_imm,
        a.window,
        a.mtu,
        a.watchdog,
        a.timeout,
        a.retry_cnt,
        a.spray_ports
    );
    if let Some(b) = a.brk {
        s.push_str(&format!(" --break {b}"));
    }
    if a.reads != 0.0 {
        s.push_str(&format!(" --reads {}", a.reads));
    }
    if a.atomics != 0.0 {
        s.push_str(&format!(" --atomics {}", a.atomics));
    }
    if a.qp_cache != 0 {
        s.push_str(&format!(" --qp-cache {}", a.qp_cache));
    }
    if let Some(t) = a.health.path_thresh {
        s.push_str(&format!(" --path-thresh {t}"));
    }
    if a.flush {
        s.push_str(" --flush");
    }
    if a.completions == CompletionMode::Event {
        s.push_str(&format!(
            " --completions event --irq-budget {}",
            a.irq_budget
        ));
    }
    if pci && a.settle != Config::default().settle {
        s.push_str(&format!(" --settle {}", a.settle));
    }
    s
}

pub fn run(a: &TortureArgs) -> Result<ExitCode> {
    let target = devices::parse_target(&a.dev.device)?;
    if a.transport == Transport::LocalCopy {
        let cfg = local_copy_config(a)?;
        devices::require_sim(&a.dev)?;
        return sim_runs::local_copy(a, &cfg);
    }
    let cfg = config(a)?;
    if target != Target::Sim {
        return pci_runs::run(a, &cfg, &target);
    }
    if let Some(p) = &a.peer {
        bail!("--peer {p} is for PCI functions: --device sim simulates both NICs");
    }
    devices::require_sim(&a.dev)?;
    if a.onchip_loopback {
        return sim_runs::onchip(a, &cfg);
    }
    sim_runs::pair(a, &cfg)
}

/// A `--transport local-copy` run's settings.
fn local_copy_config(a: &TortureArgs) -> Result<local_copy::Config> {
    if a.fabric != "ideal"
        || a.flush
        || a.pcap.is_some()
        || a.onchip_loopback
        || a.completions != CompletionMode::Poll
    {
        bail!("--transport local-copy takes no --fabric, --flush, --pcap, --onchip-loopback or --completions event");
    }
    if a.reads != 0.0 {
        bail!(
            "--reads {}: --transport local-copy copies on one NIC and issues no RDMA READ: use --transport rc",
            a.reads
        );
    }
    if a.atomics != 0.0 {
        bail!(
            "--atomics {}: --transport local-copy copies on one NIC and issues no atomics: use --transport rc",
            a.atomics
        );
    }
    let cfg = local_copy::Config {
        seed: a.dev.seed,
        messages: a.messages,
        qps: a.qps,
        min_size: a.min_size,
        max_size: a.max_size,
        window: a.window,
        brk: a.brk,
    };
    cfg.validate()?;
    Ok(cfg)
}

/// A progress bar on a terminal (hidden otherwise, and with `--json`).
// Used by the simulator's runs only.
#[cfg_attr(not(feature = "sim"), allow(dead_code))]
fn progress_bar(a: &TortureArgs, template: &str) -> ProgressBar {
    if a.json || !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let b = ProgressBar::new(a.messages);
    b.set_style(
        ProgressStyle::with_template(template).unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    b
}

/// The runs that need the simulator linked in.
#[cfg(feature = "sim")]
mod sim_runs {
    use super::*;
    use anyhow::Context;
    use rnic_sim::RootComplexConfig;
    use rnic_torture::sim::{self, Evidence, SimOpts};
    use std::time::Instant;

    /// Two simulated NICs joined by a fabric.
    pub fn pair(a: &TortureArgs, cfg: &Config) -> Result<ExitCode> {
        let cfg = cfg.clone();
        sim::fabric(&a.fabric)?;
        if let Some(p) = &a.pcap {
            check_writable("--pcap", p)?;
        }
        if let Some(p) = &a.wave {
            for i in 0..2 {
                let f = sim::wave_path(p, i);
                check_writable("--wave", &f)?;
                let _ = std::fs::remove_file(&f);
            }
        }
        let opts = SimOpts {
            data_w: a.dev.data_w,
            knobs: a.dev.sim_model.into(),
            seed: a.dev.seed,
            fabric: a.fabric.clone(),
            root_complex: RootComplexConfig::default(),
            pcap_window: if a.pcap.is_some() { a.pcap_window } else { 0 },
            parallel: a.dev.sim_threads.into(),
            ..SimOpts::default()
        };
        let ev = Evidence {
            pcap: a.pcap.clone(),
            wave: None,
            stop_on_failure: a.stop_on_failure,
        };
        let bar = progress_bar(
        a,
        "{spinner} [{elapsed_precise}] {bar:40} {pos}/{len} messages ({per_sec}, eta {eta}) {msg}",
    );
        let started = Instant::now();
        let mut last = u64::MAX;
        let mut progress = |now: u64, checked: u64| {
            if checked != last {
                last = checked;
                bar.set_position(checked);
                bar.set_message(format!("cycle {now}"));
            }
        };
        let mut shown = 0;
        let show = a.show_failures;
        let bar2 = bar.clone();
        let mut log = |f: &rnic_torture::Failure| {
            if shown < show {
                shown += 1;
                bar2.suspend(|| {
                    eprintln!(
                        "{} at cycle {} QP {} message {}: {}",
                        f.kind, f.cycle, f.qp, f.msg, f.detail
                    )
                });
            }
        };
        let out =
            sim::run_torture(&opts, &cfg, &ev, &mut progress, &mut log).context("torture run")?;
        bar.finish_and_clear();
        let wall = started.elapsed().as_secs_f64();
        let mut rep = out.report;
        super::print_report(a, &mut rep, wall)?;
        if let Some((n, at_failure)) = out.pcap_frames {
            if let Some(p) = &a.pcap {
                eprintln!(
                    "pcap: {n} frames {} written to {}",
                    if at_failure {
                        "before the first failure"
                    } else {
                        "at the end of the run (no failure)"
                    },
                    p.display()
                );
            }
        }
        if !rep.failed() {
            if a.wave.is_some() {
                eprintln!("wave: no failure, no waveform written");
            }
            return Ok(ExitCode::SUCCESS);
        }
        super::print_first_failure(&rep);
        eprintln!("reproduce with: {}", repro(a));
        if let (Some(w), Some(f)) = (&a.wave, &rep.first_failure) {
            let from = f.cycle.saturating_sub(a.wave_window);
            eprintln!(
                "wave: replaying seed {} to trace cycles {from}..{} ...",
                a.dev.seed, f.cycle
            );
            let ev = Evidence {
                pcap: None,
                wave: Some((w.clone(), from)),
                stop_on_failure: true,
            };
            let replay = sim::run_torture(&opts, &cfg, &ev, &mut |_, _| {}, &mut |_| {})
                .context("replay")?;
            let same = replay
                .report
                .first_failure
                .as_ref()
                .map(|g| (g.cycle, g.qp, g.msg))
                == Some((f.cycle, f.qp, f.msg));
            for p in &replay.wave_files {
                eprintln!("wave: {}", p.display());
            }
            if !same {
                eprintln!(
                "wave: WARNING: the replay's first failure differs ({:?}): the run is not deterministic",
                replay.report.first_failure
            );
            }
        }
        Ok(ExitCode::from(1))
    }

    /// `--onchip-loopback`: one simulated NIC talking to itself through
    /// its on-chip loopback and fault injection.
    pub fn onchip(a: &TortureArgs, cfg: &Config) -> Result<ExitCode> {
        if a.pcap.is_some() || a.wave.is_some() || a.fabric != "ideal" {
            bail!("--onchip-loopback has no fabric: it takes no --fabric, --pcap or --wave");
        }
        let world = rnic_sim::SimWorld::new(rnic_sim::WorldConfig {
            nics: 1,
            data_w: a.dev.data_w,
            knobs: a.dev.sim_model.into(),
            seed: a.dev.seed,
            ..rnic_sim::WorldConfig::default()
        })?;
        let ctx = rnic_verbs::Context::open(world.device(0))?;
        super::onchip_on(a, cfg, &ctx, a.dev.data_w)
    }

    /// Local DMA copies on one simulated NIC.
    pub fn local_copy(a: &TortureArgs, cfg: &local_copy::Config) -> Result<ExitCode> {
        let bar = progress_bar(a, "{bar:40} {pos}/{len} msgs {per_sec} {msg}");
        let started = Instant::now();
        let report = sim::run_local_copy(
            a.dev.data_w,
            a.dev.sim_model.into(),
            a.wave.clone(),
            cfg,
            &mut |n| bar.set_position(n),
        )?;
        bar.finish_and_clear();
        super::print_local_copy(a, &report, started.elapsed().as_secs_f64())
    }
}

/// `--onchip-loopback` on one NIC, simulated or a PCI function: its QPs
/// connected to each other through the on-chip loopback, with its fault
/// injection.
fn onchip_on<D: rnic_device::Device>(
    a: &TortureArgs,
    cfg: &Config,
    ctx: &rnic_verbs::Context<D>,
    data_w: u32,
) -> Result<ExitCode> {
    use anyhow::Context as _;
    let addr = rnic_harness::DEFAULT_ADDRS[0];
    ctx.set_port_addr(addr.mac, addr.ip)?;
    ctx.set_port_faults(&rnic_verbs::PortFaults {
        loopback: true,
        drop_rate: a.onchip_drop,
        reorder_rate: a.onchip_reorder,
        seed: a.dev.seed as u32 | 1,
    })?;
    let info = rnic_torture::RunInfo {
        fabric: format!(
            "on-chip loopback (drop {}, reorder {})",
            a.onchip_drop, a.onchip_reorder
        ),
        data_w,
    };
    let started = std::time::Instant::now();
    let res = rnic_torture::torture::run(
        ctx,
        addr,
        ctx,
        addr,
        cfg,
        &info,
        &mut Stop(a.stop_on_failure),
    );
    // The port as a lab expects to find it: loopback and faults off.
    let _ = ctx.set_port_faults(&rnic_verbs::PortFaults::default());
    let mut rep = res.context("torture run")?;
    print_report(a, &mut rep, started.elapsed().as_secs_f64())?;
    if !a.json {
        let c = |k: &str| rep.counters.get(k).copied().unwrap_or(0);
        println!(
            "  on chip: {} frames dropped, {} reordered",
            c("a.lb_dropped"),
            c("a.lb_reordered")
        );
    }
    if rep.failed() {
        print_first_failure(&rep);
        eprintln!(
            "reproduce with: {} --onchip-loopback --onchip-drop {} --onchip-reorder {}",
            repro(a),
            a.onchip_drop,
            a.onchip_reorder
        );
        return Ok(ExitCode::from(1));
    }
    Ok(ExitCode::SUCCESS)
}

/// The hooks of a run without the simulator: nothing but, with
/// `--stop-on-failure`, ending at the first failure.
struct Stop(bool);

impl rnic_torture::torture::Hooks for Stop {
    fn first_failure(&mut self, _: &rnic_torture::Failure) -> bool {
        self.0
    }
}

/// A finished run's report on stdout: with `--timing` its wall time and
/// cycles per second added, then the JSON (`--json`) or the summary.
fn print_report(a: &TortureArgs, rep: &mut Report, wall: f64) -> Result<()> {
    if a.timing {
        rep.wall_seconds = Some(wall);
        rep.cycles_per_second = Some(rep.cycles as f64 / wall.max(1e-9));
    }
    if a.json {
        println!("{}", serde_json::to_string(rep)?);
    } else {
        print_summary(rep, wall);
    }
    Ok(())
}

/// The first failure of a run, on stderr.
fn print_first_failure(rep: &Report) {
    if let Some(f) = &rep.first_failure {
        eprintln!(
            "first failure ({}) at cycle {} on QP {} (QPN {} -> {}), message {}, after {} messages: {}",
            f.kind, f.cycle, f.qp, f.qpn_send, f.qpn_recv, f.msg, f.messages_before, f.detail
        );
    }
}

/// Torture on PCI functions: `--device A --peer B` (A sends to B over
/// the network joining their ports) or `--device A --onchip-loopback`.
/// The real run of `rnic_torture::torture::run`, with no simulator
/// hooks; the hot path reads no register (doorbells are writes,
/// completions are polled in host memory).
mod pci_runs {
    use super::*;
    use anyhow::Context as _;
    use rnic_device::Device;
    use rnic_verbs::Context;

    fn open(args: &DeviceArgs, cfg: &Config) -> Result<Context<Box<dyn Device>>> {
        let dev = devices::open_device(args)?;
        let name = dev.name();
        if cfg.completions == Completions::Event {
            // A function without interrupts (sysfs, or vectors VFIO could
            // not enable) is refused before anything is written to it.
            if let Err(e) = dev.wait_irq(0, 0) {
                bail!("--completions event waits for interrupts: {e}");
            }
        }
        Context::open(dev).with_context(|| format!("opening {name}"))
    }

    pub fn run(a: &TortureArgs, cfg: &Config, target: &Target) -> Result<ExitCode> {
        if a.pcap.is_some() || a.wave.is_some() {
            bail!("--device {target}: --pcap and --wave record the simulator's wire and signals (--device sim)");
        }
        if a.fabric != "ideal" {
            bail!(
                "--device {target}: --fabric picks the simulator's fabric; between PCI functions the network joining their ports is the fabric (`rnic vm --fabric P` simulates one)"
            );
        }
        // An absent or foreign function is named before anything else.
        for t in std::iter::once(target.clone())
            .chain(a.peer.iter().flat_map(|p| devices::parse_target(p)))
        {
            if let Target::Pci { addr, .. } = t {
                rnic_pci::Sysfs::from_env().function(&addr)?.check_rnic()?;
            }
        }
        let peer = match (&a.peer, a.onchip_loopback) {
            (Some(p), true) => bail!("--peer {p} and --onchip-loopback: a run has a peer or loops back on chip, not both"),
            (None, false) => bail!(
                "--device {target}: give the second NIC (--peer BDF, its port joined to this one's) or loop back on chip (--onchip-loopback)"
            ),
            (Some(p), false) => {
                let t = devices::parse_target(p)?;
                if t == Target::Sim {
                    bail!("--peer sim: a PCI function's peer is another PCI function");
                }
                if t == *target {
                    bail!("--peer {p} is --device itself: use --onchip-loopback for one NIC");
                }
                Some(DeviceArgs {
                    device: p.clone(),
                    ..a.dev.clone()
                })
            }
            (None, true) => None,
        };
        let ctx_a = open(&a.dev, cfg)?;
        let data_w = ctx_a.query_device()?.data_w;
        let Some(peer) = peer else {
            return onchip_on(a, cfg, &ctx_a, data_w);
        };
        let ctx_b = open(&peer, cfg)?;
        let [addr_a, addr_b] = rnic_harness::DEFAULT_ADDRS;
        ctx_a.set_port_addr(addr_a.mac, addr_a.ip)?;
        ctx_b.set_port_addr(addr_b.mac, addr_b.ip)?;
        let info = rnic_torture::RunInfo {
            fabric: "network".into(),
            data_w,
        };
        let started = std::time::Instant::now();
        let mut rep = rnic_torture::torture::run(
            &ctx_a,
            addr_a,
            &ctx_b,
            addr_b,
            cfg,
            &info,
            &mut Stop(a.stop_on_failure),
        )
        .context("torture run")?;
        print_report(a, &mut rep, started.elapsed().as_secs_f64())?;
        if rep.failed() {
            print_first_failure(&rep);
            eprintln!("reproduce with: {}", repro(a));
            return Ok(ExitCode::from(1));
        }
        Ok(ExitCode::SUCCESS)
    }
}

/// Without the simulator every run refuses (`require_sim` said why).
#[cfg(not(feature = "sim"))]
mod sim_runs {
    use super::*;
    pub fn pair(_: &TortureArgs, _: &Config) -> Result<ExitCode> {
        unreachable!("require_sim refuses --device sim in this build")
    }
    pub fn onchip(a: &TortureArgs, c: &Config) -> Result<ExitCode> {
        pair(a, c)
    }
    pub fn local_copy(_: &TortureArgs, _: &local_copy::Config) -> Result<ExitCode> {
        unreachable!("require_sim refuses --device sim in this build")
    }
}

/// Prints a local-copy run (summary or JSON) and its exit status.
// Used by the simulator's runs only.
#[cfg_attr(not(feature = "sim"), allow(dead_code))]
fn print_local_copy(a: &TortureArgs, r: &local_copy::Report, wall: f64) -> Result<ExitCode> {
    if a.json {
        println!("{}", serde_json::to_string(r)?);
    } else {
        println!(
            "torture: {} messages, {} bytes on {} queues, DATA_W={} seed={}",
            r.messages, r.bytes, a.qps, r.data_w, r.seed
        );
        println!(
            "  violations {}  corruptions {}  lost {}  duplicate {}  out-of-order {}  error CQEs {}",
            r.violations,
            r.corruptions,
            r.lost_completions,
            r.duplicate_completions,
            r.out_of_order_completions,
            r.error_completions
        );
        println!(
            "  {} simulated cycles in {:.1} s ({:.0} cycles/s)",
            r.cycles,
            wall,
            r.cycles as f64 / wall.max(1e-9)
        );
        println!("  {}", if r.failed() { "FAILED" } else { "clean" });
    }
    if r.failed() {
        if let Some(f) = &r.first_failure {
            eprintln!("first failure: {f}");
        }
        let mut cmd = format!(
            "cargo run --release --bin rnic -- torture --transport local-copy --seed {} --data-w {}{} --messages {} --qps {} --min-size {} --max-size {} --window {}",
            a.dev.seed, a.dev.data_w, a.dev.sim_model_flag(), a.messages, a.qps, a.min_size, a.max_size, a.window
        );
        if let Some(b) = a.brk {
            cmd.push_str(&format!(" --break {b}"));
        }
        eprintln!("reproduce with: {cmd}");
        return Ok(ExitCode::from(1));
    }
    Ok(ExitCode::SUCCESS)
}

fn print_summary(r: &Report, wall: f64) {
    println!(
        "rnic torture: {} over fabric {}, DATA_W={}, seed {}{}{}",
        r.transport,
        r.fabric,
        r.data_w,
        r.seed,
        r.brk
            .as_ref()
            .map(|b| format!(", BREAK {b}"))
            .unwrap_or_default(),
        if r.flush { ", flush mode" } else { "" }
    );
    println!(
        "  {} QPs x {} messages in flight; message = {} WRITE + 1 WRITE_WITH_IMM of {}..{} B; PMTU {}{}",
        r.qps,
        r.window,
        r.writes_per_imm,
        r.min_size,
        r.max_size,
        r.mtu,
        if r.spray_ports > 1 {
            format!(
                "; sprayed over {} ports, path health {}",
                r.spray_ports,
                match r.path_thresh {
                    Some(0) => "off".to_string(),
                    Some(t) => format!("at {t} loss{} per epoch", if t == 1 { "" } else { "es" }),
                    None => "unknown".to_string(),
                }
            )
        } else {
            String::new()
        }
    );
    println!(
        "  messages {} of {}   bytes {}",
        r.messages, r.messages_requested, r.bytes
    );
    println!(
        "  ordering violations {} ({} stale bytes)   corruptions {}   lost {}   duplicate {}   out-of-order {}   error CQEs {}{}",
        r.violations,
        r.stale_bytes,
        r.corruptions,
        r.lost_completions,
        r.duplicate_completions,
        r.out_of_order_completions,
        r.error_completions,
        if r.abandoned_messages > 0 {
            format!("   abandoned {}", r.abandoned_messages)
        } else {
            String::new()
        }
    );
    if let Some(rd) = &r.reads {
        let c = |k: &str| r.counters.get(k).copied().unwrap_or(0);
        println!(
            "  READs (--reads {}): posted {}   checked {} ({} bytes)   fenced WRITEs read back {}   read failures {} ({} stale bytes)   responses placed {}",
            rd.fraction,
            rd.posted,
            rd.checked,
            rd.bytes,
            rd.fenced_writes,
            rd.failures,
            rd.stale_bytes,
            c("a.rx_read_resp")
        );
    }
    if let Some(at) = &r.atomics {
        println!(
            "  atomics (--atomics {}): posted {} ({} FETCH_AND_ADD, {} CMP_AND_SWAP)   completed {}   checked {}   counters checked at the end {}   failures {} ({} CQEs before their value)   executed by NIC b {}   duplicates answered from the replay record {}",
            at.fraction,
            at.posted,
            at.fetch_adds,
            at.cmp_swaps,
            at.completed,
            at.checked,
            at.counters_checked,
            at.failures,
            at.early,
            at.executed,
            at.replayed
        );
    }
    if !r.counters.is_empty() {
        let c = |k: &str| r.counters.get(k).copied().unwrap_or(0);
        // a one-NIC run (--onchip-loopback) has no fabric and no NIC b
        if r.counters.contains_key("fabric.sent") {
            println!(
                "  fabric: {} frames, dropped {}, duplicated {}, corrupted {}, reordered {}",
                c("fabric.sent"),
                c("fabric.dropped"),
                c("fabric.duplicated"),
                c("fabric.corrupted"),
                c("fabric.reordered")
            );
        }
        let sides = ["a", "b"]
            .into_iter()
            .filter(|side| r.counters.contains_key(&format!("{side}.tx_frames")));
        for side in sides {
            println!(
                "  NIC {side}: tx {} (retransmitted {}), timeouts {}, NAKs rx seq {} rnr {}, tx {}; rx drops: icrc {} malformed {} nobuf {} qp {} psn/dup {} transport {} wimm {}; READs served {} (responses {}); paths out {} back {}, probes {} (last round trip {} cycles)",
                c(&format!("{side}.tx_frames")),
                c(&format!("{side}.tx_retransmits")),
                c(&format!("{side}.rtx_timeouts")),
                c(&format!("{side}.rx_nak_seq")),
                c(&format!("{side}.rx_rnr_nak")),
                c(&format!("{side}.rx_nak")),
                c(&format!("{side}.rx_drop_icrc")),
                c(&format!("{side}.rx_drop_malformed")),
                c(&format!("{side}.rx_drop_nobuf")),
                c(&format!("{side}.rx_drop_qp")),
                c(&format!("{side}.rx_drop_psn")),
                c(&format!("{side}.rx_drop_transport")),
                c(&format!("{side}.rx_drop_wimm")),
                c(&format!("{side}.rx_read_req")),
                c(&format!("{side}.tx_read_resp")),
                c(&format!("{side}.path_takeouts")),
                c(&format!("{side}.path_comebacks")),
                c(&format!("{side}.path_probes")),
                c(&format!("{side}.path_probe_rtt")),
            );
        }
    }
    if let Some(q) = &r.qp_cache {
        let sides = std::iter::once(("a", &q.a)).chain(q.b.as_ref().map(|b| ("b", b)));
        for (side, c) in sides {
            println!(
                "  NIC {side} QP cache ({} slots for {} QPs, table of {} records): hit rate {}, {} lookups, {} misses; fetches {}, evictions {}, write-backs {}, fetches with every slot pinned {}, most doorbells waiting {}",
                c.slots,
                r.qps,
                q.records,
                c.hit_rate
                    .map_or("-".to_string(), |h| format!("{:.1} %", 100.0 * h)),
                c.lookups,
                c.lookup_misses,
                c.fetches,
                c.evictions,
                c.writebacks,
                c.pinned_full,
                c.db_waiting_max
            );
        }
    }
    if let Some(e) = &r.events {
        println!(
            "  completions by interrupt: {} interrupts taken in {} waits ({} spurious, {} late), {} budgets out with nothing to poll; {} of {} arms found completions at once; missed interrupts {}",
            e.interrupts,
            e.waits,
            e.spurious,
            e.late_interrupts,
            e.timeouts,
            e.found_after_arm,
            e.arms,
            e.missed_interrupts
        );
    }
    println!(
        "  {} simulated cycles in {wall:.1} s ({:.0} cycles/s)",
        r.cycles,
        r.cycles as f64 / wall.max(1e-9)
    );
    println!("  {}", if r.failed() { "FAILED" } else { "clean" });
}
