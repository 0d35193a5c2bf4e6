//! Round trips over every RC and mp opcode and payload length class, and one test
//! per decode error; the RC atomics' (ATOMIC ACKNOWLEDGE, COMPARE SWAP,
//! FETCH ADD) layout, ICRC and truncation; the MP SELECTIVE NAK's layout,
//! ICRC, lost-PSN list and truncation; the MP PROBE / REPLY's layout, and
//! what makes one malformed.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rnic_wire::*;

fn random_frame(rng: &mut ChaCha8Rng, op: u8, len: usize) -> RoceFrame {
    let mut payload = vec![0u8; len];
    rng.fill(&mut payload[..]);
    RoceFrame {
        eth: Eth {
            dst: rng.gen(),
            src: rng.gen(),
        },
        ip: Ipv4 {
            tos: rng.gen(),
            id: rng.gen(),
            df: rng.gen(),
            ttl: rng.gen(),
            src: rng.gen(),
            dst: rng.gen(),
        },
        udp: Udp {
            src_port: rng.gen(),
            checksum: rng.gen(),
        },
        bth: Bth {
            opcode: op,
            se: rng.gen(),
            m: rng.gen(),
            pad_cnt: pad_for(len),
            tver: 0,
            pkey: rng.gen(),
            fecn: rng.gen(),
            becn: rng.gen(),
            dest_qp: rng.gen::<u32>() & 0xFF_FFFF,
            ack_req: rng.gen(),
            psn: rng.gen::<u32>() & 0xFF_FFFF,
        },
        reth: has_reth(op).then(|| Reth {
            va: rng.gen(),
            rkey: rng.gen(),
            dma_len: rng.gen(),
        }),
        mpeth: has_mpeth(op).then(|| Mpeth {
            va: rng.gen(),
            rkey: rng.gen(),
            len: len as u32,
        }),
        immdt: has_immdt(op).then(|| rng.gen()),
        mceth: has_mceth(op).then(|| Mceth { msg_len: rng.gen() }),
        aeth: has_aeth(op).then(|| Aeth {
            syndrome: rng.gen(),
            msn: rng.gen::<u32>() & 0xFF_FFFF,
        }),
        snaketh: has_snaketh(op).then(|| Snaketh { bitmap: rng.gen() }),
        atomiceth: has_atomiceth(op).then(|| AtomicEth {
            va: rng.gen(),
            rkey: rng.gen(),
            swap_add: rng.gen(),
            compare: rng.gen(),
        }),
        atomicacketh: has_atomicacketh(op).then(|| AtomicAckEth { orig: rng.gen() }),
        payload,
    }
}

fn good() -> (RoceFrame, Vec<u8>) {
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    let mut fr = random_frame(&mut rng, opcode::RDMA_WRITE_ONLY_WITH_IMMEDIATE, 37);
    fr.ip.df = true;
    let bytes = fr.encode();
    (fr, bytes)
}

fn fix_ip_checksum(f: &mut [u8]) {
    f[24] = 0;
    f[25] = 0;
    let c = ipv4_checksum(&f[14..34]);
    f[24..26].copy_from_slice(&c.to_be_bytes());
}

fn fix_icrc(f: &mut [u8]) {
    let end = 14 + usize::from(u16::from_be_bytes([f[16], f[17]]));
    let c = icrc(f, end - 4);
    f[end - 4..end].copy_from_slice(&c.to_le_bytes());
}

#[test]
fn round_trip_all_opcodes_and_lengths() {
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    let mp = opcode::MP_WRITE..=opcode::MP_PROBE_REPLY;
    for op in (0..=opcode::FETCH_ADD).chain(mp) {
        let lens = (0..70).chain([255, 256, 1023, 1024, 4093, 4094, 4095, 4096]);
        // a probe with a payload is malformed (probe_with_bytes_after_its_bth)
        for len in lens.filter(|&l| l == 0 || !is_probe(op)) {
            let fr = random_frame(&mut rng, op, len);
            let bytes = fr.encode();
            assert_eq!(bytes.len(), fr.wire_len());
            assert_eq!(
                bytes.len(),
                header_len(op) + len + usize::from(pad_for(len)) + 4
            );
            assert_eq!((bytes.len() - 14) % 4, 0, "BTH..ICRC is a multiple of 4");
            let back = decode(&bytes).unwrap_or_else(|e| panic!("op {op:#x} len {len}: {e}"));
            assert_eq!(back, fr, "op {op:#x} len {len}");
            // trailing Ethernet padding is ignored
            let mut padded = bytes.clone();
            padded.extend_from_slice(&[0xAA; 17]);
            assert_eq!(decode(&padded).unwrap(), fr);
        }
    }
}

