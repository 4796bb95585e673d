//! Thin wrappers over the system facilities several stages and front ends share: eventfd
//! wake-ups, signal masks, dispositions and the signalfd, futex waits, mappings (anonymous and
//! of files) and zeroed tables, the raw `waitpid`, `_exit`, `poll` and descriptor copies, CPU
//! counts and system limits.
//!
//! This is the only module where such wrappers live (each once), and the one that calls libc
//! for the others where nix has no safe call: each wrapper is safe for every input, and its
//! `// SAFETY:` comment carries the reasoning. Beside them: the machine's NUMA topology
//! ([`numa`]), the exit statuses ([`exit`]), the wording of OS errors ([`errors`]) and where
//! the engine's messages go ([`notice`]). It knows nothing of runs, batches or flags: it must
//! not import any module of the crate outside `sys/`.

pub mod errors;
pub mod exit;
pub mod memory;
pub mod notice;
pub mod numa;

use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd, RawFd};
use std::sync::atomic::AtomicU32;

use nix::sys::eventfd::{EfdFlags, EventFd};
use nix::sys::signal::{SigSet, SigmaskHow, Signal};
use nix::sys::signalfd::{SfdFlags, SignalFd};

/// An eventfd used as a wake-up: non-blocking and close-on-exec. Signalling it makes it
/// readable until it is drained; wake-ups are advisory (whoever wakes re-checks the state).
pub struct Event(EventFd);

impl Event {
    /// A new event, not signalled.
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

    /// The eventfd, to poll on.
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
        set_disposition(sig, Disposition::Default);
    }
}

/// The two dispositions frun sets itself; neither is a handler (frun installs none outside
/// the spool's fault guard).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Disposition {
    /// The signal's default action (SIG_DFL).
    Default,
    /// The signal is ignored (SIG_IGN).
    Ignore,
}

/// Sets what `sig` does to this process to `to`.
pub fn set_disposition(sig: Signal, to: Disposition) {
    let handler = match to {
        Disposition::Default => nix::sys::signal::SigHandler::SigDfl,
        Disposition::Ignore => nix::sys::signal::SigHandler::SigIgn,
    };
    let action = nix::sys::signal::SigAction::new(
        handler,
        nix::sys::signal::SaFlags::empty(),
        SigSet::empty(),
    );
    // SAFETY: SIG_DFL and SIG_IGN are no handler function: nothing of ours can run in signal
    // context because of this call, whatever `sig` is. The previous action is dropped unused.
    let _ = unsafe { nix::sys::signal::sigaction(sig, &action) };
}

/// Whether this process catches `sig` with a handler (neither SIG_DFL nor SIG_IGN). Raw
/// `sigaction` because nix's always installs a new action, and this only reads one.
pub fn has_handler(sig: Signal) -> bool {
    let mut old = std::mem::MaybeUninit::<libc::sigaction>::zeroed();
    // SAFETY: a null new action only reads the current one into `old`, live storage of the
    // right type; a zeroed sigaction is a valid value even where the call fails.
    unsafe {
        libc::sigaction(sig as libc::c_int, std::ptr::null(), old.as_mut_ptr()) == 0 && {
            let old = old.assume_init();
            old.sa_sigaction != libc::SIG_DFL && old.sa_sigaction != libc::SIG_IGN
        }
    }
}

/// Ends this process at once with `code`: no exit handlers, no stdio flush, nothing of a
/// parent's it was forked from (a shell's EXIT trap, an interpreter's finalization). For forked
/// copies. Raw `_exit` because neither std nor nix has one (`std::process::exit` runs the exit
/// handlers).
pub fn exit_now(code: i32) -> ! {
    // SAFETY: _exit takes a plain int and only ends the process; it has no precondition.
    unsafe { libc::_exit(code) }
}

