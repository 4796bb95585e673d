//! Which files may be a journal, and how they are opened: never through a symbolic link, never
//! a FIFO or a device, and, when read back or continued, only a regular file this user owns
//! and nobody else can write; a journal in use carries a POSIX record lock that says so. It
//! opens, checks and locks files: it must not read or write what is in them.

use std::fs::{File, OpenOptions};
use std::io;
use std::os::fd::AsFd;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::Path;

use nix::errno::Errno;
use nix::fcntl::{FcntlArg, OFlag, fcntl};

use super::OpenError;

/// The identity of a file: its device and inode (two names of one file have the same).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FileId {
    dev: u64,
    ino: u64,
}

impl FileId {
    /// The identity of the file `m` describes.
    pub fn of(m: &std::fs::Metadata) -> FileId {
        FileId {
            dev: m.dev(),
            ino: m.ino(),
        }
    }

    /// The identity of what descriptor `fd` is open on.
    pub fn of_fd(fd: impl AsFd) -> Option<FileId> {
        let st = nix::sys::stat::fstat(fd).ok()?;
        Some(FileId {
            dev: st.st_dev,
            ino: st.st_ino,
        })
    }
}

/// Opens `path` without following a symbolic link in its last component and without waiting
/// (a FIFO opens at once), close-on-exec.
pub(super) fn open_nofollow(path: &Path, options: &mut OpenOptions) -> io::Result<File> {
    options
        .custom_flags((OFlag::O_CLOEXEC | OFlag::O_NOFOLLOW | OFlag::O_NONBLOCK).bits())
        .open(path)
}

/// What `path` names, without following a symbolic link: refused unless a regular file.
fn lstat_regular(path: &Path) -> Result<std::fs::Metadata, String> {
    let m = std::fs::symlink_metadata(path).map_err(|e| {
        format!(
            "cannot read {}: {}",
            path.display(),
            crate::sys::errors::os_message(&e)
        )
    })?;
    if m.file_type().is_symlink() {
        return Err(format!(
            "{} is a symbolic link; frun opens the files it keeps (checkpoints, results) \
             only as the file itself",
            path.display()
        ));
    }
    if !m.file_type().is_file() {
        return Err(format!("{} is not a regular file", path.display()));
    }
    Ok(m)
}

/// Refuses a journal that is not a regular file, that another user owns, or that group or
/// others may write: frun would act on what someone else wrote.
fn check_owned(m: &std::fs::Metadata, path: &Path) -> Result<(), String> {
    if !m.file_type().is_file() {
        return Err(format!("{} is not a regular file", path.display()));
    }
    let me = nix::unistd::geteuid().as_raw();
    if m.uid() != me {
        return Err(format!(
            "{} belongs to another user (uid {}); frun reads back only files you own",
            path.display(),
            m.uid()
        ));
    }
    if m.mode() & 0o022 != 0 {
        return Err(format!(
            "{} can be written by other users (mode {:04o}); frun reads back only files \
             that only you can write (chmod 600)",
            path.display(),
            m.mode() & 0o7777
        ));
    }
    Ok(())
}

/// Opens a journal for reading: a regular file, not through a symbolic link (a FIFO or a device
/// is refused without being opened).
pub fn open_read(path: &Path) -> Result<File, String> {
    lstat_regular(path)?;
    open_nofollow(path, OpenOptions::new().read(true)).map_err(|e| {
        format!(
            "cannot read {}: {}",
            path.display(),
            crate::sys::errors::os_message(&e)
        )
    })
}

/// Opens a file frun wrote and now reads back (a journal, a results directory's output file):
/// a regular file, not through a symbolic link, owned by this user and writable by nobody else.
pub fn open_owned(path: &Path) -> Result<File, String> {
    let file = open_read(path)?;
    let m = file.metadata().map_err(|e| {
        format!(
            "cannot read {}: {}",
            path.display(),
            crate::sys::errors::os_message(&e)
        )
    })?;
    check_owned(&m, path)?;
    Ok(file)
}

/// A write lock on a whole file (from offset 0 to its end, however far it grows), as a record
/// lock for `fcntl`.
pub(super) fn write_lock() -> libc::flock {
    // nix has no type of its own for a record lock: its F_SETLK and F_GETLK take libc's.
    libc::flock {
        l_type: libc::F_WRLCK as libc::c_short,
        l_whence: libc::SEEK_SET as libc::c_short,
        l_start: 0,
        l_len: 0,
        l_pid: 0,
    }
}

/// The pid of another process holding `file`'s lock (a live run's journal), if any.
pub fn holder(file: &File) -> Option<i32> {
    let mut lock = write_lock();
    fcntl(file, FcntlArg::F_GETLK(&mut lock)).ok()?;
    (lock.l_type != libc::F_UNLCK as libc::c_short).then_some(lock.l_pid)
}

/// Opens and locks a journal file: a new one is created (mode 0600, failing when the name
/// exists, whatever it is — a symbolic link is never followed), an existing one is opened
/// without following a symbolic link and must be a regular file of this user that nobody
/// else can write. The lock is a process-owned (POSIX) lock: it dies with frun, even while a
/// child spawned a moment before still holds a copy of the descriptor (an `flock` would live
/// on in it).
pub(super) fn open_locked(path: &Path, new: bool) -> Result<File, OpenError> {
    let mut options = OpenOptions::new();
    options.append(true).read(true).mode(0o600);
    if new {
        options.create_new(true);
    }
    let file = open_nofollow(path, &mut options).map_err(OpenError::Io)?;
    if !new {
        let m = file.metadata().map_err(OpenError::Io)?;
        check_owned(&m, path).map_err(OpenError::Refused)?;
    }
    match fcntl(&file, FcntlArg::F_SETLK(&write_lock())) {
        Ok(_) => Ok(file),
        Err(Errno::EACCES | Errno::EAGAIN) => Err(OpenError::Busy),
        // A filesystem without record locks (an NFS mount without its lock service): the
        // journal works all the same, only a second frun on it is not detected.
        Err(Errno::ENOLCK) => Ok(file),
        Err(e) => Err(OpenError::Io(e.into())),
    }
}
