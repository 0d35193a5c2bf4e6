//! The on-chip state each QP costs, from the state manifest
//! (hw/state/state_manifest.json) that hw/state/manifest.py writes from an
//! elaboration of rnic_core by Verilator, one entry per build
//! configuration: every flop and memory of the modules that keep per-QP
//! state with one element per QP (per QP) or sized by a pool (shared: the
//! outstanding-WQE rings, the mp deferred-completion slots, the
//! destination-MAC table), and the fields of the records in block RAM
//! (declared once as `localparam <R>_<FIELD>_LSB/_W`; counted once however
//! many read-port copies hold them), with their elaborated widths; grouped
//! here by what they are for (the category table below: a per-QP item it
//! does not know is an error). CI regenerates the manifest and fails when
//! it differs from the committed one.
//!
//! Every QP of a build carries all of the per-QP state (the transport is
//! chosen per QP at run time), so an mp QP's budget is the whole table; the
//! rc-only message state is what a dedicated mp build could drop.

use std::collections::BTreeMap;
use std::sync::OnceLock;

/// Where the manifest is and what writes it (for the errors).
const MANIFEST_PATH: &str = "hw/state/state_manifest.json";
const GENERATOR: &str = "hw/state/manifest.py";

/// The manifest: the per-QP and shared state of each configuration.
#[derive(Debug, serde::Deserialize)]
struct Manifest {
    configs: Vec<Config>,
}

/// One elaborated configuration (rnic_core parameters).
#[derive(Debug, serde::Deserialize)]
struct Config {
    params: Params,
    pools: Pools,
    per_qp: Vec<Entry>,
    shared: Vec<Entry>,
    /// Flop copies of state counted elsewhere (`(* rnic_copy *)`).
    #[allow(dead_code)]
    copies: Vec<Entry>,
    /// The block-RAM words and the record fields each holds.
    #[allow(dead_code)]
    block_ram: Vec<Word>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
struct Params {
    num_q: u32,
    mp_w: u32,
    send_en: u32,
    rc_en: u32,
    /// (absent: 0)
    #[serde(default)]
    atomic_en: u32,
    ost_rings: u32,
    mp_pend: u32,
    dmac_n: u32,
}

#[derive(Debug, serde::Deserialize)]
struct Entry {
    module: String,
    name: String,
    bits: u64,
    /// The record a block-RAM field belongs to.
    #[serde(default)]
    #[allow(dead_code)]
    record: Option<String>,
}

#[derive(Debug, serde::Deserialize)]
#[allow(dead_code)]
struct Word {
    module: String,
    instance: String,
    record: String,
    lsb: u32,
    width: u32,
    depth: u32,
    fields: Vec<String>,
}

fn manifest() -> &'static Manifest {
    static M: OnceLock<Manifest> = OnceLock::new();
    M.get_or_init(|| {
        serde_json::from_str(include_str!("../../../hw/state/state_manifest.json"))
            .expect("hw/state/state_manifest.json")
    })
}

/// What a per-QP structure is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Category {
    /// QP context: state, MTU, addresses, keys, receive ring.
    Context,
    /// The send queue's ring in host memory: base, size, producer and
    /// consumer indices (queue manager).
    SendQueue,
    /// The completion queue of the same number (one per QP slot in this
    /// build; the host may point several QPs at one).
    CompletionQueue,
    /// Requester and responder PSNs, ACK/retry timers and counters.
    PsnRetry,
    /// The requester's outstanding-WQE ring (for completions and resends):
    /// per QP the ring it holds and two counters; the rings themselves are
    /// shared.
    OutstandingRing,
    /// The responder's in-progress message (rc) and receive-queue indices.
    Message,
    /// The mp receive bitmap.
    Bitmap,
    /// The mp deferred completion.
    MpCompletion,
    /// Per-path state (spraying).
    PerPath,
    /// mp loss recovery by selective NAK: the responder's recovery span,
    /// the requester's bitmap of the PSNs a NAK named (issue 22's SACK,
    /// added to the 64 B + W/8 target as a stated item).
    SelectiveNak,
    /// Path health (issue 22): per path whether it is out, its loss count
    /// and RTT average; the epochs of the counts and of the last take-out,
    /// the probes failed since, the PSN from which the picks are known, and
    /// the spray width the completer needs (added to the target as a
    /// stated item).
    PathHealth,
    /// The responder's replay records of the atomics it executed
    /// (ATOMIC_EN builds): the QP's last four, PSN and original value each,
    /// and the ring's valid bits and next slot.
    AtomicReplay,
}

