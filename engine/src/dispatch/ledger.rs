//! The ledger: what happened to every batch — done, failed, retried, given up — the retry
//! policy that decides between those, and the summary that decides exit status 123 or 3.
//!
//! Workers and the scanner report here; nothing here runs commands or writes output.

use std::io;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::dispatch::batch::Batch;
use crate::sys::errors::count;

/// `--halt`: stop once this many batches failed, succeeded or were done.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Halt {
    /// End running commands at once (`now`) rather than letting them finish (`soon`).
    pub now: bool,
    /// Which batches count.
    pub on: HaltOn,
    /// How many such batches make the run stop.
    pub count: HaltCount,
}

/// Which finished batches `--halt` counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HaltOn {
    /// Failed: exited non-zero (and not retried), killed, timed out, or given up.
    Fail,
    /// Succeeded.
    Success,
    /// Any finished batch.
    Done,
}

/// The threshold of a [`Halt`]: a number of batches or a share of the finished ones.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HaltCount {
    /// This many batches.
    Batches(u64),
    /// Percent of the finished batches (1 to 100), from the third finished batch on.
    Percent(u64),
    /// Percent of all the input's batches (1 to 100), once their number is known (the input
    /// was read to its end): GNU Parallel's `N%`.
    PercentOfAll(u64),
}

/// The failure that ended a run at `--halt`, as a joblog shows it: GNU Parallel's exit status
/// for `fail=1` is the failing job's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FailureShown {
    /// Exit value (-1: killed for its time, or could not start).
    pub exitval: i32,
    /// The signal that ended it, 0 if none.
    pub signal: i32,
}

/// Says that a command was ended by frun (`fact`: for its time, or for memory), its command
/// line `line` the notice's detail.
fn say_ended(fact: crate::sys::notice::Fact, line: &str, text: &str) {
    crate::sys::notice::say_about(
        crate::sys::notice::NoticeKind::Problem,
        Some(fact),
        line,
        format_args!("{text}"),
    )
}

/// What a batch ended for memory is said to be.
const EVICTED: &str = "ended as memory ran short (--memfree)";

/// How one batch ended.
#[derive(Debug)]
pub enum Outcome {
    /// The command exited with status 0 (or the plugin returned 0).
    Ok,
    /// The command exited with this non-zero status.
    Exited(i32),
    /// The command was killed by this signal.
    Signaled(i32),
    /// The command could not be started.
    SpawnFailed(io::Error),
    /// The worker shell running a bash function exited with this status during the batch
    /// (`exit` in the function): retried like a crash.
    ShellExited(i32),
    /// Killed for running past `--job-timeout`. Never retried: it would most likely run out of
    /// time again.
    TimedOut {
        /// The signal it then ended by (0: it exited by itself once told to stop).
        signal: i32,
        /// Its place among the commands killed for their time (see [`Turns`]).
        turn: u64,
    },
    /// Ended because memory ran short (`--memfree`): a failure, retried as any failure is.
    Evicted {
        /// The signal it then ended by (0: it exited by itself once told to stop).
        signal: i32,
    },
}

impl Outcome {
    /// The exit value and signal a joblog shows (GNU Parallel's: a killed job has exit value
    /// 0, a timed-out one -1).
    pub fn shown(&self) -> FailureShown {
        let (exitval, signal) = match *self {
            Outcome::Ok => (0, 0),
            Outcome::Exited(c) | Outcome::ShellExited(c) => (c, 0),
            Outcome::Signaled(s) => (0, s),
            Outcome::SpawnFailed(_) => (-1, 0),
            Outcome::TimedOut { signal: s, .. } | Outcome::Evicted { signal: s } => {
                (-1, if s == 0 { libc::SIGTERM } else { s })
            }
        };
        FailureShown { exitval, signal }
    }
}

