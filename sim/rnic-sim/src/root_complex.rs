//! The PCIe root-complex model that drives the `rnic_core` ports every
//! cycle (DESIGN.md section 7.2).
//!
//! - MMIO: [`RootComplex::mmio_write`] queues a posted MemWr on `rx_req`;
//!   [`RootComplex::mmio_read_start`] queues a MemRd behind earlier MMIO
//!   writes, and the CplD that comes back on `tx_cpl` is checked (tag,
//!   status, byte count, lower address) and handed out by
//!   [`RootComplex::mmio_read_poll`] once every posted write the NIC sent
//!   before that completion is visible (a completion does not pass posted
//!   writes in the same direction, unless it has RO=1).
//! - DMA reads (`tx_rd_req` -> `rx_cpl`): checked, looked up in the IOMMU
//!   (any byte outside every buffer: one Cpl with status UR and an
//!   [`IommuFault`]), answered after a seeded latency by completions split
//!   at the RCB ([`crate::read_completer`]), interleaved between tags, never
//!   before the posted writes that arrived ahead of the request are visible.
//! - DMA writes (`tx_wr_req`) and MSIs: checked, looked up in the IOMMU (a
//!   write touching any byte outside every buffer is dropped whole and
//!   recorded), then queued in the posted-write queue
//!   ([`crate::posted_queue`]) that applies them to host memory later,
//!   RO=1 ones possibly out of order, RO=0 ones never before an earlier one.
//!   An MSI sets its pending bit when it becomes visible.
//! - Malformed TLPs are recorded as [`ModelError`]s, never silently used.
//!
//! Same-cycle rule: when a `tx_wr_req` TLP ends on the same edge on which a
//! `tx_rd_req` or an MSI is accepted, the write counts as the earlier one
//! (a board shim merging the channels into one link must do the same).

use std::collections::VecDeque;
use std::sync::Arc;

use rand::{Rng, RngCore, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rnic_device::{DeviceError, HostMemory};

use crate::host_memory::{Access, DmaMemory, Iommu, MapError, Mapping};
use crate::ports::{Model, PortsIn, PortsOut};
use crate::posted_queue::{PostedKind, PostedQueue, PostedWrite};
use crate::read_completer::{next_chunk_bytes, PendingRead, ReadCompleter};
use crate::tlp::{
    self, check_byte_enables, size_from_code, CplHeader, Dw0, ReqHeader, CPL_SC, CPL_UR, FMT_3DW,
    FMT_3DW_DATA, TYPE_CPL, TYPE_MEM,
};

/// Drives and samples the `rnic_core` ports that are not PCIe (the
/// Ethernet side), in step with [`RootComplex::cycle_with`].
pub trait PortHook {
    /// Set the hook's inputs for cycle `cycle` (before the model steps).
    /// `in_reset`: `rst` is high; hold valids and readies low.
    fn drive(&mut self, cycle: u64, in_reset: bool, inp: &mut PortsIn);
    /// Look at the handshakes of cycle `cycle` (after the model stepped;
    /// not called during reset).
    fn sample(&mut self, cycle: u64, inp: &PortsIn, out: &PortsOut);
}

/// A [`PortHook`] that does nothing.
pub struct NoHook;

impl PortHook for NoHook {
    #[inline(always)]
    fn drive(&mut self, _: u64, _: bool, _: &mut PortsIn) {}
    #[inline(always)]
    fn sample(&mut self, _: u64, _: &PortsIn, _: &PortsOut) {}
}

/// Knobs of the root-complex model. Every random choice comes from one
/// ChaCha8 stream seeded by the simulation seed.
#[derive(Debug, Clone, PartialEq)]
pub struct RootComplexConfig {
    /// Cycles from a DMA read request to its first completion (minimum).
    pub read_latency: u64,
    /// Extra random latency per read request, uniform in `0..=read_jitter`.
    pub read_jitter: u64,
    /// Interleave completions of different tags in random order and split
    /// reads into completions of random (legal) sizes. Off: requests are
    /// answered in arrival order with the largest completions.
    pub reorder: bool,
    /// Probability that the root complex holds a ready low in a cycle, on
    /// each NIC -> host channel (tx_cpl, tx_rd_req, tx_wr_req, msi).
    pub ready_stall_prob: f64,
    /// Probability that the root complex waits a cycle before presenting
    /// the next TLP on a host -> NIC channel (rx_req, rx_cpl).
    pub valid_stall_prob: f64,
    /// A posted write (or MSI) becomes visible this many cycles after it
    /// arrives, uniform in the inclusive range (subject to ordering).
    pub write_delay: (u64, u64),
    /// Posted entries not yet visible, at most (back-pressure beyond).
    pub posted_queue_depth: usize,
    /// DMA read requests in flight, at most (back-pressure beyond).
    pub max_reads_in_flight: usize,
    /// Read completion boundary in bytes (64 or 128).
    pub rcb: u32,
    /// `cfg_max_payload` (PCIe encoding: 0 = 128 B, 1 = 256 B, 2 = 512 B).
    pub max_payload: u8,
    /// `cfg_max_read_req` (PCIe encoding: 0 = 128 B ... 5 = 4096 B).
    pub max_read_req: u8,
    /// `cfg_requester_id`: the NIC's bus/device/function.
    pub requester_id: u16,
    /// The root port's ID (requester of MMIO, completer of DMA reads).
    pub host_id: u16,
    /// Bus address of BAR0.
    pub bar0_addr: u64,
    /// An MMIO read that is not answered within this many cycles fails with
    /// `DeviceError::Timeout`.
    pub mmio_timeout: u64,
    /// Up to this many extra unmapped pages (random) between DMA buffers,
    /// on top of the one guard page.
    pub max_extra_guard_pages: u64,
}

impl Default for RootComplexConfig {
    fn default() -> Self {
        Self {
            read_latency: 100,
            read_jitter: 200,
            reorder: true,
            ready_stall_prob: 0.1,
            valid_stall_prob: 0.1,
            write_delay: (0, 100),
            posted_queue_depth: 64,
            max_reads_in_flight: 64,
            rcb: 64,
            max_payload: 1,
            max_read_req: 2,
            requester_id: 0x0100,
            host_id: 0x0000,
            bar0_addr: 0xFE00_0000,
            mmio_timeout: 100_000,
            max_extra_guard_pages: 15,
        }
    }
}

impl RootComplexConfig {
    /// For benchmarks: fixed latency, no reordering, no stalls, writes
    /// visible at once, so runs are comparable. Ordering rules still hold.
    pub fn bench() -> Self {
        Self {
            read_latency: 100,
            read_jitter: 0,
            reorder: false,
            ready_stall_prob: 0.0,
            valid_stall_prob: 0.0,
            write_delay: (0, 0),
            ..Self::default()
        }
    }

    /// A hostile host: long jittery read latency, heavy back-pressure and
    /// valid gaps on every channel, long and varied write visibility
    /// delays, small queues.
    pub fn stress() -> Self {
        Self {
            read_latency: 200,
            read_jitter: 1000,
            reorder: true,
            ready_stall_prob: 0.5,
            valid_stall_prob: 0.4,
            write_delay: (0, 2000),
            posted_queue_depth: 8,
            max_reads_in_flight: 4,
            ..Self::default()
        }
    }
}

/// A channel of `rnic_core`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Channel {
    RxReq,
    TxCpl,
    TxRdReq,
    RxCpl,
    TxWrReq,
    Msi,
    /// Ethernet frames out of the NIC (`m_axis_tx`): malformed frames and
    /// AXI-Stream handshake violations.
    MacTx,
    /// Not a channel: the simulation itself (e.g. the RTL ran `$stop`).
    Sim,
}

