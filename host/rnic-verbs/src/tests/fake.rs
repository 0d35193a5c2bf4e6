//! A fake rnic for unit tests: a register file that records every MMIO
//! write, models the few registers with behaviour (ID block, error counter,
//! QP command and status, the QP directory), and hands out DMA buffers backed by
//! `HostMemory` so tests can read rings and write CQEs.

use std::cell::{Cell, RefCell};
use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use rnic_device::{Device, DeviceError, DmaBuffer, HostMemory, IrqWait, Result};

pub mod reg {
    pub const MAGIC: u64 = 0x00c;
    pub const BUILD_VERSION: u64 = 0x010;
    pub const GIT_HASH: u64 = 0x014;
    pub const DATA_W: u64 = 0x01c;
    pub const NUM_QUEUES: u64 = 0x020;
    pub const VERBS: u64 = 0x024;
    pub const CAPS: u64 = 0x028;
    pub const MRS: u64 = 0x03c;
    pub const QPN_BITS: u64 = 0x048;
    pub const Q_SIZE: u64 = 0x11c;
    pub const Q_CQN: u64 = 0x120;
    pub const Q_CMD: u64 = 0x124;
    pub const SQ_DB: u64 = 0x130;
    pub const CQ_DB: u64 = 0x134;
    pub const CQ_ARM: u64 = 0x138;
    pub const ERR_STATUS: u64 = 0x140;
    pub const ERR_COUNT: u64 = 0x144;
    pub const MAC_LO: u64 = 0x310;
    pub const MAC_HI: u64 = 0x314;
    pub const IPV4: u64 = 0x318;
    pub const TX_FRAMES: u64 = 0x320;
    pub const RX_READ_RESP: u64 = 0x394;
    pub const RX_ATOMIC: u64 = 0x398;
    pub const RX_ATOMIC_REPLAY: u64 = 0x39c;
    pub const RX_RD_OVER: u64 = 0x3a0;
    pub const QP_SEL: u64 = 0x410;
    pub const QP_ATTR: u64 = 0x414;
    pub const QP_DEST: u64 = 0x418;
    pub const QP_SQ_PSN: u64 = 0x41c;
    pub const QP_RQ_PSN: u64 = 0x420;
    pub const QP_DMAC_LO: u64 = 0x424;
    pub const QP_DMAC_HI: u64 = 0x428;
    pub const QP_DIP: u64 = 0x42c;
    pub const QP_PD: u64 = 0x430;
    pub const QP_RQ_BASE_LO: u64 = 0x434;
    pub const QP_RQ_BASE_HI: u64 = 0x438;
    pub const QP_RQ_SIZE: u64 = 0x43c;
    pub const QP_CMD: u64 = 0x440;
    pub const RQ_DB: u64 = 0x444;
    pub const QP_STATUS: u64 = 0x448;
    pub const QP_RETRY: u64 = 0x454;
    pub const QP_BIND: u64 = 0x46c;
    pub const QP_BIND_STATUS: u64 = 0x470;
    pub const MR_SEL: u64 = 0x510;
    pub const MR_KEY: u64 = 0x514;
    pub const MR_VA_LO: u64 = 0x518;
    pub const MR_VA_HI: u64 = 0x51c;
    pub const MR_LEN: u64 = 0x520;
    pub const MR_BUS_LO: u64 = 0x524;
    pub const MR_BUS_HI: u64 = 0x528;
    pub const MR_ATTR: u64 = 0x52c;
    pub const MR_CMD: u64 = 0x530;
}

/// The staged QP registers at the moment of a `qp_cmd` write.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QpCommit {
    pub qpn: u16,
    pub op: u32,
    /// Staged register values by offset (0x414..=0x43c).
    pub staged: HashMap<u64, u32>,
}

impl QpCommit {
    pub fn get(&self, off: u64) -> u32 {
        self.staged.get(&off).copied().unwrap_or(0)
    }
}

