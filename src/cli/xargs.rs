//! `frun xargs …`: GNU findutils xargs' command line turned into a [`Config`] for frun's
//! engine. It reads no file and starts nothing.

use std::ffi::{OsStr, OsString};

use super::Invocation;
use crate::exit::ExitCode;

/// Parses the words after `xargs`.
pub fn parse(_args: &[OsString]) -> Invocation {
    Invocation::Refuse {
        message: "xargs: this personality is not built yet".into(),
        status: ExitCode::Passed(1),
    }
}

/// Whether `w` is `xargs` (how the personality is named on the command line or as a link).
pub fn is_name(w: &OsStr) -> bool {
    w == "xargs"
}
