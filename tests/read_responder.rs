//! The RDMA READ responder, on one simulated NIC whose peer is this test:
//! READ requests are built with `rnic-wire` (its own encoder and ICRC) and
//! injected into the NIC's receive port, and every frame the NIC sends is
//! taken from the wire window and decoded with `rnic-wire`.
//!
//! Checked: the READ RESPONSE opcodes (ONLY up to one path MTU, length 0
//! included; else FIRST, MIDDLEs, LAST), one PSN each from the request's,
//! the AETH (syndrome 0x1F) on FIRST / LAST / ONLY, the payload against the
//! region's bytes; the expected PSN moving on by the number of responses;
//! a bad R_Key, a region without REMOTE_READ, a QP without REMOTE_READ and
//! a READ past the region's end each answered by one NAK (remote access
//! error, 0x62) at the request's PSN, nothing else and no DMA read of
//! host memory; a duplicate READ answered again; a READ to an mp QP
//! dropped and counted (`rx_drop_transport`).
//!
//! The NIC's frames go nowhere (a world of one NIC without loopback): the
//! fake peer at [`PEER`] exists only in the frames.
//!
//! Needs the default model's READ responder (rnic_core `READ_EN=1`,
//! `id.caps` bit 7); without it the tests fail, never skip.

use rnic_harness::conn::{bring_up, end, ConnOpts, EndOpts, PortAddr, Remote, DEFAULT_ADDRS};
use rnic_sim::{FabricConfig, SimDevice, SimWorld, WorldConfig};
use rnic_tests::{fill_pattern, WIDTHS};
use rnic_verbs::*;
use rnic_wire::{decode, opcode, opcode_name, Bth, Eth, Ipv4, Reth, RoceFrame, Udp};

/// The simulated NIC's port.
const NIC: PortAddr = DEFAULT_ADDRS[1];
/// The requester the injected frames come from (no NIC behind it).
const PEER: PortAddr = DEFAULT_ADDRS[0];
/// The requester's QP number, the responder's destination QP.
const PEER_QPN: u32 = 0x00_0123;
/// The first PSN the responder QPs send (they send none but READ
/// responses and ACKs, which take the request's PSNs).
const SQ_PSN: u32 = 0x0040_0000;
/// Each responder's registered buffer.
const BUF_LEN: usize = 1 << 16;
/// Cycles to wait for the answers to one request.
const BUDGET: u64 = 400_000;
/// Cycles to go on after the answers arrived (or, when none is expected,
/// to wait), in which nothing more may come.
const SETTLE: u64 = 30_000;
/// AETH syndromes.
const ACK: u8 = 0x1F;
const NAK_REMOTE_ACCESS: u8 = 0x62;

/// One simulated NIC and its verbs context.
struct Nic {
    world: SimWorld,
    ctx: Context<SimDevice>,
}

type End = rnic_harness::conn::End<SimDevice>;

fn nic(data_w: u32, seed: u64) -> Nic {
    nic_with(data_w, seed, rnic_sim::RootComplexConfig::default())
}

/// [`nic`] with the host `rc` (the default one stalls and reorders
/// completions at random; `RootComplexConfig::bench()` does not).
fn nic_with(data_w: u32, seed: u64, root_complex: rnic_sim::RootComplexConfig) -> Nic {
    let world = SimWorld::new(WorldConfig {
        nics: 1,
        data_w,
        seed,
        fabric: FabricConfig::ideal(),
        loopback: false,
        pcap_window: 4096,
        root_complex,
        ..WorldConfig::default()
    })
    .unwrap_or_else(|e| panic!("simulator: {e}"));
    let ctx = Context::open(world.device(0)).unwrap_or_else(|e| panic!("open: {e}"));
    ctx.set_port_addr(NIC.mac, NIC.ip).unwrap();
    Nic { world, ctx }
}

/// The default model serves RDMA READ requests (`id.caps` bit 7: rnic_core
/// `READ_EN=1`, sim/rnic-sim's model table): a model without it fails
/// here rather than passing without a READ served.
fn serves_read(n: &Nic, test: &str) -> bool {
    let caps = n.ctx.nic().id().caps;
    assert!(
        caps & (1 << 7) != 0,
        "{test}: this model does not serve RDMA READ (id.caps {caps:#x}, bit 7 clear; \
         rnic_core READ_EN=0), but the default model must"
    );
    true
}

fn read_access() -> AccessFlags {
    AccessFlags::REMOTE_WRITE | AccessFlags::REMOTE_READ
}

/// Connection settings: `mtu`, `qp_access` on an RC QP.
fn conn(mtu: Mtu, qp_access: AccessFlags) -> ConnOpts {
    ConnOpts {
        mtu,
        qp_access,
        ..ConnOpts::default()
    }
}

/// A QP in RTS towards [`PEER`] expecting `rq_psn`, with a buffer of
/// [`BUF_LEN`] bytes registered with `mr_access` and filled with the
/// pattern of `tag`.
fn responder(n: &Nic, o: &ConnOpts, mr_access: AccessFlags, rq_psn: u32, tag: u64) -> End {
    let e = EndOpts {
        buf_len: BUF_LEN,
        mr_access,
        ..EndOpts::default()
    };
    let mut x = end(&n.ctx, o, &e).unwrap_or_else(|err| panic!("end: {err}"));
    let peer = Remote {
        qpn: PEER_QPN,
        psn: rq_psn,
        addr: PEER,
    };
    bring_up(&mut x.qp, o, &peer, SQ_PSN).unwrap_or_else(|err| panic!("bring up: {err}"));
    assert_eq!(x.qp.state().unwrap(), QpState::Rts);
    assert_eq!(x.qp.status().unwrap().rq_psn_now, rq_psn);
    fill_pattern(&x.buf, 0, BUF_LEN, tag);
    x
}

/// An RDMA READ request from [`PEER`] to QP `qpn`, as the wire carries it.
fn read_request(qpn: u32, psn: u32, va: u64, rkey: u32, len: u32) -> Vec<u8> {
    RoceFrame {
        eth: Eth {
            dst: NIC.mac,
            src: PEER.mac,
        },
        ip: Ipv4 {
            src: PEER.ip.octets(),
            dst: NIC.ip.octets(),
            ..Ipv4::default()
        },
        udp: Udp {
            src_port: 0xC123,
            checksum: 0,
        },
        bth: Bth {
            opcode: opcode::RDMA_READ_REQUEST,
            dest_qp: qpn,
            psn: psn & 0xFF_FFFF,
            ack_req: true,
            ..Bth::default()
        },
        reth: Some(Reth {
            va,
            rkey,
            dma_len: len,
        }),
        ..RoceFrame::default()
    }
    .encode()
}

/// A READ request for `len` bytes at offset `off` of `x`'s region.
fn read_of(x: &End, psn: u32, off: usize, len: u32) -> Vec<u8> {
    read_request(
        x.qp.qp_num(),
        psn,
        x.mr.addr() + off as u64,
        x.mr.rkey(),
        len,
    )
}

