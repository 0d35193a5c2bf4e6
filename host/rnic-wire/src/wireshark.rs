//! What the mp dissector this crate ships (`wireshark/rnic_mp.lua`) must
//! show for a frame: its path, its fields in a fixed order, and each
//! field's value as this crate decodes the frame. The tests that run it
//! under tshark (this crate's on random frames, `tests/mp_wire.rs` on a
//! capture of the simulator) compare against these, so a field added to
//! the dissector is added here once.

use crate::RoceFrame;

/// The dissector's path in the source tree (for `tshark -X
/// lua_script:PATH`); installing it is copying it into Wireshark's plugin
/// folder.
pub const MP_DISSECTOR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/wireshark/rnic_mp.lua");

/// The dissector's fields that show one number each, in the order of
/// [`mp_expected`]. (The SNAKETH's bitmap bytes and its list of lost PSNs
/// are [`MP_SNAKETH_FIELDS`].)
pub const MP_FIELDS: [&str; 24] = [
    "rnic_mp.bth.opcode",
    "rnic_mp.bth.se",
    "rnic_mp.bth.m",
    "rnic_mp.bth.padcnt",
    "rnic_mp.bth.tver",
    "rnic_mp.bth.p_key",
    "rnic_mp.bth.fecn",
    "rnic_mp.bth.becn",
    "rnic_mp.bth.destqp",
    "rnic_mp.bth.a",
    "rnic_mp.bth.psn",
    "rnic_mp.mpeth.va",
    "rnic_mp.mpeth.r_key",
    "rnic_mp.mpeth.len",
    "rnic_mp.immdt",
    "rnic_mp.mceth.msg_len",
    "rnic_mp.aeth.syndrome",
    "rnic_mp.aeth.kind",
    "rnic_mp.aeth.value",
    "rnic_mp.aeth.msn",
    "rnic_mp.snaketh.lost_count",
    "rnic_mp.payload_len",
    "rnic_mp.icrc",
    "rnic_mp.icrc.status",
];

/// The value each of [`MP_FIELDS`] must show for frame `f`, decoded from
/// (or encoded into) the bytes `raw` (`None`: the field is absent).
/// `icrc_good` is what the ICRC check must say. The ICRC is read where
/// the IPv4 total length ends the packet, so Ethernet padding after it
/// does not matter.
pub fn mp_expected(f: &RoceFrame, raw: &[u8], icrc_good: bool) -> [Option<u64>; 24] {
    let b = &f.bth;
    let end = crate::ETH_LEN + usize::from(u16::from_be_bytes([raw[16], raw[17]]));
    let icrc = raw
        .get(end.saturating_sub(crate::ICRC_LEN)..end)
        .map(|s| u64::from(u32::from_be_bytes(s.try_into().unwrap())));
    let (m, a) = (f.mpeth, f.aeth);
    [
        Some(b.opcode.into()),
        Some(b.se.into()),
        Some(b.m.into()),
        Some(b.pad_cnt.into()),
        Some(b.tver.into()),
        Some(b.pkey.into()),
        Some(b.fecn.into()),
        Some(b.becn.into()),
        Some(b.dest_qp.into()),
        Some(b.ack_req.into()),
        Some(b.psn.into()),
        m.map(|m| m.va),
        m.map(|m| m.rkey.into()),
        m.map(|m| m.len.into()),
        f.immdt.map(u64::from),
        f.mceth.map(|c| c.msg_len.into()),
        a.map(|a| a.syndrome.into()),
        a.map(|a| ((a.syndrome >> 5) & 3).into()),
        a.map(|a| (a.syndrome & 0x1f).into()),
        a.map(|a| a.msn.into()),
        f.lost_psns().map(|l| l.len() as u64),
        Some(f.payload.len() as u64),
        icrc,
        Some(icrc_good.into()),
    ]
}

