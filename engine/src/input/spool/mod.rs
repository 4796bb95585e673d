//! The spool: every input byte, once, at a fixed address for the whole run.
//!
//! A regular file is mapped in place (no copy). Anything else (a pipe, a terminal, a socket) is
//! read into an anonymous memory file (memfd) mapped `MAP_SHARED`, so forked workers see the same
//! bytes. A pipe is moved into the memfd by `splice` (one copy in the kernel, straight into the
//! memfd's pages), not `read` through the mapping: a `read` into pages not yet there faults on
//! each one while it holds the pipe's lock, and the writer spins on that lock meanwhile. Offsets are input offsets. The spool never looks for records: that is `scan`'s job.
//! Only the [`Ingest`] half writes; readers only look at ranges that were already filled.
//!
//! # A mapped file belongs to someone else
//!
//! frun never writes the input, but a mapped file's owner may change it while frun runs, and
//! the mapping shows every change. The contract:
//! - The input is the file's bytes up to the size it had when frun opened it. A file that grows
//!   meanwhile (appended to) is read only up to that size; the rest is not part of the run.
//! - A file that **shrinks** (truncated: logrotate's `copytruncate`) is detected, not a crash.
//!   Reading a page past the new end would raise SIGBUS; while a file is mapped, a handler
//!   (see `guard`) turns that into zero pages and a flag. A read of the page holding the new
//!   end sees zeros past it without a fault: [`Spool::intact`] compares the file's size with
//!   the end of what was read. Stages call [`Spool::shrank`] or [`Spool::intact`] once per
//!   batch, after reading its bytes and before running or recording it, and stop the run when
//!   the input shrank: no batch holding bytes from past the new end runs or is recorded done.
//! - A file **rewritten in place** (the same bytes changed, or truncated and written again past
//!   where frun reads) cannot be told from the original: frun reads whatever is there when it
//!   reads it. Such a file must be copied before it is given to frun.

use std::fs::File;
use std::io;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd, RawFd};
use std::os::unix::fs::FileTypeExt;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use nix::errno::Errno;
use nix::fcntl::{FallocateFlags, FcntlArg, fallocate, fcntl};
use nix::sys::memfd::{MFdFlags, memfd_create};
use nix::sys::mman::{MapFlags, MmapAdvise, ProtFlags, madvise};

use crate::sys::Mapping;
use nix::sys::stat::fstat;
use nix::unistd::{Whence, ftruncate, lseek};

mod guard;

/// Address space reserved for a streamed input; tried in this order until the kernel agrees.
const STREAM_RESERVE: [u64; 5] = [1 << 44, 1 << 40, 1 << 36, 1 << 32, 1 << 30];
/// The memfd grows in steps of this size (one `ftruncate` per step, not per read).
const GROW_STEP: u64 = 64 << 20;
/// Largest single `read` from a stream.
const READ_CHUNK: usize = 4 << 20;

/// The shared, read-only view of the input bytes.
pub struct Spool {
    /// The mapping of `file` (the whole input file, or the address space reserved for a stream).
    map: Mapping,
    /// Where the input starts inside the mapping (a partly read stdin file).
    offset: usize,
    /// The mapped file (the input file, or the memfd of a stream), for kernel-side copies.
    file: OwnedFd,
    /// The file is our memfd (freed by punching holes), not the user's file.
    stream: bool,
    /// Bytes of input available at `base` (grows while a stream is read).
    filled: AtomicU64,
    /// A mapped file: catches reads past its end once it shrank (dropped before unmapping).
    guard: Option<guard::Guard>,
    /// The mapped file was seen to be shorter than what was read from it.
    shrank: AtomicBool,
}

// Shared by every thread (the mapping is Send and Sync, handing out only its address): readers
// only access ranges below `filled`, which the single writer never touches again (a mapped
// file's owner may, which only changes the bytes read: see the module docs); `filled` is
// published with release/acquire ordering. `bytes` and `Ingest::fill` rely on this.