/// Something the NIC sent that breaks a PCIe or interface rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelError {
    pub cycle: u64,
    pub channel: Channel,
    /// The TLP header concerned (DW0 first), zero where there is none.
    pub hdr: [u32; 4],
    pub message: String,
}

impl std::fmt::Display for ModelError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "cycle {}: {:?}: {} (hdr {:08x} {:08x} {:08x} {:08x})",
            self.cycle,
            self.channel,
            self.message,
            self.hdr[0],
            self.hdr[1],
            self.hdr[2],
            self.hdr[3]
        )
    }
}

/// A DMA access that touched bytes outside every registered buffer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IommuFault {
    pub cycle: u64,
    /// Bus address of the first byte of the access.
    pub addr: u64,
    /// Bytes the access covers (1 for a zero-length request).
    pub len: u64,
    pub write: bool,
    pub requester_id: u16,
    pub tag: u8,
    pub reason: FaultReason,
}

/// Why a DMA access was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FaultReason {
    /// Some byte lies outside every mapping.
    Unmapped,
    /// Mapped, but not for this direction (a write to a read-only
    /// mapping, a read of a write-only one).
    Access,
    /// The host has bus mastering disabled (command register bit 2): the
    /// function may issue no DMA and no MSI. An MSI refused this way is
    /// recorded at `0xFEE0_0000 + 4 * vector` with the vector as tag.
    BusMaster,
}

/// Where a refused MSI is recorded (the x86 MSI address window).
pub const MSI_WINDOW: u64 = 0xFEE0_0000;

/// TLPs and bytes seen on one channel.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ChannelStats {
    pub tlps: u64,
    /// Payload bytes (enabled bytes for writes, byte count for read
    /// requests, returned bytes for completions).
    pub bytes: u64,
}

/// Counters of a run.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Stats {
    pub cycles: u64,
    pub rx_req: ChannelStats,
    pub tx_cpl: ChannelStats,
    pub tx_rd_req: ChannelStats,
    pub rx_cpl: ChannelStats,
    pub tx_wr_req: ChannelStats,
    pub msi: u64,
    /// DMA reads answered with Unsupported Request (IOMMU fault or
    /// malformed request).
    pub unsupported_requests: u64,
    pub iommu_faults: u64,
    pub model_errors: u64,
    /// Posted entries not yet visible / the most ever.
    pub posted_pending: usize,
    pub max_posted_pending: usize,
    /// DMA reads in flight / the most ever.
    pub reads_in_flight: usize,
    pub max_reads_in_flight: usize,
}

struct MmioOp {
    hdr: [u32; 4],
    data: u32,
}

struct MmioRead {
    tag: u8,
    offset: u64,
    abandoned: bool,
    result: Option<Result<u32, DeviceError>>,
    /// The completion may not pass posted entries below this sequence
    /// number (PCIe: a completion does not pass earlier posted writes in
    /// the same direction), so the result is handed out only once they are
    /// visible.
    writes_before: u64,
}

/// A multi-beat TLP being received from the NIC.
struct Assembly {
    active: bool,
    hdr: [u32; 4],
    dws: Vec<u32>,
    err: Option<String>,
}

impl Assembly {
    fn new() -> Self {
        Self {
            active: false,
            hdr: [0; 4],
            dws: Vec::with_capacity(1024 + 16),
            err: None,
        }
    }
}

/// The completion being presented on `rx_cpl`.
struct OutCpl {
    active: bool,
    hdr: [u32; 4],
    bytes: Vec<u8>,
    n_dw: usize,
    pos: usize,
}

/// The root-complex model. Owns the port structs; [`RootComplex::cycle`]
/// runs one clock cycle of a [`Model`].
pub struct RootComplex {
    cfg: RootComplexConfig,
    rng: ChaCha8Rng,
    cycle: u64,
    lanes: usize,
    full_keep: u32,
    inp: PortsIn,
    out: PortsOut,
    in_reset: bool,
    ready_thr: u32,
    valid_thr: u32,
    throttle: bool,
    iommu: Iommu,
    mmio_q: VecDeque<MmioOp>,
    rx_req_active: bool,
    mmio_reads: Vec<MmioRead>,
    next_mmio_tag: u8,
    tx_cpl: Assembly,
    reads: ReadCompleter,
    rx_cpl: OutCpl,
    tx_wr: Assembly,
    posted: PostedQueue,
    msi_pending: u32,
    msi_count: [u64; 32],
    faults: Vec<IommuFault>,
    errors: Vec<ModelError>,
    stats: Stats,
    digest: u64,
    sim_flags: u8,
    /// NIC -> host channels that had valid high and ready low last cycle
    /// (bit per channel: 0 tx_cpl, 1 tx_rd_req, 2 tx_wr_req, 3 msi), and
    /// the outputs of that cycle: those must be held until the handshake.
    held: u8,
    held_out: PortsOut,
    /// Bus mastering enabled (command register bit 2); DMA and MSI are
    /// refused while it is off.
    bus_master: bool,
}

fn prob_thr(p: f64) -> u32 {
    (p.clamp(0.0, 1.0) * 1024.0).round() as u32
}

