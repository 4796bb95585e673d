//! `-j FILE` for the run: how many jobs may run at once, read from a file again whenever its
//! text changes (GNU Parallel's procfile; the supervisor looks every 250 ms). A worker takes a
//! place before it claims a batch and gives it back when the batch ends; with every place
//! taken it parks. A smaller number lets running jobs finish and starts none until fewer run;
//! a larger one lets parked workers go on, and more are started as batches wait.
//!
//! It reads the file, parses its value and parks workers; it never ends a command. One atomic
//! compare-and-swap per batch, only in runs given `-j FILE`.

use std::os::fd::BorrowedFd;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

/// How often a parked worker looks at the number again.
const PARKED_LOOK: Duration = Duration::from_millis(100);

/// A `-j` value: `N`, `N%` (of `cpus`, at least 1), `+N`, `-N` (at least 1) or `0` (as many as
/// can run: `unbounded`). None when it is none of those.
pub fn jobs_value(text: &str, cpus: u64, unbounded: u64) -> Option<u64> {
    let t = text.trim();
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit() || b == b'.');
    if let Some(p) = t.strip_suffix('%') {
        let p: f64 = p.parse().ok().filter(|_| digits(p))?;
        return Some(((cpus as f64) * p / 100.0).floor().max(1.0) as u64);
    }
    if let Some(plus) = t.strip_prefix('+') {
        return Some(cpus + plus.parse::<u64>().ok()?);
    }
    if let Some(minus) = t.strip_prefix('-') {
        return Some(cpus.saturating_sub(minus.parse::<u64>().ok()?).max(1));
    }
    match t.parse::<u64>().ok()? {
        0 => Some(unbounded),
        n => Some(n),
    }
}

/// A regular file's first 64 bytes as text (a FIFO or a device is never read: opened
/// non-blocking, then checked).
pub fn read_jobs_file(path: &Path) -> Option<String> {
    String::from_utf8(crate::sys::read_regular(path, 64).ok()?).ok()
}

/// The number of jobs that may run at once, and the file it is read from.
pub struct JobCap {
    path: PathBuf,
    cpus: u64,
    most: u64,
    cap: AtomicUsize,
    /// Workers holding one of the places (each from before its claim to its batch's end).
    taken: AtomicUsize,
    /// The file's text as last read (its first 64 bytes): the number changes only when it does.
    seen: Mutex<Option<String>>,
}

impl JobCap {
    /// A cap of `now` jobs, read again from `path` (values relative to `cpus`; at most `most`).
    pub fn new(path: PathBuf, cpus: u64, most: u64, now: usize) -> JobCap {
        JobCap {
            seen: Mutex::new(read_jobs_file(&path)),
            path,
            cpus,
            most,
            cap: AtomicUsize::new(now.max(1)),
            taken: AtomicUsize::new(0),
        }
    }

    /// The cap `-j FILE` asks for, if it does (at most `workers`).
    pub fn of(work: &crate::run::Work, workers: usize) -> Option<JobCap> {
        let (path, cpus, now) = work.jobs_file.as_ref()?;
        Some(JobCap::new(
            path.clone(),
            *cpus,
            workers as u64,
            *now as usize,
        ))
    }

    /// The jobs that may run at once now.
    pub fn get(&self) -> usize {
        self.cap.load(Ordering::Relaxed)
    }

    /// Reads the file again; returns the new number when its text changed to another number.
    /// A file gone, unreadable or holding no number leaves the number as it is.
    pub fn reread(&self) -> Option<usize> {
        let text = read_jobs_file(&self.path)?;
        {
            let mut seen = self.seen.lock().unwrap_or_else(|e| e.into_inner());
            if seen.as_deref() == Some(text.as_str()) {
                return None;
            }
            *seen = Some(text.clone());
        }
        let n = jobs_value(&text, self.cpus, self.most)?.clamp(1, self.most) as usize;
        (self.cap.swap(n, Ordering::Relaxed) != n).then_some(n)
    }

    /// Takes a place for a batch, parking (looking again every 100 ms) while all the places
    /// are taken, unless `over()` says there is no more to wait for (the input is all handed
    /// out: the place is taken all the same, to be given back). False when `stop` became
    /// readable first (no place taken).
    pub fn take(&self, stop: BorrowedFd<'_>, over: &dyn Fn() -> bool) -> bool {
        loop {
            let taken = self.taken.load(Ordering::Acquire);
            if taken < self.get() || over() {
                if self
                    .taken
                    .compare_exchange(taken, taken + 1, Ordering::AcqRel, Ordering::Acquire)
                    .is_ok()
                {
                    return true;
                }
                continue;
            }
            if crate::sys::stopped_within(stop, PARKED_LOOK) {
                return false;
            }
        }
    }

    /// Gives a place back (its batch ended, or there was none to claim).
    pub fn give_back(&self) {
        self.taken.fetch_sub(1, Ordering::AcqRel);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::AsFd;

    #[test]
    fn values_are_gnu_parallels() {
        assert_eq!(jobs_value("3\n", 8, 256), Some(3));
        assert_eq!(jobs_value("50%", 8, 256), Some(4));
        assert_eq!(jobs_value("1%", 8, 256), Some(1));
        assert_eq!(jobs_value("+2", 8, 256), Some(10));
        assert_eq!(jobs_value("-2", 8, 256), Some(6));
        assert_eq!(jobs_value("-20", 8, 256), Some(1));
        assert_eq!(jobs_value("0", 8, 256), Some(256));
        for bad in ["", "x", "3x", "%", "+", "1e3%"] {
            assert_eq!(jobs_value(bad, 8, 256), None, "{bad:?}");
        }
    }

    #[test]
    fn a_changed_file_changes_the_number_and_parked_workers_go_on() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("procs");
        std::fs::write(&file, "2\n").unwrap();
        let cap = JobCap::new(file.clone(), 4, 256, 2);
        assert_eq!(cap.reread(), None, "unchanged");
        std::fs::write(&file, "1\n").unwrap();
        assert_eq!(cap.reread(), Some(1));
        std::fs::write(&file, "nonsense").unwrap();
        assert_eq!(cap.reread(), None);
        assert_eq!(cap.get(), 1, "a file without a number changes nothing");
        let stop = crate::sys::Event::new().unwrap();
        assert!(cap.take(stop.as_fd(), &|| false));
        std::thread::scope(|s| {
            let parked = s.spawn(|| cap.take(stop.as_fd(), &|| false));
            std::thread::sleep(Duration::from_millis(250));
            assert!(
                !parked.is_finished(),
                "a second place waits under a cap of 1"
            );
            std::fs::write(&file, "+0").unwrap();
            assert_eq!(cap.reread(), Some(4));
            assert!(parked.join().unwrap());
        });
        std::fs::write(&file, "1").unwrap();
        cap.reread();
        // Two places taken, one allowed: the next waits until both are given back.
        std::thread::scope(|s| {
            let parked = s.spawn(|| cap.take(stop.as_fd(), &|| false));
            std::thread::sleep(Duration::from_millis(150));
            cap.give_back();
            std::thread::sleep(Duration::from_millis(250));
            assert!(!parked.is_finished(), "one place is still taken");
            cap.give_back();
            assert!(parked.join().unwrap());
        });
        assert!(cap.take(stop.as_fd(), &|| true), "nothing left to wait for");
        stop.signal();
        assert!(!cap.take(stop.as_fd(), &|| false));
    }
}
