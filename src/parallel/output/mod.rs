//! Where GNU Parallel's jobs' output goes besides stdout: `--files`, `--tmpdir` and
//! `--compress` ([`storage`]), and `--results` as a directory or a table ([`table`]).

pub(super) mod storage;
pub(super) mod table;
