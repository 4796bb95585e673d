//! `--line-buffer`: the output of a running batch is passed on a whole line at a time as it
//! arrives, so lines of different batches may interleave but a line is never split. With `-k`
//! only the oldest batch not yet out is passed on live; the others' lines wait in their
//! worker's capture file and come out in order, as GNU Parallel's `-k --line-buffer` does.
//!
//! One relay per worker: its children write to a pipe, and the relay's own thread ([`pump`])
//! reads it and hands whole lines to the emitter. At a batch's end it forwards the rest (a last
//! line without its newline too). It only moves bytes: it never decides whether a batch
//! succeeded, and the default grouped mode never comes here.
//!
//! Where the front end asks (`frun parallel`), the children's stderr has a pipe of its own in
//! the relay: its lines get the same dress (`--tag`, `--color`) and go to frun's stderr whole
//! as they come, after what stdout's pipe holds at the same moment (not held back for `-k`; a
//! stderr line longer than 1 MiB goes in pieces).
//!
//! A line is held until its newline, as GNU Parallel holds it, however long, while the run's
//! [`LineRoom`] (a share of the memory available) allows: other batches' lines keep flowing
//! meanwhile. Only a line that would take more is passed on as it comes (the others' lines
//! then wait for its end), so memory stays bounded whatever the commands print.
//!
//! [`pump`]: LineRelay::pump

use std::io;
use std::os::fd::{AsFd, AsRawFd, OwnedFd, RawFd};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, OnceLock};

use nix::errno::Errno;
use nix::fcntl::{FcntlArg, OFlag, fcntl};
use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
use nix::unistd::{pipe2, read};

use crate::output::emit::{Capture, EmitError, Output};
use crate::output::latest::Screen;
use crate::sys::Event;

/// Bytes read from the pipe at a time.
const READ_BYTES: usize = 64 << 10;

/// Bytes read from the pipe at a time while a long line is held, and the pipe's size then.
const WIDE_READ: libc::c_int = 1 << 20;

/// An unended line up to this long is held by every relay without asking the [`LineRoom`]
/// (and `--latest-line` keeps no more of one).
const HELD_LINE_BYTES: usize = 1 << 20;

/// The share of the memory available as the run starts that the relays together may hold
/// in unended lines longer than [`HELD_LINE_BYTES`]: a quarter.
const ROOM_SHARE: u64 = 4;

/// The room when the memory available cannot be read.
const ROOM_UNKNOWN: u64 = 256 << 20;

/// The room for a run: a quarter of the memory available now, read from `meminfo` (a file of
/// `/proc/meminfo`'s shape; None: `/proc/meminfo`, and 256 MiB where that cannot be read). A
/// file named that cannot be read is an error (a sentence for the user).
pub fn room_of(meminfo: Option<&std::path::Path>) -> Result<usize, String> {
    use crate::sys::memory::{MEMINFO, MemorySource};
    let source = match meminfo {
        Some(path) => Some(MemorySource::open(path)?),
        None => MemorySource::open(std::path::Path::new(MEMINFO)).ok(),
    };
    let available = source
        .and_then(|s| s.available())
        .unwrap_or(ROOM_UNKNOWN * ROOM_SHARE);
    Ok(usize::try_from(available / ROOM_SHARE).unwrap_or(usize::MAX))
}

/// `--line-buffer`: how many bytes of long unended lines all the run's relays may hold
/// together. A relay takes room as its line grows (doubling, so a few atomic operations per
/// line, never one per read) and gives it back when the line is out.
pub struct LineRoom {
    limit: usize,
    taken: AtomicUsize,
}

impl LineRoom {
    /// Room for `limit` bytes.
    pub fn new(limit: usize) -> LineRoom {
        LineRoom {
            limit,
            taken: AtomicUsize::new(0),
        }
    }

