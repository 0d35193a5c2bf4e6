//! `rnic bench`: throughput in simulated cycles (deterministic), reported
//! also in Gb/s at the simulated clock, with the simulator's own speed.

use std::process::ExitCode;
use std::time::Instant;

use anyhow::{bail, Result};
use clap::{Args, Subcommand};
use rnic_device::Device;
use rnic_driver::{CopyWr, Cqe, WcStatus};
use rnic_sim::{RootComplexConfig, SimConfig};
use rnic_torture::perf::Op;
use serde::Serialize;

use crate::devices::{self, DeviceArgs};

#[derive(Subcommand)]
pub enum BenchCmd {
    /// Local DMA copy throughput over message sizes.
    Copy(CopyArgs),
    /// RDMA WRITE bandwidth between two NICs over message sizes (ib_write_bw).
    WriteBw(WriteBwArgs),
    /// WRITE_WITH_IMM latency, doorbell to remote CQE (ib_write_lat, one way).
    WriteLat(WriteLatArgs),
    /// RDMA READ bandwidth between two NICs over message sizes (ib_read_bw):
    /// NIC 0 reads NIC 1's buffers; rc only.
    ReadBw(WriteBwArgs),
    /// RDMA READ latency, doorbell to the reader's CQE (ib_read_lat).
    ReadLat(WriteLatArgs),
    /// Atomic operations per second (ib_atomic_bw): NIC 0's fetch-and-adds
    /// on NIC 1's memory, over QP counts; rc only.
    AtomicRate(crate::bench_rdma::AtomicRateArgs),
    /// RC goodput under each fabric profile, relative to `ideal`.
    Goodput(GoodputArgs),
    /// Failover of the sprayed transports on a fabric with a flapping path:
    /// goodput per bin, time to recover after the path dies and to use it
    /// again after it comes back.
    Failover(FailoverArgs),
    /// Write throughput (4 KiB WRITEs) and message rate (64 B
    /// WRITE_WITH_IMMs) against the number of active QPs, 1 to 65,536 in
    /// powers of 4 as far as the NIC holds QPs.
    QpScale(crate::bench_qp_scale::QpScaleArgs),
    /// Cycles to move a QP's context between a slot and the host's context
    /// table: a load, and a save (write back, then load); what a context
    /// cache's miss costs.
    CtxTable(crate::bench_ctx_table::CtxTableArgs),
}

#[derive(Args)]
pub struct CopyArgs {
    #[command(flatten)]
    pub dev: DeviceArgs,
    /// Message sizes in bytes.
    #[arg(long, value_delimiter = ',', default_values_t = vec![64u32, 256, 1024, 4096, 16384, 65536, 262144, 1048576])]
    pub sizes: Vec<u32>,
    /// Bytes to move per size (at least one message).
    #[arg(long, default_value_t = 4 << 20)]
    pub bytes: u64,
    /// Copies in flight.
    #[arg(long, default_value_t = 8)]
    pub window: u32,
    /// PCIe max payload size code (0 = 128 B, 1 = 256 B, 2 = 512 B).
    #[arg(long, default_value_t = 1)]
    pub mps: u8,
    /// PCIe max read request code (0 = 128 B ... 5 = 4096 B).
    #[arg(long, default_value_t = 2)]
    pub mrrs: u8,
    /// One JSON object per row.
    #[arg(long)]
    pub json: bool,
}

#[derive(Serialize)]
struct Row {
    test: &'static str,
    transport: &'static str,
    fabric: &'static str,
    data_w: u32,
    msg_size: u32,
    messages: u64,
    bytes: u64,
    cycles: u64,
    bits_per_cycle: f64,
    efficiency: f64,
    clock_mhz: f64,
    gbps: f64,
    rc_read_latency_cycles: u64,
    sim_cycles_per_sec: f64,
}

pub fn run(cmd: &BenchCmd) -> Result<ExitCode> {
    match cmd {
        BenchCmd::Copy(a) => copy(a),
        BenchCmd::WriteBw(a) => crate::bench_rdma::bw(a, Op::Write),
        BenchCmd::WriteLat(a) => crate::bench_rdma::lat(a, Op::Write),
        BenchCmd::ReadBw(a) => crate::bench_rdma::bw(a, Op::Read),
        BenchCmd::ReadLat(a) => crate::bench_rdma::lat(a, Op::Read),
        BenchCmd::AtomicRate(a) => crate::bench_rdma::atomic_rate(a),
        BenchCmd::Goodput(a) => crate::bench_rdma::goodput(a),
        BenchCmd::Failover(a) => crate::bench_failover::failover(a),
        BenchCmd::QpScale(a) => crate::bench_qp_scale::qp_scale(a),
        BenchCmd::CtxTable(a) => crate::bench_ctx_table::ctx_table(a),
    }
}

