//! Work shared through a results directory (`--share claims`): the tasks of a run (started by
//! Slurm, ssh, an array job, or by hand, at any time) take the input a range of chunks at a
//! time from a chain of claim files in `DIR/share/`, renew a lease while they work, split off
//! the unstarted part of a busy task's claim when they run out of work, take over the claims
//! of a task whose lease ran out, and commit each range's results exactly once.
//!
//! Everything goes through operations that are atomic on network filesystems: a file is
//! written under a temporary name and then linked (claims, takeovers, commits: the first link
//! wins, the name is never replaced) or renamed (the lease, replaced in one step). No lock, no
//! shared mapping, no clock shared between hosts: a lease is a counter its owner raises, and
//! another task calls it expired when it saw the same counter for the whole lease time by its
//! own clock.
//!
//! The files, all small text:
//! - `c-A`: the claim of chunks `[A, B)`: `B TASK`. Claims form a chain from chunk 0 (each
//!   starts where the one before ends), so a claim is made only at the chain's end and two
//!   claims never overlap: a second link of `c-A` fails.
//! - `m-K`: chunk `K` is being scanned, under claim `CLAIM`: `CLAIM TASK`, or, when it is the
//!   first chunk of a claim split off another's, `K TASK END`. A task scanning a claim marks
//!   each chunk after the claim's first before it reads it, and stops where a mark of another
//!   claim is there already: whoever links a chunk's mark first has it, so a split never
//!   overlaps what the owner scans, and the owner ends its claim exactly where the split
//!   begins.
//! - `s-K`: the claim split off at chunk `K` (the index of the `m-K` that begins one):
//!   `END TASK`. Linked by the task that split, and by the owner that met the split's mark, so
//!   that it is there whichever of the two dies first.
//! - `t-A.G`: takeover number `G` of claim `A`: `TASK`, its owner from then on.
//! - `d-A`: claim `A` committed: `STEM START END`, the task files (`STEM.out`, `STEM.journal`)
//!   whose batches in input bytes `[START, END)` are the results. A later commit of the same
//!   claim (a slow task whose claim was taken over) finds it there and is discarded.
//! - `live-TASK`: the lease: `COUNTER STATE HOST PID BYTES SECONDS CLAIMS TAKEN DUPLICATES
//!   LEASE_MS SPLITS` (STATE `working` or `left`; BYTES of input committed in SECONDS of work;
//!   the lease time it was started with; claims it split off others').
//!
//! A claim ends where the next one begins: claims are the chain's and the splits', and a split
//! at `K` cuts the claim it lies in at `K`.
//!
//! This module keeps those files and says which chunks are this task's; it runs nothing and
//! reads no input: the scanner asks it for claims and reports where they begin and end, the
//! supervisor tells it which batches are durable in the task's journal.

use std::collections::HashMap;
use std::fs::OpenOptions;
use std::io::{self, Read, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant, SystemTime};

use super::ShardMap;
use crate::journal::Journal;

/// The folder of a results directory that holds the claims.
pub const SHARE_DIR: &str = "share";

/// How long a lease lasts without renewal unless `--lease` says otherwise: long enough for an
/// NFS server's failover (clients block for up to about 90 s) and a node's swap storm, which
/// must not make the other tasks run its work a second time.
pub const DEFAULT_LEASE: Duration = Duration::from_secs(120);

/// About this many chunks in an input, whatever the number of tasks (they may join later).
const GRID_CHUNKS: u64 = 4096;
/// Chunks are multiples of this.
const CHUNK_ALIGN: u64 = 4 << 10;
/// A claim is sized to take about this long at this task's rate: the longest a task that is
/// done waits for a slow one's last claim.
const CLAIM_TIME: Duration = Duration::from_secs(1);
/// How often a task counts the others working (for sizing its claims).
const COUNT_EVERY: Duration = Duration::from_secs(2);
/// A task holds at most this many claims not yet committed: the one being scanned and the one
/// before it, whose last batches may still run. More would be work held back from the others.
const OPEN_CLAIMS: usize = 2;
/// Work is not claimed that would end less than this before the job's end.
const END_MARGIN: Duration = Duration::from_secs(10);
/// A task out of work looks for a claim to split at most this often.
const SPLIT_EVERY: Duration = Duration::from_millis(100);

/// How the tasks share: the lease and whether a lost task's claims are run again.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ShareSettings {
    /// A task whose lease counter has not moved for this long is taken for lost.
    pub lease: Duration,
    /// A lost task's claims are never run again (at-most-once): they stay open, and
    /// `frun status` lists them.
    pub at_most_once: bool,
}

impl Default for ShareSettings {
    fn default() -> Self {
        ShareSettings {
            lease: DEFAULT_LEASE,
            at_most_once: false,
        }
    }
}

/// The chunk grid of an input of `size` bytes: the same in every task.
pub fn grid(size: u64, records: bool) -> (ShardMap, u64) {
    let chunk = size
        .div_ceil(GRID_CHUNKS)
        .div_ceil(CHUNK_ALIGN)
        .max(1)
        .saturating_mul(CHUNK_ALIGN);
    let map = ShardMap {
        shard: super::Shard { index: 0, count: 1 },
        chunk,
        records,
    };
    (map, size.div_ceil(chunk).max(1))
}

/// A claim of this task not yet committed.
#[derive(Debug)]
struct Open {
    /// Chunks `[a, b)`.
    a: u64,
    b: u64,
    /// Input bytes `[start, end)` of its records, once the scanner has passed its end.
    bounds: Option<(u64, u64)>,
    /// Input intervals durable in this task's journal.
    covered: Vec<(u64, u64)>,
    /// The task files its batches are written to.
    stem: String,
}

/// What this task knows and holds.
struct State {
    /// The first chunk after the end of the chain of claims, as far as this task has seen.
    frontier: u64,
    /// This pass's task files (`task-ID.A`).
    stem: String,
    open: Vec<Open>,
    /// Leases seen: task -> (its counter, when this task first saw that counter).
    seen: HashMap<String, (u64, Instant)>,
    /// Tasks seen working (for sizing claims), and when they were counted.
    live: u64,
    counted: Option<Instant>,
    /// Input bytes committed, and the time spent on them.
    committed_bytes: u64,
    /// Why no more work is claimed (the job's end), once said.
    closing: Option<String>,
    /// The last survey of the claims, for takeovers, and the owners found lost then.
    survey: Option<(Instant, Vec<Claim>, HashMap<String, bool>)>,
    /// Lost tasks whose claims this task said it takes over.
    announced: std::collections::HashSet<String>,
    /// Claims split off between passes, for the next pass's scanner (they are open already).
    pending: Vec<(u64, u64)>,
    /// When this task last looked for a claim to split.
    split_looked: Option<Instant>,
}

/// What is left of the run, as a task that has finished a pass sees it.
#[derive(Debug, PartialEq, Eq)]
pub enum Rest {
    /// Every chunk is committed (or this task takes no more work).
    Done,
    /// There is work this task can take: another pass.
    Again,
    /// Other tasks hold open claims with live leases: look again soon.
    Wait,
}