    /// Makes `*held` (what a relay has taken) cover a line of `len` bytes; false, taking
    /// nothing, when the room left is too small.
    fn cover(&self, held: &mut usize, len: usize) -> bool {
        if len <= *held {
            return true;
        }
        let want = len.checked_next_power_of_two().unwrap_or(len);
        let more = want - *held;
        let took = self
            .taken
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |t| {
                t.checked_add(more).filter(|&n| n <= self.limit)
            })
            .is_ok();
        if took {
            *held = want;
        }
        took
    }

    /// Gives back what a relay took.
    fn give_back(&self, held: &mut usize) {
        if *held > 0 {
            self.taken.fetch_sub(*held, Ordering::AcqRel);
            *held = 0;
        }
    }
}

/// How often kept lines (`-k`) look whether their batch may go out now, in milliseconds.
const KEPT_LOOK_MS: u8 = 20;

/// What the worker tells its relay's thread, and the answer.
#[derive(Default)]
struct Control {
    /// The batch whose command runs now.
    seq: Option<u64>,
    /// Its command ended: forward the rest, then say so (`done`).
    ending: bool,
    done: bool,
    /// Why forwarding failed (the worker stops the run).
    failed: Option<EmitError>,
    /// `--tag`: what each line of the batch starts with (before a tab), if anything (an empty
    /// tag still puts the tab: `--pipe --tag`).
    tag: Vec<u8>,
    tagging: bool,
    /// `--color`: the escape that starts the batch's colour (empty: none), and the one for
    /// its last `--latest-line` row when it failed (`--color-failed`).
    colour: Vec<u8>,
    failed_colour: Vec<u8>,
    /// The batch's command failed (known as it ends).
    job_failed: bool,
    /// `--latest-line`: the batch began and its row is not drawn yet.
    fresh: bool,
}

/// A worker's line relay: the pipe its children write to, and the thread's controls.
pub struct LineRelay {
    /// The read end (non-blocking), the relay thread's.
    read: OwnedFd,
    /// The write end: children's stdout.
    write: OwnedFd,
    /// The pipe for children's stderr (read end non-blocking, write end), when its lines are
    /// dressed too.
    stderr: Option<(OwnedFd, OwnedFd)>,
    wake: Event,
    control: Mutex<Control>,
    answered: Condvar,
    quit: AtomicBool,
    /// The worker's capture file: where `-k` keeps the lines of a batch that must wait.
    capture: OnceLock<Arc<Capture>>,
    /// `--latest-line`: lines are not passed on but drawn as each batch's latest (the pump's
    /// screen).
    latest: bool,
}

impl LineRelay {
    /// A relay with its pipe set up (the thread that moves whole lines out of it starts later);
    /// `latest`: for `--latest-line`; `stderr`: with a pipe for the children's stderr.
    pub fn new(latest: bool, stderr: bool) -> io::Result<LineRelay> {
        let pipe = || -> io::Result<(OwnedFd, OwnedFd)> {
            let (read, write) = pipe2(OFlag::O_CLOEXEC)?;
            fcntl(&read, FcntlArg::F_SETFL(OFlag::O_NONBLOCK))?;
            Ok((read, write))
        };
        let (read, write) = pipe()?;
        Ok(LineRelay {
            read,
            write,
            stderr: if stderr { Some(pipe()?) } else { None },
            wake: Event::new()?,
            control: Mutex::new(Control::default()),
            answered: Condvar::new(),
            quit: AtomicBool::new(false),
            capture: OnceLock::new(),
            latest,
        })
    }

    /// The descriptor children get as their stdout.
    pub fn child_fd(&self) -> RawFd {
        self.write.as_raw_fd()
    }

    /// The descriptor children get as their stderr, when the relay dresses its lines.
    pub fn child_stderr_fd(&self) -> Option<RawFd> {
        self.stderr.as_ref().map(|(_, w)| w.as_raw_fd())
    }

