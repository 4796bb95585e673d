//! A worker: a copy of the calling interpreter, forked by the parent when the engine asks for
//! one. It takes batches as ranges of the spool over its socket, maps each range, calls the
//! user's function on its records (or on the batch), writes the results as frames to the
//! capture file the engine gave it, and replies. It ends when its socket closes.
//!
//! It decides nothing about batches (the engine does) and never returns into the caller's
//! Python code: it leaves with `_exit`.

use std::io;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd, RawFd};
use std::ptr::NonNull;

use frun_engine::exec::shell::{
    self, HELLO_OWN_GROUP, HELLO_SPOOL, HELLO_STDIN, HELLO_STDOUT, RANGE_LEN, REQUEST_RANGE, Range,
};
use frun_engine::sys::Mapping;
use nix::sys::mman::{MapFlags, ProtFlags};
use pyo3::exceptions::PyRuntimeError;
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList, PyString, PyTuple};

use crate::frames;
use crate::options::{OnError, Options};
use crate::text::record_object;

/// What a worker calls, and how.
pub(crate) struct Job<'a> {
    pub func: &'a Bound<'a, PyAny>,
    pub opts: &'a Options,
    /// `pickle.dumps`, looked up once per worker.
    pub dumps: Bound<'a, PyAny>,
}

/// The worker process: serves batches on `sock` until it closes, then ends the process.
pub(crate) fn worker_main(py: Python<'_>, sock: OwnedFd, job: &Job<'_>) -> ! {
    let code = match serve(py, &sock, job) {
        Ok(()) => 0,
        Err(e) => {
            crate::message(format_args!("frun: worker: {e}"));
            1
        }
    };
    // What the function printed reaches the parent's stdout and stderr before the end.
    for name in ["stdout", "stderr"] {
        if let Ok(f) = py.import("sys").and_then(|s| s.getattr(name)) {
            let _ = f.call_method0("flush");
        }
    }
    // No Python finalization in a forked copy.
    frun_engine::sys::exit_now(code)
}

/// The descriptors the engine's start-up message gives: the capture file and the spool.
fn hello(s: RawFd) -> io::Result<Option<(OwnedFd, OwnedFd)>> {
    let Some((hello, fds)) = shell::recv_header(s, 3)? else {
        return Ok(None);
    };
    let mut fds = fds.into_iter();
    if hello.flags & HELLO_OWN_GROUP != 0 {
        let _ = nix::unistd::setpgid(nix::unistd::Pid::from_raw(0), nix::unistd::Pid::from_raw(0));
    }
    let capture = (hello.flags & HELLO_STDOUT != 0)
        .then(|| fds.next())
        .flatten();
    // The function keeps the caller's stdin: the engine's idle one is not needed.
    let _ = (hello.flags & HELLO_STDIN != 0).then(|| fds.next());
    let spool = (hello.flags & HELLO_SPOOL != 0)
        .then(|| fds.next())
        .flatten();
    match (capture, spool) {
        (Some(c), Some(s)) => Ok(Some((c, s))),
        _ => Err(io::Error::other("the engine gave no capture file or spool")),
    }
}

fn serve(py: Python<'_>, sock: &OwnedFd, job: &Job<'_>) -> io::Result<()> {
    let s = sock.as_raw_fd();
    let Some((capture, spool)) = hello(s)? else {
        return Ok(());
    };
    shell::write_all(s, &0i32.to_ne_bytes())?;
    let mut out = Vec::new();
    let mut body = [0u8; RANGE_LEN];
    loop {
        let Some((req, _)) = shell::recv_header(s, 0)? else {
            return Ok(());
        };
        if req.flags & REQUEST_RANGE == 0 || req.len != RANGE_LEN as u64 {
            return Err(io::Error::other("a request that is not a range"));
        }
        if shell::recv_with_fds(s, &mut body, 0)?.is_none() {
            return Ok(());
        }
        let range = Range::from_bytes(&body);
        out.clear();
        let map = Mapped::new(spool.as_fd(), range.file_offset, range.len)?;
        // A batch whose call raised (not skipped) fails: the engine neither retries it nor
        // counts it done in a checkpoint.
        let status: i32 = match run_batch(py, job, &map, &range, &mut out) {
            Ok(false) => 0,
            Ok(true) => 1,
            Err(e) => {
                // Not the function's exception (that is a frame): the worker's own failure.
                crate::message(format_args!("frun: a worker failed outside the function:"));
                e.print(py);
                1
            }
        };
        drop(map);
        // One write per batch: a worker that dies mid-batch leaves no partial frame.
        write_file(capture.as_fd(), &out)?;
        shell::write_all(s, &status.to_ne_bytes())?;
    }
}

