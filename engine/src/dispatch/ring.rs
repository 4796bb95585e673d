//! The ring: a fixed array of batch slots in a `MAP_SHARED` mapping, filled by one producer (the
//! scanner) and claimed by any number of workers, threads or forked processes alike.
//!
//! A worker claims with one `fetch_add` on the read ticket: no lock, no CAS loop. Each slot's
//! `turn` word says whose lap it is, so a ticket is published before it can be taken
//! (release/acquire) and taken at most once. Futex wake-ups are advisory: every wait re-checks
//! the slot. The ring knows batches only as offsets; it never touches input bytes.

use std::io;

#[cfg(loom)]
use loom::sync::atomic::{AtomicI32, AtomicU32, AtomicU64, Ordering};
#[cfg(not(loom))]
use std::sync::atomic::{AtomicI32, AtomicU32, AtomicU64, Ordering};

use crate::dispatch::batch::Batch;

// The model checker (`--cfg loom`, run by tests/run.sh) and the interpreter (miri) run the
// same protocol on heap memory with the checker's atomics: a shared mapping and futexes are
// the kernel's, which neither can model. Under the checker a futex is a condition variable with
// the futex's contract (sleep only while the word still holds the value seen; a wake reaches
// every sleeper), so a lost wake-up in the protocol shows as a deadlock.
#[cfg(not(loom))]
fn signal_hunger(fd: i32) {
    crate::sys::signal_event_fd(fd);
}
#[cfg(loom)]
fn signal_hunger(_: i32) {}
#[cfg(loom)]
use loom::hint::spin_loop;
#[cfg(not(loom))]
use std::hint::spin_loop;

#[repr(C, align(64))]
struct Slot {
    /// `2*lap` = empty for that lap, `2*lap + 1` = full for that lap.
    turn: AtomicU64,
    start: AtomicU64,
    end: AtomicU64,
    records: AtomicU64,
    seq: AtomicU64,
    /// 1 when this batch is the first of its spool chunk in this ring.
    first: AtomicU64,
}

#[repr(C, align(64))]
struct Padded<T>(T);

#[repr(C)]
struct Header {
    /// Tickets published so far (the producer's next ticket).
    write: Padded<AtomicU64>,
    /// Next ticket to claim; runs ahead of `write` while workers wait.
    read: Padded<AtomicU64>,
    /// 1 once the producer published its last batch, 2 when the run is aborted.
    closed: AtomicU32,
    /// Bumped on every publish and close; workers futex-wait on it.
    published: AtomicU32,
    sleeping_workers: AtomicU32,
    /// Bumped when a slot is freed; the producer futex-waits on it when the ring is full.
    released: AtomicU32,
    producer_sleeping: AtomicU32,
    /// When 1, the next worker that goes to sleep writes to `hunger_fd` (an eventfd).
    hunger_armed: AtomicU32,
    hunger_fd: AtomicI32,
    /// Chunks whose first batch was published here, and those whose first batch was taken:
    /// the difference is the ring's backlog in whole chunks nobody has started.
    chunks_published: Padded<AtomicU64>,
    chunks_started: Padded<AtomicU64>,
}

/// What a claim gave.
#[derive(Debug, PartialEq, Eq)]
pub enum Claim {
    /// The next batch, for this worker to run.
    Batch(Batch),
    /// The producer closed the ring and every batch is taken, or the run was aborted.
    Done,
}

/// What a look at one ticket found (see [`Ring::poll`]).
#[derive(Debug, PartialEq, Eq)]
pub enum Poll {
    /// The batch at that ticket is published.
    Ready(Batch),
    /// Not published yet.
    Pending,
    /// It never will be: the ring is closed below it, or aborted.
    Done,
}

