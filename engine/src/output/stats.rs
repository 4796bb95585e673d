//! `--stats`: the end-of-run summary — batches, records, workers, wall time and CPU use of the
//! whole process tree (frun and every reaped child) over wall time × usable CPUs.
//! It measures; it does not decide anything about the run.

use std::time::Duration;

use nix::sys::resource::{UsageWho, getrusage};
use nix::sys::time::TimeVal;

/// Figures of one run.
pub struct Stats {
    /// Time from the run's start to its end.
    pub wall: Duration,
    /// CPU time (user and system) of frun and its children.
    pub cpu: Duration,
    /// Batches finished.
    pub batches: u64,
    /// Records in them.
    pub records: u64,
    /// Workers started.
    pub workers: usize,
    /// The most workers the run could have started.
    pub workers_max: usize,
    /// CPUs the run may use.
    pub cpus: usize,
}

fn rusage(who: UsageWho) -> Duration {
    let Ok(ru) = getrusage(who) else {
        return Duration::ZERO;
    };
    let tv = |t: TimeVal| Duration::new(t.tv_sec() as u64, t.tv_usec() as u32 * 1000);
    tv(ru.user_time()) + tv(ru.system_time())
}

impl Stats {
    /// Reads CPU times now (call after every child was reaped).
    pub fn measure(
        wall: Duration,
        batches: u64,
        records: u64,
        workers: usize,
        workers_max: usize,
        cpus: usize,
    ) -> Stats {
        let cpu = rusage(UsageWho::RUSAGE_SELF) + rusage(UsageWho::RUSAGE_CHILDREN);
        Stats {
            wall,
            cpu,
            batches,
            records,
            workers,
            workers_max,
            cpus,
        }
    }

    /// CPU time over wall time × usable CPUs, in percent.
    pub fn utilisation(&self) -> f64 {
        let avail = self.wall.as_secs_f64() * self.cpus.max(1) as f64;
        if avail > 0.0 {
            100.0 * self.cpu.as_secs_f64() / avail
        } else {
            0.0
        }
    }

    /// One line of `key=value` pairs, easy to grep, diff and paste.
    pub fn line(&self) -> String {
        let rate = if self.wall.as_secs_f64() > 0.0 {
            self.records as f64 / self.wall.as_secs_f64()
        } else {
            0.0
        };
        format!(
            "stats: batches={} records={} workers={}/{} wall={:.3}s cpu={:.3}s \
             utilisation={:.1}% cpus={} records_per_s={:.0}",
            self.batches,
            self.records,
            self.workers,
            self.workers_max,
            self.wall.as_secs_f64(),
            self.cpu.as_secs_f64(),
            self.utilisation(),
            self.cpus,
            rate
        )
    }
}
