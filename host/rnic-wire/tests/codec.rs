//! Round trips over every RC and mp opcode and payload length class, and one test
//! per decode error.

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
    let mp = opcode::MP_WRITE..=opcode::MP_ACKNOWLEDGE;
    for op in (0..=opcode::ACKNOWLEDGE).chain(mp) {
        for len in (0..70).chain([255, 256, 1023, 1024, 4093, 4094, 4095, 4096]) {
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
