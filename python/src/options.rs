//! The keyword options of `frun.map`/`frun.stream`/`frun.run`, checked, and the engine
//! `Config` they make (through the command line's own parser, so a run means what the same
//! flags mean to the `frun` binary).
//!
//! Nothing here starts a run.

use std::ffi::OsString;
use std::path::PathBuf;

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyString};

use frun_engine::ConfigBuilder;

/// What to do when the function raises.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum OnError {
    /// Stop the run; the parent raises `frun.TaskError`.
    Raise,
    /// Leave the record out, report it, go on.
    Skip,
    /// Call again, up to `retries` more times, then as `Raise`.
    Retry,
}

/// The records' text encoding (None: records are `bytes`).
#[derive(Clone, Debug)]
pub(crate) struct Encoding {
    pub name: String,
    pub is_utf8: bool,
}

#[derive(Clone, Debug)]
pub(crate) struct Options {
    pub workers: Option<usize>,
    pub ordered: bool,
    pub batch: bool,
    pub encoding: Option<Encoding>,
    pub delimiter: u8,
    pub on_error: OnError,
    pub retries: u64,
    pub checkpoint: Option<PathBuf>,
}

impl Options {
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn new(
        workers: Option<usize>,
        ordered: bool,
        batch: bool,
        encoding: Option<&str>,
        delimiter: &Bound<'_, PyAny>,
        on_error: &str,
        retries: i64,
        checkpoint: Option<PathBuf>,
    ) -> PyResult<Options> {
        if workers == Some(0) {
            return Err(PyValueError::new_err(
                "frun: workers must be at least 1 (or None)",
            ));
        }
        let on_error = match on_error {
            "raise" => OnError::Raise,
            "skip" => OnError::Skip,
            "retry" => OnError::Retry,
            other => {
                return Err(PyValueError::new_err(format!(
                    "frun: on_error must be \"raise\", \"skip\" or \"retry\", not {other:?}"
                )));
            }
        };
        let retries = u64::try_from(retries)
            .map_err(|_| PyValueError::new_err("frun: retries must be 0 or more"))?;
        let encoding = match encoding {
            None => None,
            Some(name) => {
                // An unknown encoding is refused now, not in every worker.
                let py = delimiter.py();
                let codec = py.import("codecs")?.call_method1("lookup", (name,))?;
                let canonical: String = codec.getattr("name")?.extract()?;
                Some(Encoding {
                    name: name.to_string(),
                    is_utf8: canonical == "utf-8",
                })
            }
        };
        Ok(Options {
            workers,
            ordered,
            batch,
            encoding,
            delimiter: delimiter_byte(delimiter)?,
            on_error,
            retries,
            checkpoint,
        })
    }
}

/// The one byte that ends each record.
fn delimiter_byte(d: &Bound<'_, PyAny>) -> PyResult<u8> {
    let bytes: Vec<u8> = if let Ok(b) = d.cast::<PyBytes>() {
        b.as_bytes().to_vec()
    } else if let Ok(s) = d.cast::<PyString>() {
        s.to_cow()?.as_bytes().to_vec()
    } else {
        return Err(PyValueError::new_err(
            "frun: delimiter must be one byte (bytes or str)",
        ));
    };
    match bytes[..] {
        [b] => Ok(b),
        _ => Err(PyValueError::new_err(format!(
            "frun: delimiter must be exactly one byte, not {} bytes",
            bytes.len()
        ))),
    }
}

/// Where the engine reads the records.
pub(crate) enum InputArg {
    /// A file by path (mapped, not read).
    Path(PathBuf),
    /// The engine's stdin (a pipe the parent writes).
    Stdin,
}

/// The engine `Config` for a run, built by the engine's `ConfigBuilder` from the keywords (a
/// setting it refuses is a ValueError naming the keyword). `command` is the command and its
/// arguments (`frun.run`), or None for a Python function.
pub(crate) fn config(
    opts: &Options,
    input: &InputArg,
    command: Option<Vec<OsString>>,
    stdin: bool,
) -> PyResult<frun_engine::Config> {
    let function = command.is_none();
    let words = match command {
        Some(words) if !words.is_empty() => words,
        Some(_) => return Err(PyValueError::new_err("frun: run() needs a command")),
        None => vec!["python-function".into()],
    };
    let mut b = ConfigBuilder::new(words)
        .keep_order(opts.ordered)
        .stdin(stdin || function)
        .delimiter(opts.delimiter)
        .retries(opts.retries)
        .shell_command(function)
        .for_library();
    // A function's workers all start at once (one per usable CPU by default): growing from
    // one while every worker is busy lags behind a streamed source (measured: a list of 200k
    // records ran 1.7x slower that way). Commands keep the binary's default.
    match (opts.workers, function) {
        (Some(w), _) => b = b.workers(w),
        (None, true) => b = b.workers(frun_engine::sys::usable_cpus()),
        (None, false) => {}
    }
    if let InputArg::Path(p) = input {
        b = b.input_file(p);
    }
    if let Some(p) = &opts.checkpoint {
        b = b.checkpoint(p);
    }
    b.build().map_err(|e| {
        let keyword = match e.option() {
            "input_file" => "the input",
            "command" => "the command",
            "records_per_batch" => "batch",
            k => k,
        };
        PyValueError::new_err(format!("frun: {keyword}: {}", e.message()))
    })
}