impl RootComplex {
    /// A root complex for a NIC with `data_w`-bit buses.
    pub fn new(cfg: RootComplexConfig, data_w: u32, seed: u64) -> Self {
        let lanes = (data_w / 32).clamp(1, 16) as usize;
        let mut rc = Self {
            rng: ChaCha8Rng::seed_from_u64(seed),
            cycle: 0,
            lanes,
            full_keep: if lanes >= 32 {
                u32::MAX
            } else {
                (1u32 << lanes) - 1
            },
            inp: PortsIn::default(),
            out: PortsOut::default(),
            in_reset: false,
            ready_thr: 0,
            valid_thr: 0,
            throttle: false,
            iommu: Iommu::new(),
            mmio_q: VecDeque::new(),
            rx_req_active: false,
            mmio_reads: Vec::new(),
            next_mmio_tag: 0,
            tx_cpl: Assembly::new(),
            reads: ReadCompleter::default(),
            rx_cpl: OutCpl {
                active: false,
                hdr: [0; 4],
                bytes: Vec::with_capacity(4096 + 8),
                n_dw: 0,
                pos: 0,
            },
            tx_wr: Assembly::new(),
            posted: PostedQueue::new(),
            msi_pending: 0,
            msi_count: [0; 32],
            faults: Vec::new(),
            errors: Vec::new(),
            stats: Stats::default(),
            digest: 0xcbf2_9ce4_8422_2325,
            sim_flags: 0,
            held: 0,
            held_out: PortsOut::default(),
            bus_master: true,
            cfg: cfg.clone(),
        };
        rc.set_config(cfg);
        rc
    }

    fn set_config(&mut self, cfg: RootComplexConfig) {
        self.ready_thr = prob_thr(cfg.ready_stall_prob);
        self.valid_thr = prob_thr(cfg.valid_stall_prob);
        self.throttle = self.ready_thr > 0 || self.valid_thr > 0;
        self.inp.cfg_max_payload = cfg.max_payload.min(5);
        self.inp.cfg_max_read_req = cfg.max_read_req.min(5);
        self.inp.cfg_requester_id = cfg.requester_id;
        self.cfg = cfg;
    }

    pub fn config(&self) -> &RootComplexConfig {
        &self.cfg
    }

    /// Draw from the model's random stream (for harness decisions that must
    /// follow the seed too).
    pub fn rng(&mut self) -> &mut ChaCha8Rng {
        &mut self.rng
    }

    /// Cycles run so far.
    pub fn now(&self) -> u64 {
        self.cycle
    }

    pub fn set_max_payload(&mut self, code: u8) {
        self.cfg.max_payload = code;
        self.inp.cfg_max_payload = code;
    }

    pub fn set_max_read_req(&mut self, code: u8) {
        self.cfg.max_read_req = code;
        self.inp.cfg_max_read_req = code;
    }

    /// Bus mastering (command register bit 2; on from the start): while
    /// off, every DMA request and MSI of the NIC is refused and recorded
    /// as an [`IommuFault`] with [`FaultReason::BusMaster`], as a host
    /// whose driver never enabled bus mastering would see nothing arrive.
    pub fn set_bus_master(&mut self, on: bool) {
        self.bus_master = on;
    }

    pub fn bus_master(&self) -> bool {
        self.bus_master
    }

    /// Hold `rst` high (and every valid/ready low) while `on`.
    pub fn set_reset(&mut self, on: bool) {
        self.in_reset = on;
        self.inp.rst = u8::from(on);
    }

    /// The inputs as last driven / the outputs as last sampled.
    pub fn ports(&self) -> (&PortsIn, &PortsOut) {
        (&self.inp, &self.out)
    }

    // ------------------------------------------------------------------
    // Host side: memory, MMIO, interrupts, reports

    /// Register host memory for DMA; returns its bus address.
    pub fn map(&mut self, mem: Arc<HostMemory>, below_4g: bool) -> Option<u64> {
        let extra = if self.cfg.max_extra_guard_pages > 0 {
            self.rng.gen_range(0..=self.cfg.max_extra_guard_pages)
        } else {
            0
        };
        self.iommu.map(mem, below_4g, extra)
    }

    /// Remove the buffer at bus address `bus` from the IOMMU.
    pub fn unmap(&mut self, bus: u64) -> Option<Mapping> {
        self.iommu.unmap(bus)
    }

    /// Register `len` bytes of `mem` from `offset` at bus address `bus`
    /// (chosen by the caller, e.g. a guest's IOVA) with `access`. DMA
    /// outside every mapping, or against its access, is refused and
    /// recorded as an [`IommuFault`], as for the simulator's own buffers.
    pub fn map_at(
        &mut self,
        bus: u64,
        len: u64,
        mem: Arc<dyn DmaMemory>,
        offset: usize,
        access: Access,
    ) -> Result<(), MapError> {
        self.iommu.map_at(bus, len, mem, offset, access)
    }

    /// Remove bus addresses `bus..bus+len` from the IOMMU (see
    /// [`Iommu::unmap_range`]). Posted writes already accepted are made
    /// visible first, so none lands after the caller has been told the
    /// range is gone; read requests already translated keep the memory
    /// alive until they complete. Returns the bytes that were mapped.
    pub fn unmap_range(&mut self, bus: u64, len: u64) -> u64 {
        self.flush_posted();
        self.iommu.unmap_range(bus, len)
    }

    /// A function-level reset as the host's side of the link sees it:
    /// posted writes the NIC issued become visible (they left the function
    /// before the reset), DMA reads in flight and the NIC's unfinished TLPs
    /// are dropped, queued MMIO requests are discarded, outstanding MMIO
    /// reads end with [`DeviceError::Stopped`], pending MSIs are cleared,
    /// and `rst` is raised. The caller releases it with
    /// [`RootComplex::set_reset`]`(false)` after the reset time. The IOMMU
    /// table (the host's) is kept.
    pub fn function_reset(&mut self) {
        self.flush_posted();
        self.reads = ReadCompleter::default();
        self.rx_cpl.active = false;
        self.inp.rx_cpl_valid = 0;
        self.tx_wr.active = false;
        self.tx_cpl.active = false;
        self.held = 0;
        self.mmio_q.clear();
        self.rx_req_active = false;
        self.inp.rx_req_valid = 0;
        self.mmio_reads.retain(|r| !r.abandoned);
        for r in &mut self.mmio_reads {
            if r.result.is_none() {
                r.result = Some(Err(DeviceError::Stopped(
                    "function-level reset while the MMIO read was outstanding".into(),
                )));
                r.writes_before = 0;
            }
        }
        self.msi_pending = 0;
        self.set_reset(true);
    }

    /// Queue a posted MMIO write of the bytes of `value` whose bits are set
    /// in `byte_enable` (bit `i` = byte `i` of the dword at `offset`).
    pub fn mmio_write_be(&mut self, offset: u64, value: u32, byte_enable: u8) {
        let mut h = ReqHeader::mem(true, self.cfg.bar0_addr + offset, 1, byte_enable & 0xf, 0);
        h.requester_id = self.cfg.host_id;
        self.mmio_q.push_back(MmioOp {
            hdr: h.encode(),
            data: value,
        });
    }