/// When a failed attempt is run again (SPEC: retries and poisoning).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Retries after the first attempt; None = forever.
    pub limit: Option<u64>,
    /// Any non-zero exit is retried (`-E`), not only 137, 139, 200 and 254.
    pub nonzero: bool,
    /// Deaths by a signal and the statuses 137, 139, 200 and 254 are retried (frun's own
    /// flags; xargs and GNU Parallel never retry on their own).
    pub crashes: bool,
    /// A batch out of retries is a failed job whose last attempt's output stands (GNU
    /// Parallel's way), not one given up.
    pub last_stands: bool,
}

/// What to do after an attempt.
#[derive(Debug, PartialEq, Eq)]
pub enum Verdict {
    /// The outcome stands (success, or a failure that is not retried).
    Final,
    /// Run the batch again.
    Retry,
    /// Give the batch up: retryable, but out of retries.
    GiveUp,
}

impl RetryPolicy {
    /// Whether this outcome is the kind that is retried.
    pub fn retryable(&self, outcome: &Outcome) -> bool {
        match outcome {
            Outcome::Ok | Outcome::TimedOut { .. } => false,
            // Whatever kind of failures are retried: it failed for want of memory, not by itself.
            Outcome::Evicted { .. } => true,
            Outcome::Signaled(_) | Outcome::ShellExited(_) => self.crashes || self.nonzero,
            Outcome::Exited(137 | 139 | 200 | 254) => self.crashes || self.nonzero,
            Outcome::Exited(_) => self.nonzero,
            // Too many arguments stays too many; anything else (EAGAIN, ENOMEM) may pass.
            Outcome::SpawnFailed(e) => e.raw_os_error() != Some(libc::E2BIG),
        }
    }

    /// The verdict after an attempt that had `retried` retries before it.
    pub fn judge(&self, outcome: &Outcome, retried: u64) -> Verdict {
        if !self.retryable(outcome) {
            Verdict::Final
        } else if self.limit.is_none_or(|l| retried < l) {
            Verdict::Retry
        } else if self.last_stands {
            Verdict::Final
        } else {
            Verdict::GiveUp
        }
    }

    /// Whether a batch's input must stay until its outcome is final (it may be run again).
    pub fn may_retry(&self) -> bool {
        self.limit != Some(0)
    }
}

#[derive(Default)]
struct FirstFailure {
    /// The failure earliest in the input (by offset), so the summary does not depend on which
    /// worker happened to finish first.
    text: Option<(u64, String)>,
}

/// Counters and the first failure, shared by all workers.
#[derive(Default)]
pub struct Ledger {
    batches: AtomicU64,
    records: AtomicU64,
    exited: AtomicU64,
    signaled: AtomicU64,
    spawn_failed: AtomicU64,
    oversized: AtomicU64,
    retried: AtomicU64,
    given_up: AtomicU64,
    timed_out: AtomicU64,
    evicted: AtomicU64,
    first: Mutex<FirstFailure>,
    /// The last failure recorded (see [`Ledger::last_failure`]).
    last_failure: Mutex<Option<FailureShown>>,
    /// The order in which commands killed for their time are told about.
    pub timeout_turns: Turns,
}

/// Turns for the notices of commands killed for their time: the supervisor gives each its
/// turn as it kills them (in input order), and each worker says its notice in its turn, so
/// that commands killed at once are told about in input order whichever worker reaps its
/// command first. A turn never comes (a batch ended otherwise) only
/// delays the next one by a second.
#[derive(Default)]
pub struct Turns {
    issued: AtomicU64,
    next: Mutex<u64>,
    moved: std::sync::Condvar,
}

impl Turns {
    /// The longest a notice waits for the ones before it.
    const PATIENCE: std::time::Duration = std::time::Duration::from_secs(1);

    /// The next turn (the supervisor's, once per command it kills for its time).
    pub fn issue(&self) -> u64 {
        self.issued.fetch_add(1, Ordering::SeqCst)
    }

    /// Runs `say` once the turns before `turn` are over (or after a second).
    pub fn in_turn(&self, turn: u64, say: impl FnOnce()) {
        let next = self.next.lock().unwrap_or_else(|e| e.into_inner());
        let (mut next, _) = self
            .moved
            .wait_timeout_while(next, Self::PATIENCE, |n| *n < turn)
            .unwrap_or_else(|e| e.into_inner());
        say();
        *next = (*next).max(turn + 1);
        self.moved.notify_all();
    }

