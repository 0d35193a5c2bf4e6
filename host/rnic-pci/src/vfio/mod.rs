//! The VFIO backend: an rnic function bound to vfio-pci.
//!
//! [`VfioDevice::open`] does, in this order:
//!
//! 1. sysfs checks ([`Function::check_vfio`]): rnic PCI IDs, bound to
//!    vfio-pci, an IOMMU group, every other function of the group bound to
//!    vfio-pci (or pci-stub, pcieport) or to no driver; the group's device
//!    node readable and writable by this user. Each failure is one line
//!    naming the fix.
//! 2. container and group: with an IOMMU, `pci-driver`'s `VfioContainer`
//!    (type-1 v2 IOMMU) and `VfioPciDevice`; in VFIO's no-IOMMU mode,
//!    [`noiommu::RawVfio`] (raw ioctls).
//! 3. BAR0 mapped (`mmap` of the device file; 32-bit `pread`/`pwrite` if
//!    VFIO does not allow mapping it), and the ID block checked
//!    ([`crate::id::check_id_block`]): a BAR0 smaller than the register map,
//!    a wrong magic, a wrong first block or another major version of the
//!    register map is refused before anything is written to the function.
//! 4. `VFIO_DEVICE_RESET`, so a function left running by a process that
//!    was killed starts from reset (a function without a reset method is
//!    used as it is, with a warning).
//! 5. memory decoding and bus mastering on (the command register).
//! 6. interrupts: every MSI-X vector the function has (up to 32), else
//!    every MSI vector, each on an eventfd. A function whose vectors cannot
//!    be enabled still opens; `wait_irq` then says why.
//!
//! DMA: with an IOMMU, `alloc_dma` takes page-aligned zeroed
//! [`HostMemory`], maps it with `VFIO_IOMMU_MAP_DMA` at an IOVA from
//! [`IovaAllocator`] (above 4 GiB, or below with
//! [`Options::dma_below_4g`]) and hands out that IOVA as the bus address;
//! `free_dma` unmaps it. VFIO pins mapped memory, which counts against
//! `ulimit -l`. In no-IOMMU mode there is no translation: the IOVA is the
//! physical address, so buffers come from locked huge pages by physical
//! address ([`PhysPool`], root and reserved huge pages needed), exactly as
//! for the sysfs backend.
//!
//! On drop the function is left quiet: bus mastering off, interrupts
//! disabled, every DMA mapping removed, then the device, group and
//! container closed (vfio-pci resets the function when it is released).

pub mod iova;
pub mod noiommu;

use std::any::Any;
use std::collections::BTreeMap;
use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;
use std::sync::{Arc, Mutex};

use pci_driver::backends::vfio::{VfioContainer, VfioPciDevice};
use pci_driver::device::PciDevice;
use pci_driver::regions::{OwningPciRegion, PciRegion, Permissions};
use rnic_device::{Device, DeviceError, DmaBuffer, HostMemory, IrqWait};

use crate::clock::Clock;
use crate::config::{update_command, ConfigSpace, FileConfig, CMD_BUS_MASTER, CMD_MEMORY};
use crate::discover::{Function, GroupKind, Sysfs};
use crate::error::{PciError, Result};
use crate::id::{check_id_block, IdBlock};
use crate::irq::EventFds;
use crate::mmio::{check_access, Bar32, Mmio};
use crate::physmem::PhysPool;

pub use iova::IovaAllocator;

/// Most interrupt vectors enabled (the simulator's MSI has 32).
pub const MAX_VECTORS: usize = 32;

const MSI_INDEX: u32 = 1;
const MSIX_INDEX: u32 = 2;

/// Choices of [`VfioDevice::open_with`].
#[derive(Clone, Copy, Debug)]
pub struct Options {
    /// Allocate IOVAs below 4 GiB (for a DMA engine limited to 32-bit
    /// addresses); the default is above 4 GiB.
    pub dma_below_4g: bool,
    /// Reset the function at open (default true).
    pub reset: bool,
}

impl Default for Options {
    fn default() -> Self {
        Self {
            dma_below_4g: false,
            reset: true,
        }
    }
}

