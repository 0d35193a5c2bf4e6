//! Ring entry formats shared with the RTL: send WQE, receive WQE and CQE as
//! `hw/README.md` ("Work-queue and completion entry formats") defines them.
//! Everything is little endian except the immediate data, which is kept in
//! wire order (the first byte on the wire at the lowest address).

/// Size of a send-queue or receive-queue entry in bytes.
pub const WQE_SIZE: usize = 64;
/// Size of a completion-queue entry in bytes.
pub const CQE_SIZE: usize = 32;

/// Send WQE flags (byte 1).
pub const WQE_FLAG_SIGNALED: u8 = 1 << 0;
pub const WQE_FLAG_SOLICITED: u8 = 1 << 1;
pub const WQE_FLAG_FENCE: u8 = 1 << 2;

/// CQE flags (byte 28).
pub const CQE_FLAG_WITH_IMM: u8 = 1 << 0;
pub const CQE_FLAG_RECV: u8 = 1 << 1;

/// CQE opcodes (byte 20): `ibv_wc_opcode` numbering plus LOCAL_DMA_COPY.
pub const CQE_OP_SEND: u8 = 0;
pub const CQE_OP_RDMA_WRITE: u8 = 1;
pub const CQE_OP_LOCAL_DMA_COPY: u8 = 0x40;
pub const CQE_OP_RECV: u8 = 128;
pub const CQE_OP_RECV_RDMA_WITH_IMM: u8 = 129;

/// Work-request opcodes understood by the NIC (send WQE byte 0), numbered
/// as libibverbs' `enum ibv_wr_opcode` plus the local DMA copy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum WrOpcode {
    RdmaWrite = 0,
    RdmaWriteWithImm = 1,
    Send = 2,
    SendWithImm = 3,
    /// Read `length` bytes at `src`, write them at `dst`, then complete.
    /// Needs no network: it proves the DMA engines and the CQE ordering.
    LocalDmaCopy = 0x80,
}

/// Completion status, numbered as libibverbs' `enum ibv_wc_status`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum WcStatus {
    #[default]
    Success,
    LocLenErr,
    LocQpOpErr,
    LocEecOpErr,
    LocProtErr,
    WrFlushErr,
    MwBindErr,
    BadRespErr,
    LocAccessErr,
    RemInvReqErr,
    RemAccessErr,
    RemOpErr,
    RetryExcErr,
    RnrRetryExcErr,
    LocRddViolErr,
    RemInvRdReqErr,
    RemAbortErr,
    InvEecnErr,
    InvEecStateErr,
    FatalErr,
    RespTimeoutErr,
    GeneralErr,
    /// A value libibverbs does not define (kept, never dropped).
    Other(u8),
}

impl WcStatus {
    pub fn from_raw(v: u8) -> Self {
        match v {
            0 => Self::Success,
            1 => Self::LocLenErr,
            2 => Self::LocQpOpErr,
            3 => Self::LocEecOpErr,
            4 => Self::LocProtErr,
            5 => Self::WrFlushErr,
            6 => Self::MwBindErr,
            7 => Self::BadRespErr,
            8 => Self::LocAccessErr,
            9 => Self::RemInvReqErr,
            10 => Self::RemAccessErr,
            11 => Self::RemOpErr,
            12 => Self::RetryExcErr,
            13 => Self::RnrRetryExcErr,
            14 => Self::LocRddViolErr,
            15 => Self::RemInvRdReqErr,
            16 => Self::RemAbortErr,
            17 => Self::InvEecnErr,
            18 => Self::InvEecStateErr,
            19 => Self::FatalErr,
            20 => Self::RespTimeoutErr,
            21 => Self::GeneralErr,
            x => Self::Other(x),
        }
    }

    /// The `ibv_wc_status` value.
    pub fn to_raw(self) -> u8 {
        match self {
            Self::Success => 0,
            Self::LocLenErr => 1,
            Self::LocQpOpErr => 2,
            Self::LocEecOpErr => 3,
            Self::LocProtErr => 4,
            Self::WrFlushErr => 5,
            Self::MwBindErr => 6,
            Self::BadRespErr => 7,
            Self::LocAccessErr => 8,
            Self::RemInvReqErr => 9,
            Self::RemAccessErr => 10,
            Self::RemOpErr => 11,
            Self::RetryExcErr => 12,
            Self::RnrRetryExcErr => 13,
            Self::LocRddViolErr => 14,
            Self::RemInvRdReqErr => 15,
            Self::RemAbortErr => 16,
            Self::InvEecnErr => 17,
            Self::InvEecStateErr => 18,
            Self::FatalErr => 19,
            Self::RespTimeoutErr => 20,
            Self::GeneralErr => 21,
            Self::Other(x) => x,
        }
    }

