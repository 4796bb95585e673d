//! `--tee` with `--pipe` or `--pipepart`: every job gets all of the input on its stdin. There
//! is one job per combination of the `:::`/`::::` values (an ordinary run over them, so `-k`,
//! `--tag`, `{#}` and `{%}` work as usual), and all of them must run at once: more
//! combinations than `-j` allows is GNU Parallel's error, and nothing runs.
//!
//! With `--pipepart -a FILE`, each job's shell opens FILE itself. With `--pipe`, a feeder
//! thread reads standard input once and writes each chunk to one named pipe per job, made in a
//! private directory (mode 0700) under `--tmpdir`/`$TMPDIR`/`/tmp`; before its line runs, each
//! job's shell claims one pipe (a file made only if it does not exist, so no two jobs take the
//! same one) and reads it as its stdin. The directory is removed as soon as every pipe is
//! open, and again when the run ends. A job that stops reading loses its pipe (EPIPE); the
//! others go on getting everything.
//!
//! It must not run jobs (the engine does), read the input twice, or let one job's early exit
//! cut the others' input short.

use std::ffi::OsString;
use std::io::{Read, Write};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::DirBuilderExt;
use std::path::{Path, PathBuf};

use crate::invocation::{Invocation, Sidecar};
use crate::parallel::Options;
use frun_engine::exec::command::argv::shell_quote;
use frun_engine::exec::command::job::{JobSpec, perl_expression};
use frun_engine::plan::config::{Bound, Source, SourceValues};
use frun_engine::sys::exit::ExitCode;

/// What the feeder needs once the run starts: its directory and how many jobs read it.
struct Plan {
    dir: PathBuf,
    jobs: u64,
}

/// GNU Parallel's error when the jobs cannot all run at once (status 255).
fn too_few_jobs(warn: Option<u64>) -> Invocation {
    let mut text = String::new();
    if let Some(n) = warn {
        text.push_str(&crate::parallel::few_file_handles(n));
        text.push('\n');
    }
    text.push_str("parallel: Error: --tee requires --jobs to be higher. Try --jobs 0.\n");
    Invocation::Fail {
        text,
        status: ExitCode::Passed(255),
    }
}

/// What [`finish`] checks once the run's `Config` is built, and the feeder's plan (`--pipe`).
pub(in crate::parallel) struct Pending {
    jobs: u64,
    every: bool,
    feeder: Option<Plan>,
}

/// Turns a `--tee` run (`--pipe` or `--pipepart` given) into an ordinary run over the
/// sources (`-a` files first, as the run reads them), each job's stdin being all of the
/// input; None when `--tee` does not apply (without `--pipe`, GNU Parallel ignores it).
/// Without `-j`, every job runs at once (`-j 0`), as in GNU Parallel.
pub(in crate::parallel) fn prepare(
    o: &mut Options,
    command: &[OsString],
    sources: &mut Vec<Source>,
) -> Result<Option<Pending>, Invocation> {
    if !(o.tee && o.pipe) {
        return Ok(None);
    }
    if command.is_empty() && sources.is_empty() {
        return Err(crate::parallel::refuse("--pipe needs a command"));
    }
    let refuse = |m: &str| crate::parallel::refuse(format!("--tee: {m}"));
    let data = match o.pipepart {
        // The first file is the data; the others are input sources.
        true if !o.arg_files.is_empty() => Some(o.arg_files.remove(0)),
        true => return Err(refuse("--pipepart needs a file: -a FILE")),
        false => None,
    };
    let every = o.jobs.is_none() || o.jobs.as_deref().is_some_and(|j| j.trim() == "0");
    if o.jobs.is_none() {
        o.jobs = Some("0".into());
    }
    crate::parallel::split_values(sources, o.cfg.delimiter);
    let files: Vec<Source> = o
        .arg_files
        .iter()
        .map(|f| Source {
            values: SourceValues::File(f.clone()),
            linked: false,
        })
        .collect();
    let all: Vec<&Source> = files.iter().chain(sources.iter()).collect();
    let jobs = combinations(&all, o.link, o.header, o.cfg.delimiter).map_err(|m| refuse(&m))?;
    if all.is_empty() {
        // No values: no job (not the values read from stdin).
        sources.push(Source {
            values: SourceValues::Words(Vec::new()),
            linked: false,
        });
    }
    // The values make the jobs; nothing is cut into blocks.
    o.pipe = false;
    o.pipepart = false;
    o.per_job = None;
    o.positional = false;
    o.bare = false;
    o.lines.max_lines = false;
    let mut code = o.cfg.shell_prologue.take().unwrap_or_default();
    if !code.is_empty() && !code.ends_with(b"\n") {
        code.push(b'\n');
    }
    let mut feeder = None;
    match data {
        Some(file) => {
            let file = std::path::absolute(&file).unwrap_or(file);
            code.extend_from_slice(b"exec <");
            shell_quote(file.as_os_str().as_bytes(), &mut code);
            code.push(b'\n');
        }
        None if jobs > 0 => {
            let dir = private_name(&crate::parallel::storage::tmpdir(o));
            claim_code(&dir, jobs, &mut code);
            feeder = Some(Plan { dir, jobs });
        }
        None => {}
    }
    o.cfg.shell_prologue = Some(code);
    Ok(Some(Pending {
        jobs,
        every,
        feeder,
    }))
}

