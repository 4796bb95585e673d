//! Guards a mapped input file against shrinking: turns the SIGBUS of a read past the file's new
//! end into a flag the stages check, instead of frun's death.
//!
//! A regular input file is mapped in place. When it is truncated while frun runs (logrotate's
//! `copytruncate` does exactly that), reading a page of the mapping that now lies past the end
//! of the file raises SIGBUS. While at least one mapping is registered here, a SIGBUS handler is
//! installed. For a fault inside a registered mapping it marks that mapping as faulted, maps
//! anonymous zero pages over the mapping from the faulting page to its end (so the read resumes
//! and sees zeros) and returns. Whoever uses the mapping checks [`Guard::faulted`] (once per
//! batch) before trusting what it read, and stops. Any other SIGBUS goes to the disposition that
//! was there before the handler (by default it kills the process, as without the handler).

use std::cell::UnsafeCell;
use std::mem::MaybeUninit;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// How many mappings can be guarded at once (one per running engine in a process).
const SLOTS: usize = 8;

/// One registered mapping: `[start, end)` (0, 0 when free), and whether a read in it faulted.
struct Slot {
    start: AtomicUsize,
    end: AtomicUsize,
    faulted: AtomicBool,
    taken: AtomicBool,
}

#[allow(clippy::declare_interior_mutable_const)]
const FREE: Slot = Slot {
    start: AtomicUsize::new(0),
    end: AtomicUsize::new(0),
    faulted: AtomicBool::new(false),
    taken: AtomicBool::new(false),
};

static GUARDED: [Slot; SLOTS] = [FREE; SLOTS];

/// Registered mappings; the handler is installed while this is above 0.
static USERS: Mutex<usize> = Mutex::new(0);

/// The SIGBUS disposition before the handler was installed; written (under [`USERS`]) only
/// while the handler is not installed, read by the handler.
struct Previous(UnsafeCell<MaybeUninit<libc::sigaction>>);
// SAFETY: written only under USERS while no handler can read it (see above).
unsafe impl Sync for Previous {}
static PREVIOUS: Previous = Previous(UnsafeCell::new(MaybeUninit::uninit()));

/// A registered mapping; unregistered when dropped (before the mapping is unmapped).
pub(super) struct Guard {
    slot: usize,
}

/// The page size, read once at the first registration (the handler must not call sysconf).
static PAGE: AtomicUsize = AtomicUsize::new(4096);

fn page_size() -> usize {
    match nix::unistd::sysconf(nix::unistd::SysconfVar::PAGE_SIZE) {
        Ok(Some(n)) if n > 0 => n as usize,
        _ => 4096,
    }
}

/// The SIGBUS handler (see the module docs). Only async-signal-safe calls: atomics, raw mmap,
/// sigaction, raise.
extern "C" fn on_sigbus(sig: libc::c_int, info: *mut libc::siginfo_t, _ctx: *mut libc::c_void) {
    // SAFETY: the kernel hands a valid siginfo to an SA_SIGINFO handler; errno is this thread's.
    unsafe {
        let errno = *libc::__errno_location();
        let code = (*info).si_code;
        // A fault (si_code > 0) carries the address; a sent signal (kill) does not.
        if code > 0 {
            let addr = (*info).si_addr() as usize;
            for s in &GUARDED {
                let start = s.start.load(Ordering::Acquire);
                let end = s.end.load(Ordering::Acquire);
                if start == 0 || addr < start || addr >= end {
                    continue;
                }
                s.faulted.store(true, Ordering::SeqCst);
                let page = addr & !(PAGE.load(Ordering::Relaxed) - 1);
                // The raw system call (no C library lock); every argument a full register.
                let r = libc::syscall(
                    libc::SYS_mmap,
                    page as libc::c_long,
                    (end - page) as libc::c_long,
                    libc::PROT_READ as libc::c_long,
                    (libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_FIXED) as libc::c_long,
                    -1 as libc::c_long,
                    0 as libc::c_long,
                );
                if r != -1 {
                    *libc::__errno_location() = errno;
                    return;
                }
                break;
            }
        }
        // Not ours (or the zero pages could not be mapped): the previous disposition takes it.
        // Returning re-runs a faulting access, which faults again into that disposition; a sent
        // signal is sent again.
        libc::sigaction(sig, (*PREVIOUS.0.get()).as_ptr(), std::ptr::null_mut());
        if code <= 0 {
            libc::raise(sig);
        }
        *libc::__errno_location() = errno;
    }
}

impl Guard {
    /// Guards the mapping `[start, start + len)`; None when every slot is taken or the handler
    /// cannot be installed (then the mapping must not be used in place).
    pub(super) fn register(start: *const u8, len: usize) -> Option<Guard> {
        let mut users = USERS.lock().unwrap_or_else(|e| e.into_inner());
        let slot = GUARDED
            .iter()
            .position(|s| !s.taken.load(Ordering::Acquire))?;
        if *users == 0 {
            PAGE.store(page_size(), Ordering::Relaxed);
            // SAFETY: a zeroed sigaction is valid; the handler has the SA_SIGINFO signature; the
            // previous disposition is written while no handler of ours can read it. (Raw
            // sigaction: the kernel stores the previous disposition where the handler reads it
            // before the handler can run; nix's returns it afterwards, too late for a SIGBUS
            // that arrives in between.)
            unsafe {
                let mut act: libc::sigaction = std::mem::zeroed();
                act.sa_sigaction = on_sigbus as *const () as usize;
                act.sa_flags = libc::SA_SIGINFO | libc::SA_ONSTACK;
                libc::sigemptyset(&mut act.sa_mask);
                let previous = (*PREVIOUS.0.get()).as_mut_ptr();
                if libc::sigaction(libc::SIGBUS, &act, previous) != 0 {
                    return None;
                }
            }
        }
        *users += 1;
        let s = &GUARDED[slot];
        s.taken.store(true, Ordering::Release);
        s.faulted.store(false, Ordering::Release);
        let first = start as usize;
        let page = PAGE.load(Ordering::Relaxed);
        s.end
            .store((first + len).div_ceil(page) * page, Ordering::Release);
        s.start.store(first, Ordering::Release);
        Some(Guard { slot })
    }

    /// True once a read in the mapping faulted: the file shrank, and what was read past its
    /// new end is zeros, not input.
    pub(super) fn faulted(&self) -> bool {
        GUARDED[self.slot].faulted.load(Ordering::SeqCst)
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        let mut users = USERS.lock().unwrap_or_else(|e| e.into_inner());
        let s = &GUARDED[self.slot];
        s.start.store(0, Ordering::Release);
        s.end.store(0, Ordering::Release);
        s.faulted.store(false, Ordering::Release);
        s.taken.store(false, Ordering::Release);
        *users -= 1;
        if *users == 0 {
            // SAFETY: restores the disposition saved when the handler was installed.
            unsafe {
                libc::sigaction(
                    libc::SIGBUS,
                    (*PREVIOUS.0.get()).as_ptr(),
                    std::ptr::null_mut(),
                )
            };
        }
    }
}
