//! Wording of frun's one-line messages: operating-system errors, and counts with their nouns.

/// A count and its noun, singular for one: `count(1, "batch", "batches")` is "1 batch".
pub fn count(n: u64, one: &str, many: &str) -> String {
    if n == 1 {
        format!("1 {one}")
    } else {
        format!("{n} {many}")
    }
}

/// The error's text without Rust's "(os error N)" suffix: "No such file or directory".
pub use crate::sys::os_message;

/// The name every message starts with (`{PROG}: …` in a format string): `frun`, or the name a
/// drop-in personality was invoked as (GNU xargs prints its own `argv[0]`).
pub static PROG: Prog = Prog;

/// See [`PROG`].
pub struct Prog;

static NAME: std::sync::OnceLock<Box<str>> = std::sync::OnceLock::new();

/// Sets the name messages start with, once, before any thread starts.
pub fn set_program_name(name: &str) {
    let _ = NAME.set(name.into());
}

impl std::fmt::Display for Prog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(NAME.get().map_or("frun", |n| n))
    }
}
