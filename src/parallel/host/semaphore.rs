//! `frun parallel --semaphore` (GNU Parallel's `sem`): runs one command line under a counting
//! semaphore shared by every frun started with the same `--id`, in the background unless
//! `--fg`; `--wait` waits until no command of that id runs.
//!
//! The semaphore is a directory of slot files (`$PARALLEL_HOME/semaphores/id-ID/slot-N`, else
//! under `~/.parallel`); a command holds a slot while it holds an exclusive `flock` on its
//! file, which the kernel drops when the last process holding it ends, so a command that dies
//! never leaves its slot taken. It does not parse options (mod.rs does) and runs no other job.

use std::ffi::OsString;
use std::fs::File;
use std::os::fd::AsRawFd;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use frun_engine::sys::exit::ExitCode;

/// What `--semaphore`, `--id`, `--fg`, `--bg` and `--wait` asked for.
#[derive(Default)]
pub(in crate::parallel) struct Request {
    /// `--semaphore` (or `--wait`) was given.
    pub wanted: bool,
    /// `--id NAME` / `--semaphorename NAME`.
    pub id: Option<String>,
    /// `--fg`: wait for the command and end with its status.
    pub fg: bool,
    /// `--wait`: wait until no command of this id runs.
    pub wait: bool,
}

/// A semaphore's command, ready to run.
struct Semaphore {
    dir: PathBuf,
    slots: u64,
    fg: bool,
    wait: bool,
    shell: PathBuf,
    line: Option<Vec<u8>>,
}

impl Request {
    /// The run this request stands for: `slots` commands of its id at once (`-j`), the command
    /// line `line` (none: only `--wait`) run by `shell`.
    pub(in crate::parallel) fn runner(
        self,
        slots: u64,
        line: Option<Vec<u8>>,
        shell: PathBuf,
    ) -> Result<Box<dyn FnOnce() -> ExitCode>, String> {
        let id = self.id.unwrap_or_else(|| "default".to_string());
        if id.is_empty() || id.contains('/') || id.contains('\0') || id.starts_with('.') {
            return Err(format!(
                "--id '{id}': a semaphore's name is a file name (no '/', not starting with '.')"
            ));
        }
        let base = match std::env::var_os("PARALLEL_HOME").filter(|h| !h.is_empty()) {
            Some(h) => PathBuf::from(h),
            None => match std::env::var_os("HOME").filter(|h| !h.is_empty()) {
                Some(h) => Path::new(&h).join(".parallel"),
                None => return Err("--semaphore needs HOME or PARALLEL_HOME".into()),
            },
        };
        let s = Semaphore {
            dir: base.join("semaphores").join(format!("id-{id}")),
            slots: slots.max(1),
            fg: self.fg,
            wait: self.wait,
            shell,
            line,
        };
        Ok(Box::new(move || s.run()))
    }
}

impl Semaphore {
    fn run(self) -> ExitCode {
        match self.try_run() {
            Ok(code) => code,
            Err(e) => {
                eprintln!("frun: --semaphore: {e}");
                ExitCode::Passed(255)
            }
        }
    }

    fn try_run(&self) -> Result<ExitCode, String> {
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(&self.dir)
            .map_err(|e| format!("cannot make {}: {e}", self.dir.display()))?;
        if self.wait {
            self.wait_all()?;
        }
        let Some(line) = &self.line else {
            return Ok(ExitCode::Passed(0));
        };
        let slot = self.acquire()?;
        // The command holds the slot: its descriptor is inherited (the lock lasts while any
        // process holding it lives).
        nix::fcntl::fcntl(
            &slot,
            nix::fcntl::FcntlArg::F_SETFD(nix::fcntl::FdFlag::empty()),
        )
        .map_err(|e| format!("cannot hand a semaphore slot to the command: {e}"))?;
        let mut cmd = Command::new(&self.shell);
        cmd.arg("-c")
            .arg(std::ffi::OsStr::from_bytes(line))
            .stdin(if self.fg {
                Stdio::inherit()
            } else {
                Stdio::null()
            });
        let mut child = cmd
            .spawn()
            .map_err(|e| format!("cannot start {}: {e}", self.shell.display()))?;
        drop(slot);
        if !self.fg {
            return Ok(ExitCode::Passed(0));
        }
        let status = child.wait().map_err(|e| e.to_string())?;
        use std::os::unix::process::ExitStatusExt;
        Ok(ExitCode::Passed(match (status.code(), status.signal()) {
            (Some(c), _) => c,
            (None, Some(s)) => 128 + s,
            _ => 255,
        }))
    }

    fn slot_file(&self, n: u64) -> Result<File, String> {
        let p = self.dir.join(format!("slot-{n}"));
        std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .mode(0o600)
            .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
            .open(&p)
            .map_err(|e| format!("cannot open {}: {e}", p.display()))
    }

    /// A free slot, locked: waits (polling, a little longer each time) while all are taken.
    fn acquire(&self) -> Result<File, String> {
        let mut pause = Duration::from_millis(10);
        loop {
            for n in 0..self.slots {
                let f = self.slot_file(n)?;
                if lock(&f, true)? {
                    return Ok(f);
                }
            }
            std::thread::sleep(pause);
            pause = (pause * 2).min(Duration::from_millis(200));
        }
    }

    /// Waits until every slot of the id is free.
    fn wait_all(&self) -> Result<(), String> {
        let entries = std::fs::read_dir(&self.dir)
            .map_err(|e| format!("cannot read {}: {e}", self.dir.display()))?;
        let mut slots: Vec<OsString> = entries
            .filter_map(Result::ok)
            .map(|e| e.file_name())
            .filter(|n| n.as_bytes().starts_with(b"slot-"))
            .collect();
        slots.sort();
        for name in slots {
            let f = match std::fs::OpenOptions::new()
                .read(true)
                .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
                .open(self.dir.join(&name))
            {
                Ok(f) => f,
                Err(_) => continue,
            };
            lock(&f, false)?;
        }
        Ok(())
    }
}

/// Locks `f` exclusively (waiting, unless `nonblocking`): whether the lock was taken (false:
/// it is held elsewhere, with `nonblocking`). nix's own `Flock` owns its file and unlocks it
/// when dropped; a slot's lock must outlive frun in the command that inherits the descriptor,
/// so the plain call is used.
#[allow(deprecated)]
fn lock(f: &File, nonblocking: bool) -> Result<bool, String> {
    use nix::errno::Errno;
    use nix::fcntl::{FlockArg, flock};
    let arg = if nonblocking {
        FlockArg::LockExclusiveNonblock
    } else {
        FlockArg::LockExclusive
    };
    loop {
        match flock(f.as_raw_fd(), arg) {
            Ok(()) => return Ok(true),
            Err(Errno::EINTR) => continue,
            Err(Errno::EWOULDBLOCK) => return Ok(false),
            Err(e) => return Err(format!("cannot lock a semaphore slot: {e}")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_slot_is_held_while_its_file_is_locked() {
        let d = tempfile::tempdir().unwrap();
        let s = Semaphore {
            dir: d.path().to_path_buf(),
            slots: 1,
            fg: true,
            wait: false,
            shell: "/bin/sh".into(),
            line: None,
        };
        let held = s.acquire().unwrap();
        let again = s.slot_file(0).unwrap();
        assert!(!lock(&again, true).unwrap());
        drop(held);
        assert!(lock(&again, true).unwrap());
    }
}
