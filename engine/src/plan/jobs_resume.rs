//! `frun parallel`'s `--results NAME` and `--resume`, `--resume-failed`, `--retry-failed`, as
//! the plan resolves them: which job numbers an earlier run's joblog (or results) takes off
//! this run, the jobs `--retry-failed` runs again, and the results writer.
//!
//! It reads the joblog and nothing else; it does not skip or run anything itself (workers skip
//! the jobs it lists).

use std::ffi::OsString;

use super::config::{BatchSpec, Config, InputSpec, JobResume, Source, SourceValues, Sweep};
use super::{RunError, Subject};
use crate::exec::command::job::{Columns, JobSpec, ReplacementNames, Spread, Trim};
use crate::output::joblog::Logged;
use crate::output::results::job_files::JobFiles;
use crate::output::results::table::Table;
use crate::run::Work;

fn logged(cfg: &Config) -> Result<Vec<Logged>, RunError> {
    let Some(path) = cfg.joblog.as_deref().filter(|p| p.as_os_str() != "-") else {
        return Ok(Vec::new());
    };
    Ok(crate::output::joblog::read(path)
        .map_err(|m| RunError::unusable(Subject::Joblog(path.to_path_buf()), m))?
        .unwrap_or_default())
}

/// The numbers of the jobs that succeeded in some run the log recorded, sorted.
fn succeeded(jobs: &[Logged]) -> Vec<u64> {
    let mut v: Vec<u64> = jobs.iter().filter(|j| j.succeeded).map(|j| j.seq).collect();
    v.sort_unstable();
    v.dedup();
    v
}

/// What `--results` and the `--resume` family add to how workers run jobs.
pub(super) struct Resumed {
    results: Option<JobFiles>,
    table: Option<Table>,
    skip: Vec<u64>,
    skip_saved: bool,
}

impl Resumed {
    /// Reads the joblog and sets up `--results` (`header`: a sweep's column names).
    pub(super) fn of(cfg: &Config, header: &[Vec<u8>]) -> Result<Resumed, RunError> {
        let (skip, skip_saved) = skipped(cfg)?;
        Ok(Resumed {
            results: results(cfg, header)?,
            table: table(cfg, header)?,
            skip,
            skip_saved,
        })
    }

    pub(super) fn apply(self, mut work: Work) -> Work {
        crate::exec::command::perl::add_completed(self.skip.len() as u64);
        // Saved with the job's results, its stderr is not printed after its stdout as well.
        work.stderr_grouped &= self.results.is_none() && self.table.is_none();
        work.job_files = self.results;
        work.results_table = self.table;
        work.skip_jobs = self.skip;
        work.skip_saved = self.skip_saved;
        work
    }
}

/// The jobs this run does not run again (numbers from 1, sorted), and whether a job whose
/// results are there is not run again either.
fn skipped(cfg: &Config) -> Result<(Vec<u64>, bool), RunError> {
    let Some(mode) = cfg.job_resume else {
        return Ok((Vec::new(), false));
    };
    let jobs = logged(cfg)?;
    let skip = match mode {
        JobResume::Resume => {
            let mut v: Vec<u64> = jobs.iter().map(|j| j.seq).collect();
            v.sort_unstable();
            v.dedup();
            v
        }
        // `--retry-failed`'s input holds every job number the log reached.
        JobResume::ResumeFailed | JobResume::RetryFailed => succeeded(&jobs),
    };
    let saved = mode == JobResume::Resume && cfg.job_files.is_some();
    Ok((skip, saved))
}