/// The dissector's SNAKETH fields that are not one number, in the order of
/// [`mp_snaketh_expected`]: the bitmap's 16 bytes, and every lost PSN
/// (generated; the BTH PSN first, as [`RoceFrame::lost_psns`] lists them).
pub const MP_SNAKETH_FIELDS: [&str; 2] = ["rnic_mp.snaketh.bitmap", "rnic_mp.snaketh.lost_psn"];

/// What each of [`MP_SNAKETH_FIELDS`] must show for frame `f`, as
/// [`tshark_text`] reads it: the bitmap as 32 lowercase hex digits, the
/// lost PSNs in decimal, comma-separated, in [`RoceFrame::lost_psns`]'s
/// order (`None`: absent, the frame is not an MP SELECTIVE NAK).
pub fn mp_snaketh_expected(f: &RoceFrame) -> [Option<String>; 2] {
    let bitmap = crate::has_snaketh(f.bth.opcode).then(|| {
        let b = f.snaketh.unwrap_or_default().bitmap;
        format!("{b:032x}")
    });
    let lost = f
        .lost_psns()
        .map(|l| l.iter().map(u32::to_string).collect::<Vec<_>>().join(","));
    [bitmap, lost]
}

/// A bytes or repeated field as `tshark -T fields` prints it, in the form
/// of [`mp_snaketh_expected`]: the colons between bytes (if this tshark
/// prints them) removed, lowercase; `None` for an empty (absent) field.
pub fn tshark_text(s: &str) -> Option<String> {
    let s = s.trim();
    (!s.is_empty()).then(|| s.replace(':', "").to_ascii_lowercase())
}

/// A value as `tshark -T fields` prints it: decimal, 0x-hex or
/// True/False; `None` for an empty (absent) field.
pub fn tshark_value(s: &str) -> Result<Option<u64>, String> {
    let s = s.trim();
    Ok(Some(match s {
        "" => return Ok(None),
        "True" => 1,
        "False" => 0,
        _ => match s.strip_prefix("0x") {
            Some(h) => u64::from_str_radix(h, 16).map_err(|e| format!("{s:?}: {e}"))?,
            None => s.parse().map_err(|e| format!("{s:?}: {e}"))?,
        },
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_dissector_declares_every_field() {
        let src = std::fs::read_to_string(MP_DISSECTOR).unwrap();
        for f in MP_FIELDS.into_iter().chain(MP_SNAKETH_FIELDS) {
            assert!(
                src.contains(&format!("\"{f}\"")),
                "{f} not in {MP_DISSECTOR}"
            );
        }
    }

    #[test]
    fn tshark_values() {
        assert_eq!(tshark_value(""), Ok(None));
        assert_eq!(tshark_value("0x1f"), Ok(Some(31)));
        assert_eq!(tshark_value("True"), Ok(Some(1)));
        assert_eq!(tshark_value(" 12 "), Ok(Some(12)));
        assert!(tshark_value("zz").is_err());
        assert_eq!(tshark_text(""), None);
        assert_eq!(tshark_text("0A:ff:00"), Some("0aff00".into()));
        assert_eq!(tshark_text("5,6,7\n"), Some("5,6,7".into()));
    }

    #[test]
    fn snaketh_expected() {
        use crate::{opcode, Bth, Snaketh};
        let mut f = RoceFrame {
            bth: Bth {
                opcode: opcode::MP_SELECTIVE_NAK,
                psn: 0xFF_FFFF,
                ..Bth::default()
            },
            snaketh: Some(Snaketh { bitmap: 0b101 }),
            ..RoceFrame::default()
        };
        assert_eq!(
            mp_snaketh_expected(&f),
            [
                Some("00000000000000000000000000000005".into()),
                Some("16777215,0,2".into())
            ]
        );
        let count = MP_FIELDS
            .iter()
            .position(|&n| n == "rnic_mp.snaketh.lost_count")
            .unwrap();
        assert_eq!(mp_expected(&f, &f.encode(), true)[count], Some(3));
        f.bth.opcode = opcode::MP_ACKNOWLEDGE;
        assert_eq!(mp_snaketh_expected(&f), [None, None]);
        assert_eq!(mp_expected(&f, &f.encode(), true)[count], None);
    }
}
