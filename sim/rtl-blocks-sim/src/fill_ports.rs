//! The ports `qpc_fill` and `qp_ctx_cache` share, for their benches
//! ([`crate::qpc_fill`], [`crate::qp_ctx_cache`]): the host table's place,
//! the record port (slot-indexed record reads and writes), the buffer port
//! and the DMA descriptors and statuses. Their fields, their packing into
//! the port structs (csrc/blocks.cpp lays them out the same way in both
//! blocks, from a word and a bit that differ), the checks every DMA
//! descriptor gets, and the record port's answers in order.
//!
//! The two benches' DMA and host-table models stay their own: they check
//! different things (the fill engine's buffers and hazards; the cache's
//! records end to end) and draw their latencies, errors and statuses
//! differently.

use crate::{PortsIn, PortsOut};
use rand::Rng;
use rand_chacha::ChaCha8Rng;
use std::collections::VecDeque;

/// The low `w` bits set (w <= 64).
pub(crate) fn msk(w: u32) -> u64 {
    if w >= 64 {
        u64::MAX
    } else {
        (1u64 << w) - 1
    }
}

/// Where the shared ports sit in the port structs: the inputs' data from
/// word `in_word` of `s_data` and valids from bit `in_bit` of `s_valid`,
/// the outputs' data from word `out_word` of `m_data` and valids from bit
/// `out_bit` of `m_valid`; the widths the inputs are masked to.
#[derive(Clone, Copy)]
pub(crate) struct Layout {
    pub qpn_w: u32,
    pub id_w: u32,
    pub in_word: usize,
    pub in_bit: u32,
    pub out_word: usize,
    pub out_bit: u32,
}

/// The shared inputs of one cycle.
#[derive(Debug, Clone, Default)]
pub(crate) struct FillPortsIn {
    pub base: u64,
    pub qps: u32,
    pub rec_rd_ready: bool,
    pub rec_rd_data_valid: bool,
    pub rec_rd_data: u64,
    pub rec_wr_ready: bool,
    pub buf_rd_data: u64,
    pub buf_wr_ready: bool,
    pub buf_rd_ready: bool,
    pub rd_desc_ready: bool,
    pub rd_status_valid: bool,
    pub rd_status_id: u32,
    pub rd_status_error: u32,
    pub wr_desc_ready: bool,
    pub wr_status_valid: bool,
}

impl FillPortsIn {
    /// Every field but the table's random (the peeks' other inputs).
    pub fn random(junk: &mut ChaCha8Rng, base: u64, qps: u32) -> Self {
        Self {
            base,
            qps,
            rec_rd_ready: junk.gen(),
            rec_rd_data_valid: junk.gen(),
            rec_rd_data: junk.gen(),
            rec_wr_ready: junk.gen(),
            buf_rd_data: junk.gen(),
            buf_wr_ready: junk.gen(),
            buf_rd_ready: junk.gen(),
            rd_desc_ready: junk.gen(),
            rd_status_valid: junk.gen(),
            rd_status_id: junk.gen(),
            rd_status_error: junk.gen(),
            wr_desc_ready: junk.gen(),
            wr_status_valid: junk.gen(),
        }
    }

    /// Into `o`: the table in words 0..2 (qps masked to QPN_W + 1 bits),
    /// the record and buffer read data and the read status's id from
    /// `l.in_word`, the valids and readies from `l.in_bit`, the read
    /// status's error in `s_last`.
    pub fn pack(&self, l: &Layout, o: &mut PortsIn) {
        let d = &mut o.s_data;
        let w = l.in_word;
        d[0] = self.base as u32;
        d[1] = (self.base >> 32) as u32;
        d[2] = (u64::from(self.qps) & msk(l.qpn_w + 1)) as u32;
        d[w] = self.rec_rd_data as u32;
        d[w + 1] = (self.rec_rd_data >> 32) as u32;
        d[w + 2] = self.buf_rd_data as u32;
        d[w + 3] = (self.buf_rd_data >> 32) as u32;
        d[w + 4] = (u64::from(self.rd_status_id) & msk(l.id_w)) as u32;
        o.s_valid |= (self.rec_rd_ready as u32
            | (self.rec_rd_data_valid as u32) << 1
            | (self.rec_wr_ready as u32) << 2
            | (self.rd_desc_ready as u32) << 3
            | (self.rd_status_valid as u32) << 4
            | (self.wr_desc_ready as u32) << 5
            | (self.wr_status_valid as u32) << 6
            | (self.buf_wr_ready as u32) << 7
            | (self.buf_rd_ready as u32) << 8)
            << l.in_bit;
        o.s_last = self.rd_status_error & 0xf;
    }
}

