//! `rnic torture --transport local-copy`: the data-before-completion check
//! on one NIC, without the network: each message copies a per-message pattern into a destination buffer and
//! the host checks every byte of it at the instant it sees the CQE. The
//! root-complex model reorders Relaxed-Ordering writes, so a CQE that could
//! pass its data (`--break cqe-ro`) is caught.

use std::io::IsTerminal;
use std::process::ExitCode;
use std::time::Instant;

use anyhow::{bail, Context, Result};
use indicatif::{ProgressBar, ProgressStyle};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rnic_device::{Device, DmaBuffer};
use rnic_driver::{CompletionQueue, CopyWr, Cqe, Nic, SendQueue, WcStatus};
use rnic_sim::{SimConfig, SimDevice};
use serde::Serialize;

use crate::devices::{self, DeviceArgs};

/// The local-copy torture (`rnic torture --transport local-copy`): the only
/// switch it can break is the CQE's Relaxed Ordering.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Break {
    /// CQEs carry Relaxed Ordering (RO=1) and may pass their payload.
    CqeRo,
}

/// Settings of a local-copy run (from `rnic torture`'s flags).
pub struct TortureArgs {
    pub dev: DeviceArgs,
    pub messages: u64,
    pub qps: u32,
    pub min_size: u32,
    pub max_size: u32,
    pub window: u32,
    pub r#break: Option<Break>,
    pub wave: Option<std::path::PathBuf>,
    pub json: bool,
}

#[derive(Serialize, Default, Debug)]
pub struct Report {
    pub seed: u64,
    pub data_w: u32,
    pub messages: u64,
    pub bytes: u64,
    pub violations: u64,
    pub corruptions: u64,
    pub lost_completions: u64,
    pub duplicate_completions: u64,
    pub out_of_order_completions: u64,
    pub error_completions: u64,
    pub cycles: u64,
    pub transport: &'static str,
    pub fabric: &'static str,
    #[serde(rename = "break")]
    pub broken: Option<&'static str>,
    pub first_failure: Option<String>,
}

impl Report {
    fn failed(&self) -> bool {
        self.violations
            + self.corruptions
            + self.lost_completions
            + self.duplicate_completions
            + self.out_of_order_completions
            + self.error_completions
            > 0
    }
}

struct Slot {
    msg: u64,
    len: usize,
    dst_off: usize,
}

struct Queue {
    sq: SendQueue,
    cq: CompletionQueue,
    src: DmaBuffer,
    dst: DmaBuffer,
    slots: Vec<Option<Slot>>,
    posted: u64,
    completed: u64,
}

/// Byte `i` of message `msg` on queue `q` of run `seed`.
fn pattern(seed: u64, q: u32, msg: u64, i: usize) -> u8 {
    let mut x = seed ^ (u64::from(q) << 48) ^ msg.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    x = x.wrapping_add((i as u64 / 8).wrapping_mul(0xBF58_476D_1CE4_E5B9));
    x ^= x >> 31;
    x = x.wrapping_mul(0x94D0_49BB_1331_11EB);
    (x >> ((i % 8) * 8)) as u8
}

pub fn validate(a: &TortureArgs) -> Result<()> {
    if a.qps == 0 {
        bail!("--qps must be at least 1");
    }
    if a.min_size == 0 {
        bail!("--min-size must be at least 1 byte");
    }
    if a.max_size < a.min_size {
        bail!(
            "--max-size ({}) is below --min-size ({})",
            a.max_size,
            a.min_size
        );
    }
    if a.max_size > 16 << 20 {
        bail!("--max-size is limited to 16 MiB");
    }
    if a.window == 0 || a.window > 256 {
        bail!("--window must be 1..256");
    }
    Ok(())
}

/// The command line that reproduces this run.
fn repro(a: &TortureArgs) -> String {
    let mut s = format!(
        "cargo run --release --bin rnic -- torture --transport local-copy --seed {} --data-w {} --messages {} --qps {} --min-size {} --max-size {} --window {}",
        a.dev.seed, a.dev.data_w, a.messages, a.qps, a.min_size, a.max_size, a.window
    );
    if let Some(Break::CqeRo) = a.r#break {
        s.push_str(" --break cqe-ro");
    }
    s
}

