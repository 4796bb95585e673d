//! The spawn runner: each attempt starts the command as a child process (records as its
//! arguments, or the part's bytes on its stdin) and waits for it.
//!
//! It starts and waits for one child at a time; what the ending means is the worker's business.

use std::io;
use std::os::fd::AsFd;
use std::os::unix::ffi::OsStrExt;
use std::sync::Arc;
use std::sync::atomic::Ordering;

use super::{Attempt, Child, Ending, Runner};
use crate::dispatch::ledger::Outcome;
use crate::exec::command::argv::{Argv, SH};
use crate::exec::resolve::start_failure;
use crate::exec::spawn::{ChildEnd, Spawner, environment_with, wait_exit, wait_reap};
use crate::output::emit::Capture;
use crate::run::stop::StopReason;

/// How many times a start that failed for want of processes (EAGAIN) waits and tries again
/// (about 10 seconds in all) before it counts as a failed attempt.
const PROCESS_WAITS: u64 = 100;

/// Runs each attempt as a spawned child.
pub(crate) struct SpawnRunner<'a> {
    child: Child<'a>,
    spawner: Spawner,
    /// `/bin/sh SCRIPT ARGS…`, for a script without `#!`.
    sh_argv: Vec<*const libc::c_char>,
    /// `frun xargs -p`: the terminal the answers come from (opened at the first question).
    tty: Option<std::io::BufReader<std::fs::File>>,
    /// The command line as `-t` / `-p` show it.
    shown: Vec<u8>,
    /// A copy of where the children's stdout goes (the relay's pipe, the capture file, or
    /// frun's stdout), made only when each command line is shown there before its command
    /// starts (`frun parallel -v`).
    out_copy: Option<std::os::fd::OwnedFd>,
    /// `--process-slot-var`: the slot (from 1) whose value the children's environment holds
    /// now (0: none is set).
    slot_in_env: u64,
}

/// One question on the terminal at a time, whatever the workers.
static PROMPT: std::sync::Mutex<()> = std::sync::Mutex::new(());

