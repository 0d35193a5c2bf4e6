//! [`SimDevice`]: the Verilated `rnic_core` plus the root-complex model,
//! behind the `rnic_device::Device` trait.

use std::cell::RefCell;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;

use rand::Rng;
use rnic_device::{Device, DeviceError, DmaBuffer, HostMemory, IrqWait, Result as DevResult};

use crate::ports::Model;
use crate::root_complex::{IommuFault, ModelError, RootComplex, RootComplexConfig, Stats};
use crate::verilated::VerilatedModel;
use crate::SimError;

/// How a simulated NIC is built.
#[derive(Debug, Clone, PartialEq)]
pub struct SimConfig {
    /// `DATA_W` of the model: 64 or 256.
    pub data_w: u32,
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

enum AnyModel {
    Verilated(Box<VerilatedModel>),
    Custom(Box<dyn Model>),
}

struct Inner {
    model: AnyModel,
    rc: RootComplex,
}

impl Inner {
    #[inline]
    fn run(&mut self, cycles: u64) {
        match &mut self.model {
            AnyModel::Verilated(m) => {
                let m: &mut VerilatedModel = m;
                for _ in 0..cycles {
                    self.rc.cycle(m);
                }
            }
            AnyModel::Custom(m) => {
                for _ in 0..cycles {
                    self.rc.cycle(&mut **m);
                }
            }
        }
    }

    fn vl(&mut self) -> Option<&mut VerilatedModel> {
        match &mut self.model {
            AnyModel::Verilated(m) => Some(m),
            AnyModel::Custom(_) => None,
        }
    }
}

static INSTANCES: AtomicU32 = AtomicU32::new(0);

/// A simulated rnic: the Verilated RTL driven by the root-complex model.
///
/// Single-threaded: every method runs simulation steps on the calling
/// thread; host code reads DMA memory (through [`DmaBuffer`]) between them.
pub struct SimDevice {
    inner: RefCell<Inner>,
    name: String,
    cfg: SimConfig,
}

impl SimDevice {
    /// Build the model (64 or 256 bits), open the waveform if asked, and run
    /// the reset sequence.
    pub fn new(cfg: SimConfig) -> Result<Self, SimError> {
        let mut rc = RootComplex::new(cfg.root_complex.clone(), cfg.data_w, cfg.seed);
        // The RTL's initial register values come from the same seed.
        let x_seed: u32 = rc.rng().gen_range(1..=i32::MAX as u32);
        let mut vl = Box::new(VerilatedModel::new(cfg.data_w, x_seed)?);
        if let Some(p) = &cfg.wave {
            vl.trace_open(p)?;
        }
        Self::with_model(cfg, AnyModel::Verilated(vl), rc)
    }

    /// A device around any [`Model`] (for tests with a stand-in NIC).
    pub fn with_custom_model(cfg: SimConfig, model: Box<dyn Model>) -> Result<Self, SimError> {
        let rc = RootComplex::new(cfg.root_complex.clone(), model.data_w(), cfg.seed);
        Self::with_model(cfg, AnyModel::Custom(model), rc)
    }

    fn with_model(cfg: SimConfig, model: AnyModel, rc: RootComplex) -> Result<Self, SimError> {
        let mut inner = Inner { model, rc };
        inner.rc.set_reset(true);
        inner.run(cfg.reset_cycles.max(1));
        inner.rc.set_reset(false);
        let n = INSTANCES.fetch_add(1, Ordering::Relaxed);
        Ok(Self {
            inner: RefCell::new(inner),
            name: format!("sim:{n}"),
            cfg,
        })
    }

    pub fn config(&self) -> &SimConfig {
        &self.cfg
    }

    /// Advance `cycles` clock cycles.
    pub fn run(&self, cycles: u64) {
        self.inner.borrow_mut().run(cycles);
    }

    /// Run until `cond` holds (checked between cycles) or `budget` cycles
    /// pass; returns whether it held.
    pub fn run_until(&self, budget: u64, mut cond: impl FnMut(&RootComplex) -> bool) -> bool {
        let mut g = self.inner.borrow_mut();
        for _ in 0..budget {
            if cond(&g.rc) {
                return true;
            }
            g.run(1);
        }
        cond(&g.rc)
    }

    /// Run until nothing is queued or in flight at the root complex (all
    /// posted writes visible), at most `budget` cycles.
    pub fn drain(&self, budget: u64) -> bool {
        self.run_until(budget, |rc| rc.quiescent())
    }

