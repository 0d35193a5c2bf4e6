//! The QP context table in host memory (BAR0 `qp_block.qp_ctx_*`, issue
//! 19): one record of `id.qp_rec_words` 64-bit words per QP, in the layout
//! of the record window ([`Nic::read_qp_record`]). The NIC's fill engine
//! moves a slot's record to or from the table by DMA: a load reads a
//! record into a slot, a save writes a slot back to a record and reads it
//! back. The context cache will issue these itself on its misses; for now
//! the host does, so a QP can be parked in host memory and brought back.
//!
//! The driver owns the table: it allocates it, tells the NIC its place and
//! size, and refuses to free it while a command runs or to move a record
//! beyond it. The NIC checks the bound too and never reads or writes
//! outside the table.

use rnic_device::{Device, DmaBuffer};

use crate::{DriverError, Nic, Result};

const OP_LOAD: u8 = 1;
const OP_SAVE_LOAD: u8 = 2;

/// Records a table can hold (`qp_ctx_records` is 25 bits: 0 to 2^24).
pub const MAX_CTX_RECORDS: u32 = 1 << 24;

/// Simulated cycles (or nominal cycles on hardware) a command may take:
/// two DMA round trips of 512 bytes and two copies of 64 words.
const CMD_BUDGET: u64 = 2_000_000;

/// `qp_ctx_status.err` of a command refused because its slot's QP had
/// work in flight (the pin): nothing moved; try again once it is idle.
pub const CTX_ERR_PINNED: u8 = 7;

/// What `qp_ctx_status.err` means.
pub fn ctx_error_name(code: u8) -> &'static str {
    match code {
        0 => "done",
        1 => "this build has no context engine",
        2 => "the table read failed (the slot is untouched)",
        3 => "record beyond the table",
        4 => "bad op",
        5 => "refused: a command or the record window was running",
        6 => "slot beyond id.num_queues",
        CTX_ERR_PINNED => {
            "refused: the slot's QP has work in flight (WQEs, packets, ACKs or completions)"
        }
        _ => "unknown",
    }
}

/// `qp_ctx_status` as read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CtxStatus {
    pub busy: bool,
    pub err: u8,
    /// The engine saw a DMA status it did not expect (sticky until reset).
    pub fault: bool,
    /// Commands answered since reset (wraps at 2^16).
    pub done: u16,
}

/// The fill engine's counters since reset (`qp_ctx_fills`, `_writebacks`,
/// `_fails`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CtxCounters {
    /// Records loaded into slots.
    pub fills: u32,
    /// Slots written back to the table.
    pub writebacks: u32,
    /// Loads whose table read failed.
    pub fails: u32,
}

impl<D: Device> Nic<D> {
    /// Bytes of one record in the host table (0: no record port).
    pub fn qp_ctx_record_bytes(&self) -> usize {
        self.id().qp_rec_words as usize * 8
    }

    /// Allocates a context table of `records` records in host memory and
    /// gives its place and size to the NIC.
    pub fn qp_ctx_table_open(&self, records: u32) -> Result<()> {
        let rb = self.qp_ctx_record_bytes();
        if rb == 0 {
            return Err(DriverError::InvalidArg(
                "this build has no record port (id.qp_rec_words is 0): no context table".into(),
            ));
        }
        if records == 0 || records > MAX_CTX_RECORDS {
            return Err(DriverError::InvalidArg(format!(
                "a context table holds 1 to {MAX_CTX_RECORDS} records, not {records}"
            )));
        }
        if self.ctx_table.borrow().is_some() {
            return Err(DriverError::InvalidArg(
                "a context table is open already: close it first".into(),
            ));
        }
        let buf = self.dev.alloc_dma(records as usize * rb)?;
        if buf.bus_addr() % rb as u64 != 0 {
            let _ = self.dev.free_dma(&buf);
            return Err(DriverError::InvalidArg(format!(
                "the table's bus address {:#x} is not aligned to a record ({rb} bytes)",
                buf.bus_addr()
            )));
        }
        let io = self.io();
        let qp = io.csr().qp();
        qp.qp_ctx_base_lo()
            .try_write(|r| r.set_addr(buf.bus_addr() as u32))?;
        qp.qp_ctx_base_hi()
            .try_write(|r| r.set_addr((buf.bus_addr() >> 32) as u32))?;
        qp.qp_ctx_records().try_write(|r| r.set_records(records))?;
        *self.ctx_table.borrow_mut() = Some(buf);
        Ok(())
    }

