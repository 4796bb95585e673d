//! Starts a child the way `posix_spawn` does (a `vfork`-style clone: no page-table copy, no
//! shell), plus one step posix_spawn cannot take: the child asks for SIGKILL when the worker
//! thread that started it goes away (`PR_SET_PDEATHSIG`), so `kill -9` of frun ends its
//! commands too. It also waits for children.
//!
//! One [`Spawner`] per worker holds what every start needs (the descriptors for fd 1 and 0, the
//! signal mask, a small stack for the child's few steps before exec), so a spawn does no
//! allocation. It knows nothing about batches or records.

use std::cell::UnsafeCell;
use std::ffi::CStr;
use std::io;
use std::os::fd::RawFd;

use nix::errno::Errno;
use nix::sys::signal::{SigSet, SigmaskHow, pthread_sigmask};
use nix::sys::wait::waitpid;
use nix::unistd::{Pid, getpid};

unsafe extern "C" {
    static environ: *const *const libc::c_char;
}

/// How a child ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ChildEnd {
    /// Exited with this status.
    Exited(i32),
    /// Killed by this signal.
    Signaled(i32),
}

impl ChildEnd {
    /// How a raw wait status (as `waitpid` writes it) ended.
    pub fn from_wait_status(status: libc::c_int) -> ChildEnd {
        if libc::WIFSIGNALED(status) {
            ChildEnd::Signaled(libc::WTERMSIG(status))
        } else {
            ChildEnd::Exited(libc::WEXITSTATUS(status))
        }
    }
}

/// Bytes of stack the child runs on between clone and exec (a handful of system calls).
const CHILD_STACK: usize = 32 << 10;

/// What one worker's children start with.
pub struct Spawner {
    /// Descriptors to put on the child's fd 1 and fd 0 (-1: inherit).
    stdout: RawFd,
    stdin: RawFd,
    /// A descriptor to put on the child's fd 2 (-1: inherit).
    stderr: RawFd,
    /// The signal mask the child starts with.
    sigmask: libc::sigset_t,
    own_group: bool,
    /// frun's pid, for the child's check that its parent is still frun.
    parent: libc::pid_t,
    /// The child's stack (it shares the worker's memory until it execs; the worker waits).
    stack: UnsafeCell<Box<[u128]>>,
    /// An environment of the children's own instead of frun's (its strings, then the
    /// NULL-terminated pointers to them).
    environment: Option<(Vec<std::ffi::CString>, Vec<*const libc::c_char>)>,
}

// SAFETY: a Spawner is owned by one worker; the stack is only used during `spawn`, by the child
// of the thread that called it, while that thread is suspended.
unsafe impl Send for Spawner {}

/// What the child needs between clone and exec. It lives in the worker's frame, which the child
/// shares (CLONE_VM) while the worker waits for it to exec or exit (CLONE_VFORK).
struct Start {
    path: *const libc::c_char,
    argv: *const *const libc::c_char,
    stdout: RawFd,
    stdin: RawFd,
    stderr: RawFd,
    own_group: bool,
    sigmask: *const libc::sigset_t,
    /// frun's pid: a child whose parent is already someone else must not run.
    parent: libc::pid_t,
    /// The errno of the step that failed (0: exec succeeded).
    error: libc::c_int,
    envp: *const *const libc::c_char,
}

/// The child's side: ends with exec, or with `_exit(127)` after writing the errno to `error`.
extern "C" fn child_start(arg: *mut libc::c_void) -> libc::c_int {
    // SAFETY: `arg` points to the Start in the suspended parent's frame; the child only makes
    // system calls (no allocation, no locks) on its own stack before exec or _exit.
    unsafe {
        let s = arg.cast::<Start>();
        let fail = |s: *mut Start| -> libc::c_int {
            (*s).error = *libc::__errno_location();
            libc::_exit(127)
        };
        // The Rust runtime ignores SIGPIPE, and an ignored signal stays ignored across exec:
        // commands expect the default.
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
        if (*s).own_group && libc::setpgid(0, 0) != 0 {
            return fail(s);
        }
        for (fd, target) in [((*s).stdout, 1), ((*s).stdin, 0), ((*s).stderr, 2)] {
            if fd < 0 {
                continue;
            }
            let r = if fd == target {
                libc::fcntl(fd, libc::F_SETFD, 0)
            } else {
                libc::dup2(fd, target)
            };
            if r < 0 {
                return fail(s);
            }
        }
        // SIGKILL once the starting thread ends (frun killed): set first, then check that
        // frun did not die before it was set.
        if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 {
            return fail(s);
        }
        if libc::getppid() != (*s).parent {
            (*s).error = libc::ESRCH;
            libc::_exit(127);
        }
        if libc::sigprocmask(libc::SIG_SETMASK, (*s).sigmask, std::ptr::null_mut()) != 0 {
            return fail(s);
        }
        libc::execve((*s).path, (*s).argv, (*s).envp);
        fail(s)
    }
}

