//! GNU Parallel-style command lines: a line with replacement strings (`{}`, `{.}`, `{/}`,
//! `{//}`, `{/.}`, `{#}`, `{%}`, `{N}` and their column forms), filled in with a job's records.
//!
//! A line with shell syntax runs as `SHELL -c LINE`, each value shell-quoted in; a line without
//! any is split into words and exec'd directly, each value one argument (the same command,
//! without starting a shell). It only builds argument vectors: nothing here spawns, and a warm
//! [`Argv`] is refilled without allocating.

use crate::exec::command::perl::{Evaluator, Outcome, Rpl, Tags, expression_at};
use crate::exec::command::words::Argv;
use std::borrow::Cow;
use std::path::PathBuf;
use std::sync::Arc;

/// A GNU Parallel-style command: a line with replacement strings (`{}`, `{.}`, `{1}`, …), run
/// once per job (one record, or several with `-X` / `-m`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JobSpec {
    /// The command's words as given (joined with spaces into the line); none: each record is
    /// a command line itself.
    pub words: Vec<Vec<u8>>,
    /// `-q`: the words are shell-quoted (their replacement strings still work).
    pub quote: bool,
    /// The words are argument words as they are (frun's own `-i` and sweeps): never joined
    /// into a line, never run through a shell.
    pub literal: bool,
    /// The shell that runs lines with shell syntax in them (`SHELL -c LINE`).
    pub shell: PathBuf,
    /// How a record splits into the columns `{1}`, `{2}`, … name.
    pub columns: Columns,
    /// How a job line spreads a batch's records over its replacement strings.
    pub spread: Spread,
    /// The replacement strings' spellings (`-I`, `--er`, …).
    pub names: ReplacementNames,
    /// Blanks removed from each value (`--trim`).
    pub trim: Trim,
    /// Column names, for `{name}` (`--header`); filled in by the plan when it reads them.
    pub header: Vec<Vec<u8>>,
    /// `-N0`: the records only count jobs; none of them is put on the line.
    pub bare: bool,
    /// The command reads the run's input (`--pipe`, `--tee`): a line that names no value gets
    /// nothing appended, not even the space before the values.
    pub fed: bool,
    /// `-X`/`-m` over one input source: `{N}` is the job's N-th value (`{-N}` from the end),
    /// as GNU Parallel numbers them, not a column of each value.
    pub numbered: bool,
    /// User-defined replacement strings that stand for perl expressions (`--rpl`).
    pub rpl: Vec<Rpl>,
}

/// The values a word is filled with: `rs` for `{}` (one, or all with `-m`), and the job's
/// values in order for `{N}` when they are numbered ([`JobSpec::numbered`]; else empty).
#[derive(Clone, Copy)]
struct Values<'a> {
    rs: &'a [&'a [u8]],
    job: &'a [&'a [u8]],
}

/// How a record splits into columns.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Columns {
    /// The record is the one column.
    Whole,
    /// A sweep's tuple (written by the plan).
    Tuple,
    /// A sweep's tuple whose values the plan split with `--colsep REGEX` into columns.
    SplitTuple(String),
    /// `--colsep REGEX`.
    Separator(String),
}

/// How the records of one job fill the line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Spread {
    /// One record per job (or `-N`/`-n` records as `{1}`…`{N}`).
    One,
    /// `-X`: a word holding a replacement string is repeated for each record.
    Context,
    /// `-m`: a replacement string becomes all the records, separated by spaces.
    Words,
}

/// `--trim`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Trim {
    /// Drop blanks at the start of each record.
    pub left: bool,
    /// Drop blanks at the end of each record.
    pub right: bool,
}

/// The spellings of the replacement strings.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReplacementNames {
    /// The whole record (`{}`).
    pub whole: Vec<u8>,
    /// The record without its extension (`{.}`).
    pub no_ext: Vec<u8>,
    /// The record's last path component (`{/}`).
    pub basename: Vec<u8>,
    /// The record's directory (`{//}`).
    pub dirname: Vec<u8>,
    /// The last path component without its extension (`{/.}`).
    pub basename_no_ext: Vec<u8>,
    /// The job's sequence number (`{#}`).
    pub seq: Vec<u8>,
    /// The job's slot number (`{%}`).
    pub slot: Vec<u8>,
}

impl ReplacementNames {
    /// Whether `{N}` in `form` (`{N.}`, `{N/}`…) is a replacement string: only while the
    /// form's own string has its usual name, as GNU Parallel makes `{N.}` from `{.}` (so `-I ,,`
    /// leaves `{N}` text, and `--er XX` leaves `{N.}` text).
    fn positional(&self, form: Form) -> bool {
        let (name, usual): (&[u8], &[u8]) = match form {
            Form::Plain => (&self.whole, b"{}"),
            Form::NoExt => (&self.no_ext, b"{.}"),
            Form::Base => (&self.basename, b"{/}"),
            Form::Dir => (&self.dirname, b"{//}"),
            Form::BaseNoExt => (&self.basename_no_ext, b"{/.}"),
        };
        name == usual
    }
}

impl Default for ReplacementNames {
    fn default() -> ReplacementNames {
        ReplacementNames {
            whole: b"{}".to_vec(),
            no_ext: b"{.}".to_vec(),
            basename: b"{/}".to_vec(),
            dirname: b"{//}".to_vec(),
            basename_no_ext: b"{/.}".to_vec(),
            seq: b"{#}".to_vec(),
            slot: b"{%}".to_vec(),
        }
    }
}

/// Which column a replacement string names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Column {
    /// `{}`: the record, or all its columns separated by spaces.
    All,
    /// `{N}` (1-based) or `{-N}` (from the end).
    Index(i64),
}

/// What a replacement string does to its value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Form {
    Plain,
    /// `{.}`: without its extension.
    NoExt,
    /// `{/}`: without its directories.
    Base,
    /// `{//}`: its directory.
    Dir,
    /// `{/.}`: without directories or extension.
    BaseNoExt,
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Part {
    Lit(Vec<u8>),
    Value(Column, Form),
    /// `{#}`: the job's number, from 1.
    Seq,
    /// `{%}`: the job slot, from 1.
    Slot,
    /// `{=EXPR=}` (its id in the line's expressions) over the values `Column` names.
    Perl(Column, usize),
}

/// A template word: parts with no blank between them.
type Word = Vec<Part>;

/// `-N0`: a job has no values, so every replacement string of a value is empty; a word that
/// was nothing but such strings stays, empty, with the blanks around it (GNU Parallel's `-N0
/// echo a {} b` shows `echo a  b` and runs `echo a b`).
/// What a tag adds to the length of a line filled with records ([`JobLine::tag_cost`]).
#[derive(Clone, Debug)]
pub struct TagCost {
    /// `x` and then the tag's replacement strings that count, with `-m`'s spread: its shell
    /// line is `x ` and their values, quoted and joined by spaces.
    line: JobLine,
    /// The spaces between values count too (`-m`; not `-X`).
    spaced: bool,
}

impl TagCost {
    /// The bytes the tag adds to the line of `batch`'s records (scratch space as
    /// [`JobLine::shell_line_len`] takes it).
    pub fn len(
        &self,
        batch: &[u8],
        delimiter: u8,
        records: &mut Vec<(usize, usize)>,
        out: &mut Vec<u8>,
    ) -> u64 {
        // `x ` first.
        let len = self.line.shell_line_len(batch, delimiter, records, out);
        let spaces = match self.spaced {
            true => 0,
            false => records.len().saturating_sub(1) as u64,
        };
        len.saturating_sub(2 + spaces)
    }
}

/// A replacement string as `names` writes it (the inverse of [`replacement_at`]).
fn part_name(p: &Part, names: &ReplacementNames) -> Vec<u8> {
    let suffix: &[u8] = match p {
        Part::Value(_, Form::Plain) => b"",
        Part::Value(_, Form::NoExt) => b".",
        Part::Value(_, Form::Base) => b"/",
        Part::Value(_, Form::Dir) => b"//",
        Part::Value(_, Form::BaseNoExt) => b"/.",
        _ => b"",
    };
    match p {
        Part::Value(Column::All, form) => match form {
            Form::Plain => names.whole.clone(),
            Form::NoExt => names.no_ext.clone(),
            Form::Base => names.basename.clone(),
            Form::Dir => names.dirname.clone(),
            Form::BaseNoExt => names.basename_no_ext.clone(),
        },
        Part::Value(Column::Index(n), _) => [b"{", n.to_string().as_bytes(), suffix, b"}"].concat(),
        Part::Seq => names.seq.clone(),
        Part::Slot => names.slot.clone(),
        Part::Lit(l) => l.clone(),
        Part::Perl(..) => Vec::new(),
    }
}