    /// Turn `turn` is over, whether or not it said anything.
    pub fn pass(&self, turn: u64) {
        let mut next = self.next.lock().unwrap_or_else(|e| e.into_inner());
        if *next <= turn {
            *next = turn + 1;
            self.moved.notify_all();
        }
    }
}

/// Where a batch's input is: "input offset 12, 3 records" (bytes when it was not counted).
pub fn whereabouts(batch: &Batch) -> String {
    match batch.records {
        0 => format!(
            "input offset {}, {}",
            batch.start,
            count(batch.end - batch.start, "byte", "bytes")
        ),
        1 => format!("input offset {}, 1 record", batch.start),
        n => format!("input offset {}, {n} records", batch.start),
    }
}

/// Describes a signal: "signal 11 (Segmentation fault)".
pub fn signal_text(sig: i32) -> String {
    // SAFETY: strsignal returns a pointer to a static or thread-local string, read at once.
    let name = unsafe {
        let p = libc::strsignal(sig);
        if p.is_null() {
            String::new()
        } else {
            std::ffi::CStr::from_ptr(p).to_string_lossy().into_owned()
        }
    };
    format!("signal {sig} ({name})")
}

fn shell_exit_text(code: i32) -> String {
    format!("the worker exited with status {code} (exit in the function)")
}

impl Ledger {
    fn note_first(&self, at: u64, text: String) {
        let mut f = self.first.lock().unwrap_or_else(|e| e.into_inner());
        if f.text.as_ref().is_none_or(|(first, _)| at < *first) {
            f.text = Some((at, text));
        }
    }

    fn note_last(&self, outcome: &Outcome) {
        *self.last_failure.lock().unwrap_or_else(|e| e.into_inner()) = Some(outcome.shown());
    }

    /// Records a finished batch whose command line, as messages show it, is `line()` (asked
    /// for only when a message names it: a batch killed for its time).
    pub fn record(&self, batch: &Batch, outcome: &Outcome, line: &dyn Fn() -> String) {
        self.batches.fetch_add(1, Ordering::Relaxed);
        self.records.fetch_add(batch.records, Ordering::Relaxed);
        if !matches!(outcome, Outcome::Ok) {
            self.note_last(outcome);
        }
        let place = || format!("batch {} ({})", batch.seq, whereabouts(batch));
        match outcome {
            Outcome::Ok => {}
            Outcome::TimedOut { turn, .. } => {
                self.timed_out.fetch_add(1, Ordering::Relaxed);
                let text = format!("{}: killed after its --job-timeout", place());
                self.timeout_turns.in_turn(*turn, || {
                    say_ended(crate::sys::notice::Fact::TimedOut, &line(), &text)
                });
                self.note_first(batch.start, text);
            }
            Outcome::Evicted { .. } => {
                self.evicted.fetch_add(1, Ordering::Relaxed);
                let text = format!("{}: {EVICTED}", place());
                say_ended(crate::sys::notice::Fact::Evicted, &line(), &text);
                self.note_first(batch.start, text);
            }
            Outcome::Exited(code) => {
                self.exited.fetch_add(1, Ordering::Relaxed);
                self.note_first(batch.start, format!("{}: exit status {code}", place()));
            }
            Outcome::ShellExited(code) => {
                self.exited.fetch_add(1, Ordering::Relaxed);
                let text = format!("{}: {}", place(), shell_exit_text(*code));
                say!("{text}");
                self.note_first(batch.start, text);
            }
            Outcome::Signaled(sig) => {
                self.signaled.fetch_add(1, Ordering::Relaxed);
                let text = format!("{}: killed by {}", place(), signal_text(*sig));
                say!("{text}");
                self.note_first(batch.start, text);
            }
            Outcome::SpawnFailed(e) => {
                self.spawn_failed.fetch_add(1, Ordering::Relaxed);
                let text = format!(
                    "{}: could not start the command: {}",
                    place(),
                    crate::sys::errors::os_message(e)
                );
                say!("{text}");
                self.note_first(batch.start, text);
            }
        }
    }