pub fn run(a: &TortureArgs) -> Result<ExitCode> {
    validate(a)?;
    let cfg = SimConfig {
        wave: a.wave.clone(),
        ..SimConfig::default()
    };
    let nic = devices::open(&a.dev, cfg)?;
    if nic.id().num_queues < a.qps {
        bail!(
            "the NIC has {} queues; --qps {} is too many",
            nic.id().num_queues,
            a.qps
        );
    }
    let started = Instant::now();
    let report = torture(&nic, a)?;
    let wall = started.elapsed().as_secs_f64();
    if a.json {
        println!("{}", serde_json::to_string(&report)?);
    } else {
        println!(
            "torture: {} messages, {} bytes on {} queues, DATA_W={} seed={}",
            report.messages, report.bytes, a.qps, report.data_w, report.seed
        );
        println!(
            "  violations {}  corruptions {}  lost {}  duplicate {}  out-of-order {}  error CQEs {}",
            report.violations,
            report.corruptions,
            report.lost_completions,
            report.duplicate_completions,
            report.out_of_order_completions,
            report.error_completions
        );
        println!(
            "  {} simulated cycles in {:.1} s ({:.0} cycles/s)",
            report.cycles,
            wall,
            report.cycles as f64 / wall.max(1e-9)
        );
        println!("  {}", if report.failed() { "FAILED" } else { "clean" });
    }
    if report.failed() {
        if let Some(f) = &report.first_failure {
            eprintln!("first failure: {f}");
        }
        eprintln!("reproduce with: {}", repro(a));
        return Ok(ExitCode::from(1));
    }
    Ok(ExitCode::SUCCESS)
}

