//! The input stage: the spool that holds the input's bytes ([`spool`]), and the scanner that
//! finds its records and cuts them into batches ([`scan`]), with the rules that say where a
//! record ends ([`bounds`], [`arguments`]), the blank lines `--pipe -r` drops ([`blank`]) and which share of it this task takes ([`shard`]).
//! It runs no command and writes no output.

pub mod arguments;
pub mod blank;
pub mod bounds;
pub mod csv;
pub mod scan;
pub mod shard;
pub mod spool;
