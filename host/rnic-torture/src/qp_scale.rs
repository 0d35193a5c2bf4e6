//! Throughput against the number of active QPs (issue 19's "cliff"), in
//! cycles of [`Device::now`].
//!
//! [`run`] connects `active` QP pairs from `a` to `b` and spreads
//! `messages` RDMA WRITEs (or WRITE_WITH_IMMs, each consuming a receive
//! WQE of `b`'s) over them round robin, `window` in flight per QP (fewer
//! when the messages in flight would overflow the one CQ of a side: 7 at
//! 4,096 QPs, 1 at 16,384; no more than 32,752 QPs), every one signaled.
//! With [`ScaleOpts::cache_records`] the QPs live in host memory behind
//! each NIC's context cache. Every QP's WRITEs land in a slice of one region of `b`'s,
//! and all read one source buffer of `a`'s, so the NIC's memory-region
//! table never limits the QP count (a bench checks no data; the torture
//! test does). The time runs from the first doorbell to the last
//! completion: the last send completion, and with immediates also the last
//! receive completion at `b`.
//!
//! A NIC whose QP contexts all live on chip has no cache to miss: the hit
//! rate of such a run is not a number (see [`ScaleResult::hit_rate`]).
//! With the cache, the hit rate is the directory lookups (every packet's
//! and doorbell's first) that found their QP on chip, both NICs.

use std::collections::HashMap;

use rnic_device::Device;
use rnic_verbs::{
    AccessFlags, Context, Mtu, QpType, RecvWr, SendFlags, SendWr, WcStatus, WorkCompletion,
    WrOpcode,
};

use crate::perf::{self, Stream};
use crate::{Error, Result};
use rnic_driver::CacheCounters;
use rnic_harness::conn::{self, ConnOpts, PortAddr, QpPair};

/// Destination slices of `b`'s region: QPs beyond this many share them.
const DST_SLICES: u32 = 256;

/// [`run`] settings.
#[derive(Debug, Clone)]
pub struct ScaleOpts {
    /// QP pairs, every one carrying WRITEs.
    pub active: u32,
    pub msg_size: u32,
    /// WRITE_WITH_IMM (a receive completion at `b` per message) instead of
    /// RDMA WRITE.
    pub imm: bool,
    /// Messages in all, spread over the QPs round robin.
    pub messages: u64,
    /// Messages in flight per QP.
    pub window: u32,
    pub mtu: Mtu,
    pub qp_type: QpType,
    /// Requesters spray over 2^spray_log UDP source ports.
    pub spray_log: u8,
    /// Give up after this many cycles without a completion.
    pub watchdog: u64,
    /// Records of a QP context table each NIC opens before the QPs are
    /// created (0: none, every QP in a slot of its own): the QPs then live
    /// in host memory behind the NIC's context cache (issue 19).
    pub cache_records: u32,
}

/// [`run`] outcome.
#[derive(Debug, Clone, PartialEq)]
pub struct ScaleResult {
    pub messages: u64,
    pub bytes: u64,
    /// First doorbell to the last completion.
    pub cycles: u64,
    /// Cycles spent creating, connecting and bringing the QPs to RTS.
    pub setup_cycles: u64,
    /// Messages in flight per QP: `ScaleOpts::window`, or fewer where the
    /// QPs' windows would overflow the CQ.
    pub window: u32,
    /// Context-cache hits over lookups during the run; `None` when the NIC
    /// keeps every QP's context on chip (no cache, nothing can miss).
    pub hit_rate: Option<f64>,
    /// The context caches' counters over the run, both NICs summed
    /// (`None`: no cache).
    pub cache: Option<CacheCounters>,
}

fn check(what: &str, wc: &WorkCompletion) -> Result<()> {
    if wc.status != WcStatus::Success {
        return Err(Error::Config(format!(
            "{what}: completion {} of QP {} failed with {:?} (NAK syndrome {:#x})",
            wc.wr_id, wc.qp_num, wc.status, wc.vendor_err
        )));
    }
    Ok(())
}

