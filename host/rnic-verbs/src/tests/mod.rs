//! Unit tests against a fake device (no RTL needed).

mod fake;

use std::net::Ipv4Addr;

use fake::{reg, FakeDev};
use rnic_device::{Device, DmaBuffer};
use rnic_driver::{Cqe, DriverError, RecvWqe, SendWqe, CQE_FLAG_RECV, CQE_FLAG_WITH_IMM, WQE_SIZE};

use crate::*;

type M = QpAttrMask;

fn open(dev: &FakeDev) -> Context<&FakeDev> {
    Context::open(dev).expect("open")
}

fn init_attr() -> (QpAttr, QpAttrMask) {
    (
        QpAttr {
            qp_state: QpState::Init,
            pkey_index: 0,
            port_num: 1,
            qp_access_flags: AccessFlags::REMOTE_WRITE,
            ..QpAttr::default()
        },
        M::STATE | M::PKEY_INDEX | M::PORT | M::ACCESS_FLAGS,
    )
}

const PEER_MAC: [u8; 6] = [0x02, 0xaa, 0xbb, 0xcc, 0xdd, 0xee];

fn rtr_attr() -> (QpAttr, QpAttrMask) {
    (
        QpAttr {
            qp_state: QpState::Rtr,
            path_mtu: Mtu::Mtu2048,
            dest_qp_num: 0x12_3456,
            rq_psn: 0x00_0777,
            ah_attr: AhAttr {
                dmac: PEER_MAC,
                dip: Ipv4Addr::new(10, 0, 0, 2),
                udp_sport: 0xC123,
                spray_log: 0,
                mp_window: 0,
            },
            max_dest_rd_atomic: 0,
            min_rnr_timer: 12,
            ..QpAttr::default()
        },
        M::STATE
            | M::AV
            | M::PATH_MTU
            | M::DEST_QPN
            | M::RQ_PSN
            | M::MAX_DEST_RD_ATOMIC
            | M::MIN_RNR_TIMER,
    )
}

fn rts_attr() -> (QpAttr, QpAttrMask) {
    (
        QpAttr {
            qp_state: QpState::Rts,
            sq_psn: 0xab_cdef,
            timeout: 14,
            retry_cnt: 7,
            rnr_retry: 7,
            max_rd_atomic: 0,
            ..QpAttr::default()
        },
        M::STATE | M::SQ_PSN | M::TIMEOUT | M::RETRY_CNT | M::RNR_RETRY | M::MAX_QP_RD_ATOMIC,
    )
}

fn modify<D: Device>(qp: &mut QueuePair<D>, (a, m): (QpAttr, QpAttrMask)) -> Result<()> {
    qp.modify(&a, m)
}

fn to_rts<D: Device>(qp: &mut QueuePair<D>) {
    modify(qp, init_attr()).expect("INIT");
    modify(qp, rtr_attr()).expect("RTR");
    modify(qp, rts_attr()).expect("RTS");
}

fn cap(send: u32, recv: u32) -> QpCap {
    QpCap {
        max_send_wr: send,
        max_recv_wr: recv,
        max_send_sge: 1,
        max_recv_sge: 1,
    }
}

fn create_qp<'d>(
    ctx: &Context<&'d FakeDev>,
    pd: &ProtectionDomain<&'d FakeDev>,
    cq: &CompletionQueue<&'d FakeDev>,
    cap: QpCap,
    sq_sig_all: bool,
) -> QueuePair<&'d FakeDev> {
    ctx.create_qp(
        pd,
        &QpInitAttr {
            send_cq: cq,
            recv_cq: cq,
            cap,
            qp_type: QpType::Rc,
            sq_sig_all,
        },
    )
    .expect("create_qp")
}

/// Writes CQEs into a CQ ring the way the NIC does (owner bit per pass).
struct NicCq {
    ring: DmaBuffer,
    entries: u32,
    pi: u32,
}

impl NicCq {
    fn of<D: Device>(cq: &CompletionQueue<D>) -> Self {
        let ring = cq.inner.with(|c| Ok(c.ring().clone())).expect("ring");
        Self {
            ring,
            entries: cq.cqe(),
            pi: 0,
        }
    }

    fn push(&mut self, c: &Cqe) {
        let slot = (self.pi % self.entries) as usize * rnic_driver::CQE_SIZE;
        let phase = (self.pi / self.entries).is_multiple_of(2);
        self.ring.write(slot, &c.encode(phase));
        self.pi += 1;
    }
}

fn send_cqe(qpn: u32, wr_id: u64, counter: u16) -> Cqe {
    Cqe {
        wr_id,
        qn: qpn,
        opcode: rnic_driver::CQE_OP_RDMA_WRITE,
        wqe_counter: counter,
        ..Cqe::default()
    }
}

fn sq_wqe<D: Device>(qp: &QueuePair<D>, index: u32) -> SendWqe {
    let sq = qp.send_queue().expect("sq");
    let mut b = [0u8; WQE_SIZE];
    sq.ring()
        .read((index % sq.entries()) as usize * WQE_SIZE, &mut b);
    SendWqe::decode(&b)
}

fn rq_wqe<D: Device>(qp: &QueuePair<D>, index: u32) -> RecvWqe {
    let rq = qp.recv_queue().expect("rq");
    let mut b = [0u8; WQE_SIZE];
    rq.ring()
        .read((index % rq.entries()) as usize * WQE_SIZE, &mut b);
    RecvWqe::decode(&b)
}

fn write_wr(wr_id: u64, sg: &[Sge], flags: SendFlags) -> SendWr<'_> {
    SendWr {
        wr_id,
        opcode: WrOpcode::RdmaWrite,
        send_flags: flags,
        sg_list: sg,
        imm_data: None,
        rdma: Some(RdmaInfo {
            remote_addr: 0x7000_0000,
            rkey: 0x0305,
        }),
    }
}

// ---------------------------------------------------------------- device

#[test]
fn query_device_reports_limits() {
    let dev = FakeDev::new(8);
    let ctx = open(&dev);
    let a = ctx.query_device().unwrap();
    assert_eq!(a.max_qp, 8);
    assert_eq!(a.max_cq, 8);
    // the fake reads 0 at id.mrs, as a build older than the register
    assert_eq!(a.max_mr, MAX_MR);
    assert_eq!(a.max_mr, 256);
    assert_eq!(a.max_qp_wr, 32768);
    assert_eq!(a.max_cqe, 32768);
    assert_eq!(a.max_sge, 1);
    assert_eq!(a.max_qp_rd_atom, 0);
    assert_eq!(a.fw_ver, "1.2.3");
    assert_eq!(a.hw_ver, 0xabcd_1234);
    assert_eq!(a.node_guid, 0, "no MAC yet");
    ctx.set_port_addr(
        [0x00, 0x11, 0x22, 0x33, 0x44, 0x55],
        Ipv4Addr::new(10, 0, 0, 1),
    )
    .unwrap();
    assert_eq!(ctx.query_device().unwrap().node_guid, 0x0211_22ff_fe33_4455);
}

#[test]
fn port_address_round_trips_through_the_port_block() {
    let dev = FakeDev::new(4);
    let ctx = open(&dev);
    let mac = [0x02, 0x11, 0x22, 0x33, 0x44, 0x55];
    ctx.set_port_addr(mac, Ipv4Addr::new(192, 168, 1, 7))
        .unwrap();
    assert_eq!(dev.reg(reg::MAC_HI), 0x0211);
    assert_eq!(dev.reg(reg::MAC_LO), 0x2233_4455);
    assert_eq!(dev.reg(reg::IPV4), 0xc0a8_0107);
    let p = ctx.query_port().unwrap();
    assert_eq!(p.mac, mac);
    assert_eq!(p.ipv4, Ipv4Addr::new(192, 168, 1, 7));
    assert_eq!(p.gid, Ipv4Addr::new(192, 168, 1, 7).to_ipv6_mapped());
    assert_eq!(p.active_mtu, Mtu::Mtu4096);
    assert_eq!(p.state, PortState::Active);

    dev.clear_log();
    let e = ctx
        .set_port_addr([0x01, 0, 0x5e, 0, 0, 1], Ipv4Addr::new(10, 0, 0, 1))
        .unwrap_err();
    assert!(matches!(e, VerbsError::InvalidArgument(_)), "{e}");
    let e = ctx
        .set_port_addr(mac, Ipv4Addr::new(224, 0, 0, 1))
        .unwrap_err();
    assert!(matches!(e, VerbsError::InvalidArgument(_)), "{e}");
    assert!(dev.writes().is_empty(), "nothing written on bad input");

    dev.set_reg(reg::TX_FRAMES, 17);
    dev.set_reg(reg::RX_READ_RESP, 3);
    dev.set_reg(reg::RX_ATOMIC, 5);
    dev.set_reg(reg::RX_ATOMIC_REPLAY, 2);
    dev.set_reg(reg::RX_RD_OVER, 4);
    let c = ctx.query_port_counters().unwrap();
    assert_eq!(c.tx_frames, 17);
    assert_eq!(c.rx_read_resp, 3);
    assert_eq!(c.rx_atomic, 5);
    assert_eq!(c.rx_atomic_replay, 2);
    assert_eq!(c.rx_rd_over, 4);
}

#[test]
fn open_refuses_a_device_without_the_magic() {
    struct NotRnic;
    impl Device for NotRnic {
        fn name(&self) -> String {
            "x".into()
        }
        fn bar_len(&self) -> u64 {
            0x1000
        }
        fn read32(&self, _: u64) -> rnic_device::Result<u32> {
            Ok(0xffff_ffff)
        }
        fn write32(&self, _: u64, _: u32) -> rnic_device::Result<()> {
            Ok(())
        }
        fn alloc_dma(&self, len: usize) -> rnic_device::Result<DmaBuffer> {
            Err(rnic_device::DeviceError::DmaAlloc(len))
        }
        fn free_dma(&self, _: &DmaBuffer) -> rnic_device::Result<()> {
            Ok(())
        }
        fn wait_irq(&self, _: u32, _: u64) -> rnic_device::Result<IrqWait> {
            Ok(IrqWait::TimedOut)
        }
        fn now(&self) -> u64 {
            0
        }
        fn clock_mhz(&self) -> f64 {
            1.0
        }
    }
    let e = Context::open(NotRnic).err().expect("must fail");
    assert!(matches!(e, VerbsError::Driver(DriverError::BadMagic(_))));
    assert_eq!(e.errno(), errno::EIO);
}

// ---------------------------------------------------------------- PD, MR

#[test]
fn pd_numbers_come_from_a_counter() {
    let dev = FakeDev::new(4);
    let ctx = open(&dev);
    let a = ctx.alloc_pd().unwrap();
    let b = ctx.alloc_pd().unwrap();
    assert_eq!((a.pd_num(), b.pd_num()), (1, 2));
    let buf = ctx.alloc_dma(4096).unwrap();
    let mr = ctx
        .reg_mr(&a, &buf, 0, 4096, AccessFlags::LOCAL_WRITE)
        .unwrap();
    assert_eq!(mr.pd_num(), 1);
    assert!(matches!(a.dealloc(), Err(VerbsError::Busy(_))));
    b.dealloc().unwrap();
    drop(mr);
    // PD 1 is free again only now; the counter moves on anyway.
    assert_eq!(ctx.alloc_pd().unwrap().pd_num(), 3);
}