/// How a record is the command line when no command was given.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Verbatim {
    /// Its values are the line's words, as they are.
    Words,
    /// `-q`: each value is one word of the line, quoted.
    Quoted,
    /// `-N0`: its values are dropped, leaving only the spaces between them (GNU Parallel runs
    /// an empty line); never the values as commands.
    Dropped,
}

fn drop_values(words: &mut [Word]) {
    for w in words {
        w.retain(|p| !matches!(p, Part::Value(..)));
    }
}

/// A compiled line.
#[derive(Clone, Debug)]
pub struct JobLine {
    words: Vec<Word>,
    /// The blanks before each word, as written (a shell line keeps them: they may be quoted).
    seps: Vec<Vec<u8>>,
    /// The line starts with a replacement string: its value is a command, put in unquoted.
    raw_first: bool,
    /// `--dry-run`: the job prints its line instead of running it.
    print: bool,
    /// `--shellquote`: the printed line is shell-quoted this many times.
    print_quotes: u32,
    /// [`JobLine::showing`].
    show: bool,
    /// A NUL byte in a record is put in the line as the two characters `\0`.
    escape_nul: bool,
    /// `SHELL -c LINE` (`Some(SHELL)`), or the words exec'd as they are.
    shell: Option<Vec<u8>>,
    /// `eval LINE` instead of `SHELL -c LINE`.
    eval: bool,
    /// Shell code run first, in the same shell (`Config::shell_prologue`).
    prologue: Option<Vec<u8>>,
    /// The record is the command line itself (no command was given), and how.
    verbatim: Option<Verbatim>,
    columns: ColumnSplit,
    spread: Spread,
    /// [`JobSpec::numbered`] (only with `-X`/`-m`).
    numbered: bool,
    /// `-q`: a positional value the job lacks is an empty word (`''`), as GNU Parallel's
    /// quoting of the whole word makes it; without, it is nothing.
    quoted: bool,
    trim: Trim,
    /// The perl process computing the line's perl replacement strings (none: the line has
    /// none, and no perl runs).
    perl: Option<Arc<Evaluator>>,
}

#[derive(Clone, Debug)]
enum ColumnSplit {
    Whole,
    Tuple,
    Regex(regex::bytes::Regex),
}

/// Bytes that need no quoting for a POSIX shell.
fn plain(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"-_.+/".contains(&b)
}

/// Appends `v` quoted for a POSIX shell, spelled as GNU Parallel spells it (so `--dry-run`
/// shows the same text): as is when every byte is plain, else in single quotes, a single quote
/// itself as `'"'"'`, without an empty `''` at either end.
pub fn quote(v: &[u8], out: &mut Vec<u8>) {
    if v.is_empty() {
        out.extend_from_slice(b"''");
        return;
    }
    if v.iter().all(|&b| plain(b)) {
        out.extend_from_slice(v);
        return;
    }
    let starts_quote = v[0] == b'\'';
    if !starts_quote {
        out.push(b'\'');
    }
    for (i, &b) in v.iter().enumerate() {
        if b != b'\'' {
            out.push(b);
            continue;
        }
        // Close the quotes (unless none are open), a quoted quote, reopen (unless at the end).
        if i > 0 {
            out.push(b'\'');
        }
        out.extend_from_slice(b"\"'\"");
        if i + 1 < v.len() {
            out.push(b'\'');
        }
    }
    if v[v.len() - 1] != b'\'' {
        out.push(b'\'');
    }
}

/// Bytes that keep a line free of shell syntax (besides letters and digits).
const NO_SHELL: &[u8] = b" -_./=:,+@%^";

/// Words a shell treats as syntax even when nothing else in the line is.
const KEYWORDS: &[&[u8]] = &[
    b"if",
    b"then",
    b"else",
    b"elif",
    b"fi",
    b"case",
    b"esac",
    b"for",
    b"select",
    b"while",
    b"until",
    b"do",
    b"done",
    b"function",
    b"time",
    b"in",
    b"!",
    b"[[",
    b"]]",
    b"coproc",
];

/// Commands only a shell has (or whose own versions behave differently from the shell's).
const BUILTINS: &[&[u8]] = &[
    b"cd",
    b"exit",
    b"export",
    b"read",
    b"set",
    b"source",
    b".",
    b"eval",
    b"exec",
    b"ulimit",
    b"umask",
    b"wait",
    b"alias",
    b"type",
    b"command",
    b"hash",
    b"shift",
    b"trap",
    b"unset",
    b"local",
    b"return",
    b"break",
    b"continue",
    b"times",
    b"readonly",
    b"getopts",
    b"jobs",
    b"fg",
    b"bg",
    b"declare",
    b"typeset",
    b"let",
    b"shopt",
    b"builtin",
    b"enable",
    b"mapfile",
    b"readarray",
    b"disown",
    b"suspend",
    b"logout",
    b"history",
    b"fc",
    b"pushd",
    b"popd",
    b"dirs",
    b"caller",
    b"compgen",
    b"complete",
    b":",
];

/// `text` split into columns at `--colsep`'s matches as Perl's `split /RE/, TEXT, -1` (GNU
/// Parallel's) splits it: a match of no width at the very start makes no empty first column
/// (so an empty separator splits between characters: `ab` is `a`, `b` and an empty last
/// column), and empty columns at the end are kept.
pub fn split_columns<'r, 't>(
    re: &'r regex::bytes::Regex,
    text: &'t [u8],
) -> impl Iterator<Item = &'t [u8]> + use<'r, 't> {
    let mut last = 0;
    let mut matches = re
        .find_iter(text)
        .filter(|m| !(m.start() == 0 && m.end() == 0));
    let mut done = false;
    std::iter::from_fn(move || {
        if done {
            return None;
        }
        match matches.next() {
            Some(m) => {
                let field = &text[last..m.start()];
                last = m.end();
                Some(field)
            }
            None => {
                done = true;
                Some(&text[last..])
            }
        }
    })
}

/// `--colsep`'s regular expression. It matches bytes, as GNU Parallel's Perl does on input it
/// has not decoded: `.` is one byte, `\w` and `(?i)` are ASCII only, `\xC3` is that byte and a
/// literal `é` its two UTF-8 bytes. (Unicode classes would also cost every run's start-up: their
/// tables are about 180 KiB of pointers the loader relocates.)
pub fn column_separator(re: &str) -> Result<regex::bytes::Regex, String> {
    regex::bytes::RegexBuilder::new(re)
        .unicode(false)
        .build()
        .map_err(|e| format!("--colsep '{re}' is not a regular expression: {e}"))
}

/// The first GNU Parallel perl expression (`{=` … `=}`, `{=N` … `=}` included) in `line`,
/// found as GNU Parallel finds it in its command words joined by spaces: a `{=`, then text
/// in which neither `{=` nor `=}` starts, then `=}` — in one word, glued to other text, or
/// across words (`{=}` and a `{=` with no `=}` after it are text). frun evaluates no perl,
/// so a line holding one is refused, never run with the expression as text.
pub fn perl_expression(line: &[u8]) -> Option<&[u8]> {
    let mut from = 0;
    while let Some(at) = memchr::memmem::find(&line[from..], b"{=") {
        let open = from + at;
        let inner = &line[open + 2..];
        let close = memchr::memmem::find(inner, b"=}");
        let reopen = memchr::memmem::find(inner, b"{=");
        if let Some(c) = close.filter(|&c| reopen.is_none_or(|o| o > c)) {
            return Some(&line[open..open + 2 + c + 2]);
        }
        from = open + 1;
    }
    None
}

/// What a line with a perl expression is refused with.
pub fn perl_refusal(expression: &[u8]) -> String {
    format!(
        "{}: perl expressions ({{= … =}}) are not supported here (only in a job line or a tag \
         that frun fills in), and frun never runs a line it did not understand; use the shell \
         in the command ($(…)) or the other replacement strings",
        String::from_utf8_lossy(expression)
    )
}