/// Checks that every job can run at once (else GNU Parallel's error, and nothing runs), and
/// puts no values after a command that names none (GNU Parallel's `--pipe` commands get
/// none): `{}` and the others go where the line says. A `--pipe` run comes back with its
/// feeder as the run's sidecar (none for a dry run, which starts no job).
pub(in crate::parallel) fn finish(
    pending: Option<Pending>,
    run: Invocation,
) -> Result<Invocation, Invocation> {
    let (p, mut cfg) = match (pending, run) {
        (Some(p), Invocation::Run(cfg)) => (p, cfg),
        (_, other) => return Ok(other),
    };
    let most = match cfg.workers.max {
        Bound::Value(n) => n,
        _ => u64::MAX,
    };
    if p.jobs > most {
        return Err(too_few_jobs(p.every.then_some(most)));
    }
    if let Some(job) = cfg.job.as_mut().filter(|j| !j.words.is_empty()) {
        job.bare = !names_a_value(job);
        job.fed = true;
    }
    Ok(match p.feeder.filter(|_| !cfg.dry_run) {
        Some(plan) => Invocation::RunWith(
            cfg,
            Sidecar::new(move || start(plan).map(|f| Box::new(f) as Box<dyn std::any::Any>)),
        ),
        None => Invocation::Run(cfg),
    })
}

/// The shell code that takes the first unclaimed pipe of `dir` (of `jobs`) as stdin. A claim
/// is a file made with `set -C` (O_EXCL) by a builtin: no process per try.
fn claim_code(dir: &Path, jobs: u64, code: &mut Vec<u8>) {
    let mut d = Vec::new();
    shell_quote(dir.as_os_str().as_bytes(), &mut d);
    let d = String::from_utf8_lossy(&d);
    code.extend_from_slice(
        format!(
            "_frun_tee=1\nset -C\n\
             while [ \"$_frun_tee\" -le {jobs} ] && ! {{ true >{d}/c\"$_frun_tee\"; }} 2>/dev/null; do \
             _frun_tee=$((_frun_tee + 1)); done\n\
             set +C\n\
             exec <{d}/f\"$_frun_tee\"\n\
             unset _frun_tee\n"
        )
        .as_bytes(),
    );
}

/// A name for the pipes' directory (made by [`start`], which fails rather than use one that
/// exists): `frun-tee-PID-NANOS` in `tmpdir`.
fn private_name(tmpdir: &Path) -> PathBuf {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    let dir = tmpdir.join(format!("frun-tee-{}-{nanos:x}", std::process::id()));
    std::path::absolute(&dir).unwrap_or(dir)
}