/// Waits for this process's own child `pid`, retrying on EINTR; returns its raw wait status.
///
/// Raw `waitpid` because nix's cannot report every end: its `Signal` has no real-time signals,
/// so a child killed by one would come back as an error (after being reaped) instead of its
/// status.
pub fn wait_status(pid: libc::pid_t) -> std::io::Result<libc::c_int> {
    let mut status = 0;
    loop {
        // SAFETY: waitpid writes one int through the pointer, which points at a live local;
        // any pid is only a number to the kernel (one not ours fails with ECHILD).
        let r = unsafe { libc::waitpid(pid, &mut status, 0) };
        if r == pid {
            return Ok(status);
        }
        let e = std::io::Error::last_os_error();
        if e.kind() != std::io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
}

/// A close-on-exec copy of `fd` at number `min` or above (out of the way of the numbers a
/// script or a child uses).
pub fn dup_at_least(fd: BorrowedFd<'_>, min: RawFd) -> std::io::Result<OwnedFd> {
    let c = nix::fcntl::fcntl(fd, nix::fcntl::FcntlArg::F_DUPFD_CLOEXEC(min))?;
    // SAFETY: F_DUPFD_CLOEXEC just made `c`, a new descriptor that nothing else owns.
    Ok(unsafe { <OwnedFd as std::os::fd::FromRawFd>::from_raw_fd(c) })
}

/// Reads once from `fd` into the spare capacity of `buf` (reserve first: with none, this reads
/// nothing) and counts what came as part of `buf`. 0: end of input.
pub fn read_into_spare(fd: BorrowedFd<'_>, buf: &mut Vec<u8>) -> std::io::Result<usize> {
    let spare = buf.spare_capacity_mut();
    // SAFETY: read(2) writes at most `spare.len()` bytes into the vector's spare capacity,
    // which is live and unaliased for the call; it returns how many it wrote, and only those
    // (initialized by the kernel) are added to the length.
    unsafe {
        let n = libc::read(fd.as_raw_fd(), spare.as_mut_ptr().cast(), spare.len());
        if n < 0 {
            return Err(std::io::Error::last_os_error());
        }
        buf.set_len(buf.len() + n as usize);
        Ok(n as usize)
    }
}

/// Ends the process the way `signal` would have: its default action restored, unblocked in
/// this thread, raised at it. For the binary's last step after a run stopped by that signal,
/// so that a parent's `waitpid` sees a death by the signal (bash stops a loop only for a child
/// killed by SIGINT). Returns only when that did not end the process.
pub fn die_of(signal: i32) {
    let Ok(sig) = Signal::try_from(signal) else {
        return;
    };
    default_disposition(signal);
    let mut only = SigSet::empty();
    only.add(sig);
    let _ = only.thread_unblock();
    let _ = nix::sys::signal::raise(sig);
}

/// Waits until one of `fds` is ready or `timeout_ms` passed (-1: no limit); how many are
/// ready (0: the time ran out). Raw `poll`: the entries are plain descriptor numbers, and -1 (an
/// entry with nothing to watch, which poll skips) is one of them; nix's poll takes borrowed
/// descriptors, which -1 is not.
pub fn poll_numbers(fds: &mut [libc::pollfd], timeout_ms: i32) -> std::io::Result<usize> {
    // SAFETY: poll reads the `fds.len()` entries of a live, exclusively borrowed slice and
    // writes only their `revents`; a descriptor number is only a number to it (one that is not
    // open is reported as POLLNVAL).
    let n = unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, timeout_ms) };
    if n < 0 {
        Err(std::io::Error::last_os_error())
    } else {
        Ok(n as usize)
    }
}

/// Waits up to `wait` (at most a minute) for `stop` (an eventfd a run signals as it stops) to
/// become readable: true when it did. The wait of every pacing loop (start gates, memory,
/// `-j FILE`).
pub fn stopped_within(stop: BorrowedFd<'_>, wait: std::time::Duration) -> bool {
    use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
    let ms = wait.as_nanos().div_ceil(1_000_000).min(60_000) as u16;
    let mut p = [PollFd::new(stop, PollFlags::POLLIN)];
    poll(&mut p, PollTimeout::from(ms)).unwrap_or(0) > 0
}

/// Reads at most `most` bytes of the regular file at `path`: opened without blocking (a FIFO
/// or a device named there is never waited on) and refused unless it is a regular file, so
/// that a settings file that is not one cannot stall or feed a run without end.
pub fn read_regular(path: &std::path::Path, most: u64) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)?;
    if !file.metadata()?.is_file() {
        return Err(std::io::Error::other("not a regular file"));
    }
    let mut bytes = Vec::new();
    file.take(most).read_to_end(&mut bytes)?;
    Ok(bytes)
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

