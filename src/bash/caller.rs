//! The calling shell's side of the bash front end, and the engine process it forks: the shell
//! forks the engine, then serves it — forks worker shells on request, reaps them, and passes on
//! stop signals — until the engine ends. The engine asks through [`ShellHost`].
//!
//! The shell side starts no thread and waits for its own children only; it must not touch the
//! shell's variables, options or traps.

use std::ffi::OsString;
use std::io;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::sync::{Arc, Mutex};

use super::{Kind, child_end, set_mask, socket_pair, wait_pid};
use crate::exec::shell::{self, Host};
use crate::exec::spawn::ChildEnd;
use crate::sys::read_signal;
use std::os::fd::AsFd;

/// Requests from the engine to the user's shell: 8 bytes, `[kind, pid]`.
const ASK_START: i32 = 1;
const ASK_REAP: i32 = 2;

/// The signals that stop a run; while it runs, the user's shell receives them through a
/// signalfd and passes them to the engine, so `kill` of a shell running `frun` stops frun the
/// way it stops the binary (and the shell gets the signal itself once frun has ended).
fn forwarded_signals() -> (bool, Vec<i32>) {
    let preempt = crate::plan::preempt().unwrap_or(false);
    (preempt, crate::engine::stop_signals(preempt))
}

/// Blocks SIGCHLD and `forwarded`; returns the mask before.
fn block_signals(forwarded: &[i32]) -> libc::sigset_t {
    // SAFETY: sigset manipulation on local storage; sigprocmask on this (only) thread.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        let mut old: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, libc::SIGCHLD);
        for &s in forwarded {
            libc::sigaddset(&mut set, s);
        }
        libc::sigprocmask(libc::SIG_BLOCK, &set, &mut old);
        old
    }
}

/// Forks the engine and serves it until it ends; returns frun's exit status.
pub(super) fn run(cfg: &crate::plan::config::Config, kind: Option<Kind>) -> io::Result<i32> {
    let (mine, theirs) = socket_pair()?;
    // SAFETY: getpid has no memory effects.
    let shell_pid = unsafe { libc::getpid() };
    let (preempt, forwarded) = forwarded_signals();
    let old_mask = block_signals(&forwarded);
    let signals = match crate::engine::stop_signalfd(preempt) {
        Ok(fd) => fd,
        Err(e) => {
            set_mask(&old_mask);
            return Err(e);
        }
    };
    // SAFETY: fork in a single-threaded process (the shell); the child only runs our code and
    // ends with _exit.
    let engine = unsafe { libc::fork() };
    if engine < 0 {
        let e = io::Error::last_os_error();
        set_mask(&old_mask);
        return Err(e);
    }
    if engine == 0 {
        drop(mine);
        drop(signals);
        follow_parent(shell_pid);
        engine_main(cfg, theirs, &old_mask);
    }
    drop(theirs);
    let mut caught = None;
    let mut live = Vec::new();
    // Whatever ended serving (the engine's end, or a broken socket), the engine is waited for
    // below and every worker shell it did not reap is stopped and reaped here.
    let _ = serve(
        &mine,
        &signals,
        engine,
        &mut caught,
        &mut live,
        kind,
        &cfg.command[0],
        &old_mask,
    );
    drop(mine);
    let status = wait_pid(engine);
    for &pid in &live {
        // SAFETY: kill on our own unreaped children (and the groups they lead).
        unsafe {
            libc::kill(-pid, libc::SIGTERM);
            libc::kill(pid, libc::SIGTERM);
        }
    }
    for &pid in &live {
        let _ = wait_pid(pid);
    }
    // A stop signal meant for this shell reaches it now, once frun has ended: it does to the
    // shell what it would have done (ends a script, interrupts a prompt's command line).
    while let Some(sig) = read_signal(signals.as_fd()) {
        caught = Some(sig);
    }
    drop(signals);
    set_mask(&old_mask);
    if let Some(sig) = caught {
        // SAFETY: raises a signal in this process; bash's own disposition handles it.
        unsafe { libc::raise(sig) };
    }
    Ok(match child_end(status?) {
        ChildEnd::Exited(c) => c,
        ChildEnd::Signaled(s) => 128 + s,
    })
}