#[test]
fn reg_mr_programs_the_mr_window() {
    let dev = FakeDev::new(4);
    let ctx = open(&dev);
    let pd = ctx.alloc_pd().unwrap();
    let buf = ctx.alloc_dma(8192).unwrap();
    dev.clear_log();
    let access = AccessFlags::LOCAL_WRITE | AccessFlags::REMOTE_WRITE;
    let mr = ctx.reg_mr(&pd, &buf, 100, 5000, access).unwrap();
    let va = buf.as_ptr() as u64 + 100;
    let bus = buf.bus_addr() + 100;
    assert_eq!(mr.addr(), va);
    assert_eq!(mr.bus_addr(), bus);
    assert_eq!(mr.lkey(), mr.rkey());
    assert_eq!(mr.lkey(), 0x0001, "index 0 in bits 15:8, generation 1");
    assert_eq!(mr.length(), 5000);
    let w: Vec<_> = dev
        .writes()
        .into_iter()
        .filter(|(o, _)| (reg::MR_SEL..=reg::MR_CMD).contains(o))
        .collect();
    assert_eq!(
        w,
        vec![
            (reg::MR_SEL, 0),
            (reg::MR_KEY, 0x0001),
            (reg::MR_VA_LO, va as u32),
            (reg::MR_VA_HI, (va >> 32) as u32),
            (reg::MR_LEN, 5000),
            (reg::MR_BUS_LO, bus as u32),
            (reg::MR_BUS_HI, (bus >> 32) as u32),
            (reg::MR_ATTR, u32::from(pd.pd_num()) | 3 << 16),
            (reg::MR_CMD, 1),
        ]
    );
    let mr2 = ctx.reg_mr(&pd, &buf, 0, 1, AccessFlags::empty()).unwrap();
    assert_eq!(mr2.lkey(), 0x0101);
    assert_eq!(ctx.mr_count(), 2);

    let sge = mr.sge(10, 20).unwrap();
    assert_eq!(
        sge,
        Sge {
            addr: va + 10,
            length: 20,
            lkey: 1
        }
    );
    assert!(matches!(
        mr.sge(4990, 11),
        Err(VerbsError::OutOfRange { .. })
    ));
    assert_eq!(mr.rdma_info(8).unwrap().remote_addr, va + 8);
    assert!(mr.rdma_info(5000).is_err());

    dev.clear_log();
    ctx.dereg_mr(mr).unwrap();
    assert_eq!(dev.writes(), vec![(reg::MR_SEL, 0), (reg::MR_CMD, 2)]);
    // Index 0 again, with a new generation: the old key stays dead.
    let mr3 = ctx
        .reg_mr(&pd, &buf, 0, 10, AccessFlags::LOCAL_WRITE)
        .unwrap();
    assert_eq!(mr3.lkey(), 0x0002);
    dev.clear_log();
    drop(mr3);
    assert_eq!(dev.writes_to(reg::MR_CMD), vec![2], "drop deregisters");
    assert_eq!(ctx.mr_count(), 1);
}

#[test]
fn reg_mr_validation() {
    let dev = FakeDev::new(4);
    let ctx = open(&dev);
    let pd = ctx.alloc_pd().unwrap();
    let buf = ctx.alloc_dma(4096).unwrap();
    dev.clear_log();
    let e = ctx
        .reg_mr(&pd, &buf, 0, 64, AccessFlags::REMOTE_WRITE)
        .unwrap_err();
    assert!(matches!(e, VerbsError::InvalidAccess { .. }), "{e}");
    assert_eq!(e.errno(), errno::EINVAL);
    let e = ctx
        .reg_mr(&pd, &buf, 0, 64, AccessFlags::REMOTE_ATOMIC)
        .unwrap_err();
    assert!(matches!(e, VerbsError::InvalidAccess { .. }), "{e}");
    // The fake has no id.caps bit 9: atomic access is refused even with
    // LOCAL_WRITE (see `atomics_follow_the_build` for a build with it).
    let e = ctx
        .reg_mr(
            &pd,
            &buf,
            0,
            64,
            AccessFlags::LOCAL_WRITE | AccessFlags::REMOTE_ATOMIC,
        )
        .unwrap_err();
    assert!(matches!(e, VerbsError::InvalidAccess { .. }), "{e}");
    assert_eq!(e.errno(), errno::EINVAL);
    assert!(e.to_string().contains("id.caps bit 9"), "{e}");
    let e = ctx
        .reg_mr(&pd, &buf, 0, 64, AccessFlags::from_bits_retain(0x100 | 1))
        .unwrap_err();
    assert!(matches!(e, VerbsError::InvalidAccess { .. }), "{e}");
    // Remote read alone is fine (as in ibverbs).
    ctx.reg_mr(&pd, &buf, 0, 64, AccessFlags::REMOTE_READ)
        .unwrap();
    dev.clear_log();
    assert!(matches!(
        ctx.reg_mr(&pd, &buf, 0, 0, AccessFlags::LOCAL_WRITE),
        Err(VerbsError::ZeroLength)
    ));
    assert!(matches!(
        ctx.reg_mr(&pd, &buf, 4000, 97, AccessFlags::LOCAL_WRITE),
        Err(VerbsError::OutOfRange {
            offset: 4000,
            len: 97,
            buf_len: 4096
        })
    ));
    assert!(matches!(
        ctx.reg_mr(&pd, &buf, usize::MAX, 2, AccessFlags::LOCAL_WRITE),
        Err(VerbsError::OutOfRange { .. })
    ));
    assert!(dev.writes().is_empty(), "nothing written on bad input");

    let other = FakeDev::new(4);
    let octx = open(&other);
    let opd = octx.alloc_pd().unwrap();
    assert!(matches!(
        ctx.reg_mr(&opd, &buf, 0, 1, AccessFlags::empty()),
        Err(VerbsError::ForeignObject(_))
    ));
}

#[test]
fn mr_table_full_and_refused_registration() {
    let dev = FakeDev::new(4);
    let ctx = open(&dev);
    let pd = ctx.alloc_pd().unwrap();
    let buf = ctx.alloc_dma(4096).unwrap();

    // A build that does not report its table (id.mrs reads 0) and has a
    // smaller one refuses the entry: the index is freed.
    dev.refuse_next(reg::MR_CMD);
    let e = ctx
        .reg_mr(&pd, &buf, 0, 1, AccessFlags::empty())
        .unwrap_err();
    assert!(
        matches!(e, VerbsError::Driver(DriverError::Refused { .. })),
        "{e}"
    );
    assert_eq!(ctx.mr_count(), 0);

    let mrs: Vec<_> = (0..MAX_MR)
        .map(|_| ctx.reg_mr(&pd, &buf, 0, 1, AccessFlags::empty()).unwrap())
        .collect();
    assert_eq!(mrs[255].lkey() >> 8, 255);
    let e = ctx
        .reg_mr(&pd, &buf, 0, 1, AccessFlags::empty())
        .unwrap_err();
    assert!(matches!(e, VerbsError::MrTableFull(256)), "{e}");
    assert_eq!(e.errno(), errno::ENOMEM);
}

/// A build that reports its MR table (`id.mrs`): `max_mr` is its size, and
/// one registration more is refused by the verbs layer, before any
/// register write; a freed entry can be registered again.
#[test]
fn mr_table_of_the_size_the_nic_reports() {
    for (reported, entries) in [(64, 64), (1, 1), (256, 256), (1000, MAX_MR)] {
        let dev = FakeDev::new(4);
        dev.mrs.set(reported);
        let ctx = open(&dev);
        assert_eq!(ctx.query_device().unwrap().max_mr, entries, "{reported}");
        let pd = ctx.alloc_pd().unwrap();
        let buf = ctx.alloc_dma(4096).unwrap();
        let mut mrs: Vec<_> = (0..entries)
            .map(|_| ctx.reg_mr(&pd, &buf, 0, 1, AccessFlags::empty()).unwrap())
            .collect();
        assert_eq!(mrs.last().unwrap().lkey() >> 8, entries - 1);
        dev.clear_log();
        let e = ctx
            .reg_mr(&pd, &buf, 0, 1, AccessFlags::empty())
            .unwrap_err();
        assert!(
            matches!(e, VerbsError::MrTableFull(n) if n == entries),
            "{reported}: {e}"
        );
        assert_eq!(e.errno(), errno::ENOMEM);
        assert!(
            e.to_string()
                .contains(&format!("holds {entries} memory regions")),
            "{e}"
        );
        assert!(dev.writes().is_empty(), "refused before any register write");
        assert_eq!(ctx.mr_count(), entries as usize);
        mrs.pop();
        let again = ctx.reg_mr(&pd, &buf, 0, 1, AccessFlags::empty()).unwrap();
        assert_eq!(again.lkey() >> 8, entries - 1);
    }
}

// ---------------------------------------------------------------- CQ

#[test]
fn create_cq_rounds_up_and_validates() {
    let dev = FakeDev::new(4);
    let ctx = open(&dev);
    dev.clear_log();
    let cq = ctx.create_cq(5).unwrap();
    assert_eq!(cq.cqe(), 8);
    assert_eq!(dev.writes_to(reg::Q_SIZE), vec![8]);
    assert_eq!(dev.writes_to(reg::Q_CMD), vec![3]);
    let small = ctx.create_cq(1).unwrap();
    assert_eq!(small.cqe(), 2);
    assert!(matches!(
        ctx.create_cq(0),
        Err(VerbsError::InvalidArgument(_))
    ));
    assert!(matches!(
        ctx.create_cq(32769),
        Err(VerbsError::InvalidArgument(_))
    ));
    let big = ctx.create_cq(32768).unwrap();
    assert_eq!(big.cqe(), 32768);
    let last = ctx.create_cq(2).unwrap();
    let e = ctx.create_cq(2).unwrap_err();
    assert!(
        matches!(e, VerbsError::Driver(DriverError::NoFreeQueue(4))),
        "{e}"
    );
    assert_eq!(e.errno(), errno::ENOMEM);
    // Dropping a CQ disables it and frees its number.
    dev.clear_log();
    drop(small);
    assert_eq!(dev.writes_to(reg::Q_CMD), vec![4]);
    let again = ctx.create_cq(2).unwrap();
    assert_eq!(again.cq_num(), 1);
    drop((cq, big, last));
}

#[test]
fn req_notify_arms_and_wait_event_waits() {
    let dev = FakeDev::new(4);
    let ctx = open(&dev);
    let _a = ctx.create_cq(4).unwrap();
    let cq = ctx.create_cq(4).unwrap();
    dev.clear_log();
    cq.req_notify(false).unwrap();
    assert_eq!(dev.writes_to(reg::CQ_ARM), vec![u32::from(cq.cq_num())]);
    assert_eq!(cq.wait_event(10).unwrap(), IrqWait::TimedOut);
    dev.fire_irq();
    assert_eq!(cq.wait_event(10).unwrap(), IrqWait::Fired);
}

#[test]
fn cq_destroy_is_busy_while_a_qp_uses_it() {
    let dev = FakeDev::new(4);
    let ctx = open(&dev);
    let pd = ctx.alloc_pd().unwrap();
    let cq = ctx.create_cq(4).unwrap();
    let qp = create_qp(&ctx, &pd, &cq, cap(4, 0), false);
    assert!(matches!(cq.destroy(), Err(VerbsError::Busy(_))));
    dev.clear_log();
    drop(qp);
    // The last user gone: the CQ is disabled with it.
    assert_eq!(dev.writes_to(reg::Q_CMD), vec![2, 4]);
    let cq = ctx.create_cq(4).unwrap();
    dev.clear_log();
    cq.destroy().unwrap();
    assert_eq!(dev.writes_to(reg::Q_CMD), vec![4]);
}

// ---------------------------------------------------------------- QP creation

