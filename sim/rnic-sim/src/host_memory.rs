//! Host memory as the simulated root complex sees it: memory of this
//! process ([`HostMemory`] blocks the simulator allocates, or memory of
//! another party such as a guest's RAM mapped from a file descriptor, any
//! [`DmaMemory`]) registered in an IOMMU-like table of bus addresses.
//!
//! The simulator's own buffers get page-aligned bus addresses handed out
//! upwards from [`HIGH_BASE`] (above 4 GiB, so the NIC must use 64-bit
//! addressing) or, on request, from [`LOW_BASE`] (below 4 GiB, 32-bit
//! addressing). Between two buffers lies an unmapped guard gap of at least
//! one page (plus a seeded random number of pages), so a DMA that runs past
//! the end of a buffer is caught as an IOMMU fault instead of landing in a
//! neighbour. A caller that owns the address space (a vfio-user server, whose
//! client says where each DMA region lives) places mappings itself with
//! [`Iommu::map_at`], with read and write permission of their own.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use rnic_device::HostMemory;

/// First bus address for buffers above 4 GiB.
pub const HIGH_BASE: u64 = 0x1_0000_0000;
/// First bus address for buffers below 4 GiB.
pub const LOW_BASE: u64 = 0x8000_0000;
/// End (exclusive) of the below-4-GiB window (BAR0 sits above it).
pub const LOW_END: u64 = 0xE000_0000;

const PAGE: u64 = 4096;

/// Memory the IOMMU can point at: `len()` bytes from `as_ptr()`, valid for
/// reads and writes for as long as the value lives, accessed only through
/// raw pointers (the device and the host may change it at any time).
pub trait DmaMemory: Send + Sync {
    fn as_ptr(&self) -> *mut u8;
    fn len(&self) -> usize;
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// True when this memory's bytes are reachable in this process only at
    /// `as_ptr()..as_ptr() + len()` (no other mapping of the same pages,
    /// no other process writing them), so that two values share bytes
    /// exactly when their address ranges overlap. A world steps its NICs on
    /// worker threads ([`crate::WorldConfig::parallel`]) only while every
    /// memory each NIC can reach says so and no two NICs reach overlapping
    /// ranges. Default: false (unknown: the world stays serial).
    fn process_private(&self) -> bool {
        false
    }
}

impl DmaMemory for HostMemory {
    fn as_ptr(&self) -> *mut u8 {
        HostMemory::as_ptr(self)
    }
    fn len(&self) -> usize {
        HostMemory::len(self)
    }
    /// A heap block of this process.
    fn process_private(&self) -> bool {
        true
    }
}

/// What the device may do with a mapping.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Access {
    pub read: bool,
    pub write: bool,
}

impl Access {
    pub const READ_WRITE: Access = Access {
        read: true,
        write: true,
    };
    pub const READ_ONLY: Access = Access {
        read: true,
        write: false,
    };
    pub const WRITE_ONLY: Access = Access {
        read: false,
        write: true,
    };
}

/// One registered range: bus addresses `bus..bus+len` are bytes
/// `offset..offset+len` of `mem`.
#[derive(Clone)]
pub struct Mapping {
    pub bus: u64,
    pub len: u64,
    pub access: Access,
    offset: usize,
    mem: Arc<dyn DmaMemory>,
}

impl Mapping {
    pub fn memory(&self) -> &Arc<dyn DmaMemory> {
        &self.mem
    }

    /// Host pointer of bus address `bus` (the mapping's first byte).
    pub fn base_ptr(&self) -> *mut u8 {
        self.host_ptr(self.bus)
    }

    /// Host pointer of bus address `addr`, which must lie in the mapping.
    pub(crate) fn host_ptr(&self, addr: u64) -> *mut u8 {
        debug_assert!(addr >= self.bus && addr < self.bus + self.len);
        // SAFETY: offset + (addr - bus) < offset + len <= mem.len().
        unsafe {
            self.mem
                .as_ptr()
                .add(self.offset + (addr - self.bus) as usize)
        }
    }
}

impl std::fmt::Debug for Mapping {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "Mapping({:#x}+{:#x} {}{})",
            self.bus,
            self.len,
            if self.access.read { "r" } else { "-" },
            if self.access.write { "w" } else { "-" }
        )
    }
}

/// Why [`Iommu::map_at`] refused a mapping.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MapError {
    #[error("{bus:#x}+{len:#x} overlaps the mapping at {other:#x}+{other_len:#x}")]
    Overlap {
        bus: u64,
        len: u64,
        other: u64,
        other_len: u64,
    },
    #[error("{bus:#x}+{len:#x}: empty, wrapping, or beyond the memory behind it")]
    Range { bus: u64, len: u64 },
}

