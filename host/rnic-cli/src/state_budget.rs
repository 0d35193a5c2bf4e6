//! The on-chip state each QP costs, read off the RTL itself: every per-QP
//! array (`reg [W-1:0] x [0:NUM_QP-1]`, `[0:NUM_Q-1]` in the queue
//! manager) and per-QP bit vector (`reg [NUM_QP-1:0] x`) of the modules
//! that keep per-QP state, and the fields of the records in block RAM
//! (`localparam <PREFIX>_<FIELD>_W`, prefixes in RECORDS: qp_context's
//! QPC_, the requester's RQL_, REQ_, SNT_, rc_responder's RSP_, the queue
//! manager's SQC_; counted once however many read-port copies hold it; a
//! flop copy marked `(copy)` is not counted again),
//! with their widths evaluated for the build's
//! parameters (MP_W, QN_W, OST_RINGS), grouped by what they are for; and
//! apart from it the state every QP shares (the pool of outstanding-WQE
//! rings, `[0:OST_RINGS*OST_DEPTH-1]`).
//!
//! Every QP of a build carries all of the per-QP state (the transport is
//! chosen per QP at run time), so an mp QP's budget is the whole table; the
//! rc-only message state is what a dedicated mp build could drop.

use std::collections::BTreeMap;

const RTL: [(&str, &str); 4] = [
    ("qp_context", include_str!("../../../hw/rtl/qp_context.v")),
    (
        "queue_manager",
        include_str!("../../../hw/rtl/queue_manager.v"),
    ),
    (
        "wqe_executor",
        include_str!("../../../hw/rtl/wqe_executor.v"),
    ),
    (
        "rc_responder",
        include_str!("../../../hw/rtl/rc_responder.v"),
    ),
];

/// The records in block RAM: (module, prefix of their `localparam
/// <PREFIX>_<FIELD>_W` lines); an item is named `<prefix>_<field>`, lower
/// case.
const RECORDS: [(&str, &str); 6] = [
    ("qp_context", "QPC_"),
    ("wqe_executor", "RQL_"),
    ("wqe_executor", "REQ_"),
    ("wqe_executor", "SNT_"),
    ("rc_responder", "RSP_"),
    ("queue_manager", "SQC_"),
];

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
}

impl Category {
    pub fn name(self) -> &'static str {
        match self {
            Category::Context => "context",
            Category::SendQueue => "send queue",
            Category::CompletionQueue => "completion queue",
            Category::PsnRetry => "PSN/retry state",
            Category::OutstandingRing => "outstanding WQE ring (its number)",
            Category::Message => "responder message + receive queue",
            Category::Bitmap => "mp bitmap",
            Category::MpCompletion => "mp deferred completion",
            Category::PerPath => "per-path state",
        }
    }
}

fn category(module: &str, name: &str) -> Option<Category> {
    use Category::*;
    Some(match (module, name) {
        ("qp_context", "qpc_spray") => PerPath,
        ("qp_context", _) => Context,
        ("queue_manager", n) if n.starts_with("sq_") || n.starts_with("sqc_") => SendQueue,
        ("queue_manager", n) if n.starts_with("cq_") || n == "msi_pending_reg" => CompletionQueue,
        (
            "wqe_executor",
            "ost_mem" | "ost_head_mem" | "ost_tail_mem" | "ring_mem" | "ring_free_reg",
        ) => OutstandingRing,
        ("wqe_executor", "req_rot" | "req_susp" | "req_suspv") => PerPath,
        ("wqe_executor", _) => PsnRetry,
        ("rc_responder", "rsp_bmp" | "rsp_clr_reg") => Bitmap,
        (
            "rc_responder",
            "pend_reg" | "owed_reg" | "pslot_mem" | "pslot_free_reg" | "pend_psn_mem"
            | "pend_imm_mem" | "pend_len_mem",
        ) => MpCompletion,
        (
            "rc_responder",
            "epsn_mem" | "rsp_msn" | "nak_sent_reg" | "ack_owed_reg" | "ack_age1_reg"
            | "ack_age2_reg",
        ) => PsnRetry,
        (
            "rc_responder",
            "inmsg_mem" | "rsp_cursor" | "rsp_remain" | "rsp_msglen" | "rsp_wrid" | "rqci_mem"
            | "rqpi_mem" | "rsp_key",
        ) => Message,
        _ => return None,
    })
}

/// One per-QP structure.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Item {
    pub module: &'static str,
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
    /// The target for an mp QP: 64 bytes plus W/8 of bitmap.
    pub mp_target_bytes: f64,
}