/// This task's part in a shared run.
pub struct Book {
    dir: PathBuf,
    me: String,
    host: String,
    map: ShardMap,
    chunks: u64,
    settings: ShareSettings,
    end_time: Option<SystemTime>,
    started: Instant,
    state: Mutex<State>,
    claims: AtomicU64,
    taken_over: AtomicU64,
    duplicates: AtomicU64,
    splits: AtomicU64,
    /// A chunk's mark could not be written (said once).
    mark_failed: AtomicBool,
    lease: Lease,
    /// Temporary files made (their names' numbers).
    temp: AtomicU64,
    /// Input bytes committed (the lease shows it).
    committed_bytes: AtomicU64,
    /// This task's journal, flushed at once when a claim the scanner waits on is finished
    /// (else it waits for the run's periodic flush, which throttled fast commands to a few
    /// claims per second).
    journal: std::sync::OnceLock<std::sync::Weak<Journal>>,
}

impl Drop for Book {
    fn drop(&mut self) {
        // Not joined here: the last holder may be the renewing thread itself.
        if self.stop_lease() {
            let _ = self.renew();
        }
    }
}

/// The lease thread: renews `book`'s lease every `every` until told to stop or the book is
/// gone. A failed renewal is tried again at the next turn; a lease that stays unwritable
/// expires, and the others take the work over.
fn renew_until_stopped(
    book: &std::sync::Weak<Book>,
    stop: &(Mutex<bool>, Condvar),
    every: Duration,
) {
    let (flag, wake) = stop;
    let mut stopped = flag.lock().unwrap_or_else(|e| e.into_inner());
    while !*stopped {
        stopped = wake
            .wait_timeout(stopped, every)
            .unwrap_or_else(|e| e.into_inner())
            .0;
        if *stopped {
            break;
        }
        let Some(book) = book.upgrade() else { break };
        drop(stopped);
        let _ = book.renew();
        drop(book);
        stopped = flag.lock().unwrap_or_else(|e| e.into_inner());
    }
}

impl std::fmt::Debug for Book {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Book")
            .field("task", &self.me)
            .field("dir", &self.dir)
            .field("chunks", &self.chunks)
            .finish_non_exhaustive()
    }
}

/// The lease: its counter, and the thread that renews it (which holds the book weakly: a book
/// dropped without [`Book::leave`], as when the run could not start, says `left` as it goes).
struct Lease {
    counter: AtomicU64,
    stop: Arc<(Mutex<bool>, Condvar)>,
    left: AtomicBool,
    thread: Mutex<Option<std::thread::JoinHandle<()>>>,
}

fn os(e: &io::Error) -> String {
    crate::sys::errors::os_message(e)
}

/// This host's name (`-` for characters a file name should not hold).
fn host_name() -> String {
    let raw = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap_or_default();
    let raw = match raw.trim() {
        "" => "host",
        h => h,
    };
    raw.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' {
                c
            } else {
                '-'
            }
        })
        .collect()
}

/// Whether process `pid` of this host exists.
fn process_alive(pid: u64) -> bool {
    let Ok(pid) = i32::try_from(pid) else {
        return false;
    };
    pid > 0
        && nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), None)
            != Err(nix::errno::Errno::ESRCH)
}

/// Opens a small file of the share folder for reading, never through a link, never blocking
/// on a FIFO; at most 4 KiB are read.
fn read_small(path: &Path) -> Option<String> {
    let mut f = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC)
        .open(path)
        .ok()?;
    if !f.metadata().ok()?.is_file() {
        return None;
    }
    let mut s = String::new();
    (&mut f).take(4096).read_to_string(&mut s).ok()?;
    Some(s)
}

