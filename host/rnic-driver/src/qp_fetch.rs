//! The NIC's fetch of a QP by number (BAR0 `qp_block.qp_fetch`, issue 19):
//! the NIC picks one of the cache's slots (`qp_cache_first` ..
//! `num_queues`), writes the idle QP it evicts back to the context table
//! at that QP number's record, loads the fetched QP from its own record
//! (record n is QP number n's) and rebinds the directory, all while the
//! slot's packets are held. The cache's miss path in its first form, run
//! on the host's command.
//!
//! The driver's slots stay the QPs' home slots: its queue objects ring by
//! QP number and retire CQEs by QP number, so they reach a QP wherever the
//! NIC has put it. What names a slot (the QP window, `qp.status()`, the
//! record window) reaches the QP only while it is in its home slot.

use rnic_device::Device;

use crate::{DriverError, Nic, Result};

/// What `qp_fetch_status.err` means.
pub fn fetch_error_name(code: u8) -> &'static str {
    match code {
        0 => "done",
        1 => "this build has no fetch (no QP directory or no context engine)",
        2 => "the table read failed (the slot's QP and binding are as they were)",
        3 => "the QP number is beyond the context table or the directory",
        5 => "no slot: every cache slot's QP had work in flight, a context command on it, or a record beyond the table",
        6 => "the directory refused a bind (a fault)",
        _ => "unknown",
    }
}

/// The context cache's counters since reset (BAR0 `qp_block`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CacheCounters {
    /// Directory lookups: every received packet's and every doorbell by
    /// number's first (`qp_lookups`).
    pub lookups: u32,
    /// Of those, the ones whose QP no slot held (`qp_lookup_misses`).
    pub lookup_misses: u32,
    /// Fetches misses started, retries included (`qp_fetch_misses`).
    pub fetch_misses: u32,
    /// QPs written back and unbound to make room (`qp_fetch_evictions`).
    pub evictions: u32,
    /// Fetches that found every cache slot pinned (`qp_fetch_full`).
    pub pinned_full: u32,
    /// Doorbells by number waiting now, and at most at once
    /// (`qp_db_waiting`: the miss queue's high-water mark).
    pub db_waiting: u8,
    pub db_waiting_max: u8,
    /// Slots written back to the table, every cause (`qp_ctx_writebacks`).
    pub writebacks: u32,
}

impl CacheCounters {
    /// Lookups that found their QP on chip, over all lookups (None: none).
    pub fn hit_rate(&self) -> Option<f64> {
        (self.lookups > 0).then(|| 1.0 - f64::from(self.lookup_misses) / f64::from(self.lookups))
    }

    /// The counts from `before` to `self` (counters wrap; the two gauges
    /// are `self`'s).
    pub fn since(&self, before: &CacheCounters) -> CacheCounters {
        CacheCounters {
            lookups: self.lookups.wrapping_sub(before.lookups),
            lookup_misses: self.lookup_misses.wrapping_sub(before.lookup_misses),
            fetch_misses: self.fetch_misses.wrapping_sub(before.fetch_misses),
            evictions: self.evictions.wrapping_sub(before.evictions),
            pinned_full: self.pinned_full.wrapping_sub(before.pinned_full),
            writebacks: self.writebacks.wrapping_sub(before.writebacks),
            ..*self
        }
    }
}

/// A fetch's result.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fetched {
    /// The slot that holds the QP now.
    pub slot: u16,
    /// A record was loaded (false: the QP was on chip already).
    pub loaded: bool,
    /// The QP number written back and unbound to make room, if any.
    pub evicted: Option<u32>,
}

impl<D: Device> Nic<D> {
    /// The cache's slots: `first` .. `num_queues - 1` (`qp_cache_first`).
    /// The host keeps what it manages itself (DMA copy queues, QPs it keeps
    /// on chip) below `first`. With `misses`, a packet or a doorbell for a
    /// QP number no slot holds, within the context table, makes the NIC
    /// fetch the QP itself (the packet waits in the receive stage, the
    /// doorbell's MMIO write for the fetch); without, such a packet is
    /// dropped and such a doorbell refused.
    /// With `misses`, send queues the driver creates later get slots below `first`, and
    /// verbs QPs none (see `cached_qp.rs`); the
    /// driver's queues in slots from `first` on stay where they are until
    /// the NIC evicts their QPs (they ring and retire by number, so they
    /// reach their QPs wherever the NIC puts them).
    pub fn set_qp_cache(&self, first: u16, misses: bool) -> Result<()> {
        self.io().csr().qp().qp_cache_first().try_write(|r| {
            r.set_first(first);
            r.set_auto(misses);
        })?;
        // (without misses, the host moves QPs itself: its queues keep their slots)
        let none = u16::try_from(self.id().num_queues).unwrap_or(u16::MAX);
        self.cache_first.set(if misses { first } else { none });
        Ok(())
    }

