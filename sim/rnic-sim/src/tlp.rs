//! PCIe TLP headers as `rnic_core` carries them (hw/README.md): a 128-bit
//! header, here as `[u32; 4]` with index = DW number (`h[0]` = DW0 =
//! header bits 127:96). 3DW headers leave DW3 zero.

/// Fmt field values.
pub const FMT_3DW: u8 = 0b000;
pub const FMT_4DW: u8 = 0b001;
pub const FMT_3DW_DATA: u8 = 0b010;
pub const FMT_4DW_DATA: u8 = 0b011;

/// Type field values.
pub const TYPE_MEM: u8 = 0b0_0000;
pub const TYPE_CPL: u8 = 0b0_1010;

/// Completion status.
pub const CPL_SC: u8 = 0;
pub const CPL_UR: u8 = 1;
pub const CPL_CA: u8 = 4;

/// The 4 KiB boundary a request must not cross.
pub const PAGE: u64 = 4096;

/// Bytes for a PCIe size encoding (MPS / MRRS): 0 = 128 ... 5 = 4096.
pub fn size_from_code(code: u8) -> u32 {
    128u32 << code.min(5)
}

/// Fields common to every TLP, from DW0.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Dw0 {
    pub fmt: u8,
    pub typ: u8,
    pub tc: u8,
    /// `Attr[2]`, ID-based ordering.
    pub ido: bool,
    pub th: bool,
    pub td: bool,
    pub ep: bool,
    /// `Attr[1]`, Relaxed Ordering.
    pub ro: bool,
    /// `Attr[0]`, No Snoop.
    pub ns: bool,
    pub at: u8,
    /// Length in dwords, 1..=1024 (the field's 0 means 1024).
    pub length_dw: u32,
}

impl Dw0 {
    pub fn decode(dw0: u32) -> Self {
        let len = dw0 & 0x3ff;
        Self {
            fmt: (dw0 >> 29) as u8 & 0x7,
            typ: (dw0 >> 24) as u8 & 0x1f,
            tc: (dw0 >> 20) as u8 & 0x7,
            ido: dw0 & (1 << 18) != 0,
            th: dw0 & (1 << 16) != 0,
            td: dw0 & (1 << 15) != 0,
            ep: dw0 & (1 << 14) != 0,
            ro: dw0 & (1 << 13) != 0,
            ns: dw0 & (1 << 12) != 0,
            at: (dw0 >> 10) as u8 & 0x3,
            length_dw: if len == 0 { 1024 } else { len },
        }
    }

    pub fn encode(&self) -> u32 {
        (u32::from(self.fmt & 7) << 29)
            | (u32::from(self.typ & 0x1f) << 24)
            | (u32::from(self.tc & 7) << 20)
            | (u32::from(self.ido) << 18)
            | (u32::from(self.th) << 16)
            | (u32::from(self.td) << 15)
            | (u32::from(self.ep) << 14)
            | (u32::from(self.ro) << 13)
            | (u32::from(self.ns) << 12)
            | (u32::from(self.at & 3) << 10)
            | (self.length_dw & 0x3ff)
    }

    pub fn has_data(&self) -> bool {
        self.fmt & 0b010 != 0
    }

    pub fn is_4dw(&self) -> bool {
        self.fmt & 0b001 != 0
    }
}

/// A memory request header (MemRd / MemWr).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ReqHeader {
    pub dw0: Dw0,
    pub requester_id: u16,
    pub tag: u8,
    pub last_be: u8,
    pub first_be: u8,
    /// Full address field including bits 1:0 (which must be zero: they are
    /// the processing hint, only meaningful with TH=1).
    pub addr: u64,
}

impl ReqHeader {
    pub fn decode(h: &[u32; 4]) -> Self {
        let dw0 = Dw0::decode(h[0]);
        let addr = if dw0.is_4dw() {
            (u64::from(h[2]) << 32) | u64::from(h[3])
        } else {
            u64::from(h[2])
        };
        Self {
            dw0,
            requester_id: (h[1] >> 16) as u16,
            tag: (h[1] >> 8) as u8,
            last_be: (h[1] >> 4) as u8 & 0xf,
            first_be: h[1] as u8 & 0xf,
            addr,
        }
    }

