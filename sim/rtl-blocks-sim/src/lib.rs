//! Verilator models of the small reusable RTL blocks of `hw/rtl`, driven
//! from Rust, and the benches that test them:
//!
//! - [`skid`]: `axis_register`, the skid buffer / output register;
//! - [`arb`]: `axis_arb_mux` with its `arbiter` core, fixed priority and
//!   round robin, with and without the output register;
//! - [`icrc`]: `icrc_subst`, the ICRC field substitution of roce_tx and
//!   roce_rx;
//! - [`ram`]: `ram_sdp`, the block RAM with a registered, transparent read
//!   (the QP context's records);
//! - [`copies`]: `ram_sdp_copies`, a record in block RAM with several read
//!   ports, each a `ram_sdp` of the slice it reads (the requester's and
//!   the QP context's records);
//! - [`rec`]: `ram_rec`, a `ram_sdp_copies` with a record port (a copy of
//!   the whole record read whole, a whole-record write that yields to the
//!   module's write: the QP context cache's way into a record), against a
//!   model of the record memory, every record write done exactly once;
//! - [`rec_map`]: `rec_map`, qpc_fill's word-wide record port onto the
//!   ram_rec record ports of N_REC records (the records' layout in the
//!   slot's 64-bit words), against Rust models of the record RAMs: every
//!   word read, every whole-record write done once with its bits, padding;
//! - [`rec_port_mux`]: `rec_port_mux`, one record word port onto N
//!   modules' record ports by word ranges, against Rust models of the
//!   ports (rec_map-like memories of random readiness): every read and
//!   write routed to its owner alone, every read answered once, in order,
//!   a cycle after its port, with the record's word;
//! - [`mr`]: `mr_table`, the memory-region table: keys, protection domain,
//!   access, bounds and address translation, against a model written in
//!   the plain arithmetic of the checks;
//! - [`tag_match`]: `tag_match`, which of N entries hold a key (the
//!   requester's lookups of a ring's owner by QP number), directed cases
//!   and a random campaign against the rule;
//! - [`onehot_mux`]: `onehot_mux`, the OR of the inputs a one-hot select
//!   picks (qp_cache's queued QP numbers and way tags), directed cases
//!   and a random campaign against the rule;
//! - [`alloc`]: `slot_allocator`, a shared pool's free bits (the
//!   requester's outstanding rings, the mp responder's deferred
//!   completions), against a model of the pool;
//! - [`mpwin`]: `mp_window`, the mp responder's receive window (duplicates,
//!   the window, the point's move, loss NAKs, deferred completions due),
//!   stage by stage, against a model of the transport's rules;
//! - [`rcmsg`]: `rc_message`, the rc responder's message state and its
//!   opcode-sequence, length and access checks, against a model of the
//!   rules;
//! - [`mpdef`]: `mp_deferred`, the mp responder's parked completions and
//!   their slots, against a model of what each QP has parked;
//! - [`async_fifo`]: `axis_async_fifo`, a stream from one clock to another
//!   (two clocks of their own periods and phases, in picoseconds): every
//!   beat once and in order, never more inside than the memory and the
//!   output register, the pointers' two-flop crossings, resets, the rate;
//! - [`completer`]: `completer`, the requester's ACK completer: ACKs,
//!   NAKs, timeouts and flushes against a reference of the IB rules, the
//!   records it reads and writes kept by the bench;
//! - [`path`]: `path_pick` and `path_health`, the sprayed path of a
//!   packet and a QP's path health update (take-out, probe, loss counts,
//!   RTT), against references of their rules;
//! - [`sweep`]: `ram_reset_sweep`, a record RAM's zeroing sweep after a
//!   reset that follows a write, against a model and a RAM kept by the
//!   bench;
//! - [`tlp_size`]: `tlp_upsize` and `tlp_downsize`, a TLP stream to twice
//!   and to half its width: TLPs reassembled from the output against those
//!   sent, the header of every beat, the keep, the full rate;
//! - [`read_reply`]: `read_reply`, the RDMA READ response engine: random
//!   READ jobs, a DMA engine and a packet sink of random readiness and
//!   delays, every packet, read and slot against a reference of the
//!   contract; with ATOMIC_EN the atomics (CMP_SWAP, FETCH_ADD, replays)
//!   against a host memory the bench keeps: the snooped original value,
//!   the write-back, the replay record, one atomic at a time;
//! - [`read_track`]: `read_track`, the READ table (the RDMA READs the
//!   requester issued, looked up by QP and PSN): allocations, frees,
//!   loads, placements and asks of a requester, a responder and a
//!   completer over a few QPs, every lookup answer, `alloc_ready` and
//!   `q_busy` against a model of the table;
//! - [`atomic_replay`]: `atomic_replay`, the replay records of the atomics
//!   executed (per QP a ring of DEPTH records in block RAM, looked up by QP
//!   and PSN with the answer two cycles later, cleared by QP): records,
//!   clears, lookups and resets against a model of the rings;
//! - [`qp_cache`]: `qp_cache`, the QP context cache's directory (a QP
//!   number to an on-chip slot: misses, victims by pseudo-LRU, write-backs,
//!   pins, a miss queue that lets hits pass): random lookups, pins, fills,
//!   invalidates and resets of an outside world against a model of the
//!   block, per-QP answer order, the fill commands' victims;
//! - [`qpc_fill`]: `qpc_fill`, the QP context cache's fill and write-back
//!   engine (records between the host table and the slots through DMA and
//!   a buffer per fill in flight): a host table, a DMA model and record
//!   RAMs of random latencies, read errors, fill commands as qp_cache makes
//!   them (re-misses of QPs just written back), resets; the records moved,
//!   the write-back before re-read hazard, the table bound, the counters;
//! - [`qp_ctx_cache`]: `qp_ctx_cache`, the whole QP context cache (the
//!   directory joined to the fill engine), end to end: a host table, a DMA
//!   model, the record store and a core that modifies pinned records; no
//!   state lost (every answer's slot holds the QP's last record, through
//!   evictions, write-backs and re-fills), errors only for failed reads,
//!   invalidates, the counters;
//! - [`qp_dir`]: `qp_dir`, the QP directory (QP numbers bound to slots by
//!   command; received packets mapped from number to slot through a
//!   register stage, checked against the slot table as they leave; the
//!   CQEs' slot to number): random commands, valid and refused, packets
//!   held under back-pressure while their binding changes, resets, against
//!   a model of the slot and number tables; sweeps of every number after
//!   power-up (junk in the number RAM) and after a reset.
//!
//! Every configuration of [`CONFIGS`] is one model, looked up by name.
//! Stimulus is seeded ([`rand_chacha`]), so a failing run repeats exactly.
//! `RTL_BLOCKS_MUTATION=<name>` at build time plants a bug in the blocks
//! (see build.rs and README.md); the tests must then fail. Without
//! Verilator the crate builds with no models ([`MODEL_AVAILABLE`] is false)
//! and [`Model::new`] fails; the tests then report themselves skipped.

