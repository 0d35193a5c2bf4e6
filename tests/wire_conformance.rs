//! Every frame type the NIC emits, captured on the simulated wire: each one
//! decodes with an implementation that shares no code with the RTL
//! (`rnic-wire`, ICRC by `crc32fast`), its fields are the ones the test
//! posted, and Wireshark's dissector (tshark) reads the same fields.

use std::collections::BTreeMap;
use std::process::Command;

use pcap_file::pcap::PcapReader;
use rnic_sim::{FabricConfig, WorldConfig};
use rnic_tests::fill_pattern;
use rnic_tests::roce::*;
use rnic_verbs::*;
use rnic_wire::{decode, opcode, RoceFrame};

const BUDGET: u64 = 200_000;

/// A tshark field value: decimal, or hex with 0x.
fn num(s: &str) -> u64 {
    let s = s.trim();
    match s.strip_prefix("0x") {
        Some(h) => u64::from_str_radix(h, 16).unwrap_or_else(|_| panic!("bad hex field {s:?}")),
        None => s.parse().unwrap_or_else(|_| panic!("bad field {s:?}")),
    }
}

fn post(a: &mut End, b: &End, wr_id: u64, op: WrOpcode, len: u32, imm: Option<u32>) {
    let sge = [a.mr.sge(0, len).unwrap()];
    a.qp.post_send(&SendWr {
        wr_id,
        opcode: op,
        send_flags: SendFlags::SIGNALED,
        sg_list: if len == 0 { &[] } else { &sge },
        imm_data: imm.map(u32::to_be),
        rdma: if op.is_rdma() {
            Some(b.mr.rdma_info(64).unwrap())
        } else {
            None
        },
    })
    .unwrap();
}

/// Runs traffic that makes the NIC emit every RC request opcode, ACKs and a
/// NAK; returns the captured frames of both directions.
fn capture(data_w: u32, path: &std::path::Path) -> (Vec<Vec<u8>>, u32, u32, u32, u32) {
    let p = pair_with(WorldConfig {
        nics: 2,
        data_w,
        seed: 77,
        fabric: FabricConfig::profile("ideal").unwrap(),
        pcap: Some(path.to_path_buf()),
        ..WorldConfig::default()
    });
    let o = ConnOpts {
        mtu: Mtu::Mtu256,
        ..ConnOpts::default()
    };
    let e = EndOpts {
        psn_a: 0x00ab_cd00,
        ..EndOpts::default()
    };
    let (mut a, mut b) = connect_with(&p, &o, &e);
    fill_pattern(&a.buf, 0, 4096, 1);
    let cases: [(WrOpcode, u32, Option<u32>); 8] = [
        (WrOpcode::RdmaWrite, 100, None),                   // WRITE ONLY
        (WrOpcode::RdmaWrite, 700, None),                   // FIRST, MIDDLE, LAST
        (WrOpcode::RdmaWriteWithImm, 3, Some(0x1122_3344)), // ONLY_IMM
        (WrOpcode::RdmaWriteWithImm, 600, Some(7)),         // FIRST, MIDDLE, LAST_IMM
        (WrOpcode::Send, 10, None),                         // SEND ONLY
        (WrOpcode::Send, 600, None),                        // FIRST, MIDDLE, LAST
        (WrOpcode::SendWithImm, 0, Some(0xfeed)),           // ONLY_IMM
        (WrOpcode::SendWithImm, 300, Some(9)),              // FIRST, LAST_IMM
    ];
    for (i, (op, len, imm)) in cases.iter().enumerate() {
        // a plain WRITE consumes no receive WQE and makes no receive CQE
        let consumes_recv = *op != WrOpcode::RdmaWrite;
        if consumes_recv {
            b.qp.post_recv(&RecvWr {
                wr_id: i as u64,
                sg_list: &[b.mr.sge(0, 4096).unwrap()],
            })
            .unwrap();
        }
        post(&mut a, &b, i as u64, *op, *len, *imm);
        let got = wait_wc(p.a.device(), &a.cq, 1, BUDGET);
        if got.len() != 1 {
            eprintln!(
                "a: {:?}\nb: {:?}\nb wc: {:?}\nqp a {:?}",
                p.a.query_port_counters(),
                p.b.query_port_counters(),
                wait_wc(p.b.device(), &b.cq, 1, 10),
                a.qp.status()
            );
        }
        assert_eq!(got.len(), 1, "case {i}");
        if consumes_recv {
            assert_eq!(wait_wc(p.b.device(), &b.cq, 1, BUDGET).len(), 1, "case {i}");
        }
    }
    // a NAK: a second connection writes with a bad rkey
    let (mut c, d) = connect(&p, &ConnOpts::default());
    let sge = [c.mr.sge(0, 8).unwrap()];
    c.qp.post_send(&SendWr {
        wr_id: 99,
        opcode: WrOpcode::RdmaWrite,
        send_flags: SendFlags::SIGNALED,
        sg_list: &sge,
        imm_data: None,
        rdma: Some(RdmaInfo {
            remote_addr: d.mr.addr(),
            rkey: d.mr.rkey() ^ 0xff,
        }),
    })
    .unwrap();
    assert_eq!(
        wait_wc(p.a.device(), &c.cq, 1, BUDGET)[0].status,
        WcStatus::RemAccessErr
    );
    p.world.stop_pcap().unwrap();
    let mut frames = Vec::new();
    let mut r = PcapReader::new(std::fs::File::open(path).unwrap()).unwrap();
    while let Some(pkt) = r.next_packet() {
        frames.push(pkt.unwrap().data.into_owned());
    }
    (
        frames,
        a.qp.qp_num(),
        b.qp.qp_num(),
        b.mr.rkey(),
        b.mr.addr() as u32,
    )
}