#[test]
fn create_qp_sets_up_queues_and_context() {
    let dev = FakeDev::new(4);
    let ctx = open(&dev);
    let pd = ctx.alloc_pd().unwrap();
    let scq = ctx.create_cq(16).unwrap();
    let rcq = ctx.create_cq(16).unwrap();
    dev.clear_log();
    let qp = ctx
        .create_qp(
            &pd,
            &QpInitAttr {
                send_cq: &scq,
                recv_cq: &rcq,
                cap: cap(5, 3),
                qp_type: QpType::Rc,
                sq_sig_all: false,
            },
        )
        .unwrap();
    assert_eq!(qp.qp_num(), 0, "QPN is the send queue index");
    assert_eq!(qp.cap(), cap(8, 4));
    assert_eq!(qp.cq_nums(), (scq.cq_num(), rcq.cq_num()));
    // SQ enabled on the send CQ.
    assert_eq!(dev.writes_to(reg::Q_CMD), vec![1]);
    assert_eq!(dev.writes_to(reg::Q_CQN), vec![u32::from(scq.cq_num())]);
    assert_eq!(dev.writes_to(reg::Q_SIZE), vec![8]);
    // The whole context loaded once, in RESET.
    let c = dev.commits();
    assert_eq!(c.len(), 1);
    assert_eq!((c[0].qpn, c[0].op), (0, 1));
    assert_eq!(c[0].get(reg::QP_ATTR) & 7, 0);
    assert_eq!(
        c[0].get(reg::QP_PD),
        u32::from(pd.pd_num()) | u32::from(rcq.cq_num()) << 16
    );
    let rq = qp.recv_queue().unwrap();
    assert_eq!(rq.entries(), 4);
    assert_eq!(c[0].get(reg::QP_RQ_SIZE), 4);
    assert_eq!(c[0].get(reg::QP_RQ_BASE_LO), rq.bus_addr() as u32);
    assert_eq!(c[0].get(reg::QP_RQ_BASE_HI), (rq.bus_addr() >> 32) as u32);
    assert_eq!(qp.query_qp().unwrap().qp_state, QpState::Reset);

    let qp2 = create_qp(&ctx, &pd, &scq, cap(2, 0), false);
    assert_eq!(qp2.qp_num(), 1);
    assert!(qp2.recv_queue().is_none());
    assert_eq!(dev.commits().last().unwrap().get(reg::QP_RQ_SIZE), 0);
}

#[test]
fn create_qp_validation() {
    let dev = FakeDev::new(4);
    let ctx = open(&dev);
    let pd = ctx.alloc_pd().unwrap();
    let cq = ctx.create_cq(4).unwrap();
    let try_qp = |cap: QpCap, qp_type| {
        ctx.create_qp(
            &pd,
            &QpInitAttr {
                send_cq: &cq,
                recv_cq: &cq,
                cap,
                qp_type,
                sq_sig_all: false,
            },
        )
    };
    let e = try_qp(
        QpCap {
            max_send_sge: 2,
            ..cap(4, 4)
        },
        QpType::Rc,
    )
    .unwrap_err();
    assert!(matches!(e, VerbsError::InvalidArgument(_)), "{e}");
    let e = try_qp(
        QpCap {
            max_recv_sge: 2,
            ..cap(4, 4)
        },
        QpType::Rc,
    )
    .unwrap_err();
    assert!(matches!(e, VerbsError::InvalidArgument(_)), "{e}");
    let e = try_qp(cap(40000, 4), QpType::Rc).unwrap_err();
    assert!(matches!(e, VerbsError::InvalidArgument(_)), "{e}");
    let e = try_qp(cap(4, 4), QpType::Ud).unwrap_err();
    assert!(matches!(e, VerbsError::Unsupported(_)), "{e}");
    assert_eq!(e.errno(), errno::EOPNOTSUPP);
    // No queue was taken by the failures.
    let qps: Vec<_> = (0..4)
        .map(|_| try_qp(cap(4, 4), QpType::Rc).unwrap())
        .collect();
    assert_eq!(qps.last().unwrap().qp_num(), 3);
    let e = try_qp(cap(4, 4), QpType::Rc).unwrap_err();
    assert!(
        matches!(e, VerbsError::Driver(DriverError::NoFreeQueue(4))),
        "{e}"
    );
}

/// A build with a QP directory (`id.qpn_bits` 16): QP numbers are bound
/// to the slots, start at 2, differ from the slots, are not given again at
/// once, and the CQEs (which name the number) still retire the slot's WQEs.
#[test]
fn a_qp_directory_binds_numbers_cyclically() {
    let dev = FakeDev::new(8);
    dev.qpn_bits.set(16);
    // a binding left on slot 3 by an earlier process
    dev.set_binding(3, 0x40, true);
    let ctx = open(&dev);
    assert_eq!(ctx.nic().qpn_bits(), 16);
    let pd = ctx.alloc_pd().unwrap();
    let cq = ctx.create_cq(16).unwrap();
    let mut a = create_qp(&ctx, &pd, &cq, cap(8, 4), false);
    let b = create_qp(&ctx, &pd, &cq, cap(8, 0), false);
    assert_eq!((a.slot(), a.qp_num()), (0, 2));
    assert_eq!((b.slot(), b.qp_num()), (1, 3));
    assert_eq!(dev.binding(0), (2, true));
    assert_eq!(dev.binding(1), (3, true));
    assert!(format!("{a:?}").contains("qp_num: 2"), "{a:?}");
    // registers name the slot
    assert_eq!(dev.commits().last().unwrap().qpn, 1);

    // a CQE names the QP number and retires the QP's WQEs
    to_rts(&mut a);
    let sg = [Sge::default()];
    for i in 0..3 {
        a.post_send(&write_wr(i, &sg, SendFlags::empty())).unwrap();
    }
    let mut nic = NicCq::of(&cq);
    nic.push(&send_cqe(a.qp_num(), 1, 1));
    let wc = cq.poll_one().unwrap().expect("completion");
    assert_eq!((wc.qp_num, wc.wr_id), (2, 1));
    assert_eq!(a.send_outstanding(), 1);
    assert_eq!(cq.counter_mismatches(), 0);

    // destroyed: unbound in RESET; its slot comes back with a new number
    dev.clear_log();
    a.destroy().unwrap();
    assert_eq!(dev.binding(0), (2, false), "unbound, the number kept");
    let unbind = dev
        .writes()
        .iter()
        .position(|&(o, v)| o == reg::QP_BIND && v >> 24 == 2)
        .expect("an unbind");
    let reset = dev
        .writes()
        .iter()
        .position(|&(o, _)| o == reg::QP_CMD)
        .expect("the move to RESET");
    let disable = dev
        .writes()
        .iter()
        .position(|&(o, v)| o == reg::Q_CMD && v == 2)
        .expect("the send queue disabled");
    assert!(reset < unbind && unbind < disable);
    let c = create_qp(&ctx, &pd, &cq, cap(8, 0), false);
    assert_eq!(
        (c.slot(), c.qp_num()),
        (0, 4),
        "2 is not given again at once"
    );

    // a number bound behind the driver's back is skipped
    dev.set_binding(7, 5, true);
    let d = create_qp(&ctx, &pd, &cq, cap(8, 0), false);
    assert_eq!((d.slot(), d.qp_num()), (2, 6));
    // the slot with a leftover binding is unbound before it is used
    let e = create_qp(&ctx, &pd, &cq, cap(8, 0), false);
    assert_eq!((e.slot(), e.qp_num()), (3, 7));
    assert_eq!(dev.binding(3), (7, true));

    // a refused bind is an error, and the send queue is released
    dev.fail_next_bind(5);
    let err = ctx
        .create_qp(
            &pd,
            &QpInitAttr {
                send_cq: &cq,
                recv_cq: &cq,
                cap: cap(8, 4),
                qp_type: QpType::Rc,
                sq_sig_all: false,
            },
        )
        .unwrap_err();
    assert!(
        matches!(
            err,
            VerbsError::Driver(DriverError::QpBind {
                slot: 4,
                qpn: 8,
                code: 5
            })
        ),
        "{err}"
    );
    assert!(err.to_string().contains("slot beyond"), "{err}");
    let f = create_qp(&ctx, &pd, &cq, cap(8, 0), false);
    assert_eq!((f.slot(), f.qp_num()), (4, 9));

    // a send queue without a QP on a slot whose CQEs name 10 (the number
    // bound there last): 10 is not bound elsewhere while it lives
    dev.set_binding(5, 10, false);
    let nic = ctx.nic();
    let mut dcq = nic.create_cq(4).unwrap();
    let sq = nic.create_sq(4, &mut dcq).unwrap();
    assert_eq!((sq.qn(), nic.cqe_qn(sq.qn())), (5, 10));
    let g = create_qp(&ctx, &pd, &cq, cap(8, 0), false);
    assert_eq!((g.slot(), g.qp_num()), (6, 11));
    drop((b, c, d, e, f, g));
    nic.destroy_sq(sq).unwrap();
}

// ---------------------------------------------------------------- state machine

#[test]
fn reset_init_rtr_rts_programs_the_qp_window() {
    let dev = FakeDev::new(4);
    let ctx = open(&dev);
    let pd = ctx.alloc_pd().unwrap();
    let cq = ctx.create_cq(8).unwrap();
    let _other = create_qp(&ctx, &pd, &cq, cap(4, 0), false);
    let mut qp = create_qp(&ctx, &pd, &cq, cap(4, 4), false);
    let qpn = qp.slot();
    assert_eq!(qpn, 1);
    dev.clear_log();

    modify(&mut qp, init_attr()).unwrap();
    assert_eq!(dev.qp_state(qpn), 1);
    modify(&mut qp, rtr_attr()).unwrap();
    assert_eq!(dev.qp_state(qpn), 2);
    modify(&mut qp, rts_attr()).unwrap();
    assert_eq!(dev.qp_state(qpn), 3);
    assert_eq!(qp.state().unwrap(), QpState::Rts);

    let c = dev.commits();
    assert_eq!(c.len(), 3);
    assert!(c.iter().all(|c| c.qpn == qpn && c.op == 1));
    // INIT: state 1, REMOTE_WRITE access.
    assert_eq!(c[0].get(reg::QP_ATTR) & 7, 1);
    assert_eq!(c[0].get(reg::QP_ATTR) >> 8 & 1, 1);
    // RTR: path MTU, destination, responder PSN, address vector.
    let rtr = &c[1];
    assert_eq!(rtr.get(reg::QP_ATTR), 2 | 4 << 4 | 1 << 8);
    assert_eq!(rtr.get(reg::QP_DEST), 0x12_3456);
    assert_eq!(rtr.get(reg::QP_RQ_PSN), 0x777);
    assert_eq!(rtr.get(reg::QP_DMAC_HI), 0x02aa | 0xC123 << 16);
    assert_eq!(rtr.get(reg::QP_DMAC_LO), 0xbbcc_ddee);
    assert_eq!(rtr.get(reg::QP_DIP), 0x0a00_0002);
    // RTS: requester PSN, everything else kept.
    let rts = &c[2];
    assert_eq!(rts.get(reg::QP_ATTR), 3 | 4 << 4 | 1 << 8);
    assert_eq!(rts.get(reg::QP_SQ_PSN), 0xab_cdef);
    assert_eq!(rts.get(reg::QP_RQ_PSN), 0x777);
    assert_eq!(rts.get(reg::QP_DEST), 0x12_3456);

    // The order of the window writes: select first, command last.
    let w = dev.writes();
    let qp_writes: Vec<u64> = w
        .iter()
        .map(|(o, _)| *o)
        .filter(|o| (reg::QP_SEL..=reg::QP_CMD).contains(o))
        .collect();
    let first_cmd = qp_writes.iter().position(|o| *o == reg::QP_CMD).unwrap();
    assert_eq!(
        &qp_writes[first_cmd - 12..=first_cmd],
        &[
            reg::QP_SEL,
            reg::QP_ATTR,
            reg::QP_DEST,
            reg::QP_SQ_PSN,
            reg::QP_RQ_PSN,
            reg::QP_DMAC_LO,
            reg::QP_DMAC_HI,
            reg::QP_DIP,
            reg::QP_PD,
            reg::QP_RQ_BASE_LO,
            reg::QP_RQ_BASE_HI,
            reg::QP_RQ_SIZE,
            reg::QP_CMD,
        ]
    );

    let q = qp.query_qp().unwrap();
    assert_eq!(q.qp_state, QpState::Rts);
    assert_eq!(q.dest_qp_num, 0x12_3456);
    assert_eq!(q.path_mtu, Mtu::Mtu2048);
    assert_eq!(q.ah_attr.dmac, PEER_MAC);
    assert_eq!((q.timeout, q.retry_cnt, q.rnr_retry), (14, 7, 7));
}