/// The shared slot array. Cloning the handle is not needed: threads share `&Ring`, forked
/// processes inherit the mapping.
pub struct Ring {
    /// Shared, so that forked workers see the same slots; all state in it is atomics.
    #[cfg(not(any(loom, miri)))]
    map: crate::sys::AnonMap,
    /// The same header and slots on the heap, for the model checker and the interpreter.
    #[cfg(any(loom, miri))]
    heap: (Box<Header>, Box<[Slot]>),
    /// The futexes' stand-in under the model checker.
    #[cfg(loom)]
    futex: (loom::sync::Mutex<()>, loom::sync::Condvar),
    slots: usize,
}

/// Spins before a wait (none under the model checker: each spin would be a state to explore).
const SPIN: u32 = if cfg!(loom) { 0 } else { 64 };

#[cfg(any(loom, miri))]
impl Header {
    fn zeroed() -> Header {
        let padded = || Padded(AtomicU64::new(0));
        Header {
            write: padded(),
            read: padded(),
            closed: AtomicU32::new(0),
            published: AtomicU32::new(0),
            sleeping_workers: AtomicU32::new(0),
            released: AtomicU32::new(0),
            producer_sleeping: AtomicU32::new(0),
            hunger_armed: AtomicU32::new(0),
            hunger_fd: AtomicI32::new(0),
            chunks_published: padded(),
            chunks_started: padded(),
        }
    }
}

#[cfg(any(loom, miri))]
impl Slot {
    fn zeroed() -> Slot {
        Slot {
            turn: AtomicU64::new(0),
            start: AtomicU64::new(0),
            end: AtomicU64::new(0),
            records: AtomicU64::new(0),
            seq: AtomicU64::new(0),
            first: AtomicU64::new(0),
        }
    }
}

impl Ring {
    /// Maps a ring of `slots` slots (rounded up to a power of two) in shared memory.
    pub fn new(slots: usize) -> io::Result<Ring> {
        let slots = slots.max(2).next_power_of_two();
        // The mapping is zero-filled: every slot starts empty for lap 0, every counter at 0.
        #[cfg(not(any(loom, miri)))]
        let ring = {
            let map_len = std::mem::size_of::<Header>() + slots * std::mem::size_of::<Slot>();
            Ring {
                map: crate::sys::AnonMap::new(map_len, true)?,
                slots,
            }
        };
        #[cfg(any(loom, miri))]
        let ring = Ring {
            heap: (
                Box::new(Header::zeroed()),
                (0..slots).map(|_| Slot::zeroed()).collect(),
            ),
            #[cfg(loom)]
            futex: (loom::sync::Mutex::new(()), loom::sync::Condvar::new()),
            slots,
        };
        ring.header().hunger_fd.store(-1, Ordering::Relaxed);
        Ok(ring)
    }

    #[cfg(not(any(loom, miri)))]
    fn header(&self) -> &Header {
        // SAFETY: the mapping starts with a zero-initialised Header (all-atomic, valid at zero)
        // and lives as long as `self`; mmap returns page-aligned memory.
        unsafe { &*self.map.as_ptr().cast::<Header>() }
    }

    #[cfg(any(loom, miri))]
    fn header(&self) -> &Header {
        &self.heap.0
    }

    #[cfg(not(any(loom, miri)))]
    fn slot(&self, ticket: u64) -> &Slot {
        let i = (ticket as usize) & (self.slots - 1);
        // SAFETY: slots follow the header inside the mapping; `i < self.slots`; Header's size is a
        // multiple of 64 so every Slot is aligned; all fields are atomics valid at zero.
        unsafe {
            &*self
                .map
                .as_ptr()
                .add(std::mem::size_of::<Header>())
                .cast::<Slot>()
                .add(i)
        }
    }

    #[cfg(any(loom, miri))]
    fn slot(&self, ticket: u64) -> &Slot {
        &self.heap.1[(ticket as usize) & (self.slots - 1)]
    }

    /// Sleeps while `word` holds `seen` (or until woken): a futex wait.
    #[cfg(not(loom))]
    fn wait_on(&self, word: &AtomicU32, seen: u32) {
        crate::sys::futex_wait(word, seen);
    }

