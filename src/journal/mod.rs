//! The checkpoint journal: one versioned text file that records what a run has completed, kept
//! up to date while the run goes, so a run stopped in any way — a signal, `--halt`, even
//! `kill -9` of frun or a power loss — can be resumed exactly (`--resume`).
//!
//! It writes and reads that file and nothing else: it does not decide what is complete (the
//! emitter reports a batch once its output is out) and it does not skip input (the scanner
//! does, from [`Checkpoint::intervals`]).
//!
//! # Format (version 1)
//!
//! Text, one entry per line, fields separated by one space:
//!
//! ```text
//! frun-checkpoint 1
//! # command: <the command words, shell-quoted>       (comment lines start with '#')
//! # resume: frun --resume FILE <the same arguments>
//! run <sha256 of the command and the options that shape its output, hex>
//! stdout <byte count of stdout when the run began>
//! input <head length> <sha256 of the input's first head-length bytes, hex> <size or ->
//! task <index> <count> <chunk> <order>                (one task of a sharded run, --results)
//! done <start> <end> <stdout>
//! failed <start> <end>                               (a failed batch: not done)
//! stopped <reason>
//! end <input length>
//! ```
//!
//! `done` says the input bytes `[start, end)` (whole records) were processed and their output
//! written, after which stdout held `<stdout>` bytes (`-` with `-u`, where frun does not see the
//! output). Entries are buffered and written in groups: stdout is synced first, then the
//! entries are appended and the journal synced, so an entry never claims output that a crash
//! could lose. A torn last line is ignored. A resumed run appends to the same file.
//!
//! `failed` names a batch whose command exited non-zero (not retried): its output was written,
//! but it is not done. Where output is counted, nothing after it in the same run is recorded as
//! done, so a resume cuts stdout back to before that output and runs the failed batch and
//! everything after it again (exactly one run's output, and its exit status, in the end).
//!
//! # The file
//!
//! A new journal is created (mode 0600) under a name that does not exist, never through a
//! symbolic link; the default place moves to the next free name (`.frun_resume.1`, …) when
//! another file holds it, so a stopped run's checkpoint is never overwritten. A journal read or
//! continued must be a regular file (not a symbolic link, FIFO or device) that this user owns
//! and nobody else can write, no larger than a journal of the input could be. A run removes
//! only the file it created or continued.
//!
//! In a results directory (`--results`) each task of each run writes its own journal next to
//! its own output file, with a `task` line (which share of the input it took, and the order
//! mode `frun merge` needs) and, once its scan reached the end of the input, an `end` line with
//! the input's length; `stdout` there means that output file.

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::os::fd::{AsRawFd, RawFd};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use sha2::{Digest, Sha256};

use crate::errors::count;

/// Where the journal goes unless `--checkpoint-file` says otherwise.
pub const DEFAULT_PATH: &str = ".frun_resume";
/// The first line of every version-1 journal.
pub const MAGIC: &str = "frun-checkpoint 1";
/// How many input bytes identify the input.
pub const HEAD_BYTES: usize = 64 << 10;

/// Hex SHA-256 of `data`.
pub fn digest(data: &[u8]) -> String {
    let d = Sha256::digest(data);
    d.iter().map(|b| format!("{b:02x}")).collect()
}

/// What identifies the input: its first bytes and, when known, its size.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InputId {
    pub head_len: u64,
    pub head_hash: String,
    pub size: Option<u64>,
}

impl InputId {
    pub fn of(head: &[u8], size: Option<u64>) -> InputId {
        InputId {
            head_len: head.len() as u64,
            head_hash: digest(head),
            size,
        }
    }
}

/// A journal read back for `--resume`.
#[derive(Debug, Default)]
pub struct Checkpoint {
    pub run: String,
    pub input: Option<InputId>,
    /// Completed input intervals, sorted and merged.
    pub intervals: Vec<(u64, u64)>,
    /// Stdout's byte count after the last completed batch (None: not known, `-u`).
    pub stdout: Option<u64>,
    /// Completed batches recorded.
    pub batches: u64,
    /// The output's byte count when the run began (`stdout`).
    pub base: Option<u64>,
    /// Every `done` entry in file order: input `[start, end)` and the output's byte count after
    /// it.
    pub entries: Vec<(u64, u64, Option<u64>)>,
    /// The `task` line of a results directory's journal.
    pub task: Option<TaskLine>,
    /// The input's length, once the run's scan reached its end (`end`).
    pub end: Option<u64>,
}

/// A task's share and output order, as its journal records them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TaskLine {
    pub index: u64,
    pub count: u64,
    pub chunk: u64,
    /// `ordered` (`-k`) or `buffered`.
    pub order: String,
}

/// The identity of a file: its device and inode (two names of one file have the same).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FileId {
    dev: u64,
    ino: u64,
}

impl FileId {
    pub fn of(m: &std::fs::Metadata) -> FileId {
        use std::os::unix::fs::MetadataExt;
        FileId {
            dev: m.dev(),
            ino: m.ino(),
        }
    }

    /// The identity of what descriptor `fd` is open on.
    pub fn of_fd(fd: RawFd) -> Option<FileId> {
        // SAFETY: fstat into zeroed storage.
        unsafe {
            let mut st: libc::stat = std::mem::zeroed();
            (libc::fstat(fd, &mut st) == 0).then_some(FileId {
                dev: st.st_dev,
                ino: st.st_ino,
            })
        }
    }
}