    /// The descriptor children get as their stdout, borrowed.
    pub fn child_as_fd(&self) -> std::os::fd::BorrowedFd<'_> {
        std::os::fd::AsFd::as_fd(&self.write)
    }

    /// Where lines of a batch that must wait (`-k`) are kept: the worker's capture file.
    pub fn keep_in(&self, capture: &Arc<Capture>) {
        let _ = self.capture.set(Arc::clone(capture));
    }

    /// The lines of the batches to come start with `tag` and a tab (`--tag`; None: nothing),
    /// and, when `colour` (the escape that starts a colour, `--color`) is not empty, each whole
    /// line is in that colour: it comes before the tag and the colour's end before the newline
    /// (and around a carriage return), as GNU Parallel's `--lb --color` writes them. A last
    /// line without its newline is only tagged.
    /// `failed_colour` is the colour of a `--latest-line` row of a batch that failed, once it
    /// ended.
    pub fn dress_lines_with(&self, tag: Option<&[u8]>, colour: &[u8], failed_colour: &[u8]) {
        let mut c = self.control.lock().unwrap_or_else(|e| e.into_inner());
        c.tag.clear();
        c.tag.extend_from_slice(tag.unwrap_or_default());
        c.tagging = tag.is_some();
        c.colour.clear();
        c.colour.extend_from_slice(colour);
        c.failed_colour.clear();
        c.failed_colour.extend_from_slice(failed_colour);
    }

    /// Batch `seq`'s command is about to start.
    pub fn begin(&self, seq: u64) {
        let mut c = self.control.lock().unwrap_or_else(|e| e.into_inner());
        c.seq = Some(seq);
        if self.latest {
            // Its row is drawn (empty) as it starts.
            c.fresh = true;
            self.wake.signal();
        }
    }

    /// The batch's command ended (`failed`: not with status 0): waits until everything it
    /// wrote is forwarded (or kept).
    pub fn end(&self, failed: bool) -> Result<(), EmitError> {
        let mut c = self.control.lock().unwrap_or_else(|e| e.into_inner());
        c.ending = true;
        c.job_failed = failed;
        self.wake.signal();
        while !c.done {
            c = self.answered.wait(c).unwrap_or_else(|e| e.into_inner());
        }
        c.done = false;
        c.seq = None;
        match c.failed.take() {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    /// Ends [`pump`](LineRelay::pump) (once the worker has no more batches).
    pub fn quit(&self) {
        self.quit.store(true, Ordering::Release);
        self.wake.signal();
    }

    /// The relay's thread: reads the pipe and forwards whole lines until [`quit`].
    ///
    /// [`quit`]: LineRelay::quit
    /// `room`: what long unended lines may take, shared by the run's relays.
    pub fn pump(&self, output: &Output, screen: Option<&Mutex<Screen>>, room: &LineRoom) {
        let mut pump = Pump {
            relay: self,
            output,
            screen,
            room,
            held: 0,
            latest: Vec::new(),
            drawn: Vec::new(),
            tag: Vec::new(),
            pending: Vec::with_capacity(READ_BYTES),
            unbroken: 0,
            live: false,
            kept_from: None,
            error: None,
            tagged: Vec::new(),
            mid_line: false,
            widened: false,
            stderr: Vec::new(),
            stderr_dressed: Vec::new(),
        };
        while !self.quit.load(Ordering::Acquire) {
            // Lines kept for -k go out once their batch is the oldest: looked at now and then.
            let (readable, woken, errors) = self.wait(pump.kept_from.is_some() && !pump.live);
            if woken {
                self.wake.drain();
                // A batch that began is drawn before anything it wrote is read.
                pump.draw_fresh();
            }
            if !readable && !woken && pump.kept_from.is_some() {
                pump.flush_kept();
            }
            if readable {
                pump.read_some();
                pump.forward_lines(false);
            }
            if errors {
                pump.read_stderr();
                pump.forward_stderr(false);
            }
            if woken {
                pump.answer_end();
            }
        }
    }

    /// Waits until a pipe has bytes or the worker signalled (for at most a moment when
    /// `briefly`): (stdout's pipe, the worker, stderr's pipe).
    fn wait(&self, briefly: bool) -> (bool, bool, bool) {
        let mut fds = [
            PollFd::new(self.read.as_fd(), PollFlags::POLLIN),
            PollFd::new(self.wake.as_fd(), PollFlags::POLLIN),
            PollFd::new(
                match &self.stderr {
                    Some((r, _)) => r.as_fd(),
                    None => self.wake.as_fd(),
                },
                PollFlags::POLLIN,
            ),
        ];
        let polled = if self.stderr.is_some() { 3 } else { 2 };
        let timeout = if briefly {
            PollTimeout::from(KEPT_LOOK_MS)
        } else {
            PollTimeout::NONE
        };
        match poll(&mut fds[..polled], timeout) {
            Ok(_) => {
                let ready = |p: &PollFd<'_>| p.revents().is_some_and(|r| !r.is_empty());
                (
                    ready(&fds[0]),
                    ready(&fds[1]),
                    polled == 3 && ready(&fds[2]),
                )
            }
            Err(_) => (false, false, false),
        }
    }
}

/// Appends `line` (a whole line with its newline, or a last one without) to `out` as `c` says:
/// after its colour and tag when `start` (its start is not out already), a whole line's colour
/// ended before its newline and around each carriage return in it.
fn dress_line(c: &Control, line: &[u8], start: bool, out: &mut Vec<u8>) {
    let prefix = |out: &mut Vec<u8>, colour: bool| {
        if colour {
            out.extend_from_slice(&c.colour);
        }
        if c.tagging {
            out.extend_from_slice(&c.tag);
            out.push(b'\t');
        }
    };
    let whole = line.last() == Some(&b'\n');
    if c.colour.is_empty() || !whole {
        if start {
            prefix(out, false);
        }
        out.extend_from_slice(line);
        return;
    }
    if start {
        prefix(out, true);
    }
    let body = &line[..line.len() - 1];
    crate::output::colour::dress_body(body, crate::output::colour::RESET, out, |out| {
        prefix(out, true)
    });
}

/// The relay thread's state between reads.
struct Pump<'a> {
    relay: &'a LineRelay,
    output: &'a Output,
    /// `--latest-line`: where rows are drawn, the current batch's latest whole line, and the
    /// bytes of a drawing (reused).
    screen: Option<&'a Mutex<Screen>>,
    /// The run's room for long lines, and how much of it this relay holds.
    room: &'a LineRoom,
    held: usize,
    latest: Vec<u8>,
    drawn: Vec<u8>,
    /// The tag with its tab (reused).
    tag: Vec<u8>,
    /// Bytes read that do not end a line yet.
    pending: Vec<u8>,
    /// How much of `pending`, from its start, is known to hold no newline: a line longer than
    /// a read is searched once, not again with every read (that was quadratic in its length).
    unbroken: usize,
    /// The current batch's lines go straight out (the emitter said so once).
    live: bool,
    /// Where the current batch's kept lines start in the capture file (`-k`).
    kept_from: Option<u64>,
    /// The first failure to forward (reported at the batch's end).
    error: Option<EmitError>,
    /// `--tag`: the lines being forwarded with their tags (reused).
    tagged: Vec<u8>,
    /// The start of the current line is out already (it was too long to hold).
    mid_line: bool,
    /// The pipe was widened for a long line ([`WIDE_READ`]).
    widened: bool,
    /// Bytes read from the stderr pipe that do not end a line yet, and its lines dressed
    /// (reused).
    stderr: Vec<u8>,
    stderr_dressed: Vec<u8>,
}

