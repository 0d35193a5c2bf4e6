//! Unit tests: the IO adapter and the discovery walker against a fake
//! `Device` backed by a HashMap (no RTL involved), and consistency checks of
//! the generated table.

use std::cell::RefCell;
use std::collections::HashMap;

use peakrdl_rust::io::RawRegisterIO;
use rnic_device::{Device, DeviceError, DmaBuffer, IrqWait, Result};

use super::*;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    Read(u64),
    Write(u64, u32),
}

/// BAR0 as a map of dwords; unmapped dwords read as 0.
struct FakeDevice {
    bar_len: u64,
    regs: RefCell<HashMap<u64, u32>>,
    log: RefCell<Vec<Op>>,
}

impl FakeDevice {
    fn empty(bar_len: u64) -> Self {
        Self {
            bar_len,
            regs: RefCell::new(HashMap::new()),
            log: RefCell::new(Vec::new()),
        }
    }

    /// A device whose registers hold the reset values of the register map.
    fn with_resets(bar_len: u64) -> Self {
        let dev = Self::empty(bar_len);
        for (_, r) in table::registers() {
            if let Some(v) = r.reset {
                dev.set(r.offset, v as u32);
            }
        }
        dev
    }

    fn set(&self, offset: u64, value: u32) {
        self.regs.borrow_mut().insert(offset, value);
    }

    fn get(&self, offset: u64) -> u32 {
        self.regs.borrow().get(&offset).copied().unwrap_or(0)
    }

    fn take_log(&self) -> Vec<Op> {
        std::mem::take(&mut *self.log.borrow_mut())
    }

    fn check(&self, offset: u64) -> Result<()> {
        if !offset.is_multiple_of(4) {
            return Err(DeviceError::Unaligned(offset));
        }
        if offset + 4 > self.bar_len {
            return Err(DeviceError::OutOfBar {
                offset,
                bar_len: self.bar_len,
            });
        }
        Ok(())
    }
}

impl Device for FakeDevice {
    fn name(&self) -> String {
        "fake:0".into()
    }
    fn bar_len(&self) -> u64 {
        self.bar_len
    }
    fn read32(&self, offset: u64) -> Result<u32> {
        self.check(offset)?;
        self.log.borrow_mut().push(Op::Read(offset));
        Ok(self.get(offset))
    }
    fn write32(&self, offset: u64, value: u32) -> Result<()> {
        self.check(offset)?;
        self.log.borrow_mut().push(Op::Write(offset, value));
        self.set(offset, value);
        Ok(())
    }
    fn alloc_dma(&self, len: usize) -> Result<DmaBuffer> {
        Err(DeviceError::DmaAlloc(len))
    }
    fn free_dma(&self, _buf: &DmaBuffer) -> Result<()> {
        Ok(())
    }
    fn wait_irq(&self, _vector: u32, _budget: u64) -> Result<IrqWait> {
        Ok(IrqWait::TimedOut)
    }
    fn now(&self) -> u64 {
        0
    }
    fn clock_mhz(&self) -> f64 {
        250.0
    }
}

// ---------------------------------------------------------------- IO adapter

#[test]
fn typed_read_goes_to_the_right_offset() {
    let dev = FakeDevice::with_resets(0x1000);
    let io = DeviceIo::new(&dev);
    let csr = io.csr();
    assert_eq!(csr.id().magic().try_read().unwrap().magic(), MAGIC);
    assert_eq!(dev.take_log(), vec![Op::Read(0x0C)]);
    assert_eq!(
        csr.queue().blk_type().try_read().unwrap().id(),
        BLOCK_TYPE_QUEUE
    );
    assert_eq!(csr.mr().blk_next().try_read().unwrap().next(), 0x600);
    assert_eq!(dev.take_log(), vec![Op::Read(0x100), Op::Read(0x508)]);
}

