//! The input stage: the spool that holds the input's bytes ([`spool`]), and the scanner that
//! finds its records and cuts them into batches ([`scan`]), with the rules that say where a
//! record ends ([`records`], [`arguments`]); the header a `--pipe` job gets first ([`head`]) and which share of it this task takes ([`shard`]).
//! It runs no command and writes no output.

pub mod arguments;
pub mod head;
pub mod records;
pub mod scan;
pub mod shard;
pub mod spool;
pub mod used;

// The record rules keep their paths (`input::bounds`, …) for the stages and front ends.
pub use records::{blank, bounds, csv, group};

/// A pass that produces the run's input as the run reads it (on a thread of its own).
pub type Feeder = Box<dyn FnOnce() -> Result<(), String> + Send>;