/// A memory mapping made without an address hint (so it replaces nothing), unmapped on drop.
/// It only hands out its address: code that reads or writes through it says, in its own
/// `unsafe` block, why the bytes it touches are its to touch (a file's bytes can change under
/// a mapping; another process may share the pages).
pub struct Mapping {
    ptr: std::ptr::NonNull<u8>,
    len: usize,
}

/// The anonymous mappings' name of old.
pub type AnonMap = Mapping;

// SAFETY: the mapping is plain memory owned by this value; reaching into it takes `unsafe`
// code at the user (through `as_ptr`), which decides how it is shared.
unsafe impl Send for Mapping {}
// SAFETY: as above; `&Mapping` only hands out the address.
unsafe impl Sync for Mapping {}

impl Mapping {
    /// `len` bytes (at least one) of anonymous memory, page-aligned, zero-filled by the kernel
    /// a page at a time as it is first touched. `shared`: forked processes see the same pages
    /// (else each gets a copy).
    pub fn new(len: usize, shared: bool) -> std::io::Result<Mapping> {
        let len = std::num::NonZeroUsize::new(len.max(1)).expect("at least one byte");
        let kind = if shared {
            nix::sys::mman::MapFlags::MAP_SHARED
        } else {
            nix::sys::mman::MapFlags::MAP_PRIVATE
        };
        let prot = nix::sys::mman::ProtFlags::PROT_READ | nix::sys::mman::ProtFlags::PROT_WRITE;
        let (ptr, len) = Self::make(len, prot, kind, None, 0)?;
        Ok(Mapping { ptr, len })
    }

    /// `len` bytes (at least one) of the file `fd` from `offset` (a multiple of the page
    /// size), with protection `prot` and `flags` (MAP_SHARED or MAP_PRIVATE, and the like).
    pub fn of_file(
        len: usize,
        prot: nix::sys::mman::ProtFlags,
        flags: nix::sys::mman::MapFlags,
        fd: BorrowedFd<'_>,
        offset: i64,
    ) -> std::io::Result<Mapping> {
        let len = std::num::NonZeroUsize::new(len)
            .ok_or(std::io::Error::from(std::io::ErrorKind::InvalidInput))?;
        let (ptr, len) = Self::make(len, prot, flags, Some(fd), offset)?;
        Ok(Mapping { ptr, len })
    }

    fn make(
        len: std::num::NonZeroUsize,
        prot: nix::sys::mman::ProtFlags,
        flags: nix::sys::mman::MapFlags,
        fd: Option<BorrowedFd<'_>>,
        offset: i64,
    ) -> std::io::Result<(std::ptr::NonNull<u8>, usize)> {
        // MAP_FIXED would replace what lies at the address: never asked for here.
        let flags = flags & !nix::sys::mman::MapFlags::MAP_FIXED;
        // SAFETY: no address hint and no MAP_FIXED, so the new mapping replaces nothing of
        // this process's memory; the kernel checks the length, flags, descriptor and offset,
        // and nothing is read or written through the result here.
        let p = unsafe {
            match fd {
                Some(fd) => nix::sys::mman::mmap(None, len, prot, flags, fd, offset),
                None => nix::sys::mman::mmap_anonymous(None, len, prot, flags),
            }
        }?;
        Ok((p.cast(), len.get()))
    }

    /// The first byte (page-aligned); the `len` bytes are mapped while `self` lives.
    pub fn as_ptr(&self) -> *mut u8 {
        self.ptr.as_ptr()
    }

    /// The first byte, as a non-null pointer.
    pub fn base(&self) -> std::ptr::NonNull<u8> {
        self.ptr
    }