#[test]
fn typed_fields_decode_from_device_value() {
    let dev = FakeDevice::empty(0x1000);
    // q_cq_state @0x12C: cq_pi[15:0], sq_en[16], cq_en[17], cq_armed[18], cq_phase[19]
    dev.set(0x12C, 0x000A_1234);
    let io = DeviceIo::new(&dev);
    let st = io.csr().queue().q_cq_state().try_read().unwrap();
    assert_eq!(st.cq_pi(), 0x1234);
    assert!(!st.sq_en());
    assert!(st.cq_en());
    assert!(!st.cq_armed());
    assert!(st.cq_phase());
    // q_sq_state @0x128: sq_pi[15:0], sq_ci[31:16]
    dev.set(0x128, 0xBEEF_0042);
    let sq = io.csr().queue().q_sq_state().try_read().unwrap();
    assert_eq!((sq.sq_pi(), sq.sq_ci()), (0x42, 0xBEEF));
}

#[test]
fn typed_write_is_one_dword_write() {
    let dev = FakeDevice::empty(0x1000);
    let io = DeviceIo::new(&dev);
    let csr = io.csr();
    csr.queue()
        .sq_db()
        .try_write(|r| {
            r.set_qn(3);
            r.set_pi(17);
        })
        .unwrap();
    csr.queue()
        .q_base_hi()
        .try_write(|r| r.set_addr(0x8000_0001))
        .unwrap();
    csr.queue()
        .q_base_lo()
        .try_write(|r| r.set_addr(0xDEAD_BEC0))
        .unwrap();
    assert_eq!(
        dev.take_log(),
        vec![
            Op::Write(0x130, (3 << 16) | 17),
            Op::Write(0x118, 0x8000_0001),
            Op::Write(0x114, 0xDEAD_BEC0),
        ]
    );
}

#[test]
fn modify_is_read_then_write_of_the_same_dword() {
    let dev = FakeDevice::empty(0x1000);
    dev.set(0x214, 0xFFFF_FFF0);
    let io = DeviceIo::new(&dev);
    io.csr()
        .dma()
        .debug()
        .try_modify(|r| r.set_cqe_ro(true))
        .unwrap();
    assert_eq!(
        dev.take_log(),
        vec![Op::Read(0x214), Op::Write(0x214, 0xFFFF_FFF1)]
    );
}

#[test]
fn free_function_entry_point() {
    let dev = FakeDevice::with_resets(0x1000);
    let io = DeviceIo::new(&dev);
    let regs = csr(&io);
    let v = regs.id().blk_version().try_read().unwrap().version();
    assert_eq!(v, 0x0001_0000);
    // A `dyn Device` works too.
    let dyn_dev: &dyn Device = &dev;
    let io = DeviceIo::new(dyn_dev);
    assert_eq!(io.csr().id().magic().try_read().unwrap().magic(), MAGIC);
}

#[test]
fn only_32_bit_accesses_are_legal() {
    let dev = FakeDevice::empty(0x1000);
    let io = DeviceIo::new(&dev);
    // SAFETY: DeviceIo never dereferences the pointer.
    let r16 = unsafe { io.try_read::<u16>(bar_ptr(0x10).cast()) };
    assert!(matches!(r16, Err(DeviceError::Other(ref m)) if m.contains("16-bit")));
    // SAFETY: as above.
    let w64 = unsafe { io.try_write::<u64>(bar_ptr(0x10).cast(), 1) };
    assert!(matches!(w64, Err(DeviceError::Other(ref m)) if m.contains("64-bit")));
    // SAFETY: as above.
    let w8 = unsafe { io.try_write::<u8>(bar_ptr(0x10).cast(), 1) };
    assert!(w8.is_err());
    assert!(
        dev.take_log().is_empty(),
        "refused accesses reach the device"
    );
}

#[test]
fn unaligned_access_is_refused() {
    let dev = FakeDevice::empty(0x1000);
    let io = DeviceIo::new(&dev);
    // SAFETY: DeviceIo never dereferences the pointer.
    let r = unsafe { io.try_read::<u32>(bar_ptr(0x12).cast()) };
    assert!(matches!(r, Err(DeviceError::Unaligned(0x12))));
    assert!(dev.take_log().is_empty());
}

