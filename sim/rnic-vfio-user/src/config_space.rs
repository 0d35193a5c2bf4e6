//! The PCI configuration space the server presents for each simulated NIC:
//! the identity the board's PCIe core is configured with
//! (`boards/artix7-pcie/rnic_artix7_top.v`): vendor 1234, device 4e49,
//! class 020000 (Ethernet controller), one 32-bit non-prefetchable memory
//! BAR0, no INTx, an MSI capability with 64-bit addresses and up to 32
//! vectors, no MSI-X, and a PCI Express capability (endpoint, 256-byte
//! MPS supported, 512-byte MRRS) that offers a function-level reset, so a
//! guest kernel has a reset method for the function (vfio-pci's
//! `VFIO_DEVICE_RESET` needs one).
//!
//! QEMU's vfio-user client emulates the BARs and the MSI capability itself
//! (it sizes BAR0 from the region info and hands MSI over as eventfds), so
//! what matters here is what the guest reads: the IDs, the class, the
//! capability list. Writes are kept for the fields a driver writes
//! (command register, cache line size, interrupt line, MSI registers);
//! everything else is read-only, as on the card.

/// PCI vendor ID (as `rnic list` looks for).
pub const VENDOR_ID: u16 = 0x1234;
/// PCI device ID.
pub const DEVICE_ID: u16 = 0x4e49;
/// Class code: network controller, Ethernet, programming interface 0.
pub const CLASS_CODE: u32 = 0x02_00_00;
/// Size of the configuration space the server answers.
pub const SIZE: usize = 256;
/// Where the MSI capability sits.
pub const MSI_CAP: usize = 0x40;
/// Where the PCI Express capability sits.
pub const PCIE_CAP: usize = 0x60;
/// Device Control's "initiate function-level reset" bit.
pub const DEVCTL_FLR: u16 = 1 << 15;

/// Command register bits.
pub const CMD_MEMORY: u16 = 1 << 1;
pub const CMD_BUS_MASTER: u16 = 1 << 2;

/// One function's configuration space.
#[derive(Clone)]
pub struct ConfigSpace {
    bytes: [u8; SIZE],
    /// Bits a write may change, byte by byte.
    writable: [u8; SIZE],
}

impl ConfigSpace {
    /// The configuration space of an rnic function.
    pub fn rnic() -> Self {
        let mut c = Self {
            bytes: [0; SIZE],
            writable: [0; SIZE],
        };
        c.put16(0x00, VENDOR_ID);
        c.put16(0x02, DEVICE_ID);
        // Command: I/O, memory, bus master, parity, SERR, INTx disable.
        c.writable[0x04] = 0x47;
        c.writable[0x05] = 0x05;
        c.put16(0x06, 0x0010); // status: capability list
        c.bytes[0x08] = 0x01; // revision
        c.bytes[0x09] = CLASS_CODE as u8;
        c.bytes[0x0A] = (CLASS_CODE >> 8) as u8;
        c.bytes[0x0B] = (CLASS_CODE >> 16) as u8;
        c.writable[0x0C] = 0xff; // cache line size
        c.bytes[0x0E] = 0x00; // header type 0, single function
                              // BAR0: 32-bit non-prefetchable memory (QEMU emulates the sizing).
        c.put16(0x2C, VENDOR_ID); // subsystem vendor
        c.put16(0x2E, DEVICE_ID); // subsystem
        c.bytes[0x34] = MSI_CAP as u8;
        c.writable[0x3C] = 0xff; // interrupt line
        c.bytes[0x3D] = 0; // no INTx pin
                           // MSI: ID 5, next the PCIe capability; control: 64-bit, 32
                           // vectors capable.
        c.bytes[MSI_CAP] = 0x05;
        c.bytes[MSI_CAP + 1] = PCIE_CAP as u8;
        c.put16(MSI_CAP + 2, (1 << 7) | (5 << 1));
        c.writable[MSI_CAP + 2] = 0x71; // enable, multiple message enable
        for i in 4..8 {
            c.writable[MSI_CAP + i] = if i == 4 { 0xfc } else { 0xff }; // address low
        }
        for i in 8..12 {
            c.writable[MSI_CAP + i] = 0xff; // address high
        }
        c.writable[MSI_CAP + 12] = 0xff; // data
        c.writable[MSI_CAP + 13] = 0xff;
        // PCI Express: ID 0x10, end of list; version 2, endpoint.
        c.bytes[PCIE_CAP] = 0x10;
        c.put16(PCIE_CAP + 2, 0x0002);
        // Device Capabilities: MPS 256 B supported, role-based error
        // reporting, function-level reset.
        c.put32(PCIE_CAP + 4, 1 | (1 << 15) | (1 << 28));
        // Device Control: MPS 128 B, MRRS 512 B (the model's are fixed;
        // the fields take what the guest writes); FLR self-clears.
        c.put16(PCIE_CAP + 8, 2 << 12);
        c.writable[PCIE_CAP + 8] = 0xff;
        c.writable[PCIE_CAP + 9] = 0x7f;
        // Link: 2.5 GT/s x1, trained.
        c.put32(PCIE_CAP + 0x0c, 0x11);
        c.put16(PCIE_CAP + 0x12, 0x11);
        c
    }

