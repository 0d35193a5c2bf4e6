//! The QP directory (DESIGN.md section 6, step 2): QP numbers on the wire
//! and in completions are not the slots that hold the QPs' state. The
//! driver binds a number to a slot when it creates a QP and unbinds it when
//! it destroys it; the NIC translates a packet's number to its slot and a
//! CQE's slot to its number. A packet for a number no slot holds must be
//! dropped, whatever slot its QP had; a bad bind command must be refused
//! and change nothing.

use rnic_driver::Nic;
use rnic_sim::SimDevice;
use rnic_tests::roce::*;
use rnic_tests::WIDTHS;
use rnic_verbs::*;
use rnic_wire::opcode;

/// The simulated NIC's directory: 16-bit QP numbers.
const QPN_BITS: u32 = 16;

fn mp_opts() -> ConnOpts {
    ConnOpts {
        qp_type: QpType::Mp,
        ..ConnOpts::default()
    }
}

#[test]
fn qp_numbers_are_not_slots_and_name_the_qp_on_the_wire_and_in_cqes() {
    for w in WIDTHS {
        let p = pair(w, 31, "ideal");
        assert_eq!(p.b.nic().id().qpn_bits, QPN_BITS, "DATA_W={w}");
        p.world.set_window(4096);
        let (mut a, mut b) = connect(&p, &ConnOpts::default());
        for (e, side) in [(&a, "A"), (&b, "B")] {
            let (n, s) = (e.qp.qp_num(), e.qp.slot());
            assert!(
                n >= 2 && n != u32::from(s),
                "DATA_W={w} {side}: QP number {n} on slot {s}"
            );
            assert!(n < 1 << QPN_BITS);
        }
        assert_eq!(write_imm_messages(&p, &mut a, &mut b, 3, 2, 3000, 31), 0);
        // the wire names the peer's number: every frame A sent to B is for
        // B's QP number, and the other way round
        for (src, to) in [(0, b.qp.qp_num()), (1, a.qp.qp_num())] {
            let sent = sent_by(&p, src);
            assert!(!sent.is_empty(), "DATA_W={w}: NIC {src} sent nothing");
            assert!(
                sent.iter().all(|f| f.bth.dest_qp == to),
                "DATA_W={w}: NIC {src} sent a frame not for QP {to}"
            );
        }
        // a completion names the QP by number (B's receive CQE, A's send CQE)
        post_write_imm(&mut a, &mut b, 64, 5, 7, 8);
        let wb = wait_wc(p.b.device(), &b.cq, 1, 200_000);
        let wa = wait_wc(p.a.device(), &a.cq, 1, 200_000);
        assert_eq!((wb[0].status, wb[0].wr_id), (WcStatus::Success, 7));
        assert_eq!((wa[0].status, wa[0].wr_id), (WcStatus::Success, 8));
        assert_eq!(wb[0].qp_num, b.qp.qp_num(), "DATA_W={w}: B's CQE");
        assert_eq!(wa[0].qp_num, a.qp.qp_num(), "DATA_W={w}: A's CQE");
        assert_eq!(wb[0].src_qp, a.qp.qp_num(), "DATA_W={w}: B's CQE src_qp");
    }
}

/// An MP PROBE for QP number `qpn` from NIC a to NIC b, on UDP port
/// `sport` (an mp QP answers one with a reply, and nothing else).
fn probe(p: &Pair, qpn: u32, psn: u32, sport: u16) {
    p.world
        .send_frame(0, &frame_sport(0, sport, mp_probe(qpn, psn, vec![])));
    idle_b(p, 400);
}

/// How many probe replies NIC b sent since the window was cleared.
fn replies(p: &Pair) -> usize {
    sent_by(p, 1)
        .iter()
        .filter(|f| f.bth.opcode == opcode::MP_PROBE_REPLY)
        .count()
}

