//! `rnic bench write-bw|write-lat|read-bw|read-lat`: perftest-style
//! (`ib_write_bw`, `ib_write_lat`, `ib_read_bw`, `ib_read_lat`)
//! measurements between two simulated NICs,
//! in simulated cycles (deterministic for a seed), with Gb/s at the
//! simulated clock and the simulator's own speed.

use std::process::ExitCode;
use std::time::Instant;

use anyhow::{bail, Context, Result};
use clap::Args;
use rnic_device::Device;
use rnic_sim::RootComplexConfig;
use rnic_torture::perf::{self, BwOpts, LatOpts, Op};
use rnic_torture::sim::{self, SimOpts, SimPair};
use serde::Serialize;

use crate::devices::{self, DeviceArgs};

#[derive(Args)]
pub struct WriteBwArgs {
    #[command(flatten)]
    pub dev: DeviceArgs,
    /// Message sizes in bytes.
    #[arg(long, value_delimiter = ',', default_values_t = vec![64u32, 256, 1024, 4096, 16384, 65536, 262144, 1048576])]
    pub sizes: Vec<u32>,
    /// Bytes to move per size (at least --min-iters messages).
    #[arg(long, default_value_t = 2 << 20)]
    pub bytes: u64,
    /// Fewest messages per size.
    #[arg(long, default_value_t = 32)]
    pub min_iters: u64,
    /// Queue pairs.
    #[arg(long, default_value_t = 1)]
    pub qps: u32,
    /// WRITEs in flight per QP (perftest's --tx-depth).
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
    /// One JSON object per row.
    #[arg(long)]
    pub json: bool,
}

#[derive(Args)]
pub struct WriteLatArgs {
    #[command(flatten)]
    pub dev: DeviceArgs,
    /// Message sizes in bytes.
    #[arg(long, value_delimiter = ',', default_values_t = vec![64u32, 1024, 4096])]
    pub sizes: Vec<u32>,
    /// Iterations per size.
    #[arg(long, default_value_t = 200)]
    pub iters: u32,
    /// Path MTU in bytes (256..4096).
    #[arg(long, default_value_t = 4096)]
    pub mtu: u32,
    /// Fabric profile.
    #[arg(long, default_value = "ideal")]
    pub fabric: String,
    /// One JSON object per row.
    #[arg(long)]
    pub json: bool,
}

#[derive(Args)]
pub struct AtomicRateArgs {
    #[command(flatten)]
    pub dev: DeviceArgs,
    /// QP counts to measure (each a run of its own).
    #[arg(long, value_delimiter = ',', default_values_t = vec![1u32, 16])]
    pub qps: Vec<u32>,
    /// Atomics per run, spread over the QPs.
    #[arg(long, default_value_t = 2000)]
    pub ops: u64,
    /// Atomics in flight per QP (perftest's --tx-depth).
    #[arg(long, default_value_t = 16)]
    pub window: u32,
    /// Fabric profile.
    #[arg(long, default_value = "ideal")]
    pub fabric: String,
    /// One JSON object per row.
    #[arg(long)]
    pub json: bool,
}

#[derive(Serialize)]
struct AtomicRow {
    test: &'static str,
    fabric: String,
    data_w: u32,
    qps: u32,
    window: u32,
    ops: u64,
    cycles: u64,
    clock_mhz: f64,
    mops: f64,
    ops_per_kcycle: f64,
    sim_cycles_per_sec: f64,
}

