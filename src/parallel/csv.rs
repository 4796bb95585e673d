//! `--csv`: GNU Parallel reads its input as comma-separated values (the separator is
//! `--colsep`'s, when given one byte): each record is a job's values, `{1}`, `{2}`, … its
//! fields. It only turns the option into the engine's setting; the engine's sweep (and, with
//! `--pipe`, its scanner) parses the records.

use super::{Options, refuse};
use crate::invocation::Invocation;

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
