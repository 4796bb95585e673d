//! `frun parallel --results DIR --compress`: a job's stdout and stderr files hold what a
//! compression program (GNU Parallel's `--compress-program`, run by `/bin/sh`) makes of them.
//!
//! It only runs that program on bytes it is given and returns its output; it writes no file.

use std::io::{self, Read, Write};
use std::os::unix::ffi::OsStrExt;
use std::process::{Command, Stdio};

/// What `program` (a shell command line reading stdin, writing stdout) writes when fed
/// `data`. Empty data stays empty (GNU Parallel leaves an empty file as it is). The error says
/// why, in one line.
pub fn compressed(program: &[u8], data: &[u8]) -> Result<Vec<u8>, String> {
    if data.is_empty() {
        return Ok(Vec::new());
    }
    let shown = String::from_utf8_lossy(program);
    let failed = |e: io::Error| {
        format!(
            "--compress: cannot run '{shown}': {}",
            crate::sys::errors::os_message(&e)
        )
    };
    let mut child = Command::new("/bin/sh")
        .arg("-c")
        .arg(std::ffi::OsStr::from_bytes(program))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .map_err(failed)?;
    let mut stdin = child.stdin.take();
    let mut stdout = child.stdout.take();
    let out = std::thread::scope(|s| {
        // Fed on a thread of its own: the program may write before it has read everything.
        let feeder = s.spawn(move || {
            if let Some(mut w) = stdin.take() {
                // A program that stops reading early ends the feeding; its status tells.
                let _ = w.write_all(data);
            }
        });
        let mut out = Vec::new();
        let read = match stdout.as_mut() {
            Some(r) => r.read_to_end(&mut out).map(|_| ()),
            None => Ok(()),
        };
        let _ = feeder.join();
        read.map(|()| out)
    })
    .map_err(failed)?;
    let status = child.wait().map_err(failed)?;
    if !status.success() {
        return Err(format!("--compress: '{shown}' failed ({status})"));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_program_filters_the_bytes() {
        assert_eq!(compressed(b"tr a b", b"aaa").unwrap(), b"bbb");
        assert_eq!(compressed(b"false", b"").unwrap(), b"");
        assert!(compressed(b"false", b"x").is_err());
    }
}
