//! The integration suites, built and linked as one test binary (one link instead of one per
//! suite). Each suite is a module named after its file, so a test's name is `suite::test` and
//! `cargo test --test tests -- records::` runs one suite. It holds only suites; helpers shared by
//! them live in `common`. `memory.rs` is not here: it measures the machine's shared memory, so
//! no other test may run beside it, and it stays a binary of its own.

// Test binaries export nothing: `pub` in their modules only shares helpers between them.
#![allow(unreachable_pub)]

mod common;

mod checkpoint_safety;
mod children;
mod cli;
mod cli_hardening;
mod crash_corrupt;
mod differential;
mod faults;
mod gnu_suite;
mod input_faults;
mod joblog;
mod line_buffer;
mod numa;
mod output;
mod parallel;
mod parallel_results;
mod plugins;
mod progress;
mod properties;
mod records;
mod refusals;
mod resume;
mod retries;
mod shard;
mod share;
mod streams;
mod sweeps;
mod xargs;
mod xargs_findutils;
