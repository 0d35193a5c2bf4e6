//! Ring entry formats shared with the RTL: send WQE, receive WQE and CQE as
//! `hw/formats/rnic_formats.rdl` declares them (table:
//! `hw/formats/rnic_formats.md`). Positions, opcodes and statuses come from
//! [`crate::formats`], generated from that declaration; this module adds the
//! host's view of an entry. Everything is little endian except the immediate
//! data, which is kept in wire order (the first byte on the wire at the
//! lowest address).

use crate::formats::{cqe, recv_wqe, send_wqe};
pub use crate::formats::{WcOpcode, WcStatus, WrOpcode};

/// Size of a send-queue or receive-queue entry in bytes.
pub const WQE_SIZE: usize = send_wqe::SIZE;
/// Size of a completion-queue entry in bytes.
pub const CQE_SIZE: usize = cqe::SIZE;
// Both rings of a QP use one slot size.
const _: () = assert!(recv_wqe::SIZE == WQE_SIZE);

/// Send WQE flags (the `flags` byte).
pub const WQE_FLAG_SIGNALED: u8 = send_wqe::FLAGS_SIGNALED;
pub const WQE_FLAG_SOLICITED: u8 = send_wqe::FLAGS_SOLICITED;
pub const WQE_FLAG_FENCE: u8 = send_wqe::FLAGS_FENCE;

/// CQE flags (the `flags` byte).
pub const CQE_FLAG_WITH_IMM: u8 = cqe::FLAGS_WITH_IMM;
pub const CQE_FLAG_RECV: u8 = cqe::FLAGS_RECV;

/// CQE opcodes: the raw [`WcOpcode`] values the NIC writes.
pub const CQE_OP_SEND: u8 = WcOpcode::Send.to_raw();
pub const CQE_OP_RDMA_WRITE: u8 = WcOpcode::RdmaWrite.to_raw();
pub const CQE_OP_RDMA_READ: u8 = WcOpcode::RdmaRead.to_raw();
pub const CQE_OP_COMP_SWAP: u8 = WcOpcode::CompSwap.to_raw();
pub const CQE_OP_FETCH_ADD: u8 = WcOpcode::FetchAdd.to_raw();
pub const CQE_OP_LOCAL_DMA_COPY: u8 = WcOpcode::LocalDmaCopy.to_raw();
pub const CQE_OP_RECV: u8 = WcOpcode::Recv.to_raw();
pub const CQE_OP_RECV_RDMA_WITH_IMM: u8 = WcOpcode::RecvRdmaWithImm.to_raw();

impl WrOpcode {
    /// The opcode carries immediate data.
    pub fn has_imm(self) -> bool {
        matches!(self, Self::RdmaWriteWithImm | Self::SendWithImm)
    }

    /// The opcode names a remote address and rkey (WRITE*, READ).
    pub fn is_rdma(self) -> bool {
        matches!(
            self,
            Self::RdmaWrite | Self::RdmaWriteWithImm | Self::RdmaRead
        )
    }

    /// An atomic (compare and swap, fetch and add) on 8 remote bytes.
    pub fn is_atomic(self) -> bool {
        matches!(self, Self::AtomicCmpAndSwp | Self::AtomicFetchAndAdd)
    }

    /// The opcode writes at a remote address (RDMA WRITE, with or without
    /// immediate).
    pub fn is_write(self) -> bool {
        matches!(self, Self::RdmaWrite | Self::RdmaWriteWithImm)
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

/// A send WQE, field by field; where each lies: [`send_wqe`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SendWqe {
    /// A [`WrOpcode`] value (any byte, so tests can send bad ones).
    pub opcode: u8,
    /// `WQE_FLAG_*`.
    pub flags: u8,
    pub length: u32,
    pub wr_id: u64,
    /// Virtual address in the `lkey` MR (bus address of the source for
    /// LOCAL_DMA_COPY).
    pub local_addr: u64,
    /// Remote virtual address (destination bus address for LOCAL_DMA_COPY).
    pub remote_addr: u64,
    pub rkey: u32,
    /// Wire order: `imm[0]` is the first byte on the wire.
    pub imm: [u8; 4],
    pub lkey: u32,
    /// Atomics: the compare value (compare and swap) or the value to add
    /// (fetch and add), as `ibv_send_wr` `wr.atomic.compare_add`.
    pub compare_add: u64,
    /// Atomics: the swap value (compare and swap).
    pub swap: u64,
}

impl SendWqe {
    pub fn encode(&self) -> [u8; WQE_SIZE] {
        let mut w = [0u8; WQE_SIZE];
        send_wqe::set_opcode(&mut w, self.opcode);
        send_wqe::set_flags(&mut w, self.flags);
        send_wqe::set_length(&mut w, self.length);
        send_wqe::set_wr_id(&mut w, self.wr_id);
        send_wqe::set_local_addr(&mut w, self.local_addr);
        send_wqe::set_remote_addr(&mut w, self.remote_addr);
        send_wqe::set_rkey(&mut w, self.rkey);
        // little endian: the bytes land in memory as they are, in wire order
        send_wqe::set_imm(&mut w, u32::from_le_bytes(self.imm));
        send_wqe::set_lkey(&mut w, self.lkey);
        send_wqe::set_compare_add(&mut w, self.compare_add);
        send_wqe::set_swap(&mut w, self.swap);
        w
    }

