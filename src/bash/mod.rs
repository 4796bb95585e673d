//! The bash front end: `frun` as a loadable builtin (`enable -f`), so a bash function, builtin
//! or alias of the calling shell can be the command.
//!
//! Three kinds of process, all forked from the user's shell:
//! - the user's shell itself, inside the builtin: parses the flags, forks the engine, then only
//!   serves it ([`serve`]): it forks worker shells on request and reaps them. It starts no
//!   thread, waits for its own children only (SIGCHLD blocked meanwhile, so bash's handler
//!   cannot take them) and changes none of the shell's state;
//! - the engine ([`engine_main`]): the same engine as the binary, with threads, in a process of
//!   its own. Its workers run batches in worker shells instead of spawning (`exec::shell`);
//! - worker shells ([`worker_main`]): copies of the user's shell, so every function, variable,
//!   array and alias is there. Each runs batch after batch and ends when its socket closes.
//!
//! This module holds the bash ABI and the process plumbing; it does not schedule, order or
//! retry anything (the engine does).

mod ffi;

use std::ffi::{CStr, CString, OsString};
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::sync::{Arc, Mutex};

use crate::exec::shell::{self, HELLO_OWN_GROUP, HELLO_STDIN, HELLO_STDOUT, Host, REQUEST_STDIN};
use crate::exec::spawn::ChildEnd;
use ffi::WordList;

/// What the command is in the calling shell.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Function,
    Builtin,
    Alias,
}

/// The lowest descriptor a worker shell keeps its socket on, out of the way of the small
/// numbers scripts redirect.
const SOCKET_FD_MIN: RawFd = 600;

/// Requests from the engine to the user's shell: 8 bytes, `[kind, pid]`.
const ASK_START: i32 = 1;
const ASK_REAP: i32 = 2;

fn cvt(r: libc::c_int) -> io::Result<libc::c_int> {
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(r)
    }
}

/// The builtin's entry point (see `ffi::frun_struct`).
///
/// # Safety
/// Called by bash with a valid (possibly null) word list.
pub(crate) unsafe extern "C" fn frun_builtin(list: *mut WordList) -> libc::c_int {
    let mut args = vec![OsString::from("frun")];
    // SAFETY: bash hands us a well-formed list of NUL-terminated words.
    unsafe {
        let mut l = list;
        while !l.is_null() {
            let w = (*l).word;
            if !w.is_null() && !(*w).word.is_null() {
                args.push(OsString::from_vec(
                    CStr::from_ptr((*w).word).to_bytes().to_vec(),
                ));
            }
            l = (*l).next;
        }
    }
    // SAFETY: flushes the shell's own stdio buffers so no child writes them a second time.
    unsafe { ffi::frun_flush_stdio() };
    let mut cfg = match crate::parse_args(args) {
        Ok(cfg) => cfg,
        Err(code) => return code,
    };
    let kind = if cfg.external || cfg.dry_run {
        None
    } else {
        lookup(cfg.command[0].as_bytes())
    };
    cfg.shell_command = kind.is_some();
    match run(&cfg, kind) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("frun: {}", crate::errors::os_message(&e));
            1
        }
    }
}

/// Looks the command name up as bash would: alias (when aliases expand), function, builtin.
fn lookup(name: &[u8]) -> Option<Kind> {
    let name = CString::new(name).ok()?;
    // SAFETY: bash lookups with a valid C string; they only read shell state.
    unsafe {
        if ffi::expand_aliases != 0 && !ffi::find_alias(name.as_ptr().cast_mut()).is_null() {
            Some(Kind::Alias)
        } else if !ffi::find_function(name.as_ptr()).is_null() {
            Some(Kind::Function)
        } else if ffi::find_shell_builtin(name.as_ptr().cast_mut()).is_some() {
            Some(Kind::Builtin)
        } else {
            None
        }
    }
}

/// The signals that stop a run; while it runs, the user's shell receives them through a
/// signalfd and passes them to the engine, so `kill` of a shell running `frun` stops frun the
/// way it stops the binary (and the shell gets the signal itself once frun has ended).
fn forwarded_signals() -> Vec<i32> {
    crate::engine::stop_signals(crate::plan::preempt().unwrap_or(false))
}

/// Blocks SIGCHLD and `forwarded`; returns the mask before.
fn block_signals(forwarded: &[i32]) -> libc::sigset_t {
    // SAFETY: sigset manipulation on local storage; sigprocmask on this (only) thread.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        let mut old: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, libc::SIGCHLD);
        for &s in forwarded {
            libc::sigaddset(&mut set, s);
        }
        libc::sigprocmask(libc::SIG_BLOCK, &set, &mut old);
        old
    }
}