/// Injects `req` into the NIC's receive port and returns every frame the
/// NIC sent from then on, decoded: waits until `want` frames are out (at
/// most [`BUDGET`] cycles), then [`SETTLE`] cycles more.
fn exchange(n: &Nic, req: &[u8], want: usize) -> Vec<RoceFrame> {
    exchange_all(n, &[req], want)
}

/// [`exchange`] of several requests injected back to back.
fn exchange_all(n: &Nic, reqs: &[&[u8]], want: usize) -> Vec<RoceFrame> {
    n.world.clear_window();
    for req in reqs {
        assert!(
            n.world.inject_frame(0, req, false),
            "the NIC's receive queue is full"
        );
    }
    let mut waited = 0;
    while n.world.window().len() < want && waited < BUDGET {
        n.world.run(256);
        waited += 256;
    }
    n.world.run(SETTLE);
    n.world
        .window()
        .iter()
        .enumerate()
        .map(|(i, f)| {
            assert_eq!(f.src, 0, "frame {i} not from the NIC");
            decode(&f.data).unwrap_or_else(|e| panic!("frame {i} of the NIC does not decode: {e}"))
        })
        .collect()
}

/// DMA read requests the NIC has sent to its host so far.
fn dma_reads(n: &Nic) -> u64 {
    n.world.device(0).stats().tx_rd_req.tlps
}

/// Opcode names, for messages.
fn names(fs: &[RoceFrame]) -> Vec<String> {
    fs.iter()
        .map(|f| format!("{} psn {:#x}", opcode_name(f.bth.opcode), f.bth.psn))
        .collect()
}

/// Response packets of a READ of `len` bytes at path MTU `pmtu`.
fn packets(len: usize, pmtu: usize) -> usize {
    len.div_ceil(pmtu).max(1)
}

/// Addressing every frame of the NIC's must carry: from the NIC to
/// [`PEER`]'s QP.
fn check_addressing(what: &str, f: &RoceFrame) {
    assert_eq!((f.eth.src, f.eth.dst), (NIC.mac, PEER.mac), "{what}: MACs");
    assert_eq!(
        (f.ip.src, f.ip.dst),
        (NIC.ip.octets(), PEER.ip.octets()),
        "{what}: IPv4 addresses"
    );
    assert_eq!(f.bth.dest_qp, PEER_QPN, "{what}: destination QP");
    assert_eq!(f.bth.pkey, 0xFFFF, "{what}: P_Key");
}

/// `resp` is the whole answer to a READ of `len` bytes at offset `off` of
/// `x`'s region with PSN `psn`, at path MTU `pmtu`: the opcodes, PSNs,
/// AETHs and payload lengths IB prescribes, and the region's bytes.
fn check_read(
    what: &str,
    resp: &[RoceFrame],
    x: &End,
    psn: u32,
    off: usize,
    len: usize,
    pmtu: usize,
) {
    let n = packets(len, pmtu);
    assert_eq!(
        resp.len(),
        n,
        "{what}: {n} READ RESPONSE packets wanted, the NIC sent {:?}",
        names(resp)
    );
    let mut data = Vec::with_capacity(len);
    for (i, f) in resp.iter().enumerate() {
        let w = format!("{what}, packet {i} of {n}");
        let (op, plen) = if n == 1 {
            (opcode::RDMA_READ_RESPONSE_ONLY, len)
        } else if i == 0 {
            (opcode::RDMA_READ_RESPONSE_FIRST, pmtu)
        } else if i == n - 1 {
            (opcode::RDMA_READ_RESPONSE_LAST, len - (n - 1) * pmtu)
        } else {
            (opcode::RDMA_READ_RESPONSE_MIDDLE, pmtu)
        };
        assert_eq!(
            f.bth.opcode,
            op,
            "{w}: {} wanted, got {}",
            opcode_name(op),
            opcode_name(f.bth.opcode)
        );
        assert_eq!(
            f.bth.psn,
            psn.wrapping_add(i as u32) & 0xFF_FFFF,
            "{w}: PSN"
        );
        check_addressing(&w, f);
        if op == opcode::RDMA_READ_RESPONSE_MIDDLE {
            assert_eq!(f.aeth, None, "{w}: a MIDDLE carries no AETH");
        } else {
            let a = f.aeth.unwrap_or_else(|| panic!("{w}: no AETH"));
            assert_eq!(a.syndrome, ACK, "{w}: AETH syndrome {:#x}", a.syndrome);
        }
        assert_eq!(f.reth, None, "{w}: a response carries no RETH");
        assert_eq!(f.payload.len(), plen, "{w}: payload length");
        data.extend_from_slice(&f.payload);
    }
    let want = x.buf.to_vec(off, len);
    if let Some(i) = (0..len).find(|&i| data[i] != want[i]) {
        panic!(
            "{what}: byte {i} of the READ is {:#04x}, the region has {:#04x} (packet {}, offset {})",
            data[i],
            want[i],
            i / pmtu,
            i % pmtu
        );
    }
}

/// A READ of `len` bytes at `off` of `x`'s region at PSN `psn` is served
/// whole; returns the responses.
fn read_served(n: &Nic, x: &End, psn: u32, off: usize, len: usize, pmtu: usize) -> Vec<RoceFrame> {
    let what = format!("READ of {len} bytes at offset {off}, PSN {psn:#x}, PMTU {pmtu}");
    let reads = dma_reads(n);
    let resp = exchange(n, &read_of(x, psn, off, len as u32), packets(len, pmtu));
    check_read(&what, &resp, x, psn, off, len, pmtu);
    if len > 0 {
        assert!(
            dma_reads(n) > reads,
            "{what}: answered without reading host memory"
        );
    }
    resp
}

/// `resp` is one NAK, remote access error, at PSN `psn`, and nothing else.
fn check_nak(what: &str, resp: &[RoceFrame], psn: u32) {
    assert!(
        resp.iter().all(
            |f| !(opcode::RDMA_READ_RESPONSE_FIRST..=opcode::RDMA_READ_RESPONSE_ONLY)
                .contains(&f.bth.opcode)
        ),
        "{what}: READ RESPONSE sent: {:?}",
        names(resp)
    );
    assert_eq!(
        resp.len(),
        1,
        "{what}: one NAK wanted, the NIC sent {:?}",
        names(resp)
    );
    let f = &resp[0];
    assert_eq!(
        f.bth.opcode,
        opcode::ACKNOWLEDGE,
        "{what}: {}",
        opcode_name(f.bth.opcode)
    );
    check_addressing(what, f);
    let a = f.aeth.expect("an ACKNOWLEDGE has an AETH");
    assert_eq!(
        a.syndrome, NAK_REMOTE_ACCESS,
        "{what}: syndrome {:#x}, remote access error (0x62) wanted",
        a.syndrome
    );
    assert_eq!(f.bth.psn, psn & 0xFF_FFFF, "{what}: the NAK's PSN");
}