impl JobSpec {
    /// Whether the line as written holds a replacement string (`{}`, `{1}`, `{#}`, `{%}`…;
    /// perl ones are not looked for): a line without one gets the values appended.
    pub fn names_replacement(&self) -> bool {
        let line = self.words.join(&b' ');
        let (words, _, _) = parse_line(&line, &self.names, &self.header, true, None);
        words.iter().flatten().any(|p| !matches!(p, Part::Lit(_)))
    }
}

impl JobLine {
    /// Compiles `spec`'s line for records ending in `delimiter`. `direct`: whether the
    /// command named by the first word can be exec'd (found on PATH); without it, or with
    /// shell syntax in the line, the line runs through the shell.
    pub fn new(spec: &JobSpec, direct: impl Fn(&[u8]) -> bool) -> Result<JobLine, String> {
        let columns = match &spec.columns {
            Columns::Whole => ColumnSplit::Whole,
            Columns::Tuple | Columns::SplitTuple(_) => ColumnSplit::Tuple,
            Columns::Separator(re) => ColumnSplit::Regex(column_separator(re)?),
        };
        if spec.literal {
            if let Some(e) = perl_expression(&spec.words.join(&b' ')) {
                return Err(perl_refusal(e));
            }
            return Ok(JobLine::literal(spec, columns));
        }
        let mut perl = PerlParts {
            tags: Tags::new(&spec.rpl)?,
            exprs: Vec::new(),
        };
        let mut line = Vec::new();
        for (i, w) in spec.words.iter().enumerate() {
            if i > 0 {
                line.push(b' ');
            }
            if spec.quote {
                quote_around_replacements(w, &spec.names, &spec.header, &perl, &mut line);
            } else {
                line.extend_from_slice(w);
            }
        }
        let (mut words, mut seps, seps_plain) =
            parse_line(&line, &spec.names, &spec.header, true, Some(&mut perl));
        // Any replacement string ({#} too) means the values go only where it says; else they
        // are appended after a space (and the line's own trailing blanks), as GNU Parallel
        // appends them: `-N0` appends none, but the space all the same.
        let has_value = words.iter().flatten().any(|p| !matches!(p, Part::Lit(_)));
        let verbatim = spec
            .words
            .is_empty()
            .then_some(match (spec.bare, spec.quote) {
                (true, _) => Verbatim::Dropped,
                (false, true) => Verbatim::Quoted,
                (false, false) => Verbatim::Words,
            });
        let trailing = trailing_blanks(&line).to_vec();
        if !has_value && verbatim.is_none() && !spec.fed {
            let mut sep = trailing;
            sep.push(b' ');
            words.push(vec![Part::Value(Column::All, Form::Plain)]);
            seps.push(sep);
        } else if !trailing.is_empty() {
            words.push(Vec::new());
            seps.push(trailing);
        }
        if spec.bare {
            drop_values(&mut words);
        }
        // Values in the first word are part of the command's name: put in as they are (GNU
        // Parallel's `l{}` with `s /bin/ls` runs `ls /bin/ls`), unless the word is a variable
        // assignment (`x={}`), whose value GNU Parallel quotes.
        let raw_first = words.first().is_some_and(|w| {
            let first = w
                .iter()
                .position(|p| matches!(p, Part::Value(..) | Part::Perl(..)));
            first.is_some_and(|k| {
                !w[..k]
                    .iter()
                    .any(|p| matches!(p, Part::Lit(l) if l.contains(&b'=')))
            })
        });
        // Perl's values (`uq()` ones too) go into a shell line, as GNU Parallel puts them.
        let evaluator = match perl.exprs.is_empty() {
            true => None,
            false => Some(Arc::new(Evaluator::start(perl.exprs)?)),
        };
        let shell_free = seps_plain
            && words.iter().all(|w| {
                w.iter().all(|p| match p {
                    Part::Lit(l) => l
                        .iter()
                        .all(|&b| b.is_ascii_alphanumeric() || NO_SHELL.contains(&b)),
                    _ => true,
                })
            })
            && !words.iter().any(
                |w| matches!(w.as_slice(), [Part::Lit(l)] if KEYWORDS.contains(&l.as_slice())),
            );
        let first_plain = match words.first().map(Vec::as_slice) {
            Some([Part::Lit(l)]) => {
                !l.contains(&b'=') && !BUILTINS.contains(&l.as_slice()) && direct(l)
            }
            _ => false,
        };
        // -m with two values in one word needs the shell's word splitting.
        let splits_cleanly = spec.spread != Spread::Words
            || words
                .iter()
                .all(|w| w.iter().filter(|p| matches!(p, Part::Value(..))).count() <= 1);
        let shell = (verbatim.is_some()
            || evaluator.is_some()
            || !(shell_free && first_plain && splits_cleanly))
            .then(|| spec.shell.as_os_str().as_encoded_bytes().to_vec());
        Ok(JobLine {
            words,
            seps,
            raw_first,
            print: false,
            print_quotes: 0,
            show: false,
            escape_nul: false,
            shell,
            eval: false,
            verbatim,
            columns,
            spread: spec.spread,
            numbered: spec.numbered && spec.spread != Spread::One,
            quoted: spec.quote,
            trim: spec.trim,
            perl: evaluator,
            prologue: None,
        })
    }

    /// frun's own words: each one argument, placeholders replaced; the records are appended
    /// when no word holds one.
    fn literal(spec: &JobSpec, columns: ColumnSplit) -> JobLine {
        let mut words: Vec<Word> = spec
            .words
            .iter()
            .map(|w| {
                let (mut parsed, _, _) = parse_line(w, &spec.names, &spec.header, false, None);
                parsed.pop().unwrap_or_else(|| vec![Part::Lit(Vec::new())])
            })
            .collect();
        if !words[1..]
            .iter()
            .flatten()
            .any(|p| !matches!(p, Part::Lit(_)))
        {
            words.push(vec![Part::Value(Column::All, Form::Plain)]);
        }
        let mut seps = vec![b" ".to_vec(); words.len()];
        seps[0].clear();
        JobLine {
            words,
            seps,
            raw_first: false,
            print: false,
            print_quotes: 0,
            show: false,
            escape_nul: false,
            shell: None,
            eval: false,
            verbatim: None,
            columns,
            spread: spec.spread,
            numbered: spec.numbered && spec.spread != Spread::One,
            quoted: spec.quote,
            trim: spec.trim,
            perl: None,
            prologue: None,
        }
    }

    /// Runs lines with shell syntax as `eval LINE` (a bash worker shell's builtin, so its
    /// functions are there) instead of `SHELL -c LINE`.
    pub fn eval_in_worker(mut self) -> JobLine {
        if self.shell.is_some() {
            self.eval = true;
        }
        self
    }

    /// Runs `code` before the line in the same shell: `SHELL -c 'CODE<newline>eval "shift; $1"'
    /// SHELL LINE`, so the line sees the code's variables and functions, `$0` is the shell and
    /// no positional parameter is set (as with `SHELL -c LINE`), and the line stays a word of
    /// its own for the trace and the joblog. A line without shell syntax runs through the shell
    /// too. (A bash worker shell's `eval LINE` runs without it.)
    #[must_use]
    pub fn with_prologue(mut self, code: &[u8], shell: &[u8]) -> JobLine {
        if self.shell.is_none() {
            self.shell = Some(shell.to_vec());
        }
        let mut wrap = code.to_vec();
        wrap.extend_from_slice(b"\neval \"shift; $1\"");
        self.prologue = Some(wrap);
        self
    }

    /// Words before the line itself: `SHELL -c` (2), `eval` (1), none without a shell.
    pub fn shell_words(&self) -> usize {
        match (&self.shell, self.eval) {
            (None, _) => 0,
            (Some(_), true) => 1,
            (Some(_), false) if self.prologue.is_some() => 4,
            (Some(_), false) => 2,
        }
    }

    /// `--dry-run`: each job prints its line (as the shell would get it) instead of running it,
    /// shell-quoted `quotes` times (`--shellquote`).
    #[must_use]
    pub fn printing(mut self, quotes: u32) -> JobLine {
        self.print = true;
        self.print_quotes = quotes;
        self
    }

    /// `-v`, `-t`, the joblog: a job run without a shell keeps its line's text as a shell
    /// would have got it ([`Argv::shown`]), so that it shows as written, blanks and all.
    #[must_use]
    pub fn showing(mut self) -> JobLine {
        self.show = true;
        self
    }