#[test]
fn encode_fixed_fields() {
    let (fr, f) = good();
    assert_eq!(&f[12..14], &[0x08, 0x00]);
    assert_eq!(f[14], 0x45);
    assert_eq!(f[23], 17);
    assert_eq!(&f[36..38], &4791u16.to_be_bytes());
    assert_eq!(ipv4_checksum(&f[14..34]), 0);
    let total = usize::from(u16::from_be_bytes([f[16], f[17]]));
    assert_eq!(total, f.len() - 14);
    assert_eq!(usize::from(u16::from_be_bytes([f[38], f[39]])), total - 20);
    assert_eq!(f[42], opcode::RDMA_WRITE_ONLY_WITH_IMMEDIATE);
    assert_eq!((f[43] >> 4) & 3, 3, "37 payload bytes need 3 pad bytes");
    // RETH at 54, ImmDt at 70, payload at 74
    assert_eq!(&f[54..62], &fr.reth.unwrap().va.to_be_bytes());
    assert_eq!(&f[70..74], &fr.immdt.unwrap().to_be_bytes());
    assert_eq!(&f[74..74 + 37], &fr.payload[..]);
    assert_eq!(&f[74 + 37..74 + 40], &[0, 0, 0]);
    assert_eq!(icrc(&f, f.len() - 4).to_le_bytes(), f[f.len() - 4..]);
}

#[test]
fn decode_errors() {
    let (_, g) = good();
    let check = |f: Vec<u8>, want: fn(&WireError) -> bool| {
        let e = decode(&f).expect_err("must fail");
        assert!(want(&e), "unexpected error {e:?}");
    };

    check(g[..30].to_vec(), |e| matches!(e, WireError::Short { .. }));
    let mut f = g.clone();
    f[12] = 0x86;
    f[13] = 0xDD;
    check(f, |e| matches!(e, WireError::NotIpv4(0x86DD)));
    let mut f = g.clone();
    f[14] = 0x46;
    check(f, |e| matches!(e, WireError::IpHeader(0x46)));
    let mut f = g.clone();
    f[20] |= 0x20; // MF
    check(f, |e| matches!(e, WireError::Fragmented(_)));
    let mut f = g.clone();
    f[21] = 1; // fragment offset
    check(f, |e| matches!(e, WireError::Fragmented(_)));
    let mut f = g.clone();
    f[25] ^= 1;
    check(f, |e| matches!(e, WireError::BadIpChecksum { .. }));
    let mut f = g.clone();
    f[23] = 6;
    fix_ip_checksum(&mut f);
    check(f, |e| matches!(e, WireError::NotUdp(6)));
    let mut f = g.clone();
    f[17] += 4;
    fix_ip_checksum(&mut f);
    check(f, |e| matches!(e, WireError::IpLength { .. }));
    let mut f = g.clone();
    f[37] ^= 1;
    check(f, |e| matches!(e, WireError::NotRoce(_)));
    let mut f = g.clone();
    f[39] ^= 4;
    check(f, |e| matches!(e, WireError::UdpLength { .. }));
    let mut f = g.clone();
    f[43] |= 1;
    check(f, |e| matches!(e, WireError::BadTver(1)));
    let mut f = g.clone();
    f[42] = 0x64; // UD SEND ONLY
    check(f, |e| matches!(e, WireError::UnknownOpcode(0x64)));
    // a RETH opcode in a packet too short for the RETH
    let mut rng = ChaCha8Rng::seed_from_u64(3);
    let mut f = random_frame(&mut rng, opcode::RDMA_WRITE_MIDDLE, 8).encode();
    f[42] = opcode::RDMA_WRITE_FIRST;
    check(f, |e| matches!(e, WireError::Short { need: 74, have: 66 }));
    // pad count larger than the payload
    let mut f = random_frame(&mut rng, opcode::ACKNOWLEDGE, 0).encode();
    f[43] |= 0x30;
    check(f, |e| matches!(e, WireError::BadPad { pad: 3, avail: 0 }));
    // payload or ICRC bit flips
    for i in [74usize, 100, g.len() - 1] {
        let mut f = g.clone();
        f[i] ^= 0x10;
        check(f, |e| matches!(e, WireError::BadIcrc { .. }));
    }
    // a re-computed ICRC makes a mutated-but-valid frame decode again
    let mut f = g.clone();
    f[100] ^= 0x10;
    fix_icrc(&mut f);
    assert!(decode(&f).is_ok());
}

