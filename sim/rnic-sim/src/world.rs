//! [`SimWorld`]: N simulated NICs, each with its own root complex and host
//! memory (separate hosts), stepping in lockstep on one clock, their MAC
//! ports joined by the [`Fabric`].
//!
//! One world cycle: (1) frames the fabric delivers this cycle are queued at
//! their destination MAC; (2) every NIC runs one clock cycle (root complex,
//! MAC, RTL) in index order; (3) frames the NICs finished sending are
//! captured (pcap, window) and handed to the fabric. A frame never arrives
//! in the cycle it was sent, so the order NICs are stepped in does not
//! matter.
//!
//! With [`WorldConfig::parallel`] the NICs of step (2) run on worker threads
//! (NIC 0 on the calling thread, NIC `i` on worker `i`, or on the calling
//! thread when worker `i` has not started it by the time NIC 0 is done:
//! `src/lockstep.rs`), in lock-step: (1)
//! and (3), and everything else that touches the fabric, the capture or the
//! external ports, stay on the calling thread between the parallel phases.
//! NIC `i`'s cycle reads and writes only NIC `i`'s model, root complex, MAC
//! and the host memory mapped into its root complex, so as long as no two
//! NICs can reach the same memory (checked whenever a table changes; see
//! [`Parallel`]) the result is the serial one, bit for bit.

use std::cell::RefCell;
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;

use rand::Rng;

use crate::device::{SimConfig, SimDevice};
use crate::fabric::{Fabric, FabricConfig, FabricStats, PathStats, Routing};
use crate::host_memory::DmaMemory;
use crate::lockstep::Lockstep;
use crate::mac::{MacConfig, MacPort, MacStats};
use crate::pcap::{CaptureFile, FrameRing, WireFrame};
use crate::ports::{Model, PortsIn, PortsOut};
use crate::root_complex::{PortHook, RootComplex, RootComplexConfig};
use crate::spi_flash::SpiFlash;
use crate::stream_port::{StreamPort, StreamPortStats};
use crate::verilated::{ModelKnobs, VerilatedModel};
use crate::SimError;

/// Whether a world steps its NICs on worker threads
/// ([`WorldConfig::parallel`]).
///
/// With it on, a world of `n` NICs starts `n - 1` worker threads; in each
/// cycle the calling thread steps NIC 0 while worker `i` steps NIC `i` (a
/// worker that has not started its NIC by the time NIC 0 is done, e.g. for
/// want of a CPU, has it stepped by the calling thread instead:
/// [`World::worker_cycles_taken_back`]), and the fabric, the pcap capture,
/// the external ports and all host calls stay on the calling thread,
/// between cycles. The results are those of the serial world, bit for bit
/// (same cycles, frames, fabric counters, pcap): a NIC's cycle reads and
/// writes only its own model, root complex, MAC and host memory, and the
/// Verilated models draw random values only when they are built (RTL that
/// called `$random` at run time would draw from a per-thread generator).
/// A cycle falls back to the serial path unless every NIC is a Verilated
/// model without a configuration flash attached, and every host memory a
/// NIC can reach (mapped, or kept alive by a DMA in flight) is
/// [`DmaMemory::process_private`] (the simulator's own `HostMemory`) and
/// reachable by that NIC alone: one `HostMemory` mapped into two NICs' root
/// complexes, or memory of another party (a guest's RAM mapped with
/// `map_at`), keeps the world serial. The memory check runs again whenever
/// an IOMMU table changes, not every cycle.
///
/// Workers spin for a while between cycles (then yield, then park): worth it
/// when the machine has a free core per NIC, harmful when many worlds share
/// few cores (the test suite), hence off by default. The environment
/// variable `RNIC_SIM_THREADS` overrides the configuration of every world:
/// `0`/`off`, `1`/`on` or `auto`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Parallel {
    /// Every NIC on the calling thread, one after the other.
    #[default]
    Off,
    /// One thread per NIC whenever the world qualifies (see above).
    On,
    /// On when the machine has at least one hardware thread per NIC
    /// (`std::thread::available_parallelism`), else off.
    Auto,
}

impl Parallel {
    /// The environment variable that overrides every world's setting.
    pub const ENV: &'static str = "RNIC_SIM_THREADS";

    /// The setting `RNIC_SIM_THREADS` asks for (None: not set).
    pub fn from_env() -> Result<Option<Self>, SimError> {
        match std::env::var(Self::ENV) {
            Ok(v) => Self::parse(&v).map(Some),
            Err(std::env::VarError::NotPresent) => Ok(None),
            Err(e) => Err(SimError::Config(format!("{}: {e}", Self::ENV))),
        }
    }

