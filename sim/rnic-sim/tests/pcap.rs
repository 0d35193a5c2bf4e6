//! Wire captures: written by the simulator, read back with `pcap-file`
//! (and by `tshark` when it is installed).

#[path = "common/mac_nic.rs"]
mod mac_nic;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use mac_nic::{MacNic, TxFrame};
use pcap_file::pcap::PcapReader;
use pcap_file::pcapng::blocks::interface_description::InterfaceDescriptionOption;
use pcap_file::pcapng::{Block, PcapNgReader};
use pcap_file::{DataLink, TsResolution};
use rnic_sim::fabric::{CopyFate, SendReport};
use rnic_sim::frame::{self, UdpFlow};
use rnic_sim::{
    CaptureFile, FabricConfig, FrameRing, PathConfig, RootComplexConfig, SimWorld, WorldConfig,
};

/// `name` in a temporary directory of its own (removed with `cleanup`).
fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("rnic-sim-pcap-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d.join(name)
}

fn cleanup(files: &[&Path]) {
    for f in files {
        let _ = std::fs::remove_dir_all(f.parent().unwrap());
    }
}

fn udp(sport: u16, len: usize) -> Vec<u8> {
    frame::ipv4_udp(
        &UdpFlow {
            sport,
            ..UdpFlow::default()
        },
        &vec![0x5a; len - 42],
    )
}

fn read_pcap(p: &Path) -> (DataLink, TsResolution, Vec<(Duration, Vec<u8>)>) {
    let mut r = PcapReader::new(std::fs::File::open(p).unwrap()).unwrap();
    let h = r.header();
    let mut v = Vec::new();
    while let Some(pkt) = r.next_packet() {
        let pkt = pkt.unwrap();
        assert_eq!(pkt.orig_len as usize, pkt.data.len());
        v.push((pkt.timestamp, pkt.data.into_owned()));
    }
    (h.datalink, h.ts_resolution, v)
}

struct NgPacket {
    iface: u32,
    ts: Duration,
    data: Vec<u8>,
    comment: Option<String>,
}

fn read_pcapng(p: &Path) -> (Vec<(String, Option<u8>)>, Vec<NgPacket>) {
    let mut r = PcapNgReader::new(std::fs::File::open(p).unwrap()).unwrap();
    let mut ifaces = Vec::new();
    let mut pkts = Vec::new();
    while let Some(b) = r.next_block() {
        match b.unwrap() {
            Block::InterfaceDescription(i) => {
                assert_eq!(i.linktype, DataLink::ETHERNET);
                let mut name = String::new();
                let mut res = None;
                for o in &i.options {
                    match o {
                        InterfaceDescriptionOption::IfName(n) => name = n.to_string(),
                        InterfaceDescriptionOption::IfTsResol(r) => res = Some(*r),
                        _ => {}
                    }
                }
                ifaces.push((name, res));
            }
            Block::EnhancedPacket(e) => {
                let comment = e.options.iter().find_map(|o| match o {
                    pcap_file::pcapng::blocks::enhanced_packet::EnhancedPacketOption::Comment(
                        c,
                    ) => Some(c.to_string()),
                    _ => None,
                });
                pkts.push(NgPacket {
                    iface: e.interface_id,
                    ts: e.timestamp,
                    data: e.data.into_owned(),
                    comment,
                });
            }
            _ => {}
        }
    }
    (ifaces, pkts)
}

/// `tshark -r path -T fields -e ...`, one Vec per packet; None when tshark
/// is not installed.
fn tshark(path: &Path, fields: &[&str]) -> Option<Vec<Vec<String>>> {
    let mut c = Command::new("tshark");
    c.arg("-r")
        .arg(path)
        .args(["-T", "fields", "-E", "separator=|"]);
    for f in fields {
        c.args(["-e", f]);
    }
    let o = match c.output() {
        Ok(o) => o,
        Err(_) => {
            eprintln!("tshark not installed: skipping its check");
            return None;
        }
    };
    assert!(
        o.status.success(),
        "tshark failed on {}: {}",
        path.display(),
        String::from_utf8_lossy(&o.stderr)
    );
    Some(
        String::from_utf8_lossy(&o.stdout)
            .lines()
            .map(|l| l.split('|').map(str::to_string).collect())
            .collect(),
    )
}

fn fate(id: u64, src: usize, dropped: bool) -> SendReport {
    SendReport {
        id,
        cycle: 0,
        src,
        len: 0,
        unrouted: false,
        copies: vec![CopyFate {
            dst: 1 - src,
            path: id as usize % 3,
            dropped,
            duplicate: false,
            corrupt_bit: if id == 7 { Some(42 * 8 + 3) } else { None },
            bad: false,
            reordered: false,
            arrival: 1000 + id,
        }],
    }
}

