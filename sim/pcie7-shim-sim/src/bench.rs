//! Test bench for the TRN shim: a model of the PCIE_2_1 block's TRN side
//! (receive beats with SOF/EOF/REM, 128-bit straddling, source stalls,
//! discontinue; transmit with DSTRDY back-pressure, a transmit-buffer count,
//! configuration-completion requests; the MSI handshake) and of rnic_core's
//! side (TLP streams with gaps and back-pressure), with checks of every beat
//! and of every byte that comes out.
//!
//! Byte order, as the shim's header comment states it: on TRN a payload
//! dword carries wire byte 0 in bits 31:24; at the core it is in bits 7:0.
//! Payloads here are byte vectors (wire order), so both sides are built
//! from the same bytes and compared as bytes.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::{Model, PortsIn, PortsOut};

pub const TYPE_MEM: u32 = 0b0_0000;
pub const TYPE_MEM_LOCKED: u32 = 0b0_0001;
pub const TYPE_IO: u32 = 0b0_0010;
pub const TYPE_CFG0: u32 = 0b0_0100;
pub const TYPE_CPL: u32 = 0b0_1010;
pub const TYPE_MSG_RC: u32 = 0b1_0000;

/// A TLP as the core sees it: header dwords (index = DW number, DW3 zero
/// for a 3DW header) and payload bytes in wire order (a multiple of 4).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Tlp {
    pub hdr: [u32; 4],
    pub data: Vec<u8>,
}

impl Tlp {
    pub fn is_4dw(&self) -> bool {
        self.hdr[0] & (1 << 29) != 0
    }
    pub fn has_data(&self) -> bool {
        self.hdr[0] & (1 << 30) != 0
    }
    pub fn hdr_dws(&self) -> usize {
        if self.is_4dw() {
            4
        } else {
            3
        }
    }
    /// Payload length from the header, in dwords.
    pub fn len_dw(&self) -> usize {
        if !self.has_data() {
            return 0;
        }
        let l = (self.hdr[0] & 0x3ff) as usize;
        if l == 0 {
            1024
        } else {
            l
        }
    }

    /// DW0 from its fields.
    pub fn dw0(fmt: u32, typ: u32, len_dw: usize) -> u32 {
        (fmt << 29) | (typ << 24) | (len_dw as u32 & 0x3ff)
    }

    /// MemRd / MemWr: 4DW header when `addr` is at or above 4 GiB.
    pub fn mem(
        write: bool,
        addr: u64,
        len_dw: usize,
        req_id: u16,
        tag: u8,
        rng: &mut ChaCha8Rng,
    ) -> Tlp {
        let four = addr >= 1 << 32;
        let fmt = u32::from(four) | (u32::from(write) << 1);
        let (fbe, lbe) = if len_dw == 1 { (0xf, 0) } else { (0xf, 0xf) };
        let dw1 = (u32::from(req_id) << 16) | (u32::from(tag) << 8) | (lbe << 4) | fbe;
        let hdr = if four {
            [
                Self::dw0(fmt, TYPE_MEM, len_dw),
                dw1,
                (addr >> 32) as u32,
                addr as u32 & !3,
            ]
        } else {
            [Self::dw0(fmt, TYPE_MEM, len_dw), dw1, addr as u32 & !3, 0]
        };
        let data = if write {
            (0..len_dw * 4).map(|_| rng.gen()).collect()
        } else {
            Vec::new()
        };
        Tlp { hdr, data }
    }

    /// CplD with `len_dw` dwords (or Cpl without data when 0).
    pub fn cpl(len_dw: usize, req_id: u16, tag: u8, lower: u8, rng: &mut ChaCha8Rng) -> Tlp {
        let fmt = if len_dw > 0 { 0b010 } else { 0b000 };
        let hdr = [
            Self::dw0(fmt, TYPE_CPL, len_dw),
            (0x0100 << 16) | ((len_dw as u32 * 4) & 0xfff),
            (u32::from(req_id) << 16) | (u32::from(tag) << 8) | u32::from(lower & 0x7f),
            0,
        ];
        let data = (0..len_dw * 4).map(|_| rng.gen()).collect();
        Tlp { hdr, data }
    }

    /// Dwords on TRN: header as numbers, payload dwords with wire byte 0 in
    /// bits 31:24.
    pub fn wire(&self) -> Vec<u32> {
        let mut v: Vec<u32> = self.hdr[..self.hdr_dws()].to_vec();
        v.extend(
            self.data
                .chunks(4)
                .map(|c| u32::from_be_bytes([c[0], c[1], c[2], c[3]])),
        );
        v
    }

    /// Rebuild from TRN dwords (header length from Fmt; the rest payload).
    pub fn from_wire(w: &[u32]) -> Tlp {
        let four = w[0] & (1 << 29) != 0;
        let h = if four { 4 } else { 3 };
        let mut hdr = [0u32; 4];
        hdr[..h].copy_from_slice(&w[..h]);
        let data = w[h..].iter().flat_map(|d| d.to_be_bytes()).collect();
        Tlp { hdr, data }
    }
}

/// Where a received TLP must end up.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RxExpect {
    Req,
    Cpl,
    Drop,
}

