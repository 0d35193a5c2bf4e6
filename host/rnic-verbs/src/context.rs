//! The device context: opening the NIC, device and port attributes, and the
//! resource tables shared by every verbs object of one NIC.

use std::cell::RefCell;
use std::collections::BTreeSet;
use std::net::{Ipv4Addr, Ipv6Addr};
use std::rc::Rc;

use rnic_device::{Device, DeviceError, DmaBuffer};
use rnic_driver::{DriverError, Nic, MAX_RING_ENTRIES};
use rnic_regs::DeviceIo;

use crate::error::{Result, VerbsError};
use crate::{MAX_MR, MAX_MSG_SIZE, MAX_PD, MAX_RD_ATOMIC, MAX_SGE};

/// Path MTU, numbered as libibverbs' `enum ibv_mtu` (and `qp_attr.pmtu`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
#[repr(u8)]
pub enum Mtu {
    Mtu256 = 1,
    Mtu512 = 2,
    #[default]
    Mtu1024 = 3,
    Mtu2048 = 4,
    Mtu4096 = 5,
}

impl Mtu {
    /// Payload bytes per packet.
    pub fn bytes(self) -> u32 {
        128 << (self as u32)
    }

    /// The MTU of `n` payload bytes per packet (256..4096, a power of two).
    pub fn from_bytes(n: u32) -> Option<Self> {
        Some(match n {
            256 => Mtu::Mtu256,
            512 => Mtu::Mtu512,
            1024 => Mtu::Mtu1024,
            2048 => Mtu::Mtu2048,
            4096 => Mtu::Mtu4096,
            _ => return None,
        })
    }

    pub fn from_raw(v: u8) -> Option<Self> {
        Some(match v {
            1 => Self::Mtu256,
            2 => Self::Mtu512,
            3 => Self::Mtu1024,
            4 => Self::Mtu2048,
            5 => Self::Mtu4096,
            _ => return None,
        })
    }
}

/// Largest path MTU the NIC supports (its packet payload RAMs hold 4096
/// bytes). Frames of a 4096-byte MTU need a link with jumbo frames.
pub const PORT_MAX_MTU: Mtu = Mtu::Mtu4096;

/// Port state (`enum ibv_port_state`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PortState {
    Down,
    Init,
    Armed,
    Active,
}

/// Link layer of the port.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LinkLayer {
    Ethernet,
}

/// Atomic operation support (`enum ibv_atomic_cap`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AtomicCap {
    /// `IBV_ATOMIC_NONE`: no atomics (a build without `id.caps` bit 9).
    None,
    /// `IBV_ATOMIC_HCA`: atomics are atomic with respect to other atomics
    /// through this NIC (not to CPU accesses). An ATOMIC_EN build
    /// (`id.caps` bit 9) executes CMP_AND_SWP and FETCH_AND_ADD (8 bytes)
    /// as a responder; the requester does not issue them yet.
    Hca,
}

