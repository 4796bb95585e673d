//! `--job-timeout` and `--memfree` for the run: when each worker's running command started
//! (the runners note it beside the pid slot), and the supervisor's side, which finds commands
//! over their time (and, while memory is short, the youngest) and ends them step by step (TERM,
//! TERM, TERM, KILL) from its own poll loop: no thread or timer per batch.
//!
//! It only signals commands and marks them timed out or evicted; the runner reports the
//! outcome and the worker judges it.

use std::sync::atomic::{AtomicI32, AtomicU64, Ordering};
use std::time::{Duration, Instant, SystemTime};

use crate::dispatch::pace::{JobTimeout, RuntimeMedian};

/// When each worker's command started, and which were killed for their time.
pub struct Clock {
    pub limit: Option<JobTimeout>,
    /// Runtimes of the batches that succeeded (for `N%`).
    pub median: RuntimeMedian,
    epoch: Instant,
    /// The wall clock at `epoch` (since the Unix epoch), for [`JobTimeout::WholeSeconds`].
    epoch_wall: Duration,
    /// Per worker: ns since `epoch` (+1) when its running command started; 0 = none.
    since: Box<[AtomicU64]>,
    /// Per worker: the batch its running command runs (set with `since`).
    seq: Box<[AtomicU64]>,
    /// Per worker: the pid the supervisor killed for its time (0: none).
    timed_out: Box<[AtomicI32]>,
    /// Per worker: the notice turn of that kill (see `Turns`), set before the pid.
    turn: Box<[AtomicU64]>,
    /// Per worker: the pid the supervisor ended because memory ran short (0: none).
    evicted: Box<[AtomicI32]>,
    /// How a command over its time is ended: each signal, then the wait before the next.
    steps: Box<[(i32, Duration)]>,
}

impl Clock {
    /// A clock for `limit`; `watch_memory`: `--memfree` ends the youngest batch (start times
    /// and batches are noted for it too).
    pub fn new(
        limit: Option<JobTimeout>,
        watch_memory: bool,
        workers: usize,
        steps: &[(i32, Duration)],
    ) -> Clock {
        let slots = if limit.is_some() || watch_memory {
            workers
        } else {
            0
        };
        Clock {
            limit,
            median: RuntimeMedian::default(),
            epoch: Instant::now(),
            epoch_wall: SystemTime::now()
                .duration_since(SystemTime::UNIX_EPOCH)
                .unwrap_or_default(),
            since: (0..slots).map(|_| AtomicU64::new(0)).collect(),
            seq: (0..slots).map(|_| AtomicU64::new(0)).collect(),
            timed_out: (0..slots).map(|_| AtomicI32::new(0)).collect(),
            turn: (0..slots).map(|_| AtomicU64::new(0)).collect(),
            evicted: (0..slots).map(|_| AtomicI32::new(0)).collect(),
            steps: steps.into(),
        }
    }

    fn now(&self) -> u64 {
        self.epoch.elapsed().as_nanos() as u64 + 1
    }

    /// How long the command started at `since` (see [`Clock::now`]) may run, given the
    /// limit's time `limit` in ns.
    fn allowed(&self, since: u64, limit: u64) -> u64 {
        match self.limit {
            Some(JobTimeout::WholeSeconds(d)) => {
                let start = self.epoch_wall + Duration::from_nanos(since - 1);
                let deadline = crate::dispatch::pace::whole_second_deadline(start, d);
                deadline.saturating_sub(start).as_nanos() as u64
            }
            _ => limit,
        }
    }

    /// Worker `index`'s command for batch `seq` starts now (before its pid is put in the
    /// slot).
    pub fn started(&self, index: usize, seq: u64) {
        if let (Some(s), Some(q)) = (self.since.get(index), self.seq.get(index)) {
            q.store(seq, Ordering::SeqCst);
            s.store(self.now(), Ordering::SeqCst);
        }
    }

