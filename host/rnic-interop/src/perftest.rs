//! The peer side of perftest's out-of-band TCP exchange, so that rnic's
//! host tooling can stand in for `ib_write_bw`, `ib_write_lat`,
//! `ib_send_bw`, `ib_send_lat`, `ib_read_bw`, `ib_read_lat` and
//! `ib_atomic_bw` opposite a real perftest, in either role.
//!
//! # What this is based on
//!
//! Debian 12's `perftest 4.5+0.17-1`, whose binaries report `Version: 6.06`.
//! The sequence below was taken from perftest's sources of that generation
//! (`perftest_communication.c`, `write_bw.c`, `write_lat.c`, `send_bw.c`,
//! `send_lat.c`, `read_*.c`, `perftest_resources.c`) and then checked
//! against the disassembly of the Debian 6.06 binaries: the number and
//! order of the calls in each `main`, the sizes handed to the exchange
//! functions, and `ctx_close_connection` (which in 6.06 still writes
//! `"done"`; later perftest dropped that). Only the plain-socket exchange
//! is implemented: not `-R`/`--rdma_cm`, not `--dont_xchg_versions`, not
//! bidirectional (`-b`), not `--report-per-port`, not duration (`-D`) or
//! `--run_infinitely`, not `-a` (all sizes), not XRC/DC/UD/UC; RC only.
//!
//! # The channel
//!
//! The server listens on TCP port 18515 ([`DEFAULT_PORT`], `-p`); the
//! client (the side given a server name) connects. Every message is a
//! fixed-size binary blob. perftest sends each with one `write()` and
//! receives each with one `read(fd, buf, size)` that must return exactly
//! `size` bytes, so a message split over two TCP segments makes perftest
//! fail ("Couldn't read remote address"/"Couldn't read reports"). This
//! module therefore writes every message with a single `write_all` of the
//! whole blob (use `TcpStream::set_nodelay(true)`); it reads with
//! `read_exact`, so it does not itself care how the peer's bytes arrive.
//!
//! Every exchange is symmetric: both sides send a message of the same size.
//! In each one the **client writes first and then reads; the server reads
//! first and then writes** (`ctx_xchg_data_ethernet`, `ctx_hand_shake`).
//!
//! # Messages (sizes in bytes)
//!
//! | name | size | content |
//! |---|---|---|
//! | version | 16 | ASCII version, NUL padded: `"6.06\0\0…"` (`exchange_versions`); a peer that reads a version below 5.70 exits (`check_version_compatibility`) |
//! | cycle buffer | 4 | big-endian `i32`, the sender's page size (4096) (`check_sys_data`) |
//! | cache line | 4 | big-endian `i32`, the sender's cache line size (64) (`check_sys_data`) |
//! | MTU | 2 | the sender's port MTU as the decimal `enum ibv_mtu` value and a NUL: `"3\0"` = 1024 (`check_mtu`) |
//! | key | 108 with GID, 59 without | `struct pingpong_dest` as text, see [`Dest`] (`ethernet_write_keys`) |
//! | BW report | 5 × 8 | `size` (u64), `iters` (u64), `bw_peak`, `bw_avg`, `msgRate_avg` (f64), each big-endian and each its own 8-byte exchange (`xchg_bw_reports`) |
//! | done | 5 | `"done\0"`, sent but never read by perftest (`ctx_close_connection`) |
//!
//! Both sides keep the larger cycle buffer and the larger cache line, and the
//! smaller MTU (the peer's only if it is a valid `ibv_mtu`, 1..=5). The key
//! message is the 108-byte GID form whenever the GID index is set, which on
//! RoCE it always is (`-x 1` or perftest's automatic choice); both sides must
//! use the same form because each reads with its own setting.
//!
//! # Sequence per test (N = number of QPs, 1 by default)
//!
//! Common prologue, both roles (`main` → `establish_connection`,
//! `exchange_versions`, `check_version_compatibility`, `check_sys_data`,
//! `check_mtu`):
//!
//! 1. TCP connect (client) / accept (server). (`ib_write_bw` then sleeps 1 s.)
//! 2. version: 16 ⇄ 16.
//! 3. cycle buffer: 4 ⇄ 4; cache line: 4 ⇄ 4.
//! 4. MTU: 2 ⇄ 2.
//!
//! Then key exchanges ("HS" = one `ctx_hand_shake`: one key message each
//! way, 108 ⇄ 108 with GID), and what each side does between them:
//!
//! | test | before the data phase | after the data phase |
//! |---|---|---|
//! | `ib_write_bw`, `ib_read_bw`, `ib_atomic_bw` | HS×N; **connect QPs**; HS×N; HS | client: HS, BW report, close. Server: right after its last pre-data HS it enters the same HS, so it blocks until the client has finished; then BW report, close |
//! | `ib_write_lat` | HS; HS; **connect QPs**; HS; HS | nothing: both sides exit (no close, no `"done"`) |
//! | `ib_read_lat` | HS; HS; **connect QPs**; HS; HS | close (the server closes at once and so waits in it for the client) |
//! | `ib_send_bw`, `ib_send_lat` | HS×N; **connect QPs**; HS; HS×N; **post receives**; HS | close |
//!
//! "connect QPs" is perftest's `ctx_connect` (RTR and, except on a BW
//! server, RTS). "close" is `ctx_close_connection`: one HS, then each side
//! writes `"done\0"` (5 bytes) and closes the socket without reading. "BW
//! report" is `xchg_bw_reports`: five 8-byte exchanges. The client's report
//! is what the `ib_*_bw` server prints as the result; the server sends an
//! uninitialised one the client ignores. Every HS carries the same
//! `pingpong_dest` per QP (for RC perftest never changes it). The latency
//! tests allow only N = 1. So with one QP: 3 HS before the data phase for
//! the BW write/read/atomic tests, 4 for all the others.
//!
//! A complete `ib_write_bw` run with one QP, as recorded between two real
//! 6.06 binaries ("C→S 16" = the client sends 16 bytes):
//!
//! ```text
//! C→S 16 "6.06\0…"   S→C 16 "6.06\0…"        versions
//! C→S 4 00 00 10 00  S→C 4 00 00 10 00         cycle buffer 4096
//! C→S 4 00 00 00 40  S→C 4 00 00 00 40         cache line 64
//! C→S 2 "3\0"        S→C 2 "3\0"               MTU 1024
//! C→S 108 key        S→C 108 key      ×3       before the data phase
//!                    (data phase: RDMA WRITEs)
//! C→S 108 key        S→C 108 key               end of the data phase
//! C→S 8  S→C 8  ×5                             BW report
//! C→S 108 key        S→C 108 key               ctx_close_connection
//! S→C 5 "done\0"     C→S 5 "done\0"  (either order), both close
//! ```
//!
//! [`Control`] exposes exactly these phases; [`client_handshake`] /
//! [`server_handshake`] run them with a hook called at [`Stage::Connect`]
//! (bring the QPs to RTR/RTS now: the peer may start sending right after
//! the final sync) and [`Stage::Arm`] (post receives, clear the latency
//! poll byte). [`client_finish`] / [`server_finish`] do the part after the
//! data phase.
//!
//! # The data phase, as the peer must play it
//!
//! Addresses: every side advertises in its key `vaddr` = its buffer +
//! N × BUFF_SIZE (`set_up_connection`), the region the other side writes
//! into or reads from, where BUFF_SIZE = max(size, cycle_buffer). For the
//! BW tests with `size <= cycle_buffer / 2` the requester cycles through
//! slots: message k (0-based) goes to `vaddr + (k mod S) × INC` with
//! INC = `size` rounded up to the cache line (at least one cache line) and
//! S = cycle_buffer / INC (`increase_rem_addr`); larger messages always
//! use `vaddr`. The source addresses in the requester's own buffer cycle the
//! same way. [`Handshake::msg_offset`] computes this. The peer must
//! therefore expose at least [`Handshake::region_len`] bytes at its `vaddr`.
//! Default post list 1, CQ moderation 100 (signal every 100th and the last
//! WR), tx depth 128 for BW and 1 for latency, no immediate data, no
//! inline on rxe (perftest disables inline for devices it does not know;
//! either way inline is invisible on the wire).
//!
//! * `ib_write_bw`: the client posts `iters` (default 5000) RDMA WRITEs of
//!   `size` (default 65536) to the server, at most `tx_depth` outstanding.
//!   The server does nothing but wait (its QP is only in RTR) and ACK.
//!   No warm-up unless `--perform_warm_up` (then `tx_depth` extra WRITEs
//!   to the same addresses first).
//! * `ib_read_bw`: the same with RDMA READs by the client of the server's
//!   region; at most `out_reads` outstanding (see [`Dest::out_reads`]).
//! * `ib_atomic_bw`: the same with 8-byte atomics ([`ATOMIC_SIZE`]; `-s`
//!   other than 8 is refused), default `iters` 1000: FETCH_AND_ADD of
//!   [`ATOMIC_ADD_VALUE`] (1), or with `-A CMP_AND_SWAP` CMP_AND_SWAP with
//!   swap [`ATOMIC_SWAP_VALUE`] (0) and compare [`ATOMIC_COMPARE_VALUE`]
//!   (0) (`ctx_set_send_wqes`). Being at most half the cycle buffer, they
//!   cycle through the slots like any small BW message: atomic k goes to
//!   `vaddr + (k mod 64) × 64` with the default cycle buffer and cache line
//!   ([`Handshake::msg_offset`]; `increase_rem_addr` with `ATOMIC`), so
//!   each of the 64 aligned operands receives every 64th atomic, and its
//!   original value lands at the same offset of the client's own buffer
//!   (`increase_loc_addr`). Like READs, at most `out_reads` outstanding
//!   (the QP's `max_rd_atomic`; the client keeps up to its tx depth
//!   posted).
//! * `ib_send_bw`: the server posts `rx_depth` (default 512, at most
//!   `iters`) receives before the last HS and re-posts as they complete;
//!   the client sends exactly `iters` (default 1000) SENDs of `size`. RNR
//!   retry is 7 (infinite), so a receiver that runs out of receives only
//!   slows the sender down. The server gives up if nothing arrives for 60 s.
//! * `ib_write_lat`: ping-pong by RDMA WRITE, **the server writes first**
//!   (`run_iter_lat_write`: the wait is skipped only when `scnt == 0` on
//!   the server). Each side, for n = 1..=iters: (except the server's first
//!   round) spin until the byte at its own `vaddr + size - 1` equals
//!   `n as u8`; then set byte `size - 1` of its source buffer to `n as u8`
//!   and RDMA WRITE `size` bytes (default 2) from the start of its buffer
//!   to the peer's `vaddr` (always the same address, no cycling), signaled;
//!   then reap that send completion. One WRITE outstanding at a time.
//! * `ib_send_lat`: ping-pong by SEND, **the client sends first**
//!   (`run_iter_lat_send`). Both sides post their receives before the last
//!   HS and re-post one per completion. Each side, per iteration: (except
//!   the client's first) wait for a receive completion; then SEND `size`
//!   bytes (default 2) from the start of its buffer. Only every 100th SEND
//!   and the last are signaled.
//! * `ib_read_lat`: the client issues `iters` RDMA READs of `size` from the
//!   server's `vaddr`, one at a time; the server is passive.
//!
//! # Buffer contents
//!
//! perftest fills its whole buffer with `rand()` bytes after
//! `srand(time(NULL))` (`create_single_mr`), except `ib_write_lat`, whose
//! buffer is zeroed. So WRITE/SEND/READ payloads of the BW tests and of
//! `ib_send_lat` are pseudo-random and cannot be checked; an `ib_write_lat`
//! payload is `size - 1` zero bytes followed by the iteration counter
//! `n as u8`, which can be checked exactly. A peer that must look like
//! perftest to `ib_write_lat` must start with its poll byte zero.
//!
//! # QP attributes perftest uses (`ctx_connect`)
//!
//! RC; INIT access REMOTE_WRITE (write tests), REMOTE_READ (read tests),
//! REMOTE_ATOMIC (atomic tests), REMOTE_WRITE|LOCAL_WRITE (send tests);
//! RTR: path MTU = the negotiated
//! MTU ([`Negotiated::mtu`]), dest QPN and RQ PSN from the peer's key,
//! `max_dest_rd_atomic` = own `out_reads`, `min_rnr_timer` 12, GRH with the
//! peer's GID, hop limit 255, traffic class 0, SL 0; RTS: SQ PSN = own PSN,
//! timeout 14, retry 7, RNR retry 7, `max_rd_atomic` = the peer's
//! `out_reads`. The BW servers stop at RTR.
//!
//! # How this was checked
//!
//! Besides the unit tests (our client against our server, and each side
//! against a byte-exact script of the sequence above), the byte stream
//! between two real Debian 6.06 binaries was recorded for all six programs
//! (run on an `LD_PRELOAD` verbs stand-in that completes every work request
//! at once), and `tests/perftest_protocol.rs` ran this module against the
//! real binaries in both roles for all six: each real program finished
//! with exit status 0 (`ib_write_lat`: reached its data phase). The same
//! runs showed: `out_reads` is 1 in write/send keys and the device's
//! `max_qp_rd_atom` in read keys; the RTR/RTS attributes listed above;
//! `ib_write_bw -s 100` writing to `vaddr + k × 128` over 32 slots; the
//! `ib_write_lat` server posting the first WRITE.
//!
//! `ib_atomic_bw` was not among the recorded programs: its sequence is
//! from `atomic_bw.c`, whose `main` makes the same exchange calls as
//! `read_bw.c`, and was confirmed by the interop suite (rnic as the
//! server and as the client opposite the Debian binary on rdma_rxe, which
//! finishes with exit status 0; as the server it prints the report rnic's
//! client sent).
//!
//! Not confirmed: the `rx_depth` cap (`min(rx_depth, iters)`) of the send
//! tests, and whether the 60 s idle watchdog also applies to `ib_send_lat`;
//! the data phase itself was never run against a real NIC peer here.

