//! `-C SO:FN` in the plan: the plugin stands where the command would (its `SO:FN` word and the
//! fixed words make the command line `--dry-run` and the joblog show), and what the workers'
//! plugin hosts are started with is resolved and checked once, before any work.
//!
//! It decides nothing about how batches run: that is the plugin runner's and the host's.

use super::config::{Config, PluginSpec};
use super::{Command, RunError, WorkExtra, tag_line};
use crate::dispatch::batch::ArgSpace;
use crate::exec::command::argv::ArgvTemplate;
use crate::exec::plugin::{PluginWork, check, host_binary};
use crate::input::scan::HARD_MAX_STDIN_BYTES;

/// The plugin's command: checked (the library loads here and has the function) and resolved.
pub(super) fn command(
    cfg: &Config,
    spec: &PluginSpec,
    header: &[Vec<u8>],
) -> Result<Command, RunError> {
    // Taken literally: a relative path is relative to the working directory now, whatever the
    // plugin's own working directory later.
    let library = std::path::absolute(&spec.library).unwrap_or_else(|_| spec.library.clone());
    // The bash builtin's worker shells call the plugin themselves: no host binary.
    let host = if cfg.shell_command {
        std::path::PathBuf::new()
    } else {
        host_binary().map_err(RunError::Command)?
    };
    let work = PluginWork {
        host: host.clone(),
        library,
        function: spec.function.clone(),
        words: cfg.command[1..].to_vec(),
        stdin_mode: cfg.stdin,
    };
    check(&work).map_err(RunError::Command)?;
    let mut template = ArgvTemplate::new(&host, &cfg.command, false, false, cfg.delimiter);
    if matches!(cfg.batch, super::BatchSpec::Bytes(_)) && !cfg.stdin {
        template = template.whole_batch();
    }
    Ok(Command {
        template,
        // No exec in between: ARG_MAX does not bound a batch, only the size stdin mode allows.
        arg_space: ArgSpace {
            per_byte: 1,
            per_record: 1,
            budget: HARD_MAX_STDIN_BYTES,
            max_record_len: u64::MAX,
        },
        literal: cfg.command.len(),
        extra: WorkExtra {
            tag: tag_line(cfg, header)?,
            retries_from: None,
            cannot_run: None,
            plugin: (!cfg.dry_run).then_some(work),
        },
    })
}
