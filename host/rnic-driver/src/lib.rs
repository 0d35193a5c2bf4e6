//! rnic queues over any [`Device`]: completion queues, send queues, receive
//! queues, work requests, doorbells and completion polling.
//!
//! Ring memory is DMA memory owned by the host; the NIC only keeps indices.
//! CQEs carry an owner/phase bit that flips on every pass over the ring, so
//! the host knows a CQE is new without any register read. Between seeing the
//! phase bit and reading the CQE (and then the data it names), the host
//! issues an acquire fence: the last layer of the ordering contract.
//!
//! Work-queue accounting: every CQE names the ring index of the WQE it
//! completes (its *WQE counter*, free-running, 16 bits). Polling a CQE
//! retires that WQE and every earlier one of the same ring, so send WQEs
//! posted without SIGNALED (which complete silently) are freed by the next
//! signaled completion of their queue. Receive completions (CQE flag `recv`)
//! retire receive-queue WQEs the same way.

mod cached_qp;
pub mod debug_switches;
/// The entry formats, generated from `hw/formats/rnic_formats.rdl` by
/// `hw/formats/generate.sh`.
#[path = "generated_formats.rs"]
pub mod formats;
pub use cached_qp::max_cached_qps;
mod qp_ctx_table;
mod qp_directory;
mod qp_fetch;
mod qp_record;
pub mod ring;

use std::cell::{Cell, RefCell};
use std::rc::{Rc, Weak};
use std::sync::atomic::{fence, Ordering};

use rnic_device::{Device, DeviceError, DmaBuffer, IrqWait};
use rnic_regs::DeviceIo;

pub use debug_switches::{Break, BreakSet, DebugSwitches, UnknownBreak};
pub use qp_ctx_table::{ctx_error_name, CtxCounters, CtxStatus, CTX_ERR_PINNED, MAX_CTX_RECORDS};
pub use qp_directory::{bind_error_name, CAP_DOORBELL_BY_QPN, FIRST_QP_NUM};
pub use qp_fetch::{fetch_error_name, CacheCounters, Fetched};
pub use ring::{
    CopyWr, Cqe, RecvWqe, SendWqe, WcOpcode, WcStatus, WrOpcode, CQE_FLAG_RECV, CQE_FLAG_WITH_IMM,
    CQE_OP_LOCAL_DMA_COPY, CQE_OP_RDMA_READ, CQE_OP_RDMA_WRITE, CQE_OP_RECV,
    CQE_OP_RECV_RDMA_WITH_IMM, CQE_OP_SEND, CQE_SIZE, WQE_FLAG_FENCE, WQE_FLAG_SIGNALED,
    WQE_FLAG_SOLICITED, WQE_SIZE,
};

/// Smallest and largest ring size the NIC accepts (`q_size`, `qp_rq_size`).
pub const MIN_RING_ENTRIES: u32 = 2;
pub const MAX_RING_ENTRIES: u32 = 32768;

/// Errors of the queue layer.
#[derive(Debug, thiserror::Error)]
pub enum DriverError {
    #[error(transparent)]
    Device(#[from] DeviceError),
    #[error("not an rnic: magic {0:#010x} at BAR0+0x0c")]
    BadMagic(u32),
    #[error("invalid argument: {0}")]
    InvalidArg(String),
    #[error("all {0} queues are in use")]
    NoFreeQueue(u32),
    #[error("send queue {0} is full")]
    QueueFull(u16),
    #[error("receive queue of QP {0} is full")]
    RecvQueueFull(u16),
    #[error("the NIC refused the command on queue {qn}: error code {code} ({})", error_name(*code))]
    Refused { code: u8, qn: u16 },
    #[error("the QP directory refused to bind slot {slot} to QP number {qpn}: error code {code} ({})", bind_error_name(*code, true))]
    QpBind { slot: u16, qpn: u32, code: u8 },
    #[error("the QP directory refused to unbind slot {slot} (QP number {qpn}): error code {code} ({})", bind_error_name(*code, false))]
    QpUnbind { slot: u16, qpn: u32, code: u8 },
    #[error(
        "no free QP number: {used} of the directory's 2^{bits} are bound (0 and 1 are never used)"
    )]
    NoFreeQpNumber { bits: u32, used: usize },
    #[error("the context engine refused or failed the command on slot {slot}, record {record}: error code {code} ({})", qp_ctx_table::ctx_error_name(*code))]
    QpCtx { slot: u16, record: u32, code: u8 },
    #[error("the context engine saw a DMA status it did not expect (qp_ctx_status.fault): reset the NIC")]
    CtxFault,
    #[error("the context command on slot {slot}, record {record} did not end")]
    CtxTimeout { slot: u16, record: u32 },
    #[error("the NIC's fetch of QP number {qpn} failed: error code {code} ({})", qp_fetch::fetch_error_name(*code))]
    QpFetch { qpn: u32, code: u8 },
}

pub type Result<T> = std::result::Result<T, DriverError>;