/// (a) and (b): READs of 0, 1, PMTU - 1, PMTU, PMTU + 1 and 3 PMTU + 17
/// bytes at path MTU 1024 (and one reaching the region's last byte), and
/// of PMTU and 3 PMTU + 17 bytes at 4096 across the PSN wrap, each
/// issued at the PSN the previous ones left the QP expecting, at both
/// data-path widths and odd offsets: every response as IB prescribes, the
/// region's bytes, and the expected PSN moved on by the responses.
#[test]
fn read_responses_carry_the_regions_bytes() {
    for w in WIDTHS {
        let n = nic(w, 0x5EAD + u64::from(w));
        if !serves_read(&n, "read_responses_carry_the_regions_bytes") {
            return;
        }
        for (mtu, rq_psn, cases) in [
            (
                Mtu::Mtu1024,
                0x12_3400u32,
                vec![
                    (0usize, 0usize),
                    (1, 5),
                    (1023, 1),
                    (1024, 0),
                    (1025, 3),
                    (3 * 1024 + 17, 7),
                    (1025, BUF_LEN - 1025),
                ],
            ),
            (
                Mtu::Mtu4096,
                0xFF_FFFE,
                vec![(4096, 2), (3 * 4096 + 17, 13)],
            ),
        ] {
            let pmtu = mtu.bytes() as usize;
            let x = responder(
                &n,
                &conn(mtu, read_access()),
                AccessFlags::LOCAL_WRITE | AccessFlags::REMOTE_READ,
                rq_psn,
                u64::from(w) * 7 + pmtu as u64,
            );
            let mut psn = rq_psn;
            for (len, off) in cases {
                read_served(&n, &x, psn, off, len, pmtu);
                psn = psn.wrapping_add(packets(len, pmtu) as u32) & 0xFF_FFFF;
                let st = x.qp.status().unwrap();
                assert_eq!(
                    st.rq_psn_now, psn,
                    "DATA_W={w} PMTU {pmtu}: expected PSN after a READ of {len} bytes"
                );
                assert_eq!(st.state, QpState::Rts);
            }
        }
    }
}

/// (b): after a READ answered by 4 packets the QP expects the request's
/// PSN + 4: a READ at that PSN is served, and one a PSN beyond what the QP
/// then expects is not.
#[test]
fn the_next_read_is_at_the_psn_after_the_responses() {
    let n = nic(64, 0xB0B);
    if !serves_read(&n, "the_next_read_is_at_the_psn_after_the_responses") {
        return;
    }
    let x = responder(
        &n,
        &conn(Mtu::Mtu1024, read_access()),
        AccessFlags::LOCAL_WRITE | AccessFlags::REMOTE_READ,
        0x00_7000,
        21,
    );
    let p = 0x00_7000;
    read_served(&n, &x, p, 100, 3 * 1024 + 17, 1024);
    assert_eq!(x.qp.status().unwrap().rq_psn_now, p + 4);
    read_served(&n, &x, p + 4, 4000, 100, 1024);
    assert_eq!(x.qp.status().unwrap().rq_psn_now, p + 5);
    // one PSN too far: not a READ the QP may answer
    let resp = exchange(&n, &read_of(&x, p + 6, 0, 100), 1);
    assert!(
        resp.iter().all(
            |f| !(opcode::RDMA_READ_RESPONSE_FIRST..=opcode::RDMA_READ_RESPONSE_ONLY)
                .contains(&f.bth.opcode)
        ),
        "a READ beyond the expected PSN was answered: {:?}",
        names(&resp)
    );
    assert_eq!(x.qp.status().unwrap().rq_psn_now, p + 5);
}

/// (c): each refused READ gets one NAK (remote access error) at its PSN
/// and no READ RESPONSE: a bad R_Key, a region registered without
/// REMOTE_READ, a QP without REMOTE_READ, and a READ one byte past the
/// region's end (at both widths). Each on a QP of its own (the NAK takes
/// the QP to ERR, as for a WRITE).
#[test]
fn refused_reads_get_one_remote_access_nak() {
    for w in WIDTHS {
        let n = nic(w, 0xC0DE + u64::from(w));
        if !serves_read(&n, "refused_reads_get_one_remote_access_nak") {
            return;
        }
        let rd = AccessFlags::LOCAL_WRITE | AccessFlags::REMOTE_READ;
        let no_rd = AccessFlags::LOCAL_WRITE | AccessFlags::REMOTE_WRITE;
        let cases: [(&str, ConnOpts, AccessFlags); 4] = [
            ("bad R_Key", conn(Mtu::Mtu1024, read_access()), rd),
            (
                "region without REMOTE_READ",
                conn(Mtu::Mtu1024, read_access()),
                no_rd,
            ),
            (
                "QP without REMOTE_READ",
                conn(Mtu::Mtu1024, AccessFlags::REMOTE_WRITE),
                rd,
            ),
            (
                "past the region's end",
                conn(Mtu::Mtu1024, read_access()),
                rd,
            ),
        ];
        for (i, (what, o, mr_access)) in cases.into_iter().enumerate() {
            let psn = 0x00_A000 + 0x100 * i as u32;
            let x = responder(&n, &o, mr_access, psn, 40 + i as u64);
            let req = match i {
                0 => read_request(x.qp.qp_num(), psn, x.mr.addr(), x.mr.rkey() ^ 0xFF, 100),
                3 => read_of(&x, psn, BUF_LEN - 1000, 1001),
                _ => read_of(&x, psn, 0, 100),
            };
            let what = format!("DATA_W={w}: {what}");
            let reads = dma_reads(&n);
            let before = n.ctx.query_port_counters().unwrap();
            let resp = exchange(&n, &req, 1);
            check_nak(&what, &resp, psn);
            assert_eq!(dma_reads(&n), reads, "{what}: the NIC read host memory");
            let after = n.ctx.query_port_counters().unwrap();
            assert_eq!(
                (after.rx_read_req, after.tx_read_resp),
                (before.rx_read_req, before.tx_read_resp),
                "{what}: a refused READ counted as served: {after:?}"
            );
            assert_eq!(after.rx_nak, before.rx_nak + 1, "{what}: rx_nak: {after:?}");
        }
    }
}

/// (d): a READ sent again (a duplicate: its PSN below the expected one) is
/// answered again at its own PSNs with the same bytes, and the QP's
/// expected PSN stays where it was: the next new READ is served.
#[test]
fn a_duplicate_read_is_answered_again() {
    for w in WIDTHS {
        let n = nic(w, 0xD0B + u64::from(w));
        if !serves_read(&n, "a_duplicate_read_is_answered_again") {
            return;
        }
        let x = responder(
            &n,
            &conn(Mtu::Mtu1024, read_access()),
            AccessFlags::LOCAL_WRITE | AccessFlags::REMOTE_READ,
            0x00_3300,
            77,
        );
        let p = 0x00_3300;
        let c0 = n.ctx.query_port_counters().unwrap();
        let first = read_served(&n, &x, p, 11, 3000, 1024); // 3 packets
        let c1 = n.ctx.query_port_counters().unwrap();
        assert_eq!(c1.rx_read_req, c0.rx_read_req + 1, "DATA_W={w}: {c1:?}");
        assert_eq!(c1.tx_read_resp, c0.tx_read_resp + 3, "DATA_W={w}: {c1:?}");
        assert_eq!(c1.rx_nak, c0.rx_nak, "DATA_W={w}: {c1:?}");
        let second = read_served(&n, &x, p + 3, 5000, 200, 1024); // 1 packet
        assert_eq!(x.qp.status().unwrap().rq_psn_now, p + 4);
        // both again, the older first
        for (psn, off, len, orig) in [(p, 11, 3000, &first), (p + 3, 5000, 200, &second)] {
            let again = read_served(&n, &x, psn, off, len, 1024);
            for (k, (g, o)) in again.iter().zip(orig.iter()).enumerate() {
                assert!(
                    g.payload == o.payload,
                    "DATA_W={w}: packet {k} of the answer to the duplicate READ at PSN {psn:#x} \
                     carries other bytes than the first answer's"
                );
            }
            let st = x.qp.status().unwrap();
            assert_eq!(
                (st.rq_psn_now, st.state),
                (p + 4, QpState::Rts),
                "DATA_W={w}: a duplicate READ moved the QP"
            );
        }
        // (the second READ, then both duplicates, are counted as served)
        let c2 = n.ctx.query_port_counters().unwrap();
        assert_eq!(c2.rx_read_req, c1.rx_read_req + 3, "DATA_W={w}: {c2:?}");
        assert_eq!(c2.tx_read_resp, c1.tx_read_resp + 5, "DATA_W={w}: {c2:?}");
        read_served(&n, &x, p + 4, 64, 1500, 1024);
        assert_eq!(x.qp.status().unwrap().rq_psn_now, p + 6);
    }
}