    /// A NUL byte in a record (which no argument can hold) becomes the two characters `\0`
    /// in the line, as GNU Parallel puts it.
    #[must_use]
    pub fn escaping_nul(mut self) -> JobLine {
        self.escape_nul = true;
        self
    }

    /// `batch`, or with [`JobLine::escaping_nul`] a copy whose NUL bytes are `\0` (only a
    /// batch that holds one is copied; with NUL as the delimiter no record holds one).
    fn nul_escaped<'b>(&self, batch: &'b [u8], delimiter: u8) -> Cow<'b, [u8]> {
        if !self.escape_nul || delimiter == 0 || memchr::memchr(0, batch).is_none() {
            return Cow::Borrowed(batch);
        }
        Cow::Owned(nul_escaped(batch))
    }

    /// The program exec'd: the shell, or None for the line's first word.
    pub fn shell(&self) -> Option<&[u8]> {
        if self.print {
            return Some(b"/bin/sh");
        }
        self.shell.as_deref()
    }

    /// The first word of a line that runs without a shell.
    pub fn program(&self) -> Option<&[u8]> {
        match self.words.first().map(Vec::as_slice) {
            Some([Part::Lit(l)]) if self.shell.is_none() => Some(l),
            _ => None,
        }
    }

    /// How many values one record puts on the line (for argument-space accounting), the bytes
    /// of the line without them, and the bytes that come again with each record besides its
    /// values: the other parts of the words that hold a value (`-X` repeats such a word per
    /// value; `{#}` and `{%}` count as 20 digits).
    pub fn cost(&self) -> (u64, u64, u64) {
        let values = self
            .words
            .iter()
            .flatten()
            .filter(|p| matches!(p, Part::Value(..) | Part::Perl(..)))
            .count() as u64;
        let part_len = |p: &Part| match p {
            Part::Lit(l) => l.len() as u64 + 1,
            _ => 21,
        };
        let lits: u64 = self.words.iter().flatten().map(part_len).sum();
        let repeated: u64 = self
            .words
            .iter()
            .filter(|w| {
                w.iter()
                    .any(|p| matches!(p, Part::Value(..) | Part::Perl(..)))
            })
            .flatten()
            .filter(|p| !matches!(p, Part::Value(..) | Part::Perl(..)))
            .map(part_len)
            .sum();
        (
            values.max(u64::from(self.verbatim.is_some())),
            lits,
            repeated,
        )
    }

    /// Fills `argv` with the job of the records in `batch` (each ending in `delimiter`, the
    /// last maybe not): job number `seq` (from 1), run in slot `slot` (from 1).
    pub fn build(&self, batch: &[u8], delimiter: u8, seq: u64, slot: u64, argv: &mut Argv) {
        // Perl's values are computed job after job, in the jobs' order, as GNU Parallel's are.
        let _turn = self.perl.as_ref().map(|p| p.turn(seq));
        let batch = &*self.nul_escaped(batch, delimiter);
        argv.clear();
        record_spans(batch, delimiter, &mut argv.records);
        let mut line = std::mem::take(&mut argv.scratch);
        line.clear();
        if self.print {
            argv.push_word(b"/bin/sh");
            argv.push_word(b"-c");
            argv.push_word(b"printf '%s\\n' \"$1\"");
            argv.push_word(b"sh");
            {
                let mut sink = ShellSink { out: &mut line };
                self.fill(batch, seq, slot, &argv.records, &mut sink);
            }
            for _ in 0..self.print_quotes {
                let mut quoted = Vec::with_capacity(line.len() + 2);
                quote(&line, &mut quoted);
                line = quoted;
            }
            argv.push_word(&line);
            argv.scratch = line;
            argv.finish();
            return;
        }
        match &self.shell {
            Some(sh) => {
                if self.eval {
                    argv.push_word(b"eval");
                } else if let Some(wrap) = &self.prologue {
                    argv.push_word(sh);
                    argv.push_word(b"-c");
                    argv.push_word(wrap);
                    argv.push_word(sh);
                } else {
                    argv.push_word(sh);
                    argv.push_word(b"-c");
                }
                {
                    let mut sink = ShellSink { out: &mut line };
                    self.fill(batch, seq, slot, &argv.records, &mut sink);
                }
                argv.push_word(&line);
            }
            None => {
                let mut sink = WordSink {
                    argv,
                    content: false,
                };
                let records = std::mem::take(&mut sink.argv.records);
                self.fill(batch, seq, slot, &records, &mut sink);
                sink.end_word();
                if self.show {
                    let mut shown = std::mem::take(&mut argv.shown);
                    shown.clear();
                    self.fill(
                        batch,
                        seq,
                        slot,
                        &records,
                        &mut ShellSink { out: &mut shown },
                    );
                    argv.shown = shown;
                    argv.showing = true;
                }
                argv.records = records;
            }
        }
        argv.scratch = line;
        argv.finish();
    }

    /// How many times its length a line counts against the limit: 3 with `-q`, as GNU Parallel
    /// counts a quoted line (its worst case: every byte quoted), else 1.
    pub fn length_factor(&self) -> u64 {
        if self.quoted { 3 } else { 1 }
    }

    /// The length of the shell line of the job of `batch`'s records (each ending in
    /// `delimiter`), as GNU Parallel measures a line it fills (`-X`, `-m`): the line the shell
    /// gets, values quoted, job number and slot 1, times [`JobLine::length_factor`]. `records`
    /// and `out` are scratch space.
    pub fn shell_line_len(
        &self,
        batch: &[u8],
        delimiter: u8,
        records: &mut Vec<(usize, usize)>,
        out: &mut Vec<u8>,
    ) -> u64 {
        out.clear();
        let batch = &*self.nul_escaped(batch, delimiter);
        record_spans(batch, delimiter, records);
        let mut sink = ShellSink { out };
        self.fill(batch, 1, 1, records, &mut sink);
        out.len() as u64 * self.length_factor()
    }

    /// What a tag adds to a filled line's length (`-X`, `-m`), as GNU Parallel counts it: each
    /// replacement string of `tag` that `command` does not hold itself counts once more, its
    /// values quoted (so `--tag` over a command with no `{}` counts the values twice), joined
    /// by spaces with `-m` and counted without them with `-X`. None: the tag adds nothing.
    pub fn tag_cost(command: &JobSpec, tag: &JobSpec) -> Result<Option<TagCost>, String> {
        let parts = |spec: &JobSpec| -> Vec<Part> {
            let line = spec.words.join(&b' ');
            let (words, _, _) = parse_line(&line, &spec.names, &spec.header, true, None);
            let mut parts: Vec<Part> = Vec::new();
            for p in words.into_iter().flatten() {
                if !matches!(p, Part::Lit(_)) && !parts.contains(&p) {
                    parts.push(p);
                }
            }
            parts
        };
        let held = parts(command);
        let mut text = b"x".to_vec();
        for p in parts(tag).iter().filter(|p| !held.contains(p)) {
            text.push(b' ');
            text.extend_from_slice(&part_name(p, &tag.names));
        }
        if text.len() == 1 {
            return Ok(None);
        }
        let spec = JobSpec {
            words: vec![text],
            quote: false,
            spread: Spread::Words,
            bare: false,
            fed: false,
            numbered: false,
            rpl: Vec::new(),
            ..command.clone()
        };
        let line = JobLine::new(&spec, |_| false)?;
        Ok(Some(TagCost {
            line,
            spaced: command.spread != Spread::Context,
        }))
    }

    /// A text filled in with a job's values as they are, perl expressions too, nothing
    /// appended and nothing quoted ([`JobLine::render`]): `--tmpl`'s files and their names.
    /// `spec`'s words are the text, joined by spaces.
    pub fn text(spec: &JobSpec) -> Result<JobLine, String> {
        let columns = match &spec.columns {
            Columns::Whole => ColumnSplit::Whole,
            Columns::Tuple | Columns::SplitTuple(_) => ColumnSplit::Tuple,
            Columns::Separator(re) => ColumnSplit::Regex(column_separator(re)?),
        };
        let mut perl = PerlParts {
            tags: Tags::new(&spec.rpl)?,
            exprs: Vec::new(),
        };
        let text = spec.words.join(&b' ');
        let (words, seps, _) = parse_line(&text, &spec.names, &spec.header, false, Some(&mut perl));
        let evaluator = match perl.exprs.is_empty() {
            true => None,
            false => Some(Arc::new(Evaluator::start(perl.exprs)?)),
        };
        Ok(JobLine {
            words,
            seps,
            raw_first: false,
            print: false,
            print_quotes: 0,
            show: false,
            escape_nul: false,
            shell: None,
            eval: false,
            verbatim: None,
            columns,
            spread: Spread::One,
            numbered: false,
            quoted: false,
            trim: spec.trim,
            perl: evaluator,
            prologue: None,
        })
    }

    /// A tag (`--tagstring STR`, `--tag` is `{}`) or a text like it (`--retries STR`), as GNU
    /// Parallel fills it: `spec`'s words as one text, its replacement strings (perl ones and
    /// `--plus`'s too) filled in with the values as they are, over a job's values as the line
    /// spreads them (`-X` and `-N` repeat `<{}>` for each value).
    pub fn tag_text(spec: &JobSpec) -> Result<JobLine, String> {
        let mut line = JobLine::text(spec)?;
        line.spread = spec.spread;
        line.numbered = spec.numbered && spec.spread != Spread::One;
        Ok(line)
    }

    /// The values of a job as `--results` names its directories: `spec`'s words, one word,
    /// its replacement strings filled in with the values as they are.
    pub fn tag(spec: &JobSpec) -> Result<JobLine, String> {
        let mut line = JobLine::new(
            &JobSpec {
                literal: true,
                ..spec.clone()
            },
            |_| true,
        )?;
        // Nothing is appended to a tag (frun's own words would get the records appended).
        line.words.truncate(spec.words.len());
        line.spread = Spread::One;
        line.numbered = false;
        Ok(line)
    }

    /// Writes the tag of the job of `batch`'s records into `out` (cleared first).
    pub fn render(&self, batch: &[u8], delimiter: u8, seq: u64, slot: u64, out: &mut Vec<u8>) {
        self.render_plain(batch, delimiter, (seq, slot), out, false);
    }

    /// As [`JobLine::render`], a job's several values put one right after the other (GNU
    /// Parallel's `--tmpl` files).
    pub fn render_joined(
        &self,
        batch: &[u8],
        delimiter: u8,
        seq: u64,
        slot: u64,
        out: &mut Vec<u8>,
    ) {
        self.render_plain(batch, delimiter, (seq, slot), out, true);
    }

    fn render_plain(
        &self,
        batch: &[u8],
        delimiter: u8,
        (seq, slot): (u64, u64),
        out: &mut Vec<u8>,
        joined: bool,
    ) {
        out.clear();
        let batch = &*self.nul_escaped(batch, delimiter);
        let mut records = Vec::new();
        record_spans(batch, delimiter, &mut records);
        let mut sink = PlainSink { out, joined };
        self.fill(batch, seq, slot, &records, &mut sink);
    }

    /// Whether the line holds a replacement string (a name for `--results` that holds one is
    /// a template, else a directory).
    pub fn has_replacement(&self) -> bool {
        self.words
            .iter()
            .flatten()
            .any(|p| !matches!(p, Part::Lit(_)))
    }

    /// Calls `each` with every value of the job of `batch`'s records (each ending in
    /// `delimiter`), record by record and column by column, numbered from 0 within its record,
    /// trimmed as the line trims them (`--results` names its directories after them).
    pub fn each_value(&self, batch: &[u8], delimiter: u8, mut each: impl FnMut(usize, &[u8])) {
        let batch = &*self.nul_escaped(batch, delimiter);
        let mut records = batch.split(|&b| b == delimiter).peekable();
        while let Some(r) = records.next() {
            // The last record's delimiter ends it: no empty record after it.
            if r.is_empty() && records.peek().is_none() && !batch.is_empty() {
                break;
            }
            self.each_column(r, Column::All, |k, v| each(k, trim(v, self.trim)));
        }
    }

    fn fill(
        &self,
        batch: &[u8],
        seq: u64,
        slot: u64,
        records: &[(usize, usize)],
        sink: &mut dyn Sink,
    ) {
        if let Some(how) = self.verbatim {
            // A job of several records is one command line, its records joined by spaces
            // (GNU Parallel's `-N2`/`-m` without a command).
            for (i, &(s, e)) in records.iter().enumerate() {
                if i > 0 {
                    sink.lit(b" ");
                }
                // A tuple's values are the line's words, separated by spaces; with -q each is
                // one word, quoted (GNU Parallel's `-q ::: 'a>b'` runs the command `a>b`).
                self.each_column(&batch[s..e], Column::All, |k, v| {
                    if k > 0 {
                        sink.lit(b" ");
                    }
                    match how {
                        Verbatim::Words => sink.lit(trim(v, self.trim)),
                        Verbatim::Quoted => sink.value(trim(v, self.trim)),
                        Verbatim::Dropped => {}
                    }
                });
            }
            return;
        }
        if self.flat_job(records.len()) {
            self.fill_flat(batch, records, seq, slot, sink);
            return;
        }
        let record = |r: usize| -> &[u8] { records.get(r).map_or(&[][..], |&(s, e)| &batch[s..e]) };
        for (wi, w) in self.words.iter().enumerate() {
            // The first word's are the blanks the line starts with (none in frun's own words).
            sink.sep(&self.seps[wi]);
            let raw = wi == 0 && self.raw_first;
            // A numbered `{N}` is one value of the job, not repeated.
            let repeated = |p: &Part| match p {
                Part::Value(Column::Index(_), _) | Part::Perl(Column::Index(_), _) => {
                    !self.numbered
                }
                Part::Value(..) | Part::Perl(..) => true,
                _ => false,
            };
            // (Tuples and columns under -X/-N fill from the flat list, above.)
            let repeats = self.spread == Spread::Context && w.iter().any(repeated);
            if repeats {
                let job: Vec<&[u8]> = if self.numbered {
                    (0..records.len()).map(record).collect()
                } else {
                    Vec::new()
                };
                for r in 0..records.len() {
                    if r > 0 {
                        sink.brk();
                    }
                    let rs = [record(r)];
                    let values = Values { rs: &rs, job: &job };
                    self.fill_word(w, values, seq, slot, raw, sink);
                }
            } else {
                let rs: Vec<&[u8]> = (0..records.len()).map(record).collect();
                let job = if self.numbered { &rs[..] } else { &[][..] };
                self.fill_word(w, Values { rs: &rs, job }, seq, slot, raw, sink);
            }
        }
    }

    /// Whether a job is filled from its flat list of values ([`JobLine::fill_flat`]): one of
    /// several records (`-n`), or of records of several columns each (input sources,
    /// `--colsep`) with `-N`/`-X`. One record without them fills as its columns.
    fn flat_job(&self, records: usize) -> bool {
        match self.spread {
            Spread::Words => false,
            Spread::One => records > 1,
            Spread::Context => !matches!(self.columns, ColumnSplit::Whole),
        }
    }

    /// Fills the line as GNU Parallel fills it from the job's values in one flat list, every
    /// column of every record in order: `{N}` is the list's N-th value; a word holding `{}`
    /// (or `{=…=}`) comes once for each value with `-N`/`-X`, else `{}` is all of them.
    fn fill_flat(
        &self,
        batch: &[u8],
        records: &[(usize, usize)],
        seq: u64,
        slot: u64,
        sink: &mut dyn Sink,
    ) {
        let mut flat: Vec<&[u8]> = Vec::new();
        for &(s, e) in records {
            self.each_column(&batch[s..e], Column::All, |_, v| {
                flat.push(trim(v, self.trim));
            });
        }
        let each_value = |w: &Word| {
            self.spread == Spread::Context
                && w.iter()
                    .any(|p| matches!(p, Part::Value(Column::All, _) | Part::Perl(Column::All, _)))
        };
        for (wi, w) in self.words.iter().enumerate() {
            sink.sep(&self.seps[wi]);
            let raw = wi == 0 && self.raw_first;
            if each_value(w) {
                for (i, v) in flat.iter().enumerate() {
                    if i > 0 {
                        sink.brk();
                    }
                    self.fill_flat_word(w, (Some(v), &flat), (seq, slot), raw, sink);
                }
            } else {
                self.fill_flat_word(w, (None, &flat), (seq, slot), raw, sink);
            }
        }
    }

    /// A positional value the job lacks (`{3}` of two): `''` with `-q`, else nothing.
    fn lacking(&self, raw: bool, sink: &mut dyn Sink) {
        if self.quoted && !raw {
            sink.value(b"");
        }
    }

    /// One word of [`JobLine::fill_flat`]: `{}` is `current`, or with none every value.
    fn fill_flat_word(
        &self,
        w: &Word,
        (current, flat): (Option<&[u8]>, &[&[u8]]),
        (seq, slot): (u64, u64),
        raw: bool,
        sink: &mut dyn Sink,
    ) {
        let put = |sink: &mut dyn Sink, v: &[u8], form: Form| {
            let v = transform(v, form);
            if raw { sink.lit(&v) } else { sink.value(&v) }
        };
        for p in w {
            match p {
                Part::Lit(l) => sink.lit(l),
                Part::Seq => sink.lit(itoa(seq).as_bytes()),
                Part::Slot => sink.lit(itoa(slot).as_bytes()),
                Part::Value(Column::All, form) => match current {
                    Some(v) => put(sink, v, *form),
                    None => {
                        for (i, v) in flat.iter().enumerate() {
                            if i > 0 {
                                sink.brk();
                            }
                            put(sink, v, *form);
                        }
                    }
                },
                Part::Value(Column::Index(n), form) => match pick(flat.len(), *n) {
                    Some(i) => put(sink, flat[i], *form),
                    None => self.lacking(raw, sink),
                },
                Part::Perl(col, id) => {
                    let targets: Vec<&[u8]> = match (col, current) {
                        (Column::All, Some(v)) => vec![v],
                        (Column::All, None) => flat.to_vec(),
                        (Column::Index(n), _) => {
                            pick(flat.len(), *n).map(|i| flat[i]).into_iter().collect()
                        }
                    };
                    self.eval_perl(*id, (&targets, flat), seq, slot, raw, sink);
                }
            }
        }
    }

    /// One word for the records `values.rs` (one, or all of them with `-m`).
    fn fill_word(
        &self,
        w: &Word,
        values: Values<'_>,
        seq: u64,
        slot: u64,
        raw: bool,
        sink: &mut dyn Sink,
    ) {
        for p in w {
            match p {
                Part::Lit(l) => sink.lit(l),
                Part::Seq => sink.lit(itoa(seq).as_bytes()),
                Part::Slot => sink.lit(itoa(slot).as_bytes()),
                Part::Perl(col, id) => {
                    let by_record = self.numbered && matches!(col, Column::Index(_));
                    let rs = if by_record { values.job } else { values.rs };
                    self.fill_perl(*col, *id, rs, by_record, seq, slot, raw, sink);
                }
                Part::Value(Column::Index(n), form) if self.numbered => {
                    match pick(values.job.len(), *n).map(|i| &values.job[i]) {
                        Some(&v) => self.each_column(v, Column::All, |k, v| {
                            if k > 0 {
                                sink.brk();
                            }
                            let v = transform(trim(v, self.trim), *form);
                            if raw { sink.lit(&v) } else { sink.value(&v) }
                        }),
                        None => self.lacking(raw, sink),
                    }
                }
                Part::Value(col, form) => {
                    for (i, r) in values.rs.iter().enumerate() {
                        if i > 0 {
                            sink.brk();
                        }
                        let mut found = false;
                        self.each_column(r, *col, |k, v| {
                            if k > 0 {
                                sink.brk();
                            }
                            found = true;
                            let v = transform(trim(v, self.trim), *form);
                            if raw { sink.lit(&v) } else { sink.value(&v) }
                        });
                        if !found {
                            self.lacking(raw, sink);
                        }
                    }
                }
            }
        }
    }

    /// A perl replacement string over the records `rs`: `{=…=}` is evaluated for each of
    /// their values, `{=N …=}` for the N-th (the N-th record when `by_record`, else the N-th
    /// column of the record), with `@arg` all of them. An expression that dies ends the run
    /// as GNU Parallel's does.
    #[allow(clippy::too_many_arguments)]
    fn fill_perl(
        &self,
        col: Column,
        id: usize,
        rs: &[&[u8]],
        by_record: bool,
        seq: u64,
        slot: u64,
        raw: bool,
        sink: &mut dyn Sink,
    ) {
        if self.perl.is_none() {
            return;
        }
        let mut arg_refs: Vec<&[u8]> = Vec::new();
        for r in rs {
            self.each_column(r, Column::All, |_, v| arg_refs.push(trim(v, self.trim)));
        }
        let targets: Vec<&[u8]> = match col {
            Column::All => arg_refs.clone(),
            Column::Index(n) if by_record && rs.len() > 1 => pick(rs.len(), n)
                .map(|i| trim(rs[i], self.trim))
                .into_iter()
                .collect(),
            Column::Index(n) => pick(arg_refs.len(), n)
                .map(|i| arg_refs[i])
                .into_iter()
                .collect(),
        };
        self.eval_perl(id, (&targets, &arg_refs), seq, slot, raw, sink);
    }

    /// Puts expression `id`'s value for each of `targets` (with `@arg` being `args`) on the line.
    fn eval_perl(
        &self,
        id: usize,
        (targets, args): (&[&[u8]], &[&[u8]]),
        seq: u64,
        slot: u64,
        raw: bool,
        sink: &mut dyn Sink,
    ) {
        let Some(perl) = &self.perl else { return };
        let mut out = Vec::new();
        for (k, v) in targets.iter().enumerate() {
            if k > 0 {
                sink.brk();
            }
            match perl.eval(id, v, args, seq, slot, &mut out) {
                // GNU Parallel's own process runs the expressions: their `exit` ends the run.
                Ok(Outcome::Exit(code)) => crate::sys::exit_now(code),
                Ok(Outcome::Skip) => sink.lit(&out),
                Ok(Outcome::Quoted) if !raw => sink.value(&out),
                Ok(_) => sink.lit(&out),
                Err(e) => {
                    // GNU Parallel stops at an expression that dies, before its job runs.
                    crate::sys::notice::say(
                        crate::sys::notice::NoticeKind::Problem,
                        format_args!("{e}"),
                    );
                    crate::sys::exit_now(255);
                }
            }
        }
    }

    /// Calls `each` with the columns of `record` that `col` names (numbered from 0).
    fn each_column<'r>(
        &self,
        record: &'r [u8],
        col: Column,
        mut each: impl FnMut(usize, &'r [u8]),
    ) {
        match (&self.columns, col) {
            (ColumnSplit::Whole, Column::All) => each(0, record),
            (ColumnSplit::Whole, Column::Index(n)) => {
                if pick(1, n).is_some() {
                    each(0, record);
                }
            }
            (ColumnSplit::Tuple, Column::All) => {
                for (k, c) in tuple_columns(record).enumerate() {
                    each(k, c);
                }
            }
            (ColumnSplit::Tuple, Column::Index(n)) => {
                if let Some(i) = pick(tuple_columns(record).count(), n) {
                    each(0, tuple_columns(record).nth(i).unwrap_or_default());
                }
            }
            (ColumnSplit::Regex(re), _) => {
                let cols: Vec<&[u8]> = split_columns(re, record).collect();
                select(&cols, col, each);
            }
        }
    }
}