#[test]
fn every_frame_decodes_and_matches() {
    for w in [64u32, 256] {
        let path = std::env::temp_dir().join(format!("rnic-wire-{}-{w}.pcap", std::process::id()));
        let (frames, qa, qb, rkey, _) = capture(w, &path);
        let decoded: Vec<RoceFrame> = frames
            .iter()
            .enumerate()
            .map(|(i, f)| decode(f).unwrap_or_else(|e| panic!("DATA_W={w} frame {i}: {e}")))
            .collect();
        let mut seen: BTreeMap<u8, usize> = BTreeMap::new();
        for f in &decoded {
            *seen.entry(f.bth.opcode).or_default() += 1;
        }
        for op in [
            opcode::SEND_FIRST,
            opcode::SEND_MIDDLE,
            opcode::SEND_LAST,
            opcode::SEND_LAST_WITH_IMMEDIATE,
            opcode::SEND_ONLY,
            opcode::SEND_ONLY_WITH_IMMEDIATE,
            opcode::RDMA_WRITE_FIRST,
            opcode::RDMA_WRITE_MIDDLE,
            opcode::RDMA_WRITE_LAST,
            opcode::RDMA_WRITE_LAST_WITH_IMMEDIATE,
            opcode::RDMA_WRITE_ONLY,
            opcode::RDMA_WRITE_ONLY_WITH_IMMEDIATE,
            opcode::ACKNOWLEDGE,
        ] {
            assert!(
                seen.contains_key(&op),
                "DATA_W={w}: no frame with opcode {op:#04x}: {seen:?}"
            );
        }
        // requests of the first connection: consecutive PSNs from 0xabcd00,
        // our QP numbers, RETH and ImmDt as posted
        let reqs: Vec<&RoceFrame> = decoded
            .iter()
            .filter(|f| f.bth.dest_qp == qb && f.bth.opcode != opcode::ACKNOWLEDGE)
            .collect();
        for (i, f) in reqs.iter().enumerate() {
            assert_eq!(f.bth.psn, 0x00ab_cd00 + i as u32, "PSN of request {i}");
            assert_eq!(f.bth.pkey, 0xffff);
            assert_eq!(f.udp.src_port & 0xff00, 0xc000);
            assert!(f.payload.len() <= 256);
        }
        let first_write = reqs
            .iter()
            .find(|f| f.bth.opcode == opcode::RDMA_WRITE_FIRST)
            .unwrap();
        let reth = first_write.reth.unwrap();
        assert_eq!((reth.rkey, reth.dma_len), (rkey, 700));
        let only_imm = reqs
            .iter()
            .find(|f| f.bth.opcode == opcode::RDMA_WRITE_ONLY_WITH_IMMEDIATE)
            .unwrap();
        assert_eq!(only_imm.immdt, Some(0x1122_3344));
        assert_eq!(
            only_imm.payload,
            (0..3)
                .map(|i| rnic_harness::pattern::byte(1, i))
                .collect::<Vec<_>>()
        );
        let acks: Vec<&RoceFrame> = decoded
            .iter()
            .filter(|f| f.bth.opcode == opcode::ACKNOWLEDGE)
            .collect();
        assert!(acks
            .iter()
            .any(|f| f.bth.dest_qp == qa && f.aeth.unwrap().syndrome == 0x1f));
        assert!(
            acks.iter().any(|f| f.aeth.unwrap().syndrome == 0x62),
            "a NAK (remote access error) must be on the wire"
        );

        // Wireshark reads the same opcodes, PSNs and ICRCs
        if Command::new("tshark").arg("--version").output().is_ok() {
            let out = Command::new("tshark")
                .arg("-r")
                .arg(&path)
                .args(["-T", "fields", "-E", "separator=|"])
                .args([
                    "-e",
                    "infiniband.bth.opcode",
                    "-e",
                    "infiniband.bth.psn",
                    "-e",
                    "infiniband.bth.destqp",
                ])
                .args(["-e", "infiniband.invariant.crc"])
                .output()
                .expect("tshark");
            assert!(
                out.status.success(),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
            let text = String::from_utf8_lossy(&out.stdout);
            let lines: Vec<&str> = text.lines().collect();
            assert_eq!(
                lines.len(),
                decoded.len(),
                "tshark saw a different number of frames"
            );
            let mut icrcs_compared = 0;
            for (l, (f, raw)) in lines.iter().zip(decoded.iter().zip(&frames)) {
                let v: Vec<&str> = l.split('|').collect();
                assert!(
                    v[..3].iter().all(|x| !x.is_empty()),
                    "tshark left a field empty: {l:?} for {f:?}"
                );
                assert_eq!(num(v[0]), u64::from(f.bth.opcode), "{l}");
                assert_eq!(num(v[1]), u64::from(f.bth.psn), "{l}");
                assert_eq!(num(v[2]), u64::from(f.bth.dest_qp), "{l}");
                // tshark 4.0 shows the ICRC only for some opcodes (it takes it
                // as payload for others); rnic-wire has verified every one
                if v[3].is_empty() {
                    continue;
                }
                icrcs_compared += 1;
                // the ICRC is the 4 bytes before any Ethernet padding
                let end = 14 + u16::from_be_bytes([raw[16], raw[17]]) as usize;
                let icrc = u32::from_be_bytes(raw[end - 4..end].try_into().unwrap());
                assert_eq!(num(v[3]) as u32, icrc, "{l}");
            }
            assert!(icrcs_compared > 0, "tshark showed no ICRC at all");
        } else {
            eprintln!("NOTICE: tshark not installed; Wireshark cross-check skipped");
        }
        let _ = std::fs::remove_file(&path);
    }
}
