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

/// Reads a journal; the error is a one-line explanation.
pub fn read(path: &Path) -> Result<Checkpoint, String> {
    let text = std::fs::read(path).map_err(|e| {
        format!(
            "cannot read {}: {}",
            path.display(),
            crate::errors::os_message(&e)
        )
    })?;
    parse(&text).map_err(|e| format!("{} is not a usable checkpoint: {e}", path.display()))
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
            ["stdout", n] => {
                if base.is_none() {
                    base = Some(num(n)?);
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
            ["stopped", ..] => {}
            _ => return Err(format!("unknown entry '{line}'")),
        }
    }
    if cp.run.is_empty() {
        return Err("it names no command".into());
    }
    cp.base = base;
    if cp.batches == 0 {
        cp.stdout = base;
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
    path: PathBuf,
    /// The file, once it exists: a new journal is created by its first flush, so a run that ends
    /// within one sync period never touches the disk.
    file: Mutex<Option<File>>,
    /// What a new journal starts with (empty when continuing one).
    header: String,
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

/// Opens (creating) and locks a journal file. The lock is a process-owned (POSIX) lock: it dies
/// with frun, even while a child spawned a moment before still holds a copy of the descriptor
/// (an `flock` would live on in it).
fn open_locked(path: &Path) -> Result<File, OpenError> {
    let file = OpenOptions::new()
        .create(true)
        .append(true)
        .read(true)
        .mode(0o600)
        .custom_flags(libc::O_CLOEXEC)
        .open(path)
        .map_err(OpenError::Io)?;
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

impl Journal {
    /// A new journal at `path` (replacing an old one when it is first written), or `resume`'s
    /// file continued. `header` is the comment for humans; `stdout_base` is stdout's byte count
    /// now. Nothing is opened yet: see [`Journal::create_now`] and [`Journal::creatable`].
    pub fn new(
        path: &Path,
        run: &str,
        header: &str,
        stdout_base: Option<u64>,
        resume: bool,
        stdout: Option<RawFd>,
    ) -> Journal {
        let out = stdout_base.map_or("-".to_string(), |n| n.to_string());
        Journal {
            path: path.to_path_buf(),
            file: Mutex::new(None),
            header: if resume {
                String::new()
            } else {
                format!("{MAGIC}\n# {header}\nrun {run}\nstdout {out}\n")
            },
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

    /// True when this journal is a new file, not the continuation of the one being resumed.
    pub fn is_new(&self) -> bool {
        !self.header.is_empty()
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
        let dir = match self.path.parent() {
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
        let file = open_locked(&self.path)?;
        if !self.header.is_empty() {
            // A left-over journal is replaced; truncating costs a filesystem transaction, so a
            // new (empty) file is not truncated.
            if file.metadata().map_err(OpenError::Io)?.len() > 0 {
                file.set_len(0).map_err(OpenError::Io)?;
            }
            (&file)
                .write_all(self.header.as_bytes())
                .map_err(OpenError::Io)?;
        }
        Ok(file)
    }

    pub fn path(&self) -> &Path {
        &self.path
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
    pub fn done(&self, start: u64, end: u64, stdout: Option<u64>) {
        self.batches
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        match stdout {
            Some(n) => self.push(format_args!("done {start} {end} {n}\n")),
            None => self.push(format_args!("done {start} {end} -\n")),
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
            match self.create() {
                Ok(file) => *f = Some(file),
                Err(OpenError::Busy) => {
                    *self.lost.lock().unwrap_or_else(|e| e.into_inner()) =
                        Some(format!("{} is in use by another frun", self.path.display()));
                    return Ok(());
                }
                Err(OpenError::Io(e)) => return Err(e),
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

    /// Removes the journal of a run that needs no resuming (if it was ever created).
    pub fn remove(&self) -> io::Result<()> {
        let f = self.file.lock().unwrap_or_else(|e| e.into_inner());
        if f.is_none() {
            return Ok(());
        }
        std::fs::remove_file(&self.path)
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

/// Opens (or continues) the journal and, when resuming, brings stdout back to the recorded
/// output. `run` identifies the command; `explicit` is `--checkpoint-file`; `default` is where the
/// journal goes without it. Errors are one line for the user (exit 2).
pub fn prepare(
    run: &str,
    command: &str,
    explicit: Option<&Path>,
    resume_from: Option<&Path>,
    default: &Path,
) -> Result<Prepared, String> {
    let resume = match resume_from {
        None => None,
        Some(p) => {
            let cp = read(p).map_err(|e| format!("--resume: {e}"))?;
            if cp.run != run {
                return Err(format!(
                    "--resume: {} was written for another command (or other options that shape \
                     its output); resume with the same arguments",
                    p.display()
                ));
            }
            Some((p, cp))
        }
    };
    let chosen = explicit.or(resume_from);
    let path = chosen.unwrap_or(default);
    if let (Some((from, _)), Some(to)) = (&resume, explicit)
        && !same_file(from, to)
    {
        std::fs::copy(from, to).map_err(|e| {
            format!(
                "cannot write the checkpoint {}: {}",
                to.display(),
                crate::errors::os_message(&e)
            )
        })?;
    }

    let stdout_regular = stdout_size(1).is_some();
    let restore = match &resume {
        Some((from, cp)) => Some(Restore::check(from, cp)?),
        None => None,
    };
    let stdout_base = match &resume {
        Some((_, cp)) => cp.stdout.unwrap_or(0),
        None => stdout_position(1).unwrap_or(0),
    };
    let header = format!(
        "command: {command}\n# resume: frun --resume {} <the same arguments, the same input>",
        path.display()
    );
    let j = Journal::new(
        path,
        run,
        &header,
        stdout_regular.then_some(stdout_base),
        resume.is_some(),
        stdout_regular.then_some(1),
    );
    // A location the user chose is opened now; the default one only checked.
    let opened = if chosen.is_some() {
        j.create_now()
    } else {
        j.creatable()
    }
    .map(|()| j);
    let (journal, missing) = match opened {
        Ok(j) => (Some(std::sync::Arc::new(j)), None),
        Err(OpenError::Busy) if chosen.is_some() => {
            return Err(format!(
                "the checkpoint {} is in use by another frun",
                path.display()
            ));
        }
        Err(OpenError::Io(e)) if chosen.is_some() => {
            return Err(format!(
                "cannot write the checkpoint {}: {}",
                path.display(),
                crate::errors::os_message(&e)
            ));
        }
        Err(OpenError::Busy) => (
            None,
            Some(format!("{} is in use by another frun", path.display())),
        ),
        Err(OpenError::Io(e)) => {
            let why = format!(
                "cannot write {}: {}",
                path.display(),
                crate::errors::os_message(&e)
            );
            eprintln!(
                "frun: warning: {why}; this run cannot be resumed (choose a place with \
                 --checkpoint-file)"
            );
            (None, Some(why))
        }
    };
    Ok(Prepared {
        journal,
        resume: resume.map(|(_, cp)| cp),
        stdout_base,
        restore,
        missing,
    })
}

fn same_file(a: &Path, b: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (std::fs::metadata(a), std::fs::metadata(b)) {
        (Ok(x), Ok(y)) => x.dev() == y.dev() && x.ino() == y.ino(),
        _ => false,
    }
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
}

#[cfg(test)]
mod lazy_tests {
    use super::*;

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
