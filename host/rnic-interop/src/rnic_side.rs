//! rnic's end of an interop run: one simulated NIC whose port is fabric
//! endpoint 0 and the guest's NIC endpoint 1 (external port 0), so the
//! fabric's profiles (loss, reordering) apply between rnic and rxe; one RC
//! QP with one CQ and one registered buffer, driven through rnic's verbs.

use std::net::Ipv4Addr;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use rnic_device::DmaBuffer;
use rnic_harness::conn::{bring_up, ConnOpts, PortAddr, Remote, Retry};
use rnic_sim::{FabricStats, SimDevice, SimWorld, StreamPortStats, WorldConfig};
use rnic_verbs::{
    AccessFlags, AtomicOp, AtomicWr, CompletionQueue, Context, MemoryRegion, PortCounters,
    ProtectionDomain, QpCap, QpInitAttr, QpType, QueuePair, RecvWr, SendFlags, SendWr,
    WorkCompletion, WrOpcode,
};

use crate::guest::{CmdResult, Guest};
use crate::{InteropError, Result};

/// How rnic's side is built.
#[derive(Debug, Clone)]
pub struct RnicOpts {
    pub data_w: u32,
    pub seed: u64,
    /// Fabric profile between rnic and the guest.
    pub fabric: String,
    /// Capture every frame between them.
    pub pcap: Option<PathBuf>,
    /// rnic's ACK timeout exponent etc. The guest's replies take real
    /// milliseconds, i.e. thousands of simulated cycles each, so the
    /// default timeout (2^10 x 4.096 us = 1 M cycles) is far longer than
    /// between two simulated NICs.
    pub retry: Retry,
    pub addr: PortAddr,
    /// Registered buffer size (bytes).
    pub buf_len: usize,
    pub sq_depth: u32,
    pub rq_depth: u32,
    /// Grant REMOTE_ATOMIC on the region and the QP, so that the guest's
    /// atomics are executed (needs a build that executes atomics:
    /// `atomic_cap` HCA, rnic_core `ATOMIC_EN`; otherwise [`Rnic::new`]
    /// fails saying so).
    pub remote_atomic: bool,
}

impl Default for RnicOpts {
    fn default() -> Self {
        Self {
            data_w: 64,
            seed: 1,
            fabric: "ideal".into(),
            pcap: None,
            retry: Retry {
                timeout: 10,
                retry_cnt: 7,
                rnr_retry: 7,
                min_rnr_timer: 12,
            },
            addr: PortAddr {
                mac: [0x02, 0, 0, 0, 0, 0x01],
                ip: Ipv4Addr::new(192, 168, 77, 1),
            },
            buf_len: 1 << 20,
            sq_depth: 64,
            rq_depth: 64,
            remote_atomic: false,
        }
    }
}

/// The simulated NIC with one QP.
pub struct Rnic {
    pub world: SimWorld,
    pub ctx: Context<SimDevice>,
    pub pd: ProtectionDomain<SimDevice>,
    pub cq: CompletionQueue<SimDevice>,
    pub qp: QueuePair<SimDevice>,
    pub buf: DmaBuffer,
    pub mr: MemoryRegion<SimDevice>,
    pub opts: RnicOpts,
    /// The PSN rnic's QP starts sending with.
    pub sq_psn: u32,
    /// Incoming RDMA READs the QP grants outstanding (`max_dest_rd_atomic`
    /// at RTR): the device's `max_qp_rd_atom`, 0 on a build without the
    /// READ responder (`READ_EN=0`).
    pub max_dest_rd_atomic: u8,
    /// RDMA READs the QP may have outstanding as the requester
    /// (`max_rd_atomic` at RTS): the device's `max_qp_init_rd_atom`, 0 on a
    /// build that does not issue READ.
    pub max_rd_atomic: u8,
    /// The QP's remote access (REMOTE_WRITE, REMOTE_READ, and
    /// REMOTE_ATOMIC if [`RnicOpts::remote_atomic`]).
    pub qp_access: AccessFlags,
    started: Instant,
}