/// Where the input bytes come from, and the writer half of the spool.
pub struct Ingest {
    source: Option<File>,
    /// Bytes of the stream's memfd (the Spool's file) sized so far; it grows in steps.
    sized: u64,
    capacity: u64,
    eof: bool,
    /// A read that failed in [`Ingest::read_ready`]: the next `fill` returns it, so the error
    /// reaches whoever reports read errors (some, such as a reset connection, are given once).
    failed: Option<io::Error>,
    /// Called with the spool's base address and each new range of the memfd before any byte
    /// is written there (NUMA binding of chunks before first touch).
    binder: Option<Binder>,
    /// The source is a pipe: [`Ingest::fill`] splices it into the memfd (false after a splice
    /// the kernel refused, then it reads).
    splice: bool,
}

/// See [`Ingest::set_binder`].
pub type Binder = Box<dyn FnMut(*mut u8, u64, u64) + Send>;

/// Result of waiting for input.
#[derive(Debug, PartialEq, Eq)]
pub enum Fill {
    /// New bytes arrived.
    Data,
    /// The input ended.
    Eof,
    /// Nothing arrived before the deadline.
    Timeout,
    /// Another watched descriptor became ready.
    Woken(usize),
}

fn map(len: usize, prot: ProtFlags, flags: MapFlags, fd: BorrowedFd<'_>) -> io::Result<Mapping> {
    Mapping::of_file(len, prot, flags, fd, 0)
}

/// Opens the spool over `input`: a regular file is mapped in place, anything else is streamed.
pub fn open(input: File) -> io::Result<(Spool, Ingest)> {
    let meta = input.metadata()?;
    if meta.file_type().is_file() && meta.len() > 0 {
        let size = meta.len();
        // Where reading would start (a shared stdin may already have been partly consumed).
        let pos = lseek(&input, 0, Whence::SeekCur).unwrap_or(0);
        let pos = (pos.max(0) as u64).min(size);
        let map_base = map(
            size as usize,
            ProtFlags::PROT_READ,
            MapFlags::MAP_PRIVATE,
            input.as_fd(),
        )?;
        // Without a guard a shrinking file would kill frun: read it like a stream instead.
        let Some(guard) = guard::Guard::register(map_base.as_ptr(), size as usize) else {
            // The mapping just made is unmapped as it drops here.
            return open_stream(input);
        };
        // SAFETY: an advisory hint on our own mapping, whole: it changes no byte of it.
        let _ = unsafe {
            madvise(
                map_base.base().cast(),
                size as usize,
                MmapAdvise::MADV_SEQUENTIAL,
            )
        };
        // Consume the input like a reader would, so a caller sharing this stdin sees it read.
        let _ = lseek(&input, size as i64, Whence::SeekSet);
        let spool = Spool {
            map: map_base,
            offset: pos as usize,
            filled: AtomicU64::new(size - pos),
            file: OwnedFd::from(input),
            stream: false,
            guard: Some(guard),
            shrank: AtomicBool::new(false),
        };
        let ingest = Ingest {
            source: None,
            sized: 0,
            capacity: size - pos,
            eof: true,
            failed: None,
            binder: None,
            splice: false,
        };
        return Ok((spool, ingest));
    }
    open_stream(input)
}

/// Opens the spool over `input` read as a stream into a memfd.
fn open_stream(input: File) -> io::Result<(Spool, Ingest)> {
    let memfd = memfd_create(c"frun-spool", MFdFlags::MFD_CLOEXEC)?;
    let mut last_err = None;
    for reserve in STREAM_RESERVE {
        match map(
            reserve as usize,
            ProtFlags::PROT_READ | ProtFlags::PROT_WRITE,
            MapFlags::MAP_SHARED | MapFlags::MAP_NORESERVE,
            memfd.as_fd(),
        ) {
            Ok(base) => {
                // A bigger pipe buffer means fewer reads; refusal is harmless.
                let _ = fcntl(&input, FcntlArg::F_SETPIPE_SZ(1 << 20));
                let splice = input.metadata().is_ok_and(|m| m.file_type().is_fifo());
                let spool = Spool {
                    map: base,
                    offset: 0,
                    filled: AtomicU64::new(0),
                    file: memfd,
                    stream: true,
                    guard: None,
                    shrank: AtomicBool::new(false),
                };
                let ingest = Ingest {
                    source: Some(input),
                    sized: 0,
                    capacity: reserve,
                    eof: false,
                    failed: None,
                    binder: None,
                    splice,
                };
                return Ok((spool, ingest));
            }
            Err(e) => last_err = Some(e),
        }
    }
    Err(last_err.expect("at least one reservation was tried"))
}

