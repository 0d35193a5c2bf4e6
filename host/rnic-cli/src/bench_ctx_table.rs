//! `rnic bench ctx-table`: what moving a QP's context between a slot and
//! the host's context table costs (issue 19), in simulated cycles
//! (deterministic for a seed): a load (one DMA read of the record and its
//! copy into the slot), a save (a write-back, its status, then the load of
//! the same record) and an evict (a write-back and the load of another
//! record, the read overlapping the write-back: what a miss that evicts
//! does). A context cache pays a load or an evict per miss, so this is the
//! price of a miss before any overlap of misses.

use std::process::ExitCode;

use anyhow::{bail, Context, Result};
use clap::Args;
use rnic_device::Device;
use rnic_sim::RootComplexConfig;
use serde::Serialize;

use crate::bench_rdma::pair_with;
use crate::devices::DeviceArgs;

#[derive(Args)]
pub struct CtxTableArgs {
    #[command(flatten)]
    pub dev: DeviceArgs,
    /// Commands per op.
    #[arg(long, default_value_t = 64)]
    pub commands: u32,
    /// Commands in flight at once, each on its own slot, posted in batches
    /// of this many (1..=id.ctx_fills).
    #[arg(long, default_value_t = 1)]
    pub in_flight: u32,
    /// Cycles from a DMA read request to its first completion in the
    /// simulated host.
    #[arg(long, default_value_t = 100)]
    pub read_latency: u64,
    /// One JSON object per row.
    #[arg(long)]
    pub json: bool,
}

#[derive(Serialize)]
struct CtxRow {
    test: &'static str,
    data_w: u32,
    /// "load", "save" (write back, then load the same record) or "evict"
    /// (write back, and load another record).
    op: &'static str,
    commands: u32,
    in_flight: u32,
    record_bytes: usize,
    read_latency: u64,
    cycles: u64,
    cycles_per_command: f64,
    clock_mhz: f64,
    /// Commands per second at the simulated clock, in millions.
    mcmds_per_sec: f64,
}

/// Command `n` of `op`: its code, the record it loads and the record it
/// writes back to (an evict's half the table away, so no write-back of
/// the batch is another command's read).
fn command(op: &str, n: u32, records: u32) -> (u8, u32, u32) {
    let r = n % records;
    match op {
        "load" => (1, r, r),
        "save" => (2, r, r),
        _ => (2, (r + records / 2) % records, r),
    }
}

pub fn ctx_table(a: &CtxTableArgs) -> Result<ExitCode> {
    if a.commands == 0 || a.commands > 1 << 16 {
        bail!("--commands must be 1..=65536");
    }
    if a.read_latency == 0 || a.read_latency > 100_000 {
        bail!("--read-latency must be 1..=100000 cycles");
    }
    let host = RootComplexConfig {
        read_latency: a.read_latency,
        ..RootComplexConfig::bench()
    };
    let p = pair_with(&a.dev, "ideal", 16, host)?;
    let nic = p.a.nic();
    let dev = p.a.device();
    let rb = nic.qp_ctx_record_bytes();
    if rb == 0 {
        bail!("this NIC model has no record port, so no context table (id.qp_rec_words is 0)");
    }
    let fills = nic.id().ctx_fills;
    if a.in_flight == 0 || a.in_flight > fills {
        bail!("--in-flight must be 1..={fills} (id.ctx_fills: the context moves this NIC runs at once)");
    }
    let records = a.commands.clamp(a.in_flight.max(2), 1024);
    nic.qp_ctx_table_open(records)
        .context("opening the context table")?;
    if !a.json {
        println!(
            "{:>5} {:>9} {:>10} {:>12} {:>11}",
            "op", "commands", "cycles", "cyc/command", "M cmds/s"
        );
    }
    let repro = || {
        format!(
            "reproduce: rnic bench ctx-table --data-w {} --seed {} --commands {} --in-flight {} --read-latency {}",
            a.dev.data_w, a.dev.seed, a.commands, a.in_flight, a.read_latency
        )
    };
    for op in ["load", "save", "evict"] {
        let before = nic.qp_ctx_counters()?;
        let mut done = nic.qp_ctx_status()?.done;
        let start = dev.now();
        let mut i = 0;
        while i < a.commands {
            // a batch: one command per slot, all in flight, then their answers
            let batch = a.in_flight.min(a.commands - i);
            for k in 0..batch {
                let (code, r, wb) = command(op, i + k, records);
                nic.qp_ctx_post_raw(k as u16, code, r, wb)?;
            }
            done = done.wrapping_add(batch as u16);
            let (_, last, _) = command(op, i + batch - 1, records);
            nic.qp_ctx_wait(done, (batch - 1) as u16, last)
                .with_context(|| format!("ctx-table: {op} batch at command {i} ({})", repro()))?;
            i += batch;
        }
        let cycles = dev.now() - start;
        let after = nic.qp_ctx_counters()?;
        if after.fills - before.fills != a.commands || after.fails != before.fails {
            bail!(
                "ctx-table: {op}: {} of {} commands loaded a record, {} failed ({})",
                after.fills - before.fills,
                a.commands,
                after.fails - before.fails,
                repro()
            );
        }
        let per = cycles as f64 / f64::from(a.commands);
        let clock = dev.clock_mhz();
        let row = CtxRow {
            test: "ctx_table",
            data_w: a.dev.data_w,
            op,
            commands: a.commands,
            in_flight: a.in_flight,
            record_bytes: rb,
            read_latency: a.read_latency,
            cycles,
            cycles_per_command: per,
            clock_mhz: clock,
            mcmds_per_sec: clock / per,
        };
        if a.json {
            println!("{}", serde_json::to_string(&row)?);
        } else {
            println!(
                "{:>5} {:>9} {:>10} {:>12.1} {:>11.3}",
                op, a.commands, cycles, per, row.mcmds_per_sec
            );
        }
    }
    nic.qp_ctx_table_close()?;
    if !a.json {
        println!(
            "(records of {rb} B between slots and the host's table, {} at once on slots 0.., timed from the first command's MMIO write to the status read that shows the last done, so the host's MMIO and polling are in the figure; DATA_W={}, DMA read latency {} cycles, {} MHz)",
            a.in_flight,
            a.dev.data_w,
            a.read_latency,
            dev.clock_mhz()
        );
    }
    Ok(ExitCode::SUCCESS)
}
