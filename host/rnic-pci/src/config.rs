//! The command register of PCI configuration space, whichever way config
//! space is reached: the sysfs `config` file, VFIO's config region (through
//! `pci-driver`, or the device file in no-IOMMU mode), or a buffer in tests.

use std::cell::RefCell;
use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;

/// Command register offset and the bits rnic sets or clears.
pub const COMMAND: u64 = 0x04;
pub const CMD_MEMORY: u16 = 1 << 1;
pub const CMD_BUS_MASTER: u16 = 1 << 2;
pub const CMD_INTX_DISABLE: u16 = 1 << 10;

/// 16-bit access to configuration space.
pub trait ConfigSpace {
    fn read16(&self, offset: u64) -> io::Result<u16>;
    fn write16(&self, offset: u64, value: u16) -> io::Result<()>;
}

/// Sets `set` and clears `clear` in the command register; returns the
/// value it had. Writes only when the value changes.
pub fn update_command(cfg: &dyn ConfigSpace, set: u16, clear: u16) -> io::Result<u16> {
    let old = cfg.read16(COMMAND)?;
    let new = (old | set) & !clear;
    if new != old {
        cfg.write16(COMMAND, new)?;
    }
    Ok(old)
}

/// Configuration space as a file at `base`: sysfs `config` (base 0), or a
/// VFIO device file's config region.
pub struct FileConfig {
    pub file: File,
    pub base: u64,
}

impl ConfigSpace for FileConfig {
    fn read16(&self, offset: u64) -> io::Result<u16> {
        let mut b = [0u8; 2];
        self.file.read_exact_at(&mut b, self.base + offset)?;
        Ok(u16::from_le_bytes(b))
    }

    fn write16(&self, offset: u64, value: u16) -> io::Result<()> {
        self.file
            .write_all_at(&value.to_le_bytes(), self.base + offset)
    }
}

impl ConfigSpace for pci_driver::config::PciConfig<'_> {
    fn read16(&self, offset: u64) -> io::Result<u16> {
        use pci_driver::regions::PciRegion;
        self.read_le_u16(offset)
    }

    fn write16(&self, offset: u64, value: u16) -> io::Result<()> {
        use pci_driver::regions::PciRegion;
        self.write_le_u16(offset, value)
    }
}

/// Configuration space in memory (tests), logging every write.
#[derive(Default)]
pub struct MemConfig {
    pub bytes: RefCell<Vec<u8>>,
    pub writes: RefCell<Vec<(u64, u16)>>,
}

impl MemConfig {
    pub fn new() -> Self {
        Self {
            bytes: RefCell::new(vec![0; 256]),
            writes: RefCell::default(),
        }
    }

    pub fn command(&self) -> u16 {
        self.read16(COMMAND).unwrap()
    }
}

impl ConfigSpace for MemConfig {
    fn read16(&self, offset: u64) -> io::Result<u16> {
        let b = self.bytes.borrow();
        let o = offset as usize;
        Ok(u16::from_le_bytes([b[o], b[o + 1]]))
    }

    fn write16(&self, offset: u64, value: u16) -> io::Result<()> {
        let o = offset as usize;
        self.bytes.borrow_mut()[o..o + 2].copy_from_slice(&value.to_le_bytes());
        self.writes.borrow_mut().push((offset, value));
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn command_bits_change_only_when_needed() {
        let c = MemConfig::new();
        c.write16(COMMAND, CMD_INTX_DISABLE).unwrap();
        c.writes.borrow_mut().clear();
        assert_eq!(
            update_command(&c, CMD_MEMORY | CMD_BUS_MASTER, 0).unwrap(),
            CMD_INTX_DISABLE
        );
        assert_eq!(c.command(), CMD_INTX_DISABLE | CMD_MEMORY | CMD_BUS_MASTER);
        update_command(&c, CMD_MEMORY, 0).unwrap();
        assert_eq!(c.writes.borrow().len(), 1, "no write when nothing changes");
        update_command(&c, 0, CMD_BUS_MASTER).unwrap();
        assert_eq!(c.command(), CMD_INTX_DISABLE | CMD_MEMORY);
    }

    #[test]
    fn pci_driver_config_over_memory() {
        use pci_driver::regions::BackedByPciSubregion;
        let mut buf = vec![0u8; 256];
        let region = pci_driver::regions::PciMemoryRegion::new_mut(&mut buf);
        let cfg = pci_driver::config::PciConfig::backed_by(&region);
        update_command(&cfg, CMD_BUS_MASTER, 0).unwrap();
        assert_eq!(cfg.read16(COMMAND).unwrap(), CMD_BUS_MASTER);
        assert_eq!(buf[4], CMD_BUS_MASTER as u8);
    }

    #[test]
    fn file_config_at_a_base() {
        let p = std::env::temp_dir().join(format!("rnic-pci-cfg-{}", std::process::id()));
        std::fs::write(&p, vec![0u8; 0x300]).unwrap();
        let f = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(&p)
            .unwrap();
        let c = FileConfig {
            file: f,
            base: 0x100,
        };
        update_command(&c, CMD_MEMORY, 0).unwrap();
        let bytes = std::fs::read(&p).unwrap();
        std::fs::remove_file(&p).unwrap();
        assert_eq!(bytes[0x104], CMD_MEMORY as u8);
    }
}
