//! The shell runner: each attempt runs in this worker's bash worker shell (the bash front end),
//! started at the first attempt and again after one is lost.
//!
//! It sends the command line, feeds stdin and reads the status; the worker shell itself is made
//! and reaped by the front end's host.

use std::io;
use std::os::fd::{AsRawFd, RawFd};
use std::sync::Arc;

use super::{Attempt, Child, Ending, Runner};
use crate::dispatch::ledger::Outcome;
use crate::exec::shell::{Host, Range, ShellWorker, StartError};
use crate::exec::spawn::ChildEnd;
use crate::output::emit::Capture;
use crate::run::stop::StopReason;

/// Runs each attempt as a call in a worker shell.
pub(crate) struct ShellRunner<'a> {
    child: Child<'a>,
    host: &'a Arc<dyn Host>,
    /// The NUMA node the worker runs on.
    node: usize,
    /// The worker shell's fd 1 (None: stdout).
    stdout: Option<RawFd>,
    shell: Option<ShellWorker>,
}

impl<'a> ShellRunner<'a> {
    pub(super) fn new(
        child: Child<'a>,
        host: &'a Arc<dyn Host>,
        node: usize,
        capture: Option<&Arc<Capture>>,
    ) -> ShellRunner<'a> {
        ShellRunner {
            child,
            host,
            node,
            stdout: capture.map(|c| c.fd()),
            shell: None,
        }
    }

    /// Starts a worker shell unless one runs; Some(status) when its setup code failed.
    fn ensure_started(&mut self) -> io::Result<Option<i32>> {
        if self.shell.is_some() {
            return Ok(None);
        }
        let shared = self.child.shared;
        // A plugin is handed the spool as its context's `fd_in`, as in a plugin host.
        let spool = (self.host.wants_ranges() || shared.work.plugin.is_some())
            .then(|| shared.spool.file_at(0).0.as_raw_fd());
        match ShellWorker::start(
            self.host,
            self.stdout,
            shared.child_stdin(),
            spool,
            shared.children_own_group,
        ) {
            Ok(w) => {
                // A worker shell is forked by the caller: it runs where this worker runs only
                // once pinned.
                let layout = shared.rings.layout();
                if !layout.is_single() {
                    layout.pin(w.pid(), self.node);
                }
                self.shell = Some(w);
                Ok(None)
            }
            Err(StartError::Setup(code)) => Ok(Some(code)),
            Err(StartError::Io(e)) => Err(e),
        }
    }
}

impl Runner for ShellRunner<'_> {
    fn run(&mut self, attempt: &Attempt<'_>) -> io::Result<Ending> {
        if let Some(code) = self.ensure_started()? {
            return Ok(Ending::Stop(StopReason::Setup(code)));
        }
        if self.host.wants_ranges() {
            return self.run_range(&attempt.part);
        }
        let child = &self.child;
        let sw = self.shell.as_mut().expect("started above");
        let feed = child.open_feed()?;
        // A worker shell that went away between batches fails the send; its reply below then
        // says so.
        let stdin = child.stdin.as_ref().map(|s| s.fd());
        let sent = match &child.shared.work.plugin {
            // `-C`: the worker shell calls the plugin; it is told where the batch is.
            Some(plugin) => {
                let part = attempt.part;
                // The records among the words (after `SO:FN` and the fixed words).
                let records = if plugin.stdin_mode {
                    part.records
                } else {
                    (attempt.argv.words().count() - 1 - plugin.words.len()) as u64
                };
                let request = crate::exec::plugin::Request {
                    seq: part.seq,
                    spool_offset: child.shared.spool.file_at(part.start).1,
                    input_offset: part.start,
                    len: part.end - part.start,
                    records,
                    attempt: u32::try_from(attempt.retried).unwrap_or(u32::MAX),
                    flags: 0,
                    worker: child.index as u32,
                    node: self.node as u32,
                    delimiter: u32::from(child.shared.delimiter),
                    reserved: 0,
                };
                use crate::exec::plugin::Message as _;
                sw.send_call(attempt.argv.words(), stdin, Some(&request.to_bytes()))
            }
            None => sw.send(attempt.argv.words(), stdin),
        };
        child.set_running(sw.pid(), attempt.part.seq);
        child.release_slot()?;
        let feed = if sent.is_ok() { feed } else { None };
        child.feed_running(sw.pid(), feed, &attempt.part)?;
        let status = sw.wait();
        let pid = sw.pid();
        child.set_idle();
        let ran = self.outcome(status)?;
        Ok(Ending::Ran(self.child.timed(pid, ran)))
    }

    fn feeds_stdin(&self) -> bool {
        // A worker reading ranges reads the spool: the runner frees the input once it is done.
        self.child.stdin.is_some() || self.host.wants_ranges()
    }

    fn reads_input(&self) -> bool {
        // A plugin may read its batch from the spool (`fd_in`) while it runs.
        self.feeds_stdin() || self.child.shared.work.plugin.is_some()
    }
}

impl ShellRunner<'_> {
    /// The outcome of a batch whose worker shell replied `status` (None: it went away).
    fn outcome(&mut self, status: Option<i32>) -> io::Result<Outcome> {
        Ok(match status {
            Some(0) => Outcome::Ok,
            Some(c) => Outcome::Exited(c),
            None => {
                let end = self.shell.as_mut().map(ShellWorker::reap);
                self.shell = None;
                match end.transpose()? {
                    Some(ChildEnd::Exited(c)) => Outcome::ShellExited(c),
                    Some(ChildEnd::Signaled(s)) => Outcome::Signaled(s),
                    None => Outcome::Signaled(libc::SIGKILL),
                }
            }
        })
    }

    /// Runs a part in a worker that reads it from the spool itself: sends its range, waits,
    /// then frees its input unless it may run again.
    fn run_range(&mut self, part: &crate::dispatch::batch::Batch) -> io::Result<Ending> {
        let shared = self.child.shared;
        let sw = self.shell.as_mut().expect("started by the caller");
        let (_, file_offset) = shared.spool.file_at(part.start);
        let range = Range {
            file_offset,
            len: part.end - part.start,
            input_offset: part.start,
            seq: part.seq,
        };
        let sent = sw.send_range(range);
        let pid = sw.pid();
        self.child.set_running(pid, part.seq);
        if shared.stop.is_stopped() && !shared.stop.drains() {
            shared.signal_child(pid, libc::SIGTERM);
        }
        let status = if sent.is_ok() { sw.wait() } else { None };
        self.child.set_idle();
        let ran = self.outcome(status)?;
        if !self.child.keep_input {
            shared.input_release.release(part.seq);
        }
        Ok(Ending::Ran(self.child.timed(pid, ran)))
    }
}