impl Book {
    /// Joins the run shared through `results` (creating `results/share`): a task id of its
    /// own, its lease written and renewed from now on. `size` is the input's size; `records`
    /// is false for `-b` (chunks cut at exact offsets); `end_time` is the job's end (Slurm).
    pub fn join(
        results: &Path,
        size: u64,
        records: bool,
        settings: ShareSettings,
        end_time: Option<SystemTime>,
    ) -> Result<Arc<Book>, String> {
        std::fs::create_dir_all(results)
            .map_err(|e| format!("cannot create {}: {}", results.display(), os(&e)))?;
        let dir = results.join(SHARE_DIR);
        match std::fs::create_dir(&dir) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(format!("cannot create {}: {}", dir.display(), os(&e))),
        }
        let m = std::fs::symlink_metadata(&dir)
            .map_err(|e| format!("cannot use {}: {}", dir.display(), os(&e)))?;
        if !m.is_dir() {
            return Err(format!("{} is not a directory", dir.display()));
        }
        let host = host_name();
        let nanos = SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .unwrap_or_default()
            .as_nanos();
        let me = format!(
            "{host}.{}.{:x}",
            std::process::id(),
            nanos & 0xffff_ffff_ffff
        );
        let (map, chunks) = grid(size, records);
        let book = Arc::new(Book {
            dir,
            me: me.clone(),
            host,
            map,
            chunks,
            settings,
            end_time,
            started: Instant::now(),
            state: Mutex::new(State {
                frontier: 0,
                stem: format!("task-{me}.0"),
                open: Vec::new(),
                seen: HashMap::new(),
                live: 1,
                counted: None,
                committed_bytes: 0,
                closing: None,
                survey: None,
                announced: Default::default(),
                pending: Vec::new(),
                split_looked: None,
            }),
            temp: AtomicU64::new(0),
            committed_bytes: AtomicU64::new(0),
            journal: std::sync::OnceLock::new(),
            claims: AtomicU64::new(0),
            taken_over: AtomicU64::new(0),
            duplicates: AtomicU64::new(0),
            splits: AtomicU64::new(0),
            mark_failed: AtomicBool::new(false),
            lease: Lease {
                counter: AtomicU64::new(0),
                stop: Arc::new((Mutex::new(false), Condvar::new())),
                left: AtomicBool::new(false),
                thread: Mutex::new(None),
            },
        });
        book.renew()
            .map_err(|e| format!("cannot write {}: {}", book.live_path(&me).display(), os(&e)))?;
        let renewer = Arc::downgrade(&book);
        let stop = Arc::clone(&book.lease.stop);
        let every = (settings.lease / 4).max(Duration::from_millis(50));
        // The thread never takes a signal meant for the run (it is started before the run
        // blocks its stop signals): it starts with every signal blocked.
        use nix::sys::signal::{SigSet, SigmaskHow};
        let before = SigSet::all().thread_swap_mask(SigmaskHow::SIG_BLOCK).ok();
        let t = std::thread::Builder::new()
            .name("frun-lease".into())
            .spawn(move || renew_until_stopped(&renewer, &stop, every));
        if let Some(m) = before {
            let _ = m.thread_set_mask();
        }
        let t = t.map_err(|e| format!("cannot start the lease thread: {}", os(&e)))?;
        *book.lease.thread.lock().unwrap_or_else(|e| e.into_inner()) = Some(t);
        Ok(book)
    }

    /// This task's id (in its file names).
    pub fn task(&self) -> &str {
        &self.me
    }

    /// The chunk grid (chunk size; `records`).
    pub fn map(&self) -> ShardMap {
        self.map
    }

    /// The task files of the pass about to start (`task-ID.A`, without extension).
    pub fn set_stem(&self, stem: &str) {
        self.lock().stem = stem.to_string();
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn live_path(&self, task: &str) -> PathBuf {
        self.dir.join(format!("live-{task}"))
    }

    /// A new file in the share folder holding `text`, under a temporary name of this task.
    fn temp_file(&self, text: &str) -> io::Result<PathBuf> {
        let n = self.temp.fetch_add(1, Ordering::Relaxed);
        let path = self.dir.join(format!(".tmp-{}-{n}", self.me));
        let mut f = OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o644)
            .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
            .open(&path)?;
        f.write_all(text.as_bytes())?;
        Ok(path)
    }

    /// Creates `name` holding `text` unless it exists: true when this call made it.
    fn create_linked(&self, name: &str, text: &str) -> io::Result<bool> {
        let temp = self.temp_file(text)?;
        let r = std::fs::hard_link(&temp, self.dir.join(name));
        let _ = std::fs::remove_file(&temp);
        match r {
            Ok(()) => Ok(true),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => Ok(false),
            Err(e) => Err(e),
        }
    }

    /// Writes the lease once more (its counter raised).
    fn renew(&self) -> io::Result<()> {
        let n = self.lease.counter.fetch_add(1, Ordering::SeqCst) + 1;
        let state = if self.lease.left.load(Ordering::SeqCst) {
            "left"
        } else {
            "working"
        };
        let bytes = self.committed_bytes.load(Ordering::Relaxed);
        let text = format!(
            "{n} {state} {} {} {bytes} {} {} {} {} {} {}\n",
            self.host,
            std::process::id(),
            self.started.elapsed().as_secs(),
            self.claims.load(Ordering::Relaxed),
            self.taken_over.load(Ordering::Relaxed),
            self.duplicates.load(Ordering::Relaxed),
            self.settings.lease.as_millis(),
            self.splits.load(Ordering::Relaxed),
        );
        let temp = self.temp_file(&text)?;
        let r = std::fs::rename(&temp, self.live_path(&self.me));
        if r.is_err() {
            let _ = std::fs::remove_file(&temp);
        }
        r
    }

    /// Stops the renewals and says `left` (see [`Book::leave`]); true the first time.
    fn stop_lease(&self) -> bool {
        if self.lease.left.swap(true, Ordering::SeqCst) {
            return false;
        }
        let (stop, wake) = &*self.lease.stop;
        *stop.lock().unwrap_or_else(|e| e.into_inner()) = true;
        wake.notify_all();
        true
    }

    /// Leaves the run: the lease stops and says `left`, so the others take over at once what
    /// this task claimed and did not commit.
    pub fn leave(&self) {
        if !self.stop_lease() {
            return;
        }
        if let Some(t) = self
            .lease
            .thread
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take()
        {
            let _ = t.join();
        }
        let _ = self.renew();
    }

    /// This task's rate in input bytes per second (None until a claim is committed).
    fn rate(&self, st: &State) -> Option<f64> {
        let secs = self.started.elapsed().as_secs_f64();
        (st.committed_bytes > 0 && secs > 0.0).then(|| st.committed_bytes as f64 / secs)
    }

    /// How many chunks to claim at `f`: a share of what is left that shrinks as the input runs
    /// out (so no task holds much unstarted work at the end), no more than about
    /// [`CLAIM_TIME`] of work at this task's rate, and none that would not end before the job.
    fn claim_size(&self, st: &mut State, f: u64) -> u64 {
        if st.counted.is_none_or(|at| at.elapsed() >= COUNT_EVERY) {
            st.live = self.working_tasks().max(1);
            st.counted = Some(Instant::now());
        }
        let left = self.chunks - f;
        let mut m = left.div_ceil(4 * st.live.max(1)).max(1);
        match self.rate(st) {
            None => m = 1,
            Some(rate) => {
                let per_chunk = self.map.chunk as f64 / rate;
                m = m.min((CLAIM_TIME.as_secs_f64() / per_chunk).max(1.0) as u64);
                if let Some(end) = self.end_time {
                    let left_s = end
                        .duration_since(SystemTime::now())
                        .unwrap_or_default()
                        .saturating_sub(END_MARGIN)
                        .as_secs_f64();
                    let fit = (left_s / per_chunk) as u64;
                    if fit == 0 {
                        if st.closing.is_none() {
                            let why = format!(
                                "task {}: no more work taken: the job ends in {:.0} s, and a \
                                 chunk takes about {per_chunk:.1} s here",
                                self.me,
                                left_s + END_MARGIN.as_secs_f64()
                            );
                            say!("{why}");
                            st.closing = Some(why);
                        }
                        return 0;
                    }
                    m = m.min(fit);
                }
            }
        }
        m.min(left)
    }

    /// Claims the next chunks for a scanner at chunk `k`: the next range at the end of the
    /// chain, else (every chunk claimed) the claim at or after `k` of a task that was lost.
    /// None when there is nothing this scan can take. Waits while this task holds
    /// two claims not committed yet, unless `stopped` says the run is stopping.
    pub fn claim_from(&self, k: u64, stopped: &dyn Fn() -> bool) -> Option<(u64, u64)> {
        let mut st = self.lock();
        // A claim split off before this pass (it is open already): its batches go to this
        // pass's task files.
        if let Some(i) = st.pending.iter().position(|&(a, _)| a >= k) {
            let (a, b) = st.pending.remove(i);
            let stem = st.stem.clone();
            if let Some(o) = st.open.iter_mut().find(|o| o.a == a && o.bounds.is_none()) {
                o.stem = stem;
            }
            return Some((a, b));
        }
        while st.open.len() >= OPEN_CLAIMS {
            if stopped() {
                return None;
            }
            let finished = self.finished_unflushed(&st);
            drop(st);
            if let Some(journal) = finished {
                // A failure is the periodic flush's to report (it stops the run); the entries
                // stay buffered for it.
                let _ = journal.flush();
            }
            std::thread::sleep(Duration::from_millis(10));
            st = self.lock();
        }
        if st.closing.is_some() {
            return None;
        }
        let mut walked = 0;
        while st.frontier < self.chunks && st.frontier >= k {
            let f = st.frontier;
            let m = self.claim_size(&mut st, f);
            if m == 0 {
                return None;
            }
            let b = f + m;
            match self.create_linked(&format!("c-{f}"), &format!("{b} {}\n", self.me)) {
                Ok(true) => {
                    st.frontier = b;
                    let stem = st.stem.clone();
                    st.open.push(Open {
                        a: f,
                        b,
                        bounds: None,
                        covered: Vec::new(),
                        stem,
                    });
                    self.claims.fetch_add(1, Ordering::Relaxed);
                    return Some((f, b));
                }
                // Taken: after a few steps along the chain, its end is looked up at once.
                Ok(false) if walked >= 4 => {
                    walked = 0;
                    let end = self.survey().map(|c| chain_end(&c)).unwrap_or(0);
                    if end > f {
                        st.frontier = end;
                    }
                }
                Ok(false) => match self.claim_end(f) {
                    Some(e) => {
                        walked += 1;
                        st.frontier = e;
                    }
                    // Not readable (yet): another look in a moment.
                    None => {
                        drop(st);
                        std::thread::sleep(Duration::from_millis(20));
                        st = self.lock();
                    }
                },
                Err(e) => {
                    say!("cannot claim work in {}: {}", self.dir.display(), os(&e));
                    return None;
                }
            }
        }
        if st.frontier < self.chunks {
            return None;
        }
        if !self.settings.at_most_once {
            if let Some(c) = self.take_over(&mut st, k) {
                return Some(c);
            }
        }
        self.split(&mut st, k)
    }

    /// The journal whose durable entries commit this task's claims.
    pub fn set_journal(&self, journal: &Arc<Journal>) {
        let _ = self.journal.set(Arc::downgrade(journal));
    }

    /// This task's journal, when the `done` entries it holds unflushed finish one of the open
    /// claims the scanner has passed: a flush now commits it (one flush per claim at most, none
    /// while a claim's batches still run).
    fn finished_unflushed(&self, st: &State) -> Option<Arc<Journal>> {
        if st.open.iter().all(|o| o.bounds.is_none()) {
            return None;
        }
        let journal = self.journal.get()?.upgrade()?;
        let pending = journal.pending_done();
        if pending.is_empty() {
            return None;
        }
        st.open
            .iter()
            .any(|o| {
                o.bounds.is_some_and(|(start, end)| {
                    let all = o.covered.iter().chain(&pending).copied().collect();
                    covers(&crate::journal::merge_intervals(all), start, end)
                })
            })
            .then_some(journal)
    }

    /// How many leases say `working` (this task's included).
    fn working_tasks(&self) -> u64 {
        let Ok(rd) = std::fs::read_dir(&self.dir) else {
            return 1;
        };
        rd.flatten()
            .filter(|e| e.file_name().to_string_lossy().starts_with("live-"))
            .filter(|e| {
                read_small(&e.path())
                    .is_some_and(|t| t.split_whitespace().nth(1) == Some("working"))
            })
            .count() as u64
    }

    /// Where claim `c-A` ends.
    fn claim_end(&self, a: u64) -> Option<u64> {
        let text = read_small(&self.dir.join(format!("c-{a}")))?;
        let end = text.split_whitespace().next()?.parse::<u64>().ok()?;
        (end > a).then_some(end)
    }

    /// The share folder's claims (see [`read_claims`]).
    fn survey(&self) -> io::Result<Vec<Claim>> {
        read_claims(&self.dir)
    }

    /// Whether `task`'s lease ran out: it left, its process is gone (this host), or its
    /// counter has not moved for the lease's time as this task saw it.
    fn expired(&self, st: &mut State, task: &str) -> bool {
        let Some(text) = read_small(&self.live_path(task)) else {
            return true;
        };
        let f: Vec<&str> = text.split_whitespace().collect();
        let (Some(counter), Some(state)) =
            (f.first().and_then(|c| c.parse::<u64>().ok()), f.get(1))
        else {
            return true;
        };
        if *state == "left" {
            return true;
        }
        if f.get(2) == Some(&self.host.as_str())
            && !process_alive(f.get(3).and_then(|p| p.parse().ok()).unwrap_or(0))
        {
            return true;
        }
        let now = Instant::now();
        let seen = st.seen.entry(task.to_string()).or_insert((counter, now));
        if seen.0 != counter {
            *seen = (counter, now);
        }
        now.duration_since(seen.1) >= self.settings.lease
    }

    /// The scanner of claim `a` is about to read chunk `k`, one past the claim's first: true
    /// when the chunk is this claim's to scan, false when another task split the claim there
    /// (it then ends at `k`). A mark this task cannot write or read leaves the chunk to it: a
    /// chunk scanned twice is committed once, one scanned by nobody would be lost.
    pub fn reserve(&self, a: u64, k: u64) -> bool {
        let mark = format!("m-{k}");
        let foreign = match self.create_linked(&mark, &format!("{a} {}\n", self.me)) {
            Ok(true) => None,
            Ok(false) => {
                let path = self.dir.join(&mark);
                let text = (0..5).find_map(|i| {
                    if i > 0 {
                        std::thread::sleep(Duration::from_millis(10));
                    }
                    read_small(&path)
                });
                text.filter(|t| {
                    let claim = t
                        .split_whitespace()
                        .next()
                        .and_then(|c| c.parse::<u64>().ok());
                    // A mark of this claim: its owner before a takeover scanned here.
                    claim.is_some_and(|c| c != a)
                })
            }
            Err(e) => {
                if !self.mark_failed.swap(true, Ordering::Relaxed) {
                    say!(
                        "cannot mark chunk {k} in {}: {} (work there cannot be split off)",
                        self.dir.display(),
                        os(&e)
                    );
                }
                None
            }
        };
        let Some(text) = foreign else {
            return true;
        };
        // The split's index, in case the task that split died before it wrote it.
        if let [_, task, end] = text.split_whitespace().collect::<Vec<_>>()[..] {
            let _ = self.create_linked(&format!("s-{k}"), &format!("{end} {task}\n"));
        }
        let mut st = self.lock();
        if let Some(o) = st.open.iter_mut().find(|o| o.a == a && o.bounds.is_none()) {
            o.b = o.b.min(k);
        }
        false
    }

    /// Splits off the unstarted part of the busiest other live task's open claim at or after
    /// chunk `k`: of the chunks past the last its owner marked, the owner keeps a share in
    /// proportion to its rate (at most half, rounded down: a slow owner keeps none and ends
    /// with the chunk it is in), this task takes the rest. None when no claim has a chunk
    /// unstarted, or its owner reached the split point first. Looks at most every
    /// [`SPLIT_EVERY`].
    fn split(&self, st: &mut State, k: u64) -> Option<(u64, u64)> {
        if st.closing.is_some() || st.split_looked.is_some_and(|at| at.elapsed() < SPLIT_EVERY) {
            return None;
        }
        st.split_looked = Some(Instant::now());
        let claims = self.survey().ok()?;
        let mut best: Option<(u64, &Claim)> = None;
        for c in claims.iter().filter(|c| !c.committed && c.owner != self.me) {
            let unstarted = c.end.saturating_sub((c.progress + 1).max(k));
            if unstarted >= 1
                && best.is_none_or(|(u, _)| unstarted > u)
                && !self.expired(st, &c.owner)
            {
                best = Some((unstarted, c));
            }
        }
        let (_, c) = best?;
        let first = (c.progress + 1).max(k);
        let unstarted = c.end - first;
        // The owner's lease says its BYTES committed in SECONDS (fields 5 and 6).
        let theirs = read_small(&self.live_path(&c.owner)).and_then(|t| {
            let f: Vec<&str> = t.split_whitespace().collect();
            let bytes: u64 = f.get(4)?.parse().ok()?;
            let secs: u64 = f.get(5)?.parse().ok()?;
            (bytes > 0 && secs > 0).then(|| bytes as f64 / secs as f64)
        });
        // Rates are averages since each task started: one that just slowed down still shows
        // its earlier pace, so the owner never keeps more than half.
        let share = match (theirs, self.rate(st)) {
            (Some(o), Some(m)) => (o / (o + m)).min(0.5),
            _ => 0.5,
        };
        let keep = ((unstarted as f64 * share) as u64).min(unstarted - 1);
        let p = first + keep;
        let made = self.create_linked(&format!("m-{p}"), &format!("{p} {} {}\n", self.me, c.end));
        if made.ok() != Some(true) {
            return None;
        }
        let _ = self.create_linked(&format!("s-{p}"), &format!("{} {}\n", c.end, self.me));
        let stem = st.stem.clone();
        st.open.push(Open {
            a: p,
            b: c.end,
            bounds: None,
            covered: Vec::new(),
            stem,
        });
        self.splits.fetch_add(1, Ordering::Relaxed);
        Some((p, c.end))
    }

    /// Takes over the first open claim at or after chunk `k` whose owner was lost. The claims
    /// are surveyed at most once a second (a pass takes over many in a row).
    fn take_over(&self, st: &mut State, k: u64) -> Option<(u64, u64)> {
        let fresh = st
            .survey
            .as_ref()
            .is_some_and(|(at, _, _)| at.elapsed() < Duration::from_secs(1));
        if !fresh {
            st.survey = Some((Instant::now(), self.survey().ok()?, HashMap::new()));
        }
        let (at, claims, lost) = st.survey.take()?;
        let mut lost = lost;
        let mut found = None;
        for c in claims.iter().filter(|c| c.a >= k && !c.committed) {
            if c.owner == self.me {
                continue;
            }
            let gone = match lost.get(&c.owner) {
                Some(&g) => g,
                None => {
                    let g = self.expired(st, &c.owner);
                    lost.insert(c.owner.clone(), g);
                    g
                }
            };
            if !gone {
                continue;
            }
            let name = format!("t-{}.{}", c.a, c.generation + 1);
            if let Ok(true) = self.create_linked(&name, &format!("{}\n", self.me)) {
                if st.announced.insert(c.owner.clone()) {
                    say!(
                        "task {}: taking over the open claims of task {} (it left, its process \
                         is gone, or its lease ran out)",
                        self.me,
                        c.owner
                    );
                }
                let stem = st.stem.clone();
                st.open.push(Open {
                    a: c.a,
                    b: c.end,
                    bounds: None,
                    covered: Vec::new(),
                    stem,
                });
                self.taken_over.fetch_add(1, Ordering::Relaxed);
                found = Some((c.a, c.end));
                break;
            }
        }
        st.survey = Some((at, claims, lost));
        found
    }

    /// The scanner has passed claim `a`'s end: its records are input bytes `[start, end)`.
    pub fn scanned(&self, a: u64, start: u64, end: u64) {
        let mut st = self.lock();
        if let Some(o) = st.open.iter_mut().find(|o| o.a == a && o.bounds.is_none()) {
            o.bounds = Some((start, end));
        }
        self.commit_covered(&mut st);
    }

    /// Batches of input `intervals` are durable in this task's files: claims they complete are
    /// committed.
    pub fn durable(&self, intervals: &[(u64, u64)]) {
        let mut st = self.lock();
        let chunk = self.map.chunk;
        for &(s, e) in intervals {
            let k = s / chunk;
            if let Some(o) = st.open.iter_mut().find(|o| o.a <= k && k < o.b) {
                o.covered.push((s, e));
            }
        }
        self.commit_covered(&mut st);
    }

    fn commit_covered(&self, st: &mut State) {
        let mut i = 0;
        while i < st.open.len() {
            let o = &mut st.open[i];
            let Some((start, end)) = o.bounds else {
                i += 1;
                continue;
            };
            o.covered = crate::journal::merge_intervals(std::mem::take(&mut o.covered));
            if !covers(&o.covered, start, end) {
                i += 1;
                continue;
            }
            let o = st.open.remove(i);
            let text = format!("{} {start} {end}\n", o.stem);
            match self.create_linked(&format!("d-{}", o.a), &text) {
                Ok(true) => {
                    st.committed_bytes += end - start;
                    self.committed_bytes
                        .fetch_add(end - start, Ordering::Relaxed);
                }
                Ok(false) => {
                    self.duplicates.fetch_add(1, Ordering::Relaxed);
                }
                Err(e) => say!(
                    "cannot commit chunks {}..{} in {}: {} (they will be run again)",
                    o.a,
                    o.b,
                    self.dir.display(),
                    os(&e)
                ),
            }
        }
    }

    /// What is left once a pass has ended.
    pub fn rest(&self) -> Rest {
        let mut st = self.lock();
        // The next pass looks at the claims afresh.
        st.survey = None;
        if st.closing.is_some() {
            return Rest::Done;
        }
        if st.frontier < self.chunks {
            return Rest::Again;
        }
        let Ok(claims) = self.survey() else {
            return Rest::Done;
        };
        // The chain must reach the end, else chunks nobody claimed remain.
        let at = chain_end(&claims);
        if at < self.chunks {
            st.frontier = at;
            return Rest::Again;
        }
        let mut live = 0;
        let mut waiting = false;
        for c in claims.iter().filter(|c| !c.committed) {
            if c.owner == self.me {
                continue;
            }
            if self.expired(&mut st, &c.owner) {
                if !self.settings.at_most_once {
                    return Rest::Again;
                }
            } else {
                live += 1;
                waiting = true;
            }
        }
        st.live = live.max(1);
        if !waiting {
            return Rest::Done;
        }
        // Out of work while others work: the unstarted part of one's claim, for a pass.
        match self.split(&mut st, 0) {
            Some(c) => {
                st.pending.push(c);
                Rest::Again
            }
            None => Rest::Wait,
        }
    }

    /// `--stats`' line: claims taken, taken over, and commits discarded as duplicates.
    pub fn stats_line(&self) -> String {
        format!(
            "share: task={} claims={} split_off={} taken_over={} duplicates={}",
            self.me,
            self.claims.load(Ordering::Relaxed),
            self.splits.load(Ordering::Relaxed),
            self.taken_over.load(Ordering::Relaxed),
            self.duplicates.load(Ordering::Relaxed)
        )
    }
}

