//! Job slots: the number `{%}` gives a job, from 1, unique among the jobs running at once.
//! As in GNU Parallel, the first jobs take slots 1, 2, … in their order, and a later job takes
//! the lowest slot free when it starts. It only numbers; it never decides what runs.

use std::sync::atomic::{AtomicU64, Ordering};

/// The slots of one run: a bit per slot (set: held), and a bit per first job whose slot is
/// kept for it (job `k` of the first `workers`, until it starts or is skipped).
pub struct JobSlots {
    held: Box<[AtomicU64]>,
    kept: Box<[AtomicU64]>,
    workers: u64,
}

const BITS: u64 = 64;

impl JobSlots {
    /// Slots for `workers` jobs at once. Twice as many bits are kept, so a slot can always be
    /// found even while kept slots of jobs that never start (a halted run) are outstanding.
    pub fn new(workers: usize) -> JobSlots {
        let workers = workers.max(1) as u64;
        let words = (2 * workers).div_ceil(BITS) as usize;
        let filled = |n: u64| -> Box<[AtomicU64]> {
            (0..words as u64)
                .map(|w| {
                    let lo = w * BITS;
                    let ones = n.saturating_sub(lo).min(BITS);
                    AtomicU64::new(if ones == BITS { !0 } else { (1 << ones) - 1 })
                })
                .collect()
        };
        JobSlots {
            held: filled(workers),
            kept: filled(workers),
            workers,
        }
    }

    /// The slot job `seq` (from 0) takes as it starts (an attempt of it).
    pub fn take(&self, seq: u64) -> u64 {
        if seq < self.workers && self.unkeep(seq) {
            return seq + 1;
        }
        for (w, word) in self.held.iter().enumerate() {
            let mut cur = word.load(Ordering::Relaxed);
            while cur != !0 {
                let bit = (!cur).trailing_zeros() as u64;
                match word.compare_exchange_weak(
                    cur,
                    cur | 1 << bit,
                    Ordering::AcqRel,
                    Ordering::Relaxed,
                ) {
                    Ok(_) => return w as u64 * BITS + bit + 1,
                    Err(now) => cur = now,
                }
            }
        }
        // Unreachable while each worker holds one slot at most (there are twice as many).
        self.workers + 1
    }

    /// Gives slot `slot` (from 1) back once its job ended.
    pub fn give(&self, slot: u64) {
        let i = slot - 1;
        if let Some(word) = self.held.get((i / BITS) as usize) {
            word.fetch_and(!(1 << (i % BITS)), Ordering::AcqRel);
        }
    }

    /// Job `seq` will not run (an earlier run did it): the slot kept for it is free.
    pub fn forgo(&self, seq: u64) {
        if seq < self.workers && self.unkeep(seq) {
            self.give(seq + 1);
        }
    }

    /// At most `jobs` jobs run at once from now on (the system allows no more): the slots
    /// kept for first jobs past that are free, so those jobs take the lowest free ones.
    pub fn lower(&self, jobs: usize) {
        for seq in jobs as u64..self.workers {
            self.forgo(seq);
        }
    }

    /// Whether the slot kept for job `seq` was still kept (now it is not).
    fn unkeep(&self, seq: u64) -> bool {
        let bit = 1 << (seq % BITS);
        self.kept[(seq / BITS) as usize].fetch_and(!bit, Ordering::AcqRel) & bit != 0
    }
}

#[cfg(test)]
mod tests {
    use super::JobSlots;

    #[test]
    fn the_first_jobs_take_their_own_slots_in_any_start_order() {
        let s = JobSlots::new(3);
        assert_eq!(s.take(2), 3);
        assert_eq!(s.take(0), 1);
        assert_eq!(s.take(1), 2);
        s.give(2);
        assert_eq!(s.take(3), 2, "a later job takes the lowest free slot");
        s.give(1);
        s.give(3);
        assert_eq!(s.take(4), 1);
        assert_eq!(s.take(5), 3);
    }

    #[test]
    fn a_retry_of_a_first_job_takes_a_free_slot_and_a_skipped_one_frees_its_own() {
        let s = JobSlots::new(2);
        assert_eq!(s.take(0), 1);
        s.give(1);
        assert_eq!(s.take(0), 1, "its kept slot is gone; slot 1 is free again");
        s.forgo(1);
        assert_eq!(s.take(2), 2);
    }

    #[test]
    fn fewer_jobs_at_once_free_the_slots_kept_past_them() {
        let s = JobSlots::new(4);
        assert_eq!(s.take(0), 1);
        assert_eq!(s.take(1), 2);
        s.lower(2);
        s.give(1);
        assert_eq!(
            s.take(2),
            1,
            "job 3 takes the lowest free slot, not its kept 3"
        );
        assert_eq!(s.take(3), 3, "slots 3 and 4 were free again");
    }

    #[test]
    fn running_jobs_never_share_a_slot() {
        // Fewer threads and rounds under the interpreter (miri), which is far slower; still
        // more than one word of the bit set (64 slots) and every thread racing the others.
        let (workers, rounds) = if cfg!(miri) { (70, 3) } else { (70, 200) };
        let s = std::sync::Arc::new(JobSlots::new(workers as usize));
        let seen = std::sync::Mutex::new(std::collections::HashSet::new());
        std::thread::scope(|t| {
            for w in 0..workers {
                let (s, seen) = (&s, &seen);
                t.spawn(move || {
                    for j in 0..rounds {
                        let slot = s.take(w + workers * j);
                        assert!((1..=140).contains(&slot));
                        assert!(seen.lock().unwrap().insert(slot), "slot {slot} held twice");
                        seen.lock().unwrap().remove(&slot);
                        s.give(slot);
                    }
                });
            }
        });
    }
}
