//! The journal of a running run ([`Journal`]): entries buffered as batches complete, the file
//! created by the first flush (at the default place under the next free name when its own is
//! taken), stdout synced before each group of entries is appended and synced, and the file
//! removed when the run needs no resuming. It must not read a journal back, nor decide what is
//! done: the emitter reports that.

use std::fs::File;
use std::io::{self, Write};
use std::os::fd::{AsRawFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use super::file::{FileId, open_locked};
use super::{InputId, OpenError, format};

/// What is told the intervals a flush made durable.
type DurableListener = Box<dyn Fn(&[(u64, u64)]) + Send + Sync>;

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
    /// At the default place: a stopped run's journal is also linked as `./.forkrun_resume`.
    legacy_name: bool,
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
    cut: AtomicBool,
    /// Entries not yet written.
    pending: Mutex<Vec<u8>>,
    /// The line a continued journal gets before this run's first entry (empty once it is
    /// pending, and for a new journal): nothing is added to a journal this run records
    /// nothing in.
    run_start: Mutex<Vec<u8>>,
    /// Stdout, synced before entries are written when it is a regular file.
    stdout: Option<OwnedFd>,
    batches: AtomicU64,
    /// `done` entries in the file, this run's and those of the runs it continues: the next
    /// one is numbered one more.
    numbered: AtomicU64,
    /// Stdout's byte count after the last batch recorded done (u64::MAX: not counted, `-u` or
    /// not a regular file): what a resume keeps of it.
    kept_stdout: AtomicU64,
    /// Set when the journal could not be created after all (another frun took the file).
    lost: Mutex<Option<String>>,
    /// Told the input intervals of the `done` entries each flush made durable (a run shared
    /// by claims commits a claim once all of it is).
    on_durable: Option<DurableListener>,
}

/// How many other names a new journal at the default place tries (`PATH.1` …) before giving up.
const ALTERNATES: u32 = 1000;

impl Journal {
    /// A new journal to be created at `path` (it must not exist), or `resume`'s file continued.
    /// `comment` is the comment for humans; `stdout_base` is stdout's byte count now; `stdout`
    /// is (a copy of) the descriptor synced before entries are written. Nothing is opened yet: see [`Journal::create_now`], [`Journal::adopt`] and
    /// [`Journal::creatable`].
    pub fn new(
        path: &Path,
        run: &str,
        comment: &str,
        stdout_base: Option<u64>,
        resume: bool,
        stdout: Option<OwnedFd>,
    ) -> Journal {
        Journal {
            path: Mutex::new(path.to_path_buf()),
            file: Mutex::new(None),
            comment: comment.to_string(),
            resume_hint: false,
            legacy_name: false,
            header: if resume {
                String::new()
            } else {
                format::identity(run, stdout_base)
            },
            new: !resume,
            alternates: false,
            failures_done: false,
            cut: AtomicBool::new(false),
            pending: Mutex::new(Vec::new()),
            // A run that continues a journal starts with a `stdout` line: its output count
            // starts there (a new output file starts again at 0).
            run_start: Mutex::new(if resume {
                let mut p = Vec::new();
                format::run_start(&mut p, stdout_base);
                p
            } else {
                Vec::new()
            }),
            stdout,
            batches: AtomicU64::new(0),
            numbered: AtomicU64::new(0),
            kept_stdout: AtomicU64::new(stdout_base.unwrap_or(u64::MAX)),
            lost: Mutex::new(None),
            on_durable: None,
        }
    }

