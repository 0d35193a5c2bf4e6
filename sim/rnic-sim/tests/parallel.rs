//! `WorldConfig::parallel`: the NICs of a world stepped on worker threads
//! give exactly the serial world's run (RTL traffic over a hostile fabric,
//! compared cycle, counter, frame and pcap byte for byte), and a world whose
//! NICs could touch the same host memory (or that has stand-in models or a
//! flash) falls back to the serial path. Skipped without the RTL.

use std::net::Ipv4Addr;
use std::path::Path;
use std::sync::Arc;

use rnic_device::{Device, HostMemory};
use rnic_sim::{
    Access, DmaMemory, FabricConfig, Model, Parallel, PortsIn, PortsOut, RootComplexConfig,
    SimDevice, SimWorld, SpiFlashConfig, WorldConfig, MODEL_WIDTHS, RTL_AVAILABLE,
};
use rnic_verbs::{
    AccessFlags, AhAttr, CompletionQueue, Context, Mtu, QpAttr, QpAttrMask, QpCap, QpInitAttr,
    QpState, QpType, RecvWr, SendFlags, SendWr, WcStatus, WorkCompletion, WrOpcode,
};

fn rtl() -> bool {
    if !RTL_AVAILABLE {
        eprintln!("skipped: rnic-sim was built without hw/rtl/rnic_core.v");
    }
    RTL_AVAILABLE
}

/// `RNIC_SIM_THREADS` overrides every world's setting: the checks of which
/// path a world took only hold without it.
fn env_override() -> bool {
    let set = Parallel::from_env().unwrap().is_some();
    if set {
        eprintln!("RNIC_SIM_THREADS is set: not checking which path the worlds took");
    }
    set
}

const MACS: [[u8; 6]; 2] = [[0x02, 0, 0, 0, 0, 0xA1], [0x02, 0, 0, 0, 0, 0xB2]];
const IPS: [Ipv4Addr; 2] = [Ipv4Addr::new(10, 0, 0, 1), Ipv4Addr::new(10, 0, 0, 2)];
const MSGS: u64 = 16;
const SLOT: usize = 2048;

/// Everything a run leaves behind that must not depend on the threads.
#[derive(Debug, PartialEq)]
struct Outcome {
    cycles: u64,
    fabric: String,
    paths: String,
    macs: String,
    root_complexes: String,
    digests: [u64; 2],
    wcs: String,
    received: Vec<u8>,
    window: String,
    pcap: Vec<u8>,
}

/// Polls `cq` until `n` completions arrived (the world idles between
/// empty polls).
fn poll_all(dev: &SimDevice, cq: &CompletionQueue<SimDevice>, n: usize) -> Vec<WorkCompletion> {
    let mut out = Vec::new();
    let mut wc = [WorkCompletion::default(); 16];
    for _ in 0..200_000 {
        if out.len() >= n {
            break;
        }
        let k = cq.poll(&mut wc).unwrap();
        if k == 0 {
            dev.idle();
        }
        out.extend_from_slice(&wc[..k]);
    }
    out
}

/// The `hostile` profile (jitter, duplicates, reordering) with more loss,
/// corruption and bad frames: retransmissions after NAKs and timeouts.
fn fabric() -> FabricConfig {
    let mut f = FabricConfig::profile("hostile").unwrap();
    for p in &mut f.paths {
        p.drop_rate = 0.04;
        p.corrupt_rate = 0.02;
        p.bad_frame_rate = 0.01;
    }
    f
}