/// The steps of opening that touch the function, in order: the ID check
/// (reads only), reset, then memory decoding and bus mastering on. A
/// function that is not an rnic (or is too small) is refused before the
/// reset, which is a write to it. Kept apart from the ioctls so that the
/// order is tested against a BAR image.
pub fn bring_up(
    bdf: &str,
    reset: &mut dyn FnMut() -> io::Result<()>,
    bar: &dyn Bar32,
    cfg: &dyn ConfigSpace,
) -> Result<IdBlock> {
    let id = check_id_block(bdf, bar)?;
    if let Err(e) = reset() {
        tracing::warn!("{bdf}: function reset failed ({e}); using it unreset");
    }
    update_command(cfg, CMD_MEMORY | CMD_BUS_MASTER, 0)
        .map_err(|e| PciError::io(format!("{bdf}: enabling bus mastering"), e))?;
    Ok(id)
}

/// BAR0 through `pci-driver`'s region when it cannot be mapped.
struct RegionBar(OwningPciRegion);

impl Bar32 for RegionBar {
    fn size(&self) -> u64 {
        self.0.len()
    }

    fn read32(&self, offset: u64) -> rnic_device::Result<u32> {
        check_access(offset, self.0.len())?;
        self.0
            .read_le_u32(offset)
            .map_err(|e| DeviceError::Other(format!("BAR0 read at {offset:#x}: {e}")))
    }

    fn write32(&self, offset: u64, value: u32) -> rnic_device::Result<()> {
        check_access(offset, self.0.len())?;
        self.0
            .write_le_u32(offset, value)
            .map_err(|e| DeviceError::Other(format!("BAR0 write at {offset:#x}: {e}")))
    }
}

/// A raw `mmap` of a region of a VFIO device file.
struct RawMap {
    ptr: *mut libc::c_void,
    len: usize,
}

impl Drop for RawMap {
    fn drop(&mut self) {
        // SAFETY: the mapping made in `open_noiommu`, unused by now.
        unsafe { libc::munmap(self.ptr, self.len) };
    }
}

/// The open function, with the path it was opened through.
enum Handle {
    Type1(VfioPciDevice),
    NoIommu(noiommu::RawVfio),
}

/// DMA mappings through the IOMMU: IOVA -> (size, memory).
struct IommuDma {
    iova: IovaAllocator,
    maps: BTreeMap<u64, (usize, Arc<HostMemory>)>,
}

enum Dma {
    Iommu(Mutex<IommuDma>),
    Phys(PhysPool),
}

/// What the two ways of opening (type-1 IOMMU, no-IOMMU) produce.
struct Parts {
    bar: Box<dyn Bar32>,
    bar_map: Option<Box<dyn Any>>,
    irqs: (Option<(u32, EventFds)>, String),
    dma: Dma,
    id: IdBlock,
    handle: Handle,
}

/// MSI-X if the function has vectors of it, else MSI: (VFIO index,
/// vectors).
fn irq_index(msix: usize, msi: usize) -> (u32, usize) {
    if msix > 0 {
        (MSIX_INDEX, msix)
    } else {
        (MSI_INDEX, msi)
    }
}

/// An rnic function bound to vfio-pci.
pub struct VfioDevice {
    bdf: String,
    func: Function,
    // Field order is drop order: the BAR view, then its mapping, then the
    // device and its container.
    bar: Box<dyn Bar32>,
    _bar_map: Option<Box<dyn Any>>,
    irqs: Option<(u32, EventFds)>,
    irq_error: String,
    dma: Dma,
    id: IdBlock,
    clock: Clock,
    handle: Handle,
}

impl VfioDevice {
    /// Opens `bdf` (sysfs root `RNIC_SYSFS_ROOT` or `/sys`) with the
    /// default [`Options`].
    pub fn open(bdf: &str) -> Result<Self> {
        Self::open_with(&Sysfs::from_env(), bdf, Options::default())
    }

    pub fn open_with(sysfs: &Sysfs, bdf: &str, opts: Options) -> Result<Self> {
        let bdf = crate::bdf(bdf)?;
        let func = sysfs.function(&bdf)?;
        func.check_vfio()?;
        let node = func
            .vfio_group_node()
            .expect("check_vfio found an IOMMU group");
        check_node_access(&node)?;
        let p = if func.group == GroupKind::NoIommu {
            Self::open_noiommu(&bdf, &node, opts)?
        } else {
            check_node_access("/dev/vfio/vfio")?;
            Self::open_type1(sysfs, &func, &node, opts)?
        };
        Ok(Self {
            bdf,
            func,
            bar: p.bar,
            _bar_map: p.bar_map,
            irqs: p.irqs.0,
            irq_error: p.irqs.1,
            dma: p.dma,
            id: p.id,
            clock: Clock::new(),
            handle: p.handle,
        })
    }

