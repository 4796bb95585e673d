//! The calling interpreter's side of a run: forks the engine, then serves it until it ends —
//! forks a worker whenever it asks (holding the GIL, as `os.fork` does, so each worker has
//! every global and closure), reaps workers, feeds the records of a streamed source to the
//! engine's stdin and reads the results from its stdout. The GIL is released while it waits.
//!
//! It schedules, orders and retries nothing (the engine does); on Ctrl-C, an error or when the
//! caller drops the run, it stops the engine and leaves no worker behind.

use std::collections::VecDeque;
use std::io;
use std::os::fd::{AsFd, AsRawFd, OwnedFd, RawFd};
use std::sync::atomic::{AtomicBool, Ordering};

use frun_engine::exec::shell;
use frun_engine::exec::spawn::ChildEnd;
use frun_engine::sys::{Disposition, set_disposition};
use nix::errno::Errno;
use nix::fcntl::{FcntlArg, OFlag, fcntl};
use nix::sys::signal::{Signal, kill};
use nix::unistd::{Pid, dup2_stderr, dup2_stdin, dup2_stdout};
use pyo3::exceptions::{PyOSError, PyValueError};
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyIterator, PyList, PyModule, PyString};

use crate::engine::{ASK_REAP, ASK_START, engine_main};
use crate::feeder::{Feeder, Taken};
use crate::frames;
use crate::options::{InputArg, OnError, Options};
use crate::text::{check_one_record_each, push_record};
use crate::worker::{Job, worker_main};

/// Waits for our own child `pid`; its raw wait status (0 when it cannot be had).
fn wait_pid(pid: libc::pid_t) -> libc::c_int {
    frun_engine::sys::wait_status(pid).unwrap_or(0)
}

fn os_err(e: impl Into<io::Error>) -> PyErr {
    PyOSError::new_err(format!("frun: {}", e.into()))
}

/// Where the records come from, as the parent feeds them.
pub(crate) enum Feed {
    /// The engine reads a file itself.
    None,
    /// Each item of a list is one record, read in place by index.
    List { list: Py<PyList>, next: usize },
    /// Each item of an iterator is one record (read by a [`Feeder`] once the run starts).
    Items(Py<PyIterator>),
    /// An iterator being read on a thread of its own.
    Thread(Feeder),
    /// A binary file object's bytes, read in chunks.
    File(Py<PyAny>),
}

/// A source, sorted out: what the engine is told to read, and what the parent feeds.
pub(crate) struct Source {
    pub input: InputArg,
    pub feed: Feed,
    /// A bytes-like source, copied into a memory file the engine maps.
    pub memfd: Option<OwnedFd>,
}

/// Sorts out `source`: a path (mapped), bytes-like (copied to a memory file), a binary file
/// object (read), or any iterable of `str`/`bytes` (one record each).
pub(crate) fn source(py: Python<'_>, obj: &Bound<'_, PyAny>) -> PyResult<Source> {
    let builtins = py.import("builtins")?;
    if obj.cast::<PyString>().is_ok() || obj.hasattr("__fspath__")? {
        let path: std::path::PathBuf =
            py.import("os")?.call_method1("fspath", (obj,))?.extract()?;
        return Ok(Source {
            input: InputArg::Path(path),
            feed: Feed::None,
            memfd: None,
        });
    }
    let bytes_like = (
        builtins.getattr("bytes")?,
        builtins.getattr("bytearray")?,
        builtins.getattr("memoryview")?,
    );
    if obj.is_instance(bytes_like.into_pyobject(py)?.as_any())? {
        let data = builtins.getattr("bytes")?.call1((obj,))?;
        let data = data.cast::<PyBytes>()?;
        let fd =
            nix::sys::memfd::memfd_create(c"frun-input", nix::sys::memfd::MFdFlags::MFD_CLOEXEC)
                .map_err(os_err)?;
        let mut f = std::fs::File::from(fd);
        io::Write::write_all(&mut f, data.as_bytes()).map_err(os_err)?;
        let fd = OwnedFd::from(f);
        let path = format!("/proc/self/fd/{}", fd.as_raw_fd());
        return Ok(Source {
            input: InputArg::Path(path.into()),
            feed: Feed::None,
            memfd: Some(fd),
        });
    }
    if obj.hasattr("read")? {
        return Ok(Source {
            input: InputArg::Stdin,
            feed: Feed::File(obj.clone().unbind()),
            memfd: None,
        });
    }
    if let Ok(list) = obj.cast_exact::<PyList>() {
        return Ok(Source {
            input: InputArg::Stdin,
            feed: Feed::List {
                list: list.clone().unbind(),
                next: 0,
            },
            memfd: None,
        });
    }
    let items = obj.try_iter().map_err(|_| {
        PyValueError::new_err(
            "frun: source must be a path, bytes-like, a binary file or an iterable of str/bytes",
        )
    })?;
    Ok(Source {
        input: InputArg::Stdin,
        feed: Feed::Items(items.unbind()),
        memfd: None,
    })
}

