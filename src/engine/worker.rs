//! A worker: claims batches from the ring, runs each through the backend, hands the output to
//! the emitter and the outcome to the ledger — until the ring is done or the run stops.
//!
//! A worker never reads input and never decides batch sizes; it only touches its own batch's
//! bytes, its own capture file and its own child (or worker shell, for bash functions).

use std::sync::atomic::Ordering;

use crate::engine::Shared;
use std::os::unix::ffi::OsStrExt;

use super::Backend;
use crate::batch::Batch;
use crate::batch::count_records;
use crate::exec::argv::{Argv, BatchId, SH, shell_quote, split_and_glob};
use crate::exec::resolve::start_failure;
use crate::exec::shell::{ShellWorker, StartError};
use crate::exec::spawn::{ChildEnd, Spawner, wait_exit, wait_reap};
use crate::exec::stdin::{Feed, StdinSlot};
use crate::ledger::{Outcome, Verdict};
use crate::output::{Capture, DoneSet, EmitError, Piece, write_all};
use crate::ring::Claim;
use crate::stop::StopReason;

/// How many times a start that failed for want of processes (EAGAIN) waits and tries again
/// (about 10 seconds in all) before it counts as a failed attempt.
const PROCESS_WAITS: u64 = 100;

/// Runs worker `index` until there is no more work. Errors stop the whole run.
pub fn run(shared: &Shared, index: usize) {
    if let Err(e) = work(shared, index) {
        shared
            .stop
            .request(StopReason::Fatal(format!("worker {index}: {e}")));
    }
}

/// What a worker holds for all its batches: its capture file, its stdin slot and its spawner.
type Setup = (Option<std::sync::Arc<Capture>>, Option<StdinSlot>, Spawner);

fn setup(shared: &Shared) -> std::io::Result<Setup> {
    let capture = if shared.output.captures() {
        Some(Capture::new()?)
    } else {
        None
    };
    let stdin_slot = match shared.work.backend {
        Backend::Stdin => Some(StdinSlot::new()?),
        _ => None,
    };
    let spawner = Spawner::new(
        capture.as_ref().map(|c| c.fd()),
        stdin_slot.as_ref().map(|s| s.fd()).or(shared.child_stdin()),
        &shared.sigmask,
        shared.children_own_group,
    )?;
    Ok((capture, stdin_slot, spawner))
}

