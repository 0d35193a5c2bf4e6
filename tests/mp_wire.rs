//! The mp transport's wire format on captures of the simulated wire (an mp
//! torture run on 8 sprayed paths, as `rnic torture --transport mp
//! --spray-ports 8 --fabric spray-8 --pcap f.pcap` makes):
//!
//! - every frame decodes with `rnic-wire` (ICRC included) and carries an mp
//!   opcode, never an RC one, and its headers mean what they carry: the
//!   MPETH length is the packet's payload, a message's packets are
//!   contiguous and its MCETH length is their sum; Wireshark's own
//!   InfiniBand dissector finds no RETH in it (nothing reads as RC);
//! - the Lua dissector `host/rnic-wire/wireshark/rnic_mp.lua` under tshark
//!   decodes every field of every frame as `rnic-wire` does, and finds
//!   every ICRC good; a copy of it with one field offset wrong fails the
//!   same comparison (the check can fail);
//! - the opcode values of `hw/formats/rnic_formats.rdl` (the RTL's) are
//!   `rnic-wire`'s.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use rnic_driver::formats::MpOpcode;
use rnic_tests::capture::{
    capture_path, first_differing_resend, seed_showing_break, torture_capture, DifferingResend,
};
use rnic_torture::sim::SimOpts;
use rnic_torture::Break;
use rnic_wire::wireshark::{
    mp_expected, mp_snaketh_expected, tshark_text, tshark_value, MP_DISSECTOR, MP_FIELDS,
    MP_SNAKETH_FIELDS,
};
use rnic_wire::{decode, has_mpeth, is_mp, is_probe, is_rc, opcode, opcode_name, RoceFrame};

/// An mp torture run on `fabric` with every frame captured; returns the
/// frames.
fn capture(data_w: u32, seed: u64, messages: u64, fabric: &str, path: &Path) -> Vec<Vec<u8>> {
    capture_with(data_w, seed, messages, fabric, &[], path)
}

/// [`capture`] with debug switches on in both NICs.
fn capture_with(
    data_w: u32,
    seed: u64,
    messages: u64,
    fabric: &str,
    switches: &[Break],
    path: &Path,
) -> Vec<Vec<u8>> {
    let cfg = rnic_torture::Config {
        seed,
        messages,
        max_size: 8192,
        mp: true,
        spray_log: 3,
        ..Default::default()
    };
    let o = SimOpts {
        data_w,
        seed,
        fabric: fabric.into(),
        debug_switches: switches.to_vec(),
        ..Default::default()
    };
    torture_capture(&o, &cfg, path)
}

fn tmp(name: &str) -> PathBuf {
    capture_path(&format!("mp-wire-{name}"))
}

/// Whether an MP ACKNOWLEDGE covering the resend's PSN went back to its
/// requester between the first send and the resend `d`: then the WQE's
/// CQE could be out, and the resend read its buffer after it.
fn acked_between(frames: &[RoceFrame], d: DifferingResend) -> bool {
    let req = &frames[d.frame];
    frames[d.first + 1..d.frame].iter().any(|f| {
        f.bth.opcode == opcode::MP_ACKNOWLEDGE
            && f.ip.dst == req.ip.src
            && (f.bth.psn.wrapping_sub(d.psn) & 0xff_ffff) < 0x80_0000
    })
}

fn decode_all(frames: &[Vec<u8>]) -> Vec<RoceFrame> {
    frames
        .iter()
        .enumerate()
        .map(|(i, f)| decode(f).unwrap_or_else(|e| panic!("frame {i}: {e}")))
        .collect()
}

