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
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};

use nix::unistd::{dup2_stderr, dup2_stdin, dup2_stdout};

/// A file's identity: its device and inode.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Identity {
    dev: u64,
    ino: u64,
}

/// The identity of what `fd` is open on; None when it is not open.
fn identity(fd: BorrowedFd<'_>) -> Option<Identity> {
    let st = nix::sys::stat::fstat(fd).ok()?;
    Some(Identity {
        dev: st.st_dev,
        ino: st.st_ino,
    })
}

/// Standard descriptor `n` (0, 1 or 2), open or not, as std's handles lend it.
fn standard<R>(n: usize, f: impl FnOnce(BorrowedFd<'_>) -> R) -> R {
    match n {
        0 => f(io::stdin().as_fd()),
        1 => f(io::stdout().as_fd()),
        _ => f(io::stderr().as_fd()),
    }
}

/// A close-on-exec copy of `fd` at 10 or above (out of the way of a script's `exec 3<…`).
fn copy(fd: BorrowedFd<'_>) -> Option<OwnedFd> {
    crate::sys::dup_at_least(fd, 10).ok()
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
        .and_then(|fd| identity(fd.as_fd()).map(|id| (fd, id)));
        Surroundings {
            watched: [stdin, true, true],
            ids: [0, 1, 2].map(|n| standard(n, identity)),
            copies: [
                stdin.then(|| standard(0, copy)).flatten(),
                standard(1, copy),
                standard(2, copy),
            ],
            cwd,
        }
    }

    /// Says what moved since [`Surroundings::take`], and puts fds 0 and 2 and the working
    /// directory back (fd 1 too, so that what is said next reaches the right place; the caller
    /// still gives up the call's output).
    pub fn restore(&self) -> io::Result<Moved> {
        let mut moved = Moved::default();
        for n in 0..3 {
            if !self.watched[n] || standard(n, identity) == self.ids[n] {
                continue;
            }
            moved.fds[n] = true;
            if let Some(c) = &self.copies[n] {
                match n {
                    0 => dup2_stdin(c)?,
                    1 => dup2_stdout(c)?,
                    _ => dup2_stderr(c)?,
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
