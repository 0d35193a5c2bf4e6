//! Completion queues and work completions.

use std::cell::RefCell;
use std::rc::Rc;

use bitflags::bitflags;
use rnic_device::{Device, IrqWait};
use rnic_driver::{Cqe, MAX_RING_ENTRIES, MIN_RING_ENTRIES};

use crate::context::{Context, Shared};
use crate::error::{Result, VerbsError};

pub use rnic_driver::WcStatus;

/// Completion opcodes (`enum ibv_wc_opcode`, plus rnic's `LocalDmaCopy`;
/// an unknown value is kept in `Other`): the driver's, generated from the
/// CQE format.
pub use rnic_driver::WcOpcode;

bitflags! {
    /// `enum ibv_wc_flags` (same bit values).
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
    pub struct WcFlags: u32 {
        const GRH = 1;
        const WITH_IMM = 2;
    }
}

/// A work completion (`ibv_wc`). For an error status only `wr_id`,
/// `status`, `qp_num` and `vendor_err` are meaningful, as in libibverbs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct WorkCompletion {
    pub wr_id: u64,
    pub status: WcStatus,
    pub opcode: WcOpcode,
    /// The responder's NAK syndrome, for remote errors.
    pub vendor_err: u32,
    pub byte_len: u32,
    /// Immediate data (network-order semantics: `u32::from_be(imm)` is the
    /// sender's value), when `wc_flags` has `WITH_IMM`.
    pub imm_data: Option<u32>,
    pub qp_num: u32,
    /// Source QP of a receive completion.
    pub src_qp: u32,
    pub wc_flags: WcFlags,
}

impl WorkCompletion {
    /// Decodes a CQE (`hw/README.md`, "CQE, 32 bytes").
    pub fn from_cqe(c: &Cqe) -> Self {
        let with_imm = c.has_imm();
        Self {
            wr_id: c.wr_id,
            status: c.status,
            opcode: WcOpcode::from_raw(c.opcode),
            vendor_err: u32::from(c.syndrome),
            byte_len: c.byte_len,
            imm_data: with_imm.then(|| u32::from_ne_bytes(c.imm_bytes())),
            qp_num: c.qn,
            src_qp: c.src_qp,
            wc_flags: if with_imm {
                WcFlags::WITH_IMM
            } else {
                WcFlags::empty()
            },
        }
    }

    pub fn is_success(&self) -> bool {
        self.status == WcStatus::Success
    }
}

pub(crate) struct CqInner<D: Device> {
    pub(crate) ctx: Rc<Shared<D>>,
    /// `None` once destroyed.
    pub(crate) cq: RefCell<Option<rnic_driver::CompletionQueue>>,
    pub(crate) cqn: u16,
}

impl<D: Device> CqInner<D> {
    pub(crate) fn with<R>(
        &self,
        f: impl FnOnce(&mut rnic_driver::CompletionQueue) -> Result<R>,
    ) -> Result<R> {
        let mut g = self.cq.borrow_mut();
        match g.as_mut() {
            Some(cq) => f(cq),
            None => Err(VerbsError::InvalidArgument(format!(
                "completion queue {} is destroyed",
                self.cqn
            ))),
        }
    }

    fn destroy(&self) -> Result<()> {
        let cq = self.cq.borrow_mut().take();
        match cq {
            Some(cq) => Ok(self.ctx.nic.destroy_cq(cq)?),
            None => Ok(()),
        }
    }
}

impl<D: Device> Drop for CqInner<D> {
    fn drop(&mut self) {
        let _ = self.destroy();
    }
}

/// A completion queue (`ibv_cq`). Queue pairs using it keep it alive.
pub struct CompletionQueue<D: Device> {
    pub(crate) inner: Rc<CqInner<D>>,
    entries: u32,
}

impl<D: Device> Context<D> {
    /// `ibv_create_cq`: a CQ of at least `cqe` entries (rounded up to a
    /// power of two, at least 2, at most 32768).
    pub fn create_cq(&self, cqe: u32) -> Result<CompletionQueue<D>> {
        if cqe == 0 || cqe > MAX_RING_ENTRIES {
            return Err(VerbsError::InvalidArgument(format!(
                "CQ size {cqe}: must be 1..={MAX_RING_ENTRIES}"
            )));
        }
        let entries = cqe.next_power_of_two().max(MIN_RING_ENTRIES);
        let cq = self.shared.nic.create_cq(entries)?;
        Ok(CompletionQueue {
            inner: Rc::new(CqInner {
                ctx: self.shared.clone(),
                cqn: cq.cqn(),
                cq: RefCell::new(Some(cq)),
            }),
            entries,
        })
    }
}