impl Rnic {
    pub fn new(o: &RnicOpts) -> Result<Self> {
        let fabric = rnic_sim::FabricConfig::profile(&o.fabric)?;
        let world = SimWorld::new(WorldConfig {
            nics: 1,
            external_ports: 1,
            data_w: o.data_w,
            seed: o.seed,
            fabric,
            pcap: o.pcap.clone(),
            ..WorldConfig::default()
        })?;
        let ctx = Context::open(world.device(0))?;
        ctx.set_port_addr(o.addr.mac, o.addr.ip)?;
        let dev_attr = ctx.query_device()?;
        let mut qp_access = AccessFlags::REMOTE_WRITE | AccessFlags::REMOTE_READ;
        if o.remote_atomic {
            if dev_attr.atomic_cap != rnic_verbs::AtomicCap::Hca {
                return Err(InteropError::Failed(
                    "this rnic build executes no atomics (atomic_cap IBV_ATOMIC_NONE: id.caps bit 9 clear, rnic_core ATOMIC_EN=0)".into(),
                ));
            }
            qp_access |= AccessFlags::REMOTE_ATOMIC;
        }
        let pd = ctx.alloc_pd()?;
        let cq = ctx.create_cq(256)?;
        let qp = ctx.create_qp(
            &pd,
            &QpInitAttr {
                send_cq: &cq,
                recv_cq: &cq,
                cap: QpCap {
                    max_send_wr: o.sq_depth,
                    max_recv_wr: o.rq_depth,
                    max_send_sge: 1,
                    max_recv_sge: 1,
                },
                qp_type: QpType::Rc,
                sq_sig_all: false,
            },
        )?;
        // INIT now, so receives can be posted before the exchange (as
        // ibv_rc_pingpong and perftest do); INIT -> INIT again in connect().
        let mut qp = qp;
        qp.modify(
            &rnic_verbs::QpAttr {
                qp_state: rnic_verbs::QpState::Init,
                pkey_index: 0,
                port_num: 1,
                qp_access_flags: qp_access,
                ..Default::default()
            },
            rnic_verbs::QpAttrMask::STATE
                | rnic_verbs::QpAttrMask::PKEY_INDEX
                | rnic_verbs::QpAttrMask::PORT
                | rnic_verbs::QpAttrMask::ACCESS_FLAGS,
        )?;
        let buf = ctx.alloc_dma(o.buf_len)?;
        let mr = ctx.reg_mr(
            &pd,
            &buf,
            0,
            o.buf_len,
            AccessFlags::LOCAL_WRITE | qp_access,
        )?;
        let sq_psn = (rnic_harness::pattern::mix(o.seed ^ 0x5053_4e00) & 0xff_ffff) as u32;
        let max_dest_rd_atomic = u8::try_from(dev_attr.max_qp_rd_atom).unwrap_or(u8::MAX);
        let max_rd_atomic = u8::try_from(dev_attr.max_qp_init_rd_atom).unwrap_or(u8::MAX);
        Ok(Self {
            world,
            ctx,
            pd,
            cq,
            qp,
            buf,
            mr,
            opts: o.clone(),
            sq_psn,
            max_dest_rd_atomic,
            max_rd_atomic,
            qp_access,
            started: Instant::now(),
        })
    }

    pub fn qpn(&self) -> u32 {
        self.qp.qp_num()
    }

    /// rnic's GID: the IPv4-mapped form of its address.
    pub fn gid(&self) -> [u8; 16] {
        crate::guest::ipv4_gid(self.opts.addr.ip)
    }

    /// Connect the QP to the guest's QP `qpn` expecting `psn` first.
    pub fn connect(&mut self, mtu: u32, peer: PortAddr, qpn: u32, psn: u32) -> Result<()> {
        let o = ConnOpts {
            mtu: rnic_harness::mtu_from_bytes(mtu)?,
            sq_depth: self.opts.sq_depth,
            rq_depth: self.opts.rq_depth,
            retry: self.opts.retry,
            spray_log: 0,
            qp_type: rnic_verbs::QpType::Rc,
            mp_window: 0,
            qp_access: self.qp_access,
            path_thresh: None,
            // (the device's, as perftest grants: see connect's callers)
            max_rd_atomic: Some(self.max_rd_atomic),
            max_dest_rd_atomic: Some(self.max_dest_rd_atomic),
        };
        let remote = Remote {
            qpn,
            psn,
            addr: peer,
        };
        bring_up(&mut self.qp, &o, &remote, self.sq_psn)?;
        Ok(())
    }

    /// Post a receive of `len` bytes at `off` (0: no buffer, for
    /// WRITE_WITH_IMM).
    /// Connect to the guest's QP named by its GID (which must be the
    /// IPv4-mapped form of `peer.ip`; rxe's index-1 GID), QPN and first PSN.
    pub fn connect_gid(
        &mut self,
        mtu: u32,
        peer: PortAddr,
        gid: &[u8; 16],
        qpn: u32,
        psn: u32,
    ) -> Result<()> {
        match crate::guest::gid_ipv4(gid) {
            Some(ip) if ip == peer.ip => self.connect(mtu, peer, qpn, psn),
            Some(ip) => Err(InteropError::Failed(format!(
                "the guest's GID names {ip}, its RoCE address is {}",
                peer.ip
            ))),
            None => Err(InteropError::Failed(format!(
                "the guest's GID {} is not IPv4-mapped (use GID index 1)",
                std::net::Ipv6Addr::from(*gid)
            ))),
        }
    }