#[test]
fn invalid_transitions_are_refused() {
    let dev = FakeDev::new(4);
    let ctx = open(&dev);
    let pd = ctx.alloc_pd().unwrap();
    let cq = ctx.create_cq(8).unwrap();
    let mut qp = create_qp(&ctx, &pd, &cq, cap(4, 4), false);
    dev.clear_log();

    let e = modify(&mut qp, rtr_attr()).unwrap_err();
    assert!(
        matches!(
            e,
            VerbsError::InvalidTransition {
                from: QpState::Reset,
                to: QpState::Rtr,
                ..
            }
        ),
        "{e}"
    );
    assert_eq!(e.errno(), errno::EINVAL);
    let e = modify(&mut qp, rts_attr()).unwrap_err();
    assert!(matches!(e, VerbsError::InvalidTransition { .. }), "{e}");
    assert!(dev.commits().is_empty());

    modify(&mut qp, init_attr()).unwrap();
    let e = modify(&mut qp, rts_attr()).unwrap_err();
    assert!(
        matches!(
            e,
            VerbsError::InvalidTransition {
                from: QpState::Init,
                to: QpState::Rts,
                ..
            }
        ),
        "{e}"
    );
    // INIT -> INIT is allowed (optional attributes only).
    qp.modify(
        &QpAttr {
            qp_state: QpState::Init,
            qp_access_flags: AccessFlags::empty(),
            ..QpAttr::default()
        },
        M::STATE | M::ACCESS_FLAGS,
    )
    .unwrap();
    assert_eq!(dev.commits().last().unwrap().get(reg::QP_ATTR) >> 8 & 1, 0);

    // Any -> ERR: state only (op 2); ERR -> RTS does not exist.
    dev.clear_log();
    qp.modify(
        &QpAttr {
            qp_state: QpState::Err,
            ..QpAttr::default()
        },
        M::STATE,
    )
    .unwrap();
    let c = dev.commits();
    assert_eq!((c.len(), c[0].op, c[0].get(reg::QP_ATTR) & 7), (1, 2, 6));
    let e = modify(&mut qp, rts_attr()).unwrap_err();
    assert!(
        matches!(
            e,
            VerbsError::InvalidTransition {
                from: QpState::Err,
                ..
            }
        ),
        "{e}"
    );
    let e = modify(&mut qp, init_attr()).unwrap_err();
    assert!(
        matches!(
            e,
            VerbsError::InvalidTransition {
                from: QpState::Err,
                ..
            }
        ),
        "{e}"
    );
    // ERR -> RESET -> INIT again.
    qp.modify(&QpAttr::default(), M::STATE).unwrap();
    assert_eq!(qp.state().unwrap(), QpState::Reset);
    modify(&mut qp, init_attr()).unwrap();

    // RESET -> ERR is allowed too.
    let mut qp2 = create_qp(&ctx, &pd, &cq, cap(4, 0), false);
    qp2.modify(
        &QpAttr {
            qp_state: QpState::Err,
            ..QpAttr::default()
        },
        M::STATE,
    )
    .unwrap();
    // SQD is part of the IB machine but not of this NIC.
    to_rts_from_reset_expect_err(&mut qp2);
    let mut qp3 = create_qp(&ctx, &pd, &cq, cap(4, 0), false);
    to_rts(&mut qp3);
    let e = qp3
        .modify(
            &QpAttr {
                qp_state: QpState::Sqd,
                ..QpAttr::default()
            },
            M::STATE,
        )
        .unwrap_err();
    assert!(matches!(e, VerbsError::Unsupported(_)), "{e}");
}

fn to_rts_from_reset_expect_err<D: Device>(qp: &mut QueuePair<D>) {
    assert_eq!(qp.state().unwrap(), QpState::Err);
    assert!(modify(qp, init_attr()).is_err());
}

#[test]
fn missing_and_unexpected_attributes() {
    let dev = FakeDev::new(4);
    let ctx = open(&dev);
    let pd = ctx.alloc_pd().unwrap();
    let cq = ctx.create_cq(8).unwrap();
    let mut qp = create_qp(&ctx, &pd, &cq, cap(4, 4), false);
    dev.clear_log();

    let (a, m) = init_attr();
    let e = qp.modify(&a, m - M::PORT).unwrap_err();
    match e {
        VerbsError::MissingAttributes { missing, .. } => assert_eq!(missing, M::PORT),
        e => panic!("{e}"),
    }
    let e = qp.modify(&a, m | M::SQ_PSN).unwrap_err();
    match e {
        VerbsError::UnexpectedAttributes { extra, .. } => assert_eq!(extra, M::SQ_PSN),
        e => panic!("{e}"),
    }
    // CUR_STATE is not an attribute of RESET -> INIT.
    let e = qp.modify(&a, m | M::CUR_STATE).unwrap_err();
    assert!(matches!(e, VerbsError::UnexpectedAttributes { .. }), "{e}");
    assert!(dev.commits().is_empty(), "nothing reached the NIC");
    assert_eq!(qp.state().unwrap(), QpState::Reset);

    qp.modify(&a, m).unwrap();
    let (a, m) = rtr_attr();
    for each in [
        M::AV,
        M::PATH_MTU,
        M::DEST_QPN,
        M::RQ_PSN,
        M::MAX_DEST_RD_ATOMIC,
        M::MIN_RNR_TIMER,
    ] {
        let e = qp.modify(&a, m - each).unwrap_err();
        match e {
            VerbsError::MissingAttributes { missing, .. } => assert_eq!(missing, each),
            e => panic!("{e}"),
        }
    }
    let e = qp.modify(&a, m | M::TIMEOUT).unwrap_err();
    assert!(matches!(e, VerbsError::UnexpectedAttributes { .. }), "{e}");
    // Optional on INIT -> RTR: access flags, pkey index; ALT_PATH is
    // allowed by IB but not implemented.
    let e = qp.modify(&a, m | M::ALT_PATH).unwrap_err();
    assert!(matches!(e, VerbsError::Unsupported(_)), "{e}");
    qp.modify(&a, m | M::ACCESS_FLAGS | M::PKEY_INDEX).unwrap();

    let (a, m) = rts_attr();
    for each in [
        M::SQ_PSN,
        M::TIMEOUT,
        M::RETRY_CNT,
        M::RNR_RETRY,
        M::MAX_QP_RD_ATOMIC,
    ] {
        assert!(matches!(
            qp.modify(&a, m - each),
            Err(VerbsError::MissingAttributes { .. })
        ));
    }
    let e = qp.modify(&a, m | M::DEST_QPN).unwrap_err();
    assert!(matches!(e, VerbsError::UnexpectedAttributes { .. }), "{e}");
    // CUR_STATE must match the NIC's state.
    let e = qp
        .modify(
            &QpAttr {
                cur_qp_state: QpState::Init,
                ..a
            },
            m | M::CUR_STATE,
        )
        .unwrap_err();
    assert!(
        matches!(
            e,
            VerbsError::CurStateMismatch {
                given: QpState::Init,
                actual: QpState::Rtr,
                ..
            }
        ),
        "{e}"
    );
    qp.modify(
        &QpAttr {
            cur_qp_state: QpState::Rtr,
            ..a
        },
        m | M::CUR_STATE,
    )
    .unwrap();

    // RTS -> RTS without STATE: optional attributes only.
    qp.modify(
        &QpAttr {
            min_rnr_timer: 3,
            ..QpAttr::default()
        },
        M::MIN_RNR_TIMER,
    )
    .unwrap();
    assert_eq!(qp.query_qp().unwrap().min_rnr_timer, 3);
    assert!(matches!(
        qp.modify(&QpAttr::default(), M::SQ_PSN),
        Err(VerbsError::UnexpectedAttributes { .. })
    ));
}

#[test]
fn attribute_values_are_checked() {
    let dev = FakeDev::new(4);
    let ctx = open(&dev);
    let pd = ctx.alloc_pd().unwrap();
    let cq = ctx.create_cq(8).unwrap();
    let mut qp = create_qp(&ctx, &pd, &cq, cap(4, 4), false);
    let (a, m) = init_attr();
    let bad = |r: Result<()>, name: &str| match r {
        Err(VerbsError::InvalidAttribute { attr, .. }) => assert_eq!(attr, name),
        r => panic!("{name}: {r:?}"),
    };
    bad(qp.modify(&QpAttr { pkey_index: 1, ..a }, m), "pkey_index");
    bad(qp.modify(&QpAttr { port_num: 2, ..a }, m), "port_num");
    bad(
        qp.modify(
            &QpAttr {
                qp_access_flags: AccessFlags::from_bits_retain(0x40),
                ..a
            },
            m,
        ),
        "qp_access_flags",
    );
    qp.modify(&a, m).unwrap();
    let (a, m) = rtr_attr();
    bad(
        qp.modify(
            &QpAttr {
                dest_qp_num: 1 << 24,
                ..a
            },
            m,
        ),
        "dest_qp_num",
    );
    bad(
        qp.modify(
            &QpAttr {
                rq_psn: 1 << 24,
                ..a
            },
            m,
        ),
        "rq_psn",
    );
    bad(
        qp.modify(
            &QpAttr {
                min_rnr_timer: 32,
                ..a
            },
            m,
        ),
        "min_rnr_timer",
    );
    bad(
        qp.modify(
            &QpAttr {
                max_dest_rd_atomic: 1,
                ..a
            },
            m,
        ),
        "max_dest_rd_atomic",
    );
    let ah = a.ah_attr;
    for dmac in [[0u8; 6], [0xff; 6], [0x01, 0, 0x5e, 0, 0, 1]] {
        bad(
            qp.modify(
                &QpAttr {
                    ah_attr: AhAttr { dmac, ..ah },
                    ..a
                },
                m,
            ),
            "ah_attr.dmac",
        );
    }
    for dip in [
        Ipv4Addr::UNSPECIFIED,
        Ipv4Addr::BROADCAST,
        Ipv4Addr::new(239, 1, 1, 1),
    ] {
        bad(
            qp.modify(
                &QpAttr {
                    ah_attr: AhAttr { dip, ..ah },
                    ..a
                },
                m,
            ),
            "ah_attr.dip",
        );
    }
    assert_eq!(
        qp.state().unwrap(),
        QpState::Init,
        "failed modifies change nothing"
    );
    qp.modify(&a, m).unwrap();
    let (a, m) = rts_attr();
    bad(
        qp.modify(
            &QpAttr {
                sq_psn: 0x100_0000,
                ..a
            },
            m,
        ),
        "sq_psn",
    );
    bad(qp.modify(&QpAttr { timeout: 32, ..a }, m), "timeout");
    bad(qp.modify(&QpAttr { retry_cnt: 8, ..a }, m), "retry_cnt");
    bad(qp.modify(&QpAttr { rnr_retry: 8, ..a }, m), "rnr_retry");
    bad(
        qp.modify(
            &QpAttr {
                max_rd_atomic: 1,
                ..a
            },
            m,
        ),
        "max_rd_atomic",
    );
    qp.modify(&a, m).unwrap();
}