impl Spool {
    /// Bytes available so far.
    pub fn filled(&self) -> u64 {
        self.filled.load(Ordering::Acquire)
    }

    /// The file holding the input and the file offset of input offset `at`, for kernel-side
    /// copies (`sendfile`) of filled ranges.
    pub fn file_at(&self, at: u64) -> (BorrowedFd<'_>, u64) {
        (self.file.as_fd(), self.offset as u64 + at)
    }

    /// Frees the memory of input `[from, to)`, which no stage will read again; returns the
    /// offset freed up to. Only whole pages are freed: a pipe may still reference a page that
    /// `sendfile` handed it, and freeing part of a page would zero it under the reader.
    pub fn release(&self, from: u64, to: u64) -> u64 {
        const PAGE: u64 = 4096;
        let base = self.offset as u64;
        let start = (base + from).div_ceil(PAGE) * PAGE;
        let end = (base + to) / PAGE * PAGE;
        if end <= start {
            return from;
        }
        // [start, end) lies inside our mapping and the file; nobody reads it again (the
        // caller's contract), so dropping its pages cannot change what a reader sees.
        if self.stream {
            let _ = fallocate(
                &self.file,
                FallocateFlags::FALLOC_FL_PUNCH_HOLE | FallocateFlags::FALLOC_FL_KEEP_SIZE,
                start as libc::off_t,
                (end - start) as libc::off_t,
            );
        }
        // Drops the mapping's page-table entries too; kernels that reclaim empty page tables
        // (6.14+) then free those the call covers whole, so a long stream does not keep 2 MiB of
        // them per GiB. The call starts at the 2 MiB boundary below: what lies between was
        // dropped before (or is not input), so dropping it again is harmless.
        const TABLE_SPAN: usize = 2 << 20;
        let first = self.map.as_ptr() as usize;
        let from = ((first + start as usize) / TABLE_SPAN * TABLE_SPAN).max(first);
        let at = self.map.as_ptr().wrapping_add(from - first).cast();
        // SAFETY: [from, first + end) lies inside our mapping: `from` is not below its start,
        // and what it covers is no one's any more (see above).
        let _ = unsafe {
            madvise(
                NonNull::new(at).expect("inside the mapping"),
                first + end as usize - from,
                MmapAdvise::MADV_DONTNEED,
            )
        };
        end - base
    }

    /// True once the mapped input file was seen to shrink (a read past its new end, or
    /// [`Spool::intact`] or [`Spool::mark_shrank`] said so): bytes read from the spool since may
    /// be zeros instead of input. Never true for a stream. One atomic load: call it per batch.
    pub fn shrank(&self) -> bool {
        self.shrank.load(Ordering::SeqCst) || self.guard.as_ref().is_some_and(|g| g.faulted())
    }

    /// Records that the input file shrank (a copy from it came up short).
    pub fn mark_shrank(&self) {
        if !self.stream {
            self.shrank.store(true, Ordering::SeqCst);
        }
    }

    /// True when the bytes read so far up to input offset `end` were the file's: it has not
    /// shrunk below `end` (one `fstat` for a mapped file; a stream is always intact). Call it
    /// after reading the bytes: a file that shrank before the read is then caught, also where
    /// the read saw the zeros past the new end in the same page, which raise no fault.
    pub fn intact(&self, end: u64) -> bool {
        if self.stream {
            return true;
        }
        if self.shrank() {
            return false;
        }
        match self.file_size() {
            Some(now) if now < self.offset as u64 + end => {
                self.mark_shrank();
                false
            }
            _ => true,
        }
    }

    /// A mapped file's size when frun opened it and now (None: unknown), for messages.
    pub fn sizes(&self) -> (u64, Option<u64>) {
        (self.map.len() as u64, self.file_size())
    }

    fn file_size(&self) -> Option<u64> {
        fstat(&self.file).ok().map(|st| st.st_size as u64)
    }