fn work(shared: &Shared, index: usize) -> std::io::Result<()> {
    // A worker that cannot get its descriptors (the open-file limit) leaves the work to the
    // others; only the first one's failure ends the run.
    let (capture, stdin_slot, spawner) = match setup(shared) {
        Ok(s) => s,
        Err(e) if index > 0 => {
            shared.worker_failed(
                index,
                &format!("cannot set up a worker: {}", crate::errors::os_message(&e)),
            );
            return Ok(());
        }
        Err(e) => return Err(e),
    };
    let pid_slot = &shared.children[index];
    // The worker shell this worker runs bash functions in (started at the first batch, again
    // after one is lost).
    let mut shell: Option<ShellWorker> = None;
    let mut argv = Argv::default();
    // `/bin/sh SCRIPT ARGS…`, for a script without `#!`.
    let mut sh_argv: Vec<*const libc::c_char> = Vec::new();
    let mut text = Vec::new();
    let mut written = 0u64;
    let mut attempts = 0u64;

    // A batch that may be run again keeps its input until its outcome is final.
    let keep_input = shared.work.retry.may_retry();
    // Parts of the current batch still to run (a failed batch of several records is split in
    // two, so one bad record cannot take the others down), and the parts that are done.
    let mut parts: Vec<(u64, u64, u64)> = Vec::new();
    let mut done: Vec<(u64, u64)> = Vec::new();
    // With NUMA placement, this worker belongs to one node: it runs there and takes that
    // node's batches first.
    let layout = shared.rings.layout();
    let node = layout.node_of_worker(index);
    if !layout.is_single() {
        layout.pin_thread(node);
    }
    let timed = shared.stats && !layout.is_single();
    let mut finished = false;
    'batches: loop {
        // The system allows fewer workers than run (processes could not be started): the
        // last ones leave, between batches.
        if shared.over_cap(index) {
            shared.rings.leave(node, finished);
            break;
        }
        let Claim::Batch(batch) = shared.rings.claim(node, finished) else {
            break;
        };
        finished = true;
        if shared.stop.is_stopped() {
            break;
        }
        let began = timed.then(std::time::Instant::now);
        parts.clear();
        done.clear();
        // A command of this batch exited non-zero and that stands (it is not retried).
        let mut failed = false;
        parts.push((batch.start, batch.end, 0));
        // The capture holds this batch's kept output from `written` to `kept`.
        let mut kept = written;
        while let Some((start, end, retried)) = parts.pop() {
            let part = Batch {
                start,
                end,
                ..batch
            };
            let bytes = shared.spool.bytes(start, end);
            let arg_bytes = if shared.work.records_on_stdin {
                &[][..]
            } else {
                bytes
            };
            let id = BatchId {
                node: node as u32,
                worker: index as u32,
                batch: attempts,
            };
            attempts += 1;
            shared.work.template.build(arg_bytes, id, &mut argv);
            // Nothing runs on bytes read past the end of an input file that shrank (argv mode
            // checks the file's size; stdin mode's copy from the file checks it itself).
            let intact = if shared.work.records_on_stdin {
                !shared.spool.shrank()
            } else {
                shared.spool.intact(end)
            };
            if !intact {
                shared.input_shrank();
                break 'batches;
            }
            // Arguments are copies: the input bytes are not needed any more, unless they are
            // fed to the command's stdin below or the batch may have to run again.
            if stdin_slot.is_none() && !keep_input {
                shared.input_release.release(batch.seq);
            }
            let outcome = match shared.work.backend {
                Backend::DryRun { split_from } => {
                    text.clear();
                    for (i, w) in argv.words().enumerate() {
                        match split_from {
                            Some(n) if i >= n => split_and_glob(w, |w| {
                                text.push(b' ');
                                shell_quote(w, &mut text);
                            }),
                            _ => {
                                if i > 0 {
                                    text.push(b' ');
                                }
                                shell_quote(w, &mut text);
                            }
                        }
                    }
                    text.push(b'\n');
                    let r = match &capture {
                        Some(c) => c.append(&text),
                        None => write_all(1, &text),
                    };
                    match r {
                        Ok(()) => Outcome::Ok,
                        Err(e) if e.raw_os_error() == Some(libc::EPIPE) => {
                            shared.stop.request(StopReason::ReaderGone);
                            break 'batches;
                        }
                        Err(e) => return Err(e),
                    }
                }
                Backend::Argv | Backend::Stdin if shared.shell.is_some() => {
                    if shell.is_none() {
                        let host = shared.shell.as_ref().expect("checked above");
                        match ShellWorker::start(
                            host,
                            capture.as_ref().map(|c| c.fd()),
                            shared.child_stdin(),
                            shared.children_own_group,
                        ) {
                            Ok(w) => {
                                // A worker shell is forked by the caller: it runs where this
                                // worker runs only once pinned.
                                if !layout.is_single() {
                                    layout.pin(w.pid(), node);
                                }
                                shell = Some(w)
                            }
                            Err(StartError::Setup(code)) => {
                                shared.stop.request(StopReason::Setup(code));
                                break 'batches;
                            }
                            Err(StartError::Io(e)) => return Err(e),
                        }
                    }
                    let sw = shell.as_mut().expect("started above");
                    let feed = match &stdin_slot {
                        Some(slot) => Some(slot.open()?),
                        None => None,
                    };
                    // A worker shell that went away between batches fails the send; its reply
                    // below then says so.
                    let sent = sw.send(argv.words(), stdin_slot.as_ref().map(|s| s.fd()));
                    pid_slot.store(sw.pid(), Ordering::SeqCst);
                    if let Some(slot) = &stdin_slot {
                        slot.release()?;
                    }
                    let feed = if sent.is_ok() { feed } else { None };
                    feed_running(shared, sw.pid(), feed, &batch, (start, end), keep_input)?;
                    let status = sw.wait();
                    pid_slot.store(0, Ordering::SeqCst);
                    match status {
                        Some(0) => Outcome::Ok,
                        Some(c) => Outcome::Exited(c),
                        None => {
                            let end = sw.reap();
                            shell = None;
                            match end? {
                                ChildEnd::Exited(c) => Outcome::ShellExited(c),
                                ChildEnd::Signaled(s) => Outcome::Signaled(s),
                            }
                        }
                    }
                }
                Backend::Argv | Backend::Stdin => {
                    let feed = match &stdin_slot {
                        Some(slot) => Some(slot.open()?),
                        None => None,
                    };
                    let mut spawned = start_command(shared, &spawner, &argv, &mut sh_argv);
                    // Out of processes (the user's process limit): fewer workers, and this
                    // start waits for one of theirs to end instead of spending a retry.
                    let mut waits = 0u64;
                    while spawned
                        .as_ref()
                        .is_err_and(|e| e.raw_os_error() == Some(libc::EAGAIN))
                        && waits < PROCESS_WAITS
                        && !shared.stop.is_stopped()
                    {
                        shared.too_many_processes();
                        waits += 1;
                        std::thread::sleep(std::time::Duration::from_millis(10 * waits.min(10)));
                        spawned = start_command(shared, &spawner, &argv, &mut sh_argv);
                    }
                    if let Some(slot) = &stdin_slot {
                        slot.release()?;
                    }
                    match spawned {
                        Err(e) => {
                            // What no retry can fix ends the run at once, said once.
                            let t = &shared.work.template;
                            let shown = String::from_utf8_lossy(t.argv0());
                            let path = std::path::Path::new(std::ffi::OsStr::from_bytes(
                                t.path().to_bytes(),
                            ));
                            if let Some(why) = start_failure(&shown, path, &e) {
                                shared.stop.request(StopReason::CannotRun(why));
                                break 'batches;
                            }
                            Outcome::SpawnFailed(e)
                        }
                        Ok(pid) => {
                            pid_slot.store(pid, Ordering::SeqCst);
                            feed_running(shared, pid, feed, &batch, (start, end), keep_input)?;
                            let end = wait_exit(pid);
                            // The child is a zombie until reaped: its pid cannot be reused while
                            // the supervisor may still signal it through the slot.
                            pid_slot.store(0, Ordering::SeqCst);
                            wait_reap(pid);
                            match end? {
                                ChildEnd::Exited(0) => Outcome::Ok,
                                ChildEnd::Exited(c) => Outcome::Exited(c),
                                ChildEnd::Signaled(s) => Outcome::Signaled(s),
                            }
                        }
                    }
                }
            };
            // A run that is stopping discards the batch (it stays undone for a resume), unless
            // it drains (`--halt soon`): then running batches count.
            if shared.stop.is_stopped() && !shared.stop.drains() {
                break 'batches;
            }
            if matches!(outcome, Outcome::Signaled(libc::SIGPIPE)) && crate::output::reader_gone(1)
            {
                shared.stop.request(StopReason::ReaderGone);
                break 'batches;
            }
            let verdict = shared.work.retry.judge(&outcome, retried);
            if verdict == Verdict::Final {
                if let Some(c) = &capture {
                    kept = c.size()?;
                }
                done.push((start, end));
                failed |= !matches!(outcome, Outcome::Ok);
                shared.ledger.record(&part, &outcome);
                continue;
            }
            // A failed attempt's partial output never appears.
            if let Some(c) = &capture {
                c.discard_from(kept)?;
            }
            let split = if shared.work.splittable {
                split_point(bytes, shared.delimiter)
            } else {
                None
            };
            if let Some(mid) = split {
                // Left half first (it is popped first), so output keeps input order.
                parts.push((start + mid, end, 0));
                parts.push((start, start + mid, 0));
                shared.ledger.retried();
            } else if verdict == Verdict::Retry && !shared.stop.is_stopped() {
                parts.push((start, end, retried + 1));
                shared.ledger.retried();
            } else {
                let records = if batch.records == 0 {
                    0
                } else {
                    count_records(bytes, shared.delimiter)
                };
                shared
                    .ledger
                    .given_up(&Batch { records, ..part }, &outcome, retried + 1);
            }
        }
        shared.input_release.release(batch.seq);
        // Checked before the batch is recorded done: its stdin copy may have come up short.
        if shared.spool.shrank() {
            shared.input_shrank();
            break;
        }

        let piece = match &capture {
            Some(c) => {
                let p = Piece {
                    capture: c.clone(),
                    off: written,
                    len: kept - written,
                };
                written = kept;
                (p.len > 0).then_some(p)
            }
            None => None,
        };
        match shared
            .output
            .complete(batch.seq, piece, DoneSet::of(&done), failed)
        {
            Ok(()) => {}
            Err(EmitError::Closed) => {
                shared.stop.request(StopReason::ReaderGone);
                break;
            }
            Err(EmitError::Io(e)) => {
                shared.stop.request(StopReason::Fatal(format!(
                    "cannot write to standard output: {}",
                    crate::errors::os_message(&e)
                )));
                break;
            }
        }
        if let Some(t) = began {
            shared
                .rings
                .note_busy(node, t.elapsed().as_nanos().min(u64::MAX as u128) as u64);
        }
        if let Some(h) = shared.work.halt
            && shared.ledger.halt_reached(h)
        {
            shared.stop.request(StopReason::Halt { now: h.now });
        }
        if let Some(c) = &capture
            && written > 0
            && c.reset_if_drained()?
        {
            written = 0;
        }
    }
    Ok(())
}

