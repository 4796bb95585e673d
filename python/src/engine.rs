//! The engine process: forked from the caller before any worker, it runs the same engine as
//! the `frun` binary (its stdin the records, its stdout the results) and asks the caller for
//! workers over a socket, as the bash front end's engine asks its shell.
//!
//! It never runs Python code: it is a copy of the interpreter that only runs Rust and ends
//! with `_exit`.

use std::io;
use std::os::fd::OwnedFd;
use std::sync::{Arc, Mutex};

use frun_engine::exec::shell::{self, Host};
use frun_engine::exec::spawn::ChildEnd;
use frun_engine::sys::{Disposition, exit_now, set_disposition};
use nix::sys::signal::Signal;

/// Requests from the engine to the caller: 8 bytes, `[kind, pid]`.
pub(crate) const ASK_START: i32 = 1;
pub(crate) const ASK_REAP: i32 = 2;

/// The engine's way to ask the caller for workers.
struct CallerHost {
    ctl: Mutex<OwnedFd>,
}

impl CallerHost {
    fn ask(&self, what: i32, pid: libc::pid_t) -> io::Result<(i32, Option<OwnedFd>)> {
        shell::ask_front_end(&self.ctl, what, pid, "interpreter")
    }
}

impl Host for CallerHost {
    fn start(&self) -> io::Result<(libc::pid_t, OwnedFd)> {
        match self.ask(ASK_START, 0)? {
            (pid, Some(fd)) if pid > 0 => Ok((pid, fd)),
            _ => Err(io::Error::other(
                "the calling interpreter could not fork a worker",
            )),
        }
    }

    fn reap(&self, pid: libc::pid_t) -> io::Result<ChildEnd> {
        Ok(ChildEnd::from_wait_status(self.ask(ASK_REAP, pid)?.0))
    }

    fn wants_ranges(&self) -> bool {
        true
    }
}

/// The engine process's body: the interpreter's signal handlers are put back to the defaults
/// (the engine reads its stop signals from a signalfd), then the run goes.
pub(crate) fn engine_main(cfg: &frun_engine::plan::config::Config, ctl: Option<OwnedFd>) -> ! {
    for sig in Signal::iterator() {
        if sig != Signal::SIGKILL && sig != Signal::SIGSTOP {
            set_disposition(sig, Disposition::Default);
        }
    }
    // A vanished reader is EPIPE, not death.
    set_disposition(Signal::SIGPIPE, Disposition::Ignore);
    let _ = nix::sys::signal::sigprocmask(
        nix::sys::signal::SigmaskHow::SIG_SETMASK,
        Some(&nix::sys::signal::SigSet::empty()),
        None,
    );
    let host: Option<Arc<dyn Host>> =
        ctl.map(|c| Arc::new(CallerHost { ctl: Mutex::new(c) }) as Arc<dyn Host>);
    // The engine's messages go to this process's stderr, which is the caller's.
    let notices = |n: &frun_engine::Notice<'_>| match n.kind {
        frun_engine::NoticeKind::Report => crate::message(format_args!("{}", n.text)),
        _ => crate::message(format_args!("frun: {}", n.text)),
    };
    let mut io = frun_engine::Io::new(Arc::new(notices));
    if let Some(host) = host {
        io = io.with_shell(host);
    }
    let code = i32::from(match frun_engine::run(cfg, io) {
        Ok(report) => report.status,
        Err(e) => {
            notices(&frun_engine::Notice {
                kind: frun_engine::NoticeKind::Problem,
                text: &e.to_string(),
                fact: None,
                detail: "",
            });
            e.status()
        }
    });
    exit_now(code)
}