impl Spawner {
    /// `stdout`/`stdin`: descriptors to put on the child's fd 1/0 (None = inherit).
    /// `sigmask`: the signal mask the child starts with (frun's mask before it blocked signals).
    /// `own_group`: the child leads a new process group, so stopping it reaches everything it
    /// started (`kill(-pid)`).
    pub fn new(
        stdout: Option<RawFd>,
        stdin: Option<RawFd>,
        sigmask: &libc::sigset_t,
        own_group: bool,
    ) -> io::Result<Spawner> {
        Ok(Spawner {
            stdout: stdout.unwrap_or(-1),
            stdin: stdin.unwrap_or(-1),
            stderr: -1,
            sigmask: *sigmask,
            own_group,
            parent: getpid().as_raw(),
            stack: UnsafeCell::new(vec![0u128; CHILD_STACK / 16].into_boxed_slice()),
            environment: None,
        })
    }

    /// Children write their stderr to `fd` instead of frun's.
    pub fn with_stderr(mut self, fd: RawFd) -> Spawner {
        self.stderr = fd;
        self
    }

    /// Children get this environment (`NAME=VALUE` strings) instead of frun's.
    pub fn with_environment(mut self, vars: Vec<std::ffi::CString>) -> Spawner {
        let mut pointers: Vec<*const libc::c_char> = vars.iter().map(|v| v.as_ptr()).collect();
        pointers.push(std::ptr::null());
        self.environment = Some((vars, pointers));
        self
    }

    /// Replaces the last variable of the environment given with `with_environment` (the one
    /// `environment_with` added) with `var` (`NAME=VALUE`); nothing without one.
    pub fn replace_last_variable(&mut self, var: std::ffi::CString) {
        if let Some((vars, pointers)) = &mut self.environment {
            if let Some(last) = vars.last_mut() {
                *last = var;
                // The pointer array ends with the NULL after the last variable's pointer.
                let at = pointers.len() - 2;
                pointers[at] = last.as_ptr();
            }
        }
    }

    /// Starts `path` with the NULL-terminated `argv` and frun's own environment.
    pub fn spawn(&self, path: &CStr, argv: &[*const libc::c_char]) -> io::Result<libc::pid_t> {
        assert!(
            argv.last().is_some_and(|p| p.is_null()),
            "argv must end with NULL"
        );
        let mut start = Start {
            path: path.as_ptr(),
            argv: argv.as_ptr(),
            stdout: self.stdout,
            stdin: self.stdin,
            stderr: self.stderr,
            own_group: self.own_group,
            sigmask: &self.sigmask,
            parent: self.parent,
            error: 0,
            envp: match &self.environment {
                Some((_, pointers)) => pointers.as_ptr(),
                // SAFETY: reads the `environ` pointer itself (exec reads what it points to).
                None => unsafe { environ },
            },
        };
        // All signals are blocked around the clone, so no handler runs in the child on the
        // shared memory; the child sets its own mask before exec. (Blocking cannot fail: the
        // arguments are valid.)
        let mut old = SigSet::empty();
        let _ = pthread_sigmask(
            SigmaskHow::SIG_SETMASK,
            Some(&SigSet::all()),
            Some(&mut old),
        );
        // SAFETY: the stack is this Spawner's and only this call uses it; the child runs on
        // its top (stacks grow down; 16-byte aligned as u128). Signals are blocked (above).
        // CLONE_VFORK suspends this thread until the child has exec'd or exited, so `start`
        // outlives every use the child makes of it, and the child's write to `start.error` is
        // done before the volatile read below. (Raw clone: nix has no vfork-style start on a
        // borrowed stack, and its fork copies the page tables.)
        let (pid, clone_error, error) = unsafe {
            let stack = &mut *self.stack.get();
            let top = stack.as_mut_ptr().add(stack.len()).cast::<libc::c_void>();
            let pid = libc::clone(
                child_start,
                top,
                libc::CLONE_VM | libc::CLONE_VFORK | libc::SIGCHLD,
                (&mut start as *mut Start).cast(),
            );
            let clone_error = io::Error::last_os_error();
            (pid, clone_error, std::ptr::read_volatile(&start.error))
        };
        let _ = pthread_sigmask(SigmaskHow::SIG_SETMASK, Some(&old), None);
        if pid < 0 {
            return Err(clone_error);
        }
        if error != 0 {
            wait_reap(pid);
            return Err(io::Error::from_raw_os_error(error));
        }
        Ok(pid)
    }
}

