//! Cross-check against Wireshark's InfiniBand dissector: frames of every RC
//! opcode (the atomics included) go into a pcap, tshark (UDP port 4791 is
//! RoCEv2 by default) decodes them, and every BTH / RETH / ImmDt / AETH /
//! AtomicETH / AtomicAckETH field and the ICRC tshark shows must be what we
//! encoded. tshark (4.0) displays the ICRC but does not
//! verify it; the ICRC itself is checked against captured hardware bytes by
//! the known-answer test in src/lib.rs. Skipped, with a notice, when tshark
//! is not installed.

use pcap_file::pcap::{PcapPacket, PcapWriter};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rnic_wire::wireshark::{
    mp_expected, mp_snaketh_expected, tshark_text, tshark_value, MP_DISSECTOR, MP_FIELDS,
    MP_SNAKETH_FIELDS,
};
use rnic_wire::*;
use std::process::Command;
use std::time::Duration;

/// Bytes as lowercase hex digits, as `tshark_text` gives a bytes field.
fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// A present tshark value (see `tshark_value`); panics with `ctx` on an
/// empty or unreadable one.
fn num(s: &str, ctx: &str) -> u64 {
    match tshark_value(s) {
        Ok(Some(v)) => v,
        Ok(None) => panic!("empty field: {ctx}"),
        Err(e) => panic!("bad number {e}: {ctx}"),
    }
}

