//! Verbs for the rnic RoCEv2 NIC, with libibverbs' names and semantics in
//! idiomatic Rust: [`Context`] (`ibv_context`), [`ProtectionDomain`],
//! [`MemoryRegion`], [`CompletionQueue`], [`QueuePair`] (RC), work requests
//! ([`SendWr`], [`RecvWr`]) and [`WorkCompletion`]s.
//!
//! It sits on the queue layer ([`rnic_driver::Nic`]) over any
//! [`Device`](rnic_device::Device) backend (simulator or hardware), and
//! programs the NIC through BAR0's `qp` and `mr` register windows. The
//! entry formats are those of `hw/README.md`.
//!
//! # Differences from libibverbs
//!
//! - Objects are Rust values: dropping a memory region deregisters it,
//!   dropping a queue pair moves it to RESET and frees its queues. A queue
//!   pair keeps its CQs and PD alive. Objects of one context share it
//!   through `Rc` (not `Send`): one context per thread.
//! - One SGE per work request, no inline data, RC only, one port, one
//!   P_Key (index 0); RDMA READ served and issued on a READ_EN build
//!   (`max_qp_rd_atom` = [`MAX_DEST_RD_ATOMIC`], `max_qp_init_rd_atom` =
//!   [`MAX_RD_ATOMIC`], else 0). Atomics (CMP_AND_SWP, FETCH_AND_ADD, 8
//!   bytes) are executed as a responder on an ATOMIC_EN build (`id.caps`
//!   bit 9: `atomic_cap` = [`AtomicCap::Hca`], REMOTE_ATOMIC access taken
//!   by MRs and QPs), sharing the responder's READ resources; the requester
//!   does not issue them yet.
//! - Errors are [`VerbsError`] values ([`VerbsError::errno`] gives the
//!   errno libibverbs would return). Nothing panics on bad input.
//! - The address vector of an RC QP is a destination MAC, IPv4 address and
//!   UDP source port ([`AhAttr`]); there is no address resolution.
//! - Posting needs RTS or ERR (send; in ERR the NIC flushes the work
//!   request, as libibverbs providers do) or INIT/RTR/RTS (receive).
//!
//! # The ordering contract
//!
//! When the receiver polls the CQE of a `WRITE_WITH_IMM`, every byte the
//! same QP wrote before it is already in host memory. [`CompletionQueue::poll`]
//! issues an acquire fence after seeing a CQE's owner bit, so the buffers
//! can be read right after it returns. The promise is per QP.
//!
//! # Example: WRITE, WRITE, WRITE_WITH_IMM
//!
//! ```no_run
//! use std::net::Ipv4Addr;
//! use rnic_device::Device;
//! use rnic_verbs::*;
//!
//! /// What the peer tells us out of band (e.g. over TCP).
//! struct Peer { qpn: u32, psn: u32, mac: [u8; 6], ip: Ipv4Addr, addr: u64, rkey: u32 }
//!
//! fn send_message<D: Device>(dev: D, peer: &Peer) -> Result<()> {
//!     let ctx = Context::open(dev)?;
//!     ctx.set_port_addr([0x02, 0, 0, 0, 0, 1], Ipv4Addr::new(10, 0, 0, 1))?;
//!     let pd = ctx.alloc_pd()?;
//!     let buf = ctx.alloc_dma(3 * 4096)?;
//!     let mr = ctx.reg_mr(&pd, &buf, 0, buf.len(), AccessFlags::LOCAL_WRITE)?;
//!     let cq = ctx.create_cq(64)?;
//!     let mut qp = ctx.create_qp(
//!         &pd,
//!         &QpInitAttr {
//!             send_cq: &cq,
//!             recv_cq: &cq,
//!             cap: QpCap { max_send_wr: 64, max_recv_wr: 0, max_send_sge: 1, max_recv_sge: 1 },
//!             qp_type: QpType::Rc,
//!             sq_sig_all: false,
//!         },
//!     )?;
//!
//!     // RESET -> INIT -> RTR -> RTS.
//!     type M = QpAttrMask;
//!     qp.modify(
//!         &QpAttr { qp_state: QpState::Init, pkey_index: 0, port_num: 1,
//!                   qp_access_flags: AccessFlags::REMOTE_WRITE, ..Default::default() },
//!         M::STATE | M::PKEY_INDEX | M::PORT | M::ACCESS_FLAGS,
//!     )?;
//!     qp.modify(
//!         &QpAttr {
//!             qp_state: QpState::Rtr,
//!             path_mtu: Mtu::Mtu1024,
//!             dest_qp_num: peer.qpn,
//!             rq_psn: peer.psn,
//!             ah_attr: AhAttr { dmac: peer.mac, dip: peer.ip, udp_sport: 0xC001, ..Default::default() },
//!             max_dest_rd_atomic: 0,
//!             min_rnr_timer: 12,
//!             ..Default::default()
//!         },
//!         M::STATE | M::AV | M::PATH_MTU | M::DEST_QPN | M::RQ_PSN
//!             | M::MAX_DEST_RD_ATOMIC | M::MIN_RNR_TIMER,
//!     )?;
//!     qp.modify(
//!         &QpAttr { qp_state: QpState::Rts, sq_psn: 0x1000, timeout: 14, retry_cnt: 7,
//!                   rnr_retry: 7, max_rd_atomic: 0, ..Default::default() },
//!         M::STATE | M::SQ_PSN | M::TIMEOUT | M::RETRY_CNT | M::RNR_RETRY | M::MAX_QP_RD_ATOMIC,
//!     )?;
//!
//!     // Two unsignaled WRITEs and a signaled WRITE_WITH_IMM, one doorbell.
//!     // The peer's CQE for the immediate means both WRITEs have landed.
//!     let sges = [[mr.sge(0, 4096)?], [mr.sge(4096, 4096)?], [mr.sge(8192, 100)?]];
//!     let at = |off: u64| Some(RdmaInfo { remote_addr: peer.addr + off, rkey: peer.rkey });
//!     qp.post_send_list(&[
//!         SendWr {
//!             wr_id: 1,
//!             opcode: WrOpcode::RdmaWrite,
//!             send_flags: SendFlags::empty(),
//!             sg_list: &sges[0],
//!             imm_data: None,
//!             rdma: at(0),
//!         },
//!         SendWr {
//!             wr_id: 2,
//!             opcode: WrOpcode::RdmaWrite,
//!             send_flags: SendFlags::empty(),
//!             sg_list: &sges[1],
//!             imm_data: None,
//!             rdma: at(4096),
//!         },
//!         SendWr {
//!             wr_id: 3,
//!             opcode: WrOpcode::RdmaWriteWithImm,
//!             send_flags: SendFlags::SIGNALED,
//!             sg_list: &sges[2],
//!             imm_data: Some(42u32.to_be()),
//!             rdma: at(8192),
//!         },
//!     ])?;
//!
//!     // One completion (wr_id 3) retires all three WQEs.
//!     let mut wc = [WorkCompletion::default(); 8];
//!     loop {
//!         let n = cq.poll(&mut wc)?;
//!         if let Some(c) = wc[..n].first() {
//!             assert_eq!((c.wr_id, c.status), (3, WcStatus::Success));
//!             break;
//!         }
//!         ctx.device().idle();
//!     }
//!     assert_eq!(qp.send_outstanding(), 0);
//!     Ok(())
//! }
//!
//! /// The receiving side: one receive WQE per WRITE_WITH_IMM.
//! fn receive_message<D: Device>(
//!     ctx: &Context<D>, qp: &mut QueuePair<D>, cq: &CompletionQueue<D>,
//! ) -> Result<u32> {
//!     qp.post_recv(&RecvWr { wr_id: 7, sg_list: &[] })?;
//!     cq.req_notify(false)?;
//!     loop {
//!         if let Some(c) = cq.poll_one()? {
//!             assert_eq!(c.opcode, WcOpcode::RecvRdmaWithImm);
//!             // The data of the WRITEs before it is visible now.
//!             return Ok(u32::from_be(c.imm_data.unwrap_or(0)));
//!         }
//!         cq.wait_event(1_000_000)?;
//!         cq.req_notify(false)?;
//!     }
//! }
//! # let _ = (send_message::<&dyn Device>, receive_message::<&dyn Device>);
//! ```