use std::fmt;
use std::io::{self, Read, Write};
use std::time::Duration;

/// perftest's default TCP port (`DEF_PORT`).
pub const DEFAULT_PORT: u16 = 18515;
/// The version this peer announces: the Debian 12 binaries' own.
pub const PERFTEST_VERSION: &str = "6.06";
/// perftest 6.06 exits if the other side's version is below this.
pub const MIN_PEER_VERSION: f64 = 5.70;
/// Size of the version message (`char version[MAX_VERSION]`).
pub const VERSION_MSG_LEN: usize = 16;
/// Size of each of the two system-data messages (an `int`).
pub const SYS_DATA_MSG_LEN: usize = 4;
/// Size of the MTU message (`sizeof(char[2])` for peers from 5.31 on).
pub const MTU_MSG_LEN: usize = 2;
/// Size of a key message without GID (`KEY_MSG_SIZE`).
pub const KEY_MSG_SIZE: usize = 59;
/// Size of a key message with GID (`KEY_MSG_SIZE_GID`).
pub const KEY_MSG_SIZE_GID: usize = 108;
/// Size of each BW report field exchange.
pub const BW_REPORT_FIELD_LEN: usize = 8;
/// Number of BW report field exchanges (without `--report-per-port`).
pub const BW_REPORT_FIELDS: usize = 5;
/// What each side writes after the last HS of `ctx_close_connection`.
pub const DONE_MSG: [u8; 5] = *b"done\0";
/// perftest's cycle buffer when the page size is 4 KiB.
pub const DEFAULT_CYCLE_BUFFER: u32 = 4096;
/// perftest's cache line size fallback (`DEF_CACHE_LINE_SIZE`).
pub const DEFAULT_CACHE_LINE_SIZE: u32 = 64;
/// RTS `timeout` perftest sets (`DEF_QP_TIME`, 4.096 µs × 2^14).
pub const QP_TIMEOUT: u8 = 14;
/// RTS `retry_cnt` perftest sets.
pub const QP_RETRY_CNT: u8 = 7;
/// RTS `rnr_retry` perftest sets (7 = infinite).
pub const QP_RNR_RETRY: u8 = 7;
/// RTR `min_rnr_timer` perftest sets (`MIN_RNR_TIMER`).
pub const QP_MIN_RNR_TIMER: u8 = 12;
/// perftest's CQ moderation default (`DEF_CQ_MOD`).
pub const DEFAULT_CQ_MOD: u32 = 100;

/// Everything the exchange can fail with.
#[derive(Debug, thiserror::Error)]
pub enum PerftestError {
    #[error("perftest control channel, {step}: {source}")]
    Io {
        step: &'static str,
        #[source]
        source: io::Error,
    },

    #[error("perftest control channel, {step}: the peer closed the connection after {got} of {expected} bytes")]
    Eof {
        step: &'static str,
        expected: usize,
        got: usize,
    },

    #[error("the peer's version field {0:?} is not a perftest version number")]
    BadVersion(String),

    #[error("the peer announces perftest version {0:?}; perftest 6.06 (and this peer) refuse versions older than 5.70")]
    PeerTooOld(String),

    #[error("malformed pingpong_dest key message ({reason}): {text:?}")]
    MalformedKey { reason: String, text: String },

    #[error("cannot encode pingpong_dest: {0}")]
    KeyField(String),

    #[error("GID types differ (local {local}, remote {remote}); perftest stops with \"Found Incompatibility issue with GID types\"")]
    GidTypeMismatch {
        local: &'static str,
        remote: &'static str,
    },

    #[error("QP {index}: the peer's key changed between exchanges (first {first}, now {now})")]
    DestChanged {
        index: usize,
        first: Box<Dest>,
        now: Box<Dest>,
    },

    #[error("expected the peer's closing \"done\\0\", got {0:?}")]
    BadDone(Vec<u8>),

    #[error("invalid parameters: {0}")]
    InvalidParams(String),

    #[error("{step} called out of order (the exchange is {at})")]
    OutOfOrder {
        step: &'static str,
        at: &'static str,
    },

    #[error("{what} belongs to a {actual:?} but was used as a {expected:?}")]
    WrongRole {
        what: &'static str,
        expected: Role,
        actual: Role,
    },

    #[error("the caller's {stage:?} step failed: {message}")]
    Hook { stage: Stage, message: String },
}

pub type Result<T, E = PerftestError> = std::result::Result<T, E>;

/// Error type the bring-up hook may return.
pub type HookError = Box<dyn std::error::Error + Send + Sync>;

/// Which end of the TCP connection this side is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Role {
    /// Connects; writes first in every exchange (perftest with a server name).
    Client,
    /// Listens; reads first in every exchange.
    Server,
}

/// `enum ibv_mtu`, as perftest exchanges it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[repr(u8)]
pub enum IbvMtu {
    Mtu256 = 1,
    Mtu512 = 2,
    Mtu1024 = 3,
    Mtu2048 = 4,
    Mtu4096 = 5,
}

impl IbvMtu {
    /// From the `enum ibv_mtu` value (1..=5).
    pub fn from_enum(value: i64) -> Option<Self> {
        Some(match value {
            1 => Self::Mtu256,
            2 => Self::Mtu512,
            3 => Self::Mtu1024,
            4 => Self::Mtu2048,
            5 => Self::Mtu4096,
            _ => return None,
        })
    }

    /// From a size in bytes (256..=4096, a power of two).
    pub fn from_bytes(bytes: u32) -> Option<Self> {
        Some(match bytes {
            256 => Self::Mtu256,
            512 => Self::Mtu512,
            1024 => Self::Mtu1024,
            2048 => Self::Mtu2048,
            4096 => Self::Mtu4096,
            _ => return None,
        })
    }

    /// The `enum ibv_mtu` value.
    pub fn as_enum(self) -> u8 {
        self as u8
    }

    /// The size in bytes (`MTU_SIZE`).
    pub fn bytes(self) -> u32 {
        1 << (7 + self as u32)
    }
}

/// The perftest program whose peer we are.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TestKind {
    WriteBw,
    WriteLat,
    SendBw,
    SendLat,
    ReadBw,
    ReadLat,
    /// `ib_atomic_bw`: the BW tests' exchange; the client's work requests
    /// are 8-byte atomics (FETCH_AND_ADD or CMP_AND_SWAP, see [`AtomicOp`]).
    AtomicBw,
}

impl TestKind {
    pub const ALL: [TestKind; 7] = [
        TestKind::WriteBw,
        TestKind::WriteLat,
        TestKind::SendBw,
        TestKind::SendLat,
        TestKind::ReadBw,
        TestKind::ReadLat,
        TestKind::AtomicBw,
    ];