/// An MP SELECTIVE NAK as the responder sends it: a PSN-sequence NAK with
/// no payload.
fn selective_nak(psn: u32, bitmap: u128) -> RoceFrame {
    let mut rng = ChaCha8Rng::seed_from_u64(0xC4);
    let mut fr = random_frame(&mut rng, opcode::MP_SELECTIVE_NAK, 0);
    fr.bth.psn = psn;
    fr.aeth = Some(Aeth {
        syndrome: 0x60,
        msn: 0x12_3456,
    });
    fr.snaketh = Some(Snaketh { bitmap });
    fr
}

#[test]
fn selective_nak_layout_and_round_trip() {
    assert!(is_mp(opcode::MP_SELECTIVE_NAK) && !is_rc(opcode::MP_SELECTIVE_NAK));
    assert!(has_aeth(opcode::MP_SELECTIVE_NAK) && has_snaketh(opcode::MP_SELECTIVE_NAK));
    assert!(!has_mpeth(opcode::MP_SELECTIVE_NAK) && !has_immdt(opcode::MP_SELECTIVE_NAK));
    assert_eq!(opcode_name(0xC4), "MP SELECTIVE NAK");
    let bitmap = 0x8000_0000_0000_0000_0000_0000_0000_0005u128;
    let fr = selective_nak(0xAB_CDEF, bitmap);
    let f = fr.encode();
    // Ethernet 14 + IPv4 20 + UDP 8 + BTH 12 + AETH 4 + SNAKETH 16 + ICRC 4
    assert_eq!(f.len(), 78);
    assert_eq!(fr.wire_len(), 78);
    assert_eq!(u16::from_be_bytes([f[16], f[17]]), 64, "IPv4 total length");
    assert_eq!(u16::from_be_bytes([f[38], f[39]]), 44, "UDP length");
    assert_eq!(f[42], 0xC4);
    assert_eq!((f[43] >> 4) & 3, 0, "no pad");
    assert_eq!(&f[51..54], &[0xAB, 0xCD, 0xEF], "BTH PSN");
    assert_eq!(&f[54..58], &[0x60, 0x12, 0x34, 0x56], "AETH");
    // the bitmap big-endian: bit 127 is the MSB of the first byte, bits 0
    // and 2 are in the last byte
    assert_eq!(f[58], 0x80);
    assert!(f[59..73].iter().all(|&b| b == 0));
    assert_eq!(f[73], 0x05);
    assert_eq!(icrc(&f, 74).to_le_bytes(), f[74..78]);
    let back = decode(&f).unwrap();
    assert_eq!(back, fr);
    assert_eq!(back.snaketh, Some(Snaketh { bitmap }));
    assert!(back.payload.is_empty() && back.mpeth.is_none() && back.immdt.is_none());
    assert_eq!(
        back.lost_psns(),
        Some(vec![0xAB_CDEF, 0xAB_CDF0, 0xAB_CDF2, 0xAB_CDEF + 128])
    );
    // a frame without a SNAKETH is encoded with a zero bitmap
    let mut none = fr.clone();
    none.snaketh = None;
    let g = none.encode();
    assert!(g[58..74].iter().all(|&b| b == 0));
    assert_eq!(none.lost_psns(), Some(vec![0xAB_CDEF]));
    assert_eq!(decode(&g).unwrap().snaketh, Some(Snaketh::default()));
    // and no other opcode carries or writes one
    let mut ack = fr.clone();
    ack.bth.opcode = opcode::MP_ACKNOWLEDGE;
    assert_eq!(ack.lost_psns(), None);
    assert_eq!(ack.encode().len(), 62);
    assert_eq!(decode(&ack.encode()).unwrap().snaketh, None);
}

#[test]
fn selective_nak_icrc_covers_every_header_byte() {
    let fr = selective_nak(77, 0x0123_4567_89AB_CDEF_FEDC_BA98_7654_3210);
    let g = fr.encode();
    // the BTH's opcode and flags byte (a flip there fails earlier checks)
    for i in [42usize, 43] {
        let mut f = g.clone();
        f[i] ^= 0x01;
        assert_ne!(icrc(&f, 74), icrc(&g, 74), "byte {i}");
    }
    // the rest of the BTH (but byte 4, masked), AETH, SNAKETH, the ICRC
    for i in (44..78).filter(|&i| i != 46) {
        let mut f = g.clone();
        f[i] ^= 0x01;
        let e = decode(&f).expect_err("a flipped bit must fail the ICRC");
        assert!(matches!(e, WireError::BadIcrc { .. }), "byte {i}: {e:?}");
    }
    // FECN / BECN are outside the ICRC
    let mut f = g.clone();
    f[46] ^= 0xC0;
    assert!(decode(&f).is_ok());
    // a bitmap changed and the ICRC recomputed decodes to the new bitmap
    let mut f = g.clone();
    f[73] ^= 0x02;
    fix_icrc(&mut f);
    let back = decode(&f).unwrap();
    assert_eq!(back.snaketh.unwrap().bitmap, fr.snaketh.unwrap().bitmap ^ 2);
}