/// Warns once per process when other threads run at a fork: the workers get a copy of this
/// thread only, and locks the others held stay locked there.
fn warn_threads(py: Python<'_>) -> PyResult<()> {
    static WARNED: AtomicBool = AtomicBool::new(false);
    // Not imported: no thread was started through it, and importing it now would cost a
    // garbage collection over the whole heap, which may be large.
    let Some(threading) = py
        .import("sys")?
        .getattr("modules")?
        .call_method1("get", ("threading",))?
        .extract::<Option<Bound<'_, PyAny>>>()?
    else {
        return Ok(());
    };
    let count: usize = threading.call_method0("active_count")?.extract()?;
    if count > 1 && !WARNED.swap(true, Ordering::Relaxed) {
        let warning = py.import("builtins")?.getattr("RuntimeWarning")?;
        py.import("warnings")?.call_method1(
            "warn",
            (
                "frun: other threads are running: the forked workers get a copy of the calling \
                 thread only (a lock another thread holds stays locked in them)",
                warning,
                2,
            ),
        )?;
    }
    Ok(())
}

/// What a run returns: framed results of a function, or a command's raw output.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    Function,
    Command,
}

/// A running run, as the caller serves it.
pub(crate) struct Run {
    mode: Mode,
    func: Option<Py<PyAny>>,
    opts: Options,
    engine: Option<libc::pid_t>,
    ctl: Option<OwnedFd>,
    out: Option<OwnedFd>,
    feed_fd: Option<OwnedFd>,
    feed: Feed,
    pending: Vec<u8>,
    pending_at: usize,
    /// Result bytes read and not yet decoded (a command's whole output).
    buf: Vec<u8>,
    /// The engine's stderr (function runs: its messages speak of the command line).
    err: Option<OwnedFd>,
    live: Vec<libc::pid_t>,
    pub(crate) results: VecDeque<Py<PyAny>>,
    pub(crate) errors: Vec<Py<PyAny>>,
    pub(crate) done: bool,
    /// A record's error, raised once the results before it are out.
    failure: Option<PyErr>,
    _memfd: Option<OwnedFd>,
}

/// A pipe of 1 MiB where the system allows (64 KiB otherwise): records and results cross
/// it in large writes, with fewer wake-ups on each side.
fn pipe() -> PyResult<(OwnedFd, OwnedFd)> {
    let (r, w) = nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC).map_err(os_err)?;
    // A refusal leaves the pipe as it was.
    let _ = fcntl(&w, FcntlArg::F_SETPIPE_SZ(1 << 20));
    Ok((r, w))
}

fn nonblocking(fd: &OwnedFd) {
    if let Ok(fl) = fcntl(fd, FcntlArg::F_GETFL) {
        let _ = fcntl(
            fd,
            FcntlArg::F_SETFL(OFlag::from_bits_retain(fl) | OFlag::O_NONBLOCK),
        );
    }
}