/// Source of [`Iommu::generation`] values, unique in the process.
static GENERATIONS: AtomicU64 = AtomicU64::new(1);

fn next_generation() -> u64 {
    GENERATIONS.fetch_add(1, Ordering::Relaxed)
}

/// The IOMMU table.
#[derive(Debug)]
pub struct Iommu {
    /// Sorted by bus address, non-overlapping.
    maps: Vec<Mapping>,
    next_high: u64,
    next_low: u64,
    last_hit: usize,
    generation: u64,
}

impl Default for Iommu {
    fn default() -> Self {
        Self::new()
    }
}

impl Iommu {
    pub fn new() -> Self {
        Self {
            maps: Vec::new(),
            next_high: HIGH_BASE,
            next_low: LOW_BASE,
            last_hit: 0,
            generation: next_generation(),
        }
    }

    /// Changes whenever the table does (map, unmap, clear), to a value no
    /// other table in the process has had: equal generations mean the same
    /// table with the same mappings.
    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// Register `mem` (read and write) and return its bus address.
    /// `extra_gap_pages` unmapped pages (beyond the one guard page) are left
    /// before it. None when the window is full or the address it would get
    /// is taken by a mapping placed with [`Iommu::map_at`].
    pub fn map(
        &mut self,
        mem: Arc<HostMemory>,
        below_4g: bool,
        extra_gap_pages: u64,
    ) -> Option<u64> {
        let len = mem.len() as u64;
        let span = len.div_ceil(PAGE).max(1) * PAGE;
        let gap = (1 + extra_gap_pages) * PAGE;
        let bus = if below_4g {
            let bus = self.next_low + gap;
            if bus.checked_add(span)? > LOW_END {
                return None;
            }
            self.next_low = bus + span;
            bus
        } else {
            let bus = self.next_high.checked_add(gap)?;
            self.next_high = bus.checked_add(span)?;
            bus
        };
        self.map_at(bus, len, mem, 0, Access::READ_WRITE).ok()?;
        Some(bus)
    }

    /// Register bytes `offset..offset+len` of `mem` at bus address `bus`
    /// with `access`. Refused if it overlaps a mapping or runs past `mem`.
    pub fn map_at(
        &mut self,
        bus: u64,
        len: u64,
        mem: Arc<dyn DmaMemory>,
        offset: usize,
        access: Access,
    ) -> Result<(), MapError> {
        let fits = (offset as u64)
            .checked_add(len)
            .is_some_and(|end| end <= mem.len() as u64);
        if len == 0 || bus.checked_add(len).is_none() || !fits {
            return Err(MapError::Range { bus, len });
        }
        let i = self.maps.partition_point(|m| m.bus < bus);
        let clash = [i.checked_sub(1), Some(i)]
            .into_iter()
            .flatten()
            .filter_map(|j| self.maps.get(j))
            .find(|m| m.bus < bus + len && bus < m.bus + m.len);
        if let Some(m) = clash {
            return Err(MapError::Overlap {
                bus,
                len,
                other: m.bus,
                other_len: m.len,
            });
        }
        self.maps.insert(
            i,
            Mapping {
                bus,
                len,
                access,
                offset,
                mem,
            },
        );
        self.last_hit = 0;
        self.generation = next_generation();
        Ok(())
    }

    /// Remove the mapping that starts at `bus`. Returns it if there was one.
    pub fn unmap(&mut self, bus: u64) -> Option<Mapping> {
        let i = self.maps.iter().position(|m| m.bus == bus)?;
        self.last_hit = 0;
        self.generation = next_generation();
        Some(self.maps.remove(i))
    }

    /// Remove every byte of `bus..bus+len` from the table: mappings inside
    /// it go, mappings that straddle its ends keep their outside parts.
    /// Returns the number of bytes that were mapped in the range.
    pub fn unmap_range(&mut self, bus: u64, len: u64) -> u64 {
        let end = bus.saturating_add(len);
        let mut removed = 0;
        let mut keep = Vec::with_capacity(self.maps.len() + 1);
        for m in self.maps.drain(..) {
            let (m_end, lo, hi) = (m.bus + m.len, m.bus.max(bus), (m.bus + m.len).min(end));
            if lo >= hi {
                keep.push(m);
                continue;
            }
            removed += hi - lo;
            if m.bus < lo {
                keep.push(Mapping {
                    len: lo - m.bus,
                    ..m.clone()
                });
            }
            if hi < m_end {
                keep.push(Mapping {
                    bus: hi,
                    len: m_end - hi,
                    offset: m.offset + (hi - m.bus) as usize,
                    ..m
                });
            }
        }
        self.maps = keep;
        self.last_hit = 0;
        self.generation = next_generation();
        removed
    }

