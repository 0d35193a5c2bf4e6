//! `ibv_rc_pingpong` (rdma-core's libibverbs example): its out-of-band
//! exchange over TCP, and its data phase played by rnic's verbs.
//!
//! Exchange (TCP, port 18515 by default), as the real program does it:
//! - the client connects, writes its destination as a 52-byte NUL-terminated
//!   string `LLLL:QQQQQQ:PPPPPP:GGGG...` (LID, QPN, PSN in hex, then the GID
//!   as 32 hex digits, its 16 bytes in order), reads the server's 52 bytes,
//!   writes `done\0`;
//! - the server reads the client's 52 bytes, moves its QP to RTR/RTS, writes
//!   its 52 bytes, reads `done\0`.
//!
//! Both sides post receives before the exchange. Data phase: SENDs of
//! `size` bytes from the one buffer the receives also land in; the client
//! sends first; a side sends again once its previous send has completed and
//! a message has arrived, until both counts reach the iteration count. The
//! program's buffer is memset to 0x7b; with `--chk` the first byte of every
//! page is set to 0 and received messages are checked for that byte only.
//! Since a received message lands in the buffer the next send sends, the
//! program echoes what it last received: rnic checks every byte of that.

use std::io::{Read, Write};

/// What one side tells the other.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PpDest {
    pub lid: u16,
    pub qpn: u32,
    pub psn: u32,
    pub gid: [u8; 16],
}

/// Length of the exchanged string, NUL included.
pub const MSG_LEN: usize = 52;

#[derive(Debug, thiserror::Error)]
pub enum PingPongError {
    #[error("ibv_rc_pingpong exchange: {0}")]
    Protocol(String),
    #[error("ibv_rc_pingpong exchange: {0}")]
    Io(#[from] std::io::Error),
}

impl PpDest {
    pub fn encode(&self) -> [u8; MSG_LEN] {
        let gid: String = self.gid.iter().map(|b| format!("{b:02x}")).collect();
        let s = format!(
            "{:04x}:{:06x}:{:06x}:{gid}",
            self.lid,
            self.qpn & 0xff_ffff,
            self.psn & 0xff_ffff
        );
        let mut m = [0u8; MSG_LEN];
        m[..s.len()].copy_from_slice(s.as_bytes());
        m
    }

    pub fn parse(m: &[u8]) -> Result<Self, PingPongError> {
        let bad = |why: &str| {
            PingPongError::Protocol(format!(
                "bad destination {:?}: {why}",
                String::from_utf8_lossy(m)
            ))
        };
        let end = m.iter().position(|&b| b == 0).unwrap_or(m.len());
        let s = std::str::from_utf8(&m[..end]).map_err(|_| bad("not text"))?;
        let f: Vec<&str> = s.split(':').collect();
        if f.len() != 4 || f[0].len() != 4 || f[1].len() != 6 || f[2].len() != 6 || f[3].len() != 32
        {
            return Err(bad("not LLLL:QQQQQQ:PPPPPP:<32 hex digits>"));
        }
        let hex = |x: &str| u32::from_str_radix(x, 16).map_err(|_| bad("not hex"));
        let mut gid = [0u8; 16];
        for (i, b) in gid.iter_mut().enumerate() {
            *b = u8::from_str_radix(&f[3][2 * i..2 * i + 2], 16).map_err(|_| bad("GID not hex"))?;
        }
        Ok(Self {
            lid: hex(f[0])? as u16,
            qpn: hex(f[1])?,
            psn: hex(f[2])?,
            gid,
        })
    }
}

/// The client's side of the exchange.
pub fn client_exchange(
    s: &mut (impl Read + Write),
    local: &PpDest,
) -> Result<PpDest, PingPongError> {
    s.write_all(&local.encode())?;
    let mut m = [0u8; MSG_LEN];
    s.read_exact(&mut m)?;
    let remote = PpDest::parse(&m)?;
    s.write_all(b"done\0")?;
    Ok(remote)
}

/// The server's side, first half: the client's destination.
pub fn server_read(s: &mut impl Read) -> Result<PpDest, PingPongError> {
    let mut m = [0u8; MSG_LEN];
    s.read_exact(&mut m)?;
    PpDest::parse(&m)
}

/// The server's side, second half (after its QP is ready): reply, then
/// wait for the client's `done`.
pub fn server_reply(s: &mut (impl Read + Write), local: &PpDest) -> Result<(), PingPongError> {
    s.write_all(&local.encode())?;
    let mut d = [0u8; 5];
    s.read_exact(&mut d)?;
    if &d != b"done\0" {
        return Err(PingPongError::Protocol(format!(
            "expected \"done\", got {:?}",
            String::from_utf8_lossy(&d)
        )));
    }
    Ok(())
}

/// The bytes of rnic's `k`-th message: a pattern that differs per message
/// and per byte, with the first byte of every 4 KiB page 0 (what
/// `ibv_rc_pingpong --chk` checks for).
pub fn pattern(k: u32, size: usize) -> Vec<u8> {
    (0..size)
        .map(|i| {
            if i % 4096 == 0 {
                0
            } else {
                (k.wrapping_mul(0x9E37_79B1) >> 24) as u8 ^ (i as u8).wrapping_mul(7) ^ 0x5A
            }
        })
        .collect()
}

/// What `ibv_rc_pingpong` sends before it has received anything: its
/// buffer, memset to 0x7b, page starts zeroed when `chk`.
pub fn initial_buffer(size: usize, chk: bool) -> Vec<u8> {
    (0..size)
        .map(|i| if chk && i % 4096 == 0 { 0 } else { 0x7b })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::net::UnixStream;

    #[test]
    fn destination_round_trip_and_format() {
        let d = PpDest {
            lid: 0,
            qpn: 0x11,
            psn: 0xabcdef,
            gid: crate::guest::ipv4_gid("192.168.77.2".parse().unwrap()),
        };
        let m = d.encode();
        assert_eq!(
            std::str::from_utf8(&m[..51]).unwrap(),
            "0000:000011:abcdef:00000000000000000000ffffc0a84d02"
        );
        assert_eq!(m[51], 0);
        assert_eq!(PpDest::parse(&m).unwrap(), d);
        assert!(PpDest::parse(b"0000:000011:abcdef:zz").is_err());
        assert!(PpDest::parse(&[0xff; 52]).is_err());
    }

    #[test]
    fn client_and_server_exchange() {
        let (mut a, mut b) = UnixStream::pair().unwrap();
        let c = PpDest {
            lid: 0,
            qpn: 1,
            psn: 2,
            gid: [3; 16],
        };
        let s = PpDest {
            lid: 0,
            qpn: 4,
            psn: 5,
            gid: [6; 16],
        };
        let t = std::thread::spawn(move || client_exchange(&mut a, &c).unwrap());
        assert_eq!(server_read(&mut b).unwrap(), c);
        server_reply(&mut b, &s).unwrap();
        assert_eq!(t.join().unwrap(), s);
    }

    #[test]
    fn patterns_differ_and_keep_page_starts_zero() {
        let p0 = pattern(0, 8192);
        let p1 = pattern(1, 8192);
        assert_ne!(p0, p1);
        assert_eq!((p0[0], p0[4096]), (0, 0));
        assert!(initial_buffer(100, false).iter().all(|&b| b == 0x7b));
    }
}