/// (e): a READ to an mp QP (which carries WRITE and WRITE_WITH_IMM only)
/// is dropped and counted in `rx_drop_transport`: nothing is sent, the
/// QP's expected PSN stays.
#[test]
fn a_read_to_an_mp_qp_is_dropped_and_counted() {
    let n = nic(64, 0xE0E);
    let o = ConnOpts {
        qp_type: QpType::Mp,
        ..conn(Mtu::Mtu1024, read_access())
    };
    let x = responder(
        &n,
        &o,
        AccessFlags::LOCAL_WRITE | AccessFlags::REMOTE_READ,
        0x00_0500,
        5,
    );
    assert_eq!(x.qp.qp_type(), QpType::Mp);
    let before = n.ctx.query_port_counters().unwrap();
    let resp = exchange(&n, &read_of(&x, 0x00_0500, 0, 100), 0);
    let after = n.ctx.query_port_counters().unwrap();
    assert!(
        resp.is_empty(),
        "the mp QP answered a READ: {:?}",
        names(&resp)
    );
    assert_eq!(
        after.rx_drop_transport,
        before.rx_drop_transport + 1,
        "{after:?}"
    );
    assert_eq!(after.rx_frames, before.rx_frames + 1, "{after:?}");
    assert_eq!(after.tx_frames, before.tx_frames, "{after:?}");
    assert_eq!(
        (after.rx_read_req, after.tx_read_resp),
        (before.rx_read_req, before.tx_read_resp),
        "{after:?}"
    );
    let st = x.qp.status().unwrap();
    assert_eq!((st.rq_psn_now, st.state), (0x00_0500, QpState::Rts));
}

/// An RDMA WRITE ONLY from [`PEER`] with AckReq, `data` at `va` of `rkey`.
fn write_request(qpn: u32, psn: u32, va: u64, rkey: u32, data: &[u8]) -> Vec<u8> {
    let mut f = decode(&read_request(qpn, psn, va, rkey, data.len() as u32))
        .expect("the READ request decodes");
    f.bth.opcode = opcode::RDMA_WRITE_ONLY;
    f.payload = data.to_vec();
    f.encode()
}

/// The wire order of a READ's responses and the ACKs after it: a WRITE
/// with AckReq that arrives right behind a 4-packet READ is acknowledged
/// only after the READ's last response left (an ACK of a later PSN ahead
/// of them tells the requester they were lost), and its bytes are placed.
/// Both requests go in back to back, so the WRITE is checked and ACKed
/// while the READ's payload is still being read from host memory.
#[test]
fn an_ack_never_overtakes_a_reads_responses() {
    for w in WIDTHS {
        let n = nic(w, 0xAC0 + u64::from(w));
        serves_read(&n, "an_ack_never_overtakes_a_reads_responses");
        let x = responder(
            &n,
            &conn(Mtu::Mtu1024, read_access()),
            AccessFlags::LOCAL_WRITE | AccessFlags::REMOTE_WRITE | AccessFlags::REMOTE_READ,
            0x00_2000,
            33,
        );
        let p = 0x00_2000;
        let len = 3 * 1024 + 17;
        let data: Vec<u8> = (0..64u32).map(|i| (i * 7 + 3) as u8).collect();
        let woff = 40_000;
        let read = read_of(&x, p, 0, len as u32);
        let write = write_request(
            x.qp.qp_num(),
            p + 4,
            x.mr.addr() + woff as u64,
            x.mr.rkey(),
            &data,
        );
        let fs = exchange_all(&n, &[&read, &write], 5);
        let what = format!(
            "DATA_W={w}: READ of {len} bytes at PSN {p:#x}, WRITE at {:#x}",
            p + 4
        );
        assert_eq!(fs.len(), 5, "{what}: the NIC sent {:?}", names(&fs));
        check_read(&what, &fs[..4], &x, p, 0, len, 1024);
        let ack = &fs[4];
        assert_eq!(
            ack.bth.opcode,
            opcode::ACKNOWLEDGE,
            "{what}: {:?}",
            names(&fs)
        );
        assert_eq!(ack.bth.psn, p + 4, "{what}: the WRITE's ACK");
        assert_eq!(
            ack.aeth.map(|a| a.syndrome),
            Some(ACK),
            "{what}: the ACK's syndrome"
        );
        assert_eq!(
            x.buf.to_vec(woff, data.len()),
            data,
            "{what}: the WRITE's bytes"
        );
        assert_eq!(
            x.qp.status().unwrap().rq_psn_now,
            p + 5,
            "{what}: expected PSN"
        );
    }
}