/// How many jobs the sources make: every combination, or with `--link` (`:::+`) the longest
/// of the linked ones. `::::` files are counted (regular files only: a pipe read here would be
/// empty for the run).
fn combinations(
    sources: &[&Source],
    link: bool,
    header: bool,
    delimiter: u8,
) -> Result<u64, String> {
    let mut total: Option<u64> = None;
    let mut group = 0u64;
    for (i, s) in sources.iter().enumerate() {
        let n = match &s.values {
            SourceValues::Words(w) => w.len() as u64,
            SourceValues::File(p) => records(p, delimiter)?,
        };
        let n = if header { n.saturating_sub(1) } else { n };
        if i > 0 && (link || s.linked) {
            group = group.max(n);
        } else {
            if i > 0 {
                total = Some(total.unwrap_or(1).saturating_mul(group));
            }
            group = n;
        }
    }
    if sources.is_empty() {
        return Ok(0);
    }
    Ok(total.unwrap_or(1).saturating_mul(group))
}

/// The records of a regular file.
fn records(p: &Path, delimiter: u8) -> Result<u64, String> {
    let regular = p.as_os_str() != "-" && std::fs::metadata(p).is_ok_and(|m| m.is_file());
    if !regular {
        return Err(format!(
            "{}: the values must be known before the jobs start: give them with ::: or :::: FILE \
             (a regular file; standard input is the jobs' data)",
            p.display()
        ));
    }
    let bytes = std::fs::read(p).map_err(|e| format!("{}: {e}", p.display()))?;
    let ends = memchr::memchr_iter(delimiter, &bytes).count() as u64;
    Ok(ends + u64::from(bytes.last().is_some_and(|&b| b != delimiter)))
}

/// The running feeder: when dropped (the run is over), its directory is removed if it is
/// still there. The thread itself is never waited for: once every job has ended, its writes
/// fail and it stops; a read of a stdin that never ends dies with the process.
pub struct Feeder {
    dir: PathBuf,
}

impl Drop for Feeder {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Starts the feeder of a `--tee --pipe` run. The error is one line for the user.
fn start(Plan { dir, jobs }: Plan) -> Result<Feeder, String> {
    std::fs::DirBuilder::new()
        .mode(0o700)
        .create(&dir)
        .map_err(|e| format!("--tee: cannot make {}: {e}", dir.display()))?;
    let feeder = Feeder { dir: dir.clone() };
    for i in 1..=jobs {
        let fifo = dir.join(format!("f{i}"));
        nix::unistd::mkfifo(
            &fifo,
            nix::sys::stat::Mode::S_IRUSR | nix::sys::stat::Mode::S_IWUSR,
        )
        .map_err(|e| format!("--tee: cannot make {}: {}", fifo.display(), e.desc()))?;
    }
    std::thread::Builder::new()
        .name("tee".into())
        .spawn(move || feed(&dir, jobs))
        .map_err(|e| format!("--tee: cannot start: {e}"))?;
    Ok(feeder)
}

/// Opens every job's pipe (each open waits for its job), removes the names, then copies
/// standard input to every pipe still read.
fn feed(dir: &Path, jobs: u64) {
    let mut outs: Vec<std::fs::File> = Vec::with_capacity(jobs as usize);
    for i in 1..=jobs {
        let path = dir.join(format!("f{i}"));
        if let Ok(f) = std::fs::OpenOptions::new().write(true).open(&path) {
            // A bigger pipe: fewer wake-ups for a fast reader (best effort).
            let _ = nix::fcntl::fcntl(&f, nix::fcntl::FcntlArg::F_SETPIPE_SZ(1 << 20));
            outs.push(f);
        }
    }
    let _ = std::fs::remove_dir_all(dir);
    let mut buf = vec![0u8; 1 << 17];
    let mut input = std::io::stdin().lock();
    while !outs.is_empty() {
        let n = match input.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(_) => break,
        };
        // A job that stopped reading (EPIPE, as SIGPIPE is ignored here) is dropped.
        outs.retain_mut(|f| f.write_all(&buf[..n]).is_ok());
    }
}

