//! Starts a child with `posix_spawn` (vfork-style: no page-table copy, no shell) and waits for it.
//!
//! One [`Spawner`] per worker holds the prepared attributes (signal mask and dispositions) and
//! file actions (stdout to the worker's capture file, stdin from /dev/null), so a spawn does no
//! allocation. It knows nothing about batches or records.

use std::ffi::CStr;
use std::io;
use std::os::fd::RawFd;

unsafe extern "C" {
    static environ: *const *const libc::c_char;
}

/// How a child ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ChildEnd {
    Exited(i32),
    Signaled(i32),
}

/// Prepared `posix_spawn` attributes and file actions for one worker.
pub struct Spawner {
    attr: Box<libc::posix_spawnattr_t>,
    actions: Box<libc::posix_spawn_file_actions_t>,
}

// SAFETY: the attribute and file-action objects are only read by posix_spawn, and one worker owns
// its Spawner; moving it to another thread is fine.
unsafe impl Send for Spawner {}

fn check(rc: libc::c_int) -> io::Result<()> {
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::from_raw_os_error(rc))
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
        // SAFETY: zeroed storage is a valid argument for the *_init functions, which fully
        // initialise the objects; every call's result is checked.
        unsafe {
            let mut attr: Box<libc::posix_spawnattr_t> = Box::new(std::mem::zeroed());
            check(libc::posix_spawnattr_init(&mut *attr))?;
            let mut def: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut def);
            // The Rust runtime ignores SIGPIPE; commands expect the default.
            libc::sigaddset(&mut def, libc::SIGPIPE);
            check(libc::posix_spawnattr_setsigdefault(&mut *attr, &def))?;
            check(libc::posix_spawnattr_setsigmask(&mut *attr, sigmask))?;
            let mut flags = libc::POSIX_SPAWN_SETSIGDEF | libc::POSIX_SPAWN_SETSIGMASK;
            if own_group {
                check(libc::posix_spawnattr_setpgroup(&mut *attr, 0))?;
                flags |= libc::POSIX_SPAWN_SETPGROUP;
            }
            check(libc::posix_spawnattr_setflags(
                &mut *attr,
                flags as libc::c_short,
            ))?;
            let mut actions: Box<libc::posix_spawn_file_actions_t> = Box::new(std::mem::zeroed());
            check(libc::posix_spawn_file_actions_init(&mut *actions))?;
            if let Some(fd) = stdout {
                check(libc::posix_spawn_file_actions_adddup2(&mut *actions, fd, 1))?;
            }
            if let Some(fd) = stdin {
                check(libc::posix_spawn_file_actions_adddup2(&mut *actions, fd, 0))?;
            }
            Ok(Spawner { attr, actions })
        }
    }

    /// Starts `path` with the NULL-terminated `argv` and frun's own environment.
    pub fn spawn(&self, path: &CStr, argv: &[*const libc::c_char]) -> io::Result<libc::pid_t> {
        assert!(
            argv.last().is_some_and(|p| p.is_null()),
            "argv must end with NULL"
        );
        let mut pid: libc::pid_t = 0;
        // SAFETY: path is NUL-terminated; argv is a NULL-terminated array of pointers to
        // NUL-terminated strings that outlive the call; environ is the process environment,
        // which frun never modifies; attr and actions were initialised in `new`.
        let rc = unsafe {
            libc::posix_spawn(
                &mut pid,
                path.as_ptr(),
                &*self.actions,
                &*self.attr,
                argv.as_ptr() as *const *mut libc::c_char,
                environ as *const *mut libc::c_char,
            )
        };
        check(rc)?;
        Ok(pid)
    }
}

impl Drop for Spawner {
    fn drop(&mut self) {
        // SAFETY: both objects were initialised in `new` and are destroyed once.
        unsafe {
            libc::posix_spawn_file_actions_destroy(&mut *self.actions);
            libc::posix_spawnattr_destroy(&mut *self.attr);
        }
    }
}

/// Waits until child `pid` ends, without reaping it (its pid stays reserved until
/// [`wait_reap`]). Never waits for `-1`: other children are not ours.
pub fn wait_exit(pid: libc::pid_t) -> io::Result<ChildEnd> {
    loop {
        // SAFETY: zeroed siginfo_t is valid storage for waitid to fill.
        let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
        // SAFETY: waitid with a valid out-pointer.
        let r = unsafe {
            libc::waitid(
                libc::P_PID,
                pid as libc::id_t,
                &mut info,
                libc::WEXITED | libc::WNOWAIT,
            )
        };
        if r != 0 {
            let e = io::Error::last_os_error();
            if e.kind() == io::ErrorKind::Interrupted {
                continue;
            }
            return Err(e);
        }
        // SAFETY: waitid filled a CLD_* siginfo for a child, so si_status is the valid field.
        let status = unsafe { info.si_status() };
        return Ok(match info.si_code {
            libc::CLD_EXITED => ChildEnd::Exited(status),
            _ => ChildEnd::Signaled(status),
        });
    }
}

/// Reaps child `pid` after [`wait_exit`].
pub fn wait_reap(pid: libc::pid_t) {
    loop {
        // SAFETY: waitpid with a null status pointer is allowed.
        let r = unsafe { libc::waitpid(pid, std::ptr::null_mut(), 0) };
        if r >= 0 || io::Error::last_os_error().kind() != io::ErrorKind::Interrupted {
            return;
        }
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