/// `rnic bench atomic-rate` (`ib_atomic_bw`): NIC 0 posts fetch-and-add
/// on the first 8 bytes of a buffer of NIC 1's per QP, as fast as the
/// window lets it; atomic operations per second at the simulated clock.
pub fn atomic_rate(a: &AtomicRateArgs) -> Result<ExitCode> {
    if a.qps.is_empty() || a.qps.contains(&0) || a.window == 0 || a.window > 4096 || a.ops == 0 {
        bail!("--qps must name counts of at least 1, --window 1..=4096, --ops at least 1");
    }
    devices::require_sim(&a.dev)?;
    sim::fabric(&a.fabric)?;
    if !a.json {
        println!(
            "{:>5} {:>7} {:>10} {:>9} {:>12} {:>11}",
            "QPs", "ops", "cycles", "Mops/s", "ops/kcycle", "sim cyc/s"
        );
    }
    let mut clock = 0.0;
    for &qps in &a.qps {
        let p = pair(&a.dev, &a.fabric, 16)?;
        let wall = Instant::now();
        let r = perf::write_bw(
            &p.a,
            p.addrs[0],
            &p.b,
            p.addrs[1],
            &BwOpts {
                msg_size: 8,
                messages: a.ops,
                qps,
                window: a.window,
                mtu: rnic_verbs::Mtu::Mtu1024,
                watchdog: 5_000_000,
                op: Op::FetchAdd,
                ..BwOpts::default()
            },
        )
        .with_context(|| format!("atomic_rate with {qps} QP(s)"))?;
        let secs = wall.elapsed().as_secs_f64();
        clock = p.a.device().clock_mhz();
        let per_cycle = r.messages as f64 / r.cycles as f64;
        let row = AtomicRow {
            test: "atomic_rate",
            fabric: a.fabric.clone(),
            data_w: a.dev.data_w,
            qps,
            window: a.window,
            ops: r.messages,
            cycles: r.cycles,
            clock_mhz: clock,
            mops: per_cycle * clock,
            ops_per_kcycle: per_cycle * 1000.0,
            sim_cycles_per_sec: r.cycles as f64 / secs.max(1e-9),
        };
        if a.json {
            println!("{}", serde_json::to_string(&row)?);
        } else {
            println!(
                "{:>5} {:>7} {:>10} {:>9.3} {:>12.2} {:>11.0}",
                row.qps, row.ops, row.cycles, row.mops, row.ops_per_kcycle, row.sim_cycles_per_sec
            );
        }
    }
    if !a.json {
        println!(
            "(DATA_W={}, clock {clock} MHz, FETCH_AND_ADD of 8 bytes, {} in flight per QP, fabric {}; the NIC holds 4 READs or atomics in flight and executes one atomic at a time as a responder)",
            a.dev.data_w, a.window, a.fabric
        );
    }
    Ok(ExitCode::SUCCESS)
}

#[derive(Serialize)]
struct BwRow {
    test: &'static str,
    transport: &'static str,
    fabric: String,
    data_w: u32,
    mtu: u32,
    msg_size: u32,
    qps: u32,
    window: u32,
    messages: u64,
    bytes: u64,
    cycles: u64,
    clock_mhz: f64,
    gbps: f64,
    bits_per_cycle: f64,
    /// Payload bits / (DATA_W x cycles).
    efficiency: f64,
    /// The most the framing allows: payload bits over the DATA_W beats of
    /// the frames (no inter-frame gap in the simulated MAC).
    wire_max_efficiency: f64,
    /// `efficiency / wire_max_efficiency`.
    of_wire_max: f64,
    /// Frames and bytes the NIC that sends the data sent (as its MAC
    /// counted them): NIC 0 for WRITEs, NIC 1 for READs.
    wire_frames: u64,
    wire_bytes: u64,
    sim_cycles_per_sec: f64,
}

#[derive(Serialize)]
struct LatRow {
    test: &'static str,
    transport: &'static str,
    fabric: String,
    data_w: u32,
    mtu: u32,
    msg_size: u32,
    iterations: u32,
    bytes: u64,
    cycles: u64,
    clock_mhz: f64,
    gbps: f64,
    lat_min_cycles: u64,
    lat_median_cycles: u64,
    lat_max_cycles: u64,
    lat_mean_cycles: f64,
    lat_median_ns: f64,
    sim_cycles_per_sec: f64,
}

