//! How much of `frun xargs`' input its commands used: the input's reader records, per command
//! it cut, the input offset where that command's input ended; the run records the last command
//! it started. When the run stops early, [`Used::give_back`] moves a seekable input's offset
//! back to just after the input it used (one `lseek`), so that the next reader of the same
//! standard input gets the rest, as with xargs.
//!
//! It only keeps offsets and moves the input's offset once: it cuts nothing and runs nothing.
//!
//! The rule: the input of the last command started, and the next command's too: xargs reads
//! a command's input before it waits for a free slot, which is when it learns that a command
//! failed.

use std::fs::File;
use std::io::{self, Read};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

/// How many commands' offsets are kept: the reader waits rather than get further ahead of the
/// last command started.
const SLOTS: u64 = 1 << 14;
/// Commands past the last one started whose input counts as used.
const AHEAD: u64 = 1;

/// The offsets shared by the input's reader (the feeder) and the run.
pub struct Used {
    file: File,
    /// `ends[c % SLOTS]`: where command `c`'s input ended (1-based; from where reading began).
    ends: Box<[AtomicU64]>,
    /// How many commands' ends are recorded.
    written: AtomicU64,
    /// The highest command started (1-based; 0: none).
    started: AtomicU64,
    /// Set once the run gave the input back: the reader reads no more.
    closed: AtomicBool,
    /// The input can be given back (a file, not a pipe or a terminal): only then does the
    /// reader ever wait for the run.
    seekable: bool,
    /// The input's offset, from where reading began; held across each read and the seek.
    at: Mutex<u64>,
}

impl Used {
    /// Reads `file` (the input, at where reading begins).
    pub fn new(file: File) -> Used {
        let seekable = nix::unistd::lseek(&file, 0, nix::unistd::Whence::SeekCur).is_ok();
        Used {
            seekable,
            file,
            ends: (0..SLOTS).map(|_| AtomicU64::new(0)).collect(),
            written: AtomicU64::new(0),
            started: AtomicU64::new(0),
            closed: AtomicBool::new(false),
            at: Mutex::new(0),
        }
    }

    /// The input, read through this (it ends once the input was given back).
    pub fn reader(&self) -> Reader<'_> {
        Reader(self)
    }

    /// Whether the reader may record the next command's end without waiting for the run.
    pub fn has_room(&self) -> bool {
        let next = self.written.load(Ordering::Relaxed) + 1;
        !self.seekable
            || next < self.started.load(Ordering::Acquire) + AHEAD + SLOTS
            || self.closed.load(Ordering::Acquire)
    }

    /// Waits until the run has started enough commands to record the next end (or has ended).
    /// The commands it needs must already be written where the run reads them.
    pub fn wait_room(&self) {
        while !self.has_room() {
            std::thread::sleep(Duration::from_millis(1));
        }
    }

    /// The next command's input ended at `at`.
    pub fn command_ended(&self, at: u64) {
        let c = self.written.load(Ordering::Relaxed) + 1;
        self.ends[(c % SLOTS) as usize].store(at, Ordering::Relaxed);
        self.written.store(c, Ordering::Release);
    }

    /// The reader stopped `unread` bytes past the input it used (at the end-of-file string, or
    /// an error): they go back to the input, unless the run already gave it back.
    pub fn unread(&self, unread: u64) {
        let mut at = self.at.lock().unwrap_or_else(|e| e.into_inner());
        if unread == 0 || self.closed.load(Ordering::Acquire) {
            return;
        }
        if seek_back(&self.file, unread) {
            *at -= unread.min(*at);
        }
    }

    /// Command `n` (0-based) started.
    pub fn started(&self, n: u64) {
        self.started.fetch_max(n + 1, Ordering::AcqRel);
    }

    /// The run stopped early: the input's offset goes back to just after the input it used
    /// (a pipe cannot go back), and the reader reads no more.
    pub fn give_back(&self) {
        // A pipe or a terminal could keep the reader waiting in its read: never wait for one.
        if !self.seekable {
            self.closed.store(true, Ordering::Release);
            return;
        }
        let mut at = self.at.lock().unwrap_or_else(|e| e.into_inner());
        self.closed.store(true, Ordering::Release);
        let upto = self.started.load(Ordering::Acquire) + AHEAD;
        let written = self.written.load(Ordering::Acquire);
        let target = if upto <= written && upto + SLOTS > written {
            self.ends[(upto % SLOTS) as usize].load(Ordering::Relaxed)
        } else {
            // Not cut yet: the input's end, or what was read so far.
            *at
        };
        if target < *at && seek_back(&self.file, *at - target) {
            *at = target;
        }
    }
}

/// Moves `file`'s offset `by` bytes back; false when it cannot (a pipe says ESPIPE).
fn seek_back(file: &File, by: u64) -> bool {
    let back = -(i64::try_from(by).unwrap_or(i64::MAX));
    nix::unistd::lseek(file, back, nix::unistd::Whence::SeekCur).is_ok()
}

/// Reads the input, counting what it read; an input given back reads as ended.
pub struct Reader<'a>(&'a Used);

impl Read for Reader<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let mut at = self.0.at.lock().unwrap_or_else(|e| e.into_inner());
        if self.0.closed.load(Ordering::Acquire) {
            return Ok(0);
        }
        let n = (&self.0.file).read(buf)?;
        *at += n as u64;
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Seek, Write};

    fn file(bytes: &[u8]) -> File {
        let mut f = tempfile::tempfile().unwrap();
        f.write_all(bytes).unwrap();
        f.rewind().unwrap();
        f
    }

    fn offset(u: &Used) -> u64 {
        (&u.file).stream_position().unwrap()
    }

    #[test]
    fn gives_back_after_the_next_command() {
        let u = Used::new(file(b"1\n2\n3\n4\n5\n"));
        let mut buf = [0u8; 64];
        assert_eq!(u.reader().read(&mut buf).unwrap(), 10);
        for end in [2, 4, 6, 8, 10] {
            u.command_ended(end);
        }
        u.started(2);
        u.give_back();
        assert_eq!(offset(&u), 8);
        assert_eq!(u.reader().read(&mut buf).unwrap(), 0);
    }

    #[test]
    fn nothing_started_counts_the_first_command_read() {
        let u = Used::new(file(b"1\n2\n"));
        let mut buf = [0u8; 64];
        assert_eq!(u.reader().read(&mut buf).unwrap(), 4);
        u.command_ended(2);
        u.command_ended(4);
        u.give_back();
        assert_eq!(offset(&u), 2);
    }

    #[test]
    fn waits_for_room_only_far_ahead() {
        let u = Used::new(file(b""));
        for i in 0..SLOTS {
            assert!(u.has_room());
            u.command_ended(i);
        }
        assert!(!u.has_room());
        u.started(0);
        assert!(u.has_room());
    }
}