/// Evaluate a width expression of the RTL: a number, a parameter, or
/// `P-1`-style forms over MP_W, QN_W, OST_W, OST_DEPTH.
fn eval(expr: &str, vars: &BTreeMap<&str, i64>) -> Option<i64> {
    let e = expr.replace(' ', "");
    if let Ok(v) = e.parse() {
        return Some(v);
    }
    for op in ['*', '-', '+'] {
        if let Some((a, b)) = e.rsplit_once(op) {
            let (a, b) = (eval(a, vars)?, eval(b, vars)?);
            return Some(match op {
                '*' => a * b,
                '-' => a - b,
                _ => a + b,
            });
        }
    }
    vars.get(e.as_str()).copied()
}

/// The arguments (per, lo, hi) of an rnic_core pool size
/// `localparam NAME = pool_size(KNOB, per, lo, hi);`.
fn pool_rule(name: &str) -> Option<[u32; 3]> {
    let args = include_str!("../../../hw/rtl/rnic_core.v")
        .lines()
        .filter_map(|l| l.trim().strip_prefix("localparam "))
        .filter_map(|r| r.strip_prefix(name))
        .filter_map(|r| r.trim_start().strip_prefix("= pool_size("))
        .find_map(|r| r.split(')').next())?;
    let v: Vec<u32> = args
        .split(',')
        .skip(1)
        .filter_map(|a| a.trim().parse().ok())
        .collect();
    v.try_into().ok()
}

/// The shared pools of a build: outstanding-WQE rings, mp deferred
/// completion slots, destination-MAC table entries.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct Pools {
    pub rings: u32,
    pub mp_pend: u32,
    pub dmacs: u32,
}

impl Pools {
    /// The pools of a build with `num_qp` QPs and the knobs (0: sized
    /// from the QP count), as rnic_core's `pool_size` computes them.
    pub fn of(num_qp: u32, rings: u32, mp_pend: u32, dmacs: u32) -> Result<Pools, String> {
        let size = |name: &str, knob: u32| -> Result<u32, String> {
            let [per, lo, hi] = pool_rule(name).ok_or(format!("rnic_core.v: {name}"))?;
            let n = if knob != 0 {
                knob
            } else {
                (num_qp / per).clamp(lo, hi)
            };
            Ok(n.min(num_qp))
        };
        Ok(Pools {
            rings: size("OST_RINGS_Q", rings)?,
            mp_pend: size("MP_PEND_Q", mp_pend)?,
            dmacs: size("DMAC_N_Q", dmacs)?,
        })
    }
}

