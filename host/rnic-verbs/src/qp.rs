//! Queue pairs: creation, the IB state machine, posting work requests.

use std::cell::Cell;
use std::net::Ipv4Addr;
use std::rc::Rc;

use bitflags::bitflags;
use rnic_device::Device;
use rnic_driver::{
    DriverError, RecvQueue, RecvWqe, SendQueue, SendWqe, MAX_RING_ENTRIES, MIN_RING_ENTRIES,
    WQE_FLAG_FENCE, WQE_FLAG_SIGNALED, WQE_FLAG_SOLICITED,
};

use crate::context::{fmt_mac, mac_to_regs, Context, Mtu, Shared, PORT_MAX_MTU};
use crate::cq::{CompletionQueue, CqInner};
use crate::error::{Result, VerbsError};
use crate::mr::AccessFlags;
use crate::pd::{PdInner, ProtectionDomain};
use crate::wr::{AtomicOp, AtomicWr, RecvWr, SendFlags, SendWr, WrOpcode};
use crate::{MAX_MSG_SIZE, MAX_RD_ATOMIC, MAX_SGE};

/// QP states (`enum ibv_qp_state`, the values of `qp_attr.state` and
/// `qp_status.state`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[repr(u8)]
pub enum QpState {
    #[default]
    Reset = 0,
    Init = 1,
    Rtr = 2,
    Rts = 3,
    Sqd = 4,
    Sqe = 5,
    Err = 6,
}

impl QpState {
    pub fn from_raw(v: u8) -> Option<Self> {
        Some(match v {
            0 => Self::Reset,
            1 => Self::Init,
            2 => Self::Rtr,
            3 => Self::Rts,
            4 => Self::Sqd,
            5 => Self::Sqe,
            6 => Self::Err,
            _ => return None,
        })
    }
}

/// QP transport type (`enum ibv_qp_type`). Only RC is implemented.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum QpType {
    #[default]
    Rc,
    Uc,
    Ud,
    /// rnic extension: the multipath transport. Reliable and connected like
    /// RC, brought up with the same attributes, but its packets are sprayed
    /// over `2^ah_attr.spray_log` paths, each WRITE packet carries its own
    /// RETH and is placed on arrival, and the responder keeps a receive
    /// bitmap; completions still come in posting order. WRITE and
    /// WRITE_WITH_IMM only (no SEND).
    Mp,
}

/// Queue sizes (`ibv_qp_cap`). On creation the NIC rounds the work-request
/// counts up to powers of two; [`QueuePair::cap`] reports what was made.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct QpCap {
    pub max_send_wr: u32,
    /// 0: no receive queue (a QP that only sends, or only receives RDMA
    /// WRITEs without immediate).
    pub max_recv_wr: u32,
    /// At most 1.
    pub max_send_sge: u32,
    /// At most 1.
    pub max_recv_sge: u32,
}

/// `ibv_qp_init_attr`.
pub struct QpInitAttr<'a, D: Device> {
    /// Where send completions go (the send queue's CQ, `q_cqn`).
    pub send_cq: &'a CompletionQueue<D>,
    /// Where receive completions go (`qp_pd.rcq`).
    pub recv_cq: &'a CompletionQueue<D>,
    pub cap: QpCap,
    pub qp_type: QpType,
    /// Every send WQE is signaled, whatever its `send_flags`.
    pub sq_sig_all: bool,
}

/// Address vector of the remote end (`ibv_ah_attr`, reduced to what a
/// RoCEv2 frame needs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AhAttr {
    /// Destination MAC (the peer's, or the next hop's).
    pub dmac: [u8; 6],
    /// Destination IPv4 address.
    pub dip: Ipv4Addr,
    /// UDP source port: the flow's ECMP entropy (RoCEv2 uses 0xC000..).
    pub udp_sport: u16,
    /// rnic extension: spread the requester's packets over `2^spray_log`
    /// source ports from `udp_sport` on (0..=6; 0: one flow, as RC does), so
    /// an ECMP fabric sprays them over its paths.
    pub spray_log: u8,
    /// rnic extension, mp QPs: the window W in PSNs (packets in flight and
    /// the span of the receive bitmap), a power of two from 8 up to the
    /// build's `mp_window`; 0: the build's full window.
    pub mp_window: u32,
}

impl Default for AhAttr {
    fn default() -> Self {
        Self {
            dmac: [0; 6],
            dip: Ipv4Addr::UNSPECIFIED,
            udp_sport: 0xC000,
            spray_log: 0,
            mp_window: 0,
        }
    }
}

bitflags! {
    /// Which [`QpAttr`] fields a modify uses (`enum ibv_qp_attr_mask`, same
    /// bit values).
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
    pub struct QpAttrMask: u32 {
        const STATE = 1 << 0;
        const CUR_STATE = 1 << 1;
        const EN_SQD_ASYNC_NOTIFY = 1 << 2;
        const ACCESS_FLAGS = 1 << 3;
        const PKEY_INDEX = 1 << 4;
        const PORT = 1 << 5;
        const QKEY = 1 << 6;
        const AV = 1 << 7;
        const PATH_MTU = 1 << 8;
        const TIMEOUT = 1 << 9;
        const RETRY_CNT = 1 << 10;
        const RNR_RETRY = 1 << 11;
        const RQ_PSN = 1 << 12;
        const MAX_QP_RD_ATOMIC = 1 << 13;
        const ALT_PATH = 1 << 14;
        const MIN_RNR_TIMER = 1 << 15;
        const SQ_PSN = 1 << 16;
        const MAX_DEST_RD_ATOMIC = 1 << 17;
        const PATH_MIG_STATE = 1 << 18;
        const CAP = 1 << 19;
        const DEST_QPN = 1 << 20;
    }
}

