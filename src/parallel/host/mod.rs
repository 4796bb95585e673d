//! Where and how GNU Parallel's jobs run on this machine: its CPU counts (`--number-of-*`,
//! [`cpus`]), each job's directory, niceness and load limit ([`place`]), and the counting
//! semaphore of `sem` ([`semaphore`]).

pub(super) mod cpus;
pub(super) mod place;
pub(super) mod semaphore;