/// READ responses (FIRST, MIDDLE, LAST, ONLY) arriving at an rc QP answer
/// no READ of rnic's, which issues none: each is dropped and counted
/// (`rx_drop_psn`), nothing is sent (no NAK), no byte is placed, and the
/// QP stays in RTS expecting the same PSN, also when the response carries
/// the PSN it expects (which a request there would be executed at).
#[test]
fn a_read_response_for_no_read_is_dropped_and_counted() {
    let n = nic(64, 0xD0D);
    serves_read(&n, "a_read_response_for_no_read_is_dropped_and_counted");
    let x = responder(
        &n,
        &conn(Mtu::Mtu1024, read_access()),
        AccessFlags::LOCAL_WRITE | AccessFlags::REMOTE_WRITE | AccessFlags::REMOTE_READ,
        0x00_0900,
        9,
    );
    let p = 0x00_0900;
    let before_buf = x.buf.to_vec(0, BUF_LEN);
    for (i, op) in [
        opcode::RDMA_READ_RESPONSE_ONLY,
        opcode::RDMA_READ_RESPONSE_FIRST,
        opcode::RDMA_READ_RESPONSE_MIDDLE,
        opcode::RDMA_READ_RESPONSE_LAST,
    ]
    .into_iter()
    .enumerate()
    {
        let mut f = decode(&read_of(&x, p, 0, 64)).expect("the READ request decodes");
        f.bth.opcode = op;
        f.bth.ack_req = false;
        f.reth = None;
        f.aeth = (op != opcode::RDMA_READ_RESPONSE_MIDDLE).then_some(rnic_wire::Aeth {
            syndrome: ACK,
            msn: i as u32,
        });
        f.payload = vec![
            0xA5;
            if op == opcode::RDMA_READ_RESPONSE_LAST {
                100
            } else {
                1024
            }
        ];
        let before = n.ctx.query_port_counters().unwrap();
        let resp = exchange(&n, &f.encode(), 0);
        let after = n.ctx.query_port_counters().unwrap();
        let what = opcode_name(op);
        assert!(
            resp.is_empty(),
            "{what}: the QP answered: {:?}",
            names(&resp)
        );
        assert_eq!(
            after.rx_drop_psn,
            before.rx_drop_psn + 1,
            "{what}: {after:?}"
        );
        assert_eq!(after.rx_nak, before.rx_nak, "{what}: {after:?}");
        assert_eq!(after.rx_frames, before.rx_frames + 1, "{what}: {after:?}");
        let st = x.qp.status().unwrap();
        assert_eq!((st.rq_psn_now, st.state), (p, QpState::Rts), "{what}");
    }
    assert!(
        x.buf.to_vec(0, BUF_LEN) == before_buf,
        "a READ response changed the region"
    );
    // and the QP still serves what it expects
    read_served(&n, &x, p, 0, 100, 1024);
}

/// Bytes of a READ response frame of `payload` bytes on the wire (Ethernet
/// without FCS, IPv4, UDP, BTH, the AETH on FIRST/LAST/ONLY, pad, ICRC).
fn response_frame_bytes(payload: u64, aeth: bool) -> u64 {
    14 + 20 + 8 + 12 + if aeth { 4 } else { 0 } + payload + (4 - payload % 4) % 4 + 4
}

/// A measurement, not a check (run with `--ignored --nocapture`): the
/// READ responder's throughput. `K` READs of 64 KiB at PMTU 4096 go in
/// back to back; printed: the simulated cycles from the first request to
/// the last response, those from the first response to the last (the
/// steady state), the payload rate at 250 MHz, and that rate against the
/// best the wire allows for these frames (each a whole number of beats,
/// no gap: as `rnic bench write-bw` counts it); with the host of the
/// benchmarks (`RootComplexConfig::bench()`: fixed read latency, no
/// stalls, no reordering, as `rnic bench` runs) and with the tests'
/// default host (jittered latency, 10 % stalls on the completion stream,
/// reordered and split completions).
#[test]
#[ignore = "a measurement: cargo test --release -p rnic-tests --test read_responder -- --ignored --nocapture"]
fn read_serving_throughput() {
    const K: u32 = 16;
    const LEN: u32 = 64 * 1024;
    const PMTU: u32 = 4096;
    for (w, host) in WIDTHS.iter().flat_map(|&w| [(w, "bench"), (w, "default")]) {
        let rc = if host == "bench" {
            rnic_sim::RootComplexConfig::bench()
        } else {
            rnic_sim::RootComplexConfig::default()
        };
        println!("DATA_W={w}, host {host}:");
        let n = nic_with(w, 0x7B + u64::from(w), rc);
        serves_read(&n, "read_serving_throughput");
        let x = responder(
            &n,
            &conn(Mtu::Mtu4096, read_access()),
            AccessFlags::LOCAL_WRITE | AccessFlags::REMOTE_READ,
            0x00_1000,
            77,
        );
        let per = LEN / PMTU;
        n.world.set_window(usize::try_from(K * per + 64).unwrap());
        n.world.clear_window();
        let t0 = n.world.now();
        for k in 0..K {
            let req = read_of(&x, 0x00_1000 + k * per, 0, LEN);
            while !n.world.inject_frame(0, &req, false) {
                n.world.run(64);
            }
        }
        let want = (K * per) as usize;
        let mut waited = 0;
        while n.world.window().len() < want && waited < 50 * BUDGET {
            n.world.run(1024);
            waited += 1024;
        }
        let fs = n.world.window();
        assert_eq!(fs.len(), want, "DATA_W={w}: responses");
        for (k, chunk) in fs.chunks(per as usize).enumerate() {
            let resp: Vec<RoceFrame> = chunk.iter().map(|f| decode(&f.data).unwrap()).collect();
            let what = format!("DATA_W={w}: READ {k}");
            check_read(
                &what,
                &resp,
                &x,
                0x00_1000 + k as u32 * per,
                0,
                LEN as usize,
                PMTU as usize,
            );
        }
        let (first, last) = (fs[0].cycle, fs[fs.len() - 1].cycle);
        // idle cycles between frames: from one frame's last beat to the
        // next one's, less the next frame's beats
        let idle: Vec<u64> = fs
            .windows(2)
            .map(|p| {
                (p[1].cycle - p[0].cycle)
                    .saturating_sub((p[1].data.len() as u64).div_ceil(u64::from(w / 8)))
            })
            .collect();
        let mut sorted = idle.clone();
        sorted.sort_unstable();
        println!(
            "DATA_W={w}: idle cycles between response frames: min {}, median {}, max {}; the first 24: {:?}",
            sorted[0],
            sorted[sorted.len() / 2],
            sorted[sorted.len() - 1],
            &idle[..24.min(idle.len())]
        );
        let bytes = u64::from(K) * u64::from(LEN);
        // beats of one READ's responses at this width
        let bl = u64::from(w / 8);
        let beats: u64 = (0..per)
            .map(|i| response_frame_bytes(u64::from(PMTU), i == 0 || i + 1 == per).div_ceil(bl))
            .sum();
        let wire_max = f64::from(LEN) / (beats * bl) as f64;
        let total = last - t0;
        let steady = last - first;
        // a frame's cycle is that of its last beat: from the first
        // frame's to the last one's, every payload but the first left
        let gbps = |bytes: f64, cycles: u64| bytes * 8.0 * 250e6 / cycles as f64 / 1e9;
        let steady_bytes = bytes as f64 - f64::from(PMTU);
        let g = gbps(steady_bytes, steady);
        let line = f64::from(w) * 250e6 / 1e9;
        println!(
            "DATA_W={w}: {K} READs of {LEN} B at PMTU {PMTU}: {total} cycles from the first \
             request to the last response ({:.2} Gb/s at 250 MHz), {steady} from the first \
             response to the last: {g:.2} Gb/s, {:.1} % of the {line:.0} Gb/s link, {:.1} % of \
             the wire's best for these frames ({:.1} %)",
            gbps(bytes as f64, total),
            100.0 * g / line,
            100.0 * g / line / wire_max,
            100.0 * wire_max
        );
    }
}

