//! `import frun`: runs a Python function over every record of its input in worker processes
//! forked from the caller (no pickling of the function, its globals or closures), on the same
//! engine as the `frun` binary — spool, scan, ring, ledger, journal — and `frun.run`, which runs
//! a command per batch exactly as the binary does.
//!
//! This module is the Python-facing surface only: arguments in, results out. The caller serves
//! the run (`caller`), workers run the function (`worker`), the engine process runs the engine
//! (`engine`).

use std::ffi::OsString;
use std::path::PathBuf;

use pyo3::create_exception;
use pyo3::exceptions::PyException;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList};

/// Writes one message line to stderr in one `write` (std's `eprintln!` writes its pieces one
/// by one, and the function's own output, from other processes on the same stderr, could come
/// between them); a failure to write is ignored.
pub(crate) fn message(text: std::fmt::Arguments<'_>) {
    let mut line = text.to_string();
    line.push('\n');
    frun_engine::sys::notice::write_whole(&line);
}

mod batch;
mod caller;
mod engine;
mod feeder;
mod frames;
mod options;
mod text;
mod worker;

use caller::Run;
use options::Options;

create_exception!(
    frun,
    TaskError,
    PyException,
    "A record's call raised (or its worker died on every retry): `.offset` is the record's input \
     offset, `.traceback` the worker's traceback text (or the engine's report), `.status` the \
     run's exit status when it ended with one."
);

/// A `TaskError` for the record at `offset`.
pub(crate) fn task_error(
    py: Python<'_>,
    offset: u64,
    traceback: &str,
    status: Option<i32>,
) -> PyErr {
    let last = traceback
        .trim_end()
        .lines()
        .last()
        .unwrap_or("")
        .to_string();
    let err = TaskError::new_err(format!("record at input offset {offset}: {last}"));
    let value = err.value(py);
    let _ = value.setattr("offset", offset);
    let _ = value.setattr("traceback", traceback);
    let _ = value.setattr("status", status);
    err
}

/// The results of a run as they come (`frun.stream`); `.errors` lists the records skipped
/// with `on_error="skip"` (as `TaskError`s) once they have been seen.
#[pyclass(module = "frun", unsendable)]
struct Stream {
    run: Run,
}

#[pymethods]
impl Stream {
    fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __next__(&mut self, py: Python<'_>) -> PyResult<Option<Py<PyAny>>> {
        self.run.next_result(py)
    }

    #[getter]
    fn errors(&self, py: Python<'_>) -> PyResult<Py<PyList>> {
        Ok(PyList::new(py, self.run.errors.iter().map(|e| e.clone_ref(py)))?.unbind())
    }

    /// Stops the run now: the engine and every worker end.
    fn close(&mut self) {
        self.run.abort();
    }

    fn __enter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __exit__(
        &mut self,
        _t: Option<&Bound<'_, PyAny>>,
        _v: Option<&Bound<'_, PyAny>>,
        _tb: Option<&Bound<'_, PyAny>>,
    ) {
        self.run.abort();
    }
}

#[allow(clippy::too_many_arguments)]
fn start_function(
    py: Python<'_>,
    func: &Bound<'_, PyAny>,
    source: &Bound<'_, PyAny>,
    workers: Option<usize>,
    ordered: bool,
    batch: bool,
    encoding: Option<&str>,
    delimiter: Option<&Bound<'_, PyAny>>,
    on_error: &str,
    retries: i64,
    checkpoint: Option<PathBuf>,
) -> PyResult<Stream> {
    let newline = PyBytes::new(py, b"\n").into_any();
    let delimiter = delimiter.unwrap_or(&newline);
    let opts = Options::new(
        workers, ordered, batch, encoding, delimiter, on_error, retries, checkpoint,
    )?;
    let src = caller::source(py, source)?;
    Ok(Stream {
        run: Run::start(py, Some(func), src, opts, None, false)?,
    })
}

/// `checkpoint=` given to a call that returns all its results at once (`map`, `run`): refused,
/// since a resumed run would return only what it ran itself — the results of the records an
/// earlier run finished are not kept anywhere — and every position in the list would shift.
fn refuse_checkpoint(checkpoint: Option<&PathBuf>, call: &str) -> PyResult<()> {
    match checkpoint {
        None => Ok(()),
        Some(_) => Err(pyo3::exceptions::PyValueError::new_err(format!(
            "checkpoint: frun.{call} returns every result at once, and a resumed run would \
             return only the records it ran itself (the results of records finished before \
             are not kept); use frun.stream(..., checkpoint=PATH), which yields each result as \
             it comes, and keep what it yields"
        ))),
    }
}

