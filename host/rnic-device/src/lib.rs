//! The one interface every rnic backend implements: 32-bit MMIO on BAR0,
//! DMA memory with bus addresses, interrupt wait, and a hook that lets a
//! simulator advance time while the host waits.
//!
//! Backends: the Verilator simulation (`rnic-sim`), and Linux VFIO and sysfs
//! `resource0` (`rnic-pci`). The trait only uses what all of them can
//! provide.
//!
//! Soundness rule (as in rust-vmm's `vm-memory`): device-visible memory is
//! never behind a Rust reference. Host code touches DMA memory through
//! [`DmaBuffer`]'s volatile accessors, because the device (or the simulated
//! root complex) may change it between any two host instructions.

use std::any::Any;
use std::sync::Arc;

/// Errors of a device backend.
#[derive(Debug, thiserror::Error)]
pub enum DeviceError {
    #[error("MMIO offset {offset:#x} is outside BAR0 ({bar_len:#x} bytes)")]
    OutOfBar { offset: u64, bar_len: u64 },
    #[error("MMIO offset {0:#x} is not 4-byte aligned")]
    Unaligned(u64),
    #[error("MMIO read at {offset:#x} completed with status {status} (not successful)")]
    MmioCompletion { offset: u64, status: u8 },
    #[error("device did not answer within {0} cycles")]
    Timeout(u64),
    #[error("DMA allocation of {0} bytes failed")]
    DmaAlloc(usize),
    #[error("device stopped: {0}")]
    Stopped(String),
    #[error("{0}")]
    Other(String),
}

pub type Result<T> = std::result::Result<T, DeviceError>;

/// A region of host memory the device can reach by DMA.
///
/// `ptr` stays valid as long as any clone of `owner` lives; the backend keeps
/// one clone in its IOMMU table, so the memory outlives both the buffer and
/// any in-flight DMA.
#[derive(Clone)]
pub struct DmaBuffer {
    ptr: *mut u8,
    len: usize,
    bus_addr: u64,
    _owner: Arc<dyn Any + Send + Sync>,
}

// SAFETY: the buffer only hands out volatile copies, never references, and
// the backing store is kept alive by `_owner`.
unsafe impl Send for DmaBuffer {}
unsafe impl Sync for DmaBuffer {}

impl std::fmt::Debug for DmaBuffer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DmaBuffer")
            .field("bus_addr", &format_args!("{:#x}", self.bus_addr))
            .field("len", &self.len)
            .finish()
    }
}

impl DmaBuffer {
    /// # Safety
    /// `ptr..ptr+len` must be valid for reads and writes for as long as
    /// `owner` lives, and must not be accessed through Rust references.
    pub unsafe fn from_raw(
        ptr: *mut u8,
        len: usize,
        bus_addr: u64,
        owner: Arc<dyn Any + Send + Sync>,
    ) -> Self {
        Self {
            ptr,
            len,
            bus_addr,
            _owner: owner,
        }
    }

    pub fn bus_addr(&self) -> u64 {
        self.bus_addr
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Raw pointer for backends (e.g. to register the region with an IOMMU).
    pub fn as_ptr(&self) -> *mut u8 {
        self.ptr
    }

    fn check(&self, off: usize, n: usize) {
        assert!(
            off.checked_add(n).is_some_and(|end| end <= self.len),
            "DMA buffer access {off}+{n} beyond {} bytes",
            self.len
        );
    }

    /// Copy bytes out of DMA memory with volatile loads.
    pub fn read(&self, off: usize, out: &mut [u8]) {
        self.check(off, out.len());
        for (i, b) in out.iter_mut().enumerate() {
            // SAFETY: bounds checked above; memory kept alive by `_owner`.
            *b = unsafe { self.ptr.add(off + i).read_volatile() };
        }
    }

    /// Copy bytes into DMA memory with volatile stores.
    pub fn write(&self, off: usize, data: &[u8]) {
        self.check(off, data.len());
        for (i, b) in data.iter().enumerate() {
            // SAFETY: bounds checked above; memory kept alive by `_owner`.
            unsafe { self.ptr.add(off + i).write_volatile(*b) };
        }
    }

    pub fn fill(&self, off: usize, len: usize, val: u8) {
        self.check(off, len);
        for i in 0..len {
            // SAFETY: bounds checked above.
            unsafe { self.ptr.add(off + i).write_volatile(val) };
        }
    }

    pub fn read_u8(&self, off: usize) -> u8 {
        let mut b = [0u8; 1];
        self.read(off, &mut b);
        b[0]
    }

    pub fn read_u32(&self, off: usize) -> u32 {
        let mut b = [0u8; 4];
        self.read(off, &mut b);
        u32::from_le_bytes(b)
    }

    pub fn read_u64(&self, off: usize) -> u64 {
        let mut b = [0u8; 8];
        self.read(off, &mut b);
        u64::from_le_bytes(b)
    }

    pub fn write_u32(&self, off: usize, v: u32) {
        self.write(off, &v.to_le_bytes());
    }

    pub fn write_u64(&self, off: usize, v: u64) {
        self.write(off, &v.to_le_bytes());
    }

    /// Bytes `off..off+len` as an owned vector (a snapshot).
    pub fn to_vec(&self, off: usize, len: usize) -> Vec<u8> {
        let mut v = vec![0u8; len];
        self.read(off, &mut v);
        v
    }
}

/// Interrupt wait outcome.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IrqWait {
    Fired,
    TimedOut,
}

