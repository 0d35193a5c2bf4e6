//! `rnic`: the command line of the rnic project.
//!
//! Exit status: 0 clean, 1 a check failed (ordering violation, corruption,
//! lost or duplicate completion), 2 usage or setup error.

#[cfg(feature = "sim")]
mod bench;
#[cfg(feature = "sim")]
mod bench_ctx_table;
#[cfg(feature = "sim")]
mod bench_failover;
#[cfg(feature = "sim")]
mod bench_qp_scale;
#[cfg(feature = "sim")]
mod bench_rdma;
mod build;
mod campaign;
mod devices;
mod flash;
#[cfg(feature = "sim")]
mod fuzz;
mod image;
mod info;
#[cfg(feature = "sim")]
mod interop;
mod state_budget;
mod torture;
#[cfg(feature = "sim")]
mod vm;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(
    name = "rnic",
    version,
    about = "Host tooling for the rnic open RDMA NIC (simulated or on a board)"
)]
struct Cli {
    /// Log filter (e.g. `info`, `rnic_sim=debug`); also read from RUST_LOG.
    #[arg(long, global = true, default_value = "warn")]
    log: String,
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// List rnic devices: the simulator, and boards found in sysfs.
    List(devices::ListArgs),
    /// Show the ID block and capabilities of a device.
    Info(info::InfoArgs),
    /// Dump every register block with field names from the register map.
    Regs(info::RegsArgs),
    /// Data-before-completion torture test.
    Torture(torture::TortureArgs),
    /// Torture campaigns: many seeds over this machine's cores or a Slurm
    /// job array, merged into one summary.
    #[command(subcommand)]
    Campaign(campaign::CampaignCmd),
    /// Responder fuzz campaign: random and mutated frames beside a
    /// legitimate connection (simulator).
    #[cfg(feature = "sim")]
    Fuzz(fuzz::FuzzArgs),
    /// Responder fuzz campaign (simulator; not in this build).
    #[cfg(not(feature = "sim"))]
    Fuzz(SimOnly),
    /// Benchmarks in simulated cycles.
    #[cfg(feature = "sim")]
    #[command(subcommand)]
    Bench(bench::BenchCmd),
    /// Benchmarks in simulated cycles (simulator; not in this build).
    #[cfg(not(feature = "sim"))]
    Bench(SimOnly),
    /// Firmware images: pack, inspect, list boards.
    #[command(subcommand)]
    Image(image::ImageCmd),
    /// The configuration flash: write, read, verify, info, boot, jtag.
    Flash(flash::FlashArgs),
    /// Build the NIC for a board (synthesis, place and route, bitstream).
    Build(build::BuildArgs),
    /// Interoperate with Linux soft-RoCE (rdma_rxe) in a QEMU guest:
    /// ibv_rc_pingpong, WRITE_WITH_IMM, ib_write_bw, ib_send_lat, and RDMA READ
    /// from rnic (pyverbs, ib_read_bw, ib_read_lat).
    #[cfg(feature = "sim")]
    Interop(interop::InteropArgs),
    /// Interoperate with Linux soft-RoCE (simulator; not in this build).
    #[cfg(not(feature = "sim"))]
    Interop(SimOnly),
    /// Full system: run an `rnic` command in a QEMU guest whose PCI
    /// functions are simulated NICs (vfio-user), e.g.
    /// `rnic vm -- torture --messages 200`.
    #[cfg(feature = "sim")]
    Vm(vm::VmArgs),
    /// Full-system simulation (simulator; not in this build).
    #[cfg(not(feature = "sim"))]
    Vm(SimOnly),
}

/// The arguments of a simulator-only command in a build without the
/// simulator: whatever they are, the command says why it cannot run.
#[cfg(not(feature = "sim"))]
#[derive(clap::Args)]
struct SimOnly {
    #[arg(trailing_var_arg = true, allow_hyphen_values = true, hide = true)]
    _args: Vec<String>,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let filter = std::env::var("RUST_LOG").unwrap_or_else(|_| cli.log.clone());
    tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::new(filter))
        .with_writer(std::io::stderr)
        .init();
    let result = match cli.cmd {
        Cmd::List(a) => devices::list(&a),
        Cmd::Info(a) => info::info(&a),
        Cmd::Regs(a) => info::regs(&a),
        Cmd::Torture(a) => torture::run(&a),
        Cmd::Campaign(c) => campaign::run(&c),
        #[cfg(feature = "sim")]
        Cmd::Fuzz(a) => fuzz::run(&a),
        #[cfg(feature = "sim")]
        Cmd::Bench(b) => bench::run(&b),
        #[cfg(not(feature = "sim"))]
        Cmd::Fuzz(_) => Err(devices::no_sim("rnic fuzz")),
        #[cfg(not(feature = "sim"))]
        Cmd::Bench(_) => Err(devices::no_sim("rnic bench")),
        Cmd::Image(c) => image::run(&c),
        Cmd::Flash(a) => flash::run(&a),
        Cmd::Build(a) => build::run(&a),
        #[cfg(feature = "sim")]
        Cmd::Interop(a) => interop::run(&a),
        #[cfg(not(feature = "sim"))]
        Cmd::Interop(_) => Err(devices::no_sim("rnic interop")),
        #[cfg(feature = "sim")]
        Cmd::Vm(a) => vm::run(&a),
        #[cfg(not(feature = "sim"))]
        Cmd::Vm(_) => Err(devices::no_sim("rnic vm")),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("rnic: error: {e:#}");
            ExitCode::from(if flash::is_failure(&e) { 1 } else { 2 })
        }
    }
}