/// QP attributes (`ibv_qp_attr`, the fields an RC QP over RoCEv2 uses).
/// Fields not named in the modify's [`QpAttrMask`] are ignored.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct QpAttr {
    pub qp_state: QpState,
    pub cur_qp_state: QpState,
    pub path_mtu: Mtu,
    /// Remote access allowed to this QP's responder: the NIC checks
    /// REMOTE_WRITE (RDMA WRITE requests), REMOTE_READ (RDMA READ
    /// requests, in builds with the READ responder) and REMOTE_ATOMIC
    /// (atomic requests; taken only on a build that executes atomics,
    /// `id.caps` bit 9, and refused on any other).
    pub qp_access_flags: AccessFlags,
    /// Must be 0 (one P_Key, 0xFFFF).
    pub pkey_index: u16,
    /// Must be 1.
    pub port_num: u8,
    /// Remote QP number (24 bits).
    pub dest_qp_num: u32,
    /// First PSN the responder expects (24 bits).
    pub rq_psn: u32,
    /// First PSN the requester sends (24 bits).
    pub sq_psn: u32,
    pub ah_attr: AhAttr,
    /// Incoming RDMA READ and atomic resources (atomics share the READ
    /// responder's); at most [`crate::MAX_DEST_RD_ATOMIC`] on a build that
    /// serves READ, else 0.
    pub max_dest_rd_atomic: u8,
    /// Outstanding RDMA READ requests; at most [`MAX_RD_ATOMIC`] on a build
    /// that issues READ, else 0 (the requester issues no atomics yet).
    pub max_rd_atomic: u8,
    /// RNR NAK timer code, 0..=31.
    pub min_rnr_timer: u8,
    /// Local ACK timeout exponent, 0..=31.
    pub timeout: u8,
    /// 0..=7.
    pub retry_cnt: u8,
    /// 0..=7 (7 = infinite).
    pub rnr_retry: u8,
}

/// `(required, optional)` attributes of an RC transition, as the IB spec
/// and the kernel's `ib_modify_qp_is_ok` table define them; `None` for a
/// transition that does not exist. Any state may go to RESET and to ERR
/// with no attribute but STATE.
pub fn rc_transition(from: QpState, to: QpState) -> Option<(QpAttrMask, QpAttrMask)> {
    use QpState::*;
    type M = QpAttrMask;
    let none = M::empty();
    Some(match (from, to) {
        (_, Reset) | (_, Err) => (none, none),
        (Reset, Init) => (M::PKEY_INDEX | M::PORT | M::ACCESS_FLAGS, none),
        (Init, Init) => (none, M::PKEY_INDEX | M::PORT | M::ACCESS_FLAGS),
        (Init, Rtr) => (
            M::AV
                | M::PATH_MTU
                | M::DEST_QPN
                | M::RQ_PSN
                | M::MAX_DEST_RD_ATOMIC
                | M::MIN_RNR_TIMER,
            M::ALT_PATH | M::ACCESS_FLAGS | M::PKEY_INDEX,
        ),
        (Rtr, Rts) => (
            M::SQ_PSN | M::TIMEOUT | M::RETRY_CNT | M::RNR_RETRY | M::MAX_QP_RD_ATOMIC,
            M::CUR_STATE | M::ALT_PATH | M::ACCESS_FLAGS | M::MIN_RNR_TIMER | M::PATH_MIG_STATE,
        ),
        (Rts, Rts) | (Sqd, Rts) => (
            none,
            M::CUR_STATE | M::ACCESS_FLAGS | M::ALT_PATH | M::PATH_MIG_STATE | M::MIN_RNR_TIMER,
        ),
        (Rts, Sqd) => (none, M::EN_SQD_ASYNC_NOTIFY),
        _ => return None,
    })
}

/// Attributes the IB state machine allows but this NIC does not implement.
const UNSUPPORTED_ATTRS: QpAttrMask = QpAttrMask::ALT_PATH
    .union(QpAttrMask::PATH_MIG_STATE)
    .union(QpAttrMask::EN_SQD_ASYNC_NOTIFY);

const QP_CMD_MODIFY: u8 = 1;
/// Most source ports a QP sprays over: 2^6.
pub const MAX_SPRAY_LOG: u8 = 6;
const QP_CMD_SET_STATE: u8 = 2;
const PSN_MASK: u32 = 0x00ff_ffff;

/// A reliable-connected queue pair (`ibv_qp`). Its state lives in a slot
/// of the NIC, the queue manager's index of its send queue, which every
/// QP register names; its number on the wire (and in its completions) is
/// the one the NIC's QP directory binds to that slot, or the slot itself
/// in a build without a directory. Dropping it moves it to RESET and
/// releases its number and its queues.
pub struct QueuePair<D: Device> {
    ctx: Rc<Shared<D>>,
    pd: Rc<PdInner<D>>,
    send_cq: Rc<CqInner<D>>,
    recv_cq: Rc<CqInner<D>>,
    /// The on-chip slot (the send queue's number); for a cached QP the
    /// slot it was created in (the NIC moves it).
    slot: u16,
    /// The NIC caches the QP: its state is in the host's context table and
    /// in whichever slot the NIC fetches it into (`Nic::set_qp_cache`).
    cached: bool,
    /// The QP number on the wire and in CQEs.
    qp_num: u32,
    /// `None` once destroyed.
    sq: Option<SendQueue>,
    rq: Option<RecvQueue>,
    cap: QpCap,
    sq_sig_all: bool,
    qp_type: QpType,
    /// The state as last seen (the NIC may have moved on to ERR).
    state: Cell<QpState>,
    /// Every attribute set so far (what the staged registers get).
    attr: QpAttr,
}