/// The checks of an mp capture that need no Wireshark.
fn check_frames(frames: &[Vec<u8>], mtu: usize) -> Vec<RoceFrame> {
    let decoded = decode_all(frames);
    // A resend is the same packet, also one sent after an ACK covered its
    // PSN: the WQE's CQE waits for the walk's payload reads (requester.v,
    // cqe_hold), so the host cannot have reused the buffer yet.
    if let Some(d) = first_differing_resend(&decoded) {
        panic!(
            "frame {}: a resend differs from the first send (frame {}){}",
            d.frame,
            d.first,
            if acked_between(&decoded, d) {
                "; an ACK covering it went out between them: the NIC \
                 read the buffer after the WQE's CQE"
            } else {
                ""
            }
        );
    }
    let mut seen: BTreeMap<u8, usize> = BTreeMap::new();
    // requests by (destination QP, PSN); a resent packet is the same packet
    let mut reqs: BTreeMap<(u32, u32), (usize, &RoceFrame)> = BTreeMap::new();
    for (i, f) in decoded.iter().enumerate() {
        let op = f.bth.opcode;
        *seen.entry(op).or_default() += 1;
        assert!(
            is_mp(op) && !is_rc(op),
            "frame {i}: opcode {op:#04x} ({}) is not an mp opcode",
            opcode_name(op)
        );
        assert!(f.reth.is_none(), "frame {i}: a RETH");
        if has_mpeth(op) {
            let m = f.mpeth.unwrap();
            assert_eq!(m.len as usize, f.payload.len(), "frame {i}: MPETH length");
            if op == opcode::MP_WRITE {
                assert_eq!(f.payload.len(), mtu, "frame {i}: MP WRITE not one MTU");
            }
            reqs.insert((f.bth.dest_qp, f.bth.psn), (i, f));
        } else {
            // (a path probe and its reply are a BTH alone)
            assert!(
                (f.aeth.is_some() || is_probe(op)) && f.payload.is_empty(),
                "frame {i}"
            );
        }
    }
    for op in [
        opcode::MP_WRITE,
        opcode::MP_WRITE_LAST,
        opcode::MP_WRITE_LAST_WITH_IMMEDIATE,
        opcode::MP_ACKNOWLEDGE,
    ] {
        assert!(seen.contains_key(&op), "no {}: {seen:?}", opcode_name(op));
    }
    // messages: runs of consecutive PSNs of one QP ending with a LAST;
    // their packets are contiguous and the MCETH length is their sum
    let mut messages = 0;
    let mut run: Vec<&RoceFrame> = Vec::new();
    let mut prev: Option<(u32, u32)> = None;
    for (&(qp, psn), &(_, f)) in &reqs {
        if prev.is_some_and(|(q, p)| q != qp || (p + 1) & 0xff_ffff != psn) {
            run.clear(); // a gap: the capture starts or ends mid-message
        }
        prev = Some((qp, psn));
        if let Some(last) = run.last() {
            let m = last.mpeth.unwrap();
            assert_eq!(
                f.mpeth.unwrap().va,
                m.va + u64::from(m.len),
                "QP {qp:#x} PSN {psn}: not contiguous"
            );
            assert_eq!(f.mpeth.unwrap().rkey, m.rkey);
        }
        run.push(f);
        if f.bth.opcode != opcode::MP_WRITE {
            let total: usize = run.iter().map(|g| g.payload.len()).sum();
            if let Some(c) = f.mceth {
                assert_eq!(c.msg_len as usize, total, "QP {qp:#x} PSN {psn}: MCETH");
            }
            messages += 1;
            run.clear();
        }
    }
    assert!(messages > 0);
    decoded
}

/// tshark's fields for every frame, `|`-separated, with the given Lua
/// script (or none).
fn tshark(pcap: &Path, script: Option<&Path>, fields: &[&str]) -> Vec<Vec<String>> {
    let mut cmd = Command::new("tshark");
    if let Some(s) = script {
        cmd.arg("-X").arg(format!("lua_script:{}", s.display()));
    }
    cmd.arg("-r")
        .arg(pcap)
        .args(["-T", "fields", "-E", "separator=|", "-E", "occurrence=a"]);
    for f in fields {
        cmd.args(["-e", f]);
    }
    let out = cmd.output().expect("run tshark");
    assert!(
        out.status.success(),
        "tshark failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !err.contains("Lua: Error") && !err.contains("lua_script"),
        "tshark: {err}"
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| l.split('|').map(str::to_string).collect())
        .collect()
}

fn tshark_present() -> bool {
    if Command::new("tshark").arg("--version").output().is_ok() {
        return true;
    }
    eprintln!("NOTICE: tshark not installed; the Wireshark checks are skipped");
    false
}

/// The dissector's fields, the selective NAK's bitmap and lost PSNs, and
/// its payload last.
fn fields() -> Vec<&'static str> {
    let mut f = MP_FIELDS.to_vec();
    f.extend(MP_SNAKETH_FIELDS);
    f.push("rnic_mp.payload");
    f
}

