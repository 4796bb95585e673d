//! An iterator source (a generator, say) read on a thread of its own. The caller's serving
//! loop must never wait inside the iterator's `next()`: while a generator sleeps or waits for
//! its own input, the results of the records it already gave must still reach the caller, as
//! `(echo a; sleep 2; echo b) | frun echo` prints `a` at once.
//!
//! The thread encodes each item into a record as soon as it comes and appends it to a shared
//! buffer (a lock and a copy per item, no system call unless the buffer was empty); the caller
//! takes the whole buffer when the engine can read more. It only produces records: it must not
//! touch the engine, the workers or the results.

use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};

use pyo3::prelude::*;
use pyo3::types::PyIterator;

use crate::options::Options;
use crate::text::{check_one_record_each, push_record};

/// Records the thread may hold before it waits for the caller to take them.
const HELD_BYTES: usize = 4 << 20;
/// Items the thread takes between two moments it lets other threads have the GIL (an iterator
/// written in C runs no bytecode, so the interpreter would not switch on its own).
const ITEMS_PER_GIL_HOLD: usize = 256;

/// What the thread hands over.
#[derive(Default)]
struct State {
    records: Vec<u8>,
    ended: bool,
    error: Option<PyErr>,
}

struct Shared {
    state: Mutex<State>,
    /// Signalled when the caller took the records (room for more), or the feeder must stop.
    room: Condvar,
    stop: AtomicBool,
    /// The write end of the wake-up pipe: one byte when records arrive in an empty buffer,
    /// and at the end.
    wake: OwnedFd,
}

impl Shared {
    fn locked(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn poke(&self) {
        // A full pipe already says there is something to take.
        let _ = nix::unistd::write(&self.wake, b"x");
    }
}

/// What [`Feeder::take`] found.
pub(crate) enum Taken {
    /// Records were appended (maybe none yet: wait on [`Feeder::fd`]).
    More,
    /// The iterator ended and everything was taken.
    End,
}

/// The reading thread, as the caller sees it.
pub(crate) struct Feeder {
    shared: Arc<Shared>,
    /// Readable when there may be records to take, or the iterator ended.
    wake: OwnedFd,
}

impl Feeder {
    /// Starts the thread over `items`.
    pub(crate) fn start(items: Py<PyIterator>, opts: &Options) -> PyResult<Feeder> {
        let (read, write) =
            nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC | nix::fcntl::OFlag::O_NONBLOCK)
                .map_err(|e| pyo3::exceptions::PyOSError::new_err(format!("frun: {e}")))?;
        let shared = Arc::new(Shared {
            state: Mutex::new(State::default()),
            room: Condvar::new(),
            stop: AtomicBool::new(false),
            wake: write,
        });
        let theirs = Arc::clone(&shared);
        let opts = opts.clone();
        std::thread::Builder::new()
            .name("frun-source".into())
            .spawn(move || read_items(&theirs, &items, &opts))
            .map_err(|e| pyo3::exceptions::PyOSError::new_err(format!("frun: {e}")))?;
        Ok(Feeder { shared, wake: read })
    }

    /// The descriptor to wait on for records.
    pub(crate) fn fd(&self) -> RawFd {
        self.wake.as_raw_fd()
    }

    /// Appends the records read so far to `into`; the iterator's exception, once it raised.
    pub(crate) fn take(&self, into: &mut Vec<u8>) -> PyResult<Taken> {
        let mut drained = [0u8; 64];
        while nix::unistd::read(&self.wake, &mut drained).is_ok_and(|n| n > 0) {}
        let mut state = self.shared.locked();
        if let Some(e) = state.error.take() {
            return Err(e);
        }
        if state.records.is_empty() {
            return Ok(if state.ended { Taken::End } else { Taken::More });
        }
        into.append(&mut state.records);
        if state.ended {
            // Its wake-up was drained above: the caller must come back for the end.
            self.shared.poke();
        }
        drop(state);
        self.shared.room.notify_one();
        Ok(Taken::More)
    }
}

impl Drop for Feeder {
    /// The thread stops at its next item; one waiting inside `next()` ends when that returns.
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::Release);
        self.shared.room.notify_one();
    }
}

/// The thread: reads `items` until they end, an item is refused, or the caller is gone.
fn read_items(shared: &Shared, items: &Py<PyIterator>, opts: &Options) {
    let outcome = Python::attach(|py| -> PyResult<()> {
        let mut it = items.bind(py).clone();
        let mut record = Vec::new();
        let mut held = 0usize;
        while !shared.stop.load(Ordering::Acquire) {
            let Some(item) = it.next() else { break };
            record.clear();
            push_record(&mut record, &item?, opts)?;
            check_one_record_each(&record, 1, opts.delimiter)?;
            let mut state = shared.locked();
            let was_empty = state.records.is_empty();
            state.records.extend_from_slice(&record);
            if was_empty {
                shared.poke();
            }
            let full = state.records.len() >= HELD_BYTES;
            drop(state);
            if full {
                // Back-pressure: wait (without the GIL) until the caller takes them.
                py.detach(|| {
                    let mut state = shared.locked();
                    while state.records.len() >= HELD_BYTES && !shared.stop.load(Ordering::Acquire)
                    {
                        state = shared.room.wait(state).unwrap_or_else(|e| e.into_inner());
                    }
                });
            }
            held += 1;
            if held == ITEMS_PER_GIL_HOLD {
                held = 0;
                py.detach(std::thread::yield_now);
            }
        }
        Ok(())
    });
    let mut state = shared.locked();
    state.ended = true;
    state.error = outcome.err();
    drop(state);
    shared.poke();
}
