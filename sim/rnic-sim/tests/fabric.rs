//! The fabric model on its own (pure Rust): frames injected with
//! `Fabric::send`, taken out with `Fabric::pop_due`.

use std::collections::HashMap;

use rnic_sim::frame::{self, UdpFlow};
use rnic_sim::{Delivery, Fabric, FabricConfig, Flap, PathConfig, PathHash, Routing, SimError};

fn udp(sport: u16, len: usize, id: u32) -> Vec<u8> {
    let mut payload = vec![0u8; len.saturating_sub(42).max(4)];
    payload[..4].copy_from_slice(&id.to_be_bytes());
    for (i, b) in payload.iter_mut().enumerate().skip(4) {
        *b = (i as u32 ^ id) as u8;
    }
    frame::ipv4_udp(
        &UdpFlow {
            sport,
            ..UdpFlow::default()
        },
        &payload,
    )
}

fn fabric(cfg: &FabricConfig, seed: u64) -> Fabric {
    Fabric::new(cfg, 2, Routing::PointToPoint, 8.0, seed).unwrap()
}

/// Binomial count within 5 sigma of its mean.
fn within(count: u64, n: u64, p: f64) -> bool {
    let mean = n as f64 * p;
    let sd = (n as f64 * p * (1.0 - p)).sqrt();
    (count as f64 - mean).abs() <= 5.0 * sd + 1.0
}

/// Send `n` frames from endpoint 0, one every `gap` cycles (UDP source port
/// from `sport(i)`), and collect every delivery.
fn run(
    f: &mut Fabric,
    n: u32,
    gap: u64,
    len: usize,
    sport: impl Fn(u32) -> u16,
) -> (Vec<Vec<u8>>, Vec<Delivery>) {
    let mut sent = Vec::new();
    let mut got = Vec::new();
    let mut t = 0u64;
    let mut i = 0u32;
    while i < n || f.in_flight() > 0 {
        if i < n && t % gap == 0 {
            let fr = udp(sport(i), len, i);
            sent.push(fr.clone());
            f.send(t, 0, fr);
            i += 1;
        }
        while let Some(d) = f.pop_due(t) {
            assert!(d.cycle <= t);
            got.push(d);
        }
        t += 1;
        assert!(t < 100_000_000, "fabric never drained");
    }
    (sent, got)
}

#[test]
fn fault_rates_within_statistical_bounds() {
    let path = PathConfig {
        delay: 50,
        drop_rate: 0.05,
        dup_rate: 0.03,
        corrupt_rate: 0.02,
        reorder_rate: 0.04,
        reorder_delay: 2000,
        bad_frame_rate: 0.01,
        ..PathConfig::default()
    };
    let cfg = FabricConfig::with_paths("test", vec![path]);
    let mut f = fabric(&cfg, 42);
    let n = 20_000u32;
    let (sent, got) = run(&mut f, n, 20, 100, |_| 1000);
    let s = f.stats();
    let t = s.total;
    assert_eq!(t.sent, u64::from(n));
    assert!(within(t.dropped, n.into(), 0.05), "dropped {}", t.dropped);
    let kept = t.sent - t.dropped;
    assert!(within(t.duplicated, kept, 0.03), "dup {}", t.duplicated);
    let copies = kept + t.duplicated;
    assert!(within(t.corrupted, copies, 0.02), "corrupt {}", t.corrupted);
    assert!(within(t.reordered, copies, 0.04), "reorder {}", t.reordered);
    assert!(within(t.bad_frames, copies, 0.01), "bad {}", t.bad_frames);
    assert_eq!(t.delivered, copies);
    assert_eq!(got.len() as u64, copies);
    assert_eq!(s.paths.len(), 1);
    assert_eq!(s.paths[0], t);
    assert_eq!(s.in_flight, 0);

    // Every delivered copy: original bytes, or exactly one flipped bit in
    // the part the ICRC covers (BTH onwards, not BTH byte 4).
    let mut corrupted = 0;
    let mut per_id: HashMap<u64, u32> = HashMap::new();
    let mut bad = 0;
    for d in &got {
        *per_id.entry(d.id).or_default() += 1;
        bad += u64::from(d.bad);
        assert_eq!(d.dst, 1);
        assert_eq!(d.src, 0);
        let orig = &sent[d.id as usize];
        assert_eq!(d.data.len(), orig.len());
        let diff: Vec<(usize, u8)> = orig
            .iter()
            .zip(&d.data)
            .enumerate()
            .filter(|(_, (a, b))| a != b)
            .map(|(i, (a, b))| (i, a ^ b))
            .collect();
        match diff.as_slice() {
            [] => {}
            [(i, x)] => {
                assert_eq!(x.count_ones(), 1);
                assert!(*i >= 42 && *i != 46, "flipped byte {i}");
                corrupted += 1;
            }
            _ => panic!("copy of frame {} differs in {} bytes", d.id, diff.len()),
        }
    }
    assert_eq!(corrupted, t.corrupted);
    assert_eq!(bad, t.bad_frames);
    let dups = per_id.values().filter(|&&c| c == 2).count() as u64;
    assert_eq!(dups, t.duplicated);
    assert!(per_id.values().all(|&c| c <= 2));
    assert_eq!(per_id.len() as u64, kept);

    // Reordering: frames arrive out of send order only because of the
    // reordered copies.
    let mut max_id = 0;
    let mut late = 0;
    for d in &got {
        if d.id < max_id {
            late += 1;
        }
        max_id = max_id.max(d.id);
    }
    assert!(late > 0 && late <= t.reordered, "late {late}");
    assert!(late as f64 >= 0.8 * t.reordered as f64, "late {late}");
}

