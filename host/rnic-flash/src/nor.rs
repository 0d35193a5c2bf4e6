//! SPI NOR commands through the NIC's flash command engine.

use std::ops::Range;

use rnic_device::{Device, DeviceError};
use rnic_firmware::FlashChip;

/// Bytes of the engine's buffer (one command's data phase at most).
pub const BUF_BYTES: usize = 256;

// Offsets in the flash block (hw/regs/rnic_csr.rdl, flash_block).
const CFG: u64 = 0x10;
const ADDR: u64 = 0x14;
const LEN: u64 = 0x18;
const CMD: u64 = 0x1C;
const STATUS: u64 = 0x20;
const BOOT_STATUS: u64 = 0x28;
const RECONFIG: u64 = 0x2C;
const CAPS: u64 = 0x30;
const BUF: u64 = 0x100;
const RECONFIG_KEY: u32 = 0x5245_424F;

// flash_cmd fields
const DIR_READ: u32 = 1 << 16;
const DIR_WRITE: u32 = 2 << 16;
const QUAD: u32 = 1 << 18;
const WREN: u32 = 1 << 19;
const POLL: u32 = 1 << 20;

#[derive(Debug, thiserror::Error)]
pub enum FlashError {
    #[error(transparent)]
    Device(#[from] DeviceError),
    #[error("this NIC has no flash register block (type {:#010x}); its bitstream predates in-system flashing", rnic_regs::generated_table::BLOCK_TYPE_FLASH)]
    NoFlashBlock,
    #[error("flash JEDEC ID {found:02x?}, the board table expects {expected:02x?} (wrong board, or no flash answering)")]
    JedecMismatch { found: [u8; 3], expected: [u8; 3] },
    #[error("refusing to {what} {addr:#x}..{end:#x}: it overlaps the protected golden slot {prot_start:#x}..{prot_end:#x}", end = addr + len, prot_start = protected.start, prot_end = protected.end)]
    Protected {
        what: &'static str,
        addr: u64,
        len: u64,
        protected: Range<u64>,
    },
    #[error(
        "{what} at {addr:#x} still busy after {cycles} cycles (flash not answering: power lost?)"
    )]
    Timeout {
        what: &'static str,
        addr: u64,
        cycles: u64,
    },
    #[error("the flash engine refused a command (it was busy)")]
    EngineBusy,
    #[error("bad argument: {0}")]
    Arg(String),
    #[error("verify failed at {addr:#x}: wrote {expected:#04x}, read back {found:#04x} ({count} bytes differ in this range)")]
    Verify {
        addr: u64,
        expected: u8,
        found: u8,
        count: u64,
    },
    #[error("{0}")]
    Image(#[from] rnic_firmware::ImageError),
}

/// A SPI NOR flash behind the NIC's command engine.
pub struct SpiNor<'a, D: Device + ?Sized> {
    dev: &'a D,
    base: u64,
    chip: FlashChip,
    protected: Option<Range<u64>>,
    quad: bool,
    /// Give up on one command after this many cycles (`Device::now`).
    pub timeout_cycles: u64,
}

impl<'a, D: Device + ?Sized> SpiNor<'a, D> {
    /// Find the flash block, set the SPI clock, and check that the chip
    /// answering is `chip`. `protected` (the golden slot) can be neither
    /// erased nor programmed through this handle.
    pub fn open(
        dev: &'a D,
        chip: FlashChip,
        protected: Option<Range<u64>>,
    ) -> Result<Self, FlashError> {
        let blocks = rnic_regs::discover(dev)?;
        let b = blocks
            .iter()
            .find(|b| b.block_type == rnic_regs::generated_table::BLOCK_TYPE_FLASH)
            .ok_or(FlashError::NoFlashBlock)?;
        let caps = dev.read32(b.offset + CAPS)?;
        let mut s = Self {
            dev,
            base: b.offset,
            chip,
            protected,
            quad: caps & (1 << 16) != 0,
            timeout_cycles: 0,
        };
        // A margin over the longest busy time (a block erase) of any chip
        // in the simulator's slow timing at 250 MHz.
        s.timeout_cycles = 200_000_000;
        // SCK = clock / 4: the fastest the engine samples correctly.
        dev.write32(s.base + CFG, 2)?;
        let id = s.jedec_id()?;
        if id != chip.jedec_id {
            return Err(FlashError::JedecMismatch {
                found: id,
                expected: chip.jedec_id,
            });
        }
        Ok(s)
    }

    pub fn chip(&self) -> &FlashChip {
        &self.chip
    }