fn select<'r>(cols: &[&'r [u8]], col: Column, mut each: impl FnMut(usize, &'r [u8])) {
    match col {
        Column::All => {
            for (k, c) in cols.iter().enumerate() {
                each(k, c);
            }
        }
        Column::Index(n) => {
            if let Some(i) = pick(cols.len(), n) {
                each(0, cols[i]);
            }
        }
    }
}

/// The 0-based index of column `n` (1-based, or negative from the end) of `len`. As in GNU
/// Parallel, which looks `{-N}` up in a perl array at `len - N`, an index that is still
/// negative counts from the end once more (`{-3}` of two values is the second).
fn pick(len: usize, n: i64) -> Option<usize> {
    let len = len as i64;
    let mut i = if n > 0 { n - 1 } else { len + n };
    if i < 0 {
        i += len;
    }
    (0..len).contains(&i).then_some(i as usize)
}

/// The values of a sweep's tuple (`LEN:BYTES` each).
fn tuple_columns(r: &[u8]) -> TupleColumns<'_> {
    TupleColumns(r)
}

/// The values of a tuple record, in order, read as they are needed (no list is built).
struct TupleColumns<'a>(&'a [u8]);

impl<'a> Iterator for TupleColumns<'a> {
    type Item = &'a [u8];

    fn next(&mut self) -> Option<&'a [u8]> {
        let r = self.0;
        let colon = memchr::memchr(b':', r)?;
        let len = std::str::from_utf8(&r[..colon])
            .ok()
            .and_then(|s| s.parse::<usize>().ok())?;
        let end = (colon + 1 + len).min(r.len());
        self.0 = &r[end..];
        Some(&r[colon + 1..end])
    }
}