#[test]
fn modify_refused_or_overtaken_by_the_nic() {
    let dev = FakeDev::new(4);
    let ctx = open(&dev);
    let pd = ctx.alloc_pd().unwrap();
    let cq = ctx.create_cq(8).unwrap();
    let mut qp = create_qp(&ctx, &pd, &cq, cap(4, 4), false);
    dev.refuse_next(reg::QP_CMD);
    let e = modify(&mut qp, init_attr()).unwrap_err();
    assert!(
        matches!(e, VerbsError::Driver(DriverError::Refused { .. })),
        "{e}"
    );
    assert_eq!(qp.state().unwrap(), QpState::Reset);
    to_rts(&mut qp);

    // The transport moved the QP to ERR: query sees it, posting is still
    // taken (the NIC flushes it), and RTS -> RTS is no longer a transition.
    dev.set_qp_state(qp.slot(), 6);
    assert_eq!(qp.query_qp().unwrap().qp_state, QpState::Err);
    let sg = [Sge::default()];
    qp.post_send(&write_wr(1, &sg, SendFlags::SIGNALED))
        .unwrap();
    let e = qp
        .modify(
            &QpAttr {
                min_rnr_timer: 1,
                ..QpAttr::default()
            },
            M::MIN_RNR_TIMER,
        )
        .unwrap_err();
    assert!(
        matches!(
            e,
            VerbsError::UnexpectedAttributes {
                from: QpState::Err,
                to: QpState::Err,
                ..
            }
        ),
        "{e}"
    );
    let e = modify(&mut qp, rts_attr()).unwrap_err();
    assert!(
        matches!(
            e,
            VerbsError::InvalidTransition {
                from: QpState::Err,
                ..
            }
        ),
        "{e}"
    );
    let st = qp.status().unwrap();
    assert_eq!((st.state, st.last_syndrome), (QpState::Err, 3));
}

// ---------------------------------------------------------------- post_send

#[test]
fn send_wqe_byte_layout() {
    let dev = FakeDev::new(4);
    let ctx = open(&dev);
    let pd = ctx.alloc_pd().unwrap();
    let cq = ctx.create_cq(8).unwrap();
    let mut qp = create_qp(&ctx, &pd, &cq, cap(8, 0), false);
    to_rts(&mut qp);
    let buf = ctx.alloc_dma(8192).unwrap();
    let mr = ctx
        .reg_mr(&pd, &buf, 0, 8192, AccessFlags::LOCAL_WRITE)
        .unwrap();
    dev.clear_log();

    let s0 = [mr.sge(0, 4096).unwrap()];
    let s1 = [mr.sge(4096, 100).unwrap()];
    let rdma = RdmaInfo {
        remote_addr: 0x0000_7fff_0000_1000,
        rkey: 0x0000_0502,
    };
    qp.post_send_list(&[
        SendWr {
            wr_id: 0x1111,
            opcode: WrOpcode::RdmaWrite,
            send_flags: SendFlags::empty(),
            sg_list: &s0,
            imm_data: None,
            rdma: Some(rdma),
        },
        SendWr {
            wr_id: 0x2222,
            opcode: WrOpcode::RdmaWriteWithImm,
            send_flags: SendFlags::SIGNALED | SendFlags::SOLICITED | SendFlags::FENCE,
            sg_list: &s1,
            imm_data: Some(0x0a0b_0c0du32.to_be()),
            rdma: Some(RdmaInfo {
                remote_addr: rdma.remote_addr + 4096,
                ..rdma
            }),
        },
        SendWr {
            wr_id: 0x3333,
            opcode: WrOpcode::SendWithImm,
            send_flags: SendFlags::SIGNALED,
            sg_list: &[],
            imm_data: Some(7u32.to_be()),
            rdma: None,
        },
    ])
    .unwrap();
    // One doorbell for the list: queue 0, producer index 3.
    assert_eq!(dev.writes_to(reg::SQ_DB), vec![3]);

    let ring = qp.send_queue().unwrap().ring().clone();
    let mut raw = [0u8; WQE_SIZE];
    ring.read(0, &mut raw);
    let va = buf.as_ptr() as u64;
    let mut want = [0u8; WQE_SIZE];
    want[0] = 0; // RDMA_WRITE
    want[1] = 0; // unsignaled
    want[4..8].copy_from_slice(&4096u32.to_le_bytes());
    want[8..16].copy_from_slice(&0x1111u64.to_le_bytes());
    want[16..24].copy_from_slice(&va.to_le_bytes());
    want[24..32].copy_from_slice(&0x0000_7fff_0000_1000u64.to_le_bytes());
    want[32..36].copy_from_slice(&0x0502u32.to_le_bytes());
    want[40..44].copy_from_slice(&mr.lkey().to_le_bytes());
    assert_eq!(raw, want);

    ring.read(WQE_SIZE, &mut raw);
    assert_eq!(raw[0], 1, "RDMA_WRITE_WITH_IMM");
    assert_eq!(raw[1], 0b111, "SIGNALED | SOLICITED | FENCE");
    assert_eq!(&raw[4..8], &100u32.to_le_bytes());
    assert_eq!(&raw[16..24], &(va + 4096).to_le_bytes());
    assert_eq!(&raw[24..32], &0x0000_7fff_0000_2000u64.to_le_bytes());
    assert_eq!(&raw[36..40], &[0x0a, 0x0b, 0x0c, 0x0d], "wire order");

    let w = sq_wqe(&qp, 2);
    assert_eq!((w.opcode, w.flags, w.length), (3, 1, 0));
    assert_eq!((w.local_addr, w.remote_addr, w.rkey, w.lkey), (0, 0, 0, 0));
    assert_eq!(w.imm, [0, 0, 0, 7]);
    assert_eq!(qp.send_outstanding(), 3);
}

/// `max_rd_atomic` and `max_dest_rd_atomic` reach the NIC (`qp_retry`
/// bits 26:24 and 30:28, which the RTL holds each QP to), and on a QP
/// whose `max_rd_atomic` is 0 a READ or an atomic is refused before
/// anything is written.
#[test]
fn rd_atomic_limits_reach_the_nic_and_zero_refuses_reads() {
    let dev = FakeDev::new(4);
    dev.caps.set(0x7F | 0x80 | 0x100 | 0x200);
    dev.verbs.set(0x7F);
    let ctx = open(&dev);
    let pd = ctx.alloc_pd().unwrap();
    let cq = ctx.create_cq(8).unwrap();
    let buf = ctx.alloc_dma(4096).unwrap();
    let mr = ctx
        .reg_mr(&pd, &buf, 0, 4096, AccessFlags::LOCAL_WRITE)
        .unwrap();
    for (rd, dest) in [(0u8, 3u8), (2, 0), (4, 4)] {
        let mut qp = create_qp(&ctx, &pd, &cq, cap(4, 0), false);
        modify(&mut qp, init_attr()).unwrap();
        let (rtr, m) = rtr_attr();
        qp.modify(
            &QpAttr {
                max_dest_rd_atomic: dest,
                ..rtr
            },
            m,
        )
        .unwrap();
        let (rts, m) = rts_attr();
        qp.modify(
            &QpAttr {
                max_rd_atomic: rd,
                ..rts
            },
            m,
        )
        .unwrap();
        let w = *dev.writes_to(reg::QP_RETRY).last().unwrap();
        assert_eq!(
            ((w >> 24) & 7, (w >> 28) & 7),
            (u32::from(rd), u32::from(dest))
        );
        let q = qp.query_qp().unwrap();
        assert_eq!((q.max_rd_atomic, q.max_dest_rd_atomic), (rd, dest));
        dev.clear_log();
        let sg = [mr.sge(0, 8).unwrap()];
        let read = qp.post_send(&SendWr {
            opcode: WrOpcode::RdmaRead,
            ..write_wr(1, &sg, SendFlags::SIGNALED)
        });
        let atomic = qp.post_atomic(&AtomicWr {
            wr_id: 2,
            op: AtomicOp::FetchAndAdd { add: 1 },
            send_flags: SendFlags::SIGNALED,
            sge: sg[0],
            remote_addr: 0x7000_0000,
            rkey: 0x0305,
        });
        if rd == 0 {
            for e in [read.unwrap_err(), atomic.unwrap_err()] {
                assert!(
                    matches!(&e, VerbsError::InvalidWr { reason, .. } if reason.contains("max_rd_atomic")),
                    "{e}"
                );
            }
            assert!(
                dev.writes().is_empty(),
                "nothing written for a refused READ"
            );
        } else {
            read.unwrap();
            atomic.unwrap();
        }
    }
}

#[test]
fn sq_sig_all_signals_every_wqe() {
    let dev = FakeDev::new(4);
    let ctx = open(&dev);
    let pd = ctx.alloc_pd().unwrap();
    let cq = ctx.create_cq(8).unwrap();
    let mut qp = create_qp(&ctx, &pd, &cq, cap(4, 0), true);
    to_rts(&mut qp);
    let sg = [Sge::default()];
    qp.post_send(&write_wr(1, &sg, SendFlags::empty())).unwrap();
    assert_eq!(sq_wqe(&qp, 0).flags, 1);
}

/// An mp-only build (`rnic build --transports mp`: `id.caps` bit 6 clear)
/// refuses RC QPs with a reason and still creates mp QPs.
#[test]
fn an_mp_only_build_refuses_rc_qps() {
    let dev = FakeDev::new(4);
    dev.caps.set(0x3F);
    let ctx = open(&dev);
    let pd = ctx.alloc_pd().unwrap();
    let cq = ctx.create_cq(8).unwrap();
    let attr = |qp_type| QpInitAttr {
        send_cq: &cq,
        recv_cq: &cq,
        cap: cap(4, 4),
        qp_type,
        sq_sig_all: false,
    };
    let Err(e) = ctx.create_qp(&pd, &attr(QpType::Rc)) else {
        panic!("an RC QP was created on an mp-only build");
    };
    assert!(matches!(e, VerbsError::Unsupported(_)), "{e}");
    assert!(e.to_string().contains("--transports mp"), "{e}");
    ctx.create_qp(&pd, &attr(QpType::Mp)).unwrap();
}

/// A build without SEND/RECV (`rnic build --verbs write`: the verbs
/// register lacks bits 3 and 4) refuses SEND and SEND_WITH_IMM before
/// anything reaches the NIC; RDMA WRITE still goes out.
#[test]
fn a_write_only_build_refuses_send() {
    let dev = FakeDev::new(4);
    dev.verbs.set(0x07);
    let ctx = open(&dev);
    let pd = ctx.alloc_pd().unwrap();
    let cq = ctx.create_cq(8).unwrap();
    let mut qp = create_qp(&ctx, &pd, &cq, cap(4, 0), false);
    to_rts(&mut qp);
    dev.clear_log();
    let one = [Sge::default()];
    for opcode in [WrOpcode::Send, WrOpcode::SendWithImm] {
        let wr = SendWr {
            wr_id: 1,
            opcode,
            send_flags: SendFlags::empty(),
            sg_list: &one,
            imm_data: (opcode == WrOpcode::SendWithImm).then_some(1),
            rdma: None,
        };
        let e = qp.post_send(&wr).unwrap_err();
        assert!(matches!(e, VerbsError::Unsupported(_)), "{opcode:?}: {e}");
        assert_eq!(e.errno(), errno::EOPNOTSUPP);
    }
    assert!(dev.writes().is_empty(), "no WQE, no doorbell");
    qp.post_send(&write_wr(2, &one, SendFlags::empty()))
        .unwrap();
    assert!(!dev.writes().is_empty(), "the WRITE was posted");
}

