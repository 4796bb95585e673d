//! Output: each batch's stdout is captured in its worker's memory file and emitted whole, in
//! completion order (buffered) or input order (`-k`), with kernel-side copies (`sendfile`) to
//! frun's stdout. `-u` bypasses capture entirely.
//!
//! Once a batch's output is out, it tells the checkpoint journal (emission order is only known
//! here), and with `-k` writes the batch's joblog line, so the log is in input order as GNU
//! Parallel keeps it. This module moves bytes from capture files to stdout and nothing else: it does not know
//! what a record is, and it never decides whether a batch succeeded.

use std::collections::BTreeMap;
use std::io;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd, RawFd};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};

use crate::journal::Journal;
use crate::output::joblog::Joblog;
use nix::errno::Errno;
use nix::fcntl::{FallocateFlags, fallocate};
use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
use nix::sys::memfd::{MFdFlags, memfd_create};
use nix::sys::sendfile::sendfile;
use nix::sys::stat::fstat;
use nix::sys::uio::pread;
use nix::unistd::{Whence, ftruncate, lseek};

/// `--line-buffer`: lines passed on at once longer than this widen the output, when it is a
/// pipe, to [`WIDE_PIPE`] (once per run; nothing happens where the system refuses).
const WIDEN_FOR: usize = 1 << 20;
const WIDE_PIPE: libc::c_int = 1 << 20;

/// How batch output reaches stdout.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OrderMode {
    /// Each batch's output whole, in completion order.
    Buffered,
    /// Each batch's output whole, in input order.
    Ordered,
    /// Commands write straight to stdout.
    Unbuffered,
}

/// One worker's capture file: children write their stdout here, batch after batch.
pub struct Capture {
    fd: OwnedFd,
    /// Batches written here whose bytes were not emitted yet.
    held: AtomicU64,
}

/// A batch whose outcome is final, as a worker hands it to the emitter.
pub struct Finished {
    /// The batch's place in input order.
    pub seq: u64,
    /// Its output (None: the batch produced none, or it was given up).
    pub piece: Option<Piece>,
    /// The input it completed.
    pub done: DoneSet,
    /// A command of the batch exited non-zero (and was not retried).
    pub failed: bool,
    /// Its joblog line, written once the output is out (in input order with `-k`).
    pub log: Option<Vec<u8>>,
}

/// A finished batch's output: `[off, off + len)` of a capture file, its last `stderr` bytes
/// for frun's stderr (a job's own stderr, where it is grouped with its stdout), the rest for
/// stdout.
pub struct Piece {
    /// The capture file that holds the bytes.
    pub capture: Arc<Capture>,
    /// Where they start in it.
    pub off: u64,
    /// How many bytes.
    pub len: u64,
    /// How many of them, at the end, go to stderr.
    pub stderr: u64,
}

/// Why emitting stopped.
#[derive(Debug)]
pub enum EmitError {
    /// The reader of stdout went away (EPIPE).
    Closed,
    /// Writing failed otherwise.
    Io(io::Error),
    /// The joblog could not be written (the message says which and why).
    Joblog(String),
}

impl Capture {
    /// A new, empty capture file (a memfd: it goes away with its last descriptor).
    pub fn new() -> io::Result<Arc<Capture>> {
        Ok(Arc::new(Capture {
            fd: memfd_create(c"frun-out", MFdFlags::MFD_CLOEXEC)?,
            held: AtomicU64::new(0),
        }))
    }

    /// The descriptor children get as their stdout.
    pub fn fd(&self) -> RawFd {
        self.fd.as_raw_fd()
    }