    pub fn post_recv(&mut self, wr_id: u64, off: usize, len: u32) -> Result<()> {
        let sge = if len == 0 {
            None
        } else {
            Some(self.mr.sge(off, len)?)
        };
        self.qp.post_recv(&RecvWr {
            wr_id,
            sg_list: sge.as_slice(),
        })?;
        Ok(())
    }

    /// Post a signaled send-queue work request of `len` bytes at `off`.
    pub fn post_send(
        &mut self,
        wr_id: u64,
        opcode: WrOpcode,
        off: usize,
        len: u32,
        remote: Option<(u64, u32)>,
        imm: Option<u32>,
    ) -> Result<()> {
        let sge = if len == 0 {
            None
        } else {
            Some(self.mr.sge(off, len)?)
        };
        self.qp.post_send(&SendWr {
            wr_id,
            opcode,
            send_flags: SendFlags::SIGNALED,
            sg_list: sge.as_slice(),
            imm_data: imm.map(u32::to_be),
            rdma: remote.map(|(remote_addr, rkey)| rnic_verbs::RdmaInfo { remote_addr, rkey }),
        })?;
        Ok(())
    }

    /// Whether this build issues RDMA READ as a requester (`id.verbs` bit
    /// 5, `rnic build --verbs ...,read`) and may have any outstanding
    /// (`max_rd_atomic`: `id.caps` bit 8, READ_EN).
    pub fn issues_reads(&self) -> bool {
        self.ctx.nic().id().verbs & (1 << 5) != 0 && self.max_rd_atomic > 0
    }

    /// Whether this build issues atomics as a requester (`id.verbs` bit 6,
    /// `rnic build --verbs ...,atomic`) and may have any outstanding
    /// (`max_rd_atomic`).
    pub fn issues_atomics(&self) -> bool {
        self.ctx.nic().id().verbs & (1 << 6) != 0 && self.max_rd_atomic > 0
    }

    /// Post a signaled atomic (`ibv_wr_atomic_fetch_add` /
    /// `ibv_wr_atomic_cmp_swp`) on the 8 bytes at `remote_addr` of the
    /// peer's region `rkey`; the original value lands in rnic's buffer at
    /// `off`.
    pub fn post_atomic(
        &mut self,
        wr_id: u64,
        op: AtomicOp,
        off: usize,
        remote_addr: u64,
        rkey: u32,
    ) -> Result<()> {
        let sge = self.mr.sge(off, 8)?;
        self.qp.post_atomic(&AtomicWr {
            wr_id,
            op,
            send_flags: SendFlags::SIGNALED,
            sge,
            remote_addr,
            rkey,
        })?;
        Ok(())
    }

    /// Completions now (none is an error: a failed one is returned).
    pub fn poll(&self, out: &mut Vec<WorkCompletion>) -> Result<()> {
        while let Some(wc) = self.cq.poll_one()? {
            if !wc.is_success() {
                return Err(InteropError::Failed(format!(
                    "rnic completion error: {:?} (wr_id {}, vendor_err {:#x}, opcode {:?})",
                    wc.status, wc.wr_id, wc.vendor_err, wc.opcode
                )));
            }
            out.push(wc);
        }
        Ok(())
    }

    /// Advance the simulation `cycles` cycles, then check the guest: its
    /// command's result if it ended, an error if its link is gone or it
    /// ran past `limit`.
    pub fn step(
        &self,
        guest: &mut Guest,
        cycles: u64,
        limit: Duration,
    ) -> Result<Option<CmdResult>> {
        self.world.run(cycles);
        if let Some(why) = self.world.external_closed(0) {
            return Err(InteropError::Failed(format!(
                "the guest's link is gone ({why}); console tail:\n{}",
                guest.console_tail(20)
            )));
        }
        if !guest.busy() {
            return Ok(None);
        }
        guest.check_deadline(limit)?;
        Ok(guest.poll()?)
    }

    pub fn counters(&self) -> Result<PortCounters> {
        Ok(self.ctx.query_port_counters()?)
    }

    pub fn link_stats(&self) -> StreamPortStats {
        self.world.external_stats(0).unwrap_or_default()
    }

    pub fn fabric_stats(&self) -> FabricStats {
        self.world.fabric_stats()
    }

    pub fn elapsed(&self) -> Duration {
        self.started.elapsed()
    }
}