    /// Records a failed attempt that will be run again.
    pub fn retried(&self) {
        self.retried.fetch_add(1, Ordering::Relaxed);
    }

    /// Records a batch given up after `attempts` attempts; its records were not processed.
    pub fn given_up(&self, batch: &Batch, outcome: &Outcome, attempts: u64) {
        self.batches.fetch_add(1, Ordering::Relaxed);
        self.given_up.fetch_add(1, Ordering::Relaxed);
        self.note_last(outcome);
        let what = match outcome {
            Outcome::Ok => "succeeded".to_string(),
            Outcome::TimedOut { .. } => "killed after its --job-timeout".to_string(),
            Outcome::Evicted { .. } => EVICTED.to_string(),
            Outcome::Exited(c) => format!("exit status {c}"),
            Outcome::Signaled(s) => format!("killed by {}", signal_text(*s)),
            Outcome::ShellExited(c) => shell_exit_text(*c),
            Outcome::SpawnFailed(e) => {
                format!("could not start: {}", crate::sys::errors::os_message(e))
            }
        };
        let attempts = match attempts {
            1 => "1 attempt".to_string(),
            n => format!("{n} attempts"),
        };
        let text = format!(
            "batch {} ({}) given up after {attempts}; last: {what}",
            batch.seq,
            whereabouts(batch)
        );
        crate::sys::notice::say_fact(
            crate::sys::notice::NoticeKind::Problem,
            Some(crate::sys::notice::Fact::GivenUp),
            format_args!("{text}"),
        );
        self.note_first(batch.start, text);
    }

    /// Batches that still failed after their last retry.
    pub fn given_up_batches(&self) -> u64 {
        self.given_up.load(Ordering::Relaxed)
    }

    /// Retries started so far (a batch run three times counts two).
    pub fn retries(&self) -> u64 {
        self.retried.load(Ordering::Relaxed)
    }

    /// Whether `--halt` is reached: the batches it counts (failed ones, given-up ones included;
    /// succeeded ones; or all finished) against its count. `total`: how many batches the whole
    /// input has, once known.
    pub fn halt_reached(&self, halt: Halt, total: Option<u64>) -> bool {
        let done = self.batches();
        let failed = self.failed_batches() + self.given_up_batches();
        let counted = match halt.on {
            HaltOn::Fail => failed,
            HaltOn::Success => done - failed.min(done),
            HaltOn::Done => done,
        };
        match halt.count {
            HaltCount::Batches(n) => counted >= n,
            HaltCount::Percent(p) => done >= 3 && counted * 100 >= p * done,
            HaltCount::PercentOfAll(p) => total.is_some_and(|t| t > 0 && counted * 100 >= p * t),
        }
    }