    /// The capture file, borrowed.
    pub fn as_fd(&self) -> BorrowedFd<'_> {
        self.fd.as_fd()
    }

    /// Bytes written so far (the end of the last batch's output).
    pub fn size(&self) -> io::Result<u64> {
        Ok(fstat(&self.fd)?.st_size as u64)
    }

    /// Empties the file when nothing in it waits for emission; returns true if it did.
    ///
    /// Truncating to zero drops whole pages only, so bytes a pipe still references stay intact.
    pub fn reset_if_drained(&self) -> io::Result<bool> {
        if self.held.load(Ordering::Acquire) != 0 {
            return Ok(false);
        }
        // No child is running on it now.
        self.rewind_to(0)?;
        Ok(true)
    }

    /// Drops everything written at or after `off` (a failed attempt's partial output) and puts
    /// the write position back there. Bytes before `off` are not touched.
    pub fn discard_from(&self, off: u64) -> io::Result<()> {
        // No child is running on it now.
        self.rewind_to(off)
    }

    /// Cuts the file at `off` and puts the write position there.
    fn rewind_to(&self, off: u64) -> io::Result<()> {
        ftruncate(&self.fd, off as libc::off_t)?;
        lseek(&self.fd, off as libc::off_t, Whence::SeekSet)?;
        Ok(())
    }

    /// The bytes written at or after `off` (a finished attempt's output, to be tagged).
    pub fn read_from(&self, off: u64) -> io::Result<Vec<u8>> {
        let end = self.size()?;
        let mut out = vec![0; end.saturating_sub(off) as usize];
        let mut done = 0;
        while done < out.len() {
            match nix::sys::uio::pread(
                &self.fd,
                &mut out[done..],
                (off + done as u64) as libc::off_t,
            ) {
                Ok(0) => break,
                Ok(n) => done += n,
                Err(nix::errno::Errno::EINTR) => {}
                Err(e) => return Err(e.into()),
            }
        }
        out.truncate(done);
        Ok(out)
    }

    /// Appends all of `other`'s bytes at this file's write position (its end), copied in the
    /// kernel where it can; returns how many.
    pub fn append_all_of(&self, other: &Capture) -> io::Result<u64> {
        let len = other.size()?;
        let mut off: libc::off_t = 0;
        while (off as u64) < len {
            let want = (len - off as u64) as usize;
            match nix::fcntl::copy_file_range(&other.fd, Some(&mut off), &self.fd, None, want) {
                Ok(0) => return Err(io::Error::other("capture file shrank")),
                Ok(_) => {}
                Err(Errno::EINTR) => {}
                // Where the kernel cannot copy between them: through memory.
                Err(Errno::EXDEV | Errno::EINVAL | Errno::ENOSYS | Errno::EOPNOTSUPP) => {
                    let rest = other.read_from(off as u64)?;
                    self.append(&rest)?;
                    break;
                }
                Err(e) => return Err(e.into()),
            }
        }
        Ok(len)
    }

    /// Appends bytes (used by `--dry-run`, which writes instead of a child).
    pub fn append(&self, data: &[u8]) -> io::Result<()> {
        write_all(self.fd.as_fd(), data)
    }
}

/// Writes all of `data` to `fd`.
pub fn write_all(fd: BorrowedFd<'_>, mut data: &[u8]) -> io::Result<()> {
    while !data.is_empty() {
        match nix::unistd::write(fd, data) {
            Ok(n) => data = &data[n..],
            Err(Errno::EINTR) => {}
            Err(e) => return Err(e.into()),
        }
    }
    Ok(())
}

fn classify(e: io::Error) -> EmitError {
    if e.raw_os_error() == Some(libc::EPIPE) {
        EmitError::Closed
    } else {
        EmitError::Io(e)
    }
}

/// Copies `[off, off + len)` of `from` to `to`, kernel-side where the kernel allows it.
pub fn copy_range(
    to: BorrowedFd<'_>,
    from: BorrowedFd<'_>,
    off: u64,
    len: u64,
) -> Result<(), EmitError> {
    let end = off + len;
    let mut off = off;
    while off < end {
        let mut o = off as libc::off_t;
        let want = (end - off).min(1 << 30) as usize;
        match sendfile(to, from, Some(&mut o), want) {
            Ok(0) => return Err(EmitError::Io(io::Error::other("capture file shrank"))),
            Ok(_) => off = o as u64,
            Err(Errno::EINTR) => {}
            // Destinations sendfile cannot write to (O_APPEND files, some terminals).
            Err(Errno::EINVAL | Errno::ENOSYS | Errno::EOPNOTSUPP) => {
                return copy_range_slow(to, from, off, end);
            }
            Err(e) => return Err(classify(e.into())),
        }
    }
    Ok(())
}