/// The dissector's fields of every frame against rnic-wire's decoding:
/// `Err` at the first difference.
fn compare(lines: &[Vec<String>], frames: &[RoceFrame], raw: &[Vec<u8>]) -> Result<(), String> {
    if lines.len() != frames.len() {
        return Err(format!("{} lines for {} frames", lines.len(), frames.len()));
    }
    for (i, ((v, f), bytes)) in lines.iter().zip(frames).zip(raw).enumerate() {
        let n = MP_FIELDS.len() + MP_SNAKETH_FIELDS.len();
        if v.len() != n + 1 {
            return Err(format!("frame {i}: {} fields: {v:?}", v.len()));
        }
        let b = &f.bth;
        let want = mp_expected(f, bytes, true);
        for (k, w) in want.iter().enumerate() {
            let got =
                tshark_value(&v[k]).map_err(|e| format!("frame {i} {}: {e}", MP_FIELDS[k]))?;
            if got != *w {
                return Err(format!(
                    "frame {i} ({}): {} is {got:?}, rnic-wire says {w:?}",
                    opcode_name(b.opcode),
                    MP_FIELDS[k]
                ));
            }
        }
        for (j, w) in mp_snaketh_expected(f).into_iter().enumerate() {
            let k = MP_FIELDS.len() + j;
            if tshark_text(&v[k]) != w {
                return Err(format!(
                    "frame {i} ({}): {} is {:?}, rnic-wire says {w:?}",
                    opcode_name(b.opcode),
                    MP_SNAKETH_FIELDS[j],
                    v[k]
                ));
            }
        }
        let payload = v[n].replace(':', "");
        let hex: String = f.payload.iter().map(|x| format!("{x:02x}")).collect();
        if payload != hex {
            return Err(format!("frame {i}: payload differs"));
        }
    }
    Ok(())
}

/// Test (a): an mp capture carries only mp opcodes, with headers that mean
/// what they carry, at both data-path widths; Wireshark's InfiniBand
/// dissector reads no RETH (no RC WRITE) in it.
#[test]
fn an_mp_capture_has_no_rc_packet() {
    for (w, seed) in [(64u32, 3u64), (256, 4)] {
        let path = tmp(&format!("a-{w}.pcap"));
        let frames = capture(w, seed, 40, "spray-8", &path);
        let decoded = check_frames(&frames, 1024);
        if tshark_present() {
            let lines = tshark(
                &path,
                None,
                &["infiniband.bth.opcode", "infiniband.reth.dmalen"],
            );
            assert_eq!(lines.len(), decoded.len());
            for (i, l) in lines.iter().enumerate() {
                assert!(l[1].is_empty(), "frame {i}: Wireshark reads a RETH: {l:?}");
                let op = tshark_value(&l[0]).unwrap();
                assert!(
                    op.is_none_or(|op| !is_rc(op as u8)),
                    "frame {i}: Wireshark reads an RC opcode: {l:?}"
                );
            }
        }
        let _ = std::fs::remove_file(&path);
    }
}

