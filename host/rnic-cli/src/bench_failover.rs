//! `rnic bench failover`: how the sprayed transports ride out a path that
//! dies and comes back (a fabric with a flapping path, e.g. `spray-8-flap`).
//!
//! One run per transport: 4 QPs x 8 WRITEs of 16 KiB in flight for a fixed
//! number of cycles, each requester spraying over the fabric's paths, with
//! every send completion's cycle recorded (goodput per bin of `--bin`
//! cycles) and the fabric's counters of the flapping path, for the frames
//! of NIC 0 (the requester), sampled at every poll. The flap is a fixed
//! schedule of the world's (absolute) cycle count, the same count as
//! [`rnic_device::Device::now`]: the path is up from cycle 0 for `up`
//! cycles, then down `down` cycles, and so on; the run starts after the
//! connections are set up, so the edges are computed from the schedule,
//! not from the run's start. Bins are aligned to multiples of `--bin` in
//! that count (so a `--bin` that divides the up and down periods puts every
//! edge on a bin boundary).
//!
//! Goodput of a bin: the payload of the WRITEs completed, each spread over
//! the cycles since the completion before it ([`Series::from_timeline`]).
//! For each death inside the run (the figures: [`analyse`]):
//! - **baseline**: mean goodput of the bins of the up period before it
//!   (bins within `--warmup` cycles of the run's start are left out);
//! - **failover**: cycles from the death to the start of the first bin from
//!   which goodput stays at >= 90 % of the baseline for 3 bins in a row,
//!   looked for from the first bin below 90 % while the path is down (0: no
//!   such bin) up to the next death; none: not recovered
//!   ([`failover_time`]);
//! - **last dip**: cycles from the death to the end of the last bin below
//!   90 % while down ([`last_dip`]);
//! - goodput during the down period, as a share of the baseline;
//! - frames the requester sent into the dead path while it was down;
//! - **return**: cycles from the comeback to the first delivery of a frame
//!   of the requester on that path (resolution: the poll step, 16 cycles).

use std::process::ExitCode;

use anyhow::{bail, Context, Result};
use clap::Args;
use rnic_device::Device;
use rnic_sim::{Flap, PathStats};
use rnic_torture::perf::{self, BwOpts};
use serde::Serialize;

use crate::bench_rdma::pair;
use crate::devices::{self, DeviceArgs};

/// Goodput must come back to this share of the baseline ...
pub const RECOVERED: f64 = 0.9;
/// ... for this many bins in a row to count as recovered.
pub const RECOVERED_BINS: usize = 3;

#[derive(Args)]
pub struct FailoverArgs {
    #[command(flatten)]
    pub dev: DeviceArgs,
    /// Transports to run: rc, mp.
    #[arg(long, value_delimiter = ',', default_value = "rc,mp")]
    pub transport: Vec<String>,
    /// Fabric profile; one of its paths must flap (spray-K-flap,
    /// spray-K-lossy-flap, spray-K-lossP-flap, ...).
    #[arg(long, default_value = "spray-8-flap")]
    pub fabric: String,
    /// UDP source ports each requester sprays over (1..64, a power of two).
    #[arg(long, default_value_t = 8, value_parser = crate::torture::spray_parser)]
    pub paths: u32,
    #[command(flatten)]
    pub load: crate::bench_rdma::WriteLoad,
    #[command(flatten)]
    pub health: crate::torture::PathHealthArgs,
    /// Cycles per goodput bin.
    #[arg(long, default_value_t = 2000)]
    pub bin: u64,
    /// Length of each run in cycles, from its first doorbell.
    #[arg(long, default_value_t = 260_000)]
    pub cycles: u64,
    /// Cycles at the start of a run left out of every baseline.
    #[arg(long, default_value_t = 10_000)]
    pub warmup: u64,
    /// Write a plot of goodput per bin against time (one line per
    /// transport, down periods shaded) here, as SVG.
    #[arg(long)]
    pub plot: Option<std::path::PathBuf>,
    /// One JSON object per row.
    #[arg(long)]
    pub json: bool,
}

/// Goodput per bin: bin `i` covers cycles `t0 + i * bin ..` `t0 + (i+1) * bin`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Series {
    pub t0: u64,
    pub bin: u64,
    /// Payload bits per cycle completed in each bin.
    pub bpc: Vec<f64>,
}