    /// The perftest binary.
    pub fn program(self) -> &'static str {
        match self {
            TestKind::WriteBw => "ib_write_bw",
            TestKind::WriteLat => "ib_write_lat",
            TestKind::SendBw => "ib_send_bw",
            TestKind::SendLat => "ib_send_lat",
            TestKind::ReadBw => "ib_read_bw",
            TestKind::ReadLat => "ib_read_lat",
            TestKind::AtomicBw => "ib_atomic_bw",
        }
    }

    /// A bandwidth test (as opposed to latency).
    pub fn is_bw(self) -> bool {
        matches!(
            self,
            TestKind::WriteBw | TestKind::SendBw | TestKind::ReadBw | TestKind::AtomicBw
        )
    }

    /// Default `-s` (`DEF_SIZE_BW` / `DEF_SIZE_LAT`; the atomic tests'
    /// `DEF_SIZE_ATOMIC`, the only size they accept).
    pub fn default_size(self) -> u64 {
        match self {
            TestKind::AtomicBw => ATOMIC_SIZE,
            _ if self.is_bw() => 65536,
            _ => 2,
        }
    }

    /// Default `-n` (`DEF_ITERS_WB` for `ib_write_bw`, else `DEF_ITERS`).
    pub fn default_iters(self) -> u64 {
        match self {
            TestKind::WriteBw => 5000,
            _ => 1000,
        }
    }

    /// Default `-t` (`DEF_TX_BW` / `DEF_TX_LAT`).
    pub fn default_tx_depth(self) -> u32 {
        if self.is_bw() {
            128
        } else {
            1
        }
    }

    /// The send tests add a sync after connecting and one after posting
    /// receives (`send_bw.c`, `send_lat.c`).
    fn is_send(self) -> bool {
        matches!(self, TestKind::SendBw | TestKind::SendLat)
    }

    /// `ib_write_lat` and `ib_read_lat` do one extra HS before the per-QP
    /// loop of the first round (and allow only one QP).
    fn is_rdma_lat(self) -> bool {
        matches!(self, TestKind::WriteLat | TestKind::ReadLat)
    }

    /// QP indices of the key exchanges before `ctx_connect`, i.e. the ones
    /// [`Control::exchange_dests`] does.
    fn first_round(self, num_qps: usize) -> Vec<usize> {
        let mut v = Vec::new();
        if self.is_rdma_lat() {
            v.push(0);
        }
        v.extend(0..num_qps);
        v
    }

    /// Key exchanges after [`Control::exchange_dests`] and before the final
    /// start sync, i.e. the ones [`Control::sync_connected`] does.
    fn connected_syncs(self, num_qps: usize) -> Vec<usize> {
        let mut v = Vec::new();
        if self.is_send() {
            v.push(0);
        }
        v.extend(0..num_qps);
        v
    }

    /// Number of key exchanges (HS) before the data phase.
    pub fn pre_data_exchanges(self, num_qps: usize) -> usize {
        self.first_round(num_qps).len() + self.connected_syncs(num_qps).len() + 1
    }

    /// perftest refuses more than one QP in the latency tests ("Multiple
    /// QPs only available on bw tests").
    pub fn max_qps(self) -> usize {
        if self.is_bw() {
            usize::MAX
        } else {
            1
        }
    }

    /// Whether `xchg_bw_reports` runs after the data phase (non-duplex).
    pub fn exchanges_bw_reports(self) -> bool {
        matches!(
            self,
            TestKind::WriteBw | TestKind::ReadBw | TestKind::AtomicBw
        )
    }

    /// Whether the test ends with `ctx_close_connection` (HS + `"done"`).
    pub fn closes_with_done(self) -> bool {
        !matches!(self, TestKind::WriteLat)
    }

    /// Which side posts the first message of a ping-pong latency test.
    pub fn first_sender(self) -> Option<Role> {
        match self {
            TestKind::WriteLat => Some(Role::Server),
            TestKind::SendLat => Some(Role::Client),
            _ => None,
        }
    }
}

/// `DEF_SIZE_ATOMIC`: the atomic tests' message size, the only one they
/// accept ("Message size cannot be changed for Atomic tests").
pub const ATOMIC_SIZE: u64 = 8;
/// `ATOMIC_ADD_VALUE`: what each FETCH_AND_ADD of `ib_atomic_bw` adds
/// (`wr.atomic.compare_add`).
pub const ATOMIC_ADD_VALUE: u64 = 1;
/// `ATOMIC_SWAP_VALUE`: what each CMP_AND_SWAP of `ib_atomic_bw` swaps in
/// (`wr.atomic.swap`; its `compare_add` is left 0 by the work request's
/// `memset`).
pub const ATOMIC_SWAP_VALUE: u64 = 0;
/// The compare value of each CMP_AND_SWAP of `ib_atomic_bw`: 0, its
/// `compare_add` left by the work request's `memset`.
pub const ATOMIC_COMPARE_VALUE: u64 = 0;

/// `ib_atomic_bw -A`: the atomic the client's work requests carry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum AtomicOp {
    /// `FETCH_AND_ADD`, perftest's default: add [`ATOMIC_ADD_VALUE`].
    FetchAndAdd,
    /// `CMP_AND_SWAP`: swap in [`ATOMIC_SWAP_VALUE`] where the operand
    /// equals the compare value.
    CmpAndSwap,
}

impl AtomicOp {
    /// The `-A` argument.
    pub fn arg(self) -> &'static str {
        match self {
            AtomicOp::FetchAndAdd => "FETCH_AND_ADD",
            AtomicOp::CmpAndSwap => "CMP_AND_SWAP",
        }
    }
}

/// What the exchange needs from the test. Only `mtu`, `cycle_buffer`,
/// `cache_line_size`, `use_gid`, `num_qps` and `version` shape the bytes on
/// the wire; `size` and `iters` feed the data-phase helpers of
/// [`Handshake`] and a BW report; the rest is recorded for the caller.
#[derive(Debug, Clone, PartialEq)]
pub struct Params {
    /// Message size (`-s`).
    pub size: u64,
    /// Iterations (`-n`).
    pub iters: u64,
    /// Number of QPs (`-q`); one key per QP in each key round.
    pub num_qps: usize,
    /// This side's port MTU, sent in the MTU message.
    pub mtu: IbvMtu,
    /// This side's cycle buffer (perftest: the page size).
    pub cycle_buffer: u32,
    /// This side's cache line size.
    pub cache_line_size: u32,
    /// Key messages with GID (108 bytes). True on RoCE; must match the peer.
    pub use_gid: bool,
    /// Send queue depth (`-t`); not exchanged.
    pub tx_depth: u32,
    /// Receive queue depth (`-r`); not exchanged.
    pub rx_depth: u32,
    /// Inline size; not exchanged and invisible on the wire.
    pub inline_size: u32,
    /// Version announced in the version message (at most 15 bytes).
    pub version: String,
}

impl Params {
    /// perftest's defaults for `kind` on a RoCE port with a 1024-byte MTU.
    pub fn new(kind: TestKind) -> Self {
        Params {
            size: kind.default_size(),
            iters: kind.default_iters(),
            num_qps: 1,
            mtu: IbvMtu::Mtu1024,
            cycle_buffer: DEFAULT_CYCLE_BUFFER,
            cache_line_size: DEFAULT_CACHE_LINE_SIZE,
            use_gid: true,
            tx_depth: kind.default_tx_depth(),
            rx_depth: 512,
            inline_size: 0,
            version: PERFTEST_VERSION.to_string(),
        }
    }

    /// Rejects values perftest could not have.
    pub fn validate(&self) -> Result<()> {
        let bad = |m: String| Err(PerftestError::InvalidParams(m));
        if self.num_qps == 0 {
            return bad("num_qps must be at least 1".into());
        }
        if self.size == 0 {
            return bad("size must be at least 1".into());
        }
        if self.cycle_buffer == 0 || self.cycle_buffer > i32::MAX as u32 {
            return bad(format!("cycle_buffer {} out of range", self.cycle_buffer));
        }
        if self.cache_line_size == 0 || self.cache_line_size > i32::MAX as u32 {
            return bad(format!(
                "cache_line_size {} out of range",
                self.cache_line_size
            ));
        }
        if self.version.len() >= VERSION_MSG_LEN || self.version.contains('\0') {
            return bad(format!(
                "version {:?} must be at most {} bytes without NUL",
                self.version,
                VERSION_MSG_LEN - 1
            ));
        }
        Ok(())
    }
}

/// `struct pingpong_dest`: what one side tells the other about one QP.
///
/// On the wire it is text, `KEY_PRINT_FMT_GID`
/// `%04x:%04x:%06x:%06x:%08x:%016llx:` + 16 × `%02x:` + `%08x:` and a NUL
/// (108 bytes), or without GID `KEY_PRINT_FMT`
/// `%04x:%04x:%06x:%06x:%08x:%016llx:%08x` and a NUL (59 bytes). The fields
/// in order: lid, out_reads, qpn, psn, rkey, vaddr, [gid bytes], srqn.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Dest {
    /// Port LID (0 on RoCE).
    pub lid: u16,
    /// Responder resources this side grants (`max_dest_rd_atomic`); the
    /// peer uses it as its `max_rd_atomic`. perftest: 1 unless READ/ATOMIC.
    /// At most 0xffff (4 hex digits).
    pub out_reads: u32,
    /// QP number (24 bits).
    pub qpn: u32,
    /// Initial PSN (24 bits; perftest: `lrand48() & 0xffffff`).
    pub psn: u32,
    /// rkey of the buffer.
    pub rkey: u32,
    /// Address the peer writes to / reads from.
    pub vaddr: u64,
    /// GID, byte 0 first (as `union ibv_gid.raw`).
    pub gid: [u8; 16],
    /// SRQ number (XRC/DC only; 0 otherwise).
    pub srqn: u32,
}

impl Dest {
    /// A RoCE RC QP's key: LID 0, `out_reads` 1, no SRQ.
    pub fn new(qpn: u32, psn: u32, rkey: u32, vaddr: u64, gid: [u8; 16]) -> Self {
        Dest {
            lid: 0,
            out_reads: 1,
            qpn,
            psn,
            rkey,
            vaddr,
            gid,
            srqn: 0,
        }
    }

    /// Whether the GID is an IPv4-mapped address (`::ffff:a.b.c.d`, or an
    /// IPv4-mapped multicast GID), perftest's `ipv6_addr_v4mapped`.
    pub fn gid_is_ipv4_mapped(&self) -> bool {
        let g = &self.gid;
        let mapped_tail = g[4..10].iter().all(|&b| b == 0) && g[10] == 0xff && g[11] == 0xff;
        let plain = g[0..4].iter().all(|&b| b == 0);
        let multicast = g[0..4] == [0xff, 0x0e, 0, 0];
        mapped_tail && (plain || multicast)
    }

    /// The size of this key's message.
    pub fn msg_len(with_gid: bool) -> usize {
        if with_gid {
            KEY_MSG_SIZE_GID
        } else {
            KEY_MSG_SIZE
        }
    }

    /// The exact message perftest would send (`ethernet_write_keys`),
    /// including the terminating NUL. Fails if a field does not fit its
    /// printed width, since that would shift every later field.
    pub fn encode(&self, with_gid: bool) -> Result<Vec<u8>> {
        if self.out_reads > 0xffff {
            return Err(PerftestError::KeyField(format!(
                "out_reads {:#x} does not fit 4 hex digits",
                self.out_reads
            )));
        }
        if self.qpn > 0xff_ffff {
            return Err(PerftestError::KeyField(format!(
                "qpn {:#x} does not fit 24 bits",
                self.qpn
            )));
        }
        if self.psn > 0xff_ffff {
            return Err(PerftestError::KeyField(format!(
                "psn {:#x} does not fit 24 bits",
                self.psn
            )));
        }
        let mut s = format!(
            "{:04x}:{:04x}:{:06x}:{:06x}:{:08x}:{:016x}",
            self.lid, self.out_reads, self.qpn, self.psn, self.rkey, self.vaddr
        );
        if with_gid {
            for b in self.gid {
                s.push_str(&format!(":{b:02x}"));
            }
            s.push_str(&format!(":{:08x}:", self.srqn));
        } else {
            s.push_str(&format!(":{:08x}", self.srqn));
        }
        let mut v = s.into_bytes();
        v.push(0);
        debug_assert_eq!(v.len(), Self::msg_len(with_gid));
        Ok(v)
    }

