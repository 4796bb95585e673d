//! What limits running commands besides the workers there are: their time (`--job-timeout`,
//! [`timeouts`]), the machine's memory (`--memfree`, [`memory`]) and a number of jobs read
//! from a file (`-j FILE`, [`jobs`]). The supervisor's `timeouts::Enforcer` does the ending;
//! nothing here decides a batch's fate.

pub(in crate::run) mod jobs;
pub(in crate::run) mod memory;
pub(in crate::run) mod timeouts;
