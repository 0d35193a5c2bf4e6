//! Decode every frame of a pcap with rnic-wire and report what it finds:
//! a quick independent check of a capture of the wire (from the simulator,
//! an RTL test bench or a real NIC). Exits 1 if any frame fails to decode.
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
            Ok(fr) => {
                ok += 1;
                bytes += fr.payload.len();
                *by_opcode.entry(fr.bth.opcode).or_default() += 1;
                if verbose {
                    println!(
                        "#{index}: opcode {:#04x} qp {:#08x} psn {} payload {} B",
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
    println!("{path}: {ok} frames decoded ({bytes} payload bytes), {bad} rejected; by opcode: {by_opcode:?}");
    if bad == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