fn torture(nic: &Nic<SimDevice>, a: &TortureArgs) -> Result<Report> {
    let dev = nic.device();
    if let Some(Break::CqeRo) = a.r#break {
        nic.set_break_cqe_ro(true)?;
    }
    let seed = a.dev.seed;
    let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0x7074_6f72_7475_7265);
    let stride = (a.max_size as usize + 64 + 4095) & !4095;
    let window = a.window as usize;
    let mut queues = Vec::new();
    for _ in 0..a.qps {
        let mut cq = nic.create_cq(256)?;
        let sq = nic.create_sq(256, &mut cq)?;
        let src = dev.alloc_dma(stride * window).context("source buffers")?;
        let dst = dev
            .alloc_dma(stride * window)
            .context("destination buffers")?;
        queues.push(Queue {
            sq,
            cq,
            src,
            dst,
            slots: (0..window).map(|_| None).collect(),
            posted: 0,
            completed: 0,
        });
    }
    let mut rep = Report {
        seed,
        data_w: a.dev.data_w,
        transport: "local-copy",
        fabric: "none",
        broken: a.r#break.map(|_| "cqe-ro"),
        ..Report::default()
    };
    let bar = if !a.json && std::io::stderr().is_terminal() {
        let b = ProgressBar::new(a.messages);
        b.set_style(
            ProgressStyle::with_template("{bar:40} {pos}/{len} msgs {per_sec} {msg}")
                .unwrap_or_else(|_| ProgressStyle::default_bar()),
        );
        b
    } else {
        ProgressBar::hidden()
    };
    let start_cycle = dev.now();
    let mut issued = 0u64;
    let mut done = 0u64;
    let mut cqes: Vec<Cqe> = Vec::new();
    // A watchdog in simulated time: far above any healthy message latency.
    let watchdog_cycles = 2_000_000u64 + 64 * u64::from(a.max_size);
    let mut last_progress = dev.now();
    while done < a.messages {
        // Post: each queue fills its free slots.
        for (qi, q) in queues.iter_mut().enumerate() {
            let mut posted = false;
            for s in 0..window {
                if issued >= a.messages || q.slots[s].is_some() {
                    continue;
                }
                let len = rng.gen_range(a.min_size..=a.max_size) as usize;
                let src_off = s * stride + rng.gen_range(0..64);
                let dst_off = s * stride + rng.gen_range(0..64);
                let msg = q.posted;
                let data: Vec<u8> = (0..len).map(|i| pattern(seed, qi as u32, msg, i)).collect();
                q.src.write(src_off, &data);
                // Old bytes in the destination must differ from the new ones.
                let stale: Vec<u8> = data.iter().map(|b| !b).collect();
                q.dst.write(dst_off, &stale);
                nic.post_copy(
                    &mut q.sq,
                    &CopyWr {
                        wr_id: (msg << 8) | s as u64,
                        src: q.src.bus_addr() + src_off as u64,
                        dst: q.dst.bus_addr() + dst_off as u64,
                        length: len as u32,
                    },
                )?;
                q.slots[s] = Some(Slot { msg, len, dst_off });
                q.posted += 1;
                issued += 1;
                posted = true;
            }
            if posted {
                nic.ring_sq(&q.sq)?;
            }
        }
        // Poll: check every byte at the moment the CQE is seen.
        let mut any = false;
        for (qi, q) in queues.iter_mut().enumerate() {
            cqes.clear();
            nic.poll_cq(&mut q.cq, 64, &mut cqes)?;
            for c in &cqes {
                any = true;
                let s = (c.wr_id & 0xff) as usize;
                let msg = c.wr_id >> 8;
                let Some(slot) = q.slots.get_mut(s).and_then(Option::take) else {
                    rep.duplicate_completions += 1;
                    rep.first_failure.get_or_insert(format!(
                        "queue {qi}: completion for an idle slot {s} (msg {msg})"
                    ));
                    continue;
                };
                if slot.msg != msg {
                    rep.duplicate_completions += 1;
                    rep.first_failure.get_or_insert(format!(
                        "queue {qi}: CQE names msg {msg}, slot holds msg {}",
                        slot.msg
                    ));
                }
                if msg != q.completed {
                    rep.out_of_order_completions += 1;
                    rep.first_failure.get_or_insert(format!(
                        "queue {qi}: msg {msg} completed before msg {}",
                        q.completed
                    ));
                }
                q.completed += 1;
                done += 1;
                bar.inc(1);
                if c.status != WcStatus::Success {
                    rep.error_completions += 1;
                    rep.first_failure.get_or_insert(format!(
                        "queue {qi}: msg {msg} completed with {:?}",
                        c.status
                    ));
                    continue;
                }
                rep.messages += 1;
                rep.bytes += slot.len as u64;
                let got = q.dst.to_vec(slot.dst_off, slot.len);
                let bad = (0..slot.len).find(|&i| got[i] != pattern(seed, qi as u32, msg, i));
                if let Some(i) = bad {
                    // Stale now; after the host side drains, is it right?
                    for _ in 0..4096 {
                        dev.idle();
                    }
                    let later = q.dst.to_vec(slot.dst_off, slot.len);
                    if (0..slot.len).all(|j| later[j] == pattern(seed, qi as u32, msg, j)) {
                        rep.violations += 1;
                        rep.first_failure.get_or_insert(format!(
                            "queue {qi}: CQE of msg {msg} ({} B) seen at cycle {} while byte {i} was still stale",
                            slot.len,
                            dev.now()
                        ));
                    } else {
                        rep.corruptions += 1;
                        rep.first_failure.get_or_insert(format!(
                            "queue {qi}: msg {msg} has wrong bytes from byte {i}"
                        ));
                    }
                }
            }
        }
        if any {
            last_progress = dev.now();
        } else {
            dev.idle();
            if dev.now() - last_progress > watchdog_cycles {
                rep.lost_completions = issued - done;
                rep.first_failure.get_or_insert(format!(
                    "no completion for {watchdog_cycles} cycles with {} messages outstanding",
                    issued - done
                ));
                break;
            }
        }
    }
    bar.finish_and_clear();
    rep.cycles = dev.now() - start_cycle;
    if !dev.iommu_faults().is_empty() || !dev.model_errors().is_empty() {
        rep.corruptions += (dev.iommu_faults().len() + dev.model_errors().len()) as u64;
        rep.first_failure.get_or_insert(format!(
            "root complex saw {} IOMMU faults and {} malformed TLPs",
            dev.iommu_faults().len(),
            dev.model_errors().len()
        ));
    }
    Ok(rep)
}