impl Series {
    /// Goodput per bin of the completions `(cycle, bytes)` (in cycle order)
    /// of a run `from..to`: bins aligned to multiples of `bin`, the first
    /// starting at or after `from`, the last ending at or before `to` and
    /// the last completion (partial bins are left out, and so are those
    /// after the last completion: what they carried is not known). The bytes of each completion are spread
    /// evenly over the cycles since the completion before it (of any QP;
    /// the first: since `from`), i.e. goodput is taken as constant between
    /// two completions: counted whole, a 16 KiB WRITE (2,300 cycles at
    /// 14 Gb/s) would make every 2,000-cycle bin hold 0, 1 or 2 of them.
    pub fn from_timeline(timeline: &[(u64, u64)], from: u64, to: u64, bin: u64) -> Series {
        assert!(bin > 0);
        let t0 = from.div_ceil(bin) * bin;
        let to = timeline.last().map_or(from, |&(c, _)| c.min(to));
        let n = (to / bin).saturating_sub(t0 / bin) as usize;
        let mut bytes = vec![0f64; n];
        // `amount` bytes spread over cycles a..b
        let mut spread = |a: u64, b: u64, amount: f64| {
            if b <= a {
                // a point: into the bin of a
                if a >= t0 {
                    if let Some(x) = bytes.get_mut(((a - t0) / bin) as usize) {
                        *x += amount;
                    }
                }
                return;
            }
            let first = a.max(t0).saturating_sub(t0) / bin;
            let mut i = first as usize;
            while i < n {
                let (s, e) = (t0 + i as u64 * bin, t0 + (i as u64 + 1) * bin);
                if s >= b {
                    break;
                }
                let overlap = e.min(b).saturating_sub(s.max(a));
                bytes[i] += amount * overlap as f64 / (b - a) as f64;
                i += 1;
            }
        };
        let mut prev = from;
        let mut k = 0;
        while k < timeline.len() {
            // the completions seen at one poll together
            let c = timeline[k].0;
            let mut amount = 0u64;
            while k < timeline.len() && timeline[k].0 == c {
                amount += timeline[k].1;
                k += 1;
            }
            spread(prev, c, amount as f64);
            prev = prev.max(c);
        }
        Series {
            t0,
            bin,
            bpc: bytes.iter().map(|&b| b * 8.0 / bin as f64).collect(),
        }
    }

    pub fn start(&self, i: usize) -> u64 {
        self.t0 + i as u64 * self.bin
    }

    pub fn end(&self, i: usize) -> u64 {
        self.start(i + 1)
    }

    /// Indices of the bins lying entirely within `from..to`.
    fn within(&self, from: u64, to: u64) -> impl Iterator<Item = usize> + '_ {
        (0..self.bpc.len()).filter(move |&i| self.start(i) >= from && self.end(i) <= to)
    }

    /// Mean goodput of the bins lying entirely within `from..to` (`None`:
    /// no such bin).
    pub fn mean(&self, from: u64, to: u64) -> Option<f64> {
        let (mut sum, mut n) = (0.0, 0usize);
        for i in self.within(from, to) {
            sum += self.bpc[i];
            n += 1;
        }
        (n > 0).then(|| sum / n as f64)
    }
}

/// The down periods `(death, comeback)` of `flap` whose death falls in
/// `from..to` (cycles of the world's count, the flap's schedule starting
/// up at cycle 0).
pub fn deaths(flap: Flap, from: u64, to: u64) -> Vec<(u64, u64)> {
    let period = flap.up + flap.down;
    let mut d = (from / period) * period + flap.up;
    if d < from {
        d += period;
    }
    let mut v = Vec::new();
    while d < to {
        v.push((d, d + flap.down));
        d += period;
    }
    v
}

/// Failover: cycles from `death` to the start of the first bin from which
/// goodput stays at >= [`RECOVERED`] x `baseline` for [`RECOVERED_BINS`]
/// bins in a row (all of them ending by `limit`), looked for from the first
/// bin below that (a dip) while the path is down (`death..comeback`): the
/// loss of the packets sent into the dead path shows only once they hold
/// up completions, several bins after the death. No dip while down: 0;
/// `None`: a dip and no recovery (not recovered).
pub fn failover_time(
    s: &Series,
    death: u64,
    comeback: u64,
    limit: u64,
    baseline: f64,
) -> Option<u64> {
    let low = |i: usize| s.bpc[i] < RECOVERED * baseline;
    let Some(first) = s.within(death, comeback).find(|&i| low(i)) else {
        return Some(0);
    };
    let bins: Vec<usize> = s.within(s.start(first), limit).collect();
    bins.windows(RECOVERED_BINS)
        .find(|w| w.iter().all(|&i| !low(i)))
        .map(|w| s.start(w[0]) - death)
}

/// Cycles from `death` to the end of the last bin below [`RECOVERED`] x
/// `baseline` while the path is down (`death..comeback`); `None`: none.
pub fn last_dip(s: &Series, death: u64, comeback: u64, baseline: f64) -> Option<u64> {
    s.within(death, comeback)
        .filter(|&i| s.bpc[i] < RECOVERED * baseline)
        .last()
        .map(|i| s.end(i) - death)
}