/// A signalfd for `signals` (blocked by the caller).
fn signal_fd(signals: &[i32]) -> io::Result<OwnedFd> {
    // SAFETY: builds a set and a signalfd from it; the result is checked and owned below.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        for &s in signals {
            libc::sigaddset(&mut set, s);
        }
        let fd = cvt(libc::signalfd(
            -1,
            &set,
            libc::SFD_CLOEXEC | libc::SFD_NONBLOCK,
        ))?;
        Ok(OwnedFd::from_raw_fd(fd))
    }
}

fn set_mask(mask: &libc::sigset_t) {
    // SAFETY: sets this thread's mask from a valid set.
    unsafe { libc::sigprocmask(libc::SIG_SETMASK, mask, std::ptr::null_mut()) };
}

fn socket_pair() -> io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0; 2];
    // SAFETY: socketpair fills two descriptors, owned right below.
    cvt(unsafe {
        libc::socketpair(
            libc::AF_UNIX,
            libc::SOCK_STREAM | libc::SOCK_CLOEXEC,
            0,
            fds.as_mut_ptr(),
        )
    })?;
    // SAFETY: both are fresh and owned by nobody else.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

fn wait_pid(pid: libc::pid_t) -> io::Result<libc::c_int> {
    let mut status = 0;
    loop {
        // SAFETY: waits for our own child into a live int.
        let r = unsafe { libc::waitpid(pid, &mut status, 0) };
        if r == pid {
            return Ok(status);
        }
        let e = io::Error::last_os_error();
        if e.kind() != io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
}

fn child_end(status: libc::c_int) -> ChildEnd {
    if libc::WIFSIGNALED(status) {
        ChildEnd::Signaled(libc::WTERMSIG(status))
    } else {
        ChildEnd::Exited(libc::WEXITSTATUS(status))
    }
}

/// Forks the engine and serves it until it ends; returns frun's exit status.
fn run(cfg: &crate::cli::Config, kind: Option<Kind>) -> io::Result<i32> {
    let (mine, theirs) = socket_pair()?;
    // SAFETY: getpid has no memory effects.
    let shell_pid = unsafe { libc::getpid() };
    let forwarded = forwarded_signals();
    let old_mask = block_signals(&forwarded);
    let signals = match signal_fd(&forwarded) {
        Ok(fd) => fd,
        Err(e) => {
            set_mask(&old_mask);
            return Err(e);
        }
    };
    // SAFETY: fork in a single-threaded process (the shell); the child only runs our code and
    // ends with _exit.
    let engine = unsafe { libc::fork() };
    if engine < 0 {
        let e = io::Error::last_os_error();
        set_mask(&old_mask);
        return Err(e);
    }
    if engine == 0 {
        drop(mine);
        drop(signals);
        follow_parent(shell_pid);
        engine_main(cfg, theirs, &old_mask);
    }
    drop(theirs);
    let mut caught = None;
    let mut live = Vec::new();
    // Whatever ended serving (the engine's end, or a broken socket), the engine is waited for
    // below and every worker shell it did not reap is stopped and reaped here.
    let _ = serve(
        &mine,
        &signals,
        engine,
        &mut caught,
        &mut live,
        kind,
        &cfg.command[0],
        &old_mask,
    );
    drop(mine);
    let status = wait_pid(engine);
    for &pid in &live {
        // SAFETY: kill on our own unreaped children (and the groups they lead).
        unsafe {
            libc::kill(-pid, libc::SIGTERM);
            libc::kill(pid, libc::SIGTERM);
        }
    }
    for &pid in &live {
        let _ = wait_pid(pid);
    }
    // A stop signal meant for this shell reaches it now, once frun has ended: it does to the
    // shell what it would have done (ends a script, interrupts a prompt's command line).
    while let Some(sig) = read_signal(&signals) {
        caught = Some(sig);
    }
    drop(signals);
    set_mask(&old_mask);
    if let Some(sig) = caught {
        // SAFETY: raises a signal in this process; bash's own disposition handles it.
        unsafe { libc::raise(sig) };
    }
    Ok(match child_end(status?) {
        ChildEnd::Exited(c) => c,
        ChildEnd::Signaled(s) => 128 + s,
    })
}

fn read_signal(fd: &OwnedFd) -> Option<i32> {
    // SAFETY: reads one signalfd_siginfo into zeroed storage of its size.
    unsafe {
        let mut info: libc::signalfd_siginfo = std::mem::zeroed();
        let n = libc::read(
            fd.as_raw_fd(),
            (&mut info as *mut libc::signalfd_siginfo).cast(),
            std::mem::size_of::<libc::signalfd_siginfo>(),
        );
        (n == std::mem::size_of::<libc::signalfd_siginfo>() as isize)
            .then_some(info.ssi_signo as i32)
    }
}

/// A child of the user's shell gets SIGTERM when that shell dies (`kill` of a background
/// `frun`, a closed terminal), as a frun process would itself: the engine then stops as on any
/// TERM, keeping its checkpoint, and worker shells end.
fn follow_parent(parent: libc::pid_t) {
    // SAFETY: prctl on this process; getppid has no memory effects.
    unsafe {
        libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM);
        // The shell may have died before the line above.
        if libc::getppid() != parent {
            libc::_exit(128 + libc::SIGTERM);
        }
    }
}

