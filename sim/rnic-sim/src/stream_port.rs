//! An external Ethernet port of the fabric: frames to and from another
//! process over a unix stream socket, in QEMU's `-netdev stream` framing
//! (each frame = 4-byte big-endian length, then the Ethernet frame without
//! FCS). A QEMU guest's NIC on such a netdev exchanges real frames with the
//! simulated NICs (see `sim/rxe-guest`).
//!
//! The socket is non-blocking and polled by the world between cycles, so a
//! slow or vanished peer never stalls the simulation: outgoing frames queue
//! up to [`StreamPort::MAX_PENDING`] bytes and are dropped (counted) beyond
//! that; an orderly close or an I/O error closes the port and records why.

use std::io::{self, Read, Write};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::Path;
use std::time::{Duration, Instant};

use crate::SimError;

/// Counters of one external port.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct StreamPortStats {
    /// Frames received from the peer and handed to the fabric.
    pub frames_in: u64,
    pub bytes_in: u64,
    /// Frames written (or queued) to the peer.
    pub frames_out: u64,
    pub bytes_out: u64,
    /// Frames from the peer shorter than an Ethernet header: dropped.
    pub runts_in: u64,
    /// Frames for the peer the fabric marked bad (an FCS error there):
    /// dropped, as the peer's MAC would.
    pub bad_out: u64,
    /// Frames for the peer dropped because it stopped reading.
    pub overflow_out: u64,
    /// Frames for the peer while no peer was connected (or after it left).
    pub unconnected_out: u64,
}

/// One end of a QEMU stream netdev connection.
pub struct StreamPort {
    sock: Option<UnixStream>,
    rx: Vec<u8>,
    tx: Vec<u8>,
    /// Bytes of `tx` already written.
    tx_off: usize,
    stats: StreamPortStats,
    closed: Option<String>,
}

impl std::fmt::Debug for StreamPort {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StreamPort")
            .field("connected", &self.sock.is_some())
            .field("stats", &self.stats)
            .field("closed", &self.closed)
            .finish()
    }
}

impl StreamPort {
    /// Largest frame either side may send (QEMU's own limit is 64 KiB + a
    /// vnet header); a longer length word means the stream is out of step.
    pub const MAX_FRAME: usize = 65_536;
    /// Outgoing bytes queued for a peer that does not read before frames
    /// are dropped.
    pub const MAX_PENDING: usize = 8 << 20;

    /// Wrap a connected stream.
    pub fn from_stream(sock: UnixStream) -> Result<Self, SimError> {
        sock.set_nonblocking(true)
            .map_err(|e| SimError::Config(format!("external port: set_nonblocking: {e}")))?;
        Ok(Self {
            sock: Some(sock),
            rx: Vec::with_capacity(2 * Self::MAX_FRAME),
            tx: Vec::new(),
            tx_off: 0,
            stats: StreamPortStats::default(),
            closed: None,
        })
    }

    /// Listen on `path` (a stale socket file there is replaced).
    pub fn listen(path: &Path) -> Result<UnixListener, SimError> {
        if path.exists() {
            std::fs::remove_file(path).map_err(|e| {
                SimError::Config(format!("external port: remove {}: {e}", path.display()))
            })?;
        }
        UnixListener::bind(path)
            .map_err(|e| SimError::Config(format!("external port: bind {}: {e}", path.display())))
    }

