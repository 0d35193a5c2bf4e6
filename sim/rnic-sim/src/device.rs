//! [`SimDevice`]: the Verilated `rnic_core` plus the root-complex model,
//! behind the `rnic_device::Device` trait; one NIC of a [`SimWorld`].

use std::cell::RefCell;
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::sync::Arc;

use rnic_device::{Device, DeviceError, DmaBuffer, HostMemory, IrqWait, Result as DevResult};

use crate::mac::MacStats;
use crate::ports::Model;
use crate::root_complex::{IommuFault, ModelError, RootComplex, RootComplexConfig, Stats};
use crate::spi_flash::{SpiFlash, SpiFlashConfig};
use crate::verilated::ModelKnobs;
use crate::world::{NicInfo, SimWorld, World, WorldConfig};
use crate::SimError;

/// How a simulated NIC is built.
#[derive(Debug, Clone, PartialEq)]
pub struct SimConfig {
    /// `DATA_W` of the model: 64 or 256.
    pub data_w: u32,
    /// Which build of the core: its knobs (default: every verb, both
    /// transports).
    pub knobs: ModelKnobs,
    /// The one seed every random choice derives from (root complex and the
    /// RTL's `--x-initial unique` register values).
    pub seed: u64,
    pub root_complex: RootComplexConfig,
    /// Write an FST waveform of the whole run here.
    pub wave: Option<PathBuf>,
    /// The clock `now()` counts, for Gb/s figures.
    pub clock_mhz: f64,
    /// Cycles `rst` is held high at the start.
    pub reset_cycles: u64,
    /// Size of BAR0.
    pub bar_len: u64,
    /// Cycles one `Device::idle` call advances.
    pub idle_cycles: u64,
}

impl Default for SimConfig {
    fn default() -> Self {
        Self {
            data_w: 64,
            knobs: ModelKnobs::Full,
            seed: 1,
            root_complex: RootComplexConfig::default(),
            wave: None,
            clock_mhz: 250.0,
            reset_cycles: 16,
            bar_len: 0x1_0000,
            idle_cycles: 16,
        }
    }
}

/// A simulated rnic: the Verilated RTL driven by the root-complex model.
///
/// A cheap cloneable handle to one NIC of a [`SimWorld`] (clones share
/// it). Every call that advances time advances the whole world. Single
/// threaded: every method runs simulation steps on the calling thread; host
/// code reads DMA memory (through [`DmaBuffer`]) between them.
#[derive(Clone)]
pub struct SimDevice {
    core: Rc<RefCell<World>>,
    index: usize,
    info: Rc<NicInfo>,
}

impl SimDevice {
    /// A world of one NIC (64 or 256 bits): build the model, open the
    /// waveform if asked, and run the reset sequence. Its MAC goes nowhere
    /// (frames it sends are counted and dropped); for loopback or a fabric
    /// use [`SimWorld::new`].
    pub fn new(cfg: SimConfig) -> Result<Self, SimError> {
        Ok(SimWorld::new(WorldConfig::from(cfg))?.device(0))
    }

    /// A device around any [`Model`] (for tests with a stand-in NIC).
    pub fn with_custom_model(cfg: SimConfig, model: Box<dyn Model>) -> Result<Self, SimError> {
        Ok(SimWorld::with_models(WorldConfig::from(cfg), vec![model])?.device(0))
    }

    pub(crate) fn from_world(core: Rc<RefCell<World>>, index: usize, info: Rc<NicInfo>) -> Self {
        Self { core, index, info }
    }

    /// Index of this NIC in its world.
    pub fn index(&self) -> usize {
        self.index
    }

    /// The world this NIC lives in.
    pub fn world(&self) -> SimWorld {
        SimWorld::from_core(self.core.clone())
    }

    /// Counters of this NIC's MAC.
    pub fn mac_stats(&self) -> MacStats {
        self.core.borrow().mac_stats(self.index)
    }

    fn with<T>(&self, f: impl FnOnce(&mut RootComplex) -> T) -> T {
        f(&mut self.core.borrow_mut().nics[self.index].rc)
    }