#[test]
fn device_errors_pass_through() {
    // BAR0 too small for the dma block.
    let dev = FakeDevice::empty(0x200);
    let io = DeviceIo::new(&dev);
    let r = io.csr().dma().debug().try_read();
    assert!(matches!(
        r,
        Err(DeviceError::OutOfBar {
            offset: 0x214,
            bar_len: 0x200
        })
    ));
}

#[test]
fn raw_io_is_little_endian_dwords() {
    let dev = FakeDevice::empty(0x1000);
    let io = DeviceIo::new(&dev);
    // SAFETY: DeviceIo never dereferences the pointer.
    unsafe {
        io.try_write::<u32>(bar_ptr(0x40).cast(), 0x1122_3344)
            .unwrap();
        assert_eq!(dev.get(0x40), 0x1122_3344);
        dev.set(0x44, 0xA0B0_C0D0);
        assert_eq!(
            io.try_read::<u32>(bar_ptr(0x44).cast()).unwrap(),
            0xA0B0_C0D0
        );
        // i32 is 32 bits too, and must round-trip every bit pattern.
        io.try_write::<i32>(bar_ptr(0x48).cast(), -2).unwrap();
        assert_eq!(dev.get(0x48), 0xFFFF_FFFE);
        assert_eq!(io.try_read::<i32>(bar_ptr(0x48).cast()).unwrap(), -2);
    }
}

#[test]
fn blocks_can_be_placed_at_discovered_offsets() {
    use crate::generated::components::queue_block::QueueBlock;
    let dev = FakeDevice::empty(0x10000);
    dev.set(0x4000 + 0x48, 99); // cqe_count of a queue block moved to 0x4000
    let io = DeviceIo::new(&dev);
    // SAFETY: DeviceIo never dereferences the pointer.
    let q = unsafe { QueueBlock::from_ptr_with(bar_ptr(0x4000), &io) };
    assert_eq!(q.cqe_count().try_read().unwrap().count(), 99);
}

// ------------------------------------------------------------------ discovery

#[test]
fn discover_walks_the_map_as_generated() {
    let dev = FakeDevice::with_resets(0x1000);
    let blocks = discover(&dev).unwrap();
    let got: Vec<_> = blocks
        .iter()
        .map(|b| (b.offset, b.block_type, b.name))
        .collect();
    assert_eq!(
        got,
        vec![
            (0x000, 0x5249_0001, Some("id")),
            (0x100, 0x5249_0002, Some("queue")),
            (0x200, 0x5249_0003, Some("dma")),
            (0x300, 0x5249_0004, Some("port")),
            (0x400, 0x5249_0005, Some("qp")),
            (0x500, 0x5249_0006, Some("mr")),
            (0x600, 0x5249_0007, Some("flash")),
        ]
    );
    assert_eq!(blocks[1].version_major(), 1);
    assert_eq!(blocks[1].version_minor(), 0);
    assert_eq!(blocks[5].next, 0x600);
    assert_eq!(blocks[6].next, 0);
    assert_eq!(blocks[1].desc().unwrap().name, "queue");
    // Through a trait object as well.
    let dyn_dev: &dyn Device = &dev;
    assert_eq!(discover(dyn_dev).unwrap(), blocks);
}

#[test]
fn discover_lists_unknown_blocks_without_a_name() {
    let dev = FakeDevice::with_resets(0x1000);
    dev.set(0x208, 0x300); // dma.next -> an unknown block
    dev.set(0x300, 0xDEAD_0001);
    dev.set(0x304, 0x0002_0003);
    dev.set(0x308, 0);
    let blocks = discover(&dev).unwrap();
    assert_eq!(blocks.len(), 4);
    assert_eq!(blocks[3].name, None);
    assert_eq!(blocks[3].block_type, 0xDEAD_0001);
    assert_eq!(
        (blocks[3].version_major(), blocks[3].version_minor()),
        (2, 3)
    );
    assert!(blocks[3].desc().is_none());
}