    /// `0`/`off`, `1`/`on`, `auto` (case-insensitive).
    pub fn parse(s: &str) -> Result<Self, SimError> {
        match s.trim().to_ascii_lowercase().as_str() {
            "0" | "off" => Ok(Self::Off),
            "1" | "on" => Ok(Self::On),
            "auto" => Ok(Self::Auto),
            _ => Err(SimError::Config(format!(
                "{}={s:?}: one of 0, 1, off, on, auto",
                Self::ENV
            ))),
        }
    }

    /// Whether a world of `nics` NICs gets worker threads (the environment
    /// variable first, then `self`).
    pub fn enabled(self, nics: usize) -> Result<bool, SimError> {
        let mode = Self::from_env()?.unwrap_or(self);
        Ok(nics > 1
            && match mode {
                Self::Off => false,
                Self::On => true,
                Self::Auto => std::thread::available_parallelism().map_or(1, |n| n.get()) >= nics,
            })
    }
}

/// How a world is built.
#[derive(Debug, Clone, PartialEq)]
pub struct WorldConfig {
    /// Number of NICs (each with its own host).
    pub nics: usize,
    /// `DATA_W` of every NIC: 64 or 256.
    pub data_w: u32,
    /// The build of every NIC (its knobs); not every width is built with
    /// every knob set ([`ModelKnobs::widths`]).
    pub knobs: ModelKnobs,
    /// The one seed every random choice derives from (root complexes, RTL
    /// reset values, fabric, MACs).
    pub seed: u64,
    /// Root complex of every host.
    pub root_complex: RootComplexConfig,
    pub fabric: FabricConfig,
    pub mac: MacConfig,
    /// With one NIC: its frames come back to it through the fabric. Off:
    /// they are counted (`FabricStats::unrouted`) and dropped.
    pub loopback: bool,
    /// Fabric endpoints beyond the NICs that lead out of the simulation
    /// (endpoint `nics + k` is external port `k`), connected with
    /// [`SimWorld::connect_external`] to e.g. a QEMU guest's NIC.
    pub external_ports: usize,
    /// Capture every frame on the wire here (`.pcapng`: with fates).
    pub pcap: Option<PathBuf>,
    /// Keep the last this many frames for [`SimWorld::dump_window`] (0: off).
    pub pcap_window: usize,
    /// FST waveform of each NIC; with several NICs `x.fst` becomes
    /// `x.nic0.fst`, `x.nic1.fst`, ...
    pub wave: Option<PathBuf>,
    /// The clock cycles count, for Gb/s figures and pcap timestamps.
    pub clock_mhz: f64,
    /// Cycles `rst` is held high at the start.
    pub reset_cycles: u64,
    /// Size of BAR0.
    pub bar_len: u64,
    /// Cycles one `Device::idle` call advances.
    pub idle_cycles: u64,
    /// Step the NICs on worker threads, one per NIC (default: off; the
    /// environment variable `RNIC_SIM_THREADS` overrides it). Same results
    /// as the serial world; see [`Parallel`] for when a cycle falls back to
    /// the serial path.
    pub parallel: Parallel,
}

impl Default for WorldConfig {
    fn default() -> Self {
        let s = SimConfig::default();
        Self {
            nics: 2,
            data_w: s.data_w,
            knobs: s.knobs,
            seed: s.seed,
            root_complex: s.root_complex,
            fabric: FabricConfig::ideal(),
            mac: MacConfig::default(),
            loopback: false,
            external_ports: 0,
            pcap: None,
            pcap_window: 0,
            wave: None,
            clock_mhz: s.clock_mhz,
            reset_cycles: s.reset_cycles,
            bar_len: s.bar_len,
            idle_cycles: s.idle_cycles,
            parallel: Parallel::Off,
        }
    }
}

impl From<SimConfig> for WorldConfig {
    /// One NIC; its MAC goes nowhere (no loopback).
    fn from(c: SimConfig) -> Self {
        Self {
            nics: 1,
            data_w: c.data_w,
            knobs: c.knobs,
            seed: c.seed,
            root_complex: c.root_complex,
            wave: c.wave,
            clock_mhz: c.clock_mhz,
            reset_cycles: c.reset_cycles,
            bar_len: c.bar_len,
            idle_cycles: c.idle_cycles,
            ..Self::default()
        }
    }
}

fn splitmix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

impl WorldConfig {
    /// Seed of NIC `i`'s root complex (NIC 0 uses the world seed itself, so
    /// a one-NIC world runs exactly like `SimDevice::new` with that seed).
    pub fn nic_seed(&self, i: usize) -> u64 {
        if i == 0 {
            self.seed
        } else {
            splitmix(self.seed ^ (i as u64).wrapping_mul(0xA076_1D64_78BD_642F))
        }
    }

    /// Waveform file of NIC `i`.
    pub fn wave_path(&self, i: usize) -> Option<PathBuf> {
        let w = self.wave.as_ref()?;
        if self.nics <= 1 {
            return Some(w.clone());
        }
        let stem = w.file_stem().map(|s| s.to_string_lossy().into_owned());
        let name = match (stem, w.extension()) {
            (Some(s), Some(e)) => format!("{s}.nic{i}.{}", e.to_string_lossy()),
            (Some(s), None) => format!("{s}.nic{i}"),
            _ => format!("nic{i}.fst"),
        };
        Some(w.with_file_name(name))
    }