/// The WRITE load of the goodput and failover benches: QPs, each with
/// WRITEs of one size in flight.
#[derive(Args, Clone, Copy)]
pub struct WriteLoad {
    /// WRITE size in bytes.
    #[arg(long, default_value_t = 16384)]
    pub size: u32,
    /// Queue pairs.
    #[arg(long, default_value_t = 4)]
    pub qps: u32,
    /// WRITEs in flight per QP.
    #[arg(long, default_value_t = 8)]
    pub window: u32,
    /// Path MTU in bytes (256..4096).
    #[arg(long, default_value_t = 1024)]
    pub mtu: u32,
}

#[derive(Args)]
pub struct GoodputArgs {
    #[command(flatten)]
    pub dev: DeviceArgs,
    /// Runs, each `FABRIC` or `FABRIC/PORTS` (the requesters spray over
    /// PORTS UDP source ports); the first is the reference.
    #[arg(long, value_delimiter = ',', default_values_t = ["ideal".to_string(), "lossy".into(), "reorder".into(), "hostile".into(), "spray-8".into(), "spray-8/8".into()])]
    pub runs: Vec<String>,
    /// Transports to run each fabric with: rc, mp (each against its own
    /// first run).
    #[arg(long, value_delimiter = ',', default_value = "rc")]
    pub transport: Vec<String>,
    #[command(flatten)]
    pub load: WriteLoad,
    #[command(flatten)]
    pub health: crate::torture::PathHealthArgs,
    /// Bytes to move per run.
    #[arg(long, default_value_t = 4 << 20)]
    pub bytes: u64,
    /// One JSON object per row.
    #[arg(long)]
    pub json: bool,
    /// Sweep loss rates instead of --runs: for each K of --sweep-paths and
    /// each rate, the fabric spray-K-lossRATE (K paths, delays skewed 4x)
    /// with the requesters spraying over K ports.
    #[arg(long, value_delimiter = ',')]
    pub sweep_loss: Vec<f64>,
    /// Path counts of the sweep.
    #[arg(long, value_delimiter = ',', default_value = "8")]
    pub sweep_paths: Vec<u32>,
    /// Write a plot of the sweep's goodput (Gb/s against loss rate, one line
    /// per transport and path count) here, as SVG.
    #[arg(long)]
    pub plot: Option<std::path::PathBuf>,
}

#[derive(Serialize, Clone)]
struct GoodputRow {
    test: &'static str,
    transport: &'static str,
    fabric: String,
    spray_ports: u32,
    data_w: u32,
    mtu: u32,
    msg_size: u32,
    qps: u32,
    window: u32,
    bytes: u64,
    cycles: u64,
    clock_mhz: f64,
    gbps: f64,
    /// Goodput over the first run's.
    of_reference: f64,
    wire_frames: u64,
    retransmits: u64,
    timeouts: u64,
    naks_seq: u64,
    fabric_dropped: u64,
    /// Request packets with payload the fabric lost (dropped, corrupted,
    /// bad) whose data was not yet at the responder nor on its way: see
    /// `rnic_sim::holes`.
    holes: u64,
    /// Of `holes`: repaired (a copy of the same QP and PSN delivered
    /// intact), and never repaired by the end of the run.
    holes_repaired: u64,
    holes_open: u64,
    /// Lost copies of a PSN whose hole was open (lost resends).
    hole_relosses: u64,
    /// Lost request copies whose data had already arrived or was on its
    /// way intact (no hole).
    redundant_losses: u64,
    /// Cycles from a hole's first loss to the delivery of its repair: mean,
    /// 50th and 99th percentile (nearest rank), max.
    repair_cycles_mean: f64,
    repair_cycles_p50: u64,
    repair_cycles_p99: u64,
    repair_cycles_max: u64,
    /// The fabric's base round trip: mean over the paths of 2 x delay +
    /// jitter + serialization of the largest request frame.
    base_rtt_cycles: u64,
    /// `repair_cycles_mean` in base round trips.
    repair_rtts_mean: f64,
    /// Frames the NICs' MACs dropped on a full RX queue (losses the
    /// fabric's hole count does not see).
    rx_overflow_drops: u64,
}