    pub fn iommu_faults(&self) -> Vec<IommuFault> {
        self.inner.borrow().rc.iommu_faults().to_vec()
    }

    pub fn model_errors(&self) -> Vec<ModelError> {
        self.inner.borrow().rc.model_errors().to_vec()
    }

    pub fn stats(&self) -> Stats {
        self.inner.borrow().rc.stats()
    }

    /// Digest of all TLP traffic so far (equal for equal seeds).
    pub fn digest(&self) -> u64 {
        self.inner.borrow().rc.digest()
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
        self.inner.borrow_mut().rc.set_max_payload(code);
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
        self.inner.borrow_mut().rc.set_max_read_req(code);
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
            .inner
            .borrow_mut()
            .rc
            .map(mem.clone(), below_4g)
            .ok_or(DeviceError::DmaAlloc(len))?;
        // SAFETY: `mem` is `len` bytes (at least), lives as long as the Arc,
        // and is only accessed through raw pointers.
        Ok(unsafe { DmaBuffer::from_raw(ptr, len, bus, mem) })
    }

    /// Start (or restart) writing an FST waveform from the current cycle.
    pub fn start_wave(&self, path: &Path) -> Result<(), SimError> {
        let mut g = self.inner.borrow_mut();
        match g.vl() {
            Some(v) => v.trace_open(path),
            None => Err(SimError::NoRtl),
        }
    }

    /// Stop writing the waveform (flushes and closes the file).
    pub fn stop_wave(&self) {
        if let Some(v) = self.inner.borrow_mut().vl() {
            v.trace_close();
        }
    }

    /// Direct access to the root complex (for tests and harnesses).
    pub fn with_root_complex<T>(&self, f: impl FnOnce(&mut RootComplex) -> T) -> T {
        f(&mut self.inner.borrow_mut().rc)
    }
}

impl Device for SimDevice {
    fn name(&self) -> String {
        self.name.clone()
    }

    fn bar_len(&self) -> u64 {
        self.cfg.bar_len
    }

    fn read32(&self, offset: u64) -> DevResult<u32> {
        self.check_offset(offset)?;
        let mut g = self.inner.borrow_mut();
        let tag = g.rc.mmio_read_start(offset);
        let timeout = g.rc.config().mmio_timeout;
        for _ in 0..timeout {
            g.run(1);
            if let Some(r) = g.rc.mmio_read_poll(tag) {
                return r;
            }
        }
        g.rc.mmio_read_abandon(tag);
        Err(DeviceError::Timeout(timeout))
    }

    fn write32(&self, offset: u64, value: u32) -> DevResult<()> {
        self.check_offset(offset)?;
        self.inner.borrow_mut().rc.mmio_write(offset, value);
        Ok(())
    }

    fn alloc_dma(&self, len: usize) -> DevResult<DmaBuffer> {
        self.alloc(len, false)
    }

    fn free_dma(&self, buf: &DmaBuffer) -> DevResult<()> {
        let mut g = self.inner.borrow_mut();
        let ok =
            g.rc.iommu()
                .mappings()
                .iter()
                .any(|m| m.bus == buf.bus_addr() && m.memory().as_ptr() == buf.as_ptr());
        if !ok {
            return Err(DeviceError::Other(format!(
                "DMA buffer at {:#x} is not mapped",
                buf.bus_addr()
            )));
        }
        g.rc.unmap(buf.bus_addr());
        Ok(())
    }

    fn wait_irq(&self, vector: u32, budget: u64) -> DevResult<IrqWait> {
        if vector >= 32 {
            return Err(DeviceError::Other(format!(
                "MSI vector {vector} out of range (0..32)"
            )));
        }
        let mut g = self.inner.borrow_mut();
        for _ in 0..=budget {
            if g.rc.take_msi(vector) {
                return Ok(IrqWait::Fired);
            }
            g.run(1);
        }
        Ok(IrqWait::TimedOut)
    }

    fn idle(&self) {
        self.inner.borrow_mut().run(self.cfg.idle_cycles);
    }

    fn now(&self) -> u64 {
        self.inner.borrow().rc.now()
    }

    fn clock_mhz(&self) -> f64 {
        self.cfg.clock_mhz
    }
}

impl SimDevice {
    fn check_offset(&self, offset: u64) -> DevResult<()> {
        if offset >= self.cfg.bar_len {
            return Err(DeviceError::OutOfBar {
                offset,
                bar_len: self.cfg.bar_len,
            });
        }
        if offset % 4 != 0 {
            return Err(DeviceError::Unaligned(offset));
        }
        Ok(())
    }
}
