//! rnic queues over any [`Device`]: completion queues, send queues, work
//! requests, doorbells and completion polling.
//!
//! Ring memory is DMA memory owned by the host; the NIC only keeps indices.
//! CQEs carry an owner/phase bit that flips on every pass over the ring, so
//! the host knows a CQE is new without any register read. Between seeing the
//! phase bit and reading the CQE (and then the data it names), the host
//! issues an acquire fence: the last layer of the ordering contract.

pub mod ring;

use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::sync::atomic::{fence, Ordering};

use rnic_device::{Device, DeviceError, DmaBuffer, IrqWait};
use rnic_regs::DeviceIo;

pub use ring::{CopyWr, Cqe, WcStatus, WrOpcode, CQE_SIZE, WQE_SIZE};

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
    #[error("the NIC refused the command on queue {qn}: error code {code} ({})", error_name(*code))]
    Refused { code: u8, qn: u16 },
}

pub type Result<T> = std::result::Result<T, DriverError>;

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
        7 => "doorbell beyond the ring size",
        8 => "unknown queue command",
        9 => "unsupported MMIO request",
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
}

/// The queue manager's error registers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ErrorStatus {
    pub code: u8,
    pub qn: u16,
    pub count: u32,
}

/// A completion queue: a ring of CQEs in host memory.
pub struct CompletionQueue {
    cqn: u16,
    entries: u32,
    ring: DmaBuffer,
    ci: u32,
    /// Send queues reporting here, with their host-side consumer index.
    sqs: Vec<(u16, Rc<Cell<u32>>)>,
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
}

/// A send queue: a ring of WQEs in host memory.
pub struct SendQueue {
    qn: u16,
    entries: u32,
    ring: DmaBuffer,
    pi: u32,
    ci: Rc<Cell<u32>>,
}

impl SendQueue {
    pub fn qn(&self) -> u16 {
        self.qn
    }
    pub fn entries(&self) -> u32 {
        self.entries
    }
    /// Work requests posted and not yet completed.
    pub fn outstanding(&self) -> u32 {
        self.pi.wrapping_sub(self.ci.get())
    }
    pub fn ring(&self) -> &DmaBuffer {
        &self.ring
    }
}

/// An rnic function, opened over a device backend.
pub struct Nic<D: Device> {
    dev: D,
    id: IdInfo,
    sq_used: RefCell<Vec<bool>>,
    cq_used: RefCell<Vec<bool>>,
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
            }
        };
        let n = id.num_queues as usize;
        Ok(Self {
            dev,
            id,
            sq_used: RefCell::new(vec![false; n]),
            cq_used: RefCell::new(vec![false; n]),
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

    /// Debug switch: write CQEs with Relaxed Ordering so they may pass their
    /// payload. Breaks the ordering contract on purpose, for tests.
    pub fn set_break_cqe_ro(&self, on: bool) -> Result<()> {
        self.io()
            .csr()
            .dma()
            .debug()
            .try_write(|r| r.set_cqe_ro(on))?;
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
        let mut u = used.borrow_mut();
        let n = u.len() as u32;
        let i = u
            .iter()
            .position(|x| !x)
            .ok_or(DriverError::NoFreeQueue(n))?;
        u[i] = true;
        Ok(i as u16)
    }

    fn check_entries(entries: u32) -> Result<()> {
        if !entries.is_power_of_two() || !(2..=32768).contains(&entries) {
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
            sqs: Vec::new(),
        })
    }

    /// Creates a send queue of `entries` WQEs completing to `cq`.
    pub fn create_sq(&self, entries: u32, cq: &mut CompletionQueue) -> Result<SendQueue> {
        Self::check_entries(entries)?;
        let qn = Self::alloc_qn(&self.sq_used)?;
        let ring = self.dev.alloc_dma(entries as usize * WQE_SIZE)?;
        if let Err(e) = self.queue_command(qn, QueueCmd::EnableSq, ring.bus_addr(), entries, cq.cqn)
        {
            self.sq_used.borrow_mut()[qn as usize] = false;
            return Err(e);
        }
        let ci = Rc::new(Cell::new(0));
        cq.sqs.push((qn, ci.clone()));
        Ok(SendQueue {
            qn,
            entries,
            ring,
            pi: 0,
            ci,
        })
    }

    /// Writes a WQE with any opcode byte into the send queue (no doorbell).
    pub fn post_raw(&self, sq: &mut SendQueue, opcode: u8, wr: &CopyWr) -> Result<()> {
        if sq.outstanding() >= sq.entries {
            return Err(DriverError::QueueFull(sq.qn));
        }
        let slot = (sq.pi % sq.entries) as usize * WQE_SIZE;
        sq.ring.write(slot, &ring::encode_wqe(opcode, wr));
        sq.pi = sq.pi.wrapping_add(1);
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
        let pi = (sq.pi & 0xffff) as u16;
        self.io().csr().queue().sq_db().try_write(|r| {
            r.set_qn(sq.qn);
            r.set_pi(pi);
        })?;
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
        let mut n = 0;
        while n < max {
            let slot = (cq.ci % cq.entries) as usize * CQE_SIZE;
            let expect = (cq.ci / cq.entries).is_multiple_of(2);
            if (cq.ring.read_u8(slot + CQE_SIZE - 1) & 1 != 0) != expect {
                break;
            }
            // Owner bit seen: only now may the CQE (and its data) be read.
            fence(Ordering::Acquire);
            let mut raw = [0u8; CQE_SIZE];
            cq.ring.read(slot, &mut raw);
            let cqe = Cqe::decode(&raw);
            if let Some((_, ci)) = cq.sqs.iter().find(|(qn, _)| u32::from(*qn) == cqe.qn) {
                ci.set(ci.get().wrapping_add(1));
            }
            out.push(cqe);
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
    pub fn arm_cq(&self, cq: &CompletionQueue) -> Result<()> {
        let cqn = cq.cqn;
        self.io()
            .csr()
            .queue()
            .cq_arm()
            .try_write(|r| r.set_cqn(cqn))?;
        Ok(())
    }

    /// Waits for the MSI of an armed CQ.
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