    /// The input bytes `[start, end)`; `end` must not exceed [`Spool::filled`]. For a mapped
    /// file, these are whatever the file holds there now (see the module docs; once it shrank,
    /// zeros past its end, and [`Spool::shrank`] says so).
    pub fn bytes(&self, start: u64, end: u64) -> &[u8] {
        assert!(
            start <= end && end <= self.filled(),
            "range beyond filled input"
        );
        // SAFETY: [start, end) lies inside the filled part of the mapping, which frun never
        // writes again and which lives as long as `self`. A mapped file that shrinks cannot make
        // the read fault: the guard maps zero pages over what lies past its end.
        unsafe {
            std::slice::from_raw_parts(
                self.map.as_ptr().add(self.offset + start as usize),
                (end - start) as usize,
            )
        }
    }
}

impl Drop for Spool {
    fn drop(&mut self) {
        // Unguarded first: a fault at this address range is no longer ours once it is unmapped
        // (the mapping is unmapped as the fields drop, after this).
        self.guard = None;
    }
}

impl Ingest {
    /// True once the input has ended.
    pub fn at_eof(&self) -> bool {
        self.eof
    }

    /// The input descriptor, for readiness checks (None once everything is in memory).
    pub fn fd(&self) -> Option<RawFd> {
        self.source.as_ref().map(|f| f.as_raw_fd())
    }

    /// True when a read would not block right now.
    pub fn ready_now(&self) -> bool {
        match self.fd() {
            None => true,
            Some(fd) => poll_in(&[fd], Some(0)).is_some(),
        }
    }

    /// Reads while a read would not wait, until the input ends or the spool holds more than
    /// `up_to` bytes: a stream that has ended by now (`echo x | frun …`) is then all in memory.
    /// A read that fails ends this, and the next [`Ingest::fill`] returns its error.
    pub fn read_ready(&mut self, spool: &Spool, up_to: u64) {
        while self.failed.is_none()
            && self.source.is_some()
            && spool.filled() <= up_to
            && self.ready_now()
        {
            if let Err(e) = self.fill(spool, &[], None) {
                self.failed = Some(e);
            }
        }
    }

    /// Has `bind(base, from, to)` called for every stretch of a streamed input's memory before
    /// it is first written (a mapped file's pages are the page cache's: it is never called).
    pub fn set_binder(&mut self, bind: Binder) {
        self.binder = Some(bind);
    }

    /// Waits until input arrives, one of `extra` fds is readable, or `timeout` passes; then
    /// reads what is there into the spool.
    pub fn fill(
        &mut self,
        spool: &Spool,
        extra: &[RawFd],
        timeout: Option<std::time::Duration>,
    ) -> io::Result<Fill> {
        if let Some(e) = self.failed.take() {
            return Err(e);
        }
        let Some(fd) = self.fd() else {
            return Ok(Fill::Eof);
        };
        if !extra.is_empty() || timeout.is_some() {
            let mut fds = Vec::with_capacity(extra.len() + 1);
            fds.push(fd);
            fds.extend_from_slice(extra);
            match poll_in(
                &fds,
                timeout.map(|t| t.as_millis().min(i32::MAX as u128) as i32),
            ) {
                None => return Ok(Fill::Timeout),
                Some(0) => {}
                Some(i) => return Ok(Fill::Woken(i - 1)),
            }
        }
        let filled = spool.filled();
        if filled == self.capacity {
            return Err(io::Error::other(format!(
                "input larger than the {} GiB spool reservation",
                self.capacity >> 30
            )));
        }
        let want = (self.capacity - filled).min(READ_CHUNK as u64);
        if filled + want > self.sized {
            assert!(spool.stream, "only a stream's memfd grows");
            let new_size = (filled + want)
                .max(self.sized + GROW_STEP)
                .min(self.capacity);
            ftruncate(&spool.file, new_size as i64)?;
            if let Some(bind) = &mut self.binder {
                bind(spool.map.as_ptr(), self.sized, new_size);
            }
            self.sized = new_size;
        }
        let n = self.read_into(spool, filled, want as usize)?;
        if n == 0 {
            self.eof = true;
            self.source = None;
            return Ok(Fill::Eof);
        }
        spool.filled.store(filled + n as u64, Ordering::Release);
        Ok(Fill::Data)
    }

