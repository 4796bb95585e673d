//! The `frun` binary: everything lives in the library; this only passes the arguments, and which
//! standard descriptors were closed when the process started, and exits with the status it gets
//! back (or, stopped by SIGINT, SIGTERM or SIGHUP, dies of that signal).
//!
//! Rust's runtime reopens a closed stdin, stdout or stderr on /dev/null before `main` runs, so
//! `frun … >&-` would otherwise discard all output and report success. A constructor in
//! `.init_array` runs before that runtime set-up (glibc and musl both run the executable's
//! `.init_array` before calling `main`, and std sanitises the descriptors from `main`), notes
//! which of the three were closed, and `main` hands that to the library. It lives here, not in
//! the library, so that the bash loadable (a shared object whose constructors run inside bash at
//! `enable -f`) never has it.

use std::sync::atomic::{AtomicU8, Ordering};

/// Bit `fd` is set when descriptor `fd` (0, 1 or 2) was closed at process start. A closed
/// stderr needs nothing: messages then go to /dev/null and every status stays as it is.
static CLOSED_AT_START: AtomicU8 = AtomicU8::new(0);

/// Notes which standard descriptors are closed. Runs before `main`, before std's runtime
/// reopens them; takes no arguments (glibc passes argc, argv and envp, musl nothing; a C
/// function may ignore its arguments either way).
extern "C" fn note_closed_std_fds() {
    let mut closed = 0u8;
    for fd in 0..3 {
        // SAFETY: F_GETFD only reads the descriptor's flags.
        let failed = unsafe { libc::fcntl(fd, libc::F_GETFD) } == -1;
        if failed && std::io::Error::last_os_error().raw_os_error() == Some(libc::EBADF) {
            closed |= 1 << fd;
        }
    }
    CLOSED_AT_START.store(closed, Ordering::Relaxed);
}

#[used]
#[unsafe(link_section = ".init_array")]
static NOTE_CLOSED_STD_FDS: extern "C" fn() = note_closed_std_fds;

/// musl's allocator returns small blocks to the kernel as they are freed, so parsing the command
/// line alone made ~50 `mmap`/`munmap` pairs; dlmalloc keeps what it got. glibc's stays.
#[cfg(target_env = "musl")]
#[global_allocator]
static ALLOCATOR: dlmalloc::GlobalDlmalloc = dlmalloc::GlobalDlmalloc;

fn main() {
    let bits = CLOSED_AT_START.load(Ordering::Relaxed);
    let closed = frun::ClosedAtStart {
        stdin: bits & 1 != 0,
        stdout: bits & 2 != 0,
    };
    let code = frun::main_with_args(std::env::args_os(), closed);
    // A run stopped by SIGINT, SIGTERM or SIGHUP has cleaned up (children, checkpoint,
    // terminal): now it ends by that signal, as a killed process does, so that a shell loop
    // around frun stops on one Ctrl-C and a parent's waitpid sees WIFSIGNALED. (The bash
    // builtin returns 128+N instead, as builtins must; preemption signals keep 128+N too.)
    if let frun::ExitCode::Signal(n @ (libc::SIGINT | libc::SIGTERM | libc::SIGHUP)) = code {
        use std::io::Write;
        let _ = std::io::stdout().flush();
        frun_engine::sys::die_of(n);
    }
    std::process::exit(i32::from(code));
}
