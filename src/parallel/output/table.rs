//! `--results NAME.json`, `NAME.csv`, `NAME.tsv` (`-.json` …: stdout): GNU Parallel's table
//! of every job (its record holds the job's output) instead of the job's output. It only turns
//! the option into the engine's setting and refuses what does not go with it; the engine
//! formats and writes the records.

use crate::invocation::Invocation;
use crate::parallel::{Options, refuse};
use frun_engine::output::emit::OrderMode;
use frun_engine::output::results::table::TableSpec;

/// `--results NAME`: a table when NAME ends in `.json`, `.csv` or `.tsv`; else GNU Parallel's
/// directory tree (or the files a template names).
pub(in crate::parallel) fn set_results(o: &mut Options, v: &str) -> Result<(), Invocation> {
    match TableSpec::of_name(v.as_bytes()) {
        Some(spec) => {
            o.cfg.results_table = Some(spec);
            o.cfg.job_files = None;
        }
        None => {
            o.cfg.job_files = Some(crate::parallel::results_name(v)?);
            o.cfg.results_table = None;
        }
    }
    Ok(())
}

/// A table needs each job's whole output: it is kept (not passed on as it comes), and
/// `--pipe` jobs (whose values are a block), a dry run and `--line-buffer` are refused.
pub(in crate::parallel) fn settle(o: &mut Options) -> Result<(), Invocation> {
    if o.cfg.results_table.is_none() {
        return Ok(());
    }
    let refused = if o.pipe {
        Some("--pipe")
    } else if o.cfg.dry_run {
        Some("--dry-run")
    } else if o.cfg.line_buffer {
        Some("--line-buffer")
    } else {
        None
    };
    if let Some(flag) = refused {
        return Err(refuse(format!(
            "--results with a .json, .csv or .tsv name cannot be combined with {flag} in frun \
             parallel"
        )));
    }
    if o.cfg.order == OrderMode::Unbuffered {
        o.cfg.order = OrderMode::Buffered;
    }
    Ok(())
}