/// The responder's share of a small READ's latency: 64-byte READs sent
/// one at a time, each after the previous answer; cycles from the
/// request's injection into the receive port to the READ RESPONSE ONLY's
/// last beat on the wire (the request's own beats in, the checks, the DMA
/// read of 64 bytes from the host, the response out), with the benchmarks'
/// host and the tests' default one. A measurement, not a test:
/// `cargo test --release -p rnic-tests --test read_responder read_turnaround -- --ignored --nocapture`
#[test]
#[ignore = "a measurement: cargo test --release -p rnic-tests --test read_responder read_turnaround -- --ignored --nocapture"]
fn read_turnaround_64b() {
    const N: u32 = 32;
    for (w, host) in WIDTHS.iter().flat_map(|&w| [(w, "bench"), (w, "default")]) {
        let rc = if host == "bench" {
            rnic_sim::RootComplexConfig::bench()
        } else {
            rnic_sim::RootComplexConfig::default()
        };
        let n = nic_with(w, 0x64 + u64::from(w), rc);
        serves_read(&n, "read_turnaround_64b");
        let x = responder(
            &n,
            &conn(Mtu::Mtu1024, read_access()),
            AccessFlags::LOCAL_WRITE | AccessFlags::REMOTE_READ,
            0x00_2000,
            9,
        );
        let mut lat = Vec::new();
        for k in 0..N {
            n.world.clear_window();
            let t0 = n.world.now();
            assert!(n.world.inject_frame(
                0,
                &read_of(&x, 0x00_2000 + k, 64 * k as usize, 64),
                false
            ));
            let mut waited = 0;
            while n.world.window().is_empty() && waited < BUDGET {
                n.world.run(16);
                waited += 16;
            }
            let fs = n.world.window();
            assert_eq!(fs.len(), 1, "DATA_W={w}: READ {k}: one response");
            let f = decode(&fs[0].data).unwrap();
            check_read(
                &format!("DATA_W={w}: READ {k}"),
                &[f],
                &x,
                0x00_2000 + k,
                64 * k as usize,
                64,
                1024,
            );
            lat.push(fs[0].cycle - t0);
        }
        lat.sort_unstable();
        println!(
            "DATA_W={w}, host {host}: 64 B READ, request in to response out: min {} median {} max {} cycles ({:.2} us median at 250 MHz)",
            lat[0],
            lat[lat.len() / 2],
            lat[lat.len() - 1],
            lat[lat.len() / 2] as f64 / 250.0
        );
    }
}

/// A duplicate READ (an old PSN) that may not be answered (a bad R_Key,
/// a QP without REMOTE_READ, more than 2^31 bytes, a payload) is dropped
/// and counted (`rx_drop_psn`), never NAKed: a NAK would move the QP to
/// ERR on a forged old frame (the fuzz campaign found that). The QP stays
/// in RTS, expecting the same PSN, and goes on serving.
#[test]
fn a_refused_duplicate_read_is_dropped_not_naked() {
    let n = nic(64, 0xD1D);
    serves_read(&n, "a_refused_duplicate_read_is_dropped_not_naked");
    for qp_read in [true, false] {
        let qp_access = if qp_read {
            read_access()
        } else {
            AccessFlags::REMOTE_WRITE
        };
        let x = responder(
            &n,
            &conn(Mtu::Mtu1024, qp_access),
            AccessFlags::LOCAL_WRITE | AccessFlags::REMOTE_WRITE | AccessFlags::REMOTE_READ,
            0x00_1000,
            13,
        );
        let p = 0x00_1000;
        // one executed request moves the QP past p
        let data = [0x5Au8; 32];
        let w = write_request(x.qp.qp_num(), p, x.mr.addr() + 512, x.mr.rkey(), &data);
        let resp = exchange(&n, &w, 1);
        assert_eq!(resp.len(), 1, "the WRITE's ACK: {:?}", names(&resp));
        let mut cases: Vec<(&str, Vec<u8>)> = Vec::new();
        if qp_read {
            cases.push((
                "a bad R_Key",
                read_request(x.qp.qp_num(), p, x.mr.addr(), x.mr.rkey() ^ 0xFF, 64),
            ));
            cases.push((
                "more than 2^31 bytes",
                read_request(x.qp.qp_num(), p, x.mr.addr(), x.mr.rkey(), 0x8000_0001),
            ));
            let mut f = decode(&read_of(&x, p, 0, 64)).unwrap();
            f.payload = vec![1, 2, 3, 4];
            cases.push(("a payload", f.encode()));
        } else {
            cases.push(("a QP without REMOTE_READ", read_of(&x, p, 0, 64)));
        }
        for (what, req) in cases {
            let before = n.ctx.query_port_counters().unwrap();
            let resp = exchange(&n, &req, 0);
            let after = n.ctx.query_port_counters().unwrap();
            assert!(
                resp.is_empty(),
                "duplicate READ with {what}: answered {:?}",
                names(&resp)
            );
            assert_eq!(
                after.rx_drop_psn,
                before.rx_drop_psn + 1,
                "{what}: {after:?}"
            );
            assert_eq!(after.rx_nak, before.rx_nak, "{what}: {after:?}");
            let st = x.qp.status().unwrap();
            assert_eq!((st.rq_psn_now, st.state), (p + 1, QpState::Rts), "{what}");
        }
        if qp_read {
            read_served(&n, &x, p + 1, 0, 100, 1024);
        }
    }
}

/// The hold on ACKs is only behind READs accepted before them. A READ at
/// p (4 packets) is accepted; a READ at p + 8 arrives out of sequence (the
/// QP expects p + 4), so a sequence NAK at p + 4 is made while the first
/// READ's responses are still queued; then the READ at p + 4 arrives. The
/// NAK leaves after the first READ's responses and before the second's.
/// (Found against Linux rxe: held behind every READ job, also the later
/// one, the NAK reached the requester after the responses to its own PSN,
/// with an old MSN.)
#[test]
fn a_nak_is_not_held_behind_later_reads() {
    for w in WIDTHS {
        let n = nic(w, 0xA4A + u64::from(w));
        serves_read(&n, "a_nak_is_not_held_behind_later_reads");
        let x = responder(
            &n,
            &conn(Mtu::Mtu1024, read_access()),
            AccessFlags::LOCAL_WRITE | AccessFlags::REMOTE_READ,
            0x00_3000,
            44,
        );
        let p = 0x00_3000;
        let len = 3 * 1024 + 17;
        let fs = exchange_all(
            &n,
            &[
                &read_of(&x, p, 0, len as u32),
                &read_of(&x, p + 8, 0, 64),
                &read_of(&x, p + 4, 100, len as u32),
            ],
            9,
        );
        let what = format!(
            "DATA_W={w}: READs at {p:#x}, {:#x} (out of sequence), {:#x}",
            p + 8,
            p + 4
        );
        assert_eq!(fs.len(), 9, "{what}: the NIC sent {:?}", names(&fs));
        check_read(&what, &fs[..4], &x, p, 0, len, 1024);
        let nak = &fs[4];
        assert_eq!(
            nak.bth.opcode,
            opcode::ACKNOWLEDGE,
            "{what}: {:?}",
            names(&fs)
        );
        assert_eq!(
            nak.bth.psn,
            p + 4,
            "{what}: the sequence NAK names the expected PSN"
        );
        assert_eq!(
            nak.aeth.map(|a| a.syndrome),
            Some(0x60),
            "{what}: a PSN sequence NAK"
        );
        check_read(&what, &fs[5..], &x, p + 4, 100, len, 1024);
        assert_eq!(
            x.qp.status().unwrap().rq_psn_now,
            p + 8,
            "{what}: expected PSN"
        );
    }
}

