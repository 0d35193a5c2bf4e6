//! Torture runs with every frame of the simulated wire captured: for the
//! checks only the wire can make (a resend is its first send again), and
//! the search for a seed that shows a break switch only the wire sees.

use std::collections::btree_map::Entry;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use pcap_file::pcap::PcapReader;
use rnic_torture::sim::{run_torture, Evidence, SimOpts};
use rnic_torture::Config;
use rnic_wire::{opcode, RoceFrame};

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

/// A request packet sent again with other contents than its first send.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DifferingResend {
    /// The resend's frame, and its first send's (indices into the capture).
    pub frame: usize,
    pub first: usize,
    pub psn: u32,
}

/// The first resend in `frames` that differs from its first send: a data
/// request (a SEND or WRITE of rc, an mp data packet) whose destination,
/// QP and PSN went out before, with another opcode, RETH, MPETH, ImmDt,
/// MCETH or payload. The path (UDP source port) may differ: mp resends
/// take another one.
pub fn first_differing_resend(frames: &[RoceFrame]) -> Option<DifferingResend> {
    type Contents<'a> = (
        u8,
        Option<rnic_wire::Reth>,
        Option<rnic_wire::Mpeth>,
        Option<u32>,
        Option<rnic_wire::Mceth>,
        &'a [u8],
    );
    let mut sent: BTreeMap<([u8; 4], u32, u32), (usize, Contents)> = BTreeMap::new();
    for (i, f) in frames.iter().enumerate() {
        let op = f.bth.opcode;
        let data = op <= opcode::RDMA_WRITE_ONLY_WITH_IMMEDIATE || f.mpeth.is_some();
        if !data {
            continue;
        }
        let now = (op, f.reth, f.mpeth, f.immdt, f.mceth, &f.payload[..]);
        match sent.entry((f.ip.dst, f.bth.dest_qp, f.bth.psn)) {
            Entry::Occupied(e) => {
                let (first, was) = e.get();
                if *was != now {
                    return Some(DifferingResend {
                        frame: i,
                        first: *first,
                        psn: f.bth.psn,
                    });
                }
            }
            Entry::Vacant(e) => {
                e.insert((i, now));
            }
        }
    }
    None
}

/// A break switch that only the wire shows, found: `run(seed, on)` makes a
/// capture with the switch on or off, and `seen` finds the break in it.
/// Seeds 1 to `max` run with the switch on until one shows it; that seed
/// must be clean with the switch off. Returns the seed and what `seen`
/// found; panics (naming the seeds tried and their frame counts) if no
/// seed shows it, or the seed is not clean without the switch.
pub fn seed_showing_break<T: std::fmt::Debug>(
    name: &str,
    max: u64,
    run: impl Fn(u64, bool) -> Vec<Vec<u8>>,
    seen: impl Fn(&[Vec<u8>]) -> Option<T>,
) -> (u64, T) {
    let mut clean = Vec::new();
    for seed in 1..=max {
        let frames = run(seed, true);
        if let Some(t) = seen(&frames) {
            eprintln!("{name} caught at seed {seed}: {t:?} (clean before: {clean:?})");
            let off = run(seed, false);
            if let Some(u) = seen(&off) {
                panic!("{name}: seed {seed} shows {u:?} with the switch off too");
            }
            return (seed, t);
        }
        clean.push((seed, frames.len()));
    }
    panic!("--break {name} not seen in seeds 1..={max} (seed, frames): {clean:?}");
}
