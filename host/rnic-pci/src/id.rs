//! The ID block check every backend runs before it writes anything.
//!
//! BAR0 starts with the ID block (DESIGN.md section 4.1): TYPE at +0x00,
//! VERSION (major in bits 31:16) at +0x04, NEXT at +0x08, the magic "RNIC"
//! at +0x0c. A function passes when BAR0 is at least as large as the
//! register map, the magic matches, the first block is the ID block, and
//! its major version is the one this build of rnic was generated from.
//! Only reads are issued.

use rnic_regs::generated_table::{BLOCK_TYPE_ID, MAP_SIZE};

use crate::error::{PciError, Result};
use crate::mmio::Bar32;

/// What the check read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IdBlock {
    pub block_type: u32,
    pub version: u32,
    pub magic: u32,
}

impl IdBlock {
    pub fn major(&self) -> u16 {
        (self.version >> 16) as u16
    }
    pub fn minor(&self) -> u16 {
        self.version as u16
    }
}

/// The ID block's major version this build speaks (from the register map
/// it was generated from). Minor versions only add registers, so any minor
/// of this major is accepted.
pub fn supported_major() -> u16 {
    let v = rnic_regs::table::block_by_type(BLOCK_TYPE_ID)
        .and_then(|b| b.version)
        .expect("the register map gives the ID block a version");
    (v >> 16) as u16
}

/// Checks BAR0's size and ID block; reads only.
pub fn check_id_block(bdf: &str, bar: &dyn Bar32) -> Result<IdBlock> {
    if bar.size() < MAP_SIZE {
        return Err(PciError::BarTooSmall {
            bdf: bdf.into(),
            len: bar.size(),
            need: MAP_SIZE,
        });
    }
    let rd = |off| {
        bar.read32(off)
            .map_err(|e| PciError::Unsupported(format!("{bdf}: reading BAR0+{off:#x}: {e}")))
    };
    let id = IdBlock {
        magic: rd(0x0c)?,
        block_type: rd(rnic_regs::BLK_TYPE)?,
        version: rd(rnic_regs::BLK_VERSION)?,
    };
    if id.magic != rnic_regs::MAGIC {
        return Err(PciError::BadMagic {
            bdf: bdf.into(),
            magic: id.magic,
        });
    }
    if id.block_type != BLOCK_TYPE_ID {
        return Err(PciError::BadIdBlock {
            bdf: bdf.into(),
            found: id.block_type,
            expected: BLOCK_TYPE_ID,
        });
    }
    if id.major() != supported_major() {
        return Err(PciError::IncompatibleVersion {
            bdf: bdf.into(),
            major: id.major(),
            minor: id.minor(),
            supported: supported_major(),
        });
    }
    Ok(id)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::mmio::FakeBar;

    /// A BAR0 image holding a valid ID block.
    pub(crate) fn rnic_bar(len: usize) -> FakeBar {
        let bar = FakeBar::new(len);
        bar.poke(0x00, BLOCK_TYPE_ID);
        bar.poke(0x04, 0x0001_0000);
        bar.poke(0x08, 0x100);
        bar.poke(0x0c, rnic_regs::MAGIC);
        bar
    }

    #[test]
    fn accepts_an_rnic_and_any_minor() {
        assert_eq!(supported_major(), 1);
        let bar = rnic_bar(0x1000);
        let id = check_id_block("0000:03:00.0", &bar).unwrap();
        assert_eq!((id.major(), id.minor()), (1, 0));
        bar.poke(0x04, 0x0001_0007);
        check_id_block("0000:03:00.0", &bar).unwrap();
        assert_eq!(bar.writes(), 0);
    }

    #[test]
    fn refuses_what_is_not_an_rnic_without_writing() {
        let bar = FakeBar::new(0x4000);
        let e = check_id_block("0000:00:03.0", &bar).unwrap_err();
        assert_eq!(
            e.to_string(),
            "0000:00:03.0 is not an rnic: magic 0x00000000 at BAR0+0x0c, expected 0x524e4943 (\"RNIC\")"
        );
        for w in 0..0x1000 {
            bar.poke(w * 4, u32::MAX);
        }
        let e = check_id_block("0000:00:03.0", &bar)
            .unwrap_err()
            .to_string();
        assert!(e.contains("all ones: the function did not answer"), "{e}");
        assert!(!e.contains('\n'));
        assert_eq!(bar.writes(), 0);
    }

    #[test]
    fn refuses_a_wrong_block_or_version() {
        let bar = rnic_bar(0x1000);
        bar.poke(0x00, 0x5249_0002);
        assert!(matches!(
            check_id_block("b", &bar),
            Err(PciError::BadIdBlock {
                found: 0x5249_0002,
                ..
            })
        ));
        let bar = rnic_bar(0x1000);
        bar.poke(0x04, 0x0002_0000);
        let e = check_id_block("0000:03:00.0", &bar).unwrap_err();
        assert_eq!(
            e.to_string(),
            "0000:03:00.0: register map version 2.0, this rnic speaks 1.x: use an rnic built for that bitstream, or flash a matching one"
        );
        bar.poke(0x04, 0x0000_0003);
        assert!(matches!(
            check_id_block("b", &bar),
            Err(PciError::IncompatibleVersion {
                major: 0,
                minor: 3,
                ..
            })
        ));
        assert_eq!(bar.writes(), 0);
    }

    #[test]
    fn refuses_a_bar_smaller_than_the_map() {
        let bar = rnic_bar(0x400);
        let e = check_id_block("0000:03:00.0", &bar).unwrap_err();
        assert_eq!(
            e.to_string(),
            "0000:03:00.0: BAR0 is 0x400 bytes, the register map needs 0x800"
        );
        check_id_block("0000:03:00.0", &rnic_bar(MAP_SIZE as usize)).unwrap();
    }
}
