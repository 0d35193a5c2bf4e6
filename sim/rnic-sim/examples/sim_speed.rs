//! Simulation speed in cycles per second, for each model width: one NIC
//! (idle, MMIO reads), and a two-NIC world with idle MACs.
//!
//! cargo run --release -p rnic-sim --example sim_speed [cycles] [single|world]

use std::time::Instant;

use rnic_device::Device;
use rnic_sim::{
    FabricConfig, RootComplexConfig, SimConfig, SimDevice, SimWorld, WorldConfig, MODEL_WIDTHS,
};

fn main() {
    let cycles: u64 = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(2_000_000);
    let only = std::env::args().nth(2).unwrap_or_default();
    for &data_w in MODEL_WIDTHS {
        if only == "world" {
            break;
        }
        for (name, rc) in [
            ("bench", RootComplexConfig::bench()),
            ("default", RootComplexConfig::default()),
        ] {
            let dev = match SimDevice::new(SimConfig {
                data_w,
                seed: 1,
                root_complex: rc,
                ..SimConfig::default()
            }) {
                Ok(d) => d,
                Err(e) => {
                    eprintln!("{e}");
                    std::process::exit(1);
                }
            };
            let t = Instant::now();
            dev.run(cycles);
            let idle = cycles as f64 / t.elapsed().as_secs_f64();
            // MMIO read round trips (exercise the TLP paths every few cycles).
            let t = Instant::now();
            let c0 = dev.now();
            let mut n = 0u64;
            while dev.now() - c0 < cycles / 4 {
                dev.read32(0x0C).unwrap();
                n += 1;
            }
            let mmio = (dev.now() - c0) as f64 / t.elapsed().as_secs_f64();
            println!(
                "DATA_W={data_w:<3} rc={name:<7} idle: {:>6.0} kcycles/s   MMIO reads: {:>6.0} kcycles/s ({} reads, {:.0} cycles each)",
                idle / 1e3,
                mmio / 1e3,
                n,
                (dev.now() - c0) as f64 / n as f64
            );
        }
    }
    for &data_w in MODEL_WIDTHS {
        if only == "single" {
            break;
        }
        for (name, rc) in [
            ("bench", RootComplexConfig::bench()),
            ("default", RootComplexConfig::default()),
        ] {
            let world = SimWorld::new(WorldConfig {
                nics: 2,
                data_w,
                seed: 1,
                root_complex: rc,
                fabric: FabricConfig::profile("hostile").unwrap(),
                ..WorldConfig::default()
            })
            .unwrap_or_else(|e| {
                eprintln!("{e}");
                std::process::exit(1);
            });
            let t = Instant::now();
            world.run(cycles);
            let idle = cycles as f64 / t.elapsed().as_secs_f64();
            println!(
                "DATA_W={data_w:<3} rc={name:<7} 2-NIC world, idle MACs: {:>6.0} kcycles/s ({:.0} NIC-kcycles/s)",
                idle / 1e3,
                2.0 * idle / 1e3
            );
        }
    }
}
