//! BAR0 through the generated register map: discovery, the ID block, MSI.

use rnic_device::{Device, IrqWait};
use rnic_driver::CopyWr;
use rnic_tests::*;
use rnic_verbs::{AccessFlags, Context, VerbsError};

#[test]
fn discovery_and_id_block() {
    for w in WIDTHS {
        let nic = sim(w, 20);
        let blocks = rnic_regs::discover(nic.device()).unwrap();
        let types: Vec<u32> = blocks.iter().map(|b| b.block_type).collect();
        assert_eq!(
            types,
            vec![
                0x5249_0001,
                0x5249_0002,
                0x5249_0003,
                0x5249_0004,
                0x5249_0005,
                0x5249_0006,
                0x5249_0007
            ]
        );
        assert!(
            blocks.iter().all(|b| b.name.is_some()),
            "every block of this build is known: {blocks:?}"
        );
        let id = nic.id();
        assert_eq!(id.data_w, w);
        assert!(id.num_queues >= 2);
        // the shared pools follow the QP count: 16 rings, 8 mp deferred
        // completions, 16 MACs at the simulator's 64 QPs
        assert_eq!(id.num_queues, 64);
        assert_eq!((id.ost_rings, id.mp_pend, id.dmacs), (16, 8, 16));
        // the MR table (rnic_core NUM_MR_Q)
        assert_eq!(id.mrs, 64);
        assert_eq!(id.verbs & 1, 1);
        // Registers have no read side effects: reading twice is harmless.
        assert_eq!(
            nic.device().read32(0x0C).unwrap(),
            nic.device().read32(0x0C).unwrap()
        );
    }
}

/// The MR table's size comes from the ID block (`id.mrs`): the verbs layer
/// reports it as `max_mr`, and refuses one registration more itself with
/// `MrTableFull` (the NIC sees no command), where it used to try the
/// command and have the NIC refuse it (`DriverError::Refused`).
#[test]
fn a_registration_beyond_the_mr_table_is_refused_by_verbs() {
    let ctx = Context::from_nic(sim(64, 22));
    let n = ctx.nic().id().mrs;
    assert_eq!(n, 64);
    assert_eq!(ctx.query_device().unwrap().max_mr, n);
    let pd = ctx.alloc_pd().unwrap();
    let buf = ctx.alloc_dma(4096).unwrap();
    let mrs: Vec<_> = (0..n)
        .map(|i| {
            ctx.reg_mr(&pd, &buf, 0, 4096, AccessFlags::LOCAL_WRITE)
                .unwrap_or_else(|e| panic!("MR {i} of {n}: {e}"))
        })
        .collect();
    assert_eq!(mrs.last().unwrap().lkey() >> 8, n - 1, "the last index");
    let errors = ctx.nic().error_status().unwrap().count;
    let e = ctx
        .reg_mr(&pd, &buf, 0, 4096, AccessFlags::LOCAL_WRITE)
        .unwrap_err();
    assert!(matches!(e, VerbsError::MrTableFull(64)), "{e}");
    assert_eq!(
        ctx.nic().error_status().unwrap().count,
        errors,
        "the NIC saw no refused command"
    );
    // a freed entry is the NIC's again
    drop(mrs);
    assert_eq!(ctx.mr_count(), 0);
    ctx.reg_mr(&pd, &buf, 0, 4096, AccessFlags::LOCAL_WRITE)
        .unwrap();
}

#[test]
fn msi_on_armed_cq_only() {
    for w in WIDTHS {
        let nic = sim(w, 21);
        let mut cq = nic.create_cq(8).unwrap();
        let mut sq = nic.create_sq(8, &mut cq).unwrap();
        let src = nic.device().alloc_dma(4096).unwrap();
        let dst = nic.device().alloc_dma(4096).unwrap();
        let wr = CopyWr {
            wr_id: 1,
            src: src.bus_addr(),
            dst: dst.bus_addr(),
            length: 64,
        };
        // Not armed: no interrupt.
        nic.post_copy(&mut sq, &wr).unwrap();
        nic.ring_sq(&sq).unwrap();
        assert_eq!(nic.wait_cq_event(&cq, 20_000).unwrap(), IrqWait::TimedOut);
        let mut out = Vec::new();
        assert_eq!(nic.poll_cq(&mut cq, 8, &mut out).unwrap(), 1);
        // Armed: one interrupt, and the CQE is visible when it fires.
        nic.arm_cq(&cq).unwrap();
        nic.post_copy(&mut sq, &CopyWr { wr_id: 2, ..wr }).unwrap();
        nic.ring_sq(&sq).unwrap();
        assert_eq!(nic.wait_cq_event(&cq, 200_000).unwrap(), IrqWait::Fired);
        out.clear();
        assert_eq!(
            nic.poll_cq(&mut cq, 8, &mut out).unwrap(),
            1,
            "MSI must not pass the CQE"
        );
        assert_eq!(out[0].wr_id, 2);
    }
}
