//! `frun parallel --files`: a job's output is kept in a new file of its own and the file's
//! name is what the job prints. Files are created safely: a fresh name in the chosen
//! directory, `O_CREAT | O_EXCL | O_NOFOLLOW` (never an existing file or a link), mode 0600.
//! They are the run's output, so the run leaves them for the user to read and remove.
//!
//! It only writes those files; it does not decide which jobs' output goes there.

use std::io::{self, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// Letters of a file name's random part.
const LETTERS: &[u8] = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";

/// Tells names apart within one process even when the clock does not move.
static COUNTER: AtomicU64 = AtomicU64::new(0);

/// Writes `bytes` to a new file `DIR/parXXXXX.par` and returns its name.
pub fn keep(dir: &Path, bytes: &[u8]) -> io::Result<PathBuf> {
    let (mut file, path) = create(dir)?;
    if let Err(e) = file.write_all(bytes) {
        let _ = std::fs::remove_file(&path);
        return Err(e);
    }
    Ok(path)
}

/// A new, empty file of a name nobody had, in `dir`.
fn create(dir: &Path) -> io::Result<(std::fs::File, PathBuf)> {
    for _ in 0..100 {
        let path = dir.join(fresh_name());
        match std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
            .open(&path)
        {
            Ok(f) => return Ok((f, path)),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(e),
        }
    }
    Err(io::Error::new(
        io::ErrorKind::AlreadyExists,
        "no free file name",
    ))
}

/// `parXXXXX.par` (the length of GNU Parallel's names, which scripts match): five letters
/// from the clock, the process and a counter, mixed.
fn fresh_name() -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    // splitmix64 of the three: names are not guessable from the pid alone.
    let mut x =
        nanos ^ (u64::from(std::process::id()) << 32) ^ n.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^= x >> 31;
    let mut name = String::from("par");
    for _ in 0..5 {
        name.push(LETTERS[(x % LETTERS.len() as u64) as usize] as char);
        x /= LETTERS.len() as u64;
    }
    name.push_str(".par");
    name
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn each_file_is_new_private_and_holds_the_bytes() {
        let dir = tempfile::tempdir().unwrap();
        let a = keep(dir.path(), b"one\n").unwrap();
        let b = keep(dir.path(), b"two\n").unwrap();
        assert_ne!(a, b);
        assert_eq!(std::fs::read(&a).unwrap(), b"one\n");
        assert_eq!(std::fs::read(&b).unwrap(), b"two\n");
        let mode = std::fs::metadata(&a).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        assert_eq!(a.parent(), Some(dir.path()));
    }

    #[test]
    fn a_missing_directory_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        assert!(keep(&dir.path().join("absent"), b"x").is_err());
    }
}