fn copy_range_slow(
    to: BorrowedFd<'_>,
    from: BorrowedFd<'_>,
    mut off: u64,
    end: u64,
) -> Result<(), EmitError> {
    let mut buf = vec![0u8; 256 << 10];
    while off < end {
        let want = ((end - off) as usize).min(buf.len());
        let n = match pread(from, &mut buf[..want], off as libc::off_t) {
            // The file ended early; the error is the last one a call left (as it always was).
            Ok(0) => return Err(EmitError::Io(io::Error::last_os_error())),
            Ok(n) => n,
            Err(Errno::EINTR) => continue,
            Err(e) => return Err(EmitError::Io(e.into())),
        };
        write_all(to, &buf[..n]).map_err(classify)?;
        off += n as u64;
    }
    Ok(())
}

/// The input intervals a finished batch completed: usually all of it; less when parts of it
/// were given up (those are not recorded as done).
pub enum DoneSet {
    /// Nothing was completed (the whole batch was given up).
    None,
    /// One interval `[start, end)` of input offsets.
    One(u64, u64),
    /// Several intervals `[start, end)`, in input order.
    Many(Box<[(u64, u64)]>),
}

impl DoneSet {
    /// The set holding these intervals.
    pub fn of(parts: &[(u64, u64)]) -> DoneSet {
        match parts {
            [] => DoneSet::None,
            [(s, e)] => DoneSet::One(*s, *e),
            many => DoneSet::Many(many.into()),
        }
    }

    fn each(&self, mut f: impl FnMut(u64, u64)) {
        match self {
            DoneSet::None => {}
            DoneSet::One(s, e) => f(*s, *e),
            DoneSet::Many(v) => v.iter().for_each(|&(s, e)| f(s, e)),
        }
    }
}

struct Reorder {
    next: u64,
    held: BTreeMap<u64, Finished>,
    /// Stdout's byte count after everything emitted so far.
    written: u64,
    /// `--line-buffer`: the batch whose line is half out (a line too long to hold, passed on
    /// as it comes): other batches' lines wait for its end.
    mid_line: Option<u64>,
}

/// The emitter shared by all workers.
pub struct Output {
    mode: OrderMode,
    /// Where output goes: a task's results file (a copy of its descriptor), else `stdout`.
    file: Option<OwnedFd>,
    stdout: io::Stdout,
    state: Mutex<Reorder>,
    /// Signalled when a half-out line ends ([`Reorder::mid_line`]).
    line_ended: Condvar,
    /// Finished output waiting for an earlier batch (`-k`).
    held: AtomicU64,
    /// The output (when a pipe) was made [`WIDE_PIPE`] wide for a long line.
    widened: AtomicBool,
    journal: Option<Arc<Journal>>,
    /// `--joblog`: where finished batches' lines go.
    joblog: Option<Joblog>,
    /// What the output is, for messages ("standard output", a results directory's file).
    target: String,
}

impl Output {
    /// `file`: where output goes (None: frun's stdout). `stdout_base`: its byte count before
    /// this run's output. `target` names it, for messages.
    pub fn new(
        mode: OrderMode,
        (file, target): (Option<OwnedFd>, String),
        journal: Option<Arc<Journal>>,
        stdout_base: u64,
    ) -> Output {
        Output {
            target,
            mode,
            file,
            stdout: io::stdout(),
            state: Mutex::new(Reorder {
                next: 0,
                held: BTreeMap::new(),
                written: stdout_base,
                mid_line: None,
            }),
            line_ended: Condvar::new(),
            held: AtomicU64::new(0),
            widened: AtomicBool::new(false),
            journal,
            joblog: None,
        }
    }

    /// The output with `--joblog`'s lines going to `joblog`.
    pub fn with_joblog(self, joblog: Option<Joblog>) -> Output {
        Output { joblog, ..self }
    }

    /// Where joblog lines go, if anywhere.
    pub fn joblog(&self) -> Option<&Joblog> {
        self.joblog.as_ref()
    }

    /// True when a batch's joblog line travels with it ([`Finished::log`]) to be written in
    /// input order, rather than through [`Output::log`] as it finishes.
    pub fn orders_log(&self) -> bool {
        self.mode == OrderMode::Ordered && self.joblog.is_some()
    }