impl Category {
    pub fn name(self) -> &'static str {
        match self {
            Category::Context => "context",
            Category::SendQueue => "send queue",
            Category::CompletionQueue => "completion queue",
            Category::PsnRetry => "PSN/retry state",
            Category::OutstandingRing => "outstanding WQE ring (its pointers)",
            Category::Message => "responder message + receive queue",
            Category::Bitmap => "mp bitmap",
            Category::MpCompletion => "mp deferred completion",
            Category::PerPath => "per-path state",
            Category::SelectiveNak => "mp selective NAK",
            Category::PathHealth => "path health",
            Category::AtomicReplay => "atomic replay records",
        }
    }
}

fn category(module: &str, name: &str) -> Option<Category> {
    use Category::*;
    Some(match (module, name) {
        ("qp_context", "qpc_spray") => PerPath,
        ("qp_context", _) => Context,
        ("queue_manager", n) if n.starts_with("sq") => SendQueue,
        ("cq_manager", _) => CompletionQueue,
        // (the rings' owners, with each ring's full, retransmission and
        // flush bits: shared, looked up by QP number)
        (
            "requester",
            "ost" | "sqp_tail" | "ring_pool" | "ow_v_reg" | "ow_q_reg" | "ow_head_reg"
            | "ow_full_reg" | "ow_rtx_reg" | "ow_flush_reg",
        ) => OutstandingRing,
        ("requester", "req_rot") => PerPath,
        (
            "requester",
            "req_down" | "req_loss" | "req_lepo" | "req_hold" | "req_back" | "req_chg"
            | "rql_spray",
        ) => PathHealth,
        ("requester", "lst_lost") | ("responder", "rsp_span") => SelectiveNak,
        ("requester", _) => PsnRetry,
        // (the bitmap's "written since the load" bit, an XOR of two halves
        // in block RAM: one in RSP, one in EPS)
        ("responder", "rsp_bmp" | "rsp_vb" | "eps_lv") => Bitmap,
        ("responder", "ars_psn" | "ars_orig" | "arm_next" | "arm_valid") => AtomicReplay,
        (
            "responder",
            "rfl_ow" | "slot_qpn_reg" | "before_reg" | "pslot_pool" | "pend_psn_mem"
            | "pend_imm_mem" | "pend_len_mem",
        ) => MpCompletion,
        // (the flags record RFL: NAK sent, ACK owed and its epoch stamp,
        // and the "written since the load" halves, RFL's VB and EPS's LF)
        (
            "responder",
            "eps_psn" | "rsp_msn" | "rfl_ns" | "rfl_ao" | "rfl_st" | "rfl_vb" | "eps_lf",
        ) => PsnRetry,
        (
            "responder",
            "rsp_msg" | "rsp_cursor" | "rsp_remain" | "rsp_msglen" | "rsp_wrid" | "rqc_ci"
            | "rqp_pi" | "rqc_vb" | "eps_lc" | "rsp_key",
        ) => Message,
        _ => return None,
    })
}

/// One per-QP structure.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Item {
    pub module: String,
    pub name: String,
    pub bits: u64,
    pub category: Category,
}