    /// The last failed (or given-up) batch's exit value and signal, as its joblog line shows
    /// them; None when none failed.
    pub fn last_failure(&self) -> Option<FailureShown> {
        *self.last_failure.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Batches that succeeded.
    pub fn succeeded_batches(&self) -> u64 {
        self.batches()
            .saturating_sub(self.failed_batches() + self.given_up_batches())
    }

    /// Records a record too long to be an argument (it is reported and skipped).
    pub fn oversized(&self, offset: u64, len: u64, max: u64) {
        self.oversized.fetch_add(1, Ordering::Relaxed);
        let text = format!(
            "record at input offset {offset} is {len} bytes, longer than the {max}-byte \
             argument limit; skipped (pass long records on stdin instead)"
        );
        say!("{text}");
        self.note_first(offset, text);
    }

    /// Batches finished so far, however they ended.
    pub fn batches(&self) -> u64 {
        self.batches.load(Ordering::Relaxed)
    }

    /// Records skipped as too long to be an argument.
    pub fn oversized_records(&self) -> u64 {
        self.oversized.load(Ordering::Relaxed)
    }

    /// Records in the finished batches.
    pub fn records(&self) -> u64 {
        self.records.load(Ordering::Relaxed)
    }

    /// Batches whose last attempt failed (non-zero exit, signal, timeout, eviction or spawn
    /// error).
    pub fn failed_batches(&self) -> u64 {
        self.exited.load(Ordering::Relaxed)
            + self.signaled.load(Ordering::Relaxed)
            + self.spawn_failed.load(Ordering::Relaxed)
            + self.timed_out.load(Ordering::Relaxed)
            + self.evicted.load(Ordering::Relaxed)
    }

    /// The one-line failure summary, or None when everything succeeded.
    pub fn summary(&self) -> Option<String> {
        let failed = self.failed_batches();
        let oversized = self.oversized.load(Ordering::Relaxed);
        let given_up = self.given_up_batches();
        if failed == 0 && oversized == 0 && given_up == 0 {
            return None;
        }
        let mut parts = Vec::new();
        let exited = self.exited.load(Ordering::Relaxed);
        let signaled = self.signaled.load(Ordering::Relaxed);
        let spawn = self.spawn_failed.load(Ordering::Relaxed);
        let timed_out = self.timed_out.load(Ordering::Relaxed);
        if exited > 0 {
            parts.push(format!("{exited} exited non-zero"));
        }
        if signaled > 0 {
            parts.push(format!("{signaled} killed by a signal"));
        }
        if spawn > 0 {
            parts.push(format!("{spawn} could not start"));
        }
        if timed_out > 0 {
            parts.push(format!("{timed_out} killed after the job timeout"));
        }
        let evicted = self.evicted.load(Ordering::Relaxed);
        if evicted > 0 {
            parts.push(format!("{evicted} ended as memory ran short"));
        }
        let mut s = String::new();
        if given_up > 0 {
            let their = if given_up == 1 { "its" } else { "their" };
            s = format!(
                "{given_up} of {} given up after {their} retries and skipped ({their} records \
                 were not processed)",
                count(self.batches(), "batch", "batches")
            );
        }
        if failed > 0 {
            if !s.is_empty() {
                s += "; ";
            }
            s += &format!(
                "{failed} of {} failed ({})",
                count(self.batches(), "batch", "batches"),
                parts.join(", ")
            );
        }
        if oversized > 0 {
            if !s.is_empty() {
                s += "; ";
            }
            s += &match oversized {
                1 => "1 record too long to pass as an argument was skipped".to_string(),
                n => format!("{n} records too long to pass as an argument were skipped"),
            };
        }
        let first = self.first.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((_, t)) = &first.text {
            s += &format!("; first: {t}");
        }
        Some(s)
    }
}

/// Which batches' input bytes are no longer needed (their argv is built, or their bytes were
/// fed to the command), so the spool may free them. One slot per sequence number modulo the
/// capacity; the scanner never lets more than `capacity` batches be outstanding, so slots are
/// not reused while still meaningful.
pub struct InputRelease {
    /// Mapped, not allocated: a run of a few batches touches one page of it.
    slots: crate::sys::ZeroedWords,
}

impl InputRelease {
    /// A table for `capacity` batches in flight at once (rounded up to a power of two).
    pub fn new(capacity: usize) -> std::io::Result<InputRelease> {
        Ok(InputRelease {
            slots: crate::sys::ZeroedWords::new(capacity.next_power_of_two())?,
        })
    }

    /// How many batches may be outstanding at once.
    pub fn capacity(&self) -> u64 {
        self.slots.len() as u64
    }

    fn slot(&self, seq: u64) -> &AtomicU64 {
        &self.slots[(seq as usize) & (self.slots.len() - 1)]
    }

    /// Batch `seq` no longer needs its input bytes.
    pub fn release(&self, seq: u64) {
        self.slot(seq).store(seq + 1, Ordering::Release);
    }

