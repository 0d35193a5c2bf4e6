//! `rnic bench qp-scale`: write throughput (4 KiB WRITEs) and message rate
//! (64 B WRITE_WITH_IMMs) against the number of active QPs, in simulated
//! cycles (deterministic for a seed), the curve on which NICs that cache
//! their QP contexts fall off a cliff (issue 19).

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use anyhow::{bail, Context, Result};
use clap::Args;
use rnic_device::Device;
use rnic_torture::qp_scale::{self, ScaleOpts};
use serde::Serialize;

use crate::bench_rdma::pair_with;
use crate::devices::{self, DeviceArgs};
use rnic_sim::RootComplexConfig;

/// The sweep's default: 1 to 65,536 active QPs in powers of 4.
const DEFAULT_ACTIVE: [u32; 9] = [1, 4, 16, 64, 256, 1024, 4096, 16384, 65536];

#[derive(Args)]
pub struct QpScaleArgs {
    #[command(flatten)]
    pub dev: DeviceArgs,
    /// Active QP counts, one pair of runs each (default: 1 to 65,536 in
    /// powers of 4, as far as the NIC holds QPs; counts given here must
    /// all fit).
    #[arg(long, value_delimiter = ',')]
    pub active: Option<Vec<u32>>,
    /// Size of the throughput run's RDMA WRITEs in bytes.
    #[arg(long, default_value_t = 4096)]
    pub bw_size: u32,
    /// Size of the message-rate run's WRITE_WITH_IMMs in bytes.
    #[arg(long, default_value_t = 64)]
    pub rate_size: u32,
    /// Fewest messages per run.
    #[arg(long, default_value_t = 512)]
    pub messages: u64,
    /// Fewest messages per active QP per run.
    #[arg(long, default_value_t = 2)]
    pub per_qp: u64,
    /// Messages in flight per QP (perftest's --tx-depth).
    #[arg(long, default_value_t = 16)]
    pub window: u32,
    /// Path MTU in bytes (256..4096).
    #[arg(long, default_value_t = 4096)]
    pub mtu: u32,
    /// Fabric profile.
    #[arg(long, default_value = "ideal")]
    pub fabric: String,
    /// Transport: rc or mp (multipath).
    #[arg(long, default_value = "rc", value_parser = ["rc", "mp"])]
    pub transport: String,
    /// Source ports (paths) each requester sprays over: 1..64, a power of two.
    #[arg(long, default_value_t = 1, value_parser = crate::torture::spray_parser)]
    pub paths: u32,
    /// Cycles from a DMA read request to its first completion in the
    /// simulated host (the benches' host: 100). Each message's fetches
    /// (WQE, receive WQE, and later the QP context) wait this long.
    #[arg(long, default_value_t = 100)]
    pub read_latency: u64,
    /// Put the QPs in host memory behind the NIC's context cache: each
    /// NIC opens a context table of this many records (QP numbers below
    /// it; at most 65,536) and caches QPs in its slots (issue 19). 0: every
    /// QP in a slot of its own, as many as the NIC has.
    #[arg(long, default_value_t = 0)]
    pub qp_cache: u32,
    /// One JSON object per row.
    #[arg(long)]
    pub json: bool,
    /// Write an SVG plot of both curves (Gb/s and million messages per
    /// second against active QPs) to this file.
    #[arg(long)]
    pub plot: Option<PathBuf>,
}

#[derive(Serialize, Clone)]
struct ScaleRow {
    test: &'static str,
    transport: &'static str,
    fabric: String,
    data_w: u32,
    mtu: u32,
    active_qps: u32,
    /// "write" or "write_imm".
    op: &'static str,
    msg_size: u32,
    window: u32,
    read_latency: u64,
    messages: u64,
    bytes: u64,
    cycles: u64,
    setup_cycles: u64,
    clock_mhz: f64,
    gbps: f64,
    mpps: f64,
    /// Context-cache hits over lookups; null when every QP's context is on
    /// chip (no cache).
    hit_rate: Option<f64>,
    /// Lookups that missed, fetches misses started (retries included),
    /// evictions, fetches that found every slot pinned and the doorbell
    /// table's high-water mark over the run, both NICs (None: no cache).
    lookup_misses: Option<u32>,
    fetch_misses: Option<u32>,
    evictions: Option<u32>,
    pinned_full: Option<u32>,
    db_waiting_max: Option<u8>,
    /// QPs the NIC holds on chip (`id.num_queues`).
    qps_on_chip: u32,
    /// This row's figure over the 1-QP row's of the same size (Gb/s for
    /// the throughput run, messages per second for the rate run).
    of_one_qp: Option<f64>,
    sim_cycles_per_sec: f64,
}