    /// This NIC's configuration (its seed and waveform file within the world).
    pub fn config(&self) -> &SimConfig {
        &self.info.cfg
    }

    /// Advance the world `cycles` clock cycles.
    pub fn run(&self, cycles: u64) {
        self.core.borrow_mut().run(cycles);
    }

    /// Run the world until `cond` (on this NIC's root complex) holds
    /// (checked between cycles) or `budget` cycles pass; returns whether it
    /// held.
    pub fn run_until(&self, budget: u64, mut cond: impl FnMut(&RootComplex) -> bool) -> bool {
        let i = self.index;
        let mut g = self.core.borrow_mut();
        for _ in 0..budget {
            if cond(&g.nics[i].rc) {
                return true;
            }
            g.step();
        }
        cond(&g.nics[i].rc)
    }

    /// Run until nothing is queued or in flight at this NIC's root complex
    /// (all posted writes visible), at most `budget` cycles.
    pub fn drain(&self, budget: u64) -> bool {
        self.run_until(budget, |rc| rc.quiescent())
    }

    pub fn iommu_faults(&self) -> Vec<IommuFault> {
        self.with(|rc| rc.iommu_faults().to_vec())
    }

    /// Model errors of this NIC (PCIe side and MAC side).
    pub fn model_errors(&self) -> Vec<ModelError> {
        self.with(|rc| rc.model_errors().to_vec())
    }

    pub fn stats(&self) -> Stats {
        self.with(|rc| rc.stats())
    }

    /// Digest of all TLP traffic of this NIC so far (equal for equal seeds).
    pub fn digest(&self) -> u64 {
        self.with(|rc| rc.digest())
    }

    /// Set `cfg_max_payload` (PCIe encoding: 0 = 128 B, 1 = 256 B, 2 = 512 B).
    ///
    /// # Panics
    /// On a code above 2 (the root complex supports MPS up to 512 B).
    pub fn set_max_payload(&self, code: u8) {
        assert!(
            code <= 2,
            "max payload code {code}: supported are 0..=2 (128..512 B)"
        );
        self.with(|rc| rc.set_max_payload(code));
    }

    /// Set `cfg_max_read_req` (PCIe encoding: 0 = 128 B ... 5 = 4096 B).
    ///
    /// # Panics
    /// On a code above 5 (not a valid encoding).
    pub fn set_max_read_req(&self, code: u8) {
        assert!(
            code <= 5,
            "max read request code {code}: supported are 0..=5 (128..4096 B)"
        );
        self.with(|rc| rc.set_max_read_req(code));
    }

    /// Allocate DMA memory with a bus address below 4 GiB (32-bit
    /// addressing); `alloc_dma` gives addresses above 4 GiB.
    pub fn alloc_dma_below_4g(&self, len: usize) -> DevResult<DmaBuffer> {
        self.alloc(len, true)
    }

    fn alloc(&self, len: usize, below_4g: bool) -> DevResult<DmaBuffer> {
        let mem = Arc::new(HostMemory::new(len)?);
        let ptr = mem.as_ptr();
        let bus = self
            .with(|rc| rc.map(mem.clone(), below_4g))
            .ok_or(DeviceError::DmaAlloc(len))?;
        // SAFETY: `mem` is `len` bytes (at least), lives as long as the Arc,
        // and is only accessed through raw pointers.
        Ok(unsafe { DmaBuffer::from_raw(ptr, len, bus, mem) })
    }

    /// Start (or restart) writing an FST waveform from the current cycle.
    pub fn start_wave(&self, path: &Path) -> Result<(), SimError> {
        let mut g = self.core.borrow_mut();
        match g.nics[self.index].vl() {
            Some(v) => v.trace_open(path),
            None => Err(SimError::NoRtl),
        }
    }

    /// Stop writing the waveform (flushes and closes the file).
    pub fn stop_wave(&self) {
        if let Some(v) = self.core.borrow_mut().nics[self.index].vl() {
            v.trace_close();
        }
    }