impl DriverError {
    /// The context engine refused a move because the slot's QP has work in
    /// flight ([`CTX_ERR_PINNED`]): nothing moved, and the host may try
    /// again once the QP is idle.
    pub fn is_pinned(&self) -> bool {
        matches!(self, DriverError::QpCtx { code, .. } if *code == CTX_ERR_PINNED)
    }
}

/// Names of the queue manager's error codes (`queue.err_status.code`).
pub fn error_name(code: u8) -> &'static str {
    match code {
        0 => "none",
        1 => "doorbell or command for a queue that is not set up",
        2 => "ring size not a power of two in 2..32768, or misaligned base",
        3 => "unknown work-request opcode",
        4 => "DMA read error (unsupported request or completer abort)",
        5 => "completion queue disabled, CQE dropped",
        6 => "bad completion queue number",
        7 => "doorbell beyond the ring size, or behind the last one (posted WQEs cannot be withdrawn)",
        8 => "unknown queue command",
        9 => "unsupported MMIO request",
        10 => "memory-region command refused (bad key, range or slot)",
        11 => "QP command refused (bad QP number, state, MTU, ring or CQ)",
        12 => "QP command refused: the destination-MAC table is full (16 distinct MACs in use)",
        13 => "completion-queue command refused: the CQs are being cleared after a reset",
        14 => "doorbell by a QP number no slot holds (dropped; err_status.qn is the number)",
        _ => "unknown",
    }
}

/// Queue commands (`queue.q_cmd.op`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum QueueCmd {
    EnableSq = 1,
    DisableSq = 2,
    EnableCq = 3,
    DisableCq = 4,
}

/// What the ID block says about the build.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IdInfo {
    pub build_version: u32,
    pub git_hash: u32,
    pub board_id: u32,
    pub data_w: u32,
    pub num_queues: u32,
    pub verbs: u32,
    pub caps: u32,
    /// mp transport window W (PSNs per QP bitmap).
    pub mp_window: u32,
    /// Outstanding-WQE rings shared by the QPs.
    pub ost_rings: u32,
    /// mp deferred-completion slots shared by the QPs (0: a build older
    /// than the register).
    pub mp_pend: u32,
    /// mp deferred completions one QP may hold (OCP MRC's max_wimm; 0: a
    /// build older than the register, which held 1).
    pub mp_wimm: u32,
    /// Destination-MAC table entries (0: a build older than the register).
    pub dmacs: u32,
    /// Memory regions the MR table holds: keys whose index (bits 15:8) is
    /// at or above this are refused (0: a build older than the register;
    /// every such build held 64).
    pub mrs: u32,
    /// 64-bit words of a QP's record through the record window (0: a build
    /// without the record port, or older than the register).
    pub qp_rec_words: u32,
    /// Bits of a QP number the QP directory holds: QP numbers on the wire
    /// are bound to slots by the host (0: no directory, or a build older
    /// than the register; QP number n is slot n).
    pub qpn_bits: u32,
    /// Context-table commands the NIC runs at once (0: no context table,
    /// or a build older than the register).
    pub ctx_fills: u32,
}

/// The queue manager's error registers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ErrorStatus {
    pub code: u8,
    pub qn: u16,
    pub count: u32,
}

/// Producer and consumer index of a work queue (free-running, 32 bits on
/// the host; the NIC sees the low 16 bits), shared between the queue and the
/// completion queue that retires its WQEs.
#[derive(Debug, Default)]
struct WqState {
    pi: Cell<u32>,
    ci: Cell<u32>,
}

impl WqState {
    fn outstanding(&self) -> u32 {
        self.pi.get().wrapping_sub(self.ci.get())
    }

    /// Retires the WQE with 16-bit index `counter` and every earlier one.
    /// Returns false (and retires nothing) when `counter` names no
    /// outstanding WQE.
    fn retire(&self, counter: u16) -> bool {
        let ci = self.ci.get();
        let delta = u32::from(counter.wrapping_sub(ci as u16));
        if delta < self.outstanding() {
            self.ci.set(ci.wrapping_add(delta + 1));
            true
        } else {
            false
        }
    }

    /// Retires the oldest outstanding WQE, if any.
    fn retire_one(&self) {
        if self.outstanding() > 0 {
            self.ci.set(self.ci.get().wrapping_add(1));
        }
    }

    /// The ring index (low 16 bits) of the oldest outstanding WQE.
    fn oldest(&self) -> u16 {
        self.ci.get() as u16
    }

    fn reset(&self) {
        self.pi.set(0);
        self.ci.set(0);
    }
}

/// What a completion queue's CQEs name a work queue by.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum WqKey {
    /// The queue's own slot: the CQEs name the number bound to the slot
    /// last (the slot itself without a directory).
    Slot(u16),
    /// A cached QP's: the CQEs name its QP number, whatever slot it is in.
    Qpn(u32),
}

/// A work queue whose WQEs a completion queue retires.
struct WqLink {
    key: WqKey,
    recv: bool,
    state: Weak<WqState>,
}

