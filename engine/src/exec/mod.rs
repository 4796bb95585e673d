//! Backends that run a batch: find the command ([`resolve`]), build its argv ([`command`]) and
//! start it without a shell ([`spawn`]), feed its stdin ([`stdin`]), or run it in a worker shell
//! of the bash front end ([`shell`]), or call a C plugin's function in a plugin host
//! ([`plugin`]); and make sure nothing they start outlives the run
//! ([`descendants`]).

pub mod command;
pub mod descendants;
pub mod plugin;
pub mod resolve;
pub mod shell;
pub mod spawn;
pub mod stdin;
pub mod surroundings;