/// Find the per-QP declarations (`reg [H:L] name [0:NUM_QP-1]` and
/// `reg [NUM_QP-1:0] name`, NUM_Q in the queue manager) and the shared
/// ones (`[0:OST_RINGS*OST_DEPTH-1]`, `reg [OST_RINGS-1:0]`); the first
/// list is per QP, the second for the whole NIC. A declaration whose
/// comment says `(knob: SEND_EN)` exists only in builds with SEND/RECV
/// (`send_en`), one saying `(knob: RC_EN)` only in builds with rc (`rc_en`).
pub fn items(
    mp_window: u32,
    qn_w: u32,
    rings: u32,
    pend: u32,
    dmacs: u32,
    send_en: bool,
    rc_en: bool,
) -> Result<(Vec<Item>, Vec<Item>), String> {
    let mut per_qp = Vec::new();
    let mut shared = Vec::new();
    for (module, src) in RTL {
        let mut vars: BTreeMap<&str, i64> = BTreeMap::new();
        vars.insert("MP_W", i64::from(mp_window));
        vars.insert("QN_W", i64::from(qn_w));
        vars.insert("OST_RINGS", i64::from(rings));
        vars.insert(
            "RG_W",
            i64::from(rings.next_power_of_two().trailing_zeros()),
        );
        vars.insert("MP_PEND", i64::from(pend));
        vars.insert("PS_W", i64::from(pend.next_power_of_two().trailing_zeros()));
        let dmacs = i64::from(dmacs);
        vars.insert("DMAC_N", dmacs);
        vars.insert(
            "MI_W",
            i64::from((dmacs as u32).next_power_of_two().trailing_zeros()),
        );
        // `ifdef FORMAL` blocks hold the proofs' own bookkeeping (hw/formal),
        // which synthesis never sees: not state of the NIC
        let mut formal_depth = 0u32;
        for line in src.lines() {
            let l = line.trim();
            if formal_depth > 0 {
                if l.starts_with("`ifdef") || l.starts_with("`ifndef") {
                    formal_depth += 1;
                } else if l.starts_with("`endif") {
                    formal_depth -= 1;
                }
                continue;
            }
            if l.split_whitespace().collect::<Vec<_>>()[..] == ["`ifdef", "FORMAL"] {
                formal_depth = 1;
                continue;
            }
            // the ring's entry width and depth are plain localparams
            for k in ["OST_W", "OST_DEPTH"] {
                let v = l
                    .strip_prefix("localparam ")
                    .and_then(|r| r.strip_prefix(k))
                    .and_then(|r| r.trim_start().strip_prefix('='))
                    .and_then(|r| r.trim().trim_end_matches(';').parse().ok());
                if let Some(v) = v {
                    vars.insert(k, v);
                }
            }
            // a record's field (block RAM): `localparam <P>_<FIELD>_W = w;`
            // one field each (QPC_A_W is port a's share of the record, not a
            // field); a knob comment as for the arrays below
            if let Some((prefix, (field, w))) = RECORDS
                .iter()
                .filter(|(m, _)| *m == module)
                .find_map(|(_, p)| {
                    l.strip_prefix("localparam ")
                        .and_then(|r| r.strip_prefix(p))
                        .and_then(|r| r.split_once("_W ="))
                        .map(|fw| (p, fw))
                })
                .filter(|(p, (f, _))| {
                    !f.is_empty()
                        && (**p != "QPC_" || *f != "A")
                        && f.chars()
                            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
                })
            {
                if (!send_en && l.contains("(knob: SEND_EN)"))
                    || (!rc_en && l.contains("(knob: RC_EN)"))
                {
                    continue;
                }
                let w = w.split("//").next().unwrap_or(w);
                let w = w.trim().trim_end_matches(';');
                let bits =
                    eval(w, &vars).ok_or_else(|| format!("{module}: width of {field}: {w}"))?;
                let name = format!("{}{}", prefix.to_lowercase(), field.to_lowercase());
                let category = category(module, &name)
                    .ok_or_else(|| format!("{module}.{name}: per-QP state with no category"))?;
                per_qp.push(Item {
                    module,
                    name,
                    bits: bits as u64,
                    category,
                });
                continue;
            }
            let Some(rest) = l.strip_prefix("reg [") else {
                continue;
            };
            let Some((range, tail)) = rest.split_once(']') else {
                continue;
            };
            let tail = tail.trim();
            let name: String = tail
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            let after = tail[name.len()..].trim_start();
            let (hi, lo) = range.split_once(':').ok_or("range")?;
            // a bit vector `[N-1:0]` (one bit per element) or an array
            // `[H:L] name [0:N-1]`; N says whose state it is: NUM_QP/NUM_Q
            // per QP, a pool size (the outstanding rings, the mp
            // deferred-completion slots, the destination-MAC table) shared
            let vec_n = (lo.trim() == "0")
                .then(|| hi.replace(' ', "").strip_suffix("-1").map(str::to_owned))
                .flatten();
            let array_n = after
                .strip_prefix("[0:")
                .and_then(|r| r.split_once("-1]"))
                .map(|(n, _)| n.replace(' ', ""));
            let (count, elem_bits) = match (array_n, vec_n) {
                (Some(n), _) => {
                    let h = eval(hi, &vars)
                        .ok_or_else(|| format!("{module}: width of {name}: {hi}"))?;
                    let l = eval(lo, &vars)
                        .ok_or_else(|| format!("{module}: width of {name}: {lo}"))?;
                    (n, h - l + 1)
                }
                (None, Some(n)) => (n, 1),
                (None, None) => continue,
            };
            let is_per_qp = count == "NUM_QP" || count == "NUM_Q";
            let is_shared = matches!(
                count.as_str(),
                "OST_RINGS*OST_DEPTH" | "OST_RINGS" | "MP_PEND" | "DMAC_N"
            );
            if !(is_per_qp || is_shared)
                || l.contains("(copy)")
                || (!send_en && l.contains("(knob: SEND_EN)"))
                || (!rc_en && l.contains("(knob: RC_EN)"))
            {
                continue;
            }
            let depth = if is_per_qp {
                1
            } else {
                eval(&count, &vars).ok_or_else(|| format!("{module}: size of {name}: {count}"))?
            };
            let bits = (elem_bits * depth) as u64;
            let category = category(module, &name)
                .ok_or_else(|| format!("{module}.{name}: per-QP state with no category"))?;
            let item = Item {
                module,
                name,
                bits,
                category,
            };
            if is_shared {
                shared.push(item);
            } else {
                per_qp.push(item);
            }
        }
    }
    Ok((per_qp, shared))
}

