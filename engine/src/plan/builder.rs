//! [`ConfigBuilder`]: a [`Config`] made from typed settings and checked before it is handed
//! back, so a library front end (the Python module, a Rust program) gets a [`ConfigError`]
//! naming the setting instead of a failed run. The command-line front ends fill a `Config`
//! field by field from their flags and pass it through [`ConfigBuilder::from_config`] for the
//! same checks.
//!
//! It opens no file and resolves no command: what needs the machine (the input, the command on
//! disk, the checkpoint) is the plan's, when the run starts.

use std::ffi::OsString;
use std::path::PathBuf;

use super::config::{BatchSpec, Bound, Config, InputSpec, Range};
use super::error::ConfigError;
use crate::output::emit::OrderMode;

/// Builds a checked [`Config`].
///
/// ```
/// use frun_engine::plan::builder::ConfigBuilder;
///
/// let config = ConfigBuilder::new(["echo", "record:"])
///     .workers(2)
///     .keep_order(true)
///     .build()
///     .unwrap();
/// assert_eq!(config.command, ["echo", "record:"]);
///
/// let bad = ConfigBuilder::new(["echo"]).workers(0).build().unwrap_err();
/// assert_eq!(bad.option(), "workers");
/// ```
#[derive(Clone, Debug)]
pub struct ConfigBuilder {
    config: Config,
    /// The first setting refused, reported by `build`.
    refused: Option<ConfigError>,
}

impl ConfigBuilder {
    /// A builder for running `command` (its name, then its fixed arguments) over the records
    /// of standard input, with frun's defaults for everything else.
    pub fn new<I, S>(command: I) -> ConfigBuilder
    where
        I: IntoIterator<Item = S>,
        S: Into<OsString>,
    {
        let config = Config {
            command: command.into_iter().map(Into::into).collect(),
            ..Config::default()
        };
        ConfigBuilder {
            config,
            refused: None,
        }
    }

    /// A builder holding a `Config` a command-line front end filled in itself.
    pub fn from_config(config: Config) -> ConfigBuilder {
        ConfigBuilder {
            config,
            refused: None,
        }
    }

    fn refuse(mut self, option: &'static str, message: String) -> ConfigBuilder {
        self.refused
            .get_or_insert(ConfigError::new(option, message));
        self
    }

    /// Runs `n` workers at once, from the start (`-j N`). At least 1.
    pub fn workers(mut self, n: usize) -> ConfigBuilder {
        if n == 0 {
            return self.refuse("workers", "workers must be at least 1".into());
        }
        let n = Bound::Value(n as u64);
        self.config.workers = Range { init: n, max: n };
        self
    }

    /// Output in input order (`-k`), or whole batches as they finish (the default).
    pub fn keep_order(mut self, on: bool) -> ConfigBuilder {
        self.config.order = if on {
            OrderMode::Ordered
        } else {
            OrderMode::Buffered
        };
        self
    }

    /// Batches go to the command's stdin (`-s`) rather than its arguments.
    pub fn stdin(mut self, on: bool) -> ConfigBuilder {
        self.config.stdin = on;
        self
    }

    /// The byte that ends each record (`-d`; newline by default, 0 for NUL).
    pub fn delimiter(mut self, byte: u8) -> ConfigBuilder {
        self.config.delimiter = byte;
        self
    }

    /// Exactly `n` records a batch (`-L N`). At least 1.
    pub fn records_per_batch(mut self, n: u64) -> ConfigBuilder {
        if n == 0 {
            return self.refuse(
                "records_per_batch",
                "a batch holds at least 1 record".into(),
            );
        }
        self.config.batch = BatchSpec::Exact(n);
        self
    }

    /// Reads the records from this file (`-a FILE`) instead of standard input.
    pub fn input_file(mut self, path: impl Into<PathBuf>) -> ConfigBuilder {
        let path = path.into();
        if path.as_os_str().is_empty() {
            return self.refuse("input_file", "the input file name is empty".into());
        }
        self.config.input = InputSpec::File(path);
        self
    }