/// The user's shell while the engine runs: starts and reaps worker shells when the engine asks.
/// Stop signals sent to the shell meanwhile go on to the engine; the last one is kept in
/// `caught`. `live` holds the worker shells started and not yet reaped.
#[allow(clippy::too_many_arguments)]
fn serve(
    ctl: &OwnedFd,
    signals: &OwnedFd,
    engine: libc::pid_t,
    caught: &mut Option<i32>,
    live: &mut Vec<libc::pid_t>,
    kind: Option<Kind>,
    name: &OsString,
    old_mask: &libc::sigset_t,
) -> io::Result<()> {
    loop {
        let mut fds = [
            libc::pollfd {
                fd: ctl.as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            },
            libc::pollfd {
                fd: signals.as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            },
        ];
        // SAFETY: polls two descriptors we own.
        if unsafe { libc::poll(fds.as_mut_ptr(), 2, -1) } < 0 {
            let e = io::Error::last_os_error();
            if e.kind() == io::ErrorKind::Interrupted {
                continue;
            }
            return Err(e);
        }
        while let Some(sig) = read_signal(signals) {
            *caught = Some(sig);
            // SAFETY: signals our own unreaped child.
            unsafe { libc::kill(engine, sig) };
        }
        if fds[0].revents == 0 {
            continue;
        }
        let mut ask = [0u8; 8];
        // EINTR (Ctrl-C reaches the shell too) is retried inside; the engine decides.
        let Ok(Some(_)) = shell::recv_with_fds(ctl.as_raw_fd(), &mut ask, 0) else {
            return Ok(());
        };
        let what = i32::from_ne_bytes(ask[..4].try_into().expect("4 bytes"));
        let pid = i32::from_ne_bytes(ask[4..].try_into().expect("4 bytes"));
        let reply = match what {
            ASK_START => {
                let Some(kind) = kind else {
                    return Ok(());
                };
                let (engine_end, worker_end) = socket_pair()?;
                // SAFETY: fork in the single-threaded shell; the child never returns.
                let w = unsafe { libc::fork() };
                if w == 0 {
                    drop(engine_end);
                    // SAFETY: getppid has no memory effects.
                    follow_parent(unsafe { libc::getppid() });
                    worker_main(ctl.as_raw_fd(), worker_end, kind, name, old_mask);
                }
                drop(worker_end);
                if w < 0 {
                    (-1i32, None)
                } else {
                    live.push(w);
                    (w, Some(engine_end))
                }
            }
            ASK_REAP => {
                live.retain(|&p| p != pid);
                (wait_pid(pid).unwrap_or(0), None)
            }
            _ => return Ok(()),
        };
        let mut out = [0u8; 8];
        out[..4].copy_from_slice(&reply.0.to_ne_bytes());
        let fds: Vec<RawFd> = reply.1.iter().map(|f| f.as_raw_fd()).collect();
        shell::send_with_fds(ctl.as_raw_fd(), &out, &fds)?;
    }
}

/// The engine's way to ask the user's shell for worker shells.
struct ShellHost {
    ctl: Mutex<OwnedFd>,
}