    pub fn iommu(&self) -> &Iommu {
        &self.iommu
    }

    /// Every host memory this root complex can touch before its IOMMU
    /// table next changes: the mapped ones and those that DMA reads and
    /// posted writes in flight keep alive (requests in flight were
    /// translated while their memory was mapped, so a new one only appears
    /// with a new mapping, which changes [`Iommu::generation`]).
    pub(crate) fn for_each_memory(&self, mut f: impl FnMut(&Arc<dyn DmaMemory>)) {
        for m in self.iommu.mappings() {
            f(m.memory());
        }
        self.reads.memories().for_each(&mut f);
        self.posted.memories().for_each(&mut f);
    }

    /// Queue a posted 32-bit MMIO write to BAR0 at `offset`.
    pub fn mmio_write(&mut self, offset: u64, value: u32) {
        self.mmio_write_be(offset, value, 0xf);
    }

    /// Queue a 32-bit MMIO read of BAR0 at `offset` (behind earlier MMIO
    /// writes); returns the tag to poll.
    pub fn mmio_read_start(&mut self, offset: u64) -> u8 {
        let mut tag = self.next_mmio_tag;
        for _ in 0..256 {
            if !self.mmio_reads.iter().any(|r| r.tag == tag) {
                break;
            }
            tag = tag.wrapping_add(1);
        }
        self.next_mmio_tag = tag.wrapping_add(1);
        let mut h = ReqHeader::mem(false, self.cfg.bar0_addr + offset, 1, 0xf, 0);
        h.requester_id = self.cfg.host_id;
        h.tag = tag;
        self.mmio_q.push_back(MmioOp {
            hdr: h.encode(),
            data: 0,
        });
        self.mmio_reads.push(MmioRead {
            tag,
            offset,
            abandoned: false,
            result: None,
            writes_before: 0,
        });
        tag
    }

    /// The result of MMIO read `tag` once its completion has arrived.
    pub fn mmio_read_poll(&mut self, tag: u8) -> Option<Result<u32, DeviceError>> {
        let i = self
            .mmio_reads
            .iter()
            .position(|r| r.tag == tag && !r.abandoned)?;
        let r = &self.mmio_reads[i];
        if r.result.is_some() && r.writes_before <= self.posted.oldest_pending() {
            return self.mmio_reads.remove(i).result;
        }
        None
    }

    /// Give up on MMIO read `tag` (a late completion is then dropped).
    pub fn mmio_read_abandon(&mut self, tag: u8) {
        if let Some(r) = self.mmio_reads.iter_mut().find(|r| r.tag == tag) {
            r.abandoned = true;
        }
    }

    /// MMIO requests not yet accepted by the NIC.
    pub fn mmio_queued(&self) -> usize {
        self.mmio_q.len()
    }

    /// Pending MSI vectors (bit per vector).
    pub fn msi_pending(&self) -> u32 {
        self.msi_pending
    }

    /// If MSI `vector` is pending, clear it and return true.
    pub fn take_msi(&mut self, vector: u32) -> bool {
        let bit = 1u32 << (vector & 31);
        let was = self.msi_pending & bit != 0;
        self.msi_pending &= !bit;
        was
    }

    /// How often each MSI vector has fired.
    pub fn msi_counts(&self) -> &[u64; 32] {
        &self.msi_count
    }

    pub fn iommu_faults(&self) -> &[IommuFault] {
        &self.faults
    }

    pub fn model_errors(&self) -> &[ModelError] {
        &self.errors
    }

    pub fn stats(&self) -> Stats {
        let mut s = self.stats.clone();
        s.cycles = self.cycle;
        s.posted_pending = self.posted.len();
        s.reads_in_flight = self.reads.len();
        s
    }

    /// A digest of every TLP exchanged so far (cycle, channel, header):
    /// equal digests mean the runs saw the same traffic at the same times.
    pub fn digest(&self) -> u64 {
        self.digest
    }

    /// True when nothing is queued or in flight at the root complex.
    pub fn quiescent(&self) -> bool {
        self.mmio_q.is_empty()
            && !self.rx_req_active
            && self.reads.is_empty()
            && !self.rx_cpl.active
            && self.posted.is_empty()
            && !self.tx_wr.active
            && !self.tx_cpl.active
    }

    // ------------------------------------------------------------------
    // The clock

    /// Run one clock cycle of `m` (the non-PCIe ports stay idle: no RX
    /// frames, TX not ready).
    #[inline]
    pub fn cycle<M: Model + ?Sized>(&mut self, m: &mut M) {
        self.cycle_with(m, &mut NoHook);
    }

    /// Run one clock cycle of `m`, with `hook` driving and sampling the
    /// ports the root complex does not own (the Ethernet MAC side).
    #[inline]
    pub fn cycle_with<M: Model + ?Sized, H: PortHook + ?Sized>(&mut self, m: &mut M, hook: &mut H) {
        self.drive();
        hook.drive(self.cycle, self.in_reset, &mut self.inp);
        m.step(&self.inp, &mut self.out);
        if self.out.sim_flags != self.sim_flags {
            self.rtl_flags();
        }
        if !self.in_reset {
            self.sample();
            hook.sample(self.cycle, &self.inp, &self.out);
        }
        if !self.posted.is_empty() {
            self.apply_posted(self.cycle);
        }
        self.cycle += 1;
    }

    /// Make visible every posted entry the ordering rules let go by `now`.
    fn apply_posted(&mut self, now: u64) {
        let pending = &mut self.msi_pending;
        let counts = &mut self.msi_count;
        self.posted.service(now, |e| match &e.kind {
            // SAFETY: accepted writes passed the IOMMU check; the
            // entry keeps the memory alive.
            PostedKind::Write(w) => unsafe { w.apply() },
            PostedKind::Msi(v) => {
                *pending |= 1 << (v & 31);
                counts[usize::from(v & 31)] += 1;
            }
            PostedKind::Nop => {}
        });
    }

    /// Make every posted write and MSI the NIC has issued visible now, in
    /// an order the rules allow (as if their delays had all run out).
    pub fn flush_posted(&mut self) {
        self.apply_posted(u64::MAX);
    }