impl<D: Device> Context<D> {
    /// `ibv_create_qp`: an RC QP in RESET.
    pub fn create_qp(
        &self,
        pd: &ProtectionDomain<D>,
        init: &QpInitAttr<'_, D>,
    ) -> Result<QueuePair<D>> {
        pd.check_ctx(self)?;
        init.send_cq.check_ctx(self)?;
        init.recv_cq.check_ctx(self)?;
        if !matches!(init.qp_type, QpType::Rc | QpType::Mp) {
            return Err(VerbsError::Unsupported(format!(
                "QP type {:?} (RC and the mp extension only)",
                init.qp_type
            )));
        }
        // the build's transports (`id.caps` bit 5 mp, bit 6 rc)
        let caps = self.shared.nic.id().caps;
        match init.qp_type {
            QpType::Rc if caps & (1 << 6) == 0 => {
                return Err(VerbsError::Unsupported(
                    "an RC QP: this NIC was built with the mp transport only (rnic build --transports mp)"
                        .into(),
                ))
            }
            QpType::Mp if caps & (1 << 5) == 0 => {
                return Err(VerbsError::Unsupported(
                    "an mp QP: this NIC has no mp transport".into(),
                ))
            }
            _ => {}
        }
        let c = init.cap;
        if c.max_send_sge > MAX_SGE || c.max_recv_sge > MAX_SGE {
            return Err(VerbsError::InvalidArgument(format!(
                "max_send_sge {} / max_recv_sge {}: at most {MAX_SGE}",
                c.max_send_sge, c.max_recv_sge
            )));
        }
        if c.max_send_wr > MAX_RING_ENTRIES || c.max_recv_wr > MAX_RING_ENTRIES {
            return Err(VerbsError::InvalidArgument(format!(
                "max_send_wr {} / max_recv_wr {}: at most {MAX_RING_ENTRIES}",
                c.max_send_wr, c.max_recv_wr
            )));
        }
        let sq_entries = c.max_send_wr.next_power_of_two().max(MIN_RING_ENTRIES);
        let rq_entries = match c.max_recv_wr {
            0 => 0,
            n => n.next_power_of_two().max(MIN_RING_ENTRIES),
        };
        let nic = &self.shared.nic;
        if nic.qp_cache_first().is_some() {
            return self.create_cached_qp(pd, init, sq_entries, rq_entries);
        }
        let sq = init
            .send_cq
            .inner
            .with(|cq| Ok(nic.create_sq(sq_entries, cq)?))?;
        let slot = sq.qn();
        let qp_num = match nic.bind_qp_num(slot) {
            Ok(n) => n,
            Err(e) => {
                let _ = nic.destroy_sq(sq);
                return Err(e.into());
            }
        };
        let rq = if rq_entries > 0 {
            match init
                .recv_cq
                .inner
                .with(|cq| Ok(nic.create_rq(slot, rq_entries, cq)?))
            {
                Ok(rq) => Some(rq),
                Err(e) => {
                    let _ = nic.unbind_qp_num(slot);
                    let _ = nic.destroy_sq(sq);
                    return Err(e);
                }
            }
        } else {
            None
        };
        self.finish_qp(pd, init, slot, false, qp_num, sq, rq)
    }