    /// Tells `listener` the input intervals of the `done` entries each flush made durable.
    pub fn on_durable(
        mut self,
        listener: impl Fn(&[(u64, u64)]) + Send + Sync + 'static,
    ) -> Journal {
        self.on_durable = Some(Box::new(listener));
        self
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

    /// A stopped run's journal is also linked as `./.forkrun_resume` (see the field).
    pub fn with_legacy_name(mut self) -> Journal {
        self.legacy_name = true;
        self
    }

    /// Failed batches are recorded as done (see the field).
    pub fn with_failures_done(mut self) -> Journal {
        self.failures_done = true;
        self
    }

    /// The journal continued holds `entries` `done` entries already: this run's are numbered
    /// after them.
    pub fn after_entries(self, entries: u64) -> Journal {
        self.numbered.store(entries, Ordering::Relaxed);
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
        use nix::unistd::{AccessFlags, access};
        let path = self.path();
        let dir = match path.parent() {
            Some(d) if !d.as_os_str().is_empty() => d,
            _ => Path::new("."),
        };
        access(dir, AccessFlags::W_OK | AccessFlags::X_OK).map_err(|e| OpenError::Io(e.into()))
    }

    /// Opens the file: the journal being continued, or a new one created, locked and given its
    /// first lines (under the next free name, when allowed and its own is taken).
    pub(super) fn create(&self) -> Result<File, OpenError> {
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
        let resume_as = self.resume_hint.then_some(path.as_path());
        let head = format::head(&self.comment, resume_as, &self.header);
        if let Err(e) = (&file).write_all(head.as_bytes()) {
            // A journal without its whole head is no journal: the file this run just created
            // goes again, rather than stay behind as one a resume must refuse.
            let _ = std::fs::remove_file(&path);
            return Err(OpenError::Io(e));
        }
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

    /// Adds an entry to those not yet written.
    fn push(&self, entry: impl FnOnce(&mut Vec<u8>)) {
        let mut pending = self.pending.lock().unwrap_or_else(|e| e.into_inner());
        let mut start = self.run_start.lock().unwrap_or_else(|e| e.into_inner());
        pending.append(&mut start);
        entry(&mut pending);
    }

    /// Records the input's identity (once, before the first batch is published).
    pub fn input(&self, id: &InputId) {
        self.push(|p| format::input(p, id));
    }

    /// Records a completed batch: input `[start, end)`, stdout at `stdout` bytes after it.
    /// Nothing is recorded after a failed batch's output (see [`Journal::failed`]).
    pub fn done(&self, start: u64, end: u64, stdout: Option<u64>) {
        if self.cut.load(Ordering::Relaxed) {
            return;
        }
        self.batches.fetch_add(1, Ordering::Relaxed);
        if let Some(n) = stdout {
            self.kept_stdout.fetch_max(n, Ordering::Relaxed);
        }
        // Numbered under the buffer's lock: the numbers follow the file's order.
        self.push(|p| {
            let n = self.numbered.fetch_add(1, Ordering::Relaxed) + 1;
            format::done(p, start, end, stdout, n)
        });
    }

    /// Stdout's byte count after the last batch recorded done, when it is counted: the output
    /// a resume keeps (the rest of stdout is cut off).
    pub fn kept_stdout(&self) -> Option<u64> {
        Some(self.kept_stdout.load(Ordering::Relaxed)).filter(|&n| n != u64::MAX)
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
        if self.cut.load(Ordering::Relaxed) {
            return;
        }
        self.push(|p| format::failed(p, start, end));
        if stdout.is_some() {
            self.cut.store(true, Ordering::Relaxed);
        }
    }

    /// Batches recorded by this run.
    pub fn batches(&self) -> u64 {
        self.batches.load(Ordering::Relaxed)
    }

    /// The input intervals of the `done` entries buffered, not yet made durable by a flush.
    pub fn pending_done(&self) -> Vec<(u64, u64)> {
        done_intervals(&self.pending.lock().unwrap_or_else(|e| e.into_inner()))
    }

    /// Makes the buffered entries durable: stdout first, then the entries, then the journal
    /// (created now if it does not exist yet).
    pub fn flush(&self) -> io::Result<()> {
        // The file's lock first, then the entries: two flushes write their entries in the
        // order they were made.
        let mut f = self.file.lock().unwrap_or_else(|e| e.into_inner());
        let entries = std::mem::take(&mut *self.pending.lock().unwrap_or_else(|e| e.into_inner()));
        if entries.is_empty() {
            return Ok(());
        }
        let r = self.write_entries(&mut f, &entries);
        if let (Ok(()), Some(listener)) = (&r, &self.on_durable) {
            listener(&done_intervals(&entries));
        }
        if r.is_err() {
            // Not written: the entries go back before those made meanwhile, so a later flush
            // writes them all, in order (their numbers stay one after another).
            let mut pending = self.pending.lock().unwrap_or_else(|e| e.into_inner());
            let later = std::mem::replace(&mut *pending, entries);
            pending.extend_from_slice(&later);
        }
        r
    }

    /// Writes `entries` to the journal's file `f` (created now if it does not exist yet):
    /// stdout synced first, the journal after. A write cut short (a full disk) or not synced
    /// is taken back, so the file ends with a whole line and a later entry is never glued onto
    /// a torn one.
    fn write_entries(&self, f: &mut Option<File>, entries: &[u8]) -> io::Result<()> {
        if f.is_none() {
            *f = self.create_or_lose()?;
        }
        let Some(file) = f.as_ref() else {
            return Ok(());
        };
        if let Some(fd) = &self.stdout {
            // Failure (a pipe, a terminal) only means there is nothing to sync.
            let _ = nix::unistd::fdatasync(fd);
        }
        let before = file.metadata()?.len();
        let r = (&*file).write_all(entries).and_then(|()| file.sync_data());
        if r.is_err() {
            let _ = file.set_len(before);
        }
        r
    }

    /// The file of a journal not created yet, created by its first flush; None when it cannot
    /// be (another frun took it, or every free name is taken): the run goes on without a
    /// journal, and [`Journal::lost`] says why.
    fn create_or_lose(&self) -> io::Result<Option<File>> {
        if self.lost().is_some() {
            return Ok(None);
        }
        let why = match self.create() {
            Ok(file) => return Ok(Some(file)),
            Err(OpenError::Busy) => "is in use by another frun".to_string(),
            Err(OpenError::Refused(why)) => why,
            Err(OpenError::Io(e)) if e.kind() == io::ErrorKind::AlreadyExists => {
                if self.alternates {
                    format!("and its .1 to .{ALTERNATES} exist (remove old checkpoints)")
                } else {
                    "was created by another process meanwhile".to_string()
                }
            }
            Err(OpenError::Io(e)) => return Err(e),
        };
        *self.lost.lock().unwrap_or_else(|e| e.into_inner()) =
            Some(format!("{} {why}", self.path().display()));
        Ok(None)
    }

    /// Ends the journal of a stopped run: everything flushed, then a `stopped` line.
    pub fn close_stopped(&self, reason: &str) -> io::Result<()> {
        self.push(|p| format::stopped(p, reason));
        self.flush()?;
        if self.legacy_name {
            self.link_legacy_name();
        }
        Ok(())
    }

    /// Links the journal's file (the open file itself, whatever its name leads to now) as
    /// `./.forkrun_resume`, unless that name exists: nothing there is replaced or followed.
    fn link_legacy_name(&self) {
        let f = self.file.lock().unwrap_or_else(|e| e.into_inner());
        let Some(file) = f.as_ref() else { return };
        let own = format!("/proc/self/fd/{}", file.as_raw_fd());
        let _ = nix::unistd::linkat(
            nix::fcntl::AT_FDCWD,
            own.as_str(),
            nix::fcntl::AT_FDCWD,
            super::LEGACY_PATH,
            nix::fcntl::AtFlags::AT_SYMLINK_FOLLOW,
        );
    }

    /// Ends the journal of a run whose scan reached the end of its input: everything flushed,
    /// then an `end` line with the input's length.
    pub fn close_finished(&self, input_len: u64) -> io::Result<()> {
        self.push(|p| format::end(p, input_len));
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
        if self.legacy_name {
            for other in [super::DEFAULT_PATH, super::LEGACY_PATH] {
                if Path::new(other) != path
                    && std::fs::symlink_metadata(other).is_ok_and(|m| FileId::of(&m) == ours)
                {
                    let _ = std::fs::remove_file(other);
                }
            }
        }
        match std::fs::symlink_metadata(&path) {
            Ok(m) if FileId::of(&m) == ours => std::fs::remove_file(&path),
            _ => Ok(()),
        }
    }
}

/// The input intervals of the `done` entries in `entries`.
fn done_intervals(entries: &[u8]) -> Vec<(u64, u64)> {
    entries
        .split(|&b| b == b'\n')
        .filter_map(|l| {
            let l = std::str::from_utf8(l.strip_prefix(b"done ")?).ok()?;
            let mut w = l.split(' ');
            Some((w.next()?.parse().ok()?, w.next()?.parse().ok()?))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::journal::read;

    #[test]
    fn a_held_journal_is_busy_for_another_process() {
        use nix::fcntl::{FcntlArg, OFlag, fcntl, open};
        use nix::sys::stat::Mode;
        use nix::sys::wait::{WaitStatus, waitpid};
        use nix::unistd::{ForkResult, fork};
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("cp");
        let _j = Journal::new(&path, "r", "h", None, false, None);
        _j.create_now().ok().unwrap();
        let c_path = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
        let lock = super::super::file::write_lock();
        // SAFETY: the child only calls async-signal-safe functions (open, fcntl, close, _exit)
        // and allocates nothing before it exits; the parent waits for it. nix has no `_exit`,
        // and the child must not run the parent's exit handlers (`std::process::exit` would).
        let child = unsafe {
            match fork().unwrap() {
                ForkResult::Child => {
                    let r = open(c_path.as_c_str(), OFlag::O_RDWR, Mode::empty())
                        .and_then(|fd| fcntl(&fd, FcntlArg::F_SETLK(&lock)));
                    libc::_exit(if r.is_ok() { 0 } else { 7 })
                }
                ForkResult::Parent { child } => child,
            }
        };
        let status = match waitpid(child, None) {
            Ok(WaitStatus::Exited(_, code)) => code,
            _ => -1,
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