    fn drive(&mut self) {
        if self.in_reset {
            // A queued MMIO request is presented again after reset.
            self.rx_req_active = false;
            let i = &mut self.inp;
            i.rx_req_valid = 0;
            i.rx_cpl_valid = 0;
            i.tx_cpl_ready = 0;
            i.tx_rd_req_ready = 0;
            i.tx_wr_req_ready = 0;
            i.msi_ready = 0;
            return;
        }
        let bits = if self.throttle {
            self.rng.next_u64()
        } else {
            u64::MAX
        };
        let ready = |k: u32| ((bits >> (10 * k)) & 1023) as u32 >= self.ready_thr;
        let go = |k: u32| ((bits >> (10 * k)) & 1023) as u32 >= self.valid_thr;
        let posted_room = self.posted.len() < self.cfg.posted_queue_depth;
        self.inp.tx_cpl_ready = u8::from(ready(0));
        self.inp.tx_rd_req_ready =
            u8::from(ready(1) && self.reads.len() < self.cfg.max_reads_in_flight);
        self.inp.tx_wr_req_ready = u8::from(ready(2) && (self.tx_wr.active || posted_room));
        self.inp.msi_ready = u8::from(ready(3) && posted_room);
        let go_req = go(4);
        let go_cpl = go(5);

        if !self.rx_req_active && go_req {
            if let Some(op) = self.mmio_q.front() {
                self.inp.rx_req_hdr = op.hdr;
                self.inp.rx_req_data = [0; 16];
                self.inp.rx_req_data[0] = op.data;
                let has_data = op.hdr[0] & (1 << 30) != 0;
                self.inp.rx_req_keep = u32::from(has_data);
                self.inp.rx_req_last = 1;
                self.inp.rx_req_valid = 1;
                self.rx_req_active = true;
            }
        }
        if go_cpl {
            if self.rx_cpl.active {
                // Next beat of the current TLP (after a gap).
                self.inp.rx_cpl_valid = 1;
            } else if !self.reads.is_empty() {
                self.start_completion();
            }
        }
    }