    /// `create_qp` once the NIC caches QPs: the QP gets a number below the
    /// context table's end and no slot of its own; its queues are set up
    /// in the slot the NIC holds it in meanwhile.
    fn create_cached_qp(
        &self,
        pd: &ProtectionDomain<D>,
        init: &QpInitAttr<'_, D>,
        sq_entries: u32,
        rq_entries: u32,
    ) -> Result<QueuePair<D>> {
        let nic = &self.shared.nic;
        let qp_num = nic.alloc_cached_qp_num()?;
        let made = nic.with_qp_held(qp_num, |slot| -> Result<_> {
            let sq = init
                .send_cq
                .inner
                .with(|cq| Ok(nic.create_cached_sq(qp_num, slot, sq_entries, cq)?))?;
            if rq_entries == 0 {
                return Ok((slot, sq, None));
            }
            match init
                .recv_cq
                .inner
                .with(|cq| Ok(nic.create_cached_rq(qp_num, slot, rq_entries, cq)?))
            {
                Ok(rq) => Ok((slot, sq, Some(rq))),
                Err(e) => {
                    let _ = nic.destroy_sq_in(slot, sq);
                    Err(e)
                }
            }
        });
        match made {
            Ok((slot, sq, rq)) => self.finish_qp(pd, init, slot, true, qp_num, sq, rq),
            Err(e) => {
                nic.free_cached_qp_num(qp_num);
                Err(e)
            }
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn finish_qp(
        &self,
        pd: &ProtectionDomain<D>,
        init: &QpInitAttr<'_, D>,
        slot: u16,
        cached: bool,
        qp_num: u32,
        sq: SendQueue,
        rq: Option<RecvQueue>,
    ) -> Result<QueuePair<D>> {
        let sq_entries = sq.entries();
        let rq_entries = rq.as_ref().map_or(0, RecvQueue::entries);
        let qp = QueuePair {
            ctx: self.shared.clone(),
            pd: pd.inner.clone(),
            send_cq: init.send_cq.inner.clone(),
            recv_cq: init.recv_cq.inner.clone(),
            slot,
            cached,
            qp_num,
            sq: Some(sq),
            rq,
            cap: QpCap {
                max_send_wr: sq_entries,
                max_recv_wr: rq_entries,
                max_send_sge: MAX_SGE,
                max_recv_sge: if rq_entries > 0 { MAX_SGE } else { 0 },
            },
            sq_sig_all: init.sq_sig_all,
            qp_type: init.qp_type,
            state: Cell::new(QpState::Reset),
            attr: QpAttr {
                path_mtu: PORT_MAX_MTU,
                port_num: 1,
                ..QpAttr::default()
            },
        };
        // Load the whole context once, in RESET: whatever an earlier QP of
        // this slot left in the NIC is replaced (pd, receive CQ and ring).
        // On failure the drop unbinds the number and releases the queues.
        let attr = qp.attr;
        qp.program(QpState::Reset, &attr, QP_CMD_MODIFY)?;
        Ok(qp)
    }
}

impl<D: Device> QueuePair<D> {
    /// The QP number: what the peer puts in its packets' DestQP (24
    /// bits) and what this QP's completions name (`wc.qp_num`). The slot
    /// itself in a build without a QP directory.
    pub fn qp_num(&self) -> u32 {
        self.qp_num
    }

    /// The on-chip slot that holds the QP's state (its send queue's
    /// number): registers (`qp_sel`, `rq_db`, the record window) name it.
    pub fn slot(&self) -> u16 {
        self.slot
    }

    /// Queue sizes actually allocated.
    pub fn cap(&self) -> QpCap {
        self.cap
    }

    pub fn pd_num(&self) -> u16 {
        self.pd.pdn
    }

    pub fn sq_sig_all(&self) -> bool {
        self.sq_sig_all
    }

    /// The transport: [`QpType::Rc`] or [`QpType::Mp`].
    pub fn qp_type(&self) -> QpType {
        self.qp_type
    }

    /// The largest `max_rd_atomic` and `max_dest_rd_atomic` this QP's NIC
    /// takes (the device's `max_qp_init_rd_atom` and `max_qp_rd_atom`; 0
    /// on a build without READ).
    pub fn rd_atomic_limits(&self) -> (u8, u8) {
        let caps = self.ctx.nic.id().caps;
        (
            if crate::issues_read(caps) {
                MAX_RD_ATOMIC
            } else {
                0
            },
            if crate::serves_read(caps) {
                crate::MAX_DEST_RD_ATOMIC
            } else {
                0
            },
        )
    }

    /// The CQ numbers of the send and the receive completions.
    pub fn cq_nums(&self) -> (u16, u16) {
        (self.send_cq.cqn, self.recv_cq.cqn)
    }

    /// The state last seen, without asking the NIC.
    pub fn cached_state(&self) -> QpState {
        self.state.get()
    }

    /// Send WQEs posted and not yet retired by a completion.
    pub fn send_outstanding(&self) -> u32 {
        self.sq.as_ref().map_or(0, SendQueue::outstanding)
    }

    /// Receive WQEs posted and not yet retired by a completion.
    pub fn recv_outstanding(&self) -> u32 {
        self.rq.as_ref().map_or(0, RecvQueue::outstanding)
    }

    /// Runs `f` with the slot that holds the QP's state: its own, or for
    /// a cached QP the one the NIC fetches it into and holds it in until
    /// `f` returns.
    fn in_slot<T>(&self, f: impl FnOnce(u16) -> Result<T>) -> Result<T> {
        if self.cached {
            self.ctx.nic.with_qp_held(self.qp_num, f)
        } else {
            f(self.slot)
        }
    }

    /// The NIC's view of the QP: state, last NAK syndrome, PSNs now.
    pub fn status(&self) -> Result<QpStatus> {
        let (raw, last_syndrome, sq_psn_now, rq_psn_now) = self.in_slot(|slot| {
            let io = self.ctx.nic.io();
            let qp = io.csr().qp();
            qp.qp_sel().try_write(|r| r.set_qpn(slot))?;
            let st = qp.qp_status().try_read()?;
            Ok((
                st.state(),
                st.last_syndrome(),
                qp.qp_sq_psn_now().try_read()?.psn(),
                qp.qp_rq_psn_now().try_read()?.psn(),
            ))
        })?;
        let state = QpState::from_raw(raw).ok_or(VerbsError::BadHwState {
            qpn: self.qp_num(),
            raw,
        })?;
        self.state.set(state);
        Ok(QpStatus {
            state,
            last_syndrome,
            sq_psn_now,
            rq_psn_now,
        })
    }

    /// The QP state as the NIC sees it now (the transport moves a QP to
    /// ERR on its own, e.g. when retries are exhausted).
    pub fn state(&self) -> Result<QpState> {
        Ok(self.status()?.state)
    }

    /// `ibv_query_qp`: the attributes set so far, with `qp_state` (and
    /// `cur_qp_state`) read from the NIC.
    pub fn query_qp(&self) -> Result<QpAttr> {
        let state = self.state()?;
        Ok(QpAttr {
            qp_state: state,
            cur_qp_state: state,
            ..self.attr
        })
    }

    /// `ibv_modify_qp`: moves the QP along the IB state machine (RESET ->
    /// INIT -> RTR -> RTS, any -> ERR, any -> RESET), checking that exactly
    /// the required attributes and no others than the optional ones are in
    /// `mask`. Without `STATE` in `mask` the QP stays in its state and only
    /// the attributes change (where that transition allows them). Nothing
    /// changes when an error is returned before the NIC is programmed.
    pub fn modify(&mut self, attr: &QpAttr, mask: QpAttrMask) -> Result<()> {
        let qpn = self.qp_num();
        let cur = self.state()?;
        let to = if mask.contains(QpAttrMask::STATE) {
            attr.qp_state
        } else {
            cur
        };
        if mask.contains(QpAttrMask::CUR_STATE) && attr.cur_qp_state != cur {
            return Err(VerbsError::CurStateMismatch {
                qpn,
                given: attr.cur_qp_state,
                actual: cur,
            });
        }
        let (req, opt) =
            rc_transition(cur, to).ok_or(VerbsError::InvalidTransition { qpn, from: cur, to })?;
        let missing = req.difference(mask);
        if !missing.is_empty() {
            return Err(VerbsError::MissingAttributes {
                qpn,
                from: cur,
                to,
                missing,
            });
        }
        let extra = mask.difference(req | opt | QpAttrMask::STATE);
        if !extra.is_empty() {
            return Err(VerbsError::UnexpectedAttributes {
                qpn,
                from: cur,
                to,
                extra,
            });
        }
        if to == QpState::Sqd || to == QpState::Sqe {
            return Err(VerbsError::Unsupported(format!("QP state {to:?}")));
        }
        let unsupported = mask & UNSUPPORTED_ATTRS;
        if !unsupported.is_empty() {
            return Err(VerbsError::Unsupported(format!(
                "QP attributes {unsupported:?}"
            )));
        }
        let new = self.merged(attr, mask)?;

        // RESET and ERR only change the state; every other transition
        // applies the whole staged context (PSNs are loaded by the NIC only
        // on entering RTR / RTS, so re-staging them later is harmless).
        let cmd = if matches!(to, QpState::Reset | QpState::Err) {
            QP_CMD_SET_STATE
        } else {
            QP_CMD_MODIFY
        };
        self.program(to, &new, cmd)?;
        let now = self.state()?;
        if now != to {
            return Err(VerbsError::ModifyNotApplied {
                qpn,
                wanted: to,
                actual: now,
            });
        }
        self.attr = new;
        if to == QpState::Reset {
            // Work requests are discarded without completions; both rings
            // start over at index 0, as the NIC's do.
            if let Some(sq) = self.sq.as_mut() {
                self.ctx.nic.reset_sq(sq)?;
            }
            if let Some(rq) = self.rq.as_mut() {
                self.ctx.nic.reset_rq(rq);
            }
        }
        Ok(())
    }

    /// Validates the masked attributes and merges them into the current
    /// ones.
    fn merged(&self, attr: &QpAttr, mask: QpAttrMask) -> Result<QpAttr> {
        type M = QpAttrMask;
        let qpn = self.qp_num();
        let bad =
            |attr: &'static str, reason: String| VerbsError::InvalidAttribute { qpn, attr, reason };
        let mut n = self.attr;
        if mask.contains(M::ACCESS_FLAGS) {
            if attr.qp_access_flags.bits() & !AccessFlags::all().bits() != 0 {
                return Err(bad(
                    "qp_access_flags",
                    format!("unknown bits in {:#x}", attr.qp_access_flags.bits()),
                ));
            }
            if attr.qp_access_flags.contains(AccessFlags::REMOTE_ATOMIC)
                && !crate::serves_atomic(self.ctx.nic.id().caps)
            {
                return Err(bad(
                    "qp_access_flags",
                    "REMOTE_ATOMIC: this NIC executes no atomics (id.caps bit 9 clear: \
                     not an ATOMIC_EN build)"
                        .into(),
                ));
            }
            n.qp_access_flags = attr.qp_access_flags;
        }
        if mask.contains(M::PKEY_INDEX) {
            if attr.pkey_index != 0 {
                return Err(bad(
                    "pkey_index",
                    format!("{}: the P_Key table has one entry", attr.pkey_index),
                ));
            }
            n.pkey_index = attr.pkey_index;
        }
        if mask.contains(M::PORT) {
            if attr.port_num != 1 {
                return Err(bad(
                    "port_num",
                    format!("{}: the NIC has port 1 only", attr.port_num),
                ));
            }
            n.port_num = attr.port_num;
        }
        if mask.contains(M::PATH_MTU) {
            if attr.path_mtu > PORT_MAX_MTU {
                return Err(bad(
                    "path_mtu",
                    format!("{:?} is above the port's {PORT_MAX_MTU:?}", attr.path_mtu),
                ));
            }
            n.path_mtu = attr.path_mtu;
        }
        // QP numbers and PSNs are 24-bit fields of the BTH
        let fits24 = |field: &'static str, v: u32| {
            if v > PSN_MASK {
                return Err(bad(field, format!("{v:#x} does not fit 24 bits")));
            }
            Ok(v)
        };
        if mask.contains(M::DEST_QPN) {
            n.dest_qp_num = fits24("dest_qp_num", attr.dest_qp_num)?;
        }
        if mask.contains(M::RQ_PSN) {
            n.rq_psn = fits24("rq_psn", attr.rq_psn)?;
        }
        if mask.contains(M::SQ_PSN) {
            n.sq_psn = fits24("sq_psn", attr.sq_psn)?;
        }
        if mask.contains(M::AV) {
            let ah = attr.ah_attr;
            if ah.dmac[0] & 1 != 0 || ah.dmac == [0; 6] {
                return Err(bad(
                    "ah_attr.dmac",
                    format!("{} is not a unicast MAC", fmt_mac(ah.dmac)),
                ));
            }
            if ah.dip.is_unspecified() || ah.dip.is_broadcast() || ah.dip.is_multicast() {
                return Err(bad(
                    "ah_attr.dip",
                    format!("{} is not a unicast address", ah.dip),
                ));
            }
            if ah.spray_log > MAX_SPRAY_LOG {
                return Err(bad(
                    "ah_attr.spray_log",
                    format!(
                        "{}: at most {MAX_SPRAY_LOG} (64 source ports)",
                        ah.spray_log
                    ),
                ));
            }
            if ah.mp_window != 0 {
                let max = self.ctx.nic.id().mp_window;
                let ok = ah.mp_window.is_power_of_two()
                    && ah.mp_window >= 8
                    && ah.mp_window <= max
                    && max / ah.mp_window <= 128;
                if !ok {
                    return Err(bad(
                        "ah_attr.mp_window",
                        format!(
                            "{}: a power of two from 8 to this build's window {max}",
                            ah.mp_window
                        ),
                    ));
                }
            }
            n.ah_attr = ah;
        }
        if mask.contains(M::MAX_DEST_RD_ATOMIC) {
            let max = if crate::serves_read(self.ctx.nic.id().caps) {
                crate::MAX_DEST_RD_ATOMIC
            } else {
                0
            };
            if attr.max_dest_rd_atomic > max {
                return Err(bad(
                    "max_dest_rd_atomic",
                    format!(
                        "{}: this NIC serves {max} incoming RDMA READs and atomics per QP \
                         (id.caps bit 7: a READ_EN build serves {})",
                        attr.max_dest_rd_atomic,
                        crate::MAX_DEST_RD_ATOMIC
                    ),
                ));
            }
            n.max_dest_rd_atomic = attr.max_dest_rd_atomic;
        }
        if mask.contains(M::MAX_QP_RD_ATOMIC) {
            let max = if crate::issues_read(self.ctx.nic.id().caps) {
                MAX_RD_ATOMIC
            } else {
                0
            };
            if attr.max_rd_atomic > max {
                return Err(bad(
                    "max_rd_atomic",
                    format!(
                        "{}: this NIC issues {max} RDMA READs and atomics per QP at once (id.caps bit 8: a READ_EN build issues {MAX_RD_ATOMIC})",
                        attr.max_rd_atomic
                    ),
                ));
            }
            n.max_rd_atomic = attr.max_rd_atomic;
        }
        let field = |name: &'static str, v: u8, max: u8| {
            if v > max {
                Err(bad(name, format!("{v} is above {max}")))
            } else {
                Ok(v)
            }
        };
        if mask.contains(M::MIN_RNR_TIMER) {
            n.min_rnr_timer = field("min_rnr_timer", attr.min_rnr_timer, 31)?;
        }
        if mask.contains(M::TIMEOUT) {
            n.timeout = field("timeout", attr.timeout, 31)?;
        }
        if mask.contains(M::RETRY_CNT) {
            n.retry_cnt = field("retry_cnt", attr.retry_cnt, 7)?;
        }
        if mask.contains(M::RNR_RETRY) {
            n.rnr_retry = field("rnr_retry", attr.rnr_retry, 7)?;
        }
        Ok(n)
    }

