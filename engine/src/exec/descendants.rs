//! Makes every descendant of the commands end with the run. frun is a child subreaper: a
//! process its commands leave behind (a background job, a `setsid` daemon) is re-parented to
//! frun instead of init when its parent exits. frun reaps those while the run goes and, at the
//! end, ends the ones still running (SIGTERM, SIGKILL after a grace period), again and again
//! until none is left, since ending one re-parents its own children to frun.
//!
//! Children frun already had when the run began are not the run's: a shell that starts
//! `frun … > >(consumer)` forks the consumer of the process substitution from the process that
//! then becomes frun, and that consumer must outlive frun to read what frun wrote. They are
//! listed at the start and never signalled.
//!
//! Adopted processes are children of frun's main thread (the kernel gives orphans to the first
//! live thread of the subreaper), the thread that supervises the run; commands are children of
//! the worker threads that started them. Reaping waits only for the main thread's own children
//! (`__WNOTHREAD`), so it never takes a worker's child from it.

use std::collections::HashSet;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use nix::errno::Errno;
use nix::sys::prctl::set_child_subreaper;
use nix::sys::signal::{Signal, kill, killpg};
use nix::sys::wait::{WaitPidFlag, WaitStatus, waitpid};
use nix::unistd::{Pid, getpid};

/// The children frun had before the run started any command (see the module comment).
static PREEXISTING: Mutex<Vec<libc::pid_t>> = Mutex::new(Vec::new());

/// Makes frun the reaper of orphaned descendants (call before any command starts), and notes
/// the children it already has, which the run leaves alone.
pub fn adopt_orphans() {
    let _ = set_child_subreaper(true);
    let before = children();
    if let Ok(mut p) = PREEXISTING.lock() {
        *p = before;
    }
}

/// The children the run itself brought: every child but those noted by [`adopt_orphans`].
fn run_children() -> Vec<libc::pid_t> {
    let mut kids = children();
    if let Ok(p) = PREEXISTING.lock() {
        kids.retain(|k| !p.contains(k));
    }
    kids
}

/// Reaps the adopted descendants that have ended (non-blocking). Call from the main thread.
/// False when the main thread has no child left at all (`ECHILD`).
pub fn reap_adopted() -> bool {
    let flags = WaitPidFlag::WNOHANG | WaitPidFlag::__WALL | WaitPidFlag::__WNOTHREAD;
    loop {
        match waitpid(None, Some(flags)) {
            Ok(WaitStatus::StillAlive) => return true,
            Ok(_) => {}
            // The flags are valid, so EINVAL is nix's word for a child it reaped but cannot
            // describe (ended by a real-time signal): reaped all the same.
            Err(Errno::EINVAL) => {}
            Err(Errno::ECHILD) => return false,
            Err(_) => return true,
        }
    }
}

/// Pids of frun's children (any thread's): `/proc/self/task/*/children`, or a scan of `/proc`
/// where the kernel has no such files.
fn children() -> Vec<libc::pid_t> {
    let mut out = Vec::new();
    let mut listed = false;
    if let Ok(tasks) = std::fs::read_dir("/proc/self/task") {
        for t in tasks.flatten() {
            if let Ok(text) = std::fs::read_to_string(t.path().join("children")) {
                listed = true;
                out.extend(
                    text.split_whitespace()
                        .filter_map(|w| w.parse::<libc::pid_t>().ok()),
                );
            }
        }
    }
    if !listed {
        let me = getpid().as_raw();
        for e in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
            let Some(pid) = e.file_name().to_str().and_then(|n| n.parse().ok()) else {
                continue;
            };
            let Ok(stat) = std::fs::read_to_string(e.path().join("stat")) else {
                continue;
            };
            // "pid (comm) state ppid …": comm may hold anything but ends at the last ')'.
            let ppid = stat
                .rfind(')')
                .and_then(|i| stat[i + 1..].split_whitespace().nth(1))
                .and_then(|w| w.parse::<libc::pid_t>().ok());
            if ppid == Some(me) {
                out.push(pid);
            }
        }
    }
    out
}

/// Sends `sig` to child `pid` and to the process group it leads, if it leads one. `pid` is an
/// unreaped child of frun, so neither number can have been reused.
fn signal(pid: libc::pid_t, sig: Signal) {
    let _ = killpg(Pid::from_raw(pid), sig);
    let _ = kill(Pid::from_raw(pid), sig);
}

/// Ends every descendant still running once the commands are done: SIGTERM first (to each
/// adopted process and the group it leads), SIGKILL to whatever is left after `grace`. Returns
/// when frun has no child left. Call from the main thread after every worker has returned.
///
/// `workers_gone`: no worker thread is left. The main thread having no child then means frun
/// has none (a thread that ends hands its children to another thread of frun, and orphans go
/// to the main thread), so `/proc` need not be read: the usual end of a run costs one `wait`.
pub fn end_all(grace: Duration, workers_gone: bool) {
    if !reap_adopted() && workers_gone {
        return;
    }
    let mut termed: HashSet<libc::pid_t> = HashSet::new();
    let started = Instant::now();
    // A bound, so a descendant that keeps forking faster than it is killed cannot hold frun.
    let give_up = started + grace + Duration::from_secs(10);
    loop {
        let kids = run_children();
        if kids.is_empty() {
            return;
        }
        let late = started.elapsed() >= grace;
        for &pid in &kids {
            if late {
                signal(pid, Signal::SIGKILL);
            } else if termed.insert(pid) {
                signal(pid, Signal::SIGTERM);
            }
        }
        if Instant::now() >= give_up {
            return;
        }
        std::thread::sleep(Duration::from_millis(5));
        reap_adopted();
    }
}
