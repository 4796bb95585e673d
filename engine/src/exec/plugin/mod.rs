//! The C plugin backend's engine side (`-C SO:FN`): a batch runs as one call of a C function in
//! a plugin host — a process of its own, started by exec (never a fork of the multithreaded
//! frun) from the dynamically linked frun binary, that loads the library once and serves one
//! worker's batches over a socket.
//!
//! This module owns the wire format between a worker and its host (a start-up message, one
//! fixed-size request and one status per batch), the check made before any work, and the
//! worker's end of a host. It never loads a library itself: the host does (`plugin_host`).

pub mod host;
pub mod wire;

use std::ffi::{CString, OsStr, OsString};
use std::io;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};

use nix::sys::socket::{AddressFamily, SockFlag, SockType, socketpair};

use crate::exec::resolve::ResolveError;
use crate::exec::shell::{recv_with_fds, send_with_fds};
use crate::exec::spawn::{ChildEnd, Spawner, wait_exit, wait_reap};

pub use crate::exec::plugin::wire::{
    HELLO_STDIN_MODE, HOST_NAME, Hello, LOADED, MODE_CHECK, MODE_SERVE, Message, REQUEST_STDIN,
    Request, WIRE_VERSION,
};

/// What every worker's host is started with, resolved once by the plan.
#[derive(Clone, Debug)]
pub struct PluginWork {
    /// The dynamically linked frun binary that serves as host.
    pub host: PathBuf,
    /// The library, as an absolute path (taken literally: never searched for).
    pub library: PathBuf,
    /// The name of the function to call in the library (`FN` of `-C SO:FN`).
    pub function: OsString,
    /// The fixed words after `-C SO:FN`: the function's first arguments.
    pub words: Vec<OsString>,
    /// Batches go to the function's stdin.
    pub stdin_mode: bool,
}

impl PluginWork {
    /// The host's argv for `mode`: its name, the mode, the library, the function, the words.
    fn host_argv(&self, mode: &str) -> Vec<CString> {
        let mut v = vec![
            CString::new(HOST_NAME).expect("no NUL"),
            CString::new(mode).expect("no NUL"),
            CString::new(WIRE_VERSION).expect("no NUL"),
            cstring(self.library.as_os_str()),
            cstring(&self.function),
        ];
        v.extend(self.words.iter().map(|w| cstring(w)));
        v
    }
}

fn cstring(s: &OsStr) -> CString {
    // Command-line words and paths hold no NUL byte.
    CString::new(s.as_bytes()).expect("arguments hold no NUL")
}

/// The plugin host binary: this one where it can load libraries; the static (musl) binary
/// cannot, and uses the dynamically linked frun shipped beside it as `frun-plugin-host`.
pub fn host_binary() -> Result<PathBuf, ResolveError> {
    if cfg!(target_env = "musl") {
        let me = std::env::current_exe()
            .and_then(std::fs::canonicalize)
            .map_err(|e| {
                ResolveError::NotExecutable(format!("-C: cannot find frun's own binary: {e}"))
            })?;
        let host = me.with_file_name(HOST_NAME);
        if host.is_file() {
            return Ok(host);
        }
        return Err(ResolveError::NotExecutable(format!(
            "-C: this frun is fully static and cannot load libraries; it runs plugins through \
             the dynamically linked {HOST_NAME} shipped beside it, and there is none at {}",
            host.display()
        )));
    }
    let proc_exe = Path::new("/proc/self/exe");
    if proc_exe.exists() {
        return Ok(proc_exe.to_path_buf());
    }
    std::env::current_exe().map_err(|e| {
        ResolveError::NotExecutable(format!(
            "-C: cannot find frun's own binary to host the plugin ({}): is /proc mounted?",
            crate::sys::os_message(&e)
        ))
    })
}

/// Checks, before any work, that the library exists and loads here and that it has the
/// function, by starting a host that only loads it: the loader's own verdict (wrong
/// architecture, missing dependencies) is the one reported. Exit 127: missing file or
/// function; 126: anything else that keeps it from loading, a constructor that ends the
/// process while the library loads included (whatever its status: the host's [`LOADED`] line
/// is what says the load went through).
pub fn check(work: &PluginWork) -> Result<(), ResolveError> {
    let shown = work.library.display();
    match std::fs::metadata(&work.library) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            return Err(ResolveError::NotFound(format!(
                "{shown}: no such plugin library"
            )));
        }
        Err(e) => {
            return Err(ResolveError::NotExecutable(format!(
                "{shown}: {}",
                crate::sys::errors::os_message(&e)
            )));
        }
        Ok(m) if m.is_dir() => {
            return Err(ResolveError::NotExecutable(format!(
                "{shown}: is a directory"
            )));
        }
        Ok(_) => {}
    }
    elf_check(&work.library)?;
    if work.host.as_os_str().is_empty() {
        return check_in_a_copy(work);
    }
    let argv = work.host_argv(MODE_CHECK);
    let out = std::process::Command::new(&work.host)
        .arg0(HOST_NAME)
        .args(argv[1..].iter().map(|a| OsStr::from_bytes(a.as_bytes())))
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .output()
        .map_err(|e| {
            ResolveError::NotExecutable(format!(
                "-C: cannot start the plugin host {}: {}",
                work.host.display(),
                crate::sys::errors::os_message(&e)
            ))
        })?;
    let said = String::from_utf8_lossy(&out.stderr);
    let line = said.lines().next().unwrap_or("").trim();
    let line = line.strip_prefix("frun: ").unwrap_or(line).to_string();
    let loaded = out.stdout.ends_with(LOADED);
    match out.status.code() {
        _ if loaded => Ok(()),
        Some(127) => Err(ResolveError::NotFound(line)),
        Some(_) if !line.is_empty() => Err(ResolveError::NotExecutable(line)),
        Some(code) => Err(ended_while_loading(&work.library, code)),
        None => Err(ResolveError::NotExecutable(format!(
            "{shown}: the plugin host could not load it ({})",
            out.status
        ))),
    }
}