/// A completion queue: a ring of CQEs in host memory.
pub struct CompletionQueue {
    cqn: u16,
    entries: u32,
    ring: DmaBuffer,
    ci: u32,
    /// Send and receive queues reporting here (weak: a destroyed queue
    /// drops out).
    links: Vec<WqLink>,
    counter_mismatches: u64,
    /// The NIC was seen completing without a valid WQE counter: retire one
    /// WQE per CQE from then on.
    counter_ignored: bool,
}

impl CompletionQueue {
    pub fn cqn(&self) -> u16 {
        self.cqn
    }
    pub fn entries(&self) -> u32 {
        self.entries
    }
    pub fn ring(&self) -> &DmaBuffer {
        &self.ring
    }
    /// CQEs consumed so far (free-running).
    pub fn consumer_index(&self) -> u32 {
        self.ci
    }
    /// CQEs whose WQE counter did not name the WQE the host expected:
    /// stale CQEs (nothing outstanding), and CQEs of a NIC build that
    /// leaves the counter at 0. Stays 0 with a NIC that fills it in.
    pub fn counter_mismatches(&self) -> u64 {
        self.counter_mismatches
    }

    /// True once a CQE named no outstanding WQE while some were
    /// outstanding: the NIC does not fill in the WQE counter (builds before
    /// it existed complete every WQE, in order), so from then on every CQE
    /// of this CQ retires exactly one WQE. Unsignaled WQEs need a NIC that
    /// fills in the counter.
    pub fn counter_ignored(&self) -> bool {
        self.counter_ignored
    }

    fn link(&mut self, key: WqKey, recv: bool, state: &Rc<WqState>) {
        self.links.retain(|l| l.state.strong_count() > 0);
        self.links.push(WqLink {
            key,
            recv,
            state: Rc::downgrade(state),
        });
    }

    /// Retires the WQEs a CQE completes (no-op for queues not linked here).
    /// `cqe_qns[slot]` is the QP number the CQEs of a slot name (slot n
    /// where it is missing: a build without a QP directory).
    fn retire(&mut self, cqe: &Cqe, cqe_qns: &[u32]) {
        let recv = cqe.is_recv();
        let named = |key: WqKey| match key {
            WqKey::Slot(qn) => cqe_qns
                .get(usize::from(qn))
                .copied()
                .unwrap_or(u32::from(qn)),
            WqKey::Qpn(n) => n,
        };
        let state = self
            .links
            .iter()
            .filter(|l| named(l.key) == cqe.qn && l.recv == recv)
            .find_map(|l| l.state.upgrade());
        let Some(st) = state else {
            return;
        };
        if st.outstanding() == 0 {
            // Stale: e.g. a CQE of a queue reset since.
            self.counter_mismatches += 1;
            return;
        }
        if self.counter_ignored {
            if cqe.wqe_counter != st.oldest() {
                self.counter_mismatches += 1;
            }
            st.retire_one();
        } else if !st.retire(cqe.wqe_counter) {
            self.counter_mismatches += 1;
            self.counter_ignored = true;
            st.retire_one();
        }
    }
}

/// A send queue: a ring of WQEs in host memory.
pub struct SendQueue {
    qn: u16,
    /// A cached QP's queue: its QP number (the NIC places it; `qn` is the
    /// slot it was created in, where it need not be now).
    cached: Option<u32>,
    cqn: u16,
    entries: u32,
    ring: DmaBuffer,
    state: Rc<WqState>,
}

impl SendQueue {
    /// The queue's slot (for a cached QP's queue, the slot it was created
    /// in: the NIC may have moved it since; see [`SendQueue::cached_qpn`]).
    pub fn qn(&self) -> u16 {
        self.qn
    }
    /// The QP number of a cached QP's queue (its state is in the host's
    /// context table and whichever slot the NIC fetches it into).
    pub fn cached_qpn(&self) -> Option<u32> {
        self.cached
    }
    /// The completion queue its CQEs go to.
    pub fn cqn(&self) -> u16 {
        self.cqn
    }
    pub fn entries(&self) -> u32 {
        self.entries
    }
    /// Work requests posted and not yet retired by a completion.
    pub fn outstanding(&self) -> u32 {
        self.state.outstanding()
    }
    /// WQEs that can be posted before the ring is full.
    pub fn free_slots(&self) -> u32 {
        self.entries.saturating_sub(self.outstanding())
    }
    /// Producer index (free-running): the ring index the next WQE gets.
    pub fn producer_index(&self) -> u32 {
        self.state.pi.get()
    }
    pub fn ring(&self) -> &DmaBuffer {
        &self.ring
    }
}

/// A receive queue: a ring of receive WQEs in host memory. The NIC learns
/// its base and size through the QP context (`qp_rq_*`), and its producer
/// index through the `rq_db` doorbell. `qpn` is the QP's slot (its send
/// queue's number), not the QP number on the wire.
pub struct RecvQueue {
    qpn: u16,
    /// A cached QP's queue: its QP number (as [`SendQueue::cached_qpn`]).
    cached: Option<u32>,
    entries: u32,
    ring: DmaBuffer,
    state: Rc<WqState>,
}