    fn open_type1(sysfs: &Sysfs, func: &Function, node: &str, opts: Options) -> Result<Parts> {
        let bdf = func.bdf.clone();
        let group = func.iommu_group.expect("checked");
        let container = VfioContainer::new(&[group]).map_err(|e| match e.raw_os_error() {
            Some(libc::EBUSY) => PciError::Unsupported(format!(
                "{node} is open in another process (another rnic, or a VM): close it first"
            )),
            _ => PciError::open(node, e, NODE_FIX),
        })?;
        let dev = VfioPciDevice::open_in_container(sysfs.device_dir(&bdf), Arc::new(container))
            .map_err(|e| PciError::io(format!("{bdf}: opening the VFIO device"), e))?;
        let region = dev
            .bar(0)
            .ok_or_else(|| PciError::Unsupported(format!("{bdf}: VFIO reports no BAR0")))?;
        let (bar, bar_map): (Box<dyn Bar32>, Option<Box<dyn Any>>) = if region.is_mappable() {
            let map = region
                .map(.., Permissions::ReadWrite)
                .map_err(|e| PciError::io(format!("{bdf}: mapping BAR0"), e))?;
            // SAFETY: `map` is kept in the device (`_bar_map`) and dropped
            // after `bar`; BAR0 is only reached through `Mmio`.
            let mmio = unsafe { Mmio::new(map.as_mut_ptr(), map.len()) };
            (Box::new(mmio), Some(Box::new(map)))
        } else {
            (Box::new(RegionBar(region)), None)
        };
        let mut reset = || {
            if opts.reset {
                dev.reset()
            } else {
                Ok(())
            }
        };
        let id = bring_up(&bdf, &mut reset, bar.as_ref(), &dev.config())?;

        let ints = dev.interrupts();
        let (index, max) = irq_index(ints.msi_x().max(), ints.msi().max());
        let (irqs, irq_error) = enable_irqs(max, |fds| {
            if index == MSIX_INDEX {
                ints.msi_x().enable(fds)
            } else {
                ints.msi().enable(fds)
            }
        });

        let iommu = dev.iommu();
        let align = iommu.alignment() as u64;
        if align > 4096 {
            return Err(PciError::Unsupported(format!(
                "{bdf}: the IOMMU maps in {align}-byte pages; rnic's DMA memory is 4 KiB aligned"
            )));
        }
        let window = if opts.dma_below_4g {
            iova::BELOW_4G
        } else {
            iova::ABOVE_4G
        };
        let iova = IovaAllocator::new(iommu.valid_iova_ranges(), window, align);
        Ok(Parts {
            bar,
            bar_map,
            irqs: (irqs.map(|f| (index, f)), irq_error),
            dma: Dma::Iommu(Mutex::new(IommuDma {
                iova,
                maps: BTreeMap::new(),
            })),
            id,
            handle: Handle::Type1(dev),
        })
    }

    fn open_noiommu(bdf: &str, node: &str, opts: Options) -> Result<Parts> {
        let raw = noiommu::RawVfio::open(node, bdf)?;
        let io_err = |what: &'static str| move |e| PciError::io(format!("{bdf}: {what}"), e);
        let cfg_region = raw.region(7).map_err(io_err("config space region"))?;
        let cfg = FileConfig {
            file: raw.file().try_clone().map_err(io_err("device file"))?,
            base: cfg_region.offset,
        };
        let r0 = raw.region(0).map_err(io_err("BAR0 region"))?;
        let mappable = r0.flags & vfio_bindings::bindings::vfio::VFIO_REGION_INFO_FLAG_MMAP != 0;
        let (bar, bar_map): (Box<dyn Bar32>, Option<Box<dyn Any>>) = if mappable && r0.size > 0 {
            // SAFETY: a shared mapping of the BAR0 region of the device file.
            let p = unsafe {
                libc::mmap(
                    std::ptr::null_mut(),
                    r0.size as usize,
                    libc::PROT_READ | libc::PROT_WRITE,
                    libc::MAP_SHARED,
                    raw.file().as_raw_fd(),
                    r0.offset as libc::off_t,
                )
            };
            if p == libc::MAP_FAILED {
                return Err(PciError::io(
                    format!("{bdf}: mapping BAR0"),
                    io::Error::last_os_error(),
                ));
            }
            let map = RawMap {
                ptr: p,
                len: r0.size as usize,
            };
            // SAFETY: `map` lives in `_bar_map`, dropped after `bar`.
            let mmio = unsafe { Mmio::new(p.cast(), r0.size as usize) };
            (Box::new(mmio), Some(Box::new(map)))
        } else {
            let file: File = raw.file().try_clone().map_err(io_err("device file"))?;
            let fb = noiommu::FileBar {
                file,
                base: r0.offset,
                len: r0.size,
            };
            (Box::new(fb), None)
        };
        let mut reset = || {
            if opts.reset && raw.can_reset() {
                raw.reset()
            } else if opts.reset {
                Err(io::Error::other("the function has no reset method"))
            } else {
                Ok(())
            }
        };
        let id = bring_up(bdf, &mut reset, bar.as_ref(), &cfg)?;
        let (index, max) = irq_index(
            raw.irq_count(MSIX_INDEX).unwrap_or(0) as usize,
            raw.irq_count(MSI_INDEX).unwrap_or(0) as usize,
        );
        let (irqs, irq_error) = enable_irqs(max, |fds| raw.set_irqs(index, fds));
        Ok(Parts {
            bar,
            bar_map,
            irqs: (irqs.map(|f| (index, f)), irq_error),
            dma: Dma::Phys(PhysPool::new()),
            id,
            handle: Handle::NoIommu(raw),
        })
    }

