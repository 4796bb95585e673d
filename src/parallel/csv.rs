//! `--csv`: GNU Parallel reads its input as comma-separated values (the separator is
//! `--colsep`'s, when given one byte): each record is a job's values, `{1}`, `{2}`, … its
//! fields. It only turns the option into the engine's setting; the engine's sweep (and, with
//! `--pipe`, its scanner) parses the records.

use super::{Options, refuse};
use crate::invocation::Invocation;
use frun_engine::input::bounds::RecordBounds;
use frun_engine::plan::config::BatchSpec;

/// The separator of `--csv`'s fields (None without `--csv`); `--colsep` is taken over by it.
pub(super) fn separator(o: &mut Options) -> Result<Option<u8>, Invocation> {
    if !o.csv {
        return Ok(None);
    }
    match o.colsep.take().as_deref().map(str::as_bytes) {
        None => Ok(Some(b',')),
        Some([b]) => Ok(Some(*b)),
        Some(_) => Err(refuse(
            "--csv with a --colsep of more than one character is not supported by frun parallel",
        )),
    }
}

/// `--pipe --csv`: blocks of `--block` bytes (1 MB without it) cut between whole CSV records
/// (a newline inside double quotes ends none).
pub(super) fn pipe_batches(o: &mut Options) -> Result<BatchSpec, Invocation> {
    if o.recstart.is_some() || o.recend.is_some() {
        return Err(refuse(
            "--csv cannot be combined with --recstart or --recend",
        ));
    }
    if o.pipepart || o.per_job.is_some() {
        return Err(refuse(
            "--pipe --csv is supported with --block only in frun parallel (not --pipepart, -N)",
        ));
    }
    o.cfg.delimiter = b'\n';
    o.cfg.record_bounds = Some(RecordBounds::Csv);
    o.cfg.grow_blocks = true;
    Ok(BatchSpec::Block(
        o.block.filter(|&b| b > 0).unwrap_or(1 << 20),
    ))
}