    /// AXI-Stream rule on the NIC's outputs: once valid is high it stays
    /// high, with the same contents, until ready.
    fn check_held(&mut self) {
        let (o, p) = (&self.out, &self.held_out);
        let lanes = self.lanes;
        let same_beat = |hdr: bool,
                         ph: &[u32; 4],
                         oh: &[u32; 4],
                         pd: &[u32; 16],
                         od: &[u32; 16],
                         pk,
                         ok,
                         pl,
                         ol| {
            let keep_mask = pk & ok;
            (!hdr || ph == oh)
                && pk == ok
                && pl == ol
                && (0..lanes).all(|i| keep_mask & (1 << i) == 0 || pd[i] == od[i])
        };
        let mut bad: Vec<(Channel, &'static str)> = Vec::new();
        if self.held & 1 != 0 {
            if o.tx_cpl_valid == 0 {
                bad.push((Channel::TxCpl, "valid dropped before ready"));
            } else if !same_beat(
                !self.tx_cpl.active,
                &p.tx_cpl_hdr,
                &o.tx_cpl_hdr,
                &p.tx_cpl_data,
                &o.tx_cpl_data,
                p.tx_cpl_keep,
                o.tx_cpl_keep,
                p.tx_cpl_last,
                o.tx_cpl_last,
            ) {
                bad.push((Channel::TxCpl, "beat changed while waiting for ready"));
            }
        }
        if self.held & 2 != 0 {
            if o.tx_rd_req_valid == 0 {
                bad.push((Channel::TxRdReq, "valid dropped before ready"));
            } else if p.tx_rd_req_hdr != o.tx_rd_req_hdr {
                bad.push((Channel::TxRdReq, "header changed while waiting for ready"));
            }
        }
        if self.held & 4 != 0 {
            if o.tx_wr_req_valid == 0 {
                bad.push((Channel::TxWrReq, "valid dropped before ready"));
            } else if !same_beat(
                !self.tx_wr.active,
                &p.tx_wr_req_hdr,
                &o.tx_wr_req_hdr,
                &p.tx_wr_req_data,
                &o.tx_wr_req_data,
                p.tx_wr_req_keep,
                o.tx_wr_req_keep,
                p.tx_wr_req_last,
                o.tx_wr_req_last,
            ) {
                bad.push((Channel::TxWrReq, "beat changed while waiting for ready"));
            }
        }
        if self.held & 8 != 0 {
            if o.msi_valid == 0 {
                bad.push((Channel::Msi, "valid dropped before ready"));
            } else if p.msi_vector != o.msi_vector {
                bad.push((Channel::Msi, "vector changed while waiting for ready"));
            }
        }
        let hdr_of = |c: Channel, o: &PortsOut| match c {
            Channel::TxCpl => o.tx_cpl_hdr,
            Channel::TxRdReq => o.tx_rd_req_hdr,
            Channel::TxWrReq => o.tx_wr_req_hdr,
            _ => [0; 4],
        };
        for (c, m) in bad {
            let h = hdr_of(c, &self.held_out);
            self.error(c, h, format!("AXI-Stream handshake: {m}"));
        }
    }

    fn sample(&mut self) {
        if self.held != 0 {
            self.check_held();
        }
        let o = &self.out;
        let i = &self.inp;
        let held = u8::from(o.tx_cpl_valid != 0 && i.tx_cpl_ready == 0)
            | u8::from(o.tx_rd_req_valid != 0 && i.tx_rd_req_ready == 0) << 1
            | u8::from(o.tx_wr_req_valid != 0 && i.tx_wr_req_ready == 0) << 2
            | u8::from(o.msi_valid != 0 && i.msi_ready == 0) << 3;
        self.held = held;
        if held != 0 {
            self.held_out = self.out;
        }
        // Writes first: a write ending on the same edge as a read request or
        // an MSI is the earlier one.
        if self.out.tx_wr_req_valid != 0 && self.inp.tx_wr_req_ready != 0 {
            self.wr_beat();
        }
        if self.out.msi_valid != 0 && self.inp.msi_ready != 0 {
            self.msi();
        }
        if self.out.tx_rd_req_valid != 0 && self.inp.tx_rd_req_ready != 0 {
            self.rd_req();
        }
        if self.out.tx_cpl_valid != 0 && self.inp.tx_cpl_ready != 0 {
            self.cpl_beat();
        }
        if self.inp.rx_req_valid != 0 && self.out.rx_req_ready != 0 {
            self.mmio_q.pop_front();
            self.rx_req_active = false;
            self.inp.rx_req_valid = 0;
            self.stats.rx_req.tlps += 1;
            if self.inp.rx_req_keep != 0 {
                self.stats.rx_req.bytes += 4;
            }
            let h = self.inp.rx_req_hdr;
            self.note(Channel::RxReq, &h);
        }
        if self.inp.rx_cpl_valid != 0 && self.out.rx_cpl_ready != 0 {
            // The next beat (if any) is loaded now and presented by
            // `drive`, possibly after a gap.
            self.inp.rx_cpl_valid = 0;
            if self.rx_cpl.pos >= self.rx_cpl.n_dw {
                self.rx_cpl.active = false;
            } else {
                self.load_cpl_beat();
            }
        }
    }

    #[cold]
    fn rtl_flags(&mut self) {
        let new = self.out.sim_flags & !self.sim_flags;
        self.sim_flags = self.out.sim_flags;
        if new & 2 != 0 {
            self.error(
                Channel::Sim,
                [0; 4],
                "the RTL executed $stop, $error or $fatal",
            );
        }
        if new & 1 != 0 {
            self.error(Channel::Sim, [0; 4], "the RTL executed $finish");
        }
    }

    fn note(&mut self, ch: Channel, hdr: &[u32; 4]) {
        let mut d = self.digest;
        for w in [
            self.cycle,
            ch as u64,
            u64::from(hdr[0]),
            u64::from(hdr[1]),
            u64::from(hdr[2]),
            u64::from(hdr[3]),
        ] {
            d = (d ^ w).wrapping_mul(0x0000_0100_0000_01b3);
        }
        self.digest = d;
    }

    /// Record a model error found by a port hook (e.g. a malformed frame
    /// on the MAC side).
    /// `cycle` is the cycle it happened in.
    pub fn report_error(&mut self, cycle: u64, channel: Channel, message: impl Into<String>) {
        self.stats.model_errors += 1;
        self.errors.push(ModelError {
            cycle,
            channel,
            hdr: [0; 4],
            message: message.into(),
        });
    }

    fn error(&mut self, channel: Channel, hdr: [u32; 4], message: impl Into<String>) {
        self.stats.model_errors += 1;
        self.errors.push(ModelError {
            cycle: self.cycle,
            channel,
            hdr,
            message: message.into(),
        });
    }

    fn delay(&mut self) -> u64 {
        let (lo, hi) = self.cfg.write_delay;
        if hi > lo {
            self.rng.gen_range(lo..=hi)
        } else {
            lo
        }
    }

    /// Collect one beat of a NIC -> host TLP. Returns true on its last beat.
    fn collect(
        a: &mut Assembly,
        lanes: usize,
        full_keep: u32,
        hdr: &[u32; 4],
        data: &[u32; 16],
        keep: u32,
        last: bool,
    ) -> bool {
        if !a.active {
            a.active = true;
            a.hdr = *hdr;
            a.dws.clear();
            a.err = None;
        }
        let keep = keep & full_keep;
        if last {
            // Contiguous from dword 0 (0 allowed: a TLP without payload).
            if keep & keep.wrapping_add(1) != 0 && a.err.is_none() {
                a.err = Some(format!(
                    "keep {keep:#x} of the last beat is not contiguous from dword 0"
                ));
            }
        } else if keep != full_keep && a.err.is_none() {
            a.err = Some(format!(
                "keep {keep:#x} of a beat before the last is not full"
            ));
        }
        for (i, &d) in data.iter().enumerate().take(lanes) {
            if keep & (1 << i) != 0 {
                if a.dws.len() < 1024 + 16 {
                    a.dws.push(d);
                } else if a.err.is_none() {
                    a.err = Some("TLP payload longer than 1024 dwords".into());
                }
            }
        }
        if last {
            a.active = false;
        }
        last
    }

    // ------------------------------------------------------------------
    // NIC -> host: posted writes and MSIs

    fn wr_beat(&mut self) {
        let last = self.out.tx_wr_req_last != 0;
        let done = Self::collect(
            &mut self.tx_wr,
            self.lanes,
            self.full_keep,
            &self.out.tx_wr_req_hdr,
            &self.out.tx_wr_req_data,
            self.out.tx_wr_req_keep,
            last,
        );
        if done {
            self.finish_write();
        }
    }

    fn finish_write(&mut self) {
        let hdr = self.tx_wr.hdr;
        self.note(Channel::TxWrReq, &hdr);
        self.stats.tx_wr_req.tlps += 1;
        let h = ReqHeader::decode(&hdr);
        let ch = Channel::TxWrReq;
        if let Some(e) = self.tx_wr.err.take() {
            return self.error(ch, hdr, format!("MemWr dropped: {e}"));
        }
        if h.dw0.typ != TYPE_MEM || !h.dw0.has_data() {
            return self.error(
                ch,
                hdr,
                format!("not a MemWr (fmt {:03b} type {:05b})", h.dw0.fmt, h.dw0.typ),
            );
        }
        if h.dw0.td || h.dw0.ep || h.dw0.th {
            return self.error(ch, hdr, "MemWr with TD, EP or TH set");
        }
        if h.addr & 3 != 0 {
            return self.error(ch, hdr, "MemWr address bits 1:0 are not zero");
        }
        let n = self.tx_wr.dws.len() as u32;
        if n != h.dw0.length_dw {
            return self.error(
                ch,
                hdr,
                format!(
                    "MemWr carries {n} dwords, its length field says {}",
                    h.dw0.length_dw
                ),
            );
        }
        if let Err(e) = check_byte_enables(h.dw0.length_dw, h.first_be, h.last_be, h.addr) {
            return self.error(ch, hdr, format!("MemWr: {e}"));
        }
        let mps = size_from_code(self.inp.cfg_max_payload);
        if h.dw0.length_dw * 4 > mps {
            return self.error(
                ch,
                hdr,
                format!("MemWr payload {} B above MPS {mps} B", h.dw0.length_dw * 4),
            );
        }
        if (h.addr % tlp::PAGE) + u64::from(h.dw0.length_dw) * 4 > tlp::PAGE {
            return self.error(ch, hdr, "MemWr crosses a 4 KiB boundary");
        }
        if h.dw0.is_4dw() && h.addr < 1 << 32 {
            self.error(ch, hdr, "4DW MemWr header for an address below 4 GiB");
        }
        if h.requester_id != self.inp.cfg_requester_id {
            self.error(
                ch,
                hdr,
                format!(
                    "MemWr requester ID {:#06x} is not cfg_requester_id",
                    h.requester_id
                ),
            );
        }
        let zero_len = h.dw0.length_dw == 1 && h.first_be == 0;
        let first = h.first_byte_addr();
        let bc = h.byte_count();
        let allowed =
            self.bus_master && self.iommu.lookup_for(first, u64::from(bc), true).is_some();
        if !allowed {
            return self.fault(first, u64::from(bc), true, h.requester_id, h.tag);
        }
        let Some(m) = self.iommu.lookup(first, u64::from(bc)) else {
            return;
        };
        let kind = if zero_len {
            PostedKind::Nop
        } else {
            let ptr = m.host_ptr(h.addr);
            let owner = Some(m.memory().clone());
            let mut data = self.posted.take_buf();
            for d in &self.tx_wr.dws {
                data.extend_from_slice(&d.to_le_bytes());
            }
            self.stats.tx_wr_req.bytes += u64::from(bc);
            PostedKind::Write(PostedWrite {
                ptr,
                data,
                len_dw: h.dw0.length_dw,
                first_be: h.first_be,
                last_be: h.last_be,
                _owner: owner,
            })
        };
        let due = self.cycle + self.delay();
        self.posted.push(kind, h.dw0.ro, self.cycle, due);
        self.stats.max_posted_pending = self.stats.max_posted_pending.max(self.posted.len());
    }

    /// Record a refused DMA access (and why it was refused).
    fn fault(&mut self, addr: u64, len: u64, write: bool, requester_id: u16, tag: u8) {
        let reason = if !self.bus_master {
            FaultReason::BusMaster
        } else if self.iommu.lookup(addr, len).is_some() {
            FaultReason::Access
        } else {
            FaultReason::Unmapped
        };
        self.stats.iommu_faults += 1;
        self.faults.push(IommuFault {
            cycle: self.cycle,
            addr,
            len,
            write,
            requester_id,
            tag,
            reason,
        });
    }

    fn msi(&mut self) {
        let v = self.out.msi_vector & 31;
        self.note(Channel::Msi, &[u32::from(v), 0, 0, 0]);
        self.stats.msi += 1;
        if !self.bus_master {
            // An MSI is a memory write: not sent without bus mastering.
            return self.fault(
                MSI_WINDOW | u64::from(v) << 2,
                4,
                true,
                self.inp.cfg_requester_id,
                v,
            );
        }
        let due = self.cycle + self.delay();
        self.posted.push(PostedKind::Msi(v), false, self.cycle, due);
        self.stats.max_posted_pending = self.stats.max_posted_pending.max(self.posted.len());
    }

    // ------------------------------------------------------------------
    // NIC -> host: DMA read requests, host -> NIC: their completions

    fn rd_req(&mut self) {
        let hdr = self.out.tx_rd_req_hdr;
        self.note(Channel::TxRdReq, &hdr);
        self.stats.tx_rd_req.tlps += 1;
        let ch = Channel::TxRdReq;
        let h = ReqHeader::decode(&hdr);
        if h.dw0.typ != TYPE_MEM || h.dw0.has_data() {
            return self.error(
                ch,
                hdr,
                format!(
                    "not a MemRd (fmt {:03b} type {:05b}); dropped",
                    h.dw0.fmt, h.dw0.typ
                ),
            );
        }
        if self.reads.tag_busy(h.tag) {
            return self.error(
                ch,
                hdr,
                format!("MemRd tag {} reused while still in flight; dropped", h.tag),
            );
        }
        if h.dw0.is_4dw() && h.addr < 1 << 32 {
            self.error(ch, hdr, "4DW MemRd header for an address below 4 GiB");
        }
        if h.requester_id != self.inp.cfg_requester_id {
            self.error(
                ch,
                hdr,
                format!(
                    "MemRd requester ID {:#06x} is not cfg_requester_id",
                    h.requester_id
                ),
            );
        }
        let mrrs = size_from_code(self.inp.cfg_max_read_req);
        let malformed = if h.dw0.td || h.dw0.ep || h.dw0.th {
            Some("MemRd with TD, EP or TH set".to_string())
        } else if h.addr & 3 != 0 {
            Some("MemRd address bits 1:0 are not zero".into())
        } else if let Err(e) = check_byte_enables(h.dw0.length_dw, h.first_be, h.last_be, h.addr) {
            Some(format!("MemRd: {e}"))
        } else if h.dw0.length_dw * 4 > mrrs {
            Some(format!(
                "MemRd of {} B above MRRS {mrrs} B",
                h.dw0.length_dw * 4
            ))
        } else if (h.addr % tlp::PAGE) + u64::from(h.dw0.length_dw) * 4 > tlp::PAGE {
            Some("MemRd crosses a 4 KiB boundary".into())
        } else {
            None
        };
        let zero_length = h.dw0.length_dw == 1 && h.first_be == 0;
        let first = h.first_byte_addr();
        let bc = h.byte_count();
        let mut error_status = None;
        let mut host = None;
        if let Some(m) = malformed {
            self.error(ch, hdr, format!("{m}; answered with UR"));
            error_status = Some(CPL_UR);
        } else if let Some(m) = self
            .iommu
            .lookup_for(first, u64::from(bc), false)
            .filter(|_| self.bus_master)
        {
            if !zero_length {
                host = Some((m.host_ptr(first), m.memory().clone()));
            }
        } else {
            self.fault(first, u64::from(bc), false, h.requester_id, h.tag);
            error_status = Some(CPL_UR);
        }
        if error_status.is_none() {
            self.stats.tx_rd_req.bytes += if zero_length { 0 } else { u64::from(bc) };
        }
        let jitter = if self.cfg.read_jitter > 0 {
            self.rng.gen_range(0..=self.cfg.read_jitter)
        } else {
            0
        };
        self.reads.push(PendingRead {
            tag: h.tag,
            requester_id: h.requester_id,
            tc: h.dw0.tc,
            ro: h.dw0.ro,
            ns: h.dw0.ns,
            ido: h.dw0.ido,
            arrived: self.cycle,
            ready_at: self.cycle + self.cfg.read_latency + jitter,
            writes_before: self.posted.next_seq(),
            next_addr: first,
            remaining: bc,
            error_status,
            zero_length,
            host,
        });
        self.stats.max_reads_in_flight = self.stats.max_reads_in_flight.max(self.reads.len());
    }

    /// Pick the next completion (if any may go now) and present its first beat.
    fn start_completion(&mut self) {
        let Some(i) = self.reads.pick(
            self.cycle,
            self.posted.oldest_pending(),
            self.cfg.reorder,
            &mut self.rng,
        ) else {
            return;
        };
        let mps = size_from_code(self.inp.cfg_max_payload);
        let rcb = self.cfg.rcb;
        let host_id = self.cfg.host_id;
        let r = self.reads.get_mut(i);
        let mut dw0 = Dw0 {
            tc: r.tc,
            ro: r.ro,
            ns: r.ns,
            ido: r.ido,
            typ: TYPE_CPL,
            ..Dw0::default()
        };
        let mut c = CplHeader {
            completer_id: host_id,
            status: CPL_SC,
            requester_id: r.requester_id,
            tag: r.tag,
            lower_addr: (r.next_addr & 0x7f) as u8,
            byte_count: r.remaining,
            ..CplHeader::default()
        };
        let out = &mut self.rx_cpl;
        out.bytes.clear();
        let finished;
        if let Some(st) = r.error_status {
            if st == CPL_UR {
                self.stats.unsupported_requests += 1;
            }
            dw0.fmt = FMT_3DW;
            dw0.length_dw = 0;
            c.status = st;
            out.n_dw = 0;
            finished = true;
        } else if r.zero_length {
            dw0.fmt = FMT_3DW_DATA;
            dw0.length_dw = 1;
            c.byte_count = 1;
            out.bytes.resize(4, 0);
            out.n_dw = 1;
            finished = true;
        } else {
            let rng = if self.cfg.reorder {
                Some(&mut self.rng)
            } else {
                None
            };
            let n = next_chunk_bytes(r.next_addr, r.remaining, mps, rcb, rng);
            let off = (r.next_addr & 3) as usize;
            let end = r.next_addr + u64::from(n);
            let n_dw = ((end.next_multiple_of(4) - (r.next_addr & !3)) / 4) as usize;
            out.bytes.resize(n_dw * 4, 0);
            if let Some((p, _)) = &mut r.host {
                // SAFETY: `p..p+n` lies inside the mapping that the request
                // passed the IOMMU check for; the Arc keeps it alive.
                unsafe {
                    std::ptr::copy_nonoverlapping(*p, out.bytes.as_mut_ptr().add(off), n as usize);
                    *p = p.add(n as usize);
                }
            }
            dw0.fmt = FMT_3DW_DATA;
            dw0.length_dw = n_dw as u32;
            out.n_dw = n_dw;
            r.next_addr = end;
            r.remaining -= n;
            finished = r.remaining == 0;
        }
        c.dw0 = dw0;
        out.hdr = c.encode();
        out.pos = 0;
        out.active = true;
        self.stats.rx_cpl.tlps += 1;
        self.stats.rx_cpl.bytes += (out.n_dw * 4) as u64;
        if finished {
            self.reads.finish(i);
        }
        let h = self.rx_cpl.hdr;
        self.note(Channel::RxCpl, &h);
        self.inp.rx_cpl_hdr = h;
        self.load_cpl_beat();
        self.inp.rx_cpl_valid = 1;
    }

    fn load_cpl_beat(&mut self) {
        let o = &mut self.rx_cpl;
        let n = (o.n_dw - o.pos).min(self.lanes);
        for k in 0..self.lanes {
            self.inp.rx_cpl_data[k] = if k < n {
                let b = (o.pos + k) * 4;
                u32::from_le_bytes([o.bytes[b], o.bytes[b + 1], o.bytes[b + 2], o.bytes[b + 3]])
            } else {
                0
            };
        }
        self.inp.rx_cpl_keep = if n >= 32 { u32::MAX } else { (1u32 << n) - 1 };
        o.pos += n;
        self.inp.rx_cpl_last = u8::from(o.pos >= o.n_dw);
    }

    // ------------------------------------------------------------------
    // NIC -> host: completions of MMIO reads

    fn cpl_beat(&mut self) {
        let last = self.out.tx_cpl_last != 0;
        let done = Self::collect(
            &mut self.tx_cpl,
            self.lanes,
            self.full_keep,
            &self.out.tx_cpl_hdr,
            &self.out.tx_cpl_data,
            self.out.tx_cpl_keep,
            last,
        );
        if done {
            self.finish_mmio_cpl();
        }
    }

    fn finish_mmio_cpl(&mut self) {
        let hdr = self.tx_cpl.hdr;
        self.note(Channel::TxCpl, &hdr);
        self.stats.tx_cpl.tlps += 1;
        self.stats.tx_cpl.bytes += 4 * self.tx_cpl.dws.len() as u64;
        let ch = Channel::TxCpl;
        let c = CplHeader::decode(&hdr);
        if c.dw0.typ != TYPE_CPL || c.dw0.is_4dw() {
            return self.error(
                ch,
                hdr,
                format!(
                    "not a completion (fmt {:03b} type {:05b})",
                    c.dw0.fmt, c.dw0.typ
                ),
            );
        }
        let Some(i) = self
            .mmio_reads
            .iter()
            .position(|r| r.tag == c.tag && r.result.is_none())
        else {
            return self.error(
                ch,
                hdr,
                format!(
                    "completion with tag {} but no MMIO read is outstanding with it",
                    c.tag
                ),
            );
        };
        let offset = self.mmio_reads[i].offset;
        let mut problems: Vec<String> = Vec::new();
        if let Some(e) = self.tx_cpl.err.take() {
            problems.push(e);
        }
        if c.requester_id != self.cfg.host_id {
            problems.push(format!(
                "requester ID {:#06x} is not the host's {:#06x}",
                c.requester_id, self.cfg.host_id
            ));
        }
        if c.completer_id != self.inp.cfg_requester_id {
            problems.push(format!(
                "completer ID {:#06x} is not cfg_requester_id",
                c.completer_id
            ));
        }
        if c.dw0.td || c.dw0.ep {
            problems.push("TD or EP set".into());
        }
        let result = if c.status != CPL_SC {
            if c.dw0.has_data() {
                problems.push(format!("CplD with status {}", c.status));
            }
            Err(DeviceError::MmioCompletion {
                offset,
                status: c.status,
            })
        } else {
            if !c.dw0.has_data() {
                problems.push("successful completion without data (Cpl instead of CplD)".into());
            } else {
                if c.dw0.length_dw != 1 {
                    problems.push(format!("length {} DW, expected 1", c.dw0.length_dw));
                }
                if self.tx_cpl.dws.len() != 1 {
                    problems.push(format!(
                        "{} payload dwords, expected 1",
                        self.tx_cpl.dws.len()
                    ));
                }
            }
            if c.byte_count != 4 {
                problems.push(format!("byte count {}, expected 4", c.byte_count));
            }
            if u64::from(c.lower_addr) != (self.cfg.bar0_addr + offset) & 0x7f {
                problems.push(format!(
                    "lower address {:#x}, expected {:#x}",
                    c.lower_addr,
                    offset & 0x7f
                ));
            }
            match self.tx_cpl.dws.first() {
                Some(&v) if problems.is_empty() => Ok(v),
                _ => Err(DeviceError::Other(format!(
                    "malformed completion to the MMIO read of {offset:#x}: {}",
                    problems.join("; ")
                ))),
            }
        };
        if !problems.is_empty() {
            self.error(
                ch,
                hdr,
                format!("MMIO read of {offset:#x}: {}", problems.join("; ")),
            );
        }
        if self.mmio_reads[i].abandoned {
            self.mmio_reads.remove(i);
        } else {
            // RO=1 lets the completion pass earlier posted writes.
            self.mmio_reads[i].writes_before = if c.dw0.ro { 0 } else { self.posted.next_seq() };
            self.mmio_reads[i].result = Some(result);
        }
    }
}
