//! Wire captures: every frame a NIC sends, as sent (before the fabric's
//! faults), with timestamps derived from the cycle count at the
//! simulation's clock.
//!
//! Two formats, chosen by the file name:
//! - `*.pcapng`: pcapng, one interface per NIC (`nic0`, `nic1`, ...;
//!   nanosecond timestamps), and a comment on every packet telling its fate
//!   in the fabric (path, dropped, duplicated, corrupted bit, reordered,
//!   arrival cycle). In Wireshark: `frame.comment contains "DROPPED"`.
//! - anything else: classic pcap, nanosecond timestamps, no fates.
//!
//! Both are link type Ethernet (frames without FCS). [`FrameRing`] keeps
//! the last N frames (with their fates) for [`crate::SimWorld::dump_window`].

use std::borrow::Cow;
use std::cell::RefCell;
use std::collections::VecDeque;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::time::Duration;

use pcap_file::pcap::{PcapHeader, PcapPacket, PcapWriter};
use pcap_file::pcapng::blocks::enhanced_packet::{EnhancedPacketBlock, EnhancedPacketOption};
use pcap_file::pcapng::blocks::interface_description::{
    InterfaceDescriptionBlock, InterfaceDescriptionOption,
};
use pcap_file::pcapng::PcapNgWriter;
use pcap_file::{DataLink, TsResolution};

use crate::fabric::SendReport;
use crate::SimError;

/// Capture file format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CaptureFormat {
    /// Classic pcap (nanosecond timestamps).
    Pcap,
    /// pcapng with a fate comment per packet.
    PcapNg,
}

impl CaptureFormat {
    /// `PcapNg` for a `.pcapng` extension, else `Pcap`.
    pub fn from_path(p: &Path) -> Self {
        match p.extension().and_then(|e| e.to_str()) {
            Some(e) if e.eq_ignore_ascii_case("pcapng") => CaptureFormat::PcapNg,
            _ => CaptureFormat::Pcap,
        }
    }
}

/// Timestamp of cycle `cycle` at `clock_mhz`.
pub fn cycle_time(cycle: u64, clock_mhz: f64) -> Duration {
    Duration::from_nanos((cycle as f64 * 1000.0 / clock_mhz).round() as u64)
}

/// A frame as a NIC sent it, and what the fabric did with it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WireFrame {
    /// Cycle its last beat left the NIC.
    pub cycle: u64,
    /// Sending NIC.
    pub src: usize,
    pub data: Vec<u8>,
    pub fate: SendReport,
}

/// The file behind a pcap-file writer, shared so that it can be flushed
/// (the pcap writer of pcap-file 2 gives no access to its writer).
#[derive(Clone)]
struct Shared(Rc<RefCell<BufWriter<File>>>);

impl Write for Shared {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        self.0.borrow_mut().write(b)
    }
    fn write_all(&mut self, b: &[u8]) -> std::io::Result<()> {
        self.0.borrow_mut().write_all(b)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.0.borrow_mut().flush()
    }
}

enum Inner {
    Pcap(PcapWriter<Shared>),
    Ng(PcapNgWriter<Shared>),
}

/// A capture file being written.
pub struct CaptureFile {
    inner: Inner,
    file: Shared,
    path: PathBuf,
    clock_mhz: f64,
    interfaces: usize,
}

fn pcap_err(path: &Path, e: impl std::fmt::Display) -> SimError {
    SimError::Pcap(format!("{}: {e}", path.display()))
}

