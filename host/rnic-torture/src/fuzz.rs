//! The responder fuzz campaign: random and mutated RoCEv2 frames sent into
//! NIC b while a legitimate RC connection from NIC a keeps working.
//!
//! The frames go to three kinds of target: the legitimate QP, with PSNs of
//! its duplicate region only (RoCE has no authentication, so a forged frame
//! with its next PSN would simply be the peer's); an attack QP on NIC b whose
//! expected PSN the attacker tracks, so its frames reach the opcode,
//! length and memory-region checks (and re-armed RESET -> RTR whenever a NAK
//! moved it to ERR); and unknown QPs. The mutations: bad ICRC, truncated
//! frames, garbage after the Ethernet header, any opcode (impossible
//! sequences, middles without a first), lengths that disagree with the
//! RETH, PSNs outside the window, bad rkeys, the key of a region without
//! REMOTE_WRITE, addresses out of bounds, payloads beyond the PMTU, and
//! PadCnt abuse with a recomputed ICRC.
//!
//! What must hold, checked by [`run`] and reported as failures: no byte is
//! written outside a registered region that allows remote writes (the root
//! complex records every DMA outside the mapped buffers, and a region
//! registered without REMOTE_WRITE keeps its canary); the legitimate QP stays
//! in RTS and every one of its messages completes within a watchdog of
//! simulated cycles with the right bytes; every frame that reached the NIC
//! is counted once, accepted or dropped with a reason.

use std::collections::BTreeMap;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rnic_device::Device;
use rnic_verbs::{
    AccessFlags, Mtu, QpState, RecvWr, SendFlags, SendWr, WcStatus, WorkCompletion, WrOpcode,
};
use rnic_wire::{opcode, Aeth, Bth, Eth, Ipv4, Mceth, Mpeth, Reth, RoceFrame, Snaketh, Udp};
use serde::{Deserialize, Serialize};

use rnic_harness::conn::{self, ConnOpts, PortAddr};
use rnic_harness::pattern;

use crate::sim::{self, SimOpts};
use crate::{Break, Error, Result};

/// A campaign.
#[derive(Debug, Clone)]
pub struct FuzzConfig {
    pub seed: u64,
    /// Attack frames in all.
    pub frames: u64,
    pub data_w: u32,
    /// Which build of the core both NICs are.
    pub knobs: rnic_sim::ModelKnobs,
    /// Attack frames between two legitimate messages.
    pub burst: u32,
    /// Cycles a legitimate message may take before it counts as lost.
    pub watchdog: u64,
    /// A debug switch on the target NIC: only `NoMrCheck` (the responder
    /// skips its memory-region checks; the campaign must then report
    /// writes outside the registered regions).
    pub brk: Option<Break>,
    /// Both QPs (the legitimate one and the attack target) use the
    /// multipath transport: the attack meets the mp responder (placement
    /// on arrival, bitmap window, per-packet RETH checks).
    pub mp: bool,
}

impl Default for FuzzConfig {
    fn default() -> Self {
        Self {
            seed: 4242,
            frames: 3000,
            data_w: 64,
            knobs: rnic_sim::ModelKnobs::Full,
            burst: 50,
            watchdog: 20_000,
            brk: None,
            mp: false,
        }
    }
}

/// What a campaign saw.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct FuzzReport {
    pub seed: u64,
    pub data_w: u32,
    /// "rc" or "mp".
    pub transport: String,
    /// Attack frames sent.
    pub frames: u64,
    /// Of those, with an ICRC that no longer matches.
    pub bad_icrc_frames: u64,
    /// Legitimate WRITE_WITH_IMM messages that completed and were checked.
    pub messages: u64,
    /// Times the attack QP was found in ERR (a NAK) and re-armed.
    pub attack_qp_rearms: u64,
    pub cycles: u64,
    /// NIC b's port counters (`rx_frames`, drops by reason, NAKs, ...).
    pub counters: BTreeMap<String, u64>,
    /// Everything that broke a promise (empty: the campaign passed).
    pub failures: Vec<String>,
}

impl FuzzReport {
    pub fn failed(&self) -> bool {
        !self.failures.is_empty()
    }
}

/// A frame for NIC b, well formed or not; `true` if its ICRC was broken.
/// Where an attack frame goes and what it may name.
struct Target {
    /// The legitimate QP and its expected PSN (frames get older PSNs).
    legit_qpn: u32,
    legit_epsn: u32,
    /// The attack QP and its expected PSN (frames mostly get that one).
    attack_qpn: u32,
    attack_epsn: u32,
    /// Keys the attacker knows: a remote-writable playground region and a
    /// region without REMOTE_WRITE, with their addresses.
    keys: [(u32, u64); 2],
    /// Both QPs are mp: most frames carry mp opcodes (the others, RC ones,
    /// must be dropped as the other transport's); else the reverse.
    mp: bool,
}

