//! The PCI configuration space the server presents for each simulated NIC:
//! the identity the board's PCIe core is configured with
//! (`boards/artix7-pcie/rnic_artix7_top.v`): vendor 1234, device 4e49,
//! class 020000 (Ethernet controller), one 32-bit non-prefetchable memory
//! BAR0, no INTx, an MSI capability with 64-bit addresses and up to 32
//! vectors, no MSI-X.
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
                           // MSI: ID 5, end of list; control: 64-bit, 32 vectors capable.
        c.bytes[MSI_CAP] = 0x05;
        c.bytes[MSI_CAP + 1] = 0x00;
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
        c
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

    /// Write `data` at `offset` (only the writable bits change).
    pub fn write(&mut self, offset: u64, data: &[u8]) {
        for (i, &b) in data.iter().enumerate() {
            let Some(o) = usize::try_from(offset).ok().and_then(|o| o.checked_add(i)) else {
                return;
            };
            if o >= SIZE {
                return;
            }
            let w = self.writable[o];
            self.bytes[o] = (self.bytes[o] & !w) | (b & w);
        }
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
        c.reset();
        assert_eq!(c.command(), 0);
    }
}