impl Run {
    /// Starts a run: forks the engine, which starts asking for workers at once.
    pub(crate) fn start(
        py: Python<'_>,
        func: Option<&Bound<'_, PyAny>>,
        src: Source,
        opts: Options,
        command: Option<Vec<std::ffi::OsString>>,
        stdin: bool,
    ) -> PyResult<Run> {
        let mode = if command.is_some() {
            Mode::Command
        } else {
            Mode::Function
        };
        let cfg = crate::options::config(&opts, &src.input, command, stdin)?;
        warn_threads(py)?;
        let (out_r, out_w) = pipe()?;
        let feed = match src.input {
            InputArg::Stdin => Some(pipe()?),
            InputArg::Path(_) => None,
        };
        let ctl = match mode {
            Mode::Function => {
                let (a, b) = std::os::unix::net::UnixStream::pair().map_err(os_err)?;
                Some((OwnedFd::from(a), OwnedFd::from(b)))
            }
            Mode::Command => None,
        };
        let err = match mode {
            Mode::Function => Some(
                nix::sys::memfd::memfd_create(
                    c"frun-messages",
                    nix::sys::memfd::MFdFlags::MFD_CLOEXEC,
                )
                .map_err(os_err)?,
            ),
            Mode::Command => None,
        };
        // SAFETY: the child runs only Rust (engine_main) and ends with _exit.
        let pid = unsafe { libc::fork() };
        if pid < 0 {
            return Err(os_err(io::Error::last_os_error()));
        }
        if pid == 0 {
            let _ = dup2_stdout(&out_w);
            match &feed {
                Some((r, _)) => {
                    let _ = dup2_stdin(r);
                }
                None => {
                    if let Ok(null) = std::fs::File::open("/dev/null") {
                        let _ = dup2_stdin(&null);
                    }
                }
            }
            if let Some(e) = &err {
                let _ = dup2_stderr(e);
            }
            let _ = nix::sys::prctl::set_pdeathsig(nix::sys::signal::Signal::SIGTERM);
            // The parent's ends are closed here, or the engine would never see the end of
            // its input.
            drop(out_r);
            let engine_ctl = ctl.map(|(mine, theirs)| {
                drop(mine);
                theirs
            });
            drop(feed.map(|(_, w)| w));
            engine_main(&cfg, engine_ctl);
        }
        drop(out_w);
        nonblocking(&out_r);
        let feed_fd = feed.map(|(_, w)| w);
        if let Some(w) = &feed_fd {
            nonblocking(w);
        }
        // An iterator is read on a thread of its own from now on: the serving loop never
        // waits inside its `next()`.
        let feed = match src.feed {
            Feed::Items(items) => Feed::Thread(Feeder::start(items, &opts)?),
            other => other,
        };
        Ok(Run {
            mode,
            func: func.map(|f| f.clone().unbind()),
            opts,
            engine: Some(pid),
            ctl: ctl.map(|(mine, _)| mine),
            out: Some(out_r),
            feed_fd,
            feed,
            pending: Vec::new(),
            pending_at: 0,
            buf: Vec::new(),
            err,
            live: Vec::new(),
            results: VecDeque::new(),
            errors: Vec::new(),
            done: false,
            failure: None,
            _memfd: src.memfd,
        })
    }

    /// Serves the engine until a result is ready or the run has ended.
    /// The results before a record's error come first: the error is raised once they are all
    /// out (a checkpoint counts them as done, so a resumed run does not produce them again).
    pub(crate) fn next_result(&mut self, py: Python<'_>) -> PyResult<Option<Py<PyAny>>> {
        loop {
            if let Some(r) = self.results.pop_front() {
                return Ok(Some(r));
            }
            if let Some(e) = self.failure.take() {
                self.abort();
                return Err(e);
            }
            if self.done {
                return Ok(None);
            }
            if let Err(e) = self.step(py) {
                self.abort();
                return Err(e);
            }
        }
    }