impl<'a> SpawnRunner<'a> {
    /// Children write to `capture` (None: stdout), their stderr to `errors` (None: frun's),
    /// and read the batch pipe (with `-s`) or the run's stdin for children.
    pub(super) fn new(
        child: Child<'a>,
        capture: Option<&Arc<Capture>>,
        errors: Option<&Arc<Capture>>,
    ) -> io::Result<SpawnRunner<'a>> {
        let shared = child.shared;
        let out = child
            .relay
            .map(|r| r.child_fd())
            .or(capture.map(|c| c.fd()));
        let spawner = Spawner::new(
            out,
            child
                .stdin
                .as_ref()
                .map(|s| s.fd())
                .or(shared.child_stdin()),
            &shared.sigmask,
            shared.children_own_group,
        )?;
        // `frun parallel --results`: stderr is kept with the job's other results;
        // `--latest-line`: it goes to the relay with stdout, as one stream of lines;
        // `--line-buffer --tag`: to the relay's own pipe for it, to be tagged line by line.
        let relayed_stderr = child.relay.and_then(|r| r.child_stderr_fd());
        let spawner = match (errors, child.relay, relayed_stderr) {
            (Some(c), _, _) => spawner.with_stderr(c.fd()),
            (None, _, Some(fd)) => spawner.with_stderr(fd),
            (None, Some(r), None) if shared.screen.is_some() => spawner.with_stderr(r.child_fd()),
            (None, _, None) => spawner,
        };
        let out_copy = if shared.work.interaction.trace_output {
            let stdout = std::io::stdout();
            let target = child
                .relay
                .map(|r| r.child_as_fd())
                .or(capture.map(|c| c.as_fd()))
                .unwrap_or(stdout.as_fd());
            Some(crate::sys::dup_at_least(target, 3)?)
        } else {
            None
        };
        // `--process-slot-var`: the children's environment with the job's slot in it, set for
        // each attempt (`slot_variable`).
        let spawner = match (&shared.work.interaction.slot_var, &shared.children_env) {
            (Some(name), base) => spawner.with_environment(environment_with(
                base.as_deref(),
                name,
                std::ffi::OsStr::new(""),
            )),
            (None, Some(env)) => spawner.with_environment(env.clone()),
            (None, None) => spawner,
        };
        Ok(SpawnRunner {
            child,
            spawner,
            sh_argv: Vec::new(),
            tty: None,
            shown: Vec::new(),
            out_copy,
            slot_in_env: 0,
        })
    }

    /// `--process-slot-var NAME`: NAME is the attempt's job slot less one (xargs numbers its
    /// slots from 0, as GNU Parallel's variable does); the variable is rebuilt only when the
    /// worker's slot changed since its last child.
    fn slot_variable(&mut self, slot: u64) {
        let Some(name) = &self.child.shared.work.interaction.slot_var else {
            return;
        };
        if slot == self.slot_in_env {
            return;
        }
        let mut var = name.as_bytes().to_vec();
        var.push(b'=');
        var.extend_from_slice(slot.saturating_sub(1).to_string().as_bytes());
        if let Ok(var) = std::ffi::CString::new(var) {
            self.spawner.replace_last_variable(var);
            self.slot_in_env = slot;
        }
    }

    /// `frun xargs -t` / `-p`: shows the command line on stderr; with `-p` asks on /dev/tty
    /// whether to run it. Ok(false): not to run it. `frun parallel -v` shows it on the job's
    /// stdout (before the command writes there), `-t` on stderr.
    fn announce(&mut self, argv: &Argv, turn: Option<u64>) -> Result<bool, StopReason> {
        use std::io::{BufRead, Write};
        let how = &self.child.shared.work.interaction;
        self.shown.clear();
        match (how.trace_shell_line, argv.shown()) {
            // A direct command's line as written.
            (Some(_), Some(text)) => self.shown.extend_from_slice(text),
            // A shell line as it is; a direct command's words quoted as GNU Parallel does.
            (Some(skip), None) => {
                for (i, w) in argv.words().skip(skip).enumerate() {
                    if i > 0 {
                        self.shown.push(b' ');
                    }
                    if skip > 0 {
                        self.shown.extend_from_slice(w);
                    } else {
                        crate::exec::command::job::quote(w, &mut self.shown);
                    }
                }
            }
            (None, _) => {
                for (i, w) in argv.words().enumerate() {
                    if i > 0 {
                        self.shown.push(b' ');
                    }
                    crate::exec::command::argv::trace_quote(w, &mut self.shown);
                }
            }
        }
        if !how.prompt {
            self.shown.push(b'\n');
            if how.trace_output {
                if let Some(out) = &self.out_copy {
                    let _ = crate::output::emit::write_all(out.as_fd(), &self.shown);
                }
            }
            if how.trace {
                let say = || {
                    let _ = std::io::stderr().lock().write_all(&self.shown);
                };
                match (&self.child.shared.trace_turns, turn) {
                    (Some(turns), Some(t)) => turns.in_turn(t, say),
                    _ => say(),
                }
            }
            return Ok(true);
        }
        self.shown.extend_from_slice(b" ?...");
        let _one = PROMPT.lock().unwrap_or_else(|e| e.into_inner());
        if self.tty.is_none() {
            let tty = std::fs::File::open("/dev/tty").map_err(|e| StopReason::Abort {
                message: format!(
                    "failed to open /dev/tty for reading: {}",
                    crate::sys::errors::os_message(&e)
                ),
                status: 1,
                fact: None,
            })?;
            self.tty = Some(std::io::BufReader::new(tty));
        }
        let _ = std::io::stderr().lock().write_all(&self.shown);
        let mut answer = String::new();
        let read = self.tty.as_mut().map(|t| t.read_line(&mut answer));
        Ok(matches!(read, Some(Ok(n)) if n > 0) && answer.starts_with(['y', 'Y']))
    }

    /// Starts the command; out of processes (the user's process limit), there are fewer workers
    /// and this start waits for one of theirs to end instead of spending a retry.
    fn start_patiently(&mut self, argv: &Argv) -> io::Result<libc::pid_t> {
        let shared = self.child.shared;
        let mut spawned = self.start(argv);
        let mut waits = 0u64;
        while spawned
            .as_ref()
            .is_err_and(|e| e.raw_os_error() == Some(libc::EAGAIN))
            && waits < PROCESS_WAITS
            && !shared.stop.is_stopped()
        {
            shared.too_many_processes();
            waits += 1;
            std::thread::sleep(std::time::Duration::from_millis(10 * waits.min(10)));
            spawned = self.start(argv);
        }
        spawned
    }

    /// Starts the part's command. A file the kernel cannot execute (ENOEXEC: a script without
    /// `#!`) runs as `/bin/sh FILE ARGS…`, as `execvp` and xargs do; once one did, every later
    /// start goes to the shell directly.
    fn start(&mut self, argv: &Argv) -> io::Result<libc::pid_t> {
        let shared = self.child.shared;
        let path = shared.work.template.path();
        if !shared.script_via_sh.load(Ordering::Relaxed) {
            match self.spawner.spawn(path, argv.pointers()) {
                Err(e) if e.raw_os_error() == Some(libc::ENOEXEC) => {
                    shared.script_via_sh.store(true, Ordering::Relaxed)
                }
                started => return started,
            }
        }
        let sh_argv = &mut self.sh_argv;
        sh_argv.clear();
        sh_argv.push(SH.as_ptr());
        sh_argv.push(path.as_ptr());
        sh_argv.extend_from_slice(&argv.pointers()[1..]);
        self.spawner.spawn(SH, sh_argv).map_err(|e| {
            if e.raw_os_error() == Some(libc::ENOENT) {
                // No shell to run it with: the file stays what the kernel said it is.
                io::Error::from_raw_os_error(libc::ENOEXEC)
            } else {
                e
            }
        })
    }

    /// A start failed: what no retry can fix ends the run at once, said once.
    fn not_started(&self, e: io::Error) -> Ending {
        let t = &self.child.shared.work.template;
        let shown = String::from_utf8_lossy(t.argv0());
        let path = std::path::Path::new(std::ffi::OsStr::from_bytes(t.path().to_bytes()));
        match start_failure(&shown, path, &e) {
            Some(why) => Ending::Stop(StopReason::CannotRun(why)),
            None => Ending::Ran(Outcome::SpawnFailed(e)),
        }
    }
}

