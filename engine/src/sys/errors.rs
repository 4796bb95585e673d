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
