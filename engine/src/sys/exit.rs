//! frun's exit statuses, one enum (README's "Exit status" and `--help` list the same).
//!
//! It only names statuses; deciding which one a run ends with is the engine's job.

/// How frun ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExitCode {
    /// Every record ran and every command succeeded (also: stdout's reader went away).
    Success,
    /// frun itself could not go on: an I/O error, `--halt` reached, an unwritable stdout; for
    /// `frun merge`, some records are not done.
    Error,
    /// A usage error, an input or checkpoint that cannot be used.
    Usage,
    /// Some records were given up after their retries.
    GivenUp,
    /// Some command exited non-zero (GNU Parallel and xargs say 123 too).
    CommandFailed,
    /// The command exists but cannot be executed.
    NotExecutable,
    /// The command was not found.
    NotFound,
    /// Stopped by this signal (128 + its number).
    Signal(i32),
    /// A status passed on unchanged (the worker setup code's own).
    Passed(i32),
}

impl From<ExitCode> for i32 {
    fn from(code: ExitCode) -> i32 {
        match code {
            ExitCode::Success => 0,
            ExitCode::Error => 1,
            ExitCode::Usage => 2,
            ExitCode::GivenUp => 3,
            ExitCode::CommandFailed => 123,
            ExitCode::NotExecutable => 126,
            ExitCode::NotFound => 127,
            ExitCode::Signal(n) => 128 + n,
            ExitCode::Passed(n) => n,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::ExitCode;

    #[test]
    fn statuses_are_the_documented_numbers() {
        let all = [
            (ExitCode::Success, 0),
            (ExitCode::Error, 1),
            (ExitCode::Usage, 2),
            (ExitCode::GivenUp, 3),
            (ExitCode::CommandFailed, 123),
            (ExitCode::NotExecutable, 126),
            (ExitCode::NotFound, 127),
            (ExitCode::Signal(15), 143),
            (ExitCode::Passed(7), 7),
        ];
        for (code, n) in all {
            assert_eq!(i32::from(code), n, "{code:?}");
        }
    }
}