    /// Wakes every sleeper on `word`: a futex wake.
    #[cfg(not(loom))]
    fn wake_all(&self, word: &AtomicU32) {
        crate::sys::futex_wake_all(word);
    }

    /// The kernel compares the word's latest value (not one a load may still see as older),
    /// which a read-modify-write gives: a compare-exchange of the value with itself.
    #[cfg(loom)]
    fn wait_on(&self, word: &AtomicU32, seen: u32) {
        let mut held = self.futex.0.lock().unwrap();
        while word
            .compare_exchange(seen, seen, Ordering::SeqCst, Ordering::SeqCst)
            .is_ok()
        {
            held = self.futex.1.wait(held).unwrap();
        }
    }

    #[cfg(loom)]
    fn wake_all(&self, _: &AtomicU32) {
        let _held = self.futex.0.lock().unwrap();
        self.futex.1.notify_all();
    }

    fn lap(&self, ticket: u64) -> u64 {
        ticket / self.slots as u64
    }

    /// Publishes batch `seq` (producer only); `first` marks the first batch of a spool chunk.
    /// Returns its ticket in this ring, or `None` when the ring was aborted while waiting for a
    /// free slot.
    pub fn publish(
        &self,
        seq: u64,
        start: u64,
        end: u64,
        records: u64,
        first: bool,
    ) -> Option<u64> {
        let h = self.header();
        let t = h.write.0.load(Ordering::Relaxed);
        let slot = self.slot(t);
        let empty = 2 * self.lap(t);
        let mut spins = 0;
        while slot.turn.load(Ordering::Acquire) != empty {
            if h.closed.load(Ordering::Acquire) == 2 {
                return None;
            }
            if spins < SPIN {
                spins += 1;
                spin_loop();
                continue;
            }
            h.producer_sleeping.store(1, Ordering::SeqCst);
            let seen = h.released.load(Ordering::SeqCst);
            if slot.turn.load(Ordering::Acquire) != empty && h.closed.load(Ordering::Acquire) != 2 {
                self.wait_on(&h.released, seen);
            }
            h.producer_sleeping.store(0, Ordering::SeqCst);
        }
        slot.start.store(start, Ordering::Relaxed);
        slot.end.store(end, Ordering::Relaxed);
        slot.records.store(records, Ordering::Relaxed);
        slot.seq.store(seq, Ordering::Relaxed);
        slot.first.store(u64::from(first), Ordering::Relaxed);
        if first {
            h.chunks_published.0.fetch_add(1, Ordering::Release);
        }
        slot.turn.store(empty + 1, Ordering::Release);
        h.write.0.store(t + 1, Ordering::Release);
        self.wake_workers();
        Some(t)
    }

    fn wake_workers(&self) {
        let h = self.header();
        h.published.fetch_add(1, Ordering::SeqCst);
        if h.sleeping_workers.load(Ordering::SeqCst) > 0 {
            self.wake_all(&h.published);
        }
    }

    /// Marks the end of input (producer only): claims past the last batch return `Done`.
    pub fn close(&self) {
        let _ = self
            .header()
            .closed
            .compare_exchange(0, 1, Ordering::AcqRel, Ordering::Acquire);
        self.wake_workers();
    }

    /// Stops the run: every waiting or future claim returns `Done`, a waiting producer returns.
    pub fn abort(&self) {
        let h = self.header();
        h.closed.store(2, Ordering::SeqCst);
        self.wake_workers();
        h.released.fetch_add(1, Ordering::SeqCst);
        self.wake_all(&h.released);
    }

    /// Reads a full slot this caller owns and frees it for the producer.
    fn take(&self, slot: &Slot, full: u64) -> (Batch, bool) {
        let h = self.header();
        let batch = Batch {
            seq: slot.seq.load(Ordering::Relaxed),
            start: slot.start.load(Ordering::Relaxed),
            end: slot.end.load(Ordering::Relaxed),
            records: slot.records.load(Ordering::Relaxed),
        };
        let first = slot.first.load(Ordering::Relaxed) != 0;
        if first {
            h.chunks_started.0.fetch_add(1, Ordering::Release);
        }
        slot.turn.store(full + 1, Ordering::Release);
        h.released.fetch_add(1, Ordering::SeqCst);
        if h.producer_sleeping.load(Ordering::SeqCst) != 0 {
            self.wake_all(&h.released);
        }
        (batch, first)
    }

