//! How `frun parallel --pipe` cuts its input when records are counted in lines (`-L N`,
//! `-l N`, `--max-lines N`), as GNU Parallel does: a record is N lines; a job gets `--block`
//! bytes of whole records, or with `-N M` exactly M records (M × N lines).
//!
//! It only chooses the engine's batch kind; it reads no input and must not look at other
//! `--pipe` options.

use frun_engine::plan::config::BatchSpec;

/// The batches of `--pipe` with records of `lines` lines: `per_job` records per job when
/// `-N` (or `-n`) was given, else about `block` bytes of whole records per job.
pub(in crate::parallel) fn batches(lines: u64, per_job: Option<u64>, block: u64) -> BatchSpec {
    let lines = lines.max(1);
    match per_job {
        Some(n) => BatchSpec::Exact(n.max(1).saturating_mul(lines)),
        None if lines == 1 => BatchSpec::Block(block),
        None => BatchSpec::BlockLines {
            bytes: block,
            lines,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_of_lines() {
        assert_eq!(batches(1, None, 9), BatchSpec::Block(9));
        assert_eq!(
            batches(4, None, 9),
            BatchSpec::BlockLines { bytes: 9, lines: 4 }
        );
        assert_eq!(batches(3, Some(2), 9), BatchSpec::Exact(6));
        assert_eq!(batches(0, Some(1), 9), BatchSpec::Exact(1));
    }
}