#[test]
fn pcap_round_trip() {
    let p = tmp("round.pcap");
    let frames: Vec<Vec<u8>> = (0..50)
        .map(|i| udp(40000 + i, 60 + usize::from(i) * 13))
        .collect();
    {
        let mut c = CaptureFile::create(&p, 250.0, 2).unwrap();
        for (k, f) in frames.iter().enumerate() {
            c.write(k as u64 * 37, k % 2, f, None).unwrap();
        }
        c.flush().unwrap();
    }
    let (dl, res, pkts) = read_pcap(&p);
    assert_eq!(dl, DataLink::ETHERNET);
    assert_eq!(res, TsResolution::NanoSecond);
    assert_eq!(pkts.len(), 50);
    for (k, (ts, data)) in pkts.iter().enumerate() {
        assert_eq!(
            *ts,
            Duration::from_nanos(k as u64 * 37 * 4),
            "250 MHz: 4 ns a cycle"
        );
        assert_eq!(data, &frames[k]);
    }
    if let Some(rows) = tshark(&p, &["frame.len", "udp.srcport", "frame.time_epoch"]) {
        assert_eq!(rows.len(), 50);
        for (k, r) in rows.iter().enumerate() {
            assert_eq!(r[0], frames[k].len().to_string());
            assert_eq!(r[1], (40000 + k).to_string());
            let ns = (r[2].parse::<f64>().unwrap() * 1e9).round() as u64;
            assert_eq!(ns, k as u64 * 148);
        }
    }
    cleanup(&[&p]);
}

#[test]
fn pcapng_round_trip_with_fates() {
    let p = tmp("round.pcapng");
    let frames: Vec<Vec<u8>> = (0..20).map(|i| udp(100 + i, 80)).collect();
    {
        let mut c = CaptureFile::create(&p, 100.0, 2).unwrap();
        for (k, f) in frames.iter().enumerate() {
            let src = k % 2;
            c.write(
                k as u64 * 10,
                src,
                f,
                Some(&fate(k as u64, src, k % 5 == 0)),
            )
            .unwrap();
        }
        c.flush().unwrap();
    }
    let (ifaces, pkts) = read_pcapng(&p);
    assert_eq!(
        ifaces,
        vec![("nic0".to_string(), Some(9)), ("nic1".to_string(), Some(9))]
    );
    assert_eq!(pkts.len(), 20);
    for (k, pk) in pkts.iter().enumerate() {
        assert_eq!(pk.iface as usize, k % 2);
        assert_eq!(
            pk.ts,
            Duration::from_nanos(k as u64 * 100),
            "100 MHz: 10 ns a cycle"
        );
        assert_eq!(pk.data, frames[k]);
        let c = pk.comment.as_deref().unwrap();
        assert!(
            c.starts_with(&format!("cycle {}: frame {k} from {}", k * 10, k % 2)),
            "{c}"
        );
        assert_eq!(c.contains("DROPPED"), k % 5 == 0, "{c}");
        assert_eq!(c.contains("CORRUPTED(byte 42 bit 3)"), k == 7, "{c}");
    }
    if let Some(rows) = tshark(
        &p,
        &["frame.interface_name", "frame.comment", "frame.time_epoch"],
    ) {
        assert_eq!(rows.len(), 20);
        let dropped = rows.iter().filter(|r| r[1].contains("DROPPED")).count();
        assert_eq!(dropped, 4);
        assert_eq!(rows[3][0], "nic1");
        let ns = (rows[3][2].parse::<f64>().unwrap() * 1e9).round() as u64;
        assert_eq!(ns, 300);
    }
    cleanup(&[&p]);
}

#[test]
fn ring_keeps_the_last_frames() {
    let mut r = FrameRing::new(5);
    for k in 0..12u64 {
        r.push(k, 0, &udp(k as u16, 64), &fate(k, 0, false));
    }
    assert_eq!(r.len(), 5);
    assert_eq!(r.total, 12);
    let cycles: Vec<u64> = r.frames().map(|f| f.cycle).collect();
    assert_eq!(cycles, vec![7, 8, 9, 10, 11]);
    let p = tmp("ring.pcap");
    assert_eq!(r.dump(&p, 250.0, 1).unwrap(), 5);
    let (_, _, pkts) = read_pcap(&p);
    assert_eq!(pkts.len(), 5);
    assert_eq!(pkts[0].1, udp(7, 64));
    r.set_capacity(2);
    assert_eq!(r.len(), 2);
    cleanup(&[&p]);
    let mut off = FrameRing::new(0);
    off.push(0, 0, &[1, 2, 3], &fate(0, 0, false));
    assert!(off.is_empty());
}