#[test]
fn bad_send_work_requests() {
    let dev = FakeDev::new(4);
    let ctx = open(&dev);
    let pd = ctx.alloc_pd().unwrap();
    let cq = ctx.create_cq(8).unwrap();
    let mut qp = create_qp(&ctx, &pd, &cq, cap(4, 0), false);
    to_rts(&mut qp);
    dev.clear_log();
    let two = [Sge::default(), Sge::default()];
    let one = [Sge::default()];
    let e = qp
        .post_send(&write_wr(1, &two, SendFlags::empty()))
        .unwrap_err();
    assert!(
        matches!(
            e,
            VerbsError::TooManySge {
                given: 2,
                max: 1,
                ..
            }
        ),
        "{e}"
    );
    assert_eq!(e.errno(), errno::EINVAL);
    let cases = [
        SendWr {
            rdma: None,
            ..write_wr(1, &one, SendFlags::empty())
        },
        SendWr {
            opcode: WrOpcode::Send,
            ..write_wr(1, &one, SendFlags::empty())
        },
        SendWr {
            opcode: WrOpcode::RdmaWriteWithImm,
            ..write_wr(1, &one, SendFlags::empty())
        },
        SendWr {
            imm_data: Some(1),
            ..write_wr(1, &one, SendFlags::empty())
        },
        SendWr {
            send_flags: SendFlags::from_bits_retain(8),
            ..write_wr(1, &one, SendFlags::empty())
        },
        SendWr {
            opcode: WrOpcode::LocalDmaCopy,
            ..write_wr(1, &one, SendFlags::empty())
        },
        SendWr {
            rdma: Some(RdmaInfo {
                remote_addr: u64::MAX - 1,
                rkey: 1,
            }),
            ..write_wr(
                1,
                &[Sge {
                    addr: 0,
                    length: 10,
                    lkey: 1,
                }],
                SendFlags::empty(),
            )
        },
    ];
    for wr in &cases {
        let e = qp.post_send(wr).unwrap_err();
        assert!(matches!(e, VerbsError::InvalidWr { .. }), "{wr:?}: {e}");
    }
    let big = [Sge {
        addr: 0,
        length: (1 << 31) + 1,
        lkey: 1,
    }];
    assert!(qp
        .post_send(&write_wr(1, &big, SendFlags::empty()))
        .is_err());
    assert!(dev.writes().is_empty(), "no WQE, no doorbell");
    assert_eq!(qp.send_outstanding(), 0);
}

#[test]
fn post_send_needs_rts() {
    let dev = FakeDev::new(4);
    let ctx = open(&dev);
    let pd = ctx.alloc_pd().unwrap();
    let cq = ctx.create_cq(8).unwrap();
    let mut qp = create_qp(&ctx, &pd, &cq, cap(4, 4), false);
    let sg = [Sge::default()];
    let wr = write_wr(1, &sg, SendFlags::SIGNALED);
    let check = |qp: &mut QueuePair<_>, state| {
        let e = qp.post_send(&wr).unwrap_err();
        assert!(
            matches!(e, VerbsError::WrongState { state: s, op: "post_send", .. } if s == state),
            "{e}"
        );
        assert_eq!(e.errno(), errno::EINVAL);
    };
    check(&mut qp, QpState::Reset);
    modify(&mut qp, init_attr()).unwrap();
    check(&mut qp, QpState::Init);
    modify(&mut qp, rtr_attr()).unwrap();
    check(&mut qp, QpState::Rtr);
    modify(&mut qp, rts_attr()).unwrap();
    qp.post_send(&wr).unwrap();
    qp.modify(
        &QpAttr {
            qp_state: QpState::Err,
            ..QpAttr::default()
        },
        M::STATE,
    )
    .unwrap();
    // in ERR the work request is taken (the NIC flushes it)
    qp.post_send(&wr).unwrap();
    assert_eq!(qp.send_outstanding(), 2);
}

#[test]
fn send_queue_full() {
    let dev = FakeDev::new(4);
    let ctx = open(&dev);
    let pd = ctx.alloc_pd().unwrap();
    let cq = ctx.create_cq(8).unwrap();
    let mut qp = create_qp(&ctx, &pd, &cq, cap(4, 0), false);
    to_rts(&mut qp);
    dev.clear_log();
    let sg = [Sge::default()];
    let wrs: Vec<_> = (0..6)
        .map(|i| write_wr(i, &sg, SendFlags::empty()))
        .collect();
    let e = qp.post_send_list(&wrs).unwrap_err();
    match &e {
        VerbsError::PostFailed { index, source } => {
            assert_eq!(*index, 4);
            assert!(matches!(**source, VerbsError::SendQueueFull(0)));
        }
        e => panic!("{e}"),
    }
    assert_eq!(e.errno(), errno::ENOMEM);
    // The four that fit were posted and announced.
    assert_eq!(dev.writes_to(reg::SQ_DB), vec![4]);
    let e = qp.post_send(&wrs[0]).unwrap_err();
    assert!(matches!(e, VerbsError::SendQueueFull(0)), "{e}");
    assert_eq!(
        dev.writes_to(reg::SQ_DB),
        vec![4],
        "no doorbell for nothing"
    );
}

// ---------------------------------------------------------------- completions

#[test]
fn unsignaled_wqes_are_retired_by_the_wqe_counter() {
    let dev = FakeDev::new(4);
    let ctx = open(&dev);
    let pd = ctx.alloc_pd().unwrap();
    let cq = ctx.create_cq(8).unwrap();
    let mut qp = create_qp(&ctx, &pd, &cq, cap(4, 0), false);
    to_rts(&mut qp);
    let mut nic = NicCq::of(&cq);
    let sg = [Sge::default()];
    let wrs = [
        write_wr(10, &sg, SendFlags::empty()),
        write_wr(11, &sg, SendFlags::empty()),
        write_wr(12, &sg, SendFlags::empty()),
        write_wr(13, &sg, SendFlags::SIGNALED),
    ];
    qp.post_send_list(&wrs).unwrap();
    assert_eq!(qp.send_outstanding(), 4);
    assert!(matches!(
        qp.post_send(&wrs[0]),
        Err(VerbsError::SendQueueFull(_))
    ));

    let mut wc = [WorkCompletion::default(); 4];
    assert_eq!(cq.poll(&mut wc).unwrap(), 0);
    dev.clear_log();
    // The NIC completes the signaled WQE only (index 3).
    nic.push(&send_cqe(0, 13, 3));
    assert_eq!(cq.poll(&mut wc).unwrap(), 1);
    assert_eq!(wc[0].wr_id, 13);
    assert_eq!(wc[0].opcode, WcOpcode::RdmaWrite);
    assert_eq!(qp.send_outstanding(), 0, "one CQE retired all four");
    assert_eq!(
        dev.writes_to(reg::CQ_DB),
        vec![1],
        "consumer index to the NIC"
    );
    assert_eq!(cq.counter_mismatches(), 0);
    assert!(!cq.counter_ignored());

    // The ring wraps: the next WQEs take indices 4..7 (slots 0..3).
    qp.post_send_list(&wrs).unwrap();
    assert_eq!(sq_wqe(&qp, 4).wr_id, 10);
    nic.push(&send_cqe(0, 11, 5));
    assert_eq!(cq.poll_one().unwrap().map(|c| c.wr_id), Some(11));
    assert_eq!(qp.send_outstanding(), 2);
    nic.push(&send_cqe(0, 13, 7));
    assert_eq!(cq.poll_one().unwrap().map(|c| c.wr_id), Some(13));
    assert_eq!(qp.send_outstanding(), 0);
    assert_eq!(cq.poll_one().unwrap(), None);
}

#[test]
fn completions_of_several_qps_on_one_cq() {
    let dev = FakeDev::new(4);
    let ctx = open(&dev);
    let pd = ctx.alloc_pd().unwrap();
    let cq = ctx.create_cq(16).unwrap();
    let mut a = create_qp(&ctx, &pd, &cq, cap(8, 0), false);
    let mut b = create_qp(&ctx, &pd, &cq, cap(8, 0), false);
    to_rts(&mut a);
    to_rts(&mut b);
    let sg = [Sge::default()];
    for i in 0..3 {
        a.post_send(&write_wr(i, &sg, SendFlags::empty())).unwrap();
        b.post_send(&write_wr(100 + i, &sg, SendFlags::empty()))
            .unwrap();
    }
    let mut nic = NicCq::of(&cq);
    nic.push(&send_cqe(b.qp_num(), 101, 1));
    nic.push(&send_cqe(a.qp_num(), 2, 2));
    let mut wc = [WorkCompletion::default(); 8];
    assert_eq!(cq.poll(&mut wc).unwrap(), 2);
    assert_eq!((wc[0].qp_num, wc[0].wr_id), (1, 101));
    assert_eq!((wc[1].qp_num, wc[1].wr_id), (0, 2));
    assert_eq!((a.send_outstanding(), b.send_outstanding()), (0, 1));
}

#[test]
fn poll_respects_the_slice_length_and_the_owner_bit() {
    let dev = FakeDev::new(4);
    let ctx = open(&dev);
    let pd = ctx.alloc_pd().unwrap();
    let cq = ctx.create_cq(4).unwrap();
    let mut qp = create_qp(&ctx, &pd, &cq, cap(16, 0), true);
    to_rts(&mut qp);
    let sg = [Sge::default()];
    let mut nic = NicCq::of(&cq);
    let mut wc = [WorkCompletion::default(); 2];
    let mut seen = Vec::new();
    // Three passes over a 4-entry CQ: the owner bit flips each pass.
    for round in 0..3u64 {
        for i in 0..4 {
            let id = round * 4 + i;
            qp.post_send(&write_wr(id, &sg, SendFlags::empty()))
                .unwrap();
            nic.push(&send_cqe(0, id, id as u16));
        }
        assert_eq!(cq.poll(&mut wc).unwrap(), 2);
        seen.extend(wc.iter().map(|c| c.wr_id));
        assert_eq!(cq.poll(&mut wc).unwrap(), 2);
        seen.extend(wc.iter().map(|c| c.wr_id));
        assert_eq!(cq.poll(&mut wc).unwrap(), 0);
        assert_eq!(cq.poll(&mut []).unwrap(), 0);
    }
    assert_eq!(seen, (0..12).collect::<Vec<u64>>());
    assert_eq!(qp.send_outstanding(), 0);
}

#[test]
fn nic_without_wqe_counter_still_balances() {
    // A build that completes every WQE and leaves the counter at 0.
    let dev = FakeDev::new(4);
    let ctx = open(&dev);
    let pd = ctx.alloc_pd().unwrap();
    let cq = ctx.create_cq(8).unwrap();
    let mut qp = create_qp(&ctx, &pd, &cq, cap(4, 0), true);
    to_rts(&mut qp);
    let sg = [Sge::default()];
    let mut nic = NicCq::of(&cq);
    for i in 0..3 {
        qp.post_send(&write_wr(i, &sg, SendFlags::empty())).unwrap();
        nic.push(&send_cqe(0, i, 0));
    }
    let mut wc = [WorkCompletion::default(); 4];
    assert_eq!(cq.poll(&mut wc).unwrap(), 3);
    assert_eq!(qp.send_outstanding(), 0);
    assert_eq!(cq.counter_mismatches(), 2);
    assert!(cq.counter_ignored());
}