    /// Remove every mapping.
    pub fn clear(&mut self) {
        self.maps.clear();
        self.last_hit = 0;
        self.generation = next_generation();
    }

    /// The mapping that holds every byte of `addr..addr+len` (`len` >= 1),
    /// whatever its access.
    pub fn lookup(&mut self, addr: u64, len: u64) -> Option<&Mapping> {
        let end = addr.checked_add(len.max(1))?;
        let hit = |m: &Mapping| addr >= m.bus && end <= m.bus + m.len;
        if let Some(m) = self.maps.get(self.last_hit) {
            if hit(m) {
                return self.maps.get(self.last_hit);
            }
        }
        let i = self.maps.partition_point(|m| m.bus <= addr);
        if i == 0 {
            return None;
        }
        if hit(&self.maps[i - 1]) {
            self.last_hit = i - 1;
            return self.maps.get(i - 1);
        }
        None
    }

    /// As [`Iommu::lookup`], and the mapping allows a write (`write`) or a
    /// read (`!write`).
    pub fn lookup_for(&mut self, addr: u64, len: u64, write: bool) -> Option<&Mapping> {
        self.lookup(addr, len)
            .filter(|m| if write { m.access.write } else { m.access.read })
    }

    pub fn mappings(&self) -> &[Mapping] {
        &self.maps
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn map_lookup_guard() {
        let mut io = Iommu::new();
        let a = io
            .map(Arc::new(HostMemory::new(100).unwrap()), false, 0)
            .unwrap();
        let b = io
            .map(Arc::new(HostMemory::new(8192).unwrap()), false, 3)
            .unwrap();
        let c = io
            .map(Arc::new(HostMemory::new(64).unwrap()), true, 0)
            .unwrap();
        assert!(a >= HIGH_BASE && a % PAGE == 0);
        assert!(b >= a + 2 * PAGE + 3 * PAGE, "guard gap");
        assert!(c < 1 << 32);
        assert!(io.lookup(a, 100).is_some());
        assert!(io.lookup(a + 99, 1).is_some());
        assert!(io.lookup(a + 99, 2).is_none(), "past the end");
        assert!(io.lookup(a - 1, 1).is_none());
        assert!(io.lookup(b + 4096, 4096).is_some());
        assert!(io.lookup(b + 4096, 4097).is_none());
        assert!(io.lookup(c, 64).is_some());
        assert!(io.unmap(b).is_some());
        assert!(io.lookup(b, 1).is_none());
        assert!(io.lookup(a, 1).is_some());
    }

    #[test]
    fn placed_mappings_with_access_and_range_unmap() {
        let mut io = Iommu::new();
        let mem: Arc<dyn DmaMemory> = Arc::new(HostMemory::new(4 * 4096).unwrap());
        io.map_at(0x10_0000, 2 * 4096, mem.clone(), 0, Access::READ_WRITE)
            .unwrap();
        io.map_at(0x20_0000, 4096, mem.clone(), 3 * 4096, Access::READ_ONLY)
            .unwrap();
        let e = io
            .map_at(0x10_1000, 4096, mem.clone(), 0, Access::READ_WRITE)
            .unwrap_err();
        assert!(
            matches!(
                e,
                MapError::Overlap {
                    other: 0x10_0000,
                    ..
                }
            ),
            "{e}"
        );
        assert!(io
            .map_at(0x30_0000, 8192, mem.clone(), 3 * 4096, Access::READ_ONLY)
            .is_err());
        assert!(io
            .map_at(0x30_0000, 0, mem.clone(), 0, Access::READ_ONLY)
            .is_err());
        // Bus address -> memory offset.
        let m = io.lookup(0x20_0010, 4).unwrap();
        assert_eq!(m.host_ptr(0x20_0010), unsafe {
            mem.as_ptr().add(3 * 4096 + 0x10)
        });
        assert!(io.lookup_for(0x20_0000, 4, false).is_some());
        assert!(io.lookup_for(0x20_0000, 4, true).is_none(), "read-only");
        assert!(io.lookup_for(0x10_0000, 8192, true).is_some());
        // Unmap the middle of the first mapping: both ends stay.
        assert_eq!(io.unmap_range(0x10_0800, 0x1000), 0x1000);
        assert!(io.lookup(0x10_0000, 0x800).is_some());
        assert!(io.lookup(0x10_0800, 1).is_none());
        assert!(io.lookup(0x10_17ff, 1).is_none());
        let tail = io.lookup(0x10_1800, 0x800).unwrap();
        assert_eq!(tail.host_ptr(0x10_1800), unsafe {
            mem.as_ptr().add(0x1800)
        });
        // A range over everything.
        assert_eq!(io.unmap_range(0, u64::MAX), 0x800 + 0x800 + 0x1000);
        assert!(io.mappings().is_empty());
    }
}