fn attack(r: &mut ChaCha8Rng, addrs: &[PortAddr; 2], t: &Target) -> (Vec<u8>, bool) {
    let op = match (t.mp, r.gen_range(0..10)) {
        (_, 0) => r.gen(),
        (false, 1..=3) => opcode::RDMA_WRITE_ONLY,
        (false, 4) => opcode::RDMA_WRITE_FIRST,
        (false, 5) => opcode::RDMA_WRITE_MIDDLE,
        (false, 6) => opcode::SEND_ONLY,
        (false, 7) => opcode::ACKNOWLEDGE,
        (true, 1..=3) => opcode::MP_WRITE_LAST,
        (true, 4) => opcode::MP_WRITE,
        (true, 5) => opcode::MP_WRITE_LAST_WITH_IMMEDIATE,
        // the ACK classes: an ACK / NAK, or a selective NAK with a random
        // bitmap of lost PSNs, for the attack QP's requester side
        (true, 6) => {
            if r.gen() {
                opcode::MP_ACKNOWLEDGE
            } else {
                opcode::MP_SELECTIVE_NAK
            }
        }
        (true, 7) => r.gen_range(0..=0x11),
        (false, 8) => r.gen_range(0..=0x11),
        (true, 8) => r.gen_range(opcode::MP_WRITE..=opcode::MP_PROBE_REPLY),
        // the other transport's opcodes: dropped, never placed
        (false, _) => r.gen_range(opcode::MP_WRITE..=opcode::MP_PROBE_REPLY),
        (true, _) => r.gen_range(0..=0x11),
    };
    let len = match r.gen_range(0..4) {
        0 => 0,
        1 => r.gen_range(1..64),
        2 => r.gen_range(64..1100),
        _ => r.gen_range(1100..4200),
    };
    let mut payload = vec![0u8; len];
    r.fill(&mut payload[..]);
    let dest_qp = match r.gen_range(0..6) {
        0 => r.gen::<u32>() & 0xff_ffff,
        1 => r.gen_range(0..64),
        2 | 3 => t.legit_qpn,
        _ => t.attack_qpn,
    };
    let psn = if dest_qp == t.legit_qpn {
        t.legit_epsn.wrapping_sub(r.gen_range(1..1000)) & 0xff_ffff
    } else if dest_qp == t.attack_qpn && r.gen_range(0..8) != 0 {
        t.attack_epsn
    } else {
        r.gen::<u32>() & 0xff_ffff
    };
    let (rkey, va) = t.keys[r.gen_range(0..2)];
    let reth = Reth {
        va: match r.gen_range(0..4) {
            0 => r.gen(),
            1 => va.wrapping_sub(r.gen_range(1..4096)),
            _ => va + r.gen_range(0..70_000),
        },
        rkey: if r.gen_bool(0.3) {
            rkey ^ r.gen_range(1..=0xffff)
        } else {
            rkey
        },
        dma_len: if r.gen_bool(0.5) { len as u32 } else { r.gen() },
    };
    let f = RoceFrame {
        eth: Eth {
            dst: addrs[1].mac,
            src: addrs[0].mac,
        },
        ip: Ipv4 {
            src: addrs[0].ip.octets(),
            dst: addrs[1].ip.octets(),
            ..Ipv4::default()
        },
        udp: Udp {
            src_port: r.gen(),
            checksum: 0,
        },
        bth: Bth {
            opcode: op,
            dest_qp,
            psn,
            ack_req: r.gen(),
            ..Bth::default()
        },
        reth: Some(reth),
        mpeth: Some(Mpeth {
            va: reth.va,
            rkey: reth.rkey,
            len: reth.dma_len,
        }),
        immdt: Some(r.gen()),
        mceth: Some(Mceth { msg_len: r.gen() }),
        aeth: Some(Aeth {
            syndrome: r.gen(),
            msn: r.gen::<u32>() & 0xff_ffff,
        }),
        snaketh: Some(Snaketh { bitmap: r.gen() }),
        payload,
    };
    let mut bytes = f.encode();
    let mut bad_icrc = false;
    match r.gen_range(0..8) {
        0 => {
            // a bit flip after the IP header (not in the masked TTL/checksum)
            let i = r.gen_range(34..bytes.len());
            if i != 46 {
                bytes[i] ^= 1 << r.gen_range(0..8);
                bad_icrc = true;
            }
        }
        1 => bytes.truncate(r.gen_range(1..bytes.len())),
        2 => {
            // PadCnt abuse; the ICRC is recomputed so only the pad is wrong
            bytes[43] = (bytes[43] & !0x30) | (r.gen_range(0..4u8) << 4);
            let end = bytes.len() - 4;
            let c = rnic_wire::icrc(&bytes, end);
            bytes[end..].copy_from_slice(&c.to_le_bytes());
        }
        3 => r.fill(&mut bytes[14..]),
        _ => {}
    }
    (bytes, bad_icrc)
}

