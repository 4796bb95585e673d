//! Finds the command on disk once, before any work, so "not found" (127) and "not executable"
//! (126) are reported once instead of per batch; and words a failed start that no retry can fix
//! (a missing interpreter is only seen when the command is started). Never runs anything.

use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use crate::sys::exit::ExitCode;

/// Why a command cannot be run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ResolveError {
    /// Exit status 127.
    NotFound(String),
    /// Exit status 126.
    NotExecutable(String),
}

impl ResolveError {
    /// The exit status frun ends with for this error (127 or 126).
    pub fn status(&self) -> ExitCode {
        match self {
            ResolveError::NotFound(_) => ExitCode::NotFound,
            ResolveError::NotExecutable(_) => ExitCode::NotExecutable,
        }
    }

    /// The one-line message, naming the program.
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
            let ok = nix::unistd::access(p, nix::unistd::AccessFlags::X_OK).is_ok();
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

/// The interpreter a `#!` line names, if the file starts with one.
fn interpreter(path: &Path) -> Option<String> {
    use std::io::Read;
    let mut head = [0u8; 256];
    let n = std::fs::File::open(path).ok()?.read(&mut head).ok()?;
    let line = head[..n].strip_prefix(b"#!")?;
    let line = &line[line.iter().position(|&b| b != b' ' && b != b'\t')?..];
    let end = line
        .iter()
        .position(|&b| matches!(b, b' ' | b'\t' | b'\n' | b'\r' | 0))
        .unwrap_or(line.len());
    (end > 0).then(|| String::from_utf8_lossy(&line[..end]).into_owned())
}

/// Why starting `path` (the command the user named `shown`) failed with `err`, when no retry
/// can fix it: the file or its interpreter is missing (127), or cannot be executed (126).
/// None for a failure that may pass (no memory, too many processes, text file busy).
pub fn start_failure(shown: &str, path: &Path, err: &std::io::Error) -> Option<ResolveError> {
    let code = err.raw_os_error()?;
    if !matches!(
        code,
        libc::ENOENT
            | libc::EACCES
            | libc::EPERM
            | libc::ENOEXEC
            | libc::ENOTDIR
            | libc::ELOOP
            | libc::ENAMETOOLONG
            | libc::EISDIR
            | libc::ELIBBAD
    ) {
        return None;
    }
    let why = crate::sys::errors::os_message(err);
    // The file itself is still there and executable: what failed is the interpreter it names.
    let text = match interpreter(path) {
        Some(interp) if is_executable_file(path) == Ok(true) => {
            format!("{shown}: bad interpreter {interp}: {why}")
        }
        _ => format!("{shown}: {why}"),
    };
    Some(if code == libc::ENOENT {
        ResolveError::NotFound(text)
    } else {
        ResolveError::NotExecutable(text)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_and_refuses() {
        let sh = resolve(OsStr::new("sh"), None).unwrap();
        assert!(sh.is_absolute() && sh.ends_with("sh"));
        assert_eq!(
            i32::from(
                resolve(OsStr::new("no-such-cmd-frun"), None)
                    .unwrap_err()
                    .status()
            ),
            127
        );
        assert_eq!(
            i32::from(
                resolve(OsStr::new("/etc/passwd"), None)
                    .unwrap_err()
                    .status()
            ),
            126
        );
        assert_eq!(
            i32::from(
                resolve(OsStr::new("/nonexistent/x"), None)
                    .unwrap_err()
                    .status()
            ),
            127
        );
        assert_eq!(
            i32::from(resolve(OsStr::new("/tmp"), None).unwrap_err().status()),
            126
        );
    }

    #[test]
    fn names_a_missing_interpreter() {
        let dir = tempfile::tempdir().unwrap();
        let script = dir.path().join("s.sh");
        std::fs::write(&script, "#! /nonexistent/bin -x\necho hi\n").unwrap();
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
        let enoent = std::io::Error::from_raw_os_error(libc::ENOENT);
        let e = start_failure("./s.sh", &script, &enoent).unwrap();
        assert_eq!(
            e,
            ResolveError::NotFound(
                "./s.sh: bad interpreter /nonexistent/bin: No such file or directory".into()
            )
        );
        let eacces = std::io::Error::from_raw_os_error(libc::EACCES);
        assert_eq!(
            i32::from(start_failure("x", &script, &eacces).unwrap().status()),
            126
        );
        let gone = dir.path().join("gone");
        assert_eq!(
            start_failure("gone", &gone, &enoent).unwrap().message(),
            "gone: No such file or directory"
        );
        let again = std::io::Error::from_raw_os_error(libc::EAGAIN);
        assert_eq!(start_failure("x", &script, &again), None);
    }
}