#[test]
fn selective_nak_lost_psns() {
    let lost = |psn: u32, bitmap: u128| Snaketh { bitmap }.lost_psns(psn);
    // the BTH PSN alone, then each set bit's PSN, lowest bit first
    assert_eq!(lost(100, 0), vec![100]);
    assert_eq!(lost(100, 1), vec![100, 101]);
    assert_eq!(lost(100, 0b1010_0100), vec![100, 103, 106, 108]);
    assert_eq!(lost(100, 1 << 127), vec![100, 228]);
    // wrap at 2^24
    assert_eq!(
        lost(0xFF_FFFE, 0b1_0111),
        vec![0xFF_FFFE, 0xFF_FFFF, 0, 1, 3]
    );
    assert_eq!(lost(0xFF_FFFF, 1 << 127), vec![0xFF_FFFF, 127]);
    let all = lost(0xFF_FFFF, u128::MAX);
    assert_eq!(all.len(), 129);
    assert_eq!(all[0], 0xFF_FFFF);
    assert_eq!(all[1..], (0..128).collect::<Vec<u32>>()[..]);
    let all = lost(0xFF_FF80, u128::MAX);
    assert_eq!(*all.last().unwrap(), 0);
    assert!(all.windows(2).all(|w| (w[0] + 1) & 0xFF_FFFF == w[1]));
    // only the 24 PSN bits count
    assert_eq!(lost(0x0100_0005, 1), vec![5, 6]);
    // the PSN list of random bitmaps: one PSN per set bit, in order
    let mut rng = ChaCha8Rng::seed_from_u64(24);
    for _ in 0..1000 {
        let psn = rng.gen_range(0xFF_FF00..=0xFF_FFFF);
        let bitmap: u128 = rng.gen::<u128>() & rng.gen::<u128>();
        let l = lost(psn, bitmap);
        assert_eq!(l.len(), 1 + bitmap.count_ones() as usize);
        assert_eq!(l[0], psn);
        let mut back = 0u128;
        for &p in &l[1..] {
            let i = (p.wrapping_sub(psn + 1) & 0xFF_FFFF) as usize;
            assert!(i < 128, "{psn:#x} {p:#x}");
            assert_eq!(back >> i, 0, "PSN order: {l:?}");
            back |= 1 << i;
        }
        assert_eq!(back, bitmap);
        // and through the wire
        let fr = selective_nak(psn, bitmap);
        assert_eq!(decode(&fr.encode()).unwrap().lost_psns(), Some(l));
    }
}

#[test]
fn truncated_selective_nak_is_an_error() {
    let g = selective_nak(5, u128::MAX).encode();
    // cut on the wire: the frame ends before its IPv4 total length
    for n in [74usize, 70, 60, 58] {
        let e = decode(&g[..n]).expect_err("a cut frame must fail");
        assert!(
            matches!(e, WireError::IpLength { total: 64, frame } if frame == n),
            "{n}: {e:?}"
        );
    }
    // consistent lengths that end inside the headers: an MP ACKNOWLEDGE
    // (AETH, no SNAKETH) and one with half a SNAKETH, relabelled 0xC4
    let mut rng = ChaCha8Rng::seed_from_u64(9);
    for (len, have) in [(0usize, 62usize), (8, 70), (12, 74)] {
        let mut f = random_frame(&mut rng, opcode::MP_ACKNOWLEDGE, len).encode();
        f[42] = opcode::MP_SELECTIVE_NAK;
        fix_icrc(&mut f);
        let e = decode(&f).expect_err("a SELECTIVE NAK without its SNAKETH");
        assert_eq!(e, WireError::Short { need: 78, have }, "{len}");
        assert_eq!(
            e.to_string(),
            format!("frame too short: {have} bytes, need 78")
        );
    }
    // the whole SNAKETH and ICRC: it decodes, the bytes taken as bitmap
    let mut fr = random_frame(&mut rng, opcode::MP_ACKNOWLEDGE, 16);
    fr.payload = (1..=16).collect();
    let mut f = fr.encode();
    f[42] = opcode::MP_SELECTIVE_NAK;
    fix_icrc(&mut f);
    let back = decode(&f).unwrap();
    assert_eq!(
        back.snaketh.unwrap().bitmap.to_be_bytes().to_vec(),
        fr.payload
    );
    assert!(back.payload.is_empty());
}