pub mod alloc;
pub mod arb;
pub mod async_fifo;
pub mod atomic_replay;
pub mod completer;
pub mod copies;
mod fill_ports;
pub mod icrc;
pub mod mpdef;
pub mod mpwin;
pub mod mr;
pub mod onehot_mux;
pub mod path;
pub mod qp_cache;
pub mod qp_ctx_cache;
pub mod qp_dir;
pub mod qpc_fill;
pub mod qpn_doorbell;
pub mod ram;
pub mod rcmsg;
pub mod read_reply;
pub mod read_track;
pub mod rec;
pub mod rec_map;
pub mod rec_port_mux;
pub mod skid;
pub mod sweep;
pub mod tag_match;
pub mod tlp_size;

mod configs;

pub use configs::{Config, Kind, CONFIGS};

use std::ffi::c_void;

/// True when build.rs found Verilator and linked the models.
pub const MODEL_AVAILABLE: bool = cfg!(blocks_model);

/// Inputs of a block for one clock cycle. Mirrors `BlkPortsIn` in
/// csrc/blocks.cpp. Buses: word i = bits [32i+31:32i]; every field must
/// be masked to its port's width. icrc_subst: `s_data` is `in_data`,
/// `s_valid` is `beat_oh`. ram_sdp: `s_data` is `wr_data`, `s_valid` bit 0
/// `wr_en`, `s_last` `{rd_addr, wr_addr}` (16 bits each). ram_sdp_copies:
/// `s_data` is `wr_data`, `s_valid` `{wr_addr, 15'b0, wr_en}`, `s_last`
/// the packed `rd_addr` (N_RD * ADDR_W bits). ram_rec: as ram_sdp_copies,
/// with `s_valid` bit 1 `rec_wr_en`, `s_data` words 4..7 `rec_wr_data`
/// and word 8 `{rec_wr_addr, rec_rd_addr}` (16 bits each). mr_table: every
/// input packed into `s_data` (see [`mr`]). tag_match: `s_valid` is
/// `valid`, `s_data` the packed `tags`, `s_last` `key`. onehot_mux:
/// `s_valid` is `sel`, `s_data` the packed `in`. tlp_upsize,
/// tlp_downsize: `s_data` words 0..3 `s_hdr`, 4..11 `s_data`, 12 `s_keep`.
/// read_reply, read_track, atomic_replay, qp_cache, qpc_fill, qp_ctx_cache, rec_map,
/// rec_port_mux, qp_dir:
/// csrc/blocks.cpp has the packing.
///
/// axis_async_fifo has two clocks: `pad[0]` is the step's edge mask (bit
/// 0: s_clk rises, bit 1: m_clk rises; both when the edges coincide; a
/// step with neither only evaluates), `rst` bit 0 is s_rst and bit 1
/// m_rst; [`Model::peek`] holds both clocks low. Every other kind ignores
/// `pad` and raises its one clock in each [`Model::step`].
#[repr(C)]
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct PortsIn {
    pub s_data: [u32; 24],
    pub s_valid: u32,
    pub s_last: u32,
    /// axis_async_fifo: bit 0 s_rst, bit 1 m_rst
    pub rst: u8,
    pub m_ready: u8,
    /// axis_async_fifo: `pad[0]` the step's edge mask (bit 0 s_clk, bit 1
    /// m_clk)
    pub pad: [u8; 2],
}