    /// Moves up to `want` bytes of the source to input offset `filled` of the memfd (sized up to
    /// there); returns how many (0: the input ended).
    fn read_into(&mut self, spool: &Spool, filled: u64, want: usize) -> io::Result<usize> {
        let source = self
            .source
            .as_ref()
            .expect("a source until the input ended");
        while self.splice {
            let mut at = filled as libc::loff_t;
            // The kernel writes the memfd at [filled, filled + n), which no reader looks at
            // before `filled` moves.
            let moved = nix::fcntl::splice(
                source,
                None,
                &spool.file,
                Some(&mut at),
                want,
                nix::fcntl::SpliceFFlags::empty(),
            );
            let err = match moved {
                Ok(n) => return Ok(n),
                Err(e) => e,
            };
            match err {
                Errno::EINTR => {}
                // A kernel or file system that cannot splice here: read instead (nothing moved).
                Errno::EINVAL | Errno::ENOSYS => self.splice = false,
                e => return Err(e.into()),
            }
        }
        // SAFETY: [filled, filled + want) lies inside the mapping and the sized part of the
        // memfd (initialised: zeros or earlier bytes); only this writer touches it, since no
        // reader looks past `filled`.
        let dest = unsafe {
            std::slice::from_raw_parts_mut(spool.map.as_ptr().add(filled as usize), want)
        };
        loop {
            match nix::unistd::read(source, dest) {
                Ok(n) => return Ok(n),
                Err(Errno::EINTR) => continue,
                Err(e) => return Err(e.into()),
            }
        }
    }
}