#[test]
fn a_packet_for_a_destroyed_qps_number_never_reaches_the_slots_next_qp() {
    let p = pair(64, 33, "ideal");
    let (old_qpn, old_slot) = {
        let (_a, b) = connect(&p, &mp_opts());
        (b.qp.qp_num(), b.qp.slot())
    };
    // the slot is used again, under a new number
    let (_a, b) = connect(&p, &mp_opts());
    assert_eq!(b.qp.slot(), old_slot, "the slot was not used again");
    assert_ne!(b.qp.qp_num(), old_qpn, "the number was used again at once");
    let psn = b.qp.status().unwrap().rq_psn_now;

    p.world.set_window(64);
    let before = p.b.query_port_counters().unwrap();
    probe(&p, b.qp.qp_num(), psn, 0xC200);
    assert_eq!(replies(&p), 1, "the live QP's number must be answered");

    // the old number, the slot's own index, and a number beyond the
    // directory: none is a QP now
    p.world.clear_window();
    p.world.set_window(64);
    let mid = p.b.query_port_counters().unwrap();
    let stale = [old_qpn, u32::from(b.qp.slot()), 1 << QPN_BITS];
    for (i, &n) in stale.iter().enumerate() {
        if n != b.qp.qp_num() {
            probe(&p, n, psn, 0xC201 + i as u16);
        }
    }
    let sent = stale.iter().filter(|&&n| n != b.qp.qp_num()).count() as u32;
    let after = p.b.query_port_counters().unwrap();
    assert_eq!(replies(&p), 0, "a number no slot holds was answered");
    assert_eq!(after.rx_drop_qp, mid.rx_drop_qp + sent, "{after:?}");
    assert_eq!(mid.rx_drop_qp, before.rx_drop_qp, "{mid:?}");
    // and the QP is untouched: same expected PSN, still answering
    assert_eq!(b.qp.status().unwrap().rq_psn_now, psn);
    p.world.clear_window();
    p.world.set_window(64);
    probe(&p, b.qp.qp_num(), psn, 0xC210);
    assert_eq!(replies(&p), 1);
}

/// Slot `slot`'s binding and the last command's result: (err, qpn, bound).
fn bind_cmd(nic: &Nic<SimDevice>, slot: u16, qpn: u32, op: u8) -> (u8, u32, bool) {
    let io = nic.io();
    let qp = io.csr().qp();
    qp.qp_sel().try_write(|r| r.set_qpn(slot)).unwrap();
    qp.qp_bind()
        .try_write(|r| {
            r.set_qpn(qpn);
            r.set_op(op);
        })
        .unwrap();
    let st = qp.qp_bind_status().try_read().unwrap();
    (st.err(), st.qpn(), st.bound())
}

/// Slot `slot`'s binding: (qpn, bound).
fn binding(nic: &Nic<SimDevice>, slot: u16) -> (u32, bool) {
    let io = nic.io();
    let qp = io.csr().qp();
    qp.qp_sel().try_write(|r| r.set_qpn(slot)).unwrap();
    let st = qp.qp_bind_status().try_read().unwrap();
    (st.qpn(), st.bound())
}

#[test]
fn a_bad_bind_command_is_refused_and_changes_nothing() {
    let p = pair(64, 35, "ideal");
    let (mut a, mut b) = connect(&p, &ConnOpts::default());
    let nic = p.b.nic();
    let slots = nic.id().num_queues as u16;
    let (s, n) = (b.qp.slot(), b.qp.qp_num());
    let free = slots - 1;
    assert_ne!(free, s);
    let fresh = (n + 1000) % (1 << QPN_BITS);

    // slot s is bound (to n): bind refused, code 4
    assert_eq!(bind_cmd(nic, s, fresh, 1), (4, n, true));
    // number n is bound elsewhere: code 3, the free slot stays free
    assert_eq!(bind_cmd(nic, free, n, 1).0, 3);
    // beyond the directory: 2; beyond the slots: 5; a bad op: 6
    assert_eq!(bind_cmd(nic, free, 1 << QPN_BITS, 1).0, 2);
    assert_eq!(bind_cmd(nic, slots, fresh, 1).0, 5);
    assert_eq!(bind_cmd(nic, free, fresh, 3).0, 6);
    // unbinding a free slot: 4
    let (e, _, bound) = bind_cmd(nic, free, 0, 2);
    assert_eq!((e, bound), (4, false));
    // nothing moved: s still holds n, the free slot nothing, and traffic
    // still reaches n
    assert_eq!(binding(nic, s), (n, true));
    assert!(!binding(nic, free).1);
    assert_eq!(write_imm_messages(&p, &mut a, &mut b, 3, 1, 2000, 35), 0);

    // a good bind and unbind of the free slot
    assert_eq!(bind_cmd(nic, free, fresh, 1), (0, fresh, true));
    assert_eq!(bind_cmd(nic, free, fresh, 2), (0, fresh, false));
}

