//! QPs the NIC caches (issue 19). Once the host has set the cache's slots
//! ([`Nic::set_qp_cache`]), a QP needs no slot of its own: its state lives
//! in record n of the host's context table (n its QP number) and in
//! whichever cache slot the NIC fetches it into. The host programs it
//! through a held fetch ([`Nic::with_qp_held`]), rings its queues by number
//! and retires its CQEs by number, so it never needs to know where the QP
//! is. The host's own slots (DMA copy queues, QPs created before the cache
//! was set) stay below the cache's first slot.

use std::collections::HashSet;

use rnic_device::Device;

use crate::{CompletionQueue, DriverError, Nic, RecvQueue, Result, SendQueue};

/// Widest QP number a doorbell names (`sq_dbn.qpn`, `rq_dbn.qpn`).
const DOORBELL_QPN_END: u32 = 1 << 16;

/// The most QPs a build can cache (0: no cache): QP numbers from
/// [`crate::qp_directory::FIRST_QP_NUM`] below both the directory's
/// `2^qpn_bits` and the doorbells' 2^16, given a table that large. A build
/// caches with a directory, a context engine and the record port.
pub fn max_cached_qps(qpn_bits: u32, ctx_fills: u32, rec_words: u32) -> u32 {
    if qpn_bits == 0 || ctx_fills == 0 || rec_words == 0 {
        return 0;
    }
    (1u32 << qpn_bits.min(24))
        .min(DOORBELL_QPN_END)
        .saturating_sub(crate::qp_directory::FIRST_QP_NUM)
}

impl<D: Device> Nic<D> {
    /// The cache's first slot, once [`Nic::set_qp_cache`] set one below
    /// `num_queues` with misses fetching (None: every slot is the host's,
    /// or the host moves QPs itself).
    pub fn qp_cache_first(&self) -> Option<u16> {
        let f = self.cache_first.get();
        (u32::from(f) < self.id().num_queues).then_some(f)
    }

    /// Opens a context table of `records` records and makes every slot
    /// above the driver's own send queues a cache slot, misses fetching:
    /// from then on [`Nic::alloc_cached_qp_num`] hands out numbers below
    /// `records` (and 2^16, the doorbells' width). Returns the cache's
    /// first slot.
    pub fn enable_qp_cache(&self, records: u32) -> Result<u16> {
        if self.qpn_bits() == 0 || self.id().ctx_fills == 0 {
            return Err(DriverError::InvalidArg(
                "this build has no QP cache (it needs id.qpn_bits and id.ctx_fills)".into(),
            ));
        }
        let first = self
            .sq_used
            .borrow()
            .iter()
            .rposition(|&u| u)
            .map_or(0, |s| s + 1);
        if first as u32 >= self.id().num_queues {
            return Err(DriverError::InvalidArg(format!(
                "every one of the {} slots holds a queue of this driver: none is left for the cache",
                self.id().num_queues
            )));
        }
        self.qp_ctx_table_open(records)?;
        self.set_qp_cache(first as u16, true)?;
        Ok(first as u16)
    }

    /// How many QPs the NIC can cache: QP numbers below both the open
    /// context table's records and the doorbells' 16 bits, from
    /// [`crate::qp_directory::FIRST_QP_NUM`] on (0 without a cache).
    pub fn cached_qp_capacity(&self) -> u32 {
        if self.qp_cache_first().is_none() || self.qpn_bits() == 0 {
            return 0;
        }
        self.cached_qpn_end()
            .saturating_sub(crate::qp_directory::FIRST_QP_NUM)
    }

    fn cached_qpn_end(&self) -> u32 {
        let dir_end = 1u32 << self.qpn_bits().min(24);
        self.qp_ctx_table_records()
            .min(DOORBELL_QPN_END)
            .min(dir_end)
    }

    /// Hands out a QP number for a cached QP (cyclically, as
    /// [`Nic::bind_qp_num`] does), below [`Nic::cached_qp_capacity`]'s end.
    pub fn alloc_cached_qp_num(&self) -> Result<u32> {
        if self.qp_cache_first().is_none() {
            return Err(DriverError::InvalidArg(
                "no QP cache is set (Nic::set_qp_cache)".into(),
            ));
        }
        let end = self.cached_qpn_end();
        let mut q = self.qp_nums.borrow_mut();
        let n = q
            .pick_below(end, &HashSet::new())
            .ok_or(DriverError::NoFreeQpNumber {
                bits: end.next_power_of_two().trailing_zeros(),
                used: q.used_count(),
            })?;
        q.take(n);
        Ok(n)
    }

    /// Returns a cached QP's number (its QP in RESET, its queues
    /// destroyed). The NIC may keep it bound to a cache slot holding the
    /// QP in RESET until it is evicted; a packet for it is dropped there.
    pub fn free_cached_qp_num(&self, n: u32) {
        self.qp_nums.borrow_mut().give_back(n);
    }

    /// Enables the send queue of cached QP `qpn`, which the NIC holds in
    /// `slot` (call it inside [`Nic::with_qp_held`]), with a ring of
    /// `entries` WQEs completing to `cq`.
    pub fn create_cached_sq(
        &self,
        qpn: u32,
        slot: u16,
        entries: u32,
        cq: &mut CompletionQueue,
    ) -> Result<SendQueue> {
        self.enable_sq(slot, Some(qpn), entries, cq)
    }

    /// Allocates the receive ring of cached QP `qpn` (`entries` WQEs; `slot`
    /// the one it is held in now), whose CQEs `cq` retires. The NIC learns
    /// the ring through the QP's context, as for [`Nic::create_rq`].
    pub fn create_cached_rq(
        &self,
        qpn: u32,
        slot: u16,
        entries: u32,
        cq: &mut CompletionQueue,
    ) -> Result<RecvQueue> {
        self.new_rq(slot, Some(qpn), entries, cq)
    }
}
