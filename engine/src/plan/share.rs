//! Whether a task of a split run shares the input by claims (`--share`), and joining that run:
//! the results directory, the input's size and, under Slurm, when the job ends. It decides and
//! joins; the claims themselves are `input::shard::claims`'.

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use crate::input::shard::Shard;
use crate::input::shard::claims::Book;
use crate::plan::config::{BatchSpec, Config, ShardSpec, ShareSpec};
use crate::plan::error::{RunError, Subject};

/// The book of this task when the run is shared by claims: `book` (a later pass of this
/// task), else a new one joining the run in `--results`, else None (fixed shares, or a single
/// run).
pub(super) fn book(
    cfg: &Config,
    shard: Option<Shard>,
    input: &std::fs::File,
    book: Option<Arc<Book>>,
) -> Result<Option<Arc<Book>>, RunError> {
    if book.is_some() {
        return Ok(book);
    }
    let size = input
        .metadata()
        .ok()
        .filter(|m| m.is_file())
        .map(|m| m.len());
    let claims = match cfg.share {
        ShareSpec::Fixed => false,
        ShareSpec::Claims => true,
        // Slurm's tasks of one step, meeting in a results directory, over a file; and any
        // task on a results directory that a run shares by claims (a later srun joining it,
        // on any number of tasks).
        ShareSpec::Auto => {
            let shared_dir = cfg
                .results
                .as_ref()
                .is_some_and(|d| d.join(crate::input::shard::claims::SHARE_DIR).is_dir());
            cfg.shard == ShardSpec::Auto
                && cfg.results.is_some()
                && size.is_some()
                && (shard.is_some_and(|s| s.count > 1) || shared_dir)
        }
    };
    if !claims {
        return Ok(None);
    }
    let Some(dir) = &cfg.results else {
        return Err(RunError::config(
            "share",
            "--share claims needs --results DIR: the tasks meet there",
        ));
    };
    let Some(size) = size else {
        return Err(RunError::unusable(
            Subject::Input(None),
            "--share claims needs the input in a regular file (-a FILE, or < FILE on shared \
             storage): each task reads the chunks it claims; a stream is split in fixed chunks \
             (--share fixed, srun --input=all)",
        ));
    };
    let records = !matches!(cfg.batch, BatchSpec::Bytes(_));
    Book::join(dir, size, records, cfg.share_settings, job_end())
        .map(Some)
        .map_err(|m| RunError::unusable(Subject::Results(dir.clone()), format!("--results: {m}")))
}

/// When the Slurm job this task runs in ends: `SLURM_JOB_END_TIME` (newer Slurm), else what
/// `squeue` says of `SLURM_JOB_ID` (given 5 s). None outside a job or for a job without limit.
fn job_end() -> Option<SystemTime> {
    let secs = |s: &str| s.trim().parse::<u64>().ok().filter(|&n| n > 0);
    if let Some(n) = std::env::var("SLURM_JOB_END_TIME")
        .ok()
        .as_deref()
        .and_then(secs)
    {
        return Some(SystemTime::UNIX_EPOCH + Duration::from_secs(n));
    }
    let id = std::env::var("SLURM_JOB_ID").ok()?;
    let squeue = ["/usr/bin/squeue", "/usr/local/bin/squeue"]
        .into_iter()
        .find(|p| Path::new(p).exists())?;
    let mut child = std::process::Command::new(squeue)
        .args(["-h", "-j", id.trim(), "-o", "%e"])
        .env("SLURM_TIME_FORMAT", "%s")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .ok()?;
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    loop {
        match child.try_wait() {
            Ok(Some(_)) => break,
            Ok(None) if std::time::Instant::now() < deadline => {
                std::thread::sleep(Duration::from_millis(20));
            }
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                return None;
            }
        }
    }
    let mut out = String::new();
    std::io::Read::read_to_string(&mut child.stdout.take()?, &mut out).ok()?;
    secs(&out).map(|n| SystemTime::UNIX_EPOCH + Duration::from_secs(n))
}