    /// `ibv_wc_status_str`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Success => "success",
            Self::LocLenErr => "local length error",
            Self::LocQpOpErr => "local QP operation error",
            Self::LocEecOpErr => "local EE context operation error",
            Self::LocProtErr => "local protection error",
            Self::WrFlushErr => "Work Request Flushed Error",
            Self::MwBindErr => "memory management operation error",
            Self::BadRespErr => "bad response error",
            Self::LocAccessErr => "local access error",
            Self::RemInvReqErr => "remote invalid request error",
            Self::RemAccessErr => "remote access error",
            Self::RemOpErr => "remote operation error",
            Self::RetryExcErr => "transport retry counter exceeded",
            Self::RnrRetryExcErr => "RNR retry counter exceeded",
            Self::LocRddViolErr => "local RDD violation error",
            Self::RemInvRdReqErr => "remote invalid RD request",
            Self::RemAbortErr => "aborted error",
            Self::InvEecnErr => "invalid EE context number",
            Self::InvEecStateErr => "invalid EE context state",
            Self::FatalErr => "fatal error",
            Self::RespTimeoutErr => "response timeout error",
            Self::GeneralErr => "general error",
            Self::Other(_) => "unknown",
        }
    }
}

impl std::fmt::Display for WcStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Other(x) => write!(f, "unknown status {x}"),
            s => f.write_str(s.as_str()),
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

/// A send WQE, field by field (64 bytes on the ring).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SendWqe {
    /// Byte 0: [`WrOpcode`] value (any byte, so tests can send bad ones).
    pub opcode: u8,
    /// Byte 1: `WQE_FLAG_*`.
    pub flags: u8,
    /// Bytes 4..7.
    pub length: u32,
    /// Bytes 8..15.
    pub wr_id: u64,
    /// Bytes 16..23: virtual address in the `lkey` MR (bus address of the
    /// source for LOCAL_DMA_COPY).
    pub local_addr: u64,
    /// Bytes 24..31: remote virtual address (destination bus address for
    /// LOCAL_DMA_COPY).
    pub remote_addr: u64,
    /// Bytes 32..35.
    pub rkey: u32,
    /// Bytes 36..39, wire order: `imm[0]` is the first byte on the wire.
    pub imm: [u8; 4],
    /// Bytes 40..43.
    pub lkey: u32,
}

impl SendWqe {
    pub fn encode(&self) -> [u8; WQE_SIZE] {
        let mut w = [0u8; WQE_SIZE];
        w[0] = self.opcode;
        w[1] = self.flags;
        w[4..8].copy_from_slice(&self.length.to_le_bytes());
        w[8..16].copy_from_slice(&self.wr_id.to_le_bytes());
        w[16..24].copy_from_slice(&self.local_addr.to_le_bytes());
        w[24..32].copy_from_slice(&self.remote_addr.to_le_bytes());
        w[32..36].copy_from_slice(&self.rkey.to_le_bytes());
        w[36..40].copy_from_slice(&self.imm);
        w[40..44].copy_from_slice(&self.lkey.to_le_bytes());
        w
    }

    pub fn decode(w: &[u8; WQE_SIZE]) -> Self {
        Self {
            opcode: w[0],
            flags: w[1],
            length: le32(w, 4),
            wr_id: le64(w, 8),
            local_addr: le64(w, 16),
            remote_addr: le64(w, 24),
            rkey: le32(w, 32),
            imm: [w[36], w[37], w[38], w[39]],
            lkey: le32(w, 40),
        }
    }
}

/// A receive WQE (64 bytes on the ring).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct RecvWqe {
    /// Bytes 4..7.
    pub length: u32,
    /// Bytes 8..15.
    pub wr_id: u64,
    /// Bytes 16..23: virtual address in the `lkey` MR.
    pub addr: u64,
    /// Bytes 40..43.
    pub lkey: u32,
}

