//! `--pipe` and `--pipepart` beyond blocks of lines: records of N lines ([`pipe_lines`]), groups
//! of lines with one key ([`group_by`]), boundaries found by regular expressions ([`regexp`])
//! and all of the input to every job ([`tee`]). Each turns options into the engine's settings;
//! none reads input or runs a job.

pub(super) mod group_by;
pub(super) mod pipe_lines;
pub(super) mod regexp;
pub mod tee;