/// Once a batch's command (child or worker shell `pid`, already in its slot) runs: ends it at
/// once if the run is stopping, then feeds it `[start, end)` of the input on its stdin (`-s`)
/// and frees the batch's input when it cannot be needed again.
fn feed_running(
    shared: &Shared,
    pid: libc::pid_t,
    feed: Option<Feed>,
    batch: &Batch,
    (start, end): (u64, u64),
    keep_input: bool,
) -> std::io::Result<()> {
    if shared.stop.is_stopped() && !shared.stop.drains() {
        shared.signal_child(pid, libc::SIGTERM);
    }
    if let Some(feed) = feed {
        let (file, off) = shared.spool.file_at(start);
        match feed.send(file, off, end - start) {
            // The file shrank: the batch is not recorded (the caller checks before).
            Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => shared.spool.mark_shrank(),
            r => r?,
        }
        if !keep_input {
            shared.input_release.release(batch.seq);
        }
    }
    Ok(())
}

/// Starts the batch's command. A file the kernel cannot execute (ENOEXEC: a script without
/// `#!`) runs as `/bin/sh FILE ARGS…`, as `execvp` and xargs do; once one did, every later
/// batch goes to the shell directly.
fn start_command(
    shared: &Shared,
    spawner: &Spawner,
    argv: &Argv,
    sh_argv: &mut Vec<*const libc::c_char>,
) -> std::io::Result<libc::pid_t> {
    let path = shared.work.template.path();
    if !shared.script_via_sh.load(Ordering::Relaxed) {
        match spawner.spawn(path, argv.pointers()) {
            Err(e) if e.raw_os_error() == Some(libc::ENOEXEC) => {
                shared.script_via_sh.store(true, Ordering::Relaxed)
            }
            started => return started,
        }
    }
    sh_argv.clear();
    sh_argv.push(SH.as_ptr());
    sh_argv.push(path.as_ptr());
    sh_argv.extend_from_slice(&argv.pointers()[1..]);
    spawner.spawn(SH, sh_argv).map_err(|e| {
        if e.raw_os_error() == Some(libc::ENOENT) {
            // No shell to run it with: the file stays what the kernel said it is.
            std::io::Error::from_raw_os_error(libc::ENOEXEC)
        } else {
            e
        }
    })
}

