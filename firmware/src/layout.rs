//! Where things live in the configuration flash.
//!
//! A slot holds the bitstream at its start (where the FPGA's configuration
//! logic reads it) and the 512-byte image header at the start of its last
//! 4 KiB sector, the *trailer*. An update erases the trailer first and
//! programs it last, after the bitstream has been read back and compared:
//! a slot with a valid trailer is a slot that was written completely. A
//! power cut anywhere before leaves an erased or partial trailer, which
//! fails the header CRC: the slot reads as invalid and is never booted.
//!
//! The boot record, one sector of its own, names the slot to boot. Erased,
//! torn or naming an invalid slot, the golden slot boots. The golden slot
//! is written only by hand (an explicit flag) and never by an update.

use serde::Serialize;

/// Size of the trailer sector at the end of each slot.
pub const TRAILER_SECTOR: u64 = 4096;

/// One slot: `size` bytes from `base`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Slot {
    pub base: u64,
    pub size: u64,
}

impl Slot {
    /// Flash address of the image header.
    pub fn trailer(&self) -> u64 {
        self.base + self.size - TRAILER_SECTOR
    }

    /// Largest bitstream the slot holds.
    pub fn max_bitstream(&self) -> u64 {
        self.size - TRAILER_SECTOR
    }

    pub fn end(&self) -> u64 {
        self.base + self.size
    }

    /// Whether `[addr, addr + len)` overlaps this slot.
    pub fn overlaps(&self, addr: u64, len: u64) -> bool {
        len > 0 && addr < self.end() && addr + len > self.base
    }
}

/// Which slot.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum SlotId {
    Golden,
    Update,
}

impl SlotId {
    pub fn name(self) -> &'static str {
        match self {
            SlotId::Golden => "golden",
            SlotId::Update => "update",
        }
    }

    /// Encoding in the boot record and the boot status register.
    pub fn code(self) -> u8 {
        match self {
            SlotId::Golden => 0,
            SlotId::Update => 1,
        }
    }

    pub fn from_code(c: u8) -> Option<Self> {
        match c {
            0 => Some(SlotId::Golden),
            1 => Some(SlotId::Update),
            _ => None,
        }
    }
}

impl std::fmt::Display for SlotId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for SlotId {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "golden" => Ok(SlotId::Golden),
            "update" => Ok(SlotId::Update),
            _ => Err(format!("unknown slot {s:?} (golden or update)")),
        }
    }
}

/// A board's flash layout.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Layout {
    pub golden: Slot,
    pub update: Slot,
    /// Address of the boot record's sector.
    pub boot_record: u64,
}

impl Layout {
    pub fn slot(&self, id: SlotId) -> Slot {
        match id {
            SlotId::Golden => self.golden,
            SlotId::Update => self.update,
        }
    }
}

/// Bytes of the boot record as stored.
pub const BOOT_RECORD_LEN: usize = 16;
const BOOT_MAGIC: &[u8; 4] = b"RNBR";

/// The boot record: which slot to boot. Stored as magic `RNBR`, version
/// (u16, 1), slot code (u8), reserved (u8), sequence number (u32), CRC-32
/// of the first 12 bytes (u32), little-endian.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct BootRecord {
    pub slot: SlotId,
    /// Incremented on every write (diagnostics).
    pub seq: u32,
}

impl BootRecord {
    pub fn to_bytes(&self) -> [u8; BOOT_RECORD_LEN] {
        let mut b = [0u8; BOOT_RECORD_LEN];
        b[..4].copy_from_slice(BOOT_MAGIC);
        b[4..6].copy_from_slice(&1u16.to_le_bytes());
        b[6] = self.slot.code();
        b[8..12].copy_from_slice(&self.seq.to_le_bytes());
        let c = crc32fast::hash(&b[..12]);
        b[12..].copy_from_slice(&c.to_le_bytes());
        b
    }

