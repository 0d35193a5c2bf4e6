//! Decode every frame of a pcap with rnic-wire and report what it finds:
//! a quick independent check of a capture of the wire (from the simulator,
//! an RTL test bench or a real NIC). Exits 1 if any frame fails to decode,
//! or is an mp frame whose MPETH length is not its payload's.
//!
//! Usage: cargo run -p rnic-wire --example pcap_check -- FILE.pcap [-v]

use pcap_file::pcap::PcapReader;
use std::collections::BTreeMap;
use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(path) = args.iter().find(|a| !a.starts_with('-')) else {
        eprintln!("usage: pcap_check FILE.pcap [-v]");
        return ExitCode::from(2);
    };
    let verbose = args.iter().any(|a| a == "-v");
    let file = match std::fs::File::open(path) {
        Ok(f) => f,
        Err(e) => {
            eprintln!("{path}: {e}");
            return ExitCode::from(2);
        }
    };
    let mut reader = match PcapReader::new(file) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("{path}: {e}");
            return ExitCode::from(2);
        }
    };
    let (mut ok, mut bad, mut bytes) = (0usize, 0usize, 0usize);
    let mut by_opcode: BTreeMap<u8, usize> = BTreeMap::new();
    let mut index = 0usize;
    while let Some(pkt) = reader.next_packet() {
        let pkt = match pkt {
            Ok(p) => p,
            Err(e) => {
                eprintln!("{path}: {e}");
                return ExitCode::from(2);
            }
        };
        match rnic_wire::decode(&pkt.data) {
            Ok(fr) if fr.mpeth.is_some_and(|m| m.len as usize != fr.payload.len()) => {
                bad += 1;
                println!(
                    "#{index}: MPETH length {} but {} payload bytes",
                    fr.mpeth.unwrap().len,
                    fr.payload.len()
                );
            }
            Ok(fr) => {
                ok += 1;
                bytes += fr.payload.len();
                *by_opcode.entry(fr.bth.opcode).or_default() += 1;
                if verbose {
                    let mut extra = String::new();
                    if let Some(m) = fr.mpeth {
                        extra += &format!(" va {:#x} len {}", m.va, m.len);
                    }
                    if let Some(c) = fr.mceth {
                        extra += &format!(" msg_len {}", c.msg_len);
                    }
                    println!(
                        "#{index}: {} ({:#04x}) qp {:#08x} psn {} payload {} B{extra}",
                        rnic_wire::opcode_name(fr.bth.opcode),
                        fr.bth.opcode,
                        fr.bth.dest_qp,
                        fr.bth.psn,
                        fr.payload.len()
                    );
                }
            }
            Err(e) => {
                bad += 1;
                println!("#{index}: {} bytes: {e}", pkt.data.len());
            }
        }
        index += 1;
    }
    let by_name: Vec<String> = by_opcode
        .iter()
        .map(|(op, n)| format!("{} {n}", rnic_wire::opcode_name(*op)))
        .collect();
    println!(
        "{path}: {ok} frames decoded ({bytes} payload bytes), {bad} rejected; by opcode: {}",
        by_name.join(", ")
    );
    if bad == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
