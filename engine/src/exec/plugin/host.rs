//! The plugin host (`-C SO:FN`): the process a worker starts by exec to run its batches as calls
//! of a C function. It loads the library once, then for each request on its socket reads the
//! batch's bytes from the spool, lays them out as `argv` in one reused buffer (or puts the
//! batch's pipe on fd 0 with `-s`), calls the function, flushes C's stdout and replies with the
//! return value.
//!
//! It only serves: retries, output order and the record of what ran are the worker's. A
//! function that crashes or exits takes the host with it; the worker sees the socket close and
//! starts a fresh host for the next attempt. Nothing here runs inside frun's own process.

use std::ffi::{CStr, CString, OsString, c_char, c_int, c_void};
use std::os::fd::{AsFd, AsRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;

use crate::exec::plugin::wire::{
    HELLO_STDIN_MODE, Hello, LOADED, MODE_CHECK, MODE_SERVE, Message, REQUEST_STDIN, Request,
    WIRE_VERSION,
};
use crate::exec::shell::{recv_with_fds, write_all};
use crate::exec::surroundings::Surroundings;

/// forkrun's context, version 1, exactly as its plugins expect it (`forkrun_use_ctx = 1`).
#[repr(C)]
#[derive(Clone, Copy, Default)]
struct ForkrunCtx {
    batch_index: u64,
    batch_offset: u64,
    batch_byte_length: u64,
    version: u32,
    worker_id: u32,
    node_id: u32,
    num_kills: u32,
    numa_major: u32,
    numa_minor: u32,
    fd_in: i32,
    delimiter: c_char,
    cfg_state: [u8; 3],
}

/// frun's own context (`frun_use_ctx = 1`), as `include/frun_plugin.h` declares it. Fields are
/// only ever appended; `size` says how much of it this frun fills.
#[repr(C)]
#[derive(Clone, Copy, Default)]
struct FrunCtx {
    size: u32,
    version: u32,
    batch_index: u64,
    input_offset: u64,
    batch_bytes: u64,
    records: u64,
    spool_offset: u64,
    worker_id: u32,
    node_id: u32,
    attempt: u32,
    incarnation: u32,
    fd_in: i32,
    fd_out: i32,
    delimiter: u8,
    stdin_mode: u8,
    reserved: [u8; 6],
}

const FRUN_CTX_VERSION: u32 = 1;

/// Which signature the function has.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Signature {
    /// `int FN(int argc, char **argv)`.
    Plain,
    /// `int FN(int, char **, const struct forkrun_ctx *)`.
    Forkrun,
    /// `int FN(int, char **, const struct frun_ctx *)`.
    Frun,
}

type PlainFn = unsafe extern "C" fn(c_int, *mut *mut c_char) -> c_int;
type CtxFn = unsafe extern "C" fn(c_int, *mut *mut c_char, *const c_void) -> c_int;

unsafe extern "C" {
    static mut stdout: *mut libc::FILE;
    static mut stdin: *mut libc::FILE;
    fn __fpurge(stream: *mut libc::FILE);
}

/// A loaded library's function.
pub struct Plugin {
    function: *mut c_void,
    signature: Signature,
}

/// The loader's last error, as text.
fn dl_error() -> String {
    // SAFETY: dlerror returns NULL or a NUL-terminated string valid until the next dl call.
    unsafe {
        let e = libc::dlerror();
        if e.is_null() {
            "unknown error".into()
        } else {
            CStr::from_ptr(e).to_string_lossy().into_owned()
        }
    }
}

/// Whether the library defines `int NAME = 1;`.
fn opted_in(handle: *mut c_void, name: &CStr) -> bool {
    // SAFETY: handle is a live dlopen handle; a found symbol of this name is an int (the ABI).
    unsafe {
        let p = libc::dlsym(handle, name.as_ptr()).cast::<c_int>();
        !p.is_null() && *p == 1
    }
}