/// A child of the user's shell gets SIGTERM when that shell dies (`kill` of a background
/// `frun`, a closed terminal), as a frun process would itself: the engine then stops as on any
/// TERM, keeping its checkpoint, and worker shells end.
fn follow_parent(parent: libc::pid_t) {
    // SAFETY: prctl on this process; getppid has no memory effects.
    unsafe {
        libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM);
        // The shell may have died before the line above.
        if libc::getppid() != parent {
            libc::_exit(128 + libc::SIGTERM);
        }
    }
}

/// The user's shell while the engine runs: starts and reaps worker shells when the engine asks.
/// Stop signals sent to the shell meanwhile go on to the engine; the last one is kept in
/// `caught`. `live` holds the worker shells started and not yet reaped.
#[allow(clippy::too_many_arguments)]
fn serve(
    ctl: &OwnedFd,
    signals: &OwnedFd,
    engine: libc::pid_t,
    caught: &mut Option<i32>,
    live: &mut Vec<libc::pid_t>,
    kind: Option<Kind>,
    name: &OsString,
    old_mask: &libc::sigset_t,
) -> io::Result<()> {
    loop {
        let mut fds = [
            libc::pollfd {
                fd: ctl.as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            },
            libc::pollfd {
                fd: signals.as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            },
        ];
        // SAFETY: polls two descriptors we own.
        if unsafe { libc::poll(fds.as_mut_ptr(), 2, -1) } < 0 {
            let e = io::Error::last_os_error();
            if e.kind() == io::ErrorKind::Interrupted {
                continue;
            }
            return Err(e);
        }
        while let Some(sig) = read_signal(signals.as_fd()) {
            *caught = Some(sig);
            // SAFETY: signals our own unreaped child.
            unsafe { libc::kill(engine, sig) };
        }
        if fds[0].revents == 0 {
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
                let w = unsafe { libc::fork() };
                if w == 0 {
                    drop(engine_end);
                    // SAFETY: getppid has no memory effects.
                    follow_parent(unsafe { libc::getppid() });
                    super::worker::worker_main(ctl.as_raw_fd(), worker_end, kind, name, old_mask);
                }
                drop(worker_end);
                if w < 0 {
                    (-1i32, None)
                } else {
                    live.push(w);
                    (w, Some(engine_end))
                }
            }
            ASK_REAP => {
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
        let ctl = self.ctl.lock().unwrap_or_else(|e| e.into_inner());
        let mut msg = [0u8; 8];
        msg[..4].copy_from_slice(&what.to_ne_bytes());
        msg[4..].copy_from_slice(&pid.to_ne_bytes());
        shell::write_all(ctl.as_raw_fd(), &msg)?;
        let mut reply = [0u8; 8];
        let fds = shell::recv_with_fds(ctl.as_raw_fd(), &mut reply, 1)?
            .ok_or_else(|| io::Error::other("the calling shell went away"))?;
        let value = i32::from_ne_bytes(reply[..4].try_into().expect("4 bytes"));
        Ok((value, fds.into_iter().next()))
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
        Ok(child_end(self.ask(ASK_REAP, pid)?.0))
    }
}

/// Puts the dispositions the engine needs in place of the shell's handlers.
fn engine_signals() {
    // SAFETY: queries and sets dispositions of this (single-threaded) process; no handler of
    // ours is installed.
    unsafe {
        for sig in 1..libc::SIGRTMIN() {
            if sig == libc::SIGKILL || sig == libc::SIGSTOP {
                continue;
            }
            let mut old: libc::sigaction = std::mem::zeroed();
            if libc::sigaction(sig, std::ptr::null(), &mut old) == 0
                && old.sa_sigaction != libc::SIG_DFL
                && old.sa_sigaction != libc::SIG_IGN
            {
                libc::signal(sig, libc::SIG_DFL);
            }
        }
        // An interactive shell ignores these; the engine reads them from a signalfd.
        for sig in crate::engine::STOP_SIGNALS {
            libc::signal(sig, libc::SIG_DFL);
        }
        // As the binary's runtime does: a vanished reader is EPIPE, not death.
        libc::signal(libc::SIGPIPE, libc::SIG_IGN);
    }
}

/// The engine process: runs the invocation and exits with its status.
fn engine_main(cfg: &crate::plan::config::Config, ctl: OwnedFd, old_mask: &libc::sigset_t) -> ! {
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
    let code = i32::from(crate::run_config(cfg, host));
    // SAFETY: ends this process without running the shell's exit code.
    unsafe { libc::_exit(code) }
}