#[test]
fn tshark_decodes_what_we_encode() {
    if Command::new("tshark").arg("--version").output().is_err() {
        eprintln!("NOTICE: tshark not installed; skipping the Wireshark cross-check");
        return;
    }
    let mut rng = ChaCha8Rng::seed_from_u64(4791);
    let mut frames = Vec::new();
    for round in 0..3 {
        for op in 0..=opcode::FETCH_ADD {
            // ACKs, READ request and the atomics carry no payload
            let no_payload = matches!(
                op,
                opcode::ACKNOWLEDGE
                    | opcode::RDMA_READ_REQUEST
                    | opcode::ATOMIC_ACKNOWLEDGE
                    | opcode::COMPARE_SWAP
                    | opcode::FETCH_ADD
            );
            let len = match round {
                _ if no_payload => 0,
                0 => 0,
                1 => rng.gen_range(1..64),
                _ => rng.gen_range(64..1500),
            };
            let mut payload = vec![0u8; len];
            rng.fill(&mut payload[..]);
            frames.push(RoceFrame {
                eth: Eth {
                    dst: [0x02, 0, 0, 0, 0, 1],
                    src: [0x02, 0, 0, 0, 0, 2],
                },
                ip: Ipv4 {
                    src: [10, 0, 0, 2],
                    dst: [10, 0, 0, 1],
                    ..Ipv4::default()
                },
                udp: Udp {
                    src_port: rng.gen_range(49152..65535),
                    checksum: 0,
                },
                bth: Bth {
                    opcode: op,
                    se: rng.gen(),
                    pad_cnt: pad_for(len),
                    dest_qp: rng.gen::<u32>() & 0xFF_FFFF,
                    ack_req: rng.gen(),
                    psn: rng.gen::<u32>() & 0xFF_FFFF,
                    ..Bth::default()
                },
                reth: has_reth(op).then(|| Reth {
                    va: rng.gen(),
                    rkey: rng.gen(),
                    dma_len: rng.gen(),
                }),
                mpeth: None,
                immdt: has_immdt(op).then(|| rng.gen()),
                mceth: None,
                aeth: has_aeth(op).then(|| Aeth {
                    syndrome: rng.gen_range(0..0x20),
                    msn: rng.gen::<u32>() & 0xFF_FFFF,
                }),
                snaketh: None,
                atomiceth: has_atomiceth(op).then(|| AtomicEth {
                    va: rng.gen(),
                    rkey: rng.gen(),
                    swap_add: rng.gen(),
                    compare: rng.gen(),
                }),
                atomicacketh: has_atomicacketh(op).then(|| AtomicAckEth { orig: rng.gen() }),
                payload,
            });
        }
    }

    let path = std::env::temp_dir().join(format!("rnic-wire-tshark-{}.pcap", std::process::id()));
    {
        let file = std::fs::File::create(&path).unwrap();
        let mut w = PcapWriter::new(file).unwrap();
        for (i, fr) in frames.iter().enumerate() {
            let data = fr.encode();
            w.write_packet(&PcapPacket::new(
                Duration::from_millis(i as u64),
                data.len() as u32,
                &data,
            ))
            .unwrap();
        }
    }

    let fields = [
        "infiniband.bth.opcode",
        "infiniband.bth.se",
        "infiniband.bth.padcnt",
        "infiniband.bth.tver",
        "infiniband.bth.p_key",
        "infiniband.bth.destqp",
        "infiniband.bth.a",
        "infiniband.bth.psn",
        "infiniband.reth.va",
        "infiniband.reth.r_key",
        "infiniband.reth.dmalen",
        "infiniband.immdt",
        "infiniband.aeth.syndrome",
        "infiniband.aeth.msn",
        "infiniband.invariant.crc",
        "udp.dstport",
        "ip.checksum.status",
        // (Wireshark shows the AtomicETH's VA and R_Key as
        // infiniband.reth.va / r_key, its own fields being these)
        "infiniband.atomiceth",
        "infiniband.atomiceth.swapdt",
        "infiniband.atomiceth.cmpdt",
        "infiniband.atomicacketh.origremdt",
        "infiniband.reth",
    ];
    let mut cmd = Command::new("tshark");
    cmd.arg("-r").arg(&path).args([
        "-o",
        "ip.check_checksum:TRUE",
        "-T",
        "fields",
        "-E",
        "separator=|",
    ]);
    for f in fields {
        cmd.args(["-e", f]);
    }
    let out = cmd.output().expect("run tshark");
    let _ = std::fs::remove_file(&path);
    assert!(
        out.status.success(),
        "tshark failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), frames.len(), "tshark output:\n{text}");

    let mut shown_icrc = 0;
    for (fr, line) in frames.iter().zip(&lines) {
        let v: Vec<&str> = line.split('|').collect();
        assert_eq!(v.len(), fields.len(), "{line}");
        let ctx = format!("opcode {:#x}, tshark line {line:?}", fr.bth.opcode);
        let b = &fr.bth;
        assert_eq!(num(v[0], &ctx), u64::from(b.opcode), "{ctx}");
        assert_eq!(num(v[1], &ctx), u64::from(b.se), "{ctx}");
        assert_eq!(
            num(v[2], &ctx),
            u64::from(pad_for(fr.payload.len())),
            "{ctx}"
        );
        assert_eq!(num(v[3], &ctx), 0, "{ctx}");
        assert_eq!(num(v[4], &ctx), 0xFFFF, "{ctx}");
        assert_eq!(num(v[5], &ctx), u64::from(b.dest_qp), "{ctx}");
        assert_eq!(num(v[6], &ctx), u64::from(b.ack_req), "{ctx}");
        assert_eq!(num(v[7], &ctx), u64::from(b.psn), "{ctx}");
        assert_eq!(fr.reth.is_some(), has_reth(b.opcode), "{ctx}");
        assert_eq!(fr.atomiceth.is_some(), has_atomiceth(b.opcode), "{ctx}");
        match (fr.reth, fr.atomiceth) {
            (Some(r), None) => {
                assert_eq!(num(v[8], &ctx), r.va, "{ctx}");
                assert_eq!(num(v[9], &ctx), u64::from(r.rkey), "{ctx}");
                assert_eq!(num(v[10], &ctx), u64::from(r.dma_len), "{ctx}");
                assert!(!v[21].is_empty(), "RETH shown: {ctx}");
            }
            (None, Some(a)) => {
                assert_eq!(num(v[8], &ctx), a.va, "{ctx}");
                assert_eq!(num(v[9], &ctx), u64::from(a.rkey), "{ctx}");
                assert!(v[10].is_empty() && v[21].is_empty(), "no RETH: {ctx}");
            }
            (None, None) => assert!(
                v[8].is_empty() && v[9].is_empty() && v[10].is_empty() && v[21].is_empty(),
                "{ctx}"
            ),
            (Some(_), Some(_)) => unreachable!("{ctx}"),
        }
        match fr.atomiceth {
            Some(a) => {
                assert_eq!(tshark_text(v[17]), Some(hex(&a.encode())), "{ctx}");
                assert_eq!(num(v[18], &ctx), a.swap_add, "{ctx}");
                assert_eq!(num(v[19], &ctx), a.compare, "{ctx}");
            }
            None => assert!(
                v[17].is_empty() && v[18].is_empty() && v[19].is_empty(),
                "{ctx}"
            ),
        }
        assert_eq!(
            fr.atomicacketh.is_some(),
            has_atomicacketh(b.opcode),
            "{ctx}"
        );
        match fr.atomicacketh {
            Some(k) => assert_eq!(num(v[20], &ctx), k.orig, "{ctx}"),
            None => assert!(v[20].is_empty(), "{ctx}"),
        }
        match fr.immdt {
            // (tshark 4.0 lists the ImmDt of some opcodes twice)
            Some(imm) => {
                for shown in v[11].split(',') {
                    assert_eq!(shown.replace(':', ""), format!("{imm:08x}"), "{ctx}");
                }
            }
            None => assert!(v[11].is_empty(), "{ctx}"),
        }
        match fr.aeth {
            Some(a) => {
                assert_eq!(num(v[12], &ctx), u64::from(a.syndrome), "{ctx}");
                assert_eq!(num(v[13], &ctx), u64::from(a.msn), "{ctx}");
            }
            None => assert!(v[12].is_empty() && v[13].is_empty(), "{ctx}"),
        }
        // tshark reads the 4 ICRC bytes as a big-endian number
        let bytes = fr.encode();
        let wire = &bytes[bytes.len() - 4..];
        let crc = icrc(&bytes, bytes.len() - 4);
        assert_eq!(wire, crc.to_le_bytes());
        // (Wireshark hands the rest of a SEND LAST / ONLY packet to payload
        // sub-dissectors, ICRC included, and then shows no ICRC field)
        let send_end = matches!(b.opcode, 0x02..=0x05);
        if !(send_end && v[14].is_empty()) {
            assert_eq!(
                num(v[14], &ctx),
                u64::from(u32::from_be_bytes(wire.try_into().unwrap())),
                "{ctx}"
            );
            shown_icrc += 1;
        }
        assert_eq!(num(v[15], &ctx), 4791, "{ctx}");
        // ip.checksum.status: 0 bad, 1 good, 2 unverified
        assert_eq!(num(v[16], &ctx), 1, "{ctx}");
    }
    assert!(
        shown_icrc >= frames.len() - 12,
        "tshark showed only {shown_icrc} ICRCs"
    );
    // every atomic opcode was there, each with its header, and with
    // values that need all 64 bits
    for op in [
        opcode::ATOMIC_ACKNOWLEDGE,
        opcode::COMPARE_SWAP,
        opcode::FETCH_ADD,
    ] {
        let n = frames.iter().filter(|f| f.bth.opcode == op).count();
        assert_eq!(n, 3, "{}", opcode_name(op));
    }
    assert!(frames
        .iter()
        .filter_map(|f| f.atomiceth)
        .any(|a| a.swap_add >> 63 == 1 && a.compare >> 63 == 1 && a.va >> 63 == 1));
    assert!(frames
        .iter()
        .filter_map(|f| f.atomicacketh)
        .any(|k| k.orig >> 63 == 1));
}

/// The mp dissector (`wireshark/rnic_mp.lua`) on random frames of every mp
/// opcode (every BTH bit pattern the simulator never sends included):
/// every field it shows is the one encoded (an MP SELECTIVE NAK's SNAKETH
/// bytes, and its lost PSNs listed and counted, also across the PSN wrap;
/// an MP PROBE / REPLY's BTH, and no other header),
/// its ICRC check says good, and a frame with one payload bit flipped, or
/// one SNAKETH bit, is shown as a bad ICRC. An MP PROBE / REPLY with bytes
/// after its BTH (a payload, an AETH) shows its fields and is flagged
/// malformed. A 0xC4 frame that ends inside
/// its SNAKETH shows no field and is flagged short. RC frames go on to
/// Wireshark's own InfiniBand dissector. The comparison on a capture of the
/// simulator is `tests/mp_wire.rs`.
#[test]
fn tshark_mp_dissector_decodes_what_we_encode() {
    if Command::new("tshark").arg("--version").output().is_err() {
        eprintln!("NOTICE: tshark not installed; skipping the Wireshark cross-check");
        return;
    }
    let mut rng = ChaCha8Rng::seed_from_u64(0xC0);
    let mut frames = Vec::new();
    for round in 0..4 {
        for op in opcode::MP_WRITE..=opcode::MP_PROBE_REPLY {
            let ack = op == opcode::MP_ACKNOWLEDGE || op == opcode::MP_SELECTIVE_NAK;
            let len = match round {
                _ if ack || is_probe(op) => 0,
                0 => 0,
                1 => rng.gen_range(1..64),
                _ => rng.gen_range(64..1500),
            };
            let mut payload = vec![0u8; len];
            rng.fill(&mut payload[..]);
            frames.push(RoceFrame {
                eth: Eth {
                    dst: [0x02, 0, 0, 0, 0, 1],
                    src: [0x02, 0, 0, 0, 0, 2],
                },
                ip: Ipv4 {
                    src: [10, 0, 0, 2],
                    dst: [10, 0, 0, 1],
                    ..Ipv4::default()
                },
                udp: Udp {
                    src_port: rng.gen_range(49152..65535),
                    checksum: 0,
                },
                bth: Bth {
                    opcode: op,
                    se: rng.gen(),
                    m: rng.gen(),
                    pad_cnt: pad_for(len),
                    pkey: rng.gen(),
                    fecn: rng.gen(),
                    becn: rng.gen(),
                    dest_qp: rng.gen::<u32>() & 0xFF_FFFF,
                    ack_req: rng.gen(),
                    // rounds 2 and 3: near the wrap, where a SELECTIVE
                    // NAK's lost PSNs go on from 0
                    psn: match round {
                        0 | 1 => rng.gen::<u32>() & 0xFF_FFFF,
                        _ => rng.gen_range(0xFF_FF80..=0xFF_FFFF),
                    },
                    ..Bth::default()
                },
                reth: None,
                mpeth: has_mpeth(op).then(|| Mpeth {
                    va: rng.gen(),
                    rkey: rng.gen(),
                    len: len as u32,
                }),
                immdt: has_immdt(op).then(|| rng.gen()),
                mceth: has_mceth(op).then(|| Mceth { msg_len: rng.gen() }),
                aeth: has_aeth(op).then(|| Aeth {
                    // (a SELECTIVE NAK's is 0x60; any other is flagged)
                    syndrome: match rng.gen_range(0..0x80) {
                        _ if has_snaketh(op) && round % 2 == 0 => 0x60,
                        s => s,
                    },
                    msn: rng.gen::<u32>() & 0xFF_FFFF,
                }),
                snaketh: has_snaketh(op).then(|| Snaketh {
                    bitmap: match round {
                        0 => 0,
                        1 => rng.gen::<u128>() & rng.gen::<u128>(),
                        2 => u128::MAX,
                        _ => 1 << 127 | rng.gen::<u128>() & rng.gen::<u128>() | 1,
                    },
                }),
                atomiceth: None,
                atomicacketh: None,
                payload,
            });
        }
    }
    assert!(frames
        .iter()
        .filter_map(RoceFrame::lost_psns)
        .any(|l| l.contains(&0xFF_FFFF) && l.contains(&0)));
    let mut raw: Vec<Vec<u8>> = frames.iter().map(RoceFrame::encode).collect();
    // bad ICRCs: a payload bit of the last frame with a payload, and the
    // lowest SNAKETH bit of the last SELECTIVE NAK (the dissector then
    // shows that bitmap, PSN list and count)
    let bad = [
        frames.iter().rposition(|f| f.payload.len() > 4).unwrap(),
        frames.iter().rposition(|f| f.snaketh.is_some()).unwrap(),
    ];
    let l = raw[bad[0]].len();
    raw[bad[0]][l - 5] ^= 0x10;
    let l = raw[bad[1]].len();
    raw[bad[1]][l - 5] ^= 0x01;
    frames[bad[1]].snaketh.as_mut().unwrap().bitmap ^= 1;
    // malformed probes, each with a correct ICRC: an MP PROBE with a 5-byte
    // payload (and 3 pad bytes), an MP PROBE REPLY carrying an AETH
    let not_empty = [frames.len(), frames.len() + 1];
    let mut p = frames[frames.len() - 2].clone();
    assert_eq!(p.bth.opcode, opcode::MP_PROBE);
    p.payload = vec![0xA5; 5];
    p.bth.pad_cnt = pad_for(5);
    let mut r = frames[frames.len() - 1].clone();
    assert_eq!(r.bth.opcode, opcode::MP_PROBE_REPLY);
    r.bth.opcode = opcode::MP_ACKNOWLEDGE;
    r.aeth = Some(Aeth {
        syndrome: 0,
        msn: 0x00_1234,
    });
    let mut rf = r.encode();
    rf[BTH_OFFSET] = opcode::MP_PROBE_REPLY;
    let n = rf.len() - ICRC_LEN;
    let c = icrc(&rf, n);
    rf[n..].copy_from_slice(&c.to_le_bytes());
    // the dissector, as rnic-wire, takes the AETH for a 4-byte payload
    r.bth.opcode = opcode::MP_PROBE_REPLY;
    r.aeth = None;
    r.payload = vec![0, 0x00, 0x12, 0x34];
    assert_eq!(rf, r.encode());
    for (fr, f) in [(p.clone(), p.encode()), (r, rf)] {
        let op = fr.bth.opcode;
        let len = f.len() - ICRC_LEN - header_len(op);
        assert_eq!(decode(&f), Err(WireError::ProbeNotEmpty { op, len }));
        frames.push(fr);
        raw.push(f);
    }
    // a SELECTIVE NAK whose IPv4 length ends inside its SNAKETH (an MP
    // ACKNOWLEDGE with 8 bytes after its AETH, relabelled 0xC4)
    let short = raw.len();
    let mut f = RoceFrame {
        bth: Bth {
            opcode: opcode::MP_ACKNOWLEDGE,
            ..Bth::default()
        },
        aeth: Some(Aeth {
            syndrome: 0x60,
            msn: 1,
        }),
        payload: vec![0xFF; 8],
        ..RoceFrame::default()
    }
    .encode();
    f[BTH_OFFSET] = opcode::MP_SELECTIVE_NAK;
    let n = f.len() - ICRC_LEN;
    let c = icrc(&f, n);
    f[n..].copy_from_slice(&c.to_le_bytes());
    assert!(matches!(decode(&f), Err(WireError::Short { need: 78, .. })));
    raw.push(f);
    // and one RC frame for Wireshark's own dissector
    let rc = RoceFrame {
        bth: Bth {
            opcode: opcode::RDMA_WRITE_ONLY,
            ..Bth::default()
        },
        reth: Some(Reth::default()),
        payload: vec![1, 2, 3],
        ..RoceFrame::default()
    };
    raw.push(rc.encode());

    let path = std::env::temp_dir().join(format!("rnic-wire-mp-{}.pcap", std::process::id()));
    {
        let file = std::fs::File::create(&path).unwrap();
        let mut w = PcapWriter::new(file).unwrap();
        for (i, data) in raw.iter().enumerate() {
            w.write_packet(&PcapPacket::new(
                Duration::from_millis(i as u64),
                data.len() as u32,
                data,
            ))
            .unwrap();
        }
    }
    let mut fields = MP_FIELDS.to_vec();
    fields.extend(["infiniband.bth.opcode", "infiniband.reth.dmalen"]);
    fields.extend(MP_SNAKETH_FIELDS);
    fields.extend([
        "rnic_mp",
        "rnic_mp.short",
        "rnic_mp.icrc.bad",
        "rnic_mp.snaketh.not_seq_nak",
        "rnic_mp.probe.not_empty",
    ]);
    let mut cmd = Command::new("tshark");
    cmd.arg("-X")
        .arg(format!("lua_script:{MP_DISSECTOR}"))
        .arg("-r")
        .arg(&path)
        .args(["-T", "fields", "-E", "separator=|"]);
    for f in &fields {
        cmd.args(["-e", f]);
    }
    let out = cmd.output().expect("run tshark");
    let _ = std::fs::remove_file(&path);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && !err.contains("Lua"),
        "tshark: {err}"
    );
    let text = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), raw.len(), "tshark output:\n{text}");
    for (i, (fr, line)) in frames.iter().zip(&lines).enumerate() {
        let v: Vec<&str> = line.split('|').collect();
        let ctx = format!(
            "frame {i}, opcode {:#x}, tshark line {line:?}",
            fr.bth.opcode
        );
        assert_eq!(v.len(), fields.len(), "{ctx}");
        // the frames are built with pad counts that fit their payloads
        assert_eq!(fr.bth.pad_cnt, pad_for(fr.payload.len()), "{ctx}");
        let good = !bad.contains(&i);
        let mut want = mp_expected(fr, &raw[i], good).to_vec();
        want.extend([None, None]); // Wireshark's own dissector stays off mp frames
        for (k, w) in want.iter().enumerate() {
            assert_eq!(tshark_value(v[k]), Ok(*w), "{}: {ctx}", fields[k]);
        }
        let k = want.len();
        for (j, w) in mp_snaketh_expected(fr).into_iter().enumerate() {
            assert_eq!(tshark_text(v[k + j]), w, "{}: {ctx}", fields[k + j]);
        }
        let k = k + MP_SNAKETH_FIELDS.len();
        assert!(!v[k].is_empty(), "rnic_mp: {ctx}");
        assert!(v[k + 1].is_empty(), "flagged short: {ctx}");
        assert_eq!(v[k + 2].is_empty(), good, "ICRC expert: {ctx}");
        let odd_nak = fr.snaketh.is_some() && fr.aeth.unwrap().syndrome != 0x60;
        assert_eq!(v[k + 3].is_empty(), !odd_nak, "syndrome expert: {ctx}");
        let malformed = not_empty.contains(&i);
        assert_eq!(v[k + 4].is_empty(), !malformed, "probe expert: {ctx}");
    }
    // the short SELECTIVE NAK: the protocol and its expert only
    let n = MP_FIELDS.len();
    let v: Vec<&str> = lines[short].split('|').collect();
    let ctx = format!("short SELECTIVE NAK, tshark line {:?}", lines[short]);
    for (k, s) in v.iter().enumerate() {
        let shown = [n + 4, n + 5].contains(&k);
        assert_eq!(s.is_empty(), !shown, "{}: {ctx}", fields[k]);
    }
    // the RC frame
    let v: Vec<&str> = lines[raw.len() - 1].split('|').collect();
    assert!(v[..n].iter().all(|s| s.is_empty()), "{v:?}");
    assert_eq!(num(v[n], "rc"), u64::from(opcode::RDMA_WRITE_ONLY));
    assert_eq!(num(v[n + 1], "rc"), 0);
    assert!(v[n + 2..].iter().all(|s| s.is_empty()), "{v:?}");
}
