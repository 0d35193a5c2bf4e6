//! The board table: every board rnic builds for, with its FPGA part, its
//! configuration flash and where the slots live in it. Names, ids
//! (`board_id` in the ID block) and parts are those of the FPGA build
//! flow's `boards/boards.json`; this table adds the flash and the slots.

use serde::Serialize;

use crate::layout::{Layout, Slot};

/// A SPI NOR flash chip as the tools need to know it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct FlashChip {
    /// JEDEC ID (RDID 0x9F): manufacturer, memory type, capacity code.
    pub jedec_id: [u8; 3],
    /// Size in bytes.
    pub size: u64,
    /// Program page (bytes).
    pub page: u32,
    /// Smallest erase unit (bytes).
    pub sector: u32,
    /// Large erase unit (bytes).
    pub block: u32,
}

impl FlashChip {
    /// Addresses above 16 MiB need 4-byte addressing.
    pub fn needs_4byte(&self) -> bool {
        self.size > 1 << 24
    }
}

/// A 256 Mbit quad-SPI NOR flash with 4 KiB sectors and 64 KiB blocks.
pub const FLASH_256MBIT: FlashChip = FlashChip {
    jedec_id: [0x20, 0xBA, 0x19],
    size: 32 << 20,
    page: 256,
    sector: 4096,
    block: 65536,
};

/// A 128 Mbit quad-SPI NOR flash.
pub const FLASH_128MBIT: FlashChip = FlashChip {
    jedec_id: [0xEF, 0x40, 0x18],
    size: 16 << 20,
    page: 256,
    sector: 4096,
    block: 65536,
};

/// What a bitstream for this board must look like (checked before any
/// erase; the simulated board takes any bytes).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum BitstreamKind {
    /// Anything (the simulator does not configure an FPGA from it).
    Any,
    /// Lattice ECP5: the preamble FF FF BD B3 within the first 4 KiB.
    Ecp5,
    /// Xilinx 7-series: the sync word AA 99 55 66 within the first 4 KiB.
    Xilinx7,
}

impl BitstreamKind {
    /// Why `bits` cannot be a bitstream of this kind, if it cannot.
    pub fn check(self, bits: &[u8]) -> Result<(), String> {
        let head = &bits[..bits.len().min(4096)];
        let (pat, what): (&[u8], &str) = match self {
            BitstreamKind::Any => return Ok(()),
            BitstreamKind::Ecp5 => (&[0xFF, 0xFF, 0xBD, 0xB3], "ECP5 preamble FF FF BD B3"),
            BitstreamKind::Xilinx7 => (&[0xAA, 0x99, 0x55, 0x66], "7-series sync word AA 99 55 66"),
        };
        if head.windows(pat.len()).any(|w| w == pat) {
            Ok(())
        } else {
            Err(format!("no {what} in its first 4 KiB"))
        }
    }
}

/// One board.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Board {
    /// Name used on the command line and in image headers.
    pub name: &'static str,
    /// Value of the ID block's `board_id` register on this board.
    pub id: u32,
    /// FPGA part, as in image headers.
    pub part: &'static str,
    pub description: &'static str,
    pub flash: FlashChip,
    pub layout: Layout,
    pub bitstream: BitstreamKind,
    /// Part name openFPGALoader takes with `--fpga-part` (JTAG flashing).
    pub openfpgaloader_part: Option<&'static str>,
}

impl Board {
    /// The largest bitstream a slot of this board holds.
    pub fn max_bitstream(&self) -> u64 {
        self.layout
            .golden
            .max_bitstream()
            .min(self.layout.update.max_bitstream())
    }
}

const MIB: u64 = 1 << 20;