pub use crate::bench_failover::FailoverArgs;
pub use crate::bench_rdma::{GoodputArgs, WriteBwArgs, WriteLatArgs};

fn copy(a: &CopyArgs) -> Result<ExitCode> {
    if a.sizes.is_empty() || a.sizes.contains(&0) {
        bail!("--sizes needs positive sizes");
    }
    if a.mps > 2 || a.mrrs > 5 {
        bail!("--mps must be 0..2 and --mrrs 0..5");
    }
    if a.window == 0 || a.window > 256 {
        bail!("--window must be 1..256");
    }
    if !a.json {
        println!(
            "{:>9} {:>6} {:>12} {:>12} {:>9} {:>7} {:>9} {:>12}",
            "size", "msgs", "bytes", "cycles", "bits/cyc", "eff", "Gb/s", "sim cyc/s"
        );
    }
    for &size in &a.sizes {
        let rc = RootComplexConfig::bench();
        let latency = rc.read_latency;
        let nic = devices::open_sim(
            &a.dev,
            SimConfig {
                root_complex: rc,
                ..SimConfig::default()
            },
        )?;
        let dev = nic.device();
        dev.set_max_payload(a.mps);
        dev.set_max_read_req(a.mrrs);
        let mut cq = nic.create_cq(512)?;
        let mut sq = nic.create_sq(256, &mut cq)?;
        let window = a.window as usize;
        let stride = (size as usize + 4095) & !4095;
        let src = dev.alloc_dma(stride * window)?;
        let dst = dev.alloc_dma(stride * window)?;
        let messages = (a.bytes / u64::from(size)).max(1);
        let wall = Instant::now();
        let c0 = dev.now();
        let (mut posted, mut done) = (0u64, 0u64);
        let mut cqes: Vec<Cqe> = Vec::new();
        while done < messages {
            let mut rung = false;
            while posted < messages && posted - done < window as u64 {
                let s = (posted % window as u64) as usize * stride;
                nic.post_copy(
                    &mut sq,
                    &CopyWr {
                        wr_id: posted,
                        src: src.bus_addr() + s as u64,
                        dst: dst.bus_addr() + s as u64,
                        length: size,
                    },
                )?;
                posted += 1;
                rung = true;
            }
            if rung {
                nic.ring_sq(&sq)?;
            }
            cqes.clear();
            if nic.poll_cq(&mut cq, 64, &mut cqes)? == 0 {
                dev.idle();
            }
            for c in &cqes {
                if c.status != WcStatus::Success {
                    bail!("copy {} failed: {:?}", c.wr_id, c.status);
                }
            }
            done += cqes.len() as u64;
        }
        let cycles = dev.now() - c0;
        let secs = wall.elapsed().as_secs_f64();
        let bytes = messages * u64::from(size);
        let bpc = bytes as f64 * 8.0 / cycles as f64;
        let row = Row {
            test: "copy",
            transport: "local",
            fabric: "none",
            data_w: a.dev.data_w,
            msg_size: size,
            messages,
            bytes,
            cycles,
            bits_per_cycle: bpc,
            efficiency: bpc / f64::from(a.dev.data_w),
            clock_mhz: dev.clock_mhz(),
            gbps: bpc * dev.clock_mhz() / 1000.0,
            rc_read_latency_cycles: latency,
            sim_cycles_per_sec: cycles as f64 / secs.max(1e-9),
        };
        if a.json {
            println!("{}", serde_json::to_string(&row)?);
        } else {
            println!(
                "{:>9} {:>6} {:>12} {:>12} {:>9.2} {:>6.1}% {:>9.2} {:>12.0}",
                row.msg_size,
                row.messages,
                row.bytes,
                row.cycles,
                row.bits_per_cycle,
                row.efficiency * 100.0,
                row.gbps,
                row.sim_cycles_per_sec
            );
        }
    }
    if !a.json {
        let dev_clock = SimConfig::default().clock_mhz;
        println!(
            "(DATA_W={}, clock {dev_clock} MHz, MPS {} B, MRRS {} B, {} copies in flight)",
            a.dev.data_w,
            128 << a.mps,
            128 << a.mrrs,
            a.window
        );
    }
    Ok(ExitCode::SUCCESS)
}
