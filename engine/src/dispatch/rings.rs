//! The rings of a run, one per NUMA node: gives every batch its place in input order, routes it
//! to the ring of the node its spool chunk belongs to, lets a worker take from its own node's
//! ring and, when that is empty, steal from another's; counts where batches ran.
//!
//! With one node this is the plain [`Ring`], untouched. It never reads input bytes and never
//! decides which node a chunk belongs to (that is the [`Layout`]'s job).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU32, AtomicU64, Ordering};

use crate::dispatch::ring::{Claim, Poll, Ring};
use crate::sys::numa::Layout;
use crate::sys::{self, futex_wait, futex_wake_all};

const SPIN: u32 = 64;

/// What happened on one node, for `--stats`.
#[derive(Default)]
pub struct NodeCounters {
    /// Chunks that got at least one batch on this node's ring.
    pub chunks_placed: AtomicU64,
    /// Chunks this node's workers started on another node's ring.
    pub chunks_stolen: AtomicU64,
    /// Batches this node's workers ran.
    pub batches: AtomicU64,
    /// Of `batches`, those taken from another node's ring.
    pub batches_stolen: AtomicU64,
    /// Time this node's workers spent on batches.
    pub busy_ns: AtomicU64,
    /// Spool chunks the kernel bound to this node's memory.
    pub chunks_bound: AtomicU64,
}

/// The rings and their routing.
pub struct Rings {
    rings: Vec<Ring>,
    layout: Arc<Layout>,
    /// The next batch's place in input order (producer only).
    next_seq: AtomicU64,
    /// The last chunk published to each node's ring (producer only).
    last_chunk: Vec<AtomicU64>,
    /// For each node, the others in order of distance with the backlog (in unstarted chunks)
    /// above which it steals from them: 1 + distance / 10.
    victims: Vec<Vec<(usize, u64)>>,
    /// Workers of each node inside [`Rings::claim`] (looking for work, not running any), and
    /// those running a batch. A worker still starting up is neither.
    idle: Vec<AtomicU32>,
    busy: Vec<AtomicU32>,
    /// Bumped on every publish, close and abort; idle workers of any node futex-wait on it.
    published: AtomicU32,
    sleeping: AtomicU32,
    closed: AtomicBool,
    aborted: AtomicBool,
    hunger_armed: AtomicU32,
    hunger_fd: AtomicI32,
    /// Per-node counters, indexed by node, for `--stats`.
    pub counters: Vec<NodeCounters>,
}

impl Rings {
    /// One ring of `slots` slots per node of `layout`.
    pub fn new(layout: Arc<Layout>, slots: usize) -> std::io::Result<Rings> {
        let n = layout.nodes.len();
        let rings = (0..n)
            .map(|_| Ring::new(slots))
            .collect::<std::io::Result<Vec<_>>>()?;
        let victims = (0..n)
            .map(|home| {
                let mut v: Vec<(usize, u64)> = (0..n)
                    .filter(|&o| o != home)
                    .map(|o| (o, 1 + u64::from(layout.distance[home][o]) / 10))
                    .collect();
                v.sort_by_key(|&(o, t)| (t, o));
                v
            })
            .collect();
        Ok(Rings {
            rings,
            next_seq: AtomicU64::new(0),
            last_chunk: (0..n).map(|_| AtomicU64::new(u64::MAX)).collect(),
            idle: (0..n).map(|_| AtomicU32::new(0)).collect(),
            busy: (0..n).map(|_| AtomicU32::new(0)).collect(),
            victims,
            published: AtomicU32::new(0),
            sleeping: AtomicU32::new(0),
            closed: AtomicBool::new(false),
            aborted: AtomicBool::new(false),
            hunger_armed: AtomicU32::new(0),
            hunger_fd: AtomicI32::new(-1),
            counters: (0..n).map(|_| NodeCounters::default()).collect(),
            layout,
        })
    }

    fn single(&self) -> bool {
        self.rings.len() == 1
    }

    /// How the spool's chunks are spread over the nodes.
    pub fn layout(&self) -> &Layout {
        &self.layout
    }

