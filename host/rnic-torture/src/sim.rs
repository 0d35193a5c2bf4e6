//! Two simulated NICs joined by a named fabric, and the torture test on them
//! with the simulator's extras: draining the world before telling stale
//! bytes from corrupt ones, a pcap of the frames leading up to the first
//! failure, and FST waveforms of a cycle window (for a deterministic replay
//! that stops at the first failure).

use std::path::{Path, PathBuf};

use rnic_device::Device;
use rnic_sim::{ModelKnobs, Parallel, RootComplexConfig, SimDevice, SimWorld, WorldConfig};

use crate::torture::{self, Config, Failure, Hooks, Report, RunInfo};
use crate::{Break, Error, Result};

pub use rnic_harness::sim::{fabric, SimPair, PROFILE_NAMES};

/// How the simulated pair is built.
#[derive(Debug, Clone)]
pub struct SimOpts {
    pub data_w: u32,
    /// Which build of the core (knobs) both NICs are.
    pub knobs: ModelKnobs,
    pub seed: u64,
    /// Fabric profile name ([`FabricConfig::profile`]).
    pub fabric: String,
    pub root_complex: RootComplexConfig,
    /// Frames kept for the failure window (0: none).
    pub pcap_window: usize,
    /// Cycles one `Device::idle` advances (polling granularity).
    pub idle_cycles: u64,
    /// Step the two NICs on a thread each ([`Parallel`]; same results).
    pub parallel: Parallel,
    /// Debug switches turned on in both NICs before the run, besides the
    /// run's own (`Config::brk`): for the tests that watch what no torture
    /// check sees, such as `resend-after-cqe` on the wire.
    pub debug_switches: Vec<Break>,
}

impl Default for SimOpts {
    fn default() -> Self {
        Self {
            data_w: 64,
            knobs: ModelKnobs::Full,
            seed: 1,
            fabric: "ideal".into(),
            root_complex: RootComplexConfig::default(),
            pcap_window: 0,
            idle_cycles: 16,
            parallel: Parallel::Off,
            debug_switches: Vec::new(),
        }
    }
}

/// Two NICs of one world built from `o`, with their contexts and port
/// addresses set.
pub fn pair(o: &SimOpts) -> Result<SimPair> {
    SimPair::with_world(
        WorldConfig {
            nics: 2,
            data_w: o.data_w,
            knobs: o.knobs,
            seed: o.seed,
            root_complex: o.root_complex.clone(),
            fabric: fabric(&o.fabric)?,
            pcap_window: o.pcap_window,
            idle_cycles: o.idle_cycles.max(1),
            parallel: o.parallel,
            ..WorldConfig::default()
        },
        &o.fabric,
    )
}

/// What a report says of the pair it ran on.
pub fn run_info(p: &SimPair) -> RunInfo {
    RunInfo {
        fabric: p.fabric.clone(),
        data_w: p.data_w,
    }
}

/// Evidence a simulated torture run collects.
#[derive(Debug, Clone, Default)]
pub struct Evidence {
    /// Write the frame window here at the first failure (or, on a clean
    /// run, at the end).
    pub pcap: Option<PathBuf>,
    /// FST waveforms (`x.nic0.fst`, `x.nic1.fst` for `x.fst`) from this
    /// cycle until the first failure (or the end).
    pub wave: Option<(PathBuf, u64)>,
    /// End the run at the first failure.
    pub stop_on_failure: bool,
}

/// What a simulated torture run produced.
#[derive(Debug, Clone)]
pub struct Outcome {
    pub report: Report,
    /// Frames written to the pcap, and whether they are the failure window.
    pub pcap_frames: Option<(usize, bool)>,
    /// Waveform files written.
    pub wave_files: Vec<PathBuf>,
}

/// Waveform file of NIC `i` for base path `p`.
pub fn wave_path(p: &Path, i: usize) -> PathBuf {
    WorldConfig {
        wave: Some(p.to_path_buf()),
        nics: 2,
        ..WorldConfig::default()
    }
    .wave_path(i)
    .unwrap_or_else(|| p.to_path_buf())
}

struct SimHooks<'a> {
    world: SimWorld,
    devs: Vec<SimDevice>,
    ev: &'a Evidence,
    progress: &'a mut dyn FnMut(u64, u64),
    log: &'a mut dyn FnMut(&Failure),
    pcap_frames: Option<(usize, bool)>,
    wave_on: bool,
    wave_files: Vec<PathBuf>,
    error: Option<Error>,
    drain_budget: u64,
}

impl SimHooks<'_> {
    fn stop_wave(&mut self) {
        if self.wave_on {
            for d in &self.devs {
                d.stop_wave();
            }
            self.wave_on = false;
        }
    }
}

