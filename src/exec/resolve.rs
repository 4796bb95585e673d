//! Finds the command on disk once, before any work, so "not found" (127) and "not executable"
//! (126) are reported once instead of per batch. Never runs anything.

use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

/// Why a command cannot be run.
#[derive(Debug, PartialEq, Eq)]
pub enum ResolveError {
    /// Exit status 127.
    NotFound(String),
    /// Exit status 126.
    NotExecutable(String),
}

impl ResolveError {
    pub fn status(&self) -> i32 {
        match self {
            ResolveError::NotFound(_) => 127,
            ResolveError::NotExecutable(_) => 126,
        }
    }

    pub fn message(&self) -> &str {
        match self {
            ResolveError::NotFound(m) | ResolveError::NotExecutable(m) => m,
        }
    }
}

fn is_executable_file(p: &Path) -> Result<bool, ()> {
    match std::fs::metadata(p) {
        Err(_) => Err(()),
        Ok(m) if m.is_dir() => Ok(false),
        Ok(m) => {
            let cpath = std::ffi::CString::new(p.as_os_str().as_bytes()).map_err(|_| ())?;
            // SAFETY: access() with a valid NUL-terminated path.
            let ok = unsafe { libc::access(cpath.as_ptr(), libc::X_OK) } == 0;
            Ok(ok && m.permissions().mode() & 0o111 != 0)
        }
    }
}

/// Resolves `name` like `execvp` would: a name with a `/` is used as is, anything else is looked
/// up in `path` (`$PATH`; the default search path when unset).
pub fn resolve(name: &OsStr, path: Option<&OsStr>) -> Result<PathBuf, ResolveError> {
    let shown = name.to_string_lossy();
    if name.as_bytes().contains(&b'/') {
        let p = PathBuf::from(name);
        return match is_executable_file(&p) {
            Ok(true) => Ok(p),
            Ok(false) => Err(ResolveError::NotExecutable(format!(
                "{shown}: Permission denied"
            ))),
            Err(()) => Err(ResolveError::NotFound(format!(
                "{shown}: No such file or directory"
            ))),
        };
    }
    let default: OsString = "/usr/local/bin:/usr/bin:/bin".into();
    let search = path.unwrap_or(&default);
    let mut denied = false;
    for dir in search.as_bytes().split(|&b| b == b':') {
        let dir = if dir.is_empty() {
            Path::new(".")
        } else {
            Path::new(OsStr::from_bytes(dir))
        };
        let candidate = dir.join(name);
        match is_executable_file(&candidate) {
            Ok(true) => return Ok(candidate),
            Ok(false) => denied = true,
            Err(()) => {}
        }
    }
    if denied {
        Err(ResolveError::NotExecutable(format!(
            "{shown}: Permission denied"
        )))
    } else {
        Err(ResolveError::NotFound(format!(
            "{shown}: command not found"
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_and_refuses() {
        let sh = resolve(OsStr::new("sh"), None).unwrap();
        assert!(sh.is_absolute() && sh.ends_with("sh"));
        assert_eq!(
            resolve(OsStr::new("no-such-cmd-frun"), None)
                .unwrap_err()
                .status(),
            127
        );
        assert_eq!(
            resolve(OsStr::new("/etc/passwd"), None)
                .unwrap_err()
                .status(),
            126
        );
        assert_eq!(
            resolve(OsStr::new("/nonexistent/x"), None)
                .unwrap_err()
                .status(),
            127
        );
        assert_eq!(resolve(OsStr::new("/tmp"), None).unwrap_err().status(), 126);
    }
}