impl Pump<'_> {
    /// Reads what the pipe holds now (up to [`READ_BYTES`], or up to its whole size while a
    /// long line is held or passed on); true when it read anything.
    fn read_some(&mut self) -> bool {
        let most = if self.held > 0 || self.mid_line {
            WIDE_READ as usize
        } else {
            READ_BYTES
        };
        let len = self.pending.len();
        self.pending.resize(len + most, 0);
        let got = loop {
            match read(&self.relay.read, &mut self.pending[len..]) {
                Ok(n) => break n,
                Err(Errno::EINTR) => continue,
                Err(_) => break 0,
            }
        };
        self.pending.truncate(len + got);
        got > 0
    }

    /// Reads what the stderr pipe holds now, if there is one.
    fn read_stderr(&mut self) -> bool {
        let Some((read, _)) = &self.relay.stderr else {
            return false;
        };
        let len = self.stderr.len();
        self.stderr.resize(len + READ_BYTES, 0);
        let got = loop {
            match nix::unistd::read(read, &mut self.stderr[len..]) {
                Ok(n) => break n,
                Err(Errno::EINTR) => continue,
                Err(_) => break 0,
            }
        };
        self.stderr.truncate(len + got);
        got > 0
    }

    /// Writes the whole stderr lines read so far (everything, with `all`) to frun's stderr,
    /// dressed as the batch's stdout lines are, in one write; bytes read between batches wait
    /// for the next one.
    fn forward_stderr(&mut self, all: bool) {
        let cut = match memchr::memrchr(b'\n', &self.stderr) {
            _ if all || self.stderr.len() >= HELD_LINE_BYTES => self.stderr.len(),
            Some(i) => i + 1,
            None => return,
        };
        let c = self.relay.control.lock().unwrap_or_else(|e| e.into_inner());
        if cut == 0 || c.seq.is_none() {
            return;
        }
        self.stderr_dressed.clear();
        for line in self.stderr[..cut].split_inclusive(|&b| b == b'\n') {
            dress_line(&c, line, true, &mut self.stderr_dressed);
        }
        drop(c);
        self.output.pass_stderr_lines(&self.stderr_dressed);
        self.stderr.drain(..cut);
        if self.stderr.capacity() > HELD_LINE_BYTES {
            self.stderr.shrink_to(READ_BYTES);
            self.stderr_dressed.clear();
            self.stderr_dressed.shrink_to(READ_BYTES);
        }
    }

    /// Forwards the whole lines read so far (everything, with `all`).
    fn forward_lines(&mut self, all: bool) {
        let Some((seq, dressed)) = self.relay.control.lock().map_or(None, |c| {
            c.seq.map(|s| (s, c.tagging || !c.colour.is_empty()))
        }) else {
            // Bytes between batches (a background process of an earlier command) go with
            // the next batch.
            return;
        };
        if self.screen.is_some() {
            self.take_latest(seq, all);
            return;
        }
        let cut = if all {
            self.pending.len()
        } else {
            let from = self.unbroken.min(self.pending.len());
            match memchr::memrchr(b'\n', &self.pending[from..]) {
                Some(i) => from + i + 1,
                None => {
                    self.unbroken = self.pending.len();
                    if self.pending.len() >= HELD_LINE_BYTES {
                        if !self.widened {
                            // A long line comes faster through a wider pipe (fewer wake-ups);
                            // where the system refuses, it comes as it is.
                            self.widened = true;
                            let _ = fcntl(&self.relay.read, FcntlArg::F_SETPIPE_SZ(WIDE_READ));
                        }
                        // A tagged or coloured line is copied once more as it goes out.
                        let needs = self.pending.len() * if dressed { 2 } else { 1 };
                        // Once its start is out, the rest follows as it comes.
                        if self.mid_line || !self.room.cover(&mut self.held, needs) {
                            self.pass_line_start(seq);
                        }
                    }
                    return;
                }
            }
        };
        if cut == 0 {
            return;
        }
        if let Err(e) = self.forward(seq, cut) {
            self.error.get_or_insert(e);
        }
        if self.pending[..cut].last() == Some(&b'\n') {
            self.mid_line = false;
        }
        self.pending.drain(..cut);
        // What is left follows the last newline: it holds none.
        self.unbroken = self.pending.len();
        self.let_go();
    }

    /// Gives back the room and the memory a long line took, once it is out.
    fn let_go(&mut self) {
        if self.pending.len() <= HELD_LINE_BYTES && self.held > 0 {
            self.room.give_back(&mut self.held);
            self.pending.shrink_to(READ_BYTES.max(self.pending.len()));
            self.tagged.clear();
            self.tagged.shrink_to(READ_BYTES);
        }
    }

    /// Passes on what is read of a line too long to hold: to the output once no other
    /// batch's line is half out (waiting for its end), or, while an earlier batch is not out
    /// yet (`-k`), to the worker's capture file behind the batch's kept lines.
    fn pass_line_start(&mut self, seq: u64) {
        if self.error.is_some() {
            // Nothing more reaches the output: what the command writes is dropped.
            self.pending.clear();
            self.unbroken = 0;
            self.let_go();
            return;
        }
        if !self.live && self.relay.capture.get().is_some() {
            // Its kept lines first, if the batch is the oldest now.
            if let Err(e) = self.forward(seq, 0) {
                self.error.get_or_insert(e);
                return;
            }
        }
        let part = {
            let c = self.relay.control.lock().unwrap_or_else(|e| e.into_inner());
            if (c.tagging || !c.colour.is_empty()) && !self.mid_line {
                self.tagged.clear();
                self.tagged.extend_from_slice(&c.colour);
                if c.tagging {
                    self.tagged.extend_from_slice(&c.tag);
                    self.tagged.push(b'\t');
                }
                self.tagged.extend_from_slice(&self.pending);
                &self.tagged[..]
            } else {
                &self.pending[..]
            }
        };
        let passed = match (self.live, self.relay.capture.get()) {
            (false, Some(capture)) => {
                let from = match self.kept_from {
                    Some(from) => Ok(from),
                    None => capture.size(),
                };
                from.and_then(|from| {
                    self.kept_from = Some(from);
                    capture.append(part)
                })
                .map(|()| true)
                .map_err(EmitError::Io)
            }
            _ => self.output.pass_line_start(seq, part),
        };
        match passed {
            Ok(true) => {
                self.mid_line = true;
                self.pending.clear();
                self.unbroken = 0;
                self.let_go();
            }
            Ok(false) => {}
            Err(e) => {
                self.error.get_or_insert(e);
            }
        }
    }

    /// Hands `pending[..cut]` of batch `seq` to the emitter, or keeps it for later (`-k`),
    /// each line after its tag with `--tag`.
    fn forward(&mut self, seq: u64, cut: usize) -> Result<(), EmitError> {
        if self.error.is_some() {
            return Ok(());
        }
        let lines = {
            let c = self.relay.control.lock().unwrap_or_else(|e| e.into_inner());
            if (!c.tagging && c.colour.is_empty()) || cut == 0 {
                &self.pending[..cut]
            } else {
                self.tagged.clear();
                for (i, line) in self.pending[..cut]
                    .split_inclusive(|&b| b == b'\n')
                    .enumerate()
                {
                    // The first line's start, and its tag, may be out already.
                    let start = i > 0 || !self.mid_line;
                    dress_line(&c, line, start, &mut self.tagged);
                }
                &self.tagged[..]
            }
        };
        let capture = self.relay.capture.get();
        if !self.live {
            let kept = match (capture, self.kept_from) {
                (Some(c), None) => {
                    let from = c.size().map_err(EmitError::Io)?;
                    self.kept_from = Some(from);
                    Some((c.as_ref(), from))
                }
                (Some(c), Some(from)) => Some((c.as_ref(), from)),
                (None, _) => None,
            };
            self.live = self.output.pass_lines(seq, lines, kept)?;
            if let (false, Some(c)) = (self.live, capture) {
                c.append(lines).map_err(EmitError::Io)?;
            }
            return Ok(());
        }
        self.output.pass_lines(seq, lines, None).map(|_| ())
    }

    /// `--latest-line`: keeps the last whole line read (a line ends at a newline, or at a
    /// carriage return where the read holds no newline, as GNU Parallel reads them) and draws
    /// the batch's row with it; with `all` (the batch ended) draws it a last time and passes
    /// on a last line without its end as it is, after the tag. An unended line is held up to
    /// [`HELD_LINE_BYTES`]; the rest of it is dropped.
    fn take_latest(&mut self, seq: u64, all: bool) {
        let end =
            memchr::memrchr(b'\n', &self.pending).or_else(|| memchr::memrchr(b'\r', &self.pending));
        if let Some(e) = end {
            let whole = &self.pending[..e];
            let from = memchr::memrchr(b'\n', whole)
                .or_else(|| memchr::memrchr(b'\r', whole))
                .map_or(0, |i| i + 1);
            self.latest.clear();
            self.latest.extend_from_slice(&whole[from..]);
            self.pending.drain(..=e);
        } else if self.pending.len() > HELD_LINE_BYTES {
            self.pending.truncate(HELD_LINE_BYTES);
        }
        self.unbroken = 0;
        if end.is_some() || all {
            self.draw(seq, all);
        }
        if all {
            self.latest.clear();
            self.pending.clear();
        }
    }

    /// Draws batch `seq`'s row with its latest line (`ended`: for the last time).
    fn draw(&mut self, seq: u64, ended: bool) {
        let Some(screen) = self.screen else { return };
        self.drawn.clear();
        {
            let c = self.relay.control.lock().unwrap_or_else(|e| e.into_inner());
            self.tag.clear();
            if c.tagging {
                self.tag.extend_from_slice(&c.tag);
                self.tag.push(b'\t');
            }
            let reset: &'static [u8] = crate::output::colour::RESET;
            let colour = if ended && c.job_failed {
                &c.failed_colour[..]
            } else {
                &c.colour[..]
            };
            let look = (&self.tag[..], colour, reset);
            let mut s = screen.lock().unwrap_or_else(|e| e.into_inner());
            if ended {
                s.end(seq, look, &self.latest, &mut self.drawn);
            } else {
                s.show(seq, look, &self.latest, &mut self.drawn);
            }
            if ended && !self.pending.is_empty() {
                self.drawn.extend_from_slice(&self.tag);
                self.drawn.extend_from_slice(&self.pending);
            }
        }
        if let Err(e) = self.output.pass_display(&self.drawn) {
            self.error.get_or_insert(e);
        }
    }

    /// `--latest-line`: draws the row of a batch that just began.
    fn draw_fresh(&mut self) {
        let seq = {
            let mut c = self.relay.control.lock().unwrap_or_else(|e| e.into_inner());
            if !std::mem::take(&mut c.fresh) {
                return;
            }
            c.seq
        };
        if let Some(seq) = seq {
            self.latest.clear();
            self.draw(seq, false);
        }
    }

    /// Passes on the lines kept for `-k` if the batch is the oldest now (then it goes live).
    fn flush_kept(&mut self) {
        let Some(seq) = self.relay.control.lock().map_or(None, |c| c.seq) else {
            return;
        };
        if let Err(e) = self.forward(seq, 0) {
            self.error.get_or_insert(e);
        }
    }

    /// The worker said the command ended: forwards the rest, then answers.
    fn answer_end(&mut self) {
        let ending = self.relay.control.lock().is_ok_and(|c| c.ending && !c.done);
        if !ending {
            return;
        }
        // The command is gone: what it wrote is all in the pipes now.
        while self.read_some() {}
        self.forward_lines(true);
        while self.read_stderr() {}
        self.forward_stderr(true);
        if let Some(seq) = self.relay.control.lock().map_or(None, |c| c.seq) {
            self.output.batch_lines_ended(seq);
        }
        self.mid_line = false;
        self.pending.clear();
        self.unbroken = 0;
        self.let_go();
        self.live = false;
        self.kept_from = None;
        let mut c = self.relay.control.lock().unwrap_or_else(|e| e.into_inner());
        c.ending = false;
        c.done = true;
        c.failed = self.error.take();
        self.relay.answered.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::output::emit::{Capture, OrderMode};
    use std::time::{Duration, Instant};

    #[test]
    fn room_is_taken_by_doubling_and_given_back() {
        let room = LineRoom::new(8 << 20);
        let (mut a, mut b) = (0, 0);
        assert!(room.cover(&mut a, 3 << 20));
        assert_eq!(a, 4 << 20, "rounded up to a power of two");
        assert!(room.cover(&mut a, 4 << 20), "covered already");
        assert!(!room.cover(&mut b, (4 << 20) + 1), "8 MiB more do not fit");
        assert_eq!(b, 0, "nothing taken on failure");
        assert!(room.cover(&mut b, 4 << 20));
        room.give_back(&mut a);
        assert_eq!(a, 0);
        assert!(room.cover(&mut a, 3 << 20), "room given back is free again");
        assert!(!room.cover(&mut a, usize::MAX), "no overflow");
    }

    /// A relay over an output file in `mode`, with `room` (and a capture file for `-k`);
    /// writes `len` bytes of one line of batch `seq`, and returns how much of it was in the
    /// output file and in the capture file before its newline, then after its batch's end.
    fn line_through(room: LineRoom, mode: OrderMode, seq: u64, len: usize) -> [(u64, u64); 2] {
        let file = tempfile::tempfile().unwrap();
        let out = Output::new(
            mode,
            (
                Some(OwnedFd::from(file.try_clone().unwrap())),
                "the file".into(),
            ),
            None,
            0,
        );
        let relay = LineRelay::new(false, false).unwrap();
        let capture = Capture::new().unwrap();
        if mode == OrderMode::Ordered {
            relay.keep_in(&capture);
        }
        let sizes = || (file.metadata().unwrap().len(), capture.size().unwrap());
        std::thread::scope(|s| {
            s.spawn(|| relay.pump(&out, None, &room));
            relay.begin(seq);
            let child = relay.child_as_fd().try_clone_to_owned().unwrap();
            let writer = s.spawn(move || {
                crate::output::emit::write_all(child.as_fd(), &vec![b'a'; len]).unwrap();
                child
            });
            // Whatever goes out before the newline has gone out once the reader is idle.
            let started = Instant::now();
            let child = loop {
                if writer.is_finished() && started.elapsed() > Duration::from_millis(300) {
                    break writer.join().unwrap();
                }
                std::thread::sleep(Duration::from_millis(20));
            };
            std::thread::sleep(Duration::from_millis(200));
            let before = sizes();
            crate::output::emit::write_all(child.as_fd(), b"\n").unwrap();
            drop(child);
            relay.end(false).unwrap();
            relay.quit();
            [before, sizes()]
        })
    }

    #[test]
    fn a_long_line_is_held_whole_while_there_is_room() {
        let len = 3 * HELD_LINE_BYTES + 7;
        let whole = len as u64 + 1;
        let got = line_through(LineRoom::new(64 << 20), OrderMode::Buffered, 0, len);
        assert_eq!(got, [(0, 0), (whole, 0)]);
    }

    #[test]
    fn a_long_line_passes_as_it_comes_when_the_room_is_full() {
        let len = 3 * HELD_LINE_BYTES + 7;
        let [(before, _), after] = line_through(LineRoom::new(0), OrderMode::Buffered, 0, len);
        assert!(
            before >= HELD_LINE_BYTES as u64,
            "{before} bytes out before its end"
        );
        assert_eq!(after, (len as u64 + 1, 0));
    }

    #[test]
    fn a_long_line_that_must_wait_for_an_earlier_batch_waits_in_the_capture_file() {
        // `-k`, batch 1 while batch 0 is not out: with no room, its line goes to the capture
        // file as it comes instead of growing in memory, and nothing reaches the output.
        let len = 3 * HELD_LINE_BYTES + 7;
        let [(out, kept), after] = line_through(LineRoom::new(0), OrderMode::Ordered, 1, len);
        assert_eq!(out, 0);
        assert!(
            kept >= HELD_LINE_BYTES as u64,
            "{kept} bytes kept before its end"
        );
        assert_eq!(after, (0, len as u64 + 1));
    }
}
