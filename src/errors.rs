//! Wording of operating-system errors in frun's one-line messages.

use std::io;

/// The error's text without Rust's "(os error N)" suffix: "No such file or directory".
pub fn os_message(e: &io::Error) -> String {
    let s = e.to_string();
    match s.rfind(" (os error ") {
        Some(i) => s[..i].to_string(),
        None => s,
    }
}