    /// Writes joblog lines now (a file's own lock keeps each whole; `--joblog -` goes to
    /// stdout between batches' output, never inside one).
    pub fn log(&self, lines: &[u8]) -> Result<(), EmitError> {
        match &self.joblog {
            Some(Joblog::Stdout) => {
                let mut st = self.state.lock().unwrap_or_else(|e| e.into_inner());
                self.log_held(&mut st.written, lines)
            }
            // A file's own lock keeps each line whole: the emitter's is not needed.
            _ => self.log_held(&mut 0, lines),
        }
    }

    /// [`Output::log`] under the emitter's lock (its count of stdout's bytes is `written`).
    fn log_held(&self, written: &mut u64, lines: &[u8]) -> Result<(), EmitError> {
        match &self.joblog {
            Some(Joblog::Stdout) => self
                .aside_held(written, io::stdout().as_fd(), lines)
                .map_err(joblog_on_stdout),
            Some(log) => log
                .write(lines)
                .map_err(|e| EmitError::Joblog(log.error(&e))),
            None => Ok(()),
        }
    }

    /// What the output goes to, for messages: "standard output", or the results file.
    pub fn target(&self) -> &str {
        &self.target
    }

    /// Tells the journal about a batch's input once its output is out: done, or, when its
    /// command failed, not done (see [`Journal::failed`]).
    fn record(&self, done: &DoneSet, written: Option<u64>, failed: bool) {
        if let Some(j) = &self.journal {
            if failed {
                done.each(|start, end| j.failed(start, end, written));
            } else {
                done.each(|start, end| j.done(start, end, written));
            }
        }
    }

    /// Records input that makes no output as done now (a record skipped as too long): the
    /// journal entry names the output written so far, so it claims no bytes of its own.
    pub fn record_skipped(&self, start: u64, end: u64) {
        let st = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let written = (self.mode != OrderMode::Unbuffered).then_some(st.written);
        self.record(&DoneSet::One(start, end), written, false);
    }