    /// The [`SimConfig`] NIC `i` sees (its seed and waveform file).
    pub fn nic_config(&self, i: usize) -> SimConfig {
        SimConfig {
            data_w: self.data_w,
            knobs: self.knobs,
            seed: self.nic_seed(i),
            root_complex: self.root_complex.clone(),
            wave: self.wave_path(i),
            clock_mhz: self.clock_mhz,
            reset_cycles: self.reset_cycles,
            bar_len: self.bar_len,
            idle_cycles: self.idle_cycles,
        }
    }
}

pub(crate) enum AnyModel {
    Verilated(Box<VerilatedModel>),
    Custom(Box<dyn Model>),
}

pub(crate) struct NicInfo {
    pub(crate) name: String,
    pub(crate) cfg: SimConfig,
}

pub(crate) struct NicSlot {
    model: AnyModel,
    pub(crate) rc: RootComplex,
    mac: MacPort,
    info: Rc<NicInfo>,
    /// Configuration flash and boot logic, once attached.
    pub(crate) flash: Option<Box<SpiFlash>>,
    /// Cycles of reset left in a reconfiguration.
    reconfig_left: u64,
    /// Cycles of reset left in a function-level reset.
    flr_left: u64,
    /// The world's `reset_cycles` (at least 1), for reconfigurations.
    reconfig_cycles: u64,
    /// Its clock stopped ([`World::park`]).
    parked: bool,
    /// Frames the fabric delivered while it was parked (dropped).
    parked_drops: u64,
}

/// Two hooks driven in turn (the MAC and the flash).
struct Both<'a, A: PortHook, B: PortHook>(&'a mut A, &'a mut B);

impl<A: PortHook, B: PortHook> PortHook for Both<'_, A, B> {
    #[inline]
    fn drive(&mut self, cycle: u64, in_reset: bool, inp: &mut PortsIn) {
        self.0.drive(cycle, in_reset, inp);
        self.1.drive(cycle, in_reset, inp);
    }
    #[inline]
    fn sample(&mut self, cycle: u64, inp: &PortsIn, out: &PortsOut) {
        self.0.sample(cycle, inp, out);
        self.1.sample(cycle, inp, out);
    }
}

impl NicSlot {
    /// One clock cycle of this NIC: root complex, MAC (and flash), RTL,
    /// and its reset counters. Touches nothing outside the slot but the
    /// host memory mapped into its root complex (and never `info`): the
    /// parallel world runs it on a worker thread.
    #[inline]
    fn step(&mut self) {
        let n = self;
        match (&mut n.model, &mut n.flash) {
            (AnyModel::Verilated(m), None) => n.rc.cycle_with(&mut **m, &mut n.mac),
            (AnyModel::Custom(m), None) => n.rc.cycle_with(&mut **m, &mut n.mac),
            (AnyModel::Verilated(m), Some(f)) => {
                n.rc.cycle_with(&mut **m, &mut Both(&mut n.mac, &mut **f))
            }
            (AnyModel::Custom(m), Some(f)) => {
                n.rc.cycle_with(&mut **m, &mut Both(&mut n.mac, &mut **f))
            }
        }
        if n.flash.is_some() {
            n.reconfig_step(n.reconfig_cycles);
        }
        if n.flr_left > 0 {
            n.flr_left -= 1;
            if n.flr_left == 0 {
                n.rc.set_reset(false);
            }
        }
    }

    /// Whether this NIC may run on a worker thread: a Verilated model (a
    /// custom `Model` may share state with the test that made it) and no
    /// flash (it writes files and is not needed at speed).
    #[inline]
    fn thread_movable(&self) -> bool {
        matches!(self.model, AnyModel::Verilated(_)) && self.flash.is_none()
    }

    /// The board's reconfiguration: on a request from the NIC, hold it in
    /// reset, then boot the slot the flash selects.
    #[inline(never)]
    fn reconfig_step(&mut self, reset_cycles: u64) {
        let Some(f) = self.flash.as_mut() else { return };
        if self.reconfig_left > 0 {
            self.reconfig_left -= 1;
            if self.reconfig_left == 0 {
                f.select_boot();
                self.rc.set_reset(false);
            }
        } else if f.take_reconfig() {
            self.reconfig_left = reset_cycles;
            self.rc.set_reset(true);
        }
    }

    pub(crate) fn vl(&mut self) -> Option<&mut VerilatedModel> {
        match &mut self.model {
            AnyModel::Verilated(m) => Some(m),
            AnyModel::Custom(_) => None,
        }
    }
}

static INSTANCES: AtomicU32 = AtomicU32::new(0);

