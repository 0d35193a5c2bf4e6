//! Multi-NIC worlds with stand-in NICs on the Ethernet side (pure Rust):
//! MAC framing, fabric delivery into `s_axis_rx`, back-pressure, routing,
//! determinism, device handles.

#[path = "common/mac_nic.rs"]
mod mac_nic;

use std::cell::RefCell;
use std::rc::Rc;

use mac_nic::{MacNic, MacNicState, RxRecord, TxFrame};
use rnic_device::Device;
use rnic_sim::frame::{self, UdpFlow};
use rnic_sim::{
    Channel, FabricConfig, MacConfig, PathConfig, RootComplexConfig, SimWorld, WorldConfig,
};

type St = Rc<RefCell<MacNicState>>;

fn world(cfg: WorldConfig, data_w: u32) -> (SimWorld, Vec<St>) {
    let mut models = Vec::new();
    let mut states = Vec::new();
    for _ in 0..cfg.nics {
        let (m, s) = MacNic::boxed(data_w);
        models.push(m);
        states.push(s);
    }
    (SimWorld::with_models(cfg, models).unwrap(), states)
}

/// Run until every stand-in has sent all its frames and nothing is in
/// flight (the world cannot see a stand-in's own queue).
fn settle(wd: &SimWorld, st: &[St], budget: u64) -> bool {
    wd.run_until(budget, |w| {
        w.quiescent() && st.iter().all(|s| s.borrow().tx.is_empty())
    })
}

fn cfg2() -> WorldConfig {
    WorldConfig {
        nics: 2,
        seed: 5,
        root_complex: RootComplexConfig::bench(),
        ..WorldConfig::default()
    }
}

fn udp(sport: u16, len: usize, tag: u8) -> Vec<u8> {
    let payload: Vec<u8> = (0..len.saturating_sub(42))
        .map(|i| (i as u8).wrapping_mul(7) ^ tag)
        .collect();
    frame::ipv4_udp(
        &UdpFlow {
            sport,
            ..UdpFlow::default()
        },
        &payload,
    )
}

#[test]
fn frames_cross_between_two_nics() {
    for data_w in [64u32, 256] {
        let w = (data_w / 8) as u64;
        let (wd, st) = world(cfg2(), data_w);
        let lens = [60usize, 61, 64, 100, 1500, 4200, 63, 65];
        let a: Vec<Vec<u8>> = lens
            .iter()
            .enumerate()
            .map(|(i, &l)| udp(1000 + i as u16, l, i as u8))
            .collect();
        let b = vec![udp(7, 90, 0xAA), udp(8, 333, 0xBB)];
        st[0]
            .borrow_mut()
            .tx
            .extend(a.iter().cloned().map(TxFrame::new));
        st[1]
            .borrow_mut()
            .tx
            .extend(b.iter().cloned().map(TxFrame::new));
        assert!(settle(&wd, &st, 20_000), "world did not drain");
        let rx1: Vec<Vec<u8>> = st[1].borrow().rx.iter().map(|r| r.data.clone()).collect();
        let rx0: Vec<Vec<u8>> = st[0].borrow().rx.iter().map(|r| r.data.clone()).collect();
        assert_eq!(rx1, a, "DATA_W={data_w}");
        assert_eq!(rx0, b);
        assert!(
            st[0].borrow().rx_errors.is_empty(),
            "{:?}",
            st[0].borrow().rx_errors
        );
        assert!(
            st[1].borrow().rx_errors.is_empty(),
            "{:?}",
            st[1].borrow().rx_errors
        );
        // Timing of the first frame: sent at cycle c, serialized at the line
        // rate (ceil(len / w) cycles), 100 cycles of delay, then one beat per
        // cycle into the receiver.
        let c = st[0].borrow().tx_done[0];
        let beats = 60u64.div_ceil(w);
        assert_eq!(st[1].borrow().rx[0].cycle, c + beats + 100 + beats - 1);
        let m0 = wd.mac_stats(0);
        let m1 = wd.mac_stats(1);
        assert_eq!(m0.tx_frames, a.len() as u64);
        assert_eq!(m0.tx_bytes, lens.iter().sum::<usize>() as u64);
        assert_eq!(m1.rx_frames, a.len() as u64);
        assert_eq!(m1.rx_bytes, m0.tx_bytes);
        assert_eq!(m0.rx_frames, 2);
        let f = wd.fabric_stats();
        assert_eq!(f.total.sent, 10);
        assert_eq!(f.total.delivered, 10);
        assert_eq!(f.unrouted, 0);
        let d0 = wd.device(0);
        assert!(d0.model_errors().is_empty(), "{:?}", d0.model_errors());
    }
}

