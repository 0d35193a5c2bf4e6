//! The QP directory (BAR0 `qp_block.qp_bind`, in a build whose
//! `id.qpn_bits` is not 0): QP numbers on the wire are bound by the host
//! to the `num_queues` slots that hold QP state. Registers and send-queue numbers name the
//! slot; packets and CQEs name the QP number. Without a directory QP
//! number n is slot n.
//!
//! Numbers are handed out cyclically (as Linux rxe's pool index does), so
//! a number just freed is not given again at once: a late packet for a
//! destroyed QP is dropped by the NIC instead of reaching its successor.

use std::collections::HashSet;

use rnic_device::Device;

use crate::{DriverError, Nic, Result};

const OP_BIND: u8 = 1;
const OP_UNBIND: u8 = 2;

/// `id.caps` bit: the NIC takes doorbells by QP number (`qp_block.sq_dbn`,
/// `rq_dbn`).
pub const CAP_DOORBELL_BY_QPN: u32 = 1 << 10;

/// QP numbers 0 and 1 are the IB special QPs (SMI, GSI): never handed out.
pub const FIRST_QP_NUM: u32 = 2;

/// Widest QP number (BTH DestQP).
const MAX_QPN_BITS: u32 = 24;

/// What `qp_bind_status.err` means after a bind (`bind` true) or an unbind.
pub fn bind_error_name(code: u8, bind: bool) -> &'static str {
    match code {
        0 => "done",
        1 => "this build has no QP directory",
        2 => "QP number beyond 2^id.qpn_bits",
        3 => "the QP number is bound to another slot already",
        4 if bind => "the slot is bound already",
        4 => "the slot is not bound",
        5 => "slot beyond id.num_queues",
        6 => "bad op",
        _ => "unknown",
    }
}

/// The host's side of the directory.
#[derive(Debug)]
pub(crate) struct QpNumbers {
    /// Numbers run over [FIRST_QP_NUM, end); `end` 0: no directory.
    end: u32,
    /// Where the cyclic search for a free number starts.
    next: u32,
    /// Numbers bound now.
    used: HashSet<u32>,
    /// By slot: the number this driver bound to it, while bound.
    bound: Vec<Option<u32>>,
    /// By slot: the number the NIC's CQEs of the slot name (the number
    /// bound to it last; the NIC keeps it after an unbind). Slot n until
    /// learnt, which is right without a directory.
    cqe_qn: Vec<u32>,
}

impl QpNumbers {
    pub(crate) fn new(qpn_bits: u32, num_queues: u32) -> Self {
        let end = match qpn_bits {
            0 => 0,
            b => 1u32 << b.min(MAX_QPN_BITS),
        };
        Self {
            end,
            next: FIRST_QP_NUM,
            used: HashSet::new(),
            bound: vec![None; num_queues as usize],
            cqe_qn: (0..num_queues).collect(),
        }
    }

    /// The next free number from the cursor on, skipping `skip` as well;
    /// moves the cursor past it.
    fn pick(&mut self, skip: &HashSet<u32>) -> Option<u32> {
        self.pick_below(self.end, skip)
    }

    /// As [`QpNumbers::pick`], among the numbers below `end` as well (a
    /// cached QP's number must name a record of the context table).
    pub(crate) fn pick_below(&mut self, end: u32, skip: &HashSet<u32>) -> Option<u32> {
        let end = end.min(self.end);
        let span = end.saturating_sub(FIRST_QP_NUM);
        if self.next >= end {
            self.next = FIRST_QP_NUM;
        }
        for _ in 0..span {
            let n = self.next;
            self.next = if n + 1 >= end { FIRST_QP_NUM } else { n + 1 };
            if !self.used.contains(&n) && !skip.contains(&n) {
                return Some(n);
            }
        }
        None
    }

    /// The number a CQE of `slot` names.
    pub(crate) fn cqe_qn(&self, slot: u16) -> u32 {
        self.cqe_qn
            .get(usize::from(slot))
            .copied()
            .unwrap_or(u32::from(slot))
    }

    pub(crate) fn cqe_qns(&self) -> &[u32] {
        &self.cqe_qn
    }

    pub(crate) fn used_count(&self) -> usize {
        self.used.len()
    }

    /// Marks `n` in use (a cached QP's number, bound by the NIC).
    pub(crate) fn take(&mut self, n: u32) {
        self.used.insert(n);
    }

    /// Frees a cached QP's number.
    pub(crate) fn give_back(&mut self, n: u32) {
        self.used.remove(&n);
    }
}