/// The state of a world: NICs, fabric, captures. Reached through
/// [`SimWorld`] (and [`SimDevice`]) handles.
pub struct World {
    cfg: WorldConfig,
    pub(crate) nics: Vec<NicSlot>,
    fabric: Fabric,
    cycle: u64,
    capture: Option<CaptureFile>,
    ring: FrameRing,
    capture_error: Option<SimError>,
    /// External ports (`None`: not connected yet).
    externals: Vec<Option<StreamPort>>,
    /// Frames for external ports that never had a peer.
    external_unconnected: Vec<u64>,
    /// Worker threads, one per NIC but the first (`WorldConfig::parallel`).
    pool: Option<Lockstep<NicSlot>>,
    /// Each NIC's `Iommu::generation` when `mem_disjoint` was worked out.
    mem_checked: Vec<u64>,
    /// No two NICs can reach the same host memory, and all of it is
    /// process-private (valid while `mem_checked` is current).
    mem_disjoint: bool,
    /// Cycles whose NICs ran on the worker threads.
    parallel_cycles: u64,
    /// NIC cycles of those that the calling thread ran for a worker that
    /// had not started them in time.
    nics_stolen: u64,
    /// NICs parked ([`World::park`]); the worker threads run only when
    /// none is.
    parked: usize,
}

/// Cycles between two polls of the external ports' sockets.
const EXTERNAL_POLL: u64 = 256;

impl World {
    /// Cycles run so far.
    pub fn now(&self) -> u64 {
        self.cycle
    }

    pub fn config(&self) -> &WorldConfig {
        &self.cfg
    }

    /// Number of NICs.
    pub fn nics(&self) -> usize {
        self.nics.len()
    }

    /// NIC `i`'s root complex (its host).
    pub fn root_complex(&self, i: usize) -> &RootComplex {
        &self.nics[i].rc
    }

    pub fn root_complex_mut(&mut self, i: usize) -> &mut RootComplex {
        &mut self.nics[i].rc
    }

    pub fn fabric(&self) -> &Fabric {
        &self.fabric
    }

    pub fn fabric_mut(&mut self) -> &mut Fabric {
        &mut self.fabric
    }

    pub fn mac_stats(&self, i: usize) -> MacStats {
        self.nics[i].mac.stats()
    }

    /// Nothing in flight anywhere: fabric empty, MACs idle, every root
    /// complex quiescent.
    pub fn quiescent(&self) -> bool {
        self.fabric.in_flight() == 0 && self.nics.iter().all(|n| n.mac.idle() && n.rc.quiescent())
    }

    /// One clock cycle of the whole world.
    #[inline]
    pub fn step(&mut self) {
        let now = self.cycle;
        if self.fabric.next_due() <= now {
            self.deliver(now);
        }
        if self.pool.is_some() && self.parked == 0 && self.parallel_ok() {
            if let Some(p) = self.pool.as_mut() {
                self.nics_stolen += p.run(&mut self.nics) as u64;
            }
            self.parallel_cycles += 1;
        } else {
            for n in &mut self.nics {
                if !n.parked {
                    n.step();
                }
            }
        }
        if self.nics.iter().any(|n| n.mac.events) {
            self.collect();
        }
        if !self.externals.is_empty() && now % EXTERNAL_POLL == 0 {
            self.poll_externals(now);
        }
        self.cycle += 1;
    }

    /// Whether this cycle's NICs may run on the worker threads: all of
    /// them movable ([`NicSlot::thread_movable`]) and their host memory
    /// disjoint. The memory is looked at again only when an IOMMU table
    /// changed since the last look.
    #[inline]
    fn parallel_ok(&mut self) -> bool {
        let mut stale = false;
        for (n, &g) in self.nics.iter().zip(&self.mem_checked) {
            if !n.thread_movable() {
                return false;
            }
            stale |= n.rc.iommu().generation() != g;
        }
        if stale {
            self.check_memory();
        }
        self.mem_disjoint
    }

    /// Work out `mem_disjoint` from every memory each NIC can reach.
    #[cold]
    #[inline(never)]
    fn check_memory(&mut self) {
        let mut ranges: Vec<(usize, usize, usize)> = Vec::new();
        let mut private = true;
        for (i, n) in self.nics.iter().enumerate() {
            n.rc.for_each_memory(|m: &Arc<dyn DmaMemory>| {
                private &= m.process_private();
                let start = m.as_ptr() as usize;
                ranges.push((start, start + m.len().max(1), i));
            });
        }
        ranges.sort_unstable();
        // Ranges sorted by start: a range overlaps an earlier one iff it
        // starts before the furthest end so far; remember whose that is.
        let mut disjoint = true;
        let mut reach: Option<(usize, usize)> = None; // (end, nic)
        for &(start, end, nic) in &ranges {
            if let Some((e, owner)) = reach {
                if start < e && owner != nic {
                    disjoint = false;
                    break;
                }
                if end > e {
                    reach = Some((end, nic));
                }
            } else {
                reach = Some((end, nic));
            }
        }
        self.mem_disjoint = private && disjoint;
        for (g, n) in self.mem_checked.iter_mut().zip(&self.nics) {
            *g = n.rc.iommu().generation();
        }
    }