impl Hooks for SimHooks<'_> {
    fn tick(&mut self, now: u64, checked: u64) {
        (self.progress)(now, checked);
        if let Some((p, from)) = &self.ev.wave {
            if !self.wave_on && self.wave_files.is_empty() && now >= *from {
                for (i, d) in self.devs.iter().enumerate() {
                    let f = wave_path(p, i);
                    if let Err(e) = d.start_wave(&f) {
                        self.error.get_or_insert(e.into());
                    }
                    self.wave_files.push(f);
                }
                self.wave_on = true;
            }
        }
    }

    fn settle(&mut self) -> bool {
        // Everything in flight lands (fabric, MACs, posted writes).
        self.world.drain(self.drain_budget);
        true
    }

    fn snapshot(&mut self) {
        if let Some(p) = &self.ev.pcap {
            match self.world.dump_window(p) {
                Ok(n) => self.pcap_frames = Some((n, true)),
                Err(e) => {
                    self.error.get_or_insert(e.into());
                }
            }
        }
    }

    fn failure(&mut self, f: &Failure) {
        (self.log)(f);
    }

    fn first_failure(&mut self, _f: &Failure) -> bool {
        if self.ev.stop_on_failure {
            self.stop_wave();
        }
        self.ev.stop_on_failure
    }

    fn finish(&mut self, rep: &mut Report) {
        self.stop_wave();
        if let (Some(p), None) = (&self.ev.pcap, self.pcap_frames) {
            match self.world.dump_window(p) {
                Ok(n) => self.pcap_frames = Some((n, false)),
                Err(e) => {
                    self.error.get_or_insert(e.into());
                }
            }
        }
        let f = self.world.fabric_stats().total;
        for (k, v) in [
            ("sent", f.sent),
            ("delivered", f.delivered),
            ("dropped", f.dropped),
            ("duplicated", f.duplicated),
            ("corrupted", f.corrupted),
            ("reordered", f.reordered),
            ("bad_frames", f.bad_frames),
        ] {
            rep.counters.insert(format!("fabric.{k}"), v);
        }
        // Interrupts: the MSIs each host received (its root complex set
        // a pending bit), for a run that waited for them.
        if rep.events.is_some() {
            for (side, d) in ["a", "b"].iter().zip(&self.devs) {
                let n = d.with_root_complex(|rc| rc.msi_counts().iter().sum());
                rep.counters.insert(format!("{side}.msi"), n);
            }
        }
        // What the root complexes saw: a DMA outside the mapped buffers or
        // a malformed TLP is corruption too.
        for (i, d) in self.devs.iter().enumerate() {
            let faults = d.iommu_faults();
            let errors = d.model_errors();
            let n = (faults.len() + errors.len()) as u64;
            if n == 0 {
                continue;
            }
            rep.corruptions += n;
            let f = Failure {
                kind: "corruption".into(),
                cycle: d.now(),
                qp: 0,
                qpn_send: 0,
                qpn_recv: 0,
                msg: 0,
                messages_before: rep.messages,
                detail: format!(
                    "root complex of NIC {i}: {} IOMMU faults, {} model errors; first: {}",
                    faults.len(),
                    errors.len(),
                    faults
                        .first()
                        .map(|f| format!("{f:?}"))
                        .or_else(|| errors.first().map(|e| format!("{e:?}")))
                        .unwrap_or_default()
                ),
            };
            (self.log)(&f);
            rep.first_failure.get_or_insert(f);
        }
    }
}

/// Runs the torture test on a fresh simulated pair. `progress` gets
/// `(cycle, messages checked)` on every turn of the run loop, `log` every
/// failure as it is counted.
pub fn run_torture(
    o: &SimOpts,
    cfg: &Config,
    ev: &Evidence,
    progress: &mut dyn FnMut(u64, u64),
    log: &mut dyn FnMut(&Failure),
) -> Result<Outcome> {
    cfg.validate()?;
    let mut o = o.clone();
    o.seed = cfg.seed;
    if ev.pcap.is_some() && o.pcap_window == 0 {
        o.pcap_window = 256;
    }
    let pair = pair(&o)?;
    for &b in &o.debug_switches {
        pair.a.nic().debug_switches().set(b, true)?;
        pair.b.nic().debug_switches().set(b, true)?;
    }
    let mut hooks = SimHooks {
        world: pair.world.clone(),
        devs: pair.world.devices(),
        ev,
        progress,
        log,
        pcap_frames: None,
        wave_on: false,
        wave_files: Vec::new(),
        error: None,
        drain_budget: 10_000_000,
    };
    let report = torture::run(
        &pair.a,
        pair.addrs[0],
        &pair.b,
        pair.addrs[1],
        cfg,
        &run_info(&pair),
        &mut hooks,
    )?;
    hooks.stop_wave();
    if let Some(e) = hooks.error.take() {
        return Err(e);
    }
    Ok(Outcome {
        report,
        pcap_frames: hooks.pcap_frames,
        wave_files: hooks.wave_files,
    })
}

/// Runs the local-copy check ([`crate::local_copy`]) on a fresh simulated
/// NIC of `data_w` bits (FST waveforms of the whole run into `wave`), and
/// counts what its root complex saw go wrong (IOMMU faults, malformed
/// TLPs) as corruption.
pub fn run_local_copy(
    data_w: u32,
    knobs: ModelKnobs,
    wave: Option<PathBuf>,
    cfg: &crate::local_copy::Config,
    progress: &mut dyn FnMut(u64),
) -> Result<crate::local_copy::Report> {
    cfg.validate()?;
    let dev = SimDevice::new(rnic_sim::SimConfig {
        data_w,
        knobs,
        seed: cfg.seed,
        wave,
        ..rnic_sim::SimConfig::default()
    })?;
    let nic = rnic_driver::Nic::open(dev)?;
    let mut rep = crate::local_copy::run(&nic, cfg, progress)?;
    let dev = nic.device();
    let (faults, errors) = (dev.iommu_faults().len(), dev.model_errors().len());
    rep.add_dma_faults(
        (faults + errors) as u64,
        format!("root complex saw {faults} IOMMU faults and {errors} malformed TLPs"),
    );
    Ok(rep)
}