/// Calls `fn` on every record of `source` in forked workers; returns the results as a list, in
/// input order unless `ordered=False`. See `frun.stream` for the arguments; `checkpoint=` is
/// refused (ValueError): use `frun.stream` for runs that may be stopped and resumed.
#[pyfunction]
#[pyo3(signature = (func, source, *, workers=None, ordered=true, batch=false, encoding=Some("utf-8"), delimiter=None, on_error="raise", retries=3, checkpoint=None))]
#[allow(clippy::too_many_arguments)]
fn map(
    py: Python<'_>,
    func: &Bound<'_, PyAny>,
    source: &Bound<'_, PyAny>,
    workers: Option<usize>,
    ordered: bool,
    batch: bool,
    encoding: Option<&str>,
    delimiter: Option<&Bound<'_, PyAny>>,
    on_error: &str,
    retries: i64,
    checkpoint: Option<PathBuf>,
) -> PyResult<Py<PyList>> {
    refuse_checkpoint(checkpoint.as_ref(), "map")?;
    let mut s = start_function(
        py, func, source, workers, ordered, batch, encoding, delimiter, on_error, retries,
        checkpoint,
    )?;
    Ok(s.run.collect(py)?.unbind())
}

/// Calls `fn` on every record of `source` in forked workers and yields the results while they
/// run (memory stays bounded however long the source is).
///
/// `source`: a path (mapped, not read), bytes-like, a binary file object, or an iterable of
/// `str`/`bytes` (each item one record). `fn` gets a record (`str`, or `bytes` with
/// `encoding=None`) and returns `str`, `bytes`, `None` or any picklable object; with
/// `batch=True` it gets a `frun.Batch` (`.records`, `.data`, `.index`, `.offset`) and returns
/// an iterable of results (or one `str`/`bytes`, or None). `on_error`: "raise" (stop, raise
/// `frun.TaskError`), "skip" (leave the record out, report it on stderr and in `.errors`) or
/// "retry" (call again up to `retries` times, then raise). A worker that dies has its batch
/// retried on a fresh worker (`retries` times). `checkpoint=PATH` keeps a checkpoint there; a
/// run given an existing one resumes it (the records it lists as done are not run again).
/// `workers` defaults to one per usable CPU (affinity mask and cgroup quota), all started at
/// once.
#[pyfunction]
#[pyo3(signature = (func, source, *, workers=None, ordered=true, batch=false, encoding=Some("utf-8"), delimiter=None, on_error="raise", retries=3, checkpoint=None))]
#[allow(clippy::too_many_arguments)]
fn stream(
    py: Python<'_>,
    func: &Bound<'_, PyAny>,
    source: &Bound<'_, PyAny>,
    workers: Option<usize>,
    ordered: bool,
    batch: bool,
    encoding: Option<&str>,
    delimiter: Option<&Bound<'_, PyAny>>,
    on_error: &str,
    retries: i64,
    checkpoint: Option<PathBuf>,
) -> PyResult<Stream> {
    start_function(
        py, func, source, workers, ordered, batch, encoding, delimiter, on_error, retries,
        checkpoint,
    )
}

/// Runs the command `argv` per batch of records of `source`, exactly as the `frun` binary
/// does (records as its arguments, or on its stdin with `stdin=True`, the binary's `-s`), and
/// returns its output (`bytes`), in input order unless `ordered=False`. A failed run raises
/// `frun.TaskError` with `.status`, the binary's exit status. `checkpoint=` is refused
/// (ValueError): the output of a resumed run would lack what the earlier run produced.
#[pyfunction]
#[pyo3(signature = (argv, source, *, stdin=false, workers=None, ordered=true, delimiter=None, retries=3, checkpoint=None))]
#[allow(clippy::too_many_arguments)]
fn run(
    py: Python<'_>,
    argv: Vec<OsString>,
    source: &Bound<'_, PyAny>,
    stdin: bool,
    workers: Option<usize>,
    ordered: bool,
    delimiter: Option<&Bound<'_, PyAny>>,
    retries: i64,
    checkpoint: Option<PathBuf>,
) -> PyResult<Py<PyBytes>> {
    refuse_checkpoint(checkpoint.as_ref(), "run")?;
    let newline = PyBytes::new(py, b"\n").into_any();
    let delimiter = delimiter.unwrap_or(&newline);
    let opts = Options::new(
        workers, ordered, false, None, delimiter, "raise", retries, checkpoint,
    )?;
    let src = caller::source(py, source)?;
    let mut r = Run::start(py, None, src, opts, Some(argv), stdin)?;
    let out = r.finish(py)?;
    Ok(PyBytes::new(py, &out).unbind())
}

#[pymodule(name = "frun")]
fn frun_module(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(map, m)?)?;
    m.add_function(wrap_pyfunction!(stream, m)?)?;
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_class::<Stream>()?;
    m.add_class::<batch::Batch>()?;
    m.add("TaskError", m.py().get_type::<TaskError>())?;
    Ok(())
}