    /// Cycles whose NICs ran on worker threads ([`WorldConfig::parallel`]);
    /// the others ran serially.
    pub fn parallel_cycles(&self) -> u64 {
        self.parallel_cycles
    }

    /// Of the NIC cycles that [`World::parallel_cycles`] handed to the
    /// worker threads, those the calling thread ran itself because their
    /// worker had not started them when it was done with NIC 0 (a worker
    /// without a CPU: an oversubscribed machine).
    pub fn worker_cycles_taken_back(&self) -> u64 {
        self.nics_stolen
    }

    /// Whether the world has worker threads (parallel stepping enabled for
    /// it); whether a cycle uses them is decided cycle by cycle.
    pub fn has_workers(&self) -> bool {
        self.pool.is_some()
    }

    /// Frames from the external peers enter the fabric (captured like the
    /// NICs' own); queued frames to them are written.
    #[inline(never)]
    fn poll_externals(&mut self, now: u64) {
        let base = self.nics.len();
        for k in 0..self.externals.len() {
            let Some(mut port) = self.externals[k].take() else {
                continue;
            };
            let mut frames = Vec::new();
            port.poll_rx(|f| {
                let mut v = self.fabric.take_buf();
                v.extend_from_slice(f);
                frames.push(v);
            });
            port.flush_tx();
            self.externals[k] = Some(port);
            for f in frames {
                self.transmit(base + k, now, f);
            }
        }
    }

    /// Start a function-level reset of NIC `i` (`VFIO_DEVICE_RESET`):
    /// [`RootComplex::function_reset`], then `rst` stays high for the
    /// world's `reset_cycles` while the other NICs and the fabric run on.
    /// [`World::in_reset`] tells when it is over.
    /// Stops (`true`) or restarts NIC `i`'s clock: a parked NIC is not
    /// evaluated, as if its clock were gated, while the rest of the world
    /// runs on. Its port is down: frames the fabric delivers to it are
    /// dropped and counted ([`World::parked_drops`]; a learning switch
    /// floods a frame for a MAC it has not learned yet to every port). Its
    /// host's MMIO gets no answer until it runs again. For a server of
    /// many functions that a client may never touch (the vfio-user server
    /// parks each until its first BAR0 access): an idle NIC's cycles cost
    /// as much as a busy one's.
    pub fn park(&mut self, i: usize, parked: bool) {
        let n = &mut self.nics[i];
        if n.parked != parked {
            n.parked = parked;
            if parked {
                self.parked += 1;
            } else {
                self.parked -= 1;
            }
        }
    }

    /// Frames dropped at NIC `i`'s port while it was parked.
    pub fn parked_drops(&self, i: usize) -> u64 {
        self.nics[i].parked_drops
    }

    /// Whether NIC `i`'s clock is stopped ([`World::park`]).
    pub fn parked(&self, i: usize) -> bool {
        self.nics[i].parked
    }

    pub fn reset_nic(&mut self, i: usize) {
        let n = &mut self.nics[i];
        n.rc.function_reset();
        n.flr_left = self.cfg.reset_cycles.max(1);
    }

    /// NIC `i` is held in reset (function-level reset or reconfiguration).
    pub fn in_reset(&self, i: usize) -> bool {
        self.nics[i].flr_left > 0 || self.nics[i].reconfig_left > 0
    }

    /// Run `cycles` cycles.
    pub fn run(&mut self, cycles: u64) {
        for _ in 0..cycles {
            self.step();
        }
    }

    #[inline(never)]
    fn deliver(&mut self, now: u64) {
        while let Some(d) = self.fabric.pop_due(now) {
            if d.dst < self.nics.len() {
                let n = &mut self.nics[d.dst];
                if n.parked {
                    n.parked_drops += 1;
                    self.fabric.recycle(d.data);
                } else {
                    n.mac.rx_push(d.data, d.bad);
                }
                continue;
            }
            let k = d.dst - self.nics.len();
            match &mut self.externals[k] {
                Some(p) => p.push_tx(&d.data, d.bad),
                None => self.external_unconnected[k] += 1,
            }
            self.fabric.recycle(d.data);
        }
    }

    #[inline(never)]
    fn collect(&mut self) {
        for i in 0..self.nics.len() {
            let n = &mut self.nics[i];
            if !n.mac.events {
                continue;
            }
            n.mac.events = false;
            for b in n.mac.spent.drain(..) {
                self.fabric.recycle(b);
            }
            for (cycle, ch, msg) in n.mac.errors.drain(..) {
                n.rc.report_error(cycle, ch, msg);
            }
            let mut done = std::mem::take(&mut n.mac.tx_done);
            for (cycle, data) in done.drain(..) {
                self.transmit(i, cycle, data);
            }
            let mac = &mut self.nics[i].mac;
            mac.tx_done = done;
            while mac.free.len() < 2 {
                mac.free.push(self.fabric.take_buf());
            }
        }
    }