    /// Put a configuration flash on this NIC's flash pins (contents from
    /// `cfg.file` if it exists) and power the board on: the configuration
    /// logic picks the slot to boot from the flash.
    pub fn attach_flash(&self, cfg: SpiFlashConfig) -> Result<(), SimError> {
        let f = SpiFlash::new(cfg)?;
        self.core.borrow_mut().nics[self.index].flash = Some(Box::new(f));
        Ok(())
    }

    /// Access the flash (None without one).
    pub fn with_flash<T>(&self, f: impl FnOnce(&mut SpiFlash) -> T) -> Option<T> {
        let mut g = self.core.borrow_mut();
        g.nics[self.index].flash.as_mut().map(|x| f(x))
    }

    /// Write the flash contents to its file (no-op without flash or file).
    pub fn save_flash(&self) -> Result<(), SimError> {
        self.with_flash(|f| f.save()).unwrap_or(Ok(()))
    }

    /// Direct access to the root complex (for tests and harnesses).
    pub fn with_root_complex<T>(&self, f: impl FnOnce(&mut RootComplex) -> T) -> T {
        self.with(f)
    }
}

impl Device for SimDevice {
    fn name(&self) -> String {
        self.info.name.clone()
    }

    fn bar_len(&self) -> u64 {
        self.info.cfg.bar_len
    }

    fn read32(&self, offset: u64) -> DevResult<u32> {
        self.check_offset(offset)?;
        let i = self.index;
        let mut g = self.core.borrow_mut();
        let tag = g.nics[i].rc.mmio_read_start(offset);
        let timeout = g.nics[i].rc.config().mmio_timeout;
        for _ in 0..timeout {
            g.step();
            if let Some(r) = g.nics[i].rc.mmio_read_poll(tag) {
                return r;
            }
        }
        g.nics[i].rc.mmio_read_abandon(tag);
        Err(DeviceError::Timeout(timeout))
    }

    fn write32(&self, offset: u64, value: u32) -> DevResult<()> {
        self.check_offset(offset)?;
        self.with(|rc| rc.mmio_write(offset, value));
        Ok(())
    }

    fn alloc_dma(&self, len: usize) -> DevResult<DmaBuffer> {
        self.alloc(len, false)
    }

    fn free_dma(&self, buf: &DmaBuffer) -> DevResult<()> {
        self.with(|rc| {
            let ok = rc
                .iommu()
                .mappings()
                .iter()
                .any(|m| m.bus == buf.bus_addr() && m.memory().as_ptr() == buf.as_ptr());
            if !ok {
                return Err(DeviceError::Other(format!(
                    "DMA buffer at {:#x} is not mapped",
                    buf.bus_addr()
                )));
            }
            rc.unmap(buf.bus_addr());
            Ok(())
        })
    }

    fn wait_irq(&self, vector: u32, budget: u64) -> DevResult<IrqWait> {
        if vector >= 32 {
            return Err(DeviceError::Other(format!(
                "MSI vector {vector} out of range (0..32)"
            )));
        }
        let i = self.index;
        let mut g = self.core.borrow_mut();
        for _ in 0..=budget {
            if g.nics[i].rc.take_msi(vector) {
                return Ok(IrqWait::Fired);
            }
            g.step();
        }
        Ok(IrqWait::TimedOut)
    }

    fn idle(&self) {
        self.core.borrow_mut().run(self.info.cfg.idle_cycles);
    }

    fn now(&self) -> u64 {
        self.core.borrow().now()
    }

    fn clock_mhz(&self) -> f64 {
        self.info.cfg.clock_mhz
    }
}

impl SimDevice {
    fn check_offset(&self, offset: u64) -> DevResult<()> {
        if offset >= self.info.cfg.bar_len {
            return Err(DeviceError::OutOfBar {
                offset,
                bar_len: self.info.cfg.bar_len,
            });
        }
        if offset % 4 != 0 {
            return Err(DeviceError::Unaligned(offset));
        }
        Ok(())
    }
}
