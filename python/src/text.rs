//! Records and results between Python `str` and UTF-8 bytes without a temporary object per
//! record: a `str`'s own UTF-8 buffer is read in place where the interpreter offers it, and
//! bytes become a `str` in one decoding pass.
//!
//! Also where a source's items become records and records become the function's arguments.
//! Only conversions live here; nothing is framed, sent or called.

use std::borrow::Cow;
use std::ffi::{c_char, c_void};
use std::sync::OnceLock;

use pyo3::exceptions::PyValueError;
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyString};

use crate::options::Options;

/// `PyUnicode_AsUTF8AndSize`: part of the stable ABI from CPython 3.10 only, so it is looked
/// up in the running interpreter rather than linked (this module is built for 3.9 and up).
type AsUtf8AndSize =
    unsafe extern "C" fn(*mut ffi::PyObject, *mut ffi::Py_ssize_t) -> *const c_char;

/// The interpreter's `PyUnicode_AsUTF8AndSize`, when it is 3.10 or newer.
fn as_utf8_and_size(py: Python<'_>) -> Option<AsUtf8AndSize> {
    static FOUND: OnceLock<Option<AsUtf8AndSize>> = OnceLock::new();
    *FOUND.get_or_init(|| {
        if py.version_info() < (3, 10) {
            return None;
        }
        // SAFETY: looks the symbol up in the process's global scope, the interpreter's own
        // (dlsym only reads the loaded objects' tables); what it finds under that name is
        // CPython's PyUnicode_AsUTF8AndSize (3.10 and newer export it), whose C signature is the
        // one `AsUtf8AndSize` spells out, so the address is taken as that function.
        unsafe {
            let p = libc::dlsym(libc::RTLD_DEFAULT, c"PyUnicode_AsUTF8AndSize".as_ptr());
            (!p.is_null()).then(|| std::mem::transmute::<*mut c_void, AsUtf8AndSize>(p))
        }
    })
}

/// The UTF-8 bytes of `s`: its own buffer where possible (no copy, nothing allocated for an
/// ASCII `str`), else a copy; lone surrogates are replaced as `PyString::to_cow` does.
pub(crate) fn utf8<'a>(s: &'a Bound<'_, PyString>) -> PyResult<Cow<'a, [u8]>> {
    if let Some(f) = as_utf8_and_size(s.py()) {
        let mut len: ffi::Py_ssize_t = 0;
        // SAFETY: `f` is PyUnicode_AsUTF8AndSize, called on a live str with a live out-length;
        // when it returns a buffer, that is `len` bytes of UTF-8 owned by `s` and kept as long
        // as `s` lives, so borrowing them for 'a (no longer than `s`) is sound.
        let bytes = unsafe {
            let p = f(s.as_ptr(), &mut len);
            (!p.is_null()).then(|| std::slice::from_raw_parts(p.cast::<u8>(), len as usize))
        };
        if let Some(bytes) = bytes {
            return Ok(Cow::Borrowed(bytes));
        }
        // A str that cannot be UTF-8 (lone surrogates): the error is dropped, the slow way
        // below replaces them.
        drop(PyErr::take(s.py()));
    }
    Ok(match s.to_cow()? {
        Cow::Borrowed(t) => Cow::Borrowed(t.as_bytes()),
        Cow::Owned(t) => Cow::Owned(t.into_bytes()),
    })
}

/// A `str` from UTF-8 `bytes` in one pass: invalid bytes raise `UnicodeDecodeError` when
/// `strict`, else become U+FFFD.
pub(crate) fn decode<'py>(
    py: Python<'py>,
    bytes: &[u8],
    strict: bool,
) -> PyResult<Bound<'py, PyAny>> {
    let errors = if strict {
        std::ptr::null()
    } else {
        c"replace".as_ptr()
    };
    // SAFETY: decodes `bytes.len()` live bytes into a new object (or an exception).
    unsafe {
        Bound::from_owned_ptr_or_err(
            py,
            ffi::PyUnicode_DecodeUTF8(
                bytes.as_ptr().cast(),
                bytes.len() as ffi::Py_ssize_t,
                errors,
            ),
        )
    }
}

/// One record as the function gets it: `bytes`, or `str` in the run's encoding.
pub(crate) fn record_object<'py>(
    py: Python<'py>,
    opts: &Options,
    record: &[u8],
) -> PyResult<Bound<'py, PyAny>> {
    match &opts.encoding {
        None => Ok(PyBytes::new(py, record).into_any()),
        Some(enc) if enc.is_utf8 => decode(py, record, true),
        Some(enc) => PyBytes::new(py, record).call_method1("decode", (enc.name.as_str(),)),
    }
}

/// Appends one item of a source and the delimiter to `pending`: a `str` as UTF-8 (or in
/// the run's encoding), `bytes` as they are. Whether it held the delimiter is checked for a
/// whole chunk at once ([`check_one_record_each`]).
pub(crate) fn push_record(
    pending: &mut Vec<u8>,
    item: &Bound<'_, PyAny>,
    opts: &Options,
) -> PyResult<()> {
    let reencode = opts.encoding.as_ref().filter(|e| !e.is_utf8);
    // An exact str first: a pointer compare, where the other tests are calls.
    if let (Ok(s), None) = (item.cast_exact::<PyString>(), reencode) {
        pending.extend_from_slice(&utf8(s)?);
    } else if let Ok(b) = item.cast::<PyBytes>() {
        pending.extend_from_slice(b.as_bytes());
    } else if let Ok(s) = item.cast::<PyString>() {
        match reencode {
            Some(e) => {
                let b = s.call_method1("encode", (e.name.as_str(),))?;
                pending.extend_from_slice(b.cast::<PyBytes>()?.as_bytes());
            }
            None => pending.extend_from_slice(&utf8(s)?),
        }
    } else {
        return Err(PyValueError::new_err(format!(
            "frun: each item of the source must be str or bytes, not {}",
            item.get_type().name()?
        )));
    }
    pending.push(opts.delimiter);
    Ok(())
}

/// `items` items were appended to `chunk`, each with one delimiter after it: more delimiters
/// than that means an item held one. One count over the chunk instead of a search per item.
pub(crate) fn check_one_record_each(chunk: &[u8], items: u64, delimiter: u8) -> PyResult<()> {
    if frun_engine::dispatch::batch::count_records(chunk, delimiter) != items {
        return Err(PyValueError::new_err(format!(
            "frun: an item of the source holds the delimiter {:?}: each item must be one record",
            char::from(delimiter)
        )));
    }
    Ok(())
}