/// A TLP the block model hands to the shim.
#[derive(Clone, Debug)]
pub struct RxItem {
    pub tlp: Tlp,
    pub bar_hit: u8,
    pub errfwd: bool,
    /// Extra dword after the payload (TD=1 in the header).
    pub digest: Option<u32>,
    /// Discontinue on this beat of the TLP (1 = its first beat).
    pub cut_on_beat: Option<usize>,
    /// Send one beat without SOF (outside any TLP) before this TLP.
    pub stray_before: bool,
    pub expect: RxExpect,
}

impl RxItem {
    pub fn new(tlp: Tlp, expect: RxExpect) -> Self {
        RxItem {
            tlp,
            bar_hit: 0x01,
            errfwd: false,
            digest: None,
            cut_on_beat: None,
            stray_before: false,
            expect,
        }
    }
}

/// A TLP the core model presents on one of its transmit channels.
#[derive(Clone, Debug)]
pub struct TxItem {
    pub tlp: Tlp,
    /// Cycle from which the core presents it (after the one before it).
    pub at: u64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Chan {
    Cpl,
    Rd,
    Wr,
}

/// Knobs of a run.
#[derive(Clone, Debug)]
pub struct Config {
    pub data_w: u32,
    pub seed: u64,
    /// Probability that the block inserts an idle cycle on receive.
    pub rx_gap: f64,
    /// Probability that the core side is not ready for a receive beat.
    pub rx_stall: f64,
    /// 128-bit: probability of starting the next TLP in slot 2 right after
    /// one that ended in slot 0 or 1 (straddle).
    pub straddle: f64,
    /// 128-bit: probability of a lone SOF in slot 2 (no EOF before it).
    pub late_sof: f64,
    /// Probability that the core side leaves a gap inside its stream.
    pub tx_gap: f64,
    /// Probability that the block holds TRNTDSTRDY low in a cycle.
    pub tx_stall: f64,
    /// Transmit buffers and the chance per cycle that one frees up.
    pub tbuf_max: u8,
    pub tbuf_drain: f64,
    /// TRNTBUFAV reads 0 until this cycle (nothing may start).
    pub tbuf_zero_until: u64,
    /// Chance per idle cycle that the block asks to send a config completion.
    pub tcfg_rate: f64,
    pub msi_enable: bool,
    pub mm_enable: u8,
    pub cycles: u64,
}

impl Config {
    pub fn new(data_w: u32, seed: u64) -> Self {
        Config {
            data_w,
            seed,
            rx_gap: 0.2,
            rx_stall: 0.2,
            straddle: 0.7,
            late_sof: 0.1,
            tx_gap: 0.15,
            tx_stall: 0.25,
            tbuf_max: 28,
            tbuf_drain: 0.5,
            tbuf_zero_until: 0,
            tcfg_rate: 0.0,
            msi_enable: true,
            mm_enable: 5,
            cycles: 200_000,
        }
    }
}

/// What a run produced, for the test's own checks.
#[derive(Debug, Default)]
pub struct Report {
    /// Received TLPs in arrival order: (true = rx_cpl, TLP).
    pub rx: Vec<(bool, Tlp)>,
    /// Transmitted TLPs in TRN order: (channel, index on that channel, cycle of EOF).
    pub tx: Vec<(Chan, usize, u64)>,
    pub tx_tlps: Vec<Tlp>,
    /// MSIs the block took: (CFGINTERRUPTDI, first cycle of CFGINTERRUPT).
    pub msi: Vec<(u8, u64)>,
    pub stats: [u32; 4],
    pub cycles: u64,
    pub tcfg_grants: usize,
    /// SOF slot of each received TLP as the block model sent it.
    pub sof_slots: Vec<usize>,
    pub out: PortsOut,
}

/// A failed check, with the cycle it was seen.
#[derive(Debug)]
pub struct Fail(pub String);

macro_rules! check {
    ($cond:expr, $($arg:tt)*) => {
        if !$cond {
            return Err(Fail(format!($($arg)*)));
        }
    };
}

// ---------------------------------------------------------------------------
// block side, receive

#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct RxBeat {
    pub(crate) rd: [u32; 4],
    pub(crate) rem: u8,
    pub(crate) sof: bool,
    pub(crate) eof: bool,
    pub(crate) bar: u8,
    pub(crate) errfwd: bool,
    pub(crate) dsc: bool,
}

struct RxCur {
    idx: usize,
    wire: Vec<u32>,
    pos: usize,
    beats: usize,
}

/// The block's receive side: builds the TRN beats of a list of TLPs (also
/// used by the card bench, src/card.rs).
pub(crate) struct BlockRx {
    w: usize,
    items: Vec<RxItem>,
    next: usize,
    cur: Option<RxCur>,
    /// The beat presented and not yet taken.
    pub(crate) held: Option<RxBeat>,
    /// (m, n) per item cut: dwords before the cut beat, dwords sent in all.
    cut_info: Vec<Option<(usize, usize)>>,
    /// SOF slot of each TLP as sent.
    sof_slots: Vec<usize>,
    strays_sent: u32,
    stray_done: bool,
}

pub(crate) fn slot_word(w: usize, k: usize) -> usize {
    w - 1 - k
}

impl BlockRx {
    /// An empty sender for a TRN of `w` dwords.
    pub(crate) fn new(w: usize) -> Self {
        BlockRx {
            w,
            items: Vec::new(),
            next: 0,
            cur: None,
            held: None,
            cut_info: Vec::new(),
            sof_slots: Vec::new(),
            strays_sent: 0,
            stray_done: false,
        }
    }