/// Outputs of a block, sampled before the rising edge. Mirrors
/// `BlkPortsOut` in csrc/blocks.cpp. icrc_subst: `m_data` is `out_data`;
/// ram_sdp, ram_sdp_copies: `m_data` is `rd_data`; ram_rec: `m_data`
/// words 0..3 `rd_data`, 4..7 `rec_rd_data`, `s_ready` `rec_wr_ready`;
/// mr_table: `m_data`
/// `{b_bus, a_bus}`, `m_valid` `{change, reg_err, c_ok, b_ok, a_ok}`;
/// tag_match: `m_data[0]` is `match`; onehot_mux: `m_data` is `out`;
/// tlp_upsize, tlp_downsize: `m_data` words 0..3 `m_hdr`, 4..11 `m_data`, 12 `m_keep`.
#[repr(C)]
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct PortsOut {
    pub m_data: [u32; 32],
    pub s_ready: u32,
    pub m_valid: u8,
    pub m_last: u8,
    pub m_sel: u8,
    /// bit 0: $finish reached, bit 1: an error ($error, assertion)
    pub sim_flags: u8,
}

#[derive(Clone, Copy)]
#[allow(dead_code)] // without models nothing reads the table
struct Fns {
    in_size: unsafe extern "C" fn() -> usize,
    out_size: unsafe extern "C" fn() -> usize,
    create: unsafe extern "C" fn(u32) -> *mut c_void,
    destroy: unsafe extern "C" fn(*mut c_void),
    step: unsafe extern "C" fn(*mut c_void, *const PortsIn, *mut PortsOut),
    peek: unsafe extern "C" fn(*mut c_void, *const PortsIn, *mut PortsOut),
}

include!(concat!(env!("OUT_DIR"), "/ffi.rs"));

/// One Verilated block configuration.
pub struct Model {
    h: *mut c_void,
    fns: Fns,
    cfg: Config,
}