impl ShellHost {
    fn ask(&self, what: i32, pid: libc::pid_t) -> io::Result<(i32, Option<OwnedFd>)> {
        let ctl = self.ctl.lock().unwrap_or_else(|e| e.into_inner());
        let mut msg = [0u8; 8];
        msg[..4].copy_from_slice(&what.to_ne_bytes());
        msg[4..].copy_from_slice(&pid.to_ne_bytes());
        shell::write_all(ctl.as_raw_fd(), &msg)?;
        let mut reply = [0u8; 8];
        let fds = shell::recv_with_fds(ctl.as_raw_fd(), &mut reply, 1)?
            .ok_or_else(|| io::Error::other("the calling shell went away"))?;
        let value = i32::from_ne_bytes(reply[..4].try_into().expect("4 bytes"));
        Ok((value, fds.into_iter().next()))
    }
}

impl Host for ShellHost {
    fn start(&self) -> io::Result<(libc::pid_t, OwnedFd)> {
        match self.ask(ASK_START, 0)? {
            (pid, Some(fd)) if pid > 0 => Ok((pid, fd)),
            _ => Err(io::Error::other(
                "the calling shell could not fork a worker shell",
            )),
        }
    }

    fn reap(&self, pid: libc::pid_t) -> io::Result<ChildEnd> {
        Ok(child_end(self.ask(ASK_REAP, pid)?.0))
    }
}

/// Puts the dispositions the engine needs in place of the shell's handlers.
fn engine_signals() {
    // SAFETY: queries and sets dispositions of this (single-threaded) process; no handler of
    // ours is installed.
    unsafe {
        for sig in 1..libc::SIGRTMIN() {
            if sig == libc::SIGKILL || sig == libc::SIGSTOP {
                continue;
            }
            let mut old: libc::sigaction = std::mem::zeroed();
            if libc::sigaction(sig, std::ptr::null(), &mut old) == 0
                && old.sa_sigaction != libc::SIG_DFL
                && old.sa_sigaction != libc::SIG_IGN
            {
                libc::signal(sig, libc::SIG_DFL);
            }
        }
        // An interactive shell ignores these; the engine reads them from a signalfd.
        for sig in crate::engine::STOP_SIGNALS {
            libc::signal(sig, libc::SIG_DFL);
        }
        // As the binary's runtime does: a vanished reader is EPIPE, not death.
        libc::signal(libc::SIGPIPE, libc::SIG_IGN);
    }
}

/// The engine process: runs the invocation and exits with its status.
fn engine_main(cfg: &crate::cli::Config, ctl: OwnedFd, old_mask: &libc::sigset_t) -> ! {
    engine_signals();
    set_mask(old_mask);
    let host: Option<Arc<dyn Host>> = if cfg.shell_command {
        Some(Arc::new(ShellHost {
            ctl: Mutex::new(ctl),
        }))
    } else {
        drop(ctl);
        None
    };
    let code = crate::run_config(cfg, host);
    // SAFETY: ends this process without running the shell's exit code.
    unsafe { libc::_exit(code) }
}

/// A worker shell: prepares the copy of the user's shell, runs the setup code, then runs
/// batches until its socket closes.
fn worker_main(
    ctl: RawFd,
    sock: OwnedFd,
    kind: Kind,
    name: &OsString,
    old_mask: &libc::sigset_t,
) -> ! {
    // SAFETY: closes the engine's control socket, which this copy inherited.
    unsafe { libc::close(ctl) };
    let code = worker_loop(sock, kind, name, old_mask).unwrap_or(1);
    // SAFETY: flushes the shell's stdio and ends this process without the shell's exit code
    // (no EXIT trap, no history file).
    unsafe {
        ffi::frun_flush_stdio();
        libc::_exit(code)
    }
}

/// Makes this copy of the shell a worker: a subshell without job control whose traps are the
/// defaults, where Ctrl-C and TERM end it.
fn become_worker(old_mask: &libc::sigset_t) {
    // SAFETY: bash's own routines for a forked subshell, on this process's copy of its state.
    unsafe {
        ffi::subshell_environment |= ffi::SUBSHELL_ASYNC;
        ffi::interactive = 0;
        ffi::without_job_control();
        ffi::reset_signal_handlers();
        for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGQUIT, libc::SIGHUP] {
            libc::signal(sig, libc::SIG_DFL);
        }
    }
    set_mask(old_mask);
}

fn dup_onto(fd: &OwnedFd, target: RawFd) -> io::Result<()> {
    // SAFETY: dup2 between descriptors this process owns.
    cvt(unsafe { libc::dup2(fd.as_raw_fd(), target) }).map(drop)
}

