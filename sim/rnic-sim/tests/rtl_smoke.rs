//! Smoke tests against the Verilated RTL (skipped when the crate was built
//! without it, see `rnic_sim::RTL_AVAILABLE`).

use rnic_device::Device;
use rnic_sim::{RootComplexConfig, SimConfig, SimDevice, MODEL_WIDTHS, RTL_AVAILABLE};

const MAGIC: u32 = 0x524E_4943; // "RNIC"

fn rtl() -> bool {
    if !RTL_AVAILABLE {
        eprintln!("skipped: rnic-sim was built without hw/rtl/rnic_core.v");
    }
    RTL_AVAILABLE
}

#[test]
fn id_block_magic() {
    if !rtl() {
        return;
    }
    for &data_w in MODEL_WIDTHS {
        let dev = SimDevice::new(SimConfig {
            data_w,
            seed: 7,
            ..SimConfig::default()
        })
        .unwrap();
        assert_eq!(dev.read32(0x0C).unwrap(), MAGIC, "DATA_W={data_w}");
        assert_eq!(
            dev.read32(0x1C).unwrap(),
            data_w,
            "ID block DATA_W register"
        );
        dev.run(100);
        assert!(dev.model_errors().is_empty(), "{:#?}", dev.model_errors());
        assert!(dev.iommu_faults().is_empty());
        let s = dev.stats();
        assert_eq!(s.rx_req.tlps, 2);
        assert_eq!(s.tx_cpl.tlps, 2);
    }
}

#[test]
fn several_models_in_one_process_same_seed_same_run() {
    if !rtl() {
        return;
    }
    let mk = |seed| {
        SimDevice::new(SimConfig {
            data_w: 64,
            seed,
            ..SimConfig::default()
        })
        .unwrap()
    };
    let (a, b, c) = (mk(11), mk(11), mk(12));
    for d in [&a, &b, &c] {
        for _ in 0..4 {
            assert_eq!(d.read32(0x0C).unwrap(), MAGIC);
        }
    }
    assert_eq!(a.digest(), b.digest());
    assert_eq!(a.now(), b.now());
    let w = SimDevice::new(SimConfig {
        data_w: 256,
        seed: 11,
        ..SimConfig::default()
    })
    .unwrap();
    assert_eq!(w.read32(0x0C).unwrap(), MAGIC);
    assert_eq!(a.read32(0x0C).unwrap(), MAGIC);
}

#[test]
fn waveform_is_written() {
    if !rtl() {
        return;
    }
    let dir = std::env::temp_dir().join(format!("rnic-sim-wave-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("smoke.fst");
    {
        let dev = SimDevice::new(SimConfig {
            wave: Some(path.clone()),
            root_complex: RootComplexConfig::bench(),
            ..SimConfig::default()
        })
        .unwrap();
        assert_eq!(dev.read32(0x0C).unwrap(), MAGIC);
        dev.stop_wave();
        let late = dir.join("late.fst");
        dev.start_wave(&late).unwrap();
        dev.run(10);
    }
    assert!(std::fs::metadata(&path).unwrap().len() > 100);
    assert!(std::fs::metadata(dir.join("late.fst")).unwrap().len() > 100);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn mmio_writes_reach_registers() {
    if !rtl() {
        return;
    }
    for &data_w in MODEL_WIDTHS {
        let dev = SimDevice::new(SimConfig {
            data_w,
            seed: 3,
            ..SimConfig::default()
        })
        .unwrap();
        // Queue block (0x100): Q_BASE_LO / Q_BASE_HI / Q_SIZE are plain rw.
        dev.write32(0x114, 0x1234_5640).unwrap();
        dev.write32(0x118, 0x0000_0007).unwrap();
        dev.write32(0x11C, 64).unwrap();
        assert_eq!(dev.read32(0x114).unwrap(), 0x1234_5640);
        assert_eq!(dev.read32(0x118).unwrap(), 7);
        assert_eq!(dev.read32(0x11C).unwrap(), 64);
        assert!(dev.model_errors().is_empty(), "{:#?}", dev.model_errors());
    }
}

#[test]
fn low_level_model_api() {
    if !rtl() {
        return;
    }
    use rnic_sim::{PortsIn, PortsOut, VerilatedModel};
    let mut m = VerilatedModel::new(64, 5).unwrap();
    let mut inp = PortsIn {
        rst: 1,
        cfg_requester_id: 0x0100,
        ..PortsIn::default()
    };
    m.set_inputs(&inp);
    for _ in 0..8 {
        m.tick();
    }
    assert_eq!(m.time(), 16);
    inp.rst = 0;
    m.set_inputs(&inp);
    m.eval();
    let mut out = PortsOut::default();
    m.get_outputs(&mut out);
    assert_eq!(out.sim_flags, 0);
    assert_eq!(out.tx_wr_req_valid, 0, "nothing to write after reset");
    assert!(
        rnic_sim::VerilatedModel::new(128, 1).is_err(),
        "no 128-bit model in this build"
    );
}