/// An MP PROBE or MP PROBE REPLY: random BTH fields (AckReq and the PSN
/// given), nothing else.
fn probe(op: u8, psn: u32, ack_req: bool) -> RoceFrame {
    let mut rng = ChaCha8Rng::seed_from_u64(u64::from(op) << 24 | u64::from(psn));
    let mut fr = random_frame(&mut rng, op, 0);
    fr.bth.psn = psn;
    fr.bth.ack_req = ack_req;
    fr
}

#[test]
fn probe_layout_and_round_trip() {
    for (op, name) in [
        (opcode::MP_PROBE, "MP PROBE"),
        (opcode::MP_PROBE_REPLY, "MP PROBE REPLY"),
    ] {
        assert_eq!(opcode_name(op), name);
        // an mp opcode nobody following the IBTA reads as RC
        assert!(is_mp(op) && is_known(op) && is_probe(op), "{op:#x}");
        assert!(!is_rc(op) && op >> 5 == 0b110, "{op:#x}");
        assert!(!has_reth(op) && !has_mpeth(op) && !has_immdt(op));
        assert!(!has_mceth(op) && !has_aeth(op) && !has_snaketh(op));
        assert_eq!(ext_len(op), 0);
        for (psn, ack_req) in [(0xAB_CDEF, true), (0xFF_FFFF, false), (0, true)] {
            let fr = probe(op, psn, ack_req);
            let f = fr.encode();
            // Ethernet 14 + IPv4 20 + UDP 8 + BTH 12 + ICRC 4
            assert_eq!(f.len(), 58);
            assert_eq!(fr.wire_len(), 58);
            assert_eq!(u16::from_be_bytes([f[16], f[17]]), 44, "IPv4 total length");
            assert_eq!(u16::from_be_bytes([f[38], f[39]]), 24, "UDP length");
            assert_eq!(f[42], op);
            assert_eq!((f[43] >> 4) & 3, 0, "no pad");
            assert_eq!(f[50] >> 7, u8::from(ack_req), "AckReq");
            assert_eq!(&f[51..54], &psn.to_be_bytes()[1..], "BTH PSN");
            assert_eq!(
                icrc(&f, 54).to_le_bytes(),
                f[54..58],
                "ICRC right after the BTH"
            );
            let back = decode(&f).unwrap();
            assert_eq!(back, fr, "{op:#x} {psn:#x}");
            assert!(back.payload.is_empty() && back.aeth.is_none() && back.mpeth.is_none());
            assert_eq!(back.lost_psns(), None);
            // a MAC pads the 58 bytes to the 60-byte minimum: not a payload
            let mut padded = f.clone();
            padded.extend_from_slice(&[0, 0]);
            assert_eq!(decode(&padded).unwrap(), fr);
            // the ICRC covers the BTH but its byte 4 (a flip of the opcode
            // or TVer fails earlier checks), and itself
            for (i, bit) in (44..58)
                .filter(|&i| i != 46)
                .map(|i| (i, 1))
                .chain([(43, 0xC0)])
            {
                let mut g = f.clone();
                g[i] ^= bit;
                let e = decode(&g).expect_err("a flipped bit must fail the ICRC");
                assert!(
                    matches!(e, WireError::BadIcrc { .. }),
                    "{op:#x} byte {i}: {e:?}"
                );
            }
        }
    }
    // the reply echoes the probe's PSN and UDP source port: both survive the
    // wire, so the requester can match the reply to its path
    let p = probe(opcode::MP_PROBE, 0x12_3456, true);
    let mut r = p.clone();
    r.bth.opcode = opcode::MP_PROBE_REPLY;
    r.bth.ack_req = false;
    let back = decode(&r.encode()).unwrap();
    assert_eq!(
        (back.bth.psn, back.udp.src_port),
        (p.bth.psn, p.udp.src_port)
    );
}

