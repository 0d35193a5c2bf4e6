//! The simulated Ethernet MAC of one NIC: collects frames from
//! `m_axis_tx_*` and plays queued frames into `s_axis_rx_*`, one beat per
//! cycle, honoring `tready`. A [`PortHook`] of the root complex.

use std::collections::VecDeque;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::ports::{PortsIn, PortsOut};
use crate::root_complex::{Channel, PortHook};

/// Knobs of the MAC model.
#[derive(Debug, Clone, PartialEq)]
pub struct MacConfig {
    /// Frames waiting for the NIC's `s_axis_rx` at most; more are dropped
    /// and counted (`rx_overflow_drops`) — a NIC that stops accepting.
    pub rx_queue_frames: usize,
    /// TX frames shorter than this are zero-padded (as a MAC does; 60 =
    /// the Ethernet minimum without FCS). 0: no padding.
    pub min_frame: usize,
    /// TX frames longer than this are a model error and dropped.
    pub max_frame: usize,
    /// Probability that `m_axis_tx_tready` is low in a cycle (back-pressure
    /// on the NIC's transmitter).
    pub tx_stall_prob: f64,
}

impl Default for MacConfig {
    fn default() -> Self {
        Self {
            rx_queue_frames: 1024,
            min_frame: crate::frame::MIN_FRAME,
            max_frame: 16384,
            tx_stall_prob: 0.0,
        }
    }
}

/// Counters of one NIC's MAC.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct MacStats {
    /// Frames the NIC sent (and handed to the fabric).
    pub tx_frames: u64,
    pub tx_bytes: u64,
    /// Frames the NIC ended with `tuser` = 1 (aborted; not sent).
    pub tx_bad_frames: u64,
    /// Frames padded up to `min_frame`.
    pub tx_padded: u64,
    /// Malformed frames (keep, length): model errors, not sent.
    pub tx_errors: u64,
    /// Cycles a TX beat waited for `tready`.
    pub tx_stall_cycles: u64,
    /// Frames the NIC accepted completely on `s_axis_rx`.
    pub rx_frames: u64,
    pub rx_bytes: u64,
    /// Of those, delivered with `tuser` = 1.
    pub rx_bad_frames: u64,
    /// Frames dropped because the RX queue was full.
    pub rx_overflow_drops: u64,
    /// Frames queued for `s_axis_rx` now / the most ever.
    pub rx_queue_len: usize,
    pub rx_queue_max: usize,
    /// Cycles an RX beat waited for `tready`.
    pub rx_stall_cycles: u64,
}

struct RxFrame {
    data: Vec<u8>,
    bad: bool,
}

/// One NIC's MAC. The world moves finished TX frames out (`tx_done`),
/// consumed RX buffers out (`spent`) and errors out whenever `events` is
/// set.
pub(crate) struct MacPort {
    /// Bytes per beat (DATA_W / 8).
    w: usize,
    full_keep: u64,
    cfg: MacConfig,
    stall_thr: u32,
    rng: ChaCha8Rng,
    // TX
    tx_cur: Vec<u8>,
    tx_err: Option<String>,
    tx_held: bool,
    tx_held_beat: ([u8; 64], u64, u8, u8),
    pub(crate) tx_done: Vec<(u64, Vec<u8>)>,
    pub(crate) free: Vec<Vec<u8>>,
    // RX
    rx_q: VecDeque<RxFrame>,
    rx_pos: usize,
    rx_loaded: bool,
    pub(crate) spent: Vec<Vec<u8>>,
    pub(crate) errors: Vec<(u64, Channel, String)>,
    /// Something for the world to collect.
    pub(crate) events: bool,
    pub(crate) stats: MacStats,
}

