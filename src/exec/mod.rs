//! Backends that run a batch: find the command ([`resolve`]), build its argv ([`argv`], or a GNU Parallel-style line: [`job`]) and
//! start it without a shell ([`spawn`]), feed its stdin ([`stdin`]), or run it in a worker shell
//! of the bash front end ([`shell`]), or call a C plugin's function in a plugin host
//! ([`plugin`], [`plugin_host`]); and make sure nothing they start outlives the run
//! ([`descendants`]).

pub mod argv;
pub mod descendants;
pub mod job;
pub mod plugin;
pub mod plugin_host;
pub mod plugin_wire;
pub mod resolve;
pub mod shell;
pub mod spawn;
pub mod stdin;
pub mod surroundings;
pub mod words;