    /// Fetches started by misses, and QPs evicted (by any fetch), since
    /// reset (`qp_fetch_misses`, `qp_fetch_evictions`).
    pub fn qp_fetch_counters(&self) -> Result<(u32, u32)> {
        let io = self.io();
        let qp = io.csr().qp();
        Ok((
            qp.qp_fetch_misses().try_read()?.value(),
            qp.qp_fetch_evictions().try_read()?.value(),
        ))
    }

    /// Every counter of the context cache (see [`CacheCounters`]).
    pub fn qp_cache_counters(&self) -> Result<CacheCounters> {
        let io = self.io();
        let qp = io.csr().qp();
        let w = qp.qp_db_waiting().try_read()?;
        Ok(CacheCounters {
            lookups: qp.qp_lookups().try_read()?.value(),
            lookup_misses: qp.qp_lookup_misses().try_read()?.value(),
            fetch_misses: qp.qp_fetch_misses().try_read()?.value(),
            evictions: qp.qp_fetch_evictions().try_read()?.value(),
            pinned_full: qp.qp_fetch_full().try_read()?.value(),
            db_waiting: w.now(),
            db_waiting_max: w.max(),
            writebacks: qp.qp_ctx_writebacks().try_read()?.value(),
        })
    }

    /// Fetches QP number `qpn` into a slot the NIC picks (see the module).
    /// Needs an open context table holding record `qpn`. Drops the hold of
    /// [`Nic::with_qp_held`], if one were in force.
    pub fn qp_fetch(&self, qpn: u32) -> Result<Fetched> {
        self.fetch_command(qpn, false)
    }

    /// Runs `f` with QP number `qpn` in a slot the NIC keeps it in until
    /// `f` returns (`qp_fetch.hold`): `f` gets the slot, to program the QP
    /// through the slot's windows (`qp_sel`, `q_sel`) while misses go on
    /// fetching other QPs. The QP is fetched first if it is not on chip.
    /// The hold is dropped whatever `f` returns. Not reentrant: the NIC
    /// holds one slot at a time.
    pub fn with_qp_held<T, E: From<DriverError>>(
        &self,
        qpn: u32,
        f: impl FnOnce(u16) -> std::result::Result<T, E>,
    ) -> std::result::Result<T, E> {
        let got = self.fetch_command(qpn, true)?;
        let out = f(got.slot);
        let dropped = self
            .io()
            .csr()
            .qp()
            .qp_fetch()
            .try_write(|r| r.set_unhold(true));
        let v = out?;
        dropped.map_err(DriverError::from)?;
        Ok(v)
    }

    /// Whether the NIC holds a slot for the host now (`qp_fetch_status.held`).
    pub fn qp_held(&self) -> Result<bool> {
        Ok(self.io().csr().qp().qp_fetch_status().try_read()?.held())
    }

    fn fetch_command(&self, qpn: u32, hold: bool) -> Result<Fetched> {
        if self.qpn_bits() == 0 || self.id().ctx_fills == 0 {
            return Err(DriverError::QpFetch { qpn, code: 1 });
        }
        self.ctx_table_buf(qpn)?;
        let io = self.io();
        let qp = io.csr().qp();
        qp.qp_fetch().try_write(|r| {
            r.set_qpn(qpn);
            r.set_hold(hold);
        })?;
        // MMIO waits while the fetch runs: this read sees its result.
        let st = qp.qp_fetch_status().try_read()?;
        if st.err() != 0 {
            return Err(DriverError::QpFetch {
                qpn,
                code: st.err(),
            });
        }
        let evicted = if st.evicted() {
            Some(qp.qp_fetch_victim().try_read()?.qpn())
        } else {
            None
        };
        Ok(Fetched {
            slot: st.slot(),
            loaded: st.loaded(),
            evicted,
        })
    }
}