#[test]
fn named_profiles_have_their_rates() {
    let n = 10_000u32;
    let mut f = fabric(&FabricConfig::profile("lossy").unwrap(), 7);
    let (_, got) = run(&mut f, n, 16, 64, |i| i as u16);
    let t = f.stats().total;
    assert!(within(t.dropped, n.into(), 0.01), "{t:?}");
    assert_eq!(t.duplicated + t.corrupted + t.reordered, 0);
    assert_eq!(got.len() as u64, u64::from(n) - t.dropped);

    let mut f = fabric(&FabricConfig::profile("hostile").unwrap(), 7);
    let (_, _) = run(&mut f, n, 16, 64, |i| i as u16);
    let s = f.stats();
    let t = s.total;
    assert_eq!(s.paths.len(), 4);
    assert!(within(t.dropped, n.into(), 0.01), "{t:?}");
    assert!(within(t.duplicated, n.into(), 0.01), "{t:?}");
    assert!(within(t.reordered, n.into(), 0.05), "{t:?}");
    assert!(t.corrupted <= 30, "{t:?}");
    // Spread over all 4 paths by the UDP source port.
    for p in &s.paths {
        assert!(p.sent > n as u64 / 8, "{:?}", s.paths);
    }

    let mut f = fabric(&FabricConfig::profile("ideal").unwrap(), 7);
    let (sent, got) = run(&mut f, 1000, 16, 64, |i| i as u16);
    assert_eq!(got.len(), 1000);
    for (i, d) in got.iter().enumerate() {
        assert_eq!(d.id, i as u64, "ideal delivers in order");
        assert_eq!(d.data, sent[i]);
        assert!(!d.bad);
    }
}

#[test]
fn path_is_chosen_by_udp_source_port() {
    let mut cfg = FabricConfig::profile("spray-8").unwrap();
    cfg.hash = PathHash::Modulo;
    let mut f = fabric(&cfg, 1);
    for sport in [0u16, 1, 7, 8, 13, 49152, 65535] {
        let fr = udp(sport, 80, 0);
        assert_eq!(f.path_of(&fr), usize::from(sport) % 8);
        let rep = f.send(0, 0, fr).clone();
        assert_eq!(rep.copies.len(), 1);
        assert_eq!(rep.copies[0].path, usize::from(sport) % 8);
    }
    // Not UDP (an ARP-like frame, and a TCP one): path 0.
    let mut arp = vec![0xffu8; 6];
    arp.extend_from_slice(&[2, 0, 0, 0, 0, 1, 0x08, 0x06]);
    arp.resize(60, 0);
    assert_eq!(f.path_of(&arp), 0);
    let mut tcp = udp(5, 80, 0);
    tcp[14 + 9] = 6;
    assert_eq!(f.path_of(&tcp), 0);

    // Default hash: the same port always takes the same path, and ports
    // spread over the paths.
    let cfg = FabricConfig::profile("spray-8").unwrap();
    let mut f = fabric(&cfg, 1);
    let (_, got) = run(&mut f, 4096, 4, 64, |i| 10_000 + i as u16);
    let mut by_port: HashMap<u16, usize> = HashMap::new();
    for d in &got {
        let p = frame::udp_src_port(&d.data).unwrap();
        assert_eq!(d.path, PathHash::Mix.path(p, 8));
        assert_eq!(*by_port.entry(p).or_insert(d.path), d.path);
    }
    let s = f.stats();
    for p in &s.paths {
        assert!((400..650).contains(&p.sent), "{:?}", s.paths);
        assert_eq!(p.sent, p.delivered);
    }
    // spray-8: path delays 100..400 (slowest 4x fastest).
    let d: Vec<u64> = cfg.paths.iter().map(|p| p.delay).collect();
    assert_eq!((d[0], d[7]), (100, 400));
}