/// The largest journal read when nothing bounds it better (the input's size is not known).
pub const READ_CAP: u64 = 1 << 30;
/// The most a journal can hold besides its `done` entries: its header, and the few lines each
/// run that continued it added.
const JOURNAL_SLACK: u64 = 16 << 20;
/// The longest `done` entry: three 20-digit numbers.
const LONGEST_ENTRY: u64 = 68;

/// The largest journal an input of `input_size` bytes can have: every `done` entry covers at
/// least one input byte that no other entry covers (a resumed run skips what is done).
pub fn read_cap(input_size: Option<u64>) -> u64 {
    input_size.map_or(READ_CAP, |n| {
        JOURNAL_SLACK.saturating_add(n.saturating_mul(LONGEST_ENTRY))
    })
}

/// Opens `path` without following a symbolic link in its last component and without waiting
/// (a FIFO opens at once), close-on-exec.
fn open_nofollow(path: &Path, options: &mut OpenOptions) -> io::Result<File> {
    options
        .custom_flags(libc::O_CLOEXEC | libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)
}

/// What `path` names, without following a symbolic link: refused unless a regular file.
fn lstat_regular(path: &Path) -> Result<std::fs::Metadata, String> {
    let m = std::fs::symlink_metadata(path).map_err(|e| {
        format!(
            "cannot read {}: {}",
            path.display(),
            crate::errors::os_message(&e)
        )
    })?;
    if m.file_type().is_symlink() {
        return Err(format!(
            "{} is a symbolic link; frun opens the files it keeps (checkpoints, results) \
             only as the file itself",
            path.display()
        ));
    }
    if !m.file_type().is_file() {
        return Err(format!("{} is not a regular file", path.display()));
    }
    Ok(m)
}

/// Refuses a journal that is not a regular file, that another user owns, or that group or
/// others may write: frun would act on what someone else wrote.
fn check_owned(m: &std::fs::Metadata, path: &Path) -> Result<(), String> {
    use std::os::unix::fs::MetadataExt;
    if !m.file_type().is_file() {
        return Err(format!("{} is not a regular file", path.display()));
    }
    // SAFETY: geteuid has no memory effects.
    let me = unsafe { libc::geteuid() };
    if m.uid() != me {
        return Err(format!(
            "{} belongs to another user (uid {}); frun reads back only files you own",
            path.display(),
            m.uid()
        ));
    }
    if m.mode() & 0o022 != 0 {
        return Err(format!(
            "{} can be written by other users (mode {:04o}); frun reads back only files \
             that only you can write (chmod 600)",
            path.display(),
            m.mode() & 0o7777
        ));
    }
    Ok(())
}

/// Opens a journal for reading: a regular file, not through a symbolic link (a FIFO or a device
/// is refused without being opened).
pub fn open_read(path: &Path) -> Result<File, String> {
    lstat_regular(path)?;
    open_nofollow(path, OpenOptions::new().read(true)).map_err(|e| {
        format!(
            "cannot read {}: {}",
            path.display(),
            crate::errors::os_message(&e)
        )
    })
}

/// Opens a file frun wrote and now reads back (a journal, a results directory's output file):
/// a regular file, not through a symbolic link, owned by this user and writable by nobody else.
pub fn open_owned(path: &Path) -> Result<File, String> {
    let file = open_read(path)?;
    let m = file.metadata().map_err(|e| {
        format!(
            "cannot read {}: {}",
            path.display(),
            crate::errors::os_message(&e)
        )
    })?;
    check_owned(&m, path)?;
    Ok(file)
}

/// A journal read back, with the file it was read from.
pub struct Loaded {
    pub checkpoint: Checkpoint,
    pub id: FileId,
    /// The journal's bytes, as read.
    pub text: Vec<u8>,
}

/// Reads a journal: a regular file (never through a symbolic link, never a FIFO or a device),
/// owned by this user and writable by nobody else, of at most `cap` bytes. The error is a
/// one-line explanation.
pub fn load(path: &Path, cap: u64) -> Result<Loaded, String> {
    use std::io::Read;
    let cannot = |e: io::Error| {
        format!(
            "cannot read {}: {}",
            path.display(),
            crate::errors::os_message(&e)
        )
    };
    let file = open_owned(path)?;
    let m = file.metadata().map_err(cannot)?;
    let too_large = || {
        format!(
            "{} is larger than a checkpoint of this input can be ({cap} bytes)",
            path.display()
        )
    };
    if m.len() > cap {
        return Err(too_large());
    }
    let mut text = Vec::with_capacity(m.len() as usize);
    (&file)
        .take(cap.saturating_add(1))
        .read_to_end(&mut text)
        .map_err(cannot)?;
    if text.len() as u64 > cap {
        return Err(too_large());
    }
    let checkpoint =
        parse(&text).map_err(|e| format!("{} is not a usable checkpoint: {e}", path.display()))?;
    Ok(Loaded {
        checkpoint,
        id: FileId::of(&m),
        text,
    })
}

/// Reads a journal (see [`load`], bounded by [`READ_CAP`]).
pub fn read(path: &Path) -> Result<Checkpoint, String> {
    load(path, READ_CAP).map(|l| l.checkpoint)
}