    pub fn encode(&self) -> [u32; 4] {
        let dw1 = (u32::from(self.requester_id) << 16)
            | (u32::from(self.tag) << 8)
            | (u32::from(self.last_be & 0xf) << 4)
            | u32::from(self.first_be & 0xf);
        if self.dw0.is_4dw() {
            [
                self.dw0.encode(),
                dw1,
                (self.addr >> 32) as u32,
                self.addr as u32,
            ]
        } else {
            [self.dw0.encode(), dw1, self.addr as u32, 0]
        }
    }

    /// A memory request with the 3DW or 4DW format chosen by address, as
    /// PCIe requires (3DW below 4 GiB).
    pub fn mem(write: bool, addr: u64, length_dw: u32, first_be: u8, last_be: u8) -> Self {
        let four = addr >= 1 << 32;
        let fmt = match (write, four) {
            (false, false) => FMT_3DW,
            (false, true) => FMT_4DW,
            (true, false) => FMT_3DW_DATA,
            (true, true) => FMT_4DW_DATA,
        };
        Self {
            dw0: Dw0 {
                fmt,
                typ: TYPE_MEM,
                length_dw,
                ..Dw0::default()
            },
            requester_id: 0,
            tag: 0,
            last_be,
            first_be,
            addr,
        }
    }

    /// Number of bytes the request covers, from length and byte enables
    /// (the "byte count" of its first completion; 1 for a zero-length read).
    pub fn byte_count(&self) -> u32 {
        byte_count(self.dw0.length_dw, self.first_be, self.last_be)
    }

    /// Bus address of the first enabled byte (the DW address for zero-length).
    pub fn first_byte_addr(&self) -> u64 {
        (self.addr & !3) + u64::from(first_byte_offset(self.first_be))
    }
}

/// A completion header (Cpl / CplD).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CplHeader {
    pub dw0: Dw0,
    pub completer_id: u16,
    pub status: u8,
    pub bcm: bool,
    /// Remaining byte count including this completion, 1..=4096 (0 = 4096).
    pub byte_count: u32,
    pub requester_id: u16,
    pub tag: u8,
    pub lower_addr: u8,
}

impl CplHeader {
    pub fn decode(h: &[u32; 4]) -> Self {
        let bc = h[1] & 0xfff;
        Self {
            dw0: Dw0::decode(h[0]),
            completer_id: (h[1] >> 16) as u16,
            status: (h[1] >> 13) as u8 & 0x7,
            bcm: h[1] & (1 << 12) != 0,
            byte_count: if bc == 0 { 4096 } else { bc },
            requester_id: (h[2] >> 16) as u16,
            tag: (h[2] >> 8) as u8,
            lower_addr: h[2] as u8 & 0x7f,
        }
    }

    pub fn encode(&self) -> [u32; 4] {
        [
            self.dw0.encode(),
            (u32::from(self.completer_id) << 16)
                | (u32::from(self.status & 7) << 13)
                | (u32::from(self.bcm) << 12)
                | (self.byte_count & 0xfff),
            (u32::from(self.requester_id) << 16)
                | (u32::from(self.tag) << 8)
                | u32::from(self.lower_addr & 0x7f),
            0,
        ]
    }
}

/// Offset of the first enabled byte in the first DW (0 when no byte is enabled).
pub fn first_byte_offset(first_be: u8) -> u32 {
    if first_be & 0xf == 0 {
        0
    } else {
        (first_be & 0xf).trailing_zeros()
    }
}

/// Byte count of a request (PCIe base spec, table "Calculating Byte Count
/// from Length and Byte Enables").
pub fn byte_count(length_dw: u32, first_be: u8, last_be: u8) -> u32 {
    let fbe = u32::from(first_be & 0xf);
    let lbe = u32::from(last_be & 0xf);
    if length_dw == 1 {
        if fbe == 0 {
            return 1;
        }
        let hi = 31 - fbe.leading_zeros();
        let lo = fbe.trailing_zeros();
        return hi - lo + 1;
    }
    let lead = if fbe == 0 { 4 } else { fbe.trailing_zeros() };
    let trail = if lbe == 0 {
        4
    } else {
        3 - (31 - lbe.leading_zeros())
    };
    (length_dw * 4).saturating_sub(lead + trail)
}

