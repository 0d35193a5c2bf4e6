//! [`VfioUserDevice`]: a `rnic_device::Device` that reaches a vfio-user
//! server (this crate's, or any other speaking the protocol) from the host,
//! as QEMU's client does for a guest: BAR0 accesses become region
//! messages, DMA memory is a shared memfd whose pieces are handed over with
//! `DMA_MAP` at the bus addresses this side chooses, MSIs arrive on
//! eventfds. It lets host code run against the server without a guest (the
//! server's own tests use it) and measures the protocol's cost.
//!
//! Time on this backend is wall time: `now` counts nanoseconds (a 1000 MHz
//! clock), and `wait_irq` budgets are in the same units, as the `Device`
//! trait asks of every backend.

use std::cell::RefCell;
use std::fs::File;
use std::io::Read;
use std::os::fd::{AsRawFd, FromRawFd};
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use rnic_device::{Device, DeviceError, DmaBuffer, IrqWait, Result as DevResult};
use vfio_bindings::bindings::vfio::{
    VFIO_IRQ_SET_ACTION_TRIGGER, VFIO_IRQ_SET_DATA_EVENTFD, VFIO_PCI_BAR0_REGION_INDEX,
    VFIO_PCI_CONFIG_REGION_INDEX, VFIO_PCI_MSI_IRQ_INDEX,
};

use crate::guest_memory::FileMapping;
use crate::server::MSI_VECTORS;

/// First bus address handed out (above 4 GiB, as the simulator's own).
pub const IOVA_BASE: u64 = 0x1_0000_0000;
const PAGE: usize = 4096;

struct State {
    client: vfio_user::Client,
    /// Next free byte of the memfd; bus address = IOVA_BASE + offset.
    next: usize,
}

/// A vfio-user function driven from this process.
pub struct VfioUserDevice {
    name: String,
    state: RefCell<State>,
    memfd: File,
    mem: Arc<FileMapping>,
    bar_len: u64,
    irq: Vec<File>,
    t0: Instant,
}

fn err(what: &str, e: impl std::fmt::Display) -> DeviceError {
    DeviceError::Other(format!("vfio-user: {what}: {e}"))
}

impl VfioUserDevice {
    /// Connect to the server at `socket`, give it `dma_bytes` of DMA memory
    /// to allocate from, enable memory decoding and bus mastering, and
    /// hand over one eventfd per MSI vector.
    pub fn connect(socket: &Path, dma_bytes: usize) -> DevResult<Self> {
        let mut client = vfio_user::Client::new(socket).map_err(|e| err("connect", e))?;
        let bar_len = client
            .region(VFIO_PCI_BAR0_REGION_INDEX)
            .map(|r| r.size)
            .ok_or_else(|| err("region info", "no BAR0"))?;
        // SAFETY: plain syscall with a static name.
        let fd = unsafe { libc::memfd_create(c"rnic-vfio-user-dma".as_ptr(), libc::MFD_CLOEXEC) };
        if fd < 0 {
            return Err(err("memfd_create", std::io::Error::last_os_error()));
        }
        // SAFETY: a descriptor we just created and own.
        let memfd = unsafe { File::from_raw_fd(fd) };
        memfd
            .set_len(dma_bytes.next_multiple_of(PAGE) as u64)
            .map_err(|e| err("memfd size", e))?;
        let mem = Arc::new(FileMapping::new(&memfd).map_err(|e| err("mmap", e))?);
        // Memory space and bus mastering on.
        client
            .region_write(VFIO_PCI_CONFIG_REGION_INDEX, 4, &[0x06, 0x00])
            .map_err(|e| err("config write", e))?;
        let mut irq = Vec::with_capacity(MSI_VECTORS);
        for _ in 0..MSI_VECTORS {
            // SAFETY: plain syscall.
            let fd = unsafe { libc::eventfd(0, libc::EFD_CLOEXEC | libc::EFD_NONBLOCK) };
            if fd < 0 {
                return Err(err("eventfd", std::io::Error::last_os_error()));
            }
            // SAFETY: a descriptor we just created and own.
            irq.push(unsafe { File::from_raw_fd(fd) });
        }
        // The server takes at most 16 descriptors per message.
        for (k, chunk) in irq.chunks(16).enumerate() {
            let fds: Vec<_> = chunk.iter().map(|f| f.as_raw_fd()).collect();
            client
                .set_irqs(
                    VFIO_PCI_MSI_IRQ_INDEX,
                    VFIO_IRQ_SET_DATA_EVENTFD | VFIO_IRQ_SET_ACTION_TRIGGER,
                    (16 * k) as u32,
                    fds.len() as u32,
                    &fds,
                )
                .map_err(|e| err("set_irqs", e))?;
        }
        Ok(Self {
            name: format!("vfio-user:{}", socket.display()),
            state: RefCell::new(State { client, next: 0 }),
            memfd,
            mem,
            bar_len,
            irq,
            t0: Instant::now(),
        })
    }