impl CaptureFile {
    /// Create `path` (format by extension) for frames of `interfaces` NICs.
    pub fn create(path: &Path, clock_mhz: f64, interfaces: usize) -> Result<Self, SimError> {
        let file = Shared(Rc::new(RefCell::new(BufWriter::with_capacity(
            1 << 16,
            File::create(path).map_err(|e| pcap_err(path, e))?,
        ))));
        let f = file.clone();
        let inner = match CaptureFormat::from_path(path) {
            CaptureFormat::Pcap => Inner::Pcap(
                PcapWriter::with_header(
                    f,
                    PcapHeader {
                        datalink: DataLink::ETHERNET,
                        ts_resolution: TsResolution::NanoSecond,
                        snaplen: 65535,
                        ..PcapHeader::default()
                    },
                )
                .map_err(|e| pcap_err(path, e))?,
            ),
            CaptureFormat::PcapNg => {
                let mut w = PcapNgWriter::new(f).map_err(|e| pcap_err(path, e))?;
                for i in 0..interfaces.max(1) {
                    let idb = InterfaceDescriptionBlock {
                        linktype: DataLink::ETHERNET,
                        snaplen: 0,
                        options: vec![
                            InterfaceDescriptionOption::IfName(Cow::Owned(format!("nic{i}"))),
                            InterfaceDescriptionOption::IfDescription(Cow::Owned(format!(
                                "rnic-sim NIC {i} transmit ({clock_mhz} MHz clock)"
                            ))),
                            // pcap-file writes nanoseconds: say so.
                            InterfaceDescriptionOption::IfTsResol(9),
                        ],
                    };
                    w.write_pcapng_block(idb).map_err(|e| pcap_err(path, e))?;
                }
                Inner::Ng(w)
            }
        };
        Ok(Self {
            inner,
            file,
            path: path.to_path_buf(),
            clock_mhz,
            interfaces: interfaces.max(1),
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Append a frame sent by NIC `src` at `cycle`; `fate` becomes the
    /// packet comment in pcapng.
    pub fn write(
        &mut self,
        cycle: u64,
        src: usize,
        data: &[u8],
        fate: Option<&SendReport>,
    ) -> Result<(), SimError> {
        let ts = cycle_time(cycle, self.clock_mhz);
        let r = match &mut self.inner {
            Inner::Pcap(w) => w
                .write_packet(&PcapPacket::new(ts, data.len() as u32, data))
                .map(|_| ()),
            Inner::Ng(w) => {
                let options = match fate {
                    Some(f) => vec![EnhancedPacketOption::Comment(Cow::Owned(format!(
                        "cycle {cycle}: {f}"
                    )))],
                    None => Vec::new(),
                };
                w.write_pcapng_block(EnhancedPacketBlock {
                    interface_id: src.min(self.interfaces - 1) as u32,
                    timestamp: ts,
                    original_len: data.len() as u32,
                    data: Cow::Borrowed(data),
                    options,
                })
                .map(|_| ())
            }
        };
        r.map_err(|e| pcap_err(&self.path, e))
    }

    pub fn write_frame(&mut self, f: &WireFrame) -> Result<(), SimError> {
        self.write(f.cycle, f.src, &f.data, Some(&f.fate))
    }

    /// Push buffered packets to the file.
    pub fn flush(&mut self) -> Result<(), SimError> {
        self.file.flush().map_err(|e| pcap_err(&self.path, e))
    }
}

/// The last `capacity` frames on the wire (0 = keep none).
#[derive(Debug, Default)]
pub struct FrameRing {
    capacity: usize,
    frames: VecDeque<WireFrame>,
    /// Frames ever pushed.
    pub total: u64,
}

impl FrameRing {
    pub fn new(capacity: usize) -> Self {
        Self {
            capacity,
            frames: VecDeque::with_capacity(capacity.min(1 << 16)),
            total: 0,
        }
    }

    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// Change the size (drops the oldest frames if it shrinks).
    pub fn set_capacity(&mut self, n: usize) {
        self.capacity = n;
        while self.frames.len() > n {
            self.frames.pop_front();
        }
    }

    pub fn enabled(&self) -> bool {
        self.capacity > 0
    }

    /// Record a frame (copies the bytes, reusing the oldest entry's buffer).
    pub fn push(&mut self, cycle: u64, src: usize, data: &[u8], fate: &SendReport) {
        if self.capacity == 0 {
            return;
        }
        self.total += 1;
        let mut e = if self.frames.len() >= self.capacity {
            self.frames.pop_front().unwrap()
        } else {
            WireFrame {
                cycle: 0,
                src: 0,
                data: Vec::new(),
                fate: SendReport::default(),
            }
        };
        e.cycle = cycle;
        e.src = src;
        e.data.clear();
        e.data.extend_from_slice(data);
        e.fate.clone_from(fate);
        self.frames.push_back(e);
    }

    pub fn frames(&self) -> impl Iterator<Item = &WireFrame> {
        self.frames.iter()
    }

    pub fn len(&self) -> usize {
        self.frames.len()
    }

    pub fn is_empty(&self) -> bool {
        self.frames.is_empty()
    }

    pub fn clear(&mut self) {
        self.frames.clear();
    }

    /// Write the frames held now to `path` (format by extension).
    pub fn dump(&self, path: &Path, clock_mhz: f64, interfaces: usize) -> Result<usize, SimError> {
        let mut f = CaptureFile::create(path, clock_mhz, interfaces)?;
        for w in &self.frames {
            f.write_frame(w)?;
        }
        f.flush()?;
        Ok(self.frames.len())
    }
}