/// Where the chain of `claims` (sorted) ends: the first chunk no claim covers.
/// Whether `merged` intervals (no two touching) cover input bytes `[start, end)` whole.
fn covers(merged: &[(u64, u64)], start: u64, end: u64) -> bool {
    start == end || merged.iter().any(|&(s, e)| s <= start && e >= end)
}

fn chain_end(claims: &[Claim]) -> u64 {
    let mut at = 0;
    for c in claims {
        if c.a == at {
            at = c.end;
        }
    }
    at
}

/// A claim as the share folder shows it.
#[derive(Debug)]
struct Claim {
    a: u64,
    end: u64,
    owner: String,
    generation: u64,
    committed: bool,
    /// The last chunk its scan marked (`a` when none past the first).
    progress: u64,
}

impl Claim {
    fn new(a: u64) -> Claim {
        Claim {
            a,
            end: 0,
            owner: String::new(),
            generation: 0,
            committed: false,
            progress: a,
        }
    }
}

/// The claims of the share folder `dir`, sorted: the chain's (`c-A`) and those split off
/// (`s-K`), each ending where the next begins, with its owner (the last takeover's), whether it
/// is committed, and how far its scan has come. Only claims' and takeovers' files are read;
/// marks and commits are known by their names.
fn read_claims(dir: &Path) -> io::Result<Vec<Claim>> {
    let mut claims: HashMap<u64, Claim> = HashMap::new();
    let mut takeovers: Vec<(u64, u64, PathBuf)> = Vec::new();
    let mut marks: Vec<u64> = Vec::new();
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let name = entry.file_name();
        let Some((kind, rest)) = name.to_str().and_then(|n| n.split_once('-')) else {
            continue;
        };
        match kind {
            "c" | "s" => {
                let Ok(a) = rest.parse::<u64>() else { continue };
                let c = claims.entry(a).or_insert_with(|| Claim::new(a));
                if let Some(text) = read_small(&entry.path()) {
                    let mut w = text.split_whitespace();
                    c.end = w.next().and_then(|s| s.parse().ok()).unwrap_or(0);
                    if c.owner.is_empty() {
                        c.owner = w.next().unwrap_or_default().to_string();
                    }
                }
            }
            "d" => {
                if let Ok(a) = rest.parse::<u64>() {
                    claims.entry(a).or_insert_with(|| Claim::new(a)).committed = true;
                }
            }
            "m" => marks.extend(rest.parse::<u64>().ok()),
            "t" => {
                if let Some((a, g)) = rest.split_once('.') {
                    if let (Ok(a), Ok(g)) = (a.parse(), g.parse()) {
                        takeovers.push((a, g, entry.path()));
                    }
                }
            }
            _ => {}
        }
    }
    for (a, g, path) in takeovers {
        let c = claims.entry(a).or_insert_with(|| Claim::new(a));
        if g >= c.generation {
            if let Some(owner) = read_small(&path) {
                c.generation = g;
                c.owner = owner.trim().to_string();
            }
        }
    }
    let mut v: Vec<Claim> = claims.into_values().filter(|c| c.end > c.a).collect();
    v.sort_by_key(|c| c.a);
    for i in 1..v.len() {
        let next = v[i].a;
        let c = &mut v[i - 1];
        c.end = c.end.min(next);
    }
    marks.sort_unstable();
    for c in &mut v {
        let inside =
            &marks[marks.partition_point(|&m| m <= c.a)..marks.partition_point(|&m| m < c.end)];
        c.progress = inside.last().copied().unwrap_or(c.a);
    }
    Ok(v)
}