    /// Parses a key message of exactly [`KEY_MSG_SIZE_GID`] (`with_gid`) or
    /// [`KEY_MSG_SIZE`] bytes. Strict: every field must have exactly the
    /// width perftest prints, in lower- or upper-case hex, with `:`
    /// separators and a single NUL at the end.
    pub fn parse(msg: &[u8], with_gid: bool) -> Result<Dest> {
        let text = String::from_utf8_lossy(msg).into_owned();
        let bad = |reason: String| PerftestError::MalformedKey {
            reason,
            text: text.clone(),
        };
        let want = Self::msg_len(with_gid);
        if msg.len() != want {
            return Err(bad(format!(
                "{} bytes, expected {want} ({} form)",
                msg.len(),
                if with_gid { "GID" } else { "no-GID" }
            )));
        }
        if msg[want - 1] != 0 {
            return Err(bad("not NUL-terminated".into()));
        }
        let body = &msg[..want - 1];
        if let Some(i) = body.iter().position(|&b| b == 0) {
            return Err(bad(format!("NUL at byte {i} inside the text")));
        }
        let body = std::str::from_utf8(body).map_err(|_| bad("not ASCII".into()))?;
        // With GID the text ends in ':' (the format's trailing colon).
        let body = if with_gid {
            body.strip_suffix(':')
                .ok_or_else(|| bad("missing the trailing ':' after srqn".into()))?
        } else {
            body
        };
        let fields: Vec<&str> = body.split(':').collect();
        let widths: Vec<usize> = if with_gid {
            [4, 4, 6, 6, 8, 16]
                .into_iter()
                .chain(std::iter::repeat_n(2, 16))
                .chain([8])
                .collect()
        } else {
            vec![4, 4, 6, 6, 8, 16, 8]
        };
        if fields.len() != widths.len() {
            return Err(bad(format!(
                "{} ':'-separated fields, expected {}",
                fields.len(),
                widths.len()
            )));
        }
        let mut vals = Vec::with_capacity(fields.len());
        for (i, (f, w)) in fields.iter().zip(&widths).enumerate() {
            if f.len() != *w {
                return Err(bad(format!(
                    "field {i} {f:?} has {} characters, expected {w}",
                    f.len()
                )));
            }
            if !f.bytes().all(|b| b.is_ascii_hexdigit()) {
                return Err(bad(format!("field {i} {f:?} is not hexadecimal")));
            }
            vals.push(u64::from_str_radix(f, 16).expect("checked hex digits"));
        }
        let mut gid = [0u8; 16];
        let srqn = if with_gid {
            for (k, g) in gid.iter_mut().enumerate() {
                *g = vals[6 + k] as u8;
            }
            vals[22] as u32
        } else {
            vals[6] as u32
        };
        Ok(Dest {
            lid: vals[0] as u16,
            out_reads: vals[1] as u32,
            qpn: vals[2] as u32,
            psn: vals[3] as u32,
            rkey: vals[4] as u32,
            vaddr: vals[5],
            gid,
            srqn,
        })
    }
}

impl fmt::Display for Dest {
    /// Like perftest's `BASIC_ADDR_FMT` + `RDMA_FMT`, GID in hex.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "LID {:#06x} QPN {:#08x} PSN {:#08x} OUT {:#06x} RKey {:#010x} VAddr {:#018x} GID ",
            self.lid, self.qpn, self.psn, self.out_reads, self.rkey, self.vaddr
        )?;
        for (i, b) in self.gid.iter().enumerate() {
            if i > 0 && i % 2 == 0 {
                f.write_str(":")?;
            }
            write!(f, "{b:02x}")?;
        }
        Ok(())
    }
}

/// The outcome of the prologue (versions, system data, MTU).
#[derive(Debug, Clone, PartialEq)]
pub struct Negotiated {
    /// The peer's version string, e.g. `"6.06"`.
    pub peer_version: String,
    /// The peer's cycle buffer as sent.
    pub peer_cycle_buffer: i32,
    /// The peer's cache line size as sent.
    pub peer_cache_line_size: i32,
    /// max(own, peer's): what both sides use for buffer layout.
    pub cycle_buffer: u32,
    /// max(own, peer's).
    pub cache_line_size: u32,
    /// The peer's MTU, if it sent a valid `ibv_mtu`.
    pub peer_mtu: Option<IbvMtu>,
    /// The path MTU both sides use: min(own, peer's).
    pub mtu: IbvMtu,
}

/// Points at which [`client_handshake`]/[`server_handshake`] hand control
/// to the caller.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Stage {
    /// The first key round is done ([`Handshake::remote`] is filled):
    /// bring the QPs to RTR/RTS now with [`Negotiated::mtu`]. perftest's
    /// `ctx_connect` runs at the same point on the other side.
    Connect,
    /// Right before the final sync, after which the peer may send at once:
    /// post receives (send tests), zero the poll byte (`ib_write_lat`).
    Arm,
}

/// Everything established before the data phase; also the state
/// [`client_finish`]/[`server_finish`] need.
#[derive(Debug, Clone, PartialEq)]
pub struct Handshake {
    pub kind: TestKind,
    pub role: Role,
    /// Message size, for the address helpers.
    pub size: u64,
    /// Iterations, for reference.
    pub iters: u64,
    /// Key form used (GID or not).
    pub use_gid: bool,
    pub negotiated: Negotiated,
    /// Our keys, one per QP.
    pub local: Vec<Dest>,
    /// The peer's keys, one per QP.
    pub remote: Vec<Dest>,
}

impl Handshake {
    /// `BUFF_SIZE(size, cycle_buffer)`: the per-QP region perftest lays out.
    pub fn buff_size(&self) -> u64 {
        let cb = u64::from(self.negotiated.cycle_buffer);
        if self.size < cb {
            cb
        } else {
            self.size
        }
    }

    /// `INC(size, cache_line_size)`: the stride between cycled messages.
    pub fn addr_inc(&self) -> u64 {
        let cl = u64::from(self.negotiated.cache_line_size);
        if self.size > cl {
            self.size.div_ceil(cl) * cl
        } else {
            cl
        }
    }

    /// Whether BW requesters cycle through slots (`size <= cycle_buffer/2`).
    pub fn cycles_addresses(&self) -> bool {
        self.size <= u64::from(self.negotiated.cycle_buffer) / 2
    }

    /// Number of slots a BW requester cycles through (1 if it does not).
    pub fn slots(&self) -> u64 {
        if self.cycles_addresses() {
            (u64::from(self.negotiated.cycle_buffer) / self.addr_inc()).max(1)
        } else {
            1
        }
    }

    /// Offset from the advertised `vaddr` (and from the requester's own
    /// buffer start) of BW message `k` (0-based): `increase_rem_addr`.
    /// Latency tests always use offset 0.
    pub fn msg_offset(&self, k: u64) -> u64 {
        if self.kind.is_bw() {
            (k % self.slots()) * self.addr_inc()
        } else {
            0
        }
    }

    /// Bytes the peer may touch from a side's advertised `vaddr`: what our
    /// registered region must cover there.
    pub fn region_len(&self) -> u64 {
        if self.kind.is_bw() && self.cycles_addresses() {
            self.slots() * self.addr_inc()
        } else {
            self.size
        }
        .max(self.size)
    }

    /// `ib_write_lat`: offset, from one's own `vaddr`, of the byte each side
    /// polls; also the offset of the counter in the written payload.
    pub fn lat_poll_offset(&self) -> u64 {
        self.size - 1
    }

    /// `ib_write_lat`: the counter byte of round `n` (1-based).
    pub fn lat_counter(n: u64) -> u8 {
        n as u8
    }
}

/// One side's `struct bw_report_data` as `xchg_bw_reports` sends it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BwReport {
    /// Message size.
    pub size: u64,
    /// Completed iterations (× QPs).
    pub iters: u64,
    /// Peak bandwidth, MiB/s (Gb/s with `--report_gbits`).
    pub bw_peak: f64,
    /// Average bandwidth, same unit.
    pub bw_avg: f64,
    /// Average message rate, Mpps.
    pub msg_rate: f64,
}

impl BwReport {
    /// A report computed like `print_report_bw`: MiB/s (or Gb/s) and Mpps
    /// over `elapsed`; peak = average (we do not sample per completion).
    pub fn from_run(size: u64, iters: u64, elapsed: Duration, gbits: bool) -> Self {
        let secs = elapsed.as_secs_f64().max(f64::MIN_POSITIVE);
        let bytes = size as f64 * iters as f64;
        let bw = if gbits {
            bytes / secs / 125_000_000.0
        } else {
            bytes / secs / 1_048_576.0
        };
        BwReport {
            size,
            iters,
            bw_peak: bw,
            bw_avg: bw,
            msg_rate: iters as f64 / secs / 1e6,
        }
    }

    /// All zeros (what we send where perftest sends an unset report).
    pub fn zero() -> Self {
        BwReport {
            size: 0,
            iters: 0,
            bw_peak: 0.0,
            bw_avg: 0.0,
            msg_rate: 0.0,
        }
    }

    /// The five 8-byte big-endian fields, in exchange order.
    pub fn fields(&self) -> [[u8; 8]; BW_REPORT_FIELDS] {
        [
            self.size.to_be_bytes(),
            self.iters.to_be_bytes(),
            self.bw_peak.to_be_bytes(),
            self.bw_avg.to_be_bytes(),
            self.msg_rate.to_be_bytes(),
        ]
    }

    /// Inverse of [`BwReport::fields`].
    pub fn from_fields(f: &[[u8; 8]; BW_REPORT_FIELDS]) -> Self {
        BwReport {
            size: u64::from_be_bytes(f[0]),
            iters: u64::from_be_bytes(f[1]),
            bw_peak: f64::from_be_bytes(f[2]),
            bw_avg: f64::from_be_bytes(f[3]),
            msg_rate: f64::from_be_bytes(f[4]),
        }
    }
}

/// What the part after the data phase brought back.
#[derive(Debug, Clone, PartialEq)]
pub struct Finish {
    /// The peer's BW report (`ib_write_bw`/`ib_read_bw` only). From a real
    /// perftest client this is its measured result; from a real server it
    /// is uninitialised memory.
    pub peer_report: Option<BwReport>,
    /// Whether the peer's `"done\0"` arrived. A peer that closed (or reset)
    /// the connection right after the last key exchange counts as finished
    /// too, since perftest never reads `"done"`; this is then false.
    pub peer_sent_done: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    Fresh,
    Negotiated,
    Keyed,
    Connected,
    Started,
    Finished,
}

impl Phase {
    fn name(self) -> &'static str {
        match self {
            Phase::Fresh => "not yet negotiated",
            Phase::Negotiated => "negotiated, keys not exchanged",
            Phase::Keyed => "keyed, not yet synced after connecting",
            Phase::Connected => "synced after connecting, not started",
            Phase::Started => "in the data phase",
            Phase::Finished => "finished",
        }
    }
}

/// One side of perftest's control connection, phase by phase. The phases
/// must be called in order: [`negotiate`](Self::negotiate),
/// [`exchange_dests`](Self::exchange_dests), (connect QPs),
/// [`sync_connected`](Self::sync_connected), (post receives),
/// [`start`](Self::start), (data phase), [`finish`](Self::finish).
pub struct Control<S> {
    stream: S,
    role: Role,
    kind: TestKind,
    params: Params,
    phase: Phase,
    negotiated: Option<Negotiated>,
    local: Vec<Dest>,
    remote: Vec<Dest>,
}

impl<S: Read + Write> Control<S> {
    pub fn new(stream: S, role: Role, kind: TestKind, params: Params) -> Result<Self> {
        params.validate()?;
        if params.num_qps > kind.max_qps() {
            return Err(PerftestError::InvalidParams(format!(
                "{} allows only one QP (perftest: \"Multiple QPs only available on bw tests\")",
                kind.program()
            )));
        }
        Ok(Control {
            stream,
            role,
            kind,
            params,
            phase: Phase::Fresh,
            negotiated: None,
            local: Vec::new(),
            remote: Vec::new(),
        })
    }

    pub fn role(&self) -> Role {
        self.role
    }