impl Model {
    /// The model of configuration `name` (see [`CONFIGS`]); `seed` picks the
    /// random initial values of registers without one (`--x-initial
    /// unique`).
    pub fn new(name: &str, seed: u32) -> Result<Self, String> {
        if !MODEL_AVAILABLE {
            return Err("rtl-blocks-sim was built without Verilator: no models".into());
        }
        let cfg = *CONFIGS
            .iter()
            .find(|c| c.name == name)
            .ok_or_else(|| format!("no configuration named {name}"))?;
        let fns = model_fns(name).ok_or_else(|| format!("no model for {name}"))?;
        // SAFETY: plain functions of the linked model.
        unsafe {
            if (fns.in_size)() != std::mem::size_of::<PortsIn>()
                || (fns.out_size)() != std::mem::size_of::<PortsOut>()
            {
                return Err("port struct layout differs between Rust and csrc/blocks.cpp".into());
            }
            let h = (fns.create)(seed);
            if h.is_null() {
                return Err("model creation failed".into());
            }
            Ok(Self { h, fns, cfg })
        }
    }

    pub fn config(&self) -> &Config {
        &self.cfg
    }

    /// One clock cycle: apply `i`, return the outputs the rising edge sees,
    /// then clock (axis_async_fifo: the clocks of the edge mask `i.pad[0]`).
    pub fn step(&mut self, i: &PortsIn) -> PortsOut {
        let mut o = PortsOut::default();
        // SAFETY: `h` is a live model; both structs match the C layout
        // (checked in `new`).
        unsafe { (self.fns.step)(self.h, i, &mut o) };
        o
    }

    /// The outputs `i` gives before the edge, without clocking: comparing
    /// two peeks shows what an output depends on combinationally.
    pub fn peek(&mut self, i: &PortsIn) -> PortsOut {
        let mut o = PortsOut::default();
        // SAFETY: as in `step`.
        unsafe { (self.fns.peek)(self.h, i, &mut o) };
        o
    }
}

impl Drop for Model {
    fn drop(&mut self) {
        // SAFETY: `h` came from `create` and is destroyed once.
        unsafe { (self.fns.destroy)(self.h) }
    }
}

/// A bench run that needs only its model, its seed and its length (the
/// benches of [`mpwin`], [`rcmsg`] and [`mpdef`]).
#[derive(Debug, Clone)]
pub struct RunCfg {
    /// configuration name
    pub model: &'static str,
    pub seed: u64,
    pub cycles: usize,
}

impl RunCfg {
    /// 20,000 cycles of `model` from `seed`.
    pub fn new(model: &'static str, seed: u64) -> Self {
        Self {
            model,
            seed,
            cycles: 20_000,
        }
    }
}

/// A failed check: what went wrong, with the cycle.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fail(pub String);

impl std::fmt::Display for Fail {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// `Err(Fail)` with a formatted message.
#[macro_export]
macro_rules! fail {
    ($($t:tt)*) => {
        return Err($crate::Fail(format!($($t)*)))
    };
}

/// PSNs are 24 bits: every bench's PSN arithmetic wraps here.
pub const PSN_MASK: u32 = 0xff_ffff;

/// `a - b` in PSN space (mod 2^24): how far `a` is after `b`; 2^23 and
/// above means `a` is before `b`.
pub fn psn_sub(a: u32, b: u32) -> u32 {
    a.wrapping_sub(b) & PSN_MASK
}

/// The low `width` bits of `v` (width <= 128).
pub fn mask(v: u128, width: u32) -> u128 {
    if width >= 128 {
        v
    } else {
        v & ((1u128 << width) - 1)
    }
}

/// A value of up to 128 bits into bus words.
pub fn to_words(v: u128, words: &mut [u32]) {
    for (i, w) in words.iter_mut().enumerate().take(4) {
        *w = (v >> (32 * i)) as u32;
    }
}

/// Bus words (up to 4) into a value.
pub fn from_words(words: &[u32]) -> u128 {
    words
        .iter()
        .take(4)
        .enumerate()
        .fold(0u128, |a, (i, &w)| a | (u128::from(w) << (32 * i)))
}

/// Shared by the tests: skip (with a note) when there are no models.
pub fn skip() -> bool {
    if !MODEL_AVAILABLE {
        eprintln!("SKIPPED: rtl-blocks-sim was built without Verilator (no models)");
        return true;
    }
    false
}