    /// Serves the engine until the run has ended; the results in a list (`frun.map`), each
    /// put there as it is decoded. For a list source the list is made at its full length
    /// first (of None, so it is never invalid) and filled in place, then cut to the results
    /// there were (fewer when records were skipped).
    pub(crate) fn collect<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let expected = match &self.feed {
            Feed::List { list, next } => list.bind(py).len().saturating_sub(*next),
            _ => 0,
        };
        let list = if expected > 0 {
            PyList::new(py, [py.None()])?
                .as_sequence()
                .repeat(expected)?
                .cast_into::<PyList>()?
        } else {
            PyList::empty(py)
        };
        let mut filled = 0usize;
        loop {
            for r in self.results.drain(..) {
                if filled < expected {
                    // In range: replaces (and drops) the None put there.
                    list.set_item(filled, r)?;
                } else {
                    list.append(r)?;
                }
                filled += 1;
            }
            if let Some(e) = self.failure.take() {
                self.abort();
                return Err(e);
            }
            if self.done {
                if filled < expected {
                    list.del_slice(filled, expected)?;
                }
                return Ok(list);
            }
            if let Err(e) = self.step(py) {
                self.abort();
                return Err(e);
            }
        }
    }

    /// Serves the engine until the run has ended (a command's output is then in `buf`).
    pub(crate) fn finish(&mut self, py: Python<'_>) -> PyResult<Vec<u8>> {
        while !self.done {
            if let Err(e) = self.step(py) {
                self.abort();
                return Err(e);
            }
        }
        Ok(std::mem::take(&mut self.buf))
    }

    /// One round: waits (without the GIL) for the engine, then does what it asks.
    fn step(&mut self, py: Python<'_>) -> PyResult<()> {
        let mut fds: Vec<libc::pollfd> = Vec::with_capacity(3);
        let poll_of = |fd: &Option<OwnedFd>, events: libc::c_short| libc::pollfd {
            fd: fd.as_ref().map_or(-1, |f| f.as_raw_fd()),
            events,
            revents: 0,
        };
        fds.push(poll_of(&self.ctl, libc::POLLIN));
        fds.push(poll_of(&self.out, libc::POLLIN));
        // With nothing to write and a reading thread, wait for its records, not for room.
        let feeder = match &self.feed {
            Feed::Thread(f) if self.pending_at == self.pending.len() && self.feed_fd.is_some() => {
                Some(f.fd())
            }
            _ => None,
        };
        match feeder {
            Some(fd) => fds.push(libc::pollfd {
                fd,
                events: libc::POLLIN,
                revents: 0,
            }),
            None => fds.push(poll_of(&self.feed_fd, libc::POLLOUT)),
        }
        let r = py.detach(|| frun_engine::sys::poll_numbers(&mut fds, 200));
        // Ctrl-C (or any signal with a Python handler) raises here.
        py.check_signals()?;
        if let Err(e) = r {
            return if e.kind() == io::ErrorKind::Interrupted {
                Ok(())
            } else {
                Err(os_err(e))
            };
        }
        let ready = |i: usize| fds[i].revents != 0;
        if ready(2) {
            self.feed_more(py)?;
        }
        if ready(1) {
            self.read_results(py)?;
        }
        if ready(0) {
            self.serve_ctl(py)?;
        }
        if self.out.is_none() && self.ctl.is_none() && self.engine.is_some() {
            self.ended(py)?;
        }
        Ok(())
    }

    /// The engine asked for something on its control socket.
    fn serve_ctl(&mut self, py: Python<'_>) -> PyResult<()> {
        let Some(ctl) = &self.ctl else { return Ok(()) };
        let s = ctl.as_raw_fd();
        let mut ask = [0u8; 8];
        match shell::recv_with_fds(s, &mut ask, 0) {
            Ok(Some(_)) => {}
            _ => {
                self.ctl = None;
                return Ok(());
            }
        }
        let what = i32::from_ne_bytes(ask[..4].try_into().expect("4 bytes"));
        let pid = i32::from_ne_bytes(ask[4..].try_into().expect("4 bytes"));
        let (value, fd) = match what {
            ASK_START => self.fork_worker(py)?,
            ASK_REAP => {
                self.live.retain(|&p| p != pid);
                (wait_pid(pid), None)
            }
            _ => (-1, None),
        };
        let mut reply = [0u8; 8];
        reply[..4].copy_from_slice(&value.to_ne_bytes());
        let fds: Vec<RawFd> = fd.iter().map(AsRawFd::as_raw_fd).collect();
        if shell::send_with_fds(s, &reply, &fds).is_err() {
            self.ctl = None;
        }
        Ok(())
    }

    /// Forks a worker, as `os.fork` does; returns its pid and the engine's end of its socket.
    fn fork_worker(&mut self, py: Python<'_>) -> PyResult<(i32, Option<OwnedFd>)> {
        let (a, b) = std::os::unix::net::UnixStream::pair().map_err(os_err)?;
        let (engine_end, worker_end) = (OwnedFd::from(a), OwnedFd::from(b));
        let parent = std::process::id() as libc::pid_t;
        // SAFETY: a fork inside the interpreter's own fork protocol, as `os.fork` does it, with
        // the GIL held: PyOS_BeforeFork first, then in the child PyOS_AfterFork_Child before
        // anything else runs there, in the parent (also when the fork failed)
        // PyOS_AfterFork_Parent.
        let pid = unsafe {
            pyo3::ffi::PyOS_BeforeFork();
            let pid = libc::fork();
            if pid == 0 {
                pyo3::ffi::PyOS_AfterFork_Child();
            } else {
                pyo3::ffi::PyOS_AfterFork_Parent();
            }
            pid
        };
        if pid == 0 {
            self.become_worker(parent, engine_end);
            // Everything inherited from the caller is left out of this process's garbage
            // collections (gc.freeze, O(1)): a collection would walk the caller's whole heap,
            // e.g. every item of a list source, and copy each page it touches.
            let _ = py.import("gc").and_then(|gc| gc.call_method0("freeze"));
            let func = self.func.as_ref().expect("a function run").bind(py).clone();
            let dumps = match py.import("pickle").and_then(|p| p.getattr("dumps")) {
                Ok(d) => d,
                // A worker without pickle cannot run.
                Err(_) => frun_engine::sys::exit_now(1),
            };
            let job = Job {
                func: &func,
                opts: &self.opts,
                dumps,
            };
            worker_main(py, worker_end, &job);
        }
        if pid < 0 {
            return Ok((-1, None));
        }
        self.live.push(pid);
        Ok((pid, Some(engine_end)))
    }

    /// In a fresh worker: closes the parent's descriptors (the engine must see the end of the
    /// input and of the workers), ends with the parent, and lets Ctrl-C reach the parent only
    /// (the engine stops the workers).
    fn become_worker(&mut self, parent: libc::pid_t, engine_end: OwnedFd) {
        drop(engine_end);
        for fd in [
            self.ctl.take(),
            self.out.take(),
            self.feed_fd.take(),
            self.err.take(),
        ] {
            drop(fd);
        }
        set_disposition(Signal::SIGINT, Disposition::Ignore);
        set_disposition(Signal::SIGTERM, Disposition::Default);
        let _ = nix::sys::prctl::set_pdeathsig(Signal::SIGKILL);
        if nix::unistd::getppid().as_raw() != parent {
            frun_engine::sys::exit_now(1);
        }
    }

    /// Writes more of a streamed source to the engine's stdin.
    fn feed_more(&mut self, py: Python<'_>) -> PyResult<()> {
        if self.feed_fd.is_none() {
            return Ok(());
        }
        if self.pending_at == self.pending.len() {
            self.pending.clear();
            self.pending_at = 0;
            if !self.refill(py)? {
                self.feed_fd = None;
                return Ok(());
            }
        }
        let Some(fd) = &self.feed_fd else {
            return Ok(());
        };
        if self.pending.is_empty() {
            // The reading thread has nothing yet.
            return Ok(());
        }
        let rest = &self.pending[self.pending_at..];
        match nix::unistd::write(fd, rest) {
            Ok(n) => self.pending_at += n,
            Err(Errno::EAGAIN | Errno::EINTR) => {}
            // The engine stopped reading (it ended): the rest of the input is not needed.
            Err(_) => self.feed_fd = None,
        }
        Ok(())
    }

    /// Fills `pending` from the source; false at its end.
    fn refill(&mut self, py: Python<'_>) -> PyResult<bool> {
        const CHUNK: usize = 1 << 20;
        let pending = &mut self.pending;
        let opts = &self.opts;
        match &mut self.feed {
            Feed::None => Ok(false),
            Feed::File(f) => {
                let data = f.bind(py).call_method1("read", (CHUNK,))?;
                let bytes = data.cast::<PyBytes>().map_err(|_| {
                    PyValueError::new_err("frun: a file source must be opened in binary mode")
                })?;
                pending.extend_from_slice(bytes.as_bytes());
                Ok(!pending.is_empty())
            }
            Feed::List { list, next } => {
                let list = list.bind(py);
                let reencode = opts.encoding.as_ref().is_some_and(|e| !e.is_utf8);
                let mut items = 0u64;
                while pending.len() < CHUNK {
                    // The list is read by index up to its end as it is now: another thread
                    // may change it while this one waits without the GIL.
                    // SAFETY: a borrowed item (or NULL past the end), so its count is not
                    // touched and its page stays shared with the workers instead of being
                    // copied.
                    let item = unsafe {
                        Borrowed::from_ptr_or_opt(
                            py,
                            ffi::PyList_GetItem(list.as_ptr(), *next as _),
                        )
                    };
                    let Some(item) = item else {
                        // Past the end: PyList_GetItem set an IndexError.
                        drop(PyErr::take(py));
                        break;
                    };
                    *next += 1;
                    items += 1;
                    if reencode {
                        // A codec may run Python code, which could drop a borrowed item.
                        push_record(pending, &item.to_owned(), opts)?;
                    } else {
                        // No Python code runs in here: the item stays alive.
                        push_record(pending, &item, opts)?;
                    }
                }
                check_one_record_each(pending, items, opts.delimiter)?;
                Ok(!pending.is_empty())
            }
            Feed::Thread(f) => match f.take(pending)? {
                Taken::More => Ok(true),
                Taken::End => Ok(false),
            },
            // Run::start hands every iterator to a reading thread.
            Feed::Items(_) => Ok(false),
        }
    }

    /// Reads what the engine wrote to its stdout; decodes whole frames into results.
    fn read_results(&mut self, py: Python<'_>) -> PyResult<()> {
        let Some(out) = &self.out else { return Ok(()) };
        const CHUNK: usize = 1 << 20;
        self.buf.reserve(CHUNK);
        match frun_engine::sys::read_into_spare(out.as_fd(), &mut self.buf) {
            Ok(0) => self.out = None,
            Ok(_) => {}
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::WouldBlock | io::ErrorKind::Interrupted
                ) => {}
            Err(e) => return Err(os_err(e)),
        }
        if self.mode == Mode::Function {
            self.decode(py)?;
        }
        Ok(())
    }

    /// Turns the whole frames in `buf` into results (or the run's error).
    fn decode(&mut self, py: Python<'_>) -> PyResult<()> {
        if self.failure.is_some() {
            // Nothing after a record's error is the caller's.
            self.buf.clear();
            return Ok(());
        }
        let mut at = 0;
        let mut pause = GcPause {
            gc: None,
            checked: false,
        };
        while let Some((kind, payload, used)) = frames::next(&self.buf[at..]) {
            at += used;
            let obj: Py<PyAny> = match kind {
                frames::BYTES => PyBytes::new(py, payload).into_any().unbind(),
                frames::STR => crate::text::decode(py, payload, false)?.unbind(),
                frames::NONE => py.None(),
                frames::PICKLE => pause.unpickle(py, payload)?.unbind(),
                frames::PICKLED_LIST => {
                    for item in pause.unpickle(py, payload)?.try_iter()? {
                        self.results.push_back(item?.unbind());
                    }
                    continue;
                }
                frames::ERROR | frames::SKIPPED => {
                    let (offset, tb) = frames::error_parts(payload);
                    let err = crate::task_error(py, offset, &tb, None);
                    if kind == frames::ERROR {
                        self.failure = Some(err);
                        self.buf.clear();
                        return Ok(());
                    }
                    report_skipped(py, offset, &tb)?;
                    self.errors.push(err.value(py).clone().into_any().unbind());
                    continue;
                }
                _ => {
                    return Err(PyValueError::new_err(
                        "frun: a result frame of unknown kind",
                    ));
                }
            };
            self.results.push_back(obj);
        }
        self.buf.drain(..at);
        Ok(())
    }

    /// The engine closed its stdout and control socket: waits for it and judges its status.
    fn ended(&mut self, py: Python<'_>) -> PyResult<()> {
        let Some(pid) = self.engine.take() else {
            return Ok(());
        };
        let status = ChildEnd::from_wait_status(wait_pid(pid));
        self.kill_workers();
        self.done = true;
        let messages = self.messages();
        let code = match status {
            ChildEnd::Exited(0) => {
                write_stderr(py, &messages)?;
                return Ok(());
            }
            ChildEnd::Exited(c) => c,
            ChildEnd::Signaled(s) => 128 + s,
        };
        let offset = given_up_offset(&messages);
        if self.mode == Mode::Function && self.opts.on_error == OnError::Skip && offset.is_some() {
            write_stderr(py, &messages)?;
            return Ok(());
        }
        let text = if messages.is_empty() {
            format!("frun: the run failed (status {code})")
        } else {
            messages.trim_end().to_string()
        };
        Err(crate::task_error(
            py,
            offset.unwrap_or(0),
            &text,
            Some(code),
        ))
    }

    /// What the engine wrote to its stderr (function runs).
    fn messages(&mut self) -> String {
        let Some(fd) = self.err.take() else {
            return String::new();
        };
        let mut f = std::fs::File::from(fd);
        let mut text = String::new();
        let _ = io::Seek::seek(&mut f, io::SeekFrom::Start(0));
        let _ = io::Read::read_to_string(&mut f, &mut text);
        text
    }

    fn kill_workers(&mut self) {
        for pid in std::mem::take(&mut self.live) {
            // Our own unreaped child: the pid is not reused before it is waited for.
            let _ = kill(Pid::from_raw(pid), Signal::SIGKILL);
            wait_pid(pid);
        }
    }

    /// Stops everything at once: the engine (TERM: it ends its workers' batches and keeps its
    /// checkpoint), then any worker left.
    pub(crate) fn abort(&mut self) {
        self.done = true;
        if let Some(pid) = self.engine.take() {
            // Our own unreaped child, as above.
            let _ = kill(Pid::from_raw(pid), Signal::SIGTERM);
            self.out = None;
            self.feed_fd = None;
            // The engine may be asking for a worker: serve its requests no more, so it sees
            // the socket close and ends.
            self.ctl = None;
            wait_pid(pid);
        }
        self.kill_workers();
    }
}

