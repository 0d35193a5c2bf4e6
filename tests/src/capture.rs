//! Torture runs with every frame of the simulated wire captured: for the
//! checks only the wire can make (a resend is its first send again).

use std::path::{Path, PathBuf};

use pcap_file::pcap::PcapReader;
use rnic_torture::sim::{run_torture, Evidence, SimOpts};
use rnic_torture::Config;

/// A scratch file for a capture, named after the test process.
pub fn capture_path(name: &str) -> PathBuf {
    std::env::temp_dir().join(format!("rnic-capture-{}-{name}", std::process::id()))
}

/// Runs the torture test with `o` and `cfg`, every frame kept in a pcap at
/// `path`; the run must be clean. Returns the frames, in wire order.
pub fn torture_capture(o: &SimOpts, cfg: &Config, path: &Path) -> Vec<Vec<u8>> {
    let o = SimOpts {
        pcap_window: 1 << 20,
        ..o.clone()
    };
    let ev = Evidence {
        pcap: Some(path.to_path_buf()),
        ..Default::default()
    };
    let out = run_torture(&o, cfg, &ev, &mut |_, _| {}, &mut |_| {}).unwrap();
    assert!(!out.report.failed(), "{:?}", out.report);
    let mut frames = Vec::new();
    let mut r = PcapReader::new(std::fs::File::open(path).unwrap()).unwrap();
    while let Some(pkt) = r.next_packet() {
        frames.push(pkt.unwrap().data.into_owned());
    }
    assert_eq!(
        out.pcap_frames.map(|(n, _)| n),
        Some(frames.len()),
        "the whole run must be in the capture"
    );
    frames
}
