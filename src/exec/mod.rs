//! Backends that run a batch: find the command ([`resolve`]), build its argv ([`argv`]) and
//! start it without a shell ([`spawn`]). Later backends (stdin splice, bash functions, plugins)
//! join them here.

pub mod argv;
pub mod resolve;
pub mod spawn;
pub mod stdin;
