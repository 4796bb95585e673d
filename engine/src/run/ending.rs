//! How a run ends once its workers have returned: the messages, what happens to the checkpoint
//! (kept for a resume, finished in a results directory, or removed) and the exit status.
//!
//! It reads the run's outcome; it must not start or stop anything.

use super::{EndOfRun, Shared};
use crate::dispatch::ledger::{HaltCount, HaltOn};
use crate::journal::Journal;
use crate::run::stop::StopReason;
use crate::sys::exit::ExitCode;

pub(super) struct Checkpointing<'a> {
    pub(super) shared: &'a Shared,
    pub(super) ending: &'a EndOfRun,
}

impl Checkpointing<'_> {
    fn journal(&self) -> Option<&Journal> {
        self.shared.journal.as_deref()
    }

    /// Keeps the checkpoint for a resume (the run stopped early), and says how to resume.
    fn keep(&self, why: &str) {
        let Some(j) = self.journal() else {
            if let Some(m) = &self.ending.journal_missing {
                say!("no checkpoint was kept ({m})");
            }
            return;
        };
        match j.close_stopped(why) {
            Ok(()) if j.lost().is_some() => {
                say!("no checkpoint was kept ({})", j.lost().unwrap_or_default())
            }
            Ok(()) => match &self.ending.results {
                Some(r) => say!(
                    "{}: {} done in this run are kept in {}; run the same command again \
                     to continue",
                    r.task,
                    crate::sys::errors::count(j.batches(), "batch", "batches"),
                    r.dir.display()
                ),
                None => {
                    say!(
                        "checkpoint {} ({} done in this run); resume with: frun --resume \
                         {} and the same arguments and input",
                        j.path().display(),
                        crate::sys::errors::count(j.batches(), "batch", "batches"),
                        j.path().display()
                    );
                    if let Some(n) = j.kept_stdout() {
                        say!(
                            "the done batches' output is the first {n} bytes of stdout: \
                             truncate your output file to exactly {n} bytes, then resume \
                             appending to it (>>, which cuts it there itself) or into a new file"
                        );
                    }
                }
            },
            Err(e) => say!(
                "cannot write the checkpoint {}: {}",
                j.path().display(),
                crate::sys::errors::os_message(&e)
            ),
        }
    }

    /// The run is complete. A results directory keeps its journal (frun merge reads it), ended
    /// with the input's length.
    fn finish(&self) {
        let Some(j) = self.journal() else { return };
        if self.ending.results.is_some() {
            if let Err(e) = j.close_finished(self.shared.spool.filled()) {
                say!(
                    "cannot write {}: {}",
                    j.path().display(),
                    crate::sys::errors::os_message(&e)
                );
            }
        } else {
            let _ = j.remove();
        }
    }

    /// The run stopped before its end, for `reason`.
    pub(super) fn stopped(&self, reason: StopReason) -> ExitCode {
        match reason {
            StopReason::ReaderGone => {
                self.finish();
                ExitCode::Success
            }
            StopReason::Signal(n) => {
                if self.ending.statuses == super::Statuses::Summarised {
                    say!("Caught {}; stopping", signal_name(n));
                }
                if let Some(s) = self.shared.ledger.summary() {
                    say!("{s}");
                }
                self.keep(&format!("signal {n}"));
                ExitCode::Signal(n)
            }
            StopReason::Halt {
                on, failed, job, ..
            } => {
                let summary = self.shared.ledger.summary();
                let peer = self.ending.statuses != super::Statuses::Summarised;
                if let Some(s) = summary.as_ref().filter(|_| !peer) {
                    say!("{s}");
                }
                if peer {
                    // The job that reached it was named as it ended, as every job it counts.
                    if job.is_none() {
                        say!("stopped: --halt reached");
                    }
                } else {
                    say!("stopped: {}", self.halt_met(on));
                }
                self.keep("halt");
                if self.ending.statuses == super::Statuses::JobCount {
                    return self.halted_counting_jobs(on, failed);
                }
                // Stopping once enough succeeded (or were done) is what was asked: the status
                // is a finished run's.
                match on {
                    HaltOn::Fail => ExitCode::Error,
                    _ if summary.is_some() => ExitCode::CommandFailed,
                    _ => ExitCode::Success,
                }
            }
            StopReason::Fatal(msg) => {
                say!("{msg}");
                self.keep("fatal");
                ExitCode::Error
            }
            StopReason::Refused(msg) => {
                say!("{msg}");
                // The checkpoint being resumed stays as it was (nothing was added).
                ExitCode::Usage
            }
            StopReason::CannotRun(why) => {
                say!("{}", why.message());
                // A run that did nothing leaves nothing to resume.
                if self.shared.ledger.batches() > 0 {
                    self.keep("the command cannot be started");
                } else if self.ending.results.is_none() {
                    if let Some(j) = self.journal().filter(|j| j.is_new()) {
                        let _ = j.remove();
                    }
                }
                why.status()
            }
            StopReason::Abort {
                message,
                status,
                fact,
            } => {
                crate::sys::notice::say_fact(
                    crate::sys::notice::NoticeKind::Problem,
                    fact,
                    format_args!("{message}"),
                );
                self.finish();
                ExitCode::Passed(status)
            }
            StopReason::Setup(code) => {
                say!("the worker setup code (FORKRUN_EXTRA_SETUP) failed with status {code}");
                if self.shared.ledger.batches() > 0 {
                    self.keep("setup failed");
                }
                ExitCode::Passed(code)
            }
        }
    }

    /// The input was read to its end (or could not be: `scan_error`).
    pub(super) fn completed(&self, scan_error: Option<String>) -> ExitCode {
        if let Some(e) = scan_error {
            say!("cannot read input: {e}");
            self.keep("input error");
            return ExitCode::Error;
        }
        if self.ending.statuses != super::Statuses::Summarised {
            return self.completed_as_peer();
        }
        match self.shared.ledger.summary() {
            Some(s) if self.shared.ledger.given_up_batches() > 0 => {
                say!("{s}");
                // What was given up can be run again alone, by resuming.
                if let Some(r) = &self.ending.results {
                    self.finish();
                    say!(
                        "{}: run the same command on {} again to retry what was given up",
                        r.task,
                        r.dir.display()
                    );
                } else {
                    self.keep("batches given up");
                }
                ExitCode::GivenUp
            }
            Some(s) => {
                say!("{s}");
                self.finish();
                ExitCode::CommandFailed
            }
            None => {
                self.finish();
                ExitCode::Success
            }
        }
    }

    /// A completed run of `frun xargs` / `frun parallel`: their statuses, no summary (the
    /// commands' own messages said what failed). A value too long to be an argument (each was
    /// named when skipped) is GNU Parallel's "Command line too long": 255.
    fn completed_as_peer(&self) -> ExitCode {
        let ledger = &self.shared.ledger;
        let failed = ledger.failed_batches() + ledger.given_up_batches();
        self.finish();
        if self.ending.statuses == super::Statuses::JobCount && ledger.oversized_records() > 0 {
            return ExitCode::Passed(255);
        }
        match (self.ending.statuses, failed) {
            (_, 0) => ExitCode::Success,
            (super::Statuses::JobCount, n) => ExitCode::Passed(self.jobs_failed(n).min(101) as i32),
            _ => ExitCode::CommandFailed,
        }
    }

    /// Which `--halt` condition was met, in forkrun's words ("Halt condition met (2 failed
    /// batches)"), which scripts written for it look for.
    fn halt_met(&self, on: HaltOn) -> String {
        let what = match on {
            HaltOn::Fail => "failed",
            HaltOn::Success => "succeeded",
            HaltOn::Done => "finished",
        };
        let count = match self.shared.work.halt.map(|h| h.count) {
            Some(HaltCount::Batches(n)) => n.to_string(),
            Some(HaltCount::Percent(p) | HaltCount::PercentOfAll(p)) => format!("{p}%"),
            None => "?".to_string(),
        };
        format!("Halt condition met ({count} {what} batches)")
    }

    /// GNU Parallel's status at `--halt`: the failing job's own with `fail=1`, else the number
    /// of jobs failed when it was reached (101 for more than 100).
    fn halted_counting_jobs(&self, on: HaltOn, failed: u64) -> ExitCode {
        let ledger = &self.shared.ledger;
        let one = self
            .shared
            .work
            .halt
            .is_some_and(|h| h.count == crate::dispatch::ledger::HaltCount::Batches(1));
        if on == HaltOn::Fail && one {
            if let Some(f) = ledger.last_failure() {
                return ExitCode::Passed(if f.exitval > 0 { f.exitval.min(255) } else { 1 });
            }
        }
        match (on, failed) {
            // Stopping once enough jobs succeeded is what was asked.
            (HaltOn::Success, _) | (_, 0) => ExitCode::Success,
            (_, n) => ExitCode::Passed(self.jobs_failed(n).min(101) as i32),
        }
    }

    /// What GNU Parallel's status counts of `failed` jobs: with a percentage `--halt`, the
    /// percentage of all the jobs that failed (rounded up), else their number.
    fn jobs_failed(&self, failed: u64) -> u64 {
        let percent = self.shared.work.halt.is_some_and(|h| {
            matches!(h.count, crate::dispatch::ledger::HaltCount::PercentOfAll(_))
        });
        match super::total_batches(self.shared) {
            Some(total) if percent && total > 0 => (failed * 100).div_ceil(total),
            _ => failed,
        }
    }
}

/// A signal's name as `kill -l` shows it, with `SIG` ("SIGUSR1"); its number for one without.
fn signal_name(n: i32) -> String {
    nix::sys::signal::Signal::try_from(n)
        .map_or_else(|_| format!("signal {n}"), |s| s.as_str().to_string())
}
