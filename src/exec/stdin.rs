//! The stdin backend's plumbing: a fresh pipe per batch whose read end becomes the child's stdin
//! (through a descriptor number the worker reserves, so the prepared spawn actions never change),
//! and a kernel-side copy of the batch's bytes from the spool into the write end.
//!
//! It moves bytes only; which bytes, and what the child does with them, is not its business.

use std::cell::RefCell;
use std::io;
use std::os::fd::{AsRawFd, BorrowedFd, FromRawFd, OwnedFd, RawFd};

use nix::errno::Errno;
use nix::fcntl::{FcntlArg, OFlag, fcntl};
use nix::sys::sendfile::sendfile;
use nix::unistd::{dup3, pipe2};

/// A descriptor number reserved for the child's stdin. Between batches it holds /dev/null.
pub struct StdinSlot {
    /// The number never changes; what it refers to does (`dup3` onto it needs it mutable).
    slot: RefCell<OwnedFd>,
    idle: OwnedFd,
}

/// The write end of one batch's pipe.
pub struct Feed {
    write: OwnedFd,
}

impl StdinSlot {
    pub fn new() -> io::Result<StdinSlot> {
        let idle = OwnedFd::from(std::fs::File::open("/dev/null")?);
        let fd = fcntl(&idle, FcntlArg::F_DUPFD_CLOEXEC(3))?;
        // SAFETY: F_DUPFD_CLOEXEC just made `fd`, which nothing else owns.
        let slot = RefCell::new(unsafe { OwnedFd::from_raw_fd(fd) });
        Ok(StdinSlot { slot, idle })
    }

    /// The descriptor the spawn actions put on the child's fd 0.
    pub fn fd(&self) -> RawFd {
        self.slot.borrow().as_raw_fd()
    }

    /// Makes a new pipe, puts its read end in the slot and returns the write end.
    pub fn open(&self) -> io::Result<Feed> {
        let (read, write) = pipe2(OFlag::O_CLOEXEC)?;
        // A bigger pipe means fewer wake-ups; refusal (the per-user pipe limit) is harmless.
        let _ = fcntl(&write, FcntlArg::F_SETPIPE_SZ(1 << 20));
        self.put(&read)?;
        Ok(Feed { write })
    }

    /// Drops frun's copy of the read end once the child has it, so a child that exits without
    /// reading makes writes fail with EPIPE instead of blocking.
    pub fn release(&self) -> io::Result<()> {
        self.put(&self.idle)
    }

    /// Makes the slot number refer to what `fd` refers to (the old description is released).
    fn put(&self, fd: &OwnedFd) -> io::Result<()> {
        Ok(dup3(fd, &mut self.slot.borrow_mut(), OFlag::O_CLOEXEC)?)
    }
}

impl Feed {
    /// Copies `len` bytes at file offset `off` of `file` into the pipe, then closes it. A reader
    /// that went away early (EPIPE) is not an error; a file that ends before `off + len` (it
    /// shrank) is `UnexpectedEof`.
    pub fn send(self, file: BorrowedFd<'_>, mut off: u64, len: u64) -> io::Result<()> {
        let end = off + len;
        while off < end {
            let mut o = off as libc::off_t;
            let want = (end - off).min(1 << 30) as usize;
            match sendfile(&self.write, file, Some(&mut o), want) {
                Ok(0) => {
                    return Err(io::Error::new(
                        io::ErrorKind::UnexpectedEof,
                        "input file shrank",
                    ));
                }
                Ok(_) => off = o as u64,
                Err(Errno::EINTR) => {}
                Err(Errno::EPIPE) => return Ok(()),
                Err(e) => return Err(e.into()),
            }
        }
        Ok(())
    }
}
