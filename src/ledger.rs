//! The ledger: what happened to every batch — done, failed and how — and the failure summary
//! that decides exit status 123.
//!
//! Workers and the scanner report here; nothing here runs commands or writes output. (Retries,
//! poisoning and the checkpoint journal will live here too.)

use std::io;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::ring::Batch;

/// How one batch ended.
#[derive(Debug)]
pub enum Outcome {
    Ok,
    /// The command exited with this non-zero status.
    Exited(i32),
    /// The command was killed by this signal.
    Signaled(i32),
    /// The command could not be started.
    SpawnFailed(io::Error),
}

#[derive(Default)]
struct FirstFailure {
    text: Option<String>,
}

/// Counters and the first failure, shared by all workers.
#[derive(Default)]
pub struct Ledger {
    batches: AtomicU64,
    records: AtomicU64,
    exited: AtomicU64,
    signaled: AtomicU64,
    spawn_failed: AtomicU64,
    oversized: AtomicU64,
    first: Mutex<FirstFailure>,
}

/// Describes a signal: "signal 11 (Segmentation fault)".
pub fn signal_text(sig: i32) -> String {
    // SAFETY: strsignal returns a pointer to a static or thread-local string, read at once.
    let name = unsafe {
        let p = libc::strsignal(sig);
        if p.is_null() {
            String::new()
        } else {
            std::ffi::CStr::from_ptr(p).to_string_lossy().into_owned()
        }
    };
    format!("signal {sig} ({name})")
}

impl Ledger {
    fn note_first(&self, text: String) {
        let mut f = self.first.lock().unwrap_or_else(|e| e.into_inner());
        if f.text.is_none() {
            f.text = Some(text);
        }
    }

    /// Records a finished batch.
    pub fn record(&self, batch: &Batch, outcome: &Outcome) {
        self.batches.fetch_add(1, Ordering::Relaxed);
        self.records.fetch_add(batch.records, Ordering::Relaxed);
        let place = || {
            format!(
                "batch {} (input offset {}, {} records)",
                batch.seq, batch.start, batch.records
            )
        };
        match outcome {
            Outcome::Ok => {}
            Outcome::Exited(code) => {
                self.exited.fetch_add(1, Ordering::Relaxed);
                self.note_first(format!("{}: exit status {code}", place()));
            }
            Outcome::Signaled(sig) => {
                self.signaled.fetch_add(1, Ordering::Relaxed);
                let text = format!("{}: killed by {}", place(), signal_text(*sig));
                eprintln!("frun: {text}");
                self.note_first(text);
            }
            Outcome::SpawnFailed(e) => {
                self.spawn_failed.fetch_add(1, Ordering::Relaxed);
                let text = format!(
                    "{}: could not start the command: {}",
                    place(),
                    crate::errors::os_message(e)
                );
                eprintln!("frun: {text}");
                self.note_first(text);
            }
        }
    }

    /// Records a record too long to be an argument (it is reported and skipped).
    pub fn oversized(&self, offset: u64, len: u64, max: u64) {
        self.oversized.fetch_add(1, Ordering::Relaxed);
        let text = format!(
            "record at input offset {offset} is {len} bytes, longer than the {max}-byte \
             argument limit; skipped (pass long records on stdin instead)"
        );
        eprintln!("frun: {text}");
        self.note_first(text);
    }

    pub fn batches(&self) -> u64 {
        self.batches.load(Ordering::Relaxed)
    }

    pub fn records(&self) -> u64 {
        self.records.load(Ordering::Relaxed)
    }

    pub fn failed_batches(&self) -> u64 {
        self.exited.load(Ordering::Relaxed)
            + self.signaled.load(Ordering::Relaxed)
            + self.spawn_failed.load(Ordering::Relaxed)
    }

    /// The one-line failure summary, or None when everything succeeded.
    pub fn summary(&self) -> Option<String> {
        let failed = self.failed_batches();
        let oversized = self.oversized.load(Ordering::Relaxed);
        if failed == 0 && oversized == 0 {
            return None;
        }
        let mut parts = Vec::new();
        let exited = self.exited.load(Ordering::Relaxed);
        let signaled = self.signaled.load(Ordering::Relaxed);
        let spawn = self.spawn_failed.load(Ordering::Relaxed);
        if exited > 0 {
            parts.push(format!("{exited} exited non-zero"));
        }
        if signaled > 0 {
            parts.push(format!("{signaled} killed by a signal"));
        }
        if spawn > 0 {
            parts.push(format!("{spawn} could not start"));
        }
        let mut s = String::new();
        if failed > 0 {
            s = format!(
                "{failed} of {} batches failed ({})",
                self.batches(),
                parts.join(", ")
            );
        }
        if oversized > 0 {
            if !s.is_empty() {
                s += "; ";
            }
            s += &match oversized {
                1 => "1 record too long to pass as an argument was skipped".to_string(),
                n => format!("{n} records too long to pass as an argument were skipped"),
            };
        }
        let first = self.first.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(t) = &first.text {
            s += &format!("; first: {t}");
        }
        Some(s)
    }
}

/// Which batches' input bytes are no longer needed (their argv is built, or their bytes were
/// fed to the command), so the spool may free them. One slot per sequence number modulo the
/// capacity; the scanner never lets more than `capacity` batches be outstanding, so slots are
/// not reused while still meaningful.
pub struct InputRelease {
    slots: Box<[AtomicU64]>,
}

impl InputRelease {
    pub fn new(capacity: usize) -> InputRelease {
        InputRelease {
            slots: (0..capacity.next_power_of_two())
                .map(|_| AtomicU64::new(0))
                .collect(),
        }
    }

    /// How many batches may be outstanding at once.
    pub fn capacity(&self) -> u64 {
        self.slots.len() as u64
    }

    fn slot(&self, seq: u64) -> &AtomicU64 {
        &self.slots[(seq as usize) & (self.slots.len() - 1)]
    }

    /// Batch `seq` no longer needs its input bytes.
    pub fn release(&self, seq: u64) {
        self.slot(seq).store(seq + 1, Ordering::Release);
    }

    pub fn is_released(&self, seq: u64) -> bool {
        self.slot(seq).load(Ordering::Acquire) == seq + 1
    }
}