    pub fn kind(&self) -> TestKind {
        self.kind
    }

    pub fn params(&self) -> &Params {
        &self.params
    }

    pub fn negotiated(&self) -> Option<&Negotiated> {
        self.negotiated.as_ref()
    }

    pub fn stream_mut(&mut self) -> &mut S {
        &mut self.stream
    }

    pub fn into_inner(self) -> S {
        self.stream
    }

    /// The state so far (after [`exchange_dests`](Self::exchange_dests)).
    pub fn handshake(&self) -> Option<Handshake> {
        let negotiated = self.negotiated.clone()?;
        if self.remote.is_empty() {
            return None;
        }
        Some(Handshake {
            kind: self.kind,
            role: self.role,
            size: self.params.size,
            iters: self.params.iters,
            use_gid: self.params.use_gid,
            negotiated,
            local: self.local.clone(),
            remote: self.remote.clone(),
        })
    }

    fn expect(&self, step: &'static str, want: Phase) -> Result<()> {
        if self.phase == want {
            Ok(())
        } else {
            Err(PerftestError::OutOfOrder {
                step,
                at: self.phase.name(),
            })
        }
    }

    /// Versions, system data and MTU (`exchange_versions`,
    /// `check_version_compatibility`, `check_sys_data`, `check_mtu`).
    pub fn negotiate(&mut self) -> Result<Negotiated> {
        self.expect("negotiate", Phase::Fresh)?;
        let mut ch = Channel::new(&mut self.stream, self.role);

        // exchange_versions: 16 bytes, NUL padded.
        let mut mine = [0u8; VERSION_MSG_LEN];
        mine[..self.params.version.len()].copy_from_slice(self.params.version.as_bytes());
        let theirs = ch.xchg("exchange_versions", &mine)?;
        let peer_version = version_text(&theirs);
        // check_version_compatibility (atof semantics).
        let v = leading_number(&peer_version)
            .ok_or_else(|| PerftestError::BadVersion(peer_version.clone()))?;
        if v < MIN_PEER_VERSION {
            return Err(PerftestError::PeerTooOld(peer_version));
        }

        // check_sys_data: cycle buffer, then cache line size; keep the max.
        let cb = ch.xchg(
            "check_sys_data (cycle buffer)",
            &(self.params.cycle_buffer as i32).to_be_bytes(),
        )?;
        let peer_cycle_buffer = i32::from_be_bytes(cb.try_into().expect("4 bytes"));
        let cl = ch.xchg(
            "check_sys_data (cache line size)",
            &(self.params.cache_line_size as i32).to_be_bytes(),
        )?;
        let peer_cache_line_size = i32::from_be_bytes(cl.try_into().expect("4 bytes"));
        let cycle_buffer = (self.params.cycle_buffer as i32).max(peer_cycle_buffer) as u32;
        let cache_line_size = (self.params.cache_line_size as i32).max(peer_cache_line_size) as u32;

        // check_mtu: "%d" of the enum and its NUL, 2 bytes; keep the min.
        let mine = [b'0' + self.params.mtu.as_enum(), 0];
        let theirs = ch.xchg("check_mtu", &mine)?;
        let peer_mtu = leading_int(&theirs).and_then(IbvMtu::from_enum);
        let mtu = match peer_mtu {
            Some(p) if p < self.params.mtu => p,
            _ => self.params.mtu,
        };

        let n = Negotiated {
            peer_version,
            peer_cycle_buffer,
            peer_cache_line_size,
            cycle_buffer,
            cache_line_size,
            peer_mtu,
            mtu,
        };
        self.negotiated = Some(n.clone());
        self.phase = Phase::Negotiated;
        Ok(n)
    }

    /// The key exchanges before `ctx_connect` (one HS per QP; for
    /// `ib_write_lat`/`ib_read_lat` one more first), then
    /// `ctx_check_gid_compatibility`. Returns the peer's keys; connect the
    /// QPs with them before [`sync_connected`](Self::sync_connected).
    pub fn exchange_dests(&mut self, local: &[Dest]) -> Result<Vec<Dest>> {
        self.expect("exchange_dests", Phase::Negotiated)?;
        if local.len() != self.params.num_qps {
            return Err(PerftestError::InvalidParams(format!(
                "{} local keys for {} QPs",
                local.len(),
                self.params.num_qps
            )));
        }
        for d in local {
            d.encode(self.params.use_gid)?;
        }
        self.local = local.to_vec();
        let mut remote: Vec<Dest> = Vec::with_capacity(local.len());
        for i in self.kind.first_round(local.len()) {
            let d = self.hand_shake("ctx_hand_shake (first key round)", i)?;
            if i < remote.len() {
                if d != remote[i] {
                    return Err(PerftestError::DestChanged {
                        index: i,
                        first: Box::new(remote[i]),
                        now: Box::new(d),
                    });
                }
            } else {
                remote.push(d);
            }
        }
        if self.params.use_gid {
            let kind = |d: &Dest| {
                if d.gid_is_ipv4_mapped() {
                    "IPv4-mapped"
                } else {
                    "IPv6"
                }
            };
            if local[0].gid_is_ipv4_mapped() != remote[0].gid_is_ipv4_mapped() {
                return Err(PerftestError::GidTypeMismatch {
                    local: kind(&local[0]),
                    remote: kind(&remote[0]),
                });
            }
        }
        self.remote = remote.clone();
        self.phase = Phase::Keyed;
        Ok(remote)
    }

    /// The key exchanges perftest does after `ctx_connect`, except the
    /// final start sync: for the send tests one HS then one per QP, else
    /// one per QP.
    pub fn sync_connected(&mut self) -> Result<()> {
        self.expect("sync_connected", Phase::Keyed)?;
        for i in self.kind.connected_syncs(self.params.num_qps) {
            self.resync("ctx_hand_shake (after connecting)", i)?;
        }
        self.phase = Phase::Connected;
        Ok(())
    }

    /// The final sync (the "additional handshake after RTR", or for the
    /// send tests the one after posting receives). When it returns the
    /// peer may already be sending.
    pub fn start(&mut self) -> Result<Handshake> {
        self.expect("start", Phase::Connected)?;
        self.resync("ctx_hand_shake (start of the data phase)", 0)?;
        self.phase = Phase::Started;
        Ok(self.handshake().expect("keys exchanged"))
    }

    /// Everything after the data phase (see the module docs): for
    /// `ib_write_bw`/`ib_read_bw` a HS and the BW report exchange, then the
    /// close (HS + `"done\0"`); for the send tests and `ib_read_lat` the
    /// close; for `ib_write_lat` nothing. `report` is what we send in the
    /// BW report (zeros if `None`); the BW servers may call this right
    /// after [`start`](Self::start): it waits for the client.
    pub fn finish(&mut self, report: Option<&BwReport>) -> Result<Finish> {
        self.expect("finish", Phase::Started)?;
        let mut out = Finish {
            peer_report: None,
            peer_sent_done: false,
        };
        if self.kind.exchanges_bw_reports() {
            // "For half duplex tests, server just waits for client to exit"
            self.resync("ctx_hand_shake (end of the data phase)", 0)?;
            let fields = report.copied().unwrap_or_else(BwReport::zero).fields();
            let mut theirs = [[0u8; 8]; BW_REPORT_FIELDS];
            let names = [
                "xchg_bw_reports (size)",
                "xchg_bw_reports (iters)",
                "xchg_bw_reports (bw_peak)",
                "xchg_bw_reports (bw_avg)",
                "xchg_bw_reports (msgRate_avg)",
            ];
            let mut ch = Channel::new(&mut self.stream, self.role);
            for k in 0..BW_REPORT_FIELDS {
                theirs[k] = ch.xchg(names[k], &fields[k])?.try_into().expect("8 bytes");
            }
            out.peer_report = Some(BwReport::from_fields(&theirs));
        }
        if self.kind.closes_with_done() {
            self.resync("ctx_close_connection", 0)?;
            let mut ch = Channel::new(&mut self.stream, self.role);
            ch.send_done()?;
            out.peer_sent_done = ch.recv_done()?;
        }
        self.phase = Phase::Finished;
        Ok(out)
    }

    fn hand_shake(&mut self, step: &'static str, i: usize) -> Result<Dest> {
        let mine = self.local[i].encode(self.params.use_gid)?;
        let mut ch = Channel::new(&mut self.stream, self.role);
        let theirs = ch.xchg(step, &mine)?;
        Dest::parse(&theirs, self.params.use_gid)
    }

    /// A later HS: the peer must repeat the key it sent first.
    fn resync(&mut self, step: &'static str, i: usize) -> Result<()> {
        let now = self.hand_shake(step, i)?;
        if now != self.remote[i] {
            return Err(PerftestError::DestChanged {
                index: i,
                first: Box::new(self.remote[i]),
                now: Box::new(now),
            });
        }
        Ok(())
    }
}

/// Runs the client side up to the data phase: negotiate, first key round,
/// `hook(Stage::Connect)`, post-connect syncs, `hook(Stage::Arm)`, start.
pub fn client_handshake<S, H>(
    stream: &mut S,
    kind: TestKind,
    params: &Params,
    local: &[Dest],
    hook: H,
) -> Result<Handshake>
where
    S: Read + Write,
    H: FnMut(Stage, &Handshake) -> Result<(), HookError>,
{
    run_handshake(stream, Role::Client, kind, params, local, hook)
}

/// Runs the server side up to the data phase; see [`client_handshake`].
pub fn server_handshake<S, H>(
    stream: &mut S,
    kind: TestKind,
    params: &Params,
    local: &[Dest],
    hook: H,
) -> Result<Handshake>
where
    S: Read + Write,
    H: FnMut(Stage, &Handshake) -> Result<(), HookError>,
{
    run_handshake(stream, Role::Server, kind, params, local, hook)
}

fn run_handshake<S, H>(
    stream: &mut S,
    role: Role,
    kind: TestKind,
    params: &Params,
    local: &[Dest],
    mut hook: H,
) -> Result<Handshake>
where
    S: Read + Write,
    H: FnMut(Stage, &Handshake) -> Result<(), HookError>,
{
    let mut c = Control::new(&mut *stream, role, kind, params.clone())?;
    c.negotiate()?;
    c.exchange_dests(local)?;
    let hs = c.handshake().expect("keys exchanged");
    hook(Stage::Connect, &hs).map_err(|e| PerftestError::Hook {
        stage: Stage::Connect,
        message: e.to_string(),
    })?;
    c.sync_connected()?;
    hook(Stage::Arm, &hs).map_err(|e| PerftestError::Hook {
        stage: Stage::Arm,
        message: e.to_string(),
    })?;
    c.start()
}

/// The client's part after the data phase; see [`Control::finish`].
/// `report` is what a real `ib_*_bw` server will print as the result.
pub fn client_finish<S: Read + Write>(
    stream: &mut S,
    hs: &Handshake,
    report: Option<&BwReport>,
) -> Result<Finish> {
    finish_as(stream, Role::Client, hs, report)
}

/// The server's part after the data phase; see [`Control::finish`].
/// For `ib_write_bw`/`ib_read_bw`/`ib_read_lat` it blocks until the client
/// has finished, so it may be called right after [`server_handshake`].
pub fn server_finish<S: Read + Write>(
    stream: &mut S,
    hs: &Handshake,
    report: Option<&BwReport>,
) -> Result<Finish> {
    finish_as(stream, Role::Server, hs, report)
}