/// The value at cycle `t` of a counter sampled as `(cycle, value)` (in
/// cycle order): the last sample at or before `t` (0 before the first).
pub fn value_at(samples: &[(u64, u64)], t: u64) -> u64 {
    let n = samples.partition_point(|&(c, _)| c <= t);
    n.checked_sub(1).map_or(0, |i| samples[i].1)
}

/// The cycle of the first sample after `t`, and before `limit`, at which
/// the counter has grown past its value at `t`.
pub fn first_rise_after(samples: &[(u64, u64)], t: u64, limit: u64) -> Option<u64> {
    let v = value_at(samples, t);
    samples
        .iter()
        .find(|&&(c, x)| c > t && c < limit && x > v)
        .map(|&(c, _)| c)
}

/// What happened around one death of the flapping path.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Event {
    /// Cycle the path went down (world count).
    pub death: u64,
    /// Cycle it came back.
    pub comeback: u64,
    /// Mean goodput (bits per cycle) of the up period before the death;
    /// `None`: no bin of it in the run after the warm-up.
    pub baseline_bpc: Option<f64>,
    /// Mean goodput while down.
    pub down_bpc: Option<f64>,
    /// See [`failover_time`]; `None` if not recovered (or no baseline).
    pub failover_cycles: Option<u64>,
    /// See [`last_dip`].
    pub last_dip_cycles: Option<u64>,
    /// The run covers the down period and the up period after it (else the
    /// figures after the run's end are missing).
    pub complete: bool,
    /// Frames of the requester sent into the path while it was down.
    pub frames_into_dead_path: u64,
    /// Cycles from the comeback to the first delivery of a requester frame
    /// on the path; `None`: none in the run.
    pub return_cycles: Option<u64>,
    /// Start of the bin of that delivery.
    pub return_bin_start: Option<u64>,
}

/// The figures of every death of `flap` in the run `from..to` from its
/// goodput series and the requester's counters of the flapping path
/// (`delivered`, `down_dropped`: sampled as `(cycle, value)`).
pub fn analyse(
    s: &Series,
    flap: Flap,
    from: u64,
    to: u64,
    warmup: u64,
    delivered: &[(u64, u64)],
    down_dropped: &[(u64, u64)],
) -> Vec<Event> {
    deaths(flap, from, to)
        .into_iter()
        .map(|(death, comeback)| {
            let next = comeback + flap.up;
            let baseline = s.mean((death - flap.up).max(from + warmup), death);
            let limit = next.min(to);
            let ret = first_rise_after(delivered, comeback, limit);
            Event {
                death,
                comeback,
                baseline_bpc: baseline,
                down_bpc: s.mean(death, comeback),
                failover_cycles: baseline.and_then(|b| failover_time(s, death, comeback, limit, b)),
                last_dip_cycles: baseline.and_then(|b| last_dip(s, death, comeback, b)),
                complete: next <= to,
                // the counter grows only while the path is down
                frames_into_dead_path: value_at(down_dropped, limit)
                    - value_at(down_dropped, death),
                return_cycles: ret.map(|c| c - comeback),
                return_bin_start: ret.map(|c| c / s.bin * s.bin),
            }
        })
        .collect()
}

#[derive(Serialize)]
struct Row<'a> {
    test: &'static str,
    transport: &'static str,
    fabric: &'a str,
    flap_path: usize,
    spray_ports: u32,
    data_w: u32,
    seed: u64,
    mtu: u32,
    msg_size: u32,
    qps: u32,
    window: u32,
    bin: u64,
    clock_mhz: f64,
    run_start: u64,
    run_cycles: u64,
    run_gbps: f64,
    #[serde(flatten)]
    event: &'a Event,
    baseline_gbps: Option<f64>,
    down_gbps: Option<f64>,
    down_of_baseline: Option<f64>,
    responder_frames_into_dead_path: u64,
}

#[derive(Serialize)]
struct SeriesRow<'a> {
    test: &'static str,
    transport: &'static str,
    fabric: &'a str,
    clock_mhz: f64,
    #[serde(flatten)]
    series: &'a Series,
}

/// One transport's run.
struct Run {
    name: &'static str,
    series: Series,
    events: Vec<Event>,
    /// Responder's frames into the dead path, per event.
    acks_into_dead: Vec<u64>,
    start: u64,
    cycles: u64,
    bytes: u64,
    clock: f64,
    requester_frames_on_path: u64,
}

fn counter(samples: &[(u64, PathStats)], f: impl Fn(&PathStats) -> u64) -> Vec<(u64, u64)> {
    samples.iter().map(|(c, s)| (*c, f(s))).collect()
}