    fn put32(&mut self, off: usize, v: u32) {
        self.bytes[off..off + 4].copy_from_slice(&v.to_le_bytes());
    }

    fn put16(&mut self, off: usize, v: u16) {
        self.bytes[off..off + 2].copy_from_slice(&v.to_le_bytes());
    }

    /// Read `out.len()` bytes from `offset`; bytes past the end read 0.
    pub fn read(&self, offset: u64, out: &mut [u8]) {
        for (i, b) in out.iter_mut().enumerate() {
            *b = usize::try_from(offset)
                .ok()
                .and_then(|o| o.checked_add(i))
                .and_then(|o| self.bytes.get(o))
                .copied()
                .unwrap_or(0);
        }
    }

    /// Write `data` at `offset` (only the writable bits change). True if
    /// the write initiates a function-level reset (Device Control bit 15),
    /// which the caller carries out.
    pub fn write(&mut self, offset: u64, data: &[u8]) -> bool {
        let mut flr = false;
        for (i, &b) in data.iter().enumerate() {
            let Some(o) = usize::try_from(offset).ok().and_then(|o| o.checked_add(i)) else {
                break;
            };
            if o >= SIZE {
                break;
            }
            if o == PCIE_CAP + 9 && b & (DEVCTL_FLR >> 8) as u8 != 0 {
                flr = true;
            }
            let w = self.writable[o];
            self.bytes[o] = (self.bytes[o] & !w) | (b & w);
        }
        flr
    }

    pub fn command(&self) -> u16 {
        u16::from_le_bytes([self.bytes[0x04], self.bytes[0x05]])
    }

    /// Bus mastering enabled (command bit 2): the function may issue DMA
    /// and MSI.
    pub fn bus_master(&self) -> bool {
        self.command() & CMD_BUS_MASTER != 0
    }

    /// Back to the power-on values (a function-level reset).
    pub fn reset(&mut self) {
        *self = Self::rnic();
    }

    pub fn bytes(&self) -> &[u8; SIZE] {
        &self.bytes
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identity_and_capabilities() {
        let c = ConfigSpace::rnic();
        let mut b = [0u8; 4];
        c.read(0, &mut b);
        assert_eq!(u32::from_le_bytes(b), 0x4e49_1234);
        c.read(0x08, &mut b);
        assert_eq!(u32::from_le_bytes(b) >> 8, CLASS_CODE);
        assert_eq!(c.bytes()[0x34], 0x40);
        assert_eq!(c.bytes()[0x40], 0x05, "MSI capability");
        assert_eq!(c.bytes()[0x41] as usize, PCIE_CAP, "then PCI Express");
        assert_eq!(c.bytes()[PCIE_CAP], 0x10);
        assert_eq!(c.bytes()[PCIE_CAP + 1], 0, "end of the list");
        c.read(PCIE_CAP as u64 + 4, &mut b);
        assert_ne!(u32::from_le_bytes(b) & (1 << 28), 0, "FLR offered");
        assert_eq!(c.bytes()[0x06] & 0x10, 0x10, "capability list bit");
        let mut far = [0xaa; 4];
        c.read(254, &mut far);
        assert_eq!(far, [0, 0, 0, 0]);
    }

    #[test]
    fn only_writable_bits_change() {
        let mut c = ConfigSpace::rnic();
        assert!(!c.bus_master());
        c.write(0x00, &[0xff, 0xff, 0xff, 0xff]);
        c.write(0x04, &[0xff, 0xff]);
        let mut b = [0u8; 2];
        c.read(0, &mut b);
        assert_eq!(u16::from_le_bytes(b), VENDOR_ID, "IDs are read-only");
        assert_eq!(c.command(), 0x0547);
        assert!(c.bus_master());
        c.write(0x04, &[0x02, 0x00]);
        assert!(!c.bus_master());
        c.write(0x42, &[0xff, 0xff]);
        assert_eq!(c.bytes()[0x42], 0x8a | 0x71, "enable + MME, MMC kept");
        // Initiating an FLR is reported, and the bit reads back 0.
        assert!(!c.write(PCIE_CAP as u64 + 8, &[0x20, 0x20]));
        assert!(c.write(PCIE_CAP as u64 + 8, &[0x20, 0xa0]));
        assert_eq!(c.bytes()[PCIE_CAP + 9], 0x20);
        c.reset();
        assert_eq!(c.command(), 0);
    }
}