/// What `ibv_query_device` reports, for this NIC.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeviceAttr {
    /// Firmware (bitstream) version "major.minor.patch" from the ID block.
    pub fw_ver: String,
    /// EUI-64 derived from the port MAC (0 while the MAC is unset).
    pub node_guid: u64,
    pub sys_image_guid: u64,
    pub max_mr_size: u64,
    pub page_size_cap: u64,
    pub vendor_id: u32,
    /// The board identifier (0 = simulation).
    pub vendor_part_id: u32,
    /// First 8 hex digits of the git commit of the bitstream.
    pub hw_ver: u32,
    /// Number of queue pairs: the queue manager's queue count.
    pub max_qp: u32,
    pub max_qp_wr: u32,
    pub max_sge: u32,
    pub max_sge_rd: u32,
    pub max_cq: u32,
    pub max_cqe: u32,
    /// Memory regions registered at once: the NIC's MR table (`id.mrs`),
    /// at most [`MAX_MR`]; [`MAX_MR`] on a build older than `id.mrs`.
    pub max_mr: u32,
    pub max_pd: u32,
    /// Incoming RDMA READ and atomic requests a QP may have outstanding
    /// (the `max_dest_rd_atomic` limit): [`crate::MAX_DEST_RD_ATOMIC`] on a
    /// build that serves READ (`id.caps` bit 7), else 0. Atomics share the
    /// responder's READ resources.
    pub max_qp_rd_atom: u32,
    /// Outstanding RDMA READs a QP may issue (the `max_rd_atomic` limit):
    /// [`MAX_RD_ATOMIC`] on a build that issues READ (`id.caps` bit 8),
    /// else 0. The requester issues no atomics yet.
    pub max_qp_init_rd_atom: u32,
    /// Incoming RDMA READ and atomic requests the responder holds for all
    /// QPs together: [`crate::MAX_DEST_RD_ATOMIC`] on a build that serves
    /// READ, else 0. Atomics share these READ resources.
    pub max_res_rd_atom: u32,
    /// [`AtomicCap::Hca`] on a build that executes atomics as a responder
    /// (`id.caps` bit 9), else [`AtomicCap::None`].
    pub atomic_cap: AtomicCap,
    pub phys_port_cnt: u8,
    pub max_pkeys: u16,
    /// Width of the NIC's data path in bits.
    pub data_w: u32,
    /// The ID block's verb-set word.
    pub verbs: u32,
    /// The ID block's capability word.
    pub caps: u32,
}

/// What `ibv_query_port` reports, for the NIC's one Ethernet port.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PortAttr {
    /// Always `Active`: the NIC has no link-state register yet.
    pub state: PortState,
    pub max_mtu: Mtu,
    pub active_mtu: Mtu,
    pub gid_tbl_len: u32,
    pub pkey_tbl_len: u16,
    pub max_msg_sz: u32,
    pub link_layer: LinkLayer,
    /// The port's MAC address (`port.mac_hi/lo`).
    pub mac: [u8; 6],
    /// The port's IPv4 address (`port.ipv4`).
    pub ipv4: Ipv4Addr,
    /// GID 0: the RoCEv2 GID of the IPv4 address (`::ffff:a.b.c.d`).
    pub gid: Ipv6Addr,
}

/// The on-chip loopback and fault injection ([`Context::set_port_faults`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PortFaults {
    pub loopback: bool,
    /// Probability a transmitted frame is dropped (0..1).
    pub drop_rate: f64,
    /// Probability a transmitted frame is held back behind the next (0..1).
    pub reorder_rate: f64,
    /// Seed of the fault draw (a run repeats from it).
    pub seed: u32,
}

impl Default for PortFaults {
    fn default() -> Self {
        Self {
            loopback: false,
            drop_rate: 0.0,
            reorder_rate: 0.0,
            seed: 1,
        }
    }
}

