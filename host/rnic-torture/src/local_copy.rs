//! The data-before-completion check on one NIC, without the network
//! (`rnic torture --transport local-copy`): each message is a local DMA
//! copy work request of a per-message pattern into a destination buffer,
//! and the host checks every byte of it at the instant it sees the CQE. A
//! CQE that may pass its data (`--break cqe-ro`) is caught where the root
//! complex lets Relaxed-Ordering writes become visible late (the simulated
//! one does).
//!
//! Generic over [`Device`]: it needs one NIC and nothing else.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rnic_device::{Device, DmaBuffer};
use rnic_driver::{CompletionQueue, CopyWr, Cqe, Nic, SendQueue, WcStatus};
use rnic_harness::pattern;
use serde::Serialize;

use crate::{Break, Error, Result};

/// What a local-copy run does.
#[derive(Debug, Clone)]
pub struct Config {
    pub seed: u64,
    pub messages: u64,
    /// Send queues (each with its own CQ) used at once.
    pub qps: u32,
    pub min_size: u32,
    pub max_size: u32,
    /// Copies in flight per queue.
    pub window: u32,
    /// Only [`Break::CqeRo`]: with no responder, it is the one ordering
    /// layer a copy goes through.
    pub brk: Option<Break>,
}

impl Default for Config {
    fn default() -> Self {
        Self {
            seed: 1,
            messages: 1000,
            qps: 4,
            min_size: 1,
            max_size: 8192,
            window: 4,
            brk: None,
        }
    }
}

impl Config {
    /// Checks the parameters; the message is one line, for the user.
    pub fn validate(&self) -> Result<()> {
        let bad = |m: &str| Err(Error::Config(m.into()));
        if self.qps == 0 {
            return bad("--qps must be at least 1");
        }
        if self.min_size == 0 {
            return bad("--min-size must be at least 1 byte");
        }
        if self.max_size < self.min_size {
            return Err(Error::Config(format!(
                "--max-size ({}) is below --min-size ({})",
                self.max_size, self.min_size
            )));
        }
        if self.max_size > 16 << 20 {
            return bad("--max-size is limited to 16 MiB");
        }
        if self.window == 0 || self.window > 256 {
            return bad("--window must be 1..256");
        }
        if let Some(b) = self.brk.filter(|b| *b != Break::CqeRo) {
            return Err(Error::Config(format!(
                "--break {b} needs the network; --transport local-copy knows cqe-ro only"
            )));
        }
        Ok(())
    }
}

/// What a local-copy run saw.
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
    pub fn failed(&self) -> bool {
        self.violations
            + self.corruptions
            + self.lost_completions
            + self.duplicate_completions
            + self.out_of_order_completions
            + self.error_completions
            > 0
    }

    /// Counts DMA faults the environment saw (e.g. the simulated root
    /// complex's IOMMU faults and malformed TLPs) as corruption.
    pub fn add_dma_faults(&mut self, n: u64, what: String) {
        if n > 0 {
            self.corruptions += n;
            self.first_failure.get_or_insert(what);
        }
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

/// The pattern key of message `msg` on queue `q`.
fn key(seed: u64, q: usize, msg: u64) -> u64 {
    pattern::key(seed, q as u32, msg, 0)
}

/// Runs `cfg` on `nic`; `progress` gets the messages checked so far. The
/// switch it breaks (if any) is turned off again at the end.
pub fn run<D: Device>(nic: &Nic<D>, cfg: &Config, progress: &mut dyn FnMut(u64)) -> Result<Report> {
    cfg.validate()?;
    if nic.id().num_queues < cfg.qps {
        return Err(Error::Config(format!(
            "the NIC has {} queues; --qps {} is too many",
            nic.id().num_queues,
            cfg.qps
        )));
    }
    if let Some(b) = cfg.brk {
        nic.debug_switches().set(b, true)?;
    }
    let res = copies(nic, cfg, progress);
    if let Some(b) = cfg.brk {
        nic.debug_switches().set(b, false)?;
    }
    res
}

fn copies<D: Device>(nic: &Nic<D>, cfg: &Config, progress: &mut dyn FnMut(u64)) -> Result<Report> {
    let dev = nic.device();
    let seed = cfg.seed;
    let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0x7074_6f72_7475_7265);
    let stride = (cfg.max_size as usize + 64 + 4095) & !4095;
    let window = cfg.window as usize;
    let mut queues = Vec::new();
    for _ in 0..cfg.qps {
        let mut cq = nic.create_cq(256)?;
        let sq = nic.create_sq(256, &mut cq)?;
        let src = dev.alloc_dma(stride * window)?;
        let dst = dev.alloc_dma(stride * window)?;
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
        data_w: nic.id().data_w,
        transport: "local-copy",
        fabric: "none",
        broken: cfg.brk.map(Break::name),
        ..Report::default()
    };
    let start_cycle = dev.now();
    let mut issued = 0u64;
    let mut done = 0u64;
    let mut cqes: Vec<Cqe> = Vec::new();
    // A watchdog in device time: far above any healthy message latency.
    let watchdog_cycles = 2_000_000u64 + 64 * u64::from(cfg.max_size);
    let mut last_progress = dev.now();
    while done < cfg.messages {
        // Post: each queue fills its free slots.
        for (qi, q) in queues.iter_mut().enumerate() {
            let mut posted = false;
            for s in 0..window {
                if issued >= cfg.messages || q.slots[s].is_some() {
                    continue;
                }
                let len = rng.gen_range(cfg.min_size..=cfg.max_size) as usize;
                let src_off = s * stride + rng.gen_range(0..64);
                let dst_off = s * stride + rng.gen_range(0..64);
                let msg = q.posted;
                pattern::fill_buf(&q.src, src_off, len, key(seed, qi, msg));
                // Old bytes in the destination must differ from the new ones.
                pattern::fill_buf_stale(&q.dst, dst_off, len, key(seed, qi, msg));
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
                progress(done);
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
                let k = key(seed, qi, msg);
                if let Some(i) = pattern::check_buf(&q.dst, slot.dst_off, slot.len, k) {
                    // Stale now; once the writes in flight land, is it right?
                    for _ in 0..4096 {
                        dev.idle();
                    }
                    if pattern::check_buf(&q.dst, slot.dst_off, slot.len, k).is_none() {
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
    rep.cycles = dev.now() - start_cycle;
    Ok(rep)
}
