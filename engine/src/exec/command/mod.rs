//! The command a batch runs, as words: the argument vector's storage ([`words`]), the vector of
//! one batch (`CMD FIXED… rec1 … recN`, or the `{}` templates of `-i`/`-I`: [`argv`]), and the
//! command lines with replacement strings (`{}`, `{.}`, `{#}`, …: [`job`]), and the perl process that computes perl replacement strings
//! ([`perl`]). It starts no job.

pub mod argv;
pub mod job;
pub mod perl;
pub mod words;
