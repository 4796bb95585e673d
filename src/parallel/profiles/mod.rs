//! Where GNU Parallel's options come from besides the command line: profile files (`-J`,
//! `config`; [`profile`]) and `$PARALLEL`, read as shell words ([`env`]).

pub(super) mod env;
pub(super) mod profile;