    /// Where the output goes (stdout, or a task's results file).
    pub fn fd(&self) -> BorrowedFd<'_> {
        match &self.file {
            Some(f) => f.as_fd(),
            None => self.stdout.as_fd(),
        }
    }

    /// Finished output held back behind an unfinished earlier batch (`-k`), in bytes.
    pub fn held_bytes(&self) -> u64 {
        self.held.load(Ordering::Relaxed)
    }

    /// True when children should write to a capture file (not `-u`).
    pub fn captures(&self) -> bool {
        self.mode != OrderMode::Unbuffered
    }

    /// Writes a piece's stdout part to the output and then its stderr part to stderr (a
    /// failure there is ignored: it never stops the run's output); returns the bytes that went
    /// to the output.
    fn emit(&self, piece: &Piece) -> Result<u64, EmitError> {
        let out = piece.len - piece.stderr;
        if out > 0 {
            copy_range(self.fd(), piece.capture.fd.as_fd(), piece.off, out)?;
        }
        if piece.stderr > 0 {
            let stderr = std::io::stderr();
            let _ = copy_range(
                stderr.as_fd(),
                piece.capture.fd.as_fd(),
                piece.off + out,
                piece.stderr,
            );
        }
        Ok(out)
    }

    /// Writes `bytes` (whole lines that are not a batch's output: `--joblog -`) to `fd`
    /// between batches' output, never inside one. Counted as output when `fd` is where output
    /// goes, so a resume's byte count stays right.
    pub fn write_aside(&self, fd: BorrowedFd<'_>, bytes: &[u8]) -> Result<(), EmitError> {
        let mut st = self.state.lock().unwrap_or_else(|e| e.into_inner());
        self.aside_held(&mut st.written, fd, bytes)
    }

    /// [`Output::write_aside`] under the emitter's lock (`written`: its count of the output's
    /// bytes).
    fn aside_held(
        &self,
        written: &mut u64,
        fd: BorrowedFd<'_>,
        bytes: &[u8],
    ) -> Result<(), EmitError> {
        write_all(fd, bytes).map_err(classify)?;
        if fd.as_raw_fd() == self.fd().as_raw_fd() {
            *written += bytes.len() as u64;
        }
        Ok(())
    }

    /// `--line-buffer`: writes whole lines of running batch `seq` to stdout now, after what
    /// `kept` holds of it (its capture file from that offset on, then dropped from there);
    /// false, writing nothing, when they must wait because an earlier batch is not out yet
    /// (`-k`). Once true for a batch, later lines of it may pass with `kept` None.
    pub fn pass_lines(
        &self,
        seq: u64,
        lines: &[u8],
        kept: Option<(&Capture, u64)>,
    ) -> Result<bool, EmitError> {
        let mut st = self.state.lock().unwrap_or_else(|e| e.into_inner());
        if self.mode == OrderMode::Ordered && st.next != seq {
            return Ok(false);
        }
        // Another batch's long line is half out: these lines go after its end.
        while st.mid_line.is_some_and(|m| m != seq) {
            st = self.line_ended.wait(st).unwrap_or_else(|e| e.into_inner());
        }
        if let Some((capture, from)) = kept {
            let end = capture.size().map_err(EmitError::Io)?;
            if end > from {
                // Copied, not sent: `sendfile` into a pipe may pass page references, and the
                // cut right after zeroes the part of the page at `from` in place (and later
                // lines are written over it) before the reader has read it.
                copy_range_slow(self.fd(), capture.fd.as_fd(), from, end)?;
                capture.discard_from(from).map_err(EmitError::Io)?;
                st.written += end - from;
            }
        }
        if lines.len() > WIDEN_FOR && !self.widened.swap(true, Ordering::Relaxed) {
            // A long held line: a pipe of 64 KiB would wake its reader for every 64 KiB.
            let _ = nix::fcntl::fcntl(self.fd(), nix::fcntl::FcntlArg::F_SETPIPE_SZ(WIDE_PIPE));
        }
        write_all(self.fd(), lines).map_err(classify)?;
        st.written += lines.len() as u64;
        if st.mid_line == Some(seq) && lines.last() == Some(&b'\n') {
            st.mid_line = None;
            self.line_ended.notify_all();
        }
        Ok(true)
    }

    /// `--line-buffer`: writes the start of a line of running batch `seq` that is too long to
    /// hold (its end follows with [`Output::pass_lines`]), once no other batch's line is half
    /// out (it waits for that line's end); false, writing nothing, while an earlier batch is
    /// not out yet (`-k`).
    pub fn pass_line_start(&self, seq: u64, part: &[u8]) -> Result<bool, EmitError> {
        let mut st = self.state.lock().unwrap_or_else(|e| e.into_inner());
        if self.mode == OrderMode::Ordered && st.next != seq {
            return Ok(false);
        }
        while st.mid_line.is_some_and(|m| m != seq) {
            st = self.line_ended.wait(st).unwrap_or_else(|e| e.into_inner());
        }
        st.mid_line = Some(seq);
        write_all(self.fd(), part).map_err(classify)?;
        st.written += part.len() as u64;
        Ok(true)
    }

    /// `--latest-line`: writes a drawing of the jobs' rows (nothing else reaches the output
    /// then).
    pub fn pass_display(&self, bytes: &[u8]) -> Result<(), EmitError> {
        let mut st = self.state.lock().unwrap_or_else(|e| e.into_inner());
        write_all(self.fd(), bytes).map_err(classify)?;
        st.written += bytes.len() as u64;
        Ok(())
    }

    /// `--line-buffer`: writes whole lines a relay read from a job's stderr to frun's stderr,
    /// under the emitter's lock, so never inside another relay's lines nor inside output that
    /// goes to the same place (`2>&1`: a write of more than a pipe's atomic size may be split).
    /// A failure is ignored: it never stops the run's output.
    pub fn pass_stderr_lines(&self, lines: &[u8]) {
        let _st = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let _ = write_all(io::stderr().as_fd(), lines);
    }

    /// `--line-buffer`: batch `seq` ended; a line of it left half out ends here for the
    /// others' lines (as its last line without a newline is passed on as it is).
    pub fn batch_lines_ended(&self, seq: u64) {
        let mut st = self.state.lock().unwrap_or_else(|e| e.into_inner());
        if st.mid_line == Some(seq) {
            st.mid_line = None;
            self.line_ended.notify_all();
        }
    }

    /// Hands over a finished batch: emits its output now (buffered) or once every earlier
    /// batch is out (`-k`); then the journal records it and its joblog line is written.
    pub fn complete(&self, finished: Finished) -> Result<(), EmitError> {
        match self.mode {
            OrderMode::Unbuffered => {
                self.record(&finished.done, None, finished.failed);
                finished.log.map_or(Ok(()), |l| self.log(&l))
            }
            OrderMode::Buffered => {
                let Finished {
                    piece,
                    done,
                    failed,
                    log,
                    ..
                } = finished;
                if piece.is_none() && (matches!(done, DoneSet::None) || self.journal.is_none()) {
                    return log.map_or(Ok(()), |l| self.log(&l));
                }
                let mut st = self.state.lock().unwrap_or_else(|e| e.into_inner());
                if let Some(p) = piece {
                    st.written += self.emit(&p)?;
                }
                self.record(&done, Some(st.written), failed);
                match log {
                    Some(l) => self.log_held(&mut st.written, &l),
                    None => Ok(()),
                }
            }
            OrderMode::Ordered => {
                if let Some(p) = &finished.piece {
                    p.capture.held.fetch_add(1, Ordering::AcqRel);
                    self.held.fetch_add(p.len, Ordering::Relaxed);
                }
                let mut st = self.state.lock().unwrap_or_else(|e| e.into_inner());
                st.held.insert(finished.seq, finished);
                loop {
                    let next = st.next;
                    let Some(f) = st.held.remove(&next) else {
                        break;
                    };
                    st.next += 1;
                    if let Some(p) = f.piece {
                        let r = self.emit(&p);
                        self.held.fetch_sub(p.len, Ordering::Relaxed);
                        release(&p);
                        st.written += r?;
                    }
                    self.record(&f.done, Some(st.written), f.failed);
                    if let Some(l) = f.log {
                        self.log_held(&mut st.written, &l)?;
                    }
                }
                Ok(())
            }
        }
    }
}