    /// Stages the whole context through the QP window and issues `cmd`.
    fn program(&self, state: QpState, a: &QpAttr, cmd: u8) -> Result<()> {
        self.in_slot(|slot| self.program_in(slot, state, a, cmd))?;
        self.state.set(state);
        Ok(())
    }

    fn program_in(&self, slot: u16, state: QpState, a: &QpAttr, cmd: u8) -> Result<()> {
        let (mac_hi, mac_lo) = mac_to_regs(a.ah_attr.dmac);
        let sport = a.ah_attr.udp_sport;
        let dip = u32::from(a.ah_attr.dip);
        let pd = self.pd.pdn;
        let rcq = self.recv_cq.cqn;
        let (rq_base, rq_size) = self
            .rq
            .as_ref()
            .map_or((0, 0), |rq| (rq.bus_addr(), rq.entries()));
        let remote_write = a.qp_access_flags.contains(AccessFlags::REMOTE_WRITE);
        let remote_read = a.qp_access_flags.contains(AccessFlags::REMOTE_READ);
        let remote_atomic = a.qp_access_flags.contains(AccessFlags::REMOTE_ATOMIC);
        let mp = self.qp_type == QpType::Mp;
        let mp_wshift = match a.ah_attr.mp_window {
            0 => 0,
            w => (self.ctx.nic.id().mp_window / w).trailing_zeros() as u8,
        };
        self.ctx.command(|io| {
            let qp = io.csr().qp();
            qp.qp_sel().try_write(|r| r.set_qpn(slot))?;
            qp.qp_attr().try_write(|r| {
                r.set_state(state as u8);
                r.set_pmtu(a.path_mtu as u8);
                r.set_remote_write(remote_write);
                r.set_remote_read(remote_read);
                r.set_remote_atomic(remote_atomic);
                r.set_spray_log(a.ah_attr.spray_log);
                r.set_mp(mp);
                r.set_mp_window_shift(mp_wshift);
            })?;
            if cmd == QP_CMD_MODIFY {
                qp.qp_dest().try_write(|r| r.set_qpn(a.dest_qp_num))?;
                qp.qp_sq_psn().try_write(|r| r.set_psn(a.sq_psn))?;
                qp.qp_rq_psn().try_write(|r| r.set_psn(a.rq_psn))?;
                qp.qp_dmac_lo().try_write(|r| r.set_addr(mac_lo))?;
                qp.qp_dmac_hi().try_write(|r| {
                    r.set_addr(mac_hi);
                    r.set_udp_sport(sport);
                })?;
                qp.qp_dip().try_write(|r| r.set_addr(dip))?;
                qp.qp_pd().try_write(|r| {
                    r.set_pd(pd);
                    r.set_rcq(rcq);
                })?;
                qp.qp_rq_base_lo()
                    .try_write(|r| r.set_addr(rq_base as u32))?;
                qp.qp_rq_base_hi()
                    .try_write(|r| r.set_addr((rq_base >> 32) as u32))?;
                qp.qp_rq_size().try_write(|r| r.set_entries(rq_size))?;
                qp.qp_retry().try_write(|r| {
                    r.set_timeout(a.timeout);
                    r.set_retry_cnt(a.retry_cnt);
                    r.set_rnr_retry(a.rnr_retry);
                    r.set_min_rnr_timer(a.min_rnr_timer);
                    r.set_max_rd_atomic(a.max_rd_atomic);
                    r.set_max_dest_rd_atomic(a.max_dest_rd_atomic);
                })?;
            }
            qp.qp_cmd().try_write(|r| r.set_op(cmd))
        })
    }