#[test]
fn padding_aborts_and_malformed_frames() {
    let (wd, st) = world(cfg2(), 64);
    let short = vec![0x11u8; 20];
    let aborted = TxFrame {
        data: udp(1, 100, 1),
        user: true,
        keep_hole: false,
    };
    let holed = TxFrame {
        data: udp(2, 100, 2),
        user: false,
        keep_hole: true,
    };
    let good = udp(3, 70, 3);
    st[0].borrow_mut().tx.extend([
        TxFrame::new(short.clone()),
        aborted,
        holed,
        TxFrame::new(good.clone()),
    ]);
    assert!(settle(&wd, &st, 5000));
    let rx: Vec<RxRecord> = st[1].borrow().rx.clone();
    assert_eq!(rx.len(), 2);
    let mut padded = short.clone();
    padded.resize(60, 0);
    assert_eq!(rx[0].data, padded, "short frame zero-padded to 60 bytes");
    assert_eq!(rx[1].data, good);
    let m = wd.mac_stats(0);
    assert_eq!(
        (m.tx_frames, m.tx_padded, m.tx_bad_frames, m.tx_errors),
        (2, 1, 1, 1)
    );
    let errs = wd.device(0).model_errors();
    assert_eq!(errs.len(), 1, "{errs:?}");
    assert_eq!(errs[0].channel, Channel::MacTx);
    assert!(errs[0].message.contains("tkeep"), "{}", errs[0].message);
}

#[test]
fn rx_honors_tready_and_counts_overflow() {
    let mut cfg = cfg2();
    cfg.mac = MacConfig {
        rx_queue_frames: 4,
        ..MacConfig::default()
    };
    let (wd, st) = world(cfg, 64);
    st[1].borrow_mut().rx_ready_every = 3;
    let frames: Vec<Vec<u8>> = (0..3)
        .map(|i| udp(i, 200 + usize::from(i), i as u8))
        .collect();
    st[0]
        .borrow_mut()
        .tx
        .extend(frames.iter().cloned().map(TxFrame::new));
    assert!(settle(&wd, &st, 10_000));
    let got: Vec<Vec<u8>> = st[1].borrow().rx.iter().map(|r| r.data.clone()).collect();
    assert_eq!(got, frames);
    assert!(st[1].borrow().rx_errors.is_empty());
    assert!(wd.mac_stats(1).rx_stall_cycles > 0);

    // A NIC that stops accepting: 4 frames wait, the rest are dropped.
    st[1].borrow_mut().rx_stop = true;
    st[0]
        .borrow_mut()
        .tx
        .extend((0..10).map(|i| TxFrame::new(udp(i, 80, 0))));
    wd.run(5000);
    let m = wd.mac_stats(1);
    assert_eq!(m.rx_queue_len, 4);
    assert_eq!(m.rx_overflow_drops, 6);
    assert_eq!(m.rx_frames, 3);
    // It resumes: the 4 queued frames come in, intact and in order.
    st[1].borrow_mut().rx_stop = false;
    assert!(settle(&wd, &st, 5000));
    assert_eq!(st[1].borrow().rx.len(), 7);
    assert_eq!(st[1].borrow().rx[3].data, udp(0, 80, 0));
}

#[test]
fn tx_backpressure_keeps_frames_intact() {
    let mut cfg = cfg2();
    cfg.mac.tx_stall_prob = 0.5;
    let (wd, st) = world(cfg, 256);
    let frames: Vec<Vec<u8>> = (0..20)
        .map(|i| udp(i, 60 + 37 * usize::from(i), 9))
        .collect();
    st[0]
        .borrow_mut()
        .tx
        .extend(frames.iter().cloned().map(TxFrame::new));
    assert!(settle(&wd, &st, 20_000));
    let got: Vec<Vec<u8>> = st[1].borrow().rx.iter().map(|r| r.data.clone()).collect();
    assert_eq!(got, frames);
    assert!(wd.mac_stats(0).tx_stall_cycles > 10);
    assert!(wd.device(0).model_errors().is_empty());
}

#[test]
fn single_nic_sink_or_loopback() {
    for loopback in [false, true] {
        let cfg = WorldConfig {
            nics: 1,
            loopback,
            ..cfg2()
        };
        let (wd, st) = world(cfg, 64);
        st[0]
            .borrow_mut()
            .tx
            .extend((0..3).map(|i| TxFrame::new(udp(i, 64, 0))));
        assert!(settle(&wd, &st, 5000));
        let f = wd.fabric_stats();
        assert_eq!(wd.mac_stats(0).tx_frames, 3);
        if loopback {
            assert_eq!(st[0].borrow().rx.len(), 3);
            assert_eq!(f.total.delivered, 3);
        } else {
            assert!(st[0].borrow().rx.is_empty());
            assert_eq!(f.unrouted, 3);
        }
    }
}