/// A library whose loading ended the process with `code` and said nothing: a constructor that
/// calls `exit`.
fn ended_while_loading(library: &Path, code: i32) -> ResolveError {
    ResolveError::NotExecutable(format!(
        "{}: loading it ended the process (exit status {code}): a constructor in the library \
         calls exit, so no batch could run",
        library.display()
    ))
}

/// [`check`] where there is no host binary (the bash builtin, whose worker shells load the
/// plugin): a forked copy of this single-threaded process loads it and exits, so no
/// constructor of the library runs here.
fn check_in_a_copy(work: &PluginWork) -> Result<(), ResolveError> {
    let (library, function) = (cstring(work.library.as_os_str()), cstring(&work.function));
    let (ours, theirs) =
        nix::unistd::pipe().map_err(|e| ResolveError::NotExecutable(e.to_string()))?;
    // SAFETY: the caller is single-threaded (the plan runs before any thread starts), so the
    // child may load a library; it only loads, writes its verdict and `_exit`s.
    let pid = unsafe { libc::fork() };
    if pid == 0 {
        drop(ours);
        let (code, message) = match crate::exec::plugin::host::load(&library, &function) {
            Ok(_) => (0, String::from_utf8_lossy(LOADED).into_owned()),
            Err(e) => e,
        };
        // A short message: one write.
        let _ = nix::unistd::write(&theirs, message.as_bytes());
        // Ends the copy at once, running nothing of the parent's.
        crate::sys::exit_now(code);
    }
    drop(theirs);
    let mut said = Vec::new();
    let _ = io::Read::read_to_end(&mut std::fs::File::from(ours), &mut said);
    let status = crate::sys::wait_status(pid).unwrap_or(0);
    if said.ends_with(LOADED) {
        return Ok(());
    }
    let said = String::from_utf8_lossy(&said).into_owned();
    match (libc::WIFEXITED(status), libc::WEXITSTATUS(status)) {
        (true, 127) => Err(ResolveError::NotFound(said)),
        (true, _) if !said.is_empty() => Err(ResolveError::NotExecutable(said)),
        (true, code) => Err(ended_while_loading(&work.library, code)),
        _ => Err(ResolveError::NotExecutable(format!(
            "{}: loading it crashed",
            work.library.display()
        ))),
    }
}

/// ELF's `e_machine` for the architecture this frun was built for (0: not known here).
const fn own_machine() -> u16 {
    if cfg!(target_arch = "x86_64") {
        62
    } else if cfg!(target_arch = "aarch64") {
        183
    } else if cfg!(target_arch = "x86") {
        3
    } else if cfg!(target_arch = "arm") {
        40
    } else if cfg!(target_arch = "riscv64") {
        243
    } else if cfg!(target_arch = "powerpc64") {
        21
    } else if cfg!(target_arch = "s390x") {
        22
    } else {
        0
    }
}

/// Names for the architectures a library is most often built for by mistake.
fn machine_name(m: u16) -> String {
    match m {
        3 => "x86 (32-bit)".into(),
        40 => "ARM (32-bit)".into(),
        62 => "x86-64".into(),
        183 => "AArch64".into(),
        243 => "RISC-V".into(),
        21 => "PowerPC64".into(),
        22 => "s390x".into(),
        m => format!("ELF machine {m}"),
    }
}

