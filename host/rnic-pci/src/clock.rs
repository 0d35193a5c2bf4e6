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