/// The port block's frame and drop counters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PortCounters {
    /// Frames the on-chip fault injection dropped / held back.
    pub lb_dropped: u32,
    pub lb_reordered: u32,
    pub tx_frames: u32,
    pub rx_frames: u32,
    pub rx_drop_icrc: u32,
    pub rx_drop_malformed: u32,
    pub rx_drop_nobuf: u32,
    pub rx_drop_qp: u32,
    pub rx_drop_psn: u32,
    /// NAKs sent: the responder's (invalid request, remote access, remote
    /// operational error) and the READ engine's for a failed payload read.
    pub rx_nak: u32,
    /// RDMA READ requests accepted and handed to the READ engine (a
    /// duplicate READ answered again too; refused READs count in `rx_nak`).
    pub rx_read_req: u32,
    /// READ RESPONSE packets sent (FIRST, MIDDLE, LAST, ONLY).
    pub tx_read_resp: u32,
    /// READ RESPONSE packets placed for this NIC's own RDMA READs.
    pub rx_read_resp: u32,
    /// Atomic requests (CMP_AND_SWP, FETCH_AND_ADD) executed by the
    /// responder (an ATOMIC_EN build; refused atomics count in `rx_nak`).
    pub rx_atomic: u32,
    /// Duplicate atomic requests answered from the replay record (memory
    /// untouched; a duplicate whose record is gone counts in
    /// `rx_drop_psn`).
    pub rx_atomic_replay: u32,
    /// New READ and atomic requests beyond their QP's
    /// `max_dest_rd_atomic`, NAKed with invalid request.
    pub rx_rd_over: u32,
    /// Packets sent again by go-back-N.
    pub tx_retransmits: u32,
    /// Local ACK timeouts that expired.
    pub rtx_timeouts: u32,
    /// PSN-sequence NAKs received.
    pub rx_nak_seq: u32,
    /// RNR NAKs received.
    pub rx_rnr_nak: u32,
    /// Payload writes the MR re-check in front of the DMA write engine refused.
    pub rx_drop_guard: u32,
    /// Packets of the other transport dropped: an mp opcode for an rc QP,
    /// or an RC opcode for an mp QP (never placed).
    pub rx_drop_transport: u32,
    /// mp WRITE_WITH_IMMs that overtook an earlier packet and found no
    /// deferred-completion slot (the QP's `id.mp_wimm` taken, or every
    /// shared slot): dropped unplaced, resent.
    pub rx_drop_wimm: u32,
    /// Cycles during which every outstanding-WQE ring was in use.
    pub ring_busy_cycles: u32,
    /// Path health: sprayed paths taken out of a QP's use.
    pub path_takeouts: u32,
    /// Path health: paths a probe brought back.
    pub path_comebacks: u32,
    /// Path health: MP PROBEs sent (data-less probes of an mp QP's paths).
    pub path_probes: u32,
    /// Path health: the round trip, in cycles, of the last MP PROBE that
    /// was answered (0 before the first).
    pub path_probe_rtt: u32,
}

/// `(hi, lo)` register words of a MAC address: bytes 0..1 in `hi` (byte 0
/// in bits 15:8), bytes 2..5 in `lo` (byte 5 in bits 7:0).
pub(crate) fn mac_to_regs(mac: [u8; 6]) -> (u16, u32) {
    (
        u16::from_be_bytes([mac[0], mac[1]]),
        u32::from_be_bytes([mac[2], mac[3], mac[4], mac[5]]),
    )
}

pub(crate) fn mac_from_regs(hi: u16, lo: u32) -> [u8; 6] {
    let h = hi.to_be_bytes();
    let l = lo.to_be_bytes();
    [h[0], h[1], l[0], l[1], l[2], l[3]]
}

/// Protection-domain numbers: a counter from 1 (0 is never handed out, so
/// a zeroed table entry matches no PD), skipping numbers still in use.
struct PdAlloc {
    next: u16,
    live: BTreeSet<u16>,
}

impl PdAlloc {
    fn alloc(&mut self) -> Option<u16> {
        for _ in 0..=u16::MAX {
            let n = self.next;
            self.next = self.next.checked_add(1).unwrap_or(1);
            if n != 0 && self.live.insert(n) {
                return Some(n);
            }
        }
        None
    }
}

/// MR table entries the host may use on a NIC whose ID block reports
/// `nic_mrs` (`id.mrs`): that many, at most [`MAX_MR`]. A build older than
/// the register reads 0 there (an unused BAR0 word reads 0): its size is
/// unknown, so the host tries all [`MAX_MR`] as before, and that build
/// refuses an index beyond its table at the register command
/// ([`DriverError::Refused`]).
pub(crate) fn mr_entries(nic_mrs: u32) -> u32 {
    if nic_mrs == 0 {
        MAX_MR
    } else {
        nic_mrs.min(MAX_MR)
    }
}

/// The host's view of the NIC's MR table: which indices are in use and the
/// generation (key bits 7:0) each index handed out last.
pub(crate) struct MrTable {
    used: Vec<bool>,
    generation: Vec<u8>,
}

impl MrTable {
    fn new(entries: u32) -> Self {
        Self {
            used: vec![false; entries as usize],
            generation: vec![0; entries as usize],
        }
    }