/// `rnic bench failover`.
pub fn failover(a: &FailoverArgs) -> Result<ExitCode> {
    let mtu = rnic_harness::mtu_from_bytes(a.load.mtu)?;
    if a.load.qps == 0 || a.load.window == 0 || a.load.size == 0 {
        bail!("--qps, --window and --size must not be zero");
    }
    if a.bin == 0 || a.cycles < RECOVERED_BINS as u64 * a.bin {
        bail!("--bin must be positive and --cycles at least {RECOVERED_BINS} bins");
    }
    devices::require_sim(&a.dev)?;
    let cfg = rnic_torture::sim::fabric(&a.fabric)?;
    let flapping: Vec<(usize, Flap)> = cfg
        .paths
        .iter()
        .enumerate()
        .filter_map(|(i, p)| p.flap.map(|f| (i, f)))
        .collect();
    let (path, flap) = match flapping[..] {
        [one] => one,
        [] => bail!(
            "fabric {:?} has no flapping path: use a -flap profile, e.g. spray-8-flap or spray-8-loss0.01-flap",
            a.fabric
        ),
        _ => bail!("fabric {:?}: more than one flapping path", a.fabric),
    };
    let mut transports = Vec::new();
    for t in &a.transport {
        transports.push(match t.as_str() {
            "rc" => ("rc", rnic_verbs::QpType::Rc),
            "mp" => ("mp", rnic_verbs::QpType::Mp),
            _ => bail!("--transport {t:?}: rc or mp"),
        });
    }
    if transports.is_empty() {
        bail!("--transport: rc, mp or both");
    }
    let mut runs = Vec::new();
    for &(name, qp_type) in &transports {
        let p = pair(&a.dev, &a.fabric, 16)?;
        let world = p.world.clone();
        // the requester's (NIC 0) and responder's counters of the path
        let mut req: Vec<(u64, PathStats)> = Vec::new();
        let mut resp: Vec<(u64, PathStats)> = Vec::new();
        let mut observe = |now: u64| {
            for (src, v) in [(0, &mut req), (1, &mut resp)] {
                let s = world.path_stats_from(src)[path];
                if v.last().is_none_or(|(_, l)| *l != s) {
                    v.push((now, s));
                }
            }
        };
        let r = perf::write_bw_observed(
            &p.a,
            p.addrs[0],
            &p.b,
            p.addrs[1],
            &BwOpts {
                msg_size: a.load.size,
                qps: a.load.qps,
                window: a.load.window,
                mtu,
                watchdog: 20_000_000,
                spray_log: a.paths.trailing_zeros() as u8,
                path_thresh: a.health.path_thresh,
                qp_type,
                timeline: true,
                run_cycles: Some(a.cycles),
                ..BwOpts::default()
            },
            &mut observe,
        )
        .with_context(|| format!("{name} over {}", a.fabric))?;
        let (from, to) = (r.start, r.start + r.cycles);
        let series = Series::from_timeline(&r.timeline, from, to, a.bin);
        let events = analyse(
            &series,
            flap,
            from,
            to,
            a.warmup,
            &counter(&req, |s| s.delivered),
            &counter(&req, |s| s.down_dropped),
        );
        let resp_down = counter(&resp, |s| s.down_dropped);
        let acks_into_dead = events
            .iter()
            .map(|e| {
                let limit = (e.comeback + flap.up).min(to);
                value_at(&resp_down, limit) - value_at(&resp_down, e.death)
            })
            .collect();
        runs.push(Run {
            name,
            series,
            events,
            acks_into_dead,
            start: r.start,
            cycles: r.cycles,
            bytes: r.bytes,
            clock: p.a.device().clock_mhz(),
            requester_frames_on_path: value_at(&counter(&req, |s| s.sent), to)
                - value_at(&counter(&req, |s| s.sent), from),
        });
    }
    let gbps = |bpc: f64, clock: f64| bpc * clock / 1000.0;
    if !a.json {
        println!(
            "{:>5} {:>17} {:>9} {:>9} {:>7} {:>13} {:>9} {:>10} {:>8}",
            "trans",
            "down (cycles)",
            "baseline",
            "down",
            "of base",
            "failover",
            "last dip",
            "into dead",
            "return"
        );
    }
    for run in &runs {
        let run_gbps = gbps(run.bytes as f64 * 8.0 / run.cycles as f64, run.clock);
        for (e, &acks) in run.events.iter().zip(&run.acks_into_dead) {
            let base = e.baseline_bpc.map(|b| gbps(b, run.clock));
            let down = e.down_bpc.map(|b| gbps(b, run.clock));
            let of = e.baseline_bpc.zip(e.down_bpc).map(|(b, d)| d / b);
            if a.json {
                let row = Row {
                    test: "failover",
                    transport: run.name,
                    fabric: &a.fabric,
                    flap_path: path,
                    spray_ports: a.paths,
                    data_w: a.dev.data_w,
                    seed: a.dev.seed,
                    mtu: a.load.mtu,
                    msg_size: a.load.size,
                    qps: a.load.qps,
                    window: a.load.window,
                    bin: a.bin,
                    clock_mhz: run.clock,
                    run_start: run.start,
                    run_cycles: run.cycles,
                    run_gbps,
                    event: e,
                    baseline_gbps: base,
                    down_gbps: down,
                    down_of_baseline: of,
                    responder_frames_into_dead_path: acks,
                };
                println!("{}", serde_json::to_string(&row)?);
                continue;
            }
            let opt = |x: Option<f64>, f: &dyn Fn(f64) -> String| x.map_or("-".into(), f);
            let failover = match (e.baseline_bpc, e.failover_cycles) {
                (None, _) => "no baseline".to_string(),
                (_, Some(c)) => c.to_string(),
                (_, None) if e.complete => "not recovered".into(),
                (_, None) => "not yet".into(),
            };
            println!(
                "{:>5} {:>17} {:>9} {:>9} {:>7} {:>13} {:>9} {:>10} {:>8}",
                run.name,
                format!(
                    "{}-{}{}",
                    e.death,
                    e.comeback,
                    if e.complete { "" } else { "*" }
                ),
                opt(base, &|x| format!("{x:.2}")),
                opt(down, &|x| format!("{x:.2}")),
                opt(of, &|x| format!("{:.1}%", x * 100.0)),
                failover,
                e.last_dip_cycles.map_or("-".into(), |c| c.to_string()),
                e.frames_into_dead_path,
                e.return_cycles.map_or("-".into(), |c| c.to_string()),
            );
        }
        if a.json {
            let row = SeriesRow {
                test: "failover_series",
                transport: run.name,
                fabric: &a.fabric,
                clock_mhz: run.clock,
                series: &run.series,
            };
            println!("{}", serde_json::to_string(&row)?);
        } else {
            println!(
                "{:>5} run: cycles {}..{} (world count), {:.2} Gb/s over the run, {} requester frames sent into path {path}",
                run.name,
                run.start,
                run.start + run.cycles,
                run_gbps,
                run.requester_frames_on_path
            );
        }
        if run.requester_frames_on_path == 0 {
            eprintln!(
                "rnic: warning: {}: the requester sent no frame into the flapping path {path} (--paths {})",
                run.name, a.paths
            );
        }
    }
    if let Some(plot) = &a.plot {
        plot_failover(plot, &runs, flap, a)?;
        if !a.json {
            println!("plot: {}", plot.display());
        }
    }
    if !a.json {
        let clock = runs.first().map_or(0.0, |r| r.clock);
        println!(
            "(fabric {}: path {path} down {} of every {} cycles from cycle {} of the world's count; {} QPs x {} WRITEs of {} B in flight sprayed over {} ports, {} cycles per run, PMTU {} B, DATA_W={}, seed {}; Gb/s at {clock} MHz.\n \
             down: the cycles the path was down (*: the run ends before the next death); baseline: mean goodput (the payload of the WRITEs completed, each spread over the cycles since the completion before it) of the {}-cycle bins of the up period before, leaving out the first {} cycles of the run; \
             down, of base: mean goodput while down, and as a share of the baseline; failover: cycles from the death to the start of the first bin from which goodput stays >= {:.0} % of the baseline for {} bins in a row, looked for from the first bin below that while down (0: none; searched up to the next death; not recovered: never; not yet: the run ended first); \
             last dip: cycles from the death to the end of the last bin below {:.0} % while down; \
             into dead: frames the requester sent into the path while down; return: cycles from the comeback to the first delivery of a requester frame on the path, to a poll step (16 cycles))",
            a.fabric,
            flap.down,
            flap.up + flap.down,
            flap.up,
            a.load.qps,
            a.load.window,
            a.load.size,
            a.paths,
            a.cycles,
            a.load.mtu,
            a.dev.data_w,
            a.dev.seed,
            a.bin,
            a.warmup,
            RECOVERED * 100.0,
            RECOVERED_BINS,
            RECOVERED * 100.0,
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// Goodput per bin against the world's cycle count, one line per
/// transport, the down periods shaded.
fn plot_failover(path: &std::path::Path, runs: &[Run], flap: Flap, a: &FailoverArgs) -> Result<()> {
    use plotters::prelude::*;
    let err = |e: &dyn std::fmt::Display| anyhow::anyhow!("plot {}: {e}", path.display());
    let kc = |c: u64| c as f64 / 1000.0;
    let xmin = runs.iter().map(|r| r.series.t0).min().unwrap_or(0);
    let xmax = runs
        .iter()
        .map(|r| r.series.end(r.series.bpc.len().saturating_sub(1)))
        .max()
        .unwrap_or(1)
        .max(xmin + 1);
    let pts = |r: &Run| -> Vec<(f64, f64)> {
        (0..r.series.bpc.len())
            .map(|i| {
                (
                    kc(r.series.start(i) + r.series.bin / 2),
                    r.series.bpc[i] * r.clock / 1000.0,
                )
            })
            .collect()
    };
    let ymax = runs
        .iter()
        .flat_map(|r| pts(r).into_iter().map(|p| p.1))
        .fold(0.0, f64::max)
        * 1.1;
    let root = SVGBackend::new(path, (900, 500)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| err(&e))?;
    let mut chart = ChartBuilder::on(&root)
        .caption(
            format!(
                "rnic failover on {}: {} QPs x {} x {} B WRITEs over {} ports, PMTU {}, DATA_W {}; {}-cycle bins",
                a.fabric, a.load.qps, a.load.window, a.load.size, a.paths, a.load.mtu, a.dev.data_w, a.bin
            ),
            ("sans-serif", 15),
        )
        .margin(15)
        .x_label_area_size(40)
        .y_label_area_size(55)
        .build_cartesian_2d(kc(xmin)..kc(xmax), 0.0..ymax.max(0.1))
        .map_err(|e| err(&e))?;
    chart
        .configure_mesh()
        .x_desc("cycle (thousands, the world's count; shaded: the flapping path is down)")
        .y_desc("goodput per bin (Gb/s at the core clock)")
        .draw()
        .map_err(|e| err(&e))?;
    chart
        .draw_series(
            deaths(flap, xmin.saturating_sub(flap.down), xmax)
                .into_iter()
                .map(|(d, u)| {
                    Rectangle::new(
                        [(kc(d.max(xmin)), 0.0), (kc(u.min(xmax)), ymax.max(0.1))],
                        BLACK.mix(0.12).filled(),
                    )
                }),
        )
        .map_err(|e| err(&e))?;
    for (i, r) in runs.iter().enumerate() {
        let color = Palette99::pick(i).to_rgba();
        chart
            .draw_series(LineSeries::new(pts(r), color.stroke_width(2)))
            .map_err(|e| err(&e))?
            .label(r.name)
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], color));
    }
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .draw()
        .map_err(|e| err(&e))?;
    root.present().map_err(|e| err(&e))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const FLAP: Flap = Flap {
        up: 50_000,
        down: 50_000,
    };

    /// A series of `bin`-cycle bins from `t0` with goodput `f(start)`.
    fn series(t0: u64, bin: u64, n: usize, f: impl Fn(u64) -> f64) -> Series {
        Series {
            t0,
            bin,
            bpc: (0..n).map(|i| f(t0 + i as u64 * bin)).collect(),
        }
    }

    fn close(a: &[f64], b: &[f64]) -> bool {
        a.len() == b.len() && a.iter().zip(b).all(|(x, y)| (x - y).abs() < 1e-9)
    }

    #[test]
    fn bins_of_a_timeline() {
        // run 3,500..12,100: bins of 2,000 from 4,000 to 12,000; 500 B at
        // 4,000 (over 3,500..4,000: before the first bin), 1,000 B at 6,000
        // (4,000..6,000), 2 x 500 B at 7,000, 2,000 B at 11,000 (7,000..
        // 11,000)
        let tl = [
            (4_000, 500),
            (6_000, 1_000),
            (7_000, 500),
            (7_000, 500),
            (11_000, 2_000),
        ];
        let s = Series::from_timeline(&tl, 3_500, 12_100, 2_000);
        assert_eq!(s.t0, 4_000);
        assert_eq!((s.start(1), s.end(1)), (6_000, 8_000));
        // bytes per bin: 1000 | 1000 + 500 | 1000 (| 500, the bin
        // 10,000..12,000 ends after the last completion) -> x 8 / 2000
        assert!(close(&s.bpc, &[4.0, 6.0, 4.0]), "{:?}", s.bpc);
        let s = Series::from_timeline(&tl, 3_500, 10_500, 2_000);
        assert!(close(&s.bpc, &[4.0, 6.0, 4.0]), "{:?}", s.bpc);
        let s = Series::from_timeline(&tl, 3_500, 9_999, 2_000);
        assert!(close(&s.bpc, &[4.0, 6.0]), "{:?}", s.bpc);
        assert!(Series::from_timeline(&[], 3_500, 9_999, 2_000)
            .bpc
            .is_empty());
        assert_eq!(s.mean(4_000, 8_000), Some(5.0));
        assert_eq!(s.mean(5_000, 8_000), Some(6.0));
        assert_eq!(s.mean(5_000, 7_000), None);
        // a steady rate gives the same figure in every bin, whatever the
        // completions' phase against the bins
        let tl: Vec<(u64, u64)> = (1..100).map(|i| (777 + i * 1_500, 3_000)).collect();
        let s = Series::from_timeline(&tl, 777, 777 + 99 * 1_500, 2_000);
        assert!(
            s.bpc.iter().all(|&x| (x - 16.0).abs() < 1e-9),
            "{:?}",
            s.bpc
        );
        // bytes are conserved
        let tl = [(1_000, 100), (1_000, 50), (9_999, 7), (10_000, 1)];
        let s = Series::from_timeline(&tl, 0, 10_000, 1_000);
        let total: f64 = s.bpc.iter().map(|x| x * 1_000.0 / 8.0).sum();
        assert!((total - 158.0).abs() < 1e-9, "{total}");
    }

    #[test]
    fn deaths_follow_the_schedule() {
        assert_eq!(
            deaths(FLAP, 31_234, 291_234),
            vec![(50_000, 100_000), (150_000, 200_000), (250_000, 300_000)]
        );
        // a run starting while the path is down sees the next death only
        assert_eq!(deaths(FLAP, 60_000, 160_000), vec![(150_000, 200_000)]);
        assert_eq!(deaths(FLAP, 50_000, 50_001), vec![(50_000, 100_000)]);
        assert_eq!(deaths(FLAP, 0, 50_000), vec![]);
        let odd = Flap { up: 300, down: 100 };
        assert_eq!(deaths(odd, 0, 1_000), vec![(300, 400), (700, 800)]);
    }

    #[test]
    fn failover_is_found_when_goodput_comes_back() {
        // 10 up, death at 50,000, goodput 2 until 58,000, then 9.5 (>= 90 %)
        // but one bin at 62,000 dips: the recovery counts from 64,000
        let s = series(0, 2_000, 100, |t| match t {
            _ if t < 50_000 => 10.0,
            _ if t < 58_000 => 2.0,
            62_000 => 8.0,
            _ => 9.5,
        });
        let b = s.mean(0, 50_000).unwrap();
        assert_eq!(b, 10.0);
        assert_eq!(failover_time(&s, 50_000, 100_000, 150_000, b), Some(14_000));
        assert_eq!(last_dip(&s, 50_000, 100_000, b), Some(14_000));
        // without the dip: from 58,000
        let s2 = series(0, 2_000, 100, |t| {
            if (50_000..58_000).contains(&t) {
                2.0
            } else {
                10.0
            }
        });
        assert_eq!(
            failover_time(&s2, 50_000, 100_000, 150_000, 10.0),
            Some(8_000)
        );
        assert_eq!(last_dip(&s2, 50_000, 100_000, 10.0), Some(8_000));
        // no dip at all: 0
        let s3 = series(0, 2_000, 100, |_| 10.0);
        assert_eq!(failover_time(&s3, 50_000, 100_000, 150_000, 10.0), Some(0));
        assert_eq!(last_dip(&s3, 50_000, 100_000, 10.0), None);
        // recovery needs 3 whole bins before the limit
        assert_eq!(
            failover_time(&s2, 50_000, 100_000, 64_000, 10.0),
            Some(8_000)
        );
        assert_eq!(failover_time(&s2, 50_000, 100_000, 63_999, 10.0), None);
        // a dip that comes 3 bins after the death (the lost packets hold up
        // completions only later): the recovery after it counts
        let s4 = series(0, 2_000, 100, |t| {
            if (56_000..60_000).contains(&t) {
                3.0
            } else {
                10.0
            }
        });
        assert_eq!(
            failover_time(&s4, 50_000, 100_000, 150_000, 10.0),
            Some(10_000)
        );
        // a second dip later in the down period: the first recovery counts,
        // the last dip shows the second
        let s5 = series(0, 2_000, 100, |t| match t {
            56_000 | 58_000 | 80_000 => 3.0,
            _ => 10.0,
        });
        assert_eq!(
            failover_time(&s5, 50_000, 100_000, 150_000, 10.0),
            Some(10_000)
        );
        assert_eq!(last_dip(&s5, 50_000, 100_000, 10.0), Some(32_000));
        // a dip only after the comeback is not the death's
        let s6 = series(0, 2_000, 100, |t| if t == 120_000 { 3.0 } else { 10.0 });
        assert_eq!(failover_time(&s6, 50_000, 100_000, 150_000, 10.0), Some(0));
        assert_eq!(last_dip(&s6, 50_000, 100_000, 10.0), None);
    }

    #[test]
    fn failover_not_recovered_when_goodput_never_returns() {
        // the rate halves at the death and stays so
        let s = series(0, 2_000, 100, |t| if t < 50_000 { 10.0 } else { 5.0 });
        assert_eq!(failover_time(&s, 50_000, 100_000, 150_000, 10.0), None);
        assert_eq!(last_dip(&s, 50_000, 100_000, 10.0), Some(50_000));
        // 3 recovered bins, but not in a row
        let s = series(0, 2_000, 100, |t| match t {
            _ if t < 50_000 => 10.0,
            60_000 | 64_000 | 68_000 => 10.0,
            _ => 1.0,
        });
        assert_eq!(failover_time(&s, 50_000, 100_000, 150_000, 10.0), None);
        // recovered only after the limit (the next death)
        let s = series(0, 2_000, 100, |t| {
            if (50_000..150_000).contains(&t) {
                1.0
            } else {
                10.0
            }
        });
        assert_eq!(failover_time(&s, 50_000, 100_000, 150_000, 10.0), None);
        assert_eq!(
            failover_time(&s, 50_000, 100_000, 200_000, 10.0),
            Some(100_000)
        );
        // a dip at the very end of the run: not (yet) recovered
        let s = series(0, 2_000, 30, |t| if t >= 56_000 { 1.0 } else { 10.0 });
        assert_eq!(failover_time(&s, 50_000, 100_000, 60_000, 10.0), None);
    }

    #[test]
    fn counters_sampled_over_time() {
        let v = [(100, 1), (200, 1), (250, 3), (400, 4)];
        assert_eq!(value_at(&v, 50), 0);
        assert_eq!(value_at(&v, 100), 1);
        assert_eq!(value_at(&v, 249), 1);
        assert_eq!(value_at(&v, 1_000), 4);
        assert_eq!(first_rise_after(&v, 100, 1_000), Some(250));
        assert_eq!(first_rise_after(&v, 250, 1_000), Some(400));
        assert_eq!(first_rise_after(&v, 250, 400), None);
        assert_eq!(first_rise_after(&v, 400, 1_000), None);
    }

    #[test]
    fn analyse_a_synthetic_run() {
        // run 30,000..290,000; goodput 10, half while the path is down, back
        // 6,000 cycles after the first death, not back after the second
        let (from, to) = (30_000, 290_000);
        let s = series(30_000, 2_000, 130, |t| match t {
            _ if t < 50_000 => 10.0,
            _ if t < 56_000 => 5.0,
            _ if t < 150_000 => 10.0,
            _ => 5.0,
        });
        // deliveries on the path: up to the first death, then from 100,700
        let delivered = [(30_016, 1), (49_990, 100), (100_700, 101), (101_000, 150)];
        let down_dropped = [(50_016, 1), (99_000, 40), (150_100, 41), (190_000, 70)];
        let e = analyse(&s, FLAP, from, to, 10_000, &delivered, &down_dropped);
        assert_eq!(e.len(), 3);
        assert_eq!((e[0].death, e[0].comeback), (50_000, 100_000));
        assert_eq!(e[0].baseline_bpc, Some(10.0)); // 40,000..50,000
        assert_eq!(e[0].failover_cycles, Some(6_000));
        assert_eq!(e[0].last_dip_cycles, Some(6_000));
        assert!(e[0].complete);
        assert_eq!(e[0].frames_into_dead_path, 40);
        assert_eq!(e[0].return_cycles, Some(700));
        assert_eq!(e[0].return_bin_start, Some(100_000));
        let d = e[0].down_bpc.unwrap();
        assert!((d - (3.0 * 5.0 + 22.0 * 10.0) / 25.0).abs() < 1e-9, "{d}");
        assert_eq!(e[1].failover_cycles, None);
        assert_eq!(e[1].last_dip_cycles, Some(50_000));
        assert!(e[1].complete);
        assert_eq!(e[1].frames_into_dead_path, 30);
        assert_eq!(e[1].return_cycles, None);
        assert_eq!(e[1].baseline_bpc, Some(10.0));
        assert_eq!(e[2].death, 250_000);
        assert!(!e[2].complete);
        assert_eq!(e[2].baseline_bpc, Some(5.0));
        // a death within the warm-up has no baseline
        let e = analyse(&s, FLAP, 45_000, to, 10_000, &delivered, &down_dropped);
        assert_eq!(e[0].baseline_bpc, None);
        assert_eq!(e[0].failover_cycles, None);
    }
}
