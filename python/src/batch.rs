//! The object a `batch=True` function gets: its records, a zero-copy view of its bytes, its
//! position in input order and its input offset. It only lives for the call: once the call
//! returns, its view is released and its bytes are unmapped.
//!
//! It runs nothing and sends nothing: the worker does.

use frun_engine::exec::shell::Range;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyList;

use crate::options::Options;

/// `PyBUF_READ` (CPython's `object.h`): a read-only view.
const PYBUF_READ: std::ffi::c_int = 0x100;

/// One batch of records (`batch=True`), valid while the function runs.
#[pyclass(module = "frun", unsendable)]
pub(crate) struct Batch {
    /// The batch's bytes (None once the call returned).
    ptr: Option<*const u8>,
    len: usize,
    view: Option<Py<PyAny>>,
    records: Option<Py<PyList>>,
    delimiter: u8,
    opts: Options,
    /// Position of the batch in input order (0, 1, 2, …).
    #[pyo3(get)]
    index: u64,
    /// Input offset of the batch's first byte.
    #[pyo3(get)]
    offset: u64,
}

impl Batch {
    pub(crate) fn new(
        py: Python<'_>,
        ptr: *const u8,
        len: usize,
        range: &Range,
        opts: &Options,
    ) -> PyResult<Batch> {
        // SAFETY: a read-only view of `len` mapped bytes at ptr, released (close) before they
        // are unmapped.
        let view = unsafe {
            Bound::from_owned_ptr_or_err(
                py,
                pyo3::ffi::PyMemoryView_FromMemory(
                    ptr.cast_mut().cast(),
                    len as pyo3::ffi::Py_ssize_t,
                    PYBUF_READ,
                ),
            )?
        };
        Ok(Batch {
            ptr: Some(ptr),
            len,
            view: Some(view.unbind()),
            records: None,
            delimiter: opts.delimiter,
            opts: opts.clone(),
            index: range.seq,
            offset: range.input_offset,
        })
    }

    /// Ends the batch's life: its view is released (a view still exported elsewhere, e.g. by
    /// numpy, cannot be: the worker then ends after the batch so nothing reads unmapped bytes).
    pub(crate) fn close(&mut self, py: Python<'_>) -> bool {
        self.ptr = None;
        match self.view.take() {
            Some(v) => v.bind(py).call_method0("release").is_ok(),
            None => true,
        }
    }

    fn bytes(&self) -> PyResult<&[u8]> {
        match self.ptr {
            // SAFETY: mapped until close(), which clears ptr first.
            Some(p) => Ok(unsafe { std::slice::from_raw_parts(p, self.len) }),
            None => Err(PyValueError::new_err(
                "a frun batch is only valid during the call it was given to",
            )),
        }
    }
}

#[pymethods]
impl Batch {
    /// The batch's records (without delimiters), as the function would get them one by one.
    #[getter]
    fn records(&mut self, py: Python<'_>) -> PyResult<Py<PyList>> {
        if let Some(r) = &self.records {
            return Ok(r.clone_ref(py));
        }
        let bytes = self.bytes()?;
        let list = PyList::empty(py);
        let mut start = 0usize;
        while start < bytes.len() {
            let end =
                memchr::memchr(self.delimiter, &bytes[start..]).map_or(bytes.len(), |i| start + i);
            list.append(crate::text::record_object(
                py,
                &self.opts,
                &bytes[start..end],
            )?)?;
            start = end + 1;
        }
        let list = list.unbind();
        self.records = Some(list.clone_ref(py));
        Ok(list)
    }

    /// The batch's bytes, delimiters included: a read-only memoryview, not a copy.
    #[getter]
    fn data(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        self.bytes()?;
        Ok(self.view.as_ref().expect("open").clone_ref(py))
    }

    fn __len__(&mut self, py: Python<'_>) -> PyResult<usize> {
        Ok(self.records(py)?.bind(py).len())
    }

    fn __repr__(&self) -> String {
        format!(
            "<frun.Batch index={} offset={} bytes={}>",
            self.index, self.offset, self.len
        )
    }
}
