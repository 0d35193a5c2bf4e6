//! Waiting for completions while the device advances.

use rnic_device::Device;
use rnic_verbs::{CompletionQueue, WorkCompletion};

use crate::Result;

/// Polls `cq` until `n` completions arrived or `budget` polls in a row found
/// none (each such poll lets `dev` advance by one [`Device::idle`]).
/// Returns what arrived, possibly fewer than `n`.
pub fn wait_wc<D: Device>(
    dev: &D,
    cq: &CompletionQueue<D>,
    n: usize,
    budget: u64,
) -> Result<Vec<WorkCompletion>> {
    let mut out = Vec::new();
    let mut wc = [WorkCompletion::default(); 16];
    let mut idle = 0;
    while out.len() < n && idle < budget {
        let k = cq.poll(&mut wc)?;
        if k == 0 {
            idle += 1;
            dev.idle();
        } else {
            idle = 0;
            out.extend_from_slice(&wc[..k]);
        }
    }
    Ok(out)
}
