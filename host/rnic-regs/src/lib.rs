//! BAR0 register access for rnic, generated from `hw/regs/rnic_csr.rdl`.
//!
//! - [`generated`]: typed registers and fields (`peakrdl rust`), accessed
//!   through any [`RegisterIO`](peakrdl_rust::io::RegisterIO).
//! - [`DeviceIo`]: that IO over a [`Device`], so the same typed API works on
//!   the simulator and on hardware. Pointers of the generated API are BAR0
//!   byte offsets; nothing is ever dereferenced.
//! - [`table`] / [`generated_table`]: every register with its fields as
//!   static data, for dumping registers by name (`rnic regs`).
//! - [`discover`]: walk the Corundum-style linked list of register blocks.
//!
//! ```no_run
//! # fn demo(dev: &impl rnic_device::Device) -> Result<(), rnic_device::DeviceError> {
//! let io = rnic_regs::DeviceIo::new(dev);
//! let csr = io.csr();
//! let magic = csr.id().magic().try_read()?.magic();
//! assert_eq!(magic, rnic_regs::MAGIC);
//! csr.queue().sq_db().try_write(|r| {
//!     r.set_qn(3);
//!     r.set_pi(17);
//! })?;
//! # Ok(()) }
//! ```
//!
//! Regenerate with `hw/regs/generate.sh`; never edit `src/generated*`.

// Generated registers with a field named `len` get no `is_empty`; that is fine for a register.
#![allow(clippy::len_without_is_empty)]

use std::collections::HashSet;

use peakrdl_rust::io::RawRegisterIO;
use peakrdl_rust::reg::RegInt;
use rnic_device::{Device, DeviceError};

// The generated unit tests compare with bool literals; the rest is clean.
// Register descriptions like "major[31:16]" are not intra-doc links.
#[allow(clippy::bool_assert_comparison, rustdoc::broken_intra_doc_links)]
pub mod generated;
pub mod generated_table;
pub mod table;

// `generated` hides its items from rustdoc's doctest collection pass (so
// that register descriptions are never run as doctests); what names them
// here must be hidden the same way. Doctests still link the full crate.
#[cfg(not(doctest))]
pub use generated::RnicCsr;
pub use generated_table::{BLOCK_TYPE_DMA, BLOCK_TYPE_ID, BLOCK_TYPE_QUEUE};

/// Value of `id.magic`: "RNIC".
pub const MAGIC: u32 = 0x524E_4943;

/// Offsets of the three words every register block starts with.
pub const BLK_TYPE: u64 = 0x0;
pub const BLK_VERSION: u64 = 0x4;
pub const BLK_NEXT: u64 = 0x8;

/// [`RegisterIO`](peakrdl_rust::io::RegisterIO) over a [`Device`]: the
/// "pointer" the generated API hands in is a BAR0 byte offset, and every
/// access becomes one [`Device::read32`] / [`Device::write32`].
///
/// Only 32-bit, 4-byte aligned accesses are legal (BAR0 is a 32-bit register
/// file); anything else is refused with an error before reaching the device.
pub struct DeviceIo<'a, D: Device + ?Sized> {
    dev: &'a D,
}

impl<'a, D: Device + ?Sized> DeviceIo<'a, D> {
    pub fn new(dev: &'a D) -> Self {
        Self { dev }
    }

    /// The device behind this IO.
    pub fn device(&self) -> &'a D {
        self.dev
    }
}

#[cfg(not(doctest))]
impl<D: Device + ?Sized> DeviceIo<'_, D> {
    /// The typed register map, with the map's base at BAR0 offset 0.
    pub fn csr(&self) -> RnicCsr<'_, Self> {
        // SAFETY: `DeviceIo` never dereferences the pointers the register
        // block derives from this base; it only uses their address as an
        // offset for `Device::read32`/`write32`, which check it.
        unsafe { RnicCsr::from_ptr_with(bar_ptr(0), self) }
    }
}

/// The typed register map of `io`'s device (same as [`DeviceIo::csr`]).
#[cfg(not(doctest))]
pub fn csr<'a, D: Device + ?Sized>(io: &'a DeviceIo<'_, D>) -> RnicCsr<'a, DeviceIo<'a, D>> {
    // Shorten the IO's device lifetime to the borrow; DeviceIo is covariant.
    let io: &'a DeviceIo<'a, D> = io;
    io.csr()
}

/// A "pointer" standing for BAR0 byte offset `offset`, to place a generated
/// block at an offset found by [`discover`], e.g.
/// `unsafe { generated::components::queue_block::QueueBlock::from_ptr_with(bar_ptr(off), &io) }`.
/// Such a pointer is only meaningful with [`DeviceIo`]; it must never be
/// dereferenced.
pub fn bar_ptr(offset: u64) -> *mut () {
    core::ptr::null_mut::<u8>()
        .wrapping_add(offset as usize)
        .cast()
}