impl RecvWqe {
    pub fn encode(&self) -> [u8; WQE_SIZE] {
        let mut w = [0u8; WQE_SIZE];
        w[4..8].copy_from_slice(&self.length.to_le_bytes());
        w[8..16].copy_from_slice(&self.wr_id.to_le_bytes());
        w[16..24].copy_from_slice(&self.addr.to_le_bytes());
        w[40..44].copy_from_slice(&self.lkey.to_le_bytes());
        w
    }

    pub fn decode(w: &[u8; WQE_SIZE]) -> Self {
        Self {
            length: le32(w, 4),
            wr_id: le64(w, 8),
            addr: le64(w, 16),
            lkey: le32(w, 40),
        }
    }
}

/// Encodes a copy WQE with an arbitrary opcode byte (tests use unknown
/// opcodes). A copy is always signaled: the SIGNALED flag is set.
pub fn encode_wqe(opcode: u8, wr: &CopyWr) -> [u8; WQE_SIZE] {
    SendWqe {
        opcode,
        flags: WQE_FLAG_SIGNALED,
        length: wr.length,
        wr_id: wr.wr_id,
        local_addr: wr.src,
        remote_addr: wr.dst,
        ..SendWqe::default()
    }
    .encode()
}

fn le32(b: &[u8], o: usize) -> u32 {
    u32::from_le_bytes([b[o], b[o + 1], b[o + 2], b[o + 3]])
}

fn le64(b: &[u8], o: usize) -> u64 {
    u64::from(le32(b, o)) | (u64::from(le32(b, o + 4)) << 32)
}

/// A completion as the host reads it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Cqe {
    /// Bytes 0..7.
    pub wr_id: u64,
    /// Bytes 8..11.
    pub byte_len: u32,
    /// Bytes 12..15 read as a little-endian u32; [`Cqe::imm_bytes`] gives
    /// them in wire order.
    pub imm: u32,
    /// Bytes 16..19: local QP number (queue number for LOCAL_DMA_COPY).
    pub qn: u32,
    /// Byte 20: `CQE_OP_*`.
    pub opcode: u8,
    /// Byte 21.
    pub status: WcStatus,
    /// Bytes 22..23: free-running 16-bit index of the completed WQE in its
    /// ring (send ring, or receive ring when [`Cqe::is_recv`]).
    pub wqe_counter: u16,
    /// Bytes 24..27: source QP (receive completions).
    pub src_qp: u32,
    /// Byte 28: `CQE_FLAG_*`.
    pub flags: u8,
    /// Byte 29: NAK syndrome from the responder (remote errors).
    pub syndrome: u8,
}

impl Cqe {
    pub fn decode(b: &[u8; CQE_SIZE]) -> Self {
        Self {
            wr_id: le64(b, 0),
            byte_len: le32(b, 8),
            imm: le32(b, 12),
            qn: le32(b, 16),
            opcode: b[20],
            status: WcStatus::from_raw(b[21]),
            wqe_counter: u16::from_le_bytes([b[22], b[23]]),
            src_qp: le32(b, 24),
            flags: b[28],
            syndrome: b[29],
        }
    }

    /// The CQE image with owner/phase bit `phase` (tests and models).
    pub fn encode(&self, phase: bool) -> [u8; CQE_SIZE] {
        let mut b = [0u8; CQE_SIZE];
        b[0..8].copy_from_slice(&self.wr_id.to_le_bytes());
        b[8..12].copy_from_slice(&self.byte_len.to_le_bytes());
        b[12..16].copy_from_slice(&self.imm.to_le_bytes());
        b[16..20].copy_from_slice(&self.qn.to_le_bytes());
        b[20] = self.opcode;
        b[21] = self.status.to_raw();
        b[22..24].copy_from_slice(&self.wqe_counter.to_le_bytes());
        b[24..28].copy_from_slice(&self.src_qp.to_le_bytes());
        b[28] = self.flags;
        b[29] = self.syndrome;
        b[31] = u8::from(phase);
        b
    }

    /// Owner/phase bit of a raw CQE.
    pub fn phase(b: &[u8; CQE_SIZE]) -> bool {
        b[31] & 1 != 0
    }

    /// Immediate data in wire order (byte 0 first on the wire).
    pub fn imm_bytes(&self) -> [u8; 4] {
        self.imm.to_le_bytes()
    }

