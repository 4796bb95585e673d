//! The bash front end: `frun` as a loadable builtin (`enable -f`), so a bash function, builtin
//! or alias of the calling shell can be the command.
//!
//! Three kinds of process, all forked from the user's shell:
//! - the user's shell itself, inside the builtin: parses the flags, forks the engine, then only
//!   serves it (`caller`): it forks worker shells on request and reaps them. It starts no
//!   thread, waits for its own children only (SIGCHLD blocked meanwhile, so bash's handler
//!   cannot take them) and changes none of the shell's state;
//! - the engine (`caller::engine_main`): the same engine as the binary, with threads, in a
//!   process of its own. Its workers run batches in worker shells instead of spawning
//!   (`exec::shell`);
//! - worker shells (`worker`): copies of the user's shell, so every function, variable,
//!   array and alias is there. Each runs batch after batch and ends when its socket closes.
//!
//! This module is the builtin's entry point and the helpers its parts share; `ffi` holds the bash
//! ABI. None of it schedules, orders or retries anything (the engine does).

mod caller;
mod ffi;
mod worker;

use std::ffi::{CStr, CString, OsString};
use std::io;
use std::os::fd::{FromRawFd, OwnedFd};
use std::os::unix::ffi::{OsStrExt, OsStringExt};

use crate::exec::spawn::ChildEnd;
use ffi::WordList;

/// What the command is in the calling shell.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Function,
    Builtin,
    Alias,
}

fn cvt(r: libc::c_int) -> io::Result<libc::c_int> {
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(r)
    }
}

/// The builtin's entry point (see `ffi::frun_struct`).
///
/// # Safety
/// Called by bash with a valid (possibly null) word list.
pub(crate) unsafe extern "C" fn frun_builtin(list: *mut WordList) -> libc::c_int {
    let mut args = vec![OsString::from("frun")];
    // SAFETY: bash hands us a well-formed list of NUL-terminated words.
    unsafe {
        let mut l = list;
        while !l.is_null() {
            let w = (*l).word;
            if !w.is_null() && !(*w).word.is_null() {
                args.push(OsString::from_vec(
                    CStr::from_ptr((*w).word).to_bytes().to_vec(),
                ));
            }
            l = (*l).next;
        }
    }
    // SAFETY: flushes the shell's own stdio buffers so no child writes them a second time.
    unsafe { ffi::frun_flush_stdio() };
    // A panic must not unwind into bash (that would abort the user's shell): it is reported
    // as a failure of this command instead.
    std::panic::catch_unwind(move || invoke(args)).unwrap_or_else(|_| {
        eprintln!("frun: internal error (a bug); the shell is unharmed");
        1
    })
}

/// Runs one `frun …` command line in the calling shell; returns its exit status.
fn invoke(args: Vec<OsString>) -> libc::c_int {
    let mut cfg = match crate::parse_args(args) {
        Ok(cfg) => cfg,
        Err(code) => return code.into(),
    };
    let kind = if cfg.external || cfg.dry_run {
        None
    } else {
        lookup(cfg.command[0].as_bytes())
    };
    cfg.shell_command = kind.is_some();
    match caller::run(&cfg, kind) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("frun: {}", crate::errors::os_message(&e));
            1
        }
    }
}

/// Looks the command name up as bash would: alias (when aliases expand), function, builtin.
fn lookup(name: &[u8]) -> Option<Kind> {
    let name = CString::new(name).ok()?;
    // SAFETY: bash lookups with a valid C string; they only read shell state.
    unsafe {
        if ffi::expand_aliases != 0 && !ffi::find_alias(name.as_ptr().cast_mut()).is_null() {
            Some(Kind::Alias)
        } else if !ffi::find_function(name.as_ptr()).is_null() {
            Some(Kind::Function)
        } else if ffi::find_shell_builtin(name.as_ptr().cast_mut()).is_some() {
            Some(Kind::Builtin)
        } else {
            None
        }
    }
}

fn set_mask(mask: &libc::sigset_t) {
    // SAFETY: sets this thread's mask from a valid set.
    unsafe { libc::sigprocmask(libc::SIG_SETMASK, mask, std::ptr::null_mut()) };
}

fn socket_pair() -> io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0; 2];
    // SAFETY: socketpair fills two descriptors, owned right below.
    cvt(unsafe {
        libc::socketpair(
            libc::AF_UNIX,
            libc::SOCK_STREAM | libc::SOCK_CLOEXEC,
            0,
            fds.as_mut_ptr(),
        )
    })?;
    // SAFETY: both are fresh and owned by nobody else.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

fn wait_pid(pid: libc::pid_t) -> io::Result<libc::c_int> {
    let mut status = 0;
    loop {
        // SAFETY: waits for our own child into a live int.
        let r = unsafe { libc::waitpid(pid, &mut status, 0) };
        if r == pid {
            return Ok(status);
        }
        let e = io::Error::last_os_error();
        if e.kind() != io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
}

fn child_end(status: libc::c_int) -> ChildEnd {
    if libc::WIFSIGNALED(status) {
        ChildEnd::Signaled(libc::WTERMSIG(status))
    } else {
        ChildEnd::Exited(libc::WEXITSTATUS(status))
    }
}
