//! Setting up the checkpoint side of a run ([`prepare`]): which file it journals to (a new
//! one, the one resumed continued, or a copy of it), what is refused (the input, stdout's
//! file, another run's checkpoint, a journal of another command), and opening it — or, at the
//! default place, only checking that it could be created. It must not write journal lines
//! itself, nor touch stdout: [`Restore::apply`] does, once the input is known.

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::os::fd::AsFd;
use std::path::Path;
use std::sync::Arc;

use nix::fcntl::{FcntlArg, OFlag, fcntl};
use nix::unistd::{Whence, lseek};

use super::file::{FileId, holder, open_locked, open_nofollow};
use super::format::complete_len;
use super::resume::{Loaded, Restore, load, read_cap, stdout_size};
use super::writer::Journal;
use super::{Checkpoint, OpenError};

/// The checkpoint side of a run, set up before any work.
pub struct Prepared {
    /// The journal this run writes (None when it keeps none).
    pub journal: Option<Arc<Journal>>,
    /// The checkpoint being resumed.
    pub resume: Option<Checkpoint>,
    /// Stdout's byte count when this run's output starts.
    pub stdout_base: u64,
    /// What resuming does to stdout, once the input is known to be the same.
    pub restore: Option<Restore>,
    /// Why this run keeps no journal, when it could have.
    pub missing: Option<String>,
}

/// Refuses a `--checkpoint-file` path that exists: frun creates its journal there, and
/// removes it at the end, so whatever is there would be lost. The input and stdout's file are
/// told apart by identity (device and inode), not by name.
fn refuse_existing(
    path: &Path,
    input: Option<FileId>,
    stdout: Option<FileId>,
    cap: u64,
) -> Result<(), String> {
    let shown = path.display();
    let m = match std::fs::symlink_metadata(path) {
        Ok(m) => m,
        // Not there (or not reachable: creating it says why).
        Err(_) => return Ok(()),
    };
    let id = FileId::of(&m);
    let why = if m.file_type().is_symlink() {
        "is a symbolic link".to_string()
    } else if !m.file_type().is_file() {
        "exists and is not a regular file".to_string()
    } else if Some(id) == input {
        "is the input".to_string()
    } else if Some(id) == stdout {
        "is the file standard output goes to".to_string()
    } else if open_nofollow(path, OpenOptions::new().read(true))
        .ok()
        .and_then(|f| holder(&f))
        .is_some()
    {
        return Err(format!("the checkpoint {shown} is in use by another frun"));
    } else if load(path, cap).is_ok() {
        format!(
            "holds the checkpoint of a stopped run; resume it (--resume {shown}) or remove it \
             first"
        )
    } else {
        "exists and is not a frun checkpoint".to_string()
    };
    Err(format!(
        "--checkpoint-file: {shown} {why}; frun creates a new file there (name one that does \
         not exist)"
    ))
}

/// Opens (or continues) the journal and, when resuming, brings stdout back to the recorded
/// output. `run` identifies the command; `explicit` is `--checkpoint-file`; `default` is where the
/// journal goes without it (a name another file holds moves it to the next free one, `.1`,
/// `.2`, …: a stopped run's checkpoint there is left alone); `input` is the input. Errors are
/// one line for the user (exit 2).
pub fn prepare(
    run: &str,
    command: &str,
    explicit: Option<&Path>,
    resume_from: Option<&Path>,
    default: &Path,
    input: &File,
) -> Result<Prepared, String> {
    let input_meta = input.metadata().ok().filter(|m| m.file_type().is_file());
    let input_id = input_meta.as_ref().map(FileId::of);
    let stdout_id = FileId::of_fd(io::stdout());
    let cap = read_cap(input_meta.as_ref().map(|m| m.len()));
    let resume = match resume_from {
        None => None,
        Some(p) => Some((p, load_resumed(p, cap, run, input_id, stdout_id)?)),
    };
    let chosen = explicit.or(resume_from);
    let path = chosen.unwrap_or(default);
    // The resumed file itself is continued, unless --checkpoint-file names another.
    let continued = match (&resume, explicit) {
        (Some(_), None) => true,
        (Some((_, loaded)), Some(to)) => {
            std::fs::symlink_metadata(to).is_ok_and(|m| FileId::of(&m) == loaded.id)
        }
        (None, _) => false,
    };
    if let Some(to) = explicit {
        if !continued {
            refuse_existing(to, input_id, stdout_id, cap)?;
        }
    }

    let stdout_regular = stdout_size(io::stdout()).is_some();
    let restore = match &resume {
        Some((from, loaded)) => Some(Restore::check(from, &loaded.checkpoint)?),
        None => None,
    };
    let stdout_base = match &resume {
        // An empty stdout holds the rest of the output on its own (a new file): its count
        // starts again at 0.
        Some(_) if stdout_size(io::stdout()) == Some(0) => 0,
        Some((_, loaded)) => loaded.checkpoint.stdout.unwrap_or(0),
        None => stdout_position(io::stdout()).unwrap_or(0),
    };
    let mut j = Journal::new(
        path,
        run,
        &format!("command: {command}"),
        stdout_regular.then_some(stdout_base),
        resume.is_some(),
        stdout_regular
            .then(|| io::stdout().as_fd().try_clone_to_owned().ok())
            .flatten(),
    )
    .with_resume_hint();
    if let Some((_, loaded)) = &resume {
        j = j.after_entries(loaded.checkpoint.batches);
    }
    if chosen.is_none() {
        j = j.with_alternates();
    }
    // forkrun's scripts find a stopped run's checkpoint as ./.forkrun_resume (and resume from
    // it), so the journal at the default place is linked there too.
    let default_name = |p: &Path| {
        [super::DEFAULT_PATH, super::LEGACY_PATH]
            .iter()
            .any(|n| p.file_name() == Some(n.as_ref()) && p.parent().is_none_or(in_cwd))
    };
    if explicit.is_none()
        && default == Path::new(super::DEFAULT_PATH)
        && resume_from.is_none_or(default_name)
    {
        j = j.with_legacy_name();
    }
    // A location the user chose is opened now; the default one only checked.
    let opened = match &resume {
        Some((_, loaded)) if continued => continue_resumed(path, loaded),
        Some((_, loaded)) => copy_resumed(path, loaded),
        // A new journal at a place the user chose: created now, with its header.
        None if chosen.is_some() => j.create(),
        None => return Ok(at_default_place(j, path, stdout_base, restore)),
    };
    j.adopt(opened_or_refused(path, opened)?);
    Ok(Prepared {
        journal: Some(Arc::new(j)),
        resume: resume.map(|(_, loaded)| loaded.checkpoint),
        stdout_base,
        restore,
        missing: None,
    })
}

