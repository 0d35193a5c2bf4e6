//! Bench of `icrc_subst`: seeded random frames, beat by beat as roce_tx and
//! roce_rx feed it (beat_oh one-hot for the first OH_W beats, zero after),
//! checked two ways:
//!
//! - byte for byte against the substitution written here from the header
//!   layout (Ethernet 14, IPv4 20, UDP 8, BTH 12 bytes) and the fields the
//!   ICRC masks (IBA annex A17: IPv4 TOS, TTL, header checksum; UDP
//!   checksum; BTH byte 4), with the Ethernet header replaced by the
//!   pattern FF FF FF FF 00 x6 FF FF FF FF;
//! - by the CRC itself: CRC-32 over what the block outputs, from frame byte
//!   0, must leave the register where the ICRC's definition leaves it (8
//!   bytes of 0xFF, then the masked frame from the IPv4 header on). This
//!   holds the Ethernet pattern to what it stands for.

use crate::{fail, Fail, Kind, Model, PortsIn};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Frame offsets of the headers (no VLAN, IPv4 without options).
pub const IP: usize = 14;
pub const UDP: usize = IP + 20;
pub const BTH: usize = UDP + 8;

/// The frame bytes the CRC engine must see: the Ethernet header replaced
/// by FF FF FF FF 00 00 00 00 00 00 FF FF FF FF, the variant fields by ones.
pub fn reference(frame: &[u8]) -> Vec<u8> {
    let mut f = frame.to_vec();
    f[0..4].fill(0xff);
    f[4..10].fill(0x00);
    f[10..14].fill(0xff);
    f[IP + 1] = 0xff; // type of service (DSCP, ECN)
    f[IP + 8] = 0xff; // time to live
    f[IP + 10..IP + 12].fill(0xff); // header checksum
    f[UDP + 6..UDP + 8].fill(0xff); // UDP checksum
    f[BTH + 4] = 0xff; // FECN, BECN, reserved
    f
}

/// CRC-32 (reflected 0xEDB88320) register after `bytes`, from `crc`.
pub fn crc32(mut crc: u32, bytes: &[u8]) -> u32 {
    for &b in bytes {
        crc ^= u32::from(b);
        for _ in 0..8 {
            crc = if crc & 1 != 0 {
                (crc >> 1) ^ 0xEDB8_8320
            } else {
                crc >> 1
            };
        }
    }
    crc
}

/// The ICRC's CRC register by its definition: 8 bytes of 0xFF for the LRH,
/// then the frame from the IPv4 header with the variant fields set to ones.
pub fn icrc_by_definition(frame: &[u8]) -> u32 {
    let mut f = frame[IP..].to_vec();
    f[1] = 0xff;
    f[8] = 0xff;
    f[10..12].fill(0xff);
    f[UDP - IP + 6..UDP - IP + 8].fill(0xff);
    f[BTH - IP + 4] = 0xff;
    crc32(crc32(!0, &[0xff; 8]), &f)
}

/// What a run measured.
#[derive(Debug, Clone, Default)]
pub struct IcrcReport {
    pub frames: usize,
    pub beats: usize,
}

/// `frames` random frames of 58..=300 bytes through configuration `model`.
pub fn run(model: &'static str, seed: u64, frames: usize) -> Result<IcrcReport, Fail> {
    let mut m = Model::new(model, seed as u32).map_err(Fail)?;
    let c = *m.config();
    assert_eq!(c.kind, Kind::IcrcSubst, "{} is not an icrc_subst", c.name);
    let bl = c.param("DATA_W") as usize / 8;
    let oh_w = c.param("OH_W") as usize;
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut rep = IcrcReport::default();
    for n in 0..frames {
        // the shortest RoCEv2 frame: headers, BTH, ICRC
        let len = rng.gen_range(BTH + 12 + 4..=300);
        let frame: Vec<u8> = (0..len).map(|_| rng.gen()).collect();
        let nbeats = len.div_ceil(bl);
        let mut padded = frame.clone();
        padded.resize(nbeats * bl, 0);
        let exp = reference(&padded);
        let mut seen = Vec::with_capacity(padded.len());
        for b in 0..nbeats {
            let mut i = PortsIn::default();
            if b < oh_w {
                i.s_valid = 1 << b;
            }
            for (k, &byte) in padded[b * bl..(b + 1) * bl].iter().enumerate() {
                i.s_data[k / 4] |= u32::from(byte) << (8 * (k % 4));
            }
            let o = m.step(&i);
            let got: Vec<u8> = (0..bl)
                .map(|k| (o.m_data[k / 4] >> (8 * (k % 4))) as u8)
                .collect();
            for (k, (&g, &e)) in got.iter().zip(&exp[b * bl..(b + 1) * bl]).enumerate() {
                if g != e {
                    fail!(
                        "frame {n} ({len} bytes), beat {b}: frame byte {} is {g:#04x} to the CRC, \
                         expected {e:#04x} (input {:#04x})",
                        b * bl + k,
                        padded[b * bl + k]
                    );
                }
            }
            seen.extend_from_slice(&got);
            rep.beats += 1;
        }
        let by_block = crc32(!0, &seen[..len]);
        let by_def = icrc_by_definition(&frame);
        if by_block != by_def {
            fail!(
                "frame {n} ({len} bytes): CRC over the substituted frame {by_block:#010x}, \
                 by the ICRC's definition {by_def:#010x}"
            );
        }
        rep.frames += 1;
    }
    Ok(rep)
}