/// The dissector decodes every field of every frame of an mp capture as
/// rnic-wire does, and its ICRC check finds every one good; the capture
/// is of a lossy fabric, so that the RTL's selective NAKs are in it, some
/// naming more than one PSN, and its MP PROBEs and replies (a path lost
/// a packet, was taken out and probed; each reply carries its probe's PSN
/// and UDP source port); the same dissector with the MPETH length
/// read 4 bytes early, the MCETH read at the ImmDt, or the SNAKETH read 4
/// bytes early, is caught.
#[test]
fn the_wireshark_dissector_decodes_every_mp_field() {
    if !tshark_present() {
        return;
    }
    let path = tmp("dissector.pcap");
    let raw = capture(64, 5, 60, "spray-8-loss0.05", &path);
    let decoded = check_frames(&raw, 1024);
    let naks: Vec<usize> = decoded
        .iter()
        .filter_map(|f| f.snaketh.map(|s| s.bitmap.count_ones() as usize + 1))
        .collect();
    assert!(
        naks.len() > 5 && naks.iter().any(|&n| n > 1),
        "selective NAKs in the capture (PSNs each names): {naks:?}"
    );
    let of =
        |op: u8| -> Vec<&RoceFrame> { decoded.iter().filter(|f| f.bth.opcode == op).collect() };
    let (probes, replies) = (of(opcode::MP_PROBE), of(opcode::MP_PROBE_REPLY));
    assert!(
        !probes.is_empty() && !replies.is_empty(),
        "{} probes, {} replies in the capture",
        probes.len(),
        replies.len()
    );
    for r in &replies {
        assert!(
            probes.iter().any(|p| p.bth.psn == r.bth.psn
                && p.udp.src_port == r.udp.src_port
                && p.bth.ack_req
                && p.payload.is_empty()),
            "a reply for no probe: {r:?}"
        );
    }
    let lines = tshark(&path, Some(Path::new(MP_DISSECTOR)), &fields());
    compare(&lines, &decoded, &raw).unwrap();

    let src = std::fs::read_to_string(MP_DISSECTOR).unwrap();
    for (from, to) in [
        (
            "h:add(f.mpeth_len, tvb(o + 12, 4))",
            "h:add(f.mpeth_len, tvb(o + 8, 4))",
        ),
        (
            "h:add(f.mceth_len, tvb(o, 4))",
            "h:add(f.mceth_len, tvb(o - 4, 4))",
        ),
        (
            "h:add(f.snak_bitmap, tvb(o, 16))",
            "h:add(f.snak_bitmap, tvb(o - 4, 16))",
        ),
    ] {
        assert_eq!(src.matches(from).count(), 1, "{from}");
        let bad = tmp("broken.lua");
        std::fs::write(&bad, src.replace(from, to)).unwrap();
        let lines = tshark(&path, Some(&bad), &fields());
        let _ = std::fs::remove_file(&bad);
        let e = compare(&lines, &decoded, &raw).expect_err("a broken dissector passed");
        eprintln!("broken dissector caught: {e}");
    }
    let _ = std::fs::remove_file(&path);
}

/// The capture check sees a resend that read its buffer after the WQE's
/// CQE: with `resend-after-cqe` on, the torture host reuses a buffer once
/// its CQE is in, a resend still walking that WQE reads the new bytes, and
/// check_frames names the resend. The torture itself passes: the responder
/// drops the resend as a duplicate (hence the wire is the only witness).
/// The same seed with the switch off passes the check.
#[test]
fn a_resend_reading_its_buffer_after_the_cqe_is_caught() {
    let path = tmp("resend-after-cqe.pcap");
    let run = |seed: u64, on: bool| {
        let switches: &[Break] = if on { &[Break::ResendAfterCqe] } else { &[] };
        let raw = capture_with(64, seed, 60, "spray-8-loss0.1", switches, &path);
        let _ = std::fs::remove_file(&path);
        raw
    };
    let (seed, (d, acked)) = seed_showing_break("resend-after-cqe", MAX_SEEDS, run, |raw| {
        let frames = decode_all(raw);
        first_differing_resend(&frames).map(|d| (d, acked_between(&frames, d)))
    });
    assert!(
        acked,
        "seed {seed}: {d:?} differs, but no ACK covering it went out between: not a read after the CQE"
    );
}
const MAX_SEEDS: u64 = 16;

/// The mp opcodes of the RTL (hw/formats/rnic_formats.rdl, generated into
/// rnic_formats.vh and rnic_driver::formats) are rnic-wire's, with the
/// same names, and no other value of the manufacturer range is one.
#[test]
fn the_rdl_opcodes_are_rnic_wires() {
    let want = [
        (opcode::MP_WRITE, MpOpcode::Write),
        (opcode::MP_WRITE_LAST, MpOpcode::WriteLast),
        (opcode::MP_WRITE_LAST_WITH_IMMEDIATE, MpOpcode::WriteLastImm),
        (opcode::MP_ACKNOWLEDGE, MpOpcode::Ack),
        (opcode::MP_SELECTIVE_NAK, MpOpcode::SelectiveNak),
        (opcode::MP_PROBE, MpOpcode::Probe),
        (opcode::MP_PROBE_REPLY, MpOpcode::ProbeReply),
    ];
    assert_eq!(MpOpcode::ALL.len(), want.len());
    for (v, o) in want {
        assert_eq!(o.to_raw(), v);
        assert_eq!(MpOpcode::from_raw(v), o);
        assert_eq!(o.as_str(), opcode_name(v));
        assert_eq!(v >> 5, 0b110, "{v:#x}: manufacturer-specific range");
    }
    for v in 0..=255u8 {
        assert_eq!(
            is_mp(v),
            !matches!(MpOpcode::from_raw(v), MpOpcode::Other(_)),
            "{v:#x}"
        );
    }
}