impl RecvQueue {
    pub fn qpn(&self) -> u16 {
        self.qpn
    }
    pub fn entries(&self) -> u32 {
        self.entries
    }
    /// Receive WQEs posted and not yet retired by a completion.
    pub fn outstanding(&self) -> u32 {
        self.state.outstanding()
    }
    /// WQEs that can be posted before the ring is full.
    pub fn free_slots(&self) -> u32 {
        self.entries.saturating_sub(self.outstanding())
    }
    /// Producer index (free-running): the ring index the next WQE gets.
    pub fn producer_index(&self) -> u32 {
        self.state.pi.get()
    }
    pub fn ring(&self) -> &DmaBuffer {
        &self.ring
    }
    /// Bus address of the ring (for `qp_rq_base_*`).
    pub fn bus_addr(&self) -> u64 {
        self.ring.bus_addr()
    }
}

/// An rnic function, opened over a device backend.
pub struct Nic<D: Device> {
    dev: D,
    id: IdInfo,
    sq_used: RefCell<Vec<bool>>,
    cq_used: RefCell<Vec<bool>>,
    /// QP numbers bound to slots (a build with a QP directory), and the
    /// number each slot's CQEs name.
    qp_nums: RefCell<qp_directory::QpNumbers>,
    /// The QP context table in host memory, while open.
    ctx_table: RefCell<Option<DmaBuffer>>,
    /// The cache's first slot (`qp_cache_first`; `num_queues` or more:
    /// no cache). Send queues of the host's own get slots below it.
    cache_first: Cell<u16>,
}

impl<D: Device> Nic<D> {
    /// Checks the magic and reads the ID block.
    pub fn open(dev: D) -> Result<Self> {
        let id = {
            let io = DeviceIo::new(&dev);
            let csr = io.csr();
            let magic = csr.id().magic().try_read()?.magic();
            if magic != rnic_regs::MAGIC {
                return Err(DriverError::BadMagic(magic));
            }
            let idb = csr.id();
            IdInfo {
                build_version: idb.build_version().try_read()?.value(),
                git_hash: idb.git_hash().try_read()?.value(),
                board_id: idb.board_id().try_read()?.value(),
                data_w: idb.data_w().try_read()?.value(),
                num_queues: idb.num_queues().try_read()?.value(),
                verbs: idb.verbs().try_read()?.value(),
                caps: idb.caps().try_read()?.value(),
                mp_window: idb.mp_window().try_read()?.value(),
                ost_rings: idb.ost_rings().try_read()?.value(),
                mp_pend: idb.mp_pend().try_read()?.value(),
                mp_wimm: idb.mp_wimm().try_read()?.value(),
                dmacs: idb.dmacs().try_read()?.value(),
                mrs: idb.mrs().try_read()?.value(),
                qp_rec_words: idb.qp_rec_words().try_read()?.value(),
                qpn_bits: idb.qpn_bits().try_read()?.value(),
                ctx_fills: idb.ctx_fills().try_read()?.value(),
            }
        };
        let n = id.num_queues as usize;
        Ok(Self {
            dev,
            id,
            sq_used: RefCell::new(vec![false; n]),
            cq_used: RefCell::new(vec![false; n]),
            qp_nums: RefCell::new(qp_directory::QpNumbers::new(id.qpn_bits, id.num_queues)),
            ctx_table: RefCell::new(None),
            cache_first: Cell::new(u16::try_from(id.num_queues).unwrap_or(u16::MAX)),
        })
    }

    pub fn device(&self) -> &D {
        &self.dev
    }

    pub fn id(&self) -> IdInfo {
        self.id
    }