/// `rnic bench goodput`: the same WRITE workload under each run's fabric,
/// goodput (payload bits per cycle delivered and acknowledged) against the
/// first run's.
pub fn goodput(a: &GoodputArgs) -> Result<ExitCode> {
    check_sizes(&[a.load.size])?;
    let mtu = rnic_harness::mtu_from_bytes(a.load.mtu)?;
    if a.load.qps == 0 || a.load.window == 0 || a.runs.is_empty() {
        bail!("--qps, --window and --runs must not be empty or zero");
    }
    devices::require_sim(&a.dev)?;
    let mut transports = Vec::new();
    for t in &a.transport {
        transports.push(match t.as_str() {
            "rc" => ("rc", rnic_verbs::QpType::Rc),
            "mp" => ("mp", rnic_verbs::QpType::Mp),
            _ => bail!("--transport {t:?}: rc or mp"),
        });
    }
    let mut runs = Vec::new();
    if a.plot.is_some() && a.sweep_loss.is_empty() {
        bail!("--plot needs --sweep-loss");
    }
    for &k in &a.sweep_paths {
        for &loss in &a.sweep_loss {
            if !(0.0..=1.0).contains(&loss) {
                bail!("--sweep-loss {loss}: a rate in 0..=1");
            }
            crate::torture::spray_parser(&k.to_string()).map_err(anyhow::Error::msg)?;
            runs.push((format!("spray-{k}-loss{loss}"), k, Some(loss)));
        }
    }
    for r in a.runs.iter().filter(|_| a.sweep_loss.is_empty()) {
        let (fabric, ports) = match r.split_once('/') {
            Some((f, k)) => (
                f,
                crate::torture::spray_parser(k).map_err(anyhow::Error::msg)?,
            ),
            None => (r.as_str(), 1),
        };
        sim::fabric(fabric)?;
        runs.push((fabric.to_string(), ports, None));
    }
    if !a.json {
        println!(
            "{:>5} {:>10} {:>6} {:>10} {:>8} {:>9} {:>8} {:>8} {:>8} {:>8} {:>6} {:>8} {:>8} {:>8} {:>7}",
            "trans",
            "fabric",
            "ports",
            "cycles",
            "Gb/s",
            "vs first",
            "frames",
            "resent",
            "timeouts",
            "dropped",
            "holes",
            "repaired",
            "rep cyc",
            "rep p99",
            "rep RTT"
        );
    }
    let mut reference = std::collections::HashMap::new();
    let mut rows = Vec::new();
    for ((fabric, ports, loss), (tname, qp_type)) in runs
        .iter()
        .flat_map(|r| transports.iter().map(move |t| (r.clone(), *t)))
    {
        let p = pair(&a.dev, &fabric, 16)?;
        p.world.track_holes(true);
        let mac0 = p.world.mac_stats(0);
        let r = perf::write_bw(
            &p.a,
            p.addrs[0],
            &p.b,
            p.addrs[1],
            &BwOpts {
                msg_size: a.load.size,
                messages: (a.bytes / u64::from(a.load.size)).max(1),
                qps: a.load.qps,
                window: a.load.window,
                mtu,
                watchdog: 20_000_000,
                spray_log: ports.trailing_zeros() as u8,
                path_thresh: a.health.path_thresh,
                qp_type,
                ..BwOpts::default()
            },
        )
        .with_context(|| format!("write_bw over {fabric}"))?;
        let mac1 = p.world.mac_stats(0);
        let c = p.a.query_port_counters()?;
        let clock = p.a.device().clock_mhz();
        let bpc = r.bytes as f64 * 8.0 / r.cycles as f64;
        let reference_bpc = *reference.entry(tname).or_insert(bpc);
        let fs = p.world.fabric_stats();
        let h = &fs.holes;
        let row = GoodputRow {
            test: "goodput",
            transport: tname,
            fabric: fabric.clone(),
            spray_ports: ports,
            data_w: a.dev.data_w,
            mtu: a.load.mtu,
            msg_size: a.load.size,
            qps: a.load.qps,
            window: a.load.window,
            bytes: r.bytes,
            cycles: r.cycles,
            clock_mhz: clock,
            gbps: bpc * clock / 1000.0,
            of_reference: bpc / reference_bpc,
            wire_frames: mac1.tx_frames - mac0.tx_frames,
            retransmits: u64::from(c.tx_retransmits),
            timeouts: u64::from(c.rtx_timeouts),
            naks_seq: u64::from(c.rx_nak_seq),
            fabric_dropped: fs.total.dropped,
            holes: h.holes,
            holes_repaired: h.holes_repaired,
            holes_open: h.holes_open,
            hole_relosses: h.relosses,
            redundant_losses: h.redundant_losses,
            repair_cycles_mean: h.repair_cycles_mean(),
            repair_cycles_p50: h.repair_cycles_p50,
            repair_cycles_p99: h.repair_cycles_p99,
            repair_cycles_max: h.repair_cycles_max,
            base_rtt_cycles: h.base_rtt_cycles,
            repair_rtts_mean: h.repair_rtts_mean(),
            rx_overflow_drops: p.world.mac_stats(0).rx_overflow_drops
                + p.world.mac_stats(1).rx_overflow_drops,
        };
        if a.json {
            println!("{}", serde_json::to_string(&row)?);
        } else {
            println!(
                "{:>5} {:>10} {:>6} {:>10} {:>8.2} {:>8.1}% {:>8} {:>8} {:>8} {:>8} {:>6} {:>8} {:>8.0} {:>8} {:>7.2}",
                row.transport,
                row.fabric,
                row.spray_ports,
                row.cycles,
                row.gbps,
                row.of_reference * 100.0,
                row.wire_frames,
                row.retransmits,
                row.timeouts,
                row.fabric_dropped,
                row.holes,
                row.holes_repaired,
                row.repair_cycles_mean,
                row.repair_cycles_p99,
                row.repair_rtts_mean
            );
        }
        rows.push((row, loss));
    }
    if let Some(path) = &a.plot {
        plot_goodput(path, &rows, a)?;
        if !a.json {
            println!("plot: {}", path.display());
        }
    }
    if !a.json {
        println!(
            "({} QPs x {} WRITEs of {} B in flight, PMTU {} B, DATA_W={}, seed {}; goodput = acknowledged payload bits per cycle; ports > 1: each requester sprays its packets over that many UDP source ports; holes = request packets the fabric lost, repaired = of them delivered again intact, rep cyc / rep p99 = cycles from a hole's first loss to its repair, mean and 99th percentile, rep RTT = the mean in the fabric's base round trips, 2 x path delay + serialization of a full frame averaged over the paths)",
            a.load.qps, a.load.window, a.load.size, a.load.mtu, a.dev.data_w, a.dev.seed
        );
    }
    Ok(ExitCode::SUCCESS)
}

