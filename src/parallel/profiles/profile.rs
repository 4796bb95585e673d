//! Where GNU Parallel's users keep their settings, read as GNU Parallel 20221122 reads them: the
//! configuration directories (`$PARALLEL_HOME`, `$XDG_CONFIG_HOME/parallel`, each
//! `$XDG_CONFIG_DIRS` entry's `parallel`, `~/.parallel`), the profiles in them (`config` by
//! default, or the ones `-J NAME` names: options, one or more a line), and `$PARALLEL_ENV`
//! (shell code put before every job's command line, or the name of a file holding it).
//!
//! It reads files and makes `$PARALLEL_HOME` when it is missing; it judges no option (the
//! words it returns are parsed as the command line's are) and runs nothing.

use std::ffi::OsString;
use std::fs::File;
use std::io::Read;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use crate::parallel::env::shell_words;

/// The configuration directories that exist, first one first.
pub(in crate::parallel) struct Home {
    dirs: Vec<PathBuf>,
}

/// Finds the configuration directories; makes `$PARALLEL_HOME` if it is set and missing, and
/// says (as GNU Parallel's warnings) when that fails.
pub(in crate::parallel) fn home(warn: &mut dyn FnMut(String)) -> Home {
    let var = |n: &str| std::env::var_os(n).filter(|v| !v.is_empty());
    let parallel_home = var("PARALLEL_HOME");
    if let Some(h) = &parallel_home {
        let _ = std::fs::create_dir_all(h);
    }
    let user_home = PathBuf::from(var("HOME").unwrap_or_default());
    let mut candidates: Vec<PathBuf> = parallel_home.iter().map(PathBuf::from).collect();
    if let Some(x) = var("XDG_CONFIG_HOME") {
        candidates.push(Path::new(&x).join("parallel"));
    }
    if let Some(x) = var("XDG_CONFIG_DIRS") {
        for d in x.as_bytes().split(|&b| b == b':').filter(|d| !d.is_empty()) {
            candidates.push(Path::new(std::ffi::OsStr::from_bytes(d)).join("parallel"));
        }
    }
    candidates.push(user_home.join(".parallel"));
    let dirs: Vec<PathBuf> = candidates.into_iter().filter(|d| d.is_dir()).collect();
    // GNU Parallel's own directory: the first, else ~/.parallel.
    let dir = dirs
        .first()
        .cloned()
        .unwrap_or_else(|| user_home.join(".parallel"));
    if let Some(h) = parallel_home.filter(|h| !Path::new(h).is_dir()) {
        warn(format!(
            "$PARALLEL_HOME ({}) does not exist.",
            Path::new(&h).display()
        ));
        warn(format!("Using {}", dir.display()));
    }
    Home { dirs }
}

/// The words of the profiles: `named` (from `-J`), else the default ones (`config`, which need
/// not exist). A named profile that starts with `/` or `./` is that file; any other is looked
/// for in each configuration directory. Each line is split as a shell splits words; lines
/// starting with `#` are comments. A named profile found nowhere is an error.
pub(in crate::parallel) fn profile_words(
    named: &[String],
    home: &Home,
) -> Result<Vec<OsString>, String> {
    let mut files: Vec<(PathBuf, bool)> = Vec::new();
    if named.is_empty() {
        files.push((PathBuf::from("/etc/parallel/config"), false));
        files.extend(home.dirs.iter().map(|d| (d.join("config"), false)));
        if let Some(h) = std::env::var_os("HOME") {
            files.push((Path::new(&h).join(".parallelrc"), false));
        }
    } else {
        for p in named {
            if p.starts_with('/') || p.starts_with("./") {
                files.push((PathBuf::from(p), true));
                continue;
            }
            let found: Vec<_> = home
                .dirs
                .iter()
                .map(|d| d.join(p))
                .filter(|f| f.exists())
                .collect();
            if found.is_empty() {
                return Err(format!("{p} not readable."));
            }
            files.extend(found.into_iter().map(|f| (f, true)));
        }
    }
    let mut words = Vec::new();
    for (file, required) in files {
        let Some(text) = read_profile(&file, required)? else {
            continue;
        };
        for line in text.split(|&b| b == b'\n') {
            if line.trim_ascii_start().starts_with(b"#") {
                continue;
            }
            let w = shell_words(line)
                .map_err(|why| format!("{}: a line holds {why}", file.display()))?;
            words.extend(w);
        }
    }
    Ok(words)
}