    fn build_send_wqe(&self, wr: &SendWr<'_>) -> Result<SendWqe> {
        let qpn = self.qp_num();
        let invalid = |reason| VerbsError::InvalidWr { qpn, reason };
        if wr.sg_list.len() > MAX_SGE as usize {
            return Err(VerbsError::TooManySge {
                qpn,
                given: wr.sg_list.len(),
                max: MAX_SGE,
            });
        }
        // one opcode enum with the driver: its local copy is no verbs work request
        if wr.opcode == WrOpcode::LocalDmaCopy {
            return Err(invalid("LOCAL_DMA_COPY is not a verbs opcode"));
        }
        // (their operands have no place in a SendWr)
        if wr.opcode.is_atomic() {
            return Err(invalid(
                "an atomic is posted with post_atomic (an AtomicWr carries its operands)",
            ));
        }
        // (as OCP MRC: READ is not carried by mp)
        if self.qp_type == QpType::Mp && wr.opcode == WrOpcode::RdmaRead {
            return Err(VerbsError::Unsupported(
                "RDMA_READ on an mp QP: mp carries WRITE and WRITE_WITH_IMM only".into(),
            ));
        }
        if self.qp_type == QpType::Mp && !wr.opcode.is_write() {
            return Err(invalid("an mp QP carries WRITE and WRITE_WITH_IMM only"));
        }
        // the build's verb set (`rnic build --verbs`): bit 3 SEND, 4
        // SEND_WITH_IMM, 5 RDMA_READ
        let verb_bit = match wr.opcode {
            WrOpcode::Send => Some((3, "SEND/RECV", "write")),
            WrOpcode::SendWithImm => Some((4, "SEND/RECV", "write")),
            WrOpcode::RdmaRead => Some((5, "RDMA READ", "write,send,read")),
            _ => None,
        };
        if let Some((bit, what, flag)) = verb_bit {
            let verbs = self.ctx.nic.id().verbs;
            if verbs & (1 << bit) == 0 {
                return Err(VerbsError::Unsupported(format!(
                    "{:?}: this NIC was built without {what} (verbs register {verbs:#x}; rnic build --verbs {flag})",
                    wr.opcode
                )));
            }
        }
        if wr.opcode == WrOpcode::RdmaRead && self.attr.max_rd_atomic == 0 {
            return Err(invalid(
                "RDMA_READ on a QP whose max_rd_atomic is 0 (set it on the move to RTS)",
            ));
        }
        let sge = wr.sg_list.first().copied().unwrap_or_default();
        if sge.length > MAX_MSG_SIZE {
            return Err(invalid("message longer than 2^31 bytes"));
        }
        if sge.addr.checked_add(u64::from(sge.length)).is_none() {
            return Err(invalid("local address range wraps around"));
        }
        let (remote_addr, rkey) = match (wr.opcode.is_rdma(), wr.rdma) {
            (true, Some(r)) => {
                if r.remote_addr.checked_add(u64::from(sge.length)).is_none() {
                    return Err(invalid("remote address range wraps around"));
                }
                (r.remote_addr, r.rkey)
            }
            (true, None) => {
                return Err(invalid(
                    "RDMA WRITE or READ without remote address and rkey",
                ))
            }
            (false, Some(_)) => return Err(invalid("SEND with a remote address")),
            (false, None) => (0, 0),
        };
        let imm = match (wr.opcode.has_imm(), wr.imm_data) {
            (true, Some(v)) => v.to_ne_bytes(),
            (true, None) => return Err(invalid("*_WITH_IMM without imm_data")),
            (false, Some(_)) => return Err(invalid("imm_data on an opcode without immediate")),
            (false, None) => [0; 4],
        };
        let f = wr.send_flags;
        if f.bits() & !SendFlags::all().bits() != 0 {
            return Err(invalid("unknown send_flags bits (INLINE is not supported)"));
        }
        let mut flags = 0;
        if self.sq_sig_all || f.contains(SendFlags::SIGNALED) {
            flags |= WQE_FLAG_SIGNALED;
        }
        if f.contains(SendFlags::SOLICITED) {
            flags |= WQE_FLAG_SOLICITED;
        }
        if f.contains(SendFlags::FENCE) {
            flags |= WQE_FLAG_FENCE;
        }
        Ok(SendWqe {
            opcode: wr.opcode as u8,
            flags,
            length: sge.length,
            wr_id: wr.wr_id,
            local_addr: sge.addr,
            remote_addr,
            rkey,
            imm,
            lkey: sge.lkey,
            compare_add: 0,
            swap: 0,
        })
    }

