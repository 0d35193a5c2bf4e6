//! The flash path against the simulated RTL and the SPI NOR model.

use rand::{RngCore, SeedableRng};
use rnic_firmware::{board_by_name, BuildInfo, Image, SlotId};
use rnic_flash::{slot_state, write_slot, FlashError, SpiNor};
use rnic_sim::{SimConfig, SimDevice, SpiFlashConfig, RTL_AVAILABLE};

fn sim() -> Option<SimDevice> {
    sim_w(64)
}

fn sim_w(data_w: u32) -> Option<SimDevice> {
    if !RTL_AVAILABLE {
        eprintln!("skipped: no RTL model");
        return None;
    }
    let dev = SimDevice::new(SimConfig {
        data_w,
        ..SimConfig::default()
    })
    .unwrap();
    dev.attach_flash(SpiFlashConfig::for_board("sim").unwrap())
        .unwrap();
    Some(dev)
}

fn bytes(n: usize, seed: u64) -> Vec<u8> {
    let mut v = vec![0u8; n];
    rand_chacha::ChaCha8Rng::seed_from_u64(seed).fill_bytes(&mut v);
    v
}

fn no_model_errors(dev: &SimDevice) {
    assert!(dev.model_errors().is_empty(), "{:?}", dev.model_errors());
    let e = dev.with_flash(|f| f.errors().to_vec()).unwrap();
    assert!(e.is_empty(), "flash model errors: {e:?}");
}

#[test]
fn id_erase_program_read_single_and_quad_above_16mib() {
    let Some(dev) = sim() else { return };
    let b = board_by_name("sim").unwrap();
    let t = b.image_target().unwrap();
    let mut nor = SpiNor::open(&dev, t.flash, None).unwrap();
    for (quad, addr) in [
        (true, 0x0100_0F00u64),
        (false, 0x0000_2F80),
        (true, 0x01FF_D000),
    ] {
        nor.set_quad(quad);
        let data = bytes(700, addr);
        // two sectors: the data crosses a sector (and page) boundary
        nor.erase_range(addr & !0xFFF, 8192, |_| {}).unwrap();
        let mut back = vec![0u8; 700];
        nor.read(addr, &mut back).unwrap();
        assert!(back.iter().all(|&x| x == 0xFF), "erased reads 0xFF");
        nor.program(addr + 3, &data, |_| {}).unwrap();
        nor.read(addr + 3, &mut back).unwrap();
        assert_eq!(back, data, "quad {quad} at {addr:#x}");
        // The model holds the same bytes (4-byte addressing reached them).
        let m = dev
            .with_flash(|f| f.contents()[addr as usize + 3..][..700].to_vec())
            .unwrap();
        assert_eq!(m, data);
    }
    no_model_errors(&dev);
}

#[test]
fn golden_is_protected_and_a_slot_write_round_trips() {
    for w in [64, 256] {
        golden_protected_and_round_trip(w);
    }
}

fn golden_protected_and_round_trip(data_w: u32) {
    let Some(dev) = sim_w(data_w) else { return };
    let b = board_by_name("sim").unwrap();
    let t = b.image_target().unwrap();
    let g = t.layout.golden;
    let nor = SpiNor::open(&dev, t.flash, Some(g.base..g.end())).unwrap();
    let e = nor.erase_sector(0).unwrap_err();
    assert!(matches!(e, FlashError::Protected { .. }), "{e}");
    let img = Image::pack("sim", BuildInfo::default(), bytes(10_000, 9)).unwrap();
    let e = write_slot(&nor, b, SlotId::Golden, &img, &mut |_| {}).unwrap_err();
    assert!(matches!(e, FlashError::Protected { .. }), "{e}");
    let r = write_slot(&nor, b, SlotId::Update, &img, &mut |_| {}).unwrap();
    assert_eq!(r.bytes, 10_000);
    let st = slot_state(&nor, b, SlotId::Update, true).unwrap();
    assert_eq!(st.header.as_ref().unwrap(), &img.header);
    assert_eq!(st.content, Some(Ok(())));
    let ops = dev.with_flash(|f| f.ops().to_vec()).unwrap();
    assert!(
        ops.iter().all(|o| !g.overlaps(o.addr, o.len)),
        "golden untouched"
    );
    no_model_errors(&dev);
}