/// A committed claim, for `frun merge`: the task files whose batches in input `[start, end)`
/// are the results.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Commit {
    /// `task-ID.A`: the `.out` and `.journal` in the results directory.
    pub stem: String,
    /// Input bytes of the claim's records.
    pub start: u64,
    /// One past them.
    pub end: u64,
}

/// The commits of a results directory shared by claims (None: not a shared one).
pub fn commits(results: &Path) -> Result<Option<Vec<Commit>>, String> {
    let dir = results.join(SHARE_DIR);
    let rd = match std::fs::read_dir(&dir) {
        Ok(rd) => rd,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(format!("cannot read {}: {}", dir.display(), os(&e))),
    };
    let mut out = Vec::new();
    for entry in rd {
        let entry = entry.map_err(|e| format!("cannot read {}: {}", dir.display(), os(&e)))?;
        let name = entry.file_name();
        if !name.to_str().is_some_and(|n| n.starts_with("d-")) {
            continue;
        }
        let bad = || format!("{} is not a commit", entry.path().display());
        let text = read_small(&entry.path()).ok_or_else(bad)?;
        let f: Vec<&str> = text.split_whitespace().collect();
        let [stem, s, e] = f[..] else {
            return Err(bad());
        };
        let (Ok(start), Ok(end)) = (s.parse(), e.parse()) else {
            return Err(bad());
        };
        if stem.contains('/') || !stem.starts_with("task-") || end < start {
            return Err(bad());
        }
        out.push(Commit {
            stem: stem.to_string(),
            start,
            end,
        });
    }
    out.sort_by_key(|c| (c.start, c.end));
    Ok(Some(out))
}

