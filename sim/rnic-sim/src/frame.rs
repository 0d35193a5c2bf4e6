//! Just enough Ethernet / IPv4 / UDP parsing for the fabric (path hash,
//! corruption target, learning switch), and a builder for test frames.
//!
//! Frames are as on the NIC's AXI-Stream ports: destination MAC first, no
//! preamble, no FCS.

/// Ethernet header length (no VLAN tag).
pub const ETH_HDR: usize = 14;
/// EtherType of IPv4.
pub const ETHERTYPE_IPV4: u16 = 0x0800;
/// EtherType of an 802.1Q VLAN tag.
pub const ETHERTYPE_VLAN: u16 = 0x8100;
/// IP protocol number of UDP.
pub const IPPROTO_UDP: u8 = 17;
/// UDP destination port of RoCEv2.
pub const ROCEV2_PORT: u16 = 4791;
/// Shortest Ethernet frame without FCS (a MAC pads up to it).
pub const MIN_FRAME: usize = 60;

fn be16(f: &[u8], at: usize) -> u16 {
    u16::from_be_bytes([f[at], f[at + 1]])
}

/// Offset of the UDP header of an IPv4/UDP frame (with or without one
/// VLAN tag), or `None` for anything else (including IP fragments other
/// than the first).
pub fn udp_offset(f: &[u8]) -> Option<usize> {
    if f.len() < ETH_HDR {
        return None;
    }
    let mut et = be16(f, 12);
    let mut ip = ETH_HDR;
    if et == ETHERTYPE_VLAN {
        if f.len() < ETH_HDR + 4 {
            return None;
        }
        et = be16(f, 16);
        ip += 4;
    }
    if et != ETHERTYPE_IPV4 || f.len() < ip + 20 {
        return None;
    }
    let vihl = f[ip];
    if vihl >> 4 != 4 {
        return None;
    }
    let ihl = usize::from(vihl & 0x0f) * 4;
    if ihl < 20 || f[ip + 9] != IPPROTO_UDP {
        return None;
    }
    // Fragment offset must be zero (only the first fragment has the ports).
    if be16(f, ip + 6) & 0x1fff != 0 {
        return None;
    }
    let udp = ip + ihl;
    if f.len() < udp + 8 {
        return None;
    }
    Some(udp)
}

/// UDP source port of an IPv4/UDP frame (the ECMP / spraying entropy).
pub fn udp_src_port(f: &[u8]) -> Option<u16> {
    udp_offset(f).map(|u| be16(f, u))
}

/// UDP destination port of an IPv4/UDP frame.
pub fn udp_dst_port(f: &[u8]) -> Option<u16> {
    udp_offset(f).map(|u| be16(f, u + 2))
}

/// Destination MAC address (bytes 0..6).
pub fn dst_mac(f: &[u8]) -> Option<[u8; 6]> {
    f.get(0..6).map(|s| s.try_into().unwrap())
}

/// Source MAC address (bytes 6..12).
pub fn src_mac(f: &[u8]) -> Option<[u8; 6]> {
    f.get(6..12).map(|s| s.try_into().unwrap())
}

/// The byte range a corrupted bit is taken from, and one byte inside it to
/// skip, so that the corruption is one the receiver must catch.
///
/// For a RoCEv2 frame (UDP port 4791) this is everything from the BTH to
/// the end (payload and ICRC), except BTH byte 4 (FECN/BECN/reserved, masked
/// out of the ICRC): a flipped bit there always fails the ICRC. For any other
/// frame it is the whole frame.
pub fn corruptible_range(f: &[u8]) -> (std::ops::Range<usize>, Option<usize>) {
    if let Some(u) = udp_offset(f) {
        if be16(f, u + 2) == ROCEV2_PORT && f.len() > u + 8 {
            let bth = u + 8;
            return (bth..f.len(), Some(bth + 4).filter(|&b| b < f.len()));
        }
    }
    (0..f.len(), None)
}

