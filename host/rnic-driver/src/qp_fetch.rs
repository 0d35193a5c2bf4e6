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
    pub fn set_qp_cache(&self, first: u16, misses: bool) -> Result<()> {
        self.io().csr().qp().qp_cache_first().try_write(|r| {
            r.set_first(first);
            r.set_auto(misses);
        })?;
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

    /// Fetches QP number `qpn` into a slot the NIC picks (see the module).
    /// Needs an open context table holding record `qpn`.
    pub fn qp_fetch(&self, qpn: u32) -> Result<Fetched> {
        if self.qpn_bits() == 0 || self.id().ctx_fills == 0 {
            return Err(DriverError::QpFetch { qpn, code: 1 });
        }
        self.ctx_table_buf(qpn)?;
        let io = self.io();
        let qp = io.csr().qp();
        qp.qp_fetch().try_write(|r| r.set_qpn(qpn))?;
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