fn parse(text: &[u8]) -> Result<Checkpoint, String> {
    let mut cp = Checkpoint::default();
    // A last line without its newline was torn by a crash: ignore it.
    let complete = match text.iter().rposition(|&b| b == b'\n') {
        Some(i) => &text[..=i],
        None => &[][..],
    };
    let mut lines = complete.split(|&b| b == b'\n').filter(|l| !l.is_empty());
    match lines.next() {
        Some(l) if l == MAGIC.as_bytes() => {}
        Some(l) if l.starts_with(b"frun-checkpoint ") => {
            return Err(format!(
                "written by another version ({})",
                String::from_utf8_lossy(l)
            ));
        }
        _ => return Err(format!("it does not start with '{MAGIC}'")),
    }
    let mut base = None;
    let mut intervals = Vec::new();
    for line in lines {
        let line = std::str::from_utf8(line).map_err(|_| "a line is not text".to_string())?;
        if line.starts_with('#') {
            continue;
        }
        let f: Vec<&str> = line.split(' ').collect();
        let num = |s: &str| {
            s.parse::<u64>()
                .map_err(|_| format!("bad number in '{line}'"))
        };
        match f.as_slice() {
            ["run", hash] => cp.run = hash.to_string(),
            // The first one counts (`-`: stdout was not a regular file).
            ["stdout", n] => {
                if base.is_none() {
                    base = Some(if *n == "-" { None } else { Some(num(n)?) });
                }
            }
            ["input", len, hash, size] => {
                cp.input = Some(InputId {
                    head_len: num(len)?,
                    head_hash: hash.to_string(),
                    size: if *size == "-" { None } else { Some(num(size)?) },
                })
            }
            ["done", start, end, out] => {
                let (s, e) = (num(start)?, num(end)?);
                if e < s {
                    return Err(format!("bad interval in '{line}'"));
                }
                intervals.push((s, e));
                cp.batches += 1;
                cp.stdout = if *out == "-" { None } else { Some(num(out)?) };
                cp.entries.push((s, e, cp.stdout));
            }
            ["task", index, count, chunk, order] => {
                cp.task = Some(TaskLine {
                    index: num(index)?,
                    count: num(count)?,
                    chunk: num(chunk)?,
                    order: order.to_string(),
                })
            }
            ["end", len] => cp.end = Some(num(len)?),
            ["stopped", ..] | ["failed", ..] => {}
            _ => return Err(format!("unknown entry '{line}'")),
        }
    }
    if cp.run.is_empty() {
        return Err("it names no command".into());
    }
    cp.base = base.flatten();
    if cp.batches == 0 {
        cp.stdout = cp.base;
    }
    cp.intervals = merge_intervals(intervals);
    Ok(cp)
}

/// Input intervals sorted, with overlapping and touching ones merged.
pub fn merge_intervals(mut v: Vec<(u64, u64)>) -> Vec<(u64, u64)> {
    v.sort_unstable();
    let mut out: Vec<(u64, u64)> = Vec::with_capacity(v.len());
    for (s, e) in v {
        match out.last_mut() {
            Some(last) if s <= last.1 => last.1 = last.1.max(e),
            _ => out.push((s, e)),
        }
    }
    out
}

/// The journal of a running run.
pub struct Journal {
    /// Where it is; for a new journal at the default place, set when it is created (a name
    /// taken by another file moves it to the next free one).
    path: Mutex<PathBuf>,
    /// The file, once it exists: a new journal is created by its first flush, so a run that ends
    /// within one sync period never touches the disk.
    file: Mutex<Option<File>>,
    /// The comment for humans on a new journal's second line.
    comment: String,
    /// A new journal says how to resume it (`# resume: …`).
    resume_hint: bool,
    /// What a new journal starts with after its comment (empty when continuing one).
    header: String,
    /// False when continuing the journal being resumed.
    new: bool,
    /// A new journal may take the next free name (`PATH.1`, `PATH.2`, …) when `PATH` exists.
    alternates: bool,
    /// A failed batch is recorded as done (a results directory: its output is in its place
    /// there, and `frun merge` needs it); otherwise a failure ends what this run records.
    failures_done: bool,
    /// A failed batch's output was written: nothing after it is recorded as done, so a resume
    /// cuts the output back to before it and runs it again.
    cut: std::sync::atomic::AtomicBool,
    /// Entries not yet written.
    pending: Mutex<Vec<u8>>,
    /// Stdout, synced before entries are written when it is a regular file.
    stdout: Option<RawFd>,
    batches: std::sync::atomic::AtomicU64,
    /// Set when the journal could not be created after all (another frun took the file).
    lost: Mutex<Option<String>>,
}

/// Why a journal could not be opened.
pub enum OpenError {
    /// Another frun holds it.
    Busy,
    /// It is not a file frun may use as a journal (one line, why).
    Refused(String),
    Io(io::Error),
}

/// The pid of another process holding `file`'s lock (a live run's journal), if any.
pub fn holder(file: &File) -> Option<i32> {
    // SAFETY: fcntl on a descriptor we own, with a zeroed and filled-in flock record.
    unsafe {
        let mut lock: libc::flock = std::mem::zeroed();
        lock.l_type = libc::F_WRLCK as libc::c_short;
        lock.l_whence = libc::SEEK_SET as libc::c_short;
        if libc::fcntl(file.as_raw_fd(), libc::F_GETLK, &mut lock) != 0 {
            return None;
        }
        (lock.l_type != libc::F_UNLCK as libc::c_short).then_some(lock.l_pid)
    }
}