#[test]
fn cqe_decoding() {
    let recv = Cqe {
        wr_id: 0xfeed,
        byte_len: 12345,
        imm: u32::from_le_bytes([0xde, 0xad, 0xbe, 0xef]),
        qn: 3,
        opcode: rnic_driver::CQE_OP_RECV_RDMA_WITH_IMM,
        status: WcStatus::Success,
        wqe_counter: 0,
        src_qp: 0x00ab_cdef,
        flags: CQE_FLAG_WITH_IMM | CQE_FLAG_RECV,
        syndrome: 0,
    };
    let raw = recv.encode(true);
    let wc = WorkCompletion::from_cqe(&Cqe::decode(&raw));
    assert_eq!(wc.wr_id, 0xfeed);
    assert_eq!(wc.byte_len, 12345);
    assert_eq!(wc.opcode, WcOpcode::RecvRdmaWithImm);
    assert_eq!(wc.qp_num, 3);
    assert_eq!(wc.src_qp, 0x00ab_cdef);
    assert_eq!(wc.wc_flags, WcFlags::WITH_IMM);
    // Network-order semantics: from_be gives the sender's value.
    assert_eq!(wc.imm_data.map(u32::from_be), Some(0xdead_beef));
    assert!(wc.is_success());

    let err = Cqe {
        wr_id: 5,
        qn: 1,
        opcode: rnic_driver::CQE_OP_RDMA_WRITE,
        status: WcStatus::RemAccessErr,
        syndrome: 0x62,
        ..Cqe::default()
    };
    let wc = WorkCompletion::from_cqe(&Cqe::decode(&err.encode(false)));
    assert_eq!(wc.status, WcStatus::RemAccessErr);
    assert_eq!(wc.vendor_err, 0x62);
    assert_eq!(wc.imm_data, None);
    assert_eq!(wc.wc_flags, WcFlags::empty());
    assert!(!wc.is_success());

    let odd = Cqe {
        opcode: 77,
        status: WcStatus::from_raw(200),
        ..Cqe::default()
    };
    let wc = WorkCompletion::from_cqe(&Cqe::decode(&odd.encode(true)));
    assert_eq!(wc.opcode, WcOpcode::Other(77));
    assert_eq!(wc.status, WcStatus::Other(200));
    assert_eq!(WcOpcode::from_raw(0x40), WcOpcode::LocalDmaCopy);
    assert_eq!(WcOpcode::from_raw(128), WcOpcode::Recv);
    assert_eq!(WcOpcode::from_raw(0), WcOpcode::Send);
}

// ---------------------------------------------------------------- post_recv

#[test]
fn post_recv_layout_doorbell_and_retirement() {
    let dev = FakeDev::new(4);
    let ctx = open(&dev);
    let pd = ctx.alloc_pd().unwrap();
    let scq = ctx.create_cq(8).unwrap();
    let rcq = ctx.create_cq(8).unwrap();
    let _first = create_qp(&ctx, &pd, &scq, cap(2, 0), false);
    let mut qp = ctx
        .create_qp(
            &pd,
            &QpInitAttr {
                send_cq: &scq,
                recv_cq: &rcq,
                cap: cap(4, 2),
                qp_type: QpType::Rc,
                sq_sig_all: false,
            },
        )
        .unwrap();
    let (qpn, slot) = (qp.qp_num(), u32::from(qp.slot()));
    let buf = ctx.alloc_dma(4096).unwrap();
    let mr = ctx
        .reg_mr(
            &pd,
            &buf,
            0,
            4096,
            AccessFlags::LOCAL_WRITE | AccessFlags::REMOTE_WRITE,
        )
        .unwrap();
    let sge = [mr.sge(64, 1024).unwrap()];

    let e = qp
        .post_recv(&RecvWr {
            wr_id: 1,
            sg_list: &sge,
        })
        .unwrap_err();
    assert!(
        matches!(
            e,
            VerbsError::WrongState {
                state: QpState::Reset,
                ..
            }
        ),
        "{e}"
    );
    modify(&mut qp, init_attr()).unwrap();
    dev.clear_log();
    qp.post_recv_list(&[
        RecvWr {
            wr_id: 0x77,
            sg_list: &sge,
        },
        RecvWr {
            wr_id: 0x78,
            sg_list: &[],
        },
    ])
    .unwrap();
    assert_eq!(dev.writes_to(reg::RQ_DB), vec![slot << 16 | 2]);
    let w = rq_wqe(&qp, 0);
    assert_eq!(
        w,
        RecvWqe {
            length: 1024,
            wr_id: 0x77,
            addr: buf.as_ptr() as u64 + 64,
            lkey: mr.lkey()
        }
    );
    let mut raw = [0u8; WQE_SIZE];
    qp.recv_queue().unwrap().ring().read(0, &mut raw);
    assert_eq!(&raw[0..4], &[0; 4]);
    assert_eq!(&raw[4..8], &1024u32.to_le_bytes());
    assert_eq!(&raw[8..16], &0x77u64.to_le_bytes());
    assert_eq!(&raw[40..44], &mr.lkey().to_le_bytes());
    assert_eq!(rq_wqe(&qp, 1).length, 0);

    let e = qp
        .post_recv(&RecvWr {
            wr_id: 3,
            sg_list: &sge,
        })
        .unwrap_err();
    assert!(matches!(e, VerbsError::RecvQueueFull(_)), "{e}");
    let two = [sge[0], sge[0]];
    let e = qp
        .post_recv(&RecvWr {
            wr_id: 3,
            sg_list: &two,
        })
        .unwrap_err();
    assert!(matches!(e, VerbsError::TooManySge { .. }), "{e}");

    // A receive completion on the receive CQ retires the RQ WQE, not the SQ.
    modify(&mut qp, rtr_attr()).unwrap();
    modify(&mut qp, rts_attr()).unwrap();
    let one = [Sge::default()];
    qp.post_send(&write_wr(9, &one, SendFlags::empty()))
        .unwrap();
    let mut nic = NicCq::of(&rcq);
    nic.push(&Cqe {
        wr_id: 0x77,
        byte_len: 1000,
        qn: qpn,
        opcode: rnic_driver::CQE_OP_RECV_RDMA_WITH_IMM,
        wqe_counter: 0,
        src_qp: 0x12_3456,
        flags: CQE_FLAG_RECV | CQE_FLAG_WITH_IMM,
        imm: 5,
        ..Cqe::default()
    });
    let wc = rcq.poll_one().unwrap().expect("completion");
    assert_eq!((wc.wr_id, wc.opcode), (0x77, WcOpcode::RecvRdmaWithImm));
    assert_eq!(qp.recv_outstanding(), 1);
    assert_eq!(qp.send_outstanding(), 1);
    qp.post_recv(&RecvWr {
        wr_id: 0x79,
        sg_list: &sge,
    })
    .unwrap();
    assert_eq!(rq_wqe(&qp, 2).wr_id, 0x79, "ring wrapped to slot 0");

    let mut no_rq = create_qp(&ctx, &pd, &scq, cap(2, 0), false);
    modify(&mut no_rq, init_attr()).unwrap();
    let e = no_rq
        .post_recv(&RecvWr {
            wr_id: 1,
            sg_list: &[],
        })
        .unwrap_err();
    assert!(matches!(e, VerbsError::NoRecvQueue(_)), "{e}");
}

// ---------------------------------------------------------------- reset, destroy

#[test]
fn reset_empties_the_queues() {
    let dev = FakeDev::new(4);
    let ctx = open(&dev);
    let pd = ctx.alloc_pd().unwrap();
    let cq = ctx.create_cq(8).unwrap();
    let mut qp = create_qp(&ctx, &pd, &cq, cap(4, 4), false);
    to_rts(&mut qp);
    let sg = [Sge::default()];
    qp.post_send(&write_wr(1, &sg, SendFlags::empty())).unwrap();
    qp.post_recv(&RecvWr {
        wr_id: 2,
        sg_list: &[],
    })
    .unwrap();
    dev.clear_log();
    qp.modify(&QpAttr::default(), M::STATE).unwrap();
    let c = dev.commits();
    assert_eq!((c[0].op, c[0].get(reg::QP_ATTR) & 7), (2, 0));
    // The send queue is enabled again (NIC indices back to 0).
    assert_eq!(dev.writes_to(reg::Q_CMD), vec![1]);
    assert_eq!((qp.send_outstanding(), qp.recv_outstanding()), (0, 0));
    to_rts(&mut qp);
    dev.clear_log();
    qp.post_send(&write_wr(3, &sg, SendFlags::empty())).unwrap();
    assert_eq!(dev.writes_to(reg::SQ_DB), vec![1]);
    assert_eq!(sq_wqe(&qp, 0).wr_id, 3);
}

#[test]
fn dropping_a_qp_resets_it_and_frees_its_queues() {
    let dev = FakeDev::new(2);
    let ctx = open(&dev);
    let pd = ctx.alloc_pd().unwrap();
    let cq = ctx.create_cq(8).unwrap();
    let mut qp = create_qp(&ctx, &pd, &cq, cap(4, 4), false);
    to_rts(&mut qp);
    let sq_bus = qp.send_queue().unwrap().ring().bus_addr();
    let rq_bus = qp.recv_queue().unwrap().bus_addr();
    dev.clear_log();
    qp.destroy().unwrap();
    let c = dev.commits();
    assert_eq!((c[0].qpn, c[0].op, c[0].get(reg::QP_ATTR) & 7), (0, 2, 0));
    assert_eq!(dev.writes_to(reg::Q_CMD), vec![2]);
    assert_eq!(dev.freed(), vec![sq_bus, rq_bus]);
    // The queue number is free again.
    let a = create_qp(&ctx, &pd, &cq, cap(4, 4), false);
    let b = create_qp(&ctx, &pd, &cq, cap(4, 4), false);
    assert_eq!((a.qp_num(), b.qp_num()), (0, 1));
    drop(a);
    assert_eq!(create_qp(&ctx, &pd, &cq, cap(4, 0), false).qp_num(), 0);
}

#[test]
fn objects_of_another_context_are_refused() {
    let dev = FakeDev::new(4);
    let ctx = open(&dev);
    let pd = ctx.alloc_pd().unwrap();
    let cq = ctx.create_cq(4).unwrap();
    let dev2 = FakeDev::new(4);
    let ctx2 = open(&dev2);
    let cq2 = ctx2.create_cq(4).unwrap();
    let e = ctx
        .create_qp(
            &pd,
            &QpInitAttr {
                send_cq: &cq,
                recv_cq: &cq2,
                cap: cap(2, 2),
                qp_type: QpType::Rc,
                sq_sig_all: false,
            },
        )
        .unwrap_err();
    assert!(matches!(e, VerbsError::ForeignObject(_)), "{e}");
    let buf = ctx.alloc_dma(64).unwrap();
    let mr = ctx.reg_mr(&pd, &buf, 0, 64, AccessFlags::empty()).unwrap();
    assert!(matches!(
        ctx2.dereg_mr(mr),
        Err(VerbsError::ForeignObject(_))
    ));
}