    /// `ibv_post_send` of one work request: writes its WQE and rings the
    /// send doorbell. In RTS, or in ERR (the NIC completes the work request
    /// with `WR_FLUSH_ERR`); the state checked is the one last seen (no MMIO
    /// read per post).
    ///
    /// The lkey and rkey are not checked here: the NIC checks them against
    /// its MR table and completes a bad WQE with an error status.
    pub fn post_send(&mut self, wr: &SendWr<'_>) -> Result<()> {
        self.post_send_list(std::slice::from_ref(wr))
            .map_err(unwrap_post_error)
    }

    /// `ibv_post_send` of a list: WQEs in list order, one doorbell for all.
    /// On a bad work request the ones before it are posted (and the
    /// doorbell rung for them) and [`VerbsError::PostFailed`] names it.
    pub fn post_send_list(&mut self, wrs: &[SendWr<'_>]) -> Result<()> {
        let qpn = self.qp_num();
        let state = self.state.get();
        // As in the IB spec (and rxe, mlx5): a QP in ERR still takes work
        // requests; the NIC completes them with WR_FLUSH_ERR.
        if state != QpState::Rts && state != QpState::Err {
            return Err(VerbsError::WrongState {
                qpn,
                state,
                op: "post_send",
                needed: "RTS or ERR",
            });
        }
        let mut posted = 0;
        let mut failure = None;
        for (index, wr) in wrs.iter().enumerate() {
            let res = self.build_send_wqe(wr).and_then(|wqe| {
                let sq = self.sq.as_mut().ok_or(VerbsError::SendQueueFull(qpn))?;
                self.ctx.nic.post_send_wqe(sq, &wqe).map_err(|e| match e {
                    DriverError::QueueFull(_) => VerbsError::SendQueueFull(qpn),
                    e => e.into(),
                })
            });
            if let Err(e) = res {
                failure = Some(VerbsError::PostFailed {
                    index,
                    source: Box::new(e),
                });
                break;
            }
            posted += 1;
        }
        if posted > 0 {
            if let Some(sq) = self.sq.as_ref() {
                self.ctx.nic.ring_sq(sq)?;
            }
        }
        failure.map_or(Ok(()), Err)
    }

    /// An atomic work request (`ibv_wr_atomic_cmp_swp`,
    /// `ibv_wr_atomic_fetch_add`): writes its WQE and rings the send
    /// doorbell. rc QPs of a build that issues atomics (`id.verbs` bit 6,
    /// `rnic build --verbs ...,atomic`); an mp QP refuses it (EOPNOTSUPP),
    /// as it refuses READ. The local buffer is exactly 8 bytes and the
    /// remote address 8-byte aligned (EINVAL otherwise). Its completion's
    /// opcode is `IBV_WC_COMP_SWAP` or `IBV_WC_FETCH_ADD`, and it comes
    /// only once the original value is in the local buffer.
    pub fn post_atomic(&mut self, wr: &AtomicWr) -> Result<()> {
        let qpn = self.qp_num();
        let state = self.state.get();
        if state != QpState::Rts && state != QpState::Err {
            return Err(VerbsError::WrongState {
                qpn,
                state,
                op: "post_atomic",
                needed: "RTS or ERR",
            });
        }
        let invalid = |reason| VerbsError::InvalidWr { qpn, reason };
        if self.qp_type == QpType::Mp {
            return Err(VerbsError::Unsupported(
                "atomics on an mp QP: mp carries WRITE and WRITE_WITH_IMM only".into(),
            ));
        }
        let verbs = self.ctx.nic.id().verbs;
        if verbs & (1 << 6) == 0 {
            return Err(VerbsError::Unsupported(format!(
                "atomics: this NIC was built without them (verbs register {verbs:#x}, bit 6; \
                 rnic build --verbs write,send,read,atomic)"
            )));
        }
        if self.attr.max_rd_atomic == 0 {
            return Err(invalid(
                "an atomic on a QP whose max_rd_atomic is 0 (set it on the move to RTS)",
            ));
        }
        if wr.sge.length != 8 {
            return Err(invalid("an atomic's local buffer is exactly 8 bytes"));
        }
        if wr.sge.addr.checked_add(8).is_none() {
            return Err(invalid("local address range wraps around"));
        }
        if !wr.remote_addr.is_multiple_of(8) {
            return Err(invalid("an atomic's remote address must be 8-byte aligned"));
        }
        let f = wr.send_flags;
        if f.bits() & !SendFlags::all().bits() != 0 {
            return Err(invalid("unknown send_flags bits (INLINE is not supported)"));
        }
        let mut flags = 0;
        if self.sq_sig_all || f.contains(SendFlags::SIGNALED) {
            flags |= WQE_FLAG_SIGNALED;
        }
        if f.contains(SendFlags::FENCE) {
            flags |= WQE_FLAG_FENCE;
        }
        let (opcode, compare_add, swap) = match wr.op {
            AtomicOp::CmpAndSwp { compare, swap } => (WrOpcode::AtomicCmpAndSwp, compare, swap),
            AtomicOp::FetchAndAdd { add } => (WrOpcode::AtomicFetchAndAdd, add, 0),
        };
        let wqe = SendWqe {
            opcode: opcode as u8,
            flags,
            length: 8,
            wr_id: wr.wr_id,
            local_addr: wr.sge.addr,
            remote_addr: wr.remote_addr,
            rkey: wr.rkey,
            imm: [0; 4],
            lkey: wr.sge.lkey,
            compare_add,
            swap,
        };
        let sq = self.sq.as_mut().ok_or(VerbsError::SendQueueFull(qpn))?;
        self.ctx.nic.post_send_wqe(sq, &wqe).map_err(|e| match e {
            DriverError::QueueFull(_) => VerbsError::SendQueueFull(qpn),
            e => e.into(),
        })?;
        let sq = self.sq.as_ref().ok_or(VerbsError::SendQueueFull(qpn))?;
        self.ctx.nic.ring_sq(sq)?;
        Ok(())
    }

    /// `ibv_post_recv` of one work request: writes its receive WQE and
    /// rings the receive doorbell. From INIT on (not in RESET or ERR).
    pub fn post_recv(&mut self, wr: &RecvWr<'_>) -> Result<()> {
        self.post_recv_list(std::slice::from_ref(wr))
            .map_err(unwrap_post_error)
    }

    /// `ibv_post_recv` of a list, one doorbell for all (see
    /// [`QueuePair::post_send_list`] for partial failure).
    pub fn post_recv_list(&mut self, wrs: &[RecvWr<'_>]) -> Result<()> {
        let qpn = self.qp_num();
        let state = self.state.get();
        if matches!(state, QpState::Reset | QpState::Err) {
            return Err(VerbsError::WrongState {
                qpn,
                state,
                op: "post_recv",
                needed: "INIT, RTR or RTS",
            });
        }
        if self.rq.is_none() {
            return Err(VerbsError::NoRecvQueue(qpn));
        }
        let mut posted = 0;
        let mut failure = None;
        for (index, wr) in wrs.iter().enumerate() {
            let res = if wr.sg_list.len() > MAX_SGE as usize {
                Err(VerbsError::TooManySge {
                    qpn,
                    given: wr.sg_list.len(),
                    max: MAX_SGE,
                })
            } else {
                let sge = wr.sg_list.first().copied().unwrap_or_default();
                let wqe = RecvWqe {
                    length: sge.length,
                    wr_id: wr.wr_id,
                    addr: sge.addr,
                    lkey: sge.lkey,
                };
                match self.rq.as_mut() {
                    Some(rq) => self.ctx.nic.post_recv_wqe(rq, &wqe).map_err(|e| match e {
                        DriverError::RecvQueueFull(_) => VerbsError::RecvQueueFull(qpn),
                        e => e.into(),
                    }),
                    None => Err(VerbsError::NoRecvQueue(qpn)),
                }
            };
            if let Err(e) = res {
                failure = Some(VerbsError::PostFailed {
                    index,
                    source: Box::new(e),
                });
                break;
            }
            posted += 1;
        }
        if posted > 0 {
            if let Some(rq) = self.rq.as_ref() {
                self.ctx.nic.ring_rq(rq)?;
            }
        }
        failure.map_or(Ok(()), Err)
    }

    /// `ibv_destroy_qp`: RESET, then the QP number is unbound (packets for
    /// it are dropped from then on), the send queue is disabled and both
    /// rings are released. Dropping the QP does the same, ignoring errors.
    pub fn destroy(mut self) -> Result<()> {
        self.destroy_inner()
    }

    fn destroy_inner(&mut self) -> Result<()> {
        let Some(sq) = self.sq.take() else {
            return Ok(());
        };
        let attr = self.attr;
        let reset = self.program(QpState::Reset, &attr, QP_CMD_SET_STATE);
        // Unbound even when the reset failed: the slot goes back to the
        // pool, and a new QP there must find it unbound. (A cached QP's
        // number may stay bound in the NIC, its QP in RESET, until the
        // NIC evicts it; a packet for it is dropped there.)
        let unbind = if self.cached {
            Ok(())
        } else {
            self.ctx.nic.unbind_qp_num(self.slot)
        };
        let sq_res = self.ctx.nic.destroy_sq(sq);
        let rq_res = match self.rq.take() {
            Some(rq) => self.ctx.nic.destroy_rq(rq),
            None => Ok(()),
        };
        if self.cached && reset.is_ok() && sq_res.is_ok() {
            // (a number whose QP may not be in RESET is not handed out again)
            self.ctx.nic.free_cached_qp_num(self.qp_num);
        }
        reset?;
        unbind?;
        sq_res?;
        rq_res?;
        Ok(())
    }

    /// The send ring (tests and debugging).
    pub fn send_queue(&self) -> Option<&SendQueue> {
        self.sq.as_ref()
    }

    /// The receive ring, if the QP has one (tests and debugging).
    pub fn recv_queue(&self) -> Option<&RecvQueue> {
        self.rq.as_ref()
    }
}

fn unwrap_post_error(e: VerbsError) -> VerbsError {
    match e {
        VerbsError::PostFailed { source, .. } => *source,
        e => e,
    }
}

impl<D: Device> Drop for QueuePair<D> {
    fn drop(&mut self) {
        let _ = self.destroy_inner();
    }
}

impl<D: Device> std::fmt::Debug for QueuePair<D> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("QueuePair")
            .field("qp_num", &self.qp_num)
            .field("slot", &self.slot)
            .field("cached", &self.cached)
            .field("state", &self.state.get())
            .field("cap", &self.cap)
            .finish()
    }
}

/// What the NIC reports about a QP (`qp_status`, `qp_*_psn_now`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QpStatus {
    pub state: QpState,
    /// Last NAK syndrome the QP received.
    pub last_syndrome: u8,
    /// Next PSN the requester sends.
    pub sq_psn_now: u32,
    /// PSN the responder expects next.
    pub rq_psn_now: u32,
}