#[test]
fn discover_follows_pointers_in_any_order() {
    // id at 0 -> dma at 0x800 -> queue at 0x400 -> end
    let dev = FakeDevice::empty(0x1000);
    dev.set(0x000, BLOCK_TYPE_ID);
    dev.set(0x008, 0x800);
    dev.set(0x800, BLOCK_TYPE_DMA);
    dev.set(0x808, 0x400);
    dev.set(0x400, BLOCK_TYPE_QUEUE);
    let names: Vec<_> = discover(&dev).unwrap().iter().map(|b| b.name).collect();
    assert_eq!(names, vec![Some("id"), Some("dma"), Some("queue")]);
}

#[test]
fn discover_refuses_loops() {
    let dev = FakeDevice::with_resets(0x1000);
    dev.set(0x208, 0x100); // dma.next -> queue again
    let err = discover(&dev).unwrap_err();
    assert!(
        matches!(err, DeviceError::Other(ref m) if m.contains("loops") && m.contains("0x100")),
        "{err}"
    );
    // A block pointing at itself.
    let dev = FakeDevice::with_resets(0x1000);
    dev.set(0x108, 0x100);
    assert!(matches!(discover(&dev), Err(DeviceError::Other(_))));
}

#[test]
fn discover_refuses_pointers_outside_bar0() {
    for bad in [0x1000u64, 0x0FFC, 0x0FF8, 0xFFFF_FFFC] {
        let dev = FakeDevice::with_resets(0x1000);
        dev.set(0x208, bad as u32);
        match discover(&dev) {
            Err(DeviceError::OutOfBar { offset, bar_len }) => {
                assert_eq!((offset, bar_len), (bad, 0x1000));
            }
            other => panic!("next = {bad:#x}: {other:?}"),
        }
    }
    // The last block may end exactly at the end of BAR0.
    let dev = FakeDevice::with_resets(0x1000);
    dev.set(0x208, 0xFF4);
    dev.set(0xFF4, 0x1234_5678);
    assert_eq!(discover(&dev).unwrap().len(), 4);
    // A BAR too small for even the first block.
    let dev = FakeDevice::empty(8);
    assert!(matches!(
        discover(&dev),
        Err(DeviceError::OutOfBar { offset: 0, .. })
    ));
}

#[test]
fn discover_refuses_unaligned_pointers() {
    let dev = FakeDevice::with_resets(0x1000);
    dev.set(0x008, 0x102);
    assert!(matches!(discover(&dev), Err(DeviceError::Unaligned(0x102))));
}

// ------------------------------------------------------------ generated table

#[test]
fn known_block_types() {
    assert_eq!(BLOCK_TYPE_ID, 0x5249_0001);
    assert_eq!(BLOCK_TYPE_QUEUE, 0x5249_0002);
    assert_eq!(BLOCK_TYPE_DMA, 0x5249_0003);
    assert_eq!(block_type_name(0x5249_0001), Some("id"));
    assert_eq!(block_type_name(0x5249_0002), Some("queue"));
    assert_eq!(block_type_name(0x5249_0003), Some("dma"));
    assert_eq!(block_type_name(0x5249_00FF), None);
}

