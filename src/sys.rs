//! Thin wrappers over the system facilities several stages share: eventfd wake-ups, signal
//! masks and the signalfd, futex waits, CPU counts and system limits.
//!
//! This is the only module where such wrappers live (each once). It knows nothing of runs,
//! batches or flags: it must not import any other module of the crate.

use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd, RawFd};
use std::sync::atomic::AtomicU32;

use nix::sys::eventfd::{EfdFlags, EventFd};
use nix::sys::signal::{SigSet, SigmaskHow, Signal};
use nix::sys::signalfd::{SfdFlags, SignalFd};

/// An eventfd used as a wake-up: non-blocking and close-on-exec. Signalling it makes it
/// readable until it is drained; wake-ups are advisory (whoever wakes re-checks the state).
pub struct Event(EventFd);

impl Event {
    pub fn new() -> std::io::Result<Event> {
        EventFd::from_flags(EfdFlags::EFD_CLOEXEC | EfdFlags::EFD_NONBLOCK)
            .map(Event)
            .map_err(std::io::Error::from)
    }

    /// Makes the eventfd readable. A failure (the counter at its maximum) still leaves it
    /// readable, so it is ignored.
    pub fn signal(&self) {
        let _ = self.0.write(1);
    }

    /// Makes it unreadable again (nothing happens when it was not signalled).
    pub fn drain(&self) {
        let _ = self.0.read();
    }

    pub fn raw(&self) -> RawFd {
        self.0.as_raw_fd()
    }
}

impl AsFd for Event {
    fn as_fd(&self) -> BorrowedFd<'_> {
        self.0.as_fd()
    }
}

/// Signals an eventfd known only by its number, as one kept in shared memory. A stale or
/// invalid number makes this a failed `write(2)` and nothing else.
pub fn signal_event_fd(fd: RawFd) {
    let one = 1u64.to_ne_bytes();
    // SAFETY: write(2) reads 8 bytes from a live local buffer; the descriptor is only a number
    // to the kernel (a bad one fails with EBADF, which is ignored: the wake-up is advisory).
    unsafe { libc::write(fd, one.as_ptr().cast(), one.len()) };
}

/// Drains an eventfd known only by its number (see [`signal_event_fd`]).
pub fn drain_event_fd(fd: RawFd) {
    let mut v = [0u8; 8];
    // SAFETY: read(2) writes at most 8 bytes into a live local buffer; errors are ignored (a
    // non-blocking eventfd that was not signalled fails with EAGAIN).
    unsafe { libc::read(fd, v.as_mut_ptr().cast(), v.len()) };
}

fn sigset(signals: &[i32]) -> SigSet {
    let mut set = SigSet::empty();
    for &s in signals {
        if let Ok(sig) = Signal::try_from(s) {
            set.add(sig);
        }
    }
    set
}

/// Blocks `signals` in the calling thread (threads started later inherit the mask); returns
/// the mask it had before, which children get back.
pub fn block_signals(signals: &[i32]) -> SigSet {
    sigset(signals)
        .thread_swap_mask(SigmaskHow::SIG_BLOCK)
        .unwrap_or_else(|_| SigSet::empty())
}

/// A non-blocking, close-on-exec signalfd for `signals` (which the caller has blocked in
/// every thread).
pub fn signalfd(signals: &[i32]) -> std::io::Result<OwnedFd> {
    SignalFd::with_flags(
        &sigset(signals),
        SfdFlags::SFD_CLOEXEC | SfdFlags::SFD_NONBLOCK,
    )
    .map(OwnedFd::from)
    .map_err(std::io::Error::from)
}

/// The next signal waiting on a non-blocking signalfd (None: none is waiting).
pub fn read_signal(fd: BorrowedFd<'_>) -> Option<i32> {
    let mut info = [0u8; std::mem::size_of::<libc::signalfd_siginfo>()];
    let n = nix::unistd::read(fd, &mut info).ok()?;
    // ssi_signo is the structure's first field (a u32).
    (n == info.len()).then(|| u32::from_ne_bytes([info[0], info[1], info[2], info[3]]) as i32)
}

