//! `--memfree` for the run: the floor of available memory under which no batch starts, and the
//! lower line (half of it) under which the supervisor ends the youngest running batch
//! (`timeouts::Enforcer` chooses and ends it; the runner reports it as
//! [`crate::dispatch::ledger::Outcome::Evicted`]).
//!
//! It only reads the memory and waits; it never signals a command.

use std::os::fd::BorrowedFd;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use crate::sys::memory::MemorySource;

/// How long a reading that showed enough memory lets further starts through without reading
/// again (a burst of starts reads the file once).
const FRESH: Duration = Duration::from_millis(50);
/// How often a start that waits for memory looks again.
const RECHECK: Duration = Duration::from_millis(250);

/// The memory a batch needs available to start, and where it is read.
pub struct MemoryFloor {
    bytes: u64,
    source: MemorySource,
    epoch: Instant,
    /// When (ns since `epoch`, +1) a reading last showed enough: 0 = not lately.
    enough_at: AtomicU64,
}

impl MemoryFloor {
    /// A floor of `bytes`, read from `source`.
    pub fn new(bytes: u64, source: MemorySource) -> MemoryFloor {
        MemoryFloor {
            bytes,
            source,
            epoch: Instant::now(),
            enough_at: AtomicU64::new(0),
        }
    }

    /// The floor `--memfree` asks for, if it does.
    pub fn of(work: &crate::run::Work) -> Option<MemoryFloor> {
        let (bytes, source) = work.memfree.as_ref()?;
        Some(MemoryFloor::new(*bytes, source.clone()))
    }

    fn now(&self) -> u64 {
        self.epoch.elapsed().as_nanos() as u64 + 1
    }

    /// Waits until at least the floor is available (a file that cannot be read any more does
    /// not hold starts back); false when `stop` became readable first.
    pub fn wait_for_room(&self, stop: BorrowedFd<'_>) -> bool {
        loop {
            let seen = self.enough_at.load(Ordering::Relaxed);
            if seen != 0 && self.now() - seen < FRESH.as_nanos() as u64 {
                return true;
            }
            if self.source.available().is_none_or(|a| a >= self.bytes) {
                self.enough_at.store(self.now(), Ordering::Relaxed);
                return true;
            }
            if crate::sys::stopped_within(stop, RECHECK) {
                return false;
            }
        }
    }

    /// Whether less than half the floor is available now: the youngest batch must go.
    pub fn short(&self) -> bool {
        let short = self.source.available().is_some_and(|a| a < self.bytes / 2);
        if short {
            self.enough_at.store(0, Ordering::Relaxed);
        }
        short
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::AsFd;

    #[test]
    fn starts_wait_for_the_floor_and_a_stop_ends_the_wait() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("meminfo");
        std::fs::write(&file, "MemAvailable: 2048 kB\n").unwrap();
        let floor = MemoryFloor::new(1024 * 1024, MemorySource::open(&file).unwrap());
        let stop = crate::sys::Event::new().unwrap();
        assert!(floor.wait_for_room(stop.as_fd()));
        assert!(!floor.short());
        // Under the floor but over half of it: starts wait, nothing is ended.
        std::fs::write(&file, "MemAvailable: 600 kB\n").unwrap();
        std::thread::sleep(FRESH * 2);
        assert!(!floor.short());
        std::thread::scope(|s| {
            let t = Instant::now();
            let waiter = s.spawn(|| floor.wait_for_room(stop.as_fd()));
            std::thread::sleep(Duration::from_millis(400));
            assert!(!waiter.is_finished(), "a start waits under the floor");
            std::fs::write(&file, "MemAvailable: 1024 kB\n").unwrap();
            assert!(waiter.join().unwrap());
            assert!(t.elapsed() >= Duration::from_millis(400));
        });
        std::fs::write(&file, "MemAvailable: 500 kB\n").unwrap();
        assert!(floor.short(), "under half of the floor");
        let t = Instant::now();
        stop.signal();
        assert!(!floor.wait_for_room(stop.as_fd()));
        assert!(t.elapsed() < Duration::from_millis(200));
    }
}