/// The shared outputs of one cycle.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct FillPortsOut {
    pub rec_rd_valid: bool,
    pub rec_rd_slot: u32,
    pub rec_rd_word: u32,
    pub rec_wr_valid: bool,
    pub rec_wr_slot: u32,
    pub rec_wr_word: u32,
    pub rec_wr_data: u64,
    pub buf_wr_en: bool,
    pub buf_wr_addr: u32,
    pub buf_wr_data: u64,
    pub buf_rd_en: bool,
    pub buf_rd_addr: u32,
    pub rd_valid: bool,
    pub rd_addr: u64,
    pub rd_ram: u32,
    pub rd_len: u32,
    pub rd_id: u32,
    pub wr_valid: bool,
    pub wr_addr: u64,
    pub wr_ram: u32,
    pub wr_len: u32,
}

impl FillPortsOut {
    /// From `o`: the data from word `l.out_word` of `m_data`, the valids
    /// from bit `l.out_bit` of `m_valid`.
    pub fn unpack(l: &Layout, o: &PortsOut) -> Self {
        let w = l.out_word;
        let d = &o.m_data[w..];
        let q = |i: usize| u64::from(d[i]) | u64::from(d[i + 1]) << 32;
        let v = |b: u32| (o.m_valid >> (l.out_bit + b)) & 1 != 0;
        Self {
            rec_rd_valid: v(0),
            rec_rd_slot: d[0],
            rec_rd_word: d[1],
            rec_wr_valid: v(1),
            rec_wr_slot: d[2],
            rec_wr_word: d[3],
            rec_wr_data: q(4),
            buf_wr_en: v(2),
            buf_wr_addr: d[6],
            buf_wr_data: q(7),
            buf_rd_en: v(3),
            buf_rd_addr: d[9],
            rd_valid: v(4),
            rd_addr: q(10),
            rd_ram: d[12],
            rd_len: d[13],
            rd_id: d[14],
            wr_valid: v(5),
            wr_addr: q(15),
            wr_ram: d[17],
            wr_len: d[18],
        }
    }
}

/// The buffer port's requests the block showed last cycle and that were
/// not taken (their ready low): each must be shown again, unchanged,
/// until it is taken (the staging RAM's ports hold the fill engine off
/// while the DMA engines use them).
#[derive(Debug, Default)]
pub(crate) struct BufHold {
    wr: Option<(u32, u64)>,
    rd: Option<u32>,
}

impl BufHold {
    /// This cycle's outputs `o` and inputs `i`: an error if a request held
    /// since last cycle was dropped or changed.
    pub fn check(&mut self, o: &FillPortsOut, i: &FillPortsIn) -> Result<(), String> {
        if let Some((a, d)) = self.wr {
            if !o.buf_wr_en || (o.buf_wr_addr, o.buf_wr_data) != (a, d) {
                return Err(format!(
                    "a buffer write of {d:#x} at {a:#x}, not taken, was dropped or changed \
                     (now: en {} at {:#x}, {:#x})",
                    o.buf_wr_en, o.buf_wr_addr, o.buf_wr_data
                ));
            }
        }
        if let Some(a) = self.rd {
            if !o.buf_rd_en || o.buf_rd_addr != a {
                return Err(format!(
                    "a buffer read at {a:#x}, not taken, was dropped or changed \
                     (now: en {} at {:#x})",
                    o.buf_rd_en, o.buf_rd_addr
                ));
            }
        }
        self.wr = (o.buf_wr_en && !i.buf_wr_ready).then_some((o.buf_wr_addr, o.buf_wr_data));
        self.rd = (o.buf_rd_en && !i.buf_rd_ready).then_some(o.buf_rd_addr);
        Ok(())
    }

