//! Pacing of job starts and ends: `--delay` (a least time between two starts, across all
//! workers) and `--job-timeout` (how long one batch may run, fixed or a share of the median
//! runtime so far), with the median itself kept lock-free.
//!
//! It only measures and waits; it never signals a process (the engine's supervisor does) and
//! never judges an outcome.

use std::os::fd::BorrowedFd;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// `--job-timeout`: how long one batch may run before it is killed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum JobTimeout {
    /// A fixed time.
    Fixed(Duration),
    /// This percentage of the median runtime of the batches that succeeded so far (GNU
    /// Parallel's `--timeout N%`); no limit until [`MEDIAN_FROM`] have.
    Percent(u32),
    /// GNU Parallel's `--timeout N`: a batch is ended at the first whole second of the wall
    /// clock past its start (to the millisecond) plus this time, as GNU Parallel compares whole
    /// seconds of the clock with it ([`whole_second_deadline`]). A `sleep 2` under
    /// `--timeout 2` then ends by itself, as it does under GNU Parallel.
    WholeSeconds(Duration),
}

/// When a batch started at `start` (the wall clock, since the epoch) is over a
/// [`JobTimeout::WholeSeconds`] limit: the first whole second after `start` (cut to the
/// millisecond) plus `limit`.
pub fn whole_second_deadline(start: Duration, limit: Duration) -> Duration {
    let start = Duration::from_millis(start.as_millis() as u64);
    Duration::from_secs((start + limit).as_secs() + 1)
}

/// Successful batches needed before an `N%` timeout applies.
pub const MEDIAN_FROM: u64 = 3;

/// How a batch over its time is ended: each signal, then the wait before the next step (GNU
/// Parallel's default: TERM, 200 ms, TERM, 100 ms, TERM, 50 ms, KILL).
pub const KILL_STEPS: [(i32, Duration); 4] = [
    (libc::SIGTERM, Duration::from_millis(200)),
    (libc::SIGTERM, Duration::from_millis(100)),
    (libc::SIGTERM, Duration::from_millis(50)),
    (libc::SIGKILL, Duration::from_millis(25)),
];

/// Buckets of the runtime histogram: bucket `i` holds runtimes of about `1.02^i` µs, from 1 µs
/// to about 11 days; the median is known to 2%.
const BUCKETS: usize = 1400;
const RATIO: f64 = 1.02;

/// The runtimes of successful batches, as a log-scale histogram: recording is one atomic add
/// (no lock, no allocation), the median a walk over the buckets.
pub struct RuntimeMedian {
    buckets: Box<[AtomicU64]>,
    count: AtomicU64,
}

impl Default for RuntimeMedian {
    fn default() -> RuntimeMedian {
        RuntimeMedian {
            buckets: (0..BUCKETS).map(|_| AtomicU64::new(0)).collect(),
            count: AtomicU64::new(0),
        }
    }
}

impl RuntimeMedian {
    fn bucket(d: Duration) -> usize {
        let us = d.as_secs_f64() * 1e6;
        if us <= 1.0 {
            0
        } else {
            ((us.ln() / RATIO.ln()) as usize).min(BUCKETS - 1)
        }
    }

    /// A batch succeeded after running `d`.
    pub fn record(&self, d: Duration) {
        self.buckets[Self::bucket(d)].fetch_add(1, Ordering::Relaxed);
        self.count.fetch_add(1, Ordering::Release);
    }

    /// Batches recorded so far.
    pub fn count(&self) -> u64 {
        self.count.load(Ordering::Acquire)
    }

    /// The median runtime (the middle of its bucket), None before any was recorded.
    pub fn median(&self) -> Option<Duration> {
        let n = self.count();
        if n == 0 {
            return None;
        }
        let half = n.div_ceil(2);
        let mut seen = 0;
        for (i, b) in self.buckets.iter().enumerate() {
            seen += b.load(Ordering::Relaxed);
            if seen >= half {
                let us = RATIO.powf(i as f64 + 0.5);
                return Some(Duration::from_secs_f64(us / 1e6));
            }
        }
        None
    }
}

impl JobTimeout {
    /// The time a batch may run now (None: no limit yet).
    pub fn limit(&self, median: &RuntimeMedian) -> Option<Duration> {
        match *self {
            JobTimeout::Fixed(d) | JobTimeout::WholeSeconds(d) => Some(d),
            JobTimeout::Percent(p) => {
                if median.count() < MEDIAN_FROM {
                    return None;
                }
                median.median().map(|m| m.mul_f64(f64::from(p) / 100.0))
            }
        }
    }
}

/// `--delay`: starts at least `gap` apart, whichever worker starts them. The gap runs from the
/// previous start as it happened (a late wake-up does not shorten the next gap).
pub struct StartGate {
    gap: Duration,
    /// When the last start was let through.
    last: Mutex<Option<Instant>>,
}

impl StartGate {
    /// A gate that lets starts through at least `gap` apart.
    pub fn new(gap: Duration) -> StartGate {
        StartGate {
            gap,
            last: Mutex::new(None),
        }
    }

    /// Waits for this start's turn: the moment it was let through, or None when `stop` (an
    /// eventfd readable once the run stops) became readable first. Workers queue on the gate's
    /// lock, one start at a time.
    pub fn wait(&self, stop: BorrowedFd<'_>) -> Option<Started> {
        self.hold().wait(stop)
    }