    /// The CQE carries immediate data.
    pub fn has_imm(&self) -> bool {
        self.flags & CQE_FLAG_WITH_IMM != 0
    }

    /// The CQE completes a receive-queue WQE.
    pub fn is_recv(&self) -> bool {
        self.flags & CQE_FLAG_RECV != 0
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
        assert_eq!(w[1], WQE_FLAG_SIGNALED);
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
        assert!(w[32..].iter().all(|b| *b == 0));
    }

    #[test]
    fn send_wqe_layout_and_round_trip() {
        let s = SendWqe {
            opcode: WrOpcode::RdmaWriteWithImm as u8,
            flags: WQE_FLAG_SIGNALED | WQE_FLAG_FENCE,
            length: 0x0102_0304,
            wr_id: 0xdead_beef_0bad_f00d,
            local_addr: 0x7f00_1234_5678,
            remote_addr: 0x7f00_8765_4321,
            rkey: 0x0000_0305,
            imm: [0xa1, 0xb2, 0xc3, 0xd4],
            lkey: 0x0000_0701,
        };
        let w = s.encode();
        assert_eq!(w[0], 1);
        assert_eq!(w[1], 0b101);
        assert_eq!(&w[2..4], &[0, 0]);
        assert_eq!(&w[4..8], &[4, 3, 2, 1]);
        assert_eq!(&w[32..36], &[5, 3, 0, 0]);
        assert_eq!(&w[36..40], &[0xa1, 0xb2, 0xc3, 0xd4]);
        assert_eq!(&w[40..44], &[1, 7, 0, 0]);
        assert!(w[44..].iter().all(|b| *b == 0));
        assert_eq!(SendWqe::decode(&w), s);
    }

    #[test]
    fn recv_wqe_layout() {
        let r = RecvWqe {
            length: 4096,
            wr_id: 9,
            addr: 0x1000_0000_0040,
            lkey: 0x0000_0203,
        };
        let w = r.encode();
        assert_eq!(&w[0..4], &[0, 0, 0, 0]);
        assert_eq!(&w[4..8], &4096u32.to_le_bytes());
        assert_eq!(&w[8..16], &9u64.to_le_bytes());
        assert_eq!(&w[16..24], &0x1000_0000_0040u64.to_le_bytes());
        assert!(w[24..40].iter().all(|b| *b == 0));
        assert_eq!(&w[40..44], &[3, 2, 0, 0]);
        assert_eq!(RecvWqe::decode(&w), r);
    }

    #[test]
    fn cqe_decode() {
        let mut b = [0u8; CQE_SIZE];
        b[0..8].copy_from_slice(&7u64.to_le_bytes());
        b[8..12].copy_from_slice(&99u32.to_le_bytes());
        b[12..16].copy_from_slice(&[0x11, 0x22, 0x33, 0x44]);
        b[16..20].copy_from_slice(&3u32.to_le_bytes());
        b[20] = 0x80;
        b[21] = 2;
        b[22..24].copy_from_slice(&0xfffeu16.to_le_bytes());
        b[24..28].copy_from_slice(&0x00ab_cdefu32.to_le_bytes());
        b[28] = CQE_FLAG_WITH_IMM | CQE_FLAG_RECV;
        b[29] = 0x62;
        b[31] = 1;
        let c = Cqe::decode(&b);
        assert_eq!(c.wr_id, 7);
        assert_eq!(c.byte_len, 99);
        assert_eq!(c.imm_bytes(), [0x11, 0x22, 0x33, 0x44]);
        assert_eq!(c.qn, 3);
        assert_eq!(c.opcode, 0x80);
        assert_eq!(c.status, WcStatus::LocQpOpErr);
        assert_eq!(c.wqe_counter, 0xfffe);
        assert_eq!(c.src_qp, 0x00ab_cdef);
        assert!(c.has_imm() && c.is_recv());
        assert_eq!(c.syndrome, 0x62);
        assert!(Cqe::phase(&b));
        assert_eq!(c.encode(true), b);
    }

    #[test]
    fn status_round_trip() {
        for v in 0..=255u8 {
            assert_eq!(WcStatus::from_raw(v).to_raw(), v);
        }
        assert_eq!(
            WcStatus::from_raw(5).to_string(),
            "Work Request Flushed Error"
        );
    }
}