/// A world of two stand-in NICs on a lossy fabric: the pcap holds every
/// frame as sent (dropped ones too), in send order, timestamped by cycle.
#[test]
fn world_captures_the_wire() {
    let full = tmp("world.pcapng");
    let classic = tmp("world-late.pcap");
    let (m0, s0) = MacNic::boxed(64);
    let (m1, s1) = MacNic::boxed(64);
    let cfg = WorldConfig {
        nics: 2,
        seed: 3,
        root_complex: RootComplexConfig::bench(),
        fabric: FabricConfig::with_paths(
            "lossy30",
            vec![PathConfig {
                drop_rate: 0.3,
                ..PathConfig::default()
            }],
        ),
        pcap: Some(full.clone()),
        pcap_window: 8,
        clock_mhz: 250.0,
        ..WorldConfig::default()
    };
    let wd = SimWorld::with_models(cfg, vec![m0, m1]).unwrap();
    let a: Vec<Vec<u8>> = (0..40).map(|i| udp(i, 64 + usize::from(i))).collect();
    let b: Vec<Vec<u8>> = (0..40).map(|i| udp(1000 + i, 300)).collect();
    s0.borrow_mut()
        .tx
        .extend(a.iter().cloned().map(TxFrame::new));
    s1.borrow_mut()
        .tx
        .extend(b.iter().cloned().map(TxFrame::new));
    assert!(wd.run_until(50_000, |w| w.quiescent()
        && s0.borrow().tx.is_empty()
        && s1.borrow().tx.is_empty()));
    wd.flush_pcap().unwrap();
    let st = wd.fabric_stats();
    assert!(st.total.dropped > 10, "{st:?}");

    let (ifaces, pkts) = read_pcapng(&full);
    assert_eq!(ifaces.len(), 2);
    assert_eq!(pkts.len(), 80, "every frame, dropped or not");
    let dropped = pkts
        .iter()
        .filter(|p| p.comment.as_deref().unwrap().contains("DROPPED"))
        .count() as u64;
    assert_eq!(dropped, st.total.dropped);
    // Per NIC: the frames it sent, in order, at the cycle they left it.
    for (nic, frames, done) in [
        (0u32, &a, s0.borrow().tx_done.clone()),
        (1, &b, s1.borrow().tx_done.clone()),
    ] {
        let mine: Vec<&NgPacket> = pkts.iter().filter(|p| p.iface == nic).collect();
        assert_eq!(mine.len(), frames.len());
        for (k, p) in mine.iter().enumerate() {
            assert_eq!(&p.data, &frames[k]);
            assert_eq!(p.ts, Duration::from_nanos(done[k] * 4));
        }
    }
    let ts: Vec<Duration> = pkts.iter().map(|p| p.ts).collect();
    assert!(ts.windows(2).all(|w| w[0] <= w[1]), "file in time order");
    // Delivered = not dropped.
    assert_eq!(
        (s0.borrow().rx.len() + s1.borrow().rx.len()) as u64,
        80 - st.total.dropped
    );

    // The window: the last 8 frames, with fates; dumped on demand.
    let win = wd.window();
    assert_eq!(win.len(), 8);
    let last: Vec<Vec<u8>> = pkts[72..].iter().map(|p| p.data.clone()).collect();
    assert_eq!(win.iter().map(|w| w.data.clone()).collect::<Vec<_>>(), last);
    let wp = tmp("window.pcapng");
    assert_eq!(wd.dump_window(&wp).unwrap(), 8);
    let (_, wpk) = read_pcapng(&wp);
    assert_eq!(wpk.len(), 8);
    assert_eq!(wpk[7].comment, pkts[79].comment);
    if let Some(rows) = tshark(&wp, &["frame.comment"]) {
        assert_eq!(rows.len(), 8);
    }

    // Restart the capture as classic pcap.
    wd.start_pcap(&classic).unwrap();
    wd.send_frame(0, &udp(9, 100));
    wd.stop_pcap().unwrap();
    let (_, _, late) = read_pcap(&classic);
    assert_eq!(late.len(), 1);
    assert_eq!(late[0].1, udp(9, 100));
    if let Some(rows) = tshark(&classic, &["udp.srcport"]) {
        assert_eq!(rows, vec![vec!["9".to_string()]]);
    }
    wd.clear_window();
    assert!(wd.window().is_empty());
    cleanup(&[&full, &classic, &wp]);
}
