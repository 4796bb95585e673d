//! Round robin (GNU Parallel's `--round-robin --pipe`): one command per worker, each fed
//! every N-th batch on its stdin (N workers), in turn, until the input ends. The first N
//! batches start the commands as usual; every later batch goes into the stdin of the
//! command whose first batch had the same number modulo N, and counts as done with no output
//! of its own (the command's output is its first batch's).
//!
//! It only takes turns at claiming, copies bytes and marks batches done; it never starts a
//! command and never reads what one prints.

use std::io;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use crate::dispatch::ring::Claim;
use crate::exec::stdin::Feed;
use crate::output::emit::{DoneSet, Finished};
use crate::run::Shared;

/// How long a published batch waits for its lane before another lane takes it.
const TURN_WAIT: Duration = Duration::from_millis(100);

/// The same for one of the first batches, each of which starts its lane's command (and gives
/// it its `{#}`). It waits for a worker that can exist however busy the machine is (the plan
/// starts every worker of a round-robin run as soon as there is a batch for it); a worker
/// that cannot be started or has left (the cap fell, `-j FILE` lowered) gives its turn away
/// at once. This is only the last resort against a worker held before its first claim
/// (`--delay`, `--memfree`) for longer than any input should wait.
const FIRST_TURN_WAIT: Duration = Duration::from_secs(60);

/// The turn-taking of a round-robin run.
pub struct Lanes {
    /// Commands (workers) the batches are dealt to.
    lanes: u64,
    /// Batches claimed so far: the lane `turn % lanes` claims next.
    turn: AtomicU64,
}

impl Lanes {
    /// Batches dealt to `lanes` commands.
    pub fn new(lanes: usize) -> Lanes {
        Lanes {
            lanes: lanes.max(1) as u64,
            turn: AtomicU64::new(0),
        }
    }

    /// A batch was claimed.
    pub fn claimed(&self) {
        self.turn.fetch_add(1, Ordering::SeqCst);
    }
}

/// After the command that got batch `first` and its bytes: feeds it the batches of its lane
/// as they come, each marked done, until the input ends or the run stops. `alive`: the
/// command still reads (once it stops, its lane's batches are still taken and dropped).
pub(super) fn feed_lane(
    shared: &Shared,
    lanes: &Lanes,
    node: usize,
    feed: &Feed,
    first: u64,
    mut alive: bool,
) -> io::Result<()> {
    let lane = first % lanes.lanes;
    let mut pause = Duration::from_micros(20);
    let mut waited = Instant::now();
    loop {
        if shared.stop.is_stopped() {
            return Ok(());
        }
        // Not this lane's turn: wait, unless a published batch waited for its lane too long
        // (that lane's worker is busy or cannot start): then this one takes it. The first
        // batches are the workers' own claims, never a lane's turn: a worker that counted its
        // claim before another that claimed earlier would see its lane's number come up.
        let turn = lanes.turn.load(Ordering::SeqCst);
        let opening = turn < lanes.lanes;
        if opening || turn % lanes.lanes != lane {
            if shared.rings.drained() {
                return Ok(());
            }
            if shared.rings.backlog() == 0 {
                waited = Instant::now();
            }
            let limit = if !opening {
                TURN_WAIT
            } else if turn < shared.workers_possible() as u64 {
                FIRST_TURN_WAIT
            } else {
                Duration::ZERO
            };
            if shared.rings.backlog() == 0 || waited.elapsed() <= limit {
                std::thread::sleep(pause);
                pause = (pause * 2).min(Duration::from_millis(2));
                continue;
            }
        }
        pause = Duration::from_micros(20);
        waited = Instant::now();
        let Claim::Batch(batch) = shared.rings.claim(node, true) else {
            return Ok(());
        };
        lanes.claimed();
        if alive {
            let (file, off) = shared.spool.file_at(batch.start);
            let sent = if shared.work.drop_blank {
                let runs =
                    crate::input::blank::kept_runs(shared.spool.bytes(batch.start, batch.end));
                feed.send_runs(file, off, runs)
            } else {
                feed.send(file, off, batch.end - batch.start)
            };
            match sent {
                Ok(more) => alive = more,
                Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => {
                    shared.spool.mark_shrank();
                    alive = false;
                }
                Err(e) => return Err(e),
            }
        }
        shared.input_release.release(batch.seq);
        let done = Finished {
            seq: batch.seq,
            piece: None,
            done: DoneSet::of(&[(batch.start, batch.end)]),
            failed: false,
            log: None,
        };
        if let Err(e) = shared.output.complete(done) {
            shared
                .stop
                .request(crate::run::stop::emit_stop(e, "standard output"));
            return Ok(());
        }
    }
}
