//! A worker: claims batches from the ring, runs each through the backend, hands the output to
//! the emitter and the outcome to the ledger — until the ring is done or the run stops.
//!
//! A worker never reads input and never decides batch sizes; it only touches its own batch's
//! bytes, its own capture file and its own child.

use std::sync::atomic::Ordering;

use crate::engine::Shared;
use crate::exec::argv::{Argv, BatchId, shell_quote};
use crate::exec::spawn::{ChildEnd, Spawner, wait_exit, wait_reap};
use crate::exec::stdin::StdinSlot;
use crate::ledger::Outcome;
use crate::output::{Capture, EmitError, Piece, write_all};
use crate::plan::Backend;
use crate::ring::Claim;
use crate::stop::StopReason;

/// Runs worker `index` until there is no more work. Errors stop the whole run.
pub fn run(shared: &Shared, index: usize) {
    if let Err(e) = work(shared, index) {
        shared
            .stop
            .request(StopReason::Fatal(format!("worker {index}: {e}")));
    }
}

fn work(shared: &Shared, index: usize) -> std::io::Result<()> {
    let capture = if shared.output.captures() {
        Some(Capture::new()?)
    } else {
        None
    };
    let stdin_slot = match shared.backend {
        Backend::Stdin => Some(StdinSlot::new()?),
        _ => None,
    };
    let spawner = Spawner::new(
        capture.as_ref().map(|c| c.fd()),
        stdin_slot.as_ref().map(|s| s.fd()).or(shared.child_stdin()),
        &shared.sigmask,
        shared.children_own_group,
    )?;
    let pid_slot = &shared.children[index];
    let mut argv = Argv::default();
    let mut text = Vec::new();
    let mut written = 0u64;
    let mut attempts = 0u64;

    while let Claim::Batch(batch) = shared.ring.claim() {
        if shared.stop.is_stopped() {
            break;
        }
        let bytes = shared.spool.bytes(batch.start, batch.end);
        let id = BatchId {
            node: 0,
            worker: index as u32,
            batch: attempts,
        };
        attempts += 1;
        let arg_bytes = if shared.records_on_stdin {
            &[][..]
        } else {
            bytes
        };
        shared.template.build(arg_bytes, id, &mut argv);
        // Arguments are copies: the input bytes are not needed any more, unless they are fed
        // to the command's stdin below.
        if stdin_slot.is_none() {
            shared.input_release.release(batch.seq);
        }

        let outcome = match shared.backend {
            Backend::DryRun => {
                text.clear();
                for (i, w) in argv.words().enumerate() {
                    if i > 0 {
                        text.push(b' ');
                    }
                    shell_quote(w, &mut text);
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
                        break;
                    }
                    Err(e) => return Err(e),
                }
            }
            Backend::Argv | Backend::Stdin => {
                let feed = match &stdin_slot {
                    Some(slot) => Some(slot.open()?),
                    None => None,
                };
                let spawned = spawner.spawn(shared.template.path(), argv.pointers());
                if let Some(slot) = &stdin_slot {
                    slot.release()?;
                }
                if spawned.is_err() && stdin_slot.is_some() {
                    shared.input_release.release(batch.seq);
                }
                match spawned {
                    Err(e) => Outcome::SpawnFailed(e),
                    Ok(pid) => {
                        pid_slot.store(pid, Ordering::SeqCst);
                        if shared.stop.is_stopped() {
                            shared.signal_child(pid, libc::SIGTERM);
                        }
                        if let Some(feed) = feed {
                            let (file, off) = shared.spool.file_at(batch.start);
                            feed.send(file, off, batch.end - batch.start)?;
                            shared.input_release.release(batch.seq);
                        }
                        let end = wait_exit(pid);
                        // The child is a zombie until reaped: its pid cannot be reused while the
                        // supervisor may still signal it through the slot.
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
        if shared.stop.is_stopped() {
            break;
        }
        if matches!(outcome, Outcome::Signaled(libc::SIGPIPE)) && crate::output::reader_gone(1) {
            shared.stop.request(StopReason::ReaderGone);
            break;
        }

        let piece = match &capture {
            Some(c) => {
                let end = c.size()?;
                let p = Piece {
                    capture: c.clone(),
                    off: written,
                    len: end - written,
                };
                written = end;
                (p.len > 0).then_some(p)
            }
            None => None,
        };
        match shared.output.complete(batch.seq, piece) {
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
        shared.ledger.record(&batch, &outcome);
        if let Some(c) = &capture
            && written > 0
            && c.reset_if_drained()?
        {
            written = 0;
        }
    }
    Ok(())
}
