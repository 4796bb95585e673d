//! A worker shell: a copy of the user's shell that runs batches for one engine worker. It makes
//! itself a subshell without job control or the user's traps, runs the setup code, then loops:
//! read a request, call the function (builtin, alias) on the batch, reply with the status. It
//! ends when its socket closes, or with `_exit` when the shell code jumps to its top level.
//!
//! It decides nothing about batches: what to run, and what a failure means, is the engine's.

use std::ffi::{CStr, CString, OsString};
use std::io;
use std::os::fd::{AsFd, AsRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;

use nix::sys::signal::{SigSet, Signal};
use nix::unistd::{Pid, close, dup2_stdin, dup2_stdout, setpgid};

use super::ffi::{self, WordList};
use super::{Disposition, Kind, exit_now, set_disposition, set_mask};
use frun_engine::exec::plugin::host::{self as plugin_host, Plugin};
use frun_engine::exec::plugin::{Message as _, Request};
use frun_engine::exec::shell::{
    self, HELLO_OWN_GROUP, HELLO_SPOOL, HELLO_STDIN, HELLO_STDOUT, REQUEST_PLUGIN, REQUEST_STDIN,
};
use frun_engine::exec::surroundings::Surroundings;

/// The status a worker shell ends with after a call moved its fd 1 (the attempt counts as an
/// exit in the function).
const STDOUT_MOVED: i32 = 125;

/// The lowest descriptor a worker shell keeps its socket on, out of the way of the small
/// numbers scripts redirect.
const SOCKET_FD_MIN: RawFd = 600;

/// A worker shell: prepares the copy of the user's shell, runs the setup code, then runs
/// batches until its socket closes.
pub(super) fn worker_main(
    ctl: RawFd,
    sock: OwnedFd,
    kind: Kind,
    name: &OsString,
    old_mask: &SigSet,
) -> ! {
    // The engine's control socket, which this copy inherited. Its owner is a frame of the
    // shell's serving loop that this process never returns to.
    let _ = close(ctl);
    let code = worker_loop(sock, kind, name, old_mask).unwrap_or(1);
    // Flushes the shell's stdio before the process ends (without the shell's exit code).
    ffi::frun_flush_stdio();
    exit_now(code)
}

/// Makes this copy of the shell a worker: a subshell without job control whose traps are the
/// defaults, where Ctrl-C and TERM end it.
fn become_worker(old_mask: &SigSet) {
    // SAFETY: bash's own routines for a forked subshell, on this process's copy of its state.
    unsafe {
        ffi::subshell_environment |= ffi::SUBSHELL_ASYNC;
        ffi::interactive = 0;
        ffi::without_job_control();
        ffi::reset_signal_handlers();
    }
    for sig in [
        Signal::SIGINT,
        Signal::SIGTERM,
        Signal::SIGQUIT,
        Signal::SIGHUP,
    ] {
        set_disposition(sig, Disposition::Default);
    }
    set_mask(old_mask);
}

/// A close-on-exec copy of `sock` at or above [`SOCKET_FD_MIN`].
fn high_copy(sock: &OwnedFd) -> io::Result<OwnedFd> {
    frun_engine::sys::dup_at_least(sock.as_fd(), SOCKET_FD_MIN)
}

fn worker_loop(sock: OwnedFd, kind: Kind, name: &OsString, old_mask: &SigSet) -> io::Result<i32> {
    // The socket moves out of the way of scripts; the first descriptor stays open too, until
    // the worker ends.
    let sock = high_copy(&sock)?;
    become_worker(old_mask);
    let s = sock.as_raw_fd();
    let Some(started) = start(s)? else {
        return Ok(0);
    };
    let spool = match started.spool {
        // Read-only, and out of the way of the descriptors the setup code or a plugin may use.
        Some(fd) if kind == Kind::Plugin => Some(high_copy(&plugin_host::read_only(fd))?),
        _ => None,
    };
    if let Some(status) = setup(s)? {
        return Ok(status);
    }
    run_batches(s, kind, name, started.idle_stdin.as_ref(), spool)
}

/// What the engine's start-up message gives a worker to keep.
struct Started {
    /// What fd 0 is between batches, when the engine gave one.
    idle_stdin: Option<OwnedFd>,
    /// The spool, for a plugin's context (`-C`).
    spool: Option<OwnedFd>,
}

/// Takes the engine's start-up message: the process group, fd 1, fd 0 and the spool it gives
/// this worker. `None` when the socket closed first.
fn start(s: RawFd) -> io::Result<Option<Started>> {
    let Some((hello, fds)) = shell::recv_header(s, 3)? else {
        return Ok(None);
    };
    let mut fds = fds.into_iter();
    if hello.flags & HELLO_OWN_GROUP != 0 {
        let _ = setpgid(Pid::from_raw(0), Pid::from_raw(0));
    }
    if hello.flags & HELLO_STDOUT != 0 {
        if let Some(fd) = fds.next() {
            dup2_stdout(&fd)?;
        }
    }
    let idle_stdin = if hello.flags & HELLO_STDIN != 0 {
        fds.next()
    } else {
        None
    };
    if let Some(fd) = &idle_stdin {
        dup2_stdin(fd)?;
    }
    let spool = if hello.flags & HELLO_SPOOL != 0 {
        fds.next()
    } else {
        None
    };
    Ok(Some(Started { idle_stdin, spool }))
}

/// Runs the setup code, if any, and tells the engine how it went. Returns the status the
/// worker ends with when the setup failed.
fn setup(s: RawFd) -> io::Result<Option<i32>> {
    if let Some(mut code) = setup_code() {
        let (jumped, status) = call_string(&mut code);
        if jumped || status != 0 {
            let status = if status == 0 { 1 } else { status };
            shell::write_all(s, &status.to_ne_bytes())?;
            return Ok(Some(status));
        }
    }
    shell::write_all(s, &0i32.to_ne_bytes())?;
    Ok(None)
}

/// Runs batch after batch until the socket closes (status 0) or the shell code jumps to its
/// top level (that batch's status).
fn run_batches(
    s: RawFd,
    kind: Kind,
    name: &OsString,
    idle_stdin: Option<&OwnedFd>,
    spool: Option<OwnedFd>,
) -> io::Result<i32> {
    let cname = CString::new(name.as_bytes()).map_err(io::Error::other)?;
    let mut body = Vec::new();
    let mut words = ffi::Words::default();
    let mut text = Vec::new();
    let split_line = match kind {
        Kind::SplitFrom(literal) => split_line(name.as_bytes(), literal),
        _ => Vec::new(),
    };
    let mut plugin = PluginCalls {
        spool,
        ..PluginCalls::default()
    };
    // What each call must find as the first did: fd 0 is the engine's to set per batch.
    let surroundings = Surroundings::take(false);
    let pwd = ShellDirectory::take();
    loop {
        let Some((req, fds)) = shell::recv_header(s, 1)? else {
            return Ok(0);
        };
        body.resize(req.len as usize, 0);
        if !body.is_empty() && shell::recv_with_fds(s, &mut body, 0)?.is_none() {
            return Ok(0);
        }
        let stdin = if req.flags & REQUEST_STDIN != 0 {
            fds.into_iter().next()
        } else {
            None
        };
        if let Some(fd) = &stdin {
            dup2_stdin(fd)?;
        }
        drop(stdin);
        let (jumped, status) = match kind {
            Kind::Function => call_function(&cname, name, &mut body, &mut words),
            Kind::Builtin => call_builtin(&cname, &mut body, &mut words),
            Kind::Alias => call_alias(&body, req.words as usize, &mut text),
            Kind::SplitFrom(_) => call_split(&split_line, &mut body, &mut words, &mut text),
            Kind::Plugin => plugin.call(name, &mut body, req.flags),
        };
        // Flushes the shell's stdio into the capture before the engine reads it.
        ffi::frun_flush_stdio();
        if stdin_reset(idle_stdin, req.flags).is_err() || jumped {
            return Ok(status);
        }
        let moved = surroundings.restore()?;
        if moved.fds[1] {
            eprintln!(
                "frun: {}: the call closed or replaced its standard output (fd 1), so its \
                 output went elsewhere; that attempt is dropped and its worker shell ends",
                name.to_string_lossy()
            );
            return Ok(STDOUT_MOVED);
        }
        if moved.cwd {
            pwd.restore();
        }
        shell::write_all(s, &status.to_ne_bytes())?;
    }
}

/// The shell's own idea of its working directory (`$PWD`, `$OLDPWD`, what `pwd` prints), put
/// back after a call that ran `cd` (the directory itself is put back by [`Surroundings`]).
struct ShellDirectory {
    pwd: Option<CString>,
    oldpwd: Option<CString>,
}

impl ShellDirectory {
    fn take() -> ShellDirectory {
        ShellDirectory {
            pwd: ffi::string_value(c"PWD"),
            oldpwd: ffi::string_value(c"OLDPWD"),
        }
    }

    fn restore(&self) {
        // SAFETY: the shell copies the strings it is given; this process is single-threaded.
        unsafe {
            if let Some(pwd) = &self.pwd {
                ffi::set_working_directory(pwd.as_ptr());
                ffi::bind_variable(c"PWD".as_ptr(), pwd.as_ptr(), 0);
            }
            if let Some(old) = &self.oldpwd {
                ffi::bind_variable(c"OLDPWD".as_ptr(), old.as_ptr(), 0);
            }
        }
    }
}

/// Calls the function `cname` with the batch's words as its arguments.
fn call_function(
    cname: &CStr,
    name: &OsString,
    body: &mut [u8],
    words: &mut ffi::Words,
) -> (bool, i32) {
    // SAFETY: looks the function up in this shell (it may have been redefined).
    let var = unsafe { ffi::find_function(cname.as_ptr()) };
    if var.is_null() {
        eprintln!("frun: {}: the function is gone", name.to_string_lossy());
        return (false, 127);
    }
    let list = words.list(body, 0);
    // SAFETY: var is a live function; list points into `body` and `words`, which outlive the
    // call.
    call(ffi::FRUN_FUNCTION, var, list, std::ptr::null_mut())
}

/// Calls the builtin `cname`; the batch's first word is its name.
fn call_builtin(cname: &CStr, body: &mut [u8], words: &mut ffi::Words) -> (bool, i32) {
    // SAFETY: the builtin's entry point in this shell.
    match unsafe { ffi::find_shell_builtin(cname.as_ptr().cast_mut()) } {
        Some(f) => {
            let list = words.list(body, 1);
            // SAFETY: as above; the builtin gets its arguments without its name.
            call(
                ffi::FRUN_BUILTIN,
                f as *mut libc::c_void,
                list,
                std::ptr::null_mut(),
            )
        }
        None => (false, 127),
    }
}

/// Runs the alias as a command line: its name, then the batch's first `count` words after it,
/// each quoted. `text` is reused storage for the line.
fn call_alias(body: &[u8], count: usize, text: &mut Vec<u8>) -> (bool, i32) {
    text.clear();
    for (i, w) in body.split(|&b| b == 0).take(count).enumerate() {
        if i == 0 {
            text.extend_from_slice(w);
        } else {
            text.push(b' ');
            frun_engine::exec::command::argv::shell_quote(w, text);
        }
    }
    text.push(0);
    // SAFETY: aliases expand in this copy while the command line is parsed.
    unsafe { ffi::expand_aliases = 1 };
    call_string(text)
}

/// The command line `-U` runs once the batch's words are the positional parameters: the
/// command's name, the literal words quoted, the rest unquoted (split and globbed, nothing
/// else), NUL-terminated. The name is written as it is when it is a plain word, so an alias
/// still expands.
fn split_line(name: &[u8], literal: usize) -> Vec<u8> {
    let mut line = Vec::new();
    let plain = !name.is_empty()
        && name
            .iter()
            .all(|&b| b.is_ascii_alphanumeric() || b"_-.:+@%,=/".contains(&b));
    if plain {
        line.extend_from_slice(name);
    } else {
        frun_engine::exec::command::argv::shell_quote(name, &mut line);
    }
    if literal > 1 {
        line.extend_from_slice(format!(" \"${{@:2:{}}}\"", literal - 1).as_bytes());
    }
    line.extend_from_slice(format!(" ${{@:{}}}", literal + 1).as_bytes());
    line.push(0);
    line
}

/// Runs `line` (from [`split_line`]) with the batch's words (the name first) as the
/// positional parameters. `text` is reused storage for the line, which bash parses in place.
fn call_split(
    line: &[u8],
    body: &mut [u8],
    words: &mut ffi::Words,
    text: &mut Vec<u8>,
) -> (bool, i32) {
    let list = words.list(body, 0);
    // SAFETY: bash copies the words of a live list (pointing into `body` and `words`) into
    // this worker's positional parameters, replacing the previous ones.
    unsafe { ffi::remember_args(list, 1) };
    text.clear();
    text.extend_from_slice(line);
    call_string(text)
}

/// Puts the idle stdin back after a batch that had its own.
fn stdin_reset(idle: Option<&OwnedFd>, flags: u32) -> io::Result<()> {
    if flags & REQUEST_STDIN == 0 {
        return Ok(());
    }
    match idle {
        Some(fd) => Ok(dup2_stdin(fd)?),
        // Closes fd 0 (the batch's pipe), so the feeder sees EPIPE.
        None => Ok(close(libc::STDIN_FILENO)?),
    }
}

/// `FRUN_EXTRA_SETUP` or `FORKRUN_EXTRA_SETUP`, as shell variables of the calling shell.
fn setup_code() -> Option<Vec<u8>> {
    for name in [c"FRUN_EXTRA_SETUP", c"FORKRUN_EXTRA_SETUP"] {
        if let Some(v) = ffi::string_value(name) {
            let mut text = v.into_bytes();
            if text.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            text.push(0);
            return Some(text);
        }
    }
    None
}

/// Runs shell code (NUL-terminated); returns (jumped to top level, status).
fn call_string(text: &mut [u8]) -> (bool, i32) {
    call(
        ffi::FRUN_STRING,
        std::ptr::null_mut(),
        std::ptr::null_mut(),
        text.as_mut_ptr().cast(),
    )
}

fn call(
    kind: libc::c_int,
    target: *mut libc::c_void,
    list: *mut WordList,
    text: *mut libc::c_char,
) -> (bool, i32) {
    let mut status = 0;
    // SAFETY: frun_call hands the pointers to bash as the caller prepared them, and catches a
    // jump to the shell's top level so it never unwinds through Rust frames.
    let jumped = unsafe { ffi::frun_call(kind, target, list.cast(), text, &mut status) };
    (jumped != 0, status)
}

/// `-C SO:FN` in a worker shell: the library, loaded at the first batch, the reused argv and
/// the spool the context's `fd_in` names.
#[derive(Default)]
struct PluginCalls {
    loaded: Option<Plugin>,
    argv: Vec<*mut libc::c_char>,
    spool: Option<OwnedFd>,
}

impl PluginCalls {
    /// Calls the plugin named `spec` (`SO:FN`) with the batch in `body`: its words (the spec
    /// first, which is not passed), then the plugin request. Returns (false, status).
    fn call(&mut self, spec: &OsString, body: &mut [u8], flags: u32) -> (bool, i32) {
        let size = std::mem::size_of::<Request>();
        if flags & REQUEST_PLUGIN == 0 || body.len() < size {
            return (false, 1);
        }
        let (words, trailer) = body.split_at_mut(body.len() - size);
        let request = Request::from_bytes(trailer);
        if self.loaded.is_none() {
            let b = spec.as_bytes();
            let at = memchr::memrchr(b':', b).unwrap_or(b.len());
            let (Ok(library), Ok(function)) = (
                CString::new(&b[..at]),
                CString::new(b.get(at + 1..).unwrap_or_default()),
            ) else {
                return (false, 127);
            };
            match plugin_host::load(&library, &function) {
                Ok(p) => self.loaded = Some(p),
                Err((status, message)) => {
                    eprintln!("frun: {message}");
                    return (false, status);
                }
            }
        }
        self.argv.clear();
        let base = words.as_mut_ptr();
        let mut start = 0;
        for end in memchr::memchr_iter(0, words) {
            if start > 0 {
                // start < end <= words.len(): a word inside `body`, NUL-terminated.
                self.argv.push(base.wrapping_add(start).cast());
            }
            start = end + 1;
        }
        // The spec word itself (the first) is no argument.
        if start == 0 {
            return (false, 1);
        }
        let stdin_mode = flags & REQUEST_STDIN != 0;
        let batch = plugin_host::Batch {
            request: &request,
            records: request.records,
            worker: request.worker,
            node: request.node,
            incarnation: 0,
            fd_in: self.spool.as_ref().map_or(-1, AsRawFd::as_raw_fd),
            delimiter: request.delimiter as u8,
            stdin_mode,
        };
        let plugin = self.loaded.as_ref().expect("loaded above");
        (false, plugin_host::call(plugin, &mut self.argv, &batch))
    }
}