fn worker_loop(
    sock: OwnedFd,
    kind: Kind,
    name: &OsString,
    old_mask: &libc::sigset_t,
) -> io::Result<i32> {
    // SAFETY: moves the socket to a high close-on-exec descriptor we own.
    let sock = unsafe {
        OwnedFd::from_raw_fd(cvt(libc::fcntl(
            sock.as_raw_fd(),
            libc::F_DUPFD_CLOEXEC,
            SOCKET_FD_MIN,
        ))?)
    };
    become_worker(old_mask);
    let s = sock.as_raw_fd();
    let Some((hello, fds)) = shell::recv_header(s, 2)? else {
        return Ok(0);
    };
    let mut fds = fds.into_iter();
    if hello.flags & HELLO_OWN_GROUP != 0 {
        // SAFETY: makes this process a group leader; no memory effects.
        unsafe { libc::setpgid(0, 0) };
    }
    if hello.flags & HELLO_STDOUT != 0
        && let Some(fd) = fds.next()
    {
        dup_onto(&fd, 1)?;
    }
    let idle_stdin = if hello.flags & HELLO_STDIN != 0 {
        fds.next()
    } else {
        None
    };
    if let Some(fd) = &idle_stdin {
        dup_onto(fd, 0)?;
    }

    if let Some(mut code) = setup_code() {
        let (jumped, status) = call_string(&mut code);
        if jumped || status != 0 {
            let status = if status == 0 { 1 } else { status };
            shell::write_all(s, &status.to_ne_bytes())?;
            return Ok(status);
        }
    }
    shell::write_all(s, &0i32.to_ne_bytes())?;

    let cname = CString::new(name.as_bytes()).map_err(io::Error::other)?;
    let mut body = Vec::new();
    let mut words = ffi::Words::default();
    let mut text = Vec::new();
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
            dup_onto(fd, 0)?;
        }
        drop(stdin);
        let (jumped, status) = match kind {
            Kind::Function => {
                // SAFETY: looks the function up in this shell (it may have been redefined).
                let var = unsafe { ffi::find_function(cname.as_ptr()) };
                if var.is_null() {
                    eprintln!("frun: {}: the function is gone", name.to_string_lossy());
                    (false, 127)
                } else {
                    let list = words.list(&mut body, 0);
                    // SAFETY: var is a live function; list points into `body` and `words`,
                    // which outlive the call.
                    call(ffi::FRUN_FUNCTION, var, list, std::ptr::null_mut())
                }
            }
            Kind::Builtin => {
                // SAFETY: the builtin's entry point in this shell.
                match unsafe { ffi::find_shell_builtin(cname.as_ptr().cast_mut()) } {
                    Some(f) => {
                        let list = words.list(&mut body, 1);
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
            Kind::Alias => {
                text.clear();
                for (i, w) in body.split(|&b| b == 0).take(req.words as usize).enumerate() {
                    if i == 0 {
                        text.extend_from_slice(w);
                    } else {
                        text.push(b' ');
                        crate::exec::argv::shell_quote(w, &mut text);
                    }
                }
                text.push(0);
                // SAFETY: aliases expand in this copy while the command line is parsed.
                unsafe { ffi::expand_aliases = 1 };
                call_string(&mut text)
            }
        };
        // SAFETY: flushes the shell's stdio into the capture before the engine reads it.
        unsafe { ffi::frun_flush_stdio() };
        if stdin_reset(&idle_stdin, req.flags).is_err() || jumped {
            return Ok(status);
        }
        shell::write_all(s, &status.to_ne_bytes())?;
    }
}

/// Puts the idle stdin back after a batch that had its own.
fn stdin_reset(idle: &Option<OwnedFd>, flags: u32) -> io::Result<()> {
    if flags & REQUEST_STDIN == 0 {
        return Ok(());
    }
    match idle {
        Some(fd) => dup_onto(fd, 0),
        // SAFETY: closes fd 0 (the batch's pipe), so the feeder sees EPIPE.
        None => cvt(unsafe { libc::close(0) }).map(drop),
    }
}

/// `FRUN_EXTRA_SETUP` or `FORKRUN_EXTRA_SETUP`, as shell variables of the calling shell.
fn setup_code() -> Option<Vec<u8>> {
    for name in [c"FRUN_EXTRA_SETUP", c"FORKRUN_EXTRA_SETUP"] {
        // SAFETY: reads a shell variable's value; copied at once.
        let v = unsafe { ffi::get_string_value(name.as_ptr()) };
        if !v.is_null() {
            // SAFETY: bash's value is a NUL-terminated string.
            let mut text = unsafe { CStr::from_ptr(v) }.to_bytes().to_vec();
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
