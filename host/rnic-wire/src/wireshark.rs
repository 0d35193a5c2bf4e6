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

/// The dissector's fields, in the order of [`mp_expected`].
pub const MP_FIELDS: [&str; 23] = [
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
    "rnic_mp.payload_len",
    "rnic_mp.icrc",
    "rnic_mp.icrc.status",
];

/// The value each of [`MP_FIELDS`] must show for frame `f`, decoded from
/// (or encoded into) the bytes `raw` (`None`: the field is absent).
/// `icrc_good` is what the ICRC check must say. The ICRC is read where
/// the IPv4 total length ends the packet, so Ethernet padding after it
/// does not matter.
pub fn mp_expected(f: &RoceFrame, raw: &[u8], icrc_good: bool) -> [Option<u64>; 23] {
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
        Some(f.payload.len() as u64),
        icrc,
        Some(icrc_good.into()),
    ]
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
        for f in MP_FIELDS {
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
    }
}
