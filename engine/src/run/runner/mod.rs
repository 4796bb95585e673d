//! Runners: how one attempt at a batch runs — a spawned command with the records as arguments or
//! on its stdin ([`SpawnRunner`]), a bash worker shell ([`ShellRunner`]), or a printed command
//! line for `-N` ([`DryRunner`]), or a call of a C plugin's function in a plugin host
//! ([`PluginRunner`]). A worker chooses its runner once and calls it per attempt.
//!
//! A runner only runs and says how the attempt ended. It never retries, splits, gives up or
//! records anything, and never touches the ring or the emitter: the worker decides all that.
//! The one exception is `--round-robin` on stdin, where the command, once fed its batch, goes
//! on with its lane's later batches through [`lanes`].

use std::io;
use std::sync::Arc;
use std::sync::atomic::{AtomicI32, Ordering};

use super::Backend;
use crate::dispatch::batch::Batch;
use crate::dispatch::ledger::Outcome;
use crate::exec::command::argv::Argv;
use crate::exec::stdin::{Feed, StdinSlot};
use crate::output::emit::Capture;
use crate::output::linebuf::LineRelay;
use crate::run::Shared;
use crate::run::stop::StopReason;

mod dry;
pub(crate) mod lanes;
mod plugin;
mod shell;
mod spawn;

pub(super) use dry::DryRunner;
pub(super) use plugin::PluginRunner;
pub(super) use shell::ShellRunner;
pub(super) use spawn::SpawnRunner;

/// One attempt at (a part of) a batch, as the worker hands it to its runner.
pub(super) struct Attempt<'a> {
    /// The part of the batch this attempt runs: the whole batch, unless a failure split it.
    pub part: Batch,
    /// The part's command line: the template with the records as arguments (none when they go
    /// to the command's stdin).
    pub argv: &'a Argv,
    /// Earlier attempts at this part (0 on its first).
    pub retried: u64,
    /// The job slot of the attempt (from 1): the lowest free when it started, or the worker's.
    pub slot: u64,
    /// `-t`: the batch's turn to show its command line (see `Shared::trace_turns`); None for
    /// a retry, which shows it at once.
    pub trace_turn: Option<u64>,
}

/// How an attempt ended.
#[derive(Debug)]
pub(super) enum Ending {
    /// It ran (or could not start, which a retry may fix): the worker judges the outcome.
    Ran(Outcome),
    /// The run must stop for this reason (nothing a retry could fix, or nobody reads the
    /// output): the part stays undone.
    Stop(StopReason),
}

/// Runs attempts, one at a time, for one worker.
pub(super) trait Runner {
    /// Runs one attempt; its output goes to the worker's capture (or stdout with `-u`). An error
    /// ends the whole run.
    fn run(&mut self, attempt: &Attempt<'_>) -> io::Result<Ending>;

    /// Whether the part's input bytes are fed to the command's stdin: then the runner frees the
    /// input once fed (unless the part may run again), and the worker must not free it before.
    fn feeds_stdin(&self) -> bool {
        false
    }

    /// Whether the part's input bytes are read after the attempt starts (on stdin, or from the
    /// spool by a plugin host): then the worker must not free them before it runs.
    fn reads_input(&self) -> bool {
        self.feeds_stdin()
    }
}

/// The runner worker `index` (on NUMA node `node`) uses for all its batches, as the plan's
/// backend says. Its commands write to `capture` (None: stdout); `stdin` is the worker's slot
/// for the batch pipe when batches go to stdin; `errors` takes their stderr (spawned commands
/// only: `frun parallel --results`).
pub(super) fn choose<'a>(
    shared: &'a Shared,
    index: usize,
    node: usize,
    capture: Option<&Arc<Capture>>,
    errors: Option<&Arc<Capture>>,
    stdin: Option<StdinSlot>,
    relay: Option<&'a LineRelay>,
) -> io::Result<Box<dyn Runner + 'a>> {
    let child = Child {
        relay,
        shared,
        index,
        pid_slot: &shared.children[index],
        stdin,
        keep_input: shared.work.retry.may_retry(),
        node,
    };
    Ok(match (&shared.work.backend, &shared.shell) {
        (Backend::DryRun { split_from, quote }, _) => {
            Box::new(DryRunner::new(*split_from, *quote, capture))
        }
        (Backend::Argv | Backend::Stdin, None) if shared.work.plugin.is_some() => {
            let work = shared.work.plugin.as_ref().expect("checked");
            Box::new(PluginRunner::new(child, work, node, capture))
        }
        (Backend::Argv | Backend::Stdin, Some(host)) => {
            Box::new(ShellRunner::new(child, host, node, capture))
        }
        (Backend::Argv | Backend::Stdin, None) => {
            Box::new(SpawnRunner::new(child, capture, errors)?)
        }
    })
}