/// Loads `library` (once per process) and finds `function`: Err((status, message)).
pub fn load(library: &CStr, function: &CStr) -> Result<Plugin, (i32, String)> {
    // SAFETY: dlopen with a NUL-terminated path; the library's constructors run here, in the
    // host, which is what the host is for.
    let handle = unsafe { libc::dlopen(library.as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL) };
    if handle.is_null() {
        return Err((126, format!("cannot load the plugin: {}", dl_error())));
    }
    // SAFETY: as above, with the live handle.
    let f = unsafe { libc::dlsym(handle, function.as_ptr()) };
    if f.is_null() {
        return Err((
            127,
            format!(
                "{}: the plugin has no function {}",
                library.to_string_lossy(),
                function.to_string_lossy()
            ),
        ));
    }
    let signature = if opted_in(handle, c"frun_use_ctx") {
        Signature::Frun
    } else if opted_in(handle, c"forkrun_use_ctx") {
        Signature::Forkrun
    } else {
        Signature::Plain
    };
    Ok(Plugin {
        function: f,
        signature,
    })
}

/// The host's `main`: `args` are `frun-plugin-host MODE WIRE LIBRARY FUNCTION WORDS…`. Returns the
/// exit status.
pub fn main(args: Vec<OsString>) -> i32 {
    let c = |a: &OsString| CString::new(a.as_bytes()).ok();
    let (Some(mode), Some(wire), Some(library), Some(function)) =
        (args.get(1), args.get(2), args.get(3), args.get(4))
    else {
        say!("the plugin host is started by frun -C, not by hand");
        return 2;
    };
    if wire.as_bytes() != WIRE_VERSION.as_bytes() {
        let me = std::env::current_exe().unwrap_or_default();
        say!(
            "-C: the plugin host {} is from another frun release (it speaks {}); use the \
             frun-plugin-host shipped with this frun",
            me.display(),
            WIRE_VERSION
        );
        return 126;
    }
    let (Some(library), Some(function)) = (c(library), c(function)) else {
        return 2;
    };
    let plugin = match load(&library, &function) {
        Ok(p) => p,
        Err((status, message)) => {
            say!("{message}");
            return status;
        }
    };
    match mode.to_str() {
        Some(MODE_CHECK) => {
            use std::io::Write;
            let mut out = std::io::stdout().lock();
            match out.write_all(LOADED).and_then(|()| out.flush()) {
                Ok(()) => 0,
                Err(_) => 126,
            }
        }
        Some(MODE_SERVE) => {
            let words: Vec<CString> = args[5..].iter().filter_map(c).collect();
            match serve(&plugin, words) {
                Ok(None) => 0,
                Ok(Some(seq)) => {
                    say!(
                        "-C {}: batch {seq}: the function closed or replaced its standard \
                         output (fd 1), so its output went elsewhere; that attempt is dropped \
                         and its plugin host ends",
                        function.to_string_lossy()
                    );
                    STDOUT_MOVED
                }
                Err(e) => {
                    say!("plugin host: {}", crate::sys::errors::os_message(&e));
                    1
                }
            }
        }
        _ => 2,
    }
}

/// The status a host ends with after a call moved its fd 1 (the attempt counts as an exit in
/// the function).
const STDOUT_MOVED: i32 = 125;

/// What stays the same from batch to batch.
struct Host {
    ctl: OwnedFd,
    /// What fd 0 is between `-s` batches.
    stdin: OwnedFd,
    spool: OwnedFd,
    hello: Hello,
    /// The fixed words, then each batch's records: the function's argv.
    words: Vec<CString>,
    argv: Vec<*mut c_char>,
    bytes: Vec<u8>,
    /// fds 0–2 and the working directory as the function must leave them.
    surroundings: Surroundings,
}

/// A read-only descriptor of the same file, where /proc allows (the spool is frun's memory
/// file, which the plugin must not change); else the one given.
pub fn read_only(fd: OwnedFd) -> OwnedFd {
    let path = format!("/proc/self/fd/{}", fd.as_raw_fd());
    nix::fcntl::open(
        path.as_str(),
        nix::fcntl::OFlag::O_RDONLY | nix::fcntl::OFlag::O_CLOEXEC,
        nix::sys::stat::Mode::empty(),
    )
    .unwrap_or(fd)
}