    /// Retries per failed batch (`--retries N`), instead of `FRUN_RETRY_LIMIT`'s.
    pub fn retries(mut self, n: u64) -> ConfigBuilder {
        self.config.retries = Some(n);
        self
    }

    /// Keeps a checkpoint in `path`: a new run's when it does not exist, else the one to
    /// resume (`--checkpoint FILE` / `--resume FILE`).
    pub fn checkpoint(mut self, path: impl Into<PathBuf>) -> ConfigBuilder {
        let path = path.into();
        if path.as_os_str().is_empty() {
            return self.refuse("checkpoint", "the checkpoint file name is empty".into());
        }
        if std::fs::symlink_metadata(&path).is_ok() {
            self.config.resume = Some(path);
            self.config.checkpoint_file = None;
        } else {
            self.config.checkpoint_file = Some(path);
            self.config.resume = None;
        }
        self
    }

    /// The command names a function of the caller's shell, run in its worker shells (the bash
    /// builtin, the Python module) rather than a program.
    pub fn shell_command(mut self, on: bool) -> ConfigBuilder {
        self.config.shell_command = on;
        self
    }

    /// The run belongs to a program that called the engine as a library: no checkpoint unless
    /// [`checkpoint`](Self::checkpoint) asks for one, and the output goes to that program.
    pub fn for_library(mut self) -> ConfigBuilder {
        self.config.no_default_journal = true;
        self.config.output_to_caller = true;
        self
    }

    /// The `Config`, or the first setting that cannot run.
    pub fn build(self) -> Result<Config, ConfigError> {
        if let Some(e) = self.refused {
            return Err(e);
        }
        check(&self.config)?;
        Ok(self.config)
    }
}

/// The checks every `Config` passes before a run, whoever built it: the ones that need only
/// the settings themselves (settings that cannot go together, found out before anything is
/// opened).
pub(crate) fn check(cfg: &Config) -> Result<(), ConfigError> {
    match cfg.command.first() {
        None => return Err(ConfigError::new("command", "no command to run")),
        Some(c) if c.is_empty() => {
            return Err(ConfigError::new("command", "the command name is empty"));
        }
        Some(_) => {}
    }
    let chunked = matches!(
        cfg.batch,
        BatchSpec::Bytes(_)
            | BatchSpec::Block(_)
            | BatchSpec::BlockLines { .. }
            | BatchSpec::Groups { .. }
            | BatchSpec::BlockPast(_)
            | BatchSpec::BlocksPerWorker(_)
    );
    if chunked && cfg.limit.is_some() {
        return Err(ConfigError::new(
            "limit",
            "-n counts records; it cannot be combined with -b or --block",
        ));
    }
    if cfg.line_buffer && cfg.shell_command {
        return Err(ConfigError::new(
            "line_buffer",
            "--line-buffer cannot be combined with a shell function yet",
        ));
    }
    if cfg.stdin && cfg.insert {
        return Err(ConfigError::new(
            "insert",
            "-i puts records into arguments; it cannot be combined with -s, -b or --block",
        ));
    }
    if cfg.results.is_some() {
        let clash = if cfg.order == OrderMode::Unbuffered {
            Some("-u (its output is not recorded)")
        } else if cfg.dry_run {
            Some("-N")
        } else if cfg.resume.is_some() || cfg.checkpoint_file.is_some() {
            Some("--resume or --checkpoint-file (the journals are kept in DIR)")
        } else {
            None
        };
        if let Some(c) = clash {
            return Err(ConfigError::new(
                "results",
                format!("--results cannot be combined with {c}"),
            ));
        }
    }
    if cfg.plugin.is_some() {
        let refused = [
            (cfg.insert, "-i"),
            (cfg.insert_id, "-I"),
            (cfg.unsafe_words, "-U"),
            (
                cfg.job.is_some() || cfg.argument_lists.is_some(),
                "a personality's command line",
            ),
        ];
        if let Some((_, flag)) = refused.iter().find(|(given, _)| *given) {
            return Err(ConfigError::new(
                "plugin",
                format!("-C cannot be combined with {flag}"),
            ));
        }
    }
    Ok(())
}