/// Waits until child `pid` ends, without reaping it (its pid stays reserved until
/// [`wait_reap`]). Never waits for `-1`: other children are not ours.
///
/// Raw `waitid`: nix's `WaitStatus` has no room for a real-time signal, so a child killed by
/// one (`SIGRTMIN+n`) would come back as an error instead of its signal number.
pub fn wait_exit(pid: libc::pid_t) -> io::Result<ChildEnd> {
    loop {
        // SAFETY: a zeroed siginfo_t is valid storage for waitid to fill; once waitid succeeded
        // for WEXITED, it holds a CLD_* siginfo for a child, whose si_status is the valid field.
        let ended = unsafe {
            let mut info: libc::siginfo_t = std::mem::zeroed();
            Errno::result(libc::waitid(
                libc::P_PID,
                pid as libc::id_t,
                &mut info,
                libc::WEXITED | libc::WNOWAIT,
            ))
            .map(|_| (info.si_code, info.si_status()))
        };
        return match ended {
            Ok((libc::CLD_EXITED, status)) => Ok(ChildEnd::Exited(status)),
            Ok((_, status)) => Ok(ChildEnd::Signaled(status)),
            Err(Errno::EINTR) => continue,
            Err(e) => Err(e.into()),
        };
    }
}

/// Reaps child `pid` after [`wait_exit`]. (A status nix cannot describe is an error returned
/// after the child was reaped, so any outcome but EINTR ends the wait.)
pub fn wait_reap(pid: libc::pid_t) {
    while let Err(Errno::EINTR) = waitpid(Pid::from_raw(pid), None) {}
}

/// frun's environment (or `base`, when children get one of their own) with `name` set to
/// `value`: what a child is given when it must see a variable frun itself does not have.
pub fn environment_with(
    base: Option<&[std::ffi::CString]>,
    name: &std::ffi::OsStr,
    value: &std::ffi::OsStr,
) -> Vec<std::ffi::CString> {
    use std::os::unix::ffi::{OsStrExt, OsStringExt};
    let mut own = name.as_bytes().to_vec();
    own.push(b'=');
    let is_other = |kv: &[u8]| !kv.starts_with(&own);
    let mut vars: Vec<std::ffi::CString> = match base {
        Some(base) => base
            .iter()
            .filter(|kv| is_other(kv.as_bytes()))
            .cloned()
            .collect(),
        None => std::env::vars_os()
            .filter_map(|(k, v)| {
                let mut kv = k.into_vec();
                kv.push(b'=');
                kv.extend_from_slice(v.as_bytes());
                std::ffi::CString::new(kv).ok()
            })
            .filter(|kv| is_other(kv.as_bytes()))
            .collect(),
    };
    own.extend_from_slice(value.as_bytes());
    vars.extend(std::ffi::CString::new(own).ok());
    vars
}

/// The size of an environment as the kernel counts it against ARG_MAX (strings + pointers):
/// `vars`, or frun's own.
pub fn environment_bytes_of(vars: Option<&[std::ffi::CString]>) -> u64 {
    match vars {
        Some(vars) => {
            8 + vars
                .iter()
                .map(|v| v.as_bytes().len() as u64 + 1 + 8)
                .sum::<u64>()
        }
        None => environment_bytes(),
    }
}

/// The size of the environment as the kernel counts it against ARG_MAX (strings + pointers).
pub fn environment_bytes() -> u64 {
    let mut total = 8u64;
    // SAFETY: environ is a NULL-terminated array of NUL-terminated strings, unchanged while frun
    // runs.
    unsafe {
        let mut p = environ;
        while !p.is_null() && !(*p).is_null() {
            total += CStr::from_ptr(*p).to_bytes().len() as u64 + 1 + 8;
            p = p.add(1);
        }
    }
    total
}