/// A fatal NAK that has to wait for room (here behind its own QP's ACK,
/// which waits for a place in read_reply's full ring of four 64 KiB
/// READs) moves its QP to ERR when it is queued, once; a RESET the host
/// writes while it waits stands, and the stale NAK is never sent. (The
/// fuzz campaign found the first version asserting the move to ERR every
/// cycle of the wait, which undid the host's RESET.)
#[test]
fn a_reset_while_a_nak_waits_stands() {
    for reset_early in [false, true] {
        let n = nic(64, 0x5E7);
        serves_read(&n, "a_reset_while_a_nak_waits_stands");
        let o = conn(Mtu::Mtu1024, read_access());
        let access =
            AccessFlags::LOCAL_WRITE | AccessFlags::REMOTE_WRITE | AccessFlags::REMOTE_READ;
        let mut x = responder(&n, &o, access, 0x00_4000, 1);
        let p = 0x00_4000;
        let len = 1u32 << 16;
        let per = len / 1024;
        let data = [7u8; 16];
        let reads: Vec<Vec<u8>> = (0..4).map(|i| read_of(&x, p + i * per, 0, len)).collect();
        let acked = write_request(x.qp.qp_num(), p + 4 * per, x.mr.addr(), x.mr.rkey(), &data);
        let bad = write_request(
            x.qp.qp_num(),
            p + 4 * per + 1,
            x.mr.addr(),
            x.mr.rkey() ^ 0x55,
            &data,
        );
        n.world.clear_window();
        for f in reads.iter().chain([&acked, &bad]) {
            assert!(n.world.inject_frame(0, f, false));
        }
        let what = if reset_early {
            "RESET while the NAK waits"
        } else {
            "RESET once in ERR"
        };
        if reset_early {
            n.world.run(1500);
            assert_eq!(
                x.qp.state().unwrap(),
                QpState::Rts,
                "{what}: the NAK still waits"
            );
        } else {
            let mut waited = 0;
            while x.qp.state().unwrap() != QpState::Err && waited < BUDGET {
                n.world.run(256);
                waited += 256;
            }
            assert_eq!(
                x.qp.state().unwrap(),
                QpState::Err,
                "{what}: the bad WRITE's NAK"
            );
        }
        x.qp.modify(
            &QpAttr {
                qp_state: QpState::Reset,
                ..Default::default()
            },
            QpAttrMask::STATE,
        )
        .unwrap_or_else(|e| panic!("{what}: modify to RESET: {e}"));
        n.world.run(4 * SETTLE);
        assert_eq!(
            x.qp.state().unwrap(),
            QpState::Reset,
            "{what}: the RESET stands"
        );
        let fs: Vec<RoceFrame> = n
            .world
            .window()
            .iter()
            .map(|f| decode(&f.data).unwrap())
            .collect();
        let naks = fs
            .iter()
            .filter(|f| f.aeth.is_some_and(|a| a.syndrome == NAK_REMOTE_ACCESS))
            .count();
        assert_eq!(
            naks,
            usize::from(!reset_early),
            "{what}: remote access NAKs sent: {:?}",
            names(&fs)
        );
        let reads = fs
            .iter()
            .filter(|f| {
                (opcode::RDMA_READ_RESPONSE_FIRST..=opcode::RDMA_READ_RESPONSE_ONLY)
                    .contains(&f.bth.opcode)
            })
            .count();
        assert_eq!(reads, 4 * per as usize, "{what}: the READs' responses");
    }
}

/// One QP's READ holds up no other QP's ACK: a WRITE with AckReq on QP y
/// right behind a 32 KiB READ on QP x is acknowledged while x's responses
/// are still going out, and a WRITE with AckReq on x after them still
/// waits for x's last response. (The first READ responder held every ACK
/// of the NIC behind every READ accepted before it, and with it the
/// responder: one peer's long READ stalled every QP's acknowledgements.)
#[test]
fn a_read_holds_up_no_other_qps_ack() {
    for w in WIDTHS {
        let n = nic(w, 0xB0B + u64::from(w));
        serves_read(&n, "a_read_holds_up_no_other_qps_ack");
        let o = conn(Mtu::Mtu1024, read_access());
        let access =
            AccessFlags::LOCAL_WRITE | AccessFlags::REMOTE_WRITE | AccessFlags::REMOTE_READ;
        let (px, py) = (0x00_5000, 0x00_9000);
        let x = responder(&n, &o, access, px, 5);
        let y = responder(&n, &o, access, py, 6);
        let len = 1usize << 15;
        let per = (len / 1024) as u32;
        let data: Vec<u8> = (0..32u32).map(|i| (i * 5 + 1) as u8).collect();
        let read = read_of(&x, px, 0, len as u32);
        let wy = write_request(y.qp.qp_num(), py, y.mr.addr() + 100, y.mr.rkey(), &data);
        let wx = write_request(
            x.qp.qp_num(),
            px + per,
            x.mr.addr() + 40_000,
            x.mr.rkey(),
            &data,
        );
        let fs = exchange_all(&n, &[&read, &wy, &wx], per as usize + 2);
        let what = format!("DATA_W={w}: READ of {len} bytes on x at {px:#x}, WRITE on y at {py:#x}, WRITE on x at {:#x}", px + per);
        assert_eq!(
            fs.len(),
            per as usize + 2,
            "{what}: the NIC sent {:?}",
            names(&fs)
        );
        let is_ack = |f: &RoceFrame, psn: u32| {
            f.bth.opcode == opcode::ACKNOWLEDGE
                && f.bth.psn == psn
                && f.aeth.is_some_and(|a| a.syndrome == ACK)
        };
        let ack_y = fs
            .iter()
            .position(|f| is_ack(f, py))
            .unwrap_or_else(|| panic!("{what}: no ACK of y's WRITE: {:?}", names(&fs)));
        let ack_x = fs
            .iter()
            .position(|f| is_ack(f, px + per))
            .unwrap_or_else(|| panic!("{what}: no ACK of x's WRITE: {:?}", names(&fs)));
        let responses: Vec<RoceFrame> = fs
            .iter()
            .filter(|f| f.bth.opcode != opcode::ACKNOWLEDGE)
            .cloned()
            .collect();
        check_read(&what, &responses, &x, px, 0, len, 1024);
        let last = fs
            .iter()
            .rposition(|f| f.bth.opcode == opcode::RDMA_READ_RESPONSE_LAST)
            .expect("checked above");
        assert!(
            ack_y < last / 2,
            "{what}: y's ACK is frame {ack_y}, x's last response frame {last}: held behind x's READ"
        );
        assert!(
            ack_x > last,
            "{what}: x's ACK (frame {ack_x}) overtook its READ's last response (frame {last})"
        );
        assert_eq!(y.buf.to_vec(100, data.len()), data, "{what}: y's bytes");
        assert_eq!(x.buf.to_vec(40_000, data.len()), data, "{what}: x's bytes");
    }
}