pub struct FakeDev {
    pub num_queues: u32,
    /// The `id.verbs` register (the build's verb set).
    pub verbs: Cell<u32>,
    /// The `id.caps` register (bit 5 mp, bit 6 rc, 7 READ served, 8 READ
    /// issued, 9 atomics executed); 0x7F by default (no READ, no atomics).
    pub caps: Cell<u32>,
    /// The `id.mrs` register (MR table entries; 0, the default, as a build
    /// older than the register reads). Read when a context opens.
    pub mrs: Cell<u32>,
    /// The `id.qpn_bits` register (0, the default: no QP directory). Read
    /// when a context opens.
    pub qpn_bits: Cell<u32>,
    /// The directory by slot: (QP number bound last, bound now).
    dir: RefCell<HashMap<u16, (u32, bool)>>,
    /// Result of the last `qp_bind` command.
    bind_err: Cell<u32>,
    /// The next bind fails with this code.
    fail_bind: Cell<Option<u32>>,
    regs: RefCell<HashMap<u64, u32>>,
    writes: RefCell<Vec<(u64, u32)>>,
    qp_state: RefCell<HashMap<u16, u8>>,
    commits: RefCell<Vec<QpCommit>>,
    err_count: Cell<u32>,
    refuse: RefCell<HashSet<u64>>,
    next_bus: Cell<u64>,
    bufs: RefCell<Vec<DmaBuffer>>,
    freed: RefCell<Vec<u64>>,
    irq: Cell<bool>,
}

impl FakeDev {
    pub fn new(num_queues: u32) -> Self {
        Self {
            num_queues,
            verbs: Cell::new(0x1F),
            caps: Cell::new(0x7F),
            mrs: Cell::new(0),
            qpn_bits: Cell::new(0),
            dir: RefCell::new(HashMap::new()),
            bind_err: Cell::new(0),
            fail_bind: Cell::new(None),
            regs: RefCell::new(HashMap::new()),
            writes: RefCell::new(Vec::new()),
            qp_state: RefCell::new(HashMap::new()),
            commits: RefCell::new(Vec::new()),
            err_count: Cell::new(0),
            refuse: RefCell::new(HashSet::new()),
            next_bus: Cell::new(0x1_0000_0000),
            bufs: RefCell::new(Vec::new()),
            freed: RefCell::new(Vec::new()),
            irq: Cell::new(false),
        }
    }

    /// Every MMIO write so far, in order.
    pub fn writes(&self) -> Vec<(u64, u32)> {
        self.writes.borrow().clone()
    }

    /// Forgets recorded writes and QP commits (not register contents).
    pub fn clear_log(&self) {
        self.writes.borrow_mut().clear();
        self.commits.borrow_mut().clear();
    }

    /// Writes to `off` since the last `clear_log`.
    pub fn writes_to(&self, off: u64) -> Vec<u32> {
        self.writes
            .borrow()
            .iter()
            .filter(|(o, _)| *o == off)
            .map(|(_, v)| *v)
            .collect()
    }

    pub fn commits(&self) -> Vec<QpCommit> {
        self.commits.borrow().clone()
    }

    pub fn reg(&self, off: u64) -> u32 {
        self.regs.borrow().get(&off).copied().unwrap_or(0)
    }

    pub fn set_reg(&self, off: u64, v: u32) {
        self.regs.borrow_mut().insert(off, v);
    }

    /// The NIC moves a QP to another state by itself (e.g. ERR).
    pub fn set_qp_state(&self, qpn: u16, state: u8) {
        self.qp_state.borrow_mut().insert(qpn, state);
    }

    pub fn qp_state(&self, qpn: u16) -> u8 {
        self.qp_state.borrow().get(&qpn).copied().unwrap_or(0)
    }

    /// The next write to command register `off` is refused (error counter
    /// moves, nothing applied).
    pub fn refuse_next(&self, off: u64) {
        self.refuse.borrow_mut().insert(off);
    }

    pub fn freed(&self) -> Vec<u64> {
        self.freed.borrow().clone()
    }

    pub fn fire_irq(&self) {
        self.irq.set(true);
    }

    /// Slot `slot`'s directory entry: (QP number bound last, bound now).
    pub fn binding(&self, slot: u16) -> (u32, bool) {
        self.dir.borrow().get(&slot).copied().unwrap_or((0, false))
    }

    /// Binds a number behind the driver's back (a binding left by an
    /// earlier process).
    pub fn set_binding(&self, slot: u16, qpn: u32, bound: bool) {
        self.dir.borrow_mut().insert(slot, (qpn, bound));
    }

    /// The next `qp_bind` bind command fails with error code `code`.
    pub fn fail_next_bind(&self, code: u32) {
        self.fail_bind.set(Some(code));
    }