#[test]
fn serialization_at_path_bandwidth() {
    let cfg = FabricConfig::with_paths(
        "bw",
        vec![
            PathConfig {
                delay: 100,
                bandwidth: Some(8.0),
                ..PathConfig::default()
            },
            PathConfig {
                delay: 100,
                bandwidth: Some(4.0),
                ..PathConfig::default()
            },
        ],
    );
    let mut c = cfg.clone();
    c.hash = PathHash::Modulo;
    let mut f = Fabric::new(&c, 2, Routing::PointToPoint, 8.0, 3).unwrap();
    // 10 frames of 1000 bytes on path 0 (8 B/cycle), all at cycle 0: the
    // k-th finishes serializing at 125 (k+1) and arrives 100 later.
    for i in 0..10 {
        let fr = udp(0, 1000, i);
        assert_eq!(fr.len(), 1000);
        let rep = f.send(0, 0, fr);
        assert_eq!(rep.copies[0].arrival, 125 * (u64::from(i) + 1) + 100);
    }
    // Path 1 (4 B/cycle) is independent of path 0.
    let rep = f.send(0, 0, udp(1, 1000, 99));
    assert_eq!(rep.copies[0].arrival, 250 + 100);
    // So is the other direction (its own links).
    let rep = f.send(0, 1, udp(0, 1000, 100));
    assert_eq!(rep.copies[0].arrival, 125 + 100);
    // A frame that comes after the path went idle starts at once.
    let rep = f.send(5000, 0, udp(0, 500, 101));
    assert_eq!(rep.copies[0].arrival, 5000 + 63 + 100);
    // Deliveries come out at exactly those cycles.
    let mut arrivals = Vec::new();
    for t in 0..6000 {
        while let Some(d) = f.pop_due(t) {
            assert_eq!(d.cycle, t);
            arrivals.push((t, d.dst, d.id));
        }
    }
    assert_eq!(arrivals.len(), 13);
    assert_eq!(arrivals[0], (225, 1, 0));
    assert_eq!(arrivals[1], (225, 0, 11));
    assert_eq!(arrivals[2], (350, 1, 1));
    assert_eq!(arrivals[3], (350, 1, 10));

    // Per-frame overhead (preamble, FCS, gap) counts for serialization;
    // default bandwidth = the line rate.
    let mut c = FabricConfig::ideal();
    c.frame_overhead = 24;
    let mut f = Fabric::new(&c, 2, Routing::PointToPoint, 32.0, 3).unwrap();
    assert_eq!(f.send(0, 0, udp(0, 1000, 0)).copies[0].arrival, 32 + 100);
    assert_eq!(f.send(0, 0, udp(0, 1000, 1)).copies[0].arrival, 64 + 100);
}

#[test]
fn paths_are_fifo_despite_jitter() {
    let cfg = FabricConfig::with_paths(
        "jitter",
        vec![PathConfig {
            delay: 100,
            jitter: 500,
            ..PathConfig::default()
        }],
    );
    let mut f = fabric(&cfg, 9);
    let (_, got) = run(&mut f, 2000, 3, 64, |i| i as u16);
    let ids: Vec<u64> = got.iter().map(|d| d.id).collect();
    assert!(
        ids.windows(2).all(|w| w[0] < w[1]),
        "jitter reordered a path"
    );
    // ...but it does spread latencies.
    let cycles: Vec<u64> = got.iter().map(|d| d.cycle).collect();
    assert!(cycles.windows(2).any(|w| w[1] - w[0] > 100));
}

