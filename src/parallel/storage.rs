//! Where `frun parallel` keeps output, as GNU Parallel's options say: `--files` (each job's
//! output in a file of its own, its name printed) in `--tmpdir DIR`, else `$TMPDIR`, else
//! /tmp; and `--compress`, which compresses what GNU Parallel buffers in temporary files:
//! frun buffers output in memory, never in files, so on standard output it changes nothing,
//! and where it would change files frun writes (`--files`, `--results`) it is refused. It only
//! turns those options into engine settings; it writes nothing itself.

use std::path::PathBuf;

use super::{Options, refuse};
use crate::invocation::Invocation;
use frun_engine::output::emit::OrderMode;

/// The directory temporary files go in: `--tmpdir`, `$TMPDIR`, /tmp.
pub(super) fn tmpdir(o: &Options) -> PathBuf {
    if let Some(d) = &o.tmpdir {
        return d.clone();
    }
    match std::env::var_os("TMPDIR").filter(|d| !d.is_empty()) {
        Some(d) => PathBuf::from(d),
        None => PathBuf::from("/tmp"),
    }
}

/// `--tmpdir DIR`: DIR must be a directory one can write in, as GNU Parallel checks.
pub(super) fn set_tmpdir(o: &mut Options, v: &str) -> Result<(), Invocation> {
    let dir = PathBuf::from(v);
    usable("--tmpdir", &dir)?;
    o.tmpdir = Some(dir);
    Ok(())
}

/// `dir` is a directory one can write in (else a refusal naming `what`).
fn usable(what: &str, dir: &std::path::Path) -> Result<(), Invocation> {
    let writable = nix::unistd::access(dir, nix::unistd::AccessFlags::W_OK).is_ok();
    if dir.as_os_str().is_empty() || !dir.is_dir() || !writable {
        return Err(refuse(format!(
            "{what} {}: not a directory frun can write in",
            dir.display()
        )));
    }
    Ok(())
}

/// Settles `--files` against the other output options. `--files` wins over
/// `--line-buffer` (a job's output is whole in its file), as in GNU Parallel.
pub(super) fn settle(o: &mut Options) -> Result<(), Invocation> {
    if o.compress && (o.files || o.cfg.job_files.is_some()) {
        return Err(refuse(
            "--compress cannot be combined with --files or --results in frun parallel (frun \
             writes those files uncompressed)",
        ));
    }
    // A dry run runs nothing, so it keeps no output: the commands are printed.
    if !o.files || o.cfg.dry_run {
        return Ok(());
    }
    if o.cfg.order == OrderMode::Unbuffered {
        return Err(refuse(
            "--files cannot be combined with --ungroup in frun parallel (the output is not kept)",
        ));
    }
    if o.cfg.job_files.is_some() {
        return Err(refuse(
            "--files cannot be combined with --results in frun parallel",
        ));
    }
    o.cfg.line_buffer = false;
    let dir = tmpdir(o);
    usable("the directory for --files", &dir)?;
    o.cfg.output_files_in = Some(dir);
    Ok(())
}
