//! Where `frun parallel` keeps output, as GNU Parallel's options say: `--files` (each job's
//! output in a file of its own, its name printed) in `--tmpdir DIR`, else `$TMPDIR`, else
//! /tmp; and `--compress`, which compresses what GNU Parallel buffers in temporary files:
//! frun buffers output in memory, never in files, so on standard output it changes nothing,
//! `--results DIR` files and `--files` files go through the compression program
//! (`--compress-program`, else the first of pzstd, zstd, lz4, pigz, gzip found). It only turns
//! those options into engine settings; it writes nothing itself.

use std::path::PathBuf;

use crate::invocation::Invocation;
use crate::parallel::{Options, refuse};
use frun_engine::output::emit::OrderMode;

/// The directory temporary files go in: `--tmpdir`, `$TMPDIR`, /tmp.
pub(in crate::parallel) fn tmpdir(o: &Options) -> PathBuf {
    if let Some(d) = &o.tmpdir {
        return d.clone();
    }
    match std::env::var_os("TMPDIR").filter(|d| !d.is_empty()) {
        Some(d) => PathBuf::from(d),
        None => PathBuf::from("/tmp"),
    }
}

/// `--tmpdir DIR`: DIR must be a directory one can write in, as GNU Parallel checks.
pub(in crate::parallel) fn set_tmpdir(o: &mut Options, v: &str) -> Result<(), Invocation> {
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
pub(in crate::parallel) fn settle(o: &mut Options) -> Result<(), Invocation> {
    let compress = o.compress || o.compress_program.is_some();
    if compress && (o.cfg.job_files.is_some() || (o.files && !o.cfg.dry_run)) {
        o.cfg.results_compress = Some(compress_program(o)?.into_bytes());
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

/// `--compress-program PROG`, else the first compression program found on PATH, as a shell
/// command line that reads stdin and writes stdout.
fn compress_program(o: &Options) -> Result<String, Invocation> {
    if let Some(p) = &o.compress_program {
        return Ok(p.clone());
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    let found = |name: &str| {
        std::env::split_paths(&path).any(|d| {
            let f = d.join(name);
            nix::unistd::access(&f, nix::unistd::AccessFlags::X_OK).is_ok() && f.is_file()
        })
    };
    [
        ("pzstd", "pzstd -q"),
        ("zstd", "zstd -q"),
        ("lz4", "lz4 -q"),
        ("pigz", "pigz"),
        ("gzip", "gzip"),
    ]
    .iter()
    .find(|(name, _)| found(name))
    .map(|(_, line)| (*line).to_string())
    .ok_or_else(|| {
        refuse("--compress: no compression program found (pzstd, zstd, lz4, pigz, gzip); give one with --compress-program")
    })
}
