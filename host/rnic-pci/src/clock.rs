//! The nominal clock of the hardware backends (see the crate docs, "Time").

use std::time::{Duration, Instant};

use crate::NOMINAL_CLOCK_MHZ;

/// Counts cycles of [`NOMINAL_CLOCK_MHZ`] since it was made.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Clock {
    start: Instant,
}

impl Clock {
    pub(crate) fn new() -> Self {
        Self {
            start: Instant::now(),
        }
    }

    pub(crate) fn now(&self) -> u64 {
        cycles(self.start.elapsed())
    }
}

/// The [`Device`](rnic_device::Device) methods both hardware backends
/// share, inside their `impl Device`: BAR0 through the `bar` field (a
/// [`Bar32`](crate::mmio::Bar32)), time from the `clock` field at
/// [`NOMINAL_CLOCK_MHZ`], and `idle` yielding the CPU.
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
            $crate::NOMINAL_CLOCK_MHZ
        }
    };
}
pub(crate) use hardware_device_common;

/// Nominal cycles in `d`.
pub(crate) fn cycles(d: Duration) -> u64 {
    (d.as_nanos() * (NOMINAL_CLOCK_MHZ as u128) / 1000) as u64
}

/// The duration of `cycles` nominal cycles.
pub(crate) fn duration(cycles: u64) -> Duration {
    Duration::from_nanos((u128::from(cycles) * 1000 / NOMINAL_CLOCK_MHZ as u128) as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cycles_of_250_mhz() {
        assert_eq!(cycles(Duration::from_micros(1)), 250);
        assert_eq!(duration(250_000_000), Duration::from_secs(1));
        let c = Clock::new();
        let a = c.now();
        std::thread::sleep(Duration::from_millis(2));
        assert!(c.now() - a >= 500_000);
    }
}
