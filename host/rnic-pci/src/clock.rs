//! The clock of the hardware backends (see the crate docs, "Time").

use std::time::{Duration, Instant};

use crate::NOMINAL_CLOCK_MHZ;

/// The environment variable that sets the clock [`Device::now`] counts, in
/// MHz (default [`NOMINAL_CLOCK_MHZ`]).
///
/// [`Device::now`]: rnic_device::Device::now
pub const CLOCK_ENV: &str = "RNIC_PCI_CLOCK_MHZ";

/// The clock rate in MHz: [`CLOCK_ENV`] if it holds a positive number,
/// else [`NOMINAL_CLOCK_MHZ`]. A simulated NIC served to a guest (`rnic
/// vm`) runs a thousand times slower than a card, so the cycle budgets of
/// watchdogs and settling mean the same amount of the device's work only
/// when this says how fast it runs.
pub fn clock_mhz() -> f64 {
    std::env::var(CLOCK_ENV)
        .ok()
        .and_then(|v| v.trim().parse::<f64>().ok())
        .filter(|m| m.is_finite() && *m > 0.0)
        .unwrap_or(NOMINAL_CLOCK_MHZ)
}

/// Counts cycles of a clock of `mhz` since it was made.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Clock {
    start: Instant,
    mhz: f64,
}

impl Clock {
    /// A clock at [`clock_mhz`].
    pub(crate) fn new() -> Self {
        Self {
            start: Instant::now(),
            mhz: clock_mhz(),
        }
    }

    pub(crate) fn now(&self) -> u64 {
        cycles(self.start.elapsed(), self.mhz)
    }

    pub(crate) fn mhz(&self) -> f64 {
        self.mhz
    }

    /// The duration of `cycles` cycles of this clock.
    pub(crate) fn duration(&self, cycles: u64) -> Duration {
        duration(cycles, self.mhz)
    }
}

/// The [`Device`](rnic_device::Device) methods both hardware backends
/// share, inside their `impl Device`: BAR0 through the `bar` field (a
/// [`Bar32`](crate::mmio::Bar32)), time from the `clock` field (at
/// [`clock_mhz`]), and `idle` yielding the CPU.
macro_rules! hardware_device_common {
    () => {
        fn bar_len(&self) -> u64 {
            $crate::mmio::Bar32::size(&self.bar)
        }

        fn read32(&self, offset: u64) -> rnic_device::Result<u32> {
            $crate::mmio::Bar32::read32(&self.bar, offset)
        }

        fn write32(&self, offset: u64, value: u32) -> rnic_device::Result<()> {
            $crate::mmio::Bar32::write32(&self.bar, offset, value)
        }

        /// A polling loop gives the CPU away: the device runs on its own.
        fn idle(&self) {
            std::thread::yield_now();
        }

        fn now(&self) -> u64 {
            self.clock.now()
        }

        fn clock_mhz(&self) -> f64 {
            self.clock.mhz()
        }
    };
}
pub(crate) use hardware_device_common;

/// Cycles of a `mhz` clock in `d`.
pub(crate) fn cycles(d: Duration, mhz: f64) -> u64 {
    (d.as_nanos() as f64 * mhz / 1000.0) as u64
}

/// The duration of `cycles` cycles of a `mhz` clock.
pub(crate) fn duration(cycles: u64, mhz: f64) -> Duration {
    Duration::from_secs_f64(cycles as f64 / (mhz * 1e6))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cycles_of_250_mhz() {
        assert_eq!(cycles(Duration::from_micros(1), NOMINAL_CLOCK_MHZ), 250);
        assert_eq!(
            duration(250_000_000, NOMINAL_CLOCK_MHZ),
            Duration::from_secs(1)
        );
        // a simulated NIC behind vfio-user: 0.1 MHz
        assert_eq!(cycles(Duration::from_secs(2), 0.1), 200_000);
        assert_eq!(duration(100_000, 0.1), Duration::from_secs(1));
        let c = Clock {
            start: Instant::now(),
            mhz: NOMINAL_CLOCK_MHZ,
        };
        let a = c.now();
        std::thread::sleep(Duration::from_millis(2));
        assert!(c.now() - a >= 500_000);
    }
}