/// Serves batches until frun closes the socket (on fd 0 at start): Ok(None). Ok(Some(seq)):
/// the call for batch `seq` moved fd 1; the host must end (its attempt is not answered).
fn serve(plugin: &Plugin, words: Vec<CString>) -> std::io::Result<Option<u64>> {
    // Commands expect SIGPIPE's default action, which the Rust runtime changed at start.
    crate::sys::set_disposition(
        nix::sys::signal::Signal::SIGPIPE,
        crate::sys::Disposition::Default,
    );
    let ctl = crate::sys::dup_at_least(std::io::stdin().as_fd(), 3)?;
    let mut b = vec![0u8; std::mem::size_of::<Hello>()];
    let Some(mut fds) = recv_with_fds(ctl.as_raw_fd(), &mut b, 2)? else {
        return Ok(None);
    };
    if fds.len() != 2 {
        return Err(std::io::Error::other(
            "the start-up message lacks its descriptors",
        ));
    }
    let spool = read_only(fds.pop().expect("two"));
    let stdin_fd = fds.pop().expect("two");
    put_stdin(stdin_fd.as_raw_fd())?;
    let mut host = Host {
        ctl,
        stdin: stdin_fd,
        spool,
        hello: Hello::from_bytes(&b),
        argv: Vec::with_capacity(words.len() + 1),
        words,
        bytes: Vec::new(),
        surroundings: Surroundings::take(true),
    };
    write_all(host.ctl.as_raw_fd(), &0i32.to_ne_bytes())?;
    let mut rb = vec![0u8; std::mem::size_of::<Request>()];
    loop {
        let Some(mut fds) = recv_with_fds(host.ctl.as_raw_fd(), &mut rb, 1)? else {
            return Ok(None);
        };
        let request = Request::from_bytes(&rb);
        let batch_stdin = if request.flags & REQUEST_STDIN != 0 {
            fds.pop()
        } else {
            None
        };
        let Some(status) = host.run(plugin, &request, batch_stdin)? else {
            return Ok(Some(request.seq));
        };
        write_all(host.ctl.as_raw_fd(), &status.to_ne_bytes())?;
    }
}

/// Makes fd 0 what `fd` is, with C's stdin forgetting what it read or saw before.
fn put_stdin(fd: RawFd) -> std::io::Result<()> {
    // SAFETY: dup2 on descriptors we own; stdin is libc's FILE, used only by this thread.
    unsafe {
        if libc::dup2(fd, 0) < 0 {
            return Err(std::io::Error::last_os_error());
        }
        __fpurge(stdin);
        libc::clearerr(stdin);
    }
    Ok(())
}

/// One batch as a call sees it: the request and what the caller knows besides.
pub struct Batch<'a> {
    /// The request as it came over the socket.
    pub request: &'a Request,
    /// Records in the batch (counted by the host when the request says 0).
    pub records: u64,
    /// The worker that runs the batch.
    pub worker: u32,
    /// That worker's NUMA node.
    pub node: u32,
    /// Which host of this worker this is: 1 for the first, one more after each lost one.
    pub incarnation: u32,
    /// The spool, read-only: the batch is at `request.spool_offset` for `request.len` bytes.
    pub fd_in: RawFd,
    /// The byte that ends each record.
    pub delimiter: u8,
    /// Batches come on the function's stdin (`-s`) rather than as its arguments.
    pub stdin_mode: bool,
}