/// Writes all of `data` to a file descriptor.
fn write_file(fd: BorrowedFd<'_>, mut data: &[u8]) -> io::Result<()> {
    while !data.is_empty() {
        match nix::unistd::write(fd, data) {
            Ok(n) => data = &data[n..],
            Err(nix::errno::Errno::EINTR) => {}
            Err(e) => return Err(e.into()),
        }
    }
    Ok(())
}

/// A batch's bytes, mapped read-only from the spool for the time it runs.
struct Mapped {
    /// The mapping outlives the batch (a view of it could not be released).
    keep: std::cell::Cell<bool>,
    map: Option<Mapping>,
    skip: usize,
    len: usize,
}

impl Mapped {
    fn new(fd: BorrowedFd<'_>, offset: u64, len: u64) -> io::Result<Mapped> {
        const PAGE: u64 = 4096;
        let aligned = offset / PAGE * PAGE;
        let skip = (offset - aligned) as usize;
        let len = usize::try_from(len).map_err(io::Error::other)?;
        if len == 0 {
            return Ok(Mapped {
                keep: std::cell::Cell::new(false),
                map: None,
                skip: 0,
                len: 0,
            });
        }
        // A read-only shared mapping of the spool's file; the engine keeps this range until the
        // batch is done (it frees input only behind finished batches).
        let map = Mapping::of_file(
            skip + len,
            ProtFlags::PROT_READ,
            MapFlags::MAP_SHARED,
            fd,
            aligned as i64,
        )?;
        Ok(Mapped {
            keep: std::cell::Cell::new(false),
            map: Some(map),
            skip,
            len,
        })
    }

    fn ptr(&self) -> *const u8 {
        match &self.map {
            // `skip` lies inside the mapping.
            Some(m) => m.as_ptr().wrapping_add(self.skip),
            None => NonNull::<u8>::dangling().as_ptr(),
        }
    }

    fn bytes(&self) -> &[u8] {
        // SAFETY: the mapping holds `len` bytes from ptr() while self lives, and the engine
        // changes none of them before the batch is done (it frees input only behind finished
        // batches).
        unsafe { std::slice::from_raw_parts(self.ptr(), self.len) }
    }
}

impl Drop for Mapped {
    fn drop(&mut self) {
        if self.keep.get() {
            // A view of it is still held by Python code: the pages stay mapped for the rest
            // of this worker.
            std::mem::forget(self.map.take());
        }
    }
}

/// Runs one batch: each record (or the batch) through the function, results into `out`.
fn run_batch(
    py: Python<'_>,
    job: &Job<'_>,
    map: &Mapped,
    range: &Range,
    out: &mut Vec<u8>,
) -> PyResult<bool> {
    if job.opts.batch {
        return run_whole(py, job, map, range, out);
    }
    let delim = job.opts.delimiter;
    let bytes = map.bytes();
    let mut results = Results::new();
    let mut args = Args::new(py);
    let mut failed = false;
    let mut start = 0usize;
    while start < bytes.len() {
        let end = memchr::memchr(delim, &bytes[start..]).map_or(bytes.len(), |i| start + i);
        let record = &bytes[start..end];
        let offset = range.input_offset + start as u64;
        start = end + 1;
        args.set(record_object(py, job.opts, record)?)?;
        match call(py, job, || args.call(job.func)) {
            Ok(result) => results.push(&job.dumps, result, out)?,
            Err(e) => {
                let kind = match job.opts.on_error {
                    OnError::Skip => frames::SKIPPED,
                    _ => frames::ERROR,
                };
                if kind == frames::ERROR && job.opts.checkpoint.is_some() {
                    // A checkpoint counts a failed batch as not done: a resumed run calls its
                    // records again, so the results so far would be yielded twice. Only the
                    // error goes out.
                    results = Results::new();
                    out.clear();
                } else {
                    // The results so far come first, so a stream yields them before the error.
                    results.flush(&job.dumps, out)?;
                }
                frames::push_error(out, kind, offset, &traceback_text(py, &e));
                if kind == frames::ERROR {
                    failed = true;
                    break;
                }
            }
        }
    }
    results.flush(&job.dumps, out)?;
    Ok(failed)
}

