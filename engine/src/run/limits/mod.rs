//! What ends a running command before it ends by itself: its time (`--job-timeout`,
//! [`timeouts`]) and the machine's memory (`--memfree`, [`memory`]). The supervisor's
//! `timeouts::Enforcer` does the ending for both; nothing here decides a batch's fate.

pub(in crate::run) mod memory;
pub(in crate::run) mod timeouts;