fn trace(seed: u64, profile: &str) -> Vec<(u64, usize, usize, u64, u64)> {
    let mut f = fabric(&FabricConfig::profile(profile).unwrap(), seed);
    let (_, got) = run(&mut f, 3000, 7, 90, |i| (i * 7919) as u16);
    got.iter()
        .map(|d| {
            let h = d.data.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| {
                (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
            });
            (d.cycle, d.dst, d.path, d.id, h ^ u64::from(d.bad))
        })
        .collect()
}

#[test]
fn same_seed_same_delivery_trace() {
    let a = trace(1234, "hostile");
    let b = trace(1234, "hostile");
    assert_eq!(a, b);
    let c = trace(1235, "hostile");
    assert_ne!(a, c, "another seed, another run");
}

#[test]
fn routing_modes() {
    let cfg = FabricConfig::ideal();
    // One endpoint, no loopback: counted and dropped.
    let mut f = Fabric::new(&cfg, 1, Routing::Sink, 8.0, 1).unwrap();
    assert!(f.send(0, 0, udp(1, 64, 0)).unrouted);
    assert_eq!(f.stats().unrouted, 1);
    assert_eq!(f.in_flight(), 0);
    // Loopback.
    let mut f = Fabric::new(&cfg, 1, Routing::Loopback, 8.0, 1).unwrap();
    f.send(0, 0, udp(1, 64, 0));
    let d = (0..1000).find_map(|t| f.pop_due(t)).unwrap();
    assert_eq!((d.src, d.dst), (0, 0));
    // Learning switch with 3 endpoints: unknown destination floods, a
    // learned one is unicast.
    let mut f = Fabric::new(&cfg, 3, Routing::Switch, 8.0, 1).unwrap();
    let a = [2, 0, 0, 0, 0, 0xa];
    let b = [2, 0, 0, 0, 0, 0xb];
    let mk = |dmac, smac| {
        frame::ipv4_udp(
            &UdpFlow {
                dmac,
                smac,
                ..UdpFlow::default()
            },
            &[0; 20],
        )
    };
    let r = f.send(0, 0, mk(b, a)).clone();
    let mut dsts: Vec<usize> = r.copies.iter().map(|c| c.dst).collect();
    dsts.sort();
    assert_eq!(dsts, vec![1, 2], "flooded");
    let r = f.send(0, 2, mk(a, b)).clone();
    assert_eq!(r.copies.len(), 1);
    assert_eq!(r.copies[0].dst, 0, "learned a at endpoint 0");
    let r = f.send(0, 0, mk(b, a)).clone();
    assert_eq!(r.copies[0].dst, 2, "learned b at endpoint 2");
    assert_eq!(f.stats().flooded, 1);
    // Bad combinations are refused.
    assert!(Fabric::new(&cfg, 3, Routing::PointToPoint, 8.0, 1).is_err());
    assert!(Fabric::new(&cfg, 2, Routing::Loopback, 8.0, 1).is_err());
}

#[test]
fn profile_errors_and_validation() {
    let e = FabricConfig::profile("lossless").unwrap_err();
    assert!(matches!(e, SimError::UnknownProfile { .. }));
    let m = e.to_string();
    for n in [
        "\"lossless\"",
        "ideal",
        "lossy",
        "reorder",
        "hostile",
        "spray-8",
    ] {
        assert!(m.contains(n), "{m}");
    }
    let mut c = FabricConfig::ideal();
    c.paths[0].drop_rate = 1.5;
    assert!(c.validate().is_err());
    c.paths[0].drop_rate = 0.0;
    c.paths[0].bandwidth = Some(0.0);
    assert!(c.validate().is_err());
    c.paths.clear();
    assert!(c.validate().is_err());
    let r = FabricConfig::profile("reorder").unwrap();
    let d: Vec<u64> = r.paths.iter().map(|p| p.delay).collect();
    assert!(d.len() >= 2 && d.windows(2).all(|w| w[0] < w[1]));
    assert!(r.paths.iter().all(|p| p.reorder_rate == 0.05));
}