    /// Entries the table has (what a registration beyond is refused at).
    pub(crate) fn entries(&self) -> u32 {
        self.used.len() as u32
    }

    /// Lowest free index and its new key (`index << 8 | generation`, the
    /// generation cycling through 1..=255 so no key is ever 0).
    pub(crate) fn alloc(&mut self) -> Option<(u16, u32)> {
        let i = self.used.iter().position(|u| !u)?;
        self.used[i] = true;
        let g = match self.generation[i] {
            255 => 1,
            g => g + 1,
        };
        self.generation[i] = g;
        Some((i as u16, (i as u32) << 8 | u32::from(g)))
    }

    pub(crate) fn free(&mut self, index: u16) {
        if let Some(u) = self.used.get_mut(usize::from(index)) {
            *u = false;
        }
    }

    pub(crate) fn in_use(&self) -> usize {
        self.used.iter().filter(|u| **u).count()
    }
}

/// State shared by a context and every object created from it.
pub(crate) struct Shared<D: Device> {
    pub(crate) nic: Nic<D>,
    pds: RefCell<PdAlloc>,
    pub(crate) mrs: RefCell<MrTable>,
}

impl<D: Device> Shared<D> {
    /// Runs register writes that end in a command, and reports the command
    /// as refused when the NIC's error counter moved meanwhile.
    pub(crate) fn command(
        &self,
        f: impl FnOnce(&DeviceIo<'_, D>) -> std::result::Result<(), DeviceError>,
    ) -> Result<()> {
        let before = self.nic.error_status()?.count;
        f(&self.nic.io())?;
        let st = self.nic.error_status()?;
        if st.count != before {
            return Err(DriverError::Refused {
                code: st.code,
                qn: st.qn,
            }
            .into());
        }
        Ok(())
    }

    pub(crate) fn free_pd(&self, pdn: u16) {
        self.pds.borrow_mut().live.remove(&pdn);
    }
}

/// An opened NIC (`ibv_context`). Every object created from it keeps the
/// shared state alive; the NIC is closed when the last one is dropped.
///
/// Not `Send`: verbs objects of one context share it through `Rc`, like the
/// [`Nic`] they wrap. Use one context per thread.
pub struct Context<D: Device> {
    pub(crate) shared: Rc<Shared<D>>,
}

impl<D: Device> Context<D> {
    /// Opens the NIC behind `dev` (checks the magic, reads the ID block).
    pub fn open(dev: D) -> Result<Self> {
        Ok(Self::from_nic(Nic::open(dev)?))
    }

    /// A context over an already opened queue layer.
    pub fn from_nic(nic: Nic<D>) -> Self {
        let mrs = MrTable::new(mr_entries(nic.id().mrs));
        Self {
            shared: Rc::new(Shared {
                nic,
                pds: RefCell::new(PdAlloc {
                    next: 1,
                    live: BTreeSet::new(),
                }),
                mrs: RefCell::new(mrs),
            }),
        }
    }

    /// The queue layer underneath (error registers, debug switches).
    pub fn nic(&self) -> &Nic<D> {
        &self.shared.nic
    }

    /// The device backend.
    pub fn device(&self) -> &D {
        self.shared.nic.device()
    }

    /// Allocates DMA memory the NIC can reach (zeroed, page aligned), to
    /// register with [`Context::reg_mr`].
    pub fn alloc_dma(&self, len: usize) -> Result<DmaBuffer> {
        Ok(self.device().alloc_dma(len)?)
    }

    /// Puts every QP created from now on in host memory behind the NIC's
    /// context cache (issue 19): opens a context table of `records`
    /// records (QP numbers below it) and gives the NIC every slot above
    /// the queues created so far, misses fetching. `max_qp` becomes the
    /// table's capacity. Returns the cache's first slot.
    pub fn enable_qp_cache(&self, records: u32) -> Result<u16> {
        Ok(self.shared.nic.enable_qp_cache(records)?)
    }