    /// Publishes the next batch (producer only) on its chunk's node. Returns its sequence
    /// number, or `None` when the run was aborted while waiting for a free slot.
    pub fn publish(&self, start: u64, end: u64, records: u64) -> Option<u64> {
        let seq = self.next_seq.load(Ordering::Relaxed);
        if self.single() {
            self.rings[0].publish(seq, start, end, records, false)?;
        } else {
            let chunk = self.layout.chunk_of(start);
            let node = self.layout.node_of_chunk(chunk);
            let first = self.last_chunk[node].swap(chunk, Ordering::Relaxed) != chunk;
            if first {
                self.counters[node]
                    .chunks_placed
                    .fetch_add(1, Ordering::Relaxed);
            }
            self.rings[node].publish(seq, start, end, records, first)?;
            self.wake();
        }
        self.next_seq.store(seq + 1, Ordering::Relaxed);
        Some(seq)
    }

    fn wake(&self) {
        self.published.fetch_add(1, Ordering::SeqCst);
        if self.sleeping.load(Ordering::SeqCst) > 0 {
            futex_wake_all(&self.published);
        }
    }

    /// Marks the end of input (producer only).
    pub fn close(&self) {
        for r in &self.rings {
            r.close();
        }
        self.closed.store(true, Ordering::SeqCst);
        self.wake();
    }

    /// Stops the run: every waiting or future claim returns `Done`.
    pub fn abort(&self) {
        self.aborted.store(true, Ordering::SeqCst);
        for r in &self.rings {
            r.abort();
        }
        self.wake();
    }

    /// True once the input ended (or the run stopped) and every batch is claimed.
    pub fn drained(&self) -> bool {
        self.aborted.load(Ordering::SeqCst)
            || (self.closed.load(Ordering::SeqCst) && self.backlog() == 0)
    }

    /// Published batches nobody has claimed yet, on every node.
    pub fn backlog(&self) -> u64 {
        self.rings.iter().map(Ring::backlog).sum()
    }

    /// True when some worker waits for input: nothing is published anywhere while a worker
    /// sleeps, or a worker holds a ticket ahead of its ring. (A worker that waits while another
    /// node has work it may not take yet waits for placement, not for input.)
    pub fn starving(&self) -> bool {
        if self.single() {
            return self.rings[0].starving();
        }
        (self.sleeping.load(Ordering::SeqCst) > 0 && self.backlog() == 0)
            || self.rings.iter().any(Ring::starving)
    }

    /// Asks the next worker that runs dry to write to eventfd `fd` (once).
    pub fn arm_hunger(&self, fd: i32) {
        if self.single() {
            return self.rings[0].arm_hunger(fd);
        }
        self.hunger_fd.store(fd, Ordering::Relaxed);
        self.hunger_armed.store(1, Ordering::SeqCst);
    }

    /// Withdraws an [`arm_hunger`](Rings::arm_hunger) request that no worker has answered.
    pub fn disarm_hunger(&self) {
        if self.single() {
            return self.rings[0].disarm_hunger();
        }
        self.hunger_armed.store(0, Ordering::Release);
    }

    fn hungry(&self) {
        if self.backlog() == 0 && self.hunger_armed.swap(0, Ordering::SeqCst) == 1 {
            sys::signal_event_fd(self.hunger_fd.load(Ordering::Relaxed));
        }
    }

    /// A worker of node `home` leaves without claiming again (`finished`: it comes back from a
    /// batch it claimed here).
    pub fn leave(&self, home: usize, finished: bool) {
        if !self.single() && finished {
            self.busy[home].fetch_sub(1, Ordering::SeqCst);
        }
    }

    /// Takes the next batch for a worker of node `home`: its own ring first, then a steal;
    /// waits while there is neither. `finished` says the worker comes back from a batch it
    /// claimed here. Lock-free: a `fetch_add` on the own ring, one compare-and-swap per steal
    /// attempt.
    pub fn claim(&self, home: usize, finished: bool) -> Claim {
        if self.single() {
            return self.rings[0].claim();
        }
        self.idle[home].fetch_add(1, Ordering::SeqCst);
        if finished {
            self.busy[home].fetch_sub(1, Ordering::SeqCst);
        }
        let got = self.claim_for(home);
        if matches!(got, Claim::Batch(_)) {
            self.busy[home].fetch_add(1, Ordering::SeqCst);
        }
        self.idle[home].fetch_sub(1, Ordering::SeqCst);
        // This node may have just become all busy with work still waiting: others may take it.
        if self.rings[home].backlog() > 0 && self.sleeping.load(Ordering::SeqCst) > 0 {
            self.wake();
        }
        got
    }