/// One task's lease as `frun status` shows it.
#[derive(Debug)]
pub struct LeaseView {
    /// The task's id.
    pub task: String,
    /// `working` or `left`.
    pub state: String,
    /// Host and pid.
    pub host: String,
    /// Its pid there.
    pub pid: u32,
    /// Input bytes it committed, and in how many seconds.
    pub bytes: u64,
    /// Seconds it has worked.
    pub seconds: u64,
    /// Claims taken, taken over, duplicates discarded.
    pub claims: u64,
    /// Claims it took over from lost tasks.
    pub taken_over: u64,
    /// Its commits that came second.
    pub duplicates: u64,
    /// Claims it split off others'.
    pub splits: u64,
    /// How long ago (by this host's clock and the file's time) it was last renewed.
    pub age: Duration,
    /// Its lease time.
    pub lease: Duration,
    /// It ran on this host and its process is gone (killed, or ended without leaving).
    pub gone: bool,
}

/// What `frun status DIR` shows of a shared run.
#[derive(Debug)]
pub struct ShareView {
    /// Chunks claimed, committed, and the claims open: (first chunk, end, owner).
    pub claimed_to: u64,
    /// Committed claims and the input bytes they hold.
    pub committed: u64,
    /// Input bytes committed.
    pub committed_bytes: u64,
    /// Open claims: (first chunk, end, owner).
    pub open: Vec<(u64, u64, String)>,
    /// Every lease.
    pub leases: Vec<LeaseView>,
}