/// Two RTL NICs on a hostile fabric ([`fabric`]), `MSGS` SENDs of 1..2 KiB
/// from NIC 0 to NIC 1 over one RC connection with 256-byte MTU, captured
/// to `pcap`. SEND carries no host addresses on the wire, so two worlds of
/// one process (whose buffers lie at different virtual addresses) put the
/// same bytes on it. Host calls are single steps (MMIO reads) and batches
/// (`idle`, `run`) mixed. Returns the outcome and the world's
/// `parallel_cycles`.
fn run(parallel: Parallel, data_w: u32, seed: u64, pcap: &Path) -> (Outcome, u64) {
    let world = SimWorld::new(WorldConfig {
        nics: 2,
        data_w,
        seed,
        fabric: fabric(),
        pcap: Some(pcap.to_path_buf()),
        pcap_window: 32,
        parallel,
        ..WorldConfig::default()
    })
    .unwrap();
    let ctx: Vec<_> = (0..2)
        .map(|i| {
            let c = Context::open(world.device(i)).unwrap();
            c.set_port_addr(MACS[i], IPS[i]).unwrap();
            c
        })
        .collect();
    let len = MSGS as usize * SLOT;
    let mut ends: Vec<_> = ctx
        .iter()
        .map(|c| {
            let pd = c.alloc_pd().unwrap();
            let cq = c.create_cq(64).unwrap();
            let qp = c
                .create_qp(
                    &pd,
                    &QpInitAttr {
                        send_cq: &cq,
                        recv_cq: &cq,
                        cap: QpCap {
                            max_send_wr: 16,
                            max_recv_wr: 16,
                            max_send_sge: 1,
                            max_recv_sge: 1,
                        },
                        qp_type: QpType::Rc,
                        sq_sig_all: false,
                    },
                )
                .unwrap();
            let buf = c.alloc_dma(len).unwrap();
            let mr = c
                .reg_mr(&pd, &buf, 0, len, AccessFlags::LOCAL_WRITE)
                .unwrap();
            (pd, cq, qp, buf, mr)
        })
        .collect();
    let qpns = [ends[0].2.qp_num(), ends[1].2.qp_num()];
    let psns = [0x100u32, 0x2000];
    for (i, e) in ends.iter_mut().enumerate() {
        let peer = 1 - i;
        let qp = &mut e.2;
        type M = QpAttrMask;
        qp.modify(
            &QpAttr {
                qp_state: QpState::Init,
                pkey_index: 0,
                port_num: 1,
                qp_access_flags: AccessFlags::empty(),
                ..Default::default()
            },
            M::STATE | M::PKEY_INDEX | M::PORT | M::ACCESS_FLAGS,
        )
        .unwrap();
        qp.modify(
            &QpAttr {
                qp_state: QpState::Rtr,
                path_mtu: Mtu::Mtu256,
                dest_qp_num: qpns[peer],
                rq_psn: psns[peer],
                ah_attr: AhAttr {
                    dmac: MACS[peer],
                    dip: IPS[peer],
                    udp_sport: 0xC000 | ((qpns[peer] as u16 & 0xff) << 6),
                    spray_log: 0,
                    mp_window: 0,
                },
                min_rnr_timer: 1,
                ..Default::default()
            },
            M::STATE
                | M::AV
                | M::PATH_MTU
                | M::DEST_QPN
                | M::RQ_PSN
                | M::MAX_DEST_RD_ATOMIC
                | M::MIN_RNR_TIMER,
        )
        .unwrap();
        qp.modify(
            &QpAttr {
                qp_state: QpState::Rts,
                sq_psn: psns[i],
                // 4.096 us * 2^3 = 8,192 cycles: lost tails retry soon.
                timeout: 3,
                retry_cnt: 7,
                rnr_retry: 7,
                ..Default::default()
            },
            M::STATE | M::SQ_PSN | M::TIMEOUT | M::RETRY_CNT | M::RNR_RETRY | M::MAX_QP_RD_ATOMIC,
        )
        .unwrap();
    }
    let (a, b) = {
        let (x, y) = ends.split_at_mut(1);
        (&mut x[0], &mut y[0])
    };
    for m in 0..MSGS {
        let off = m as usize * SLOT;
        let sge = [b.4.sge(off, SLOT as u32).unwrap()];
        b.2.post_recv(&RecvWr {
            wr_id: 100 + m,
            sg_list: &sge,
        })
        .unwrap();
        let l = 1024 + (m as usize * 397) % 1024;
        let bytes: Vec<u8> = (0..l).map(|k| (k as u64 * 31 + m * 7) as u8).collect();
        a.3.write(off, &bytes);
        let sge = [a.4.sge(off, l as u32).unwrap()];
        a.2.post_send(&SendWr {
            wr_id: m,
            opcode: WrOpcode::Send,
            send_flags: SendFlags::SIGNALED,
            sg_list: &sge,
            imm_data: None,
            rdma: None,
        })
        .unwrap();
    }
    let recv = poll_all(&world.device(1), &b.1, MSGS as usize);
    let sent = poll_all(&world.device(0), &a.1, MSGS as usize);
    assert_eq!(recv.len(), MSGS as usize, "DATA_W={data_w}: receives");
    assert_eq!(sent.len(), MSGS as usize, "DATA_W={data_w}: sends");
    assert!(
        recv.iter()
            .chain(&sent)
            .all(|w| w.status == WcStatus::Success),
        "{recv:?} {sent:?}"
    );
    world.run(5000);
    world.stop_pcap().unwrap();
    // The workload is worth comparing: every kind of fault, retransmissions.
    let fs = world.fabric_stats().total;
    assert!(
        fs.dropped > 3
            && fs.corrupted > 0
            && fs.bad_frames > 0
            && fs.duplicated > 0
            && fs.reordered > 0,
        "DATA_W={data_w}: too few faults: {fs:?}"
    );
    let mut received = vec![0u8; len];
    b.3.read(0, &mut received);
    let devs = world.devices();
    for d in &devs {
        assert!(d.model_errors().is_empty(), "{:?}", d.model_errors());
        assert!(d.iommu_faults().is_empty(), "{:?}", d.iommu_faults());
    }
    let o = Outcome {
        cycles: world.now(),
        fabric: format!("{:?}", world.fabric_stats()),
        paths: format!(
            "{:?} {:?}",
            world.path_stats_from(0),
            world.path_stats_from(1)
        ),
        macs: format!("{:?} {:?}", world.mac_stats(0), world.mac_stats(1)),
        root_complexes: format!("{:?} {:?}", devs[0].stats(), devs[1].stats()),
        digests: [devs[0].digest(), devs[1].digest()],
        wcs: format!(
            "{:?}",
            recv.iter()
                .chain(&sent)
                .map(|w| (w.wr_id, w.status, w.opcode, w.byte_len, w.qp_num))
                .collect::<Vec<_>>()
        ),
        received,
        window: format!("{:?}", world.window()),
        pcap: std::fs::read(pcap).unwrap(),
    };
    (o, world.parallel_cycles())
}