    /// Takes a ticket when a published batch waits (one `fetch_add`; under a race the ticket
    /// may be ahead of the producer, and [`Ring::poll`] then waits for it). `None`: nothing
    /// waits, no ticket was taken.
    pub fn ticket(&self) -> Option<u64> {
        let h = self.header();
        if h.closed.load(Ordering::Acquire) == 2 || self.backlog() == 0 {
            return None;
        }
        Some(h.read.0.fetch_add(1, Ordering::SeqCst))
    }

    /// Looks at ticket `t` (taken by [`Ring::ticket`]) without waiting.
    pub fn poll(&self, t: u64) -> Poll {
        let h = self.header();
        let slot = self.slot(t);
        let full = 2 * self.lap(t) + 1;
        if slot.turn.load(Ordering::Acquire) == full {
            return Poll::Ready(self.take(slot, full).0);
        }
        match h.closed.load(Ordering::Acquire) {
            2 => Poll::Done,
            1 if t >= h.write.0.load(Ordering::Acquire) => Poll::Done,
            _ => Poll::Pending,
        }
    }

    /// Takes the oldest published batch if nobody else does first: one compare-and-swap, no
    /// loop and no waiting (a node stealing from another's ring). The flag says the batch
    /// started its chunk (the chunk is then stolen whole from its node's point of view).
    pub fn steal(&self) -> Option<(Batch, bool)> {
        let h = self.header();
        let r = h.read.0.load(Ordering::SeqCst);
        if r >= h.write.0.load(Ordering::Acquire) || h.closed.load(Ordering::Acquire) == 2 {
            return None;
        }
        h.read
            .0
            .compare_exchange(r, r + 1, Ordering::SeqCst, Ordering::Relaxed)
            .ok()?;
        // r < write: the slot was published for this lap before `write` moved past it, and the
        // successful swap made this caller its only owner.
        let slot = self.slot(r);
        let full = 2 * self.lap(r) + 1;
        debug_assert_eq!(slot.turn.load(Ordering::Acquire), full);
        Some(self.take(slot, full))
    }

    /// Chunks with a batch here none of which has been taken yet.
    pub fn unstarted_chunks(&self) -> u64 {
        let h = self.header();
        let p = h.chunks_published.0.load(Ordering::Acquire);
        p.saturating_sub(h.chunks_started.0.load(Ordering::Acquire))
    }

    /// True once the producer closed the ring (or the run was aborted).
    pub fn is_closed(&self) -> bool {
        self.header().closed.load(Ordering::Acquire) != 0
    }

    /// Takes the next batch, waiting for the producer if needed. Lock-free: one `fetch_add`.
    pub fn claim(&self) -> Claim {
        let h = self.header();
        if h.closed.load(Ordering::Acquire) == 2 {
            return Claim::Done;
        }
        let t = h.read.0.fetch_add(1, Ordering::SeqCst);
        let slot = self.slot(t);
        let full = 2 * self.lap(t) + 1;
        let mut spins = 0;
        loop {
            if slot.turn.load(Ordering::Acquire) == full {
                return Claim::Batch(self.take(slot, full).0);
            }
            match h.closed.load(Ordering::Acquire) {
                2 => return Claim::Done,
                1 if t >= h.write.0.load(Ordering::Acquire) => return Claim::Done,
                _ => {}
            }
            if spins < SPIN {
                spins += 1;
                spin_loop();
                continue;
            }
            h.sleeping_workers.fetch_add(1, Ordering::SeqCst);
            let seen = h.published.load(Ordering::SeqCst);
            let ready =
                slot.turn.load(Ordering::Acquire) == full || h.closed.load(Ordering::Acquire) != 0;
            if !ready {
                if h.hunger_armed.swap(0, Ordering::SeqCst) == 1 {
                    signal_hunger(h.hunger_fd.load(Ordering::Relaxed));
                }
                self.wait_on(&h.published, seen);
            }
            h.sleeping_workers.fetch_sub(1, Ordering::SeqCst);
        }
    }