/// Every board, `sim` first.
pub const BOARDS: &[Board] = &[
    Board {
        name: "sim",
        id: 0,
        part: "sim",
        description: "the Verilator simulation (any bitstream bytes; a simulated 256 Mbit flash)",
        flash: FLASH_256MBIT,
        // The update slot crosses 16 MiB, so 4-byte addressing is exercised.
        layout: Layout {
            golden: Slot {
                base: 0,
                size: 12 * MIB,
            },
            update: Slot {
                base: 12 * MIB,
                size: 12 * MIB,
            },
            boot_record: 24 * MIB,
        },
        bitstream: BitstreamKind::Any,
        openfpgaloader_part: None,
    },
    Board {
        name: "ecp5-85f",
        id: 2,
        part: "LFE5U-85F-8BG381C",
        description: "a Lattice ECP5 LFE5U-85F board with 128 Mbit SPI flash",
        flash: FLASH_128MBIT,
        layout: Layout {
            golden: Slot {
                base: 0,
                size: 4 * MIB,
            },
            update: Slot {
                base: 4 * MIB,
                size: 4 * MIB,
            },
            boot_record: 8 * MIB,
        },
        bitstream: BitstreamKind::Ecp5,
        openfpgaloader_part: None,
    },
    Board {
        name: "artix7-pcie",
        id: 1,
        part: "xc7a100tfgg484-2",
        description:
            "an Artix-7 XC7A100T M.2 PCIe card (LiteFury class), 256 Mbit quad-SPI flash assumed",
        flash: FLASH_256MBIT,
        layout: Layout {
            golden: Slot {
                base: 0,
                size: 8 * MIB,
            },
            update: Slot {
                base: 8 * MIB,
                size: 8 * MIB,
            },
            boot_record: 16 * MIB,
        },
        bitstream: BitstreamKind::Xilinx7,
        openfpgaloader_part: Some("xc7a100tfgg484"),
    },
    Board {
        name: "artix7-pcie-200t",
        id: 3,
        part: "xc7a200tfbg484-2",
        description:
            "an Artix-7 XC7A200T M.2 PCIe card (NiteFury class), 256 Mbit quad-SPI flash assumed",
        flash: FLASH_256MBIT,
        layout: Layout {
            golden: Slot {
                base: 0,
                size: 12 * MIB,
            },
            update: Slot {
                base: 12 * MIB,
                size: 12 * MIB,
            },
            boot_record: 24 * MIB,
        },
        bitstream: BitstreamKind::Xilinx7,
        openfpgaloader_part: Some("xc7a200tfbg484"),
    },
];

pub fn board_by_name(name: &str) -> Option<&'static Board> {
    BOARDS.iter().find(|b| b.name == name)
}

pub fn board_by_id(id: u32) -> Option<&'static Board> {
    BOARDS.iter().find(|b| b.id == id)
}

/// The board names, comma separated (for error messages).
pub fn board_names() -> String {
    BOARDS.iter().map(|b| b.name).collect::<Vec<_>>().join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layouts_fit_their_flash_and_do_not_overlap() {
        for b in BOARDS {
            let l = &b.layout;
            let f = &b.flash;
            for s in [l.golden, l.update] {
                assert_eq!(s.base % u64::from(f.block), 0, "{}", b.name);
                assert_eq!(s.size % u64::from(f.block), 0, "{}", b.name);
                assert!(s.base + s.size <= f.size, "{}", b.name);
            }
            assert!(l.golden.base + l.golden.size <= l.update.base, "{}", b.name);
            assert!(l.update.base + l.update.size <= l.boot_record, "{}", b.name);
            assert!(l.boot_record + u64::from(f.sector) <= f.size, "{}", b.name);
            assert_eq!(l.boot_record % u64::from(f.sector), 0);
            assert!(board_by_id(b.id).unwrap().name == b.name);
        }
    }

    #[test]
    fn bitstream_kinds() {
        assert!(BitstreamKind::Any.check(b"").is_ok());
        let mut x = vec![0xFFu8; 64];
        x.extend_from_slice(&[0xAA, 0x99, 0x55, 0x66]);
        assert!(BitstreamKind::Xilinx7.check(&x).is_ok());
        assert!(BitstreamKind::Ecp5.check(&x).is_err());
        let e = [0xFF, 0x00, 0xFF, 0xFF, 0xBD, 0xB3];
        assert!(BitstreamKind::Ecp5.check(&e).is_ok());
        assert!(BitstreamKind::Xilinx7
            .check(&e)
            .unwrap_err()
            .contains("sync word"));
    }
}
