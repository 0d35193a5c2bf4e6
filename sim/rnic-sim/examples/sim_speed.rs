//! Simulation speed in cycles per second, for each model width: one NIC
//! (idle, MMIO reads), and a two-NIC world with idle MACs, stepped serially
//! and on worker threads (`WorldConfig::parallel`) side by side.
//!
//! cargo run --release -p rnic-sim --example sim_speed [cycles] [single|world] [DATA_W]

use std::time::Instant;

use rnic_device::Device;
use rnic_sim::{
    FabricConfig, Parallel, RootComplexConfig, SimConfig, SimDevice, SimWorld, WorldConfig,
    MODEL_WIDTHS,
};

fn main() {
    let cycles: u64 = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(2_000_000);
    let only = std::env::args().nth(2).unwrap_or_default();
    let widths: Vec<u32> = match std::env::args().nth(3).and_then(|s| s.parse().ok()) {
        Some(w) => vec![w],
        None => MODEL_WIDTHS.to_vec(),
    };
    for &data_w in &widths {
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
    if only != "single" {
        if let Ok(v) = std::env::var(Parallel::ENV) {
            println!(
                "note: {}={v} overrides the serial/parallel setting of every world",
                Parallel::ENV
            );
        }
    }
    for &data_w in &widths {
        if only == "single" {
            break;
        }
        for (name, rc) in [
            ("bench", RootComplexConfig::bench()),
            ("default", RootComplexConfig::default()),
        ] {
            let mut rate = [0.0f64; 2];
            let mut par_cycles = 0;
            let mut taken_back = 0;
            for (k, parallel) in [Parallel::Off, Parallel::On].into_iter().enumerate() {
                let world = SimWorld::new(WorldConfig {
                    nics: 2,
                    data_w,
                    seed: 1,
                    root_complex: rc.clone(),
                    fabric: FabricConfig::profile("hostile").unwrap(),
                    parallel,
                    ..WorldConfig::default()
                })
                .unwrap_or_else(|e| {
                    eprintln!("{e}");
                    std::process::exit(1);
                });
                let p0 = world.parallel_cycles();
                let t0 = world.with_world(|w| w.worker_cycles_taken_back());
                let t = Instant::now();
                world.run(cycles);
                rate[k] = cycles as f64 / t.elapsed().as_secs_f64();
                if parallel == Parallel::On {
                    par_cycles = world.parallel_cycles() - p0;
                    taken_back = world.with_world(|w| w.worker_cycles_taken_back()) - t0;
                }
            }
            println!(
                "DATA_W={data_w:<3} rc={name:<7} 2-NIC world, idle MACs: serial {:>6.0} kcycles/s, parallel {:>6.0} kcycles/s (x{:.2}; {:.0} NIC-kcycles/s; {} of {} cycles on threads, {} of those run by the caller for a late worker)",
                rate[0] / 1e3,
                rate[1] / 1e3,
                rate[1] / rate[0],
                2.0 * rate[1] / 1e3,
                par_cycles,
                cycles,
                taken_back
            );
        }
    }
}