    fn claim_for(&self, home: usize) -> Claim {
        let own = &self.rings[home];
        let counters = &self.counters[home];
        let mut spins = 0;
        loop {
            if self.aborted.load(Ordering::Acquire) {
                return Claim::Done;
            }
            if let Some(b) = own.ticket().and_then(|t| self.wait_ticket(own, t)) {
                counters.batches.fetch_add(1, Ordering::Relaxed);
                return Claim::Batch(b);
            }
            if let Some((b, first)) = self.steal(home) {
                counters.batches.fetch_add(1, Ordering::Relaxed);
                counters.batches_stolen.fetch_add(1, Ordering::Relaxed);
                if first {
                    counters.chunks_stolen.fetch_add(1, Ordering::Relaxed);
                }
                return Claim::Batch(b);
            }
            if self.closed.load(Ordering::SeqCst) && self.backlog() == 0 {
                return Claim::Done;
            }
            if spins < SPIN {
                spins += 1;
                std::hint::spin_loop();
                continue;
            }
            let ready = self.sleep_unless(|| {
                own.backlog() > 0
                    || self.stealable(home)
                    || self.closed.load(Ordering::SeqCst)
                    || self.aborted.load(Ordering::SeqCst)
            });
            if ready && self.closed.load(Ordering::SeqCst) && self.backlog() == 0 {
                return Claim::Done;
            }
        }
    }

    /// Whether an idle node may steal from `victim` now: when the victim's unstarted chunks
    /// exceed the distance-weighted threshold; anything at all once the input has ended; and
    /// anything while the victim's workers are busy and none is idle (a slow trickle of input fills one
    /// chunk for a long time: its records must not wait while other nodes idle).
    fn may_steal(&self, victim: usize, threshold: u64) -> bool {
        let r = &self.rings[victim];
        r.backlog() > 0
            && (self.closed.load(Ordering::Acquire)
                || r.unstarted_chunks() > threshold
                || (self.idle[victim].load(Ordering::SeqCst) == 0
                    && self.busy[victim].load(Ordering::SeqCst) > 0))
    }

    fn stealable(&self, home: usize) -> bool {
        self.victims[home]
            .iter()
            .any(|&(v, t)| self.may_steal(v, t))
    }

    fn steal(&self, home: usize) -> Option<(crate::dispatch::batch::Batch, bool)> {
        for &(v, threshold) in &self.victims[home] {
            // Own work that arrived meanwhile comes first.
            if self.rings[home].backlog() > 0 {
                return None;
            }
            if let Some(got) = self
                .may_steal(v, threshold)
                .then(|| self.rings[v].steal())
                .flatten()
            {
                return Some(got);
            }
        }
        None
    }

    /// Sleeps until the next publish, close or abort unless `ready()` says there is something
    /// to do. It is asked after this worker counts as sleeping, so a publisher that bumps the
    /// word before it looks cannot miss the sleeper. Returns what `ready()` said.
    fn sleep_unless(&self, ready: impl FnOnce() -> bool) -> bool {
        self.sleeping.fetch_add(1, Ordering::SeqCst);
        let seen = self.published.load(Ordering::SeqCst);
        let ready = ready();
        if !ready {
            self.hungry();
            futex_wait(&self.published, seen);
        }
        self.sleeping.fetch_sub(1, Ordering::SeqCst);
        ready
    }

    /// Waits for ticket `t` of `ring` (taken, so this caller owns it): `None` when the ring
    /// ended below it.
    fn wait_ticket(&self, ring: &Ring, t: u64) -> Option<crate::dispatch::batch::Batch> {
        let mut spins = 0;
        loop {
            match ring.poll(t) {
                Poll::Ready(b) => return Some(b),
                Poll::Done => return None,
                Poll::Pending => {}
            }
            if spins < SPIN {
                spins += 1;
                std::hint::spin_loop();
                continue;
            }
            let mut got = Poll::Pending;
            self.sleep_unless(|| {
                got = ring.poll(t);
                got != Poll::Pending
            });
            match got {
                Poll::Ready(b) => return Some(b),
                Poll::Done => return None,
                Poll::Pending => {}
            }
        }
    }