    /// Typed register access.
    pub fn io(&self) -> DeviceIo<'_, D> {
        DeviceIo::new(&self.dev)
    }

    /// The queue manager's last error and error count.
    pub fn error_status(&self) -> Result<ErrorStatus> {
        let io = self.io();
        let q = io.csr().queue();
        let st = q.err_status().try_read()?;
        let count = q.err_count().try_read()?.count();
        Ok(ErrorStatus {
            code: st.code(),
            qn: st.qn(),
            count,
        })
    }

    /// Number of CQEs the NIC has written.
    pub fn cqe_count(&self) -> Result<u32> {
        Ok(self.io().csr().queue().cqe_count().try_read()?.count())
    }

    /// How CQEs are ordered behind their payload: `false` by RO=0 on the
    /// CQE write (posted writes do not pass each other), `true` by a
    /// zero-length flush read after the payload (`dma.cqe_order`). Read
    /// back, like the debug switches.
    pub fn set_cqe_flush(&self, flush: bool) -> Result<()> {
        let io = self.io();
        let order = io.csr().dma().cqe_order();
        order.try_write(|r| r.set_cqe_flush(flush))?;
        if order.try_read()?.cqe_flush() != flush {
            return Err(DriverError::InvalidArg(
                "the NIC did not take the CQE flush mode".into(),
            ));
        }
        Ok(())
    }

    /// Issues a queue command on queue `qn` with the given ring, and reports
    /// whether the NIC refused it. Low level: [`Nic::create_cq`] and
    /// [`Nic::create_sq`] validate their arguments first.
    pub fn queue_command(
        &self,
        qn: u16,
        cmd: QueueCmd,
        base: u64,
        entries: u32,
        cqn: u16,
    ) -> Result<()> {
        let io = self.io();
        let q = io.csr().queue();
        let before = q.err_count().try_read()?.count();
        q.q_sel().try_write(|r| r.set_qn(qn))?;
        q.q_base_lo().try_write(|r| r.set_addr(base as u32))?;
        q.q_base_hi()
            .try_write(|r| r.set_addr((base >> 32) as u32))?;
        q.q_size().try_write(|r| r.set_entries(entries))?;
        q.q_cqn().try_write(|r| r.set_cqn(cqn))?;
        q.q_cmd().try_write(|r| r.set_op(cmd as u8))?;
        // MMIO reads are not reordered ahead of earlier writes, so this read
        // observes the command's outcome.
        let after = q.err_count().try_read()?.count();
        if after != before {
            let st = q.err_status().try_read()?;
            return Err(DriverError::Refused {
                code: st.code(),
                qn: st.qn(),
            });
        }
        Ok(())
    }

    fn alloc_qn(used: &RefCell<Vec<bool>>) -> Result<u16> {
        Self::alloc_qn_below(used, u16::MAX)
    }

    /// The lowest free number below `end`.
    fn alloc_qn_below(used: &RefCell<Vec<bool>>, end: u16) -> Result<u16> {
        let mut u = used.borrow_mut();
        let n = (u.len() as u32).min(u32::from(end));
        let i = u
            .iter()
            .take(n as usize)
            .position(|x| !x)
            .ok_or(DriverError::NoFreeQueue(n))?;
        u[i] = true;
        Ok(i as u16)
    }

    fn check_entries(entries: u32) -> Result<()> {
        if !entries.is_power_of_two() || !(MIN_RING_ENTRIES..=MAX_RING_ENTRIES).contains(&entries) {
            return Err(DriverError::InvalidArg(format!(
                "ring size {entries} must be a power of two from 2 to 32768"
            )));
        }
        Ok(())
    }

    /// Creates a completion queue of `entries` CQEs.
    pub fn create_cq(&self, entries: u32) -> Result<CompletionQueue> {
        Self::check_entries(entries)?;
        let cqn = Self::alloc_qn(&self.cq_used)?;
        let ring = self.dev.alloc_dma(entries as usize * CQE_SIZE)?;
        if let Err(e) = self.queue_command(cqn, QueueCmd::EnableCq, ring.bus_addr(), entries, 0) {
            self.cq_used.borrow_mut()[cqn as usize] = false;
            return Err(e);
        }
        Ok(CompletionQueue {
            cqn,
            entries,
            ring,
            ci: 0,
            links: Vec::new(),
            counter_mismatches: 0,
            counter_ignored: false,
        })
    }

    /// Disables a completion queue, returns its number to the pool and
    /// unmaps its ring. Queues still reporting to it must be destroyed first
    /// (their CQEs would be dropped by the NIC).
    pub fn destroy_cq(&self, cq: CompletionQueue) -> Result<()> {
        self.queue_command(cq.cqn, QueueCmd::DisableCq, 0, 0, 0)?;
        Self::free_qn(&self.cq_used, cq.cqn);
        self.dev.free_dma(&cq.ring)?;
        Ok(())
    }

    /// Creates a send queue of `entries` WQEs completing to `cq`.
    pub fn create_sq(&self, entries: u32, cq: &mut CompletionQueue) -> Result<SendQueue> {
        Self::check_entries(entries)?;
        let qn = Self::alloc_qn_below(&self.sq_used, self.cache_first.get())?;
        if let Err(e) = self.adopt_slot(qn) {
            self.sq_used.borrow_mut()[qn as usize] = false;
            return Err(e);
        }
        self.enable_sq(qn, None, entries, cq).inspect_err(|_| {
            self.sq_used.borrow_mut()[qn as usize] = false;
        })
    }

    /// A ring of `entries` WQEs enabled as the send queue of `slot`,
    /// completing to `cq` by slot or, for a cached QP, by its number (the
    /// ring freed again if the NIC refuses it).
    pub(crate) fn enable_sq(
        &self,
        slot: u16,
        cached: Option<u32>,
        entries: u32,
        cq: &mut CompletionQueue,
    ) -> Result<SendQueue> {
        Self::check_entries(entries)?;
        let ring = self.dev.alloc_dma(entries as usize * WQE_SIZE)?;
        if let Err(e) =
            self.queue_command(slot, QueueCmd::EnableSq, ring.bus_addr(), entries, cq.cqn)
        {
            let _ = self.dev.free_dma(&ring);
            return Err(e);
        }
        let state = Rc::new(WqState::default());
        cq.link(cached.map_or(WqKey::Slot(slot), WqKey::Qpn), false, &state);
        Ok(SendQueue {
            qn: slot,
            cached,
            cqn: cq.cqn,
            entries,
            ring,
            state,
        })
    }

    /// Disables a send queue, returns its number to the pool and unmaps its
    /// ring.
    pub fn destroy_sq(&self, sq: SendQueue) -> Result<()> {
        match sq.cached {
            Some(n) => self.with_qp_held(n, |slot| self.destroy_sq_in(slot, sq)),
            None => {
                let qn = sq.qn;
                self.destroy_sq_in(qn, sq)?;
                Self::free_qn(&self.sq_used, qn);
                Ok(())
            }
        }
    }

    /// Disables `sq` in `slot` (for a cached QP's, the slot the caller
    /// holds it in: [`Nic::with_qp_held`]) and unmaps its ring.
    pub fn destroy_sq_in(&self, slot: u16, sq: SendQueue) -> Result<()> {
        self.queue_command(slot, QueueCmd::DisableSq, 0, 0, 0)?;
        self.dev.free_dma(&sq.ring)?;
        Ok(())
    }

    /// Empties a send queue: the NIC's and the host's indices go back to 0
    /// (the queue is enabled again on the same ring) and WQEs not yet
    /// executed are discarded without completions. Only safe while the NIC
    /// is not working on the queue (its QP in RESET).
    pub fn reset_sq(&self, sq: &mut SendQueue) -> Result<()> {
        let enable = |slot| {
            self.queue_command(
                slot,
                QueueCmd::EnableSq,
                sq.ring.bus_addr(),
                sq.entries,
                sq.cqn,
            )
        };
        match sq.cached {
            Some(n) => self.with_qp_held(n, enable)?,
            None => enable(sq.qn)?,
        }
        sq.ring.fill(0, sq.ring.len(), 0);
        sq.state.reset();
        Ok(())
    }

    fn free_qn(used: &RefCell<Vec<bool>>, qn: u16) {
        if let Some(u) = used.borrow_mut().get_mut(usize::from(qn)) {
            *u = false;
        }
    }

    /// Allocates the receive ring of the QP in slot `qpn` (its send
    /// queue's number; `entries` receive WQEs) and lets `cq` retire its
    /// WQEs. The NIC learns the ring through the QP context
    /// (`qp_rq_base_*`, `qp_rq_size`), which is the caller's job.
    pub fn create_rq(&self, qpn: u16, entries: u32, cq: &mut CompletionQueue) -> Result<RecvQueue> {
        self.new_rq(qpn, None, entries, cq)
    }

    /// A receive ring of `entries` WQEs for the QP in `slot`, retired by
    /// `cq` by slot or, for a cached QP, by its number.
    pub(crate) fn new_rq(
        &self,
        slot: u16,
        cached: Option<u32>,
        entries: u32,
        cq: &mut CompletionQueue,
    ) -> Result<RecvQueue> {
        Self::check_entries(entries)?;
        let ring = self.dev.alloc_dma(entries as usize * WQE_SIZE)?;
        let state = Rc::new(WqState::default());
        cq.link(cached.map_or(WqKey::Slot(slot), WqKey::Qpn), true, &state);
        Ok(RecvQueue {
            qpn: slot,
            cached,
            entries,
            ring,
            state,
        })
    }

    /// Unmaps a receive ring. The QP must no longer use it (QP in RESET).
    pub fn destroy_rq(&self, rq: RecvQueue) -> Result<()> {
        self.dev.free_dma(&rq.ring)?;
        Ok(())
    }

    /// Empties a receive queue on the host side (indices back to 0, WQEs
    /// discarded). The NIC's receive indices restart when the QP context is
    /// loaded again (QP command with state RESET or INIT).
    pub fn reset_rq(&self, rq: &mut RecvQueue) {
        rq.ring.fill(0, rq.ring.len(), 0);
        rq.state.reset();
    }

    /// Writes a raw 64-byte WQE into the send queue (no doorbell).
    pub fn post_wqe(&self, sq: &mut SendQueue, wqe: &[u8; WQE_SIZE]) -> Result<()> {
        if sq.outstanding() >= sq.entries {
            return Err(DriverError::QueueFull(sq.qn));
        }
        let pi = sq.state.pi.get();
        let slot = (pi % sq.entries) as usize * WQE_SIZE;
        sq.ring.write(slot, wqe);
        sq.state.pi.set(pi.wrapping_add(1));
        Ok(())
    }

    /// Writes a send WQE into the send queue (no doorbell; see
    /// [`Nic::ring_sq`]).
    pub fn post_send_wqe(&self, sq: &mut SendQueue, wqe: &SendWqe) -> Result<()> {
        self.post_wqe(sq, &wqe.encode())
    }

    /// Writes a WQE with any opcode byte into the send queue (no doorbell).
    pub fn post_raw(&self, sq: &mut SendQueue, opcode: u8, wr: &CopyWr) -> Result<()> {
        self.post_wqe(sq, &ring::encode_wqe(opcode, wr))
    }

    /// Writes a receive WQE into the receive queue (no doorbell; see
    /// [`Nic::ring_rq`]).
    pub fn post_recv_wqe(&self, rq: &mut RecvQueue, wqe: &RecvWqe) -> Result<()> {
        if rq.outstanding() >= rq.entries {
            return Err(DriverError::RecvQueueFull(rq.qpn));
        }
        let pi = rq.state.pi.get();
        let slot = (pi % rq.entries) as usize * WQE_SIZE;
        rq.ring.write(slot, &wqe.encode());
        rq.state.pi.set(pi.wrapping_add(1));
        Ok(())
    }

    /// Tells the NIC about every receive WQE posted so far (`rq_db`).
    pub fn ring_rq(&self, rq: &RecvQueue) -> Result<()> {
        // WQE stores must be visible before the doorbell reaches the NIC.
        fence(Ordering::Release);
        let pi = (rq.state.pi.get() & 0xffff) as u16;
        let io = self.io();
        let qp = io.csr().qp();
        match self.queue_doorbell_qpn(rq.qpn, rq.cached)? {
            Some(n) => qp.rq_dbn().try_write(|r| {
                r.set_qpn(n);
                r.set_pi(pi);
            })?,
            None => qp.rq_db().try_write(|r| {
                r.set_qpn(rq.qpn);
                r.set_pi(pi);
            })?,
        }
        Ok(())
    }

    /// Posts a local DMA copy (no doorbell; see [`Nic::ring_sq`]).
    pub fn post_copy(&self, sq: &mut SendQueue, wr: &CopyWr) -> Result<()> {
        self.post_raw(sq, WrOpcode::LocalDmaCopy as u8, wr)
    }

    /// Tells the NIC about every WQE posted so far.
    pub fn ring_sq(&self, sq: &SendQueue) -> Result<()> {
        // WQE stores must be visible before the doorbell reaches the NIC.
        fence(Ordering::Release);
        let pi = (sq.state.pi.get() & 0xffff) as u16;
        match self.queue_doorbell_qpn(sq.qn, sq.cached)? {
            Some(n) => self.io().csr().qp().sq_dbn().try_write(|r| {
                r.set_qpn(n);
                r.set_pi(pi);
            })?,
            None => self.io().csr().queue().sq_db().try_write(|r| {
                r.set_qn(sq.qn);
                r.set_pi(pi);
            })?,
        }
        Ok(())
    }

    /// Polls up to `max` new CQEs into `out`; returns how many were found.
    /// The consumer index is returned to the NIC after every batch.
    pub fn poll_cq(
        &self,
        cq: &mut CompletionQueue,
        max: usize,
        out: &mut Vec<Cqe>,
    ) -> Result<usize> {
        self.poll_cq_with(cq, max, |c| out.push(c))
    }

    /// Polls up to `max` new CQEs, handing each to `f` in ring order, after
    /// retiring the WQEs it completes. Returns how many were found; the
    /// consumer index is returned to the NIC after the batch.
    pub fn poll_cq_with(
        &self,
        cq: &mut CompletionQueue,
        max: usize,
        mut f: impl FnMut(Cqe),
    ) -> Result<usize> {
        let mut n = 0;
        while n < max {
            let slot = (cq.ci % cq.entries) as usize * CQE_SIZE;
            let expect = (cq.ci / cq.entries).is_multiple_of(2);
            let owner = cq.ring.read_u8(slot + formats::cqe::OWNER_OFFSET);
            if (owner & formats::cqe::OWNER_PHASE != 0) != expect {
                break;
            }
            // Owner bit seen: only now may the CQE (and its data) be read.
            fence(Ordering::Acquire);
            let mut raw = [0u8; CQE_SIZE];
            cq.ring.read(slot, &mut raw);
            let cqe = Cqe::decode(&raw);
            cq.retire(&cqe, self.qp_nums.borrow().cqe_qns());
            f(cqe);
            cq.ci = cq.ci.wrapping_add(1);
            n += 1;
        }
        if n > 0 {
            let ci = (cq.ci & 0xffff) as u16;
            let cqn = cq.cqn;
            self.io().csr().queue().cq_db().try_write(|r| {
                r.set_cqn(cqn);
                r.set_ci(ci);
            })?;
        }
        Ok(n)
    }

    /// Arms `cq`: the next CQE raises MSI vector `cqn % 32`.
    ///
    /// The arm is a posted write; a register read follows it, so that when
    /// this returns the arm is in effect and every CQE the NIC issued
    /// before it is in host memory (the read does not pass the write, and
    /// its completion does not pass the NIC's earlier posted writes). A
    /// poll after this therefore finds every CQE that will raise no
    /// interrupt: without the read, a CQE issued while the arm was on its
    /// way, and not yet visible to that poll, would raise none and be
    /// missed until the next one.
    pub fn arm_cq(&self, cq: &CompletionQueue) -> Result<()> {
        let cqn = cq.cqn;
        let io = self.io();
        let csr = io.csr();
        csr.queue().cq_arm().try_write(|r| r.set_cqn(cqn))?;
        csr.id().magic().try_read()?;
        Ok(())
    }

    /// Waits for the MSI of an armed CQ, for at most `budget` cycles of
    /// [`Device::now`].
    pub fn wait_cq_event(&self, cq: &CompletionQueue, budget: u64) -> Result<IrqWait> {
        Ok(self.dev.wait_irq(u32::from(cq.cqn) % 32, budget)?)
    }

    /// Polls until `count` CQEs arrived or `budget` idle calls passed.
    pub fn poll_cq_blocking(
        &self,
        cq: &mut CompletionQueue,
        count: usize,
        budget: u64,
        out: &mut Vec<Cqe>,
    ) -> Result<usize> {
        let mut got = 0;
        let mut spins = 0u64;
        while got < count {
            let n = self.poll_cq(cq, count - got, out)?;
            got += n;
            if n == 0 {
                spins += 1;
                if spins > budget {
                    break;
                }
                self.dev.idle();
            }
        }
        Ok(got)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    fn posted(n: u32) -> WqState {
        let s = WqState::default();
        s.pi.set(n);
        s
    }

    #[test]
    fn retire_by_counter_frees_unsignaled_wqes() {
        let s = posted(5);
        // WQEs 0..=2 unsignaled, 3 signaled: its CQE retires 0, 1, 2, 3.
        assert!(s.retire(3));
        assert_eq!(s.ci.get(), 4);
        assert_eq!(s.outstanding(), 1);
        assert!(s.retire(4));
        assert_eq!(s.outstanding(), 0);
        // Nothing outstanding: nothing to retire.
        assert!(!s.retire(5));
        assert_eq!(s.ci.get(), 5);
    }

    #[test]
    fn retire_wraps_the_16_bit_counter() {
        let s = WqState::default();
        s.ci.set(0x1_fffe);
        s.pi.set(0x2_0003);
        assert!(s.retire(0x0001)); // ring index 0x2_0001
        assert_eq!(s.ci.get(), 0x2_0002);
        assert_eq!(s.outstanding(), 1);
        assert!(!s.retire(0x0003), "not posted yet");
    }

    fn cq_with(state: &Rc<WqState>) -> CompletionQueue {
        let mem = Arc::new(rnic_device::HostMemory::new(64).unwrap());
        // SAFETY: `mem` owns 64 bytes and lives as long as the buffer.
        let ring = unsafe { DmaBuffer::from_raw(mem.as_ptr(), 64, 0, mem) };
        let mut cq = CompletionQueue {
            cqn: 0,
            entries: 2,
            ring,
            ci: 0,
            links: Vec::new(),
            counter_mismatches: 0,
            counter_ignored: false,
        };
        cq.link(WqKey::Slot(5), false, state);
        cq
    }

    impl CompletionQueue {
        /// `retire` without a QP directory: CQEs name the slot.
        fn retire_id(&mut self, c: &Cqe) {
            self.retire(c, &[])
        }
    }

    fn cqe(qn: u32, counter: u16) -> Cqe {
        Cqe {
            qn,
            wqe_counter: counter,
            ..Cqe::default()
        }
    }

    #[test]
    fn cq_retires_by_counter_and_ignores_other_queues() {
        let st = Rc::new(posted(6));
        let mut cq = cq_with(&st);
        cq.retire_id(&cqe(5, 2));
        assert_eq!(st.outstanding(), 3);
        cq.retire_id(&cqe(4, 5)); // another queue: not ours
        cq.retire_id(&Cqe {
            flags: CQE_FLAG_RECV,
            ..cqe(5, 5)
        }); // our QP's receive queue: not linked here
        assert_eq!(st.outstanding(), 3);
        cq.retire_id(&cqe(5, 5));
        assert_eq!(st.outstanding(), 0);
        assert_eq!((cq.counter_mismatches(), cq.counter_ignored()), (0, false));
        // A stale CQE changes nothing.
        cq.retire_id(&cqe(5, 5));
        assert_eq!(st.ci.get(), 6);
        assert_eq!((cq.counter_mismatches(), cq.counter_ignored()), (1, false));
    }

    #[test]
    fn cqes_name_the_qp_number_bound_to_the_slot() {
        // slot 5 bound to QP number 77 (a build with a QP directory)
        let st = Rc::new(posted(4));
        let mut cq = cq_with(&st);
        let mut qns: Vec<u32> = (0..8).collect();
        qns[5] = 77;
        cq.retire(&cqe(5, 1), &qns); // the slot's number: not a CQE of it
        assert_eq!(st.outstanding(), 4);
        cq.retire(&cqe(77, 1), &qns);
        assert_eq!(st.outstanding(), 2);
        assert_eq!(cq.counter_mismatches(), 0);
    }

    #[test]
    fn nic_leaving_the_counter_at_zero_retires_one_per_cqe() {
        // Builds before the counter existed complete every WQE in order
        // and write 0. Near the 16-bit wrap, 0 would look like a later
        // WQE: the CQ must not retire more than one.
        let st = Rc::new(WqState::default());
        let mut cq = cq_with(&st);
        st.pi.set(3);
        cq.retire_id(&cqe(5, 0));
        assert_eq!(st.ci.get(), 1);
        assert!(!cq.counter_ignored());
        cq.retire_id(&cqe(5, 0));
        assert!(cq.counter_ignored());
        assert_eq!(st.ci.get(), 2);
        st.ci.set(0xfffe);
        st.pi.set(0xfffe + 8);
        cq.retire_id(&cqe(5, 0));
        assert_eq!(st.ci.get(), 0xffff, "one, not three");
        assert_eq!(st.outstanding(), 7);
    }
}
