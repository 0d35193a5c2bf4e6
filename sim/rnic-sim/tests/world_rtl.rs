//! Two Verilated NICs in one world (skipped when the crate was built
//! without the RTL).

use rnic_device::Device;
use rnic_sim::frame::{self, UdpFlow};
use rnic_sim::{
    FabricConfig, RootComplexConfig, SimConfig, SimDevice, SimWorld, WorldConfig, MODEL_WIDTHS,
    RTL_AVAILABLE,
};

const MAGIC: u32 = 0x524E_4943; // "RNIC"

fn rtl() -> bool {
    if !RTL_AVAILABLE {
        eprintln!("skipped: rnic-sim was built without hw/rtl/rnic_core.v");
    }
    RTL_AVAILABLE
}

#[test]
fn two_nics_answer_mmio_independently_in_lockstep() {
    if !rtl() {
        return;
    }
    for &data_w in MODEL_WIDTHS {
        let world = SimWorld::new(WorldConfig {
            nics: 2,
            data_w,
            seed: 21,
            fabric: FabricConfig::profile("hostile").unwrap(),
            ..WorldConfig::default()
        })
        .unwrap();
        let (a, b) = (world.device(0), world.device(1));
        assert_eq!(a.now(), b.now());
        assert_eq!(a.read32(0x0C).unwrap(), MAGIC);
        assert_eq!(b.read32(0x0C).unwrap(), MAGIC);
        assert_eq!(b.read32(0x1C).unwrap(), data_w);
        // Queue block (0x100): Q_BASE_LO / Q_SIZE are plain rw registers;
        // each NIC keeps its own.
        a.write32(0x114, 0xA000_0040).unwrap();
        b.write32(0x114, 0xB000_0080).unwrap();
        a.write32(0x11C, 64).unwrap();
        b.write32(0x11C, 128).unwrap();
        assert_eq!(b.read32(0x114).unwrap(), 0xB000_0080);
        assert_eq!(a.read32(0x114).unwrap(), 0xA000_0040);
        assert_eq!(a.read32(0x11C).unwrap(), 64);
        assert_eq!(b.read32(0x11C).unwrap(), 128);
        // One clock: a's MMIO round trips advanced b's time too, but b saw
        // only its own TLPs.
        assert_eq!(a.now(), b.now());
        assert_eq!(a.now(), world.now());
        let (sa, sb) = (a.stats(), b.stats());
        assert_eq!(sa.cycles, sb.cycles);
        assert_eq!((sa.rx_req.tlps, sb.rx_req.tlps), (5, 6));
        let before = sb.rx_req.tlps;
        for _ in 0..10 {
            a.read32(0x0C).unwrap();
        }
        assert_eq!(b.stats().rx_req.tlps, before);
        world.run(1000);
        for d in [&a, &b] {
            assert!(d.model_errors().is_empty(), "{:#?}", d.model_errors());
            assert!(d.iommu_faults().is_empty());
        }
        // Nothing on the wire yet (the RoCE transport does not send).
        assert_eq!(world.fabric_stats().total.sent, 0);
    }
}

#[test]
fn frames_reach_the_rtl_through_the_fabric() {
    if !rtl() {
        return;
    }
    for &data_w in MODEL_WIDTHS {
        let world = SimWorld::new(WorldConfig {
            nics: 2,
            data_w,
            seed: 4,
            root_complex: RootComplexConfig::bench(),
            ..WorldConfig::default()
        })
        .unwrap();
        let f = frame::ipv4_udp(&UdpFlow::default(), &[0x33; 200]);
        for _ in 0..3 {
            world.send_frame(0, &f);
        }
        assert!(world.drain(10_000));
        assert_eq!(world.mac_stats(1).rx_frames, 3, "DATA_W={data_w}");
        assert_eq!(world.mac_stats(1).rx_bytes, 3 * f.len() as u64);
        assert_eq!(world.mac_stats(0).rx_frames, 0);
        assert_eq!(world.fabric_stats().total.delivered, 3);
        assert!(world.device(1).model_errors().is_empty());
    }
}

#[test]
fn single_device_api_still_works_and_loops_back_on_request() {
    if !rtl() {
        return;
    }
    let dev = SimDevice::new(SimConfig {
        seed: 9,
        ..SimConfig::default()
    })
    .unwrap();
    assert_eq!(dev.read32(0x0C).unwrap(), MAGIC);
    let w = dev.world();
    assert_eq!(w.nics(), 1);
    w.send_frame(0, &frame::ipv4_udp(&UdpFlow::default(), &[1; 10]));
    w.run(500);
    assert_eq!(
        w.fabric_stats().unrouted,
        1,
        "no loopback: counted and dropped"
    );
    assert_eq!(dev.mac_stats().rx_frames, 0);

    let w = SimWorld::new(WorldConfig {
        loopback: true,
        ..WorldConfig::from(SimConfig::default())
    })
    .unwrap();
    w.send_frame(0, &frame::ipv4_udp(&UdpFlow::default(), &[1; 10]));
    w.run(500);
    assert_eq!(w.device(0).mac_stats().rx_frames, 1);
}

#[test]
fn one_waveform_per_nic() {
    if !rtl() {
        return;
    }
    let dir = std::env::temp_dir().join(format!("rnic-sim-world-wave-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    {
        let world = SimWorld::new(WorldConfig {
            nics: 2,
            wave: Some(dir.join("run.fst")),
            root_complex: RootComplexConfig::bench(),
            ..WorldConfig::default()
        })
        .unwrap();
        assert_eq!(
            world.device(1).config().wave,
            Some(dir.join("run.nic1.fst"))
        );
        world.device(1).read32(0x0C).unwrap();
    }
    for n in ["run.nic0.fst", "run.nic1.fst"] {
        assert!(std::fs::metadata(dir.join(n)).unwrap().len() > 100, "{n}");
    }
    assert!(!dir.join("run.fst").exists());
    let _ = std::fs::remove_dir_all(&dir);
}

/// A parked NIC is not evaluated while the rest of the world runs (its
/// root complex counts no cycles) and its port is down (frames for it are
/// dropped and counted); restarted, it runs and receives again.
#[test]
fn a_parked_nic_stands_still_and_drops_its_frames() {
    if !rtl() {
        return;
    }
    let world = SimWorld::new(WorldConfig {
        nics: 2,
        seed: 4,
        root_complex: RootComplexConfig::bench(),
        ..WorldConfig::default()
    })
    .unwrap();
    let (a, b) = (world.device(0), world.device(1));
    world.with_world(|w| w.park(1, true));
    let (a0, b0) = (a.stats().cycles, b.stats().cycles);
    world.run(1000);
    assert_eq!(a.stats().cycles, a0 + 1000);
    assert_eq!(b.stats().cycles, b0, "a parked NIC counted cycles");
    let f = frame::ipv4_udp(&UdpFlow::default(), &[0x33; 200]);
    world.send_frame(0, &f);
    assert!(world.drain(10_000));
    assert_eq!(world.mac_stats(1).rx_frames, 0);
    assert_eq!(world.with_world(|w| w.parked_drops(1)), 1);
    assert_eq!(b.stats().cycles, b0);
    world.with_world(|w| w.park(1, false));
    world.send_frame(0, &f);
    assert!(world.drain(10_000));
    assert_eq!(world.mac_stats(1).rx_frames, 1);
    assert!(b.stats().cycles > b0);
    assert_eq!(b.read32(0x0C).unwrap(), MAGIC);
}