impl MacPort {
    pub(crate) fn new(data_w: u32, cfg: MacConfig, seed: u64) -> Self {
        let w = (data_w / 8).clamp(1, 64) as usize;
        Self {
            w,
            full_keep: if w >= 64 { u64::MAX } else { (1u64 << w) - 1 },
            stall_thr: (cfg.tx_stall_prob.clamp(0.0, 1.0) * 65536.0).round() as u32,
            cfg,
            rng: ChaCha8Rng::seed_from_u64(seed),
            tx_cur: Vec::new(),
            tx_err: None,
            tx_held: false,
            tx_held_beat: ([0; 64], 0, 0, 0),
            tx_done: Vec::new(),
            free: Vec::new(),
            rx_q: VecDeque::new(),
            rx_pos: 0,
            rx_loaded: false,
            spent: Vec::new(),
            errors: Vec::new(),
            events: false,
            stats: MacStats::default(),
        }
    }

    /// Queue a frame for `s_axis_rx`. Returns false (and counts an
    /// overflow drop; the buffer goes to `spent`) when the queue is full.
    pub(crate) fn rx_push(&mut self, data: Vec<u8>, bad: bool) -> bool {
        if data.is_empty() || self.rx_q.len() >= self.cfg.rx_queue_frames {
            if !data.is_empty() {
                self.stats.rx_overflow_drops += 1;
            }
            self.spent.push(data);
            self.events = true;
            return false;
        }
        self.rx_q.push_back(RxFrame { data, bad });
        self.stats.rx_queue_max = self.stats.rx_queue_max.max(self.rx_q.len());
        true
    }

    /// Nothing queued or half-transferred in either direction.
    pub(crate) fn idle(&self) -> bool {
        self.rx_q.is_empty() && self.tx_cur.is_empty() && !self.tx_held
    }

    pub(crate) fn stats(&self) -> MacStats {
        let mut s = self.stats;
        s.rx_queue_len = self.rx_q.len();
        s
    }

    fn load_rx_beat(&mut self, inp: &mut PortsIn) {
        let f = self.rx_q.front().expect("rx frame");
        let len = f.data.len();
        let n = (len - self.rx_pos).min(self.w);
        inp.s_axis_rx_tdata[..n].copy_from_slice(&f.data[self.rx_pos..self.rx_pos + n]);
        inp.s_axis_rx_tdata[n..self.w].fill(0);
        inp.s_axis_rx_tkeep = if n >= 64 { u64::MAX } else { (1u64 << n) - 1 };
        let last = self.rx_pos + n >= len;
        inp.s_axis_rx_tlast = u8::from(last);
        inp.s_axis_rx_tuser = u8::from(last && f.bad);
        inp.s_axis_rx_tvalid = 1;
        self.rx_loaded = true;
    }

    fn rx_accept(&mut self) {
        self.rx_loaded = false;
        let len = self.rx_q.front().map_or(0, |f| f.data.len());
        self.rx_pos += self.w;
        if self.rx_pos >= len {
            let f = self.rx_q.pop_front().expect("rx frame");
            self.stats.rx_frames += 1;
            self.stats.rx_bytes += len as u64;
            self.stats.rx_bad_frames += u64::from(f.bad);
            self.rx_pos = 0;
            self.spent.push(f.data);
            self.events = true;
        }
    }

    fn tx_error(&mut self, msg: String) {
        if self.tx_err.is_none() {
            self.tx_err = Some(msg);
        }
    }