/// The per-QP budget of a build.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Budget {
    pub num_qp: u32,
    pub mp_window: u32,
    pub items: Vec<Item>,
    /// State shared by every QP (the pools).
    pub shared: Vec<Item>,
    pub shared_bytes: f64,
    /// The pools: at most `rings` QPs have WQEs in flight, `mp_pend` mp
    /// completions wait, `dmacs` distinct peer MACs.
    pub pools: Pools,
    /// Bytes per QP by category.
    pub by_category: BTreeMap<&'static str, f64>,
    pub bytes_per_qp: f64,
    /// The target for an mp QP: 64 bytes plus W/8 of bitmap, plus the
    /// send queues' round-robin list (`list_bytes`) and the selective NAK
    /// (`snak_bytes`).
    pub mp_target_bytes: f64,
    /// Bytes per QP of the queue manager's round-robin list (its entry and
    /// the scheduled bit), which the list scheduler added to the 64 B + W/8
    /// target: the price of a pick whose logic does not grow with the QPs.
    pub list_bytes: f64,
    /// Bytes per QP of the mp selective NAK (the responder's span, the
    /// requester's LOST bitmap of W - 1 bits), added to the target too.
    pub snak_bytes: f64,
    /// Bytes per QP of path health, added to the target too.
    pub health_bytes: f64,
}

/// The shared pools of a build: outstanding-WQE rings, mp deferred
/// completion slots, destination-MAC table entries.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Pools {
    pub rings: u32,
    pub mp_pend: u32,
    pub dmacs: u32,
}

/// rnic_core's `pool_size(KNOB, per, lo, hi)` arguments of the pools
/// (OST_RINGS_Q, MP_PEND_Q, DMAC_N_Q); a test holds them to the sizes the
/// manifest's elaborations found.
const POOL_RULES: [[u32; 3]; 3] = [[4, 4, 16], [8, 2, 8], [4, 4, 16]];

impl Pools {
    /// The pools of a build with `num_qp` QPs and the knobs (0: sized
    /// from the QP count), as rnic_core's `pool_size` computes them.
    pub fn of(num_qp: u32, rings: u32, mp_pend: u32, dmacs: u32) -> Result<Pools, String> {
        let size = |[per, lo, hi]: [u32; 3], knob: u32| {
            let n = if knob != 0 {
                knob
            } else {
                (num_qp / per).clamp(lo, hi)
            };
            n.min(num_qp)
        };
        Ok(Pools {
            rings: size(POOL_RULES[0], rings),
            mp_pend: size(POOL_RULES[1], mp_pend),
            dmacs: size(POOL_RULES[2], dmacs),
        })
    }
}

/// The manifest's entry for a build: `num_qp` QPs, window `mp_window`,
/// the SEND/RECV and rc knobs, the pools.
fn entry(
    num_qp: u32,
    mp_window: u32,
    send_en: bool,
    rc_en: bool,
    atomic_en: bool,
    pools: Pools,
) -> Result<&'static Config, String> {
    manifest()
        .configs
        .iter()
        .find(|c| {
            let p = c.params;
            (p.num_q, p.mp_w, p.send_en, p.rc_en, p.atomic_en)
                == (
                    num_qp,
                    mp_window,
                    send_en.into(),
                    rc_en.into(),
                    atomic_en.into(),
                )
                && c.pools == pools
        })
        .ok_or_else(|| {
            format!(
                "{MANIFEST_PATH} has no build with NUM_Q={num_qp} MP_W={mp_window} SEND_EN={} \
                 RC_EN={} ATOMIC_EN={} and pools {pools:?}: add it to CONFIGS in {GENERATOR} and \
                 run {GENERATOR}",
                u32::from(send_en),
                u32::from(rc_en),
                u32::from(atomic_en)
            )
        })
}

/// The budget of a build with `num_qp` QPs, window `mp_window`, the
/// SEND/RECV, rc and atomics knobs `send_en`, `rc_en`, `atomic_en`, and
/// its shared `pools` (None: the RTL's default for `num_qp`), from the
/// manifest.
///
/// The READ responder knob (rnic_core READ_EN) is not part of the lookup:
/// it adds no per-QP or pool-sized state (the QP context's remote-READ bit
/// and READ limits are in every build; the READ path's own state,
/// read_reply's job ring and reply slots, is of a fixed size), so a
/// READ_EN build's budget is that of the same build without it.
/// `a_read_build_has_the_state_of_one_without` checks this against the
/// elaboration. ATOMIC_EN (which needs READ_EN) is: the responder keeps
/// replay records per QP.
pub fn budget(
    num_qp: u32,
    mp_window: u32,
    send_en: bool,
    rc_en: bool,
    atomic_en: bool,
    pools: Option<Pools>,
) -> Result<Budget, String> {
    let pools = match pools {
        Some(p) => p,
        None => Pools::of(num_qp, 0, 0, 0)?,
    };
    of_config(entry(num_qp, mp_window, send_en, rc_en, atomic_en, pools)?)
}