/// Reads the library's ELF header: a file that is no shared library, or one built for another
/// architecture, is said plainly (the loader's own words for the latter are "No such file").
fn elf_check(library: &Path) -> Result<(), ResolveError> {
    use std::io::Read;
    let shown = library.display();
    let mut head = [0u8; 20];
    let read = std::fs::File::open(library).and_then(|mut f| f.read_exact(&mut head));
    let fail = |why: String| Err(ResolveError::NotExecutable(format!("{shown}: {why}")));
    if let Err(e) = read {
        return match e.kind() {
            io::ErrorKind::UnexpectedEof => fail("not a shared library (no ELF header)".into()),
            _ => fail(crate::sys::errors::os_message(&e)),
        };
    }
    if &head[..4] != b"\x7fELF" {
        return fail("not a shared library (no ELF header)".into());
    }
    let class64 = head[4] == 2;
    let little = head[5] == 1;
    let machine = if little {
        u16::from_le_bytes([head[18], head[19]])
    } else {
        u16::from_be_bytes([head[18], head[19]])
    };
    let own = own_machine();
    let own_class64 = cfg!(target_pointer_width = "64");
    let own_little = cfg!(target_endian = "little");
    if own != 0 && (machine != own || class64 != own_class64 || little != own_little) {
        return fail(format!(
            "built for another architecture ({}, {}-bit), this frun runs on {}",
            machine_name(machine),
            if class64 { 64 } else { 32 },
            machine_name(own)
        ));
    }
    Ok(())
}

/// The worker's end of one running host.
pub struct HostProcess {
    pid: libc::pid_t,
    sock: OwnedFd,
}

/// What a worker's host is started with besides the plugin itself.
pub struct HostStart<'a> {
    /// The plugin: binary, library, function and fixed words.
    pub work: &'a PluginWork,
    /// The start-up message the host gets first.
    pub hello: Hello,
    /// The host's fd 1 (None: frun's stdout).
    pub stdout: Option<RawFd>,
    /// What the function finds on fd 0 outside `-s` (the children's stdin).
    pub stdin: RawFd,
    /// The spool, handed to the function as the context's `fd_in`.
    pub spool: RawFd,
    /// The signal mask the host starts with (frun's mask before it blocked signals).
    pub sigmask: &'a libc::sigset_t,
    /// The host leads a process group of its own, so stopping it reaches everything it started.
    pub own_group: bool,
    /// The host's environment, when the commands get one of their own (None: frun's).
    pub env: Option<&'a [std::ffi::CString]>,
}

impl HostProcess {
    /// Starts a host and waits until it is ready to serve. Err(end): it went away first (the
    /// library failed to load there, or a constructor crashed); the host is reaped.
    pub fn start(s: &HostStart<'_>) -> io::Result<Result<HostProcess, ChildEnd>> {
        let (ours, theirs) = socketpair(
            AddressFamily::Unix,
            SockType::Stream,
            None,
            SockFlag::SOCK_CLOEXEC,
        )?;
        let mut spawner = Spawner::new(s.stdout, Some(theirs.as_raw_fd()), s.sigmask, s.own_group)?;
        if let Some(env) = s.env {
            spawner = spawner.with_environment(env.to_vec());
        }
        let argv = s.work.host_argv(MODE_SERVE);
        let mut ptrs: Vec<*const libc::c_char> = argv.iter().map(|a| a.as_ptr()).collect();
        ptrs.push(std::ptr::null());
        let path = cstring(s.work.host.as_os_str());
        let pid = spawner.spawn(&path, &ptrs)?;
        drop(theirs);
        let host = HostProcess { pid, sock: ours };
        let sent = send_with_fds(
            host.sock.as_raw_fd(),
            &s.hello.to_bytes(),
            &[s.stdin, s.spool],
        );
        match sent.and_then(|()| host.reply()) {
            Ok(Some(0)) => Ok(Ok(host)),
            _ => Ok(Err(host.lost()?)),
        }
    }

    /// The host's process id.
    pub fn pid(&self) -> libc::pid_t {
        self.pid
    }

    /// Sends one batch; `stdin` (with `-s`) is the read end of the batch's pipe.
    pub fn send(&self, request: &Request, stdin: Option<RawFd>) -> io::Result<()> {
        let fds: &[RawFd] = match &stdin {
            Some(fd) => std::slice::from_ref(fd),
            None => &[],
        };
        send_with_fds(self.sock.as_raw_fd(), &request.to_bytes(), fds)
    }

    /// The function's return value for the batch sent last; None when the host went away
    /// (then [`HostProcess::lost`] says how).
    pub fn reply(&self) -> io::Result<Option<i32>> {
        let mut b = [0u8; 4];
        Ok(recv_with_fds(self.sock.as_raw_fd(), &mut b, 0)?.map(|_| i32::from_ne_bytes(b)))
    }

    /// The host went away: reaps it and says how it ended.
    pub fn lost(mut self) -> io::Result<ChildEnd> {
        let pid = std::mem::replace(&mut self.pid, 0);
        let end = wait_exit(pid);
        wait_reap(pid);
        end
    }
}

impl Drop for HostProcess {
    fn drop(&mut self) {
        // An idle host reads the end of its socket and exits; shut it first so the wait below
        // cannot hang.
        if self.pid != 0 {
            let _ =
                nix::sys::socket::shutdown(self.sock.as_raw_fd(), nix::sys::socket::Shutdown::Both);
            let _ = wait_exit(self.pid);
            wait_reap(self.pid);
        }
    }
}