#[test]
fn transition_table_matches_ib() {
    use QpState::*;
    let all = [Reset, Init, Rtr, Rts, Sqd, Sqe, Err];
    for s in all {
        assert_eq!(rc_transition(s, Reset), Some((M::empty(), M::empty())));
        assert_eq!(rc_transition(s, Err), Some((M::empty(), M::empty())));
    }
    let valid: Vec<_> = all
        .iter()
        .flat_map(|&a| all.iter().map(move |&b| (a, b)))
        .filter(|&(a, b)| b != Reset && b != Err && rc_transition(a, b).is_some())
        .collect();
    assert_eq!(
        valid,
        vec![
            (Reset, Init),
            (Init, Init),
            (Init, Rtr),
            (Rtr, Rts),
            (Rts, Rts),
            (Rts, Sqd),
            (Sqd, Rts)
        ]
    );
}

/// A build that serves RDMA READ (`id.caps` bit 7) grants up to
/// `MAX_DEST_RD_ATOMIC` incoming READs per QP and says so in
/// `query_device`; one without grants none; one that issues READs (bit 8)
/// says `MAX_RD_ATOMIC` outgoing.
#[test]
fn incoming_read_resources_follow_the_build() {
    for (caps, dest) in [
        (0x7F_u32, 0_u8),
        (0xFF, crate::MAX_DEST_RD_ATOMIC),
        (0x1FF, crate::MAX_DEST_RD_ATOMIC),
    ] {
        let dev = FakeDev::new(4);
        dev.caps.set(caps);
        let ctx = open(&dev);
        let a = ctx.query_device().unwrap();
        assert_eq!(a.max_qp_rd_atom, u32::from(dest), "caps {caps:#x}");
        assert_eq!(a.max_res_rd_atom, u32::from(dest), "caps {caps:#x}");
        let init = if caps & 0x100 != 0 {
            u32::from(crate::MAX_RD_ATOMIC)
        } else {
            0
        };
        assert_eq!(a.max_qp_init_rd_atom, init, "caps {caps:#x}");
        let pd = ctx.alloc_pd().unwrap();
        let cq = ctx.create_cq(8).unwrap();
        let mut qp = create_qp(&ctx, &pd, &cq, cap(4, 4), false);
        modify(&mut qp, init_attr()).unwrap();
        let (rtr, m) = rtr_attr();
        let Err(VerbsError::InvalidAttribute { attr, .. }) = qp.modify(
            &QpAttr {
                max_dest_rd_atomic: dest + 1,
                ..rtr
            },
            m,
        ) else {
            panic!("caps {caps:#x}: max_dest_rd_atomic {} taken", dest + 1);
        };
        assert_eq!(attr, "max_dest_rd_atomic");
        qp.modify(
            &QpAttr {
                max_dest_rd_atomic: dest,
                ..rtr
            },
            m,
        )
        .unwrap();
        assert_eq!(qp.query_qp().unwrap().max_dest_rd_atomic, dest);
    }
}

/// A build that executes atomics as a responder (`id.caps` bit 9) says
/// `IBV_ATOMIC_HCA`, registers MRs and sets QPs with REMOTE_ATOMIC (MR
/// access bit 3, `qp_attr.remote_atomic`); one without refuses both with
/// EINVAL naming the bit. Atomics share the READ responder's resources, so
/// the READ limits do not move.
#[test]
fn atomics_follow_the_build() {
    for caps in [0x7F_u32, 0xFF, 0x27F, 0x3FF] {
        let atomic = caps & (1 << 9) != 0;
        let dev = FakeDev::new(4);
        dev.caps.set(caps);
        let ctx = open(&dev);
        let a = ctx.query_device().unwrap();
        let want = if atomic {
            AtomicCap::Hca
        } else {
            AtomicCap::None
        };
        assert_eq!(a.atomic_cap, want, "caps {caps:#x}");
        let dest = if caps & (1 << 7) != 0 {
            u32::from(crate::MAX_DEST_RD_ATOMIC)
        } else {
            0
        };
        assert_eq!(a.max_qp_rd_atom, dest, "caps {caps:#x}");
        assert_eq!(a.max_res_rd_atom, dest, "caps {caps:#x}");

        // Memory regions: REMOTE_ATOMIC needs LOCAL_WRITE on any build.
        let pd = ctx.alloc_pd().unwrap();
        let buf = ctx.alloc_dma(4096).unwrap();
        dev.clear_log();
        let e = ctx
            .reg_mr(&pd, &buf, 0, 64, AccessFlags::REMOTE_ATOMIC)
            .unwrap_err();
        assert!(matches!(e, VerbsError::InvalidAccess { .. }), "{e}");
        assert!(e.to_string().contains("LOCAL_WRITE"), "{e}");
        let access = AccessFlags::LOCAL_WRITE | AccessFlags::REMOTE_ATOMIC;
        match ctx.reg_mr(&pd, &buf, 0, 64, access) {
            Ok(mr) => {
                assert!(atomic, "caps {caps:#x}: REMOTE_ATOMIC MR taken");
                assert_eq!(mr.access(), access);
                assert_eq!(
                    dev.writes_to(reg::MR_ATTR),
                    vec![u32::from(pd.pd_num()) | 0x9 << 16],
                    "access[19:16] carries REMOTE_ATOMIC as bit 3"
                );
            }
            Err(e) => {
                assert!(!atomic, "caps {caps:#x}: {e}");
                assert!(matches!(e, VerbsError::InvalidAccess { .. }), "{e}");
                assert_eq!(e.errno(), errno::EINVAL);
                assert!(e.to_string().contains("id.caps bit 9"), "{e}");
                assert!(dev.writes().is_empty(), "nothing written");
            }
        }

        // Queue pairs: REMOTE_ATOMIC in qp_access_flags.
        let cq = ctx.create_cq(8).unwrap();
        let mut qp = create_qp(&ctx, &pd, &cq, cap(4, 4), false);
        let (init, m) = init_attr();
        let flags = AccessFlags::REMOTE_WRITE | AccessFlags::REMOTE_ATOMIC;
        dev.clear_log();
        let res = qp.modify(
            &QpAttr {
                qp_access_flags: flags,
                ..init
            },
            m,
        );
        if !atomic {
            let Err(e) = res else {
                panic!("caps {caps:#x}: REMOTE_ATOMIC QP access taken");
            };
            let VerbsError::InvalidAttribute { attr, .. } = &e else {
                panic!("caps {caps:#x}: {e}");
            };
            assert_eq!(*attr, "qp_access_flags");
            assert_eq!(e.errno(), errno::EINVAL);
            assert!(e.to_string().contains("id.caps bit 9"), "{e}");
            assert!(dev.commits().is_empty(), "nothing programmed");
            assert_eq!(qp.cached_state(), QpState::Reset);
            continue;
        }
        res.unwrap();
        let c = dev.commits();
        assert_eq!(c.len(), 1);
        let qa = c[0].get(reg::QP_ATTR);
        assert_eq!(qa & 7, 1, "INIT");
        assert_eq!(qa >> 8 & 1, 1, "remote_write");
        assert_eq!(qa >> 9 & 1, 0, "remote_read");
        assert_eq!(qa >> 10 & 1, 1, "remote_atomic");
        assert_eq!(qp.query_qp().unwrap().qp_access_flags, flags);
        modify(&mut qp, rtr_attr()).unwrap();
        modify(&mut qp, rts_attr()).unwrap();
        assert_eq!(
            dev.commits().last().unwrap().get(reg::QP_ATTR) >> 10 & 1,
            1,
            "kept through RTR and RTS"
        );
        // RTS -> RTS takes it away again.
        qp.modify(
            &QpAttr {
                qp_access_flags: AccessFlags::REMOTE_WRITE,
                ..QpAttr::default()
            },
            M::ACCESS_FLAGS,
        )
        .unwrap();
        assert_eq!(dev.commits().last().unwrap().get(reg::QP_ATTR) >> 10 & 1, 0);
        assert_eq!(
            qp.query_qp().unwrap().qp_access_flags,
            AccessFlags::REMOTE_WRITE
        );
    }
}

/// Atomics go through `post_atomic` (an `AtomicWr` carries the operands):
/// on a build that issues them (`id.verbs` bit 6) the WQE holds the
/// opcode, the 8-byte local buffer, the remote address and key and the
/// operands at 0x30 / 0x38; without bit 6, on an mp QP, with a local
/// buffer other than 8 bytes or a misaligned remote address it is
/// refused, and `post_send` with an atomic opcode is refused too.
#[test]
fn atomic_work_requests() {
    for (verbs, issues) in [(0x3F, false), (0x7F, true)] {
        let dev = FakeDev::new(4);
        dev.verbs.set(verbs);
        dev.caps.set(0x7F | 0x100);
        let ctx = open(&dev);
        let pd = ctx.alloc_pd().unwrap();
        let cq = ctx.create_cq(16).unwrap();
        let mut qp = create_qp(&ctx, &pd, &cq, cap(8, 8), false);
        modify(&mut qp, init_attr()).unwrap();
        modify(&mut qp, rtr_attr()).unwrap();
        let (rts, m) = rts_attr();
        qp.modify(
            &QpAttr {
                max_rd_atomic: 1,
                ..rts
            },
            m,
        )
        .unwrap();
        let wr = AtomicWr {
            wr_id: 77,
            op: AtomicOp::CmpAndSwp {
                compare: 0x0102_0304_0506_0708,
                swap: 0x1112_1314_1516_1718,
            },
            send_flags: SendFlags::SIGNALED,
            sge: Sge {
                addr: 0x1000,
                length: 8,
                lkey: 5,
            },
            remote_addr: 0x2008,
            rkey: 9,
        };
        if !issues {
            let e = qp.post_atomic(&wr).unwrap_err();
            assert_eq!(e.errno(), errno::EOPNOTSUPP, "{e}");
            assert!(e.to_string().contains("bit 6"), "{e}");
            continue;
        }
        qp.post_atomic(&wr).unwrap();
        let w = sq_wqe(&qp, 0);
        assert_eq!(w.opcode, WrOpcode::AtomicCmpAndSwp as u8);
        assert_eq!((w.length, w.local_addr, w.lkey), (8, 0x1000, 5));
        assert_eq!((w.remote_addr, w.rkey, w.wr_id), (0x2008, 9, 77));
        assert_eq!(
            (w.compare_add, w.swap),
            (0x0102_0304_0506_0708, 0x1112_1314_1516_1718)
        );
        qp.post_atomic(&AtomicWr {
            op: AtomicOp::FetchAndAdd { add: 3 },
            ..wr
        })
        .unwrap();
        let w = sq_wqe(&qp, 1);
        assert_eq!(w.opcode, WrOpcode::AtomicFetchAndAdd as u8);
        assert_eq!((w.compare_add, w.swap), (3, 0));
        for (bad, what) in [
            (
                AtomicWr {
                    sge: Sge {
                        length: 16,
                        ..wr.sge
                    },
                    ..wr
                },
                "8 bytes",
            ),
            (
                AtomicWr {
                    remote_addr: 0x2004,
                    ..wr
                },
                "aligned",
            ),
        ] {
            let e = qp.post_atomic(&bad).unwrap_err();
            assert_eq!(e.errno(), errno::EINVAL, "{e}");
            assert!(e.to_string().contains(what), "{e}");
        }
        let e = qp
            .post_send(&SendWr {
                wr_id: 1,
                opcode: WrOpcode::AtomicFetchAndAdd,
                send_flags: SendFlags::empty(),
                sg_list: &[],
                imm_data: None,
                rdma: None,
            })
            .unwrap_err();
        assert_eq!(e.errno(), errno::EINVAL, "{e}");
        assert!(e.to_string().contains("post_atomic"), "{e}");
    }
}