/// A PCIe function running the rnic design.
///
/// Methods take `&self`: backends use interior mutability so that verbs
/// objects (CQs, QPs) can share one device handle, like libibverbs contexts.
pub trait Device {
    /// Human-readable name (`sim:0`, `0000:01:00.0`).
    fn name(&self) -> String;

    /// Size of BAR0 in bytes.
    fn bar_len(&self) -> u64;

    /// 32-bit MMIO read of BAR0 at a 4-byte aligned offset.
    fn read32(&self, offset: u64) -> Result<u32>;

    /// 32-bit posted MMIO write of BAR0.
    fn write32(&self, offset: u64, value: u32) -> Result<()>;

    /// Allocate zeroed DMA memory, page aligned, reachable by the device.
    fn alloc_dma(&self, len: usize) -> Result<DmaBuffer>;

    /// Remove a buffer from the device's reach (IOMMU unmap). The memory
    /// itself is released when the last clone of the buffer is dropped.
    fn free_dma(&self, buf: &DmaBuffer) -> Result<()>;

    /// Wait until MSI `vector` fires, or `budget` cycles of [`Device::now`]'s
    /// clock pass (simulated cycles; on hardware, cycles of the backend's
    /// nominal clock: `budget / clock_mhz()` microseconds).
    fn wait_irq(&self, vector: u32, budget: u64) -> Result<IrqWait>;

    /// Called by host code in every polling loop. A simulator advances
    /// simulated time here; hardware backends only hint the CPU.
    fn idle(&self) {
        std::hint::spin_loop();
    }

    /// Time as the backend counts it: simulated cycles, or on hardware
    /// cycles of a nominal clock of [`Device::clock_mhz`] derived from the
    /// host's monotonic clock (`rnic-pci`: 250 MHz, the simulator's).
    fn now(&self) -> u64;

    /// Clock the `now` counter runs at, in MHz (for Gb/s figures).
    fn clock_mhz(&self) -> f64;
}

/// Forwards every method to the device behind a pointer: `&D` (a borrowed
/// device), `Box<D>` (a device chosen at run time, e.g. by `--device`).
macro_rules! forward_device {
    ($($ptr:ty),*) => {$(
        impl<D: Device + ?Sized> Device for $ptr {
            fn name(&self) -> String {
                (**self).name()
            }
            fn bar_len(&self) -> u64 {
                (**self).bar_len()
            }
            fn read32(&self, offset: u64) -> Result<u32> {
                (**self).read32(offset)
            }
            fn write32(&self, offset: u64, value: u32) -> Result<()> {
                (**self).write32(offset, value)
            }
            fn alloc_dma(&self, len: usize) -> Result<DmaBuffer> {
                (**self).alloc_dma(len)
            }
            fn free_dma(&self, buf: &DmaBuffer) -> Result<()> {
                (**self).free_dma(buf)
            }
            fn wait_irq(&self, vector: u32, budget: u64) -> Result<IrqWait> {
                (**self).wait_irq(vector, budget)
            }
            fn idle(&self) {
                (**self).idle()
            }
            fn now(&self) -> u64 {
                (**self).now()
            }
            fn clock_mhz(&self) -> f64 {
                (**self).clock_mhz()
            }
        }
    )*};
}

forward_device!(&D, Box<D>);

/// Page-aligned, zeroed host memory, the backing store for DMA buffers of
/// backends that own their memory (simulator, VFIO with an IOMMU).
pub struct HostMemory {
    ptr: *mut u8,
    layout: std::alloc::Layout,
}

// SAFETY: only accessed through raw pointers with volatile operations.
unsafe impl Send for HostMemory {}
unsafe impl Sync for HostMemory {}

impl HostMemory {
    pub fn new(len: usize) -> Result<Self> {
        let layout = std::alloc::Layout::from_size_align(len.max(1), 4096)
            .map_err(|_| DeviceError::DmaAlloc(len))?;
        // SAFETY: layout has non-zero size.
        let ptr = unsafe { std::alloc::alloc_zeroed(layout) };
        if ptr.is_null() {
            return Err(DeviceError::DmaAlloc(len));
        }
        Ok(Self { ptr, layout })
    }

    pub fn as_ptr(&self) -> *mut u8 {
        self.ptr
    }

    pub fn len(&self) -> usize {
        self.layout.size()
    }

    pub fn is_empty(&self) -> bool {
        self.layout.size() == 0
    }
}

impl Drop for HostMemory {
    fn drop(&mut self) {
        // SAFETY: allocated in `new` with this layout.
        unsafe { std::alloc::dealloc(self.ptr, self.layout) }
    }
}