    /// A `qp_bind` command, as the NIC's QP directory runs it.
    fn qp_bind(&self, value: u32) -> u32 {
        let slot = self.reg(reg::QP_SEL) as u16;
        let (qpn, op) = (value & 0xff_ffff, value >> 24 & 3);
        let bits = self.qpn_bits.get();
        if bits == 0 {
            return 1;
        }
        if op != 1 && op != 2 {
            return 6;
        }
        if u32::from(slot) >= self.num_queues {
            return 5;
        }
        let mut dir = self.dir.borrow_mut();
        let (last, bound) = dir.get(&slot).copied().unwrap_or((0, false));
        if op == 2 {
            if !bound {
                return 4;
            }
            dir.insert(slot, (last, false));
            return 0;
        }
        if let Some(code) = self.fail_bind.take() {
            return code;
        }
        if qpn >= 1 << bits {
            return 2;
        }
        if dir.values().any(|&(n, b)| b && n == qpn) {
            return 3;
        }
        if bound {
            return 4;
        }
        dir.insert(slot, (qpn, true));
        0
    }
}

impl Device for FakeDev {
    fn name(&self) -> String {
        "fake:0".into()
    }

    fn bar_len(&self) -> u64 {
        0x1000
    }

    fn read32(&self, offset: u64) -> Result<u32> {
        if offset >= self.bar_len() {
            return Err(DeviceError::OutOfBar {
                offset,
                bar_len: self.bar_len(),
            });
        }
        Ok(match offset {
            reg::MAGIC => rnic_regs::MAGIC,
            reg::BUILD_VERSION => 0x0102_0003,
            reg::GIT_HASH => 0xabcd_1234,
            reg::DATA_W => 64,
            reg::NUM_QUEUES => self.num_queues,
            reg::VERBS => self.verbs.get(),
            reg::CAPS => self.caps.get(),
            reg::MRS => self.mrs.get(),
            reg::QPN_BITS => self.qpn_bits.get(),
            reg::QP_BIND_STATUS => {
                let slot = self.reg(reg::QP_SEL) as u16;
                let (qpn, bound) = if self.qpn_bits.get() == 0 {
                    (u32::from(slot), false)
                } else {
                    self.binding(slot)
                };
                qpn | u32::from(bound) << 24 | self.bind_err.get() << 28
            }
            reg::ERR_COUNT => self.err_count.get(),
            reg::QP_STATUS => {
                let qpn = self.reg(reg::QP_SEL) as u16;
                u32::from(self.qp_state(qpn)) | 0x0300
            }
            _ => self.reg(offset),
        })
    }

    fn write32(&self, offset: u64, value: u32) -> Result<()> {
        if offset >= self.bar_len() {
            return Err(DeviceError::OutOfBar {
                offset,
                bar_len: self.bar_len(),
            });
        }
        self.writes.borrow_mut().push((offset, value));
        if self.refuse.borrow_mut().remove(&offset) {
            self.err_count.set(self.err_count.get() + 1);
            self.set_reg(reg::ERR_STATUS, 0x0007_0002);
            return Ok(());
        }
        self.set_reg(offset, value);
        if offset == reg::QP_BIND {
            self.bind_err.set(self.qp_bind(value));
        }
        if offset == reg::QP_CMD {
            let qpn = self.reg(reg::QP_SEL) as u16;
            let staged = (reg::QP_ATTR..=reg::QP_RQ_SIZE)
                .step_by(4)
                .map(|o| (o, self.reg(o)))
                .collect();
            self.commits.borrow_mut().push(QpCommit {
                qpn,
                op: value & 0xf,
                staged,
            });
            self.set_qp_state(qpn, (self.reg(reg::QP_ATTR) & 7) as u8);
        }
        Ok(())
    }

    fn alloc_dma(&self, len: usize) -> Result<DmaBuffer> {
        let mem = Arc::new(HostMemory::new(len)?);
        let bus = self.next_bus.get();
        self.next_bus
            .set(bus + (len.max(1) as u64).next_multiple_of(4096));
        // SAFETY: `mem` owns `len` bytes and lives as long as the buffer.
        let buf = unsafe { DmaBuffer::from_raw(mem.as_ptr(), len, bus, mem) };
        self.bufs.borrow_mut().push(buf.clone());
        Ok(buf)
    }

    fn free_dma(&self, buf: &DmaBuffer) -> Result<()> {
        self.freed.borrow_mut().push(buf.bus_addr());
        Ok(())
    }

    fn wait_irq(&self, _vector: u32, _budget: u64) -> Result<IrqWait> {
        Ok(if self.irq.replace(false) {
            IrqWait::Fired
        } else {
            IrqWait::TimedOut
        })
    }

    fn now(&self) -> u64 {
        0
    }

    fn clock_mhz(&self) -> f64 {
        250.0
    }
}
