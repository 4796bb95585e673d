//! How much memory the machine has available, as `--memfree` asks: `MemAvailable` in a
//! `/proc/meminfo`-shaped file (the kernel's estimate of what can be allocated without
//! swapping), or, on a kernel too old to give it, what GNU Parallel adds up (`MemFree`,
//! `Buffers`, `Cached`, `SwapCached`).
//!
//! It only reads and parses; it must not block: the file is opened non-blocking and must be a
//! regular file (a FIFO or a device named in its place is refused when the run is planned), and
//! only its first 64 KiB are read.

use std::path::{Path, PathBuf};

/// Where the available memory is read.
#[derive(Clone, Debug)]
pub struct MemorySource {
    path: PathBuf,
}

/// The kernel's file, read where no other is named.
pub const MEMINFO: &str = "/proc/meminfo";

/// The most of the file that is read (the kernel's is under 2 KiB).
const MOST: u64 = 64 * 1024;

impl MemorySource {
    /// The file at `path`, which must be a regular file with a `MemAvailable:` (or `MemFree:`)
    /// line now; the error is a sentence for the user.
    pub fn open(path: &Path) -> Result<MemorySource, String> {
        let src = MemorySource { path: path.into() };
        let text = src.read().map_err(|e| {
            format!(
                "cannot read the memory available from {}: {e}",
                path.display()
            )
        })?;
        match available_in(&text) {
            Some(_) => Ok(src),
            None => Err(format!(
                "cannot read the memory available from {}: no MemAvailable: or MemFree: line \
                 in kB",
                path.display()
            )),
        }
    }

    fn read(&self) -> Result<Vec<u8>, String> {
        crate::sys::read_regular(&self.path, MOST).map_err(|e| crate::sys::errors::os_message(&e))
    }

    /// The bytes available now; None when the file cannot be read or parsed any more.
    pub fn available(&self) -> Option<u64> {
        available_in(&self.read().ok()?)
    }
}

/// The bytes available according to a meminfo text.
fn available_in(text: &[u8]) -> Option<u64> {
    let mut sum: Option<u64> = None;
    for line in text.split(|&b| b == b'\n') {
        let Some(colon) = memchr::memchr(b':', line) else {
            continue;
        };
        let (key, rest) = (&line[..colon], &line[colon + 1..]);
        let kib = || -> Option<u64> {
            let s = std::str::from_utf8(rest).ok()?.trim();
            let n = s.strip_suffix("kB").unwrap_or(s).trim();
            n.parse::<u64>().ok()
        };
        match key {
            b"MemAvailable" => return kib().map(|k| k.saturating_mul(1024)),
            b"MemFree" | b"Buffers" | b"Cached" | b"SwapCached" => {
                if let Some(k) = kib() {
                    sum = Some(sum.unwrap_or(0).saturating_add(k.saturating_mul(1024)));
                }
            }
            _ => {}
        }
    }
    sum
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mem_available_is_taken_else_gnu_parallels_sum() {
        let linux = b"MemTotal:       24000000 kB\nMemFree:         1000 kB\n\
                      MemAvailable:   20000000 kB\nBuffers:          10 kB\nCached:  5 kB\n";
        assert_eq!(available_in(linux), Some(20_000_000 * 1024));
        let old = b"MemTotal: 100 kB\nMemFree: 40 kB\nBuffers: 2 kB\nCached: 3 kB\n\
                    SwapCached: 1 kB\nSwapFree: 1000 kB\n";
        assert_eq!(available_in(old), Some(46 * 1024));
        assert_eq!(available_in(b"nothing here\n"), None);
        assert_eq!(available_in(b"MemAvailable: lots\n"), None);
    }

    #[test]
    fn only_a_regular_file_with_a_figure_is_a_source() {
        let dir = tempfile::tempdir().unwrap();
        let good = dir.path().join("meminfo");
        std::fs::write(&good, "MemAvailable: 2048 kB\n").unwrap();
        let src = MemorySource::open(&good).unwrap();
        assert_eq!(src.available(), Some(2048 * 1024));
        std::fs::write(&good, "MemAvailable: 1 kB\n").unwrap();
        assert_eq!(src.available(), Some(1024), "read afresh each time");
        let fifo = dir.path().join("fifo");
        nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::S_IRWXU).unwrap();
        let e = MemorySource::open(&fifo).unwrap_err();
        assert!(e.contains("not a regular file"), "{e}");
        let e = MemorySource::open(dir.path()).unwrap_err();
        assert!(e.contains("not a regular file"), "{e}");
        std::fs::write(&good, "Hello\n").unwrap();
        assert!(
            MemorySource::open(&good)
                .unwrap_err()
                .contains("no MemAvailable")
        );
        assert!(MemorySource::open(&dir.path().join("none")).is_err());
    }
}