    /// Whether worker `index`'s command `pid`, which has ended, was killed for its time (the
    /// mark is taken): its notice turn if it was.
    pub fn take_timed_out(&self, index: usize, pid: libc::pid_t) -> Option<u64> {
        let t = self.timed_out.get(index)?;
        t.compare_exchange(pid, 0, Ordering::SeqCst, Ordering::SeqCst)
            .ok()?;
        Some(self.turn[index].load(Ordering::SeqCst))
    }

    /// Whether worker `index`'s command `pid`, which has ended, was ended because memory ran
    /// short (the mark is taken).
    pub fn take_evicted(&self, index: usize, pid: libc::pid_t) -> bool {
        self.evicted.get(index).is_some_and(|e| {
            e.compare_exchange(pid, 0, Ordering::SeqCst, Ordering::SeqCst)
                .is_ok()
        })
    }
}

/// How often the supervisor looks at the memory available (`--memfree`).
const MEMORY_LOOK: Duration = Duration::from_millis(250);
/// After an evicted command ended, the time the memory it held is given to show up before
/// another one is ended.
const MEMORY_SETTLE: Duration = Duration::from_secs(1);

/// The supervisor's record of the commands it is ending: per worker, the pid, the next step
/// and when it is due.
pub(in crate::run) struct Enforcer {
    ending: Vec<Option<(libc::pid_t, usize, u64)>>,
    /// Groups of commands being ended whose leader (the command itself) has ended and been
    /// reaped while others of its group (what it started) still run: the steps go on to them,
    /// as long as the group has a member. (group, next step, when it is due).
    groups: Vec<(libc::pid_t, usize, u64)>,
    /// The commands found over their time in a tick: (batch, worker, pid), kept for its room.
    due_now: Vec<(u64, usize, libc::pid_t)>,
    /// `--memfree`: the command being ended because memory ran short (worker, pid).
    evicting: Option<(usize, libc::pid_t)>,
    /// `--memfree`: when the memory is looked at next (ns on the clock).
    memory_look: u64,
}

impl Enforcer {
    pub(in crate::run) fn new(workers: usize) -> Enforcer {
        Enforcer {
            ending: vec![None; workers],
            groups: Vec::new(),
            due_now: Vec::with_capacity(workers),
            evicting: None,
            memory_look: 0,
        }
    }

    /// Whether the steps go on to a group whose command has ended (see `groups`).
    pub(in crate::run) fn ends_groups(&self) -> bool {
        !self.groups.is_empty()
    }