#[test]
fn parallel_world_is_the_serial_world_bit_for_bit() {
    if !rtl() {
        return;
    }
    let env = env_override();
    let dir = std::env::temp_dir().join(format!("rnic-sim-parallel-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for &data_w in MODEL_WIDTHS {
        let seed = 7 + u64::from(data_w);
        let (serial, s_par) = run(Parallel::Off, data_w, seed, &dir.join("serial.pcapng"));
        let (parallel, p_par) = run(Parallel::On, data_w, seed, &dir.join("parallel.pcapng"));
        assert!(
            serial.pcap.len() > 20_000,
            "DATA_W={data_w}: {}",
            serial.fabric
        );
        if !env {
            assert_eq!(s_par, 0, "the serial world used threads");
            assert_eq!(
                p_par, parallel.cycles,
                "DATA_W={data_w}: every cycle of the parallel world on threads"
            );
        }
        // Field by field first, for a readable failure.
        assert_eq!(serial.cycles, parallel.cycles, "DATA_W={data_w}");
        assert_eq!(serial.digests, parallel.digests, "DATA_W={data_w}");
        assert_eq!(serial.fabric, parallel.fabric, "DATA_W={data_w}");
        assert_eq!(serial.wcs, parallel.wcs, "DATA_W={data_w}");
        assert!(
            serial.pcap == parallel.pcap,
            "DATA_W={data_w}: pcap bytes differ"
        );
        assert!(serial == parallel, "DATA_W={data_w}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Memory of another party: the world cannot tell what else maps it.
struct Foreign(HostMemory);

impl DmaMemory for Foreign {
    fn as_ptr(&self) -> *mut u8 {
        self.0.as_ptr()
    }
    fn len(&self) -> usize {
        self.0.len()
    }
}

#[test]
fn shared_or_foreign_memory_and_flash_keep_the_world_serial() {
    if !rtl() || env_override() {
        return;
    }
    let world = SimWorld::new(WorldConfig {
        nics: 2,
        root_complex: RootComplexConfig::bench(),
        parallel: Parallel::On,
        ..WorldConfig::default()
    })
    .unwrap();
    assert!(world.has_workers());
    // Runs `n` cycles, returns how many of them ran on the threads.
    let on_threads = |n: u64| {
        let p = world.parallel_cycles();
        world.run(n);
        world.parallel_cycles() - p
    };
    assert_eq!(world.parallel_cycles(), world.now(), "reset ran parallel");
    // Each NIC's own memory: parallel.
    let (a, b) = (world.device(0), world.device(1));
    let buf_a = a.alloc_dma(8192).unwrap();
    let _buf_b = b.alloc_dma(8192).unwrap();
    assert_eq!(on_threads(100), 100);
    // One HostMemory mapped into both root complexes: serial.
    let shared = Arc::new(HostMemory::new(4096).unwrap());
    let bus0 = world.with_world(|w| w.root_complex_mut(0).map(shared.clone(), false).unwrap());
    assert_eq!(on_threads(100), 100, "mapped into one NIC only");
    let bus1 = world.with_world(|w| w.root_complex_mut(1).map(shared.clone(), false).unwrap());
    assert_eq!(
        on_threads(100),
        0,
        "one memory in two NICs must stay serial"
    );
    // MMIO round trips (single steps) stay serial too.
    let p = world.parallel_cycles();
    assert_eq!(a.read32(0x0C).unwrap(), 0x524E_4943);
    assert_eq!(b.read32(0x0C).unwrap(), 0x524E_4943);
    assert_eq!(world.parallel_cycles(), p);
    // Unmapped from one of them: parallel again.
    world.with_world(|w| w.root_complex_mut(1).unmap(bus1).unwrap());
    assert_eq!(on_threads(100), 100);
    // Part of NIC 0's buffer mapped into NIC 1 at an address of its own
    // choosing (same bytes, another Arc): serial.
    let mem0 = world.with_world(|w| {
        w.root_complex(0)
            .iommu()
            .mappings()
            .iter()
            .find(|m| m.bus == buf_a.bus_addr())
            .unwrap()
            .memory()
            .clone()
    });
    world.with_world(|w| {
        w.root_complex_mut(1)
            .map_at(0x40_0000_0000, 4096, mem0, 4096, Access::READ_WRITE)
            .unwrap()
    });
    assert_eq!(on_threads(100), 0, "overlapping ranges must stay serial");
    world.with_world(|w| w.root_complex_mut(1).unmap(0x40_0000_0000).unwrap());
    assert_eq!(on_threads(100), 100);
    // Memory the world cannot vouch for, even in one NIC only: serial.
    let foreign: Arc<dyn DmaMemory> = Arc::new(Foreign(HostMemory::new(4096).unwrap()));
    world.with_world(|w| {
        w.root_complex_mut(0)
            .map_at(0x50_0000_0000, 4096, foreign, 0, Access::READ_WRITE)
            .unwrap()
    });
    assert_eq!(on_threads(100), 0, "foreign memory must stay serial");
    world.with_world(|w| w.root_complex_mut(0).unmap(0x50_0000_0000).unwrap());
    world.with_world(|w| w.root_complex_mut(0).unmap(bus0).unwrap());
    assert_eq!(on_threads(100), 100);
    // A flash on a NIC: serial.
    b.attach_flash(SpiFlashConfig::for_board("sim").unwrap())
        .unwrap();
    assert_eq!(on_threads(100), 0, "a NIC with a flash must stay serial");
}

/// A stand-in NIC that does nothing.
struct Idle(u32);

impl Model for Idle {
    fn data_w(&self) -> u32 {
        self.0
    }
    fn step(&mut self, _: &PortsIn, _: &mut PortsOut) {}
}

#[test]
fn stand_in_models_never_get_threads() {
    if env_override() {
        return;
    }
    let w = SimWorld::with_models(
        WorldConfig {
            parallel: Parallel::On,
            ..WorldConfig::default()
        },
        vec![Box::new(Idle(64)), Box::new(Idle(64))],
    )
    .unwrap();
    w.run(100);
    assert!(!w.has_workers());
    assert_eq!(w.parallel_cycles(), 0);
}

#[test]
fn one_nic_worlds_and_off_get_no_threads() {
    if !rtl() || env_override() {
        return;
    }
    let w = SimWorld::new(WorldConfig {
        nics: 1,
        parallel: Parallel::On,
        ..WorldConfig::default()
    })
    .unwrap();
    assert!(!w.has_workers());
    let w = SimWorld::new(WorldConfig::default()).unwrap();
    assert!(!w.has_workers(), "off by default");
}

#[test]
fn environment_values() {
    for (s, p) in [
        ("0", Parallel::Off),
        ("off", Parallel::Off),
        ("1", Parallel::On),
        (" ON ", Parallel::On),
        ("auto", Parallel::Auto),
    ] {
        assert_eq!(Parallel::parse(s).unwrap(), p, "{s:?}");
    }
    assert!(Parallel::parse("2").is_err());
    assert!(Parallel::parse("").is_err());
    assert_eq!(WorldConfig::default().parallel, Parallel::Off);
}