    /// Published batches nobody has claimed yet.
    pub fn backlog(&self) -> u64 {
        let h = self.header();
        let w = h.write.0.load(Ordering::Acquire);
        let r = h.read.0.load(Ordering::Acquire);
        w.saturating_sub(r)
    }

    /// True when some worker holds a ticket that has no batch yet (it waits for input).
    pub fn starving(&self) -> bool {
        let h = self.header();
        h.read.0.load(Ordering::SeqCst) > h.write.0.load(Ordering::SeqCst)
    }

    /// Asks the next worker that runs dry to write to eventfd `fd` (once).
    pub fn arm_hunger(&self, fd: i32) {
        let h = self.header();
        h.hunger_fd.store(fd, Ordering::Relaxed);
        h.hunger_armed.store(1, Ordering::SeqCst);
    }

    /// Withdraws an [`arm_hunger`](Ring::arm_hunger) request that no worker has answered.
    pub fn disarm_hunger(&self) {
        self.header().hunger_armed.store(0, Ordering::Release);
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use std::sync::Mutex;

    #[test]
    fn every_batch_claimed_exactly_once_across_laps() {
        let ring = Ring::new(8).unwrap();
        let seen = Mutex::new(Vec::new());
        // Fewer under the interpreter, which runs some thousand times slower.
        const N: u64 = if cfg!(miri) { 64 } else { 20_000 };
        std::thread::scope(|s| {
            for _ in 0..4 {
                s.spawn(|| {
                    let mut mine = Vec::new();
                    while let Claim::Batch(b) = ring.claim() {
                        assert_eq!(b.start, b.seq * 10);
                        assert_eq!(b.end, b.seq * 10 + 7);
                        assert_eq!(b.records, b.seq % 5);
                        mine.push(b.seq);
                    }
                    seen.lock().unwrap().extend(mine);
                });
            }
            for i in 0..N {
                assert_eq!(ring.publish(i, i * 10, i * 10 + 7, i % 5, false), Some(i));
            }
            ring.close();
        });
        let mut all = seen.into_inner().unwrap();
        all.sort_unstable();
        assert_eq!(all, (0..N).collect::<Vec<_>>());
    }

    #[test]
    fn abort_releases_waiting_workers_and_producer() {
        let ring = Ring::new(2).unwrap();
        std::thread::scope(|s| {
            let w = s.spawn(|| ring.claim());
            std::thread::sleep(std::time::Duration::from_millis(50));
            assert!(ring.starving());
            ring.abort();
            assert_eq!(w.join().unwrap(), Claim::Done);
        });
        let full = Ring::new(2).unwrap();
        full.publish(0, 0, 1, 1, false);
        full.publish(1, 1, 2, 1, false);
        std::thread::scope(|s| {
            let p = s.spawn(|| full.publish(2, 2, 3, 1, false));
            std::thread::sleep(std::time::Duration::from_millis(50));
            full.abort();
            assert_eq!(p.join().unwrap(), None);
        });
    }
}

/// The ring's protocol under the model checker: every interleaving of the threads below (up to
/// loom's preemption bound) must give each batch to exactly one taker and end every claim.
/// Run with `RUSTFLAGS="--cfg loom" cargo test --release --lib ring::model` (tests/run.sh).
#[cfg(all(test, loom))]
mod model {
    use super::*;
    use loom::sync::Arc;

    fn check(f: impl Fn() + Sync + Send + 'static) {
        let mut model = loom::model::Builder::new();
        model.preemption_bound = Some(3);
        // Waits are yields here, and a wait may yield many times before the other side runs.
        model.max_branches = 100_000;
        model.check(f);
    }

