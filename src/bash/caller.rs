//! The calling shell's side of the bash front end, and the engine process it forks: the shell
//! forks the engine, then serves it — forks worker shells on request, reaps them, and passes on
//! stop signals — until the engine ends. The engine asks through [`ShellHost`].
//!
//! The shell side starts no thread and waits for its own children only; it must not touch the
//! shell's variables, options or traps.

use std::ffi::OsString;
use std::io;
use std::os::fd::{AsFd, AsRawFd, OwnedFd, RawFd};
use std::sync::{Arc, Mutex};

use nix::errno::Errno;
use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
use nix::sys::prctl;
use nix::sys::signal::{SigSet, Signal, kill, killpg, raise};
use nix::unistd::{ForkResult, Pid, fork, getpid, getppid};

use super::{
    Disposition, Kind, exit_now, has_handler, set_disposition, set_mask, socket_pair, wait_pid,
};
use frun_engine::exec::shell::{self, Host};
use frun_engine::exec::spawn::ChildEnd;
use frun_engine::sys::read_signal;

/// Requests from the engine to the user's shell: 8 bytes, `[kind, pid]`.
const ASK_START: i32 = 1;
const ASK_REAP: i32 = 2;

/// The signals that stop a run; while it runs, the user's shell receives them through a
/// signalfd and passes them to the engine, so `kill` of a shell running `frun` stops frun the
/// way it stops the binary (and the shell gets the signal itself once frun has ended).
fn forwarded_signals() -> (bool, Vec<i32>) {
    let preempt = frun_engine::plan::preempt().unwrap_or(false);
    (preempt, frun_engine::run::stop_signals(preempt))
}

/// `n` as a nix signal. The signal numbers here (the stop signals, and what their signalfd
/// reads) are all standard ones, which nix names.
fn nix_signal(n: i32) -> Option<Signal> {
    Signal::try_from(n).ok()
}

/// Blocks SIGCHLD and `forwarded`; returns the mask before.
fn block_signals(forwarded: &[i32]) -> SigSet {
    let mut signals = vec![libc::SIGCHLD];
    signals.extend_from_slice(forwarded);
    frun_engine::sys::block_signals(&signals)
}

/// The stop signals the signalfd holds, read until it has none.
fn pending(signals: &OwnedFd) -> impl Iterator<Item = Signal> {
    std::iter::from_fn(|| read_signal(signals.as_fd())).filter_map(nix_signal)
}

/// Forks the engine and serves it until it ends; returns frun's exit status.
pub(super) fn run(cfg: &frun_engine::plan::config::Config, kind: Option<Kind>) -> io::Result<i32> {
    let (mine, theirs) = socket_pair()?;
    let shell_pid = getpid();
    let (preempt, forwarded) = forwarded_signals();
    let old_mask = block_signals(&forwarded);
    let signals = match frun_engine::run::stop_signalfd(preempt) {
        Ok(fd) => fd,
        Err(e) => {
            set_mask(&old_mask);
            return Err(e);
        }
    };
    // SAFETY: fork in a single-threaded process (the shell); the child only runs our code and
    // ends with _exit.
    let engine = match unsafe { fork() } {
        Ok(ForkResult::Parent { child }) => child,
        Ok(ForkResult::Child) => {
            drop(mine);
            drop(signals);
            follow_parent(shell_pid);
            engine_main(cfg, theirs, &old_mask);
        }
        Err(e) => {
            set_mask(&old_mask);
            return Err(e.into());
        }
    };
    drop(theirs);
    let mut caught = None;
    let mut live = Vec::new();
    // A GNU Parallel-style line is `eval`ed (see the job line's plan).
    let name = if cfg.job.as_ref().is_some_and(|j| !j.literal) && kind.is_some() {
        std::ffi::OsString::from("eval")
    } else {
        cfg.command[0].clone()
    };
    // Whatever ended serving (the engine's end, or a broken socket), the engine is waited for
    // below and every worker shell it did not reap is stopped and reaped here.
    let _ = serve(
        &mine,
        &signals,
        engine,
        &mut caught,
        &mut live,
        kind,
        &name,
        &old_mask,
    );
    drop(mine);
    let status = wait_pid(engine);
    for &pid in &live {
        // Our own unreaped children, and the groups they lead.
        let _ = killpg(pid, Signal::SIGTERM);
        let _ = kill(pid, Signal::SIGTERM);
    }
    for &pid in &live {
        let _ = wait_pid(pid);
    }
    // A stop signal meant for this shell reaches it now, once frun has ended: it does to the
    // shell what it would have done (ends a script, interrupts a prompt's command line).
    if let Some(sig) = pending(&signals).last() {
        caught = Some(sig);
    }
    drop(signals);
    set_mask(&old_mask);
    if let Some(sig) = caught {
        // Bash's own disposition handles it.
        let _ = raise(sig);
    }
    Ok(match ChildEnd::from_wait_status(status?) {
        ChildEnd::Exited(c) => c,
        ChildEnd::Signaled(s) => 128 + s,
    })
}

/// A child of the user's shell gets SIGTERM when that shell dies (`kill` of a background
/// `frun`, a closed terminal), as a frun process would itself: the engine then stops as on any
/// TERM, keeping its checkpoint, and worker shells end.
fn follow_parent(parent: Pid) {
    let _ = prctl::set_pdeathsig(Signal::SIGTERM);
    // The shell may have died before the line above.
    if getppid() != parent {
        exit_now(128 + Signal::SIGTERM as i32);
    }
}