/// The verb and transport knobs of a build (rnic_core SEND_EN, RC_EN,
/// READ_EN, ATOMIC_EN).
#[derive(Debug, Clone, Copy)]
pub struct Knobs {
    pub send: bool,
    pub rc: bool,
    pub read: bool,
    pub atomic: bool,
}

/// The budget of a build the manifest may lack, elaborated for its exact
/// parameters (READ_EN and ATOMIC_EN included) by the generator of the
/// repository at `root` (`hw/state/manifest.py --config`: Python,
/// Verilator, Yosys; a few seconds). The pools are given as the knobs that
/// make them.
pub fn elaborate(
    root: &std::path::Path,
    num_qp: u32,
    mp_window: u32,
    k: Knobs,
    pools: Pools,
) -> Result<Budget, String> {
    let cfg = format!(
        "NUM_Q={num_qp},MP_W={mp_window},SEND_EN={},RC_EN={},READ_EN={},ATOMIC_EN={},OST_RINGS={},\
         MP_PEND={},DMAC_N={}",
        u32::from(k.send),
        u32::from(k.rc),
        u32::from(k.read),
        u32::from(k.atomic),
        pools.rings,
        pools.mp_pend,
        pools.dmacs
    );
    let o = std::process::Command::new("python3")
        .arg(root.join(GENERATOR))
        .args(["--config", &cfg])
        .output()
        .map_err(|e| format!("{GENERATOR} --config {cfg}: python3: {e}"))?;
    if !o.status.success() {
        return Err(format!(
            "{GENERATOR} --config {cfg}: {}",
            String::from_utf8_lossy(&o.stderr).trim()
        ));
    }
    let c: Config = serde_json::from_slice(&o.stdout)
        .map_err(|e| format!("{GENERATOR} --config {cfg}: {e}"))?;
    of_config(&c)
}

/// The budget of a manifest entry, its items grouped by the category
/// table.
fn of_config(c: &Config) -> Result<Budget, String> {
    let item = |e: &Entry| -> Result<Item, String> {
        Ok(Item {
            module: e.module.clone(),
            name: e.name.clone(),
            bits: e.bits,
            category: category(&e.module, &e.name)
                .ok_or_else(|| format!("{}.{}: per-QP state with no category", e.module, e.name))?,
        })
    };
    let items: Vec<Item> = c.per_qp.iter().map(item).collect::<Result<_, _>>()?;
    let shared: Vec<Item> = c.shared.iter().map(item).collect::<Result<_, _>>()?;
    let mut by_category = BTreeMap::new();
    for it in &items {
        *by_category.entry(it.category.name()).or_insert(0.0) += it.bits as f64 / 8.0;
    }
    let bytes_per_qp = items.iter().map(|i| i.bits).sum::<u64>() as f64 / 8.0;
    let shared_bytes = shared.iter().map(|i| i.bits).sum::<u64>() as f64 / 8.0;
    let mp_window = c.params.mp_w;
    let list_bytes = items
        .iter()
        .filter(|i| matches!(i.name.as_str(), "sqf_qn" | "sqs_sched"))
        .map(|i| i.bits as f64 / 8.0)
        .sum::<f64>();
    let snak_bytes = items
        .iter()
        .filter(|i| i.category == Category::SelectiveNak)
        .map(|i| i.bits as f64 / 8.0)
        .sum::<f64>();
    let health_bytes = items
        .iter()
        .filter(|i| i.category == Category::PathHealth)
        .map(|i| i.bits as f64 / 8.0)
        .sum::<f64>();
    Ok(Budget {
        num_qp: c.params.num_q,
        mp_window,
        items,
        shared,
        shared_bytes,
        pools: c.pools,
        by_category,
        bytes_per_qp,
        mp_target_bytes: 64.0 + f64::from(mp_window) / 8.0 + list_bytes + snak_bytes + health_bytes,
        list_bytes,
        snak_bytes,
        health_bytes,
    })
}