#[test]
fn probe_with_bytes_after_its_bth() {
    let mut rng = ChaCha8Rng::seed_from_u64(0xC5);
    for op in [opcode::MP_PROBE, opcode::MP_PROBE_REPLY] {
        // a payload, encoded with its pad and a correct ICRC: the bytes
        // counted are payload and pad
        for len in [1usize, 2, 3, 4, 5, 16, 1024] {
            let fr = random_frame(&mut rng, op, len);
            let f = fr.encode();
            assert_eq!(icrc(&f, f.len() - 4).to_le_bytes(), f[f.len() - 4..]);
            let want = len + usize::from(pad_for(len));
            assert_eq!(
                decode(&f),
                Err(WireError::ProbeNotEmpty { op, len: want }),
                "{op:#x} {len}"
            );
        }
        // extension headers: another mp opcode's, relabelled, ICRC recomputed
        for (other, len, want) in [
            (opcode::MP_ACKNOWLEDGE, 0, 4),     // AETH
            (opcode::MP_SELECTIVE_NAK, 0, 20),  // AETH, SNAKETH
            (opcode::MP_WRITE_LAST, 0, 16),     // MPETH
            (opcode::MP_WRITE_LAST, 7, 16 + 8), // MPETH, payload, pad
            (opcode::MP_WRITE_LAST_WITH_IMMEDIATE, 0, 24),
        ] {
            let mut f = random_frame(&mut rng, other, len).encode();
            f[42] = op;
            fix_icrc(&mut f);
            let e = decode(&f).expect_err("a probe with an extension header");
            assert_eq!(e, WireError::ProbeNotEmpty { op, len: want }, "{other:#x}");
            assert_eq!(
                e.to_string(),
                format!("opcode {op:#04x} is BTH only, but {want} bytes follow its BTH")
            );
        }
        // PadCnt set with nothing after the BTH: a pad with no bytes
        let mut f = probe(op, 9, true).encode();
        f[43] |= 0x20;
        fix_icrc(&mut f);
        assert_eq!(decode(&f), Err(WireError::BadPad { pad: 2, avail: 0 }));
        // cut inside the ICRC: too short, as any opcode
        let mut f = probe(op, 9, true).encode();
        f[17] -= 2;
        fix_ip_checksum(&mut f);
        f[39] -= 2;
        assert_eq!(decode(&f), Err(WireError::Short { need: 58, have: 56 }));
    }
}

/// An RC atomic as a requester or responder sends it: no payload.
fn atomic(op: u8, seed: u64) -> RoceFrame {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    random_frame(&mut rng, op, 0)
}

