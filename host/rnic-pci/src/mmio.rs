//! BAR0 as 32-bit volatile accesses through a raw pointer.
//!
//! A mapped BAR is device memory: a read may return something new every
//! time and a write may have side effects, so no Rust reference (and no
//! `&VolatileCell`) is ever formed over it. [`Mmio`] keeps the pointer and
//! the length, and every access is one `read_volatile`/`write_volatile` of
//! a `u32` after a bounds and alignment check. The same type serves a test
//! buffer standing in for BAR0 ([`FakeBar`]).

use rnic_device::{DeviceError, Result};

/// 32-bit register access to a BAR: a mapping, or (for BARs VFIO will not
/// let user space map) reads and writes through the device file.
pub trait Bar32 {
    /// Length of the BAR in bytes.
    fn size(&self) -> u64;
    fn read32(&self, offset: u64) -> Result<u32>;
    fn write32(&self, offset: u64, value: u32) -> Result<()>;
}

impl<B: Bar32 + ?Sized> Bar32 for Box<B> {
    fn size(&self) -> u64 {
        (**self).size()
    }
    fn read32(&self, offset: u64) -> Result<u32> {
        (**self).read32(offset)
    }
    fn write32(&self, offset: u64, value: u32) -> Result<()> {
        (**self).write32(offset, value)
    }
}

/// Checks a 32-bit access at `offset` of a BAR of `len` bytes.
pub fn check_access(offset: u64, len: u64) -> Result<()> {
    if !offset.is_multiple_of(4) {
        return Err(DeviceError::Unaligned(offset));
    }
    if offset.checked_add(4).is_none_or(|end| end > len) {
        return Err(DeviceError::OutOfBar {
            offset,
            bar_len: len,
        });
    }
    Ok(())
}

/// A mapped BAR: a base pointer and a length, accessed only with volatile
/// 32-bit loads and stores.
#[derive(Debug)]
pub struct Mmio {
    base: *mut u8,
    len: usize,
}

// SAFETY: `Mmio` only performs volatile accesses through the raw pointer;
// the mapping's owner keeps it alive and is responsible for unmapping after
// the `Mmio` is gone.
unsafe impl Send for Mmio {}
unsafe impl Sync for Mmio {}

impl Mmio {
    /// # Safety
    /// `base..base+len` must stay mapped, readable and writable for the
    /// life of the returned value, 4-byte aligned, and never be accessed
    /// through Rust references.
    pub unsafe fn new(base: *mut u8, len: usize) -> Self {
        Self { base, len }
    }

    pub fn as_ptr(&self) -> *mut u8 {
        self.base
    }
}

impl Bar32 for Mmio {
    fn size(&self) -> u64 {
        self.len as u64
    }

    fn read32(&self, offset: u64) -> Result<u32> {
        check_access(offset, self.len as u64)?;
        // SAFETY: in bounds and aligned (checked); mapped for our life
        // (contract of `new`). Little-endian on the bus.
        let v = unsafe { self.base.add(offset as usize).cast::<u32>().read_volatile() };
        Ok(u32::from_le(v))
    }

    fn write32(&self, offset: u64, value: u32) -> Result<()> {
        check_access(offset, self.len as u64)?;
        // SAFETY: as in `read32`.
        unsafe {
            self.base
                .add(offset as usize)
                .cast::<u32>()
                .write_volatile(value.to_le())
        };
        Ok(())
    }
}

/// Host memory standing in for BAR0 in tests (and for tools that want to
/// check code against a register image): an [`Mmio`] over an owned buffer
/// that counts the writes it sees.
pub struct FakeBar {
    words: Box<[std::cell::UnsafeCell<u32>]>,
    writes: std::cell::Cell<u32>,
}

impl FakeBar {
    /// A zeroed BAR of `len` bytes (a multiple of 4).
    pub fn new(len: usize) -> Self {
        Self {
            words: (0..len / 4)
                .map(|_| std::cell::UnsafeCell::new(0))
                .collect(),
            writes: std::cell::Cell::new(0),
        }
    }

    /// Sets a word without counting it as a write (the "hardware" side).
    pub fn poke(&self, offset: u64, value: u32) {
        // SAFETY: in bounds (indexing panics otherwise); single-threaded.
        unsafe { *self.words[(offset / 4) as usize].get() = value }
    }

    /// Writes seen through [`Bar32::write32`].
    pub fn writes(&self) -> u32 {
        self.writes.get()
    }

    fn mmio(&self) -> Mmio {
        // SAFETY: the buffer lives as long as `self`, which outlives this
        // temporary; it is only reached through raw pointers.
        unsafe { Mmio::new(self.words.as_ptr() as *mut u8, self.words.len() * 4) }
    }
}

impl Bar32 for FakeBar {
    fn size(&self) -> u64 {
        self.words.len() as u64 * 4
    }

    fn read32(&self, offset: u64) -> Result<u32> {
        self.mmio().read32(offset)
    }

    fn write32(&self, offset: u64, value: u32) -> Result<()> {
        self.writes.set(self.writes.get() + 1);
        self.mmio().write32(offset, value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn volatile_words_with_checks() {
        let bar = FakeBar::new(0x100);
        bar.poke(0x0c, 0x524e_4943);
        assert_eq!(bar.read32(0x0c).unwrap(), 0x524e_4943);
        bar.write32(0xfc, 7).unwrap();
        assert_eq!(bar.read32(0xfc).unwrap(), 7);
        assert_eq!(bar.writes(), 1);
        assert!(matches!(
            bar.read32(0x100),
            Err(DeviceError::OutOfBar { .. })
        ));
        assert!(matches!(
            bar.read32(0xfe),
            Err(DeviceError::Unaligned(0xfe))
        ));
        assert!(matches!(
            bar.write32(u64::MAX - 1, 0),
            Err(DeviceError::Unaligned(_))
        ));
        assert!(matches!(
            bar.read32(u64::MAX - 3),
            Err(DeviceError::OutOfBar { .. })
        ));
        assert_eq!(bar.writes(), 2, "a refused write is counted but not done");
    }
}