/// Bytes per QP of what an mp QP needs: everything but the rc-only
/// message state (an mp packet carries its own RETH) and atomic replay
/// records (mp carries no atomics), and the completion queue (which
/// several QPs may share).
pub fn mp_needs(b: &Budget) -> f64 {
    b.items
        .iter()
        .filter(|i| {
            !matches!(
                i.category,
                Category::Message | Category::CompletionQueue | Category::AtomicReplay
            ) || matches!(i.name.as_str(), "rqc_ci" | "rqp_pi" | "rqc_vb" | "eps_lc")
        })
        .map(|i| i.bits as f64 / 8.0)
        .sum()
}

/// Print the budget as `rnic info` and the build report show it.
pub fn print(b: &Budget) {
    println!(
        "per-QP state  {:.1} bytes per QP ({} QPs: {:.1} KiB), mp window W = {} PSNs",
        b.bytes_per_qp,
        b.num_qp,
        b.bytes_per_qp * f64::from(b.num_qp) / 1024.0,
        b.mp_window
    );
    for (k, v) in &b.by_category {
        println!("  {k:<36} {v:>7.1} B");
    }
    println!(
        "  shared by all QPs: {:.1} KiB: {} outstanding-WQE rings of 8 (at most {} QPs have WQEs in flight at once), {} mp deferred-completion slots, {} destination MACs",
        b.shared_bytes / 1024.0,
        b.pools.rings,
        b.pools.rings,
        b.pools.mp_pend,
        b.pools.dmacs
    );
    println!(
        "  mp target 64 B + W/8 + the send queues' round-robin list {:.3} B + the selective NAK {:.3} B + path health {:.3} B = {:.3} B; what an mp QP needs (without the rc message state, the atomic replay records and the completion queue): {:.1} B",
        b.list_bytes,
        b.snak_bytes,
        b.health_bytes,
        b.mp_target_bytes,
        mp_needs(b)
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An rc build's knobs, with or without SEND/RECV and READ.
    fn knobs(send: bool, read: bool) -> Knobs {
        Knobs {
            send,
            rc: true,
            read,
            atomic: false,
        }
    }

    #[test]
    fn every_per_qp_structure_of_the_rtl_is_accounted() {
        let b = budget(64, 64, true, true, false, None).unwrap();
        assert!(b.items.len() > 40, "{:?}", b.items);
        for c in [
            Category::Context,
            Category::PsnRetry,
            Category::OutstandingRing,
            Category::Message,
            Category::Bitmap,
            Category::MpCompletion,
            Category::PerPath,
            Category::SelectiveNak,
            Category::PathHealth,
        ] {
            assert!(b.items.iter().any(|i| i.category == c), "{c:?} missing");
        }
        // the QP context: 183 bits at 64 QPs (QN_W 6, 16 MACs), all in
        // block RAM: the record's fields (remote WRITE, READ and atomics
        // allowed, max_rd_atomic and max_dest_rd_atomic among them), the
        // state the host wrote and the halves of the transport's two error
        // bits (HA and EA, HB and EB), whether the QP holds a MAC entry
        assert_eq!(b.by_category["context"], 183.0 / 8.0, "{:?}", b.items);
        assert!(b.items.iter().all(|i| !i.name.starts_with("state_b")));
        assert!(b.items.iter().any(|i| i.name == "qpc_rqb"));
        assert!(b
            .items
            .iter()
            .any(|i| i.name == "qpc_spray" && i.category == Category::PerPath));
        assert!(b.items.iter().all(|i| i.name != "dmi_mem"));
        let bmp = b.items.iter().find(|i| i.name == "rsp_bmp").unwrap();
        assert_eq!(bmp.bits, 64);
        // the responder's record (block RAM): its fields, not the flop
        // arrays they replaced; the message fields only with rc
        for f in [
            "rsp_msn",
            "rsp_wrid",
            "rsp_key",
            "rsp_cursor",
            "rsp_remain",
            "rsp_msglen",
            "rsp_msg",
        ] {
            assert!(b.items.iter().any(|i| i.name == f), "{f} missing");
        }
        assert!(b.items.iter().all(|i| ![
            "bmp_mem",
            "msn_mem",
            "cursor_mem",
            "wrid_mem",
            "inmsg_mem"
        ]
        .contains(&i.name.as_str())));
        let mp_only = budget(64, 64, false, false, false, None).unwrap();
        assert!(mp_only.items.iter().all(|i| ![
            "rsp_wrid",
            "rsp_key",
            "rsp_cursor",
            "rsp_remain",
            "rsp_msglen",
            "rsp_msg"
        ]
        .contains(&i.name.as_str())));
        // the rings are shared: 16 of them for 64 QPs, none per QP
        assert!(b.items.iter().all(|i| i.name != "ost"));
        assert_eq!(
            b.pools,
            Pools {
                rings: 16,
                mp_pend: 8,
                dmacs: 16
            }
        );
        let ring = b.shared.iter().find(|i| i.name == "ost").unwrap();
        assert_eq!(ring.bits, 229 * 8 * 16);
        // per QP: the ring's tail, in block RAM; the ring a QP holds and
        // its head are the shared owners' table's (ow_q_reg, ow_head_reg),
        // not per-QP records
        for gone in ["ring_num", "osth_head"] {
            assert!(b.items.iter().all(|i| i.name != gone), "{gone}");
        }
        for name in ["ow_q_reg", "ow_head_reg"] {
            assert!(b.shared.iter().any(|i| i.name == name), "{name}");
        }
        let tail = b.items.iter().find(|i| i.name == "sqp_tail").unwrap();
        assert_eq!((tail.bits, tail.category), (4, Category::OutstandingRing));
        assert!(b.items.iter().all(|i| ![
            "ring_mem",
            "ost_head_mem",
            "ost_tail_mem",
            "sq_psn_mem",
            "stamp_mem"
        ]
        .contains(&i.name.as_str())));
        assert!(b
            .items
            .iter()
            .any(|i| i.name == "sqc_base" && i.bits == 52 && i.category == Category::SendQueue));
        assert!(b.items.iter().all(|i| i.name != "sq_base"));
        // the requester's records: counted once, not per RAM copy; the
        // flop arrays they replace are gone
        for (name, bits, c) in [
            ("rql_tmo", 5, Category::PsnRetry),
            ("req_una", 24, Category::PsnRetry),
            ("snt_psn", 24, Category::PsnRetry),
            ("sqp_psn", 24, Category::PsnRetry),
            ("stamp_tick", 24, Category::PsnRetry),
            ("req_rot", 6, Category::PerPath),
            ("req_down", 8, Category::PathHealth),
            ("req_chg", 24, Category::PathHealth),
            ("rql_spray", 3, Category::PathHealth),
        ] {
            let n = b.items.iter().filter(|i| i.name == name).count();
            assert_eq!(n, 1, "{name}: {:?}", b.items);
            let it = b.items.iter().find(|i| i.name == name).unwrap();
            assert_eq!((it.bits, it.category), (bits, c), "{name}");
        }
        assert!(b.items.iter().all(|i| !matches!(
            i.name.as_str(),
            "una_mem" | "sent_mem" | "rot_mem" | "req_w" | "req_rtt"
        )));
        assert_eq!(
            budget(64, 128, true, true, false, None)
                .unwrap()
                .items
                .iter()
                .find(|i| i.name == "rsp_bmp")
                .unwrap()
                .bits,
            128
        );
        // an mp-only, write-only build carries what an mp QP needs, and
        // that stays within the target of 64 B + W/8 (the completion queue
        // apart: several QPs may share one)
        for w in [32, 64, 128] {
            let mp = budget(64, w, false, false, false, None).unwrap();
            let cq: f64 = mp
                .items
                .iter()
                .filter(|i| i.category == Category::CompletionQueue)
                .map(|i| i.bits as f64 / 8.0)
                .sum();
            assert!(
                mp.bytes_per_qp - cq <= mp.mp_target_bytes,
                "W={w}: {} B > {} B: {:?}",
                mp.bytes_per_qp - cq,
                mp.mp_target_bytes,
                mp.by_category
            );
            let full = budget(64, w, true, true, false, None).unwrap();
            assert_eq!(mp.bytes_per_qp - cq, mp_needs(&full));
        }
        // the SEND/RECV knob drops the SEND-only state
        let no_send = budget(64, 64, false, true, false, None).unwrap();
        assert!(no_send.items.iter().all(|i| i.name != "rsp_wrid"));
        assert!(no_send.bytes_per_qp < b.bytes_per_qp);
    }

    #[test]
    fn every_manifest_entry_is_classified_and_consistent() {
        for c in &manifest().configs {
            let p = c.params;
            let what = format!("{p:?}");
            // the pool rule above is rnic_core's: the elaboration agrees
            assert_eq!(
                Pools::of(p.num_q, p.ost_rings, p.mp_pend, p.dmac_n).unwrap(),
                c.pools,
                "{what}"
            );
            let b = budget(
                p.num_q,
                p.mp_w,
                p.send_en != 0,
                p.rc_en != 0,
                p.atomic_en != 0,
                None,
            )
            .unwrap();
            assert_eq!(b.items.len(), c.per_qp.len(), "{what}");
            // each record field is held by a block-RAM word of its record
            for e in c.per_qp.iter().filter(|e| e.record.is_some()) {
                let r = e.record.as_deref().unwrap();
                let f = e.name[r.len() + 1..].to_uppercase();
                assert!(
                    c.block_ram
                        .iter()
                        .any(|w| w.record == r && w.depth == p.num_q && w.fields.contains(&f)),
                    "{what}: {} in no block RAM",
                    e.name
                );
            }
            let mut names: Vec<_> = c.per_qp.iter().map(|e| (&e.module, &e.name)).collect();
            names.sort();
            names.dedup();
            assert_eq!(names.len(), c.per_qp.len(), "{what}: an item twice");
        }
        // a configuration the manifest lacks is an error naming its generator
        let e = budget(64, 48, true, true, false, None).unwrap_err();
        assert!(e.contains("hw/state/manifest.py"), "{e}");
    }

    /// A cross-check of the manifest against the RTL text (not a source of
    /// figures): every per-QP array or bit vector declared in the modules
    /// (outside `ifdef FORMAL`) and every field of a block-RAM record is in
    /// the manifest, so a manifest not regenerated after such an RTL change
    /// fails here as well as in CI's drift check.
    #[test]
    fn the_manifest_lacks_no_per_qp_declaration_of_the_rtl() {
        let rtl = [
            ("qp_context", include_str!("../../../hw/rtl/qp_context.v")),
            (
                "queue_manager",
                include_str!("../../../hw/rtl/queue_manager.v"),
            ),
            ("cq_manager", include_str!("../../../hw/rtl/cq_manager.v")),
            ("requester", include_str!("../../../hw/rtl/requester.v")),
            ("responder", include_str!("../../../hw/rtl/responder.v")),
        ];
        let c = manifest()
            .configs
            .iter()
            .find(|c| (c.params.num_q, c.params.send_en, c.params.rc_en) == (64, 1, 1))
            .unwrap();
        let known = |m: &str, n: &str| {
            c.per_qp
                .iter()
                .chain(&c.copies)
                .any(|e| e.module == m && e.name == n)
        };
        let records: Vec<&str> = c.block_ram.iter().map(|w| w.record.as_str()).collect();
        let mut seen = 0;
        for (module, src) in rtl {
            let mut formal = 0u32;
            for l in src.lines().map(str::trim) {
                if formal > 0 {
                    if l.starts_with("`ifdef") || l.starts_with("`ifndef") {
                        formal += 1;
                    } else if l.starts_with("`endif") {
                        formal -= 1;
                    }
                    continue;
                }
                if l.split_whitespace().collect::<Vec<_>>()[..] == ["`ifdef", "FORMAL"] {
                    formal = 1;
                    continue;
                }
                let decl = l.strip_prefix("reg [").and_then(|r| {
                    let (range, tail) = r.split_once(']')?;
                    let name: String = tail
                        .trim()
                        .chars()
                        .take_while(|c| c.is_alphanumeric() || *c == '_')
                        .collect();
                    let per_qp = ["NUM_QP-1:0", "NUM_Q-1:0"].contains(&range)
                        || ["[0:NUM_QP-1]", "[0:NUM_Q-1]"]
                            .iter()
                            .any(|d| tail.trim()[name.len()..].trim_start().starts_with(d));
                    per_qp.then_some(name)
                });
                let field = l
                    .strip_prefix("localparam ")
                    .and_then(|r| r.split_whitespace().next())
                    .and_then(|n| n.strip_suffix("_LSB"))
                    .and_then(|n| n.split_once('_'))
                    .filter(|(r, _)| records.contains(r))
                    .map(|(r, f)| format!("{r}_{f}").to_lowercase());
                if let Some(name) = decl.or(field) {
                    seen += 1;
                    assert!(
                        known(module, &name),
                        "{module}.{name}: not in {MANIFEST_PATH}"
                    );
                }
            }
        }
        assert!(seen > 60, "{seen}");
    }

    /// The generator run for one build (as `rnic build` does for a build
    /// the manifest lacks) gives what the manifest holds: Verilator, Yosys
    /// and Python on PATH, as for hw/lint.sh and the simulator.
    #[test]
    fn an_elaborated_build_matches_the_manifest() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let p = Pools::of(16, 0, 0, 0).unwrap();
        let e = elaborate(&root, 16, 64, knobs(false, false), p).unwrap();
        let m = budget(16, 64, false, true, false, None).unwrap();
        assert_eq!(
            serde_json::to_string(&e).unwrap(),
            serde_json::to_string(&m).unwrap()
        );
    }

    /// ATOMIC_EN adds exactly the responder's replay records to a build's
    /// per-QP state (four slots of PSN and original value, the ring's valid
    /// bits and next slot: 358 bits), nothing shared, and nothing an mp QP
    /// needs (mp carries no atomics).
    #[test]
    fn an_atomic_build_adds_the_replay_records() {
        for q in [16, 64, 1024] {
            let with = budget(q, 64, true, true, true, None).unwrap();
            let without = budget(q, 64, true, true, false, None).unwrap();
            assert_eq!(
                with.by_category["atomic replay records"],
                358.0 / 8.0,
                "{q} QPs: {:?}",
                with.items
            );
            assert_eq!(
                with.bytes_per_qp - without.bytes_per_qp,
                358.0 / 8.0,
                "{q} QPs"
            );
            assert_eq!(with.shared_bytes, without.shared_bytes, "{q} QPs");
            assert_eq!(mp_needs(&with), mp_needs(&without), "{q} QPs");
            assert!(!without.by_category.contains_key("atomic replay records"));
        }
    }

    /// What lets `budget` leave READ_EN out of the manifest's key: a build
    /// with the READ responder elaborates to the per-QP and shared state
    /// of the same build without it (with and without SEND/RECV).
    #[test]
    fn a_read_build_has_the_state_of_one_without() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let p = Pools::of(16, 0, 0, 0).unwrap();
        for send in [true, false] {
            let with = elaborate(&root, 16, 64, knobs(send, true), p).unwrap();
            let without = elaborate(&root, 16, 64, knobs(send, false), p).unwrap();
            assert_eq!(
                serde_json::to_string(&with).unwrap(),
                serde_json::to_string(&without).unwrap(),
                "SEND_EN={}",
                u32::from(send)
            );
        }
    }

    #[test]
    fn pools_scale_with_the_qp_count_unless_a_knob_sets_them() {
        let p = |q, r, m, d| Pools::of(q, r, m, d).unwrap();
        let v = |rings, mp_pend, dmacs| Pools {
            rings,
            mp_pend,
            dmacs,
        };
        // the simulator's 64 QPs: 16 rings, 8 slots, 16 MACs
        assert_eq!(p(64, 0, 0, 0), v(16, 8, 16));
        // the FPGA's 16 QPs: a quarter (an eighth), within the bounds
        assert_eq!(p(16, 0, 0, 0), v(4, 2, 4));
        assert_eq!(p(256, 0, 0, 0), v(16, 8, 16));
        // never more than the QPs
        assert_eq!(p(2, 0, 0, 0), v(2, 2, 2));
        assert_eq!(p(16, 8, 3, 32), v(8, 3, 16));
    }
}