/// The one-argument tuple a function is called with, made once and refilled for each record
/// (a new one only when a call kept a reference to it).
struct Args<'py> {
    tuple: Bound<'py, PyTuple>,
}

impl<'py> Args<'py> {
    fn new(py: Python<'py>) -> Args<'py> {
        Args {
            tuple: PyTuple::new(py, [py.None()]).expect("a 1-tuple"),
        }
    }

    /// Makes `arg` the argument of the next calls.
    fn set(&mut self, arg: Bound<'py, PyAny>) -> PyResult<()> {
        let py = arg.py();
        // SAFETY: reads the count of a live object (pyo3's `get_refcnt` is deprecated for this).
        if unsafe { ffi::Py_REFCNT(self.tuple.as_ptr()) } != 1 {
            self.tuple = PyTuple::new(py, [py.None()])?;
        }
        // SAFETY: the tuple is ours alone (its count is 1), so its item may be replaced;
        // PyTuple_SetItem takes the new reference and drops the old item.
        if unsafe { ffi::PyTuple_SetItem(self.tuple.as_ptr(), 0, arg.into_ptr()) } != 0 {
            return Err(PyErr::fetch(py));
        }
        Ok(())
    }

    /// `func(arg)`, with the argument last set.
    fn call(&self, func: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
        func.call1(&self.tuple)
    }
}

/// A batch's results as they are framed: text and None one frame each, written at once;
/// from a result that is something else on, the following results as one pickled list of at
/// most [`PICKLED_RUN`] (then text goes as frames again).
struct Results<'py> {
    pickled: Option<Bound<'py, PyList>>,
}

/// Results pickled together at most. Short runs keep what the worker holds small: results
/// held until the end of a large batch would be walked again and again by the garbage
/// collector (seen: a tenth of the CPU time of `json.loads` per record), while a run of this
/// many costs one `pickle.dumps` call per 512 results.
const PICKLED_RUN: usize = 512;

impl<'py> Results<'py> {
    fn new() -> Results<'py> {
        Results { pickled: None }
    }

    fn push(
        &mut self,
        dumps: &Bound<'_, PyAny>,
        r: Bound<'py, PyAny>,
        out: &mut Vec<u8>,
    ) -> PyResult<()> {
        if let Some(list) = &self.pickled {
            list.append(r)?;
            if list.len() >= PICKLED_RUN {
                self.flush(dumps, out)?;
            }
            return Ok(());
        }
        if push_text(&r, out)? {
            return Ok(());
        }
        self.pickled = Some(PyList::new(r.py(), [r])?);
        Ok(())
    }

    fn flush(&mut self, dumps: &Bound<'_, PyAny>, out: &mut Vec<u8>) -> PyResult<()> {
        if let Some(list) = self.pickled.take() {
            let p = dumps.call1((&list,))?;
            frames::push(out, frames::PICKLED_LIST, p.cast::<PyBytes>()?.as_bytes());
        }
        Ok(())
    }
}