#[test]
fn three_nics_behind_a_learning_switch() {
    let cfg = WorldConfig { nics: 3, ..cfg2() };
    let (wd, st) = world(cfg, 64);
    let mac = |i: u8| [2, 0, 0, 0, 0, i];
    let fr = |d: u8, s: u8| {
        frame::ipv4_udp(
            &UdpFlow {
                dmac: mac(d),
                smac: mac(s),
                ..UdpFlow::default()
            },
            &[s; 30],
        )
    };
    // 0 -> 2 (unknown: flooded to 1 and 2), 2 -> 0 (learned), 0 -> 2 again.
    st[0].borrow_mut().tx.push_back(TxFrame::new(fr(2, 0)));
    assert!(settle(&wd, &st, 2000));
    st[2].borrow_mut().tx.push_back(TxFrame::new(fr(0, 2)));
    assert!(settle(&wd, &st, 2000));
    st[0].borrow_mut().tx.push_back(TxFrame::new(fr(2, 0)));
    assert!(settle(&wd, &st, 2000));
    assert_eq!(st[1].borrow().rx.len(), 1, "only the flooded frame");
    assert_eq!(st[2].borrow().rx.len(), 2);
    assert_eq!(st[0].borrow().rx.len(), 1);
    assert_eq!(wd.fabric_stats().flooded, 1);
}

fn hostile_run(seed: u64) -> (Vec<RxRecord>, Vec<RxRecord>) {
    let cfg = WorldConfig {
        seed,
        fabric: FabricConfig::profile("hostile").unwrap(),
        root_complex: RootComplexConfig::default(),
        ..cfg2()
    };
    let (wd, st) = world(cfg, 64);
    for (i, s) in st.iter().enumerate() {
        s.borrow_mut()
            .tx
            .extend((0..300).map(|k| TxFrame::new(udp(k * 31, 64 + usize::from(k % 50), i as u8))));
    }
    assert!(settle(&wd, &st, 200_000));
    let a = st[0].borrow().rx.clone();
    let b = st[1].borrow().rx.clone();
    (a, b)
}

#[test]
fn same_seed_same_world() {
    let x = hostile_run(77);
    let y = hostile_run(77);
    assert_eq!(x, y);
    assert!(x.0.len() > 250 && x.1.len() > 250);
    let z = hostile_run(78);
    assert_ne!(x, z);
}

#[test]
fn send_and_inject_frames_from_the_host_side() {
    let mut cfg = cfg2();
    cfg.fabric = FabricConfig::with_paths(
        "slow",
        vec![PathConfig {
            delay: 1000,
            ..PathConfig::default()
        }],
    );
    let (wd, st) = world(cfg, 64);
    let f = udp(5, 100, 5);
    wd.send_frame(1, &f);
    assert_eq!(wd.fabric_stats().in_flight, 1);
    assert!(wd.inject_frame(1, &f, true));
    wd.run(50);
    {
        let s = st[1].borrow();
        assert_eq!(s.rx.len(), 1);
        assert!(s.rx[0].user, "tuser on the injected bad frame");
        assert_eq!(s.rx[0].data, f);
    }
    assert!(st[0].borrow().rx.is_empty());
    wd.run(1100);
    assert_eq!(st[0].borrow().rx.len(), 1);
    assert!(!st[0].borrow().rx[0].user);
    assert_eq!(wd.mac_stats(1).rx_bad_frames, 1);
}

#[test]
fn device_handles_share_the_world() {
    let (wd, _st) = world(cfg2(), 64);
    let d0 = wd.device(0);
    let d1 = wd.device(1);
    let d1b = d1.clone();
    assert_eq!(d0.index(), 0);
    assert_eq!(d1b.index(), 1);
    let t = wd.now();
    assert_eq!(d0.now(), t);
    d0.run(100);
    assert_eq!(d1.now(), t + 100);
    d1b.idle();
    assert_eq!(wd.now(), t + 100 + d0.config().idle_cycles);
    assert_ne!(d0.name(), d1.name());
    // Separate hosts: separate IOMMUs and seeds.
    let b0 = d0.alloc_dma(4096).unwrap();
    let b1 = d1.alloc_dma(4096).unwrap();
    assert!(
        d1.free_dma(&b0).is_err(),
        "NIC 1's host does not know NIC 0's buffer"
    );
    assert_ne!(d0.config().seed, d1.config().seed);
    assert_eq!(d0.world().nics(), 2);
    assert!(d1.free_dma(&b1).is_ok());
}
