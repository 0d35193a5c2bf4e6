//! The on-chip state each QP costs, read off the RTL itself: every per-QP
//! array (`reg [W-1:0] x [0:NUM_QP-1]`), per-QP bit vector
//! (`reg [NUM_QP-1:0] x`) and the outstanding-WQE ring of the three
//! modules that keep per-QP state, with their widths evaluated for the
//! build's parameters (MP_W, QN_W), grouped by what they are for.
//!
//! Every QP of a build carries all of it (the transport is chosen per QP
//! at run time), so an mp QP's budget is the whole table; the rc-only
//! message state and the outstanding ring are what a dedicated mp build
//! could drop.

use std::collections::BTreeMap;

const RTL: [(&str, &str); 3] = [
    ("qp_context", include_str!("../../../hw/rtl/qp_context.v")),
    (
        "wqe_executor",
        include_str!("../../../hw/rtl/wqe_executor.v"),
    ),
    (
        "rc_responder",
        include_str!("../../../hw/rtl/rc_responder.v"),
    ),
];

/// What a per-QP structure is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Category {
    /// QP context: state, MTU, addresses, keys, receive ring.
    Context,
    /// Requester and responder PSNs, ACK/retry timers and counters.
    PsnRetry,
    /// The requester's outstanding-WQE ring (for completions and resends).
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
            Category::PsnRetry => "PSN/retry state",
            Category::OutstandingRing => "outstanding WQE ring",
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
        ("qp_context", "spray_mem") => PerPath,
        ("qp_context", _) => Context,
        ("wqe_executor", "ost_mem") => OutstandingRing,
        ("wqe_executor", "rot_mem" | "susp_mem" | "susp_v_reg") => PerPath,
        ("wqe_executor", _) => PsnRetry,
        ("rc_responder", "bmp_mem") => Bitmap,
        (
            "rc_responder",
            "pend_reg" | "owed_reg" | "pend_psn_mem" | "pend_imm_mem" | "pend_len_mem",
        ) => MpCompletion,
        (
            "rc_responder",
            "epsn_mem" | "msn_mem" | "nak_sent_reg" | "ack_owed_reg" | "owed_since_mem",
        ) => PsnRetry,
        (
            "rc_responder",
            "inmsg_mem" | "cursor_mem" | "remain_mem" | "msglen_mem" | "wrid_mem" | "rqci_mem"
            | "rqpi_mem" | "key_mem",
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

/// Find the per-QP declarations (`reg [H:L] name [0:NUM_QP-1]` and
/// `reg [NUM_QP-1:0] name`, the ring `[0:NUM_QP*OST_DEPTH-1]`). A
/// declaration whose comment says `(knob: SEND_EN)` exists only in builds
/// with SEND/RECV (`send_en`).
pub fn items(mp_window: u32, qn_w: u32, send_en: bool) -> Result<Vec<Item>, String> {
    let mut out = Vec::new();
    for (module, src) in RTL {
        let mut vars: BTreeMap<&str, i64> = BTreeMap::new();
        vars.insert("MP_W", i64::from(mp_window));
        vars.insert("QN_W", i64::from(qn_w));
        for line in src.lines() {
            let l = line.trim();
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
            let per_qp_vec = hi.replace(' ', "") == "NUM_QP-1" && lo.trim() == "0";
            let array = after.starts_with("[0:NUM_QP-1]");
            let ring = after.starts_with("[0:NUM_QP*OST_DEPTH-1]");
            if !(per_qp_vec || array || ring) || (!send_en && l.contains("(knob: SEND_EN)")) {
                continue;
            }
            let width = if per_qp_vec {
                1
            } else {
                let h =
                    eval(hi, &vars).ok_or_else(|| format!("{module}: width of {name}: {hi}"))?;
                let l =
                    eval(lo, &vars).ok_or_else(|| format!("{module}: width of {name}: {lo}"))?;
                h - l + 1
            };
            let depth = if ring {
                *vars.get("OST_DEPTH").ok_or("OST_DEPTH")?
            } else {
                1
            };
            let category = category(module, &name)
                .ok_or_else(|| format!("{module}.{name}: per-QP state with no category"))?;
            out.push(Item {
                module,
                name,
                bits: (width * depth) as u64,
                category,
            });
        }
    }
    Ok(out)
}

/// The budget of a build with `num_qp` QPs, window `mp_window` and the
/// SEND/RECV knob `send_en`.
pub fn budget(num_qp: u32, mp_window: u32, send_en: bool) -> Result<Budget, String> {
    let qn_w = (u32::BITS - num_qp.saturating_sub(1).leading_zeros()).max(1);
    let items = items(mp_window, qn_w, send_en)?;
    let mut by_category = BTreeMap::new();
    for it in &items {
        *by_category.entry(it.category.name()).or_insert(0.0) += it.bits as f64 / 8.0;
    }
    let bytes_per_qp = items.iter().map(|i| i.bits).sum::<u64>() as f64 / 8.0;
    Ok(Budget {
        num_qp,
        mp_window,
        items,
        by_category,
        bytes_per_qp,
        mp_target_bytes: 64.0 + f64::from(mp_window) / 8.0,
    })
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
    let mp_needs: f64 = b
        .items
        .iter()
        .filter(|i| !matches!(i.category, Category::OutstandingRing | Category::Message))
        .map(|i| i.bits as f64 / 8.0)
        .sum();
    println!(
        "  mp target 64 B + W/8 = {:.0} B; without the rc message state and the outstanding ring (what an mp-only build would drop): {:.1} B",
        b.mp_target_bytes, mp_needs
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_per_qp_structure_of_the_rtl_is_accounted() {
        let b = budget(64, 64, true).unwrap();
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
        let bmp = b.items.iter().find(|i| i.name == "bmp_mem").unwrap();
        assert_eq!(bmp.bits, 64);
        let ring = b.items.iter().find(|i| i.name == "ost_mem").unwrap();
        assert_eq!(ring.bits, 226 * 8);
        assert_eq!(
            budget(64, 128, true)
                .unwrap()
                .items
                .iter()
                .find(|i| i.name == "bmp_mem")
                .unwrap()
                .bits,
            128
        );
        // the SEND/RECV knob drops the SEND-only state
        let no_send = budget(64, 64, false).unwrap();
        assert!(no_send.items.iter().all(|i| i.name != "wrid_mem"));
        assert!(no_send.bytes_per_qp < b.bytes_per_qp);
    }
}