/// Calls `f` once, or again up to `retries` more times with `on_error="retry"`.
fn call<'py>(
    _py: Python<'py>,
    job: &Job<'_>,
    mut f: impl FnMut() -> PyResult<Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyAny>> {
    let tries = match job.opts.on_error {
        OnError::Retry => job.opts.retries + 1,
        _ => 1,
    };
    let mut last = None;
    for _ in 0..tries {
        match f() {
            Ok(r) => return Ok(r),
            Err(e) => last = Some(e),
        }
    }
    Err(last.unwrap_or_else(|| PyRuntimeError::new_err("no attempt")))
}

/// Appends the frame of a `str`, `bytes` or None result; false (nothing appended) for any
/// other.
fn push_text(result: &Bound<'_, PyAny>, out: &mut Vec<u8>) -> PyResult<bool> {
    // The exact types first: a pointer compare each, where a subclass test is a call.
    if let Ok(s) = result.cast_exact::<PyString>() {
        frames::push(out, frames::STR, &crate::text::utf8(s)?);
    } else if result.is_none() {
        frames::push(out, frames::NONE, b"");
    } else if let Ok(b) = result.cast_exact::<PyBytes>() {
        frames::push(out, frames::BYTES, b.as_bytes());
    } else if let Ok(s) = result.cast::<PyString>() {
        frames::push(out, frames::STR, &crate::text::utf8(s)?);
    } else if let Ok(b) = result.cast::<PyBytes>() {
        frames::push(out, frames::BYTES, b.as_bytes());
    } else {
        return Ok(false);
    }
    Ok(true)
}

/// Appends the frame for one result.
fn push_result(
    dumps: &Bound<'_, PyAny>,
    result: &Bound<'_, PyAny>,
    out: &mut Vec<u8>,
) -> PyResult<()> {
    if !push_text(result, out)? {
        let p = dumps.call1((result,))?;
        frames::push(out, frames::PICKLE, p.cast::<PyBytes>()?.as_bytes());
    }
    Ok(())
}

/// The traceback of `e` as Python prints it.
fn traceback_text(py: Python<'_>, e: &PyErr) -> String {
    let text = (|| -> PyResult<String> {
        let tb = py.import("traceback")?;
        let lines = tb.call_method1(
            "format_exception",
            (e.get_type(py), e.value(py), e.traceback(py)),
        )?;
        PyString::new(py, "")
            .call_method1("join", (lines,))?
            .extract()
    })();
    text.unwrap_or_else(|_| e.to_string())
}

/// `batch=True`: the function gets the batch once; what it returns (an iterable of results,
/// one `str`/`bytes`, or None for none) becomes the batch's results. True when the call
/// raised (and was not skipped).
fn run_whole(
    py: Python<'_>,
    job: &Job<'_>,
    map: &Mapped,
    range: &Range,
    out: &mut Vec<u8>,
) -> PyResult<bool> {
    let batch = Bound::new(
        py,
        crate::batch::Batch::new(py, map.ptr(), map.bytes().len(), range, job.opts)?,
    )?;
    let called = call(py, job, || job.func.call1((batch.clone(),)));
    // The batch's bytes are unmapped after this: its view must not outlive the call.
    if !batch.borrow_mut().close(py) {
        // Its view is still exported (a numpy array over it?): the bytes stay mapped.
        map.keep.set(true);
    }
    match called {
        Ok(r) if r.is_none() => {}
        Ok(r) if r.cast::<PyBytes>().is_ok() || r.cast::<PyString>().is_ok() => {
            push_result(&job.dumps, &r, out)?;
        }
        Ok(r) => match r.try_iter() {
            Ok(items) => {
                let mut results = Results::new();
                for item in items {
                    results.push(&job.dumps, item?, out)?;
                }
                results.flush(&job.dumps, out)?;
            }
            Err(_) => push_result(&job.dumps, &r, out)?,
        },
        Err(e) => {
            let kind = match job.opts.on_error {
                OnError::Skip => frames::SKIPPED,
                _ => frames::ERROR,
            };
            frames::push_error(out, kind, range.input_offset, &traceback_text(py, &e));
            return Ok(kind == frames::ERROR);
        }
    }
    Ok(false)
}