/// Calls the plugin's function with `argv` (its words; NULL-terminated here) and the context its
/// signature asks for, then flushes C's stdout. Returns the return value as an exit status: a
/// value an exit status cannot carry still says "failed" (1).
pub fn call(plugin: &Plugin, argv: &mut Vec<*mut c_char>, b: &Batch<'_>) -> i32 {
    let r = b.request;
    let argc = argv.len() as c_int;
    argv.push(std::ptr::null_mut());
    let forkrun = ForkrunCtx {
        batch_index: r.seq,
        batch_offset: r.spool_offset,
        batch_byte_length: r.len,
        version: 1,
        worker_id: b.worker,
        node_id: b.node,
        num_kills: r.attempt,
        numa_major: 0,
        numa_minor: 0,
        fd_in: b.fd_in,
        delimiter: b.delimiter as c_char,
        cfg_state: [0; 3],
    };
    let frun = FrunCtx {
        size: std::mem::size_of::<FrunCtx>() as u32,
        version: FRUN_CTX_VERSION,
        batch_index: r.seq,
        input_offset: r.input_offset,
        batch_bytes: r.len,
        records: b.records,
        spool_offset: r.spool_offset,
        worker_id: b.worker,
        node_id: b.node,
        attempt: r.attempt,
        incarnation: b.incarnation,
        fd_in: b.fd_in,
        fd_out: 1,
        delimiter: b.delimiter,
        stdin_mode: u8::from(b.stdin_mode),
        reserved: [0; 6],
    };
    let p = argv.as_mut_ptr();
    // SAFETY: the function has the signature its library declared by its opt-in symbol (the
    // plugin ABI); argv is NULL-terminated and its strings outlive the call (the caller's);
    // the contexts outlive the call.
    let ret = unsafe {
        let ret = match plugin.signature {
            Signature::Plain => {
                std::mem::transmute::<*mut c_void, PlainFn>(plugin.function)(argc, p)
            }
            Signature::Forkrun => std::mem::transmute::<*mut c_void, CtxFn>(plugin.function)(
                argc,
                p,
                (&raw const forkrun).cast(),
            ),
            Signature::Frun => std::mem::transmute::<*mut c_void, CtxFn>(plugin.function)(
                argc,
                p,
                (&raw const frun).cast(),
            ),
        };
        libc::fflush(stdout);
        ret
    };
    if (0..=255).contains(&ret) { ret } else { 1 }
}

impl Host {
    /// Runs one batch; returns the function's return value as an exit status, or None when the
    /// call moved fd 1 (its output went elsewhere: the attempt cannot stand).
    fn run(
        &mut self,
        plugin: &Plugin,
        r: &Request,
        batch_stdin: Option<OwnedFd>,
    ) -> std::io::Result<Option<i32>> {
        let stdin_mode = self.hello.flags & HELLO_STDIN_MODE != 0;
        if let Some(fd) = &batch_stdin {
            put_stdin(fd.as_raw_fd())?;
        }
        drop(batch_stdin);
        self.argv.clear();
        self.argv
            .extend(self.words.iter().map(|w| w.as_ptr().cast_mut()));
        if !stdin_mode {
            self.read_records(r)?;
        }
        // The host counts what it split; with -s the scanner's count (0: not counted) is all
        // there is.
        let records = if stdin_mode {
            r.records
        } else {
            (self.argv.len() - self.words.len()) as u64
        };
        let batch = Batch {
            request: r,
            records,
            worker: self.hello.worker,
            node: self.hello.node,
            incarnation: self.hello.incarnation,
            fd_in: self.spool.as_raw_fd(),
            delimiter: self.hello.delimiter as u8,
            stdin_mode,
        };
        let ret = call(plugin, &mut self.argv, &batch);
        if stdin_mode {
            put_stdin(self.stdin.as_raw_fd())?;
        }
        // The next call finds fds 0 and 2 and the working directory as the first did.
        let moved = self.surroundings.restore()?;
        if moved.fds[0] {
            put_stdin(self.stdin.as_raw_fd())?;
        }
        Ok((!moved.fds[1]).then_some(ret))
    }