impl Drop for Run {
    fn drop(&mut self) {
        self.abort();
    }
}

/// The garbage collector, paused while the results that came in one read are unpickled:
/// what they make is all reachable from the results, so a collection meanwhile would free
/// little, yet each one walks the caller's heap (a list source, the results so far). It runs
/// again when this is dropped, once per read rather than once per pickled run.
struct GcPause<'py> {
    /// The `gc` module, once this paused it (None: not yet, or it was off already).
    gc: Option<Bound<'py, PyModule>>,
    /// Whether the collector was looked at yet.
    checked: bool,
}

impl<'py> GcPause<'py> {
    /// `pickle.loads(payload)`, the collector paused first.
    fn unpickle(&mut self, py: Python<'py>, payload: &[u8]) -> PyResult<Bound<'py, PyAny>> {
        if !self.checked {
            self.checked = true;
            let gc = py.import("gc")?;
            if gc.call_method0("isenabled")?.is_truthy()? {
                gc.call_method0("disable")?;
                self.gc = Some(gc);
            }
        }
        py.import("pickle")?
            .call_method1("loads", (PyBytes::new(py, payload),))
    }
}

impl Drop for GcPause<'_> {
    fn drop(&mut self) {
        if let Some(gc) = self.gc.take() {
            let _ = gc.call_method0("enable");
        }
    }
}

/// The input offset a given-up batch's message names ("input offset N").
fn given_up_offset(messages: &str) -> Option<u64> {
    let at = messages.find("input offset ")? + "input offset ".len();
    let digits: String = messages[at..]
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    digits.parse().ok()
}

fn write_stderr(py: Python<'_>, text: &str) -> PyResult<()> {
    if !text.is_empty() {
        py.import("sys")?
            .getattr("stderr")?
            .call_method1("write", (text,))?;
    }
    Ok(())
}

/// One line on stderr for a record skipped after its call raised.
fn report_skipped(py: Python<'_>, offset: u64, traceback: &str) -> PyResult<()> {
    let last = traceback.trim_end().lines().last().unwrap_or("");
    write_stderr(
        py,
        &format!("frun: skipped the record at input offset {offset}: {last}\n"),
    )
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_given_up_offset_is_read_from_the_engines_message() {
        let m = "frun: batch 1 (input offset 6, 3 records) given up after 2 attempts";
        assert_eq!(super::given_up_offset(m), Some(6));
        assert_eq!(super::given_up_offset("frun: nothing"), None);
    }
}
