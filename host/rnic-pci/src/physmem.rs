//! DMA memory by physical address, for machines where no IOMMU translates
//! the function's requests (the sysfs backend, VFIO no-IOMMU mode).
//!
//! A DMA buffer needs one bus address for its whole length, and that
//! address must not change while the device may use it. Memory comes from
//! 2 MiB huge pages (`MAP_HUGETLB`, physically contiguous, never swapped),
//! locked with `mlock`, and its physical address is read from
//! `/proc/self/pagemap` (which gives page frame numbers only to
//! CAP_SYS_ADMIN). Buffers are carved out of the huge pages in 4 KiB
//! steps, so a buffer is at most 2 MiB. The kernel could still migrate a
//! huge page (memory offlining); like DPDK without an IOMMU, rnic accepts
//! that on a lab machine, and the IOMMU path (VFIO) has no such caveat.

use std::fs::File;
use std::os::unix::fs::FileExt;
use std::sync::{Arc, Mutex};

use rnic_device::DmaBuffer;

use crate::error::{PciError, Result};

/// Granule of allocation inside a huge page.
pub const PAGE: usize = 4096;
/// Size of the huge pages DMA memory comes from.
pub const HUGE_PAGE: usize = 2 << 20;
const SLOTS: usize = HUGE_PAGE / PAGE;

/// One entry of `/proc/PID/pagemap`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PagemapEntry {
    NotPresent,
    Swapped,
    /// Present, with its page frame number (0 when the reader lacks
    /// CAP_SYS_ADMIN: the kernel hides frame numbers).
    Present(u64),
}

/// Decodes a pagemap entry: bit 63 present, bit 62 swapped, bits 54:0 the
/// page frame number (Documentation/admin-guide/mm/pagemap.rst).
pub fn decode_pagemap(entry: u64) -> PagemapEntry {
    if entry >> 63 & 1 == 1 {
        PagemapEntry::Present(entry & ((1 << 55) - 1))
    } else if entry >> 62 & 1 == 1 {
        PagemapEntry::Swapped
    } else {
        PagemapEntry::NotPresent
    }
}

fn page_size() -> usize {
    // SAFETY: plain libc call.
    let s = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    if s > 0 {
        s as usize
    } else {
        PAGE
    }
}

/// The physical address of virtual address `vaddr` of this process. The
/// page must be resident (touched and locked).
pub fn virt_to_phys(vaddr: usize) -> Result<u64> {
    let ps = page_size();
    let f = File::open("/proc/self/pagemap")
        .map_err(|e| PciError::open("/proc/self/pagemap", e, "run as root (CAP_SYS_ADMIN)"))?;
    let mut b = [0u8; 8];
    f.read_exact_at(&mut b, (vaddr / ps * 8) as u64)
        .map_err(|e| PciError::io("reading /proc/self/pagemap", e))?;
    match decode_pagemap(u64::from_le_bytes(b)) {
        PagemapEntry::Present(0) => Err(PciError::NoPagemap),
        PagemapEntry::Present(pfn) => Ok(pfn * ps as u64 + (vaddr % ps) as u64),
        other => Err(PciError::Unsupported(format!(
            "virtual address {vaddr:#x} is not resident ({other:?}): it has no physical address"
        ))),
    }
}

/// Huge pages free now (`HugePages_Free` of `/proc/meminfo`).
pub fn huge_pages_free() -> u64 {
    std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|m| {
            m.lines()
                .find_map(|l| l.strip_prefix("HugePages_Free:"))
                .and_then(|v| v.trim().parse().ok())
        })
        .unwrap_or(0)
}

/// One locked 2 MiB huge page and its physical address.
#[derive(Debug)]
pub struct HugePage {
    ptr: *mut u8,
    phys: u64,
}

// SAFETY: the page is only reached through raw pointers.
unsafe impl Send for HugePage {}
unsafe impl Sync for HugePage {}