    /// A frame leaves NIC `src` at `cycle`: capture it, hand it to the fabric.
    fn transmit(&mut self, src: usize, cycle: u64, data: Vec<u8>) {
        if self.capture.is_none() && !self.ring.enabled() {
            self.fabric.send(cycle, src, data);
            return;
        }
        let mut copy = self.fabric.take_buf();
        copy.extend_from_slice(&data);
        let rep = self.fabric.send(cycle, src, data);
        self.ring.push(cycle, src, &copy, rep);
        if let Some(c) = &mut self.capture {
            if let Err(e) = c.write(cycle, src, &copy, Some(rep)) {
                self.capture_error.get_or_insert(e);
                self.capture = None;
            }
        }
        self.fabric.recycle(copy);
    }
}

/// A world of simulated NICs; a cheap, cloneable handle (all clones and the
/// [`SimDevice`]s taken from it share one world). The handles are not
/// `Send`: one thread drives the world (its NICs may still step on worker
/// threads of their own, see [`Parallel`]).
#[derive(Clone)]
pub struct SimWorld {
    core: Rc<RefCell<World>>,
}

impl SimWorld {
    /// Build `cfg.nics` Verilated NICs, open waveforms and the pcap if
    /// asked, and run the reset sequence.
    pub fn new(cfg: WorldConfig) -> Result<Self, SimError> {
        Self::build(cfg, None)
    }

    /// A world around stand-in models (one per NIC; `cfg.nics` and
    /// `cfg.data_w` are taken from them).
    pub fn with_models(
        mut cfg: WorldConfig,
        models: Vec<Box<dyn Model>>,
    ) -> Result<Self, SimError> {
        let w = models
            .first()
            .map(|m| m.data_w())
            .ok_or_else(|| SimError::Config("with_models needs at least one model".into()))?;
        if models.iter().any(|m| m.data_w() != w) {
            return Err(SimError::Config("models of different DATA_W".into()));
        }
        cfg.nics = models.len();
        cfg.data_w = w;
        Self::build(cfg, Some(models))
    }

    fn build(cfg: WorldConfig, custom: Option<Vec<Box<dyn Model>>>) -> Result<Self, SimError> {
        let n = cfg.nics;
        if n == 0 || n > 64 {
            return Err(SimError::Config(format!("{n} NICs (1..=64 allowed)")));
        }
        if cfg.external_ports > 8 {
            return Err(SimError::Config(format!(
                "{} external ports (0..=8 allowed)",
                cfg.external_ports
            )));
        }
        let endpoints = n + cfg.external_ports;
        if !(cfg.clock_mhz.is_finite() && cfg.clock_mhz > 0.0) {
            return Err(SimError::Config(format!("clock {} MHz", cfg.clock_mhz)));
        }
        cfg.fabric.validate()?;
        // Stand-in models are never stepped on a worker: no threads for them.
        let threads = custom.is_none() && cfg.parallel.enabled(n)?;
        let mut custom = custom.map(|v| v.into_iter());
        let mut nics = Vec::with_capacity(n);
        for i in 0..n {
            let scfg = cfg.nic_config(i);
            let mut rc = RootComplex::new(scfg.root_complex.clone(), cfg.data_w, scfg.seed);
            let model = match custom.as_mut() {
                Some(it) => AnyModel::Custom(it.next().expect("one model per NIC")),
                None => {
                    // The RTL's initial register values come from the NIC's seed.
                    let x_seed: u32 = rc.rng().gen_range(1..=i32::MAX as u32);
                    let mut vl =
                        Box::new(VerilatedModel::with_knobs(cfg.data_w, cfg.knobs, x_seed)?);
                    if let Some(p) = &scfg.wave {
                        vl.trace_open(p)?;
                    }
                    AnyModel::Verilated(vl)
                }
            };
            let mac = MacPort::new(cfg.data_w, cfg.mac.clone(), splitmix(scfg.seed ^ 0x3AC));
            let k = INSTANCES.fetch_add(1, Ordering::Relaxed);
            nics.push(NicSlot {
                model,
                rc,
                mac,
                info: Rc::new(NicInfo {
                    name: format!("sim:{k}"),
                    cfg: scfg,
                }),
                flash: None,
                reconfig_left: 0,
                flr_left: 0,
                parked: false,
                parked_drops: 0,
                reconfig_cycles: cfg.reset_cycles.max(1),
            });
        }
        let routing = match (endpoints, cfg.loopback) {
            (1, true) => Routing::Loopback,
            (1, false) => Routing::Sink,
            (2, _) => Routing::PointToPoint,
            _ => Routing::Switch,
        };
        let fabric = Fabric::new(
            &cfg.fabric,
            endpoints,
            routing,
            f64::from(cfg.data_w / 8),
            splitmix(cfg.seed ^ 0xFAB1_1C00),
        )?;
        let capture = match &cfg.pcap {
            Some(p) => Some(CaptureFile::create(p, cfg.clock_mhz, endpoints)?),
            None => None,
        };
        let cfg_ext = cfg.external_ports;
        let pool = if threads {
            // SAFETY: `NicSlot::step` touches only the slot's model, root
            // complex, MAC and counters, never `info` (the `Rc` the slot
            // shares with the `SimDevice` handles); the Verilated model may
            // run on any thread as long as one thread at a time (the shim
            // makes its context the thread's before every call); host
            // memory is reached through raw pointers into `Send + Sync`
            // memory, and `parallel_ok` keeps every NIC's memory its own.
            // Slots with a flash or a custom model are never handed over
            // (`thread_movable`). No threads to be had (spawn error): the
            // world runs serially, as with `Parallel::Off` (same results).
            unsafe { Lockstep::new(n - 1, NicSlot::step, "rnic-sim-nic") }.ok()
        } else {
            None
        };
        let mut world = World {
            ring: FrameRing::new(cfg.pcap_window),
            cfg,
            nics,
            fabric,
            cycle: 0,
            capture,
            capture_error: None,
            externals: (0..cfg_ext).map(|_| None).collect(),
            external_unconnected: vec![0; cfg_ext],
            pool,
            mem_checked: vec![0; n],
            mem_disjoint: false,
            parallel_cycles: 0,
            nics_stolen: 0,
            parked: 0,
        };
        for nic in &mut world.nics {
            nic.rc.set_reset(true);
        }
        world.run(world.cfg.reset_cycles.max(1));
        for nic in &mut world.nics {
            nic.rc.set_reset(false);
        }
        Ok(Self {
            core: Rc::new(RefCell::new(world)),
        })
    }