/// Opens and locks a journal file: a new one is created (mode 0600, failing when the name
/// exists, whatever it is — a symbolic link is never followed), an existing one is opened
/// without following a symbolic link and must be a regular file of this user that nobody
/// else can write. The lock is a process-owned (POSIX) lock: it dies with frun, even while a
/// child spawned a moment before still holds a copy of the descriptor (an `flock` would live
/// on in it).
fn open_locked(path: &Path, new: bool) -> Result<File, OpenError> {
    let mut options = OpenOptions::new();
    options.append(true).read(true).mode(0o600);
    if new {
        options.create_new(true);
    }
    let file = open_nofollow(path, &mut options).map_err(OpenError::Io)?;
    if !new {
        let m = file.metadata().map_err(OpenError::Io)?;
        check_owned(&m, path).map_err(OpenError::Refused)?;
    }
    // SAFETY: fcntl on a descriptor we own, with a zeroed and filled-in flock record.
    let locked = unsafe {
        let mut lock: libc::flock = std::mem::zeroed();
        lock.l_type = libc::F_WRLCK as libc::c_short;
        lock.l_whence = libc::SEEK_SET as libc::c_short;
        libc::fcntl(file.as_raw_fd(), libc::F_SETLK, &lock)
    };
    if locked != 0 {
        let e = io::Error::last_os_error();
        return match e.raw_os_error() {
            Some(libc::EACCES | libc::EAGAIN) => Err(OpenError::Busy),
            // A filesystem without record locks (an NFS mount without its lock service): the
            // journal works all the same, only a second frun on it is not detected.
            Some(libc::ENOLCK) => Ok(file),
            _ => Err(OpenError::Io(e)),
        };
    }
    Ok(file)
}

/// How many other names a new journal at the default place tries (`PATH.1` …) before giving up.
const ALTERNATES: u32 = 1000;

impl Journal {
    /// A new journal to be created at `path` (it must not exist), or `resume`'s file continued.
    /// `comment` is the comment for humans; `stdout_base` is stdout's byte count now. Nothing
    /// is opened yet: see [`Journal::create_now`], [`Journal::adopt`] and
    /// [`Journal::creatable`].
    pub fn new(
        path: &Path,
        run: &str,
        comment: &str,
        stdout_base: Option<u64>,
        resume: bool,
        stdout: Option<RawFd>,
    ) -> Journal {
        let out = stdout_base.map_or("-".to_string(), |n| n.to_string());
        Journal {
            path: Mutex::new(path.to_path_buf()),
            file: Mutex::new(None),
            comment: comment.to_string(),
            resume_hint: false,
            header: if resume {
                String::new()
            } else {
                format!("run {run}\nstdout {out}\n")
            },
            new: !resume,
            alternates: false,
            failures_done: false,
            cut: std::sync::atomic::AtomicBool::new(false),
            pending: Mutex::new(Vec::new()),
            stdout,
            batches: std::sync::atomic::AtomicU64::new(0),
            lost: Mutex::new(None),
        }
    }

    /// Adds an entry to a new journal's first lines (before it is created).
    pub fn head_line(&mut self, line: &str) {
        self.header.push_str(line);
        self.header.push('\n');
    }

    /// A new journal says how to resume it, naming the file it was created as.
    pub fn with_resume_hint(mut self) -> Journal {
        self.resume_hint = true;
        self
    }

    /// A new journal takes the next free name when its own is taken (the default place:
    /// another run's checkpoint there is left alone).
    pub fn with_alternates(mut self) -> Journal {
        self.alternates = true;
        self
    }

    /// Failed batches are recorded as done (see the field).
    pub fn with_failures_done(mut self) -> Journal {
        self.failures_done = true;
        self
    }

    /// True when this journal is a new file, not the continuation of the one being resumed.
    pub fn is_new(&self) -> bool {
        self.new
    }

    /// Uses `file`, already open and locked, as this journal's file (a continued journal).
    pub fn adopt(&self, file: File) {
        *self.file.lock().unwrap_or_else(|e| e.into_inner()) = Some(file);
    }

    /// Creates and locks the file now (see [`Journal::new`]).
    pub fn create_now(&self) -> Result<(), OpenError> {
        let mut f = self.file.lock().unwrap_or_else(|e| e.into_inner());
        if f.is_none() {
            *f = Some(self.create()?);
        }
        Ok(())
    }

    /// Checks that the file could be created: its directory is writable.
    pub fn creatable(&self) -> Result<(), OpenError> {
        let path = self.path();
        let dir = match path.parent() {
            Some(d) if !d.as_os_str().is_empty() => d,
            _ => Path::new("."),
        };
        let c = std::ffi::CString::new(dir.as_os_str().as_encoded_bytes())
            .map_err(|_| OpenError::Io(io::Error::from_raw_os_error(libc::EINVAL)))?;
        // SAFETY: access with a valid C string.
        if unsafe { libc::access(c.as_ptr(), libc::W_OK | libc::X_OK) } != 0 {
            return Err(OpenError::Io(io::Error::last_os_error()));
        }
        Ok(())
    }