    #[inline(never)]
    fn tx_sample(&mut self, cycle: u64, inp: &PortsIn, out: &PortsOut) {
        let valid = out.m_axis_tx_tvalid != 0;
        let ready = inp.m_axis_tx_tready != 0;
        if self.tx_held {
            let (d, k, l, u) = &self.tx_held_beat;
            let keep = *k & self.full_keep;
            let msg = if !valid {
                Some("valid dropped before ready")
            } else if (out.m_axis_tx_tkeep & self.full_keep) != keep
                || out.m_axis_tx_tlast != *l
                || out.m_axis_tx_tuser != *u
                || (0..self.w).any(|i| keep >> i & 1 != 0 && d[i] != out.m_axis_tx_tdata[i])
            {
                Some("beat changed while waiting for ready")
            } else {
                None
            };
            if let Some(m) = msg {
                self.errors
                    .push((cycle, Channel::MacTx, format!("AXI-Stream handshake: {m}")));
                self.events = true;
            }
        }
        self.tx_held = valid && !ready;
        if self.tx_held {
            self.stats.tx_stall_cycles += 1;
            self.tx_held_beat = (
                out.m_axis_tx_tdata,
                out.m_axis_tx_tkeep,
                out.m_axis_tx_tlast,
                out.m_axis_tx_tuser,
            );
        }
        if !(valid && ready) {
            return;
        }
        let keep = out.m_axis_tx_tkeep & self.full_keep;
        let last = out.m_axis_tx_tlast != 0;
        if self.tx_cur.is_empty() && self.tx_cur.capacity() == 0 {
            if let Some(b) = self.free.pop() {
                self.tx_cur = b;
            }
        }
        if !last && keep != self.full_keep {
            self.tx_error(format!(
                "tkeep {keep:#x} of a beat before the last is not full"
            ));
        } else if last && (keep == 0 || keep & keep.wrapping_add(1) != 0) {
            self.tx_error(format!(
                "tkeep {keep:#x} of the last beat is not contiguous from byte 0"
            ));
        }
        if keep == self.full_keep {
            self.tx_cur
                .extend_from_slice(&out.m_axis_tx_tdata[..self.w]);
        } else {
            for i in 0..self.w {
                if keep >> i & 1 != 0 {
                    self.tx_cur.push(out.m_axis_tx_tdata[i]);
                }
            }
        }
        if self.tx_cur.len() > self.cfg.max_frame {
            let n = self.tx_cur.len();
            let max = self.cfg.max_frame;
            self.tx_error(format!("frame longer than {max} bytes ({n} so far)"));
            self.tx_cur.truncate(max);
        }
        if !last {
            return;
        }
        let mut f = std::mem::take(&mut self.tx_cur);
        if out.m_axis_tx_tuser != 0 {
            // The NIC aborted the frame: a MAC sends it with a bad FCS, the
            // next switch drops it.
            self.stats.tx_bad_frames += 1;
            self.tx_err = None;
            f.clear();
            self.free.push(f);
            return;
        }
        if let Some(e) = self.tx_err.take() {
            self.stats.tx_errors += 1;
            self.errors
                .push((cycle, Channel::MacTx, format!("frame dropped: {e}")));
            self.events = true;
            f.clear();
            self.free.push(f);
            return;
        }
        if f.len() < self.cfg.min_frame {
            f.resize(self.cfg.min_frame, 0);
            self.stats.tx_padded += 1;
        }
        self.stats.tx_frames += 1;
        self.stats.tx_bytes += f.len() as u64;
        self.tx_done.push((cycle, f));
        self.events = true;
    }
}

impl PortHook for MacPort {
    #[inline]
    fn drive(&mut self, _cycle: u64, in_reset: bool, inp: &mut PortsIn) {
        if in_reset {
            inp.s_axis_rx_tvalid = 0;
            inp.m_axis_tx_tready = 0;
            self.rx_loaded = false;
            return;
        }
        inp.m_axis_tx_tready = if self.stall_thr == 0 {
            1
        } else {
            u8::from(self.rng.gen_range(0..65536u32) >= self.stall_thr)
        };
        if !self.rx_q.is_empty() {
            if !self.rx_loaded {
                self.load_rx_beat(inp);
            }
        } else {
            inp.s_axis_rx_tvalid = 0;
        }
    }

    #[inline]
    fn sample(&mut self, cycle: u64, inp: &PortsIn, out: &PortsOut) {
        if inp.s_axis_rx_tvalid != 0 {
            if out.s_axis_rx_tready != 0 {
                self.rx_accept();
            } else {
                self.stats.rx_stall_cycles += 1;
            }
        }
        if out.m_axis_tx_tvalid != 0 || self.tx_held {
            self.tx_sample(cycle, inp, out);
        }
    }
}
