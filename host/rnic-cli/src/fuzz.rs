//! `rnic fuzz`: the responder fuzz campaign (random and mutated frames into
//! a simulated NIC beside a legitimate connection), seeded, with a progress
//! bar on a terminal; exit status 0 clean, 1 a broken promise, 2 bad usage.

use std::io::IsTerminal;
use std::process::ExitCode;

use anyhow::Result;
use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};
use rnic_torture::fuzz::{self, FuzzConfig};
use rnic_torture::Break;

use crate::devices::{self, DeviceArgs};

#[derive(Args)]
pub struct FuzzArgs {
    #[command(flatten)]
    pub dev: DeviceArgs,
    /// Attack frames to send.
    #[arg(long, default_value_t = FuzzConfig::default().frames)]
    pub frames: u64,
    /// Attack frames between two legitimate messages.
    #[arg(long, default_value_t = FuzzConfig::default().burst)]
    pub burst: u32,
    /// Cycles a legitimate message may take before it counts as lost.
    #[arg(long, default_value_t = FuzzConfig::default().watchdog)]
    pub watchdog: u64,
    /// Debug: switch off the responder's memory-region checks
    /// (`--break no-mr-check`); the campaign must then fail.
    #[arg(long = "break", value_parser = crate::torture::break_parser())]
    pub brk: Option<Break>,
    /// Transport of the legitimate and the attacked QP: rc or mp.
    #[arg(long, default_value = "rc", value_parser = ["rc", "mp"])]
    pub transport: String,
    /// Print the report as one JSON object.
    #[arg(long)]
    pub json: bool,
}

pub fn run(a: &FuzzArgs) -> Result<ExitCode> {
    devices::require_sim(&a.dev)?;
    let cfg = FuzzConfig {
        seed: a.dev.seed,
        frames: a.frames,
        data_w: a.dev.data_w,
        knobs: a.dev.sim_model.into(),
        burst: a.burst,
        watchdog: a.watchdog,
        brk: a.brk,
        mp: a.transport == "mp",
    };
    let bar = if std::io::stderr().is_terminal() && !a.json {
        let b = ProgressBar::new(a.frames);
        b.set_style(
            ProgressStyle::with_template("{bar:40} {pos}/{len} frames {elapsed_precise} eta {eta}")
                .expect("template"),
        );
        b
    } else {
        ProgressBar::hidden()
    };
    let rep = fuzz::run(&cfg, &mut |n| bar.set_position(n))?;
    bar.finish_and_clear();
    if a.json {
        println!("{}", serde_json::to_string(&rep)?);
    } else {
        let c = |k: &str| rep.counters.get(k).copied().unwrap_or(0);
        println!(
            "rnic fuzz: {}, DATA_W={}, seed {}: {} attack frames ({} with a bad ICRC), {} legitimate messages checked, {} cycles",
            rep.transport, rep.data_w, rep.seed, rep.frames, rep.bad_icrc_frames, rep.messages, rep.cycles
        );
        println!(
            "  attack QP re-armed {} times after a NAK{}",
            rep.attack_qp_rearms,
            a.brk.map(|b| format!("; BREAK {b}")).unwrap_or_default()
        );
        println!(
            "  NIC b: rx {} frames; dropped: icrc {} malformed {} nobuf {} qp {} psn/dup {} transport {}; NAKs sent {}; MR re-check refusals {}",
            c("b.rx_frames"),
            c("b.rx_drop_icrc"),
            c("b.rx_drop_malformed"),
            c("b.rx_drop_nobuf"),
            c("b.rx_drop_qp"),
            c("b.rx_drop_psn"),
            c("b.rx_drop_transport"),
            c("b.rx_nak"),
            c("b.rx_drop_guard")
        );
        println!(
            "  READ cases: {}; {} requests answered ({} responses, {} bytes checked against the playground, {} not compared as possibly overwritten, {} cut short); {} frames of NIC b inspected",
            rep.read_cases
                .iter()
                .map(|(k, v)| format!("{k} {v}"))
                .collect::<Vec<_>>()
                .join(", "),
            rep.reads_answered,
            rep.read_responses,
            rep.read_bytes_checked,
            rep.read_bytes_unchecked,
            rep.reads_cut_short,
            rep.b_frames_inspected
        );
        println!(
            "  atomic cases: {}; {} atomic frames, {} ATOMIC ACKNOWLEDGEs ({} original values checked against the playground, {} not compared as possibly overwritten); NIC b executed {} atomics, replayed {}{}",
            rep.atomic_cases
                .iter()
                .map(|(k, v)| format!("{k} {v}"))
                .collect::<Vec<_>>()
                .join(", "),
            rep.atomic_frames,
            rep.atomic_acks,
            rep.atomic_values_checked,
            rep.atomic_values_unchecked,
            c("b.rx_atomic"),
            c("b.rx_atomic_replay"),
            if rep.atomics_served {
                ""
            } else {
                " (a build without atomics)"
            }
        );
        println!(
            "  playground: {} bytes changed between looks, each where an injected frame may write",
            rep.playground_bytes_changed
        );
        for f in &rep.failures {
            println!("  FAILURE: {f}");
        }
        println!("  {}", if rep.failed() { "FAILED" } else { "clean" });
    }
    if rep.failed() {
        eprintln!(
            "reproduce with: cargo run --release --bin rnic -- fuzz --transport {} --seed {} --data-w {}{} --frames {} --burst {} --watchdog {}{}",
            a.transport,
            a.dev.seed,
            a.dev.data_w,
            a.dev.sim_model_flag(),
            a.frames,
            a.burst,
            a.watchdog,
            a.brk.map(|b| format!(" --break {b}")).unwrap_or_default()
        );
        return Ok(ExitCode::from(1));
    }
    Ok(ExitCode::SUCCESS)
}