    /// Remove `len` bytes at bus address `bus` from the server's IOMMU
    /// without this side's bookkeeping (tests of refused DMA).
    pub fn dma_unmap_raw(&self, bus: u64, len: u64) -> DevResult<()> {
        self.state
            .borrow_mut()
            .client
            .dma_unmap(bus, len)
            .map_err(|e| err("dma_unmap", e))
    }

    /// Ask the server for a function-level reset.
    pub fn reset(&self) -> DevResult<()> {
        self.state
            .borrow_mut()
            .client
            .reset()
            .map_err(|e| err("reset", e))
    }

    /// Write the configuration space (e.g. the command register).
    pub fn config_write(&self, offset: u64, data: &[u8]) -> DevResult<()> {
        self.state
            .borrow_mut()
            .client
            .region_write(VFIO_PCI_CONFIG_REGION_INDEX, offset, data)
            .map_err(|e| err("config write", e))
    }

    /// Read the configuration space.
    pub fn config_read(&self, offset: u64, out: &mut [u8]) -> DevResult<()> {
        self.state
            .borrow_mut()
            .client
            .region_read(VFIO_PCI_CONFIG_REGION_INDEX, offset, out)
            .map_err(|e| err("config read", e))
    }

    fn check(&self, offset: u64) -> DevResult<()> {
        if offset >= self.bar_len {
            return Err(DeviceError::OutOfBar {
                offset,
                bar_len: self.bar_len,
            });
        }
        if offset % 4 != 0 {
            return Err(DeviceError::Unaligned(offset));
        }
        Ok(())
    }
}

impl Device for VfioUserDevice {
    fn name(&self) -> String {
        self.name.clone()
    }

    fn bar_len(&self) -> u64 {
        self.bar_len
    }

    fn read32(&self, offset: u64) -> DevResult<u32> {
        self.check(offset)?;
        let mut b = [0u8; 4];
        self.state
            .borrow_mut()
            .client
            .region_read(VFIO_PCI_BAR0_REGION_INDEX, offset, &mut b)
            .map_err(|e| err("BAR0 read", e))?;
        Ok(u32::from_le_bytes(b))
    }

    fn write32(&self, offset: u64, value: u32) -> DevResult<()> {
        self.check(offset)?;
        self.state
            .borrow_mut()
            .client
            .region_write(VFIO_PCI_BAR0_REGION_INDEX, offset, &value.to_le_bytes())
            .map_err(|e| err("BAR0 write", e))
    }

    /// A piece of the memfd, page aligned, with an unmapped guard page
    /// after it, mapped at `IOVA_BASE` + its offset in the memfd.
    fn alloc_dma(&self, len: usize) -> DevResult<DmaBuffer> {
        let mut s = self.state.borrow_mut();
        let span = len.max(1).next_multiple_of(PAGE);
        let off = s.next;
        if off + span > rnic_sim::DmaMemory::len(&*self.mem) {
            return Err(DeviceError::DmaAlloc(len));
        }
        s.next = off + span + PAGE;
        let bus = IOVA_BASE + off as u64;
        s.client
            .dma_map(off as u64, bus, span as u64, self.memfd.as_raw_fd())
            .map_err(|e| err("dma_map", e))?;
        // Zeroed, as the trait promises (the memfd may be reused).
        let ptr = rnic_sim::DmaMemory::as_ptr(&*self.mem);
        // SAFETY: off + span lies inside the mapping.
        unsafe { std::ptr::write_bytes(ptr.add(off), 0, span) };
        // SAFETY: off..off+len lies inside the mapping, which `mem` keeps
        // alive; accessed only through DmaBuffer's volatile accessors.
        Ok(unsafe { DmaBuffer::from_raw(ptr.add(off), len, bus, self.mem.clone()) })
    }

    fn free_dma(&self, buf: &DmaBuffer) -> DevResult<()> {
        let span = buf.len().max(1).next_multiple_of(PAGE) as u64;
        self.dma_unmap_raw(buf.bus_addr(), span)
    }

    /// Wait up to `budget` cycles of `now` (nanoseconds) for MSI `vector`.
    fn wait_irq(&self, vector: u32, budget: u64) -> DevResult<IrqWait> {
        let f = self
            .irq
            .get(vector as usize)
            .ok_or_else(|| err("wait_irq", format!("vector {vector} out of range")))?;
        let t0 = Instant::now();
        loop {
            let mut b = [0u8; 8];
            let mut r: &File = f;
            match r.read(&mut b) {
                Ok(8) => return Ok(IrqWait::Fired),
                Ok(_) => {}
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
                Err(e) => return Err(err("eventfd read", e)),
            }
            if t0.elapsed() >= Duration::from_nanos(budget) {
                return Ok(IrqWait::TimedOut);
            }
            std::thread::sleep(Duration::from_micros(50));
        }
    }

    fn idle(&self) {
        std::thread::yield_now();
    }

    fn now(&self) -> u64 {
        self.t0.elapsed().as_nanos() as u64
    }

    fn clock_mhz(&self) -> f64 {
        1000.0
    }
}
