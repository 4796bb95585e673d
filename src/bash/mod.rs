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
use std::os::fd::OwnedFd;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::os::unix::net::UnixStream;

use nix::sys::signal::{SigSet, SigmaskHow, sigprocmask};
use nix::unistd::Pid;

use ffi::WordList;
use frun_engine::sys::{Disposition, exit_now, has_handler, set_disposition};

/// What the command is in the calling shell.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Function,
    Builtin,
    Alias,
    /// `-U`: any of the three, run as a command line in which the words from this index on
    /// (the records, or the words from the first `{}` one with `-i`) are word-split and
    /// glob-expanded by the worker shell.
    SplitFrom(usize),
    /// `-C SO:FN`: the worker shell loads the library and calls the function.
    Plugin,
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
    // Flushes the shell's own stdio buffers so no child writes them a second time.
    ffi::frun_flush_stdio();
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
        Ok(crate::Parsed {
            sidecar: Some(_), ..
        }) => {
            eprintln!("frun: --tee with --pipe runs in frun parallel, not in the shell's frun");
            return 255;
        }
        Ok(crate::Parsed { cfg, .. }) => cfg,
        Err(code) => return code.into(),
    };
    let line = cfg.job.as_ref().is_some_and(|j| !j.literal);
    let kind = if cfg.dry_run {
        None
    } else if cfg.plugin.is_some() {
        Some(Kind::Plugin)
    } else if cfg.external {
        None
    } else if line {
        // A GNU Parallel-style line (`frun parallel …`) runs as `eval LINE` in the worker
        // shells: the user's functions, aliases and variables work anywhere in it.
        Some(Kind::Builtin)
    } else {
        lookup(cfg.command[0].as_bytes())
    };
    cfg.shell_command = kind.is_some();
    let kind = kind.map(|k| {
        if cfg.unsafe_words && k != Kind::Plugin {
            Kind::SplitFrom(cfg.literal_words())
        } else {
            k
        }
    });
    match caller::run(&cfg, kind) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("frun: {}", frun_engine::sys::errors::os_message(&e));
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

/// Sets this thread's signal mask (the process has one thread wherever this runs).
fn set_mask(mask: &SigSet) {
    let _ = sigprocmask(SigmaskHow::SIG_SETMASK, Some(mask), None);
}

/// A connected pair of close-on-exec stream sockets.
fn socket_pair() -> io::Result<(OwnedFd, OwnedFd)> {
    let (a, b) = UnixStream::pair()?;
    Ok((a.into(), b.into()))
}

/// Waits for our own child `pid`, retrying on EINTR; returns its raw wait status.
fn wait_pid(pid: Pid) -> io::Result<libc::c_int> {
    frun_engine::sys::wait_status(pid.as_raw())
}
