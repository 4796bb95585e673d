//! Records and results between Python `str` and UTF-8 bytes without a temporary object per
//! record: a `str`'s own UTF-8 buffer is read in place where the interpreter offers it, and
//! bytes become a `str` in one decoding pass.
//!
//! Only conversions live here; nothing is framed, sent or called.

use std::borrow::Cow;
use std::ffi::{c_char, c_void};
use std::sync::OnceLock;

use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::PyString;

/// `PyUnicode_AsUTF8AndSize`: part of the stable ABI from CPython 3.10 only, so it is looked
/// up in the running interpreter rather than linked (this module is built for 3.9 and up).
type AsUtf8AndSize =
    unsafe extern "C" fn(*mut ffi::PyObject, *mut ffi::Py_ssize_t) -> *const c_char;

/// The interpreter's `PyUnicode_AsUTF8AndSize`, when it is 3.10 or newer.
fn as_utf8_and_size(py: Python<'_>) -> Option<AsUtf8AndSize> {
    static FOUND: OnceLock<Option<usize>> = OnceLock::new();
    let addr = *FOUND.get_or_init(|| {
        if py.version_info() < (3, 10) {
            return None;
        }
        // SAFETY: looks a symbol up in the process's global scope (the interpreter's own).
        let p = unsafe { libc::dlsym(libc::RTLD_DEFAULT, c"PyUnicode_AsUTF8AndSize".as_ptr()) };
        (!p.is_null()).then_some(p as usize)
    });
    // SAFETY: the address is the interpreter's PyUnicode_AsUTF8AndSize, whose C signature is
    // the one `AsUtf8AndSize` spells out.
    addr.map(|a| unsafe { std::mem::transmute::<*mut c_void, AsUtf8AndSize>(a as *mut c_void) })
}

/// The UTF-8 bytes of `s`: its own buffer where possible (no copy, nothing allocated for an
/// ASCII `str`), else a copy; lone surrogates are replaced as `PyString::to_cow` does.
pub(crate) fn utf8<'a>(s: &'a Bound<'_, PyString>) -> PyResult<Cow<'a, [u8]>> {
    if let Some(f) = as_utf8_and_size(s.py()) {
        let mut len: ffi::Py_ssize_t = 0;
        // SAFETY: `s` is a live str; the buffer returned belongs to it and lives as long as it.
        let p = unsafe { f(s.as_ptr(), &mut len) };
        if !p.is_null() {
            // SAFETY: CPython gives `len` bytes at `p`, owned by `s`, borrowed for 'a.
            let bytes = unsafe { std::slice::from_raw_parts(p.cast::<u8>(), len as usize) };
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