    /// Parse a stored record; `Err` says why it is not one (erased, torn).
    pub fn parse(b: &[u8]) -> Result<Self, String> {
        if b.len() < BOOT_RECORD_LEN {
            return Err("short".into());
        }
        if b[..BOOT_RECORD_LEN].iter().all(|&x| x == 0xFF) {
            return Err("erased".into());
        }
        if &b[..4] != BOOT_MAGIC {
            return Err("no boot record magic".into());
        }
        let c = crc32fast::hash(&b[..12]);
        if c.to_le_bytes() != b[12..16] {
            return Err("CRC mismatch (torn write)".into());
        }
        if b[4..6] != 1u16.to_le_bytes() {
            return Err("unknown boot record version".into());
        }
        let slot = SlotId::from_code(b[6]).ok_or_else(|| format!("slot code {}", b[6]))?;
        Ok(BootRecord {
            slot,
            seq: u32::from_le_bytes(b[8..12].try_into().unwrap()),
        })
    }
}

/// What the FPGA's configuration logic does at power-on or reconfiguration,
/// given a reader of the flash: boot the slot the boot record names if its
/// trailer is a valid header and the bitstream matches it, else golden.
/// Returns (slot booted, fell back). The simulator's loader uses this; on
/// a real FPGA the configuration engine's own checks (sync word, CRC)
/// play the part of the bitstream check.
pub fn select_boot_slot(
    layout: &Layout,
    read: &mut dyn FnMut(u64, usize) -> Vec<u8>,
) -> (SlotId, bool) {
    let rec = BootRecord::parse(&read(layout.boot_record, BOOT_RECORD_LEN));
    let want = match rec {
        Ok(r) => r.slot,
        Err(_) => return (SlotId::Golden, false),
    };
    if want == SlotId::Golden {
        return (SlotId::Golden, false);
    }
    let s = layout.slot(want);
    let ok = crate::Header::parse(&read(s.trailer(), crate::HEADER_LEN))
        .ok()
        .filter(|h| h.bitstream_len <= s.max_bitstream())
        .map(|h| {
            h.check_bitstream(&read(s.base, h.bitstream_len as usize))
                .is_ok()
        })
        .unwrap_or(false);
    if ok {
        (want, false)
    } else {
        (SlotId::Golden, true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn boot_record_round_trip_and_damage() {
        let r = BootRecord {
            slot: SlotId::Update,
            seq: 7,
        };
        let b = r.to_bytes();
        assert_eq!(BootRecord::parse(&b).unwrap(), r);
        assert_eq!(BootRecord::parse(&[0xFF; 16]).unwrap_err(), "erased");
        for i in 0..16 {
            let mut d = b;
            d[i] ^= 4;
            assert!(BootRecord::parse(&d).is_err(), "byte {i}");
        }
    }

    #[test]
    fn boot_selection_falls_back_to_golden() {
        let board = crate::board_by_name("sim").unwrap().image_target().unwrap();
        let l = board.layout;
        let mut flash = vec![0xFFu8; board.flash.size as usize];
        let rd = |f: &Vec<u8>| {
            let f = f.clone();
            move |a: u64, n: usize| f[a as usize..a as usize + n].to_vec()
        };
        assert_eq!(
            select_boot_slot(&l, &mut rd(&flash)),
            (SlotId::Golden, false)
        );
        let rec = BootRecord {
            slot: SlotId::Update,
            seq: 1,
        }
        .to_bytes();
        flash[l.boot_record as usize..][..16].copy_from_slice(&rec);
        // Update selected but empty: fall back.
        assert_eq!(
            select_boot_slot(&l, &mut rd(&flash)),
            (SlotId::Golden, true)
        );
        let img = crate::Image::pack("sim", Default::default(), vec![1, 2, 3, 4]).unwrap();
        let u = l.update;
        flash[u.base as usize..][..4].copy_from_slice(&img.bitstream);
        flash[u.trailer() as usize..][..crate::HEADER_LEN]
            .copy_from_slice(&img.header.to_bytes().unwrap());
        assert_eq!(
            select_boot_slot(&l, &mut rd(&flash)),
            (SlotId::Update, false)
        );
        flash[u.base as usize] = 0;
        assert_eq!(
            select_boot_slot(&l, &mut rd(&flash)),
            (SlotId::Golden, true)
        );
    }
}