    /// The ID block words read at open.
    pub fn id_block(&self) -> IdBlock {
        self.id
    }

    pub fn function(&self) -> &Function {
        &self.func
    }

    /// Interrupt vectors enabled, and whether they are MSI-X.
    pub fn vectors(&self) -> (usize, bool) {
        self.irqs
            .as_ref()
            .map_or((0, false), |(i, f)| (f.len(), *i == MSIX_INDEX))
    }

    fn set_command(&self, set: u16, clear: u16) -> io::Result<u16> {
        match &self.handle {
            Handle::Type1(d) => update_command(&d.config(), set, clear),
            Handle::NoIommu(r) => {
                let base = r.region(7)?.offset;
                let cfg = FileConfig {
                    file: r.file().try_clone()?,
                    base,
                };
                update_command(&cfg, set, clear)
            }
        }
    }

    fn disable_irqs(&self) -> io::Result<()> {
        let Some((index, _)) = &self.irqs else {
            return Ok(());
        };
        match &self.handle {
            Handle::Type1(d) => {
                let ints = d.interrupts();
                if *index == MSIX_INDEX {
                    ints.msi_x().disable()
                } else {
                    ints.msi().disable()
                }
            }
            Handle::NoIommu(r) => r.set_irqs(*index, &[]),
        }
    }
}

const NODE_FIX: &str = "give your user the VFIO group (e.g. chgrp vfio /dev/vfio/N; chmod 660 /dev/vfio/N, or a udev rule) and a locked-memory limit for DMA (ulimit -l), or run as root";

/// Whether this user may open `node` read-write: the error names the node
/// and the fix.
fn check_node_access(node: &str) -> Result<()> {
    let c = std::ffi::CString::new(node).map_err(|_| PciError::Unsupported(node.into()))?;
    // SAFETY: a NUL-terminated path.
    if unsafe { libc::access(c.as_ptr(), libc::R_OK | libc::W_OK) } == 0 {
        return Ok(());
    }
    let e = io::Error::last_os_error();
    if e.kind() == io::ErrorKind::NotFound {
        return Err(PciError::Unsupported(format!(
            "{node} does not exist: is vfio-pci loaded (modprobe vfio-pci) and the function bound to it?"
        )));
    }
    Err(PciError::open(node, e, NODE_FIX))
}

/// Eventfds for up to [`MAX_VECTORS`] of `max` vectors, enabled by
/// `enable`; or why there are none.
fn enable_irqs(
    max: usize,
    enable: impl FnOnce(&[i32]) -> io::Result<()>,
) -> (Option<EventFds>, String) {
    let n = max.min(MAX_VECTORS);
    if n == 0 {
        return (None, "the function has no MSI or MSI-X vectors".into());
    }
    match EventFds::new(n).and_then(|f| enable(&f.raw()).map(|()| f)) {
        Ok(f) => (Some(f), String::new()),
        Err(e) => {
            tracing::warn!("enabling {n} interrupt vectors failed: {e}");
            (None, format!("enabling {n} interrupt vectors failed: {e}"))
        }
    }
}