/// A READ sees the WRITEs the same QP received before it: a WRITE of
/// 1,024 new bytes and a READ of the same bytes, injected back to back,
/// eight times at different offsets; each READ RESPONSE carries the new
/// bytes. (The fuzz campaign found the READ's payload reads overtaking
/// the write engine's later write packets of the WRITE before it: the
/// answer carried old bytes from a 256-byte boundary on. The responder
/// now hands a READ over only once every earlier payload write has been
/// issued.)
#[test]
fn a_read_sees_the_write_before_it() {
    for w in WIDTHS {
        let n = nic(w, 0x5EE + u64::from(w));
        serves_read(&n, "a_read_sees_the_write_before_it");
        let x = responder(
            &n,
            &conn(Mtu::Mtu1024, read_access()),
            AccessFlags::LOCAL_WRITE | AccessFlags::REMOTE_WRITE | AccessFlags::REMOTE_READ,
            0x00_6000,
            3,
        );
        for k in 0..8u32 {
            let p = 0x00_6000 + 2 * k;
            let off = 1000 + 5000 * k as usize;
            let data: Vec<u8> = (0..1024u32).map(|i| (i * 13 + k * 7 + 1) as u8).collect();
            let write = write_request(
                x.qp.qp_num(),
                p,
                x.mr.addr() + off as u64,
                x.mr.rkey(),
                &data,
            );
            let read = read_of(&x, p + 1, off, 1024);
            let fs = exchange_all(&n, &[&write, &read], 2);
            let what = format!(
                "DATA_W={w}: WRITE at {p:#x}, READ of its bytes at {:#x}",
                p + 1
            );
            let resp = fs
                .iter()
                .find(|f| f.bth.opcode == opcode::RDMA_READ_RESPONSE_ONLY)
                .unwrap_or_else(|| panic!("{what}: no response: {:?}", names(&fs)));
            if let Some(i) = (0..1024).find(|&i| resp.payload.get(i) != Some(&data[i])) {
                panic!(
                    "{what}: byte {i} of the answer is {:?}, the WRITE before it wrote {:#04x}",
                    resp.payload.get(i),
                    data[i]
                );
            }
        }
    }
}

/// A QP's `max_dest_rd_atomic` bounds the READs it holds: with 2, three
/// READs of 16 KiB injected back to back get the first two served and the
/// third, arriving while both are still being answered, a NAK invalid
/// request at its PSN (after the responses before it), as rxe does; the
/// QP goes to ERR and `rx_rd_over` counts it. With 4, the same three are
/// all served. With 0, a READ is NAKed without a byte read from the host.
#[test]
fn reads_beyond_max_dest_rd_atomic_get_an_invalid_request_nak() {
    const NAK_INVALID_REQUEST: u8 = 0x61;
    const LEN: usize = 16384;
    for (limit, served) in [(2u8, 2usize), (4, 3), (0, 0)] {
        let n = nic(64, 0x11D + u64::from(limit));
        serves_read(
            &n,
            "reads_beyond_max_dest_rd_atomic_get_an_invalid_request_nak",
        );
        let o = ConnOpts {
            max_dest_rd_atomic: Some(limit),
            ..conn(Mtu::Mtu1024, read_access())
        };
        let p = 0x00_5000;
        let x = responder(
            &n,
            &o,
            AccessFlags::LOCAL_WRITE | AccessFlags::REMOTE_READ,
            p,
            90,
        );
        assert_eq!(x.qp.query_qp().unwrap().max_dest_rd_atomic, limit);
        let what = format!("max_dest_rd_atomic {limit}");
        let reqs: Vec<Vec<u8>> = (0..3)
            .map(|i| read_of(&x, p + 16 * i, 4096 * i as usize, LEN as u32))
            .collect();
        let reqs: Vec<&[u8]> = reqs.iter().map(|r| r.as_slice()).collect();
        let reads = dma_reads(&n);
        let want = if served == 3 { 48 } else { 16 * served + 1 };
        let resp = exchange_all(&n, &reqs[..if limit == 0 { 1 } else { 3 }], want);
        let c = n.ctx.query_port_counters().unwrap();
        for f in &resp {
            check_addressing(&what, f);
        }
        let data: Vec<&RoceFrame> = resp
            .iter()
            .filter(|f| f.bth.opcode != opcode::ACKNOWLEDGE)
            .collect();
        assert_eq!(
            data.len(),
            16 * served,
            "{what}: responses {:?}",
            names(&resp)
        );
        if served == 3 {
            assert_eq!(resp.len(), 48, "{what}: {:?}", names(&resp));
            assert_eq!(c.rx_rd_over, 0, "{what}: {c:?}");
            assert_eq!(x.qp.state().unwrap(), QpState::Rts, "{what}");
            continue;
        }
        let last = resp.last().unwrap();
        assert_eq!(
            last.bth.opcode,
            opcode::ACKNOWLEDGE,
            "{what}: the NAK comes after the responses: {:?}",
            names(&resp)
        );
        let a = last.aeth.expect("an ACKNOWLEDGE has an AETH");
        assert_eq!(
            (a.syndrome, last.bth.psn),
            (NAK_INVALID_REQUEST, p + 16 * served as u32),
            "{what}: NAK invalid request at the refused READ's PSN wanted: {:?}",
            names(&resp)
        );
        assert_eq!(resp.len(), 16 * served + 1, "{what}: {:?}", names(&resp));
        assert_eq!(c.rx_rd_over, 1, "{what}: {c:?}");
        assert_eq!(x.qp.state().unwrap(), QpState::Err, "{what}");
        if limit == 0 {
            assert_eq!(dma_reads(&n), reads, "{what}: the NIC read host memory");
        }
    }
}

/// A duplicate READ is not held to `max_dest_rd_atomic` (the requester may
/// already have the first answer while the duplicate's job still waits):
/// with 1, a READ and its duplicate injected back to back are both
/// answered in full, nothing is NAKed, and the next new READ is served.
#[test]
fn a_duplicate_read_is_not_held_to_max_dest_rd_atomic() {
    const LEN: usize = 8192;
    let n = nic(64, 0x11E);
    serves_read(&n, "a_duplicate_read_is_not_held_to_max_dest_rd_atomic");
    let o = ConnOpts {
        max_dest_rd_atomic: Some(1),
        ..conn(Mtu::Mtu1024, read_access())
    };
    let p = 0x00_6000;
    let x = responder(
        &n,
        &o,
        AccessFlags::LOCAL_WRITE | AccessFlags::REMOTE_READ,
        p,
        91,
    );
    let req = read_of(&x, p, 0, LEN as u32);
    let resp = exchange_all(&n, &[&req, &req], 16);
    assert_eq!(resp.len(), 16, "{:?}", names(&resp));
    check_read("the READ", &resp[..8], &x, p, 0, LEN, 1024);
    check_read("its duplicate", &resp[8..], &x, p, 0, LEN, 1024);
    let c = n.ctx.query_port_counters().unwrap();
    assert_eq!((c.rx_rd_over, c.rx_nak), (0, 0), "{c:?}");
    read_served(&n, &x, p + 8, 100, 3000, 1024);
    assert_eq!(x.qp.state().unwrap(), QpState::Rts);
}
