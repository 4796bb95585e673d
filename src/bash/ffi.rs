//! The bash ABI the builtin uses: the `struct builtin` bash looks up after `enable -f`, the word
//! list type, the bash functions and variables the shell binary exports, and the C shim.
//!
//! Declarations only, plus [`Words`], which lays out a word list over a batch's bytes without
//! allocating per word.

use std::ffi::c_char;
use std::ffi::c_int;
use std::ffi::c_void;
use std::ffi::{CStr, CString};

/// `WORD_DESC`.
#[repr(C)]
pub(crate) struct WordDesc {
    pub word: *mut c_char,
    pub flags: c_int,
}

/// `WORD_LIST`.
#[repr(C)]
pub(crate) struct WordList {
    pub next: *mut WordList,
    pub word: *mut WordDesc,
}

type BuiltinFn = unsafe extern "C" fn(*mut WordList) -> c_int;

/// `struct builtin`.
#[repr(C)]
pub(super) struct Builtin {
    name: *const c_char,
    function: Option<BuiltinFn>,
    flags: c_int,
    long_doc: *const *const c_char,
    short_doc: *const c_char,
    handle: *mut c_char,
}

const BUILTIN_ENABLED: c_int = 0x01;
/// `SUBSHELL_ASYNC`: the shell is a forked, asynchronous subshell.
pub(super) const SUBSHELL_ASYNC: c_int = 0x01;
/// `frun_call` kinds (shim.c).
pub(super) const FRUN_FUNCTION: c_int = 0;
pub(super) const FRUN_BUILTIN: c_int = 1;
pub(super) const FRUN_STRING: c_int = 2;

static mut LONG_DOC: [*const c_char; 6] = [
    c"Run a command, shell function, builtin or alias over every input record, in parallel."
        .as_ptr(),
    c"".as_ptr(),
    c"Records come from standard input (or -a FILE), one per line by default. A bash".as_ptr(),
    c"function runs in worker shells forked from this one, so its variables, arrays and".as_ptr(),
    c"aliases are there without export. See `frun --help` for the options.".as_ptr(),
    std::ptr::null(),
];

/// What bash reads after `enable -f FILE frun`. It must be writable: bash stores into it.
#[unsafe(no_mangle)]
#[allow(non_upper_case_globals)]
pub(super) static mut frun_struct: Builtin = Builtin {
    name: c"frun".as_ptr(),
    function: Some(super::frun_builtin),
    flags: BUILTIN_ENABLED,
    long_doc: &raw const LONG_DOC as *const *const c_char,
    short_doc: c"frun [options] [command [initial-arguments]]".as_ptr(),
    handle: std::ptr::null_mut(),
};

unsafe extern "C" {
    pub(super) static mut subshell_environment: c_int;
    pub(super) static mut interactive: c_int;
    pub(super) static mut expand_aliases: c_int;

    pub(super) fn find_function(name: *const c_char) -> *mut c_void;
    pub(super) fn find_shell_builtin(name: *mut c_char) -> Option<BuiltinFn>;
    pub(super) fn find_alias(name: *mut c_char) -> *mut c_void;
    pub(super) fn get_string_value(name: *const c_char) -> *mut c_char;
    pub(super) fn set_working_directory(name: *const c_char);
    pub(super) fn bind_variable(
        name: *const c_char,
        value: *const c_char,
        flags: c_int,
    ) -> *mut c_void;
    pub(super) fn reset_signal_handlers();
    pub(super) fn without_job_control();
    pub(super) fn remember_args(list: *mut WordList, destructive: c_int);

    // shim.c
    pub(super) fn frun_call(
        kind: c_int,
        target: *mut c_void,
        words: *mut c_void,
        text: *mut c_char,
        status: *mut c_int,
    ) -> c_int;
    // SAFETY (of declaring it safe): it takes nothing and only flushes the C library's own
    // stdout and stderr buffers, which is sound at any time in this single-threaded shell.
    pub(super) safe fn frun_flush_stdio();
}

/// The value of the shell variable `name`, copied (None: unset, or without a string value).
pub(super) fn string_value(name: &CStr) -> Option<CString> {
    // SAFETY: get_string_value only reads shell state, given a valid C string; a non-NULL value
    // is a NUL-terminated string of the shell's, copied at once, before anything could change
    // it (the shell runs one thread).
    unsafe {
        let v = get_string_value(name.as_ptr());
        (!v.is_null()).then(|| CStr::from_ptr(v).to_owned())
    }
}

/// Reusable storage for a word list over NUL-terminated words.
#[derive(Default)]
pub(super) struct Words {
    descs: Vec<WordDesc>,
    links: Vec<WordList>,
}

impl Words {
    /// Lays out a list over the NUL-terminated words in `body`, skipping the first `skip`.
    /// The list points into `body` and `self`; neither may change while bash uses it.
    pub(super) fn list(&mut self, body: &mut [u8], skip: usize) -> *mut WordList {
        self.descs.clear();
        self.links.clear();
        let mut start = 0;
        let mut index = 0;
        while start < body.len() {
            let len = memchr::memchr(0, &body[start..]).unwrap_or(body.len() - start);
            if index >= skip {
                self.descs.push(WordDesc {
                    word: body[start..].as_mut_ptr().cast(),
                    flags: 0,
                });
            }
            index += 1;
            start += len + 1;
        }
        // Linked only once the vectors are full, so their buffers no longer move.
        for d in self.descs.iter_mut() {
            self.links.push(WordList {
                next: std::ptr::null_mut(),
                word: d,
            });
        }
        let mut links = self.links.iter_mut().peekable();
        while let Some(link) = links.next() {
            if let Some(next) = links.peek_mut() {
                link.next = &raw mut **next;
            }
        }
        if self.links.is_empty() {
            std::ptr::null_mut()
        } else {
            self.links.as_mut_ptr()
        }
    }
}