/// The flash block's registers are served by hand-written RTL: check them
/// against the generated register table (reset values, read-back of the
/// read-write registers, the buffer, and write-only registers reading 0).
#[test]
fn flash_block_matches_the_register_map() {
    use rnic_device::Device;
    let Some(dev) = sim() else { return };
    let t = rnic_regs::generated_table::BLOCK_TYPE_FLASH;
    let blk = rnic_regs::discover(&dev)
        .unwrap()
        .into_iter()
        .find(|b| b.block_type == t)
        .expect("flash block discovered");
    let desc = blk.desc().expect("known block");
    let mut checked = 0;
    for r in desc.regs {
        let a = blk.offset + r.block_offset;
        if let Some(reset) = r.reset {
            // Write-only fields read as 0.
            let readable: u64 = r
                .fields
                .iter()
                .filter(|f| f.sw.readable())
                .map(|f| f.mask())
                .sum();
            assert_eq!(
                u64::from(dev.read32(a).unwrap()),
                reset & readable,
                "{} reset",
                r.name
            );
            checked += 1;
        }
        let rw = r.fields.iter().all(|f| f.sw.readable() && f.sw.writable());
        if rw && r.writable && !r.name.starts_with("flash_buf") {
            let mask: u64 = r.fields.iter().map(|f| f.mask()).sum();
            dev.write32(a, 0xA5A5_5A5A).unwrap();
            assert_eq!(
                u64::from(dev.read32(a).unwrap()),
                0xA5A5_5A5A & mask,
                "{} read-back",
                r.name
            );
            checked += 1;
        }
    }
    assert!(checked >= 8, "{checked}");
    let bufs: Vec<_> = desc
        .regs
        .iter()
        .filter(|r| r.name.starts_with("flash_buf"))
        .collect();
    assert_eq!(bufs.len(), 64);
    for (i, r) in bufs.iter().enumerate() {
        dev.write32(
            blk.offset + r.block_offset,
            (0x0101_0101 * i as u32) ^ 0xDEAD_0000,
        )
        .unwrap();
    }
    for (i, r) in bufs.iter().enumerate() {
        assert_eq!(
            dev.read32(blk.offset + r.block_offset).unwrap(),
            (0x0101_0101 * i as u32) ^ 0xDEAD_0000
        );
    }
    // A stray write to the reconfiguration register does nothing.
    let reconf = desc.regs.iter().find(|r| r.name == "reconfig").unwrap();
    dev.write32(blk.offset + reconf.block_offset, 0x1234_5678)
        .unwrap();
    dev.run(100);
    assert_eq!(
        dev.read32(blk.offset + bufs[3].block_offset).unwrap(),
        0x0303_0303 ^ 0xDEAD_0000,
        "no reset happened"
    );
}

/// A byte that does not program: the read-back catches it, the slot stays
/// invalid (no trailer), and a verify of the old contents reports it.
#[test]
fn read_back_catches_a_byte_that_did_not_program() {
    if !RTL_AVAILABLE {
        return;
    }
    let dev = SimDevice::new(SimConfig::default()).unwrap();
    let b = board_by_name("sim").unwrap();
    let t = b.image_target().unwrap();
    let mut cfg = SpiFlashConfig::for_board("sim").unwrap();
    let bad = t.layout.update.base + 5000;
    cfg.stuck_byte = Some(bad);
    dev.attach_flash(cfg).unwrap();
    let g = t.layout.golden;
    let nor = SpiNor::open(&dev, t.flash, Some(g.base..g.end())).unwrap();
    let mut bits = bytes(9000, 12);
    bits[5000] = 0x00; // erased 0xFF cannot stay 0xFF when 0x00 is written
    let img = Image::pack("sim", BuildInfo::default(), bits).unwrap();
    let e = write_slot(&nor, b, SlotId::Update, &img, &mut |_| {}).unwrap_err();
    match e {
        FlashError::Verify {
            addr,
            expected,
            found,
            count,
        } => {
            assert_eq!((addr, expected, found, count), (bad, 0x00, 0xFF, 1));
        }
        e => panic!("{e}"),
    }
    let st = slot_state(&nor, b, SlotId::Update, false).unwrap();
    assert!(st.header.is_err(), "the slot must not be committed");
    let e = rnic_flash::verify_slot(&nor, b, SlotId::Update, &img, &mut |_| {}).unwrap_err();
    assert!(matches!(e, FlashError::Verify { .. }), "{e}");
}