impl<D: Device> CompletionQueue<D> {
    /// The CQ number (the queue manager's CQ index).
    pub fn cq_num(&self) -> u16 {
        self.inner.cqn
    }

    /// Number of entries (the size actually allocated).
    pub fn cqe(&self) -> u32 {
        self.entries
    }

    /// `ibv_poll_cq`: moves up to `wc.len()` completions into `wc`, oldest
    /// first, and returns how many. Every CQE retires its WQE and the
    /// earlier, unsignaled WQEs of the same queue.
    pub fn poll(&self, wc: &mut [WorkCompletion]) -> Result<usize> {
        let nic = &self.inner.ctx.nic;
        self.inner.with(|cq| {
            let mut slots = wc.iter_mut();
            Ok(nic.poll_cq_with(cq, slots.len(), |c| {
                if let Some(slot) = slots.next() {
                    *slot = WorkCompletion::from_cqe(&c);
                }
            })?)
        })
    }

    /// Polls one completion.
    pub fn poll_one(&self) -> Result<Option<WorkCompletion>> {
        let mut wc = [WorkCompletion::default()];
        Ok((self.poll(&mut wc)? == 1).then_some(wc[0]))
    }

    /// `ibv_req_notify_cq`: arm the CQ; the next CQE written to it raises
    /// its interrupt ([`CompletionQueue::wait_event`]). The NIC has no
    /// solicited-only mode, so `solicited_only` arms for any completion (a
    /// spurious wake-up that libibverbs callers handle by polling anyway).
    ///
    /// Arm, then poll once more before waiting: a CQE that arrived before
    /// the arm raises no interrupt. When this returns the arm is in effect
    /// and every CQE issued before it is in host memory
    /// ([`rnic_driver::Nic::arm_cq`] reads a register after the arm), so
    /// that poll misses nothing.
    pub fn req_notify(&self, solicited_only: bool) -> Result<()> {
        let _ = solicited_only;
        let nic = &self.inner.ctx.nic;
        self.inner.with(|cq| Ok(nic.arm_cq(cq)?))
    }

    /// Waits for the interrupt of an armed CQ (`ibv_get_cq_event`), for at
    /// most `budget` cycles of [`Device::now`] on every backend (simulated
    /// cycles; on a PCI function, cycles of the backend's nominal clock,
    /// `budget / clock_mhz()` microseconds).
    pub fn wait_event(&self, budget: u64) -> Result<IrqWait> {
        let nic = &self.inner.ctx.nic;
        self.inner.with(|cq| Ok(nic.wait_cq_event(cq, budget)?))
    }

    /// CQEs whose WQE counter named no outstanding WQE (see
    /// [`rnic_driver::CompletionQueue::counter_mismatches`]).
    pub fn counter_mismatches(&self) -> u64 {
        self.inner
            .with(|cq| Ok(cq.counter_mismatches()))
            .unwrap_or(0)
    }

    /// The NIC was seen not filling in the CQE's WQE counter (see
    /// [`rnic_driver::CompletionQueue::counter_ignored`]): every CQE then
    /// retires one WQE, so unsignaled WQEs would never be retired.
    pub fn counter_ignored(&self) -> bool {
        self.inner
            .with(|cq| Ok(cq.counter_ignored()))
            .unwrap_or(false)
    }

    /// `ibv_destroy_cq`: fails with [`VerbsError::Busy`] while queue pairs
    /// use the CQ (it is then destroyed with the last of them).
    pub fn destroy(self) -> Result<()> {
        if Rc::strong_count(&self.inner) > 1 {
            return Err(VerbsError::Busy("completion queue"));
        }
        self.inner.destroy()
    }

    pub(crate) fn check_ctx(&self, ctx: &Context<D>) -> Result<()> {
        if Rc::ptr_eq(&self.inner.ctx, &ctx.shared) {
            Ok(())
        } else {
            Err(VerbsError::ForeignObject("completion queue"))
        }
    }
}

impl<D: Device> std::fmt::Debug for CompletionQueue<D> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CompletionQueue")
            .field("cq_num", &self.inner.cqn)
            .field("cqe", &self.entries)
            .finish()
    }
}