/// `--retry-failed` with a joblog: the run's jobs are the log's command lines, numbered as
/// there (one for every number up to the highest; a number the log lacks has an empty line,
/// as GNU Parallel runs it). None: the config runs as it is.
pub(super) fn retry_config(cfg: &Config) -> Result<Option<Config>, RunError> {
    if cfg.job_resume != Some(JobResume::RetryFailed) || cfg.joblog.is_none() {
        return Ok(None);
    }
    // A joblog on stdout (`--jl -`) has no earlier jobs to read: the input runs, as GNU
    // Parallel runs it.
    if cfg.joblog.as_deref() == Some(std::path::Path::new("-")) {
        return Ok(None);
    }
    let jobs = logged(cfg)?;
    let last = jobs.iter().map(|j| j.seq).max().unwrap_or(0);
    // More job numbers than the log has lines cannot be one of frun's or GNU Parallel's logs.
    if last > jobs.len() as u64 * 2 + 1_000_000 {
        let path = cfg.joblog.clone().unwrap_or_default();
        return Err(RunError::unusable(
            Subject::Joblog(path),
            format!(
                "--retry-failed: the joblog's job numbers go up to {last}, far more than its lines"
            ),
        ));
    }
    if jobs.iter().any(|j| j.command.contains(&0)) {
        crate::sys::notice::say_fact(
            crate::sys::notice::NoticeKind::Problem,
            Some(crate::sys::notice::Fact::LoggedNewlines),
            format_args!(
                "warning: --retry-failed: command lines of the joblog hold newlines (written as \
                 NUL bytes): they run with their newlines"
            ),
        );
    }
    let mut lines: Vec<OsString> = vec![OsString::new(); last as usize];
    for j in &jobs {
        // The last line of a job number is the one it ran as last; its newlines were written
        // as NUL bytes.
        let command = j
            .command
            .iter()
            .map(|&b| if b == 0 { b'\n' } else { b })
            .collect();
        lines[j.seq as usize - 1] = std::os::unix::ffi::OsStringExt::from_vec(command);
    }
    let shell = cfg
        .job
        .as_ref()
        .map_or_else(|| "/bin/sh".into(), |j| j.shell.clone());
    let mut retry = cfg.clone();
    retry.input = InputSpec::Sweep(Sweep::of(
        vec![Source {
            values: SourceValues::Words(lines),
            linked: false,
        }],
        false,
    ));
    retry.delimiter = 0;
    retry.batch = BatchSpec::Exact(1);
    retry.command = vec![OsString::from("sh")];
    retry.job = Some(JobSpec {
        words: Vec::new(),
        quote: false,
        literal: false,
        shell,
        columns: Columns::Tuple,
        spread: Spread::One,
        names: ReplacementNames::default(),
        trim: Trim::default(),
        header: Vec::new(),
        bare: false,
        fed: false,
        numbered: false,
        rpl: Vec::new(),
    });
    Ok(Some(retry))
}

/// `--results NAME`, set up for the run's jobs (`header`: a sweep's column names).
fn results(cfg: &Config, header: &[Vec<u8>]) -> Result<Option<JobFiles>, RunError> {
    let (Some(name), Some(job)) = (&cfg.job_files, &cfg.job) else {
        return Ok(None);
    };
    if cfg.shell_command {
        return Err(RunError::config(
            "job_files",
            "--results saves the output of commands; a shell function's cannot be kept apart",
        ));
    }
    let mut job = job.clone();
    if !header.is_empty() {
        job.header = header.to_vec();
    }
    let escape = cfg.conduct.escapes_nul();
    JobFiles::open(name, &job, cfg.delimiter)
        .map(|f| f.compressing(cfg.results_compress.clone()))
        .map(|f| Some(if escape { f.escaping_nul() } else { f }))
        .map_err(|m| {
            use std::os::unix::ffi::OsStrExt;
            let name = std::path::PathBuf::from(std::ffi::OsStr::from_bytes(name));
            RunError::unusable(Subject::Results(name), m)
        })
}

/// `--results NAME.json/.csv/.tsv`, set up for the run's jobs (`header`: a sweep's column
/// names; without them, one value column per input source).
fn table(cfg: &Config, header: &[Vec<u8>]) -> Result<Option<Table>, RunError> {
    let (Some(spec), Some(job)) = (&cfg.results_table, &cfg.job) else {
        return Ok(None);
    };
    let mut job = job.clone();
    if !header.is_empty() {
        job.header = header.to_vec();
    }
    let sources = match &cfg.input {
        InputSpec::Sweep(s) => s.sources.len(),
        _ => 1,
    };
    let escape = cfg.conduct.escapes_nul();
    Table::open(spec, &job, cfg.delimiter, sources)
        .map(|t| Some(if escape { t.escaping_nul() } else { t }))
        .map_err(|m| {
            let name = spec.file.clone().unwrap_or_else(|| "-".into());
            RunError::unusable(Subject::Results(name), m)
        })
}