impl<D: Device> Nic<D> {
    /// Bits of a QP number the directory holds (`id.qpn_bits`; 0: no
    /// directory, QP number n is slot n).
    pub fn qpn_bits(&self) -> u32 {
        self.id().qpn_bits
    }

    fn check_slot(&self, slot: u16) -> Result<()> {
        if u32::from(slot) >= self.id().num_queues {
            return Err(DriverError::InvalidArg(format!(
                "slot {slot} is beyond the build's {} slots",
                self.id().num_queues
            )));
        }
        Ok(())
    }

    /// Issues one `qp_bind` command on `slot` and returns
    /// `qp_bind_status` (`qpn`, `bound`, `err`).
    fn bind_command(&self, slot: u16, op: u8, qpn: u32) -> Result<(u32, bool, u8)> {
        let io = self.io();
        let qp = io.csr().qp();
        qp.qp_sel().try_write(|r| r.set_qpn(slot))?;
        qp.qp_bind().try_write(|r| {
            r.set_qpn(qpn);
            r.set_op(op);
        })?;
        // MMIO waits while the command runs: this read sees its result.
        let st = qp.qp_bind_status().try_read()?;
        Ok((st.qpn(), st.bound(), st.err()))
    }

    /// Called when `slot` becomes a send queue of this driver (directory
    /// builds only): learns the number its CQEs name, and unbinds a
    /// binding left there by a process that ended without destroying its
    /// QP (the slot is this driver's now).
    pub(crate) fn adopt_slot(&self, slot: u16) -> Result<()> {
        if self.qpn_bits() == 0 {
            return Ok(());
        }
        let (qpn, bound) = {
            let io = self.io();
            let qp = io.csr().qp();
            qp.qp_sel().try_write(|r| r.set_qpn(slot))?;
            let st = qp.qp_bind_status().try_read()?;
            (st.qpn(), st.bound())
        };
        if let Some(c) = self.qp_nums.borrow_mut().cqe_qn.get_mut(usize::from(slot)) {
            *c = qpn;
        }
        if bound {
            let (_, _, err) = self.bind_command(slot, OP_UNBIND, 0)?;
            if err != 0 {
                return Err(DriverError::QpUnbind {
                    slot,
                    qpn,
                    code: err,
                });
            }
        }
        Ok(())
    }

    /// The QP number a CQE of send queue (slot) `slot` names: the number
    /// bound to it last, slot n without a directory.
    pub fn cqe_qn(&self, slot: u16) -> u32 {
        self.qp_nums.borrow().cqe_qn(slot)
    }

    /// The QP number bound to `slot` by this driver, if any (slot n
    /// without a directory).
    pub fn qp_num_of(&self, slot: u16) -> Option<u32> {
        if self.qpn_bits() == 0 {
            return Some(u32::from(slot));
        }
        self.qp_nums
            .borrow()
            .bound
            .get(usize::from(slot))
            .copied()
            .flatten()
    }

    /// The number a doorbell of slot `slot`'s queues names (`sq_dbn`,
    /// `rq_dbn`): the QP number bound to the slot (the slot itself without
    /// a directory), in a build with the doorbells by number (`id.caps`
    /// bit 10). None: ring by slot (a queue without a QP in a directory
    /// build, an older build, a number wider than the doorbell's 16 bits).
    pub(crate) fn doorbell_qpn(&self, slot: u16) -> Option<u16> {
        if self.id().caps & CAP_DOORBELL_BY_QPN == 0 {
            return None;
        }
        self.qp_num_of(slot).and_then(|n| u16::try_from(n).ok())
    }

    /// The number a doorbell of a queue names: a cached QP's number
    /// (`cached`), else as [`Nic::doorbell_qpn`] says for slot `slot`.
    pub(crate) fn queue_doorbell_qpn(&self, slot: u16, cached: Option<u32>) -> Result<Option<u16>> {
        match cached {
            None => Ok(self.doorbell_qpn(slot)),
            Some(n) => u16::try_from(n).map(Some).map_err(|_| {
                DriverError::InvalidArg(format!("QP number {n} is wider than a doorbell's 16 bits"))
            }),
        }
    }