    /// Records the open table holds (0: none open).
    pub fn qp_ctx_table_records(&self) -> u32 {
        let rb = self.qp_ctx_record_bytes();
        self.ctx_table
            .borrow()
            .as_ref()
            .map_or(0, |b| (b.len() / rb.max(1)) as u32)
    }

    /// Takes the table from the NIC and frees it. Refused while a command
    /// runs (the NIC may be reading or writing it) and while the QP cache
    /// is on (the NIC fetches from and writes back to it by itself, and
    /// cached QPs live in it).
    pub fn qp_ctx_table_close(&self) -> Result<()> {
        if self.ctx_table.borrow().is_none() {
            return Err(DriverError::InvalidArg("no context table is open".into()));
        }
        if let Some(first) = self.qp_cache_first() {
            return Err(DriverError::InvalidArg(format!(
                "the QP cache is on (slots {first} on): the NIC uses the table by itself; turn the cache off first (set_qp_cache to num_queues), with no cached QP left"
            )));
        }
        if self.qp_ctx_status()?.busy {
            return Err(DriverError::InvalidArg(
                "a context command is running: the NIC may be using the table".into(),
            ));
        }
        let io = self.io();
        io.csr()
            .qp()
            .qp_ctx_records()
            .try_write(|r| r.set_records(0))?;
        let buf = self.ctx_table.borrow_mut().take().expect("checked above");
        self.dev.free_dma(&buf)?;
        Ok(())
    }

    pub(crate) fn ctx_table_buf(&self, record: u32) -> Result<DmaBuffer> {
        let t = self.ctx_table.borrow();
        let buf = t
            .as_ref()
            .ok_or_else(|| DriverError::InvalidArg("no context table is open".into()))?;
        let n = buf.len() / self.qp_ctx_record_bytes();
        if record as usize >= n {
            return Err(DriverError::InvalidArg(format!(
                "record {record} is beyond the context table's {n}"
            )));
        }
        Ok(buf.clone())
    }

    /// Record `record` of the host table, as the host sees it.
    pub fn qp_ctx_record(&self, record: u32) -> Result<Vec<u64>> {
        let buf = self.ctx_table_buf(record)?;
        let rb = self.qp_ctx_record_bytes();
        Ok((0..rb / 8)
            .map(|w| buf.read_u64(record as usize * rb + w * 8))
            .collect())
    }

    /// Writes record `record` of the host table (a QP's state to load).
    pub fn set_qp_ctx_record(&self, record: u32, words: &[u64]) -> Result<()> {
        let buf = self.ctx_table_buf(record)?;
        let rb = self.qp_ctx_record_bytes();
        if words.len() * 8 != rb {
            return Err(DriverError::InvalidArg(format!(
                "a QP record is {} words, not {}",
                rb / 8,
                words.len()
            )));
        }
        for (w, &v) in words.iter().enumerate() {
            buf.write_u64(record as usize * rb + w * 8, v);
        }
        Ok(())
    }

    /// `qp_ctx_status` now.
    pub fn qp_ctx_status(&self) -> Result<CtxStatus> {
        let st = self.io().csr().qp().qp_ctx_status().try_read()?;
        Ok(CtxStatus {
            busy: st.busy(),
            err: st.err(),
            fault: st.fault(),
            done: st.done(),
        })
    }

    /// The fill engine's counters now.
    pub fn qp_ctx_counters(&self) -> Result<CtxCounters> {
        let io = self.io();
        let qp = io.csr().qp();
        Ok(CtxCounters {
            fills: qp.qp_ctx_fills().try_read()?.value(),
            writebacks: qp.qp_ctx_writebacks().try_read()?.value(),
            fails: qp.qp_ctx_fails().try_read()?.value(),
        })
    }

    /// Loads slot `slot` from record `record` of the table. The NIC
    /// refuses a slot whose QP has work in flight ([`CTX_ERR_PINNED`]).
    pub fn qp_ctx_load(&self, slot: u16, record: u32) -> Result<()> {
        self.qp_ctx_command(slot, OP_LOAD, record, 0)
    }