    /// `ibv_query_device`.
    pub fn query_device(&self) -> Result<DeviceAttr> {
        let id = self.shared.nic.id();
        let port = self.query_port()?;
        let node_guid = if port.mac == [0; 6] {
            0
        } else {
            let m = port.mac;
            u64::from_be_bytes([m[0] ^ 2, m[1], m[2], 0xff, 0xfe, m[3], m[4], m[5]])
        };
        // READ served as responder (id.caps bit 7); atomics (bit 9) share
        // the responder's READ resources
        let dest_rd = if crate::serves_read(id.caps) {
            u32::from(crate::MAX_DEST_RD_ATOMIC)
        } else {
            0
        };
        Ok(DeviceAttr {
            fw_ver: format!(
                "{}.{}.{}",
                id.build_version >> 24,
                (id.build_version >> 16) & 0xff,
                id.build_version & 0xffff
            ),
            node_guid,
            sys_image_guid: node_guid,
            max_mr_size: u64::from(u32::MAX),
            page_size_cap: 4096,
            vendor_id: 0,
            vendor_part_id: id.board_id,
            hw_ver: id.git_hash,
            max_qp: match self.shared.nic.cached_qp_capacity() {
                0 => id.num_queues,
                n => n,
            },
            max_qp_wr: MAX_RING_ENTRIES,
            max_sge: MAX_SGE,
            max_sge_rd: 0,
            max_cq: id.num_queues,
            max_cqe: MAX_RING_ENTRIES,
            max_mr: self.shared.mrs.borrow().entries(),
            max_pd: MAX_PD,
            max_qp_rd_atom: dest_rd,
            max_qp_init_rd_atom: if crate::issues_read(id.caps) {
                u32::from(MAX_RD_ATOMIC)
            } else {
                0
            },
            max_res_rd_atom: dest_rd,
            atomic_cap: if crate::serves_atomic(id.caps) {
                AtomicCap::Hca
            } else {
                AtomicCap::None
            },
            phys_port_cnt: 1,
            max_pkeys: 1,
            data_w: id.data_w,
            verbs: id.verbs,
            caps: id.caps,
        })
    }

    /// `ibv_query_port` for the one port: MTU, and the MAC and IPv4 address
    /// read from the port block.
    pub fn query_port(&self) -> Result<PortAttr> {
        let io = self.shared.nic.io();
        let port = io.csr().port();
        let lo = port.mac_lo().try_read()?.addr();
        let hi = port.mac_hi().try_read()?.addr();
        let ipv4 = Ipv4Addr::from(port.ipv4().try_read()?.addr());
        Ok(PortAttr {
            state: PortState::Active,
            max_mtu: PORT_MAX_MTU,
            active_mtu: PORT_MAX_MTU,
            gid_tbl_len: 1,
            pkey_tbl_len: 1,
            max_msg_sz: MAX_MSG_SIZE,
            link_layer: LinkLayer::Ethernet,
            mac: mac_from_regs(hi, lo),
            ipv4,
            gid: ipv4.to_ipv6_mapped(),
        })
    }

    /// Sets the port's own MAC and IPv4 address (the source of every frame,
    /// and what received frames must be addressed to).
    pub fn set_port_addr(&self, mac: [u8; 6], ipv4: Ipv4Addr) -> Result<()> {
        if mac[0] & 1 != 0 {
            return Err(VerbsError::InvalidArgument(format!(
                "port MAC {} is a multicast address",
                fmt_mac(mac)
            )));
        }
        if ipv4.is_multicast() || ipv4.is_broadcast() {
            return Err(VerbsError::InvalidArgument(format!(
                "port address {ipv4} is not a unicast address"
            )));
        }
        let (hi, lo) = mac_to_regs(mac);
        let io = self.shared.nic.io();
        let port = io.csr().port();
        port.mac_lo().try_write(|r| r.set_addr(lo))?;
        port.mac_hi().try_write(|r| r.set_addr(hi))?;
        port.ipv4().try_write(|r| r.set_addr(u32::from(ipv4)))?;
        Ok(())
    }