/// `--trim` (and `--colsep`'s default): Perl's `\s` bytes go, as GNU Parallel's `s/^\s+//`
/// removes them: a value of a CRLF line loses its CR.
fn trim(v: &[u8], t: Trim) -> &[u8] {
    let mut v = v;
    if t.left {
        while let [b' ' | b'\t' | b'\r' | b'\n' | b'\x0b' | b'\x0c', rest @ ..] = v {
            v = rest;
        }
    }
    if t.right {
        while let [rest @ .., b' ' | b'\t' | b'\r' | b'\n' | b'\x0b' | b'\x0c'] = v {
            v = rest;
        }
    }
    v
}

fn itoa(n: u64) -> String {
    n.to_string()
}

/// `{.}`, `{/}`, `{//}`, `{/.}` of `v`.
fn transform(v: &[u8], form: Form) -> std::borrow::Cow<'_, [u8]> {
    use std::borrow::Cow;
    let no_ext = |v: &[u8]| -> usize {
        // The last `.` after the last `/` ends the name, unless another `.` follows it.
        let tail = v.iter().rposition(|&b| b == b'/').map_or(0, |i| i + 1);
        match v[tail..].iter().rposition(|&b| b == b'.') {
            Some(d) => tail + d,
            None => v.len(),
        }
    };
    let base = |v: &[u8]| -> usize { v.iter().rposition(|&b| b == b'/').map_or(0, |i| i + 1) };
    match form {
        Form::Plain => Cow::Borrowed(v),
        Form::NoExt => Cow::Borrowed(&v[..no_ext(v)]),
        Form::Base => Cow::Borrowed(&v[base(v)..]),
        Form::BaseNoExt => {
            let b = &v[base(v)..];
            Cow::Borrowed(&b[..no_ext(b)])
        }
        Form::Dir => Cow::Owned(dirname(v)),
    }
}

