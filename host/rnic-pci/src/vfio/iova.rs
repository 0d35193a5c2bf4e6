//! I/O virtual addresses for DMA buffers: first fit over the ranges the
//! IOMMU accepts, inside a window (above 4 GiB by default, so a bus
//! address is never mistaken for a 32-bit one; below 4 GiB on request).

use std::collections::BTreeMap;
use std::ops::Range;

/// The default window: 4 GiB up to 2^48 (every x86 IOMMU has 48 bits).
pub const ABOVE_4G: Range<u64> = (1 << 32)..(1 << 48);
/// The window for a device that needs 32-bit bus addresses (the first
/// MiB left out).
pub const BELOW_4G: Range<u64> = (1 << 20)..(1 << 32);

/// Free IOVA ranges, first fit, neighbours merged on free.
#[derive(Debug, Clone)]
pub struct IovaAllocator {
    /// start -> end of each free range.
    free: BTreeMap<u64, u64>,
    align: u64,
}

impl IovaAllocator {
    /// The parts of `valid` (the IOMMU's ranges, end exclusive) inside
    /// `window`, in `align`-sized steps (a power of two).
    pub fn new(valid: &[Range<u64>], window: Range<u64>, align: u64) -> Self {
        assert!(align.is_power_of_two());
        let mut free = BTreeMap::new();
        for r in valid {
            let start = r.start.max(window.start).next_multiple_of(align);
            let end = r.end.min(window.end) & !(align - 1);
            if start < end {
                free.insert(start, end);
            }
        }
        Self { free, align }
    }

    /// Bytes free.
    pub fn available(&self) -> u64 {
        self.free.iter().map(|(s, e)| e - s).sum()
    }

    /// An IOVA for `size` bytes (rounded up to the alignment).
    pub fn alloc(&mut self, size: u64) -> Option<u64> {
        let size = size.max(1).checked_next_multiple_of(self.align)?;
        let (&start, &end) = self.free.iter().find(|(s, e)| *e - *s >= size)?;
        self.free.remove(&start);
        if start + size < end {
            self.free.insert(start + size, end);
        }
        Some(start)
    }

    /// Returns `iova..iova+size` (as allocated) to the free ranges.
    pub fn free(&mut self, iova: u64, size: u64) {
        let size = size.max(1).next_multiple_of(self.align);
        let (mut start, mut end) = (iova, iova + size);
        if let Some((&ps, &pe)) = self.free.range(..start).next_back() {
            if pe == start {
                self.free.remove(&ps);
                start = ps;
            }
        }
        if let Some(&ne) = self.free.get(&end) {
            self.free.remove(&end);
            end = ne;
        }
        self.free.insert(start, end);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const G4: u64 = 1 << 32;

    #[test]
    fn first_fit_above_4g_with_merging() {
        // An x86 IOMMU's ranges: everything but the MSI window, 48 bits.
        let valid = [0..0xfee0_0000, 0xfef0_0000..(1 << 48)];
        let mut a = IovaAllocator::new(&valid, ABOVE_4G, 4096);
        assert_eq!(a.available(), (1 << 48) - G4);
        let x = a.alloc(1).unwrap();
        let y = a.alloc(8192).unwrap();
        let z = a.alloc(4096).unwrap();
        assert_eq!((x, y, z), (G4, G4 + 4096, G4 + 3 * 4096));
        a.free(y, 8192);
        assert_eq!(a.alloc(4096), Some(G4 + 4096), "first fit reuses the hole");
        a.free(G4 + 4096, 4096);
        a.free(x, 1);
        a.free(z, 4096);
        assert_eq!(a.free.len(), 1, "all merged back: {:?}", a.free);
        assert_eq!(a.available(), (1 << 48) - G4);
    }

    #[test]
    fn below_4g_skips_the_holes() {
        let valid = [0..0xfee0_0000, 0xfef0_0000..(1 << 39)];
        let mut a = IovaAllocator::new(&valid, BELOW_4G, 4096);
        assert_eq!(a.alloc(4096), Some(1 << 20));
        let big = 0xfee0_0000 - (1 << 20) - 4096;
        assert_eq!(a.alloc(big), Some((1 << 20) + 4096));
        // Nothing fits below the MSI window now; the next comes after it.
        assert_eq!(a.alloc(4096), Some(0xfef0_0000));
        let left = a.available();
        assert_eq!(left, G4 - 0xfef0_0000 - 4096);
        assert_eq!(a.alloc(left + 4096), None);
        assert!(a.alloc(left).is_some());
        assert_eq!(a.alloc(1), None);
    }

    #[test]
    fn a_window_outside_the_ranges_is_empty() {
        let low = [0..(1 << 30), 0..0];
        let mut a = IovaAllocator::new(&low, ABOVE_4G, 4096);
        assert_eq!(a.available(), 0);
        assert_eq!(a.alloc(4096), None);
        let odd = [0x1234..0x10_0000_1000, 0..0];
        let a = IovaAllocator::new(&odd, ABOVE_4G, 0x10000);
        assert_eq!(a.free.first_key_value(), Some((&G4, &0x10_0000_0000)));
    }
}