pub(crate) fn pair(dev: &DeviceArgs, fabric: &str, idle_cycles: u64) -> Result<SimPair> {
    pair_with(dev, fabric, idle_cycles, RootComplexConfig::bench())
}

/// [`pair`] with another host model than the benches' quiet one.
pub(crate) fn pair_with(
    dev: &DeviceArgs,
    fabric: &str,
    idle_cycles: u64,
    root_complex: RootComplexConfig,
) -> Result<SimPair> {
    devices::require_sim(dev)?;
    sim::fabric(fabric)?;
    sim::pair(&SimOpts {
        data_w: dev.data_w,
        knobs: dev.sim_model.into(),
        seed: dev.seed,
        fabric: fabric.to_string(),
        root_complex,
        pcap_window: 0,
        idle_cycles,
        parallel: dev.sim_threads.into(),
        debug_switches: Vec::new(),
    })
    .context("starting the simulated NIC pair")
}

fn check_sizes(sizes: &[u32]) -> Result<()> {
    if sizes.is_empty() || sizes.contains(&0) {
        bail!("--sizes needs positive sizes");
    }
    if sizes.iter().any(|&s| s > 64 << 20) {
        bail!("--sizes: at most 64 MiB");
    }
    Ok(())
}

/// `rnic bench write-bw` (`Op::Write`) or `read-bw` (`Op::Read`: NIC 0
/// reads NIC 1's buffers; rc only).
pub fn bw(a: &WriteBwArgs, op: Op) -> Result<ExitCode> {
    check_sizes(&a.sizes)?;
    if op == Op::FetchAdd {
        bail!("atomics are measured by `rnic bench atomic-rate`");
    }
    if op == Op::Read && a.transport != "rc" {
        bail!("read-bw: RDMA READ is carried by rc only (mp carries WRITE and WRITE_WITH_IMM)");
    }
    let mtu = rnic_harness::mtu_from_bytes(a.mtu)?;
    if a.qps == 0 || a.window == 0 || a.window > 4096 {
        bail!("--qps must be at least 1 and --window 1..=4096");
    }
    devices::require_sim(&a.dev)?;
    sim::fabric(&a.fabric)?;
    if !a.json {
        println!(
            "{:>9} {:>6} {:>11} {:>10} {:>8} {:>7} {:>8} {:>8} {:>8} {:>11}",
            "size",
            "msgs",
            "bytes",
            "cycles",
            "Gb/s",
            "b/cyc",
            "eff",
            "wire max",
            "of max",
            "sim cyc/s"
        );
    }
    let mut clock = 0.0;
    for &size in &a.sizes {
        let p = pair(&a.dev, &a.fabric, 16)?;
        let messages = (a.bytes / u64::from(size)).max(a.min_iters);
        // the NIC that sends the data: NIC 0 a WRITE's, NIC 1 a READ's
        let data_nic = usize::from(op == Op::Read);
        let mac0 = p.world.mac_stats(data_nic);
        let wall = Instant::now();
        let r = perf::write_bw(
            &p.a,
            p.addrs[0],
            &p.b,
            p.addrs[1],
            &BwOpts {
                msg_size: size,
                messages,
                qps: a.qps,
                window: a.window,
                mtu,
                watchdog: 5_000_000,
                spray_log: a.paths.trailing_zeros() as u8,
                qp_type: if a.transport == "mp" {
                    rnic_verbs::QpType::Mp
                } else {
                    rnic_verbs::QpType::Rc
                },
                op,
                ..BwOpts::default()
            },
        )
        .with_context(|| format!("{} of {size} B", bw_name(op)))?;
        let secs = wall.elapsed().as_secs_f64();
        let mac1 = p.world.mac_stats(data_nic);
        clock = p.a.device().clock_mhz();
        let bpc = r.bytes as f64 * 8.0 / r.cycles as f64;
        let eff = bpc / f64::from(a.dev.data_w);
        let (wmax, _) = match op {
            Op::Write => {
                perf::wire_efficiency(u64::from(size), a.mtu, a.dev.data_w, 0, a.transport == "mp")
            }
            Op::Read | Op::FetchAdd => {
                perf::read_wire_efficiency(u64::from(size), a.mtu, a.dev.data_w)
            }
        };
        let row = BwRow {
            test: bw_name(op),
            transport: if a.transport == "mp" { "mp" } else { "rc" },
            fabric: a.fabric.clone(),
            data_w: a.dev.data_w,
            mtu: a.mtu,
            msg_size: size,
            qps: a.qps,
            window: a.window,
            messages: r.messages,
            bytes: r.bytes,
            cycles: r.cycles,
            clock_mhz: clock,
            gbps: bpc * clock / 1000.0,
            bits_per_cycle: bpc,
            efficiency: eff,
            wire_max_efficiency: wmax,
            of_wire_max: eff / wmax,
            wire_frames: mac1.tx_frames - mac0.tx_frames,
            wire_bytes: mac1.tx_bytes - mac0.tx_bytes,
            sim_cycles_per_sec: r.cycles as f64 / secs.max(1e-9),
        };
        if a.json {
            println!("{}", serde_json::to_string(&row)?);
        } else {
            println!(
                "{:>9} {:>6} {:>11} {:>10} {:>8.2} {:>7.2} {:>7.1}% {:>7.1}% {:>7.1}% {:>11.0}",
                row.msg_size,
                row.messages,
                row.bytes,
                row.cycles,
                row.gbps,
                row.bits_per_cycle,
                row.efficiency * 100.0,
                row.wire_max_efficiency * 100.0,
                row.of_wire_max * 100.0,
                row.sim_cycles_per_sec
            );
        }
    }
    if !a.json {
        let (what, headers) = match op {
            Op::Write => ("WRITEs", "RETH 16 (first packet; every packet for mp)"),
            Op::Read | Op::FetchAdd => ("READs", "AETH 4 (first and last response)"),
        };
        println!(
            "(DATA_W={}, clock {clock} MHz, PMTU {} B, {} QP(s) x {} {what} in flight, fabric {}; eff = payload bits / (DATA_W x cycles); wire max = payload share of the frames' DATA_W beats with Eth 14 + IPv4 20 + UDP 8 + BTH 12 + {headers} + ICRC 4, no inter-frame gap)",
            a.dev.data_w, a.mtu, a.qps, a.window, a.fabric
        );
    }
    Ok(ExitCode::SUCCESS)
}