/// Whether the job's line holds a replacement string (a perl one counts without being run).
fn names_a_value(job: &JobSpec) -> bool {
    let line = job.words.join(&b' ');
    if perl_expression(&line).is_some() || !job.rpl.is_empty() {
        return true;
    }
    job.names_replacement()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(v: &[&str], linked: bool) -> Source {
        Source {
            values: SourceValues::Words(v.iter().map(OsString::from).collect()),
            linked,
        }
    }

    #[test]
    fn combinations_multiply_and_links_take_the_longest() {
        let a = words(&["1", "2", "3"], false);
        let b = words(&["x", "y"], false);
        assert_eq!(combinations(&[&a, &b], false, false, b'\n'), Ok(6));
        assert_eq!(combinations(&[&a, &b], true, false, b'\n'), Ok(3));
        let linked = words(&["x", "y"], true);
        assert_eq!(combinations(&[&a, &linked, &b], false, false, b'\n'), Ok(6));
        assert_eq!(combinations(&[&a], false, true, b'\n'), Ok(2));
        assert_eq!(combinations(&[], false, false, b'\n'), Ok(0));
    }

    #[test]
    fn the_claim_code_names_the_directory_quoted() {
        let mut code = Vec::new();
        claim_code(Path::new("/tmp/a b"), 3, &mut code);
        let code = String::from_utf8(code).unwrap();
        assert!(code.contains("-le 3 "), "{code}");
        assert!(code.contains("exec <'/tmp/a b'/f\"$_frun_tee\""), "{code}");
    }

    fn parsed(line: &str) -> Result<Invocation, Invocation> {
        let words = line.split(' ').map(OsString::from).collect();
        crate::parallel::parse_inner(words, None)
    }

    #[test]
    fn a_tee_run_is_a_run_over_the_values_reading_a_claimed_pipe_or_nothing() {
        let Ok(Invocation::RunWith(cfg, _feeder)) = parsed("--pipe --tee -k wc ::: -l -c ::: a")
        else {
            panic!("not a run with a feeder");
        };
        assert!(!cfg.stdin);
        let code = String::from_utf8(cfg.shell_prologue.clone().unwrap()).unwrap();
        assert!(code.contains("-le 2 ") && code.contains("exec <"), "{code}");
        // `wc` names no value: none is appended.
        assert!(cfg.job.as_ref().unwrap().bare);
        let Ok(Invocation::RunWith(cfg, _feeder)) = parsed("--pipe --tee -k wc {} ::: -l") else {
            panic!("not a run with a feeder");
        };
        assert!(!cfg.job.as_ref().unwrap().bare);
        // A dry run starts no job: no feeder either.
        assert!(matches!(
            parsed("--pipe --tee --dry-run wc ::: -l"),
            Ok(Invocation::Run(_))
        ));
        // --pipepart: each job's shell opens the file itself; no feeder.
        assert!(matches!(
            parsed("--pipepart -a /dev/null --tee wc ::: -l"),
            Ok(Invocation::Run(_))
        ));
        // More combinations than -j: nothing runs.
        let Err(Invocation::Fail { text, .. }) = parsed("--pipe --tee -j2 wc ::: a b c") else {
            panic!("not refused");
        };
        assert_eq!(text.lines().count(), 1);
        // Without --pipe, --tee changes nothing (as in GNU Parallel).
        assert!(matches!(
            parsed("--tee -j1 echo ::: a b c"),
            Ok(Invocation::Run(_))
        ));
    }

    #[test]
    fn too_many_combinations_is_gnu_parallels_error() {
        let Invocation::Fail { text, status } = too_few_jobs(Some(4)) else {
            panic!("not a failure");
        };
        assert_eq!(status, ExitCode::Passed(255));
        assert!(text.ends_with("--tee requires --jobs to be higher. Try --jobs 0.\n"));
        assert_eq!(text.lines().count(), 6);
    }
}