/// The one's-complement checksum of an IPv4 header.
pub fn ipv4_checksum(hdr: &[u8]) -> u16 {
    let mut sum: u32 = 0;
    for c in hdr.chunks(2) {
        let w = if c.len() == 2 {
            u16::from_be_bytes([c[0], c[1]])
        } else {
            u16::from(c[0]) << 8
        };
        sum += u32::from(w);
    }
    while sum >> 16 != 0 {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    !(sum as u16)
}

/// Addresses and ports of [`ipv4_udp`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UdpFlow {
    pub dmac: [u8; 6],
    pub smac: [u8; 6],
    pub sip: [u8; 4],
    pub dip: [u8; 4],
    pub sport: u16,
    pub dport: u16,
}

impl Default for UdpFlow {
    fn default() -> Self {
        Self {
            dmac: [0x02, 0, 0, 0, 0, 0x02],
            smac: [0x02, 0, 0, 0, 0, 0x01],
            sip: [10, 0, 0, 1],
            dip: [10, 0, 0, 2],
            sport: 49152,
            dport: ROCEV2_PORT,
        }
    }
}

/// An Ethernet + IPv4 (no options, DF, TTL 64, checksum) + UDP (checksum 0)
/// frame carrying `payload`, padded to [`MIN_FRAME`] bytes.
pub fn ipv4_udp(flow: &UdpFlow, payload: &[u8]) -> Vec<u8> {
    let ip_len = 20 + 8 + payload.len();
    let mut f = Vec::with_capacity((ETH_HDR + ip_len).max(MIN_FRAME));
    f.extend_from_slice(&flow.dmac);
    f.extend_from_slice(&flow.smac);
    f.extend_from_slice(&ETHERTYPE_IPV4.to_be_bytes());
    let ip = f.len();
    f.extend_from_slice(&[0x45, 0]);
    f.extend_from_slice(&(ip_len as u16).to_be_bytes());
    f.extend_from_slice(&[0, 0, 0x40, 0, 64, IPPROTO_UDP, 0, 0]);
    f.extend_from_slice(&flow.sip);
    f.extend_from_slice(&flow.dip);
    let ck = ipv4_checksum(&f[ip..ip + 20]);
    f[ip + 10..ip + 12].copy_from_slice(&ck.to_be_bytes());
    f.extend_from_slice(&flow.sport.to_be_bytes());
    f.extend_from_slice(&flow.dport.to_be_bytes());
    f.extend_from_slice(&((8 + payload.len()) as u16).to_be_bytes());
    f.extend_from_slice(&[0, 0]);
    f.extend_from_slice(payload);
    if f.len() < MIN_FRAME {
        f.resize(MIN_FRAME, 0);
    }
    f
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_built_frame() {
        let flow = UdpFlow {
            sport: 0xC123,
            ..UdpFlow::default()
        };
        let f = ipv4_udp(&flow, &[1, 2, 3]);
        assert_eq!(f.len(), MIN_FRAME);
        assert_eq!(udp_offset(&f), Some(34));
        assert_eq!(udp_src_port(&f), Some(0xC123));
        assert_eq!(udp_dst_port(&f), Some(ROCEV2_PORT));
        assert_eq!(ipv4_checksum(&f[14..34]), 0, "checksum verifies");
        assert_eq!(dst_mac(&f), Some(flow.dmac));
        assert_eq!(src_mac(&f), Some(flow.smac));
        let (r, skip) = corruptible_range(&f);
        assert_eq!(r, 42..60);
        assert_eq!(skip, Some(46));
    }

    #[test]
    fn vlan_and_non_udp() {
        let mut f = ipv4_udp(&UdpFlow::default(), &[0; 10]);
        // Insert a VLAN tag.
        let mut v = f[..12].to_vec();
        v.extend_from_slice(&[0x81, 0x00, 0x00, 0x05]);
        v.extend_from_slice(&f[12..]);
        assert_eq!(udp_src_port(&v), Some(49152));
        // Not UDP.
        f[14 + 9] = 6;
        assert_eq!(udp_src_port(&f), None);
        assert_eq!(corruptible_range(&f).0, 0..f.len());
        // Not IPv4.
        assert_eq!(udp_src_port(&[0u8; 60]), None);
        assert_eq!(udp_src_port(&[0u8; 5]), None);
    }
}