/// Restores the default disposition of `signal` (no handler is installed). An inherited
/// "ignore SIGCHLD" would make the kernel reap children before their status can be read.
pub fn default_disposition(signal: i32) {
    if let Ok(sig) = Signal::try_from(signal) {
        let dfl = nix::sys::signal::SigAction::new(
            nix::sys::signal::SigHandler::SigDfl,
            nix::sys::signal::SaFlags::empty(),
            SigSet::empty(),
        );
        // SAFETY: installs the default disposition, no handler function: nothing can run in
        // signal context because of this call.
        let _ = unsafe { nix::sys::signal::sigaction(sig, &dfl) };
    }
}

/// Sleeps while `word` holds `expected` (or until woken); spurious returns are the caller's
/// to re-check. `word` may live in memory shared with other processes.
pub fn futex_wait(word: &AtomicU32, expected: u32) {
    // SAFETY: the address is a live, aligned u32 (the reference guarantees it); FUTEX_WAIT
    // only reads it, and a null timeout means "no timeout". nix has no futex wrapper.
    unsafe {
        libc::syscall(
            libc::SYS_futex,
            word.as_ptr(),
            libc::FUTEX_WAIT,
            expected,
            std::ptr::null::<libc::timespec>(),
        );
    }
}

/// Wakes every thread sleeping on `word`.
pub fn futex_wake_all(word: &AtomicU32) {
    // SAFETY: as in `futex_wait`; FUTEX_WAKE does not access the memory.
    unsafe {
        libc::syscall(libc::SYS_futex, word.as_ptr(), libc::FUTEX_WAKE, i32::MAX);
    }
}

/// Usable CPUs: the affinity mask and the cgroup CPU quota (std accounts for both).
pub fn usable_cpus() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// A number from a `/proc/sys` file.
pub fn sysctl(path: &str) -> Option<u64> {
    std::fs::read_to_string(path).ok()?.trim().parse().ok()
}

/// The soft limit on open files (None: unlimited).
pub fn open_file_limit() -> Option<u64> {
    soft_limit(nix::sys::resource::Resource::RLIMIT_NOFILE)
}

/// The soft limit on this user's processes (None: unlimited, or frun runs as root, which the
/// limit does not bind).
pub fn process_limit() -> Option<u64> {
    if nix::unistd::geteuid().is_root() {
        return None;
    }
    soft_limit(nix::sys::resource::Resource::RLIMIT_NPROC)
}

fn soft_limit(resource: nix::sys::resource::Resource) -> Option<u64> {
    let (soft, _) = nix::sys::resource::getrlimit(resource).ok()?;
    (soft != libc::RLIM_INFINITY).then_some(soft)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_event_is_readable_from_signal_to_drain() {
        let e = Event::new().unwrap();
        let readable = |e: &Event| {
            let mut fds = [nix::poll::PollFd::new(
                e.as_fd(),
                nix::poll::PollFlags::POLLIN,
            )];
            nix::poll::poll(&mut fds, nix::poll::PollTimeout::ZERO).unwrap() == 1
        };
        assert!(!readable(&e));
        e.signal();
        signal_event_fd(e.raw());
        assert!(readable(&e));
        e.drain();
        assert!(!readable(&e));
        signal_event_fd(e.raw());
        drain_event_fd(e.raw());
        assert!(!readable(&e));
    }

    #[test]
    fn a_blocked_signal_arrives_on_the_signalfd() {
        // SIGURG is ignored by default, so a stray delivery could not end the test process.
        block_signals(&[libc::SIGURG]);
        let fd = signalfd(&[libc::SIGURG]).unwrap();
        assert_eq!(read_signal(fd.as_fd()), None);
        nix::sys::signal::raise(Signal::SIGURG).unwrap();
        assert_eq!(read_signal(fd.as_fd()), Some(libc::SIGURG));
        sigset(&[libc::SIGURG]).thread_unblock().unwrap();
    }
}
