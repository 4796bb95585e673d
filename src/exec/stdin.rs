//! The stdin backend's plumbing: a fresh pipe per batch whose read end becomes the child's stdin
//! (through a descriptor number the worker reserves, so the prepared spawn actions never change),
//! and a kernel-side copy of the batch's bytes from the spool into the write end.
//!
//! It moves bytes only; which bytes, and what the child does with them, is not its business.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

/// A descriptor number reserved for the child's stdin. Between batches it holds /dev/null.
pub struct StdinSlot {
    slot: OwnedFd,
    idle: OwnedFd,
}

/// The write end of one batch's pipe.
pub struct Feed {
    write: OwnedFd,
}

fn cvt(r: libc::c_int) -> io::Result<libc::c_int> {
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(r)
    }
}

impl StdinSlot {
    pub fn new() -> io::Result<StdinSlot> {
        let idle = OwnedFd::from(std::fs::File::open("/dev/null")?);
        // SAFETY: duplicates a descriptor we own; the result is owned by the new OwnedFd.
        let slot = unsafe {
            OwnedFd::from_raw_fd(cvt(libc::fcntl(
                idle.as_raw_fd(),
                libc::F_DUPFD_CLOEXEC,
                3,
            ))?)
        };
        Ok(StdinSlot { slot, idle })
    }

    /// The descriptor the spawn actions put on the child's fd 0.
    pub fn fd(&self) -> RawFd {
        self.slot.as_raw_fd()
    }

    /// Makes a new pipe, puts its read end in the slot and returns the write end.
    pub fn open(&self) -> io::Result<Feed> {
        let mut fds = [0; 2];
        // SAFETY: pipe2 fills two descriptors, which become owned right below.
        cvt(unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) })?;
        // SAFETY: both descriptors were just created and are owned by nobody else.
        let (read, write) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
        // A bigger pipe means fewer wake-ups; refusal (the per-user pipe limit) is harmless.
        // SAFETY: fcntl on a descriptor we own.
        unsafe { libc::fcntl(write.as_raw_fd(), libc::F_SETPIPE_SZ, 1 << 20) };
        // SAFETY: dup3 onto the slot number we own; the old description there is released.
        cvt(unsafe { libc::dup3(read.as_raw_fd(), self.fd(), libc::O_CLOEXEC) })?;
        Ok(Feed { write })
    }

    /// Drops frun's copy of the read end once the child has it, so a child that exits without
    /// reading makes writes fail with EPIPE instead of blocking.
    pub fn release(&self) -> io::Result<()> {
        // SAFETY: dup3 onto the slot number we own.
        cvt(unsafe { libc::dup3(self.idle.as_raw_fd(), self.fd(), libc::O_CLOEXEC) }).map(drop)
    }
}

impl Feed {
    /// Copies `len` bytes at file offset `off` of `file` into the pipe, then closes it. A reader
    /// that went away early (EPIPE) is not an error; a file that ends before `off + len` (it
    /// shrank) is `UnexpectedEof`.
    pub fn send(self, file: RawFd, mut off: u64, len: u64) -> io::Result<()> {
        let end = off + len;
        while off < end {
            let mut o = off as libc::off_t;
            let want = (end - off).min(1 << 30) as usize;
            // SAFETY: sendfile between two valid descriptors with a live offset pointer.
            let n = unsafe { libc::sendfile(self.write.as_raw_fd(), file, &mut o, want) };
            if n > 0 {
                off = o as u64;
                continue;
            }
            let e = io::Error::last_os_error();
            match e.raw_os_error() {
                _ if n == 0 => {
                    return Err(io::Error::new(
                        io::ErrorKind::UnexpectedEof,
                        "input file shrank",
                    ));
                }
                Some(libc::EINTR) => {}
                Some(libc::EPIPE) => return Ok(()),
                _ => return Err(e),
            }
        }
        Ok(())
    }
}