    fn create(&self) -> Result<File, OpenError> {
        if !self.new {
            return open_locked(&self.path(), false);
        }
        let first = self.path();
        let mut path = first.clone();
        let mut next = 1;
        let file = loop {
            match open_locked(&path, true) {
                Err(OpenError::Io(e))
                    if e.kind() == io::ErrorKind::AlreadyExists
                        && self.alternates
                        && next <= ALTERNATES =>
                {
                    let mut name = first.clone().into_os_string();
                    name.push(format!(".{next}"));
                    path = PathBuf::from(name);
                    next += 1;
                }
                r => break r?,
            }
        };
        *self.path.lock().unwrap_or_else(|e| e.into_inner()) = path.clone();
        let mut head = format!("{MAGIC}\n# {}\n", self.comment);
        if self.resume_hint {
            head.push_str(&format!(
                "# resume: frun --resume {} <the same arguments, the same input>\n",
                path.display()
            ));
        }
        head.push_str(&self.header);
        (&file).write_all(head.as_bytes()).map_err(OpenError::Io)?;
        Ok(file)
    }

    /// Where the journal is (for a new one at the default place: once it is created).
    pub fn path(&self) -> PathBuf {
        self.path.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// Why this run ended up without a journal, if it did.
    pub fn lost(&self) -> Option<String> {
        self.lost.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    fn push(&self, entry: std::fmt::Arguments) {
        let mut p = self.pending.lock().unwrap_or_else(|e| e.into_inner());
        let _ = p.write_fmt(entry);
    }

    /// Records the input's identity (once, before the first batch is published).
    pub fn input(&self, id: &InputId) {
        let size = id.size.map_or("-".to_string(), |n| n.to_string());
        self.push(format_args!(
            "input {} {} {size}\n",
            id.head_len, id.head_hash
        ));
    }

    /// Records a completed batch: input `[start, end)`, stdout at `stdout` bytes after it.
    /// Nothing is recorded after a failed batch's output (see [`Journal::failed`]).
    pub fn done(&self, start: u64, end: u64, stdout: Option<u64>) {
        if self.cut.load(std::sync::atomic::Ordering::Relaxed) {
            return;
        }
        self.batches
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        match stdout {
            Some(n) => self.push(format_args!("done {start} {end} {n}\n")),
            None => self.push(format_args!("done {start} {end} -\n")),
        }
    }

    /// Records a batch whose command failed (a non-zero status that is not retried): its
    /// output was written, but it is not done, so a resume runs it again. Where the output is
    /// counted (not `-u`) its bytes cannot be cut out of the middle of stdout, so nothing after
    /// them is recorded as done either: a resume cuts stdout back to before them and goes on
    /// from there. In a results directory (see [`Journal::with_failures_done`]) it is done.
    pub fn failed(&self, start: u64, end: u64, stdout: Option<u64>) {
        if self.failures_done {
            return self.done(start, end, stdout);
        }
        if self.cut.load(std::sync::atomic::Ordering::Relaxed) {
            return;
        }
        self.push(format_args!("failed {start} {end}\n"));
        if stdout.is_some() {
            self.cut.store(true, std::sync::atomic::Ordering::Relaxed);
        }
    }

    /// Batches recorded by this run.
    pub fn batches(&self) -> u64 {
        self.batches.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Makes the buffered entries durable: stdout first, then the entries, then the journal
    /// (created now if it does not exist yet).
    pub fn flush(&self) -> io::Result<()> {
        let entries = std::mem::take(&mut *self.pending.lock().unwrap_or_else(|e| e.into_inner()));
        if entries.is_empty() {
            return Ok(());
        }
        let mut f = self.file.lock().unwrap_or_else(|e| e.into_inner());
        if f.is_none() {
            if self.lost().is_some() {
                return Ok(());
            }
            let lost = match self.create() {
                Ok(file) => {
                    *f = Some(file);
                    None
                }
                Err(OpenError::Busy) => Some("is in use by another frun".to_string()),
                Err(OpenError::Refused(why)) => Some(why),
                Err(OpenError::Io(e)) if e.kind() == io::ErrorKind::AlreadyExists => {
                    Some(if self.alternates {
                        format!("and its .1 to .{ALTERNATES} exist (remove old checkpoints)")
                    } else {
                        "was created by another process meanwhile".to_string()
                    })
                }
                Err(OpenError::Io(e)) => return Err(e),
            };
            if let Some(why) = lost {
                *self.lost.lock().unwrap_or_else(|e| e.into_inner()) =
                    Some(format!("{} {why}", self.path().display()));
                return Ok(());
            }
        }
        let Some(file) = f.as_ref() else {
            return Ok(());
        };
        if let Some(fd) = self.stdout {
            // SAFETY: fdatasync on a descriptor that stays open for the run; failure (a pipe,
            // a terminal) only means there is nothing to sync.
            unsafe { libc::fdatasync(fd) };
        }
        (&*file).write_all(&entries)?;
        file.sync_data()
    }

    /// Ends the journal of a stopped run: everything flushed, then a `stopped` line.
    pub fn close_stopped(&self, reason: &str) -> io::Result<()> {
        self.push(format_args!("stopped {reason}\n"));
        self.flush()
    }

    /// Ends the journal of a run whose scan reached the end of its input: everything flushed,
    /// then an `end` line with the input's length.
    pub fn close_finished(&self, input_len: u64) -> io::Result<()> {
        self.push(format_args!("end {input_len}\n"));
        self.flush()
    }

    /// Removes the journal of a run that needs no resuming (if it was ever created): the file
    /// this run created or continued, and only while its name still leads to that file.
    pub fn remove(&self) -> io::Result<()> {
        let f = self.file.lock().unwrap_or_else(|e| e.into_inner());
        let Some(file) = f.as_ref() else {
            return Ok(());
        };
        let path = self.path();
        let ours = FileId::of(&file.metadata()?);
        match std::fs::symlink_metadata(&path) {
            Ok(m) if FileId::of(&m) == ours => std::fs::remove_file(&path),
            _ => Ok(()),
        }
    }
}

/// Stdout's identity for resuming: its byte count when it is a regular file.
pub fn stdout_size(fd: RawFd) -> Option<u64> {
    // SAFETY: fstat into zeroed storage.
    unsafe {
        let mut st: libc::stat = std::mem::zeroed();
        (libc::fstat(fd, &mut st) == 0 && st.st_mode & libc::S_IFMT == libc::S_IFREG)
            .then_some(st.st_size as u64)
    }
}

/// The checkpoint side of a run, set up before any work.
pub struct Prepared {
    pub journal: Option<std::sync::Arc<Journal>>,
    /// The checkpoint being resumed.
    pub resume: Option<Checkpoint>,
    /// Stdout's byte count when this run's output starts.
    pub stdout_base: u64,
    /// What resuming does to stdout, once the input is known to be the same.
    pub restore: Option<Restore>,
    /// Why this run keeps no journal, when it could have.
    pub missing: Option<String>,
}

/// Bringing stdout back to the output a checkpoint recorded: checked at start, done once the
/// input is known to be the one the checkpoint was written for.
pub struct Restore {
    from: PathBuf,
    batches: u64,
    /// The recorded byte count (None: the output went straight to stdout, `-u`).
    want: Option<u64>,
}

/// Refuses a `--checkpoint-file` path that exists: frun creates its journal there, and
/// removes it at the end, so whatever is there would be lost. The input and stdout's file are
/// told apart by identity (device and inode), not by name.
fn refuse_existing(
    path: &Path,
    input: Option<FileId>,
    stdout: Option<FileId>,
    cap: u64,
) -> Result<(), String> {
    let shown = path.display();
    let m = match std::fs::symlink_metadata(path) {
        Ok(m) => m,
        // Not there (or not reachable: creating it says why).
        Err(_) => return Ok(()),
    };
    let id = FileId::of(&m);
    let why = if m.file_type().is_symlink() {
        "is a symbolic link".to_string()
    } else if !m.file_type().is_file() {
        "exists and is not a regular file".to_string()
    } else if Some(id) == input {
        "is the input".to_string()
    } else if Some(id) == stdout {
        "is the file standard output goes to".to_string()
    } else if open_nofollow(path, OpenOptions::new().read(true))
        .ok()
        .and_then(|f| holder(&f))
        .is_some()
    {
        return Err(format!("the checkpoint {shown} is in use by another frun"));
    } else if load(path, cap).is_ok() {
        format!(
            "holds the checkpoint of a stopped run; resume it (--resume {shown}) or remove it \
             first"
        )
    } else {
        "exists and is not a frun checkpoint".to_string()
    };
    Err(format!(
        "--checkpoint-file: {shown} {why}; frun creates a new file there (name one that does \
         not exist)"
    ))
}

/// Opens (or continues) the journal and, when resuming, brings stdout back to the recorded
/// output. `run` identifies the command; `explicit` is `--checkpoint-file`; `default` is where the
/// journal goes without it (a name another file holds moves it to the next free one, `.1`,
/// `.2`, …: a stopped run's checkpoint there is left alone); `input` is the input. Errors are
/// one line for the user (exit 2).
pub fn prepare(
    run: &str,
    command: &str,
    explicit: Option<&Path>,
    resume_from: Option<&Path>,
    default: &Path,
    input: &File,
) -> Result<Prepared, String> {
    let input_meta = input.metadata().ok().filter(|m| m.file_type().is_file());
    let input_id = input_meta.as_ref().map(FileId::of);
    let stdout_id = FileId::of_fd(1);
    let cap = read_cap(input_meta.as_ref().map(|m| m.len()));
    let resume = match resume_from {
        None => None,
        Some(p) => {
            let loaded = load(p, cap).map_err(|e| format!("--resume: {e}"))?;
            if Some(loaded.id) == input_id {
                return Err(format!("--resume: {} is the input", p.display()));
            }
            if Some(loaded.id) == stdout_id {
                return Err(format!(
                    "--resume: {} is the file standard output goes to",
                    p.display()
                ));
            }
            if loaded.checkpoint.run != run {
                return Err(format!(
                    "--resume: {} was written for another command (or other options that shape \
                     its output); resume with the same arguments",
                    p.display()
                ));
            }
            Some((p, loaded))
        }
    };
    let chosen = explicit.or(resume_from);
    let path = chosen.unwrap_or(default);
    // The resumed file itself is continued, unless --checkpoint-file names another.
    let continued = match (&resume, explicit) {
        (Some(_), None) => true,
        (Some((_, loaded)), Some(to)) => {
            std::fs::symlink_metadata(to).is_ok_and(|m| FileId::of(&m) == loaded.id)
        }
        (None, _) => false,
    };
    if let Some(to) = explicit
        && !continued
    {
        refuse_existing(to, input_id, stdout_id, cap)?;
    }

    let stdout_regular = stdout_size(1).is_some();
    let restore = match &resume {
        Some((from, loaded)) => Some(Restore::check(from, &loaded.checkpoint)?),
        None => None,
    };
    let stdout_base = match &resume {
        Some((_, loaded)) => loaded.checkpoint.stdout.unwrap_or(0),
        None => stdout_position(1).unwrap_or(0),
    };
    let mut j = Journal::new(
        path,
        run,
        &format!("command: {command}"),
        stdout_regular.then_some(stdout_base),
        resume.is_some(),
        stdout_regular.then_some(1),
    )
    .with_resume_hint();
    if chosen.is_none() {
        j = j.with_alternates();
    }
    let cannot_write = |e: &io::Error| {
        format!(
            "cannot write the checkpoint {}: {}",
            path.display(),
            crate::errors::os_message(e)
        )
    };
    // A location the user chose is opened now; the default one only checked.
    let opened = match &resume {
        Some((_, loaded)) if continued => open_locked(path, false).and_then(|file| {
            // The name must still lead to the file that was read.
            match file.metadata() {
                Ok(m) if FileId::of(&m) == loaded.id => Ok(file),
                Ok(_) => Err(OpenError::Refused(format!(
                    "{} was replaced while it was read",
                    path.display()
                ))),
                Err(e) => Err(OpenError::Io(e)),
            }
        }),
        // Resuming into another file: a copy of the one resumed, continued there.
        Some((_, loaded)) => open_locked(path, true).and_then(|file| {
            (&file)
                .write_all(&loaded.text)
                .and_then(|()| file.sync_data())
                .map(|()| file)
                .map_err(OpenError::Io)
        }),
        // A new journal at a place the user chose: created now, with its header.
        None if chosen.is_some() => j.create(),
        None => {
            let (journal, missing) = match j.creatable() {
                Ok(()) => (Some(std::sync::Arc::new(j)), None),
                Err(e) => {
                    let why = match e {
                        OpenError::Io(e) => format!(
                            "cannot write {}: {}",
                            path.display(),
                            crate::errors::os_message(&e)
                        ),
                        OpenError::Refused(why) => why,
                        OpenError::Busy => format!("{} is in use by another frun", path.display()),
                    };
                    eprintln!(
                        "frun: warning: {why}; this run cannot be resumed (choose a place with \
                         --checkpoint-file)"
                    );
                    (None, Some(why))
                }
            };
            return Ok(Prepared {
                journal,
                resume: None,
                stdout_base,
                restore,
                missing,
            });
        }
    };
    match opened {
        Ok(file) => j.adopt(file),
        Err(OpenError::Busy) => {
            return Err(format!(
                "the checkpoint {} is in use by another frun",
                path.display()
            ));
        }
        Err(OpenError::Refused(why)) => return Err(format!("--resume: {why}")),
        Err(OpenError::Io(e)) => return Err(cannot_write(&e)),
    }
    Ok(Prepared {
        journal: Some(std::sync::Arc::new(j)),
        resume: resume.map(|(_, loaded)| loaded.checkpoint),
        stdout_base,
        restore,
        missing: None,
    })
}

/// Where output written to `fd` lands next, for a regular file: its size when it appends,
/// otherwise its offset.
fn stdout_position(fd: RawFd) -> Option<u64> {
    let size = stdout_size(fd)?;
    // SAFETY: fcntl and lseek on a descriptor that is open.
    unsafe {
        let flags = libc::fcntl(fd, libc::F_GETFL);
        if flags >= 0 && flags & libc::O_APPEND != 0 {
            return Some(size);
        }
        let at = libc::lseek(fd, 0, libc::SEEK_CUR);
        (at >= 0).then_some(at as u64)
    }
}

impl Restore {
    /// Refuses at start what cannot work: a regular stdout shorter than the recorded output.
    fn check(from: &Path, cp: &Checkpoint) -> Result<Restore, String> {
        if let (Some(want), Some(size)) = (cp.stdout, stdout_size(1))
            && size < want
        {
            return Err(format!(
                "--resume: stdout holds {}, fewer than the {} of output {} recorded; append \
                 to the same output file (>>) when resuming",
                count(size, "byte", "bytes"),
                count(want, "byte", "bytes"),
                from.display()
            ));
        }
        Ok(Restore {
            from: from.to_path_buf(),
            batches: cp.batches,
            want: cp.stdout,
        })
    }

    /// Cuts stdout back to the recorded output (a regular file), or says what to cut; one line
    /// on stderr either way.
    pub fn apply(&self) -> Result<(), String> {
        let from = self.from.display();
        let done = count(self.batches, "batch", "batches");
        let Some(want) = self.want else {
            eprintln!(
                "frun: resuming {from}: {done} already done; their output went straight to \
                 stdout (-u), so it cannot be matched up"
            );
            return Ok(());
        };
        let bytes = count(want, "byte", "bytes");
        let Some(size) = stdout_size(1) else {
            eprintln!(
                "frun: resuming {from}: {done} already done; keep only the first {bytes} of the \
                 earlier output (truncate -s {want} FILE)"
            );
            return Ok(());
        };
        // SAFETY: ftruncate, fcntl and lseek on stdout, a regular file.
        unsafe {
            if size > want && libc::ftruncate(1, want as libc::off_t) != 0 {
                let e = io::Error::last_os_error();
                return Err(format!(
                    "--resume: cannot truncate stdout to {bytes}: {}",
                    crate::errors::os_message(&e)
                ));
            }
            let flags = libc::fcntl(1, libc::F_GETFL);
            if flags >= 0 && flags & libc::O_APPEND == 0 {
                libc::lseek(1, want as libc::off_t, libc::SEEK_SET);
            }
        }
        if size > want {
            eprintln!(
                "frun: resuming {from}: {done} already done; truncated stdout from {size} to the \
                 {bytes} they wrote"
            );
        } else {
            eprintln!("frun: resuming {from}: {done} already done ({bytes} of output)");
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_merges_intervals_and_ignores_a_torn_line() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("cp");
        let j = Journal::new(&path, "abc", "resume: frun x", Some(5), false, None);
        j.create_now().ok().unwrap();
        j.input(&InputId::of(b"hello", Some(10)));
        j.done(4, 8, Some(20));
        j.done(0, 4, Some(30));
        j.done(10, 12, Some(41));
        j.flush().unwrap();
        drop(j);
        // A crash in the middle of a write leaves a torn last line.
        let mut f = OpenOptions::new().append(true).open(&path).unwrap();
        f.write_all(b"done 12 1").unwrap();
        let cp = read(&path).unwrap();
        assert_eq!(cp.run, "abc");
        assert_eq!(cp.intervals, [(0, 8), (10, 12)]);
        assert_eq!(cp.stdout, Some(41));
        assert_eq!(cp.batches, 3);
        assert_eq!(cp.input, Some(InputId::of(b"hello", Some(10))));
    }

    #[test]
    fn a_fresh_journal_resumes_at_its_stdout_base() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("cp");
        let j = Journal::new(&path, "r", "h", Some(7), false, None);
        j.create_now().ok().unwrap();
        drop(j);
        let cp = read(&path).unwrap();
        assert_eq!((cp.stdout, cp.batches, cp.intervals.len()), (Some(7), 0, 0));
    }

    #[test]
    fn foreign_files_are_refused() {
        for text in [
            &b""[..],
            b"hello\n",
            b"frun-checkpoint 2\nrun x\n",
            b"frun-checkpoint 1\n",
        ] {
            assert!(parse(text).is_err(), "{:?}", String::from_utf8_lossy(text));
        }
    }

    #[test]
    fn a_held_journal_is_busy_for_another_process() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("cp");
        let _j = Journal::new(&path, "r", "h", None, false, None);
        _j.create_now().ok().unwrap();
        let c_path = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: the child only calls async-signal-safe functions (open, fcntl, _exit) before
        // it exits; the parent waits for it.
        let status = unsafe {
            let pid = libc::fork();
            if pid == 0 {
                let fd = libc::open(c_path.as_ptr(), libc::O_RDWR);
                let mut lock: libc::flock = std::mem::zeroed();
                lock.l_type = libc::F_WRLCK as libc::c_short;
                let r = libc::fcntl(fd, libc::F_SETLK, &lock);
                libc::_exit(if r == 0 { 0 } else { 7 });
            }
            let mut st = 0;
            libc::waitpid(pid, &mut st, 0);
            libc::WEXITSTATUS(st)
        };
        assert_eq!(status, 7, "another process could take the lock");
    }

    #[test]
    fn a_failure_ends_what_the_run_records_where_output_is_counted() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("cp");
        let j = Journal::new(&path, "r", "h", Some(0), false, None);
        j.done(0, 2, Some(2));
        j.failed(2, 4, Some(6));
        j.done(4, 6, Some(8));
        j.flush().unwrap();
        let cp = read(&path).unwrap();
        assert_eq!((cp.intervals, cp.stdout), (vec![(0, 2)], Some(2)));
        // -u: the failed batch is only left out.
        let path = dir.path().join("cp-u");
        let j = Journal::new(&path, "r", "h", None, false, None);
        j.done(0, 2, None);
        j.failed(2, 4, None);
        j.done(4, 6, None);
        j.flush().unwrap();
        assert_eq!(read(&path).unwrap().intervals, [(0, 2), (4, 6)]);
    }

    #[test]
    fn a_taken_name_moves_a_default_journal_and_removal_spares_a_replaced_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("cp");
        std::fs::write(&path, "someone else's\n").unwrap();
        let j = Journal::new(&path, "r", "h", Some(0), false, None).with_alternates();
        j.done(0, 2, Some(2));
        j.flush().unwrap();
        assert_eq!(j.path(), dir.path().join("cp.1"));
        assert_eq!(std::fs::read(&path).unwrap(), b"someone else's\n");
        // Its name now leads to another file: it is not removed.
        std::fs::remove_file(j.path()).unwrap();
        std::fs::write(j.path(), "new\n").unwrap();
        j.remove().unwrap();
        assert_eq!(std::fs::read(j.path()).unwrap(), b"new\n");
    }

    #[test]
    fn the_read_limit_grows_with_the_input() {
        assert_eq!(read_cap(None), READ_CAP);
        assert_eq!(read_cap(Some(0)), JOURNAL_SLACK);
        assert_eq!(read_cap(Some(10)), JOURNAL_SLACK + 680);
        assert_eq!(read_cap(Some(u64::MAX)), u64::MAX);
    }

    #[test]
    fn a_journal_is_created_by_its_first_flush_only() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("cp");
        let j = Journal::new(&path, "r", "h", Some(0), false, None);
        j.flush().unwrap();
        assert!(!path.exists(), "nothing to write, yet a file");
        j.remove().unwrap();
        j.done(0, 4, Some(9));
        j.flush().unwrap();
        assert_eq!(read(&path).unwrap().intervals, [(0, 4)]);
        j.remove().unwrap();
        assert!(!path.exists());
    }
}