/// Byte-enable rules for memory requests. `Err` names the broken rule.
pub fn check_byte_enables(
    length_dw: u32,
    first_be: u8,
    last_be: u8,
    addr: u64,
) -> Result<(), &'static str> {
    let fbe = first_be & 0xf;
    let lbe = last_be & 0xf;
    if length_dw == 1 {
        if lbe != 0 {
            return Err("last BE must be 0 for a 1-DW request");
        }
        return Ok(());
    }
    if fbe == 0 {
        return Err("first BE must not be 0 for a request longer than 1 DW");
    }
    if lbe == 0 {
        return Err("last BE must not be 0 for a request longer than 1 DW");
    }
    // Non-contiguous enables are only allowed for 1 DW (above) and for
    // 2-DW requests that are QW aligned.
    if length_dw == 2 && addr & 7 == 0 {
        return Ok(());
    }
    // First BE contiguous up to bit 3: 1111, 1110, 1100, 1000.
    if !matches!(fbe, 0b1111 | 0b1110 | 0b1100 | 0b1000) {
        return Err("first BE not contiguous with the rest of the request");
    }
    // Last BE contiguous from bit 0: 0001, 0011, 0111, 1111.
    if !matches!(lbe, 0b0001 | 0b0011 | 0b0111 | 0b1111) {
        return Err("last BE not contiguous with the rest of the request");
    }
    Ok(())
}

/// Byte mask of payload dword `i` of a request with these byte enables.
pub fn dword_mask(i: u32, length_dw: u32, first_be: u8, last_be: u8) -> u8 {
    if i == 0 {
        first_be & 0xf
    } else if i + 1 == length_dw {
        last_be & 0xf
    } else {
        0xf
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_roundtrip() {
        let mut r = ReqHeader::mem(true, 0x1_2345_6780, 17, 0xe, 0x3);
        r.requester_id = 0x0100;
        r.tag = 0x42;
        r.dw0.ro = true;
        let h = r.encode();
        assert_eq!(h[0] >> 29, 0b011);
        assert_eq!(h[2], 1);
        assert_eq!(h[3], 0x2345_6780);
        assert_eq!(ReqHeader::decode(&h), r);
        let r3 = ReqHeader::mem(false, 0x8000_1000, 1024, 0xf, 0xf);
        let h3 = r3.encode();
        assert_eq!(h3[0] & 0x3ff, 0, "1024 DW encodes as 0");
        assert_eq!(h3[3], 0);
        assert_eq!(ReqHeader::decode(&h3), r3);
        let c = CplHeader {
            dw0: Dw0 {
                fmt: FMT_3DW_DATA,
                typ: TYPE_CPL,
                length_dw: 16,
                ..Dw0::default()
            },
            completer_id: 0,
            status: CPL_SC,
            bcm: false,
            byte_count: 4096,
            requester_id: 0x0100,
            tag: 9,
            lower_addr: 0x40,
        };
        assert_eq!(c.encode()[1] & 0xfff, 0);
        assert_eq!(CplHeader::decode(&c.encode()), c);
    }

    #[test]
    fn byte_counts() {
        assert_eq!(byte_count(1, 0, 0), 1);
        assert_eq!(byte_count(1, 0b1001, 0), 4);
        assert_eq!(byte_count(1, 0b0110, 0), 2);
        assert_eq!(byte_count(1, 0b1000, 0), 1);
        assert_eq!(byte_count(2, 0b1100, 0b0011), 4);
        assert_eq!(byte_count(16, 0xf, 0xf), 64);
        assert_eq!(byte_count(3, 0b1110, 0b0001), 8);
        assert_eq!(first_byte_offset(0b1100), 2);
    }

    #[test]
    fn byte_enable_rules() {
        assert!(check_byte_enables(1, 0, 0, 0).is_ok());
        assert!(check_byte_enables(1, 0b0101, 0, 0).is_ok());
        assert!(check_byte_enables(1, 0xf, 0xf, 0).is_err());
        assert!(check_byte_enables(2, 0b0101, 0b1010, 0x1000).is_ok());
        assert!(check_byte_enables(2, 0b0101, 0b1010, 0x1004).is_err());
        assert!(check_byte_enables(3, 0b1100, 0b0011, 0).is_ok());
        assert!(check_byte_enables(3, 0b0110, 0b0011, 0).is_err());
        assert!(check_byte_enables(3, 0xf, 0, 0).is_err());
    }
}