fn finish_as<S: Read + Write>(
    stream: &mut S,
    role: Role,
    hs: &Handshake,
    report: Option<&BwReport>,
) -> Result<Finish> {
    if hs.role != role {
        return Err(PerftestError::WrongRole {
            what: "this handshake",
            expected: role,
            actual: hs.role,
        });
    }
    let mut params = Params::new(hs.kind);
    params.size = hs.size;
    params.iters = hs.iters;
    params.num_qps = hs.local.len();
    params.use_gid = hs.use_gid;
    params.mtu = hs.negotiated.mtu;
    let mut c = Control::new(&mut *stream, role, hs.kind, params)?;
    c.negotiated = Some(hs.negotiated.clone());
    c.local = hs.local.clone();
    c.remote = hs.remote.clone();
    c.phase = Phase::Started;
    c.finish(report)
}

/// The socket with the perftest exchange conventions.
struct Channel<'a, S> {
    stream: &'a mut S,
    role: Role,
}

impl<'a, S: Read + Write> Channel<'a, S> {
    fn new(stream: &'a mut S, role: Role) -> Self {
        Channel { stream, role }
    }

    /// One message, one `write` of the whole blob.
    fn send(&mut self, step: &'static str, msg: &[u8]) -> Result<()> {
        let io_err = |source| PerftestError::Io { step, source };
        self.stream.write_all(msg).map_err(io_err)?;
        self.stream.flush().map_err(io_err)
    }

    fn recv(&mut self, step: &'static str, len: usize) -> Result<Vec<u8>> {
        let mut buf = vec![0u8; len];
        let mut got = 0;
        while got < len {
            match self.stream.read(&mut buf[got..]) {
                Ok(0) => {
                    return Err(PerftestError::Eof {
                        step,
                        expected: len,
                        got,
                    })
                }
                Ok(n) => got += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(source) => return Err(PerftestError::Io { step, source }),
            }
        }
        Ok(buf)
    }

    /// `ctx_xchg_data` / `ctx_hand_shake`: the client writes then reads,
    /// the server reads then writes; both messages have `mine.len()` bytes.
    fn xchg(&mut self, step: &'static str, mine: &[u8]) -> Result<Vec<u8>> {
        match self.role {
            Role::Client => {
                self.send(step, mine)?;
                self.recv(step, mine.len())
            }
            Role::Server => {
                let theirs = self.recv(step, mine.len())?;
                self.send(step, mine)?;
                Ok(theirs)
            }
        }
    }

    /// Our `"done\0"`. perftest closes right after writing its own without
    /// reading ours, so a peer that is already gone is not an error.
    fn send_done(&mut self) -> Result<()> {
        let step = "ctx_close_connection (done)";
        match self
            .stream
            .write_all(&DONE_MSG)
            .and_then(|()| self.stream.flush())
        {
            Ok(()) => Ok(()),
            Err(e) if gone(&e) => Ok(()),
            Err(source) => Err(PerftestError::Io { step, source }),
        }
    }

    /// The peer's `"done\0"`, tolerating a peer that already closed or
    /// reset the connection (perftest closes without reading ours).
    fn recv_done(&mut self) -> Result<bool> {
        let step = "ctx_close_connection (peer's done)";
        let mut buf = [0u8; DONE_MSG.len()];
        let mut got = 0;
        while got < buf.len() {
            match self.stream.read(&mut buf[got..]) {
                Ok(0) => break,
                Ok(n) => got += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) if got == 0 && gone(&e) => break,
                Err(source) => return Err(PerftestError::Io { step, source }),
            }
        }
        match got {
            0 => Ok(false),
            _ if buf[..got] == DONE_MSG[..] => Ok(true),
            _ => Err(PerftestError::BadDone(buf[..got].to_vec())),
        }
    }
}

/// The peer has closed or reset the connection.
fn gone(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::BrokenPipe
            | io::ErrorKind::ConnectionReset
            | io::ErrorKind::ConnectionAborted
    )
}

/// The text of a NUL-padded version field (up to the first NUL).
fn version_text(field: &[u8]) -> String {
    let end = field.iter().position(|&b| b == 0).unwrap_or(field.len());
    String::from_utf8_lossy(&field[..end]).into_owned()
}

/// `atof`: the leading decimal number of `s`, if any.
fn leading_number(s: &str) -> Option<f64> {
    let t = s.trim_start();
    let b = t.as_bytes();
    let mut i = 0;
    if i < b.len() && (b[i] == b'+' || b[i] == b'-') {
        i += 1;
    }
    let int_start = i;
    while i < b.len() && b[i].is_ascii_digit() {
        i += 1;
    }
    let mut digits = i - int_start;
    if i < b.len() && b[i] == b'.' {
        let frac_start = i + 1;
        let mut j = frac_start;
        while j < b.len() && b[j].is_ascii_digit() {
            j += 1;
        }
        digits += j - frac_start;
        i = j;
    }
    if digits == 0 {
        return None;
    }
    t[..i].parse().ok()
}

