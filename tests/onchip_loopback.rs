//! The on-chip loopback and fault injection (`port.lb_*`,
//! `hw/rtl/port_loopback_faults.v`): one NIC, no peer, its QPs talking to
//! each other through the loopback, with frames dropped and reordered on
//! the chip; the torture test stays clean and the faults really happened.
//! (On a board this is how a lab with one card runs the torture profiles.)

use rnic_sim::{SimWorld, WorldConfig};
use rnic_torture::torture::{self, NoHooks, RunInfo};
use rnic_torture::PortAddr;
use rnic_verbs::{Context, PortFaults};

fn one_nic(data_w: u32, seed: u64) -> (SimWorld, Context<rnic_sim::SimDevice>, PortAddr) {
    let world = SimWorld::new(WorldConfig {
        nics: 1,
        data_w,
        seed,
        ..WorldConfig::default()
    })
    .unwrap();
    let ctx = Context::open(world.device(0)).unwrap();
    let addr = PortAddr {
        mac: [0x02, 0, 0, 0, 0, 0x77],
        ip: "10.0.0.7".parse().unwrap(),
    };
    ctx.set_port_addr(addr.mac, addr.ip).unwrap();
    (world, ctx, addr)
}

#[test]
fn torture_through_the_onchip_loopback_with_faults_is_clean() {
    for (w, mp) in [(64, false), (256, true)] {
        let (world, ctx, addr) = one_nic(w, 21);
        ctx.set_port_faults(&PortFaults {
            loopback: true,
            drop_rate: 0.01,
            reorder_rate: 0.05,
            seed: 99,
        })
        .unwrap();
        let cfg = rnic_torture::Config {
            seed: 21,
            messages: 150,
            qps: 2,
            max_size: 4096,
            mp,
            spray_log: if mp { 3 } else { 0 },
            ..Default::default()
        };
        let info = RunInfo {
            fabric: "on-chip loopback".into(),
            data_w: w,
        };
        let r = torture::run(&ctx, addr, &ctx, addr, &cfg, &info, &mut NoHooks).unwrap();
        assert!(!r.failed(), "DATA_W={w} mp={mp}: {r:?}");
        assert_eq!(r.messages, 150);
        let c = ctx.query_port_counters().unwrap();
        assert!(c.lb_dropped > 0 && c.lb_reordered > 0, "no faults: {c:?}");
        assert!(c.tx_retransmits > 0, "nothing resent: {c:?}");
        // nothing left the chip: the fabric (no peer) saw no frame
        assert_eq!(
            world.fabric_stats().total.sent,
            0,
            "frames reached the port"
        );
    }
}

#[test]
fn bad_fault_rates_are_refused() {
    let (_w, ctx, _a) = one_nic(64, 3);
    for r in [-0.1, 1.0, f64::NAN] {
        let e = ctx
            .set_port_faults(&PortFaults {
                drop_rate: r,
                ..PortFaults::default()
            })
            .unwrap_err();
        assert!(e.to_string().contains("rate"), "{e}");
    }
}

/// One NIC talking to itself holds both sides' memory regions in its one
/// MR table (`id.mrs`): the torture registers half of it per side.
#[test]
fn both_sides_on_one_nic_share_its_mr_table() {
    let (_w, ctx, _a) = one_nic(64, 4);
    assert_eq!(ctx.nic().id().mrs, 64);
    assert_eq!(torture::regions_per_side(&ctx, &ctx), 32);
}