    /// Takes the gate before a worker claims its batch, so that starts go in the order the
    /// batches were claimed (a worker that claimed later cannot start first): the holder
    /// claims, then [`StartTurn::wait`]s for its start's time, or lets go without starting
    /// (nothing to claim, or a batch that is not run).
    pub fn hold(&self) -> StartTurn<'_> {
        StartTurn {
            gap: self.gap,
            last: self.last.lock().unwrap_or_else(|e| e.into_inner()),
        }
    }
}

/// The moment a start was let through, on both clocks: the gate spaces starts by `mono`, and
/// the joblog shows `wall` — taken together, so that logged starts are spaced as the gate
/// spaced them (a worker preempted between the two would otherwise log a shorter gap).
#[derive(Clone, Copy, Debug)]
pub struct Started {
    /// The wall clock's time, as logs show it.
    pub wall: std::time::SystemTime,
    /// The monotonic clock's, as gaps and runtimes are measured.
    pub mono: Instant,
}

impl Started {
    /// Now, on both clocks.
    pub fn now() -> Started {
        Started {
            wall: std::time::SystemTime::now(),
            mono: Instant::now(),
        }
    }
}

/// A worker's hold on the [`StartGate`]: no other start passes until it is dropped.
pub struct StartTurn<'a> {
    gap: Duration,
    last: std::sync::MutexGuard<'a, Option<Instant>>,
}

impl StartTurn<'_> {
    /// Waits until `gap` has passed since the previous start, and counts this start as now
    /// (returned); None when `stop` became readable first.
    pub fn wait(mut self, stop: BorrowedFd<'_>) -> Option<Started> {
        // A gate of no gap only keeps starts in claim order: it passes without a system call
        // (the worker looked at the stop when it claimed).
        while !self.gap.is_zero() {
            let left = self
                .last
                .map_or(Duration::ZERO, |t| self.gap.saturating_sub(t.elapsed()));
            if crate::sys::stopped_within(stop, left) {
                return None;
            }
            if left.is_zero() {
                break;
            }
        }
        let now = Started::now();
        *self.last = Some(now.mono);
        Some(now)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn whole_second_deadlines_are_past_start_plus_limit() {
        let ms = Duration::from_millis;
        // Started at 10.300 s with 2 s: over at 13 s (12.300 is not past whole second 12).
        assert_eq!(whole_second_deadline(ms(10_300), ms(2000)), ms(13_000));
        // At 10.000 s exactly: 12 s is not past it either (GNU: time > start + limit).
        assert_eq!(whole_second_deadline(ms(10_000), ms(2000)), ms(13_000));
        // Microseconds are cut as GNU Parallel cuts its start time.
        assert_eq!(
            whole_second_deadline(Duration::from_micros(10_999_999), ms(500)),
            ms(12_000)
        );
    }
    use std::os::fd::AsFd;

    #[test]
    fn the_median_is_within_two_percent() {
        let m = RuntimeMedian::default();
        assert_eq!(m.median(), None);
        for ms in [10, 20, 1000, 30, 25] {
            m.record(Duration::from_millis(ms));
        }
        let got = m.median().unwrap().as_secs_f64();
        assert!((got - 0.025).abs() < 0.025 * 0.03, "{got}");
    }

    #[test]
    fn a_percent_timeout_waits_for_three_successes() {
        let m = RuntimeMedian::default();
        let t = JobTimeout::Percent(200);
        m.record(Duration::from_secs(1));
        m.record(Duration::from_secs(1));
        assert_eq!(t.limit(&m), None);
        m.record(Duration::from_secs(1));
        let l = t.limit(&m).unwrap().as_secs_f64();
        assert!((l - 2.0).abs() < 0.05, "{l}");
    }

    #[test]
    fn starts_are_spaced() {
        let gate = StartGate::new(Duration::from_millis(30));
        let ev = crate::sys::Event::new().unwrap();
        let fd = ev.as_fd();
        let t = Instant::now();
        for _ in 0..4 {
            assert!(gate.wait(fd).is_some());
        }
        assert!(
            t.elapsed() >= Duration::from_millis(90),
            "{:?}",
            t.elapsed()
        );
        ev.signal();
        assert!(gate.wait(fd).is_none(), "a stop ends the wait");
    }

    #[test]
    fn starts_go_in_the_order_of_the_claims_made_under_the_gate() {
        use std::sync::atomic::AtomicUsize;
        let gate = StartGate::new(Duration::from_millis(20));
        let ev = crate::sys::Event::new().unwrap();
        let claims = AtomicUsize::new(0);
        let starts = Mutex::new(Vec::new());
        std::thread::scope(|s| {
            for worker in 0..4u64 {
                let (gate, ev, claims, starts) = (&gate, &ev, &claims, &starts);
                s.spawn(move || {
                    for _ in 0..5 {
                        let turn = gate.hold();
                        let claimed = claims.fetch_add(1, Ordering::Relaxed);
                        // A worker that claimed earlier is slower to reach its wait.
                        std::thread::sleep(Duration::from_millis(worker * 3));
                        assert!(turn.wait(ev.as_fd()).is_some());
                        starts.lock().unwrap().push(claimed);
                    }
                });
            }
        });
        let starts = starts.into_inner().unwrap();
        assert_eq!(starts, (0..20).collect::<Vec<_>>());
    }
}