    /// Adds time a worker of `node` spent on a batch.
    pub fn note_busy(&self, node: usize, ns: u64) {
        self.counters[node].busy_ns.fetch_add(ns, Ordering::Relaxed);
    }

    /// Counts a spool chunk the kernel bound to `node`'s memory.
    pub fn note_bound(&self, node: usize) {
        self.counters[node]
            .chunks_bound
            .fetch_add(1, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sys::numa::NodeSpec;
    use std::sync::Mutex;

    fn rings(nodes: u32, workers: usize, size: u64) -> Rings {
        let layout = Layout::plan(&NodeSpec::Logical(nodes), workers, Some(size)).unwrap();
        assert_eq!(layout.nodes.len(), nodes as usize);
        Rings::new(Arc::new(layout), 8).unwrap()
    }

    #[test]
    fn every_batch_is_claimed_once_across_nodes_with_stealing() {
        const N: u64 = 20_000;
        let r = rings(4, 4, N * 100);
        let chunk = r.layout().chunk_size;
        let seen = Mutex::new(Vec::new());
        std::thread::scope(|s| {
            for w in 0..4 {
                let (r, seen) = (&r, &seen);
                s.spawn(move || {
                    let home = r.layout().node_of_worker(w);
                    let mut mine = Vec::new();
                    let mut ran = false;
                    while let Claim::Batch(b) = r.claim(home, ran) {
                        ran = true;
                        assert_eq!(b.start, b.seq * 100);
                        // Only node 0 runs fast; the others steal or are stolen from.
                        if home != 0 {
                            std::thread::yield_now();
                        }
                        mine.push(b.seq);
                    }
                    seen.lock().unwrap().extend(mine);
                });
            }
            for i in 0..N {
                assert_eq!(r.publish(i * 100, i * 100 + 100, 1), Some(i));
            }
            r.close();
        });
        let mut all = seen.into_inner().unwrap();
        all.sort_unstable();
        assert_eq!(all, (0..N).collect::<Vec<_>>());
        let placed: u64 = r
            .counters
            .iter()
            .map(|c| c.chunks_placed.load(Ordering::Relaxed))
            .sum();
        assert_eq!(placed, (N * 100).div_ceil(chunk));
        let batches: u64 = r
            .counters
            .iter()
            .map(|c| c.batches.load(Ordering::Relaxed))
            .sum();
        assert_eq!(batches, N);
    }

    #[test]
    fn a_node_does_not_steal_below_the_threshold_until_input_ends() {
        let r = rings(2, 2, 1 << 30);
        let chunk = r.layout().chunk_size;
        // Node 0's worker is idle (about to take its own work).
        r.idle[0].store(1, Ordering::SeqCst);
        r.busy[0].store(1, Ordering::SeqCst);
        // One batch in chunk 0 (node 0): node 1 finds nothing it may take.
        r.publish(0, 10, 1);
        assert!(!r.stealable(1));
        // Chunks 2, 4, 6 and 8 also go to node 0: 5 unstarted chunks > 1 + 20/10.
        for c in [2, 4, 6, 8] {
            r.publish(c * chunk, c * chunk + 10, 1);
        }
        assert!(r.stealable(1));
        let Claim::Batch(b) = r.claim(1, false) else {
            panic!("node 1 should steal")
        };
        assert_eq!(b.seq, 0);
        assert_eq!(r.counters[1].chunks_stolen.load(Ordering::Relaxed), 1);
        // Node 0 takes one of its own: three unstarted chunks are left, at the threshold: no steal.
        assert!(matches!(r.claim(0, false), Claim::Batch(_)));
        assert!(!r.stealable(1));
        // While every worker of node 0 is busy, its waiting work is anybody's.
        r.idle[0].store(0, Ordering::SeqCst);
        assert!(r.stealable(1));
        r.idle[0].store(1, Ordering::SeqCst);
        assert!(!r.stealable(1));
        // Once the input ended, anything waiting may be taken.
        r.close();
        assert!(r.stealable(1));
        let mut left = 0;
        while let Claim::Batch(_) = r.claim(1, true) {
            left += 1;
        }
        assert_eq!(left, 3);
        assert_eq!(r.claim(0, true), Claim::Done);
    }
}