    /// Queue one more TLP behind the ones given so far.
    pub(crate) fn push(&mut self, item: RxItem) {
        self.items.push(item);
        self.cut_info.push(None);
        self.sof_slots.push(0);
    }

    /// Every TLP queued has been presented and taken.
    pub(crate) fn idle(&self) -> bool {
        self.next >= self.items.len() && self.cur.is_none() && self.held.is_none()
    }

    /// TLPs taken whole (the last beat of each accepted).
    pub(crate) fn taken(&self) -> usize {
        self.next - usize::from(self.cur.is_some() || self.held.is_some())
    }

    /// TLPs whose first beat (SOF) was accepted.
    pub(crate) fn started(&self) -> usize {
        self.next - usize::from(self.held.as_ref().is_some_and(|b| b.sof))
    }

    /// The next beat to present (None: nothing to send).
    pub(crate) fn build(&mut self, rng: &mut ChaCha8Rng, cfg: &Config) -> Option<RxBeat> {
        let w = self.w;
        let mut slots: Vec<Option<u32>> = vec![None; w];
        let mut sof_slot = None;
        let mut eof_slot = None;
        let mut dsc = false;
        let mut owner_bar = 0u8;
        let mut owner_err = false;
        let mut k = 0usize;
        if self.cur.is_none() {
            if self.next >= self.items.len() {
                return None;
            }
            if self.items[self.next].stray_before && !self.stray_done {
                self.stray_done = true;
                self.strays_sent += 1;
                let rd = [rng.gen(), rng.gen(), rng.gen(), rng.gen()];
                return Some(RxBeat {
                    rd,
                    rem: rng.gen_range(0..4),
                    sof: false,
                    eof: rng.gen_bool(0.5),
                    bar: 1,
                    errfwd: false,
                    dsc: false,
                });
            }
            let start = if w == 4 && rng.gen_bool(cfg.late_sof) {
                2
            } else {
                0
            };
            self.start_next(start, &mut sof_slot);
            k = start;
        }
        {
            let cur = self.cur.as_mut().unwrap();
            let item = &self.items[cur.idx];
            if sof_slot.is_some() || k == 0 {
                owner_bar = item.bar_hit;
                owner_err = item.errfwd;
            }
            // a cut comes on a beat after the SOF beat (on the SOF beat REM
            // could not say where the TLP starts and where it was cut)
            let cut_here = item.cut_on_beat == Some(cur.beats + 1) && cur.beats > 0;
            let pos0 = cur.pos;
            while k < w && cur.pos < cur.wire.len() {
                slots[k] = Some(cur.wire[cur.pos]);
                cur.pos += 1;
                k += 1;
            }
            cur.beats += 1;
            if cur.pos == cur.wire.len() || cut_here {
                eof_slot = Some(k - 1);
                if cut_here {
                    dsc = true;
                    self.cut_info[cur.idx] = Some((pos0, cur.pos));
                }
                self.cur = None;
                // straddle: the next TLP starts in slot 2 of the same beat
                if w == 4
                    && k <= 2
                    && !dsc
                    && sof_slot.is_none()
                    && self.next < self.items.len()
                    && rng.gen_bool(cfg.straddle)
                {
                    k = 2;
                    self.start_next(2, &mut sof_slot);
                    let item = &self.items[self.cur.as_ref().unwrap().idx];
                    owner_bar = item.bar_hit;
                    owner_err = item.errfwd;
                    let cur = self.cur.as_mut().unwrap();
                    while k < w && cur.pos < cur.wire.len() {
                        slots[k] = Some(cur.wire[cur.pos]);
                        cur.pos += 1;
                        k += 1;
                    }
                    cur.beats += 1;
                }
            }
        }
        let mut rd = [0u32; 4];
        for (s, v) in slots.iter().enumerate() {
            rd[slot_word(w, s)] = v.unwrap_or_else(|| rng.gen());
        }
        let rem = if w == 4 {
            match (sof_slot, eof_slot) {
                (_, Some(e)) => e as u8,
                (Some(0), None) => 0b10 | rng.gen_range(0..2),
                (Some(_), None) => rng.gen_range(0..2),
                (None, None) => rng.gen_range(0..4),
            }
        } else {
            let r0 = match eof_slot {
                Some(e) => e as u8,
                None => rng.gen_range(0..2),
            };
            (rng.gen_range(0..2) << 1) | r0
        };
        Some(RxBeat {
            rd,
            rem,
            sof: sof_slot.is_some(),
            eof: eof_slot.is_some(),
            bar: owner_bar,
            errfwd: owner_err,
            dsc,
        })
    }

    fn start_next(&mut self, slot: usize, sof_slot: &mut Option<usize>) {
        let idx = self.next;
        self.next += 1;
        self.stray_done = false;
        self.sof_slots[idx] = slot;
        let item = &self.items[idx];
        let mut wire = item.tlp.wire();
        if let Some(d) = item.digest {
            wire.push(d);
        }
        self.cur = Some(RxCur {
            idx,
            wire,
            pos: 0,
            beats: 0,
        });
        *sof_slot = Some(slot);
    }
}

// ---------------------------------------------------------------------------
// core side, receive

/// A receive beat the core side saw but did not take: (data lanes, keep,
/// last, header).
type HeldBeat = (Vec<u32>, u32, bool, [u32; 4]);