    /// rnic extension: the on-chip loopback and fault injection between the
    /// NIC and its Ethernet port (`port.lb_*`). With `loopback` every frame
    /// this NIC sends comes back to its own receive side (QPs of this NIC
    /// talk to each other; a board needs no cable or peer); the rates are
    /// per transmitted frame (drop; hold back behind the next frame).
    pub fn set_port_faults(&self, f: &PortFaults) -> Result<()> {
        let thr = |name: &str, r: f64| -> Result<u16> {
            if !(0.0..1.0).contains(&r) {
                return Err(VerbsError::InvalidArgument(format!(
                    "{name} rate {r}: must be in 0..1"
                )));
            }
            Ok((r * 65536.0).round().min(65535.0) as u16)
        };
        let (drop, reorder) = (thr("drop", f.drop_rate)?, thr("reorder", f.reorder_rate)?);
        let io = self.shared.nic.io();
        let port = io.csr().port();
        port.lb_seed().try_write(|r| r.set_seed(f.seed))?;
        port.lb_drop().try_write(|r| r.set_thr(drop))?;
        port.lb_reorder().try_write(|r| r.set_thr(reorder))?;
        port.lb_ctrl().try_write(|r| r.set_loopback(f.loopback))?;
        Ok(())
    }

    /// rnic extension: path health of sprayed QPs, for the whole NIC
    /// (`port.path_cfg`). A path is taken out of a QP's use at its
    /// `thresh`-th loss in one epoch (16,384 cycles): 1 (the reset value)
    /// fails over fastest from a path that dies, 2 does slightly better
    /// under random loss alone, 3; 0 turns path health off (paths out come
    /// back at their next probe, none goes out).
    pub fn set_path_thresh(&self, thresh: u8) -> Result<()> {
        if thresh > 3 {
            return Err(VerbsError::InvalidArgument(format!(
                "path health threshold {thresh}: must be 0 (off) to 3"
            )));
        }
        let io = self.shared.nic.io();
        io.csr()
            .port()
            .path_cfg()
            .try_write(|r| r.set_thresh(thresh))?;
        Ok(())
    }

    /// The path health threshold in force (see [`Self::set_path_thresh`]).
    pub fn path_thresh(&self) -> Result<u8> {
        let io = self.shared.nic.io();
        Ok(io.csr().port().path_cfg().try_read()?.thresh())
    }

    /// The port block's frame and drop counters.
    pub fn query_port_counters(&self) -> Result<PortCounters> {
        let io = self.shared.nic.io();
        let p = io.csr().port();
        Ok(PortCounters {
            tx_frames: p.tx_frames().try_read()?.value(),
            rx_frames: p.rx_frames().try_read()?.value(),
            rx_drop_icrc: p.rx_drop_icrc().try_read()?.value(),
            rx_drop_malformed: p.rx_drop_malformed().try_read()?.value(),
            rx_drop_nobuf: p.rx_drop_nobuf().try_read()?.value(),
            rx_drop_qp: p.rx_drop_qp().try_read()?.value(),
            rx_drop_psn: p.rx_drop_psn().try_read()?.value(),
            rx_nak: p.rx_nak().try_read()?.value(),
            rx_read_req: p.rx_read_req().try_read()?.value(),
            tx_read_resp: p.tx_read_resp().try_read()?.value(),
            rx_read_resp: p.rx_read_resp().try_read()?.value(),
            rx_atomic: p.rx_atomic().try_read()?.value(),
            rx_atomic_replay: p.rx_atomic_replay().try_read()?.value(),
            rx_rd_over: p.rx_rd_over().try_read()?.value(),
            tx_retransmits: p.tx_retransmits().try_read()?.value(),
            rtx_timeouts: p.rtx_timeouts().try_read()?.value(),
            rx_nak_seq: p.rx_nak_seq().try_read()?.value(),
            rx_rnr_nak: p.rx_rnr_nak().try_read()?.value(),
            rx_drop_guard: p.rx_drop_guard().try_read()?.value(),
            rx_drop_transport: p.rx_drop_transport().try_read()?.value(),
            rx_drop_wimm: p.rx_drop_wimm().try_read()?.value(),
            ring_busy_cycles: p.ring_busy_cycles().try_read()?.value(),
            path_takeouts: p.path_takeouts().try_read()?.value(),
            path_comebacks: p.path_comebacks().try_read()?.value(),
            path_probes: p.path_probes().try_read()?.value(),
            path_probe_rtt: u32::from(p.path_probe_rtt().try_read()?.cycles()),
            lb_dropped: p.lb_dropped().try_read()?.value(),
            lb_reordered: p.lb_reordered().try_read()?.value(),
        })
    }