    /// Writes slot `slot` back to record `record`, then loads it from there
    /// again: the record then holds the slot's state, and the slot what the
    /// table returned.
    pub fn qp_ctx_save(&self, slot: u16, record: u32) -> Result<()> {
        self.qp_ctx_command(slot, OP_SAVE_LOAD, record, record)
    }

    /// Writes slot `slot` back to record `wb_record`, then loads it from
    /// record `record`: what the context cache does on a miss that evicts.
    pub fn qp_ctx_swap(&self, slot: u16, wb_record: u32, record: u32) -> Result<()> {
        self.qp_ctx_command(slot, OP_SAVE_LOAD, record, wb_record)
    }

    fn qp_ctx_command(&self, slot: u16, op: u8, record: u32, wb_record: u32) -> Result<()> {
        self.ctx_table_buf(record)?;
        if op == OP_SAVE_LOAD {
            self.ctx_table_buf(wb_record)?;
        }
        self.check_record_qp(slot)?;
        self.qp_ctx_command_raw(slot, op, record, wb_record)
    }

    /// The command as the NIC sees it, without the driver's checks (for
    /// tests of the NIC's own): waits for its answer and maps its error.
    pub fn qp_ctx_command_raw(&self, slot: u16, op: u8, record: u32, wb_record: u32) -> Result<()> {
        let before = self.qp_ctx_status()?;
        self.qp_ctx_post_raw(slot, op, record, wb_record)?;
        self.qp_ctx_wait(before.done.wrapping_add(1), slot, record)
    }

    /// Writes a command and returns at once (up to `id.ctx_fills` run at
    /// once, each on its own slot; the NIC refuses the others). Its answer
    /// counts in `qp_ctx_status.done`: [`Nic::qp_ctx_wait`] waits for it.
    pub fn qp_ctx_post_raw(&self, slot: u16, op: u8, record: u32, wb_record: u32) -> Result<()> {
        let io = self.io();
        let qp = io.csr().qp();
        qp.qp_sel().try_write(|r| r.set_qpn(slot))?;
        qp.qp_ctx_wb().try_write(|r| r.set_record(wb_record))?;
        qp.qp_ctx_cmd().try_write(|r| {
            r.set_record(record);
            r.set_op(op);
        })?;
        Ok(())
    }

    /// Waits until `qp_ctx_status.done` reaches `done` (commands answered
    /// since reset, wrapping) and no command runs; the last answer's error
    /// (`slot` and `record` name it in the error).
    pub fn qp_ctx_wait(&self, done: u16, slot: u16, record: u32) -> Result<()> {
        let st = self
            .qp_ctx_poll(|st| st.done == done && !st.busy)?
            .ok_or(DriverError::CtxTimeout { slot, record })?;
        if st.fault {
            return Err(DriverError::CtxFault);
        }
        match st.err {
            0 => Ok(()),
            code => Err(DriverError::QpCtx { slot, record, code }),
        }
    }

    /// Polls `qp_ctx_status` until `until` holds (that status), or `None`
    /// once the command budget is spent.
    fn qp_ctx_poll(&self, until: impl Fn(&CtxStatus) -> bool) -> Result<Option<CtxStatus>> {
        let start = self.dev.now();
        loop {
            let st = self.qp_ctx_status()?;
            if until(&st) {
                return Ok(Some(st));
            }
            if self.dev.now().saturating_sub(start) > CMD_BUDGET {
                return Ok(None);
            }
            self.dev.idle();
        }
    }
}

impl<D: Device> Drop for Nic<D> {
    /// A table left open is taken from the NIC before its memory goes: the
    /// NIC must not keep the address of freed memory. (A command still
    /// running then has the table freed under it; the driver cannot stop
    /// it, so it waits for it first, within the budget.)
    fn drop(&mut self) {
        if self.ctx_table.get_mut().is_none() {
            return;
        }
        let _ = self.qp_ctx_poll(|st| !st.busy);
        let _ = self
            .io()
            .csr()
            .qp()
            .qp_ctx_records()
            .try_write(|r| r.set_records(0));
        if let Some(buf) = self.ctx_table.get_mut().take() {
            let _ = self.dev.free_dma(&buf);
        }
    }
}