impl Drop for VfioDevice {
    fn drop(&mut self) {
        // Quiet first: no more DMA, no more interrupts, then the mappings.
        let _ = self.set_command(0, CMD_BUS_MASTER);
        let _ = self.disable_irqs();
        if let (Dma::Iommu(m), Handle::Type1(d)) = (&self.dma, &self.handle) {
            let mut m = m.lock().unwrap_or_else(|p| p.into_inner());
            for (iova, (size, _)) in std::mem::take(&mut m.maps) {
                let _ = d.iommu().unmap(iova, size);
            }
        }
    }
}

impl Device for VfioDevice {
    crate::clock::hardware_device_common!();

    fn name(&self) -> String {
        format!("vfio:{}", self.bdf)
    }

    fn alloc_dma(&self, len: usize) -> rnic_device::Result<DmaBuffer> {
        let (m, dev) = match (&self.dma, &self.handle) {
            (Dma::Phys(pool), _) => {
                self.func.check_phys_dma()?;
                return Ok(pool.alloc(len)?);
            }
            (Dma::Iommu(m), Handle::Type1(dev)) => (m, dev),
            (Dma::Iommu(_), Handle::NoIommu(_)) => unreachable!("no-IOMMU devices use PhysPool"),
        };
        let size = len.max(1).next_multiple_of(4096);
        let mem = Arc::new(HostMemory::new(size)?);
        let mut m = m.lock().unwrap_or_else(|p| p.into_inner());
        let iova = m.iova.alloc(size as u64).ok_or_else(|| {
            DeviceError::Other(format!(
                "{}: no IOVA space left for {size} bytes of DMA memory",
                self.bdf
            ))
        })?;
        // SAFETY: `mem` is page aligned, `size` bytes long, and stays alive
        // (a clone is kept in `maps`) until it is unmapped.
        if let Err(e) = unsafe {
            dev.iommu()
                .map(iova, size, mem.as_ptr(), Permissions::ReadWrite)
        } {
            m.iova.free(iova, size as u64);
            let hint = if e.raw_os_error() == Some(libc::ENOMEM) || e.to_string().contains("memory")
            {
                " (VFIO pins DMA memory: raise the locked-memory limit, ulimit -l)"
            } else {
                ""
            };
            return Err(DeviceError::Other(format!(
                "{}: VFIO_IOMMU_MAP_DMA of {size} bytes at IOVA {iova:#x}: {e}{hint}",
                self.bdf
            )));
        }
        m.maps.insert(iova, (size, mem.clone()));
        // SAFETY: `mem` is kept alive by the buffer's owner clone; the
        // memory is only reached through the buffer's volatile accessors.
        Ok(unsafe { DmaBuffer::from_raw(mem.as_ptr(), len, iova, mem) })
    }

    fn free_dma(&self, buf: &DmaBuffer) -> rnic_device::Result<()> {
        let (Dma::Iommu(m), Handle::Type1(dev)) = (&self.dma, &self.handle) else {
            // Physical addresses: nothing to unmap; the slots return to the
            // pool with the last clone of the buffer.
            return Ok(());
        };
        let mut m = m.lock().unwrap_or_else(|p| p.into_inner());
        let iova = buf.bus_addr();
        let Some((size, mem)) = m.maps.remove(&iova) else {
            return Err(DeviceError::Other(format!(
                "{}: no DMA mapping at {iova:#x} (freed twice, or another device's buffer)",
                self.bdf
            )));
        };
        dev.iommu().unmap(iova, size).map_err(|e| {
            DeviceError::Other(format!(
                "{}: VFIO_IOMMU_UNMAP_DMA at {iova:#x}: {e}",
                self.bdf
            ))
        })?;
        m.iova.free(iova, size as u64);
        drop(mem);
        Ok(())
    }