fn poll_one<D: Device>(
    dev: &D,
    cq: &rnic_verbs::CompletionQueue<D>,
    budget: u64,
) -> Result<Option<WorkCompletion>> {
    let start = dev.now();
    let mut wc = [WorkCompletion::default(); 1];
    while dev.now() - start < budget {
        if cq.poll(&mut wc)? == 1 {
            return Ok(Some(wc[0]));
        }
        dev.idle();
    }
    Ok(None)
}

/// Runs a campaign on a fresh simulated pair; `progress` gets the attack
/// frames sent so far. Stops early once the legitimate QP is broken.
pub fn run(cfg: &FuzzConfig, progress: &mut dyn FnMut(u64)) -> Result<FuzzReport> {
    if cfg.frames == 0 || cfg.burst == 0 || cfg.watchdog == 0 {
        return Err(Error::Config(
            "--frames, the burst and the watchdog must be positive".into(),
        ));
    }
    if let Some(b) = cfg.brk.filter(|b| *b != Break::NoMrCheck) {
        return Err(Error::Config(format!(
            "--break {b} breaks the completion ordering, which the campaign does not check: the torture test (`rnic torture --break {b}`) catches it"
        )));
    }
    let pair = sim::pair(&SimOpts {
        data_w: cfg.data_w,
        knobs: cfg.knobs,
        seed: cfg.seed,
        ..SimOpts::default()
    })?;
    let (a, b, world) = (&pair.a, &pair.b, &pair.world);
    if let Some(brk) = cfg.brk {
        b.nic().debug_switches().set(brk, true)?;
    }
    let opts = ConnOpts {
        mtu: Mtu::Mtu1024,
        sq_depth: 4,
        rq_depth: 4,
        retry: conn::Retry::default(),
        spray_log: 0,
        qp_type: if cfg.mp {
            rnic_verbs::QpType::Mp
        } else {
            rnic_verbs::QpType::Rc
        },
        ..ConnOpts::default()
    };
    let conns = conn::connect(a, pair.addrs[0], b, pair.addrs[1], 2, &opts, 16, cfg.seed)?;
    let mut pairs = conns.pairs.into_iter();
    let mut qp = pairs.next().expect("the legitimate pair");
    let mut atk = pairs.next().expect("the attack pair");
    let atk_peer = conn::Remote {
        qpn: atk.send.qp_num(),
        psn: 0,
        addr: pair.addrs[0],
    };
    const BUF: usize = 1 << 16;
    let src = a.alloc_dma(BUF)?;
    let src_mr = a.reg_mr(&conns.pd_a, &src, 0, BUF, AccessFlags::LOCAL_WRITE)?;
    let dst = b.alloc_dma(BUF)?;
    let dst_mr = b.reg_mr(
        &conns.pd_b,
        &dst,
        0,
        BUF,
        AccessFlags::LOCAL_WRITE | AccessFlags::REMOTE_WRITE,
    )?;
    // a region without REMOTE_WRITE, filled with a canary
    let canary = b.alloc_dma(BUF)?;
    canary.fill(0, BUF, 0xC5);
    let canary_mr = b.reg_mr(&conns.pd_b, &canary, 0, BUF, AccessFlags::LOCAL_WRITE)?;
    // where the attacker may legitimately write (RoCE cannot tell it apart)
    let playground = b.alloc_dma(BUF)?;
    let playground_mr = b.reg_mr(
        &conns.pd_b,
        &playground,
        0,
        BUF,
        AccessFlags::LOCAL_WRITE | AccessFlags::REMOTE_WRITE,
    )?;

    let mut r = ChaCha8Rng::seed_from_u64(cfg.seed);
    let mut t = Target {
        legit_qpn: qp.recv.qp_num(),
        legit_epsn: 0,
        attack_qpn: atk.recv.qp_num(),
        attack_epsn: 0,
        keys: [
            (playground_mr.rkey(), playground_mr.addr()),
            (canary_mr.rkey(), canary_mr.addr()),
        ],
        mp: cfg.mp,
    };
    let mut rep = FuzzReport {
        seed: cfg.seed,
        data_w: cfg.data_w,
        transport: if cfg.mp { "mp" } else { "rc" }.into(),
        ..FuzzReport::default()
    };
    let start = b.device().now();
    let mut scratch = Vec::new();
    'campaign: while rep.frames < cfg.frames {
        for _ in 0..cfg.burst {
            if rep.frames == cfg.frames {
                break;
            }
            t.legit_epsn = qp.recv.status()?.rq_psn_now;
            let st = atk.recv.status()?;
            if st.state != QpState::Rtr && st.state != QpState::Rts {
                // a NAK moved the attack QP to ERR: back to RTR
                atk.recv.modify(
                    &rnic_verbs::QpAttr {
                        qp_state: QpState::Reset,
                        ..Default::default()
                    },
                    rnic_verbs::QpAttrMask::STATE,
                )?;
                let peer = conn::Remote {
                    psn: r.gen::<u32>() & 0xff_ffff,
                    ..atk_peer
                };
                conn::bring_up(&mut atk.recv, &opts, &peer, 0)?;
                rep.attack_qp_rearms += 1;
            }
            t.attack_epsn = atk.recv.status()?.rq_psn_now;
            let (f, bad) = attack(&mut r, &pair.addrs, &t);
            while !world.inject_frame(1, &f, false) {
                world.run(2000); // the MAC's queue is full: let the NIC drain
            }
            rep.bad_icrc_frames += u64::from(bad);
            rep.frames += 1;
        }
        progress(rep.frames);
        world.run(3000);
        let st = qp.recv.status()?.state;
        if st != QpState::Rts {
            rep.failures.push(format!(
                "after {} frames the legitimate QP is in {st:?}",
                rep.frames
            ));
            break;
        }
        // one legitimate message, every byte checked at its CQE
        let msg = rep.messages + 1;
        let len = r.gen_range(1..3000usize);
        scratch.resize(len, 0);
        pattern::fill(pattern::key(cfg.seed, 0, msg, 0), &mut scratch);
        src.write(0, &scratch);
        qp.recv.post_recv(&RecvWr {
            wr_id: msg,
            sg_list: &[],
        })?;
        qp.send.post_send(&SendWr {
            wr_id: msg,
            opcode: WrOpcode::RdmaWriteWithImm,
            send_flags: SendFlags::SIGNALED,
            sg_list: &[src_mr.sge(0, len as u32)?],
            imm_data: Some((msg as u32).to_be()),
            rdma: Some(dst_mr.rdma_info(0)?),
        })?;
        for (side, dev, cq) in [
            ("receive", b.device(), &conns.cq_b),
            ("send", a.device(), &conns.cq_a),
        ] {
            match poll_one(dev, cq, cfg.watchdog)? {
                None => {
                    rep.failures.push(format!(
                        "message {msg}: no {side} completion within {} cycles",
                        cfg.watchdog
                    ));
                    break 'campaign;
                }
                Some(wc) if wc.status != WcStatus::Success || wc.wr_id != msg => {
                    rep.failures
                        .push(format!("message {msg}: {side} completion {wc:?}"));
                    break 'campaign;
                }
                Some(_) => {}
            }
        }
        if dst.to_vec(0, len) != scratch {
            rep.failures
                .push(format!("message {msg}: the received bytes differ"));
        }
        rep.messages = msg;
    }
    rep.cycles = b.device().now() - start;

    let faults = b.device().iommu_faults();
    if !faults.is_empty() {
        rep.failures.push(format!(
            "{} DMA accesses outside the mapped buffers; first {:?}",
            faults.len(),
            faults[0]
        ));
    }
    let errors = b.device().model_errors();
    if !errors.is_empty() {
        rep.failures.push(format!(
            "{} malformed TLPs; first {:?}",
            errors.len(),
            errors[0]
        ));
    }
    if canary.to_vec(0, BUF).iter().any(|&x| x != 0xC5) {
        rep.failures
            .push("a region registered without REMOTE_WRITE was written".into());
    }
    world.drain(1_000_000);
    crate::torture::add_port_counters(&mut rep.counters, "b", b)?;
    crate::torture::add_port_counters(&mut rep.counters, "a", a)?;
    let c = |k: &str| rep.counters.get(k).copied().unwrap_or(0);
    // every frame that reached b is counted: the attack, and what a sent
    let arrived = rep.frames + c("a.tx_frames");
    if c("b.rx_frames") != arrived {
        rep.failures.push(format!(
            "NIC b counted {} frames, {arrived} arrived: frames lost without a count",
            c("b.rx_frames")
        ));
    }
    if c("b.rx_drop_icrc") + c("b.rx_drop_malformed") < rep.bad_icrc_frames {
        rep.failures.push(format!(
            "{} frames had a bad ICRC, {} were dropped for ICRC or malformed headers",
            rep.bad_icrc_frames,
            c("b.rx_drop_icrc") + c("b.rx_drop_malformed")
        ));
    }
    if c("b.rx_drop_guard") != 0 {
        rep.failures.push(format!(
            "the MR re-check refused {} payload writes the transport had let through",
            c("b.rx_drop_guard")
        ));
    }
    Ok(rep)
}