    /// `ibv_alloc_pd`: a new protection-domain number.
    pub fn alloc_pd(&self) -> Result<crate::ProtectionDomain<D>> {
        let pdn = self
            .shared
            .pds
            .borrow_mut()
            .alloc()
            .ok_or(VerbsError::NoPdNumber(MAX_PD))?;
        Ok(crate::pd::ProtectionDomain::new(self.shared.clone(), pdn))
    }

    /// Number of MR table entries in use.
    pub fn mr_count(&self) -> usize {
        self.shared.mrs.borrow().in_use()
    }
}

pub(crate) fn fmt_mac(m: [u8; 6]) -> String {
    format!(
        "{:02x}:{:02x}:{:02x}:{:02x}:{:02x}:{:02x}",
        m[0], m[1], m[2], m[3], m[4], m[5]
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mac_register_layout() {
        let mac = [0x02, 0x11, 0x22, 0x33, 0x44, 0x55];
        assert_eq!(mac_to_regs(mac), (0x0211, 0x2233_4455));
        assert_eq!(mac_from_regs(0x0211, 0x2233_4455), mac);
    }

    #[test]
    fn mtu_values() {
        assert_eq!(Mtu::Mtu256.bytes(), 256);
        assert_eq!(Mtu::Mtu4096.bytes(), 4096);
        assert_eq!(Mtu::from_raw(3), Some(Mtu::Mtu1024));
        assert_eq!(Mtu::from_raw(0), None);
        assert_eq!(Mtu::from_raw(6), None);
    }

    #[test]
    fn pd_numbers_skip_zero_and_live_ones() {
        let mut a = PdAlloc {
            next: u16::MAX,
            live: BTreeSet::from([1]),
        };
        assert_eq!(a.alloc(), Some(u16::MAX));
        assert_eq!(a.alloc(), Some(2));
        let mut full = PdAlloc {
            next: 1,
            live: (1..=u16::MAX).collect(),
        };
        assert_eq!(full.alloc(), None);
    }

    #[test]
    fn mr_keys_carry_index_and_generation() {
        let mut t = MrTable::new(MAX_MR);
        assert_eq!(t.alloc(), Some((0, 0x0001)));
        assert_eq!(t.alloc(), Some((1, 0x0101)));
        t.free(0);
        // Index 0 again, next generation: the old key 0x0001 is stale.
        assert_eq!(t.alloc(), Some((0, 0x0002)));
        t.generation[2] = 255;
        assert_eq!(t.alloc(), Some((2, 0x0201)));
        while t.alloc().is_some() {}
        assert_eq!(t.in_use(), MAX_MR as usize);
    }

    #[test]
    fn mr_entries_follow_the_nic_and_0_means_unknown() {
        assert_eq!(mr_entries(64), 64);
        assert_eq!(mr_entries(1), 1);
        assert_eq!(mr_entries(256), 256);
        assert_eq!(
            mr_entries(1000),
            MAX_MR,
            "never beyond the key's index field"
        );
        assert_eq!(mr_entries(0), MAX_MR, "a build older than id.mrs");
        let mut t = MrTable::new(mr_entries(2));
        assert_eq!(t.entries(), 2);
        assert_eq!(t.alloc(), Some((0, 0x0001)));
        assert_eq!(t.alloc(), Some((1, 0x0101)));
        assert_eq!(t.alloc(), None);
    }
}
