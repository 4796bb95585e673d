//! The dry runner (`-N`): each attempt prints its command line, shell-quoted, instead of running
//! it. It starts nothing.

use std::io;
use std::sync::Arc;

use super::{Attempt, Ending, Runner};
use crate::dispatch::ledger::Outcome;
use crate::exec::command::argv::{shell_quote, split_and_glob};
use crate::output::emit::{Capture, write_all};
use crate::run::stop::StopReason;

/// Prints each attempt's command line to the capture (or stdout with `-u`).
pub(crate) struct DryRunner {
    /// With `-U`: the words from this one on are shown word-split and glob-expanded, as they
    /// would run.
    split_from: Option<usize>,
    /// `--shellquote`: the line is shell-quoted this many times.
    quote: u32,
    capture: Option<Arc<Capture>>,
    /// The line being printed (reused).
    text: Vec<u8>,
    /// The line quoted once more (reused).
    quoted: Vec<u8>,
}

impl DryRunner {
    pub(super) fn new(
        split_from: Option<usize>,
        quote: u32,
        capture: Option<&Arc<Capture>>,
    ) -> DryRunner {
        DryRunner {
            split_from,
            quote,
            capture: capture.cloned(),
            text: Vec::new(),
            quoted: Vec::new(),
        }
    }
}

impl Runner for DryRunner {
    fn run(&mut self, attempt: &Attempt<'_>) -> io::Result<Ending> {
        let text = &mut self.text;
        text.clear();
        for (i, w) in attempt.argv.words().enumerate() {
            match self.split_from {
                Some(n) if i >= n => split_and_glob(w, |w| {
                    text.push(b' ');
                    shell_quote(w, text);
                }),
                _ => {
                    if i > 0 {
                        text.push(b' ');
                    }
                    shell_quote(w, text);
                }
            }
        }
        for _ in 0..self.quote {
            self.quoted.clear();
            crate::exec::command::job::quote(text, &mut self.quoted);
            std::mem::swap(text, &mut self.quoted);
        }
        text.push(b'\n');
        let r = match &self.capture {
            Some(c) => c.append(text),
            None => write_all(std::os::fd::AsFd::as_fd(&std::io::stdout()), text),
        };
        match r {
            Ok(()) => Ok(Ending::Ran(Outcome::Ok)),
            Err(e) if e.raw_os_error() == Some(libc::EPIPE) => {
                Ok(Ending::Stop(StopReason::ReaderGone))
            }
            Err(e) => Err(e),
        }
    }
}
