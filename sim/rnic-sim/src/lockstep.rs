//! A pool of persistent worker threads that run one job per item of a
//! slice in lock-step: [`Lockstep::run`] offers items `1..` to the workers
//! (worker `k` always gets item `k + 1`), runs item 0 on the calling thread,
//! and returns when every item is done. The world steps its NICs with it
//! ([`crate::WorldConfig::parallel`]), one call per clock cycle, so the
//! hand-off must be cheap: one cache line written by the caller (the epoch),
//! one per worker written back (its claim and done epochs), no allocation,
//! no lock.
//!
//! Each item of a run is claimed exactly once, by its worker or, if the
//! worker has not claimed it by the time the caller is done with item 0, by
//! the caller, which then runs it itself (a compare-and-swap of the item's
//! claim epoch from the previous run's to this run's decides). So a worker
//! that is not on a CPU when a run starts (an oversubscribed machine) costs
//! the caller a compare-and-swap, not a scheduler time slice. Which thread
//! runs an item changes nothing in what the item computes.
//!
//! Waiting: spin with [`std::hint::spin_loop`] for a bounded number of
//! rounds, then [`std::thread::yield_now`]; an idle worker (the caller is
//! doing host work, or the world runs serially for a while) finally parks,
//! and the caller unparks it with the next epoch. A panic in a job is caught
//! and resumed on the calling thread once every item of the run is done.

use std::any::Any;
use std::hint::spin_loop;
use std::marker::PhantomData;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::{self, JoinHandle};

/// Rounds of `spin_loop` before a waiter starts yielding.
const SPIN: u32 = 1 << 12;
/// Rounds of `yield_now` (after the spinning) before an idle worker parks.
const YIELD: u32 = 1 << 11;
/// Stack of a worker thread (the Verilated models' eval may use deep frames).
const STACK: usize = 16 << 20;

/// Keeps what the caller and each worker write on separate cache lines.
#[repr(align(128))]
struct Padded<T>(T);

/// What the caller publishes for a run.
struct Go<T> {
    /// Incremented by the caller to start a run (the workers' signal).
    epoch: AtomicU64,
    /// Item 1 of the run's slice (worker `k` takes `items.add(k)`).
    items: AtomicPtr<T>,
    /// Workers parked or about to park.
    sleepers: AtomicU32,
    /// Set (with a last epoch) when the pool is dropped.
    stop: AtomicBool,
}

/// One worker's item, as the worker and the caller see it.
struct Slot {
    /// The last run whose item was claimed (by the worker or the caller):
    /// run `e`'s item is claimed by moving it from `e - 1` to `e`.
    claimed: AtomicU64,
    /// The last run whose item the worker finished.
    done: AtomicU64,
}

struct Shared<T> {
    go: Padded<Go<T>>,
    slots: Vec<Padded<Slot>>,
    /// The first panic of a job on a worker.
    panic: Mutex<Option<Box<dyn Any + Send>>>,
    job: fn(&mut T),
}

/// Moves the shared state into a worker.
struct SendShared<T>(Arc<Shared<T>>);

// SAFETY: the only `T`s a worker reaches are the items the caller offers
// it through `Go::items` for one run; `Lockstep::run` holds `&mut` to all of
// them for the whole run, and an item is run by whichever thread claims it
// (one compare-and-swap wins per item and run); the caller touches a
// worker-claimed item again only after the worker has published that it is
// done with it (Release / Acquire on `done`), and a worker sees what the
// caller did to an item through the next run's epoch (SeqCst store /
// Acquire load). So every item is used by one thread at a time, with a
// happens-before edge between them, which is all a `T` that is not `Send`
// needs as long as it keeps no thread-affine state (thread-locals, `Rc`
// clones shared with other items): the caller's `job` must only touch such
// parts of an item (see `Lockstep::new`).
unsafe impl<T> Send for SendShared<T> {}