/// The user's shell while the engine runs: starts and reaps worker shells when the engine asks.
/// Stop signals sent to the shell meanwhile go on to the engine; the last one is kept in
/// `caught`. `live` holds the worker shells started and not yet reaped.
#[allow(clippy::too_many_arguments)]
fn serve(
    ctl: &OwnedFd,
    signals: &OwnedFd,
    engine: Pid,
    caught: &mut Option<Signal>,
    live: &mut Vec<Pid>,
    kind: Option<Kind>,
    name: &OsString,
    old_mask: &SigSet,
) -> io::Result<()> {
    loop {
        let mut fds = [
            PollFd::new(ctl.as_fd(), PollFlags::POLLIN),
            PollFd::new(signals.as_fd(), PollFlags::POLLIN),
        ];
        match poll(&mut fds, PollTimeout::NONE) {
            Ok(_) => {}
            Err(Errno::EINTR) => continue,
            Err(e) => return Err(e.into()),
        }
        for sig in pending(signals) {
            *caught = Some(sig);
            // Our own unreaped child.
            let _ = kill(engine, sig);
        }
        if fds[0].revents() == Some(PollFlags::empty()) {
            continue;
        }
        let mut ask = [0u8; 8];
        // EINTR (Ctrl-C reaches the shell too) is retried inside; the engine decides.
        let Ok(Some(_)) = shell::recv_with_fds(ctl.as_raw_fd(), &mut ask, 0) else {
            return Ok(());
        };
        let what = i32::from_ne_bytes(ask[..4].try_into().expect("4 bytes"));
        let pid = i32::from_ne_bytes(ask[4..].try_into().expect("4 bytes"));
        let reply = match what {
            ASK_START => {
                let Some(kind) = kind else {
                    return Ok(());
                };
                let (engine_end, worker_end) = socket_pair()?;
                // SAFETY: fork in the single-threaded shell; the child never returns.
                let w = unsafe { fork() };
                if let Ok(ForkResult::Child) = w {
                    drop(engine_end);
                    follow_parent(getppid());
                    super::worker::worker_main(ctl.as_raw_fd(), worker_end, kind, name, old_mask);
                }
                drop(worker_end);
                match w {
                    Ok(ForkResult::Parent { child }) => {
                        live.push(child);
                        (child.as_raw(), Some(engine_end))
                    }
                    _ => (-1i32, None),
                }
            }
            ASK_REAP => {
                let pid = Pid::from_raw(pid);
                live.retain(|&p| p != pid);
                (wait_pid(pid).unwrap_or(0), None)
            }
            _ => return Ok(()),
        };
        let mut out = [0u8; 8];
        out[..4].copy_from_slice(&reply.0.to_ne_bytes());
        let fds: Vec<RawFd> = reply.1.iter().map(|f| f.as_raw_fd()).collect();
        shell::send_with_fds(ctl.as_raw_fd(), &out, &fds)?;
    }
}

/// The engine's way to ask the user's shell for worker shells.
struct ShellHost {
    ctl: Mutex<OwnedFd>,
}

impl ShellHost {
    fn ask(&self, what: i32, pid: libc::pid_t) -> io::Result<(i32, Option<OwnedFd>)> {
        shell::ask_front_end(&self.ctl, what, pid, "shell")
    }
}

impl Host for ShellHost {
    fn start(&self) -> io::Result<(libc::pid_t, OwnedFd)> {
        match self.ask(ASK_START, 0)? {
            (pid, Some(fd)) if pid > 0 => Ok((pid, fd)),
            _ => Err(io::Error::other(
                "the calling shell could not fork a worker shell",
            )),
        }
    }

    fn reap(&self, pid: libc::pid_t) -> io::Result<ChildEnd> {
        Ok(ChildEnd::from_wait_status(self.ask(ASK_REAP, pid)?.0))
    }
}

/// Puts the dispositions the engine needs in place of the shell's handlers.
fn engine_signals() {
    // Every signal below SIGRTMIN that a program may catch: nix names them all (glibc refuses
    // `sigaction` on the two it keeps for itself, so they never had a handler to reset).
    for sig in Signal::iterator() {
        if sig == Signal::SIGKILL || sig == Signal::SIGSTOP {
            continue;
        }
        if has_handler(sig) {
            set_disposition(sig, Disposition::Default);
        }
    }
    // An interactive shell ignores these; the engine reads them from a signalfd.
    for sig in frun_engine::run::STOP_SIGNALS
        .into_iter()
        .filter_map(nix_signal)
    {
        set_disposition(sig, Disposition::Default);
    }
    // As the binary's runtime does: a vanished reader is EPIPE, not death.
    set_disposition(Signal::SIGPIPE, Disposition::Ignore);
}

/// The engine process: runs the invocation and exits with its status.
fn engine_main(cfg: &frun_engine::plan::config::Config, ctl: OwnedFd, old_mask: &SigSet) -> ! {
    engine_signals();
    set_mask(old_mask);
    let host: Option<Arc<dyn Host>> = if cfg.shell_command {
        Some(Arc::new(ShellHost {
            ctl: Mutex::new(ctl),
        }))
    } else {
        drop(ctl);
        None
    };
    crate::install_notices();
    exit_now(i32::from(crate::run_config(cfg, host, true)))
}