/// Where to split a failed part of several records in two: the record boundary nearest its
/// middle (an offset within `bytes`), or None for a single record.
fn split_point(bytes: &[u8], delimiter: u8) -> Option<u64> {
    // The last byte ends the last record; a boundary must have a record after it.
    let body = bytes.get(..bytes.len().checked_sub(1)?)?;
    let mid = body.len() / 2;
    let after = memchr::memchr(delimiter, &body[mid..]).map(|i| mid + i + 1);
    let before = memchr::memrchr(delimiter, &body[..mid]).map(|i| i + 1);
    let at = match (before, after) {
        (Some(b), Some(a)) => {
            if mid - b < a - mid {
                b
            } else {
                a
            }
        }
        (b, a) => a.or(b)?,
    };
    Some(at as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_points_are_record_boundaries_near_the_middle() {
        assert_eq!(split_point(b"a\n", b'\n'), None);
        assert_eq!(split_point(b"abc", b'\n'), None);
        assert_eq!(split_point(b"", b'\n'), None);
        assert_eq!(split_point(b"a\nb\n", b'\n'), Some(2));
        assert_eq!(split_point(b"a\nb", b'\n'), Some(2));
        assert_eq!(split_point(b"1\n2\n3\n4\n", b'\n'), Some(4));
        assert_eq!(split_point(b"long record\nx\n", b'\n'), Some(12));
    }
}
