//! The stdin backend's plumbing: a fresh pipe per batch whose read end becomes the child's stdin
//! (through a descriptor number the worker reserves, so the prepared spawn actions never change),
//! and a kernel-side copy of the batch's bytes from the spool into the write end.
//!
//! It moves bytes only; which bytes, and what the child does with them, is not its business.

use std::cell::RefCell;
use std::io;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd, RawFd};
use std::time::Duration;

use nix::errno::Errno;
use nix::fcntl::{FcntlArg, OFlag, fcntl};
use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
use nix::sys::sendfile::sendfile;
use nix::unistd::{dup3, pipe2};

/// A descriptor number reserved for the child's stdin. Between batches it holds /dev/null.
pub struct StdinSlot {
    /// The number never changes; what it refers to does (`dup3` onto it needs it mutable).
    slot: RefCell<OwnedFd>,
    idle: OwnedFd,
}

/// The write end of one batch's pipe (non-blocking; see [`Feed::send`]).
pub struct Feed {
    write: OwnedFd,
    /// The pipe's size in bytes.
    capacity: u64,
}

/// The shortest and longest pause of [`Feed::send`] while the pipe is full.
const PAUSE_MIN: Duration = Duration::from_micros(20);
const PAUSE_MAX: Duration = Duration::from_millis(2);

impl StdinSlot {
    /// Reserves a descriptor, holding /dev/null for now.
    pub fn new() -> io::Result<StdinSlot> {
        let idle = OwnedFd::from(crate::sys::dev_null()?);
        let slot = RefCell::new(crate::sys::dup_at_least(idle.as_fd(), 3)?);
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
        let capacity = fcntl(&write, FcntlArg::F_GETPIPE_SZ).map_or(4096, |c| c.max(4096) as u64);
        // Only frun's end: the two ends are separate open files, so the child's stdin still
        // blocks as a reader expects.
        fcntl(&write, FcntlArg::F_SETFL(OFlag::O_NONBLOCK))?;
        self.put(&read)?;
        Ok(Feed { write, capacity })
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
    ///
    /// While the pipe is full this pauses instead of blocking in the pipe. A blocked writer is
    /// woken each time the reader frees one slot (a 16 KiB `read` by `wc`), so the two would take
    /// turns thousands of times per batch, each turn a context switch; paused, the writer finds
    /// the pipe partly drained and refills it in one call while the reader never waits. The
    /// pause adapts to the reader: it halves while the pipe is found mostly empty and doubles
    /// while it is found mostly full; a reader slower than that (or one that reads nothing) is
    /// then waited for in the pipe, as a blocking write would.
    pub fn send(&self, file: BorrowedFd<'_>, off: u64, len: u64) -> io::Result<bool> {
        self.copy(file, off, len)
    }

    /// As [`Feed::send`], for the byte ranges `runs` (offsets from `off`) one after another.
    pub fn send_runs(
        &self,
        file: BorrowedFd<'_>,
        off: u64,
        runs: impl Iterator<Item = (usize, usize)>,
    ) -> io::Result<bool> {
        for (start, end) in runs {
            if !self.copy(file, off + start as u64, (end - start) as u64)? {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// Writes `bytes` into the pipe first (a header every batch starts with); a reader gone
    /// early is not an error.
    pub fn put(&self, mut bytes: &[u8]) -> io::Result<()> {
        while !bytes.is_empty() {
            match nix::unistd::write(&self.write, bytes) {
                Ok(n) => bytes = &bytes[n..],
                Err(Errno::EAGAIN) => wait_writable(self.write.as_fd())?,
                Err(Errno::EINTR) => {}
                Err(Errno::EPIPE) => return Ok(()),
                Err(e) => return Err(e.into()),
            }
        }
        Ok(())
    }

    /// Copies `len` bytes at `off` of `file` into the pipe; false when the reader went away.
    fn copy(&self, file: BorrowedFd<'_>, mut off: u64, len: u64) -> io::Result<bool> {
        let end = off + len;
        let mut pause = PAUSE_MIN * 4;
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
                Err(Errno::EAGAIN) => {
                    std::thread::sleep(pause);
                    let queued = queued(self.write.as_fd());
                    if queued > self.capacity / 4 * 3 {
                        if pause == PAUSE_MAX {
                            wait_writable(self.write.as_fd())?;
                        }
                        pause = (pause * 2).min(PAUSE_MAX);
                    } else if queued < self.capacity / 4 {
                        pause = (pause / 2).max(PAUSE_MIN);
                    }
                }
                Err(Errno::EINTR) => {}
                Err(Errno::EPIPE) => return Ok(false),
                Err(e) => return Err(e.into()),
            }
        }
        Ok(true)
    }
}

/// Bytes waiting in the pipe of `fd` (0 when the kernel will not say).
fn queued(fd: BorrowedFd<'_>) -> u64 {
    let mut n: libc::c_int = 0;
    // SAFETY: FIONREAD writes one int through the pointer, which points at `n`.
    let r = unsafe { libc::ioctl(fd.as_raw_fd(), libc::FIONREAD, &mut n) };
    if r < 0 { 0 } else { n.max(0) as u64 }
}

/// Blocks until the pipe of `fd` takes a write, or its reader is gone.
fn wait_writable(fd: BorrowedFd<'_>) -> io::Result<()> {
    let mut pfd = [PollFd::new(fd, PollFlags::POLLOUT)];
    loop {
        match poll(&mut pfd, PollTimeout::NONE) {
            Ok(_) => return Ok(()),
            Err(Errno::EINTR) => {}
            Err(e) => return Err(e.into()),
        }
    }
}