/// Polls `fds` for readability; returns the index of the first ready one, or None on timeout.
/// Plain descriptor numbers: -1 is a slot with nothing to watch.
pub fn poll_in(fds: &[RawFd], timeout_ms: Option<i32>) -> Option<usize> {
    let mut pfds: Vec<libc::pollfd> = fds
        .iter()
        .map(|&fd| libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        })
        .collect();
    loop {
        return match crate::sys::poll_numbers(&mut pfds, timeout_ms.unwrap_or(-1)) {
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(_) => Some(0),
            Ok(0) => None,
            Ok(_) => pfds.iter().position(|p| p.revents != 0),
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    /// A mapped file of `len` bytes (`0..=250` repeated) and its path.
    fn mapped(len: usize) -> (tempfile::NamedTempFile, Vec<u8>, Spool) {
        let content: Vec<u8> = (0..len).map(|i| (i % 251) as u8).collect();
        let mut f = tempfile::NamedTempFile::new().unwrap();
        f.write_all(&content).unwrap();
        let (spool, _) = open(File::open(f.path()).unwrap()).unwrap();
        assert!(spool.guard.is_some(), "a regular file is mapped in place");
        (f, content, spool)
    }

    #[test]
    fn a_file_that_shrinks_reads_as_zeros_past_its_end_and_says_so() {
        let (f, content, spool) = mapped(5 * 4096 + 100);
        assert!(!spool.shrank() && spool.intact(content.len() as u64));
        let cut = 2 * 4096 + 10;
        f.as_file().set_len(cut as u64).unwrap();
        // The page holding the new end: zeros past it, no fault, only the size tells.
        let head = spool.bytes(0, 3 * 4096).to_vec();
        assert_eq!(head[..cut], content[..cut]);
        assert!(head[cut..].iter().all(|&b| b == 0));
        assert!(spool.intact(cut as u64));
        assert!(!spool.intact(cut as u64 + 1));
        assert!(spool.shrank(), "once seen, it stays shrunk");
        assert!(!spool.intact(0));
        assert_eq!(spool.sizes(), (content.len() as u64, Some(cut as u64)));
        // Past it: the read faults, and sees zeros.
        let (f2, content2, spool2) = mapped(4 * 4096);
        f2.as_file().set_len(4096).unwrap();
        assert!(!spool2.shrank());
        let all = spool2.bytes(0, content2.len() as u64);
        assert_eq!(all[..4096], content2[..4096]);
        assert!(all[4096..].iter().all(|&b| b == 0));
        assert!(spool2.shrank(), "the fault was noticed");
        assert!(!spool2.intact(1));
    }

    /// A SIGBUS outside every guarded mapping still kills the process, as without the guard:
    /// checked in a copy of this test binary.
    #[test]
    fn a_sigbus_outside_the_input_still_kills() {
        const CHILD: &str = "FRUN_TEST_SIGBUS_CHILD";
        if std::env::var_os(CHILD).is_some() {
            let (_f, _content, _spool) = mapped(3 * 4096);
            let mut other = tempfile::NamedTempFile::new().unwrap();
            other.write_all(&[7u8; 3 * 4096]).unwrap();
            let len = 3 * 4096;
            let p = map(
                len,
                ProtFlags::PROT_READ,
                MapFlags::MAP_PRIVATE,
                other.as_file().as_fd(),
            )
            .unwrap();
            other.as_file().set_len(0).unwrap();
            // SAFETY: reads inside a live mapping whose file shrank: faults with SIGBUS.
            let b = unsafe { std::ptr::read_volatile(p.as_ptr().add(4096)) };
            println!("survived a SIGBUS outside the input: read {b}");
            std::process::exit(0);
        }
        let me = std::env::current_exe().unwrap();
        let st = std::process::Command::new(me)
            .args([
                "--exact",
                "input::spool::tests::a_sigbus_outside_the_input_still_kills",
                "--test-threads=1",
            ])
            .env(CHILD, "1")
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .status()
            .unwrap();
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(st.signal(), Some(libc::SIGBUS), "{st:?}");
    }

    /// A stream written in small pieces ends up in the spool byte for byte: a pipe (moved by
    /// `splice`) and a socket (read through the mapping), across several growth steps.
    #[test]
    fn a_stream_in_many_pieces_is_spooled_byte_exact() {
        let content: Vec<u8> = (0..(GROW_STEP as usize + 3 * 4096 + 7))
            .map(|i| (i * 7 % 251) as u8)
            .collect();
        let (pipe_read, pipe_write) = nix::unistd::pipe().unwrap();
        let (sock_read, sock_write) = std::os::unix::net::UnixStream::pair().unwrap();
        let sources = [
            (File::from(pipe_read), File::from(pipe_write), true),
            (
                File::from(OwnedFd::from(sock_read)),
                File::from(OwnedFd::from(sock_write)),
                false,
            ),
        ];
        for (read, mut write, pipe) in sources {
            let (spool, mut ingest) = open(read).unwrap();
            assert_eq!(ingest.splice, pipe);
            let data = content.clone();
            let writer = std::thread::spawn(move || {
                for piece in data.chunks(65_521) {
                    write.write_all(piece).unwrap();
                }
            });
            while ingest.fill(&spool, &[], None).unwrap() == Fill::Data {}
            writer.join().unwrap();
            assert_eq!(ingest.splice, pipe, "the kernel took the splice");
            assert!(spool.bytes(0, spool.filled()) == content, "pipe: {pipe}");
        }
    }

    /// A connection reset by its peer reports ECONNRESET to one read only; the next read
    /// says end of input. A reset met while reading ahead must still reach the reader's
    /// next `fill`, or the input would look complete.
    #[test]
    fn a_read_that_fails_while_reading_ahead_is_returned_by_the_next_fill() {
        use nix::sys::socket::{setsockopt, sockopt::Linger};
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let mut peer = std::net::TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        let (ours, _) = listener.accept().unwrap();
        peer.write_all(b"a\nb\n").unwrap();
        // Linger 0: closing sends a reset instead of an orderly end.
        let reset = libc::linger {
            l_onoff: 1,
            l_linger: 0,
        };
        setsockopt(&peer, Linger, &reset).unwrap();
        drop(peer);
        let (spool, mut ingest) = open(File::from(OwnedFd::from(ours))).unwrap();
        // Let the reset arrive.
        poll_in(&[ingest.fd().unwrap()], Some(1000)).expect("readable");
        std::thread::sleep(std::time::Duration::from_millis(50));
        ingest.read_ready(&spool, 1024);
        let err = ingest
            .fill(&spool, &[], None)
            .expect_err("the reset is the next fill's");
        assert_eq!(err.raw_os_error(), Some(libc::ECONNRESET), "{err}");
    }
}