mod context;
mod cq;
mod error;
mod mr;
mod pd;
mod qp;
mod wr;

#[cfg(test)]
mod tests;

pub use context::{
    AtomicCap, Context, DeviceAttr, LinkLayer, Mtu, PortAttr, PortCounters, PortFaults, PortState,
    PORT_MAX_MTU,
};
pub use cq::{CompletionQueue, WcFlags, WcOpcode, WcStatus, WorkCompletion};
pub use error::{errno, Result, VerbsError};
pub use mr::{AccessFlags, MemoryRegion};
pub use pd::ProtectionDomain;
pub use qp::{
    rc_transition, AhAttr, QpAttr, QpAttrMask, QpCap, QpInitAttr, QpState, QpStatus, QpType,
    QueuePair,
};
pub use rnic_device::{DmaBuffer, IrqWait};
pub use wr::{AtomicOp, AtomicWr, RdmaInfo, RecvWr, SendFlags, SendWr, Sge, WrOpcode};

/// Most entries of the NIC's MR table the host manages: the key's index
/// field (bits 15:8) is 8 bits wide, so 256 at most. A build reports its
/// table size in the ID block (`id.mrs`); the verbs layer uses the smaller
/// of the two ([`DeviceAttr::max_mr`]) and refuses a registration beyond it
/// with [`VerbsError::MrTableFull`]. A build older than that register
/// reads 0 there: then all `MAX_MR` are tried and such a build refuses an
/// index beyond its table itself ([`rnic_driver::DriverError::Refused`]).
pub const MAX_MR: u32 = 256;