/// POSIX `dirname`.
fn dirname(v: &[u8]) -> Vec<u8> {
    let mut end = v.len();
    while end > 1 && v[end - 1] == b'/' {
        end -= 1;
    }
    let v = &v[..end];
    match v.iter().rposition(|&b| b == b'/') {
        None => b".".to_vec(),
        Some(i) => {
            let mut e = i;
            while e > 0 && v[e - 1] == b'/' {
                e -= 1;
            }
            if e == 0 {
                b"/".to_vec()
            } else {
                v[..e].to_vec()
            }
        }
    }
}

/// `bytes` with each NUL byte as the two characters `\0` (GNU Parallel's spelling of a NUL no
/// argument can hold).
pub fn nul_escaped(bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(bytes.len() + 16);
    for &b in bytes {
        if b == 0 {
            out.extend_from_slice(b"\\0");
        } else {
            out.push(b);
        }
    }
    out
}

/// Where a line's pieces go: into one shell line, or into separate words.
trait Sink {
    fn lit(&mut self, b: &[u8]);
    fn value(&mut self, v: &[u8]);
    /// Between words.
    fn brk(&mut self);
    /// Between the line's own words: the blanks written there.
    fn sep(&mut self, blanks: &[u8]);
}

struct ShellSink<'a> {
    out: &'a mut Vec<u8>,
}

impl Sink for ShellSink<'_> {
    fn lit(&mut self, b: &[u8]) {
        self.out.extend_from_slice(b);
    }
    fn value(&mut self, v: &[u8]) {
        quote(v, self.out);
    }
    fn brk(&mut self) {
        self.out.push(b' ');
    }
    fn sep(&mut self, blanks: &[u8]) {
        self.out.extend_from_slice(blanks);
    }
}

/// Values as they are (a tag: `--tag`, `--tagstring`; `--tmpl`'s text): several of them with
/// a space between, or with nothing between (`joined`, `--tmpl`).
struct PlainSink<'a> {
    out: &'a mut Vec<u8>,
    joined: bool,
}

impl Sink for PlainSink<'_> {
    fn lit(&mut self, b: &[u8]) {
        self.out.extend_from_slice(b);
    }
    fn value(&mut self, v: &[u8]) {
        self.out.extend_from_slice(v);
    }
    fn brk(&mut self) {
        if !self.joined {
            self.out.push(b' ');
        }
    }
    fn sep(&mut self, blanks: &[u8]) {
        self.out.extend_from_slice(blanks);
    }
}

struct WordSink<'a> {
    argv: &'a mut Argv,
    /// The word being built holds something (an empty value counts: it is an argument).
    content: bool,
}

impl WordSink<'_> {
    fn end_word(&mut self) {
        if self.content {
            self.argv.end_word();
        }
        self.content = false;
    }
}

impl Sink for WordSink<'_> {
    fn lit(&mut self, b: &[u8]) {
        // An empty literal is an empty argument word (frun's own words may be empty).
        self.argv.push_bytes(b);
        self.content = true;
    }
    fn value(&mut self, v: &[u8]) {
        self.argv.push_bytes(v);
        self.content = true;
    }
    fn brk(&mut self) {
        self.end_word();
    }
    fn sep(&mut self, _: &[u8]) {
        self.end_word();
    }
}

/// The replacement string at the start of `s`, and its length.
fn replacement_at(s: &[u8], names: &ReplacementNames, header: &[Vec<u8>]) -> Option<(Part, usize)> {
    let fixed = [
        (&names.whole, Part::Value(Column::All, Form::Plain)),
        (&names.no_ext, Part::Value(Column::All, Form::NoExt)),
        (&names.basename, Part::Value(Column::All, Form::Base)),
        (&names.dirname, Part::Value(Column::All, Form::Dir)),
        (
            &names.basename_no_ext,
            Part::Value(Column::All, Form::BaseNoExt),
        ),
        (&names.seq, Part::Seq),
        (&names.slot, Part::Slot),
    ];
    let mut best: Option<(Part, usize)> = None;
    for (name, part) in fixed {
        if !name.is_empty() && s.starts_with(name) && best.as_ref().is_none_or(|b| name.len() > b.1)
        {
            best = Some((part, name.len()));
        }
    }
    if best.is_some() {
        return best;
    }
    // {N}, {-N}, {N.}, {N/}, {N//}, {N/.}, and {name…} for a header's column names.
    let rest = s.strip_prefix(b"{")?;
    let close = memchr::memchr(b'}', rest)?;
    // `{N` and blanks before the `}` (a command written over several lines) is `{N}`.
    let inner = match rest[..close].trim_ascii_end() {
        i if i.len() < close && i.iter().all(u8::is_ascii_digit) && !i.is_empty() => i,
        _ => &rest[..close],
    };
    let forms: [(&[u8], Form); 5] = [
        (b"/.", Form::BaseNoExt),
        (b"//", Form::Dir),
        (b"/", Form::Base),
        (b".", Form::NoExt),
        (b"", Form::Plain),
    ];
    for (suffix, form) in forms {
        let Some(key) = inner.strip_suffix(suffix) else {
            continue;
        };
        if !names.positional(form) {
            return None;
        }
        // A column's name comes before a number (`--header 0` names a column by its file).
        if let Some(i) = header.iter().position(|h| h.as_slice() == key) {
            return Some((Part::Value(Column::Index(i as i64 + 1), form), close + 2));
        }
        let numeric = key.strip_prefix(b"-").unwrap_or(key);
        if !numeric.is_empty() && numeric.iter().all(u8::is_ascii_digit) {
            let n: i64 = std::str::from_utf8(key).ok()?.parse().ok()?;
            if n == 0 {
                return None;
            }
            return Some((Part::Value(Column::Index(n), form), close + 2));
        }
        if let Some(i) = header.iter().position(|h| h.as_slice() == key) {
            return Some((Part::Value(Column::Index(i as i64 + 1), form), close + 2));
        }
    }
    None
}

/// The perl replacement strings of a line being parsed: the user-defined ones, and the
/// expressions found so far (each once: its id is its index).
struct PerlParts {
    tags: Tags,
    exprs: Vec<Vec<u8>>,
}