/// Doorbells name the QP by number (`qp_block.sq_dbn`, `rq_dbn`): the NIC
/// finds the slot in its directory. The driver rings them for every QP, so
/// with its number unbound behind the driver's back a posted work request
/// is refused (`err_status` code 14, the number in `qn`), nothing is sent
/// and the receive queue learns nothing; bound again, the next doorbell
/// (the producer index covers both WQEs) sends both, and the receive WQEs
/// posted meanwhile are there for them.
#[test]
fn doorbells_name_the_qp_by_number_and_an_unbound_number_is_refused() {
    for w in WIDTHS {
        let p = pair(w, 37, "ideal");
        let (mut a, mut b) = connect(&p, &ConnOpts::default());
        let caps = p.a.nic().id().caps;
        assert_ne!(caps & rnic_driver::CAP_DOORBELL_BY_QPN, 0, "DATA_W={w}");
        let (na, sa) = (a.qp.qp_num(), a.qp.slot());
        let (nb, sb) = (b.qp.qp_num(), b.qp.slot());

        // A's number unbound: its doorbell is refused, nothing goes out
        assert_eq!(bind_cmd(p.a.nic(), sa, 0, 2), (0, na, false));
        let e0 = p.a.nic().error_status().unwrap();
        let tx0 = p.a.query_port_counters().unwrap().tx_frames;
        post_write(&mut a, &b, 1, 0, 0, 256);
        idle_a(&p, 2_000);
        let e1 = p.a.nic().error_status().unwrap();
        assert_eq!((e1.code, u32::from(e1.qn)), (14, na), "DATA_W={w}: {e1:?}");
        assert_eq!(e1.count, e0.count + 1, "DATA_W={w}");
        assert_eq!(
            p.a.query_port_counters().unwrap().tx_frames,
            tx0,
            "DATA_W={w}: sent"
        );

        // B's number unbound: a receive doorbell is refused the same way
        assert_eq!(bind_cmd(p.b.nic(), sb, 0, 2), (0, nb, false));
        b.qp.post_recv(&RecvWr {
            wr_id: 9,
            sg_list: &[],
        })
        .unwrap();
        // (a doorbell by number waits in the NIC's doorbell table for its
        // lookup: the host's MMIO goes on)
        p.world.run(200);
        let eb = p.b.nic().error_status().unwrap();
        assert_eq!((eb.code, u32::from(eb.qn)), (14, nb), "DATA_W={w}: {eb:?}");

        // bound again: the next doorbells carry both WQEs
        assert_eq!(bind_cmd(p.a.nic(), sa, na, 1), (0, na, true));
        assert_eq!(bind_cmd(p.b.nic(), sb, nb, 1), (0, nb, true));
        post_write_imm(&mut a, &mut b, 64, 3, 10, 2);
        let wa = wait_wc(p.a.device(), &a.cq, 2, 200_000);
        let ids: Vec<u64> = wa.iter().map(|c| c.wr_id).collect();
        assert_eq!(ids, [1, 2], "DATA_W={w}: {wa:?}");
        assert!(wa.iter().all(|c| c.status == WcStatus::Success), "{wa:?}");
        // the WRITE_WITH_IMM took the receive WQE posted while unbound first
        let wb = wait_wc(p.b.device(), &b.cq, 1, 200_000);
        assert_eq!(
            (wb[0].wr_id, wb[0].status),
            (9, WcStatus::Success),
            "DATA_W={w}"
        );
    }
}

fn idle_a(p: &Pair, n: u32) {
    for _ in 0..n {
        rnic_device::Device::idle(p.a.device());
    }
}