    /// `budget` is in cycles of the backend's clock, [`Device::now`]'s:
    /// `budget / clock_mhz()` µs (budget / 250 µs at the nominal 250 MHz,
    /// or at the `RNIC_PCI_CLOCK_MHZ` that `rnic vm` sets in a guest).
    fn wait_irq(&self, vector: u32, budget: u64) -> rnic_device::Result<IrqWait> {
        let Some((_, fds)) = &self.irqs else {
            return Err(DeviceError::Other(format!(
                "vfio:{}: no interrupts: {}",
                self.bdf, self.irq_error
            )));
        };
        match fds.wait(vector as usize, self.clock.duration(budget)) {
            Ok(true) => Ok(IrqWait::Fired),
            Ok(false) => Ok(IrqWait::TimedOut),
            Err(e) => Err(DeviceError::Other(format!("vfio:{}: {e}", self.bdf))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{MemConfig, COMMAND};
    use crate::fake::FakeSysfs;
    use crate::id::tests::rnic_bar;
    use crate::mmio::FakeBar;

    /// `bring_up` with a reset that counts; the result and the resets.
    fn bring_up_counting(bar: &FakeBar, cfg: &MemConfig) -> (Result<IdBlock>, u32) {
        let mut resets = 0;
        let r = bring_up(
            "0000:03:00.0",
            &mut || {
                resets += 1;
                Ok(())
            },
            bar,
            cfg,
        );
        (r, resets)
    }

    #[test]
    fn bring_up_checks_resets_then_enables() {
        let bar = rnic_bar(0x1000);
        let cfg = MemConfig::new();
        let (id, resets) = bring_up_counting(&bar, &cfg);
        let id = id.unwrap();
        assert_eq!(id.magic, rnic_regs::MAGIC);
        assert_eq!(resets, 1);
        assert_eq!(bar.writes(), 0, "bring-up writes nothing to BAR0");
        assert_eq!(cfg.command(), CMD_MEMORY | CMD_BUS_MASTER);
        // A failed reset is not fatal.
        bring_up(
            "b",
            &mut || Err(io::Error::other("no FLR")),
            &bar,
            &MemConfig::new(),
        )
        .unwrap();
    }

    #[test]
    fn bring_up_refuses_before_any_write() {
        for bar in [FakeBar::new(0x1000), rnic_bar(0x400), {
            let b = rnic_bar(0x1000);
            b.poke(0x04, 0x0002_0000);
            b
        }] {
            let cfg = MemConfig::new();
            let (r, resets) = bring_up_counting(&bar, &cfg);
            assert!(r.is_err());
            assert_eq!(resets, 0, "no reset of a refused function");
            assert_eq!(bar.writes(), 0);
            assert!(
                cfg.writes.borrow().is_empty(),
                "no bus mastering for a refused function"
            );
            assert_eq!(cfg.read16(COMMAND).unwrap(), 0);
        }
    }

    #[test]
    fn open_refuses_with_the_fix() {
        let f = FakeSysfs::new();
        f.add("0000:03:00.0", 0x1234, 0x4e49, 0x020000)
            .group("0000:03:00.0", 11, "DMA");
        let e = VfioDevice::open_with(&f.sysfs(), "03:00.0", Options::default())
            .err()
            .unwrap();
        assert!(matches!(e, PciError::NotVfio { .. }), "{e}");
        assert!(e.to_string().contains("driver_override"));
        f.add("0000:00:03.0", 0x1af4, 0x1041, 0x020000)
            .bind("0000:00:03.0", "virtio-pci");
        let e = VfioDevice::open_with(&f.sysfs(), "00:03.0", Options::default())
            .err()
            .unwrap();
        assert!(matches!(e, PciError::NotRnicId { .. }), "{e}");
        // Bound, but (on this machine) no /dev/vfio/11: named in one line.
        f.bind("0000:03:00.0", "vfio-pci");
        if !std::path::Path::new("/dev/vfio/11").exists() {
            let e = VfioDevice::open_with(&f.sysfs(), "03:00.0", Options::default())
                .err()
                .unwrap();
            assert_eq!(
                e.to_string(),
                "/dev/vfio/11 does not exist: is vfio-pci loaded (modprobe vfio-pci) and the function bound to it?"
            );
        }
        let e = VfioDevice::open_with(&f.sysfs(), "nope", Options::default())
            .err()
            .unwrap();
        assert!(matches!(e, PciError::BadAddress(_)));
    }

    #[test]
    fn node_permissions_are_named() {
        // A node that exists but is not ours to write (skipped as root,
        // who may write anything).
        // SAFETY: plain libc call.
        if unsafe { libc::geteuid() } == 0 {
            return;
        }
        let e = check_node_access("/proc/version").unwrap_err();
        assert!(
            e.to_string()
                .starts_with("permission denied opening /proc/version: "),
            "{e}"
        );
    }

    #[test]
    fn irq_enabling_reports_why_not() {
        let (f, why) = enable_irqs(0, |_| Ok(()));
        assert!(f.is_none());
        assert_eq!(why, "the function has no MSI or MSI-X vectors");
        let (f, _) = enable_irqs(64, |fds| {
            assert_eq!(fds.len(), MAX_VECTORS);
            Ok(())
        });
        assert_eq!(f.unwrap().len(), MAX_VECTORS);
        let (f, why) = enable_irqs(1, |_| Err(io::Error::other("EINVAL")));
        assert!(f.is_none());
        assert!(why.contains("EINVAL"));
    }
}