/// The budget of a build with `num_qp` QPs, window `mp_window`, the
/// SEND/RECV and rc knobs `send_en`, `rc_en`, and its shared `pools`
/// (None: the RTL's default for `num_qp`).
pub fn budget(
    num_qp: u32,
    mp_window: u32,
    send_en: bool,
    rc_en: bool,
    pools: Option<Pools>,
) -> Result<Budget, String> {
    let qn_w = (u32::BITS - num_qp.saturating_sub(1).leading_zeros()).max(1);
    let pools = match pools {
        Some(p) => p,
        None => Pools::of(num_qp, 0, 0, 0)?,
    };
    let (items, shared) = items(
        mp_window,
        qn_w,
        pools.rings,
        pools.mp_pend,
        pools.dmacs,
        send_en,
        rc_en,
    )?;
    let mut by_category = BTreeMap::new();
    for it in &items {
        *by_category.entry(it.category.name()).or_insert(0.0) += it.bits as f64 / 8.0;
    }
    let bytes_per_qp = items.iter().map(|i| i.bits).sum::<u64>() as f64 / 8.0;
    let shared_bytes = shared.iter().map(|i| i.bits).sum::<u64>() as f64 / 8.0;
    Ok(Budget {
        num_qp,
        mp_window,
        items,
        shared,
        shared_bytes,
        pools,
        by_category,
        bytes_per_qp,
        mp_target_bytes: 64.0 + f64::from(mp_window) / 8.0,
    })
}

/// Bytes per QP of what an mp QP needs: everything but the rc-only
/// message state (an mp packet carries its own RETH) and the completion
/// queue (which several QPs may share).
pub fn mp_needs(b: &Budget) -> f64 {
    b.items
        .iter()
        .filter(|i| {
            !matches!(i.category, Category::Message | Category::CompletionQueue)
                || matches!(i.name.as_str(), "rqci_mem" | "rqpi_mem")
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
        "  mp target 64 B + W/8 = {:.0} B; what an mp QP needs (without the rc message state and the completion queue): {:.1} B",
        b.mp_target_bytes,
        mp_needs(b)
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_per_qp_structure_of_the_rtl_is_accounted() {
        let b = budget(64, 64, true, true, None).unwrap();
        assert!(b.items.len() > 40, "{:?}", b.items);
        for c in [
            Category::Context,
            Category::PsnRetry,
            Category::OutstandingRing,
            Category::Message,
            Category::Bitmap,
            Category::MpCompletion,
            Category::PerPath,
        ] {
            assert!(b.items.iter().any(|i| i.category == c), "{c:?} missing");
        }
        // the QP context: 171 bits at 64 QPs (QN_W 6, 16 MACs), the
        // record's fields (block RAM) and the flops (state, remote_write,
        // mp, whether the QP holds a MAC entry)
        assert_eq!(b.by_category["context"], 171.0 / 8.0, "{:?}", b.items);
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
        ] {
            assert!(b.items.iter().any(|i| i.name == f), "{f} missing");
        }
        assert!(b
            .items
            .iter()
            .all(|i| !["bmp_mem", "msn_mem", "cursor_mem", "wrid_mem"].contains(&i.name.as_str())));
        let mp_only = budget(64, 64, false, false, None).unwrap();
        assert!(mp_only.items.iter().all(|i| ![
            "rsp_wrid",
            "rsp_key",
            "rsp_cursor",
            "rsp_remain",
            "rsp_msglen"
        ]
        .contains(&i.name.as_str())));
        // the rings are shared: 16 of them for 64 QPs, none per QP
        assert!(b.items.iter().all(|i| i.name != "ost_mem"));
        assert_eq!(
            b.pools,
            Pools {
                rings: 16,
                mp_pend: 8,
                dmacs: 16
            }
        );
        let ring = b.shared.iter().find(|i| i.name == "ost_mem").unwrap();
        assert_eq!(ring.bits, 226 * 8 * 16);
        let ring_no = b.items.iter().find(|i| i.name == "ring_mem").unwrap();
        assert_eq!(ring_no.bits, 4);
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
            ("req_rot", 6, Category::PerPath),
            ("req_suspv", 1, Category::PerPath),
        ] {
            let n = b.items.iter().filter(|i| i.name == name).count();
            assert_eq!(n, 1, "{name}: {:?}", b.items);
            let it = b.items.iter().find(|i| i.name == name).unwrap();
            assert_eq!((it.bits, it.category), (bits, c), "{name}");
        }
        assert!(b.items.iter().all(|i| !matches!(
            i.name.as_str(),
            "una_mem" | "sent_mem" | "rot_mem" | "req_w"
        )));
        assert_eq!(
            budget(64, 128, true, true, None)
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
            let mp = budget(64, w, false, false, None).unwrap();
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
            let full = budget(64, w, true, true, None).unwrap();
            assert_eq!(mp.bytes_per_qp - cq, mp_needs(&full));
        }
        // the SEND/RECV knob drops the SEND-only state
        let no_send = budget(64, 64, false, true, None).unwrap();
        assert!(no_send.items.iter().all(|i| i.name != "rsp_wrid"));
        assert!(no_send.bytes_per_qp < b.bytes_per_qp);
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