impl HugePage {
    pub fn new() -> Result<Self> {
        // SAFETY: an anonymous private mapping; checked below.
        let ptr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                HUGE_PAGE,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_HUGETLB | libc::MAP_POPULATE,
                -1,
                0,
            )
        };
        if ptr == libc::MAP_FAILED {
            return Err(PciError::NoHugePages {
                free: huge_pages_free(),
            });
        }
        // Owned from here: an error below unmaps it.
        let mut page = HugePage {
            ptr: ptr.cast(),
            phys: 0,
        };
        // SAFETY: the mapping made above.
        if unsafe { libc::mlock(ptr, HUGE_PAGE) } != 0 {
            return Err(PciError::io(
                "locking a huge page for DMA (raise the locked-memory limit: ulimit -l)",
                std::io::Error::last_os_error(),
            ));
        }
        // SAFETY: our own fresh mapping, not yet visible to any device.
        unsafe { std::ptr::write_bytes(page.ptr, 0, HUGE_PAGE) };
        page.phys = virt_to_phys(page.ptr as usize)?;
        Ok(page)
    }

    pub fn as_ptr(&self) -> *mut u8 {
        self.ptr
    }

    pub fn phys(&self) -> u64 {
        self.phys
    }
}

impl Drop for HugePage {
    fn drop(&mut self) {
        // SAFETY: the mapping made in `new`, no longer referenced (every
        // block holds an Arc to its slab, and the slab owns this page).
        unsafe { libc::munmap(self.ptr.cast(), HUGE_PAGE) };
    }
}

/// Free 4 KiB slots of a huge page: a bit per slot, 1 = in use.
type SlotMap = [u64; SLOTS / 64];

fn slot_used(m: &SlotMap, i: usize) -> bool {
    m[i / 64] >> (i % 64) & 1 == 1
}

fn set_slots(m: &mut SlotMap, first: usize, n: usize, used: bool) {
    for i in first..first + n {
        if used {
            m[i / 64] |= 1 << (i % 64);
        } else {
            m[i / 64] &= !(1 << (i % 64));
        }
    }
}

/// First run of `n` free slots.
fn find_run(m: &SlotMap, n: usize) -> Option<usize> {
    let mut start = 0;
    while start + n <= SLOTS {
        match (start..start + n).find(|&i| slot_used(m, i)) {
            None => return Some(start),
            Some(used) => start = used + 1,
        }
    }
    None
}

struct Slab {
    page: HugePage,
    used: Mutex<SlotMap>,
}

/// A buffer's slots; frees them when the last clone of the buffer goes.
struct Block {
    slab: Arc<Slab>,
    first: usize,
    n: usize,
}

impl Drop for Block {
    fn drop(&mut self) {
        let mut m = self.slab.used.lock().unwrap_or_else(|p| p.into_inner());
        set_slots(&mut m, self.first, self.n, false);
    }
}

/// DMA buffers carved out of locked huge pages, by physical address.
#[derive(Default)]
pub struct PhysPool {
    slabs: Mutex<Vec<Arc<Slab>>>,
}

impl PhysPool {
    pub fn new() -> Self {
        Self::default()
    }

    /// A zeroed buffer of `len` bytes (at most 2 MiB), 4 KiB aligned, whose
    /// bus address is its physical address.
    pub fn alloc(&self, len: usize) -> Result<DmaBuffer> {
        let n = len.div_ceil(PAGE).max(1);
        if n > SLOTS {
            return Err(PciError::Unsupported(format!(
                "DMA buffer of {len} bytes: without an IOMMU a buffer is at most one 2 MiB huge page; use vfio:BDF"
            )));
        }
        let mut slabs = self.slabs.lock().unwrap_or_else(|p| p.into_inner());
        let mut found = None;
        for s in slabs.iter() {
            let mut m = s.used.lock().unwrap_or_else(|p| p.into_inner());
            if let Some(first) = find_run(&m, n) {
                set_slots(&mut m, first, n, true);
                found = Some((s.clone(), first));
                break;
            }
        }
        let (slab, first) = match found {
            Some(f) => f,
            None => {
                let slab = Arc::new(Slab {
                    page: HugePage::new()?,
                    used: Mutex::new([0; SLOTS / 64]),
                });
                set_slots(&mut slab.used.lock().unwrap(), 0, n, true);
                slabs.push(slab.clone());
                (slab, 0)
            }
        };
        let off = first * PAGE;
        // SAFETY: slots first..first+n of a page we own, reserved above.
        let ptr = unsafe { slab.page.as_ptr().add(off) };
        // SAFETY: reserved for this buffer; earlier users' buffers are gone
        // (their Block was dropped), and the memory is never referenced.
        unsafe { std::ptr::write_bytes(ptr, 0, n * PAGE) };
        let bus = slab.page.phys() + off as u64;
        let owner = Arc::new(Block { slab, first, n });
        // SAFETY: `owner` keeps the slab, and so the page, mapped; the slots
        // stay reserved until it is dropped.
        Ok(unsafe { DmaBuffer::from_raw(ptr, len, bus, owner) })
    }