#[derive(Default)]
struct CoreRx {
    cur: [Option<(Tlp, Vec<u8>)>; 2],
    held: [Option<HeldBeat>; 2],
    got: Vec<(bool, Tlp)>,
}

impl CoreRx {
    #[allow(clippy::too_many_arguments)]
    fn beat(
        &mut self,
        w: usize,
        ch: usize,
        valid: bool,
        ready: bool,
        hdr: [u32; 4],
        data: &[u32],
        keep: u32,
        last: bool,
    ) -> Result<(), Fail> {
        let name = if ch == 1 { "rx_cpl" } else { "rx_req" };
        if let Some((d, k, l, h)) = self.held[ch].take() {
            check!(valid, "{name}: valid dropped before ready");
            check!(
                d[..w] == data[..w] && k == keep && l == last && h == hdr,
                "{name}: beat changed while waiting for ready"
            );
        }
        if !valid {
            return Ok(());
        }
        if !ready {
            self.held[ch] = Some((data.to_vec(), keep, last, hdr));
            return Ok(());
        }
        let full = (1u32 << w) - 1;
        check!(
            keep & !full == 0 && keep & keep.wrapping_add(1) == 0,
            "{name}: keep {keep:#x} not contiguous from lane 0"
        );
        if !last {
            check!(
                keep == full,
                "{name}: keep {keep:#x} on a beat before the last"
            );
        }
        match &mut self.cur[ch] {
            Some((t, bytes)) => {
                check!(t.hdr == hdr, "{name}: header changed inside a TLP");
                for d in &data[..keep.count_ones() as usize] {
                    bytes.extend_from_slice(&d.to_le_bytes());
                }
            }
            None => {
                let mut bytes = Vec::new();
                for d in &data[..keep.count_ones() as usize] {
                    bytes.extend_from_slice(&d.to_le_bytes());
                }
                self.cur[ch] = Some((
                    Tlp {
                        hdr,
                        data: Vec::new(),
                    },
                    bytes,
                ));
            }
        }
        if last {
            let (mut t, bytes) = self.cur[ch].take().unwrap();
            t.data = bytes;
            self.got.push((ch == 1, t));
        }
        Ok(())
    }
}

// ---------------------------------------------------------------------------
// core side, transmit

struct CoreTx {
    chan: Chan,
    items: Vec<TxItem>,
    next: usize,
    beat: usize,
    /// cycle the current TLP's valid rose (None = not presented yet)
    rise: Vec<Option<u64>>,
    ready_at: u64,
    presenting: bool,
}

impl CoreTx {
    fn new(chan: Chan, items: Vec<TxItem>) -> Self {
        let n = items.len();
        CoreTx {
            chan,
            items,
            next: 0,
            beat: 0,
            rise: vec![None; n],
            ready_at: 0,
            presenting: false,
        }
    }

    fn beats_of(t: &Tlp, w: usize) -> usize {
        (t.data.len() / 4).div_ceil(w).max(1)
    }

    /// Drive this cycle: (valid, hdr, data lanes, keep, last).
    fn drive(&mut self, now: u64, w: usize, gap: bool) -> (bool, [u32; 4], [u32; 4], u32, bool) {
        let mut data = [0u32; 4];
        if self.next >= self.items.len() {
            return (false, [0; 4], data, 0, false);
        }
        let item = &self.items[self.next];
        if !self.presenting {
            if now < item.at.max(self.ready_at) || gap {
                return (false, [0; 4], data, 0, false);
            }
            self.presenting = true;
            if self.beat == 0 && self.rise[self.next].is_none() {
                self.rise[self.next] = Some(now);
            }
        }
        let t = &item.tlp;
        let ndw = t.data.len() / 4;
        let mut keep = 0u32;
        for (l, d) in data.iter_mut().enumerate().take(w) {
            let i = self.beat * w + l;
            if i < ndw {
                let b = &t.data[4 * i..4 * i + 4];
                *d = u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
                keep |= 1 << l;
            }
        }
        let last = self.beat + 1 == Self::beats_of(t, w);
        (true, t.hdr, data, keep, last)
    }

    fn accepted(&mut self, now: u64, w: usize) {
        self.presenting = false;
        let t = &self.items[self.next].tlp;
        self.beat += 1;
        if self.beat == Self::beats_of(t, w) {
            self.beat = 0;
            self.next += 1;
            self.ready_at = now + 1;
        }
    }

    fn done(&self) -> bool {
        self.next >= self.items.len()
    }
}

// ---------------------------------------------------------------------------
// the run

/// Everything a run is given.
pub struct Scenario {
    pub cfg: Config,
    pub rx: Vec<RxItem>,
    pub tx_cpl: Vec<TxItem>,
    pub tx_rd: Vec<TxItem>,
    pub tx_wr: Vec<TxItem>,
    /// (vector, cycle from which the core asks)
    pub msi: Vec<(u8, u64)>,
    /// Config values presented (max payload, max read request, requester id).
    pub cfg_vals: (u8, u8, u16),
}

impl Scenario {
    pub fn new(cfg: Config) -> Self {
        Scenario {
            cfg,
            rx: Vec::new(),
            tx_cpl: Vec::new(),
            tx_rd: Vec::new(),
            tx_wr: Vec::new(),
            msi: Vec::new(),
            cfg_vals: (1, 2, 0x0300),
        }
    }
}

