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
//! [`pump`]: LineRelay::pump

use std::io;
use std::os::fd::{AsFd, AsRawFd, OwnedFd, RawFd};
use std::sync::atomic::{AtomicBool, Ordering};
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

/// A line longer than this is passed on as it comes instead of being held whole (while it
/// is out, other batches' lines wait for its end): memory stays bounded and a huge line costs
/// one copy, not a growing buffer.
const HELD_LINE_BYTES: usize = 1 << 20;

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
    /// `latest`: for `--latest-line`.
    pub fn new(latest: bool) -> io::Result<LineRelay> {
        let (read, write) = pipe2(OFlag::O_CLOEXEC)?;
        fcntl(&read, FcntlArg::F_SETFL(OFlag::O_NONBLOCK))?;
        Ok(LineRelay {
            read,
            write,
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
    pub fn pump(&self, output: &Output, screen: Option<&Mutex<Screen>>) {
        let mut pump = Pump {
            relay: self,
            output,
            screen,
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
        };
        while !self.quit.load(Ordering::Acquire) {
            // Lines kept for -k go out once their batch is the oldest: looked at now and then.
            let (readable, woken) = self.wait(pump.kept_from.is_some() && !pump.live);
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
            if woken {
                pump.answer_end();
            }
        }
    }

    /// Waits until the pipe has bytes or the worker signalled (for at most a moment when
    /// `briefly`).
    fn wait(&self, briefly: bool) -> (bool, bool) {
        let mut fds = [
            PollFd::new(self.read.as_fd(), PollFlags::POLLIN),
            PollFd::new(self.wake.as_fd(), PollFlags::POLLIN),
        ];
        let timeout = if briefly {
            PollTimeout::from(KEPT_LOOK_MS)
        } else {
            PollTimeout::NONE
        };
        match poll(&mut fds, timeout) {
            Ok(_) => {
                let ready = |p: &PollFd<'_>| p.revents().is_some_and(|r| !r.is_empty());
                (ready(&fds[0]), ready(&fds[1]))
            }
            Err(_) => (false, false),
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
    /// The start of the current line is out already ([`HELD_LINE_BYTES`]).
    mid_line: bool,
}

impl Pump<'_> {
    /// Reads what the pipe holds now (up to [`READ_BYTES`]); true when it read anything.
    fn read_some(&mut self) -> bool {
        let len = self.pending.len();
        self.pending.resize(len + READ_BYTES, 0);
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

    /// Forwards the whole lines read so far (everything, with `all`).
    fn forward_lines(&mut self, all: bool) {
        let Some(seq) = self.relay.control.lock().map_or(None, |c| c.seq) else {
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
                        self.pass_line_start(seq);
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
    }

    /// Passes on what is read of a line too long to hold, when no other batch's line is half
    /// out (and, with `-k`, once the batch's kept lines are out): else it keeps growing.
    fn pass_line_start(&mut self, seq: u64) {
        if self.error.is_some() {
            return;
        }
        if !self.live && self.relay.capture.get().is_some() {
            // Its kept lines first, if the batch is the oldest now.
            if let Err(e) = self.forward(seq, 0) {
                self.error.get_or_insert(e);
            }
            if !self.live {
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
        match self.output.pass_line_start(seq, part) {
            Ok(true) => {
                self.mid_line = true;
                self.pending.clear();
                self.unbroken = 0;
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
        // The command is gone: what it wrote is all in the pipe now.
        while self.read_some() {}
        self.forward_lines(true);
        if let Some(seq) = self.relay.control.lock().map_or(None, |c| c.seq) {
            self.output.batch_lines_ended(seq);
        }
        self.mid_line = false;
        self.pending.clear();
        self.unbroken = 0;
        self.live = false;
        self.kept_from = None;
        let mut c = self.relay.control.lock().unwrap_or_else(|e| e.into_inner());
        c.ending = false;
        c.done = true;
        c.failed = self.error.take();
        self.relay.answered.notify_all();
    }
}