    /// Gives slot `slot` a QP number for the wire and binds it in the
    /// directory; returns the number. Without a directory the number is
    /// the slot and nothing is written. Numbers start at 2 and are handed
    /// out cyclically over [2, 2^qpn_bits), so a freed number is not
    /// given again before the others.
    pub fn bind_qp_num(&self, slot: u16) -> Result<u32> {
        if self.qpn_bits() == 0 {
            return Ok(u32::from(slot));
        }
        self.check_slot(slot)?;
        if let Some(n) = self.qp_num_of(slot) {
            return Err(DriverError::InvalidArg(format!(
                "slot {slot} is bound to QP number {n} already"
            )));
        }
        // Skipped: the number the CQEs of a live send queue without a QP
        // name (its slot's last number; a CQ tells queues apart by it),
        // and a number bound to a slot this driver does not know (left by
        // a process that ended without destroying its QP), at most one
        // try per slot.
        let mut held: HashSet<u32> = {
            let q = self.qp_nums.borrow();
            let sq_used = self.sq_used.borrow();
            (0..sq_used.len())
                .filter(|&s| sq_used[s] && s != usize::from(slot) && q.bound[s].is_none())
                .map(|s| q.cqe_qn[s])
                .collect()
        };
        let tries = self.id().num_queues + 1;
        let mut last = None;
        for _ in 0..tries {
            let Some(n) = self.qp_nums.borrow_mut().pick(&held) else {
                break;
            };
            let (_, _, err) = self.bind_command(slot, OP_BIND, n)?;
            match err {
                0 => {
                    let mut q = self.qp_nums.borrow_mut();
                    q.used.insert(n);
                    q.bound[usize::from(slot)] = Some(n);
                    q.cqe_qn[usize::from(slot)] = n;
                    return Ok(n);
                }
                3 => {
                    held.insert(n);
                    last = Some(DriverError::QpBind {
                        slot,
                        qpn: n,
                        code: err,
                    });
                }
                code => return Err(DriverError::QpBind { slot, qpn: n, code }),
            }
        }
        Err(last.unwrap_or_else(|| {
            let q = self.qp_nums.borrow();
            DriverError::NoFreeQpNumber {
                bits: self.qpn_bits(),
                used: q.used.len(),
            }
        }))
    }

    /// Unbinds slot `slot`'s QP number: packets for it are dropped from
    /// now on, and the number is free again (after every other one). A
    /// no-op without a directory. Call it with the QP in RESET, before its
    /// send queue is released.
    pub fn unbind_qp_num(&self, slot: u16) -> Result<()> {
        if self.qpn_bits() == 0 {
            return Ok(());
        }
        self.check_slot(slot)?;
        let had = {
            let mut q = self.qp_nums.borrow_mut();
            let had = q.bound[usize::from(slot)].take();
            if let Some(n) = had {
                q.used.remove(&n);
            }
            had
        };
        let (qpn, _, err) = self.bind_command(slot, OP_UNBIND, 0)?;
        if err != 0 {
            return Err(DriverError::QpUnbind {
                slot,
                qpn: had.unwrap_or(qpn),
                code: err,
            });
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_go_round_from_2_and_skip_those_in_use() {
        let mut q = QpNumbers::new(2, 4); // numbers 2 and 3
        let none = HashSet::new();
        assert_eq!(q.pick(&none), Some(2));
        q.used.insert(2);
        assert_eq!(q.pick(&none), Some(3));
        q.used.insert(3);
        assert_eq!(q.pick(&none), None);
        q.used.remove(&2);
        assert_eq!(q.pick(&none), Some(2));
        assert_eq!(q.pick(&HashSet::from([3])), Some(2));
    }

    #[test]
    fn numbers_below_a_limit_wrap_at_it() {
        let mut q = QpNumbers::new(8, 4); // numbers 2..256
        let none = HashSet::new();
        assert_eq!(q.pick_below(4, &none), Some(2));
        assert_eq!(q.pick_below(4, &none), Some(3));
        assert_eq!(q.pick_below(4, &none), Some(2));
        q.take(2);
        q.take(3);
        assert_eq!(q.pick_below(4, &none), None);
        q.give_back(3);
        assert_eq!(q.pick_below(4, &none), Some(3));
        q.take(3);
        assert_eq!(q.pick(&none), Some(4));
    }

    #[test]
    fn no_directory_and_oversized_bits() {
        let mut q = QpNumbers::new(0, 4);
        assert_eq!(q.pick(&HashSet::new()), None);
        assert_eq!(q.cqe_qn(3), 3);
        assert_eq!(q.cqe_qn(9), 9);
        assert_eq!(QpNumbers::new(32, 1).end, 1 << 24);
    }
}