    /// A reset drops the held requests.
    pub fn clear(&mut self) {
        *self = Self::default();
    }
}

/// Where the records are: the host table (`base`, `qps` records of
/// `rec_bytes`) and the record buffers' halves in the RAM (`areas` of
/// `rec_bytes` from `buf_base`: a fill's buffer is a write-back half and
/// a read half, so `areas` is twice the fills in flight).
#[derive(Clone, Copy)]
pub(crate) struct Places {
    pub base: u64,
    pub qps: u32,
    pub rec_bytes: u64,
    pub buf_base: u32,
    pub areas: usize,
}

impl Places {
    /// The buffer half a RAM address range starts, if it starts one.
    pub fn buf_of(&self, a: u32) -> Option<usize> {
        let off = u64::from(a.checked_sub(self.buf_base)?);
        let rb = self.rec_bytes;
        (off % rb == 0 && off / rb < self.areas as u64).then_some((off / rb) as usize)
    }

    /// The checks every DMA descriptor gets: its host address a whole
    /// record of the table, its length one record, its RAM address a
    /// buffer. The QP and the buffer, or what is wrong.
    pub fn check_desc(&self, d: &Desc) -> Result<(u32, usize), String> {
        let rb = self.rec_bytes;
        let off = d.addr.wrapping_sub(self.base);
        let q = off / rb;
        if d.addr < self.base || off % rb != 0 || q >= u64::from(self.qps) {
            return Err(format!(
                "a {} at host {:#x}, outside the table [{:#x}, +{}) or not a record",
                d.what,
                d.addr,
                self.base,
                u64::from(self.qps) * rb
            ));
        }
        if u64::from(d.len) != rb {
            return Err(format!(
                "a {} of QP {q}: {} bytes, the record has {rb}",
                d.what, d.len
            ));
        }
        let Some(b) = self.buf_of(d.ram) else {
            return Err(format!(
                "a {} of QP {q} {} RAM {:#x}, not a buffer",
                d.what, d.dir, d.ram
            ));
        };
        Ok((q as u32, b))
    }
}

/// A DMA descriptor the block gave, for [`Places::check_desc`].
pub(crate) struct Desc {
    /// for the failures: "write-back" or "read", and the RAM address's
    /// preposition, "from" or "into"
    pub what: &'static str,
    pub dir: &'static str,
    pub addr: u64,
    pub len: u32,
    pub ram: u32,
}

impl Desc {
    /// The write descriptor of `o` (valid or not).
    pub fn write_back(o: &FillPortsOut) -> Self {
        Self {
            what: "write-back",
            dir: "from",
            addr: o.wr_addr,
            len: o.wr_len,
            ram: o.wr_ram,
        }
    }

    /// The read descriptor of `o` (valid or not).
    pub fn read(o: &FillPortsOut) -> Self {
        Self {
            what: "read",
            dir: "into",
            addr: o.rd_addr,
            len: o.rd_len,
            ram: o.rd_ram,
        }
    }
}

/// The record port's read answers, in order: each due a latency after its
/// read and at least a cycle after the one before, one a cycle.
#[derive(Default)]
pub(crate) struct RecAnswers {
    q: VecDeque<(u64, u64)>,
}

impl RecAnswers {
    /// A read at cycle `now` answered with `data` `lat` cycles later, or
    /// the cycle after the answer before it.
    pub fn push(&mut self, now: u64, lat: u64, data: u64) {
        let due = self
            .q
            .back()
            .map_or(now + lat, |&(d, _)| (now + lat).max(d + 1));
        self.q.push_back((due, data));
    }

    /// The answer due at cycle `now`, if any.
    pub fn pop(&mut self, now: u64) -> Option<u64> {
        if self.q.front().is_some_and(|&(due, _)| due <= now) {
            self.q.pop_front().map(|(_, d)| d)
        } else {
            None
        }
    }

    pub fn clear(&mut self) {
        self.q.clear();
    }

    pub fn is_empty(&self) -> bool {
        self.q.is_empty()
    }
}