/// Runs one point of the sweep; see the module's documentation.
pub fn run<D: Device>(
    a: &Context<D>,
    addr_a: PortAddr,
    b: &Context<D>,
    addr_b: PortAddr,
    o: &ScaleOpts,
) -> Result<ScaleResult> {
    if o.active == 0 || o.msg_size == 0 || o.window == 0 || o.messages == 0 {
        return Err(Error::Config(
            "qp_scale needs at least one QP, message, byte and message in flight".into(),
        ));
    }
    if o.cache_records > 0 {
        a.enable_qp_cache(o.cache_records)?;
        b.enable_qp_cache(o.cache_records)?;
    }
    let cap = a.query_device()?.max_qp.min(b.query_device()?.max_qp);
    if o.active > cap {
        return Err(Error::Config(format!(
            "qp_scale: {} active QPs, but the NICs hold {cap}",
            o.active
        )));
    }
    // Every message is signaled and each side has one CQ: the messages in
    // flight must fit in it, so many QPs get a smaller window.
    let cq_room = rnic_driver::MAX_RING_ENTRIES - 16;
    let window = o.window.min(cq_room / o.active);
    if window == 0 {
        return Err(Error::Config(format!(
            "qp_scale: {} active QPs with a message each in flight overflow a CQ of {} entries",
            o.active,
            rnic_driver::MAX_RING_ENTRIES
        )));
    }
    let dev = a.device();
    let t0 = dev.now();
    let depth = window.next_power_of_two().max(2);
    let conns = conn::connect(
        a,
        addr_a,
        b,
        addr_b,
        o.active,
        &ConnOpts {
            mtu: o.mtu,
            sq_depth: depth,
            rq_depth: if o.imm { depth } else { 0 },
            spray_log: o.spray_log,
            qp_type: o.qp_type,
            qp_access: AccessFlags::REMOTE_WRITE,
            ..ConnOpts::default()
        },
        (o.active * window + 16).next_power_of_two(),
        1,
    )?;
    let len = o.msg_size as usize;
    let slices = o.active.min(DST_SLICES) as usize;
    let src = a.alloc_dma(len)?;
    let dst = b.alloc_dma(len * slices)?;
    let sm = a.reg_mr(&conns.pd_a, &src, 0, len, AccessFlags::LOCAL_WRITE)?;
    let dm = b.reg_mr(
        &conns.pd_b,
        &dst,
        0,
        len * slices,
        AccessFlags::LOCAL_WRITE | AccessFlags::REMOTE_WRITE,
    )?;
    let sge = [sm.sge(0, o.msg_size)?];
    let mut pairs = conns.pairs;
    let recv_ix: HashMap<u32, usize> = pairs
        .iter()
        .enumerate()
        .map(|(i, p)| (p.recv.qp_num(), i))
        .collect();
    if o.imm {
        // (one doorbell per QP: each may wait for its QP's fetch)
        let wrs: Vec<RecvWr> = (0..window)
            .map(|x| RecvWr {
                wr_id: u64::from(x),
                sg_list: &[],
            })
            .collect();
        for p in &mut pairs {
            p.recv.post_recv_list(&wrs)?;
        }
    }
    let mut repost = |pairs: &mut [QpPair<D>], wc: &WorkCompletion| -> Result<()> {
        check("qp_scale receive", wc)?;
        let i = *recv_ix.get(&wc.qp_num).ok_or_else(|| {
            Error::Config(format!("receive completion of unknown QP {}", wc.qp_num))
        })?;
        // keep the window's receive WQEs posted
        pairs[i].recv.post_recv(&RecvWr {
            wr_id: wc.wr_id,
            sg_list: &[],
        })?;
        Ok(())
    };
    let counters = |c: &Context<D>| c.nic().qp_cache_counters();
    let before = [counters(a)?, counters(b)?];
    let r = perf::stream(
        dev,
        &mut pairs,
        &conns.cq_a,
        &mut [WorkCompletion::default(); 256],
        Stream {
            window,
            messages: o.messages,
            run_cycles: None,
            watchdog: o.watchdog,
            check: &|wc| check("qp_scale send", wc),
            post: &mut |p, i, wr_id, n| {
                let remote = dm.rdma_info((i % slices) * len)?;
                let wrs: Vec<SendWr> = (0..n)
                    .map(|x| SendWr {
                        wr_id: wr_id + x,
                        opcode: if o.imm {
                            WrOpcode::RdmaWriteWithImm
                        } else {
                            WrOpcode::RdmaWrite
                        },
                        send_flags: SendFlags::SIGNALED,
                        sg_list: &sge,
                        imm_data: o.imm.then_some((wr_id + x) as u32),
                        rdma: Some(remote),
                    })
                    .collect();
                Ok(p.send.post_send_list(&wrs)?)
            },
            recv: if o.imm {
                Some((&conns.cq_b, &mut repost))
            } else {
                None
            },
            observe: &mut |_, _| {},
            stalled: &|sent, received| {
                Error::Config(format!(
                    "qp_scale: no completion for {} cycles ({sent} sent and {received} received of {})",
                    o.watchdog, o.messages
                ))
            },
        },
    )?;
    let after = [counters(a)?, counters(b)?];
    let (da, db) = (after[0].since(&before[0]), after[1].since(&before[1]));
    let cache = (o.cache_records > 0).then(|| CacheCounters {
        lookups: da.lookups + db.lookups,
        lookup_misses: da.lookup_misses + db.lookup_misses,
        fetch_misses: da.fetch_misses + db.fetch_misses,
        evictions: da.evictions + db.evictions,
        pinned_full: da.pinned_full + db.pinned_full,
        db_waiting: da.db_waiting.max(db.db_waiting),
        db_waiting_max: da.db_waiting_max.max(db.db_waiting_max),
        writebacks: da.writebacks + db.writebacks,
    });
    Ok(ScaleResult {
        messages: o.messages,
        bytes: o.messages * u64::from(o.msg_size),
        cycles: r.last - r.start,
        setup_cycles: r.start - t0,
        window,
        hit_rate: cache.and_then(|c| c.hit_rate()),
        cache,
    })
}