    /// The mapping's length in bytes.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the mapping holds no bytes.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

impl Drop for Mapping {
    fn drop(&mut self) {
        // SAFETY: unmaps exactly the mapping made in `make`, once; the borrows and
        // pointers users took from it end with `self` (a user that must keep the pages, because
        // something outside Rust still points there, forgets the value instead).
        let _ = unsafe { nix::sys::mman::munmap(self.ptr.cast(), self.len) };
    }
}

/// A table of atomic words that starts all zero, in its own mapping: a page is only backed
/// when a word on it is first touched. A heap allocation of the same size is zeroed up front
/// by some allocators (the static build's among them), which for a 512 KiB table costs more
/// than all the rest of a short run.
pub struct ZeroedWords {
    map: AnonMap,
    len: usize,
}

impl ZeroedWords {
    /// `len` words (at least one), each 0.
    pub fn new(len: usize) -> std::io::Result<ZeroedWords> {
        let len = len.max(1);
        Ok(ZeroedWords {
            map: AnonMap::new(len * std::mem::size_of::<u64>(), false)?,
            len,
        })
    }
}

impl std::ops::Deref for ZeroedWords {
    type Target = [std::sync::atomic::AtomicU64];

    fn deref(&self) -> &[std::sync::atomic::AtomicU64] {
        // SAFETY: the mapping holds `len` page-aligned (so aligned) words, zero-filled (a valid
        // AtomicU64) and alive while `self` is; only shared references to atomics are handed out.
        unsafe { std::slice::from_raw_parts(self.map.as_ptr().cast(), self.len) }
    }
}

/// The CPUs this process may run on (None: the kernel would not say).
pub fn affinity() -> Option<Vec<usize>> {
    let set = nix::sched::sched_getaffinity(nix::unistd::Pid::from_raw(0)).ok()?;
    Some(
        (0..nix::sched::CpuSet::count())
            .filter(|&c| set.is_set(c).unwrap_or(false))
            .collect(),
    )
}

/// Usable CPUs: the affinity mask, lowered by a cgroup CPU quota.
///
/// std's `available_parallelism` counts the same, but on the usual layouts it opens four files
/// where two do (it stats the group first and reads the period even when there is no quota),
/// and each open of a /proc or /sys file is a noticeable part of a one-line run's start-up.
/// The usual layouts are read here; anything else (a v1 hierarchy mounted elsewhere, a bind
/// mount) is left to std.
pub fn usable_cpus() -> usize {
    let std_count = || std::thread::available_parallelism().map_or(1, |n| n.get());
    let Some(cpus) = affinity().map(|set| set.len()) else {
        return std_count();
    };
    if cpus <= 1 {
        return 1;
    }
    let Ok(groups) = std::fs::read("/proc/self/cgroup") else {
        return cpus;
    };
    let read = |p: &std::path::Path| -> Option<Vec<u8>> {
        match std::fs::read(p) {
            Ok(b) => Some(b),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(_) => Some(Vec::new()),
        }
    };
    match cpu_quota(&groups, std::path::Path::new("/sys/fs/cgroup"), read) {
        Quota::None => cpus,
        Quota::Cpus(n) => cpus.min(n.max(1)),
        Quota::Unknown => std_count(),
    }
}

/// What a cgroup CPU limit allows.
#[derive(Debug, PartialEq, Eq)]
enum Quota {
    /// No limit (or no cgroup with the CPU controller).
    None,
    /// At most this many CPUs' worth (quota / period, rounded down; std rounds the same).
    Cpus(usize),
    /// The group's files are not where they usually are.
    Unknown,
}

/// The CPU limit of the group `groups` (the text of `/proc/self/cgroup`) names, read under
/// `root` (`/sys/fs/cgroup`) with `read` (None: no such file), from the group up to the root
/// of its hierarchy: the lowest limit on the way counts.
fn cpu_quota(
    groups: &[u8],
    root: &std::path::Path,
    read: impl Fn(&std::path::Path) -> Option<Vec<u8>>,
) -> Quota {
    use std::os::unix::ffi::OsStrExt;
    // "id:controllers:path"; a v1 line with the cpu controller wins over the v2 line "0::path".
    let mut v1 = None;
    let mut v2 = None;
    for line in groups.split(|&b| b == b'\n') {
        let mut parts = line.splitn(3, |&b| b == b':');
        let (Some(id), Some(controllers), Some(path)) = (parts.next(), parts.next(), parts.next())
        else {
            continue;
        };
        if controllers.split(|&b| b == b',').any(|c| c == b"cpu") {
            v1 = Some(path);
        } else if id == b"0" && controllers.is_empty() {
            v2 = Some(path);
        }
    }
    let number = |b: &[u8]| -> Option<u64> { std::str::from_utf8(b).ok()?.trim().parse().ok() };
    let relative = |p: &[u8]| {
        std::path::PathBuf::from(std::ffi::OsStr::from_bytes(
            p.strip_prefix(b"/").unwrap_or(p),
        ))
    };
    let mut limit: Option<u64> = None;
    if let Some(path) = v1 {
        for mount in ["cpu", "cpu,cpuacct"] {
            let top = root.join(mount);
            let mut dir = top.join(relative(path));
            let mut quota_file = read(&dir.join("cpu.cfs_quota_us"));
            if quota_file.is_none() {
                continue;
            }
            loop {
                // -1: no quota at this level (and then the period need not be read).
                if let Some(q) = quota_file.and_then(|b| number(&b)).filter(|&q| q > 0) {
                    if let Some(p) = read(&dir.join("cpu.cfs_period_us"))
                        .and_then(|b| number(&b))
                        .filter(|&p| p > 0)
                    {
                        limit = Some(limit.map_or(q / p, |l| l.min(q / p)));
                    }
                }
                if dir == top || !dir.pop() {
                    break;
                }
                quota_file = read(&dir.join("cpu.cfs_quota_us"));
            }
            return limit.map_or(Quota::None, |l| Quota::Cpus(l as usize));
        }
        return Quota::Unknown;
    }
    let Some(path) = v2 else {
        return Quota::None;
    };
    let mut dir = root.join(relative(path));
    loop {
        // "max 100000" (no limit) or "QUOTA PERIOD".
        if let Some(text) = read(&dir.join("cpu.max")) {
            let mut words = text
                .split(|b| b.is_ascii_whitespace())
                .filter(|w| !w.is_empty());
            if let (Some(q), Some(p)) = (
                words.next().and_then(number),
                words.next().and_then(number).filter(|&p| p > 0),
            ) {
                limit = Some(limit.map_or(q / p, |l| l.min(q / p)));
            }
        }
        if dir.as_path() == root || !dir.pop() || !dir.starts_with(root) {
            break;
        }
    }
    limit.map_or(Quota::None, |l| Quota::Cpus(l as usize))
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

/// `/dev/null` opened for reading (commands that must not read frun's input get it as stdin).
/// Its absence (a chroot or container without /dev) is said in one line naming the file.
pub fn dev_null() -> std::io::Result<std::fs::File> {
    std::fs::File::open("/dev/null").map_err(|e| {
        std::io::Error::new(
            e.kind(),
            format!(
                "cannot open /dev/null ({}): commands get it as their stdin; mount /dev in \
                 this root or container",
                os_message(&e)
            ),
        )
    })
}

/// An OS error's text without Rust's " (os error N)" suffix.
pub fn os_message(e: &std::io::Error) -> String {
    let s = e.to_string();
    match s.rfind(" (os error ") {
        Some(i) => s[..i].to_string(),
        None => s,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fake /sys/fs/cgroup: the files that exist and what they hold.
    fn quota_of(groups: &str, files: &[(&str, &str)]) -> Quota {
        let root = std::path::Path::new("/cg");
        cpu_quota(groups.as_bytes(), root, |p: &std::path::Path| {
            files
                .iter()
                .find(|(name, _)| root.join(name) == p)
                .map(|(_, text)| text.as_bytes().to_vec())
        })
    }

    #[test]
    fn cgroup_v1_quota_is_the_lowest_on_the_way_up() {
        let groups = "9:pids:/\n4:cpu,cpuacct:/a/b\n0::/\n";
        let files = [
            ("cpu,cpuacct/a/b/cpu.cfs_quota_us", "-1\n"),
            ("cpu,cpuacct/a/cpu.cfs_quota_us", "350000\n"),
            ("cpu,cpuacct/a/cpu.cfs_period_us", "100000\n"),
            ("cpu,cpuacct/cpu.cfs_quota_us", "-1\n"),
        ];
        assert_eq!(quota_of(groups, &files), Quota::Cpus(3));
        let none = [("cpu/cpu.cfs_quota_us", "-1\n")];
        assert_eq!(quota_of("1:cpu:/\n", &none), Quota::None);
        // Mounted somewhere else: std finds it.
        assert_eq!(quota_of("1:cpu:/x\n", &none), Quota::Unknown);
    }

    #[test]
    fn cgroup_v2_quota_reads_cpu_max_up_to_the_root() {
        let files = [
            ("user.slice/s.scope/cpu.max", "max 100000\n"),
            ("user.slice/cpu.max", "150000 100000\n"),
        ];
        assert_eq!(quota_of("0::/user.slice/s.scope\n", &files), Quota::Cpus(1));
        assert_eq!(
            quota_of("0::/\n", &[("cpu.max", "max 100000")]),
            Quota::None
        );
        assert_eq!(
            quota_of("0::/\n", &[("cpu.max", "400000 100000")]),
            Quota::Cpus(4)
        );
        // No cpu controller anywhere.
        assert_eq!(quota_of("3:memory:/m\n", &[]), Quota::None);
    }

    #[test]
    fn usable_cpus_agrees_with_std() {
        assert_eq!(
            usable_cpus(),
            std::thread::available_parallelism().unwrap().get()
        );
    }

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
    // The children are waited for by `wait_status`, which std cannot see.
    #[allow(clippy::zombie_processes)]
    fn wait_status_reports_an_exit_and_a_death_by_a_real_time_signal() {
        let exits = std::process::Command::new("sh")
            .args(["-c", "exit 7"])
            .spawn()
            .unwrap();
        let st = wait_status(exits.id() as libc::pid_t).unwrap();
        assert!(libc::WIFEXITED(st) && libc::WEXITSTATUS(st) == 7);
        // nix's WaitStatus cannot hold this one: the reason the call is raw.
        let killed = std::process::Command::new("sh")
            .args(["-c", "kill -s RTMIN+1 $$; sleep 5"])
            .spawn()
            .unwrap();
        let st = wait_status(killed.id() as libc::pid_t).unwrap();
        assert!(libc::WIFSIGNALED(st) && libc::WTERMSIG(st) == libc::SIGRTMIN() + 1);
        // Not a child (any more): an error, not a status.
        assert!(wait_status(killed.id() as libc::pid_t).is_err());
    }

    #[test]
    fn a_copy_at_least_n_is_the_same_pipe_and_closes_on_exec() {
        let (r, w) = nix::unistd::pipe().unwrap();
        let copy = dup_at_least(w.as_fd(), 100).unwrap();
        assert!(copy.as_raw_fd() >= 100);
        let flags = nix::fcntl::fcntl(&copy, nix::fcntl::FcntlArg::F_GETFD).unwrap();
        assert_ne!(flags & libc::FD_CLOEXEC, 0);
        drop(w);
        nix::unistd::write(&copy, b"via the copy").unwrap();
        drop(copy);
        let mut got = Vec::with_capacity(64);
        assert_eq!(read_into_spare(r.as_fd(), &mut got).unwrap(), 12);
        assert_eq!(got, b"via the copy");
        // The writers are gone: the end of input, and nothing added.
        got.reserve(64);
        assert_eq!(read_into_spare(r.as_fd(), &mut got).unwrap(), 0);
        assert_eq!(got, b"via the copy");
    }

    #[test]
    fn poll_numbers_skips_minus_one_and_says_which_is_ready() {
        let (r, w) = nix::unistd::pipe().unwrap();
        let entry = |fd| libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        };
        let mut fds = [entry(-1), entry(r.as_raw_fd())];
        assert_eq!(poll_numbers(&mut fds, 0).unwrap(), 0);
        nix::unistd::write(&w, b"x").unwrap();
        assert_eq!(poll_numbers(&mut fds, -1).unwrap(), 1);
        assert_eq!(fds[0].revents, 0);
        assert_ne!(fds[1].revents & libc::POLLIN, 0);
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
