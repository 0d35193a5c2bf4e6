//! RoCEv2 Reliable Connection between two simulated NICs: WRITE,
//! WRITE_WITH_IMM, SEND/RECV, ACKs, and the responder's completion barrier.

use rnic_tests::roce::*;
use rnic_tests::{check_pattern, fill_pattern, WIDTHS};
use rnic_verbs::*;

const BUDGET: u64 = 200_000;

#[test]
fn write_write_write_with_imm() {
    for w in WIDTHS {
        let p = pair(w, 1, "ideal");
        let o = ConnOpts::default();
        let (mut a, b) = connect(&p, &o);
        fill_pattern(&a.buf, 0, 3000, 7);
        let sges = [
            [a.mr.sge(0, 1000).unwrap()],
            [a.mr.sge(1000, 1500).unwrap()],
            [a.mr.sge(2500, 500).unwrap()],
        ];
        let at = |off: usize| Some(b.mr.rdma_info(off).unwrap());
        a.qp.post_send_list(&[
            SendWr {
                wr_id: 1,
                opcode: WrOpcode::RdmaWrite,
                send_flags: SendFlags::empty(),
                sg_list: &sges[0],
                imm_data: None,
                rdma: at(0),
            },
            SendWr {
                wr_id: 2,
                opcode: WrOpcode::RdmaWrite,
                send_flags: SendFlags::empty(),
                sg_list: &sges[1],
                imm_data: None,
                rdma: at(1000),
            },
            SendWr {
                wr_id: 3,
                opcode: WrOpcode::RdmaWriteWithImm,
                send_flags: SendFlags::SIGNALED,
                sg_list: &sges[2],
                imm_data: Some(0xdead_beef_u32.to_be()),
                rdma: at(2500),
            },
        ])
        .unwrap();
        // the responder needs a receive WQE for the immediate
        let mut bqp = b.qp;
        bqp.post_recv(&RecvWr {
            wr_id: 77,
            sg_list: &[],
        })
        .unwrap();
        let wcs = wait_wc(p.b.device(), &b.cq, 1, BUDGET);
        assert_eq!(wcs.len(), 1, "DATA_W={w}: no receive completion");
        let wc = wcs[0];
        assert_eq!(wc.status, WcStatus::Success, "{wc:?}");
        assert_eq!(wc.opcode, WcOpcode::RecvRdmaWithImm);
        assert_eq!(wc.wr_id, 77);
        assert_eq!(wc.byte_len, 500);
        assert_eq!(wc.imm_data.map(u32::from_be), Some(0xdead_beef));
        assert_eq!(
            check_pattern(&b.buf, 0, 3000, 7),
            None,
            "data must be complete at the CQE"
        );
        let swc = wait_wc(p.a.device(), &a.cq, 1, BUDGET);
        assert_eq!(swc.len(), 1);
        assert_eq!(swc[0].wr_id, 3);
        assert_eq!(swc[0].status, WcStatus::Success);
        assert!(p.a.device().iommu_faults().is_empty() && p.b.device().iommu_faults().is_empty());
    }
}

#[test]
fn frames_really_cross_the_wire() {
    let p = pair(64, 2, "ideal");
    let (mut a, mut b) = connect(&p, &ConnOpts::default());
    fill_pattern(&a.buf, 0, 5000, 3);
    b.qp.post_recv(&RecvWr {
        wr_id: 5,
        sg_list: &[],
    })
    .unwrap();
    let sge = [a.mr.sge(0, 5000).unwrap()];
    a.qp.post_send(&SendWr {
        wr_id: 9,
        opcode: WrOpcode::RdmaWriteWithImm,
        send_flags: SendFlags::SIGNALED,
        sg_list: &sge,
        imm_data: Some(1u32.to_be()),
        rdma: Some(b.mr.rdma_info(100).unwrap()),
    })
    .unwrap();
    let wcs = wait_wc(p.b.device(), &b.cq, 1, BUDGET);
    assert_eq!(wcs.len(), 1);
    assert_eq!(check_pattern(&b.buf, 100, 5000, 3), None);
    let ca = p.a.query_port_counters().unwrap();
    let cb = p.b.query_port_counters().unwrap();
    eprintln!("a: {ca:?}\nb: {cb:?}\nfabric: {:?}", p.world.fabric_stats());
    // 5000 B at PMTU 1024: 5 packets one way, at least one ACK back
    assert!(ca.tx_frames >= 5 && cb.rx_frames >= 5, "{ca:?} {cb:?}");
    assert!(cb.tx_frames >= 1 && ca.rx_frames >= 1);
}

/// How many messages a broken barrier may take to show.
const BREAK_WITHIN: usize = 40;

#[test]
fn barrier_holds_and_each_switch_is_caught() {
    for w in WIDTHS {
        for (brk, flush) in [
            (None, false),
            (None, true),
            (Some(Break::CqeRo), false),
            (Some(Break::CqeRo), true),
            (Some(Break::EarlyCqe), false),
            (Some(Break::Bypass), false),
        ] {
            let p = pair(w, 40, "ideal");
            let o = ConnOpts {
                mtu: Mtu::Mtu1024,
                buf_len: 1 << 15,
                ..ConnOpts::default()
            };
            let (mut a, mut b) = connect(&p, &o);
            set_break(&p.b, brk, flush);
            let n = if brk.is_some() { BREAK_WITHIN } else { 40 };
            let v = write_imm_messages(&p, &mut a, &mut b, n, 2, 3000, 40);
            eprintln!("DATA_W={w} break={brk:?} flush={flush}: {v} violations in {n} messages");
            if brk.is_some() {
                assert!(
                    v > 0,
                    "DATA_W={w}: {brk:?} (flush={flush}) went unnoticed in {n} messages"
                );
            } else {
                assert_eq!(v, 0, "DATA_W={w} flush={flush}: the barrier must hold");
            }
        }
    }
}