/// A failed write of `--joblog -`, named as the joblog's (a reader gone stays that).
fn joblog_on_stdout(e: EmitError) -> EmitError {
    match e {
        EmitError::Io(e) => EmitError::Joblog(format!(
            "cannot write the joblog to standard output: {}",
            crate::sys::errors::os_message(&e)
        )),
        other => other,
    }
}

/// Frees an emitted piece's whole pages and lets its worker reuse the capture file.
///
/// Only whole pages are punched: `sendfile` into a pipe may pass page references rather than
/// copies, and punching part of a page zeroes it in place, under the reader's feet. Dropping a
/// whole page from the file leaves the pipe's reference intact.
fn release(p: &Piece) {
    const PAGE: u64 = 4096;
    let first = p.off.div_ceil(PAGE) * PAGE;
    let last = (p.off + p.len) / PAGE * PAGE;
    if last > first {
        // Whole pages of our own memfd that were already emitted; KEEP_SIZE leaves later
        // offsets valid. Failure only means the memory is freed later.
        let _ = fallocate(
            &p.capture.fd,
            FallocateFlags::FALLOC_FL_PUNCH_HOLE | FallocateFlags::FALLOC_FL_KEEP_SIZE,
            first as libc::off_t,
            (last - first) as libc::off_t,
        );
    }
    p.capture.held.fetch_sub(1, Ordering::AcqRel);
}

/// True when `fd` is a pipe or socket whose reader has gone away.
pub fn reader_gone(fd: BorrowedFd<'_>) -> bool {
    let mut p = [PollFd::new(fd, PollFlags::empty())];
    // With no events asked, the kernel reports only POLLERR, POLLHUP and POLLNVAL, all known.
    let n = poll(&mut p, PollTimeout::ZERO).unwrap_or(0);
    n > 0
        && p[0]
            .revents()
            .is_some_and(|r| r.contains(PollFlags::POLLERR))
}

/// True when `fd` is a pipe or socket (where a reader can go away).
pub fn is_pipe_like(fd: BorrowedFd<'_>) -> bool {
    fstat(fd).is_ok_and(|st| matches!(st.st_mode & libc::S_IFMT, libc::S_IFIFO | libc::S_IFSOCK))
}