/// Protection-domain numbers (16-bit `pd` fields, 0 never used).
pub const MAX_PD: u32 = 65535;

/// Scatter/gather entries per work request.
pub const MAX_SGE: u32 = 1;

/// The largest `max_rd_atomic` (RDMA READ and atomic requests a QP may
/// have outstanding as the requester) on a build that issues READ
/// (`id.caps` bit 8, `READ_EN`); 0 on any other. The NIC holds each QP to
/// its own `max_rd_atomic` (a READ or atomic beyond it waits), and its READ
/// table holds this many for all QPs together (beyond them, one waits
/// too). A READ or atomic posted on a QP whose `max_rd_atomic` is 0 is
/// refused (EINVAL).
pub const MAX_RD_ATOMIC: u8 = 4;

/// The largest `max_dest_rd_atomic` (incoming RDMA READ and atomic
/// requests a QP holds at once) on a build that serves READ (`id.caps`
/// bit 7, `READ_EN`); 0 on any other. Atomics (on an ATOMIC_EN build,
/// `id.caps` bit 9) share these resources, as in IB. A new request beyond
/// the QP's own `max_dest_rd_atomic` is NAKed with invalid request, as
/// rxe does (`port.rx_rd_over`); the NIC's READ responder also holds this
/// many for all QPs together, and more wait in the receive path.
pub const MAX_DEST_RD_ATOMIC: u8 = 4;

/// `id.caps` bit 7: the build serves RDMA READ requests (as responder).
pub(crate) fn serves_read(caps: u32) -> bool {
    caps & (1 << 7) != 0
}

/// The build issues RDMA READ as a requester (`id.caps` bit 8).
pub(crate) fn issues_read(caps: u32) -> bool {
    caps & (1 << 8) != 0
}

/// `id.caps` bit 9: the build executes atomics (CMP_AND_SWP,
/// FETCH_AND_ADD, 8 bytes) as a responder (an ATOMIC_EN build). No build
/// issues them as a requester yet.
pub(crate) fn serves_atomic(caps: u32) -> bool {
    caps & (1 << 9) != 0
}

/// Largest message (IB's 2^31 bytes).
pub const MAX_MSG_SIZE: u32 = 1 << 31;