    /// Signals what is due: commands past their time get their first TERM, commands being
    /// ended their next step. Returns how soon it must be called again (None: no limit yet and
    /// nothing being ended).
    pub(in crate::run) fn tick(&mut self, shared: &crate::run::Shared) -> Option<Duration> {
        let clock = &shared.clock;
        let limit = clock
            .limit
            .and_then(|l| l.limit(&clock.median))
            .map(|d| d.as_nanos() as u64);
        let now = clock.now();
        let mut next: Option<u64> = None;
        let mut soon = |at: u64| next = Some(next.map_or(at, |n| n.min(at)));
        let mut due_now = std::mem::take(&mut self.due_now);
        for (i, ending) in self.ending.iter_mut().enumerate() {
            let pid = shared.children[i].load(Ordering::SeqCst);
            match *ending {
                Some((p, step, due)) if p == pid => {
                    if now >= due && step < clock.steps.len() {
                        let (sig, wait) = clock.steps[step];
                        shared.signal_child(pid, sig);
                        *ending = Some((pid, step + 1, now + wait.as_nanos() as u64));
                    }
                    if let Some((_, step, due)) = *ending {
                        if step < clock.steps.len() {
                            soon(due);
                        }
                    }
                    continue;
                }
                Some((p, step, due)) if shared.children_own_group && step < clock.steps.len() => {
                    self.groups.push((p, step, due));
                    *ending = None;
                }
                _ => *ending = None,
            }
            let (Some(limit), true) = (limit, pid > 0) else {
                continue;
            };
            let since = clock.since[i].load(Ordering::SeqCst);
            // The slot changed meanwhile: this start time may be another command's.
            if since == 0 || shared.children[i].load(Ordering::SeqCst) != pid {
                continue;
            }
            let limit = clock.allowed(since, limit);
            if now.saturating_sub(since) >= limit {
                due_now.push((clock.seq[i].load(Ordering::SeqCst), i, pid));
            } else {
                soon(since + limit);
            }
        }
        self.groups.retain_mut(|(group, step, due)| {
            // No member left (kill 0 fails): the group is gone, and its number may be reused.
            if nix::sys::signal::killpg(nix::unistd::Pid::from_raw(*group), None).is_err() {
                return false;
            }
            if now >= *due {
                let (sig, wait) = clock.steps[*step];
                if let Ok(sig) = nix::sys::signal::Signal::try_from(sig) {
                    let _ = nix::sys::signal::killpg(nix::unistd::Pid::from_raw(*group), sig);
                }
                *step += 1;
                *due = now + wait.as_nanos() as u64;
            }
            *step < clock.steps.len() && {
                soon(*due);
                true
            }
        });
        // Those over their time are killed in input order, and told about in it (as GNU
        // Parallel does: two workers may start their commands in either order).
        due_now.sort_unstable();
        for (_, i, pid) in due_now.drain(..) {
            clock.turn[i].store(shared.ledger.timeout_turns.issue(), Ordering::SeqCst);
            clock.timed_out[i].store(pid, Ordering::SeqCst);
            let Some(&(sig, wait)) = clock.steps.first() else {
                continue;
            };
            // The slot only holds pids of unreaped children (see `runner::Child`).
            shared.signal_child(pid, sig);
            let due = now + wait.as_nanos() as u64;
            self.ending[i] = Some((pid, 1, due));
            soon(due);
        }
        // A `N%` limit not known yet is looked at again soon.
        if limit.is_none() && clock.limit.is_some() {
            soon(now + 100_000_000);
        }
        self.due_now = due_now;
        if let Some(floor) = &shared.memory {
            soon(self.evict_if_short(shared, floor, now));
        }
        next.map(|at| Duration::from_nanos(at.saturating_sub(now)))
    }

    /// `--memfree`: while less than half the floor is available, ends the youngest running
    /// command (the highest batch number), one at a time: the next only once the last has
    /// ended and its memory had [`MEMORY_SETTLE`] to show up (GNU Parallel ends them all in one
    /// look, before any has let its memory go). Returns when to look again.
    fn evict_if_short(
        &mut self,
        shared: &crate::run::Shared,
        floor: &super::memory::MemoryFloor,
        now: u64,
    ) -> u64 {
        let clock = &shared.clock;
        if let Some((i, pid)) = self.evicting {
            if shared.children[i].load(Ordering::SeqCst) == pid {
                return now + MEMORY_LOOK.as_nanos() as u64;
            }
            self.evicting = None;
            self.memory_look = now + MEMORY_SETTLE.as_nanos() as u64;
        }
        if now < self.memory_look {
            return self.memory_look;
        }
        self.memory_look = now + MEMORY_LOOK.as_nanos() as u64;
        if !floor.short() {
            return self.memory_look;
        }
        let youngest = (0..shared.children.len())
            .filter(|&i| self.ending[i].is_none())
            .filter_map(|i| {
                let pid = shared.children[i].load(Ordering::SeqCst);
                let since = clock.since[i].load(Ordering::SeqCst);
                (pid > 0 && since != 0).then(|| (clock.seq[i].load(Ordering::SeqCst), i, pid))
            })
            .max();
        let (Some((_, i, pid)), Some(&(sig, wait))) = (youngest, clock.steps.first()) else {
            return self.memory_look;
        };
        // The mark before the signal: the runner that reaps it finds the mark.
        clock.evicted[i].store(pid, Ordering::SeqCst);
        if shared.children[i].load(Ordering::SeqCst) != pid {
            // It ended meanwhile, on its own.
            clock.evicted[i].store(0, Ordering::SeqCst);
            return self.memory_look;
        }
        shared.signal_child(pid, sig);
        let due = now + wait.as_nanos() as u64;
        self.ending[i] = Some((pid, 1, due));
        self.evicting = Some((i, pid));
        due.min(self.memory_look)
    }
}