/// Reads a shared run's folder for `frun status` (None: DIR is not shared by claims).
pub fn view(results: &Path) -> Result<Option<ShareView>, String> {
    let dir = results.join(SHARE_DIR);
    if !dir.is_dir() {
        return Ok(None);
    }
    let commits = commits(results)?.unwrap_or_default();
    let claims =
        read_claims(&dir).map_err(|e| format!("cannot read {}: {}", dir.display(), os(&e)))?;
    let mut leases = Vec::new();
    let rd = std::fs::read_dir(&dir)
        .map_err(|e| format!("cannot read {}: {}", dir.display(), os(&e)))?;
    for entry in rd.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let Some(task) = name.strip_prefix("live-") else {
            continue;
        };
        let text = read_small(&entry.path()).unwrap_or_default();
        let f: Vec<&str> = text.split_whitespace().collect();
        let num = |i: usize| f.get(i).and_then(|s| s.parse::<u64>().ok()).unwrap_or(0);
        let age = entry
            .metadata()
            .ok()
            .and_then(|m| m.modified().ok())
            .and_then(|t| SystemTime::now().duration_since(t).ok())
            .unwrap_or_default();
        leases.push(LeaseView {
            task: task.to_string(),
            state: f.get(1).unwrap_or(&"?").to_string(),
            host: f.get(2).unwrap_or(&"?").to_string(),
            pid: num(3) as u32,
            bytes: num(4),
            seconds: num(5),
            claims: num(6),
            taken_over: num(7),
            duplicates: num(8),
            age,
            lease: Duration::from_millis(num(9)),
            splits: num(10),
            gone: f.get(2) == Some(&host_name().as_str()) && !process_alive(num(3)),
        });
    }
    let open = claims
        .iter()
        .filter(|c| !c.committed)
        .map(|c| (c.a, c.end, c.owner.clone()))
        .collect();
    leases.sort_by(|a, b| a.task.cmp(&b.task));
    Ok(Some(ShareView {
        claimed_to: chain_end(&claims),
        committed: claims.iter().filter(|c| c.committed).count() as u64,
        committed_bytes: commits.iter().map(|c| c.end - c.start).sum(),
        open,
        leases,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn book(dir: &Path, size: u64) -> Arc<Book> {
        Book::join(dir, size, true, ShareSettings::default(), None).unwrap()
    }

    #[test]
    fn two_tasks_claim_disjoint_ranges_that_chain_to_the_end() {
        let d = tempfile::tempdir().unwrap();
        let (a, b) = (book(d.path(), 1 << 20), book(d.path(), 1 << 20));
        let mut got = Vec::new();
        let mut k = (0, 0);
        loop {
            let ra = a.claim_from(k.0, &|| false);
            let rb = b.claim_from(k.1, &|| false);
            if ra.is_none() && rb.is_none() {
                break;
            }
            let chunk = a.map.chunk;
            for (book, r, k) in [(&a, ra, &mut k.0), (&b, rb, &mut k.1)] {
                if let Some(r) = r {
                    *k = r.1;
                    got.push(r);
                    // Scanned and done at once: committed, so the next claim is not held back.
                    book.scanned(r.0, r.0 * chunk, r.1 * chunk);
                    book.durable(&[(r.0 * chunk, r.1 * chunk)]);
                }
            }
        }
        got.sort();
        let mut at = 0;
        for (s, e) in &got {
            assert_eq!(*s, at, "{got:?}");
            at = *e;
        }
        assert_eq!(at, a.chunks);
        a.leave();
        b.leave();
    }

    #[test]
    fn a_scanner_waiting_on_finished_claims_has_them_committed_without_a_periodic_flush() {
        let d = tempfile::tempdir().unwrap();
        let a = book(d.path(), 1 << 20);
        let chunk = a.map.chunk;
        let j = Journal::new(&d.path().join("j"), "run", "", Some(0), false, None);
        let a_j = Arc::new(j.on_durable({
            let a = Arc::clone(&a);
            move |done| a.durable(done)
        }));
        a.set_journal(&a_j);
        // Two claims open (scanned, their batches done but only buffered in the journal):
        // the next claim waits for a commit, which takes a flush.
        for _ in 0..OPEN_CLAIMS {
            let (s, e) = a.claim_from(0, &|| false).unwrap();
            a.scanned(s, s * chunk, e * chunk);
            a_j.done(s * chunk, e * chunk, None);
        }
        assert_eq!(a.lock().open.len(), OPEN_CLAIMS);
        let (tx, rx) = std::sync::mpsc::channel();
        let waiter = Arc::clone(&a);
        std::thread::spawn(move || tx.send(waiter.claim_from(0, &|| false)));
        // Nothing else flushes here (the run's periodic flush is not running): the wait itself
        // flushes once the claims it waits on are finished.
        let got = rx
            .recv_timeout(Duration::from_secs(30))
            .expect("the claim waited for ever");
        assert!(got.is_some());
        assert_eq!(commits(d.path()).unwrap().unwrap().len(), OPEN_CLAIMS);
        a.leave();
    }

    #[test]
    fn a_commit_counts_once_and_a_late_one_is_a_duplicate() {
        let d = tempfile::tempdir().unwrap();
        let a = book(d.path(), 1000);
        let (s, e) = a.claim_from(0, &|| false).unwrap();
        assert_eq!((s, e), (0, 1));
        a.scanned(0, 0, 1000);
        a.durable(&[(0, 600)]);
        assert!(commits(d.path()).unwrap().unwrap().is_empty());
        a.durable(&[(600, 1000)]);
        let c = commits(d.path()).unwrap().unwrap();
        assert_eq!(c.len(), 1);
        assert_eq!((c[0].start, c[0].end), (0, 1000));
        // The same claim, taken over and committed by another task, comes second.
        let b = book(d.path(), 1000);
        b.lock().open.push(Open {
            a: 0,
            b: 1,
            bounds: Some((0, 1000)),
            covered: vec![(0, 1000)],
            stem: "task-x.0".into(),
        });
        b.durable(&[]);
        assert_eq!(b.duplicates.load(Ordering::Relaxed), 1);
        assert_eq!(commits(d.path()).unwrap().unwrap(), c);
        a.leave();
        b.leave();
    }

    #[test]
    fn a_task_that_left_has_its_open_claims_taken_over() {
        let d = tempfile::tempdir().unwrap();
        let a = book(d.path(), 1000);
        assert_eq!(a.claim_from(0, &|| false), Some((0, 1)));
        let b = book(d.path(), 1000);
        // Every chunk is claimed, the owner works: nothing to take.
        assert_eq!(b.claim_from(0, &|| false), None);
        assert_eq!(b.rest(), Rest::Wait);
        a.leave();
        assert_eq!(b.rest(), Rest::Again);
        assert_eq!(b.claim_from(0, &|| false), Some((0, 1)));
        assert_eq!(b.taken_over.load(Ordering::Relaxed), 1);
        // A third task sees b's takeover as the owner, which works.
        let c = book(d.path(), 1000);
        assert_eq!(c.claim_from(0, &|| false), None);
        b.scanned(0, 0, 1000);
        b.durable(&[(0, 1000)]);
        assert_eq!(c.rest(), Rest::Done);
        b.leave();
        c.leave();
    }

    /// Ten chunks of 4 KiB, all claimed by `a` in one claim, whose scanner has marked
    /// chunks 1 and 2.
    fn ten_chunks_claimed_by_one(dir: &Path) -> Arc<Book> {
        let a = book(dir, 10 * 4096);
        assert_eq!(a.chunks, 10);
        assert!(a.create_linked("c-0", &format!("10 {}\n", a.me)).unwrap());
        {
            let mut st = a.lock();
            st.frontier = 10;
            st.open.push(Open {
                a: 0,
                b: 10,
                bounds: None,
                covered: Vec::new(),
                stem: "task-a.0".into(),
            });
        }
        assert!(a.reserve(0, 1));
        assert!(a.reserve(0, 2));
        a
    }

    #[test]
    fn a_task_out_of_work_splits_off_unstarted_chunks_and_the_owner_stops_there() {
        let d = tempfile::tempdir().unwrap();
        let a = ten_chunks_claimed_by_one(d.path());
        let b = book(d.path(), 10 * 4096);
        // Chunks 3..10 are unstarted: with no rates known, a keeps 3 of the 7.
        assert_eq!(b.claim_from(0, &|| false), Some((6, 10)));
        assert_eq!(b.splits.load(Ordering::Relaxed), 1);
        for k in 3..6 {
            assert!(a.reserve(0, k), "chunk {k}");
        }
        assert!(!a.reserve(0, 6));
        assert_eq!(a.lock().open[0].b, 6);
        // A third task splits b's claim in turn, not a's scanned part.
        let c = book(d.path(), 10 * 4096);
        std::thread::sleep(SPLIT_EVERY);
        assert_eq!(c.claim_from(0, &|| false), Some((8, 10)));
        assert!(b.reserve(6, 7));
        assert!(!b.reserve(6, 8));
        let claims = read_claims(&d.path().join(SHARE_DIR)).unwrap();
        let ranges: Vec<_> = claims.iter().map(|c| (c.a, c.end)).collect();
        assert_eq!(ranges, [(0, 6), (6, 8), (8, 10)]);
        assert_eq!(chain_end(&claims), 10);
        // Each commits its part, in bytes that meet.
        let chunk = a.map.chunk;
        for (t, x, y) in [(&a, 0, 6), (&b, 6, 8), (&c, 8, 10)] {
            t.scanned(x, x * chunk, y * chunk);
            t.durable(&[(x * chunk, y * chunk)]);
        }
        let commits = commits(d.path()).unwrap().unwrap();
        let bytes: Vec<_> = commits.iter().map(|c| (c.start, c.end)).collect();
        assert_eq!(
            bytes,
            [
                (0, 6 * chunk),
                (6 * chunk, 8 * chunk),
                (8 * chunk, 10 * chunk)
            ]
        );
        for t in [&a, &b, &c] {
            assert_eq!(t.rest(), Rest::Done);
        }
        let v = view(d.path()).unwrap().unwrap();
        assert_eq!((v.claimed_to, v.committed, v.open.len()), (10, 3, 0));
        for t in [a, b, c] {
            t.leave();
        }
    }

    #[test]
    fn a_split_whose_index_is_missing_is_indexed_by_the_owner_that_meets_it() {
        let d = tempfile::tempdir().unwrap();
        let a = ten_chunks_claimed_by_one(d.path());
        let b = book(d.path(), 10 * 4096);
        assert_eq!(b.claim_from(0, &|| false), Some((6, 10)));
        // As if b died between its mark and its index.
        std::fs::remove_file(d.path().join(SHARE_DIR).join("s-6")).unwrap();
        for k in 3..6 {
            assert!(a.reserve(0, k));
        }
        assert!(!a.reserve(0, 6));
        let index = read_small(&d.path().join(SHARE_DIR).join("s-6")).unwrap();
        assert_eq!(index, format!("10 {}\n", b.me));
        a.leave();
        b.leave();
    }

    #[test]
    fn the_last_unstarted_chunk_is_taken_and_nothing_scanned_is() {
        let d = tempfile::tempdir().unwrap();
        let a = ten_chunks_claimed_by_one(d.path());
        for k in 3..9 {
            assert!(a.reserve(0, k));
        }
        // Only chunk 9 is unstarted: a keeps none (it ends with the chunk it is in).
        let b = book(d.path(), 10 * 4096);
        assert_eq!(b.claim_from(0, &|| false), Some((9, 10)));
        assert!(!a.reserve(0, 9));
        // Everything is scanned: nothing is left to split.
        std::thread::sleep(SPLIT_EVERY);
        let c = book(d.path(), 10 * 4096);
        assert_eq!(c.claim_from(0, &|| false), None);
        assert_eq!(c.rest(), Rest::Wait);
        a.leave();
        b.leave();
        c.leave();
    }

    #[test]
    fn a_rest_that_splits_hands_the_claim_to_the_next_pass() {
        let d = tempfile::tempdir().unwrap();
        let a = ten_chunks_claimed_by_one(d.path());
        let b = book(d.path(), 10 * 4096);
        // b's pass found nothing (the split was not due yet), its rest splits.
        b.lock().frontier = 10;
        assert_eq!(b.rest(), Rest::Again);
        // Its batches are the next pass's: they are committed as that pass's files.
        b.set_stem("task-b.1");
        assert_eq!(b.claim_from(0, &|| false), Some((6, 10)));
        let chunk = b.map.chunk;
        b.scanned(6, 6 * chunk, 10 * chunk);
        b.durable(&[(6 * chunk, 10 * chunk)]);
        let c = commits(d.path()).unwrap().unwrap();
        assert_eq!(c[0].stem, "task-b.1");
        a.leave();
        b.leave();
    }

    #[test]
    fn a_takeover_scans_on_over_its_lost_owners_marks() {
        let d = tempfile::tempdir().unwrap();
        let a = ten_chunks_claimed_by_one(d.path());
        a.leave();
        let b = book(d.path(), 10 * 4096);
        assert_eq!(b.claim_from(0, &|| false), Some((0, 10)));
        assert_eq!(b.taken_over.load(Ordering::Relaxed), 1);
        for k in 1..10 {
            assert!(b.reserve(0, k), "chunk {k}");
        }
        b.leave();
    }

    #[test]
    fn a_lease_that_stops_moving_expires_after_its_time() {
        let d = tempfile::tempdir().unwrap();
        let quick = ShareSettings {
            lease: Duration::from_millis(300),
            at_most_once: false,
        };
        let a = Book::join(d.path(), 1000, true, quick, None).unwrap();
        assert_eq!(a.claim_from(0, &|| false), Some((0, 1)));
        // The lease stops being renewed (a hung node), without saying it left.
        *a.lease.stop.0.lock().unwrap() = true;
        a.lease.stop.1.notify_all();
        a.lease
            .thread
            .lock()
            .unwrap()
            .take()
            .unwrap()
            .join()
            .unwrap();
        let mut text = read_small(&a.live_path(&a.me)).unwrap();
        // As if on another host: the process check does not apply.
        text = text.replacen(&a.host, "elsewhere", 1);
        std::fs::write(a.live_path(&a.me), text).unwrap();
        let b = Book::join(d.path(), 1000, true, quick, None).unwrap();
        assert_eq!(b.claim_from(0, &|| false), None);
        assert_eq!(b.rest(), Rest::Wait);
        std::thread::sleep(Duration::from_millis(400));
        assert_eq!(b.rest(), Rest::Again);
        b.leave();
    }

    #[test]
    fn at_most_once_leaves_a_lost_tasks_claims_alone() {
        let d = tempfile::tempdir().unwrap();
        let a = book(d.path(), 1000);
        assert_eq!(a.claim_from(0, &|| false), Some((0, 1)));
        a.leave();
        let once = ShareSettings {
            at_most_once: true,
            ..ShareSettings::default()
        };
        let b = Book::join(d.path(), 1000, true, once, None).unwrap();
        assert_eq!(b.claim_from(0, &|| false), None);
        assert_eq!(b.rest(), Rest::Done);
        let v = view(d.path()).unwrap().unwrap();
        assert_eq!(v.open.len(), 1);
        assert_eq!(v.leases.len(), 2);
        b.leave();
    }
}
