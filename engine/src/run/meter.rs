//! Wires the progress line to a run: what total the input gives before it is read, and what the
//! meter reads each tick (the ledger's records done, the workers running, the scanner's totals
//! once it is done). It starts the meter; it draws nothing itself and adds nothing to any
//! worker's or the scanner's path.

use std::fs::File;
use std::os::fd::AsFd;
use std::sync::Arc;
use std::sync::atomic::Ordering;

use nix::unistd::{Whence, lseek};

use super::Shared;
use crate::input::scan::{Settings as ScanSettings, Sizing};
use crate::output::progress::{Counts, Source, Total};

/// What the input says about the run's total, learned before the spool takes the input: a
/// regular file's records are counted (its chunks, with `-b`, follow from its size). A sharded
/// or resumed run does only part of the input: its total is known once its scan is done.
pub(super) fn total_of(input: &File, scan: &ScanSettings, resuming: bool) -> Total {
    let Ok(meta) = input.metadata() else {
        return Total::Unknown;
    };
    if !meta.file_type().is_file() || scan.shard.is_some() || resuming {
        return Total::Unknown;
    }
    let size = meta.len();
    let from = lseek(input.as_fd(), 0, Whence::SeekCur).map_or(0, |p| (p.max(0) as u64).min(size));
    match scan.sizing {
        Sizing::Bytes(n) => Total::Known((size - from).div_ceil(n.max(1))),
        _ => match input.try_clone() {
            Ok(file) => Total::Count {
                file,
                from,
                delimiter: scan.delimiter,
            },
            Err(_) => Total::Unknown,
        },
    }
}

/// Where the meter's figures come from in this run.
pub(super) fn source(shared: &Arc<Shared>, scan: &ScanSettings, total: Total) -> Source {
    let shared = Arc::clone(shared);
    Source {
        unit: if matches!(scan.sizing, Sizing::Bytes(_)) {
            "chunks"
        } else {
            "records"
        },
        total,
        limit: scan.limit,
        read: Box::new(move || Counts {
            done: shared.ledger.records(),
            workers: shared.workers_live.load(Ordering::Relaxed),
            // A scan that a stop cut short counted only part of the input.
            total: if shared.scan_done.load(Ordering::Acquire) && !shared.stop.is_stopped() {
                match &*shared.scan_totals.lock().unwrap_or_else(|e| e.into_inner()) {
                    Some(Ok(t)) => Some(t.records),
                    _ => None,
                }
            } else {
                None
            },
        }),
    }
}
