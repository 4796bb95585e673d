//! The command a batch runs, as words: the argument vector's storage ([`words`]), the vector of
//! one batch (`CMD FIXED… rec1 … recN`, or the `{}` templates of `-i`/`-I`: [`argv`]), and the
//! command lines with replacement strings (`{}`, `{.}`, `{#}`, …: [`job`]). It starts nothing.

pub mod argv;
pub mod job;
pub mod words;