    /// Whether batch `seq` has released its input bytes.
    pub fn is_released(&self, seq: u64) -> bool {
        self.slot(seq).load(Ordering::Acquire) == seq + 1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn batch(seq: u64, start: u64) -> Batch {
        Batch {
            seq,
            start,
            end: start + 2,
            records: 1,
        }
    }

    #[test]
    fn halt_counts_failures_successes_or_all_and_remembers_the_last_failure() {
        let ledger = Ledger::default();
        let halt = |on, count| Halt {
            now: false,
            on,
            count,
        };
        ledger.record(&batch(0, 0), &Outcome::Ok, &String::new);
        ledger.record(&batch(1, 2), &Outcome::Exited(3), &String::new);
        ledger.record(
            &batch(2, 4),
            &Outcome::TimedOut {
                signal: libc::SIGTERM,
                turn: 0,
            },
            &String::new,
        );
        ledger.record(&batch(3, 6), &Outcome::Ok, &String::new);
        let reached = |h| ledger.halt_reached(h, None);
        assert!(reached(halt(HaltOn::Fail, HaltCount::Batches(2))));
        assert!(!reached(halt(HaltOn::Fail, HaltCount::Batches(3))));
        assert!(reached(halt(HaltOn::Success, HaltCount::Batches(2))));
        assert!(!reached(halt(HaltOn::Success, HaltCount::Batches(3))));
        assert!(reached(halt(HaltOn::Done, HaltCount::Batches(4))));
        assert!(reached(halt(HaltOn::Fail, HaltCount::Percent(50))));
        assert!(!reached(halt(HaltOn::Fail, HaltCount::Percent(51))));
        // Of all batches: not before their number is known.
        let all = halt(HaltOn::Done, HaltCount::PercentOfAll(50));
        assert!(!ledger.halt_reached(all, None));
        assert!(ledger.halt_reached(all, Some(8)));
        assert!(!ledger.halt_reached(all, Some(9)));
        assert_eq!(
            ledger.last_failure(),
            Some(FailureShown {
                exitval: -1,
                signal: libc::SIGTERM
            })
        );
        assert_eq!(ledger.succeeded_batches(), 2);
        assert!(
            !RetryPolicy {
                limit: None,
                nonzero: true,
                crashes: true,
                last_stands: false,
            }
            .retryable(&Outcome::TimedOut {
                signal: libc::SIGKILL,
                turn: 0
            })
        );
    }

    #[test]
    fn the_summary_names_the_failure_earliest_in_the_input() {
        let ledger = Ledger::default();
        // Finished in the order 2, 0, 1, as workers may finish them.
        ledger.record(&batch(2, 40), &Outcome::Exited(3), &String::new);
        ledger.record(&batch(0, 0), &Outcome::Exited(1), &String::new);
        ledger.record(&batch(1, 20), &Outcome::Exited(2), &String::new);
        let s = ledger.summary().expect("failures give a summary");
        assert!(
            s.ends_with("first: batch 0 (input offset 0, 1 record): exit status 1"),
            "{s}"
        );
    }

    #[test]
    fn timeout_notices_are_said_in_their_turns_whoever_comes_first() {
        let turns = Turns::default();
        let (a, b) = (turns.issue(), turns.issue());
        let said = Mutex::new(Vec::new());
        std::thread::scope(|s| {
            // The second turn's worker is first to reap its command.
            s.spawn(|| turns.in_turn(b, || said.lock().unwrap().push(b)));
            std::thread::sleep(std::time::Duration::from_millis(100));
            s.spawn(|| turns.in_turn(a, || said.lock().unwrap().push(a)));
        });
        assert_eq!(*said.lock().unwrap(), vec![0, 1]);
        // A turn that never comes holds the next one back for a while only.
        let lost = turns.issue();
        let next = turns.issue();
        assert_eq!((lost, next), (2, 3));
        let t = std::time::Instant::now();
        turns.in_turn(next, || said.lock().unwrap().push(next));
        assert!(t.elapsed() >= Turns::PATIENCE, "{:?}", t.elapsed());
        assert_eq!(*said.lock().unwrap(), vec![0, 1, 3]);
    }
}
