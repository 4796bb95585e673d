//! What a call into code frun does not own — a C plugin's function in its host, a bash function
//! in a worker shell — must leave as it found it for the next call in the same long-lived
//! process: descriptors 0, 1 and 2 and the working directory.
//!
//! [`Surroundings`] takes their identities (and close-on-exec copies) once, when the process is
//! ready to serve; after each call, [`Surroundings::restore`] says which moved and puts back
//! what can be put back: fds 0 and 2 and the working directory. It does not decide what a
//! moved fd 1 means: the caller does (the call's output went elsewhere, so the attempt is
//! given up and the process ends, since C's or the shell's own idea of its stdout may be
//! broken too). A few system calls per batch, none per record.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

/// A file's identity: its device and inode.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Identity {
    dev: u64,
    ino: u64,
}

/// The identity of what `fd` is open on; None when it is not open.
fn identity(fd: RawFd) -> Option<Identity> {
    let mut st = std::mem::MaybeUninit::<libc::stat>::uninit();
    // SAFETY: fstat writes a whole `struct stat` into `st` on success and touches nothing on
    // failure (a number that is not open fails with EBADF); `st` is read only after success.
    let st = unsafe {
        if libc::fstat(fd, st.as_mut_ptr()) != 0 {
            return None;
        }
        st.assume_init()
    };
    Some(Identity {
        dev: st.st_dev,
        ino: st.st_ino,
    })
}

/// A close-on-exec copy of `fd` at 10 or above (out of the way of a script's `exec 3<…`).
fn copy(fd: RawFd) -> Option<OwnedFd> {
    // SAFETY: F_DUPFD_CLOEXEC on any number is safe: one that is not open fails with EBADF;
    // a new descriptor is ours alone.
    let c = unsafe { libc::fcntl(fd, libc::F_DUPFD_CLOEXEC, 10) };
    // SAFETY: as above: `c` was just made and nothing else owns it.
    (c >= 0).then(|| unsafe { OwnedFd::from_raw_fd(c) })
}

/// What moved during a call.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Moved {
    /// fds 0, 1 and 2: closed or open on another file.
    pub fds: [bool; 3],
    /// The working directory.
    pub cwd: bool,
}

/// The state of fds 0–2 and of the working directory when a process began to serve.
pub struct Surroundings {
    /// Which of fds 0–2 are watched.
    watched: [bool; 3],
    ids: [Option<Identity>; 3],
    copies: [Option<OwnedFd>; 3],
    /// The working directory, opened (`O_PATH`: no read permission needed), and its identity.
    cwd: Option<(OwnedFd, Identity)>,
}

impl Surroundings {
    /// Takes the state as it is now, of fd 0 too unless `stdin` is false (a process that
    /// sets fd 0 for each batch itself).
    pub fn take(stdin: bool) -> Surroundings {
        let cwd = nix::fcntl::open(
            ".",
            nix::fcntl::OFlag::O_PATH
                | nix::fcntl::OFlag::O_DIRECTORY
                | nix::fcntl::OFlag::O_CLOEXEC,
            nix::sys::stat::Mode::empty(),
        )
        .ok()
        .and_then(|fd| identity(fd.as_raw_fd()).map(|id| (fd, id)));
        Surroundings {
            watched: [stdin, true, true],
            ids: [identity(0), identity(1), identity(2)],
            copies: [stdin.then(|| copy(0)).flatten(), copy(1), copy(2)],
            cwd,
        }
    }

    /// Says what moved since [`Surroundings::take`], and puts fds 0 and 2 and the working
    /// directory back (fd 1 too, so that what is said next reaches the right place; the caller
    /// still gives up the call's output).
    pub fn restore(&self) -> io::Result<Moved> {
        let mut moved = Moved::default();
        for n in 0..3 {
            if !self.watched[n] || identity(n as RawFd) == self.ids[n] {
                continue;
            }
            moved.fds[n] = true;
            if let Some(c) = &self.copies[n] {
                // SAFETY: dup2 of our own open copy onto a standard descriptor.
                if unsafe { libc::dup2(c.as_raw_fd(), n as RawFd) } < 0 {
                    return Err(io::Error::last_os_error());
                }
            }
        }
        if let Some((dir, id)) = &self.cwd {
            let here = std::fs::metadata(".").ok().map(|m| {
                use std::os::unix::fs::MetadataExt;
                Identity {
                    dev: m.dev(),
                    ino: m.ino(),
                }
            });
            if here != Some(*id) {
                moved.cwd = true;
                nix::unistd::fchdir(dir)?;
            }
        }
        Ok(moved)
    }
}