/// True for "" and ".": a path whose parent this is names a file of the current directory.
fn in_cwd(parent: &Path) -> bool {
    parent.as_os_str().is_empty() || parent == Path::new(".")
}

/// The journal `--resume` names, read back and checked: neither the input nor stdout's file,
/// and written for this command.
fn load_resumed(
    p: &Path,
    cap: u64,
    run: &str,
    input_id: Option<FileId>,
    stdout_id: Option<FileId>,
) -> Result<Loaded, String> {
    let loaded = load(p, cap).map_err(|e| format!("--resume: {e}"))?;
    if Some(loaded.id) == input_id {
        return Err(format!("--resume: {} is the input", p.display()));
    }
    if Some(loaded.id) == stdout_id {
        return Err(format!(
            "--resume: {} is the file standard output goes to",
            p.display()
        ));
    }
    if loaded.checkpoint.run != run {
        return Err(format!(
            "--resume: {} was written for another command (or other options that shape \
             its output); resume with the same arguments",
            p.display()
        ));
    }
    Ok(loaded)
}

/// The journal being resumed, opened to be continued: its name must still lead to the file
/// that was read.
fn continue_resumed(path: &Path, loaded: &Loaded) -> Result<File, OpenError> {
    let file = open_locked(path, false)?;
    match file.metadata() {
        Ok(m) if FileId::of(&m) == loaded.id && m.len() == loaded.text.len() as u64 => {}
        Ok(_) => {
            return Err(OpenError::Refused(format!(
                "{} was changed while it was read",
                path.display()
            )));
        }
        Err(e) => return Err(OpenError::Io(e)),
    }
    let whole = complete_len(&loaded.text);
    if whole < loaded.text.len() {
        // A torn last line (a crash or a full disk in the middle of a write) is cut off
        // before anything is appended: an entry glued onto it would be lost, or unreadable.
        file.set_len(whole as u64)
            .and_then(|()| file.sync_data())
            .map_err(OpenError::Io)?;
        say!(
            "resuming {}: its last line was cut short (a crash or a full disk); \
             dropped it",
            path.display()
        );
    }
    Ok(file)
}

/// Resuming into another file: a copy of the journal resumed, created there to be continued.
fn copy_resumed(path: &Path, loaded: &Loaded) -> Result<File, OpenError> {
    let file = open_locked(path, true)?;
    (&file)
        .write_all(&loaded.text[..complete_len(&loaded.text)])
        .and_then(|()| file.sync_data())
        .map_err(OpenError::Io)?;
    Ok(file)
}

/// A new journal at the default place: only checked now (its first flush creates it). Where
/// it could not be created, the run goes on without one, and says so.
fn at_default_place(
    j: Journal,
    path: &Path,
    stdout_base: u64,
    restore: Option<Restore>,
) -> Prepared {
    let (journal, missing) = match j.creatable() {
        Ok(()) => (Some(Arc::new(j)), None),
        Err(e) => {
            let why = match e {
                OpenError::Io(e) => format!(
                    "cannot write {}: {}",
                    path.display(),
                    crate::sys::errors::os_message(&e)
                ),
                OpenError::Refused(why) => why,
                OpenError::Busy => format!("{} is in use by another frun", path.display()),
            };
            say!(
                "warning: {why}; this run cannot be resumed (choose a place with \
                 --checkpoint-file)"
            );
            (None, Some(why))
        }
    };
    Prepared {
        journal,
        resume: None,
        stdout_base,
        restore,
        missing,
    }
}

/// The journal's file as opened, or why it could not be, for the user.
fn opened_or_refused(path: &Path, opened: Result<File, OpenError>) -> Result<File, String> {
    match opened {
        Ok(file) => Ok(file),
        Err(OpenError::Busy) => Err(format!(
            "the checkpoint {} is in use by another frun",
            path.display()
        )),
        Err(OpenError::Refused(why)) => Err(format!("--resume: {why}")),
        Err(OpenError::Io(e)) => Err(format!(
            "cannot write the checkpoint {}: {}",
            path.display(),
            crate::sys::errors::os_message(&e)
        )),
    }
}

/// Where output written to `fd` lands next, for a regular file: its size when it appends,
/// otherwise its offset.
fn stdout_position(fd: impl AsFd) -> Option<u64> {
    let fd = fd.as_fd();
    let size = stdout_size(fd)?;
    if fcntl(fd, FcntlArg::F_GETFL)
        .is_ok_and(|flags| OFlag::from_bits_truncate(flags).contains(OFlag::O_APPEND))
    {
        return Some(size);
    }
    lseek(fd, 0, Whence::SeekCur).ok().map(|at| at as u64)
}