/// Checks an access and returns its BAR0 offset.
fn access_offset<T>(ptr: *const T) -> Result<u64, DeviceError> {
    let offset = ptr as usize as u64;
    let size = core::mem::size_of::<T>();
    if size != 4 {
        return Err(DeviceError::Other(format!(
            "{}-bit MMIO access at BAR0 offset {offset:#x}: only 32-bit accesses are legal",
            size * 8
        )));
    }
    if !offset.is_multiple_of(4) {
        return Err(DeviceError::Unaligned(offset));
    }
    Ok(offset)
}

impl<D: Device + ?Sized> RawRegisterIO for DeviceIo<'_, D> {
    type Error = DeviceError;

    /// Reads the dword at BAR0 offset `ptr as usize`.
    ///
    /// # Safety
    /// Always safe: the pointer is not dereferenced.
    unsafe fn try_read<T: RegInt>(&self, ptr: *const T) -> Result<T, DeviceError> {
        let offset = access_offset(ptr)?;
        let value = self.dev.read32(offset)?;
        // As a volatile load would see it: BAR0 bytes are little-endian in
        // memory, and the caller converts from the register's endianness.
        let bytes = value.to_le_bytes();
        let slice: &[u8] = &bytes;
        let raw = slice
            .try_into()
            .map_err(|_| DeviceError::Other("MMIO read: register width mismatch".into()))?;
        Ok(T::from_ne_bytes(&raw))
    }

    /// Writes the dword at BAR0 offset `ptr as usize`.
    ///
    /// # Safety
    /// Always safe: the pointer is not dereferenced.
    unsafe fn try_write<T: RegInt>(&self, ptr: *mut T, value: T) -> Result<(), DeviceError> {
        let offset = access_offset(ptr)?;
        let bytes = value.to_ne_bytes();
        let word: [u8; 4] = bytes
            .as_ref()
            .try_into()
            .map_err(|_| DeviceError::Other("MMIO write: register width mismatch".into()))?;
        self.dev.write32(offset, u32::from_le_bytes(word))
    }
}

/// One register block found in BAR0 by [`discover`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlockInfo {
    /// Byte offset of the block in BAR0.
    pub offset: u64,
    /// TYPE word (+0).
    pub block_type: u32,
    /// VERSION word (+4): major in bits 31:16, minor in bits 15:0.
    pub version: u32,
    /// NEXT word (+8): offset of the next block, 0 at the end.
    pub next: u64,
    /// Name of the block type if this driver knows it (`id`, `queue`, `dma`).
    pub name: Option<&'static str>,
}

impl BlockInfo {
    pub fn version_major(&self) -> u16 {
        (self.version >> 16) as u16
    }

    pub fn version_minor(&self) -> u16 {
        self.version as u16
    }

    /// The register table of this block type, if known. Its `offset` fields
    /// are those of this build of the map; add `reg.block_offset` to
    /// [`BlockInfo::offset`] to address a register in the block found.
    pub fn desc(&self) -> Option<&'static table::BlockDesc> {
        table::block_by_type(self.block_type)
    }
}

/// Name of a known block type (`0x52490002` -> `"queue"`).
pub fn block_type_name(block_type: u32) -> Option<&'static str> {
    table::block_by_type(block_type).map(|b| b.name)
}

/// Walk BAR0's linked list of register blocks, from offset 0 until a block
/// with NEXT = 0. Unknown block types are listed with `name: None` (callers
/// skip them). A NEXT pointer outside BAR0 or not 4-byte aligned, and a list
/// that comes back to a block already visited, are errors.
pub fn discover<D: Device + ?Sized>(dev: &D) -> Result<Vec<BlockInfo>, DeviceError> {
    let bar_len = dev.bar_len();
    let mut blocks = Vec::new();
    let mut seen = HashSet::new();
    let mut offset = 0u64;
    loop {
        if !offset.is_multiple_of(4) {
            return Err(DeviceError::Unaligned(offset));
        }
        match offset.checked_add(BLK_NEXT + 4) {
            Some(end) if end <= bar_len => {}
            _ => return Err(DeviceError::OutOfBar { offset, bar_len }),
        }
        if !seen.insert(offset) {
            return Err(DeviceError::Other(format!(
                "register block list loops: block at {offset:#x} reached twice \
                 (after {} blocks)",
                blocks.len()
            )));
        }
        let block_type = dev.read32(offset + BLK_TYPE)?;
        let version = dev.read32(offset + BLK_VERSION)?;
        let next = u64::from(dev.read32(offset + BLK_NEXT)?);
        blocks.push(BlockInfo {
            offset,
            block_type,
            version,
            next,
            name: block_type_name(block_type),
        });
        if next == 0 {
            return Ok(blocks);
        }
        offset = next;
    }
}

#[cfg(test)]
mod tests;