/// `strtol(s, NULL, 10)` over a NUL-terminated field: None without digits.
fn leading_int(field: &[u8]) -> Option<i64> {
    let end = field.iter().position(|&b| b == 0).unwrap_or(field.len());
    let s = std::str::from_utf8(&field[..end]).ok()?.trim_start();
    let digits: String = s.chars().take_while(|c| c.is_ascii_digit()).collect();
    digits.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::net::UnixStream;
    use std::thread;

    /// ::ffff:10.0.2.15, what rdma_rxe shows at GID index 1 in a QEMU guest.
    const GID_GUEST: [u8; 16] = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 10, 0, 2, 15];
    /// ::ffff:10.0.2.2
    const GID_HOST: [u8; 16] = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 10, 0, 2, 2];

    fn dest(qpn: u32, gid: [u8; 16]) -> Dest {
        Dest::new(qpn, 0x5b7ea2 ^ qpn, 0x1000 + qpn, 0x7f00_1234_5000, gid)
    }

    #[test]
    fn encode_gid_exact_text() {
        let d = Dest::new(0x11, 0x5b7ea2, 0x179, 0x0000_557f_0f4a_1000, GID_GUEST);
        let m = d.encode(true).unwrap();
        assert_eq!(m.len(), KEY_MSG_SIZE_GID);
        assert_eq!(
            &m[..],
            &b"0000:0001:000011:5b7ea2:00000179:0000557f0f4a1000:00:00:00:00:00:00:00:00:00:00:ff:ff:0a:00:02:0f:00000000:\0"[..]
        );
    }

    #[test]
    fn encode_no_gid_exact_text() {
        let d = Dest::new(0xabcdef, 0x123456, 0xdeadbeef, 0x1122334455667788, [0; 16]);
        let m = d.encode(false).unwrap();
        assert_eq!(m.len(), KEY_MSG_SIZE);
        assert_eq!(
            &m[..],
            &b"0000:0001:abcdef:123456:deadbeef:1122334455667788:00000000\0"[..]
        );
    }

    #[test]
    fn round_trips() {
        let mut d = Dest::new(0xffffff, 0xffffff, u32::MAX, u64::MAX, [0xa5; 16]);
        d.lid = 0xffff;
        d.out_reads = 0x80;
        d.srqn = 0x12345678;
        assert_eq!(Dest::parse(&d.encode(true).unwrap(), true).unwrap(), d);
        let d2 = Dest { gid: [0; 16], ..d };
        assert_eq!(Dest::parse(&d2.encode(false).unwrap(), false).unwrap(), d2);
        let zero = Dest::new(0, 0, 0, 0, [0; 16]);
        assert_eq!(
            Dest::parse(&zero.encode(true).unwrap(), true).unwrap(),
            zero
        );
    }

    #[test]
    fn parses_a_real_key_message() {
        // Sent by the Debian 6.06 ib_write_lat client (-x 1), recorded on
        // the TCP connection; it ran on a fake verbs provider that hands out
        // QPN 0x11, rkey 0x52d and GID ::ffff:10.0.2.15 at index 1.
        let msg = b"0000:0001:000011:5e1ad5:0000052d:0000556257600000:00:00:00:00:00:00:00:00:00:00:ff:ff:0a:00:02:0f:00000000:\0";
        let d = Dest::parse(msg, true).unwrap();
        assert_eq!(d.lid, 0);
        assert_eq!(d.out_reads, 1);
        assert_eq!(d.qpn, 0x11);
        assert_eq!(d.psn, 0x5e1ad5);
        assert_eq!(d.rkey, 0x52d);
        assert_eq!(d.vaddr, 0x0000_5562_5760_0000);
        assert_eq!(d.gid, GID_GUEST);
        assert_eq!(d.srqn, 0);
        assert!(d.gid_is_ipv4_mapped());
        // Upper-case hex is accepted too (strtol would).
        let upper: Vec<u8> = msg.iter().map(|b| b.to_ascii_uppercase()).collect();
        assert_eq!(Dest::parse(&upper, true).unwrap(), d);
    }

    #[test]
    fn rejects_malformed_keys() {
        let good = dest(0x11, GID_GUEST).encode(true).unwrap();
        let expect_err = |m: &[u8], gid: bool, needle: &str| {
            let e = Dest::parse(m, gid).unwrap_err();
            let s = e.to_string();
            assert!(
                matches!(e, PerftestError::MalformedKey { .. }) && s.contains(needle),
                "{s}"
            );
        };
        expect_err(&good[..107], true, "107 bytes");
        expect_err(&good, false, "108 bytes, expected 59");
        expect_err(b"", true, "0 bytes");
        let mut m = good.clone();
        m[107] = b':';
        expect_err(&m, true, "not NUL-terminated");
        let mut m = good.clone();
        m[3] = b'g';
        expect_err(&m, true, "not hexadecimal");
        let mut m = good.clone();
        m[4] = b'-';
        expect_err(&m, true, "fields");
        let mut m = good.clone();
        m[10] = 0;
        expect_err(&m, true, "NUL at byte 10");
        let mut m = good.clone();
        m[106] = b'0';
        expect_err(&m, true, "trailing ':'");
        // Shifted widths: qpn with 5 digits and psn with 7.
        let mut m = good.clone();
        m[10..24].copy_from_slice(b"00011:0e0b7c5:");
        expect_err(&m, true, "field 2");
        let m = b"0000:0001:000011:e0b7c5:0000052d:0000055c1d3e28000:0000000\0";
        expect_err(m, false, "field 5");
        let mut m = good.clone();
        m[50] = 0xc3;
        expect_err(&m, true, "ASCII");
    }

    #[test]
    fn refuses_to_encode_oversized_fields() {
        let mut d = dest(1, GID_GUEST);
        d.qpn = 0x100_0000;
        assert!(matches!(d.encode(true), Err(PerftestError::KeyField(_))));
        let mut d = dest(1, GID_GUEST);
        d.out_reads = 0x10000;
        assert!(matches!(d.encode(false), Err(PerftestError::KeyField(_))));
    }

    #[test]
    fn ipv4_mapped_detection() {
        assert!(dest(1, GID_GUEST).gid_is_ipv4_mapped());
        let mut g = GID_GUEST;
        g[0] = 0xfe;
        g[1] = 0x80;
        assert!(!dest(1, g).gid_is_ipv4_mapped());
        let mut mc = GID_GUEST;
        mc[0] = 0xff;
        mc[1] = 0x0e;
        assert!(dest(1, mc).gid_is_ipv4_mapped());
    }

    #[test]
    fn number_parsing_is_atof_like() {
        assert_eq!(leading_number("6.06"), Some(6.06));
        assert_eq!(leading_number("5.70"), Some(5.7));
        assert_eq!(leading_number(" 6.1b"), Some(6.1));
        assert_eq!(leading_number("x6"), None);
        assert_eq!(leading_number(""), None);
        assert_eq!(leading_int(b"3\0"), Some(3));
        assert_eq!(leading_int(b"\0\0"), None);
    }

    #[test]
    fn address_helpers_follow_increase_rem_addr() {
        let neg = Negotiated {
            peer_version: "6.06".into(),
            peer_cycle_buffer: 4096,
            peer_cache_line_size: 64,
            cycle_buffer: 4096,
            cache_line_size: 64,
            peer_mtu: Some(IbvMtu::Mtu1024),
            mtu: IbvMtu::Mtu1024,
        };
        let mut hs = Handshake {
            kind: TestKind::WriteBw,
            role: Role::Client,
            size: 100,
            iters: 5000,
            use_gid: true,
            negotiated: neg,
            local: vec![],
            remote: vec![],
        };
        assert_eq!(hs.addr_inc(), 128);
        assert_eq!(hs.slots(), 32);
        assert_eq!(hs.msg_offset(0), 0);
        assert_eq!(hs.msg_offset(1), 128);
        assert_eq!(hs.msg_offset(31), 31 * 128);
        assert_eq!(hs.msg_offset(32), 0);
        assert_eq!(hs.region_len(), 4096);
        assert_eq!(hs.buff_size(), 4096);
        hs.size = 8;
        assert_eq!((hs.addr_inc(), hs.slots()), (64, 64));
        hs.size = 65536;
        assert!(!hs.cycles_addresses());
        assert_eq!(
            (hs.msg_offset(7), hs.region_len(), hs.buff_size()),
            (0, 65536, 65536)
        );
        hs.size = 2048;
        assert_eq!((hs.slots(), hs.msg_offset(1)), (2, 2048));
        hs.size = 2049;
        assert_eq!(hs.slots(), 1);
        hs.kind = TestKind::WriteLat;
        hs.size = 2;
        assert_eq!(
            (hs.msg_offset(5), hs.lat_poll_offset(), hs.region_len()),
            (0, 1, 2)
        );
        assert_eq!(Handshake::lat_counter(257), 1);
    }

    #[test]
    fn mtu_enum() {
        assert_eq!(IbvMtu::Mtu1024.bytes(), 1024);
        assert_eq!(IbvMtu::Mtu4096.bytes(), 4096);
        assert_eq!(IbvMtu::from_bytes(2048), Some(IbvMtu::Mtu2048));
        assert_eq!(IbvMtu::from_enum(6), None);
    }

    #[test]
    fn bw_report_fields_are_big_endian() {
        let r = BwReport {
            size: 65536,
            iters: 5000,
            bw_peak: 1.5,
            bw_avg: 1.25,
            msg_rate: 0.02,
        };
        let f = r.fields();
        assert_eq!(f[0], [0, 0, 0, 0, 0, 1, 0, 0]);
        assert_eq!(f[1], [0, 0, 0, 0, 0, 0, 0x13, 0x88]);
        assert_eq!(f[2], [0x3f, 0xf8, 0, 0, 0, 0, 0, 0]);
        assert_eq!(BwReport::from_fields(&f), r);
        // The five fields a real ib_write_bw 6.06 client sent (-n 100); its
        // server printed 65536, 100, 649030.50, 454859.90, 7.277758.
        let real: [[u8; 8]; 5] = [
            *b"\x00\x00\x00\x00\x00\x01\x00\x00",
            *b"\x00\x00\x00\x00\x00\x00\x00d",
            *b"A#\xce\x8d\x00\x00\x00\x00",
            *b"A\x1b\xc3/\x9d\xd3U_",
            *b"@\x1d\x1cl\xb7\x1f\ts",
        ];
        let r = BwReport::from_fields(&real);
        assert_eq!((r.size, r.iters), (65536, 100));
        assert!((r.bw_peak - 649030.50).abs() < 0.005, "{r:?}");
        assert!((r.bw_avg - 454859.90).abs() < 0.005, "{r:?}");
        assert!((r.msg_rate - 7.277758).abs() < 1e-6, "{r:?}");
        let r = BwReport::from_run(1 << 20, 1024, Duration::from_secs(2), false);
        assert_eq!(r.bw_avg, 512.0);
        assert!((r.msg_rate - 0.000512).abs() < 1e-12);
    }

    /// Runs our client against our server over a socketpair.
    fn pair_run(
        kind: TestKind,
        cparams: Params,
        sparams: Params,
    ) -> (Handshake, Handshake, Finish, Finish) {
        let (mut cs, mut ss) = UnixStream::pair().unwrap();
        let n = cparams.num_qps;
        let clocal: Vec<Dest> = (0..n).map(|i| dest(0x100 + i as u32, GID_HOST)).collect();
        let slocal: Vec<Dest> = (0..n).map(|i| dest(0x200 + i as u32, GID_GUEST)).collect();
        let sl = slocal.clone();
        let server = thread::spawn(move || {
            let mut stages = Vec::new();
            let hs = server_handshake(&mut ss, kind, &sparams, &sl, |st, hs| {
                assert_eq!(hs.remote.len(), sparams.num_qps);
                stages.push(st);
                Ok(())
            })
            .unwrap();
            assert_eq!(stages, [Stage::Connect, Stage::Arm]);
            let fin = server_finish(&mut ss, &hs, None).unwrap();
            // Nothing may follow on the wire.
            let mut rest = Vec::new();
            ss.read_to_end(&mut rest).unwrap();
            assert!(rest.is_empty(), "{rest:?}");
            (hs, fin)
        });
        let hs = client_handshake(&mut cs, kind, &cparams, &clocal, |_, _| Ok(())).unwrap();
        let report = BwReport::from_run(hs.size, hs.iters, Duration::from_millis(250), false);
        let fin = client_finish(&mut cs, &hs, Some(&report)).unwrap();
        drop(cs);
        let (shs, sfin) = server.join().unwrap();
        // Without the GID form the GID does not travel.
        let seen = |v: &[Dest]| -> Vec<Dest> {
            v.iter()
                .map(|d| Dest {
                    gid: if hs.use_gid { d.gid } else { [0; 16] },
                    ..*d
                })
                .collect()
        };
        assert_eq!(hs.remote, seen(&slocal));
        assert_eq!(shs.remote, seen(&clocal));
        if kind.exchanges_bw_reports() {
            assert_eq!(sfin.peer_report, Some(report));
            assert_eq!(fin.peer_report, Some(BwReport::zero()));
        } else {
            assert_eq!((fin.peer_report, sfin.peer_report), (None, None));
        }
        (hs, shs, fin, sfin)
    }

    #[test]
    fn client_and_server_agree_for_every_kind() {
        for kind in TestKind::ALL {
            let (c, s, cf, sf) = pair_run(kind, Params::new(kind), Params::new(kind));
            assert_eq!(c.negotiated.mtu, IbvMtu::Mtu1024, "{kind:?}");
            assert_eq!(c.negotiated.peer_version, "6.06");
            assert_eq!(s.negotiated.peer_version, "6.06");
            assert_eq!(cf.peer_sent_done, kind.closes_with_done(), "{kind:?}");
            assert_eq!(sf.peer_sent_done, kind.closes_with_done(), "{kind:?}");
        }
    }

    #[test]
    fn negotiation_takes_min_mtu_and_max_layout() {
        let kind = TestKind::WriteBw;
        let mut cp = Params::new(kind);
        cp.mtu = IbvMtu::Mtu4096;
        cp.cycle_buffer = 65536;
        cp.size = 64;
        let mut sp = Params::new(kind);
        sp.mtu = IbvMtu::Mtu1024;
        sp.cache_line_size = 128;
        sp.size = 64;
        let (c, s, _, _) = pair_run(kind, cp, sp);
        for hs in [&c, &s] {
            assert_eq!(hs.negotiated.mtu, IbvMtu::Mtu1024);
            assert_eq!(hs.negotiated.cycle_buffer, 65536);
            assert_eq!(hs.negotiated.cache_line_size, 128);
            assert_eq!((hs.addr_inc(), hs.slots()), (128, 512));
        }
        assert_eq!(c.negotiated.peer_mtu, Some(IbvMtu::Mtu1024));
        assert_eq!(s.negotiated.peer_mtu, Some(IbvMtu::Mtu4096));
    }

    #[test]
    fn several_qps_and_no_gid_form() {
        for kind in [TestKind::SendBw, TestKind::WriteBw] {
            let mut p = Params::new(kind);
            p.num_qps = 3;
            p.use_gid = false;
            let (c, s, _, _) = pair_run(kind, p.clone(), p);
            assert_eq!((c.remote.len(), s.remote.len()), (3, 3));
        }
    }

    /// One step of a scripted peer: what it expects to read, or sends.
    enum Step {
        Read(Vec<u8>),
        Write(Vec<u8>),
    }

    /// Plays `script` on one end of a socketpair; returns at the end.
    fn scripted(mut s: UnixStream, script: Vec<Step>) -> thread::JoinHandle<()> {
        thread::spawn(move || {
            for (i, st) in script.into_iter().enumerate() {
                match st {
                    Step::Read(want) => {
                        let mut got = vec![0u8; want.len()];
                        s.read_exact(&mut got).unwrap();
                        assert_eq!(
                            String::from_utf8_lossy(&got),
                            String::from_utf8_lossy(&want),
                            "step {i}"
                        );
                        assert_eq!(got, want, "step {i}");
                    }
                    Step::Write(b) => s.write_all(&b).unwrap(),
                }
            }
        })
    }

    fn version_msg(v: &str) -> Vec<u8> {
        let mut m = vec![0u8; 16];
        m[..v.len()].copy_from_slice(v.as_bytes());
        m
    }

    fn prologue(role_of_script: Role, peer_mtu: &[u8; 2]) -> Vec<Step> {
        // Each exchange: the client's bytes travel first.
        let ours = [
            version_msg("6.06"),
            4096i32.to_be_bytes().to_vec(),
            64i32.to_be_bytes().to_vec(),
            b"3\0".to_vec(),
        ];
        let theirs = [
            version_msg("6.06"),
            4096i32.to_be_bytes().to_vec(),
            64i32.to_be_bytes().to_vec(),
            peer_mtu.to_vec(),
        ];
        let mut v = Vec::new();
        for (o, t) in ours.into_iter().zip(theirs) {
            match role_of_script {
                Role::Server => {
                    v.push(Step::Read(o));
                    v.push(Step::Write(t));
                }
                Role::Client => {
                    v.push(Step::Write(t));
                    v.push(Step::Read(o));
                }
            }
        }
        v
    }

    /// Our client against a byte-exact script of a perftest 6.06
    /// `ib_write_bw` server, built from the documented sequence rather than
    /// from our own server.
    #[test]
    fn client_matches_scripted_write_bw_server() {
        let (cs, ss) = UnixStream::pair().unwrap();
        let ours = dest(0x22, GID_HOST);
        let theirs = dest(0x11, GID_GUEST);
        let (om, tm) = (ours.encode(true).unwrap(), theirs.encode(true).unwrap());
        let mut script = prologue(Role::Server, b"5\0");
        for _ in 0..3 {
            script.push(Step::Read(om.clone()));
            script.push(Step::Write(tm.clone()));
        }
        // After the data phase: sync, five report fields, close.
        script.push(Step::Read(om.clone()));
        script.push(Step::Write(tm.clone()));
        let report = BwReport::from_run(65536, 5000, Duration::from_secs(1), false);
        for f in report.fields() {
            script.push(Step::Read(f.to_vec()));
            script.push(Step::Write(vec![0xee; 8]));
        }
        script.push(Step::Read(om.clone()));
        script.push(Step::Write(tm.clone()));
        script.push(Step::Write(DONE_MSG.to_vec()));
        script.push(Step::Read(DONE_MSG.to_vec()));
        let peer = scripted(ss, script);
        let mut cs = cs;
        let params = Params::new(TestKind::WriteBw);
        let hs =
            client_handshake(&mut cs, TestKind::WriteBw, &params, &[ours], |_, _| Ok(())).unwrap();
        assert_eq!(hs.remote, vec![theirs]);
        assert_eq!(hs.negotiated.mtu, IbvMtu::Mtu1024);
        assert_eq!(hs.negotiated.peer_mtu, Some(IbvMtu::Mtu4096));
        let fin = client_finish(&mut cs, &hs, Some(&report)).unwrap();
        assert_eq!(fin.peer_report.unwrap().size, 0xeeee_eeee_eeee_eeee);
        assert!(fin.peer_sent_done);
        peer.join().unwrap();
    }

    /// Our server against a script of a perftest 6.06 `ib_send_lat` client,
    /// which closes the socket right after writing "done".
    #[test]
    fn server_matches_scripted_send_lat_client() {
        let (cs, ss) = UnixStream::pair().unwrap();
        let ours = dest(0x33, GID_HOST);
        let theirs = dest(0x44, GID_GUEST);
        let (om, tm) = (ours.encode(true).unwrap(), theirs.encode(true).unwrap());
        let mut script = prologue(Role::Client, b"3\0");
        for _ in 0..4 + 1 {
            script.push(Step::Write(tm.clone()));
            script.push(Step::Read(om.clone()));
        }
        script.push(Step::Write(DONE_MSG.to_vec()));
        let peer = scripted(cs, script);
        let mut ss = ss;
        let mut stages = Vec::new();
        let params = Params::new(TestKind::SendLat);
        let hs = server_handshake(&mut ss, TestKind::SendLat, &params, &[ours], |st, _| {
            stages.push(st);
            Ok(())
        })
        .unwrap();
        assert_eq!(stages, [Stage::Connect, Stage::Arm]);
        let fin = server_finish(&mut ss, &hs, None).unwrap();
        assert_eq!(
            fin,
            Finish {
                peer_report: None,
                peer_sent_done: true
            }
        );
        peer.join().unwrap();
    }

    /// A peer that closes without sending "done" is still a clean end.
    #[test]
    fn close_without_done_is_accepted() {
        let (cs, ss) = UnixStream::pair().unwrap();
        let ours = dest(0x33, GID_HOST);
        let theirs = dest(0x44, GID_GUEST);
        let (om, tm) = (ours.encode(true).unwrap(), theirs.encode(true).unwrap());
        let mut script = prologue(Role::Server, b"3\0");
        for _ in 0..4 + 1 {
            script.push(Step::Read(om.clone()));
            script.push(Step::Write(tm.clone()));
        }
        let peer = scripted(ss, script);
        let mut cs = cs;
        let p = Params::new(TestKind::SendBw);
        let hs = client_handshake(&mut cs, TestKind::SendBw, &p, &[ours], |_, _| Ok(())).unwrap();
        let done = thread::spawn(move || client_finish(&mut cs, &hs, None).unwrap());
        peer.join().unwrap();
        assert!(!done.join().unwrap().peer_sent_done);
    }

    #[test]
    fn write_lat_ends_without_traffic() {
        let (cs, ss) = UnixStream::pair().unwrap();
        let ours = dest(0x33, GID_HOST);
        let theirs = dest(0x44, GID_GUEST);
        let (om, tm) = (ours.encode(true).unwrap(), theirs.encode(true).unwrap());
        let mut script = prologue(Role::Server, b"3\0");
        for _ in 0..4 {
            script.push(Step::Read(om.clone()));
            script.push(Step::Write(tm.clone()));
        }
        let peer = scripted(ss, script);
        let mut cs = cs;
        let p = Params::new(TestKind::WriteLat);
        let hs = client_handshake(&mut cs, TestKind::WriteLat, &p, &[ours], |_, _| Ok(())).unwrap();
        peer.join().unwrap();
        let fin = client_finish(&mut cs, &hs, None).unwrap();
        assert_eq!(
            fin,
            Finish {
                peer_report: None,
                peer_sent_done: false
            }
        );
    }

    #[test]
    fn old_or_garbled_peer_version_is_refused() {
        for (v, old) in [("5.60", true), ("abc", false)] {
            let (cs, ss) = UnixStream::pair().unwrap();
            let peer = scripted(
                ss,
                vec![Step::Read(version_msg("6.06")), Step::Write(version_msg(v))],
            );
            let mut cs = cs;
            let p = Params::new(TestKind::WriteBw);
            let e = client_handshake(
                &mut cs,
                TestKind::WriteBw,
                &p,
                &[dest(1, GID_HOST)],
                |_, _| Ok(()),
            )
            .unwrap_err();
            peer.join().unwrap();
            if old {
                assert!(
                    matches!(e, PerftestError::PeerTooOld(ref s) if s == "5.60"),
                    "{e}"
                );
            } else {
                assert!(matches!(e, PerftestError::BadVersion(_)), "{e}");
            }
        }
    }

    #[test]
    fn gid_type_mismatch_is_refused() {
        let (mut cs, mut ss) = UnixStream::pair().unwrap();
        let kind = TestKind::WriteLat;
        let mut ipv6 = GID_GUEST;
        ipv6[..2].copy_from_slice(&[0xfe, 0x80]);
        ipv6[10..12].copy_from_slice(&[0x12, 0x34]);
        let server = thread::spawn(move || {
            server_handshake(
                &mut ss,
                kind,
                &Params::new(kind),
                &[dest(2, ipv6)],
                |_, _| Ok(()),
            )
            .unwrap_err()
        });
        let e = client_handshake(
            &mut cs,
            kind,
            &Params::new(kind),
            &[dest(1, GID_HOST)],
            |_, _| Ok(()),
        )
        .unwrap_err();
        assert!(
            matches!(
                e,
                PerftestError::GidTypeMismatch {
                    local: "IPv4-mapped",
                    remote: "IPv6"
                }
            ),
            "{e}"
        );
        drop(cs);
        assert!(matches!(
            server.join().unwrap(),
            PerftestError::GidTypeMismatch { .. }
        ));
    }

    #[test]
    fn changed_key_and_truncation_are_reported() {
        // The peer sends a different key in the second round.
        let (cs, ss) = UnixStream::pair().unwrap();
        let ours = dest(0x33, GID_HOST);
        let t1 = dest(0x44, GID_GUEST);
        let t2 = dest(0x45, GID_GUEST);
        let om = ours.encode(true).unwrap();
        let mut script = prologue(Role::Server, b"3\0");
        script.push(Step::Read(om.clone()));
        script.push(Step::Write(t1.encode(true).unwrap()));
        script.push(Step::Read(om.clone()));
        script.push(Step::Write(t2.encode(true).unwrap()));
        let peer = scripted(ss, script);
        let mut cs = cs;
        let p = Params::new(TestKind::WriteBw);
        let e =
            client_handshake(&mut cs, TestKind::WriteBw, &p, &[ours], |_, _| Ok(())).unwrap_err();
        peer.join().unwrap();
        assert!(
            matches!(e, PerftestError::DestChanged { index: 0, .. }),
            "{e}"
        );

        // The peer hangs up in the middle of a key message.
        let (cs, ss) = UnixStream::pair().unwrap();
        let mut script = prologue(Role::Server, b"3\0");
        script.push(Step::Read(om.clone()));
        script.push(Step::Write(t1.encode(true).unwrap()[..40].to_vec()));
        let peer = scripted(ss, script);
        let mut cs = cs;
        let e =
            client_handshake(&mut cs, TestKind::WriteBw, &p, &[ours], |_, _| Ok(())).unwrap_err();
        peer.join().unwrap();
        assert!(
            matches!(
                e,
                PerftestError::Eof {
                    expected: 108,
                    got: 40,
                    ..
                }
            ),
            "{e}"
        );
        assert!(e.to_string().contains("first key round"), "{e}");
    }

    #[test]
    fn hook_errors_and_order_are_reported() {
        let (mut cs, mut ss) = UnixStream::pair().unwrap();
        let kind = TestKind::SendBw;
        let server = thread::spawn(move || {
            server_handshake(
                &mut ss,
                kind,
                &Params::new(kind),
                &[dest(2, GID_GUEST)],
                |_, _| Ok(()),
            )
        });
        let e = client_handshake(
            &mut cs,
            kind,
            &Params::new(kind),
            &[dest(1, GID_HOST)],
            |st, _| {
                if st == Stage::Connect {
                    Err("modify QP to RTR failed".into())
                } else {
                    Ok(())
                }
            },
        )
        .unwrap_err();
        assert!(e.to_string().contains("modify QP to RTR failed"), "{e}");
        drop(cs);
        assert!(server.join().unwrap().is_err());

        let (cs, _ss) = UnixStream::pair().unwrap();
        let mut c = Control::new(cs, Role::Client, kind, Params::new(kind)).unwrap();
        assert!(matches!(
            c.start(),
            Err(PerftestError::OutOfOrder { step: "start", .. })
        ));
        let mut p = Params::new(kind);
        p.num_qps = 0;
        assert!(matches!(
            Control::new(UnixStream::pair().unwrap().0, Role::Client, kind, p),
            Err(PerftestError::InvalidParams(_))
        ));
    }

    #[test]
    fn exchange_counts() {
        assert_eq!(TestKind::WriteBw.pre_data_exchanges(1), 3);
        assert_eq!(TestKind::ReadBw.pre_data_exchanges(2), 5);
        assert_eq!(TestKind::AtomicBw.pre_data_exchanges(1), 3);
        assert_eq!(TestKind::WriteLat.pre_data_exchanges(1), 4);
        assert_eq!(TestKind::ReadLat.pre_data_exchanges(1), 4);
        assert_eq!(TestKind::SendBw.pre_data_exchanges(1), 4);
        assert_eq!(TestKind::SendBw.pre_data_exchanges(2), 6);
        assert_eq!(TestKind::SendLat.pre_data_exchanges(1), 4);
        let mut p = Params::new(TestKind::SendLat);
        p.num_qps = 2;
        let e = Control::new(
            UnixStream::pair().unwrap().0,
            Role::Server,
            TestKind::SendLat,
            p,
        )
        .err()
        .unwrap();
        assert!(e.to_string().contains("only one QP"), "{e}");
    }
}