pub fn qp_scale(a: &QpScaleArgs) -> Result<ExitCode> {
    let mtu = rnic_harness::mtu_from_bytes(a.mtu)?;
    if a.bw_size == 0 || a.rate_size == 0 || a.bw_size > 1 << 20 || a.rate_size > 1 << 20 {
        bail!("--bw-size and --rate-size must be 1 B .. 1 MiB");
    }
    if a.read_latency == 0 || a.read_latency > 100_000 {
        bail!("--read-latency must be 1..=100000 cycles");
    }
    if a.window == 0 || a.window > 1024 || a.messages == 0 || a.per_qp == 0 {
        bail!("--window must be 1..=1024, --messages and --per-qp at least 1");
    }
    if let Some(v) = &a.active {
        if v.is_empty() || v.contains(&0) {
            bail!("--active needs counts of at least 1");
        }
    }
    devices::require_sim(&a.dev)?;
    rnic_torture::sim::fabric(&a.fabric)?;
    // what the model holds, before any long run
    let on_chip = {
        let p = pair_with(&a.dev, &a.fabric, 16, host(a))?;
        p.a.query_device()?.max_qp
    };
    // with the cache, QPs up to the table's capacity
    let on_chip = if a.qp_cache > 0 {
        let p = pair_with(&a.dev, &a.fabric, 16, host(a))?;
        p.a.enable_qp_cache(a.qp_cache)
            .context("--qp-cache: the NIC model's context cache")?;
        p.a.query_device()?.max_qp
    } else {
        on_chip
    };
    let active: Vec<u32> = match &a.active {
        Some(v) => {
            if let Some(&n) = v.iter().find(|&&n| n > on_chip) {
                bail!(
                    "--active {n}: this NIC model holds {on_chip} QPs{}",
                    more_qps_hint(a, on_chip)
                );
            }
            v.clone()
        }
        None => {
            let (fit, skip): (Vec<u32>, Vec<u32>) =
                DEFAULT_ACTIVE.iter().partition(|&&n| n <= on_chip);
            if !skip.is_empty() {
                eprintln!(
                    "qp-scale: skipping {skip:?} active QPs: this NIC model holds {on_chip} QPs{}",
                    more_qps_hint(a, on_chip)
                );
            }
            fit
        }
    };
    let transport: &'static str = if a.transport == "mp" { "mp" } else { "rc" };
    if !a.json {
        println!(
            "{:>7} {:>9} {:>6} {:>7} {:>10} {:>8} {:>8} {:>7} {:>8} {:>9} {:>10}",
            "active",
            "op",
            "size",
            "msgs",
            "cycles",
            "Gb/s",
            "Mmsg/s",
            "hit",
            "of 1 QP",
            "setup cyc",
            "sim cyc/s"
        );
    }
    let mut rows: Vec<ScaleRow> = Vec::new();
    for &n in &active {
        for (op, size, imm) in [
            ("write", a.bw_size, false),
            ("write_imm", a.rate_size, true),
        ] {
            let p = pair_with(&a.dev, &a.fabric, 16, host(a))?;
            let messages = a.messages.max(a.per_qp * u64::from(n));
            let wall = Instant::now();
            let r = qp_scale::run(
                &p.a,
                p.addrs[0],
                &p.b,
                p.addrs[1],
                &ScaleOpts {
                    active: n,
                    msg_size: size,
                    imm,
                    messages,
                    window: a.window,
                    mtu,
                    qp_type: if transport == "mp" {
                        rnic_verbs::QpType::Mp
                    } else {
                        rnic_verbs::QpType::Rc
                    },
                    spray_log: a.paths.trailing_zeros() as u8,
                    watchdog: 5_000_000,
                    cache_records: a.qp_cache,
                },
            )
            .with_context(|| {
                format!(
                    "qp-scale: {n} active QPs, {op} of {size} B (reproduce: {})",
                    repro(a, n)
                )
            })?;
            let secs = wall.elapsed().as_secs_f64();
            let clock = p.a.device().clock_mhz();
            let gbps = r.bytes as f64 * 8.0 / r.cycles as f64 * clock / 1000.0;
            let mpps = r.messages as f64 / r.cycles as f64 * clock;
            let base = rows
                .iter()
                .find(|b| b.active_qps == 1 && b.op == op && b.msg_size == size)
                .map(|b| b.mpps);
            let row = ScaleRow {
                test: "qp-scale",
                transport,
                fabric: a.fabric.clone(),
                data_w: a.dev.data_w,
                mtu: a.mtu,
                active_qps: n,
                op,
                msg_size: size,
                window: r.window,
                read_latency: a.read_latency,
                messages: r.messages,
                bytes: r.bytes,
                cycles: r.cycles,
                setup_cycles: r.setup_cycles,
                clock_mhz: clock,
                gbps,
                mpps,
                hit_rate: r.hit_rate,
                lookup_misses: r.cache.map(|c| c.lookup_misses),
                fetch_misses: r.cache.map(|c| c.fetch_misses),
                evictions: r.cache.map(|c| c.evictions),
                pinned_full: r.cache.map(|c| c.pinned_full),
                db_waiting_max: r.cache.map(|c| c.db_waiting_max),
                qps_on_chip: on_chip,
                of_one_qp: if n == 1 {
                    Some(1.0)
                } else {
                    base.map(|b| mpps / b)
                },
                sim_cycles_per_sec: (r.cycles + r.setup_cycles) as f64 / secs.max(1e-9),
            };
            if a.json {
                println!("{}", serde_json::to_string(&row)?);
            } else {
                println!(
                    "{:>7} {:>9} {:>6} {:>7} {:>10} {:>8.2} {:>8.3} {:>7} {:>8} {:>9} {:>10.0}",
                    row.active_qps,
                    row.op,
                    row.msg_size,
                    row.messages,
                    row.cycles,
                    row.gbps,
                    row.mpps,
                    row.hit_rate
                        .map(|h| format!("{:.1}%", h * 100.0))
                        .unwrap_or_else(|| "-".into()),
                    row.of_one_qp
                        .map(|r| format!("{:.1}%", r * 100.0))
                        .unwrap_or_else(|| "-".into()),
                    row.setup_cycles,
                    row.sim_cycles_per_sec
                );
            }
            rows.push(row);
        }
    }
    if !a.json {
        println!(
            "({transport}, fabric {}, DATA_W={}, PMTU {} B, {} in flight per QP, host read latency {} cycles, every message signaled; hit: context-cache hit rate, '-' = no cache, every QP on chip ({on_chip}); of 1 QP: against the 1-QP row of the same run kind; reproduce: {})",
            a.fabric,
            a.dev.data_w,
            a.mtu,
            a.window,
            a.read_latency,
            repro(a, 0)
        );
    }
    if let Some(path) = &a.plot {
        plot(path, &rows, a, on_chip)?;
        if !a.json {
            println!("plot: {}", path.display());
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn host(a: &QpScaleArgs) -> RootComplexConfig {
    RootComplexConfig {
        read_latency: a.read_latency,
        // An MMIO read waits behind the writes posted before it, and with
        // the QPs in host memory a doorbell may wait for its QP's fetch:
        // thousands of doorbells for QPs off chip take millions of cycles.
        // 12.5 M cycles is 50 ms at 250 MHz, the top of PCIe's default
        // completion-timeout range.
        mmio_timeout: 12_500_000,
        ..RootComplexConfig::bench()
    }
}

fn more_qps_hint(a: &QpScaleArgs, on_chip: u32) -> &'static str {
    if a.qp_cache > 0 {
        " (the QP numbers below --qp-cache, and below 2^16)"
    } else if on_chip < 1024 && a.dev.sim_model != devices::SimModel::ManyQps {
        ", all on chip (--qp-cache puts them in host memory behind the NIC's context cache; --sim-model many-qps holds 1,024 on chip)"
    } else {
        ", all on chip (--qp-cache puts them in host memory behind the NIC's context cache)"
    }
}

/// The command that repeats the sweep (`n` > 0: only that count).
fn repro(a: &QpScaleArgs, n: u32) -> String {
    let active = if n > 0 {
        format!(" --active {n}")
    } else {
        a.active
            .as_ref()
            .map(|v| {
                format!(
                    " --active {}",
                    v.iter().map(u32::to_string).collect::<Vec<_>>().join(",")
                )
            })
            .unwrap_or_default()
    };
    format!(
        "rnic bench qp-scale --seed {} --data-w {}{} --transport {} --paths {} --fabric {} --mtu {} --window {} --messages {} --per-qp {} --bw-size {} --rate-size {} --read-latency {}{}{active}",
        a.dev.seed,
        a.dev.data_w,
        a.dev.sim_model_flag(),
        a.transport,
        a.paths,
        a.fabric,
        a.mtu,
        a.window,
        a.messages,
        a.per_qp,
        a.bw_size,
        a.rate_size,
        a.read_latency,
        if a.qp_cache > 0 {
            format!(" --qp-cache {}", a.qp_cache)
        } else {
            String::new()
        }
    )
}

fn plot(path: &Path, rows: &[ScaleRow], a: &QpScaleArgs, on_chip: u32) -> Result<()> {
    use plotters::prelude::*;
    let e = |e: &dyn std::fmt::Display| anyhow::anyhow!("plot {}: {e}", path.display());
    let root = SVGBackend::new(path, (1000, 450)).into_drawing_area();
    root.fill(&WHITE).map_err(|x| e(&x))?;
    let (left, right) = root.split_horizontally(500);
    let xmax = rows
        .iter()
        .map(|r| f64::from(r.active_qps))
        .fold(4.0, f64::max)
        * 1.5;
    for (area, op, what, pick) in [
        (
            &left,
            "write",
            format!("{} B WRITE throughput (Gb/s)", a.bw_size),
            (|r: &ScaleRow| r.gbps) as fn(&ScaleRow) -> f64,
        ),
        (
            &right,
            "write_imm",
            format!("{} B WRITE_WITH_IMM rate (M msg/s)", a.rate_size),
            (|r: &ScaleRow| r.mpps) as fn(&ScaleRow) -> f64,
        ),
    ] {
        let pts: Vec<(f64, f64)> = rows
            .iter()
            .filter(|r| r.op == op)
            .map(|r| (f64::from(r.active_qps), pick(r)))
            .collect();
        let ymax = pts.iter().map(|p| p.1).fold(0.0, f64::max) * 1.15;
        let mut chart = ChartBuilder::on(area)
            .caption(
                format!("rnic {}: {what}, {} QPs on chip", a.transport, on_chip),
                ("sans-serif", 15),
            )
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(55)
            .build_cartesian_2d((0.7..xmax).log_scale(), 0.0..ymax.max(0.001))
            .map_err(|x| e(&x))?;
        chart
            .configure_mesh()
            .x_desc("active QPs")
            .y_desc(what.clone())
            .draw()
            .map_err(|x| e(&x))?;
        chart
            .draw_series(LineSeries::new(pts.clone(), BLUE.stroke_width(2)))
            .map_err(|x| e(&x))?;
        chart
            .draw_series(pts.iter().map(|&p| Circle::new(p, 3, BLUE.filled())))
            .map_err(|x| e(&x))?;
    }
    root.present().map_err(|x| e(&x))?;
    Ok(())
}