    pub fn decode(w: &[u8; WQE_SIZE]) -> Self {
        Self {
            opcode: send_wqe::opcode(w),
            flags: send_wqe::flags(w),
            length: send_wqe::length(w),
            wr_id: send_wqe::wr_id(w),
            local_addr: send_wqe::local_addr(w),
            remote_addr: send_wqe::remote_addr(w),
            rkey: send_wqe::rkey(w),
            imm: send_wqe::imm(w).to_le_bytes(),
            lkey: send_wqe::lkey(w),
            compare_add: send_wqe::compare_add(w),
            swap: send_wqe::swap(w),
        }
    }
}

/// A receive WQE; where each field lies: [`recv_wqe`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct RecvWqe {
    pub length: u32,
    pub wr_id: u64,
    /// Virtual address in the `lkey` MR.
    pub addr: u64,
    pub lkey: u32,
}

impl RecvWqe {
    pub fn encode(&self) -> [u8; WQE_SIZE] {
        let mut w = [0u8; WQE_SIZE];
        recv_wqe::set_length(&mut w, self.length);
        recv_wqe::set_wr_id(&mut w, self.wr_id);
        recv_wqe::set_addr(&mut w, self.addr);
        recv_wqe::set_lkey(&mut w, self.lkey);
        w
    }

    pub fn decode(w: &[u8; WQE_SIZE]) -> Self {
        Self {
            length: recv_wqe::length(w),
            wr_id: recv_wqe::wr_id(w),
            addr: recv_wqe::addr(w),
            lkey: recv_wqe::lkey(w),
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

/// A completion as the host reads it; where each field lies: [`cqe`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Cqe {
    pub wr_id: u64,
    pub byte_len: u32,
    /// The immediate bytes read as a little-endian u32; [`Cqe::imm_bytes`]
    /// gives them in wire order.
    pub imm: u32,
    /// Local QP number (queue number for LOCAL_DMA_COPY).
    pub qn: u32,
    /// `CQE_OP_*` (a raw [`WcOpcode`] value).
    pub opcode: u8,
    pub status: WcStatus,
    /// Free-running 16-bit index of the completed WQE in its ring (send
    /// ring, or receive ring when [`Cqe::is_recv`]).
    pub wqe_counter: u16,
    /// Source QP (receive completions).
    pub src_qp: u32,
    /// `CQE_FLAG_*`.
    pub flags: u8,
    /// NAK syndrome from the responder (remote errors).
    pub syndrome: u8,
}

impl Cqe {
    pub fn decode(b: &[u8; CQE_SIZE]) -> Self {
        Self {
            wr_id: cqe::wr_id(b),
            byte_len: cqe::byte_len(b),
            imm: cqe::imm(b),
            qn: cqe::qn(b),
            opcode: cqe::opcode(b),
            status: WcStatus::from_raw(cqe::status(b)),
            wqe_counter: cqe::wqe_counter(b),
            src_qp: cqe::src_qp(b),
            flags: cqe::flags(b),
            syndrome: cqe::syndrome(b),
        }
    }

    /// The CQE image with owner/phase bit `phase` (tests and models).
    pub fn encode(&self, phase: bool) -> [u8; CQE_SIZE] {
        let mut b = [0u8; CQE_SIZE];
        cqe::set_wr_id(&mut b, self.wr_id);
        cqe::set_byte_len(&mut b, self.byte_len);
        cqe::set_imm(&mut b, self.imm);
        cqe::set_qn(&mut b, self.qn);
        cqe::set_opcode(&mut b, self.opcode);
        cqe::set_status(&mut b, self.status.to_raw());
        cqe::set_wqe_counter(&mut b, self.wqe_counter);
        cqe::set_src_qp(&mut b, self.src_qp);
        cqe::set_flags(&mut b, self.flags);
        cqe::set_syndrome(&mut b, self.syndrome);
        cqe::set_owner_phase(&mut b, phase);
        b
    }

    /// Owner/phase bit of a raw CQE.
    pub fn phase(b: &[u8; CQE_SIZE]) -> bool {
        cqe::owner_phase(b)
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
            compare_add: 0x1122_3344_5566_7788,
            swap: 0x99aa_bbcc_ddee_ff00,
        };
        let w = s.encode();
        assert_eq!(w[0], 1);
        assert_eq!(w[1], 0b101);
        assert_eq!(&w[2..4], &[0, 0]);
        assert_eq!(&w[4..8], &[4, 3, 2, 1]);
        assert_eq!(&w[32..36], &[5, 3, 0, 0]);
        assert_eq!(&w[36..40], &[0xa1, 0xb2, 0xc3, 0xd4]);
        assert_eq!(&w[40..44], &[1, 7, 0, 0]);
        assert!(w[44..48].iter().all(|b| *b == 0));
        assert_eq!(&w[48..56], &0x1122_3344_5566_7788u64.to_le_bytes());
        assert_eq!(&w[56..64], &0x99aa_bbcc_ddee_ff00u64.to_le_bytes());
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
    fn bit_accessors_match_a_bit_by_bit_model() {
        use crate::formats::{get_bits, set_bits};
        let bit = |e: &[u8], i: usize| u64::from(e[i / 8] >> (i % 8) & 1);
        let mut e = [0u8; 16];
        for (i, b) in e.iter_mut().enumerate() {
            *b = (i as u8).wrapping_mul(0x9d) ^ 0x5a;
        }
        for lsb in 0..40 {
            for width in [1, 3, 8, 13, 16, 32, 57, 64] {
                let want = (0..width).fold(0u64, |v, i| v | bit(&e, lsb + i) << i);
                assert_eq!(get_bits(&e, lsb, width), want, "lsb {lsb} width {width}");
                let mut f = e;
                let v = 0xa5c3_0f96_1e2d_3c4bu64;
                set_bits(&mut f, lsb, width, v);
                for i in 0..128 {
                    let inside = (lsb..lsb + width).contains(&i);
                    let w = if inside {
                        v >> (i - lsb) & 1
                    } else {
                        bit(&e, i)
                    };
                    assert_eq!(bit(&f, i), w, "lsb {lsb} width {width} bit {i}");
                }
            }
        }
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