    /// Reads the batch from the spool and appends its records to argv, each ending with NUL
    /// where its delimiter was (no system call per record).
    fn read_records(&mut self, r: &Request) -> std::io::Result<()> {
        let len = r.len as usize;
        if self.bytes.len() < len + 1 {
            self.bytes.resize(len + 1, 0);
        }
        let mut got = 0;
        while got < len {
            let n = nix::sys::uio::pread(
                &self.spool,
                &mut self.bytes[got..len],
                (r.spool_offset + got as u64) as libc::off_t,
            )?;
            if n == 0 {
                break;
            }
            got += n;
        }
        split_records(
            &mut self.bytes[..=len],
            got,
            self.hello.delimiter as u8,
            &mut self.argv,
        );
        Ok(())
    }
}

/// Splits the batch `bytes[..got]` into records in place: each delimiter becomes the NUL ending
/// its record, and where each record starts is appended to `argv`. A last record without a
/// delimiter ends with a NUL at `bytes[got]` (the buffer holds one byte more).
///
/// Records are short and many: instead of one search per record, eight bytes at a time are
/// compared with the delimiter and each match found in the word's bit mask.
fn split_records(bytes: &mut [u8], got: usize, delimiter: u8, argv: &mut Vec<*mut c_char>) {
    assert!(bytes.len() > got);
    if got == 0 {
        return;
    }
    let base = bytes.as_mut_ptr();
    // Positions are at most `got`, inside `bytes`, which the caller does not resize while
    // the pointers are used.
    let at = |i: usize| base.wrapping_add(i).cast::<c_char>();
    let first = argv.len();
    argv.push(at(0));
    const LOW7: u64 = 0x7f7f_7f7f_7f7f_7f7f;
    let repeated = u64::from_ne_bytes([delimiter; 8]);
    let mut i = 0;
    while i + 8 <= got {
        let w = u64::from_le_bytes(bytes[i..i + 8].try_into().expect("8 bytes")) ^ repeated;
        // 0x80 in each byte of w that is zero (a delimiter), exactly.
        let mut m = !(((w & LOW7).wrapping_add(LOW7)) | w | LOW7);
        while m != 0 {
            let d = i + (m.trailing_zeros() / 8) as usize;
            bytes[d] = 0;
            argv.push(at(d + 1));
            m &= m - 1;
        }
        i += 8;
    }
    for (d, b) in bytes[..got].iter_mut().enumerate().skip(i) {
        if *b == delimiter {
            *b = 0;
            argv.push(at(d + 1));
        }
    }
    // A final delimiter ends the last record rather than starting another.
    if argv.len() > first && argv[argv.len() - 1] == at(got) {
        argv.pop();
    } else {
        bytes[got] = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The records `split_records` finds, as byte strings.
    fn split(input: &[u8], delimiter: u8) -> Vec<Vec<u8>> {
        let mut bytes = input.to_vec();
        bytes.push(b'!');
        let mut argv = Vec::new();
        split_records(&mut bytes, input.len(), delimiter, &mut argv);
        // Each pointer starts a NUL-terminated record inside `bytes`.
        let base = bytes.as_ptr() as usize;
        argv.iter()
            .map(|&p| {
                let from = p as usize - base;
                let len = memchr::memchr(0, &bytes[from..]).expect("NUL-terminated");
                bytes[from..from + len].to_vec()
            })
            .collect()
    }

    #[test]
    fn records_split_like_the_delimiter_says_at_every_length() {
        for n in 0..40usize {
            // Records of varied lengths, some empty, with and without a final delimiter.
            let recs: Vec<Vec<u8>> = (0..n).map(|k| vec![b'a' + (k % 26) as u8; k % 5]).collect();
            for (delim, last) in [(b'\n', true), (b'\n', false), (0u8, true)] {
                let mut input = Vec::new();
                for (k, r) in recs.iter().enumerate() {
                    input.extend_from_slice(r);
                    if last || k + 1 < recs.len() {
                        input.push(delim);
                    }
                }
                let mut want: Vec<Vec<u8>> =
                    input.split(|&b| b == delim).map(<[u8]>::to_vec).collect();
                if input.last() == Some(&delim) || input.is_empty() {
                    want.pop();
                }
                assert_eq!(
                    split(&input, delim),
                    want,
                    "n={n} delim={delim} last={last}"
                );
            }
        }
    }
}