impl PerlParts {
    /// The perl replacement string at the start of `s` (`{=…=}` or a user-defined one longer
    /// than any other replacement string there), and its length.
    fn at(
        &mut self,
        s: &[u8],
        names: &ReplacementNames,
        header: &[Vec<u8>],
    ) -> Option<(Part, usize)> {
        let found = self.found(s, names, header)?;
        let id = match self.exprs.iter().position(|e| *e == found.expr) {
            Some(id) => id,
            None => {
                self.exprs.push(found.expr);
                self.exprs.len() - 1
            }
        };
        let col = found.position.map_or(Column::All, Column::Index);
        Some((Part::Perl(col, id), found.len))
    }

    /// The perl replacement string at the start of `s`, as [`PerlParts::at`] finds it, not
    /// yet one of the line's expressions.
    fn found(
        &self,
        s: &[u8],
        names: &ReplacementNames,
        header: &[Vec<u8>],
    ) -> Option<crate::exec::command::perl::Found> {
        if s.first() != Some(&b'{') && self.tags.is_empty() {
            return None;
        }
        Some(match expression_at(s) {
            // `{=NAME …=}`: the column a header names.
            Some(mut f) if f.position.is_none() => {
                let named = header.iter().position(|h| {
                    f.expr.starts_with(h) && f.expr.get(h.len()).is_none_or(u8::is_ascii_whitespace)
                });
                if let Some(i) = named {
                    f.expr.drain(..header[i].len());
                    f.position = Some(i as i64 + 1);
                }
                f
            }
            Some(f) => f,
            None => {
                let f = self.tags.at(s)?;
                let other = replacement_at(s, names, header).map_or(0, |(_, l)| l);
                // A column's name wins over a user string of the same length.
                let unnamed = replacement_at(s, names, &[]).map_or(0, |(_, l)| l);
                if f.len < other || (f.len == other && unnamed < other) {
                    return None;
                }
                f
            }
        })
    }
}

/// Splits a line into words at blanks (with `split`; else it is one word), each word into its
/// parts, and keeps the blanks before each word. Also says whether every blank run is plain
/// spaces (tabs and newlines are shell syntax).
fn parse_line(
    line: &[u8],
    names: &ReplacementNames,
    header: &[Vec<u8>],
    split: bool,
    mut perl: Option<&mut PerlParts>,
) -> (Vec<Word>, Vec<Vec<u8>>, bool) {
    let mut words = Vec::new();
    let mut seps = Vec::new();
    let mut sep = Vec::new();
    let mut word: Word = Vec::new();
    let mut lit = Vec::new();
    let mut plain_seps = true;
    let mut i = 0;
    while i < line.len() {
        let b = line[i];
        if let Some((part, len)) = perl
            .as_deref_mut()
            .and_then(|p| p.at(&line[i..], names, header))
        {
            if !lit.is_empty() {
                word.push(Part::Lit(std::mem::take(&mut lit)));
            }
            word.push(part);
            i += len;
            continue;
        }
        if split && (b == b' ' || b == b'\t' || b == b'\n') {
            plain_seps &= b == b' ';
            if !lit.is_empty() {
                word.push(Part::Lit(std::mem::take(&mut lit)));
            }
            if !word.is_empty() {
                words.push(std::mem::take(&mut word));
                seps.push(std::mem::take(&mut sep));
            }
            sep.push(b);
            i += 1;
            continue;
        }
        if let Some((part, len)) = replacement_at(&line[i..], names, header) {
            if !lit.is_empty() {
                word.push(Part::Lit(std::mem::take(&mut lit)));
            }
            word.push(part);
            i += len;
            continue;
        }
        lit.push(b);
        i += 1;
    }
    if !lit.is_empty() {
        word.push(Part::Lit(lit));
    }
    if !word.is_empty() {
        words.push(word);
        seps.push(sep);
    }
    (words, seps, plain_seps)
}

/// The blanks `parse_line` puts between words that end `line` (after its last word).
fn trailing_blanks(line: &[u8]) -> &[u8] {
    let keep = line
        .iter()
        .rposition(|&b| !matches!(b, b' ' | b'\t' | b'\n'))
        .map_or(0, |k| k + 1);
    &line[keep..]
}

/// `-q`: quotes a word's text between its replacement strings.
fn quote_around_replacements(
    w: &[u8],
    names: &ReplacementNames,
    header: &[Vec<u8>],
    perl: &PerlParts,
    out: &mut Vec<u8>,
) {
    let mut lit = Vec::new();
    let mut i = 0;
    let mut any = false;
    while i < w.len() {
        // A perl replacement string (`{= =}`, `--rpl`'s and `--plus`'s) as much as the others:
        // its value is quoted as a whole word where it goes, never inside the line's quotes.
        let len = perl
            .found(&w[i..], names, header)
            .map(|f| f.len)
            .or_else(|| replacement_at(&w[i..], names, header).map(|(_, len)| len));
        if let Some(len) = len {
            if !lit.is_empty() {
                quote(&lit, out);
                lit.clear();
            }
            out.extend_from_slice(&w[i..i + len]);
            i += len;
            any = true;
            continue;
        }
        lit.push(w[i]);
        i += 1;
    }
    if !lit.is_empty() || !any {
        quote(&lit, out);
    }
}

/// The byte ranges of `batch`'s records, each ending in `delimiter` (the last maybe not), into
/// `spans` (cleared first; its memory is reused).
fn record_spans(batch: &[u8], delimiter: u8, spans: &mut Vec<(usize, usize)>) {
    spans.clear();
    let mut start = 0;
    for i in memchr::memchr_iter(delimiter, batch) {
        spans.push((start, i));
        start = i + 1;
    }
    if start < batch.len() {
        spans.push((start, batch.len()));
    }
}
#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn perl_expressions_are_found_as_gnu_parallel_finds_them() {
        let found = |l: &str| {
            perl_expression(l.as_bytes()).map(|e| String::from_utf8_lossy(e).into_owned())
        };
        assert_eq!(found("echo {= s/a/b/ =}"), Some("{= s/a/b/ =}".into()));
        assert_eq!(found("l{=s/a/b/=}x"), Some("{=s/a/b/=}".into()));
        assert_eq!(found("{=1 $_ =} {}"), Some("{=1 $_ =}".into()));
        assert_eq!(found("{==}"), Some("{==}".into()));
        // The innermost pair: {={==} holds the expression {==}.
        assert_eq!(found("{={==}"), Some("{==}".into()));
        for text in ["{=}", "echo {= a", "=} {=", "{= {=}", "{ = =}"] {
            assert_eq!(found(text), None, "{text}");
        }
    }

    fn q(v: &str) -> String {
        let mut o = Vec::new();
        quote(v.as_bytes(), &mut o);
        String::from_utf8(o).unwrap()
    }

    #[test]
    fn quoting_matches_a_posix_shell_reading_it_back() {
        assert_eq!(q("a.tar.gz"), "a.tar.gz");
        assert_eq!(q(""), "''");
        assert_eq!(q("a b"), "'a b'");
        assert_eq!(q("a'b"), "'a'\"'\"'b'");
        assert_eq!(q("'x"), "\"'\"'x'");
        assert_eq!(q("x'"), "'x'\"'\"");
        for v in ["a b", "a'b", "'", "''", "$x `y` \\z", "é\n\t", "*?[a]"] {
            let out = std::process::Command::new("sh")
                .arg("-c")
                .arg(format!("printf %s {}", q(v)))
                .output()
                .unwrap();
            assert_eq!(out.stdout, v.as_bytes(), "{v}");
        }
    }

    #[test]
    fn transforms_follow_the_path_rules() {
        let t = |v: &str, f| String::from_utf8(transform(v.as_bytes(), f).into_owned()).unwrap();
        assert_eq!(t("a.tar.gz", Form::NoExt), "a.tar");
        assert_eq!(t("dir.x/file", Form::NoExt), "dir.x/file");
        assert_eq!(t(".bashrc", Form::NoExt), "");
        assert_eq!(t("x.", Form::NoExt), "x");
        assert_eq!(t("a/b/", Form::Base), "");
        assert_eq!(t("/a/b.c", Form::BaseNoExt), "b");
        for (v, d) in [
            ("a/b/", "a"),
            ("a", "."),
            ("/", "/"),
            ("//", "/"),
            ("a//b", "a"),
            ("", "."),
            ("/a/b.c", "/a"),
        ] {
            assert_eq!(t(v, Form::Dir), d, "{v}");
        }
    }
}