    pub(crate) fn from_core(core: Rc<RefCell<World>>) -> Self {
        Self { core }
    }

    /// Number of NICs.
    pub fn nics(&self) -> usize {
        self.core.borrow().nics.len()
    }

    /// A handle to NIC `i`.
    ///
    /// # Panics
    /// If `i` is not below [`SimWorld::nics`].
    pub fn device(&self, i: usize) -> SimDevice {
        let info = {
            let g = self.core.borrow();
            assert!(i < g.nics.len(), "NIC {i} of {}", g.nics.len());
            g.nics[i].info.clone()
        };
        SimDevice::from_world(self.core.clone(), i, info)
    }

    /// Handles to all NICs, in index order.
    pub fn devices(&self) -> Vec<SimDevice> {
        (0..self.nics()).map(|i| self.device(i)).collect()
    }

    pub fn config(&self) -> WorldConfig {
        self.core.borrow().cfg.clone()
    }

    /// Cycles run so far.
    pub fn now(&self) -> u64 {
        self.core.borrow().cycle
    }

    /// Cycles whose NICs ran on worker threads (see [`Parallel`]).
    pub fn parallel_cycles(&self) -> u64 {
        self.core.borrow().parallel_cycles
    }

    /// Whether the world has worker threads (see [`Parallel`]).
    pub fn has_workers(&self) -> bool {
        self.core.borrow().pool.is_some()
    }

    /// Advance every NIC `cycles` cycles.
    pub fn run(&self, cycles: u64) {
        self.core.borrow_mut().run(cycles);
    }

    /// Run until `cond` holds (checked between cycles) or `budget` cycles
    /// pass; returns whether it held. `cond` must not use a handle of this
    /// world (the world is borrowed while it runs).
    pub fn run_until(&self, budget: u64, mut cond: impl FnMut(&World) -> bool) -> bool {
        let mut g = self.core.borrow_mut();
        for _ in 0..budget {
            if cond(&g) {
                return true;
            }
            g.step();
        }
        cond(&g)
    }

    /// Run until nothing is in flight anywhere (fabric, MACs, root
    /// complexes), at most `budget` cycles.
    pub fn drain(&self, budget: u64) -> bool {
        self.run_until(budget, |w| w.quiescent())
    }

    /// Access the world directly (fabric, root complexes).
    pub fn with_world<T>(&self, f: impl FnOnce(&mut World) -> T) -> T {
        f(&mut self.core.borrow_mut())
    }

    pub fn fabric_stats(&self) -> FabricStats {
        self.core.borrow().fabric.stats()
    }

    /// The fabric's per-path counters of the frames endpoint `src` (NIC
    /// `src`) sent: see [`Fabric::path_stats_from`].
    pub fn path_stats_from(&self, src: usize) -> Vec<PathStats> {
        self.core.borrow().fabric.path_stats_from(src).to_vec()
    }