/// Reads one profile. It must be a regular file (a symbolic link to one is followed), owned by
/// the caller or root, and writable by no one else: its words become options and commands.
/// None: an optional profile that is not there.
fn read_profile(file: &Path, required: bool) -> Result<Option<Vec<u8>>, String> {
    let open = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_CLOEXEC)
        .open(file);
    let mut f = match open {
        Ok(f) => f,
        Err(e) if !required && e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(_) => return Err(format!("{} not readable.", file.display())),
    };
    check_profile(&f, file)?;
    let mut text = Vec::new();
    f.read_to_end(&mut text)
        .map_err(|e| format!("{}: {e}", file.display()))?;
    Ok(Some(text))
}

fn check_profile(f: &File, file: &Path) -> Result<(), String> {
    let m = f
        .metadata()
        .map_err(|e| format!("{}: {e}", file.display()))?;
    if !m.file_type().is_file() {
        return Err(format!(
            "{} is not a regular file (a profile is read as options)",
            file.display()
        ));
    }
    let me = nix::unistd::geteuid().as_raw();
    if m.uid() != me && m.uid() != 0 {
        return Err(format!(
            "{} belongs to another user (a profile is read as options)",
            file.display()
        ));
    }
    if m.mode() & 0o022 != 0 {
        return Err(format!(
            "{} is writable by others (a profile is read as options)",
            file.display()
        ));
    }
    Ok(())
}

/// `$PARALLEL_ENV`: the code to put before every job's command line, or None. When it names a
/// file (or a FIFO) that exists, its content is the code. Byte 1 stands for a newline (as in
/// GNU Parallel, to carry newlines through one-line places). The code starts by unsetting the
/// variable, so that no job inherits it (a `frun parallel` in a job does not run it again).
pub(in crate::parallel) fn parallel_env(
    value: Option<OsString>,
) -> Result<Option<Vec<u8>>, String> {
    let Some(v) = value.filter(|v| !v.is_empty()) else {
        return Ok(None);
    };
    let mut code = b"unset PARALLEL_ENV\n".to_vec();
    if Path::new(&v).exists() {
        let mut f = File::open(&v)
            .map_err(|e| format!("$PARALLEL_ENV: {}: {e}", Path::new(&v).display()))?;
        f.read_to_end(&mut code)
            .map_err(|e| format!("$PARALLEL_ENV: {}: {e}", Path::new(&v).display()))?;
    } else {
        code.extend_from_slice(v.as_bytes());
    }
    for b in &mut code {
        if *b == 1 {
            *b = b'\n';
        }
    }
    Ok(Some(code))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn home_in(d: &Path) -> Home {
        Home {
            dirs: vec![d.to_path_buf()],
        }
    }

    #[test]
    fn reads_named_profiles_and_skips_comments() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join("p"), "# no\n--tag -k\n  # no\n-j 2 'a b'\n").unwrap();
        let w = profile_words(&["p".into()], &home_in(d.path())).unwrap();
        assert_eq!(w, ["--tag", "-k", "-j", "2", "a b"]);
        assert!(profile_words(&["missing".into()], &home_in(d.path())).is_err());
        // No -J: a missing config is no error.
        assert!(profile_words(&[], &home_in(d.path())).is_ok());
    }

    #[test]
    fn refuses_fifos_and_profiles_others_can_write() {
        let d = tempfile::tempdir().unwrap();
        let fifo = d.path().join("fifo");
        nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::S_IRWXU).unwrap();
        let e = profile_words(&["fifo".into()], &home_in(d.path())).unwrap_err();
        assert!(e.contains("not a regular file"), "{e}");
        let open = d.path().join("open");
        std::fs::write(&open, "--tag\n").unwrap();
        std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o666)).unwrap();
        let e = profile_words(&["open".into()], &home_in(d.path())).unwrap_err();
        assert!(e.contains("writable by others"), "{e}");
        // A symbolic link to a good profile is followed.
        let good = d.path().join("good");
        std::fs::write(&good, "--tag\n").unwrap();
        std::os::unix::fs::symlink(&good, d.path().join("link")).unwrap();
        let w = profile_words(&["link".into()], &home_in(d.path())).unwrap();
        assert_eq!(w, ["--tag"]);
    }

    #[test]
    fn parallel_env_is_code_or_a_file() {
        assert_eq!(parallel_env(None).unwrap(), None);
        assert_eq!(
            parallel_env(Some("a=1\u{1}b=2".into())).unwrap(),
            Some(b"unset PARALLEL_ENV\na=1\nb=2".to_vec())
        );
        let f = tempfile::NamedTempFile::new().unwrap();
        std::fs::write(f.path(), "v=x").unwrap();
        assert_eq!(
            parallel_env(Some(f.path().into())).unwrap(),
            Some(b"unset PARALLEL_ENV\nv=x".to_vec())
        );
    }
}