/// `-flap`: the slowest path of a sprayed fabric goes down and comes back
/// on a fixed schedule (every frame sent on it while down is dropped, none
/// while up), the other paths keep their faults; `dead`, one path and a
/// zero period are refused.
#[test]
fn a_flapping_path_drops_exactly_while_down() {
    let cfg = FabricConfig::profile("spray-8-loss0.05-flap").unwrap();
    assert_eq!(cfg.paths.len(), 8);
    for (i, p) in cfg.paths.iter().enumerate() {
        assert_eq!(p.drop_rate, 0.05);
        assert_eq!(p.flap, (i == 7).then_some(Flap::SPRAY), "path {i}");
    }
    let cfg = FabricConfig::profile("spray-4-flap").unwrap();
    assert!(cfg.paths.iter().all(|p| p.drop_rate == 0.0));
    let mut f = fabric(&cfg, 5);
    let slow = (0..=u16::MAX)
        .find(|&s| f.path_of(&udp(s, 64, 0)) == 3)
        .unwrap();
    let fast = (0..=u16::MAX)
        .find(|&s| f.path_of(&udp(s, 64, 0)) == 0)
        .unwrap();
    let period = Flap::SPRAY.up + Flap::SPRAY.down;
    for t in (0..3 * period).step_by(997) {
        let down = Flap::SPRAY.is_down(t);
        assert_eq!(down, t % period >= 50_000);
        let r = f.send(t, 0, udp(slow, 64, 1));
        assert_eq!(r.copies[0].dropped, down, "slow path at cycle {t}");
        let r = f.send(t, 0, udp(fast, 64, 2));
        assert!(!r.copies[0].dropped, "fast path at cycle {t}");
    }
    for bad in [
        "spray-1-flap",
        "spray-8-dead-flap",
        "spray-8-flapp",
        "spray-8-loss2-flap",
    ] {
        assert!(FabricConfig::profile(bad).is_err(), "{bad}");
    }
    let mut c = FabricConfig::profile("spray-2-flap").unwrap();
    c.paths[1].flap = Some(Flap { up: 10, down: 0 });
    assert!(c.validate().is_err());
}

/// The per-source path counters: each endpoint's frames are counted on the
/// path they took (sent, dropped, dropped while down, delivered) and sum to
/// the fabric's totals; reading them draws nothing from the random stream.
#[test]
fn per_source_path_counters() {
    let cfg = FabricConfig::profile("spray-4-loss0.1-flap").unwrap();
    let trace = |count: bool| {
        let mut f = fabric(&cfg, 9);
        let mut got = Vec::new();
        let mut down0 = 0u64; // endpoint 0's frames sent into path 3 while down
        for t in 0..200_000u64 {
            if t % 50 == 0 {
                let src = (t / 50 % 2) as usize;
                let fr = udp((t / 100) as u16, 100, t as u32);
                if src == 0 && f.path_of(&fr) == 3 && Flap::SPRAY.is_down(t) {
                    down0 += 1;
                }
                let r = f.send(t, src, fr);
                got.push((r.id, r.copies.iter().map(|c| c.dropped).collect::<Vec<_>>()));
            }
            while let Some(d) = f.pop_due(t) {
                got.push((d.id, vec![d.cycle == t]));
            }
            if count {
                let _ = f.path_stats_from(0);
            }
        }
        while let Some(d) = f.pop_due(u64::MAX) {
            got.push((d.id, vec![false]));
        }
        (got, f, down0)
    };
    let (a, f, down0) = trace(true);
    let (b, _, _) = trace(false);
    assert_eq!(a, b);
    assert!(down0 > 50, "{down0}");
    let s = f.stats();
    let (s0, s1) = (f.path_stats_from(0), f.path_stats_from(1));
    assert_eq!((s0.len(), s1.len()), (4, 4));
    for p in 0..4 {
        let (x, y, t) = (s0[p], s1[p], s.paths[p]);
        assert_eq!(x.sent + y.sent, t.sent, "path {p}");
        assert_eq!(x.dropped + y.dropped, t.dropped, "path {p}");
        assert_eq!(x.delivered + y.delivered, t.delivered, "path {p}");
        assert_eq!(x.down_dropped + y.down_dropped, t.down_dropped, "path {p}");
        assert!(x.sent > 100 && y.sent > 100, "path {p}: {x:?} {y:?}");
        assert_eq!(x.sent, x.dropped + x.delivered, "path {p}: {x:?}");
        // only the flapping path (3) is ever down; it loses frames at
        // random too
        if p == 3 {
            assert_eq!(x.down_dropped, down0);
            assert!(x.dropped > x.down_dropped);
        } else {
            assert_eq!(x.down_dropped, 0);
        }
    }
    assert_eq!(s.total.sent, 4000);
}

#[test]
#[should_panic(expected = "endpoint 2 out of range")]
fn per_source_counters_of_no_endpoint() {
    let f = fabric(&FabricConfig::ideal(), 1);
    let _ = f.path_stats_from(2);
}