    /// See [`Fabric::track_holes`]: the lost request packets and their
    /// repair times, in [`SimWorld::fabric_stats`]`.holes`.
    pub fn track_holes(&self, on: bool) {
        self.core.borrow_mut().fabric.track_holes(on);
    }

    /// See [`Fabric::set_drop_rate`].
    pub fn set_drop_rate(&self, path: Option<usize>, rate: f64) -> Result<(), SimError> {
        self.core.borrow_mut().fabric.set_drop_rate(path, rate)
    }

    pub fn mac_stats(&self, nic: usize) -> MacStats {
        self.core.borrow().mac_stats(nic)
    }

    /// Attach a connected peer to external port `k` (endpoint `nics + k`
    /// of the fabric); a peer attached before is replaced.
    pub fn connect_external(&self, k: usize, port: StreamPort) -> Result<(), SimError> {
        let mut g = self.core.borrow_mut();
        let n = g.externals.len();
        let slot = g
            .externals
            .get_mut(k)
            .ok_or_else(|| SimError::Config(format!("external port {k}: the world has {n}")))?;
        *slot = Some(port);
        Ok(())
    }

    /// Detach external port `k`'s peer (to attach it to another world);
    /// frames to the port are counted as unconnected from now on.
    pub fn disconnect_external(&self, k: usize) -> Option<StreamPort> {
        let mut g = self.core.borrow_mut();
        g.externals.get_mut(k)?.take()
    }

    /// Counters of external port `k` (frames to it before it was connected
    /// in `unconnected_out`); None if there is no such port.
    pub fn external_stats(&self, k: usize) -> Option<StreamPortStats> {
        let g = self.core.borrow();
        let slot = g.externals.get(k)?;
        let mut s = slot.as_ref().map(StreamPort::stats).unwrap_or_default();
        s.unconnected_out += g.external_unconnected[k];
        Some(s)
    }

    /// Why external port `k`'s peer is gone (None: connected and open, or
    /// never connected).
    pub fn external_closed(&self, k: usize) -> Option<String> {
        let g = self.core.borrow();
        g.externals.get(k)?.as_ref()?.closed().map(str::to_string)
    }

    /// Send `frame` as if NIC `from` had transmitted it now (captured, then
    /// through the fabric).
    pub fn send_frame(&self, from: usize, frame: &[u8]) {
        let mut g = self.core.borrow_mut();
        assert!(from < g.nics.len(), "NIC {from} out of range");
        let mut v = g.fabric.take_buf();
        v.extend_from_slice(frame);
        let now = g.cycle;
        g.transmit(from, now, v);
    }

    /// Queue `frame` straight into NIC `to`'s `s_axis_rx` (no fabric, not
    /// captured); `bad` sets `tuser` on its last beat. False if the RX
    /// queue is full (counted as an overflow drop).
    pub fn inject_frame(&self, to: usize, frame: &[u8], bad: bool) -> bool {
        let mut g = self.core.borrow_mut();
        let mut v = g.fabric.take_buf();
        v.extend_from_slice(frame);
        g.nics[to].mac.rx_push(v, bad)
    }

    /// Keep the last `n` frames on the wire (0: none; shrinking drops the
    /// oldest).
    pub fn set_window(&self, n: usize) {
        self.core.borrow_mut().ring.set_capacity(n);
    }

    /// The frames in the window, oldest first, with their fates.
    pub fn window(&self) -> Vec<WireFrame> {
        self.core.borrow().ring.frames().cloned().collect()
    }

    /// Write the window to `path` (`.pcapng`: with fate comments); returns
    /// the number of frames written. The window is kept.
    pub fn dump_window(&self, path: &Path) -> Result<usize, SimError> {
        let g = self.core.borrow();
        g.ring
            .dump(path, g.cfg.clock_mhz, g.nics.len() + g.externals.len())
    }

    pub fn clear_window(&self) {
        self.core.borrow_mut().ring.clear();
    }

    /// Start (or restart) capturing every frame to `path`.
    pub fn start_pcap(&self, path: &Path) -> Result<(), SimError> {
        let mut g = self.core.borrow_mut();
        let f = CaptureFile::create(path, g.cfg.clock_mhz, g.nics.len() + g.externals.len())?;
        if let Some(mut old) = g.capture.replace(f) {
            old.flush()?;
        }
        Ok(())
    }

    /// Flush the capture file; reports a write error that stopped the
    /// capture earlier.
    pub fn flush_pcap(&self) -> Result<(), SimError> {
        let mut g = self.core.borrow_mut();
        if let Some(e) = g.capture_error.take() {
            return Err(e);
        }
        match &mut g.capture {
            Some(c) => c.flush(),
            None => Ok(()),
        }
    }

    /// Flush and close the capture file.
    pub fn stop_pcap(&self) -> Result<(), SimError> {
        let r = self.flush_pcap();
        self.core.borrow_mut().capture = None;
        r
    }
}
