//! Work requests: what `post_send` and `post_recv` take.

use bitflags::bitflags;

/// A scatter/gather entry (`ibv_sge`): `length` bytes at virtual address
/// `addr` of the memory region with local key `lkey`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Sge {
    pub addr: u64,
    pub length: u32,
    pub lkey: u32,
}

/// Send work-request opcodes (`enum ibv_wr_opcode`): the driver's, generated
/// from the WQE format. `post_send` refuses `LocalDmaCopy`, which is not a
/// verbs opcode (the driver posts copies itself), and the atomics
/// (`AtomicCmpAndSwp` = 5, `AtomicFetchAndAdd` = 6), whose operands a
/// [`SendWr`] has no place for: they are posted with
/// [`crate::QueuePair::post_atomic`] and an [`AtomicWr`].
pub use rnic_driver::WrOpcode;

/// The operation of an [`AtomicWr`] and its operands (`ibv_send_wr`
/// `wr.atomic.compare_add` and `wr.atomic.swap`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AtomicOp {
    /// `IBV_WR_ATOMIC_CMP_AND_SWP`: the remote 8 bytes become `swap` if
    /// they equal `compare`.
    CmpAndSwp { compare: u64, swap: u64 },
    /// `IBV_WR_ATOMIC_FETCH_AND_ADD`: `add` is added to the remote 8 bytes.
    FetchAndAdd { add: u64 },
}

/// An atomic work request, as `ibv_wr_atomic_cmp_swp` /
/// `ibv_wr_atomic_fetch_add` take it: the 8 bytes at `remote_addr`
/// (naturally aligned) of the region with `rkey` are read, changed and
/// written by the remote NIC as one operation, and their original value
/// lands in the 8-byte local buffer `sge` (a region with LOCAL_WRITE).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AtomicWr {
    pub wr_id: u64,
    pub op: AtomicOp,
    pub send_flags: SendFlags,
    /// The local buffer: exactly 8 bytes.
    pub sge: Sge,
    pub remote_addr: u64,
    pub rkey: u32,
}

bitflags! {
    /// `enum ibv_send_flags` (same bit values).
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
    pub struct SendFlags: u32 {
        /// Wait for earlier RDMA READ / atomic responses before this WQE.
        /// Not what orders WRITE before WRITE_WITH_IMM: that order is the
        /// QP's own.
        const FENCE = 1;
        /// Write a CQE for this WQE. Without it the WQE completes silently,
        /// and the next signaled completion of the QP retires it.
        const SIGNALED = 2;
        /// Set the BTH solicited-event bit (SEND / WRITE_WITH_IMM).
        const SOLICITED = 4;
    }
}

/// Remote address and key of an RDMA work request (`wr.rdma`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct RdmaInfo {
    pub remote_addr: u64,
    pub rkey: u32,
}

/// A send work request (`ibv_send_wr`, without the list link: post several
/// with [`QueuePair::post_send_list`](crate::QueuePair::post_send_list)).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SendWr<'a> {
    pub wr_id: u64,
    pub opcode: WrOpcode,
    pub send_flags: SendFlags,
    /// 0 or 1 entries (the NIC takes one SGE per WQE).
    pub sg_list: &'a [Sge],
    /// Immediate data for the `*_WITH_IMM` opcodes, with libibverbs'
    /// network-order semantics: the value's bytes in memory are the wire
    /// bytes, so write `Some(x.to_be())` and read `u32::from_be(imm)`.
    pub imm_data: Option<u32>,
    /// Remote address and key for the RDMA opcodes; `None` for SEND.
    pub rdma: Option<RdmaInfo>,
}

/// A receive work request (`ibv_recv_wr`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RecvWr<'a> {
    pub wr_id: u64,
    /// 0 or 1 entries.
    pub sg_list: &'a [Sge],
}