#[test]
fn atomic_layout_and_round_trip() {
    for (op, name) in [
        (opcode::ATOMIC_ACKNOWLEDGE, "ATOMIC ACKNOWLEDGE"),
        (opcode::COMPARE_SWAP, "COMPARE SWAP"),
        (opcode::FETCH_ADD, "FETCH ADD"),
    ] {
        assert_eq!(opcode_name(op), name);
        assert!(is_rc(op) && is_known(op) && !is_mp(op), "{op:#x}");
        assert!(!has_reth(op) && !has_mpeth(op) && !has_immdt(op), "{op:#x}");
        assert!(
            !has_mceth(op) && !has_snaketh(op) && !is_probe(op),
            "{op:#x}"
        );
    }
    assert_eq!(
        [0x12, 0x13, 0x14],
        [
            opcode::ATOMIC_ACKNOWLEDGE,
            opcode::COMPARE_SWAP,
            opcode::FETCH_ADD
        ]
    );

    // COMPARE SWAP / FETCH ADD: BTH, AtomicETH, ICRC
    for op in [opcode::COMPARE_SWAP, opcode::FETCH_ADD] {
        assert!(is_atomic(op) && has_atomiceth(op), "{op:#x}");
        assert!(!has_aeth(op) && !has_atomicacketh(op), "{op:#x}");
        let mut fr = atomic(op, u64::from(op));
        fr.atomiceth = Some(AtomicEth {
            va: 0x0000_7F12_3456_7890,
            rkey: 0xDEAD_BEEF,
            swap_add: 0x0123_4567_89AB_CDEF,
            compare: 0xFEDC_BA98_7654_3210,
        });
        let f = fr.encode();
        // Ethernet 14 + IPv4 20 + UDP 8 + BTH 12 + AtomicETH 28 + ICRC 4
        assert_eq!(f.len(), 86);
        assert_eq!(fr.wire_len(), 86);
        assert_eq!(u16::from_be_bytes([f[16], f[17]]), 72, "IPv4 total length");
        assert_eq!(u16::from_be_bytes([f[38], f[39]]), 52, "UDP length");
        assert_eq!(f[42], op);
        assert_eq!((f[43] >> 4) & 3, 0, "no pad");
        assert_eq!(&f[54..62], &0x0000_7F12_3456_7890u64.to_be_bytes(), "VA");
        assert_eq!(&f[62..66], &[0xDE, 0xAD, 0xBE, 0xEF], "R_Key");
        assert_eq!(
            &f[66..74],
            &[0x01, 0x23, 0x45, 0x67, 0x89, 0xAB, 0xCD, 0xEF],
            "Swap (or Add) Data"
        );
        assert_eq!(
            &f[74..82],
            &[0xFE, 0xDC, 0xBA, 0x98, 0x76, 0x54, 0x32, 0x10],
            "Compare Data"
        );
        assert_eq!(&f[54..82], &fr.atomiceth.unwrap().encode());
        assert_eq!(icrc(&f, 82).to_le_bytes(), f[82..86], "ICRC");
        let back = decode(&f).unwrap();
        assert_eq!(back, fr, "{op:#x}");
        assert!(back.payload.is_empty() && back.aeth.is_none() && back.reth.is_none());
        assert_eq!(back.atomicacketh, None);
        // trailing Ethernet padding is ignored
        let mut padded = f.clone();
        padded.extend_from_slice(&[0; 6]);
        assert_eq!(decode(&padded).unwrap(), fr);
        // a missing AtomicETH is written as zeros
        let mut none = fr.clone();
        none.atomiceth = None;
        let g = none.encode();
        assert!(g[54..82].iter().all(|&b| b == 0));
        assert_eq!(decode(&g).unwrap().atomiceth, Some(AtomicEth::default()));
    }

    // ATOMIC ACKNOWLEDGE: BTH, AETH, AtomicAckETH, ICRC
    let op = opcode::ATOMIC_ACKNOWLEDGE;
    assert!(has_aeth(op) && has_atomicacketh(op) && !has_atomiceth(op) && !is_atomic(op));
    let mut fr = atomic(op, 0x12);
    fr.aeth = Some(Aeth {
        syndrome: 0x1F,
        msn: 0xAB_CDEF,
    });
    fr.atomicacketh = Some(AtomicAckEth {
        orig: 0x8877_6655_4433_2211,
    });
    let f = fr.encode();
    // Ethernet 14 + IPv4 20 + UDP 8 + BTH 12 + AETH 4 + AtomicAckETH 8 + ICRC 4
    assert_eq!(f.len(), 70);
    assert_eq!(fr.wire_len(), 70);
    assert_eq!(u16::from_be_bytes([f[16], f[17]]), 56, "IPv4 total length");
    assert_eq!(u16::from_be_bytes([f[38], f[39]]), 36, "UDP length");
    assert_eq!(f[42], 0x12);
    assert_eq!(&f[54..58], &[0x1F, 0xAB, 0xCD, 0xEF], "AETH");
    assert_eq!(
        &f[58..66],
        &[0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11],
        "Original Remote Data"
    );
    assert_eq!(icrc(&f, 66).to_le_bytes(), f[66..70], "ICRC");
    let back = decode(&f).unwrap();
    assert_eq!(back, fr);
    assert!(back.payload.is_empty() && back.atomiceth.is_none());
    let mut none = fr.clone();
    none.atomicacketh = None;
    let g = none.encode();
    assert_eq!(&g[54..58], &f[54..58]);
    assert!(g[58..66].iter().all(|&b| b == 0));
    assert_eq!(
        decode(&g).unwrap().atomicacketh,
        Some(AtomicAckEth::default())
    );

    // an atomic header on an opcode that does not carry it is not written,
    // nor decoded
    let mut ack = fr.clone();
    ack.bth.opcode = opcode::ACKNOWLEDGE;
    ack.atomiceth = Some(AtomicEth::default());
    assert_eq!(ack.encode().len(), 62);
    let back = decode(&ack.encode()).unwrap();
    assert_eq!((back.atomicacketh, back.atomiceth), (None, None));
    assert_eq!(back.aeth, fr.aeth);

    // a FETCH ADD answered: the request's fields and the reply's survive
    // the wire
    let req = atomic(opcode::FETCH_ADD, 99);
    let mut resp = atomic(opcode::ATOMIC_ACKNOWLEDGE, 100);
    resp.bth.psn = req.bth.psn;
    resp.atomicacketh = Some(AtomicAckEth {
        orig: u64::MAX - req.atomiceth.unwrap().swap_add,
    });
    let (q, r) = (
        decode(&req.encode()).unwrap(),
        decode(&resp.encode()).unwrap(),
    );
    assert_eq!(q.bth.psn, r.bth.psn);
    assert_eq!(
        q.atomiceth
            .unwrap()
            .swap_add
            .wrapping_add(r.atomicacketh.unwrap().orig),
        u64::MAX
    );
}

