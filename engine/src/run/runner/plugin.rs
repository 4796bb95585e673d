//! The plugin runner (`-C SO:FN`): each attempt is one call of the plugin's function in this
//! worker's plugin host, a process started at the first attempt and again after one is lost
//! (a crash or an `exit` in the function ends the attempt as a killed or exited command would).
//!
//! It sends the batch's place and size, feeds stdin with `-s`, and reads the return value; how
//! the host lays out argv and calls the function is the host's business.

use std::io;
use std::os::fd::AsRawFd;
use std::sync::Arc;

use super::{Attempt, Child, Ending, Runner};
use crate::dispatch::ledger::Outcome;
use crate::exec::plugin::{
    HELLO_STDIN_MODE, Hello, HostProcess, HostStart, PluginWork, REQUEST_STDIN, Request,
};
use crate::exec::spawn::ChildEnd;
use crate::output::emit::Capture;

/// Runs each attempt as a call in a plugin host.
pub(crate) struct PluginRunner<'a> {
    child: Child<'a>,
    work: &'a PluginWork,
    node: usize,
    /// The host's fd 1 (None: stdout).
    stdout: Option<i32>,
    host: Option<HostProcess>,
    /// Hosts this worker started so far.
    incarnations: u32,
}

impl<'a> PluginRunner<'a> {
    pub(super) fn new(
        child: Child<'a>,
        work: &'a PluginWork,
        node: usize,
        capture: Option<&Arc<Capture>>,
    ) -> PluginRunner<'a> {
        PluginRunner {
            stdout: child
                .relay
                .map(|r| r.child_fd())
                .or(capture.map(|c| c.fd())),
            child,
            work,
            node,
            host: None,
            incarnations: 0,
        }
    }

    /// Starts a host unless one runs. Err(end): it went away while starting.
    fn ensure_started(&mut self) -> io::Result<Result<(), ChildEnd>> {
        if self.host.is_some() {
            return Ok(Ok(()));
        }
        let shared = self.child.shared;
        self.incarnations += 1;
        let (spool, _) = shared.spool.file_at(0);
        let start = HostStart {
            work: self.work,
            hello: Hello {
                flags: if self.work.stdin_mode {
                    HELLO_STDIN_MODE
                } else {
                    0
                },
                worker: self.child.index as u32,
                node: self.node as u32,
                incarnation: self.incarnations,
                delimiter: u32::from(shared.delimiter),
                reserved: 0,
            },
            stdout: self.stdout,
            stdin: shared.child_stdin().unwrap_or(0),
            spool: spool.as_raw_fd(),
            sigmask: &shared.sigmask,
            own_group: shared.children_own_group,
            env: shared.children_env.as_deref(),
        };
        match HostProcess::start(&start)? {
            Ok(h) => {
                let layout = shared.rings.layout();
                if !layout.is_single() {
                    layout.pin(h.pid(), self.node);
                }
                self.host = Some(h);
                Ok(Ok(()))
            }
            Err(end) => Ok(Err(end)),
        }
    }
}

/// The attempt's outcome when the host went away during it: an `exit` in the function is
/// retried like a bash function's, a crash like a killed command.
fn host_lost(end: io::Result<ChildEnd>) -> io::Result<Outcome> {
    Ok(match end? {
        ChildEnd::Exited(c) => Outcome::ShellExited(c),
        ChildEnd::Signaled(s) => Outcome::Signaled(s),
    })
}

impl Runner for PluginRunner<'_> {
    fn run(&mut self, attempt: &Attempt<'_>) -> io::Result<Ending> {
        let part = attempt.part;
        if let Err(end) = self.ensure_started()? {
            let lost = host_lost(Ok(end))?;
            return Ok(Ending::Ran(lost));
        }
        let child = &self.child;
        let shared = child.shared;
        let feed = child.open_feed()?;
        let relay = child.relay;
        if let Some(r) = relay {
            r.begin(part.seq);
        }
        let host = self.host.as_ref().expect("started above");
        let pid = host.pid();
        let request = Request {
            seq: part.seq,
            spool_offset: shared.spool.file_at(part.start).1,
            input_offset: part.start,
            len: part.end - part.start,
            records: part.records,
            attempt: u32::try_from(attempt.retried).unwrap_or(u32::MAX),
            flags: if feed.is_some() { REQUEST_STDIN } else { 0 },
            worker: child.index as u32,
            node: self.node as u32,
            delimiter: u32::from(shared.delimiter),
            reserved: 0,
        };
        // A host that went away between batches fails the send; its reply below says so.
        let sent = host.send(&request, child.stdin.as_ref().map(|s| s.fd()));
        child.set_running(pid, part.seq);
        child.release_slot()?;
        let feed = if sent.is_ok() { feed } else { None };
        child.feed_running(pid, feed, &part)?;
        let reply = host.reply().ok().flatten();
        child.set_idle();
        if let Some(Err(e)) = relay.map(|r| r.end(reply != Some(0))) {
            return Ok(Ending::Stop(super::super::stop::emit_stop(
                e,
                shared.output.target(),
            )));
        }
        let ran = match reply {
            Some(0) => Outcome::Ok,
            Some(c) => Outcome::Exited(c),
            None => {
                let host = self.host.take().expect("started above");
                host_lost(host.lost())?
            }
        };
        if !child.keep_input && !self.work.stdin_mode {
            // The host read the records from the spool: they are no longer needed.
            shared.input_release.release(part.seq);
        }
        Ok(Ending::Ran(child.timed(pid, ran)))
    }

    fn feeds_stdin(&self) -> bool {
        self.child.stdin.is_some()
    }

    fn reads_input(&self) -> bool {
        true
    }
}