    /// Huge pages mapped so far.
    pub fn huge_pages(&self) -> usize {
        self.slabs.lock().map(|s| s.len()).unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pagemap_entries_decode() {
        assert_eq!(decode_pagemap(0), PagemapEntry::NotPresent);
        assert_eq!(decode_pagemap(1 << 62), PagemapEntry::Swapped);
        assert_eq!(
            decode_pagemap(1 << 63 | 0x1234),
            PagemapEntry::Present(0x1234)
        );
        // Soft-dirty (55), exclusive (56) and file (61) bits are not PFN bits.
        assert_eq!(
            decode_pagemap(1 << 63 | 1 << 61 | 1 << 56 | 1 << 55 | 0x7_ffff_ffff_ffff),
            PagemapEntry::Present(0x7_ffff_ffff_ffff)
        );
        assert_eq!(decode_pagemap(1 << 63), PagemapEntry::Present(0));
    }

    #[test]
    fn slot_runs() {
        let mut m: SlotMap = [0; SLOTS / 64];
        assert_eq!(find_run(&m, SLOTS), Some(0));
        assert_eq!(find_run(&m, SLOTS + 1), None);
        set_slots(&mut m, 0, 3, true);
        set_slots(&mut m, 4, 60, true);
        assert_eq!(find_run(&m, 1), Some(3));
        assert_eq!(find_run(&m, 2), Some(64));
        set_slots(&mut m, 4, 60, false);
        assert_eq!(find_run(&m, 61), Some(3));
        assert_eq!(find_run(&m, SLOTS - 3), Some(3));
        assert_eq!(find_run(&m, SLOTS - 2), None);
    }

    fn is_root() -> bool {
        // SAFETY: plain libc call.
        unsafe { libc::geteuid() == 0 }
    }

    /// Our own pagemap: a locked page has a frame, and two addresses in
    /// one page share it.
    #[test]
    fn own_pagemap() {
        let mem = rnic_device::HostMemory::new(PAGE).unwrap();
        let p = mem.as_ptr();
        // SAFETY: our own page; touch it and lock it resident.
        unsafe {
            p.write_volatile(1);
            assert_eq!(libc::mlock(p.cast(), PAGE), 0);
        }
        match virt_to_phys(p as usize) {
            Ok(phys) => {
                assert_ne!(phys, 0);
                assert_eq!(phys % PAGE as u64, 0);
                assert_eq!(virt_to_phys(p as usize + 0x123).unwrap(), phys + 0x123);
            }
            Err(PciError::NoPagemap) => assert!(!is_root(), "root reads frame numbers"),
            Err(e) => panic!("{e}"),
        }
        // SAFETY: locked above.
        unsafe { libc::munlock(p.cast(), PAGE) };
    }

    /// With huge pages reserved (`echo 2 > /proc/sys/vm/nr_hugepages`) and
    /// root: buffers come from one huge page, physically contiguous, and
    /// freed slots are reused. Otherwise the refusal names the fix.
    #[test]
    fn huge_page_buffers() {
        let pool = PhysPool::new();
        let a = match pool.alloc(100) {
            Ok(a) => a,
            Err(e @ PciError::NoHugePages { .. }) => {
                assert!(e.to_string().contains("nr_hugepages"));
                eprintln!("skipped: {e}");
                return;
            }
            Err(PciError::NoPagemap) if !is_root() => return,
            Err(e) => panic!("{e}"),
        };
        let b = pool.alloc(3 * PAGE + 1).unwrap();
        assert_eq!(b.bus_addr(), a.bus_addr() + PAGE as u64);
        assert_eq!(b.len(), 3 * PAGE + 1);
        // Every 4 KiB page of the huge page maps to the next frame.
        for i in 0..4 {
            let va = b.as_ptr() as usize + i * PAGE;
            assert_eq!(virt_to_phys(va).unwrap(), b.bus_addr() + (i * PAGE) as u64);
        }
        b.write_u32(0, 0xdead_beef);
        assert_eq!(b.read_u32(0), 0xdead_beef);
        let a_bus = a.bus_addr();
        drop(a);
        let c = pool.alloc(PAGE).unwrap();
        assert_eq!(c.bus_addr(), a_bus, "a freed slot is reused");
        assert_eq!(c.read_u32(0), 0, "and zeroed");
        assert!(pool.alloc(HUGE_PAGE + 1).is_err());
        assert_eq!(pool.huge_pages(), 1);
    }
}
