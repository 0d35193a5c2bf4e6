//! Host memory as the simulated root complex sees it: real process memory
//! ([`HostMemory`] blocks) registered in an IOMMU-like table of bus
//! addresses.
//!
//! Bus addresses are page aligned and handed out upwards from
//! [`HIGH_BASE`] (above 4 GiB, so the NIC must use 64-bit addressing) or,
//! on request, from [`LOW_BASE`] (below 4 GiB, 32-bit addressing). Between
//! two buffers lies an unmapped guard gap of at least one page (plus a
//! seeded random number of pages), so a DMA that runs past the end of a
//! buffer is caught as an IOMMU fault instead of landing in a neighbour.

use std::sync::Arc;

use rnic_device::HostMemory;

/// First bus address for buffers above 4 GiB.
pub const HIGH_BASE: u64 = 0x1_0000_0000;
/// First bus address for buffers below 4 GiB.
pub const LOW_BASE: u64 = 0x8000_0000;
/// End (exclusive) of the below-4-GiB window (BAR0 sits above it).
pub const LOW_END: u64 = 0xE000_0000;

const PAGE: u64 = 4096;

/// One registered buffer.
#[derive(Clone)]
pub struct Mapping {
    pub bus: u64,
    pub len: u64,
    mem: Arc<HostMemory>,
}

impl Mapping {
    pub fn memory(&self) -> &Arc<HostMemory> {
        &self.mem
    }

    /// Host pointer of bus address `addr`, which must lie in the mapping.
    pub(crate) fn host_ptr(&self, addr: u64) -> *mut u8 {
        debug_assert!(addr >= self.bus && addr < self.bus + self.len);
        // SAFETY: addr - bus < len, inside the allocation.
        unsafe { self.mem.as_ptr().add((addr - self.bus) as usize) }
    }
}

impl std::fmt::Debug for Mapping {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Mapping({:#x}+{:#x})", self.bus, self.len)
    }
}

/// The IOMMU table.
#[derive(Debug)]
pub struct Iommu {
    /// Sorted by bus address, non-overlapping.
    maps: Vec<Mapping>,
    next_high: u64,
    next_low: u64,
    last_hit: usize,
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
        }
    }

    /// Register `mem` and return its bus address. `extra_gap_pages`
    /// unmapped pages (beyond the one guard page) are left before it.
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
        let i = self.maps.partition_point(|m| m.bus < bus);
        self.maps.insert(i, Mapping { bus, len, mem });
        Some(bus)
    }

    /// Remove the mapping that starts at `bus`. Returns it if there was one.
    pub fn unmap(&mut self, bus: u64) -> Option<Mapping> {
        let i = self.maps.iter().position(|m| m.bus == bus)?;
        self.last_hit = 0;
        Some(self.maps.remove(i))
    }

    /// The mapping that holds every byte of `addr..addr+len` (`len` >= 1).
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
}