    /// Wait at most `timeout` for one peer on `listener`; `alive` is asked
    /// every 50 ms and ends the wait early when it returns an error (e.g.
    /// the peer's process exited).
    pub fn accept(
        listener: &UnixListener,
        timeout: Duration,
        mut alive: impl FnMut() -> Result<(), String>,
    ) -> Result<Self, SimError> {
        listener
            .set_nonblocking(true)
            .map_err(|e| SimError::Config(format!("external port: {e}")))?;
        let t0 = Instant::now();
        loop {
            match listener.accept() {
                Ok((s, _)) => return Self::from_stream(s),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                Err(e) => return Err(SimError::Config(format!("external port: accept: {e}"))),
            }
            if let Err(why) = alive() {
                return Err(SimError::Config(format!(
                    "external port: the peer never connected: {why}"
                )));
            }
            if t0.elapsed() >= timeout {
                return Err(SimError::Config(format!(
                    "external port: no peer connected within {timeout:?}"
                )));
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Connect to a peer listening on `path`.
    pub fn connect(path: &Path) -> Result<Self, SimError> {
        let s = UnixStream::connect(path).map_err(|e| {
            SimError::Config(format!("external port: connect {}: {e}", path.display()))
        })?;
        Self::from_stream(s)
    }

    pub fn stats(&self) -> StreamPortStats {
        self.stats
    }

    /// Start counting from zero (e.g. for the next run over the same link).
    pub fn reset_stats(&mut self) {
        self.stats = StreamPortStats::default();
    }

    /// Why the port closed (None while it is open).
    pub fn closed(&self) -> Option<&str> {
        self.closed.as_deref()
    }

    pub fn is_open(&self) -> bool {
        self.sock.is_some()
    }

    fn close(&mut self, why: String) {
        if self.sock.take().is_some() {
            self.closed = Some(why);
        }
        self.tx.clear();
        self.tx_off = 0;
    }

    /// Read what the peer sent and hand every complete frame to `deliver`.
    pub fn poll_rx(&mut self, mut deliver: impl FnMut(&[u8])) {
        let Some(sock) = self.sock.as_mut() else {
            return;
        };
        let mut buf = [0u8; 16_384];
        let mut why = None;
        loop {
            match sock.read(&mut buf) {
                Ok(0) => {
                    why = Some("the peer closed the connection".to_string());
                    break;
                }
                Ok(n) => self.rx.extend_from_slice(&buf[..n]),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => {
                    why = Some(format!("read: {e}"));
                    break;
                }
            }
        }
        let mut off = 0;
        while self.rx.len() - off >= 4 {
            let len = u32::from_be_bytes(self.rx[off..off + 4].try_into().unwrap()) as usize;
            if len > Self::MAX_FRAME {
                why = Some(format!(
                    "framing error: length word {len} (at most {} allowed)",
                    Self::MAX_FRAME
                ));
                break;
            }
            if self.rx.len() - off - 4 < len {
                break;
            }
            let f = &self.rx[off + 4..off + 4 + len];
            off += 4 + len;
            if f.len() < 14 {
                self.stats.runts_in += 1;
                continue;
            }
            self.stats.frames_in += 1;
            self.stats.bytes_in += f.len() as u64;
            deliver(f);
        }
        self.rx.drain(..off);
        if let Some(w) = why {
            self.close(w);
        }
    }

    /// Queue `frame` for the peer (`bad`: dropped, counted) and write what
    /// the socket takes now.
    pub fn push_tx(&mut self, frame: &[u8], bad: bool) {
        if self.sock.is_none() {
            self.stats.unconnected_out += 1;
            return;
        }
        if bad {
            self.stats.bad_out += 1;
            return;
        }
        if self.tx.len() - self.tx_off + frame.len() + 4 > Self::MAX_PENDING {
            self.stats.overflow_out += 1;
            return;
        }
        self.tx
            .extend_from_slice(&(frame.len() as u32).to_be_bytes());
        self.tx.extend_from_slice(frame);
        self.stats.frames_out += 1;
        self.stats.bytes_out += frame.len() as u64;
        self.flush_tx();
    }

    /// Write queued bytes until the socket would block.
    pub fn flush_tx(&mut self) {
        let Some(sock) = self.sock.as_mut() else {
            return;
        };
        let mut why = None;
        while self.tx_off < self.tx.len() {
            match sock.write(&self.tx[self.tx_off..]) {
                Ok(0) => {
                    why = Some("write returned 0".to_string());
                    break;
                }
                Ok(n) => self.tx_off += n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => {
                    why = Some(format!("write: {e}"));
                    break;
                }
            }
        }
        if self.tx_off == self.tx.len() {
            self.tx.clear();
            self.tx_off = 0;
        } else if self.tx_off > (1 << 20) {
            self.tx.drain(..self.tx_off);
            self.tx_off = 0;
        }
        if let Some(w) = why {
            self.close(w);
        }
    }

    /// Bytes waiting to be written.
    pub fn pending(&self) -> usize {
        self.tx.len() - self.tx_off
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(n: usize, fill: u8) -> Vec<u8> {
        vec![fill; n]
    }

    #[test]
    fn frames_cross_in_both_directions_with_qemu_framing() {
        let (a, mut b) = UnixStream::pair().unwrap();
        let mut p = StreamPort::from_stream(a).unwrap();
        p.push_tx(&frame(60, 1), false);
        p.push_tx(&frame(4200, 2), false);
        p.push_tx(&frame(60, 3), true);
        let mut got = vec![0u8; 4 + 60 + 4 + 4200];
        b.read_exact(&mut got).unwrap();
        assert_eq!(&got[..4], &60u32.to_be_bytes());
        assert_eq!(&got[64..68], &4200u32.to_be_bytes());
        assert!(got[68..].iter().all(|&x| x == 2));
        // Peer to port, split at awkward places.
        let mut wire = Vec::new();
        for (n, f) in [(62usize, 7u8), (10, 8), (1500, 9)] {
            wire.extend_from_slice(&(n as u32).to_be_bytes());
            wire.extend(std::iter::repeat_n(f, n));
        }
        let mut seen = Vec::new();
        for chunk in wire.chunks(3) {
            b.write_all(chunk).unwrap();
            p.poll_rx(|f| seen.push(f.to_vec()));
        }
        assert_eq!(seen.len(), 2);
        assert_eq!(seen[0], frame(62, 7));
        assert_eq!(seen[1], frame(1500, 9));
        let s = p.stats();
        assert_eq!(
            (s.frames_in, s.runts_in, s.frames_out, s.bad_out),
            (2, 1, 2, 1)
        );
        drop(b);
        p.poll_rx(|_| {});
        assert!(!p.is_open());
        assert_eq!(p.closed(), Some("the peer closed the connection"));
        p.push_tx(&frame(60, 1), false);
        assert_eq!(p.stats().unconnected_out, 1);
    }

    #[test]
    fn an_out_of_step_length_word_closes_the_port() {
        let (a, mut b) = UnixStream::pair().unwrap();
        let mut p = StreamPort::from_stream(a).unwrap();
        b.write_all(&0x0100_0000u32.to_be_bytes()).unwrap();
        p.poll_rx(|_| panic!("no frame"));
        assert!(p.closed().unwrap().contains("framing error"));
    }

    #[test]
    fn a_peer_that_stops_reading_costs_frames_not_memory() {
        let (a, _b) = UnixStream::pair().unwrap();
        let mut p = StreamPort::from_stream(a).unwrap();
        let f = frame(4096, 0);
        for _ in 0..4000 {
            p.push_tx(&f, false);
        }
        assert!(p.pending() <= StreamPort::MAX_PENDING);
        assert!(p.stats().overflow_out > 0);
        assert!(p.is_open());
    }
}