/// A pool of `workers` threads; see the module doc.
pub(crate) struct Lockstep<T> {
    shared: Arc<Shared<T>>,
    threads: Vec<JoinHandle<()>>,
    epoch: u64,
    _items: PhantomData<*mut T>,
}

impl<T: 'static> Lockstep<T> {
    /// Spawn `workers` threads that run `job` on their item of each run.
    ///
    /// # Safety
    /// `job` runs on a worker thread with `&mut` to an item that was made
    /// on the caller's thread: it must only touch state of that item that
    /// may be used from another thread while no other thread uses it (no
    /// `Rc` it shares with other values, no thread-locals, no `RefCell`
    /// reachable from elsewhere).
    pub(crate) unsafe fn new(workers: usize, job: fn(&mut T), name: &str) -> std::io::Result<Self> {
        let shared = Arc::new(Shared {
            go: Padded(Go {
                epoch: AtomicU64::new(0),
                items: AtomicPtr::new(std::ptr::null_mut()),
                sleepers: AtomicU32::new(0),
                stop: AtomicBool::new(false),
            }),
            slots: (0..workers)
                .map(|_| {
                    Padded(Slot {
                        claimed: AtomicU64::new(0),
                        done: AtomicU64::new(0),
                    })
                })
                .collect(),
            panic: Mutex::new(None),
            job,
        });
        let mut pool = Self {
            shared,
            threads: Vec::with_capacity(workers),
            epoch: 0,
            _items: PhantomData,
        };
        for k in 0..workers {
            let s = SendShared(pool.shared.clone());
            let t = thread::Builder::new()
                .name(format!("{name}{}", k + 1))
                .stack_size(STACK)
                .spawn(move || worker(s, k))?;
            // On an error `pool` is dropped here: the workers spawned so far
            // are stopped and joined.
            pool.threads.push(t);
        }
        Ok(pool)
    }

    /// Number of worker threads (items per run: one more).
    #[cfg(test)]
    pub(crate) fn workers(&self) -> usize {
        self.threads.len()
    }

    /// Run the job on every item: `items[k + 1]` on worker `k` (or here,
    /// if the worker has not started it when this thread is done with
    /// `items[0]`); returns when all are done, with the number of items
    /// this thread ran for the workers. A panic of any job is resumed here,
    /// after every other item is done (so no worker still uses an item when
    /// the caller unwinds).
    ///
    /// # Panics
    /// If `items` does not have one item per worker plus one.
    pub(crate) fn run(&mut self, items: &mut [T]) -> usize {
        assert_eq!(items.len(), self.threads.len() + 1, "one item per thread");
        let (own, theirs) = items.split_at_mut(1);
        // The caller reaches the workers' items only through this pointer
        // while they may use it too (no reborrow of `theirs`).
        let base = theirs.as_mut_ptr();
        self.epoch += 1;
        let e = self.epoch;
        let go = &self.shared.go.0;
        go.items.store(base, Ordering::Relaxed);
        // SeqCst (a Release as well): publishes the items' state and the
        // pointer, and orders against the workers' `sleepers` increment
        // (the Dekker pattern of `worker`: no lost wake-up).
        go.epoch.store(e, Ordering::SeqCst);
        if go.sleepers.load(Ordering::SeqCst) != 0 {
            for t in &self.threads {
                t.thread().unpark();
            }
        }
        let job = self.shared.job;
        let mut first_panic = catch_unwind(AssertUnwindSafe(|| job(&mut own[0]))).err();
        let mut stolen = 0;
        for (k, slot) in self.shared.slots.iter().enumerate() {
            let slot = &slot.0;
            // Acquire: what the worker did to its item happens before the
            // caller's next use of it.
            if slot.done.load(Ordering::Acquire) == e {
                continue;
            }
            if slot
                .claimed
                .compare_exchange(e - 1, e, Ordering::AcqRel, Ordering::Acquire)
                .is_ok()
            {
                // SAFETY: `base` points to `workers` items, this thread
                // holds `&mut` to all of them, and the claim makes item `k`
                // this thread's for this run (the worker skips it).
                let r = catch_unwind(AssertUnwindSafe(|| job(unsafe { &mut *base.add(k) })));
                if let Err(p) = r {
                    first_panic.get_or_insert(p);
                }
                stolen += 1;
                continue;
            }
            let mut spins = 0u32;
            while slot.done.load(Ordering::Acquire) != e {
                if spins < SPIN {
                    spins += 1;
                    spin_loop();
                } else {
                    thread::yield_now();
                }
            }
        }
        if let Some(p) = first_panic {
            std::panic::resume_unwind(p);
        }
        let theirs = self
            .shared
            .panic
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take();
        if let Some(p) = theirs {
            std::panic::resume_unwind(p);
        }
        stolen
    }
}