fn bw_name(op: Op) -> &'static str {
    match op {
        Op::Write => "write_bw",
        Op::Read => "read_bw",
        Op::FetchAdd => "atomic_rate",
    }
}

/// `rnic bench write-lat` (`Op::Write`: a WRITE_WITH_IMM's doorbell to the
/// receiver's CQE) or `read-lat` (`Op::Read`: a READ's doorbell to the
/// reader's CQE, a round trip).
pub fn lat(a: &WriteLatArgs, op: Op) -> Result<ExitCode> {
    let name = match op {
        Op::Write => "write_lat",
        Op::Read => "read_lat",
        Op::FetchAdd => "atomic_lat",
    };
    check_sizes(&a.sizes)?;
    let mtu = rnic_harness::mtu_from_bytes(a.mtu)?;
    if a.iters == 0 {
        bail!("--iters must be at least 1");
    }
    devices::require_sim(&a.dev)?;
    sim::fabric(&a.fabric)?;
    if !a.json {
        println!(
            "{:>9} {:>6} {:>8} {:>8} {:>8} {:>9} {:>10} {:>11}",
            "size", "iters", "min", "median", "max", "mean", "median ns", "sim cyc/s"
        );
    }
    let mut clock = 0.0;
    for &size in &a.sizes {
        // Poll every cycle: the latency is exact to the cycle.
        let p = pair(&a.dev, &a.fabric, 1)?;
        let wall = Instant::now();
        let r = perf::write_lat(
            &p.a,
            p.addrs[0],
            &p.b,
            p.addrs[1],
            &LatOpts {
                msg_size: size,
                iterations: a.iters,
                mtu,
                watchdog: 5_000_000,
                op,
            },
        )
        .with_context(|| format!("{name} of {size} B"))?;
        let secs = wall.elapsed().as_secs_f64();
        clock = p.a.device().clock_mhz();
        let bytes = u64::from(a.iters) * u64::from(size);
        let row = LatRow {
            test: name,
            transport: "rc",
            fabric: a.fabric.clone(),
            data_w: a.dev.data_w,
            mtu: a.mtu,
            msg_size: size,
            iterations: a.iters,
            bytes,
            cycles: r.cycles,
            clock_mhz: clock,
            gbps: bytes as f64 * 8.0 / r.cycles as f64 * clock / 1000.0,
            lat_min_cycles: r.min,
            lat_median_cycles: r.median,
            lat_max_cycles: r.max,
            lat_mean_cycles: r.mean,
            lat_median_ns: r.median as f64 * 1000.0 / clock,
            sim_cycles_per_sec: r.cycles as f64 / secs.max(1e-9),
        };
        if a.json {
            println!("{}", serde_json::to_string(&row)?);
        } else {
            println!(
                "{:>9} {:>6} {:>8} {:>8} {:>8} {:>9.1} {:>10.1} {:>11.0}",
                row.msg_size,
                row.iterations,
                row.lat_min_cycles,
                row.lat_median_cycles,
                row.lat_max_cycles,
                row.lat_mean_cycles,
                row.lat_median_ns,
                row.sim_cycles_per_sec
            );
        }
    }
    if !a.json {
        let what = match op {
            Op::Write => "the WRITE_WITH_IMM's doorbell to the receiver's poll seeing its CQE (one-way path delay included)",
            Op::Read => "the READ's doorbell to the reader's poll seeing its CQE (a round trip: both path delays included)",
            Op::FetchAdd => "the FETCH_AND_ADD's doorbell to the requester's poll seeing its CQE (a round trip: both path delays included)",
        };
        println!(
            "(cycles from {what}; DATA_W={}, clock {clock} MHz, PMTU {} B, fabric {})",
            a.dev.data_w, a.mtu, a.fabric
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// Goodput against loss rate, one line per transport and path count.
fn plot_goodput(
    path: &std::path::Path,
    rows: &[(GoodputRow, Option<f64>)],
    a: &GoodputArgs,
) -> Result<()> {
    use plotters::prelude::*;
    let mut series: std::collections::BTreeMap<(String, u32), Vec<(f64, f64)>> = Default::default();
    for (r, loss) in rows {
        if let Some(l) = loss {
            series
                .entry((r.transport.to_string(), r.spray_ports))
                .or_default()
                .push((l * 100.0, r.gbps));
        }
    }
    let xmax = a.sweep_loss.iter().cloned().fold(0.0, f64::max) * 100.0;
    let ymax = rows.iter().map(|(r, _)| r.gbps).fold(0.0, f64::max) * 1.1;
    let root = SVGBackend::new(path, (800, 500)).into_drawing_area();
    root.fill(&WHITE)
        .map_err(|e| anyhow::anyhow!("plot: {e}"))?;
    let mut chart = ChartBuilder::on(&root)
        .caption(
            format!(
                "rnic goodput, rc vs mp: {} QPs x {} x {} B WRITEs, PMTU {}, DATA_W {}, paths skewed 4x",
                a.load.qps, a.load.window, a.load.size, a.load.mtu, a.dev.data_w
            ),
            ("sans-serif", 16),
        )
        .margin(15)
        .x_label_area_size(40)
        .y_label_area_size(55)
        .build_cartesian_2d(0.0..xmax.max(0.1), 0.0..ymax.max(0.1))
        .map_err(|e| anyhow::anyhow!("plot: {e}"))?;
    chart
        .configure_mesh()
        .x_desc("loss rate per path (%)")
        .y_desc("goodput (Gb/s at the core clock)")
        .draw()
        .map_err(|e| anyhow::anyhow!("plot: {e}"))?;
    for (i, ((t, k), pts)) in series.iter().enumerate() {
        let color = Palette99::pick(i).to_rgba();
        let style = if t == "mp" {
            color.stroke_width(3)
        } else {
            color.stroke_width(1)
        };
        chart
            .draw_series(LineSeries::new(pts.clone(), style))
            .map_err(|e| anyhow::anyhow!("plot: {e}"))?
            .label(format!("{t}, {k} paths"))
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], color));
        chart
            .draw_series(pts.iter().map(|&p| Circle::new(p, 3, color.filled())))
            .map_err(|e| anyhow::anyhow!("plot: {e}"))?;
    }
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .draw()
        .map_err(|e| anyhow::anyhow!("plot: {e}"))?;
    root.present()
        .map_err(|e| anyhow::anyhow!("plot {}: {e}", path.display()))?;
    Ok(())
}