    /// Drains `ring` by claims until Done; the seqs taken.
    fn claim_all(ring: &Ring) -> Vec<u64> {
        let mut got = Vec::new();
        while let Claim::Batch(b) = ring.claim() {
            assert_eq!(
                (b.start, b.end),
                (b.seq * 10, b.seq * 10 + 1),
                "a torn slot"
            );
            got.push(b.seq);
        }
        got
    }

    /// A producer publishes three batches into two slots (the third reuses the first slot, on
    /// the next lap, once the worker freed it) and closes; the worker takes all three in order.
    #[test]
    fn a_worker_takes_every_batch_across_a_lap() {
        check(|| {
            let ring = Arc::new(Ring::new(2).unwrap());
            let worker = {
                let ring = ring.clone();
                loom::thread::spawn(move || claim_all(&ring))
            };
            for seq in 0..3 {
                assert_eq!(
                    ring.publish(seq, seq * 10, seq * 10 + 1, 1, false),
                    Some(seq)
                );
            }
            ring.close();
            assert_eq!(worker.join().unwrap(), [0, 1, 2]);
        });
    }

    /// Two workers race for two published batches while the producer closes the ring: each
    /// batch goes to exactly one of them, and both claims past the end return Done.
    #[test]
    fn two_workers_claim_every_batch_once() {
        check(|| {
            let ring = Arc::new(Ring::new(2).unwrap());
            ring.publish(0, 0, 1, 1, false);
            ring.publish(1, 10, 11, 1, false);
            let workers: Vec<_> = (0..2)
                .map(|_| {
                    let ring = ring.clone();
                    loom::thread::spawn(move || claim_all(&ring))
                })
                .collect();
            ring.close();
            let mut all: Vec<u64> = workers
                .into_iter()
                .flat_map(|w| w.join().unwrap())
                .collect();
            all.sort_unstable();
            assert_eq!(all, [0, 1]);
        });
    }

    /// A thief (another node's worker) and a claimer race for the same published batches: the
    /// compare-and-swap and the fetch_add never hand one batch to both, nor lose one.
    #[test]
    fn a_steal_and_a_claim_never_take_the_same_batch() {
        check(|| {
            let ring = Arc::new(Ring::new(2).unwrap());
            ring.publish(0, 0, 1, 1, true);
            ring.publish(1, 10, 11, 1, false);
            let thief = {
                let ring = ring.clone();
                loom::thread::spawn(move || ring.steal().map(|(b, _)| b.seq))
            };
            let claimer = {
                let ring = ring.clone();
                loom::thread::spawn(move || match ring.claim() {
                    Claim::Batch(b) => Some(b.seq),
                    Claim::Done => None,
                })
            };
            let stolen = thief.join().unwrap();
            let claimed = claimer
                .join()
                .unwrap()
                .expect("a batch waits for the claimer");
            ring.close();
            let mut all: Vec<u64> = stolen.into_iter().chain([claimed]).collect();
            all.extend(claim_all(&ring));
            all.sort_unstable();
            assert_eq!(all, [0, 1]);
        });
    }

    /// An abort ends a worker waiting on an empty ring and a producer waiting on a full one.
    #[test]
    fn abort_ends_waiting_claims_and_publishes() {
        check(|| {
            let ring = Arc::new(Ring::new(2).unwrap());
            ring.publish(0, 0, 1, 1, false);
            ring.publish(1, 10, 11, 1, false);
            let producer = {
                let ring = ring.clone();
                loom::thread::spawn(move || ring.publish(2, 20, 21, 1, false))
            };
            let aborter = {
                let ring = ring.clone();
                loom::thread::spawn(move || ring.abort())
            };
            aborter.join().unwrap();
            // Either it got a slot freed by nobody (impossible: none was) or the abort ended it.
            assert_eq!(producer.join().unwrap(), None);
            assert_eq!(ring.claim(), Claim::Done);
        });
    }
}