impl Runner for SpawnRunner<'_> {
    fn run(&mut self, attempt: &Attempt<'_>) -> io::Result<Ending> {
        let how = &self.child.shared.work.interaction;
        if how.trace || how.trace_output || how.prompt {
            match self.announce(attempt.argv, attempt.trace_turn) {
                Ok(true) => {}
                // Declined: nothing runs, and that is no failure.
                Ok(false) => return Ok(Ending::Ran(Outcome::Ok)),
                Err(why) => return Ok(Ending::Stop(why)),
            }
        }
        if let Some(why) = &how.cannot_run {
            return Ok(Ending::Stop(StopReason::CannotRun(why.clone())));
        }
        self.slot_variable(attempt.slot);
        let feed = self.child.open_feed()?;
        let relay = self.child.relay;
        if let Some(r) = relay {
            r.begin(attempt.part.seq);
        }
        let spawned = self.start_patiently(attempt.argv);
        self.child.release_slot()?;
        let pid = match spawned {
            Ok(pid) => pid,
            Err(e) => {
                if let Some(r) = relay {
                    let _ = r.end(true);
                }
                return Ok(self.not_started(e));
            }
        };
        self.child.set_running(pid, attempt.part.seq);
        self.child.feed_running(pid, feed, &attempt.part)?;
        let end = wait_exit(pid);
        // Everything the command wrote is passed on (or kept for -k) before it counts as done.
        let failed = !matches!(end, Ok(crate::exec::spawn::ChildEnd::Exited(0)));
        if let Some(Err(e)) = relay.map(|r| r.end(failed)) {
            self.child.set_idle();
            wait_reap(pid);
            return Ok(Ending::Stop(super::super::stop::emit_stop(
                e,
                self.child.shared.output.target(),
            )));
        }
        // The child is a zombie until reaped: its pid cannot be reused while the supervisor may
        // still signal it through the slot.
        self.child.set_idle();
        wait_reap(pid);
        let ran = match end? {
            ChildEnd::Exited(0) => Outcome::Ok,
            ChildEnd::Exited(c) => Outcome::Exited(c),
            ChildEnd::Signaled(s) => Outcome::Signaled(s),
        };
        Ok(Ending::Ran(self.child.timed(pid, ran)))
    }

    fn feeds_stdin(&self) -> bool {
        self.child.stdin.is_some()
    }
}