#[test]
fn atomic_icrc_covers_every_header_byte() {
    for op in [
        opcode::ATOMIC_ACKNOWLEDGE,
        opcode::COMPARE_SWAP,
        opcode::FETCH_ADD,
    ] {
        let g = atomic(op, 0xA7 + u64::from(op)).encode();
        let end = g.len() - 4;
        // the rest of the BTH (but byte 4, masked), AETH, AtomicETH or
        // AtomicAckETH, the ICRC
        for i in (44..g.len()).filter(|&i| i != 46) {
            for bit in [0x01, 0x80] {
                let mut f = g.clone();
                f[i] ^= bit;
                let e = decode(&f).expect_err("a flipped bit must fail the ICRC");
                assert!(
                    matches!(e, WireError::BadIcrc { .. }),
                    "{op:#x} byte {i}: {e:?}"
                );
            }
        }
        // FECN / BECN are outside the ICRC
        let mut f = g.clone();
        f[46] ^= 0xC0;
        assert!(decode(&f).is_ok());
        // a header byte changed and the ICRC recomputed: the new value
        let mut f = g.clone();
        f[end - 1] ^= 0x02;
        fix_icrc(&mut f);
        let back = decode(&f).unwrap();
        let fr = decode(&g).unwrap();
        match op {
            opcode::ATOMIC_ACKNOWLEDGE => assert_eq!(
                back.atomicacketh.unwrap().orig,
                fr.atomicacketh.unwrap().orig ^ 2
            ),
            _ => assert_eq!(
                back.atomiceth.unwrap().compare,
                fr.atomiceth.unwrap().compare ^ 2
            ),
        }
    }
}

#[test]
fn truncated_atomics_are_errors() {
    let mut rng = ChaCha8Rng::seed_from_u64(0x13);
    for (op, total) in [
        (opcode::ATOMIC_ACKNOWLEDGE, 70usize),
        (opcode::COMPARE_SWAP, 86),
        (opcode::FETCH_ADD, 86),
    ] {
        assert_eq!(header_len(op) + ICRC_LEN, total, "{op:#x}");
        let g = atomic(op, 7).encode();
        assert_eq!(g.len(), total);
        // cut on the wire: the frame ends before its IPv4 total length
        for n in [total - 1, total - 4, total - 8, 58, 54] {
            let e = decode(&g[..n]).expect_err("a cut frame must fail");
            assert!(
                matches!(e, WireError::IpLength { total: t, frame } if t == total - 14 && frame == n),
                "{op:#x} {n}: {e:?}"
            );
        }
        // consistent lengths that end inside the headers: a frame of an
        // opcode with fewer header bytes (an ACKNOWLEDGE, AETH only; an
        // RDMA WRITE MIDDLE, BTH only) and some payload, relabelled, its
        // ICRC recomputed
        let (other, ext) = match op {
            opcode::ATOMIC_ACKNOWLEDGE => (opcode::ACKNOWLEDGE, 4),
            _ => (opcode::RDMA_WRITE_MIDDLE, 0),
        };
        let lens: Vec<usize> = (0..ext_len(op) - ext).step_by(4).collect();
        assert!(lens.contains(&0) && lens.len() >= 2);
        for len in lens {
            let mut f = random_frame(&mut rng, other, len).encode();
            f[42] = op;
            fix_icrc(&mut f);
            let have = f.len();
            assert_eq!(have, 58 + ext + len);
            let e = decode(&f).expect_err("an atomic without its header");
            assert_eq!(e, WireError::Short { need: total, have }, "{op:#x} {len}");
            assert_eq!(
                e.to_string(),
                format!("frame too short: {have} bytes, need {total}")
            );
        }
        // just enough bytes: it decodes, the bytes taken as the header
        let mut fr = random_frame(&mut rng, other, ext_len(op) - ext);
        fr.payload = (1..=(ext_len(op) - ext) as u8).collect();
        let mut f = fr.encode();
        f[42] = op;
        fix_icrc(&mut f);
        let back = decode(&f).unwrap();
        assert!(back.payload.is_empty());
        match op {
            opcode::ATOMIC_ACKNOWLEDGE => {
                assert_eq!(back.aeth, fr.aeth);
                assert_eq!(back.atomicacketh.unwrap().encode().to_vec(), fr.payload);
            }
            _ => assert_eq!(back.atomiceth.unwrap().encode().to_vec(), fr.payload),
        }
    }
}
