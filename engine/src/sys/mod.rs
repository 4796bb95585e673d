//! Thin wrappers over the system facilities several stages share: eventfd wake-ups, signal
//! masks and the signalfd, futex waits, anonymous mappings and zeroed tables, CPU counts and system limits.
//!
//! This is the only module where such wrappers live (each once); beside them, the machine's NUMA
//! topology ([`numa`]), the exit statuses ([`exit`]) and the wording of OS errors
//! ([`errors`]). It knows nothing of runs, batches or flags: it must not import any module of
//! the crate outside `sys/`.

pub mod errors;
pub mod exit;
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

/// An anonymous mapping, zero-filled by the kernel a page at a time as it is first touched,
/// unmapped on drop. `shared`: forked processes see the same pages (else each gets a copy).
pub struct AnonMap {
    ptr: std::ptr::NonNull<u8>,
    len: usize,
}

// SAFETY: the mapping is plain memory owned by this value; reaching into it takes `unsafe`
// code at the user (through `as_ptr`), which decides how it is shared.
unsafe impl Send for AnonMap {}
// SAFETY: as above; `&AnonMap` only hands out the address.
unsafe impl Sync for AnonMap {}

impl AnonMap {
    /// `len` bytes (at least one), page-aligned.
    pub fn new(len: usize, shared: bool) -> std::io::Result<AnonMap> {
        let len = len.max(1);
        let kind = if shared {
            libc::MAP_SHARED
        } else {
            libc::MAP_PRIVATE
        };
        // SAFETY: an anonymous mapping with no address hint; the result is checked before use.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                kind | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if p == libc::MAP_FAILED {
            return Err(std::io::Error::last_os_error());
        }
        Ok(AnonMap {
            ptr: std::ptr::NonNull::new(p.cast()).expect("mmap returned null"),
            len,
        })
    }

    /// The first byte (page-aligned); the `len` bytes asked for are valid while `self` lives.
    pub fn as_ptr(&self) -> *mut u8 {
        self.ptr.as_ptr()
    }
}

impl Drop for AnonMap {
    fn drop(&mut self) {
        // SAFETY: unmaps exactly the mapping made in `new`; borrows of it end with `self`.
        unsafe { libc::munmap(self.ptr.as_ptr().cast(), self.len) };
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