#[test]
fn table_is_consistent() {
    assert_eq!(generated_table::MAP_SIZE, RnicCsr::<()>::SIZE as u64);
    let mut last_end = 0;
    let mut types = HashSet::new();
    for b in table::blocks() {
        assert!(b.offset >= last_end, "block {} overlaps", b.name);
        last_end = b.offset + b.size;
        assert!(types.insert(b.block_type.expect("every block has a type")));
        let mut last_reg = None;
        for r in b.regs {
            assert_eq!(r.width, 32);
            assert_eq!(r.offset, b.offset + r.block_offset);
            assert_eq!(r.offset % 4, 0);
            assert!(
                last_reg < Some(r.offset),
                "{}.{} out of order",
                b.name,
                r.name
            );
            last_reg = Some(r.offset);
            let mut used = 0u64;
            for f in r.fields {
                assert!(f.msb >= f.lsb && u32::from(f.msb) < r.width);
                assert_eq!(
                    used & f.mask(),
                    0,
                    "{}.{}.{} overlaps",
                    b.name,
                    r.name,
                    f.name
                );
                used |= f.mask();
            }
            assert_eq!(
                r.readable,
                r.fields.iter().any(|f| f.sw.readable()),
                "{}.{}",
                b.name,
                r.name
            );
        }
        // Every block starts with the discovery header.
        assert_eq!(b.regs[0].name, "blk_type");
        assert_eq!(b.reg("blk_version").unwrap().block_offset, BLK_VERSION);
        assert_eq!(b.reg("blk_next").unwrap().block_offset, BLK_NEXT);
    }
}

#[test]
fn table_linked_list_matches_block_offsets() {
    // The NEXT reset values chain the blocks in address order and end in 0.
    let blocks = table::blocks();
    for (i, b) in blocks.iter().enumerate() {
        let next = b.reg("blk_next").unwrap().reset.unwrap();
        let want = blocks.get(i + 1).map_or(0, |n| n.offset);
        assert_eq!(next, want, "{}.blk_next", b.name);
    }
    assert_eq!(blocks[0].offset, 0, "the list starts at offset 0");
}

#[test]
fn table_matches_generated_api_offsets() {
    let dev = FakeDevice::empty(0x1000);
    let io = DeviceIo::new(&dev);
    let csr = io.csr();
    let addr = |p: *mut u32| p as usize as u64;
    let cases: [(&str, u64); 8] = [
        ("id.magic", addr(csr.id().magic().as_ptr().cast())),
        ("id.caps", addr(csr.id().caps().as_ptr().cast())),
        ("queue.q_cmd", addr(csr.queue().q_cmd().as_ptr().cast())),
        ("queue.sq_db", addr(csr.queue().sq_db().as_ptr().cast())),
        (
            "queue.cqe_count",
            addr(csr.queue().cqe_count().as_ptr().cast()),
        ),
        ("dma.debug", addr(csr.dma().debug().as_ptr().cast())),
        ("dma.pcie_cfg", addr(csr.dma().pcie_cfg().as_ptr().cast())),
        (
            "dma.rd_err_count",
            addr(csr.dma().rd_err_count().as_ptr().cast()),
        ),
    ];
    for (path, api_offset) in cases {
        let (_, r) = table::reg(path).unwrap();
        assert_eq!(r.offset, api_offset, "{path}");
    }
}

#[test]
fn table_fields() {
    let (_, r) = table::reg("queue.sq_db").unwrap();
    assert!(!r.readable && r.writable);
    let pi = r.field("pi").unwrap();
    assert_eq!(
        (pi.msb, pi.lsb, pi.sw, pi.swmod),
        (15, 0, table::Access::W, true)
    );
    let qn = r.field("qn").unwrap();
    assert_eq!(qn.bits(), "[31:16]");
    assert_eq!(qn.extract(0x0003_0011), 3);
    assert_eq!(qn.insert(0x0003_0011, 0x1_0005), 0x0005_0011);
    let (_, r) = table::reg("queue.q_cq_state").unwrap();
    let phase = r.field("cq_phase").unwrap();
    assert_eq!(phase.bits(), "[19]");
    assert_eq!(
        (phase.sw, phase.hw, phase.reset),
        (table::Access::R, table::Access::W, None)
    );
    let (_, r) = table::reg("id.magic").unwrap();
    assert_eq!(r.reset, Some(u64::from(MAGIC)));
    assert!(table::reg("queue.nope").is_none());
    assert!(table::reg("nope").is_none());
    let n: usize = table::blocks().iter().map(|b| b.regs.len()).sum();
    assert_eq!(table::registers().count(), n);
}