fn lanes_of(words: &[u32; 4], w: usize) -> Vec<u32> {
    words[..w].to_vec()
}

const RESET_CYCLES: u64 = 6;

/// Run a scenario and check everything the bench can check on its own
/// (protocol rules, ordering, exact contents against the expectations in
/// the scenario). Returns the report for further checks.
pub fn run(sc: &Scenario) -> Result<Report, Fail> {
    let cfg = &sc.cfg;
    let w = (cfg.data_w / 32) as usize;
    let mut model = Model::new(cfg.data_w, cfg.seed as u32 | 1).map_err(Fail)?;
    let mut rng = ChaCha8Rng::seed_from_u64(cfg.seed);
    let tbuf_min: u8 = if w == 4 { 5 } else { 1 };

    let mut brx = BlockRx {
        w,
        items: sc.rx.clone(),
        next: 0,
        cur: None,
        held: None,
        cut_info: vec![None; sc.rx.len()],
        sof_slots: vec![0; sc.rx.len()],
        strays_sent: 0,
        stray_done: false,
    };
    let mut crx = CoreRx::default();
    let mut ctx = [
        CoreTx::new(Chan::Cpl, sc.tx_cpl.clone()),
        CoreTx::new(Chan::Rd, sc.tx_rd.clone()),
        CoreTx::new(Chan::Wr, sc.tx_wr.clone()),
    ];
    let mut msi_next = 0usize;
    let mut msi_rise: Vec<Option<u64>> = vec![None; sc.msi.len()];

    let mut rep = Report::default();
    // block transmit side
    let mut tx_held: Option<([u32; 4], u8, bool, bool)> = None;
    let mut tx_in_tlp = false;
    let mut tx_words: Vec<u32> = Vec::new();
    let mut tbuf = cfg.tbuf_max;
    let mut sof_seen_cycle: Option<u64> = None;
    // configuration completion: 0 idle, 1 requested, 2 latency after the
    // grant, 3 the block sends (TRNTDSTRDY low), 4 done (TRNTDSTRDY rises)
    let mut tcfg_state: u32 = 0;
    let mut tcfg_busy_left: u32 = 0;
    // MSI handshake
    let mut int_seen: Option<(u8, u64, u32)> = None; // (di, first cycle, rdy delay)
    let mut core_msi_presenting = false;

    let mut drained_since = 0u64;
    let mut tail = 0u32;
    let mut cycle = 0u64;
    while cycle < cfg.cycles {
        let rst = cycle < RESET_CYCLES;
        let mut i = PortsIn {
            rst: u8::from(rst),
            trn_lnk_up: 1,
            cfg_interrupt_msienable: u8::from(cfg.msi_enable),
            cfg_interrupt_mmenable: cfg.mm_enable,
            cfg_dev_control_max_payload: sc.cfg_vals.0,
            cfg_dev_control_max_read_req: sc.cfg_vals.1,
            ..PortsIn::default()
        };
        // requester id on CFGMSGDATA unless a message is being reported
        if rng.gen_bool(0.05) {
            i.cfg_msg_received = 1;
            i.cfg_msg_data = rng.gen();
        } else {
            i.cfg_msg_data = sc.cfg_vals.2;
        }

        // ---- block receive: present a beat
        if !rst {
            if brx.held.is_none() && !rng.gen_bool(cfg.rx_gap) {
                brx.held = brx.build(&mut rng, cfg);
            }
            if let Some(b) = &brx.held {
                i.trn_rd = b.rd;
                i.trn_rrem = b.rem;
                i.trn_rsof = u8::from(b.sof);
                i.trn_reof = u8::from(b.eof);
                i.trn_rsrc_rdy = 1;
                i.trn_rbar_hit = b.bar;
                i.trn_rerrfwd = u8::from(b.errfwd);
                i.trn_rsrc_dsc = u8::from(b.dsc);
            } else {
                i.trn_rd = [rng.gen(), rng.gen(), rng.gen(), rng.gen()];
                i.trn_rsof = rng.gen_range(0..2);
                i.trn_reof = rng.gen_range(0..2);
            }
        }
        let rx_ready = [!rng.gen_bool(cfg.rx_stall), !rng.gen_bool(cfg.rx_stall)];
        i.rx_req_ready = u8::from(rx_ready[0]);
        i.rx_cpl_ready = u8::from(rx_ready[1]);

        // ---- block transmit side inputs
        i.trn_tbuf_av = if cycle < cfg.tbuf_zero_until { 0 } else { tbuf };
        i.trn_tdst_rdy = u8::from(i.trn_tbuf_av > 0 && !rng.gen_bool(cfg.tx_stall));
        if tcfg_state == 3 {
            i.trn_tdst_rdy = 0;
        } else if tcfg_state == 4 {
            i.trn_tdst_rdy = 1;
        }
        i.trn_tcfg_req = u8::from(tcfg_state == 1);
        if !rst && tcfg_state == 0 && rng.gen_bool(cfg.tcfg_rate) {
            tcfg_state = 1;
            i.trn_tcfg_req = 1;
        }
        i.cfg_interrupt_rdy = 0;
        if let Some((_, t0, d)) = int_seen {
            if cycle >= t0 + u64::from(d) {
                i.cfg_interrupt_rdy = 1;
            }
        }

        // ---- core transmit side inputs
        if !rst {
            for c in ctx.iter_mut() {
                let gap = rng.gen_bool(cfg.tx_gap);
                let (v, h, d, k, l) = c.drive(cycle, w, gap);
                match c.chan {
                    Chan::Cpl => {
                        i.tx_cpl_valid = u8::from(v);
                        i.tx_cpl_hdr = h;
                        i.tx_cpl_data = d;
                        i.tx_cpl_keep = k;
                        i.tx_cpl_last = u8::from(l);
                    }
                    Chan::Rd => {
                        i.tx_rd_req_valid = u8::from(v);
                        i.tx_rd_req_hdr = h;
                    }
                    Chan::Wr => {
                        i.tx_wr_req_valid = u8::from(v);
                        i.tx_wr_req_hdr = h;
                        i.tx_wr_req_data = d;
                        i.tx_wr_req_keep = k;
                        i.tx_wr_req_last = u8::from(l);
                    }
                }
            }
            if msi_next < sc.msi.len() {
                let (v, at) = sc.msi[msi_next];
                if core_msi_presenting || (cycle >= at && !rng.gen_bool(cfg.tx_gap)) {
                    core_msi_presenting = true;
                    i.msi_valid = 1;
                    i.msi_vector = v;
                    if msi_rise[msi_next].is_none() {
                        msi_rise[msi_next] = Some(cycle);
                    }
                }
            }
        }

        // ---- one clock
        let o = model.step(&i);
        check!(
            o.sim_flags == 0,
            "cycle {cycle}: the RTL stopped ($error/$finish)"
        );

        if !rst {
            // ---- block receive: handshake
            if i.trn_rsrc_rdy != 0 && o.trn_rdst_rdy != 0 {
                brx.held = None;
            }
            // ---- core receive
            crx.beat(
                w,
                0,
                o.rx_req_valid != 0,
                rx_ready[0],
                o.rx_req_hdr,
                &lanes_of(&o.rx_req_data, w),
                o.rx_req_keep,
                o.rx_req_last != 0,
            )
            .map_err(|Fail(m)| Fail(format!("cycle {cycle}: {m}")))?;
            crx.beat(
                w,
                1,
                o.rx_cpl_valid != 0,
                rx_ready[1],
                o.rx_cpl_hdr,
                &lanes_of(&o.rx_cpl_data, w),
                o.rx_cpl_keep,
                o.rx_cpl_last != 0,
            )
            .map_err(|Fail(m)| Fail(format!("cycle {cycle}: {m}")))?;

            // ---- block transmit: rules and reassembly
            check!(
                o.trn_tsrc_dsc == 0
                    && o.trn_tstr == 0
                    && o.trn_terrfwd == 0
                    && o.trn_tecrc_gen == 0,
                "cycle {cycle}: TRNTSRCDSC/TSTR/TERRFWD/TECRCGEN must stay low"
            );
            let beat = (o.trn_td, o.trn_trem, o.trn_tsof != 0, o.trn_teof != 0);
            if let Some(h) = tx_held.take() {
                check!(
                    o.trn_tsrc_rdy != 0,
                    "cycle {cycle}: TRNTSRCRDY dropped before TRNTDSTRDY"
                );
                check!(
                    h.0[..w] == beat.0[..w]
                        && h.2 == beat.2
                        && h.3 == beat.3
                        && (!h.3 || h.1 == beat.1),
                    "cycle {cycle}: transmit beat changed while held"
                );
            }
            if o.trn_tsrc_rdy != 0 && beat.2 && sof_seen_cycle.is_none() {
                sof_seen_cycle = Some(cycle);
                check!(
                    i.trn_tbuf_av >= tbuf_min,
                    "cycle {cycle}: a TLP started with TRNTBUFAV {} (floor {tbuf_min})",
                    i.trn_tbuf_av
                );
            }
            if o.trn_tsrc_rdy != 0 && i.trn_tdst_rdy != 0 {
                // accepted
                sof_seen_cycle = None;
                check!(
                    !(tcfg_state >= 2 && beat.2),
                    "cycle {cycle}: SOF accepted while the block owns the link (config grant)"
                );
                if beat.2 {
                    check!(!tx_in_tlp, "cycle {cycle}: SOF inside a TLP");
                    tx_in_tlp = true;
                    tx_words.clear();
                } else {
                    check!(tx_in_tlp, "cycle {cycle}: beat outside a TLP");
                }
                let n = if beat.3 {
                    if w == 4 {
                        beat.1 as usize + 1
                    } else if beat.1 & 1 != 0 {
                        2
                    } else {
                        1
                    }
                } else {
                    w
                };
                for s in 0..n {
                    tx_words.push(beat.0[slot_word(w, s)]);
                }
                if beat.3 {
                    tx_in_tlp = false;
                    check!(
                        tx_words.len() >= 3,
                        "cycle {cycle}: TLP shorter than a header"
                    );
                    let t = Tlp::from_wire(&tx_words);
                    check!(
                        t.data.len() / 4 == t.len_dw(),
                        "cycle {cycle}: TLP with {} payload dwords, header says {}",
                        t.data.len() / 4,
                        t.len_dw()
                    );
                    // which source: the one whose next unsent TLP this is
                    let mut hit = None;
                    for (ci, c) in ctx.iter().enumerate() {
                        let sent = rep.tx.iter().filter(|x| x.0 == c.chan).count();
                        if sent < c.items.len() && c.items[sent].tlp == t {
                            hit = Some((ci, sent));
                        }
                    }
                    let Some((ci, k)) = hit else {
                        return Err(Fail(format!(
                            "cycle {cycle}: transmitted TLP {:08x?} (+{} bytes) is not the next one of any channel",
                            t.hdr,
                            t.data.len()
                        )));
                    };
                    rep.tx.push((ctx[ci].chan, k, cycle));
                    rep.tx_tlps.push(t);
                    tbuf = tbuf.saturating_sub(1);
                }
            } else if o.trn_tsrc_rdy != 0 {
                tx_held = Some(beat);
            }
            if o.trn_tsrc_rdy == 0 && !tx_in_tlp {
                drained_since += 1;
            } else {
                drained_since = 0;
            }
            if tbuf < cfg.tbuf_max && rng.gen_bool(cfg.tbuf_drain) {
                tbuf += 1;
            }

            // ---- configuration completion grant
            if o.trn_tcfg_gnt != 0 {
                check!(
                    tcfg_state == 1,
                    "cycle {cycle}: TRNTCFGGNT without a request"
                );
                check!(!tx_in_tlp, "cycle {cycle}: TRNTCFGGNT inside a TLP");
                check!(
                    o.trn_tsrc_rdy == 0,
                    "cycle {cycle}: TRNTCFGGNT with a beat pending"
                );
                rep.tcfg_grants += 1;
                tcfg_state = 2;
            } else {
                match tcfg_state {
                    2 => {
                        tcfg_state = 3;
                        tcfg_busy_left = rng.gen_range(3..9);
                    }
                    3 => {
                        tcfg_busy_left -= 1;
                        if tcfg_busy_left == 0 {
                            tcfg_state = 4;
                        }
                    }
                    4 => tcfg_state = 0,
                    _ => {}
                }
            }

            // ---- MSI
            if o.cfg_interrupt != 0 {
                match int_seen {
                    None => {
                        check!(
                            o.trn_tsrc_rdy == 0 && !tx_in_tlp,
                            "cycle {cycle}: CFGINTERRUPT raised with transmit beats still pending"
                        );
                        int_seen = Some((o.cfg_interrupt_di, cycle, rng.gen_range(0..6)));
                    }
                    Some((di, _, _)) => {
                        check!(
                            di == o.cfg_interrupt_di,
                            "cycle {cycle}: CFGINTERRUPTDI changed"
                        );
                    }
                }
                if i.cfg_interrupt_rdy != 0 {
                    let (di, t0, _) = int_seen.take().unwrap();
                    rep.msi.push((di, t0));
                }
            } else {
                check!(
                    int_seen.is_none(),
                    "cycle {cycle}: CFGINTERRUPT dropped before RDY"
                );
            }
            if i.msi_valid != 0 && o.msi_ready != 0 {
                core_msi_presenting = false;
                msi_next += 1;
            }

            // ---- core transmit handshakes
            for c in ctx.iter_mut() {
                let (v, r) = match c.chan {
                    Chan::Cpl => (i.tx_cpl_valid, o.tx_cpl_ready),
                    Chan::Rd => (i.tx_rd_req_valid, o.tx_rd_req_ready),
                    Chan::Wr => (i.tx_wr_req_valid, o.tx_wr_req_ready),
                };
                check!(
                    r == 0 || v != 0,
                    "cycle {cycle}: {:?} ready without valid",
                    c.chan
                );
                if v != 0 && r != 0 {
                    c.accepted(cycle, w);
                }
            }
        }
        rep.out = o;
        cycle += 1;

        let all_in = brx.next >= brx.items.len() && brx.cur.is_none() && brx.held.is_none();
        let all_out = ctx.iter().all(|c| c.done()) && msi_next >= sc.msi.len();
        // all presented: let the pipelines drain, then stop
        if all_in && all_out && drained_since > 0 && int_seen.is_none() && tcfg_state == 0 {
            tail += 1;
            if tail > 300 {
                break;
            }
        } else {
            tail = 0;
        }
    }
    rep.cycles = cycle;
    rep.rx = crx.got;
    rep.sof_slots = brx.sof_slots.clone();
    rep.stats = [
        rep.out.stat_rx_dropped,
        rep.out.stat_rx_malformed,
        rep.out.stat_rx_discontinued,
        rep.out.stat_msi_dropped,
    ];

    // ---- everything delivered?
    check!(
        brx.next >= brx.items.len() && brx.cur.is_none() && brx.held.is_none(),
        "receive: the shim stopped taking beats ({} of {} TLPs sent) after {cycle} cycles",
        brx.next,
        brx.items.len()
    );
    for c in &ctx {
        check!(
            c.done(),
            "transmit: {:?} stuck at TLP {} of {} after {cycle} cycles",
            c.chan,
            c.next,
            c.items.len()
        );
    }
    check!(
        msi_next >= sc.msi.len(),
        "MSI {msi_next} of {} never taken",
        sc.msi.len()
    );

    // ---- receive contents, in order
    let mut want: Vec<(bool, Tlp)> = Vec::new();
    let mut drops = 0u32;
    let mut dscs = 0u32;
    let mut short = 0u32;
    for (k, it) in sc.rx.iter().enumerate() {
        let mut t = it.tlp.clone();
        if !t.is_4dw() {
            t.hdr[3] = 0;
        }
        if let Some((m, n)) = brx.cut_info[k] {
            dscs += 1;
            let h = t.hdr_dws();
            if it.expect == RxExpect::Drop {
                // counted as dropped once its header was whole
                drops += u32::from(n >= h);
                continue;
            }
            if m < h {
                continue; // cut before the header was whole: nothing delivered
            }
            let got = (n - h).min(t.len_dw());
            if got < t.len_dw() {
                short += 1;
                for b in &mut t.data[got * 4..] {
                    *b = 0;
                }
            }
            want.push((it.expect == RxExpect::Cpl, t));
            continue;
        }
        match it.expect {
            RxExpect::Req => want.push((false, t)),
            RxExpect::Cpl => want.push((true, t)),
            RxExpect::Drop => drops += 1,
        }
    }
    check!(
        rep.rx.len() == want.len(),
        "receive: {} TLPs delivered to the core, {} expected",
        rep.rx.len(),
        want.len()
    );
    for (k, (g, e)) in rep.rx.iter().zip(&want).enumerate() {
        check!(
            g.0 == e.0,
            "receive TLP {k}: on {} instead of {}",
            if g.0 { "rx_cpl" } else { "rx_req" },
            if e.0 { "rx_cpl" } else { "rx_req" }
        );
        check!(
            g.1.hdr == e.1.hdr,
            "receive TLP {k}: header {:08x?}, expected {:08x?}",
            g.1.hdr,
            e.1.hdr
        );
        if g.1.data != e.1.data {
            let at = g.1.data.iter().zip(&e.1.data).position(|(a, b)| a != b);
            return Err(Fail(format!(
                "receive TLP {k}: payload differs ({} bytes, expected {}; first difference at byte {:?})",
                g.1.data.len(),
                e.1.data.len(),
                at
            )));
        }
    }
    check!(
        rep.stats[0] == drops,
        "stat_rx_dropped {} != {drops}",
        rep.stats[0]
    );
    check!(
        rep.stats[2] == dscs,
        "stat_rx_discontinued {} != {dscs}",
        rep.stats[2]
    );
    let bad = short + brx.strays_sent;
    check!(
        rep.stats[1] == bad,
        "stat_rx_malformed {} != {bad} ({short} padded TLPs, {} stray beats)",
        rep.stats[1],
        brx.strays_sent
    );

    // ---- transmit ordering
    let rise = |ch: Chan, k: usize| -> u64 {
        let c = ctx.iter().find(|c| c.chan == ch).unwrap();
        c.rise[k].unwrap()
    };
    let pos_of = |ch: Chan, k: usize| rep.tx.iter().position(|x| x.0 == ch && x.1 == k).unwrap();
    let n_wr = ctx[2].items.len();
    for (p, &(ch, k, _)) in rep.tx.iter().enumerate() {
        if ch == Chan::Wr {
            continue;
        }
        let r = rise(ch, k);
        for wk in 0..n_wr {
            if rise(Chan::Wr, wk) <= r {
                check!(
                    pos_of(Chan::Wr, wk) < p,
                    "ordering: {ch:?} TLP {k} (valid at cycle {r}) went out before write {wk} (valid at cycle {})",
                    rise(Chan::Wr, wk)
                );
            }
        }
    }
    // MSI behind every earlier write
    let mut mi = 0usize;
    for (k, (v, _)) in sc.msi.iter().enumerate() {
        let r = msi_rise[k].unwrap();
        if !cfg.msi_enable {
            continue;
        }
        let (di, t0) = rep.msi[mi];
        mi += 1;
        let mask = ((1u32 << cfg.mm_enable) - 1) as u8;
        check!(
            di == v & mask,
            "MSI {k}: CFGINTERRUPTDI {di} for vector {v} (mask {mask:#x})"
        );
        for wk in 0..n_wr {
            if rise(Chan::Wr, wk) <= r {
                let eof = rep.tx[pos_of(Chan::Wr, wk)].2;
                check!(
                    eof < t0,
                    "MSI {k} (asked at {r}) raised at {t0}, before write {wk} (asked at {}) finished at {eof}",
                    rise(Chan::Wr, wk)
                );
            }
        }
    }
    if cfg.msi_enable {
        check!(
            mi == rep.msi.len(),
            "{} MSIs sent, {} expected",
            rep.msi.len(),
            mi
        );
        check!(rep.stats[3] == 0, "stat_msi_dropped {}", rep.stats[3]);
    } else {
        check!(rep.msi.is_empty(), "MSI sent while disabled");
        check!(
            rep.stats[3] as usize == sc.msi.len(),
            "stat_msi_dropped {} != {}",
            rep.stats[3],
            sc.msi.len()
        );
    }

    // ---- configuration values
    check!(
        rep.out.cfg_max_payload == sc.cfg_vals.0 && rep.out.cfg_max_read_req == sc.cfg_vals.1,
        "cfg_max_payload/read_req {}/{} (block says {}/{})",
        rep.out.cfg_max_payload,
        rep.out.cfg_max_read_req,
        sc.cfg_vals.0,
        sc.cfg_vals.1
    );
    check!(
        rep.out.cfg_requester_id == sc.cfg_vals.2,
        "cfg_requester_id {:04x}, expected {:04x}",
        rep.out.cfg_requester_id,
        sc.cfg_vals.2
    );
    Ok(rep)
}
