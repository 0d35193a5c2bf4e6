//! Ring entry formats shared with the RTL (`hw/rtl/wqe_executor.v`).

/// Size of a send-queue entry in bytes.
pub const WQE_SIZE: usize = 64;
/// Size of a completion-queue entry in bytes.
pub const CQE_SIZE: usize = 32;

/// Work-request opcodes understood by the NIC.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum WrOpcode {
    /// Read `length` bytes at `src`, write them at `dst`, then complete.
    /// Needs no network: it proves the DMA engines and the CQE ordering.
    LocalDmaCopy = 0x80,
}

/// Completion status, numbered as libibverbs' `enum ibv_wc_status`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WcStatus {
    Success,
    LocLenErr,
    LocQpOpErr,
    LocProtErr,
    WrFlushErr,
    RemAccessErr,
    Other(u8),
}

impl WcStatus {
    pub fn from_raw(v: u8) -> Self {
        match v {
            0 => Self::Success,
            1 => Self::LocLenErr,
            2 => Self::LocQpOpErr,
            4 => Self::LocProtErr,
            5 => Self::WrFlushErr,
            10 => Self::RemAccessErr,
            x => Self::Other(x),
        }
    }
}

/// A local DMA copy work request.
#[derive(Debug, Clone, Copy)]
pub struct CopyWr {
    pub wr_id: u64,
    pub src: u64,
    pub dst: u64,
    pub length: u32,
}

/// Encodes a WQE with an arbitrary opcode byte (tests use unknown opcodes).
pub fn encode_wqe(opcode: u8, wr: &CopyWr) -> [u8; WQE_SIZE] {
    let mut w = [0u8; WQE_SIZE];
    w[0] = opcode;
    w[4..8].copy_from_slice(&wr.length.to_le_bytes());
    w[8..16].copy_from_slice(&wr.wr_id.to_le_bytes());
    w[16..24].copy_from_slice(&wr.src.to_le_bytes());
    w[24..32].copy_from_slice(&wr.dst.to_le_bytes());
    w
}

/// A completion as the host reads it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cqe {
    pub wr_id: u64,
    pub byte_len: u32,
    pub imm: u32,
    pub qn: u32,
    pub opcode: u8,
    pub status: WcStatus,
}

impl Cqe {
    pub fn decode(b: &[u8; CQE_SIZE]) -> Self {
        let u32_at = |o: usize| u32::from_le_bytes([b[o], b[o + 1], b[o + 2], b[o + 3]]);
        Self {
            wr_id: u64::from_le_bytes(b[0..8].try_into().unwrap_or([0; 8])),
            byte_len: u32_at(8),
            imm: u32_at(12),
            qn: u32_at(16),
            opcode: b[20],
            status: WcStatus::from_raw(b[21]),
        }
    }

    /// Owner/phase bit of a raw CQE.
    pub fn phase(b: &[u8; CQE_SIZE]) -> bool {
        b[31] & 1 != 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wqe_layout() {
        let w = encode_wqe(
            0x80,
            &CopyWr {
                wr_id: 0x1122_3344_5566_7788,
                src: 0x1_0000_0040,
                dst: 0x2_0000_0001,
                length: 300,
            },
        );
        assert_eq!(w[0], 0x80);
        assert_eq!(u32::from_le_bytes(w[4..8].try_into().unwrap()), 300);
        assert_eq!(
            u64::from_le_bytes(w[8..16].try_into().unwrap()),
            0x1122_3344_5566_7788
        );
        assert_eq!(
            u64::from_le_bytes(w[16..24].try_into().unwrap()),
            0x1_0000_0040
        );
        assert_eq!(
            u64::from_le_bytes(w[24..32].try_into().unwrap()),
            0x2_0000_0001
        );
    }

    #[test]
    fn cqe_decode() {
        let mut b = [0u8; CQE_SIZE];
        b[0..8].copy_from_slice(&7u64.to_le_bytes());
        b[8..12].copy_from_slice(&99u32.to_le_bytes());
        b[16..20].copy_from_slice(&3u32.to_le_bytes());
        b[20] = 0x80;
        b[21] = 2;
        b[31] = 1;
        let c = Cqe::decode(&b);
        assert_eq!(c.wr_id, 7);
        assert_eq!(c.byte_len, 99);
        assert_eq!(c.qn, 3);
        assert_eq!(c.status, WcStatus::LocQpOpErr);
        assert!(Cqe::phase(&b));
    }
}