impl<T> Drop for Lockstep<T> {
    fn drop(&mut self) {
        let go = &self.shared.go.0;
        go.stop.store(true, Ordering::SeqCst);
        go.epoch.store(self.epoch + 1, Ordering::SeqCst);
        for t in &self.threads {
            t.thread().unpark();
        }
        for t in self.threads.drain(..) {
            // Jobs' panics are caught on the workers: a join error would be
            // a bug of this module, and panicking in drop helps nobody.
            let _ = t.join();
        }
    }
}

fn worker<T>(s: SendShared<T>, k: usize) {
    let s = s.0;
    let go = &s.go.0;
    let mut seen = 0u64;
    loop {
        let mut spins = 0u32;
        let e = loop {
            let e = go.epoch.load(Ordering::Acquire);
            if e != seen {
                break e;
            }
            if spins < SPIN {
                spins += 1;
                spin_loop();
            } else if spins < SPIN + YIELD {
                spins += 1;
                thread::yield_now();
            } else {
                go.sleepers.fetch_add(1, Ordering::SeqCst);
                if go.epoch.load(Ordering::SeqCst) == seen {
                    // Spurious wake-ups just go round the loop again.
                    thread::park();
                }
                go.sleepers.fetch_sub(1, Ordering::SeqCst);
            }
        };
        seen = e;
        if go.stop.load(Ordering::SeqCst) {
            return;
        }
        let slot = &s.slots[k].0;
        // Every run's item is claimed before the next run starts, so the
        // claim fails if the caller took this run's item, and for a stale
        // `e` (the caller has moved on: `claimed` >= `e` already).
        if slot
            .claimed
            .compare_exchange(e - 1, e, Ordering::AcqRel, Ordering::Relaxed)
            .is_err()
        {
            continue;
        }
        // SAFETY: the caller stored a pointer to `workers` items (item `k`
        // is this worker's) before the epoch we acquired; we claimed the
        // item for run `e`, so the caller is still in that run (it cannot
        // finish it before we store `done = e` below) and does not touch
        // the item meanwhile (see `Lockstep::run`); `job` only touches
        // thread-movable state (`Lockstep::new`).
        let r = catch_unwind(AssertUnwindSafe(|| unsafe {
            let item = &mut *go.items.load(Ordering::Relaxed).add(k);
            (s.job)(item)
        }));
        if let Err(p) = r {
            let mut g = s.panic.lock().unwrap_or_else(|p| p.into_inner());
            g.get_or_insert(p);
        }
        slot.done.store(e, Ordering::Release);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;
    use std::thread::ThreadId;

    struct Item {
        id: usize,
        ticks: u64,
        threads: HashSet<ThreadId>,
        panic_at: Option<u64>,
        /// Set while a job runs on the item: two at once would be a bug.
        busy: Arc<AtomicBool>,
    }

    fn tick(i: &mut Item) {
        assert!(
            !i.busy.swap(true, Ordering::SeqCst),
            "item {} run twice at once",
            i.id
        );
        i.ticks += 1;
        i.threads.insert(thread::current().id());
        for _ in 0..50 {
            spin_loop();
        }
        i.busy.store(false, Ordering::SeqCst);
        if i.panic_at == Some(i.ticks) {
            panic!("item {} panics at tick {}", i.id, i.ticks);
        }
    }

    fn items(n: usize) -> Vec<Item> {
        (0..n)
            .map(|id| Item {
                id,
                ticks: 0,
                threads: HashSet::new(),
                panic_at: None,
                busy: Arc::new(AtomicBool::new(false)),
            })
            .collect()
    }

    #[test]
    fn every_item_once_per_run() {
        // SAFETY: `tick` touches only the item.
        let mut pool = unsafe { Lockstep::new(3, tick, "t") }.unwrap();
        assert_eq!(pool.workers(), 3);
        let mut v = items(4);
        // Four threads on however many cores: oversubscribed on a small
        // machine, where the waits must yield rather than livelock, and
        // where the caller runs many of the workers' items itself.
        let mut stolen = 0;
        for _ in 0..5_000 {
            stolen += pool.run(&mut v);
        }
        assert!(v.iter().all(|i| i.ticks == 5_000));
        let me = HashSet::from([thread::current().id()]);
        assert_eq!(v[0].threads, me, "item 0 runs on the caller");
        let workers: HashSet<_> = v[1..]
            .iter()
            .flat_map(|i| i.threads.difference(&me))
            .collect();
        assert!(workers.len() <= 3 && v[1..].iter().all(|i| i.threads.len() <= 2));
        assert!(stolen <= 3 * 5_000);
    }

    #[test]
    fn the_caller_runs_items_of_workers_that_are_not_there() {
        // SAFETY: `tick` touches only the item.
        let mut pool = unsafe { Lockstep::new(1, tick, "t") }.unwrap();
        let mut v = items(2);
        let mut stolen = 0;
        for round in 1..=20 {
            // Long enough for the worker to spin, yield and park: woken by
            // the run, it usually comes too late to claim its item.
            thread::sleep(std::time::Duration::from_millis(30));
            stolen += pool.run(&mut v);
            assert_eq!(v[1].ticks, round);
            if stolen > 0 {
                break;
            }
        }
        assert!(stolen > 0, "the caller never took a parked worker's item");
        assert!(v[1].threads.contains(&thread::current().id()));
    }

    #[test]
    fn a_worker_panic_surfaces_on_the_caller() {
        // SAFETY: `tick` touches only the item.
        let mut pool = unsafe { Lockstep::new(2, tick, "t") }.unwrap();
        let mut v = items(3);
        v[2].panic_at = Some(5);
        let r = catch_unwind(AssertUnwindSafe(|| {
            for _ in 0..10 {
                pool.run(&mut v);
            }
        }));
        let msg = r.unwrap_err();
        let msg = msg.downcast_ref::<String>().unwrap();
        assert_eq!(msg, "item 2 panics at tick 5");
        // Every item finished the run that panicked, none ran further.
        assert!(
            v.iter().all(|i| i.ticks == 5),
            "{:?}",
            v.iter().map(|i| i.ticks).collect::<Vec<_>>()
        );
        // The pool still works and shuts down cleanly.
        v[2].panic_at = None;
        pool.run(&mut v);
        assert!(v.iter().all(|i| i.ticks == 6));
        drop(pool);
    }

    #[test]
    fn a_caller_panic_waits_for_the_workers() {
        // SAFETY: `tick` touches only the item.
        let mut pool = unsafe { Lockstep::new(1, tick, "t") }.unwrap();
        let mut v = items(2);
        v[0].panic_at = Some(1);
        assert!(catch_unwind(AssertUnwindSafe(|| pool.run(&mut v))).is_err());
        assert_eq!(v[1].ticks, 1);
    }
}