    /// Data phases on four lanes (when the engine supports it).
    pub fn set_quad(&mut self, on: bool) {
        self.quad = on;
    }

    /// Allow erasing and programming the protected range from now on.
    pub fn unprotect(&mut self) {
        self.protected = None;
    }

    pub fn device(&self) -> &'a D {
        self.dev
    }

    fn four(&self) -> bool {
        self.chip.needs_4byte()
    }

    fn addr_bytes(&self) -> u32 {
        if self.four() {
            4 << 8
        } else {
            3 << 8
        }
    }

    /// Run one command and wait until the engine is idle again.
    fn run(&self, what: &'static str, word: u32, addr: u64, len: usize) -> Result<(), FlashError> {
        let d = self.dev;
        d.write32(self.base + ADDR, addr as u32)?;
        d.write32(self.base + LEN, len as u32)?;
        d.write32(self.base + CMD, word)?;
        let start = d.now();
        loop {
            let st = d.read32(self.base + STATUS)?;
            if st & 2 != 0 {
                return Err(FlashError::EngineBusy);
            }
            if st & 1 == 0 {
                return Ok(());
            }
            let spent = d.now().saturating_sub(start);
            if spent > self.timeout_cycles {
                return Err(FlashError::Timeout {
                    what,
                    addr,
                    cycles: spent,
                });
            }
            d.idle();
        }
    }

    fn buf_write(&self, data: &[u8]) -> Result<(), FlashError> {
        for (i, c) in data.chunks(4).enumerate() {
            let mut w = [0xFFu8; 4];
            w[..c.len()].copy_from_slice(c);
            self.dev
                .write32(self.base + BUF + 4 * i as u64, u32::from_le_bytes(w))?;
        }
        Ok(())
    }

    fn buf_read(&self, out: &mut [u8]) -> Result<(), FlashError> {
        for (i, c) in out.chunks_mut(4).enumerate() {
            let w = self
                .dev
                .read32(self.base + BUF + 4 * i as u64)?
                .to_le_bytes();
            c.copy_from_slice(&w[..c.len()]);
        }
        Ok(())
    }

    /// JEDEC ID (RDID, 0x9F).
    pub fn jedec_id(&self) -> Result<[u8; 3], FlashError> {
        self.run("read ID", 0x9F | DIR_READ, 0, 3)?;
        let mut id = [0u8; 3];
        self.buf_read(&mut id)?;
        Ok(id)
    }

    /// Read `out.len()` bytes from `addr`.
    pub fn read(&self, addr: u64, out: &mut [u8]) -> Result<(), FlashError> {
        self.check_range(addr, out.len() as u64)?;
        let (op, extra) = match (self.quad, self.four()) {
            (true, true) => (0x6C, QUAD | (8 << 12)),
            (true, false) => (0x6B, QUAD | (8 << 12)),
            (false, true) => (0x13, 0),
            (false, false) => (0x03, 0),
        };
        let mut a = addr;
        for c in out.chunks_mut(BUF_BYTES) {
            self.run(
                "read",
                op | self.addr_bytes() | DIR_READ | extra,
                a,
                c.len(),
            )?;
            self.buf_read(c)?;
            a += c.len() as u64;
        }
        Ok(())
    }

    fn check_range(&self, addr: u64, len: u64) -> Result<(), FlashError> {
        if addr.checked_add(len).is_none_or(|e| e > self.chip.size) {
            return Err(FlashError::Arg(format!(
                "{addr:#x}+{len:#x} is outside the {} MiB flash",
                self.chip.size >> 20
            )));
        }
        Ok(())
    }

    fn check_writable(&self, what: &'static str, addr: u64, len: u64) -> Result<(), FlashError> {
        self.check_range(addr, len)?;
        if let Some(p) = &self.protected {
            if addr < p.end && addr + len > p.start {
                return Err(FlashError::Protected {
                    what,
                    addr,
                    len,
                    protected: p.clone(),
                });
            }
        }
        Ok(())
    }

    /// Erase the 4 KiB sector at `addr` (aligned).
    pub fn erase_sector(&self, addr: u64) -> Result<(), FlashError> {
        let s = u64::from(self.chip.sector);
        if addr % s != 0 {
            return Err(FlashError::Arg(format!(
                "sector erase at {addr:#x}: not {s}-byte aligned"
            )));
        }
        self.check_writable("erase", addr, s)?;
        let op = if self.four() { 0x21 } else { 0x20 };
        self.run(
            "sector erase",
            op | self.addr_bytes() | WREN | POLL,
            addr,
            0,
        )
    }

    /// Erase the 64 KiB block at `addr` (aligned).
    pub fn erase_block(&self, addr: u64) -> Result<(), FlashError> {
        let b = u64::from(self.chip.block);
        if addr % b != 0 {
            return Err(FlashError::Arg(format!(
                "block erase at {addr:#x}: not {b}-byte aligned"
            )));
        }
        self.check_writable("erase", addr, b)?;
        let op = if self.four() { 0xDC } else { 0xD8 };
        self.run("block erase", op | self.addr_bytes() | WREN | POLL, addr, 0)
    }

    /// Erase every sector of `[addr, addr + len)` (both sector aligned),
    /// with 64 KiB block erases where a whole block is inside.
    pub fn erase_range(
        &self,
        addr: u64,
        len: u64,
        mut each: impl FnMut(u64),
    ) -> Result<(), FlashError> {
        let (s, b) = (u64::from(self.chip.sector), u64::from(self.chip.block));
        if addr % s != 0 || len % s != 0 {
            return Err(FlashError::Arg(format!(
                "erase {addr:#x}+{len:#x}: not sector aligned"
            )));
        }
        self.check_writable("erase", addr, len)?;
        let end = addr + len;
        let mut a = addr;
        while a < end {
            if a % b == 0 && a + b <= end {
                self.erase_block(a)?;
                a += b;
            } else {
                self.erase_sector(a)?;
                a += s;
            }
            each(a - addr);
        }
        Ok(())
    }

    /// Program `data` at `addr` (within one 256-byte page).
    pub fn program_page(&self, addr: u64, data: &[u8]) -> Result<(), FlashError> {
        let page = u64::from(self.chip.page);
        if data.is_empty() || data.len() > BUF_BYTES || addr % page + data.len() as u64 > page {
            return Err(FlashError::Arg(format!(
                "program {} bytes at {addr:#x}: must stay within one {page}-byte page",
                data.len()
            )));
        }
        self.check_writable("program", addr, data.len() as u64)?;
        self.buf_write(data)?;
        let (op, q) = match (self.quad, self.four()) {
            (true, true) => (0x34, QUAD),
            (true, false) => (0x32, QUAD),
            (false, true) => (0x12, 0),
            (false, false) => (0x02, 0),
        };
        self.run(
            "page program",
            op | self.addr_bytes() | DIR_WRITE | q | WREN | POLL,
            addr,
            data.len(),
        )
    }

    /// Program `data` from `addr` (erased before), page by page; pages
    /// that are all 0xFF are skipped (erased flash already reads so).
    pub fn program(
        &self,
        addr: u64,
        data: &[u8],
        mut each: impl FnMut(u64),
    ) -> Result<(), FlashError> {
        self.check_writable("program", addr, data.len() as u64)?;
        let page = u64::from(self.chip.page);
        let mut off = 0usize;
        while off < data.len() {
            let a = addr + off as u64;
            let n = ((page - a % page) as usize).min(data.len() - off);
            let chunk = &data[off..off + n];
            if chunk.iter().any(|&b| b != 0xFF) {
                self.program_page(a, chunk)?;
            }
            off += n;
            each(off as u64);
        }
        Ok(())
    }

    /// Read back `[addr, addr + data.len())` and compare with `data`.
    pub fn verify(
        &self,
        addr: u64,
        data: &[u8],
        mut each: impl FnMut(u64),
    ) -> Result<(), FlashError> {
        let mut buf = vec![0u8; 16 * BUF_BYTES];
        let mut off = 0usize;
        while off < data.len() {
            let n = buf.len().min(data.len() - off);
            self.read(addr + off as u64, &mut buf[..n])?;
            let want = &data[off..off + n];
            if let Some(i) = (0..n).find(|&i| buf[i] != want[i]) {
                let count = (0..n).filter(|&i| buf[i] != want[i]).count() as u64;
                return Err(FlashError::Verify {
                    addr: addr + (off + i) as u64,
                    expected: want[i],
                    found: buf[i],
                    count,
                });
            }
            off += n;
            each(off as u64);
        }
        Ok(())
    }

    /// What the configuration logic booted: (slot code, fell back).
    pub fn boot_status(&self) -> Result<(u8, bool), FlashError> {
        let v = self.dev.read32(self.base + BOOT_STATUS)?;
        Ok(((v & 3) as u8, v & (1 << 4) != 0))
    }

    /// Ask the board to reconfigure the FPGA from flash. The NIC goes away
    /// (on a real board the PCIe link drops; the simulator resets it).
    pub fn reconfigure(&self) -> Result<(), FlashError> {
        self.dev.write32(self.base + RECONFIG, RECONFIG_KEY)?;
        Ok(())
    }
}
