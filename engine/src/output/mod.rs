//! The output stage: what a run writes besides its commands' own output — each batch's captured
//! output emitted whole or in order ([`emit`], [`linebuf`]) and coloured ([`colour`]), the results directory
//! ([`results`]), the joblog ([`joblog`]), the progress line ([`progress`]) and the summary
//! ([`stats`]). It decides nothing about which batch runs.

pub mod colour;
pub mod emit;
pub mod joblog;
pub mod latest;
pub mod linebuf;
pub mod progress;
pub mod results;
pub mod stats;