/// What the spawn and shell runners share: the worker's slot for its running child's pid (the
/// supervisor signals it through there) and, with batches on stdin, the pipe that feeds it.
struct Child<'a> {
    shared: &'a Shared,
    /// `--line-buffer`: children write to this relay's pipe, not to the capture file.
    relay: Option<&'a LineRelay>,
    /// The worker's index (its slots in the run's per-worker tables).
    index: usize,
    pid_slot: &'a AtomicI32,
    stdin: Option<StdinSlot>,
    /// A part that may run again keeps its input until its outcome is final.
    keep_input: bool,
    /// The worker's NUMA node.
    node: usize,
}

impl Child<'_> {
    /// A fresh pipe for the next command's stdin, when batches go there.
    fn open_feed(&self) -> io::Result<Option<Feed>> {
        match &self.stdin {
            Some(slot) => Some(slot.open()).transpose(),
            None => Ok(None),
        }
    }

    /// Drops frun's copy of the pipe's read end once the command has it.
    fn release_slot(&self) -> io::Result<()> {
        match &self.stdin {
            Some(slot) => slot.release(),
            None => Ok(()),
        }
    }

    /// The command (child or worker shell) of the attempt at batch `seq` runs as `pid`.
    fn set_running(&self, pid: libc::pid_t, seq: u64) {
        // Before the pid: the supervisor never pairs this pid with an older start.
        self.shared.clock.started(self.index, seq);
        self.pid_slot.store(pid, Ordering::SeqCst);
    }

    /// No command of this worker runs (or one ended and is about to be reaped).
    fn set_idle(&self) {
        self.pid_slot.store(0, Ordering::SeqCst);
    }

    /// How the attempt of `pid` ended, `ran`, becomes a timeout when the supervisor killed it
    /// for its time, an eviction when it ended it for memory (unless it succeeded all the
    /// same).
    fn timed(&self, pid: libc::pid_t, ran: Outcome) -> Outcome {
        if self.shared.clock.take_evicted(self.index, pid) {
            return match ran {
                Outcome::Ok => Outcome::Ok,
                Outcome::Signaled(signal) => Outcome::Evicted { signal },
                _ => Outcome::Evicted { signal: 0 },
            };
        }
        let Some(turn) = self.shared.clock.take_timed_out(self.index, pid) else {
            return ran;
        };
        match ran {
            Outcome::Ok => Outcome::Ok,
            Outcome::Signaled(signal) => Outcome::TimedOut { signal, turn },
            _ => Outcome::TimedOut { signal: 0, turn },
        }
    }

    /// Once the part's command (`pid`, already in its slot) runs: ends it at once if the run is
    /// stopping, then feeds it the part's input on its stdin (`-s`) and frees the batch's input
    /// when it cannot be needed again.
    fn feed_running(&self, pid: libc::pid_t, feed: Option<Feed>, part: &Batch) -> io::Result<()> {
        let shared = self.shared;
        if shared.stop.is_stopped() && !shared.stop.drains() {
            shared.signal_child(pid, libc::SIGTERM);
        }
        if let Some(feed) = feed {
            if !shared.work.stdin_header.is_empty() {
                feed.put(&shared.work.stdin_header)?;
            }
            let (file, off) = shared.spool.file_at(part.start);
            let sent = if let Some(b) = &shared.work.strip_separators {
                let runs = b.kept_runs(shared.spool.bytes(part.start, part.end));
                feed.send_runs(file, off, runs.into_iter())
            } else if shared.work.drop_blank {
                let runs = crate::input::blank::kept_runs(shared.spool.bytes(part.start, part.end));
                feed.send_runs(file, off, runs)
            } else {
                feed.send(file, off, part.end - part.start)
            };
            let alive = match sent {
                // The file shrank: the batch is not recorded (the worker checks before).
                Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => {
                    shared.spool.mark_shrank();
                    false
                }
                r => r?,
            };
            if !self.keep_input {
                shared.input_release.release(part.seq);
            }
            // --round-robin: the command goes on with its lane's batches.
            if let Some(lanes) = &shared.lanes {
                lanes::feed_lane(shared, lanes, self.node, &feed, part.seq, alive)?;
            }
        }
        Ok(())
    }
}
